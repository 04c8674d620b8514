//! `NOT_IMPLEMENTED` vtables: every stub answers as the ABI conventions say, and an implementation
//! overrides single methods with struct update syntax.

use core::ptr::null_mut;

use dxcl_abi::*;

extern "system" fn create_buffer(
    _this: *mut ID3D11Device,
    _desc: *const D3D11_BUFFER_DESC,
    _init: *const D3D11_SUBRESOURCE_DATA,
    pp: *mut *mut ID3D11Buffer,
) -> HRESULT {
    // The test passes a null out pointer: validation only, as Direct3D answers S_FALSE.
    if pp.is_null() {
        S_FALSE
    } else {
        E_INVALIDARG
    }
}

static DEVICE_VTBL: ID3D11DeviceVtbl = ID3D11DeviceVtbl {
    CreateBuffer: create_buffer,
    ..ID3D11DeviceVtbl::NOT_IMPLEMENTED
};

#[test]
fn stubs_answer_e_notimpl_zero_or_nothing() {
    let mut dev = ID3D11Device {
        lpVtbl: &DEVICE_VTBL,
    };
    let this: *mut ID3D11Device = &mut dev;
    let v = &DEVICE_VTBL;
    let desc = D3D11_BUFFER_DESC {
        ByteWidth: 16,
        ..Default::default()
    };
    // SAFETY: `this` points at a live ID3D11Device whose vtable is DEVICE_VTBL; the stubs and
    // create_buffer read none of their pointer arguments beyond a null test.
    unsafe {
        assert_eq!(
            (v.CreateBuffer)(this, &desc, core::ptr::null(), null_mut()),
            S_FALSE
        );
        assert_eq!(
            (v.CreateTexture2D)(this, core::ptr::null(), core::ptr::null(), null_mut()),
            E_NOTIMPL
        );
        assert_eq!((v.GetCreationFlags)(this), 0);
        assert_eq!((v.GetFeatureLevel)(this), 0);
        (v.GetImmediateContext)(this, null_mut());
        let unknown = this.cast::<IUnknown>();
        assert_eq!(
            (v.base.QueryInterface)(unknown, &IID_ID3D11Device, null_mut()),
            E_NOTIMPL
        );
        assert_eq!((v.base.AddRef)(unknown), 0);
    }
}

#[test]
fn inherited_stubs_sit_in_the_nested_base() {
    let v = ID3D11Texture2DVtbl::NOT_IMPLEMENTED;
    let mut tex = ID3D11Texture2D { lpVtbl: &v };
    let mut priority = 0;
    // SAFETY: the stubs ignore their arguments; `tex` outlives the calls.
    unsafe {
        priority += (v.base.GetEvictionPriority)((&mut tex as *mut ID3D11Texture2D).cast());
        assert_eq!(
            (v.base.base.GetPrivateData)(
                (&mut tex as *mut ID3D11Texture2D).cast(),
                &IID_IUnknown,
                null_mut(),
                null_mut()
            ),
            E_NOTIMPL
        );
    }
    assert_eq!(priority, 0);
    assert_eq!(<ID3D11Texture2D as Interface>::IID, IID_ID3D11Texture2D);
}

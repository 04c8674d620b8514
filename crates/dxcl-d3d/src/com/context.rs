//! The immediate context: the resource operations of `ID3D11DeviceContext` (Map/Unmap,
//! UpdateSubresource, CopyResource, CopySubresourceRegion, Flush, queries). Drawing, views and
//! state methods stay `NOT_IMPLEMENTED` (void methods do nothing).
//!
//! The context is its own COM object, owned by its device (one private reference); while the
//! application holds it, it holds a public reference on the device.

use std::mem::offset_of;
use std::ptr;

use super::abi::*;
use super::device::{child_get_device, Device, DeviceChild};
use super::guard::guard;
use super::iid_in;
use super::object::*;
use super::private_data::*;
use super::query::Query;
use super::resource::{copy_resource, copy_subresource_region, Resource};
use crate::core::TexelBox;

/// The immediate context of a device.
#[repr(C)]
pub struct Context {
    d3d11: *const ID3D11DeviceContextVtbl,
    refs: RefCounts,
    private: PrivateData,
    device: *const Device,
}

// SAFETY: the vtable pointer refers to an immutable static; `device` outlives the context (the
// device destroys it) and is Send + Sync.
unsafe impl Send for Context {}
// SAFETY: as above.
unsafe impl Sync for Context {}

pub const CONTEXT_FACE: usize = offset_of!(Context, d3d11);

// SAFETY: `d3d11` is the only face; `face_for` returns its offset only.
unsafe impl ComObject for Context {
    const KIND: ObjectKind = ObjectKind::Context;
    fn refs(&self) -> &RefCounts {
        &self.refs
    }
    fn private_data(&self) -> &PrivateData {
        &self.private
    }
    fn faces() -> &'static [usize] {
        &[CONTEXT_FACE]
    }
    fn face_for(&self, riid: &GUID) -> Option<usize> {
        iid_in(
            riid,
            &[IID_IUnknown, IID_ID3D11DeviceChild, IID_ID3D11DeviceContext],
        )
        .then_some(CONTEXT_FACE)
    }
    fn on_public_acquire(&self) {
        self.device().validation.child(true);
        add_ref(self.device());
    }
    fn on_public_release(&self) {
        self.device().validation.child(false);
        // SAFETY: the reference taken in `on_public_acquire`.
        unsafe { release(self.device) };
    }
}

impl DeviceChild for Context {
    fn device(&self) -> &Device {
        // SAFETY: the device owns the context and outlives it.
        unsafe { &*self.device }
    }
}

impl Context {
    /// The context of a device under construction (no public reference; the device holds the
    /// one private reference).
    pub fn create(device: *const Device) -> *mut Context {
        into_raw(Context {
            d3d11: &CONTEXT_VTBL,
            refs: RefCounts::new_private(),
            private: PrivateData::default(),
            device,
        })
    }

    /// One of this device's resources behind an application pointer.
    fn resource<I>(&self, p: *const I) -> Option<PrivateRef<Resource>> {
        Resource::from_any_face(p).filter(|r| ptr::eq(r.device(), self.device()))
    }

    /// One of this device's queries behind an application pointer.
    fn query<I>(&self, p: *const I) -> Option<PrivateRef<Query>> {
        lookup::<Query, I>(p).filter(|q| ptr::eq(q.device(), self.device()))
    }
}

type C = Context;
const CO: usize = CONTEXT_FACE;

static CONTEXT_VTBL: ID3D11DeviceContextVtbl = ID3D11DeviceContextVtbl {
    base: ID3D11DeviceChildVtbl {
        base: unknown_vtbl::<C, CO>(),
        GetDevice: child_get_device::<C, ID3D11DeviceChild, CO>,
        GetPrivateData: get_private_data::<C, ID3D11DeviceChild, CO>,
        SetPrivateData: set_private_data::<C, ID3D11DeviceChild, CO>,
        SetPrivateDataInterface: set_private_data_interface::<C, ID3D11DeviceChild, CO>,
    },
    Map: map,
    Unmap: unmap,
    Begin: begin,
    End: end,
    GetData: get_data,
    CopySubresourceRegion: copy_subresource_region_m,
    CopyResource: copy_resource_m,
    UpdateSubresource: update_subresource,
    ClearState: clear_state,
    Flush: flush,
    GetType: get_type,
    GetContextFlags: get_context_flags,
    ..ID3D11DeviceContextVtbl::NOT_IMPLEMENTED
};

/// # Safety
/// `this` is the face of a live context.
unsafe fn ctx<'a>(this: *mut ID3D11DeviceContext) -> &'a Context {
    // SAFETY: function contract.
    unsafe { object::<Context, _>(this, CO) }
}

fn texel_box(b: &D3D11_BOX) -> TexelBox {
    TexelBox {
        left: b.left,
        top: b.top,
        front: b.front,
        right: b.right,
        bottom: b.bottom,
        back: b.back,
    }
}

unsafe extern "system" fn map(
    this: *mut ID3D11DeviceContext,
    resource: *mut ID3D11Resource,
    sub: u32,
    map_type: D3D11_MAP,
    flags: u32,
    out: *mut D3D11_MAPPED_SUBRESOURCE,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // Map: pMappedResource is required for the resources this runtime maps.
            return E_INVALIDARG;
        }
        // SAFETY: non-null and writable (COM contract); cleared so failures leave no stale pointer.
        unsafe {
            *out = D3D11_MAPPED_SUBRESOURCE {
                pData: ptr::null_mut(),
                RowPitch: 0,
                DepthPitch: 0,
            }
        };
        // SAFETY: COM contract.
        let Some(r) = (unsafe { ctx(this) }).resource(resource) else {
            // A resource that is not this device's cannot be mapped.
            return E_INVALIDARG;
        };
        match r.map(sub, map_type as u32, flags) {
            Ok(m) => {
                // SAFETY: as above.
                unsafe {
                    *out = D3D11_MAPPED_SUBRESOURCE {
                        pData: m.data.cast(),
                        RowPitch: m.row_pitch,
                        DepthPitch: m.depth_pitch,
                    }
                };
                S_OK
            }
            Err(hr) => hr,
        }
    })
}

unsafe extern "system" fn unmap(
    this: *mut ID3D11DeviceContext,
    resource: *mut ID3D11Resource,
    sub: u32,
) {
    guard((), || {
        // SAFETY: COM contract.
        if let Some(r) = unsafe { ctx(this) }.resource(resource) {
            r.unmap(sub);
        }
    })
}

unsafe extern "system" fn update_subresource(
    this: *mut ID3D11DeviceContext,
    dst: *mut ID3D11Resource,
    sub: u32,
    dst_box: *const D3D11_BOX,
    data: *const c_void,
    row_pitch: u32,
    depth_pitch: u32,
) {
    guard((), || {
        // SAFETY: COM contract.
        let Some(r) = unsafe { ctx(this) }.resource(dst) else {
            return;
        };
        // SAFETY: null or readable (COM contract).
        let b = unsafe { dst_box.as_ref() }.map(texel_box);
        // SAFETY: D3D's contract: pSrcData is readable for the box with the given pitches.
        unsafe { r.update(sub, b.as_ref(), data.cast(), row_pitch, depth_pitch) };
    })
}

unsafe extern "system" fn copy_resource_m(
    this: *mut ID3D11DeviceContext,
    dst: *mut ID3D11Resource,
    src: *mut ID3D11Resource,
) {
    guard((), || {
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        if let (Some(d), Some(s)) = (c.resource(dst), c.resource(src)) {
            copy_resource(&d, &s);
        }
    })
}

unsafe extern "system" fn copy_subresource_region_m(
    this: *mut ID3D11DeviceContext,
    dst: *mut ID3D11Resource,
    dst_sub: u32,
    x: u32,
    y: u32,
    z: u32,
    src: *mut ID3D11Resource,
    src_sub: u32,
    src_box: *const D3D11_BOX,
) {
    guard((), || {
        // SAFETY: COM contract.
        let c = unsafe { ctx(this) };
        if let (Some(d), Some(s)) = (c.resource(dst), c.resource(src)) {
            // SAFETY: null or readable (COM contract).
            let b = unsafe { src_box.as_ref() }.map(texel_box);
            copy_subresource_region(&d, dst_sub, x, y, z, &s, src_sub, b.as_ref());
        }
    })
}

unsafe extern "system" fn begin(this: *mut ID3D11DeviceContext, query: *mut ID3D11Asynchronous) {
    guard((), || {
        // SAFETY: COM contract.
        if let Some(q) = unsafe { ctx(this) }.query(query) {
            q.begin();
        }
    })
}

unsafe extern "system" fn end(this: *mut ID3D11DeviceContext, query: *mut ID3D11Asynchronous) {
    guard((), || {
        // SAFETY: COM contract.
        if let Some(q) = unsafe { ctx(this) }.query(query) {
            q.end();
        }
    })
}

unsafe extern "system" fn get_data(
    this: *mut ID3D11DeviceContext,
    query: *mut ID3D11Asynchronous,
    data: *mut c_void,
    size: u32,
    flags: u32,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract.
        let Some(q) = unsafe { ctx(this) }.query(query) else {
            // GetData needs one of this device's queries.
            return E_INVALIDARG;
        };
        // SAFETY: `data` is null or writable for `size` bytes (COM contract).
        unsafe { q.get_data(data, size, flags) }
    })
}

unsafe extern "system" fn clear_state(_this: *mut ID3D11DeviceContext) {
    // The context keeps no pipeline state: nothing to reset.
}

unsafe extern "system" fn flush(this: *mut ID3D11DeviceContext) {
    // SAFETY: COM contract.
    guard((), || unsafe { ctx(this) }.device().backend.flush())
}

unsafe extern "system" fn get_type(_this: *mut ID3D11DeviceContext) -> D3D11_DEVICE_CONTEXT_TYPE {
    D3D11_DEVICE_CONTEXT_IMMEDIATE
}

unsafe extern "system" fn get_context_flags(_this: *mut ID3D11DeviceContext) -> u32 {
    // Immediate contexts have no creation flags.
    0
}

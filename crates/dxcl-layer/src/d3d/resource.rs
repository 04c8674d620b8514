//! A Direct3D resource the application passed to a create function.

use std::ffi::c_void;

use dxcl_abi::{
    ID3D10Buffer, ID3D10Device, ID3D10DeviceChild, ID3D10Resource, ID3D10Texture2D,
    ID3D10Texture3D, ID3D11Buffer, ID3D11Device, ID3D11DeviceChild, ID3D11Resource,
    ID3D11Texture2D, ID3D11Texture3D, D3D10_BUFFER_DESC, D3D10_TEXTURE2D_DESC,
    D3D10_TEXTURE3D_DESC, D3D11_BUFFER_DESC, D3D11_TEXTURE2D_DESC, D3D11_TEXTURE3D_DESC,
};

use super::com::{query_raw, ComPtr};
use crate::core::tokens::D3dVersion;
use crate::core::tokens::ResourceKind;

/// The parts of a resource description the layer uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Desc {
    pub usage: i32,
    pub sample_count: u32,
    pub format: i32,
    pub byte_width: u32,
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub mip_levels: u32,
    pub array_size: u32,
    pub bind_flags: u32,
    pub misc_flags: u32,
}

/// A resource as the base interface of its API version (what copies and maps take).
#[derive(Clone)]
pub(crate) enum AnyResource {
    D3D11(ComPtr<ID3D11Resource>),
    D3D10(ComPtr<ID3D10Resource>),
}

impl AnyResource {
    /// See [`ComPtr::into_borrowed`].
    ///
    /// # Safety
    /// The caller keeps a counted reference to the same object for as long as the result is used.
    pub unsafe fn into_borrowed(self) -> AnyResource {
        match self {
            // SAFETY: caller's contract.
            AnyResource::D3D11(r) => AnyResource::D3D11(unsafe { r.into_borrowed() }),
            // SAFETY: caller's contract.
            AnyResource::D3D10(r) => AnyResource::D3D10(unsafe { r.into_borrowed() }),
        }
    }
}

/// `ID3D11DeviceChild::GetDevice`: the device that created the resource.
pub(crate) fn device11(r: &ComPtr<ID3D11Resource>) -> Option<ComPtr<ID3D11Device>> {
    let child = r.as_base::<ID3D11DeviceChild>();
    let mut dev = std::ptr::null_mut();
    // SAFETY: a live resource (a device child); GetDevice AddRefs the device it returns.
    unsafe { ((*(*child).lpVtbl).GetDevice)(child, &mut dev) };
    // SAFETY: we own the returned reference.
    unsafe { ComPtr::from_owned(dev) }
}

/// `ID3D10DeviceChild::GetDevice`.
pub(crate) fn device10(r: &ComPtr<ID3D10Resource>) -> Option<ComPtr<ID3D10Device>> {
    let child = r.as_base::<ID3D10DeviceChild>();
    let mut dev = std::ptr::null_mut();
    // SAFETY: a live resource (a device child); GetDevice AddRefs the device it returns.
    unsafe { ((*(*child).lpVtbl).GetDevice)(child, &mut dev) };
    // SAFETY: we own the returned reference.
    unsafe { ComPtr::from_owned(dev) }
}

pub(crate) struct Resource {
    /// The resource (AddRef'd), the reference a memory object keeps.
    pub com: ComPtr,
    /// The same object as its version's `ID3D1xResource` (a second reference, dropped with this).
    pub base: AnyResource,
    pub identity: usize,
    pub desc: Desc,
    /// Identity of the device that created it.
    pub device_identity: usize,
}

/// Full mip chain length for `MipLevels = 0`: 1 + floor(log2(largest dimension)).
pub(crate) fn full_mip_chain(largest: u32) -> u32 {
    32 - largest.max(1).leading_zeros()
}

fn mips(levels: u32, largest: u32) -> u32 {
    if levels == 0 {
        full_mip_chain(largest)
    } else {
        levels
    }
}

/// The defaults of the members a kind has no use for.
fn base_desc() -> Desc {
    Desc {
        sample_count: 1,
        depth: 1,
        mip_levels: 1,
        array_size: 1,
        ..Desc::default()
    }
}

macro_rules! buffer_desc {
    ($b:expr) => {{
        let b = $b;
        Desc {
            usage: b.Usage,
            byte_width: b.ByteWidth,
            bind_flags: b.BindFlags,
            misc_flags: b.MiscFlags,
            ..base_desc()
        }
    }};
}

macro_rules! texture2d_desc {
    ($t:expr) => {{
        let t = $t;
        Desc {
            usage: t.Usage,
            sample_count: t.SampleDesc.Count,
            format: t.Format,
            width: t.Width,
            height: t.Height,
            mip_levels: mips(t.MipLevels, t.Width.max(t.Height)),
            array_size: t.ArraySize,
            bind_flags: t.BindFlags,
            misc_flags: t.MiscFlags,
            ..base_desc()
        }
    }};
}

macro_rules! texture3d_desc {
    ($t:expr) => {{
        let t = $t;
        Desc {
            usage: t.Usage,
            format: t.Format,
            width: t.Width,
            height: t.Height,
            depth: t.Depth,
            mip_levels: mips(t.MipLevels, t.Width.max(t.Height).max(t.Depth)),
            bind_flags: t.BindFlags,
            misc_flags: t.MiscFlags,
            ..base_desc()
        }
    }};
}

/// QueryInterfaces `ptr` for interface `$iface`, reads its description of type `$desc` and
/// returns it with the resource seen as its version's base interface.
macro_rules! open_as {
    ($ptr:expr, $iface:ty, $desc:ty, $into:ident, $any:ident) => {{
        // SAFETY: the caller of `open` guarantees `ptr` is null or a live COM object.
        let typed = unsafe { query_raw::<$iface>($ptr) }?;
        let mut d = <$desc>::default();
        let p = typed.as_ptr();
        // SAFETY: a live resource of this interface; `d` is a valid out struct.
        unsafe { ((*(*p).lpVtbl).GetDesc)(p, &mut d) };
        ($into!(d), AnyResource::$any(typed.upcast()))
    }};
}

/// QueryInterfaces the application's pointer for the resource kind; `None` for null or another
/// kind of object.
///
/// # Safety
/// `ptr` is null or a live COM object.
pub(crate) unsafe fn open(
    version: D3dVersion,
    kind: ResourceKind,
    ptr: *mut c_void,
) -> Option<Resource> {
    use D3dVersion::{D3D10, D3D11};
    use ResourceKind::{Buffer, Texture2D, Texture3D};
    let (desc, base) = match (version, kind) {
        (D3D11, Buffer) => open_as!(ptr, ID3D11Buffer, D3D11_BUFFER_DESC, buffer_desc, D3D11),
        (D3D11, Texture2D) => {
            open_as!(
                ptr,
                ID3D11Texture2D,
                D3D11_TEXTURE2D_DESC,
                texture2d_desc,
                D3D11
            )
        }
        (D3D11, Texture3D) => {
            open_as!(
                ptr,
                ID3D11Texture3D,
                D3D11_TEXTURE3D_DESC,
                texture3d_desc,
                D3D11
            )
        }
        (D3D10, Buffer) => open_as!(ptr, ID3D10Buffer, D3D10_BUFFER_DESC, buffer_desc, D3D10),
        (D3D10, Texture2D) => {
            open_as!(
                ptr,
                ID3D10Texture2D,
                D3D10_TEXTURE2D_DESC,
                texture2d_desc,
                D3D10
            )
        }
        (D3D10, Texture3D) => {
            open_as!(
                ptr,
                ID3D10Texture3D,
                D3D10_TEXTURE3D_DESC,
                texture3d_desc,
                D3D10
            )
        }
    };
    let (com, device_identity) = match &base {
        AnyResource::D3D11(r) => (r.clone().upcast(), device11(r)?.identity()),
        AnyResource::D3D10(r) => (r.clone().upcast(), device10(r)?.identity()),
    };
    Some(Resource {
        identity: com.identity(),
        com,
        base,
        desc,
        device_identity,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn mip_chain() {
        assert_eq!(super::full_mip_chain(1), 1);
        assert_eq!(super::full_mip_chain(256), 9);
        assert_eq!(super::full_mip_chain(255), 8);
        assert_eq!(super::full_mip_chain(0), 1);
    }
}

//! A Direct3D resource the application passed to a create function.

use std::ffi::c_void;

use super::com::{query_raw, ComPtr};
use super::sys::{
    method, IID_ID3D10Buffer, IID_ID3D10Texture2D, IID_ID3D10Texture3D, IID_ID3D11Buffer,
    IID_ID3D11Texture2D, IID_ID3D11Texture3D, CHILD_GET_DEVICE, D3D10_BUFFER_DESC,
    D3D10_RESOURCE_GET_DESC, D3D11_BUFFER_DESC, D3D11_RESOURCE_GET_DESC, D3D11_TEXTURE2D_DESC,
    D3D11_TEXTURE3D_DESC, GUID,
};
use crate::core::registry::ResourceKind;
use crate::core::tokens::D3dVersion;

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

pub(crate) struct Resource {
    /// The resource as the interface of its kind (AddRef'd).
    pub com: ComPtr,
    pub identity: usize,
    pub desc: Desc,
    /// Identity of the device that created it.
    pub device_identity: usize,
}

pub(crate) fn iid(version: D3dVersion, kind: ResourceKind) -> &'static GUID {
    match (version, kind) {
        (D3dVersion::D3D10, ResourceKind::Buffer) => &IID_ID3D10Buffer,
        (D3dVersion::D3D10, ResourceKind::Texture2D) => &IID_ID3D10Texture2D,
        (D3dVersion::D3D10, ResourceKind::Texture3D) => &IID_ID3D10Texture3D,
        (D3dVersion::D3D11, ResourceKind::Buffer) => &IID_ID3D11Buffer,
        (D3dVersion::D3D11, ResourceKind::Texture2D) => &IID_ID3D11Texture2D,
        (D3dVersion::D3D11, ResourceKind::Texture3D) => &IID_ID3D11Texture3D,
    }
}

/// Full mip chain length for `MipLevels = 0`: 1 + floor(log2(largest dimension)).
pub(crate) fn full_mip_chain(largest: u32) -> u32 {
    32 - largest.max(1).leading_zeros()
}

/// Reads the description of a resource of a known kind and version.
pub(crate) fn describe(com: &ComPtr, version: D3dVersion, kind: ResourceKind) -> Desc {
    let p = com.as_ptr();
    let slot = match version {
        D3dVersion::D3D10 => D3D10_RESOURCE_GET_DESC,
        D3dVersion::D3D11 => D3D11_RESOURCE_GET_DESC,
    };
    let mut d = Desc {
        sample_count: 1,
        depth: 1,
        mip_levels: 1,
        array_size: 1,
        ..Desc::default()
    };
    match (version, kind) {
        (D3dVersion::D3D11, ResourceKind::Buffer) => {
            let mut b = D3D11_BUFFER_DESC::default();
            // SAFETY: an ID3D11Buffer (QueryInterface said so); GetDesc fills the struct.
            unsafe {
                method::<unsafe extern "system" fn(*mut c_void, *mut D3D11_BUFFER_DESC)>(p, slot)(
                    p, &mut b,
                )
            };
            (d.usage, d.byte_width, d.bind_flags, d.misc_flags) =
                (b.Usage, b.ByteWidth, b.BindFlags, b.MiscFlags);
        }
        (D3dVersion::D3D10, ResourceKind::Buffer) => {
            let mut b = D3D10_BUFFER_DESC::default();
            // SAFETY: an ID3D10Buffer; GetDesc fills the struct.
            unsafe {
                method::<unsafe extern "system" fn(*mut c_void, *mut D3D10_BUFFER_DESC)>(p, slot)(
                    p, &mut b,
                )
            };
            (d.usage, d.byte_width, d.bind_flags, d.misc_flags) =
                (b.Usage, b.ByteWidth, b.BindFlags, b.MiscFlags);
        }
        (_, ResourceKind::Texture2D) => {
            let mut t = D3D11_TEXTURE2D_DESC::default();
            // SAFETY: an ID3D1xTexture2D; both versions' descriptions share this layout.
            unsafe {
                method::<unsafe extern "system" fn(*mut c_void, *mut D3D11_TEXTURE2D_DESC)>(p, slot)(
                    p, &mut t,
                )
            };
            d.usage = t.Usage;
            d.sample_count = t.SampleDesc.Count;
            d.format = t.Format;
            (d.width, d.height) = (t.Width, t.Height);
            d.mip_levels = if t.MipLevels == 0 {
                full_mip_chain(t.Width.max(t.Height))
            } else {
                t.MipLevels
            };
            d.array_size = t.ArraySize;
            (d.bind_flags, d.misc_flags) = (t.BindFlags, t.MiscFlags);
        }
        (_, ResourceKind::Texture3D) => {
            let mut t = D3D11_TEXTURE3D_DESC::default();
            // SAFETY: an ID3D1xTexture3D; both versions' descriptions share this layout.
            unsafe {
                method::<unsafe extern "system" fn(*mut c_void, *mut D3D11_TEXTURE3D_DESC)>(p, slot)(
                    p, &mut t,
                )
            };
            d.usage = t.Usage;
            d.format = t.Format;
            (d.width, d.height, d.depth) = (t.Width, t.Height, t.Depth);
            d.mip_levels = if t.MipLevels == 0 {
                full_mip_chain(t.Width.max(t.Height).max(t.Depth))
            } else {
                t.MipLevels
            };
            (d.bind_flags, d.misc_flags) = (t.BindFlags, t.MiscFlags);
        }
    }
    d
}

/// The identity of the device that created a resource (`ID3D1xDeviceChild::GetDevice`).
pub(crate) fn device_identity(com: &ComPtr) -> Option<usize> {
    let p = com.as_ptr();
    let mut dev = std::ptr::null_mut();
    // SAFETY: every D3D10/11 resource is a device child; slot 3 is GetDevice, which returns an
    // AddRef'd device.
    unsafe {
        method::<unsafe extern "system" fn(*mut c_void, *mut *mut c_void)>(p, CHILD_GET_DEVICE)(
            p, &mut dev,
        )
    };
    // SAFETY: we own the returned reference.
    let dev = unsafe { ComPtr::from_owned(dev) }?;
    Some(dev.identity())
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
    // SAFETY: caller's contract.
    let com = unsafe { query_raw(ptr, iid(version, kind)) }?;
    let desc = describe(&com, version, kind);
    let device_identity = device_identity(&com)?;
    Some(Resource {
        identity: com.identity(),
        com,
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

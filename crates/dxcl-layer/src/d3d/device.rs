//! A Direct3D device the application named (context property or device source).

use std::ffi::c_void;

use dxcl_abi::interop::{
    IDxclInteropDevice, DXCL_ADAPTER_FLAG_SOFTWARE, DXCL_ADAPTER_INFO, DXCL_BACKEND_KIND_VULKAN,
};
use dxcl_abi::{ID3D10Device, ID3D11Device, SUCCEEDED};

use super::adapter::{self, AdapterId};
use super::com::{query_raw, ComPtr};
use crate::core::tokens::D3dVersion;

pub(crate) struct Device {
    /// The device interface of the right version (AddRef'd), kept for its reference.
    pub com: ComPtr,
    pub identity: usize,
}

/// QueryInterfaces the application's pointer for `ID3D10Device` / `ID3D11Device`; `None` for a
/// null pointer or an object that is not such a device.
///
/// # Safety
/// `ptr` is null or a live COM object.
pub(crate) unsafe fn open(version: D3dVersion, ptr: *mut c_void) -> Option<Device> {
    let com = match version {
        // SAFETY: caller's contract.
        D3dVersion::D3D10 => unsafe { query_raw::<ID3D10Device>(ptr) }?.upcast(),
        // SAFETY: caller's contract.
        D3dVersion::D3D11 => unsafe { query_raw::<ID3D11Device>(ptr) }?.upcast(),
    };
    let identity = com.identity();
    Some(Device { com, identity })
}

/// [`open`] for a context property: the pointer must be the object's `ID3D10Device` /
/// `ID3D11Device` interface itself. A runtime may give one object both devices' faces (wined3d and
/// DXVK do): the other face answers `QueryInterface` for this version's device, but is not a
/// pointer to it, and the property then names no valid device.
///
/// # Safety
/// `ptr` is null or a live COM object.
pub(crate) unsafe fn open_exact(version: D3dVersion, ptr: *mut c_void) -> Option<Device> {
    // SAFETY: caller's contract.
    let device = unsafe { open(version, ptr) }?;
    std::ptr::eq(device.com.as_ptr().cast::<c_void>(), ptr).then_some(device)
}

impl Device {
    /// Which adapter the device runs on: dxcl's interop interface first, standard DXGI else.
    pub fn adapter(&self) -> Option<AdapterId> {
        if let Some(interop) = self.com.query::<IDxclInteropDevice>() {
            if let Some(id) = adapter::from_interop(&interop) {
                return Some(id);
            }
        }
        adapter::from_dxgi_device(&self.com)
    }
}

/// The UUID of the hardware Vulkan adapter behind dxcl's device (CPU adapters such as lavapipe have none worth matching:
/// their exported memory is private to the driver).
pub(crate) fn dxcl_gpu_uuid(device: &ComPtr<IDxclInteropDevice>) -> Option<[u8; 16]> {
    let mut info = DXCL_ADAPTER_INFO::default();
    let p = device.as_ptr();
    // SAFETY: a live IDxclInteropDevice; `info` is a valid out struct.
    let hr = unsafe { ((*(*p).lpVtbl).GetAdapterInfo)(p, &mut info) };
    (SUCCEEDED(hr)
        && info.Backend == DXCL_BACKEND_KIND_VULKAN
        && info.Flags & DXCL_ADAPTER_FLAG_SOFTWARE as u32 == 0)
        .then_some(info.DeviceUuid)
}

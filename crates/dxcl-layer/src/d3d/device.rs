//! A Direct3D device the application named (context property or device source), and what it
//! says about sharing one of its resources ([`sharing`]).

use std::ffi::c_void;

use dxcl_abi::interop::{
    IDxclInteropDevice, DXCL_ADAPTER_FLAG_SOFTWARE, DXCL_ADAPTER_INFO, DXCL_BACKEND_KIND_VULKAN,
};
use dxcl_abi::{ID3D10Device, ID3D11Device, SUCCEEDED};

use super::adapter::{self, AdapterId};
use super::com::{query_raw, ComPtr};
use super::interop::Interop;
use super::vulkan;
use crate::core::tokens::{D3dVersion, ResourceKind};

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

/// What Direct3D says about sharing one resource of a device with OpenCL: all that the layer asks
/// of Direct3D before it decides how to share the resource.
pub(crate) struct Sharing {
    /// The resource's interop object (dxcl's resources, and DXVK textures made by
    /// `dxclCreateSharedTexture2D`).
    pub interop: Option<Interop>,
    /// The resource has no interop object and its device is DXVK's.
    pub dxvk: bool,
    /// A DXVK texture a shadow may stand for: D3D11 only (DXVK's D3D10 textures have no shared
    /// counterpart).
    pub dxvk_texture: bool,
    /// The device as dxcl's interop device, for a resource whose memory is an exportable fd.
    pub interop_device: Option<ComPtr<IDxclInteropDevice>>,
    /// The UUID of the GPU whose memory OpenCL devices would import: from dxcl's device, or from
    /// DXVK's GPU for a DXVK texture made by `dxclCreateSharedTexture2D` (an interop object that
    /// does not defer) and for a shadow. None on CPU adapters, and where nothing would be
    /// imported.
    pub gpu_uuid: Option<[u8; 16]>,
}

/// What Direct3D says about sharing `resource`, a `kind` resource of `device` (API `version`).
pub(crate) fn sharing(
    device: &ComPtr,
    resource: &ComPtr,
    version: D3dVersion,
    kind: ResourceKind,
) -> Sharing {
    let interop = Interop::query(resource);
    let dxvk = interop.is_none() && vulkan::is_dxvk_device(device);
    let dxvk_texture = dxvk && kind == ResourceKind::Texture2D && version == D3dVersion::D3D11;
    let fd_memory = interop.as_ref().and_then(Interop::fd_image).is_some();
    let interop_device = if fd_memory {
        device.query::<IDxclInteropDevice>()
    } else {
        None
    };
    let gpu_uuid = match &interop_device {
        Some(d) => dxcl_gpu_uuid(d),
        None if dxvk_texture || fd_memory && interop.as_ref().is_some_and(|i| !i.defers) => {
            vulkan::dxvk_gpu_uuid(device)
        }
        None => None,
    };
    Sharing {
        interop,
        dxvk,
        dxvk_texture,
        interop_device,
        gpu_uuid,
    }
}

/// The UUID of the hardware Vulkan adapter behind dxcl's device (CPU adapters such as lavapipe
/// have none worth matching: their exported memory is private to the driver).
fn dxcl_gpu_uuid(device: &ComPtr<IDxclInteropDevice>) -> Option<[u8; 16]> {
    let mut info = DXCL_ADAPTER_INFO::default();
    let p = device.as_ptr();
    // SAFETY: a live IDxclInteropDevice; `info` is a valid out struct.
    let hr = unsafe { ((*(*p).lpVtbl).GetAdapterInfo)(p, &mut info) };
    (SUCCEEDED(hr)
        && info.Backend == DXCL_BACKEND_KIND_VULKAN
        && info.Flags & DXCL_ADAPTER_FLAG_SOFTWARE as u32 == 0)
        .then_some(info.DeviceUuid)
}

//! Identifying the adapter behind a D3D device or a DXGI adapter.

use std::ffi::c_void;

use dxcl_abi::interop::{
    IDxclInteropDevice, DXCL_ADAPTER_FLAG_SOFTWARE, DXCL_ADAPTER_INFO, DXCL_BACKEND_KIND_HOST,
};
use dxcl_abi::{
    IDXGIAdapter, IDXGIAdapter1, IDXGIDevice, DXGI_ADAPTER_DESC, DXGI_ADAPTER_DESC1,
    DXGI_ADAPTER_FLAG_SOFTWARE, LUID, SUCCEEDED,
};

use super::com::{query_raw, ComPtr};

/// Microsoft's PCI vendor id, which the software (WARP) adapter reports.
const VENDOR_MICROSOFT: u32 = 0x1414;

/// How an adapter is recognised among OpenCL devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AdapterId {
    /// An adapter that runs on the CPU (software adapter, lavapipe): CPU devices with
    /// host-unified memory.
    Software,
    /// A hardware adapter known by its device UUID (`CL_DEVICE_UUID_KHR`).
    Uuid([u8; 16]),
    /// A hardware adapter known by its LUID (`CL_DEVICE_LUID_KHR`), bytes as laid out in memory.
    Luid([u8; 8]),
}

/// A LUID's bytes as laid out in memory (how `CL_DEVICE_LUID_KHR` reports one).
pub(crate) fn luid_bytes(l: LUID) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&l.LowPart.to_ne_bytes());
    b[4..].copy_from_slice(&l.HighPart.to_ne_bytes());
    b
}

/// What dxcl's adapter information says: a CPU adapter (host backend, or any backend flagged
/// `DXCL_ADAPTER_FLAG_SOFTWARE` such as lavapipe) pairs with CPU devices; a hardware Vulkan
/// adapter with the device of its UUID.
fn from_info(info: &DXCL_ADAPTER_INFO) -> AdapterId {
    if info.Backend == DXCL_BACKEND_KIND_HOST || info.Flags & DXCL_ADAPTER_FLAG_SOFTWARE as u32 != 0
    {
        AdapterId::Software
    } else {
        AdapterId::Uuid(info.DeviceUuid)
    }
}

/// From `IDxclInteropDevice::GetAdapterInfo`.
pub(crate) fn from_interop(interop: &ComPtr<IDxclInteropDevice>) -> Option<AdapterId> {
    let mut info = DXCL_ADAPTER_INFO::default();
    let p = interop.as_ptr();
    // SAFETY: a live IDxclInteropDevice (QueryInterface said so); `info` is a valid out struct.
    let hr = unsafe { ((*(*p).lpVtbl).GetAdapterInfo)(p, &mut info) };
    SUCCEEDED(hr).then(|| from_info(&info))
}

/// What a foreign adapter's standard description says: software when DXGI flags it so (or it is
/// Microsoft's WARP), else its LUID.
fn from_desc(vendor: u32, luid: LUID, software_flag: bool) -> AdapterId {
    if software_flag || vendor == VENDOR_MICROSOFT {
        AdapterId::Software
    } else {
        AdapterId::Luid(luid_bytes(luid))
    }
}

/// From a DXGI adapter: dxcl's interop interface, `GetDesc1` (with its flags), or `GetDesc`.
fn from_adapter(adapter: &ComPtr<IDXGIAdapter>) -> Option<AdapterId> {
    if let Some(i) = adapter.query::<IDxclInteropDevice>() {
        if let Some(id) = from_interop(&i) {
            return Some(id);
        }
    }
    if let Some(a1) = adapter.query::<IDXGIAdapter1>() {
        let mut desc = DXGI_ADAPTER_DESC1::default();
        let p = a1.as_ptr();
        // SAFETY: a live IDXGIAdapter1; `desc` is a valid out struct.
        if SUCCEEDED(unsafe { ((*(*p).lpVtbl).GetDesc1)(p, &mut desc) }) {
            let software = desc.Flags & DXGI_ADAPTER_FLAG_SOFTWARE as u32 != 0;
            return Some(from_desc(desc.VendorId, desc.AdapterLuid, software));
        }
    }
    let mut desc = DXGI_ADAPTER_DESC::default();
    let p = adapter.as_ptr();
    // SAFETY: a live IDXGIAdapter; `desc` is a valid out struct.
    let hr = unsafe { ((*(*p).lpVtbl).GetDesc)(p, &mut desc) };
    SUCCEEDED(hr).then(|| from_desc(desc.VendorId, desc.AdapterLuid, false))
}

/// The adapter of a device, through `IDXGIDevice::GetAdapter`.
pub(crate) fn from_dxgi_device(device: &ComPtr) -> Option<AdapterId> {
    let dxgi = device.query::<IDXGIDevice>()?;
    let p = dxgi.as_ptr();
    let mut out = std::ptr::null_mut();
    // SAFETY: a live IDXGIDevice; GetAdapter returns an AddRef'd adapter through our out pointer.
    let hr = unsafe { ((*(*p).lpVtbl).GetAdapter)(p, &mut out) };
    if !SUCCEEDED(hr) {
        return None;
    }
    // SAFETY: on success we own the returned reference.
    let adapter = unsafe { ComPtr::from_owned(out) }?;
    from_adapter(&adapter)
}

/// Identifies an application's `IDXGIAdapter*`.
///
/// # Safety
/// `ptr` is null or a live COM object.
pub(crate) unsafe fn identify_adapter(ptr: *mut c_void) -> Option<AdapterId> {
    // SAFETY: caller's contract.
    let adapter = unsafe { query_raw::<IDXGIAdapter>(ptr) }?;
    from_adapter(&adapter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dxcl_abi::interop::DXCL_BACKEND_KIND_VULKAN;

    fn info(backend: i32, flags: u32, uuid: u8) -> DXCL_ADAPTER_INFO {
        DXCL_ADAPTER_INFO {
            Backend: backend,
            Flags: flags,
            DeviceUuid: [uuid; 16],
            ..DXCL_ADAPTER_INFO::default()
        }
    }

    #[test]
    fn software_flag_pairs_with_cpu_devices() {
        let sw = DXCL_ADAPTER_FLAG_SOFTWARE as u32;
        assert_eq!(
            from_info(&info(DXCL_BACKEND_KIND_HOST, 0, 0)),
            AdapterId::Software
        );
        assert_eq!(
            from_info(&info(DXCL_BACKEND_KIND_HOST, sw, 0)),
            AdapterId::Software
        );
        // lavapipe: a Vulkan adapter that runs on the CPU.
        assert_eq!(
            from_info(&info(DXCL_BACKEND_KIND_VULKAN, sw, 7)),
            AdapterId::Software
        );
        assert_eq!(
            from_info(&info(DXCL_BACKEND_KIND_VULKAN, 0, 7)),
            AdapterId::Uuid([7; 16])
        );
    }

    #[test]
    fn foreign_adapters_by_flag_vendor_or_luid() {
        let luid = LUID {
            LowPart: 0x0403_0201,
            HighPart: 0x0807_0605,
        };
        assert_eq!(from_desc(0x10de, luid, true), AdapterId::Software);
        assert_eq!(
            from_desc(VENDOR_MICROSOFT, luid, false),
            AdapterId::Software
        );
        assert_eq!(
            from_desc(0x10de, luid, false),
            AdapterId::Luid([1, 2, 3, 4, 5, 6, 7, 8])
        );
    }
}

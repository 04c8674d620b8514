//! Identifying the adapter behind a D3D device or a DXGI adapter.

use std::ffi::c_void;

use super::com::{query_raw, ComPtr};
use super::sys::{
    method, IID_IDXGIAdapter, IID_IDXGIDevice, IID_IDxclInteropDevice, DXCL_ADAPTER_INFO,
    DXCL_BACKEND_KIND_HOST, DXGI_ADAPTER_DESC, DXGI_ADAPTER_GET_DESC, DXGI_DEVICE_GET_ADAPTER,
    HRESULT, INTEROP_DEVICE_GET_ADAPTER_INFO, LUID,
};

/// Microsoft's PCI vendor id, which the software (WARP) adapter reports.
const VENDOR_MICROSOFT: u32 = 0x1414;

/// How an adapter is recognised among OpenCL devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AdapterId {
    /// A software adapter: CPU devices with host-unified memory.
    Software,
    /// A hardware adapter known by its device UUID (`CL_DEVICE_UUID_KHR`).
    Uuid([u8; 16]),
    /// A hardware adapter known by its LUID (`CL_DEVICE_LUID_KHR`), bytes as laid out in memory.
    Luid([u8; 8]),
}

fn luid_bytes(l: LUID) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&l.LowPart.to_ne_bytes());
    b[4..].copy_from_slice(&l.HighPart.to_ne_bytes());
    b
}

/// From `IDxclInteropDevice::GetAdapterInfo`.
pub(crate) fn from_interop(interop: &ComPtr) -> Option<AdapterId> {
    type GetAdapterInfo = unsafe extern "system" fn(*mut c_void, *mut DXCL_ADAPTER_INFO) -> HRESULT;
    let mut info = DXCL_ADAPTER_INFO::default();
    // SAFETY: an IDxclInteropDevice (QueryInterface said so); slot 3 is GetAdapterInfo.
    let hr = unsafe {
        method::<GetAdapterInfo>(interop.as_ptr(), INTEROP_DEVICE_GET_ADAPTER_INFO)(
            interop.as_ptr(),
            &mut info,
        )
    };
    if hr < 0 {
        return None;
    }
    Some(if info.Backend == DXCL_BACKEND_KIND_HOST {
        AdapterId::Software
    } else {
        AdapterId::Uuid(info.DeviceUuid)
    })
}

/// From a DXGI adapter's description.
fn from_adapter(adapter: &ComPtr) -> Option<AdapterId> {
    if let Some(i) = adapter.query(&IID_IDxclInteropDevice) {
        if let Some(id) = from_interop(&i) {
            return Some(id);
        }
    }
    type GetDesc = unsafe extern "system" fn(*mut c_void, *mut DXGI_ADAPTER_DESC) -> HRESULT;
    // SAFETY: all-zero is a valid DXGI_ADAPTER_DESC (integers and arrays).
    let mut desc: DXGI_ADAPTER_DESC = unsafe { std::mem::zeroed() };
    // SAFETY: an IDXGIAdapter; slot 8 is GetDesc.
    let hr = unsafe {
        method::<GetDesc>(adapter.as_ptr(), DXGI_ADAPTER_GET_DESC)(adapter.as_ptr(), &mut desc)
    };
    if hr < 0 {
        return None;
    }
    Some(if desc.VendorId == VENDOR_MICROSOFT {
        AdapterId::Software
    } else {
        AdapterId::Luid(luid_bytes(desc.AdapterLuid))
    })
}

/// The adapter of a device, through `IDXGIDevice::GetAdapter`.
pub(crate) fn from_dxgi_device(device: &ComPtr) -> Option<AdapterId> {
    let dxgi = device.query(&IID_IDXGIDevice)?;
    type GetAdapter = unsafe extern "system" fn(*mut c_void, *mut *mut c_void) -> HRESULT;
    let mut out = std::ptr::null_mut();
    // SAFETY: an IDXGIDevice; slot 7 is GetAdapter, returning an AddRef'd adapter.
    let hr = unsafe {
        method::<GetAdapter>(dxgi.as_ptr(), DXGI_DEVICE_GET_ADAPTER)(dxgi.as_ptr(), &mut out)
    };
    if hr < 0 {
        return None;
    }
    // SAFETY: we own the returned reference.
    let adapter = unsafe { ComPtr::from_owned(out) }?;
    from_adapter(&adapter)
}

/// Identifies an application's `IDXGIAdapter*`.
///
/// # Safety
/// `ptr` is null or a live COM object.
pub(crate) unsafe fn identify_adapter(ptr: *mut c_void) -> Option<AdapterId> {
    // SAFETY: caller's contract.
    let adapter = unsafe { query_raw(ptr, &IID_IDXGIAdapter) }?;
    from_adapter(&adapter)
}

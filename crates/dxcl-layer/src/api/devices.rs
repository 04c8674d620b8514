//! `clGetDeviceIDsFromD3D1x{KHR,NV}` and the device sets behind it.
//!
//! - Preferred devices: those on the D3D device's own adapter. dxcl's adapters say what they are
//!   through `IDxclInteropDevice::GetAdapterInfo` (software adapter → CPU devices with host-unified
//!   memory; hardware adapter → the device whose `CL_DEVICE_UUID_KHR` is the adapter's UUID);
//!   DXVK's adapters by their Vulkan physical device (`IDXGIVkInteropAdapter`; a CPU device such
//!   as lavapipe → CPU devices with host-unified memory, else → the device of its deviceUUID);
//!   other adapters are matched by the DXGI adapter LUID against `CL_DEVICE_LUID_KHR`, and
//!   Microsoft's software adapter (vendor 0x1414) and Mesa's (Vulkan vendor 0x10005) match CPU
//!   devices with host-unified memory.
//! - All devices: every device of the platform, preferred first, because the staging-copy
//!   strategy lets any device share with any D3D device (more slowly).

use std::ffi::c_void;

use opencl_sys::{
    cl_bool, cl_device_id, cl_device_type, cl_int, cl_platform_id, cl_uint,
    CL_DEVICE_HOST_UNIFIED_MEMORY, CL_DEVICE_LUID_KHR, CL_DEVICE_LUID_VALID_KHR,
    CL_DEVICE_NOT_FOUND, CL_DEVICE_TYPE, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU,
    CL_DEVICE_UUID_KHR, CL_FALSE, CL_INVALID_PLATFORM, CL_INVALID_VALUE,
};

use super::{check, down};
use crate::cl::info::query_value;
use crate::core::tokens::{D3dVersion, Ext};
use crate::d3d::adapter::{luid_bytes, AdapterId};
use crate::d3d::{self, device::Device};

/// The platforms below (for validating a `cl_platform_id` without dereferencing it).
pub(crate) fn platforms() -> Result<Vec<usize>, cl_int> {
    let get = down!(clGetPlatformIDs);
    let mut n: cl_uint = 0;
    // SAFETY: count query with our own out pointer.
    let r = unsafe { get(0, std::ptr::null_mut(), &mut n) };
    if r != 0 || n == 0 {
        return Ok(vec![]);
    }
    let mut list = vec![std::ptr::null_mut(); n as usize];
    // SAFETY: our buffer holds n entries.
    check(unsafe { get(n, list.as_mut_ptr(), std::ptr::null_mut()) })?;
    Ok(list.into_iter().map(|p| p as usize).collect())
}

fn platform_devices(platform: cl_platform_id) -> Result<Vec<usize>, cl_int> {
    let get = down!(clGetDeviceIDs);
    let mut n: cl_uint = 0;
    // SAFETY: count query with our own out pointer on a validated platform.
    let r = unsafe {
        get(
            platform,
            CL_DEVICE_TYPE_ALL,
            0,
            std::ptr::null_mut(),
            &mut n,
        )
    };
    if r != 0 || n == 0 {
        return Ok(vec![]);
    }
    let mut list = vec![std::ptr::null_mut(); n as usize];
    // SAFETY: our buffer holds n entries.
    check(unsafe {
        get(
            platform,
            CL_DEVICE_TYPE_ALL,
            n,
            list.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    })?;
    Ok(list.into_iter().map(|d| d as usize).collect())
}

fn device_query<T: Copy + Default>(device: usize, param: cl_uint) -> Option<T> {
    let get = crate::cl::target()?.clGetDeviceInfo?;
    // SAFETY: a device of the platform below; our own buffer of size_of::<T>().
    query_value::<T>(|n, p, r| unsafe { get(device as cl_device_id, param, n, p, r) }).ok()
}

/// Whether an OpenCL device sits on the adapter.
fn matches(device: usize, adapter: &AdapterId) -> bool {
    match adapter {
        AdapterId::Software => {
            let ty: cl_device_type = device_query(device, CL_DEVICE_TYPE).unwrap_or(0);
            let unified: cl_bool =
                device_query(device, CL_DEVICE_HOST_UNIFIED_MEMORY).unwrap_or(CL_FALSE);
            ty & CL_DEVICE_TYPE_CPU != 0 && unified != CL_FALSE
        }
        AdapterId::Uuid(uuid) => {
            device_query::<[u8; 16]>(device, CL_DEVICE_UUID_KHR) == Some(*uuid)
        }
        AdapterId::Luid(luid) => {
            let own = device_query::<cl_bool>(device, CL_DEVICE_LUID_VALID_KHR)
                .is_some_and(|v| v != CL_FALSE)
                && device_query::<[u8; 8]>(device, CL_DEVICE_LUID_KHR) == Some(*luid);
            // dxcl's Vulkan adapters on drivers without LUIDs report one derived from the
            // device UUID (dxcl_abi::luid_from_uuid); the CL device of the same UUID matches.
            let derived = device_query::<[u8; 16]>(device, CL_DEVICE_UUID_KHR).is_some_and(|u| {
                let (low, high) = dxcl_abi::luid_from_uuid(&u);
                luid_bytes(dxcl_abi::LUID {
                    LowPart: low,
                    HighPart: high,
                }) == *luid
            });
            own || derived
        }
    }
}

/// (preferred, all) device sets of a platform for an adapter.
fn device_sets(
    platform: cl_platform_id,
    adapter: Option<&AdapterId>,
) -> Result<(Vec<usize>, Vec<usize>), cl_int> {
    let all = platform_devices(platform)?;
    let preferred: Vec<usize> = match adapter {
        Some(a) => all.iter().copied().filter(|d| matches(*d, a)).collect(),
        None => vec![],
    };
    let mut ordered = preferred.clone();
    ordered.extend(all.into_iter().filter(|d| !preferred.contains(d)));
    Ok((preferred, ordered))
}

/// The devices of `platform` that may interoperate with `device` (the "all" set).
pub(crate) fn interoperable(
    _version: D3dVersion,
    device: &Device,
    platform: cl_platform_id,
) -> Result<Vec<usize>, cl_int> {
    let adapter = device.adapter();
    Ok(device_sets(platform, adapter.as_ref())?.1)
}

/// The body of the eight `clGetDeviceIDsFromD3D1x*` entry points.
///
/// # Safety
/// The pointers obey the entry point's contract.
#[allow(clippy::too_many_arguments)] // The C signature has seven arguments plus the extension.
pub(crate) unsafe fn get_device_ids(
    ext: Ext,
    platform: cl_platform_id,
    source: cl_uint,
    object: *mut c_void,
    set: cl_uint,
    num_entries: cl_uint,
    devices: *mut cl_device_id,
    num_devices: *mut cl_uint,
) -> Result<(), cl_int> {
    let v = ext.version;
    // CL_INVALID_PLATFORM "if platform is not a valid platform".
    if platform.is_null() || !platforms()?.contains(&(platform as usize)) {
        return Err(CL_INVALID_PLATFORM);
    }
    // CL_INVALID_VALUE "if d3d_device_source is not a valid value, d3d_device_set is not a valid
    // value, num_entries is equal to zero and devices is not NULL, or if both num_devices and
    // devices are NULL".
    if (source != v.source_device() && source != v.source_adapter())
        || (set != v.set_preferred() && set != v.set_all())
        || (num_entries == 0 && !devices.is_null())
        || (num_devices.is_null() && devices.is_null())
    {
        return Err(CL_INVALID_VALUE);
    }
    // The function's errors are only CL_INVALID_PLATFORM, CL_INVALID_VALUE (the conditions above)
    // and CL_DEVICE_NOT_FOUND "if no OpenCL devices that correspond to d3d_object were found": an
    // object that is not a D3D device (or DXGI adapter) has no corresponding devices.
    let adapter = if source == v.source_device() {
        // SAFETY: with this source the object is the application's ID3D1xDevice pointer.
        let device = unsafe { d3d::device::open(v, object) }.ok_or(CL_DEVICE_NOT_FOUND)?;
        device.adapter()
    } else {
        // SAFETY: with this source the object is the application's IDXGIAdapter pointer.
        Some(unsafe { d3d::adapter::identify_adapter(object) }.ok_or(CL_DEVICE_NOT_FOUND)?)
    };
    let (preferred, all) = device_sets(platform, adapter.as_ref())?;
    let found = if set == v.set_preferred() {
        preferred
    } else {
        all
    };
    // CL_DEVICE_NOT_FOUND "if no OpenCL devices that correspond to d3d_object were found".
    if found.is_empty() {
        return Err(CL_DEVICE_NOT_FOUND);
    }
    if !devices.is_null() {
        for (i, d) in found.iter().take(num_entries as usize).enumerate() {
            // SAFETY: devices holds num_entries entries (caller's contract); i < num_entries.
            unsafe { *devices.add(i) = *d as cl_device_id };
        }
    }
    if !num_devices.is_null() {
        // SAFETY: caller's contract.
        unsafe { *num_devices = found.len() as cl_uint };
    }
    Ok(())
}

//! The platform's `cl_khr_external_memory` and `cl_khr_external_semaphore` entry points, looked up
//! once per platform through the layer below, and the device queries the strategy needs.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::Mutex;

use opencl_sys::{
    cl_command_queue, cl_context, cl_device_id, cl_event, cl_int, cl_mem, cl_platform_id,
    cl_semaphore_khr, cl_semaphore_properties_khr, cl_uint,
    CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR, CL_DEVICE_PLATFORM,
    CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR, CL_DEVICE_UUID_KHR,
    CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR,
};

use crate::cl::info::{query_bytes, query_value};

pub(crate) type EnqueueMemFn = unsafe extern "C" fn(
    cl_command_queue,
    cl_uint,
    *const cl_mem,
    cl_uint,
    *const cl_event,
    *mut cl_event,
) -> cl_int;
type CreateSemaphoreFn = unsafe extern "C" fn(
    cl_context,
    *const cl_semaphore_properties_khr,
    *mut cl_int,
) -> cl_semaphore_khr;
type EnqueueSemaphoresFn = unsafe extern "C" fn(
    cl_command_queue,
    cl_uint,
    *const cl_semaphore_khr,
    *const u64,
    cl_uint,
    *const cl_event,
    *mut cl_event,
) -> cl_int;
type ReleaseSemaphoreFn = unsafe extern "C" fn(cl_semaphore_khr) -> cl_int;

/// `cl_khr_external_memory`: both functions exist or the platform cannot import.
#[derive(Clone, Copy)]
pub(crate) struct MemoryFns {
    pub acquire: EnqueueMemFn,
    pub release: EnqueueMemFn,
}

/// `cl_khr_semaphore` with `cl_khr_external_semaphore`.
#[derive(Clone, Copy)]
pub(crate) struct SemaphoreFns {
    pub create: CreateSemaphoreFn,
    pub wait: EnqueueSemaphoresFn,
    pub signal: EnqueueSemaphoresFn,
    pub release: ReleaseSemaphoreFn,
}

#[derive(Clone, Copy)]
pub(crate) struct PlatformFns {
    pub memory: Option<MemoryFns>,
    pub semaphores: Option<SemaphoreFns>,
}

static CACHE: Mutex<Option<HashMap<usize, PlatformFns>>> = Mutex::new(None);

fn lookup(platform: cl_platform_id, name: &str) -> *mut c_void {
    let Some(get) = crate::cl::target().and_then(|t| t.clGetExtensionFunctionAddressForPlatform)
    else {
        return std::ptr::null_mut();
    };
    let Ok(name) = CString::new(name) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a platform handle the layer below handed out; a NUL-terminated name.
    unsafe { get(platform, name.as_ptr()) }
}

/// Casts a looked-up address to its function type.
///
/// # Safety
/// `p` is null or the address of a function of type `F` (the extension specs fix the types).
unsafe fn as_fn<F: Copy>(p: *mut c_void) -> Option<F> {
    // SAFETY: function pointers and data pointers have the same size on every platform OpenCL
    // layers run on; the caller guarantees the type.
    (!p.is_null()).then(|| unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) })
}

/// The platform's entry points (cached; platforms live as long as the process).
pub(crate) fn platform_fns(platform: cl_platform_id) -> PlatformFns {
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    *cache
        .get_or_insert_with(HashMap::new)
        .entry(platform as usize)
        .or_insert_with(|| {
            let f = |name| lookup(platform, name);
            // SAFETY: each name is looked up with the type its extension specification gives.
            unsafe {
                let memory = match (
                    as_fn::<EnqueueMemFn>(f("clEnqueueAcquireExternalMemObjectsKHR")),
                    as_fn::<EnqueueMemFn>(f("clEnqueueReleaseExternalMemObjectsKHR")),
                ) {
                    (Some(acquire), Some(release)) => Some(MemoryFns { acquire, release }),
                    _ => None,
                };
                let semaphores = match (
                    as_fn::<CreateSemaphoreFn>(f("clCreateSemaphoreWithPropertiesKHR")),
                    as_fn::<EnqueueSemaphoresFn>(f("clEnqueueWaitSemaphoresKHR")),
                    as_fn::<EnqueueSemaphoresFn>(f("clEnqueueSignalSemaphoresKHR")),
                    as_fn::<ReleaseSemaphoreFn>(f("clReleaseSemaphoreKHR")),
                ) {
                    (Some(create), Some(wait), Some(signal), Some(release)) => Some(SemaphoreFns {
                        create,
                        wait,
                        signal,
                        release,
                    }),
                    _ => None,
                };
                PlatformFns { memory, semaphores }
            }
        })
}

fn device_query(device: cl_device_id, param: cl_uint) -> Result<Vec<u8>, cl_int> {
    let get = crate::cl::target()
        .and_then(|t| t.clGetDeviceInfo)
        .ok_or(opencl_sys::CL_INVALID_OPERATION)?;
    // SAFETY: the query helper passes a buffer of the size it names.
    query_bytes(|n, p, r| unsafe { get(device, param, n, p, r) })
}

fn handle_types(device: cl_device_id, param: cl_uint) -> Vec<cl_uint> {
    device_query(device, param)
        .map(|b| {
            b.chunks_exact(4)
                .map(|c| cl_uint::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
        .unwrap_or_default()
}

/// What one device offers the strategy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DeviceCaps {
    pub platform: usize,
    pub uuid: Option<[u8; 16]>,
    /// `CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR` lists `CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR`.
    pub imports_memory_fd: bool,
    /// `CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR` lists `CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR`.
    pub imports_semaphore_fd: bool,
}

pub(crate) fn device_caps(device: cl_device_id) -> DeviceCaps {
    let get = crate::cl::target().and_then(|t| t.clGetDeviceInfo);
    let platform: usize = get
        // SAFETY: query_value passes a buffer of the size it names.
        .and_then(|g| query_value(|n, p, r| unsafe { g(device, CL_DEVICE_PLATFORM, n, p, r) }).ok())
        .unwrap_or(0);
    let uuid = device_query(device, CL_DEVICE_UUID_KHR)
        .ok()
        .and_then(|b| <[u8; 16]>::try_from(b.as_slice()).ok());
    DeviceCaps {
        platform,
        uuid,
        imports_memory_fd: handle_types(device, CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR)
            .contains(&CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR),
        imports_semaphore_fd: handle_types(device, CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR)
            .contains(&CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR),
    }
}

/// The acquire/release entry points of the platform `queue` belongs to.
pub(crate) fn queue_memory_fns(queue: opencl_sys::cl_command_queue) -> Result<MemoryFns, cl_int> {
    let get = crate::cl::target()
        .and_then(|t| t.clGetCommandQueueInfo)
        .ok_or(opencl_sys::CL_INVALID_OPERATION)?;
    let device: usize = crate::trace::time(crate::trace::Step::ClQueueInfo, || {
        // SAFETY: query_value passes a buffer of the size it names; the platform validates the
        // queue.
        query_value(|n, p, r| unsafe { get(queue, opencl_sys::CL_QUEUE_DEVICE, n, p, r) })
    })?;
    let device_info = crate::cl::target()
        .and_then(|t| t.clGetDeviceInfo)
        .ok_or(opencl_sys::CL_INVALID_OPERATION)?;
    // Only the platform: the whole of device_caps costs seven queries.
    let platform: usize = crate::trace::time(crate::trace::Step::ClDeviceInfo, || {
        // SAFETY: as above.
        query_value(|n, p, r| unsafe {
            device_info(device as cl_device_id, CL_DEVICE_PLATFORM, n, p, r)
        })
    })?;
    platform_fns(platform as cl_platform_id)
        .memory
        .ok_or(opencl_sys::CL_INVALID_OPERATION)
}

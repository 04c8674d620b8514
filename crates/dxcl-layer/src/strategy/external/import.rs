//! What a context can import, and the one-time import of a resource's exportable memory.

use std::ffi::c_void;

use dxcl_abi::interop::IDxclInteropResource;
use dxcl_abi::SUCCEEDED;
use opencl_sys::{
    cl_context, cl_device_id, cl_image_desc, cl_image_format, cl_int, cl_mem, cl_mem_flags,
    cl_mem_properties, CL_CONTEXT_DEVICES, CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR,
    CL_INVALID_OPERATION,
};

use super::cl::{device_caps, platform_fns, MemoryFns, SemaphoreFns};
use crate::cl::info::query_bytes;
use crate::d3d::com::ComPtr;
use crate::d3d::interop::Interop;
use crate::strategy::FdMemory;

/// How the resource's memory is laid out when it is an exportable fd.
pub(crate) fn fd_memory(resource: &Interop) -> Option<FdMemory> {
    resource.fd_image().map(|image| match image {
        true => FdMemory::Image,
        false => FdMemory::Linear,
    })
}

/// What a context can do with exportable memory from one adapter.
#[derive(Clone, Copy)]
pub(crate) struct ContextSupport {
    /// Every device imports opaque fds, has the adapter's UUID, and the platform has the
    /// acquire/release entry points.
    pub memory: Option<MemoryFns>,
    /// Additionally every device imports opaque-fd semaphores and the platform has them.
    pub semaphores: Option<SemaphoreFns>,
}

pub(crate) fn context_devices(context: cl_context) -> Vec<cl_device_id> {
    let Some(get) = crate::cl::target().and_then(|t| t.clGetContextInfo) else {
        return Vec::new();
    };
    // SAFETY: the query helper passes a buffer of the size it names.
    let bytes = query_bytes(|n, p, r| unsafe { get(context, CL_CONTEXT_DEVICES, n, p, r) })
        .unwrap_or_default();
    bytes
        .chunks_exact(std::mem::size_of::<usize>())
        .map(|c| usize::from_ne_bytes(c.try_into().unwrap_or_default()) as cl_device_id)
        .collect()
}

pub(crate) fn context_support(context: cl_context, uuid: Option<[u8; 16]>) -> ContextSupport {
    let none = ContextSupport {
        memory: None,
        semaphores: None,
    };
    let Some(uuid) = uuid else { return none };
    let devices = context_devices(context);
    let caps: Vec<_> = devices.iter().map(|&d| device_caps(d)).collect();
    let Some(first) = caps.first() else {
        return none;
    };
    if !caps
        .iter()
        .all(|c| c.imports_memory_fd && c.uuid == Some(uuid) && c.platform == first.platform)
    {
        return none;
    }
    let fns = platform_fns(first.platform as opencl_sys::cl_platform_id);
    let Some(memory) = fns.memory else {
        return none;
    };
    ContextSupport {
        memory: Some(memory),
        semaphores: fns
            .semaphores
            .filter(|_| caps.iter().all(|c| c.imports_semaphore_fd)),
    }
}

/// A new fd of the resource's memory, owned by the caller.
fn export_fd(resource: &ComPtr<IDxclInteropResource>) -> Result<i32, cl_int> {
    let mut fd = -1;
    let p = resource.as_ptr();
    // SAFETY: a live IDxclInteropResource; `fd` is a valid out int.
    let hr = unsafe { ((*(*p).lpVtbl).ExportMemoryFd)(p, &mut fd) };
    if SUCCEEDED(hr) && fd >= 0 {
        Ok(fd)
    } else {
        Err(CL_INVALID_OPERATION)
    }
}

/// Imports the resource's memory: a buffer of `size` bytes (`image` None) or an image of that
/// format and description. The platform takes ownership of the fd on success; on failure it is
/// closed here.
pub(crate) fn import(
    context: cl_context,
    flags: cl_mem_flags,
    resource: &ComPtr<IDxclInteropResource>,
    size: usize,
    image: Option<(&cl_image_format, &cl_image_desc)>,
) -> Result<cl_mem, cl_int> {
    let fd = export_fd(resource)?;
    // cl_khr_external_memory: {handle type, handle, 0}; no device list (every context device
    // imports it; NVIDIA refuses a list on semaphores, docs/gpu.md).
    let props: [cl_mem_properties; 3] = [
        CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR as cl_mem_properties,
        fd as cl_mem_properties,
        0,
    ];
    let mut err = 0;
    let mem = match image {
        None => match crate::cl::target().and_then(|t| t.clCreateBufferWithProperties) {
            // SAFETY: a valid context and a 0-terminated property list; no host pointer.
            Some(create) => unsafe {
                create(
                    context,
                    props.as_ptr(),
                    flags,
                    size,
                    std::ptr::null_mut::<c_void>(),
                    &mut err,
                )
            },
            None => {
                err = CL_INVALID_OPERATION;
                std::ptr::null_mut()
            }
        },
        Some((format, desc)) => {
            match crate::cl::target().and_then(|t| t.clCreateImageWithProperties) {
                // SAFETY: as above, with a valid format and description.
                Some(create) => unsafe {
                    create(
                        context,
                        props.as_ptr(),
                        flags,
                        format,
                        desc,
                        std::ptr::null_mut(),
                        &mut err,
                    )
                },
                None => {
                    err = CL_INVALID_OPERATION;
                    std::ptr::null_mut()
                }
            }
        }
    };
    if err != 0 || mem.is_null() {
        // SAFETY: the fd is ours: the failed import did not take it.
        unsafe { libc::close(fd) };
        return Err(if err != 0 { err } else { CL_INVALID_OPERATION });
    }
    Ok(mem)
}

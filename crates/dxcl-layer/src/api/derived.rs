//! Memory objects that other OpenCL calls derive from a D3D-shared object. They alias the D3D
//! memory, so the enqueue guards treat them as the D3D object itself: using one while its D3D
//! object is not acquired gives that object's `CL_D3D1x_RESOURCE_NOT_ACQUIRED_*`.
//!
//! - an image whose `image_desc->mem_object` (`buffer`) is a D3D object or derived from one
//!   (`clCreateImage`, `clCreateImageWithProperties`: 1D image buffers, 2D images from a buffer,
//!   images from an image);
//! - a buffer or image created with `CL_MEM_USE_HOST_PTR` at a pointer inside a D3D object's
//!   host memory (`CL_MEM_HOST_PTR`, the host-pointer strategy), through `clCreateBuffer`,
//!   `clCreateBufferWithProperties`, `clCreateImage`, `clCreateImage2D`, `clCreateImage3D` or
//!   `clCreateImageWithProperties`;
//! - a sub-buffer of any of these (sub-buffers of D3D buffers themselves: `memory.rs`).
//!
//! The registry maps each to its D3D object; the entry goes with the derived object's destructor
//! callback, or with the D3D object's.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

use opencl_sys::{
    cl_buffer_create_type, cl_context, cl_image_desc, cl_image_format, cl_int, cl_mem,
    cl_mem_flags, cl_mem_properties, CL_MEM_HOST_PTR, CL_MEM_SIZE, CL_MEM_USE_HOST_PTR,
};

use super::{check, down, object};
use crate::cl::info::query_value;
use crate::registry::{self, key};

/// Where a new memory object's memory comes from, as far as aliasing goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Source {
    /// `image_desc->mem_object`.
    parent: Option<usize>,
    /// `host_ptr` under `CL_MEM_USE_HOST_PTR`.
    host_ptr: Option<usize>,
}

impl Source {
    fn new(flags: cl_mem_flags, host_ptr: *mut c_void, desc: *const cl_image_desc) -> Source {
        let parent = if desc.is_null() {
            None
        } else {
            // SAFETY: a non-null image_desc points to a cl_image_desc (the call's contract; the
            // platform has just accepted it, as this runs after a successful create).
            let m = unsafe { (*desc).buffer };
            (!m.is_null()).then_some(key(m))
        };
        let host_ptr =
            (flags & CL_MEM_USE_HOST_PTR != 0 && !host_ptr.is_null()).then_some(host_ptr as usize);
        Source { parent, host_ptr }
    }
}

/// Whether `ptr` lies in the host range `[start, start + size)`.
fn inside(ptr: usize, start: usize, size: usize) -> bool {
    start != 0 && ptr >= start && ptr - start < size
}

/// The D3D object whose host memory holds `ptr`, if any. Queries the platform: never call with
/// the registry locked.
fn host_alias(ptr: usize) -> Option<usize> {
    let info = crate::cl::target()?.clGetMemObjectInfo?;
    let roots: Vec<usize> = registry::with(|r| r.mems.keys().copied().collect());
    roots.into_iter().find(|&root| {
        let mem = root as cl_mem;
        // SAFETY: a live D3D memory object (entries go with their destructor callback); our own
        // out buffers of the queried types' sizes.
        let start: usize =
            query_value(|n, p, r| unsafe { info(mem, CL_MEM_HOST_PTR, n, p, r) }).unwrap_or(0);
        // SAFETY: as above.
        let size: usize =
            query_value(|n, p, r| unsafe { info(mem, CL_MEM_SIZE, n, p, r) }).unwrap_or(0);
        inside(ptr, start, size)
    })
}

/// Records `mem` as derived when its source aliases a D3D object, and drops the record with it.
fn track(mem: cl_mem, source: Source) {
    if mem.is_null() || registry::with(|r| r.mems.is_empty()) {
        return;
    }
    let root = source
        .parent
        .and_then(|p| registry::with(|r| r.root_key(p)))
        .or_else(|| source.host_ptr.and_then(host_alias));
    let Some(root) = root else { return };
    if registry::with(|r| r.record_derived(key(mem), root)) {
        watch(mem);
    }
}

/// Drops `mem`'s registry entries when it dies.
fn watch(mem: cl_mem) {
    super::watch_destruction(mem, derived_destroyed);
}

unsafe extern "C" fn derived_destroyed(mem: cl_mem, user_data: *mut c_void) {
    let watch = registry::Removal::Watch(user_data as usize);
    crate::core::exit::in_callback(|| {
        registry::drop_mem(key(mem), watch);
    });
}

/// Runs a create call below, then tracks what it made.
///
/// # Safety
/// `errcode_ret` is null or points to a writable `cl_int`.
unsafe fn create(
    errcode_ret: *mut cl_int,
    source: impl FnOnce() -> Source,
    below: impl FnOnce(*mut cl_int) -> Result<cl_mem, cl_int>,
) -> cl_mem {
    // SAFETY: caller's contract.
    unsafe {
        object(errcode_ret, || {
            let mut err = 0;
            let mem = below(&mut err)?;
            check(err)?;
            track(mem, source());
            Ok(mem)
        })
    }
}

pub(crate) unsafe extern "C" fn create_buffer(
    context: cl_context,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: errcode_ret is the caller's; the arguments go down unchanged.
    unsafe {
        create(
            errcode_ret,
            || Source::new(flags, host_ptr, std::ptr::null()),
            |err| Ok(down!(clCreateBuffer)(context, flags, size, host_ptr, err)),
        )
    }
}

pub(crate) unsafe extern "C" fn create_buffer_with_properties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: errcode_ret is the caller's; the arguments go down unchanged.
    unsafe {
        create(
            errcode_ret,
            || Source::new(flags, host_ptr, std::ptr::null()),
            |err| {
                Ok(down!(clCreateBufferWithProperties)(
                    context, properties, flags, size, host_ptr, err,
                ))
            },
        )
    }
}

pub(crate) unsafe extern "C" fn create_image(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: errcode_ret is the caller's; the arguments go down unchanged; `desc` is read only
    // after the platform accepted it.
    unsafe {
        create(
            errcode_ret,
            || Source::new(flags, host_ptr, desc),
            |err| {
                Ok(down!(clCreateImage)(
                    context, flags, format, desc, host_ptr, err,
                ))
            },
        )
    }
}

pub(crate) unsafe extern "C" fn create_image_with_properties(
    context: cl_context,
    properties: *const cl_mem_properties,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    desc: *const cl_image_desc,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: as for create_image.
    unsafe {
        create(
            errcode_ret,
            || Source::new(flags, host_ptr, desc),
            |err| {
                Ok(down!(clCreateImageWithProperties)(
                    context, properties, flags, format, desc, host_ptr, err,
                ))
            },
        )
    }
}

pub(crate) unsafe extern "C" fn create_image_2d(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    width: usize,
    height: usize,
    row_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: errcode_ret is the caller's; the arguments go down unchanged.
    unsafe {
        create(
            errcode_ret,
            || Source::new(flags, host_ptr, std::ptr::null()),
            |err| {
                Ok(down!(clCreateImage2D)(
                    context, flags, format, width, height, row_pitch, host_ptr, err,
                ))
            },
        )
    }
}

#[allow(clippy::too_many_arguments)] // The C signature.
pub(crate) unsafe extern "C" fn create_image_3d(
    context: cl_context,
    flags: cl_mem_flags,
    format: *const cl_image_format,
    width: usize,
    height: usize,
    depth: usize,
    row_pitch: usize,
    slice_pitch: usize,
    host_ptr: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    // SAFETY: errcode_ret is the caller's; the arguments go down unchanged.
    unsafe {
        create(
            errcode_ret,
            || Source::new(flags, host_ptr, std::ptr::null()),
            |err| {
                Ok(down!(clCreateImage3D)(
                    context,
                    flags,
                    format,
                    width,
                    height,
                    depth,
                    row_pitch,
                    slice_pitch,
                    host_ptr,
                    err,
                ))
            },
        )
    }
}

/// Sub-buffers of D3D buffers are recorded by `memory::create_sub_buffer`; this adds sub-buffers
/// of derived buffers.
pub(crate) unsafe extern "C" fn create_sub_buffer(
    buffer: cl_mem,
    flags: cl_mem_flags,
    create_type: cl_buffer_create_type,
    create_info: *const c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let mut err = 0;
    // SAFETY: the caller's arguments, with our own errcode_ret.
    let sub = unsafe {
        super::memory::create_sub_buffer(buffer, flags, create_type, create_info, &mut err)
    };
    if err == 0 && !sub.is_null() {
        let _ = catch_unwind(AssertUnwindSafe(|| {
            let derived_parent = registry::with(|r| {
                !r.mems.contains_key(&key(buffer)) && r.record_derived(key(sub), key(buffer))
            });
            if derived_parent {
                watch(sub);
            }
        }));
    }
    if !errcode_ret.is_null() {
        // SAFETY: the caller's writable errcode_ret.
        unsafe { *errcode_ret = err };
    }
    sub
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_ranges() {
        assert!(inside(0x1000, 0x1000, 16));
        assert!(inside(0x100f, 0x1000, 16));
        assert!(!inside(0x1010, 0x1000, 16));
        assert!(!inside(0x0fff, 0x1000, 16));
        // CL_MEM_HOST_PTR is NULL for objects without host memory.
        assert!(!inside(0x10, 0, usize::MAX));
    }

    #[test]
    fn sources() {
        let p = 0x1000 as *mut c_void;
        assert_eq!(
            Source::new(CL_MEM_USE_HOST_PTR, p, std::ptr::null()),
            Source {
                parent: None,
                host_ptr: Some(0x1000)
            }
        );
        // COPY_HOST_PTR copies: nothing aliases.
        assert_eq!(
            Source::new(opencl_sys::CL_MEM_COPY_HOST_PTR, p, std::ptr::null()),
            Source::default()
        );
        // SAFETY: all-zero is a valid cl_image_desc (integers and a null handle).
        let mut desc: cl_image_desc = unsafe { std::mem::zeroed() };
        assert_eq!(
            Source::new(0, std::ptr::null_mut(), &desc),
            Source::default()
        );
        desc.buffer = 0x2000 as cl_mem;
        assert_eq!(
            Source::new(0, std::ptr::null_mut(), &desc),
            Source {
                parent: Some(0x2000),
                host_ptr: None
            }
        );
    }
}

//! Enqueue guards: any enqueue that uses a D3D memory object (or a sub-buffer of one) that is not
//! acquired returns `CL_D3D1x_RESOURCE_NOT_ACQUIRED_*` and enqueues nothing. Kernel launches check
//! the memory objects set as kernel arguments (tracked from `clSetKernelArg`). Also: the event
//! side table (`CL_EVENT_COMMAND_TYPE` of acquire/release markers).

use std::ffi::c_void;
use std::mem::size_of;

use std::ffi::c_char;

use opencl_sys::{
    cl_bool, cl_command_queue, cl_event, cl_event_info, cl_int, cl_kernel, cl_map_flags, cl_mem,
    cl_mem_migration_flags, cl_program, cl_uint, CL_EVENT_COMMAND_TYPE, CL_KERNEL_REFERENCE_COUNT,
};

use super::{check, down, object, slice, status};
use crate::cl::info::{query_value, write_value};
use crate::registry::{self, key};

/// Fails when any of `mems` is a D3D object that is not acquired.
fn guard(mems: &[cl_mem]) -> Result<(), cl_int> {
    registry::with(|r| mems.iter().try_for_each(|m| r.check_acquired(key(*m))))
}

/// As [`guard`], for the memory objects set as arguments of `kernel`.
fn guard_kernel(kernel: cl_kernel) -> Result<(), cl_int> {
    registry::with(|r| match r.kernel_args.get(&key(kernel)) {
        Some(args) => args.values().try_for_each(|m| r.check_acquired(*m)),
        None => Ok(()),
    })
}

// --- memory commands -------------------------------------------------------------------------

macro_rules! guarded_enqueue {
    ($name:ident, $slot:ident, [$($mem:ident),+], ($($arg:ident: $ty:ty),* $(,)?)) => {
        pub(crate) unsafe extern "C" fn $name($($arg: $ty),*) -> cl_int {
            status(|| {
                let below = down!($slot);
                guard(&[$($mem),+])?;
                // SAFETY: the caller's arguments, forwarded unchanged to the same function below.
                check(unsafe { below($($arg),*) })
            })
        }
    };
}

type Ev = *const cl_event;
type EvOut = *mut cl_event;
type Sz = *const usize;

guarded_enqueue!(read_buffer, clEnqueueReadBuffer, [buffer], (queue: cl_command_queue, buffer: cl_mem, blocking: cl_bool, offset: usize, size: usize, ptr: *mut c_void, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(write_buffer, clEnqueueWriteBuffer, [buffer], (queue: cl_command_queue, buffer: cl_mem, blocking: cl_bool, offset: usize, size: usize, ptr: *const c_void, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(read_buffer_rect, clEnqueueReadBufferRect, [buffer], (queue: cl_command_queue, buffer: cl_mem, blocking: cl_bool, buffer_origin: Sz, host_origin: Sz, region: Sz, brp: usize, bsp: usize, hrp: usize, hsp: usize, ptr: *mut c_void, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(write_buffer_rect, clEnqueueWriteBufferRect, [buffer], (queue: cl_command_queue, buffer: cl_mem, blocking: cl_bool, buffer_origin: Sz, host_origin: Sz, region: Sz, brp: usize, bsp: usize, hrp: usize, hsp: usize, ptr: *const c_void, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(copy_buffer, clEnqueueCopyBuffer, [src, dst], (queue: cl_command_queue, src: cl_mem, dst: cl_mem, src_offset: usize, dst_offset: usize, size: usize, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(copy_buffer_rect, clEnqueueCopyBufferRect, [src, dst], (queue: cl_command_queue, src: cl_mem, dst: cl_mem, src_origin: Sz, dst_origin: Sz, region: Sz, srp: usize, ssp: usize, drp: usize, dsp: usize, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(fill_buffer, clEnqueueFillBuffer, [buffer], (queue: cl_command_queue, buffer: cl_mem, pattern: *const c_void, pattern_size: usize, offset: usize, size: usize, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(read_image, clEnqueueReadImage, [image], (queue: cl_command_queue, image: cl_mem, blocking: cl_bool, origin: Sz, region: Sz, row_pitch: usize, slice_pitch: usize, ptr: *mut c_void, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(write_image, clEnqueueWriteImage, [image], (queue: cl_command_queue, image: cl_mem, blocking: cl_bool, origin: Sz, region: Sz, row_pitch: usize, slice_pitch: usize, ptr: *const c_void, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(copy_image, clEnqueueCopyImage, [src, dst], (queue: cl_command_queue, src: cl_mem, dst: cl_mem, src_origin: Sz, dst_origin: Sz, region: Sz, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(copy_image_to_buffer, clEnqueueCopyImageToBuffer, [src, dst], (queue: cl_command_queue, src: cl_mem, dst: cl_mem, src_origin: Sz, region: Sz, dst_offset: usize, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(copy_buffer_to_image, clEnqueueCopyBufferToImage, [src, dst], (queue: cl_command_queue, src: cl_mem, dst: cl_mem, src_offset: usize, dst_origin: Sz, region: Sz, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(fill_image, clEnqueueFillImage, [image], (queue: cl_command_queue, image: cl_mem, color: *const c_void, origin: Sz, region: Sz, n: cl_uint, wl: Ev, ev: EvOut));
guarded_enqueue!(unmap_mem_object, clEnqueueUnmapMemObject, [mem], (queue: cl_command_queue, mem: cl_mem, mapped: *mut c_void, n: cl_uint, wl: Ev, ev: EvOut));

pub(crate) unsafe extern "C" fn map_buffer(
    queue: cl_command_queue,
    buffer: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    offset: usize,
    size: usize,
    n: cl_uint,
    wl: Ev,
    ev: EvOut,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: errcode_ret is the caller's; the arguments go down unchanged.
    unsafe {
        object(errcode_ret, || {
            let below = down!(clEnqueueMapBuffer);
            guard(&[buffer])?;
            let mut err = 0;
            let p = below(
                queue, buffer, blocking, flags, offset, size, n, wl, ev, &mut err,
            );
            check(err).map(|()| p)
        })
    }
}

pub(crate) unsafe extern "C" fn map_image(
    queue: cl_command_queue,
    image: cl_mem,
    blocking: cl_bool,
    flags: cl_map_flags,
    origin: Sz,
    region: Sz,
    row_pitch: *mut usize,
    slice_pitch: *mut usize,
    n: cl_uint,
    wl: Ev,
    ev: EvOut,
    errcode_ret: *mut cl_int,
) -> *mut c_void {
    // SAFETY: errcode_ret is the caller's; the arguments go down unchanged.
    unsafe {
        object(errcode_ret, || {
            let below = down!(clEnqueueMapImage);
            guard(&[image])?;
            let mut err = 0;
            let p = below(
                queue,
                image,
                blocking,
                flags,
                origin,
                region,
                row_pitch,
                slice_pitch,
                n,
                wl,
                ev,
                &mut err,
            );
            check(err).map(|()| p)
        })
    }
}

pub(crate) unsafe extern "C" fn migrate_mem_objects(
    queue: cl_command_queue,
    num: cl_uint,
    mems: *const cl_mem,
    flags: cl_mem_migration_flags,
    n: cl_uint,
    wl: Ev,
    ev: EvOut,
) -> cl_int {
    status(|| {
        let below = down!(clEnqueueMigrateMemObjects);
        // SAFETY: caller's contract: mems holds num handles (or is null; the platform reports it).
        guard(unsafe { slice(mems, num) })?;
        // SAFETY: arguments forwarded unchanged.
        check(unsafe { below(queue, num, mems, flags, n, wl, ev) })
    })
}

#[allow(clippy::type_complexity)] // The C signature, spelled as the dispatch table spells it.
pub(crate) unsafe extern "C" fn native_kernel(
    queue: cl_command_queue,
    user_func: Option<unsafe extern "C" fn(*mut c_void)>,
    args: *mut c_void,
    cb_args: usize,
    num_mems: cl_uint,
    mem_list: *const cl_mem,
    args_mem_loc: *mut *const c_void,
    n: cl_uint,
    wl: Ev,
    ev: EvOut,
) -> cl_int {
    status(|| {
        let below = down!(clEnqueueNativeKernel);
        // SAFETY: caller's contract: mem_list holds num_mems handles.
        guard(unsafe { slice(mem_list, num_mems) })?;
        // SAFETY: arguments forwarded unchanged.
        check(unsafe {
            below(
                queue,
                user_func,
                args,
                cb_args,
                num_mems,
                mem_list,
                args_mem_loc,
                n,
                wl,
                ev,
            )
        })
    })
}

// --- kernels ---------------------------------------------------------------------------------

pub(crate) unsafe extern "C" fn nd_range_kernel(
    queue: cl_command_queue,
    kernel: cl_kernel,
    dim: cl_uint,
    offset: Sz,
    global: Sz,
    local: Sz,
    n: cl_uint,
    wl: Ev,
    ev: EvOut,
) -> cl_int {
    status(|| {
        let below = down!(clEnqueueNDRangeKernel);
        guard_kernel(kernel)?;
        // SAFETY: arguments forwarded unchanged.
        check(unsafe { below(queue, kernel, dim, offset, global, local, n, wl, ev) })
    })
}

pub(crate) unsafe extern "C" fn task(
    queue: cl_command_queue,
    kernel: cl_kernel,
    n: cl_uint,
    wl: Ev,
    ev: EvOut,
) -> cl_int {
    status(|| {
        let below = down!(clEnqueueTask);
        guard_kernel(kernel)?;
        // SAFETY: arguments forwarded unchanged.
        check(unsafe { below(queue, kernel, n, wl, ev) })
    })
}

/// Records which D3D memory objects are set as kernel arguments.
pub(crate) unsafe extern "C" fn set_kernel_arg(
    kernel: cl_kernel,
    index: cl_uint,
    size: usize,
    value: *const c_void,
) -> cl_int {
    status(|| {
        let below = down!(clSetKernelArg);
        // SAFETY: arguments forwarded unchanged.
        check(unsafe { below(kernel, index, size, value) })?;
        let mem = if size == size_of::<cl_mem>() && !value.is_null() {
            // SAFETY: a memory-object argument points to a cl_mem; for any other argument of
            // pointer size we read plain bytes that are only used as a lookup key.
            Some(unsafe { value.cast::<usize>().read_unaligned() })
        } else {
            None
        };
        registry::with(|r| {
            let is_d3d = mem.is_some_and(|m| r.d3d_root(m).is_some());
            let args = r.kernel_args.entry(key(kernel)).or_default();
            match mem {
                Some(m) if is_d3d => {
                    args.insert(index, m);
                }
                _ => {
                    args.remove(&index);
                }
            }
        });
        Ok(())
    })
}

/// A clone has the source's arguments.
pub(crate) unsafe extern "C" fn clone_kernel(
    source: cl_kernel,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    // SAFETY: errcode_ret is the caller's.
    unsafe {
        object(errcode_ret, || {
            let below = down!(clCloneKernel);
            let mut err = 0;
            let k = below(source, &mut err);
            check(err)?;
            registry::with(|r| match r.kernel_args.get(&key(source)).cloned() {
                Some(args) => r.kernel_args.insert(key(k), args),
                // A reused handle inherits nothing (see `create_kernel`).
                None => r.kernel_args.remove(&key(k)),
            });
            Ok(k)
        })
    }
}

/// A new kernel starts with no arguments. Its handle may be that of a kernel the platform freed
/// after the application's last release (a launch was still in flight then, so the release
/// could not tell it was the last): that kernel's table goes now, or the new kernel would be
/// refused for a D3D object it never used.
fn forget_kernels(kernels: &[cl_kernel]) {
    registry::with(|r| {
        for k in kernels {
            r.kernel_args.remove(&key(*k));
        }
    });
}

pub(crate) unsafe extern "C" fn create_kernel(
    program: cl_program,
    name: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    // SAFETY: errcode_ret is the caller's; the arguments go down unchanged.
    unsafe {
        object(errcode_ret, || {
            let below = down!(clCreateKernel);
            let mut err = 0;
            let k = below(program, name, &mut err);
            check(err)?;
            forget_kernels(&[k]);
            Ok(k)
        })
    }
}

pub(crate) unsafe extern "C" fn create_kernels_in_program(
    program: cl_program,
    num_kernels: cl_uint,
    kernels: *mut cl_kernel,
    num_kernels_ret: *mut cl_uint,
) -> cl_int {
    status(|| {
        let below = down!(clCreateKernelsInProgram);
        let mut made: cl_uint = 0;
        // SAFETY: the caller's arguments, with our own count out pointer.
        check(unsafe { below(program, num_kernels, kernels, &mut made) })?;
        if !num_kernels_ret.is_null() {
            // SAFETY: the caller's out pointer, checked non-null.
            unsafe { *num_kernels_ret = made };
        }
        if !kernels.is_null() {
            // SAFETY: on success the platform wrote `made` (at most num_kernels) kernels there.
            forget_kernels(unsafe { slice(kernels, made.min(num_kernels)) });
        }
        Ok(())
    })
}

/// Drops the kernel's argument table when its last reference goes.
pub(crate) unsafe extern "C" fn release_kernel(kernel: cl_kernel) -> cl_int {
    status(|| {
        let below = down!(clReleaseKernel);
        let info = down!(clGetKernelInfo);
        // SAFETY: our own buffer; an invalid kernel just fails the query.
        let count: cl_uint =
            query_value(|n, p, r| unsafe { info(kernel, CL_KERNEL_REFERENCE_COUNT, n, p, r) })
                .unwrap_or(0);
        // SAFETY: argument forwarded unchanged.
        check(unsafe { below(kernel) })?;
        if count == 1 {
            registry::with(|r| r.kernel_args.remove(&key(kernel)));
        }
        Ok(())
    })
}

// --- events ----------------------------------------------------------------------------------

/// Answers CL_EVENT_COMMAND_TYPE for acquire/release markers.
pub(crate) unsafe extern "C" fn get_event_info(
    event: cl_event,
    param_name: cl_event_info,
    param_value_size: usize,
    param_value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    status(|| {
        let below = down!(clGetEventInfo);
        let command = if param_name == CL_EVENT_COMMAND_TYPE {
            crate::cl::events::command_of(event)
        } else {
            None
        };
        match command {
            // "CL_EVENT_COMMAND_TYPE ... CL_COMMAND_ACQUIRE/RELEASE_D3D1x_OBJECTS".
            // SAFETY: caller's buffers per clGetEventInfo.
            Some(c) => unsafe { write_value(c, param_value_size, param_value, size_ret) },
            None => {
                // SAFETY: arguments forwarded unchanged.
                check(unsafe { below(event, param_name, param_value_size, param_value, size_ret) })
            }
        }
    })
}

pub(crate) unsafe extern "C" fn release_event(event: cl_event) -> cl_int {
    status(|| crate::cl::events::release_checked(event))
}

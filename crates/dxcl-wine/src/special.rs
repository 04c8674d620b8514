//! The entry points whose unix side is not a plain call (`gen::SPECIAL`): those that take
//! callbacks into the program (callbacks.rs runs them on a Windows thread) and those that report
//! extensions (extensions.rs keeps the ones a Windows program can use).

use std::ffi::c_void;

use dxcl_abi::sharing::D3dVersion;

use crate::callbacks::{self, Target};
use crate::extensions;
use crate::gen::{index, sig, MAX_ARGS};
use crate::host::Host;

const CL_SUCCESS: i32 = 0;
const CL_BUILD_PROGRAM_FAILURE: i32 = -11;
const CL_COMPILE_PROGRAM_FAILURE: i32 = -15;
const CL_LINK_PROGRAM_FAILURE: i32 = -17;
const CL_INVALID_VALUE: i32 = -30;
const CL_INVALID_OPERATION: i32 = -59;

/// Context properties that name a Direct3D device (KHR and NV share the values).
const CL_CONTEXT_D3D10_DEVICE: isize = D3dVersion::D3D10.context_property();
const CL_CONTEXT_D3D11_DEVICE: isize = D3dVersion::D3D11.context_property();
const CL_CONTEXT_PROPERTIES: u32 = 0x1082;
const CL_MEM_D3D10_RESOURCE: u32 = D3dVersion::D3D10.mem_resource_query();
const CL_MEM_D3D11_RESOURCE: u32 = D3dVersion::D3D11.mem_resource_query();

fn ptr(v: u64) -> *mut c_void {
    v as usize as *mut c_void
}

/// Wraps the program's callback at `a[f]` with `user_data` at `a[u]`: the host gets `trampoline`
/// and a `Target`. Returns the `Target` (null when the program passed no callback).
fn wrap(a: &mut [u64; MAX_ARGS], f: usize, u: usize, trampoline: usize) -> *mut c_void {
    if a[f] == 0 {
        return std::ptr::null_mut();
    }
    let t = callbacks::into_user_data(Target {
        function: a[f],
        user_data: a[u],
    });
    a[f] = trampoline as u64;
    a[u] = t as u64;
    t
}

/// Frees `target` unless `code` says the host will call back.
fn settle(target: *mut c_void, code: i32, calls_back: &[i32]) {
    if !target.is_null() && !calls_back.contains(&code) {
        // SAFETY: a Target from `wrap` that the host did not take (its call failed).
        unsafe { callbacks::forget(target) };
    }
}

/// Context properties that name a Direct3D device (KHR and NV share the values).
fn is_d3d_device_property(name: isize) -> bool {
    name == CL_CONTEXT_D3D10_DEVICE || name == CL_CONTEXT_D3D11_DEVICE
}

/// A copy of a context's property list with each Direct3D device replaced by a stand-in
/// (remote.rs), and those stand-ins; `None` when the list names no Direct3D device.
///
/// # Safety
/// `props` is null or a zero-terminated property list (the program's contract).
unsafe fn d3d_properties(props: *const isize) -> Option<(Vec<isize>, Vec<*mut c_void>)> {
    if props.is_null() {
        return None;
    }
    let mut list = Vec::new();
    let mut p = props;
    // SAFETY: a zero-terminated list of (name, value) pairs.
    while unsafe { *p } != 0 {
        // SAFETY: as above: each name is followed by its value.
        list.extend_from_slice(unsafe { std::slice::from_raw_parts(p, 2) });
        // SAFETY: as above.
        p = unsafe { p.add(2) };
    }
    list.push(0);
    let mut stand_ins = Vec::new();
    for pair in list.chunks_exact_mut(2) {
        if is_d3d_device_property(pair[0]) && pair[1] != 0 {
            let iid = if pair[0] == CL_CONTEXT_D3D10_DEVICE {
                &dxcl_abi::IID_ID3D10Device
            } else {
                &dxcl_abi::IID_ID3D11Device
            };
            let s = crate::remote::borrow_as(pair[1] as u64, iid);
            stand_ins.push(s);
            pair[1] = s as isize;
        }
    }
    (!stand_ins.is_empty()).then_some((list, stand_ins))
}

/// Puts the program's own Direct3D pointers back where the layer answers with a stand-in: a
/// context's property list, a memory object's `CL_MEM_D3D1x_RESOURCE`.
///
/// # Safety
/// `value` is null or holds `size` bytes the host just wrote.
unsafe fn windows_pointers(i: u32, param: u32, value: u64, size: usize) {
    if value == 0 {
        return;
    }
    let words = size / 8;
    // SAFETY: the caller's contract: `size` bytes at `value`, 8-byte aligned (pointer-sized data).
    let slice = unsafe { std::slice::from_raw_parts_mut(value as usize as *mut u64, words) };
    match (i, param) {
        (index::clGetContextInfo, CL_CONTEXT_PROPERTIES) => {
            for pair in slice.chunks_exact_mut(2) {
                if is_d3d_device_property(pair[0] as isize) {
                    pair[1] = crate::remote::windows_of(pair[1]);
                }
            }
        }
        (index::clGetMemObjectInfo, CL_MEM_D3D10_RESOURCE | CL_MEM_D3D11_RESOURCE) => {
            if let Some(first) = slice.first_mut() {
                *first = crate::remote::windows_of(*first);
            }
        }
        _ => {}
    }
}

/// Calls entry point `i` through the generated table with (possibly rewritten) arguments.
pub(crate) fn forward(host: &Host, i: u32, a: &[u64; MAX_ARGS]) -> u64 {
    let f = host.function(i);
    if f.is_null() {
        return CL_INVALID_OPERATION as i64 as u64;
    }
    // SAFETY: the host's own function of number `i`, with the program's arguments (or those
    // the special entry point put in their place, of the same types).
    unsafe { crate::gen::call(i, f, a) }.unwrap_or(CL_INVALID_OPERATION as i64 as u64)
}

/// Unix call `CALL` for the special entry points; `None` for the others.
///
/// # Safety
/// The arguments are what the program passed to the Windows export of entry point `i`.
pub unsafe fn call(host: &Host, i: u32, a: &mut [u64; MAX_ARGS]) -> Option<u64> {
    let code = |r: u64| r as i32;
    Some(match i {
        index::clGetPlatformInfo | index::clGetDeviceInfo => {
            // SAFETY: the program's arguments of a clGet*Info call.
            match unsafe { extensions::filtered_info(host, i, a) } {
                Some(r) => r as i64 as u64,
                None => forward(host, i, a),
            }
        }
        index::clGetContextInfo | index::clGetMemObjectInfo => {
            let (value, size_ret) = (a[3], a[4]);
            let mut written = 0usize;
            a[4] = &mut written as *mut usize as u64;
            let r = forward(host, i, a);
            if size_ret != 0 {
                // SAFETY: the program's size_t out pointer.
                unsafe { *(ptr(size_ret) as *mut usize) = written };
            }
            if r == 0 {
                // SAFETY: the host wrote `written` bytes at the program's `value` (if any).
                unsafe { windows_pointers(i, a[1] as u32, value, written.min(a[2] as usize)) };
            }
            r
        }
        index::clCreateContext | index::clCreateContextFromType => {
            // A Direct3D device crosses as a stand-in, borrowed for the call: the layer takes the
            // references it keeps (the device's one "internal Direct3D reference") through stand-ins
            // of its own. The property list the context keeps still names the borrowed one, whose
            // record outlives it (stand-ins are never freed), so CL_CONTEXT_PROPERTIES maps back.
            // SAFETY: the program's property list (argument 0 of both).
            let d3d = unsafe { d3d_properties(ptr(a[0]) as *const isize) };
            if let Some((list, _)) = &d3d {
                a[0] = list.as_ptr() as u64;
            }
            let ctx = context(host, i, a);
            if let Some((_, stand_ins)) = d3d {
                stand_ins.into_iter().for_each(crate::d3d::release);
            }
            ctx
        }
        index::clSetContextDestructorCallback
        | index::clSetMemObjectDestructorCallback
        | index::clSetProgramReleaseCallback => {
            let t = wrap(a, 1, 2, callbacks::object as *const () as usize);
            let r = forward(host, i, a);
            settle(t, code(r), &[CL_SUCCESS]);
            r
        }
        index::clBuildProgram | index::clCompileProgram => {
            let (f, u) = if i == index::clBuildProgram {
                (4, 5)
            } else {
                (7, 8)
            };
            let t = wrap(a, f, u, callbacks::object as *const () as usize);
            let r = forward(host, i, a);
            settle(
                t,
                code(r),
                &[
                    CL_SUCCESS,
                    CL_BUILD_PROGRAM_FAILURE,
                    CL_COMPILE_PROGRAM_FAILURE,
                ],
            );
            r
        }
        index::clLinkProgram => {
            let t = wrap(a, 6, 7, callbacks::object as *const () as usize);
            let mut err: i32 = 0;
            let program_err = a[8];
            a[8] = &mut err as *mut i32 as u64;
            let r = forward(host, i, a);
            if program_err != 0 {
                // SAFETY: the program's errcode_ret.
                unsafe { *(ptr(program_err) as *mut i32) = err };
            }
            settle(t, err, &[CL_SUCCESS, CL_LINK_PROGRAM_FAILURE]);
            r
        }
        index::clSetEventCallback => {
            let t = wrap(a, 2, 3, callbacks::event as *const () as usize);
            let r = forward(host, i, a);
            settle(t, code(r), &[CL_SUCCESS]);
            r
        }
        index::clEnqueueSVMFree => {
            let t = wrap(a, 3, 4, callbacks::svm_free as *const () as usize);
            let r = forward(host, i, a);
            settle(t, code(r), &[CL_SUCCESS]);
            r
        }
        // SAFETY: the program's arguments of clEnqueueNativeKernel.
        index::clEnqueueNativeKernel => unsafe { native_kernel(host, a) },
        _ => return None,
    })
}

/// `clCreateContext` / `clCreateContextFromType` with the program's error callback wrapped.
fn context(host: &Host, i: u32, a: &mut [u64; MAX_ARGS]) -> u64 {
    let (f, u) = if i == index::clCreateContext {
        (3, 4)
    } else {
        (2, 3)
    };
    let t = wrap(a, f, u, callbacks::context_notify as *const () as usize);
    let ctx = forward(host, i, a);
    if ctx == 0 {
        settle(t, CL_INVALID_VALUE, &[]);
    } else if !t.is_null() {
        let d = host.function(index::clSetContextDestructorCallback);
        if !d.is_null() {
            // SAFETY: the host's clSetContextDestructorCallback on the context it made.
            let d: sig::clSetContextDestructorCallback = unsafe { std::mem::transmute(d) };
            // SAFETY: a live context; our trampoline frees the Target when it goes.
            unsafe {
                d(
                    ptr(ctx),
                    callbacks::context_gone as *const () as *mut c_void,
                    t,
                )
            };
        }
    }
    ctx
}

/// `clEnqueueNativeKernel`: the host copies the argument block and passes its copy to the
/// function, with no user data; so the block gets the program's function in front (8 bytes), the
/// memory-object locations move with it, and `callbacks::native_kernel` runs the function.
///
/// # Safety
/// The program's arguments of clEnqueueNativeKernel.
unsafe fn native_kernel(host: &Host, a: &mut [u64; MAX_ARGS]) -> u64 {
    let (func, args, cb_args, n_mem, locs) = (a[1], a[2], a[3] as usize, a[4] as usize, a[6]);
    let plain =
        func == 0 || (args == 0) != (cb_args == 0) || (n_mem > 0 && (locs == 0 || args == 0));
    if plain {
        // The host gives the error the spec names for these.
        return forward(host, index::clEnqueueNativeKernel, a);
    }
    let mut block = vec![0u8; 8 + cb_args];
    block[..8].copy_from_slice(&func.to_ne_bytes());
    if cb_args > 0 {
        // SAFETY: the program's block of cb_args bytes.
        block[8..].copy_from_slice(unsafe {
            std::slice::from_raw_parts(ptr(args) as *const u8, cb_args)
        });
    }
    let mut moved = Vec::with_capacity(n_mem);
    for k in 0..n_mem {
        // SAFETY: args_mem_loc holds n_mem pointers (the program's contract).
        let at = unsafe { *(ptr(locs) as *const u64).add(k) };
        let Some(off) = at.checked_sub(args).filter(|o| (*o as usize) < cb_args) else {
            return CL_INVALID_VALUE as i64 as u64;
        };
        moved.push(block.as_ptr() as u64 + 8 + off);
    }
    a[1] = callbacks::native_kernel as *const () as usize as u64;
    a[2] = block.as_ptr() as u64;
    a[3] = (8 + cb_args) as u64;
    if n_mem > 0 {
        a[6] = moved.as_ptr() as u64;
    }
    // The host copies the block and the locations before it returns.
    forward(host, index::clEnqueueNativeKernel, a)
}

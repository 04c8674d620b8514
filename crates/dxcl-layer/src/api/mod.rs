//! Entry points: the intercepted OpenCL functions and the 24 D3D sharing functions. Each is a thin
//! `extern "C"` shim (the dispatch table's slot types are `extern "C"`; `CL_API_CALL` is empty on
//! Linux) around an inner function returning `Result`, with panics caught at the boundary.

use std::panic::{catch_unwind, AssertUnwindSafe};

use std::ffi::c_void;

use opencl_sys::{cl_int, cl_mem, CL_OUT_OF_HOST_MEMORY, CL_SUCCESS};

pub(crate) mod context;
pub(crate) mod derived;
pub(crate) mod devices;
pub(crate) mod ext;
pub(crate) mod guard;
pub(crate) mod intercept;
pub(crate) mod memory;
pub(crate) mod platform;
pub(crate) mod queue;
pub(crate) mod share;

pub(crate) use crate::cl::{check, down};

/// Sets `callback` as `mem`'s destructor callback, its user data a fresh watch number, so that a
/// late call leaves a newer object of the same handle alone (`registry::watch_number`).
pub(crate) fn watch_destruction(mem: cl_mem, callback: unsafe extern "C" fn(cl_mem, *mut c_void)) {
    if let Some(set) = crate::cl::target().and_then(|t| t.clSetMemObjectDestructorCallback) {
        let n = crate::registry::watch_number(crate::registry::key(mem));
        // SAFETY: a live memory object; the callback is a plain function that outlives it, and
        // its user data is a plain number.
        unsafe { set(mem, Some(callback), n as *mut c_void) };
    }
}

/// Runs an entry point returning a status. A panic becomes CL_OUT_OF_HOST_MEMORY (the closest
/// "failure to allocate resources required by the implementation on the host") and never
/// crosses the C boundary.
pub(crate) fn status(f: impl FnOnce() -> Result<(), cl_int>) -> cl_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => CL_SUCCESS,
        Ok(Err(e)) => e,
        Err(_) => CL_OUT_OF_HOST_MEMORY,
    }
}

/// Runs an entry point returning an object and writing `errcode_ret`.
///
/// # Safety
/// `errcode_ret` is null or points to a writable `cl_int`.
pub(crate) unsafe fn object<T>(
    errcode_ret: *mut cl_int,
    f: impl FnOnce() -> Result<*mut T, cl_int>,
) -> *mut T {
    let (obj, code) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(obj)) => (obj, CL_SUCCESS),
        Ok(Err(e)) => (std::ptr::null_mut(), e),
        Err(_) => (std::ptr::null_mut(), CL_OUT_OF_HOST_MEMORY),
    };
    if !errcode_ret.is_null() {
        // SAFETY: caller's contract.
        unsafe { *errcode_ret = code };
    }
    obj
}

/// A slice from a C (pointer, count) pair; empty for a null pointer.
///
/// # Safety
/// When non-null, `ptr` points to `len` initialised elements that outlive the returned slice.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, len: u32) -> &'a [T] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: caller's contract.
        unsafe { std::slice::from_raw_parts(ptr, len as usize) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_out_of_host_memory() {
        assert_eq!(status(|| panic!("inside the layer")), CL_OUT_OF_HOST_MEMORY);
        assert_eq!(status(|| Err(-5)), -5);
        assert_eq!(status(|| Ok(())), CL_SUCCESS);
        let mut err = 0;
        // SAFETY: a writable errcode_ret.
        let obj = unsafe { object::<u8>(&mut err, || panic!("inside the layer")) };
        assert!(obj.is_null());
        assert_eq!(err, CL_OUT_OF_HOST_MEMORY);
    }
}

//! The `clGet*Info` size-query protocol, done once.

use std::ffi::c_void;
use std::mem::size_of;

use opencl_sys::{cl_int, CL_INVALID_VALUE};

/// Writes `bytes` as an info answer.
///
/// CL_INVALID_VALUE "if the size in bytes specified by param_value_size is < size of return type
/// ... and param_value is not NULL"; `param_value_size_ret` gets the full size when not null.
///
/// # Safety
/// `param_value` is null or points to `param_value_size` writable bytes; `size_ret` is null or
/// points to a writable `usize`.
pub(crate) unsafe fn write_bytes(
    bytes: &[u8],
    param_value_size: usize,
    param_value: *mut c_void,
    size_ret: *mut usize,
) -> Result<(), cl_int> {
    if !param_value.is_null() {
        if param_value_size < bytes.len() {
            return Err(CL_INVALID_VALUE);
        }
        // SAFETY: the destination holds param_value_size >= bytes.len() bytes (caller's
        // contract); a caller's buffer cannot overlap our slice.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), param_value.cast(), bytes.len()) };
    }
    if !size_ret.is_null() {
        // SAFETY: caller's contract.
        unsafe { *size_ret = bytes.len() };
    }
    Ok(())
}

/// Writes one plain value (`cl_uint`, `cl_bool`, a pointer) as an info answer.
///
/// # Safety
/// As [`write_bytes`]; `T` must be plain data without padding.
pub(crate) unsafe fn write_value<T: Copy>(
    value: T,
    param_value_size: usize,
    param_value: *mut c_void,
    size_ret: *mut usize,
) -> Result<(), cl_int> {
    // SAFETY: `value` lives for the call and T is plain data, so its bytes are initialised.
    let bytes =
        unsafe { std::slice::from_raw_parts((&value as *const T).cast::<u8>(), size_of::<T>()) };
    // SAFETY: forwarded contract.
    unsafe { write_bytes(bytes, param_value_size, param_value, size_ret) }
}

/// Runs an info query of the layer below twice (size, then data) and returns the bytes.
pub(crate) fn query_bytes(
    query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int,
) -> Result<Vec<u8>, cl_int> {
    let mut size = 0usize;
    let r = query(0, std::ptr::null_mut(), &mut size);
    if r != 0 {
        return Err(r);
    }
    let mut buf = vec![0u8; size];
    let r = query(size, buf.as_mut_ptr().cast(), std::ptr::null_mut());
    if r != 0 {
        return Err(r);
    }
    Ok(buf)
}

/// Reads one plain value through an info query of the layer below.
pub(crate) fn query_value<T: Copy + Default>(
    query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int,
) -> Result<T, cl_int> {
    let mut v = T::default();
    let r = query(
        size_of::<T>(),
        (&mut v as *mut T).cast(),
        std::ptr::null_mut(),
    );
    if r != 0 {
        return Err(r);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_protocol() {
        let mut buf = [0u8; 8];
        let mut size = 0;
        // SAFETY: valid buffers of the stated sizes.
        unsafe {
            assert_eq!(
                write_bytes(b"abc\0", 0, std::ptr::null_mut(), &mut size),
                Ok(())
            );
            assert_eq!(size, 4);
            assert_eq!(
                write_bytes(b"abc\0", 3, buf.as_mut_ptr().cast(), &mut size),
                Err(CL_INVALID_VALUE)
            );
            assert_eq!(buf[0], 0, "nothing written on error");
            assert_eq!(
                write_bytes(b"abc\0", 8, buf.as_mut_ptr().cast(), std::ptr::null_mut()),
                Ok(())
            );
            assert_eq!(&buf[..4], b"abc\0");
            assert_eq!(
                write_value(7u32, 4, buf.as_mut_ptr().cast(), &mut size),
                Ok(())
            );
            assert_eq!(
                (u32::from_ne_bytes(buf[..4].try_into().unwrap()), size),
                (7, 4)
            );
        }
    }
}

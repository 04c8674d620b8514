//! The unix side of dxcl's Wine bridge (docs/wine.md). A Windows program's `opencl.dll` forwards
//! to `dxclcl.dll`, whose exports each make one unix call into this library; here the call runs on
//! the host's OpenCL (`libOpenCL.so.1`, which loads dxcl's layer from `OPENCL_LAYERS`). Wine finds
//! the calls in `__wine_unix_call_funcs`.
//!
//! - `gen`: the core entry points, generated from the Khronos `CL/cl.h` by dxcl-gen;
//! - `special`: those that take callbacks or report extensions; `callbacks`: callbacks into the
//!   program, run on a Windows thread; `extensions`: what the program sees;
//! - `adapter`: `clGetDeviceIDsFromD3D1x*` through the layer, about the program's DXGI adapter.

mod adapter;
mod callbacks;
mod extensions;
#[rustfmt::skip]
mod gen;
mod host;
mod special;
mod unixlib;

use std::ffi::{c_void, CStr};

/// Wine's `NTSTATUS` for a unix call that failed: the Windows side turns it into an OpenCL error.
const STATUS_UNSUCCESSFUL: u32 = 0xC000_0001;

/// Runs `f`, catching a panic (none may cross into Wine).
fn guarded(f: impl FnOnce() -> u32) -> u32 {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(STATUS_UNSUCCESSFUL)
}

/// Unix call `CALL`: one core entry point.
unsafe extern "C" fn call(args: *mut c_void) -> u32 {
    guarded(|| {
        let Some(host) = host::host() else {
            return STATUS_UNSUCCESSFUL;
        };
        // SAFETY: Wine passes the Windows side's `struct dxcl_call`.
        let p = unsafe { &mut *args.cast::<unixlib::Call>() };
        // SAFETY: the arguments are the program's, packed by the export of entry point `p.function`.
        let special = unsafe { special::call(host, p.function, &mut p.args) };
        p.ret = match special {
            Some(r) => r,
            None => {
                let f = host.function(p.function);
                if f.is_null() {
                    return STATUS_UNSUCCESSFUL;
                }
                // SAFETY: the host's function of that number, with the program's arguments.
                match unsafe { gen::call(p.function, f, &p.args) } {
                    Some(r) => r,
                    None => return STATUS_UNSUCCESSFUL,
                }
            }
        };
        0
    })
}

/// Unix call `NEXT_CALLBACK`: the Windows side's callback thread waits here.
unsafe extern "C" fn next_callback(args: *mut c_void) -> u32 {
    guarded(|| {
        // SAFETY: Wine passes the Windows side's `struct dxcl_callback`.
        callbacks::next(unsafe { &mut *args.cast::<unixlib::Callback>() });
        0
    })
}

/// Unix call `DEVICE_IDS`: `clGetDeviceIDsFromD3D1x{KHR,NV}`.
unsafe extern "C" fn device_ids(args: *mut c_void) -> u32 {
    guarded(|| {
        let Some(host) = host::host() else {
            return STATUS_UNSUCCESSFUL;
        };
        // SAFETY: Wine passes the Windows side's `struct dxcl_device_ids`, and the program's
        // arguments in it.
        unsafe { adapter::device_ids(host, &mut *args.cast::<unixlib::DeviceIds>()) };
        0
    })
}

/// Unix call `EXTENSION`: whether the host has an extension function (the Windows side hands out
/// its own wrapper only then).
unsafe extern "C" fn extension(args: *mut c_void) -> u32 {
    guarded(|| {
        let Some(host) = host::host() else {
            return STATUS_UNSUCCESSFUL;
        };
        // SAFETY: Wine passes the Windows side's `struct dxcl_extension`.
        let p = unsafe { &mut *args.cast::<unixlib::Extension>() };
        if p.name == 0 {
            p.present = 0;
            return 0;
        }
        // SAFETY: the program's NUL-terminated function name.
        let name = unsafe { CStr::from_ptr(p.name as usize as *const i8) };
        let platform = if p.platform != 0 {
            p.platform as usize as *mut c_void
        } else {
            first_platform(host)
        };
        p.present = !host.extension(platform, name).is_null() as u32;
        0
    })
}

/// The first platform, for `clGetExtensionFunctionAddress` (no platform argument).
fn first_platform(host: &host::Host) -> *mut c_void {
    let f = host.function(gen::index::clGetPlatformIDs);
    if f.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: the host's clGetPlatformIDs.
    let f: gen::sig::clGetPlatformIDs = unsafe { std::mem::transmute(f) };
    let mut p: *mut c_void = std::ptr::null_mut();
    // SAFETY: room for one platform.
    unsafe { f(1, (&mut p as *mut *mut c_void).cast(), std::ptr::null_mut()) };
    p
}

type UnixCall = unsafe extern "C" fn(*mut c_void) -> u32;

/// The unix calls, by the numbers of `enum dxcl_unix_call` (wine/dxclcl/unixlib.h).
#[no_mangle]
#[used]
pub static __wine_unix_call_funcs: [UnixCall; 4] = {
    let mut t: [UnixCall; 4] = [call; 4];
    t[unixlib::CALL] = call;
    t[unixlib::NEXT_CALLBACK] = next_callback;
    t[unixlib::DEVICE_IDS] = device_ids;
    t[unixlib::EXTENSION] = extension;
    t
};

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_follows_the_header_numbers() {
        use crate::unixlib::{CALL, DEVICE_IDS, EXTENSION, NEXT_CALLBACK};
        // enum dxcl_unix_call in wine/dxclcl/unixlib.h.
        assert_eq!([CALL, NEXT_CALLBACK, DEVICE_IDS, EXTENSION], [0, 1, 2, 3]);
    }

    #[test]
    fn every_special_entry_point_exists() {
        for name in crate::gen::SPECIAL {
            assert!(crate::gen::NAMES.contains(&name), "{name}");
        }
    }
}

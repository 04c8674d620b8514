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
mod d3d;
mod extensions;
#[rustfmt::skip]
mod gen;
#[rustfmt::skip]
mod gen_stand_ins;
#[rustfmt::skip]
mod gen_limits;
mod host;
mod low;
mod multithread;
mod remote;
mod signals;
mod special;
mod trace;
mod unixlib;
mod wait;
mod wow64;

use std::ffi::{c_void, CStr};

/// Wine's `NTSTATUS` for a unix call that failed: the Windows side turns it into an OpenCL error.
const STATUS_UNSUCCESSFUL: u32 = 0xC000_0001;

/// Runs `f`, catching a panic (none may cross into Wine).
fn guarded(f: impl FnOnce() -> u32) -> u32 {
    let status =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(STATUS_UNSUCCESSFUL);
    signals::keep_wines();
    status
}

/// Unix call `CALL`: one core entry point.
unsafe extern "C-unwind" fn call(args: *mut c_void) -> u32 {
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

/// One try of a waiting unix call (`wait::until`), with the panic guard: a panic ends the wait
/// with a failure.
fn guarded_try(f: impl FnOnce() -> Option<u32>) -> Option<u32> {
    let taken = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    signals::keep_wines();
    taken.unwrap_or(Some(STATUS_UNSUCCESSFUL))
}

/// Unix call `NEXT_CALLBACK`: the Windows side's callback thread waits here (in `wait::until`,
/// which Wine may unwind at exit).
unsafe extern "C-unwind" fn next_callback(args: *mut c_void) -> u32 {
    wait::until(&callbacks::QUEUED, args, |args| {
        guarded_try(|| {
            // SAFETY: Wine passes the Windows side's `struct dxcl_callback`.
            callbacks::try_next(unsafe { &mut *args.cast::<unixlib::Callback>() }).then_some(0)
        })
    })
}

/// Unix call `DEVICE_IDS`: `clGetDeviceIDsFromD3D1x{KHR,NV}`.
unsafe extern "C-unwind" fn device_ids(args: *mut c_void) -> u32 {
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
unsafe extern "C-unwind" fn extension(args: *mut c_void) -> u32 {
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
pub(crate) fn first_platform(host: &host::Host) -> *mut c_void {
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

/// Unix call `START`: the Windows side's servers for stand-ins' calls are starting.
unsafe extern "C-unwind" fn start(args: *mut c_void) -> u32 {
    guarded(|| {
        // SAFETY: Wine passes the Windows side's `struct dxcl_start`.
        let p = unsafe { &*args.cast::<unixlib::Start>() };
        // A 32-bit side's objects reach only its block: without a usable one, no stand-ins.
        if p.low != 0 && !low::set(p.low, p.low_size) {
            return STATUS_UNSUCCESSFUL;
        }
        remote::start(p.wrapper_vtbl, multithread::remote_vtable);
        0
    })
}

/// Unix call `STOP`: `dxclcl.dll` detaches; calls through stand-ins fail from now on.
unsafe extern "C-unwind" fn stop(args: *mut c_void) -> u32 {
    guarded(|| {
        // SAFETY: Wine passes the Windows side's `struct dxcl_stop`.
        let exit = !args.is_null() && unsafe { (*args.cast::<unixlib::Stop>()).process_exit } != 0;
        trace::report();
        remote::stop(exit);
        0
    })
}

/// Unix call `NEXT_REQUEST`: a server thread waits here for a stand-in's call to make (in
/// `wait::until`, which Wine may unwind at exit).
unsafe extern "C-unwind" fn next_request(args: *mut c_void) -> u32 {
    wait::until(&remote::REQUESTS, args, |args| {
        guarded_try(|| {
            // SAFETY: Wine passes the Windows side's `struct dxcl_request`.
            let served = remote::try_next_request(unsafe { &mut *args.cast::<unixlib::Request>() });
            // false: the bridge is closing, and the server thread ends.
            served.map(|s| if s { 0 } else { STATUS_UNSUCCESSFUL })
        })
    })
}

/// Unix call `FIRST_DONE`: a server ran the deferred method its request carried.
unsafe extern "C-unwind" fn first_done(args: *mut c_void) -> u32 {
    guarded(|| {
        // SAFETY: Wine passes the Windows side's `struct dxcl_request`.
        remote::first_done(unsafe { &*args.cast::<unixlib::Request>() });
        0
    })
}

/// Unix call `REVERSE`: Windows code's AddRef or Release of a wrapper of a unix object.
unsafe extern "C-unwind" fn reverse(args: *mut c_void) -> u32 {
    guarded(|| {
        // SAFETY: Wine passes the Windows side's `struct dxcl_reverse`.
        remote::reverse(unsafe { &mut *args.cast::<unixlib::Reverse>() });
        0
    })
}

/// Unix call `D3D_CALL`: `clCreateFromD3D1x*` and `clEnqueueAcquire/ReleaseD3D1xObjects*`.
unsafe extern "C-unwind" fn d3d_call(args: *mut c_void) -> u32 {
    guarded(|| {
        let Some(host) = host::host() else {
            return STATUS_UNSUCCESSFUL;
        };
        // SAFETY: Wine passes the Windows side's `struct dxcl_d3d_call`, with the program's
        // arguments in it.
        unsafe { d3d::call(host, &mut *args.cast::<unixlib::D3dCall>()) };
        0
    })
}

/// Unix call `HELLO`: `dxclcl.dll` checks at attach that this is its unix side and that the host's
/// OpenCL opened; it tells the program why not otherwise.
unsafe extern "C-unwind" fn hello(args: *mut c_void) -> u32 {
    guarded(|| {
        // SAFETY: Wine passes the Windows side's `struct dxcl_hello`.
        let p = unsafe { &mut *args.cast::<unixlib::Hello>() };
        let error = host::error();
        p.abi = unixlib::ABI;
        p.host = error.is_none() as u32;
        let reason = error.unwrap_or("").as_bytes();
        let n = reason.len().min(p.reason.len() - 1);
        p.reason[..n].copy_from_slice(&reason[..n]);
        p.reason[n] = 0;
        0
    })
}

/// Unix call `CALL` from a 32-bit program (Wine's new WoW64 mode): the same entry points, their
/// arguments converted from the 32-bit layout (wow64/mod.rs).
unsafe extern "C-unwind" fn call_wow64(args: *mut c_void) -> u32 {
    guarded(|| {
        let Some(host) = host::host() else {
            return STATUS_UNSUCCESSFUL;
        };
        // SAFETY: Wine passes the 32-bit Windows side's `struct dxcl_call`.
        let p = unsafe { &mut *args.cast::<unixlib::Call>() };
        // SAFETY: the arguments are a 32-bit program's, packed by the export of `p.function`.
        match unsafe { wow64::call(host, p) } {
            Some(r) => {
                p.ret = r;
                0
            }
            None => STATUS_UNSUCCESSFUL,
        }
    })
}

/// Unix call `NEXT_CALLBACK` from a 32-bit program: as [`next_callback`], the callback's
/// arguments converted for 32-bit code (its block is a `struct dxcl_callback_wow64`).
unsafe extern "C-unwind" fn next_callback_wow64(args: *mut c_void) -> u32 {
    wait::until(&callbacks::QUEUED, args, |args| {
        guarded_try(|| {
            // SAFETY: Wine passes the 32-bit Windows side's `struct dxcl_callback_wow64`.
            let p = unsafe { &mut *args.cast::<unixlib::CallbackWow64>() };
            if !callbacks::try_next(&mut p.cb) {
                return None;
            }
            // SAFETY: just taken; the block is the program's.
            unsafe { wow64::callback_out(p) };
            Some(0)
        })
    })
}

/// Unix call `DEVICE_IDS` from a 32-bit program: its handles converted (wow64/sharing.rs).
unsafe extern "C-unwind" fn device_ids_wow64(args: *mut c_void) -> u32 {
    guarded(|| {
        let Some(host) = host::host() else {
            return STATUS_UNSUCCESSFUL;
        };
        // SAFETY: Wine passes the 32-bit Windows side's `struct dxcl_device_ids`, with the
        // program's arguments in it.
        unsafe { wow64::sharing::device_ids(host, &mut *args.cast::<unixlib::DeviceIds>()) };
        0
    })
}

/// Unix call `EXTENSION` from a 32-bit program: its platform is a token.
unsafe extern "C-unwind" fn extension_wow64(args: *mut c_void) -> u32 {
    // SAFETY: Wine passes the 32-bit Windows side's `struct dxcl_extension`.
    wow64::sharing::extension_platform(unsafe { &mut *args.cast::<unixlib::Extension>() });
    // SAFETY: the same block, its platform now the host's.
    unsafe { extension(args) }
}

/// Unix call `D3D_CALL` from a 32-bit program: its handles converted (wow64/sharing.rs).
unsafe extern "C-unwind" fn d3d_call_wow64(args: *mut c_void) -> u32 {
    guarded(|| {
        let Some(host) = host::host() else {
            return STATUS_UNSUCCESSFUL;
        };
        // SAFETY: Wine passes the 32-bit Windows side's `struct dxcl_d3d_call`, with the
        // program's arguments.
        unsafe { wow64::sharing::d3d_call(host, &mut *args.cast::<unixlib::D3dCall>()) };
        0
    })
}

type UnixCall = unsafe extern "C-unwind" fn(*mut c_void) -> u32;

/// The unix calls, by the numbers of `enum dxcl_unix_call` (wine/dxclcl/unixlib.h).
#[no_mangle]
#[used]
pub static __wine_unix_call_funcs: [UnixCall; unixlib::COUNT] = {
    let mut t: [UnixCall; unixlib::COUNT] = [call; unixlib::COUNT];
    t[unixlib::CALL] = call;
    t[unixlib::NEXT_CALLBACK] = next_callback;
    t[unixlib::DEVICE_IDS] = device_ids;
    t[unixlib::EXTENSION] = extension;
    t[unixlib::START] = start;
    t[unixlib::STOP] = stop;
    t[unixlib::NEXT_REQUEST] = next_request;
    t[unixlib::REVERSE] = reverse;
    t[unixlib::D3D_CALL] = d3d_call;
    t[unixlib::FIRST_DONE] = first_done;
    t[unixlib::HELLO] = hello;
    t
};

/// The unix calls of 32-bit programs (Wine's new WoW64 mode), by the same numbers.
#[no_mangle]
#[used]
pub static __wine_unix_call_wow64_funcs: [UnixCall; unixlib::COUNT] = {
    // The blocks of START, STOP, NEXT_REQUEST, REVERSE, FIRST_DONE and HELLO hold no handles
    // and no pointers to convert: the stand-ins' arguments were laid out for the program's
    // objects already (remote.rs, low.rs).
    let mut t: [UnixCall; unixlib::COUNT] = __wine_unix_call_funcs;
    t[unixlib::CALL] = call_wow64;
    t[unixlib::NEXT_CALLBACK] = next_callback_wow64;
    t[unixlib::DEVICE_IDS] = device_ids_wow64;
    t[unixlib::EXTENSION] = extension_wow64;
    t[unixlib::D3D_CALL] = d3d_call_wow64;
    t
};

#[cfg(test)]
mod tests {
    #[test]
    fn the_table_follows_the_header_numbers() {
        use crate::unixlib::*;
        // enum dxcl_unix_call in wine/dxclcl/unixlib.h.
        let numbers = [
            CALL,
            NEXT_CALLBACK,
            DEVICE_IDS,
            EXTENSION,
            START,
            STOP,
            NEXT_REQUEST,
            REVERSE,
            D3D_CALL,
            FIRST_DONE,
            HELLO,
        ];
        assert_eq!(numbers, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(COUNT, numbers.len());
    }

    #[test]
    fn hello_answers_the_contract_version_and_the_host_state_as_wine_calls_it() {
        use crate::unixlib::{Hello, ABI, HELLO};
        let mut p = Hello {
            abi: 0,
            host: 7,
            reason: [0xff; 256],
        };
        // SAFETY: the table's HELLO entry with a `struct dxcl_hello`, as Wine passes it.
        let status = unsafe { super::__wine_unix_call_funcs[HELLO]((&mut p as *mut Hello).cast()) };
        assert_eq!((status, p.abi), (0, ABI));
        let reason = std::ffi::CStr::from_bytes_until_nul(&p.reason).expect("NUL-terminated");
        match crate::host::error() {
            None => assert_eq!((p.host, reason.to_bytes()), (1, &b""[..])),
            Some(why) => assert_eq!((p.host, reason.to_str().unwrap()), (0, why)),
        }
    }

    #[test]
    fn every_special_entry_point_exists() {
        for name in crate::gen::SPECIAL {
            assert!(crate::gen::NAMES.contains(&name), "{name}");
        }
    }
}

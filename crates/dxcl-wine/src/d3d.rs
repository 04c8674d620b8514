//! The sharing entry points that take Direct3D objects or act on objects made from them
//! (`clCreateFromD3D1x*`, `clEnqueueAcquire/ReleaseD3D1xObjects*`): the layer's own functions,
//! with the program's Direct3D objects given as stand-ins (remote.rs).

use std::ffi::c_void;
use std::sync::OnceLock;

use crate::host::Host;
use crate::remote;
use crate::unixlib::D3dCall;
use dxcl_abi::sharing::{Call, BRIDGE_CALLS};

const CL_INVALID_OPERATION: i64 = -59;

/// The layer's functions (one library serves every platform), looked up once.
fn functions(host: &Host) -> &'static [usize; 20] {
    static F: OnceLock<[usize; 20]> = OnceLock::new();
    F.get_or_init(|| {
        let platform = crate::first_platform(host);
        BRIDGE_CALLS.map(|(ext, call)| host.extension(platform, ext.entry_point(call)) as usize)
    })
}

type CreateBuffer =
    unsafe extern "system" fn(*mut c_void, u64, *mut c_void, *mut i32) -> *mut c_void;
type CreateTexture =
    unsafe extern "system" fn(*mut c_void, u64, *mut c_void, u32, *mut i32) -> *mut c_void;
type Enqueue = unsafe extern "system" fn(
    *mut c_void,
    u32,
    *const c_void,
    u32,
    *const c_void,
    *mut c_void,
) -> i32;

fn ptr(v: u64) -> *mut c_void {
    v as usize as *mut c_void
}

/// Unix call `D3D_CALL`.
///
/// # Safety
/// The program's arguments of entry point `p.function`, as the Windows side packed them.
pub unsafe fn call(host: &Host, p: &mut D3dCall) {
    let (Some(&f), Some((_, kind))) = (
        functions(host).get(p.function as usize),
        BRIDGE_CALLS.get(p.function as usize),
    ) else {
        p.ret = CL_INVALID_OPERATION as u64;
        return;
    };
    if f == 0 {
        p.ret = CL_INVALID_OPERATION as u64;
        return;
    }
    let a = p.args;
    p.ret = match kind {
        // Not a number of D3D_CALL (BRIDGE_CALLS has none): DEVICE_IDS serves it.
        Call::DeviceIds => CL_INVALID_OPERATION as u64,
        // clCreateFromD3D1xBuffer(context, flags, resource, errcode_ret)
        Call::Buffer => {
            let resource = remote::borrow(a[2]);
            // SAFETY: the layer's function of that name and signature; the program's arguments.
            let f: CreateBuffer = unsafe { std::mem::transmute(f) };
            // SAFETY: as above, with the resource's stand-in.
            let m = unsafe { f(ptr(a[0]), a[1], resource, ptr(a[3]).cast()) };
            release(resource);
            m as u64
        }
        // clCreateFromD3D1xTexture2D/3D(context, flags, resource, subresource, errcode_ret)
        Call::Texture2D | Call::Texture3D => {
            let resource = remote::borrow(a[2]);
            // SAFETY: as above.
            let f: CreateTexture = unsafe { std::mem::transmute(f) };
            // SAFETY: as above.
            let m = unsafe { f(ptr(a[0]), a[1], resource, a[3] as u32, ptr(a[4]).cast()) };
            release(resource);
            m as u64
        }
        // clEnqueueAcquire/ReleaseD3D1xObjects(queue, num_objects, mem_objects, num_events,
        // event_wait_list, event): OpenCL objects only.
        Call::Acquire | Call::Release => {
            if *kind == Call::Acquire {
                crate::trace::acquire();
            }
            // SAFETY: as above.
            let f: Enqueue = unsafe { std::mem::transmute(f) };
            // SAFETY: as above.
            let r = unsafe {
                f(
                    ptr(a[0]),
                    a[1] as u32,
                    ptr(a[2]),
                    a[3] as u32,
                    ptr(a[4]),
                    ptr(a[5]),
                )
            };
            r as i64 as u64
        }
    };
}

/// Lets go of the entry point's own reference to a stand-in (the layer holds its own).
pub fn release(stand_in: *mut c_void) {
    if !stand_in.is_null() {
        // SAFETY: a live stand-in from remote::borrow, released once.
        unsafe { remote::release(stand_in.cast()) };
    }
}

//! The sharing extensions' unix calls from a 32-bit program: its handles and arrays converted as
//! the core calls' are (`Arg`), then the 64-bit path (`d3d.rs`, `adapter.rs`). Its Direct3D
//! objects are 32-bit addresses, which the stand-ins take as they are; their methods' arguments
//! cross in its layout (`remote`'s 32-bit frames).

use dxcl_abi::sharing::{Call, BRIDGE_CALLS};

use super::{convert_in, convert_out, failure, handles, write32, Arg, Len, Ret};
use crate::gen::MAX_ARGS;
use crate::host::Host;
use crate::unixlib::{D3dCall, DeviceIds, Extension};

const CL_INVALID_OPERATION: i64 = -59;
const CL_OUT_OF_HOST_MEMORY: i64 = -6;

/// How each kind of entry point's arguments convert.
fn shape(call: Call) -> Option<(&'static [Arg], Ret)> {
    use Arg::*;
    Some(match call {
        // (context, flags, resource, errcode_ret)
        Call::Buffer => (&[Handle, Value, Value, Value], Ret::Handle),
        // (context, flags, resource, subresource, errcode_ret)
        Call::Texture2D | Call::Texture3D => (&[Handle, Value, Value, Value, Value], Ret::Handle),
        // (queue, num_objects, mem_objects, num_events_in_wait_list, event_wait_list, event)
        Call::Acquire | Call::Release => (
            &[
                Handle,
                Value,
                HandlesIn(Len::Arg(1)),
                Value,
                HandlesIn(Len::Arg(3)),
                HandlesOut(Len::One),
            ],
            Ret::Value,
        ),
        Call::DeviceIds => return None,
    })
}

/// Unix call `D3D_CALL` from a 32-bit program.
///
/// # Safety
/// `p` is a 32-bit program's `struct dxcl_d3d_call`, with its arguments.
pub unsafe fn d3d_call(host: &Host, p: &mut D3dCall) {
    let Some((args, ret)) = BRIDGE_CALLS
        .get(p.function as usize)
        .and_then(|(_, call)| shape(*call))
    else {
        p.ret = CL_INVALID_OPERATION as u64;
        return;
    };
    let mut a32 = [0u64; MAX_ARGS];
    a32[..p.args.len()].copy_from_slice(&p.args);
    // SAFETY: the program's arguments of an entry point shaped `args`.
    let f = match unsafe { convert_in(0, args, &a32) } {
        Ok(f) => f,
        Err(code) => {
            // SAFETY: as above.
            p.ret = unsafe { failure(args, ret, &a32, code) };
            return;
        }
    };
    let mut host_call = D3dCall {
        function: p.function,
        pad: 0,
        args: [0; 8],
        ret: 0,
    };
    host_call.args.copy_from_slice(&f.a[..8]);
    // SAFETY: the host-layout arguments of the same entry point.
    unsafe { crate::d3d::call(host, &mut host_call) };
    let r = host_call.ret;
    let failed = match ret {
        Ret::Value => r as i32 != 0,
        Ret::Handle => r == 0,
    };
    if !failed {
        // SAFETY: the frame's write-backs name the program's arrays.
        unsafe { convert_out(&f) };
    }
    p.ret = match ret {
        Ret::Value => r,
        Ret::Handle => handles::narrow(r) as u64,
    };
}

/// Unix call `DEVICE_IDS` from a 32-bit program: its platform is a token and its device array
/// holds 4-byte handles. (Its Windows side lays the adapter's facts out as a 64-bit one's.)
///
/// # Safety
/// `p` is a 32-bit program's `struct dxcl_device_ids`, with its arguments.
pub unsafe fn device_ids(host: &Host, p: &mut DeviceIds) {
    let (to, n) = (p.devices, p.num_entries as usize);
    let mut devices: Vec<u64> = Vec::new();
    if to != 0 {
        // CL_OUT_OF_HOST_MEMORY "if there is a failure to allocate resources required by the
        // OpenCL implementation on the host".
        if devices.try_reserve_exact(n).is_err() {
            p.ret = CL_OUT_OF_HOST_MEMORY;
            return;
        }
        devices.resize(n, 0);
        p.devices = devices.as_mut_ptr() as u64;
    }
    p.platform = handles::widen(p.platform as u32);
    // SAFETY: the block with host-layout arrays; num_devices is the program's cl_uint *.
    unsafe { crate::adapter::device_ids(host, p) };
    p.devices = to;
    if p.ret == 0 && to != 0 {
        for (k, d) in devices.iter().enumerate().filter(|(_, d)| **d != 0) {
            // SAFETY: the program's array of num_entries handles.
            unsafe { write32(to, k, handles::narrow(*d)) };
        }
    }
}

/// Unix call `EXTENSION` from a 32-bit program: its platform is a token.
pub fn extension_platform(p: &mut Extension) {
    p.platform = handles::widen(p.platform as u32);
}

//! The parameter blocks of the unix calls, as `wine/dxclcl/unixlib.h` lays them out.

use crate::gen::MAX_ARGS;
use crate::gen_limits::MAX_METHOD_ARGS;

pub const CALL: usize = 0;
pub const NEXT_CALLBACK: usize = 1;
pub const DEVICE_IDS: usize = 2;
pub const EXTENSION: usize = 3;
pub const START: usize = 4;
pub const STOP: usize = 5;
pub const NEXT_REQUEST: usize = 6;
pub const REVERSE: usize = 7;
pub const D3D_CALL: usize = 8;
pub const FIRST_DONE: usize = 9;
pub const HELLO: usize = 10;
/// How many unix calls there are.
pub const COUNT: usize = 11;
/// `DXCL_UNIX_ABI`: the contract's version, which `dxclcl.dll` checks at attach.
pub const ABI: u32 = 5;

/// `STOP`: whether the process is ending (the servers are then left to Wine).
#[repr(C)]
pub struct Stop {
    pub process_exit: u32,
}

/// `HELLO`: the unix side's contract version, and whether the host's OpenCL opened.
#[repr(C)]
pub struct Hello {
    pub abi: u32,
    pub host: u32,
    /// Why the host's OpenCL did not open, NUL-terminated.
    pub reason: [u8; 256],
}

#[repr(C)]
pub struct Call {
    pub function: u32,
    pub pad: u32,
    pub args: [u64; MAX_ARGS],
    pub ret: u64,
}

pub const CB_CONTEXT_NOTIFY: u32 = 1;
pub const CB_OBJECT: u32 = 2;
pub const CB_EVENT: u32 = 3;
pub const CB_SVM_FREE: u32 = 4;
pub const CB_NATIVE_KERNEL: u32 = 5;

#[repr(C)]
pub struct Callback {
    pub done: u64,
    pub id: u64,
    pub kind: u32,
    pub pad: u32,
    pub function: u64,
    pub args: [u64; 4],
}

/// `NEXT_CALLBACK` from a 32-bit program (`struct dxcl_callback_wow64`): the callback, and room for
/// the context error callback's text, which must lie where 32-bit code can read it.
#[repr(C)]
pub struct CallbackWow64 {
    pub cb: Callback,
    pub text: [u8; 1024],
}

pub const MAX_VULKAN_DEVICES: usize = 8;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct VulkanDevice {
    pub uuid: [u8; 16],
    pub luid: [u8; 8],
    pub luid_valid: u32,
    pub vendor: u32,
    pub device: u32,
    /// `VkPhysicalDeviceType`.
    pub device_type: u32,
    pub name: [u8; 256],
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct AdapterFacts {
    pub is_adapter: u32,
    pub has_desc1: u32,
    /// `DXGI_ADAPTER_DESC1` as the Windows side read it.
    pub desc: [u8; 312],
    pub dxvk_known: u32,
    pub gpu_known: u32,
    pub dxvk_uuid: [u8; 16],
    pub gpu_uuid: [u8; 16],
    pub vulkan_count: u32,
    pub pad: u32,
    pub vulkan: [VulkanDevice; MAX_VULKAN_DEVICES],
}

#[repr(C)]
pub struct DeviceIds {
    /// 0 KHR D3D10, 1 KHR D3D11, 2 NV D3D10, 3 NV D3D11.
    pub ext: u32,
    pub source: u32,
    pub platform: u64,
    pub object_null: u64,
    pub set: u32,
    pub num_entries: u32,
    pub devices: u64,
    pub num_devices: u64,
    pub ret: i64,
    pub facts: AdapterFacts,
}

#[repr(C)]
pub struct Extension {
    pub platform: u64,
    pub name: u64,
    pub present: u32,
    pub pad: u32,
}

/// `START`: the Windows side's vtable for wrappers of unix objects; a 32-bit side's block of
/// memory its code reaches (`low`), 0 from a 64-bit one.
#[repr(C)]
pub struct Start {
    pub wrapper_vtbl: u64,
    pub low: u64,
    pub low_size: u64,
}

/// `NEXT_REQUEST`: a server thread reports a finished method call and takes the next one.
#[repr(C)]
pub struct Request {
    pub done_id: u64,
    pub done_ret: u64,
    /// The method's time on the Windows side, in nanoseconds (`DXCL_TRACE=handoff`, trace.rs).
    pub done_ns: u64,
    pub id: u64,
    pub object: u64,
    pub slot: u32,
    pub nargs: u32,
    pub args: [u64; MAX_METHOD_ARGS],
    /// A deferred method (an Unmap) to run before this one; `first_object` 0 for none.
    pub first_object: u64,
    pub first_slot: u32,
    pub first_nargs: u32,
    pub first_args: [u64; MAX_METHOD_ARGS],
}

/// `REVERSE`: Windows code's AddRef (1) or Release (2) of a wrapper of a unix object.
#[repr(C)]
pub struct Reverse {
    pub wrapper: u64,
    pub method: u32,
    pub ret: u32,
}

/// `D3D_CALL`: one of the sharing entry points other than `clGetDeviceIDsFromD3D1x*`, by its
/// number in `dxcl_abi::sharing::BRIDGE_CALLS`.
#[repr(C)]
pub struct D3dCall {
    pub function: u32,
    pub pad: u32,
    pub args: [u64; 8],
    pub ret: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_the_c_header() {
        assert_eq!(size_of::<dxcl_abi::DXGI_ADAPTER_DESC1>(), 312);
        assert_eq!(offset_of!(Call, args), 8);
        assert_eq!(size_of::<Call>(), 8 + 8 * MAX_ARGS + 8);
        assert_eq!(offset_of!(Callback, function), 24);
        assert_eq!(size_of::<Callback>(), 64);
        assert_eq!(size_of::<VulkanDevice>(), 16 + 8 + 16 + 256);
        assert_eq!(offset_of!(AdapterFacts, dxvk_known), 320);
        assert_eq!(offset_of!(AdapterFacts, vulkan), 368);
        assert_eq!(offset_of!(DeviceIds, facts), 56);
        assert_eq!(size_of::<Extension>(), 24);
        assert_eq!(offset_of!(Request, args), 48);
        assert_eq!(offset_of!(Request, first_object), 48 + 8 * MAX_METHOD_ARGS);
        assert_eq!(offset_of!(Request, first_args), 64 + 8 * MAX_METHOD_ARGS);
        assert_eq!(size_of::<Request>(), 64 + 16 * MAX_METHOD_ARGS);
        assert_eq!(size_of::<Reverse>(), 16);
        assert_eq!(size_of::<D3dCall>(), 80);
        assert_eq!(size_of::<Hello>(), 264);
        assert_eq!(size_of::<Stop>(), 4);
        assert_eq!(size_of::<Start>(), 24);
        assert_eq!(size_of::<CallbackWow64>(), 64 + 1024);
    }

    #[test]
    fn the_contract_version_is_the_headers() {
        let header = include_str!("../../../wine/dxclcl/unixlib.h");
        let line = header
            .lines()
            .find_map(|l| l.strip_prefix("#define DXCL_UNIX_ABI "))
            .expect("unixlib.h defines DXCL_UNIX_ABI");
        assert_eq!(line.trim().parse::<u32>(), Ok(ABI));
        assert!(header.contains(&format!("DXCL_UNIX_HELLO = {HELLO},")));
    }
}

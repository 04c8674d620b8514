//! The ABI names the COM layer uses, from `dxcl_abi` (SDK spelling), in one place.

pub use dxcl_abi::*;
pub use std::ffi::c_void;

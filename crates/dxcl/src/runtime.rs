//! Direct3D devices from dxcl's own runtime (feature `runtime`, on by default).
//!
//! The runtime is linked in as a Rust library (`dxcl-d3d`'s rlib) rather than found as
//! `libdxcl_d3d.so` at run time: examples and tests then run from `cargo` with no install step
//! and no library path, and an application with its own Direct3D device turns the feature off
//! and drops the dependency. The layer reaches either kind of device through COM alone.

use std::ptr;

use dxcl_abi::*;

use crate::com::Com;
use crate::error::{Error, Result};

/// A Direct3D 11 device on the adapter `DXCL_ADAPTER` selects (unset: the first Vulkan device,
/// else the software adapter; `software`: host memory, which CPU OpenCL devices share without
/// copies).
///
/// # Errors
/// [`Error::D3d`] with the `HRESULT` of `D3D11CreateDevice`.
pub fn d3d11_device() -> Result<Com<ID3D11Device>> {
    let mut device = ptr::null_mut();
    // SAFETY: no adapter, no level list (the runtime's default), one writable out pointer; the
    // others are null, which D3D11CreateDevice allows.
    let hr = unsafe {
        dxcl_d3d::D3D11CreateDevice(
            ptr::null_mut(),
            D3D_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            ptr::null(),
            0,
            D3D11_SDK_VERSION,
            &mut device,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    created(hr, device)
}

/// A Direct3D 10 device (feature level 10_0) on the adapter `DXCL_ADAPTER` selects.
///
/// # Errors
/// [`Error::D3d`] with the `HRESULT` of `D3D10CreateDevice`.
pub fn d3d10_device() -> Result<Com<ID3D10Device>> {
    let mut device = ptr::null_mut();
    // SAFETY: no adapter, the SDK version the runtime expects, one writable out pointer.
    let hr = unsafe {
        dxcl_d3d::D3D10CreateDevice(
            ptr::null_mut(),
            D3D10_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            D3D10_SDK_VERSION,
            &mut device,
        )
    };
    created(hr, device)
}

fn created<T: Interface>(hr: HRESULT, device: *mut T) -> Result<Com<T>> {
    if !SUCCEEDED(hr) {
        return Err(Error::D3d(hr));
    }
    // SAFETY: on success the out pointer holds a new reference, which the `Com` takes over.
    unsafe { Com::from_raw(device) }.ok_or(Error::D3d(E_POINTER))
}

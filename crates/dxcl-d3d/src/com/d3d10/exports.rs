//! The D3D10 entry points: `D3D10CreateDevice`, `D3D10CreateDeviceAndSwapChain`,
//! `D3D10CreateDevice1`, `D3D10CreateDeviceAndSwapChain1`.
//!
//! Devices land on the adapter the D3D11 path picks for the same driver type (`DXCL_ADAPTER`;
//! HARDWARE: the first Vulkan adapter, else the software adapter; the others: the software
//! adapter, else the first adapter). `D3D10_DRIVER_TYPE_NULL` answers
//! `DXGI_ERROR_UNSUPPORTED` as in the D3D11 path. `D3D10CreateDevice` makes a feature level 10_0
//! device; `D3D10CreateDevice1` makes 10_0 and 10_1 devices and answers `E_NOTIMPL` for the 9_x
//! levels (their limits are not implemented). No swap chain can be made (no output).

use super::super::abi::*;
use super::super::clear_out;
use super::super::device::{resolve_adapter, Device, D3D10_DEVICE_FACE};
use super::super::guard::guard;
use super::super::object::face;
use super::device::make_d3d10;

/// Every `D3D10_CREATE_DEVICE_FLAG` bit.
const KNOWN_CREATE_FLAGS: u32 = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20 | 0x80 | 0x200 | 0x400;

/// What `D3D10CreateDevice[1]` checks; creates the device unless only validation was asked for.
///
/// # Safety
/// `adapter` is null or an application interface pointer (checked against the registry).
unsafe fn create_device(
    adapter: *mut IDXGIAdapter,
    driver_type: D3D10_DRIVER_TYPE,
    software: HMODULE,
    flags: u32,
    level: D3D_FEATURE_LEVEL,
    validate_only: bool,
) -> Result<Option<*mut Device>, HRESULT> {
    if flags & !KNOWN_CREATE_FLAGS != 0 {
        // D3D10_CREATE_DEVICE_FLAG: only the defined bits.
        return Err(E_INVALIDARG);
    }
    // D3D10CreateDevice: pAdapter is the adapter "when creating a hardware device; otherwise set
    // this parameter to NULL" (D3D11 expresses the same as DriverType UNKNOWN with an adapter).
    let d3d_type = match driver_type {
        D3D10_DRIVER_TYPE_HARDWARE if !adapter.is_null() => D3D_DRIVER_TYPE_UNKNOWN,
        D3D10_DRIVER_TYPE_HARDWARE => D3D_DRIVER_TYPE_HARDWARE,
        D3D10_DRIVER_TYPE_REFERENCE => D3D_DRIVER_TYPE_REFERENCE,
        D3D10_DRIVER_TYPE_NULL => D3D_DRIVER_TYPE_NULL,
        D3D10_DRIVER_TYPE_SOFTWARE => D3D_DRIVER_TYPE_SOFTWARE,
        D3D10_DRIVER_TYPE_WARP => D3D_DRIVER_TYPE_WARP,
        // D3D10_DRIVER_TYPE: only the defined values.
        _ => return Err(E_INVALIDARG),
    };
    if d3d_type == D3D_DRIVER_TYPE_UNKNOWN && !software.is_null() {
        // Software: a module only for D3D10_DRIVER_TYPE_SOFTWARE ("Set to NULL" otherwise).
        return Err(E_INVALIDARG);
    }
    // SAFETY: contract for `adapter`. The D3D11 rules cover the rest: an adapter with any other
    // driver type, a foreign adapter, and a software module with the wrong driver type are
    // E_INVALIDARG; NULL devices are DXGI_ERROR_UNSUPPORTED. Flags were checked above.
    let adapter = unsafe { resolve_adapter(adapter, d3d_type, software, 0) }?;
    if validate_only {
        return Ok(None);
    }
    let device = Device::create(adapter, level, flags);
    // SAFETY: just created; not handed out yet.
    unsafe { make_d3d10(device) };
    Ok(Some(device))
}

/// Creates the device and writes its D3D10 face to `out`.
///
/// # Safety
/// As [`create_device`]; `out` is null or writable.
unsafe fn create_into<I>(
    adapter: *mut IDXGIAdapter,
    driver_type: D3D10_DRIVER_TYPE,
    software: HMODULE,
    flags: u32,
    level: D3D_FEATURE_LEVEL,
    out: *mut *mut I,
) -> HRESULT {
    // SAFETY: contract.
    unsafe { clear_out(out) };
    // SAFETY: contract.
    match unsafe { create_device(adapter, driver_type, software, flags, level, out.is_null()) } {
        // D3D10CreateDevice: S_FALSE when ppDevice is NULL and the arguments are valid.
        Ok(None) => S_FALSE,
        Ok(Some(device)) => {
            // SAFETY: non-null and writable (contract); the creation's reference goes to the
            // caller.
            unsafe { *out = face(device, D3D10_DEVICE_FACE) };
            S_OK
        }
        Err(hr) => hr,
    }
}

/// Creates a Direct3D 10 device (feature level 10_0).
///
/// # Safety
/// `pAdapter` null or an interface pointer; `ppDevice` null or writable.
#[no_mangle]
pub unsafe extern "system" fn D3D10CreateDevice(
    pAdapter: *mut IDXGIAdapter,
    DriverType: D3D10_DRIVER_TYPE,
    Software: HMODULE,
    Flags: u32,
    SDKVersion: u32,
    ppDevice: *mut *mut ID3D10Device,
) -> HRESULT {
    guard(E_FAIL, || {
        if SDKVersion != D3D10_SDK_VERSION {
            // SAFETY: null or writable (contract).
            unsafe { clear_out(ppDevice) };
            // SDKVersion: "the version of the SDK ... D3D10_SDK_VERSION"; any other is invalid.
            return E_INVALIDARG;
        }
        // SAFETY: contract.
        unsafe {
            create_into(
                pAdapter,
                DriverType,
                Software,
                Flags,
                D3D_FEATURE_LEVEL_10_0,
                ppDevice,
            )
        }
    })
}

/// The body of the `...AndSwapChain` entry points: `create` makes the device when no swap chain
/// is asked for; a swap chain needs an output, which this headless runtime does not have.
///
/// # Safety
/// `pSwapChainDesc` is null or readable; the out pointers are null or writable.
unsafe fn without_swap_chain<I>(
    desc: *mut DXGI_SWAP_CHAIN_DESC,
    swap_chain: *mut *mut IDXGISwapChain,
    device: *mut *mut I,
    create: impl FnOnce() -> HRESULT,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: null or writable (contract).
        unsafe { clear_out(swap_chain) };
        if desc.is_null() && swap_chain.is_null() {
            return create();
        }
        // SAFETY: null or writable (contract).
        unsafe { clear_out(device) };
        // No output can present here (IDXGIFactory::CreateSwapChain answers the same).
        DXGI_ERROR_UNSUPPORTED
    })
}

/// `D3D10CreateDevice` plus a swap chain: without a swap-chain request (both `pSwapChainDesc` and
/// `ppSwapChain` NULL) it is `D3D10CreateDevice`; with one, `DXGI_ERROR_UNSUPPORTED`.
///
/// # Safety
/// As [`D3D10CreateDevice`]; `pSwapChainDesc` null or readable, `ppSwapChain` null or writable.
#[no_mangle]
pub unsafe extern "system" fn D3D10CreateDeviceAndSwapChain(
    pAdapter: *mut IDXGIAdapter,
    DriverType: D3D10_DRIVER_TYPE,
    Software: HMODULE,
    Flags: u32,
    SDKVersion: u32,
    pSwapChainDesc: *mut DXGI_SWAP_CHAIN_DESC,
    ppSwapChain: *mut *mut IDXGISwapChain,
    ppDevice: *mut *mut ID3D10Device,
) -> HRESULT {
    // SAFETY: contract (and the same contract for the device).
    unsafe {
        without_swap_chain(pSwapChainDesc, ppSwapChain, ppDevice, || {
            D3D10CreateDevice(pAdapter, DriverType, Software, Flags, SDKVersion, ppDevice)
        })
    }
}

/// Creates a Direct3D 10.1 device at `HardwareLevel` (10_0 or 10_1; the 9_x levels answer
/// `E_NOTIMPL`).
///
/// # Safety
/// `pAdapter` null or an interface pointer; `ppDevice` null or writable.
#[no_mangle]
pub unsafe extern "system" fn D3D10CreateDevice1(
    pAdapter: *mut IDXGIAdapter,
    DriverType: D3D10_DRIVER_TYPE,
    Software: HMODULE,
    Flags: u32,
    HardwareLevel: D3D10_FEATURE_LEVEL1,
    SDKVersion: u32,
    ppDevice: *mut *mut ID3D10Device1,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: null or writable (contract).
        unsafe { clear_out(ppDevice) };
        if SDKVersion != D3D10_1_SDK_VERSION {
            // SDKVersion: D3D10_1_SDK_VERSION; any other is invalid.
            return E_INVALIDARG;
        }
        // D3D10_FEATURE_LEVEL1 values are the D3D_FEATURE_LEVEL ones.
        let level = match HardwareLevel {
            D3D10_FEATURE_LEVEL_10_0 | D3D10_FEATURE_LEVEL_10_1 => HardwareLevel,
            // Feature levels 9_x have their own limits (10level9), which this runtime does not
            // implement.
            D3D10_FEATURE_LEVEL_9_1 | D3D10_FEATURE_LEVEL_9_2 | D3D10_FEATURE_LEVEL_9_3 => {
                return E_NOTIMPL
            }
            // D3D10_FEATURE_LEVEL1: only the defined values.
            _ => return E_INVALIDARG,
        };
        // SAFETY: contract.
        unsafe { create_into(pAdapter, DriverType, Software, Flags, level, ppDevice) }
    })
}

/// `D3D10CreateDevice1` plus a swap chain, with [`D3D10CreateDeviceAndSwapChain`]'s rule.
///
/// # Safety
/// As [`D3D10CreateDevice1`]; `pSwapChainDesc` null or readable, `ppSwapChain` null or writable.
#[no_mangle]
pub unsafe extern "system" fn D3D10CreateDeviceAndSwapChain1(
    pAdapter: *mut IDXGIAdapter,
    DriverType: D3D10_DRIVER_TYPE,
    Software: HMODULE,
    Flags: u32,
    HardwareLevel: D3D10_FEATURE_LEVEL1,
    SDKVersion: u32,
    pSwapChainDesc: *mut DXGI_SWAP_CHAIN_DESC,
    ppSwapChain: *mut *mut IDXGISwapChain,
    ppDevice: *mut *mut ID3D10Device1,
) -> HRESULT {
    // SAFETY: contract (and the same contract for the device).
    unsafe {
        without_swap_chain(pSwapChainDesc, ppSwapChain, ppDevice, || {
            let level = HardwareLevel;
            D3D10CreateDevice1(
                pAdapter, DriverType, Software, Flags, level, SDKVersion, ppDevice,
            )
        })
    }
}

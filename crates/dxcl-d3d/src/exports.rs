//! The C entry points of `libdxcl_d3d.so`: `D3D11CreateDevice`, `D3D11CreateDeviceAndSwapChain`,
//! `CreateDXGIFactory`, `CreateDXGIFactory1`. (`D3D10CreateDevice*` belong to `com::d3d10`.)

use std::ptr;

use crate::com::abi::*;
use crate::com::clear_out;
use crate::com::device::{choose_feature_level, resolve_adapter, Device, DEVICE_FACE};
use crate::com::dxgi::Factory;
use crate::com::guard::guard;
use crate::com::object::{face, query_interface, release};

pub use crate::com::d3d10::exports::{
    D3D10CreateDevice, D3D10CreateDevice1, D3D10CreateDeviceAndSwapChain,
    D3D10CreateDeviceAndSwapChain1,
};

/// Creates a device on the adapter `pAdapter` (or the one the driver type selects).
///
/// # Safety
/// Pointers follow the Direct3D 11 contract: `pFeatureLevels` readable for `FeatureLevels`
/// values, out pointers null or writable, `pAdapter` null or an interface pointer.
#[no_mangle]
pub unsafe extern "system" fn D3D11CreateDevice(
    pAdapter: *mut IDXGIAdapter,
    DriverType: D3D_DRIVER_TYPE,
    Software: HMODULE,
    Flags: u32,
    pFeatureLevels: *const D3D_FEATURE_LEVEL,
    FeatureLevels: u32,
    _SDKVersion: u32,
    ppDevice: *mut *mut ID3D11Device,
    pFeatureLevel: *mut D3D_FEATURE_LEVEL,
    ppImmediateContext: *mut *mut ID3D11DeviceContext,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: out pointers are null or writable (contract).
        unsafe {
            clear_out(ppDevice);
            clear_out(ppImmediateContext);
        }
        // SAFETY: contract for `pAdapter` (checked against the registry inside).
        let adapter = match unsafe { resolve_adapter(pAdapter, DriverType, Software, Flags) } {
            Ok(a) => a,
            Err(hr) => return hr,
        };
        // SAFETY: contract for the level list.
        let level = match unsafe { choose_feature_level(pFeatureLevels, FeatureLevels) } {
            Ok(l) => l,
            Err(hr) => return hr,
        };
        if !pFeatureLevel.is_null() {
            // SAFETY: non-null and writable (contract).
            unsafe { *pFeatureLevel = level };
        }
        if ppDevice.is_null() && ppImmediateContext.is_null() {
            // D3D11CreateDevice: with both ppDevice and ppImmediateContext NULL it only reports the
            // feature level it would create, and returns S_FALSE.
            return S_FALSE;
        }
        let device = Device::create(adapter, level, Flags);
        // SAFETY: `device` was just created with one public reference.
        let d = unsafe { &*device };
        if !ppImmediateContext.is_null() {
            // SAFETY: non-null and writable (contract).
            unsafe { *ppImmediateContext = d.immediate_context() };
        }
        if ppDevice.is_null() {
            // Only the context was asked for: it keeps the device alive through its reference.
            // SAFETY: we own the creation's public reference.
            unsafe { release(device) };
        } else {
            // SAFETY: non-null and writable; the creation's reference goes to the caller.
            unsafe { *ppDevice = face(device, DEVICE_FACE) };
        }
        S_OK
    })
}

/// `D3D11CreateDevice` plus a swap chain. Without a swap chain request (both `pSwapChainDesc` and
/// `ppSwapChain` NULL) it is `D3D11CreateDevice`; a swap chain needs an output, which a headless
/// runtime does not have: `DXGI_ERROR_UNSUPPORTED`.
///
/// # Safety
/// As [`D3D11CreateDevice`]; `ppSwapChain` null or writable.
#[no_mangle]
pub unsafe extern "system" fn D3D11CreateDeviceAndSwapChain(
    pAdapter: *mut IDXGIAdapter,
    DriverType: D3D_DRIVER_TYPE,
    Software: HMODULE,
    Flags: u32,
    pFeatureLevels: *const D3D_FEATURE_LEVEL,
    FeatureLevels: u32,
    SDKVersion: u32,
    pSwapChainDesc: *const DXGI_SWAP_CHAIN_DESC,
    ppSwapChain: *mut *mut IDXGISwapChain,
    ppDevice: *mut *mut ID3D11Device,
    pFeatureLevel: *mut D3D_FEATURE_LEVEL,
    ppImmediateContext: *mut *mut ID3D11DeviceContext,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: null or writable (contract).
        unsafe {
            clear_out(ppSwapChain);
        }
        if !pSwapChainDesc.is_null() || !ppSwapChain.is_null() {
            // SAFETY: null or writable (contract).
            unsafe {
                clear_out(ppDevice);
                clear_out(ppImmediateContext);
            }
            // No output can present on this runtime (IDXGIFactory::CreateSwapChain answers the
            // same).
            return DXGI_ERROR_UNSUPPORTED;
        }
        // SAFETY: same contract.
        unsafe {
            D3D11CreateDevice(
                pAdapter,
                DriverType,
                Software,
                Flags,
                pFeatureLevels,
                FeatureLevels,
                SDKVersion,
                ppDevice,
                pFeatureLevel,
                ppImmediateContext,
            )
        }
    })
}

/// # Safety
/// `riid` readable; `ppFactory` null or writable.
unsafe fn create_factory(riid: *const GUID, out: *mut *mut c_void) -> HRESULT {
    if out.is_null() {
        // CreateDXGIFactory: ppFactory is required.
        return E_INVALIDARG;
    }
    // SAFETY: non-null and writable (contract).
    unsafe { *out = ptr::null_mut() };
    let f = Factory::create();
    // SAFETY: `f` is alive (our reference); riid/out follow the contract.
    let hr = unsafe { query_interface(&*f, riid, out) };
    // SAFETY: drop the creation reference; the caller holds its own on success.
    unsafe { release(f) };
    hr
}

/// # Safety
/// `riid` readable; `ppFactory` null or writable.
#[no_mangle]
pub unsafe extern "system" fn CreateDXGIFactory(
    riid: *const GUID,
    ppFactory: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: contract.
    guard(E_FAIL, || unsafe { create_factory(riid, ppFactory) })
}

/// # Safety
/// `riid` readable; `ppFactory` null or writable.
#[no_mangle]
pub unsafe extern "system" fn CreateDXGIFactory1(
    riid: *const GUID,
    ppFactory: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: contract.
    guard(E_FAIL, || unsafe { create_factory(riid, ppFactory) })
}

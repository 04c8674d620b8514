//! What the layer's integration tests share: the OpenCL API (opencl-sys's declarations, linked
//! against the loader), this layer loaded through `OPENCL_LAYERS`, the platform and device, the
//! layer's extension functions, and Direct3D 11 devices of dxcl's runtime, in-process.

// Each test binary uses part of it. clCreateCommandQueue: what OpenCL 1.2 applications call (its
// successor is 2.0's).
#![allow(dead_code, deprecated)]

use std::ffi::{c_void, CStr};
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

use dxcl_abi::{ID3D11Device, ID3D11DeviceContext, D3D11_SDK_VERSION, D3D_DRIVER_TYPE, HRESULT};
use opencl_sys::{
    clCreateCommandQueue, clCreateContext, clGetDeviceIDs,
    clGetExtensionFunctionAddressForPlatform, clGetPlatformIDs, cl_command_queue, cl_context,
    cl_device_id, cl_event, cl_int, cl_mem, cl_mem_flags, cl_platform_id, cl_uint,
    CL_CONTEXT_PLATFORM, CL_DEVICE_TYPE_ALL, CL_SUCCESS,
};

/// A Direct3D object as the sharing functions take it.
pub type Id = *mut c_void;

/// `clCreateFromD3D1xBuffer…`.
pub type CreateBuffer = unsafe extern "C" fn(cl_context, cl_mem_flags, Id, *mut cl_int) -> cl_mem;

/// `clEnqueueAcquireD3D1xObjects…` and `clEnqueueReleaseD3D1xObjects…`.
pub type Acquire = unsafe extern "C" fn(
    cl_command_queue,
    cl_uint,
    *const cl_mem,
    cl_uint,
    *const cl_event,
    *mut cl_event,
) -> cl_int;

/// `CL_CONTEXT_D3D11_DEVICE_KHR`.
pub const CL_CONTEXT_D3D11_DEVICE_KHR: isize = 0x401D;

/// Loads this layer (target/<profile>/libdxcl_layer.so) through `OPENCL_LAYERS` and returns the
/// first platform and its first device. The loader and PoCL initialise on their first calls:
/// those are made on one thread, once.
pub fn setup() -> (cl_platform_id, cl_device_id) {
    static FIRST: OnceLock<(usize, usize)> = OnceLock::new();
    let (p, d) = *FIRST.get_or_init(|| {
        // target/<profile>/deps/<test>-… → target/<profile>/libdxcl_layer.so
        let exe = std::env::current_exe().unwrap();
        let layer = exe
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("libdxcl_layer.so");
        // `cargo test` builds the library as an rlib only; the cdylib comes from `cargo build`
        // (`make test-rust` runs it first). Without it the loader would skip the layer silently.
        assert!(
            layer.exists(),
            "{} is missing: run `cargo build -p dxcl-layer` first",
            layer.display()
        );
        std::env::set_var("OPENCL_LAYERS", layer);
        let (mut p, mut d) = (null_mut(), null_mut());
        // SAFETY: out pointers of the right size.
        unsafe {
            assert_eq!(clGetPlatformIDs(1, &mut p, null_mut()), CL_SUCCESS);
            assert_eq!(
                clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &mut d, null_mut()),
                CL_SUCCESS
            );
        }
        (p as usize, d as usize)
    });
    (p as cl_platform_id, d as cl_device_id)
}

/// The layer's extension function `name` on `p`, as the function type `T` its signature spells.
pub fn ext<T>(p: cl_platform_id, name: &CStr) -> T {
    // SAFETY: valid platform and name.
    let f = unsafe { clGetExtensionFunctionAddressForPlatform(p, name.as_ptr()) };
    assert!(!f.is_null(), "{name:?}");
    // SAFETY: the layer returns the function with this name, whose signature T spells.
    unsafe { std::mem::transmute_copy(&f) }
}

/// A context on `d` with the D3D device property `prop` = `device`, and a queue.
pub fn context(
    p: cl_platform_id,
    d: cl_device_id,
    prop: isize,
    device: Id,
) -> (cl_context, cl_command_queue) {
    let props = [CL_CONTEXT_PLATFORM, p as isize, prop, device as isize, 0];
    let mut err = 0;
    // SAFETY: valid property list, device and out pointer.
    let ctx = unsafe { clCreateContext(props.as_ptr(), 1, &d, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    // SAFETY: valid context and device.
    let q = unsafe { clCreateCommandQueue(ctx, d, 0, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    (ctx, q)
}

/// A D3D11 device of dxcl's runtime (`driver`: HARDWARE takes the default adapter, WARP the
/// software one) and, when `immediate`, its immediate context (else null).
pub fn d3d11_device(
    driver: D3D_DRIVER_TYPE,
    immediate: bool,
) -> (*mut ID3D11Device, *mut ID3D11DeviceContext) {
    let (mut device, mut context) = (null_mut(), null_mut());
    // SAFETY: out pointers valid; no adapter.
    let hr: HRESULT = unsafe {
        dxcl_d3d::D3D11CreateDevice(
            null_mut(),
            driver,
            null_mut(),
            0,
            null(),
            0,
            D3D11_SDK_VERSION,
            &mut device,
            null_mut(),
            if immediate { &mut context } else { null_mut() },
        )
    };
    assert!(hr >= 0, "D3D11CreateDevice {hr:#x}");
    (device, context)
}

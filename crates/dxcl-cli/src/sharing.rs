//! The sharing entry points, looked up through the loader as every application must.

use crate::cl;
use dxcl_abi::{ID3D11Texture2D, IDXGIAdapter1};
use opencl_sys::*;
use std::ffi::{c_void, CString};

use dxcl_abi::sharing::D3dVersion;

// The tokens of cl_khr_d3d11_sharing, from the vocabulary (dxcl_abi::sharing).
pub const CL_D3D11_DXGI_ADAPTER_KHR: cl_uint = D3dVersion::D3D11.source_adapter();
pub const CL_D3D11_DEVICE_KHR: cl_uint = D3dVersion::D3D11.source_device();
pub const CL_PREFERRED_DEVICES_FOR_D3D11_KHR: cl_uint = D3dVersion::D3D11.set_preferred();
pub const CL_CONTEXT_D3D11_DEVICE_KHR: cl_context_properties = D3dVersion::D3D11.context_property();

pub type GetDeviceIDsFromD3D11 = unsafe extern "system" fn(
    cl_platform_id,
    cl_uint,
    *mut c_void,
    cl_uint,
    cl_uint,
    *mut cl_device_id,
    *mut cl_uint,
) -> cl_int;
pub type CreateFromD3D11Texture2D = unsafe extern "system" fn(
    cl_context,
    cl_mem_flags,
    *mut ID3D11Texture2D,
    cl_uint,
    *mut cl_int,
) -> cl_mem;
pub type EnqueueD3D11Objects = unsafe extern "system" fn(
    cl_command_queue,
    cl_uint,
    *const cl_mem,
    cl_uint,
    *const cl_event,
    *mut cl_event,
) -> cl_int;

/// Looks an extension function up for `platform`; `None` when the platform does not have it.
///
/// # Safety
/// `F` must be the function pointer type of the entry point called `name`.
pub unsafe fn lookup<F: Copy>(platform: cl_platform_id, name: &str) -> Option<F> {
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    let cname = CString::new(name).ok()?;
    // SAFETY: a plain query of the loader with a valid C string.
    let f = unsafe { cl::clGetExtensionFunctionAddressForPlatform(platform, cname.as_ptr()) };
    // SAFETY: the caller names the type of this entry point, and `F` is pointer-sized.
    (!f.is_null()).then(|| unsafe { std::mem::transmute_copy::<*mut c_void, F>(&f) })
}

/// The CL devices of `platform` that the layer matches to a DXGI adapter (the preferred set).
pub fn devices_for_adapter(
    platform: cl_platform_id,
    adapter: *mut IDXGIAdapter1,
) -> Result<Vec<cl_device_id>, cl::ClError> {
    // SAFETY: the name and the type agree (cl_d3d11.h).
    let Some(get) =
        (unsafe { lookup::<GetDeviceIDsFromD3D11>(platform, "clGetDeviceIDsFromD3D11KHR") })
    else {
        return Ok(Vec::new());
    };
    let mut n = 0;
    // SAFETY: the size query writes only `n`; the adapter is live.
    let status = unsafe {
        get(
            platform,
            CL_D3D11_DXGI_ADAPTER_KHR,
            adapter.cast(),
            CL_PREFERRED_DEVICES_FOR_D3D11_KHR,
            0,
            std::ptr::null_mut(),
            &mut n,
        )
    };
    if status == CL_DEVICE_NOT_FOUND {
        return Ok(Vec::new());
    }
    cl::check("clGetDeviceIDsFromD3D11KHR", status)?;
    let mut ids = vec![std::ptr::null_mut(); n as usize];
    // SAFETY: `ids` has room for `n` handles.
    cl::check("clGetDeviceIDsFromD3D11KHR", unsafe {
        get(
            platform,
            CL_D3D11_DXGI_ADAPTER_KHR,
            adapter.cast(),
            CL_PREFERRED_DEVICES_FOR_D3D11_KHR,
            n,
            ids.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    })?;
    Ok(ids)
}

pub type CreateFromD3D11Buffer = unsafe extern "system" fn(
    cl_context,
    cl_mem_flags,
    *mut dxcl_abi::ID3D11Buffer,
    *mut cl_int,
) -> cl_mem;

/// `cl_khr_d3d11_sharing`'s entry points on one platform, as the demo and the bench call them.
#[derive(Clone, Copy)]
pub struct D3d11Sharing {
    pub get_ids: GetDeviceIDsFromD3D11,
    pub create_buffer: CreateFromD3D11Buffer,
    pub create_texture: CreateFromD3D11Texture2D,
    pub acquire: EnqueueD3D11Objects,
    pub release: EnqueueD3D11Objects,
}

impl D3d11Sharing {
    /// `None` unless `platform` has every one of them.
    pub fn lookup(platform: cl_platform_id) -> Option<D3d11Sharing> {
        // SAFETY: names and types agree with cl_d3d11.h.
        unsafe {
            Some(D3d11Sharing {
                get_ids: lookup(platform, "clGetDeviceIDsFromD3D11KHR")?,
                create_buffer: lookup(platform, "clCreateFromD3D11BufferKHR")?,
                create_texture: lookup(platform, "clCreateFromD3D11Texture2DKHR")?,
                acquire: lookup(platform, "clEnqueueAcquireD3D11ObjectsKHR")?,
                release: lookup(platform, "clEnqueueReleaseD3D11ObjectsKHR")?,
            })
        }
    }
}

/// The first of `platform`'s preferred CL devices for the D3D11 `device`, through `get_ids`.
pub fn preferred_device(
    get_ids: GetDeviceIDsFromD3D11,
    platform: cl_platform_id,
    device: *mut dxcl_abi::ID3D11Device,
) -> Result<cl_device_id, cl::ClError> {
    let mut d: cl_device_id = std::ptr::null_mut();
    // SAFETY: one entry asked for, one offered; the caller's D3D device is live.
    cl::check("clGetDeviceIDsFromD3D11KHR", unsafe {
        get_ids(
            platform,
            CL_D3D11_DEVICE_KHR,
            device.cast(),
            CL_PREFERRED_DEVICES_FOR_D3D11_KHR,
            1,
            &mut d,
            std::ptr::null_mut(),
        )
    })?;
    Ok(d)
}

/// A CL context of `platform` on `cl_device`, shared with the D3D11 `device`.
pub fn d3d11_context(
    platform: cl_platform_id,
    device: *mut dxcl_abi::ID3D11Device,
    cl_device: cl_device_id,
) -> Result<cl::ClHandle<cl_context>, cl::ClError> {
    let props: [cl_context_properties; 5] = [
        CL_CONTEXT_PLATFORM as cl_context_properties,
        platform as cl_context_properties,
        CL_CONTEXT_D3D11_DEVICE_KHR,
        device as cl_context_properties,
        0,
    ];
    let mut err = 0;
    // SAFETY: a zero-terminated property list and one valid device.
    let context = unsafe {
        cl::clCreateContext(
            props.as_ptr(),
            1,
            &cl_device,
            std::ptr::null(),
            std::ptr::null_mut(),
            &mut err,
        )
    };
    cl::check("clCreateContext", err)?;
    Ok(cl::ClHandle(context, cl::clReleaseContext))
}

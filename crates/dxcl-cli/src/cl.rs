//! The few OpenCL calls the command line makes, linked against the system loader (libOpenCL).
//!
//! Declared here rather than through opencl-sys's `static` feature: cargo unifies features across the
//! workspace, and the layer must never link the loader it is loaded by.

use opencl_sys::*;
use std::ffi::{c_void, CStr};
use std::ptr;

#[link(name = "OpenCL")]
extern "system" {
    pub fn clGetPlatformIDs(n: cl_uint, out: *mut cl_platform_id, num: *mut cl_uint) -> cl_int;
    pub fn clGetPlatformInfo(
        p: cl_platform_id,
        name: cl_platform_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
    pub fn clGetDeviceIDs(
        p: cl_platform_id,
        ty: cl_device_type,
        n: cl_uint,
        out: *mut cl_device_id,
        num: *mut cl_uint,
    ) -> cl_int;
    pub fn clGetDeviceInfo(
        d: cl_device_id,
        name: cl_device_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
    pub fn clGetExtensionFunctionAddressForPlatform(
        p: cl_platform_id,
        name: *const std::ffi::c_char,
    ) -> *mut c_void;
    pub fn clCreateContext(
        props: *const cl_context_properties,
        n: cl_uint,
        devices: *const cl_device_id,
        notify: *const c_void,
        user: *mut c_void,
        err: *mut cl_int,
    ) -> cl_context;
    pub fn clReleaseContext(c: cl_context) -> cl_int;
    pub fn clCreateCommandQueueWithProperties(
        c: cl_context,
        d: cl_device_id,
        props: *const cl_queue_properties,
        err: *mut cl_int,
    ) -> cl_command_queue;
    pub fn clReleaseCommandQueue(q: cl_command_queue) -> cl_int;
    pub fn clCreateProgramWithSource(
        c: cl_context,
        n: cl_uint,
        src: *const *const std::ffi::c_char,
        lens: *const usize,
        err: *mut cl_int,
    ) -> cl_program;
    pub fn clBuildProgram(
        p: cl_program,
        n: cl_uint,
        devices: *const cl_device_id,
        options: *const std::ffi::c_char,
        notify: *const c_void,
        user: *mut c_void,
    ) -> cl_int;
    pub fn clGetProgramBuildInfo(
        p: cl_program,
        d: cl_device_id,
        name: cl_program_build_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
    pub fn clReleaseProgram(p: cl_program) -> cl_int;
    pub fn clCreateKernel(
        p: cl_program,
        name: *const std::ffi::c_char,
        err: *mut cl_int,
    ) -> cl_kernel;
    pub fn clReleaseKernel(k: cl_kernel) -> cl_int;
    pub fn clSetKernelArg(k: cl_kernel, i: cl_uint, size: usize, value: *const c_void) -> cl_int;
    pub fn clEnqueueNDRangeKernel(
        q: cl_command_queue,
        k: cl_kernel,
        dims: cl_uint,
        offset: *const usize,
        global: *const usize,
        local: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    pub fn clReleaseMemObject(m: cl_mem) -> cl_int;
    pub fn clReleaseEvent(e: cl_event) -> cl_int;
    pub fn clGetMemObjectInfo(
        m: cl_mem,
        name: cl_mem_info,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int;
}

/// An OpenCL error code with the call that returned it.
#[derive(Debug)]
pub struct ClError {
    pub call: &'static str,
    pub code: cl_int,
}

impl std::fmt::Display for ClError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.code == CL_PLATFORM_NOT_FOUND_KHR {
            // What a new user meets first on a machine without an OpenCL driver: say what to do.
            let vendors = std::env::var("OCL_ICD_VENDORS")
                .map(|v| format!("OCL_ICD_VENDORS={v}"))
                .unwrap_or_else(|_| "/etc/OpenCL/vendors".into());
            return write!(
                f,
                "no OpenCL platform found ({} returned CL_PLATFORM_NOT_FOUND_KHR, {}): the \
                 OpenCL loader found no platform driver (ICD) in {vendors}.\n\
                 Install one: on Debian or Ubuntu, `apt install pocl-opencl-icd` (any CPU) or \
                 your GPU vendor's OpenCL ICD, with the loader `ocl-icd-libopencl1`.",
                self.call, self.code
            );
        }
        write!(f, "{} failed with {}", self.call, self.code)
    }
}

impl std::error::Error for ClError {}

/// Turns a status into a `Result`, naming the call.
pub fn check(call: &'static str, code: cl_int) -> Result<(), ClError> {
    if code == CL_SUCCESS {
        Ok(())
    } else {
        Err(ClError { call, code })
    }
}

/// Runs the size-query protocol of a `clGet*Info` call and returns the raw bytes.
fn info_bytes(
    call: &'static str,
    query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int,
) -> Result<Vec<u8>, ClError> {
    let mut size = 0usize;
    check(call, query(0, ptr::null_mut(), &mut size))?;
    let mut bytes = vec![0u8; size];
    check(
        call,
        query(size, bytes.as_mut_ptr().cast(), ptr::null_mut()),
    )?;
    Ok(bytes)
}

fn bytes_to_string(bytes: &[u8]) -> String {
    CStr::from_bytes_until_nul(bytes)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| String::from_utf8_lossy(bytes).into_owned())
}

pub fn platforms() -> Result<Vec<cl_platform_id>, ClError> {
    let mut n = 0;
    // SAFETY: the size query writes only `n`.
    check("clGetPlatformIDs", unsafe {
        clGetPlatformIDs(0, ptr::null_mut(), &mut n)
    })?;
    let mut ids = vec![ptr::null_mut(); n as usize];
    // SAFETY: `ids` has room for the `n` handles asked for.
    check("clGetPlatformIDs", unsafe {
        clGetPlatformIDs(n, ids.as_mut_ptr(), ptr::null_mut())
    })?;
    Ok(ids)
}

pub fn platform_string(p: cl_platform_id, name: cl_platform_info) -> Result<String, ClError> {
    // SAFETY: `info_bytes` passes a buffer of exactly `size` bytes (or none for the size query).
    let bytes = info_bytes("clGetPlatformInfo", |size, value, ret| unsafe {
        clGetPlatformInfo(p, name, size, value, ret)
    })?;
    Ok(bytes_to_string(&bytes))
}

pub fn devices(p: cl_platform_id) -> Result<Vec<cl_device_id>, ClError> {
    let mut n = 0;
    // SAFETY: the size query writes only `n`.
    let status = unsafe { clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, ptr::null_mut(), &mut n) };
    if status == CL_DEVICE_NOT_FOUND {
        return Ok(Vec::new());
    }
    check("clGetDeviceIDs", status)?;
    let mut ids = vec![ptr::null_mut(); n as usize];
    // SAFETY: `ids` has room for the `n` handles asked for.
    check("clGetDeviceIDs", unsafe {
        clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.as_mut_ptr(), ptr::null_mut())
    })?;
    Ok(ids)
}

pub fn device_string(d: cl_device_id, name: cl_device_info) -> Result<String, ClError> {
    // SAFETY: `info_bytes` passes a buffer of exactly `size` bytes (or none for the size query).
    let bytes = info_bytes("clGetDeviceInfo", |size, value, ret| unsafe {
        clGetDeviceInfo(d, name, size, value, ret)
    })?;
    Ok(bytes_to_string(&bytes))
}

/// A device property's raw bytes (arrays such as handle-type lists).
pub fn device_bytes(d: cl_device_id, name: cl_device_info) -> Result<Vec<u8>, ClError> {
    // SAFETY: `info_bytes` passes a buffer of exactly `size` bytes (or none for the size query).
    info_bytes("clGetDeviceInfo", |size, value, ret| unsafe {
        clGetDeviceInfo(d, name, size, value, ret)
    })
}

/// A fixed-size device property (`cl_bool`, `cl_uint`, `cl_ulong`, `cl_device_type`, …).
pub fn device_value<T: Copy + Default>(
    d: cl_device_id,
    name: cl_device_info,
) -> Result<T, ClError> {
    let mut value = T::default();
    // SAFETY: `value` is a `T` and exactly `size_of::<T>()` bytes are offered.
    check("clGetDeviceInfo", unsafe {
        clGetDeviceInfo(
            d,
            name,
            std::mem::size_of::<T>(),
            (&mut value as *mut T).cast(),
            ptr::null_mut(),
        )
    })?;
    Ok(value)
}

/// The build log of `program` for `device`, for error messages.
pub fn build_log(program: cl_program, device: cl_device_id) -> String {
    // SAFETY: `info_bytes` passes a buffer of exactly `size` bytes (or none for the size query).
    info_bytes("clGetProgramBuildInfo", |size, value, ret| unsafe {
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, value, ret)
    })
    .map(|b| bytes_to_string(&b))
    .unwrap_or_default()
}

#[link(name = "OpenCL")]
extern "system" {
    pub fn clFinish(q: cl_command_queue) -> cl_int;
    pub fn clFlush(q: cl_command_queue) -> cl_int;
    pub fn clEnqueueFillBuffer(
        q: cl_command_queue,
        buffer: cl_mem,
        pattern: *const c_void,
        pattern_size: usize,
        offset: usize,
        size: usize,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueMarkerWithWaitList(
        q: cl_command_queue,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueReadBuffer(
        q: cl_command_queue,
        buffer: cl_mem,
        blocking: cl_bool,
        offset: usize,
        size: usize,
        ptr: *mut c_void,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueWriteBuffer(
        q: cl_command_queue,
        buffer: cl_mem,
        blocking: cl_bool,
        offset: usize,
        size: usize,
        ptr: *const c_void,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueReadImage(
        q: cl_command_queue,
        image: cl_mem,
        blocking: cl_bool,
        origin: *const usize,
        region: *const usize,
        row_pitch: usize,
        slice_pitch: usize,
        ptr: *mut c_void,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
    pub fn clEnqueueWriteImage(
        q: cl_command_queue,
        image: cl_mem,
        blocking: cl_bool,
        origin: *const usize,
        region: *const usize,
        row_pitch: usize,
        slice_pitch: usize,
        ptr: *const c_void,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
}

#[link(name = "OpenCL")]
extern "system" {
    pub fn clCreateImage(
        c: cl_context,
        flags: cl_mem_flags,
        format: *const cl_image_format,
        desc: *const _cl_image_desc,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    pub fn clEnqueueCopyImage(
        q: cl_command_queue,
        src: cl_mem,
        dst: cl_mem,
        src_origin: *const usize,
        dst_origin: *const usize,
        region: *const usize,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
}

/// Releases an OpenCL object on drop.
pub struct ClHandle<T: Copy>(pub T, pub unsafe extern "system" fn(T) -> cl_int);

impl<T: Copy> Drop for ClHandle<T> {
    fn drop(&mut self) {
        // SAFETY: the handle holds one reference, released once.
        unsafe { (self.1)(self.0) };
    }
}

/// `mem`'s `CL_MEM_PROPERTIES` as the platform answers them (empty when it was made without any).
pub fn mem_properties(mem: cl_mem) -> Result<Vec<cl_mem_properties>, cl_int> {
    let unit = std::mem::size_of::<cl_mem_properties>();
    let mut size = 0usize;
    // SAFETY: the size query writes only `size`.
    let status =
        unsafe { clGetMemObjectInfo(mem, CL_MEM_PROPERTIES, 0, ptr::null_mut(), &mut size) };
    if status != CL_SUCCESS {
        return Err(status);
    }
    let mut props: Vec<cl_mem_properties> = vec![0; size / unit];
    if props.is_empty() {
        return Ok(props);
    }
    // SAFETY: `props` holds `props.len() * unit` bytes, the size offered.
    let status = unsafe {
        clGetMemObjectInfo(
            mem,
            CL_MEM_PROPERTIES,
            props.len() * unit,
            props.as_mut_ptr().cast(),
            ptr::null_mut(),
        )
    };
    if status == CL_SUCCESS {
        Ok(props)
    } else {
        Err(status)
    }
}

/// Whether `mem` was created with `CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR` among its properties.
pub fn imports_opaque_fd(mem: cl_mem) -> bool {
    // Name/value pairs, then 0.
    mem_properties(mem).is_ok_and(|props| {
        props
            .chunks_exact(2)
            .take_while(|pair| pair[0] != 0)
            .any(|pair| pair[0] == CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR as cl_mem_properties)
    })
}

//! Memory objects derived from D3D-shared objects by other OpenCL calls (images made from a D3D
//! buffer, buffers and images at a D3D object's host memory, sub-buffers of those) are guarded
//! like the D3D object: through the real loader and PoCL, with dxcl's runtime in-process.

#![allow(non_snake_case)] // CL and D3D names.

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::OnceLock;

use dxcl_abi::*;
use opencl_sys::{
    cl_bool, cl_buffer_region, cl_command_queue, cl_context, cl_context_properties, cl_device_id,
    cl_device_type, cl_event, cl_image_desc, cl_image_format, cl_int, cl_kernel, cl_mem,
    cl_mem_flags, cl_mem_properties, cl_platform_id, cl_program, cl_uint,
    CL_BUFFER_CREATE_TYPE_REGION, CL_CONTEXT_PLATFORM, CL_DEVICE_TYPE_ALL, CL_INVALID_MEM_OBJECT,
    CL_MEM_HOST_PTR, CL_MEM_OBJECT_IMAGE1D_BUFFER, CL_MEM_OBJECT_IMAGE2D, CL_MEM_READ_WRITE,
    CL_MEM_USE_HOST_PTR, CL_RGBA, CL_SUCCESS, CL_TRUE, CL_UNSIGNED_INT8,
};

type Id = *mut c_void;

/// CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR, CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR.
const NOT_ACQUIRED_11: cl_int = -1009;
const NOT_ACQUIRED_10: cl_int = -1005;
/// CL_INVALID_D3D11_RESOURCE_KHR and the CL_MEM_D3D11_RESOURCE_KHR query.
const INVALID_RESOURCE_11: cl_int = -1007;
const CL_MEM_D3D11_RESOURCE: cl_uint = 0x401E;
const BYTES: usize = 256;

#[link(name = "OpenCL")]
extern "C" {
    fn clGetPlatformIDs(n: cl_uint, p: *mut cl_platform_id, ret: *mut cl_uint) -> cl_int;
    fn clGetDeviceIDs(
        p: cl_platform_id,
        ty: cl_device_type,
        n: cl_uint,
        d: *mut cl_device_id,
        ret: *mut cl_uint,
    ) -> cl_int;
    fn clGetExtensionFunctionAddressForPlatform(
        p: cl_platform_id,
        name: *const std::ffi::c_char,
    ) -> Id;
    fn clCreateContext(
        props: *const cl_context_properties,
        n: cl_uint,
        d: *const cl_device_id,
        f: Id,
        u: Id,
        err: *mut cl_int,
    ) -> cl_context;
    fn clReleaseContext(c: cl_context) -> cl_int;
    fn clCreateCommandQueue(
        c: cl_context,
        d: cl_device_id,
        p: u64,
        err: *mut cl_int,
    ) -> cl_command_queue;
    fn clReleaseCommandQueue(q: cl_command_queue) -> cl_int;
    fn clCreateBuffer(
        c: cl_context,
        f: cl_mem_flags,
        size: usize,
        host: Id,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateBufferWithProperties(
        c: cl_context,
        props: *const cl_mem_properties,
        f: cl_mem_flags,
        size: usize,
        host: Id,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateImage(
        c: cl_context,
        f: cl_mem_flags,
        fmt: *const cl_image_format,
        desc: *const cl_image_desc,
        host: Id,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateImageWithProperties(
        c: cl_context,
        props: *const cl_mem_properties,
        f: cl_mem_flags,
        fmt: *const cl_image_format,
        desc: *const cl_image_desc,
        host: Id,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateImage2D(
        c: cl_context,
        f: cl_mem_flags,
        fmt: *const cl_image_format,
        w: usize,
        h: usize,
        pitch: usize,
        host: Id,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clCreateSubBuffer(
        m: cl_mem,
        f: cl_mem_flags,
        ty: cl_uint,
        info: *const c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clReleaseMemObject(m: cl_mem) -> cl_int;
    fn clGetMemObjectInfo(
        m: cl_mem,
        name: cl_uint,
        size: usize,
        value: Id,
        ret: *mut usize,
    ) -> cl_int;
    fn clEnqueueReadBuffer(
        q: cl_command_queue,
        m: cl_mem,
        b: cl_bool,
        o: usize,
        s: usize,
        p: Id,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clEnqueueReadImage(
        q: cl_command_queue,
        m: cl_mem,
        b: cl_bool,
        origin: *const usize,
        region: *const usize,
        row_pitch: usize,
        slice_pitch: usize,
        p: Id,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clCreateProgramWithSource(
        c: cl_context,
        n: cl_uint,
        src: *const *const std::ffi::c_char,
        len: *const usize,
        err: *mut cl_int,
    ) -> cl_program;
    fn clBuildProgram(
        p: cl_program,
        n: cl_uint,
        d: *const cl_device_id,
        opts: *const std::ffi::c_char,
        f: Id,
        u: Id,
    ) -> cl_int;
    fn clCreateKernel(p: cl_program, name: *const std::ffi::c_char, err: *mut cl_int) -> cl_kernel;
    fn clSetKernelArg(k: cl_kernel, i: cl_uint, size: usize, v: *const c_void) -> cl_int;
    fn clEnqueueNDRangeKernel(
        q: cl_command_queue,
        k: cl_kernel,
        dim: cl_uint,
        off: *const usize,
        global: *const usize,
        local: *const usize,
        n: cl_uint,
        w: *const cl_event,
        e: *mut cl_event,
    ) -> cl_int;
    fn clReleaseKernel(k: cl_kernel) -> cl_int;
    fn clReleaseProgram(p: cl_program) -> cl_int;
    fn clFinish(q: cl_command_queue) -> cl_int;
}

type CreateBuffer = unsafe extern "C" fn(cl_context, cl_mem_flags, Id, *mut cl_int) -> cl_mem;
type Acquire = unsafe extern "C" fn(
    cl_command_queue,
    cl_uint,
    *const cl_mem,
    cl_uint,
    *const cl_event,
    *mut cl_event,
) -> cl_int;

fn setup() -> (cl_platform_id, cl_device_id) {
    static FIRST: OnceLock<(usize, usize)> = OnceLock::new();
    let (p, d) = *FIRST.get_or_init(|| {
        // target/<profile>/deps/derived-… → target/<profile>/libdxcl_layer.so
        let exe = std::env::current_exe().unwrap();
        let layer = exe
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("libdxcl_layer.so");
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

fn ext<T>(p: cl_platform_id, name: &std::ffi::CStr) -> T {
    // SAFETY: valid platform and name.
    let f = unsafe { clGetExtensionFunctionAddressForPlatform(p, name.as_ptr()) };
    assert!(!f.is_null());
    // SAFETY: the layer's function of that name has signature T.
    unsafe { std::mem::transmute_copy(&f) }
}

/// A context on `d` with the D3D device property `prop` = `device`, and a queue.
fn context(
    p: cl_platform_id,
    d: cl_device_id,
    prop: isize,
    device: Id,
) -> (cl_context, cl_command_queue) {
    let props = [CL_CONTEXT_PLATFORM, p as isize, prop, device as isize, 0];
    let mut err = 0;
    // SAFETY: valid property list, device and out pointer.
    let ctx = unsafe { clCreateContext(props.as_ptr(), 1, &d, null_mut(), null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    // SAFETY: valid context and device.
    let q = unsafe { clCreateCommandQueue(ctx, d, 0, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    (ctx, q)
}

const RGBA8: cl_image_format = cl_image_format {
    image_channel_order: CL_RGBA,
    image_channel_data_type: CL_UNSIGNED_INT8,
};

/// An image description of `BYTES / 4` RGBA8 texels over `buffer`.
fn image_desc(image_type: cl_uint, buffer: cl_mem) -> cl_image_desc {
    // SAFETY: all-zero is a valid cl_image_desc (integers and a null handle).
    let mut desc: cl_image_desc = unsafe { std::mem::zeroed() };
    desc.image_type = image_type;
    desc.image_width = BYTES / 4;
    desc.image_height = 1;
    desc.buffer = buffer;
    desc
}

/// Reads an image's BYTES / 4 texels; the status of the enqueue.
fn read_image(q: cl_command_queue, image: cl_mem) -> cl_int {
    let mut out = [0u8; BYTES];
    let (origin, region) = ([0usize; 3], [BYTES / 4, 1, 1]);
    // SAFETY: valid queue; our own buffer large enough for the region.
    unsafe {
        clEnqueueReadImage(
            q,
            image,
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            0,
            0,
            out.as_mut_ptr().cast(),
            0,
            null(),
            null_mut(),
        )
    }
}

/// Reads a buffer's first 16 bytes; the status of the enqueue.
fn read_buffer(q: cl_command_queue, buffer: cl_mem) -> cl_int {
    let mut out = [0u8; 16];
    // SAFETY: valid queue; our own 16-byte buffer.
    unsafe {
        clEnqueueReadBuffer(
            q,
            buffer,
            CL_TRUE,
            0,
            16,
            out.as_mut_ptr().cast(),
            0,
            null(),
            null_mut(),
        )
    }
}

/// A use of a memory object (an enqueue), returning the enqueue's status.
type Use<'a> = (&'a str, Box<dyn Fn() -> cl_int + 'a>);

/// Each use fails with `not_acquired` until `root` is acquired, works while it is, and fails
/// again after its release.
fn check_guarded(
    q: cl_command_queue,
    root: cl_mem,
    (acquire, release): (Acquire, Acquire),
    not_acquired: cl_int,
    uses: &[Use<'_>],
) {
    for (name, use_it) in uses {
        assert_eq!(use_it(), not_acquired, "{name} before acquire");
    }
    // SAFETY: a live queue and D3D memory object.
    let acquired = unsafe { acquire(q, 1, &root, 0, null(), null_mut()) };
    assert_eq!(acquired, CL_SUCCESS);
    for (name, use_it) in uses {
        assert_eq!(use_it(), CL_SUCCESS, "{name} while acquired");
    }
    // SAFETY: as above.
    unsafe {
        assert_eq!(release(q, 1, &root, 0, null(), null_mut()), CL_SUCCESS);
        clFinish(q);
    }
    for (name, use_it) in uses {
        assert_eq!(use_it(), not_acquired, "{name} after release");
    }
}

fn d3d11_buffer(device: *mut ID3D11Device) -> *mut ID3D11Buffer {
    let data = [7u8; BYTES];
    let desc = D3D11_BUFFER_DESC {
        ByteWidth: BYTES as u32,
        Usage: D3D11_USAGE_DEFAULT,
        BindFlags: D3D11_BIND_SHADER_RESOURCE as u32,
        ..Default::default()
    };
    let init = D3D11_SUBRESOURCE_DATA {
        pSysMem: data.as_ptr().cast(),
        SysMemPitch: 0,
        SysMemSlicePitch: 0,
    };
    let mut buf = null_mut();
    // SAFETY: a live device; valid description and initial data.
    let hr = unsafe { ((*(*device).lpVtbl).CreateBuffer)(device, &desc, &init, &mut buf) };
    assert!(hr >= 0, "CreateBuffer {hr:#x}");
    buf
}

/// A kernel writing its buffer argument.
fn kernel(ctx: cl_context, d: cl_device_id) -> (cl_program, cl_kernel) {
    let src = c"__kernel void k(__global uchar *b) { b[get_global_id(0)] = 1; }";
    let mut err = 0;
    // SAFETY: a live context and device; a NUL-terminated source and kernel name.
    unsafe {
        let prog = clCreateProgramWithSource(ctx, 1, &src.as_ptr(), null(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        assert_eq!(
            clBuildProgram(prog, 1, &d, null(), null_mut(), null_mut()),
            CL_SUCCESS
        );
        let k = clCreateKernel(prog, c"k".as_ptr(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        (prog, k)
    }
}

#[test]
fn derived_from_a_d3d11_buffer() {
    let (p, d) = setup();
    let mut device = null_mut();
    // WARP: dxcl's software adapter, whose host memory gives the host-pointer strategy.
    // SAFETY: out pointers valid; no adapter.
    let hr = unsafe {
        dxcl_d3d::D3D11CreateDevice(
            null_mut(),
            D3D_DRIVER_TYPE_WARP,
            null_mut(),
            0,
            null(),
            0,
            D3D11_SDK_VERSION,
            &mut device,
            null_mut(),
            null_mut(),
        )
    };
    assert!(hr >= 0, "D3D11CreateDevice {hr:#x}");
    let (ctx, q) = context(p, d, 0x401D, device.cast());
    let create: CreateBuffer = ext(p, c"clCreateFromD3D11BufferKHR");
    let acquire: Acquire = ext(p, c"clEnqueueAcquireD3D11ObjectsKHR");
    let release: Acquire = ext(p, c"clEnqueueReleaseD3D11ObjectsKHR");
    let (prog, k) = kernel(ctx, d);
    let mut err = 0;
    let buf = d3d11_buffer(device);
    // SAFETY: a live context and a buffer of its device.
    let root = unsafe { create(ctx, 0, buf.cast(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    // The host-pointer strategy (PoCL is a host-unified CPU device): the D3D memory's address.
    let mut host: Id = null_mut();
    // SAFETY: a live memory object; a pointer-sized out value.
    unsafe {
        clGetMemObjectInfo(
            root,
            CL_MEM_HOST_PTR,
            8,
            (&mut host as *mut Id).cast(),
            null_mut(),
        );
    }
    assert!(!host.is_null(), "host-pointer strategy expected");
    let no_props: [cl_mem_properties; 1] = [0];
    let region = cl_buffer_region {
        origin: 0,
        size: 64,
    };
    // SAFETY: live context and objects; valid descriptions; `host` spans BYTES bytes of the
    // resource's memory, which outlives every object made over it here.
    let (image1d, image_props, alias, alias_props, alias_image, alias_sub, root_sub, plain) = unsafe {
        let desc = image_desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, root);
        let image1d = clCreateImage(ctx, CL_MEM_READ_WRITE, &RGBA8, &desc, null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS, "image1d_buffer from the D3D buffer");
        let image_props = clCreateImageWithProperties(
            ctx,
            no_props.as_ptr(),
            CL_MEM_READ_WRITE,
            &RGBA8,
            &desc,
            null_mut(),
            &mut err,
        );
        assert_eq!(
            err, CL_SUCCESS,
            "clCreateImageWithProperties from the D3D buffer"
        );
        let flags = CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR;
        let alias = clCreateBuffer(ctx, flags, BYTES, host, &mut err);
        assert_eq!(err, CL_SUCCESS);
        let alias_props =
            clCreateBufferWithProperties(ctx, no_props.as_ptr(), flags, 64, host.add(64), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let alias_image = clCreateImage2D(ctx, flags, &RGBA8, BYTES / 4, 1, BYTES, host, &mut err);
        assert_eq!(err, CL_SUCCESS);
        let alias_sub = clCreateSubBuffer(
            alias,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        let root_sub = clCreateSubBuffer(
            root,
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&region as *const cl_buffer_region).cast(),
            &mut err,
        );
        assert_eq!(err, CL_SUCCESS);
        let plain = clCreateBuffer(ctx, CL_MEM_READ_WRITE, BYTES, null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        (
            image1d,
            image_props,
            alias,
            alias_props,
            alias_image,
            alias_sub,
            root_sub,
            plain,
        )
    };
    // Derived objects alias D3D memory but were not created from a D3D resource.
    for m in [image1d, alias, alias_sub, root_sub] {
        let mut r: Id = null_mut();
        // SAFETY: a live memory object; a pointer-sized out value.
        let e = unsafe {
            clGetMemObjectInfo(
                m,
                CL_MEM_D3D11_RESOURCE,
                8,
                (&mut r as *mut Id).cast(),
                null_mut(),
            )
        };
        // "CL_INVALID_D3D11_RESOURCE_KHR if param_name is CL_MEM_D3D11_RESOURCE_KHR and memobj was
        // not created by the function clCreateFromD3D11BufferKHR ..."
        assert_eq!(
            e, INVALID_RESOURCE_11,
            "CL_MEM_D3D11_RESOURCE of a derived object"
        );
        // SAFETY: a live queue and memory object.
        let e = unsafe { acquire(q, 1, &m, 0, null(), null_mut()) };
        // "CL_INVALID_MEM_OBJECT if ... mem_objects have not been created from Direct3D 11
        // resources".
        assert_eq!(e, CL_INVALID_MEM_OBJECT, "acquire of a derived object");
    }
    // A kernel launch with a derived buffer as argument.
    // SAFETY: a live kernel; a cl_mem argument.
    unsafe {
        assert_eq!(
            clSetKernelArg(
                k,
                0,
                size_of::<cl_mem>(),
                (&alias_sub as *const cl_mem).cast()
            ),
            CL_SUCCESS
        );
    }
    let launch = move || {
        let global = 16usize;
        // SAFETY: a live queue and kernel whose argument is set.
        unsafe { clEnqueueNDRangeKernel(q, k, 1, null(), &global, null(), 0, null(), null_mut()) }
    };
    let image = |m: cl_mem| Box::new(move || read_image(q, m)) as Box<dyn Fn() -> cl_int>;
    let buffer = |m: cl_mem| Box::new(move || read_buffer(q, m)) as Box<dyn Fn() -> cl_int>;
    check_guarded(
        q,
        root,
        (acquire, release),
        NOT_ACQUIRED_11,
        &[
            ("clCreateImage(mem_object)", image(image1d)),
            (
                "clCreateImageWithProperties(mem_object)",
                image(image_props),
            ),
            ("clCreateBuffer(USE_HOST_PTR)", buffer(alias)),
            (
                "clCreateBufferWithProperties(USE_HOST_PTR)",
                buffer(alias_props),
            ),
            ("clCreateImage2D(USE_HOST_PTR)", image(alias_image)),
            ("sub-buffer of an alias", buffer(alias_sub)),
            ("sub-buffer of the D3D buffer", buffer(root_sub)),
            ("kernel with a derived argument", Box::new(launch)),
        ],
    );
    // Memory that does not alias the D3D buffer is not guarded.
    assert_eq!(read_buffer(q, plain), CL_SUCCESS);
    // SAFETY: live objects released once, derived ones before the D3D object.
    unsafe {
        for m in [
            alias_sub,
            image1d,
            image_props,
            alias,
            alias_props,
            alias_image,
            plain,
        ] {
            assert_eq!(clReleaseMemObject(m), CL_SUCCESS);
        }
        clReleaseKernel(k);
        clReleaseProgram(prog);
        assert_eq!(clReleaseMemObject(root), CL_SUCCESS);
        ((*(*buf).lpVtbl).base.base.base.Release)(buf.cast());
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
        ((*(*device).lpVtbl).base.Release)(device.cast());
    }
}

#[test]
fn derived_from_a_d3d10_buffer_gives_the_d3d10_error() {
    let (p, d) = setup();
    let mut device = null_mut();
    // SAFETY: out pointer valid; default adapter.
    let hr = unsafe {
        dxcl_d3d::D3D10CreateDevice(
            null_mut(),
            D3D10_DRIVER_TYPE_HARDWARE,
            null_mut(),
            0,
            D3D10_SDK_VERSION,
            &mut device,
        )
    };
    assert!(hr >= 0, "D3D10CreateDevice {hr:#x}");
    let (ctx, q) = context(p, d, 0x4014, device.cast());
    let create: CreateBuffer = ext(p, c"clCreateFromD3D10BufferKHR");
    let acquire: Acquire = ext(p, c"clEnqueueAcquireD3D10ObjectsKHR");
    let release: Acquire = ext(p, c"clEnqueueReleaseD3D10ObjectsKHR");
    let desc = D3D10_BUFFER_DESC {
        ByteWidth: BYTES as u32,
        Usage: D3D10_USAGE_DEFAULT,
        BindFlags: D3D10_BIND_SHADER_RESOURCE as u32,
        ..Default::default()
    };
    let mut buf = null_mut();
    // SAFETY: a live device; a valid description, no initial data.
    let hr = unsafe { ((*(*device).lpVtbl).CreateBuffer)(device, &desc, null(), &mut buf) };
    assert!(hr >= 0, "CreateBuffer {hr:#x}");
    let mut err = 0;
    // SAFETY: a live context and a buffer of its device.
    let root = unsafe { create(ctx, 0, buf.cast(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    // A 2D image over the buffer (cl_khr_image2d_from_buffer, core in OpenCL 2.0) when the
    // device has it; a 1D image buffer always.
    let desc = image_desc(CL_MEM_OBJECT_IMAGE1D_BUFFER, root);
    let mut desc2d = image_desc(CL_MEM_OBJECT_IMAGE2D, root);
    desc2d.image_row_pitch = BYTES;
    // SAFETY: a live context; valid descriptions over a live buffer.
    let (image1d, image2d) = unsafe {
        let image1d = clCreateImage(ctx, CL_MEM_READ_WRITE, &RGBA8, &desc, null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let image2d = clCreateImage(
            ctx,
            CL_MEM_READ_WRITE,
            &RGBA8,
            &desc2d,
            null_mut(),
            &mut err,
        );
        (image1d, (err == CL_SUCCESS).then_some(image2d))
    };
    let mut derived = vec![image1d];
    derived.extend(image2d);
    let uses: Vec<Use<'_>> = derived
        .iter()
        .map(|&m| {
            (
                "image over the D3D10 buffer",
                Box::new(move || read_image(q, m)) as _,
            )
        })
        .collect();
    check_guarded(q, root, (acquire, release), NOT_ACQUIRED_10, &uses);
    // SAFETY: live objects released once.
    unsafe {
        for m in derived {
            assert_eq!(clReleaseMemObject(m), CL_SUCCESS);
        }
        assert_eq!(clReleaseMemObject(root), CL_SUCCESS);
        ((*(*buf).lpVtbl).base.base.base.Release)(buf.cast());
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
        ((*(*device).lpVtbl).base.Release)(device.cast());
    }
}

//! Memory objects derived from D3D-shared objects by other OpenCL calls (images made from a D3D
//! buffer, buffers and images at a D3D object's host memory, sub-buffers of those) are guarded
//! like the D3D object: through the real loader and PoCL, with dxcl's runtime in-process.

#![allow(non_snake_case)] // CL and D3D names.

mod support;

use std::ptr::{null, null_mut};

use dxcl_abi::*;
use opencl_sys::*;
use support::*;

/// CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR, CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR.
const NOT_ACQUIRED_11: cl_int = -1009;
const NOT_ACQUIRED_10: cl_int = -1005;
/// CL_INVALID_D3D11_RESOURCE_KHR and the CL_MEM_D3D11_RESOURCE_KHR query.
const INVALID_RESOURCE_11: cl_int = -1007;
const CL_MEM_D3D11_RESOURCE: cl_uint = 0x401E;
const BYTES: usize = 256;

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
            clBuildProgram(prog, 1, &d, null(), None, null_mut()),
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
    // WARP: dxcl's software adapter, whose host memory gives the host-pointer strategy.
    let (device, _) = d3d11_device(D3D_DRIVER_TYPE_WARP, false);
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
        // OpenCL 1.1's entry point, which applications still call (opencl-sys spells the
        // format pointer mutable; the call only reads it).
        let mut format = RGBA8;
        #[allow(deprecated)]
        let alias_image =
            clCreateImage2D(ctx, flags, &mut format, BYTES / 4, 1, BYTES, host, &mut err);
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

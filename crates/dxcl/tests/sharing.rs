//! End to end on dxcl's Direct3D runtime, the real OpenCL loader and PoCL, with the freshly built
//! layer in `OPENCL_LAYERS` (set here unless the environment has it; `make test-rust` builds
//! the layer first, as `cargo test` builds only its rlib).

#[path = "../examples/d3d/mod.rs"]
mod d3d;

use std::ptr;
use std::sync::Once;

use dxcl::abi::*;
use dxcl::{Access, Com, Context, Error, Flavor, Subresource, D3D10, D3D11};
use opencl3::command_queue::CommandQueue;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer, CL_MEM_WRITE_ONLY};
use opencl3::program::Program;
use opencl3::types::CL_BLOCKING;

/// Points the loader at the built layer before the process's first OpenCL call, and makes that
/// call on one thread (the loader and PoCL initialise on it).
fn setup() {
    static FIRST: Once = Once::new();
    FIRST.call_once(|| {
        if std::env::var_os("OPENCL_LAYERS").is_none() {
            // target/<profile>/deps/sharing-… → target/<profile>/libdxcl_layer.so
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
        }
        opencl3::platform::get_platforms().expect("an OpenCL platform");
    });
}

fn device() -> Com<ID3D11Device> {
    setup();
    dxcl::runtime::d3d11_device().expect("D3D11CreateDevice")
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_ne_bytes()).collect()
}

fn kernel(context: &Context<impl dxcl::Api>, source: &str, name: &str) -> Kernel {
    let program = Program::create_and_build_from_source(context.context(), source, "")
        .unwrap_or_else(|log| panic!("build: {log}"));
    Kernel::create(&program, name).unwrap()
}

const ADD: &str = "kernel void add(global uint *v, uint n) { v[get_global_id(0)] += n; }";

/// Runs `add(view, n)` over `count` values between an acquire and a release of `shared`.
fn add<A: dxcl::Api>(
    context: &Context<A>,
    queue: &CommandQueue,
    shared: &dxcl::SharedBuffer<A>,
    count: usize,
    n: u32,
) {
    let kernel = kernel(context, ADD, "add");
    let q = context.queue(queue).unwrap();
    let acquired = q.acquire(&[shared]).unwrap();
    let view = acquired.buffer::<u32>(shared);
    // SAFETY: `add` takes a `global uint *` of `count` values and a `uint`.
    unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(&view)
            .set_arg(&n)
            .set_global_work_size(count)
            .enqueue_nd_range(queue)
            .unwrap();
    }
    acquired.release().unwrap();
}

#[test]
fn buffer_round_trip_through_a_kernel() {
    let device = device();
    let values: Vec<u32> = (0..4096).map(|i| i * 7).collect();
    let buffer = d3d::buffer(&device, &bytes(&values)).unwrap();
    let context = Context::<D3D11>::new(&device).unwrap();
    let queue = context.create_queue().unwrap();
    let shared = context.buffer(&buffer, Access::ReadWrite).unwrap();
    assert_eq!(shared.size().unwrap(), 4096 * 4);
    add(&context, &queue, &shared, values.len(), 5);
    // Read by Direct3D straight after the release, with no clFinish.
    let out = words(&d3d::read_buffer(&device, &buffer).unwrap());
    let expected: Vec<u32> = values.iter().map(|v| v + 5).collect();
    assert_eq!(out, expected);
}

#[test]
fn texture2d_subresource_round_trip_through_a_kernel() {
    let device = device();
    let format = (DXGI_FORMAT_R32_UINT, 4);
    let value = |s: Subresource, x: u32, y: u32| s.mip << 24 | s.slice << 16 | y << 8 | x;
    let src = d3d::texture2d(&device, [40, 24], 3, 2, format, |s, x, y| {
        value(s, x, y).to_ne_bytes().to_vec()
    })
    .unwrap();
    let dst = d3d::texture2d(&device, [40, 24], 3, 2, format, |_, _, _| vec![0; 4]).unwrap();
    let context = Context::<D3D11>::new(&device).unwrap();
    let queue = context.create_queue().unwrap();
    let kernel = kernel(
        &context,
        "kernel void twice(read_only image2d_t s, write_only image2d_t d) {
            int2 p = (int2)(get_global_id(0), get_global_id(1));
            write_imageui(d, p, read_imageui(s, p) * 2);
        }",
        "twice",
    );
    let sub = Subresource::new(2, 1);
    let src_image = context.texture2d(&src, sub, Access::ReadOnly).unwrap();
    let dst_image = context.texture2d(&dst, sub, Access::WriteOnly).unwrap();
    assert_eq!(src_image.extent(), [10, 6, 1]);
    assert_eq!(src_image.subresource(), sub);
    assert!(src_image.texture2d().is_some_and(|t| *t == src));
    let q = context.queue(&queue).unwrap();
    let acquired = q.acquire(&[&src_image, &dst_image]).unwrap();
    // SAFETY: two 2D images of 10 × 6, read-only then write-only.
    unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(&acquired.image(&src_image))
            .set_arg(&acquired.image(&dst_image))
            .set_global_work_sizes(&[10, 6])
            .enqueue_nd_range(&queue)
            .unwrap();
    }
    acquired.release().unwrap();
    let out = words(&d3d::read_texture2d(&device, &dst, sub, 4).unwrap());
    let expected: Vec<u32> = (0..6)
        .flat_map(|y| (0..10).map(move |x| value(sub, x, y) * 2))
        .collect();
    assert_eq!(out, expected);
    // The neighbouring subresources of `dst` kept their zeros.
    for other in [Subresource::new(2, 0), Subresource::new(1, 1)] {
        let rest = d3d::read_texture2d(&device, &dst, other, 4).unwrap();
        assert!(rest.iter().all(|&b| b == 0), "{other:?}");
    }
}

#[test]
fn texture3d_mip_is_read_by_a_kernel_into_an_opencl3_buffer() {
    let device = device();
    let (w, h, d) = (8u32, 4u32, 3u32);
    let texel = |x: u32, y: u32, z: u32| vec![x as u8, y as u8, z as u8, 9];
    let texture =
        d3d::texture3d(&device, [w, h, d], (DXGI_FORMAT_R8G8B8A8_UINT, 4), texel).unwrap();
    let context = Context::<D3D11>::new(&device).unwrap();
    let queue = context.create_queue().unwrap();
    let kernel = kernel(
        &context,
        "kernel void pack(read_only image3d_t s, global uint *out) {
            int4 p = (int4)(get_global_id(0), get_global_id(1), get_global_id(2), 0);
            uint4 c = read_imageui(s, p);
            size_t i = (p.z * get_global_size(1) + p.y) * get_global_size(0) + p.x;
            out[i] = c.x | c.y << 8 | c.z << 16 | c.w << 24;
        }",
        "pack",
    );
    let image = context.texture3d(&texture, 0, Access::ReadOnly).unwrap();
    assert_eq!(image.extent(), [8, 4, 3]);
    assert!(image.texture3d().is_some());
    let n = (w * h * d) as usize;
    // SAFETY: a plain device buffer of `n` values, no host pointer.
    let out =
        unsafe { Buffer::<u32>::create(context.context(), CL_MEM_WRITE_ONLY, n, ptr::null_mut()) }
            .unwrap();
    let q = context.queue(&queue).unwrap();
    let acquired = q.acquire(&[&image]).unwrap();
    // SAFETY: a 3D image of w × h × d and a buffer of as many `uint`s.
    unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(&acquired.image(&image))
            .set_arg(&out)
            .set_global_work_sizes(&[w as usize, h as usize, d as usize])
            .enqueue_nd_range(&queue)
            .unwrap();
    }
    drop(acquired);
    let mut host = vec![0u32; n];
    // SAFETY: a blocking read of the buffer's `n` values into `host`.
    unsafe { queue.enqueue_read_buffer(&out, CL_BLOCKING, 0, &mut host, &[]) }.unwrap();
    let mut i = 0;
    for z in 0..d {
        for y in 0..h {
            for x in 0..w {
                let t = texel(x, y, z);
                assert_eq!(
                    host[i],
                    u32::from_le_bytes([t[0], t[1], t[2], t[3]]),
                    "{x},{y},{z}"
                );
                i += 1;
            }
        }
    }
    // A mip the texture does not have.
    assert_eq!(
        context
            .texture3d(&texture, 1, Access::ReadOnly)
            .unwrap_err(),
        Error::InvalidValue
    );
}

#[test]
fn double_acquire_is_already_acquired_and_dropping_the_guard_releases() {
    let device = device();
    let buffer = d3d::buffer(&device, &[0; 64]).unwrap();
    let context = Context::<D3D11>::new(&device).unwrap();
    let queue = context.create_queue().unwrap();
    let shared = context.buffer(&buffer, Access::ReadWrite).unwrap();
    let q = context.queue(&queue).unwrap();
    {
        let first = q.acquire(&[&shared]).unwrap();
        assert!(first.contains(&shared));
        let second = q.acquire(&[&shared]).unwrap_err();
        assert_eq!(second, Error::D3D11ResourceAlreadyAcquired);
        assert_eq!(
            second.to_string(),
            "CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR (-1008)"
        );
        // Acquisition is per context: a second queue sees it too.
        let other_queue = context.create_queue().unwrap();
        let other = context.queue(&other_queue).unwrap();
        assert_eq!(
            other.acquire(&[&shared]).unwrap_err(),
            Error::D3D11ResourceAlreadyAcquired
        );
    }
    // The guard's drop released it: acquiring again works, twice over.
    for _ in 0..2 {
        let again = q.acquire(&[&shared]).unwrap();
        drop(again);
    }
    // An empty list is the extension's (0, NULL) no-op.
    q.acquire(&[]).unwrap().release().unwrap();
    queue.finish().unwrap();
}

#[test]
fn explicit_release_returns_the_release_event() {
    let device = device();
    let buffer = d3d::buffer(&device, &[1; 256]).unwrap();
    let context = Context::<D3D11>::new(&device).unwrap();
    let queue = context.create_queue().unwrap();
    let shared = context.buffer(&buffer, Access::ReadOnly).unwrap();
    let q = context.queue(&queue).unwrap();
    let acquired = q.acquire(&[&shared]).unwrap();
    // CL_COMMAND_ACQUIRE_D3D11_OBJECTS_KHR, CL_COMMAND_RELEASE_D3D11_OBJECTS_KHR
    assert_eq!(acquired.event().command_type().unwrap().0, 0x4020);
    let event = acquired.release().unwrap();
    assert_eq!(event.command_type().unwrap().0, 0x4021);
    event.wait().unwrap();
    // Released: acquirable again, with a wait list.
    let again = q.acquire_after(&[&shared], &[event.get()]).unwrap();
    again.release_after(&[event.get()]).unwrap().wait().unwrap();
}

#[test]
fn using_a_raw_handle_after_release_is_not_acquired() {
    let device = device();
    let buffer = d3d::buffer(&device, &[3; 16]).unwrap();
    let context = Context::<D3D11>::new(&device).unwrap();
    let queue = context.create_queue().unwrap();
    let shared = context.buffer(&buffer, Access::ReadWrite).unwrap();
    let q = context.queue(&queue).unwrap();
    let acquired = q.acquire(&[&shared]).unwrap();
    // The one escape from the guard: a raw handle, which outlives it.
    let raw = acquired.raw(&shared);
    let mut host = [0u8; 16];
    let read = |host: &mut [u8; 16]| {
        // SAFETY: a blocking read of 16 bytes into `host` from a live memory object.
        unsafe {
            opencl3::command_queue::enqueue_read_buffer(
                queue.get(),
                raw,
                CL_BLOCKING,
                0,
                16,
                host.as_mut_ptr().cast(),
                0,
                ptr::null(),
            )
        }
        .map(|e| drop(opencl3::event::Event::new(e)))
        .map_err(Error::from_code)
    };
    read(&mut host).unwrap();
    assert_eq!(host, [3; 16]);
    acquired.release().unwrap();
    let err = read(&mut host).unwrap_err();
    assert_eq!(err, Error::D3D11ResourceNotAcquired);
    assert_eq!(err.name(), Some("CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR"));
    assert_eq!(err.code(), Some(-1009));
}

#[test]
fn creation_errors_carry_the_spec_names() {
    let device = device();
    let buffer = d3d::buffer(&device, &[0; 64]).unwrap();
    let texture = d3d::texture2d(
        &device,
        [4, 4],
        2,
        1,
        (DXGI_FORMAT_R8G8B8A8_UINT, 4),
        |_, _, _| vec![0; 4],
    )
    .unwrap();
    let context = Context::<D3D11>::new(&device).unwrap();
    let _shared = context.buffer(&buffer, Access::ReadWrite).unwrap();
    // A second memory object for the same buffer.
    let twice = context.buffer(&buffer, Access::ReadWrite).unwrap_err();
    assert_eq!(twice, Error::InvalidD3D11Resource);
    assert_eq!(twice.to_string(), "CL_INVALID_D3D11_RESOURCE_KHR (-1007)");
    // Subresources the texture does not have: mip 2 of 2, slice 1 of 1.
    for sub in [Subresource::new(2, 0), Subresource::new(0, 1)] {
        assert_eq!(
            context
                .texture2d(&texture, sub, Access::ReadOnly)
                .unwrap_err(),
            Error::InvalidValue
        );
    }
    // A resource of another device.
    let other_device = dxcl::runtime::d3d11_device().unwrap();
    let foreign = d3d::buffer(&other_device, &[0; 64]).unwrap();
    assert_eq!(
        context.buffer(&foreign, Access::ReadWrite).unwrap_err(),
        Error::InvalidD3D11Resource
    );
}

#[test]
fn nv_flavor_shares_through_the_nv_entry_points() {
    let device = device();
    let buffer = d3d::buffer(&device, &bytes(&[10, 20, 30, 40])).unwrap();
    let context = Context::<D3D11>::with_flavor(&device, Flavor::Nv).unwrap();
    assert_eq!(context.flavor(), Flavor::Nv);
    let queue = context.create_queue().unwrap();
    let shared = context.buffer(&buffer, Access::ReadWrite).unwrap();
    add(&context, &queue, &shared, 4, 1);
    assert_eq!(
        words(&d3d::read_buffer(&device, &buffer).unwrap()),
        [11, 21, 31, 41]
    );
    let q = context.queue(&queue).unwrap();
    let held = q.acquire(&[&shared]).unwrap();
    assert_eq!(
        q.acquire(&[&shared]).unwrap_err(),
        Error::D3D11ResourceAlreadyAcquired
    );
    drop(held);
}

#[test]
fn an_opencl3_context_with_the_properties_is_adopted() {
    let device = device();
    let platform = Context::<D3D11>::new(&device).unwrap().platform();
    let devices =
        dxcl::devices_for::<D3D11>(platform, &device, Flavor::Khr, dxcl::DeviceSet::Preferred)
            .unwrap();
    assert!(!devices.is_empty());
    assert!(
        !dxcl::devices_for::<D3D11>(platform, &device, Flavor::Khr, dxcl::DeviceSet::All)
            .unwrap()
            .is_empty()
    );
    let props = dxcl::context_properties::<D3D11>(platform, &device);
    let own =
        opencl3::context::Context::from_devices(&devices, &props, None, ptr::null_mut()).unwrap();
    let context = Context::<D3D11>::from_opencl3(&own, &device, Flavor::Khr).unwrap();
    // The adopted context keeps its own reference: the application's may go first.
    drop(own);
    let buffer = d3d::buffer(&device, &bytes(&[1, 2])).unwrap();
    let queue = context.create_queue().unwrap();
    let shared = context.buffer(&buffer, Access::ReadWrite).unwrap();
    add(&context, &queue, &shared, 2, 100);
    assert_eq!(
        words(&d3d::read_buffer(&device, &buffer).unwrap()),
        [101, 102]
    );

    // Without the Direct3D property, or with another device, it is not a sharing context.
    let plain =
        opencl3::context::Context::from_devices(&devices, &[], None, ptr::null_mut()).unwrap();
    assert_eq!(
        Context::<D3D11>::from_opencl3(&plain, &device, Flavor::Khr).unwrap_err(),
        Error::InvalidContext
    );
    let other_device = dxcl::runtime::d3d11_device().unwrap();
    assert_eq!(
        Context::<D3D11>::from_opencl3(context.context(), &other_device, Flavor::Khr).unwrap_err(),
        Error::InvalidContext
    );
    // A queue of another context.
    let foreign = CommandQueue::create_default_with_properties(&plain, 0, 0).unwrap();
    assert_eq!(context.queue(&foreign).unwrap_err(), Error::InvalidContext);
}

fn d3d10_buffer(
    device: &Com<ID3D10Device>,
    desc: D3D10_BUFFER_DESC,
    data: Option<&[u8]>,
) -> Com<ID3D10Buffer> {
    let init = data.map(|d| D3D10_SUBRESOURCE_DATA {
        pSysMem: d.as_ptr().cast(),
        ..Default::default()
    });
    let d = device.as_raw();
    let mut out = ptr::null_mut();
    // SAFETY: a live device, a valid description, initial data of ByteWidth bytes or none.
    let hr = unsafe {
        ((*(*d).lpVtbl).CreateBuffer)(
            d,
            &desc,
            init.as_ref().map_or(ptr::null(), |i| i as *const _),
            &mut out,
        )
    };
    assert!(SUCCEEDED(hr), "CreateBuffer {hr:#x}");
    // SAFETY: a new reference on success.
    unsafe { Com::from_raw(out) }.unwrap()
}

#[test]
fn d3d10_buffer_round_trip_through_a_kernel() {
    setup();
    let device = dxcl::runtime::d3d10_device().unwrap();
    let values: Vec<u32> = (0..1024).collect();
    let desc = D3D10_BUFFER_DESC {
        ByteWidth: 4096,
        Usage: D3D10_USAGE_DEFAULT,
        BindFlags: D3D10_BIND_SHADER_RESOURCE as u32,
        ..Default::default()
    };
    let buffer = d3d10_buffer(&device, desc, Some(&bytes(&values)));
    let context = Context::<D3D10>::new(&device).unwrap();
    let queue = context.create_queue().unwrap();
    let shared = context.buffer(&buffer, Access::ReadWrite).unwrap();
    add(&context, &queue, &shared, values.len(), 9);
    assert_eq!(
        context.buffer(&buffer, Access::ReadWrite).unwrap_err(),
        Error::InvalidD3D10Resource
    );

    // Read back through a staging buffer, as Direct3D 10 does it.
    let staging = d3d10_buffer(
        &device,
        D3D10_BUFFER_DESC {
            ByteWidth: 4096,
            Usage: D3D10_USAGE_STAGING,
            CPUAccessFlags: D3D10_CPU_ACCESS_READ as u32,
            ..Default::default()
        },
        None,
    );
    let (d, s) = (device.as_raw(), staging.as_raw());
    let mut data: *mut std::ffi::c_void = ptr::null_mut();
    // SAFETY: live device and buffers of one size; the mapping holds 4096 bytes until Unmap.
    let out = unsafe {
        ((*(*d).lpVtbl).CopyResource)(d, s.cast(), buffer.as_raw().cast());
        assert!(SUCCEEDED(((*(*s).lpVtbl).Map)(
            s,
            D3D10_MAP_READ,
            0,
            &mut data
        )));
        let out = words(std::slice::from_raw_parts(data.cast::<u8>(), 4096));
        ((*(*s).lpVtbl).Unmap)(s);
        out
    };
    let expected: Vec<u32> = values.iter().map(|v| v + 9).collect();
    assert_eq!(out, expected);
}

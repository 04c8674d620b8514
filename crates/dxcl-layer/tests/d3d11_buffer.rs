//! End to end through the real loader and PoCL with dxcl's D3D11 runtime in-process: a D3D11
//! buffer shared zero-copy (host pointer) and through the staging copy.

#![allow(non_snake_case)] // CL and D3D names.
#![allow(deprecated)] // clCreateCommandQueue, as OpenCL 1.2 applications call it.

mod support;

use std::ptr::{null, null_mut};

use dxcl_abi::*;
use opencl_sys::*;
use support::*;

fn d3d_buffer(device: *mut ID3D11Device, data: &[u8]) -> *mut ID3D11Buffer {
    let desc = D3D11_BUFFER_DESC {
        ByteWidth: data.len() as u32,
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

/// The strategy the layer named on `buf` (empty when there is no tag).
fn strategy_tag(buf: *mut ID3D11Buffer) -> String {
    let mut bytes = [0u8; 64];
    let mut size = bytes.len() as u32;
    let child = buf.cast::<dxcl_abi::ID3D11DeviceChild>();
    // SAFETY: a live buffer is a device child; `size` is the buffer's capacity.
    let hr = unsafe {
        ((*(*child).lpVtbl).GetPrivateData)(
            child,
            &dxcl_abi::interop::DXCL_PRIVATE_DATA_CL_STRATEGY,
            &mut size,
            bytes.as_mut_ptr().cast(),
        )
    };
    if hr < 0 {
        return String::new();
    }
    String::from_utf8_lossy(&bytes[..size as usize]).into_owned()
}

/// A D3D11 device of `driver` (HARDWARE: the default adapter; WARP: dxcl's software adapter) and
/// the D3D11 context properties for it on platform `p`.
fn d3d11_device_props(
    p: cl_platform_id,
    driver: D3D_DRIVER_TYPE,
) -> (*mut ID3D11Device, [isize; 5]) {
    let (device, _) = d3d11_device(driver, false);
    let props = [
        CL_CONTEXT_PLATFORM,
        p as isize,
        CL_CONTEXT_D3D11_DEVICE_KHR,
        device as isize,
        0,
    ];
    (device, props)
}

#[test]
fn buffer_round_trip_both_strategies() {
    let (p, d) = setup();
    let (device, props) = d3d11_device_props(p, D3D_DRIVER_TYPE_HARDWARE);
    let mut err = 0;
    // SAFETY: valid property list and device.
    let ctx = unsafe { clCreateContext(props.as_ptr(), 1, &d, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    // SAFETY: valid context and device.
    let q = unsafe { clCreateCommandQueue(ctx, d, 0, &mut err) };
    let create: CreateBuffer = ext(p, c"clCreateFromD3D11BufferKHR");
    let acquire: Acquire = ext(p, c"clEnqueueAcquireD3D11ObjectsKHR");
    let release: Acquire = ext(p, c"clEnqueueReleaseD3D11ObjectsKHR");
    let initial: Vec<u8> = (0..=255).collect();
    for staging in [false, true] {
        let buf = d3d_buffer(device, &initial);
        if staging {
            std::env::set_var("DXCL_STRATEGY", "staging");
        }
        // SAFETY: a live context and buffer of the context's device.
        let mem = unsafe { create(ctx, 0, buf.cast(), &mut err) };
        std::env::remove_var("DXCL_STRATEGY");
        assert_eq!(err, CL_SUCCESS, "staging={staging}");
        // SAFETY: every pointer valid for the calls below.
        unsafe {
            assert!(create(ctx, 0, buf.cast(), &mut err).is_null());
            assert_eq!(err, -1007, "second cl_mem for the same buffer");
            let mut r: Id = null_mut();
            assert_eq!(
                clGetMemObjectInfo(mem, 0x401E, 8, (&mut r as *mut Id).cast(), null_mut()),
                CL_SUCCESS
            );
            assert_eq!(r, buf.cast());
            // The layer names the strategy on the resource (DXCL_PRIVATE_DATA_CL_STRATEGY).
            let tag = strategy_tag(buf);
            if staging {
                assert_eq!(tag, "staging-copy");
            } else if std::env::var("DXCL_ADAPTER").as_deref() == Ok("software") {
                assert_eq!(
                    tag, "host-pointer",
                    "PoCL maps the software adapter's memory"
                );
            } else {
                assert!(
                    [
                        "host-pointer",
                        "staging-copy",
                        "external-memory",
                        "external-copy"
                    ]
                    .contains(&tag.as_str()),
                    "{tag:?}"
                );
            }
            let mut out = vec![0u8; 256];
            assert_eq!(
                clEnqueueReadBuffer(
                    q,
                    mem,
                    CL_TRUE,
                    0,
                    256,
                    out.as_mut_ptr().cast(),
                    0,
                    null(),
                    null_mut()
                ),
                -1009,
                "not acquired"
            );
            assert_eq!(release(q, 1, &mem, 0, null(), null_mut()), -1009);
            assert_eq!(acquire(q, 1, &mem, 0, null(), null_mut()), CL_SUCCESS);
            assert_eq!(acquire(q, 1, &mem, 0, null(), null_mut()), -1008);
            assert_eq!(
                clEnqueueReadBuffer(
                    q,
                    mem,
                    CL_TRUE,
                    0,
                    256,
                    out.as_mut_ptr().cast(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_SUCCESS
            );
            assert_eq!(out, initial, "D3D data visible to CL (staging={staging})");
            let pattern = vec![0xA5u8; 256];
            assert_eq!(
                clEnqueueWriteBuffer(
                    q,
                    mem,
                    CL_TRUE,
                    0,
                    256,
                    pattern.as_ptr().cast(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_SUCCESS
            );
            assert_eq!(release(q, 1, &mem, 0, null(), null_mut()), CL_SUCCESS);
            clFinish(q);
            // Acquire again: for the staging copy this reads the resource anew, so the CL write
            // must have reached D3D.
            assert_eq!(acquire(q, 1, &mem, 0, null(), null_mut()), CL_SUCCESS);
            assert_eq!(
                clEnqueueReadBuffer(
                    q,
                    mem,
                    CL_TRUE,
                    0,
                    256,
                    out.as_mut_ptr().cast(),
                    0,
                    null(),
                    null_mut()
                ),
                CL_SUCCESS
            );
            assert_eq!(out, pattern, "CL data back through D3D (staging={staging})");
            assert_eq!(release(q, 1, &mem, 0, null(), null_mut()), CL_SUCCESS);
            clFinish(q);
            // The application releases its buffer first; the cl_mem keeps its own reference.
            ((*(*buf).lpVtbl).base.base.base.Release)(buf.cast());
            assert_eq!(clReleaseMemObject(mem), CL_SUCCESS);
        }
    }
    // SAFETY: live objects released once.
    unsafe {
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
        ((*(*device).lpVtbl).base.Release)(device.cast());
    }
}

#[test]
fn acquire_on_a_queue_of_another_context() {
    let (p, d) = setup();
    let (device, props) = d3d11_device_props(p, D3D_DRIVER_TYPE_WARP);
    let mut err = 0;
    // Two contexts on the same D3D11 device, a queue on the second.
    // SAFETY: valid property list, device and out pointers.
    let (ctx, other, q) = unsafe {
        let ctx = clCreateContext(props.as_ptr(), 1, &d, None, null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let other = clCreateContext(props.as_ptr(), 1, &d, None, null_mut(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        let q = clCreateCommandQueue(other, d, 0, &mut err);
        assert_eq!(err, CL_SUCCESS);
        (ctx, other, q)
    };
    let create: CreateBuffer = ext(p, c"clCreateFromD3D11BufferKHR");
    let acquire: Acquire = ext(p, c"clEnqueueAcquireD3D11ObjectsKHR");
    let buf = d3d_buffer(device, &[1u8; 64]);
    // SAFETY: live objects; every pointer valid for the calls.
    unsafe {
        let mem = create(ctx, 0, buf.cast(), &mut err);
        assert_eq!(err, CL_SUCCESS);
        // The objects and the queue must belong to one context (the core rule for enqueues:
        // "CL_INVALID_CONTEXT if the context associated with command_queue and memobj are not
        // the same").
        assert_eq!(
            acquire(q, 1, &mem, 0, null(), null_mut()),
            opencl_sys::CL_INVALID_CONTEXT
        );
        assert_eq!(clReleaseMemObject(mem), CL_SUCCESS);
        ((*(*buf).lpVtbl).base.base.base.Release)(buf.cast());
        clReleaseCommandQueue(q);
        clReleaseContext(other);
        clReleaseContext(ctx);
        ((*(*device).lpVtbl).base.Release)(device.cast());
    }
}

/// OpenCL calls are thread-safe, and acquire state is one per object: when 8 threads acquire the
/// same object at once, exactly one succeeds and the others get
/// CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR; likewise exactly one of 8 releases succeeds. Each
/// thread has its own queue; every round the winner's data is checked. Both strategies.
#[test]
fn concurrent_acquires_and_releases_admit_exactly_one() {
    const THREADS: usize = 8;
    const ROUNDS: usize = 60;
    let (p, d) = setup();
    let (device, props) = d3d11_device_props(p, D3D_DRIVER_TYPE_HARDWARE);
    let mut err = 0;
    // SAFETY: valid property list and device.
    let ctx = unsafe { clCreateContext(props.as_ptr(), 1, &d, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let create: CreateBuffer = ext(p, c"clCreateFromD3D11BufferKHR");
    let acquire: Acquire = ext(p, c"clEnqueueAcquireD3D11ObjectsKHR");
    let release: Acquire = ext(p, c"clEnqueueReleaseD3D11ObjectsKHR");
    let initial: Vec<u8> = (0..64u8).collect();
    for staging in [false, true] {
        let buf = d3d_buffer(device, &initial);
        if staging {
            std::env::set_var("DXCL_STRATEGY", "staging");
        }
        // SAFETY: a live context and buffer of the context's device.
        let mem = unsafe { create(ctx, 0, buf.cast(), &mut err) };
        std::env::remove_var("DXCL_STRATEGY");
        assert_eq!(err, CL_SUCCESS);
        let barrier = std::sync::Barrier::new(THREADS);
        let (ctx_h, mem_h, dev_h) = (ctx as usize, mem as usize, d as usize);
        let outcomes: Vec<Vec<(cl_int, cl_int)>> = std::thread::scope(|s| {
            let workers: Vec<_> = (0..THREADS)
                .map(|_| {
                    let barrier = &barrier;
                    let initial = &initial;
                    s.spawn(move || {
                        let (ctx, mem) = (ctx_h as cl_context, mem_h as cl_mem);
                        let mut err = 0;
                        // SAFETY: a live context and device.
                        let q = unsafe {
                            clCreateCommandQueue(ctx, dev_h as cl_device_id, 0, &mut err)
                        };
                        assert_eq!(err, CL_SUCCESS);
                        let mut seen = Vec::new();
                        for _ in 0..ROUNDS {
                            barrier.wait();
                            // SAFETY: live queue and object; no event asked for.
                            let a = unsafe { acquire(q, 1, &mem, 0, null(), null_mut()) };
                            if a == CL_SUCCESS {
                                let mut out = vec![0u8; 64];
                                // SAFETY: a live acquired buffer of 64 bytes.
                                let r = unsafe {
                                    clEnqueueReadBuffer(
                                        q,
                                        mem,
                                        CL_TRUE,
                                        0,
                                        64,
                                        out.as_mut_ptr().cast(),
                                        0,
                                        null(),
                                        null_mut(),
                                    )
                                };
                                assert_eq!((r, &out), (CL_SUCCESS, initial));
                            }
                            barrier.wait();
                            // SAFETY: as above.
                            let r = unsafe { release(q, 1, &mem, 0, null(), null_mut()) };
                            // SAFETY: a live queue.
                            unsafe { clFinish(q) };
                            seen.push((a, r));
                        }
                        // SAFETY: our own queue, released once.
                        unsafe { clReleaseCommandQueue(q) };
                        seen
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        for round in 0..ROUNDS {
            let calls: Vec<(cl_int, cl_int)> = outcomes.iter().map(|t| t[round]).collect();
            let won = |ok: fn(&(cl_int, cl_int)) -> bool| calls.iter().filter(|c| ok(c)).count();
            assert_eq!(
                won(|c| c.0 == CL_SUCCESS),
                1,
                "round {round} (staging={staging}): acquires {calls:?}"
            );
            assert!(calls.iter().all(|c| c.0 == CL_SUCCESS || c.0 == -1008));
            assert_eq!(
                won(|c| c.1 == CL_SUCCESS),
                1,
                "round {round} (staging={staging}): releases {calls:?}"
            );
            assert!(calls.iter().all(|c| c.1 == CL_SUCCESS || c.1 == -1009));
        }
        // SAFETY: live objects released once.
        unsafe {
            assert_eq!(clReleaseMemObject(mem), CL_SUCCESS);
            ((*(*buf).lpVtbl).base.base.base.Release)(buf.cast());
        }
    }
    // SAFETY: live objects released once.
    unsafe {
        clReleaseContext(ctx);
        ((*(*device).lpVtbl).base.Release)(device.cast());
    }
}

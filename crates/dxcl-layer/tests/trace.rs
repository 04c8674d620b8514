//! `DXCL_TRACE=handoff` end to end through the real loader and PoCL with dxcl's D3D11 runtime
//! in-process: after hand-offs of a D3D11 buffer (the strategy the layer picks, then the staging
//! copy), the layer's table names the steps of the path with their calls. A process of its own:
//! the layer reads `DXCL_TRACE` once.

#![allow(non_snake_case)] // CL and D3D names.

mod support;

use std::ffi::{c_char, c_int, CString};
use std::ptr::{null, null_mut};

use dxcl_abi::*;
use opencl_sys::{
    clFinish, clReleaseCommandQueue, clReleaseContext, clReleaseMemObject, CL_SUCCESS,
};
use support::{
    context, d3d11_device, ext, setup, Acquire, CreateBuffer, CL_CONTEXT_D3D11_DEVICE_KHR,
};

type Take = unsafe extern "C" fn(*mut c_char, usize) -> usize;
type Record = unsafe extern "C" fn(c_int) -> c_int;

/// The loaded layer's switch that pauses and resumes recording (as `dxcl bench` uses it).
fn record(layer: &std::path::Path, on: bool) -> c_int {
    let path = CString::new(layer.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; RTLD_NOLOAD only finds the library the loader loaded.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    assert!(!handle.is_null(), "the loader did not load the layer");
    // SAFETY: a live handle and a NUL-terminated name.
    let f = unsafe { libc::dlsym(handle, c"dxclTraceRecord".as_ptr()) };
    assert!(!f.is_null(), "the layer exports no dxclTraceRecord");
    // SAFETY: the export's signature (src/trace.rs); it takes any int.
    let r = unsafe { (std::mem::transmute_copy::<_, Record>(&f))(c_int::from(on)) };
    // SAFETY: the handle dlopen returned above.
    unsafe { libc::dlclose(handle) };
    r
}

/// The table the loaded layer hands over (through its export, as `dxcl bench` takes it).
fn take_table(layer: &std::path::Path) -> String {
    let path = CString::new(layer.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path; RTLD_NOLOAD only finds the library the loader loaded.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    assert!(!handle.is_null(), "the loader did not load the layer");
    // SAFETY: a live handle and a NUL-terminated name.
    let f = unsafe { libc::dlsym(handle, c"dxclTraceTake".as_ptr()) };
    assert!(!f.is_null(), "the layer exports no dxclTraceTake");
    // SAFETY: the export's signature (src/trace.rs).
    let take: Take = unsafe { std::mem::transmute_copy(&f) };
    let mut buf = vec![0u8; 1 << 16];
    // SAFETY: a buffer of the size passed.
    let n = unsafe { take(buf.as_mut_ptr().cast(), buf.len()) };
    assert!(n < buf.len());
    // SAFETY: the handle dlopen returned above.
    unsafe { libc::dlclose(handle) };
    String::from_utf8(buf[..n].to_vec()).unwrap()
}

/// The calls column of the row named `step` in the first table (inside the entry points), 0 if
/// it has none.
fn calls(table: &str, step: &str) -> u64 {
    let inside = table.split("Hand-off trace, outside").next().unwrap();
    inside
        .lines()
        .map(|l| l.split('|').map(str::trim).collect::<Vec<_>>())
        .find(|cells| cells.get(1) == Some(&step))
        .map_or(0, |cells| cells[3].parse().unwrap())
}

#[test]
fn the_table_lists_the_steps_of_a_hand_off() {
    // Before the layer loads: it reads DXCL_TRACE once.
    std::env::set_var("DXCL_TRACE", "handoff");
    let (p, d) = setup();
    let layer = std::path::PathBuf::from(std::env::var("OPENCL_LAYERS").unwrap());
    let (device, _) = d3d11_device(D3D_DRIVER_TYPE_HARDWARE, false);
    let (ctx, q) = context(p, d, CL_CONTEXT_D3D11_DEVICE_KHR, device.cast());
    let mut err = 0;
    let create: CreateBuffer = ext(p, c"clCreateFromD3D11BufferKHR");
    let acquire: Acquire = ext(p, c"clEnqueueAcquireD3D11ObjectsKHR");
    let release: Acquire = ext(p, c"clEnqueueReleaseD3D11ObjectsKHR");
    // Nothing yet: creation is not a hand-off.
    let before = take_table(&layer);
    assert_eq!(
        calls(&before, "acquire entry point (its own code)"),
        0,
        "{before}"
    );
    const ROUNDS: u64 = 10;
    for staging in [false, true] {
        let desc = D3D11_BUFFER_DESC {
            ByteWidth: 4096,
            Usage: D3D11_USAGE_DEFAULT,
            BindFlags: D3D11_BIND_SHADER_RESOURCE as u32,
            ..Default::default()
        };
        let mut buf: *mut ID3D11Buffer = null_mut();
        // SAFETY: a live device; a valid description, no initial data.
        let hr = unsafe { ((*(*device).lpVtbl).CreateBuffer)(device, &desc, null(), &mut buf) };
        assert!(hr >= 0, "CreateBuffer {hr:#x}");
        if staging {
            std::env::set_var("DXCL_STRATEGY", "staging");
        }
        // SAFETY: a live context and buffer of the context's device.
        let mem = unsafe { create(ctx, 0, buf.cast(), &mut err) };
        std::env::remove_var("DXCL_STRATEGY");
        assert_eq!(err, CL_SUCCESS);
        // SAFETY: live queue and object; no events.
        unsafe {
            for _ in 0..ROUNDS {
                assert_eq!(acquire(q, 1, &mem, 0, null(), null_mut()), CL_SUCCESS);
                assert_eq!(release(q, 1, &mem, 0, null(), null_mut()), CL_SUCCESS);
                assert_eq!(clFinish(q), CL_SUCCESS);
            }
            assert_eq!(clReleaseMemObject(mem), CL_SUCCESS);
            ((*(*buf).lpVtbl).base.base.base.Release)(buf.cast());
        }
        let table = take_table(&layer);
        eprintln!("staging={staging}:{table}");
        // Every hand-off went through these steps, once per call.
        for step in [
            "acquire entry point (its own code)",
            "release entry point (its own code)",
            "clFinish entry point (its own code)",
            "registry: the context's check, the objects' claim",
            "strategy acquire (per object)",
            "strategy release (per object)",
            "hand-off finish (external command, marker)",
            "clFinish",
        ] {
            assert!(calls(&table, step) >= ROUNDS, "{step}:\n{table}");
        }
        // The queue's facts (context, device, order) are read at its first hand-off and kept
        // while no queue is released: three queries in the first pass, none in the second (the
        // same queue), not three per round.
        let queries = if staging { 0 } else { 3 };
        assert_eq!(calls(&table, "clGetCommandQueueInfo"), queries, "{table}");
        assert_eq!(
            calls(&table, "acquire entry point (its own code)"),
            ROUNDS,
            "{table}"
        );
        // The call's event is a marker of the platform's (host pointer: the marker is all; the
        // staging copy: after its copies).
        assert!(
            calls(&table, "clEnqueueMarkerWithWaitList") >= ROUNDS,
            "{table}"
        );
        assert!(table.contains("- by whom: dxcl layer"), "{table}");
        // Taken: zeroed.
        assert_eq!(
            calls(&take_table(&layer), "acquire entry point (its own code)"),
            0
        );
    }
    // Paused, the layer records none of the calls between (the bench's quiet floor markers);
    // resumed, it records again.
    assert_eq!(record(&layer, false), 1);
    // SAFETY: a live queue.
    unsafe { assert_eq!(clFinish(q), CL_SUCCESS) };
    assert_eq!(record(&layer, true), 1);
    let paused = take_table(&layer);
    assert_eq!(
        calls(&paused, "clFinish entry point (its own code)"),
        0,
        "{paused}"
    );
    // SAFETY: a live queue.
    unsafe { assert_eq!(clFinish(q), CL_SUCCESS) };
    let resumed = take_table(&layer);
    assert_eq!(
        calls(&resumed, "clFinish entry point (its own code)"),
        1,
        "{resumed}"
    );
    // SAFETY: live objects released once.
    unsafe {
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
        ((*(*device).lpVtbl).base.Release)(device.cast());
    }
}

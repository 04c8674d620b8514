//! `DXCL_TRACE=handoff` under Wine: what the bridge adds to a hand-off, printed on stderr when
//! `dxclcl.dll` detaches (the program's exit).
//!
//! - The stand-ins' round trips (remote.rs), per vtable slot: how many, their mean time from the
//!   layer's call to its return, and the part the Windows method itself took (timed by the server
//!   thread, `struct dxcl_request`'s `done_ns`); the difference is the bridge's own cost per call.
//! - The layer's own step table (`dxclTraceTake`, as `dxcl bench` prints it), which the layer
//!   keeps in the unix side's process as it does on Linux.
//!
//! Off (the default), a round trip costs one relaxed atomic load more.

use std::collections::BTreeMap;
use std::ffi::{c_char, CString};
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Mutex;

/// 0: `DXCL_TRACE` not read yet; 1: off; 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);

/// Whether `DXCL_TRACE=handoff` is set (read once): the layer's own switch.
pub fn on() -> bool {
    match STATE.load(Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let on =
                std::env::var("DXCL_TRACE").is_ok_and(|v| v.split(',').any(|w| w == "handoff"));
            STATE.store(if on { 2 } else { 1 }, Relaxed);
            on
        }
    }
}

/// Per vtable slot: (calls, round-trip ns, Windows method ns).
static TRIPS: Mutex<BTreeMap<u32, (u64, u64, u64)>> = Mutex::new(BTreeMap::new());
/// Deferred Unmaps (remote.rs: run first by the next request, no round trip of their own).
static DEFERRED: AtomicU64 = AtomicU64::new(0);
/// The program's acquire calls (`clEnqueueAcquireD3D1xObjects*`), to count per hand-off.
static ACQUIRES: AtomicU64 = AtomicU64::new(0);

/// One stand-in call of method `slot`: `round_trip_ns` in all, `method_ns` of it in the method.
pub fn trip(slot: u32, round_trip_ns: u64, method_ns: u64) {
    let mut t = TRIPS.lock().unwrap_or_else(|e| e.into_inner());
    let e = t.entry(slot).or_default();
    e.0 += 1;
    e.1 += round_trip_ns;
    e.2 += method_ns.min(round_trip_ns);
}

/// One deferred method (an Unmap).
pub fn deferred() {
    DEFERRED.fetch_add(1, Relaxed);
}

/// One acquire entry point call of the program's.
pub fn acquire() {
    if on() {
        ACQUIRES.fetch_add(1, Relaxed);
    }
}

/// The round-trip table (Markdown).
fn trips_table() -> String {
    let t = TRIPS.lock().unwrap_or_else(|e| e.into_inner());
    let acquires = ACQUIRES.load(Relaxed);
    let mut out =
        String::from("\nBridge round trips (stand-ins' calls run on a Windows thread):\n");
    let _ = writeln!(
        out,
        "\n| slot | calls | mean round trip µs | mean method µs | mean bridge µs |"
    );
    let _ = writeln!(out, "| ---: | ---: | ---: | ---: | ---: |");
    let (mut calls, mut all, mut method) = (0u64, 0u64, 0u64);
    for (slot, &(n, rt, m)) in t.iter() {
        let mean = |ns: u64| ns as f64 / n as f64 / 1e3;
        let _ = writeln!(
            out,
            "| {slot} | {n} | {:.1} | {:.1} | {:.1} |",
            mean(rt),
            mean(m),
            mean(rt - m)
        );
        calls += n;
        all += rt;
        method += m;
    }
    if calls > 0 {
        let _ = write!(
            out,
            "- {calls} round trips, {:.1} µs in all, {:.1} µs of it in the Windows methods, \
             bridge {:.1} µs per call",
            all as f64 / 1e3,
            method as f64 / 1e3,
            (all - method) as f64 / calls as f64 / 1e3
        );
        if acquires > 0 {
            let _ = write!(
                out,
                "; per hand-off ({acquires} acquires): {:.1} round trips, bridge {:.1} µs",
                calls as f64 / acquires as f64,
                (all - method) as f64 / acquires as f64 / 1e3
            );
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "- {} Unmaps deferred: each ran before the next request's method (its time in that \
         method's), without a round trip of its own",
        DEFERRED.load(Relaxed)
    );
    out
}

type Take = unsafe extern "C" fn(*mut c_char, usize) -> usize;

/// The layer's step table so far (`dxclTraceTake` of the layer the loader loaded from
/// `OPENCL_LAYERS`), or why there is none.
fn layer_table() -> String {
    let layers = std::env::var("OPENCL_LAYERS").unwrap_or_default();
    for path in layers.split(':').filter(|p| !p.is_empty()) {
        let Ok(c) = CString::new(path) else {
            continue;
        };
        // SAFETY: a NUL-terminated path; RTLD_NOLOAD only finds a library already loaded (its
        // reference is kept: the loader never unloads a layer either).
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
        if handle.is_null() {
            continue;
        }
        // SAFETY: a live handle and a NUL-terminated name.
        let f = unsafe { libc::dlsym(handle, c"dxclTraceTake".as_ptr()) };
        if f.is_null() {
            continue;
        }
        // SAFETY: the layer's export has this signature (dxcl-layer src/trace.rs).
        let take: Take = unsafe { std::mem::transmute_copy(&f) };
        let mut buf = vec![0u8; 1 << 16];
        // SAFETY: a buffer of the size passed.
        let n = unsafe { take(buf.as_mut_ptr().cast(), buf.len()) };
        return String::from_utf8_lossy(&buf[..n.min(buf.len() - 1)]).into_owned();
    }
    format!("\nno loaded layer of OPENCL_LAYERS={layers:?} exports dxclTraceTake\n")
}

/// At `STOP`: both tables on stderr, when tracing.
pub fn report() {
    if on() {
        eprint!("{}{}", trips_table(), layer_table());
    }
}

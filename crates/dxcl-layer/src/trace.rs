//! `DXCL_TRACE=handoff`: where the time of a hand-off goes, step by step.
//!
//! Each step of the acquire/release path (and of `clFinish`, which the hand-off's caller makes)
//! is a [`Span`]; a span's time excludes the spans opened inside it, so the steps partition the
//! time the layer's entry points take, and the platform's calls stand apart from the layer's
//! own work. Totals and counts accumulate in atomics (nothing is printed per hand-off);
//! [`dxclTraceTake`] hands the table over and starts afresh; [`dxclTraceRecord`] pauses the
//! calling thread's recording while it does work that is no hand-off's. Off (the default), a span
//! costs one relaxed atomic load.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int};
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};
use std::time::Instant;

/// Who does the work of a step.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// dxcl's layer: validation, side tables, locks, the code between the calls below.
    Layer,
    /// dxcl's Direct3D runtime, called through its interop interface.
    Runtime,
    /// The OpenCL platform below the layer.
    Platform,
}

macro_rules! steps {
    ($($step:ident: $side:ident, $name:literal;)*) => {
        /// A step of the hand-off path. Entry points come first (see [`Step::entry`]).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(usize)]
        pub(crate) enum Step { $($step,)* }

        const STEPS: usize = [$(Step::$step),*].len();

        impl Step {
            const ALL: [Step; STEPS] = [$(Step::$step),*];

            fn side(self) -> Side {
                match self { $(Step::$step => Side::$side,)* }
            }

            fn name(self) -> &'static str {
                match self { $(Step::$step => $name,)* }
            }
        }
    };
}

steps! {
    AcquireCall: Layer, "acquire entry point (its own code)";
    ReleaseCall: Layer, "release entry point (its own code)";
    FinishCall: Layer, "clFinish entry point (its own code)";
    RegistryClaim: Layer, "registry: the context's check, the objects' claim";
    HandOffNew: Layer, "hand-off set-up (wait list scan, queue order)";
    StrategyAcquire: Layer, "strategy acquire (per object)";
    StrategyRelease: Layer, "strategy release (per object)";
    StrategyReleased: Layer, "strategy: order Direct3D after the release";
    Finish: Layer, "hand-off finish (external command, marker)";
    QueueHeld: Layer, "external memory: the queue held for the object (lock)";
    SyncMode: Layer, "sync: the context's mode (pool lock)";
    MemoryFns: Layer, "external memory: the platform's entry points";
    NextAccess: Layer, "sync: ordering left to Direct3D's next access";
    D3dThenCl: Layer, "sync: Direct3D then OpenCL (semaphore wait, enqueue incl.)";
    ClThenD3d: Layer, "sync: OpenCL then Direct3D (semaphore signal, enqueue incl.)";
    WhenComplete: Layer, "completion callback or polled watch set-up (pins, box)";
    Callback: Layer, "completion callback (its work)";
    RecordEvent: Layer, "event table: record the command type (lock)";
    FinishCopies: Layer, "clFinish: the layer's copies (lock)";
    StagingRows: Layer, "staging: rows between the shadow and the mapping (memcpy)";
    DeviceWorkDone: Runtime, "runtime: QueryDeviceWorkDone";
    WaitDeviceWork: Runtime, "runtime: WaitForDeviceWork";
    PendingWork: Runtime, "runtime: AddPendingWork (CPU ordering)";
    StagingCopy: Runtime, "runtime: CopySubresourceRegion (staging resource)";
    StagingMap: Runtime, "runtime: Map of the staging resource (waits for its copy)";
    StagingUnmap: Runtime, "runtime: Unmap of the staging resource";
    HostRegister: Runtime, "runtime: RegisterHostMemory (the shadow, once)";
    HostCopyTo: Runtime, "runtime: CopyToHost (its device's copy into the shadow, in pieces)";
    HostCopyFrom: Runtime, "runtime: CopyFromHost (the shadow into the resource)";
    ClAcquireExternal: Platform, "clEnqueueAcquireExternalMemObjectsKHR";
    ClReleaseExternal: Platform, "clEnqueueReleaseExternalMemObjectsKHR";
    ClMarker: Platform, "clEnqueueMarkerWithWaitList";
    ClFinish: Platform, "clFinish";
    ClFlush: Platform, "clFlush";
    ClEventInfo: Platform, "clGetEventInfo";
    ClQueueInfo: Platform, "clGetCommandQueueInfo";
    ClDeviceInfo: Platform, "clGetDeviceInfo";
    ClRetainEvent: Platform, "clRetainEvent";
    ClReleaseEvent: Platform, "clReleaseEvent";
    ClRetainQueue: Platform, "clRetainCommandQueue";
    ClReleaseQueue: Platform, "clReleaseCommandQueue";
    ClSetEventCallback: Platform, "clSetEventCallback";
    ClWaitForEvents: Platform, "clWaitForEvents";
    ClEnqueueCopy: Platform, "clEnqueue{Read,Write}{Buffer,Image} (layer's copies)";
}

impl Step {
    /// An entry point of the application's: what is inside one is a hand-off's cost; the rest
    /// (callbacks, Direct3D's next access) is counted apart.
    fn entry(self) -> bool {
        matches!(
            self,
            Step::AcquireCall | Step::ReleaseCall | Step::FinishCall
        )
    }
}

/// 0: `DXCL_TRACE` not read yet; 1: off; 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);

/// Whether `DXCL_TRACE=handoff` is set (read once). Inlined: every span of a hand-off asks, and
/// with tracing off that must be a load and a branch.
#[inline]
pub(crate) fn on() -> bool {
    match STATE.load(Relaxed) {
        1 => false,
        2 => true,
        _ => read_env(),
    }
}

#[cold]
fn read_env() -> bool {
    let on = std::env::var("DXCL_TRACE").is_ok_and(|v| v.split(',').any(|w| w == "handoff"));
    STATE.store(if on { 2 } else { 1 }, Relaxed);
    on
}

/// Per step, [inside an entry point, outside]: nanoseconds and calls.
struct Totals {
    ns: [[AtomicU64; 2]; STEPS],
    calls: [[AtomicU64; 2]; STEPS],
}

#[allow(clippy::declare_interior_mutable_const)] // Only ever copied into the array below.
const ZERO: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
static TOTALS: Totals = Totals {
    ns: [ZERO; STEPS],
    calls: [ZERO; STEPS],
};

/// The caller's window ([`dxclTraceWindow`]) is open: spans that close now are also counted in
/// [`WINDOW`], and those outside the entry points in [`WINDOW_OUTSIDE`].
static WINDOW_OPEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static WINDOW: Totals = Totals {
    ns: [ZERO; STEPS],
    calls: [ZERO; STEPS],
};
/// Spans outside the entry points closed since the window last opened.
static WINDOW_OUTSIDE: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Per open span of this thread: the time of the spans closed inside it, and whether it is
    /// inside an entry point.
    static OPEN: RefCell<Vec<(u64, bool)>> = const { RefCell::new(Vec::new()) };
    /// This thread records nothing ([`dxclTraceRecord`]); other threads go on.
    static PAUSED: Cell<bool> = const { Cell::new(false) };
}

/// One step being timed; its time is recorded when it drops.
pub(crate) struct Span {
    step: Step,
    start: Instant,
}

/// Starts timing `step` (None while tracing is off, or paused on this thread).
#[inline]
pub(crate) fn span(step: Step) -> Option<Span> {
    if !on() {
        return None;
    }
    open(step)
}

/// [`span`] with tracing on: out of line, so that the hand-off's code stays small without it.
#[inline(never)]
fn open(step: Step) -> Option<Span> {
    if PAUSED.try_with(Cell::get).unwrap_or(false) {
        return None;
    }
    let inside = step.entry()
        || OPEN
            .try_with(|o| o.borrow().last().is_some_and(|s| s.1))
            .unwrap_or(false);
    let _ = OPEN.try_with(|o| o.borrow_mut().push((0, inside)));
    Some(Span {
        step,
        start: Instant::now(),
    })
}

/// Runs `f` as `step`.
pub(crate) fn time<R>(step: Step, f: impl FnOnce() -> R) -> R {
    let _s = span(step);
    f()
}

impl Drop for Span {
    fn drop(&mut self) {
        let all = self.start.elapsed().as_nanos() as u64;
        let _ = OPEN.try_with(|o| {
            let mut o = o.borrow_mut();
            let Some((inner, inside)) = o.pop() else {
                return;
            };
            if let Some(parent) = o.last_mut() {
                parent.0 += all;
            }
            let i = self.step as usize;
            let slot = usize::from(!inside);
            TOTALS.ns[i][slot].fetch_add(all.saturating_sub(inner), Relaxed);
            TOTALS.calls[i][slot].fetch_add(1, Relaxed);
            if WINDOW_OPEN.load(Relaxed) {
                WINDOW.ns[i][slot].fetch_add(all.saturating_sub(inner), Relaxed);
                WINDOW.calls[i][slot].fetch_add(1, Relaxed);
                if slot == 1 {
                    WINDOW_OUTSIDE.fetch_add(1, Relaxed);
                }
            }
        });
    }
}

/// The totals so far, zeroed: [step][inside, outside] of (calls, nanoseconds).
fn take() -> [[(u64, u64); 2]; STEPS] {
    take_from(&TOTALS)
}

fn take_from(totals: &Totals) -> [[(u64, u64); 2]; STEPS] {
    let mut out = [[(0, 0); 2]; STEPS];
    for (i, o) in out.iter_mut().enumerate() {
        for (slot, cell) in o.iter_mut().enumerate() {
            *cell = (
                totals.calls[i][slot].swap(0, Relaxed),
                totals.ns[i][slot].swap(0, Relaxed),
            );
        }
    }
    out
}

/// The table of what closed inside the caller's windows ([`dxclTraceWindow`]), zeroed: each
/// step with where it ran (inside an entry point, or outside: a callback, another thread).
fn window_table() -> String {
    let t = take_from(&WINDOW);
    let mut rows: Vec<(Step, usize, u64, u64)> = Step::ALL
        .iter()
        .flat_map(|&s| (0..2).map(move |slot| (s, slot)))
        .map(|(s, slot)| (s, slot, t[s as usize][slot].0, t[s as usize][slot].1))
        .filter(|r| r.2 > 0)
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.3));
    let mut out = String::from(
        "\nHand-off trace, during the caller's windows (dxcl bench: the floor right after each \
         hand-off), every span that closed in them:\n\n| step | where | calls | mean ns | total µs |\n\
         | --- | --- | ---: | ---: | ---: |\n",
    );
    for (s, slot, calls, ns) in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {calls} | {:.0} | {:.1} |",
            s.name(),
            if slot == 0 {
                "inside an entry point"
            } else {
                "outside (callback, another thread)"
            },
            ns as f64 / calls as f64,
            ns as f64 / 1e3
        );
    }
    out
}

/// What one span costs the trace itself (its two clock reads and bookkeeping), in nanoseconds:
/// every step's mean includes about that much.
fn span_cost_ns() -> f64 {
    const N: u32 = 2000;
    let start = Instant::now();
    for _ in 0..N {
        let s = Span {
            step: Step::AcquireCall,
            start: Instant::now(),
        };
        let _ = OPEN.try_with(|o| o.borrow_mut().push((0, true)));
        drop(s);
    }
    let ns = start.elapsed().as_nanos() as f64 / f64::from(N);
    // The calibration's own counts are not the application's (taken before it ran).
    TOTALS.ns[Step::AcquireCall as usize][0].store(0, Relaxed);
    TOTALS.calls[Step::AcquireCall as usize][0].store(0, Relaxed);
    ns
}

/// The table of the totals so far (Markdown), which are then zeroed.
pub(crate) fn table() -> String {
    let t = take();
    let cost = span_cost_ns();
    let mut out = String::new();
    let side_name = |s: Side| match s {
        Side::Layer => "dxcl layer",
        Side::Runtime => "dxcl runtime",
        Side::Platform => "platform",
    };
    for (slot, title) in [
        (0, "inside the entry points (acquire, release, clFinish)"),
        (
            1,
            "outside them (completion callbacks, Direct3D's next access, the reaper)",
        ),
    ] {
        let whole: u64 = t.iter().map(|s| s[slot].1).sum();
        let _ = writeln!(
            out,
            "\nHand-off trace, {title}: {:.1} µs in all",
            whole as f64 / 1e3
        );
        if whole == 0 {
            continue;
        }
        if slot == 0 {
            let calls = |s: Step| t[s as usize][0].0;
            let _ = writeln!(
                out,
                "- calls: {} acquire, {} release, {} clFinish; each step's mean includes the \
                 trace's own ~{cost:.0} ns per span",
                calls(Step::AcquireCall),
                calls(Step::ReleaseCall),
                calls(Step::FinishCall)
            );
        }
        let mut by_side = [0u64; 3];
        let acquires = t[Step::AcquireCall as usize][0].0;
        let _ = writeln!(out, "\n| step | by | calls | mean ns | total µs | share |");
        let _ = writeln!(out, "| --- | --- | ---: | ---: | ---: | ---: |");
        let mut rows: Vec<(Step, u64, u64)> = Step::ALL
            .iter()
            .map(|&s| (s, t[s as usize][slot].0, t[s as usize][slot].1))
            .filter(|r| r.1 > 0)
            .collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.2));
        for (s, calls, ns) in rows {
            by_side[s.side() as usize] += ns;
            let _ = writeln!(
                out,
                "| {} | {} | {calls} | {:.0} | {:.1} | {:.1} % |",
                s.name(),
                side_name(s.side()),
                ns as f64 / calls as f64,
                ns as f64 / 1e3,
                100.0 * ns as f64 / whole as f64
            );
        }
        let share = |s: Side| 100.0 * by_side[s as usize] as f64 / whole as f64;
        let _ = write!(
            out,
            "- by whom: dxcl layer {:.1} %, dxcl runtime {:.1} %, platform {:.1} %",
            share(Side::Layer),
            share(Side::Runtime),
            share(Side::Platform)
        );
        if acquires > 0 {
            // Per hand-off: everything above over the acquire calls (one acquire, one release
            // and the clFinish after them per hand-off in `dxcl bench`).
            let per = |ns: u64| ns as f64 / acquires as f64 / 1e3;
            let _ = write!(
                out,
                "; per hand-off {:.2} µs: dxcl layer {:.2} µs, dxcl runtime {:.2} µs, platform \
                 {:.2} µs",
                per(whole),
                per(by_side[Side::Layer as usize]),
                per(by_side[Side::Runtime as usize]),
                per(by_side[Side::Platform as usize])
            );
        }
        let _ = writeln!(out);
    }
    out.push_str(&window_table());
    out
}

/// `size_t dxclTraceTake(char *buffer, size_t size)`: the hand-off trace so far as a Markdown
/// table (NUL-terminated, cut to `size`), then zeroed; returns the table's length. With
/// `DXCL_TRACE=handoff` unset there is nothing to take: returns 0 and writes an empty string.
/// For `dxcl bench`, which finds it in the loaded layer (`dlsym`).
///
/// # Safety
/// `buffer` is null or writable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn dxclTraceTake(buffer: *mut c_char, size: usize) -> usize {
    let text =
        std::panic::catch_unwind(|| if on() { table() } else { String::new() }).unwrap_or_default();
    if !buffer.is_null() && size > 0 {
        let n = text.len().min(size - 1);
        // SAFETY: the caller's buffer holds `size` bytes; `n + 1 <= size`.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buffer.cast::<u8>(), n);
            *buffer.add(n) = 0;
        }
    }
    text.len()
}

/// `int dxclTraceRecord(int record)`: with `DXCL_TRACE=handoff` set, 0 stops recording the calling
/// thread's spans and any other value starts again (what is recorded so far stays; other threads
/// record throughout); returns 1, or 0 where the trace is off and nothing changes. For `dxcl
/// bench`, whose untimed work between two traced hand-offs (the quiet floor markers) is not a
/// hand-off's, while what the hand-off left to other threads (callbacks, the releasing thread)
/// still is.
#[no_mangle]
pub extern "C" fn dxclTraceRecord(record: c_int) -> c_int {
    if !on() {
        return 0;
    }
    let _ = PAUSED.try_with(|p| p.set(record == 0));
    1
}

/// `unsigned long long dxclTraceWindow(int open)`: with `DXCL_TRACE=handoff` set, a non-zero
/// `open` opens a window, 0 closes it. Spans that close while one is open, on any thread, are
/// counted apart as well (the table's last section); closing returns how many of them ran
/// outside the entry points (completion callbacks, the layer's other threads) since the window
/// opened. Returns 0 where the trace is off. For `dxcl bench`, which opens one around the floor
/// right after each traced hand-off: what the hand-off left running meets the application's next
/// command there.
#[no_mangle]
pub extern "C" fn dxclTraceWindow(open: c_int) -> u64 {
    if !on() {
        return 0;
    }
    if open != 0 {
        WINDOW_OUTSIDE.store(0, Relaxed);
        WINDOW_OPEN.store(true, Relaxed);
        0
    } else {
        WINDOW_OPEN.store(false, Relaxed);
        WINDOW_OUTSIDE.swap(0, Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nested spans: the parent's time leaves out the child's, and a span outside any entry point
    /// is counted apart. (The totals are global: this is the only test that records any.)
    #[test]
    fn spans_nest_and_partition_the_time() {
        STATE.store(2, Relaxed);
        {
            let _call = span(Step::AcquireCall);
            let _inner = span(Step::ClMarker);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        time(Step::ClFlush, || ());
        let t = take();
        let marker = t[Step::ClMarker as usize][0];
        let call = t[Step::AcquireCall as usize][0];
        assert_eq!((marker.0, call.0), (1, 1));
        assert!(marker.1 >= 2_000_000, "{marker:?}");
        assert!(call.1 < marker.1, "{call:?} holds the child's time");
        assert_eq!(t[Step::ClFlush as usize][0], (0, 0));
        assert!(t[Step::ClFlush as usize][1].0 >= 1);
        // Zeroed by the take.
        assert_eq!(take()[Step::ClMarker as usize][0], (0, 0));
        // Paused, this thread opens no span while another thread does; resumed, it does again.
        assert_eq!(dxclTraceRecord(0), 1);
        assert!(span(Step::ClFlush).is_none());
        assert!(std::thread::spawn(|| span(Step::ClFlush).is_some())
            .join()
            .unwrap());
        assert_eq!(dxclTraceRecord(1), 1);
        assert!(span(Step::ClFlush).is_some());
        // A window counts the spans outside the entry points that close in it, on any thread,
        // and its table names them; nothing before it opened or after it closed.
        time(Step::Callback, || ());
        assert_eq!(dxclTraceWindow(1), 0);
        std::thread::spawn(|| time(Step::ClReleaseEvent, || ()))
            .join()
            .unwrap();
        time(Step::FinishCall, || ());
        assert_eq!(dxclTraceWindow(0), 1, "the other thread's release only");
        time(Step::Callback, || ());
        let w = window_table();
        assert!(
            w.contains("| clReleaseEvent | outside (callback, another thread) | 1 |"),
            "{w}"
        );
        assert!(w.contains("| clFinish entry point (its own code) | inside an entry point | 1 |"));
        assert!(!w.contains("completion callback"), "{w}");
        assert!(window_table().is_empty(), "zeroed");
        // With the trace off there is nothing to pause or resume.
        STATE.store(1, Relaxed);
        assert_eq!(dxclTraceWindow(1), 0);
        assert_eq!(dxclTraceRecord(0), 0);
        assert!(!PAUSED.with(Cell::get));
        STATE.store(0, Relaxed);
    }
}

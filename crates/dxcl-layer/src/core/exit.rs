//! The process's exit as the layer sees it: whether it has begun, and the destructor callbacks
//! running now. Every part asks here (a wait gives up, a callback does nothing once the exit has
//! begun); `cl::exit` begins it from an `atexit` handler.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::time::{Duration, Instant};

static EXITING: AtomicBool = AtomicBool::new(false);
/// Destructor callbacks running now (see [`in_callback`]).
static IN_CALLBACK: AtomicUsize = AtomicUsize::new(0);

/// Whether the process has begun to exit.
pub(crate) fn exiting() -> bool {
    EXITING.load(SeqCst)
}

/// Marks the exit begun: later destructor callbacks and waits do nothing.
pub(crate) fn begin() {
    EXITING.store(true, SeqCst);
}

/// Waits up to `limit` for the destructor callbacks running now; whether none is left.
pub(crate) fn callbacks_ended_within(limit: Duration) -> bool {
    let start = Instant::now();
    while IN_CALLBACK.load(SeqCst) > 0 {
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// Runs a destructor callback's work `f` unless the process has begun to exit; then the D3D
/// runtime and the drivers may be torn down, and platforms (NVIDIA) still run callbacks from
/// their own threads. A panic in `f` stops here: it must not unwind into the platform, and the
/// count must come down.
pub(crate) fn in_callback(f: impl FnOnce()) {
    // Counted before the flag is read: either the exit handler sees this callback and waits for
    // it, or this callback sees the flag (both sequentially consistent).
    IN_CALLBACK.fetch_add(1, SeqCst);
    if !EXITING.load(SeqCst) {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    }
    IN_CALLBACK.fetch_sub(1, SeqCst);
}

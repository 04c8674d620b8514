//! No panic crosses the C ABI: every `extern "system"` body runs inside [`guard`].

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `body`, returning `on_panic` if it panics (`E_FAIL` for `HRESULT` methods, `0` for counts,
/// `()` for void methods).
pub fn guard<R>(on_panic: R, body: impl FnOnce() -> R) -> R {
    // AssertUnwindSafe: after a panic the object may hold half-updated state behind a poisoned
    // mutex; every later lock recovers the data (see `lock`), so no invariant relies on unwinding.
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(on_panic)
}

/// Locks a mutex, recovering from poisoning: a panic inside an entry point is already reported as
/// a failure to its caller, and the guarded data stays structurally valid.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

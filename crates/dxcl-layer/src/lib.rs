//! dxcl's OpenCL layer: adds `cl_khr_d3d10_sharing`, `cl_khr_d3d11_sharing`, `cl_nv_d3d10_sharing`
//! and `cl_nv_d3d11_sharing` to whatever platform the loader finds.
//!
//! Parts, each calling only those listed after it:
//! - [`loader`]: the four loader entry points and the dispatch tables.
//! - `api`: the intercepted OpenCL entry points and the 24 D3D entry points (spec checks).
//! - `registry`: side tables (contexts, D3D memory objects and what derives from them, kernels).
//! - [`strategy`]: how a resource is shared: the pure decision (public, so `dxcl info` can
//!   describe it) and one `SharingStrategy` implementation per strategy.
//! - `validate`: `DXCL_VALIDATE=1` (docs/validation.md): what the layer tells dxcl's runtime, and
//!   the reports only the layer can make.
//! - `d3d`: the COM client (standard D3D/DXGI calls plus dxcl's optional interop interface).
//! - [`probe`]: what the platform does where the spec leaves it a choice (is
//!   `CL_MEM_USE_HOST_PTR` memory used in place?) or where it deviates, asked of plain objects.
//! - `cl`: the platform below: its dispatch table, queries, markers and the layer's events.
//! - `trace`: `DXCL_TRACE=handoff`, the time of each step of a hand-off.
//! - `core`: the vocabulary every part shares: tokens, resource kinds, the format table.

mod api;
mod cl;
mod core;
mod d3d;
pub mod loader;
pub mod probe;
mod registry;
pub mod strategy;
mod trace;
mod validate;

pub use crate::core::format;
pub use crate::core::tokens::{D3dVersion, Flavor};
pub use crate::d3d::adapter::{adapter_facts, AdapterFacts, AdapterId, IdSource};

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

static EXITING: AtomicBool = AtomicBool::new(false);
/// Destructor callbacks running now (see [`in_callback`]).
static IN_CALLBACK: AtomicUsize = AtomicUsize::new(0);

/// At exit: later destructor callbacks and settles of watched events do nothing, and the ones
/// running are waited for (bounded, so a stuck callback cannot hang the exit). Their work,
/// releasing Direct3D resources, Vulkan objects and events, must not overlap the drivers' own
/// teardown, which follows this handler.
extern "C" fn mark_exiting() {
    EXITING.store(true, SeqCst);
    // The polling thread's settle in progress, too: it may release a context's last event.
    cl::events::settled_within(std::time::Duration::from_millis(500));
    for _ in 0..2000 {
        if IN_CALLBACK.load(SeqCst) == 0 {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Whether the process has begun to exit (the handler below ran).
pub(crate) fn exiting() -> bool {
    EXITING.load(SeqCst)
}

/// Registers [`mark_exiting`] with `atexit`, once, when the first context with a D3D device is
/// made. Not earlier: handlers run in reverse order of registration, and this one must run
/// before the teardown that the Vulkan and OpenCL drivers registered while they loaded (NVIDIA
/// 580's Vulkan driver crashed under a callback that outlived it: docs/gpu.md).
pub(crate) fn watch_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: `atexit` takes a plain `extern "C"` function that lives as long as the library
    // (the loader never unloads a layer).
    ONCE.call_once(|| unsafe {
        libc::atexit(mark_exiting);
    });
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

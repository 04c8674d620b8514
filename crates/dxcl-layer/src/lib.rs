//! dxcl's OpenCL layer: adds `cl_khr_d3d10_sharing`, `cl_khr_d3d11_sharing`, `cl_nv_d3d10_sharing`
//! and `cl_nv_d3d11_sharing` to whatever platform the loader finds.
//!
//! - [`loader`]: the four loader entry points and the dispatch tables.
//! - `api`: the intercepted OpenCL entry points and the 24 D3D entry points (spec checks).
//! - `core`: side tables (contexts, D3D memory objects, kernels, marker events), formats, tokens.
//! - `d3d`: the COM client (standard D3D/DXGI calls plus dxcl's optional interop interface).
//! - `external`: the external-memory strategy (opaque-fd import, shared semaphores).
//! - [`strategy`]: how a resource is shared, public so `dxcl info` can describe it.

mod api;
mod core;
mod d3d;
mod external;
pub mod loader;
pub mod strategy;

pub use crate::core::format;
pub use crate::core::tokens::{D3dVersion, Flavor};

static EXITING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn mark_exiting() {
    EXITING.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Registers [`exiting`]'s flag with `atexit` (once, from the loader's `clInitLayer`).
pub(crate) fn watch_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: `atexit` takes a plain `extern "C"` function that lives as long as the library.
    ONCE.call_once(|| unsafe {
        libc::atexit(mark_exiting);
    });
}

/// Whether the process has begun to exit: destructor callbacks from the platform's threads then
/// leave everything alone (the D3D runtime and the drivers may already be torn down).
pub(crate) fn exiting() -> bool {
    EXITING.load(std::sync::atomic::Ordering::SeqCst)
}

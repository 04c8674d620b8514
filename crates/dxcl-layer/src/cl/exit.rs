//! The `atexit` handler that begins the process's exit for the layer ([`crate::core::exit`]).

use std::time::Duration;

/// At exit: later destructor callbacks and settles of watched events do nothing, and the ones
/// running are waited for (bounded, so a stuck callback cannot hang the exit). Their work,
/// releasing Direct3D resources, Vulkan objects and events, must not overlap the drivers' own
/// teardown, which follows this handler.
extern "C" fn mark_exiting() {
    crate::core::exit::begin();
    // The polling thread's settle in progress, too: it may release a context's last event.
    super::events::settled_within(Duration::from_millis(500));
    crate::core::exit::callbacks_ended_within(Duration::from_secs(2));
}

/// Registers [`mark_exiting`] with `atexit`, once, when the first context with a D3D device is
/// made. Not earlier: handlers run in reverse order of registration, and this one must run
/// before the teardown that the Vulkan and OpenCL drivers registered while they loaded (NVIDIA
/// 580's Vulkan driver crashed under a callback that outlived it: docs/gpu.md).
pub(crate) fn watch() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    // SAFETY: `atexit` takes a plain `extern "C"` function that lives as long as the library
    // (the loader never unloads a layer).
    ONCE.call_once(|| unsafe {
        libc::atexit(mark_exiting);
    });
}

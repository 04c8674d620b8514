//! dxcl's private interop interface on resources (`IDxclInteropResource`).

use std::ffi::c_void;

use dxcl_abi::interop::{
    IDxclInteropResource, DXCL_MEMORY_KIND_HOST, DXCL_MEMORY_KIND_OPAQUE_FD,
    DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE, DXCL_RESOURCE_MEMORY, DXCL_SUBRESOURCE_LAYOUT,
};
use dxcl_abi::SUCCEEDED;
use opencl_sys::cl_event;

use super::com::ComPtr;
use crate::core::signal::Signal;
use std::sync::Arc;

pub(crate) struct Interop {
    pub com: ComPtr<IDxclInteropResource>,
    memory: Option<DXCL_RESOURCE_MEMORY>,
    /// The runtime runs pending work before its next access (dxcl's runtime). False for a DXVK
    /// texture made by dxclCreateSharedTexture2D: DXVK cannot be made to wait, so a release
    /// waits on the CPU instead.
    pub defers: bool,
}

/// Where a subresource lies in the resource's memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub offset: u64,
    pub row_pitch: u32,
    pub depth_pitch: u32,
}

/// Whether the layer uses the interop interface: `DXCL_INTEROP=0` makes it treat dxcl's own
/// resources as a foreign device's (staging copies, no pending work), so that path is tested on
/// the runtime too.
pub(crate) fn enabled() -> bool {
    !matches!(
        std::env::var("DXCL_INTEROP").as_deref().map(str::trim),
        Ok("0")
    )
}

impl Interop {
    /// The interface, when the resource is one of dxcl's (and [`enabled`]).
    pub fn query(resource: &ComPtr) -> Option<Interop> {
        if !enabled() {
            return None;
        }
        // dxcl's own resources answer the interface; a DXVK texture made by
        // dxclCreateSharedTexture2D carries an object that implements it as private data.
        let (com, defers) = match resource.query::<IDxclInteropResource>() {
            Some(com) => (com, true),
            None => (super::shared_texture::from_private_data(resource)?, false),
        };
        let mut m = DXCL_RESOURCE_MEMORY::default();
        let p = com.as_ptr();
        // SAFETY: a live IDxclInteropResource; `m` is a valid out struct.
        let hr = unsafe { ((*(*p).lpVtbl).GetMemory)(p, &mut m) };
        Some(Interop {
            com,
            memory: SUCCEEDED(hr).then_some(m),
            defers,
        })
    }

    /// (pHost, Size) when the memory is host memory.
    pub fn host_memory(&self) -> Option<(*mut c_void, u64)> {
        self.memory
            .filter(|m| m.Kind == DXCL_MEMORY_KIND_HOST && !m.pHost.is_null())
            .map(|m| (m.pHost, m.Size))
    }

    /// Whether the memory is an exportable fd (`Some`), and then whether it is an optimal-tiled
    /// image (`DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE`) rather than the runtime's linear layout.
    pub fn fd_image(&self) -> Option<bool> {
        match self.memory?.Kind {
            DXCL_MEMORY_KIND_OPAQUE_FD => Some(false),
            DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE => Some(true),
            _ => None,
        }
    }

    pub fn layout(&self, subresource: u32) -> Option<Layout> {
        let mut l = DXCL_SUBRESOURCE_LAYOUT::default();
        let p = self.com.as_ptr();
        // SAFETY: a live IDxclInteropResource; `l` is a valid out struct.
        let hr = unsafe { ((*(*p).lpVtbl).GetSubresourceLayout)(p, subresource, &mut l) };
        SUCCEEDED(hr).then_some(Layout {
            offset: l.Offset,
            row_pitch: l.RowPitch,
            depth_pitch: l.DepthPitch,
        })
    }
}

/// Blocks until all D3D work issued so far on the resource is complete.
pub(crate) fn wait_for_device_work(interop: &ComPtr<IDxclInteropResource>) {
    let _wait = crate::trace::span(crate::trace::Step::WaitDeviceWork);
    let p = interop.as_ptr();
    // SAFETY: a live IDxclInteropResource.
    unsafe { ((*(*p).lpVtbl).WaitForDeviceWork)(p) };
}

/// Makes the runtime's next access to the resource wait for `event`. The runtime is handed work
/// that polls a marker right after the event (or the event itself: see
/// cl::events::end_marker), whose end, completed or terminated, the layer's polling thread
/// watches too: the event holds its queue and context, and Direct3D may not touch the resource
/// again for a long time (or ever), so a pending event would keep a context the application has
/// released alive until then. No completion callback: NVIDIA's callback thread deadlocked with
/// one per release (cl::events::when_ended).
pub(crate) fn add_pending_work(interop: &ComPtr<IDxclInteropResource>, event: cl_event) {
    let _pending = crate::trace::span(crate::trace::Step::PendingWork);
    let watched = match crate::cl::events::end_marker(event) {
        Some(marker) => marker,
        None if crate::cl::events::retain(event).is_ok() => event,
        None => return,
    };
    // The watch takes over the reference taken above.
    let ended = crate::cl::events::when_ended(watched);
    let wait: AccessWork = Box::new(move || crate::cl::events::wait_ended(&ended));
    if let Err(wait) = run_before_next_access(interop, wait) {
        // The runtime will not call us back: wait now (the guarantee still holds).
        wait();
    }
}

unsafe extern "system" fn signal_wait(context: *mut c_void) {
    // SAFETY: the context is the Arc `keep_until` leaked, alive until signal_release.
    let signal = unsafe { &*context.cast::<Signal>() };
    let _ = std::panic::catch_unwind(|| signal.wait());
}

unsafe extern "system" fn signal_release(context: *mut c_void) {
    // SAFETY: the Arc `keep_until` leaked, given back exactly once.
    drop(unsafe { Arc::from_raw(context.cast::<Signal>()) });
}

/// Makes the runtime's next access to the resource, its destruction included, wait until
/// `signal` is set. Returns false when the runtime would not take the work.
pub(crate) fn keep_until(interop: &ComPtr<IDxclInteropResource>, signal: Arc<Signal>) -> bool {
    let context = Arc::into_raw(signal).cast_mut().cast::<c_void>();
    let p = interop.as_ptr();
    // SAFETY: a live IDxclInteropResource; the callbacks are plain functions that catch panics,
    // and the context is the Arc leaked just above, which signal_release takes back.
    let hr = unsafe {
        ((*(*p).lpVtbl).AddPendingWork)(p, Some(signal_wait), Some(signal_release), context)
    };
    if !SUCCEEDED(hr) {
        // SAFETY: the runtime refused it, so the Arc is still ours alone.
        unsafe { signal_release(context) };
        return false;
    }
    true
}

/// Work the runtime runs before its next access to a resource (see [`run_before_next_access`]).
pub(crate) type AccessWork = Box<dyn Fn() + Send + Sync>;

unsafe extern "system" fn work_wait(context: *mut c_void) {
    // SAFETY: the context is the box `run_before_next_access` leaked, alive until work_release.
    let work = unsafe { &*context.cast::<AccessWork>() };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
}

unsafe extern "system" fn work_release(context: *mut c_void) {
    // SAFETY: the box `run_before_next_access` leaked, given back exactly once.
    drop(unsafe { Box::from_raw(context.cast::<AccessWork>()) });
}

/// Makes the runtime run `work` (on the thread of that access, before it) at its next access to
/// the resource, its destruction included, then drop it. Returns `work` back when the runtime
/// would not take it.
pub(crate) fn run_before_next_access(
    interop: &ComPtr<IDxclInteropResource>,
    work: AccessWork,
) -> Result<(), AccessWork> {
    let context = Box::into_raw(Box::new(work)).cast::<c_void>();
    let p = interop.as_ptr();
    // SAFETY: a live IDxclInteropResource; the callbacks are plain functions that catch panics,
    // and the context is the box leaked just above, which work_release takes back.
    let hr =
        unsafe { ((*(*p).lpVtbl).AddPendingWork)(p, Some(work_wait), Some(work_release), context) };
    if !SUCCEEDED(hr) {
        // SAFETY: the runtime refused it, so the box is still ours alone.
        return Err(*unsafe { Box::from_raw(context.cast::<AccessWork>()) });
    }
    Ok(())
}

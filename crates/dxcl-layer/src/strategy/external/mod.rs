//! What the two external strategies share: Direct3D resources that live in exportable Vulkan
//! memory are imported once into OpenCL (`cl_khr_external_memory_opaque_fd`) and bracketed by
//! `clEnqueueAcquire/ReleaseExternalMemObjectsKHR`; the implicit synchronisation runs on the GPU
//! through shared binary semaphores (`cl_khr_external_semaphore_opaque_fd`) where both sides have
//! them, and as a CPU wait where they do not.
//!
//! - [`cl`]: the platform's external-memory and semaphore entry points, and device capabilities.
//! - [`dxvk_semaphores`]: DXVK's device as an interop device whose shared semaphores are
//!   signalled and waited for on DXVK's queue (the Direct3D half of ordering DXVK's textures).
//! - [`import`]: what a context can import, and the import of a resource's memory.
//! - [`sync`]: the per-context pool of shared semaphores and the two ordering operations.

use opencl_sys::{cl_command_queue, cl_int, cl_mem};

use super::{Failure, Request};
use crate::d3d::com::ComPtr;
use dxcl_abi::interop::{IDxclInteropDevice, IDxclInteropResource};

pub(crate) mod cl;
pub(crate) mod dxvk_semaphores;
pub(crate) mod import;
pub(crate) mod sync;

/// What the context offers the external strategies.
pub(crate) struct Context {
    pub support: import::ContextSupport,
    /// The context's D3D device as dxcl's interop device (resources with exportable memory).
    pub device: Option<ComPtr<IDxclInteropDevice>>,
}

impl Context {
    /// Imports `resource`'s memory whole, as the request's buffer or image (an image: mip 0
    /// of one slice, the request's extent), and opens the context's semaphore pool with it. A
    /// failed import gives way to staging copies, saying why.
    pub fn import_memory(
        &self,
        req: &Request,
        resource: &ComPtr<IDxclInteropResource>,
    ) -> Result<cl_mem, Failure> {
        let desc = req.image_desc(None);
        let format = req.image.map(|(f, _)| f);
        let mem = import::import(
            req.context,
            req.flags,
            resource,
            req.extent.0 as usize,
            format.as_ref().zip(desc.as_ref()),
        )
        .map_err(|e| Failure::Fallback(import_failure(e)))?;
        self.open_pool(req);
        Ok(mem)
    }

    /// Opens the context's semaphore pool with its first external-memory object, when GPU-side
    /// sync is on and both sides have semaphores: on dxcl's interop device, else on DXVK's
    /// device made one here (its textures are shared through memory it cannot export or through
    /// dxcl's memory on it: shared semaphores on its queue order the hand-offs on the GPU).
    fn open_pool(&self, req: &Request) {
        let fns = self
            .support
            .semaphores
            .filter(|_| super::gpu_sync_from_env());
        if let Some(fns) = fns {
            sync::open_pool(req.context, fns, || {
                self.device
                    .clone()
                    .or_else(|| dxvk_semaphores::interop_device(req.device))
            });
        }
    }
}

/// Why an import the strategy chose failed (the object then falls back to staging copies).
fn import_failure(e: cl_int) -> &'static str {
    match e {
        opencl_sys::CL_INVALID_OPERATION => {
            "external-memory import failed (no fd or entry point): staging copy instead"
        }
        opencl_sys::CL_IMAGE_FORMAT_NOT_SUPPORTED
        | opencl_sys::CL_INVALID_IMAGE_FORMAT_DESCRIPTOR => {
            "the platform cannot import this image format: staging copy instead"
        }
        _ => "the platform refused the external-memory import: staging copy instead",
    }
}

/// The queue an imported object was last acquired on, so that an object the application lets
/// go while still acquired is handed back to the platform first. The queue stays retained
/// across hand-offs (until another queue acquires the object, or the object goes): a retain and
/// a release per hand-off cost more than the platform's own acquire.
///
/// Also what the object's last release on that queue left to Direct3D's next access
/// ([`sync::Untouched`]): while it is untouched, an acquire on the same queue need not ask the
/// runtime whether Direct3D's work on the resource is done (see [`AcquiredOn::set`]).
#[derive(Default)]
pub(crate) struct AcquiredOn(std::sync::Mutex<Held>);

#[derive(Default)]
struct Held {
    /// The queue, retained.
    queue: Option<usize>,
    /// The last acquire had no wait list: nothing of the application's could terminate its
    /// wait for Direct3D's work.
    clean: bool,
    /// The last release, made on `queue` after a clean acquire there, left its ordering to
    /// Direct3D's next access.
    released: Option<sync::Untouched>,
    /// That release, still untouched, after a clean acquire on `queue`: the next release there
    /// may take its place ([`sync::order_d3d_after_next_access`]).
    renewable: Option<sync::Untouched>,
}

impl AcquiredOn {
    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An acquire on `queue`, with a wait list or not, is under way. Returns whether the
    /// object was acquired (with no wait list) and then released on this same queue, and
    /// Direct3D has not touched the resource since that release: all Direct3D work on it came
    /// before the earlier acquire, whose wait for it this queue's commands (if it runs them in
    /// order) already follow.
    pub fn set(&self, queue: cl_command_queue, wait_list: bool) -> bool {
        let _held = crate::trace::span(crate::trace::Step::QueueHeld);
        let mut held = self.held();
        let released = held.released.take();
        held.clean = !wait_list;
        if held.queue == Some(queue as usize) {
            let untouched = released.filter(|u| u.holds());
            let known = untouched.is_some();
            held.renewable = untouched.filter(|_| !wait_list);
            return known;
        }
        held.renewable = None;
        let retained = crate::cl::retain_queue(queue).is_ok();
        if let Some(q) = std::mem::replace(&mut held.queue, retained.then_some(queue as usize)) {
            crate::cl::release_queue(q as cl_command_queue);
        }
        false
    }

    /// The last release, for a release on `queue` to take its place: while Direct3D has not
    /// touched the resource since, after a clean acquire on that queue (taken: once).
    pub fn renewable(&self, queue: cl_command_queue) -> Option<sync::Untouched> {
        let mut held = self.held();
        let last = held.renewable.take();
        last.filter(|u| held.queue == Some(queue as usize) && u.holds())
    }

    /// A release on `queue` left Direct3D's ordering to its next access (`untouched`), or not
    /// (None).
    pub fn released(&self, queue: cl_command_queue, untouched: Option<sync::Untouched>) {
        let mut held = self.held();
        held.released = untouched.filter(|_| held.clean && held.queue == Some(queue as usize));
    }

    /// The application's last reference to `mem` goes (on its thread): the held queue is let
    /// go, and an object still acquired has its external acquire matched by a release once the
    /// acquire's queue has run its work, as a release call would. The specs leave the release of
    /// an acquired object undefined, but an imported object destroyed while acquired left NVIDIA
    /// waiting for its release when the context's semaphores were released (docs/gpu.md). Never
    /// blocks: NVIDIA's external release blocks the calling thread while earlier work of its
    /// queue waits for a user event, which the application may set only after this call. So a
    /// marker of the queue's work is watched, and its completion callback enqueues the release
    /// on a queue of the layer's own (made here: not in a callback).
    pub fn let_go(&self, mem: cl_mem, acquired: bool) {
        let taken = {
            let mut held = self.held();
            held.released = None;
            held.renewable = None;
            held.queue.take()
        };
        let Some(q) = taken else {
            return;
        };
        let queue = q as cl_command_queue;
        if acquired {
            if let Some(later) = AbandonedRelease::new(queue, mem) {
                later.after_queue_work(queue);
            }
        }
        crate::cl::release_queue(queue);
    }
}

/// An external release deferred until the acquire's queue has run its work (owns a reference
/// to the memory object and a queue of the layer's own).
struct AbandonedRelease {
    mem: usize,
    side: usize,
    fns: cl::MemoryFns,
}

impl AbandonedRelease {
    fn new(queue: cl_command_queue, mem: cl_mem) -> Option<Self> {
        let fns = cl::queue_memory_fns(queue).ok()?;
        let context = crate::cl::queue_context(queue).ok()?;
        let device = crate::cl::queue_device(queue).ok()?;
        let side = crate::cl::create_queue(context, device)?;
        if crate::cl::retain_mem(mem).is_err() {
            crate::cl::release_queue(side);
            return None;
        }
        Some(AbandonedRelease {
            mem: mem as usize,
            side: side as usize,
            fns,
        })
    }

    fn after_queue_work(self, queue: cl_command_queue) {
        let Ok(marker) = crate::cl::events::marker(queue, &[]) else {
            return self.run();
        };
        crate::cl::flush(queue);
        if let Err(f) = crate::cl::events::when_complete(marker, Box::new(move |_| self.run())) {
            // No callbacks: wait here (the platform offers nothing better).
            crate::cl::events::wait(marker);
            let status = crate::cl::events::status(marker);
            crate::cl::events::release(marker);
            f(status);
        }
    }

    fn run(self) {
        let (side, mem) = (self.side as cl_command_queue, self.mem as cl_mem);
        // SAFETY: our own queue with nothing else on it; a memory object we hold a reference
        // to; no wait list (the acquire's queue has run its work).
        unsafe { (self.fns.release)(side, 1, &mem, 0, std::ptr::null(), std::ptr::null_mut()) };
        crate::cl::flush(side);
        crate::cl::release_queue(side);
        crate::cl::release_mem(mem);
    }
}

impl Drop for AcquiredOn {
    fn drop(&mut self) {
        if let Some(q) = self.held().queue.take() {
            crate::cl::release_queue(q as cl_command_queue);
        }
    }
}

//! Shadow copy: DXVK's own 2D textures, whose memory the layer cannot reach (docs/dxvk.md). A
//! one-subresource texture of the same format in memory dxcl owns on DXVK's device (what
//! `dxclCreateSharedTexture2D` makes) stands for the subresource. OpenCL shares the shadow the way
//! it shares dxcl's own resources (host pointer on CPU devices, external memory on GPUs: the inner
//! strategy), and each hand-off copies between the subresource and the shadow on DXVK's queue
//! (`CopySubresourceRegion`): no staging texture mapped, no host round trip through the layer.
//!
//! Ordering: on GPUs whose OpenCL imports semaphores, on the GPU. DXVK runs no work of ours
//! before its next access, but its queue takes submissions of ours between its own
//! (external::dxvk_semaphores): the acquire's semaphore is signalled on DXVK's queue after its
//! copy into the shadow, and OpenCL waits for it; the release's is signalled by OpenCL, DXVK's queue
//! waits for it, and the copy back follows. No CPU waits. Elsewhere (a CPU device, or
//! `DXCL_SYNC=cpu`) acquire waits on the CPU for DXVK's copy into the shadow (once: the
//! external-memory acquire's own wait for the shadow's Direct3D work, on GPUs), and release
//! waits on the CPU for OpenCL's commands before it copies back. A release whose wait list holds
//! an unset user event must not wait: its copy back runs from the completion of a marker after
//! its commands (after the platform's external release, on GPUs), and the call's event waits for
//! a user event set once the copy is issued (as staging copies on a foreign device write back).

use std::sync::{Arc, Mutex, MutexGuard};

use opencl_sys::{cl_event, cl_int, cl_mem, CL_COMPLETE, CL_INVALID_VALUE};

use super::staging::staging_resource::{Place, Staging};
use super::{
    maker, Decision, Failure, HandOff, Made, Make, Materials, Request, SharingStrategy, Strategy,
};
use crate::cl::events;
use crate::core::signal::Signal;
use crate::core::tokens::ResourceKind;
use crate::d3d::com::ComPtr;
use crate::d3d::interop::{self, Interop};
use crate::d3d::resource::{self, Resource};
use dxcl_abi::interop::IDxclInteropResource;

const NO_SHADOW: &str =
    "DXVK texture: no shadow in dxcl's memory could be made or shared: staging copy instead";

pub(super) struct ShadowCopy {
    decision: Decision,
    /// How OpenCL shares the shadow. Declared first: dropped before the shadow it borrows.
    inner: Arc<dyn SharingStrategy>,
    /// The shadow's interop object (counted).
    interop: ComPtr<IDxclInteropResource>,
    /// The shadow as the layer's resource (counted references the inner strategy borrows).
    _shadow_resource: Resource,
    /// The shadow texture and the copies between it and the subresource.
    shadow: Arc<Mutex<Staging>>,
    /// A release waiting for an unset user event, between `release` and `released`.
    pending: Mutex<Option<PendingCopyBack>>,
}

/// A copy back that follows a marker's completion, not a wait (handles as numbers, both owned).
struct PendingCopyBack {
    /// The user event the call's event waits for, set once the copy is issued.
    written: usize,
    /// The marker after the release's commands (`release_commands` makes it).
    ended: Option<usize>,
}

/// Makes [`ShadowCopy`]s.
pub(super) struct Maker;

impl Make for Maker {
    /// `with.context`: what the context's devices import of DXVK's GPU (none on a CPU device).
    fn make(&self, req: &Request, with: Materials<'_>, decision: Decision) -> Made {
        let fallback = || Failure::Fallback(NO_SHADOW);
        let staging = Staging::new(
            req.version,
            req.kind,
            req.resource,
            req.subresource,
            req.extent,
            req.pixel_size(),
            Place::Shared,
        )
        .map_err(|_| fallback())?;
        let texture = staging.staging_resource();
        // SAFETY: a live texture (the staging object holds a counted reference).
        let shadow = unsafe {
            resource::open(
                req.version,
                ResourceKind::Texture2D,
                texture.as_ptr().cast(),
            )
        }
        .ok_or_else(fallback)?;
        let i = Interop::query(&shadow.com).ok_or_else(fallback)?;
        let sub = Request {
            version: req.version,
            kind: ResourceKind::Texture2D,
            context: req.context,
            flags: req.flags,
            resource: &shadow,
            subresource: 0,
            mip: 0,
            extent: req.extent,
            image: req.image,
            host_unified: req.host_unified,
            device: req.device,
        };
        // The shadow is shared as dxcl's own resources are.
        let inner = match i.host_memory() {
            Some(_) => Strategy::HostPointer,
            None => Strategy::ExternalMemory,
        };
        let shadow_with = Materials {
            interop: Some(&i),
            ..with
        };
        let (mem, inner) = maker(inner)
            .make(&sub, shadow_with, decision)
            .map_err(|e| match e {
                Failure::Error(e) if e != CL_INVALID_VALUE => Failure::Error(e),
                _ => fallback(),
            })?;
        let strategy = ShadowCopy {
            decision,
            inner,
            interop: i.com,
            _shadow_resource: shadow,
            shadow: Arc::new(Mutex::new(staging)),
            pending: Mutex::new(None),
        };
        Ok((mem, Arc::new(strategy)))
    }
}

impl ShadowCopy {
    fn shadow(&self) -> MutexGuard<'_, Staging> {
        self.shadow.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SharingStrategy for ShadowCopy {
    fn decision(&self) -> Decision {
        self.decision
    }

    fn aliases_resource_memory(&self) -> bool {
        self.inner.aliases_resource_memory()
    }

    fn keep_memory_until(&self, destroyed: Arc<Signal>) -> bool {
        self.inner.keep_memory_until(destroyed)
    }

    fn acquire(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        // The copy into the shadow is D3D work this call issues itself: OpenCL waits for it
        // even under user sync, here, since DXVK cannot be waited for on the GPU.
        self.shadow().copy_in();
        if !self.inner.imports() {
            interop::wait_for_device_work(&self.interop);
        }
        // An importing inner strategy waits for the copy itself, once for the whole call
        // (HandOff::finish: the shadow's runtime never reports its work done).
        self.inner.acquire(mem, h)
    }

    fn imports(&self) -> bool {
        self.inner.imports()
    }

    fn release(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        self.inner.release(mem, h)?;
        if !h.waits_for_unset_user_event() {
            return Ok(());
        }
        // The copy back cannot be waited for here: it follows a marker after the release's
        // commands (the wait list and the queue's earlier work), and the call's event follows
        // the copy through `written`.
        let written = events::user_event(h.context)?;
        // One reference for the hand-off (the call's event waits for it), one kept for `released`.
        if let Err(e) = events::retain(written) {
            events::set_user_status(written, CL_COMPLETE as cl_int);
            events::release(written);
            return Err(e);
        }
        h.wait_for(written);
        let old = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .replace(PendingCopyBack {
                written: written as usize,
                ended: None,
            });
        debug_assert!(old.is_none(), "released runs after each release");
        if self.inner.imports() {
            // The marker waits for the user event: it goes after the platform's external
            // release (release_commands).
            return Ok(());
        }
        self.release_commands(mem, h)
    }

    fn release_commands(&self, _mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let Some(p) = pending.as_mut().filter(|p| p.ended.is_none()) else {
            return Ok(());
        };
        match events::marker(h.queue, &h.release_wait()) {
            Ok(ended) => {
                p.ended = Some(ended as usize);
                Ok(())
            }
            Err(e) => {
                // `written` is set so that the call's event (had it been made) waits for nothing;
                // the reference `released` would have let go of goes here.
                let written = p.written as cl_event;
                pending.take();
                events::set_user_status(written, CL_COMPLETE as cl_int);
                events::release(written);
                Err(e)
            }
        }
    }

    fn released(&self, h: &mut HandOff<'_>, done: cl_event) -> Result<(), cl_int> {
        // The copy back is D3D work this call issues: it follows OpenCL's release even under
        // user sync. Not waited for here when only the application can let the release run.
        let pending = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(PendingCopyBack { written, ended }) = pending {
            // The call fails rather than wait for an event only the application can set;
            // `written` is set so nothing waits for ever.
            let fail = || {
                events::set_user_status(written as cl_event, opencl_sys::CL_OUT_OF_RESOURCES);
                events::release(written as cl_event);
                Err(opencl_sys::CL_OUT_OF_RESOURCES)
            };
            // No marker to follow (release_commands did not run).
            let Some(ended) = ended else {
                return fail();
            };
            let shadow = self.shadow.clone();
            let copy_back = Box::new(move |status: cl_int| {
                if status == CL_COMPLETE as cl_int {
                    // A foreign device: the copy takes DXVK's own lock (see Staging::new).
                    shadow.lock().unwrap_or_else(|p| p.into_inner()).copy_out();
                }
                let written = written as cl_event;
                events::set_user_status(written, status.min(CL_COMPLETE as cl_int));
                // Perhaps the last reference, holding the context: not on the platform's thread.
                crate::cl::reaper::release_event(written);
            });
            // when_complete lets go of `ended` once the copy has been issued.
            if let Err(copy_back) = events::when_complete(ended as cl_event, copy_back) {
                // No callbacks on this platform.
                drop(copy_back);
                events::release(ended as cl_event);
                return fail();
            }
            return Ok(());
        }
        // DXVK's queue waits for the release on the GPU before the copy back, where the
        // context has semaphores on it; else the copy back waits here.
        if !h.order_d3d_after_on_gpu(done)? {
            crate::cl::flush(h.queue);
            events::wait(done);
        }
        self.shadow().copy_out();
        Ok(())
    }

    fn let_go(&self, mem: cl_mem, acquired: bool) {
        self.inner.let_go(mem, acquired);
    }
}

//! External memory: zero-copy on a GPU. The resource's exportable Vulkan memory is imported once
//! as a buffer or an image; acquire and release are `clEnqueueAcquire/ReleaseExternalMemObjectsKHR`,
//! ordered against Direct3D by shared semaphores where both sides have them. O(1) in size.

use std::sync::Arc;

use opencl_sys::{cl_event, cl_int, cl_mem};

use super::external;
use super::external::dxvk_semaphores::DxvkFlush;
use super::{enqueue_external, terminated_if_refused, SyncMode};
use super::{After, Alone, Decision, HandOff, Made, Make, Materials, Request, SharingStrategy};
use crate::cl::events;
use crate::d3d::com::ComPtr;
use crate::d3d::interop;
use crate::trace::{self, Step};
use dxcl_abi::interop::IDxclInteropResource;

pub(super) struct ExternalMemory {
    decision: Decision,
    /// The resource's interop interface (borrowed: the memory object's entry holds the
    /// resource's counted reference).
    interop: ComPtr<IDxclInteropResource>,
    acquired_on: external::AcquiredOn,
    /// The platform's external acquire/release (the context's, found at creation).
    fns: Option<external::cl::MemoryFns>,
    /// The runtime runs a release's pending work before its next access (`Interop::defers`).
    defers: bool,
    /// DXVK's device, which an acquire ordered on the GPU flushes first (external::dxvk_semaphores).
    flush: Option<DxvkFlush>,
}

/// Makes [`ExternalMemory`]s.
pub(super) struct Maker;

impl Make for Maker {
    fn make(&self, req: &Request, with: Materials<'_>, decision: Decision) -> Made {
        let (interop, ext) = (with.interop, with.context);
        let i = interop.ok_or(req.version.invalid_resource())?;
        let defers = i.defers;
        let mem = ext.import_memory(req, &i.com)?;
        let flush = if defers {
            None
        } else {
            DxvkFlush::of(req.device)
        };
        let strategy = ExternalMemory {
            decision,
            // SAFETY: the memory object's entry holds the counted reference to the resource
            // for as long as this strategy lives.
            interop: unsafe { i.com.clone().into_borrowed() },
            acquired_on: Default::default(),
            fns: ext.support.memory,
            defers,
            flush,
        };
        Ok((mem, Arc::new(strategy)))
    }
}

#[cfg(test)]
impl ExternalMemory {
    /// An object of dxcl's runtime (`interop`, which defers its pending work) imported into a
    /// context whose platform's external acquire and release are `fns`.
    pub(super) fn of_runtime(
        interop: ComPtr<IDxclInteropResource>,
        fns: external::cl::MemoryFns,
    ) -> Arc<dyn SharingStrategy> {
        Arc::new(ExternalMemory {
            decision: Decision {
                strategy: super::Strategy::ExternalMemory,
                reason: "a test's",
            },
            interop,
            acquired_on: Default::default(),
            fns: Some(fns),
            defers: true,
            flush: None,
        })
    }
}

impl SharingStrategy for ExternalMemory {
    fn decision(&self) -> Decision {
        self.decision
    }

    fn acquire(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        let after = self.after(
            (h.queue, h.in_order()),
            !h.wait.is_empty(),
            h.sync,
            h.context,
        );
        h.import(mem, &self.interop, after, self.fns);
        Ok(())
    }

    fn acquire_alone(&self, mem: cl_mem, call: Alone) -> Option<Result<(), cl_int>> {
        let fns = self.fns?;
        let (queue, facts) = (call.queue, call.facts);
        let after = self.after((queue, facts.in_order), false, call.sync, facts.context);
        if after == After::Direct3d {
            // Direct3D's work may still run: the hand-off orders the acquire after it.
            let mut h = HandOff::acquire(queue, facts, &[], call.sync);
            h.event_wanted = false;
            h.import(mem, &self.interop, after, self.fns);
            return Some(h.finish().map(events::release));
        }
        // Nothing to wait for, and nobody follows the call's event: the external acquire alone.
        let acquired = trace::time(Step::ClAcquireExternal, || {
            enqueue_external(fns.acquire, queue, &[mem], &[], false)
        });
        Some(acquired.map(events::release))
    }

    fn imports(&self) -> bool {
        true
    }

    fn release(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        h.import(mem, &self.interop, After::Nothing, self.fns);
        Ok(())
    }

    fn released(&self, h: &mut HandOff<'_>, done: cl_event) -> Result<(), cl_int> {
        if h.sync {
            if !self.defers {
                // DXVK's shared textures: ordered on the GPU through semaphores on DXVK's
                // queue where the context has them; else the call waits instead of Direct3D,
                // but not for a user event only the application can set.
                if h.order_d3d_after_on_gpu(done)? || !h.may_wait_now() {
                    return Ok(());
                }
            }
            let last = self.acquired_on.renewable(h.queue);
            let untouched = h.order_d3d_after(done, &self.interop, last)?;
            self.acquired_on.released(h.queue, untouched);
        }
        Ok(())
    }

    fn let_go(&self, mem: cl_mem, acquired: bool) {
        self.acquired_on.let_go(mem, acquired);
    }

    /// The adaptive mode's release on an in-order queue of an object of a runtime that orders
    /// its next access itself; every other takes the general path.
    fn release_alone(&self, mem: cl_mem, call: Alone) -> Option<Result<(), cl_int>> {
        let fns = self.fns?;
        let (queue, facts) = (call.queue, call.facts);
        if !(call.sync && self.defers && facts.in_order)
            || external::sync::mode(facts.context) != Some(SyncMode::Adaptive)
        {
            return None;
        }
        let released = trace::time(Step::ClReleaseExternal, || {
            enqueue_external(fns.release, queue, &[mem], &[], true)
        });
        let done = match terminated_if_refused(released, facts.context, queue) {
            Ok(ev) => ev,
            Err(e) => return Some(Err(e)),
        };
        // As HandOff::order_d3d_after does in this mode, with the call's event handed over:
        // nobody else wants it.
        let last = self.acquired_on.renewable(queue);
        let next = trace::time(Step::NextAccess, || {
            external::sync::order_d3d_after_next_access(
                &self.interop,
                facts.context,
                (queue, Some(facts.device), true),
                done,
                true,
                last,
            )
        });
        let untouched = match next {
            external::sync::NextAccess::Refused => {
                interop::add_pending_work(&self.interop, done);
                // Submitted here, on the thread that enqueued it: the runtime may wait for it.
                crate::cl::flush(queue);
                events::release(done);
                None
            }
            external::sync::NextAccess::Done => None,
            external::sync::NextAccess::Pending(untouched) => Some(untouched),
        };
        self.acquired_on.released(queue, untouched);
        Some(Ok(()))
    }
}

impl ExternalMemory {
    /// What an acquire on `queue` waits for: `wait_list`, whether the call has one.
    fn after(
        &self,
        (queue, in_order): (opencl_sys::cl_command_queue, bool),
        wait_list: bool,
        sync: bool,
        context: opencl_sys::cl_context,
    ) -> After {
        // Known without asking the runtime, where it runs the last release's ordering before
        // Direct3D's next access and that access has not come (an idle hand-off's usual case).
        let untouched = self.acquired_on.set(queue, wait_list) && self.defers && in_order;
        // Under user sync the application orders its own Direct3D work, not the runtime's: a
        // new resource's zero-fill may still be recorded, not even submitted, at its first
        // acquire (seen on the H100: the first write of `hostptr`'s user-sync check was lost
        // under it). Pending work is then ordered like the adaptive mode orders it.
        let ordered = sync
            || !(untouched
                || trace::time(Step::DeviceWorkDone, || {
                    external::sync::device_work_done(&self.interop)
                }));
        // DXVK's shared semaphore follows only the work DXVK has flushed; flushed here, with no
        // lock of the layer's held (the pool's signal runs under its lock).
        if let Some(f) = self.flush.as_ref().filter(|_| ordered) {
            if external::sync::mode(context).is_some() {
                f.flush();
            }
        }
        match (ordered, untouched) {
            (false, _) => After::Nothing,
            (true, false) => After::Direct3d,
            (true, true) => After::Untouched,
        }
    }
}

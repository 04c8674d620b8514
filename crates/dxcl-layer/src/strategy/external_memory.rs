//! External memory: zero-copy on a GPU. The resource's exportable Vulkan memory is imported once
//! as a buffer or an image; acquire and release are `clEnqueueAcquire/ReleaseExternalMemObjectsKHR`,
//! ordered against Direct3D by shared semaphores where both sides have them. O(1) in size.

use std::sync::Arc;

use opencl_sys::{cl_event, cl_int, cl_mem};

use super::external;
use super::external::dxvk_semaphores::DxvkFlush;
use super::{After, Decision, HandOff, Made, Make, Materials, Request, SharingStrategy};
use crate::d3d::com::ComPtr;
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
        // Known without asking the runtime, where it runs the last release's ordering before
        // Direct3D's next access and that access has not come (an idle hand-off's usual case).
        let untouched =
            self.acquired_on.set(h.queue, !h.wait.is_empty()) && self.defers && h.in_order();
        // Under user sync the application orders its own Direct3D work, not the runtime's: a
        // new resource's zero-fill may still be recorded, not even submitted, at its first
        // acquire (seen on the H100: the first write of `hostptr`'s user-sync check was lost
        // under it). Pending work is then ordered like the adaptive mode orders it.
        let ordered = h.sync
            || !(untouched
                || crate::trace::time(crate::trace::Step::DeviceWorkDone, || {
                    external::sync::device_work_done(&self.interop)
                }));
        // DXVK's shared semaphore follows only the work DXVK has flushed; flushed here, with no
        // lock of the layer's held (the pool's signal runs under its lock).
        if let Some(f) = self.flush.as_ref().filter(|_| ordered) {
            if external::sync::mode(h.context).is_some() {
                f.flush();
            }
        }
        let after = match (ordered, untouched) {
            (false, _) => After::Nothing,
            (true, false) => After::Direct3d,
            (true, true) => After::Untouched,
        };
        h.import(mem, &self.interop, after, self.fns);
        Ok(())
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
}

//! External copy: for a subresource an imported image cannot cover (a mip level above 0, one
//! slice of an array). A one-subresource DEFAULT texture of the Vulkan backend (the shadow) is
//! imported as in external memory, and acquire/release copy between it and the subresource on
//! Direct3D's queue: GPU-side, no host round trip.

use std::sync::{Arc, Mutex};

use opencl_sys::{cl_event, cl_int, cl_mem};

use super::external;
use super::staging::staging_resource::{Place, Staging};
use super::{
    After, Decision, Failure, FdMemory, HandOff, Made, Make, Materials, Request, SharingStrategy,
};
use crate::d3d::com::ComPtr;
use crate::d3d::interop::Interop;
use dxcl_abi::interop::IDxclInteropResource;

pub(super) struct ExternalCopy {
    decision: Decision,
    /// The shadow texture and the copies between it and the subresource.
    shadow: Mutex<Staging>,
    /// The shadow's interop interface (borrowed: `shadow` holds its counted reference).
    interop: ComPtr<IDxclInteropResource>,
    acquired_on: external::AcquiredOn,
    /// The platform's external acquire/release (the context's, found at creation).
    fns: Option<external::cl::MemoryFns>,
}

/// Makes [`ExternalCopy`]s.
pub(super) struct Maker;

impl Make for Maker {
    fn make(&self, req: &Request, with: Materials<'_>, decision: Decision) -> Made {
        let ext = with.context;
        const NO_SHADOW: &str =
            "the GPU shadow texture could not be made or imported: staging copy instead";
        let shadow = Staging::new(
            req.version,
            req.kind,
            req.resource,
            req.subresource,
            req.extent,
            req.pixel_size(),
            Place::Device,
        )
        .map_err(|_| Failure::Fallback(NO_SHADOW))?;
        let i = Interop::query(&shadow.staging_resource()).ok_or(Failure::Fallback(NO_SHADOW))?;
        // The one-subresource shadow is mip 0 of one slice: what an import covers.
        if external::import::fd_memory(&i) != Some(FdMemory::Image) {
            return Err(Failure::Fallback(NO_SHADOW));
        }
        let mem = ext.import_memory(req, &i.com)?;
        let strategy = ExternalCopy {
            decision,
            shadow: Mutex::new(shadow),
            // SAFETY: `shadow` holds the counted reference to the shadow texture, and lives
            // as long as this interface (both in this strategy).
            interop: unsafe { i.com.into_borrowed() },
            acquired_on: Default::default(),
            fns: ext.support.memory,
        };
        Ok((mem, Arc::new(strategy)))
    }
}

impl ExternalCopy {
    fn shadow(&self) -> std::sync::MutexGuard<'_, Staging> {
        self.shadow.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SharingStrategy for ExternalCopy {
    fn decision(&self) -> Decision {
        self.decision
    }

    fn acquire(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        self.acquired_on.set(h.queue, !h.wait.is_empty());
        // The copy into the shadow is D3D work this call issues itself: OpenCL must wait for
        // it even under user sync.
        self.shadow().copy_in();
        h.import(mem, &self.interop, After::Direct3d, self.fns);
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
        // The copy out of the shadow is D3D work this call issues: it must follow OpenCL's
        // release even under user sync.
        h.order_d3d_after(done, &self.interop, None)?;
        self.shadow().copy_out();
        Ok(())
    }

    fn let_go(&self, mem: cl_mem, acquired: bool) {
        self.acquired_on.let_go(mem, acquired);
    }
}

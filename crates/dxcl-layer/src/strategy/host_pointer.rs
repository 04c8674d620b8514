//! Host pointer: zero-copy on CPU devices. The `cl_mem` is created with `CL_MEM_USE_HOST_PTR` on
//! the resource's own host memory (dxcl's host backend, devices with host-unified memory), so
//! acquire and release move no data: they only order the two APIs, O(1).

use std::sync::Arc;

use opencl_sys::{cl_event, cl_int, cl_mem, CL_INVALID_VALUE};

use super::{create_plain, made, Decision, HandOff, Made, Request, SharingStrategy};
use crate::core::signal::Signal;
use crate::d3d::com::ComPtr;
use crate::d3d::interop::{self, Interop};
use dxcl_abi::interop::IDxclInteropResource;

pub(super) struct HostPointer {
    decision: Decision,
    /// The resource's interop interface (borrowed: the memory object's entry holds the
    /// resource's counted reference).
    interop: ComPtr<IDxclInteropResource>,
}

impl HostPointer {
    pub(super) fn create(req: &Request, interop: Option<Interop>, decision: Decision) -> Made {
        let invalid = req.version.invalid_resource();
        let i = interop.ok_or(invalid)?;
        let (base, _) = i.host_memory().ok_or(invalid)?;
        // CL_INVALID_VALUE "if subresource is not a valid subresource index for resource": the
        // runtime knows no layout for it.
        let layout = i.layout(req.subresource).ok_or(CL_INVALID_VALUE)?;
        // SAFETY: the runtime promises Offset lies inside the allocation at pHost.
        let ptr = unsafe { base.cast::<u8>().add(layout.offset as usize) };
        let mem = create_plain(req, Some((ptr, layout)))?;
        made(
            mem,
            HostPointer {
                decision,
                // SAFETY: the memory object's entry holds the counted reference to the resource
                // for as long as this strategy lives.
                interop: unsafe { i.com.into_borrowed() },
            },
        )
    }
}

impl SharingStrategy for HostPointer {
    fn decision(&self) -> Decision {
        self.decision
    }

    fn aliases_resource_memory(&self) -> bool {
        true
    }

    fn keep_memory_until(&self, destroyed: Arc<Signal>) -> bool {
        // dxcl's runtime runs the wait before its next access to the resource, and before
        // freeing it: the memory outlives the application's reference until the platform is
        // done with it.
        interop::keep_until(&self.interop, destroyed)
    }

    fn acquire(&self, _mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        if h.sync {
            // "any Direct3D 1x calls ... made before clEnqueueAcquireD3D1xObjects is called will
            // complete executing before event reports completion and before the execution of
            // any subsequent OpenCL work issued in command_queue begins".
            interop::wait_for_device_work(&self.interop);
        }
        Ok(())
    }

    fn release(&self, _mem: cl_mem, _h: &mut HandOff<'_>) -> Result<(), cl_int> {
        Ok(())
    }

    fn released(&self, h: &mut HandOff<'_>, done: cl_event) -> Result<(), cl_int> {
        if h.sync {
            // "any calls to Direct3D 1x made after the call to clEnqueueReleaseD3D1xObjects will
            // not start executing until after all events in event_wait_list are complete and all
            // work already submitted to command_queue completes execution".
            interop::add_pending_work(&self.interop, done);
        }
        Ok(())
    }
}

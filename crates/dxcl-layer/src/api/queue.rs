//! Where the application waits for or lets go of a queue: `clFinish` also waits for the layer's
//! own copies on it (the host-pointer strategy's copies back into `host_ptr` at release), and
//! `clReleaseCommandQueue` waits for the events the layer keeps on it.

use opencl_sys::{cl_command_queue, cl_int};

use super::{check, down, status};
use crate::strategy;

/// "clFinish blocks until all previously queued OpenCL commands in command_queue are issued to
/// the associated device and have completed": the platform's own `clFinish` first (its errors,
/// CL_INVALID_COMMAND_QUEUE among them, are the call's), then the layer's copies enqueued on the
/// queue, which a platform that returns early (rusticl: docs/conformance.md) may still be
/// running.
pub(crate) unsafe extern "C" fn finish(queue: cl_command_queue) -> cl_int {
    status(|| {
        let below = down!(clFinish);
        // SAFETY: the application's queue, passed on unchanged; the platform validates it.
        check(unsafe { below(queue) })?;
        strategy::finish_copies(queue);
        Ok(())
    })
}

/// "clReleaseCommandQueue performs an implicit flush to issue any previously queued OpenCL
/// commands in command_queue": the flush is made now, the release itself perhaps later. While
/// an event the layer keeps pins the queue (cl::events, PINS: NVIDIA loses a context whose
/// queue goes before its events), the release is held back until the layer lets go of the
/// last such event.
pub(crate) unsafe extern "C" fn release(queue: cl_command_queue) -> cl_int {
    status(|| {
        // Flushed first: once held, the queue may go on another thread at any moment.
        crate::cl::flush(queue);
        if crate::cl::events::hold_release(queue) {
            return Ok(());
        }
        let below = down!(clReleaseCommandQueue);
        // SAFETY: the application's queue, passed on unchanged; the platform validates it.
        check(unsafe { below(queue) })
    })
}

//! Where the application waits for or lets go of a queue: `clFinish` also waits for the layer's
//! own copies on it (the host-pointer strategy's copies back into `host_ptr` at release), and
//! `clReleaseCommandQueue` waits for the events the layer keeps on it.

use opencl_sys::{cl_command_queue, cl_int, CL_SUCCESS};

use super::{check, down, status};
use crate::strategy;
use crate::trace::{self, Step};

/// "clFinish blocks until all previously queued OpenCL commands in command_queue are issued to
/// the associated device and have completed": the platform's own `clFinish` first (its errors,
/// CL_INVALID_COMMAND_QUEUE among them, are the call's), then the layer's copies enqueued on the
/// queue, which a platform that returns early (rusticl: docs/conformance.md) may still be
/// running.
///
/// NVIDIA's `clFinish` answers `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` once commands the
/// layer enqueued (an external release, its marker) were terminated by a failed event, which no
/// `clFinish` error names: terminated commands are complete, so the call succeeded. (With plain
/// objects it answers `CL_DEVICE_NOT_FOUND` instead, its own answer, passed on as it is.)
pub(crate) unsafe extern "C" fn finish(queue: cl_command_queue) -> cl_int {
    let _call = trace::span(Step::FinishCall);
    status(|| {
        let below = down!(clFinish);
        let ticket = crate::cl::finish_ticket();
        // SAFETY: the application's queue, passed on unchanged; the platform validates it.
        let finished = trace::time(Step::ClFinish, || unsafe { below(queue) });
        if finished == CL_SUCCESS {
            // Everything queued before has ended: an adaptive release's renewal needs no query
            // (strategy::external::sync, Running::renew).
            crate::cl::finished(queue, ticket);
        } else if finished != opencl_sys::CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST {
            check(finished)?;
        }
        trace::time(Step::FinishCopies, || strategy::finish_copies(queue));
        Ok(())
    })
}

/// "clReleaseCommandQueue performs an implicit flush to issue any previously queued OpenCL
/// commands in command_queue": the flush is made now, the release itself perhaps later. While
/// an event the layer keeps pins the queue (cl::events, PINS: NVIDIA loses a context whose
/// queue goes before its events), the release is held back until the layer lets go of the
/// last such event.
pub(crate) unsafe extern "C" fn release(queue: cl_command_queue) -> cl_int {
    // The queue may go now: the hand-off path's facts of it are stale (cl::queue_facts).
    crate::cl::queue_changed();
    status(|| {
        // Flushed first: once held, the queue may go on another thread at any moment.
        crate::cl::flush(queue);
        // The adaptive releases' shared reference goes first, so that the application's release
        // is the queue's last where no pending release still holds it.
        crate::strategy::external::sync::queue_released(queue);
        if crate::cl::events::hold_release(queue)? {
            // The application's reference is the layer's to release now.
            crate::cl::held::took(crate::cl::held::Kind::Queue, queue);
            return Ok(());
        }
        let below = down!(clReleaseCommandQueue);
        // SAFETY: the application's queue, passed on unchanged; the platform validates it.
        check(unsafe { below(queue) })
    })
}

/// `clSetCommandQueueProperty` (OpenCL 1.0) may turn out-of-order execution on or off: the
/// hand-off path's facts of the queue are stale (cl::queue_facts). Passed on unchanged.
pub(crate) unsafe extern "C" fn set_property(
    queue: cl_command_queue,
    properties: opencl_sys::cl_command_queue_properties,
    enable: opencl_sys::cl_bool,
    old_properties: *mut opencl_sys::cl_command_queue_properties,
) -> cl_int {
    crate::cl::queue_changed();
    status(|| {
        let below = down!(clSetCommandQueueProperty);
        // SAFETY: the application's arguments, passed on unchanged; the platform validates them.
        check(unsafe { below(queue, properties, enable, old_properties) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cl::events;
    use crate::cl::fake::{self, calls, EVENTS, ONE_REFERENCE};
    use opencl_sys::{cl_event, CL_INVALID_COMMAND_QUEUE, CL_SUCCESS};

    /// clFinish: a terminated command's status is no error of the call's; the platform's other
    /// answers are. Only the platform's `CL_SUCCESS` says, on this thread, that what was enqueued
    /// before the call began has completed (cl::finished_since).
    #[test]
    fn finish_after_terminated_commands_succeeds() {
        fake::install();
        let terminated = fake::FINISH_TERMINATED as cl_command_queue;
        let q = (EVENTS + 0x7E) as cl_command_queue;
        // SAFETY: the fake platform takes any handle.
        unsafe {
            let mark = crate::cl::enqueued_mark();
            assert_eq!(finish(terminated), CL_SUCCESS);
            assert!(!crate::cl::finished_since(terminated, mark), "terminated");
        }
        let mark = crate::cl::enqueued_mark();
        // SAFETY: as above.
        unsafe {
            assert_eq!(finish(std::ptr::null_mut()), CL_INVALID_COMMAND_QUEUE);
            assert!(!crate::cl::finished_since(std::ptr::null_mut(), mark));
            assert_eq!(finish(q), CL_SUCCESS);
        }
        assert!(crate::cl::finished_since(q, mark), "complete");
        assert!(
            !crate::cl::finished_since(terminated, mark),
            "another queue"
        );
        let after = crate::cl::enqueued_mark();
        assert!(
            !crate::cl::finished_since(q, after),
            "a command enqueued after the call began"
        );
    }

    /// A pinned queue outlives the events the layer keeps on it: the application's release is
    /// flushed at once but made only after the last pinned event's release, and so is a release
    /// of the layer's own; an unpinned queue's release goes straight through. No queue reference
    /// of the layer's, whose release would flush on whichever thread lets go of the event.
    #[test]
    fn a_pinned_queue_is_released_after_its_events() {
        fake::install();
        let (ev, q) = (EVENTS as cl_event, (EVENTS + 1) as cl_command_queue);
        events::pin(ev);
        events::pin(ev);
        // SAFETY: a handle the fake platform knows.
        assert_eq!(unsafe { release(q) }, CL_SUCCESS);
        assert_eq!((calls("flush", q), calls("release", q)), (1, 0));
        crate::cl::release_queue(q);
        events::release_pinned(ev);
        assert_eq!(calls("release", q), 0, "one pin is left");
        events::release_pinned(ev);
        assert_eq!(calls("release", q), 2, "both held releases, once");
        // SAFETY: as above.
        assert_eq!(unsafe { release(q) }, CL_SUCCESS);
        assert_eq!(calls("release", q), 3, "unpinned: at once");
    }

    /// A release beyond the queue's references while it is pinned is the platform's error for
    /// a queue that is gone, as it would be without the layer, and releases nothing.
    #[test]
    fn a_pinned_queue_released_once_too_often_is_invalid() {
        fake::install();
        let (ev, q) = ((EVENTS + 2) as cl_event, ONE_REFERENCE as cl_command_queue);
        events::pin(ev);
        // SAFETY: a handle the fake platform knows (one reference).
        assert_eq!(unsafe { release(q) }, CL_SUCCESS);
        // SAFETY: as above.
        assert_eq!(unsafe { release(q) }, CL_INVALID_COMMAND_QUEUE);
        assert_eq!(calls("release", q), 0);
        events::release_pinned(ev);
        assert_eq!(calls("release", q), 1, "the one held release, once");
    }
}

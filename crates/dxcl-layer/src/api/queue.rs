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
        if crate::cl::events::hold_release(queue)? {
            return Ok(());
        }
        let below = down!(clReleaseCommandQueue);
        // SAFETY: the application's queue, passed on unchanged; the platform validates it.
        check(unsafe { below(queue) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cl::events;
    use opencl_sys::cl_icd::cl_icd_dispatch;
    use opencl_sys::{
        cl_event, cl_uint, CL_EVENT_COMMAND_QUEUE, CL_INVALID_COMMAND_QUEUE, CL_INVALID_EVENT,
        CL_QUEUE_REFERENCE_COUNT, CL_SUCCESS,
    };
    use std::collections::HashMap;
    use std::ffi::c_void;
    use std::sync::Mutex;

    /// A platform below the layer that knows only this test's handles: events at `EVENTS..`,
    /// each of the queue one above it; it counts flushes and releases of queues.
    const EVENTS: usize = 0xD0C1_0000;
    static CALLS: Mutex<Option<HashMap<(&str, usize), usize>>> = Mutex::new(None);

    fn count(call: &'static str, queue: cl_command_queue) {
        let mut g = CALLS.lock().unwrap();
        *g.get_or_insert_with(HashMap::new)
            .entry((call, queue as usize))
            .or_default() += 1;
    }

    fn calls(call: &'static str, queue: cl_command_queue) -> usize {
        let g = CALLS.lock().unwrap();
        g.as_ref()
            .and_then(|m| m.get(&(call, queue as usize)).copied())
            .unwrap_or(0)
    }

    unsafe extern "C" fn event_info(
        ev: cl_event,
        param: cl_uint,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int {
        let ours = (EVENTS..EVENTS + 0x100).contains(&(ev as usize));
        if !ours || param != CL_EVENT_COMMAND_QUEUE || size < size_of::<usize>() {
            return CL_INVALID_EVENT;
        }
        // SAFETY: the caller's buffer holds a pointer-sized value (checked above).
        unsafe {
            value.cast::<usize>().write_unaligned(ev as usize + 1);
            if !size_ret.is_null() {
                *size_ret = size_of::<usize>();
            }
        }
        CL_SUCCESS
    }

    /// Each test queue's reference count: 2, but 1 for `EVENTS + 3`.
    unsafe extern "C" fn queue_info(
        q: cl_command_queue,
        param: cl_uint,
        size: usize,
        value: *mut c_void,
        size_ret: *mut usize,
    ) -> cl_int {
        let ours = (EVENTS..EVENTS + 0x100).contains(&(q as usize));
        if !ours || param != CL_QUEUE_REFERENCE_COUNT || size < size_of::<cl_uint>() {
            return CL_INVALID_COMMAND_QUEUE;
        }
        let refs: cl_uint = if q as usize == EVENTS + 3 { 1 } else { 2 };
        // SAFETY: the caller's buffer holds a cl_uint (checked above).
        unsafe {
            value.cast::<cl_uint>().write_unaligned(refs);
            if !size_ret.is_null() {
                *size_ret = size_of::<cl_uint>();
            }
        }
        CL_SUCCESS
    }

    fn fake_platform() {
        // SAFETY: every slot of the table is an Option of a function pointer: zero is None.
        let mut t: Box<cl_icd_dispatch> = Box::new(unsafe { std::mem::zeroed() });
        t.clGetEventInfo = Some(event_info);
        t.clGetCommandQueueInfo = Some(queue_info);
        t.clReleaseEvent = Some(release_event);
        t.clFlush = Some(flush);
        t.clReleaseCommandQueue = Some(release_queue);
        crate::cl::set_target(t);
    }

    unsafe extern "C" fn release_event(_: cl_event) -> cl_int {
        CL_SUCCESS
    }

    unsafe extern "C" fn flush(q: cl_command_queue) -> cl_int {
        count("flush", q);
        CL_SUCCESS
    }

    unsafe extern "C" fn release_queue(q: cl_command_queue) -> cl_int {
        count("release", q);
        CL_SUCCESS
    }

    /// A pinned queue outlives the events the layer keeps on it: the application's release is
    /// flushed at once but made only after the last pinned event's release, and so is a release
    /// of the layer's own; an unpinned queue's release goes straight through. No queue reference
    /// of the layer's, whose release would flush on whichever thread lets go of the event.
    #[test]
    fn a_pinned_queue_is_released_after_its_events() {
        fake_platform();
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
        fake_platform();
        let (ev, q) = ((EVENTS + 2) as cl_event, (EVENTS + 3) as cl_command_queue);
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

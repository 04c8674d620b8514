//! A platform below the layer for unit tests: it knows only the tests' handles, events at
//! [`EVENTS`]`..+0x100`, each a command of the queue one above it, pending but for those from
//! [`COMPLETE`] on, and counts the calls made on queues (and the status queries and releases of
//! events). Every test installs the same table, so tests running in parallel agree on it; each
//! uses handles of its own.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::{
    cl_command_queue, cl_event, cl_int, cl_uint, CL_EVENT_COMMAND_EXECUTION_STATUS,
    CL_EVENT_COMMAND_QUEUE, CL_INVALID_COMMAND_QUEUE, CL_INVALID_EVENT, CL_QUEUED,
    CL_QUEUE_CONTEXT, CL_QUEUE_DEVICE, CL_QUEUE_PROPERTIES, CL_QUEUE_REFERENCE_COUNT, CL_SUCCESS,
};

pub(crate) const EVENTS: usize = 0xD0C1_0000;
/// The one test queue with a single reference (the others have 2).
pub(crate) const ONE_REFERENCE: usize = EVENTS + 3;
/// Events from here to the end of the range report `CL_COMPLETE`.
pub(crate) const COMPLETE: usize = EVENTS + 0xC0;
/// Every queue's device (`CL_QUEUE_DEVICE`): outside the range of the fake's events and queues.
pub(crate) const DEVICE: usize = EVENTS + 0x200;
/// Every queue's context (`CL_QUEUE_CONTEXT`) but [`OWN_QUEUE`]'s and [`SECOND_QUEUE`]'s: no call
/// is made on it.
pub(crate) const CONTEXT: usize = EVENTS + 0x201;
/// A queue of a context of its own, [`OWN_CONTEXT`]: for a test that registers its context (a
/// registry entry, a semaphore pool) without meeting the other tests' queues.
pub(crate) const OWN_QUEUE: usize = EVENTS + 0xEA;
pub(crate) const OWN_CONTEXT: usize = EVENTS + 0x202;
/// Another such queue, of [`SECOND_CONTEXT`].
pub(crate) const SECOND_QUEUE: usize = EVENTS + 0xEE;
pub(crate) const SECOND_CONTEXT: usize = EVENTS + 0x203;
/// A queue whose `clFinish` answers `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST`, as NVIDIA's
/// does after the layer's commands were terminated by a failed event.
pub(crate) const FINISH_TERMINATED: usize = EVENTS + 0xF1;

static CALLS: Mutex<Option<HashMap<(&str, usize), usize>>> = Mutex::new(None);

fn count(call: &'static str, queue: cl_command_queue) {
    let mut g = CALLS.lock().unwrap();
    *g.get_or_insert_with(HashMap::new)
        .entry((call, queue as usize))
        .or_default() += 1;
}

/// How often `call` ("flush", "marker", "release", "retain") was made on `queue` ("status":
/// queried of an event, "retain_event" and "release_event": an event retained or released, each
/// given as the queue).
pub(crate) fn calls(call: &'static str, queue: cl_command_queue) -> usize {
    let g = CALLS.lock().unwrap();
    g.as_ref()
        .and_then(|m| m.get(&(call, queue as usize)).copied())
        .unwrap_or(0)
}

fn ours(handle: usize) -> bool {
    (EVENTS..EVENTS + 0x100).contains(&handle)
}

/// Writes `v` as an info answer into a buffer of `size` bytes.
///
/// # Safety
/// `value` points to `size` writable bytes; `size_ret` is null or writable.
unsafe fn answer<T: Copy>(v: T, size: usize, value: *mut c_void, size_ret: *mut usize) -> cl_int {
    if size < size_of::<T>() {
        return opencl_sys::CL_INVALID_VALUE;
    }
    // SAFETY: the caller's buffer holds a T (checked above).
    unsafe {
        value.cast::<T>().write_unaligned(v);
        if !size_ret.is_null() {
            *size_ret = size_of::<T>();
        }
    }
    CL_SUCCESS
}

unsafe extern "C" fn event_info(
    ev: cl_event,
    param: cl_uint,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    if !ours(ev as usize) {
        return CL_INVALID_EVENT;
    }
    match param {
        // SAFETY: the caller's buffer (the query protocol).
        CL_EVENT_COMMAND_QUEUE => unsafe { answer(ev as usize + 1, size, value, size_ret) },
        // SAFETY: as above.
        CL_EVENT_COMMAND_EXECUTION_STATUS => unsafe {
            count("status", ev.cast());
            let status = if ev as usize >= COMPLETE {
                opencl_sys::CL_COMPLETE
            } else {
                CL_QUEUED
            };
            answer(status as cl_int, size, value, size_ret)
        },
        _ => CL_INVALID_EVENT,
    }
}

unsafe extern "C" fn queue_info(
    q: cl_command_queue,
    param: cl_uint,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    if !ours(q as usize) {
        return CL_INVALID_COMMAND_QUEUE;
    }
    count("queue_info", q);
    match param {
        CL_QUEUE_REFERENCE_COUNT => {
            let refs: cl_uint = if q as usize == ONE_REFERENCE { 1 } else { 2 };
            // SAFETY: the caller's buffer (the query protocol).
            unsafe { answer(refs, size, value, size_ret) }
        }
        // One device for every queue; no call is made on it.
        // SAFETY: as above.
        CL_QUEUE_DEVICE => unsafe { answer(DEVICE, size, value, size_ret) },
        // One context for every queue but OWN_QUEUE and SECOND_QUEUE, and every queue in order.
        CL_QUEUE_CONTEXT => {
            let context = match q as usize {
                OWN_QUEUE => OWN_CONTEXT,
                SECOND_QUEUE => SECOND_CONTEXT,
                _ => CONTEXT,
            };
            // SAFETY: as above.
            unsafe { answer(context, size, value, size_ret) }
        }
        // SAFETY: as above.
        CL_QUEUE_PROPERTIES => unsafe {
            answer(
                0 as opencl_sys::cl_command_queue_properties,
                size,
                value,
                size_ret,
            )
        },
        _ => CL_INVALID_COMMAND_QUEUE,
    }
}

fn event_known(ev: cl_event) -> cl_int {
    if ours(ev as usize) {
        CL_SUCCESS
    } else {
        CL_INVALID_EVENT
    }
}

unsafe extern "C" fn retain_event(ev: cl_event) -> cl_int {
    count("retain_event", ev.cast());
    event_known(ev)
}

unsafe extern "C" fn release_event(ev: cl_event) -> cl_int {
    count("release_event", ev.cast());
    event_known(ev)
}

unsafe extern "C" fn flush(q: cl_command_queue) -> cl_int {
    count("flush", q);
    CL_SUCCESS
}

/// A marker's event is the event just below its queue (the fake's events belong to the queue one
/// above them).
unsafe extern "C" fn marker(
    q: cl_command_queue,
    _n: cl_uint,
    _wait: *const cl_event,
    ev: *mut cl_event,
) -> cl_int {
    if !ours(q as usize) || q as usize == EVENTS {
        return CL_INVALID_COMMAND_QUEUE;
    }
    count("marker", q);
    if !ev.is_null() {
        // SAFETY: the caller's out pointer (the API's contract).
        unsafe { *ev = (q as usize - 1) as cl_event };
    }
    CL_SUCCESS
}

unsafe extern "C" fn finish(q: cl_command_queue) -> cl_int {
    match q as usize {
        FINISH_TERMINATED => opencl_sys::CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
        q if ours(q) => CL_SUCCESS,
        _ => CL_INVALID_COMMAND_QUEUE,
    }
}

unsafe extern "C" fn retain_queue(q: cl_command_queue) -> cl_int {
    count("retain", q);
    CL_SUCCESS
}

unsafe extern "C" fn release_queue(q: cl_command_queue) -> cl_int {
    count("release", q);
    CL_SUCCESS
}

/// Callbacks registered, by event: never made (as NVIDIA at times does not); a test makes them.
static CALLBACKS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

type EventCallback = unsafe extern "C" fn(cl_event, cl_int, *mut c_void);

unsafe extern "C" fn set_event_callback(
    ev: cl_event,
    _status: cl_int,
    _f: Option<EventCallback>,
    data: *mut c_void,
) -> cl_int {
    if !ours(ev as usize) {
        return CL_INVALID_EVENT;
    }
    CALLBACKS.lock().unwrap().push((ev as usize, data as usize));
    CL_SUCCESS
}

/// The registered callbacks' user data for `events`, taken (each event's in registration order).
pub(crate) fn callbacks_of<const N: usize>(events: [usize; N]) -> Vec<(usize, *mut c_void)> {
    let mut g = CALLBACKS.lock().unwrap();
    let (taken, kept) = g.drain(..).partition(|(ev, _)| events.contains(ev));
    *g = kept;
    taken
        .into_iter()
        .map(|(ev, data): (usize, usize)| (ev, data as *mut c_void))
        .collect()
}

/// Makes the fake the table below the layer.
pub(crate) fn install() {
    // SAFETY: every slot of the table is an Option of a function pointer: zero is None.
    let mut t: Box<cl_icd_dispatch> = Box::new(unsafe { std::mem::zeroed() });
    t.clGetEventInfo = Some(event_info);
    t.clGetCommandQueueInfo = Some(queue_info);
    t.clRetainEvent = Some(retain_event);
    t.clReleaseEvent = Some(release_event);
    t.clFlush = Some(flush);
    t.clFinish = Some(finish);
    t.clEnqueueMarkerWithWaitList = Some(marker);
    t.clRetainCommandQueue = Some(retain_queue);
    t.clReleaseCommandQueue = Some(release_queue);
    t.clSetEventCallback = Some(set_event_callback);
    super::set_target(t);
}

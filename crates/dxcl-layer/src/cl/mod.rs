//! The platform below the layer: its dispatch table, the query protocol, wait lists and the
//! layer's own events. Every other part calls OpenCL through here; nothing here knows Direct3D.
//!
//! - [`info`]: the size-query protocol of `clGet*Info`, both as caller and as answerer.
//! - [`copy`]: the layer's own non-blocking copies between a memory object and host memory.
//! - [`events`]: markers, and the command types of the acquire/release events handed out.
//! - [`exit`]: the `atexit` handler that begins the process's exit for the layer.
//! - [`held`]: the ledger of the references the layer itself holds.
//! - [`reaper`]: releases that completion callbacks hand to a thread of the layer's.
//! - [`wait`]: wait lists of the layer's own commands, failed events replaced.

use std::cell::Cell;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::{cl_event, cl_int, cl_uint, CL_SUCCESS};

use crate::trace::{self, Step};

pub(crate) mod copy;
pub(crate) mod events;
pub(crate) mod exit;
#[cfg(test)]
pub(crate) mod fake;
pub(crate) mod held;
pub(crate) mod info;
pub(crate) mod poller;
pub(crate) mod reaper;
pub(crate) mod release_thread;
pub(crate) mod wait;

/// The table below the layer (leaked on purpose: calls in flight may still read it after a
/// re-initialisation, so it must never be freed).
static TARGET: AtomicPtr<cl_icd_dispatch> = AtomicPtr::new(null_mut());

/// The dispatch table of the layer or platform below, once `clInitLayer` has run.
pub(crate) fn target() -> Option<&'static cl_icd_dispatch> {
    let table = TARGET.load(Ordering::Acquire);
    // SAFETY: TARGET only ever holds null or a pointer leaked from a Box in `set_target`, never
    // freed.
    unsafe { table.as_ref() }
}

/// Makes `table` the table below (the loader's `clInitLayer`); it is never freed.
pub(crate) fn set_target(table: Box<cl_icd_dispatch>) {
    TARGET.store(Box::into_raw(table), Ordering::Release);
}

/// The slot `$slot` of the table below the layer, or `CL_INVALID_OPERATION` from the enclosing
/// function when the platform does not have it.
macro_rules! down {
    ($slot:ident) => {
        crate::cl::target()
            .and_then(|t| t.$slot)
            .ok_or(opencl_sys::CL_INVALID_OPERATION)?
    };
}
pub(crate) use down;

/// Turns a platform status into a `Result`.
pub(crate) fn check(code: cl_int) -> Result<(), cl_int> {
    if code == CL_SUCCESS {
        Ok(())
    } else {
        Err(code)
    }
}

/// A wait list as OpenCL takes it: (count, pointer), with NULL for an empty list.
pub(crate) fn wait_list(wait: &[cl_event]) -> (cl_uint, *const cl_event) {
    if wait.is_empty() {
        (0, std::ptr::null())
    } else {
        (wait.len() as cl_uint, wait.as_ptr())
    }
}

/// Flushes `queue`, so commands another thread or API waits on get submitted.
pub(crate) fn flush(queue: opencl_sys::cl_command_queue) {
    if let Some(flush) = target().and_then(|t| t.clFlush) {
        // SAFETY: the caller's queue; an invalid one just fails the call.
        trace::time(Step::ClFlush, || unsafe { flush(queue) });
    }
}

/// The layer's own in-order queue on `device` of `context` (owned by the caller), created below
/// the layer so that nothing of the layer's interception applies to it.
pub(crate) fn create_queue(
    context: opencl_sys::cl_context,
    device: opencl_sys::cl_device_id,
) -> Option<opencl_sys::cl_command_queue> {
    let create = target()?.clCreateCommandQueueWithProperties?;
    let mut err = CL_SUCCESS;
    // SAFETY: a context and one of its devices; no properties (in order, default size).
    let q = unsafe { create(context, device, std::ptr::null(), &mut err) };
    if err != CL_SUCCESS || q.is_null() {
        return None;
    }
    held::took(held::Kind::Queue, q);
    Some(q)
}

/// Retains `queue` (the platform validates it).
pub(crate) fn retain_queue(queue: opencl_sys::cl_command_queue) -> Result<(), cl_int> {
    let retain = down!(clRetainCommandQueue);
    // SAFETY: the caller's queue; an invalid one just fails the call.
    check(trace::time(Step::ClRetainQueue, || unsafe {
        retain(queue)
    }))?;
    held::took(held::Kind::Queue, queue);
    Ok(())
}

/// The context of `queue`.
pub(crate) fn queue_context(
    queue: opencl_sys::cl_command_queue,
) -> Result<opencl_sys::cl_context, cl_int> {
    let f = down!(clGetCommandQueueInfo);
    let c: usize = trace::time(Step::ClQueueInfo, || {
        // SAFETY: our own buffer of the queried type's size; the platform validates the queue.
        info::query_value(|n, p, r| unsafe { f(queue, opencl_sys::CL_QUEUE_CONTEXT, n, p, r) })
    })?;
    Ok(c as opencl_sys::cl_context)
}

/// Retains a memory object below the layer (the platform validates it).
pub(crate) fn retain_mem(mem: opencl_sys::cl_mem) -> Result<(), cl_int> {
    let retain = down!(clRetainMemObject);
    // SAFETY: the caller's object; an invalid one just fails the call.
    check(unsafe { retain(mem) })?;
    held::took(held::Kind::Memory, mem);
    Ok(())
}

/// Releases a reference of the layer's to a memory object ([`retain_mem`]'s, or its own).
pub(crate) fn release_mem(mem: opencl_sys::cl_mem) {
    held::let_go(mem);
    if let Some(release) = target().and_then(|t| t.clReleaseMemObject) {
        // SAFETY: a reference the layer holds, released once.
        unsafe { release(mem) };
    }
}

/// Releases a reference to a queue the layer holds (a queue of its own, or one it retained);
/// held back while an event the layer keeps pins the queue, like the application's
/// (events::hold_release).
pub(crate) fn release_queue(queue: opencl_sys::cl_command_queue) {
    if events::hold_release(queue) != Ok(false) {
        return;
    }
    release_queue_now(queue);
}

/// Releases a reference to a queue now (a release [`events::hold_release`] held back).
pub(crate) fn release_queue_now(queue: opencl_sys::cl_command_queue) {
    queue_changed();
    held::let_go(queue);
    if let Some(release) = target().and_then(|t| t.clReleaseCommandQueue) {
        // SAFETY: a queue the layer created and holds one reference to.
        trace::time(Step::ClReleaseQueue, || unsafe { release(queue) });
    }
}

/// The platform's `CL_QUEUE_REFERENCE_COUNT` of `queue` (its error for an invalid queue).
pub(crate) fn queue_references(queue: opencl_sys::cl_command_queue) -> Result<cl_uint, cl_int> {
    let f = down!(clGetCommandQueueInfo);
    // SAFETY: our own buffer of the queried type's size; the platform validates the queue.
    info::query_value(|n, p, r| unsafe { f(queue, opencl_sys::CL_QUEUE_REFERENCE_COUNT, n, p, r) })
}

/// The device of `queue`.
pub(crate) fn queue_device(
    queue: opencl_sys::cl_command_queue,
) -> Result<opencl_sys::cl_device_id, cl_int> {
    let f = down!(clGetCommandQueueInfo);
    let d: usize = trace::time(Step::ClQueueInfo, || {
        // SAFETY: our own buffer of the queried type's size; the platform validates the queue.
        info::query_value(|n, p, r| unsafe { f(queue, opencl_sys::CL_QUEUE_DEVICE, n, p, r) })
    })?;
    Ok(d as opencl_sys::cl_device_id)
}

/// What the hand-off path needs of a queue: its context, its device, and whether it runs its
/// commands in order.
#[derive(Clone, Copy)]
pub(crate) struct QueueFacts {
    pub context: opencl_sys::cl_context,
    pub device: opencl_sys::cl_device_id,
    pub in_order: bool,
}

/// Counts every release of a command queue made through the layer (the application's and the
/// layer's own) and every change of a queue's properties: a queue handle whose facts were read
/// at the current count still names the same live queue.
static QUEUE_CHANGES: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The facts of the queue this thread last handed objects off on, with the count they were
    /// read at (see [`queue_facts`]).
    static LAST_QUEUE: Cell<Option<(usize, u64, QueueFacts)>> = const { Cell::new(None) };
}

/// Tickets of `clFinish` calls made through the layer, taken as each begins: a command whose
/// enqueue returned before [`enqueued_mark`] read the count is among the commands "previously
/// queued" of every `clFinish` that took a ticket of that count or more (one total order of
/// these atomics: the ticket after the mark means the call began after the enqueue returned).
static FINISH_TICKETS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The queue this thread last finished with `CL_SUCCESS` through the layer, and that
    /// call's ticket (see [`finished_since`]).
    static LAST_FINISHED: Cell<Option<(usize, u64)>> = const { Cell::new(None) };
}

/// A `clFinish` of `queue` begins: its ticket, for [`finished`] once it returns.
pub(crate) fn finish_ticket() -> u64 {
    FINISH_TICKETS.fetch_add(1, Ordering::SeqCst)
}

/// The `clFinish` of `queue` with `ticket` returned `CL_SUCCESS`: "clFinish blocks until all
/// previously queued OpenCL commands in command_queue are issued to the associated device and
/// have completed".
pub(crate) fn finished(queue: opencl_sys::cl_command_queue, ticket: u64) {
    LAST_FINISHED.with(|c| c.set(Some((queue as usize, ticket))));
}

/// When a command's enqueue returned (see [`enqueued_mark`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EnqueuedMark {
    ticket: u64,
}

/// Read after a command's enqueue returned: a mark that a later `clFinish` of its queue passes.
pub(crate) fn enqueued_mark() -> EnqueuedMark {
    EnqueuedMark {
        ticket: FINISH_TICKETS.load(Ordering::SeqCst),
    }
}

/// Whether this thread's last successful `clFinish` was of `queue` and began after the enqueue
/// that read `mark` returned: then that command has ended, with no query of the platform. Also
/// where a command of the queue failed: NVIDIA's `clFinish` still waits for a kernel running
/// ahead of a terminated command (`tests/platform/failed_event.c`, case `running`; H200,
/// docs/results/idle-cold-h200-2026-11-29.md), and a terminated command runs nothing.
pub(crate) fn finished_since(queue: opencl_sys::cl_command_queue, mark: EnqueuedMark) -> bool {
    LAST_FINISHED
        .with(Cell::get)
        .is_some_and(|(q, ticket)| q == queue as usize && ticket >= mark.ticket)
}

/// A queue may be destroyed, or its properties changed, from now on: facts read before are
/// stale. Called before the release or change is passed on.
pub(crate) fn queue_changed() {
    QUEUE_CHANGES.fetch_add(1, Ordering::AcqRel);
}

/// [`QueueFacts`] of `queue` (the platform's error for an invalid queue). An application hands
/// objects off on the same queue again and again, and three queries per hand-off cost more than
/// the layer's own work in it (docs/benchmarks.md): the facts of the queue this thread used last
/// are kept until any queue is released or changed. The count is read before the queries, so a
/// release that races them leaves the facts stale, never wrongly current.
pub(crate) fn queue_facts(queue: opencl_sys::cl_command_queue) -> Result<QueueFacts, cl_int> {
    let changes = QUEUE_CHANGES.load(Ordering::Acquire);
    let last = LAST_QUEUE.with(Cell::get);
    if let Some((q, at, facts)) = last {
        if q == queue as usize && at == changes {
            return Ok(facts);
        }
    }
    let facts = QueueFacts {
        context: queue_context(queue)?,
        device: queue_device(queue)?,
        in_order: queue_in_order(queue)?,
    };
    LAST_QUEUE.with(|c| c.set(Some((queue as usize, changes, facts))));
    Ok(facts)
}

/// Whether `queue` runs its commands in order (no `CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE`).
pub(crate) fn queue_in_order(queue: opencl_sys::cl_command_queue) -> Result<bool, cl_int> {
    let f = down!(clGetCommandQueueInfo);
    let props: opencl_sys::cl_command_queue_properties = trace::time(Step::ClQueueInfo, || {
        // SAFETY: our own buffer of the queried type's size; the platform validates the queue.
        info::query_value(|n, p, r| unsafe { f(queue, opencl_sys::CL_QUEUE_PROPERTIES, n, p, r) })
    })?;
    Ok(props & opencl_sys::CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cl::fake::{self, calls};

    /// A queue's facts are read once and kept; a release or property change of any queue made
    /// through the layer makes the next hand-off read them again; an invalid queue is refused.
    #[test]
    fn queue_facts_are_kept_until_a_queue_changes() {
        fake::install();
        let q = (fake::EVENTS + 0x31) as opencl_sys::cl_command_queue;
        let reads = || calls("queue_info", q);
        let f = queue_facts(q).unwrap();
        assert_eq!(f.context as usize, fake::CONTEXT);
        assert_eq!(f.device as usize, fake::DEVICE);
        assert!(f.in_order);
        let after_first = reads();
        assert!(
            after_first >= 3,
            "three queries at the first read: {after_first}"
        );
        // Kept, unless a test beside this one released a queue meanwhile.
        let at = QUEUE_CHANGES.load(Ordering::Acquire);
        queue_facts(q).unwrap();
        if QUEUE_CHANGES.load(Ordering::Acquire) == at {
            assert_eq!(reads(), after_first, "kept: no query");
        }
        queue_changed();
        queue_facts(q).unwrap();
        assert!(reads() >= after_first + 3, "read again after a change");
        // Another handle is never answered from the kept facts.
        let bad = 0x1234 as opencl_sys::cl_command_queue;
        assert!(queue_facts(bad).is_err());
    }
}

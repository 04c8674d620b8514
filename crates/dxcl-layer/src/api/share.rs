//! `clEnqueueAcquireD3D1xObjects{KHR,NV}` and `clEnqueueReleaseD3D1xObjects{KHR,NV}`.
//!
//! Acquire state is context-wide (one [`AcquireState`] per memory object), checked and claimed in
//! one step under the registry's lock, and settled when the call's work is done (without it:
//! [`registry::AcquireCell`]).
//! Synchronisation, unless the
//! context asked for `CL_CONTEXT_INTEROP_USER_SYNC` (KHR only; NV always synchronises):
//! - acquire: D3D work issued before it completes before its event completes (host pointer:
//!   `IDxclInteropResource::WaitForDeviceWork`; staging copy: D3D's own `Map` wait);
//! - release: later D3D work waits for the release's wait list and all earlier work of the queue
//!   (host pointer: `AddPendingWork` with work polling the release's end marker; staging copy:
//!   the write-back runs as that pending work, or on a foreign device the release waits for it
//!   unless its wait list holds an unset user event: `strategy/staging/`).
//!
//! External memory: `clEnqueueAcquire/ReleaseExternalMemObjectsKHR` bracket the imported objects;
//! the ordering is GPU-side through the context's shared semaphores (`external::sync`) where both
//! sides have them, else the CPU waits above.

use std::sync::Arc;

use opencl_sys::{
    cl_command_queue, cl_event, cl_int, cl_mem, cl_uint, CL_INVALID_COMMAND_QUEUE,
    CL_INVALID_CONTEXT, CL_INVALID_EVENT_WAIT_LIST, CL_INVALID_MEM_OBJECT, CL_INVALID_VALUE,
};

use super::{down, slice};
use crate::cl::events::{self, marker};
use crate::cl::info::query_value;
use crate::core::tokens::{Ext, Flavor};
use crate::registry::{self, key, AcquireCell, AcquireState};
use crate::strategy::{Alone, HandOff, SharingStrategy};
use crate::trace::{self, Step};
use crate::validate::AccessMark;
use dxcl_abi::interop::{DXCL_OPENCL_ACCESS_ACQUIRED, DXCL_OPENCL_ACCESS_SHARED};

/// One object of an acquire/release call, copied out of the registry.
struct Item {
    mem: cl_mem,
    sharing: Arc<dyn SharingStrategy>,
    /// The entry's acquire state, which the call settles.
    acquire: Arc<AcquireCell>,
    /// Validation: how dxcl's runtime learns the acquire state.
    mark: Option<Arc<AccessMark>>,
}

/// A call's objects: inline for the usual one.
type Items = smallvec::SmallVec<[Item; 1]>;

/// Hands a marker event to the application (recording its command type) or drops it.
///
/// # Safety
/// `event` is null or writable.
unsafe fn hand_out(ev: cl_event, command: cl_uint, event: *mut cl_event) {
    if event.is_null() {
        events::release(ev);
    } else {
        trace::time(Step::RecordEvent, || events::record(ev, command));
        crate::cl::held::handed_over(ev);
        // SAFETY: caller's contract.
        unsafe { *event = ev };
    }
}

/// The body of the eight acquire/release entry points.
///
/// # Safety
/// The pointers obey the entry point's contract.
#[allow(clippy::too_many_arguments)] // The C signature plus the extension and direction.
pub(crate) unsafe fn acquire_release(
    ext: Ext,
    release: bool,
    queue: cl_command_queue,
    num_objects: cl_uint,
    mem_objects: *const cl_mem,
    num_events: cl_uint,
    wait_list: *const cl_event,
    event: *mut cl_event,
) -> Result<(), cl_int> {
    let _call = trace::span(if release {
        Step::ReleaseCall
    } else {
        Step::AcquireCall
    });
    let command = || {
        if release {
            ext.version.command_release()
        } else {
            ext.version.command_acquire()
        }
    };
    // CL_INVALID_VALUE "if num_objects is zero and mem_objects is not a NULL value or if
    // num_objects > 0 and mem_objects is NULL".
    if (num_objects == 0) != mem_objects.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // CL_INVALID_EVENT_WAIT_LIST "if event_wait_list is NULL and num_events_in_wait_list > 0, or
    // event_wait_list is not NULL and num_events_in_wait_list is 0".
    if (num_events == 0) != wait_list.is_null() {
        return Err(CL_INVALID_EVENT_WAIT_LIST);
    }
    // SAFETY: caller's contract: wait_list holds num_events events.
    let wait: &[cl_event] = unsafe { slice(wait_list, num_events) };
    // CL_INVALID_EVENT_WAIT_LIST "if event objects in event_wait_list are not valid events":
    // checked here, before any D3D work, because platforms differ in what their own enqueues
    // answer (NVIDIA: CL_INVALID_EVENT).
    for &ev in wait {
        let event_info = down!(clGetEventInfo);
        let valid = !ev.is_null()
            && trace::time(Step::ClEventInfo, || {
                // SAFETY: a query into our own buffer; an invalid event just fails it.
                query_value::<usize>(|n, p, r| unsafe {
                    event_info(ev, opencl_sys::CL_EVENT_CONTEXT, n, p, r)
                })
            })
            .is_ok();
        if !valid {
            return Err(CL_INVALID_EVENT_WAIT_LIST);
        }
    }
    if num_objects == 0 {
        // "If num_objects is 0 and mem_objects is NULL then the function does nothing and
        // returns CL_SUCCESS." An application asking for an event still gets one: a marker
        // with the wait list, reporting this command's type.
        if !event.is_null() {
            let ev = marker(queue, wait)?;
            // SAFETY: event checked non-null; caller's contract.
            unsafe { hand_out(ev, command(), event) };
        }
        return Ok(());
    }
    // CL_INVALID_COMMAND_QUEUE "if command_queue is not a valid command-queue".
    let facts = crate::cl::queue_facts(queue).map_err(|_| CL_INVALID_COMMAND_QUEUE)?;
    let context = facts.context as usize;
    // SAFETY: caller's contract: mem_objects holds num_objects handles.
    let mems: &[cl_mem] = unsafe { slice(mem_objects, num_objects) };
    let claim_span = trace::span(Step::RegistryClaim);
    let (user_sync, items) = claim(ext, release, context, mems)?;
    drop(claim_span);
    let sync = ext.flavor == Flavor::Nv || !user_sync;
    // Validation: Direct3D may touch the resources again once the release begins (the staging
    // copy does), and not once the acquire is done (the staging copy has finished).
    let mark = |access, call| {
        if !crate::validate::on() {
            return;
        }
        for m in items.iter().filter_map(|it| it.mark.as_ref()) {
            m.set(access, call);
        }
    };
    // One object, no wait list, no event: its strategy may do the call whole (an idle
    // hand-off's usual call, kept lean).
    let alone = match &items[..] {
        [it] if wait.is_empty() && event.is_null() => Some((it, Alone { queue, facts, sync })),
        _ => None,
    };
    let done = if release {
        mark(DXCL_OPENCL_ACCESS_SHARED, ext.release_call());
        match alone.and_then(|(it, call)| it.sharing.release_alone(it.mem, call)) {
            Some(done) => done.map(|()| std::ptr::null_mut()),
            None => {
                // Another object of the call orders Direct3D after the event once the first has.
                let wanted = !event.is_null() || items.len() > 1;
                release_objects((queue, facts), &items, wait, (sync, wanted))
            }
        }
    } else {
        match alone.and_then(|(it, call)| it.sharing.acquire_alone(it.mem, call)) {
            Some(done) => done.map(|()| std::ptr::null_mut()),
            None => acquire_objects((queue, facts), &items, wait, (sync, !event.is_null())),
        }
    };
    // Settled: OpenCL's after an acquire that succeeded or a release that failed, Direct3D's
    // otherwise.
    let acquired = release != done.is_ok();
    let settled = if acquired {
        AcquireState::Acquired
    } else {
        AcquireState::Released
    };
    for it in &items {
        it.acquire.set(settled, acquired.then_some(ext));
    }
    // Validation marks: ACQUIRED only once the acquire's own Direct3D work is done; a failed
    // release leaves the objects OpenCL's.
    if acquired {
        mark(DXCL_OPENCL_ACCESS_ACQUIRED, ext.acquire_call());
    }
    let ev = done?;
    // SAFETY: caller's contract.
    unsafe { hand_out(ev, command(), event) };
    Ok(())
}

/// Checks the call's context and objects and claims the objects: of two threads acquiring (or
/// releasing) the same object at once, one gets the error. The claim holds until the call's work
/// is done (its settle), so no other thread acquires an object whose release has not yet written
/// it back, nor uses one whose acquire has not yet filled it. Returns the context's user sync
/// and the claimed objects.
fn claim(
    ext: Ext,
    release: bool,
    context: usize,
    mems: &[cl_mem],
) -> Result<(bool, Items), cl_int> {
    let v = ext.version;
    let (from, to) = if release {
        (AcquireState::Acquired, AcquireState::Releasing)
    } else {
        (AcquireState::Released, AcquireState::Acquiring)
    };
    let by = (!release).then_some(ext);
    // The object this thread claimed last, with no entry added or removed since: checked as
    // the look-up below found it, claimed without the registry's lock.
    if let [m] = mems {
        if let Some((user_sync, sharing, acquire)) = registry::last_claimed(key(*m), context, v) {
            if acquire.claim(from, to, by).is_none() {
                return Err(not_claimable(ext, release));
            }
            let item = Item {
                mem: *m,
                sharing,
                acquire,
                mark: None,
            };
            return Ok((user_sync, smallvec::smallvec![item]));
        }
    }
    registry::with(|r| -> Result<(bool, Items), cl_int> {
        // CL_INVALID_CONTEXT "if context associated with command_queue was not created from a
        // Direct3D 1x context".
        let user_sync = r
            .contexts
            .get(&context)
            .filter(|c| c.version == v)
            .map(|c| c.user_sync)
            .ok_or(CL_INVALID_CONTEXT)?;
        let mut items = Items::with_capacity(mems.len());
        for (i, &m) in mems.iter().enumerate() {
            // CL_INVALID_MEM_OBJECT "if memory objects in mem_objects are not valid OpenCL memory
            // objects or if memory objects in mem_objects have not been created from Direct3D 1x
            // resources".
            let e = r
                .mems
                .get(&key(m))
                .filter(|e| e.version == v)
                .ok_or(CL_INVALID_MEM_OBJECT)?;
            // Objects of another context cannot be acquired through this queue.
            if e.context != context {
                return Err(CL_INVALID_CONTEXT);
            }
            // An object another thread's call is acquiring or releasing right now counts as
            // acquired and not released: that call has not returned.
            if e.acquire.state() != from || mems[..i].contains(&m) {
                return Err(not_claimable(ext, release));
            }
            items.push(Item {
                mem: m,
                sharing: e.sharing.clone(),
                acquire: e.acquire.clone(),
                mark: e.validation.clone(),
            });
        }
        // Claimed once all are checked. A claim without the lock may win one meanwhile: then
        // this call claims none.
        let mut replaced = smallvec::SmallVec::<[u8; 1]>::new();
        for it in &items {
            match it.acquire.claim(from, to, by) {
                Some(was) => replaced.push(was),
                None => {
                    for (it, &was) in items.iter().zip(&replaced) {
                        it.acquire.put_back(was);
                    }
                    return Err(not_claimable(ext, release));
                }
            }
        }
        if let [m] = mems {
            registry::remember(key(*m), &r.mems[&key(*m)], user_sync);
        }
        Ok((user_sync, items))
    })
}

/// The error for an object the call cannot claim: acquired already (an acquire), or not
/// acquired (a release).
fn not_claimable(ext: Ext, release: bool) -> cl_int {
    if release {
        // CL_D3D1x_RESOURCE_NOT_ACQUIRED "if memory objects in mem_objects have not previously
        // been acquired using clEnqueueAcquireD3D1xObjects, or have been released using
        // clEnqueueReleaseD3D1xObjects since the last time that they were acquired".
        ext.version.not_acquired()
    } else {
        // CL_D3D1x_RESOURCE_ALREADY_ACQUIRED "if memory objects in mem_objects have previously
        // been acquired using clEnqueueAcquireD3D1xObjects but have not been released using
        // clEnqueueReleaseD3D1xObjects".
        ext.version.already_acquired()
    }
}

/// Each object's strategy acquires it; the call's event follows all of them (null when not
/// `wanted` and no marker was needed).
fn acquire_objects(
    (queue, facts): (cl_command_queue, crate::cl::QueueFacts),
    items: &[Item],
    wait: &[cl_event],
    (sync, wanted): (bool, bool),
) -> Result<cl_event, cl_int> {
    let mut h = trace::time(Step::HandOffNew, || {
        HandOff::acquire(queue, facts, wait, sync)
    });
    h.event_wanted = wanted;
    each_object(
        &mut h,
        items,
        Step::StrategyAcquire,
        &|it, h| it.sharing.acquire(it.mem, h),
        None,
    )?;
    trace::time(Step::Finish, || h.finish())
}

/// What a strategy does with one object of the call.
type ObjectStep<'f> = &'f dyn Fn(&Item, &mut HandOff<'_>) -> Result<(), cl_int>;

/// Runs `act` on each object of the call, timed as `step`. Where the wait list holds a user
/// event still unset, the platform's external acquire or release goes before every command that
/// waits for it (HandOff::imports_now): the importing objects first, then that command, then
/// `after_imports` on each of them, then the others. Their order within one call is not
/// observable: all follow the same wait list (and a release, the queue's earlier work).
fn each_object(
    h: &mut HandOff<'_>,
    items: &[Item],
    step: Step,
    act: ObjectStep<'_>,
    after_imports: Option<ObjectStep<'_>>,
) -> Result<(), cl_int> {
    // A staging release's read-back goes out before the next object's step, which may wait for
    // the device lock or the runtime (see `release_objects`).
    let one = |it: &Item, h: &mut HandOff<'_>| {
        h.flush_if_due();
        trace::time(step, || act(it, h))
    };
    if !h.waits_for_unset_user_event() {
        return items.iter().try_for_each(|it| one(it, h));
    }
    let (first, rest): (Vec<&Item>, Vec<&Item>) = items.iter().partition(|it| it.sharing.imports());
    for it in &first {
        one(it, h)?;
    }
    trace::time(Step::Finish, || h.imports_now())?;
    if let Some(after) = after_imports {
        for it in &first {
            trace::time(step, || after(it, h))?;
        }
    }
    rest.iter().try_for_each(|it| one(it, h))
}

/// Each object's strategy releases it after all work already submitted to the queue; then,
/// with the call's event, orders later Direct3D work after it. Returns the event, or null when
/// not `wanted` and its reference went to Direct3D's pending work.
fn release_objects(
    (queue, facts): (cl_command_queue, crate::cl::QueueFacts),
    items: &[Item],
    wait: &[cl_event],
    (sync, wanted): (bool, bool),
) -> Result<cl_event, cl_int> {
    let mut h = trace::time(Step::HandOffNew, || {
        HandOff::release(queue, facts, wait, sync)
    })?;
    h.event_wanted = wanted;
    each_object(
        &mut h,
        items,
        Step::StrategyRelease,
        &|it, h| it.sharing.release(it.mem, h),
        Some(&|it, h| it.sharing.release_commands(it.mem, h)),
    )?;
    // A staging release left its read-back's flush to the end of the call (one flush for the
    // call). Another thread's Direct3D access may already wait for that read-back, holding the
    // device's lock or the runtime's: before a step that may wait (another object's external
    // release, or its ordering after the call), the flush goes out. A staging object's own
    // final marker and ordering wait for nothing.
    if items.len() > 1 {
        h.flush_if_due();
    }
    let ev = trace::time(Step::Finish, || h.finish())?;
    let ordered = items
        .iter()
        .try_for_each(|it| trace::time(Step::StrategyReleased, || it.sharing.released(&mut h, ev)));
    if let Err(e) = ordered {
        if !h.event_lent() {
            events::release(ev);
        }
        return Err(e);
    }
    let ev = if h.event_lent() {
        std::ptr::null_mut()
    } else {
        ev
    };
    // The runtime may wait on the event from another thread: make sure it gets submitted, here
    // on the thread that enqueued it. A flush from Direct3D's thread can meet a blocking call on
    // this queue in another thread, whose wait rusticl 22.3 then loses (docs/conformance.md).
    // Not where every object's ordering was left to Direct3D's next access: external memory
    // with semaphores (no rusticl among those platforms), whose access flushes if it must.
    if h.left_to_next_access() < items.len() {
        h.flush_at_end();
    }
    Ok(ev)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::cl::fake::{self, calls, EVENTS};
    use crate::strategy::{Decision, Strategy};

    /// A release that leaves its flush to the end of the call, as a staging release does, and
    /// notes how many flushes its queue had when each of its steps began.
    struct FlushesAtEnd {
        /// The fake's queue, as a number (a handle is not Send).
        queue: usize,
        seen: Mutex<Vec<usize>>,
    }

    impl FlushesAtEnd {
        fn note(&self) {
            let q = self.queue as cl_command_queue;
            self.seen.lock().unwrap().push(calls("flush", q));
        }
    }

    impl SharingStrategy for FlushesAtEnd {
        fn decision(&self) -> Decision {
            Decision {
                strategy: Strategy::StagingCopy,
                reason: "a test's",
            }
        }

        fn acquire(&self, _mem: cl_mem, _h: &mut HandOff<'_>) -> Result<(), cl_int> {
            Ok(())
        }

        fn release(&self, _mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
            self.note();
            h.flush_at_end();
            Ok(())
        }

        fn released(&self, _h: &mut HandOff<'_>, _done: cl_event) -> Result<(), cl_int> {
            self.note();
            Ok(())
        }
    }

    /// Releases `n` objects of `strategy` on its queue; the flushes made in all.
    fn release_all(strategy: &Arc<FlushesAtEnd>, n: usize) -> usize {
        let q = strategy.queue as cl_command_queue;
        let items: Vec<Item> = (1..=n)
            .map(|m| Item {
                mem: m as cl_mem,
                sharing: strategy.clone(),
                acquire: Default::default(),
                mark: None,
            })
            .collect();
        let facts = crate::cl::QueueFacts {
            context: fake::CONTEXT as opencl_sys::cl_context,
            device: fake::DEVICE as opencl_sys::cl_device_id,
            in_order: true,
        };
        let before = calls("flush", q);
        let ev = release_objects((q, facts), &items, &[], (true, true)).unwrap();
        events::release(ev);
        calls("flush", q) - before
    }

    /// A release's flush left to the end of the call is one flush for a single object; with
    /// several, each object's deferred flush goes out before the next object's step and before
    /// the call's shared commands and ordering, any of which may wait for what another thread's
    /// wait for those commands holds (a Direct3D access waiting for a staging read-back, inside
    /// the device's lock).
    #[test]
    fn a_deferred_flush_goes_out_before_any_step_that_may_block() {
        fake::install();
        let one = Arc::new(FlushesAtEnd {
            queue: EVENTS + 0x5B,
            seen: Mutex::new(Vec::new()),
        });
        assert_eq!(release_all(&one, 1), 1, "one flush, at the end");
        assert_eq!(*one.seen.lock().unwrap(), [0, 0], "none before it");

        let two = Arc::new(FlushesAtEnd {
            queue: EVENTS + 0x5E,
            seen: Mutex::new(Vec::new()),
        });
        assert_eq!(
            release_all(&two, 2),
            3,
            "the first's, the second's, the end's"
        );
        assert_eq!(
            *two.seen.lock().unwrap(),
            [0, 1, 2, 2],
            "the first's before the second's step, the second's before the ordering"
        );
    }
}

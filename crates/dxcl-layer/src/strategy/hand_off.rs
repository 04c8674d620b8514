//! One acquire or release call: what its objects' strategies do together in it.
//!
//! `api/` makes a [`HandOff`], lets each object's strategy act on it, then [`HandOff::finish`]
//! issues the shared commands: one `clEnqueueAcquire/ReleaseExternalMemObjectsKHR` for every
//! imported object, ordered against Direct3D once (one shared semaphore, or CPU waits), and
//! the marker whose event the application gets.

use opencl_sys::{
    cl_command_queue, cl_context, cl_device_id, cl_event, cl_int, cl_mem, cl_uint, CL_COMMAND_USER,
};

use super::external::{cl as external_cl, sync as external_sync};
use super::SyncMode;
use crate::cl::{check, events, wait_list};
use crate::d3d::com::ComPtr;
use crate::d3d::interop;
use crate::trace::{self, Step};
use dxcl_abi::interop::IDxclInteropResource;

/// An imported object of this call.
struct Imported {
    mem: cl_mem,
    /// The interface whose D3D work orders it (the resource, or its imported shadow).
    interop: ComPtr<IDxclInteropResource>,
    /// Acquire: what OpenCL waits for.
    after: After,
    /// The platform's external acquire/release, when the strategy knows them.
    fns: Option<external_cl::MemoryFns>,
}

/// What an acquire of an imported object waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum After {
    /// Nothing (a release; an acquire under user sync with Direct3D's work done).
    Nothing,
    /// Direct3D's work on the resource: implicit sync, or work this call issued itself. The
    /// adaptive mode waits only where the runtime says some is still pending.
    Direct3d,
    /// Direct3D's work, which is known done: Direct3D has not touched the resource since its
    /// last release, which this queue's commands follow (`external::AcquiredOn::set`). Nothing
    /// to wait for in any mode, and nothing to ask the runtime.
    Untouched,
}

pub(crate) struct HandOff<'a> {
    pub queue: cl_command_queue,
    pub context: cl_context,
    /// The application's wait list.
    pub wait: &'a [cl_event],
    /// Implicit synchronisation: KHR without `CL_CONTEXT_INTEROP_USER_SYNC`, and NV always.
    pub sync: bool,
    /// A release (else an acquire).
    releasing: bool,
    /// Release on an out-of-order queue: a marker of all work submitted to the queue before
    /// the call (owned).
    prior: Option<cl_event>,
    /// Events the final marker waits for besides the wait list (owned).
    events: Vec<cl_event>,
    /// Inline for the usual call of one object.
    imported: smallvec::SmallVec<[Imported; 1]>,
    /// Release: whether Direct3D was ordered after the call's event on the GPU (decided once).
    gpu_ordered: Option<bool>,
    /// The wait list less its user events still unset (see [`commands_in`]), when it had any.
    commands: Option<Vec<cl_event>>,
    /// Commands of the queue complete in order.
    in_order: bool,
    /// Whether the caller uses the call's event after the objects' `released`: the application
    /// asked for it, or another object of the call still orders Direct3D after it. If not, an
    /// acquire issues no event (null), and a release's own reference may go to its one object's
    /// pending work ([`HandOff::event_lent`]). Each spares the platform's calls that create or
    /// retain and release an event.
    pub event_wanted: bool,
    /// The call's event reference went to Direct3D's pending work.
    lent: bool,
    /// Objects whose ordering was left to Direct3D's next access, which flushes the queue if
    /// the release is still pending then.
    left_to_next_access: usize,
    /// Release: the queue's device (`cl::queue_facts`).
    device: Option<cl_device_id>,
    /// The queue holds commands of the call that another thread may wait for by polling (a
    /// staging read-back): flushed when the hand-off ends, on this thread, however it ends.
    flush_due: bool,
}

impl<'a> HandOff<'a> {
    /// An acquire on `queue` (`cl::queue_facts`).
    pub fn acquire(
        queue: cl_command_queue,
        facts: crate::cl::QueueFacts,
        wait: &'a [cl_event],
        sync: bool,
    ) -> Self {
        HandOff {
            queue,
            context: facts.context,
            wait,
            sync,
            releasing: false,
            prior: None,
            events: Vec::new(),
            imported: smallvec::SmallVec::new(),
            gpu_ordered: None,
            commands: commands_in(wait),
            in_order: facts.in_order,
            event_wanted: true,
            lent: false,
            left_to_next_access: 0,
            device: None,
            flush_due: false,
        }
    }

    /// A release: everything in it follows the work already submitted to `queue`.
    pub fn release(
        queue: cl_command_queue,
        facts: crate::cl::QueueFacts,
        wait: &'a [cl_event],
        sync: bool,
    ) -> Result<Self, cl_int> {
        let mut h = Self::acquire(queue, facts, wait, sync);
        h.device = Some(facts.device);
        // An in-order queue runs the release's own commands after its earlier work already; an
        // out-of-order one needs the marker to stand for that work.
        if !h.in_order {
            h.prior = Some(events::marker(queue, &[])?);
        }
        h.releasing = true;
        Ok(h)
    }

    /// What a release's OpenCL commands wait for: the wait list and all earlier work of the
    /// queue (which may include an acquire's copy on another queue: add it yourself).
    pub fn release_wait(&self) -> Vec<cl_event> {
        let mut all = self.wait.to_vec();
        all.extend(self.prior);
        all
    }

    /// What the external commands wait for: the wait list less its unset user events.
    fn external_wait(&self) -> Vec<cl_event> {
        let mut all = self.commands.clone().unwrap_or_else(|| self.wait.to_vec());
        if self.releasing {
            all.extend(self.prior);
        }
        all
    }

    /// Whether the wait list holds a user event still unset: one only the application can set,
    /// perhaps on this very thread after the call returns, so the call must not wait for it.
    pub fn waits_for_unset_user_event(&self) -> bool {
        self.commands.is_some()
    }

    /// For a runtime that cannot be made to wait before its next access (DXVK), whose release
    /// therefore waits for its commands itself: false when it must not, because the wait list
    /// holds a user event only the application can set; else the queue is flushed first, so the
    /// wait never stalls on commands a platform runs only once flushed (rusticl).
    pub fn may_wait_now(&self) -> bool {
        if self.waits_for_unset_user_event() {
            return false;
        }
        crate::cl::flush(self.queue);
        true
    }

    /// The queue is flushed when the hand-off ends (its drop), on this thread, also when the
    /// call fails after this: one flush for all of the call's commands, after its last. The
    /// caller makes it sooner, [`flush_if_due`](Self::flush_if_due), before any step that may
    /// block: what waits for the commands may hold what that step waits for.
    pub fn flush_at_end(&mut self) {
        self.flush_due = true;
    }

    /// The flush [`flush_at_end`](Self::flush_at_end) asked for, now, if it is still due.
    pub fn flush_if_due(&mut self) {
        if std::mem::take(&mut self.flush_due) {
            crate::cl::flush(self.queue);
        }
    }

    /// Whether the call ends with a marker after the events given to [`wait_for`]: a release,
    /// an acquire whose event the application wants, or one with a wait list (see
    /// [`finish`](Self::finish)). Where not, a strategy need not take a reference for it
    /// ([`follow`](Self::follow)).
    ///
    /// [`wait_for`]: Self::wait_for
    pub fn marker_follows(&self) -> bool {
        self.releasing || self.event_wanted || !self.wait.is_empty()
    }

    /// Where a marker follows, the call's event waits for `ev` too, through a reference taken
    /// here (the caller keeps its own). The platform's error, when the retain fails, is the
    /// call's.
    pub fn follow(&mut self, ev: cl_event) -> Result<(), cl_int> {
        if self.marker_follows() {
            events::retain(ev)?;
            self.wait_for(ev);
        }
        Ok(())
    }

    /// The call's event waits for `ev` too; the hand-off owns that reference now.
    pub fn wait_for(&mut self, ev: cl_event) {
        self.events.push(ev);
    }

    /// Brackets `mem` with the call's external-memory acquire or release.
    pub fn import(
        &mut self,
        mem: cl_mem,
        interop: &ComPtr<IDxclInteropResource>,
        after: After,
        fns: Option<external_cl::MemoryFns>,
    ) {
        self.imported.push(Imported {
            mem,
            interop: interop.clone(),
            after,
            fns,
        });
    }

    /// Whether the queue runs its commands in order.
    pub fn in_order(&self) -> bool {
        self.in_order
    }

    /// The external acquire/release of the platform: every imported object of one call is of
    /// the queue's context, so the first that knows them answers for all.
    fn memory_fns(&self) -> Result<external_cl::MemoryFns, cl_int> {
        match self.imported.iter().find_map(|i| i.fns) {
            Some(f) => Ok(f),
            None => trace::time(Step::MemoryFns, || {
                external_cl::queue_memory_fns(self.queue)
            }),
        }
    }

    /// A hand-off whose wait list holds a user event still unset: issues the platform's external
    /// acquire or release of the objects imported so far now, before any command that waits for
    /// that event; NVIDIA's external command enqueued after such a command (another object's
    /// staging copy or read, a shadow's marker) blocks the calling thread until the application
    /// sets the event, perhaps on this very thread. Seen on the H100 (DXVK's `acquire`, "release
    /// before its wait list is complete": the release never returned) and on an H200 (DXVK's
    /// shadow copies, "failed wait list": the acquire). Otherwise nothing:
    /// [`finish`](Self::finish) issues one command for all.
    pub fn imports_now(&mut self) -> Result<(), cl_int> {
        if self.imported.is_empty() || !self.waits_for_unset_user_event() {
            return Ok(());
        }
        let ev = self.issue_imported(true)?;
        self.imported.clear();
        self.events.push(ev);
        Ok(())
    }

    /// The external acquire or release of the imported objects; its event when `want`, else
    /// null.
    fn issue_imported(&mut self, want: bool) -> Result<cl_event, cl_int> {
        if self.releasing {
            self.release_imported()
        } else {
            self.acquire_imported(want)
        }
    }

    /// Issues the shared commands and returns the call's event (owned by the caller): null for
    /// an acquire whose event nobody wants and that needs no marker.
    pub fn finish(&mut self) -> Result<cl_event, cl_int> {
        if !self.imported.is_empty() {
            // The external command alone follows everything the call's event must (the wait
            // list, and for a release the queue's earlier work): its event is the call's.
            if self.events.is_empty() && self.prior.is_none() && self.commands.is_none() {
                return self.issue_imported(self.event_wanted || self.releasing);
            }
            let ev = self.issue_imported(true)?;
            self.events.push(ev);
        }
        // An acquire with an empty wait list whose event nobody wants: its commands are in the
        // queue already, so an in-order queue runs later work after them, and on an
        // out-of-order one only a barrier orders later work, which covers them too. A marker
        // after them would order nothing (a staging acquire spared one marker and one event
        // release: docs/benchmarks.md). With a wait list the marker stays: a strategy's
        // commands need not wait for it (a CPU wait enqueues none), and in an in-order queue
        // the marker makes later work follow the wait list, as it follows the acquire.
        if !self.marker_follows() {
            return Ok(std::ptr::null_mut());
        }
        let mut all = if self.releasing {
            self.release_wait()
        } else {
            self.wait.to_vec()
        };
        all.extend(self.events.iter().copied());
        events::marker(self.queue, &all)
    }

    /// After D3D's work (a GPU-side semaphore wait where the context has shared semaphores,
    /// else a CPU wait), `clEnqueueAcquireExternalMemObjectsKHR`. Adaptive sync waits for
    /// nothing when that work has completed already.
    fn acquire_imported(&mut self, want: bool) -> Result<cl_event, cl_int> {
        let fns = self.memory_fns()?;
        // The context's mode matters only for Direct3D's work not known to be done.
        let adaptive = self.imported.iter().any(|i| i.after == After::Direct3d)
            && trace::time(Step::SyncMode, || external_sync::mode(self.context))
                == Some(SyncMode::Adaptive);
        let waits = |i: &Imported| match i.after {
            After::Nothing | After::Untouched => false,
            After::Direct3d => {
                !(adaptive
                    && trace::time(Step::DeviceWorkDone, || {
                        external_sync::device_work_done(&i.interop)
                    }))
            }
        };
        let ordered = self.imported.iter().any(waits);
        let wait = self.external_wait();
        let semaphore = if ordered {
            trace::time(Step::D3dThenCl, || {
                external_sync::d3d_then_cl(self.context, self.queue, &wait)
            })?
        } else {
            None
        };
        if ordered && semaphore.is_none() {
            // No shared semaphores: "any Direct3D 1x calls ... made before
            // clEnqueueAcquireD3D1xObjects is called will complete executing before event
            // reports completion" holds by waiting here.
            for i in self.imported.iter().filter(|i| i.after == After::Direct3d) {
                interop::wait_for_device_work(&i.interop);
            }
        }
        // The semaphore wait already follows the wait list.
        let after: Vec<cl_event> = semaphore.map_or(wait, |ev| vec![ev]);
        let r = trace::time(Step::ClAcquireExternal, || {
            self.enqueue(fns.acquire, &after, want)
        });
        if let Some(s) = semaphore {
            events::release(s);
        }
        r
    }

    /// `clEnqueueReleaseExternalMemObjectsKHR` after the wait list and earlier work; a refusal
    /// behind a terminated acquire ends as [`terminated_if_refused`] says.
    fn release_imported(&mut self) -> Result<cl_event, cl_int> {
        let fns = self.memory_fns()?;
        let after = self.external_wait();
        let released = trace::time(Step::ClReleaseExternal, || {
            self.enqueue(fns.release, &after, true)
        });
        terminated_if_refused(released, self.context, self.queue)
    }

    fn enqueue(
        &self,
        f: external_cl::EnqueueMemFn,
        after: &[cl_event],
        want: bool,
    ) -> Result<cl_event, cl_int> {
        // Inline, as the imported objects are, for the usual call of one.
        let mems: smallvec::SmallVec<[cl_mem; 1]> = self.imported.iter().map(|i| i.mem).collect();
        // Failed events left out: the call's marker fails with them (cl::wait).
        let after = crate::cl::wait::without_failed(after);
        enqueue_external(f, self.queue, &mems, &after, want)
    }

    /// Release: Direct3D work on `interop`'s resource issued after this call waits for `done`
    /// ("any calls to Direct3D 1x made after the call to clEnqueueReleaseD3D1xObjects will not
    /// start executing until after all events in event_wait_list are complete and all work
    /// already submitted to command_queue completes execution"): on the GPU through one shared
    /// semaphore for the whole call, else through the runtime's pending-work wait on the CPU.
    ///
    /// Returns whether Direct3D's next access was left to order itself, and until it comes tells
    /// that Direct3D has not touched the resource since ([`external_sync::Untouched`]). `last`:
    /// the object's last release, still untouched, after a clean acquire on this queue; a release
    /// with no wait list takes its place.
    pub fn order_d3d_after(
        &mut self,
        done: cl_event,
        interop: &ComPtr<IDxclInteropResource>,
        last: Option<external_sync::Untouched>,
    ) -> Result<Option<external_sync::Untouched>, cl_int> {
        // Adaptive: decided at Direct3D's next access, from what is pending then. The fixed GPU
        // mode does the same while the release waits for an unset user event: NVIDIA's
        // `clEnqueueSignalSemaphoresKHR` after it would block this thread until the application
        // sets the event, perhaps on this very thread (seen on the H100: acquire's "release
        // before its wait list is complete" hung).
        let mode = trace::time(Step::SyncMode, || external_sync::mode(self.context));
        if mode == Some(SyncMode::Adaptive)
            || (mode == Some(SyncMode::Gpu) && self.waits_for_unset_user_event())
        {
            let owned = !self.event_wanted && !self.lent;
            let next = trace::time(Step::NextAccess, || {
                external_sync::order_d3d_after_next_access(
                    interop,
                    self.context,
                    (self.queue, self.device, self.in_order),
                    done,
                    owned,
                    last.filter(|_| self.wait.is_empty()),
                )
            });
            let untouched = match next {
                external_sync::NextAccess::Refused => {
                    interop::add_pending_work(interop, done);
                    return Ok(None);
                }
                external_sync::NextAccess::Done => None,
                external_sync::NextAccess::Pending(untouched) => Some(untouched),
            };
            self.lent |= owned;
            self.left_to_next_access += 1;
            return Ok(untouched);
        }
        if !self.signal_d3d_after(done)? {
            interop::add_pending_work(interop, done);
        }
        Ok(None)
    }

    /// Release, for a runtime that cannot be made to wait before its next access (DXVK):
    /// Direct3D work issued after the call waits for `done` on the GPU through the context's
    /// shared semaphore, so the call need not wait for it. False, and nothing done, where the
    /// context has no shared semaphores (`DXCL_SYNC=cpu`, or one side has none) or the wait list
    /// holds a user event only the application can set (NVIDIA's signal after it would block
    /// this thread: see [`HandOff::order_d3d_after`]).
    ///
    /// A release already complete (its wait list failed, say) needs no semaphore. One whose
    /// commands fail after the signal was enqueued leaves the signal to the platform: a signal it
    /// never makes holds up DXVK's queue, as it would dxcl's runtime's with `DXCL_SYNC=gpu`. A
    /// failure to arrange the semaphores is answered with false (the caller waits on the CPU).
    pub fn order_d3d_after_on_gpu(&mut self, done: cl_event) -> Result<bool, cl_int> {
        if self.waits_for_unset_user_event() || events::is_done(done) {
            return Ok(false);
        }
        // No pool: false, from the pool's own look-up.
        Ok(self.signal_d3d_after(done).unwrap_or(false))
    }

    /// One shared semaphore for the whole call, signalled after `done`, which Direct3D's later
    /// work waits for; whether the context has them (decided once per call).
    fn signal_d3d_after(&mut self, done: cl_event) -> Result<bool, cl_int> {
        let gpu = match self.gpu_ordered {
            Some(gpu) => gpu,
            None => {
                let signalled = trace::time(Step::ClThenD3d, || {
                    external_sync::cl_then_d3d(self.context, self.queue, &[done])
                });
                let gpu = match signalled {
                    Ok(gpu) => gpu,
                    // A release behind a failed wait list: NVIDIA refuses the semaphore signal
                    // after the terminated commands with CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
                    // (or CL_DEVICE_NOT_FOUND: see `release_imported`). The release itself still
                    // succeeds; Direct3D's next access waits for its event on the CPU, which
                    // returns at once for a terminated one.
                    Err(opencl_sys::CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) => false,
                    Err(opencl_sys::CL_DEVICE_NOT_FOUND) if events::status(done) < 0 => false,
                    Err(e) => return Err(e),
                };
                self.gpu_ordered = Some(gpu);
                gpu
            }
        };
        Ok(gpu)
    }
}

impl HandOff<'_> {
    /// Whether the call's event reference went to Direct3D's pending work (see
    /// [`HandOff::event_wanted`]): the caller no longer owns it.
    pub fn event_lent(&self) -> bool {
        self.lent
    }

    /// How many objects' ordering was left to Direct3D's next access, which flushes the queue
    /// itself if it must ([`external_sync::order_d3d_after_next_access`]).
    pub fn left_to_next_access(&self) -> usize {
        self.left_to_next_access
    }
}

/// The platform's external acquire or release `f` of `mems` on `queue` after `after` (live
/// events): its event when `want`, else null.
pub(crate) fn enqueue_external(
    f: external_cl::EnqueueMemFn,
    queue: cl_command_queue,
    mems: &[cl_mem],
    after: &[cl_event],
    want: bool,
) -> Result<cl_event, cl_int> {
    let (n, l) = wait_list(after);
    let mut ev = std::ptr::null_mut();
    // SAFETY: a valid queue (checked by the caller's query); memory objects imported into its
    // context; a wait list of live events.
    check(unsafe {
        f(
            queue,
            mems.len() as cl_uint,
            mems.as_ptr(),
            n,
            l,
            if want { &mut ev } else { std::ptr::null_mut() },
        )
    })?;
    Ok(events::owned(ev))
}

/// An external release's outcome, `released`.
///
/// An acquire whose wait list held an event that then failed was terminated ("a negative
/// integer value causes all enqueued commands that wait on this user event to be
/// terminated"), so the platform never acquired the objects. The extension's release of them
/// still succeeds and its commands are terminated with the acquire's: NVIDIA's OpenCL
/// (580.159.04) refuses the external release then with `CL_DEVICE_NOT_FOUND`, its answer for
/// work that depends on a terminated command (a blocking read after one gives it too:
/// `tests/platform/failed_event.c`, case "blocking"), which no release spec names. The
/// release's part is then a command terminated with
/// `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` ([`events::terminated`]), and the objects are
/// the application's again.
pub(crate) fn terminated_if_refused(
    released: Result<cl_event, cl_int>,
    context: cl_context,
    queue: cl_command_queue,
) -> Result<cl_event, cl_int> {
    match released {
        Err(opencl_sys::CL_DEVICE_NOT_FOUND) => events::terminated(
            context,
            queue,
            opencl_sys::CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
        ),
        other => other,
    }
}

/// The wait list without its user events that are still unset, or None when it has none.
///
/// A user event stands for no OpenCL command, so the external acquire or release has nothing to
/// wait for in it: the call's own event (the final marker) still waits for it, which is what
/// "event_wait_list ... need to complete before this particular command can be executed" asks of
/// the call as the application sees it. NVIDIA's `clEnqueueAcquire/ReleaseExternalMemObjectsKHR`
/// and `clEnqueueWaitSemaphoresKHR` block the calling thread while their wait list holds an unset
/// user event (docs/gpu.md), so a single thread that sets the event after the call deadlocked.
fn commands_in(wait: &[cl_event]) -> Option<Vec<cl_event>> {
    let pending_user =
        |&ev: &cl_event| events::command_type(ev) == Some(CL_COMMAND_USER) && !events::is_done(ev);
    if !wait.iter().any(pending_user) {
        return None;
    }
    Some(
        wait.iter()
            .copied()
            .filter(|ev| !pending_user(ev))
            .collect(),
    )
}

impl Drop for HandOff<'_> {
    fn drop(&mut self) {
        self.flush_if_due();
        for ev in self.prior.take().into_iter().chain(self.events.drain(..)) {
            events::release(ev);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cl::fake::{self, calls, EVENTS};

    /// The fake's queue at `at` (its markers' event is the one just below).
    fn queue(at: usize) -> cl_command_queue {
        (EVENTS + at) as cl_command_queue
    }

    fn context() -> cl_context {
        fake::CONTEXT as cl_context
    }

    /// The fake's queues: of its context and device, in order.
    fn facts() -> crate::cl::QueueFacts {
        crate::cl::QueueFacts {
            context: context(),
            device: fake::DEVICE as cl_device_id,
            in_order: true,
        }
    }

    /// An acquire issues its final marker only where something can follow it: the application
    /// wants the call's event, or the call has a wait list, which an in-order queue's later work
    /// follows through the marker. Unwanted with an empty list, the events the marker would
    /// have waited for are let go of with the hand-off.
    #[test]
    fn an_acquire_nobody_can_follow_issues_no_marker() {
        fake::install();
        let (quiet, wanted, listed) = (queue(0x42), queue(0x45), queue(0x48));
        // An event of the queue at 0x4D: the strategy's copy.
        let copy = (EVENTS + 0x4C) as cl_event;
        let mut h = HandOff::acquire(quiet, facts(), &[], true);
        h.event_wanted = false;
        assert!(!h.marker_follows());
        // A strategy's copy that no marker follows keeps its one reference.
        let unfollowed = (EVENTS + 0x4A) as cl_event;
        h.follow(unfollowed).unwrap();
        assert_eq!(calls("retain_event", unfollowed.cast()), 0, "no reference");
        h.wait_for(copy);
        assert!(h.finish().unwrap().is_null(), "no event");
        drop(h);
        assert_eq!(calls("marker", quiet), 0, "no marker");
        assert_eq!(
            calls("release_event", copy.cast()),
            1,
            "the copy's reference goes with the hand-off"
        );

        let mut h = HandOff::acquire(wanted, facts(), &[], true);
        assert!(h.marker_follows());
        let ev = h.finish().unwrap();
        assert_eq!(ev as usize, EVENTS + 0x44, "the marker's event");
        assert_eq!(calls("marker", wanted), 1);
        events::release(ev);

        let list = [(fake::COMPLETE + 0x10) as cl_event];
        let mut h = HandOff::acquire(listed, facts(), &list, true);
        h.event_wanted = false;
        assert!(h.marker_follows());
        let followed = (EVENTS + 0x50) as cl_event;
        h.follow(followed).unwrap();
        let ev = h.finish().unwrap();
        assert!(!ev.is_null(), "a wait list keeps the marker");
        assert_eq!(calls("marker", listed), 1);
        events::release(ev);
        drop(h);
        assert_eq!(
            (
                calls("retain_event", followed.cast()),
                calls("release_event", followed.cast())
            ),
            (1, 1),
            "the marker's own reference, let go of with the hand-off"
        );
    }

    /// A flush asked for at the end is made once, when the hand-off ends, whether the call got
    /// to its last command or failed before it, or sooner when the caller makes it; none when
    /// nobody asked.
    #[test]
    fn a_flush_asked_for_comes_once_at_the_end() {
        fake::install();
        let q = queue(0x4F);
        let facts = facts();
        let mut h = HandOff::release(q, facts, &[], true).unwrap();
        h.event_wanted = false;
        assert!(h.marker_follows(), "a release always ends with one");
        h.flush_at_end();
        h.flush_at_end();
        assert_eq!(calls("flush", q), 0, "not before the end");
        // As a call that fails after it asked.
        drop(h);
        assert_eq!(calls("flush", q), 1, "once");
        drop(HandOff::release(q, facts, &[], true).unwrap());
        assert_eq!(calls("flush", q), 1, "only when asked");
        // Made sooner, before a step that may block: not again at the end.
        let mut h = HandOff::release(q, facts, &[], true).unwrap();
        h.flush_at_end();
        h.flush_if_due();
        assert_eq!(calls("flush", q), 2, "now");
        h.flush_if_due();
        drop(h);
        assert_eq!(calls("flush", q), 2, "not twice");
    }
}

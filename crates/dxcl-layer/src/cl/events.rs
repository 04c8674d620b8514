//! Events the layer makes: markers, and the table of command types of the acquire/release
//! events it hands to the application (`CL_EVENT_COMMAND_TYPE` answers them). Every event the
//! layer lets go goes through [`release`], so a table entry leaves with its event's last
//! reference and a reused handle inherits nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

use opencl_sys::{
    cl_command_queue, cl_command_type, cl_event, cl_int, cl_uint, CL_EVENT_REFERENCE_COUNT,
};

pub(crate) use super::held::new_event as owned;
pub(crate) use super::wait::{set_user_status, user_event};
use super::{check, down};
use crate::cl::info::query_value;
use crate::trace::{self, Step};

/// Marker events handed out by acquire/release → their command type.
static COMMANDS: Mutex<Option<HashMap<usize, cl_command_type>>> = Mutex::new(None);

fn commands<R>(f: impl FnOnce(&mut HashMap<usize, cl_command_type>) -> R) -> R {
    let mut g = COMMANDS.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// Queues pinned by the events the layer keeps past the application's calls.
///
/// NVIDIA's OpenCL (driver 580, H100) loses a context when a command queue is destroyed while
/// an event of it still lives: the context's destructor never runs, and a later call on another
/// of its objects (releasing a semaphore) may wait for ever. `tests/gpu/probe teardown` shows it
/// with no layer at all: 5 of 12 contexts not gone after 2 s where the application's
/// clReleaseCommandQueue came before a completion callback's release of a marker's event, none
/// where the queue went after the event. The layer keeps events past the application's calls
/// (completion callbacks, a hand-off's last copy, a staging copy's last upload), so each such
/// reference pins its queue ([`pin`]): a `clReleaseCommandQueue` of a pinned queue is held
/// back ([`hold_release`]) and made once the last pinned event is gone ([`release_pinned`]).
///
/// Not a queue reference of the layer's own: every `clReleaseCommandQueue` is an implicit
/// flush, and Mesa rusticl 22.3 loses the wait of a blocking enqueue when another thread flushes
/// its queue between the enqueue and its wait (the command is sent on, the enqueue finds nothing
/// left to wait for and returns before it ran). A pin released from another thread (the next
/// hand-off of a shared object, a completion callback) made `threads`' blocking reads return
/// stale bytes there. A held-back release is made once the queue's events are done, mostly on a
/// queue the application no longer uses.
static PINS: Mutex<Option<Pins>> = Mutex::new(None);

#[derive(Default)]
struct Pins {
    /// Event → (its queue, references of the layer's that pin it).
    events: HashMap<usize, (usize, usize)>,
    /// Queue → (pinned references of its events, releases held back).
    queues: HashMap<usize, (usize, usize)>,
}

fn pins<R>(f: impl FnOnce(&mut Pins) -> R) -> R {
    let mut g = PINS.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(Pins::default))
}

/// Pins the queue of `ev`, a command of the layer's whose reference the caller keeps (the queue
/// is alive: the command is recent and the layer's own). User events have no queue: nothing.
pub(crate) fn pin(ev: cl_event) {
    let Some(queue) = queue_of(ev) else {
        return;
    };
    pins(|m| {
        let e = m.events.entry(ev as usize).or_insert((queue as usize, 0));
        // Another queue means a reused handle whose pins were never taken: a pinned reference
        // released with `release` instead of `release_pinned` (found by hostptr crashing).
        // That queue's count is left as it is (its held release leaks; nothing crashes).
        debug_assert_eq!(e.0, queue as usize, "a pinned event released unpinned");
        if e.0 != queue as usize {
            *e = (queue as usize, 0);
        }
        e.1 += 1;
        m.queues.entry(queue as usize).or_default().0 += 1;
    });
}

/// Releases a reference [`pin`] pinned, then its pin of the queue, and with the queue's last
/// pin the releases held back (perhaps the context's last holder: not from a platform's
/// callback thread).
pub(crate) fn release_pinned(ev: cl_event) {
    if ev.is_null() {
        return;
    }
    // The pin is taken before the release: once the event is gone, another may get its handle.
    let queue = take_pin(ev);
    release(ev);
    if let Some(q) = queue {
        unpin_queue(q);
    }
}

/// A release of `queue` (the application's `clReleaseCommandQueue`, or the layer's own):
/// held back (true) while an event the layer keeps pins the queue, and made by the queue's last
/// [`release_pinned`] or [`unpin`]. Any release, not only the last: the platform's reference
/// count may count references of its own, and an early destruction loses the context. A
/// release beyond the queue's references (all of them held back already) is the platform's
/// error for a queue that is gone, CL_INVALID_COMMAND_QUEUE "if command_queue is not a valid
/// command-queue", and is not held.
pub(crate) fn hold_release(queue: cl_command_queue) -> Result<bool, cl_int> {
    pins(|m| match m.queues.get_mut(&(queue as usize)) {
        Some(q) => {
            if super::queue_references(queue)? as usize <= q.1 {
                return Err(opencl_sys::CL_INVALID_COMMAND_QUEUE);
            }
            q.1 += 1;
            Ok(true)
        }
        None => Ok(false),
    })
}

/// One pin of `queue` less; with its last, the releases held back are made.
fn unpin_queue(queue: cl_command_queue) {
    let held = pins(|m| {
        let q = m.queues.get_mut(&(queue as usize))?;
        q.0 = q.0.saturating_sub(1);
        if q.0 > 0 {
            return None;
        }
        m.queues.remove(&(queue as usize)).map(|q| q.1)
    });
    for _ in 0..held.unwrap_or(0) {
        super::release_queue_now(queue);
    }
}

/// Records a marker event's command type.
pub(crate) fn record(event: cl_event, command: cl_command_type) {
    commands(|m| m.insert(event as usize, command));
}

/// The command type recorded for `event`, if it is one of the layer's.
pub(crate) fn command_of(event: cl_event) -> Option<cl_command_type> {
    commands(|m| m.get(&(event as usize)).copied())
}

/// Enqueues a marker waiting for `wait` (all earlier work of the queue when empty).
pub(crate) fn marker(queue: cl_command_queue, wait: &[cl_event]) -> Result<cl_event, cl_int> {
    let enqueue = down!(clEnqueueMarkerWithWaitList);
    let mut ev = std::ptr::null_mut();
    let wait = super::wait::WaitList::new(wait);
    let (n, list) = wait.raw();
    // SAFETY: the queue and events are the caller's (the platform validates them); our own
    // out pointer.
    check(trace::time(Step::ClMarker, || unsafe {
        enqueue(queue, n, list, &mut ev)
    }))?;
    Ok(owned(ev))
}

/// Retains an event (the platform validates it).
pub(crate) fn retain(ev: cl_event) -> Result<(), cl_int> {
    let retain = down!(clRetainEvent);
    // SAFETY: an event the caller holds; an invalid one just fails the call.
    check(trace::time(Step::ClRetainEvent, || unsafe { retain(ev) }))?;
    super::held::took(super::held::Kind::Event, ev);
    Ok(())
}

/// Releases one reference to `event`, dropping its table entry when that was the last one.
pub(crate) fn release_checked(event: cl_event) -> Result<(), cl_int> {
    let below = down!(clReleaseEvent);
    let tracked = commands(|m| m.contains_key(&(event as usize)));
    let count: cl_uint = if tracked {
        let info = down!(clGetEventInfo);
        trace::time(Step::ClEventInfo, || {
            // SAFETY: our own buffer; an invalid event just fails the query.
            query_value(|n, p, r| unsafe { info(event, CL_EVENT_REFERENCE_COUNT, n, p, r) })
        })
        .unwrap_or(0)
    } else {
        0
    };
    // SAFETY: the caller's event, released once.
    check(trace::time(Step::ClReleaseEvent, || unsafe {
        below(event)
    }))?;
    if tracked && count == 1 {
        commands(|m| m.remove(&(event as usize)));
    }
    Ok(())
}

/// [`release_checked`] for the layer's own references (null is ignored).
pub(crate) fn release(event: cl_event) {
    if !event.is_null() {
        super::held::let_go(event);
        let _ = release_checked(event);
    }
}

/// The execution status of `ev` (`CL_COMPLETE`, a negative error, or a stage before it); an
/// error when the query fails.
pub(crate) fn status(ev: cl_event) -> cl_int {
    let Some(get) = super::target().and_then(|t| t.clGetEventInfo) else {
        return opencl_sys::CL_INVALID_OPERATION;
    };
    trace::time(Step::ClEventInfo, || {
        // SAFETY: an event the caller holds; query_value passes a buffer of the size it names.
        query_value(|n, p, r| unsafe {
            get(ev, opencl_sys::CL_EVENT_COMMAND_EXECUTION_STATUS, n, p, r)
        })
    })
    .unwrap_or(opencl_sys::CL_INVALID_EVENT)
}

/// Whether an execution status is final: `CL_COMPLETE`, or an error (a failed command holds
/// nothing up any more; nor does an event whose status cannot be read).
pub(crate) fn has_ended(status: cl_int) -> bool {
    status == opencl_sys::CL_COMPLETE as cl_int || status < 0
}

/// Whether `ev` has completed (or failed); false where the platform answers no query.
pub(crate) fn is_done(ev: cl_event) -> bool {
    super::target().is_some_and(|t| t.clGetEventInfo.is_some()) && has_ended(status(ev))
}

/// The command type of any event (None when the query fails).
pub(crate) fn command_type(ev: cl_event) -> Option<cl_command_type> {
    let get = super::target().and_then(|t| t.clGetEventInfo)?;
    trace::time(Step::ClEventInfo, || {
        // SAFETY: an event the caller holds; query_value passes a buffer of the size it names.
        query_value(|n, p, r| unsafe { get(ev, opencl_sys::CL_EVENT_COMMAND_TYPE, n, p, r) })
    })
    .ok()
}

/// The queue of a command's event (None for user events and failed queries). Valid only while the
/// command is pending, when its queue cannot be gone.
pub(crate) fn queue_of(ev: cl_event) -> Option<opencl_sys::cl_command_queue> {
    let get = super::target().and_then(|t| t.clGetEventInfo)?;
    let q: opencl_sys::cl_command_queue = trace::time(Step::ClEventInfo, || {
        // SAFETY: an event the caller holds; query_value passes a buffer of the size it names.
        query_value(|n, p, r| unsafe { get(ev, opencl_sys::CL_EVENT_COMMAND_QUEUE, n, p, r) })
    })
    .ok()?;
    (!q.is_null()).then_some(q)
}

/// Blocks until `ev` has completed (or failed).
pub(crate) fn wait(ev: cl_event) {
    if let Some(wait) = super::target().and_then(|t| t.clWaitForEvents) {
        // SAFETY: an event the caller holds; a list of one.
        trace::time(Step::ClWaitForEvents, || unsafe { wait(1, &ev) });
    }
}

/// The status of `ev` once it has ended ([`has_ended`]), or its status when `limit` has passed
/// first (or the process exits). Flushes its queue first (a platform may run unflushed commands
/// only once flushed), then polls ([`poll`]): `clWaitForEvents` has no time limit.
pub(crate) fn wait_within(ev: cl_event, limit: std::time::Duration) -> cl_int {
    let mut now = status(ev);
    if has_ended(now) {
        return now;
    }
    if let Some(queue) = queue_of(ev) {
        super::flush(queue);
    }
    let start = std::time::Instant::now();
    poll(|| {
        now = status(ev);
        has_ended(now) || start.elapsed() >= limit
    });
    now
}

/// Work to run when an event completes; it is given the event's execution status as the
/// platform passes it to the callback (`CL_COMPLETE` or a negative error).
type Completion = Box<dyn FnOnce(cl_int) + Send>;

/// Runs `f` with the final status once `ev` has completed (or failed), on whichever thread the
/// platform calls back from, then releases the caller's reference to `ev`. Returns `Err(f)`,
/// `ev` untouched, when the platform cannot call back.
///
/// `f` must not query or wait for `ev` itself (clGetEventInfo, clWaitForEvents); the status it is
/// given is the event's. Mesa rusticl 22.3 runs the callbacks of an event from inside a
/// clWaitForEvents on it, on the waiting thread, holding the event's lock: a query of the event
/// in its callback waits for that lock for ever (a staging write-back that Direct3D's release of
/// the resource ran hung `buffers`, `textures` and `acquire` with DXCL_STRATEGY=staging there).
pub(crate) fn when_complete(ev: cl_event, f: Completion) -> Result<(), Completion> {
    let _set_up = trace::span(Step::WhenComplete);
    let Some(set) = super::target().and_then(|t| t.clSetEventCallback) else {
        return Err(f);
    };
    let watch = watch(ev, f, false);
    let data = Arc::into_raw(watch.clone());
    // SAFETY: a live event the caller owns a reference to; the callback is a plain function
    // that takes back the reference it is given exactly once.
    let r = trace::time(Step::ClSetEventCallback, || unsafe {
        set(ev, opencl_sys::CL_COMPLETE, Some(completed), data as *mut _)
    });
    if r != opencl_sys::CL_SUCCESS {
        // SAFETY: the platform refused the callback, so that reference is still ours.
        drop(unsafe { Arc::from_raw(data) });
        watches(|w| w.remove(&watch.key()));
        // Gone only if run_overdue_callbacks found the event ended meanwhile, ran the work and
        // let go of the reference and its pin: as if the platform had called back.
        let Some((f, pinned)) = watch.take() else {
            return Ok(());
        };
        if pinned {
            unpin(ev);
        }
        return Err(f);
    }
    Ok(())
}

/// Takes over the caller's reference to `ev` until it has ended (completed or failed), and
/// says when that is without a completion callback: the layer's polling thread
/// ([`super::poller`]) lets go of it once it has ended, as does [`wait_ended`] with the returned
/// handle, and the application's `clReleaseContext` ([`run_overdue_callbacks`]).
///
/// For work many threads hand over at once. NVIDIA's driver 580 (H200) hung in `threads` with
/// `DXCL_SYNC=cpu`, where every release left Direct3D a completion callback on its end marker:
/// the platform's callback thread waited for a lock (`pthread_rwlock_wrlock`) while one
/// application thread ran inside a blocking `clEnqueueReadImage` and the others waited for the
/// platform's mutex behind it (docs/gpu.md).
pub(crate) fn when_ended(ev: cl_event) -> Ended {
    let _set_up = trace::span(Step::WhenComplete);
    let watch = watch(ev, Box::new(|_| {}), true);
    // Without the thread (none could start), the waiter's polls and the context's release let
    // go of it.
    super::poller::wake(settle_polled);
    Ended(watch)
}

/// A watch of [`when_ended`]'s. It holds the watch itself, not its address: once let go of, an
/// address comes back for the next watch at once.
pub(crate) struct Ended(Arc<Watch>);

/// Registers the work for `ev`, the caller's reference, and pins its queue where needed.
fn watch(ev: cl_event, f: Completion, polled: bool) -> Arc<Watch> {
    // The watch's reference outlives the call: it pins the event's queue (see PINS), when the
    // queue is sure to be alive. An event handed over here may be old (a staging read-back kept
    // since its release), and an application may have released the queue of a completed one.
    let pinned = pins(|m| m.events.contains_key(&(ev as usize))) || !is_done(ev);
    if pinned {
        pin(ev);
    }
    let watch = Arc::new(Watch {
        ev: ev as usize,
        polled,
        work: Mutex::new(Some((f, pinned))),
    });
    watches(|w| w.insert(watch.key(), watch.clone()));
    watch
}

/// Blocks until the event of `ended` has ended (or the process exits), polling it ([`poll`]).
pub(crate) fn wait_ended(ended: &Ended) {
    poll(|| settle_watch(&ended.0));
}

/// Blocks until `ev`, a command its own thread has flushed, has ended (or the process exits),
/// polling its status ([`poll`]) where `clWaitForEvents` would flush its queue again from this
/// thread: a flush from another thread can meet a blocking call on that queue, whose wait
/// rusticl 22.3 then loses (docs/conformance.md). A staging write-back waited for its
/// read-back on another thread's queue that way, the one such flush left on the path where
/// `threads`' staging rerun read stale bytes on rusticl (1 run in 30): the likely cause.
pub(crate) fn wait_flushed(ev: cl_event) {
    poll(|| has_ended(status(ev)));
}

/// Calls `ended` until it says yes or the process exits: every 20 µs for the first
/// millisecond (a small copy ends within microseconds), then every 100 µs (a large one takes
/// milliseconds).
fn poll(mut ended: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !ended() && !crate::core::exit::exiting() {
        let pause = if start.elapsed() < std::time::Duration::from_millis(1) {
            20
        } else {
            100
        };
        std::thread::sleep(std::time::Duration::from_micros(pause));
    }
}

/// Work still to run when its event ends: until the platform's callback, a settle
/// ([`settle_watch`]) or [`run_overdue_callbacks`] takes it.
struct Watch {
    ev: usize,
    /// Registered by [`when_ended`]: no callback will come.
    polled: bool,
    /// The work, and whether the layer's reference to `ev` pins its queue.
    work: Mutex<Option<(Completion, bool)>>,
}

impl Watch {
    fn key(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }

    fn take(&self) -> Option<(Completion, bool)> {
        self.work.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Every [`Watch`] whose work has not run, by its address.
static WATCHES: Mutex<Option<HashMap<usize, Arc<Watch>>>> = Mutex::new(None);

fn watches<R>(f: impl FnOnce(&mut HashMap<usize, Arc<Watch>>) -> R) -> R {
    let mut g = WATCHES.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// Settles that took a watch's work and have not yet let go of its event, which may be the
/// context's last holder: the application's last `clReleaseContext` and the process's exit wait
/// for them ([`settled_within`]).
static SETTLING: AtomicUsize = AtomicUsize::new(0);

/// One settle in [`SETTLING`], for as long as it lives (a panic included).
struct Settling;

impl Settling {
    fn begin() -> Self {
        SETTLING.fetch_add(1, SeqCst);
        Settling
    }
}

impl Drop for Settling {
    fn drop(&mut self) {
        SETTLING.fetch_sub(1, SeqCst);
    }
}

/// Waits up to `limit` for the settles in progress on other threads; whether none is left.
pub(crate) fn settled_within(limit: std::time::Duration) -> bool {
    let start = std::time::Instant::now();
    while SETTLING.load(SeqCst) > 0 {
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_micros(50));
    }
    true
}

/// Every watch of [`when_ended`]'s settled where it can be: how many are still pending.
fn settle_polled() -> usize {
    let polled: Vec<Arc<Watch>> = watches(|w| w.values().filter(|w| w.polled).cloned().collect());
    polled.iter().filter(|w| !settle_watch(w)).count()
}

/// Runs, here, the watch's work if its event has ended, and lets go of the watch's reference
/// (and its queue's pin). True once the event has ended: the work has run, here or on another
/// thread, or is running there.
fn settle_watch(watch: &Arc<Watch>) -> bool {
    if crate::core::exit::exiting() {
        return false;
    }
    let ev = watch.ev as cl_event;
    let taken = if watch.polled {
        // No callback takes the work, so the watch's reference lives while its lock is held:
        // the status is read under it, with no reference of the settle's own (which would
        // outlive the queue's release below).
        let mut work = watch.work.lock().unwrap_or_else(|p| p.into_inner());
        if work.is_none() {
            return true;
        }
        let status = status(ev);
        if !has_ended(status) {
            return false;
        }
        work.take().map(|w| (w, status, Settling::begin()))
    } else {
        {
            // Retained while the work is still there, under its lock: the callback, once it
            // took the work, may let go of the layer's reference at any moment.
            let work = watch.work.lock().unwrap_or_else(|p| p.into_inner());
            if work.is_none() {
                return true;
            }
            if retain(ev).is_err() {
                return false;
            }
        }
        // Not under the lock: rusticl runs callbacks holding the event's lock, which a query
        // waits for.
        let status = status(ev);
        let ended = has_ended(status);
        // Counted before the take: a sweep that finds the work gone waits for this settle.
        let taken = if ended {
            let settling = Settling::begin();
            watch.take().map(|w| (w, status, settling))
        } else {
            None
        };
        // The settle's own reference goes first: the watch's, released below, is then the
        // last, and goes before the queue it pins.
        release(ev);
        if !ended {
            return false;
        }
        taken
    };
    if let Some(((f, pinned), status, _settling)) = taken {
        watches(|w| w.remove(&watch.key()));
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(status)));
        release_watched(ev, pinned);
    }
    true
}

/// Runs, here, the work of every watched event that has ended but whose completion callback has
/// not come, and of every polled watch ([`when_ended`]) whose event has ended, and lets go of
/// the layer's reference to it (and its queue's pin). NVIDIA's driver 580 at times never calls
/// back for a marker that has completed (`probe teardown` loses its markers' callbacks with no
/// layer): the application's `clReleaseContext` runs this, so that what the layer holds of the
/// context goes with the application's last objects. A callback that comes later finds its
/// work gone and does nothing. Settles begun on other threads (the polling thread's) are waited
/// for, up to 100 ms: the application's last release must not race their release of the last
/// event.
pub(crate) fn run_overdue_callbacks() {
    let all: Vec<Arc<Watch>> = watches(|w| w.values().cloned().collect());
    for watch in all {
        settle_watch(&watch);
    }
    settled_within(std::time::Duration::from_millis(100));
}

/// Tests: makes the callbacks the fake platform holds for `ev`, as the platform would.
#[cfg(test)]
pub(crate) fn fake_callbacks(ev: usize, status: cl_int) {
    for (ev, data) in super::fake::callbacks_of([ev]) {
        completed(ev as cl_event, status, data);
    }
}

extern "C" fn completed(ev: cl_event, status: cl_int, data: *mut std::ffi::c_void) {
    // SAFETY: `data` is the reference `when_complete` leaked for this one callback.
    let watch = unsafe { Arc::from_raw(data as *const Watch) };
    watches(|w| w.remove(&watch.key()));
    let Some((f, pinned)) = watch.take() else {
        // run_overdue_callbacks ran it and let go of the event.
        return;
    };
    let _work = trace::span(Step::Callback);
    // A panic must not unwind into the platform.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(status)));
    // Perhaps the last reference, holding the context: not released on the platform's thread.
    if !ev.is_null() {
        let ev = ev as usize;
        super::release_thread::later(Box::new(move || release_watched(ev as cl_event, pinned)));
    }
}

/// Lets go of the reference a [`Watch`] kept to its event, and of its queue's pin if it has one.
fn release_watched(ev: cl_event, pinned: bool) {
    if pinned {
        release_pinned(ev);
    } else {
        release(ev);
    }
}

/// Takes back a pin whose reference the caller still holds (it will be released unpinned, or
/// handed to what pins it again).
pub(crate) fn unpin(ev: cl_event) {
    if let Some(q) = take_pin(ev) {
        unpin_queue(q);
    }
}

/// One pin of `ev` less: its queue, whose pin the caller now holds.
fn take_pin(ev: cl_event) -> Option<cl_command_queue> {
    pins(|m| match m.events.get_mut(&(ev as usize)) {
        Some(e) if e.1 > 1 => {
            e.1 -= 1;
            Some(e.0)
        }
        Some(_) => m.events.remove(&(ev as usize)).map(|e| e.0),
        None => None,
    })
    .map(|q| q as cl_command_queue)
}

/// A marker (owned by the caller) that completes once `ev` has ended, completed or terminated:
/// one with an empty wait list, enqueued on `ev`'s in-order queue right after it. Neither PoCL
/// 3.1 nor rusticl 22.3 calls a completion callback of a command terminated after the callback
/// was registered (`tests/platform/failed_event.c`, case "callback"), but both run a command
/// with no wait list that follows terminated ones in an in-order queue (case "inorder"). None
/// for a user event, an out-of-order queue, or a failed enqueue: watch `ev` itself then.
///
/// The queue is flushed after the marker: its watcher waits for it to end, which rusticl lets
/// happen only for commands submitted (a release's own flush came before the marker, and DXVK's
/// shared textures, whose runtime cannot wait, had the release wait for ever there).
/// Called on the thread that enqueued the release.
pub(crate) fn end_marker(ev: cl_event) -> Option<cl_event> {
    let queue = queue_of(ev)?;
    if !super::queue_in_order(queue).ok()? {
        return None;
    }
    let ended = marker(queue, &[]).ok()?;
    super::flush(queue);
    Some(ended)
}

/// A command of `queue` that ends terminated with `status`: a marker behind a user event failed
/// right after the marker is enqueued ("a negative integer value causes all enqueued commands
/// that wait on this user event to be terminated"). For a command the platform refused because
/// it follows a terminated one: a wait on the marker gives
/// `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` on every platform tested, where NVIDIA's
/// `clWaitForEvents` on the failed user event itself returns `CL_SUCCESS`.
pub(crate) fn terminated(
    context: opencl_sys::cl_context,
    queue: opencl_sys::cl_command_queue,
    status: cl_int,
) -> Result<cl_event, cl_int> {
    let gate = user_event(context)?;
    let ended = marker(queue, &[gate]);
    set_user_status(gate, status);
    release(gate);
    ended
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI32, Ordering::SeqCst};
    use std::sync::Arc;

    /// The platform's callback hands its status to the work (no query of the event, which
    /// deadlocks in rusticl's callbacks run from clWaitForEvents); a null event is not released.
    #[test]
    fn completion_is_given_the_callbacks_status() {
        let seen = Arc::new(AtomicI32::new(1));
        let put = seen.clone();
        let f: Completion = Box::new(move |status| put.store(status, SeqCst));
        // What when_complete leaks: the work, and whether the event is pinned (not: nothing to
        // let go of for a null event).
        let data = Arc::into_raw(Arc::new(Watch {
            ev: 0,
            polled: false,
            work: Mutex::new(Some((f, false))),
        }));
        completed(
            std::ptr::null_mut(),
            opencl_sys::CL_OUT_OF_RESOURCES,
            data as *mut _,
        );
        assert_eq!(seen.load(SeqCst), opencl_sys::CL_OUT_OF_RESOURCES);
    }

    /// A callback the platform never makes (NVIDIA's, at times): the application's context
    /// release runs the work of an ended event and lets go of it, leaves a pending one to its
    /// callback, and a callback that comes after all runs nothing twice.
    #[test]
    fn overdue_callbacks_run_at_the_context_release() {
        use crate::cl::fake;
        fake::install();
        let (ended, pending) = (fake::COMPLETE + 0x21, fake::EVENTS + 0x65);
        let runs = Arc::new(AtomicI32::new(0));
        for ev in [ended, pending] {
            let r = runs.clone();
            let f: Completion = Box::new(move |_| {
                r.fetch_add(if ev == ended { 1 } else { 100 }, SeqCst);
            });
            assert!(when_complete(ev as cl_event, f).is_ok());
        }
        run_overdue_callbacks();
        assert_eq!(runs.load(SeqCst), 1);
        // The platform calls back late for both: only the pending one's work runs.
        for ev in [ended, pending] {
            fake_callbacks(ev, opencl_sys::CL_COMPLETE as cl_int);
        }
        assert_eq!(runs.load(SeqCst), 101);
    }

    /// A polled watch (Direct3D's pending work after a release): no completion callback is
    /// asked for; the polling thread lets go of an ended event on its own, a waiter's settle of
    /// a pending one finds it pending and keeps it.
    #[test]
    fn a_polled_watch_ends_without_a_callback() {
        use crate::cl::fake;
        fake::install();
        let (ended, pending) = (fake::COMPLETE + 0x23, fake::EVENTS + 0x67);
        let (done, waiting) = (
            when_ended(ended as cl_event),
            when_ended(pending as cl_event),
        );
        let registered = |e: &Ended| watches(|w| w.contains_key(&e.0.key()));
        let start = std::time::Instant::now();
        while registered(&done) && start.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(
            !registered(&done),
            "the polling thread let go of the ended event"
        );
        wait_ended(&done);
        assert!(
            !settle_watch(&waiting.0) && registered(&waiting),
            "pending: kept"
        );
        assert!(fake::callbacks_of([ended, pending]).is_empty());
        // Let go of the pending one as its end would, so the polling thread stops.
        watches(|w| w.remove(&waiting.0.key()));
        let (_, pinned) = waiting.0.take().unwrap();
        if pinned {
            unpin(pending as cl_event);
        }
    }
}

//! GPU-side ordering between Direct3D's queue and an OpenCL queue through shared binary
//! semaphores (`IDxclInteropDevice::*SharedSemaphore` on the D3D side, `cl_khr_semaphore` on ours).
//!
//! A binary semaphore must alternate signal and wait, so each context keeps a pool: a semaphore is
//! reused only when the runtime reports its submitted operations executed and our last CL command
//! on it completed. A context's pool opens with its first external-memory object and closes at
//! the application's last `clReleaseContext` ([`close_pool`]), on the application's thread. Not
//! with the last memory object: NVIDIA runs destructor callbacks late, on its own threads, and
//! destroying semaphores there raced process exit (the driver's Vulkan state was already torn
//! down: docs/gpu.md). The CL semaphores retain the context, so the platform destroys it when the
//! pool closes. Objects that outlive the application's context reference synchronise on the CPU.

use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};

use std::ffi::c_void;

use dxcl_abi::interop::{IDxclInteropDevice, IDxclInteropResource};
use dxcl_abi::{E_FAIL, HRESULT, SUCCEEDED, S_OK};
use opencl_sys::{
    cl_command_queue, cl_context, cl_device_id, cl_event, cl_int, cl_semaphore_khr,
    cl_semaphore_properties_khr, CL_OUT_OF_RESOURCES, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR,
    CL_SEMAPHORE_TYPE_BINARY_KHR, CL_SEMAPHORE_TYPE_KHR,
};

use super::cl::SemaphoreFns;
use crate::cl::events;
use crate::d3d::com::ComPtr;
use crate::strategy::SyncMode;

struct Shared {
    id: u64,
    cl: cl_semaphore_khr,
    /// Our last command on it (retained), or null.
    last: cl_event,
    /// OpenCL signalled it and the runtime's wait failed: it may stay signalled, so it is never
    /// signalled again (a binary semaphore must alternate).
    broken: bool,
    /// At the pool's close, its last command had not ended within [`Bounds::commands`]: it may
    /// wait for something that never comes (a command behind a failed or unset user event, a
    /// signal Direct3D never makes), and releasing a semaphore with an operation outstanding
    /// blocked NVIDIA's `clReleaseSemaphoreKHR` for good. It is left, with its last event, to
    /// the process's end.
    stuck: bool,
}

struct Pool {
    /// Validation: tells dxcl's runtime that `device` is OpenCL's reference (goes first).
    #[allow(dead_code)] // Held for its Drop.
    validation: Option<crate::validate::DeviceMark>,
    device: ComPtr<IDxclInteropDevice>,
    fns: SemaphoreFns,
    context: cl_context,
    /// `DXCL_SYNC` when the pool opened: the context's objects keep it.
    mode: SyncMode,
    semaphores: Vec<Shared>,
    /// Adaptive release: per OpenCL device, the layer's own queue on which a semaphore signal
    /// waits for a release still running when Direct3D next touches the object. Not the
    /// application's queue: there the signal would also wait for everything enqueued since.
    side: Vec<(cl_device_id, cl_command_queue)>,
    /// Adaptive releases whose event and queue Direct3D's next access may still need.
    pending: Pending,
    /// The application queues of the latest adaptive releases.
    queues: Queues,
}

// SAFETY: the raw handles are OpenCL objects and a COM pointer to dxcl's device, all usable from
// any thread; the pool is only reached under POOLS' lock.
unsafe impl Send for Pool {}

static POOLS: Mutex<Option<FxHashMap<usize, Pool>>> = Mutex::new(None);

fn pools() -> std::sync::MutexGuard<'static, Option<FxHashMap<usize, Pool>>> {
    POOLS.lock().unwrap_or_else(|p| p.into_inner())
}

/// `DXCL_LOG=1`: one line per semaphore operation (hangs on a GPU are found from these).
fn log(what: std::fmt::Arguments<'_>) {
    crate::strategy::log("sync", what);
}

fn event_done(ev: cl_event) -> bool {
    events::is_done(ev)
}

fn release_event(ev: cl_event) {
    events::release(ev);
}

impl Pool {
    fn idle(&self, s: &Shared) -> bool {
        let p = self.device.as_ptr();
        // SAFETY: a live IDxclInteropDevice of dxcl's runtime.
        let hr = unsafe { ((*(*p).lpVtbl).QuerySharedSemaphoreIdle)(p, s.id) };
        !s.broken && hr == S_OK && (s.last.is_null() || event_done(s.last))
    }

    /// An idle semaphore, created when none is.
    fn take(&mut self) -> Result<usize, cl_int> {
        if let Some(i) = (0..self.semaphores.len()).find(|&i| self.idle(&self.semaphores[i])) {
            return Ok(i);
        }
        let (mut id, mut fd) = (0u64, -1i32);
        let p = self.device.as_ptr();
        // SAFETY: a live IDxclInteropDevice; valid out pointers.
        let hr = unsafe { ((*(*p).lpVtbl).CreateSharedSemaphore)(p, &mut id, &mut fd) };
        if !SUCCEEDED(hr) {
            return Err(CL_OUT_OF_RESOURCES);
        }
        // cl_khr_external_semaphore: {type, binary, handle type, fd, 0}. No device list: every
        // context device imports it, and NVIDIA refuses one (docs/gpu.md).
        let props: [cl_semaphore_properties_khr; 5] = [
            CL_SEMAPHORE_TYPE_KHR as cl_semaphore_properties_khr,
            CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr,
            CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR as cl_semaphore_properties_khr,
            fd as cl_semaphore_properties_khr,
            0,
        ];
        let mut err = 0;
        // SAFETY: a valid context and a 0-terminated property list.
        let cl = unsafe { (self.fns.create)(self.context, props.as_ptr(), &mut err) };
        if err != 0 || cl.is_null() {
            // SAFETY: the import failed, so the fd is still ours; the id is ours to destroy.
            unsafe {
                libc::close(fd);
                ((*(*p).lpVtbl).DestroySharedSemaphore)(p, id);
            }
            return Err(if err != 0 { err } else { CL_OUT_OF_RESOURCES });
        }
        crate::cl::held::took(crate::cl::held::Kind::Semaphore, cl);
        self.semaphores.push(Shared {
            id,
            cl,
            last: std::ptr::null_mut(),
            broken: false,
            stuck: false,
        });
        log(format_args!(
            "context {:p}: semaphore {id} created ({} in the pool)",
            self.context,
            self.semaphores.len()
        ));
        Ok(self.semaphores.len() - 1)
    }

    /// Keeps `ev` (a reference the caller hands over) as the semaphore's last command; it pins
    /// its queue, which the application may release long before the pool closes.
    fn set_last(&mut self, i: usize, ev: cl_event) {
        events::pin(ev);
        let old = std::mem::replace(&mut self.semaphores[i].last, ev);
        events::release_pinned(old);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        let side = std::mem::take(&mut self.side);
        if crate::strategy::logging_enabled() && !self.semaphores.is_empty() {
            eprintln!(
                "dxcl-layer: semaphore pool of context {:p}: destroyed ({} semaphores)",
                self.context,
                self.semaphores.len()
            );
        }
        let p = self.device.as_ptr();
        let mut stuck = 0;
        for s in self.semaphores.drain(..) {
            if s.stuck {
                // Neither released nor destroyed: either call would wait for the outstanding
                // command. Its event stays pinned, so its queue's held-back release is not made
                // either (the ledger shows all three at the process's end).
                stuck += 1;
                log(format_args!(
                    "context {:p}: semaphore {} left as it is: its last CL command has not ended \
                     (a release would wait for it)",
                    self.context, s.id
                ));
                continue;
            }
            log(format_args!(
                "context {:p}: semaphore {} closing (last CL command {})",
                self.context,
                s.id,
                if s.last.is_null() || event_done(s.last) {
                    "complete"
                } else {
                    "pending"
                }
            ));
            events::release_pinned(s.last);
            crate::cl::held::let_go(s.cl);
            // SAFETY: our CL semaphore; the runtime's id, destroyed once (it waits for its own
            // submitted operations first).
            unsafe {
                (self.fns.release)(s.cl);
                ((*(*p).lpVtbl).DestroySharedSemaphore)(p, s.id);
            }
        }
        if stuck > 0 {
            // A side queue may hold the signal of a semaphore left above: its release (an
            // implicit flush, and on NVIDIA a wait for its commands) is left too.
            log(format_args!(
                "context {:p}: {} side queue(s) left with {stuck} semaphore(s)",
                self.context,
                side.len()
            ));
            return;
        }
        // Their signals are complete: DestroySharedSemaphore waited for the waits on them.
        for (_, q) in side {
            log(format_args!(
                "context {:p}: side queue {q:p} released",
                self.context
            ));
            crate::cl::release_queue(q);
        }
    }
}

/// Opens `context`'s pool unless it has one, on the interop device that `device` gives (made
/// only for a new pool). Without one (the runtime exports no semaphores), acquire and release
/// wait on the CPU.
pub(crate) fn open_pool(
    context: cl_context,
    fns: SemaphoreFns,
    device: impl FnOnce() -> Option<ComPtr<IDxclInteropDevice>>,
) {
    let mut guard = pools();
    let map = guard.get_or_insert_with(FxHashMap::default);
    if map.contains_key(&(context as usize)) {
        return;
    }
    let Some(device) = device() else {
        return;
    };
    let mut pool = Pool {
        validation: crate::validate::DeviceMark::new(&device),
        device,
        fns,
        context,
        mode: SyncMode::from_env(),
        semaphores: Vec::new(),
        side: Vec::new(),
        pending: Pending::default(),
        queues: Queues::default(),
    };
    // One semaphore up front tells whether the runtime has them at all (the host backend and
    // devices without exportable semaphores answer E_NOTIMPL).
    if pool.take().is_err() {
        return;
    }
    if crate::strategy::logging_enabled() {
        eprintln!("dxcl-layer: semaphore pool of context {context:p}: created");
    }
    map.insert(context as usize, pool);
}

/// How long the application's last `clReleaseContext` gives the pool's close ([`close_pool`]).
#[derive(Clone, Copy)]
struct Bounds {
    /// For the semaphores' last commands to end, once their queues are flushed.
    commands: std::time::Duration,
    /// For the platform's and the runtime's releases of the semaphores and side queues.
    calls: std::time::Duration,
}

impl Bounds {
    /// A command still running after a second waits for something of the application's (a user
    /// event it never sets) or for nothing that will come; the calls take microseconds when
    /// nothing is outstanding, milliseconds while the runtime's queue finishes a large copy.
    const CLOSE: Bounds = Bounds {
        commands: std::time::Duration::from_secs(1),
        calls: std::time::Duration::from_secs(2),
    };
}

/// Closes `context`'s pool, if it has one (the application released the context). Never blocks
/// for ever: see [`close_within`].
pub(crate) fn close_pool(context: cl_context) {
    let pool = pools().as_mut().and_then(|m| m.remove(&(context as usize)));
    if let Some(p) = pool {
        close_within(p, Bounds::CLOSE);
    }
}

/// Closes a pool taken out of [`POOLS`], waiting at most `bounds` in all.
///
/// The releases' events go first, then the application queues (on this thread, as before). Each
/// semaphore's last command is then flushed and given until `bounds.commands`: one that has not
/// ended by then may wait for ever (for a user event that failed or is never set, for commands
/// that no flush will run), and NVIDIA's `clReleaseSemaphoreKHR` of a semaphore with an
/// operation outstanding never returned from the application's `clReleaseContext`; that
/// semaphore is left. The releases themselves (`Pool`'s drop) run on a thread of the layer's
/// while this thread waits for them, one caller at a time as before; if they have not returned
/// within `bounds.calls` (a wake-up lost inside the platform, docs/gpu.md), that thread is left
/// to them and this one returns: a leak, logged, rather than a hang.
fn close_within(mut pool: Pool, bounds: Bounds) {
    pool.pending.close();
    // After the releases' events (those handed to the releasing thread too: release_here);
    // here, on the application's thread, like theirs.
    pool.queues.release_here();
    let deadline = std::time::Instant::now() + bounds.commands;
    for s in pool.semaphores.iter_mut().filter(|s| !s.last.is_null()) {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        // Flushes the command's queue first, then polls: clWaitForEvents has no limit.
        s.stuck = !events::has_ended(events::wait_within(s.last, left));
    }
    let context = pool.context;
    let (done, finished) = std::sync::mpsc::channel();
    // Dropped outside the lock: destroying waits for the runtime's queue. If no thread can be
    // started, the closure (and the pool in it) drops here, on this thread.
    let closing = std::thread::Builder::new()
        .name("dxcl-close".into())
        .spawn(move || {
            drop(pool);
            let _ = done.send(());
        });
    if closing.is_ok() && finished.recv_timeout(bounds.calls).is_err() {
        log(format_args!(
            "context {context:p}: the semaphore pool's releases have not returned in {} ms: \
             left to a thread of the layer's (what it holds of the context stays held)",
            bounds.calls.as_millis()
        ));
    }
}

/// Acquire: D3D signals after all its work issued so far; `queue` waits for that (after `wait`).
/// Returns the wait's event (owned by the caller), or None when the context has no pool.
pub(crate) fn d3d_then_cl(
    context: cl_context,
    queue: cl_command_queue,
    wait: &[cl_event],
) -> Result<Option<cl_event>, cl_int> {
    let mut guard = pools();
    let Some(pool) = guard.as_mut().and_then(|m| m.get_mut(&(context as usize))) else {
        return Ok(None);
    };
    let i = pool.take()?;
    let (id, sem) = (pool.semaphores[i].id, pool.semaphores[i].cl);
    let p = pool.device.as_ptr();
    // SAFETY: a live IDxclInteropDevice and an id it gave us.
    if !SUCCEEDED(unsafe { ((*(*p).lpVtbl).SignalSharedSemaphore)(p, id) }) {
        return Err(CL_OUT_OF_RESOURCES);
    }
    // Failed events left out: the call's marker fails with them (cl::wait).
    let live = crate::cl::wait::without_failed(wait);
    let (n, l) = crate::cl::wait_list(&live);
    let mut ev = std::ptr::null_mut();
    // SAFETY: a valid queue of the semaphore's context; the wait list is the caller's.
    let r = unsafe { (pool.fns.wait)(queue, 1, &sem, std::ptr::null(), n, l, &mut ev) };
    log(format_args!(
        "semaphore {id}: Direct3D signals, queue {queue:p} waits after {} events: {r}",
        wait.len()
    ));
    if r != 0 {
        return Err(r);
    }
    let ev = events::owned(ev);
    retain(ev);
    pool.set_last(i, ev);
    Ok(Some(ev))
}

/// The sync mode of `context`'s pool; None when it has none (CPU waits).
pub(crate) fn mode(context: cl_context) -> Option<SyncMode> {
    pools()
        .as_ref()
        .and_then(|m| m.get(&(context as usize)))
        .map(|p| p.mode)
}

/// Release: `queue` signals after `wait`; D3D's later work waits for it on the GPU. Returns false
/// when the context has no pool.
pub(crate) fn cl_then_d3d(
    context: cl_context,
    queue: cl_command_queue,
    wait: &[cl_event],
) -> Result<bool, cl_int> {
    let mut guard = pools();
    let Some(pool) = guard.as_mut().and_then(|m| m.get_mut(&(context as usize))) else {
        return Ok(false);
    };
    signal_then_d3d_waits(pool, queue, wait)?;
    Ok(true)
}

/// Adaptive release, when Direct3D next touches the object: nothing when `done` is complete,
/// else a semaphore signalled on the pool's side queue for `device` after `done`, which D3D's
/// later work waits for on the GPU; `unflushed`, the queue of `done`, is flushed first ("to use
/// event objects that refer to commands enqueued in a command-queue as event objects to wait on
/// by commands enqueued in a different command-queue, the application must call a clFlush",
/// clFlush). Returns false when that cannot be arranged (no pool any more, or a failure): the
/// caller then waits on the CPU.
pub(crate) fn order_d3d_after_if_pending(
    context: cl_context,
    device: cl_device_id,
    done: cl_event,
    unflushed: Option<cl_command_queue>,
) -> bool {
    if events::is_done(done) {
        return true;
    }
    if let Some(q) = unflushed {
        crate::cl::flush(q);
    }
    let mut guard = pools();
    let Some(pool) = guard.as_mut().and_then(|m| m.get_mut(&(context as usize))) else {
        return false;
    };
    let Some(queue) = pool.side_queue(device) else {
        return false;
    };
    signal_then_d3d_waits(pool, queue, &[done]).is_ok()
}

impl Pool {
    /// The side queue for `device`, created on first use.
    fn side_queue(&mut self, device: cl_device_id) -> Option<cl_command_queue> {
        if let Some(&(_, q)) = self.side.iter().find(|(d, _)| *d == device) {
            return Some(q);
        }
        let q = crate::cl::create_queue(self.context, device)?;
        self.side.push((device, q));
        Some(q)
    }
}

/// `queue` signals a pool semaphore after `wait`, flushed; D3D's later work waits for it.
fn signal_then_d3d_waits(
    pool: &mut Pool,
    queue: cl_command_queue,
    wait: &[cl_event],
) -> Result<(), cl_int> {
    let i = pool.take()?;
    let (id, sem) = (pool.semaphores[i].id, pool.semaphores[i].cl);
    // Failed events left out: the call's marker fails with them (cl::wait).
    let live = crate::cl::wait::without_failed(wait);
    let (n, l) = crate::cl::wait_list(&live);
    let mut ev = std::ptr::null_mut();
    // SAFETY: as in d3d_then_cl.
    let r = unsafe { (pool.fns.signal)(queue, 1, &sem, std::ptr::null(), n, l, &mut ev) };
    log(format_args!(
        "semaphore {id}: queue {queue:p} signals after {} events ({}), Direct3D waits: {r}",
        wait.len(),
        if wait.iter().all(|&e| event_done(e)) {
            "complete"
        } else {
            "pending"
        }
    ));
    if r != 0 {
        return Err(r);
    }
    let ev = events::owned(ev);
    // The runtime's wait must find the signal submitted.
    if let Some(flush) = crate::cl::target().and_then(|t| t.clFlush) {
        // SAFETY: a valid queue.
        unsafe { flush(queue) };
    }
    pool.set_last(i, ev);
    let p = pool.device.as_ptr();
    // SAFETY: a live IDxclInteropDevice and an id it gave us.
    if !SUCCEEDED(unsafe { ((*(*p).lpVtbl).WaitSharedSemaphore)(p, id) }) {
        pool.semaphores[i].broken = true;
        return Err(CL_OUT_OF_RESOURCES);
    }
    Ok(())
}

fn retain(ev: cl_event) {
    let _ = events::retain(ev);
}

/// A reference of the layer's to an application queue, shared by the adaptive releases made on
/// it and by the context's pool while the application uses the queue ([`Queues`]): one retain per
/// queue, not one per hand-off. A per-hand-off reference had to go on the layer's releasing thread
/// (it could be the queue's and the context's last), and there its `clReleaseCommandQueue`, an
/// implicit flush, ran beside the application's next hand-offs: on NVIDIA that slowed every call
/// of the process, the platform's own hand-off included (docs/benchmarks.md). Direct3D's access
/// lets go of a release's event while it still holds its share, so that release is never the last
/// reference to the queue or its context, and is made on Direct3D's thread.
struct QueueRef(usize);

impl QueueRef {
    /// A new reference to `queue` (the platform validates it).
    fn retain(queue: cl_command_queue) -> Option<Arc<Self>> {
        crate::cl::retain_queue(queue).ok()?;
        Some(Arc::new(Self(queue as usize)))
    }

    fn queue(&self) -> cl_command_queue {
        self.0 as cl_command_queue
    }

    /// Lets go of this share, releasing the queue here, on the caller's thread, when it is the
    /// last (the application's `clReleaseCommandQueue` or last `clReleaseContext`, where the
    /// queue's and the context's last references go). First the releasing thread makes what it
    /// was handed before, events of this queue among them: NVIDIA loses a context whose queue
    /// goes before its events (cl::events, PINS).
    fn release_here(self: Arc<Self>) {
        if let Some(last) = Arc::into_inner(self) {
            let queue = last.queue();
            std::mem::forget(last);
            if !crate::cl::release_thread::drained_within(std::time::Duration::from_secs(1)) {
                crate::cl::reaper::release_queue(queue);
                return;
            }
            crate::cl::release_queue(queue);
        }
    }
}

impl Drop for QueueRef {
    /// The last share, let go of by Direct3D's access, a completion callback or a sweep: the
    /// queue's release goes to the layer's releasing thread (after the events handed to it
    /// before), as it may be the context's last reference.
    fn drop(&mut self) {
        crate::cl::reaper::release_queue(self.queue());
    }
}

/// A pool's shares of the application queues its adaptive releases were made on, newest last.
/// The application's `clReleaseCommandQueue` lets go of its queue's ([`queue_released`]); the
/// bound only limits what an application that never releases its queues leaves here.
#[derive(Default)]
struct Queues(Vec<Arc<QueueRef>>);

impl Queues {
    /// How many queues are kept at most.
    const KEPT: usize = 32;

    /// A share of the layer's reference to `queue`, retained at the first release from it.
    fn share(&mut self, queue: cl_command_queue) -> Option<Arc<QueueRef>> {
        if let Some(q) = self.take(queue) {
            self.0.push(q.clone());
            return Some(q);
        }
        let q = QueueRef::retain(queue)?;
        if self.0.len() >= Self::KEPT {
            // The least recently used; its reference goes with its last share (whose Drop hands
            // it to the releasing thread).
            self.0.remove(0);
        }
        self.0.push(q.clone());
        Some(q)
    }

    /// Makes `queue` the most recently used, if the pool has a share of it.
    fn refresh(&mut self, queue: cl_command_queue) {
        if let Some(q) = self.take(queue) {
            self.0.push(q);
        }
    }

    /// Takes out the pool's share of `queue`, if it has one.
    fn take(&mut self, queue: cl_command_queue) -> Option<Arc<QueueRef>> {
        let i = self.0.iter().position(|q| q.queue() == queue)?;
        Some(self.0.remove(i))
    }

    /// Lets go of every queue, releasing here those no release holds any more.
    fn release_here(&mut self) {
        for q in self.0.drain(..) {
            q.release_here();
        }
    }
}

/// The application releases `queue`: the pools let go of their shares of it first, on this thread
/// (the application's release, made next, is then the queue's last where no release still holds
/// a share). A later adaptive release from the queue retains it again.
pub(crate) fn queue_released(queue: cl_command_queue) {
    let taken: Vec<Arc<QueueRef>> = match pools().as_mut() {
        Some(m) => m
            .values_mut()
            .filter_map(|p| p.queues.take(queue))
            .collect(),
        None => return,
    };
    for q in taken {
        q.release_here();
    }
}

/// An adaptive release's event (a reference) and a share of its queue while Direct3D's next
/// access may still need them; None once let go of.
///
/// It is also what the release (and the releases that take its place: [`Running::renew`]) leave
/// with the runtime until Direct3D next touches the object:
/// [`order_d3d_after_next_access`] hands the runtime a reference (`Arc::into_raw`) as the pending
/// work's context, which `pending_release` takes back.
struct Running {
    held: Mutex<Option<Holding>>,
    /// Set false when the runtime first calls the release's pending work (see [`Untouched`]).
    untouched: AtomicBool,
    /// The release's context and its queue's device, as numbers (handles are not Send).
    context: usize,
    device: usize,
    /// The release left its queue's flush to Direct3D's next access (see
    /// [`order_d3d_after_next_access`]).
    unflushed: bool,
}

/// What a running release holds until it is let go of, all of it taken at once.
struct Holding {
    /// The newest release's event (a reference).
    ev: usize,
    /// A share of the release's queue.
    queue: Arc<QueueRef>,
    /// [`crate::cl::enqueued_mark`] read after `ev`'s enqueue returned.
    mark: crate::cl::EnqueuedMark,
    /// The events of the releases `ev` replaced, each ended: let go of with `ev` (Direct3D's
    /// access, a sweep, the pool's close), or at once by the renewal that finds
    /// [`Running::ENDED`] of them, so that a renewal makes no platform call of its own while
    /// Direct3D touches the resource now and then.
    ended: Vec<usize>,
}

impl Holding {
    /// Lets go of every event reference it holds by `release_event`, the replaced ones first;
    /// the caller lets go of the queue's share after them.
    fn let_go_of_events(&self, release_event: fn(cl_event)) {
        release_all(&self.ended, release_event);
        release_event(self.ev as cl_event);
    }
}

impl Running {
    /// A release of `context`'s queue on `device`, with its event and a share of the queue.
    fn new(ev: usize, queue: Arc<QueueRef>, (context, device): (cl_context, cl_device_id)) -> Self {
        Running {
            held: Mutex::new(Some(Holding {
                ev,
                queue,
                mark: crate::cl::enqueued_mark(),
                ended: Vec::new(),
            })),
            untouched: AtomicBool::new(true),
            context: context as usize,
            device: device as usize,
            unflushed: true,
        }
    }

    /// How many replaced events a release keeps at most.
    const ENDED: usize = 16;

    /// Takes the held event, the queue's share and the replaced events.
    fn take(&self) -> Option<Holding> {
        lock_running(self).take()
    }

    /// A newer release of the same in-order queue, made while Direct3D has still not touched the
    /// resource, takes this one's place once this one has completed: Direct3D's next access then
    /// orders itself after `ev` (a reference handed over) alone. The replaced event is kept
    /// ([`Holding::ended`]); returns the events the caller lets go of now (none until
    /// [`Running::ENDED`] are kept), or None, nothing changed: the runtime has begun the work,
    /// the event was let go of, or it has not completed.
    ///
    /// Only an ended release lets the newer event stand for this one: a command terminated by a
    /// failed event is done, but says nothing of the commands before it, and on NVIDIA every
    /// later command of an in-order queue ends terminated after one that was, so a newer release
    /// behind a failed command would end at once while this one still runs. This thread's last
    /// successful `clFinish` of the queue, begun after this release's enqueue returned, says it
    /// ended, whatever failed meanwhile ([`crate::cl::finished_since`]; the application's usual
    /// wait between hand-offs); else its status must read `CL_COMPLETE`.
    /// `mark`: [`crate::cl::enqueued_mark`] read after `ev`'s enqueue returned.
    fn renew(
        &self,
        ev: cl_event,
        queue: cl_command_queue,
        mark: crate::cl::EnqueuedMark,
    ) -> Option<Vec<usize>> {
        let mut held = lock_running(self);
        // Under the lock: the runtime marks the work touched before it takes the event, so either
        // it finds the new event or this finds it touched.
        if !self.untouched.load(Ordering::Acquire) {
            return None;
        }
        let h = held.as_mut()?;
        if h.queue.queue() != queue {
            return None;
        }
        // Queried under the lock, which no callback of the platform's waits for here: the pool
        // holds this release, and only releases it does not hold (or no longer holds, once it
        // closed) get a completion callback (see retained_event).
        if !crate::cl::finished_since(queue, h.mark)
            && events::status(h.ev as cl_event) != opencl_sys::CL_COMPLETE as cl_int
        {
            return None;
        }
        h.mark = mark;
        let replaced = std::mem::replace(&mut h.ev, ev as usize);
        h.ended.push(replaced);
        if h.ended.len() < Self::ENDED {
            return Some(Vec::new());
        }
        Some(std::mem::replace(
            &mut h.ended,
            Vec::with_capacity(Self::ENDED),
        ))
    }

    /// The runtime runs the work: Direct3D is about to touch the resource (or it goes).
    fn touched(&self) {
        self.untouched.store(false, Ordering::Release);
    }

    /// The release's event with a reference of the caller's, and a share of its queue, while
    /// it runs.
    fn running(&self) -> Option<(cl_event, Arc<QueueRef>)> {
        let held = lock_running(self);
        let h = held.as_ref()?;
        let ev = h.ev as cl_event;
        events::retain(ev).ok()?;
        Some((ev, h.queue.clone()))
    }
}

fn lock_running(r: &Running) -> std::sync::MutexGuard<'_, Option<Holding>> {
    r.held.lock().unwrap_or_else(|p| p.into_inner())
}

/// The release's event with a reference of the caller's, taken under the lock: Direct3D's access
/// may let go of the release's own reference on another thread at any moment. Never queried under
/// the lock: rusticl runs an event's callbacks (which take it through [`let_go_of`]) holding the
/// event's lock.
fn retained_event(r: &Running) -> Option<cl_event> {
    let held = lock_running(r);
    let ev = held.as_ref().map(|h| h.ev as cl_event)?;
    events::retain(ev).ok()?;
    Some(ev)
}

/// A context's adaptive releases that Direct3D has not touched since. Each holds the
/// application's queue and context, and Direct3D may not touch its resource again for a long
/// time (or ever), so completed ones are let go of. Not through a completion callback each: on
/// NVIDIA registering one took 2.0 µs of a 4 KiB hand-off's 24 µs, and running it 2.7 µs more on
/// the platform's thread (docs/benchmarks.md). Instead, once [`Pending::SWEEP`] are held, a
/// sweep queries per in-order queue and releasing thread only the newest release: complete, it
/// completes all older ones of that thread on the queue. What the application's context still
/// holds when it is released gets a callback then ([`Pending::close`]).
///
/// Per thread, because only one thread's releases are held in the order they were enqueued: each
/// is held after its enqueue returned, so two threads releasing on one queue may hold theirs in
/// the other order, and a complete release of one thread says nothing of a newer one of another.
#[derive(Default)]
struct Pending {
    held: Vec<Held>,
    /// The sweep's threshold: twice what the last sweep kept, at least [`Pending::SWEEP`].
    sweep_at: usize,
}

struct Held {
    running: Weak<Running>,
    queue: usize,
    /// The thread that enqueued the release ([`thread_key`]).
    thread: usize,
    /// Commands of an in-order queue complete in order.
    in_order: bool,
}

impl Pending {
    const SWEEP: usize = 64;

    fn hold(&mut self, running: &Arc<Running>, queue: cl_command_queue, in_order: bool) {
        if self.held.len() >= self.sweep_at.max(Self::SWEEP) {
            self.sweep();
            self.sweep_at = 2 * self.held.len();
        }
        self.held.push(Held {
            running: Arc::downgrade(running),
            queue: queue as usize,
            thread: thread_key(),
            in_order,
        });
    }

    /// `running`, held here, takes the newer release `ev` of `queue` ([`Running::renew`]) and
    /// becomes this thread's newest held: the sweep takes a thread's newest release of a queue as
    /// standing for its older ones. Returns the replaced events to let go of now, or None (not
    /// held, or no longer renewable).
    fn renew(
        &mut self,
        running: &Arc<Running>,
        ev: cl_event,
        queue: cl_command_queue,
        mark: crate::cl::EnqueuedMark,
    ) -> Option<Vec<usize>> {
        // Usually the newest already: the object handed back and forth.
        let i = self
            .held
            .iter()
            .rposition(|h| std::ptr::eq(h.running.as_ptr(), Arc::as_ptr(running)))?;
        let old = running.renew(ev, queue, mark)?;
        let mut h = self.held.remove(i);
        // Now this thread's newest release of the queue, enqueued after all it held before.
        h.thread = thread_key();
        self.held.push(h);
        Some(old)
    }

    /// Lets go of the releases that have completed, newest first; drops those Direct3D's access
    /// (or the resource's end) let go of already. Only `CL_COMPLETE` stands for the older
    /// releases of a queue: a command terminated by a failed event is done, but says nothing of
    /// the commands before it.
    fn sweep(&mut self) {
        let (mut complete, mut running_on) = (Vec::new(), Vec::new());
        let mut kept = Vec::new();
        for h in self.held.drain(..).rev() {
            let Some(running) = h.running.upgrade() else {
                continue;
            };
            if lock_running(&running).is_none() {
                continue;
            }
            let line = (h.queue, h.thread);
            let done = if h.in_order && complete.contains(&line) {
                true
            } else if h.in_order && running_on.contains(&line) {
                false
            } else {
                let Some(ev) = retained_event(&running) else {
                    continue;
                };
                let status = events::status(ev);
                // Not here: the last reference may go with it, and this holds the pools' lock.
                crate::cl::reaper::release_event(ev);
                let finished = status == opencl_sys::CL_COMPLETE as cl_int;
                if h.in_order {
                    if finished {
                        &mut complete
                    } else {
                        &mut running_on
                    }
                    .push(line);
                }
                finished || status < 0
            };
            if done {
                let_go_of(&running);
            } else {
                kept.push(h);
            }
        }
        kept.reverse();
        self.held = kept;
    }

    /// The application released the context: what is complete is let go of now, here on the
    /// application's thread (each event before its queue, and before the pool's semaphores and
    /// queues go), the rest by a completion callback each (a wait where the platform has none).
    /// Not through the releasing thread, where the context's last references would go while the
    /// pool's go here: NVIDIA's context teardown loses wake-ups (docs/gpu.md), and on an H100 its
    /// clReleaseContext stayed blocked only in the modes that have a pool.
    fn close(&mut self) {
        for h in self.held.drain(..) {
            let Some(running) = h.running.upgrade() else {
                continue;
            };
            let Some(ev) = retained_event(&running) else {
                continue;
            };
            if events::is_done(ev) {
                // Every event reference before the queue.
                let taken = running.take();
                release_event(ev);
                if let Some(h) = taken {
                    h.let_go_of_events(release_event);
                    h.queue.release_here();
                }
                continue;
            }
            let on_complete = running.clone();
            // when_complete releases the reference taken above after running the callback.
            if events::when_complete(ev, Box::new(move |_| let_go_of(&on_complete))).is_err() {
                // No callbacks: a bounded wait (the release may wait for a user event the
                // application never sets); a reference to a command still running may go.
                events::wait_within(ev, Bounds::CLOSE.commands);
                release_event(ev);
                let_go_of(&running);
            }
        }
    }
}

/// The calling thread, as a number no live thread shares: the address of a thread-local. A
/// thread started after another ended may get its number; its releases then come after all of
/// the ended thread's, as one thread's would.
fn thread_key() -> usize {
    thread_local! {
        static KEY: u8 = const { 0 };
    }
    KEY.with(|k| std::ptr::from_ref(k) as usize)
}

/// Whether an adaptive release's pending work is still with the runtime, not yet run: dxcl's
/// runtime runs a resource's pending work (its order or wait, then its release) before any access
/// to the resource, within the Direct3D call that makes it, so while this holds Direct3D has
/// issued no work on the resource since the release.
#[derive(Clone)]
pub(crate) struct Untouched(Arc<Running>);

impl Untouched {
    pub fn holds(&self) -> bool {
        self.0.untouched.load(Ordering::Acquire)
    }
}

/// Lets go of a pending release's event and queue from a sweep or a completion callback: on the
/// layer's releasing thread, as the queue may be the context's last reference. The event is
/// handed over first; if this is the queue's last share its Drop hands the queue over after it,
/// and a last share released elsewhere waits for the thread first ([`QueueRef::release_here`]).
fn let_go_of(running: &Running) {
    let_go_of_by(running, crate::cl::reaper::release_event);
}

/// Takes a pending release's event, queue share and replaced events, lets go of the events by
/// `release_event`, then of the share.
fn let_go_of_by(running: &Running, release_event: fn(cl_event)) {
    if let Some(h) = running.take() {
        h.let_go_of_events(release_event);
        drop(h.queue);
    }
}

/// Lets go of each of `events` by `release_event`.
fn release_all(events: &[usize], release_event: fn(cl_event)) {
    for &ev in events {
        release_event(ev as cl_event);
    }
}

unsafe extern "system" fn pending_wait(p: *mut c_void) {
    // SAFETY: the reference `order_d3d_after_next_access` gave the runtime, alive until
    // pending_release.
    let pending = unsafe { &*p.cast::<Running>() };
    pending.touched();
    let _ = std::panic::catch_unwind(|| {
        if let Some((ev, _queue)) = pending.running() {
            // clWaitForEvents flushes the event's queue itself.
            events::wait(ev);
            release_event(ev);
        }
    });
}

unsafe extern "system" fn pending_order(p: *mut c_void) -> HRESULT {
    // SAFETY: as in pending_wait.
    let pending = unsafe { &*p.cast::<Running>() };
    pending.touched();
    let ordered = std::panic::catch_unwind(|| {
        let Some((ev, q)) = pending.running() else {
            // Completed.
            return true;
        };
        // A release that flushed its queue on its own thread submitted the event's command, and
        // no flush is made here, on Direct3D's (see api::share's release).
        let unflushed = pending.unflushed.then_some(q.queue());
        let (context, device) = (
            pending.context as cl_context,
            pending.device as cl_device_id,
        );
        let ordered = order_d3d_after_if_pending(context, device, ev, unflushed);
        release_event(ev);
        ordered
    });
    if matches!(ordered, Ok(true)) {
        S_OK
    } else {
        E_FAIL
    }
}

unsafe extern "system" fn pending_release(p: *mut c_void) {
    // SAFETY: the reference `order_d3d_after_next_access` gave the runtime, given back exactly
    // once.
    let pending = unsafe { Arc::from_raw(p.cast::<Running>()) };
    pending.touched();
    // Direct3D's access was ordered, or the resource is gone: nothing needs the release's event
    // and queue any more. The event goes here, on Direct3D's thread: the queue's share is still
    // held, so it is not the queue's or the context's last reference (see QueueRef).
    let _ = std::panic::catch_unwind(|| let_go_of_by(&pending, release_event));
}

/// Adaptive release: Direct3D's next access to `interop`'s resource finds `done` complete and
/// waits for nothing, or (still running) is ordered after it on the GPU through a semaphore
/// signalled then ([`order_d3d_after_if_pending`]); a CPU access (Map) waits for it. `owned`:
/// the caller hands over its reference to `done` (taken only when this returns true).
///
/// The release need not flush `queue`: the access flushes it if the release is still pending
/// then (clWaitForEvents flushes on its own). A flush is one of NVIDIA's dearest calls (2.4 µs
/// of an idle hand-off's 11 µs on an H100), and the application's own `clFinish`, blocking call
/// or `clFlush` usually comes first. Only platforms with external memory and semaphores get
/// here, and none of them is rusticl 22.3, which loses a blocking call's wait when another
/// thread flushes its queue (why every other release flushes on the application's thread).
/// `renew`: the object's last release, when Direct3D has not touched the resource since and this
/// release on the same queue had no wait list after an acquire that had none. On an in-order queue,
/// once that release has completed, this one takes its place with the runtime ([`Pending::renew`],
/// [`Running::renew`]): no new pending work per hand-off, so an object handed back and forth on
/// OpenCL's side alone leaves nothing growing, and Direct3D's next access orders itself once,
/// after the newest release.
///
/// Returns [`NextAccess::Refused`] when the runtime would not take the work (the caller falls
/// back and flushes).
pub(crate) fn order_d3d_after_next_access(
    interop: &ComPtr<IDxclInteropResource>,
    context: cl_context,
    (queue, device, in_order): (cl_command_queue, Option<cl_device_id>, bool),
    done: cl_event,
    owned: bool,
    renew: Option<Untouched>,
) -> NextAccess {
    if let Some(last) = renew.filter(|_| in_order) {
        // After `done`'s enqueue returned, as the caller's call is.
        let mark = crate::cl::enqueued_mark();
        if !owned && events::retain(done).is_err() {
            return NextAccess::Refused;
        }
        // Under the pools' lock, like the sweep, which takes its event; the pool's close takes
        // the pool out of the map first, so nothing renews what it lets go of.
        let replaced = pools()
            .as_mut()
            .and_then(|m| m.get_mut(&(context as usize)))
            .and_then(|pool| {
                let old = pool.pending.renew(&last.0, done, queue, mark)?;
                // The queue stays among the most recently used, as a new pending work's share
                // would keep it.
                pool.queues.refresh(queue);
                Some(old)
            });
        if let Some(ended) = replaced {
            // Not the queue's last reference: the application's call on it has not returned
            // (and the object's AcquiredOn holds one of its own).
            release_all(&ended, release_event);
            return NextAccess::Pending(last);
        }
        if !owned {
            release_event(done);
        }
    }
    order_d3d_after_new_access(interop, context, (queue, device, in_order), done, owned)
}

/// [`order_d3d_after_next_access`] with a pending work of its own for the runtime.
fn order_d3d_after_new_access(
    interop: &ComPtr<IDxclInteropResource>,
    context: cl_context,
    (queue, device, in_order): (cl_command_queue, Option<cl_device_id>, bool),
    done: cl_event,
    owned: bool,
) -> NextAccess {
    // The caller's, when it knows it (cl::queue_facts).
    let Some(device) = device.or_else(|| crate::cl::queue_device(queue).ok()) else {
        return NextAccess::Refused;
    };
    if !owned && events::retain(done).is_err() {
        return NextAccess::Refused;
    }
    let with_share = |q: Arc<QueueRef>| Arc::new(Running::new(done as usize, q, (context, device)));
    // Held by the pool, or (the pool closed meanwhile) let go of by the release's completion, with
    // a reference of the callback's own: both arranged before the runtime has the work, whose
    // access may let go of the release's references on another thread at once.
    let pooled = pools()
        .as_mut()
        .and_then(|m| m.get_mut(&(context as usize)))
        .map(|pool| {
            let r = pool.queues.share(queue).map(with_share);
            if let Some(r) = &r {
                pool.pending.hold(r, queue, in_order);
            }
            r
        });
    let held = pooled.is_some();
    let running = match pooled {
        Some(r) => r,
        None => QueueRef::retain(queue).map(with_share),
    };
    let Some(running) = running else {
        if !owned {
            release_event(done);
        }
        return NextAccess::Refused;
    };
    let watched = !held && events::retain(done).is_ok();
    let pending = Arc::into_raw(running.clone()).cast_mut();
    let p = interop.as_ptr();
    // SAFETY: a live IDxclInteropResource; the callbacks are plain functions that catch panics,
    // and the context is the reference just leaked, which pending_release takes back once.
    let hr = unsafe {
        ((*(*p).lpVtbl).AddPendingWorkOrdered)(
            p,
            Some(pending_wait),
            Some(pending_order),
            Some(pending_release),
            pending.cast(),
        )
    };
    if !SUCCEEDED(hr) {
        // SAFETY: the runtime refused it, so the reference is still ours alone.
        drop(unsafe { Arc::from_raw(pending) });
        if watched {
            release_event(done);
        }
        // Nothing replaced yet (no renewal before the runtime took the work): no ended events.
        let Some(Holding { queue: q, .. }) = running.take() else {
            // A sweep found the release complete meanwhile and let go of its references (the
            // caller's too, when owned): there is nothing left to order.
            return NextAccess::Done;
        };
        if !owned {
            release_event(done);
        }
        q.release_here();
        return NextAccess::Refused;
    }
    if watched {
        let on_complete = running.clone();
        // when_complete releases the callback's reference after running it.
        if events::when_complete(done, Box::new(move |_| let_go_of(&on_complete))).is_err() {
            crate::cl::reaper::release_event(done);
        }
    }
    NextAccess::Pending(Untouched(running))
}

/// What [`order_d3d_after_next_access`] arranged.
pub(crate) enum NextAccess {
    /// The runtime would not take the work: the caller orders Direct3D itself.
    Refused,
    /// Nothing is left to order (the release completed meanwhile).
    Done,
    /// Direct3D's next access orders itself after the release; until then the object is
    /// [`Untouched`].
    Pending(Untouched),
}

/// Adaptive acquire: whether Direct3D's work on the resource has completed (never blocks).
pub(crate) fn device_work_done(interop: &ComPtr<IDxclInteropResource>) -> bool {
    let p = interop.as_ptr();
    // SAFETY: a live IDxclInteropResource of dxcl's runtime.
    unsafe { ((*(*p).lpVtbl).QueryDeviceWorkDone)(p) == S_OK }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cl::fake::{self, calls, EVENTS};

    /// A share of a reference to the fake queue `q` that the test took itself.
    fn share(q: usize) -> Arc<QueueRef> {
        crate::cl::retain_queue(q as cl_command_queue).unwrap();
        Arc::new(QueueRef(q))
    }

    /// A release with event `ev` and a share of the fake queue `q`, of no context or device.
    fn held_on(q: usize, ev: usize) -> Arc<Running> {
        Arc::new(Running::new(
            ev,
            share(q),
            (std::ptr::null_mut(), std::ptr::null_mut()),
        ))
    }

    /// Waits up to `ms` for `n` releases of `q` (the layer's releasing thread makes them).
    fn released(q: usize, n: usize, ms: u32) -> bool {
        let q = q as cl_command_queue;
        (0..ms).any(|_| {
            let done = calls("release", q) >= n;
            if !done {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            done
        })
    }

    /// A context's adaptive releases from one queue share one reference to it, retained at the
    /// first: no retain and no release (an implicit flush) per hand-off. Direct3D's access lets
    /// go of a release's event on its own thread at once, and of its share only after it. The
    /// pool keeps its queues most recently used last: one pushed out by newer ones, or taken out
    /// at the application's `clReleaseCommandQueue`, is released with its last share (here when
    /// that is the pool's, after what the releasing thread was handed before).
    #[test]
    fn adaptive_releases_share_their_queues_reference() {
        fake::install();
        let (q, ev) = (EVENTS + 0x70, EVENTS + 0x71);
        let other = |i: usize| (q + 0x100 * i) as cl_command_queue;
        let mut queues = Queues::default();
        let first = queues.share(q as cl_command_queue).unwrap();
        let running = Running::new(
            ev,
            first,
            ((EVENTS + 0x81) as cl_context, std::ptr::null_mut()),
        );
        let pending = Arc::into_raw(Arc::new(running)).cast_mut();
        for _ in 0..10 {
            drop(queues.share(q as cl_command_queue).unwrap());
        }
        assert_eq!(calls("retain", q as cl_command_queue), 1, "retained once");
        // SAFETY: a reference leaked just above, given back once.
        unsafe { pending_release(pending.cast()) };
        assert_eq!(
            calls("release_event", ev as cl_command_queue),
            1,
            "the event, here"
        );
        // Used again after newer queues: kept while they are pushed out in turn.
        for i in 1..Queues::KEPT {
            queues.share(other(i)).unwrap();
        }
        drop(queues.share(q as cl_command_queue).unwrap());
        queues.share(other(Queues::KEPT)).unwrap();
        assert!(!released(q, 1, 50), "recently used: still kept");
        assert!(
            released(other(1) as usize, 1, 2000),
            "the least recently used"
        );
        // The application releases its queue: the pool's share, the last, goes here.
        let released_here = queues.take(q as cl_command_queue).unwrap();
        released_here.release_here();
        assert_eq!(calls("release", q as cl_command_queue), 1, "at once");
        queues.release_here();
        for i in 2..=Queues::KEPT {
            assert_eq!(calls("release", other(i)), 1, "at close, here");
        }
    }

    /// A queue's last share released on the application's thread (the pool's close) goes after
    /// the event releases handed to the releasing thread before, even while that thread is busy:
    /// NVIDIA loses a context whose queue goes before its events.
    #[test]
    fn a_queue_released_here_goes_after_its_events() {
        fake::install();
        let (q, ev) = (EVENTS + 0x72, EVENTS + 0x73);
        let mut queues = Queues::default();
        let running = Running::new(
            ev,
            queues.share(q as cl_command_queue).unwrap(),
            (std::ptr::null_mut(), std::ptr::null_mut()),
        );
        // The releasing thread busy for a while, then the sweep's let-go behind it.
        crate::cl::release_thread::later(Box::new(|| {
            std::thread::sleep(std::time::Duration::from_millis(100))
        }));
        let_go_of(&running);
        assert_eq!(
            calls("release", q as cl_command_queue),
            0,
            "the pool's share"
        );
        queues.release_here();
        assert_eq!(
            (
                calls("release_event", ev as cl_command_queue),
                calls("release", q as cl_command_queue)
            ),
            (1, 1),
            "the event first, then the queue"
        );
    }

    /// Direct3D's next access orders itself after a pending adaptive release without flushing
    /// the release's queue from Direct3D's thread when the release flushed it on its own (a
    /// flush there can meet a blocking call on that queue in another thread, whose wait rusticl
    /// 22.3 loses); one that left the flush to the access gets it, once the release is found
    /// pending. With no semaphore pool for the context, it asks for the CPU wait instead.
    #[test]
    fn pending_order_flushes_only_an_unflushed_release() {
        fake::install();
        for (ev, q, unflushed) in [
            (EVENTS + 4, EVENTS + 5, false),
            (EVENTS + 6, EVENTS + 7, true),
        ] {
            let (ev, q) = (ev as cl_event, q as cl_command_queue);
            let mut running = Running::new(
                ev as usize,
                share(q as usize),
                ((EVENTS + 0x80) as cl_context, std::ptr::null_mut()),
            );
            running.unflushed = unflushed;
            let pending = Arc::into_raw(Arc::new(running)).cast_mut();
            // SAFETY: a reference leaked just above, given back once by pending_release.
            let hr = unsafe { pending_order(pending.cast()) };
            assert_eq!(hr, E_FAIL, "no pool: the runtime waits on the CPU");
            assert_eq!(
                calls("flush", q),
                usize::from(unflushed),
                "flushed: {unflushed}"
            );
            assert_eq!(
                (calls("retain", q), calls("release", q)),
                (1, 0),
                "the share's reference only: none of its own taken"
            );
            // SAFETY: as above.
            unsafe { pending_release(pending.cast()) };
        }
    }

    /// A sweep queries only the newest release of an in-order queue: complete, it lets go of
    /// every release of that queue; pending, it keeps them all. An out-of-order queue's
    /// releases are queried one by one. Releases Direct3D's access let go of already drop out.
    #[test]
    fn a_sweep_queries_each_in_order_queue_once() {
        use crate::cl::fake::COMPLETE;
        fake::install();
        let held = |ev: usize| held_on(EVENTS + 0x60, ev);
        // Queue A (in order): its newest is complete. Queue B (in order): its newest is pending.
        // Queue C (out of order): one complete, one pending.
        let (a, b, c) = (
            0xA as cl_command_queue,
            0xB as cl_command_queue,
            0xC as cl_command_queue,
        );
        let a_old = [held(EVENTS + 0x10), held(EVENTS + 0x11)];
        let a_new = held(COMPLETE + 1);
        let b_old = held(COMPLETE + 2);
        let b_new = held(EVENTS + 0x12);
        let c_done = held(COMPLETE + 3);
        let c_running = held(EVENTS + 0x13);
        let gone = held(EVENTS + 0x14);
        let mut p = Pending::default();
        for (r, q, in_order) in [
            (&a_old[0], a, true),
            (&b_old, b, true),
            (&c_done, c, false),
            (&a_old[1], a, true),
            (&c_running, c, false),
            (&gone, a, true),
            (&b_new, b, true),
            (&a_new, a, true),
        ] {
            p.hold(r, q, in_order);
        }
        lock_running(&gone).take();
        p.sweep();
        let status = |ev: usize| calls("status", ev as cl_command_queue);
        assert_eq!(status(COMPLETE + 1), 1, "A's newest queried");
        assert_eq!(
            status(EVENTS + 0x10) + status(EVENTS + 0x11),
            0,
            "A's older not"
        );
        assert_eq!(status(EVENTS + 0x12), 1, "B's newest queried");
        assert_eq!(status(COMPLETE + 2), 0, "B's older not");
        assert_eq!(status(COMPLETE + 3) + status(EVENTS + 0x13), 2, "C's each");
        for r in [&a_old[0], &a_old[1], &a_new, &c_done] {
            assert!(lock_running(r).is_none(), "complete: let go of");
        }
        for r in [&b_old, &b_new, &c_running] {
            assert!(lock_running(r).is_some(), "not known complete: kept");
        }
        assert_eq!(p.held.len(), 3, "kept in order, the let-go ones dropped");
        assert!(Arc::ptr_eq(&p.held[0].running.upgrade().unwrap(), &b_old));
        for r in [&b_old, &b_new, &c_running] {
            lock_running(r).take();
        }
    }

    /// Two threads release on one in-order queue, and the one that enqueued later holds its
    /// release first: the other's, held newest, reads complete, yet says nothing of the first's,
    /// which still runs. The sweep asks each thread's newest and keeps the running one.
    #[test]
    fn a_sweep_takes_no_other_threads_release_as_complete() {
        use crate::cl::fake::COMPLETE;
        fake::install();
        let q = (EVENTS + 0x3E) as cl_command_queue;
        let held = |ev: usize| held_on(EVENTS + 0x3E, ev);
        let (later, earlier) = (held(EVENTS + 0x3F), held(COMPLETE + 0x34));
        let mut p = Pending::default();
        std::thread::scope(|s| {
            let (p, later) = (&mut p, &later);
            s.spawn(move || p.hold(later, (EVENTS + 0x3E) as cl_command_queue, true));
        });
        p.hold(&earlier, q, true);
        let status = |ev: usize| calls("status", ev as cl_command_queue);
        let before = status(EVENTS + 0x3F);
        p.sweep();
        assert_eq!(
            status(EVENTS + 0x3F),
            before + 1,
            "the other thread's asked"
        );
        assert!(lock_running(&earlier).is_none(), "complete: let go of");
        assert!(lock_running(&later).is_some(), "still running: kept");
        assert_eq!(p.held.len(), 1);
        lock_running(&later).take();
    }

    /// A release takes the place of an untouched, complete one of the same queue: it gets the
    /// newer event (the older is kept, to be let go of with it) and becomes the newest held, so a
    /// sweep that finds another object's older release complete lets go of nothing that still
    /// runs. Not while the older one has not completed (unless this thread's clFinish of the
    /// queue since says it has, with no query), nor once the runtime has begun the work, nor from
    /// another queue, nor one the pool does not hold.
    #[test]
    fn a_release_takes_the_place_of_an_untouched_one() {
        use crate::cl::fake::COMPLETE;
        fake::install();
        let q = EVENTS + 0x36;
        let running = |ev: usize| held_on(q, ev);
        let queue = q as cl_command_queue;
        let (a, b) = (running(COMPLETE + 0x24), running(COMPLETE + 0x26));
        let mut p = Pending::default();
        p.hold(&a, queue, true);
        p.hold(&b, queue, true);
        let newer = (EVENTS + 0x3A) as cl_event;
        let other = (EVENTS + 0x38) as cl_command_queue;
        let mark = crate::cl::enqueued_mark;
        assert!(
            p.renew(&a, newer, other, mark()).is_none(),
            "another queue's"
        );
        assert_eq!(
            p.renew(&a, newer, queue, mark()),
            Some(Vec::new()),
            "nothing to let go of now"
        );
        assert_eq!(
            lock_running(&a).as_ref().unwrap().ended,
            [COMPLETE + 0x24],
            "the older kept"
        );
        assert!(Arc::ptr_eq(&p.held[1].running.upgrade().unwrap(), &a));
        // Other tests query these handles too: counted across the sweep.
        let status = |ev: cl_event| calls("status", ev.cast());
        let before = (status(newer), status((COMPLETE + 0x26) as cl_event));
        p.sweep();
        assert_eq!(status(newer), before.0 + 1, "the newest queried");
        assert_eq!(
            status((COMPLETE + 0x26) as cl_event),
            before.1,
            "not the older"
        );
        assert!(lock_running(&a).is_some(), "still running: kept");
        assert!(lock_running(&b).is_some(), "older than a running one: kept");
        // A running (or failed) release is not replaced: the newer event might end first.
        let newest = (EVENTS + 0x3C) as cl_event;
        assert!(p.renew(&a, newest, queue, mark()).is_none(), "not complete");
        assert_eq!(lock_running(&a).as_ref().unwrap().ev, newer as usize);
        // Ended, with no query: this thread's clFinish of the queue began after its enqueue.
        let asked = status(newer);
        finished(queue);
        let early = crate::cl::finish_ticket();
        assert_eq!(
            p.renew(&a, newest, queue, mark()),
            Some(Vec::new()),
            "finished since"
        );
        assert_eq!(
            lock_running(&a).as_ref().unwrap().ended,
            [COMPLETE + 0x24, newer as usize]
        );
        assert_eq!(status(newer), asked, "not queried");
        // A finish begun before the newest release's enqueue returned, or of another queue,
        // says nothing of it (and it has not completed).
        crate::cl::finished(queue, early);
        assert!(p.renew(&a, newer, queue, mark()).is_none(), "begun before");
        crate::cl::finished(other, crate::cl::finish_ticket());
        assert!(
            p.renew(&a, newer, queue, mark()).is_none(),
            "another queue's"
        );
        assert_eq!(lock_running(&a).as_ref().unwrap().ev, newest as usize);

        let unheld = running(COMPLETE + 0x28);
        assert!(
            p.renew(&unheld, newer, queue, mark()).is_none(),
            "not the pool's"
        );
        a.touched();
        assert!(
            p.renew(&a, newer, queue, mark()).is_none(),
            "Direct3D began the work"
        );
        for r in [&a, &b, &unheld] {
            lock_running(r).take();
        }
    }

    /// A release keeps the events it replaced (each ended) and lets go of them with its own: the
    /// renewal that finds the most kept hands them all back to be let go of at once.
    #[test]
    fn a_release_keeps_the_events_it_replaced_until_it_goes() {
        use crate::cl::fake::COMPLETE;
        fake::install();
        let (q, ev) = (EVENTS + 0x3D, COMPLETE + 0x11);
        let queue = q as cl_command_queue;
        let r = Running::new(ev, share(q), (std::ptr::null_mut(), std::ptr::null_mut()));
        let renew = || r.renew(ev as cl_event, queue, crate::cl::enqueued_mark());
        for _ in 1..Running::ENDED {
            assert_eq!(renew(), Some(Vec::new()));
        }
        assert_eq!(renew(), Some(vec![ev; Running::ENDED]), "all at once");
        assert_eq!(renew(), Some(Vec::new()));
        let released = || calls("release_event", ev as cl_command_queue);
        let before = released();
        let_go_of_by(&r, release_event);
        assert_eq!(released(), before + 2, "the kept one, then its own");
        assert!(
            lock_running(&r).is_none(),
            "nothing held: its kept events with it"
        );
    }

    /// Through the ordering's entry point: a renewing release hands the runtime nothing new, the
    /// pending work it took first now holds the newest release's event, which Direct3D's access
    /// asks about, and the replaced event's references are all let go of.
    #[test]
    fn direct3d_orders_itself_after_the_newest_release() {
        use crate::cl::fake::COMPLETE;
        const CONTEXT: usize = EVENTS + 0x56;
        fake::install();
        let q = (EVENTS + 0x5C) as cl_command_queue;
        let (first, second) = ((COMPLETE + 0x2C) as cl_event, (COMPLETE + 0x2E) as cl_event);
        let resource = taking_resource();
        pools()
            .get_or_insert_with(FxHashMap::default)
            .insert(CONTEXT, pool_of(CONTEXT, no_release, &[]));
        let release = |done, last| match order_d3d_after_next_access(
            &resource,
            CONTEXT as cl_context,
            (q, None, true),
            done,
            false,
            last,
        ) {
            NextAccess::Pending(untouched) => untouched,
            _ => panic!("left to Direct3D's next access"),
        };
        let last = release(first, None);
        let renewed = release(second, Some(last.clone()));
        assert!(Arc::ptr_eq(&last.0, &renewed.0), "the same pending work");
        let status = |ev: cl_event| calls("status", ev.cast());
        let asked = status(second);
        assert_eq!(touch(&resource), 1, "one pending work");
        assert_eq!(status(second), asked + 1, "the access asked of the newest");
        for ev in [first, second] {
            assert_eq!(
                calls("retain_event", ev.cast()),
                calls("release_event", ev.cast()),
                "every reference let go of"
            );
        }
        close_pool(CONTEXT as cl_context);
    }

    /// The pool's context for [`refused_after_a_sweep`].
    const SWEPT_CONTEXT: usize = EVENTS + 0x90;

    /// A platform whose semaphores cannot be released.
    unsafe extern "C" fn no_release(_: cl_semaphore_khr) -> cl_int {
        CL_OUT_OF_RESOURCES
    }

    /// A resource of dxcl's runtime with only the methods of `vtbl`.
    fn resource_of(
        vtbl: &'static dxcl_abi::interop::IDxclInteropResourceVtbl,
    ) -> ComPtr<IDxclInteropResource> {
        let resource = Box::into_raw(Box::new(IDxclInteropResource { lpVtbl: vtbl }));
        // SAFETY: a live COM object of a static vtable, never freed (its counts are no-ops).
        unsafe { ComPtr::from_owned(resource).unwrap() }
    }

    /// A runtime that refuses the pending work after a sweep of the pool found the release
    /// complete and let go of it (here on the caller's thread; in the layer, the sweep of another
    /// release's call on another thread).
    unsafe extern "system" fn refused_after_a_sweep(
        _this: *mut IDxclInteropResource,
        _wait: dxcl_abi::interop::PFN_DXCL_PENDING_WAIT,
        _order: dxcl_abi::interop::PFN_DXCL_PENDING_ORDER,
        _release: dxcl_abi::interop::PFN_DXCL_PENDING_RELEASE,
        _context: *mut c_void,
    ) -> HRESULT {
        if let Some(pool) = pools().as_mut().and_then(|m| m.get_mut(&SWEPT_CONTEXT)) {
            pool.pending.sweep();
        }
        E_FAIL
    }

    /// A release the runtime refuses after a sweep already let go of it: the sweep released the
    /// layer's event reference, the refusal does not release it a second time, and nothing is
    /// left to order. The queue stays the pool's until the pool closes.
    #[test]
    fn a_refused_release_already_swept_releases_its_event_once() {
        use crate::cl::fake::COMPLETE;
        use dxcl_abi::interop::IDxclInteropResourceVtbl;
        static RESOURCE_VTBL: IDxclInteropResourceVtbl = IDxclInteropResourceVtbl {
            AddPendingWorkOrdered: refused_after_a_sweep,
            ..IDxclInteropResourceVtbl::NOT_IMPLEMENTED
        };
        fake::install();
        let (ev, q) = (COMPLETE + 0x10, EVENTS + 0x91);
        let resource = resource_of(&RESOURCE_VTBL);
        pools()
            .get_or_insert_with(FxHashMap::default)
            .insert(SWEPT_CONTEXT, pool_of(SWEPT_CONTEXT, no_release, &[]));
        let ordered = order_d3d_after_next_access(
            &resource,
            SWEPT_CONTEXT as cl_context,
            (q as cl_command_queue, None, true),
            ev as cl_event,
            false,
            None,
        );
        assert!(
            matches!(ordered, NextAccess::Done),
            "swept: nothing left to order"
        );
        assert!(crate::cl::release_thread::drained_within(
            std::time::Duration::from_secs(5)
        ));
        let q = q as cl_command_queue;
        let event = |call| calls(call, ev as cl_command_queue);
        // The layer's reference for the release and the sweep's for its query, each released
        // once; none of the caller's, which it still holds.
        assert_eq!(
            (event("retain_event"), event("release_event")),
            (2, 2),
            "retained and released"
        );
        assert_eq!(
            (calls("retain", q), calls("release", q)),
            (1, 0),
            "the pool's"
        );
        close_pool(SWEPT_CONTEXT as cl_context);
        // Here, or by the releasing thread if it did not drain within its second.
        assert!(released(q as usize, 1, 5000), "at close");
    }

    /// The work a runtime below took (`took_pending`): each resource and the work's context.
    static TAKEN: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

    /// A runtime that keeps each pending work's context in [`TAKEN`] (its callbacks are known).
    unsafe extern "system" fn took_pending(
        this: *mut IDxclInteropResource,
        _wait: dxcl_abi::interop::PFN_DXCL_PENDING_WAIT,
        _order: dxcl_abi::interop::PFN_DXCL_PENDING_ORDER,
        _release: dxcl_abi::interop::PFN_DXCL_PENDING_RELEASE,
        context: *mut c_void,
    ) -> HRESULT {
        TAKEN
            .lock()
            .unwrap()
            .push((this as usize, context as usize));
        S_OK
    }

    /// A resource of a runtime that takes pending work into [`TAKEN`] and has no other method.
    fn taking_resource() -> ComPtr<IDxclInteropResource> {
        use dxcl_abi::interop::IDxclInteropResourceVtbl;
        static RESOURCE_VTBL: IDxclInteropResourceVtbl = IDxclInteropResourceVtbl {
            AddPendingWorkOrdered: took_pending,
            ..IDxclInteropResourceVtbl::NOT_IMPLEMENTED
        };
        resource_of(&RESOURCE_VTBL)
    }

    /// The contexts of the work taken for `resource` (tests run side by side), oldest first.
    fn taken_for(resource: &ComPtr<IDxclInteropResource>) -> Vec<*mut c_void> {
        let mut taken = TAKEN.lock().unwrap();
        let this = resource.as_ptr() as usize;
        let (mine, others) = taken.drain(..).partition(|&(r, _)| r == this);
        *taken = others;
        mine.into_iter()
            .map(|(_, work)| work as *mut c_void)
            .collect::<Vec<_>>()
    }

    /// A memory object `mem` of a D3D11 context `context` in the registry, shared as external
    /// memory of a resource of dxcl's runtime with the methods of `vtbl`, whose platform's
    /// external acquire and release are `external`; `context` gets an adaptive pool. Returns the
    /// resource's interop interface.
    fn registered(
        mem: usize,
        context: usize,
        vtbl: &'static dxcl_abi::interop::IDxclInteropResourceVtbl,
        external: super::super::cl::EnqueueMemFn,
    ) -> ComPtr<IDxclInteropResource> {
        use crate::registry::{self, ContextEntry, MemEntry};
        use dxcl_abi::sharing::{D3dVersion, ResourceKind};
        use dxcl_abi::IUnknown;
        let interop = resource_of(vtbl);
        // SAFETY: the same live object as its IUnknown (the interface starts with IUnknown's
        // methods); its counts are no-ops.
        let resource = unsafe { ComPtr::<IUnknown>::from_owned(interop.as_ptr().cast()) }.unwrap();
        let fns = super::super::cl::MemoryFns {
            acquire: external,
            release: external,
        };
        // Borrowed, as the layer's strategies hold it (the entry holds the counted reference):
        // a hand-off counts no reference of its own.
        // SAFETY: `resource` (the entry's) and `interop` hold the object for the whole test.
        let sharing = crate::strategy::external_memory::ExternalMemory::of_runtime(
            unsafe { interop.clone().into_borrowed() },
            fns,
        );
        pools()
            .get_or_insert_with(FxHashMap::default)
            .insert(context, pool_of(context, no_release, &[]));
        registry::with(|r| {
            r.contexts.insert(
                context,
                ContextEntry {
                    version: D3dVersion::D3D11,
                    validation: None,
                    device: None,
                    identity: 0,
                    user_sync: false,
                    properties: Vec::new(),
                    host_unified: false,
                },
            );
            r.mems.insert(
                mem,
                MemEntry {
                    context,
                    version: D3dVersion::D3D11,
                    kind: ResourceKind::Buffer,
                    app_resource: 0,
                    sharing,
                    validation: None,
                    resource,
                    key: (mem, 0),
                    subresource: 0,
                    acquire: Default::default(),
                    app_released: false,
                },
            )
        });
        interop
    }

    /// A release of one object alone (the lean path) whose ordering the runtime refuses to take
    /// as pending work of its own falls back as the general path does: Direct3D's next access
    /// waits for the release's end marker (here the runtime takes no work at all, so the call
    /// waits for it now), the queue is flushed on the application's thread, and every reference
    /// to the event is let go of; the object is released, and acquired again after; acquired or
    /// released twice, it is refused as the spec says.
    #[test]
    fn a_release_the_runtime_will_not_order_waits_for_its_next_access() {
        use dxcl_abi::interop::IDxclInteropResourceVtbl;
        use dxcl_abi::sharing::D3dVersion;
        /// Direct3D's work is done (not counted: [`work_done`]'s count is another test's).
        unsafe extern "system" fn done(_this: *mut IDxclInteropResource) -> HRESULT {
            S_OK
        }
        static RESOURCE_VTBL: IDxclInteropResourceVtbl = IDxclInteropResourceVtbl {
            QueryDeviceWorkDone: done,
            ..IDxclInteropResourceVtbl::NOT_IMPLEMENTED
        };
        const MEM: usize = 0xD0C2_0002;
        let (context, q) = (fake::SECOND_CONTEXT, fake::SECOND_QUEUE as cl_command_queue);
        fake::install();
        registered(MEM, context, &RESOURCE_VTBL, external);
        let mem = MEM as opencl_sys::cl_mem;
        let call = |release| alone(q, mem, release);
        for round in 1..=2 {
            call(false).unwrap();
            // Claimed again by this thread without the registry's lock (the object it claimed
            // last): the spec's refusal all the same.
            assert_eq!(call(false), Err(D3dVersion::D3D11.already_acquired()));
            call(true).unwrap();
            assert_eq!(call(true), Err(D3dVersion::D3D11.not_acquired()));
            // The watched end marker's flush, then the release's own.
            assert_eq!(calls("marker", q), round, "one end marker per release");
            assert_eq!(calls("flush", q), 2 * round, "and two flushes");
        }
        assert_eq!(
            external_calls(q),
            [2, 2],
            "the platform's external acquire and release, none for a refused call"
        );
        // The fake's commands of one queue are one handle: the two releases' events and the
        // two end markers watched for Direct3D's next access.
        let ev = (fake::SECOND_QUEUE - 1) as cl_event;
        assert_eq!(
            calls("release_event", ev.cast()),
            4 + calls("retain_event", ev.cast()),
            "every reference to the releases' events and end markers let go of"
        );
        crate::registry::with(|r| {
            r.mems.remove(&MEM);
            r.contexts.remove(&context);
        });
        close_pool(context as cl_context);
    }

    /// What a fake platform's external acquires and releases were asked, per queue (see
    /// [`an_idle_hand_off_makes_only_its_own_calls`]).
    static EXTERNAL: Mutex<Vec<(usize, [usize; 2])>> = Mutex::new(Vec::new());
    /// The event each fake external release of [`fake::OWN_QUEUE`] returns: a completed command of
    /// that queue.
    const RELEASE_EVENT: usize = fake::OWN_QUEUE - 1;

    /// The external acquires and releases of `q` so far.
    fn external_calls(q: cl_command_queue) -> [usize; 2] {
        let calls = EXTERNAL.lock().unwrap();
        calls
            .iter()
            .find(|&&(queue, _)| queue == q as usize)
            .map_or([0, 0], |&(_, n)| n)
    }

    /// The fake platform's external acquire and release, told apart by the event asked for: the
    /// layer asks for a release's (it orders Direct3D after it) and, with no event pointer from
    /// the application, not for an acquire's. Counted per queue; a release returns the command of
    /// the queue just below it, a completed one for the fake's own queues ([`RELEASE_EVENT`]).
    unsafe extern "C" fn external(
        q: cl_command_queue,
        _n: opencl_sys::cl_uint,
        _mems: *const opencl_sys::cl_mem,
        _waits: opencl_sys::cl_uint,
        _wait: *const cl_event,
        ev: *mut cl_event,
    ) -> cl_int {
        let release = !ev.is_null();
        let mut calls = EXTERNAL.lock().unwrap();
        let i = match calls.iter().position(|&(queue, _)| queue == q as usize) {
            Some(i) => i,
            None => {
                calls.push((q as usize, [0, 0]));
                calls.len() - 1
            }
        };
        calls[i].1[usize::from(release)] += 1;
        if release {
            // SAFETY: the caller's out pointer.
            unsafe { *ev = (q as usize - 1) as cl_event };
        }
        0
    }

    /// The first hand-off of `mem`, which retains the queue and asks the runtime: left out of
    /// scripts/idle-instructions.sh's count (entering it toggles the count, and entering
    /// [`idle_hand_off`] inside it toggles it back).
    #[inline(never)]
    fn first_hand_off(q: cl_command_queue, mem: opencl_sys::cl_mem) {
        idle_hand_off(q, mem);
    }

    /// One acquire and release of `mem` on `q`, with no wait list and no event asked for, then
    /// what `clFinish` records (`dxcl bench` times the three): a function of its own, whose
    /// instructions scripts/idle-instructions.sh counts.
    #[inline(never)]
    fn idle_hand_off(q: cl_command_queue, mem: opencl_sys::cl_mem) {
        for release in [false, true] {
            alone(q, mem, release).unwrap();
        }
        finished(q);
    }

    /// `clEnqueueAcquireD3D11ObjectsKHR` (or its release) of `mem` alone on `q`: one object, no
    /// wait list, no event asked for.
    fn alone(q: cl_command_queue, mem: opencl_sys::cl_mem, release: bool) -> Result<(), cl_int> {
        use dxcl_abi::sharing::{D3dVersion, Ext, Flavor};
        let ext = Ext {
            version: D3dVersion::D3D11,
            flavor: Flavor::Khr,
        };
        // SAFETY: one memory object of the layer's registry, no wait list, no event.
        unsafe {
            crate::api::share::acquire_release(
                ext,
                release,
                q,
                1,
                &mem,
                0,
                std::ptr::null(),
                std::ptr::null_mut(),
            )
        }
    }

    /// What the layer's `clFinish` of `q` records when the platform's returns `CL_SUCCESS`
    /// (api::queue::finish; its test checks that it does).
    fn finished(q: cl_command_queue) {
        crate::cl::finished(q, crate::cl::finish_ticket());
    }

    /// With `DXCL_IDLE_EVICT_KIB` set (scripts/idle-instructions.sh, timed), writes every line of
    /// that many KiB of fresh memory, so the next hand-off starts with caches that hold nothing of
    /// it: it fetches every line of code and data it touches again.
    #[inline(never)]
    fn evict_caches() {
        let Some(kib) = std::env::var("DXCL_IDLE_EVICT_KIB")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
        else {
            return;
        };
        let mut lines = vec![0u8; kib << 10];
        for line in lines.chunks_mut(64) {
            line[0] = 1;
        }
        std::hint::black_box(&lines);
    }

    /// How often the layer asked whether Direct3D's work on the resource is done.
    static WORK_DONE_ASKED: Mutex<usize> = Mutex::new(0);

    unsafe extern "system" fn work_done(_this: *mut IDxclInteropResource) -> HRESULT {
        *WORK_DONE_ASKED.lock().unwrap() += 1;
        S_OK
    }

    /// Direct3D touches `resource`: the runtime orders the access after each release it holds
    /// work of, then lets go of that work, as dxcl's runtime does. Returns how many it held.
    fn touch(resource: &ComPtr<IDxclInteropResource>) -> usize {
        let works = taken_for(resource);
        for &work in &works {
            // SAFETY: the work's context, alive until pending_release, which takes it back once.
            assert_eq!(unsafe { pending_order(work) }, S_OK);
            // SAFETY: as above; given back here, once.
            unsafe { pending_release(work) };
        }
        works.len()
    }

    /// An idle hand-off through the extension's entry points (acquire and release of one object
    /// on one in-order queue, with no wait list and no event asked for, Direct3D not touching the
    /// resource in between) makes only its own calls: the platform's external acquire and
    /// release. The release it replaces ended (the clFinish after it says so) and its event is
    /// let go of when Direct3D touches the resource.
    /// The runtime takes one pending work from the first release after Direct3D touched the
    /// resource, and later releases take its place: the runtime holds one, whatever the number of
    /// hand-offs. It asks the runtime whether Direct3D's work is done only on the first acquire
    /// after Direct3D touched the resource; it queries no queue, flushes and marks nothing; and
    /// every event reference it takes is let go of once Direct3D has touched the resource. On a
    /// CPU whose caches lost them, every line of code and data this path touches costs a fetch
    /// (docs/benchmarks.md, "A cold CPU on demand"): this keeps it to what it must do.
    #[test]
    fn an_idle_hand_off_makes_only_its_own_calls() {
        use dxcl_abi::interop::IDxclInteropResourceVtbl;
        static RESOURCE_VTBL: IDxclInteropResourceVtbl = IDxclInteropResourceVtbl {
            AddPendingWorkOrdered: took_pending,
            QueryDeviceWorkDone: work_done,
            ..IDxclInteropResourceVtbl::NOT_IMPLEMENTED
        };
        const MEM: usize = 0xD0C2_0001;
        let (context, q) = (fake::OWN_CONTEXT, fake::OWN_QUEUE as cl_command_queue);
        fake::install();
        let interop = registered(MEM, context, &RESOURCE_VTBL, external);
        let mem = MEM as opencl_sys::cl_mem;
        let asked = || *WORK_DONE_ASKED.lock().unwrap();
        first_hand_off(q, mem);
        assert_eq!(asked(), 1, "the first acquire asks");
        let released = || calls("release_event", (RELEASE_EVENT as cl_event).cast());
        // DXCL_IDLE_TIME set: each idle hand-off's wall time, for the script's medians.
        let timed = std::env::var_os("DXCL_IDLE_TIME").is_some();
        for round in 1..=8 {
            evict_caches();
            let before = released();
            let start = std::time::Instant::now();
            idle_hand_off(q, mem);
            let ns = start.elapsed().as_nanos();
            if timed {
                eprintln!("idle hand-off: {ns} ns");
            }
            assert_eq!(released(), before, "the replaced event kept");
            if round % 4 == 0 {
                assert_eq!(touch(&interop), 1, "one pending work for four hand-offs");
            }
        }
        assert_eq!(
            external_calls(q),
            [9, 9],
            "one external acquire and release each"
        );
        assert_eq!(
            asked(),
            2,
            "and the first acquire after Direct3D touched the resource"
        );
        assert_eq!(touch(&interop), 0, "none left");
        for call in ["marker", "flush", "status"] {
            assert_eq!(calls(call, q), 0, "{call}");
        }
        let ev = RELEASE_EVENT as cl_event;
        assert_eq!(
            calls("release_event", ev.cast()),
            9 + calls("retain_event", ev.cast()),
            "every reference to the releases' events let go of"
        );
        // A renewing release (seven of the eight idle ones: one follows Direct3D's touch) asks
        // nothing: the clFinish after the release it replaces says that one ended. Direct3D's
        // access asks of the newest.
        assert_eq!(calls("status", ev.cast()), 2, "one query per touch");

        crate::registry::with(|r| {
            r.mems.remove(&MEM);
            r.contexts.remove(&context);
        });
        close_pool(context as cl_context);
    }

    /// An adaptive release left to Direct3D's next access leaves the object untouched until the
    /// runtime runs its work, which it does when Direct3D next touches the resource. Only then
    /// does the next acquire on the same queue, after an acquire there with no wait list, know
    /// without asking the runtime that Direct3D's work is done; not after an acquire with a wait
    /// list (a failed event may have ended its wait), nor on another queue.
    #[test]
    fn an_object_is_untouched_until_the_runtime_runs_its_release() {
        use crate::cl::fake::COMPLETE;
        use crate::strategy::external::AcquiredOn;
        const CONTEXT: usize = EVENTS + 0xB0;
        fake::install();
        let (q, other) = (
            (EVENTS + 0xB2) as cl_command_queue,
            (EVENTS + 0xB4) as cl_command_queue,
        );
        // Complete: Direct3D's ordering finds nothing to wait for.
        let done = (COMPLETE + 0x38) as cl_event;
        let resource = taking_resource();
        pools()
            .get_or_insert_with(FxHashMap::default)
            .insert(CONTEXT, pool_of(CONTEXT, no_release, &[]));
        let release = |queue| {
            let next = order_d3d_after_next_access(
                &resource,
                CONTEXT as cl_context,
                (queue, None, true),
                done,
                false,
                None,
            );
            let NextAccess::Pending(untouched) = next else {
                panic!("the runtime took the work");
            };
            let work = taken_for(&resource).pop().unwrap();
            (untouched, work)
        };
        let on = AcquiredOn::default();
        assert!(!on.set(q, false), "the first acquire asks");
        let (untouched, work) = release(q);
        assert!(untouched.holds());
        on.released(q, Some(untouched.clone()));
        assert!(on.set(q, false), "untouched since the release");
        let last = on.renewable(q);
        assert!(
            last.is_some_and(|u| Arc::ptr_eq(&u.0, &untouched.0)),
            "the release the next one may take the place of"
        );
        assert!(on.renewable(q).is_none(), "once");
        assert!(!on.set(q, false), "no release since the last acquire");
        on.released(q, Some(untouched.clone()));
        assert!(on.set(q, false));
        assert!(
            on.renewable(other).is_none(),
            "not for a release on another queue"
        );
        // Direct3D's access: the runtime orders it, then lets go of the work.
        // SAFETY: the work's context, alive until pending_release, which takes it back once.
        assert_eq!(unsafe { pending_order(work) }, S_OK);
        assert!(!untouched.holds(), "touched");
        // SAFETY: as above; given back here, once.
        unsafe { pending_release(work) };
        assert!(!on.set(q, false), "Direct3D touched the resource");

        for (wait_list, queue) in [(true, q), (false, other)] {
            assert!(!on.set(q, wait_list));
            let (untouched, work) = release(q);
            on.released(q, Some(untouched.clone()));
            assert!(untouched.holds());
            assert!(
                !on.set(queue, false),
                "after an acquire with a wait list: {wait_list}"
            );
            // SAFETY: as above.
            unsafe { pending_release(work) };
        }
        // Untouched, but an acquire with a wait list: its release takes no one's place.
        assert!(!on.set(q, false));
        let (untouched, work) = release(q);
        on.released(q, Some(untouched.clone()));
        assert!(on.set(q, true), "untouched");
        assert!(on.renewable(q).is_none(), "after a wait list");
        // SAFETY: as above.
        unsafe { pending_release(work) };
        drop(on);
        close_pool(CONTEXT as cl_context);
        assert_eq!(
            (
                calls("retain_event", done.cast()),
                calls("release_event", done.cast())
            ),
            (5, 5),
            "each release's reference and the access's own, let go of once"
        );
    }

    /// The semaphore handles the fakes below were asked to release, and the runtime's ids it
    /// was asked to destroy, per test (each test uses ids and handles of its own).
    static RELEASED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    static DESTROYED: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    /// Set: the blocking release below returns (it waits for it, as NVIDIA's did for good).
    static UNBLOCKED: (Mutex<bool>, std::sync::Condvar) =
        (Mutex::new(false), std::sync::Condvar::new());
    /// The semaphore handle whose release blocks until [`UNBLOCKED`].
    const BLOCKING: usize = 0xB10C;

    unsafe extern "C" fn count_release(s: cl_semaphore_khr) -> cl_int {
        if s as usize == BLOCKING {
            let (lock, cv) = &UNBLOCKED;
            let mut open = lock.lock().unwrap();
            while !*open {
                open = cv.wait(open).unwrap();
            }
        }
        RELEASED.lock().unwrap().push(s as usize);
        0
    }

    unsafe extern "system" fn count_destroy(_: *mut IDxclInteropDevice, id: u64) -> HRESULT {
        DESTROYED.lock().unwrap().push(id);
        S_OK
    }

    /// A platform that makes no semaphore.
    unsafe extern "C" fn no_semaphore(
        _: cl_context,
        _: *const cl_semaphore_properties_khr,
        err: *mut cl_int,
    ) -> cl_semaphore_khr {
        // SAFETY: the layer passes a valid error pointer or null.
        if let Some(e) = unsafe { err.as_mut() } {
            *e = CL_OUT_OF_RESOURCES;
        }
        std::ptr::null_mut()
    }

    /// A platform that enqueues no semaphore command.
    unsafe extern "C" fn no_enqueue(
        _: cl_command_queue,
        _: opencl_sys::cl_uint,
        _: *const cl_semaphore_khr,
        _: *const u64,
        _: opencl_sys::cl_uint,
        _: *const cl_event,
        _: *mut cl_event,
    ) -> cl_int {
        CL_OUT_OF_RESOURCES
    }

    /// A pool of `context` with a semaphore per (id, handle, last command) of `semaphores`, on a
    /// device whose only method is DestroySharedSemaphore, and a platform whose only semaphore
    /// call is `release`.
    fn pool_of(
        context: usize,
        release: unsafe extern "C" fn(cl_semaphore_khr) -> cl_int,
        semaphores: &[(u64, usize, usize)],
    ) -> Pool {
        use dxcl_abi::interop::IDxclInteropDeviceVtbl;
        static DEVICE_VTBL: IDxclInteropDeviceVtbl = IDxclInteropDeviceVtbl {
            DestroySharedSemaphore: count_destroy,
            ..IDxclInteropDeviceVtbl::NOT_IMPLEMENTED
        };
        let device = Box::into_raw(Box::new(IDxclInteropDevice {
            lpVtbl: &DEVICE_VTBL,
        }));
        // SAFETY: a live COM object of a static vtable, never freed (its counts are no-ops).
        let device = unsafe { ComPtr::from_owned(device).unwrap() };
        let semaphores = semaphores
            .iter()
            .map(|&(id, cl, last)| {
                // The pool's reference to its last command, pinned as set_last pins it.
                let last = last as cl_event;
                events::retain(last).unwrap();
                events::pin(last);
                Shared {
                    id,
                    cl: cl as cl_semaphore_khr,
                    last,
                    broken: false,
                    stuck: false,
                }
            })
            .collect();
        Pool {
            validation: None,
            device,
            fns: SemaphoreFns {
                create: no_semaphore,
                wait: no_enqueue,
                signal: no_enqueue,
                release,
            },
            context: context as cl_context,
            mode: SyncMode::Adaptive,
            semaphores,
            side: Vec::new(),
            pending: Pending::default(),
            queues: Queues::default(),
        }
    }

    const SHORT: Bounds = Bounds {
        commands: std::time::Duration::from_millis(30),
        calls: std::time::Duration::from_millis(200),
    };

    /// A context released while a semaphore's last command has not ended (it waits for a user
    /// event that failed, or was never flushed): the close flushes that command's queue, waits
    /// no longer than its bound, and then leaves that semaphore and its event as they are,
    /// where releasing it would block (NVIDIA's clReleaseSemaphoreKHR did, for good). A semaphore
    /// whose last command completed is released and destroyed as before.
    #[test]
    fn closing_leaves_a_semaphore_whose_last_command_never_ends() {
        use crate::cl::fake::COMPLETE;
        fake::install();
        let (running, complete) = (EVENTS + 0xA0, COMPLETE + 0x30);
        let pool = pool_of(
            EVENTS + 0xA8,
            count_release,
            &[(0xA0, 0x5E_A0, running), (0xA1, 0x5E_A1, complete)],
        );
        let start = std::time::Instant::now();
        close_within(pool, SHORT);
        let took = start.elapsed();
        assert!(
            took < std::time::Duration::from_secs(2),
            "bounded: took {took:?}"
        );
        assert!(
            took >= SHORT.commands,
            "the running command was given its time: {took:?}"
        );
        // Each fake event is a command of the queue one above it.
        assert!(
            calls("flush", (running + 1) as cl_command_queue) >= 1,
            "the running command's queue flushed"
        );
        let released = RELEASED.lock().unwrap().clone();
        let destroyed = DESTROYED.lock().unwrap().clone();
        assert!(
            released.contains(&0x5E_A1) && destroyed.contains(&0xA1),
            "complete: closed"
        );
        assert!(
            !released.contains(&0x5E_A0) && !destroyed.contains(&0xA0),
            "running: left"
        );
        let event = |ev: usize| calls("release_event", ev as cl_command_queue);
        assert_eq!(
            (event(complete), event(running)),
            (1, 0),
            "the complete command's event released, the running one's kept"
        );
    }

    /// A platform release that never returns (a wake-up lost inside NVIDIA's OpenCL) holds up
    /// the application's clReleaseContext for the bound only: the releases run on a thread of the
    /// layer's, which finishes them if the platform ever returns.
    #[test]
    fn closing_returns_when_the_platform_release_blocks() {
        use crate::cl::fake::COMPLETE;
        fake::install();
        let pool = pool_of(
            EVENTS + 0xA9,
            count_release,
            &[(0xB0, BLOCKING, COMPLETE + 0x32)],
        );
        let start = std::time::Instant::now();
        close_within(pool, SHORT);
        let took = start.elapsed();
        assert!(
            took >= SHORT.calls && took < std::time::Duration::from_secs(2),
            "returned after the bound: {took:?}"
        );
        assert!(
            !RELEASED.lock().unwrap().contains(&BLOCKING),
            "still blocked"
        );
        let (lock, cv) = &UNBLOCKED;
        *lock.lock().unwrap() = true;
        cv.notify_all();
        let finished = (0..2000).any(|_| {
            let done = DESTROYED.lock().unwrap().contains(&0xB0);
            if !done {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
            done
        });
        assert!(
            finished,
            "the layer's thread finished the close once released"
        );
        assert!(RELEASED.lock().unwrap().contains(&BLOCKING));
    }

    /// The application's last context release lets go of every held release: the complete now,
    /// the rest from their completion callback.
    #[test]
    fn closing_lets_go_of_every_release() {
        use crate::cl::fake::COMPLETE;
        fake::install();
        let held = |ev: usize| held_on(EVENTS + 0x61, ev);
        let (done, running) = (held(COMPLETE + 4), held(EVENTS + 0x15));
        let mut p = Pending::default();
        p.hold(&done, 0xD as cl_command_queue, true);
        p.hold(&running, 0xD as cl_command_queue, true);
        p.close();
        assert!(lock_running(&done).is_none(), "complete: let go of at once");
        assert!(
            lock_running(&running).is_some(),
            "running: left to its callback"
        );
        crate::cl::events::fake_callbacks(EVENTS + 0x15, opencl_sys::CL_COMPLETE as cl_int);
        assert!(lock_running(&running).is_none());
        assert!(p.held.is_empty());
    }
}

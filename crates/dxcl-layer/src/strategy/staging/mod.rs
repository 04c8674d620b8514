//! Staging copy: a plain OpenCL object, filled from the resource at acquire and copied back at
//! release through a CPU-accessible Direct3D staging resource, with standard COM calls only.
//! Works with any Direct3D device (foreign ones included) and any OpenCL device; O(size).
//!
//! A release enqueues the read-back into the shadow and returns: an enqueue call must not wait
//! on its wait list (a single-threaded application that sets a user event of that list after the
//! call would deadlock). The bytes reach the resource once the read-back has run ([`WriteBack`]):
//! - dxcl's runtime (the interop interface): as the runtime's pending work, before Direct3D's
//!   next access to the resource (its destruction included), on the thread making that access, so
//!   Direct3D never sees stale bytes; or at the object's next acquire, whichever comes first.
//! - a foreign device: from the read-back's completion callback, on the platform's thread, under
//!   the device's multithread lock; the release's event waits for a user event set after that
//!   write, so once it completes Direct3D sees the data. With implicit synchronisation, whose
//!   later Direct3D calls a foreign device cannot be made to wait for, the release still waits
//!   for the write unless its wait list holds a user event still unset.
//!
//! The shadow ([`shadow`]) is pinned memory on a discrete GPU. An acquire packs the staging
//! resource into it in pieces of whole rows, on a few threads for a large one, and enqueues
//! each piece's copy to the memory object as soon as its bytes are in, so that the CPU's copies
//! and the bus's overlap ([`packed`]).
//!
//! The Direct3D half, beside it: [`staging_resource`] (the staging resource and its copies; the
//! external-copy and shadow-copy strategies make their one-subresource textures with it too),
//! [`packed`] (the pieces) and [`host_copy`] (the runtime's copies into registered host memory).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use opencl_sys::{cl_command_queue, cl_event, cl_int, cl_mem, CL_COMPLETE, CL_OUT_OF_RESOURCES};

use super::{Decision, HandOff, Made, Make, Materials, Request, SharingStrategy};
use crate::cl::copy::Region;
use crate::cl::{events, reaper};
use crate::core::tokens::ResourceKind;
use crate::d3d::com::ComPtr;
use crate::d3d::device_lock::DeviceLock;
use crate::d3d::interop;
use packed::Piece;
use shadow::Shadow;
use staging_resource::{Place, Staging};

mod host_copy;
mod packed;
mod shadow;
pub(super) mod staging_resource;

/// The pieces an acquire's copy to the device is cut into (see [`packed`]): large
/// enough that each command's own cost stays small beside its bytes.
const ACQUIRE_PIECE: usize = 8 << 20;
use dxcl_abi::interop::IDxclInteropResource;

pub(super) struct StagingCopy {
    decision: Decision,
    kind: ResourceKind,
    copy: Arc<Copy>,
    /// dxcl's runtime: the resource's interop interface, whose pending work writes a release's
    /// bytes back. `None` on a foreign device (and with `DXCL_INTEROP=0`).
    interop: Option<ComPtr<IDxclInteropResource>>,
    /// The last acquire's copy into the memory object (retained), which the release waits for:
    /// it may run on another queue.
    last_upload: Mutex<Option<usize>>,
}

/// The staging resource and the shadow it is packed into.
struct Side {
    /// Dropped before `shadow`: the runtime forgets the shadow's memory before it goes.
    d3d: Staging,
    shadow: Shadow,
    /// The shadow is still to be pinned (at the first acquire, which has a queue to map it).
    pin: bool,
}

/// What a write-back needs, shared with the work that runs it.
struct Copy {
    device: DeviceLock,
    /// Locked only while `device` is held, so a thread holding `device` never waits for it (the
    /// releasing thread's [`Copy::detach_shadow`] excepted: while it holds it, it waits only
    /// for the unmap on the layer's own queue).
    staging: Mutex<Side>,
    /// The last release's write-back, until it runs; taken under `device` by whoever runs it.
    write_back: Mutex<Option<WriteBack>>,
    /// The next release's [`WriteBack::release`].
    releases: AtomicU64,
    /// dxcl's runtime: a pending-work item that runs the newest write-back is queued and has not
    /// started (one is enough, however many releases come before Direct3D's next access).
    queued: AtomicBool,
}

/// A release's bytes on their way to the resource: the read-back into the shadow, then the
/// write from the shadow into the resource.
struct WriteBack {
    /// Which release of the object it is (counted per object, never reused, unlike event
    /// handles): a runner that waited for one write-back's read-back runs that one only.
    release: u64,
    read: ReadBack,
    /// Foreign devices: the user event the release's event waits for, set once the bytes are in
    /// the resource (owned).
    written: Option<cl_event>,
    /// Foreign devices, once the memory object is gone: a counted reference that keeps the
    /// resource alive until the write.
    keep: Option<ComPtr>,
    /// Foreign devices, once the memory object is gone: the copy itself, alive until the write
    /// (the read-back's completion callback holds it weakly; see `StagingCopy::schedule`).
    copy: Option<Arc<Copy>>,
}

/// The read-back into the shadow.
enum ReadBack {
    /// Its event (owned).
    Pending(cl_event),
    /// It ended with this status and its event is gone (dxcl's runtime, after the application's
    /// last release: see `StagingCopy::let_go`).
    Ended(cl_int),
}

// SAFETY: the events are reference-counted OpenCL handles, usable from any thread; the COM
// reference is a free-threaded Direct3D resource (see ComPtr).
unsafe impl Send for WriteBack {}

impl WriteBack {
    /// Ends it: the bytes are in the resource (`CL_COMPLETE`), or `status` says why not. Lets go
    /// of what it holds (the read-back's event, the resource reference) before the release's
    /// event can complete: the returned [`Written`] completes it.
    fn finish(mut self, status: cl_int) -> Written {
        let written = self.written.take();
        let copy = self.copy.take();
        drop(self);
        Written {
            event: written.map(|ev| (ev, status)),
            copy,
        }
    }
}

/// A foreign device's write-back is over: the user event the release's event waits for, and the
/// status to set. Set last, once the write-back's holder has let go of the Direct3D objects: an
/// application that waits for the release and then lets go of everything must find the
/// device's reference count back where it was (contexts' "queue outlives context" on DXVK).
#[must_use]
struct Written {
    event: Option<(cl_event, cl_int)>,
    /// The write-back's own reference to the copy (see [`WriteBack::copy`]): perhaps the last,
    /// so dropped by the caller, outside the copy's own methods, before the event is set.
    copy: Option<Arc<Copy>>,
}

impl Written {
    const NONE: Written = Written {
        event: None,
        copy: None,
    };

    fn signal(self) {
        drop(self.copy);
        if let Some((ev, status)) = self.event {
            events::set_user_status(ev, status);
            events::release(ev);
        }
    }
}

impl Drop for WriteBack {
    fn drop(&mut self) {
        if let ReadBack::Pending(ev) = self.read {
            events::release(ev);
        }
        if let Some(ev) = self.written.take() {
            // Dropped without running (nothing will run it any more): the release's event fails
            // rather than waits forever.
            events::set_user_status(ev, CL_OUT_OF_RESOURCES);
            events::release(ev);
        }
    }
}

/// Makes [`StagingCopy`]s.
pub(super) struct Maker;

impl Make for Maker {
    fn make(&self, req: &Request, with: Materials<'_>, decision: Decision) -> Made {
        let interop = with.interop;
        let mem = req.create_plain(None)?;
        let staging = Staging::new(
            req.version,
            req.kind,
            req.resource,
            req.subresource,
            req.extent,
            req.pixel_size(),
            Place::Host,
        );
        let Ok(staging) = staging else {
            crate::cl::release_mem(mem);
            return Err(CL_OUT_OF_RESOURCES.into());
        };
        let len = staging.layout().len();
        let side = Side {
            shadow: Shadow::heap(len),
            d3d: staging,
            pin: shadow::wants_pinned(req.host_unified, len),
        };
        let strategy = StagingCopy {
            decision,
            kind: req.kind,
            copy: Arc::new(Copy {
                device: side.d3d.device_lock(),
                staging: Mutex::new(side),
                write_back: Mutex::new(None),
                releases: AtomicU64::new(0),
                queued: AtomicBool::new(false),
            }),
            // SAFETY: the memory object's entry holds the counted reference to the resource
            // for as long as this strategy lives (the write-back's pending work does not use
            // it); the specs let the memory object add exactly one reference.
            interop: interop.map(|i| unsafe { i.com.clone().into_borrowed() }),
            last_upload: Mutex::new(None),
        };
        Ok((mem, Arc::new(strategy)))
    }
}

impl StagingCopy {
    fn last_upload(&self) -> MutexGuard<'_, Option<usize>> {
        self.last_upload.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hands `w` to what runs it: the runtime's pending work, else the read-back's completion
    /// callback. Returns it back when neither takes it.
    fn schedule(&self, w: WriteBack) -> Result<(), ()> {
        let ReadBack::Pending(read) = w.read else {
            unreachable!("a release's write-back starts with its read-back pending")
        };
        let foreign = w.written.is_some();
        // What runs it runs this release's write-back only: it may run late, after the next
        // acquire ran this one and the next release scheduled its own.
        let release = w.release;
        // The acquire ran the previous one; one left over could never run now.
        drop(self.copy.write_back().replace(w));
        if let (Some(i), false) = (&self.interop, foreign) {
            // Direct3D's next access runs the newest write-back, whose read-back it waits for:
            // an acquire that found the previous one pending left it there (see `acquire`).
            if self.copy.queued.swap(true, Ordering::AcqRel) {
                return Ok(());
            }
            let copy = self.copy.clone();
            let run = Box::new(move || {
                copy.queued.store(false, Ordering::Release);
                copy.run_write_back(None).signal()
            });
            // The read-back is not flushed yet (the release flushes at the end of its call): this
            // hand-over must not wait for a Direct3D access that may already be running the
            // write-back. dxcl's runtime only locks its list of pending work to add to it, and
            // runs that work outside the lock.
            return interop::run_before_next_access(i, run).map_err(|_| {
                self.copy.queued.store(false, Ordering::Release);
            });
        }
        // Weak: the platform may run the callback long after the read-back completed (NVIDIA
        // does), when the release or the next acquire has run the write-back already and the
        // application has let go of everything; a strong reference would keep the staging
        // resource, and with it the device, referenced until then. While the write-back waits,
        // the memory object holds the copy, or, once it is gone, the write-back itself (Drop).
        let copy = Arc::downgrade(&self.copy);
        // The callback's own reference (released after it runs).
        events::retain(read).map_err(drop)?;
        // The handle as a number, compared only: the callback takes the read-back's status from
        // the platform and never queries or waits for the event (see events::when_complete).
        let handle = read as usize;
        events::when_complete(
            read,
            Box::new(move |status| {
                crate::core::exit::in_callback(move || {
                    let Some(copy) = copy.upgrade() else {
                        // Written back, and nothing holds the copy any more.
                        return;
                    };
                    copy.read_back_ended(handle as cl_event, status, reaper::release_event);
                    let written = copy.run_write_back(Some(release));
                    // Perhaps the last reference to the staging resource and the device's
                    // context, once the memory object is gone (see Written).
                    drop(copy);
                    written.signal();
                })
            }),
        )
        .map_err(|_| events::release(read))
    }
}

impl Copy {
    /// The read-back `read` has completed with `status` (its completion callback's): the pending
    /// write-back, if it is still that one's, keeps the status and lets go of the event. The
    /// status comes from the callback, not from a query of the event: rusticl runs the callback
    /// inside a clWaitForEvents holding the event's lock, where a query never returns.
    /// `release` lets go of the event: on the releasing thread from a completion callback (it
    /// may be the context's last holder), on the calling thread from the application's own.
    fn read_back_ended(&self, read: cl_event, status: cl_int, release: fn(cl_event)) {
        let mut pending = self.write_back();
        if let Some(w) = pending.as_mut() {
            if matches!(w.read, ReadBack::Pending(ev) if ev == read) {
                w.read = ReadBack::Ended(status);
                release(read);
            }
        }
    }

    fn staging(&self) -> MutexGuard<'_, Side> {
        self.staging.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The application is done with the memory object while a write-back waits for Direct3D's
    /// next access: a pinned shadow's buffer holds the context, which must not wait for that
    /// access, so the bytes move to the heap. Runs in the application's last release of the
    /// memory object or on the layer's releasing thread (see [`Shadow::detach`]).
    fn detach_shadow(&self) {
        let mut side = self.staging();
        side.d3d.detach_host();
        side.shadow.detach();
    }

    fn write_back(&self) -> MutexGuard<'_, Option<WriteBack>> {
        self.write_back.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs the pending write-back, if any (with `only`, if it is that release's): waits for its
    /// read-back (holding no lock of ours unless the caller does), then writes the shadow into
    /// the resource under the device lock. Whoever comes first does it; the others find nothing
    /// left. The caller completes the release's event with the returned [`Written`].
    fn run_write_back(&self, only: Option<u64>) -> Written {
        let (release, read) = {
            let pending = self.write_back();
            let Some(w) = pending
                .as_ref()
                .filter(|w| only.is_none_or(|r| r == w.release))
            else {
                return Written::NONE;
            };
            // Retained under the slot's lock: the thread that runs it releases its reference.
            match w.read {
                ReadBack::Pending(ev) if events::retain(ev).is_ok() => (w.release, Some(ev)),
                ReadBack::Ended(_) => (w.release, None),
                ReadBack::Pending(_) => return Written::NONE,
            }
        };
        if let Some(read) = read {
            // The release flushed the read-back's queue on its own thread; this may be another.
            events::wait_flushed(read);
            events::release(read);
        }
        let _device = self.device.hold();
        // The write-back whose read-back was waited for above, or nothing. While this thread
        // waited for the device lock, another may have run that one and the object's next
        // release scheduled its own, whose read-back may still be running: taken here, that
        // one wrote nothing and failed the release's event with the read-back's status (a late
        // completion callback did it under load; the marker after that failed user event
        // then never completed on PoCL 3.1, and `threads` hung with DXCL_INTEROP=0).
        let Some(w) = self.write_back().take_if(|w| w.release == release) else {
            return Written::NONE;
        };
        let status = match w.read {
            ReadBack::Pending(ev) => events::status(ev),
            ReadBack::Ended(status) => status,
        };
        // A failed read-back has no bytes to write: its failure is the release's.
        let written = if status == CL_COMPLETE as cl_int {
            let mut side = self.staging();
            let Side { d3d, shadow, .. } = &mut *side;
            match d3d.upload(shadow.as_slice()) {
                Ok(()) => CL_COMPLETE as cl_int,
                Err(_) => CL_OUT_OF_RESOURCES,
            }
        } else {
            status.min(-1)
        };
        // Releases the read-back's event and the resource reference it kept, if any.
        w.finish(written)
    }
}

impl StagingCopy {
    /// dxcl's runtime, with the previous release's write-back still pending and its read-back
    /// complete: no Direct3D access came since the release (the runtime runs the write-back
    /// before any), so the resource's bytes are the memory object's own, which nothing touched
    /// since. The acquire then copies nothing in, and the write-back stays pending for Direct3D's
    /// next access. A read-back still running, or failed, takes the full way (the acquire must
    /// not wait on the release's wait list, and a failed one wrote nothing).
    fn unchanged_since_release(&self) -> bool {
        if self.interop.is_none() {
            return false;
        }
        let pending = self.copy.write_back();
        match pending.as_ref().map(|w| &w.read) {
            Some(ReadBack::Pending(ev)) => events::status(*ev) == CL_COMPLETE as cl_int,
            Some(ReadBack::Ended(status)) => *status == CL_COMPLETE as cl_int,
            None => false,
        }
    }
}

impl SharingStrategy for StagingCopy {
    fn decision(&self) -> Decision {
        self.decision
    }

    fn acquire(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        let ev = if self.unchanged_since_release() {
            // Nothing to copy: see `unchanged_since_release`. The acquire's event still follows
            // its wait list.
            events::marker(h.queue, h.wait)?
        } else {
            // The previous release's bytes go into the resource before it is read.
            self.copy.run_write_back(None).signal();
            let _device = self.copy.device.hold();
            let mut side = self.copy.staging();
            if std::mem::take(&mut side.pin) {
                side.shadow.pin(h.context, h.queue);
            }
            let Side { d3d, shadow, .. } = &mut *side;
            let bytes = shadow.as_mut_slice();
            // SAFETY: the shadow's memory stays put until `detach_shadow` (which detaches it
            // first) or the drop of `Side`, whose `d3d` goes before its `shadow` (field order).
            unsafe { d3d.attach_host(bytes.as_mut_ptr(), bytes.len()) };
            upload_in_pieces(h.queue, mem, self.kind, &mut side, h.wait)?
        };
        // Kept past the call, for the release and for Drop (which keeps the shadow alive while
        // the copy runs): it pins its queue (events::pin).
        events::pin(ev);
        // The release's read-back waits for this copy, perhaps from another queue: "To use event
        // objects that refer to commands enqueued in a command-queue as event objects to wait on
        // by commands enqueued in a different command-queue, the application must call a clFlush
        // ... of the command-queue where the commands that refer to these event objects are
        // enqueued." The layer makes that wait, so it flushes (rusticl never ran a release on a
        // second queue otherwise), here on the thread that enqueued: a flush of this queue from
        // the releasing thread could meet a blocking call on it, whose wait rusticl 22.3 then
        // loses (docs/conformance.md).
        crate::cl::flush(h.queue);
        if let Some(old) = self.last_upload().replace(ev as usize) {
            events::release_pinned(old as cl_event);
        }
        // A second reference for the call's event, if a marker makes it: taken last, so a failed
        // retain still leaves the copy kept above (the shadow must outlive it).
        h.follow(ev)
    }

    fn release(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        let foreign = self.interop.is_none();
        // Foreign devices: the release's event stands for the write too.
        let written = if foreign {
            Some(events::user_event(h.context)?)
        } else {
            None
        };
        let read = {
            let _device = self.copy.device.hold();
            let mut side = self.copy.staging();
            let mut wait = h.release_wait();
            let upload = self.last_upload().map(|e| e as cl_event);
            // The acquire flushed its copy's queue (see `acquire`).
            wait.extend(upload);
            let whole = side.d3d.layout().whole();
            let at = side.shadow.as_mut_slice().as_mut_ptr();
            // SAFETY: the whole shadow (see enqueue_copy's contract: the write-back owns the
            // `Copy` holding it until the read-back ran).
            unsafe { enqueue_copy(h.queue, mem, self.kind, at, &whole, true, &wait) }
                .and_then(|ev| behind_marker(h.queue, ev))
        };
        let read = match read {
            Ok(read) => read,
            // NVIDIA refuses a command behind one terminated by a failed event with
            // CL_DEVICE_NOT_FOUND (HandOff's release of imported objects meets it too): the
            // read-back is terminated with the acquire's copy, and the write-back then writes
            // nothing. The release itself succeeds, as the core rules have it.
            Err(opencl_sys::CL_DEVICE_NOT_FOUND) => events::terminated(
                h.context,
                h.queue,
                opencl_sys::CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
            )?,
            Err(e) => {
                if let Some(ev) = written {
                    events::release(ev);
                }
                return Err(e);
            }
        };
        // Sent on from this thread, which enqueued it, once the call's last command is in
        // (one flush for the call, ~1.4 µs of NVIDIA's each), also if the call fails after this,
        // and before any later step of the call that may block (HandOff::flush_if_due): the
        // write-back that waits for it polls (events::wait_flushed) and may run on another
        // thread, inside a Direct3D call, as soon as it is scheduled below.
        h.flush_at_end();
        // The read-back follows the acquire's copy: its event is no longer needed.
        if let Some(old) = self.last_upload().take() {
            events::release_pinned(old as cl_event);
        }
        // The call's event waits for the read-back, and on a foreign device for the write: one
        // reference for the hand-off; the write-back owns the ones from creation.
        let after = written.unwrap_or(read);
        let retained = events::retain(after);
        if retained.is_ok() {
            h.wait_for(after);
        }
        let w = WriteBack {
            // Relaxed: only its uniqueness matters; it is compared under the slot's lock.
            release: self.copy.releases.fetch_add(1, Ordering::Relaxed),
            read: ReadBack::Pending(read),
            written,
            keep: None,
            copy: None,
        };
        let scheduled = self.schedule(w);
        // Implicit synchronisation on a foreign device: "any calls to Direct3D 1x made after the
        // call to clEnqueueReleaseD3D1xObjects will not start executing until after all events in
        // event_wait_list are complete and all work already submitted to command_queue completes
        // execution". Nothing can make a foreign device's later calls wait, so the call waits for
        // the write, unless the wait list holds a user event still unset: only the application
        // can set it, perhaps on this thread after the call, and an enqueue call must not wait
        // for it. Nothing scheduled the write: it runs here.
        if scheduled.is_err() || (foreign && h.sync && !h.waits_for_unset_user_event()) {
            h.flush_if_due();
            self.copy.run_write_back(None).signal();
            // The write another thread took first (the read-back's completion callback) may still
            // be running: it holds the device lock until it is done, as an acquire relies on too.
            drop(self.copy.device.hold());
        }
        retained
    }

    fn released(&self, _h: &mut HandOff<'_>, _done: cl_event) -> Result<(), cl_int> {
        // The write-back is scheduled already, after the read-back the call's event covers.
        Ok(())
    }

    /// The application's last release: on every device it waits up to [`READ_BACK_WAIT`] for
    /// the last release's read-back (see below). On dxcl's runtime, a pending write-back waits
    /// for Direct3D's next access, which may be far off (or never come), and its read-back's
    /// event holds the application's context, which must die with its objects. From the
    /// application's last release on, the read-back's completion lets go of that event, keeping
    /// only its status for the write. The write itself stays Direct3D's pending work: a
    /// completion callback must not take the device lock or make Direct3D calls, whose pending
    /// work may wait for other events (the platform may complete none while its callback thread
    /// waits) or for a thread that waits for this one.
    fn let_go(&self, _mem: cl_mem, _acquired: bool) {
        let read = {
            let pending = self.copy.write_back();
            // Retained under the slot's lock (the callback's reference).
            match pending.as_ref().map(|w| &w.read) {
                Some(ReadBack::Pending(ev)) if events::retain(*ev).is_ok() => Some(*ev),
                Some(ReadBack::Ended(_)) => None,
                _ => return,
            }
        };
        // The write-back keeps the shadow until Direct3D's next access; a pinned one holds the
        // context, so its bytes move to the heap once the read-back has written them.
        let Some(read) = read else {
            if self.interop.is_some() {
                let _device = self.copy.device.hold();
                self.copy.detach_shadow();
            }
            return;
        };
        let status = events::wait_within(read, READ_BACK_WAIT);
        if self.interop.is_none() {
            // A foreign device: the read-back's completion callback writes the bytes and lets go
            // of what it holds; only the wait (for NVIDIA's image release, below) is this call's.
            events::release(read);
            return;
        }
        // Ended (the application waited for the release, or the wait below saw it end): the
        // event and the pinned shadow go here, on the application's thread, not on a callback's
        // and the releasing thread's time. An application that then lets go of its queue and its
        // resource finds the context and the Direct3D device's references gone when its calls
        // return (contexts' "queue outlives context" with a pinned shadow). And the memory
        // object reaches the platform's release with no command of the layer's on it in flight:
        // NVIDIA's driver 580 could hang in the release of an image whose read-back was still
        // running (`textures` with staging, "all N subresources"), as plain OpenCL never did
        // with a `clFinish` before its releases (`probe releases` mode 2, docs/gpu.md).
        if events::has_ended(status) {
            self.copy.read_back_ended(read, status, events::release);
            events::release(read);
            let _device = self.copy.device.hold();
            self.copy.detach_shadow();
            return;
        }
        let copy = self.copy.clone();
        let pinned = {
            let _device = self.copy.device.hold();
            self.copy.staging().shadow.is_pinned()
        };
        // The handle as a number: the callback only compares it (its own reference keeps the
        // event alive); the status is the callback's.
        let handle = read as usize;
        let run = Box::new(move |status| {
            crate::core::exit::in_callback(|| {
                copy.read_back_ended(handle as cl_event, status, reaper::release_event);
                if pinned {
                    // Not on the platform's thread: a copy of the whole shadow, and the buffer's
                    // release may end the context. A weak reference: the write-back may run
                    // (and the last reference to the resource's Direct3D objects go) first.
                    let copy = Arc::downgrade(&copy);
                    crate::cl::release_thread::later(Box::new(move || {
                        if let Some(copy) = copy.upgrade() {
                            copy.detach_shadow();
                        }
                    }));
                }
            })
        });
        if events::when_complete(read, run).is_err() {
            events::release(read);
        }
    }
}

impl Drop for StagingCopy {
    /// The memory object is gone for the application, perhaps still acquired with the
    /// acquire's copy pending (it may wait on a user event), or released with its write-back
    /// pending: what those commands read or write lives on in `Copy` until they are done.
    fn drop(&mut self) {
        {
            let _device = self.copy.device.hold();
            let mut pending = self.copy.write_back();
            if let Some(w) = pending.as_mut().filter(|w| w.written.is_some()) {
                // A foreign device: the completion callback writes into the resource after the
                // memory object's reference is gone; one of its own keeps the resource alive,
                // and the write-back keeps the copy (a cycle the write-back's end breaks).
                w.keep = self.copy.staging().d3d.resource_reference();
                w.copy = Some(self.copy.clone());
            }
        }
        let Some(upload) = self.last_upload().take().map(|e| e as cl_event) else {
            return;
        };
        if events::is_done(upload) {
            events::release_pinned(upload);
            return;
        }
        let copy = self.copy.clone();
        match events::when_complete(upload, Box::new(move |_| drop(copy))) {
            // The callback's reference pins the queue now: this one's pin goes.
            Ok(()) => events::unpin(upload),
            // No callback: leak the shadow rather than free what a command still reads, or
            // block on a wait list that may never complete.
            Err(keep) => std::mem::forget(keep),
        }
    }
}

/// The acquire's copy: Direct3D's staging resource into the shadow, in pieces, each enqueued to
/// the memory object as soon as its bytes are in; one event for them all.
fn upload_in_pieces(
    queue: cl_command_queue,
    mem: cl_mem,
    kind: ResourceKind,
    side: &mut Side,
    wait: &[cl_event],
) -> Result<cl_event, cl_int> {
    let pieces = side.d3d.layout().pieces(ACQUIRE_PIECE);
    let several = pieces.len() > 1;
    let Side { d3d, shadow, .. } = side;
    let at = shadow.as_mut_slice().as_mut_ptr();
    let mut copies = Vec::with_capacity(pieces.len());
    let mut failed = None;
    // Map waits for the D3D work on the resource, so the copy is synchronised even under user
    // sync (where that is allowed, not required).
    let downloaded = d3d.download(shadow.as_mut_slice(), &pieces, |p| {
        if failed.is_some() {
            return;
        }
        // SAFETY: the piece's bytes are in and no longer written (see enqueue_copy's contract
        // for how long they stay).
        match unsafe { enqueue_copy(queue, mem, kind, at, p, false, wait) } {
            Ok(ev) => {
                copies.push(ev);
                if several {
                    // Sent to the device now, so it copies this piece while the next lands (on
                    // this thread: see `acquire` on flushes from other threads).
                    crate::cl::flush(queue);
                }
            }
            Err(e) => failed = Some(e),
        }
    });
    let done = match (downloaded, failed) {
        // Direct3D would not copy or map its staging resource: "CL_OUT_OF_RESOURCES if there is
        // a failure to allocate resources required by the OpenCL implementation on the device".
        (Err(_), _) => Err(CL_OUT_OF_RESOURCES),
        (Ok(()), Some(e)) => Err(e),
        // A marker even for one piece: the layer keeps no event of a copy (see behind_marker).
        (Ok(()), None) => events::marker(queue, &copies),
    };
    for ev in copies {
        events::release(ev);
    }
    done
}

/// How long the application's last release of a memory object waits for its read-back (see
/// `let_go`): long enough for any copy the layer makes; a read-back held up longer is waiting
/// for something of the application's (a user event it sets later, perhaps on this thread),
/// and is watched by a completion callback instead.
const READ_BACK_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// A marker after the copy `ev`, whose event goes here: what the layer keeps, waits for and puts
/// completion callbacks on. NVIDIA's driver 580 can hang in the application's
/// `clReleaseMemObject` of an image while another thread lets go of the last reference to a
/// completed read of that image whose completion callback ran: plain OpenCL does, in `probe
/// releases` mode 0 (tests/gpu/probe.c); with the callbacks on markers only and the reads'
/// events released at once (mode 5) it did not in 3000 rounds (docs/gpu.md).
fn behind_marker(queue: cl_command_queue, ev: cl_event) -> Result<cl_event, cl_int> {
    let marker = events::marker(queue, &[ev]);
    // The command holds its event until it completes: this release is never the last one on a
    // platform's or the releasing thread, only here or inside the platform.
    events::release(ev);
    marker
}

/// Enqueues the copy of one piece between a memory object and its shadow at `shadow` (tightly
/// packed).
///
/// # Safety
/// `shadow` holds the whole packed subresource and stays alive (and its piece untouched) until
/// the copy completes: the read-back's write-back owns the `Copy` holding it until it ran, and
/// the next acquire runs that write-back before it reuses the shadow; the acquire's copy is
/// waited for by the release's read-back, and kept alive by Drop.
unsafe fn enqueue_copy(
    queue: cl_command_queue,
    mem: cl_mem,
    kind: ResourceKind,
    shadow: *mut u8,
    piece: &Piece,
    read: bool,
    wait: &[cl_event],
) -> Result<cl_event, cl_int> {
    // SAFETY: the piece's bytes lie inside the shadow (caller's contract).
    let host: *mut std::ffi::c_void = unsafe { shadow.add(piece.bytes.start) }.cast();
    let region = match kind {
        ResourceKind::Buffer => Region::Buffer {
            offset: piece.origin[0],
            len: piece.bytes.len(),
        },
        // The piece is its region's texels, tightly packed (pitches 0).
        _ => Region::Image {
            origin: piece.origin,
            region: piece.region,
            row_pitch: 0,
            slice_pitch: 0,
        },
    };
    // SAFETY: `host` holds the piece's bytes for as long as the copy runs (caller's contract).
    unsafe { crate::cl::copy::enqueue(queue, mem, region, host, read, wait) }
}

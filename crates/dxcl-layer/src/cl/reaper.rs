//! Releases that must not run on a platform's callback thread.
//!
//! A completion callback may hold the last reference to an event or queue once the application
//! has released its own; dropping it there may destroy the queue and the context, in the
//! platform's callback thread. The OpenCL API specification (clSetEventCallback) already leaves
//! creating contexts or command-queues and blocking calls in a callback undefined; destroying
//! them there is no safer, since a platform that joins its callback thread when a context goes
//! would wait for itself. Callbacks hand such references to one thread of the layer's, which
//! releases them in order.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

use opencl_sys::{cl_command_queue, cl_event};

/// A reference to let go of (as numbers: handles are usable from any thread).
enum Reference {
    Event(usize),
    /// An event whose reference pins its queue (events::pin).
    PinnedEvent(usize),
    Queue(usize),
}

impl Reference {
    fn release(self) {
        match self {
            Reference::Event(ev) => super::events::release(ev as cl_event),
            Reference::PinnedEvent(ev) => super::events::release_pinned(ev as cl_event),
            Reference::Queue(q) => super::release_queue(q as cl_command_queue),
        }
    }
}

/// The releasing thread's inbox, started on first use; None when no thread could be started.
fn inbox() -> Option<&'static Mutex<Sender<Reference>>> {
    static INBOX: OnceLock<Option<Mutex<Sender<Reference>>>> = OnceLock::new();
    INBOX
        .get_or_init(|| {
            let (tx, rx) = channel::<Reference>();
            std::thread::Builder::new()
                .name("dxcl-release".into())
                .spawn(move || {
                    for r in rx {
                        // A panic must not end the thread with references left in its inbox.
                        let _ =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| r.release()));
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

fn later(r: Reference) {
    let sent = match inbox() {
        Some(tx) => tx.lock().unwrap_or_else(|p| p.into_inner()).send(r),
        None => Err(std::sync::mpsc::SendError(r)),
    };
    // No thread: release here, as the layer did before it had one.
    if let Err(std::sync::mpsc::SendError(r)) = sent {
        r.release();
    }
}

/// Releases `ev` on the layer's releasing thread (for completion callbacks).
pub(crate) fn release_event(ev: cl_event) {
    if !ev.is_null() {
        later(Reference::Event(ev as usize));
    }
}

/// Releases `queue` on the layer's releasing thread (for completion callbacks).
pub(crate) fn release_queue(queue: cl_command_queue) {
    if !queue.is_null() {
        later(Reference::Queue(queue as usize));
    }
}

/// Releases `ev` and then its queue's pin ([`super::events::pin`]) on the layer's releasing thread.
pub(crate) fn release_pinned_event(ev: cl_event) {
    if !ev.is_null() {
        later(Reference::PinnedEvent(ev as usize));
    }
}

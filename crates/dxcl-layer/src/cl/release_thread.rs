//! The layer's releasing thread: releases that must not run on a platform's callback thread.
//!
//! A completion callback may hold the last reference to an event or queue once the application
//! has released its own; dropping it there may destroy the queue and the context, in the
//! platform's callback thread. The OpenCL API specification (clSetEventCallback) already leaves
//! creating contexts or command-queues and blocking calls in a callback undefined; destroying
//! them there is no safer, since a platform that joins its callback thread when a context goes
//! would wait for itself. Callbacks hand such releases to one thread of the layer's, which makes
//! them in order. What a release does is the caller's ([`super::reaper`], [`super::events`]):
//! this module knows only the thread.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

/// A release to make; handles travel in it as numbers (they are usable from any thread).
pub(crate) type Release = Box<dyn FnOnce() + Send>;

/// The releasing thread's inbox, started on first use; None when no thread could be started.
fn inbox() -> Option<&'static Mutex<Sender<Release>>> {
    static INBOX: OnceLock<Option<Mutex<Sender<Release>>>> = OnceLock::new();
    INBOX
        .get_or_init(|| {
            let (tx, rx) = channel::<Release>();
            std::thread::Builder::new()
                .name("dxcl-release".into())
                .spawn(move || {
                    for release in rx {
                        // A panic must not end the thread with releases left in its inbox.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(release));
                    }
                })
                .ok()
                .map(|_| Mutex::new(tx))
        })
        .as_ref()
}

/// Makes `release` on the layer's releasing thread.
pub(crate) fn later(release: Release) {
    let sent = match inbox() {
        Some(tx) => tx.lock().unwrap_or_else(|p| p.into_inner()).send(release),
        None => Err(std::sync::mpsc::SendError(release)),
    };
    // No thread: release here, as the layer did before it had one.
    if let Err(std::sync::mpsc::SendError(release)) = sent {
        release();
    }
}

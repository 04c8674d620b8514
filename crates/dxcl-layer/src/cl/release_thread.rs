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

/// The releasing thread's name.
const THREAD: &str = "dxcl-release";

/// A release to make; handles travel in it as numbers (they are usable from any thread).
pub(crate) type Release = Box<dyn FnOnce() + Send>;

/// The releasing thread's inbox, started on first use; None when no thread could be started.
fn inbox() -> Option<&'static Mutex<Sender<Release>>> {
    static INBOX: OnceLock<Option<Mutex<Sender<Release>>>> = OnceLock::new();
    INBOX
        .get_or_init(|| {
            let (tx, rx) = channel::<Release>();
            std::thread::Builder::new()
                .name(THREAD.into())
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

/// Waits up to `timeout` for the releasing thread to make every release handed to it before this
/// call: for a release that must come after them (a queue's after its events'), made on the
/// caller's thread. True when they were made (or there is no thread, so they were made already);
/// false on the releasing thread itself, which would wait for itself, or past the timeout.
pub(crate) fn drained_within(timeout: std::time::Duration) -> bool {
    if std::thread::current().name() == Some(THREAD) {
        return false;
    }
    let (tx, rx) = std::sync::mpsc::sync_channel::<()>(1);
    later(Box::new(move || {
        let _ = tx.send(());
    }));
    rx.recv_timeout(timeout).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
    use std::sync::Arc;
    use std::time::Duration;

    /// A wait for the thread returns once what was handed to it before has run; on the thread
    /// itself it does not wait.
    #[test]
    fn draining_waits_for_earlier_releases() {
        let made = Arc::new(AtomicBool::new(false));
        let flag = made.clone();
        later(Box::new(move || {
            std::thread::sleep(Duration::from_millis(30));
            flag.store(true, SeqCst);
        }));
        assert!(drained_within(Duration::from_secs(5)));
        assert!(made.load(SeqCst), "the earlier release ran first");
        let (tx, rx) = std::sync::mpsc::channel();
        later(Box::new(move || {
            let _ = tx.send(drained_within(Duration::from_secs(5)));
        }));
        let on_thread = rx.recv_timeout(Duration::from_secs(5));
        assert_eq!(on_thread, Ok(false), "no wait for itself");
    }
}

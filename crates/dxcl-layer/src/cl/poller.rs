//! The layer's polling thread: runs a poll function while it reports work left, sleeping when
//! there is none. What it polls is the caller's ([`super::events::when_ended`]): this module
//! knows only the thread and its pace.

use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

/// A poll: does what it can now, and says how many things it still waits for.
pub(crate) type Poll = fn() -> usize;

/// The first pause between polls: a small command ends within tens of microseconds.
const FIRST_PAUSE: Duration = Duration::from_micros(50);
/// The longest pause: a command that runs long is let go of within 5 ms of its end (a waiter
/// for it polls on its own, and the context's release settles what has ended).
const LONGEST_PAUSE: Duration = Duration::from_millis(5);

struct Wake {
    /// The poll to run, set by [`wake`] and taken by the thread.
    poll: Mutex<Option<Poll>>,
    changed: Condvar,
}

fn wake_word() -> Option<&'static Wake> {
    static WAKE: OnceLock<Option<Wake>> = OnceLock::new();
    WAKE.get_or_init(|| {
        std::thread::Builder::new()
            .name("dxcl-poll".into())
            .spawn(run)
            .ok()
            .map(|_| Wake {
                poll: Mutex::new(None),
                changed: Condvar::new(),
            })
    })
    .as_ref()
}

/// Makes the thread run `poll` until it reports nothing left; nothing where no thread could
/// be started.
pub(crate) fn wake(poll: Poll) {
    if let Some(w) = wake_word() {
        *w.poll.lock().unwrap_or_else(|p| p.into_inner()) = Some(poll);
        w.changed.notify_one();
    }
}

fn run() {
    // Started inside `wake_word`'s initialisation, which this call waits for.
    let Some(w) = wake_word() else {
        return;
    };
    loop {
        let poll = {
            let mut g = w.poll.lock().unwrap_or_else(|p| p.into_inner());
            loop {
                if let Some(poll) = g.take() {
                    break poll;
                }
                g = w.changed.wait(g).unwrap_or_else(|p| p.into_inner());
            }
        };
        let mut pause = FIRST_PAUSE;
        let mut left = usize::MAX;
        while !crate::core::exit::exiting() {
            // A panic must not end the thread with work left to poll.
            let now = std::panic::catch_unwind(poll).unwrap_or(left);
            if now == 0 {
                break;
            }
            // Back to the first pause whenever something ended.
            pause = if now < left {
                FIRST_PAUSE
            } else {
                (pause * 2).min(LONGEST_PAUSE)
            };
            left = now;
            std::thread::sleep(pause);
        }
    }
}

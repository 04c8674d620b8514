//! A one-shot signal between threads: set once (by a platform callback, say), waited for by
//! anyone, with the wait giving up once the process has begun to exit (when callbacks no longer
//! run: see `crate::in_callback`).

use std::sync::{Condvar, Mutex};
use std::time::Duration;

#[derive(Default)]
pub(crate) struct Signal {
    set: Mutex<bool>,
    changed: Condvar,
}

impl Signal {
    pub fn set(&self) {
        *self.set.lock().unwrap_or_else(|p| p.into_inner()) = true;
        self.changed.notify_all();
    }

    pub fn is_set(&self) -> bool {
        *self.set.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Blocks until the signal is set, or until the process exits (checked every 10 ms).
    pub fn wait(&self) {
        self.wait_nudging(|| {});
    }

    /// As [`Signal::wait`], calling `nudge` (without the signal's lock) every 10 ms while it is
    /// not set: for a setter that may never come on its own (a completion callback the platform
    /// does not make), which `nudge` can stand in for.
    pub fn wait_nudging(&self, nudge: impl Fn()) {
        loop {
            let set = self.set.lock().unwrap_or_else(|p| p.into_inner());
            if *set || crate::exiting() {
                return;
            }
            let (set, _) = match self.changed.wait_timeout(set, Duration::from_millis(10)) {
                Ok(r) => r,
                Err(p) => p.into_inner(),
            };
            if *set {
                return;
            }
            drop(set);
            nudge();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_waiter_wakes_when_set_from_another_thread() {
        let s = Arc::new(Signal::default());
        assert!(!s.is_set());
        let setter = {
            let s = s.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(30));
                s.set();
            })
        };
        s.wait();
        assert!(s.is_set());
        setter.join().unwrap();
        s.wait(); // set stays set
    }

    /// A setter that never comes: the nudge stands in for it.
    #[test]
    fn a_nudge_can_set_what_nobody_else_will() {
        let s = Signal::default();
        let nudges = std::sync::atomic::AtomicU32::new(0);
        s.wait_nudging(|| {
            if nudges.fetch_add(1, std::sync::atomic::Ordering::Relaxed) == 2 {
                s.set();
            }
        });
        assert!(s.is_set());
        assert_eq!(nudges.load(std::sync::atomic::Ordering::Relaxed), 3);
    }
}

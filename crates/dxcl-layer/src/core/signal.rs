//! A one-shot signal between threads: set once (by a platform callback, say), waited for by
//! anyone, with the wait giving up once the process has begun to exit (when callbacks no longer
//! run: see `super::exit::in_callback`).

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
        let mut set = self.set.lock().unwrap_or_else(|p| p.into_inner());
        while !*set && !super::exit::exiting() {
            set = match self.changed.wait_timeout(set, Duration::from_millis(10)) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
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
}

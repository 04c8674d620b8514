//! Where the Windows side's own threads wait: its callback thread (`NEXT_CALLBACK`) and its
//! servers of stand-ins' calls (`NEXT_REQUEST`) spend their lives inside a unix call, waiting.
//!
//! At process exit Wine ends every other thread. Wine 10 does it with `pthread_exit` on the
//! thread's current stack (Wine 8.0 first switched to the thread's exit frame): a forced unwind
//! runs up through whatever frames the thread is in. A `catch_unwind` on the way catches it, and
//! glibc then aborts ("FATAL: exception not rethrown"); a frame with something to drop would run
//! its destructor halfway through a wait (a `Condvar` wait's guard unlocks a mutex it no longer
//! holds). So a waiting thread sleeps in [`until`], whose frame holds nothing to drop and catches
//! nothing, on a futex word; the work between sleeps (`try_once`) runs to its end in frames of its
//! own, with the panic guard, and never blocks but for a short lock.

use std::sync::atomic::{AtomicU32, Ordering};

/// A futex word counting the events a waiter may be waiting for.
pub struct Signal(AtomicU32);

impl Signal {
    pub const fn new() -> Self {
        Signal(AtomicU32::new(0))
    }

    /// Wakes one waiter: call after making the event visible (under or after its lock).
    pub fn notify_one(&self) {
        self.0.fetch_add(1, Ordering::Release);
        self.futex(libc::FUTEX_WAKE, 1);
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
        self.0.fetch_add(1, Ordering::Release);
        self.futex(libc::FUTEX_WAKE, i32::MAX as u32);
    }

    fn futex(&self, op: libc::c_int, value: u32) {
        // SAFETY: the word is an AtomicU32 that lives in a static for the process's life; FUTEX_WAIT
        // and FUTEX_WAKE read it atomically and take no other memory (no timeout).
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.0.as_ptr(),
                op | libc::FUTEX_PRIVATE_FLAG,
                value,
                std::ptr::null::<libc::timespec>(),
            );
        }
    }
}

/// Tries `try_once` until it gives a status, sleeping on `signal` between tries. `try_once` reads
/// the unix call's parameters at `args` and gives `None` while there is nothing to hand out.
///
/// This frame owns nothing with a destructor and has no landing pad, so a forced unwind (Wine
/// ending the thread at exit) passes through it; `try_once` is not running then, unless the
/// thread is ended in the instant between two sleeps.
#[inline(never)]
pub fn until(
    signal: &Signal,
    args: *mut libc::c_void,
    try_once: fn(*mut libc::c_void) -> Option<u32>,
) -> u32 {
    loop {
        // Read before trying: an event made visible after the try changes the word, and the
        // sleep below then returns at once.
        let seen = signal.0.load(Ordering::Acquire);
        if let Some(status) = try_once(args) {
            return status;
        }
        signal.futex(libc::FUTEX_WAIT, seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static SIGNAL: Signal = Signal::new();
    static READY: AtomicUsize = AtomicUsize::new(0);

    fn take(_: *mut libc::c_void) -> Option<u32> {
        READY
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .ok()
            .map(|_| 7)
    }

    #[test]
    fn a_waiter_sleeps_until_notified_and_misses_no_event() {
        let waiters: Vec<_> = (0..3)
            .map(|_| std::thread::spawn(|| until(&SIGNAL, std::ptr::null_mut(), take)))
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            waiters.iter().all(|w| !w.is_finished()),
            "nothing was ready"
        );
        for _ in 0..3 {
            READY.fetch_add(1, Ordering::AcqRel);
            SIGNAL.notify_one();
        }
        for w in waiters {
            assert_eq!(w.join().unwrap(), 7);
        }
        assert_eq!(READY.load(Ordering::Acquire), 0);
    }
}

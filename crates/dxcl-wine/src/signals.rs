//! Wine's signal handlers, kept. Wine runs on its handlers: SIGQUIT ends a thread (at process exit
//! every other thread gets one), SIGUSR1 suspends one, SIGSEGV and friends become Windows
//! exceptions. A host OpenCL platform may replace them: LLVM (which PoCL and Mesa load) installs
//! its crash handlers for SIGQUIT, SIGSEGV, SIGUSR1 and others the first time it is used, each
//! reset to the default once it has run; at exit, Wine's SIGQUITs then race to threads whose
//! handler is already the default, and the process dies of SIGQUIT (status 131) about one run in
//! two. So the handlers Wine had when the host library was first opened are put back after a
//! call of the host's that replaced them. LLVM installs its handlers once, so once they have
//! been put back no further check is made.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// The signals LLVM takes (its "kill", "interrupt" and "info" signals); Wine handles all but a few.
const SIGNALS: [libc::c_int; 15] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGUSR2,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGABRT,
    libc::SIGFPE,
    libc::SIGBUS,
    libc::SIGSEGV,
    libc::SIGQUIT,
    libc::SIGSYS,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGUSR1,
];

struct Saved([libc::sigaction; SIGNALS.len()]);

// SAFETY: plain data (handler addresses and masks) read only after it is written once.
unsafe impl Sync for Saved {}
// SAFETY: as above.
unsafe impl Send for Saved {}

static SAVED: OnceLock<Saved> = OnceLock::new();
static RESTORED: AtomicBool = AtomicBool::new(false);

fn current(sig: libc::c_int) -> libc::sigaction {
    // SAFETY: all-zero is a valid sigaction to be overwritten.
    let mut a: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a query (no new action) into our own struct.
    unsafe { libc::sigaction(sig, std::ptr::null(), &mut a) };
    a
}

/// Records Wine's handlers: call before the host library is first opened.
pub fn save() {
    SAVED.get_or_init(|| Saved(SIGNALS.map(current)));
}

/// After a call into the host: Wine's handlers back if the host replaced them (checked by
/// SIGQUIT's, until they have been put back once).
pub fn keep_wines() {
    if RESTORED.load(Ordering::Relaxed) {
        return;
    }
    let Some(saved) = SAVED.get() else { return };
    let quit = SIGNALS
        .iter()
        .position(|s| *s == libc::SIGQUIT)
        .unwrap_or(0);
    if current(libc::SIGQUIT).sa_sigaction == saved.0[quit].sa_sigaction {
        return;
    }
    for (sig, action) in SIGNALS.iter().zip(&saved.0) {
        // SAFETY: an action the process had for this signal when we saved it.
        unsafe { libc::sigaction(*sig, action, std::ptr::null_mut()) };
    }
    RESTORED.store(true, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" fn marker(_: libc::c_int) {}

    #[test]
    fn a_replaced_quit_handler_is_put_back() {
        save();
        // SAFETY: a handler of our own for SIGQUIT, in place of what was there (test process).
        unsafe { libc::signal(libc::SIGQUIT, marker as *const () as libc::sighandler_t) };
        keep_wines();
        let quit = SIGNALS.iter().position(|s| *s == libc::SIGQUIT).unwrap();
        assert_eq!(
            current(libc::SIGQUIT).sa_sigaction,
            SAVED.get().unwrap().0[quit].sa_sigaction
        );
    }
}

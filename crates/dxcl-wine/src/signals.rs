//! Wine's signal handlers, kept in place while host libraries run in the process.
//!
//! Wine handles signals of its own: faults become Windows exceptions, and at exit the server stops
//! each remaining thread with SIGQUIT. LLVM (PoCL compiles kernels with it) installs one-shot
//! handlers (`SA_RESETHAND`) for the crash signals, SIGQUIT among them, the first time it needs
//! them; a process whose SIGQUIT handler is LLVM's then dies of that SIGQUIT at exit, after the
//! program has returned (most runs of the conformance programs under Wine), and faults no longer
//! reach Windows exception handlers. So the handlers Wine has installed are saved before the host's
//! libraries load, and put back after every unix call where a host library replaced them.

use std::sync::OnceLock;

use libc::{c_int, sigaction, SIG_DFL, SIG_IGN};

/// The signals Wine's ntdll handles on x86_64 Linux.
const SIGNALS: [c_int; 11] = [
    libc::SIGINT,
    libc::SIGFPE,
    libc::SIGABRT,
    libc::SIGSEGV,
    libc::SIGILL,
    libc::SIGBUS,
    libc::SIGTRAP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGSYS,
];

struct Saved(Vec<(c_int, sigaction)>);
// SAFETY: plain data (handler addresses, flags, masks) read by any thread, never written after
// the first save.
unsafe impl Sync for Saved {}
// SAFETY: as above.
unsafe impl Send for Saved {}

static SAVED: OnceLock<Saved> = OnceLock::new();

/// The current action of `signal`, `None` if it cannot be read.
fn current(signal: c_int) -> Option<sigaction> {
    // SAFETY: an all-zero sigaction is a valid value of the plain C struct.
    let mut action: sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only reads the current one into `action`.
    (unsafe { libc::sigaction(signal, std::ptr::null(), &mut action) } == 0).then_some(action)
}

/// Saves Wine's handlers (those installed, not default or ignored); only the first call counts.
pub fn save() {
    SAVED.get_or_init(|| {
        Saved(
            SIGNALS
                .iter()
                .filter_map(|&s| current(s).map(|a| (s, a)))
                .filter(|(_, a)| a.sa_sigaction != SIG_DFL && a.sa_sigaction != SIG_IGN)
                .collect(),
        )
    });
}

/// Puts back each saved handler that something replaced since.
pub fn restore() {
    let Some(saved) = SAVED.get() else {
        return;
    };
    for (signal, action) in &saved.0 {
        if current(*signal).is_some_and(|now| now.sa_sigaction != action.sa_sigaction) {
            // SAFETY: the action Wine had installed for this signal, as read by `current`.
            unsafe { libc::sigaction(*signal, action, std::ptr::null_mut()) };
        }
    }
}

//! Callbacks into the program. The host's OpenCL calls them on its own threads, where Windows code
//! must not run; each is queued here and run by the Windows side's callback thread, which waits in
//! `next` (unix call `NEXT_CALLBACK`) for the next one.
//!
//! - Event, destructor, build and SVM-free callbacks are queued with copies of their arguments
//!   and the host's thread goes on: the specs promise no order between them and the call that
//!   triggered them, and waiting would deadlock a callback that makes OpenCL calls.
//! - A native kernel is the command itself: its thread waits until the program's function ran.
//! - The context's error callback is queued with copies of its text and private bytes.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::c_void;
use std::sync::{Condvar, Mutex, MutexGuard};

use crate::unixlib::{
    Callback, CB_CONTEXT_NOTIFY, CB_EVENT, CB_NATIVE_KERNEL, CB_OBJECT, CB_SVM_FREE,
};
use crate::wait::Signal;

/// One callback for the Windows thread, with the memory its arguments point to.
struct Pending {
    id: u64,
    kind: u32,
    function: u64,
    args: [u64; 4],
    /// Bytes the arguments point into (the context callback's text and private data), freed once
    /// the callback ran.
    _bytes: Vec<Box<[u8]>>,
    /// Pointers the arguments point into (the SVM pointer list), likewise.
    _pointers: Box<[u64]>,
}

#[derive(Default)]
struct State {
    next_id: u64,
    queue: VecDeque<Pending>,
    /// Callbacks handed to the Windows thread and not yet reported done, by id.
    running: BTreeMap<u64, Pending>,
    /// Ids of callbacks someone waits for (native kernels), until done.
    waited: Vec<u64>,
}

struct Queue {
    state: Mutex<State>,
    /// Signalled when a callback is reported done.
    finished: Condvar,
}

static QUEUE: Queue = Queue {
    state: Mutex::new(State {
        next_id: 0,
        queue: VecDeque::new(),
        running: BTreeMap::new(),
        waited: Vec::new(),
    }),
    finished: Condvar::new(),
};

/// Signalled when a callback is queued: the callback thread sleeps on it (`wait::until`).
pub static QUEUED: Signal = Signal::new();

fn lock() -> MutexGuard<'static, State> {
    // A panic while holding the lock leaves plain data behind: carry on with it.
    QUEUE.state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Queues a callback. A native kernel's (`kind`) caller then waits for it: its id is marked
/// waited for under the same lock, so a report of it done cannot come first.
fn push(
    kind: u32,
    function: u64,
    args: [u64; 4],
    bytes: Vec<Box<[u8]>>,
    pointers: Box<[u64]>,
) -> MutexGuard<'static, State> {
    let mut s = lock();
    s.next_id += 1;
    let id = s.next_id;
    if kind == CB_NATIVE_KERNEL {
        s.waited.push(id);
    }
    s.queue.push_back(Pending {
        id,
        kind,
        function,
        args,
        _bytes: bytes,
        _pointers: pointers,
    });
    QUEUED.notify_one();
    s
}

/// Unix call `NEXT_CALLBACK`, one try: reports `done` finished (once), then hands out the next
/// callback if one is queued. False when none is: the caller sleeps on [`QUEUED`] and tries again.
pub fn try_next(p: &mut Callback) -> bool {
    let mut s = lock();
    if p.done != 0 {
        s.running.remove(&p.done);
        if s.waited.contains(&p.done) {
            s.waited.retain(|id| *id != p.done);
            QUEUE.finished.notify_all();
        }
        p.done = 0;
    }
    let Some(pending) = s.queue.pop_front() else {
        return false;
    };
    p.id = pending.id;
    p.kind = pending.kind;
    p.function = pending.function;
    p.args = pending.args;
    s.running.insert(pending.id, pending);
    true
}

/// What the program passed for one callback: its function and its `user_data`.
pub struct Target {
    pub function: u64,
    pub user_data: u64,
}

/// A `Target` handed to the host as `user_data`; the trampolines below take it back.
pub fn into_user_data(t: Target) -> *mut c_void {
    Box::into_raw(Box::new(t)).cast()
}

/// Frees a `Target` the host will never call back with (the registering call failed).
///
/// # Safety
/// `p` came from [`into_user_data`] and no trampoline has or will receive it.
pub unsafe fn forget(p: *mut c_void) {
    // SAFETY: the caller's contract: we own the box.
    drop(unsafe { Box::from_raw(p.cast::<Target>()) });
}

/// # Safety
/// `p` came from [`into_user_data`]; `once` says whether this is its last use.
unsafe fn target(p: *mut c_void, once: bool) -> (u64, u64) {
    let t = p.cast::<Target>();
    // SAFETY: the caller's contract: a live Target.
    let r = unsafe { ((*t).function, (*t).user_data) };
    if once {
        // SAFETY: last use; the box is ours.
        drop(unsafe { Box::from_raw(t) });
    }
    r
}

/// For `clSetMemObjectDestructorCallback`, `clSetContextDestructorCallback`, build, compile, link
/// and program-release callbacks: `(handle, user_data)`, called once.
pub unsafe extern "C" fn object(handle: *mut c_void, user_data: *mut c_void) {
    // SAFETY: the host passes back the user_data we gave it, once.
    let (f, ud) = unsafe { target(user_data, true) };
    drop(push(
        CB_OBJECT,
        f,
        [handle as u64, ud, 0, 0],
        vec![],
        Box::new([]),
    ));
}

/// For `clSetEventCallback`: `(event, status, user_data)`, called once.
pub unsafe extern "C" fn event(ev: *mut c_void, status: i32, user_data: *mut c_void) {
    // SAFETY: the host passes back the user_data we gave it, once.
    let (f, ud) = unsafe { target(user_data, true) };
    drop(push(
        CB_EVENT,
        f,
        [ev as u64, status as i64 as u64, ud, 0],
        vec![],
        Box::new([]),
    ));
}

/// For `clEnqueueSVMFree`: `(queue, count, pointers, user_data)`, called once; the pointer list
/// is copied for the Windows thread.
pub unsafe extern "C" fn svm_free(
    queue: *mut c_void,
    count: u32,
    pointers: *mut *mut c_void,
    user_data: *mut c_void,
) {
    // SAFETY: the host passes back the user_data we gave it, once.
    let (f, ud) = unsafe { target(user_data, true) };
    let copy: Box<[u64]> = if pointers.is_null() || count == 0 {
        Box::new([])
    } else {
        // SAFETY: the host passes `count` pointers, 8 bytes each on this target.
        unsafe { std::slice::from_raw_parts(pointers.cast::<u64>(), count as usize) }.into()
    };
    let at = if copy.is_empty() {
        0
    } else {
        copy.as_ptr() as u64
    };
    drop(push(
        CB_SVM_FREE,
        f,
        [queue as u64, count as u64, at, ud],
        vec![],
        copy,
    ));
}

/// For a context's error callback: `(errinfo, private_info, cb, user_data)`, called any number of
/// times; the `Target` lives as long as the context (freed by [`context_gone`]).
pub unsafe extern "C" fn context_notify(
    errinfo: *const i8,
    private_info: *const c_void,
    cb: usize,
    user_data: *mut c_void,
) {
    // SAFETY: the host passes back the user_data we gave it, which lives while the context does.
    let (f, ud) = unsafe { target(user_data, false) };
    let text: Box<[u8]> = if errinfo.is_null() {
        Box::new([0])
    } else {
        // SAFETY: the host passes a NUL-terminated string.
        unsafe { std::ffi::CStr::from_ptr(errinfo) }
            .to_bytes_with_nul()
            .into()
    };
    let private: Box<[u8]> = if private_info.is_null() || cb == 0 {
        Box::new([])
    } else {
        // SAFETY: the host passes `cb` bytes of private information.
        unsafe { std::slice::from_raw_parts(private_info.cast::<u8>(), cb) }.into()
    };
    let (t, p) = (text.as_ptr() as u64, private.as_ptr() as u64);
    let p = if private.is_empty() { 0 } else { p };
    drop(push(
        CB_CONTEXT_NOTIFY,
        f,
        [t, p, cb as u64, ud],
        vec![text, private],
        Box::new([]),
    ));
}

/// The host's destructor callback of a context with an error callback: frees its `Target`.
pub unsafe extern "C" fn context_gone(_context: *mut c_void, user_data: *mut c_void) {
    // SAFETY: the host calls this once, after the last error callback; the box is ours.
    unsafe { forget(user_data) };
}

/// A native kernel's function: the program's function pointer stands in the first 8 bytes of the
/// argument block the host copied (special.rs puts it there); runs it and waits until it ran.
pub unsafe extern "C" fn native_kernel(args: *mut c_void) {
    // SAFETY: the host's copy of the block special.rs built: the function, then the program's arguments.
    let f = unsafe { args.cast::<u64>().read_unaligned() };
    // SAFETY: as above: the program's arguments follow.
    let rest = unsafe { args.cast::<u8>().add(8) } as u64;
    let mut s = push(CB_NATIVE_KERNEL, f, [rest, 0, 0, 0], vec![], Box::new([]));
    let id = s.next_id;
    while s.waited.contains(&id) {
        s = QUEUE.finished.wait(s).unwrap_or_else(|e| e.into_inner());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queued_callbacks_come_out_in_order_with_their_arguments() {
        let ud = into_user_data(Target {
            function: 0x1000,
            user_data: 0x2000,
        });
        // SAFETY: a Target we just made, passed once, as the host would.
        unsafe { event(0x30 as *mut c_void, -5, ud) };
        let ud = into_user_data(Target {
            function: 0x1001,
            user_data: 0x2001,
        });
        // SAFETY: as above.
        unsafe { object(0x40 as *mut c_void, ud) };
        let mut p = Callback {
            done: 0,
            id: 0,
            kind: 0,
            pad: 0,
            function: 0,
            args: [0; 4],
        };
        assert!(try_next(&mut p));
        assert_eq!((p.kind, p.function), (CB_EVENT, 0x1000));
        assert_eq!(p.args[..3], [0x30, (-5i64) as u64, 0x2000]);
        p.done = p.id;
        assert!(try_next(&mut p));
        assert_eq!(
            (p.kind, p.function, p.args[0], p.args[1]),
            (CB_OBJECT, 0x1001, 0x40, 0x2001)
        );
        p.done = p.id;
        // The last one is reported done; none is left to hand out.
        assert!(!try_next(&mut p));
        assert_eq!(p.done, 0);
        let s = lock();
        assert!(s.running.is_empty() && s.queue.is_empty());
    }
}

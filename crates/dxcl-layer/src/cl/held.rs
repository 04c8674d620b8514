//! The ledger of the platform's objects that the layer itself holds references to: the events,
//! command queues, memory objects and semaphores it made or retained and has not let go of, or
//! handed to the application. Any of them keeps its context alive, so once an application has
//! released every object of a context, the ledger must fall back to what it held before, or the
//! layer is what keeps the context: the check that `tests/conformance/contexts.c` makes through
//! [`dxclHeldObjects`] on every platform, and on NVIDIA the proof that a context which is never
//! destroyed is the platform's loss, not the layer's.
//!
//! A reference is recorded where the layer obtains it ([`took`]: its creations and retains, and
//! the application's queue releases that it holds back) and struck where it goes ([`let_go`]:
//! the layer's releases, and [`handed_over`] where a new object becomes the application's). A
//! release of a handle the ledger never recorded changes nothing.

use rustc_hash::FxHashMap;
use std::ffi::c_char;
use std::sync::Mutex;

/// What kind of object a reference is to (its value: its place in [`NAMES`] and [`counts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Event,
    Queue,
    Memory,
    Semaphore,
}

const NAMES: [&str; 4] = ["events", "command queues", "memory objects", "semaphores"];

/// Handle → (its kind, references the layer holds).
static HELD: Mutex<Option<FxHashMap<usize, (Kind, usize)>>> = Mutex::new(None);

fn ledger<R>(f: impl FnOnce(&mut FxHashMap<usize, (Kind, usize)>) -> R) -> R {
    let mut g = HELD.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(FxHashMap::default))
}

/// One reference more to `handle` (null: nothing).
pub(crate) fn took<T>(kind: Kind, handle: *mut T) {
    if !handle.is_null() {
        ledger(|m| m.entry(handle as usize).or_insert((kind, 0)).1 += 1);
    }
}

/// `ev`, a new event of the layer's own command, recorded; null (no event asked for) passes
/// through.
pub(crate) fn new_event(ev: opencl_sys::cl_event) -> opencl_sys::cl_event {
    took(Kind::Event, ev);
    ev
}

/// One reference less to `handle`: the layer released it.
pub(crate) fn let_go<T>(handle: *mut T) {
    ledger(|m| {
        if let Some(e) = m.get_mut(&(handle as usize)) {
            e.1 -= 1;
            if e.1 == 0 {
                m.remove(&(handle as usize));
            }
        }
    });
}

/// The layer's reference to a new object is now the application's (its out-parameter).
pub(crate) fn handed_over<T>(handle: *mut T) {
    let_go(handle);
}

/// References held, by kind (indexed by [`Kind`]).
pub(crate) fn counts() -> [usize; 4] {
    ledger(|m| {
        let mut n = [0; 4];
        for &(kind, refs) in m.values() {
            n[kind as usize] += refs;
        }
        n
    })
}

/// `size_t dxclHeldObjects(char *buffer, size_t size)`: how many references the layer holds to
/// the platform's objects, all contexts together; the buffer (NUL-terminated, cut to `size`)
/// gets them by kind ("events 0, command queues 0, memory objects 0, semaphores 0"). Found with
/// `dlsym` in the loaded layer, as `dxclTraceTake` is.
///
/// # Safety
/// `buffer` is null or writable for `size` bytes.
#[no_mangle]
pub unsafe extern "C" fn dxclHeldObjects(buffer: *mut c_char, size: usize) -> usize {
    let n = std::panic::catch_unwind(counts).unwrap_or_default();
    if !buffer.is_null() && size > 0 {
        let text = NAMES
            .iter()
            .zip(n)
            .map(|(name, k)| format!("{name} {k}"))
            .collect::<Vec<_>>()
            .join(", ");
        let len = text.len().min(size - 1);
        // SAFETY: the caller's buffer holds `size` bytes; `len + 1 <= size`.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), buffer.cast::<u8>(), len);
            *buffer.add(len) = 0;
        }
    }
    n.iter().sum()
}

/// For the tests of other modules: the references held to `handle`.
#[cfg(test)]
pub(crate) fn refs<T>(handle: *mut T) -> usize {
    ledger(|m| m.get(&(handle as usize)).map_or(0, |e| e.1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::c_void;

    /// Each reference is counted once and struck once; a release of an unrecorded handle (the
    /// application's) changes nothing; the export writes the counts by kind.
    #[test]
    fn references_are_counted_by_kind() {
        let (a, b) = (
            0x5ee0_0001usize as *mut c_void,
            0x5ee0_0002usize as *mut c_void,
        );
        took(Kind::Semaphore, a);
        took(Kind::Semaphore, a);
        took(Kind::Semaphore, b);
        let_go(0x5ee0_0003usize as *mut c_void);
        assert_eq!((refs(a), refs(b)), (2, 1));
        let mut text = [0 as c_char; 128];
        // SAFETY: a buffer of the size given.
        let total = unsafe { dxclHeldObjects(text.as_mut_ptr(), text.len()) };
        assert!(total >= 3);
        // SAFETY: NUL-terminated by the call.
        let text = unsafe { std::ffi::CStr::from_ptr(text.as_ptr()) };
        assert!(text.to_str().unwrap().contains("semaphores "), "{text:?}");
        handed_over(b);
        let_go(a);
        let_go(a);
        assert_eq!((refs(a), refs(b)), (0, 0));
    }
}

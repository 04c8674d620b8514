//! Wait lists of the layer's own commands, given to the platform so that an event of the list
//! that has already failed terminates the command instead of holding it for ever.
//!
//! The core spec: "a negative integer value causes all enqueued commands that wait on this user
//! event to be terminated". PoCL 3.1 terminates the commands that already wait when an event
//! fails, but a command enqueued after an event of its wait list failed never completes, nor
//! does anything after it (`tests/platform/failed_event.c`, cases "before" and "after"). An
//! application's acquire whose wait list holds a user event it then sets to -1 fails the
//! acquire's copy; the release's read-back, enqueued later and waiting for that copy, held the
//! queue for ever, and `clFinish` with it. So each failed event is replaced by a user event of
//! the layer's, set to the same status once the command is enqueued: the command is terminated
//! the way the platform handles, with the same status.

use opencl_sys::{cl_context, cl_event, cl_int, cl_uint, CL_EVENT_CONTEXT};

use super::{check, down, info::query_value};

/// A wait list for one enqueue call: hold it until the call has returned.
pub(crate) struct WaitList {
    events: Vec<cl_event>,
    /// User events of the layer's standing in for failed ones, with the status each gets once
    /// the command is enqueued (owned).
    stand_ins: Vec<(cl_event, cl_int)>,
}

impl WaitList {
    /// `wait`, with each event that has failed already replaced by a stand-in (kept as it is
    /// where no stand-in can be made).
    pub(crate) fn new(wait: &[cl_event]) -> WaitList {
        let mut list = WaitList {
            events: wait.to_vec(),
            stand_ins: Vec::new(),
        };
        for ev in list.events.iter_mut() {
            let Some(status) = failed(*ev) else {
                continue;
            };
            if let Some(stand_in) = context_of(*ev).and_then(|c| user_event(c).ok()) {
                list.stand_ins.push((stand_in, status));
                *ev = stand_in;
            }
        }
        list
    }

    /// The list as OpenCL takes it: (count, pointer), with NULL for an empty list.
    pub(crate) fn raw(&self) -> (cl_uint, *const cl_event) {
        super::wait_list(&self.events)
    }
}

impl Drop for WaitList {
    /// The command is enqueued (or the call failed): the stand-ins fail, and with them the
    /// command.
    fn drop(&mut self) {
        for (ev, status) in self.stand_ins.drain(..) {
            set_user_status(ev, status);
            super::held::let_go(ev);
            if let Some(release) = super::target().and_then(|t| t.clReleaseEvent) {
                // SAFETY: our own stand-in, created in `new` and released once (its ledger entry
                // struck above; no other table holds it).
                unsafe { release(ev) };
            }
        }
    }
}

/// `wait` without the events that have failed already: for the platform's external memory and
/// semaphore commands, which NVIDIA's driver makes block the calling thread while their wait
/// list holds an unset user event (so a stand-in set after the call would never be set). The
/// call's own event, a marker given [`WaitList`], still fails with them.
pub(crate) fn without_failed(wait: &[cl_event]) -> Vec<cl_event> {
    wait.iter()
        .copied()
        .filter(|&ev| failed(ev).is_none())
        .collect()
}

/// The negative execution status of an event that has failed; None for any other, and for an
/// invalid event (left for the platform to reject with CL_INVALID_EVENT_WAIT_LIST).
fn failed(ev: cl_event) -> Option<cl_int> {
    let get = super::target().and_then(|t| t.clGetEventInfo)?;
    // SAFETY: an event of the caller's list; query_value passes a buffer of the size it names,
    // and an invalid event just fails the query.
    let status: cl_int = query_value(|n, p, r| unsafe {
        get(ev, opencl_sys::CL_EVENT_COMMAND_EXECUTION_STATUS, n, p, r)
    })
    .ok()?;
    (status < 0).then_some(status)
}

fn context_of(ev: cl_event) -> Option<cl_context> {
    let get = super::target().and_then(|t| t.clGetEventInfo)?;
    // SAFETY: an event the caller holds; query_value passes a buffer of the size it names.
    let c: cl_context =
        query_value(|n, p, r| unsafe { get(ev, CL_EVENT_CONTEXT, n, p, r) }).ok()?;
    (!c.is_null()).then_some(c)
}

/// A new user event of `context` (owned by the caller): stands for work the layer does on the
/// host, which commands and the application's event can wait for.
pub(crate) fn user_event(context: opencl_sys::cl_context) -> Result<cl_event, cl_int> {
    let create = down!(clCreateUserEvent);
    let mut err = opencl_sys::CL_SUCCESS;
    // SAFETY: the caller's context (the platform validates it); our own out pointer.
    let ev = unsafe { create(context, &mut err) };
    check(err)?;
    Ok(super::held::new_event(ev))
}

/// Completes a user event of the layer's: `CL_COMPLETE`, or a negative status for work that
/// failed (commands waiting for it then fail too).
pub(crate) fn set_user_status(ev: cl_event, status: cl_int) {
    if let Some(set) = super::target().and_then(|t| t.clSetUserEventStatus) {
        // SAFETY: a user event the caller holds, set once.
        unsafe { set(ev, status) };
    }
}

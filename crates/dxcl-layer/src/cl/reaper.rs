//! Releases of events and queues made on the layer's releasing thread ([`super::release_thread`]),
//! for completion callbacks and what runs on their threads.

use opencl_sys::{cl_command_queue, cl_event};

use super::events;
use super::release_thread::later;

/// Releases `ev` on the layer's releasing thread (for completion callbacks).
pub(crate) fn release_event(ev: cl_event) {
    if !ev.is_null() {
        let ev = ev as usize;
        later(Box::new(move || events::release(ev as cl_event)));
    }
}

/// Releases `queue` on the layer's releasing thread (for completion callbacks).
pub(crate) fn release_queue(queue: cl_command_queue) {
    if !queue.is_null() {
        let queue = queue as usize;
        later(Box::new(move || {
            super::release_queue(queue as cl_command_queue)
        }));
    }
}

//! The layer's own non-blocking copies between a memory object and host memory.

use std::ffi::c_void;

use opencl_sys::{cl_command_queue, cl_event, cl_int, cl_mem, CL_FALSE};

use super::{check, down, events, wait::WaitList};

/// The part of a memory object a copy covers, and how the host side is laid out.
#[derive(Clone, Copy)]
pub(crate) enum Region {
    /// `len` bytes of a buffer from `offset`.
    Buffer { offset: usize, len: usize },
    /// A box of an image; the host side has these pitches (0: tightly packed).
    Image {
        origin: [usize; 3],
        region: [usize; 3],
        row_pitch: usize,
        slice_pitch: usize,
    },
}

/// Enqueues the copy of `region` of `mem` into `host` (`to_host`) or from it, after `wait`;
/// returns its event, owned by the caller. Does not block.
///
/// # Safety
/// `host` holds what `region` spans, laid out as it says, until the copy completes.
pub(crate) unsafe fn enqueue(
    queue: cl_command_queue,
    mem: cl_mem,
    region: Region,
    host: *mut c_void,
    to_host: bool,
    wait: &[cl_event],
) -> Result<cl_event, cl_int> {
    // Held until the enqueue call returned (see WaitList).
    let wait = WaitList::new(wait);
    let (n, list) = wait.raw();
    let mut ev = std::ptr::null_mut();
    // The platform's time, apart from the strategy's own (a staging hand-off's copies are its
    // largest CPU cost after the runtime's).
    let span = crate::trace::span(crate::trace::Step::ClEnqueueCopy);
    let r = match region {
        Region::Buffer { offset, len } if to_host => {
            let f = down!(clEnqueueReadBuffer);
            // SAFETY: `host` holds `len` bytes until the copy completes (caller's contract).
            unsafe { f(queue, mem, CL_FALSE, offset, len, host, n, list, &mut ev) }
        }
        Region::Buffer { offset, len } => {
            let f = down!(clEnqueueWriteBuffer);
            // SAFETY: as above.
            unsafe { f(queue, mem, CL_FALSE, offset, len, host, n, list, &mut ev) }
        }
        Region::Image {
            origin,
            region,
            row_pitch,
            slice_pitch,
        } => {
            // Read and write take the same arguments (a write's host pointer as const).
            macro_rules! image {
                ($slot:ident) => {{
                    let f = down!($slot);
                    // SAFETY: `host` holds the box at these pitches until the copy completes
                    // (caller's contract).
                    unsafe {
                        f(
                            queue,
                            mem,
                            CL_FALSE,
                            origin.as_ptr(),
                            region.as_ptr(),
                            row_pitch,
                            slice_pitch,
                            host,
                            n,
                            list,
                            &mut ev,
                        )
                    }
                }};
            }
            if to_host {
                image!(clEnqueueReadImage)
            } else {
                image!(clEnqueueWriteImage)
            }
        }
    };
    drop(span);
    check(r)?;
    Ok(events::owned(ev))
}

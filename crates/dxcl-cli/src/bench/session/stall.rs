//! What the synchronisation makes the CPU wait for. Acquire and release promise ordering with
//! Direct3D's work; with GPU-side semaphores the calls only enqueue, with CPU waits the thread
//! blocks until the other API's work is done. Measured with real work queued on the other side.

use super::*;
use std::time::Instant;

/// Medians, in microseconds.
pub struct Stall {
    /// Direct3D's queued work alone, waited for with an event query.
    pub d3d_work_us: f64,
    /// The acquire call, made right after queuing that work.
    pub acquire_blocked_us: f64,
    /// OpenCL's queued work alone, waited for with `clFinish`.
    pub cl_work_us: f64,
    /// The release call, made while that work runs.
    pub release_blocked_us: f64,
    /// The next Direct3D command on the object (a copy, then `Flush`), right after the release.
    pub next_d3d_blocked_us: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn us(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e6
}

impl Shared<'_> {
    /// `rounds` times each: Direct3D copies the object `copies` times into a scratch resource,
    /// then the acquire is timed; OpenCL fills the object `copies` times, then the release and,
    /// separately, the Direct3D copy of the object (with `Flush`) that follows it are timed. Buffers only: the fill is a buffer's.
    pub fn stall(&self, copies: usize, rounds: usize) -> Result<Stall, BoxError> {
        let session = self.session;
        let scratch = session.create_resource(&self.shape, D3D11_USAGE_DEFAULT, 0)?;
        let ctx = session.context.as_raw();
        let query = session.event_query()?;
        let d3d_copy = || {
            // SAFETY: live context and resources of the same shape.
            unsafe {
                ((*(*ctx).lpVtbl).CopyResource)(ctx, scratch.as_raw(), self.resource.as_raw())
            };
        };
        let d3d_idle = || session.wait_event(&query);
        let cl_work = || -> Result<(), ClError> {
            let pattern = 0x5a5a_5a5au32;
            for _ in 0..copies {
                // SAFETY: a valid queue and acquired buffer of `bytes()` bytes; a 4-byte pattern
                // dividing that size; no events.
                cl_check("clEnqueueFillBuffer", unsafe {
                    cl::clEnqueueFillBuffer(
                        session.queue.0,
                        self.mem.0,
                        (&pattern as *const u32).cast(),
                        4,
                        0,
                        self.shape.bytes(),
                        0,
                        ptr::null(),
                        ptr::null_mut(),
                    )
                })?;
            }
            // The work must be submitted for the release's wait to find it running.
            // SAFETY: a valid queue.
            cl_check("clFlush", unsafe { cl::clFlush(session.queue.0) })
        };
        let finish = || {
            // SAFETY: a valid queue.
            cl_check("clFinish", unsafe { cl::clFinish(session.queue.0) })
        };
        let (mut d3d, mut acq, mut cl, mut rel, mut next) =
            (vec![], vec![], vec![], vec![], vec![]);
        for _ in 0..rounds {
            let t = Instant::now();
            (0..copies).for_each(|_| d3d_copy());
            d3d_idle()?;
            d3d.push(us(t));

            (0..copies).for_each(|_| d3d_copy());
            let t = Instant::now();
            self.acquire()?;
            acq.push(us(t));
            d3d_idle()?;

            let t = Instant::now();
            cl_work()?;
            finish()?;
            cl.push(us(t));

            cl_work()?;
            let t = Instant::now();
            self.release()?;
            rel.push(us(t));
            let t = Instant::now();
            d3d_copy();
            // SAFETY: a live context.
            unsafe { ((*(*ctx).lpVtbl).Flush)(ctx) };
            next.push(us(t));
            finish()?;
            d3d_idle()?;
        }
        Ok(Stall {
            d3d_work_us: median(d3d),
            acquire_blocked_us: median(acq),
            cl_work_us: median(cl),
            release_blocked_us: median(rel),
            next_d3d_blocked_us: median(next),
        })
    }
}

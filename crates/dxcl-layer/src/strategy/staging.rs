//! Staging copy: a plain OpenCL object, filled from the resource at acquire and copied back at
//! release through a CPU-accessible Direct3D staging resource, with standard COM calls only.
//! Works with any Direct3D device (foreign ones included) and any OpenCL device; O(size).

use std::sync::Mutex;

use opencl_sys::{cl_command_queue, cl_event, cl_int, cl_mem, CL_FALSE, CL_OUT_OF_RESOURCES};

use super::{create_plain, made, release_mem, Decision, HandOff, Made, Request, SharingStrategy};
use crate::cl::{check, down, events, wait_list};
use crate::core::tokens::ResourceKind;
use crate::d3d::staging::{Place, Staging};

pub(super) struct StagingCopy {
    decision: Decision,
    kind: ResourceKind,
    state: Mutex<State>,
}

struct State {
    staging: Staging,
    /// The last acquire's copy into the memory object (retained), which the release waits for:
    /// it may run on another queue.
    last_upload: Option<usize>,
}

impl StagingCopy {
    pub(super) fn create(req: &Request, decision: Decision) -> Made {
        let mem = create_plain(req, None)?;
        let staging = Staging::new(
            req.version,
            req.kind,
            req.resource,
            req.subresource,
            req.extent,
            req.pixel_size(),
            Place::Host,
        );
        let Ok(staging) = staging else {
            release_mem(mem);
            return Err(CL_OUT_OF_RESOURCES.into());
        };
        made(
            mem,
            StagingCopy {
                decision,
                kind: req.kind,
                state: Mutex::new(State {
                    staging,
                    last_upload: None,
                }),
            },
        )
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl SharingStrategy for StagingCopy {
    fn decision(&self) -> Decision {
        self.decision
    }

    fn acquire(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        let mut s = self.state();
        // Map waits for the D3D work on the resource, so the copy is synchronised even under
        // user sync (where that is allowed, not required).
        s.staging.download().map_err(|_| CL_OUT_OF_RESOURCES)?;
        let ev = enqueue_copy(h.queue, mem, self.kind, &mut s.staging, false, h.wait)?;
        // One reference for the call's event, one kept for the release.
        events::retain(ev)?;
        h.wait_for(ev);
        if let Some(old) = s.last_upload.replace(ev as usize) {
            events::release(old as cl_event);
        }
        Ok(())
    }

    fn release(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        let mut s = self.state();
        let mut wait = h.release_wait();
        wait.extend(s.last_upload.map(|e| e as cl_event));
        let read = enqueue_copy(h.queue, mem, self.kind, &mut s.staging, true, &wait)?;
        // A foreign device cannot wait for OpenCL: the release blocks until the data is read
        // back, then writes it into the resource.
        let wait_for = down!(clWaitForEvents);
        // SAFETY: an event we own.
        let r = unsafe { wait_for(1, &read) };
        events::release(read);
        check(r)?;
        s.staging.upload().map_err(|_| CL_OUT_OF_RESOURCES)?;
        // The copy is back in D3D: the upload event is no longer needed.
        if let Some(old) = s.last_upload.take() {
            events::release(old as cl_event);
        }
        Ok(())
    }

    fn released(&self, _h: &mut HandOff<'_>, _done: cl_event) -> Result<(), cl_int> {
        // The data is in the resource already, written by D3D calls this thread made.
        Ok(())
    }
}

impl Drop for StagingCopy {
    /// The memory object is gone for the application, perhaps still acquired with the
    /// acquire's copy pending (it may wait on a user event): the copy reads the shadow, so the
    /// shadow lives until the copy completes.
    fn drop(&mut self) {
        let s = self.state.get_mut().unwrap_or_else(|p| p.into_inner());
        let Some(upload) = s.last_upload.take().map(|e| e as cl_event) else {
            return;
        };
        if events::is_done(upload) {
            events::release(upload);
            return;
        }
        let shadow = std::mem::take(s.staging.shadow_mut());
        if let Err(keep) = events::when_complete(upload, Box::new(move || drop(shadow))) {
            // No callback: leak the shadow rather than free what a command still reads, or
            // block on a wait list that may never complete.
            std::mem::forget(keep);
        }
    }
}

/// Enqueues the copy between a memory object and its staging shadow (tightly packed).
fn enqueue_copy(
    queue: cl_command_queue,
    mem: cl_mem,
    kind: ResourceKind,
    staging: &mut Staging,
    read: bool,
    wait: &[cl_event],
) -> Result<cl_event, cl_int> {
    let (w, h, d) = staging.extent();
    let (w, h, d, size) = (w as usize, h as usize, d as usize, staging.shadow_len());
    let shadow: *mut std::ffi::c_void = staging.shadow_mut().as_mut_ptr().cast();
    let mut ev = std::ptr::null_mut();
    let (n, list) = wait_list(wait);
    let (origin, region) = ([0usize; 3], [w, h, d]);
    let r = match (kind, read) {
        (ResourceKind::Buffer, true) => {
            let f = down!(clEnqueueReadBuffer);
            // SAFETY: shadow holds `size` bytes and stays alive (and untouched) until the copy
            // completes: the release waits for it, the acquire's copy is waited for by the
            // release before the shadow is reused.
            unsafe { f(queue, mem, CL_FALSE, 0, size, shadow, n, list, &mut ev) }
        }
        (ResourceKind::Buffer, false) => {
            let f = down!(clEnqueueWriteBuffer);
            // SAFETY: as above.
            unsafe { f(queue, mem, CL_FALSE, 0, size, shadow, n, list, &mut ev) }
        }
        (_, true) => {
            let f = down!(clEnqueueReadImage);
            // SAFETY: as above; the shadow is w*h*d pixels, tightly packed (pitches 0).
            unsafe {
                f(
                    queue,
                    mem,
                    CL_FALSE,
                    origin.as_ptr(),
                    region.as_ptr(),
                    0,
                    0,
                    shadow,
                    n,
                    list,
                    &mut ev,
                )
            }
        }
        (_, false) => {
            let f = down!(clEnqueueWriteImage);
            // SAFETY: as above.
            unsafe {
                f(
                    queue,
                    mem,
                    CL_FALSE,
                    origin.as_ptr(),
                    region.as_ptr(),
                    0,
                    0,
                    shadow,
                    n,
                    list,
                    &mut ev,
                )
            }
        }
    };
    check(r)?;
    Ok(ev)
}

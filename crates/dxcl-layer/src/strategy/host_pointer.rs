//! Host pointer: zero-copy on CPU devices. The `cl_mem` is created with `CL_MEM_USE_HOST_PTR` on
//! the resource's own host memory (dxcl's host backend, devices with host-unified memory).
//!
//! The spec lets the platform keep a copy of that memory: "OpenCL implementations are allowed to
//! cache the buffer contents pointed to by host_ptr in device memory. This cached copy can be
//! used when kernels are executed on a device." (`clCreateBuffer`, `CL_MEM_USE_HOST_PTR`; images
//! alike). Mesa's rusticl does, for images. So each hand-off brings the copy up to date the way
//! the spec provides for exactly this, enqueued, non-blocking, ordered with the call's events:
//!
//! - acquire: `clEnqueueWrite{Buffer,Image}` from `host_ptr` itself. "Calling
//!   clEnqueueWriteBuffer to update the latest bits in a region of the buffer object with the ptr
//!   argument value set to host_ptr + offset, where host_ptr is a pointer to the memory region
//!   specified when the buffer object being written is created with CL_MEM_USE_HOST_PTR, must
//!   meet the following requirements in order to avoid undefined behavior: The host memory region
//!   given by (host_ptr + offset, cb) contains the latest bits when the enqueued write command
//!   begins execution. The buffer object or memory objects created from this buffer object are
//!   not mapped. The buffer object or memory objects created from this buffer object are not used
//!   by any kernel commands before the write command completes execution." (for images the same,
//!   with "The input_row_pitch and input_slice_pitch argument values in clEnqueueWriteImage must
//!   be set to the image row pitch and slice pitch.")
//! - release: `clEnqueueRead{Buffer,Image}` into `host_ptr`, after the wait list and all earlier
//!   work of the queue: "Calling clEnqueueReadBuffer to read a region of the buffer object with
//!   the ptr argument value set to host_ptr + offset, where host_ptr is a pointer to the memory
//!   region specified when the buffer object being read is created with CL_MEM_USE_HOST_PTR, must
//!   meet the following requirements in order to avoid undefined behavior: All commands that use
//!   this buffer object or a memory object (buffer or image) created from this buffer object have
//!   finished execution before the read command begins execution. The buffer object or memory
//!   objects created from this buffer object are not mapped. The buffer object or memory objects
//!   created from this buffer object are not used by any kernel commands before the read command
//!   completes execution." Outside acquire and release the application cannot use the object
//!   (`CL_D3D1x_RESOURCE_NOT_ACQUIRED`), and each hand-off command waits for the previous one,
//!   which may have run on another queue.
//!
//! Not map and unmap: rusticl (Mesa 22.3) refuses the unmap of a non-blocking map that has not run
//! yet with `CL_INVALID_VALUE` (docs/conformance.md), and a blocking map would block the call on
//! its wait list.
//!
//! Where the platform uses the memory in place, the copies are skipped: the probe
//! ([`crate::probe::host_memory`]) asks plain `CL_MEM_USE_HOST_PTR` objects of every device of
//! the context, at the device's first use, whether maps return `host_ptr`, host writes reach the
//! next command and commands' writes are in `host_ptr` once they complete. Where all of it holds
//! (PoCL), a hand-off is O(1): the call's marker, ordered after its wait list, and for a release
//! after the queue's earlier work. Anywhere else (rusticl caches images), the copies run.
//! `DXCL_HOST_PTR=copy` forces the copies, `DXCL_HOST_PTR=in-place` skips them whatever the probe
//! found (the conformance suite's proof that the probe's answer matters: docs/conformance.md).
//!
//! A copy back into `host_ptr` is the layer's own command: an application that waits for its
//! queue with `clFinish` after a release must find it complete, and rusticl's `clFinish` can
//! return before commands an earlier flush sent on have run. So the copies are kept per queue
//! until [`finish_copies`] (the `clFinish` intercept) has waited for them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opencl_sys::{
    cl_command_queue, cl_context, cl_device_id, cl_event, cl_int, cl_mem, CL_CONTEXT_DEVICES,
    CL_INVALID_VALUE, CL_MEM_OBJECT_IMAGE3D,
};

use super::{Decision, HandOff, Made, Make, Materials, Request, SharingStrategy};
use crate::cl::copy::Region;
use crate::cl::{events, info};
use crate::core::signal::Signal;
use crate::d3d::com::ComPtr;
use crate::d3d::interop;
use dxcl_abi::interop::IDxclInteropResource;

pub(super) struct HostPointer {
    decision: Decision,
    /// The resource's interop interface (borrowed: the memory object's entry holds the
    /// resource's counted reference).
    interop: ComPtr<IDxclInteropResource>,
    /// The `host_ptr` the object was created with (the subresource's first byte), as an address.
    host: usize,
    /// What a hand-off copies: the whole object, at the pitches it was created with.
    extent: Region,
    /// Whether hand-offs copy between the object and `host_ptr` (the platform may cache it).
    copies: bool,
    /// The last hand-off command on the object (retained), which the next one waits for: it may
    /// have run on another queue. Released at the application's last release of the object
    /// ([`SharingStrategy::keep_memory_until`]) or with the strategy.
    last: Mutex<Option<usize>>,
    /// The runtime runs a release's pending work before its next access ([`Interop::defers`]).
    defers: bool,
}

/// Makes [`HostPointer`]s.
pub(super) struct Maker;

impl Make for Maker {
    fn make(&self, req: &Request, with: Materials<'_>, decision: Decision) -> Made {
        let interop = with.interop;
        let invalid = req.version.invalid_resource();
        let i = interop.ok_or(invalid)?;
        let (base, _) = i.host_memory().ok_or(invalid)?;
        // CL_INVALID_VALUE "if subresource is not a valid subresource index for resource": the
        // runtime knows no layout for it.
        let layout = i.layout(req.subresource).ok_or(CL_INVALID_VALUE)?;
        // SAFETY: the runtime promises Offset lies inside the allocation at pHost.
        let ptr = unsafe { base.cast::<u8>().add(layout.offset as usize) };
        let copies = copies_for(req.context);
        let mem = req.create_plain(Some((ptr, layout)))?;
        let (w, h, d) = (
            req.extent.0 as usize,
            req.extent.1 as usize,
            req.extent.2 as usize,
        );
        let extent = match req.image {
            Some((_, t)) if t == CL_MEM_OBJECT_IMAGE3D => Region::Image {
                origin: [0; 3],
                region: [w, h, d],
                row_pitch: layout.row_pitch as usize,
                slice_pitch: layout.depth_pitch as usize,
            },
            // Slice pitch 0 for 2D.
            Some(_) => Region::Image {
                origin: [0; 3],
                region: [w, h, 1],
                row_pitch: layout.row_pitch as usize,
                slice_pitch: 0,
            },
            None => Region::Buffer { offset: 0, len: w },
        };
        let defers = i.defers;
        let strategy = HostPointer {
            decision,
            defers,
            // SAFETY: the memory object's entry holds the counted reference to the resource
            // for as long as this strategy lives.
            interop: unsafe { i.com.clone().into_borrowed() },
            host: ptr as usize,
            extent,
            copies,
            last: Mutex::new(None),
        };
        Ok((mem, Arc::new(strategy)))
    }
}

/// How hand-offs of `context`'s objects keep the platform's copy and the host memory together:
/// `DXCL_HOST_PTR=copy` or `in-place` if set, else copies unless every device of the context was
/// probed to use `CL_MEM_USE_HOST_PTR` memory in place. Copies when the devices cannot be listed:
/// they are always correct.
fn copies_for(context: cl_context) -> bool {
    match std::env::var("DXCL_HOST_PTR").as_deref() {
        Ok("copy") => return true,
        Ok("in-place") => return false,
        _ => {}
    }
    let Some(get) = crate::cl::target().and_then(|t| t.clGetContextInfo) else {
        return true;
    };
    // SAFETY: query_bytes passes a buffer of the size it names; the context was checked.
    let Ok(bytes) =
        info::query_bytes(|n, p, r| unsafe { get(context, CL_CONTEXT_DEVICES, n, p, r) })
    else {
        return true;
    };
    let devices: Vec<cl_device_id> = bytes
        .chunks_exact(size_of::<cl_device_id>())
        .map(|c| usize::from_ne_bytes(c.try_into().unwrap_or_default()) as cl_device_id)
        .collect();
    devices.is_empty()
        || devices
            .into_iter()
            .any(|d| !crate::probe::host_memory(d).in_place())
}

/// Which way a hand-off brings the platform's copy and the host memory together.
#[derive(Clone, Copy, PartialEq)]
enum Direction {
    /// Acquire: write the host memory into the object.
    ToDevice,
    /// Release: read the object into the host memory.
    ToHost,
}

impl HostPointer {
    /// Enqueues the hand-off's copy after `wait` and the object's previous hand-off; the call's
    /// event waits for it, and the next hand-off will.
    fn hand_off(
        &self,
        mem: cl_mem,
        h: &mut HandOff<'_>,
        dir: Direction,
        mut wait: Vec<cl_event>,
    ) -> Result<(), cl_int> {
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        // Only a previous copy still pending is waited for: a platform may keep an event's
        // dependencies as long as the event (rusticl does), and a chain of every hand-off's
        // event, each holding the object, would grow with every call.
        match last.map(|e| e as cl_event) {
            Some(prev) if events::is_done(prev) => {
                events::release_pinned(prev);
                *last = None;
            }
            Some(prev) => wait.push(prev),
            None => {}
        }
        let ev = copy(h.queue, mem, self.host, self.extent, dir, &wait)?;
        if dir == Direction::ToHost {
            pending_copy(h.queue, self.host, ev);
        }
        // Kept past the call, for the next hand-off: it pins its queue (events::pin).
        events::pin(ev);
        if let Some(old) = last.replace(ev as usize) {
            events::release_pinned(old as cl_event);
        }
        // A second reference for the call's event, if a marker makes it, taken last, as the
        // staging copy's. The platform's error is the call's: "CL_OUT_OF_HOST_MEMORY if there is
        // a failure to allocate resources required by the OpenCL implementation on the host".
        h.follow(ev)
    }
}

impl Drop for HostPointer {
    fn drop(&mut self) {
        let last = self.last.get_mut().unwrap_or_else(|p| p.into_inner());
        if let Some(ev) = last.take() {
            events::release_pinned(ev as cl_event);
        }
    }
}

impl SharingStrategy for HostPointer {
    fn decision(&self) -> Decision {
        self.decision
    }

    fn aliases_resource_memory(&self) -> bool {
        true
    }

    fn keep_memory_until(&self, destroyed: Arc<Signal>) -> bool {
        // No hand-off follows the application's last release, and the last one's event may
        // hold the platform's object (rusticl's events do): kept, it would keep the object from
        // being destroyed, which the memory below waits for.
        let last = self.last.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(ev) = last {
            events::release_pinned(ev as cl_event);
        }
        forget_copies(self.host);
        // dxcl's runtime runs the wait before its next access to the resource, and before
        // freeing it: the memory outlives the application's reference until the platform is
        // done with it.
        interop::keep_until(&self.interop, destroyed)
    }

    fn acquire(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        if h.sync {
            // "any Direct3D 1x calls ... made before clEnqueueAcquireD3D1xObjects is called will
            // complete executing before event reports completion and before the execution of
            // any subsequent OpenCL work issued in command_queue begins".
            interop::wait_for_device_work(&self.interop);
        }
        if !self.copies {
            // The object is the host memory: the call's marker, after the wait list, is all.
            return Ok(());
        }
        // Direct3D's bits, in the host memory now, into whatever copy the platform keeps, after
        // the wait list; the call's event waits for it.
        let wait = h.wait.to_vec();
        self.hand_off(mem, h, Direction::ToDevice, wait)
    }

    fn release(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int> {
        if !self.copies {
            // The object is the host memory: the call's marker follows the wait list and the
            // queue's earlier work, and Direct3D waits for it (`released`).
            return Ok(());
        }
        // The device's bits into the host memory, after the wait list and all earlier work of
        // the queue; the call's event, which later Direct3D work waits for, waits for it.
        let wait = h.release_wait();
        self.hand_off(mem, h, Direction::ToHost, wait)
    }

    fn released(&self, h: &mut HandOff<'_>, done: cl_event) -> Result<(), cl_int> {
        if h.sync {
            // "any calls to Direct3D 1x made after the call to clEnqueueReleaseD3D1xObjects will
            // not start executing until after all events in event_wait_list are complete and all
            // work already submitted to command_queue completes execution". This object's read
            // into the host memory ran after exactly those, so Direct3D waits for it rather than
            // for the call's event: that one also covers the call's other objects, and a
            // platform that keeps events' dependencies (rusticl) would have this resource's
            // pending work hold them, and so keep the memory of another resource, which waits
            // for its object's destruction when it is released, from ever being freed.
            let last = *self.last.lock().unwrap_or_else(|p| p.into_inner());
            if !self.defers && !h.may_wait_now() {
                // A runtime that cannot be made to wait (DXVK's shared textures) has the call
                // wait below instead, but not for a user event still unset: Direct3D's next
                // access is then not ordered after the release (docs/dxvk.md).
                return Ok(());
            }
            interop::add_pending_work(&self.interop, last.map_or(done, |e| e as cl_event));
        }
        Ok(())
    }
}

/// A copy back into `host_ptr` not yet waited for: its event (retained) and the `host_ptr` it
/// writes, which names its object.
struct Pending {
    ev: usize,
    host: usize,
}

/// Copies back into `host_ptr` per queue, until the queue's `clFinish`.
static PENDING: Mutex<Option<HashMap<usize, Vec<Pending>>>> = Mutex::new(None);

/// Keeps a retained reference to the copy `ev` into `host` on `queue` for [`finish_copies`];
/// copies already complete, on any queue, are let go (a queue that is never finished keeps at
/// most its pending ones).
fn pending_copy(queue: cl_command_queue, host: usize, ev: cl_event) {
    if events::retain(ev).is_err() {
        return;
    }
    let mut all = PENDING.lock().unwrap_or_else(|p| p.into_inner());
    let all = all.get_or_insert_with(HashMap::new);
    for list in all.values_mut() {
        list.retain(|p| {
            let done = events::is_done(p.ev as cl_event);
            if done {
                events::release(p.ev as cl_event);
            }
            !done
        });
    }
    all.retain(|_, list| !list.is_empty());
    all.entry(queue as usize).or_default().push(Pending {
        ev: ev as usize,
        host,
    });
}

/// Lets go of the copies into `host` still kept for `clFinish`: the application released the
/// object, and a platform whose events hold their memory objects (rusticl) would otherwise keep
/// it, and the resource memory that waits for its destruction, alive until the queue's
/// `clFinish`, which may never come.
fn forget_copies(host: usize) {
    let mut all = PENDING.lock().unwrap_or_else(|p| p.into_inner());
    for list in all.iter_mut().flat_map(|m| m.values_mut()) {
        list.retain(|p| {
            if p.host == host {
                events::release(p.ev as cl_event);
            }
            p.host != host
        });
    }
}

/// Waits for the copies back into `host_ptr` enqueued on `queue` (the `clFinish` intercept,
/// after the platform's own `clFinish`): "clFinish ... blocks until all previously queued
/// OpenCL commands in command_queue are issued to the associated device and have completed",
/// the layer's copies included, which a platform's early return would leave running.
pub(crate) fn finish_copies(queue: cl_command_queue) {
    let list = PENDING
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_mut()
        .and_then(|all| all.remove(&(queue as usize)));
    for p in list.into_iter().flatten() {
        events::wait(p.ev as cl_event);
        events::release(p.ev as cl_event);
    }
}

/// Enqueues the copy between the whole of `mem` and its own `host_ptr` (`host`) after `wait`;
/// returns its event (owned by the caller). Does not block.
fn copy(
    queue: cl_command_queue,
    mem: cl_mem,
    host: usize,
    extent: Region,
    dir: Direction,
    wait: &[cl_event],
) -> Result<cl_event, cl_int> {
    let ptr = host as *mut std::ffi::c_void;
    // The platform's error is the call's: "CL_OUT_OF_RESOURCES if there is a failure to
    // allocate resources required by the OpenCL implementation on the device" and
    // "CL_OUT_OF_HOST_MEMORY if there is a failure to allocate resources required by the
    // OpenCL implementation on the host" (clEnqueueAcquire/ReleaseD3D1xObjects).
    // SAFETY: `ptr` is the object's own host_ptr and `extent` the whole object at the pitches
    // it was created with: the resource's memory, alive while the object is (the entry holds
    // the resource, and keep_memory_until covers commands after the application's last
    // release).
    unsafe { crate::cl::copy::enqueue(queue, mem, extent, ptr, dir == Direction::ToHost, wait) }
}

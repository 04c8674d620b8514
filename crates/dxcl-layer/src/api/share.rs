//! `clEnqueueAcquireD3D1xObjects{KHR,NV}` and `clEnqueueReleaseD3D1xObjects{KHR,NV}`.
//!
//! Acquire state is context-wide (one flag per memory object). Synchronisation, unless the
//! context asked for `CL_CONTEXT_INTEROP_USER_SYNC` (KHR only; NV always synchronises):
//! - acquire: D3D work issued before it completes before its event completes (host pointer:
//!   `IDxclInteropResource::WaitForDeviceWork`; staging copy: D3D's own `Map` wait);
//! - release: later D3D work waits for the release's wait list and all earlier work of the queue
//!   (host pointer: `AddPendingWork` with a callback waiting on the release's event; staging copy:
//!   the release blocks until the data is back in the resource).
//!
//! External memory: `clEnqueueAcquire/ReleaseExternalMemObjectsKHR` bracket the imported objects;
//! the ordering is GPU-side through the context's shared semaphores (`external::sync`) where both
//! sides have them, else the CPU waits above.

use std::ffi::c_void;

use opencl_sys::{
    cl_command_queue, cl_event, cl_int, cl_mem, cl_uint, CL_FALSE, CL_INVALID_COMMAND_QUEUE,
    CL_INVALID_CONTEXT, CL_INVALID_EVENT_WAIT_LIST, CL_INVALID_MEM_OBJECT, CL_INVALID_VALUE,
    CL_QUEUE_CONTEXT,
};

use super::info::query_value;
use super::{check, down, slice, wait_list};
use crate::core::registry::{self, key, ResourceKind};
use crate::core::tokens::{Ext, Flavor};
use crate::d3d::com::ComPtr;
use crate::d3d::interop;
use crate::d3d::staging::Staging;
use crate::external::{cl as external_cl, sync as external_sync};
use crate::strategy::Strategy;
use dxcl_abi::interop::IDxclInteropResource;

/// One object of an acquire/release call, copied out of the registry.
struct Item {
    mem: cl_mem,
    kind: ResourceKind,
    strategy: Strategy,
    interop: Option<ComPtr<IDxclInteropResource>>,
    staging: Option<std::sync::Arc<std::sync::Mutex<crate::d3d::staging::Staging>>>,
    last_upload: Option<usize>,
}

/// Enqueues a marker waiting for `wait` (all earlier work of the queue when empty).
fn marker(queue: cl_command_queue, wait: &[cl_event]) -> Result<cl_event, cl_int> {
    let enqueue = down!(clEnqueueMarkerWithWaitList);
    let mut ev = std::ptr::null_mut();
    let (n, list) = wait_list(wait);
    // SAFETY: the queue and events are the caller's (the platform validates them); our own
    // out pointer.
    check(unsafe { enqueue(queue, n, list, &mut ev) })?;
    Ok(ev)
}

/// Releases an event the layer holds, dropping its side-table entry if it dies.
pub(crate) fn release_event(ev: cl_event) {
    super::guard::release_tracked_event(ev);
}

/// Hands a marker event to the application (recording its command type) or drops it.
///
/// # Safety
/// `event` is null or writable.
unsafe fn hand_out(ev: cl_event, command: cl_uint, event: *mut cl_event) {
    if event.is_null() {
        release_event(ev);
    } else {
        registry::record_event(ev, command);
        // SAFETY: caller's contract.
        unsafe { *event = ev };
    }
}

/// The body of the eight acquire/release entry points.
///
/// # Safety
/// The pointers obey the entry point's contract.
#[allow(clippy::too_many_arguments)] // The C signature plus the extension and direction.
pub(crate) unsafe fn acquire_release(
    ext: Ext,
    release: bool,
    queue: cl_command_queue,
    num_objects: cl_uint,
    mem_objects: *const cl_mem,
    num_events: cl_uint,
    wait_list: *const cl_event,
    event: *mut cl_event,
) -> Result<(), cl_int> {
    let v = ext.version;
    let command = if release {
        v.command_release()
    } else {
        v.command_acquire()
    };
    // CL_INVALID_VALUE "if num_objects is zero and mem_objects is not a NULL value or if
    // num_objects > 0 and mem_objects is NULL".
    if (num_objects == 0) != mem_objects.is_null() {
        return Err(CL_INVALID_VALUE);
    }
    // CL_INVALID_EVENT_WAIT_LIST "if event_wait_list is NULL and num_events_in_wait_list > 0, or
    // event_wait_list is not NULL and num_events_in_wait_list is 0".
    if (num_events == 0) != wait_list.is_null() {
        return Err(CL_INVALID_EVENT_WAIT_LIST);
    }
    // SAFETY: caller's contract: wait_list holds num_events events.
    let wait: &[cl_event] = unsafe { slice(wait_list, num_events) };
    // CL_INVALID_EVENT_WAIT_LIST "if event objects in event_wait_list are not valid events":
    // checked here, before any D3D work, because platforms differ in what their own enqueues
    // answer (NVIDIA: CL_INVALID_EVENT).
    let event_info = down!(clGetEventInfo);
    for &ev in wait {
        // SAFETY: a query into our own buffer; an invalid event just fails it.
        let valid = !ev.is_null()
            && query_value::<usize>(|n, p, r| unsafe {
                event_info(ev, opencl_sys::CL_EVENT_CONTEXT, n, p, r)
            })
            .is_ok();
        if !valid {
            return Err(CL_INVALID_EVENT_WAIT_LIST);
        }
    }
    if num_objects == 0 {
        // "If num_objects is 0 and mem_objects is NULL then the function does nothing and
        // returns CL_SUCCESS." An application asking for an event still gets one: a marker
        // with the wait list, reporting this command's type.
        if !event.is_null() {
            let ev = marker(queue, wait)?;
            // SAFETY: event checked non-null; caller's contract.
            unsafe { hand_out(ev, command, event) };
        }
        return Ok(());
    }
    // CL_INVALID_COMMAND_QUEUE "if command_queue is not a valid command-queue".
    let get_queue_info = down!(clGetCommandQueueInfo);
    // SAFETY: our own buffer; the platform validates the queue.
    let context: usize =
        query_value(|n, p, r| unsafe { get_queue_info(queue, CL_QUEUE_CONTEXT, n, p, r) })
            .map_err(|_| CL_INVALID_COMMAND_QUEUE)?;
    // CL_INVALID_CONTEXT "if context associated with command_queue was not created from a
    // Direct3D 1x context".
    let user_sync = registry::with(|r| {
        r.contexts
            .get(&context)
            .filter(|c| c.version == v)
            .map(|c| c.user_sync)
    })
    .ok_or(CL_INVALID_CONTEXT)?;
    // SAFETY: caller's contract: mem_objects holds num_objects handles.
    let mems: &[cl_mem] = unsafe { slice(mem_objects, num_objects) };
    let items = registry::with(|r| -> Result<Vec<Item>, cl_int> {
        let mut items = Vec::with_capacity(mems.len());
        for (i, &m) in mems.iter().enumerate() {
            // CL_INVALID_MEM_OBJECT "if memory objects in mem_objects are not valid OpenCL memory
            // objects or if memory objects in mem_objects have not been created from Direct3D 1x
            // resources".
            let e = r
                .mems
                .get(&key(m))
                .filter(|e| e.version == v)
                .ok_or(CL_INVALID_MEM_OBJECT)?;
            // Objects of another context cannot be acquired through this queue.
            if e.context != context {
                return Err(CL_INVALID_CONTEXT);
            }
            let repeated = mems[..i].contains(&m);
            if !release && (e.acquired || repeated) {
                // CL_D3D1x_RESOURCE_ALREADY_ACQUIRED "if memory objects in mem_objects have
                // previously been acquired using clEnqueueAcquireD3D1xObjects but have not been
                // released using clEnqueueReleaseD3D1xObjects".
                return Err(v.already_acquired());
            }
            if release && (!e.acquired || repeated) {
                // CL_D3D1x_RESOURCE_NOT_ACQUIRED "if memory objects in mem_objects have not
                // previously been acquired using clEnqueueAcquireD3D1xObjects, or have been
                // released using clEnqueueReleaseD3D1xObjects since the last time that they were
                // acquired".
                return Err(v.not_acquired());
            }
            items.push(Item {
                mem: m,
                kind: e.kind,
                strategy: e.strategy,
                interop: e.interop.clone(),
                staging: e.staging.clone(),
                last_upload: e.last_upload,
            });
        }
        Ok(items)
    })?;
    let sync = ext.flavor == Flavor::Nv || !user_sync;
    let context = context as opencl_sys::cl_context;
    let ev = if release {
        release_objects(queue, context, &items, wait, sync)?
    } else {
        acquire_objects(queue, context, &items, wait, sync)?
    };
    registry::with(|r| {
        for it in &items {
            if let Some(e) = r.mems.get_mut(&key(it.mem)) {
                e.acquired = !release;
            }
        }
    });
    // SAFETY: caller's contract.
    unsafe { hand_out(ev, command, event) };
    Ok(())
}

/// The external-memory objects among `items`.
fn external_mems(items: &[Item]) -> Vec<cl_mem> {
    items
        .iter()
        .filter(|i| is_external(i.strategy))
        .map(|i| i.mem)
        .collect()
}

/// Strategies whose memory objects are imported and bracketed by the external-memory calls.
fn is_external(s: Strategy) -> bool {
    matches!(s, Strategy::ExternalMemory | Strategy::ExternalCopy)
}

/// The GPU copies between subresources and their imported shadows (external-copy strategy).
fn shadow_copies(items: &[Item], to_resource: bool) {
    for it in items
        .iter()
        .filter(|i| i.strategy == Strategy::ExternalCopy)
    {
        if let Some(staging) = &it.staging {
            let s = staging.lock().unwrap_or_else(|p| p.into_inner());
            if to_resource {
                s.copy_out();
            } else {
                s.copy_in();
            }
        }
    }
}

/// Acquires the external-memory objects: after D3D's work (a GPU-side semaphore wait where the
/// context has shared semaphores, else a CPU wait), `clEnqueueAcquireExternalMemObjectsKHR`.
fn acquire_external(
    queue: cl_command_queue,
    context: opencl_sys::cl_context,
    items: &[Item],
    wait: &[cl_event],
    sync: bool,
) -> Result<Option<cl_event>, cl_int> {
    let mems = external_mems(items);
    if mems.is_empty() {
        return Ok(None);
    }
    let fns = external_cl::queue_memory_fns(queue)?;
    // The copies into shadows are D3D work this call issues itself: OpenCL must wait for them
    // even under user sync.
    shadow_copies(items, false);
    let sync = sync || items.iter().any(|i| i.strategy == Strategy::ExternalCopy);
    let semaphore = if sync {
        external_sync::d3d_then_cl(context, queue, wait)?
    } else {
        None
    };
    if sync && semaphore.is_none() {
        // No shared semaphores: "any Direct3D 1x calls ... made before
        // clEnqueueAcquireD3D1xObjects is called will complete executing before event reports
        // completion" holds by waiting here.
        for it in items.iter().filter(|i| is_external(i.strategy)) {
            if let Some(i) = &it.interop {
                interop::wait_for_device_work(i);
            }
        }
    }
    // The semaphore wait already follows the wait list.
    let after: Vec<cl_event> = semaphore.map_or_else(|| wait.to_vec(), |ev| vec![ev]);
    let (n, l) = wait_list(&after);
    let mut ev = std::ptr::null_mut();
    // SAFETY: a valid queue (checked by the caller's query); memory objects imported into its
    // context; a wait list of live events.
    let r = unsafe { (fns.acquire)(queue, mems.len() as cl_uint, mems.as_ptr(), n, l, &mut ev) };
    if let Some(s) = semaphore {
        release_event(s);
    }
    check(r)?;
    Ok(Some(ev))
}

fn acquire_objects(
    queue: cl_command_queue,
    context: opencl_sys::cl_context,
    items: &[Item],
    wait: &[cl_event],
    sync: bool,
) -> Result<cl_event, cl_int> {
    let external = acquire_external(queue, context, items, wait, sync)?;
    let mut uploads: Vec<cl_event> = Vec::new();
    for it in items {
        match it.strategy {
            Strategy::HostPointer => {
                if sync {
                    // "any Direct3D 1x calls ... made before clEnqueueAcquireD3D1xObjects is called
                    // will complete executing before event reports completion and before the
                    // execution of any subsequent OpenCL work issued in command_queue begins".
                    if let Some(i) = &it.interop {
                        interop::wait_for_device_work(i);
                    }
                }
            }
            Strategy::StagingCopy => {
                let Some(staging) = &it.staging else { continue };
                let mut s = staging.lock().unwrap_or_else(|p| p.into_inner());
                // Map waits for the D3D work on the resource, so the copy is synchronised even
                // under user sync (where that is allowed, not required).
                s.download().map_err(|_| opencl_sys::CL_OUT_OF_RESOURCES)?;
                let ev = enqueue_copy(queue, it, &mut s, false, wait)?;
                uploads.push(ev);
            }
            Strategy::ExternalMemory | Strategy::ExternalCopy => {}
        }
    }
    let mut all_wait: Vec<cl_event> = wait.to_vec();
    all_wait.extend(uploads.iter().copied());
    all_wait.extend(external);
    let result = if all_wait.is_empty() {
        marker(queue, &[])
    } else {
        marker(queue, &all_wait)
    };
    if let Some(ev) = external {
        release_event(ev);
    }
    // Remember each copy so the release waits for it; the previous one is no longer needed.
    let replaced: Vec<usize> = registry::with(|r| {
        items
            .iter()
            .filter(|i| i.strategy == Strategy::StagingCopy)
            .zip(uploads.iter())
            .filter_map(|(it, ev)| {
                r.mems
                    .get_mut(&key(it.mem))
                    .and_then(|e| e.last_upload.replace(*ev as usize))
            })
            .collect()
    });
    for old in replaced {
        release_event(old as cl_event);
    }
    result
}

fn release_objects(
    queue: cl_command_queue,
    context: opencl_sys::cl_context,
    items: &[Item],
    wait: &[cl_event],
    sync: bool,
) -> Result<cl_event, cl_int> {
    // All work already submitted to the queue, then the wait list (and for copies, the upload
    // that the acquire started, which may sit on another queue).
    let prior = marker(queue, &[])?;
    let mut all_wait: Vec<cl_event> = wait.to_vec();
    all_wait.push(prior);
    all_wait.extend(
        items
            .iter()
            .filter_map(|i| i.last_upload.map(|e| e as cl_event)),
    );
    let result = (|| {
        let mut reads = Vec::new();
        for it in items.iter().filter(|i| i.strategy == Strategy::StagingCopy) {
            let Some(staging) = &it.staging else { continue };
            let mut s = staging.lock().unwrap_or_else(|p| p.into_inner());
            reads.push(enqueue_copy(queue, it, &mut s, true, &all_wait)?);
        }
        if !reads.is_empty() {
            // A foreign device cannot wait for OpenCL: the release blocks until the data is read
            // back, then writes it into the resource.
            let wait_for = down!(clWaitForEvents);
            // SAFETY: events we own.
            let r = unsafe { wait_for(reads.len() as cl_uint, reads.as_ptr()) };
            for ev in &reads {
                release_event(*ev);
            }
            check(r)?;
            for it in items.iter().filter(|i| i.strategy == Strategy::StagingCopy) {
                if let Some(staging) = &it.staging {
                    let mut s = staging.lock().unwrap_or_else(|p| p.into_inner());
                    s.upload().map_err(|_| opencl_sys::CL_OUT_OF_RESOURCES)?;
                }
            }
        }
        // External memory goes back to D3D with clEnqueueReleaseExternalMemObjectsKHR.
        let mems = external_mems(items);
        let mut released = None;
        if !mems.is_empty() {
            let fns = external_cl::queue_memory_fns(queue)?;
            let (n, l) = wait_list(&all_wait);
            let mut ev = std::ptr::null_mut();
            // SAFETY: as in acquire_external.
            check(unsafe {
                (fns.release)(queue, mems.len() as cl_uint, mems.as_ptr(), n, l, &mut ev)
            })?;
            released = Some(ev);
        }
        let mut marker_wait = all_wait.clone();
        marker_wait.extend(released);
        let ev = marker(queue, &marker_wait);
        if let Some(r) = released {
            release_event(r);
        }
        let ev = ev?;
        // The copies out of shadows are D3D work this call issues: they must follow OpenCL's
        // release even under user sync.
        let copies = items.iter().any(|i| i.strategy == Strategy::ExternalCopy);
        if (sync || copies) && !mems.is_empty() {
            // "any calls to Direct3D 1x made after the call to clEnqueueReleaseD3D1xObjects will
            // not start executing until after all events in event_wait_list are complete and all
            // work already submitted to command_queue completes execution": on the GPU through a
            // shared semaphore, else through the runtime's pending-work wait on the CPU.
            if !external_sync::cl_then_d3d(context, queue, &[ev])? {
                for it in items.iter().filter(|i| is_external(i.strategy)) {
                    if let Some(i) = &it.interop {
                        interop::add_pending_work(i, ev);
                    }
                }
            }
            shadow_copies(items, true);
        }
        if sync {
            // "any calls to Direct3D 1x made after the call to clEnqueueReleaseD3D1xObjects will
            // not start executing until after all events in event_wait_list are complete and all
            // work already submitted to command_queue completes execution".
            for it in items.iter().filter(|i| i.strategy == Strategy::HostPointer) {
                if let Some(i) = &it.interop {
                    interop::add_pending_work(i, ev);
                }
            }
        }
        // The runtime may wait on the event from another thread: make sure it gets submitted.
        if let Some(flush) = crate::loader::target().and_then(|t| t.clFlush) {
            // SAFETY: a valid queue (checked by the marker above).
            unsafe { flush(queue) };
        }
        Ok(ev)
    })();
    release_event(prior);
    // Copies are back in D3D: their upload events are no longer needed.
    if result.is_ok() {
        let done: Vec<usize> = registry::with(|r| {
            items
                .iter()
                .filter_map(|it| {
                    r.mems
                        .get_mut(&key(it.mem))
                        .and_then(|e| e.last_upload.take())
                })
                .collect()
        });
        for ev in done {
            release_event(ev as cl_event);
        }
    }
    result
}

/// Enqueues the copy between a memory object and its staging shadow (tightly packed).
fn enqueue_copy(
    queue: cl_command_queue,
    it: &Item,
    staging: &mut Staging,
    read: bool,
    wait: &[cl_event],
) -> Result<cl_event, cl_int> {
    let (w, h, d) = staging.extent();
    let (w, h, d, size) = (w as usize, h as usize, d as usize, staging.shadow_len());
    let shadow: *mut c_void = staging.shadow_mut().as_mut_ptr().cast();
    let mut ev = std::ptr::null_mut();
    let (n, list) = wait_list(wait);
    let r = match (it.kind, read) {
        (ResourceKind::Buffer, true) => {
            let f = down!(clEnqueueReadBuffer);
            // SAFETY: shadow holds `size` bytes and stays alive (and untouched) until the copy
            // completes: the release waits for it, the acquire's copy is waited for by the
            // release before the shadow is reused.
            unsafe { f(queue, it.mem, CL_FALSE, 0, size, shadow, n, list, &mut ev) }
        }
        (ResourceKind::Buffer, false) => {
            let f = down!(clEnqueueWriteBuffer);
            // SAFETY: as above.
            unsafe { f(queue, it.mem, CL_FALSE, 0, size, shadow, n, list, &mut ev) }
        }
        (_, true) => {
            let f = down!(clEnqueueReadImage);
            let (origin, region) = ([0usize; 3], [w, h, d]);
            // SAFETY: as above; the shadow is w*h*d pixels, tightly packed (pitches 0).
            unsafe {
                f(
                    queue,
                    it.mem,
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
            let (origin, region) = ([0usize; 3], [w, h, d]);
            // SAFETY: as above.
            unsafe {
                f(
                    queue,
                    it.mem,
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

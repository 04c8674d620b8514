//! GPU-side ordering between Direct3D's queue and an OpenCL queue through shared binary
//! semaphores (`IDxclInteropDevice::*SharedSemaphore` on the D3D side, `cl_khr_semaphore` on ours).
//!
//! A binary semaphore must alternate signal and wait, so each context keeps a pool: a semaphore is
//! reused only when the runtime reports its submitted operations executed and our last CL command
//! on it completed. A context's pool opens with its first external-memory object and closes at
//! the application's last `clReleaseContext` ([`close_pool`]), on the application's thread. Not
//! with the last memory object: NVIDIA runs destructor callbacks late, on its own threads, and
//! destroying semaphores there raced process exit (the driver's Vulkan state was already torn
//! down: docs/gpu.md). The CL semaphores retain the context, so the platform destroys it when the
//! pool closes. Objects that outlive the application's context reference synchronise on the CPU.

use std::collections::HashMap;
use std::sync::Mutex;

use dxcl_abi::interop::IDxclInteropDevice;
use dxcl_abi::{SUCCEEDED, S_OK};
use opencl_sys::{
    cl_command_queue, cl_context, cl_event, cl_int, cl_semaphore_khr, cl_semaphore_properties_khr,
    CL_OUT_OF_RESOURCES, CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR, CL_SEMAPHORE_TYPE_BINARY_KHR,
    CL_SEMAPHORE_TYPE_KHR,
};

use super::cl::SemaphoreFns;
use crate::cl::events;
use crate::d3d::com::ComPtr;

struct Shared {
    id: u64,
    cl: cl_semaphore_khr,
    /// Our last command on it (retained), or null.
    last: cl_event,
}

struct Pool {
    /// Validation: tells dxcl's runtime that `device` is OpenCL's reference (goes first).
    #[allow(dead_code)] // Held for its Drop.
    validation: Option<crate::validate::DeviceMark>,
    device: ComPtr<IDxclInteropDevice>,
    fns: SemaphoreFns,
    context: cl_context,
    semaphores: Vec<Shared>,
}

// SAFETY: the raw handles are OpenCL objects and a COM pointer to dxcl's device, all usable from
// any thread; the pool is only reached under POOLS' lock.
unsafe impl Send for Pool {}

static POOLS: Mutex<Option<HashMap<usize, Pool>>> = Mutex::new(None);

fn pools() -> std::sync::MutexGuard<'static, Option<HashMap<usize, Pool>>> {
    POOLS.lock().unwrap_or_else(|p| p.into_inner())
}

fn event_done(ev: cl_event) -> bool {
    events::is_done(ev)
}

fn release_event(ev: cl_event) {
    events::release(ev);
}

impl Pool {
    fn idle(&self, s: &Shared) -> bool {
        let p = self.device.as_ptr();
        // SAFETY: a live IDxclInteropDevice of dxcl's runtime.
        let hr = unsafe { ((*(*p).lpVtbl).QuerySharedSemaphoreIdle)(p, s.id) };
        hr == S_OK && (s.last.is_null() || event_done(s.last))
    }

    /// An idle semaphore, created when none is.
    fn take(&mut self) -> Result<usize, cl_int> {
        if let Some(i) = (0..self.semaphores.len()).find(|&i| self.idle(&self.semaphores[i])) {
            return Ok(i);
        }
        let (mut id, mut fd) = (0u64, -1i32);
        let p = self.device.as_ptr();
        // SAFETY: a live IDxclInteropDevice; valid out pointers.
        let hr = unsafe { ((*(*p).lpVtbl).CreateSharedSemaphore)(p, &mut id, &mut fd) };
        if !SUCCEEDED(hr) {
            return Err(CL_OUT_OF_RESOURCES);
        }
        // cl_khr_external_semaphore: {type, binary, handle type, fd, 0}. No device list: every
        // context device imports it, and NVIDIA refuses one (docs/gpu.md).
        let props: [cl_semaphore_properties_khr; 5] = [
            CL_SEMAPHORE_TYPE_KHR as cl_semaphore_properties_khr,
            CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr,
            CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR as cl_semaphore_properties_khr,
            fd as cl_semaphore_properties_khr,
            0,
        ];
        let mut err = 0;
        // SAFETY: a valid context and a 0-terminated property list.
        let cl = unsafe { (self.fns.create)(self.context, props.as_ptr(), &mut err) };
        if err != 0 || cl.is_null() {
            // SAFETY: the import failed, so the fd is still ours; the id is ours to destroy.
            unsafe {
                libc::close(fd);
                ((*(*p).lpVtbl).DestroySharedSemaphore)(p, id);
            }
            return Err(if err != 0 { err } else { CL_OUT_OF_RESOURCES });
        }
        self.semaphores.push(Shared {
            id,
            cl,
            last: std::ptr::null_mut(),
        });
        Ok(self.semaphores.len() - 1)
    }

    fn set_last(&mut self, i: usize, ev: cl_event) {
        let old = std::mem::replace(&mut self.semaphores[i].last, ev);
        release_event(old);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if crate::strategy::logging_enabled() && !self.semaphores.is_empty() {
            eprintln!(
                "dxcl-layer: semaphore pool of context {:p}: destroyed ({} semaphores)",
                self.context,
                self.semaphores.len()
            );
        }
        let p = self.device.as_ptr();
        for s in self.semaphores.drain(..) {
            release_event(s.last);
            // SAFETY: our CL semaphore; the runtime's id, destroyed once (it waits for its own
            // submitted operations first).
            unsafe {
                (self.fns.release)(s.cl);
                ((*(*p).lpVtbl).DestroySharedSemaphore)(p, s.id);
            }
        }
    }
}

/// Opens `context`'s pool unless it has one. Without one (the runtime exports no semaphores),
/// acquire and release wait on the CPU.
pub(crate) fn open_pool(
    context: cl_context,
    device: &ComPtr<IDxclInteropDevice>,
    fns: SemaphoreFns,
) {
    let mut guard = pools();
    let map = guard.get_or_insert_with(HashMap::new);
    if map.contains_key(&(context as usize)) {
        return;
    }
    let device = device.clone();
    let mut pool = Pool {
        validation: crate::validate::DeviceMark::new(&device),
        device,
        fns,
        context,
        semaphores: Vec::new(),
    };
    // One semaphore up front tells whether the runtime has them at all (the host backend and
    // devices without exportable semaphores answer E_NOTIMPL).
    if pool.take().is_err() {
        return;
    }
    if crate::strategy::logging_enabled() {
        eprintln!("dxcl-layer: semaphore pool of context {context:p}: created");
    }
    map.insert(context as usize, pool);
}

/// Closes `context`'s pool, if it has one (the application released the context).
pub(crate) fn close_pool(context: cl_context) {
    let pool = pools().as_mut().and_then(|m| m.remove(&(context as usize)));
    // Dropped outside the lock: destroying waits for the runtime's queue.
    drop(pool);
}

/// Acquire: D3D signals after all its work issued so far; `queue` waits for that (after `wait`).
/// Returns the wait's event (owned by the caller), or None when the context has no pool.
pub(crate) fn d3d_then_cl(
    context: cl_context,
    queue: cl_command_queue,
    wait: &[cl_event],
) -> Result<Option<cl_event>, cl_int> {
    let mut guard = pools();
    let Some(pool) = guard.as_mut().and_then(|m| m.get_mut(&(context as usize))) else {
        return Ok(None);
    };
    let i = pool.take()?;
    let (id, sem) = (pool.semaphores[i].id, pool.semaphores[i].cl);
    let p = pool.device.as_ptr();
    // SAFETY: a live IDxclInteropDevice and an id it gave us.
    if !SUCCEEDED(unsafe { ((*(*p).lpVtbl).SignalSharedSemaphore)(p, id) }) {
        return Err(CL_OUT_OF_RESOURCES);
    }
    let (n, l) = crate::cl::wait_list(wait);
    let mut ev = std::ptr::null_mut();
    // SAFETY: a valid queue of the semaphore's context; the wait list is the caller's.
    let r = unsafe { (pool.fns.wait)(queue, 1, &sem, std::ptr::null(), n, l, &mut ev) };
    if r != 0 {
        return Err(r);
    }
    retain(ev);
    pool.set_last(i, ev);
    Ok(Some(ev))
}

/// Release: `queue` signals after `wait`; D3D's later work waits for it on the GPU. Returns false
/// when the context has no pool.
pub(crate) fn cl_then_d3d(
    context: cl_context,
    queue: cl_command_queue,
    wait: &[cl_event],
) -> Result<bool, cl_int> {
    let mut guard = pools();
    let Some(pool) = guard.as_mut().and_then(|m| m.get_mut(&(context as usize))) else {
        return Ok(false);
    };
    let i = pool.take()?;
    let (id, sem) = (pool.semaphores[i].id, pool.semaphores[i].cl);
    let (n, l) = crate::cl::wait_list(wait);
    let mut ev = std::ptr::null_mut();
    // SAFETY: as in d3d_then_cl.
    let r = unsafe { (pool.fns.signal)(queue, 1, &sem, std::ptr::null(), n, l, &mut ev) };
    if r != 0 {
        return Err(r);
    }
    // The runtime's wait must find the signal submitted.
    if let Some(flush) = crate::cl::target().and_then(|t| t.clFlush) {
        // SAFETY: a valid queue.
        unsafe { flush(queue) };
    }
    pool.set_last(i, ev);
    let p = pool.device.as_ptr();
    // SAFETY: a live IDxclInteropDevice and an id it gave us.
    if !SUCCEEDED(unsafe { ((*(*p).lpVtbl).WaitSharedSemaphore)(p, id) }) {
        return Err(CL_OUT_OF_RESOURCES);
    }
    Ok(true)
}

fn retain(ev: cl_event) {
    let _ = events::retain(ev);
}

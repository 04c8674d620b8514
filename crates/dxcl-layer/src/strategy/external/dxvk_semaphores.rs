//! DXVK's device as an `IDxclInteropDevice` that has shared semaphores, so that hand-offs of
//! DXVK textures are ordered on the GPU as dxcl's own are (docs/dxvk.md, "Ordering on the GPU").
//!
//! DXVK cannot be told to wait or signal, but its interop device lets an application use its
//! queue: `FlushRenderingCommands` submits everything recorded, `LockSubmissionQueue` waits until
//! DXVK's submission thread has handed all of it to the `VkQueue` and keeps it from submitting
//! more until `ReleaseSubmissionQueue`. An empty `vkQueueSubmit` made in between signals a
//! semaphore after all of DXVK's flushed work, or waits for one before all of its later work: a
//! semaphore signal's first synchronisation scope includes every command earlier in submission
//! order, a wait's second scope every command later in it (Vulkan, "Semaphore Signaling" and
//! "Semaphore Waiting"). The semaphores are binary and exported as opaque fds, which dxcl's
//! Vulkan layer lets DXVK's device do (`VK_KHR_external_semaphore_fd`). Each of our submissions
//! also signals the next value of a timeline semaphore of ours, which says when they executed.
//!
//! `SignalSharedSemaphore` does not flush: `FlushRenderingCommands` takes DXVK's context lock and
//! waits for its command thread, and the semaphore pool calls it under the pool's lock, which an
//! application thread inside `ID3D11Multithread::Enter` may be waiting for. The strategies flush
//! first, with no lock of the layer's held ([`DxvkFlush`], at each acquire), so the signal follows
//! every Direct3D call made before the acquire.
//!
//! Only the semaphore calls are implemented: the layer reaches this object through the strategy
//! code alone, never through DXVK's device, so the other calls answer what a runtime without them
//! answers.

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use ash::vk::{self, Handle};
use dxcl_abi::interop::{IDxclInteropDevice, IDxclInteropDeviceVtbl, DXCL_ADAPTER_INFO};
use dxcl_abi::*;

use crate::d3d::com::{query_one, ComPtr};
use crate::d3d::dxvk_com::{IDXGIVkInteropDevice1, VulkanHandles};
use crate::d3d::vk_loader::load;

/// How long destroying waits for our submissions on a semaphore before it leaks the semaphore
/// instead (a wait whose signal never came).
const DESTROY_WAIT_NS: u64 = 5_000_000_000;

/// The Vulkan calls made on DXVK's device.
#[derive(Clone, Copy)]
struct Fns {
    device: vk::Device,
    queue: vk::Queue,
    create_semaphore: vk::PFN_vkCreateSemaphore,
    destroy_semaphore: vk::PFN_vkDestroySemaphore,
    get_semaphore_fd: vk::PFN_vkGetSemaphoreFdKHR,
    queue_submit: vk::PFN_vkQueueSubmit,
    counter_value: vk::PFN_vkGetSemaphoreCounterValue,
    wait_semaphores: vk::PFN_vkWaitSemaphores,
}

/// One shared semaphore: the binary semaphore and the timeline value of our last submission on
/// it (0: none).
struct Shared {
    raw: vk::Semaphore,
    last: u64,
}

struct State {
    /// Ours: each of our submissions signals the next value. Null until the first semaphore.
    timeline: vk::Semaphore,
    /// The value the next submission signals.
    next_value: u64,
    next_id: u64,
    semaphores: HashMap<u64, Shared>,
}

#[repr(C)]
struct DxvkDevice {
    /// First: the object is its interface.
    vtbl: *const IDxclInteropDeviceVtbl,
    refs: AtomicU32,
    /// DXVK's interop device: keeps its `VkDevice` alive (released after `destroy`).
    dxvk: ComPtr<IDXGIVkInteropDevice1>,
    fns: Fns,
    state: Mutex<State>,
}

/// Submits what DXVK's immediate context has recorded and waits until its command thread has
/// passed it on (`FlushRenderingCommands`), for [`SignalSharedSemaphore`](signal_shared_semaphore)
/// to follow. Holds a counted reference to DXVK's interop device.
pub(crate) struct DxvkFlush(ComPtr<IDXGIVkInteropDevice1>);

impl DxvkFlush {
    /// None when `device` is not DXVK's.
    pub fn of(device: &ComPtr) -> Option<DxvkFlush> {
        device.query::<IDXGIVkInteropDevice1>().map(DxvkFlush)
    }

    /// Call with no lock of the layer's held (see the module's comment).
    pub fn flush(&self) {
        let d = self.0.as_ptr();
        // SAFETY: DXVK's live interop device (counted).
        unsafe { ((*(*d).lpVtbl).FlushRenderingCommands)(d) };
    }
}

/// DXVK's `device` as an interop device with shared semaphores; None when it is not DXVK's, or
/// its `VkDevice` cannot export semaphores as fds (dxcl's Vulkan layer was not in its chain, or
/// the driver has no such export).
pub(crate) fn interop_device(device: &ComPtr) -> Option<ComPtr<IDxclInteropDevice>> {
    let dxvk = device.query::<IDXGIVkInteropDevice1>()?;
    let h = VulkanHandles::of(&dxvk);
    // SAFETY: DXVK's live handles.
    let fns = unsafe { Fns::load(h.instance, h.physical, h.device, h.queue) }?;
    let object = Box::new(DxvkDevice {
        vtbl: &VTBL,
        refs: AtomicU32::new(1),
        dxvk,
        fns,
        state: Mutex::new(State {
            timeline: vk::Semaphore::null(),
            next_value: 1,
            next_id: 1,
            semaphores: HashMap::new(),
        }),
    });
    // SAFETY: a new object with one reference, which the ComPtr owns.
    unsafe { ComPtr::from_owned(Box::into_raw(object).cast::<IDxclInteropDevice>()) }
}

impl Fns {
    /// # Safety
    /// The handles are DXVK's live instance, physical device, device and queue.
    unsafe fn load(
        instance: vk::Instance,
        physical: vk::PhysicalDevice,
        device: vk::Device,
        queue: vk::Queue,
    ) -> Option<Fns> {
        if instance.is_null() || physical.is_null() || device.is_null() || queue.is_null() {
            return None;
        }
        let gipa = crate::d3d::vk_loader::loader_proc_addr()?;
        // SAFETY: each load is of DXVK's live instance or device (caller's contract) with its
        // name's function type; DXVK requires Vulkan 1.3, so the 1.1 and 1.2 core functions
        // exist. vkGetSemaphoreFdKHR exists only where the device enabled its extension.
        unsafe {
            let external: vk::PFN_vkGetPhysicalDeviceExternalSemaphoreProperties = load(
                gipa,
                instance,
                c"vkGetPhysicalDeviceExternalSemaphoreProperties",
            )?;
            let info = vk::PhysicalDeviceExternalSemaphoreInfo::default()
                .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
            let mut props = vk::ExternalSemaphoreProperties::default();
            external(physical, &info, &mut props);
            if !props
                .external_semaphore_features
                .contains(vk::ExternalSemaphoreFeatureFlags::EXPORTABLE)
            {
                return None;
            }
            let gdpa: vk::PFN_vkGetDeviceProcAddr = load(gipa, instance, c"vkGetDeviceProcAddr")?;
            Some(Fns {
                device,
                queue,
                create_semaphore: load(gdpa, device, c"vkCreateSemaphore")?,
                destroy_semaphore: load(gdpa, device, c"vkDestroySemaphore")?,
                get_semaphore_fd: load(gdpa, device, c"vkGetSemaphoreFdKHR")?,
                queue_submit: load(gdpa, device, c"vkQueueSubmit")?,
                counter_value: load(gdpa, device, c"vkGetSemaphoreCounterValue")?,
                wait_semaphores: load(gdpa, device, c"vkWaitSemaphores")?,
            })
        }
    }
}

impl DxvkDevice {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The timeline's value now; 0 when it cannot be read (a lost device).
    fn completed(&self, s: &State) -> u64 {
        let mut value = 0;
        // SAFETY: our live timeline semaphore on DXVK's device; a valid out value.
        let r = unsafe { (self.fns.counter_value)(self.fns.device, s.timeline, &mut value) };
        if r == vk::Result::SUCCESS {
            value
        } else {
            0
        }
    }

    /// Waits up to `timeout_ns` for the timeline to reach `value`; true also for a lost device,
    /// which runs nothing any more.
    fn wait_value(&self, s: &State, value: u64, timeout_ns: u64) -> bool {
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(std::slice::from_ref(&s.timeline))
            .values(std::slice::from_ref(&value));
        // SAFETY: our live timeline semaphore; a valid wait info.
        let r = unsafe { (self.fns.wait_semaphores)(self.fns.device, &info, timeout_ns) };
        r == vk::Result::SUCCESS || r == vk::Result::ERROR_DEVICE_LOST
    }

    /// A new semaphore; `export` makes it exportable as an opaque fd, `timeline` a timeline one.
    fn create_semaphore(&self, export: bool, timeline: bool) -> Option<vk::Semaphore> {
        let mut export_info = vk::ExportSemaphoreCreateInfo::default()
            .handle_types(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let mut type_info = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let mut info = vk::SemaphoreCreateInfo::default();
        if export {
            info = info.push_next(&mut export_info);
        }
        if timeline {
            info = info.push_next(&mut type_info);
        }
        let mut raw = vk::Semaphore::null();
        // SAFETY: DXVK's live device; a valid create info (its export was checked in `load`,
        // timeline semaphores are core in the Vulkan 1.3 DXVK requires).
        let r = unsafe {
            (self.fns.create_semaphore)(self.fns.device, &info, std::ptr::null(), &mut raw)
        };
        (r == vk::Result::SUCCESS).then_some(raw)
    }

    /// Submits, on DXVK's queue after all its flushed work, a batch that waits for `wait` (all
    /// stages), signals `signal`, and signals the timeline's next value; returns that value.
    fn submit(
        &self,
        s: &mut State,
        wait: Option<vk::Semaphore>,
        signal: Option<vk::Semaphore>,
    ) -> Result<u64, HRESULT> {
        let value = s.next_value;
        let mut signals = vec![s.timeline];
        let mut values = vec![value];
        if let Some(sem) = signal {
            signals.push(sem);
            values.push(0); // Ignored for a binary semaphore.
        }
        let waits: Vec<vk::Semaphore> = wait.into_iter().collect();
        let stages = vec![vk::PipelineStageFlags::ALL_COMMANDS; waits.len()];
        let wait_values = vec![0u64; waits.len()];
        let mut timeline = vk::TimelineSemaphoreSubmitInfo::default()
            .wait_semaphore_values(&wait_values)
            .signal_semaphore_values(&values);
        let batch = vk::SubmitInfo::default()
            .wait_semaphores(&waits)
            .wait_dst_stage_mask(&stages)
            .signal_semaphores(&signals)
            .push_next(&mut timeline);
        let d = self.dxvk.as_ptr();
        // SAFETY: DXVK's live interop device, used as its interface documents: the queue is ours
        // between LockSubmissionQueue and ReleaseSubmissionQueue; the batch's semaphores are
        // live semaphores of its device.
        let r = unsafe {
            ((*(*d).lpVtbl).LockSubmissionQueue)(d);
            let r = (self.fns.queue_submit)(self.fns.queue, 1, &batch, vk::Fence::null());
            ((*(*d).lpVtbl).ReleaseSubmissionQueue)(d);
            r
        };
        if r != vk::Result::SUCCESS {
            return Err(E_FAIL);
        }
        s.next_value += 1;
        Ok(value)
    }
}

static VTBL: IDxclInteropDeviceVtbl = IDxclInteropDeviceVtbl {
    base: IUnknownVtbl {
        QueryInterface: query_interface,
        AddRef: add_ref,
        Release: release,
    },
    GetAdapterInfo: get_adapter_info,
    CreateSharedSemaphore: create_shared_semaphore,
    SignalSharedSemaphore: signal_shared_semaphore,
    WaitSharedSemaphore: wait_shared_semaphore,
    QuerySharedSemaphoreIdle: query_shared_semaphore_idle,
    DestroySharedSemaphore: destroy_shared_semaphore,
    SetOpenCLReference: set_opencl_reference,
    RegisterHostMemory: register_host_memory,
    UnregisterHostMemory: unregister_host_memory,
};

/// # Safety
/// `this` is a live [`DxvkDevice`].
unsafe fn this<'a, T>(this: *mut T) -> &'a DxvkDevice {
    // SAFETY: every interface pointer handed out is the object itself (caller's contract).
    unsafe { &*this.cast::<DxvkDevice>() }
}

/// Runs `f` and turns a panic into E_FAIL: none crosses the COM boundary.
fn guarded(f: impl FnOnce() -> HRESULT) -> HRESULT {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(E_FAIL)
}

unsafe extern "system" fn query_interface(
    p: *mut IUnknown,
    riid: REFIID,
    out: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: COM contract; the object is its one interface.
    unsafe { query_one(p, riid, out, &IDxclInteropDevice::IID, add_ref) }
}

unsafe extern "system" fn add_ref(p: *mut IUnknown) -> ULONG {
    // SAFETY: COM contract.
    unsafe { this(p) }.refs.fetch_add(1, Ordering::Relaxed) + 1
}

unsafe extern "system" fn release(p: *mut IUnknown) -> ULONG {
    // SAFETY: COM contract.
    let left = unsafe { this(p) }.refs.fetch_sub(1, Ordering::AcqRel) - 1;
    if left == 0 {
        // SAFETY: the last reference: the Box made in `interop_device` is ours again. Dropping it
        // releases DXVK's device after `destroy`.
        let b = unsafe { Box::from_raw(p.cast::<DxvkDevice>()) };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.destroy()));
    }
    left
}

impl DxvkDevice {
    /// The last reference went: semaphores the layer did not destroy, then the timeline, once
    /// our submissions executed (left alone if they do not within the bound).
    fn destroy(&self) {
        let mut s = self.state();
        let (device, destroy) = (self.fns.device, self.fns.destroy_semaphore);
        if !s.timeline.is_null() && self.wait_value(&s, s.next_value - 1, DESTROY_WAIT_NS) {
            for (_, sem) in s.semaphores.drain() {
                // SAFETY: ours, and every submission of ours that used it has executed.
                unsafe { destroy(device, sem.raw, std::ptr::null()) };
            }
            // SAFETY: ours, and nothing pending uses it.
            unsafe { destroy(device, s.timeline, std::ptr::null()) };
        }
    }
}

/// No adapter facts: the layer reads DXVK's adapter through DXGI and Vulkan.
unsafe extern "system" fn get_adapter_info(
    _p: *mut IDxclInteropDevice,
    _info: *mut DXCL_ADAPTER_INFO,
) -> HRESULT {
    E_NOTIMPL
}

unsafe extern "system" fn create_shared_semaphore(
    p: *mut IDxclInteropDevice,
    id: *mut u64,
    fd: *mut c_int,
) -> HRESULT {
    if id.is_null() || fd.is_null() {
        return E_INVALIDARG;
    }
    // SAFETY: COM contract.
    let dev = unsafe { this(p) };
    guarded(|| {
        let mut s = dev.state();
        if s.timeline.is_null() {
            match dev.create_semaphore(false, true) {
                Some(t) => s.timeline = t,
                None => return E_OUTOFMEMORY,
            }
        }
        let Some(raw) = dev.create_semaphore(true, false) else {
            return E_OUTOFMEMORY;
        };
        let info = vk::SemaphoreGetFdInfoKHR::default()
            .semaphore(raw)
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let mut out = -1;
        // SAFETY: `raw` was made exportable as OPAQUE_FD; a valid out int.
        let r = unsafe { (dev.fns.get_semaphore_fd)(dev.fns.device, &info, &mut out) };
        if r != vk::Result::SUCCESS || out < 0 {
            // SAFETY: ours and unused.
            unsafe { (dev.fns.destroy_semaphore)(dev.fns.device, raw, std::ptr::null()) };
            return E_OUTOFMEMORY;
        }
        let new = s.next_id;
        s.next_id += 1;
        s.semaphores.insert(new, Shared { raw, last: 0 });
        // SAFETY: valid out pointers (checked non-null).
        unsafe {
            *id = new;
            *fd = out;
        }
        S_OK
    })
}

/// Submits a signal of semaphore `id` (`wait` false) or a wait for it, and keeps the submission's
/// timeline value as its last.
fn submit_on(dev: &DxvkDevice, id: u64, wait: bool) -> HRESULT {
    guarded(|| {
        let mut s = dev.state();
        let Some(raw) = s.semaphores.get(&id).map(|x| x.raw) else {
            return E_INVALIDARG;
        };
        let (waits, signals) = if wait {
            (Some(raw), None)
        } else {
            (None, Some(raw))
        };
        match dev.submit(&mut s, waits, signals) {
            Ok(value) => {
                if let Some(x) = s.semaphores.get_mut(&id) {
                    x.last = value;
                }
                S_OK
            }
            Err(hr) => hr,
        }
    })
}

/// "Submits at once, after all Direct3D work issued so far, a signal of the semaphore": all work
/// DXVK has been made to flush ([`DxvkFlush`]).
unsafe extern "system" fn signal_shared_semaphore(p: *mut IDxclInteropDevice, id: u64) -> HRESULT {
    // SAFETY: COM contract.
    submit_on(unsafe { this(p) }, id, false)
}

/// "Submits at once a wait for the semaphore: all Direct3D work issued later ... waits for it."
/// Work DXVK recorded earlier and has not submitted is held back too (not flushed first: that
/// costs a wait for DXVK's command thread, and after a release there is seldom any). "CPU access
/// through Map" waits only through DXVK's own tracking: a Map of a resource written after the
/// wait (the shadow's copy back) waits for that write, which follows the wait; the textures this
/// serves have no CPU access of their own.
unsafe extern "system" fn wait_shared_semaphore(p: *mut IDxclInteropDevice, id: u64) -> HRESULT {
    // SAFETY: COM contract.
    submit_on(unsafe { this(p) }, id, true)
}

unsafe extern "system" fn query_shared_semaphore_idle(
    p: *mut IDxclInteropDevice,
    id: u64,
) -> HRESULT {
    // SAFETY: COM contract.
    let dev = unsafe { this(p) };
    guarded(|| {
        let s = dev.state();
        let Some(last) = s.semaphores.get(&id).map(|x| x.last) else {
            return E_INVALIDARG;
        };
        if last == 0 || dev.completed(&s) >= last {
            S_OK
        } else {
            S_FALSE
        }
    })
}

/// "Waits for the semaphore's submitted operations, then destroys it." One that does not
/// execute within [`DESTROY_WAIT_NS`] is left alive rather than destroyed while in use.
unsafe extern "system" fn destroy_shared_semaphore(p: *mut IDxclInteropDevice, id: u64) -> HRESULT {
    // SAFETY: COM contract.
    let dev = unsafe { this(p) };
    guarded(|| {
        let mut s = dev.state();
        let Some(sem) = s.semaphores.remove(&id) else {
            return E_INVALIDARG;
        };
        if sem.last == 0 || dev.wait_value(&s, sem.last, DESTROY_WAIT_NS) {
            // SAFETY: ours, and every submission of ours that used it has executed.
            unsafe { (dev.fns.destroy_semaphore)(dev.fns.device, sem.raw, std::ptr::null()) };
        }
        S_OK
    })
}

/// "S_FALSE when validation is off": DXVK has no validation of dxcl's.
unsafe extern "system" fn set_opencl_reference(
    _p: *mut IDxclInteropDevice,
    _held: BOOL,
) -> HRESULT {
    S_FALSE
}

/// Host memory is not copied through DXVK's device: staging copies map DXVK's own resources.
unsafe extern "system" fn register_host_memory(
    _p: *mut IDxclInteropDevice,
    _host: *mut c_void,
    _size: u64,
) -> HRESULT {
    E_NOTIMPL
}

unsafe extern "system" fn unregister_host_memory(
    _p: *mut IDxclInteropDevice,
    _host: *mut c_void,
) -> HRESULT {
    E_INVALIDARG
}

//! The `IDxclInteropResource` a shared texture carries: it owns the texture's Vulkan image and
//! memory, describes them to the layer, and orders against DXVK on the CPU.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicU32, Ordering};

use ash::vk;
use dxcl_abi::interop::{
    IDxclInteropResource, IDxclInteropResourceVtbl, DXCL_BOX, DXCL_MEMORY_KIND, DXCL_OPENCL_ACCESS,
    DXCL_RESOURCE_MEMORY, DXCL_SUBRESOURCE_LAYOUT, PFN_DXCL_PENDING_ORDER,
    PFN_DXCL_PENDING_RELEASE, PFN_DXCL_PENDING_WAIT, PFN_DXCL_PIECE_DONE,
};
use dxcl_abi::*;

use crate::d3d::dxvk_com::IDXGIVkInteropDevice1;

/// The Vulkan functions a shared texture's object uses, from DXVK's device.
#[derive(Clone, Copy)]
pub(super) struct Vk {
    pub device: vk::Device,
    pub queue: vk::Queue,
    pub destroy_image: vk::PFN_vkDestroyImage,
    pub free_memory: vk::PFN_vkFreeMemory,
    pub unmap_memory: vk::PFN_vkUnmapMemory,
    pub queue_wait_idle: vk::PFN_vkQueueWaitIdle,
}

/// The image and memory behind a shared texture.
pub(super) struct Allocation {
    pub image: vk::Image,
    pub memory: vk::DeviceMemory,
    /// HOST: the whole memory, mapped; null for OPAQUE_FD_IMAGE.
    pub host: *mut c_void,
    pub size: u64,
    pub layout: DXCL_SUBRESOURCE_LAYOUT,
    pub kind: DXCL_MEMORY_KIND,
    /// OPAQUE_FD_IMAGE: DXVK's device's `vkGetMemoryFdKHR` (dxcl's Vulkan layer enables it).
    pub get_fd: Option<vk::PFN_vkGetMemoryFdKHR>,
}

/// The `IDxclInteropResource` of a shared texture: owns its image and memory.
#[repr(C)]
pub(super) struct SharedMemory {
    /// First: the object is its interface.
    vtbl: *const IDxclInteropResourceVtbl,
    refs: AtomicU32,
    /// DXVK's device (counted).
    dxvk: *mut IDXGIVkInteropDevice1,
    vk: Vk,
    a: Allocation,
}

impl SharedMemory {
    /// A new object with one reference, owning `a` and a reference to `dxvk`.
    ///
    /// # Safety
    /// `dxvk` is DXVK's live interop device; `a` was made on its `VkDevice`, which `vk` calls.
    pub(super) unsafe fn create(
        dxvk: *mut IDXGIVkInteropDevice1,
        vk: Vk,
        a: Allocation,
    ) -> *mut IUnknown {
        // SAFETY: a live interface (caller's contract): the object keeps its own reference.
        unsafe { ((*(*dxvk).lpVtbl).base.AddRef)(dxvk.cast()) };
        let object = Box::new(SharedMemory {
            vtbl: &VTBL,
            refs: AtomicU32::new(1),
            dxvk,
            vk,
            a,
        });
        Box::into_raw(object).cast()
    }
}

static VTBL: IDxclInteropResourceVtbl = IDxclInteropResourceVtbl {
    base: IUnknownVtbl {
        QueryInterface: query_interface,
        AddRef: add_ref,
        Release: release,
    },
    GetMemory: get_memory,
    GetSubresourceLayout: get_subresource_layout,
    ExportMemoryFd: export_memory_fd,
    WaitForDeviceWork: wait_for_device_work,
    AddPendingWork: add_pending_work,
    SetOpenCLAccess: set_opencl_access,
    QueryDeviceWorkDone: query_device_work_done,
    AddPendingWorkOrdered: add_pending_work_ordered,
    CopyToHost: copy_to_host,
    CopyFromHost: copy_from_host,
};

/// # Safety
/// `this` is a live [`SharedMemory`].
unsafe fn this<'a, T>(this: *mut T) -> &'a SharedMemory {
    // SAFETY: every interface pointer handed out is the object itself (caller's contract).
    unsafe { &*this.cast::<SharedMemory>() }
}

unsafe extern "system" fn query_interface(
    p: *mut IUnknown,
    riid: REFIID,
    out: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: COM contract; the object is its one interface.
    unsafe { crate::d3d::com::query_one(p, riid, out, &IDxclInteropResource::IID, add_ref) }
}

unsafe extern "system" fn add_ref(p: *mut IUnknown) -> ULONG {
    // SAFETY: COM contract.
    unsafe { this(p) }.refs.fetch_add(1, Ordering::Relaxed) + 1
}

/// IUnknown::Release of the object (also used by its creator to drop its reference).
///
/// # Safety
/// COM contract: `p` is a live object of this module.
pub(super) unsafe extern "system" fn release(p: *mut IUnknown) -> ULONG {
    // SAFETY: COM contract.
    let left = unsafe { this(p) }.refs.fetch_sub(1, Ordering::AcqRel) - 1;
    if left == 0 {
        // SAFETY: the last reference: the Box made in `create` is ours again.
        let b = unsafe { Box::from_raw(p.cast::<SharedMemory>()) };
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.destroy()));
    }
    left
}

impl SharedMemory {
    /// Waits until DXVK has run everything it was given: its rendering commands flushed to its
    /// submission thread, everything submitted (the queue lock waits for that), the queue idle.
    fn wait_idle(&self) {
        let d = self.dxvk;
        // SAFETY: DXVK's live interop device (counted); its documented use of these calls: lock
        // the queue around our own use of it.
        unsafe {
            ((*(*d).lpVtbl).FlushRenderingCommands)(d);
            ((*(*d).lpVtbl).LockSubmissionQueue)(d);
            // A lost device has nothing left to wait for.
            let _ = (self.vk.queue_wait_idle)(self.vk.queue);
            ((*(*d).lpVtbl).ReleaseSubmissionQueue)(d);
        }
    }

    /// The texture is gone (its private data released) and so is every other holder: once DXVK's
    /// queue is idle nothing uses the image or memory any more.
    fn destroy(&self) {
        self.wait_idle();
        // SAFETY: our image and memory on DXVK's device, unused now; the device reference is ours.
        unsafe {
            if !self.a.host.is_null() {
                (self.vk.unmap_memory)(self.vk.device, self.a.memory);
            }
            (self.vk.destroy_image)(self.vk.device, self.a.image, std::ptr::null());
            (self.vk.free_memory)(self.vk.device, self.a.memory, std::ptr::null());
            ((*(*self.dxvk).lpVtbl).base.Release)(self.dxvk.cast());
        }
    }
}

unsafe extern "system" fn get_memory(
    p: *mut IDxclInteropResource,
    out: *mut DXCL_RESOURCE_MEMORY,
) -> HRESULT {
    if out.is_null() {
        return E_INVALIDARG;
    }
    // SAFETY: COM contract.
    let s = unsafe { this(p) };
    // SAFETY: a writable out struct (checked non-null).
    unsafe {
        *out = DXCL_RESOURCE_MEMORY {
            Kind: s.a.kind,
            Reserved: 0,
            pHost: s.a.host,
            Size: s.a.size,
        }
    };
    S_OK
}

unsafe extern "system" fn get_subresource_layout(
    p: *mut IDxclInteropResource,
    subresource: UINT,
    out: *mut DXCL_SUBRESOURCE_LAYOUT,
) -> HRESULT {
    // "E_INVALIDARG past the last subresource": a shared texture has one.
    if out.is_null() || subresource != 0 {
        return E_INVALIDARG;
    }
    // SAFETY: COM contract; a writable out struct.
    unsafe { *out = this(p).a.layout };
    S_OK
}

/// "OPAQUE_FD memory: a new file descriptor, owned by the caller. E_NOTIMPL for HOST memory."
unsafe extern "system" fn export_memory_fd(
    p: *mut IDxclInteropResource,
    out: *mut c_int,
) -> HRESULT {
    if out.is_null() {
        return E_INVALIDARG;
    }
    // SAFETY: COM contract.
    let s = unsafe { this(p) };
    let Some(get_fd) = s.a.get_fd else {
        return E_NOTIMPL;
    };
    let info = vk::MemoryGetFdInfoKHR::default()
        .memory(s.a.memory)
        .handle_type(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
    let mut fd = -1;
    // SAFETY: our exportable memory on DXVK's device; a valid out int.
    if unsafe { get_fd(s.vk.device, &info, &mut fd) } != vk::Result::SUCCESS || fd < 0 {
        return E_OUTOFMEMORY;
    }
    // SAFETY: a writable out int (checked non-null).
    unsafe { *out = fd };
    S_OK
}

unsafe extern "system" fn wait_for_device_work(p: *mut IDxclInteropResource) -> HRESULT {
    // SAFETY: COM contract.
    unsafe { this(p) }.wait_idle();
    S_OK
}

/// DXVK cannot be made to run callbacks before its next access: refused, so the layer waits now.
unsafe extern "system" fn add_pending_work(
    _p: *mut IDxclInteropResource,
    _wait: PFN_DXCL_PENDING_WAIT,
    _release: PFN_DXCL_PENDING_RELEASE,
    _context: *mut c_void,
) -> HRESULT {
    E_NOTIMPL
}

unsafe extern "system" fn add_pending_work_ordered(
    _p: *mut IDxclInteropResource,
    _wait: PFN_DXCL_PENDING_WAIT,
    _order: PFN_DXCL_PENDING_ORDER,
    _release: PFN_DXCL_PENDING_RELEASE,
    _context: *mut c_void,
) -> HRESULT {
    E_NOTIMPL
}

/// The memory is DXVK's texture: the staging copy maps DXVK's own staging resources instead
/// ("E_NOTIMPL where it cannot").
#[allow(clippy::too_many_arguments)] // The interface's signature.
unsafe extern "system" fn copy_to_host(
    _p: *mut IDxclInteropResource,
    _subresource: UINT,
    _host: *mut c_void,
    _size: u64,
    _pieces: *const DXCL_BOX,
    _count: UINT,
    _done: PFN_DXCL_PIECE_DONE,
    _context: *mut c_void,
) -> HRESULT {
    E_NOTIMPL
}

/// As `copy_to_host`.
unsafe extern "system" fn copy_from_host(
    _p: *mut IDxclInteropResource,
    _subresource: UINT,
    _host: *const c_void,
    _size: u64,
) -> HRESULT {
    E_NOTIMPL
}

/// "S_FALSE when validation is off": DXVK has no validation of dxcl's.
unsafe extern "system" fn set_opencl_access(
    _p: *mut IDxclInteropResource,
    _subresource: UINT,
    _access: DXCL_OPENCL_ACCESS,
    _call: *const c_char,
) -> HRESULT {
    S_FALSE
}

/// Nothing cheap tells whether DXVK's work on the texture is done: pending, so callers wait.
unsafe extern "system" fn query_device_work_done(_p: *mut IDxclInteropResource) -> HRESULT {
    S_FALSE
}

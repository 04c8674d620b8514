//! dxcl's private interop faces (`IDxclInteropResource`, `IDxclInteropDevice`), as specified in
//! docs/architecture.md.

use super::abi::*;
use super::backend_error;
use super::guard::guard;
use super::object::*;
use super::resource::{Resource, INTEROP_FACE};
use super::shared::{Device, INTEROP_DEVICE_FACE};
use crate::backend::{BackendError, BackendKind, MemoryKind};
use std::sync::atomic::{AtomicU64, Ordering};

/// Shared-semaphore signals and waits that succeeded in this process, on any device.
static SEMAPHORE_OPERATIONS: AtomicU64 = AtomicU64::new(0);

/// How many `SignalSharedSemaphore` and `WaitSharedSemaphore` calls have succeeded in this
/// process so far, on any device: how a program that links the runtime sees whether an OpenCL
/// layer synchronised with it on the GPU (the count grows) or on the CPU (it does not).
pub fn shared_semaphore_operations() -> u64 {
    SEMAPHORE_OPERATIONS.load(Ordering::Relaxed)
}

/// CopyToHost calls that succeeded in this process, on any device.
static HOST_COPIES: AtomicU64 = AtomicU64::new(0);

/// How many `CopyToHost` calls have succeeded in this process so far: how a program that links
/// the runtime sees whether the OpenCL layer's staging copies went straight into its shadow.
pub fn host_copies() -> u64 {
    HOST_COPIES.load(Ordering::Relaxed)
}

fn counted(r: Result<(), BackendError>) -> HRESULT {
    if r.is_ok() {
        SEMAPHORE_OPERATIONS.fetch_add(1, Ordering::Relaxed);
    }
    semaphore_result(r)
}

type R = Resource;
const RO: usize = INTEROP_FACE;

pub static INTEROP_RESOURCE_VTBL: IDxclInteropResourceVtbl = IDxclInteropResourceVtbl {
    base: unknown_vtbl::<R, RO>(),
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
/// `this` is the interop face of a live resource.
unsafe fn res<'a>(this: *mut IDxclInteropResource) -> &'a Resource {
    // SAFETY: function contract.
    unsafe { object::<Resource, _>(this, RO) }
}

unsafe extern "system" fn get_memory(
    this: *mut IDxclInteropResource,
    out: *mut DXCL_RESOURCE_MEMORY,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let a = unsafe { res(this) }.allocation();
        let kind = match a.kind {
            MemoryKind::Host => DXCL_MEMORY_KIND_HOST,
            MemoryKind::OpaqueFd => DXCL_MEMORY_KIND_OPAQUE_FD,
            MemoryKind::OpaqueFdImage => DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE,
        };
        // SAFETY: non-null and writable (COM contract).
        unsafe {
            *out = DXCL_RESOURCE_MEMORY {
                Kind: kind,
                Reserved: 0,
                pHost: a.host.cast(),
                Size: a.size,
            }
        };
        S_OK
    })
}

unsafe extern "system" fn get_subresource_layout(
    this: *mut IDxclInteropResource,
    sub: u32,
    out: *mut DXCL_SUBRESOURCE_LAYOUT,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let Some(s) = unsafe { res(this) }.layout().subresource(sub).copied() else {
            // GetSubresourceLayout: "E_INVALIDARG past the last" subresource.
            return E_INVALIDARG;
        };
        // SAFETY: non-null and writable (COM contract).
        unsafe {
            *out = DXCL_SUBRESOURCE_LAYOUT {
                Offset: s.offset,
                Size: s.size,
                RowPitch: s.row_pitch,
                DepthPitch: s.depth_pitch,
                Width: s.width,
                Height: s.height,
                Depth: s.depth,
                Reserved: 0,
            }
        };
        S_OK
    })
}

unsafe extern "system" fn export_memory_fd(
    this: *mut IDxclInteropResource,
    out: *mut i32,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let r = unsafe { res(this) };
        // SAFETY: the allocation belongs to the resource's device's backend.
        match unsafe { r.device_backend().export_fd(r.allocation()) } {
            Ok(fd) => {
                // SAFETY: non-null and writable (COM contract).
                unsafe { *out = fd };
                S_OK
            }
            // ExportMemoryFd: "E_NOTIMPL for HOST" memory.
            Err(e) => backend_error(e),
        }
    })
}

unsafe extern "system" fn wait_for_device_work(this: *mut IDxclInteropResource) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract.
        unsafe { res(this) }.wait_idle();
        S_OK
    })
}

unsafe extern "system" fn add_pending_work(
    this: *mut IDxclInteropResource,
    wait: PFN_DXCL_PENDING_WAIT,
    release: PFN_DXCL_PENDING_RELEASE,
    context: *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: `this` is this face of a live object.
        unsafe { res(this) }.add_pending(wait, release, context)
    })
}

unsafe extern "system" fn query_device_work_done(this: *mut IDxclInteropResource) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: `this` is this face of a live object.
        let r = unsafe { res(this) };
        // QueryDeviceWorkDone: "S_OK when all Direct3D work issued so far that touches the
        // resource has completed on the device, S_FALSE when some is still pending."
        if r.device_work_done() {
            S_OK
        } else {
            S_FALSE
        }
    })
}

unsafe extern "system" fn add_pending_work_ordered(
    this: *mut IDxclInteropResource,
    wait: PFN_DXCL_PENDING_WAIT,
    order: PFN_DXCL_PENDING_ORDER,
    release: PFN_DXCL_PENDING_RELEASE,
    context: *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: `this` is this face of a live object.
        unsafe { res(this) }.add_pending_ordered(wait, order, release, context)
    })
}

/// The packed size of a subresource (rows of its blocks, slices of its rows), for CopyToHost and
/// CopyFromHost; `None` past the last subresource and for multisampled resources, which have no
/// host copies.
fn packed_size(r: &Resource, sub: u32) -> Option<u64> {
    if r.desc.sample_count > 1 {
        return None;
    }
    let layout = r.layout();
    let full = layout.full_region(sub)?;
    Some(full.w as u64 * layout.block.2 as u64 * full.h as u64 * full.d as u64)
}

unsafe extern "system" fn copy_to_host(
    this: *mut IDxclInteropResource,
    sub: u32,
    host: *mut c_void,
    size: u64,
    pieces: *const DXCL_BOX,
    count: u32,
    done: PFN_DXCL_PIECE_DONE,
    context: *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: `this` is this face of a live object.
        let r = unsafe { res(this) };
        // CopyToHost: "E_INVALIDARG for a wrong Size or a box outside the subresource."
        if host.is_null() || (pieces.is_null() && count > 0) || packed_size(r, sub) != Some(size) {
            return E_INVALIDARG;
        }
        let boxes: &[DXCL_BOX] = if count == 0 {
            &[]
        } else {
            // SAFETY: pPieces holds NumPieces boxes (the interface's contract).
            unsafe { std::slice::from_raw_parts(pieces, count as usize) }
        };
        let mut regions = Vec::with_capacity(boxes.len());
        for b in boxes {
            let t = crate::core::TexelBox {
                left: b.Left,
                top: b.Top,
                front: b.Front,
                right: b.Right,
                bottom: b.Bottom,
                back: b.Back,
            };
            match r.layout().box_region(sub, &t) {
                Some(region) => regions.push(region),
                None => return E_INVALIDARG,
            }
        }
        // "after the pending work (as a Map)".
        r.run_pending();
        let mut each = |i: usize| {
            if let Some(f) = done {
                // SAFETY: the caller's callback and context (the interface's contract).
                unsafe { f(context, i as u32) };
            }
        };
        // SAFETY: the allocation is the resource's, of its device's backend; the regions were
        // checked against the subresource; `host` holds `size` bytes, the packed subresource
        // (checked above), which the caller does not touch during the call.
        match unsafe {
            r.device_backend()
                .read_to_host(r.allocation(), sub, &regions, host.cast(), &mut each)
        } {
            Ok(()) => {
                HOST_COPIES.fetch_add(1, Ordering::Relaxed);
                S_OK
            }
            Err(e) => backend_error(e),
        }
    })
}

unsafe extern "system" fn copy_from_host(
    this: *mut IDxclInteropResource,
    sub: u32,
    host: *const c_void,
    size: u64,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: `this` is this face of a live object.
        let r = unsafe { res(this) };
        // As CopyToHost: "E_INVALIDARG for a wrong Size".
        if host.is_null() || packed_size(r, sub) != Some(size) {
            return E_INVALIDARG;
        }
        // "after the pending work (as an update)".
        r.run_pending_gpu();
        // SAFETY: the allocation is the resource's; `host` holds the packed subresource.
        match unsafe {
            r.device_backend()
                .write_from_host(r.allocation(), sub, host.cast())
        } {
            Ok(()) => S_OK,
            Err(e) => backend_error(e),
        }
    })
}

unsafe extern "system" fn set_opencl_access(
    this: *mut IDxclInteropResource,
    sub: u32,
    access: DXCL_OPENCL_ACCESS,
    call: *const c_char,
) -> HRESULT {
    guard(E_FAIL, || {
        // SetOpenCLAccess: "S_FALSE when validation is off (nothing recorded)".
        if !super::validation::on() {
            return S_FALSE;
        }
        // SAFETY: COM contract: `this` is this face of a live object.
        let r = unsafe { res(this) };
        // "E_INVALIDARG past the last subresource", and for an access the enum does not name.
        if sub >= r.desc.subresource_count()
            || !(DXCL_OPENCL_ACCESS_NONE..=DXCL_OPENCL_ACCESS_ACQUIRED).contains(&access)
        {
            return E_INVALIDARG;
        }
        let call = if call.is_null() {
            "OpenCL".into()
        } else {
            // SAFETY: a non-null pCall is a NUL-terminated string (the interface's contract).
            unsafe { std::ffi::CStr::from_ptr(call) }.to_string_lossy()
        };
        r.opencl.set(sub, access, &call);
        S_OK
    })
}

type D = Device;
const DO: usize = INTEROP_DEVICE_FACE;

pub static INTEROP_DEVICE_VTBL: IDxclInteropDeviceVtbl = IDxclInteropDeviceVtbl {
    base: unknown_vtbl::<D, DO>(),
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
/// `this` is the interop face of a live device.
unsafe fn dev<'a>(this: *mut IDxclInteropDevice) -> &'a Device {
    // SAFETY: function contract.
    unsafe { object::<Device, _>(this, DO) }
}

/// Maps a backend result to the interface's `HRESULT`: "the host backend answers E_NOTIMPL to
/// all five calls", and "E_INVALIDARG for an unknown Id" (dxcl_interop.h).
fn semaphore_result(r: Result<(), BackendError>) -> HRESULT {
    match r {
        Ok(()) => S_OK,
        Err(e) => backend_error(e),
    }
}

unsafe extern "system" fn create_shared_semaphore(
    this: *mut IDxclInteropDevice,
    id: *mut u64,
    fd: *mut i32,
) -> HRESULT {
    guard(E_FAIL, || {
        if id.is_null() || fd.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        match unsafe { dev(this) }.backend.create_shared_semaphore() {
            Ok((new_id, new_fd)) => {
                // SAFETY: both non-null and writable (COM contract).
                unsafe {
                    *id = new_id;
                    *fd = new_fd;
                }
                S_OK
            }
            Err(e) => backend_error(e),
        }
    })
}

unsafe extern "system" fn signal_shared_semaphore(
    this: *mut IDxclInteropDevice,
    id: u64,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: `this` is this face of a live device.
        let device = unsafe { dev(this) };
        counted(device.backend.signal_shared_semaphore(id))
    })
}

unsafe extern "system" fn wait_shared_semaphore(this: *mut IDxclInteropDevice, id: u64) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: `this` is this face of a live device.
        let device = unsafe { dev(this) };
        counted(device.backend.wait_shared_semaphore(id))
    })
}

unsafe extern "system" fn query_shared_semaphore_idle(
    this: *mut IDxclInteropDevice,
    id: u64,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract.
        match unsafe { dev(this) }.backend.shared_semaphore_idle(id) {
            Ok(true) => S_OK,
            Ok(false) => S_FALSE,
            Err(e) => backend_error(e),
        }
    })
}

unsafe extern "system" fn destroy_shared_semaphore(
    this: *mut IDxclInteropDevice,
    id: u64,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: `this` is this face of a live device.
        let device = unsafe { dev(this) };
        semaphore_result(device.backend.destroy_shared_semaphore(id))
    })
}

unsafe extern "system" fn set_opencl_reference(
    this: *mut IDxclInteropDevice,
    held: BOOL,
) -> HRESULT {
    guard(E_FAIL, || {
        // SetOpenCLReference: "S_FALSE when validation is off".
        if !super::validation::on() {
            return S_FALSE;
        }
        // SAFETY: COM contract: `this` is this face of a live device.
        unsafe { dev(this) }.validation.opencl_reference(held != 0);
        S_OK
    })
}

unsafe extern "system" fn register_host_memory(
    this: *mut IDxclInteropDevice,
    host: *mut c_void,
    size: u64,
) -> HRESULT {
    guard(E_FAIL, || {
        if host.is_null() || size == 0 {
            return E_INVALIDARG;
        }
        // SAFETY: COM contract: `this` is this face of a live device. RegisterHostMemory's
        // contract: the memory stays valid until UnregisterHostMemory returns.
        match unsafe { dev(this).backend.register_host(host.cast(), size as usize) } {
            Ok(true) => S_OK,
            // "the host backend needs no registration and answers S_FALSE".
            Ok(false) => S_FALSE,
            Err(e) => backend_error(e),
        }
    })
}

unsafe extern "system" fn unregister_host_memory(
    this: *mut IDxclInteropDevice,
    host: *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract: `this` is this face of a live device.
        // UnregisterHostMemory: "E_INVALIDARG when nothing is registered there".
        semaphore_result(unsafe { dev(this) }.backend.unregister_host(host.cast()))
    })
}

unsafe extern "system" fn get_adapter_info(
    this: *mut IDxclInteropDevice,
    out: *mut DXCL_ADAPTER_INFO,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let a = unsafe { dev(this) }.backend.adapter();
        let backend = match a.backend {
            BackendKind::Host => DXCL_BACKEND_KIND_HOST,
            BackendKind::Vulkan => DXCL_BACKEND_KIND_VULKAN,
        };
        // SAFETY: non-null and writable (COM contract).
        unsafe {
            *out = DXCL_ADAPTER_INFO {
                Backend: backend,
                VendorId: a.vendor_id,
                DeviceId: a.device_id,
                AdapterLuid: LUID {
                    LowPart: a.luid.0,
                    HighPart: a.luid.1,
                },
                DeviceUuid: a.uuid,
                Flags: if a.software {
                    DXCL_ADAPTER_FLAG_SOFTWARE as u32
                } else {
                    0
                },
            }
        };
        S_OK
    })
}

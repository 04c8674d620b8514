//! dxcl's private interop interface on resources (`IDxclInteropResource`).

use std::ffi::c_void;

use opencl_sys::{cl_event, cl_uint};

use super::com::ComPtr;
use super::sys::{
    method, IID_IDxclInteropResource, DXCL_MEMORY_KIND_HOST, DXCL_RESOURCE_MEMORY,
    DXCL_SUBRESOURCE_LAYOUT, HRESULT, INTEROP_RESOURCE_ADD_PENDING_WORK,
    INTEROP_RESOURCE_GET_MEMORY, INTEROP_RESOURCE_GET_SUBRESOURCE_LAYOUT,
    INTEROP_RESOURCE_WAIT_FOR_DEVICE_WORK, PFN_DXCL_PENDING,
};

pub(crate) struct Interop {
    pub com: ComPtr,
    memory: Option<DXCL_RESOURCE_MEMORY>,
}

/// Where a subresource lies in the resource's memory.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub offset: u64,
    pub row_pitch: u32,
    pub depth_pitch: u32,
}

impl Interop {
    /// The interface, when the resource is one of dxcl's.
    pub fn query(resource: &ComPtr) -> Option<Interop> {
        let com = resource.query(&IID_IDxclInteropResource)?;
        type GetMemory =
            unsafe extern "system" fn(*mut c_void, *mut DXCL_RESOURCE_MEMORY) -> HRESULT;
        let mut m = DXCL_RESOURCE_MEMORY {
            Kind: 0,
            Reserved: 0,
            pHost: std::ptr::null_mut(),
            Size: 0,
        };
        // SAFETY: an IDxclInteropResource; slot 3 is GetMemory.
        let hr = unsafe {
            method::<GetMemory>(com.as_ptr(), INTEROP_RESOURCE_GET_MEMORY)(com.as_ptr(), &mut m)
        };
        Some(Interop {
            com,
            memory: (hr >= 0).then_some(m),
        })
    }

    /// (pHost, Size) when the memory is host memory.
    pub fn host_memory(&self) -> Option<(*mut c_void, u64)> {
        self.memory
            .filter(|m| m.Kind == DXCL_MEMORY_KIND_HOST && !m.pHost.is_null())
            .map(|m| (m.pHost, m.Size))
    }

    pub fn layout(&self, subresource: u32) -> Option<Layout> {
        type GetLayout =
            unsafe extern "system" fn(*mut c_void, u32, *mut DXCL_SUBRESOURCE_LAYOUT) -> HRESULT;
        let mut l = DXCL_SUBRESOURCE_LAYOUT::default();
        let p = self.com.as_ptr();
        // SAFETY: an IDxclInteropResource; slot 4 is GetSubresourceLayout.
        let hr = unsafe {
            method::<GetLayout>(p, INTEROP_RESOURCE_GET_SUBRESOURCE_LAYOUT)(p, subresource, &mut l)
        };
        (hr >= 0).then_some(Layout {
            offset: l.Offset,
            row_pitch: l.RowPitch,
            depth_pitch: l.DepthPitch,
        })
    }
}

/// Blocks until all D3D work issued so far on the resource is complete.
pub(crate) fn wait_for_device_work(interop: &ComPtr) {
    type Wait = unsafe extern "system" fn(*mut c_void) -> HRESULT;
    let p = interop.as_ptr();
    // SAFETY: an IDxclInteropResource; slot 6 is WaitForDeviceWork.
    unsafe { method::<Wait>(p, INTEROP_RESOURCE_WAIT_FOR_DEVICE_WORK)(p) };
}

unsafe extern "C" fn pending_wait(context: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        let ev = context as cl_event;
        if let Some(wait) = crate::loader::target().and_then(|t| t.clWaitForEvents) {
            // SAFETY: the event we retained for this pending work, alive until pending_release.
            unsafe { wait(1 as cl_uint, &ev) };
        }
    });
}

unsafe extern "C" fn pending_release(context: *mut c_void) {
    let _ = std::panic::catch_unwind(|| crate::api::share::release_event(context as cl_event));
}

/// Makes the runtime's next access to the resource wait for `event` (retained here, released by
/// the runtime's pfnRelease call).
pub(crate) fn add_pending_work(interop: &ComPtr, event: cl_event) {
    let Some(retain) = crate::loader::target().and_then(|t| t.clRetainEvent) else {
        return;
    };
    // SAFETY: a live event the caller holds.
    if unsafe { retain(event) } != 0 {
        return;
    }
    type AddPending = unsafe extern "system" fn(
        *mut c_void,
        PFN_DXCL_PENDING,
        PFN_DXCL_PENDING,
        *mut c_void,
    ) -> HRESULT;
    let p = interop.as_ptr();
    // SAFETY: an IDxclInteropResource; slot 7 is AddPendingWork; the callbacks are plain
    // functions and the context is the retained event.
    let hr = unsafe {
        method::<AddPending>(p, INTEROP_RESOURCE_ADD_PENDING_WORK)(
            p,
            pending_wait,
            pending_release,
            event.cast(),
        )
    };
    if hr < 0 {
        // The runtime will not call us back: wait now (the guarantee still holds) and let go.
        // SAFETY: the event we just retained.
        unsafe {
            pending_wait(event.cast());
            pending_release(event.cast());
        }
    }
}

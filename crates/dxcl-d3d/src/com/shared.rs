//! What the runtime's COM objects share, so that they meet here rather than in each other's
//! files: the device's layout and faces, and what a device child is. `device` creates the other
//! objects and names them; they (the immediate context, queries, resources, dxcl's interop faces)
//! name only this module for their device. The device's methods and vtables stay in `device`.

use std::mem::offset_of;
use std::sync::atomic::{AtomicI32, AtomicU32};
use std::sync::Arc;

use super::abi::*;
use super::dxgi::Adapter;
use super::guard::guard;
use super::object::*;
use super::private_data::PrivateData;
use super::validation::DeviceUse;
use crate::backend::Backend;

/// A Direct3D device on one adapter.
#[repr(C)]
pub struct Device {
    pub(super) d3d11: *const ID3D11DeviceVtbl,
    pub(super) dxgi: *const IDXGIDevice1Vtbl,
    pub(super) interop: *const IDxclInteropDeviceVtbl,
    /// `ID3D10Device1` face, set by `com::d3d10` (null: the object does not answer D3D10 IIDs).
    pub d3d10: *const c_void,
    /// `ID3D10Multithread` face, set by `com::d3d10` (null as above).
    pub d3d10_multithread: *const c_void,
    pub(super) refs: RefCounts,
    pub(super) private: PrivateData,
    pub backend: Arc<dyn Backend>,
    pub(super) adapter: PrivateRef<Adapter>,
    /// The immediate context's D3D11 face, holding the device's one private reference to it
    /// (the context object is `com::context`'s, above this module).
    pub(super) context: *mut ID3D11DeviceContext,
    pub feature_level: D3D_FEATURE_LEVEL,
    pub creation_flags: u32,
    /// `SetExceptionMode` flags (shared with the D3D10 face).
    pub(crate) exception_mode: AtomicU32,
    pub(super) gpu_thread_priority: AtomicI32,
    pub(super) max_frame_latency: AtomicU32,
    /// What OpenCL and the device's children hold of it, when validating (`com::validation`).
    pub(crate) validation: DeviceUse,
}

// SAFETY: vtable pointers refer to immutable statics; `context` is owned (private reference) and
// its object is Send + Sync; the rest is Send + Sync or atomic.
unsafe impl Send for Device {}
// SAFETY: as above.
unsafe impl Sync for Device {}

pub const DEVICE_FACE: usize = offset_of!(Device, d3d11);
pub const DXGI_DEVICE_FACE: usize = offset_of!(Device, dxgi);
pub const INTEROP_DEVICE_FACE: usize = offset_of!(Device, interop);
pub const D3D10_DEVICE_FACE: usize = offset_of!(Device, d3d10);
pub const D3D10_MULTITHREAD_FACE: usize = offset_of!(Device, d3d10_multithread);

/// `IID_ID3D10Multithread` ({9b7e4e00-342c-4106-a19f-4f2704f689f0}); not yet in `dxcl_abi`.
pub const IID_ID3D10MULTITHREAD: GUID = GUID {
    Data1: 0x9b7e4e00,
    Data2: 0x342c,
    Data3: 0x4106,
    Data4: [0xa1, 0x9f, 0x4f, 0x27, 0x04, 0xf6, 0x89, 0xf0],
};

/// An object that belongs to a device (for the shared `GetDevice`).
pub trait DeviceChild: ComObject {
    fn device(&self) -> &Device;
}

/// `ID3D11DeviceChild::GetDevice` of face `OFF` of a `T`.
///
/// # Safety
/// `this` is face `OFF` of a live `T`; `out` is null or writable.
pub unsafe extern "system" fn child_get_device<T: DeviceChild, I, const OFF: usize>(
    this: *mut I,
    out: *mut *mut ID3D11Device,
) {
    // SAFETY: function contract.
    unsafe { child_get_device_face::<T, I, _, OFF, DEVICE_FACE>(this, out) }
}

/// `GetDevice` of face `OFF` of a `T` in the device's face `FACE` (`ID3D10DeviceChild` gives the
/// D3D10 face of a D3D10 device).
///
/// # Safety
/// `this` is face `OFF` of a live `T`; `out` is null or writable; the device's face `FACE` is an
/// `O` and set.
pub unsafe extern "system" fn child_get_device_face<
    T: DeviceChild,
    I,
    O,
    const OFF: usize,
    const FACE: usize,
>(
    this: *mut I,
    out: *mut *mut O,
) {
    guard((), || {
        if out.is_null() {
            return;
        }
        // SAFETY: function contract.
        let obj = unsafe { object::<T, I>(this, OFF) };
        // SAFETY: non-null and writable, and the face is set (contract).
        unsafe { hand_out(obj.device(), FACE, out) };
    })
}

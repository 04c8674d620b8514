//! The Direct3D 10 faces of the runtime's objects.
//!
//! A D3D10 device is the same [`Device`](super::device::Device) object as a D3D11 one, created by
//! `D3D10CreateDevice` with its `ID3D10Device1` face set; its resources and queries are the same
//! [`Resource`](super::resource::Resource) and [`Query`](super::query::Query) objects with their
//! D3D10 face set. Setting the face makes the object a D3D10 object: it answers `IUnknown` (with
//! its D3D10 face), its D3D10 interfaces, DXGI and dxcl's interop interfaces, and `E_NOINTERFACE`
//! for D3D11 interfaces; D3D11 objects never answer D3D10 interfaces. Reference counting, device
//! holding and the resource operations are the D3D11 objects' own: a D3D10 method is the D3D11
//! body (generic over the face, or called in one line), and only what differs is written here:
//! D3D10's descriptions, enums and stricter rules.
//!
//! - [`exports`]: `D3D10CreateDevice`, `D3D10CreateDeviceAndSwapChain`, `D3D10CreateDevice1`,
//!   `D3D10CreateDeviceAndSwapChain1` (feature levels 10_0 and 10_1; 9_x answers `E_NOTIMPL`);
//! - [`device`]: `ID3D10Device1` (resource creation, copies, updates, queries, format checks; the
//!   pipeline methods are `NOT_IMPLEMENTED`, and the pipeline getters return empty state);
//! - [`resource`]: `ID3D10Buffer`, `ID3D10Texture1D/2D/3D` (descs, `Map`/`Unmap`, eviction);
//! - [`query`]: `ID3D10Query` (Begin/End/GetData on the query itself);
//! - [`desc`]: D3D10 descriptions to the runtime's `ResourceDesc` and back, with D3D10's rules.

pub mod desc;
pub mod device;
pub mod exports;
pub mod query;
pub mod resource;

use super::abi::*;
use super::shared::{child_get_device_face, DeviceChild, D3D10_DEVICE_FACE};

/// `ID3D10DeviceChild::GetDevice` of face `OFF` of a `T`: the D3D10 face of its device, with a
/// new reference.
///
/// # Safety
/// `this` is face `OFF` of a live `T` whose device is a D3D10 device; `out` is null or writable.
pub unsafe extern "system" fn child_get_device10<T: DeviceChild, I, const OFF: usize>(
    this: *mut I,
    out: *mut *mut ID3D10Device,
) {
    // SAFETY: function contract.
    unsafe { child_get_device_face::<T, I, _, OFF, D3D10_DEVICE_FACE>(this, out) }
}

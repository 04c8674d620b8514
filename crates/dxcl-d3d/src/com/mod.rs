//! The COM layer: objects with D3D11, DXGI and interop faces over the core and a backend.
//!
//! - [`object`]: reference counts, faces, identity, the registry of live objects;
//! - [`dxgi`]: factories and adapters; [`device`]: the device and its creation;
//! - [`resource`]: buffers and textures (one object type for all, faces by dimension); [`desc`]:
//!   their D3D11 descriptions;
//! - [`context`]: the immediate context; [`query`]: queries; [`interop`]: dxcl's interop faces;
//! - [`shared`]: what the objects share (the device's layout, device children), where they meet;
//! - [`d3d10`]: the D3D10 faces of the same objects;
//! - [`validation`]: `DXCL_VALIDATE=1`, reports of misuse of resources shared with OpenCL.

/// `$to { a: $from.a, b: $from.b, … }`: a structure built from the members of the same name of
/// another (D3D10's descriptions have D3D11's members, in part), then the members given a value.
/// The compiler checks that each named member has the same type in both.
macro_rules! same_members {
    ($from:expr => $to:ident { $($m:ident),* $(,)? } $(, $n:ident: $v:expr)* $(,)?) => {
        $to { $($m: $from.$m,)* $($n: $v,)* }
    };
}

pub mod abi;
pub mod context;
pub mod d3d10;
pub mod desc;
pub mod device;
pub mod dxgi;
pub mod guard;
pub mod interop;
pub mod object;
pub mod private_data;
pub mod query;
pub mod resource;
pub mod shared;
pub mod validation;

use abi::*;

use crate::backend::BackendError;
use crate::core::DescError;

/// HRESULT of a description error: `E_INVALIDARG` for Direct3D's rules, `E_NOTIMPL` for what this
/// runtime does not implement.
pub fn desc_error(e: DescError) -> HRESULT {
    match e {
        DescError::Invalid(_) => E_INVALIDARG,
        DescError::Unsupported(_) => E_NOTIMPL,
    }
}

/// HRESULT of a backend error (the one place backends' failures are mapped).
pub fn backend_error(e: BackendError) -> HRESULT {
    match e {
        BackendError::OutOfMemory => E_OUTOFMEMORY,
        BackendError::NotSupported => E_NOTIMPL,
        BackendError::DeviceLost => DXGI_ERROR_DEVICE_REMOVED,
        BackendError::UnknownId => E_INVALIDARG,
    }
}

/// Compares two GUIDs.
pub fn guid_eq(a: &GUID, b: &GUID) -> bool {
    a.Data1 == b.Data1 && a.Data2 == b.Data2 && a.Data3 == b.Data3 && a.Data4 == b.Data4
}

/// Whether `riid` is one of `iids`.
pub fn iid_in(riid: &GUID, iids: &[GUID]) -> bool {
    iids.iter().any(|i| guid_eq(i, riid))
}

/// Clears an out pointer if it is not null.
///
/// # Safety
/// `out` is null or writable.
pub unsafe fn clear_out<T>(out: *mut *mut T) {
    if !out.is_null() {
        // SAFETY: non-null and writable (contract).
        unsafe { *out = std::ptr::null_mut() };
    }
}

//! Raw Direct3D 10/11, DXGI and dxcl-interop ABI: types, constants, IIDs and COM vtables with the
//! Windows SDK's names, generated (`gen/`) from the interface description in `api/` by `dxcl-gen`.
//! No behaviour beyond the small helpers below. Conventions: `docs/architecture.md`, "ABI conventions".

#![no_std]

pub use core::ffi::{c_char, c_int, c_uint, c_void};

/// Generated from `api/*.api`; every item is re-exported at the crate root.
// The ABI keeps the Windows SDK's spelling of every name (architecture.md, "ABI conventions"), the
// float limits keep the SDK's digits, and the vtables' field names are the SDK's method names.
#[allow(
    non_snake_case,
    non_camel_case_types,
    non_upper_case_globals,
    clippy::upper_case_acronyms,
    clippy::excessive_precision,
    clippy::unreadable_literal,
    clippy::derive_partial_eq_without_eq,
    clippy::type_complexity
)]
#[rustfmt::skip]
pub mod gen;
pub use gen::*;

pub mod com;
mod guid;
mod hresult;
mod luid;
pub mod sharing;

pub use hresult::{FAILED, SUCCEEDED};
pub use luid::{luid_from_uuid, SOFTWARE_LUID_LOW};

/// dxcl's private interop interface (`include/dxcl/dxcl_interop.h`).
pub mod interop {
    pub use crate::gen::dxcl_interop::*;

    /// Private data (`GetPrivateData`) that dxcl's OpenCL layer sets on a resource when it makes
    /// an OpenCL memory object from it: the name of the sharing strategy that object got
    /// (`"external-memory"`, `"external-copy"`, `"staging-copy"`, `"host-pointer"`; bytes, no NUL).
    /// With several objects (one per subresource), the last one made.
    pub const DXCL_PRIVATE_DATA_CL_STRATEGY: crate::GUID = crate::GUID::new(
        0x6d7f3a52,
        0x1c4e,
        0x4b8a,
        [0x9f, 0x3d, 0x2a, 0x61, 0xc0, 0xe5, 0xb7, 0xd3],
    );
}

/// `WKPDID_D3DDebugObjectName` (d3dcommon.h): the private data naming an object for debuggers
/// (bytes, no NUL needed). dxcl's validation reports (docs/validation.md) use it.
#[allow(non_upper_case_globals)] // The SDK's name.
pub const WKPDID_D3DDebugObjectName: GUID = GUID::new(
    0x429b8c22,
    0x9188,
    0x4b0c,
    [0x87, 0x42, 0xac, 0xb0, 0xbf, 0x85, 0xc2, 0x00],
);

/// A COM interface type: its IID and its vtable type.
pub trait Interface {
    const IID: GUID;
    type Vtbl;
}

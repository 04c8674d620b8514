//! dxcl's OpenCL layer: adds `cl_khr_d3d10_sharing`, `cl_khr_d3d11_sharing`, `cl_nv_d3d10_sharing`
//! and `cl_nv_d3d11_sharing` to whatever platform the loader finds.
//!
//! - [`loader`]: the four loader entry points and the dispatch tables.
//! - `api`: the intercepted OpenCL entry points and the 24 D3D entry points (spec checks).
//! - `core`: side tables (contexts, D3D memory objects, kernels, marker events), formats, tokens.
//! - `d3d`: the COM client (standard D3D/DXGI calls plus dxcl's optional interop interface).
//! - `external`: the external-memory strategy (opaque-fd import, shared semaphores).
//! - [`strategy`]: how a resource is shared, public so `dxcl info` can describe it.

mod api;
mod core;
mod d3d;
mod external;
pub mod loader;
pub mod strategy;

pub use crate::core::format;
pub use crate::core::tokens::{D3dVersion, Flavor};

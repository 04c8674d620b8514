//! dxcl's OpenCL layer: adds `cl_khr_d3d10_sharing`, `cl_khr_d3d11_sharing`, `cl_nv_d3d10_sharing`
//! and `cl_nv_d3d11_sharing` to whatever platform the loader finds.
//!
//! Parts, each calling only those listed after it:
//! - [`loader`]: the four loader entry points and the dispatch tables.
//! - `api`: the intercepted OpenCL entry points and the 24 D3D entry points (spec checks).
//! - `registry`: side tables (contexts, D3D memory objects and what derives from them, kernels).
//! - [`strategy`]: how a resource is shared: the pure decision (public, so `dxcl info` can
//!   describe it) and one `SharingStrategy` implementation per strategy.
//! - `validate`: `DXCL_VALIDATE=1` (docs/validation.md): what the layer tells dxcl's runtime, and
//!   the reports only the layer can make.
//! - `d3d`: the COM client (standard D3D/DXGI calls plus dxcl's optional interop interface).
//! - [`probe`]: what the platform does where the spec leaves it a choice (is
//!   `CL_MEM_USE_HOST_PTR` memory used in place?) or where it deviates, asked of plain objects.
//! - `cl`: the platform below: its dispatch table, queries, markers and the layer's events.
//! - `trace`: `DXCL_TRACE=handoff`, the time of each step of a hand-off.
//! - `core`: the vocabulary every part shares: tokens, resource kinds, the format table, a
//!   one-shot signal, and whether the process has begun to exit.

mod api;
mod cl;
mod core;
mod d3d;
pub mod loader;
pub mod probe;
mod registry;
pub mod strategy;
mod trace;
mod validate;

pub use crate::core::format;
pub use crate::core::tokens::{D3dVersion, Flavor};
pub use crate::d3d::adapter::{adapter_facts, AdapterFacts, AdapterId, IdSource};

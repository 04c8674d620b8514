//! Direct3D 10/11 runtime for Linux, focused on resources: devices, DXGI factories and adapters,
//! buffers and 1D/2D/3D textures, and the immediate context's resource operations.
//!
//! - [`core`]: formats, description validation, subresource layout (pure Rust);
//! - [`backend`]: the `Backend` trait and the host backend (the software adapter);
//! - [`com`]: COM objects and their vtables;
//! - the C entry points (`D3D11CreateDevice`, `CreateDXGIFactory1`, ...) in `exports`.
//!
//! Environment: `DXCL_ADAPTER` selects the adapter (`software`, the default; see [`com::dxgi`]).

// The C entry points keep the SDK's parameter names.
#![allow(non_snake_case)]

pub mod backend;
pub mod com;
pub mod core;
mod exports;

pub use exports::*;

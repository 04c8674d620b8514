//! Direct3D 10/11 runtime.

pub mod backend;
pub mod core;

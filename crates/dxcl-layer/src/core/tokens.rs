//! The sharing extensions' vocabulary: one home for every crate, `dxcl_abi::sharing`.

pub use dxcl_abi::sharing::*;

//! Pure-Rust facts about Direct3D resources: formats, description validation, subresource layout.

pub mod desc;
pub mod flags;
pub mod format;
pub mod layout;

pub use desc::{calc_subresource, full_mip_chain, DescError, ResourceDesc};
pub use format::{format, Dimension, Format};
pub use layout::{BlockRegion, LayoutRules, ResourceLayout, SubresourceLayout, TexelBox};

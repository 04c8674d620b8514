//! The vocabulary every part of the layer shares: tokens, resource kinds, the format table.

pub mod format;
pub mod tokens;

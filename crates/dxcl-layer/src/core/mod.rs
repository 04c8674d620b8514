//! The vocabulary every part of the layer shares: tokens, resource kinds, the format table, and
//! a one-shot signal.

pub mod format;
pub(crate) mod signal;
pub mod tokens;

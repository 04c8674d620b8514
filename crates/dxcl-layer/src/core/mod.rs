//! The vocabulary every part of the layer shares: tokens, resource kinds, the format table, a
//! one-shot signal, and whether the process has begun to exit.

pub(crate) mod exit;
pub mod format;
pub(crate) mod signal;
pub mod tokens;

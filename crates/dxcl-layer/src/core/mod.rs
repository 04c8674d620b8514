//! The layer's own model: tokens, the format table, and the side tables.

pub mod format;
pub mod registry;
pub mod tokens;

//! Raw ABI definitions; see the crate description.

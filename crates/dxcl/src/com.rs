//! [`Com`], an owning reference to a Direct3D COM interface (`dxcl_abi::com`, shared by dxcl's
//! crates).

pub use dxcl_abi::com::Com;

//! Safe Rust for OpenCL ⇄ Direct3D 10/11 sharing on Linux, through dxcl's OpenCL layer
//! (`libdxcl_layer.so`), for code that uses the [`opencl3`] crate.
//!
//! The layer adds `cl_khr_d3d10_sharing`, `cl_khr_d3d11_sharing`, `cl_nv_d3d10_sharing` and
//! `cl_nv_d3d11_sharing` to every platform the OpenCL loader finds. This crate looks their
//! entry points up (`clGetExtensionFunctionAddressForPlatform`) and wraps them:
//!
//! - [`Context`]: an OpenCL context shared with a Direct3D device ([`Com`]`<ID3D11Device>` or
//!   `<ID3D10Device>`), owning an [`opencl3::context::Context`] for everything else;
//! - [`SharedBuffer`] and [`SharedImage`]: buffers, and subresources ([`Subresource`]) of 2D and
//!   3D textures, as OpenCL memory objects;
//! - [`Queue::acquire`] → [`Acquired`]: a guard that releases on drop, and lends the objects to
//!   `opencl3` ([`Acquired::buffer`], [`Acquired::image`]) only while they are acquired;
//! - [`Error`]: the extensions' status codes by name (`D3D11ResourceAlreadyAcquired`, …).
//!
//! The Direct3D version is a type parameter ([`D3D10`], [`D3D11`]); the extension family
//! ([`Flavor::Khr`], [`Flavor::Nv`]) a value, since only the entry points' names differ.
//!
//! # Loading the layer
//!
//! The OpenCL loader reads `OPENCL_LAYERS` once, at the process's first OpenCL call: set it to
//! the path of `libdxcl_layer.so` before that (in the environment, or with
//! `std::env::set_var` while the process has one thread). Without the layer, [`Context::new`]
//! answers [`Error::NoPlatform`].
//!
//! # Example
//!
//! Adding one to every `u32` of a Direct3D 11 buffer with an OpenCL kernel:
//!
//! ```
//! use dxcl::{Access, Com, Context, D3D11};
//! use dxcl::abi::{ID3D11Buffer, ID3D11Device};
//! use opencl3::kernel::{ExecuteKernel, Kernel};
//! use opencl3::program::Program;
//!
//! const SOURCE: &str = "kernel void add_one(global uint *v) { v[get_global_id(0)] += 1; }";
//!
//! fn add_one(
//!     device: &Com<ID3D11Device>,
//!     buffer: &Com<ID3D11Buffer>,
//!     count: usize,
//! ) -> Result<(), Box<dyn std::error::Error>> {
//!     let sharing = Context::<D3D11>::new(device)?;
//!     let queue = sharing.create_queue()?;
//!     let program = Program::create_and_build_from_source(sharing.context(), SOURCE, "")?;
//!     let kernel = Kernel::create(&program, "add_one")?;
//!
//!     let shared = sharing.buffer(buffer, Access::ReadWrite)?;
//!     let q = sharing.queue(&queue)?;
//!     let acquired = q.acquire(&[&shared])?;
//!     let values = acquired.buffer::<u32>(&shared);
//!     // SAFETY: argument 0 is a `global uint *`, and the buffer holds `count` of them.
//!     unsafe {
//!         ExecuteKernel::new(&kernel)
//!             .set_arg(&values)
//!             .set_global_work_size(count)
//!             .enqueue_nd_range(&queue)?;
//!     }
//!     // Direct3D work issued after this waits for the kernel.
//!     acquired.release()?.wait()?;
//!     Ok(())
//! }
//! ```
//!
//! `examples/buffer.rs` and `examples/texture.rs` run this end to end on dxcl's software
//! adapter and PoCL.
//!
//! # Features
//!
//! - `runtime` (default): [`runtime::d3d11_device`] and [`runtime::d3d10_device`] create devices
//!   through dxcl's Direct3D runtime, linked in.

mod api;
mod com;
mod context;
mod error;
mod mem;
mod queue;
#[cfg(feature = "runtime")]
pub mod runtime;

pub use api::{Api, Flavor, D3D10, D3D11};
pub use com::Com;
pub use context::{context_properties, devices_for, Context, DeviceSet};
pub use error::{Error, Result};
pub use mem::{Access, Shared, SharedBuffer, SharedImage, Subresource};
pub use queue::{Acquired, BufferRef, ImageRef, Queue};

/// `dxcl_abi`, the raw Direct3D ABI the [`Com`] pointers carry (`ID3D11Device`, descriptions,
/// constants).
pub use dxcl_abi as abi;
/// The `opencl3` this crate's types come from.
pub use opencl3;

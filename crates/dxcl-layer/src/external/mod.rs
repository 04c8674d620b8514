//! The external-memory strategy: Direct3D resources that live in exportable Vulkan memory are
//! imported once into OpenCL (`cl_khr_external_memory_opaque_fd`) and bracketed by
//! `clEnqueueAcquire/ReleaseExternalMemObjectsKHR`; the implicit synchronisation runs on the GPU
//! through shared binary semaphores (`cl_khr_external_semaphore_opaque_fd`) where both sides have
//! them, and as a CPU wait where they do not.
//!
//! - [`cl`]: the platform's external-memory and semaphore entry points, and device capabilities.
//! - [`import`]: what a context can import, and the import of a resource's memory.
//! - [`sync`]: the per-context pool of shared semaphores and the two ordering operations.

pub(crate) mod cl;
pub(crate) mod import;
pub(crate) mod sync;

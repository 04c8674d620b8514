//! What the two external strategies share: Direct3D resources that live in exportable Vulkan
//! memory are imported once into OpenCL (`cl_khr_external_memory_opaque_fd`) and bracketed by
//! `clEnqueueAcquire/ReleaseExternalMemObjectsKHR`; the implicit synchronisation runs on the GPU
//! through shared binary semaphores (`cl_khr_external_semaphore_opaque_fd`) where both sides have
//! them, and as a CPU wait where they do not.
//!
//! - [`cl`]: the platform's external-memory and semaphore entry points, and device capabilities.
//! - [`import`]: what a context can import, and the import of a resource's memory.
//! - [`sync`]: the per-context pool of shared semaphores and the two ordering operations.

use opencl_sys::{cl_int, cl_mem};

use super::Request;
use crate::d3d::com::ComPtr;
use dxcl_abi::interop::{IDxclInteropDevice, IDxclInteropResource};

pub(crate) mod cl;
pub(crate) mod import;
pub(crate) mod sync;

/// What the context offers the external strategies.
pub(crate) struct Context {
    pub support: import::ContextSupport,
    /// The context's D3D device as dxcl's interop device (resources with exportable memory).
    pub device: Option<ComPtr<IDxclInteropDevice>>,
}

impl Context {
    /// Imports `resource`'s memory whole, as the request's buffer or image (an image: mip 0
    /// of one slice, the request's extent).
    pub fn import(
        &self,
        req: &Request,
        resource: &ComPtr<IDxclInteropResource>,
    ) -> Result<cl_mem, cl_int> {
        let desc = req.image_desc(None);
        let format = req.image.map(|(f, _)| f);
        import::import(
            req.context,
            req.flags,
            resource,
            req.extent.0 as usize,
            format.as_ref().zip(desc.as_ref()),
        )
    }

    /// Opens the context's semaphore pool with its first external-memory object, when GPU-side
    /// sync is on and both sides have semaphores.
    pub fn open_pool(&self, req: &Request) {
        let fns = self
            .support
            .semaphores
            .filter(|_| super::gpu_sync_from_env());
        if let (Some(fns), Some(dev)) = (fns, self.device.as_ref()) {
            sync::open_pool(req.context, dev, fns);
        }
    }
}

/// Why an import the strategy chose failed (the object then falls back to staging copies).
pub(crate) fn import_failure(e: cl_int) -> &'static str {
    match e {
        opencl_sys::CL_INVALID_OPERATION => {
            "external-memory import failed (no fd or entry point): staging copy instead"
        }
        opencl_sys::CL_IMAGE_FORMAT_NOT_SUPPORTED
        | opencl_sys::CL_INVALID_IMAGE_FORMAT_DESCRIPTOR => {
            "the platform cannot import this image format: staging copy instead"
        }
        _ => "the platform refused the external-memory import: staging copy instead",
    }
}

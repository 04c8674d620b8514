//! How a Direct3D resource is shared with an OpenCL context: one seam.
//!
//! A strategy is chosen once per memory object ([`share`], from the pure [`choose_with`]
//! decision) and kept with it as a [`SharingStrategy`]: it creates the OpenCL object, carries
//! out each acquire and release through a [`HandOff`], describes itself, and is destroyed
//! (dropped) with the memory object. `api/` calls nothing else of it.
//!
//! - [`decision`]: the pure decision, public so `dxcl info` can describe it without creating
//!   anything.
//! - [`host_pointer`], [`staging`], [`external_memory`], [`external_copy`]: the four strategies.
//! - [`hand_off`]: one acquire or release call, with what strategies do together in it.
//! - [`external`]: the platform's external memory and semaphores, shared by the two external
//!   strategies.

use std::sync::Arc;

use opencl_sys::{
    cl_context, cl_event, cl_image_desc, cl_image_format, cl_int, cl_mem, cl_mem_flags,
    cl_mem_object_type, CL_MEM_OBJECT_IMAGE3D,
};

use crate::core::signal::Signal;
use crate::core::tokens::{D3dVersion, ResourceKind};
use crate::d3d::com::ComPtr;
use crate::d3d::interop::{self, Interop};
use crate::d3d::resource::Resource;
use dxcl_abi::interop::IDxclInteropDevice;

mod decision;
pub(crate) mod external;
mod external_copy;
mod external_memory;
mod hand_off;
mod host_pointer;
mod shadow_copy;
mod staging;

pub use decision::*;
pub(crate) use hand_off::HandOff;
pub(crate) use host_pointer::finish_copies;

/// One memory object's way of being shared. Implementations hold what the object needs beyond
/// its `cl_mem` (interop interfaces, staging resources, imported shadows) and release it when
/// dropped, which is the strategy's "destroy": the registry drops it with the memory object's
/// entry, outside its lock.
pub(crate) trait SharingStrategy: Send + Sync {
    /// The strategy and why it was chosen (`dxcl info`, `DXCL_LOG`, the resource's tag).
    fn decision(&self) -> Decision;

    /// Whether the `cl_mem` uses the resource's own memory in place, so that memory must live
    /// as long as the platform holds the object (not only the application).
    fn aliases_resource_memory(&self) -> bool {
        false
    }

    /// For a strategy that aliases the resource's memory: the application's last reference is
    /// gone while the platform may still run commands on the object. Keeps the memory alive
    /// until `destroyed` is set (the platform destroyed the object) without keeping the
    /// resource's reference, which "will be decremented when the OpenCL reference count on the
    /// returned OpenCL memory object drops to zero". False when it cannot.
    fn keep_memory_until(&self, _destroyed: Arc<Signal>) -> bool {
        false
    }

    /// Makes what Direct3D did before this call visible to OpenCL commands after it: work now
    /// on the D3D side, OpenCL commands through `h`.
    fn acquire(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int>;

    /// Hands the object back: OpenCL commands through `h`, after all earlier work of the queue
    /// and the wait list ([`HandOff::release_wait`]).
    fn release(&self, mem: cl_mem, h: &mut HandOff<'_>) -> Result<(), cl_int>;

    /// Whether [`release`](Self::release) brackets the object with the platform's external
    /// release ([`HandOff::import`]).
    fn imports(&self) -> bool {
        false
    }

    /// In a release whose wait list holds a user event still unset, after the platform's
    /// external release of the call's imported objects ([`HandOff::imports_now`]): the
    /// commands of an importing strategy that wait for the wait list.
    fn release_commands(&self, _mem: cl_mem, _h: &mut HandOff<'_>) -> Result<(), cl_int> {
        Ok(())
    }

    /// After [`release`](Self::release), once the call's event `done` exists: later Direct3D
    /// work must wait for it.
    fn released(&self, h: &mut HandOff<'_>, done: cl_event) -> Result<(), cl_int>;

    /// The application's last reference to `mem` goes (on its thread, before the release is
    /// forwarded): let go of what the strategy holds for hand-offs, and if the object is still
    /// `acquired`, hand back to the platform what the acquire took from it.
    fn let_go(&self, _mem: cl_mem, _acquired: bool) {}
}

/// What one create call asks for, its arguments already checked by `api/`.
pub(crate) struct Request<'a> {
    pub version: D3dVersion,
    pub kind: ResourceKind,
    pub context: cl_context,
    pub flags: cl_mem_flags,
    pub resource: &'a Resource,
    pub subresource: u32,
    pub mip: u32,
    /// Texels of the subresource's mip level (buffers: ByteWidth, 1, 1).
    pub extent: (u32, u32, u32),
    /// The CL format and image type (textures).
    pub image: Option<(cl_image_format, cl_mem_object_type)>,
    /// Every context device reports CL_DEVICE_HOST_UNIFIED_MEMORY.
    pub host_unified: bool,
    /// The context's Direct3D device.
    pub device: &'a ComPtr,
}

impl Request<'_> {
    /// Bytes of one element: a texel, or a byte for buffers.
    fn pixel_size(&self) -> usize {
        self.image
            .map_or(1, |(f, _)| crate::core::format::pixel_size(&f))
    }

    /// The image description of the whole subresource; `pitches` when the image uses the
    /// resource's memory in place.
    fn image_desc(&self, pitches: Option<interop::Layout>) -> Option<cl_image_desc> {
        let (_, image_type) = self.image?;
        let (width, height, depth) = self.extent;
        let three_d = image_type == CL_MEM_OBJECT_IMAGE3D;
        let (row_pitch, slice_pitch) = match pitches {
            Some(l) => (
                l.row_pitch as usize,
                if three_d { l.depth_pitch as usize } else { 0 },
            ),
            None => (0, 0),
        };
        Some(cl_image_desc {
            image_type,
            image_width: width as usize,
            image_height: height as usize,
            // 0 for 2D: "image_depth ... is only used if the image is a 3D image", and a platform
            // that answers CL_IMAGE_DEPTH with the description's value (rusticl 22.3) then still
            // answers "For a ... 2D image ... depth = 0".
            image_depth: if three_d { depth as usize } else { 0 },
            image_array_size: 0,
            image_row_pitch: row_pitch,
            image_slice_pitch: slice_pitch,
            num_mip_levels: 0,
            num_samples: 0,
            buffer: std::ptr::null_mut(),
        })
    }
}

/// Why a chosen strategy could not make the object.
pub(crate) enum Failure {
    /// The strategy does not apply after all: staging copies instead, for this reason.
    Fallback(&'static str),
    /// The create call fails with this error.
    Error(cl_int),
}

impl From<cl_int> for Failure {
    fn from(e: cl_int) -> Failure {
        Failure::Error(e)
    }
}

/// A new memory object and the strategy it keeps.
pub(crate) struct Shared {
    pub mem: cl_mem,
    pub strategy: Arc<dyn SharingStrategy>,
}

type Made = Result<Shared, Failure>;

fn made(mem: cl_mem, strategy: impl SharingStrategy + 'static) -> Made {
    Ok(Shared {
        mem,
        strategy: Arc::new(strategy),
    })
}

/// Chooses the strategy for `req` and makes the memory object with it; a strategy that cannot
/// make it after all gives way to staging copies, saying why.
pub(crate) fn share(req: &Request) -> Result<Shared, cl_int> {
    let interop = Interop::query(&req.resource.com);
    let d = req.resource.desc;
    let dxvk = interop.is_none() && crate::d3d::vulkan::is_dxvk_device(req.device);
    // A DXVK texture a shadow may stand for: D3D11 only (DXVK's D3D10 textures have no shared
    // counterpart).
    let dxvk_texture =
        dxvk && req.kind == ResourceKind::Texture2D && req.version == D3dVersion::D3D11;
    // Exportable Vulkan memory: can every context device import it?
    let fd_memory = interop
        .as_ref()
        .and_then(|i| external::import::fd_memory(&i.com));
    let interop_device = fd_memory.and_then(|_| req.device.query::<IDxclInteropDevice>());
    // The adapter's UUID: from dxcl's device, or from DXVK's GPU for a DXVK texture made by
    // dxclCreateSharedTexture2D (an interop object that does not defer) and for a shadow.
    let uuid = match &interop_device {
        Some(d) => external::import::adapter_uuid(d),
        None => (dxvk_texture
            || fd_memory.is_some() && interop.as_ref().is_some_and(|i| !i.defers))
        .then(|| crate::d3d::shared_texture::device_uuid(req.device))
        .flatten(),
    };
    let support = external::import::context_support(req.context, uuid);
    let inputs = Inputs {
        interop_resource: interop.is_some(),
        host_memory: interop.as_ref().is_some_and(|i| i.host_memory().is_some()),
        devices_host_unified: req.host_unified,
        forced_staging: forced_staging_from_env(),
        dxvk,
        // A shadow on a CPU device (no UUID) is host memory for host-unified devices; on a GPU,
        // memory its devices import. Whether it can be made is found out by making it.
        dxvk_shadow: dxvk_texture
            && match uuid {
                None => req.host_unified,
                Some(_) => support.memory.is_some(),
            },
    };
    let e = fd_memory.map(|(memory, _)| {
        let fd = FdResource {
            memory,
            devices_import: support.memory.is_some(),
            device_local: d.usage != USAGE_DYNAMIC && d.usage != USAGE_STAGING,
        };
        External::of(
            &fd,
            req.kind == ResourceKind::Buffer,
            covers_whole_image(req.kind == ResourceKind::Texture3D, d.array_size, req.mip),
        )
    });
    let decision = choose_with(&inputs, e.as_ref());
    log_once("clCreateFromD3D resource", decision);
    // DXVK's device, where its textures are shared through memory it cannot export or through
    // dxcl's memory on it: shared semaphores on its queue order the hand-offs on the GPU.
    let interop_device = interop_device.or_else(|| {
        (uuid.is_some() && support.semaphores.is_some())
            .then(|| crate::d3d::dxvk_semaphores::interop_device(req.device))
            .flatten()
    });
    let ext = external::Context {
        support,
        device: interop_device,
    };
    let tried = match decision.strategy {
        Strategy::HostPointer => host_pointer::HostPointer::create(req, interop, decision),
        Strategy::ExternalMemory => {
            external_memory::ExternalMemory::create(req, interop, &ext, decision)
        }
        Strategy::ExternalCopy => external_copy::ExternalCopy::create(req, &ext, decision),
        Strategy::ShadowCopy => shadow_copy::ShadowCopy::create(req, &ext, decision),
        Strategy::StagingCopy => staging::StagingCopy::create(req, decision),
    };
    match tried {
        Ok(shared) => Ok(shared),
        Err(Failure::Error(e)) => Err(e),
        Err(Failure::Fallback(reason)) => {
            let d = Decision {
                strategy: Strategy::StagingCopy,
                reason,
            };
            log_once("clCreateFromD3D resource", d);
            match staging::StagingCopy::create(req, d) {
                Ok(shared) => Ok(shared),
                Err(Failure::Error(e)) => Err(e),
                Err(Failure::Fallback(_)) => Err(opencl_sys::CL_OUT_OF_RESOURCES),
            }
        }
    }
}

/// D3D1x_USAGE_DYNAMIC and D3D1x_USAGE_STAGING (the same values in both SDKs): CPU-mapped
/// resources, which dxcl's Vulkan backend keeps in host-visible memory.
const USAGE_DYNAMIC: i32 = 2;
const USAGE_STAGING: i32 = 3;

/// A plain OpenCL buffer or image of the request's size and format; with `host` (pointer and
/// the subresource's layout) it uses that memory in place (`CL_MEM_USE_HOST_PTR`).
fn create_plain(req: &Request, host: Option<(*mut u8, interop::Layout)>) -> Result<cl_mem, cl_int> {
    use crate::cl::{check, down};
    let flags = req.flags
        | if host.is_some() {
            opencl_sys::CL_MEM_USE_HOST_PTR
        } else {
            0
        };
    let ptr = host.map_or(std::ptr::null_mut(), |(p, _)| p.cast::<std::ffi::c_void>());
    let mut err = 0;
    let mem = match (req.image, req.image_desc(host.map(|(_, l)| l))) {
        (Some((format, _)), Some(desc)) => {
            let create = down!(clCreateImage);
            // SAFETY: valid context, format and desc; with USE_HOST_PTR the subresource's
            // memory spans row_pitch * height (* depth slices) bytes per the runtime's layout,
            // valid while the resource lives (the memory object's entry holds a reference).
            unsafe { create(req.context, flags, &format, &desc, ptr, &mut err) }
        }
        _ => {
            let create = down!(clCreateBuffer);
            // SAFETY: valid context; with USE_HOST_PTR, ptr spans ByteWidth bytes of the
            // resource's memory, valid while the resource lives.
            unsafe { create(req.context, flags, req.extent.0 as usize, ptr, &mut err) }
        }
    };
    check(err)?;
    Ok(mem)
}

/// Releases a memory object the layer made and nobody else holds.
pub(crate) fn release_mem(mem: cl_mem) {
    if let Some(release) = crate::cl::target().and_then(|t| t.clReleaseMemObject) {
        // SAFETY: a memory object we created and nobody else holds.
        unsafe { release(mem) };
    }
}

//! What the decision and the strategies need to know of one request, asked once, in one place,
//! before anything is decided or made: of Direct3D ([`device::sharing`]), then of the OpenCL
//! context ([`import::context_support`]).

use super::external::{self, import};
use super::{covers_whole_image, forced_staging_from_env, External, FdResource, Inputs, Request};
use crate::core::tokens::ResourceKind;
use crate::d3d::device;
use crate::d3d::interop::Interop;

/// D3D1x_USAGE_DYNAMIC and D3D1x_USAGE_STAGING (the same values in both SDKs): CPU-mapped
/// resources, which dxcl's Vulkan backend keeps in host-visible memory.
const USAGE_DYNAMIC: i32 = 2;
const USAGE_STAGING: i32 = 3;

/// The facts of one request.
pub(super) struct Facts {
    /// The resource's interop object (dxcl's resources, and DXVK textures made by
    /// `dxclCreateSharedTexture2D`).
    pub interop: Option<Interop>,
    /// The pure decision's inputs.
    pub inputs: Inputs,
    /// For a resource whose memory is an opaque fd: the external-memory decision's inputs.
    pub external: Option<External>,
    /// What the context offers the external strategies.
    pub context: external::Context,
}

impl Facts {
    pub fn gather(req: &Request) -> Facts {
        let d3d = device::sharing(req.device, &req.resource.com, req.version, req.kind);
        let interop = d3d.interop;
        let d = req.resource.desc;
        // Exportable Vulkan memory: can every context device import it?
        let fd_memory = interop.as_ref().and_then(import::fd_memory);
        let support = import::context_support(req.context, d3d.gpu_uuid);
        let inputs = Inputs {
            interop_resource: interop.is_some(),
            host_memory: interop.as_ref().is_some_and(|i| i.host_memory().is_some()),
            devices_host_unified: req.host_unified,
            forced_staging: forced_staging_from_env(),
            dxvk: d3d.dxvk,
            // A shadow on a CPU device (no UUID) is host memory for host-unified devices; on a
            // GPU, memory its devices import. Whether it can be made is found out by making it.
            dxvk_shadow: d3d.dxvk_texture
                && match d3d.gpu_uuid {
                    None => req.host_unified,
                    Some(_) => support.memory.is_some(),
                },
        };
        let external = fd_memory.map(|memory| {
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
        Facts {
            interop,
            inputs,
            external,
            context: external::Context {
                support,
                device: d3d.interop_device,
            },
        }
    }
}

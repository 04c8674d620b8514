//! Copies between 2D images by a compute shader instead of `vkCmdCopyImage`.
//!
//! On an NVIDIA H100 (driver 580) `vkCmdCopyImage` of a 3840×2160 RGBA8 image took 0.67–0.73 ms,
//! about 50 GB/s, where OpenCL's copy of the same image on the same GPU took 0.094 ms
//! (`dxcl frames --breakdown`, docs/benchmarks.md); `vkCmdBlitImage` was no faster. A shader that
//! loads and stores each texel runs at the device's memory speed. It is used only where the
//! result is the copy's bit for bit: both images of the same format, one of [`SHADERS`] (GLSL
//! storage formats that load and store exactly and need no extended-formats feature: RGBA8 UNORM,
//! and the UINT formats that typeless textures are kept as), both made with storage usage, 2D, a
//! copy of at least [`MIN_BYTES`] between different subresources, on a GPU. Everything else, and
//! every device without a compute queue, `VK_KHR_push_descriptor` or 256 invocations a workgroup,
//! keeps `vkCmdCopyImage`. `DXCL_COMPUTE_COPY=0` turns it off, `=1` on for CPU devices too.
//!
//! RGBA8 UNORM goes through floats: c/255 stored back is c where the device converts floats to
//! UNORM by rounding to nearest, which Vulkan recommends and every driver met does (NVIDIA,
//! lavapipe; `shader_copies_are_bit_exact` covers all 256 values in each channel).
//!
//! The SPIR-V is built from `shaders/copy.comp` by `scripts/shaders.sh` and committed.

use ash::vk;

/// The formats the shaders copy, each with its build of `shaders/copy.comp`.
pub const SHADERS: [(vk::Format, &[u8]); 5] = [
    (
        vk::Format::R8G8B8A8_UNORM,
        include_bytes!("shaders/copy_rgba8.spv"),
    ),
    (
        vk::Format::R8G8B8A8_UINT,
        include_bytes!("shaders/copy_rgba8ui.spv"),
    ),
    (
        vk::Format::R16G16B16A16_UINT,
        include_bytes!("shaders/copy_rgba16ui.spv"),
    ),
    (
        vk::Format::R32_UINT,
        include_bytes!("shaders/copy_r32ui.spv"),
    ),
    (
        vk::Format::R32G32B32A32_UINT,
        include_bytes!("shaders/copy_rgba32ui.spv"),
    ),
];

/// Copies smaller than this keep `vkCmdCopyImage`: its cost is the submission's there.
pub const MIN_BYTES: u64 = 256 << 10;

/// The shaders' workgroup: `GROUP`×`GROUP` texels, as in `shaders/copy.comp`.
pub const GROUP: u32 = 16;

/// The index in [`SHADERS`] of the shader that copies `format`, if one does.
pub fn shader_for(format: vk::Format) -> Option<usize> {
    SHADERS.iter().position(|(f, _)| *f == format)
}

/// `DXCL_COMPUTE_COPY`: `0` never, `1` on every device; unset, on GPUs only (read once). On a
/// CPU device (lavapipe) `vkCmdCopyImage` is a memory copy already, as fast as a shader.
pub fn from_env() -> Option<bool> {
    static SET: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    *SET.get_or_init(
        || match std::env::var("DXCL_COMPUTE_COPY").as_deref().map(str::trim) {
            Ok("0") => Some(false),
            Ok("1") => Some(true),
            _ => None,
        },
    )
}

/// The pipelines, made once per device.
pub struct ComputeCopy {
    push: ash::khr::push_descriptor::Device,
    set_layout: vk::DescriptorSetLayout,
    layout: vk::PipelineLayout,
    /// One per entry of [`SHADERS`].
    pipelines: Vec<vk::Pipeline>,
}

/// The push constants of `shaders/*.comp`: source origin, destination origin, extent.
#[repr(C)]
struct Region {
    src_origin: [i32; 2],
    dst_origin: [i32; 2],
    extent: [u32; 2],
}

impl ComputeCopy {
    /// The pipelines on `device`, which was created with `VK_KHR_push_descriptor`; `None` when
    /// any fails.
    pub fn new(instance: &ash::Instance, device: &ash::Device) -> Option<ComputeCopy> {
        let bindings = [0, 1].map(|b| {
            vk::DescriptorSetLayoutBinding::default()
                .binding(b)
                .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
                .descriptor_count(1)
                .stage_flags(vk::ShaderStageFlags::COMPUTE)
        });
        let set_info = vk::DescriptorSetLayoutCreateInfo::default()
            .flags(vk::DescriptorSetLayoutCreateFlags::PUSH_DESCRIPTOR_KHR)
            .bindings(&bindings);
        // SAFETY: the device is alive; the info outlives the call.
        let set_layout = unsafe { device.create_descriptor_set_layout(&set_info, None) }.ok()?;
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(vk::ShaderStageFlags::COMPUTE)
            .offset(0)
            .size(std::mem::size_of::<Region>() as u32)];
        let set_layouts = [set_layout];
        let layout_info = vk::PipelineLayoutCreateInfo::default()
            .set_layouts(&set_layouts)
            .push_constant_ranges(&ranges);
        // SAFETY: as above.
        let layout = match unsafe { device.create_pipeline_layout(&layout_info, None) } {
            Ok(l) => l,
            Err(_) => {
                // SAFETY: made above, used by nothing.
                unsafe { device.destroy_descriptor_set_layout(set_layout, None) };
                return None;
            }
        };
        let made: Vec<Option<vk::Pipeline>> = SHADERS
            .iter()
            .map(|(_, spv)| pipeline(device, layout, spv))
            .collect();
        let copy = ComputeCopy {
            push: ash::khr::push_descriptor::Device::new(instance, device),
            set_layout,
            layout,
            pipelines: made.iter().map(|p| p.unwrap_or_default()).collect(),
        };
        if made.iter().any(Option::is_none) {
            // SAFETY: everything in `copy` was made above and is used by nothing.
            unsafe { copy.destroy(device) };
            return None;
        }
        Some(copy)
    }

    /// Destroys the pipelines.
    ///
    /// # Safety
    /// No pending work uses them; `device` is the one they were made on.
    pub unsafe fn destroy(&self, device: &ash::Device) {
        // SAFETY: the caller's contract; null handles are ignored.
        unsafe {
            for &p in &self.pipelines {
                device.destroy_pipeline(p, None);
            }
            device.destroy_pipeline_layout(self.layout, None);
            device.destroy_descriptor_set_layout(self.set_layout, None);
        }
    }

    /// Records the copy of `extent` texels from `src_origin` of `src` to `dst_origin` of `dst`.
    ///
    /// # Safety
    /// `cmd` is recording on `device`'s compute-capable queue; both views are 2D views of one
    /// subresource each, of images in `GENERAL` with storage usage and the format of
    /// `SHADERS[shader]`, and
    /// the regions lie inside them; the caller orders the dispatch with barriers.
    #[allow(clippy::too_many_arguments)] // Two views, two origins, the extent.
    pub unsafe fn record(
        &self,
        device: &ash::Device,
        cmd: vk::CommandBuffer,
        shader: usize,
        src: vk::ImageView,
        src_origin: [i32; 2],
        dst: vk::ImageView,
        dst_origin: [i32; 2],
        extent: [u32; 2],
    ) {
        let images = [src, dst].map(|view| {
            [vk::DescriptorImageInfo::default()
                .image_view(view)
                .image_layout(vk::ImageLayout::GENERAL)]
        });
        let writes = [0, 1].map(|b| {
            vk::WriteDescriptorSet::default()
                .dst_binding(b as u32)
                .descriptor_type(vk::DescriptorType::STORAGE_IMAGE)
                .image_info(&images[b])
        });
        let region = Region {
            src_origin,
            dst_origin,
            extent,
        };
        // SAFETY: `Region` is plain data of 24 bytes, the push-constant range's size.
        let bytes = unsafe {
            std::slice::from_raw_parts(
                (&region as *const Region).cast::<u8>(),
                std::mem::size_of::<Region>(),
            )
        };
        let pipeline = self.pipelines[shader];
        // SAFETY: the caller's contract; the pipeline, layout and descriptors match the shaders.
        unsafe {
            device.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
            self.push.cmd_push_descriptor_set(
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                self.layout,
                0,
                &writes,
            );
            device.cmd_push_constants(cmd, self.layout, vk::ShaderStageFlags::COMPUTE, 0, bytes);
            device.cmd_dispatch(cmd, extent[0].div_ceil(GROUP), extent[1].div_ceil(GROUP), 1);
        }
    }
}

/// A compute pipeline of `spv` (entry point `main`) in `layout`.
fn pipeline(device: &ash::Device, layout: vk::PipelineLayout, spv: &[u8]) -> Option<vk::Pipeline> {
    let words = ash::util::read_spv(&mut std::io::Cursor::new(spv)).ok()?;
    let info = vk::ShaderModuleCreateInfo::default().code(&words);
    // SAFETY: the device is alive; `words` is SPIR-V built from shaders/copy.comp.
    let module = unsafe { device.create_shader_module(&info, None) }.ok()?;
    let stage = vk::PipelineShaderStageCreateInfo::default()
        .stage(vk::ShaderStageFlags::COMPUTE)
        .module(module)
        .name(c"main");
    let infos = [vk::ComputePipelineCreateInfo::default()
        .stage(stage)
        .layout(layout)];
    // SAFETY: as above; the module and layout are alive during the call.
    let made = unsafe { device.create_compute_pipelines(vk::PipelineCache::null(), &infos, None) };
    // SAFETY: the module is only needed while the pipeline is created.
    unsafe { device.destroy_shader_module(module, None) };
    made.ok().and_then(|p| p.into_iter().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_formats_take_a_shader() {
        assert_eq!(shader_for(vk::Format::R8G8B8A8_UNORM), Some(0));
        assert_eq!(shader_for(vk::Format::R32G32B32A32_UINT), Some(4));
        for f in [
            vk::Format::R8G8B8A8_SNORM,
            vk::Format::R8G8B8A8_SRGB,
            vk::Format::B8G8R8A8_UNORM,
            vk::Format::R32_SFLOAT,
            vk::Format::R16G16B16A16_SFLOAT,
            vk::Format::R16G16B16A16_UNORM,
            vk::Format::R8G8B8A8_SINT,
        ] {
            assert_eq!(shader_for(f), None, "{f:?}");
        }
    }

    #[test]
    fn the_spirv_is_whole_words() {
        for (_, spv) in SHADERS {
            let words = ash::util::read_spv(&mut std::io::Cursor::new(spv)).expect("SPIR-V");
            assert_eq!(words[0], 0x0723_0203, "SPIR-V magic");
        }
    }
}

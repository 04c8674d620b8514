//! Textures kept as optimal-tiled `VkImage`s (`DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE`).
//!
//! GPU OpenCL drivers import exported memory as an image only when it holds an optimal-tiled
//! Vulkan image of the same format and extent (NVIDIA cannot make images from buffers,
//! docs/gpu.md), so DEFAULT and IMMUTABLE textures of uncompressed color formats the device
//! exports that way live in one. Everything else (buffers, STAGING and DYNAMIC textures, which the
//! CPU maps; depth, block-compressed, video and multisampled formats) stays in the linear layout.
//! Images stay in `VK_IMAGE_LAYOUT_GENERAL` for their whole life, so any API can use them at any
//! time under the shared semaphores' ordering.

use ash::vk;

use super::setup::OPAQUE_FD;
use super::VulkanBackend;
use crate::core::flags::{USAGE_DEFAULT, USAGE_IMMUTABLE};
use crate::core::{BlockRegion, Dimension, ResourceDesc, ResourceLayout};

/// A texture's image.
#[derive(Clone, Copy, Debug)]
pub struct Image {
    pub raw: vk::Image,
    pub mip_levels: u32,
    /// Array layers (1 for 3D textures).
    pub layers: u32,
    pub format: vk::Format,
    pub image_type: vk::ImageType,
    /// Made with storage usage (shader copies may read and write it).
    pub storage: bool,
}

/// What an image for a texture is made with, once the device said it can export it.
pub struct ImagePlan {
    pub info_format: vk::Format,
    pub image_type: vk::ImageType,
    pub extent: vk::Extent3D,
    pub mip_levels: u32,
    pub layers: u32,
    pub usage: vk::ImageUsageFlags,
    /// The driver exports such images only from dedicated allocations.
    pub dedicated_only: bool,
}

/// The Vulkan format that holds a DXGI format's texels bit for bit, for the uncompressed color
/// formats. Typeless formats take their UINT member: images of them are only copied.
pub fn vk_format(dxgi: u32) -> Option<vk::Format> {
    use vk::Format as F;
    Some(match dxgi {
        1 | 3 => F::R32G32B32A32_UINT,
        2 => F::R32G32B32A32_SFLOAT,
        4 => F::R32G32B32A32_SINT,
        9 | 12 => F::R16G16B16A16_UINT,
        10 => F::R16G16B16A16_SFLOAT,
        11 => F::R16G16B16A16_UNORM,
        13 => F::R16G16B16A16_SNORM,
        14 => F::R16G16B16A16_SINT,
        15 | 17 => F::R32G32_UINT,
        16 => F::R32G32_SFLOAT,
        18 => F::R32G32_SINT,
        // DXGI lists components from the least significant bit; Vulkan's packed formats from the
        // most significant: R10G10B10A2 is A2B10G10R10, R11G11B10 is B10G11R11.
        23 | 25 => F::A2B10G10R10_UINT_PACK32,
        24 => F::A2B10G10R10_UNORM_PACK32,
        26 => F::B10G11R11_UFLOAT_PACK32,
        27 | 30 => F::R8G8B8A8_UINT,
        28 => F::R8G8B8A8_UNORM,
        29 => F::R8G8B8A8_SRGB,
        31 => F::R8G8B8A8_SNORM,
        32 => F::R8G8B8A8_SINT,
        33 | 36 => F::R16G16_UINT,
        34 => F::R16G16_SFLOAT,
        35 => F::R16G16_UNORM,
        37 => F::R16G16_SNORM,
        38 => F::R16G16_SINT,
        39 | 42 => F::R32_UINT,
        41 => F::R32_SFLOAT,
        43 => F::R32_SINT,
        48 | 50 => F::R8G8_UINT,
        49 => F::R8G8_UNORM,
        51 => F::R8G8_SNORM,
        52 => F::R8G8_SINT,
        53 | 57 => F::R16_UINT,
        54 => F::R16_SFLOAT,
        56 => F::R16_UNORM,
        58 => F::R16_SNORM,
        59 => F::R16_SINT,
        60 | 62 => F::R8_UINT,
        61 => F::R8_UNORM,
        63 => F::R8_SNORM,
        64 => F::R8_SINT,
        67 => F::E5B9G9R9_UFLOAT_PACK32,
        85 => F::R5G6B5_UNORM_PACK16,
        86 => F::A1R5G5B5_UNORM_PACK16,
        // X8 formats keep their fourth byte as stored; typeless takes UNORM (same bits).
        87 | 88 | 90 | 92 => F::B8G8R8A8_UNORM,
        91 | 93 => F::B8G8R8A8_SRGB,
        _ => return None,
    })
}

/// The (mip level, array layer) of a subresource index (`D3D11CalcSubresource`'s inverse).
pub fn split(image: &Image, sub: u32) -> (u32, u32) {
    (sub % image.mip_levels, sub / image.mip_levels)
}

fn layers(image: &Image, sub: u32) -> vk::ImageSubresourceLayers {
    let (mip, layer) = split(image, sub);
    vk::ImageSubresourceLayers {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        mip_level: mip,
        base_array_layer: layer,
        layer_count: 1,
    }
}

fn offset(r: &BlockRegion) -> vk::Offset3D {
    vk::Offset3D {
        x: r.x as i32,
        y: r.y as i32,
        z: r.z as i32,
    }
}

fn extent(r: &BlockRegion) -> vk::Extent3D {
    vk::Extent3D {
        width: r.w,
        height: r.h,
        depth: r.d,
    }
}

/// The whole image, for barriers and clears.
pub fn all(image: &Image) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: vk::ImageAspectFlags::COLOR,
        base_mip_level: 0,
        level_count: image.mip_levels,
        base_array_layer: 0,
        layer_count: image.layers,
    }
}

/// An image-to-image copy of equal regions (image formats hold one texel per block).
pub fn image_copy(
    dst: &Image,
    dst_sub: u32,
    dst_region: &BlockRegion,
    src: &Image,
    src_sub: u32,
    src_region: &BlockRegion,
) -> vk::ImageCopy {
    vk::ImageCopy {
        src_subresource: layers(src, src_sub),
        src_offset: offset(src_region),
        dst_subresource: layers(dst, dst_sub),
        dst_offset: offset(dst_region),
        extent: extent(src_region),
    }
}

/// A copy between a region of an image and the same region laid out linearly in a buffer:
/// `buffer_offset` is the region's first byte there, rows `row_pitch` and slices `depth_pitch`
/// bytes apart, `bytes` per texel.
pub fn buffer_image_copy(
    image: &Image,
    sub: u32,
    image_region: &BlockRegion,
    buffer_offset: u64,
    row_pitch: u64,
    depth_pitch: u64,
    bytes: u32,
) -> vk::BufferImageCopy {
    vk::BufferImageCopy {
        buffer_offset,
        // In texels and rows: the layout's pitches are whole texels and whole rows.
        buffer_row_length: (row_pitch / bytes as u64) as u32,
        buffer_image_height: (depth_pitch / row_pitch.max(1)) as u32,
        image_subresource: layers(image, sub),
        image_offset: offset(image_region),
        image_extent: extent(image_region),
    }
}

/// A texture's buffer-side numbers for [`buffer_image_copy`] from its linear layout.
pub fn linear_side(layout: &ResourceLayout, sub: u32, r: &BlockRegion) -> (u64, u64, u64) {
    let s = &layout.subresources[sub as usize];
    (
        layout.region_offset(sub, r),
        s.row_pitch as u64,
        s.depth_pitch as u64,
    )
}

impl VulkanBackend {
    /// How to keep a texture as an exportable optimal-tiled image, or `None` when it stays linear.
    pub(super) fn image_plan(&self, desc: &ResourceDesc) -> Option<ImagePlan> {
        if self.linear_textures
            || !matches!(desc.usage, USAGE_DEFAULT | USAGE_IMMUTABLE)
            || desc.sample_count != 1
        {
            return None;
        }
        let format = vk_format(desc.format)?;
        let (image_type, extent, layers) = match desc.dimension {
            Dimension::Buffer => return None,
            Dimension::Texture1D => (vk::ImageType::TYPE_1D, (desc.width, 1, 1), desc.array_size),
            Dimension::Texture2D => (
                vk::ImageType::TYPE_2D,
                (desc.width, desc.height, 1),
                desc.array_size,
            ),
            Dimension::Texture3D => (
                vk::ImageType::TYPE_3D,
                (desc.width, desc.height, desc.depth),
                1,
            ),
        };
        let base = vk::ImageUsageFlags::TRANSFER_SRC
            | vk::ImageUsageFlags::TRANSFER_DST
            | vk::ImageUsageFlags::SAMPLED;
        // Storage lets an importer write the image; formats that cannot be storage images
        // (sRGB on most devices) are still shared for reading.
        let (usage, props) = [base | vk::ImageUsageFlags::STORAGE, base]
            .into_iter()
            .find_map(|u| self.exportable_image(format, image_type, u).map(|p| (u, p)))?;
        let (limits, features) = props;
        let fits = limits.max_extent.width >= extent.0
            && limits.max_extent.height >= extent.1
            && limits.max_extent.depth >= extent.2
            && limits.max_mip_levels >= desc.mip_levels
            && limits.max_array_layers >= layers;
        fits.then_some(ImagePlan {
            info_format: format,
            image_type,
            extent: vk::Extent3D {
                width: extent.0,
                height: extent.1,
                depth: extent.2,
            },
            mip_levels: desc.mip_levels,
            layers,
            usage,
            dedicated_only: features.contains(vk::ExternalMemoryFeatureFlags::DEDICATED_ONLY),
        })
    }

    /// The device's limits for exportable optimal images of this kind, when it has them.
    fn exportable_image(
        &self,
        format: vk::Format,
        image_type: vk::ImageType,
        usage: vk::ImageUsageFlags,
    ) -> Option<(vk::ImageFormatProperties, vk::ExternalMemoryFeatureFlags)> {
        let mut external =
            vk::PhysicalDeviceExternalImageFormatInfo::default().handle_type(OPAQUE_FD);
        let info = vk::PhysicalDeviceImageFormatInfo2::default()
            .format(format)
            .ty(image_type)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage)
            .push_next(&mut external);
        let mut external_props = vk::ExternalImageFormatProperties::default();
        let mut props = vk::ImageFormatProperties2::default().push_next(&mut external_props);
        // SAFETY: the physical device belongs to the instance; the chains outlive the call.
        unsafe {
            self.instance
                .raw
                .get_physical_device_image_format_properties2(self.physical, &info, &mut props)
        }
        .ok()?;
        let limits = props.image_format_properties;
        let features = external_props
            .external_memory_properties
            .external_memory_features;
        features
            .contains(vk::ExternalMemoryFeatureFlags::EXPORTABLE)
            .then_some((limits, features))
    }

    /// Creates the image of a plan (not yet bound).
    pub(super) fn create_image(&self, plan: &ImagePlan) -> Option<vk::Image> {
        let mut external = vk::ExternalMemoryImageCreateInfo::default().handle_types(OPAQUE_FD);
        let info = vk::ImageCreateInfo::default()
            .image_type(plan.image_type)
            .format(plan.info_format)
            .extent(plan.extent)
            .mip_levels(plan.mip_levels)
            .array_layers(plan.layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(plan.usage)
            .sharing_mode(self.sharing_mode())
            .queue_family_indices(&self.families)
            .initial_layout(vk::ImageLayout::UNDEFINED)
            .push_next(&mut external);
        // SAFETY: the device is alive; the plan was checked against the device's limits for
        // exportable images of this format, type, tiling and usage.
        unsafe { self.device.create_image(&info, None) }.ok()
    }

    /// Records the image's move to GENERAL and its zero-fill (a new image's contents are
    /// undefined; Direct3D's are zero).
    pub(super) fn record_image_init(&self, cmd: vk::CommandBuffer, image: &Image) {
        let to_general = vk::ImageMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::empty())
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::GENERAL)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image.raw)
            .subresource_range(all(image));
        let zero = vk::ClearColorValue { uint32: [0; 4] };
        // SAFETY: `cmd` is recording (caller); the image is alive, made with TRANSFER_DST, of an
        // uncompressed color format, and in GENERAL after the barrier.
        unsafe {
            self.device.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_general],
            );
            self.device.cmd_clear_color_image(
                cmd,
                image.raw,
                vk::ImageLayout::GENERAL,
                &zero,
                &[all(image)],
            );
        }
    }
}

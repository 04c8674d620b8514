//! The Vulkan side of a shared texture: the functions it needs from DXVK's device, and its image
//! and memory, made one of two ways:
//! - on a CPU device, a `LINEAR` image in host-visible memory mapped whole (`DXCL_MEMORY_KIND_HOST`,
//!   for `CL_MEM_USE_HOST_PTR`);
//! - on any other, an `OPTIMAL` image in exportable device-local memory (`DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE`,
//!   imported by the GPU's OpenCL), which needs `vkGetMemoryFdKHR` on DXVK's device: dxcl's Vulkan
//!   layer enables it (crates/dxcl-vk-layer).

use std::ffi::c_void;

use ash::vk;
use dxcl_abi::interop::{
    DXCL_MEMORY_KIND_HOST, DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE, DXCL_SUBRESOURCE_LAYOUT,
};
use dxcl_abi::*;

use super::memory::{Allocation, Vk};
use crate::d3d::vk_loader::load;

/// The Vulkan format and texel size of the DXGI formats a shared texture may have: those OpenCL
/// images have (the layer's `core/format.rs`), in the same bit layout.
pub(super) fn vk_format(f: DXGI_FORMAT) -> Option<(vk::Format, u32)> {
    Some(match f {
        DXGI_FORMAT_R8G8B8A8_UNORM => (vk::Format::R8G8B8A8_UNORM, 4),
        DXGI_FORMAT_R8G8B8A8_UNORM_SRGB => (vk::Format::R8G8B8A8_SRGB, 4),
        DXGI_FORMAT_R8G8B8A8_SNORM => (vk::Format::R8G8B8A8_SNORM, 4),
        DXGI_FORMAT_R8G8B8A8_UINT => (vk::Format::R8G8B8A8_UINT, 4),
        DXGI_FORMAT_R8G8B8A8_SINT => (vk::Format::R8G8B8A8_SINT, 4),
        DXGI_FORMAT_B8G8R8A8_UNORM => (vk::Format::B8G8R8A8_UNORM, 4),
        DXGI_FORMAT_R16G16B16A16_FLOAT => (vk::Format::R16G16B16A16_SFLOAT, 8),
        DXGI_FORMAT_R16G16B16A16_UNORM => (vk::Format::R16G16B16A16_UNORM, 8),
        DXGI_FORMAT_R16G16B16A16_UINT => (vk::Format::R16G16B16A16_UINT, 8),
        DXGI_FORMAT_R16G16B16A16_SINT => (vk::Format::R16G16B16A16_SINT, 8),
        DXGI_FORMAT_R32G32B32A32_FLOAT => (vk::Format::R32G32B32A32_SFLOAT, 16),
        DXGI_FORMAT_R32G32B32A32_UINT => (vk::Format::R32G32B32A32_UINT, 16),
        DXGI_FORMAT_R32G32B32A32_SINT => (vk::Format::R32G32B32A32_SINT, 16),
        DXGI_FORMAT_R8G8_UNORM => (vk::Format::R8G8_UNORM, 2),
        DXGI_FORMAT_R16G16_FLOAT => (vk::Format::R16G16_SFLOAT, 4),
        DXGI_FORMAT_R32G32_FLOAT => (vk::Format::R32G32_SFLOAT, 8),
        DXGI_FORMAT_R8_UNORM => (vk::Format::R8_UNORM, 1),
        DXGI_FORMAT_R8_UINT => (vk::Format::R8_UINT, 1),
        DXGI_FORMAT_R16_FLOAT => (vk::Format::R16_SFLOAT, 2),
        DXGI_FORMAT_R16_UNORM => (vk::Format::R16_UNORM, 2),
        DXGI_FORMAT_R16_UINT => (vk::Format::R16_UINT, 2),
        DXGI_FORMAT_R32_FLOAT => (vk::Format::R32_SFLOAT, 4),
        DXGI_FORMAT_R32_UINT => (vk::Format::R32_UINT, 4),
        DXGI_FORMAT_R32_SINT => (vk::Format::R32_SINT, 4),
        _ => return None,
    })
}

/// Everything a shared texture calls on DXVK's instance and device.
pub(super) struct Fns {
    pub physical: vk::PhysicalDevice,
    pub device: vk::Device,
    pub queue: vk::Queue,
    props: vk::PFN_vkGetPhysicalDeviceProperties,
    memory_props: vk::PFN_vkGetPhysicalDeviceMemoryProperties,
    create_image: vk::PFN_vkCreateImage,
    destroy_image: vk::PFN_vkDestroyImage,
    requirements: vk::PFN_vkGetImageMemoryRequirements2,
    allocate: vk::PFN_vkAllocateMemory,
    free_memory: vk::PFN_vkFreeMemory,
    bind: vk::PFN_vkBindImageMemory,
    map: vk::PFN_vkMapMemory,
    unmap_memory: vk::PFN_vkUnmapMemory,
    subresource_layout: vk::PFN_vkGetImageSubresourceLayout,
    queue_wait_idle: vk::PFN_vkQueueWaitIdle,
    /// Only where the device enables VK_KHR_external_memory_fd (dxcl's Vulkan layer).
    get_fd: Option<vk::PFN_vkGetMemoryFdKHR>,
}

impl Fns {
    /// Loads them through the process's Vulkan loader.
    ///
    /// # Safety
    /// The handles are DXVK's live instance, physical device, device and queue.
    pub unsafe fn load(
        instance: vk::Instance,
        physical: vk::PhysicalDevice,
        device: vk::Device,
        queue: vk::Queue,
    ) -> Option<Fns> {
        let gipa = crate::d3d::vk_loader::loader_proc_addr()?;
        // SAFETY: each load is of DXVK's live instance or device (caller's contract) with its
        // name's function type; DXVK requires Vulkan 1.3, so the 1.1 core functions exist.
        unsafe {
            let gdpa: vk::PFN_vkGetDeviceProcAddr = load(gipa, instance, c"vkGetDeviceProcAddr")?;
            Some(Fns {
                physical,
                device,
                queue,
                props: load(gipa, instance, c"vkGetPhysicalDeviceProperties")?,
                memory_props: load(gipa, instance, c"vkGetPhysicalDeviceMemoryProperties")?,
                create_image: load(gdpa, device, c"vkCreateImage")?,
                destroy_image: load(gdpa, device, c"vkDestroyImage")?,
                requirements: load(gdpa, device, c"vkGetImageMemoryRequirements2")?,
                allocate: load(gdpa, device, c"vkAllocateMemory")?,
                free_memory: load(gdpa, device, c"vkFreeMemory")?,
                bind: load(gdpa, device, c"vkBindImageMemory")?,
                map: load(gdpa, device, c"vkMapMemory")?,
                unmap_memory: load(gdpa, device, c"vkUnmapMemory")?,
                subresource_layout: load(gdpa, device, c"vkGetImageSubresourceLayout")?,
                queue_wait_idle: load(gdpa, device, c"vkQueueWaitIdle")?,
                get_fd: load(gdpa, device, c"vkGetMemoryFdKHR"),
            })
        }
    }

    /// What the texture's object keeps.
    pub fn vk(&self) -> Vk {
        Vk {
            device: self.device,
            queue: self.queue,
            destroy_image: self.destroy_image,
            free_memory: self.free_memory,
            unmap_memory: self.unmap_memory,
            queue_wait_idle: self.queue_wait_idle,
        }
    }

    /// Whether the physical device runs on the CPU.
    pub fn cpu_device(&self) -> bool {
        let mut p = vk::PhysicalDeviceProperties::default();
        // SAFETY: DXVK's physical device; a valid out struct.
        unsafe { (self.props)(self.physical, &mut p) };
        p.device_type == vk::PhysicalDeviceType::CPU
    }

    /// A memory type of `bits` with all of `wanted`, `preferred` ones first.
    fn memory_type(
        &self,
        bits: u32,
        wanted: vk::MemoryPropertyFlags,
        preferred: vk::MemoryPropertyFlags,
    ) -> Option<u32> {
        let mut mp = vk::PhysicalDeviceMemoryProperties::default();
        // SAFETY: DXVK's physical device; a valid out struct.
        unsafe { (self.memory_props)(self.physical, &mut mp) };
        let fits = |i: u32, flags: vk::MemoryPropertyFlags| {
            bits & (1 << i) != 0 && mp.memory_types[i as usize].property_flags.contains(flags)
        };
        let n = mp.memory_type_count;
        (0..n)
            .find(|&i| fits(i, wanted | preferred))
            .or_else(|| (0..n).find(|&i| fits(i, wanted)))
    }

    /// Makes the image; None when the driver refuses it.
    fn image(&self, info: &vk::ImageCreateInfo<'_>) -> Option<vk::Image> {
        let mut image = vk::Image::null();
        // SAFETY: DXVK's live device; a valid create info.
        let r = unsafe { (self.create_image)(self.device, info, std::ptr::null(), &mut image) };
        (r == vk::Result::SUCCESS).then_some(image)
    }

    /// Frees what a failed allocation made (null handles are allowed).
    fn undo(&self, image: vk::Image, memory: vk::DeviceMemory) {
        // SAFETY: ours, never used by anyone else.
        unsafe {
            (self.free_memory)(self.device, memory, std::ptr::null());
            (self.destroy_image)(self.device, image, std::ptr::null());
        }
    }

    /// The image's memory requirements and whether it needs a dedicated allocation.
    fn requirements(&self, image: vk::Image) -> (vk::MemoryRequirements, bool) {
        let mut dedicated = vk::MemoryDedicatedRequirements::default();
        let mut req = vk::MemoryRequirements2::default().push_next(&mut dedicated);
        let info = vk::ImageMemoryRequirementsInfo2::default().image(image);
        // SAFETY: our image; a valid chain.
        unsafe { (self.requirements)(self.device, &info, &mut req) };
        let r = req.memory_requirements;
        (r, dedicated.requires_dedicated_allocation != 0)
    }

    /// A CPU device's texture: a `LINEAR` image in host-visible memory, mapped whole.
    pub fn host_image(
        &self,
        format: vk::Format,
        desc: &D3D11_TEXTURE2D_DESC,
    ) -> Result<Allocation, HRESULT> {
        let info = image_info(
            format,
            desc,
            usage_for(desc.BindFlags),
            vk::ImageTiling::LINEAR,
        );
        // A linear image of this format and usage is not supported.
        let image = self.image(&info).ok_or(E_INVALIDARG)?;
        let (req, _) = self.requirements(image);
        let wanted = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let Some(index) = self.memory_type(
            req.memory_type_bits,
            wanted,
            vk::MemoryPropertyFlags::empty(),
        ) else {
            self.undo(image, vk::DeviceMemory::null());
            return Err(DXGI_ERROR_UNSUPPORTED);
        };
        let alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(index);
        let mut memory = vk::DeviceMemory::null();
        let mut host: *mut c_void = std::ptr::null_mut();
        // SAFETY: DXVK's device; our image and memory; the map covers the whole allocation.
        let ok = unsafe {
            (self.allocate)(self.device, &alloc, std::ptr::null(), &mut memory)
                == vk::Result::SUCCESS
                && (self.bind)(self.device, image, memory, 0) == vk::Result::SUCCESS
                && (self.map)(
                    self.device,
                    memory,
                    0,
                    vk::WHOLE_SIZE,
                    vk::MemoryMapFlags::empty(),
                    &mut host,
                ) == vk::Result::SUCCESS
        };
        if !ok {
            self.undo(image, memory);
            return Err(E_OUTOFMEMORY);
        }
        let color = vk::ImageSubresource {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            array_layer: 0,
        };
        let mut sl = vk::SubresourceLayout::default();
        // SAFETY: our linear image.
        unsafe { (self.subresource_layout)(self.device, image, &color, &mut sl) };
        Ok(Allocation {
            image,
            memory,
            host,
            size: req.size,
            layout: layout(desc, sl.offset, sl.row_pitch as u32, sl.size),
            kind: DXCL_MEMORY_KIND_HOST,
            get_fd: None,
        })
    }

    /// Any other device's texture: an `OPTIMAL` image in exportable device-local memory, as
    /// dxcl's own Vulkan backend makes its textures (dedicated only where the driver insists:
    /// importers cannot say they import a dedicated allocation). Always bound for storage too,
    /// so DXVK keeps it in `GENERAL`, the layout an importer sees.
    pub fn exportable_image(
        &self,
        format: vk::Format,
        texel: u32,
        desc: &D3D11_TEXTURE2D_DESC,
    ) -> Result<Allocation, HRESULT> {
        // No fd can be taken from DXVK's memory without dxcl's Vulkan layer.
        let get_fd = self.get_fd.ok_or(DXGI_ERROR_UNSUPPORTED)?;
        let usage = usage_for(desc.BindFlags) | vk::ImageUsageFlags::STORAGE;
        let mut external = vk::ExternalMemoryImageCreateInfo::default()
            .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let info =
            image_info(format, desc, usage, vk::ImageTiling::OPTIMAL).push_next(&mut external);
        let image = self.image(&info).ok_or(E_INVALIDARG)?;
        let (req, dedicated) = self.requirements(image);
        let Some(index) = self.memory_type(
            req.memory_type_bits,
            vk::MemoryPropertyFlags::empty(),
            vk::MemoryPropertyFlags::DEVICE_LOCAL,
        ) else {
            self.undo(image, vk::DeviceMemory::null());
            return Err(E_OUTOFMEMORY);
        };
        let mut export = vk::ExportMemoryAllocateInfo::default()
            .handle_types(vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD);
        let mut dedicated_info = vk::MemoryDedicatedAllocateInfo::default().image(image);
        let mut alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(index)
            .push_next(&mut export);
        if dedicated {
            alloc = alloc.push_next(&mut dedicated_info);
        }
        let mut memory = vk::DeviceMemory::null();
        // SAFETY: DXVK's device; our image and memory; the chain outlives the calls.
        let ok = unsafe {
            (self.allocate)(self.device, &alloc, std::ptr::null(), &mut memory)
                == vk::Result::SUCCESS
                && (self.bind)(self.device, image, memory, 0) == vk::Result::SUCCESS
        };
        if !ok {
            self.undo(image, memory);
            return Err(E_OUTOFMEMORY);
        }
        // The layout describes the linear copy a map would give (OPAQUE_FD_IMAGE), not the memory.
        let row = desc.Width * texel;
        Ok(Allocation {
            image,
            memory,
            host: std::ptr::null_mut(),
            size: req.size,
            layout: layout(desc, 0, row, u64::from(row) * u64::from(desc.Height)),
            kind: DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE,
            get_fd: Some(get_fd),
        })
    }
}

/// Transfers both ways, and what the bind flags ask for.
fn usage_for(bind: u32) -> vk::ImageUsageFlags {
    let mut usage = vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST;
    if bind & D3D11_BIND_SHADER_RESOURCE as u32 != 0 {
        usage |= vk::ImageUsageFlags::SAMPLED;
    }
    if bind & D3D11_BIND_UNORDERED_ACCESS as u32 != 0 {
        usage |= vk::ImageUsageFlags::STORAGE;
    }
    if bind & D3D11_BIND_RENDER_TARGET as u32 != 0 {
        usage |= vk::ImageUsageFlags::COLOR_ATTACHMENT;
    }
    usage
}

fn image_info<'a>(
    format: vk::Format,
    desc: &D3D11_TEXTURE2D_DESC,
    usage: vk::ImageUsageFlags,
    tiling: vk::ImageTiling,
) -> vk::ImageCreateInfo<'a> {
    vk::ImageCreateInfo::default()
        .image_type(vk::ImageType::TYPE_2D)
        .format(format)
        .extent(vk::Extent3D {
            width: desc.Width,
            height: desc.Height,
            depth: 1,
        })
        .mip_levels(1)
        .array_layers(1)
        .samples(vk::SampleCountFlags::TYPE_1)
        .tiling(tiling)
        .usage(usage)
        .sharing_mode(vk::SharingMode::EXCLUSIVE)
        .initial_layout(vk::ImageLayout::UNDEFINED)
}

fn layout(
    desc: &D3D11_TEXTURE2D_DESC,
    offset: u64,
    row_pitch: u32,
    size: u64,
) -> DXCL_SUBRESOURCE_LAYOUT {
    DXCL_SUBRESOURCE_LAYOUT {
        Offset: offset,
        Size: size,
        RowPitch: row_pitch,
        DepthPitch: size as u32,
        Width: desc.Width,
        Height: desc.Height,
        Depth: 1,
        Reserved: 0,
    }
}

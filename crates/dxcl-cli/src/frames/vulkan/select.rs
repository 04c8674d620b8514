//! Choosing the Vulkan device of case d (by the OpenCL device's UUID) and its memory types.

use ash::vk;
use std::ffi::CStr;

use super::{Setup, FORMAT, OPAQUE_FD, SEMAPHORE_FD, SHARED_USAGE};
use crate::frames::image::Extent;

fn has_extension(list: &[vk::ExtensionProperties], name: &CStr) -> bool {
    list.iter()
        .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
}

/// A memory type among `bits` with all of `want`, else one with `fallback`.
pub(super) fn memory_type(
    props: &vk::PhysicalDeviceMemoryProperties,
    bits: u32,
    want: vk::MemoryPropertyFlags,
    fallback: vk::MemoryPropertyFlags,
) -> Option<u32> {
    let types = &props.memory_types[..props.memory_type_count as usize];
    let find = |flags: vk::MemoryPropertyFlags| {
        (0..types.len() as u32)
            .find(|&i| bits & (1 << i) != 0 && types[i as usize].property_flags.contains(flags))
    };
    find(want).or_else(|| find(fallback))
}

/// The instance (and the loader) until the device exists; destroys the instance on an early
/// return.
pub(super) struct Partial {
    pub(super) entry: Option<ash::Entry>,
    pub(super) instance: Option<ash::Instance>,
}

impl Partial {
    pub(super) fn take(&mut self) -> (ash::Entry, ash::Instance) {
        (
            self.entry.take().expect("taken once"),
            self.instance.take().expect("taken once"),
        )
    }
}

impl Drop for Partial {
    fn drop(&mut self) {
        if let Some(instance) = self.instance.take() {
            // SAFETY: no device or other child was made from it (or it was destroyed).
            unsafe { instance.destroy_instance(None) };
        }
    }
}

/// The physical device to use: its handle, a queue family with transfer, its name, whether it
/// exports semaphores, and whether exported images need dedicated allocations.
pub(super) fn choose(
    instance: &ash::Instance,
    uuid: Option<[u8; 16]>,
    extent: Extent,
) -> Result<(vk::PhysicalDevice, u32, String, bool, bool), Setup> {
    // SAFETY: a live instance. Every query below takes a handle from it and structures that
    // outlive the call ("as above").
    let physicals = unsafe { instance.enumerate_physical_devices() }
        .map_err(|r| Setup::Unavailable(format!("vkEnumeratePhysicalDevices: {r:?}")))?;
    let mut seen = Vec::new();
    for pd in physicals {
        let mut id = vk::PhysicalDeviceIDProperties::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
        // SAFETY: as above.
        unsafe { instance.get_physical_device_properties2(pd, &mut props2) };
        let props = props2.properties;
        let device_uuid = id.device_uuid;
        let name = props
            .device_name_as_c_str()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "Vulkan device".into());
        if uuid.is_some_and(|u| u != device_uuid) {
            seen.push(name);
            continue;
        }
        // SAFETY: as above.
        let exts = unsafe { instance.enumerate_device_extension_properties(pd) }
            .map_err(|r| Setup::Failed(format!("vkEnumerateDeviceExtensionProperties: {r:?}")))?;
        if !has_extension(&exts, ash::khr::external_memory_fd::NAME) {
            return Err(Setup::Unavailable(format!(
                "the Vulkan device {name} has no VK_KHR_external_memory_fd"
            )));
        }
        // The images: exportable as opaque fds, in this format, extent and usage.
        let mut external_info =
            vk::PhysicalDeviceExternalImageFormatInfo::default().handle_type(OPAQUE_FD);
        let info = vk::PhysicalDeviceImageFormatInfo2::default()
            .format(FORMAT)
            .ty(vk::ImageType::TYPE_2D)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(SHARED_USAGE)
            .push_next(&mut external_info);
        let mut external = vk::ExternalImageFormatProperties::default();
        let mut out = vk::ImageFormatProperties2::default().push_next(&mut external);
        // SAFETY: as above.
        let r =
            unsafe { instance.get_physical_device_image_format_properties2(pd, &info, &mut out) };
        let limits = out.image_format_properties.max_extent;
        let features = external.external_memory_properties.external_memory_features;
        if r.is_err()
            || !features.contains(vk::ExternalMemoryFeatureFlags::EXPORTABLE)
            || limits.width < extent.width
            || limits.height < extent.height
        {
            return Err(Setup::Unavailable(format!(
                "the Vulkan device {name} cannot export an optimal-tiled {} R8G8B8A8_UNORM image \
                 as an opaque fd ({r:?}, features {features:?}, max {}x{})",
                extent.name(),
                limits.width,
                limits.height
            )));
        }
        let dedicated_only = features.contains(vk::ExternalMemoryFeatureFlags::DEDICATED_ONLY);
        let semaphores = has_extension(&exts, ash::khr::external_semaphore_fd::NAME) && {
            let info = vk::PhysicalDeviceExternalSemaphoreInfo::default().handle_type(SEMAPHORE_FD);
            let mut out = vk::ExternalSemaphoreProperties::default();
            // SAFETY: as above.
            unsafe {
                instance.get_physical_device_external_semaphore_properties(pd, &info, &mut out)
            };
            out.external_semaphore_features
                .contains(vk::ExternalSemaphoreFeatureFlags::EXPORTABLE)
        };
        // SAFETY: as above.
        let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
        let any = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER;
        let family = families
            .iter()
            .position(|f| f.queue_count > 0 && f.queue_flags.intersects(any))
            .ok_or_else(|| Setup::Unavailable(format!("the Vulkan device {name} has no queue")))?;
        return Ok((pd, family as u32, name, semaphores, dedicated_only));
    }
    Err(Setup::Unavailable(match uuid {
        Some(_) => format!(
            "no Vulkan device has the OpenCL device's UUID (devices: {})",
            if seen.is_empty() {
                "none".to_string()
            } else {
                seen.join(", ")
            }
        ),
        None => "no Vulkan device".to_string(),
    }))
}

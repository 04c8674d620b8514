//! Finding Vulkan devices that can hold shareable resources, and opening them.
//!
//! A physical device qualifies when it offers Vulkan 1.2 (timeline semaphores are core there),
//! `VK_KHR_external_memory_fd`, and buffers exportable as opaque fds with the usage resources
//! need. Anything missing (no loader, no device, a failing call) means no adapter, never an error.

use std::ffi::CStr;
use std::sync::{Arc, OnceLock};

use ash::vk;

use crate::backend::{AdapterDesc, BackendKind};

/// The loader and the instance every device of this process shares.
pub struct Instance {
    /// Keeps libvulkan loaded while the instance lives.
    _entry: ash::Entry,
    pub raw: ash::Instance,
}

impl Drop for Instance {
    fn drop(&mut self) {
        // Not reached in practice (the process keeps its instance); correct if it ever is.
        // SAFETY: every device made from this instance holds an `Arc` to it, so none is left.
        unsafe { self.raw.destroy_instance(None) };
    }
}

/// Usage of every resource buffer: copies both ways and storage access from compute importers.
pub const RESOURCE_USAGE: vk::BufferUsageFlags = vk::BufferUsageFlags::from_raw(
    vk::BufferUsageFlags::TRANSFER_SRC.as_raw()
        | vk::BufferUsageFlags::TRANSFER_DST.as_raw()
        | vk::BufferUsageFlags::STORAGE_BUFFER.as_raw(),
);

pub const OPAQUE_FD: vk::ExternalMemoryHandleTypeFlags =
    vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;

/// What a physical device offers that the backend depends on.
pub struct DeviceChoice {
    pub physical: vk::PhysicalDevice,
    pub adapter: AdapterDesc,
    pub queue_family: u32,
    /// A transfer-only family (a copy engine) for the copy lane (`lane.rs`).
    pub copy_family: Option<u32>,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    /// A CPU device (lavapipe): host-visible memory is as fast as any, so Map goes direct.
    pub cpu: bool,
    /// The driver exports resource buffers only from dedicated allocations.
    pub dedicated_only: bool,
    /// `VK_KHR_external_semaphore_fd` with exportable opaque-fd binary semaphores.
    pub semaphore_export: bool,
    /// `VK_EXT_external_memory_host`: its `minImportedHostPointerAlignment`.
    pub host_import: Option<u64>,
    /// A compute queue, `VK_KHR_push_descriptor` and workgroups of the shader's size: what the
    /// shader copies need (`compute_copy.rs`).
    pub compute_copy: bool,
}

/// The process's Vulkan instance, made once and kept: unloading libvulkan and its drivers while
/// other threads open devices (or while a driver's own threads run) is not something drivers
/// survive reliably, and a second instance would gain nothing.
fn instance() -> Option<Arc<Instance>> {
    static INSTANCE: OnceLock<Option<Arc<Instance>>> = OnceLock::new();
    INSTANCE
        .get_or_init(|| {
            // SAFETY: loading libvulkan runs its initialisers, which are the system's Vulkan
            // loader; we trust it as any Vulkan application does.
            let entry = unsafe { ash::Entry::load() }.ok()?;
            // SAFETY: a global query with no arguments.
            let version = unsafe { entry.try_enumerate_instance_version() }
                .ok()?
                .unwrap_or(vk::API_VERSION_1_0);
            if version < vk::API_VERSION_1_2 {
                return None;
            }
            let app = vk::ApplicationInfo::default()
                .application_name(c"dxcl")
                .engine_name(c"dxcl-d3d")
                .api_version(vk::API_VERSION_1_2);
            let info = vk::InstanceCreateInfo::default().application_info(&app);
            // SAFETY: `info` and what it points to live across the call.
            let raw = unsafe { entry.create_instance(&info, None) }.ok()?;
            Some(Arc::new(Instance { _entry: entry, raw }))
        })
        .clone()
}

/// Lists the qualifying devices, in the driver's order. Empty when libvulkan is missing or
/// nothing qualifies.
pub fn discover() -> Option<(Arc<Instance>, Vec<DeviceChoice>)> {
    let instance = instance()?;
    // SAFETY: the instance is alive.
    let physicals = unsafe { instance.raw.enumerate_physical_devices() }.ok()?;
    let choices: Vec<DeviceChoice> = physicals
        .into_iter()
        // SAFETY: each handle came from this instance.
        .filter_map(|pd| unsafe { choose(&instance.raw, pd) })
        .collect();
    Some((instance, choices))
}

fn has_extension(list: &[vk::ExtensionProperties], name: &CStr) -> bool {
    list.iter()
        .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
}

/// # Safety
/// `pd` belongs to `instance`.
unsafe fn choose(instance: &ash::Instance, pd: vk::PhysicalDevice) -> Option<DeviceChoice> {
    // SAFETY: `pd` belongs to `instance` (contract). The same holds for every call below, whose
    // structures are initialised and outlive the call ("as above").
    let props = unsafe { instance.get_physical_device_properties(pd) };
    if props.api_version < vk::API_VERSION_1_2 {
        return None;
    }
    // SAFETY: as above.
    let exts = unsafe { instance.enumerate_device_extension_properties(pd) }.ok()?;
    if !has_extension(&exts, ash::khr::external_memory_fd::NAME) {
        return None;
    }
    let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
    let mut features = vk::PhysicalDeviceFeatures2::default().push_next(&mut f12);
    // SAFETY: as above.
    unsafe { instance.get_physical_device_features2(pd, &mut features) };
    if f12.timeline_semaphore == vk::FALSE {
        return None;
    }
    let mut id = vk::PhysicalDeviceIDProperties::default();
    let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut id);
    // SAFETY: as above.
    unsafe { instance.get_physical_device_properties2(pd, &mut props2) };
    let (uuid, luid_bytes, luid_valid) = (id.device_uuid, id.device_luid, id.device_luid_valid);

    // Resource buffers must be exportable as opaque fds.
    let ext_info = vk::PhysicalDeviceExternalBufferInfo::default()
        .usage(RESOURCE_USAGE)
        .handle_type(OPAQUE_FD);
    let mut ext_props = vk::ExternalBufferProperties::default();
    // SAFETY: as above.
    unsafe {
        instance.get_physical_device_external_buffer_properties(pd, &ext_info, &mut ext_props)
    };
    let features = ext_props
        .external_memory_properties
        .external_memory_features;
    if !features.contains(vk::ExternalMemoryFeatureFlags::EXPORTABLE) {
        return None;
    }
    let dedicated_only = features.contains(vk::ExternalMemoryFeatureFlags::DEDICATED_ONLY);

    // SAFETY: as above.
    let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
    let wanted = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE | vk::QueueFlags::TRANSFER;
    let queue_family = families
        .iter()
        .position(|f| f.queue_count > 0 && f.queue_flags.intersects(wanted))?
        as u32;

    let copy_family = families
        .iter()
        .position(|f| {
            f.queue_count > 0
                && f.queue_flags.contains(vk::QueueFlags::TRANSFER)
                // A copy engine's family: no graphics or compute, and none of the video or
                // optical-flow families some drivers also mark TRANSFER.
                && !f.queue_flags.intersects(
                    vk::QueueFlags::GRAPHICS
                        | vk::QueueFlags::COMPUTE
                        | vk::QueueFlags::VIDEO_DECODE_KHR
                        | vk::QueueFlags::VIDEO_ENCODE_KHR
                        | vk::QueueFlags::OPTICAL_FLOW_NV,
                )
                // Any texel of an image can be copied (no coarser transfer granularity).
                && f.min_image_transfer_granularity
                    == (vk::Extent3D {
                        width: 1,
                        height: 1,
                        depth: 1,
                    })
        })
        .map(|i| i as u32);

    let group = super::compute_copy::GROUP;
    let compute_copy = families[queue_family as usize]
        .queue_flags
        .contains(vk::QueueFlags::COMPUTE)
        && has_extension(&exts, ash::khr::push_descriptor::NAME)
        && props.limits.max_compute_work_group_invocations >= group * group
        && props.limits.max_compute_work_group_size[..2]
            .iter()
            .all(|&n| n >= group);

    let semaphore_export = has_extension(&exts, ash::khr::external_semaphore_fd::NAME) && {
        let info = vk::PhysicalDeviceExternalSemaphoreInfo::default()
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let mut out = vk::ExternalSemaphoreProperties::default();
        // SAFETY: as above.
        unsafe { instance.get_physical_device_external_semaphore_properties(pd, &info, &mut out) };
        out.external_semaphore_features
            .contains(vk::ExternalSemaphoreFeatureFlags::EXPORTABLE)
    };

    let host_import = has_extension(&exts, ash::ext::external_memory_host::NAME).then(|| {
        let mut host = vk::PhysicalDeviceExternalMemoryHostPropertiesEXT::default();
        let mut props2 = vk::PhysicalDeviceProperties2::default().push_next(&mut host);
        // SAFETY: as above.
        unsafe { instance.get_physical_device_properties2(pd, &mut props2) };
        host.min_imported_host_pointer_alignment.max(1)
    });

    // SAFETY: as above.
    let memory = unsafe { instance.get_physical_device_memory_properties(pd) };
    let heaps = &memory.memory_heaps[..memory.memory_heap_count as usize];
    let local: u64 = heaps
        .iter()
        .filter(|h| h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
        .map(|h| h.size)
        .sum();
    let shared: u64 = heaps
        .iter()
        .filter(|h| !h.flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
        .map(|h| h.size)
        .sum();
    let cpu = props.device_type == vk::PhysicalDeviceType::CPU;
    let description = props
        .device_name_as_c_str()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "Vulkan device".to_owned());
    let luid = if luid_valid != vk::FALSE {
        luid_from_bytes(luid_bytes)
    } else {
        luid_from_uuid(&uuid)
    };
    Some(DeviceChoice {
        physical: pd,
        adapter: AdapterDesc {
            backend: BackendKind::Vulkan,
            description,
            vendor_id: props.vendor_id,
            device_id: props.device_id,
            sub_sys_id: 0,
            revision: 0,
            dedicated_video_memory: local,
            dedicated_system_memory: 0,
            shared_system_memory: shared,
            luid,
            uuid,
            software: cpu,
        },
        queue_family,
        copy_family,
        memory,
        cpu,
        dedicated_only,
        semaphore_export,
        host_import,
        compute_copy,
    })
}

/// A Windows `LUID` as Vulkan stores it (`LowPart` then `HighPart`, little-endian).
fn luid_from_bytes(b: [u8; 8]) -> (u32, i32) {
    (
        u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
    )
}

pub use dxcl_abi::luid_from_uuid;

/// Memory type index for `bits` with `want`, preferring types that also have `prefer`.
pub fn memory_type(
    memory: &vk::PhysicalDeviceMemoryProperties,
    bits: u32,
    want: vk::MemoryPropertyFlags,
    prefer: vk::MemoryPropertyFlags,
) -> Option<u32> {
    let types = &memory.memory_types[..memory.memory_type_count as usize];
    let fits = |i: usize, flags: vk::MemoryPropertyFlags| {
        bits & (1 << i) != 0 && types[i].property_flags.contains(flags)
    };
    (0..types.len())
        .find(|&i| fits(i, want | prefer))
        .or_else(|| (0..types.len()).find(|&i| fits(i, want)))
        .map(|i| i as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luids() {
        assert_eq!(
            luid_from_bytes([1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]),
            (1, -1)
        );
        let a = luid_from_uuid(&[0; 16]);
        assert_ne!(a, (0, 0));
        assert_eq!(a, luid_from_uuid(&[0; 16]));
        let mut u = [0; 16];
        u[15] = 1;
        assert_ne!(luid_from_uuid(&u), a);
    }
}

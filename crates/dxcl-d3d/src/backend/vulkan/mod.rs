//! The Vulkan backend: one adapter per Vulkan device that can export memory as opaque fds.
//!
//! Every resource is ONE `VkDeviceMemory`, allocated exportable (`OPAQUE_FD`) and bound to ONE
//! `VkBuffer` covering it, in the runtime's linear layout (`core::layout`, with
//! [`LayoutRules::VULKAN`]): another API imports the memory once as a buffer and views
//! subresources in place. Copies, updates and zero-fills are transfer commands recorded into one
//! batch at a time, on the main queue or, for copies, on a copy engine's queue (the copy lane,
//! `lane.rs`); a batch signals the device's timeline semaphore with its value when it is
//! submitted, and fences, event queries and per-resource busy state are timeline values.
//!
//! Map goes straight to the memory when it is host-visible and coherent: every resource on a CPU
//! device (lavapipe), STAGING and DYNAMIC resources on others where the driver exports such memory;
//! otherwise through a host-visible staging copy (read back at map, written back at unmap).
//!
//! - this file: the backend's state, discovery (`enumerate`) and opening a device;
//! - `operations`: the [`Backend`] trait on Vulkan (allocation, map, copies, updates, host
//!   memory, fences, shared semaphores);
//! - `memory`: a resource's memory, its allocation, export and destruction; `image`: the
//!   optimal-tiled images of textures; `host_import`: application memory imported for copies,
//!   which run on the copy lane (`lane`, a copy engine's queue) where the device has one;
//! - `record`: commands recorded into the batch; `compute_copy`: copies run as a compute
//!   shader; `queue`: the batch, its submission and what it retires; `timeline`: the
//!   timeline's values, waits and device loss; `staging`: the host-visible buffers copies and
//!   maps go through (the upload ring, spare buffers);
//! - `setup`: the instance, the devices that qualify and their memory types.

mod compute_copy;
mod host_import;
mod image;
mod lane;
mod memory;
mod operations;
mod queue;
mod record;
mod setup;
mod staging;
#[cfg(test)]
mod tests;
mod timeline;

use std::collections::HashMap;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;

use super::{AdapterDesc, Allocation, Backend, BackendError, Fence, MapAccess, MemoryKind};
use crate::core::flags::{USAGE_DEFAULT, USAGE_DYNAMIC, USAGE_STAGING};
use crate::core::{BlockRegion, LayoutRules, ResourceDesc, ResourceLayout};
use image::Image;
use memory::{Dedicated, Memory};
use queue::{Engine, Queue, Retired};
use record::row_copies;
use setup::{memory_type, DeviceChoice, Instance, OPAQUE_FD, RESOURCE_USAGE};
use staging::{Staging, Upload};

/// How the backend treats a device (tests force the staging path on lavapipe).
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Map through staging copies even where the memory could be mapped directly.
    pub force_staging: bool,
    /// Keep every texture in the linear layout, none as an optimal-tiled image.
    pub linear_textures: bool,
    /// Shader copies on a CPU device too (tests; `DXCL_COMPUTE_COPY` decides where it is set).
    pub shader_copies_on_cpu: bool,
    /// A copy lane on a CPU device too (tests): the queue itself, with a pool of its own, where
    /// the device has no transfer-only family.
    pub copy_lane_on_cpu: bool,
}

/// One Vulkan device.
pub struct VulkanBackend {
    adapter: AdapterDesc,
    device: ash::Device,
    memory_fd: ash::khr::external_memory_fd::Device,
    semaphore_fd: Option<ash::khr::external_semaphore_fd::Device>,
    /// `VK_EXT_external_memory_host`, where the device has it.
    host_import: Option<host_import::Importer>,
    /// Host memory registered by `register_host`, by its start.
    hosts: Mutex<HashMap<usize, host_import::HostMemory>>,
    memory_props: vk::PhysicalDeviceMemoryProperties,
    /// Map every resource directly (host-visible coherent memory on a CPU device).
    direct_map: bool,
    /// Map through staging copies even where the memory could be host-visible (tests).
    force_staging: bool,
    dedicated_only: bool,
    timeline: vk::Semaphore,
    /// The largest timeline value a query found reached (`timeline.rs`, `passed`).
    reached: AtomicU64,
    /// The queue families that use resources: the queue's, and the copy lane's where there is
    /// one (resources are then shared by both, `VK_SHARING_MODE_CONCURRENT`).
    families: Vec<u32>,
    queue: Mutex<Queue>,
    memories: Mutex<HashMap<u64, Arc<Memory>>>,
    semaphores: Mutex<HashMap<u64, SharedSemaphore>>,
    next_id: AtomicU64,
    lost: AtomicBool,
    physical: vk::PhysicalDevice,
    linear_textures: bool,
    /// Shader copies between images (`compute_copy.rs`), where the device can run them.
    compute_copy: Option<compute_copy::ComputeCopy>,
    counters: Counters,
    /// Dropped last: the instance outlives the device.
    instance: Arc<Instance>,
}

/// What the backend did since the device was opened, for benchmarks and tests.
#[derive(Default)]
struct Counters {
    memory_allocations: AtomicU64,
    submissions: AtomicU64,
    cpu_waits: AtomicU64,
    shader_copies: AtomicU64,
    timeline_waits: AtomicU64,
}

/// A snapshot of the backend's counters ([`VulkanBackend::counters`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterValues {
    /// `vkAllocateMemory` calls: resources, staging buffers, upload rings.
    pub memory_allocations: u64,
    /// `vkQueueSubmit` calls.
    pub submissions: u64,
    /// Waits of the CPU for the timeline.
    pub cpu_waits: u64,
    /// Copies between images made by the compute shader (`compute_copy.rs`).
    pub shader_copies: u64,
    /// Waits of one queue's batch for the other's on the timeline (`queue.rs`, `submit`).
    pub timeline_waits: u64,
}

/// An exported binary semaphore and the timeline value of its last submitted operation.
struct SharedSemaphore {
    raw: vk::Semaphore,
    last: u64,
}

/// Locks a mutex, taking over a poisoned one (every critical section leaves consistent state).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every Vulkan device of this process that qualifies, opened. Empty without libvulkan or
/// without qualifying devices.
pub fn enumerate(options: Options) -> Vec<VulkanBackend> {
    let Some((instance, choices)) = setup::discover() else {
        return Vec::new();
    };
    choices
        .into_iter()
        .filter_map(|c| VulkanBackend::open(instance.clone(), c, options))
        .collect()
}

impl VulkanBackend {
    fn open(instance: Arc<Instance>, c: DeviceChoice, options: Options) -> Option<VulkanBackend> {
        let priorities = [1.0f32];
        // The copy lane on a GPU only: a CPU device's copies are the CPU's either way.
        let copy_family = match c.cpu {
            false => c.copy_family,
            true => (options.copy_lane_on_cpu || lane::on_cpu())
                .then(|| c.copy_family.unwrap_or(c.queue_family)),
        }
        .filter(|_| lane::wanted());
        let queues: Vec<vk::DeviceQueueCreateInfo> = std::iter::once(c.queue_family)
            .chain(copy_family.filter(|&f| f != c.queue_family))
            .map(|family| {
                vk::DeviceQueueCreateInfo::default()
                    .queue_family_index(family)
                    .queue_priorities(&priorities)
            })
            .collect();
        let mut extensions = vec![ash::khr::external_memory_fd::NAME.as_ptr()];
        if c.semaphore_export {
            extensions.push(ash::khr::external_semaphore_fd::NAME.as_ptr());
        }
        if c.host_import.is_some() {
            extensions.push(ash::ext::external_memory_host::NAME.as_ptr());
        }
        let shader_copies = c.compute_copy
            && compute_copy::from_env().unwrap_or(!c.cpu || options.shader_copies_on_cpu);
        if shader_copies {
            extensions.push(ash::khr::push_descriptor::NAME.as_ptr());
        }
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions)
            .push_next(&mut f12);
        // SAFETY: `c.physical` belongs to the instance; `info` and what it points to outlive the
        // call; the extensions and feature were checked in `setup::choose`.
        let device = unsafe { instance.raw.create_device(c.physical, &info, None) }.ok()?;
        let memory_fd = ash::khr::external_memory_fd::Device::new(&instance.raw, &device);
        let semaphore_fd = c
            .semaphore_export
            .then(|| ash::khr::external_semaphore_fd::Device::new(&instance.raw, &device));
        let host_import = c.host_import.map(|alignment| host_import::Importer {
            ext: ash::ext::external_memory_host::Device::new(&instance.raw, &device),
            alignment,
        });
        let mut ty = vk::SemaphoreTypeCreateInfo::default()
            .semaphore_type(vk::SemaphoreType::TIMELINE)
            .initial_value(0);
        let sem_info = vk::SemaphoreCreateInfo::default().push_next(&mut ty);
        // SAFETY: the device is alive; the info outlives the call.
        let timeline = unsafe { device.create_semaphore(&sem_info, None) };
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(c.queue_family)
            .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
        // SAFETY: as above.
        let pool = unsafe { device.create_command_pool(&pool_info, None) };
        let (timeline, pool) = match (timeline, pool) {
            (Ok(t), Ok(p)) => (t, p),
            (t, p) => {
                // SAFETY: whichever object exists was made from this device, which nothing else
                // uses yet; null handles are ignored by the destroy calls.
                unsafe {
                    device.destroy_semaphore(t.unwrap_or_default(), None);
                    device.destroy_command_pool(p.unwrap_or_default(), None);
                    device.destroy_device(None);
                }
                return None;
            }
        };
        // SAFETY: queue 0 of the family was requested at creation.
        let raw_queue = unsafe { device.get_device_queue(c.queue_family, 0) };
        let lane = copy_family.and_then(|family| {
            let info = vk::CommandPoolCreateInfo::default()
                .queue_family_index(family)
                .flags(vk::CommandPoolCreateFlags::RESET_COMMAND_BUFFER);
            // SAFETY: the device is alive and has a queue of `family` (requested above); the
            // info outlives the call. Without a pool there is no lane: copies stay on the queue.
            let pool = unsafe { device.create_command_pool(&info, None) }.ok()?;
            // SAFETY: queue 0 of the family was requested at creation.
            let raw = unsafe { device.get_device_queue(family, 0) };
            Some(lane::Lane::new(raw, family, pool))
        });
        let families: Vec<u32> = std::iter::once(c.queue_family)
            .chain(
                lane.as_ref()
                    .map(|l| l.family)
                    .filter(|&f| f != c.queue_family),
            )
            .collect();
        let compute_copy = shader_copies
            .then(|| compute_copy::ComputeCopy::new(&instance.raw, &device))
            .flatten();
        Some(VulkanBackend {
            adapter: c.adapter,
            memory_fd,
            semaphore_fd,
            host_import,
            hosts: Mutex::new(HashMap::new()),
            memory_props: c.memory,
            direct_map: c.cpu && !options.force_staging,
            force_staging: options.force_staging,
            dedicated_only: c.dedicated_only,
            timeline,
            reached: AtomicU64::new(0),
            families,
            queue: Mutex::new(Queue::new(raw_queue, pool, lane)),
            memories: Mutex::new(HashMap::new()),
            semaphores: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            lost: AtomicBool::new(false),
            device,
            physical: c.physical,
            linear_textures: options.linear_textures,
            compute_copy,
            counters: Counters::default(),
            instance,
        })
    }

    /// Whether opaque-fd semaphores can be exported (`CreateSharedSemaphore` works).
    pub fn exports_semaphores(&self) -> bool {
        self.semaphore_fd.is_some()
    }

    /// Whether Map goes directly to the allocation's memory (no staging copy).
    pub fn maps_directly(&self, a: &Allocation) -> bool {
        self.memory(a).is_some_and(|m| !m.host.is_null())
    }

    /// The counters so far.
    pub fn counters(&self) -> CounterValues {
        let c = &self.counters;
        CounterValues {
            memory_allocations: c.memory_allocations.load(Ordering::Relaxed),
            submissions: c.submissions.load(Ordering::Relaxed),
            cpu_waits: c.cpu_waits.load(Ordering::Relaxed),
            shader_copies: c.shader_copies.load(Ordering::Relaxed),
            timeline_waits: c.timeline_waits.load(Ordering::Relaxed),
        }
    }

    /// How resources and imported host memory are shared between the queue families that use
    /// them ([`VulkanBackend::families`]).
    fn sharing_mode(&self) -> vk::SharingMode {
        if self.families.len() > 1 {
            vk::SharingMode::CONCURRENT
        } else {
            vk::SharingMode::EXCLUSIVE
        }
    }

    fn memory(&self, a: &Allocation) -> Option<Arc<Memory>> {
        lock(&self.memories).get(&a.handle).cloned()
    }
}

impl Drop for VulkanBackend {
    fn drop(&mut self) {
        // SAFETY: the device is alive; waiting for idle has no preconditions beyond that.
        let _ = unsafe { self.device.device_wait_idle() };
        let q = self.queue.get_mut().unwrap_or_else(|e| e.into_inner());
        let batches: Vec<_> = q.in_flight.drain(..).collect();
        let recorded = std::mem::take(&mut q.staging);
        let spares = q.spare.drain();
        let ring = q.ring.take().map(|r| r.staging);
        let retired: Vec<_> = q.retired.drain(..).map(|(_, r)| r).collect();
        let pool = q.pool;
        let lane_pool = q.lane.as_ref().map(|l| l.pool);
        let staging = batches.into_iter().flat_map(|b| b.staging);
        for s in staging.chain(recorded).chain(spares).chain(ring) {
            self.destroy_staging(s);
        }
        for r in retired {
            match r {
                Retired::Memory(m) => self.destroy_memory(&m),
                Retired::Staging(s) => self.destroy_staging(s),
            }
        }
        self.drop_hosts();
        let memories: Vec<_> = lock(&self.memories).drain().map(|(_, m)| m).collect();
        for m in memories {
            self.destroy_memory(&m);
        }
        let sems: Vec<_> = lock(&self.semaphores).drain().map(|(_, s)| s).collect();
        // SAFETY: the device is idle, so nothing uses any of these objects; each is destroyed
        // once (drained above); the device goes last, before the instance (field order).
        unsafe {
            for s in sems {
                self.device.destroy_semaphore(s.raw, None);
            }
            self.device.destroy_semaphore(self.timeline, None);
            if let Some(c) = &self.compute_copy {
                c.destroy(&self.device);
            }
            self.device.destroy_command_pool(pool, None);
            if let Some(p) = lane_pool {
                self.device.destroy_command_pool(p, None);
            }
            self.device.destroy_device(None);
        }
    }
}

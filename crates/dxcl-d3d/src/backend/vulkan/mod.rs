//! The Vulkan backend: one adapter per Vulkan device that can export memory as opaque fds.
//!
//! Every resource is ONE `VkDeviceMemory`, allocated exportable (`OPAQUE_FD`) and bound to ONE
//! `VkBuffer` covering it, in the runtime's linear layout (`core::layout`, with
//! [`LayoutRules::VULKAN`]): another API imports the memory once as a buffer and views
//! subresources in place. Copies, updates and zero-fills are transfer commands recorded into one
//! batch on one queue; a batch signals the device's timeline semaphore with its value when it is
//! submitted, and fences, event queries and per-resource busy state are timeline values.
//!
//! Map goes straight to the memory when it is host-visible and coherent: every resource on a CPU
//! device (lavapipe), STAGING and DYNAMIC resources on others where the driver exports such memory;
//! otherwise through a host-visible staging copy (read back at map, written back at unmap).

mod compute_copy;
mod host_import;
mod image;
mod queue;
mod setup;
mod staging;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use ash::vk;

use super::{AdapterDesc, Allocation, Backend, BackendError, Fence, MapAccess, MemoryKind};
use crate::core::flags::{USAGE_DEFAULT, USAGE_DYNAMIC, USAGE_STAGING};
use crate::core::{BlockRegion, LayoutRules, ResourceDesc, ResourceLayout};
use image::Image;
use queue::{Queue, Retired};
use setup::{memory_type, DeviceChoice, Instance, OPAQUE_FD, RESOURCE_USAGE};
use staging::{Staging, UploadRing};

/// How the backend treats a device (tests force the staging path on lavapipe).
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Map through staging copies even where the memory could be mapped directly.
    pub force_staging: bool,
    /// Keep every texture in the linear layout, none as an optimal-tiled image.
    pub linear_textures: bool,
    /// Shader copies on a CPU device too (tests; `DXCL_COMPUTE_COPY` decides where it is set).
    pub shader_copies_on_cpu: bool,
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
}

/// A resource's memory: a buffer over all of it, or a texture's image.
struct Memory {
    /// Null for images.
    buffer: vk::Buffer,
    image: Option<Image>,
    memory: vk::DeviceMemory,
    /// Bytes of the `VkDeviceMemory` (what an importer passes as the allocation size).
    size: u64,
    /// The whole memory mapped, when the backend maps directly; null otherwise.
    host: *mut u8,
    /// Timeline value of the last batch that touches this memory.
    last_use: AtomicU64,
    /// Subresources mapped through staging copies.
    staged: Mutex<HashMap<u32, (Staging, bool)>>,
    /// 2D views of single subresources, made for shader copies, kept until the memory goes.
    views: Mutex<HashMap<u32, vk::ImageView>>,
}

// SAFETY: `host` points into a mapping owned by this object; access to the bytes follows
// Direct3D's map rules (one mapper per subresource), and the handles are plain Vulkan handles
// whose use is serialised by the queue lock.
unsafe impl Send for Memory {}
// SAFETY: as above; shared references never write through `host` themselves.
unsafe impl Sync for Memory {}

/// What a dedicated allocation is dedicated to.
#[derive(Clone, Copy)]
enum Dedicated {
    Buffer(vk::Buffer),
    Image(vk::Image),
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
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(c.queue_family)
            .queue_priorities(&priorities)];
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
            queue: Mutex::new(Queue::new(raw_queue, pool)),
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
        }
    }

    fn memory(&self, a: &Allocation) -> Option<Arc<Memory>> {
        lock(&self.memories).get(&a.handle).cloned()
    }

    /// Records a failure that leaves the timeline unreliable: from now on the device is lost,
    /// waits return at once and CPU access fails with `DeviceLost`.
    fn mark_lost(&self) {
        self.lost.store(true, Ordering::Release);
    }

    fn check_lost(&self) -> Result<(), BackendError> {
        if self.lost.load(Ordering::Acquire) {
            Err(BackendError::DeviceLost)
        } else {
            Ok(())
        }
    }

    /// The timeline's current value; `u64::MAX` once the device is lost (nothing is pending any
    /// more: waiting for it would never end).
    fn completed(&self) -> u64 {
        if self.lost.load(Ordering::Acquire) {
            return u64::MAX;
        }
        // SAFETY: the timeline semaphore belongs to this device.
        match unsafe { self.device.get_semaphore_counter_value(self.timeline) } {
            Ok(v) => v,
            Err(_) => {
                self.mark_lost();
                u64::MAX
            }
        }
    }

    /// Blocks until the timeline reaches `value` (which must have been submitted).
    fn wait_value(&self, value: u64) -> Result<(), BackendError> {
        let semaphores = [self.timeline];
        let values = [value];
        let info = vk::SemaphoreWaitInfo::default()
            .semaphores(&semaphores)
            .values(&values);
        self.counters.cpu_waits.fetch_add(1, Ordering::Relaxed);
        loop {
            self.check_lost()?;
            // SAFETY: the timeline semaphore belongs to this device; `info` outlives the call.
            // A bounded timeout lets a loss noticed elsewhere end the wait.
            match unsafe { self.device.wait_semaphores(&info, 100_000_000) } {
                Ok(()) => return Ok(()),
                Err(vk::Result::TIMEOUT) => continue,
                Err(_) => {
                    self.mark_lost();
                    return Err(BackendError::DeviceLost);
                }
            }
        }
    }

    /// Makes the memory safe for the CPU: every batch that touches it, and every shared-semaphore
    /// wait, has completed.
    fn settle(&self, m: &Memory) -> Result<(), BackendError> {
        let target = {
            let mut q = lock(&self.queue);
            let target = m.last_use.load(Ordering::Acquire).max(q.floor);
            if target >= q.next_value {
                self.submit(&mut q, None, None)?;
            }
            target
        };
        self.wait_value(target)?;
        self.reclaim(&mut lock(&self.queue));
        Ok(())
    }

    /// A host-visible staging buffer of `size` bytes, mapped, in memory the CPU caches.
    fn staging(&self, size: u64) -> Result<Staging, BackendError> {
        self.staging_in(size, staging::UploadMemory::Cached)
    }

    /// A staging buffer for uploads, in the memory `DXCL_UPLOAD_MEMORY` names.
    fn upload_staging(&self, size: u64) -> Result<Staging, BackendError> {
        self.staging_in(size, staging::upload_memory())
    }

    /// A host-visible staging buffer of `size` bytes, mapped, in memory of the kind `memory`
    /// (falling back to any host-visible coherent memory).
    fn staging_in(
        &self,
        size: u64,
        memory: staging::UploadMemory,
    ) -> Result<Staging, BackendError> {
        let info = vk::BufferCreateInfo::default()
            .size(size.max(4))
            .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: the device is alive; `info` outlives the call.
        let buffer = unsafe { self.device.create_buffer(&info, None) }
            .map_err(|_| BackendError::OutOfMemory)?;
        // SAFETY: `buffer` was just made from this device.
        let req = unsafe { self.device.get_buffer_memory_requirements(buffer) };
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let types = &self.memory_props.memory_types[..self.memory_props.memory_type_count as usize];
        let uncached = || {
            (0..types.len()).find(|&i| {
                let f = types[i].property_flags;
                req.memory_type_bits & (1 << i) != 0
                    && f.contains(host)
                    && !f.intersects(
                        vk::MemoryPropertyFlags::HOST_CACHED
                            | vk::MemoryPropertyFlags::DEVICE_LOCAL,
                    )
            })
        };
        let preferred = match memory {
            staging::UploadMemory::Cached => None,
            staging::UploadMemory::Uncached => uncached().map(|i| i as u32),
            staging::UploadMemory::Device => memory_type(
                &self.memory_props,
                req.memory_type_bits,
                host | vk::MemoryPropertyFlags::DEVICE_LOCAL,
                vk::MemoryPropertyFlags::empty(),
            ),
        };
        let cached = memory_type(
            &self.memory_props,
            req.memory_type_bits,
            host,
            vk::MemoryPropertyFlags::HOST_CACHED,
        );
        let allocate = |t: u32| {
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(t);
            self.counters
                .memory_allocations
                .fetch_add(1, Ordering::Relaxed);
            // SAFETY: as above.
            unsafe { self.device.allocate_memory(&alloc, None) }
                .map_err(|_| BackendError::OutOfMemory)
        };
        // A small BAR (no resizable BAR) may refuse the preferred type: cached memory then.
        let made = preferred
            .ok_or(BackendError::OutOfMemory)
            .and_then(allocate)
            .or_else(|_| cached.ok_or(BackendError::OutOfMemory).and_then(allocate));
        let memory = match made {
            Ok(m) => m,
            Err(e) => {
                // SAFETY: the buffer is unused and ours.
                unsafe { self.device.destroy_buffer(buffer, None) };
                return Err(e);
            }
        };
        // SAFETY: fresh buffer and memory of this device; the memory is large enough (its
        // requirements) and host-visible, so it can be mapped whole.
        let mapped = unsafe {
            self.device
                .bind_buffer_memory(buffer, memory, 0)
                .and_then(|()| {
                    self.device
                        .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                })
        };
        match mapped {
            Ok(p) => Ok(Staging {
                buffer,
                memory,
                ptr: p.cast(),
                size: size.max(4),
            }),
            Err(_) => {
                // SAFETY: both unused and ours.
                unsafe {
                    self.device.destroy_buffer(buffer, None);
                    self.device.free_memory(memory, None);
                }
                Err(BackendError::OutOfMemory)
            }
        }
    }

    fn destroy_staging(&self, s: Staging) {
        // SAFETY: no pending GPU work uses it (callers free staging only after its batch
        // completed or when no batch used it); freeing the memory unmaps it.
        unsafe {
            self.device.destroy_buffer(s.buffer, None);
            self.device.free_memory(s.memory, None);
        }
    }

    /// A staging buffer of at least `size` bytes for a map: a spare one when there is one.
    fn take_staging(&self, size: u64) -> Result<Staging, BackendError> {
        let spare = {
            let mut q = lock(&self.queue);
            self.reclaim(&mut q);
            q.spare.take(size)
        };
        match spare {
            Some(s) => Ok(s),
            None => self.staging(size),
        }
    }

    /// Room for an upload of `size` bytes at a multiple of `align`: a band of the upload ring
    /// (made, or replaced by a larger one, on demand), or for uploads too large for any ring
    /// a buffer of its own. Waits for the device only when the ring is full of bands it has not
    /// passed yet.
    fn reserve_upload(&self, size: u64, align: u64) -> Result<Upload, BackendError> {
        let Some(cap) = staging::ring_capacity(size) else {
            return self.upload_staging(size).map(Upload::Own);
        };
        loop {
            let wait_for = {
                let mut q = lock(&self.queue);
                self.reclaim(&mut q);
                let small = q.ring.as_ref().is_none_or(|r| r.alloc.capacity() < cap);
                if small {
                    if q.ring
                        .as_ref()
                        .is_some_and(|r| r.alloc.last_value().is_none())
                    {
                        // Another thread is filling a band of the old ring: this upload goes
                        // alone rather than pull the ring from under it.
                        return self.upload_staging(size).map(Upload::Own);
                    }
                    let Ok(staging) = self.upload_staging(cap) else {
                        // No room for a ring of that size: the upload may still fit alone.
                        return self.upload_staging(size).map(Upload::Own);
                    };
                    let ring = UploadRing {
                        staging,
                        alloc: staging::RingAlloc::new(cap),
                    };
                    if let Some(old) = q.ring.replace(ring) {
                        // Destroyed once the device passed the last batch that reads it.
                        let last = old.alloc.last_value().unwrap_or(0);
                        q.retired.push((last, Retired::Staging(old.staging)));
                    }
                }
                let Some(r) = q.ring.as_mut() else {
                    return Err(BackendError::OutOfMemory);
                };
                if let Some(offset) = r.alloc.reserve(size, align) {
                    return Ok(Upload::Ring {
                        buffer: r.staging.buffer,
                        // In bounds: the band lies inside the ring's mapping.
                        ptr: r.staging.ptr.wrapping_add(offset as usize),
                        offset,
                    });
                }
                match r.alloc.oldest() {
                    Some(Some(v)) => {
                        if v >= q.next_value {
                            self.submit(&mut q, None, None)?;
                        }
                        v
                    }
                    // The oldest band is being filled by another thread (or, impossibly, the
                    // ring is empty and still too small): no waiting on that.
                    Some(None) | None => return self.upload_staging(size).map(Upload::Own),
                }
            };
            self.wait_value(wait_for)?;
        }
    }

    /// What a copy between two images needs to run as the compute shader (`compute_copy.rs`):
    /// the pipelines, the shader and the two views; `None` where `vkCmdCopyImage` must make it.
    fn shader_plan(
        &self,
        (d, di, dst_sub): (&Memory, &Image, u32),
        (s, si, src_sub, src_region): (&Memory, &Image, u32, &BlockRegion),
        texel: u32,
    ) -> Option<(
        &compute_copy::ComputeCopy,
        usize,
        vk::ImageView,
        vk::ImageView,
    )> {
        let copier = self.compute_copy.as_ref()?;
        let shader = compute_copy::shader_for(di.format)?;
        let bytes = src_region.w as u64 * src_region.h as u64 * src_region.d as u64 * texel as u64;
        let flat = |i: &Image| i.image_type == vk::ImageType::TYPE_2D && i.storage;
        // One subresource read and written by the same dispatch could overlap itself.
        let same = std::ptr::eq(d, s) && dst_sub == src_sub;
        if di.format != si.format
            || !flat(di)
            || !flat(si)
            || src_region.d != 1
            || bytes < compute_copy::MIN_BYTES
            || same
            || self.check_lost().is_err()
        {
            return None;
        }
        Some((
            copier,
            shader,
            self.view(s, si, src_sub)?,
            self.view(d, di, dst_sub)?,
        ))
    }

    /// A 2D view of subresource `sub` of `image` (the memory's), made on first use.
    fn view(&self, m: &Memory, image: &Image, sub: u32) -> Option<vk::ImageView> {
        let mut views = lock(&m.views);
        if let Some(&v) = views.get(&sub) {
            return Some(v);
        }
        let (mip, layer) = image::split(image, sub);
        let info = vk::ImageViewCreateInfo::default()
            .image(image.raw)
            .view_type(vk::ImageViewType::TYPE_2D)
            .format(image.format)
            .subresource_range(vk::ImageSubresourceRange {
                aspect_mask: vk::ImageAspectFlags::COLOR,
                base_mip_level: mip,
                level_count: 1,
                base_array_layer: layer,
                layer_count: 1,
            });
        // SAFETY: the image is alive (its memory is); the view covers one of its subresources,
        // in its own format.
        let view = unsafe { self.device.create_image_view(&info, None) }.ok()?;
        views.insert(sub, view);
        Some(view)
    }

    /// Records a transfer command, or a shader copy (`compute_copy.rs`), (`record`) after the
    /// barriers it needs on the resources it touches (`users`) and on other buffers (staging), and
    /// marks the resources used by the batch being recorded.
    fn record_transfer(
        &self,
        q: &mut Queue,
        users: &[&Memory],
        staging: Option<vk::Buffer>,
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Result<(), BackendError> {
        let cmd = self.recording(q)?;
        let mut buffers: Vec<vk::Buffer> = Vec::with_capacity(users.len() + 1);
        for m in users {
            if m.image.is_none() {
                buffers.push(m.buffer);
            }
        }
        if let Some(b) = staging {
            buffers.push(b);
        }
        let images: Vec<Image> = users.iter().filter_map(|m| m.image).collect();
        self.transfer_barrier(cmd, &buffers, &images);
        record(cmd);
        for m in users {
            m.last_use.store(q.next_value, Ordering::Release);
        }
        Ok(())
    }

    /// Records the copy of an upload's region, tightly packed at `at` in `buffer`, into the
    /// resource.
    #[allow(clippy::too_many_arguments)] // The destination and the staging side of one copy.
    fn record_upload(
        &self,
        q: &mut Queue,
        d: &Memory,
        dst: &Allocation,
        subresource: u32,
        region: &BlockRegion,
        buffer: vk::Buffer,
        at: u64,
    ) -> Result<(), BackendError> {
        let row_bytes = region.w as u64 * dst.layout.block.2 as u64;
        let slice_bytes = row_bytes * region.h as u64;
        match &d.image {
            None => {
                let ds = &dst.layout.subresources[subresource as usize];
                let regions = row_copies(
                    at,
                    (row_bytes, slice_bytes),
                    dst.layout.region_offset(subresource, region),
                    (ds.row_pitch as u64, ds.depth_pitch as u64),
                    row_bytes,
                    region.h,
                    region.d,
                );
                self.record_copy(q, buffer, d.buffer, &regions, &[d])
            }
            Some(di) => {
                let copy = image::buffer_image_copy(
                    di,
                    subresource,
                    region,
                    at,
                    row_bytes,
                    slice_bytes,
                    dst.layout.block.2,
                );
                self.record_transfer(q, &[d], Some(buffer), |cmd| {
                    // SAFETY: `cmd` is recording; the staging space holds the region tightly
                    // packed from `at`, a multiple of the texel size (bands are aligned to it and
                    // pieces are whole rows); the image is alive, in GENERAL, and the region lies
                    // in the subresource (trait contract).
                    unsafe {
                        self.device.cmd_copy_buffer_to_image(
                            cmd,
                            buffer,
                            di.raw,
                            vk::ImageLayout::GENERAL,
                            &[copy],
                        )
                    }
                })
            }
        }
    }

    /// Records `vkCmdCopyBuffer` between buffers (resources' or staging).
    fn record_copy(
        &self,
        q: &mut Queue,
        src: vk::Buffer,
        dst: vk::Buffer,
        regions: &[vk::BufferCopy],
        users: &[&Memory],
    ) -> Result<(), BackendError> {
        if regions.is_empty() {
            return Ok(());
        }
        let extra = [src, dst]
            .into_iter()
            .find(|b| !users.iter().any(|m| m.buffer == *b));
        self.record_transfer(q, users, extra, |cmd| {
            // SAFETY: `cmd` is recording; both buffers are alive (their owners outlive the
            // batch: `free` waits for it, staging is freed after it) and the regions lie inside
            // them (trait contract).
            unsafe { self.device.cmd_copy_buffer(cmd, src, dst, regions) }
        })
    }
}

/// Where an upload's bytes are staged.
enum Upload {
    /// A band of the upload ring, at `offset` in `buffer`, `ptr` in its mapping.
    Ring {
        buffer: vk::Buffer,
        ptr: *mut u8,
        offset: u64,
    },
    /// A buffer of its own (larger than any ring), freed after its batch.
    Own(Staging),
}

impl Upload {
    fn parts(&self) -> (vk::Buffer, *mut u8, u64) {
        match self {
            Upload::Ring {
                buffer,
                ptr,
                offset,
            } => (*buffer, *ptr, *offset),
            Upload::Own(s) => (s.buffer, s.ptr, 0),
        }
    }
}

/// Copy regions, one per row, merging rows that are contiguous on both sides.
fn row_copies(
    src_start: u64,
    src_pitches: (u64, u64),
    dst_start: u64,
    dst_pitches: (u64, u64),
    row_bytes: u64,
    rows: u32,
    slices: u32,
) -> Vec<vk::BufferCopy> {
    let mut out: Vec<vk::BufferCopy> = Vec::new();
    for z in 0..slices as u64 {
        for y in 0..rows as u64 {
            let s = src_start + z * src_pitches.1 + y * src_pitches.0;
            let d = dst_start + z * dst_pitches.1 + y * dst_pitches.0;
            match out.last_mut() {
                Some(r) if r.src_offset + r.size == s && r.dst_offset + r.size == d => {
                    r.size += row_bytes
                }
                _ => out.push(vk::BufferCopy {
                    src_offset: s,
                    dst_offset: d,
                    size: row_bytes,
                }),
            }
        }
    }
    out
}

// SAFETY: allocations are device memories of at least `layout.size` bytes, zero-filled by a
// command ordered before any other use, valid until `free`; `map` returns a pointer to the
// subresource's first byte in a mapping of the whole memory or in a staging buffer of the
// subresource's size, valid until `unmap`/`free`.
unsafe impl Backend for VulkanBackend {
    fn adapter(&self) -> &AdapterDesc {
        &self.adapter
    }

    fn layout_rules(&self) -> LayoutRules {
        LayoutRules::VULKAN
    }

    fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Acquire)
    }

    fn allocate(
        &self,
        desc: &ResourceDesc,
        layout: &ResourceLayout,
    ) -> Result<Allocation, BackendError> {
        self.check_lost()?;
        let memory = match self.image_plan(desc) {
            Some(plan) => self.allocate_image(&plan)?,
            None => self.allocate_buffer(layout.size, desc.usage)?,
        };
        let handle = self.next_id.fetch_add(1, Ordering::Relaxed);
        let m = Arc::new(memory);
        // Zero-fill, ordered before everything else on the memory by the queue.
        let filled = {
            let mut q = lock(&self.queue);
            // Memory freed earlier goes back before more is held.
            self.reclaim(&mut q);
            self.recording(&mut q).map(|cmd| {
                match &m.image {
                    Some(image) => self.record_image_init(cmd, image),
                    // SAFETY: `cmd` is recording; the buffer is alive; WHOLE_SIZE from 0 is
                    // valid.
                    None => unsafe {
                        self.device
                            .cmd_fill_buffer(cmd, m.buffer, 0, vk::WHOLE_SIZE, 0)
                    },
                }
                m.last_use.store(q.next_value, Ordering::Release);
            })
        };
        if let Err(e) = filled {
            self.destroy_memory(&m);
            return Err(e);
        }
        lock(&self.memories).insert(handle, m.clone());
        Ok(Allocation {
            kind: if m.image.is_some() {
                MemoryKind::OpaqueFdImage
            } else {
                MemoryKind::OpaqueFd
            },
            host: ptr::null_mut(),
            size: m.size,
            layout: layout.clone(),
            handle,
        })
    }

    unsafe fn free(&self, allocation: &mut Allocation) {
        let Some(m) = lock(&self.memories).remove(&allocation.handle) else {
            return;
        };
        // No CPU wait: memory the device may still use is destroyed by a later `reclaim`, once
        // the timeline passed its last batch.
        let last = m.last_use.load(Ordering::Acquire);
        let mut q = lock(&self.queue);
        if self.completed() >= last {
            drop(q);
            self.destroy_memory(&m);
        } else {
            // Work only recorded is submitted now (no wait), so freed memory cannot pile up
            // behind a batch nobody submits; a failure marks the device lost, after which
            // `reclaim` destroys everything.
            if last >= q.next_value {
                let _ = self.submit(&mut q, None, None);
            }
            q.retired.push((last, Retired::Memory(m)));
            self.reclaim(&mut q);
        }
    }

    unsafe fn map(
        &self,
        allocation: &Allocation,
        subresource: u32,
        access: MapAccess,
    ) -> Result<*mut u8, BackendError> {
        self.check_lost()?;
        let m = self.memory(allocation).ok_or(BackendError::NotSupported)?;
        if m.image.is_some() {
            // Only DEFAULT and IMMUTABLE textures are images, and Direct3D maps neither.
            return Err(BackendError::NotSupported);
        }
        let s = allocation.layout.subresources[subresource as usize];
        if !m.host.is_null() {
            self.settle(&m)?;
            return Ok(m.host.wrapping_add(s.offset as usize));
        }
        let staging = self.take_staging(s.size)?;
        if access.read {
            let read = (|| {
                let value = {
                    let mut q = lock(&self.queue);
                    let region = [vk::BufferCopy {
                        src_offset: s.offset,
                        dst_offset: 0,
                        size: s.size,
                    }];
                    self.record_copy(&mut q, m.buffer, staging.buffer, &region, &[&m])?;
                    let value = q.next_value;
                    self.submit(&mut q, None, None)?;
                    value.max(q.floor)
                };
                self.wait_value(value)
            })();
            if let Err(e) = read {
                // The copy either never ran or has completed (a lost device runs nothing).
                self.destroy_staging(staging);
                return Err(e);
            }
        }
        // A write-only map needs no wait: the write-back copy is queued after all earlier work.
        let p = staging.ptr;
        lock(&m.staged).insert(subresource, (staging, access.write));
        Ok(p)
    }

    unsafe fn unmap(&self, allocation: &Allocation, subresource: u32) {
        let Some(m) = self.memory(allocation) else {
            return;
        };
        let Some((staging, write)) = lock(&m.staged).remove(&subresource) else {
            // Mapped directly: coherent memory, and the next submission makes host writes
            // visible to the device.
            return;
        };
        if !write {
            // Its read-back completed before map returned.
            self.recycle_staging(&mut lock(&self.queue), staging);
            return;
        }
        let s = allocation.layout.subresources[subresource as usize];
        let mut q = lock(&self.queue);
        let region = [vk::BufferCopy {
            src_offset: 0,
            dst_offset: s.offset,
            size: s.size,
        }];
        if self
            .record_copy(&mut q, staging.buffer, m.buffer, &region, &[&m])
            .is_ok()
        {
            // A spare again once the batch completes.
            q.staging.push(staging);
        } else {
            drop(q);
            self.destroy_staging(staging);
        }
    }

    unsafe fn copy_region(
        &self,
        dst: &Allocation,
        dst_subresource: u32,
        dst_region: &BlockRegion,
        src: &Allocation,
        src_subresource: u32,
        src_region: &BlockRegion,
    ) {
        let (Some(d), Some(s)) = (self.memory(dst), self.memory(src)) else {
            return;
        };
        let bytes = src.layout.block.2;
        let mut q = lock(&self.queue);
        // A failure marked the device lost; the copy is dropped with it.
        let _ = match (&d.image, &s.image) {
            (None, None) => {
                let ds = &dst.layout.subresources[dst_subresource as usize];
                let ss = &src.layout.subresources[src_subresource as usize];
                let regions = row_copies(
                    src.layout.region_offset(src_subresource, src_region),
                    (ss.row_pitch as u64, ss.depth_pitch as u64),
                    dst.layout.region_offset(dst_subresource, dst_region),
                    (ds.row_pitch as u64, ds.depth_pitch as u64),
                    src_region.w as u64 * bytes as u64,
                    src_region.h,
                    src_region.d,
                );
                self.record_copy(&mut q, s.buffer, d.buffer, &regions, &[&s, &d])
            }
            (Some(di), Some(si)) => {
                let plan = self.shader_plan(
                    (&d, di, dst_subresource),
                    (&s, si, src_subresource, src_region),
                    bytes,
                );
                let recorded = self.record_transfer(&mut q, &[&s, &d], None, |cmd| match plan {
                    Some((copier, shader, src_view, dst_view)) => {
                        let at = |r: &BlockRegion| [r.x as i32, r.y as i32];
                        // SAFETY: `cmd` is recording on the device's queue, whose family
                        // computes (`setup::choose`); the views are 2D views of one subresource
                        // each, of images in GENERAL made with storage usage, of the one format
                        // the shader carries; the regions lie in the subresources (Direct3D's
                        // validation), and `record_transfer` recorded the barrier first.
                        unsafe {
                            copier.record(
                                &self.device,
                                cmd,
                                shader,
                                src_view,
                                at(src_region),
                                dst_view,
                                at(dst_region),
                                [src_region.w, src_region.h],
                            )
                        }
                    }
                    None => {
                        let copy = image::image_copy(
                            di,
                            dst_subresource,
                            dst_region,
                            si,
                            src_subresource,
                            src_region,
                        );
                        // SAFETY: `cmd` is recording; both images are alive and in GENERAL;
                        // the regions lie in their subresources and the formats have equal
                        // texel sizes (Direct3D copies within a format family).
                        unsafe {
                            self.device.cmd_copy_image(
                                cmd,
                                si.raw,
                                vk::ImageLayout::GENERAL,
                                di.raw,
                                vk::ImageLayout::GENERAL,
                                &[copy],
                            )
                        }
                    }
                });
                if recorded.is_ok() && plan.is_some() {
                    self.counters.shader_copies.fetch_add(1, Ordering::Relaxed);
                }
                recorded
            }
            (Some(di), None) => {
                let (off, row, depth) =
                    image::linear_side(&src.layout, src_subresource, src_region);
                let copy = image::buffer_image_copy(
                    di,
                    dst_subresource,
                    dst_region,
                    off,
                    row,
                    depth,
                    bytes,
                );
                self.record_transfer(&mut q, &[&s, &d], None, |cmd| {
                    // SAFETY: as above; the buffer region lies in the source's memory, its
                    // pitches are whole texels and rows.
                    unsafe {
                        self.device.cmd_copy_buffer_to_image(
                            cmd,
                            s.buffer,
                            di.raw,
                            vk::ImageLayout::GENERAL,
                            &[copy],
                        )
                    }
                })
            }
            (None, Some(si)) => {
                let (off, row, depth) =
                    image::linear_side(&dst.layout, dst_subresource, dst_region);
                let copy = image::buffer_image_copy(
                    si,
                    src_subresource,
                    src_region,
                    off,
                    row,
                    depth,
                    bytes,
                );
                self.record_transfer(&mut q, &[&s, &d], None, |cmd| {
                    // SAFETY: as above.
                    unsafe {
                        self.device.cmd_copy_image_to_buffer(
                            cmd,
                            si.raw,
                            vk::ImageLayout::GENERAL,
                            d.buffer,
                            &[copy],
                        )
                    }
                })
            }
        };
    }

    unsafe fn write_region(
        &self,
        dst: &Allocation,
        subresource: u32,
        region: &BlockRegion,
        data: *const u8,
        row_pitch: usize,
        depth_pitch: usize,
    ) {
        let Some(d) = self.memory(dst) else { return };
        let texel = dst.layout.block.2 as u64;
        let row_bytes = region.w as usize * texel as usize;
        let total = row_bytes * region.h as usize * region.d as usize;
        let Ok(upload) = self.reserve_upload(total as u64, staging::upload_alignment(texel)) else {
            // Out of host memory, or the device is lost: UpdateSubresource has no way to report
            // either.
            return;
        };
        let (buffer, base, offset) = upload.parts();
        // A large single-slice upload goes in pieces of rows, each submitted once its bytes are
        // in place, so the device copies one piece while the CPU writes the next. The last piece
        // stays recorded, batched with what follows.
        let piece = staging::upload_piece_bytes();
        let rows_per_piece = if region.d == 1 && piece > 0 && total as u64 > 2 * piece {
            ((piece / row_bytes.max(1) as u64) as u32).clamp(1, region.h)
        } else {
            region.h
        };
        let mut y0 = 0;
        loop {
            let y1 = (y0 + rows_per_piece).min(region.h);
            // The CPU writes only staging memory the device no longer reads (a free band, or a
            // new buffer); the resource itself is written by the copy below, queue work ordered
            // after every semaphore wait submitted so far.
            for z in 0..region.d as usize {
                for y in y0 as usize..y1 as usize {
                    let at = (z * region.h as usize + y) * row_bytes;
                    // SAFETY: the source row is readable (trait contract); the staging space
                    // holds `total` bytes from `base` (a reserved band or a buffer of that size),
                    // so row `at..at + row_bytes` is inside it and no one else writes it; they do
                    // not overlap.
                    unsafe {
                        ptr::copy_nonoverlapping(
                            data.wrapping_add(z * depth_pitch + y * row_pitch),
                            base.add(at),
                            row_bytes,
                        )
                    };
                }
            }
            let part = BlockRegion {
                y: region.y + y0,
                h: y1 - y0,
                ..*region
            };
            let at = offset + y0 as u64 * row_bytes as u64;
            let mut q = lock(&self.queue);
            let mut recorded = self.record_upload(&mut q, &d, dst, subresource, &part, buffer, at);
            let last = y1 == region.h;
            if !last && recorded.is_ok() {
                recorded = self.submit(&mut q, None, None).map(|_| ());
            }
            if !last && recorded.is_ok() {
                y0 = y1;
                continue;
            }
            // The staging space is read by the batch being recorded (and earlier ones); on
            // failure (a lost device runs nothing) it is free once the timeline reports
            // everything done, which a lost device does.
            let value = q.next_value;
            match upload {
                Upload::Ring { offset, .. } => {
                    if let Some(r) = q.ring.as_mut().filter(|r| r.staging.buffer == buffer) {
                        r.alloc.commit(offset, value);
                    }
                }
                Upload::Own(s) if recorded.is_ok() => q.staging.push(s),
                Upload::Own(s) => {
                    // Pieces already submitted may read it: destroyed once they completed.
                    q.retired.push((value, Retired::Staging(s)));
                }
            }
            return;
        }
    }

    unsafe fn register_host(&self, host: *mut u8, len: usize) -> Result<bool, BackendError> {
        let imported = self.import_host(host, len)?;
        let mut hosts = lock(&self.hosts);
        if hosts.contains_key(&(host as usize)) {
            drop(hosts);
            self.release_host(imported);
            return Err(BackendError::UnknownId);
        }
        hosts.insert(host as usize, imported);
        Ok(true)
    }

    fn unregister_host(&self, host: *mut u8) -> Result<(), BackendError> {
        let h = lock(&self.hosts)
            .remove(&(host as usize))
            .ok_or(BackendError::UnknownId)?;
        self.release_host(h);
        Ok(())
    }

    unsafe fn read_to_host(
        &self,
        src: &Allocation,
        subresource: u32,
        regions: &[BlockRegion],
        host: *mut u8,
        done: &mut dyn FnMut(usize),
    ) -> Result<(), BackendError> {
        // SAFETY: the caller's contract.
        unsafe { self.read_registered(src, subresource, regions, host, done) }
    }

    unsafe fn write_from_host(
        &self,
        dst: &Allocation,
        subresource: u32,
        host: *const u8,
    ) -> Result<(), BackendError> {
        // SAFETY: the caller's contract.
        if unsafe { self.write_registered(dst, subresource, host) }? {
            return Ok(());
        }
        // Not registered: through the upload ring, as UpdateSubresource.
        // SAFETY: the caller's contract.
        unsafe { crate::backend::write_packed(self, dst, subresource, host) }
    }

    fn signal(&self) -> Fence {
        let q = lock(&self.queue);
        if q.recording.is_some() {
            q.next_value
        } else {
            q.next_value - 1
        }
    }

    fn is_complete(&self, fence: Fence) -> bool {
        self.completed() >= fence
    }

    fn wait(&self, fence: Fence) {
        {
            let mut q = lock(&self.queue);
            if fence >= q.next_value && self.submit(&mut q, None, None).is_err() {
                return;
            }
        }
        // A lost device has nothing left to wait for.
        let _ = self.wait_value(fence);
        self.reclaim(&mut lock(&self.queue));
    }

    fn flush(&self) {
        let mut q = lock(&self.queue);
        if q.recording.is_some() {
            // A failure marks the device lost.
            let _ = self.submit(&mut q, None, None);
        }
        self.reclaim(&mut q);
    }

    fn is_busy(&self, allocation: &Allocation) -> bool {
        let Some(m) = self.memory(allocation) else {
            return false;
        };
        let target = {
            let mut q = lock(&self.queue);
            let target = m.last_use.load(Ordering::Acquire).max(q.floor);
            if target >= q.next_value {
                // Whoever polls with DO_NOT_WAIT must see the work finish eventually.
                let _ = self.submit(&mut q, None, None);
            }
            target
        };
        self.completed() < target
    }

    fn has_pending_work(&self, allocation: &Allocation) -> bool {
        let Some(m) = self.memory(allocation) else {
            return false;
        };
        let target = {
            let q = lock(&self.queue);
            m.last_use.load(Ordering::Acquire).max(q.floor)
        };
        // Recorded work (target >= next_value) is not complete either: whoever orders after it
        // submits it with the signal.
        self.completed() < target
    }

    unsafe fn export_fd(&self, allocation: &Allocation) -> Result<i32, BackendError> {
        let m = self.memory(allocation).ok_or(BackendError::NotSupported)?;
        let info = vk::MemoryGetFdInfoKHR::default()
            .memory(m.memory)
            .handle_type(OPAQUE_FD);
        // SAFETY: the memory was allocated exportable as OPAQUE_FD on this device.
        unsafe { self.memory_fd.get_memory_fd(&info) }.map_err(|e| match e {
            vk::Result::ERROR_TOO_MANY_OBJECTS | vk::Result::ERROR_OUT_OF_HOST_MEMORY => {
                BackendError::OutOfMemory
            }
            _ => BackendError::DeviceLost,
        })
    }

    fn create_shared_semaphore(&self) -> Result<(u64, i32), BackendError> {
        let fd_api = self
            .semaphore_fd
            .as_ref()
            .ok_or(BackendError::NotSupported)?;
        self.check_lost()?;
        let mut export = vk::ExportSemaphoreCreateInfo::default()
            .handle_types(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        let info = vk::SemaphoreCreateInfo::default().push_next(&mut export);
        // SAFETY: the device is alive and was created with external_semaphore_fd, whose export
        // of OPAQUE_FD binary semaphores `setup::choose` checked.
        let raw = unsafe { self.device.create_semaphore(&info, None) }
            .map_err(|_| BackendError::OutOfMemory)?;
        let fd_info = vk::SemaphoreGetFdInfoKHR::default()
            .semaphore(raw)
            .handle_type(vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD);
        // SAFETY: `raw` was created exportable as OPAQUE_FD (which has reference transference:
        // exporting does not change its state).
        let fd = match unsafe { fd_api.get_semaphore_fd(&fd_info) } {
            Ok(fd) => fd,
            Err(_) => {
                // SAFETY: unused and ours.
                unsafe { self.device.destroy_semaphore(raw, None) };
                return Err(BackendError::OutOfMemory);
            }
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        lock(&self.semaphores).insert(id, SharedSemaphore { raw, last: 0 });
        Ok((id, fd))
    }

    fn signal_shared_semaphore(&self, id: u64) -> Result<(), BackendError> {
        self.semaphore_fd
            .as_ref()
            .ok_or(BackendError::NotSupported)?;
        let mut sems = lock(&self.semaphores);
        let s = sems.get_mut(&id).ok_or(BackendError::UnknownId)?;
        let mut q = lock(&self.queue);
        // The recorded work goes in the same batch, so the signal follows it.
        s.last = self.submit(&mut q, None, Some(s.raw))?;
        Ok(())
    }

    fn wait_shared_semaphore(&self, id: u64) -> Result<(), BackendError> {
        self.semaphore_fd
            .as_ref()
            .ok_or(BackendError::NotSupported)?;
        let mut sems = lock(&self.semaphores);
        let s = sems.get_mut(&id).ok_or(BackendError::UnknownId)?;
        let mut q = lock(&self.queue);
        // Work recorded before the wait is not held back by it.
        if q.recording.is_some() {
            self.submit(&mut q, None, None)?;
        }
        // The wait goes with the next submission, which carries the work that follows it (one
        // vkQueueSubmit fewer per hand-off): that submission and every later one follow the wait
        // (a semaphore wait's second scope includes later submissions). CPU access waits for
        // its value, submitting it first if nothing has (as for any recorded work).
        q.waits.push(s.raw);
        let value = q.next_value;
        s.last = value;
        q.floor = value;
        Ok(())
    }

    fn shared_semaphore_idle(&self, id: u64) -> Result<bool, BackendError> {
        self.semaphore_fd
            .as_ref()
            .ok_or(BackendError::NotSupported)?;
        let last = lock(&self.semaphores)
            .get(&id)
            .ok_or(BackendError::UnknownId)?
            .last;
        Ok(self.completed() >= last)
    }

    fn destroy_shared_semaphore(&self, id: u64) -> Result<(), BackendError> {
        self.semaphore_fd
            .as_ref()
            .ok_or(BackendError::NotSupported)?;
        let s = lock(&self.semaphores)
            .remove(&id)
            .ok_or(BackendError::UnknownId)?;
        {
            // Its last wait may still be waiting for a submission.
            let mut q = lock(&self.queue);
            if s.last >= q.next_value && self.submit(&mut q, None, None).is_err() {
                // Lost: nothing runs any more.
                q.waits.retain(|&w| w != s.raw);
            }
        }
        // After a loss nothing runs any more, so destroying is safe either way.
        let _ = self.wait_value(s.last);
        // SAFETY: every submission that used the semaphore completed (or the device is lost).
        unsafe { self.device.destroy_semaphore(s.raw, None) };
        Ok(())
    }
}

impl VulkanBackend {
    /// Binds `memory`, fresh and made for `to` (its size and an allowed type), at offset 0; frees
    /// it and answers `err` when that fails.
    fn bind_or_free(
        &self,
        to: Dedicated,
        memory: vk::DeviceMemory,
        err: BackendError,
    ) -> Result<vk::DeviceMemory, BackendError> {
        // SAFETY: the caller's contract: fresh memory of the required size and an allowed type
        // for this device's buffer or image, bound at 0.
        let bound = unsafe {
            match to {
                Dedicated::Buffer(b) => self.device.bind_buffer_memory(b, memory, 0),
                Dedicated::Image(i) => self.device.bind_image_memory(i, memory, 0),
            }
        };
        if bound.is_err() {
            // SAFETY: unused and ours.
            unsafe { self.device.free_memory(memory, None) };
            return Err(err);
        }
        Ok(memory)
    }

    /// A resource buffer of `size` bytes in exportable memory chosen for the `D3D11_USAGE`.
    fn allocate_buffer(&self, size: u64, usage: u32) -> Result<Memory, BackendError> {
        let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(OPAQUE_FD);
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(RESOURCE_USAGE)
            .sharing_mode(vk::SharingMode::EXCLUSIVE)
            .push_next(&mut external);
        // SAFETY: the device is alive; `info` and its chain outlive the call.
        let buffer = unsafe { self.device.create_buffer(&info, None) }
            .map_err(|_| BackendError::OutOfMemory)?;
        let mut dedicated_req = vk::MemoryDedicatedRequirements::default();
        let mut req2 = vk::MemoryRequirements2::default().push_next(&mut dedicated_req);
        let info = vk::BufferMemoryRequirementsInfo2::default().buffer(buffer);
        // SAFETY: `buffer` is this device's; the structures outlive the call.
        unsafe {
            self.device
                .get_buffer_memory_requirements2(&info, &mut req2)
        };
        let req = req2.memory_requirements;
        let dedicated = (self.dedicated_only
            || dedicated_req.requires_dedicated_allocation != vk::FALSE)
            .then_some(Dedicated::Buffer(buffer));
        let made = self
            .export_memory(&req, dedicated, usage)
            .and_then(|(memory, host)| {
                self.bind_or_free(Dedicated::Buffer(buffer), memory, BackendError::OutOfMemory)
                    .map(|memory| (memory, host))
            });
        match made {
            Ok((memory, host)) => Ok(Memory {
                buffer,
                image: None,
                memory,
                size: req.size,
                host,
                last_use: AtomicU64::new(0),
                staged: Mutex::new(HashMap::new()),
                views: Mutex::new(HashMap::new()),
            }),
            Err(e) => {
                // SAFETY: the buffer is unused and ours.
                unsafe { self.device.destroy_buffer(buffer, None) };
                Err(e)
            }
        }
    }

    /// A texture's optimal-tiled image in exportable device-local memory.
    fn allocate_image(&self, plan: &image::ImagePlan) -> Result<Memory, BackendError> {
        let raw = self.create_image(plan).ok_or(BackendError::OutOfMemory)?;
        let mut dedicated_req = vk::MemoryDedicatedRequirements::default();
        let mut req2 = vk::MemoryRequirements2::default().push_next(&mut dedicated_req);
        let info = vk::ImageMemoryRequirementsInfo2::default().image(raw);
        // SAFETY: `raw` is this device's; the structures outlive the call.
        unsafe { self.device.get_image_memory_requirements2(&info, &mut req2) };
        let req = req2.memory_requirements;
        let dedicated = (plan.dedicated_only
            || dedicated_req.requires_dedicated_allocation != vk::FALSE)
            .then_some(Dedicated::Image(raw));
        // Never mapped: DEFAULT usage picks device-local memory.
        let made = self
            .export_memory(&req, dedicated, USAGE_DEFAULT)
            .and_then(|(memory, _)| {
                self.bind_or_free(Dedicated::Image(raw), memory, BackendError::OutOfMemory)
            });
        match made {
            Ok(memory) => Ok(Memory {
                buffer: vk::Buffer::null(),
                image: Some(Image {
                    raw,
                    mip_levels: plan.mip_levels,
                    layers: plan.layers,
                    format: plan.info_format,
                    image_type: plan.image_type,
                    storage: plan.usage.contains(vk::ImageUsageFlags::STORAGE),
                }),
                memory,
                size: req.size,
                host: ptr::null_mut(),
                last_use: AtomicU64::new(0),
                staged: Mutex::new(HashMap::new()),
                views: Mutex::new(HashMap::new()),
            }),
            Err(e) => {
                // SAFETY: the image is unused and ours.
                unsafe { self.device.destroy_image(raw, None) };
                Err(e)
            }
        }
    }

    /// Exportable memory for `req`: host-visible (and mapped whole) for resources the CPU maps
    /// where the driver allows it, device-local otherwise. Returns the memory and its mapping
    /// (null when not mapped).
    fn export_memory(
        &self,
        req: &vk::MemoryRequirements,
        dedicated: Option<Dedicated>,
        usage: u32,
    ) -> Result<(vk::DeviceMemory, *mut u8), BackendError> {
        let local = vk::MemoryPropertyFlags::DEVICE_LOCAL;
        let host = vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        let bits = req.memory_type_bits;
        // Resources the CPU maps live where the CPU can reach them, as Direct3D puts them:
        // STAGING in cached system memory (read back), DYNAMIC in device-local memory the CPU
        // can write where there is some. DEFAULT and IMMUTABLE resources are never mapped; on a
        // CPU device every memory is host memory anyway.
        let mapped_usage = matches!(usage, USAGE_STAGING | USAGE_DYNAMIC);
        let host_prefer = if usage == USAGE_STAGING {
            vk::MemoryPropertyFlags::HOST_CACHED
        } else {
            local
        };
        let direct_wanted = dedicated.is_none_or(|d| matches!(d, Dedicated::Buffer(_)))
            && (self.direct_map || (mapped_usage && !self.force_staging));
        let (index, direct) = match direct_wanted
            .then(|| memory_type(&self.memory_props, bits, host, host_prefer))
            .flatten()
        {
            Some(i) => (i, true),
            None => (
                memory_type(
                    &self.memory_props,
                    bits,
                    vk::MemoryPropertyFlags::empty(),
                    local,
                )
                .ok_or(BackendError::OutOfMemory)?,
                false,
            ),
        };
        let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(OPAQUE_FD);
        let mut dedicated_info = match dedicated {
            Some(Dedicated::Buffer(b)) => vk::MemoryDedicatedAllocateInfo::default().buffer(b),
            Some(Dedicated::Image(i)) => vk::MemoryDedicatedAllocateInfo::default().image(i),
            None => vk::MemoryDedicatedAllocateInfo::default(),
        };
        let mut alloc = vk::MemoryAllocateInfo::default()
            .allocation_size(req.size)
            .memory_type_index(index)
            .push_next(&mut export);
        // A dedicated allocation only where the driver insists: importers (OpenCL) have no way
        // to say they import one.
        if dedicated.is_some() {
            alloc = alloc.push_next(&mut dedicated_info);
        }
        self.counters
            .memory_allocations
            .fetch_add(1, Ordering::Relaxed);
        // SAFETY: the device is alive; the chain outlives the call; the memory type exists.
        let memory = unsafe { self.device.allocate_memory(&alloc, None) }.map_err(|e| match e {
            vk::Result::ERROR_DEVICE_LOST => {
                self.mark_lost();
                BackendError::DeviceLost
            }
            _ => BackendError::OutOfMemory,
        })?;
        if !direct {
            return Ok((memory, ptr::null_mut()));
        }
        // SAFETY: host-visible memory, not mapped yet, mapped whole.
        match unsafe {
            self.device
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
        } {
            Ok(p) => Ok((memory, p.cast())),
            Err(_) => {
                // SAFETY: unused and ours.
                unsafe { self.device.free_memory(memory, None) };
                Err(BackendError::OutOfMemory)
            }
        }
    }

    /// Destroys a memory whose work has completed (or whose device is lost).
    fn destroy_memory(&self, m: &Memory) {
        for (_, (s, _)) in lock(&m.staged).drain() {
            self.destroy_staging(s);
        }
        // SAFETY: no pending work uses the buffer, image, views or memory (caller); freeing also
        // unmaps; destroying a null buffer does nothing.
        unsafe {
            for (_, view) in lock(&m.views).drain() {
                self.device.destroy_image_view(view, None);
            }
            self.device.destroy_buffer(m.buffer, None);
            if let Some(i) = &m.image {
                self.device.destroy_image(i.raw, None);
            }
            self.device.free_memory(m.memory, None);
        }
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
            self.device.destroy_device(None);
        }
    }
}

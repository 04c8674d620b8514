//! Resource memory: one `VkDeviceMemory` per resource, exportable, bound to a buffer over all of
//! it or to a texture's image; its allocation, export and destruction.

use super::*;

/// A resource's memory: a buffer over all of it, or a texture's image.
pub(super) struct Memory {
    /// Null for images.
    pub(super) buffer: vk::Buffer,
    pub(super) image: Option<Image>,
    pub(super) memory: vk::DeviceMemory,
    /// Bytes of the `VkDeviceMemory` (what an importer passes as the allocation size).
    pub(super) size: u64,
    /// The whole memory mapped, when the backend maps directly; null otherwise.
    pub(super) host: *mut u8,
    /// Timeline value of the last batch that touches this memory.
    pub(super) last_use: AtomicU64,
    /// Subresources mapped through staging copies.
    pub(super) staged: Mutex<HashMap<u32, (Staging, bool)>>,
    /// 2D views of single subresources, made for shader copies, kept until the memory goes.
    pub(super) views: Mutex<HashMap<u32, vk::ImageView>>,
}

// SAFETY: `host` points into a mapping owned by this object; access to the bytes follows
// Direct3D's map rules (one mapper per subresource), and the handles are plain Vulkan handles
// whose use is serialised by the queue lock.
unsafe impl Send for Memory {}
// SAFETY: as above; shared references never write through `host` themselves.
unsafe impl Sync for Memory {}

/// What a dedicated allocation is dedicated to.
#[derive(Clone, Copy)]
pub(super) enum Dedicated {
    Buffer(vk::Buffer),
    Image(vk::Image),
}

impl VulkanBackend {
    /// Binds `memory`, fresh and made for `to` (its size and an allowed type), at offset 0; frees
    /// it and answers `err` when that fails.
    pub(super) fn bind_or_free(
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
    pub(super) fn allocate_buffer(&self, size: u64, usage: u32) -> Result<Memory, BackendError> {
        let mut external = vk::ExternalMemoryBufferCreateInfo::default().handle_types(OPAQUE_FD);
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(RESOURCE_USAGE)
            .sharing_mode(self.sharing_mode())
            .queue_family_indices(&self.families)
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
    pub(super) fn allocate_image(&self, plan: &image::ImagePlan) -> Result<Memory, BackendError> {
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
    pub(super) fn export_memory(
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
    pub(super) fn destroy_memory(&self, m: &Memory) {
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

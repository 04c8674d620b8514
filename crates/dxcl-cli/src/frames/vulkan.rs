//! The Vulkan half of case d, by hand: a device on the GPU the OpenCL device is (matched by UUID),
//! the frame's input and result as optimal-tiled `R8G8B8A8_UNORM` images in exportable opaque-fd
//! memory, two exportable binary semaphores, and the per-frame commands: the host frame from a
//! persistent staging buffer into the input image (signalling OpenCL), and, once OpenCL signals,
//! the result copied onward into a third image. OpenCL's half is `expert.rs`.
//!
//! Every Vulkan object lives in [`Frames`], which destroys them, the device and the instance in
//! its `Drop`, after the device is idle. `select.rs` chooses the device; `commands.rs` records
//! the commands.

use ash::vk;
use std::os::fd::{FromRawFd, OwnedFd};

use super::image::Extent;

mod commands;
mod select;

use select::{choose, memory_type, Partial};

pub type VkError = String;

fn vk_err(call: &str) -> impl Fn(vk::Result) -> VkError + '_ {
    move |r| format!("{call} failed with {r:?}")
}

/// Usage of the input and result images: copies both ways (OpenCL reads and writes them through
/// the import, which needs no Vulkan usage of its own but storage, as a compute importer does).
const SHARED_USAGE: vk::ImageUsageFlags = vk::ImageUsageFlags::from_raw(
    vk::ImageUsageFlags::TRANSFER_SRC.as_raw()
        | vk::ImageUsageFlags::TRANSFER_DST.as_raw()
        | vk::ImageUsageFlags::STORAGE.as_raw()
        | vk::ImageUsageFlags::SAMPLED.as_raw(),
);
const FORMAT: vk::Format = vk::Format::R8G8B8A8_UNORM;
const OPAQUE_FD: vk::ExternalMemoryHandleTypeFlags = vk::ExternalMemoryHandleTypeFlags::OPAQUE_FD;
const SEMAPHORE_FD: vk::ExternalSemaphoreHandleTypeFlags =
    vk::ExternalSemaphoreHandleTypeFlags::OPAQUE_FD;
const COLOR: vk::ImageSubresourceRange = vk::ImageSubresourceRange {
    aspect_mask: vk::ImageAspectFlags::COLOR,
    base_mip_level: 0,
    level_count: 1,
    base_array_layer: 0,
    layer_count: 1,
};

/// Why the Vulkan half cannot run here (no loader, no matching device, a missing extension or
/// format), or a call that failed.
#[derive(Debug)]
pub enum Setup {
    Unavailable(String),
    Failed(VkError),
}

impl From<VkError> for Setup {
    fn from(e: VkError) -> Setup {
        Setup::Failed(e)
    }
}

/// An image and its memory. `exported` images are the ones OpenCL imports.
struct Image {
    image: vk::Image,
    memory: vk::DeviceMemory,
    size: u64,
}

/// A host-visible buffer, mapped for its whole life.
struct HostBuffer {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    mapped: *mut u8,
    size: usize,
}

/// How the exported images are allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocation {
    /// One plain allocation per image (what the H100 probe tested: docs/gpu.md).
    Plain,
    /// `VkMemoryDedicatedAllocateInfo`: asked for by `DXCL_FRAMES_EXPERT_DEDICATED=1`, or
    /// required by the driver.
    Dedicated,
}

/// The Vulkan side of case d. Fields are destroyed in `Drop`, in reverse order of creation.
pub struct Frames {
    entry: ash::Entry,
    instance: ash::Instance,
    device: ash::Device,
    memory_fd: ash::khr::external_memory_fd::Device,
    semaphore_fd: Option<ash::khr::external_semaphore_fd::Device>,
    queue: vk::Queue,
    family: u32,
    pool: vk::CommandPool,
    /// Input (host frame in), output (OpenCL's result), onward (Vulkan's copy of the result).
    images: Vec<Image>,
    staging: Option<HostBuffer>,
    readback: Option<HostBuffer>,
    /// Vulkan → OpenCL and OpenCL → Vulkan; `None` where the device cannot export semaphores.
    semaphores: Option<[vk::Semaphore; 2]>,
    fence: vk::Fence,
    /// Upload, onward copy, read-back.
    commands: [vk::CommandBuffer; 3],
    extent: Extent,
    /// A fenced wait timed out: the queue may wait forever for a signal that never comes, so
    /// `Drop` leaks every object rather than wait for the device or destroy objects in use.
    stuck: std::cell::Cell<bool>,
    pub allocation: Allocation,
    /// The device's name and driver, for the report.
    pub name: String,
}

/// The longest a frame's work may take before the case fails.
const FENCE_TIMEOUT_NS: u64 = 20_000_000_000;

// Indices into `Frames::images`.
const INPUT: usize = 0;
const OUTPUT: usize = 1;
const ONWARD: usize = 2;
// Indices into `Frames::commands`.
const UPLOAD: usize = 0;
const ONWARD_COPY: usize = 1;
const READ_BACK: usize = 2;

impl Frames {
    /// Opens the Vulkan device whose `deviceUUID` is `uuid` (any device with the extensions when
    /// `None`: the tests on lavapipe), with its images, buffers, semaphores and commands.
    /// `semaphores_required`: fail when the device cannot export semaphores (the benchmark).
    pub fn open(
        uuid: Option<[u8; 16]>,
        extent: Extent,
        allocation: Allocation,
        semaphores_required: bool,
    ) -> Result<Frames, Setup> {
        // SAFETY: loading libvulkan runs the system loader's initialisers, as any Vulkan
        // application does.
        let entry = unsafe { ash::Entry::load() }
            .map_err(|e| Setup::Unavailable(format!("no Vulkan loader ({e})")))?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"dxcl frames (case d)")
            .api_version(vk::API_VERSION_1_1);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: `info` and what it points to live across the call.
        let instance = unsafe { entry.create_instance(&info, None) }
            .map_err(|r| Setup::Unavailable(format!("vkCreateInstance (Vulkan 1.1): {r:?}")))?;
        // From here on, a failure must destroy the instance: `Partial` does.
        let mut partial = Partial {
            entry: Some(entry),
            instance: Some(instance),
        };
        let instance = partial.instance.as_ref().expect("set above");
        let (physical, family, name, semaphore_export, dedicated_only) =
            choose(instance, uuid, extent)?;
        let mut extensions = vec![ash::khr::external_memory_fd::NAME.as_ptr()];
        if semaphore_export {
            extensions.push(ash::khr::external_semaphore_fd::NAME.as_ptr());
        } else if semaphores_required {
            return Err(Setup::Unavailable(format!(
                "the Vulkan device {name} cannot export opaque-fd semaphores \
                 (VK_KHR_external_semaphore_fd)"
            )));
        }
        let priority = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priority)];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .enabled_extension_names(&extensions);
        // SAFETY: `physical` belongs to `instance`; `info` and its arrays outlive the call.
        let device = unsafe { instance.create_device(physical, &info, None) }
            .map_err(vk_err("vkCreateDevice"))?;
        // SAFETY: the instance is alive.
        let memory = unsafe { instance.get_physical_device_memory_properties(physical) };
        let (entry, instance) = partial.take();
        // SAFETY: a device made above, with a queue of `family` at index 0.
        let queue = unsafe { device.get_device_queue(family, 0) };
        let memory_fd = ash::khr::external_memory_fd::Device::new(&instance, &device);
        let semaphore_fd = semaphore_export
            .then(|| ash::khr::external_semaphore_fd::Device::new(&instance, &device));
        let mut frames = Frames {
            entry,
            instance,
            device,
            memory_fd,
            semaphore_fd,
            queue,
            family,
            pool: vk::CommandPool::null(),
            images: Vec::new(),
            staging: None,
            readback: None,
            semaphores: None,
            fence: vk::Fence::null(),
            commands: [vk::CommandBuffer::null(); 3],
            extent,
            stuck: std::cell::Cell::new(false),
            allocation: if dedicated_only {
                Allocation::Dedicated
            } else {
                allocation
            },
            name,
        };
        // Everything below is destroyed by `Frames::drop` if a later step fails.
        frames.build(family, &memory)?;
        Ok(frames)
    }

    fn build(
        &mut self,
        family: u32,
        memory: &vk::PhysicalDeviceMemoryProperties,
    ) -> Result<(), Setup> {
        let d = &self.device;
        let info = vk::CommandPoolCreateInfo::default().queue_family_index(family);
        // SAFETY: a live device; `info` outlives the call. The same holds for every create call
        // below ("as above"); each handle is stored at once so `Drop` destroys it.
        self.pool =
            unsafe { d.create_command_pool(&info, None) }.map_err(vk_err("vkCreateCommandPool"))?;
        // SAFETY: as above.
        self.fence = unsafe { d.create_fence(&vk::FenceCreateInfo::default(), None) }
            .map_err(vk_err("vkCreateFence"))?;
        for exported in [true, true, false] {
            let image = self.image(memory, exported)?;
            self.images.push(image);
        }
        let bytes = self.extent.bytes();
        let coherent =
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
        self.staging =
            Some(self.host_buffer(memory, bytes, vk::BufferUsageFlags::TRANSFER_SRC, coherent)?);
        self.readback = Some(self.host_buffer(
            memory,
            bytes,
            vk::BufferUsageFlags::TRANSFER_DST,
            coherent | vk::MemoryPropertyFlags::HOST_CACHED,
        )?);
        if self.semaphore_fd.is_some() {
            let mut pair = [vk::Semaphore::null(); 2];
            for s in pair.iter_mut() {
                let mut export =
                    vk::ExportSemaphoreCreateInfo::default().handle_types(SEMAPHORE_FD);
                let info = vk::SemaphoreCreateInfo::default().push_next(&mut export);
                // SAFETY: as above.
                match unsafe { self.device.create_semaphore(&info, None) } {
                    Ok(h) => *s = h,
                    Err(r) => {
                        for made in pair.iter().filter(|h| **h != vk::Semaphore::null()) {
                            // SAFETY: made above, never used.
                            unsafe { self.device.destroy_semaphore(*made, None) };
                        }
                        return Err(vk_err("vkCreateSemaphore")(r).into());
                    }
                }
            }
            self.semaphores = Some(pair);
        }
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(3);
        // SAFETY: as above; the buffers go with the pool.
        let cbs = unsafe { self.device.allocate_command_buffers(&info) }
            .map_err(vk_err("vkAllocateCommandBuffers"))?;
        self.commands.copy_from_slice(&cbs);
        self.record()?;
        self.initial_layouts()?;
        Ok(())
    }

    /// An optimal-tiled image of the frame's extent, bound to its own memory; `exported`: in
    /// memory exportable as an opaque fd, owned by `VK_QUEUE_FAMILY_EXTERNAL` between frames.
    fn image(
        &self,
        props: &vk::PhysicalDeviceMemoryProperties,
        exported: bool,
    ) -> Result<Image, VkError> {
        let d = &self.device;
        let mut external = vk::ExternalMemoryImageCreateInfo::default().handle_types(OPAQUE_FD);
        let mut info = vk::ImageCreateInfo::default()
            .image_type(vk::ImageType::TYPE_2D)
            .format(FORMAT)
            .extent(vk::Extent3D {
                width: self.extent.width,
                height: self.extent.height,
                depth: 1,
            })
            .mip_levels(1)
            .array_layers(1)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(if exported {
                SHARED_USAGE
            } else {
                vk::ImageUsageFlags::TRANSFER_SRC | vk::ImageUsageFlags::TRANSFER_DST
            })
            .initial_layout(vk::ImageLayout::UNDEFINED);
        if exported {
            info = info.push_next(&mut external);
        }
        // SAFETY: a live device; `info` and its chain outlive the call.
        let image = unsafe { d.create_image(&info, None) }.map_err(vk_err("vkCreateImage"))?;
        let made = (|| {
            // SAFETY: `image` was made above from this device.
            let req = unsafe { d.get_image_memory_requirements(image) };
            let index = memory_type(
                props,
                req.memory_type_bits,
                vk::MemoryPropertyFlags::DEVICE_LOCAL,
                vk::MemoryPropertyFlags::empty(),
            )
            .ok_or("no memory type for the image")?;
            let mut export = vk::ExportMemoryAllocateInfo::default().handle_types(OPAQUE_FD);
            let mut dedicated = vk::MemoryDedicatedAllocateInfo::default().image(image);
            let mut info = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(index);
            if exported {
                info = info.push_next(&mut export);
                if self.allocation == Allocation::Dedicated {
                    info = info.push_next(&mut dedicated);
                }
            }
            // SAFETY: as above.
            let memory =
                unsafe { d.allocate_memory(&info, None) }.map_err(vk_err("vkAllocateMemory"))?;
            // SAFETY: an unbound image and fresh memory of its requirements' size and type.
            if let Err(r) = unsafe { d.bind_image_memory(image, memory, 0) } {
                // SAFETY: the memory was allocated above and is bound to nothing.
                unsafe { d.free_memory(memory, None) };
                return Err(vk_err("vkBindImageMemory")(r));
            }
            Ok(Image {
                image,
                memory,
                size: req.size,
            })
        })();
        if made.is_err() {
            // SAFETY: the image was made above and nothing uses it.
            unsafe { d.destroy_image(image, None) };
        }
        made
    }

    fn host_buffer(
        &self,
        props: &vk::PhysicalDeviceMemoryProperties,
        size: usize,
        usage: vk::BufferUsageFlags,
        want: vk::MemoryPropertyFlags,
    ) -> Result<HostBuffer, VkError> {
        let d = &self.device;
        let info = vk::BufferCreateInfo::default()
            .size(size as u64)
            .usage(usage)
            .sharing_mode(vk::SharingMode::EXCLUSIVE);
        // SAFETY: a live device; `info` outlives the call.
        let buffer = unsafe { d.create_buffer(&info, None) }.map_err(vk_err("vkCreateBuffer"))?;
        let made = (|| {
            // SAFETY: `buffer` was made above from this device.
            let req = unsafe { d.get_buffer_memory_requirements(buffer) };
            let coherent =
                vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT;
            let index = memory_type(props, req.memory_type_bits, want, coherent)
                .ok_or("no host-visible coherent memory type for a buffer")?;
            let info = vk::MemoryAllocateInfo::default()
                .allocation_size(req.size)
                .memory_type_index(index);
            // SAFETY: as above.
            let memory =
                unsafe { d.allocate_memory(&info, None) }.map_err(vk_err("vkAllocateMemory"))?;
            // SAFETY: fresh, unbound; the memory is host-visible, so it can be mapped.
            let mapped = unsafe {
                d.bind_buffer_memory(buffer, memory, 0).and_then(|()| {
                    d.map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                })
            };
            match mapped {
                Ok(p) => Ok(HostBuffer {
                    buffer,
                    memory,
                    mapped: p.cast(),
                    size,
                }),
                Err(r) => {
                    // SAFETY: allocated above; freeing unbinds and unmaps it.
                    unsafe { d.free_memory(memory, None) };
                    Err(vk_err("vkBindBufferMemory/vkMapMemory")(r))
                }
            }
        })();
        if made.is_err() {
            // SAFETY: made above and unused.
            unsafe { d.destroy_buffer(buffer, None) };
        }
        made
    }

    fn family(&self) -> u32 {
        self.family
    }

    /// Submits `cb` (if any) waiting for `wait` at the transfer stage and signalling `signal`;
    /// with `fenced`, waits on the CPU until it completes.
    fn submit(
        &self,
        cb: Option<vk::CommandBuffer>,
        wait: Option<vk::Semaphore>,
        signal: Option<vk::Semaphore>,
        fenced: bool,
    ) -> Result<(), VkError> {
        let cbs: Vec<vk::CommandBuffer> = cb.into_iter().collect();
        let waits: Vec<vk::Semaphore> = wait.into_iter().collect();
        let stages = vec![vk::PipelineStageFlags::TRANSFER; waits.len()];
        let signals: Vec<vk::Semaphore> = signal.into_iter().collect();
        let info = vk::SubmitInfo::default()
            .command_buffers(&cbs)
            .wait_semaphores(&waits)
            .wait_dst_stage_mask(&stages)
            .signal_semaphores(&signals);
        let fence = if fenced {
            self.fence
        } else {
            vk::Fence::null()
        };
        // SAFETY: the queue, command buffers, semaphores and fence are this device's and live;
        // the command buffers are recorded and not pending (every fenced submission is waited
        // for before the next frame, and each frame submits each buffer once); a binary
        // semaphore waited for here has had its signal submitted (the callers' order).
        unsafe { self.device.queue_submit(self.queue, &[info], fence) }
            .map_err(vk_err("vkQueueSubmit"))?;
        if fenced {
            // SAFETY: the fence was just submitted; it is reset before its next use.
            unsafe {
                // A bounded wait: a signal that never comes (the other API failed) must end
                // the case, not hang the run.
                let waited = self
                    .device
                    .wait_for_fences(&[self.fence], true, FENCE_TIMEOUT_NS);
                if waited == Err(vk::Result::TIMEOUT) {
                    self.stuck.set(true);
                }
                waited.map_err(vk_err("vkWaitForFences (20 s)"))?;
                self.device
                    .reset_fences(&[self.fence])
                    .map_err(vk_err("vkResetFences"))?;
            }
        }
        Ok(())
    }

    /// Whether a fenced wait timed out (see `stuck`).
    pub fn is_stuck(&self) -> bool {
        self.stuck.get()
    }

    /// A new opaque fd of the memory of the input (`output` false) or the result image, owned by
    /// the caller, and the memory's size.
    pub fn export_image(&self, output: bool) -> Result<(OwnedFd, u64), VkError> {
        let image = &self.images[if output { OUTPUT } else { INPUT }];
        let info = vk::MemoryGetFdInfoKHR::default()
            .memory(image.memory)
            .handle_type(OPAQUE_FD);
        // SAFETY: memory of this device allocated with an opaque-fd export.
        let fd =
            unsafe { self.memory_fd.get_memory_fd(&info) }.map_err(vk_err("vkGetMemoryFdKHR"))?;
        // SAFETY: a successful vkGetMemoryFdKHR hands the caller a new fd it owns.
        Ok((unsafe { OwnedFd::from_raw_fd(fd) }, image.size))
    }

    /// A new opaque fd of the Vulkan → OpenCL (`to_vulkan` false) or OpenCL → Vulkan semaphore.
    pub fn export_semaphore(&self, to_vulkan: bool) -> Result<OwnedFd, VkError> {
        let (Some(ext), Some(pair)) = (&self.semaphore_fd, self.semaphores) else {
            return Err("the device cannot export semaphores".into());
        };
        let info = vk::SemaphoreGetFdInfoKHR::default()
            .semaphore(pair[usize::from(to_vulkan)])
            .handle_type(SEMAPHORE_FD);
        // SAFETY: a semaphore of this device created with an opaque-fd export, with no signal
        // pending (exported before any frame).
        let fd = unsafe { ext.get_semaphore_fd(&info) }.map_err(vk_err("vkGetSemaphoreFdKHR"))?;
        // SAFETY: a successful vkGetSemaphoreFdKHR hands the caller a new fd it owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    /// The frame's first half: `host` into the staging buffer, then the upload, signalling the
    /// Vulkan → OpenCL semaphore (where there is one).
    pub fn upload(&self, host: &[u8]) -> Result<(), VkError> {
        let staging = self.staging.as_ref().ok_or("no staging buffer")?;
        if host.len() != staging.size {
            return Err(format!(
                "a host frame of {} bytes for a {}-byte frame",
                host.len(),
                staging.size
            ));
        }
        // SAFETY: the mapping holds `size` bytes and no GPU work reads it now: the last upload
        // completed before the last frame's fence (same queue, earlier submission).
        unsafe { std::ptr::copy_nonoverlapping(host.as_ptr(), staging.mapped, staging.size) };
        let signal = self.semaphores.map(|s| s[0]);
        self.submit(Some(self.commands[UPLOAD]), None, signal, false)
    }

    /// The frame's second half: once OpenCL signals, its result copied into the third image; the
    /// CPU waits until that is done.
    pub fn onward(&self) -> Result<(), VkError> {
        let wait = self.semaphores.map(|s| s[1]);
        self.submit(Some(self.commands[ONWARD_COPY]), wait, None, true)
    }

    /// The third image, read back (tightly packed rows), for the check.
    pub fn read_onward(&self) -> Result<Vec<u8>, VkError> {
        let back = self.readback.as_ref().ok_or("no read-back buffer")?;
        self.submit(Some(self.commands[READ_BACK]), None, None, true)?;
        // SAFETY: the mapping holds `size` bytes, written by the completed copy and made
        // visible to the host by its barrier (coherent memory).
        Ok(unsafe { std::slice::from_raw_parts(back.mapped, back.size) }.to_vec())
    }
}

impl Drop for Frames {
    fn drop(&mut self) {
        if self.stuck.get() {
            eprintln!(
                "dxcl frames: case d's Vulkan queue timed out waiting; its device and objects are \
                 left to the process's exit"
            );
            return;
        }
        let d = self.device.clone();
        // SAFETY: every handle below was made from this device (null ones are skipped by
        // Vulkan's destroy calls, which accept VK_NULL_HANDLE), and none is in use once the
        // device is idle; OpenCL's imports are released before this runs (expert.rs keeps them
        // in fields declared before this one). The device, then the instance, go last.
        unsafe {
            let _ = d.device_wait_idle();
            if let Some(pair) = self.semaphores {
                for s in pair {
                    d.destroy_semaphore(s, None);
                }
            }
            for b in [self.staging.take(), self.readback.take()]
                .into_iter()
                .flatten()
            {
                d.destroy_buffer(b.buffer, None);
                d.free_memory(b.memory, None);
            }
            for i in self.images.drain(..) {
                d.destroy_image(i.image, None);
                d.free_memory(i.memory, None);
            }
            d.destroy_fence(self.fence, None);
            d.destroy_command_pool(self.pool, None);
            d.destroy_device(None);
            self.instance.destroy_instance(None);
        }
        let _ = &self.entry;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::image::host_frame;

    /// The Vulkan half on whatever Vulkan device is here (lavapipe in CI): exportable images and
    /// semaphores, and three frames through upload, a stand-in for OpenCL's part (a copy of the
    /// input image into the result image, ordered by the two semaphores where the device exports
    /// them) and the onward copy, each read back whole.
    fn frames_through(allocation: Allocation) {
        let e = Extent {
            width: 67,
            height: 45,
        };
        let frames = match Frames::open(None, e, allocation, false) {
            Ok(f) => f,
            Err(Setup::Unavailable(why)) => {
                eprintln!("SKIPPED: no Vulkan device that can run case d's Vulkan half: {why}");
                return;
            }
            Err(Setup::Failed(e)) => panic!("{e}"),
        };
        for output in [false, true] {
            let (fd, size) = frames.export_image(output).unwrap();
            assert!(size >= e.bytes() as u64, "{size}");
            drop(fd);
        }
        if frames.semaphores.is_some() {
            frames.export_semaphore(false).unwrap();
            frames.export_semaphore(true).unwrap();
        } else {
            eprintln!(
                "{}: no exportable semaphores; the frames run unsynchronised by them",
                frames.name
            );
        }
        for k in 0..3 {
            let host = host_frame(e, k);
            frames.upload(&host).unwrap();
            frames.stand_in_for_opencl().unwrap();
            frames.onward().unwrap();
            let got = frames.read_onward().unwrap();
            assert!(
                got == host,
                "frame {k}: the onward image differs from the host frame"
            );
        }
        assert!(frames.upload(&[0u8; 5]).is_err());
    }

    #[test]
    fn vulkan_half_carries_frames_plain_allocation() {
        frames_through(Allocation::Plain);
    }

    #[test]
    fn vulkan_half_carries_frames_dedicated_allocation() {
        frames_through(Allocation::Dedicated);
    }
}

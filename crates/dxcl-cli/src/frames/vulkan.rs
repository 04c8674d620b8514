//! The Vulkan half of case d, by hand: a device on the GPU the OpenCL device is (matched by UUID),
//! the frame's input and result as optimal-tiled `R8G8B8A8_UNORM` images in exportable opaque-fd
//! memory, two exportable binary semaphores, and the per-frame commands: the host frame from a
//! persistent staging buffer into the input image (signalling OpenCL), and, once OpenCL signals,
//! the result copied onward into a third image. OpenCL's half is `expert.rs`.
//!
//! Every Vulkan object lives in [`Frames`], which destroys them, the device and the instance in
//! its `Drop`, after the device is idle.

use ash::vk;
use std::ffi::CStr;
use std::os::fd::{FromRawFd, OwnedFd};

use super::image::Extent;

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

fn has_extension(list: &[vk::ExtensionProperties], name: &CStr) -> bool {
    list.iter()
        .any(|e| e.extension_name_as_c_str().is_ok_and(|n| n == name))
}

/// A memory type among `bits` with all of `want`, else one with `fallback`.
fn memory_type(
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

    /// A barrier of one whole image, `GENERAL` before and after; with `to`/`from` set to
    /// `VK_QUEUE_FAMILY_EXTERNAL`, its release or acquire half of an ownership transfer.
    fn barrier(
        image: vk::Image,
        src: vk::AccessFlags,
        dst: vk::AccessFlags,
        from: u32,
        to: u32,
    ) -> vk::ImageMemoryBarrier<'static> {
        vk::ImageMemoryBarrier::default()
            .src_access_mask(src)
            .dst_access_mask(dst)
            .old_layout(vk::ImageLayout::GENERAL)
            .new_layout(vk::ImageLayout::GENERAL)
            .src_queue_family_index(from)
            .dst_queue_family_index(to)
            .image(image)
            .subresource_range(COLOR)
    }

    fn whole(&self) -> vk::Extent3D {
        vk::Extent3D {
            width: self.extent.width,
            height: self.extent.height,
            depth: 1,
        }
    }

    /// Records the three per-frame command buffers once. The shared images stay in `GENERAL`
    /// (OpenCL has no layouts) and are acquired from and released to `VK_QUEUE_FAMILY_EXTERNAL`
    /// around each Vulkan use.
    fn record(&self) -> Result<(), VkError> {
        let d = &self.device;
        let (ext, ign) = (vk::QUEUE_FAMILY_EXTERNAL, vk::QUEUE_FAMILY_IGNORED);
        let family = self.family();
        let (upload, onward, readback) = (
            self.commands[UPLOAD],
            self.commands[ONWARD_COPY],
            self.commands[READ_BACK],
        );
        let staging = self.staging.as_ref().ok_or("no staging buffer")?;
        let back = self.readback.as_ref().ok_or("no read-back buffer")?;
        let (input, output, third) = (
            self.images[INPUT].image,
            self.images[OUTPUT].image,
            self.images[ONWARD].image,
        );
        let layers = vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        };
        let region = vk::BufferImageCopy::default()
            .image_subresource(layers)
            .image_extent(self.whole());
        let begin = vk::CommandBufferBeginInfo::default();
        let t = vk::PipelineStageFlags::TRANSFER;
        let (read, write) = (
            vk::AccessFlags::TRANSFER_READ,
            vk::AccessFlags::TRANSFER_WRITE,
        );
        let none = vk::AccessFlags::empty();
        let deps = vk::DependencyFlags::empty();
        // SAFETY: fresh primary command buffers of this device's pool, recorded once each; every
        // handle they name lives as long as they do (all are destroyed together in `Drop`), and
        // the copies lie inside the images and buffers (both hold exactly the frame).
        unsafe {
            // Upload: the host frame from the staging buffer into the input image.
            d.begin_command_buffer(upload, &begin)
                .map_err(vk_err("vkBeginCommandBuffer"))?;
            d.cmd_pipeline_barrier(
                upload,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                t,
                deps,
                &[],
                &[],
                &[Self::barrier(input, none, write, ext, family)],
            );
            d.cmd_copy_buffer_to_image(
                upload,
                staging.buffer,
                input,
                vk::ImageLayout::GENERAL,
                &[region],
            );
            d.cmd_pipeline_barrier(
                upload,
                t,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                deps,
                &[],
                &[],
                &[Self::barrier(input, write, none, family, ext)],
            );
            d.end_command_buffer(upload)
                .map_err(vk_err("vkEndCommandBuffer"))?;

            // Onward: OpenCL's result into the third image (after the last frame's uses of it).
            d.begin_command_buffer(onward, &begin)
                .map_err(vk_err("vkBeginCommandBuffer"))?;
            d.cmd_pipeline_barrier(
                onward,
                t,
                t,
                deps,
                &[],
                &[],
                &[
                    Self::barrier(output, none, read, ext, family),
                    Self::barrier(third, read | write, write, ign, ign),
                ],
            );
            let copy = vk::ImageCopy::default()
                .src_subresource(layers)
                .dst_subresource(layers)
                .extent(self.whole());
            d.cmd_copy_image(
                onward,
                output,
                vk::ImageLayout::GENERAL,
                third,
                vk::ImageLayout::GENERAL,
                &[copy],
            );
            d.cmd_pipeline_barrier(
                onward,
                t,
                vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                deps,
                &[],
                &[],
                &[Self::barrier(output, none, none, family, ext)],
            );
            d.end_command_buffer(onward)
                .map_err(vk_err("vkEndCommandBuffer"))?;

            // Read-back (for the check): the third image into host memory.
            d.begin_command_buffer(readback, &begin)
                .map_err(vk_err("vkBeginCommandBuffer"))?;
            d.cmd_pipeline_barrier(
                readback,
                t,
                t,
                deps,
                &[],
                &[],
                &[Self::barrier(third, write, read, ign, ign)],
            );
            d.cmd_copy_image_to_buffer(
                readback,
                third,
                vk::ImageLayout::GENERAL,
                back.buffer,
                &[region],
            );
            let to_host = vk::BufferMemoryBarrier::default()
                .src_access_mask(write)
                .dst_access_mask(vk::AccessFlags::HOST_READ)
                .src_queue_family_index(ign)
                .dst_queue_family_index(ign)
                .buffer(back.buffer)
                .size(vk::WHOLE_SIZE);
            d.cmd_pipeline_barrier(
                readback,
                t,
                vk::PipelineStageFlags::HOST,
                deps,
                &[],
                &[to_host],
                &[],
            );
            d.end_command_buffer(readback)
                .map_err(vk_err("vkEndCommandBuffer"))?;
        }
        Ok(())
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

    /// Once: every image from `UNDEFINED` to `GENERAL`; the shared ones then released to
    /// `VK_QUEUE_FAMILY_EXTERNAL`, where each frame's commands acquire them from.
    fn initial_layouts(&self) -> Result<(), VkError> {
        let d = &self.device;
        let family = self.family;
        let ign = vk::QUEUE_FAMILY_IGNORED;
        let to_general: Vec<vk::ImageMemoryBarrier> = self
            .images
            .iter()
            .map(|i| {
                Self::barrier(
                    i.image,
                    vk::AccessFlags::empty(),
                    vk::AccessFlags::TRANSFER_WRITE,
                    ign,
                    ign,
                )
                .old_layout(vk::ImageLayout::UNDEFINED)
            })
            .collect();
        let release: Vec<vk::ImageMemoryBarrier> = [INPUT, OUTPUT]
            .iter()
            .map(|&i| {
                Self::barrier(
                    self.images[i].image,
                    vk::AccessFlags::empty(),
                    vk::AccessFlags::empty(),
                    family,
                    vk::QUEUE_FAMILY_EXTERNAL,
                )
            })
            .collect();
        // A temporary command buffer from the pool, freed after its fenced submission.
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: a live pool of this device.
        let once = unsafe { d.allocate_command_buffers(&info) }
            .map_err(vk_err("vkAllocateCommandBuffers"))?[0];
        // SAFETY: a fresh command buffer; the barriers name this device's live images.
        let recorded = unsafe {
            d.begin_command_buffer(once, &vk::CommandBufferBeginInfo::default())
                .and_then(|()| {
                    d.cmd_pipeline_barrier(
                        once,
                        vk::PipelineStageFlags::TOP_OF_PIPE,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::DependencyFlags::empty(),
                        &[],
                        &[],
                        &to_general,
                    );
                    d.cmd_pipeline_barrier(
                        once,
                        vk::PipelineStageFlags::TRANSFER,
                        vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                        vk::DependencyFlags::empty(),
                        &[],
                        &[],
                        &release,
                    );
                    d.end_command_buffer(once)
                })
        }
        .map_err(vk_err("recording the initial layouts"));
        let done = recorded.and_then(|()| self.submit(Some(once), None, None, true));
        // SAFETY: not pending: the fenced submission completed, or never happened.
        unsafe { d.free_command_buffers(self.pool, &[once]) };
        done
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

    /// For the tests, OpenCL's part done by Vulkan: waits for the Vulkan → OpenCL semaphore,
    /// copies the input image into the result image as the external owner would, and signals the
    /// OpenCL → Vulkan semaphore.
    #[cfg(test)]
    pub fn stand_in_for_opencl(&self) -> Result<(), VkError> {
        let d = &self.device;
        let (ext, family) = (vk::QUEUE_FAMILY_EXTERNAL, self.family);
        let (input, output) = (self.images[INPUT].image, self.images[OUTPUT].image);
        let info = vk::CommandBufferAllocateInfo::default()
            .command_pool(self.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: a live pool of this device.
        let cb = unsafe { d.allocate_command_buffers(&info) }
            .map_err(vk_err("vkAllocateCommandBuffers"))?[0];
        let layers = vk::ImageSubresourceLayers {
            aspect_mask: vk::ImageAspectFlags::COLOR,
            mip_level: 0,
            base_array_layer: 0,
            layer_count: 1,
        };
        let copy = vk::ImageCopy::default()
            .src_subresource(layers)
            .dst_subresource(layers)
            .extent(self.whole());
        let (none, read, write) = (
            vk::AccessFlags::empty(),
            vk::AccessFlags::TRANSFER_READ,
            vk::AccessFlags::TRANSFER_WRITE,
        );
        let t = vk::PipelineStageFlags::TRANSFER;
        // SAFETY: a fresh command buffer naming this device's live images; the copy covers both.
        let recorded = unsafe {
            d.begin_command_buffer(cb, &vk::CommandBufferBeginInfo::default())
                .and_then(|()| {
                    d.cmd_pipeline_barrier(
                        cb,
                        vk::PipelineStageFlags::TOP_OF_PIPE,
                        t,
                        vk::DependencyFlags::empty(),
                        &[],
                        &[],
                        &[
                            Self::barrier(input, none, read, ext, family),
                            Self::barrier(output, none, write, ext, family),
                        ],
                    );
                    d.cmd_copy_image(
                        cb,
                        input,
                        vk::ImageLayout::GENERAL,
                        output,
                        vk::ImageLayout::GENERAL,
                        &[copy],
                    );
                    d.cmd_pipeline_barrier(
                        cb,
                        t,
                        vk::PipelineStageFlags::BOTTOM_OF_PIPE,
                        vk::DependencyFlags::empty(),
                        &[],
                        &[],
                        &[
                            Self::barrier(input, none, none, family, ext),
                            Self::barrier(output, write, none, family, ext),
                        ],
                    );
                    d.end_command_buffer(cb)
                })
        }
        .map_err(vk_err("recording the stand-in"));
        let pair = self.semaphores;
        let done = recorded
            .and_then(|()| self.submit(Some(cb), pair.map(|s| s[0]), pair.map(|s| s[1]), true));
        // SAFETY: not pending: the fenced submission completed, or never happened.
        unsafe { d.free_command_buffers(self.pool, &[cb]) };
        done
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

/// The instance (and the loader) until the device exists; destroys the instance on an early
/// return.
struct Partial {
    entry: Option<ash::Entry>,
    instance: Option<ash::Instance>,
}

impl Partial {
    fn take(&mut self) -> (ash::Entry, ash::Instance) {
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
fn choose(
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

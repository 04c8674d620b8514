//! Case d's Vulkan commands: recorded once, submitted every frame.

use ash::vk;

use super::{
    vk_err, Frames, VkError, COLOR, INPUT, ONWARD, ONWARD_COPY, OUTPUT, READ_BACK, UPLOAD,
};

impl Frames {
    /// A barrier of one whole image, `GENERAL` before and after; with `to`/`from` set to
    /// `VK_QUEUE_FAMILY_EXTERNAL`, its release or acquire half of an ownership transfer.
    pub(super) fn barrier(
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

    pub(super) fn whole(&self) -> vk::Extent3D {
        vk::Extent3D {
            width: self.extent.width,
            height: self.extent.height,
            depth: 1,
        }
    }

    /// Records the three per-frame command buffers once. The shared images stay in `GENERAL`
    /// (OpenCL has no layouts) and are acquired from and released to `VK_QUEUE_FAMILY_EXTERNAL`
    /// around each Vulkan use.
    pub(super) fn record(&self) -> Result<(), VkError> {
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

    /// Once: every image from `UNDEFINED` to `GENERAL`; the shared ones then released to
    /// `VK_QUEUE_FAMILY_EXTERNAL`, where each frame's commands acquire them from.
    pub(super) fn initial_layouts(&self) -> Result<(), VkError> {
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

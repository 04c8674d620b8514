//! Commands recorded into the batch: transfers, uploads, copies between resources (as
//! `vkCmdCopy*` or as the compute copy) and the copy regions they use.

use super::*;

impl VulkanBackend {
    /// What a copy between two images needs to run as the compute shader (`compute_copy.rs`):
    /// the pipelines, the shader and the two views; `None` where `vkCmdCopyImage` must make it.
    pub(super) fn shader_plan(
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
    pub(super) fn view(&self, m: &Memory, image: &Image, sub: u32) -> Option<vk::ImageView> {
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
    /// marks the resources used by the batch being recorded. `engine`: what the command needs
    /// ([`Engine::Copy`] for a transfer a copy engine takes, see [`Engine::for_image_copy`]).
    pub(super) fn record_transfer(
        &self,
        q: &mut Queue,
        engine: Engine,
        users: &[&Memory],
        staging: Option<vk::Buffer>,
        record: impl FnOnce(vk::CommandBuffer),
    ) -> Result<(), BackendError> {
        let cmd = self.recording_on(q, engine)?;
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
        self.transfer_barrier(cmd, &buffers, &images, q.on_lane);
        record(cmd);
        for m in users {
            m.last_use.store(q.next_value, Ordering::Release);
        }
        Ok(())
    }

    /// Records the copy of an upload's region, tightly packed at `at` in `buffer`, into the
    /// resource.
    #[allow(clippy::too_many_arguments)] // The destination and the staging side of one copy.
    pub(super) fn record_upload(
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
                self.record_copy(q, Engine::Copy, buffer, d.buffer, &regions, &[d])
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
                self.record_transfer(q, Engine::for_image_copy(at), &[d], Some(buffer), |cmd| {
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
    pub(super) fn record_copy(
        &self,
        q: &mut Queue,
        engine: Engine,
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
        self.record_transfer(q, engine, users, extra, |cmd| {
            // SAFETY: `cmd` is recording; both buffers are alive (their owners outlive the
            // batch: `free` waits for it, staging is freed after it) and the regions lie inside
            // them (trait contract).
            unsafe { self.device.cmd_copy_buffer(cmd, src, dst, regions) }
        })
    }
}

/// Copy regions, one per row, merging rows that are contiguous on both sides.
pub(super) fn row_copies(
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

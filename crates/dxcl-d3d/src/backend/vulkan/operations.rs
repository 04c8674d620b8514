//! The [`Backend`] trait on Vulkan: allocation, map, copies and updates, host memory, fences and
//! shared semaphores.

use super::*;

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
            // A buffer's fill is a transfer a copy engine takes (Vulkan 1.1 and later, which
            // setup requires), so creating a buffer and filling it with data stay on the lane; an
            // image's first layout and clear need the main queue.
            let engine = match m.image {
                Some(_) => Engine::Main,
                None => Engine::Copy,
            };
            self.recording_on(&mut q, engine).map(|cmd| {
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
                    self.record_copy(
                        &mut q,
                        Engine::Copy,
                        m.buffer,
                        staging.buffer,
                        &region,
                        &[&m],
                    )?;
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
            .record_copy(
                &mut q,
                Engine::Copy,
                staging.buffer,
                m.buffer,
                &region,
                &[&m],
            )
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
        // Device memory to device memory: a copy engine only while the copy is small.
        let moved = src_region.w as u64 * src_region.h as u64 * src_region.d as u64 * bytes as u64;
        let engine = Engine::for_device_copy(moved);
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
                self.record_copy(&mut q, engine, s.buffer, d.buffer, &regions, &[&s, &d])
            }
            (Some(di), Some(si)) => {
                let plan = self.shader_plan(
                    (&d, di, dst_subresource),
                    (&s, si, src_subresource, src_region),
                    bytes,
                );
                // A shader copy needs the main queue's family; vkCmdCopyImage a copy engine takes.
                let engine = if plan.is_some() { Engine::Main } else { engine };
                let on = &[&*s, &*d];
                let recorded = self.record_transfer(&mut q, engine, on, None, |cmd| match plan {
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
                let engine = engine.and(Engine::for_image_copy(off));
                self.record_transfer(&mut q, engine, &[&s, &d], None, |cmd| {
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
                let engine = engine.and(Engine::for_image_copy(off));
                self.record_transfer(&mut q, engine, &[&s, &d], None, |cmd| {
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
        !self.passed(target)
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
        !self.passed(target)
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

//! Host memory the caller owns, imported with `VK_EXT_external_memory_host`, so that the device
//! copies subresources straight into it and out of it (`read_to_host`, `write_from_host`).
//!
//! Why: the OpenCL layer's staging copy keeps its bytes in a host shadow that its platform copies
//! at the bus's speed (pinned memory). Through a Direct3D staging resource the bytes would cross
//! the bus into the runtime's own memory, then be copied on the CPU into the shadow. Imported,
//! the shadow is the device's copy destination itself, and the copy runs in pieces whose ends
//! the caller sees one by one, so the platform's copies of early pieces overlap the device's
//! copies of later ones.

use ash::vk;

use std::sync::Arc;

use super::{image, lock, row_copies, Dedicated, Engine, Memory, VulkanBackend};
use crate::backend::{Allocation, BackendError};
use crate::core::BlockRegion;

/// The extension's functions and the device's import alignment.
pub struct Importer {
    pub ext: ash::ext::external_memory_host::Device,
    /// `minImportedHostPointerAlignment`: an imported range starts and ends on a multiple of it.
    pub alignment: u64,
}

/// One registered range: a buffer over the imported pages that hold it.
pub struct HostMemory {
    buffer: vk::Buffer,
    memory: vk::DeviceMemory,
    /// Where the caller's first byte lies in the buffer (the import starts on an aligned page).
    offset: u64,
    len: usize,
    /// Timeline value of the last batch that touches it.
    last_use: u64,
}

/// A packed subresource's place in registered memory ([`VulkanBackend::target`]).
struct Target {
    /// The registered range's key (its start).
    key: usize,
    buffer: vk::Buffer,
    /// The subresource's first byte in `buffer`.
    at: u64,
    /// The whole subresource, and its packed row and slice in bytes.
    full: BlockRegion,
    row: u64,
    slice: u64,
    memory: Arc<Memory>,
}

const HOST_ALLOCATION: vk::ExternalMemoryHandleTypeFlags =
    vk::ExternalMemoryHandleTypeFlags::HOST_ALLOCATION_EXT;

/// The page size of this process: an import may widen a range to whole pages, never further.
fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as u64
    } else {
        4096
    }
}

/// Offset of `region`'s first block in a subresource packed tightly (`row` bytes a row, `slice`
/// bytes a slice, `texel` bytes a block).
fn packed_offset(region: &BlockRegion, row: u64, slice: u64, texel: u64) -> u64 {
    region.z as u64 * slice + region.y as u64 * row + region.x as u64 * texel
}

impl VulkanBackend {
    /// Imports `len` bytes at `host`: the aligned range around them, where the alignment is at
    /// most a page (a wider one would reach pages the caller may not own).
    pub(super) fn import_host(
        &self,
        host: *mut u8,
        len: usize,
    ) -> Result<HostMemory, BackendError> {
        let importer = self
            .host_import
            .as_ref()
            .ok_or(BackendError::NotSupported)?;
        let a = importer.alignment;
        let start = host as u64;
        if len == 0
            || a > page_size() && (!start.is_multiple_of(a) || !(len as u64).is_multiple_of(a))
        {
            return Err(BackendError::NotSupported);
        }
        let base = start - start % a;
        let end = (start + len as u64).div_ceil(a) * a;
        let size = end - base;
        let mut props = vk::MemoryHostPointerPropertiesEXT::default();
        // SAFETY: the device has the extension (an Importer exists only then); `base` is aligned
        // and lies in pages of the caller's memory (register_host's contract); `props` is a
        // valid out struct.
        let r = unsafe {
            (importer.ext.fp().get_memory_host_pointer_properties_ext)(
                self.device.handle(),
                HOST_ALLOCATION,
                base as *const std::ffi::c_void,
                &mut props,
            )
        };
        if r != vk::Result::SUCCESS || props.memory_type_bits == 0 {
            return Err(BackendError::NotSupported);
        }
        let mut external =
            vk::ExternalMemoryBufferCreateInfo::default().handle_types(HOST_ALLOCATION);
        let info = vk::BufferCreateInfo::default()
            .size(size)
            .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST)
            .sharing_mode(self.sharing_mode())
            .queue_family_indices(&self.families)
            .push_next(&mut external);
        // SAFETY: the device is alive; `info` and its chain outlive the call.
        let buffer = unsafe { self.device.create_buffer(&info, None) }
            .map_err(|_| BackendError::NotSupported)?;
        // SAFETY: `buffer` is this device's.
        let req = unsafe { self.device.get_buffer_memory_requirements(buffer) };
        let types = req.memory_type_bits & props.memory_type_bits;
        let chosen = (0..self.memory_props.memory_type_count).find(|&i| types & (1 << i) != 0);
        let made = chosen.ok_or(BackendError::NotSupported).and_then(|t| {
            let mut import = vk::ImportMemoryHostPointerInfoEXT::default()
                .handle_type(HOST_ALLOCATION)
                .host_pointer(base as *mut std::ffi::c_void);
            let alloc = vk::MemoryAllocateInfo::default()
                .allocation_size(size)
                .memory_type_index(t)
                .push_next(&mut import);
            // SAFETY: as above; the pointer and size are aligned and cover memory that stays
            // valid until unregister_host frees this allocation (register_host's contract).
            let memory = unsafe { self.device.allocate_memory(&alloc, None) }
                .map_err(|_| BackendError::NotSupported)?;
            self.bind_or_free(
                Dedicated::Buffer(buffer),
                memory,
                BackendError::NotSupported,
            )
        });
        match made {
            Ok(memory) => Ok(HostMemory {
                buffer,
                memory,
                offset: start - base,
                len,
                last_use: 0,
            }),
            Err(e) => {
                // SAFETY: unused and ours.
                unsafe { self.device.destroy_buffer(buffer, None) };
                Err(e)
            }
        }
    }

    /// Destroys an import once the device is done with it.
    pub(super) fn release_host(&self, h: HostMemory) {
        if h.last_use > 0 {
            // A lost device has nothing left running.
            let _ = self.wait_value(h.last_use);
        }
        // SAFETY: no batch uses the buffer any more (waited above); both are ours.
        unsafe {
            self.device.destroy_buffer(h.buffer, None);
            self.device.free_memory(h.memory, None);
        }
    }

    /// Where a subresource, packed, lies in registered memory at `host`: `None` when no
    /// registered range holds it all.
    fn target(
        &self,
        a: &Allocation,
        subresource: u32,
        host: *const u8,
    ) -> Result<Option<Target>, BackendError> {
        self.check_lost()?;
        let (full, row, slice) = a
            .layout
            .packed(subresource)
            .ok_or(BackendError::NotSupported)?;
        let (start, len) = (host as usize, (slice * full.d as u64) as usize);
        let found = lock(&self.hosts).iter().find_map(|(&key, h)| {
            (start >= key && start + len <= key + h.len)
                .then(|| (key, h.buffer, h.offset + (start - key) as u64))
        });
        let Some((key, buffer, at)) = found else {
            return Ok(None);
        };
        let memory = self.memory(a).ok_or(BackendError::NotSupported)?;
        Ok(Some(Target {
            key,
            buffer,
            at,
            full,
            row,
            slice,
            memory,
        }))
    }

    /// The batches up to `value` read or write the registered range `key`.
    fn mark_host_use(&self, key: usize, value: u64) {
        if let Some(h) = lock(&self.hosts).get_mut(&key) {
            h.last_use = h.last_use.max(value);
        }
    }

    /// `Backend::read_to_host` into registered memory: one submission per region (on the copy
    /// lane where there is one), then a wait for each in turn.
    ///
    /// # Safety
    /// As `Backend::read_to_host`.
    pub(super) unsafe fn read_registered(
        &self,
        src: &Allocation,
        subresource: u32,
        regions: &[BlockRegion],
        host: *mut u8,
        done: &mut dyn FnMut(usize),
    ) -> Result<(), BackendError> {
        let t = self
            .target(src, subresource, host)?
            .ok_or(BackendError::NotSupported)?;
        let m = &t.memory;
        let texel = src.layout.block.2 as u64;
        let ss = src.layout.subresources[subresource as usize];
        let mut values = Vec::with_capacity(regions.len());
        for r in regions {
            let dst = t.at + packed_offset(r, t.row, t.slice, texel);
            // A copy engine copies between an image and a buffer at offsets of 4 bytes.
            let fits_lane = m.image.is_none() || Engine::for_image_copy(dst) == Engine::Copy;
            let mut q = lock(&self.queue);
            let value = self.copy_batch(&mut q, fits_lane, |q| match &m.image {
                None => {
                    let copies = row_copies(
                        src.layout.region_offset(subresource, r),
                        (ss.row_pitch as u64, ss.depth_pitch as u64),
                        dst,
                        (t.row, t.slice),
                        r.w as u64 * texel,
                        r.h,
                        r.d,
                    );
                    self.record_copy(q, Engine::Copy, m.buffer, t.buffer, &copies, &[m])
                }
                Some(si) => {
                    let copy = image::buffer_image_copy(
                        si,
                        subresource,
                        r,
                        dst,
                        t.row,
                        t.slice,
                        texel as u32,
                    );
                    let engine = Engine::for_image_copy(dst);
                    self.record_transfer(q, engine, &[m], Some(t.buffer), |cmd| {
                        // SAFETY: `cmd` is recording; the image is alive and in GENERAL, the
                        // region lies in the subresource (trait contract) and its packed bytes
                        // inside the imported buffer (the registered range holds the whole
                        // packed subresource).
                        unsafe {
                            self.device.cmd_copy_image_to_buffer(
                                cmd,
                                si.raw,
                                vk::ImageLayout::GENERAL,
                                t.buffer,
                                &[copy],
                            )
                        }
                    })
                }
            })?;
            // Each piece is its own batch, so its end can be waited for alone.
            values.push(value.max(q.floor));
        }
        if let Some(&last) = values.last() {
            self.mark_host_use(t.key, last);
        }
        for (i, v) in values.into_iter().enumerate() {
            self.wait_value(v)?;
            done(i);
        }
        self.reclaim(&mut lock(&self.queue));
        Ok(())
    }

    /// `Backend::write_from_host` from registered memory: the device reads it directly, as an
    /// upload's band (on the copy lane where there is one); waits for the copy (the caller may
    /// reuse the memory at once).
    ///
    /// # Safety
    /// As `Backend::write_from_host`. Returns `Ok(false)` when `host` is not registered.
    pub(super) unsafe fn write_registered(
        &self,
        dst: &Allocation,
        subresource: u32,
        host: *const u8,
    ) -> Result<bool, BackendError> {
        let Some(t) = self.target(dst, subresource, host)? else {
            return Ok(false);
        };
        let value = {
            let mut q = lock(&self.queue);
            // The registered range holds the subresource tightly packed from `at`, as an upload
            // band does.
            let fits_lane =
                t.memory.image.is_none() || Engine::for_image_copy(t.at) == Engine::Copy;
            let value = self.copy_batch(&mut q, fits_lane, |q| {
                self.record_upload(q, &t.memory, dst, subresource, &t.full, t.buffer, t.at)
            })?;
            value.max(q.floor)
        };
        self.mark_host_use(t.key, value);
        self.wait_value(value)?;
        self.reclaim(&mut lock(&self.queue));
        Ok(true)
    }

    /// Every import left (the device is idle): destroyed with the backend.
    pub(super) fn drop_hosts(&self) {
        let hosts: Vec<HostMemory> = lock(&self.hosts).drain().map(|(_, h)| h).collect();
        for h in hosts {
            // The device is idle (Drop waited): no wait is left.
            self.release_host(h);
        }
    }
}

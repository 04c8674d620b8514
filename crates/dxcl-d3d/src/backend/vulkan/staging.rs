//! Host-visible memory for moving bytes between the CPU and resources, reused instead of
//! allocated per call.
//!
//! - The upload ring: one mapped buffer that `UpdateSubresource` and initial data copy into.
//!   Each upload takes the next band of the ring; the band is given back once the timeline passes
//!   the batch whose copy reads it. Bands are handed out and given back in order (batches
//!   complete in submission order), so the free space is always one or two contiguous ranges.
//! - Spare buffers: the staging buffers of maps that cannot go straight to the memory, kept once
//!   their batch completed, for the next map of a similar size.

use std::collections::VecDeque;

use ash::vk;

use super::*;

/// A mapped host-visible buffer.
pub struct Staging {
    pub buffer: vk::Buffer,
    pub memory: vk::DeviceMemory,
    pub ptr: *mut u8,
    /// Bytes the buffer holds.
    pub size: u64,
}

// SAFETY: the mapping belongs to this object alone; whoever holds it is the only user of `ptr`.
unsafe impl Send for Staging {}

/// The smallest upload ring (bytes).
pub const RING_MIN: u64 = 16 << 20;
/// The largest upload ring: an upload of more than half of it takes a buffer of its own.
pub const RING_MAX: u64 = 256 << 20;
/// Every upload starts at a multiple of this (and of its texel size): a copy's buffer offset must
/// be a multiple of the texel size and of 4, and devices copy fastest from aligned offsets.
pub const UPLOAD_ALIGNMENT: u64 = 256;
/// Spare map buffers kept, in bytes at most.
pub const SPARE_MAX: u64 = 64 << 20;

/// Pieces a large upload is submitted in (bytes), unless `DXCL_UPLOAD_PIECE` says otherwise.
pub const UPLOAD_PIECE: u64 = 4 << 20;

/// The piece size of large uploads: `DXCL_UPLOAD_PIECE` (bytes; 0 submits each upload whole),
/// else [`UPLOAD_PIECE`]. Read once per process.
pub fn upload_piece_bytes() -> u64 {
    static PIECE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *PIECE.get_or_init(|| {
        std::env::var("DXCL_UPLOAD_PIECE")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(UPLOAD_PIECE)
    })
}

/// Which host-visible memory uploads are written into (`DXCL_UPLOAD_MEMORY`): device-local memory
/// the CPU can write (a BAR; the default: the device's copy out of it stays in its own memory,
/// which took the frame pipeline on an H100 from 0.70-0.72x to 0.90x OpenCL alone's frame rate,
/// docs/benchmarks.md), system memory the CPU caches (as read-backs use), or system memory it
/// does not (write-combined on most GPUs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UploadMemory {
    Cached,
    Uncached,
    Device,
}

/// `DXCL_UPLOAD_MEMORY=device|cached|uncached`, else [`UploadMemory::Device`]. Read once.
pub fn upload_memory() -> UploadMemory {
    static MEMORY: std::sync::OnceLock<UploadMemory> = std::sync::OnceLock::new();
    *MEMORY.get_or_init(|| match std::env::var("DXCL_UPLOAD_MEMORY").as_deref() {
        Ok("uncached") => UploadMemory::Uncached,
        Ok("cached") => UploadMemory::Cached,
        _ => UploadMemory::Device,
    })
}

/// The ring size for an upload of `size` bytes: room for two of them in flight (one being read by
/// the device while the next is written), a power of two, at least [`RING_MIN`]. `None` when that
/// exceeds [`RING_MAX`].
pub fn ring_capacity(size: u64) -> Option<u64> {
    let cap = size
        .checked_mul(2)?
        .max(RING_MIN)
        .checked_next_power_of_two()?;
    (cap <= RING_MAX).then_some(cap)
}

/// The offset alignment of an upload of `texel` bytes per block: a multiple of both.
pub fn upload_alignment(texel: u64) -> u64 {
    let (mut a, mut b) = (UPLOAD_ALIGNMENT, texel.max(1));
    while b != 0 {
        (a, b) = (b, a % b);
    }
    UPLOAD_ALIGNMENT / a * texel.max(1)
}

/// One reserved range of the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Band {
    start: u64,
    end: u64,
    /// The timeline value of the batch that reads it; `None` while the CPU is still filling it.
    value: Option<u64>,
}

/// Offsets in a ring of `cap` bytes, reserved in order and given back in order.
#[derive(Debug)]
pub struct RingAlloc {
    cap: u64,
    bands: VecDeque<Band>,
}

impl RingAlloc {
    pub fn new(cap: u64) -> RingAlloc {
        RingAlloc {
            cap,
            bands: VecDeque::new(),
        }
    }

    pub fn capacity(&self) -> u64 {
        self.cap
    }

    /// Reserves `size` bytes at a multiple of `align`; `None` when they do not fit until older
    /// bands are given back. The band stays reserved until [`RingAlloc::commit`] and the
    /// timeline passing the committed value.
    pub fn reserve(&mut self, size: u64, align: u64) -> Option<u64> {
        let size = size.max(1);
        let align = align.max(1);
        let start = match (self.bands.front(), self.bands.back()) {
            (Some(first), Some(last)) => {
                let (first, head) = (first.start, last.end);
                let at = head.div_ceil(align) * align;
                if head > first {
                    // In use: [first, head). Free: [head, cap), then [0, first).
                    if at.checked_add(size)? <= self.cap {
                        at
                    } else if size <= first {
                        0
                    } else {
                        return None;
                    }
                } else {
                    // Wrapped: in use [first, cap) and [0, head). Free: [head, first).
                    if at.checked_add(size)? <= first {
                        at
                    } else {
                        return None;
                    }
                }
            }
            _ if size <= self.cap => 0,
            _ => return None,
        };
        self.bands.push_back(Band {
            start,
            end: start + size,
            value: None,
        });
        Some(start)
    }

    /// The band at `start` is filled and read by the batch with timeline value `value`.
    pub fn commit(&mut self, start: u64, value: u64) {
        if let Some(b) = self
            .bands
            .iter_mut()
            .rev()
            .find(|b| b.start == start && b.value.is_none())
        {
            b.value = Some(value);
        }
    }

    /// Gives back the oldest bands whose batches completed (timeline at `done`).
    pub fn retire(&mut self, done: u64) {
        while self
            .bands
            .front()
            .is_some_and(|b| b.value.is_some_and(|v| v <= done))
        {
            self.bands.pop_front();
        }
    }

    /// The timeline value the oldest band waits for: `Some(None)` when it is still being filled
    /// (by another thread), `None` when the ring is empty.
    pub fn oldest(&self) -> Option<Option<u64>> {
        self.bands.front().map(|b| b.value)
    }

    /// The largest committed value, when no band is being filled (the ring can then be retired
    /// once the timeline reaches it); `None` while some band is being filled.
    pub fn last_value(&self) -> Option<u64> {
        self.bands
            .iter()
            .try_fold(0, |m, b| b.value.map(|v| m.max(v)))
    }
}

/// The upload ring: its buffer and which bands of it are in use.
pub struct UploadRing {
    pub staging: Staging,
    pub alloc: RingAlloc,
}

/// Spare staging buffers whose batches completed.
#[derive(Default)]
pub struct SparePool {
    buffers: Vec<Staging>,
    bytes: u64,
}

impl SparePool {
    /// The smallest spare holding `size` bytes and at most twice that (or 64 KiB for small ones).
    pub fn take(&mut self, size: u64) -> Option<Staging> {
        let limit = size.saturating_mul(2).max(64 << 10);
        let i = self
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, s)| s.size >= size && s.size <= limit)
            .min_by_key(|(_, s)| s.size)
            .map(|(i, _)| i)?;
        let s = self.buffers.swap_remove(i);
        self.bytes -= s.size;
        Some(s)
    }

    /// Keeps `s` when the pool has room; gives it back otherwise (for the caller to destroy).
    pub fn keep(&mut self, s: Staging) -> Option<Staging> {
        if self.bytes + s.size > SPARE_MAX {
            return Some(s);
        }
        self.bytes += s.size;
        self.buffers.push(s);
        None
    }

    pub fn drain(&mut self) -> Vec<Staging> {
        self.bytes = 0;
        std::mem::take(&mut self.buffers)
    }
}

impl VulkanBackend {
    /// A host-visible staging buffer of `size` bytes, mapped, in memory the CPU caches.
    pub(super) fn staging(&self, size: u64) -> Result<Staging, BackendError> {
        self.staging_in(size, UploadMemory::Cached)
    }

    /// A staging buffer for uploads, in the memory `DXCL_UPLOAD_MEMORY` names.
    pub(super) fn upload_staging(&self, size: u64) -> Result<Staging, BackendError> {
        self.staging_in(size, staging::upload_memory())
    }

    /// A host-visible staging buffer of `size` bytes, mapped, in memory of the kind `memory`
    /// (falling back to any host-visible coherent memory).
    pub(super) fn staging_in(
        &self,
        size: u64,
        memory: UploadMemory,
    ) -> Result<Staging, BackendError> {
        let info = vk::BufferCreateInfo::default()
            .size(size.max(4))
            .usage(vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST)
            // Copies on the queue and on the copy lane read and write it.
            .sharing_mode(self.sharing_mode())
            .queue_family_indices(&self.families);
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
            UploadMemory::Cached => None,
            UploadMemory::Uncached => uncached().map(|i| i as u32),
            UploadMemory::Device => memory_type(
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

    pub(super) fn destroy_staging(&self, s: Staging) {
        // SAFETY: no pending GPU work uses it (callers free staging only after its batch
        // completed or when no batch used it); freeing the memory unmaps it.
        unsafe {
            self.device.destroy_buffer(s.buffer, None);
            self.device.free_memory(s.memory, None);
        }
    }

    /// A staging buffer of at least `size` bytes for a map: a spare one when there is one.
    pub(super) fn take_staging(&self, size: u64) -> Result<Staging, BackendError> {
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
    pub(super) fn reserve_upload(&self, size: u64, align: u64) -> Result<Upload, BackendError> {
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
                        alloc: RingAlloc::new(cap),
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
}

/// Where an upload's bytes are staged.
pub(super) enum Upload {
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
    pub(super) fn parts(&self) -> (vk::Buffer, *mut u8, u64) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_and_alignment() {
        assert_eq!(ring_capacity(1), Some(RING_MIN));
        // A 3840x2160 RGBA8 frame: 31.6 MiB, two of them in 64 MiB.
        assert_eq!(ring_capacity(3840 * 2160 * 4), Some(64 << 20));
        assert_eq!(ring_capacity(RING_MAX / 2), Some(RING_MAX));
        assert_eq!(ring_capacity(RING_MAX / 2 + 1), None);
        assert_eq!(ring_capacity(u64::MAX), None);
        assert_eq!(upload_alignment(4), 256);
        assert_eq!(upload_alignment(16), 256);
        assert_eq!(upload_alignment(12), 768);
        assert_eq!(upload_alignment(0), 256);
    }

    #[test]
    fn bands_wrap_and_come_back_in_order() {
        let mut r = RingAlloc::new(1000);
        assert_eq!(r.reserve(300, 100), Some(0));
        assert_eq!(r.reserve(250, 100), Some(300));
        assert_eq!(r.reserve(300, 100), Some(600));
        // [0, 900) in use: 100 bytes at the end, nothing at the start.
        assert_eq!(r.reserve(150, 100), None);
        r.commit(0, 1);
        r.commit(300, 2);
        r.commit(600, 3);
        // Filled but not passed by the device: still in use.
        r.retire(0);
        assert_eq!(r.reserve(150, 100), None);
        r.retire(1);
        // [0, 300) is free again; the tail [900, 1000) is too small, so it wraps.
        assert_eq!(r.reserve(150, 100), Some(0));
        // Wrapped: free is [150, 300) only, aligned to 200.
        assert_eq!(r.reserve(100, 100), Some(200));
        assert_eq!(r.reserve(1, 1), None);
        r.commit(0, 4);
        r.commit(200, 4);
        assert_eq!(r.oldest(), Some(Some(2)));
        assert_eq!(r.last_value(), Some(4));
        r.retire(3);
        // Only the wrapped bands [0, 300) are in use: the rest is free.
        assert_eq!(r.reserve(700, 1), Some(300));
        assert_eq!(r.last_value(), None);
        r.commit(300, 5);
        r.retire(5);
        assert_eq!(r.oldest(), None);
        assert_eq!(r.reserve(1000, 256), Some(0));
        assert_eq!(r.reserve(1001, 1), None);
    }

    #[test]
    fn a_band_being_filled_holds_back_later_ones() {
        let mut r = RingAlloc::new(100);
        assert_eq!(r.reserve(40, 1), Some(0));
        assert_eq!(r.reserve(40, 1), Some(40));
        r.commit(40, 1);
        // The first band has no value yet: nothing is given back, whatever the timeline says.
        r.retire(u64::MAX);
        assert_eq!(r.oldest(), Some(None));
        assert_eq!(r.last_value(), None);
        r.commit(0, 2);
        r.retire(2);
        assert_eq!(r.oldest(), None);
    }

    #[test]
    fn oversized_never_fits() {
        let mut r = RingAlloc::new(100);
        assert_eq!(r.reserve(101, 1), None);
        assert_eq!(r.reserve(u64::MAX, 1), None);
        assert_eq!(r.reserve(60, 1), Some(0));
        assert_eq!(r.reserve(u64::MAX - 10, 1), None);
    }
}

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

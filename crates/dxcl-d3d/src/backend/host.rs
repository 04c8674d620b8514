//! The host backend: every resource in one page-aligned, zero-filled anonymous mapping; every
//! operation runs at once on the calling thread, so fences are complete when they are signalled.

use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{
    AdapterDesc, Allocation, Backend, BackendError, BackendKind, Fence, MapAccess, MemoryKind,
};
use crate::core::{BlockRegion, LayoutRules, ResourceDesc, ResourceLayout};

/// The software adapter. Its LUID is stable for the process and distinct from any zero LUID.
pub struct HostBackend {
    adapter: AdapterDesc,
    fences: AtomicU64,
}

/// `LUID.LowPart` of the software adapter: "dxcl" in ASCII, so it is recognisable in dumps.
pub use dxcl_abi::SOFTWARE_LUID_LOW;

impl HostBackend {
    pub fn new() -> Self {
        let system = system_memory();
        HostBackend {
            adapter: AdapterDesc {
                backend: BackendKind::Host,
                description: "dxcl software adapter".to_owned(),
                // Microsoft's software adapter (WARP / Basic Render Driver) reports 0x1414:0x8c.
                vendor_id: 0x1414,
                device_id: 0x8c,
                sub_sys_id: 0,
                revision: 0,
                dedicated_video_memory: 0,
                dedicated_system_memory: 0,
                shared_system_memory: system / 2,
                luid: (SOFTWARE_LUID_LOW, 0),
                uuid: [0; 16],
                software: true,
            },
            fences: AtomicU64::new(0),
        }
    }
}

impl Default for HostBackend {
    fn default() -> Self {
        Self::new()
    }
}

fn system_memory() -> u64 {
    // SAFETY: sysconf only reads configuration values.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    if pages > 0 && page > 0 {
        pages as u64 * page as u64
    } else {
        0
    }
}

/// Byte offset of a region's first block in the allocation.
fn region_ptr(a: &Allocation, sub: u32, r: &BlockRegion) -> *mut u8 {
    // In bounds by the trait's contract (the region lies within the subresource), so the offset
    // is below `a.size`; `wrapping_add` keeps this function itself free of UB.
    a.host.wrapping_add(a.layout.region_offset(sub, r) as usize)
}

// SAFETY: allocations are fresh anonymous mappings (page-aligned, zero-filled, at least
// `layout.size` bytes, valid until munmap in `free`); map returns an in-bounds pointer; copies stay
// within the regions the caller guarantees.
unsafe impl Backend for HostBackend {
    fn adapter(&self) -> &AdapterDesc {
        &self.adapter
    }

    fn layout_rules(&self) -> LayoutRules {
        LayoutRules::HOST
    }

    fn allocate(
        &self,
        _desc: &ResourceDesc,
        layout: &ResourceLayout,
    ) -> Result<Allocation, BackendError> {
        let size = usize::try_from(layout.size).map_err(|_| BackendError::OutOfMemory)?;
        // SAFETY: an anonymous private mapping touches no existing memory; the result is checked.
        let host = unsafe {
            libc::mmap(
                ptr::null_mut(),
                size,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if host == libc::MAP_FAILED {
            return Err(BackendError::OutOfMemory);
        }
        Ok(Allocation {
            kind: MemoryKind::Host,
            host: host.cast(),
            size: layout.size,
            layout: layout.clone(),
            handle: 0,
        })
    }

    unsafe fn free(&self, allocation: &mut Allocation) {
        if allocation.host.is_null() {
            return;
        }
        // SAFETY: `host`/`size` are the mapping made in `allocate` (trait contract), unmapped once:
        // the pointer is cleared right after.
        unsafe { libc::munmap(allocation.host.cast(), allocation.size as usize) };
        allocation.host = ptr::null_mut();
    }

    unsafe fn map(
        &self,
        allocation: &Allocation,
        subresource: u32,
        _access: MapAccess,
    ) -> Result<*mut u8, BackendError> {
        let offset = allocation.layout.subresources[subresource as usize].offset;
        Ok(allocation.host.wrapping_add(offset as usize))
    }

    unsafe fn unmap(&self, _allocation: &Allocation, _subresource: u32) {}

    unsafe fn copy_region(
        &self,
        dst: &Allocation,
        dst_subresource: u32,
        dst_region: &BlockRegion,
        src: &Allocation,
        src_subresource: u32,
        src_region: &BlockRegion,
    ) {
        let ds = &dst.layout.subresources[dst_subresource as usize];
        let ss = &src.layout.subresources[src_subresource as usize];
        let row_bytes = src_region.w as usize * src.layout.block.2 as usize;
        let d0 = region_ptr(dst, dst_subresource, dst_region);
        let s0 = region_ptr(src, src_subresource, src_region) as *const u8;
        for z in 0..src_region.d as usize {
            for y in 0..src_region.h as usize {
                let d = d0.wrapping_add(z * ds.depth_pitch as usize + y * ds.row_pitch as usize);
                let s = s0.wrapping_add(z * ss.depth_pitch as usize + y * ss.row_pitch as usize);
                // SAFETY: both rows lie within their allocations (trait contract: the regions lie
                // within their subresources); `copy` tolerates overlap within one allocation.
                unsafe { ptr::copy(s, d, row_bytes) };
            }
        }
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
        let ds = &dst.layout.subresources[subresource as usize];
        let row_bytes = region.w as usize * dst.layout.block.2 as usize;
        let d0 = region_ptr(dst, subresource, region);
        for z in 0..region.d as usize {
            for y in 0..region.h as usize {
                let d = d0.wrapping_add(z * ds.depth_pitch as usize + y * ds.row_pitch as usize);
                let s = data.wrapping_add(z * depth_pitch + y * row_pitch);
                // SAFETY: the destination row lies in the allocation and the source row is readable
                // (trait contract); application memory never aliases our mapping.
                unsafe { ptr::copy(s, d, row_bytes) };
            }
        }
    }

    unsafe fn register_host(&self, _host: *mut u8, _len: usize) -> Result<bool, BackendError> {
        // Every copy runs on the CPU, which reaches any host memory.
        Ok(false)
    }

    unsafe fn read_to_host(
        &self,
        src: &Allocation,
        subresource: u32,
        regions: &[BlockRegion],
        host: *mut u8,
        done: &mut dyn FnMut(usize),
    ) -> Result<(), BackendError> {
        let (_, row, slice) = src
            .layout
            .packed(subresource)
            .ok_or(BackendError::NotSupported)?;
        let (row, slice) = (row as usize, slice as usize);
        let ss = &src.layout.subresources[subresource as usize];
        let texel = src.layout.block.2 as usize;
        for (i, r) in regions.iter().enumerate() {
            let s0 = region_ptr(src, subresource, r) as *const u8;
            for z in 0..r.d as usize {
                for y in 0..r.h as usize {
                    let s =
                        s0.wrapping_add(z * ss.depth_pitch as usize + y * ss.row_pitch as usize);
                    let at = (r.z as usize + z) * slice
                        + (r.y as usize + y) * row
                        + r.x as usize * texel;
                    // SAFETY: the source row lies in the subresource (trait contract: the regions
                    // lie within it) and the packed row inside `host` (caller's contract), which
                    // never aliases our allocations.
                    unsafe { ptr::copy_nonoverlapping(s, host.add(at), r.w as usize * texel) };
                }
            }
            done(i);
        }
        Ok(())
    }

    fn signal(&self) -> Fence {
        // Every operation already ran: the new fence is complete as soon as it exists.
        self.fences.fetch_add(1, Ordering::AcqRel) + 1
    }

    fn is_complete(&self, fence: Fence) -> bool {
        fence <= self.fences.load(Ordering::Acquire)
    }

    fn wait(&self, _fence: Fence) {}

    fn flush(&self) {}

    fn is_busy(&self, _allocation: &Allocation) -> bool {
        false
    }

    unsafe fn export_fd(&self, _allocation: &Allocation) -> Result<i32, BackendError> {
        // Host memory has no fd; the interop interface reports E_NOTIMPL for HOST memory.
        Err(BackendError::NotSupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::flags::*;
    use crate::core::{Dimension, TexelBox};

    fn tex2d(w: u32, h: u32) -> (ResourceDesc, ResourceLayout) {
        let d = ResourceDesc {
            dimension: Dimension::Texture2D,
            width: w,
            height: h,
            depth: 1,
            array_size: 1,
            mip_levels: 1,
            format: 28,
            sample_count: 1,
            sample_quality: 0,
            usage: USAGE_DEFAULT,
            bind: 0,
            cpu_access: 0,
            misc: 0,
            structure_stride: 0,
        }
        .validate(false)
        .unwrap();
        let l = ResourceLayout::new(&d, &LayoutRules::HOST).unwrap();
        (d, l)
    }

    const RW: MapAccess = MapAccess {
        read: true,
        write: true,
    };

    #[test]
    fn allocate_write_copy_map() {
        let b = HostBackend::new();
        assert_eq!(b.adapter().vendor_id, 0x1414);
        let (d, l) = tex2d(4, 4);
        let mut a = b.allocate(&d, &l).unwrap();
        let mut c = b.allocate(&d, &l).unwrap();
        assert_eq!(a.host as usize % 4096, 0);
        let data: Vec<u8> = (0..64).collect();
        let full = l.full_region(0).unwrap();
        // SAFETY: both allocations come from `b`, regions come from the layout, data has 4 rows of 16.
        unsafe {
            let p = b.map(&a, 0, RW).unwrap();
            assert_eq!(*p, 0);
            b.write_region(&a, 0, &full, data.as_ptr(), 16, 64);
            let bx = TexelBox {
                left: 1,
                top: 1,
                front: 0,
                right: 3,
                bottom: 3,
                back: 1,
            };
            let src = l.box_region(0, &bx).unwrap();
            let dst = l.place_region(0, 0, 0, 0, &src).unwrap();
            b.copy_region(&c, 0, &dst, &a, 0, &src);
            let q = b.map(&c, 0, RW).unwrap();
            let row_pitch = l.subresources[0].row_pitch as usize;
            assert_eq!(std::slice::from_raw_parts(q, 8), &data[20..28]);
            assert_eq!(
                std::slice::from_raw_parts(q.add(row_pitch), 8),
                &data[36..44]
            );
            assert_eq!(*q.add(8), 0);
            b.free(&mut a);
            b.free(&mut c);
        }
        let f = b.signal();
        assert!(b.is_complete(f));
    }
}

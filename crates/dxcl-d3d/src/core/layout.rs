//! Where each subresource lives in a resource's memory.
//!
//! Every backend keeps resources in this linear layout and the interop interface reports it, so
//! it is chosen for sharing; only the alignments ([`LayoutRules`]) differ between backends:
//! - rows start every `RowPitch` bytes, the row size rounded up to a multiple of the backend's row
//!   alignment and of a whole number of blocks (OpenCL requires an image row pitch that is a
//!   multiple of the element size);
//! - slices follow each other every `DepthPitch = RowPitch * rows` bytes (rows of blocks);
//! - each subresource starts on the backend's subresource alignment, in subresource-index order,
//!   so each one can be handed to OpenCL on its own (a page-aligned host pointer, or an image
//!   created from an imported buffer at that offset);
//! - buffers are one subresource: `RowPitch = DepthPitch = ByteWidth`.

use super::desc::{DescError, ResourceDesc, MAX_RESOURCE_BYTES};
use super::format::Dimension;

/// The alignments a backend lays resources out with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LayoutRules {
    /// Every row pitch is a multiple of this many bytes ...
    pub row_alignment: u32,
    /// ... and of this many blocks (elements), times the bytes per block.
    pub row_alignment_blocks: u32,
    /// Alignment of every subresource's offset and of the allocation's size.
    pub subresource_alignment: u64,
}

/// Host backend: rows aligned to 16 bytes, subresources on pages (each one a valid
/// `CL_MEM_USE_HOST_PTR` pointer).
pub const HOST_ROW_ALIGNMENT: u32 = 16;
pub const HOST_ROW_ALIGNMENT_BLOCKS: u32 = 1;
pub const HOST_SUBRESOURCE_ALIGNMENT: u64 = 4096;

/// Vulkan backend: another API imports the whole allocation as a buffer and views 2D
/// subresources as images made from that buffer, so rows and subresource offsets meet the image
/// pitch and base-address alignments GPU OpenCL drivers ask for (`CL_DEVICE_IMAGE_PITCH_ALIGNMENT`
/// in pixels, `CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT`), with margin. Tuned against the drivers
/// dxcl runs on; raising them only costs padding.
pub const VULKAN_ROW_ALIGNMENT: u32 = 256;
pub const VULKAN_ROW_ALIGNMENT_BLOCKS: u32 = 64;
pub const VULKAN_SUBRESOURCE_ALIGNMENT: u64 = 65536;

impl LayoutRules {
    pub const HOST: LayoutRules = LayoutRules {
        row_alignment: HOST_ROW_ALIGNMENT,
        row_alignment_blocks: HOST_ROW_ALIGNMENT_BLOCKS,
        subresource_alignment: HOST_SUBRESOURCE_ALIGNMENT,
    };
    pub const VULKAN: LayoutRules = LayoutRules {
        row_alignment: VULKAN_ROW_ALIGNMENT,
        row_alignment_blocks: VULKAN_ROW_ALIGNMENT_BLOCKS,
        subresource_alignment: VULKAN_SUBRESOURCE_ALIGNMENT,
    };

    /// The row pitch alignment for blocks of `bytes` bytes.
    pub fn row_alignment_for(&self, bytes: u32) -> u64 {
        lcm(self.row_alignment, self.row_alignment_blocks * bytes) as u64
    }
}

/// One subresource: the numbers `IDxclInteropResource::GetSubresourceLayout` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SubresourceLayout {
    pub offset: u64,
    pub size: u64,
    pub row_pitch: u32,
    pub depth_pitch: u32,
    /// Texels of this mip level (buffers: ByteWidth, 1, 1).
    pub width: u32,
    pub height: u32,
    pub depth: u32,
}

/// The layout of a whole resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceLayout {
    pub subresources: Vec<SubresourceLayout>,
    /// Bytes of the allocation (a multiple of the rules' subresource alignment).
    pub size: u64,
    /// Texels per block horizontally and vertically, bytes per block (1, 1, 1 for buffers).
    pub block: (u32, u32, u32),
}

/// A region of a subresource in whole blocks: `x`/`w` in blocks, `y`/`h` in rows of blocks,
/// `z`/`d` in slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRegion {
    pub x: u32,
    pub y: u32,
    pub z: u32,
    pub w: u32,
    pub h: u32,
    pub d: u32,
}

/// A texel box (`D3D11_BOX`): half-open ranges `[left, right)`, `[top, bottom)`, `[front, back)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TexelBox {
    pub left: u32,
    pub top: u32,
    pub front: u32,
    pub right: u32,
    pub bottom: u32,
    pub back: u32,
}

fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

fn lcm(a: u32, b: u32) -> u32 {
    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

impl ResourceLayout {
    /// Lays out a validated description. Fails with `Invalid` when the resource would exceed the
    /// Direct3D 11 size limit of 2048 MiB (`D3D11_REQ_RESOURCE_SIZE_IN_MEGABYTES_EXPRESSION_C_TERM`).
    pub fn new(desc: &ResourceDesc, rules: &LayoutRules) -> Result<ResourceLayout, DescError> {
        let sub_align = rules.subresource_alignment;
        if desc.dimension == Dimension::Buffer {
            let w = desc.width;
            let sub = SubresourceLayout {
                offset: 0,
                size: w as u64,
                row_pitch: w,
                depth_pitch: w,
                width: w,
                height: 1,
                depth: 1,
            };
            return Ok(ResourceLayout {
                subresources: vec![sub],
                size: align_up(w as u64, sub_align).max(sub_align),
                block: (1, 1, 1),
            });
        }
        let fmt = desc
            .format_info()
            .ok_or(DescError::Invalid("texture without a format"))?;
        let (bw, bh, bytes) = fmt
            .blocks()
            .ok_or(DescError::Invalid("format has no storage"))?;
        let row_align = rules.row_alignment_for(bytes);
        let mut subresources = Vec::with_capacity(desc.subresource_count() as usize);
        let mut offset = 0u64;
        for _slice in 0..desc.array_size {
            for mip in 0..desc.mip_levels {
                let (w, h, d) = desc.mip_extent(mip);
                let row_pitch = align_up(w.div_ceil(bw) as u64 * bytes as u64, row_align);
                let depth_pitch = row_pitch * h.div_ceil(bh) as u64;
                let size = depth_pitch * d as u64;
                if offset + size > MAX_RESOURCE_BYTES {
                    // No resource is larger than 2048 MiB in Direct3D 11.
                    return Err(DescError::Invalid(
                        "resource larger than the resource size limit",
                    ));
                }
                subresources.push(SubresourceLayout {
                    offset,
                    size,
                    // Both fit: the whole resource is below 2^31 bytes.
                    row_pitch: row_pitch as u32,
                    depth_pitch: depth_pitch as u32,
                    width: w,
                    height: h,
                    depth: d,
                });
                offset = align_up(offset + size, sub_align);
            }
        }
        Ok(ResourceLayout {
            subresources,
            size: offset.max(sub_align),
            block: (bw, bh, bytes),
        })
    }

    pub fn subresource(&self, index: u32) -> Option<&SubresourceLayout> {
        self.subresources.get(index as usize)
    }

    /// The whole subresource as a block region.
    pub fn full_region(&self, index: u32) -> Option<BlockRegion> {
        let s = self.subresource(index)?;
        let (bw, bh, _) = self.block;
        Some(BlockRegion {
            x: 0,
            y: 0,
            z: 0,
            w: s.width.div_ceil(bw),
            h: s.height.div_ceil(bh),
            d: s.depth,
        })
    }

    /// A subresource tightly packed, as host copies hold it (rows of its blocks, slices of its
    /// rows): its whole region, and the bytes of a packed row and slice.
    pub fn packed(&self, index: u32) -> Option<(BlockRegion, u64, u64)> {
        let full = self.full_region(index)?;
        let row = full.w as u64 * self.block.2 as u64;
        Some((full, row, row * full.h as u64))
    }

    /// Converts a texel box on a subresource into blocks. `None` when the box is empty, lies
    /// outside the subresource, or cuts through compression blocks (Direct3D ignores such boxes:
    /// "if the box is empty or invalid, the call does nothing").
    pub fn box_region(&self, index: u32, b: &TexelBox) -> Option<BlockRegion> {
        let s = self.subresource(index)?;
        let (bw, bh, _) = self.block;
        if b.left >= b.right || b.top >= b.bottom || b.front >= b.back {
            return None;
        }
        if b.right > s.width || b.bottom > s.height || b.back > s.depth {
            return None;
        }
        // Block-compressed boxes start on a block and end on a block or at the mip's edge.
        let edge_ok = |end: u32, size: u32, block: u32| end.is_multiple_of(block) || end == size;
        if !b.left.is_multiple_of(bw)
            || !b.top.is_multiple_of(bh)
            || !edge_ok(b.right, s.width, bw)
            || !edge_ok(b.bottom, s.height, bh)
        {
            return None;
        }
        Some(BlockRegion {
            x: b.left / bw,
            y: b.top / bh,
            z: b.front,
            w: (b.right - b.left).div_ceil(bw),
            h: (b.bottom - b.top).div_ceil(bh),
            d: b.back - b.front,
        })
    }

    /// Moves a region to a destination origin given in texels, checking that it fits in the
    /// destination subresource and starts on a block. `None` when it does not.
    pub fn place_region(
        &self,
        index: u32,
        x: u32,
        y: u32,
        z: u32,
        r: &BlockRegion,
    ) -> Option<BlockRegion> {
        let s = self.subresource(index)?;
        let (bw, bh, _) = self.block;
        if !x.is_multiple_of(bw) || !y.is_multiple_of(bh) {
            return None;
        }
        let placed = BlockRegion {
            x: x / bw,
            y: y / bh,
            z,
            ..*r
        };
        let fits =
            |start: u32, len: u32, limit: u32| start.checked_add(len).is_some_and(|e| e <= limit);
        let ok = fits(placed.x, r.w, s.width.div_ceil(bw))
            && fits(placed.y, r.h, s.height.div_ceil(bh))
            && fits(placed.z, r.d, s.depth);
        ok.then_some(placed)
    }

    /// Byte offset of a region's first block from the start of the allocation.
    pub fn region_offset(&self, index: u32, r: &BlockRegion) -> u64 {
        let s = &self.subresources[index as usize];
        s.offset
            + r.z as u64 * s.depth_pitch as u64
            + r.y as u64 * s.row_pitch as u64
            + r.x as u64 * self.block.2 as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::flags::*;

    fn tex(
        dim: Dimension,
        w: u32,
        h: u32,
        d: u32,
        mips: u32,
        array: u32,
        format: u32,
    ) -> ResourceDesc {
        ResourceDesc {
            dimension: dim,
            width: w,
            height: h,
            depth: d,
            array_size: array,
            mip_levels: mips,
            format,
            sample_count: 1,
            sample_quality: 0,
            usage: USAGE_DEFAULT,
            bind: BIND_SHADER_RESOURCE,
            cpu_access: 0,
            misc: 0,
            structure_stride: 0,
        }
        .validate(false)
        .unwrap()
    }

    #[test]
    fn buffer_layout() {
        let d = ResourceDesc::buffer(100, USAGE_DEFAULT, 0, 0, 0, 0)
            .validate(false)
            .unwrap();
        let l = ResourceLayout::new(&d, &LayoutRules::HOST).unwrap();
        assert_eq!(l.subresources.len(), 1);
        assert_eq!(l.subresources[0].row_pitch, 100);
        assert_eq!(l.subresources[0].size, 100);
        assert_eq!(l.size, 4096);
    }

    #[test]
    fn texture2d_array_layout() {
        let d = tex(Dimension::Texture2D, 5, 3, 1, 0, 2, 28);
        let l = ResourceLayout::new(&d, &LayoutRules::HOST).unwrap();
        assert_eq!(l.subresources.len(), 6);
        let s0 = l.subresources[0];
        assert_eq!((s0.row_pitch, s0.depth_pitch, s0.size), (32, 96, 96));
        let s1 = l.subresources[1];
        assert_eq!(
            (s1.width, s1.height, s1.offset, s1.row_pitch),
            (2, 1, 4096, 16)
        );
        // Slice 1, mip 0 is subresource 3.
        assert_eq!(l.subresources[3].offset, 3 * 4096);
        assert_eq!(l.size, 6 * 4096);
        for s in &l.subresources {
            assert_eq!(s.offset % 4096, 0);
            assert_eq!(s.row_pitch % 16, 0);
        }
    }

    #[test]
    fn odd_element_sizes_keep_whole_elements_per_pitch() {
        let d = tex(Dimension::Texture2D, 3, 2, 1, 1, 1, 6);
        let l = ResourceLayout::new(&d, &LayoutRules::HOST).unwrap();
        assert_eq!(l.subresources[0].row_pitch, 48);
    }

    #[test]
    fn bc_and_3d() {
        let d = tex(Dimension::Texture2D, 8, 8, 1, 0, 1, 71);
        let l = ResourceLayout::new(&d, &LayoutRules::HOST).unwrap();
        // 8x8 BC1: 2 blocks of 8 bytes per row, 2 rows.
        assert_eq!(
            (l.subresources[0].row_pitch, l.subresources[0].depth_pitch),
            (16, 32)
        );
        // 1x1 mip still needs a whole block.
        assert_eq!(l.subresources[3].width, 1);
        assert_eq!(l.subresources[3].size, 16);
        let d = tex(Dimension::Texture3D, 4, 4, 4, 0, 1, 61);
        let l = ResourceLayout::new(&d, &LayoutRules::HOST).unwrap();
        assert_eq!(l.subresources.len(), 3);
        assert_eq!(
            (
                l.subresources[0].row_pitch,
                l.subresources[0].depth_pitch,
                l.subresources[0].size
            ),
            (16, 64, 256)
        );
        assert_eq!(l.subresources[1].depth, 2);
    }

    #[test]
    fn too_large() {
        let d = tex(Dimension::Texture2D, 16384, 16384, 1, 1, 1, 2);
        assert!(ResourceLayout::new(&d, &LayoutRules::HOST).is_err());
    }

    #[test]
    fn boxes() {
        let d = tex(Dimension::Texture2D, 8, 8, 1, 0, 1, 71);
        let l = ResourceLayout::new(&d, &LayoutRules::HOST).unwrap();
        let b = |l, t, r, bo| TexelBox {
            left: l,
            top: t,
            front: 0,
            right: r,
            bottom: bo,
            back: 1,
        };
        assert_eq!(
            l.box_region(0, &b(4, 0, 8, 4)),
            Some(BlockRegion {
                x: 1,
                y: 0,
                z: 0,
                w: 1,
                h: 1,
                d: 1
            })
        );
        assert_eq!(l.box_region(0, &b(2, 0, 8, 4)), None);
        assert_eq!(l.box_region(0, &b(4, 0, 4, 4)), None);
        assert_eq!(l.box_region(0, &b(0, 0, 12, 4)), None);
        // Mip 2 is 2x2: a box to its edge is one block.
        assert_eq!(l.box_region(2, &b(0, 0, 2, 2)).unwrap().w, 1);
        let r = l.full_region(0).unwrap();
        assert_eq!(l.place_region(0, 0, 0, 0, &r), Some(r));
        assert_eq!(l.place_region(0, 4, 0, 0, &r), None);
        let one = BlockRegion { w: 1, h: 1, ..r };
        let placed = l.place_region(0, 4, 4, 0, &one).unwrap();
        assert_eq!(l.region_offset(0, &placed), 16 + 8);
    }
}

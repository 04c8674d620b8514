//! The frames' pixels: what the host produces each frame, and what the kernel must make of it
//! (the CPU reference the read-backs are checked against).

/// The frame's extent in texels (`DXGI_FORMAT_R8G8B8A8_UNORM`, 4 bytes each).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    pub width: u32,
    pub height: u32,
}

impl Extent {
    pub fn row_bytes(&self) -> usize {
        self.width as usize * 4
    }

    pub fn bytes(&self) -> usize {
        self.row_bytes() * self.height as usize
    }

    /// "3840x2160".
    pub fn name(&self) -> String {
        format!("{}x{}", self.width, self.height)
    }
}

/// The kernel: a 5×5 box blur of all four channels, clamped to the edge, rounded to nearest by
/// `write_imagef`. The mean of 25 UNORM8 values is never exactly halfway between two codes (the
/// sum would have to be 25k + 12.5), so the CPU reference below is exact up to float rounding.
pub const KERNEL_SOURCE: &str = r#"
__constant sampler_t edge = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;
__kernel void blur5(__read_only image2d_t src, __write_only image2d_t dst) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 sum = (float4)(0.0f);
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++)
            sum += read_imagef(src, edge, p + (int2)(dx, dy));
    write_imagef(dst, p, sum / 25.0f);
}
"#;
pub const KERNEL_NAME: &str = "blur5";

/// The largest difference per byte the check accepts: one code, for a device whose conversions
/// round differently. Frames differ by far more (see the tests).
pub const TOLERANCE: u8 = 1;

/// Host frame `index`: every texel from a hash of (x, y, index), so consecutive frames differ
/// everywhere and a stale or misplaced result cannot pass the check.
pub fn host_frame(e: Extent, index: u32) -> Vec<u8> {
    let mut out = vec![0u8; e.bytes()];
    let salt = index.wrapping_mul(0xC2B2_AE3D).wrapping_add(0x27D4_EB2F);
    for (y, row) in out.chunks_exact_mut(e.row_bytes()).enumerate() {
        let ry = (y as u32).wrapping_mul(0x85EB_CA77) ^ salt;
        for (x, texel) in row.chunks_exact_mut(4).enumerate() {
            let mut h = (x as u32).wrapping_mul(0x9E37_79B1) ^ ry;
            h ^= h >> 15;
            h = h.wrapping_mul(0x2C1B_3C6D);
            h ^= h >> 12;
            h = h.wrapping_mul(0x297A_2D39);
            h ^= h >> 15;
            texel.copy_from_slice(&h.to_le_bytes());
        }
    }
    out
}

/// What the kernel makes of `src`: the 5×5 box blur, separable (rows, then columns), in integers.
pub fn blur_reference(e: Extent, src: &[u8]) -> Vec<u8> {
    let (w, h) = (e.width as usize, e.height as usize);
    let clamp = |v: isize, n: usize| v.clamp(0, n as isize - 1) as usize;
    // Horizontal sums of five texels, per channel.
    let mut rows = vec![0u16; w * h * 4];
    for y in 0..h {
        for x in 0..w {
            for c in 0..4 {
                rows[(y * w + x) * 4 + c] = (-2..=2)
                    .map(|dx| src[(y * w + clamp(x as isize + dx, w)) * 4 + c] as u16)
                    .sum();
            }
        }
    }
    let mut out = vec![0u8; w * h * 4];
    for y in 0..h {
        for x in 0..w {
            for c in 0..4 {
                let sum: u32 = (-2..=2)
                    .map(|dy| rows[(clamp(y as isize + dy, h) * w + x) * 4 + c] as u32)
                    .sum();
                // round(sum / 25), never a tie.
                out[(y * w + x) * 4 + c] = ((2 * sum + 25) / 50) as u8;
            }
        }
    }
    out
}

/// How a read-back compares with the reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Check {
    /// Bytes further than [`TOLERANCE`] from the reference.
    pub wrong: usize,
    /// Bytes exactly one code off (accepted).
    pub off_by_one: usize,
    /// The largest difference seen.
    pub max_diff: u8,
    /// The texel (x, y) of the first wrong byte.
    pub first_wrong: Option<(u32, u32)>,
}

impl Check {
    pub fn ok(&self) -> bool {
        self.wrong == 0
    }
}

/// Compares a read-back with the reference, byte by byte. A short read-back counts its missing
/// bytes as wrong.
pub fn compare(e: Extent, expected: &[u8], got: &[u8]) -> Check {
    let mut check = Check {
        wrong: expected.len().saturating_sub(got.len()),
        off_by_one: 0,
        max_diff: 0,
        first_wrong: None,
    };
    for (i, (&a, &b)) in expected.iter().zip(got).enumerate() {
        let d = a.abs_diff(b);
        check.max_diff = check.max_diff.max(d);
        if d > TOLERANCE {
            check.wrong += 1;
            if check.first_wrong.is_none() {
                let texel = i / 4;
                check.first_wrong = Some((
                    (texel % e.width as usize) as u32,
                    (texel / e.width as usize) as u32,
                ));
            }
        } else if d == 1 {
            check.off_by_one += 1;
        }
    }
    if check.first_wrong.is_none() && check.wrong > 0 {
        check.first_wrong = Some((0, 0));
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;

    const E: Extent = Extent {
        width: 37,
        height: 23,
    };

    #[test]
    fn frames_differ_and_repeat() {
        let a = host_frame(E, 0);
        assert_eq!(a.len(), 37 * 23 * 4);
        assert_eq!(a, host_frame(E, 0));
        assert_ne!(a, host_frame(E, 1));
    }

    #[test]
    fn blur_of_a_constant_is_the_constant_and_a_point_spreads() {
        let flat = vec![77u8; E.bytes()];
        assert_eq!(blur_reference(E, &flat), flat);
        let mut point = vec![0u8; E.bytes()];
        let at = |x: usize, y: usize| (y * 37 + x) * 4;
        point[at(10, 10)] = 250; // red at (10, 10): 10 in each of the 25 texels around it
        let b = blur_reference(E, &point);
        assert_eq!(b[at(8, 8)], 10);
        assert_eq!(b[at(12, 12)], 10);
        assert_eq!(b[at(13, 10)], 0);
        assert_eq!(b[at(10, 10) + 1], 0);
        // At the edge, clamping repeats the border texel: (0, 0) counts 3×3 times.
        let mut corner = vec![0u8; E.bytes()];
        corner[0] = 25;
        assert_eq!(blur_reference(E, &corner)[0], 9);
    }

    #[test]
    fn the_check_accepts_one_code_and_catches_a_stale_frame() {
        let r0 = blur_reference(E, &host_frame(E, 0));
        let r1 = blur_reference(E, &host_frame(E, 1));
        assert!(compare(E, &r0, &r0).ok());
        let mut nudged = r0.clone();
        nudged[5] = nudged[5].wrapping_add(if nudged[5] == 255 { 255 } else { 1 });
        let c = compare(E, &r0, &nudged);
        assert!(c.ok() && c.off_by_one == 1 && c.max_diff == 1, "{c:?}");
        // The previous frame's result: most bytes are several codes away.
        let stale = compare(E, &r1, &r0);
        assert!(!stale.ok());
        assert!(stale.wrong > r0.len() / 2, "{stale:?}");
        let mut bad = r0.clone();
        bad[(3 * 37 + 4) * 4 + 2] ^= 0x40;
        assert_eq!(compare(E, &r0, &bad).first_wrong, Some((4, 3)));
        assert!(!compare(E, &r0, &r0[..10]).ok());
    }
}

//! The tightly packed host copy of a subresource (the staging-copy strategy's shadow) and its
//! copies to and from a mapped staging resource, in pieces and on several threads.
//!
//! Why pieces: a large acquire copies the mapping into the shadow on the CPU, then OpenCL copies
//! the shadow to the device over the bus. Cut into pieces of whole rows (or slices, or buffer
//! bytes), OpenCL's copy of one piece can start while the CPU still copies the next, so the two
//! overlap instead of adding up. Why threads: one core copies far below the memory's speed; a
//! few copying disjoint pieces come much nearer to it.

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::core::tokens::ResourceKind;

/// Below this many bytes the copy runs on the calling thread (threads cost more than they save).
const THREADED_FROM: usize = 4 << 20;

/// At most this many copying threads (memory bandwidth is spent before cores are).
const MAX_THREADS: usize = 8;

/// The shape of a packed subresource: `rows` rows of `row_bytes` (buffers: one row), `height`
/// rows per depth slice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    pub kind: ResourceKind,
    /// Texels per row, rows per slice, slices (buffers: bytes, 1, 1).
    pub extent: (usize, usize, usize),
    pub row_bytes: usize,
}

/// A mapped staging subresource: where its rows start in memory.
#[derive(Clone, Copy)]
pub(crate) struct Mapping {
    pub data: *mut u8,
    pub row_pitch: usize,
    pub depth_pitch: usize,
}

/// One piece of a packed subresource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Its bytes in the packed copy.
    pub bytes: Range<usize>,
    /// Its origin and region, as OpenCL's copies take them (buffers: a byte offset and size in
    /// the first coordinate; images: texels, rows and slices).
    pub origin: [usize; 3],
    pub region: [usize; 3],
}

impl Layout {
    pub fn len(&self) -> usize {
        let (_, h, d) = self.extent;
        self.row_bytes * h * d
    }

    /// The whole subresource as one piece.
    pub fn whole(&self) -> Piece {
        let (w, h, d) = self.extent;
        let region = match self.kind {
            ResourceKind::Buffer => [self.len(), 1, 1],
            _ => [w, h, d],
        };
        Piece {
            bytes: 0..self.len(),
            origin: [0; 3],
            region,
        }
    }

    /// The subresource in pieces of about `about` bytes: whole rows of one slice, whole slices,
    /// or a buffer's bytes, in order; one piece when `about` covers it all.
    pub fn pieces(&self, about: usize) -> Vec<Piece> {
        let about = about.max(1);
        let (w, h, d) = self.extent;
        let rb = self.row_bytes;
        let mut out = Vec::new();
        if self.kind == ResourceKind::Buffer {
            let len = self.len();
            let mut at = 0;
            while at < len {
                let n = about.min(len - at);
                out.push(Piece {
                    bytes: at..at + n,
                    origin: [at, 0, 0],
                    region: [n, 1, 1],
                });
                at += n;
            }
            return out;
        }
        let slice = rb * h;
        if slice >= about || d == 1 {
            // Rows of one slice at a time.
            let rows = (about / rb.max(1)).clamp(1, h.max(1));
            for z in 0..d {
                let mut y = 0;
                while y < h {
                    let n = rows.min(h - y);
                    let start = z * slice + y * rb;
                    out.push(Piece {
                        bytes: start..start + n * rb,
                        origin: [0, y, z],
                        region: [w, n, 1],
                    });
                    y += n;
                }
            }
        } else {
            // Whole slices.
            let slices = (about / slice.max(1)).clamp(1, d);
            let mut z = 0;
            while z < d {
                let n = slices.min(d - z);
                out.push(Piece {
                    bytes: z * slice..(z + n) * slice,
                    origin: [0, 0, z],
                    region: [w, h, n],
                });
                z += n;
            }
        }
        out
    }

    /// Copies `pieces` between `mapped` and `packed` (into `packed` when `to_packed`), on up to
    /// [`MAX_THREADS`] threads for a large copy; `done` runs on the calling thread for each
    /// piece once its bytes are copied, in the order the copies end.
    ///
    /// # Safety
    /// `mapped` maps a subresource of this layout for the whole call (its pitches cover the
    /// extent), `packed` is `self.len()` bytes, and neither is touched by others meanwhile.
    pub unsafe fn copy(
        &self,
        mapped: Mapping,
        packed: *mut u8,
        to_packed: bool,
        pieces: &[Piece],
        mut done: impl FnMut(&Piece),
    ) {
        let job = Job {
            layout: *self,
            mapped,
            packed,
            to_packed,
        };
        let threads = if self.len() < THREADED_FROM || pieces.len() < 2 {
            1
        } else {
            std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_THREADS)
                .min(pieces.len())
        };
        if threads == 1 {
            for p in pieces {
                // SAFETY: the caller's contract; one piece at a time on this thread.
                unsafe { job.piece(p) };
                done(p);
            }
            return;
        }
        let next = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<usize>();
        std::thread::scope(|s| {
            for _ in 0..threads {
                let (tx, next, job) = (tx.clone(), &next, &job);
                s.spawn(move || loop {
                    // Relaxed: the counter only hands out indices; each is taken once.
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = pieces.get(i) else { break };
                    // SAFETY: the caller's contract; pieces are disjoint in both the packed copy
                    // and the mapping, and each is copied by one thread.
                    unsafe { job.piece(p) };
                    if tx.send(i).is_err() {
                        break;
                    }
                });
            }
            drop(tx);
            for i in rx {
                done(&pieces[i]);
            }
        });
    }
}

/// One copy between a mapping and a packed subresource, shared by the copying threads.
struct Job {
    layout: Layout,
    mapped: Mapping,
    packed: *mut u8,
    to_packed: bool,
}

// SAFETY: the pointers are only used through `piece`, on disjoint bytes per piece (see
// Layout::copy's contract), so threads sharing the job never touch the same bytes.
unsafe impl Sync for Job {}

impl Job {
    /// Copies one piece.
    ///
    /// # Safety
    /// As [`Layout::copy`]; no other thread copies the same piece.
    unsafe fn piece(&self, p: &Piece) {
        let l = &self.layout;
        let row = |packed_at: usize, mapped_at: usize, n: usize| {
            // SAFETY: the caller's contract: both ranges lie inside their buffers.
            unsafe {
                let (packed, mapped) =
                    (self.packed.add(packed_at), self.mapped.data.add(mapped_at));
                if self.to_packed {
                    std::ptr::copy_nonoverlapping(mapped, packed, n)
                } else {
                    std::ptr::copy_nonoverlapping(packed, mapped, n)
                }
            }
        };
        if l.kind == ResourceKind::Buffer {
            // A buffer is packed as it is mapped.
            row(p.bytes.start, p.bytes.start, p.bytes.len());
            return;
        }
        let (_, h, _) = l.extent;
        let rb = l.row_bytes;
        for r in p.bytes.start / rb..p.bytes.end / rb {
            let (z, y) = (r / h, r % h);
            row(
                r * rb,
                z * self.mapped.depth_pitch + y * self.mapped.row_pitch,
                rb,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(kind: ResourceKind, extent: (usize, usize, usize), px: usize) -> Layout {
        let row_bytes = if kind == ResourceKind::Buffer {
            extent.0
        } else {
            extent.0 * px
        };
        Layout {
            kind,
            extent,
            row_bytes,
        }
    }

    /// Pieces cover every byte once, in order, with regions that match their bytes.
    fn covers(l: &Layout, about: usize) -> Vec<Piece> {
        let pieces = l.pieces(about);
        let mut at = 0;
        for p in &pieces {
            assert_eq!(p.bytes.start, at, "{l:?} {about}");
            let [w, h, d] = p.region;
            let bytes = if l.kind == ResourceKind::Buffer {
                w
            } else {
                w * h * d * (l.row_bytes / l.extent.0)
            };
            assert_eq!(p.bytes.len(), bytes, "{l:?} {about} {p:?}");
            at = p.bytes.end;
        }
        assert_eq!(at, l.len());
        pieces
    }

    #[test]
    fn pieces_cover_each_shape() {
        let b = layout(ResourceKind::Buffer, (1000, 1, 1), 1);
        assert_eq!(covers(&b, 300).len(), 4);
        assert_eq!(covers(&b, 5000).len(), 1);
        let t = layout(ResourceKind::Texture2D, (16, 10, 1), 4);
        assert_eq!(covers(&t, 64 * 3).len(), 4); // 3 rows a piece: 3+3+3+1
        assert_eq!(covers(&t, 1).len(), 10); // never less than a row
        let v = layout(ResourceKind::Texture3D, (4, 4, 8), 2);
        assert_eq!(covers(&v, 32 * 3).len(), 3); // 3 slices a piece: 3+3+2
        assert_eq!(covers(&v, 16).len(), 16); // two rows of each slice
        assert_eq!(covers(&v, 1 << 20).len(), 1);
        for l in [b, t, v] {
            assert_eq!(l.pieces(usize::MAX), vec![l.whole()]);
        }
    }

    /// The packed copy round-trips through a mapping with padded pitches, threaded or not.
    #[test]
    fn copies_round_trip_with_pitches() {
        for (extent, about) in [((64, 48, 3), 1000), ((1024, 1024, 2), 1 << 20)] {
            let l = layout(ResourceKind::Texture3D, extent, 4);
            let (w, h, d) = extent;
            let row_pitch = w * 4 + 12;
            let depth_pitch = row_pitch * h + 40;
            let mut mapped: Vec<u8> = (0..depth_pitch * d).map(|i| (i * 7 % 251) as u8).collect();
            let mut packed = vec![0u8; l.len()];
            let m = Mapping {
                data: mapped.as_mut_ptr(),
                row_pitch,
                depth_pitch,
            };
            let pieces = l.pieces(about);
            let mut seen = 0;
            // SAFETY: the mapping and the packed buffer have the layout's sizes and pitches.
            unsafe { l.copy(m, packed.as_mut_ptr(), true, &pieces, |_| seen += 1) };
            assert_eq!(seen, pieces.len());
            for (z, y) in (0..d).flat_map(|z| (0..h).map(move |y| (z, y))) {
                let at = z * depth_pitch + y * row_pitch;
                let p = (z * h + y) * w * 4;
                assert_eq!(&packed[p..p + w * 4], &mapped[at..at + w * 4]);
            }
            let before = mapped.clone();
            for b in mapped.iter_mut() {
                *b = 0;
            }
            // SAFETY: as above.
            unsafe { l.copy(m, packed.as_mut_ptr(), false, &pieces, |_| {}) };
            for (z, y) in (0..d).flat_map(|z| (0..h).map(move |y| (z, y))) {
                let at = z * depth_pitch + y * row_pitch;
                assert_eq!(&mapped[at..at + w * 4], &before[at..at + w * 4]);
            }
        }
    }
}

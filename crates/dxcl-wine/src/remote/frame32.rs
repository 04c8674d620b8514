//! A remoted method's frame for a 32-bit program's object: the pointees of its arguments copied,
//! in the 32-bit layout, into a frame of the program's block (`low`), and written back to the
//! layer's memory after the call where the method writes them.

use std::sync::atomic::{AtomicBool, Ordering};

use dxcl_abi::HRESULT;

use super::{Field, Pointee};
use crate::low::{Low, FRAME};

/// `E_NOTIMPL`: the method cannot be made for a 32-bit program.
pub const E_NOTIMPL: HRESULT = 0x8000_4001_u32 as HRESULT;
/// `E_OUTOFMEMORY`: the pointees do not fit a frame, or no wrapper slot is left.
pub const E_OUTOFMEMORY: HRESULT = 0x8007_000E_u32 as HRESULT;

enum Back {
    /// `pointee` (`n` bytes of the host's layout) at `at` goes back to the layer's `to`.
    Data { to: u64, at: u64, pointee: Pointee },
    /// A 4-byte interface pointer at `at` goes back, widened, to the layer's `to`.
    Iface { to: u64, at: u64 },
}

pub struct Frame32 {
    low: &'static Low,
    /// The method's vtable slot, for what `refuse` says.
    slot: usize,
    base: u64,
    used: usize,
    backs: Vec<Back>,
}

/// Each field's offset and the structure's size, in the host's layout (`wide`) or a 32-bit
/// program's: C's, a field at the next multiple of its alignment, the size a multiple of the
/// largest.
fn layout(fields: &[Field], wide: bool) -> (Vec<usize>, usize) {
    let (mut off, mut max) = (0usize, 1usize);
    let offsets = fields
        .iter()
        .map(|f| {
            let (size, align) = match *f {
                Field::Word if wide => (8, 8),
                Field::Word => (4, 4),
                Field::Data(size, align) => (size, align),
            };
            max = max.max(align);
            let at = off.next_multiple_of(align);
            off = at + size;
            at
        })
        .collect();
    (offsets, off.next_multiple_of(max))
}

/// Copies a structure between the layouts, field by field (`to_wide`: from the program's into
/// the host's). Narrowing, a pointer that does not fit the program's 4 bytes is an `Err` when
/// `strict` (data the method reads), else cut (what a method that writes the structure finds
/// there before it does: the layer's out-structures start zeroed).
///
/// # Safety
/// `from` and `to` hold the structure in their layouts.
unsafe fn convert(
    fields: &[Field],
    from: usize,
    to: usize,
    to_wide: bool,
    strict: bool,
) -> Result<(), ()> {
    let (from_off, _) = layout(fields, !to_wide);
    let (to_off, _) = layout(fields, to_wide);
    for ((f, a), b) in fields.iter().zip(from_off).zip(to_off) {
        let (src, dst) = ((from + a) as *const u8, (to + b) as *mut u8);
        // SAFETY: the field in both structures (the caller's contract).
        unsafe {
            match (*f, to_wide) {
                (Field::Word, true) => dst
                    .cast::<u64>()
                    .write_unaligned(u64::from(src.cast::<u32>().read_unaligned())),
                (Field::Word, false) => {
                    let wide = src.cast::<u64>().read_unaligned();
                    let v = match u32::try_from(wide) {
                        Ok(v) => v,
                        Err(_) if strict => return Err(()),
                        Err(_) => wide as u32,
                    };
                    dst.cast::<u32>().write_unaligned(v)
                }
                (Field::Data(size, _), _) => std::ptr::copy_nonoverlapping(src, dst, size),
            }
        }
    }
    Ok(())
}

/// Says once on stderr why a method is refused to a 32-bit program.
pub fn refuse(slot: usize, why: &str) -> HRESULT {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        eprintln!("dxclcl: a Direct3D method (vtable slot {slot}) is not bridged for 32-bit programs: {why}");
    }
    E_NOTIMPL
}

impl Frame32 {
    /// A frame of `low`'s, held until dropped (waits while every frame is in use).
    pub fn new(low: &'static Low, slot: usize) -> Frame32 {
        Frame32 {
            low,
            slot,
            base: low.frames.take(),
            used: 0,
            backs: Vec::new(),
        }
    }

    /// `n` bytes of the frame, 8-aligned.
    fn alloc(&mut self, n: usize) -> Result<u64, HRESULT> {
        let at = self.used.next_multiple_of(8);
        if at + n > FRAME {
            return Err(E_OUTOFMEMORY);
        }
        self.used = at + n;
        Ok(self.base + at as u64)
    }

    /// The 32-bit object's pointer for the layer's `a` to `pointee` (`args`: the method's
    /// arguments), its data copied in; kept for writing back when `back`.
    ///
    /// # Safety
    /// `a` points at the pointee in the host's layout, as the method's contract says; the
    /// arguments that size it are the method's.
    pub unsafe fn data(
        &mut self,
        a: u64,
        pointee: Pointee,
        back: bool,
        args: &[u64],
    ) -> Result<u64, HRESULT> {
        let n = match pointee {
            Pointee::Bytes(n) => n,
            Pointee::Fields(f) => layout(f, false).1,
            Pointee::BytesArg(k) => args[k] as u32 as usize,
            // SAFETY: argument `k` is the method's `UINT *` that sizes this one (the contract).
            Pointee::BytesAt(k) if args[k] != 0 => unsafe {
                *(args[k] as usize as *const u32) as usize
            },
            Pointee::BytesAt(_) => 0,
        };
        let at = self.alloc(n)?;
        match pointee {
            Pointee::Fields(f) => {
                // SAFETY: the layer's structure at `a` (the contract); the frame's `n` bytes.
                if unsafe { convert(f, a as usize, at as usize, false, !back) }.is_err() {
                    return Err(refuse(
                        self.slot,
                        "a pointer in its arguments lies above 4 GiB",
                    ));
                }
            }
            // SAFETY: `n` bytes of the layer's at `a` (the contract) into as many of the frame.
            _ => unsafe {
                std::ptr::copy_nonoverlapping(a as usize as *const u8, at as usize as *mut u8, n)
            },
        }
        if back {
            self.backs.push(Back::Data {
                to: a,
                at,
                pointee: match pointee {
                    Pointee::Fields(_) => pointee,
                    _ => Pointee::Bytes(n),
                },
            });
        }
        Ok(at)
    }

    /// A cleared 4-byte interface out-pointer, to go back to the layer's `to`.
    pub fn out_iface(&mut self, to: u64) -> Result<u64, HRESULT> {
        let at = self.alloc(4)?;
        // SAFETY: the frame's 4 bytes just taken.
        unsafe { (at as usize as *mut u32).write(0) };
        self.backs.push(Back::Iface { to, at });
        Ok(at)
    }

    /// Writes what the method wrote back into the layer's memory, in its layout.
    ///
    /// # Safety
    /// The pointers given to `data` and `out_iface` are still the layer's, writable.
    pub unsafe fn write_back(&self) {
        for b in &self.backs {
            match *b {
                Back::Iface { to, at } => {
                    // SAFETY: the frame's 4 bytes; the layer's `void **` (the contract).
                    unsafe { *(to as usize as *mut u64) = u64::from(*(at as usize as *const u32)) };
                }
                Back::Data {
                    to,
                    at,
                    pointee: Pointee::Fields(f),
                } => {
                    // SAFETY: the structure in the frame and in the layer's memory; widening
                    // cannot fail.
                    let _ = unsafe { convert(f, at as usize, to as usize, true, false) };
                }
                Back::Data {
                    to,
                    at,
                    pointee: Pointee::Bytes(n),
                } => {
                    // SAFETY: `n` bytes of the frame back into the layer's `n`.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            at as usize as *const u8,
                            to as usize as *mut u8,
                            n,
                        )
                    }
                }
                Back::Data { .. } => {}
            }
        }
    }
}

impl Drop for Frame32 {
    fn drop(&mut self) {
        self.low.frames.give(self.base);
    }
}

#[cfg(test)]
mod tests {
    use super::{layout, Field};

    const U32: Field = Field::Data(4, 4);

    #[test]
    fn pointers_take_8_aligned_bytes_for_the_host_and_4_for_the_program() {
        // D3D11_MAPPED_SUBRESOURCE: pData, RowPitch, DepthPitch.
        let mapped = [Field::Word, U32, U32];
        assert_eq!(layout(&mapped, true), (vec![0, 8, 12], 16));
        assert_eq!(layout(&mapped, false), (vec![0, 4, 8], 12));
        // A 4-byte field first: the pointer moves to 8 for the host.
        assert_eq!(layout(&[U32, Field::Word], true), (vec![0, 8], 16));
        // DXGI_ADAPTER_DESC1: Description[128], four UINTs, three SIZE_Ts, LUID, Flags.
        let mut desc = vec![Field::Data(256, 2), U32, U32, U32, U32];
        desc.extend([Field::Word; 3]);
        desc.extend([Field::Data(8, 4), U32]);
        let (off, size) = layout(&desc, true);
        assert_eq!((off[5], off[8], off[9], size), (272, 296, 304, 312));
        let (off, size) = layout(&desc, false);
        assert_eq!((off[5], off[8], off[9], size), (272, 284, 292, 296));
    }
}

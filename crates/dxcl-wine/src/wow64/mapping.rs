//! Mappings for a 32-bit program. The host maps where it likes, mostly beyond a 32-bit program's
//! reach: there the program gets a copy in memory it reaches (below 2 GiB), filled from the host's
//! mapping when mapped and written back into it when unmapped. A mapping the program reaches is
//! handed over as it is. Every map is made blocking (the copy needs the data): the spec lets a
//! non-blocking map be complete when it returns, its event then complete too.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use opencl_sys::*;

use super::{
    convert_in, convert_out, dispatch, failure, write32, Arg, Len, Ret, CL_OUT_OF_HOST_MEMORY,
};
use crate::gen::{index, MAX_ARGS};
use crate::host::Host;

/// A copy handed to the program: where the host's mapping is, and how many bytes.
struct Copy {
    host: u64,
    bytes: usize,
    /// The program may write it (`CL_MAP_WRITE`, `CL_MAP_WRITE_INVALIDATE_REGION`): written back.
    back: bool,
}

/// The program's copies, by (host memory object, the copy's address).
static COPIES: LazyLock<Mutex<HashMap<(u64, u32), Copy>>> = LazyLock::new(Default::default);

fn copies() -> std::sync::MutexGuard<'static, HashMap<(u64, u32), Copy>> {
    COPIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// A map call made on the host for a 32-bit program: the frame of its converted arguments, the
/// host's mapping (NULL on failure) and its error.
struct Made {
    f: super::Frame,
    mapped: u64,
    err: i32,
}

/// Makes map call `function` (shaped `args`: the flags fourth, the event and `errcode_ret` last)
/// on the host, blocking; `outs` points further out-arguments at the caller's locals. `Err` with
/// what the program gets when its arguments do not convert.
///
/// # Safety
/// `a32` are a 32-bit program's arguments of `function`; what `outs` points at outlives the call.
unsafe fn make(
    host: &Host,
    function: u32,
    args: &[Arg],
    a32: &[u64; MAX_ARGS],
    outs: impl FnOnce(&mut [u64; MAX_ARGS]),
) -> Result<Made, u64> {
    // SAFETY: the caller's contract.
    let mut f = match unsafe { convert_in(function, args, a32) } {
        Ok(f) => f,
        // SAFETY: as above.
        Err(code) => return Err(unsafe { failure(args, Ret::Handle, a32, code) }),
    };
    let mut err = CL_SUCCESS;
    f.a[2] = CL_TRUE as u64;
    f.a[args.len() - 1] = &mut err as *mut i32 as u64;
    outs(&mut f.a);
    // SAFETY: the frame holds the host-layout arguments, errcode_ret and `outs`' ours.
    let mapped = unsafe { dispatch(host, function, &mut f.a) };
    Ok(Made { f, mapped, err })
}

/// `clEnqueueMapBuffer(queue, buffer, blocking_map, map_flags, offset, size,
/// num_events_in_wait_list, event_wait_list, event, errcode_ret)` from a 32-bit program.
///
/// # Safety
/// `a32` are a 32-bit program's arguments of that entry point.
pub unsafe fn map_buffer(host: &Host, a32: &[u64; MAX_ARGS]) -> u64 {
    use Arg::*;
    const ARGS: &[Arg] = &[
        Handle,
        Handle,
        Value,
        Value,
        Value,
        Value,
        Value,
        HandlesIn(Len::Arg(6)),
        HandlesOut(Len::One),
        Value,
    ];
    // SAFETY: the caller's contract.
    match unsafe { make(host, index::clEnqueueMapBuffer, ARGS, a32, |_| {}) } {
        // SAFETY: the frame of that call; the buffer's mapping is `size` bytes.
        Ok(m) => unsafe { hand_over(host, m, a32, ARGS.len(), a32[5] as u32 as usize) },
        Err(r) => r,
    }
}

/// `clEnqueueMapImage(queue, image, blocking_map, map_flags, origin, region, image_row_pitch,
/// image_slice_pitch, num_events_in_wait_list, event_wait_list, event, errcode_ret)` from a
/// 32-bit program; the pitches it is told are its copy's (the host's: the copy keeps the layout).
///
/// # Safety
/// `a32` are a 32-bit program's arguments of that entry point.
pub unsafe fn map_image(host: &Host, a32: &[u64; MAX_ARGS]) -> u64 {
    use Arg::*;
    const ARGS: &[Arg] = &[
        Handle,
        Handle,
        Value,
        Value,
        SizesIn(Len::Three),
        SizesIn(Len::Three),
        Value,
        Value,
        Value,
        HandlesIn(Len::Arg(8)),
        HandlesOut(Len::One),
        Value,
    ];
    let (mut row, mut slice) = (0usize, 0usize);
    // A NULL pitch stays NULL: the host gives the spec's error.
    let outs = |a: &mut [u64; MAX_ARGS]| {
        if a32[6] != 0 {
            a[6] = &mut row as *mut usize as u64;
        }
        if a32[7] != 0 {
            a[7] = &mut slice as *mut usize as u64;
        }
    };
    // SAFETY: the caller's contract; the pitches outlive the call.
    let m = match unsafe { make(host, index::clEnqueueMapImage, ARGS, a32, outs) } {
        Ok(m) => m,
        Err(r) => return r,
    };
    let mut bytes = 0;
    if m.mapped != 0 {
        // SAFETY: the region the frame widened: three size_t.
        let region = unsafe { std::slice::from_raw_parts(m.f.a[5] as usize as *const u64, 3) };
        let (w, h, d) = (region[0] as usize, region[1] as usize, region[2] as usize);
        let image = m.f.a[1];
        let elem = query(host, index::clGetImageInfo, image, CL_IMAGE_ELEMENT_SIZE, 8) as usize;
        let kind = query(host, index::clGetMemObjectInfo, image, CL_MEM_TYPE, 4) as u32;
        let rows = |n: usize, pitch: usize| n.saturating_sub(1) * pitch;
        // The mapped bytes, from the first to the last element of the region, by the image's type.
        bytes = w * elem
            + match kind {
                CL_MEM_OBJECT_IMAGE2D => rows(h, row),
                CL_MEM_OBJECT_IMAGE3D | CL_MEM_OBJECT_IMAGE2D_ARRAY => {
                    rows(h, row) + rows(d, slice)
                }
                CL_MEM_OBJECT_IMAGE1D_ARRAY => rows(h, slice),
                _ => 0,
            };
        // SAFETY: the program's size_t out-pointers (checked non-NULL above).
        unsafe {
            if a32[6] != 0 {
                write32(a32[6], 0, super::narrow_word(row as u64));
            }
            if a32[7] != 0 {
                write32(a32[7], 0, super::narrow_word(slice as u64));
            }
        }
    }
    // SAFETY: the frame of that call; the region's mapping is `bytes` long.
    unsafe { hand_over(host, m, a32, ARGS.len(), bytes) }
}

/// A 4- or 8-byte answer of query `name` of `entry` about `object`, 0 when it gives none.
fn query(host: &Host, entry: u32, object: u64, name: u32, size: usize) -> u64 {
    let mut v = 0u64;
    let mut a = [0u64; MAX_ARGS];
    a[..5].copy_from_slice(&[
        object,
        name as u64,
        size as u64,
        &mut v as *mut u64 as u64,
        0,
    ]);
    if crate::special::forward(host, entry, &a) as i32 != CL_SUCCESS {
        return 0;
    }
    v
}

/// Hands the host's mapping (`bytes` long) to the program: as it is where the program reaches it,
/// else as a copy. `n` is the map call's argument count: its flags are argument 3, its event and
/// `errcode_ret` the last two.
///
/// # Safety
/// `m` is the map call `make` made with the program's arguments `a32`.
unsafe fn hand_over(host: &Host, m: Made, a32: &[u64; MAX_ARGS], n: usize, bytes: usize) -> u64 {
    let Made { f, mapped, err } = m;
    let (flags, event, errcode) = (a32[3], n - 2, a32[n - 1]);
    let report = |code: i32| {
        if errcode != 0 {
            // SAFETY: the program's cl_int *errcode_ret.
            unsafe { write32(errcode, 0, code as u32) };
        }
    };
    if mapped == 0 {
        report(err);
        return 0;
    }
    let low = if mapped + bytes as u64 <= crate::low::REACH {
        mapped
    } else {
        let Some(low) = crate::low::alloc(bytes) else {
            undo(host, &f, mapped, event);
            // CL_OUT_OF_HOST_MEMORY "if there is a failure to allocate resources required by the
            // OpenCL implementation on the host": the program's copy.
            report(CL_OUT_OF_HOST_MEMORY);
            return 0;
        };
        if flags & CL_MAP_WRITE_INVALIDATE_REGION == 0 {
            // SAFETY: the host's mapping of `bytes` (the map is complete: it was blocking) and
            // the copy of as many.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    mapped as usize as *const u8,
                    low as usize as *mut u8,
                    bytes,
                )
            };
        }
        let back = flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION) != 0;
        copies().insert(
            (f.a[1], low as u32),
            Copy {
                host: mapped,
                bytes,
                back,
            },
        );
        low
    };
    // SAFETY: the frame's write-backs name the program's event out-pointer.
    unsafe { convert_out(&f) };
    report(CL_SUCCESS);
    low
}

/// Takes back a mapping the program will not get: unmapped on the host, its event released.
fn undo(host: &Host, f: &super::Frame, mapped: u64, event: usize) {
    let mut a = [0u64; MAX_ARGS];
    a[..3].copy_from_slice(&[f.a[0], f.a[1], mapped]);
    crate::special::forward(host, index::clEnqueueUnmapMemObject, &a);
    if f.a[event] != 0 {
        // SAFETY: the frame's event slot, which the host wrote.
        let e = unsafe { *(f.a[event] as usize as *const u64) };
        if e != 0 {
            let mut a = [0u64; MAX_ARGS];
            a[0] = e;
            crate::special::forward(host, index::clReleaseEvent, &a);
        }
    }
}

/// `clEnqueueUnmapMemObject(queue, memobj, mapped_ptr, num_events_in_wait_list,
/// event_wait_list, event)` from a 32-bit program: a copy is written back into the host's
/// mapping (the program wrote it before this call), the host's mapping unmapped, the copy freed.
///
/// # Safety
/// `a32` are a 32-bit program's arguments of that entry point.
pub unsafe fn unmap(host: &Host, a32: &[u64; MAX_ARGS]) -> u64 {
    use Arg::*;
    const ARGS: &[Arg] = &[
        Handle,
        Handle,
        Value,
        Value,
        HandlesIn(Len::Arg(3)),
        HandlesOut(Len::One),
    ];
    // SAFETY: the caller's contract.
    let mut f = match unsafe { convert_in(index::clEnqueueUnmapMemObject, ARGS, a32) } {
        Ok(f) => f,
        // SAFETY: as above.
        Err(code) => return unsafe { failure(ARGS, Ret::Value, a32, code) },
    };
    let key = (f.a[1], a32[2] as u32);
    let copy = copies().remove(&key);
    if let Some(c) = &copy {
        if c.back {
            // SAFETY: the program's copy and the host's mapping, `bytes` each, both still mapped.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    a32[2] as usize as *const u8,
                    c.host as usize as *mut u8,
                    c.bytes,
                )
            };
        }
        f.a[2] = c.host;
    }
    // SAFETY: the frame holds the host-layout arguments.
    let r = unsafe { dispatch(host, index::clEnqueueUnmapMemObject, &mut f.a) };
    if r as i32 != CL_SUCCESS {
        // Still mapped: the copy stays the program's.
        if let Some(c) = copy {
            copies().insert(key, c);
        }
        return r;
    }
    // SAFETY: the frame's write-backs name the program's event out-pointer.
    unsafe { convert_out(&f) };
    if let Some(c) = copy {
        crate::low::free(a32[2], c.bytes);
    }
    r
}

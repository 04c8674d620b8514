//! 32-bit Windows programs through Wine's new WoW64 mode (the standard one from Wine 11).
//!
//! There a 32-bit `dxclcl.dll` calls this same 64-bit library: Wine looks up
//! `__wine_unix_call_wow64_funcs` instead of `__wine_unix_call_funcs` and calls it with the same
//! call numbers and the 32-bit program's parameter blocks. Those blocks are the 64-bit ones (every
//! field of unixlib.h has a fixed width), but what their arguments point to keeps the 32-bit
//! layout, and the host's objects lie where 32-bit code cannot reach. So each core call is
//! converted here by its entry point's typed description (`gen.rs`, written by dxcl-gen from
//! `CL/cl.h`): handles become the host's objects and back (`handles`), arrays of handles, `size_t`
//! and pointers are widened and narrowed, and query answers are converted by their types
//! (`info`). The call itself then takes the same path as a 64-bit program's (special.rs, gen.rs).
//!
//! The sharing extensions' calls convert the same way (`sharing`); the methods the layer calls on
//! the program's Direct3D objects cross in its layout through `remote`'s 32-bit frames.
//!
//! A mapping beyond the program's reach becomes a copy within it (`mapping`). Not bridged for
//! 32-bit programs: the entry points `gen.rs` marks unsupported (shared virtual memory, whose
//! addresses are the host's; native kernels).

mod handles;
mod info;
mod mapping;
pub mod sharing;
#[rustfmt::skip]
mod gen;

use std::ffi::c_void;

use crate::gen::{index, MAX_ARGS};
use crate::host::Host;
use crate::special;
use crate::unixlib::{self, Call, CallbackWow64};
use info::Answer;

/// How long an array parameter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    One,
    Three,
    /// The value of argument `k`.
    Arg(usize),
}

/// The zero-terminated `intptr_t` property lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Props {
    Context,
    Partition,
    Pipe,
}

/// How one argument converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// The same in both layouts: integers, bytes, structures of fixed-width fields.
    Value,
    Handle,
    HandlesIn(Len),
    HandlesOut(Len),
    SizesIn(Len),
    PointersIn(Len),
    Props(Props),
    /// `const cl_image_desc *`.
    ImageDesc,
    /// `clCreateSubBuffer`'s `cl_buffer_region`.
    BufferRegion,
    /// `size_t` values, as many bytes as argument `k` says (`clGetKernelSubGroupInfo`'s input).
    SizeBytesIn(usize),
    /// A query's answer: its name, size and size-returned arguments.
    InfoValue {
        name: usize,
        size: usize,
        size_ret: usize,
    },
    /// The size-returned argument (converted with its `InfoValue`).
    InfoSizeRet,
}

/// What an entry point returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ret {
    Value,
    Handle,
}

/// Where an entry point reports its error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fail {
    /// Its return value.
    Code,
    /// It returns NULL and the code goes to `errcode_ret`, argument `k`.
    // No unsupported entry point reports through errcode_ret today; dxcl-gen writes this for one.
    #[allow(dead_code)]
    Errcode(usize),
    /// It returns NULL (clSVMAlloc has no error code).
    Null,
}

/// An entry point, for a 32-bit caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Call(&'static [Arg], Ret),
    /// Not bridged for 32-bit programs, and why; how its failure is reported.
    Unsupported(&'static str, Fail),
    /// Converted by hand here.
    ByHand,
    /// Answered by the Windows side.
    Windows,
}

const CL_INVALID_OPERATION: i32 = -59;
const CL_OUT_OF_HOST_MEMORY: i32 = -6;
const CL_INVALID_PROPERTY: i32 = -64;
const CL_CONTEXT_PLATFORM: u32 = 0x1084;
const CL_DEVICE_PARTITION_BY_COUNTS: u32 = 0x1087;
const CL_BUFFER_CREATE_TYPE_REGION: u32 = 0x1220;
/// The longest property list read (a program's list without its terminating 0 ends here).
const MAX_PROPERTIES: usize = 256;

/// Reads element `k` of a 32-bit array.
///
/// # Safety
/// `addr` is the program's array of more than `k` 4-byte elements.
unsafe fn read32(addr: u64, k: usize) -> u32 {
    // SAFETY: the caller's contract; the program's arrays need not be 4-aligned.
    unsafe { (addr as usize as *const u32).add(k).read_unaligned() }
}

/// Writes element `k` of a 32-bit array.
///
/// # Safety
/// `addr` is the program's writable array of more than `k` 4-byte elements.
unsafe fn write32(addr: u64, k: usize, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { (addr as usize as *mut u32).add(k).write_unaligned(v) }
}

/// A `size_t` or pointer of the host narrowed for a 32-bit caller; one that does not fit (a
/// `size_t` answer past 4 GiB) becomes the largest it can hold.
fn narrow_word(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

/// What to write back into the program's memory after the call.
enum Back {
    /// Handles from `arrays[from]` into the program's array at `to` (those the host wrote).
    Handles { to: u64, from: usize },
    /// A query's answer: the host wrote `arrays[from]` (`value`: the program's buffer, 0 for
    /// none) and its size into `arrays[size]`; `size_ret` is the program's `size_t *`.
    Info {
        answer: Answer,
        value: u64,
        from: usize,
        size: usize,
        size_ret: u64,
    },
}

/// One call's arguments in the host's layout, the arrays they point to, and what to write back.
struct Frame {
    a: [u64; MAX_ARGS],
    arrays: Vec<Vec<u64>>,
    back: Vec<Back>,
}

impl Frame {
    /// Keeps `v` for the call and returns its address (an empty array's is not NULL: the host
    /// sees a list of length 0, as the program passed).
    fn keep(&mut self, v: Vec<u64>) -> (u64, usize) {
        self.arrays.push(v);
        let k = self.arrays.len() - 1;
        (self.arrays[k].as_mut_ptr() as u64, k)
    }
}

fn count(len: Len, a32: &[u64; MAX_ARGS]) -> usize {
    match len {
        Len::One => 1,
        Len::Three => 3,
        Len::Arg(k) => a32[k] as u32 as usize,
    }
}

/// `n` zeroed words. A program's count is taken as it is: one too large for the host's memory
/// fails the call with `CL_OUT_OF_HOST_MEMORY` "if there is a failure to allocate resources
/// required by the OpenCL implementation on the host", instead of ending the process.
fn zeroed(n: usize) -> Result<Vec<u64>, i32> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| CL_OUT_OF_HOST_MEMORY)?;
    v.resize(n, 0);
    Ok(v)
}

/// Widens the program's array at `addr` of `n` 4-byte elements with `f`.
///
/// # Safety
/// `addr` is the program's array of `n` elements.
unsafe fn widened(addr: u64, n: usize, f: impl Fn(u32) -> u64) -> Result<Vec<u64>, i32> {
    let mut v = zeroed(n)?;
    for (k, w) in v.iter_mut().enumerate() {
        // SAFETY: the caller's contract.
        *w = f(unsafe { read32(addr, k) });
    }
    Ok(v)
}

/// A property list: `Err` with the spec's error for one this bridge cannot pass on.
///
/// # Safety
/// `addr` is the program's zero-terminated list.
unsafe fn properties(addr: u64, kind: Props) -> Result<Vec<u64>, i32> {
    let mut out = Vec::new();
    let mut k = 0;
    let mut next = || -> Result<u32, i32> {
        if k == MAX_PROPERTIES {
            return Err(CL_INVALID_PROPERTY);
        }
        k += 1;
        // SAFETY: each read stays within the program's list, which ends at a 0 name.
        Ok(unsafe { read32(addr, k - 1) })
    };
    loop {
        let name = next()?;
        out.push(name as u64);
        if name == 0 {
            return Ok(out);
        }
        match (kind, name) {
            (Props::Context, CL_CONTEXT_PLATFORM) => out.push(handles::widen(next()?)),
            // A list of counts ending in CL_DEVICE_PARTITION_BY_COUNTS_LIST_END (0).
            (Props::Partition, CL_DEVICE_PARTITION_BY_COUNTS) => loop {
                let c = next()?;
                out.push(c as u64);
                if c == 0 {
                    break;
                }
            },
            _ => out.push(next()? as u64),
        }
    }
}

/// `cl_image_desc` as the host lays it out.
#[repr(C)]
struct ImageDesc {
    image_type: u32,
    width: usize,
    height: usize,
    depth: usize,
    array_size: usize,
    row_pitch: usize,
    slice_pitch: usize,
    num_mip_levels: u32,
    num_samples: u32,
    buffer: u64,
}

/// Converts the arguments in; `Err` with the error the call fails with.
///
/// # Safety
/// `a32` are a 32-bit program's arguments of entry point `function`, shaped `args`.
unsafe fn convert_in(function: u32, args: &[Arg], a32: &[u64; MAX_ARGS]) -> Result<Frame, i32> {
    let mut f = Frame {
        a: *a32,
        arrays: Vec::new(),
        back: Vec::new(),
    };
    for (k, arg) in args.iter().enumerate() {
        let v = a32[k];
        match *arg {
            Arg::Value | Arg::InfoSizeRet => {}
            Arg::Handle => f.a[k] = handles::widen(v as u32),
            Arg::InfoValue {
                name,
                size,
                size_ret,
            } => {
                let answer = info::answer(function, a32[name] as u32);
                info_in(
                    &mut f,
                    answer,
                    v,
                    a32[size] as u32 as usize,
                    k,
                    size,
                    size_ret,
                )?;
            }
            // A NULL array stays NULL (the host gives the spec's error where one is due).
            _ if v == 0 => {}
            Arg::HandlesIn(len) => {
                // SAFETY: the program's array of `len` handles (its contract).
                let w = unsafe { widened(v, count(len, a32), handles::widen) }?;
                f.a[k] = f.keep(w).0;
            }
            Arg::SizesIn(len) | Arg::PointersIn(len) => {
                // SAFETY: the program's array of `len` size_t or pointers.
                let w = unsafe { widened(v, count(len, a32), u64::from) }?;
                f.a[k] = f.keep(w).0;
            }
            Arg::HandlesOut(len) => {
                let (addr, from) = f.keep(zeroed(count(len, a32))?);
                f.a[k] = addr;
                f.back.push(Back::Handles { to: v, from });
            }
            Arg::Props(kind) => {
                // SAFETY: the program's zero-terminated property list.
                let list = unsafe { properties(v, kind) }?;
                f.a[k] = f.keep(list).0;
            }
            Arg::ImageDesc => {
                // SAFETY: the program's cl_image_desc, ten 4-byte fields in its layout.
                let w = |i| unsafe { read32(v, i) };
                let desc = ImageDesc {
                    image_type: w(0),
                    width: w(1) as usize,
                    height: w(2) as usize,
                    depth: w(3) as usize,
                    array_size: w(4) as usize,
                    row_pitch: w(5) as usize,
                    slice_pitch: w(6) as usize,
                    num_mip_levels: w(7),
                    num_samples: w(8),
                    buffer: handles::widen(w(9)),
                };
                let (addr, _) = f.keep(vec![0; std::mem::size_of::<ImageDesc>() / 8]);
                // SAFETY: `addr` holds as many u64s as an ImageDesc has bytes / 8, 8-aligned.
                unsafe { (addr as usize as *mut ImageDesc).write(desc) };
                f.a[k] = addr;
            }
            Arg::BufferRegion => {
                // Only CL_BUFFER_CREATE_TYPE_REGION names a cl_buffer_region; for another type
                // the host gives the spec's error.
                if k > 0 && a32[k - 1] as u32 == CL_BUFFER_CREATE_TYPE_REGION {
                    // SAFETY: the program's cl_buffer_region: origin and size, 4 bytes each.
                    let w = unsafe { widened(v, 2, u64::from) }?;
                    f.a[k] = f.keep(w).0;
                }
            }
            Arg::SizeBytesIn(size) => {
                let n = a32[size] as u32 as usize / 4;
                // SAFETY: the program's input of that many bytes, of size_t values.
                let w = unsafe { widened(v, n, u64::from) }?;
                f.a[size] = (n * 8) as u64;
                f.a[k] = f.keep(w).0;
            }
        }
    }
    Ok(f)
}

/// Lays out a query's answer (`value`, the program's buffer of `size` bytes, is argument `k`):
/// the host answers into a buffer of its own layout, and its size into a `size_t` of ours.
fn info_in(
    f: &mut Frame,
    answer: Answer,
    value: u64,
    size: usize,
    k: usize,
    size_k: usize,
    size_ret_k: usize,
) -> Result<(), i32> {
    let size_ret = f.a[size_ret_k];
    let (ret_addr, ret_from) = f.keep(vec![0]);
    f.a[size_ret_k] = ret_addr;
    if answer == Answer::Bytes {
        f.back.push(Back::Info {
            answer,
            value,
            from: ret_from,
            size: ret_from,
            size_ret,
        });
        return Ok(());
    }
    let n = size / 4;
    let words = match answer {
        // SAFETY: CL_PROGRAM_BINARIES: the program's array of n pointers to its buffers.
        Answer::Binaries if value != 0 => unsafe { widened(value, n, u64::from) }?,
        _ => zeroed(n)?,
    };
    let (addr, from) = f.keep(words);
    f.a[size_k] = (n * 8) as u64;
    f.a[k] = if value == 0 { 0 } else { addr };
    f.back.push(Back::Info {
        answer,
        value,
        from,
        size: ret_from,
        size_ret,
    });
    Ok(())
}

/// Writes the results back into the program's memory after a successful call.
///
/// # Safety
/// The frame's write-backs name the program's arrays of the lengths it passed.
unsafe fn convert_out(f: &Frame) {
    for back in &f.back {
        match *back {
            Back::Handles { to, from } => {
                for (k, h) in f.arrays[from].iter().enumerate().filter(|(_, h)| **h != 0) {
                    // SAFETY: the program's array, as long as the one the host wrote.
                    unsafe { write32(to, k, handles::narrow(*h)) };
                }
            }
            Back::Info {
                answer,
                value,
                from,
                size,
                size_ret,
            } => {
                let written = f.arrays[size][0] as usize;
                let size32 = match answer {
                    Answer::Bytes => written,
                    _ => written / 2,
                };
                if size_ret != 0 {
                    // SAFETY: the program's size_t out pointer.
                    unsafe { write32(size_ret, 0, narrow_word(size32 as u64)) };
                }
                if value == 0 || matches!(answer, Answer::Bytes | Answer::Binaries) {
                    continue;
                }
                let words = &f.arrays[from][..(written / 8).min(f.arrays[from].len())];
                for (k, w) in words.iter().enumerate() {
                    let out = match answer {
                        Answer::Handles => handles::narrow(*w),
                        // Pairs: CL_CONTEXT_PLATFORM's value is a handle.
                        Answer::ContextProperties
                            if k % 2 == 1 && words[k - 1] == CL_CONTEXT_PLATFORM as u64 =>
                        {
                            handles::narrow(*w)
                        }
                        _ => narrow_word(*w),
                    };
                    // SAFETY: the program's buffer holds its param_value_size bytes, which the
                    // host checked against our layout's (twice the words of ours).
                    unsafe { write32(value, k, out) };
                }
            }
        }
    }
}

/// The error of a failed conversion, where entry point `shape`'s caller looks for it: a handle
/// comes back NULL with the code in `errcode_ret` (the last argument of each such entry point).
///
/// # Safety
/// `a32` are the program's arguments of an entry point shaped `args`.
unsafe fn failure(args: &[Arg], ret: Ret, a32: &[u64; MAX_ARGS], code: i32) -> u64 {
    match ret {
        Ret::Value => code as i64 as u64,
        Ret::Handle => {
            let errcode = args.len().checked_sub(1).map_or(0, |k| a32[k]);
            if errcode != 0 {
                // SAFETY: the program's cl_int *errcode_ret.
                unsafe { write32(errcode, 0, code as u32) };
            }
            0
        }
    }
}

/// Unix call `CALL` from a 32-bit program: the entry point's arguments converted, the call made
/// as a 64-bit program's, the results converted back.
///
/// # Safety
/// `p` is a 32-bit program's `struct dxcl_call`.
pub unsafe fn call(host: &Host, p: &mut Call) -> Option<u64> {
    let shape = *gen::SHAPES.get(p.function as usize)?;
    Some(match shape {
        Shape::Windows => return None,
        Shape::Unsupported(why, fail) => {
            eprintln!(
                "dxclcl: {} is not bridged for 32-bit programs: {why}",
                crate::gen::NAMES[p.function as usize]
            );
            match fail {
                Fail::Code => CL_INVALID_OPERATION as i64 as u64,
                Fail::Null => 0,
                Fail::Errcode(k) => {
                    if p.args[k] != 0 {
                        // SAFETY: the program's cl_int *errcode_ret.
                        unsafe { write32(p.args[k], 0, CL_INVALID_OPERATION as u32) };
                    }
                    0
                }
            }
        }
        Shape::ByHand => match p.function {
            // SAFETY: the program's arguments of that entry point.
            index::clEnqueueMapBuffer => unsafe { mapping::map_buffer(host, &p.args) },
            // SAFETY: as above.
            index::clEnqueueMapImage => unsafe { mapping::map_image(host, &p.args) },
            // SAFETY: as above.
            index::clEnqueueUnmapMemObject => unsafe { mapping::unmap(host, &p.args) },
            // SAFETY: as above (clSetKernelArg, the one other by hand).
            _ => unsafe { set_kernel_arg(host, &p.args) },
        },
        Shape::Call(args, ret) => {
            // SAFETY: the program's arguments of this entry point.
            let mut f = match unsafe { convert_in(p.function, args, &p.args) } {
                Ok(f) => f,
                // SAFETY: as above.
                Err(code) => return Some(unsafe { failure(args, ret, &p.args, code) }),
            };
            // SAFETY: the frame holds the host-layout arguments of the same entry point.
            let r = unsafe { dispatch(host, p.function, &mut f.a) };
            let failed = match ret {
                Ret::Value => r as i32 != 0,
                Ret::Handle => r == 0,
            };
            // A failed call promises nothing in its out arguments.
            if !failed {
                // SAFETY: the frame's write-backs name the program's arrays.
                unsafe { convert_out(&f) };
            }
            match ret {
                Ret::Value => r,
                Ret::Handle => handles::narrow(r) as u64,
            }
        }
    })
}

/// The host's answer for a 64-bit caller's arguments (extension lists filtered, Direct3D
/// properties given stand-ins: `special::call`, as for a 64-bit program).
///
/// # Safety
/// `a` are host-layout arguments of entry point `i`.
unsafe fn dispatch(host: &Host, i: u32, a: &mut [u64; MAX_ARGS]) -> u64 {
    // SAFETY: the caller's contract.
    if let Some(r) = unsafe { special::call(host, i, a) } {
        return r;
    }
    special::forward(host, i, a)
}

/// `clSetKernelArg`: a 4-byte value that is one of the program's handles, for an argument that
/// takes a memory object or a sampler, is the host's object (8 bytes); anything else is bytes.
///
/// # Safety
/// `a32` are a 32-bit program's clSetKernelArg arguments.
unsafe fn set_kernel_arg(host: &Host, a32: &[u64; MAX_ARGS]) -> u64 {
    let kernel = handles::widen(a32[0] as u32);
    let (arg_index, size, value) = (a32[1] as u32, a32[2] as u32 as usize, a32[3]);
    let mut a = [0u64; MAX_ARGS];
    a[..4].copy_from_slice(&[kernel, arg_index as u64, size as u64, value]);
    // A buffer argument may also be given NULL: "arg_value can be NULL or point to a NULL value"
    // (clSetKernelArg); taken for one only where the kernel says the argument is an object.
    let held = if value == 0 {
        0
    } else {
        // SAFETY: the program's arg_value of arg_size (4) bytes, read only when size is 4.
        unsafe { read32(value, 0) }
    };
    let object = match (size, held) {
        (4, 0) => Some(0).filter(|_| takes_object(host, kernel, arg_index) == Some(true)),
        (4, token) => {
            handles::lookup(token).filter(|_| takes_object(host, kernel, arg_index) != Some(false))
        }
        _ => None,
    };
    let slot = object.unwrap_or(0);
    if let Some(host_object) = object {
        a[2] = 8;
        a[3] = if value == 0 && host_object == 0 {
            0
        } else {
            &slot as *const u64 as u64
        };
    }
    special::forward(host, index::clSetKernelArg, &a)
}

/// Whether argument `arg` of `kernel` takes a memory object or a sampler (its address space is
/// global or constant: buffers, images, pipes; or its type is `sampler_t`); `None` when the
/// kernel has no argument information (then a value that is a handle is taken for one).
fn takes_object(host: &Host, kernel: u64, arg: u32) -> Option<bool> {
    use opencl_sys::*;
    let f = host.function(index::clGetKernelArgInfo);
    if f.is_null() {
        return None;
    }
    // SAFETY: the host's clGetKernelArgInfo (its signature in gen::sig).
    let get: crate::gen::sig::clGetKernelArgInfo = unsafe { std::mem::transmute(f) };
    let mut space: u32 = 0;
    // SAFETY: the program's kernel; our 4-byte answer buffer.
    let r = unsafe {
        get(
            kernel as usize as *mut c_void,
            arg,
            CL_KERNEL_ARG_ADDRESS_QUALIFIER,
            4,
            (&mut space as *mut u32).cast(),
            std::ptr::null_mut(),
        )
    };
    if r != 0 {
        return None;
    }
    if space == CL_KERNEL_ARG_ADDRESS_GLOBAL || space == CL_KERNEL_ARG_ADDRESS_CONSTANT {
        return Some(true);
    }
    let mut name = [0u8; 16];
    // SAFETY: as above, with a 16-byte buffer ("sampler_t" fits; a longer name fails).
    let r = unsafe {
        get(
            kernel as usize as *mut c_void,
            arg,
            CL_KERNEL_ARG_TYPE_NAME,
            name.len(),
            name.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        )
    };
    Some(r == 0 && name.starts_with(b"sampler_t\0"))
}

/// Converts a callback taken for a 32-bit program: handles narrowed, the context error text
/// copied into the block (its private data is not passed: NULL, 0 bytes).
///
/// # Safety
/// `p.cb` was just filled by `callbacks::try_next`, whose argument memory lives until reported
/// done; `p` lies in the program's memory.
pub unsafe fn callback_out(p: &mut CallbackWow64) {
    match p.cb.kind {
        unixlib::CB_OBJECT | unixlib::CB_EVENT => {
            p.cb.args[0] = handles::narrow(p.cb.args[0]) as u64
        }
        unixlib::CB_CONTEXT_NOTIFY => {
            let text = if p.cb.args[0] == 0 {
                &[][..]
            } else {
                // SAFETY: the queued copy of the host's NUL-terminated text (callbacks.rs).
                unsafe {
                    std::ffi::CStr::from_ptr(p.cb.args[0] as usize as *const std::ffi::c_char)
                }
                .to_bytes()
            };
            let n = text.len().min(p.text.len() - 1);
            p.text[..n].copy_from_slice(&text[..n]);
            p.text[n] = 0;
            p.cb.args[0] = p.text.as_ptr() as u64;
            p.cb.args[1] = 0;
            p.cb.args[2] = 0;
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;

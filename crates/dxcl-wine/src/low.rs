//! Memory a 32-bit program's code can reach (Wine's new WoW64 mode). The host's allocations lie
//! above 4 GiB, where a 32-bit Direct3D object can neither read a method's arguments nor call a
//! wrapper, so the 32-bit `dxclcl.dll` hands a block of its own at start (`struct dxcl_start`):
//! one half holds the stand-ins' call frames (the pointees of a method's arguments, in the 32-bit
//! layout, remote.rs), the other the wrappers of the layer's COM objects. What does not fit a
//! frame (a mapping's copy, wow64/mapping.rs) is allocated below 2 GiB on its own ([`alloc`]).

use std::ffi::c_void;
use std::sync::{Condvar, LazyLock, Mutex, OnceLock};

/// Bytes of one call's frame: every remoted method's pointees fit many times over (the largest,
/// a texture description, is 44 bytes).
pub const FRAME: usize = 4096;
/// Bytes of one wrapper (`remote::Wrapper`: 24, rounded up).
pub const WRAPPER: usize = 32;

/// Equal slots of a region, handed out and back.
pub struct Pool {
    free: Mutex<Vec<u64>>,
    freed: Condvar,
}

impl Pool {
    fn new(base: u64, slot: usize, count: usize) -> Pool {
        Pool {
            free: Mutex::new((0..count).rev().map(|k| base + (k * slot) as u64).collect()),
            freed: Condvar::new(),
        }
    }

    /// A free slot, waiting for one while all are taken (a frame is held for one call).
    pub fn take(&self) -> u64 {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(a) = free.pop() {
                return a;
            }
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// A free slot, or `None` when all are taken.
    pub fn try_take(&self) -> Option<u64> {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).pop()
    }

    pub fn give(&self, slot: u64) {
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(slot);
        self.freed.notify_one();
    }
}

/// The program's block, split.
pub struct Low {
    pub frames: Pool,
    pub wrappers: Pool,
}

static LOW: OnceLock<Low> = OnceLock::new();

/// Takes the 32-bit side's block of `size` bytes at `base` (once; 0 for a 64-bit program, whose
/// objects reach the host's memory). False when the block is not usable (too small, above 4 GiB,
/// or a second one).
pub fn set(base: u64, size: u64) -> bool {
    let half = (size / 2) as usize;
    if base == 0 || !base.is_multiple_of(8) || base + size > 1 << 32 || half < FRAME {
        return false;
    }
    LOW.set(Low {
        frames: Pool::new(base, FRAME, half / FRAME),
        wrappers: Pool::new(base + half as u64, WRAPPER, half / WRAPPER),
    })
    .is_ok()
}

/// The block, when a 32-bit program's side gave one.
pub fn get() -> Option<&'static Low> {
    LOW.get()
}

/// The highest address memory for a 32-bit program may end at: below 2 GiB, where every 32-bit
/// program reaches.
pub const REACH: u64 = 1 << 31;

/// Wine's ntdll allocation functions for its unix libraries, where this library runs under Wine.
type NtAllocate = unsafe extern "C" fn(isize, *mut *mut c_void, usize, *mut usize, u32, u32) -> u32;
type NtFree = unsafe extern "C" fn(isize, *mut *mut c_void, *mut usize, u32) -> u32;

const CURRENT_PROCESS: isize = -1;
const MEM_COMMIT_RESERVE: u32 = 0x3000;
const MEM_RELEASE: u32 = 0x8000;
const PAGE_READWRITE: u32 = 4;
/// `zero_bits` as a mask: the allocation ends below 2 GiB.
const BELOW_2_GIB: usize = 0x7fff_ffff;

fn ntdll() -> Option<(NtAllocate, NtFree)> {
    static F: LazyLock<Option<(NtAllocate, NtFree)>> = LazyLock::new(|| {
        // SAFETY: looking up symbols of the loaded libraries; NUL-terminated names.
        let (a, f) = unsafe {
            (
                libc::dlsym(libc::RTLD_DEFAULT, c"NtAllocateVirtualMemory".as_ptr()),
                libc::dlsym(libc::RTLD_DEFAULT, c"NtFreeVirtualMemory".as_ptr()),
            )
        };
        // SAFETY: Wine's ntdll.so exports both for its unix libraries, with these signatures
        // (the C convention: WINAPI is empty there).
        (!a.is_null() && !f.is_null()).then(|| unsafe {
            (
                std::mem::transmute::<*mut c_void, NtAllocate>(a),
                std::mem::transmute::<*mut c_void, NtFree>(f),
            )
        })
    });
    *F
}

/// A fresh `MAP_32BIT` mapping of `size` bytes (in the low 2 GiB), where no Wine manages the
/// address space.
fn map_32bit(size: usize) -> Option<u64> {
    // SAFETY: a fresh anonymous private mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_32BIT,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some(p as u64)
}

/// `bytes` of zeroed memory a 32-bit program reaches (below [`REACH`]), beyond the block: in Wine,
/// its own ntdll's allocation below 2 GiB (Wine's unix libraries allocate so for 32-bit callers,
/// with the same `zero_bits` mask); elsewhere (the unit tests) a `MAP_32BIT` mapping.
pub fn alloc(bytes: usize) -> Option<u64> {
    let size = bytes.max(1);
    let addr = match ntdll() {
        Some((allocate, _)) => {
            let (mut addr, mut size) = (std::ptr::null_mut(), size);
            // SAFETY: Wine's NtAllocateVirtualMemory with out-pointers to our locals.
            let status = unsafe {
                allocate(
                    CURRENT_PROCESS,
                    &mut addr,
                    BELOW_2_GIB,
                    &mut size,
                    MEM_COMMIT_RESERVE,
                    PAGE_READWRITE,
                )
            };
            (status == 0).then_some(addr as u64)?
        }
        None => map_32bit(size)?,
    };
    (addr + size as u64 <= REACH).then_some(addr).or_else(|| {
        free(addr, size);
        None
    })
}

/// Gives back what [`alloc`] gave for `bytes`.
pub fn free(addr: u64, bytes: usize) {
    match ntdll() {
        Some((_, free)) => {
            let (mut addr, mut size) = (addr as usize as *mut c_void, 0);
            // SAFETY: memory NtAllocateVirtualMemory gave; size 0 releases all of it.
            unsafe { free(CURRENT_PROCESS, &mut addr, &mut size, MEM_RELEASE) };
        }
        None => {
            // SAFETY: a mapping alloc made of that size, no longer used.
            unsafe { libc::munmap(addr as usize as *mut c_void, bytes.max(1)) };
        }
    }
}

/// A fresh mapping of `size` bytes in the low 2 GiB (`MAP_32BIT`), where a 32-bit program's memory
/// lies: the tests' stand-in for it.
#[cfg(test)]
pub fn test_mapping(size: usize) -> u64 {
    let p = map_32bit(size).expect("mmap MAP_32BIT");
    assert!(p < 1 << 32);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pool_hands_out_each_slot_once_until_it_comes_back() {
        let p = Pool::new(0x1000, 32, 3);
        let taken: Vec<u64> = (0..3).map(|_| p.take()).collect();
        assert_eq!(taken, [0x1000, 0x1020, 0x1040]);
        assert_eq!(p.try_take(), None);
        p.give(0x1020);
        assert_eq!(p.try_take(), Some(0x1020));
    }
}

//! The staging copy's host shadow: where the bytes wait between Direct3D's staging resource and
//! the OpenCL memory object.
//!
//! On a device without host-unified memory (a discrete GPU) a shadow of 4 KiB or more is pinned:
//! the mapping of a `CL_MEM_ALLOC_HOST_PTR` buffer of the memory object's context, which the
//! platform copies at the bus's speed, where copies from ordinary (pageable) memory go through
//! the platform's own bounce buffers at a fraction of it. Elsewhere, and where pinning fails, it
//! is ordinary heap memory. `DXCL_STAGING_PINNED=1` pins on any device and any size, `0` never
//! (for tests and comparisons).
//!
//! The pinned buffer holds the context, which must die with the application's objects: once the
//! application's last reference to the memory object is gone, [`Shadow::detach`] moves the bytes
//! a pending write-back still needs to the heap and lets the buffer go.

use opencl_sys::{
    cl_command_queue, cl_context, cl_int, cl_mem, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR,
    CL_MEM_READ_WRITE, CL_OUT_OF_RESOURCES, CL_SUCCESS, CL_TRUE,
};

use crate::cl::{check, down, release_thread};

pub(super) struct Shadow {
    bytes: Bytes,
}

enum Bytes {
    Heap(Vec<u8>),
    /// A `CL_MEM_ALLOC_HOST_PTR` buffer (owned), mapped through the layer's own queue (owned):
    /// `len` bytes at `at`.
    Pinned {
        mem: cl_mem,
        queue: cl_command_queue,
        at: *mut u8,
        len: usize,
    },
}

// SAFETY: the pinned mapping is plain host memory valid until the buffer is unmapped and
// released, which only Drop does; the OpenCL handles are usable from any thread. Access goes
// through &mut / & as for a Vec.
unsafe impl Send for Shadow {}

/// From this size on a shadow is pinned by default. On an H200, with Direct3D's copies on a copy
/// engine, a staging hand-off of 4 or 16 KiB took 34–39 µs with a pinned shadow against
/// 43–124 µs with a heap one (two alternating runs; docs/architecture.md): the platform copies to
/// and from heap memory through its own bounce buffer. Below it pinning stays off: it costs a
/// buffer, a queue and a map per object, and on an H200 with DXVK-native, contexts' 256-byte
/// objects with pinned shadows saw NVIDIA destroy their context late after the application's last
/// release (docs/gpu.md).
const PINNED_FROM: usize = 4 << 10;

/// Whether `DXCL_STAGING_PINNED` or the device asks for a pinned shadow of `len` bytes.
pub(super) fn wants_pinned(host_unified: bool, len: usize) -> bool {
    match std::env::var("DXCL_STAGING_PINNED").as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => !host_unified && len >= PINNED_FROM,
    }
}

impl Shadow {
    pub fn heap(len: usize) -> Shadow {
        Shadow {
            bytes: Bytes::Heap(vec![0; len]),
        }
    }

    pub fn is_pinned(&self) -> bool {
        matches!(self.bytes, Bytes::Pinned { .. })
    }

    /// Moves the shadow into pinned memory of `context`, mapped through a queue of the layer's own
    /// on `queue`'s device (a map on the application's queue would wait for its earlier commands,
    /// which may wait for a user event the application sets later). Stays on the heap when
    /// the platform refuses; the bytes are not kept (it is done before the first download).
    pub fn pin(&mut self, context: cl_context, queue: cl_command_queue) {
        let len = self.len();
        if self.is_pinned() || len == 0 {
            return;
        }
        match pinned_buffer(context, queue, len) {
            Ok((mem, queue, at)) => {
                self.bytes = Bytes::Pinned {
                    mem,
                    queue,
                    at,
                    len,
                };
                crate::strategy::log("staging", format_args!("shadow of {len} bytes pinned"));
            }
            // The platform's copies from heap memory go through its own bounce buffer: slower
            // (see PINNED_FROM), so a log says why.
            Err(e) => crate::strategy::log(
                "staging",
                format_args!("shadow of {len} bytes stays on the heap: pinning failed ({e})"),
            ),
        }
    }

    /// Lets go of pinned memory: the bytes move to the heap (a write-back may still need them)
    /// and the buffer is released on this thread, which must be one that may release it (the
    /// application's release of the memory object, which still holds the context, or the
    /// layer's releasing thread): an application that then lets go of the context finds it
    /// gone when its own last release returns, with the Direct3D device's references.
    pub fn detach(&mut self) {
        let Bytes::Pinned { mem, queue, at, .. } = self.bytes else {
            return;
        };
        let heap = self.as_slice().to_vec();
        let pinned = std::mem::replace(&mut self.bytes, Bytes::Heap(heap));
        // Released below instead of by its Drop (which defers to the releasing thread); the
        // variant's fields are plain handles, so forgetting it leaks nothing.
        std::mem::forget(pinned);
        free_pinned(mem, queue, at);
    }

    pub fn len(&self) -> usize {
        match &self.bytes {
            Bytes::Heap(v) => v.len(),
            Bytes::Pinned { len, .. } => *len,
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Heap(v) => v,
            // SAFETY: the mapping holds `len` bytes and lives as long as `self`.
            Bytes::Pinned { at, len, .. } => unsafe { std::slice::from_raw_parts(*at, *len) },
        }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match &mut self.bytes {
            Bytes::Heap(v) => v,
            // SAFETY: as in as_slice; `&mut self` makes this the only access.
            Bytes::Pinned { at, len, .. } => unsafe { std::slice::from_raw_parts_mut(*at, *len) },
        }
    }
}

impl Drop for Bytes {
    fn drop(&mut self) {
        if let Bytes::Pinned { mem, queue, at, .. } = *self {
            // The buffer and queue may hold the context's last references, and a shadow may be
            // dropped on a platform's callback thread: released on the layer's releasing
            // thread, unmapped first (a platform may keep a mapped buffer, and its context).
            let (mem, queue, at) = (mem as usize, queue as usize, at as usize);
            release_thread::later(Box::new(move || {
                free_pinned(mem as cl_mem, queue as cl_command_queue, at as *mut u8)
            }));
        }
    }
}

/// Unmaps and releases a pinned shadow's buffer and the queue that mapped it.
fn free_pinned(mem: cl_mem, queue: cl_command_queue, at: *mut u8) {
    unmap(queue, mem, at.cast());
    crate::cl::release_queue(queue);
    crate::cl::release_mem(mem);
}

/// Unmaps `at` of `mem` through `queue` and waits for it.
fn unmap(queue: cl_command_queue, mem: cl_mem, at: *mut std::ffi::c_void) {
    let Some(t) = crate::cl::target() else { return };
    if let (Some(unmap), Some(finish)) = (t.clEnqueueUnmapMemObject, t.clFinish) {
        // SAFETY: the layer's own queue and buffer, `at` its mapping; nobody uses the mapping
        // any more (its shadow is gone).
        unsafe {
            if unmap(queue, mem, at, 0, std::ptr::null(), std::ptr::null_mut()) == CL_SUCCESS {
                finish(queue);
            }
        }
    }
}

/// A mapped `CL_MEM_ALLOC_HOST_PTR` buffer of `len` bytes in `context`, and the layer's queue
/// that mapped it.
fn pinned_buffer(
    context: cl_context,
    queue: cl_command_queue,
    len: usize,
) -> Result<(cl_mem, cl_command_queue, *mut u8), cl_int> {
    let device = crate::cl::queue_device(queue)?;
    let create = down!(clCreateBuffer);
    let map = down!(clEnqueueMapBuffer);
    let mut err: cl_int = CL_SUCCESS;
    let flags = CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR;
    // SAFETY: a live context; no host pointer; `err` is a valid out pointer.
    let mem = unsafe { create(context, flags, len, std::ptr::null_mut(), &mut err) };
    check(err)?;
    crate::cl::held::took(crate::cl::held::Kind::Memory, mem);
    let Some(q) = crate::cl::create_queue(context, device) else {
        crate::cl::release_mem(mem);
        return Err(CL_OUT_OF_RESOURCES);
    };
    // SAFETY: our own new buffer and queue; a blocking map of the whole buffer, no wait list.
    let at = unsafe {
        map(
            q,
            mem,
            CL_TRUE,
            CL_MAP_READ | CL_MAP_WRITE,
            0,
            len,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
            &mut err,
        )
    };
    if err != CL_SUCCESS || at.is_null() {
        crate::cl::release_queue(q);
        crate::cl::release_mem(mem);
        return Err(CL_OUT_OF_RESOURCES);
    }
    Ok((mem, q, at.cast()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A discrete device's shadow is pinned from 4 KiB up; a host-unified device's never (its
    /// memory is the host's). `DXCL_STAGING_PINNED` set in the environment decides instead.
    #[test]
    fn shadows_are_pinned_from_4_kib_on_discrete_devices() {
        if std::env::var_os("DXCL_STAGING_PINNED").is_some() {
            return;
        }
        assert!(wants_pinned(false, 4 << 10));
        assert!(wants_pinned(false, 64 << 10));
        assert!(wants_pinned(false, 256 << 20));
        assert!(!wants_pinned(false, (4 << 10) - 1));
        assert!(!wants_pinned(false, 256));
        assert!(!wants_pinned(true, 256 << 20));
    }
}

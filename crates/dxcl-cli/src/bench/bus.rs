//! The bus baseline: the platform's own copies of the bytes a staging hand-off moves, with no
//! Direct3D and no dxcl in them. A staging hand-off copies the object in at acquire and out at
//! release; here the same two copies are `clEnqueueWriteBuffer` from host memory into a device
//! buffer, `clEnqueueReadBuffer` back into it, and `clFinish`, from pinned host memory (a
//! `CL_MEM_ALLOC_HOST_PTR` buffer mapped once: what platforms copy from at the bus's speed) and,
//! for contrast, from pageable memory (a plain allocation).

use super::session::Session;
use crate::cl::{self, check as cl_check, ClError, ClHandle};
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;

type BoxError = Box<dyn std::error::Error>;

#[link(name = "OpenCL")]
extern "system" {
    fn clCreateBuffer(
        c: cl_context,
        flags: cl_mem_flags,
        size: usize,
        host: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
    fn clEnqueueMapBuffer(
        q: cl_command_queue,
        m: cl_mem,
        blocking: cl_bool,
        flags: cl_map_flags,
        offset: usize,
        size: usize,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
        err: *mut cl_int,
    ) -> *mut c_void;
    fn clEnqueueUnmapMemObject(
        q: cl_command_queue,
        m: cl_mem,
        p: *mut c_void,
        n: cl_uint,
        wait: *const cl_event,
        event: *mut cl_event,
    ) -> cl_int;
}

/// Where the host side of the copies lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    Pinned,
    Pageable,
}

/// A device buffer of `bytes` and the two host memories it is copied to and from.
pub struct Bus {
    queue: cl_command_queue,
    bytes: usize,
    device: ClHandle<cl_mem>,
    pinned: ClHandle<cl_mem>,
    /// The pinned buffer's mapping, for as long as the `Bus` lives.
    pinned_at: *mut u8,
    /// A plain allocation of `bytes` (a leaked `Box<[u8]>`, taken back on drop): written by the
    /// platform's reads while only shared references to the `Bus` exist.
    pageable: *mut [u8],
}

fn buffer(context: cl_context, flags: cl_mem_flags, bytes: usize) -> Result<cl_mem, ClError> {
    let mut err = 0;
    // SAFETY: a valid context; no host pointer.
    let mem = unsafe { clCreateBuffer(context, flags, bytes, ptr::null_mut(), &mut err) };
    cl_check("clCreateBuffer", err)?;
    Ok(mem)
}

impl Bus {
    pub fn new(session: &Session, bytes: usize) -> Result<Bus, BoxError> {
        let (queue, context) = (session.queue(), session.cl_context());
        let device = ClHandle(
            buffer(context, CL_MEM_READ_WRITE, bytes)?,
            cl::clReleaseMemObject,
        );
        let pinned = ClHandle(
            buffer(context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes)?,
            cl::clReleaseMemObject,
        );
        let mut err = 0;
        // SAFETY: a valid queue and buffer of `bytes`; blocking, no events.
        let at = unsafe {
            clEnqueueMapBuffer(
                queue,
                pinned.0,
                CL_TRUE,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                bytes,
                0,
                ptr::null(),
                ptr::null_mut(),
                &mut err,
            )
        };
        cl_check("clEnqueueMapBuffer", err)?;
        Ok(Bus {
            queue,
            bytes,
            device,
            pinned,
            pinned_at: at.cast(),
            pageable: Box::into_raw(vec![0u8; bytes].into_boxed_slice()),
        })
    }

    fn host(&self, host: Host) -> *mut u8 {
        match host {
            Host::Pinned => self.pinned_at,
            Host::Pageable => self.pageable.cast(),
        }
    }

    /// Host → device, device → host: non-blocking unless `blocking`.
    fn copy(&self, host: Host, to_device: bool, blocking: bool) -> Result<(), ClError> {
        let (q, m, n) = (self.queue, self.device.0, self.bytes);
        let p = self.host(host).cast::<c_void>();
        let b = if blocking { CL_TRUE } else { CL_FALSE };
        // SAFETY: `p` spans `n` bytes (the mapping, or the allocation), alive until the `Bus`
        // drops, which finishes the queue first; no events.
        let status = unsafe {
            if to_device {
                cl::clEnqueueWriteBuffer(q, m, b, 0, n, p, 0, ptr::null(), ptr::null_mut())
            } else {
                cl::clEnqueueReadBuffer(q, m, b, 0, n, p, 0, ptr::null(), ptr::null_mut())
            }
        };
        cl_check(
            if to_device {
                "clEnqueueWriteBuffer"
            } else {
                "clEnqueueReadBuffer"
            },
            status,
        )
    }

    /// The timed operation: the hand-off's two copies, then `clFinish`.
    pub fn copies(&self, host: Host) -> Result<(), ClError> {
        self.copy(host, true, false)?;
        self.copy(host, false, false)?;
        // SAFETY: a valid queue.
        cl_check("clFinish", unsafe { cl::clFinish(self.queue) })
    }

    /// Checks, untimed, that both copies move the bytes: a pattern written from `host` reads
    /// back into it after `host` was cleared.
    pub fn verify(&self, host: Host, seed: u32) -> Result<(), BoxError> {
        let expected = super::session::pattern(self.bytes, seed);
        // SAFETY: the host memory spans `bytes` bytes; no copy is in flight (all blocking).
        let at = unsafe { std::slice::from_raw_parts_mut(self.host(host), self.bytes) };
        at.copy_from_slice(&expected);
        self.copy(host, true, true)?;
        at.fill(0);
        self.copy(host, false, true)?;
        if at != expected.as_slice() {
            return Err(format!("the {host:?} copies lost bytes").into());
        }
        Ok(())
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; the queue is valid; then no copy is
        // in flight, so the allocation is ours alone again.
        unsafe {
            clEnqueueUnmapMemObject(
                self.queue,
                self.pinned.0,
                self.pinned_at.cast(),
                0,
                ptr::null(),
                ptr::null_mut(),
            );
            cl::clFinish(self.queue);
            drop(Box::from_raw(self.pageable));
        }
    }
}

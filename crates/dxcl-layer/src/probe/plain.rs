//! Plain OpenCL objects made through one dispatch table (the platform's own, or the table below
//! the layer), released when dropped. What the probes need and nothing more; a failed call
//! becomes a sentence naming it, which a probe reports as "could not tell".

use std::ptr::{null, null_mut};

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::*;

use crate::cl::info::query_value;

pub(super) type Step<T> = Result<T, String>;

/// A slot of the table, or the sentence saying the platform lacks it.
macro_rules! slot {
    ($t:expr, $name:ident) => {
        $t.$name.ok_or_else(|| {
            concat!(stringify!($name), " is missing from the dispatch table").to_string()
        })?
    };
}
pub(super) use slot;

/// `Ok` for CL_SUCCESS, else the sentence "`what` failed with `code`".
pub(super) fn ok(code: cl_int, what: &str) -> Step<()> {
    if code == CL_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed with {}", name(code)))
    }
}

/// The name of the errors a probe is likeliest to meet; the number otherwise.
pub(super) fn name(code: cl_int) -> String {
    match code {
        CL_DEVICE_NOT_FOUND => "CL_DEVICE_NOT_FOUND".into(),
        CL_OUT_OF_RESOURCES => "CL_OUT_OF_RESOURCES".into(),
        CL_OUT_OF_HOST_MEMORY => "CL_OUT_OF_HOST_MEMORY".into(),
        CL_IMAGE_FORMAT_NOT_SUPPORTED => "CL_IMAGE_FORMAT_NOT_SUPPORTED".into(),
        CL_BUILD_PROGRAM_FAILURE => "CL_BUILD_PROGRAM_FAILURE".into(),
        CL_INVALID_VALUE => "CL_INVALID_VALUE".into(),
        CL_INVALID_OPERATION => "CL_INVALID_OPERATION".into(),
        other => format!("error {other}"),
    }
}

/// A context on one device, with an in-order queue, both released when dropped.
pub(super) struct Plain<'t> {
    pub t: &'t cl_icd_dispatch,
    pub context: cl_context,
    pub queue: cl_command_queue,
}

impl<'t> Plain<'t> {
    pub fn new(t: &'t cl_icd_dispatch, device: cl_device_id) -> Step<Self> {
        let info = slot!(t, clGetDeviceInfo);
        // SAFETY: our own buffer of the queried type's size; the platform validates the device.
        let platform: usize =
            query_value(|n, p, r| unsafe { info(device, CL_DEVICE_PLATFORM, n, p, r) })
                .map_err(|e| format!("clGetDeviceInfo(CL_DEVICE_PLATFORM) failed with {e}"))?;
        let props = [
            CL_CONTEXT_PLATFORM as cl_context_properties,
            platform as _,
            0,
        ];
        let create = slot!(t, clCreateContext);
        let mut err = CL_SUCCESS;
        // SAFETY: a zero-terminated property list and one device, both alive for the call.
        let context = unsafe { create(props.as_ptr(), 1, &device, None, null_mut(), &mut err) };
        ok(err, "clCreateContext")?;
        let mut plain = Plain {
            t,
            context,
            queue: null_mut(),
        };
        #[allow(deprecated)] // OpenCL 1.x slot: every platform's table has it.
        let create_queue = slot!(t, clCreateCommandQueue);
        // SAFETY: the context just made and its device; no properties (in order).
        plain.queue = unsafe { create_queue(context, device, 0, &mut err) };
        ok(err, "clCreateCommandQueue")?;
        Ok(plain)
    }

    /// A buffer of `size` bytes; `host` with CL_MEM_USE_HOST_PTR.
    pub fn buffer(&self, size: usize, host: Option<*mut u8>) -> Step<Mem<'t>> {
        let create = slot!(self.t, clCreateBuffer);
        let flags = CL_MEM_READ_WRITE | host.map_or(0, |_| CL_MEM_USE_HOST_PTR);
        let mut err = CL_SUCCESS;
        // SAFETY: with CL_MEM_USE_HOST_PTR the caller's pointer spans `size` bytes that outlive
        // the buffer (the probe drops the object before its memory).
        let mem = unsafe {
            create(
                self.context,
                flags,
                size,
                host.map_or(null_mut(), |p| p.cast()),
                &mut err,
            )
        };
        ok(err, "clCreateBuffer")?;
        Ok(Mem { t: self.t, mem })
    }

    /// A 2D image of `format`, `width` × `height`; `host` (pointer, row pitch) with
    /// CL_MEM_USE_HOST_PTR; `depth` is the description's image_depth.
    pub fn image_2d(
        &self,
        format: cl_image_format,
        (width, height, depth): (usize, usize, usize),
        host: Option<(*mut u8, usize)>,
    ) -> Step<Mem<'t>> {
        let create = slot!(self.t, clCreateImage);
        let flags = CL_MEM_READ_WRITE | host.map_or(0, |_| CL_MEM_USE_HOST_PTR);
        let desc = cl_image_desc {
            image_type: CL_MEM_OBJECT_IMAGE2D,
            image_width: width,
            image_height: height,
            image_depth: depth,
            image_array_size: 0,
            image_row_pitch: host.map_or(0, |(_, pitch)| pitch),
            image_slice_pitch: 0,
            num_mip_levels: 0,
            num_samples: 0,
            buffer: null_mut(),
        };
        let mut err = CL_SUCCESS;
        // SAFETY: format and description live for the call; with CL_MEM_USE_HOST_PTR the
        // caller's memory spans row_pitch × height bytes and outlives the image.
        let mem = unsafe {
            create(
                self.context,
                flags,
                &format,
                &desc,
                host.map_or(null_mut(), |(p, _)| p.cast()),
                &mut err,
            )
        };
        ok(err, "clCreateImage")?;
        Ok(Mem { t: self.t, mem })
    }

    /// Copies `size` bytes from `src` to `dst` on the device and waits for it (for its event, not
    /// `clFinish`, which returns early on some platforms: docs/conformance.md).
    pub fn copy_buffer(&self, src: &Mem, dst: &Mem, size: usize) -> Step<()> {
        let f = slot!(self.t, clEnqueueCopyBuffer);
        let mut ev = null_mut();
        // SAFETY: two buffers of this context of at least `size` bytes.
        let r = unsafe { f(self.queue, src.mem, dst.mem, 0, 0, size, 0, null(), &mut ev) };
        ok(r, "clEnqueueCopyBuffer")?;
        self.wait(ev)
    }

    /// Fills `size` bytes of `dst` with `byte` and waits for it.
    pub fn fill_buffer(&self, dst: &Mem, byte: u8, size: usize) -> Step<()> {
        let f = slot!(self.t, clEnqueueFillBuffer);
        let mut ev = null_mut();
        // SAFETY: a buffer of this context of at least `size` bytes; a one-byte pattern that
        // lives for the call.
        let r = unsafe {
            f(
                self.queue,
                dst.mem,
                (&byte as *const u8).cast(),
                1,
                0,
                size,
                0,
                null(),
                &mut ev,
            )
        };
        ok(r, "clEnqueueFillBuffer")?;
        self.wait(ev)
    }

    /// Copies `region` of image `src` into buffer `dst`, packed, and waits for it.
    pub fn copy_image_to_buffer(&self, src: &Mem, dst: &Mem, region: [usize; 3]) -> Step<()> {
        let f = slot!(self.t, clEnqueueCopyImageToBuffer);
        let origin = [0usize; 3];
        let mut ev = null_mut();
        // SAFETY: an image of this context holding `region`, a buffer of its packed size.
        let r = unsafe {
            f(
                self.queue,
                src.mem,
                dst.mem,
                origin.as_ptr(),
                region.as_ptr(),
                0,
                0,
                null(),
                &mut ev,
            )
        };
        ok(r, "clEnqueueCopyImageToBuffer")?;
        self.wait(ev)
    }

    /// Copies buffer `src`, packed, into `region` of image `dst` and waits for it.
    pub fn copy_buffer_to_image(&self, src: &Mem, dst: &Mem, region: [usize; 3]) -> Step<()> {
        let f = slot!(self.t, clEnqueueCopyBufferToImage);
        let origin = [0usize; 3];
        let mut ev = null_mut();
        // SAFETY: a buffer of the region's packed size, an image of this context holding it.
        let r = unsafe {
            f(
                self.queue,
                src.mem,
                dst.mem,
                0,
                origin.as_ptr(),
                region.as_ptr(),
                0,
                null(),
                &mut ev,
            )
        };
        ok(r, "clEnqueueCopyBufferToImage")?;
        self.wait(ev)
    }

    /// Waits for `ev` and releases it.
    pub fn wait(&self, ev: cl_event) -> Step<()> {
        let wait = slot!(self.t, clWaitForEvents);
        let release = slot!(self.t, clReleaseEvent);
        // SAFETY: an event of this queue we own; released once.
        let r = unsafe { wait(1, &ev) };
        // SAFETY: as above.
        unsafe { release(ev) };
        ok(r, "clWaitForEvents")
    }
}

impl Drop for Plain<'_> {
    fn drop(&mut self) {
        // SAFETY: objects this value made and holds one reference to each; the queue's work is
        // done (every probe step waits for its commands).
        unsafe {
            if let (false, Some(f)) = (self.queue.is_null(), self.t.clReleaseCommandQueue) {
                f(self.queue);
            }
            if let Some(f) = self.t.clReleaseContext {
                f(self.context);
            }
        }
    }
}

/// A memory object released when dropped.
pub(super) struct Mem<'t> {
    t: &'t cl_icd_dispatch,
    pub mem: cl_mem,
}

impl Drop for Mem<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.t.clReleaseMemObject {
            // SAFETY: the object this value made and holds one reference to.
            unsafe { f(self.mem) };
        }
    }
}

//! Plain OpenCL objects made through one dispatch table (the platform's own, or the table below
//! the layer), released when dropped. What the probes need and nothing more; a failed call
//! becomes a sentence naming it, which a probe reports as "could not tell".

use std::ffi::{c_char, c_void};
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
    pub device: cl_device_id,
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
            device,
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

    /// Builds `source` for the device.
    pub fn program(&self, source: &str) -> Step<Program<'t>> {
        let create = slot!(self.t, clCreateProgramWithSource);
        let build = slot!(self.t, clBuildProgram);
        let mut src = source.as_ptr().cast::<c_char>();
        let len = source.len();
        let mut err = CL_SUCCESS;
        // SAFETY: one string of `len` bytes, alive for the call.
        let program = unsafe { create(self.context, 1, &mut src, &len, &mut err) };
        ok(err, "clCreateProgramWithSource")?;
        let program = Program { t: self.t, program };
        // SAFETY: the program just made, its context's one device, an empty option string.
        let r = unsafe {
            build(
                program.program,
                1,
                &self.device,
                c"".as_ptr(),
                None,
                null_mut(),
            )
        };
        ok(r, "clBuildProgram")?;
        Ok(program)
    }

    /// Runs `kernel` over `global` (1 or 2 dimensions) and waits for its event (not for
    /// `clFinish`, which returns early on some platforms: docs/conformance.md).
    pub fn run(&self, kernel: &Kernel, global: &[usize]) -> Step<()> {
        let enqueue = slot!(self.t, clEnqueueNDRangeKernel);
        let mut ev = null_mut();
        // SAFETY: a kernel of this context with every argument set; `global` lives for the call.
        let r = unsafe {
            enqueue(
                self.queue,
                kernel.kernel,
                global.len() as cl_uint,
                null(),
                global.as_ptr(),
                null(),
                0,
                null(),
                &mut ev,
            )
        };
        ok(r, "clEnqueueNDRangeKernel")?;
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

pub(super) struct Program<'t> {
    t: &'t cl_icd_dispatch,
    program: cl_program,
}

impl<'t> Program<'t> {
    /// Kernel `name` with `args` (size, pointer to the value) set.
    pub fn kernel(
        &self,
        name: &std::ffi::CStr,
        args: &[(usize, *const c_void)],
    ) -> Step<Kernel<'t>> {
        let create = slot!(self.t, clCreateKernel);
        let set = slot!(self.t, clSetKernelArg);
        let mut err = CL_SUCCESS;
        // SAFETY: a built program and a zero-terminated name.
        let kernel = unsafe { create(self.program, name.as_ptr(), &mut err) };
        ok(err, "clCreateKernel")?;
        let kernel = Kernel { t: self.t, kernel };
        for (i, (size, value)) in args.iter().enumerate() {
            // SAFETY: each value points to `size` bytes alive for the call.
            ok(
                unsafe { set(kernel.kernel, i as cl_uint, *size, *value) },
                "clSetKernelArg",
            )?;
        }
        Ok(kernel)
    }
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.t.clReleaseProgram {
            // SAFETY: the program this value made and holds one reference to.
            unsafe { f(self.program) };
        }
    }
}

pub(super) struct Kernel<'t> {
    t: &'t cl_icd_dispatch,
    kernel: cl_kernel,
}

impl Drop for Kernel<'_> {
    fn drop(&mut self) {
        if let Some(f) = self.t.clReleaseKernel {
            // SAFETY: the kernel this value made and holds one reference to.
            unsafe { f(self.kernel) };
        }
    }
}

/// A kernel argument: a memory object.
pub(super) fn arg_mem(m: &Mem) -> (usize, *const c_void) {
    (size_of::<cl_mem>(), (&m.mem as *const cl_mem).cast())
}

/// A kernel argument: a plain value.
pub(super) fn arg<T>(v: &T) -> (usize, *const c_void) {
    (size_of::<T>(), (v as *const T).cast())
}

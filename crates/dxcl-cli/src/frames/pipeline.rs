//! The four ways of running one frame: Direct3D's texture in, the blur, the result copied onward.
//! Each case owns its OpenCL context, queue, kernel and images; all share one Direct3D device
//! (`Gpu`), which outlives them.

use super::breakdown::Marks;
use super::image::{Extent, KERNEL_NAME, KERNEL_SOURCE};
use crate::bench::session::{describe_adapter, preferred_platform, Sharing};
use crate::cl::{self, check as cl_check, ClHandle};
use crate::d3d::{self, check as hr_check, Com};
use crate::demo::build_kernel;
use crate::sharing::{self, D3d11Sharing};
use dxcl_abi::*;
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;

pub type BoxError = Box<dyn std::error::Error>;

/// The Direct3D 11 device and the OpenCL device the layer prefers for it.
pub struct Gpu {
    device: Com<ID3D11Device>,
    context: Com<ID3D11DeviceContext>,
    pub(super) platform: cl_platform_id,
    pub(super) cl_device: cl_device_id,
    api: D3d11Sharing,
    pub extent: Extent,
    /// The D3D adapter, as `dxcl info` shows it.
    pub adapter: String,
    /// "[index] name" of the OpenCL platform, and the device's name.
    pub platform_name: String,
    pub cl_device_name: String,
}

/// A texture's purpose decides its usage and CPU access.
#[derive(Clone, Copy)]
enum Usage {
    /// `D3D11_USAGE_DEFAULT`, shader resource and render target: what a renderer makes.
    Default,
    /// `D3D11_USAGE_STAGING` with CPU read access: what Map reads.
    Staging,
}

impl Gpu {
    pub fn open(driver: D3D_DRIVER_TYPE, extent: Extent) -> Result<Gpu, BoxError> {
        let (device, context) = d3d::create_device_of(driver)?;
        let adapter = describe_adapter(&device);
        let (index, platform, cl_device) = preferred_platform(device.as_raw())?;
        let api = D3d11Sharing::lookup(platform)
            .ok_or("the platform lacks cl_khr_d3d11_sharing's entry points")?;
        let images: cl_bool = cl::device_value(cl_device, CL_DEVICE_IMAGE_SUPPORT)?;
        let max_w: usize = cl::device_value(cl_device, CL_DEVICE_IMAGE2D_MAX_WIDTH)?;
        let max_h: usize = cl::device_value(cl_device, CL_DEVICE_IMAGE2D_MAX_HEIGHT)?;
        let d3d_max = D3D11_REQ_TEXTURE2D_U_OR_V_DIMENSION;
        if images == 0
            || extent.width as usize > max_w
            || extent.height as usize > max_h
            || extent.width > d3d_max
            || extent.height > d3d_max
        {
            return Err(format!(
                "{} exceeds the 2D image limit ({max_w}x{max_h} OpenCL, {d3d_max}x{d3d_max} \
                 Direct3D 11)",
                extent.name()
            )
            .into());
        }
        Ok(Gpu {
            platform_name: format!(
                "[{index}] {}",
                cl::platform_string(platform, CL_PLATFORM_NAME)?
            ),
            cl_device_name: cl::device_string(cl_device, CL_DEVICE_NAME)?,
            device,
            context,
            platform,
            cl_device,
            api,
            extent,
            adapter,
        })
    }

    fn texture(&self, usage: Usage, extent: Extent) -> Result<Com<ID3D11Resource>, BoxError> {
        let (usage, bind, cpu) = match usage {
            Usage::Default => (
                D3D11_USAGE_DEFAULT,
                (D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_RENDER_TARGET) as u32,
                0,
            ),
            Usage::Staging => (D3D11_USAGE_STAGING, 0, D3D11_CPU_ACCESS_READ as u32),
        };
        let desc = D3D11_TEXTURE2D_DESC {
            Width: extent.width,
            Height: extent.height,
            MipLevels: 1,
            ArraySize: 1,
            Format: DXGI_FORMAT_R8G8B8A8_UNORM,
            SampleDesc: DXGI_SAMPLE_DESC {
                Count: 1,
                Quality: 0,
            },
            Usage: usage,
            BindFlags: bind,
            CPUAccessFlags: cpu,
            MiscFlags: 0,
        };
        let dev = self.device.as_raw();
        let mut out: *mut ID3D11Texture2D = ptr::null_mut();
        // SAFETY: `dev` is live; `desc` and the out pointer are valid.
        hr_check("ID3D11Device::CreateTexture2D", unsafe {
            ((*(*dev).lpVtbl).CreateTexture2D)(dev, &desc, ptr::null(), &mut out)
        })?;
        // SAFETY: success gave one reference to a texture, which is an ID3D11Resource (its
        // vtable starts with ID3D11Resource's).
        unsafe { Com::from_raw(out.cast::<ID3D11Resource>()) }
            .ok_or_else(|| "CreateTexture2D returned no texture".into())
    }

    /// `UpdateSubresource` of the whole texture from tightly packed rows.
    fn update(&self, texture: &Com<ID3D11Resource>, data: &[u8]) {
        debug_assert_eq!(data.len(), self.extent.bytes());
        let ctx = self.context.as_raw();
        // SAFETY: `data` holds `height` rows of `row_bytes()`, the pitch given; the texture is
        // live, of this device, DEFAULT usage, of the frame's extent.
        unsafe {
            ((*(*ctx).lpVtbl).UpdateSubresource)(
                ctx,
                texture.as_raw(),
                0,
                ptr::null(),
                data.as_ptr().cast(),
                self.extent.row_bytes() as u32,
                0,
            )
        };
    }

    fn copy(&self, dst: &Com<ID3D11Resource>, src: &Com<ID3D11Resource>) {
        let ctx = self.context.as_raw();
        // SAFETY: both live textures of this device, with the same description but usage.
        unsafe { ((*(*ctx).lpVtbl).CopyResource)(ctx, dst.as_raw(), src.as_raw()) };
    }

    /// Maps subresource 0 of a staging texture for reading (which waits for Direct3D's work on
    /// it), runs `f` on its first byte and row pitch, and unmaps it.
    fn read_mapped<R>(
        &self,
        staging: &Com<ID3D11Resource>,
        f: impl FnOnce(*const u8, usize) -> R,
    ) -> Result<R, BoxError> {
        let ctx = self.context.as_raw();
        let mut mapped = D3D11_MAPPED_SUBRESOURCE::default();
        // SAFETY: a live staging texture with CPU read access; `mapped` is a valid out struct.
        hr_check("ID3D11DeviceContext::Map", unsafe {
            ((*(*ctx).lpVtbl).Map)(ctx, staging.as_raw(), 0, D3D11_MAP_READ, 0, &mut mapped)
        })?;
        let r = f(mapped.pData as *const u8, mapped.RowPitch as usize);
        // SAFETY: subresource 0 was mapped above.
        unsafe { ((*(*ctx).lpVtbl).Unmap)(ctx, staging.as_raw(), 0) };
        Ok(r)
    }

    /// The texture's texels, tightly packed, through a new staging texture (for the check).
    fn read_texture(&self, texture: &Com<ID3D11Resource>) -> Result<Vec<u8>, BoxError> {
        let staging = self.texture(Usage::Staging, self.extent)?;
        self.copy(&staging, texture);
        let row = self.extent.row_bytes();
        let mut out = vec![0u8; self.extent.bytes()];
        self.read_mapped(&staging, |data, pitch| {
            for (y, dst) in out.chunks_exact_mut(row).enumerate() {
                // SAFETY: a mapped subresource holds `height` rows of at least `row` bytes,
                // `pitch` apart.
                dst.copy_from_slice(unsafe {
                    std::slice::from_raw_parts(data.add(y * pitch), row)
                });
            }
        })?;
        Ok(out)
    }

    /// The end of a frame on the Direct3D side: one texel of `texture` copied into a 1×1
    /// staging texture and mapped, which waits until Direct3D's work so far is done (its queue
    /// runs in order). A thread waiting this way sleeps where the driver does, as a renderer
    /// waiting on its frame would; spinning on an event query would bill the wait as CPU time.
    fn wait_for(
        &self,
        texture: &Com<ID3D11Resource>,
        probe: &Com<ID3D11Resource>,
    ) -> Result<(), BoxError> {
        let ctx = self.context.as_raw();
        let one = D3D11_BOX {
            left: 0,
            top: 0,
            front: 0,
            right: 1,
            bottom: 1,
            back: 1,
        };
        // SAFETY: live textures of this device and format; the box lies inside both.
        unsafe {
            ((*(*ctx).lpVtbl).CopySubresourceRegion)(
                ctx,
                probe.as_raw(),
                0,
                0,
                0,
                0,
                texture.as_raw(),
                0,
                &one,
            )
        };
        self.read_mapped(probe, |_, _| ())
    }

    /// A queue on a new context of the case's kind, and the kernel built there.
    pub(super) fn cl_side(&self, shared: bool) -> Result<ClSide, BoxError> {
        let context = if shared {
            sharing::d3d11_context(self.platform, self.device.as_raw(), self.cl_device)?
        } else {
            let props: [cl_context_properties; 3] = [
                CL_CONTEXT_PLATFORM as cl_context_properties,
                self.platform as cl_context_properties,
                0,
            ];
            let mut err = 0;
            // SAFETY: a zero-terminated property list and one valid device.
            let c = unsafe {
                cl::clCreateContext(
                    props.as_ptr(),
                    1,
                    &self.cl_device,
                    ptr::null(),
                    ptr::null_mut(),
                    &mut err,
                )
            };
            cl_check("clCreateContext", err)?;
            ClHandle(c, cl::clReleaseContext)
        };
        let mut err = 0;
        // SAFETY: valid context and device, no properties (an in-order queue).
        let queue = unsafe {
            cl::clCreateCommandQueueWithProperties(context.0, self.cl_device, ptr::null(), &mut err)
        };
        cl_check("clCreateCommandQueueWithProperties", err)?;
        let queue = ClHandle(queue, cl::clReleaseCommandQueue);
        let (program, kernel) =
            build_kernel(context.0, self.cl_device, KERNEL_SOURCE, "", KERNEL_NAME)?;
        Ok(ClSide {
            kernel,
            _program: program,
            queue,
            context,
            extent: self.extent,
        })
    }
}

/// One case's OpenCL objects. Fields drop in order: the kernel and queue before the context.
pub(super) struct ClSide {
    kernel: ClHandle<cl_kernel>,
    _program: ClHandle<cl_program>,
    pub(super) queue: ClHandle<cl_command_queue>,
    pub(super) context: ClHandle<cl_context>,
    pub(super) extent: Extent,
}

impl ClSide {
    /// A plain RGBA UNORM8 image of the frame's extent.
    fn image(&self, flags: cl_mem_flags) -> Result<ClHandle<cl_mem>, BoxError> {
        let format = cl_image_format {
            image_channel_order: CL_RGBA,
            image_channel_data_type: CL_UNORM_INT8,
        };
        let desc = _cl_image_desc {
            image_type: CL_MEM_OBJECT_IMAGE2D,
            image_width: self.extent.width as usize,
            image_height: self.extent.height as usize,
            image_depth: 1,
            image_array_size: 1,
            image_row_pitch: 0,
            image_slice_pitch: 0,
            num_mip_levels: 0,
            num_samples: 0,
            buffer: ptr::null_mut(),
        };
        let mut err = 0;
        // SAFETY: valid context, format and description; no host pointer.
        let m = unsafe {
            cl::clCreateImage(
                self.context.0,
                flags,
                &format,
                &desc,
                ptr::null_mut(),
                &mut err,
            )
        };
        cl_check("clCreateImage", err)?;
        Ok(ClHandle(m, cl::clReleaseMemObject))
    }

    /// Sets the kernel's two image arguments (they stay set for every later launch).
    pub(super) fn bind(&self, src: cl_mem, dst: cl_mem) -> Result<(), BoxError> {
        for (i, m) in [src, dst].iter().enumerate() {
            // SAFETY: each argument is a cl_mem of the kernel's image parameter `i`.
            cl_check("clSetKernelArg", unsafe {
                cl::clSetKernelArg(
                    self.kernel.0,
                    i as cl_uint,
                    std::mem::size_of::<cl_mem>(),
                    (m as *const cl_mem).cast(),
                )
            })?;
        }
        Ok(())
    }

    pub(super) fn run_kernel(&self) -> Result<(), BoxError> {
        let global = [self.extent.width as usize, self.extent.height as usize];
        // SAFETY: a built kernel with both arguments bound, a 2-D range over the image.
        cl_check("clEnqueueNDRangeKernel", unsafe {
            cl::clEnqueueNDRangeKernel(
                self.queue.0,
                self.kernel.0,
                2,
                ptr::null(),
                global.as_ptr(),
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })?;
        Ok(())
    }

    fn region(&self) -> [usize; 3] {
        [self.extent.width as usize, self.extent.height as usize, 1]
    }

    /// `clEnqueueWriteImage` of the whole image from rows `pitch` bytes apart.
    ///
    /// # Safety
    /// `host` holds `height` rows of `pitch` bytes (at least `row_bytes()` each) and stays
    /// unchanged until the write completes (at once when `blocking`).
    unsafe fn write_image(
        &self,
        image: cl_mem,
        host: *const u8,
        pitch: usize,
        blocking: bool,
    ) -> Result<(), BoxError> {
        let origin = [0usize; 3];
        // SAFETY: the function's contract.
        cl_check("clEnqueueWriteImage", unsafe {
            cl::clEnqueueWriteImage(
                self.queue.0,
                image,
                if blocking { CL_TRUE } else { CL_FALSE },
                origin.as_ptr(),
                self.region().as_ptr(),
                pitch,
                0,
                host.cast::<c_void>(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })?;
        Ok(())
    }

    /// A blocking `clEnqueueReadImage` of the whole image into `out` (tightly packed rows).
    fn read_image(&self, image: cl_mem, out: &mut [u8]) -> Result<(), BoxError> {
        assert_eq!(out.len(), self.extent.bytes());
        let origin = [0usize; 3];
        // SAFETY: `out` holds the whole image in rows of `row_bytes()`; the read blocks.
        cl_check("clEnqueueReadImage", unsafe {
            cl::clEnqueueReadImage(
                self.queue.0,
                image,
                CL_TRUE,
                origin.as_ptr(),
                self.region().as_ptr(),
                self.extent.row_bytes(),
                0,
                out.as_mut_ptr().cast(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })?;
        Ok(())
    }

    pub(super) fn finish(&self) -> Result<(), BoxError> {
        // SAFETY: a valid queue.
        cl_check("clFinish", unsafe { cl::clFinish(self.queue.0) })?;
        Ok(())
    }
}

/// What a case does each frame, and how its result is read back for the check.
pub trait Pipeline {
    /// One frame from `host` (the frame the application produced), ending when the result is
    /// in the case's last texture or image and the devices are done with it; `marks` ends each
    /// step (`--breakdown`).
    fn frame(&mut self, host: &[u8], marks: &mut Marks) -> Result<(), BoxError>;
    /// The last frame's result, read back untimed.
    fn result(&mut self) -> Result<Vec<u8>, BoxError>;
}

/// a. No Direct3D: the frame written (blocking) into a plain OpenCL image, the kernel, and a device-side
/// `clEnqueueCopyImage` of the result standing for Direct3D's onward copy.
pub struct OpenClOnly {
    src: ClHandle<cl_mem>,
    dst: ClHandle<cl_mem>,
    onward: ClHandle<cl_mem>,
    cl: ClSide,
}

impl OpenClOnly {
    pub fn new(gpu: &Gpu) -> Result<OpenClOnly, BoxError> {
        let cl = gpu.cl_side(false)?;
        let src = cl.image(CL_MEM_READ_ONLY)?;
        let dst = cl.image(CL_MEM_READ_WRITE)?;
        let onward = cl.image(CL_MEM_READ_WRITE)?;
        cl.bind(src.0, dst.0)?;
        Ok(OpenClOnly {
            src,
            dst,
            onward,
            cl,
        })
    }

    /// Enqueues the device-side `clEnqueueCopyImage` of the result into the onward image.
    fn copy_onward(&self) -> Result<(), BoxError> {
        let origin = [0usize; 3];
        // SAFETY: two images of the same extent and format; the region is the whole image.
        cl_check("clEnqueueCopyImage", unsafe {
            cl::clEnqueueCopyImage(
                self.cl.queue.0,
                self.dst.0,
                self.onward.0,
                origin.as_ptr(),
                origin.as_ptr(),
                self.cl.region().as_ptr(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })?;
        Ok(())
    }
}

impl Pipeline for OpenClOnly {
    fn frame(&mut self, host: &[u8], marks: &mut Marks) -> Result<(), BoxError> {
        assert_eq!(host.len(), self.cl.extent.bytes());
        // Blocking, as in b. On PoCL a non-blocking write chained straight to the kernel and the
        // copy made the frame slower than every other case (docs/benchmarks.md), though the
        // kernel alone was not.
        // SAFETY: `host` is a whole frame in tightly packed rows; the write blocks.
        unsafe {
            self.cl
                .write_image(self.src.0, host.as_ptr(), self.cl.extent.row_bytes(), true)?
        };
        marks.mark("upload (blocking write)");
        self.cl.run_kernel()?;
        marks.mark("kernel (enqueue)");
        self.copy_onward()?;
        marks.mark("onward copy (enqueue)");
        self.cl.finish()?;
        marks.mark("wait (clFinish)");
        Ok(())
    }

    fn result(&mut self) -> Result<Vec<u8>, BoxError> {
        let mut out = vec![0u8; self.cl.extent.bytes()];
        self.cl.read_image(self.onward.0, &mut out)?;
        Ok(out)
    }
}

/// The three Direct3D textures of a frame: the frame in, the kernel's result, and the onward
/// copy; and the 1×1 staging texture that waits for the frame's end.
struct Textures {
    input: Com<ID3D11Resource>,
    output: Com<ID3D11Resource>,
    onward: Com<ID3D11Resource>,
    probe: Com<ID3D11Resource>,
}

impl Textures {
    fn new(gpu: &Gpu) -> Result<Textures, BoxError> {
        Ok(Textures {
            input: gpu.texture(Usage::Default, gpu.extent)?,
            output: gpu.texture(Usage::Default, gpu.extent)?,
            onward: gpu.texture(Usage::Default, gpu.extent)?,
            probe: gpu.texture(
                Usage::Staging,
                Extent {
                    width: 1,
                    height: 1,
                },
            )?,
        })
    }
}

/// b. The manual round trip without the extension: Direct3D's texture copied to a staging
/// texture and mapped, `clEnqueueWriteImage` from the mapping, the kernel, `clEnqueueReadImage`
/// into host memory, `UpdateSubresource` of the result texture, and the onward copy.
pub struct HostRoundTrip<'g> {
    gpu: &'g Gpu,
    staging: Com<ID3D11Resource>,
    result: Vec<u8>,
    src: ClHandle<cl_mem>,
    dst: ClHandle<cl_mem>,
    cl: ClSide,
    textures: Textures,
}

impl<'g> HostRoundTrip<'g> {
    pub fn new(gpu: &'g Gpu) -> Result<HostRoundTrip<'g>, BoxError> {
        let cl = gpu.cl_side(false)?;
        let src = cl.image(CL_MEM_READ_ONLY)?;
        let dst = cl.image(CL_MEM_WRITE_ONLY)?;
        cl.bind(src.0, dst.0)?;
        Ok(HostRoundTrip {
            staging: gpu.texture(Usage::Staging, gpu.extent)?,
            result: vec![0u8; gpu.extent.bytes()],
            textures: Textures::new(gpu)?,
            gpu,
            src,
            dst,
            cl,
        })
    }
}

impl Pipeline for HostRoundTrip<'_> {
    fn frame(&mut self, host: &[u8], marks: &mut Marks) -> Result<(), BoxError> {
        let (gpu, t) = (self.gpu, &self.textures);
        gpu.update(&t.input, host);
        marks.mark("update");
        gpu.copy(&self.staging, &t.input);
        let cl = &self.cl;
        let src = self.src.0;
        gpu.read_mapped(&self.staging, |data, pitch| {
            // SAFETY: the mapping holds `height` rows `pitch` apart and stays mapped until
            // this blocking write returns.
            unsafe { cl.write_image(src, data, pitch, true) }
        })??;
        marks.mark("to OpenCL (copy, map, write)");
        cl.run_kernel()?;
        cl.read_image(self.dst.0, &mut self.result)?;
        marks.mark("kernel and read-back");
        gpu.update(&t.output, &self.result);
        gpu.copy(&t.onward, &t.output);
        marks.mark("update and onward copy");
        gpu.wait_for(&t.onward, &t.probe)?;
        marks.mark("wait (Map)");
        Ok(())
    }

    fn result(&mut self) -> Result<Vec<u8>, BoxError> {
        self.gpu.read_texture(&self.textures.onward)
    }
}

/// The sync mode asked of the layer (`DXCL_SYNC`), read when a context opens its first
/// external-memory object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncRequest {
    Adaptive,
    Gpu,
    Cpu,
}

impl SyncRequest {
    pub fn name(self) -> &'static str {
        match self {
            SyncRequest::Adaptive => "adaptive",
            SyncRequest::Gpu => "gpu",
            SyncRequest::Cpu => "cpu",
        }
    }
}

/// c. Through the extension: Direct3D updates the texture, OpenCL acquires it and the result
/// texture, runs the kernel from one into the other and releases both, and Direct3D copies the
/// result onward. No copy by the application, no `clFinish`: the release orders Direct3D's copy.
pub struct Shared<'g> {
    gpu: &'g Gpu,
    mems: [ClHandle<cl_mem>; 2],
    cl: ClSide,
    textures: Textures,
    /// How the layer shares the input and the result texture, read from the memory objects.
    pub sharing: [Sharing; 2],
}

impl<'g> Shared<'g> {
    /// Sets `DXCL_SYNC` for the context's creation, its objects and a first frame (the layer
    /// reads it when the context opens its first external-memory object), then restores it.
    pub fn new(gpu: &'g Gpu, sync: SyncRequest, first: &[u8]) -> Result<Shared<'g>, BoxError> {
        let inherited = std::env::var_os("DXCL_SYNC");
        // This thread is the only one that sets the environment; the CL runtime's threads do not
        // read it after start-up.
        std::env::set_var("DXCL_SYNC", sync.name());
        let made =
            Shared::make(gpu).and_then(|mut s| s.frame(first, &mut Marks::start()).map(|()| s));
        match inherited {
            Some(v) => std::env::set_var("DXCL_SYNC", v),
            None => std::env::remove_var("DXCL_SYNC"),
        }
        made
    }

    fn make(gpu: &'g Gpu) -> Result<Shared<'g>, BoxError> {
        let cl = gpu.cl_side(true)?;
        let textures = Textures::new(gpu)?;
        let share = |t: &Com<ID3D11Resource>, flags| -> Result<ClHandle<cl_mem>, BoxError> {
            let mut err = 0;
            // SAFETY: a context shared with the texture's device, a live 2D texture.
            let m = unsafe {
                (gpu.api.create_texture)(cl.context.0, flags, t.as_raw().cast(), 0, &mut err)
            };
            cl_check("clCreateFromD3D11Texture2DKHR", err)?;
            Ok(ClHandle(m, cl::clReleaseMemObject))
        };
        let mems = [
            share(&textures.input, CL_MEM_READ_ONLY)?,
            share(&textures.output, CL_MEM_WRITE_ONLY)?,
        ];
        cl.bind(mems[0].0, mems[1].0)?;
        let seen = [
            Sharing::observe(&textures.input, mems[0].0),
            Sharing::observe(&textures.output, mems[1].0),
        ];
        Ok(Shared {
            gpu,
            cl,
            textures,
            sharing: seen,
            mems,
        })
    }

    fn hand(&self, call: &'static str, f: sharing::EnqueueD3D11Objects) -> Result<(), BoxError> {
        let mems = [self.mems[0].0, self.mems[1].0];
        // SAFETY: a queue of the context the objects were made in; two valid cl_mem; no events.
        cl_check(call, unsafe {
            f(
                self.cl.queue.0,
                2,
                mems.as_ptr(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })?;
        Ok(())
    }
}

impl Pipeline for Shared<'_> {
    fn frame(&mut self, host: &[u8], marks: &mut Marks) -> Result<(), BoxError> {
        let (gpu, t) = (self.gpu, &self.textures);
        gpu.update(&t.input, host);
        marks.mark("update");
        self.hand("clEnqueueAcquireD3D11ObjectsKHR", gpu.api.acquire)?;
        marks.mark("acquire");
        self.cl.run_kernel()?;
        marks.mark("kernel (enqueue)");
        self.hand("clEnqueueReleaseD3D11ObjectsKHR", gpu.api.release)?;
        marks.mark("release");
        gpu.copy(&t.onward, &t.output);
        marks.mark("onward copy");
        gpu.wait_for(&t.onward, &t.probe)?;
        marks.mark("wait (Map)");
        Ok(())
    }

    fn result(&mut self) -> Result<Vec<u8>, BoxError> {
        self.gpu.read_texture(&self.textures.onward)
    }
}

/// `--breakdown`: each step of the frame alone, on an idle device, timed to its completion:
/// what the frame's chain of steps costs without the hand-offs between them. `(name, ms)` per
/// step, `rounds` samples each, after one untimed round.
pub fn steps_alone(
    gpu: &Gpu,
    host: &[u8],
    rounds: usize,
) -> Result<Vec<(&'static str, Vec<f64>)>, BoxError> {
    let t = Textures::new(gpu)?;
    let a = OpenClOnly::new(gpu)?;
    let cl = &a.cl;
    // SAFETY: `host` is a whole frame in tightly packed rows; the write blocks.
    unsafe { cl.write_image(a.src.0, host.as_ptr(), cl.extent.row_bytes(), true)? };
    type Step<'s> = Box<dyn Fn() -> Result<(), BoxError> + 's>;
    let steps: Vec<(&'static str, Step<'_>)> = vec![
        (
            "Direct3D: 1-texel copy + Map (the frame's end wait alone)",
            Box::new(|| gpu.wait_for(&t.onward, &t.probe)),
        ),
        (
            "Direct3D: UpdateSubresource of the frame + wait",
            Box::new(|| {
                gpu.update(&t.input, host);
                gpu.wait_for(&t.input, &t.probe)
            }),
        ),
        (
            "Direct3D: CopyResource of the frame + wait",
            Box::new(|| {
                gpu.copy(&t.onward, &t.output);
                gpu.wait_for(&t.onward, &t.probe)
            }),
        ),
        ("OpenCL: clFinish alone", Box::new(|| cl.finish())),
        (
            "OpenCL: the blur + clFinish",
            Box::new(|| {
                cl.run_kernel()?;
                cl.finish()
            }),
        ),
        (
            "OpenCL: clEnqueueCopyImage of the frame + clFinish",
            Box::new(|| {
                a.copy_onward()?;
                cl.finish()
            }),
        ),
    ];
    let mut out = Vec::new();
    for (name, step) in &steps {
        step()?;
        let mut ms = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let start = std::time::Instant::now();
            step()?;
            ms.push(start.elapsed().as_secs_f64() * 1e3);
        }
        out.push((*name, ms));
    }
    Ok(out)
}

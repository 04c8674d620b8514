//! d. The expert's path, by hand: no Direct3D, no dxcl. Vulkan uploads the frame into an image
//! in exportable memory and copies the result onward (`vulkan.rs`); OpenCL imports both images
//! (`cl_khr_external_memory_opaque_fd`) and two binary semaphores
//! (`cl_khr_external_semaphore_opaque_fd`) and runs the same kernel between them. Each frame:
//!
//! 1. Vulkan: host frame → staging buffer → input image; signals semaphore 0;
//! 2. OpenCL: waits for semaphore 0, acquires both images, the blur, releases them, signals
//!    semaphore 1, flushes;
//! 3. Vulkan: waits for semaphore 1, copies the result image into a third image; the CPU waits
//!    for that on a fence.
//!
//! It runs only where the OpenCL device has both extensions and a Vulkan device has its UUID;
//! elsewhere [`Expert::new`] says why, and the case is reported as not run.

use super::breakdown::Marks;
use super::pipeline::{BoxError, ClSide, Gpu, Pipeline};
use super::vulkan::{self, Allocation, Frames};
use crate::cl::{self, check as cl_check, ClHandle};
use crate::sharing::lookup;
use opencl_sys::*;
use std::ffi::c_void;
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};
use std::ptr;

/// `DXCL_FRAMES_EXPERT_DEDICATED=1`: the exported images get dedicated allocations (for a
/// driver whose import of plain ones fails; the H100 probe imported plain ones, docs/gpu.md).
pub const DEDICATED_ENV: &str = "DXCL_FRAMES_EXPERT_DEDICATED";

#[link(name = "OpenCL")]
extern "system" {
    fn clCreateImageWithProperties(
        context: cl_context,
        properties: *const cl_mem_properties,
        flags: cl_mem_flags,
        format: *const cl_image_format,
        desc: *const cl_image_desc,
        host_ptr: *mut c_void,
        err: *mut cl_int,
    ) -> cl_mem;
}

type EnqueueMems = unsafe extern "C" fn(
    cl_command_queue,
    cl_uint,
    *const cl_mem,
    cl_uint,
    *const cl_event,
    *mut cl_event,
) -> cl_int;
type EnqueueSemaphores = unsafe extern "C" fn(
    cl_command_queue,
    cl_uint,
    *const cl_semaphore_khr,
    *const cl_semaphore_payload_khr,
    cl_uint,
    *const cl_event,
    *mut cl_event,
) -> cl_int;
type CreateSemaphore = unsafe extern "C" fn(
    cl_context,
    *const cl_semaphore_properties_khr,
    *mut cl_int,
) -> cl_semaphore_khr;
// "system" is "C" on every target OpenCL runs on here; `ClHandle` takes "system".
type ReleaseSemaphore = unsafe extern "system" fn(cl_semaphore_khr) -> cl_int;

/// The extension entry points of the platform.
#[derive(Clone, Copy)]
struct Entries {
    acquire: EnqueueMems,
    release: EnqueueMems,
    create_semaphore: CreateSemaphore,
    wait: EnqueueSemaphores,
    signal: EnqueueSemaphores,
    release_semaphore: ReleaseSemaphore,
}

/// Why case d has no pipeline: it cannot run here, or setting it up failed.
pub enum Setup {
    NotRun(String),
    Failed(String),
}

impl From<vulkan::Setup> for Setup {
    fn from(s: vulkan::Setup) -> Setup {
        match s {
            vulkan::Setup::Unavailable(why) => Setup::NotRun(why),
            vulkan::Setup::Failed(e) => Setup::Failed(e),
        }
    }
}

/// What the OpenCL device must have, checked from its own answers; the device's UUID.
fn cl_requirements(gpu: &Gpu) -> Result<([u8; 16], Entries), String> {
    let device = gpu.cl_device;
    let extensions = cl::device_string(device, CL_DEVICE_EXTENSIONS).map_err(|e| e.to_string())?;
    let missing: Vec<&str> = [
        "cl_khr_external_memory_opaque_fd",
        "cl_khr_external_semaphore_opaque_fd",
        "cl_khr_device_uuid",
    ]
    .into_iter()
    .filter(|x| !extensions.split_whitespace().any(|e| e == *x))
    .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the OpenCL device {} lacks {}",
            gpu.cl_device_name,
            missing.join(", ")
        ));
    }
    let handle_types = |name| {
        cl::device_bytes(device, name)
            .map(|b| {
                b.chunks_exact(4)
                    .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                    .collect::<Vec<u32>>()
            })
            .unwrap_or_default()
    };
    if !handle_types(CL_DEVICE_EXTERNAL_MEMORY_IMPORT_HANDLE_TYPES_KHR)
        .contains(&CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR)
    {
        return Err(format!(
            "the OpenCL device {} does not list opaque-fd memory imports",
            gpu.cl_device_name
        ));
    }
    if !handle_types(CL_DEVICE_SEMAPHORE_IMPORT_HANDLE_TYPES_KHR)
        .contains(&CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR)
    {
        return Err(format!(
            "the OpenCL device {} does not list opaque-fd semaphore imports",
            gpu.cl_device_name
        ));
    }
    let uuid: [u8; 16] = cl::device_bytes(device, CL_DEVICE_UUID_KHR)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or("CL_DEVICE_UUID_KHR is not 16 bytes")?;
    let p = gpu.platform;
    // SAFETY: each name is looked up with the type its extension specification gives.
    let entries = unsafe {
        (|| {
            Some(Entries {
                acquire: lookup(p, "clEnqueueAcquireExternalMemObjectsKHR")?,
                release: lookup(p, "clEnqueueReleaseExternalMemObjectsKHR")?,
                create_semaphore: lookup(p, "clCreateSemaphoreWithPropertiesKHR")?,
                wait: lookup(p, "clEnqueueWaitSemaphoresKHR")?,
                signal: lookup(p, "clEnqueueSignalSemaphoresKHR")?,
                release_semaphore: lookup(p, "clReleaseSemaphoreKHR")?,
            })
        })()
    };
    let entries =
        entries.ok_or("the platform lacks an external memory or semaphore entry point")?;
    Ok((uuid, entries))
}

/// Case d's OpenCL objects. Fields drop in order: the imports before the queue and context.
struct Imports {
    semaphores: [ClHandle<cl_semaphore_khr>; 2],
    mems: [ClHandle<cl_mem>; 2],
    cl: ClSide,
}

/// Case d. The OpenCL objects come first: they go (after `Drop::drop` finishes the queue)
/// before the Vulkan memory and semaphores they import.
pub struct Expert {
    /// Always `Some` but in `Drop`.
    imports: Option<Imports>,
    entries: Entries,
    vk: Frames,
    /// Which path ran: the allocation of the images, and why.
    pub path: String,
    /// The Vulkan device.
    pub vulkan_device: String,
}

impl Expert {
    pub fn new(gpu: &Gpu) -> Result<Expert, Setup> {
        let (uuid, entries) = cl_requirements(gpu).map_err(Setup::NotRun)?;
        let asked = std::env::var(DEDICATED_ENV).is_ok_and(|v| v == "1");
        let first = if asked {
            Allocation::Dedicated
        } else {
            Allocation::Plain
        };
        match Expert::with(gpu, uuid, entries, first) {
            Ok(mut e) => {
                e.path = describe(e.vk.allocation, asked, None);
                Ok(e)
            }
            // The one fallback: a driver that cannot import plain allocations may import
            // dedicated ones.
            Err(Setup::Failed(why)) if first == Allocation::Plain => {
                let mut e = Expert::with(gpu, uuid, entries, Allocation::Dedicated).map_err(
                    |s| match s {
                        Setup::Failed(again) => {
                            Setup::Failed(format!("{why}; with dedicated allocations: {again}"))
                        }
                        other => other,
                    },
                )?;
                e.path = describe(Allocation::Dedicated, false, Some(&why));
                Ok(e)
            }
            Err(s) => Err(s),
        }
    }

    fn with(
        gpu: &Gpu,
        uuid: [u8; 16],
        entries: Entries,
        allocation: Allocation,
    ) -> Result<Expert, Setup> {
        let vk = Frames::open(Some(uuid), gpu.extent, allocation, true)?;
        let failed = |e: BoxError| Setup::Failed(e.to_string());
        let cl = gpu.cl_side(false).map_err(failed)?;
        let input = vk.export_image(false).map_err(Setup::Failed)?;
        let output = vk.export_image(true).map_err(Setup::Failed)?;
        let mems = [
            import_image(&cl, input.0, CL_MEM_READ_ONLY)?,
            import_image(&cl, output.0, CL_MEM_WRITE_ONLY)?,
        ];
        let semaphores = [
            import_semaphore(
                &cl,
                &entries,
                vk.export_semaphore(false).map_err(Setup::Failed)?,
            )?,
            import_semaphore(
                &cl,
                &entries,
                vk.export_semaphore(true).map_err(Setup::Failed)?,
            )?,
        ];
        cl.bind(mems[0].0, mems[1].0).map_err(failed)?;
        Ok(Expert {
            imports: Some(Imports {
                semaphores,
                mems,
                cl,
            }),
            entries,
            vulkan_device: vk.name.clone(),
            vk,
            path: String::new(),
        })
    }

    fn imports(&self) -> &Imports {
        self.imports.as_ref().expect("taken only in Drop")
    }

    fn enqueue_mems(&self, call: &'static str, f: EnqueueMems) -> Result<(), BoxError> {
        let i = self.imports();
        let mems = [i.mems[0].0, i.mems[1].0];
        // SAFETY: a queue of the context the objects were imported into; two valid cl_mem; no
        // events.
        cl_check(call, unsafe {
            f(
                i.cl.queue.0,
                2,
                mems.as_ptr(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })?;
        Ok(())
    }

    fn enqueue_semaphore(
        &self,
        call: &'static str,
        f: EnqueueSemaphores,
        which: usize,
    ) -> Result<(), BoxError> {
        let i = self.imports();
        let s = i.semaphores[which].0;
        // SAFETY: a queue of the semaphore's context; one binary semaphore (no payload); no
        // events.
        cl_check(call, unsafe {
            f(
                i.cl.queue.0,
                1,
                &s,
                ptr::null(),
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })?;
        Ok(())
    }
}

fn describe(allocation: Allocation, asked: bool, fallback: Option<&str>) -> String {
    let how = match (allocation, asked, fallback) {
        (Allocation::Plain, _, _) => "plain allocations".to_string(),
        (Allocation::Dedicated, true, _) => format!("dedicated allocations ({DEDICATED_ENV}=1)"),
        (Allocation::Dedicated, false, Some(why)) => {
            format!("dedicated allocations (fallback: plain ones failed: {why})")
        }
        (Allocation::Dedicated, false, None) => {
            "dedicated allocations (the driver requires them)".to_string()
        }
    };
    format!("optimal-tiled images imported as CL images, {how}")
}

/// Imports an exported image's memory as a 2D RGBA UNORM8 image of the frame's extent. The
/// import takes the fd on success (cl_khr_external_memory); on failure it is closed here.
fn import_image(cl: &ClSide, fd: OwnedFd, flags: cl_mem_flags) -> Result<ClHandle<cl_mem>, Setup> {
    let props: [cl_mem_properties; 3] = [
        CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR as cl_mem_properties,
        fd.as_raw_fd() as cl_mem_properties,
        0,
    ];
    let format = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNORM_INT8,
    };
    let desc = cl_image_desc {
        image_type: CL_MEM_OBJECT_IMAGE2D,
        image_width: cl.extent.width as usize,
        image_height: cl.extent.height as usize,
        image_depth: 1,
        image_array_size: 1,
        image_row_pitch: 0,
        image_slice_pitch: 0,
        num_mip_levels: 0,
        num_samples: 0,
        buffer: ptr::null_mut(),
    };
    let mut err = 0;
    // SAFETY: a valid context; a 0-terminated property list naming an open fd; a valid format
    // and description; no host pointer.
    let m = unsafe {
        clCreateImageWithProperties(
            cl.context.0,
            props.as_ptr(),
            flags,
            &format,
            &desc,
            ptr::null_mut(),
            &mut err,
        )
    };
    if err != CL_SUCCESS || m.is_null() {
        // `fd` is still ours and closes here.
        return Err(Setup::Failed(format!(
            "clCreateImageWithProperties (opaque fd, {}) failed with {err}",
            cl.extent.name()
        )));
    }
    // The platform owns the fd now.
    let _ = fd.into_raw_fd();
    Ok(ClHandle(m, cl::clReleaseMemObject))
}

/// Imports an exported binary semaphore. No device list: NVIDIA refuses one (docs/gpu.md).
fn import_semaphore(
    cl: &ClSide,
    entries: &Entries,
    fd: OwnedFd,
) -> Result<ClHandle<cl_semaphore_khr>, Setup> {
    let props: [cl_semaphore_properties_khr; 5] = [
        CL_SEMAPHORE_TYPE_KHR as cl_semaphore_properties_khr,
        CL_SEMAPHORE_TYPE_BINARY_KHR as cl_semaphore_properties_khr,
        CL_SEMAPHORE_HANDLE_OPAQUE_FD_KHR as cl_semaphore_properties_khr,
        fd.as_raw_fd() as cl_semaphore_properties_khr,
        0,
    ];
    let mut err = 0;
    // SAFETY: a valid context; a 0-terminated property list naming an open fd.
    let s = unsafe { (entries.create_semaphore)(cl.context.0, props.as_ptr(), &mut err) };
    if err != CL_SUCCESS || s.is_null() {
        return Err(Setup::Failed(format!(
            "clCreateSemaphoreWithPropertiesKHR (opaque fd) failed with {err}"
        )));
    }
    let _ = fd.into_raw_fd();
    Ok(ClHandle(s, entries.release_semaphore))
}

impl Pipeline for Expert {
    fn frame(&mut self, host: &[u8], marks: &mut Marks) -> Result<(), BoxError> {
        let e = self.entries;
        self.vk.upload(host)?;
        marks.mark("upload (Vulkan)");
        self.enqueue_semaphore("clEnqueueWaitSemaphoresKHR", e.wait, 0)?;
        self.enqueue_mems("clEnqueueAcquireExternalMemObjectsKHR", e.acquire)?;
        marks.mark("acquire (semaphore wait, external acquire)");
        self.imports().cl.run_kernel()?;
        marks.mark("kernel (enqueue)");
        self.enqueue_mems("clEnqueueReleaseExternalMemObjectsKHR", e.release)?;
        self.enqueue_semaphore("clEnqueueSignalSemaphoresKHR", e.signal, 1)?;
        // The signal must reach the device before Vulkan waits for it; no clFinish.
        // SAFETY: a valid queue.
        cl_check("clFlush", unsafe { cl::clFlush(self.imports().cl.queue.0) })?;
        marks.mark("release (external release, signal, flush)");
        self.vk.onward()?;
        marks.mark("onward copy and wait (Vulkan)");
        Ok(())
    }

    fn result(&mut self) -> Result<Vec<u8>, BoxError> {
        Ok(self.vk.read_onward()?)
    }
}

impl Drop for Expert {
    fn drop(&mut self) {
        let Some(imports) = self.imports.take() else {
            return;
        };
        if self.vk.is_stuck() {
            // A semaphore signal never came: OpenCL's queue may never finish either. Leaked,
            // like the Vulkan objects (`Frames::drop`), rather than released while in use.
            std::mem::forget(imports);
            return;
        }
        // OpenCL's work on the imports ends before they and the Vulkan objects go.
        let _ = imports.cl.finish();
    }
}

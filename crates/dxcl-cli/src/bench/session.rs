//! What the bench drives: one Direct3D 11 device, the OpenCL device the layer prefers for it, one
//! queue, and shared objects made on them (a D3D resource and its `cl_mem`).

use crate::cl::{self, check as cl_check, ClError, ClHandle};
use crate::d3d::{self, check as hr_check, Com};
use crate::sharing::{self, *};
use dxcl_abi::interop::*;
use dxcl_abi::*;
use opencl_sys::*;
use std::ffi::c_void;
use std::ptr;

mod stall;

type BoxError = Box<dyn std::error::Error>;

/// What is shared: a buffer, or a 2D texture of DXGI_FORMAT_R8G8B8A8_UNORM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Buffer,
    Texture2D,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Buffer => "buffer",
            Kind::Texture2D => "texture2d",
        }
    }
}

/// The extent of one object. Buffers: `width` bytes, `height` 1. Textures: texels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub kind: Kind,
    pub width: u32,
    pub height: u32,
}

const TEXEL_BYTES: u64 = 4;

impl Shape {
    /// A buffer of `bytes`, or a square-ish texture of at least `bytes` (power-of-two width).
    pub fn for_bytes(kind: Kind, bytes: u64) -> Option<Shape> {
        match kind {
            Kind::Buffer => Some(Shape {
                kind,
                width: u32::try_from(bytes).ok().filter(|&b| b > 0)?,
                height: 1,
            }),
            Kind::Texture2D => {
                let texels = bytes.div_ceil(TEXEL_BYTES).max(1);
                let side = (texels as f64).sqrt().ceil() as u64;
                let width = side.next_power_of_two().min(texels.next_power_of_two());
                let height = texels.div_ceil(width);
                Some(Shape {
                    kind,
                    width: u32::try_from(width).ok()?,
                    height: u32::try_from(height).ok()?,
                })
            }
        }
    }

    pub fn row_bytes(&self) -> usize {
        match self.kind {
            Kind::Buffer => self.width as usize,
            Kind::Texture2D => self.width as usize * TEXEL_BYTES as usize,
        }
    }

    pub fn bytes(&self) -> usize {
        self.row_bytes() * self.height as usize
    }

    /// "8192x8192" for textures, empty for buffers.
    pub fn extent(&self) -> String {
        match self.kind {
            Kind::Buffer => String::new(),
            Kind::Texture2D => format!("{}x{}", self.width, self.height),
        }
    }
}

/// Where the bench runs. Fields drop in order: CL before the D3D device its context refers to.
pub struct Session {
    queue: ClHandle<cl_command_queue>,
    cl_context: ClHandle<cl_context>,
    context: Com<ID3D11DeviceContext>,
    device: Com<ID3D11Device>,
    entry: D3d11Sharing,
    /// `clEnqueueAcquire/ReleaseExternalMemObjectsKHR` where the platform has them (the same
    /// signature as the D3D11 pair): the platform's own hand-off, timed for comparison.
    external: Option<(EnqueueD3D11Objects, EnqueueD3D11Objects)>,
    image_max: (usize, usize),
    /// The D3D adapter, as `dxcl info` shows it.
    pub adapter: String,
    /// The OpenCL platform (with its index) and device.
    pub platform: String,
    pub cl_device_name: String,
}

impl Session {
    /// A D3D11 device of `driver` on the default adapter, and a CL context on the first platform
    /// whose `clGetDeviceIDsFromD3D11KHR` names a preferred device for it.
    pub fn open(driver: D3D_DRIVER_TYPE) -> Result<Session, BoxError> {
        let (device, context) = d3d::create_device_of(driver)?;
        let adapter = describe_adapter(&device);
        let dev = device.as_raw();
        let (index, platform, cl_device) = preferred_platform(dev)?;
        let entry = D3d11Sharing::lookup(platform)
            .ok_or("the platform lacks cl_khr_d3d11_sharing's entry points")?;
        // SAFETY: names and types agree with cl_ext.h (cl_khr_external_memory).
        let external = unsafe {
            sharing::lookup(platform, "clEnqueueAcquireExternalMemObjectsKHR").zip(sharing::lookup(
                platform,
                "clEnqueueReleaseExternalMemObjectsKHR",
            ))
        };
        let cl_context = sharing::d3d11_context(platform, dev, cl_device)?;
        let mut err = 0;
        // SAFETY: valid context and device, no properties (an in-order queue).
        let queue = unsafe {
            cl::clCreateCommandQueueWithProperties(cl_context.0, cl_device, ptr::null(), &mut err)
        };
        cl_check("clCreateCommandQueueWithProperties", err)?;
        let queue = ClHandle(queue, cl::clReleaseCommandQueue);
        let images: cl_bool = cl::device_value(cl_device, CL_DEVICE_IMAGE_SUPPORT)?;
        let image_max = if images != 0 {
            (
                cl::device_value::<usize>(cl_device, CL_DEVICE_IMAGE2D_MAX_WIDTH)?,
                cl::device_value::<usize>(cl_device, CL_DEVICE_IMAGE2D_MAX_HEIGHT)?,
            )
        } else {
            (0, 0)
        };
        Ok(Session {
            queue,
            cl_context,
            context,
            device,
            entry,
            external,
            image_max,
            adapter,
            platform: format!(
                "[{index}] {}",
                cl::platform_string(platform, CL_PLATFORM_NAME)?
            ),
            cl_device_name: cl::device_string(cl_device, CL_DEVICE_NAME)?,
        })
    }

    /// The bench's queue.
    pub(crate) fn queue(&self) -> cl_command_queue {
        self.queue.0
    }

    /// The OpenCL context of the queue.
    pub(crate) fn cl_context(&self) -> cl_context {
        self.cl_context.0
    }

    /// Why `shape` cannot be shared with this device, if it cannot.
    pub fn unsupported(&self, shape: &Shape) -> Option<String> {
        let (w, h) = self.image_max;
        (shape.kind == Kind::Texture2D
            && (shape.width as usize > w
                || shape.height as usize > h
                || shape.width > D3D11_REQ_TEXTURE2D_U_OR_V_DIMENSION
                || shape.height > D3D11_REQ_TEXTURE2D_U_OR_V_DIMENSION))
            .then(|| {
                format!(
                    "{} exceeds the 2D image limit ({w}x{h} OpenCL, {d}x{d} Direct3D 11)",
                    shape.extent(),
                    d = D3D11_REQ_TEXTURE2D_U_OR_V_DIMENSION
                )
            })
    }

    /// The floor: an empty marker and `clFinish` on the bench's queue.
    pub fn floor(&self) -> Result<(), ClError> {
        // SAFETY: a valid queue; no wait list, no event.
        cl_check("clEnqueueMarkerWithWaitList", unsafe {
            cl::clEnqueueMarkerWithWaitList(self.queue.0, 0, ptr::null(), ptr::null_mut())
        })?;
        // SAFETY: a valid queue.
        cl_check("clFinish", unsafe { cl::clFinish(self.queue.0) })
    }

    /// An event query, to wait for Direct3D's queued work.
    fn event_query(&self) -> Result<Com<ID3D11Query>, BoxError> {
        let desc = D3D11_QUERY_DESC {
            Query: D3D11_QUERY_EVENT,
            MiscFlags: 0,
        };
        let dev = self.device.as_raw();
        let mut q: *mut ID3D11Query = ptr::null_mut();
        // SAFETY: `dev` is live; `desc` and the out pointer are valid.
        hr_check("ID3D11Device::CreateQuery", unsafe {
            ((*(*dev).lpVtbl).CreateQuery)(dev, &desc, &mut q)
        })?;
        // SAFETY: success gave us one reference.
        unsafe { Com::from_raw(q) }.ok_or_else(|| "CreateQuery returned no query".into())
    }

    /// Ends `query` and spins on `GetData` (which flushes) until Direct3D's work before it is done.
    fn wait_event(&self, query: &Com<ID3D11Query>) -> Result<(), BoxError> {
        let ctx = self.context.as_raw();
        let q = query.as_raw().cast::<ID3D11Asynchronous>();
        // SAFETY: a live context and query (an ID3D11Query is an ID3D11Asynchronous).
        unsafe { ((*(*ctx).lpVtbl).End)(ctx, q) };
        loop {
            let mut done: BOOL = 0;
            // SAFETY: an event query's data is one BOOL.
            let hr = unsafe {
                ((*(*ctx).lpVtbl).GetData)(
                    ctx,
                    q,
                    (&mut done as *mut BOOL).cast(),
                    std::mem::size_of::<BOOL>() as u32,
                    0,
                )
            };
            match hr {
                S_OK if done != 0 => return Ok(()),
                S_OK | S_FALSE => std::hint::spin_loop(),
                _ => return Err(format!("ID3D11DeviceContext::GetData failed: {hr:#x}").into()),
            }
        }
    }

    /// A D3D resource of `shape` and its `cl_mem`; `force_staging` sets `DXCL_STRATEGY=staging`
    /// for the creation only (the layer reads it when the memory object is created), and it is an
    /// error if the object is not then a staging copy.
    pub fn share(&self, shape: Shape, force_staging: bool) -> Result<Shared<'_>, BoxError> {
        let resource = self.create_resource(&shape, D3D11_USAGE_DEFAULT, 0)?;
        // `set_var` is not synchronised with getenv on other threads: the CL runtime's threads
        // do not read the environment after start-up, and this thread is the only one that sets it.
        if force_staging {
            std::env::set_var("DXCL_STRATEGY", "staging");
        } else {
            std::env::remove_var("DXCL_STRATEGY");
        }
        let mut err = 0;
        // SAFETY: valid context and resource of the named type; `err` receives the status.
        let mem = unsafe {
            match shape.kind {
                Kind::Buffer => (self.entry.create_buffer)(
                    self.cl_context.0,
                    CL_MEM_READ_WRITE,
                    resource.as_raw().cast(),
                    &mut err,
                ),
                Kind::Texture2D => (self.entry.create_texture)(
                    self.cl_context.0,
                    CL_MEM_READ_WRITE,
                    resource.as_raw().cast(),
                    0,
                    &mut err,
                ),
            }
        };
        std::env::remove_var("DXCL_STRATEGY");
        cl_check(
            match shape.kind {
                Kind::Buffer => "clCreateFromD3D11BufferKHR",
                Kind::Texture2D => "clCreateFromD3D11Texture2DKHR",
            },
            err,
        )?;
        let mem = ClHandle(mem, cl::clReleaseMemObject);
        let sharing = Sharing::observe(&resource, mem.0);
        if force_staging && sharing != Sharing::StagingCopy {
            return Err(format!(
                "DXCL_STRATEGY=staging was not honoured: the object is shared by {}",
                sharing.name()
            )
            .into());
        }
        Ok(Shared {
            session: self,
            shape,
            mem,
            resource,
            sharing,
        })
    }

    fn create_resource(
        &self,
        shape: &Shape,
        usage: D3D11_USAGE,
        cpu_access: u32,
    ) -> Result<Com<ID3D11Resource>, BoxError> {
        let dev = self.device.as_raw();
        let bind = if usage == D3D11_USAGE_STAGING {
            0
        } else {
            D3D11_BIND_SHADER_RESOURCE as u32
        };
        let mut out: *mut c_void = ptr::null_mut();
        match shape.kind {
            Kind::Buffer => {
                let desc = D3D11_BUFFER_DESC {
                    ByteWidth: shape.width,
                    Usage: usage,
                    BindFlags: bind,
                    CPUAccessFlags: cpu_access,
                    MiscFlags: 0,
                    StructureByteStride: 0,
                };
                // SAFETY: `dev` is live; `desc` and the out pointer are valid.
                hr_check("ID3D11Device::CreateBuffer", unsafe {
                    ((*(*dev).lpVtbl).CreateBuffer)(
                        dev,
                        &desc,
                        ptr::null(),
                        (&mut out as *mut *mut c_void).cast(),
                    )
                })?;
            }
            Kind::Texture2D => {
                let desc = D3D11_TEXTURE2D_DESC {
                    Width: shape.width,
                    Height: shape.height,
                    MipLevels: 1,
                    ArraySize: 1,
                    Format: DXGI_FORMAT_R8G8B8A8_UNORM,
                    SampleDesc: DXGI_SAMPLE_DESC {
                        Count: 1,
                        Quality: 0,
                    },
                    Usage: usage,
                    BindFlags: bind,
                    CPUAccessFlags: cpu_access,
                    MiscFlags: 0,
                };
                // SAFETY: `dev` is live; `desc` and the out pointer are valid.
                hr_check("ID3D11Device::CreateTexture2D", unsafe {
                    ((*(*dev).lpVtbl).CreateTexture2D)(
                        dev,
                        &desc,
                        ptr::null(),
                        (&mut out as *mut *mut c_void).cast(),
                    )
                })?;
            }
        }
        // SAFETY: success gave one reference to a buffer or texture, which is an ID3D11Resource
        // (its vtable starts with ID3D11Resource's).
        unsafe { Com::from_raw(out.cast::<ID3D11Resource>()) }
            .ok_or_else(|| "the device returned no resource".into())
    }

    /// Direct3D writes `data` (rows of `row_bytes()`, tightly packed) into `resource`.
    fn d3d_write(&self, resource: &Com<ID3D11Resource>, shape: &Shape, data: &[u8]) {
        debug_assert_eq!(data.len(), shape.bytes());
        let ctx = self.context.as_raw();
        // SAFETY: `data` holds `height` rows of `row_bytes()`, the pitch given; the resource is
        // live, of this device, DEFAULT usage, not mapped.
        unsafe {
            ((*(*ctx).lpVtbl).UpdateSubresource)(
                ctx,
                resource.as_raw(),
                0,
                ptr::null(),
                data.as_ptr().cast(),
                shape.row_bytes() as u32,
                0,
            )
        };
    }

    /// Direct3D reads `resource` back through a staging copy, rows tightly packed.
    fn d3d_read(&self, resource: &Com<ID3D11Resource>, shape: &Shape) -> Result<Vec<u8>, BoxError> {
        let staging =
            self.create_resource(shape, D3D11_USAGE_STAGING, D3D11_CPU_ACCESS_READ as u32)?;
        let ctx = self.context.as_raw();
        let mut mapped = D3D11_MAPPED_SUBRESOURCE::default();
        // SAFETY: both resources are live, of this device, with the same shape; `mapped` is a
        // valid out struct.
        unsafe {
            ((*(*ctx).lpVtbl).CopyResource)(ctx, staging.as_raw(), resource.as_raw());
            hr_check(
                "ID3D11DeviceContext::Map",
                ((*(*ctx).lpVtbl).Map)(ctx, staging.as_raw(), 0, D3D11_MAP_READ, 0, &mut mapped),
            )?;
        }
        let row = shape.row_bytes();
        let mut out = vec![0u8; shape.bytes()];
        for (y, dst) in out.chunks_exact_mut(row).enumerate() {
            // SAFETY: a mapped subresource holds `height` rows of at least `row` bytes, RowPitch
            // apart (buffers: one row).
            let src = unsafe {
                std::slice::from_raw_parts(
                    (mapped.pData as *const u8).add(y * mapped.RowPitch as usize),
                    row,
                )
            };
            dst.copy_from_slice(src);
        }
        // SAFETY: subresource 0 was mapped above.
        unsafe { ((*(*ctx).lpVtbl).Unmap)(ctx, staging.as_raw(), 0) };
        Ok(out)
    }
}

/// The first platform (with its index) whose `clGetDeviceIDsFromD3D11KHR` names a preferred
/// device for the D3D11 `device`, and that device.
pub(crate) fn preferred_platform(
    dev: *mut ID3D11Device,
) -> Result<(usize, cl_platform_id, cl_device_id), BoxError> {
    for (index, p) in cl::platforms()?.into_iter().enumerate() {
        // SAFETY: the name and the type agree (cl_d3d11.h).
        let Some(get_ids) =
            (unsafe { sharing::lookup::<GetDeviceIDsFromD3D11>(p, "clGetDeviceIDsFromD3D11KHR") })
        else {
            continue;
        };
        match sharing::preferred_device(get_ids, p, dev) {
            Ok(d) if !d.is_null() => return Ok((index, p, d)),
            _ => {}
        }
    }
    Err(
        "no OpenCL platform has a preferred device for this Direct3D 11 device \
         (is OPENCL_LAYERS pointing at libdxcl_layer.so?)"
            .into(),
    )
}

/// The adapter behind `device`: its description from DXGI, matched by LUID, and its backend.
pub(crate) fn describe_adapter(device: &Com<ID3D11Device>) -> String {
    let Some(interop) = device.cast::<IDxclInteropDevice>() else {
        return "unknown adapter (no dxcl interop interface)".into();
    };
    let mut info = DXCL_ADAPTER_INFO::default();
    let p = interop.as_raw();
    // SAFETY: `p` is live; `info` is a valid out struct.
    if !SUCCEEDED(unsafe { ((*(*p).lpVtbl).GetAdapterInfo)(p, &mut info) }) {
        return "unknown adapter".into();
    }
    let name = d3d::adapters()
        .ok()
        .and_then(|all| {
            all.into_iter().find(|a| {
                a.luid.LowPart == info.AdapterLuid.LowPart
                    && a.luid.HighPart == info.AdapterLuid.HighPart
            })
        })
        .map(|a| a.description)
        .unwrap_or_else(|| "unnamed adapter".into());
    format!(
        "{name} (vendor 0x{:04x}, backend {}{})",
        info.VendorId,
        d3d::backend_name(info.Backend),
        if info.Flags & DXCL_ADAPTER_FLAG_SOFTWARE as u32 != 0 {
            ", software"
        } else {
            ""
        }
    )
}

/// The runtime's report of the resource's memory (None without dxcl's interop interface).
fn memory_of(
    resource: &Com<ID3D11Resource>,
) -> Option<(DXCL_RESOURCE_MEMORY, DXCL_SUBRESOURCE_LAYOUT)> {
    d3d::interop_memory(&resource.cast::<IDxclInteropResource>()?)
}

/// The address of subresource 0 when the resource lives in host memory (dxcl's host backend).
fn host_memory(resource: &Com<ID3D11Resource>) -> Option<usize> {
    let (mem, layout) = memory_of(resource)?;
    (mem.Kind == DXCL_MEMORY_KIND_HOST && !mem.pHost.is_null())
        .then(|| (mem.pHost as usize).wrapping_add(layout.Offset as usize))
}

/// Whether the resource lives in memory the runtime exports as a file descriptor.
fn exportable(resource: &Com<ID3D11Resource>) -> bool {
    memory_of(resource).is_some_and(|(mem, _)| {
        mem.Kind == DXCL_MEMORY_KIND_OPAQUE_FD || mem.Kind == DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE
    })
}

/// How the layer shares an object, read from the memory object it made rather than from its
/// decision rules: what happened, whatever the layer's version. Names are those of
/// `dxcl_layer::strategy::Strategy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    HostPointer,
    ExternalMemory,
    StagingCopy,
}

impl Sharing {
    pub fn name(self) -> &'static str {
        match self {
            Sharing::HostPointer => "host-pointer",
            Sharing::ExternalMemory => "external-memory",
            Sharing::StagingCopy => "staging-copy",
        }
    }

    /// What shows it.
    pub fn evidence(self) -> &'static str {
        match self {
            Sharing::HostPointer => "CL_MEM_HOST_PTR is the resource's own memory (zero-copy)",
            Sharing::ExternalMemory => {
                "CL_MEM_PROPERTIES imports a file descriptor \
                 (CL_EXTERNAL_MEMORY_HANDLE_OPAQUE_FD_KHR, zero-copy); where the platform \
                 answers no properties (NVIDIA, for buffers), the resource's memory is exportable \
                 and the layer tagged it external-memory (DXCL_PRIVATE_DATA_CL_STRATEGY)"
            }
            Sharing::StagingCopy => "the CL object has memory of its own (copies)",
        }
    }

    pub(crate) fn observe(resource: &Com<ID3D11Resource>, mem: cl_mem) -> Sharing {
        let mut host: *mut c_void = ptr::null_mut();
        // SAFETY: a pointer-sized query into a pointer.
        let status = unsafe {
            cl::clGetMemObjectInfo(
                mem,
                CL_MEM_HOST_PTR,
                std::mem::size_of::<*mut c_void>(),
                (&mut host as *mut *mut c_void).cast(),
                ptr::null_mut(),
            )
        };
        if status == CL_SUCCESS && !host.is_null() && host_memory(resource) == Some(host as usize) {
            Sharing::HostPointer
        } else if cl::imports_opaque_fd(mem)
            || (exportable(resource)
                && d3d::layer_tag(resource).as_deref() == Some("external-memory"))
        {
            Sharing::ExternalMemory
        } else {
            Sharing::StagingCopy
        }
    }
}

/// A D3D resource and the `cl_mem` made from it. The `cl_mem` is released first.
pub struct Shared<'s> {
    session: &'s Session,
    pub shape: Shape,
    mem: ClHandle<cl_mem>,
    resource: Com<ID3D11Resource>,
    /// How the layer shares this object.
    pub sharing: Sharing,
}

impl Shared<'_> {
    fn acquire(&self) -> Result<(), ClError> {
        // SAFETY: a valid queue and one valid cl_mem from a D3D11 resource; no events.
        cl_check("clEnqueueAcquireD3D11ObjectsKHR", unsafe {
            (self.session.entry.acquire)(
                self.session.queue.0,
                1,
                &self.mem.0,
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })
    }

    fn release(&self) -> Result<(), ClError> {
        // SAFETY: as in `acquire`; the object is acquired.
        cl_check("clEnqueueReleaseD3D11ObjectsKHR", unsafe {
            (self.session.entry.release)(
                self.session.queue.0,
                1,
                &self.mem.0,
                0,
                ptr::null(),
                ptr::null_mut(),
            )
        })
    }

    /// The timed operation: acquire, release, `clFinish`.
    pub fn acquire_release(&self) -> Result<(), ClError> {
        self.acquire()?;
        self.release()?;
        // SAFETY: a valid queue.
        cl_check("clFinish", unsafe { cl::clFinish(self.session.queue.0) })
    }

    /// What the platform's own hand-off of an imported object costs, with no dxcl in it:
    /// `clEnqueueAcquireExternalMemObjectsKHR` + `clEnqueueReleaseExternalMemObjectsKHR` +
    /// `clFinish` on the same `cl_mem`, called directly; `with_event`: the release returns its
    /// event, released after the `clFinish`. None unless the layer imported the object
    /// (external-memory) and the platform has the two calls.
    pub fn platform_hand_off(
        &self,
        with_event: bool,
    ) -> Option<impl Fn() -> Result<(), ClError> + '_> {
        let (acquire, release) = self.session.external?;
        (self.sharing == Sharing::ExternalMemory).then_some(move || {
            let q = self.session.queue.0;
            // SAFETY: a valid queue and an imported cl_mem of its context; no events.
            cl_check("clEnqueueAcquireExternalMemObjectsKHR", unsafe {
                acquire(q, 1, &self.mem.0, 0, ptr::null(), ptr::null_mut())
            })?;
            let mut ev: cl_event = ptr::null_mut();
            let out = if with_event {
                &mut ev as *mut _
            } else {
                ptr::null_mut()
            };
            // SAFETY: as above; the object was acquired just before; `out` is null or ours.
            cl_check("clEnqueueReleaseExternalMemObjectsKHR", unsafe {
                release(q, 1, &self.mem.0, 0, ptr::null(), out)
            })?;
            // SAFETY: a valid queue.
            let finished = cl_check("clFinish", unsafe { cl::clFinish(q) });
            if !ev.is_null() {
                // SAFETY: the event the release returned, released once.
                cl_check("clReleaseEvent", unsafe { cl::clReleaseEvent(ev) })?;
            }
            finished
        })
    }

    /// Direct3D writes `value` into the first texel (4 bytes) and the bench waits for that work
    /// to complete: the next acquire follows Direct3D work on the object, with Direct3D idle
    /// (the busy case is [`Self::stall`]'s), and the runtime runs the work the last release left
    /// pending.
    pub fn touch(&self, value: u32) -> Result<(), BoxError> {
        let b = D3D11_BOX {
            left: 0,
            top: 0,
            front: 0,
            right: match self.shape.kind {
                Kind::Buffer => TEXEL_BYTES as u32,
                Kind::Texture2D => 1,
            },
            bottom: 1,
            back: 1,
        };
        let bytes = value.to_le_bytes();
        let ctx = self.session.context.as_raw();
        // SAFETY: the box lies in subresource 0 (every shape spans at least 4 bytes / 1 texel)
        // and `bytes` holds its one row of 4 bytes.
        unsafe {
            ((*(*ctx).lpVtbl).UpdateSubresource)(
                ctx,
                self.resource.as_raw(),
                0,
                &b,
                bytes.as_ptr().cast(),
                4,
                0,
            )
        };
        let q = self.session.event_query()?;
        self.session.wait_event(&q)
    }

    /// Checks, untimed, that the path moves data both ways: what Direct3D wrote is what OpenCL
    /// reads after an acquire, and what OpenCL wrote is what Direct3D reads after the release
    /// (with no `clFinish`: the release's synchronisation must order it).
    pub fn verify(&self, seed: u32) -> Result<(), BoxError> {
        let s = self.session;
        let mut expected = pattern(self.shape.bytes(), seed);
        s.d3d_write(&self.resource, &self.shape, &expected);
        self.acquire()?;
        let mut got = vec![0u8; expected.len()];
        self.cl_transfer(got.as_mut_ptr().cast(), false)?;
        compare(
            &expected,
            &got,
            "OpenCL after acquire does not see Direct3D's data",
        )?;
        drop(got);
        expected = pattern(self.shape.bytes(), !seed);
        self.cl_transfer(expected.as_mut_ptr().cast(), true)?;
        self.release()?;
        let got = s.d3d_read(&self.resource, &self.shape)?;
        compare(
            &expected,
            &got,
            "Direct3D after release does not see OpenCL's data",
        )
    }

    /// A blocking read (into `host`) or write (from `host`) of the whole object.
    fn cl_transfer(&self, host: *mut c_void, write: bool) -> Result<(), ClError> {
        let q = self.session.queue.0;
        let m = self.mem.0;
        let shape = &self.shape;
        let origin = [0usize; 3];
        let region = [shape.width as usize, shape.height as usize, 1];
        let pitch = shape.row_bytes();
        // SAFETY: `host` spans `shape.bytes()` bytes (rows of `pitch`), blocking calls.
        let status = unsafe {
            match (shape.kind, write) {
                (Kind::Buffer, false) => cl::clEnqueueReadBuffer(
                    q,
                    m,
                    CL_TRUE,
                    0,
                    shape.bytes(),
                    host,
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                (Kind::Buffer, true) => cl::clEnqueueWriteBuffer(
                    q,
                    m,
                    CL_TRUE,
                    0,
                    shape.bytes(),
                    host,
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                (Kind::Texture2D, false) => cl::clEnqueueReadImage(
                    q,
                    m,
                    CL_TRUE,
                    origin.as_ptr(),
                    region.as_ptr(),
                    pitch,
                    0,
                    host,
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
                (Kind::Texture2D, true) => cl::clEnqueueWriteImage(
                    q,
                    m,
                    CL_TRUE,
                    origin.as_ptr(),
                    region.as_ptr(),
                    pitch,
                    0,
                    host,
                    0,
                    ptr::null(),
                    ptr::null_mut(),
                ),
            }
        };
        cl_check(
            match (shape.kind, write) {
                (Kind::Buffer, false) => "clEnqueueReadBuffer",
                (Kind::Buffer, true) => "clEnqueueWriteBuffer",
                (Kind::Texture2D, false) => "clEnqueueReadImage",
                (Kind::Texture2D, true) => "clEnqueueWriteImage",
            },
            status,
        )
    }
}

/// Bytes that differ from word to word and from seed to seed, so stale data cannot pass.
pub fn pattern(len: usize, seed: u32) -> Vec<u8> {
    let mut out = vec![0u8; len];
    for (i, chunk) in out.chunks_mut(4).enumerate() {
        let word = (i as u32)
            .wrapping_mul(0x9E37_79B1)
            .wrapping_add(seed)
            .rotate_left(13)
            ^ seed;
        chunk.copy_from_slice(&word.to_le_bytes()[..chunk.len()]);
    }
    out
}

fn compare(expected: &[u8], got: &[u8], what: &str) -> Result<(), BoxError> {
    let wrong = expected.iter().zip(got).filter(|(e, g)| e != g).count();
    match expected.iter().zip(got).position(|(e, g)| e != g) {
        None if expected.len() == got.len() => Ok(()),
        None => Err(format!("{what}: {} bytes instead of {}", got.len(), expected.len()).into()),
        Some(first) => Err(format!(
            "{what}: {wrong} of {} bytes differ, the first at offset {first}",
            expected.len()
        )
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texture_shapes_are_square_ish_and_cover_the_size() {
        let t = |b| Shape::for_bytes(Kind::Texture2D, b).unwrap();
        assert_eq!((t(4096).width, t(4096).height), (32, 32));
        assert_eq!((t(256 << 20).width, t(256 << 20).height), (8192, 8192));
        let odd = t(8192);
        assert_eq!((odd.width, odd.height), (64, 32));
        assert_eq!(t(3).bytes(), 4);
        for b in [1u64, 100, 5000, 1 << 20, 3 << 20] {
            let s = t(b);
            assert!(s.bytes() as u64 >= b && s.width >= s.height, "{b}: {s:?}");
        }
        assert_eq!(Shape::for_bytes(Kind::Buffer, 4096).unwrap().bytes(), 4096);
        assert!(Shape::for_bytes(Kind::Buffer, 0).is_none());
        assert!(Shape::for_bytes(Kind::Buffer, 1 << 32).is_none());
    }

    #[test]
    fn sharing_names_are_the_layers() {
        use dxcl_layer::strategy::Strategy;
        assert_eq!(Sharing::HostPointer.name(), Strategy::HostPointer.name());
        assert_eq!(Sharing::StagingCopy.name(), Strategy::StagingCopy.name());
    }

    #[test]
    fn patterns_differ_by_seed_and_compare_finds_mismatches() {
        let a = pattern(1002, 1);
        assert_eq!(a.len(), 1002);
        assert_ne!(a, pattern(1002, 2));
        assert_ne!(a, pattern(1002, !1));
        assert!(compare(&a, &a, "x").is_ok());
        let mut b = a.clone();
        b[7] ^= 1;
        let e = compare(&a, &b, "x").unwrap_err().to_string();
        assert!(e.contains("1 of 1002") && e.contains("offset 7"), "{e}");
        assert!(compare(&a, &a[..10], "x").is_err());
    }
}

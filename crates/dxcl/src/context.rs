//! [`Context`]: an OpenCL context shared with a Direct3D device.

use std::fmt;
use std::ptr;
use std::sync::Mutex;

use opencl3::command_queue::CommandQueue;
use opencl3::platform::{get_platforms, Platform};
use opencl3::types::{cl_context_properties, cl_device_id, cl_platform_id, cl_uint};

use crate::api::{Api, EntryPoints, Flavor};
use crate::com::Com;
use crate::error::{Error, Result};
use crate::mem::{Access, SharedBuffer, SharedImage, Subresource};
use crate::queue::Queue;

const CL_CONTEXT_PLATFORM: cl_context_properties = 0x1084;

/// Which devices [`devices_for`] asks the platform for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DeviceSet {
    /// `CL_PREFERRED_DEVICES_FOR_D3D1x_KHR`: the devices that share with the Direct3D device
    /// best (on the same adapter).
    #[default]
    Preferred,
    /// `CL_ALL_DEVICES_FOR_D3D1x_KHR`: every device that can share with it.
    All,
}

/// The context properties that make a context shared with `device` on `platform`:
/// `{CL_CONTEXT_PLATFORM, platform, CL_CONTEXT_D3D1x_DEVICE_KHR, device, 0}`. For code that
/// creates its own `opencl3` context (with more properties) and wraps it with
/// [`Context::from_opencl3`].
pub fn context_properties<A: Api>(
    platform: cl_platform_id,
    device: &Com<A::Device>,
) -> Vec<cl_context_properties> {
    vec![
        CL_CONTEXT_PLATFORM,
        platform as cl_context_properties,
        A::CONTEXT_DEVICE,
        device.as_raw() as cl_context_properties,
        0,
    ]
}

/// The OpenCL devices of `platform` that can share with the Direct3D `device`
/// (`clGetDeviceIDsFromD3D1x…`). An empty list when there are none.
pub fn devices_for<A: Api>(
    platform: cl_platform_id,
    device: &Com<A::Device>,
    flavor: Flavor,
    set: DeviceSet,
) -> Result<Vec<cl_device_id>> {
    let entry =
        EntryPoints::load::<A>(platform, flavor).ok_or(Error::NoPlatform(A::extension(flavor)))?;
    devices_with::<A>(&entry, platform, device, set)
}

fn devices_with<A: Api>(
    entry: &EntryPoints,
    platform: cl_platform_id,
    device: &Com<A::Device>,
    set: DeviceSet,
) -> Result<Vec<cl_device_id>> {
    let set = match set {
        DeviceSet::Preferred => A::PREFERRED_DEVICES,
        DeviceSet::All => A::ALL_DEVICES,
    };
    let source = device.as_raw().cast();
    let mut n: cl_uint = 0;
    // SAFETY: a size query that writes only `n`; the device is live while `device` is.
    let status = unsafe {
        (entry.get_device_ids)(
            platform,
            A::DEVICE_SOURCE,
            source,
            set,
            0,
            ptr::null_mut(),
            &mut n,
        )
    };
    match Error::check(status) {
        Err(Error::DeviceNotFound) => return Ok(Vec::new()),
        other => other?,
    }
    let mut ids: Vec<cl_device_id> = vec![ptr::null_mut(); n as usize];
    // SAFETY: `ids` has room for the `n` handles offered.
    Error::check(unsafe {
        (entry.get_device_ids)(
            platform,
            A::DEVICE_SOURCE,
            source,
            set,
            n,
            ids.as_mut_ptr(),
            ptr::null_mut(),
        )
    })?;
    Ok(ids)
}

/// An OpenCL context shared with a Direct3D device of version `A` ([`D3D10`](crate::D3D10) or
/// [`D3D11`](crate::D3D11)): it makes [`SharedBuffer`]s and [`SharedImage`]s from the device's
/// resources, and [`Queue`]s that acquire them.
///
/// It owns an [`opencl3::context::Context`] ([`Context::context`]) for everything else:
/// programs, command queues, ordinary buffers. The OpenCL context holds its own reference to the
/// Direct3D device (the extension's rule), and this value holds one more.
pub struct Context<A: Api> {
    // Declared first: dropped before the device reference below.
    context: opencl3::context::Context,
    device: Com<A::Device>,
    platform: cl_platform_id,
    flavor: Flavor,
    entry: EntryPoints,
}

impl<A: Api> Context<A> {
    /// A KHR context on the first platform with the extension and a preferred device for
    /// `device`, with all of those devices.
    ///
    /// # Errors
    /// [`Error::NoPlatform`] when no platform offers one (is the layer in `OPENCL_LAYERS`?),
    /// or the status of `clCreateContext`.
    pub fn new(device: &Com<A::Device>) -> Result<Context<A>> {
        Context::with_flavor(device, Flavor::Khr)
    }

    /// As [`Context::new`], through the `flavor`'s entry points.
    ///
    /// # Errors
    /// As [`Context::new`].
    pub fn with_flavor(device: &Com<A::Device>, flavor: Flavor) -> Result<Context<A>> {
        let ext = A::extension(flavor);
        for platform in get_platforms()? {
            let offers = platform
                .extensions()
                .is_ok_and(|list| list.split_whitespace().any(|e| e == ext));
            if !offers {
                continue;
            }
            match Context::on_platform(&platform, device, flavor) {
                Err(Error::NoPlatform(_)) => continue,
                other => return other,
            }
        }
        Err(Error::NoPlatform(ext))
    }

    /// A context on `platform` with its preferred devices for `device`.
    ///
    /// # Errors
    /// [`Error::NoPlatform`] when the platform lacks the extension or a device for `device`;
    /// the status of `clGetDeviceIDsFromD3D1x…` or `clCreateContext`.
    pub fn on_platform(
        platform: &Platform,
        device: &Com<A::Device>,
        flavor: Flavor,
    ) -> Result<Context<A>> {
        let ext = A::extension(flavor);
        let entry = EntryPoints::load::<A>(platform.id(), flavor).ok_or(Error::NoPlatform(ext))?;
        // On PoCL 3.1, two threads making the process's first contexts at once fail now and
        // then (no preferred device found; CL_INVALID_BUFFER_SIZE from the first buffer), and a
        // context made first on one thread avoids it: PoCL seems to finish setting its devices
        // up inside the first clCreateContext. One creation at a time keeps this crate's own
        // contexts out of that window.
        static CREATION: Mutex<()> = Mutex::new(());
        let _one = CREATION
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let devices = devices_with::<A>(&entry, platform.id(), device, DeviceSet::Preferred)?;
        if devices.is_empty() {
            return Err(Error::NoPlatform(ext));
        }
        let props = context_properties::<A>(platform.id(), device);
        let context =
            opencl3::context::Context::from_devices(&devices, &props, None, ptr::null_mut())?;
        Ok(Context {
            context,
            device: device.clone(),
            platform: platform.id(),
            flavor,
            entry,
        })
    }

    /// Adopts a context the application made itself with `opencl3` (with
    /// [`context_properties`] among its properties, plus any others such as
    /// `CL_CONTEXT_INTEROP_USER_SYNC`). Takes its own reference to the OpenCL context.
    ///
    /// # Errors
    /// [`Error::InvalidContext`] when `context` was not created with `device` as its
    /// `CL_CONTEXT_D3D1x_DEVICE_KHR`; [`Error::NoPlatform`] when its platform lacks the
    /// `flavor`'s entry points.
    pub fn from_opencl3(
        context: &opencl3::context::Context,
        device: &Com<A::Device>,
        flavor: Flavor,
    ) -> Result<Context<A>> {
        let props = context.properties()?;
        let pairs: Vec<(isize, isize)> = props
            .chunks_exact(2)
            .take_while(|p| p[0] != 0)
            .map(|p| (p[0], p[1]))
            .collect();
        // clCreateFromD3D1x…: CL_INVALID_CONTEXT if the context was not created from a
        // Direct3D device of this version; checked here once instead of at every call.
        if !pairs.contains(&(A::CONTEXT_DEVICE, device.as_raw() as isize)) {
            return Err(Error::InvalidContext);
        }
        let platform = match pairs.iter().find(|p| p.0 == CL_CONTEXT_PLATFORM) {
            Some(&(_, p)) => p as cl_platform_id,
            None => opencl3::device::Device::new(context.default_device()).platform()?,
        };
        let entry = EntryPoints::load::<A>(platform, flavor)
            .ok_or(Error::NoPlatform(A::extension(flavor)))?;
        let raw = context.get();
        // SAFETY: `raw` is a live context (borrowed from `context`); the reference taken here is
        // the one the new `opencl3::context::Context` releases on drop.
        unsafe { cl3::context::retain_context(raw) }.map_err(Error::from_code)?;
        Ok(Context {
            context: opencl3::context::Context::new(raw, context.devices()),
            device: device.clone(),
            platform,
            flavor,
            entry,
        })
    }

    /// The OpenCL context, for programs, command queues and ordinary memory objects.
    pub fn context(&self) -> &opencl3::context::Context {
        &self.context
    }

    /// The Direct3D device it shares with.
    pub fn device(&self) -> &Com<A::Device> {
        &self.device
    }

    /// Its OpenCL platform.
    pub fn platform(&self) -> cl_platform_id {
        self.platform
    }

    /// The flavour of its entry points.
    pub fn flavor(&self) -> Flavor {
        self.flavor
    }

    /// A new in-order command queue on the context's first device.
    ///
    /// # Errors
    /// The status of `clCreateCommandQueueWithProperties`.
    pub fn create_queue(&self) -> Result<CommandQueue> {
        Ok(CommandQueue::create_default_with_properties(
            &self.context,
            0,
            0,
        )?)
    }

    /// Borrows `queue`, a command queue of this context, to acquire and release shared objects
    /// on it.
    ///
    /// # Errors
    /// [`Error::InvalidContext`] when `queue` belongs to another context (the status the
    /// acquire would return).
    pub fn queue<'q>(&'q self, queue: &'q CommandQueue) -> Result<Queue<'q, A>> {
        if queue.context()? != self.context.get() {
            return Err(Error::InvalidContext);
        }
        Ok(Queue::new(&self.entry, queue))
    }

    /// Shares a buffer (`clCreateFromD3D1xBuffer…`). The OpenCL buffer holds a reference to
    /// the resource until it is dropped.
    ///
    /// # Errors
    /// `InvalidD3D1xResource` (a buffer already shared, `USAGE_IMMUTABLE`, another device's
    /// resource), the status otherwise.
    pub fn buffer(&self, buffer: &Com<A::Buffer>, access: Access) -> Result<SharedBuffer<A>> {
        let mut err = 0;
        // SAFETY: a live context and a live buffer; `err` is writable.
        let mem = unsafe {
            (self.entry.create_from_buffer)(
                self.context.get(),
                access.flags(),
                buffer.as_raw().cast(),
                &mut err,
            )
        };
        Error::check(err)?;
        // SAFETY: a new memory object whose one reference the value takes over.
        Ok(unsafe { SharedBuffer::from_raw(mem, buffer.clone()) })
    }

    /// Shares one subresource of a 2D texture (`clCreateFromD3D1xTexture2D…`) as a 2D image:
    /// `subresource` names the mip level and the array slice.
    ///
    /// # Errors
    /// [`Error::InvalidValue`] for a subresource the texture does not have (checked here, as the
    /// extension would); `InvalidD3D1xResource` (multisampled, already shared, …);
    /// [`Error::InvalidImageFormatDescriptor`] for a format without an OpenCL equivalent.
    pub fn texture2d(
        &self,
        texture: &Com<A::Texture2D>,
        subresource: Subresource,
        access: Access,
    ) -> Result<SharedImage<A>> {
        let shape = A::texture2d_shape(texture);
        let index = subresource.index(shape.mip_levels, shape.array_size)?;
        let mut err = 0;
        // SAFETY: a live context and texture; `err` is writable.
        let mem = unsafe {
            (self.entry.create_from_texture2d)(
                self.context.get(),
                access.flags(),
                texture.as_raw().cast(),
                index,
                &mut err,
            )
        };
        Error::check(err)?;
        // SAFETY: a new memory object whose one reference the value takes over.
        Ok(unsafe { SharedImage::from_texture2d(mem, texture.clone(), subresource, shape) })
    }

    /// Shares one mip level of a 3D texture (`clCreateFromD3D1xTexture3D…`) as a 3D image.
    ///
    /// # Errors
    /// As [`Context::texture2d`].
    pub fn texture3d(
        &self,
        texture: &Com<A::Texture3D>,
        mip: u32,
        access: Access,
    ) -> Result<SharedImage<A>> {
        let shape = A::texture3d_shape(texture);
        let subresource = Subresource::mip(mip);
        let index = subresource.index(shape.mip_levels, 1)?;
        let mut err = 0;
        // SAFETY: a live context and texture; `err` is writable.
        let mem = unsafe {
            (self.entry.create_from_texture3d)(
                self.context.get(),
                access.flags(),
                texture.as_raw().cast(),
                index,
                &mut err,
            )
        };
        Error::check(err)?;
        // SAFETY: a new memory object whose one reference the value takes over.
        Ok(unsafe { SharedImage::from_texture3d(mem, texture.clone(), subresource, shape) })
    }
}

impl<A: Api> fmt::Debug for Context<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("api", &A::NAME)
            .field("flavor", &self.flavor)
            .field("context", &self.context.get())
            .field("device", &self.device)
            .finish()
    }
}

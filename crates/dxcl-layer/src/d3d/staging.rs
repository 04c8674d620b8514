//! The staging-copy strategy's D3D side: one CPU-accessible staging resource per shared
//! subresource, copied to and from a tightly packed host shadow ([`super::packed`]) that the
//! strategy owns and OpenCL reads and writes.
//!
//! Standard COM calls only: D3D11 through the device's immediate context (CopySubresourceRegion,
//! Map, Unmap); D3D10 through the device (CopySubresourceRegion) and the resource's own Map/Unmap.
//!
//! Threads: the D3D11 immediate context is not thread-safe, and acquires and releases may run on
//! any number of application threads at once. All of the layer's Direct3D work on one device
//! therefore runs under one lock per device ([`DeviceLock`]), so the layer never overlaps itself.
//! The application's own calls on other threads are its side of the contract (the layer README's
//! threading paragraph). D3D10 devices are thread-safe unless created
//! `D3D10_CREATE_DEVICE_SINGLETHREADED`; their work takes the same lock, which costs nothing of
//! note and covers that case.

use dxcl_abi::{
    ID3D10Buffer, ID3D10Device, ID3D10Resource, ID3D10Texture2D, ID3D10Texture3D, ID3D11Device,
    ID3D11DeviceContext, ID3D11Resource, D3D10_BUFFER_DESC, D3D10_CPU_ACCESS_READ,
    D3D10_CPU_ACCESS_WRITE, D3D10_MAP, D3D10_MAPPED_TEXTURE2D, D3D10_MAPPED_TEXTURE3D,
    D3D10_MAP_READ, D3D10_MAP_WRITE, D3D10_TEXTURE2D_DESC, D3D10_TEXTURE3D_DESC,
    D3D10_USAGE_DEFAULT, D3D10_USAGE_STAGING, D3D11_BUFFER_DESC, D3D11_CPU_ACCESS_READ,
    D3D11_CPU_ACCESS_WRITE, D3D11_MAPPED_SUBRESOURCE, D3D11_MAP_READ, D3D11_MAP_WRITE,
    D3D11_TEXTURE2D_DESC, D3D11_TEXTURE3D_DESC, D3D11_USAGE_DEFAULT, D3D11_USAGE_STAGING,
    DXGI_SAMPLE_DESC, E_FAIL, HRESULT, SUCCEEDED,
};

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::thread::ThreadId;

use super::com::ComPtr;
use super::host_copy::HostCopy;
use super::interop::Interop;
use super::multithread::Multithread;
use super::packed::{Layout, Mapping, Piece};
use super::resource::{device10, device11, AnyResource, Resource};
use crate::core::tokens::D3dVersion;
use crate::core::tokens::ResourceKind;

/// Where a staging resource lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// CPU-accessible (`USAGE_STAGING`), with a host shadow.
    Host,
    /// GPU memory (`USAGE_DEFAULT`), without a host shadow.
    Device,
    /// A DXVK device's 2D texture in memory dxcl owns (`dxclCreateSharedTexture2D`), without a
    /// host shadow: the shadow-copy strategy shares it with OpenCL as dxcl's own resources.
    Shared,
}

/// The pieces a write-back fills the mapping in: only the threads' share of the work, since
/// nothing overlaps with it.
const UPLOAD_PIECE: usize = 1 << 20;

/// A failed D3D call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct D3dError(pub HRESULT);

fn ok(hr: HRESULT) -> Result<(), D3dError> {
    if SUCCEEDED(hr) {
        Ok(())
    } else {
        Err(D3dError(hr))
    }
}

/// The version-specific objects of one shared subresource.
enum Api {
    D3D11 {
        /// The shared resource (borrowed: the memory object's entry holds the reference).
        resource: ComPtr<ID3D11Resource>,
        context: ComPtr<ID3D11DeviceContext>,
        staging: ComPtr<ID3D11Resource>,
    },
    D3D10 {
        resource: ComPtr<ID3D10Resource>,
        device: ComPtr<ID3D10Device>,
        staging: Staging10,
    },
}

/// A D3D10 staging resource: D3D10 maps through the resource's own interface, whose `Map`
/// differs per kind.
enum Staging10 {
    Buffer(ComPtr<ID3D10Buffer>),
    Texture2D(ComPtr<ID3D10Texture2D>),
    Texture3D(ComPtr<ID3D10Texture3D>),
}

impl Staging10 {
    fn resource(&self) -> *mut ID3D10Resource {
        match self {
            Staging10::Buffer(b) => b.as_base(),
            Staging10::Texture2D(t) => t.as_base(),
            Staging10::Texture3D(t) => t.as_base(),
        }
    }
}

/// The lock of one Direct3D device, shared by every staging resource of that device: held
/// around each sequence of the layer's calls on the device (its immediate context for D3D11).
///
/// Re-entrant: a staging release's write-back runs as the runtime's pending work (dxcl's runtime)
/// inside a Direct3D call, which may be one the layer makes under this lock on the same thread.
/// Where the device has a multithread lock ([`Multithread`]), that lock is taken first, then
/// this one, in every sequence, so a write-back on a platform thread (foreign devices) never
/// overlaps the application's own calls, and the two locks are always taken in one order.
#[derive(Clone)]
pub(crate) struct DeviceLock(Arc<DeviceLockState>);

struct DeviceLockState {
    /// The thread holding the lock and how many times it took it.
    owner: Mutex<Option<(ThreadId, usize)>>,
    freed: Condvar,
    multithread: Option<Multithread>,
}

/// One hold of a [`DeviceLock`], released on drop.
pub(crate) struct DeviceGuard<'a>(&'a DeviceLockState);

impl DeviceLock {
    /// The lock of the device whose `IUnknown` identity is `device` (`multithread`: its own lock,
    /// used by the first staging resource's lock of the device). The map keeps weak references: a
    /// lock lives as long as a staging resource of its device, and each of those holds the device,
    /// so an identity cannot be reused by another device while its lock lives.
    fn of(device: usize, multithread: Option<Multithread>) -> DeviceLock {
        static LOCKS: OnceLock<Mutex<HashMap<usize, Weak<DeviceLockState>>>> = OnceLock::new();
        let mut locks = LOCKS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(lock) = locks.get(&device).and_then(Weak::upgrade) {
            return DeviceLock(lock);
        }
        locks.retain(|_, l| l.strong_count() > 0);
        let lock = Arc::new(DeviceLockState {
            owner: Mutex::new(None),
            freed: Condvar::new(),
            multithread,
        });
        locks.insert(device, Arc::downgrade(&lock));
        DeviceLock(lock)
    }

    pub fn hold(&self) -> DeviceGuard<'_> {
        let state = &*self.0;
        if let Some(m) = &state.multithread {
            m.enter();
        }
        let me = std::thread::current().id();
        // Nothing the lock guards can be left half-done by a panic (it guards no data).
        let mut owner = state.owner.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match &mut *owner {
                None => {
                    *owner = Some((me, 1));
                    break;
                }
                Some((t, depth)) if *t == me => {
                    *depth += 1;
                    break;
                }
                Some(_) => {
                    owner = state.freed.wait(owner).unwrap_or_else(|p| p.into_inner());
                }
            }
        }
        DeviceGuard(state)
    }
}

impl Drop for DeviceGuard<'_> {
    fn drop(&mut self) {
        let mut owner = self.0.owner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, depth)) = &mut *owner {
            *depth -= 1;
            if *depth == 0 {
                *owner = None;
                self.0.freed.notify_one();
            }
        }
        drop(owner);
        if let Some(m) = &self.0.multithread {
            m.leave();
        }
    }
}

pub(crate) struct Staging {
    /// dxcl's runtime (`Place::Host`): copies straight between the subresource and the shadow,
    /// the staging resource being the fallback. First, so it is dropped first: its drop
    /// unregisters the shadow through a borrowed device pointer, which the staging resource
    /// (counted, below) may be the last to keep alive.
    direct: Option<HostCopy>,
    kind: ResourceKind,
    api: Api,
    device_lock: DeviceLock,
    subresource: u32,
    extent: (u32, u32, u32),
    /// The packed shadow's shape (buffers: one row of the whole buffer).
    layout: Layout,
}

impl Staging {
    /// Creates the staging resource for one subresource of `r`, whose mip level has `extent`
    /// texels of `pixel_size` bytes (buffers: ByteWidth, 1, 1 and 1).
    ///
    /// `Place::Host` makes a CPU-accessible STAGING resource, copied to and from a packed host
    /// shadow (the staging-copy strategy); `Place::Device` makes a DEFAULT-usage one-subresource
    /// resource (the external-copy strategy imports it into OpenCL and copies on the GPU).
    #[allow(clippy::too_many_arguments)] // The subresource's identity, extent and placement.
    pub fn new(
        version: D3dVersion,
        kind: ResourceKind,
        r: &Resource,
        subresource: u32,
        extent: (u32, u32, u32),
        pixel_size: usize,
        place: Place,
    ) -> Result<Staging, D3dError> {
        // SAFETY: the memory object's registry entry holds the counted reference to the resource
        // and owns this staging copy, so the resource outlives it.
        let base = unsafe { r.base.clone().into_borrowed() };
        // A foreign device (no interop interface): a staging release writes back from a platform
        // thread, which must hold the device's own lock. dxcl's runtime writes back on the
        // thread of the next Direct3D access instead, and needs no protection.
        let interop = Interop::query(&r.com);
        let foreign = interop.is_none();
        // A DXVK texture's private interop object (`defers` false) copies nothing itself.
        let direct_resource = interop
            .filter(|i| i.defers && place == Place::Host)
            .map(|i| i.com);
        let direct_device;
        let (api, device_lock) = match base {
            AnyResource::D3D11(resource) => {
                let device = device11(&resource).ok_or(D3dError(E_FAIL))?;
                direct_device = device.query();
                let context = immediate_context(&device)?;
                let multithread = foreign.then(|| Multithread::of(&context)).flatten();
                let device_lock = DeviceLock::of(device.identity(), multithread);
                let staging = create_staging11(&device, kind, r.desc.format, extent, place)?;
                let api = Api::D3D11 {
                    resource,
                    context,
                    staging,
                };
                (api, device_lock)
            }
            AnyResource::D3D10(resource) => {
                let device = device10(&resource).ok_or(D3dError(E_FAIL))?;
                direct_device = device.query();
                let multithread = foreign.then(|| Multithread::of(&device)).flatten();
                let device_lock = DeviceLock::of(device.identity(), multithread);
                let staging = create_staging10(&device, kind, r.desc.format, extent, place)?;
                let api = Api::D3D10 {
                    resource,
                    device,
                    staging,
                };
                (api, device_lock)
            }
        };
        debug_assert!(matches!(
            (version, &api),
            (D3dVersion::D3D11, Api::D3D11 { .. }) | (D3dVersion::D3D10, Api::D3D10 { .. })
        ));
        let (w, h, d) = extent;
        let row_bytes = match kind {
            ResourceKind::Buffer => w as usize,
            _ => w as usize * pixel_size,
        };
        let layout = Layout {
            kind,
            extent: (w as usize, h as usize, d as usize),
            row_bytes,
        };
        let direct = match (direct_resource, direct_device) {
            // SAFETY: the memory object's registry entry holds the counted reference to the
            // resource (as for `base`), and the resource holds its device: the specs let a
            // cl_mem add exactly one reference to its resource.
            (Some(r), Some(d)) => Some(HostCopy::new(
                unsafe { r.into_borrowed() },
                unsafe { d.into_borrowed() },
                subresource,
            )),
            _ => None,
        };
        Ok(Staging {
            kind,
            api,
            device_lock,
            subresource,
            extent,
            layout,
            direct,
        })
    }

    /// A new counted reference to the shared resource (the staging copy itself borrows the
    /// memory object's).
    pub fn resource_reference(&self) -> Option<ComPtr> {
        match &self.api {
            Api::D3D11 { resource, .. } => resource.query(),
            Api::D3D10 { resource, .. } => resource.query(),
        }
    }

    /// The lock of the resource's device (see [`DeviceLock`]).
    pub fn device_lock(&self) -> DeviceLock {
        self.device_lock.clone()
    }

    /// The packed shadow's shape.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The staging resource itself (for `Place::Device`: the texture OpenCL imports).
    pub fn staging_resource(&self) -> ComPtr {
        match &self.api {
            Api::D3D11 { staging, .. } => staging.clone().upcast(),
            Api::D3D10 { staging, .. } => match staging {
                Staging10::Buffer(b) => b.clone().upcast(),
                Staging10::Texture2D(t) => t.clone().upcast(),
                Staging10::Texture3D(t) => t.clone().upcast(),
            },
        }
    }

    /// Subresource → staging resource, on the D3D device's queue (no CPU wait).
    pub fn copy_in(&self) {
        let _device = self.device_lock.hold();
        self.copy(false);
    }

    /// Staging resource → subresource, on the D3D device's queue (no CPU wait).
    pub fn copy_out(&self) {
        let _device = self.device_lock.hold();
        self.copy(true);
    }

    /// Lets dxcl's runtime copy straight into and out of the shadow at `at` (`len` bytes) from
    /// now on (a no-op elsewhere, and once tried). The caller holds the device lock (the
    /// acquire does).
    ///
    /// # Safety
    /// The shadow's memory stays valid until [`Staging::detach_host`] or drop.
    pub unsafe fn attach_host(&mut self, at: *mut u8, len: usize) {
        if let Some(d) = &mut self.direct {
            // SAFETY: the caller's contract.
            unsafe { d.attach(at, len) };
        }
    }

    /// Makes the runtime forget the shadow, before its memory goes.
    pub fn detach_host(&mut self) {
        if let Some(d) = &mut self.direct {
            d.detach();
        }
    }

    /// D3D → shadow: copies the subresource into `shadow` in `pieces` ([`Layout::pieces`]);
    /// `done` runs for each piece once its bytes are in, so the caller can send it on while
    /// later pieces are copied. dxcl's runtime writes an attached shadow itself; otherwise the
    /// subresource goes through the staging resource, mapped and packed into the shadow.
    pub fn download(
        &mut self,
        shadow: &mut [u8],
        pieces: &[Piece],
        mut done: impl FnMut(&Piece),
    ) -> Result<(), D3dError> {
        let _rows = crate::trace::span(crate::trace::Step::StagingRows);
        assert_eq!(shadow.len(), self.layout.len(), "a shadow of another size");
        let lock = self.device_lock.clone();
        let _device = lock.hold();
        if let Some(d) = &mut self.direct {
            match d.download(&self.layout, shadow, pieces, &mut done) {
                Ok(()) => return Ok(()),
                // Not attached, or the runtime cannot reach it: nothing was copied.
                Err(dxcl_abi::E_NOTIMPL) => {}
                Err(hr) => return Err(D3dError(hr)),
            }
        }
        self.copy(false);
        let m = self.map(false)?;
        // SAFETY: `m` maps the staging resource, of the layout's extent, until the unmap below;
        // `shadow` is ours, of the layout's size (checked above).
        unsafe { self.layout.copy(m, shadow.as_mut_ptr(), true, pieces, done) };
        self.unmap();
        Ok(())
    }

    /// Shadow → D3D: fills the staging resource from `shadow`, then copies it into the
    /// subresource.
    pub fn upload(&mut self, shadow: &[u8]) -> Result<(), D3dError> {
        let _rows = crate::trace::span(crate::trace::Step::StagingRows);
        assert_eq!(shadow.len(), self.layout.len(), "a shadow of another size");
        let lock = self.device_lock.clone();
        let _device = lock.hold();
        if let Some(d) = &self.direct {
            return d.upload(shadow).map_err(D3dError);
        }
        let m = self.map(true)?;
        let pieces = self.layout.pieces(UPLOAD_PIECE);
        // SAFETY: as in download; the copy only reads `shadow` (the pointer is cast to mut for
        // the shared copy routine, which writes the mapping in this direction).
        unsafe {
            self.layout
                .copy(m, shadow.as_ptr().cast_mut(), false, &pieces, |_| {})
        };
        self.unmap();
        self.copy(true);
        Ok(())
    }

    /// CopySubresourceRegion between the resource's subresource and the staging resource.
    fn copy(&self, to_resource: bool) {
        let _copy = crate::trace::span(crate::trace::Step::StagingCopy);
        let sub = self.subresource;
        match &self.api {
            Api::D3D11 {
                resource,
                context,
                staging,
            } => {
                let (dst, dst_sub, src, src_sub) = if to_resource {
                    (resource.as_ptr(), sub, staging.as_ptr(), 0)
                } else {
                    (staging.as_ptr(), 0, resource.as_ptr(), sub)
                };
                let c = context.as_ptr();
                // SAFETY: the live immediate context; both resources are live, of its device,
                // and the regions match in size (the staging resource has the subresource's
                // extent and format).
                unsafe {
                    ((*(*c).lpVtbl).CopySubresourceRegion)(
                        c,
                        dst,
                        dst_sub,
                        0,
                        0,
                        0,
                        src,
                        src_sub,
                        std::ptr::null(),
                    )
                };
            }
            Api::D3D10 {
                resource,
                device,
                staging,
            } => {
                let (dst, dst_sub, src, src_sub) = if to_resource {
                    (resource.as_ptr(), sub, staging.resource(), 0)
                } else {
                    (staging.resource(), 0, resource.as_ptr(), sub)
                };
                let d = device.as_ptr();
                // SAFETY: the live device; as for D3D11.
                unsafe {
                    ((*(*d).lpVtbl).CopySubresourceRegion)(
                        d,
                        dst,
                        dst_sub,
                        0,
                        0,
                        0,
                        src,
                        src_sub,
                        std::ptr::null(),
                    )
                };
            }
        }
    }

    fn map(&self, write: bool) -> Result<Mapping, D3dError> {
        let _map = crate::trace::span(crate::trace::Step::StagingMap);
        let (data, mut row_pitch, mut depth_pitch) = match &self.api {
            Api::D3D11 {
                context, staging, ..
            } => {
                let map_type = if write {
                    D3D11_MAP_WRITE
                } else {
                    D3D11_MAP_READ
                };
                let mut m = D3D11_MAPPED_SUBRESOURCE::default();
                let c = context.as_ptr();
                // SAFETY: the live immediate context maps subresource 0 of our staging resource,
                // which has CPU read and write access; `m` is a valid out struct.
                ok(unsafe { ((*(*c).lpVtbl).Map)(c, staging.as_ptr(), 0, map_type, 0, &mut m) })?;
                (m.pData, m.RowPitch, m.DepthPitch)
            }
            Api::D3D10 { staging, .. } => {
                let map_type: D3D10_MAP = if write {
                    D3D10_MAP_WRITE
                } else {
                    D3D10_MAP_READ
                };
                match staging {
                    Staging10::Buffer(b) => {
                        let p = b.as_ptr();
                        let mut data = std::ptr::null_mut();
                        // SAFETY: our live staging buffer with CPU access; valid out pointer.
                        ok(unsafe { ((*(*p).lpVtbl).Map)(p, map_type, 0, &mut data) })?;
                        (data, 0, 0)
                    }
                    Staging10::Texture2D(t) => {
                        let p = t.as_ptr();
                        let mut m = D3D10_MAPPED_TEXTURE2D::default();
                        // SAFETY: our live staging texture, subresource 0; valid out struct.
                        ok(unsafe { ((*(*p).lpVtbl).Map)(p, 0, map_type, 0, &mut m) })?;
                        (m.pData, m.RowPitch, 0)
                    }
                    Staging10::Texture3D(t) => {
                        let p = t.as_ptr();
                        let mut m = D3D10_MAPPED_TEXTURE3D::default();
                        // SAFETY: our live staging texture, subresource 0; valid out struct.
                        ok(unsafe { ((*(*p).lpVtbl).Map)(p, 0, map_type, 0, &mut m) })?;
                        (m.pData, m.RowPitch, m.DepthPitch)
                    }
                }
            }
        };
        if data.is_null() {
            self.unmap();
            return Err(D3dError(E_FAIL));
        }
        if self.kind == ResourceKind::Buffer {
            row_pitch = self.layout.row_bytes as u32;
        }
        if self.kind != ResourceKind::Texture3D {
            depth_pitch = row_pitch * self.extent.1;
        }
        Ok(Mapping {
            data: data.cast(),
            row_pitch: row_pitch as usize,
            depth_pitch: depth_pitch as usize,
        })
    }

    fn unmap(&self) {
        let _unmap = crate::trace::span(crate::trace::Step::StagingUnmap);
        match &self.api {
            Api::D3D11 {
                context, staging, ..
            } => {
                let c = context.as_ptr();
                // SAFETY: the live immediate context unmaps the subresource we mapped.
                unsafe { ((*(*c).lpVtbl).Unmap)(c, staging.as_ptr(), 0) };
            }
            Api::D3D10 { staging, .. } => match staging {
                Staging10::Buffer(b) => {
                    let p = b.as_ptr();
                    // SAFETY: our live staging buffer, which we mapped.
                    unsafe { ((*(*p).lpVtbl).Unmap)(p) };
                }
                Staging10::Texture2D(t) => {
                    let p = t.as_ptr();
                    // SAFETY: our live staging texture; subresource 0, which we mapped.
                    unsafe { ((*(*p).lpVtbl).Unmap)(p, 0) };
                }
                Staging10::Texture3D(t) => {
                    let p = t.as_ptr();
                    // SAFETY: as above.
                    unsafe { ((*(*p).lpVtbl).Unmap)(p, 0) };
                }
            },
        }
    }
}

fn immediate_context(
    device: &ComPtr<ID3D11Device>,
) -> Result<ComPtr<ID3D11DeviceContext>, D3dError> {
    let d = device.as_ptr();
    let mut ctx = std::ptr::null_mut();
    // SAFETY: a live ID3D11Device; GetImmediateContext AddRefs the context it returns.
    unsafe { ((*(*d).lpVtbl).GetImmediateContext)(d, &mut ctx) };
    // SAFETY: we own the returned reference.
    unsafe { ComPtr::from_owned(ctx) }.ok_or(D3dError(E_FAIL))
}

/// Takes the reference a successful Create* returned through `out`.
///
/// # Safety
/// When `hr` succeeded, `out` is null or a live object of type `T` whose reference we own.
unsafe fn created<T: dxcl_abi::Interface>(hr: HRESULT, out: *mut T) -> Result<ComPtr<T>, D3dError> {
    ok(hr)?;
    // SAFETY: caller's contract.
    unsafe { ComPtr::from_owned(out) }.ok_or(D3dError(E_FAIL))
}

const SAMPLE_1: DXGI_SAMPLE_DESC = DXGI_SAMPLE_DESC {
    Count: 1,
    Quality: 0,
};

/// A D3D11 STAGING resource with CPU read/write of one mip level's extent.
fn create_staging11(
    device: &ComPtr<ID3D11Device>,
    kind: ResourceKind,
    format: i32,
    (w, h, depth): (u32, u32, u32),
    place: Place,
) -> Result<ComPtr<ID3D11Resource>, D3dError> {
    let d = device.as_ptr();
    if place == Place::Shared {
        // Only 2D textures have a shared counterpart (the shadow-copy strategy asks for no other).
        if kind != ResourceKind::Texture2D {
            return Err(D3dError(dxcl_abi::E_INVALIDARG));
        }
        let desc = D3D11_TEXTURE2D_DESC {
            Width: w,
            Height: h,
            MipLevels: 1,
            ArraySize: 1,
            Format: format,
            SampleDesc: SAMPLE_1,
            Usage: D3D11_USAGE_DEFAULT,
            BindFlags: (dxcl_abi::D3D11_BIND_SHADER_RESOURCE
                | dxcl_abi::D3D11_BIND_UNORDERED_ACCESS) as u32,
            ..Default::default()
        };
        // SAFETY: a live ID3D11Device; a valid description.
        let t = unsafe { crate::d3d::shared_texture::create(d, &desc) }.map_err(D3dError)?;
        // SAFETY: the helper gave us one reference.
        return unsafe { ComPtr::from_owned(t) }
            .map(|t| t.upcast())
            .ok_or(D3dError(E_FAIL));
    }
    let (usage, cpu) = match place {
        Place::Host => (
            D3D11_USAGE_STAGING,
            (D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE) as u32,
        ),
        Place::Device | Place::Shared => (D3D11_USAGE_DEFAULT, 0),
    };
    let none = std::ptr::null();
    // SAFETY (each arm): a live ID3D11Device; a valid description, no initial data, our own out
    // pointer; on success we own the created resource.
    Ok(match kind {
        ResourceKind::Buffer => {
            let desc = D3D11_BUFFER_DESC {
                ByteWidth: w,
                Usage: usage,
                CPUAccessFlags: cpu,
                ..Default::default()
            };
            let mut out = std::ptr::null_mut();
            // SAFETY: see above.
            unsafe { created(((*(*d).lpVtbl).CreateBuffer)(d, &desc, none, &mut out), out) }?
                .upcast()
        }
        ResourceKind::Texture2D => {
            let desc = D3D11_TEXTURE2D_DESC {
                Width: w,
                Height: h,
                MipLevels: 1,
                ArraySize: 1,
                Format: format,
                SampleDesc: SAMPLE_1,
                Usage: usage,
                CPUAccessFlags: cpu,
                ..Default::default()
            };
            let mut out = std::ptr::null_mut();
            // SAFETY: see above.
            unsafe {
                created(
                    ((*(*d).lpVtbl).CreateTexture2D)(d, &desc, none, &mut out),
                    out,
                )
            }?
            .upcast()
        }
        ResourceKind::Texture3D => {
            let desc = D3D11_TEXTURE3D_DESC {
                Width: w,
                Height: h,
                Depth: depth,
                MipLevels: 1,
                Format: format,
                Usage: usage,
                CPUAccessFlags: cpu,
                ..Default::default()
            };
            let mut out = std::ptr::null_mut();
            // SAFETY: see above.
            unsafe {
                created(
                    ((*(*d).lpVtbl).CreateTexture3D)(d, &desc, none, &mut out),
                    out,
                )
            }?
            .upcast()
        }
    })
}

/// A D3D10 STAGING resource with CPU read/write of one mip level's extent.
fn create_staging10(
    device: &ComPtr<ID3D10Device>,
    kind: ResourceKind,
    format: i32,
    (w, h, depth): (u32, u32, u32),
    place: Place,
) -> Result<Staging10, D3dError> {
    let d = device.as_ptr();
    let (usage, cpu) = match place {
        Place::Host => (
            D3D10_USAGE_STAGING,
            (D3D10_CPU_ACCESS_READ | D3D10_CPU_ACCESS_WRITE) as u32,
        ),
        Place::Device => (D3D10_USAGE_DEFAULT, 0),
        // DXVK's D3D10 devices have no shared counterpart here: the shadow-copy strategy is
        // D3D11's only.
        Place::Shared => return Err(D3dError(dxcl_abi::E_NOTIMPL)),
    };
    let none = std::ptr::null();
    // SAFETY (each arm): a live ID3D10Device; a valid description, no initial data, our own out
    // pointer; on success we own the created resource.
    Ok(match kind {
        ResourceKind::Buffer => {
            let desc = D3D10_BUFFER_DESC {
                ByteWidth: w,
                Usage: usage,
                CPUAccessFlags: cpu,
                ..Default::default()
            };
            let mut out = std::ptr::null_mut();
            // SAFETY: see above.
            Staging10::Buffer(unsafe {
                created(((*(*d).lpVtbl).CreateBuffer)(d, &desc, none, &mut out), out)
            }?)
        }
        ResourceKind::Texture2D => {
            let desc = D3D10_TEXTURE2D_DESC {
                Width: w,
                Height: h,
                MipLevels: 1,
                ArraySize: 1,
                Format: format,
                SampleDesc: SAMPLE_1,
                Usage: usage,
                CPUAccessFlags: cpu,
                ..Default::default()
            };
            let mut out = std::ptr::null_mut();
            // SAFETY: see above.
            Staging10::Texture2D(unsafe {
                created(
                    ((*(*d).lpVtbl).CreateTexture2D)(d, &desc, none, &mut out),
                    out,
                )
            }?)
        }
        ResourceKind::Texture3D => {
            let desc = D3D10_TEXTURE3D_DESC {
                Width: w,
                Height: h,
                Depth: depth,
                MipLevels: 1,
                Format: format,
                Usage: usage,
                CPUAccessFlags: cpu,
                ..Default::default()
            };
            let mut out = std::ptr::null_mut();
            // SAFETY: see above.
            Staging10::Texture3D(unsafe {
                created(
                    ((*(*d).lpVtbl).CreateTexture3D)(d, &desc, none, &mut out),
                    out,
                )
            }?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether another thread could take the lock now.
    fn free_for_others(l: &DeviceLock) -> bool {
        let l = l.clone();
        std::thread::spawn(move || {
            l.0.owner
                .lock()
                .unwrap()
                .is_none_or(|(t, _)| t == std::thread::current().id())
        })
        .join()
        .unwrap()
    }

    #[test]
    fn one_lock_per_device() {
        let a = DeviceLock::of(0x1000, None);
        let b = DeviceLock::of(0x1000, None);
        let other = DeviceLock::of(0x2000, None);
        assert!(Arc::ptr_eq(&a.0, &b.0), "one device, one lock");
        assert!(!Arc::ptr_eq(&a.0, &other.0), "two devices, two locks");
        let held = a.hold();
        assert!(
            !free_for_others(&b),
            "held for every staging resource of the device"
        );
        assert!(free_for_others(&other), "another device's work goes on");
        drop(held);
        // Once no staging resource of a device is left, its entry goes with the next new device.
        drop((a, b));
        let _third = DeviceLock::of(0x3000, None);
        assert!(free_for_others(&DeviceLock::of(0x1000, None)));
    }

    #[test]
    fn re_entrant_on_its_thread_only() {
        let lock = DeviceLock::of(0x4000, None);
        let outer = lock.hold();
        // Pending work inside a Direct3D call the layer makes under the lock takes it again.
        let inner = lock.hold();
        drop(inner);
        assert!(!free_for_others(&lock), "still held by the outer hold");
        let (l2, entered) = (
            lock.clone(),
            Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
        let e2 = entered.clone();
        let t = std::thread::spawn(move || {
            let _g = l2.hold();
            e2.store(true, std::sync::atomic::Ordering::SeqCst);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!entered.load(std::sync::atomic::Ordering::SeqCst));
        drop(outer);
        t.join().unwrap();
        assert!(entered.load(std::sync::atomic::Ordering::SeqCst));
        assert!(free_for_others(&lock));
    }
}

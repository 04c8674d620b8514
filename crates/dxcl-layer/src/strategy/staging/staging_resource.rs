//! The staging-copy strategy's D3D side: one CPU-accessible staging resource per shared
//! subresource, copied to and from a tightly packed host shadow ([`super::packed`]) that the
//! strategy owns and OpenCL reads and writes.
//!
//! Standard COM calls only: D3D11 through the device's immediate context (CopySubresourceRegion,
//! Map, Unmap); D3D10 through the device (CopySubresourceRegion) and the resource's own Map/Unmap.
//!
//! Threads: all of the layer's Direct3D work on one device runs under one lock per device
//! ([`DeviceLock`]).

use std::ffi::c_void;
use std::ptr;

use dxcl_abi::{
    ID3D10Buffer, ID3D10Device, ID3D10Resource, ID3D10Texture2D, ID3D10Texture3D, ID3D11Device,
    ID3D11DeviceContext, ID3D11Resource, IDxclInteropDevice, Interface, D3D10_BUFFER_DESC,
    D3D10_CPU_ACCESS_READ, D3D10_CPU_ACCESS_WRITE, D3D10_MAP, D3D10_MAPPED_TEXTURE2D,
    D3D10_MAPPED_TEXTURE3D, D3D10_MAP_READ, D3D10_MAP_WRITE, D3D10_TEXTURE2D_DESC,
    D3D10_TEXTURE3D_DESC, D3D10_USAGE_DEFAULT, D3D10_USAGE_STAGING, D3D11_BUFFER_DESC,
    D3D11_CPU_ACCESS_READ, D3D11_CPU_ACCESS_WRITE, D3D11_MAPPED_SUBRESOURCE, D3D11_MAP_READ,
    D3D11_MAP_WRITE, D3D11_TEXTURE2D_DESC, D3D11_TEXTURE3D_DESC, D3D11_USAGE_DEFAULT,
    D3D11_USAGE_STAGING, DXGI_SAMPLE_DESC, E_FAIL, HRESULT, SUCCEEDED,
};

use super::host_copy::HostCopy;
use super::packed::{Layout, Mapping, Piece};
use crate::core::tokens::D3dVersion;
use crate::core::tokens::ResourceKind;
use crate::d3d::com::ComPtr;
use crate::d3d::device_lock::DeviceLock;
use crate::d3d::interop::Interop;
use crate::d3d::multithread::Multithread;
use crate::d3d::resource::{device10, device11, AnyResource, Resource};

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

/// The calls whose vtables differ between Direct3D 11 and 10: the staging copy's one seam. Each
/// operation of [`Staging`] is written once, over it ([`Objects`], [`open`]).
trait Version: 'static {
    const VERSION: D3dVersion;
    /// The resource interface (of the shared resource and of the staging one).
    type Resource: Interface;
    type Device: Interface;
    /// What copies: the D3D11 immediate context, the D3D10 device.
    type Copier: Interface;
    /// The staging resource as it maps (D3D10 maps through the resource's own interface).
    type Staging: Send + Sync;

    fn device(resource: &ComPtr<Self::Resource>) -> Option<ComPtr<Self::Device>>;
    fn copier(device: &ComPtr<Self::Device>) -> Result<ComPtr<Self::Copier>, D3dError>;
    /// A staging resource of one mip level's extent, where `place` says.
    fn create_staging(
        device: &ComPtr<Self::Device>,
        kind: ResourceKind,
        format: i32,
        extent: (u32, u32, u32),
        place: Place,
    ) -> Result<Self::Staging, D3dError>;
    /// The staging resource as a resource.
    fn resource(staging: &Self::Staging) -> *mut Self::Resource;
    /// A new counted reference to the staging resource.
    fn reference(staging: &Self::Staging) -> ComPtr;
    /// `CopySubresourceRegion` of a whole subresource to the origin of another.
    ///
    /// # Safety
    /// `copier` is live; both resources are live, of its device, and their subresources have one
    /// extent and format.
    unsafe fn copy(
        copier: *mut Self::Copier,
        dst: (*mut Self::Resource, u32),
        src: (*mut Self::Resource, u32),
    );
    /// Maps subresource 0 of the staging resource: `(pData, RowPitch, DepthPitch)`, 0 for a pitch
    /// the API does not give.
    ///
    /// # Safety
    /// `copier` and `staging` are live; the staging resource has CPU read and write access and is
    /// not mapped.
    unsafe fn map(
        copier: *mut Self::Copier,
        staging: &Self::Staging,
        write: bool,
    ) -> Result<(*mut c_void, u32, u32), D3dError>;
    /// # Safety
    /// As [`Version::map`], with the staging resource mapped.
    unsafe fn unmap(copier: *mut Self::Copier, staging: &Self::Staging);
}

/// The objects of one shared subresource.
struct Objects<V: Version> {
    /// The shared resource (borrowed: the memory object's entry holds the reference).
    resource: ComPtr<V::Resource>,
    copier: ComPtr<V::Copier>,
    staging: V::Staging,
}

/// What [`Staging`] asks of its objects, whatever the version.
trait Api: Send + Sync {
    fn resource_reference(&self) -> Option<ComPtr>;
    fn staging_resource(&self) -> ComPtr;
    /// Between subresource `sub` of the shared resource and the staging resource.
    fn copy(&self, sub: u32, to_resource: bool);
    fn map(&self, write: bool) -> Result<(*mut c_void, u32, u32), D3dError>;
    fn unmap(&self);
}

impl<V: Version> Api for Objects<V> {
    fn resource_reference(&self) -> Option<ComPtr> {
        self.resource.query()
    }

    fn staging_resource(&self) -> ComPtr {
        V::reference(&self.staging)
    }

    fn copy(&self, sub: u32, to_resource: bool) {
        let (resource, staging) = (
            (self.resource.as_ptr(), sub),
            (V::resource(&self.staging), 0),
        );
        let (dst, src) = if to_resource {
            (resource, staging)
        } else {
            (staging, resource)
        };
        // SAFETY: the live copier of the resource's device; both resources are live, and the
        // staging resource has the subresource's extent and format.
        unsafe { V::copy(self.copier.as_ptr(), dst, src) };
    }

    fn map(&self, write: bool) -> Result<(*mut c_void, u32, u32), D3dError> {
        // SAFETY: the live copier and our live staging resource, made with CPU read and write
        // access; the layer maps it once at a time (under the device lock) and unmaps it after.
        unsafe { V::map(self.copier.as_ptr(), &self.staging, write) }
    }

    fn unmap(&self) {
        // SAFETY: as in `map`, after a successful map.
        unsafe { V::unmap(self.copier.as_ptr(), &self.staging) };
    }
}

/// What [`open`] gives: the objects, the device's lock and the device's interop interface.
type Opened = (Box<dyn Api>, DeviceLock, Option<ComPtr<IDxclInteropDevice>>);

/// The objects of one subresource of `resource`, its device's lock (`foreign`: a device without
/// dxcl's interop interface, whose own multithread lock the device lock takes first) and its
/// device.
fn open<V: Version>(
    version: D3dVersion,
    resource: ComPtr<V::Resource>,
    (kind, format): (ResourceKind, i32),
    extent: (u32, u32, u32),
    place: Place,
    foreign: bool,
) -> Result<Opened, D3dError> {
    debug_assert_eq!(version, V::VERSION);
    let device = V::device(&resource).ok_or(D3dError(E_FAIL))?;
    let copier = V::copier(&device)?;
    let multithread = foreign.then(|| Multithread::of(&copier)).flatten();
    let device_lock = DeviceLock::of(device.identity(), multithread);
    let staging = V::create_staging(&device, kind, format, extent, place)?;
    let objects = Objects::<V> {
        resource,
        copier,
        staging,
    };
    Ok((Box::new(objects), device_lock, device.query()))
}

/// Direct3D 11: copies, maps and unmaps through the immediate context.
struct D3d11;

impl Version for D3d11 {
    const VERSION: D3dVersion = D3dVersion::D3D11;
    type Resource = ID3D11Resource;
    type Device = ID3D11Device;
    type Copier = ID3D11DeviceContext;
    type Staging = ComPtr<ID3D11Resource>;

    fn device(resource: &ComPtr<ID3D11Resource>) -> Option<ComPtr<ID3D11Device>> {
        device11(resource)
    }

    fn copier(device: &ComPtr<ID3D11Device>) -> Result<ComPtr<ID3D11DeviceContext>, D3dError> {
        immediate_context(device)
    }

    fn create_staging(
        device: &ComPtr<ID3D11Device>,
        kind: ResourceKind,
        format: i32,
        extent: (u32, u32, u32),
        place: Place,
    ) -> Result<ComPtr<ID3D11Resource>, D3dError> {
        create_staging11(device, kind, format, extent, place)
    }

    fn resource(staging: &ComPtr<ID3D11Resource>) -> *mut ID3D11Resource {
        staging.as_ptr()
    }

    fn reference(staging: &ComPtr<ID3D11Resource>) -> ComPtr {
        staging.clone().upcast()
    }

    unsafe fn copy(
        c: *mut ID3D11DeviceContext,
        (dst, dst_sub): (*mut ID3D11Resource, u32),
        (src, src_sub): (*mut ID3D11Resource, u32),
    ) {
        // SAFETY: the caller's contract.
        let copy = unsafe { (*(*c).lpVtbl).CopySubresourceRegion };
        // SAFETY: the caller's contract; no source box (the whole subresource).
        unsafe { copy(c, dst, dst_sub, 0, 0, 0, src, src_sub, ptr::null()) };
    }

    unsafe fn map(
        c: *mut ID3D11DeviceContext,
        staging: &ComPtr<ID3D11Resource>,
        write: bool,
    ) -> Result<(*mut c_void, u32, u32), D3dError> {
        let map_type = if write {
            D3D11_MAP_WRITE
        } else {
            D3D11_MAP_READ
        };
        let mut m = D3D11_MAPPED_SUBRESOURCE::default();
        // SAFETY: the caller's contract; `m` is a valid out struct.
        ok(unsafe { ((*(*c).lpVtbl).Map)(c, staging.as_ptr(), 0, map_type, 0, &mut m) })?;
        Ok((m.pData, m.RowPitch, m.DepthPitch))
    }

    unsafe fn unmap(c: *mut ID3D11DeviceContext, staging: &ComPtr<ID3D11Resource>) {
        // SAFETY: the caller's contract.
        unsafe { ((*(*c).lpVtbl).Unmap)(c, staging.as_ptr(), 0) };
    }
}

/// Direct3D 10: copies through the device; maps and unmaps through the staging resource's own
/// interface, whose `Map` differs per kind.
struct D3d10;

/// A D3D10 staging resource, by kind.
enum Staging10 {
    Buffer(ComPtr<ID3D10Buffer>),
    Texture2D(ComPtr<ID3D10Texture2D>),
    Texture3D(ComPtr<ID3D10Texture3D>),
}

impl Version for D3d10 {
    const VERSION: D3dVersion = D3dVersion::D3D10;
    type Resource = ID3D10Resource;
    type Device = ID3D10Device;
    type Copier = ID3D10Device;
    type Staging = Staging10;

    fn device(resource: &ComPtr<ID3D10Resource>) -> Option<ComPtr<ID3D10Device>> {
        device10(resource)
    }

    fn copier(device: &ComPtr<ID3D10Device>) -> Result<ComPtr<ID3D10Device>, D3dError> {
        Ok(device.clone())
    }

    fn create_staging(
        device: &ComPtr<ID3D10Device>,
        kind: ResourceKind,
        format: i32,
        extent: (u32, u32, u32),
        place: Place,
    ) -> Result<Staging10, D3dError> {
        create_staging10(device, kind, format, extent, place)
    }

    fn resource(staging: &Staging10) -> *mut ID3D10Resource {
        match staging {
            Staging10::Buffer(b) => b.as_base(),
            Staging10::Texture2D(t) => t.as_base(),
            Staging10::Texture3D(t) => t.as_base(),
        }
    }

    fn reference(staging: &Staging10) -> ComPtr {
        match staging {
            Staging10::Buffer(b) => b.clone().upcast(),
            Staging10::Texture2D(t) => t.clone().upcast(),
            Staging10::Texture3D(t) => t.clone().upcast(),
        }
    }

    unsafe fn copy(
        d: *mut ID3D10Device,
        (dst, dst_sub): (*mut ID3D10Resource, u32),
        (src, src_sub): (*mut ID3D10Resource, u32),
    ) {
        // SAFETY: the caller's contract.
        let copy = unsafe { (*(*d).lpVtbl).CopySubresourceRegion };
        // SAFETY: the caller's contract; no source box (the whole subresource).
        unsafe { copy(d, dst, dst_sub, 0, 0, 0, src, src_sub, ptr::null()) };
    }

    unsafe fn map(
        _device: *mut ID3D10Device,
        staging: &Staging10,
        write: bool,
    ) -> Result<(*mut c_void, u32, u32), D3dError> {
        let map_type: D3D10_MAP = if write {
            D3D10_MAP_WRITE
        } else {
            D3D10_MAP_READ
        };
        // SAFETY (each arm): the caller's contract (subresource 0); valid out pointers.
        match staging {
            Staging10::Buffer(b) => {
                let (p, mut data) = (b.as_ptr(), ptr::null_mut());
                // SAFETY: see above.
                ok(unsafe { ((*(*p).lpVtbl).Map)(p, map_type, 0, &mut data) })?;
                Ok((data, 0, 0))
            }
            Staging10::Texture2D(t) => {
                let (p, mut m) = (t.as_ptr(), D3D10_MAPPED_TEXTURE2D::default());
                // SAFETY: see above.
                ok(unsafe { ((*(*p).lpVtbl).Map)(p, 0, map_type, 0, &mut m) })?;
                Ok((m.pData, m.RowPitch, 0))
            }
            Staging10::Texture3D(t) => {
                let (p, mut m) = (t.as_ptr(), D3D10_MAPPED_TEXTURE3D::default());
                // SAFETY: see above.
                ok(unsafe { ((*(*p).lpVtbl).Map)(p, 0, map_type, 0, &mut m) })?;
                Ok((m.pData, m.RowPitch, m.DepthPitch))
            }
        }
    }

    unsafe fn unmap(_device: *mut ID3D10Device, staging: &Staging10) {
        // SAFETY (each arm): the caller's contract; subresource 0, which was mapped.
        match staging {
            // SAFETY: see above.
            Staging10::Buffer(b) => unsafe { ((*(*b.as_ptr()).lpVtbl).Unmap)(b.as_ptr()) },
            // SAFETY: see above.
            Staging10::Texture2D(t) => unsafe { ((*(*t.as_ptr()).lpVtbl).Unmap)(t.as_ptr(), 0) },
            // SAFETY: see above.
            Staging10::Texture3D(t) => unsafe { ((*(*t.as_ptr()).lpVtbl).Unmap)(t.as_ptr(), 0) },
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
    api: Box<dyn Api>,
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
        let of = (kind, r.desc.format);
        let (api, device_lock, direct_device) = match base {
            AnyResource::D3D11(resource) => {
                open::<D3d11>(version, resource, of, extent, place, foreign)?
            }
            AnyResource::D3D10(resource) => {
                open::<D3d10>(version, resource, of, extent, place, foreign)?
            }
        };
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
        self.api.resource_reference()
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
        self.api.staging_resource()
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
        self.api.copy(self.subresource, to_resource);
    }

    fn map(&self, write: bool) -> Result<Mapping, D3dError> {
        let _map = crate::trace::span(crate::trace::Step::StagingMap);
        let (data, mut row_pitch, mut depth_pitch) = self.api.map(write)?;
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
        self.api.unmap();
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

/// The one-mip resource of `kind` that `create_staging10` and `create_staging11` make: D3D10's
/// and D3D11's descriptions and Create methods bear the same names and shapes, so one body
/// serves both, each created reference handed to its version's `wrap`.
macro_rules! create_one {
    ($d:expr, $kind:expr, $format:expr, ($w:expr, $h:expr, $depth:expr), ($usage:expr, $cpu:expr),
     $buffer:ident => $wrap_buffer:expr, $texture2d:ident => $wrap_2d:expr,
     $texture3d:ident => $wrap_3d:expr $(,)?) => {{
        let d = $d;
        let none = std::ptr::null();
        // SAFETY (each arm): a live device of the version; a valid description, no initial
        // data, our own out pointer; on success we own the created resource.
        match $kind {
            ResourceKind::Buffer => {
                let desc = $buffer {
                    ByteWidth: $w,
                    Usage: $usage,
                    CPUAccessFlags: $cpu,
                    ..Default::default()
                };
                let mut out = std::ptr::null_mut();
                // SAFETY: see above.
                ($wrap_buffer)(unsafe {
                    created(((*(*d).lpVtbl).CreateBuffer)(d, &desc, none, &mut out), out)
                }?)
            }
            ResourceKind::Texture2D => {
                let desc = $texture2d {
                    Width: $w,
                    Height: $h,
                    MipLevels: 1,
                    ArraySize: 1,
                    Format: $format,
                    SampleDesc: SAMPLE_1,
                    Usage: $usage,
                    CPUAccessFlags: $cpu,
                    ..Default::default()
                };
                let mut out = std::ptr::null_mut();
                // SAFETY: see above.
                ($wrap_2d)(unsafe {
                    created(
                        ((*(*d).lpVtbl).CreateTexture2D)(d, &desc, none, &mut out),
                        out,
                    )
                }?)
            }
            ResourceKind::Texture3D => {
                let desc = $texture3d {
                    Width: $w,
                    Height: $h,
                    Depth: $depth,
                    MipLevels: 1,
                    Format: $format,
                    Usage: $usage,
                    CPUAccessFlags: $cpu,
                    ..Default::default()
                };
                let mut out = std::ptr::null_mut();
                // SAFETY: see above.
                ($wrap_3d)(unsafe {
                    created(
                        ((*(*d).lpVtbl).CreateTexture3D)(d, &desc, none, &mut out),
                        out,
                    )
                }?)
            }
        }
    }};
}

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
    Ok(create_one!(
        d,
        kind,
        format,
        (w, h, depth),
        (usage, cpu),
        D3D11_BUFFER_DESC => ComPtr::upcast,
        D3D11_TEXTURE2D_DESC => ComPtr::upcast,
        D3D11_TEXTURE3D_DESC => ComPtr::upcast,
    ))
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
    Ok(create_one!(
        d,
        kind,
        format,
        (w, h, depth),
        (usage, cpu),
        D3D10_BUFFER_DESC => Staging10::Buffer,
        D3D10_TEXTURE2D_DESC => Staging10::Texture2D,
        D3D10_TEXTURE3D_DESC => Staging10::Texture3D,
    ))
}

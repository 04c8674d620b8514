//! Buffers and textures: one object type for every dimension, with an `ID3D11Buffer` /
//! `ID3D11Texture1D/2D/3D` face (chosen by dimension), an `IDXGIResource` face, the
//! `IDxclInteropResource` face and a reserved D3D10 face.
//!
//! The resource operations (map, unmap, update, copies) live here as API-neutral methods with
//! Direct3D's rules, so the D3D11 context and the D3D10 faces share them.

use std::mem::offset_of;
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use super::abi::*;
use super::guard::{guard, lock};
use super::object::*;
use super::private_data::*;
use super::shared::{child_get_device, Device, DeviceChild};
use super::validation::{self, OpenClUse};
use super::{backend_error, desc, iid_in};
use crate::backend::{Allocation, BackendKind, MapAccess};
use crate::core::flags::*;
use crate::core::{BlockRegion, Dimension, ResourceDesc, ResourceLayout, TexelBox};

/// One entry of initial data (`D3D11_SUBRESOURCE_DATA` / `D3D10_SUBRESOURCE_DATA`).
#[derive(Clone, Copy, Debug)]
pub struct InitData {
    pub data: *const u8,
    pub row_pitch: u32,
    pub slice_pitch: u32,
}

/// Work the interop layer asked the runtime to wait for before the next access.
struct PendingWork {
    wait: unsafe extern "system" fn(*mut c_void),
    /// `AddPendingWorkOrdered`: may order a GPU-side access without a CPU wait.
    order: PFN_DXCL_PENDING_ORDER,
    release: PFN_DXCL_PENDING_RELEASE,
    context: *mut c_void,
}

/// Who performs an access to a resource's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Access {
    /// The CPU (map, destruction, the host backend's copies).
    Cpu,
    /// The device's queue, in submission order (the Vulkan backend's copies and updates).
    Gpu,
}

/// `D3D11_MAP` / `D3D10_MAP` values (identical in both APIs).
pub const MAP_READ: u32 = 1;
pub const MAP_WRITE: u32 = 2;
pub const MAP_READ_WRITE: u32 = 3;
pub const MAP_WRITE_DISCARD: u32 = 4;
pub const MAP_WRITE_NO_OVERWRITE: u32 = 5;
/// `D3D11_MAP_FLAG_DO_NOT_WAIT` / `D3D10_MAP_FLAG_DO_NOT_WAIT`.
pub const MAP_FLAG_DO_NOT_WAIT: u32 = 0x100000;

/// A mapped subresource: `pData`, `RowPitch`, `DepthPitch`.
#[derive(Clone, Copy, Debug)]
pub struct Mapped {
    pub data: *mut u8,
    pub row_pitch: u32,
    pub depth_pitch: u32,
}

/// A buffer or texture.
#[repr(C)]
pub struct Resource {
    d3d11: *const c_void,
    dxgi: *const IDXGIResourceVtbl,
    interop: *const IDxclInteropResourceVtbl,
    /// The D3D10 face (`ID3D10Buffer` / `ID3D10Texture1D/2D/3D`), set by `com::d3d10`; null means
    /// the object does not answer D3D10 IIDs.
    pub d3d10: *const c_void,
    refs: RefCounts,
    private: PrivateData,
    device: PrivateRef<Device>,
    /// The validated description (MipLevels resolved).
    pub desc: ResourceDesc,
    allocation: Allocation,
    mapped: Mutex<Vec<bool>>,
    pending: Mutex<Vec<PendingWork>>,
    /// `SetEvictionPriority` value (shared by the D3D11, D3D10 and DXGI faces).
    pub(crate) eviction_priority: AtomicU32,
    /// What OpenCL does with the resource, when validating (`com::validation`).
    pub(crate) opencl: OpenClUse,
}

/// The Direct3D operations validation names (`com::validation`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Map,
    UpdateSubresource,
    CopyResource,
    CopySubresourceRegion,
}

// SAFETY: vtable pointers refer to immutable statics; pending contexts are opaque values the layer
// gave us to hand back (its contract makes them callable from any thread); the rest is Send + Sync.
unsafe impl Send for Resource {}
// SAFETY: as above.
unsafe impl Sync for Resource {}

pub const D3D11_FACE: usize = offset_of!(Resource, d3d11);
pub const DXGI_FACE: usize = offset_of!(Resource, dxgi);
pub const INTEROP_FACE: usize = offset_of!(Resource, interop);
pub const D3D10_FACE: usize = offset_of!(Resource, d3d10);

// SAFETY: every offset in `faces` is a vtable pointer field; `face_for` returns only those.
unsafe impl ComObject for Resource {
    const KIND: ObjectKind = ObjectKind::Resource;
    fn refs(&self) -> &RefCounts {
        &self.refs
    }
    fn private_data(&self) -> &PrivateData {
        &self.private
    }
    fn faces() -> &'static [usize] {
        &[D3D11_FACE, DXGI_FACE, INTEROP_FACE, D3D10_FACE]
    }
    fn face_for(&self, riid: &GUID) -> Option<usize> {
        let own = match self.desc.dimension {
            Dimension::Buffer => IID_ID3D11Buffer,
            Dimension::Texture1D => IID_ID3D11Texture1D,
            Dimension::Texture2D => IID_ID3D11Texture2D,
            Dimension::Texture3D => IID_ID3D11Texture3D,
        };
        let own10 = match self.desc.dimension {
            Dimension::Buffer => IID_ID3D10Buffer,
            Dimension::Texture1D => IID_ID3D10Texture1D,
            Dimension::Texture2D => IID_ID3D10Texture2D,
            Dimension::Texture3D => IID_ID3D10Texture3D,
        };
        // A resource of a D3D10 device (D3D10 face set) answers IUnknown with its D3D10 face and
        // no D3D11 interface; a D3D11 resource answers no D3D10 interface.
        let d3d10 = !self.d3d10.is_null();
        if d3d10 && iid_in(riid, &[IID_IUnknown]) {
            Some(D3D10_FACE)
        } else if !d3d10
            && iid_in(
                riid,
                &[IID_IUnknown, IID_ID3D11DeviceChild, IID_ID3D11Resource, own],
            )
        {
            Some(D3D11_FACE)
        } else if iid_in(
            riid,
            &[IID_IDXGIObject, IID_IDXGIDeviceSubObject, IID_IDXGIResource],
        ) {
            Some(DXGI_FACE)
        } else if iid_in(riid, &[IID_IDxclInteropResource]) {
            Some(INTEROP_FACE)
        } else if d3d10 && iid_in(riid, &[IID_ID3D10DeviceChild, IID_ID3D10Resource, own10]) {
            Some(D3D10_FACE)
        } else {
            None
        }
    }
    fn on_public_acquire(&self) {
        // DXVK's rule: a device child holds a public reference on its device while it has any.
        self.device.validation.child(true);
        add_ref(&*self.device);
    }
    fn on_public_release(&self) {
        self.device.validation.child(false);
        // SAFETY: the reference taken in `on_public_acquire` (or at creation).
        unsafe { release(self.device.as_ptr()) };
    }
    fn on_public_count(&self, remaining: u32) {
        if !validation::on() {
            return;
        }
        // Each subresource with a live OpenCL memory object holds one of the layer's references:
        // when only those are left, the application let go of its last one.
        let held = self.opencl.held();
        if held > 0
            && remaining <= held
            && self
                .opencl
                .reported
                .first(validation::Kind::ReleasedWhileShared)
        {
            let call = self.opencl.made_by().unwrap_or_default();
            validation::report(&format!(
                "{}::Release on {} {} drops the application's last reference while {held} \
                 OpenCL memory object(s) made from it live ({call})",
                self.interface_name(),
                self.interface_name(),
                self.report_name(),
            ));
        }
    }
    fn on_destroy(&mut self) {
        // Pending interop work is honoured before destruction too.
        self.run_pending();
        let backend = self.device.backend.clone();
        // SAFETY: the allocation came from this device's backend and nothing uses it any more.
        unsafe { backend.free(&mut self.allocation) };
    }
}

impl DeviceChild for Resource {
    fn device(&self) -> &Device {
        &self.device
    }
}

impl Resource {
    /// Checks initial data against a validated description: every subresource has data and pitches
    /// that hold a row (and a slice) of the subresource.
    pub fn check_init_data(
        desc: &ResourceDesc,
        layout: &ResourceLayout,
        init: &[InitData],
    ) -> Result<(), HRESULT> {
        let (_, _, bytes) = layout.block;
        for (i, s) in layout.subresources.iter().enumerate() {
            let d = &init[i];
            if d.data.is_null() {
                // D3D11_SUBRESOURCE_DATA: pSysMem "cannot be NULL".
                return Err(E_INVALIDARG);
            }
            if desc.dimension == Dimension::Buffer {
                continue;
            }
            let r = layout.full_region(i as u32).expect("index in layout");
            let row = r.w as u64 * bytes as u64;
            if r.h > 1 && (d.row_pitch as u64) < row {
                // SysMemPitch: "the distance from the beginning of one line ... to the next"; a
                // pitch shorter than a row cannot describe the data.
                return Err(E_INVALIDARG);
            }
            if r.d > 1 && (d.slice_pitch as u64) < d.row_pitch as u64 * r.h as u64 {
                // SysMemSlicePitch: likewise, a slice holds all rows of a depth level.
                return Err(E_INVALIDARG);
            }
            let _ = s;
        }
        Ok(())
    }

    /// A new resource with one public reference, its memory allocated and initialised. `interop`
    /// is the vtable of its `IDxclInteropResource` face: `com::interop`'s, which the device hands
    /// over (that module builds on resources, so they do not name it).
    pub fn create(
        device: &Device,
        desc: ResourceDesc,
        layout: ResourceLayout,
        init: Option<&[InitData]>,
        interop: &'static IDxclInteropResourceVtbl,
    ) -> Result<*mut Resource, HRESULT> {
        let allocation = device
            .backend
            .allocate(&desc, &layout)
            .map_err(backend_error)?;
        if let Some(init) = init {
            for (i, d) in init.iter().enumerate().take(layout.subresources.len()) {
                let region = layout.full_region(i as u32).expect("index in layout");
                // SAFETY: the allocation is this backend's; the region is the whole subresource;
                // `check_init_data` made sure the pitches cover the application's rows, which D3D
                // requires to be readable.
                unsafe {
                    device.backend.write_region(
                        &allocation,
                        i as u32,
                        &region,
                        d.data,
                        d.row_pitch as usize,
                        d.slice_pitch as usize,
                    )
                };
            }
        }
        let d3d11: *const c_void = match desc.dimension {
            Dimension::Buffer => &BUFFER_VTBL as *const ID3D11BufferVtbl as *const c_void,
            Dimension::Texture1D => &TEXTURE1D_VTBL as *const ID3D11Texture1DVtbl as *const c_void,
            Dimension::Texture2D => &TEXTURE2D_VTBL as *const ID3D11Texture2DVtbl as *const c_void,
            Dimension::Texture3D => &TEXTURE3D_VTBL as *const ID3D11Texture3DVtbl as *const c_void,
        };
        let count = desc.subresource_count() as usize;
        let res = into_raw(Resource {
            d3d11,
            dxgi: &DXGI_RESOURCE_VTBL,
            interop,
            d3d10: ptr::null(),
            refs: RefCounts::new_public(),
            private: PrivateData::default(),
            device: PrivateRef::new(device),
            desc,
            allocation,
            mapped: Mutex::new(vec![false; count]),
            pending: Mutex::new(Vec::new()),
            eviction_priority: AtomicU32::new(DXGI_RESOURCE_PRIORITY_NORMAL),
            opencl: OpenClUse::default(),
        });
        // SAFETY: just created; its first public reference takes the device reference.
        unsafe { (*res).on_public_acquire() };
        Ok(res)
    }

    /// The resource behind any face pointer an application passes (D3D11, D3D10, DXGI or interop),
    /// or `None` for a pointer that is not one of ours.
    pub fn from_any_face<I>(ptr: *const I) -> Option<PrivateRef<Resource>> {
        lookup::<Resource, I>(ptr)
    }

    /// One of `device`'s resources behind an application pointer; `None` for a pointer that is
    /// not one of ours and for other devices' resources (of the other API's too).
    pub fn of_device<I>(device: &Device, ptr: *const I) -> Option<PrivateRef<Resource>> {
        Self::from_any_face(ptr).filter(|r| ptr::eq(r.device(), device))
    }

    /// The backend of the resource's device.
    pub fn device_backend(&self) -> &dyn crate::backend::Backend {
        &*self.device.backend
    }

    pub fn allocation(&self) -> &Allocation {
        &self.allocation
    }

    pub fn layout(&self) -> &ResourceLayout {
        &self.allocation.layout
    }

    fn any_mapped(&self) -> bool {
        lock(&self.mapped).iter().any(|&m| m)
    }

    fn is_mapped(&self, sub: u32) -> bool {
        lock(&self.mapped)
            .get(sub as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The interface the application sees the resource as (`ID3D11Texture2D`, `ID3D10Buffer`, …).
    pub fn interface_name(&self) -> &'static str {
        let d3d10 = !self.d3d10.is_null();
        match (self.desc.dimension, d3d10) {
            (Dimension::Buffer, false) => "ID3D11Buffer",
            (Dimension::Texture1D, false) => "ID3D11Texture1D",
            (Dimension::Texture2D, false) => "ID3D11Texture2D",
            (Dimension::Texture3D, false) => "ID3D11Texture3D",
            (Dimension::Buffer, true) => "ID3D10Buffer",
            (Dimension::Texture1D, true) => "ID3D10Texture1D",
            (Dimension::Texture2D, true) => "ID3D10Texture2D",
            (Dimension::Texture3D, true) => "ID3D10Texture3D",
        }
    }

    /// How validation reports name the resource: its debug name, else its pointer (the face the
    /// application uses) and description.
    fn report_name(&self) -> String {
        let offset = if self.d3d10.is_null() {
            D3D11_FACE
        } else {
            D3D10_FACE
        };
        let face = self as *const Resource as usize + offset;
        let d = &self.desc;
        let description = match d.dimension {
            Dimension::Buffer => format!("{} bytes", d.width),
            _ => format!(
                "{}x{}x{}, {} mip(s), {} slice(s), DXGI format {}",
                d.width, d.height, d.depth, d.mip_levels, d.array_size, d.format
            ),
        };
        validation::name(&self.private, face, &description)
    }

    /// The name of the Direct3D call doing `op` on this resource.
    fn call_name(&self, op: Op) -> &'static str {
        match (op, self.d3d10.is_null()) {
            (Op::Map, true) => "ID3D11DeviceContext::Map",
            (Op::UpdateSubresource, true) => "ID3D11DeviceContext::UpdateSubresource",
            (Op::CopyResource, true) => "ID3D11DeviceContext::CopyResource",
            (Op::CopySubresourceRegion, true) => "ID3D11DeviceContext::CopySubresourceRegion",
            (Op::Map, false) => match self.desc.dimension {
                Dimension::Buffer => "ID3D10Buffer::Map",
                Dimension::Texture1D => "ID3D10Texture1D::Map",
                Dimension::Texture2D => "ID3D10Texture2D::Map",
                Dimension::Texture3D => "ID3D10Texture3D::Map",
            },
            (Op::UpdateSubresource, false) => "ID3D10Device::UpdateSubresource",
            (Op::CopyResource, false) => "ID3D10Device::CopyResource",
            (Op::CopySubresourceRegion, false) => "ID3D10Device::CopySubresourceRegion",
        }
    }

    /// Validation: reports (once per resource) `op` touching `subresources` (`None`: all) while
    /// OpenCL holds one of them acquired.
    #[inline]
    fn check_opencl(&self, op: Op, subresources: Option<&[u32]>) {
        if !validation::on() {
            return;
        }
        let Some((sub, call)) = self.opencl.acquired(subresources) else {
            return;
        };
        if self
            .opencl
            .reported
            .first(validation::Kind::AccessWhileAcquired)
        {
            validation::report(&format!(
                "{} on {} {} subresource {sub} while OpenCL holds it acquired ({call})",
                self.call_name(op),
                self.interface_name(),
                self.report_name(),
            ));
        }
    }

    /// Queues interop work to honour before the next access.
    pub fn add_pending(
        &self,
        wait: PFN_DXCL_PENDING_WAIT,
        release: PFN_DXCL_PENDING_RELEASE,
        context: *mut c_void,
    ) -> HRESULT {
        let Some(wait) = wait else {
            // AddPendingWork: pfnWait is what the runtime calls; without it there is no work.
            return E_INVALIDARG;
        };
        lock(&self.pending).push(PendingWork {
            wait,
            order: None,
            release,
            context,
        });
        S_OK
    }

    /// Queues interop work that GPU-side accesses may order without a CPU wait
    /// (`AddPendingWorkOrdered`).
    pub fn add_pending_ordered(
        &self,
        wait: PFN_DXCL_PENDING_WAIT,
        order: PFN_DXCL_PENDING_ORDER,
        release: PFN_DXCL_PENDING_RELEASE,
        context: *mut c_void,
    ) -> HRESULT {
        let (Some(wait), Some(order)) = (wait, order) else {
            // Without pfnWait there is nothing to call before a CPU access; without pfnOrder the
            // call is AddPendingWork's.
            return E_INVALIDARG;
        };
        lock(&self.pending).push(PendingWork {
            wait,
            order: Some(order),
            release,
            context,
        });
        S_OK
    }

    /// Whether all Direct3D work issued so far on the resource has completed (never blocks).
    pub fn device_work_done(&self) -> bool {
        !self.device.backend.has_pending_work(&self.allocation)
    }

    /// Whether interop work is queued.
    pub fn has_pending(&self) -> bool {
        !lock(&self.pending).is_empty()
    }

    /// Runs queued interop work before a CPU access: each wait, then its release, once each,
    /// outside any lock.
    pub fn run_pending(&self) {
        self.run_pending_before(Access::Cpu);
    }

    /// Runs queued interop work before an access of the given kind. A GPU-side access (one the
    /// device's queue performs) first lets ordered work order it without a CPU wait.
    fn run_pending_before(&self, access: Access) {
        let work = std::mem::take(&mut *lock(&self.pending));
        let gpu =
            access == Access::Gpu && self.device.backend.adapter().backend == BackendKind::Vulkan;
        for w in work {
            // SAFETY: the layer gave these callbacks and context through AddPendingWork or
            // AddPendingWorkOrdered, whose contract is that we call the order (GPU-side accesses
            // only) or the wait, then release, once each, holding none of our locks.
            unsafe {
                let ordered = match (gpu, w.order) {
                    (true, Some(order)) => order(w.context) == S_OK,
                    _ => false,
                };
                if !ordered {
                    (w.wait)(w.context);
                }
                if let Some(release) = w.release {
                    release(w.context);
                }
            }
        }
    }

    /// Runs queued interop work before an access the device's queue performs (copy, update).
    pub fn run_pending_gpu(&self) {
        self.run_pending_before(Access::Gpu);
    }

    /// Waits for all work issued on the resource (interop `WaitForDeviceWork`).
    pub fn wait_idle(&self) {
        let b = &self.device.backend;
        b.wait(b.signal());
    }

    /// `Map` with Direct3D 11's rules (`ID3D11DeviceContext::Map`, `ID3D10Buffer::Map`, ...).
    pub fn map(&self, sub: u32, map_type: u32, flags: u32) -> Result<Mapped, HRESULT> {
        let d = &self.desc;
        if sub >= d.subresource_count() {
            // Map: Subresource must exist.
            return Err(E_INVALIDARG);
        }
        if !(MAP_READ..=MAP_WRITE_NO_OVERWRITE).contains(&map_type)
            || flags & !MAP_FLAG_DO_NOT_WAIT != 0
        {
            // D3D11_MAP has values 1-5; D3D11_MAP_FLAG has DO_NOT_WAIT only.
            return Err(E_INVALIDARG);
        }
        if d.sample_count > 1 {
            // Multisampled resources cannot be mapped.
            return Err(E_INVALIDARG);
        }
        let discard_like = matches!(map_type, MAP_WRITE_DISCARD | MAP_WRITE_NO_OVERWRITE);
        let allowed = match d.usage {
            // "D3D11_USAGE_DYNAMIC resources must use either MAP_WRITE_DISCARD or
            // MAP_WRITE_NO_OVERWRITE"; NO_OVERWRITE is for buffers (D3D11.1 runtime).
            USAGE_DYNAMIC => {
                map_type == MAP_WRITE_DISCARD
                    || (map_type == MAP_WRITE_NO_OVERWRITE && d.dimension == Dimension::Buffer)
            }
            // Staging: READ needs CPU_ACCESS_READ, WRITE needs CPU_ACCESS_WRITE, READ_WRITE both;
            // DISCARD and NO_OVERWRITE are for dynamic resources.
            USAGE_STAGING => {
                let need = match map_type {
                    MAP_READ => CPU_ACCESS_READ,
                    MAP_WRITE => CPU_ACCESS_WRITE,
                    MAP_READ_WRITE => CPU_ACCESS_ALL,
                    _ => u32::MAX,
                };
                !discard_like && d.cpu_access & need == need
            }
            // DEFAULT and IMMUTABLE resources have no CPU access.
            _ => false,
        };
        if !allowed {
            return Err(E_INVALIDARG);
        }
        let do_not_wait = flags & MAP_FLAG_DO_NOT_WAIT != 0;
        if do_not_wait && discard_like {
            // "D3D11_MAP_FLAG_DO_NOT_WAIT cannot be used with D3D11_MAP_WRITE_DISCARD or
            // D3D11_MAP_WRITE_NOOVERWRITE".
            return Err(E_INVALIDARG);
        }
        if self.is_mapped(sub) {
            // A subresource is mapped at most once at a time.
            return Err(E_INVALIDARG);
        }
        if do_not_wait && (self.has_pending() || self.device.backend.is_busy(&self.allocation)) {
            // DO_NOT_WAIT: "DXGI_ERROR_WAS_STILL_DRAWING if the GPU is busy" with the resource.
            return Err(DXGI_ERROR_WAS_STILL_DRAWING);
        }
        self.check_opencl(Op::Map, Some(&[sub]));
        self.run_pending();
        let s = self.layout().subresources[sub as usize];
        let access = MapAccess {
            // WRITE and NO_OVERWRITE keep the bytes the CPU does not write; only DISCARD drops them.
            read: map_type != MAP_WRITE_DISCARD,
            write: map_type != MAP_READ,
        };
        // SAFETY: the allocation is this device's backend's; `sub` exists and is not mapped.
        let data = unsafe { self.device.backend.map(&self.allocation, sub, access) }
            .map_err(backend_error)?;
        {
            let mut m = lock(&self.mapped);
            if m[sub as usize] {
                // Another thread mapped it meanwhile: same rule as above.
                return Err(E_INVALIDARG);
            }
            m[sub as usize] = true;
        }
        Ok(Mapped {
            data,
            row_pitch: s.row_pitch,
            depth_pitch: s.depth_pitch,
        })
    }

    /// `Unmap`: ignored for a subresource that is not mapped (Direct3D only reports it in the debug
    /// layer).
    pub fn unmap(&self, sub: u32) {
        {
            let mut m = lock(&self.mapped);
            match m.get_mut(sub as usize) {
                Some(slot) if *slot => *slot = false,
                _ => return,
            }
        }
        // SAFETY: the subresource was mapped by `map` on this backend.
        unsafe { self.device.backend.unmap(&self.allocation, sub) };
    }

    /// `UpdateSubresource`. Calls Direct3D rejects do nothing: a destination that is IMMUTABLE,
    /// DYNAMIC, multisampled or depth-stencil ("UpdateSubresource cannot be used on ..."), a mapped
    /// subresource, null data, or an empty or invalid box ("the call does nothing").
    ///
    /// # Safety
    /// `data` is null or readable for the region with the given pitches (D3D's contract).
    pub unsafe fn update(
        &self,
        sub: u32,
        b: Option<&TexelBox>,
        data: *const u8,
        row_pitch: u32,
        depth_pitch: u32,
    ) {
        let d = &self.desc;
        if sub >= d.subresource_count()
            || matches!(d.usage, USAGE_IMMUTABLE | USAGE_DYNAMIC)
            || d.sample_count > 1
            || d.bind & BIND_DEPTH_STENCIL != 0
            || data.is_null()
            || self.is_mapped(sub)
        {
            return;
        }
        let region = match b {
            None => self.layout().full_region(sub),
            Some(b) => self.layout().box_region(sub, b),
        };
        let Some(region) = region else { return };
        self.check_opencl(Op::UpdateSubresource, Some(&[sub]));
        self.run_pending_gpu();
        // SAFETY: this backend's allocation; the region lies in the subresource; `data` is
        // readable (contract).
        unsafe {
            self.device.backend.write_region(
                &self.allocation,
                sub,
                &region,
                data,
                row_pitch as usize,
                depth_pitch as usize,
            )
        };
    }
}

/// Whether two resources may be copied between: same kind, same sample count, compatible formats
/// (the same type group), a destination that is not IMMUTABLE, and neither mapped
/// ("CopyResource/CopySubresourceRegion: ... cannot be mapped / immutable / must have compatible
/// formats").
fn copy_allowed(dst: &Resource, src: &Resource) -> bool {
    let (a, b) = (&dst.desc, &src.desc);
    if a.dimension != b.dimension || a.sample_count != b.sample_count || a.usage == USAGE_IMMUTABLE
    {
        return false;
    }
    if a.dimension != Dimension::Buffer {
        let (Some(fa), Some(fb)) = (a.format_info(), b.format_info()) else {
            return false;
        };
        if !fa.copy_compatible(fb) {
            return false;
        }
    }
    !dst.any_mapped() && !src.any_mapped()
}

/// `CopyResource`: every subresource; ignored unless the resources are distinct with identical
/// dimensions (Direct3D: "must be different resources ... the same type ... identical
/// dimensions").
pub fn copy_resource(dst: &Resource, src: &Resource) {
    if ptr::eq(dst, src) || !copy_allowed(dst, src) {
        return;
    }
    let (a, b) = (&dst.desc, &src.desc);
    let same_shape = (a.width, a.height, a.depth, a.mip_levels, a.array_size)
        == (b.width, b.height, b.depth, b.mip_levels, b.array_size);
    if !same_shape {
        return;
    }
    dst.check_opencl(Op::CopyResource, None);
    src.check_opencl(Op::CopyResource, None);
    dst.run_pending_gpu();
    src.run_pending_gpu();
    let backend = &dst.device.backend;
    for sub in 0..a.subresource_count() {
        let r = dst.layout().full_region(sub).expect("index in layout");
        // SAFETY: both allocations belong to this backend (same device, checked by the caller);
        // equal shapes give equal full regions.
        unsafe { backend.copy_region(&dst.allocation, sub, &r, &src.allocation, sub, &r) };
    }
}

/// `CopySubresourceRegion`; ignored when Direct3D's rules are broken (invalid subresources, box
/// outside the source, region not fitting at the destination, overlapping copy within one
/// subresource, or a partial copy of a depth-stencil or multisampled resource, which "must copy
/// whole subresources").
#[allow(clippy::too_many_arguments)] // Mirrors the Direct3D method's parameters.
pub fn copy_subresource_region(
    dst: &Resource,
    dst_sub: u32,
    x: u32,
    y: u32,
    z: u32,
    src: &Resource,
    src_sub: u32,
    b: Option<&TexelBox>,
) {
    if !copy_allowed(dst, src)
        || dst_sub >= dst.desc.subresource_count()
        || src_sub >= src.desc.subresource_count()
    {
        return;
    }
    let whole_only = dst.desc.sample_count > 1
        || dst.desc.bind & BIND_DEPTH_STENCIL != 0
        || src.desc.bind & BIND_DEPTH_STENCIL != 0;
    let src_region = match b {
        None => src.layout().full_region(src_sub),
        Some(_) if whole_only => None,
        Some(b) => src.layout().box_region(src_sub, b),
    };
    let Some(src_region) = src_region else { return };
    let Some(dst_region) = dst.layout().place_region(dst_sub, x, y, z, &src_region) else {
        return;
    };
    if whole_only
        && ((x, y, z) != (0, 0, 0) || dst.layout().full_region(dst_sub) != Some(dst_region))
    {
        return;
    }
    if ptr::eq(dst, src) && dst_sub == src_sub && overlaps(&dst_region, &src_region) {
        // "The source and destination regions ... must not overlap" (results are undefined).
        return;
    }
    dst.check_opencl(Op::CopySubresourceRegion, Some(&[dst_sub]));
    src.check_opencl(Op::CopySubresourceRegion, Some(&[src_sub]));
    dst.run_pending_gpu();
    if !ptr::eq(dst, src) {
        src.run_pending_gpu();
    }
    // SAFETY: both allocations belong to this device's backend; the regions were checked against
    // their subresources by `box_region`/`place_region`; overlap within one subresource excluded.
    unsafe {
        dst.device.backend.copy_region(
            &dst.allocation,
            dst_sub,
            &dst_region,
            &src.allocation,
            src_sub,
            &src_region,
        )
    };
}

fn overlaps(a: &BlockRegion, b: &BlockRegion) -> bool {
    let o = |s1: u32, l1: u32, s2: u32, l2: u32| s1 < s2 + l2 && s2 < s1 + l1;
    o(a.x, a.w, b.x, b.w) && o(a.y, a.h, b.y, b.h) && o(a.z, a.d, b.z, b.d)
}

// The methods of the D3D11 immediate context and of the D3D10 device (the immediate context in
// Direct3D 10), on the application's pointers. A resource that is not one of the device's (of
// the other API, of another device, not ours) is not a valid argument; the methods return
// nothing, so the call is ignored.

/// `CopyResource`.
pub fn copy_resource_of<I>(device: &Device, dst: *const I, src: *const I) {
    if let (Some(d), Some(s)) = (
        Resource::of_device(device, dst),
        Resource::of_device(device, src),
    ) {
        copy_resource(&d, &s);
    }
}

/// `CopySubresourceRegion` (`b`: the source box, `None` for the whole subresource).
#[allow(clippy::too_many_arguments)] // Mirrors the Direct3D method's parameters.
pub fn copy_subresource_region_of<I>(
    device: &Device,
    dst: *const I,
    dst_sub: u32,
    (x, y, z): (u32, u32, u32),
    src: *const I,
    src_sub: u32,
    b: Option<&TexelBox>,
) {
    if let (Some(d), Some(s)) = (
        Resource::of_device(device, dst),
        Resource::of_device(device, src),
    ) {
        copy_subresource_region(&d, dst_sub, x, y, z, &s, src_sub, b);
    }
}

/// `UpdateSubresource` (`b`: the destination box). `whole_constant_buffers`: Direct3D 10's rule
/// that a constant buffer is updated whole ("set pDstBox to NULL. No other values are valid").
///
/// # Safety
/// `data` is null or readable for the region with the given pitches (D3D's contract).
#[allow(clippy::too_many_arguments)] // Mirrors the Direct3D method's parameters.
pub unsafe fn update_subresource_of<I>(
    device: &Device,
    dst: *const I,
    sub: u32,
    b: Option<&TexelBox>,
    data: *const c_void,
    (row_pitch, depth_pitch): (u32, u32),
    whole_constant_buffers: bool,
) {
    let Some(r) = Resource::of_device(device, dst) else {
        return;
    };
    if whole_constant_buffers && b.is_some() && r.desc.bind & BIND_CONSTANT_BUFFER != 0 {
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { r.update(sub, b, data.cast(), row_pitch, depth_pitch) };
}

// ---------------------------------------------------------------------------------------------
// ID3D11Resource faces

type R = Resource;
const RO: usize = D3D11_FACE;

const fn resource_base() -> ID3D11ResourceVtbl {
    ID3D11ResourceVtbl {
        base: ID3D11DeviceChildVtbl {
            base: unknown_vtbl::<R, RO>(),
            GetDevice: child_get_device::<R, ID3D11DeviceChild, RO>,
            GetPrivateData: get_private_data::<R, ID3D11DeviceChild, RO>,
            SetPrivateData: set_private_data::<R, ID3D11DeviceChild, RO>,
            SetPrivateDataInterface: set_private_data_interface::<R, ID3D11DeviceChild, RO>,
        },
        GetType: resource_get_type::<ID3D11Resource, RO>,
        SetEvictionPriority: resource_set_eviction_priority::<ID3D11Resource, RO>,
        GetEvictionPriority: resource_get_eviction_priority::<ID3D11Resource, RO>,
    }
}

static BUFFER_VTBL: ID3D11BufferVtbl = ID3D11BufferVtbl {
    base: resource_base(),
    GetDesc: buffer_get_desc,
};
static TEXTURE1D_VTBL: ID3D11Texture1DVtbl = ID3D11Texture1DVtbl {
    base: resource_base(),
    GetDesc: texture1d_get_desc,
};
static TEXTURE2D_VTBL: ID3D11Texture2DVtbl = ID3D11Texture2DVtbl {
    base: resource_base(),
    GetDesc: texture2d_get_desc,
};
static TEXTURE3D_VTBL: ID3D11Texture3DVtbl = ID3D11Texture3DVtbl {
    base: resource_base(),
    GetDesc: texture3d_get_desc,
};

/// # Safety
/// `this` is face `OFF` of a live resource.
unsafe fn res<'a, I, const OFF: usize>(this: *mut I) -> &'a Resource {
    // SAFETY: function contract.
    unsafe { object::<Resource, I>(this, OFF) }
}

/// `D3D11_RESOURCE_DIMENSION` of a dimension (D3D10's values are the same).
pub fn resource_dimension(d: Dimension) -> u32 {
    match d {
        Dimension::Buffer => 1,
        Dimension::Texture1D => 2,
        Dimension::Texture2D => 3,
        Dimension::Texture3D => 4,
    }
}

/// `ID3D11Resource::GetType` and `ID3D10Resource::GetType` (`D3D10_RESOURCE_DIMENSION` has the
/// D3D11 values) of face `OFF`.
///
/// # Safety
/// `this` is face `OFF` of a live resource; `out` is null or writable.
pub(crate) unsafe extern "system" fn resource_get_type<I, const OFF: usize>(
    this: *mut I,
    out: *mut D3D11_RESOURCE_DIMENSION,
) {
    guard((), || {
        if !out.is_null() {
            // SAFETY: function contract; non-null and writable.
            unsafe {
                *out = resource_dimension(res::<I, OFF>(this).desc.dimension)
                    as D3D11_RESOURCE_DIMENSION
            };
        }
    })
}

/// `SetEvictionPriority` of the D3D11 and D3D10 resource faces.
///
/// # Safety
/// `this` is face `OFF` of a live resource.
pub(crate) unsafe extern "system" fn resource_set_eviction_priority<I, const OFF: usize>(
    this: *mut I,
    p: u32,
) {
    guard((), || {
        // SAFETY: function contract.
        unsafe { res::<I, OFF>(this) }
            .eviction_priority
            .store(p, Ordering::Relaxed)
    })
}

/// `GetEvictionPriority` of the D3D11 and D3D10 resource faces.
///
/// # Safety
/// `this` is face `OFF` of a live resource.
pub(crate) unsafe extern "system" fn resource_get_eviction_priority<I, const OFF: usize>(
    this: *mut I,
) -> u32 {
    guard(0, || {
        // SAFETY: function contract.
        unsafe { res::<I, OFF>(this) }
            .eviction_priority
            .load(Ordering::Relaxed)
    })
}

/// `GetDesc` of face `OFF`: `describe` of the resource's description in `*out` (nothing when
/// `out` is null).
///
/// # Safety
/// `this` is face `OFF` of a live resource; `out` is null or writable.
pub(crate) unsafe fn get_desc<I, T, const OFF: usize>(
    this: *mut I,
    out: *mut T,
    describe: impl FnOnce(&ResourceDesc) -> T,
) {
    guard((), || {
        if out.is_null() {
            return;
        }
        // SAFETY: function contract.
        let d = unsafe { res::<I, OFF>(this) }.desc;
        // SAFETY: non-null and writable (contract).
        unsafe { *out = describe(&d) };
    })
}

unsafe extern "system" fn buffer_get_desc(this: *mut ID3D11Buffer, out: *mut D3D11_BUFFER_DESC) {
    // SAFETY: COM contract.
    unsafe { get_desc::<_, _, RO>(this, out, desc::buffer_desc) }
}

unsafe extern "system" fn texture1d_get_desc(
    this: *mut ID3D11Texture1D,
    out: *mut D3D11_TEXTURE1D_DESC,
) {
    // SAFETY: COM contract.
    unsafe { get_desc::<_, _, RO>(this, out, desc::texture1d_desc) }
}

unsafe extern "system" fn texture2d_get_desc(
    this: *mut ID3D11Texture2D,
    out: *mut D3D11_TEXTURE2D_DESC,
) {
    // SAFETY: COM contract.
    unsafe { get_desc::<_, _, RO>(this, out, desc::texture2d_desc) }
}

unsafe extern "system" fn texture3d_get_desc(
    this: *mut ID3D11Texture3D,
    out: *mut D3D11_TEXTURE3D_DESC,
) {
    // SAFETY: COM contract.
    unsafe { get_desc::<_, _, RO>(this, out, desc::texture3d_desc) }
}

// ---------------------------------------------------------------------------------------------
// IDXGIResource face

const GO: usize = DXGI_FACE;

static DXGI_RESOURCE_VTBL: IDXGIResourceVtbl = IDXGIResourceVtbl {
    base: IDXGIDeviceSubObjectVtbl {
        base: IDXGIObjectVtbl {
            base: unknown_vtbl::<R, GO>(),
            SetPrivateData: set_private_data::<R, IDXGIObject, GO>,
            SetPrivateDataInterface: set_private_data_interface::<R, IDXGIObject, GO>,
            GetPrivateData: get_private_data::<R, IDXGIObject, GO>,
            GetParent: dxgi_resource_get_device_or_parent::<IDXGIObject>,
        },
        GetDevice: dxgi_resource_get_device_or_parent::<IDXGIDeviceSubObject>,
    },
    GetSharedHandle: dxgi_resource_get_shared_handle,
    GetUsage: dxgi_resource_get_usage,
    SetEvictionPriority: dxgi_resource_set_eviction_priority,
    GetEvictionPriority: dxgi_resource_get_eviction_priority,
};

/// `IDXGIObject::GetParent` and `IDXGIDeviceSubObject::GetDevice`: both reach the device.
unsafe extern "system" fn dxgi_resource_get_device_or_parent<I>(
    this: *mut I,
    riid: *const GUID,
    out: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: COM contract for all pointers.
    guard(E_FAIL, || unsafe {
        query_interface(res::<_, GO>(this).device(), riid, out)
    })
}

unsafe extern "system" fn dxgi_resource_get_shared_handle(
    this: *mut IDXGIResource,
    out: *mut HANDLE,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: non-null and writable (COM contract).
        unsafe { *out = ptr::null_mut() };
        // SAFETY: COM contract.
        if unsafe { res::<_, GO>(this) }.desc.misc & MISC_SHARED == 0 {
            // Only resources created with D3D11_RESOURCE_MISC_SHARED have a shared handle.
            return E_INVALIDARG;
        }
        // Cross-process handles need an OpenSharedResource counterpart, which is not implemented.
        E_NOTIMPL
    })
}

unsafe extern "system" fn dxgi_resource_get_usage(
    this: *mut IDXGIResource,
    out: *mut DXGI_USAGE,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let d = unsafe { res::<_, GO>(this) }.desc;
        let mut usage = match d.usage {
            USAGE_DYNAMIC => DXGI_CPU_ACCESS_DYNAMIC,
            USAGE_STAGING => DXGI_CPU_ACCESS_READ_WRITE,
            _ => DXGI_CPU_ACCESS_NONE,
        };
        if d.bind & BIND_SHADER_RESOURCE != 0 {
            usage |= DXGI_USAGE_SHADER_INPUT;
        }
        if d.bind & BIND_RENDER_TARGET != 0 {
            usage |= DXGI_USAGE_RENDER_TARGET_OUTPUT;
        }
        if d.bind & BIND_UNORDERED_ACCESS != 0 {
            usage |= DXGI_USAGE_UNORDERED_ACCESS;
        }
        if d.misc & MISC_SHARED != 0 {
            usage |= DXGI_USAGE_SHARED;
        }
        // SAFETY: non-null and writable (COM contract).
        unsafe { *out = usage as DXGI_USAGE };
        S_OK
    })
}

unsafe extern "system" fn dxgi_resource_set_eviction_priority(
    this: *mut IDXGIResource,
    p: u32,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract.
        unsafe { res::<_, GO>(this) }
            .eviction_priority
            .store(p, Ordering::Relaxed);
        S_OK
    })
}

unsafe extern "system" fn dxgi_resource_get_eviction_priority(
    this: *mut IDXGIResource,
    out: *mut u32,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            return E_INVALIDARG;
        }
        // SAFETY: COM contract; non-null and writable.
        unsafe { *out = res::<_, GO>(this).eviction_priority.load(Ordering::Relaxed) };
        S_OK
    })
}

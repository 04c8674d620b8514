//! The device: one object with an `ID3D11Device` face, an `IDXGIDevice1` face, the
//! `IDxclInteropDevice` face and two reserved D3D10 faces, plus the creation logic
//! (`D3D11CreateDevice`'s rules) that the D3D10 entry points reuse.

use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

use super::abi::*;
use super::context::{Context, CONTEXT_FACE};
use super::desc::Describes;
use super::dxgi::{Adapter, ADAPTER_FACE};
use super::guard::guard;
use super::interop::{INTEROP_DEVICE_VTBL, INTEROP_RESOURCE_VTBL};
use super::object::*;
use super::private_data::*;
use super::query::Query;
use super::resource::{InitData, Resource};
pub use super::shared::{
    child_get_device, Device, DeviceChild, D3D10_DEVICE_FACE, D3D10_MULTITHREAD_FACE, DEVICE_FACE,
    DXGI_DEVICE_FACE, IID_ID3D10MULTITHREAD, INTEROP_DEVICE_FACE,
};
use super::{clear_out, desc_error, iid_in};
use crate::backend::BackendKind;
use crate::core::flags::BIND_DEPTH_STENCIL;
use crate::core::format::{format, multisample_quality_levels};
use crate::core::{Dimension, ResourceDesc};

// SAFETY: every offset in `faces` is a vtable pointer field; `face_for` returns only those, and
// the D3D10 ones only once set.
unsafe impl ComObject for Device {
    const KIND: ObjectKind = ObjectKind::Device;
    fn refs(&self) -> &RefCounts {
        &self.refs
    }
    fn private_data(&self) -> &PrivateData {
        &self.private
    }
    fn faces() -> &'static [usize] {
        &[
            DEVICE_FACE,
            DXGI_DEVICE_FACE,
            INTEROP_DEVICE_FACE,
            D3D10_DEVICE_FACE,
            D3D10_MULTITHREAD_FACE,
        ]
    }
    fn face_for(&self, riid: &GUID) -> Option<usize> {
        // A device made by D3D10CreateDevice (D3D10 face set) is a D3D10 device: IUnknown is its
        // D3D10 face and it does not answer ID3D11Device (as on Windows).
        let d3d10 = !self.d3d10.is_null();
        if d3d10 && iid_in(riid, &[IID_IUnknown]) {
            Some(D3D10_DEVICE_FACE)
        } else if !d3d10 && iid_in(riid, &[IID_IUnknown, IID_ID3D11Device]) {
            Some(DEVICE_FACE)
        } else if iid_in(riid, &[IID_IDXGIObject, IID_IDXGIDevice, IID_IDXGIDevice1]) {
            Some(DXGI_DEVICE_FACE)
        } else if iid_in(riid, &[IID_IDxclInteropDevice]) {
            Some(INTEROP_DEVICE_FACE)
        } else if d3d10 && iid_in(riid, &[IID_ID3D10Device, IID_ID3D10Device1]) {
            Some(D3D10_DEVICE_FACE)
        } else if !self.d3d10_multithread.is_null() && iid_in(riid, &[IID_ID3D10MULTITHREAD]) {
            Some(D3D10_MULTITHREAD_FACE)
        } else {
            None
        }
    }
    fn on_public_count(&self, remaining: u32) {
        if super::validation::on() && self.validation.application_let_go(remaining) {
            let (name, face) = if self.d3d10.is_null() {
                ("ID3D11Device", DEVICE_FACE)
            } else {
                ("ID3D10Device", D3D10_DEVICE_FACE)
            };
            let face = self as *const Device as usize + face;
            let opencl = self
                .validation
                .opencl
                .load(std::sync::atomic::Ordering::Acquire);
            super::validation::report(&format!(
                "{name}::Release on {name} {} drops the application's last reference while \
                 OpenCL objects made from it live ({opencl} reference(s) held for OpenCL \
                 contexts, clCreateContext)",
                super::validation::name(&self.private, face, "device"),
            ));
        }
    }
    fn on_destroy(&mut self) {
        // SAFETY: the device owned the context's one private reference since `create`.
        unsafe { release_private(self.context() as *const Context) };
    }
}

/// Feature levels this runtime creates, best first.
pub const SUPPORTED_LEVELS: [D3D_FEATURE_LEVEL; 7] = [
    D3D_FEATURE_LEVEL_11_1,
    D3D_FEATURE_LEVEL_11_0,
    D3D_FEATURE_LEVEL_10_1,
    D3D_FEATURE_LEVEL_10_0,
    D3D_FEATURE_LEVEL_9_3,
    D3D_FEATURE_LEVEL_9_2,
    D3D_FEATURE_LEVEL_9_1,
];

/// D3D11CreateDevice: "If pFeatureLevels is NULL, the function uses 11_0, 10_1, 10_0, 9_3, 9_2,
/// 9_1" (11_1 only when asked for).
pub const DEFAULT_LEVELS: [D3D_FEATURE_LEVEL; 6] = [
    D3D_FEATURE_LEVEL_11_0,
    D3D_FEATURE_LEVEL_10_1,
    D3D_FEATURE_LEVEL_10_0,
    D3D_FEATURE_LEVEL_9_3,
    D3D_FEATURE_LEVEL_9_2,
    D3D_FEATURE_LEVEL_9_1,
];

/// Every `D3D11_CREATE_DEVICE_FLAG` bit.
const KNOWN_CREATE_FLAGS: u32 = 0x1 | 0x2 | 0x4 | 0x8 | 0x20 | 0x40 | 0x80 | 0x100 | 0x800;

/// Picks the feature level: the first of the requested list that this runtime supports.
///
/// # Safety
/// `levels` is null or readable for `count` values.
pub unsafe fn choose_feature_level(
    levels: *const D3D_FEATURE_LEVEL,
    count: u32,
) -> Result<D3D_FEATURE_LEVEL, HRESULT> {
    let requested: &[D3D_FEATURE_LEVEL] = if levels.is_null() {
        &DEFAULT_LEVELS
    } else {
        if count == 0 {
            // D3D11CreateDevice: a non-NULL pFeatureLevels needs FeatureLevels >= 1.
            return Err(E_INVALIDARG);
        }
        // SAFETY: readable for `count` values (contract).
        unsafe { std::slice::from_raw_parts(levels, count as usize) }
    };
    let known =
        |l: D3D_FEATURE_LEVEL| SUPPORTED_LEVELS.contains(&l) || (0xc000..=0xc200).contains(&l);
    if requested.iter().any(|&l| !known(l)) {
        // An unknown D3D_FEATURE_LEVEL value in the list is an invalid argument.
        return Err(E_INVALIDARG);
    }
    // D3D11CreateDevice tries the levels in order and returns DXGI_ERROR_UNSUPPORTED when none of
    // them can be created (12_x levels are beyond this runtime).
    requested
        .iter()
        .copied()
        .find(|l| SUPPORTED_LEVELS.contains(l))
        .ok_or(DXGI_ERROR_UNSUPPORTED)
}

/// What `D3D11CreateDevice` checks about the driver type, adapter and flags; returns the adapter
/// the device lands on.
///
/// # Safety
/// `adapter` is null or an application interface pointer (checked against the registry).
pub unsafe fn resolve_adapter(
    adapter: *mut IDXGIAdapter,
    driver_type: D3D_DRIVER_TYPE,
    software: HMODULE,
    flags: u32,
) -> Result<PrivateRef<Adapter>, HRESULT> {
    if flags & !KNOWN_CREATE_FLAGS != 0 {
        // D3D11_CREATE_DEVICE_FLAG: only the defined bits.
        return Err(E_INVALIDARG);
    }
    let given = if adapter.is_null() {
        None
    } else {
        // A foreign IDXGIAdapter cannot host a dxcl device.
        Some(lookup::<Adapter, _>(adapter).ok_or(E_INVALIDARG)?)
    };
    match driver_type {
        D3D_DRIVER_TYPE_UNKNOWN => {
            // D3D11CreateDevice: "If you set the pAdapter parameter to a non-NULL value, you must
            // also set the DriverType parameter to D3D_DRIVER_TYPE_UNKNOWN" (and UNKNOWN needs one).
            return given.ok_or(E_INVALIDARG);
        }
        D3D_DRIVER_TYPE_HARDWARE
        | D3D_DRIVER_TYPE_REFERENCE
        | D3D_DRIVER_TYPE_WARP
        | D3D_DRIVER_TYPE_SOFTWARE => {
            if given.is_some() {
                // As above: a non-NULL pAdapter requires D3D_DRIVER_TYPE_UNKNOWN.
                return Err(E_INVALIDARG);
            }
            if (driver_type == D3D_DRIVER_TYPE_SOFTWARE) == software.is_null() {
                // D3D11CreateDevice: "Software ... must be non-NULL if DriverType is
                // D3D_DRIVER_TYPE_SOFTWARE"; a module with any other driver type is invalid.
                return Err(E_INVALIDARG);
            }
        }
        // The NULL reference device renders nothing and has no resources worth sharing.
        D3D_DRIVER_TYPE_NULL => return Err(DXGI_ERROR_UNSUPPORTED),
        // D3D_DRIVER_TYPE: only the defined values.
        _ => return Err(E_INVALIDARG),
    }
    // HARDWARE lands on the first Vulkan adapter; WARP, REFERENCE and SOFTWARE on the software
    // adapter; either falls back to the first adapter DXCL_ADAPTER left.
    let prefer = if driver_type == D3D_DRIVER_TYPE_HARDWARE {
        BackendKind::Vulkan
    } else {
        BackendKind::Host
    };
    let a = Adapter::create_default(prefer).ok_or(DXGI_ERROR_UNSUPPORTED)?;
    // SAFETY: just created; the private reference replaces the creation's public one.
    let r = PrivateRef::new(unsafe { &*a });
    // SAFETY: we own the public reference from `create_default`.
    unsafe { release(a) };
    Ok(r)
}

impl Device {
    /// A new device (one public reference) with its immediate context.
    pub fn create(
        adapter: PrivateRef<Adapter>,
        feature_level: D3D_FEATURE_LEVEL,
        flags: u32,
    ) -> *mut Device {
        let device = into_raw(Device {
            d3d11: &DEVICE_VTBL,
            dxgi: &DXGI_DEVICE_VTBL,
            interop: &INTEROP_DEVICE_VTBL,
            d3d10: ptr::null(),
            d3d10_multithread: ptr::null(),
            refs: RefCounts::new_public(),
            private: PrivateData::default(),
            backend: adapter.backend.clone(),
            adapter,
            context: ptr::null_mut(),
            feature_level,
            creation_flags: flags,
            exception_mode: AtomicU32::new(0),
            gpu_thread_priority: AtomicI32::new(0),
            max_frame_latency: AtomicU32::new(3),
            validation: Default::default(),
        });
        let context = Context::create(device, flags & D3D11_CREATE_DEVICE_DEBUG as u32 != 0);
        // SAFETY: the device is not yet shared with anyone; setting its context before handing
        // it out is the last step of construction.
        unsafe { (*device).context = face(context, CONTEXT_FACE) };
        device
    }

    /// The immediate context object.
    pub fn context(&self) -> &Context {
        // SAFETY: the device owns a private reference on its context until it is destroyed.
        unsafe { object::<Context, _>(self.context, CONTEXT_FACE) }
    }

    /// Face pointer of the immediate context with a new public reference.
    pub fn immediate_context(&self) -> *mut ID3D11DeviceContext {
        let ctx = self.context();
        add_ref(ctx);
        face(ctx, CONTEXT_FACE)
    }

    /// Creates a resource from a description (any API's, translated) and optional initial data,
    /// one entry per subresource. `Ok(None)` when only validation was asked for.
    pub fn create_resource(
        &self,
        desc: &ResourceDesc,
        init: Option<&[InitData]>,
        validate_only: bool,
    ) -> Result<Option<*mut Resource>, HRESULT> {
        let desc = desc.validate(init.is_some()).map_err(desc_error)?;
        if let Some(init) = init {
            if init.len() < desc.subresource_count() as usize {
                return Err(E_INVALIDARG);
            }
        }
        let layout = crate::core::ResourceLayout::new(&desc, &self.backend.layout_rules())
            .map_err(desc_error)?;
        if let Some(init) = init {
            Resource::check_init_data(&desc, &layout, init)?;
        }
        if validate_only {
            // Create*: "S_FALSE ... if the output pointer is NULL" after validation succeeds.
            return Ok(None);
        }
        Resource::create(self, desc, layout, init, &INTEROP_RESOURCE_VTBL).map(Some)
    }

    /// `CheckFormatSupport` bits for a format, 0 when the runtime cannot create it at all.
    pub fn format_support(&self, value: u32) -> u32 {
        let Some(f) = format(value) else { return 0 };
        let mut bits = 0u32;
        let dims = [
            (Dimension::Texture1D, D3D11_FORMAT_SUPPORT_TEXTURE1D),
            (Dimension::Texture2D, D3D11_FORMAT_SUPPORT_TEXTURE2D),
            (Dimension::Texture3D, D3D11_FORMAT_SUPPORT_TEXTURE3D),
        ];
        for (dim, bit) in dims {
            if f.allows_dimension(dim) {
                bits |= bit as u32;
            }
        }
        if bits == 0 {
            return 0;
        }
        // Every creatable format: mip chains, staging copies (CPU access) and, for 2D formats, cube
        // maps (the runtime's validation takes any 2D format for a cube).
        bits |= (D3D11_FORMAT_SUPPORT_MIP | D3D11_FORMAT_SUPPORT_CPU_LOCKABLE) as u32;
        if f.allows_dimension(Dimension::Texture2D) {
            bits |= D3D11_FORMAT_SUPPORT_TEXTURECUBE as u32;
        }
        let bind = f.allowed_bind();
        // The bind flags a texture of this format may be created with (views are not implemented;
        // SHADER_LOAD says a SHADER_RESOURCE binding is accepted).
        let pairs = [
            (
                crate::core::flags::BIND_SHADER_RESOURCE,
                D3D11_FORMAT_SUPPORT_SHADER_LOAD,
            ),
            (
                crate::core::flags::BIND_RENDER_TARGET,
                D3D11_FORMAT_SUPPORT_RENDER_TARGET,
            ),
            (BIND_DEPTH_STENCIL, D3D11_FORMAT_SUPPORT_DEPTH_STENCIL),
            (
                crate::core::flags::BIND_UNORDERED_ACCESS,
                D3D11_FORMAT_SUPPORT_TYPED_UNORDERED_ACCESS_VIEW,
            ),
        ];
        for (b, bit) in pairs {
            if bind & b != 0 {
                bits |= bit as u32;
            }
        }
        if f.allows_multisample() {
            bits |= D3D11_FORMAT_SUPPORT_MULTISAMPLE_RENDERTARGET as u32;
        }
        if f.is_typeless() || f.family != f.value {
            bits |= D3D11_FORMAT_SUPPORT_CAST_WITHIN_BIT_LAYOUT as u32;
        }
        bits
    }
}

// ---------------------------------------------------------------------------------------------
// ID3D11Device

type D = Device;
const DO: usize = DEVICE_FACE;

static DEVICE_VTBL: ID3D11DeviceVtbl = ID3D11DeviceVtbl {
    base: unknown_vtbl::<D, DO>(),
    CreateBuffer: create_resource::<D3D11_BUFFER_DESC, ID3D11Buffer>,
    CreateTexture1D: create_resource::<D3D11_TEXTURE1D_DESC, ID3D11Texture1D>,
    CreateTexture2D: create_resource::<D3D11_TEXTURE2D_DESC, ID3D11Texture2D>,
    CreateTexture3D: create_resource::<D3D11_TEXTURE3D_DESC, ID3D11Texture3D>,
    CreateQuery: create_query,
    CheckFormatSupport: check_format_support,
    CheckMultisampleQualityLevels: check_multisample_quality_levels,
    CheckFeatureSupport: check_feature_support,
    GetPrivateData: get_private_data::<D, ID3D11Device, DO>,
    SetPrivateData: set_private_data::<D, ID3D11Device, DO>,
    SetPrivateDataInterface: set_private_data_interface::<D, ID3D11Device, DO>,
    GetFeatureLevel: get_feature_level::<ID3D11Device, DO>,
    GetCreationFlags: get_creation_flags::<ID3D11Device, DO>,
    GetDeviceRemovedReason: get_device_removed_reason::<ID3D11Device, DO>,
    GetImmediateContext: get_immediate_context,
    SetExceptionMode: set_exception_mode::<ID3D11Device, DO>,
    GetExceptionMode: get_exception_mode::<ID3D11Device, DO>,
    ..ID3D11DeviceVtbl::NOT_IMPLEMENTED
};

/// # Safety
/// `this` is face `OFF` of a live device.
unsafe fn dev<'a, I, const OFF: usize>(this: *mut I) -> &'a Device {
    // SAFETY: function contract.
    unsafe { object::<Device, I>(this, OFF) }
}

/// Reads `pInitialData` (D3D11 or D3D10 `SUBRESOURCE_DATA`, given as `(pSysMem, SysMemPitch,
/// SysMemSlicePitch)` by `fields`): one entry per subresource of `desc`.
///
/// # Safety
/// `init` is null or readable for one `T` per subresource of `desc` once validated (the count is
/// computed before anything is read).
unsafe fn read_init_data<T>(
    desc: &ResourceDesc,
    init: *const T,
    fields: InitFields<T>,
) -> Result<Option<Vec<InitData>>, HRESULT> {
    if init.is_null() {
        return Ok(None);
    }
    // The count depends on MipLevels = 0 being resolved: validate once to learn it.
    let count = desc.validate(true).map_err(desc_error)?.subresource_count() as usize;
    // SAFETY: caller's contract.
    let raw = unsafe { std::slice::from_raw_parts(init, count) };
    Ok(Some(
        raw.iter()
            .map(|d| {
                let (data, row_pitch, slice_pitch) = fields(d);
                InitData {
                    data,
                    row_pitch,
                    slice_pitch,
                }
            })
            .collect(),
    ))
}

/// Reads a `Create*` method's required description pointer (`E_INVALIDARG` when null).
///
/// # Safety
/// `desc` is null or readable.
pub(crate) unsafe fn read_desc<T, R>(
    desc: *const T,
    translate: impl FnOnce(&T) -> Result<R, HRESULT>,
) -> Result<R, HRESULT> {
    if desc.is_null() {
        // Create*: pDesc is required.
        return Err(E_INVALIDARG);
    }
    // SAFETY: non-null and readable (contract).
    translate(unsafe { &*desc })
}

/// What `(pSysMem, SysMemPitch, SysMemSlicePitch)` a `SUBRESOURCE_DATA` of either API holds.
pub(crate) type InitFields<T> = fn(&T) -> (*const u8, u32, u32);

/// The shared body of the `Create*` methods for resources, D3D11's and D3D10's: the description
/// (read and translated by the caller), initial data, and the new resource's face, which
/// `hand_out` makes of it, in `*out`.
///
/// # Safety
/// `init` is null or readable for one `T` per subresource, whose `(pSysMem, SysMemPitch,
/// SysMemSlicePitch)` `fields` reads; `out` is null or writable; `hand_out` is given a resource
/// just created, not handed out yet.
pub(crate) unsafe fn create_resource_into<I, T>(
    device: &Device,
    desc: Result<ResourceDesc, HRESULT>,
    (init, fields): (*const T, InitFields<T>),
    out: *mut *mut I,
    hand_out: impl FnOnce(*mut Resource) -> *mut I,
) -> HRESULT {
    // SAFETY: contract.
    unsafe { clear_out(out) };
    let desc = match desc {
        Ok(d) => d,
        Err(hr) => return hr,
    };
    // SAFETY: pInitialData points at one SUBRESOURCE_DATA per subresource (contract).
    let init = match unsafe { read_init_data(&desc, init, fields) } {
        Ok(init) => init,
        Err(hr) => return hr,
    };
    match device.create_resource(&desc, init.as_deref(), out.is_null()) {
        // Create*: "S_FALSE ... if the output pointer is NULL" once the arguments are valid.
        Ok(None) => S_FALSE,
        Ok(Some(res)) => {
            // SAFETY: `out` is non-null here (validate_only was false) and writable; the new
            // resource's public reference goes to the caller.
            unsafe { *out = hand_out(res) };
            S_OK
        }
        Err(hr) => hr,
    }
}

/// `D3D11_SUBRESOURCE_DATA`'s members, for [`create_resource_into`].
fn init_data(d: &D3D11_SUBRESOURCE_DATA) -> (*const u8, u32, u32) {
    (d.pSysMem.cast(), d.SysMemPitch, d.SysMemSlicePitch)
}

/// The D3D11 face of a new resource.
fn d3d11_resource<I>(res: *mut Resource) -> *mut I {
    face::<Resource, I>(res, super::resource::D3D11_FACE)
}

/// `CreateBuffer`, `CreateTexture1D/2D/3D`.
unsafe extern "system" fn create_resource<T: Describes, I>(
    this: *mut ID3D11Device,
    d: *const T,
    init: *const D3D11_SUBRESOURCE_DATA,
    out: *mut *mut I,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract for every pointer.
        unsafe {
            let desc = read_desc(d, T::resource_desc);
            let device = dev::<_, DO>(this);
            create_resource_into(device, desc, (init, init_data), out, d3d11_resource)
        }
    })
}

/// The shared body of `CreateQuery`, D3D11's and D3D10's: the description (read and checked by
/// the caller against its API's values), then the new query's face, which `hand_out` makes of
/// it, in `*out`.
///
/// # Safety
/// `out` is null or writable; `hand_out` is given a query just created, not handed out yet.
pub(crate) unsafe fn create_query_into<I>(
    device: &Device,
    desc: Result<D3D11_QUERY_DESC, HRESULT>,
    out: *mut *mut I,
    hand_out: impl FnOnce(*mut Query) -> *mut I,
) -> HRESULT {
    // SAFETY: contract.
    unsafe { clear_out(out) };
    let d = match desc.and_then(|d| Query::validate(d.Query, d.MiscFlags).map(|()| d)) {
        Ok(d) => d,
        Err(hr) => return hr,
    };
    if out.is_null() {
        // CreateQuery: "S_FALSE ... if ppQuery is NULL" once the description is valid.
        return S_FALSE;
    }
    let q = Query::create(device, d.Query, d.MiscFlags);
    // SAFETY: non-null and writable (contract); the public reference goes to the caller.
    unsafe { *out = hand_out(q) };
    S_OK
}

unsafe extern "system" fn create_query(
    this: *mut ID3D11Device,
    desc: *const D3D11_QUERY_DESC,
    out: *mut *mut ID3D11Query,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract for every pointer.
        unsafe {
            let desc = read_desc(desc, |d| Ok(*d));
            create_query_into(dev::<_, DO>(this), desc, out, |q| {
                face::<Query, ID3D11Query>(q, super::query::QUERY_FACE)
            })
        }
    })
}

/// `CheckFormatSupport` of face `OFF`, with the bits `support` gives the device for a format.
///
/// # Safety
/// `this` is face `OFF` of a live device; `out` is null or writable.
pub(crate) unsafe fn check_format_support_with<I, const OFF: usize>(
    this: *mut I,
    fmt: DXGI_FORMAT,
    out: *mut u32,
    support: impl FnOnce(&Device, u32) -> u32,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // CheckFormatSupport: pFormatSupport is required.
            return E_INVALIDARG;
        }
        // SAFETY: function contract.
        let bits = support(unsafe { dev::<I, OFF>(this) }, fmt as u32);
        // SAFETY: non-null and writable (contract).
        unsafe { *out = bits };
        // CheckFormatSupport: "E_FAIL if the format is not supported" by the device.
        if bits == 0 {
            E_FAIL
        } else {
            S_OK
        }
    })
}

unsafe extern "system" fn check_format_support(
    this: *mut ID3D11Device,
    fmt: DXGI_FORMAT,
    out: *mut u32,
) -> HRESULT {
    // SAFETY: COM contract.
    unsafe { check_format_support_with::<_, DO>(this, fmt, out, Device::format_support) }
}

/// `CheckMultisampleQualityLevels` on a device that can use the formats `allowed` lets through.
///
/// # Safety
/// `out` is null or writable.
pub(crate) unsafe fn check_multisample_quality_levels_with(
    fmt: DXGI_FORMAT,
    count: u32,
    out: *mut u32,
    allowed: fn(u32) -> bool,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // CheckMultisampleQualityLevels: pNumQualityLevels is required.
            return E_INVALIDARG;
        }
        // SAFETY: non-null and writable (contract).
        unsafe { *out = 0 };
        if count == 0 || count > 32 {
            // "E_FAIL if SampleCount is 0 or greater than D3D11_MAX_MULTISAMPLE_SAMPLE_COUNT (32)".
            return E_FAIL;
        }
        if !allowed(fmt as u32) {
            // A format the device lacks has no quality levels.
            return S_OK;
        }
        // SAFETY: as above. 0 levels: the combination is not supported.
        unsafe { *out = multisample_quality_levels(fmt as u32, count) };
        S_OK
    })
}

unsafe extern "system" fn check_multisample_quality_levels(
    _this: *mut ID3D11Device,
    fmt: DXGI_FORMAT,
    count: u32,
    out: *mut u32,
) -> HRESULT {
    // SAFETY: COM contract.
    unsafe { check_multisample_quality_levels_with(fmt, count, out, |_| true) }
}

unsafe extern "system" fn check_feature_support(
    this: *mut ID3D11Device,
    feature: D3D11_FEATURE,
    data: *mut c_void,
    size: u32,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract.
        let device = unsafe { dev::<_, DO>(this) };
        match feature {
            D3D11_FEATURE_THREADING => {
                if data.is_null() || size as usize != size_of::<D3D11_FEATURE_DATA_THREADING>() {
                    // CheckFeatureSupport: the data size must match the feature's structure.
                    return E_INVALIDARG;
                }
                // SAFETY: non-null, right size, writable (COM contract). Resources can be created
                // from any thread; there are no deferred contexts.
                unsafe {
                    *data.cast::<D3D11_FEATURE_DATA_THREADING>() = D3D11_FEATURE_DATA_THREADING {
                        DriverConcurrentCreates: 1,
                        DriverCommandLists: 0,
                    }
                };
                S_OK
            }
            D3D11_FEATURE_FORMAT_SUPPORT => {
                if data.is_null() || size as usize != size_of::<D3D11_FEATURE_DATA_FORMAT_SUPPORT>()
                {
                    // As above.
                    return E_INVALIDARG;
                }
                let d = data.cast::<D3D11_FEATURE_DATA_FORMAT_SUPPORT>();
                // SAFETY: non-null, right size, readable and writable (COM contract).
                unsafe {
                    let bits = device.format_support((*d).InFormat as u32);
                    (*d).OutFormatSupport = bits;
                    if bits == 0 {
                        // As CheckFormatSupport: "E_FAIL" for an unsupported format.
                        return E_FAIL;
                    }
                }
                S_OK
            }
            // Other features describe shader and pipeline capabilities this runtime lacks.
            _ => E_NOTIMPL,
        }
    })
}

/// `GetFeatureLevel` of the D3D11 and D3D10.1 faces (`D3D10_FEATURE_LEVEL1` has the
/// `D3D_FEATURE_LEVEL` values).
///
/// # Safety
/// `this` is face `OFF` of a live device.
pub(crate) unsafe extern "system" fn get_feature_level<I, const OFF: usize>(
    this: *mut I,
) -> D3D_FEATURE_LEVEL {
    // SAFETY: function contract.
    guard(0, || unsafe { dev::<I, OFF>(this) }.feature_level)
}

/// `GetCreationFlags` of the D3D11 and D3D10 faces.
///
/// # Safety
/// `this` is face `OFF` of a live device.
pub(crate) unsafe extern "system" fn get_creation_flags<I, const OFF: usize>(this: *mut I) -> u32 {
    // SAFETY: function contract.
    guard(0, || unsafe { dev::<I, OFF>(this) }.creation_flags)
}

/// `GetDeviceRemovedReason` of the D3D11 and D3D10 faces.
///
/// # Safety
/// `this` is face `OFF` of a live device.
pub(crate) unsafe extern "system" fn get_device_removed_reason<I, const OFF: usize>(
    this: *mut I,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: function contract.
        if unsafe { dev::<I, OFF>(this) }.backend.is_lost() {
            // GetDeviceRemovedReason: "DXGI_ERROR_DEVICE_REMOVED: the video card has been
            // physically removed from the system" (a lost Vulkan device).
            DXGI_ERROR_DEVICE_REMOVED
        } else {
            // The device was not removed.
            S_OK
        }
    })
}

unsafe extern "system" fn get_immediate_context(
    this: *mut ID3D11Device,
    out: *mut *mut ID3D11DeviceContext,
) {
    guard((), || {
        if out.is_null() {
            return;
        }
        // SAFETY: COM contract; `out` non-null and writable.
        unsafe { *out = dev::<_, DO>(this).immediate_context() };
    })
}

/// `SetExceptionMode` of the D3D11 and D3D10 faces (`D3D10_RAISE_FLAG_DRIVER_INTERNAL_ERROR` is
/// D3D11's value).
///
/// # Safety
/// `this` is face `OFF` of a live device.
pub(crate) unsafe extern "system" fn set_exception_mode<I, const OFF: usize>(
    this: *mut I,
    flags: u32,
) -> HRESULT {
    guard(E_FAIL, || {
        if flags & !(D3D11_RAISE_FLAG_DRIVER_INTERNAL_ERROR as u32) != 0 {
            // D3D11_RAISE_FLAG: only D3D11_RAISE_FLAG_DRIVER_INTERNAL_ERROR exists.
            return E_INVALIDARG;
        }
        // SAFETY: function contract.
        unsafe { dev::<I, OFF>(this) }
            .exception_mode
            .store(flags, Ordering::Relaxed);
        S_OK
    })
}

/// `GetExceptionMode` of the D3D11 and D3D10 faces.
///
/// # Safety
/// `this` is face `OFF` of a live device.
pub(crate) unsafe extern "system" fn get_exception_mode<I, const OFF: usize>(this: *mut I) -> u32 {
    guard(0, || {
        // SAFETY: function contract.
        unsafe { dev::<I, OFF>(this) }
            .exception_mode
            .load(Ordering::Relaxed)
    })
}

// ---------------------------------------------------------------------------------------------
// IDXGIDevice1

const XO: usize = DXGI_DEVICE_FACE;

static DXGI_DEVICE_VTBL: IDXGIDevice1Vtbl = IDXGIDevice1Vtbl {
    base: IDXGIDeviceVtbl {
        base: IDXGIObjectVtbl {
            base: unknown_vtbl::<D, XO>(),
            SetPrivateData: set_private_data::<D, IDXGIObject, XO>,
            SetPrivateDataInterface: set_private_data_interface::<D, IDXGIObject, XO>,
            GetPrivateData: get_private_data::<D, IDXGIObject, XO>,
            GetParent: dxgi_device_get_parent,
        },
        GetAdapter: dxgi_device_get_adapter,
        QueryResourceResidency: dxgi_device_query_resource_residency,
        SetGPUThreadPriority: dxgi_device_set_gpu_thread_priority,
        GetGPUThreadPriority: dxgi_device_get_gpu_thread_priority,
        ..IDXGIDeviceVtbl::NOT_IMPLEMENTED
    },
    SetMaximumFrameLatency: dxgi_device_set_maximum_frame_latency,
    GetMaximumFrameLatency: dxgi_device_get_maximum_frame_latency,
};

/// # Safety
/// `this` is the DXGI face of a live device.
unsafe fn dxgi_dev<'a, I>(this: *mut I) -> &'a Device {
    // SAFETY: function contract.
    unsafe { object::<Device, I>(this, XO) }
}

unsafe extern "system" fn dxgi_device_get_parent(
    this: *mut IDXGIObject,
    riid: *const GUID,
    out: *mut *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract. The parent of a DXGI device is its adapter.
        unsafe { query_interface(&*dxgi_dev(this).adapter, riid, out) }
    })
}

unsafe extern "system" fn dxgi_device_get_adapter(
    this: *mut IDXGIDevice,
    out: *mut *mut IDXGIAdapter,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // IDXGIDevice::GetAdapter: pAdapter is required.
            return E_INVALIDARG;
        }
        // SAFETY: COM contract; `out` non-null and writable.
        unsafe { hand_out(&*dxgi_dev(this).adapter, ADAPTER_FACE, out) };
        S_OK
    })
}

unsafe extern "system" fn dxgi_device_query_resource_residency(
    _this: *mut IDXGIDevice,
    resources: *const *mut IUnknown,
    residency: *mut DXGI_RESIDENCY,
    count: u32,
) -> HRESULT {
    guard(E_FAIL, || {
        if count == 0 {
            return S_OK;
        }
        if resources.is_null() || residency.is_null() {
            // QueryResourceResidency: both arrays are required.
            return E_INVALIDARG;
        }
        for i in 0..count as usize {
            // SAFETY: both arrays hold `count` entries (COM contract).
            let r = unsafe { *resources.add(i) };
            if Resource::from_any_face(r).is_none() {
                // Residency can only be told for this device's own resources.
                return E_INVALIDARG;
            }
            // SAFETY: as above. Host memory is always resident.
            unsafe { *residency.add(i) = DXGI_RESIDENCY_FULLY_RESIDENT };
        }
        S_OK
    })
}

unsafe extern "system" fn dxgi_device_set_gpu_thread_priority(
    this: *mut IDXGIDevice,
    priority: INT,
) -> HRESULT {
    guard(E_FAIL, || {
        if !(-7..=7).contains(&priority) {
            // SetGPUThreadPriority: "a value from -7 to 7 inclusive", else E_INVALIDARG.
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        unsafe { dxgi_dev(this) }
            .gpu_thread_priority
            .store(priority, Ordering::Relaxed);
        S_OK
    })
}

unsafe extern "system" fn dxgi_device_get_gpu_thread_priority(
    this: *mut IDXGIDevice,
    out: *mut INT,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // GetGPUThreadPriority: pPriority is required.
            return E_INVALIDARG;
        }
        // SAFETY: COM contract; `out` non-null and writable.
        unsafe { *out = dxgi_dev(this).gpu_thread_priority.load(Ordering::Relaxed) };
        S_OK
    })
}

unsafe extern "system" fn dxgi_device_set_maximum_frame_latency(
    this: *mut IDXGIDevice1,
    latency: u32,
) -> HRESULT {
    guard(E_FAIL, || {
        if latency > 16 {
            // SetMaximumFrameLatency: at most DXGI_MAX_FRAME_LATENCY (16); 0 restores the default 3.
            return DXGI_ERROR_INVALID_CALL;
        }
        let v = if latency == 0 { 3 } else { latency };
        // SAFETY: COM contract.
        unsafe { dxgi_dev(this) }
            .max_frame_latency
            .store(v, Ordering::Relaxed);
        S_OK
    })
}

unsafe extern "system" fn dxgi_device_get_maximum_frame_latency(
    this: *mut IDXGIDevice1,
    out: *mut u32,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // GetMaximumFrameLatency: "DXGI_ERROR_INVALID_CALL if pMaxLatency is NULL".
            return DXGI_ERROR_INVALID_CALL;
        }
        // SAFETY: COM contract; `out` non-null and writable.
        unsafe { *out = dxgi_dev(this).max_frame_latency.load(Ordering::Relaxed) };
        S_OK
    })
}

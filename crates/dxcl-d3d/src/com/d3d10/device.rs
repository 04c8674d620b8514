//! `ID3D10Device1`: the D3D10 face of a device. Resource creation, copies, updates, queries and
//! format checks are real; in Direct3D 10 the device itself is the immediate context. Pipeline
//! setters and creators of views, shaders and states stay `NOT_IMPLEMENTED` (`E_NOTIMPL` or
//! nothing); the pipeline getters report the empty state that the ignored setters leave.

use std::ptr;
use std::sync::atomic::Ordering;

use super::super::abi::*;
use super::super::clear_out;
use super::super::device::{read_init_data, Device, DeviceChild, D3D10_DEVICE_FACE};
use super::super::guard::guard;
use super::super::object::*;
use super::super::query::Query;
use super::super::resource::{copy_resource, copy_subresource_region, Resource, D3D10_FACE};
use super::{desc, query, resource};
use crate::core::flags::BIND_CONSTANT_BUFFER;
use crate::core::format::multisample_quality_levels;
use crate::core::{ResourceDesc, TexelBox};

type D = Device;
const DO: usize = D3D10_DEVICE_FACE;

/// The `ID3D10Device1` vtable of D3D10 devices.
pub static D3D10_DEVICE_VTBL: ID3D10Device1Vtbl = ID3D10Device1Vtbl {
    base: ID3D10DeviceVtbl {
        base: unknown_vtbl::<D, DO>(),
        VSGetConstantBuffers: get_buffers,
        PSGetShaderResources: get_null_array,
        PSGetShader: get_null,
        PSGetSamplers: get_null_array,
        VSGetShader: get_null,
        PSGetConstantBuffers: get_buffers,
        IAGetInputLayout: get_null,
        IAGetVertexBuffers: ia_get_vertex_buffers,
        IAGetIndexBuffer: ia_get_index_buffer,
        GSGetConstantBuffers: get_buffers,
        GSGetShader: get_null,
        IAGetPrimitiveTopology: ia_get_primitive_topology,
        VSGetShaderResources: get_null_array,
        VSGetSamplers: get_null_array,
        GetPredication: get_predication,
        GSGetShaderResources: get_null_array,
        GSGetSamplers: get_null_array,
        OMGetRenderTargets: om_get_render_targets,
        OMGetBlendState: om_get_blend_state,
        OMGetDepthStencilState: om_get_depth_stencil_state,
        SOGetTargets: so_get_targets,
        RSGetState: get_null,
        RSGetViewports: rs_get_rects::<D3D10_VIEWPORT>,
        RSGetScissorRects: rs_get_rects::<D3D10_RECT>,
        CopySubresourceRegion: copy_subresource_region_m,
        CopyResource: copy_resource_m,
        UpdateSubresource: update_subresource,
        GetDeviceRemovedReason: get_device_removed_reason,
        SetExceptionMode: set_exception_mode,
        GetExceptionMode: get_exception_mode,
        GetPrivateData: get_private_data::<D, ID3D10Device, DO>,
        SetPrivateData: set_private_data::<D, ID3D10Device, DO>,
        SetPrivateDataInterface: set_private_data_interface::<D, ID3D10Device, DO>,
        ClearState: clear_state,
        Flush: flush,
        CreateBuffer: create_buffer,
        CreateTexture1D: create_texture1d,
        CreateTexture2D: create_texture2d,
        CreateTexture3D: create_texture3d,
        CreateQuery: create_query,
        CheckFormatSupport: check_format_support,
        CheckMultisampleQualityLevels: check_multisample_quality_levels,
        CheckCounterInfo: check_counter_info,
        GetCreationFlags: get_creation_flags,
        GetTextFilterSize: get_text_filter_size,
        ..ID3D10DeviceVtbl::NOT_IMPLEMENTED
    },
    GetFeatureLevel: get_feature_level,
    ..ID3D10Device1Vtbl::NOT_IMPLEMENTED
};

/// Makes a device just created by `Device::create` a D3D10 device.
///
/// # Safety
/// `device` was just created and no pointer to it has been handed out yet.
pub unsafe fn make_d3d10(device: *mut Device) {
    // SAFETY: nobody else uses the device yet (contract): this write is the last step of its
    // construction, as `Device::create` sets its context.
    unsafe { (*device).d3d10 = ptr::from_ref(&D3D10_DEVICE_VTBL).cast() };
}

/// # Safety
/// `this` is the D3D10 face of a live device.
unsafe fn dev<'a, I>(this: *mut I) -> &'a Device {
    // SAFETY: function contract.
    unsafe { object::<Device, I>(this, DO) }
}

/// One of this device's resources behind an application pointer; `None` for foreign pointers and
/// for resources of other devices (D3D11 devices included).
fn own_resource<I>(device: &Device, p: *const I) -> Option<PrivateRef<Resource>> {
    Resource::from_any_face(p).filter(|r| ptr::eq(r.device(), device))
}

fn texel_box(b: &D3D10_BOX) -> TexelBox {
    TexelBox {
        left: b.left,
        top: b.top,
        front: b.front,
        right: b.right,
        bottom: b.bottom,
        back: b.back,
    }
}

// ---------------------------------------------------------------------------------------------
// Resource creation

/// The shared body of the `Create*` methods: D3D10's own rules, the shared validation, initial
/// data, and the new resource's D3D10 face in `*out`.
///
/// # Safety
/// `init` is null or readable for one `D3D10_SUBRESOURCE_DATA` per subresource; `out` is null or
/// writable.
unsafe fn create_resource_into<I>(
    device: &Device,
    desc: Result<ResourceDesc, HRESULT>,
    init: *const D3D10_SUBRESOURCE_DATA,
    out: *mut *mut I,
) -> HRESULT {
    // SAFETY: contract.
    unsafe { clear_out(out) };
    let desc = match desc.and_then(|d| desc::check(&d, device.feature_level).map(|()| d)) {
        Ok(d) => d,
        Err(hr) => return hr,
    };
    // SAFETY: pInitialData points at one D3D10_SUBRESOURCE_DATA per subresource (contract).
    let init = match unsafe {
        read_init_data(&desc, init, |d| {
            (d.pSysMem.cast(), d.SysMemPitch, d.SysMemSlicePitch)
        })
    } {
        Ok(init) => init,
        Err(hr) => return hr,
    };
    match device.create_resource(&desc, init.as_deref(), out.is_null()) {
        // Create*: S_FALSE when the output pointer is NULL and the arguments are valid.
        Ok(None) => S_FALSE,
        Ok(Some(res)) => {
            // SAFETY: just created and not handed out yet.
            unsafe { resource::make_d3d10(res) };
            // SAFETY: `out` is non-null here (validation only otherwise) and writable; the new
            // resource's public reference goes to the caller.
            unsafe { *out = face::<Resource, I>(res, D3D10_FACE) };
            S_OK
        }
        Err(hr) => hr,
    }
}

/// Reads a description pointer for a `Create*` method.
///
/// # Safety
/// `desc` is null or readable.
unsafe fn read_desc<T, F>(desc: *const T, translate: F) -> Result<ResourceDesc, HRESULT>
where
    F: FnOnce(&T) -> Result<ResourceDesc, HRESULT>,
{
    if desc.is_null() {
        // Create*: pDesc is required.
        return Err(E_INVALIDARG);
    }
    // SAFETY: non-null and readable (contract).
    translate(unsafe { &*desc })
}

unsafe extern "system" fn create_buffer(
    this: *mut ID3D10Device,
    desc: *const D3D10_BUFFER_DESC,
    init: *const D3D10_SUBRESOURCE_DATA,
    out: *mut *mut ID3D10Buffer,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract for every pointer.
        unsafe { create_resource_into(dev(this), read_desc(desc, desc::buffer), init, out) }
    })
}

unsafe extern "system" fn create_texture1d(
    this: *mut ID3D10Device,
    desc: *const D3D10_TEXTURE1D_DESC,
    init: *const D3D10_SUBRESOURCE_DATA,
    out: *mut *mut ID3D10Texture1D,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract for every pointer.
        unsafe { create_resource_into(dev(this), read_desc(desc, desc::texture1d), init, out) }
    })
}

unsafe extern "system" fn create_texture2d(
    this: *mut ID3D10Device,
    desc: *const D3D10_TEXTURE2D_DESC,
    init: *const D3D10_SUBRESOURCE_DATA,
    out: *mut *mut ID3D10Texture2D,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract for every pointer.
        unsafe { create_resource_into(dev(this), read_desc(desc, desc::texture2d), init, out) }
    })
}

unsafe extern "system" fn create_texture3d(
    this: *mut ID3D10Device,
    desc: *const D3D10_TEXTURE3D_DESC,
    init: *const D3D10_SUBRESOURCE_DATA,
    out: *mut *mut ID3D10Texture3D,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract for every pointer.
        unsafe { create_resource_into(dev(this), read_desc(desc, desc::texture3d), init, out) }
    })
}

unsafe extern "system" fn create_query(
    this: *mut ID3D10Device,
    desc: *const D3D10_QUERY_DESC,
    out: *mut *mut ID3D10Query,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract.
        unsafe { clear_out(out) };
        if desc.is_null() {
            // CreateQuery: pQueryDesc is required.
            return E_INVALIDARG;
        }
        // SAFETY: non-null (COM contract).
        let d = unsafe { *desc };
        if !(D3D10_QUERY_EVENT..=D3D10_QUERY_SO_OVERFLOW_PREDICATE).contains(&d.Query) {
            // D3D10_QUERY: only the defined values (D3D11's per-stream queries do not exist).
            return E_INVALIDARG;
        }
        // The D3D10_QUERY values are the first eight D3D11_QUERY values, with the same meaning.
        if let Err(hr) = Query::validate(d.Query, d.MiscFlags) {
            return hr;
        }
        if out.is_null() {
            // CreateQuery: S_FALSE when ppQuery is NULL and the description is valid.
            return S_FALSE;
        }
        // SAFETY: COM contract.
        let q = Query::create(unsafe { dev(this) }, d.Query, d.MiscFlags);
        // SAFETY: just created and not handed out yet.
        unsafe { query::make_d3d10(q) };
        // SAFETY: non-null and writable; the public reference goes to the caller.
        unsafe { *out = face::<Query, ID3D10Query>(q, super::super::query::D3D10_QUERY_FACE) };
        S_OK
    })
}

// ---------------------------------------------------------------------------------------------
// Resource operations (the device is the immediate context in Direct3D 10)

#[allow(clippy::too_many_arguments)] // The Direct3D method's parameters.
unsafe extern "system" fn copy_subresource_region_m(
    this: *mut ID3D10Device,
    dst: *mut ID3D10Resource,
    dst_sub: u32,
    x: u32,
    y: u32,
    z: u32,
    src: *mut ID3D10Resource,
    src_sub: u32,
    src_box: *const D3D10_BOX,
) {
    guard((), || {
        // SAFETY: COM contract.
        let device = unsafe { dev(this) };
        // A resource that is not this device's (a D3D11 resource included) is not a valid
        // argument; the method returns nothing, so the call is ignored.
        let (Some(d), Some(s)) = (own_resource(device, dst), own_resource(device, src)) else {
            return;
        };
        // SAFETY: pSrcBox is null or readable (COM contract).
        let b = unsafe { src_box.as_ref() }.map(texel_box);
        copy_subresource_region(&d, dst_sub, x, y, z, &s, src_sub, b.as_ref());
    })
}

unsafe extern "system" fn copy_resource_m(
    this: *mut ID3D10Device,
    dst: *mut ID3D10Resource,
    src: *mut ID3D10Resource,
) {
    guard((), || {
        // SAFETY: COM contract.
        let device = unsafe { dev(this) };
        // As CopySubresourceRegion: other devices' resources are ignored.
        if let (Some(d), Some(s)) = (own_resource(device, dst), own_resource(device, src)) {
            copy_resource(&d, &s);
        }
    })
}

unsafe extern "system" fn update_subresource(
    this: *mut ID3D10Device,
    dst: *mut ID3D10Resource,
    sub: u32,
    dst_box: *const D3D10_BOX,
    data: *const c_void,
    row_pitch: u32,
    depth_pitch: u32,
) {
    guard((), || {
        // SAFETY: COM contract.
        let device = unsafe { dev(this) };
        // As CopySubresourceRegion: other devices' resources are ignored.
        let Some(r) = own_resource(device, dst) else {
            return;
        };
        if !dst_box.is_null() && r.desc.bind & BIND_CONSTANT_BUFFER != 0 {
            // UpdateSubresource: for a shader-constant buffer "set pDstBox to NULL. No other
            // values are valid" (Direct3D 10 updates constant buffers whole).
            return;
        }
        // SAFETY: pDstBox is null or readable (COM contract).
        let b = unsafe { dst_box.as_ref() }.map(texel_box);
        // SAFETY: pSrcData is readable for the region with these pitches (COM contract).
        unsafe { r.update(sub, b.as_ref(), data.cast(), row_pitch, depth_pitch) };
    })
}

unsafe extern "system" fn clear_state(_this: *mut ID3D10Device) {
    // No pipeline state is kept, so the default state is already in place.
}

unsafe extern "system" fn flush(this: *mut ID3D10Device) {
    // SAFETY: COM contract.
    guard((), || unsafe { dev(this) }.backend.flush())
}

// ---------------------------------------------------------------------------------------------
// Device state and capabilities

unsafe extern "system" fn get_device_removed_reason(this: *mut ID3D10Device) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract.
        if unsafe { dev(this) }.backend.is_lost() {
            // GetDeviceRemovedReason: "DXGI_ERROR_DEVICE_REMOVED: the video card has been
            // physically removed from the system" (a lost Vulkan device).
            DXGI_ERROR_DEVICE_REMOVED
        } else {
            // The device was not removed.
            S_OK
        }
    })
}

unsafe extern "system" fn set_exception_mode(this: *mut ID3D10Device, flags: u32) -> HRESULT {
    guard(E_FAIL, || {
        if flags & !(D3D10_RAISE_FLAG_DRIVER_INTERNAL_ERROR as u32) != 0 {
            // D3D10_RAISE_FLAG: only D3D10_RAISE_FLAG_DRIVER_INTERNAL_ERROR exists.
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        unsafe { dev(this) }
            .exception_mode
            .store(flags, Ordering::Relaxed);
        S_OK
    })
}

unsafe extern "system" fn get_exception_mode(this: *mut ID3D10Device) -> u32 {
    guard(0, || {
        // SAFETY: COM contract: `this` is this face of a live object.
        unsafe { dev(this) }.exception_mode.load(Ordering::Relaxed)
    })
}

unsafe extern "system" fn get_creation_flags(this: *mut ID3D10Device) -> u32 {
    // SAFETY: COM contract.
    guard(0, || unsafe { dev(this) }.creation_flags)
}

unsafe extern "system" fn get_feature_level(this: *mut ID3D10Device1) -> D3D10_FEATURE_LEVEL1 {
    // SAFETY: COM contract. D3D10_FEATURE_LEVEL1 values equal the D3D_FEATURE_LEVEL ones.
    guard(0, || unsafe { dev(this) }.feature_level)
}

unsafe extern "system" fn check_format_support(
    this: *mut ID3D10Device,
    fmt: DXGI_FORMAT,
    out: *mut u32,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // CheckFormatSupport: pFormatSupport is required.
            return E_INVALIDARG;
        }
        let bits = if desc::format_allowed(fmt as u32) {
            // SAFETY: COM contract.
            unsafe { dev(this) }.format_support(fmt as u32) & desc::D3D10_FORMAT_SUPPORT_ALL
        } else {
            0
        };
        // SAFETY: non-null and writable (COM contract).
        unsafe { *out = bits };
        // CheckFormatSupport: "E_FAIL if the format is not supported" by the device.
        if bits == 0 {
            E_FAIL
        } else {
            S_OK
        }
    })
}

unsafe extern "system" fn check_counter_info(
    _this: *mut ID3D10Device,
    out: *mut D3D10_COUNTER_INFO,
) {
    if !out.is_null() {
        // SAFETY: non-null and writable (COM contract). No device-dependent counters and none
        // that can run at once: CreateCounter is not implemented.
        unsafe { *out = D3D10_COUNTER_INFO::default() };
    }
}

unsafe extern "system" fn check_multisample_quality_levels(
    _this: *mut ID3D10Device,
    fmt: DXGI_FORMAT,
    count: u32,
    out: *mut u32,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // CheckMultisampleQualityLevels: pNumQualityLevels is required.
            return E_INVALIDARG;
        }
        // SAFETY: non-null and writable (COM contract).
        unsafe { *out = 0 };
        if count == 0 || count > 32 {
            // "E_FAIL if SampleCount is 0 or greater than D3D10_MAX_MULTISAMPLE_SAMPLE_COUNT (32)".
            return E_FAIL;
        }
        if !desc::format_allowed(fmt as u32) {
            // A format the device lacks has no quality levels.
            return S_OK;
        }
        // SAFETY: as above. 0 levels: the combination is not supported.
        unsafe { *out = multisample_quality_levels(fmt as u32, count) };
        S_OK
    })
}

// ---------------------------------------------------------------------------------------------
// Pipeline getters: the setters are not implemented, so every slot is empty.

/// Writes `count` nulls to an optional output array.
///
/// # Safety
/// `out` is null or writable for `count` pointers.
unsafe fn nulls<T>(out: *mut *mut T, count: u32) {
    if !out.is_null() {
        for i in 0..count as usize {
            // SAFETY: writable for `count` entries (contract).
            unsafe { *out.add(i) = ptr::null_mut() };
        }
    }
}

/// `*Get{ShaderResources,Samplers}`: no view or sampler is bound.
unsafe extern "system" fn get_null_array<T>(
    _this: *mut ID3D10Device,
    _start: u32,
    count: u32,
    out: *mut *mut T,
) {
    // SAFETY: the output array holds `count` entries (COM contract).
    guard((), || unsafe { nulls(out, count) })
}

/// `*GetConstantBuffers`: no buffer is bound.
unsafe extern "system" fn get_buffers(
    this: *mut ID3D10Device,
    start: u32,
    count: u32,
    out: *mut *mut ID3D10Buffer,
) {
    // SAFETY: COM contract.
    unsafe { get_null_array(this, start, count, out) }
}

/// `*GetShader`, `IAGetInputLayout`, `RSGetState`: nothing is bound.
unsafe extern "system" fn get_null<T>(_this: *mut ID3D10Device, out: *mut *mut T) {
    // SAFETY: the output is null or writable (COM contract).
    guard((), || unsafe { nulls(out, 1) })
}

unsafe extern "system" fn ia_get_vertex_buffers(
    _this: *mut ID3D10Device,
    _start: u32,
    count: u32,
    buffers: *mut *mut ID3D10Buffer,
    strides: *mut u32,
    offsets: *mut u32,
) {
    guard((), || {
        // SAFETY: each output is null or holds `count` entries (COM contract).
        unsafe {
            nulls(buffers, count);
            for out in [strides, offsets] {
                if !out.is_null() {
                    ptr::write_bytes(out, 0, count as usize);
                }
            }
        }
    })
}

unsafe extern "system" fn ia_get_index_buffer(
    _this: *mut ID3D10Device,
    buffer: *mut *mut ID3D10Buffer,
    format: *mut DXGI_FORMAT,
    offset: *mut u32,
) {
    guard((), || {
        // SAFETY: each output is null or writable (COM contract).
        unsafe {
            nulls(buffer, 1);
            if !format.is_null() {
                *format = DXGI_FORMAT_UNKNOWN;
            }
            if !offset.is_null() {
                *offset = 0;
            }
        }
    })
}

unsafe extern "system" fn ia_get_primitive_topology(
    _this: *mut ID3D10Device,
    out: *mut D3D10_PRIMITIVE_TOPOLOGY,
) {
    if !out.is_null() {
        // SAFETY: non-null and writable (COM contract); the default topology is UNDEFINED (0).
        unsafe { *out = 0 };
    }
}

unsafe extern "system" fn get_predication(
    _this: *mut ID3D10Device,
    predicate: *mut *mut ID3D10Predicate,
    value: *mut BOOL,
) {
    guard((), || {
        // SAFETY: each output is null or writable (COM contract).
        unsafe {
            nulls(predicate, 1);
            if !value.is_null() {
                *value = 0;
            }
        }
    })
}

unsafe extern "system" fn om_get_render_targets(
    _this: *mut ID3D10Device,
    count: u32,
    rtvs: *mut *mut ID3D10RenderTargetView,
    dsv: *mut *mut ID3D10DepthStencilView,
) {
    guard((), || {
        // SAFETY: each output is null or writable for its count (COM contract).
        unsafe {
            nulls(rtvs, count);
            nulls(dsv, 1);
        }
    })
}

unsafe extern "system" fn so_get_targets(
    _this: *mut ID3D10Device,
    count: u32,
    buffers: *mut *mut ID3D10Buffer,
    offsets: *mut u32,
) {
    guard((), || {
        // SAFETY: each output is null or holds `count` entries (COM contract).
        unsafe {
            nulls(buffers, count);
            if !offsets.is_null() {
                ptr::write_bytes(offsets, 0, count as usize);
            }
        }
    })
}

unsafe extern "system" fn om_get_blend_state(
    _this: *mut ID3D10Device,
    state: *mut *mut ID3D10BlendState,
    factor: *mut FLOAT,
    mask: *mut u32,
) {
    guard((), || {
        // SAFETY: each output is null or writable (BlendFactor for 4 floats) (COM contract). The
        // default blend factor is (1, 1, 1, 1) and the default sample mask 0xffffffff.
        unsafe {
            nulls(state, 1);
            if !factor.is_null() {
                for i in 0..4 {
                    *factor.add(i) = 1.0;
                }
            }
            if !mask.is_null() {
                *mask = u32::MAX;
            }
        }
    })
}

unsafe extern "system" fn om_get_depth_stencil_state(
    _this: *mut ID3D10Device,
    state: *mut *mut ID3D10DepthStencilState,
    stencil_ref: *mut u32,
) {
    guard((), || {
        // SAFETY: each output is null or writable (COM contract).
        unsafe {
            nulls(state, 1);
            if !stencil_ref.is_null() {
                *stencil_ref = 0;
            }
        }
    })
}

/// `RSGetViewports` / `RSGetScissorRects`: none is bound. Without an array the count of bound
/// entries (0) is returned; an array is zeroed up to its stated size.
unsafe extern "system" fn rs_get_rects<T>(_this: *mut ID3D10Device, count: *mut u32, out: *mut T) {
    guard((), || {
        if count.is_null() {
            return;
        }
        // SAFETY: `count` is non-null and read-write; `out` is null or writable for `*count`
        // entries (COM contract); the element types are plain numbers, for which zero is valid.
        unsafe {
            if out.is_null() {
                *count = 0;
            } else {
                ptr::write_bytes(out, 0, *count as usize);
            }
        }
    })
}

unsafe extern "system" fn get_text_filter_size(
    _this: *mut ID3D10Device,
    width: *mut u32,
    height: *mut u32,
) {
    guard((), || {
        // SAFETY: each output is null or writable (COM contract). No text filter size was set:
        // the default is 0 x 0.
        unsafe {
            for out in [width, height] {
                if !out.is_null() {
                    *out = 0;
                }
            }
        }
    })
}

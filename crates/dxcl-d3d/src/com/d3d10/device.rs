//! `ID3D10Device1`: the D3D10 face of a device. Resource creation, copies, updates, queries and
//! format checks are real, and forward to the D3D11 device's and immediate context's bodies with
//! D3D10's descriptions and rules; in Direct3D 10 the device itself is the immediate context.
//! Pipeline setters and creators of views, shaders and states stay `NOT_IMPLEMENTED` (`E_NOTIMPL`
//! or nothing); the pipeline getters report the empty state that the ignored setters leave.

use std::ptr;

use super::super::abi::*;
use super::super::desc::Describes;
use super::super::device::{
    check_format_support_with, check_multisample_quality_levels_with, create_query_into,
    create_resource_into, get_creation_flags, get_device_removed_reason, get_exception_mode,
    get_feature_level, read_desc, set_exception_mode, Device, D3D10_DEVICE_FACE,
};
use super::super::guard::guard;
use super::super::object::*;
use super::super::query::{Query, D3D10_QUERY_FACE};
use super::super::resource::{
    copy_resource_of, copy_subresource_region_of, update_subresource_of, Resource, D3D10_FACE,
};
use super::{desc, query, resource};

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
        GetDeviceRemovedReason: get_device_removed_reason::<ID3D10Device, DO>,
        SetExceptionMode: set_exception_mode::<ID3D10Device, DO>,
        GetExceptionMode: get_exception_mode::<ID3D10Device, DO>,
        GetPrivateData: get_private_data::<D, ID3D10Device, DO>,
        SetPrivateData: set_private_data::<D, ID3D10Device, DO>,
        SetPrivateDataInterface: set_private_data_interface::<D, ID3D10Device, DO>,
        ClearState: clear_state,
        Flush: flush,
        CreateBuffer: create_resource::<D3D10_BUFFER_DESC, ID3D10Buffer>,
        CreateTexture1D: create_resource::<D3D10_TEXTURE1D_DESC, ID3D10Texture1D>,
        CreateTexture2D: create_resource::<D3D10_TEXTURE2D_DESC, ID3D10Texture2D>,
        CreateTexture3D: create_resource::<D3D10_TEXTURE3D_DESC, ID3D10Texture3D>,
        CreateQuery: create_query,
        CheckFormatSupport: check_format_support,
        CheckMultisampleQualityLevels: check_multisample_quality_levels,
        CheckCounterInfo: check_counter_info,
        GetCreationFlags: get_creation_flags::<ID3D10Device, DO>,
        GetTextFilterSize: get_text_filter_size,
        ..ID3D10DeviceVtbl::NOT_IMPLEMENTED
    },
    GetFeatureLevel: get_feature_level::<ID3D10Device1, DO>,
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

// ---------------------------------------------------------------------------------------------
// Resource creation: D3D11's, with D3D10's descriptions and rules

/// `D3D10_SUBRESOURCE_DATA`'s members.
fn init_data(d: &D3D10_SUBRESOURCE_DATA) -> (*const u8, u32, u32) {
    (d.pSysMem.cast(), d.SysMemPitch, d.SysMemSlicePitch)
}

/// `CreateBuffer`, `CreateTexture1D/2D/3D`: D3D11's body with D3D10's own rules on the
/// description and the new resource's D3D10 face.
unsafe extern "system" fn create_resource<T: Describes, I>(
    this: *mut ID3D10Device,
    d: *const T,
    init: *const D3D10_SUBRESOURCE_DATA,
    out: *mut *mut I,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract.
        let device = unsafe { dev(this) };
        // SAFETY: COM contract.
        let desc = unsafe { read_desc(d, T::resource_desc) };
        let desc = desc.and_then(|d| desc::check(&d, device.feature_level).map(|()| d));
        // SAFETY: COM contract for `init` and `out`; `hand_out` gets the resource just created.
        unsafe {
            create_resource_into(device, desc, (init, init_data), out, |res| {
                // SAFETY: just created and not handed out yet.
                resource::make_d3d10(res);
                face::<Resource, I>(res, D3D10_FACE)
            })
        }
    })
}

/// A `D3D10_QUERY_DESC` as the `D3D11_QUERY_DESC` it stands for: the `D3D10_QUERY` values are
/// the first eight `D3D11_QUERY` values, with the same meaning.
fn query_desc(d: &D3D10_QUERY_DESC) -> Result<D3D11_QUERY_DESC, HRESULT> {
    if !(D3D10_QUERY_EVENT..=D3D10_QUERY_SO_OVERFLOW_PREDICATE).contains(&d.Query) {
        // D3D10_QUERY: only the defined values (D3D11's per-stream queries do not exist).
        return Err(E_INVALIDARG);
    }
    Ok(same_members!(d => D3D11_QUERY_DESC { Query, MiscFlags }))
}

unsafe extern "system" fn create_query(
    this: *mut ID3D10Device,
    desc: *const D3D10_QUERY_DESC,
    out: *mut *mut ID3D10Query,
) -> HRESULT {
    guard(E_FAIL, || {
        // SAFETY: COM contract for every pointer; `hand_out` gets the query just created.
        unsafe {
            create_query_into(dev(this), read_desc(desc, query_desc), out, |q| {
                // SAFETY: just created and not handed out yet.
                query::make_d3d10(q);
                face::<Query, ID3D10Query>(q, D3D10_QUERY_FACE)
            })
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Resource operations: the immediate context's (the device is the immediate context in
// Direct3D 10)

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
        // SAFETY: pSrcBox is null or readable (COM contract).
        let b = unsafe { src_box.as_ref() }.map(desc::texel_box);
        // SAFETY: COM contract.
        let device = unsafe { dev(this) };
        copy_subresource_region_of(device, dst, dst_sub, (x, y, z), src, src_sub, b.as_ref());
    })
}

unsafe extern "system" fn copy_resource_m(
    this: *mut ID3D10Device,
    dst: *mut ID3D10Resource,
    src: *mut ID3D10Resource,
) {
    // SAFETY: COM contract.
    guard((), || copy_resource_of(unsafe { dev(this) }, dst, src))
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
        // SAFETY: pDstBox is null or readable (COM contract).
        let b = unsafe { dst_box.as_ref() }.map(desc::texel_box);
        let pitches = (row_pitch, depth_pitch);
        // SAFETY: COM contract; pSrcData is readable for the region with these pitches. Direct3D
        // 10 updates constant buffers whole.
        unsafe { update_subresource_of(dev(this), dst, sub, b.as_ref(), data, pitches, true) };
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
// Capabilities: D3D11's, less the formats and bits Direct3D 10 does not have

/// What a D3D10 device supports of a format.
fn format_support(device: &Device, format: u32) -> u32 {
    if desc::format_allowed(format) {
        device.format_support(format) & desc::D3D10_FORMAT_SUPPORT_ALL
    } else {
        0
    }
}

unsafe extern "system" fn check_format_support(
    this: *mut ID3D10Device,
    fmt: DXGI_FORMAT,
    out: *mut u32,
) -> HRESULT {
    // SAFETY: COM contract.
    unsafe { check_format_support_with::<_, DO>(this, fmt, out, format_support) }
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
    // SAFETY: COM contract.
    unsafe { check_multisample_quality_levels_with(fmt, count, out, desc::format_allowed) }
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

//! `ID3D10Buffer` and `ID3D10Texture1D/2D/3D`: the D3D10 face of a resource (one vtable per
//! dimension). `Map`/`Unmap` live on the resource in Direct3D 10 and follow the shared (D3D11)
//! rules, plus D3D10's limit of `WRITE_NO_OVERWRITE` to vertex and index buffers.

use std::ptr;
use std::sync::atomic::Ordering;

use super::super::abi::*;
use super::super::guard::guard;
use super::super::object::*;
use super::super::resource::{resource_dimension, Mapped, Resource, D3D10_FACE};
use super::child_get_device10;
use super::desc::misc_to_d3d10;
use crate::core::flags::{BIND_CONSTANT_BUFFER, BIND_INDEX_BUFFER, BIND_VERTEX_BUFFER};
use crate::core::Dimension;

type R = Resource;
const RO: usize = D3D10_FACE;

const fn resource_base() -> ID3D10ResourceVtbl {
    ID3D10ResourceVtbl {
        base: ID3D10DeviceChildVtbl {
            base: unknown_vtbl::<R, RO>(),
            GetDevice: child_get_device10::<R, ID3D10DeviceChild, RO>,
            GetPrivateData: get_private_data::<R, ID3D10DeviceChild, RO>,
            SetPrivateData: set_private_data::<R, ID3D10DeviceChild, RO>,
            SetPrivateDataInterface: set_private_data_interface::<R, ID3D10DeviceChild, RO>,
        },
        GetType: get_type,
        SetEvictionPriority: set_eviction_priority,
        GetEvictionPriority: get_eviction_priority,
    }
}

static BUFFER_VTBL: ID3D10BufferVtbl = ID3D10BufferVtbl {
    base: resource_base(),
    Map: buffer_map,
    Unmap: buffer_unmap,
    GetDesc: buffer_get_desc,
};
static TEXTURE1D_VTBL: ID3D10Texture1DVtbl = ID3D10Texture1DVtbl {
    base: resource_base(),
    Map: texture1d_map,
    Unmap: texture_unmap::<ID3D10Texture1D>,
    GetDesc: texture1d_get_desc,
};
static TEXTURE2D_VTBL: ID3D10Texture2DVtbl = ID3D10Texture2DVtbl {
    base: resource_base(),
    Map: texture2d_map,
    Unmap: texture_unmap::<ID3D10Texture2D>,
    GetDesc: texture2d_get_desc,
};
static TEXTURE3D_VTBL: ID3D10Texture3DVtbl = ID3D10Texture3DVtbl {
    base: resource_base(),
    Map: texture3d_map,
    Unmap: texture_unmap::<ID3D10Texture3D>,
    GetDesc: texture3d_get_desc,
};

/// Makes a resource just created by a D3D10 device a D3D10 resource (its face by dimension).
///
/// # Safety
/// `res` was just created and no pointer to it has been handed out yet.
pub unsafe fn make_d3d10(res: *mut Resource) {
    // SAFETY: `res` is live (contract).
    let vtbl: *const c_void = match unsafe { (*res).desc.dimension } {
        Dimension::Buffer => ptr::from_ref(&BUFFER_VTBL).cast(),
        Dimension::Texture1D => ptr::from_ref(&TEXTURE1D_VTBL).cast(),
        Dimension::Texture2D => ptr::from_ref(&TEXTURE2D_VTBL).cast(),
        Dimension::Texture3D => ptr::from_ref(&TEXTURE3D_VTBL).cast(),
    };
    // SAFETY: nobody else uses the resource yet (contract): the last step of its construction.
    unsafe { (*res).d3d10 = vtbl };
}

/// # Safety
/// `this` is the D3D10 face of a live resource.
unsafe fn res<'a, I>(this: *mut I) -> &'a Resource {
    // SAFETY: function contract.
    unsafe { object::<Resource, I>(this, RO) }
}

/// `Map` with the shared rules plus D3D10's own.
fn map(r: &Resource, sub: u32, map_type: D3D10_MAP, flags: u32) -> Result<Mapped, HRESULT> {
    let d = &r.desc;
    if map_type == D3D10_MAP_WRITE_NO_OVERWRITE
        && d.dimension == Dimension::Buffer
        && (d.bind & (BIND_VERTEX_BUFFER | BIND_INDEX_BUFFER) == 0
            || d.bind & BIND_CONSTANT_BUFFER != 0)
    {
        // D3D10_MAP_WRITE_NO_OVERWRITE: "only valid on vertex and index buffers ... cannot be used
        // on a resource created with the D3D10_BIND_CONSTANT_BUFFER flag".
        return Err(E_INVALIDARG);
    }
    // A negative D3D10_MAP becomes a large value, which the shared rules refuse.
    r.map(sub, map_type as u32, flags)
}

unsafe extern "system" fn get_type(this: *mut ID3D10Resource, out: *mut D3D10_RESOURCE_DIMENSION) {
    guard((), || {
        if !out.is_null() {
            // SAFETY: COM contract; non-null and writable. D3D10_RESOURCE_DIMENSION has the
            // D3D11 values.
            unsafe {
                *out = resource_dimension(res(this).desc.dimension) as D3D10_RESOURCE_DIMENSION
            };
        }
    })
}

unsafe extern "system" fn set_eviction_priority(this: *mut ID3D10Resource, p: u32) {
    guard((), || {
        // SAFETY: COM contract: `this` is this face of a live object.
        unsafe { res(this) }
            .eviction_priority
            .store(p, Ordering::Relaxed)
    })
}

unsafe extern "system" fn get_eviction_priority(this: *mut ID3D10Resource) -> u32 {
    guard(0, || {
        // SAFETY: COM contract: `this` is this face of a live object.
        unsafe { res(this) }
            .eviction_priority
            .load(Ordering::Relaxed)
    })
}

// ---------------------------------------------------------------------------------------------
// Map / Unmap

unsafe extern "system" fn buffer_map(
    this: *mut ID3D10Buffer,
    map_type: D3D10_MAP,
    flags: u32,
    out: *mut *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // ID3D10Buffer::Map: ppData is required.
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let result = map(unsafe { res(this) }, 0, map_type, flags);
        let (data, hr) = match result {
            Ok(m) => (m.data.cast(), S_OK),
            Err(hr) => (ptr::null_mut(), hr),
        };
        // SAFETY: non-null and writable (COM contract).
        unsafe { *out = data };
        hr
    })
}

unsafe extern "system" fn buffer_unmap(this: *mut ID3D10Buffer) {
    // SAFETY: COM contract.
    guard((), || unsafe { res(this) }.unmap(0))
}

unsafe extern "system" fn texture1d_map(
    this: *mut ID3D10Texture1D,
    sub: u32,
    map_type: D3D10_MAP,
    flags: u32,
    out: *mut *mut c_void,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // ID3D10Texture1D::Map: ppData is required.
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let (data, hr) = match map(unsafe { res(this) }, sub, map_type, flags) {
            Ok(m) => (m.data.cast(), S_OK),
            Err(hr) => (ptr::null_mut(), hr),
        };
        // SAFETY: non-null and writable (COM contract).
        unsafe { *out = data };
        hr
    })
}

unsafe extern "system" fn texture2d_map(
    this: *mut ID3D10Texture2D,
    sub: u32,
    map_type: D3D10_MAP,
    flags: u32,
    out: *mut D3D10_MAPPED_TEXTURE2D,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // ID3D10Texture2D::Map: pMappedTex2D is required.
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let result = map(unsafe { res(this) }, sub, map_type, flags);
        let m = result.unwrap_or(Mapped {
            data: ptr::null_mut(),
            row_pitch: 0,
            depth_pitch: 0,
        });
        // SAFETY: non-null and writable (COM contract).
        unsafe {
            *out = D3D10_MAPPED_TEXTURE2D {
                pData: m.data.cast(),
                RowPitch: m.row_pitch,
            }
        };
        result.err().unwrap_or(S_OK)
    })
}

unsafe extern "system" fn texture3d_map(
    this: *mut ID3D10Texture3D,
    sub: u32,
    map_type: D3D10_MAP,
    flags: u32,
    out: *mut D3D10_MAPPED_TEXTURE3D,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // ID3D10Texture3D::Map: pMappedTex3D is required.
            return E_INVALIDARG;
        }
        // SAFETY: COM contract.
        let result = map(unsafe { res(this) }, sub, map_type, flags);
        let m = result.unwrap_or(Mapped {
            data: ptr::null_mut(),
            row_pitch: 0,
            depth_pitch: 0,
        });
        // SAFETY: non-null and writable (COM contract).
        unsafe {
            *out = D3D10_MAPPED_TEXTURE3D {
                pData: m.data.cast(),
                RowPitch: m.row_pitch,
                DepthPitch: m.depth_pitch,
            }
        };
        result.err().unwrap_or(S_OK)
    })
}

/// `ID3D10Texture*::Unmap(Subresource)`: ignored for a subresource that is not mapped.
unsafe extern "system" fn texture_unmap<I>(this: *mut I, sub: u32) {
    // SAFETY: COM contract.
    guard((), || unsafe { res(this) }.unmap(sub))
}

// ---------------------------------------------------------------------------------------------
// GetDesc

unsafe extern "system" fn buffer_get_desc(this: *mut ID3D10Buffer, out: *mut D3D10_BUFFER_DESC) {
    guard((), || {
        if out.is_null() {
            return;
        }
        // SAFETY: COM contract.
        let d = unsafe { res(this) }.desc;
        // SAFETY: non-null and writable (COM contract).
        unsafe {
            *out = D3D10_BUFFER_DESC {
                ByteWidth: d.width,
                Usage: d.usage as D3D10_USAGE,
                BindFlags: d.bind,
                CPUAccessFlags: d.cpu_access,
                MiscFlags: misc_to_d3d10(d.misc),
            }
        };
    })
}

unsafe extern "system" fn texture1d_get_desc(
    this: *mut ID3D10Texture1D,
    out: *mut D3D10_TEXTURE1D_DESC,
) {
    guard((), || {
        if out.is_null() {
            return;
        }
        // SAFETY: COM contract.
        let d = unsafe { res(this) }.desc;
        // SAFETY: non-null and writable (COM contract).
        unsafe {
            *out = D3D10_TEXTURE1D_DESC {
                Width: d.width,
                MipLevels: d.mip_levels,
                ArraySize: d.array_size,
                Format: d.format as DXGI_FORMAT,
                Usage: d.usage as D3D10_USAGE,
                BindFlags: d.bind,
                CPUAccessFlags: d.cpu_access,
                MiscFlags: misc_to_d3d10(d.misc),
            }
        };
    })
}

unsafe extern "system" fn texture2d_get_desc(
    this: *mut ID3D10Texture2D,
    out: *mut D3D10_TEXTURE2D_DESC,
) {
    guard((), || {
        if out.is_null() {
            return;
        }
        // SAFETY: COM contract.
        let d = unsafe { res(this) }.desc;
        // SAFETY: non-null and writable (COM contract).
        unsafe {
            *out = D3D10_TEXTURE2D_DESC {
                Width: d.width,
                Height: d.height,
                MipLevels: d.mip_levels,
                ArraySize: d.array_size,
                Format: d.format as DXGI_FORMAT,
                SampleDesc: DXGI_SAMPLE_DESC {
                    Count: d.sample_count,
                    Quality: d.sample_quality,
                },
                Usage: d.usage as D3D10_USAGE,
                BindFlags: d.bind,
                CPUAccessFlags: d.cpu_access,
                MiscFlags: misc_to_d3d10(d.misc),
            }
        };
    })
}

unsafe extern "system" fn texture3d_get_desc(
    this: *mut ID3D10Texture3D,
    out: *mut D3D10_TEXTURE3D_DESC,
) {
    guard((), || {
        if out.is_null() {
            return;
        }
        // SAFETY: COM contract.
        let d = unsafe { res(this) }.desc;
        // SAFETY: non-null and writable (COM contract).
        unsafe {
            *out = D3D10_TEXTURE3D_DESC {
                Width: d.width,
                Height: d.height,
                Depth: d.depth,
                MipLevels: d.mip_levels,
                Format: d.format as DXGI_FORMAT,
                Usage: d.usage as D3D10_USAGE,
                BindFlags: d.bind,
                CPUAccessFlags: d.cpu_access,
                MiscFlags: misc_to_d3d10(d.misc),
            }
        };
    })
}

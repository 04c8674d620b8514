//! `ID3D10Buffer` and `ID3D10Texture1D/2D/3D`: the D3D10 face of a resource (one vtable per
//! dimension). `Map`/`Unmap` live on the resource in Direct3D 10 and follow the shared (D3D11)
//! rules, plus D3D10's limit of `WRITE_NO_OVERWRITE` to vertex and index buffers.

use std::ptr;

use super::super::abi::*;
use super::super::desc as desc11;
use super::super::guard::guard;
use super::super::object::*;
use super::super::resource::{
    get_desc, resource_get_eviction_priority, resource_get_type, resource_set_eviction_priority,
    Mapped, Resource, D3D10_FACE,
};
use super::child_get_device10;
use super::desc;
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
        GetType: resource_get_type::<ID3D10Resource, RO>,
        SetEvictionPriority: resource_set_eviction_priority::<ID3D10Resource, RO>,
        GetEvictionPriority: resource_get_eviction_priority::<ID3D10Resource, RO>,
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

/// The body of the four `Map` methods: maps and writes the mapping, as `write` shapes it, to the
/// required `out` (`write(None)` on failure).
///
/// # Safety
/// `this` is the D3D10 face of a live resource; `out` is null or writable.
unsafe fn map_into<I, T>(
    this: *mut I,
    (sub, map_type, flags): (u32, D3D10_MAP, u32),
    out: *mut T,
    write: fn(Option<Mapped>) -> T,
) -> HRESULT {
    guard(E_FAIL, || {
        if out.is_null() {
            // ID3D10Buffer/Texture*::Map: ppData / pMappedTex*D is required.
            return E_INVALIDARG;
        }
        // SAFETY: function contract.
        let result = map(unsafe { res(this) }, sub, map_type, flags);
        // SAFETY: non-null and writable (contract).
        unsafe { *out = write(result.ok()) };
        result.err().unwrap_or(S_OK)
    })
}

/// `pData` of a mapping (null: none).
fn data(m: &Option<Mapped>) -> *mut c_void {
    m.map_or(ptr::null_mut(), |m| m.data.cast())
}

unsafe extern "system" fn buffer_map(
    this: *mut ID3D10Buffer,
    map_type: D3D10_MAP,
    flags: u32,
    out: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: COM contract.
    unsafe { map_into(this, (0, map_type, flags), out, |m| data(&m)) }
}

unsafe extern "system" fn texture1d_map(
    this: *mut ID3D10Texture1D,
    sub: u32,
    map_type: D3D10_MAP,
    flags: u32,
    out: *mut *mut c_void,
) -> HRESULT {
    // SAFETY: COM contract.
    unsafe { map_into(this, (sub, map_type, flags), out, |m| data(&m)) }
}

unsafe extern "system" fn texture2d_map(
    this: *mut ID3D10Texture2D,
    sub: u32,
    map_type: D3D10_MAP,
    flags: u32,
    out: *mut D3D10_MAPPED_TEXTURE2D,
) -> HRESULT {
    // SAFETY: COM contract.
    unsafe {
        map_into(this, (sub, map_type, flags), out, |m| {
            D3D10_MAPPED_TEXTURE2D {
                pData: data(&m),
                RowPitch: m.map_or(0, |m| m.row_pitch),
            }
        })
    }
}

unsafe extern "system" fn texture3d_map(
    this: *mut ID3D10Texture3D,
    sub: u32,
    map_type: D3D10_MAP,
    flags: u32,
    out: *mut D3D10_MAPPED_TEXTURE3D,
) -> HRESULT {
    // SAFETY: COM contract.
    unsafe {
        map_into(this, (sub, map_type, flags), out, |m| {
            D3D10_MAPPED_TEXTURE3D {
                pData: data(&m),
                RowPitch: m.map_or(0, |m| m.row_pitch),
                DepthPitch: m.map_or(0, |m| m.depth_pitch),
            }
        })
    }
}

unsafe extern "system" fn buffer_unmap(this: *mut ID3D10Buffer) {
    // SAFETY: COM contract.
    guard((), || unsafe { res(this) }.unmap(0))
}

/// `ID3D10Texture*::Unmap(Subresource)`: ignored for a subresource that is not mapped.
unsafe extern "system" fn texture_unmap<I>(this: *mut I, sub: u32) {
    // SAFETY: COM contract.
    guard((), || unsafe { res(this) }.unmap(sub))
}

// ---------------------------------------------------------------------------------------------
// GetDesc: D3D11's, as D3D10's description

unsafe extern "system" fn buffer_get_desc(this: *mut ID3D10Buffer, out: *mut D3D10_BUFFER_DESC) {
    let describe = |d: &_| desc::buffer_to_d3d10(desc11::buffer_desc(d));
    // SAFETY: COM contract.
    unsafe { get_desc::<_, _, RO>(this, out, describe) }
}

unsafe extern "system" fn texture1d_get_desc(
    this: *mut ID3D10Texture1D,
    out: *mut D3D10_TEXTURE1D_DESC,
) {
    let describe = |d: &_| desc::texture1d_to_d3d10(desc11::texture1d_desc(d));
    // SAFETY: COM contract.
    unsafe { get_desc::<_, _, RO>(this, out, describe) }
}

unsafe extern "system" fn texture2d_get_desc(
    this: *mut ID3D10Texture2D,
    out: *mut D3D10_TEXTURE2D_DESC,
) {
    let describe = |d: &_| desc::texture2d_to_d3d10(desc11::texture2d_desc(d));
    // SAFETY: COM contract.
    unsafe { get_desc::<_, _, RO>(this, out, describe) }
}

unsafe extern "system" fn texture3d_get_desc(
    this: *mut ID3D10Texture3D,
    out: *mut D3D10_TEXTURE3D_DESC,
) {
    let describe = |d: &_| desc::texture3d_to_d3d10(desc11::texture3d_desc(d));
    // SAFETY: COM contract.
    unsafe { get_desc::<_, _, RO>(this, out, describe) }
}

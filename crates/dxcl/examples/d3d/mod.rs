//! Direct3D 11 through its COM ABI, the part an application already has: resources with initial
//! data, and reading them back through a staging copy and `Map`. Shared by the examples and the
//! integration tests (`#[path]`); not part of the crate's API.

#![allow(dead_code)] // Each example uses part of it.

use std::ptr;

use dxcl::abi::*;
use dxcl::{Com, Error, Result, Subresource};

fn check(hr: HRESULT) -> Result<()> {
    if SUCCEEDED(hr) {
        Ok(())
    } else {
        Err(Error::D3d(hr))
    }
}

fn created<T: Interface>(hr: HRESULT, out: *mut T) -> Result<Com<T>> {
    check(hr)?;
    // SAFETY: on success the out pointer holds a new reference, which the `Com` takes over.
    unsafe { Com::from_raw(out) }.ok_or(Error::D3d(E_POINTER))
}

/// The device's immediate context (a new reference).
pub fn immediate_context(device: &Com<ID3D11Device>) -> Com<ID3D11DeviceContext> {
    let d = device.as_raw();
    let mut out = ptr::null_mut();
    // SAFETY: a live device; GetImmediateContext writes one new reference.
    unsafe { ((*(*d).lpVtbl).GetImmediateContext)(d, &mut out) };
    // SAFETY: GetImmediateContext always returns the device's context, AddRef'd.
    unsafe { Com::from_raw(out) }.expect("a device has an immediate context")
}

/// A DEFAULT-usage buffer holding `data`.
pub fn buffer(device: &Com<ID3D11Device>, data: &[u8]) -> Result<Com<ID3D11Buffer>> {
    let desc = D3D11_BUFFER_DESC {
        ByteWidth: data.len() as u32,
        Usage: D3D11_USAGE_DEFAULT,
        BindFlags: (D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_UNORDERED_ACCESS) as u32,
        ..Default::default()
    };
    let init = D3D11_SUBRESOURCE_DATA {
        pSysMem: data.as_ptr().cast(),
        ..Default::default()
    };
    let d = device.as_raw();
    let mut out = ptr::null_mut();
    // SAFETY: a live device, a valid description, and initial data of ByteWidth bytes.
    let hr = unsafe { ((*(*d).lpVtbl).CreateBuffer)(d, &desc, &init, &mut out) };
    created(hr, out)
}

/// A DEFAULT-usage 2D texture (array) of `width` × `height`, `mips` levels and `slices` slices
/// of `format` with `texel` bytes per texel, each subresource filled by `fill(subresource, x, y)`.
pub fn texture2d(
    device: &Com<ID3D11Device>,
    [width, height]: [u32; 2],
    mips: u32,
    slices: u32,
    (format, texel): (DXGI_FORMAT, usize),
    fill: impl Fn(Subresource, u32, u32) -> Vec<u8>,
) -> Result<Com<ID3D11Texture2D>> {
    let desc = D3D11_TEXTURE2D_DESC {
        Width: width,
        Height: height,
        MipLevels: mips,
        ArraySize: slices,
        Format: format,
        SampleDesc: DXGI_SAMPLE_DESC {
            Count: 1,
            Quality: 0,
        },
        Usage: D3D11_USAGE_DEFAULT,
        BindFlags: (D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_UNORDERED_ACCESS) as u32,
        ..Default::default()
    };
    // D3D11_SUBRESOURCE_DATA comes in subresource order: mip-major within each slice.
    let mut data = Vec::new();
    for index in 0..mips * slices {
        let s = Subresource::from_index(index, mips);
        let (w, h) = ((width >> s.mip).max(1), (height >> s.mip).max(1));
        let mut bytes = Vec::new();
        for y in 0..h {
            for x in 0..w {
                bytes.extend(fill(s, x, y));
            }
        }
        assert_eq!(bytes.len(), (w * h) as usize * texel);
        data.push(bytes);
    }
    let init: Vec<D3D11_SUBRESOURCE_DATA> = data
        .iter()
        .enumerate()
        .map(|(i, bytes)| D3D11_SUBRESOURCE_DATA {
            pSysMem: bytes.as_ptr().cast(),
            SysMemPitch: ((width >> (i as u32 % mips)).max(1) as usize * texel) as u32,
            SysMemSlicePitch: 0,
        })
        .collect();
    let d = device.as_raw();
    let mut out = ptr::null_mut();
    // SAFETY: a live device, a valid description, and one tightly packed initial-data entry per
    // subresource, whose bytes live until the call returns.
    let hr = unsafe { ((*(*d).lpVtbl).CreateTexture2D)(d, &desc, init.as_ptr(), &mut out) };
    created(hr, out)
}

/// A DEFAULT-usage 3D texture of one mip level, filled by `fill(x, y, z)`.
pub fn texture3d(
    device: &Com<ID3D11Device>,
    [width, height, depth]: [u32; 3],
    (format, texel): (DXGI_FORMAT, usize),
    fill: impl Fn(u32, u32, u32) -> Vec<u8>,
) -> Result<Com<ID3D11Texture3D>> {
    let desc = D3D11_TEXTURE3D_DESC {
        Width: width,
        Height: height,
        Depth: depth,
        MipLevels: 1,
        Format: format,
        Usage: D3D11_USAGE_DEFAULT,
        BindFlags: D3D11_BIND_SHADER_RESOURCE as u32,
        ..Default::default()
    };
    let mut bytes = Vec::new();
    for z in 0..depth {
        for y in 0..height {
            for x in 0..width {
                bytes.extend(fill(x, y, z));
            }
        }
    }
    let row = width as usize * texel;
    let init = D3D11_SUBRESOURCE_DATA {
        pSysMem: bytes.as_ptr().cast(),
        SysMemPitch: row as u32,
        SysMemSlicePitch: (row * height as usize) as u32,
    };
    let d = device.as_raw();
    let mut out = ptr::null_mut();
    // SAFETY: a live device, a valid description, and tightly packed initial data.
    let hr = unsafe { ((*(*d).lpVtbl).CreateTexture3D)(d, &desc, &init, &mut out) };
    created(hr, out)
}

/// Copies `resource` into `staging` with Direct3D, maps subresource `index` and hands the
/// mapping to `read`.
fn read_back<T>(
    device: &Com<ID3D11Device>,
    resource: *mut ID3D11Resource,
    staging: *mut ID3D11Resource,
    index: u32,
    read: impl FnOnce(&D3D11_MAPPED_SUBRESOURCE) -> T,
) -> Result<T> {
    let context = immediate_context(device);
    let c = context.as_raw();
    let mut mapped = D3D11_MAPPED_SUBRESOURCE::default();
    // SAFETY: a live context and two live resources of the same shape; the mapping stays valid
    // until the Unmap below.
    unsafe {
        ((*(*c).lpVtbl).CopyResource)(c, staging, resource);
        check(((*(*c).lpVtbl).Map)(
            c,
            staging,
            index,
            D3D11_MAP_READ,
            0,
            &mut mapped,
        ))?;
    }
    let value = read(&mapped);
    // SAFETY: unmaps what was mapped above.
    unsafe { ((*(*c).lpVtbl).Unmap)(c, staging, index) };
    Ok(value)
}

/// The bytes of `buffer`, as Direct3D sees them.
pub fn read_buffer(device: &Com<ID3D11Device>, buffer: &Com<ID3D11Buffer>) -> Result<Vec<u8>> {
    let b = buffer.as_raw();
    let mut desc = D3D11_BUFFER_DESC::default();
    // SAFETY: a live buffer; GetDesc writes one description.
    unsafe { ((*(*b).lpVtbl).GetDesc)(b, &mut desc) };
    let staging_desc = D3D11_BUFFER_DESC {
        ByteWidth: desc.ByteWidth,
        Usage: D3D11_USAGE_STAGING,
        CPUAccessFlags: D3D11_CPU_ACCESS_READ as u32,
        ..Default::default()
    };
    let d = device.as_raw();
    let mut out = ptr::null_mut();
    // SAFETY: a live device and a valid staging description, no initial data.
    let hr = unsafe { ((*(*d).lpVtbl).CreateBuffer)(d, &staging_desc, ptr::null(), &mut out) };
    let staging = created(hr, out)?;
    let len = desc.ByteWidth as usize;
    read_back(device, b.cast(), staging.as_raw().cast(), 0, |m| {
        // SAFETY: a mapped buffer exposes its ByteWidth bytes at pData.
        unsafe { std::slice::from_raw_parts(m.pData.cast::<u8>(), len) }.to_vec()
    })
}

/// The texels of one subresource of a 2D texture with `texel` bytes per texel, tightly packed,
/// as Direct3D sees them.
pub fn read_texture2d(
    device: &Com<ID3D11Device>,
    texture: &Com<ID3D11Texture2D>,
    subresource: Subresource,
    texel: usize,
) -> Result<Vec<u8>> {
    let t = texture.as_raw();
    let mut desc = D3D11_TEXTURE2D_DESC::default();
    // SAFETY: a live texture; GetDesc writes one description.
    unsafe { ((*(*t).lpVtbl).GetDesc)(t, &mut desc) };
    let staging_desc = D3D11_TEXTURE2D_DESC {
        Usage: D3D11_USAGE_STAGING,
        BindFlags: 0,
        CPUAccessFlags: D3D11_CPU_ACCESS_READ as u32,
        MiscFlags: 0,
        ..desc
    };
    let d = device.as_raw();
    let mut out = ptr::null_mut();
    // SAFETY: a live device and a valid staging description, no initial data.
    let hr = unsafe { ((*(*d).lpVtbl).CreateTexture2D)(d, &staging_desc, ptr::null(), &mut out) };
    let staging = created(hr, out)?;
    let index = subresource.index(desc.MipLevels, desc.ArraySize)?;
    let (w, h) = (
        (desc.Width >> subresource.mip).max(1) as usize,
        (desc.Height >> subresource.mip).max(1) as usize,
    );
    read_back(device, t.cast(), staging.as_raw().cast(), index, |m| {
        let mut bytes = Vec::with_capacity(w * h * texel);
        for y in 0..h {
            // SAFETY: a mapped subresource has `h` rows of at least `w * texel` bytes, RowPitch
            // apart.
            let row = unsafe {
                std::slice::from_raw_parts(
                    m.pData.cast::<u8>().add(y * m.RowPitch as usize),
                    w * texel,
                )
            };
            bytes.extend_from_slice(row);
        }
        bytes
    })
}

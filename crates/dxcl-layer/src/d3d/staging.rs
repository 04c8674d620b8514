//! The staging-copy strategy's D3D side: one CPU-accessible staging resource per shared
//! subresource, and a tightly packed host shadow that OpenCL reads and writes.
//!
//! Standard COM calls only: D3D11 through the device's immediate context (CopySubresourceRegion,
//! Map, Unmap); D3D10 through the device (CopySubresourceRegion) and the resource's own Map/Unmap.
//! The immediate context is not thread-safe: an application must not use it from another thread
//! while an acquire or release runs (the usual D3D rule for any caller).

use std::ffi::c_void;

use super::com::ComPtr;
use super::resource::Resource;
use super::sys::*;
use crate::core::registry::ResourceKind;
use crate::core::tokens::D3dVersion;

/// A failed D3D call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct D3dError(pub HRESULT);

fn ok(hr: HRESULT) -> Result<(), D3dError> {
    if hr >= 0 {
        Ok(())
    } else {
        Err(D3dError(hr))
    }
}

pub(crate) struct Staging {
    version: D3dVersion,
    kind: ResourceKind,
    resource: ComPtr,
    subresource: u32,
    device: ComPtr,
    /// D3D11 only: the device's immediate context.
    context: Option<ComPtr>,
    staging: ComPtr,
    extent: (u32, u32, u32),
    /// Bytes of one row in the shadow (buffers: the whole buffer).
    row_bytes: usize,
    shadow: Vec<u8>,
}

impl Staging {
    /// Creates the staging resource for one subresource of `r`, whose mip level has `extent`
    /// texels of `pixel_size` bytes (buffers: ByteWidth, 1, 1 and 1).
    pub fn new(
        version: D3dVersion,
        kind: ResourceKind,
        r: &Resource,
        subresource: u32,
        extent: (u32, u32, u32),
        pixel_size: usize,
    ) -> Result<Staging, D3dError> {
        const E_FAIL: HRESULT = 0x80004005_u32 as i32;
        let p = r.com.as_ptr();
        let mut dev = std::ptr::null_mut();
        // SAFETY: a D3D resource is a device child; GetDevice (slot 3) returns an AddRef'd device
        // of the resource's own version.
        unsafe {
            method::<unsafe extern "system" fn(*mut c_void, *mut *mut c_void)>(p, CHILD_GET_DEVICE)(
                p, &mut dev,
            )
        };
        // SAFETY: we own the returned reference.
        let device = unsafe { ComPtr::from_owned(dev) }.ok_or(D3dError(E_FAIL))?;
        let context = match version {
            D3dVersion::D3D11 => {
                let mut ctx = std::ptr::null_mut();
                let d = device.as_ptr();
                // SAFETY: an ID3D11Device; slot 40 is GetImmediateContext (AddRef'd out).
                unsafe {
                    method::<unsafe extern "system" fn(*mut c_void, *mut *mut c_void)>(
                        d,
                        D3D11_DEVICE_GET_IMMEDIATE_CONTEXT,
                    )(d, &mut ctx)
                };
                // SAFETY: we own the returned reference.
                Some(unsafe { ComPtr::from_owned(ctx) }.ok_or(D3dError(E_FAIL))?)
            }
            D3dVersion::D3D10 => None,
        };
        let staging = create_staging(version, kind, &device, r, extent)?;
        let (w, h, d) = extent;
        let row_bytes = match kind {
            ResourceKind::Buffer => w as usize,
            _ => w as usize * pixel_size,
        };
        let shadow = vec![0u8; row_bytes * h as usize * d as usize];
        Ok(Staging {
            version,
            kind,
            // SAFETY: the memory object's registry entry holds the counted reference to the
            // resource and owns this staging copy, so the resource outlives it.
            resource: unsafe { r.com.clone().into_borrowed() },
            subresource,
            device,
            context,
            staging,
            extent,
            row_bytes,
            shadow,
        })
    }

    pub fn extent(&self) -> (u32, u32, u32) {
        self.extent
    }

    pub fn shadow_len(&self) -> usize {
        self.shadow.len()
    }

    pub fn shadow_mut(&mut self) -> &mut Vec<u8> {
        &mut self.shadow
    }

    /// D3D → shadow: copy the subresource into the staging resource, map it, pack the rows.
    pub fn download(&mut self) -> Result<(), D3dError> {
        self.copy(false)?;
        let m = self.map(MAP_READ)?;
        self.for_each_row(&m, |shadow, mapped, n| {
            // SAFETY: `mapped` points into the mapped staging resource with at least n bytes in
            // this row; shadow is our own slice of n bytes.
            unsafe { std::ptr::copy_nonoverlapping(mapped, shadow.as_mut_ptr(), n) }
        });
        self.unmap();
        Ok(())
    }

    /// Shadow → D3D: fill the staging resource, then copy it into the subresource.
    pub fn upload(&mut self) -> Result<(), D3dError> {
        let m = self.map(MAP_WRITE)?;
        self.for_each_row(&m, |shadow, mapped, n| {
            // SAFETY: as in download, the other way round.
            unsafe { std::ptr::copy_nonoverlapping(shadow.as_ptr(), mapped, n) }
        });
        self.unmap();
        self.copy(true)
    }

    fn for_each_row(&mut self, m: &MAPPED, mut f: impl FnMut(&mut [u8], *mut u8, usize)) {
        let (_, h, d) = self.extent;
        let rb = self.row_bytes;
        for z in 0..d as usize {
            for y in 0..h as usize {
                let at = (z * h as usize + y) * rb;
                let off = z * m.DepthPitch as usize + y * m.RowPitch as usize;
                // SAFETY: the mapping covers depth slices of DepthPitch and rows of RowPitch bytes
                // for the staging resource's extent, which equals ours.
                let mapped = unsafe { m.pData.cast::<u8>().add(off) };
                f(&mut self.shadow[at..at + rb], mapped, rb);
            }
        }
    }

    /// CopySubresourceRegion between the resource's subresource and the staging resource.
    fn copy(&self, to_resource: bool) -> Result<(), D3dError> {
        type Copy = unsafe extern "system" fn(
            *mut c_void,
            *mut c_void,
            u32,
            u32,
            u32,
            u32,
            *mut c_void,
            u32,
            *const c_void,
        );
        let (dst, dst_sub, src, src_sub) = if to_resource {
            (
                self.resource.as_ptr(),
                self.subresource,
                self.staging.as_ptr(),
                0,
            )
        } else {
            (
                self.staging.as_ptr(),
                0,
                self.resource.as_ptr(),
                self.subresource,
            )
        };
        let (this, slot) = match &self.context {
            Some(ctx) => (ctx.as_ptr(), D3D11_CONTEXT_COPY_SUBRESOURCE_REGION),
            None => (self.device.as_ptr(), D3D10_DEVICE_COPY_SUBRESOURCE_REGION),
        };
        // SAFETY: the D3D11 immediate context (slot 46) or the D3D10 device (slot 32); both
        // resources are live, of the same device, and the regions match in size.
        unsafe {
            method::<Copy>(this, slot)(this, dst, dst_sub, 0, 0, 0, src, src_sub, std::ptr::null())
        };
        Ok(())
    }

    fn map(&self, map_type: i32) -> Result<MAPPED, D3dError> {
        let mut m = MAPPED {
            pData: std::ptr::null_mut(),
            RowPitch: 0,
            DepthPitch: 0,
        };
        let s = self.staging.as_ptr();
        let hr = match (&self.context, self.kind) {
            (Some(ctx), _) => {
                type Map = unsafe extern "system" fn(
                    *mut c_void,
                    *mut c_void,
                    u32,
                    i32,
                    u32,
                    *mut MAPPED,
                ) -> HRESULT;
                let c = ctx.as_ptr();
                // SAFETY: ID3D11DeviceContext::Map (slot 14) on a staging resource with CPU access.
                unsafe { method::<Map>(c, D3D11_CONTEXT_MAP)(c, s, 0, map_type, 0, &mut m) }
            }
            (None, ResourceKind::Buffer) => {
                type Map =
                    unsafe extern "system" fn(*mut c_void, i32, u32, *mut *mut c_void) -> HRESULT;
                // SAFETY: ID3D10Buffer::Map (slot 10) on a staging buffer.
                unsafe { method::<Map>(s, D3D10_RESOURCE_MAP)(s, map_type, 0, &mut m.pData) }
            }
            (None, _) => {
                type Map =
                    unsafe extern "system" fn(*mut c_void, u32, i32, u32, *mut MAPPED) -> HRESULT;
                // SAFETY: ID3D10Texture2D/3D::Map (slot 10); D3D10_MAPPED_TEXTURE2D is the first
                // two members of MAPPED, D3D10_MAPPED_TEXTURE3D all three.
                unsafe { method::<Map>(s, D3D10_RESOURCE_MAP)(s, 0, map_type, 0, &mut m) }
            }
        };
        ok(hr)?;
        if m.pData.is_null() {
            return Err(D3dError(hr));
        }
        if self.kind == ResourceKind::Buffer {
            m.RowPitch = self.row_bytes as u32;
        }
        if self.kind != ResourceKind::Texture3D {
            m.DepthPitch = m.RowPitch * self.extent.1;
        }
        Ok(m)
    }

    fn unmap(&self) {
        let s = self.staging.as_ptr();
        match (&self.context, self.kind) {
            (Some(ctx), _) => {
                let c = ctx.as_ptr();
                // SAFETY: ID3D11DeviceContext::Unmap (slot 15) of the subresource we mapped.
                unsafe {
                    method::<unsafe extern "system" fn(*mut c_void, *mut c_void, u32)>(
                        c,
                        D3D11_CONTEXT_UNMAP,
                    )(c, s, 0)
                };
            }
            (None, ResourceKind::Buffer) => {
                // SAFETY: ID3D10Buffer::Unmap (slot 11).
                unsafe {
                    method::<unsafe extern "system" fn(*mut c_void)>(s, D3D10_RESOURCE_UNMAP)(s)
                };
            }
            (None, _) => {
                // SAFETY: ID3D10Texture2D/3D::Unmap (slot 11) of subresource 0.
                unsafe {
                    method::<unsafe extern "system" fn(*mut c_void, u32)>(s, D3D10_RESOURCE_UNMAP)(
                        s, 0,
                    )
                };
            }
        }
        let _ = self.version;
    }
}

/// Creates a STAGING resource with CPU read/write of one mip level's extent.
fn create_staging(
    version: D3dVersion,
    kind: ResourceKind,
    device: &ComPtr,
    r: &Resource,
    extent: (u32, u32, u32),
) -> Result<ComPtr, D3dError> {
    let d = device.as_ptr();
    let cpu = CPU_ACCESS_READ | CPU_ACCESS_WRITE;
    let mut out = std::ptr::null_mut();
    type Create<D> = unsafe extern "system" fn(
        *mut c_void,
        *const D,
        *const c_void,
        *mut *mut c_void,
    ) -> HRESULT;
    let (w, h, depth) = extent;
    let hr = match kind {
        ResourceKind::Buffer => match version {
            D3dVersion::D3D11 => {
                let desc = D3D11_BUFFER_DESC {
                    ByteWidth: w,
                    Usage: USAGE_STAGING,
                    BindFlags: 0,
                    CPUAccessFlags: cpu,
                    MiscFlags: 0,
                    StructureByteStride: 0,
                };
                // SAFETY: ID3D11Device::CreateBuffer (slot 3), no initial data.
                unsafe {
                    method::<Create<D3D11_BUFFER_DESC>>(d, D3D11_DEVICE_CREATE_BUFFER)(
                        d,
                        &desc,
                        std::ptr::null(),
                        &mut out,
                    )
                }
            }
            D3dVersion::D3D10 => {
                let desc = D3D10_BUFFER_DESC {
                    ByteWidth: w,
                    Usage: USAGE_STAGING,
                    BindFlags: 0,
                    CPUAccessFlags: cpu,
                    MiscFlags: 0,
                };
                // SAFETY: ID3D10Device::CreateBuffer (slot 71), no initial data.
                unsafe {
                    method::<Create<D3D10_BUFFER_DESC>>(d, D3D10_DEVICE_CREATE_BUFFER)(
                        d,
                        &desc,
                        std::ptr::null(),
                        &mut out,
                    )
                }
            }
        },
        ResourceKind::Texture2D => {
            let desc = D3D11_TEXTURE2D_DESC {
                Width: w,
                Height: h,
                MipLevels: 1,
                ArraySize: 1,
                Format: r.desc.format,
                SampleDesc: DXGI_SAMPLE_DESC {
                    Count: 1,
                    Quality: 0,
                },
                Usage: USAGE_STAGING,
                BindFlags: 0,
                CPUAccessFlags: cpu,
                MiscFlags: 0,
            };
            let slot = if version == D3dVersion::D3D11 {
                D3D11_DEVICE_CREATE_TEXTURE2D
            } else {
                D3D10_DEVICE_CREATE_TEXTURE2D
            };
            // SAFETY: ID3D1xDevice::CreateTexture2D; both versions take this description layout.
            unsafe {
                method::<Create<D3D11_TEXTURE2D_DESC>>(d, slot)(
                    d,
                    &desc,
                    std::ptr::null(),
                    &mut out,
                )
            }
        }
        ResourceKind::Texture3D => {
            let desc = D3D11_TEXTURE3D_DESC {
                Width: w,
                Height: h,
                Depth: depth,
                MipLevels: 1,
                Format: r.desc.format,
                Usage: USAGE_STAGING,
                BindFlags: 0,
                CPUAccessFlags: cpu,
                MiscFlags: 0,
            };
            let slot = if version == D3dVersion::D3D11 {
                D3D11_DEVICE_CREATE_TEXTURE3D
            } else {
                D3D10_DEVICE_CREATE_TEXTURE3D
            };
            // SAFETY: ID3D1xDevice::CreateTexture3D; both versions take this description layout.
            unsafe {
                method::<Create<D3D11_TEXTURE3D_DESC>>(d, slot)(
                    d,
                    &desc,
                    std::ptr::null(),
                    &mut out,
                )
            }
        }
    };
    ok(hr)?;
    // SAFETY: on success we own the created resource.
    unsafe { ComPtr::from_owned(out) }.ok_or(D3dError(hr))
}

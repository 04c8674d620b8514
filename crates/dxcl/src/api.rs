//! The Direct3D versions ([`D3D10`], [`D3D11`]), the extension flavours ([`Flavor`]) and the
//! entry points they name.
//!
//! The four extensions differ only in names: `clCreateFrom{D3D10,D3D11}Buffer{KHR,NV}` and so on
//! take the same arguments, and KHR and NV tokens have the same values. One implementation,
//! generic over [`Api`] and parameterised by [`Flavor`], serves all four.

use std::ffi::{c_void, CString};

use dxcl_abi::*;
use opencl3::types::{
    cl_command_queue, cl_context, cl_context_properties, cl_device_id, cl_event, cl_int, cl_mem,
    cl_mem_flags, cl_platform_id, cl_uint,
};

use crate::com::Com;
use dxcl_abi::sharing::{self, D3dVersion};

mod sealed {
    pub trait Sealed {}
}

/// The family of the extension a context uses. The same layer offers both; the NV names exist
/// because NVIDIA's Windows driver exposes only `cl_nv_d3d11_sharing`, and ported code may
/// look those up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Flavor {
    /// `cl_khr_d3d1x_sharing` (honours `CL_CONTEXT_INTEROP_USER_SYNC`; BGRA textures too).
    #[default]
    Khr,
    /// `cl_nv_d3d1x_sharing` (always synchronises with Direct3D).
    Nv,
}

impl Flavor {
    /// The suffix of its entry points and tokens: `"KHR"` or `"NV"`.
    pub const fn suffix(self) -> &'static str {
        match self {
            Flavor::Khr => "KHR",
            Flavor::Nv => "NV",
        }
    }
}

/// The shape of a texture as its description gives it, with `MipLevels = 0` resolved.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub width: u32,
    pub height: u32,
    pub depth: u32,
    pub mip_levels: u32,
    pub array_size: u32,
}

impl Shape {
    fn new(width: u32, height: u32, depth: u32, mip_levels: u32, array_size: u32) -> Shape {
        // A description's MipLevels = 0 means the full chain: 1 + floor(log2(largest dimension)).
        let full = 32 - width.max(height).max(depth).max(1).leading_zeros();
        Shape {
            width,
            height,
            depth,
            mip_levels: if mip_levels == 0 { full } else { mip_levels },
            array_size,
        }
    }
}

/// A Direct3D version that the sharing extensions cover: [`D3D10`] or [`D3D11`]. Sealed.
///
/// Contexts, shared objects and queues carry it as a type parameter, so a D3D10 texture cannot
/// be shared with a D3D11 context, nor acquired on its queue.
pub trait Api: sealed::Sealed + Sized + 'static {
    /// `ID3D10Device` or `ID3D11Device`.
    type Device: Interface;
    /// `ID3D10Buffer` or `ID3D11Buffer`.
    type Buffer: Interface;
    /// `ID3D10Texture2D` or `ID3D11Texture2D`.
    type Texture2D: Interface;
    /// `ID3D10Texture3D` or `ID3D11Texture3D`.
    type Texture3D: Interface;
    /// `"D3D10"` or `"D3D11"`, as in the entry-point names.
    const NAME: &'static str;
    /// `CL_CONTEXT_D3D1x_DEVICE_KHR` (= `…_NV`), the context property.
    const CONTEXT_DEVICE: cl_context_properties;
    /// `CL_D3D1x_DEVICE_KHR` (= `…_NV`), the device source of `clGetDeviceIDsFromD3D1x`.
    const DEVICE_SOURCE: cl_uint;
    /// `CL_PREFERRED_DEVICES_FOR_D3D1x_KHR` (= `…_NV`).
    const PREFERRED_DEVICES: cl_uint;
    /// `CL_ALL_DEVICES_FOR_D3D1x_KHR` (= `…_NV`).
    const ALL_DEVICES: cl_uint;

    /// The extension's name for `flavor`, e.g. `"cl_khr_d3d11_sharing"`.
    fn extension(flavor: Flavor) -> &'static str;
    #[doc(hidden)]
    fn texture2d_shape(texture: &Com<Self::Texture2D>) -> Shape;
    #[doc(hidden)]
    fn texture3d_shape(texture: &Com<Self::Texture3D>) -> Shape;
}

/// The vocabulary's extension (`dxcl_abi::sharing`) of a Direct3D version and flavour.
fn vocabulary(version: D3dVersion, flavor: Flavor) -> sharing::Ext {
    let flavor = match flavor {
        Flavor::Khr => sharing::Flavor::Khr,
        Flavor::Nv => sharing::Flavor::Nv,
    };
    sharing::Ext { version, flavor }
}

/// Direct3D 10 (`cl_khr_d3d10_sharing`, `cl_nv_d3d10_sharing`).
#[derive(Debug)]
pub enum D3D10 {}
/// Direct3D 11 (`cl_khr_d3d11_sharing`, `cl_nv_d3d11_sharing`).
#[derive(Debug)]
pub enum D3D11 {}

impl sealed::Sealed for D3D10 {}
impl sealed::Sealed for D3D11 {}

impl Api for D3D10 {
    type Device = ID3D10Device;
    type Buffer = ID3D10Buffer;
    type Texture2D = ID3D10Texture2D;
    type Texture3D = ID3D10Texture3D;
    const NAME: &'static str = "D3D10";
    const CONTEXT_DEVICE: cl_context_properties = D3dVersion::D3D10.context_property();
    const DEVICE_SOURCE: cl_uint = D3dVersion::D3D10.source_device();
    const PREFERRED_DEVICES: cl_uint = D3dVersion::D3D10.set_preferred();
    const ALL_DEVICES: cl_uint = D3dVersion::D3D10.set_all();

    fn extension(flavor: Flavor) -> &'static str {
        vocabulary(D3dVersion::D3D10, flavor).name()
    }

    fn texture2d_shape(texture: &Com<ID3D10Texture2D>) -> Shape {
        let t = texture.as_raw();
        let mut d = D3D10_TEXTURE2D_DESC::default();
        // SAFETY: `texture` is live; GetDesc writes one description.
        unsafe { ((*(*t).lpVtbl).GetDesc)(t, &mut d) };
        Shape::new(d.Width, d.Height, 1, d.MipLevels, d.ArraySize)
    }

    fn texture3d_shape(texture: &Com<ID3D10Texture3D>) -> Shape {
        let t = texture.as_raw();
        let mut d = D3D10_TEXTURE3D_DESC::default();
        // SAFETY: `texture` is live; GetDesc writes one description.
        unsafe { ((*(*t).lpVtbl).GetDesc)(t, &mut d) };
        Shape::new(d.Width, d.Height, d.Depth, d.MipLevels, 1)
    }
}

impl Api for D3D11 {
    type Device = ID3D11Device;
    type Buffer = ID3D11Buffer;
    type Texture2D = ID3D11Texture2D;
    type Texture3D = ID3D11Texture3D;
    const NAME: &'static str = "D3D11";
    const CONTEXT_DEVICE: cl_context_properties = D3dVersion::D3D11.context_property();
    const DEVICE_SOURCE: cl_uint = D3dVersion::D3D11.source_device();
    const PREFERRED_DEVICES: cl_uint = D3dVersion::D3D11.set_preferred();
    const ALL_DEVICES: cl_uint = D3dVersion::D3D11.set_all();

    fn extension(flavor: Flavor) -> &'static str {
        vocabulary(D3dVersion::D3D11, flavor).name()
    }

    fn texture2d_shape(texture: &Com<ID3D11Texture2D>) -> Shape {
        let t = texture.as_raw();
        let mut d = D3D11_TEXTURE2D_DESC::default();
        // SAFETY: `texture` is live; GetDesc writes one description.
        unsafe { ((*(*t).lpVtbl).GetDesc)(t, &mut d) };
        Shape::new(d.Width, d.Height, 1, d.MipLevels, d.ArraySize)
    }

    fn texture3d_shape(texture: &Com<ID3D11Texture3D>) -> Shape {
        let t = texture.as_raw();
        let mut d = D3D11_TEXTURE3D_DESC::default();
        // SAFETY: `texture` is live; GetDesc writes one description.
        unsafe { ((*(*t).lpVtbl).GetDesc)(t, &mut d) };
        Shape::new(d.Width, d.Height, d.Depth, d.MipLevels, 1)
    }
}

// The C signatures of cl_d3d10.h / cl_d3d11.h, with the resource pointer as `void *`: the same
// ABI for every interface type, so one set of types serves both versions and both flavours.
pub(crate) type GetDeviceIds = unsafe extern "system" fn(
    cl_platform_id,
    cl_uint,
    *mut c_void,
    cl_uint,
    cl_uint,
    *mut cl_device_id,
    *mut cl_uint,
) -> cl_int;
pub(crate) type CreateFromBuffer =
    unsafe extern "system" fn(cl_context, cl_mem_flags, *mut c_void, *mut cl_int) -> cl_mem;
pub(crate) type CreateFromTexture = unsafe extern "system" fn(
    cl_context,
    cl_mem_flags,
    *mut c_void,
    cl_uint,
    *mut cl_int,
) -> cl_mem;
// NV's release takes `cl_mem *` (non-const): the same ABI.
pub(crate) type EnqueueObjects = unsafe extern "system" fn(
    cl_command_queue,
    cl_uint,
    *const cl_mem,
    cl_uint,
    *const cl_event,
    *mut cl_event,
) -> cl_int;

/// The six entry points of one extension on one platform.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EntryPoints {
    pub get_device_ids: GetDeviceIds,
    pub create_from_buffer: CreateFromBuffer,
    pub create_from_texture2d: CreateFromTexture,
    pub create_from_texture3d: CreateFromTexture,
    pub acquire: EnqueueObjects,
    pub release: EnqueueObjects,
}

/// `clGetExtensionFunctionAddressForPlatform`, through cl3's handle on libOpenCL (the one opencl3
/// uses). Null when the loader or the function is missing.
fn address(platform: cl_platform_id, name: &str) -> *mut c_void {
    let Ok(cname) = CString::new(name) else {
        return std::ptr::null_mut();
    };
    match cl3::load_library() {
        Ok(cl) => cl
            .clGetExtensionFunctionAddressForPlatform(platform, cname.as_ptr())
            .unwrap_or(std::ptr::null_mut()),
        Err(_) => std::ptr::null_mut(),
    }
}

impl EntryPoints {
    /// The entry points of `A`'s extension in `flavor` on `platform`; `None` unless all six
    /// are there.
    pub(crate) fn load<A: Api>(platform: cl_platform_id, flavor: Flavor) -> Option<EntryPoints> {
        let (v, s) = (A::NAME, flavor.suffix());
        let get = |what: &str| {
            let f = address(platform, &format!("cl{what}{s}"));
            (!f.is_null()).then_some(f)
        };
        let get_device_ids = get(&format!("GetDeviceIDsFrom{v}"))?;
        let create_from_buffer = get(&format!("CreateFrom{v}Buffer"))?;
        let create_from_texture2d = get(&format!("CreateFrom{v}Texture2D"))?;
        let create_from_texture3d = get(&format!("CreateFrom{v}Texture3D"))?;
        let acquire = get(&format!("EnqueueAcquire{v}Objects"))?;
        let release = get(&format!("EnqueueRelease{v}Objects"))?;
        // SAFETY: each address is the non-null entry point of that name, and each type spells the
        // signature cl_d3d10.h / cl_d3d11.h give it (with the resource as `void *`).
        unsafe {
            Some(EntryPoints {
                get_device_ids: std::mem::transmute::<*mut c_void, GetDeviceIds>(get_device_ids),
                create_from_buffer: std::mem::transmute::<*mut c_void, CreateFromBuffer>(
                    create_from_buffer,
                ),
                create_from_texture2d: std::mem::transmute::<*mut c_void, CreateFromTexture>(
                    create_from_texture2d,
                ),
                create_from_texture3d: std::mem::transmute::<*mut c_void, CreateFromTexture>(
                    create_from_texture3d,
                ),
                acquire: std::mem::transmute::<*mut c_void, EnqueueObjects>(acquire),
                release: std::mem::transmute::<*mut c_void, EnqueueObjects>(release),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cl3::{d3d10 as t10, d3d11 as t11};

    #[test]
    fn tokens_match_the_khronos_headers() {
        assert_eq!(
            D3D10::CONTEXT_DEVICE as u32,
            t10::CL_CONTEXT_D3D10_DEVICE_KHR
        );
        assert_eq!(D3D10::DEVICE_SOURCE, t10::CL_D3D10_DEVICE_KHR);
        assert_eq!(
            D3D10::PREFERRED_DEVICES,
            t10::CL_PREFERRED_DEVICES_FOR_D3D10_KHR
        );
        assert_eq!(D3D10::ALL_DEVICES, t10::CL_ALL_DEVICES_FOR_D3D10_KHR);
        assert_eq!(
            D3D11::CONTEXT_DEVICE as u32,
            t11::CL_CONTEXT_D3D11_DEVICE_KHR
        );
        assert_eq!(D3D11::DEVICE_SOURCE, t11::CL_D3D11_DEVICE_KHR);
        assert_eq!(
            D3D11::PREFERRED_DEVICES,
            t11::CL_PREFERRED_DEVICES_FOR_D3D11_KHR
        );
        assert_eq!(D3D11::ALL_DEVICES, t11::CL_ALL_DEVICES_FOR_D3D11_KHR);
        assert_eq!(D3D11::extension(Flavor::Nv), "cl_nv_d3d11_sharing");
        assert_eq!(D3D10::extension(Flavor::Khr), "cl_khr_d3d10_sharing");
    }

    #[test]
    fn zero_mip_levels_mean_the_full_chain() {
        assert_eq!(Shape::new(256, 64, 1, 0, 1).mip_levels, 9);
        assert_eq!(Shape::new(1, 1, 1, 0, 1).mip_levels, 1);
        assert_eq!(Shape::new(5, 3, 17, 0, 1).mip_levels, 5);
        assert_eq!(Shape::new(256, 64, 1, 3, 2).mip_levels, 3);
    }
}

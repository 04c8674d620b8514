//! Which extension a call belongs to, and the tokens that follow from it. KHR and NV tokens have
//! the same values (REFERENCE.md), so one table per Direct3D version serves both.

use std::ffi::CStr;

use opencl_sys::{cl_int, cl_uint};

/// The Direct3D version of an extension, a context or a shared object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum D3dVersion {
    D3D10,
    D3D11,
}

/// Which family of the extension an entry point belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavor {
    /// `cl_khr_d3d1x_sharing`: honours `CL_CONTEXT_INTEROP_USER_SYNC`; 37 formats.
    Khr,
    /// `cl_nv_d3d1x_sharing`: always synchronises; 36 formats (no BGRA).
    Nv,
}

/// One of the four extensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ext {
    pub version: D3dVersion,
    pub flavor: Flavor,
}

impl D3dVersion {
    const fn pick<T: Copy>(self, d3d10: T, d3d11: T) -> T {
        match self {
            D3dVersion::D3D10 => d3d10,
            D3dVersion::D3D11 => d3d11,
        }
    }
    pub const fn invalid_device(self) -> cl_int {
        self.pick(-1002, -1006)
    }
    pub const fn invalid_resource(self) -> cl_int {
        self.pick(-1003, -1007)
    }
    pub const fn already_acquired(self) -> cl_int {
        self.pick(-1004, -1008)
    }
    pub const fn not_acquired(self) -> cl_int {
        self.pick(-1005, -1009)
    }
    /// `CL_D3D1x_DEVICE_*` device source.
    pub const fn source_device(self) -> cl_uint {
        self.pick(0x4010, 0x4019)
    }
    /// `CL_D3D1x_DXGI_ADAPTER_*` device source.
    pub const fn source_adapter(self) -> cl_uint {
        self.pick(0x4011, 0x401A)
    }
    pub const fn set_preferred(self) -> cl_uint {
        self.pick(0x4012, 0x401B)
    }
    pub const fn set_all(self) -> cl_uint {
        self.pick(0x4013, 0x401C)
    }
    /// `CL_CONTEXT_D3D1x_DEVICE_*` context property.
    pub const fn context_property(self) -> isize {
        self.pick(0x4014, 0x401D)
    }
    /// `CL_MEM_D3D1x_RESOURCE_*` mem-object query.
    pub const fn mem_resource_query(self) -> cl_uint {
        self.pick(0x4015, 0x401E)
    }
    /// `CL_IMAGE_D3D1x_SUBRESOURCE_*` image query.
    pub const fn image_subresource_query(self) -> cl_uint {
        self.pick(0x4016, 0x401F)
    }
    pub const fn command_acquire(self) -> cl_uint {
        self.pick(0x4017, 0x4020)
    }
    pub const fn command_release(self) -> cl_uint {
        self.pick(0x4018, 0x4021)
    }
    /// `CL_CONTEXT_D3D1x_PREFER_SHARED_RESOURCES_KHR` context query (KHR only).
    pub const fn prefer_shared_query(self) -> cl_uint {
        self.pick(0x402C, 0x402D)
    }
    pub const ALL: [D3dVersion; 2] = [D3dVersion::D3D10, D3dVersion::D3D11];
}

impl Ext {
    /// `clEnqueueAcquireD3D1xObjects{KHR,NV}` (validation reports).
    pub const fn acquire_call(self) -> &'static CStr {
        match (self.version, self.flavor) {
            (D3dVersion::D3D10, Flavor::Khr) => c"clEnqueueAcquireD3D10ObjectsKHR",
            (D3dVersion::D3D11, Flavor::Khr) => c"clEnqueueAcquireD3D11ObjectsKHR",
            (D3dVersion::D3D10, Flavor::Nv) => c"clEnqueueAcquireD3D10ObjectsNV",
            (D3dVersion::D3D11, Flavor::Nv) => c"clEnqueueAcquireD3D11ObjectsNV",
        }
    }
    /// `clEnqueueReleaseD3D1xObjects{KHR,NV}` (validation reports).
    pub const fn release_call(self) -> &'static CStr {
        match (self.version, self.flavor) {
            (D3dVersion::D3D10, Flavor::Khr) => c"clEnqueueReleaseD3D10ObjectsKHR",
            (D3dVersion::D3D11, Flavor::Khr) => c"clEnqueueReleaseD3D11ObjectsKHR",
            (D3dVersion::D3D10, Flavor::Nv) => c"clEnqueueReleaseD3D10ObjectsNV",
            (D3dVersion::D3D11, Flavor::Nv) => c"clEnqueueReleaseD3D11ObjectsNV",
        }
    }
    /// `clCreateFromD3D1x{Buffer,Texture2D,Texture3D}{KHR,NV}` (validation reports).
    pub(crate) const fn create_call(self, kind: ResourceKind) -> &'static CStr {
        use D3dVersion::*;
        use Flavor::*;
        use ResourceKind::*;
        match (self.version, kind, self.flavor) {
            (D3D10, Buffer, Khr) => c"clCreateFromD3D10BufferKHR",
            (D3D10, Texture2D, Khr) => c"clCreateFromD3D10Texture2DKHR",
            (D3D10, Texture3D, Khr) => c"clCreateFromD3D10Texture3DKHR",
            (D3D11, Buffer, Khr) => c"clCreateFromD3D11BufferKHR",
            (D3D11, Texture2D, Khr) => c"clCreateFromD3D11Texture2DKHR",
            (D3D11, Texture3D, Khr) => c"clCreateFromD3D11Texture3DKHR",
            (D3D10, Buffer, Nv) => c"clCreateFromD3D10BufferNV",
            (D3D10, Texture2D, Nv) => c"clCreateFromD3D10Texture2DNV",
            (D3D10, Texture3D, Nv) => c"clCreateFromD3D10Texture3DNV",
            (D3D11, Buffer, Nv) => c"clCreateFromD3D11BufferNV",
            (D3D11, Texture2D, Nv) => c"clCreateFromD3D11Texture2DNV",
            (D3D11, Texture3D, Nv) => c"clCreateFromD3D11Texture3DNV",
        }
    }
}

impl ResourceKind {
    /// The interface of a resource of this kind (validation reports).
    pub(crate) const fn interface_name(self, version: D3dVersion) -> &'static str {
        match (version, self) {
            (D3dVersion::D3D10, ResourceKind::Buffer) => "ID3D10Buffer",
            (D3dVersion::D3D10, ResourceKind::Texture2D) => "ID3D10Texture2D",
            (D3dVersion::D3D10, ResourceKind::Texture3D) => "ID3D10Texture3D",
            (D3dVersion::D3D11, ResourceKind::Buffer) => "ID3D11Buffer",
            (D3dVersion::D3D11, ResourceKind::Texture2D) => "ID3D11Texture2D",
            (D3dVersion::D3D11, ResourceKind::Texture3D) => "ID3D11Texture3D",
        }
    }
}

/// The four extension names, as added to the platform and device extension strings.
pub const EXTENSION_NAMES: [&str; 4] = [
    "cl_khr_d3d10_sharing",
    "cl_khr_d3d11_sharing",
    "cl_nv_d3d10_sharing",
    "cl_nv_d3d11_sharing",
];

/// What kind of Direct3D resource a memory object shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ResourceKind {
    Buffer,
    Texture2D,
    Texture3D,
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencl_sys::cl_d3d10 as d10;
    use opencl_sys::cl_d3d11 as d11;

    #[test]
    fn tokens_match_the_khronos_headers() {
        let v = D3dVersion::D3D10;
        assert_eq!(v.invalid_device(), d10::CL_INVALID_D3D10_DEVICE_KHR);
        assert_eq!(v.invalid_resource(), d10::CL_INVALID_D3D10_RESOURCE_KHR);
        assert_eq!(
            v.already_acquired(),
            d10::CL_D3D10_RESOURCE_ALREADY_ACQUIRED_KHR
        );
        assert_eq!(v.not_acquired(), d10::CL_D3D10_RESOURCE_NOT_ACQUIRED_KHR);
        assert_eq!(v.source_device(), d10::CL_D3D10_DEVICE_KHR);
        assert_eq!(v.source_adapter(), d10::CL_D3D10_DXGI_ADAPTER_KHR);
        assert_eq!(v.set_preferred(), d10::CL_PREFERRED_DEVICES_FOR_D3D10_KHR);
        assert_eq!(v.set_all(), d10::CL_ALL_DEVICES_FOR_D3D10_KHR);
        assert_eq!(
            v.context_property() as u32,
            d10::CL_CONTEXT_D3D10_DEVICE_KHR
        );
        assert_eq!(v.mem_resource_query(), d10::CL_MEM_D3D10_RESOURCE_KHR);
        assert_eq!(
            v.image_subresource_query(),
            d10::CL_IMAGE_D3D10_SUBRESOURCE_KHR
        );
        assert_eq!(
            v.command_acquire(),
            d10::CL_COMMAND_ACQUIRE_D3D10_OBJECTS_KHR
        );
        assert_eq!(
            v.command_release(),
            d10::CL_COMMAND_RELEASE_D3D10_OBJECTS_KHR
        );
        assert_eq!(
            v.prefer_shared_query(),
            d10::CL_CONTEXT_D3D10_PREFER_SHARED_RESOURCES_KHR
        );
        let v = D3dVersion::D3D11;
        assert_eq!(v.invalid_device(), d11::CL_INVALID_D3D11_DEVICE_KHR);
        assert_eq!(v.invalid_resource(), d11::CL_INVALID_D3D11_RESOURCE_KHR);
        assert_eq!(
            v.already_acquired(),
            d11::CL_D3D11_RESOURCE_ALREADY_ACQUIRED_KHR
        );
        assert_eq!(v.not_acquired(), d11::CL_D3D11_RESOURCE_NOT_ACQUIRED_KHR);
        assert_eq!(v.source_device(), d11::CL_D3D11_DEVICE_KHR);
        assert_eq!(v.source_adapter(), d11::CL_D3D11_DXGI_ADAPTER_KHR);
        assert_eq!(v.set_preferred(), d11::CL_PREFERRED_DEVICES_FOR_D3D11_KHR);
        assert_eq!(v.set_all(), d11::CL_ALL_DEVICES_FOR_D3D11_KHR);
        assert_eq!(
            v.context_property() as u32,
            d11::CL_CONTEXT_D3D11_DEVICE_KHR
        );
        assert_eq!(v.mem_resource_query(), d11::CL_MEM_D3D11_RESOURCE_KHR);
        assert_eq!(
            v.image_subresource_query(),
            d11::CL_IMAGE_D3D11_SUBRESOURCE_KHR
        );
        assert_eq!(
            v.command_acquire(),
            d11::CL_COMMAND_ACQUIRE_D3D11_OBJECTS_KHR
        );
        assert_eq!(
            v.command_release(),
            d11::CL_COMMAND_RELEASE_D3D11_OBJECTS_KHR
        );
        assert_eq!(
            v.prefer_shared_query(),
            d11::CL_CONTEXT_D3D11_PREFER_SHARED_RESOURCES_KHR
        );
    }
}

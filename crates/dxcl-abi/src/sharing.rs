//! The vocabulary of the four sharing extensions (`cl_khr_d3d10_sharing`, `cl_khr_d3d11_sharing`,
//! `cl_nv_d3d10_sharing`, `cl_nv_d3d11_sharing`), for every crate: which extension, its tokens,
//! its 24 entry points' names. KHR and NV tokens have the same values (REFERENCE.md), so one table
//! per Direct3D version serves both. The tests check each value against the Khronos headers
//! (`opencl-sys`); the Khronos registry names no NV entry point, so the names are written here.

use core::ffi::CStr;

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
    pub const fn invalid_device(self) -> i32 {
        self.pick(-1002, -1006)
    }
    pub const fn invalid_resource(self) -> i32 {
        self.pick(-1003, -1007)
    }
    pub const fn already_acquired(self) -> i32 {
        self.pick(-1004, -1008)
    }
    pub const fn not_acquired(self) -> i32 {
        self.pick(-1005, -1009)
    }
    /// `CL_D3D1x_DEVICE_*` device source.
    pub const fn source_device(self) -> u32 {
        self.pick(0x4010, 0x4019)
    }
    /// `CL_D3D1x_DXGI_ADAPTER_*` device source.
    pub const fn source_adapter(self) -> u32 {
        self.pick(0x4011, 0x401A)
    }
    pub const fn set_preferred(self) -> u32 {
        self.pick(0x4012, 0x401B)
    }
    pub const fn set_all(self) -> u32 {
        self.pick(0x4013, 0x401C)
    }
    /// `CL_CONTEXT_D3D1x_DEVICE_*` context property.
    pub const fn context_property(self) -> isize {
        self.pick(0x4014, 0x401D)
    }
    /// `CL_MEM_D3D1x_RESOURCE_*` mem-object query.
    pub const fn mem_resource_query(self) -> u32 {
        self.pick(0x4015, 0x401E)
    }
    /// `CL_IMAGE_D3D1x_SUBRESOURCE_*` image query.
    pub const fn image_subresource_query(self) -> u32 {
        self.pick(0x4016, 0x401F)
    }
    pub const fn command_acquire(self) -> u32 {
        self.pick(0x4017, 0x4020)
    }
    pub const fn command_release(self) -> u32 {
        self.pick(0x4018, 0x4021)
    }
    /// `CL_CONTEXT_D3D1x_PREFER_SHARED_RESOURCES_KHR` context query (KHR only).
    pub const fn prefer_shared_query(self) -> u32 {
        self.pick(0x402C, 0x402D)
    }
    pub const ALL: [D3dVersion; 2] = [D3dVersion::D3D10, D3dVersion::D3D11];
}

impl Ext {
    /// `clEnqueueAcquireD3D1xObjects{KHR,NV}`.
    pub const fn acquire_call(self) -> &'static CStr {
        self.entry_point(Call::Acquire)
    }
    /// `clEnqueueReleaseD3D1xObjects{KHR,NV}`.
    pub const fn release_call(self) -> &'static CStr {
        self.entry_point(Call::Release)
    }
    /// `clCreateFromD3D1x{Buffer,Texture2D,Texture3D}{KHR,NV}`.
    pub const fn create_call(self, kind: ResourceKind) -> &'static CStr {
        self.entry_point(match kind {
            ResourceKind::Buffer => Call::Buffer,
            ResourceKind::Texture2D => Call::Texture2D,
            ResourceKind::Texture3D => Call::Texture3D,
        })
    }

    /// The four extensions, in the order of [`EXTENSION_NAMES`] (and of the Wine bridge's numbers).
    pub const ALL: [Ext; 4] = [
        Ext {
            version: D3dVersion::D3D10,
            flavor: Flavor::Khr,
        },
        Ext {
            version: D3dVersion::D3D11,
            flavor: Flavor::Khr,
        },
        Ext {
            version: D3dVersion::D3D10,
            flavor: Flavor::Nv,
        },
        Ext {
            version: D3dVersion::D3D11,
            flavor: Flavor::Nv,
        },
    ];

    /// The extension's name (`cl_khr_d3d10_sharing`, …).
    pub const fn name(self) -> &'static str {
        match (self.version, self.flavor) {
            (D3dVersion::D3D10, Flavor::Khr) => EXTENSION_NAMES[0],
            (D3dVersion::D3D11, Flavor::Khr) => EXTENSION_NAMES[1],
            (D3dVersion::D3D10, Flavor::Nv) => EXTENSION_NAMES[2],
            (D3dVersion::D3D11, Flavor::Nv) => EXTENSION_NAMES[3],
        }
    }

    /// The name of one of the extension's six entry points.
    pub const fn entry_point(self, call: Call) -> &'static CStr {
        use Call::*;
        use D3dVersion::*;
        use Flavor::*;
        match (self.version, self.flavor, call) {
            (D3D10, Khr, DeviceIds) => c"clGetDeviceIDsFromD3D10KHR",
            (D3D10, Khr, Buffer) => c"clCreateFromD3D10BufferKHR",
            (D3D10, Khr, Texture2D) => c"clCreateFromD3D10Texture2DKHR",
            (D3D10, Khr, Texture3D) => c"clCreateFromD3D10Texture3DKHR",
            (D3D10, Khr, Acquire) => c"clEnqueueAcquireD3D10ObjectsKHR",
            (D3D10, Khr, Release) => c"clEnqueueReleaseD3D10ObjectsKHR",
            (D3D11, Khr, DeviceIds) => c"clGetDeviceIDsFromD3D11KHR",
            (D3D11, Khr, Buffer) => c"clCreateFromD3D11BufferKHR",
            (D3D11, Khr, Texture2D) => c"clCreateFromD3D11Texture2DKHR",
            (D3D11, Khr, Texture3D) => c"clCreateFromD3D11Texture3DKHR",
            (D3D11, Khr, Acquire) => c"clEnqueueAcquireD3D11ObjectsKHR",
            (D3D11, Khr, Release) => c"clEnqueueReleaseD3D11ObjectsKHR",
            (D3D10, Nv, DeviceIds) => c"clGetDeviceIDsFromD3D10NV",
            (D3D10, Nv, Buffer) => c"clCreateFromD3D10BufferNV",
            (D3D10, Nv, Texture2D) => c"clCreateFromD3D10Texture2DNV",
            (D3D10, Nv, Texture3D) => c"clCreateFromD3D10Texture3DNV",
            (D3D10, Nv, Acquire) => c"clEnqueueAcquireD3D10ObjectsNV",
            (D3D10, Nv, Release) => c"clEnqueueReleaseD3D10ObjectsNV",
            (D3D11, Nv, DeviceIds) => c"clGetDeviceIDsFromD3D11NV",
            (D3D11, Nv, Buffer) => c"clCreateFromD3D11BufferNV",
            (D3D11, Nv, Texture2D) => c"clCreateFromD3D11Texture2DNV",
            (D3D11, Nv, Texture3D) => c"clCreateFromD3D11Texture3DNV",
            (D3D11, Nv, Acquire) => c"clEnqueueAcquireD3D11ObjectsNV",
            (D3D11, Nv, Release) => c"clEnqueueReleaseD3D11ObjectsNV",
        }
    }
}

/// The six entry points each extension has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    /// `clGetDeviceIDsFromD3D1x*`.
    DeviceIds,
    /// `clCreateFromD3D1xBuffer*`.
    Buffer,
    /// `clCreateFromD3D1xTexture2D*`.
    Texture2D,
    /// `clCreateFromD3D1xTexture3D*`.
    Texture3D,
    /// `clEnqueueAcquireD3D1xObjects*`.
    Acquire,
    /// `clEnqueueReleaseD3D1xObjects*`.
    Release,
}

impl Call {
    /// All six, in the order each extension lists them.
    pub const ALL: [Call; 6] = [
        Call::DeviceIds,
        Call::Buffer,
        Call::Texture2D,
        Call::Texture3D,
        Call::Acquire,
        Call::Release,
    ];

    /// The entry points that take Direct3D objects or act on objects made from them, in the
    /// order of the Wine bridge's numbers.
    pub const ON_OBJECTS: [Call; 5] = [
        Call::Buffer,
        Call::Texture2D,
        Call::Texture3D,
        Call::Acquire,
        Call::Release,
    ];
}

/// The Wine bridge's numbers of the 20 entry points that take Direct3D objects (`D3D_CALL`):
/// extension by extension ([`Ext::ALL`]), then [`Call::ON_OBJECTS`]. `dxcl-gen` writes the
/// Windows side's table from it (`wine/gen/sharing.h`).
pub const BRIDGE_CALLS: [(Ext, Call); 20] = {
    let mut t = [(Ext::ALL[0], Call::Buffer); 20];
    let mut n = 0;
    while n < 20 {
        t[n] = (Ext::ALL[n / 5], Call::ON_OBJECTS[n % 5]);
        n += 1;
    }
    t
};

impl ResourceKind {
    /// The interface of a resource of this kind (validation reports).
    pub const fn interface_name(self, version: D3dVersion) -> &'static str {
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
pub enum ResourceKind {
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
    fn the_24_entry_points_once_each_and_the_bridges_numbers() {
        let mut names = [c""; 24];
        for (e, ext) in Ext::ALL.iter().enumerate() {
            for (c, call) in Call::ALL.iter().enumerate() {
                names[e * 6 + c] = ext.entry_point(*call);
            }
        }
        for (i, a) in names.iter().enumerate() {
            assert!(names[i + 1..].iter().all(|b| b != a), "{a:?} twice");
            let flavour = if i / 6 < 2 { "KHR" } else { "NV" };
            assert!(a.to_str().unwrap().ends_with(flavour));
        }
        assert_eq!(
            BRIDGE_CALLS[8].0.entry_point(BRIDGE_CALLS[8].1),
            c"clEnqueueAcquireD3D11ObjectsKHR"
        );
        assert_eq!(
            BRIDGE_CALLS[19].0.release_call(),
            c"clEnqueueReleaseD3D11ObjectsNV"
        );
        assert_eq!(Ext::ALL[3].name(), "cl_nv_d3d11_sharing");
    }

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

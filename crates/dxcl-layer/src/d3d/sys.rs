//! The slice of the Direct3D/DXGI/dxcl-interop ABI the layer calls: IIDs, the structures it
//! passes, and vtable slot indices in SDK order.
//!
//! Interim: `dxcl_abi` (the project's generated ABI crate) had no content yet when this was
//! written; these definitions move to it once it lands. Slot indices count every method from
//! `IUnknown::QueryInterface` = 0.

// SDK spelling on purpose; not every constant of the slice is used yet.
#![allow(
    non_snake_case,
    non_camel_case_types,
    non_upper_case_globals,
    dead_code,
    clippy::upper_case_acronyms
)]

use std::ffi::c_void;

pub type HRESULT = i32;
pub const S_OK: HRESULT = 0;
pub const S_FALSE: HRESULT = 1;

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GUID {
    pub Data1: u32,
    pub Data2: u16,
    pub Data3: u16,
    pub Data4: [u8; 8],
}

const fn guid(d1: u32, d2: u16, d3: u16, d4: [u8; 8]) -> GUID {
    GUID {
        Data1: d1,
        Data2: d2,
        Data3: d3,
        Data4: d4,
    }
}

pub const IID_IUnknown: GUID = guid(0, 0, 0, [0xc0, 0, 0, 0, 0, 0, 0, 0x46]);
pub const IID_ID3D11Device: GUID = guid(
    0xdb6f6ddb,
    0xac77,
    0x4e88,
    [0x82, 0x53, 0x81, 0x9d, 0xf9, 0xbb, 0xf1, 0x40],
);
pub const IID_ID3D11Buffer: GUID = guid(
    0x48570b85,
    0xd1ee,
    0x4fcd,
    [0xa2, 0x50, 0xeb, 0x35, 0x07, 0x22, 0xb0, 0x37],
);
pub const IID_ID3D11Texture2D: GUID = guid(
    0x6f15aaf2,
    0xd208,
    0x4e89,
    [0x9a, 0xb4, 0x48, 0x95, 0x35, 0xd3, 0x4f, 0x9c],
);
pub const IID_ID3D11Texture3D: GUID = guid(
    0x037e866e,
    0xf56d,
    0x4357,
    [0xa8, 0xaf, 0x9d, 0xab, 0xbe, 0x6e, 0x25, 0x0e],
);
const D3D10_TAIL: [u8; 8] = [0xa1, 0x9f, 0x4f, 0x27, 0x04, 0xf6, 0x89, 0xf0];
pub const IID_ID3D10Device: GUID = guid(0x9b7e4c0f, 0x342c, 0x4106, D3D10_TAIL);
pub const IID_ID3D10Buffer: GUID = guid(0x9b7e4c02, 0x342c, 0x4106, D3D10_TAIL);
pub const IID_ID3D10Texture2D: GUID = guid(0x9b7e4c04, 0x342c, 0x4106, D3D10_TAIL);
pub const IID_ID3D10Texture3D: GUID = guid(0x9b7e4c05, 0x342c, 0x4106, D3D10_TAIL);
pub const IID_IDXGIDevice: GUID = guid(
    0x54ec77fa,
    0x1377,
    0x44e6,
    [0x8c, 0x32, 0x88, 0xfd, 0x5f, 0x44, 0xc8, 0x4c],
);
pub const IID_IDXGIAdapter: GUID = guid(
    0x2411e7e1,
    0x12ac,
    0x4ccf,
    [0xbd, 0x14, 0x97, 0x98, 0xe8, 0x53, 0x4d, 0xc0],
);
/// {6d7f3a52-1c4e-4b8a-9f3d-2a61c0e5b7d1} (docs/architecture.md).
pub const IID_IDxclInteropResource: GUID = guid(
    0x6d7f3a52,
    0x1c4e,
    0x4b8a,
    [0x9f, 0x3d, 0x2a, 0x61, 0xc0, 0xe5, 0xb7, 0xd1],
);
/// {6d7f3a52-1c4e-4b8a-9f3d-2a61c0e5b7d2}.
pub const IID_IDxclInteropDevice: GUID = guid(
    0x6d7f3a52,
    0x1c4e,
    0x4b8a,
    [0x9f, 0x3d, 0x2a, 0x61, 0xc0, 0xe5, 0xb7, 0xd2],
);

// Slot indices.
pub const QUERY_INTERFACE: usize = 0;
pub const ADD_REF: usize = 1;
pub const RELEASE: usize = 2;
/// ID3D1xDeviceChild::GetDevice (resources, queries, the D3D11 context).
pub const CHILD_GET_DEVICE: usize = 3;
/// ID3D10Resource::Map / Unmap / GetDesc of buffers and textures.
pub const D3D10_RESOURCE_MAP: usize = 10;
pub const D3D10_RESOURCE_UNMAP: usize = 11;
pub const D3D10_RESOURCE_GET_DESC: usize = 12;
/// ID3D11Buffer/Texture2D/Texture3D::GetDesc.
pub const D3D11_RESOURCE_GET_DESC: usize = 10;
pub const D3D11_DEVICE_CREATE_BUFFER: usize = 3;
pub const D3D11_DEVICE_CREATE_TEXTURE2D: usize = 5;
pub const D3D11_DEVICE_CREATE_TEXTURE3D: usize = 6;
pub const D3D11_DEVICE_GET_IMMEDIATE_CONTEXT: usize = 40;
pub const D3D11_CONTEXT_MAP: usize = 14;
pub const D3D11_CONTEXT_UNMAP: usize = 15;
pub const D3D11_CONTEXT_COPY_SUBRESOURCE_REGION: usize = 46;
pub const D3D11_CONTEXT_COPY_RESOURCE: usize = 47;
pub const D3D10_DEVICE_COPY_SUBRESOURCE_REGION: usize = 32;
pub const D3D10_DEVICE_CREATE_BUFFER: usize = 71;
pub const D3D10_DEVICE_CREATE_TEXTURE2D: usize = 73;
pub const D3D10_DEVICE_CREATE_TEXTURE3D: usize = 74;
pub const DXGI_DEVICE_GET_ADAPTER: usize = 7;
pub const DXGI_ADAPTER_GET_DESC: usize = 8;
pub const INTEROP_RESOURCE_GET_MEMORY: usize = 3;
pub const INTEROP_RESOURCE_GET_SUBRESOURCE_LAYOUT: usize = 4;
pub const INTEROP_RESOURCE_WAIT_FOR_DEVICE_WORK: usize = 6;
pub const INTEROP_RESOURCE_ADD_PENDING_WORK: usize = 7;
pub const INTEROP_DEVICE_GET_ADAPTER_INFO: usize = 3;

pub const USAGE_STAGING: i32 = 3;
pub const CPU_ACCESS_WRITE: u32 = 0x10000;
pub const CPU_ACCESS_READ: u32 = 0x20000;
pub const MAP_READ: i32 = 1;
pub const MAP_WRITE: i32 = 2;
pub const MAP_READ_WRITE: i32 = 3;
pub const DXCL_MEMORY_KIND_HOST: i32 = 1;
pub const DXCL_BACKEND_KIND_HOST: i32 = 1;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct D3D11_BUFFER_DESC {
    pub ByteWidth: u32,
    pub Usage: i32,
    pub BindFlags: u32,
    pub CPUAccessFlags: u32,
    pub MiscFlags: u32,
    pub StructureByteStride: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct D3D10_BUFFER_DESC {
    pub ByteWidth: u32,
    pub Usage: i32,
    pub BindFlags: u32,
    pub CPUAccessFlags: u32,
    pub MiscFlags: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct DXGI_SAMPLE_DESC {
    pub Count: u32,
    pub Quality: u32,
}

/// D3D10_TEXTURE2D_DESC has the same layout.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct D3D11_TEXTURE2D_DESC {
    pub Width: u32,
    pub Height: u32,
    pub MipLevels: u32,
    pub ArraySize: u32,
    pub Format: i32,
    pub SampleDesc: DXGI_SAMPLE_DESC,
    pub Usage: i32,
    pub BindFlags: u32,
    pub CPUAccessFlags: u32,
    pub MiscFlags: u32,
}

/// D3D10_TEXTURE3D_DESC has the same layout.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct D3D11_TEXTURE3D_DESC {
    pub Width: u32,
    pub Height: u32,
    pub Depth: u32,
    pub MipLevels: u32,
    pub Format: i32,
    pub Usage: i32,
    pub BindFlags: u32,
    pub CPUAccessFlags: u32,
    pub MiscFlags: u32,
}

/// D3D11_MAPPED_SUBRESOURCE, and D3D10_MAPPED_TEXTURE3D (same layout; D3D10_MAPPED_TEXTURE2D is
/// its first two members).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MAPPED {
    pub pData: *mut c_void,
    pub RowPitch: u32,
    pub DepthPitch: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct LUID {
    pub LowPart: u32,
    pub HighPart: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DXGI_ADAPTER_DESC {
    pub Description: [u16; 128],
    pub VendorId: u32,
    pub DeviceId: u32,
    pub SubSysId: u32,
    pub Revision: u32,
    pub DedicatedVideoMemory: usize,
    pub DedicatedSystemMemory: usize,
    pub SharedSystemMemory: usize,
    pub AdapterLuid: LUID,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DXCL_RESOURCE_MEMORY {
    pub Kind: i32,
    pub Reserved: u32,
    pub pHost: *mut c_void,
    pub Size: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct DXCL_SUBRESOURCE_LAYOUT {
    pub Offset: u64,
    pub Size: u64,
    pub RowPitch: u32,
    pub DepthPitch: u32,
    pub Width: u32,
    pub Height: u32,
    pub Depth: u32,
    pub Reserved: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct DXCL_ADAPTER_INFO {
    pub Backend: i32,
    pub VendorId: u32,
    pub DeviceId: u32,
    pub AdapterLuid: LUID,
    pub DeviceUuid: [u8; 16],
    pub Flags: u32,
}

pub type PFN_DXCL_PENDING = unsafe extern "C" fn(*mut c_void);

/// Reads method `index` of a COM object's vtable as a function pointer of type `F`.
///
/// # Safety
/// `obj` is a live COM object whose vtable has at least `index + 1` methods, and method `index`
/// has exactly the signature `F` (an `extern "system"` function pointer).
pub unsafe fn method<F: Copy>(obj: *mut c_void, index: usize) -> F {
    debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<usize>());
    // SAFETY: a COM object starts with its vtable pointer; the vtable is an array of function
    // pointers of which `index` exists and has type F (caller's contract).
    unsafe {
        let vtbl = *(obj as *const *const usize);
        std::mem::transmute_copy::<usize, F>(&*vtbl.add(index))
    }
}

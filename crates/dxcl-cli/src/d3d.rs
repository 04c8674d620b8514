//! Direct3D through its COM ABI, exactly as a C program would call it: the runtime is dxcl's own
//! (linked in), reached only through its exported functions and vtables.

use dxcl_abi::interop::*;
use dxcl_abi::*;
use std::ptr;

pub use dxcl_abi::com::Com;

/// An HRESULT failure with the call that returned it.
#[derive(Debug)]
pub struct HrError {
    pub call: &'static str,
    pub hr: HRESULT,
}

impl std::fmt::Display for HrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failed with 0x{:08x}", self.call, self.hr as u32)
    }
}

impl std::error::Error for HrError {}

pub fn check(call: &'static str, hr: HRESULT) -> Result<(), HrError> {
    if SUCCEEDED(hr) {
        Ok(())
    } else {
        Err(HrError { call, hr })
    }
}

/// What `dxcl info` shows of an adapter.
pub struct AdapterSummary {
    pub description: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub luid: LUID,
    pub flags: u32,
    /// From the interop interface of a device made on the adapter.
    pub backend: Option<DXCL_BACKEND_KIND>,
    pub adapter: Com<IDXGIAdapter1>,
}

/// Every adapter the DXGI factory lists, in order.
pub fn adapters() -> Result<Vec<AdapterSummary>, HrError> {
    let mut factory: *mut IDXGIFactory1 = ptr::null_mut();
    // SAFETY: the out pointer is valid; the IID matches the pointer type.
    check("CreateDXGIFactory1", unsafe {
        dxcl_d3d::CreateDXGIFactory1(
            &IID_IDXGIFactory1,
            (&mut factory as *mut *mut IDXGIFactory1).cast(),
        )
    })?;
    // SAFETY: success gave us one reference.
    let factory = unsafe { Com::from_raw(factory) }.ok_or(HrError {
        call: "CreateDXGIFactory1",
        hr: E_POINTER,
    })?;
    let mut out = Vec::new();
    for index in 0.. {
        let mut adapter: *mut IDXGIAdapter1 = ptr::null_mut();
        let f = factory.as_raw();
        // SAFETY: `f` is live; the out pointer is valid.
        let hr = unsafe { ((*(*f).lpVtbl).EnumAdapters1)(f, index, &mut adapter) };
        if hr == DXGI_ERROR_NOT_FOUND {
            break;
        }
        check("IDXGIFactory1::EnumAdapters1", hr)?;
        // SAFETY: success gave us one reference.
        let Some(adapter) = (unsafe { Com::from_raw(adapter) }) else {
            break;
        };
        let mut desc = DXGI_ADAPTER_DESC1::default();
        let a = adapter.as_raw();
        // SAFETY: `a` is live; `desc` is a valid out struct.
        check("IDXGIAdapter1::GetDesc1", unsafe {
            ((*(*a).lpVtbl).GetDesc1)(a, &mut desc)
        })?;
        let end = desc.Description.iter().position(|&c| c == 0).unwrap_or(128);
        out.push(AdapterSummary {
            description: String::from_utf16_lossy(&desc.Description[..end]),
            vendor_id: desc.VendorId,
            device_id: desc.DeviceId,
            luid: desc.AdapterLuid,
            flags: desc.Flags,
            backend: backend_of(&adapter),
            adapter,
        });
    }
    Ok(out)
}

/// The backend behind an adapter, read from the interop interface of a device made on it.
fn backend_of(adapter: &Com<IDXGIAdapter1>) -> Option<DXCL_BACKEND_KIND> {
    let device = create_device_on(adapter.as_raw().cast()).ok()?.0;
    let interop = device.cast::<IDxclInteropDevice>()?;
    let mut info = DXCL_ADAPTER_INFO::default();
    let p = interop.as_raw();
    // SAFETY: `p` is live; `info` is a valid out struct.
    let hr = unsafe { ((*(*p).lpVtbl).GetAdapterInfo)(p, &mut info) };
    SUCCEEDED(hr).then_some(info.Backend)
}

/// A D3D11 device and its immediate context on `adapter` (null: the default adapter).
pub fn create_device_on(
    adapter: *mut IDXGIAdapter,
) -> Result<(Com<ID3D11Device>, Com<ID3D11DeviceContext>), HrError> {
    let driver = if adapter.is_null() {
        D3D_DRIVER_TYPE_HARDWARE
    } else {
        D3D_DRIVER_TYPE_UNKNOWN
    };
    create_device(adapter, driver)
}

/// A D3D11 device and its immediate context with `driver` on the default adapter it selects
/// (dxcl: HARDWARE the first Vulkan adapter, WARP the software adapter).
pub fn create_device_of(
    driver: D3D_DRIVER_TYPE,
) -> Result<(Com<ID3D11Device>, Com<ID3D11DeviceContext>), HrError> {
    create_device(ptr::null_mut(), driver)
}

fn create_device(
    adapter: *mut IDXGIAdapter,
    driver: D3D_DRIVER_TYPE,
) -> Result<(Com<ID3D11Device>, Com<ID3D11DeviceContext>), HrError> {
    let mut device = ptr::null_mut();
    let mut context = ptr::null_mut();
    // SAFETY: every pointer argument is null or valid for the call.
    check("D3D11CreateDevice", unsafe {
        dxcl_d3d::D3D11CreateDevice(
            adapter,
            driver,
            ptr::null_mut(),
            0,
            ptr::null(),
            0,
            D3D11_SDK_VERSION,
            &mut device,
            ptr::null_mut(),
            &mut context,
        )
    })?;
    let missing = HrError {
        call: "D3D11CreateDevice",
        hr: E_POINTER,
    };
    // SAFETY: success gave us one reference to each.
    let device = unsafe { Com::from_raw(device) }.ok_or(missing)?;
    // SAFETY: as above.
    let context = unsafe { Com::from_raw(context) }.ok_or(HrError {
        call: "D3D11CreateDevice",
        hr: E_POINTER,
    })?;
    Ok((device, context))
}

pub fn backend_name(kind: DXCL_BACKEND_KIND) -> &'static str {
    match kind {
        DXCL_BACKEND_KIND_HOST => "host memory",
        DXCL_BACKEND_KIND_VULKAN => "Vulkan",
        _ => "unknown",
    }
}

/// The resource's allocation and the layout of its subresource 0, as the runtime reports them.
pub fn interop_memory(
    interop: &Com<IDxclInteropResource>,
) -> Option<(DXCL_RESOURCE_MEMORY, DXCL_SUBRESOURCE_LAYOUT)> {
    let mut mem = DXCL_RESOURCE_MEMORY::default();
    let mut layout = DXCL_SUBRESOURCE_LAYOUT::default();
    let p = interop.as_raw();
    // SAFETY: `p` is live; the out structs are valid.
    let ok = unsafe {
        SUCCEEDED(((*(*p).lpVtbl).GetMemory)(p, &mut mem))
            && SUCCEEDED(((*(*p).lpVtbl).GetSubresourceLayout)(p, 0, &mut layout))
    };
    ok.then_some((mem, layout))
}

/// The texture's `IDxclInteropResource`: its own (dxcl's runtime), or the one a DXVK texture
/// made by `dxclCreateSharedTexture2D` carries as private data under the interface's IID.
pub fn interop_of(texture: &Com<ID3D11Texture2D>) -> Option<Com<IDxclInteropResource>> {
    if let Some(i) = texture.cast::<IDxclInteropResource>() {
        return Some(i);
    }
    let child = texture.cast::<ID3D11DeviceChild>()?;
    let p = child.as_raw();
    let mut data: *mut IUnknown = ptr::null_mut();
    let mut size = std::mem::size_of::<*mut IUnknown>() as u32;
    // SAFETY: `p` is live; a pointer-sized out buffer, into which an interface (counted for us)
    // is written.
    let hr = unsafe {
        ((*(*p).lpVtbl).GetPrivateData)(
            p,
            &IID_IDxclInteropResource,
            &mut size,
            (&mut data as *mut *mut IUnknown).cast(),
        )
    };
    if FAILED(hr) || size as usize != std::mem::size_of::<*mut IUnknown>() {
        return None;
    }
    // SAFETY: GetPrivateData counted the interface it returned.
    let unknown = unsafe { Com::from_raw(data) }?;
    unknown.cast::<IDxclInteropResource>()
}

/// The strategy the layer named on the resource (`DXCL_PRIVATE_DATA_CL_STRATEGY`), if any.
pub fn layer_tag(resource: &Com<ID3D11Resource>) -> Option<String> {
    let child = resource.cast::<ID3D11DeviceChild>()?;
    let p = child.as_raw();
    let mut buf = [0u8; 64];
    let mut size = buf.len() as u32;
    // SAFETY: `p` is live; `size` is the buffer's capacity, and the call writes at most that.
    let hr = unsafe {
        ((*(*p).lpVtbl).GetPrivateData)(
            p,
            &DXCL_PRIVATE_DATA_CL_STRATEGY,
            &mut size,
            buf.as_mut_ptr().cast(),
        )
    };
    let bytes = buf.get(..size as usize)?;
    SUCCEEDED(hr).then(|| String::from_utf8_lossy(bytes).into_owned())
}

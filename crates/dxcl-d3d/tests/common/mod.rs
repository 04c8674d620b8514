//! Helpers for driving the runtime through its C ABI, as a C program would.
#![allow(dead_code)]
// Each test binary uses a different subset of the helpers.

use std::ptr;

pub use dxcl_abi::*;
// Each test binary uses a different subset of these.
#[allow(unused_imports)]
pub use dxcl_d3d::{CreateDXGIFactory1, D3D11CreateDevice};

/// Calls a method through an interface's vtable: `call!(obj, Method(args...))`.
#[macro_export]
macro_rules! call {
    ($obj:expr, $($path:ident).* ( $($arg:expr),* )) => {{
        let o = $obj;
        // SAFETY: test code drives live COM objects through their vtables.
        unsafe { ((*(*o).lpVtbl).$($path).*)(o.cast() $(, $arg)*) }
    }};
}

/// AddRef through IUnknown.
pub fn add_ref<T>(p: *mut T) -> u32 {
    let u = p as *mut IUnknown;
    // SAFETY: every interface starts with the IUnknown vtable.
    unsafe { ((*(*u).lpVtbl).AddRef)(u) }
}

/// Release through IUnknown.
pub fn release<T>(p: *mut T) -> u32 {
    let u = p as *mut IUnknown;
    // SAFETY: every interface starts with the IUnknown vtable.
    unsafe { ((*(*u).lpVtbl).Release)(u) }
}

/// QueryInterface through IUnknown.
pub fn qi<T, U>(p: *mut T, iid: &GUID) -> (HRESULT, *mut U) {
    let u = p as *mut IUnknown;
    // Not null, so the test sees the runtime clear it on failure.
    let mut out: *mut c_void = std::ptr::dangling_mut::<c_void>();
    // SAFETY: every interface starts with the IUnknown vtable.
    let hr = unsafe { ((*(*u).lpVtbl).QueryInterface)(u, iid, &mut out) };
    (hr, out.cast())
}

/// A hardware device at feature level 11_0 with its context.
pub fn device() -> (*mut ID3D11Device, *mut ID3D11DeviceContext) {
    let mut dev = ptr::null_mut();
    let mut ctx = ptr::null_mut();
    let mut level = 0;
    let levels = [D3D_FEATURE_LEVEL_11_0];
    // SAFETY: valid pointers for every argument.
    let hr = unsafe {
        D3D11CreateDevice(
            ptr::null_mut(),
            D3D_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            levels.as_ptr(),
            1,
            D3D11_SDK_VERSION,
            &mut dev,
            &mut level,
            &mut ctx,
        )
    };
    assert_eq!(hr, S_OK);
    assert_eq!(level, D3D_FEATURE_LEVEL_11_0);
    (dev, ctx)
}

pub fn buffer_desc(bytes: u32, usage: D3D11_USAGE, bind: i32, cpu: i32) -> D3D11_BUFFER_DESC {
    D3D11_BUFFER_DESC {
        ByteWidth: bytes,
        Usage: usage,
        BindFlags: bind as u32,
        CPUAccessFlags: cpu as u32,
        MiscFlags: 0,
        StructureByteStride: 0,
    }
}

#[allow(clippy::too_many_arguments)] // One argument per member a test varies.
pub fn tex2d_desc(
    w: u32,
    h: u32,
    mips: u32,
    array: u32,
    format: DXGI_FORMAT,
    usage: D3D11_USAGE,
    bind: i32,
    cpu: i32,
) -> D3D11_TEXTURE2D_DESC {
    D3D11_TEXTURE2D_DESC {
        Width: w,
        Height: h,
        MipLevels: mips,
        ArraySize: array,
        Format: format,
        SampleDesc: DXGI_SAMPLE_DESC {
            Count: 1,
            Quality: 0,
        },
        Usage: usage,
        BindFlags: bind as u32,
        CPUAccessFlags: cpu as u32,
        MiscFlags: 0,
    }
}

/// Maps a subresource and returns the mapping.
pub fn map<R>(
    ctx: *mut ID3D11DeviceContext,
    r: *mut R,
    sub: u32,
    ty: D3D11_MAP,
) -> (HRESULT, D3D11_MAPPED_SUBRESOURCE) {
    let mut m = D3D11_MAPPED_SUBRESOURCE {
        pData: ptr::null_mut(),
        RowPitch: 0,
        DepthPitch: 0,
    };
    let hr = call!(ctx, Map(r.cast(), sub, ty, 0, &mut m));
    (hr, m)
}

/// The bytes at a mapped pointer.
pub fn bytes<'a>(p: *const c_void, len: usize) -> &'a [u8] {
    // SAFETY: tests pass pointers from Map/GetMemory that span `len` bytes.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), len) }
}

/// The backend this run's devices land on: `DXCL_ADAPTER=software` gives the software adapter
/// (host backend); unset or `vulkan` gives the first Vulkan device (lavapipe in CI; the tests
/// need one, scripts/deps.sh installs it).
pub fn expected_backend() -> DXCL_BACKEND_KIND {
    match std::env::var("DXCL_ADAPTER") {
        Ok(v) if v.eq_ignore_ascii_case("software") => DXCL_BACKEND_KIND_HOST,
        _ => DXCL_BACKEND_KIND_VULKAN,
    }
}

/// What a device's interop face says about its adapter.
pub fn adapter_info<D>(dev: *mut D) -> DXCL_ADAPTER_INFO {
    let (hr, interop): (_, *mut IDxclInteropDevice) = qi(dev, &IID_IDxclInteropDevice);
    assert_eq!(hr, S_OK);
    let mut info = DXCL_ADAPTER_INFO::default();
    assert_eq!(call!(interop, GetAdapterInfo(&mut info)), S_OK);
    release(interop);
    info
}

/// Checks the facts DXGI reports about an adapter against what the interop face says, for
/// either backend.
pub fn check_adapter_desc(desc: &DXGI_ADAPTER_DESC1, info: &DXCL_ADAPTER_INFO) {
    assert_eq!(
        (desc.AdapterLuid.LowPart, desc.AdapterLuid.HighPart),
        (info.AdapterLuid.LowPart, info.AdapterLuid.HighPart)
    );
    assert_eq!(
        (desc.VendorId, desc.DeviceId),
        (info.VendorId, info.DeviceId)
    );
    let software = desc.Flags & DXGI_ADAPTER_FLAG_SOFTWARE as u32 != 0;
    assert_eq!(
        software,
        info.Flags & DXCL_ADAPTER_FLAG_SOFTWARE as u32 != 0
    );
    assert_ne!(
        (desc.AdapterLuid.LowPart, desc.AdapterLuid.HighPart),
        (0, 0)
    );
    let len = desc.Description.iter().position(|&c| c == 0).unwrap_or(128);
    let name = String::from_utf16_lossy(&desc.Description[..len]);
    if info.Backend == DXCL_BACKEND_KIND_HOST {
        // Microsoft's software adapter ids, as WARP reports them.
        assert_eq!((desc.VendorId, desc.DeviceId), (0x1414, 0x8c));
        assert!(software);
        assert_eq!(name, "dxcl software adapter");
        assert_eq!(info.DeviceUuid, [0; 16]);
    } else {
        assert_eq!(info.Backend, DXCL_BACKEND_KIND_VULKAN);
        assert!(!name.is_empty() && name != "dxcl software adapter");
        assert_ne!(info.DeviceUuid, [0; 16]);
    }
}

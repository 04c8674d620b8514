//! The Direct3D 10 API driven through its vtables as a C program would: device creation, every
//! resource kind with initial data, Map/Update/Copy round trips, queries, reference counts,
//! QueryInterface rules between D3D10, D3D11, DXGI and interop, and errors.
// `call!` makes vtable calls; its arguments are plain values and pointers.
#![allow(clippy::macro_metavars_in_unsafe)]

mod common;
use common::*;
use dxcl_d3d::{
    D3D10CreateDevice, D3D10CreateDevice1, D3D10CreateDeviceAndSwapChain,
    D3D10CreateDeviceAndSwapChain1,
};
use std::ptr;

/// A D3D10 device created the usual way.
fn device10() -> *mut ID3D10Device {
    let mut dev = ptr::null_mut();
    // SAFETY: valid pointers for every argument.
    let hr = unsafe {
        D3D10CreateDevice(
            ptr::null_mut(),
            D3D10_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            D3D10_SDK_VERSION,
            &mut dev,
        )
    };
    assert_eq!(hr, S_OK);
    assert!(!dev.is_null());
    dev
}

/// `D3D10CreateDevice` with a dangling (non-null) out pointer, so clearing is visible.
fn create10(
    adapter: *mut IDXGIAdapter,
    ty: D3D10_DRIVER_TYPE,
    software: HMODULE,
    flags: u32,
    sdk: u32,
) -> (HRESULT, *mut ID3D10Device) {
    let mut dev: *mut ID3D10Device = ptr::dangling_mut();
    // SAFETY: valid pointers; `adapter` is null or one of ours or a test's fake.
    let hr = unsafe { D3D10CreateDevice(adapter, ty, software, flags, sdk, &mut dev) };
    (hr, dev)
}

fn buffer10(bytes: u32, usage: D3D10_USAGE, bind: i32, cpu: i32) -> D3D10_BUFFER_DESC {
    D3D10_BUFFER_DESC {
        ByteWidth: bytes,
        Usage: usage,
        BindFlags: bind as u32,
        CPUAccessFlags: cpu as u32,
        MiscFlags: 0,
    }
}

#[allow(clippy::too_many_arguments)] // One argument per member a test varies.
fn tex2d10(
    w: u32,
    h: u32,
    mips: u32,
    array: u32,
    format: DXGI_FORMAT,
    usage: D3D10_USAGE,
    bind: i32,
    cpu: i32,
) -> D3D10_TEXTURE2D_DESC {
    D3D10_TEXTURE2D_DESC {
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

fn create_buffer(
    dev: *mut ID3D10Device,
    d: &D3D10_BUFFER_DESC,
    init: Option<&D3D10_SUBRESOURCE_DATA>,
) -> (HRESULT, *mut ID3D10Buffer) {
    let mut b = ptr::dangling_mut();
    let p = init.map_or(ptr::null(), |i| i as *const _);
    (call!(dev, CreateBuffer(d, p, &mut b)), b)
}

fn create_tex2d(
    dev: *mut ID3D10Device,
    d: &D3D10_TEXTURE2D_DESC,
    init: Option<&[D3D10_SUBRESOURCE_DATA]>,
) -> (HRESULT, *mut ID3D10Texture2D) {
    let mut t = ptr::dangling_mut();
    let p = init.map_or(ptr::null(), |i| i.as_ptr());
    (call!(dev, CreateTexture2D(d, p, &mut t)), t)
}

fn sub(data: &[u8], pitch: u32, slice: u32) -> D3D10_SUBRESOURCE_DATA {
    D3D10_SUBRESOURCE_DATA {
        pSysMem: data.as_ptr().cast(),
        SysMemPitch: pitch,
        SysMemSlicePitch: slice,
    }
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(7).wrapping_add(seed))
        .collect()
}

/// Maps a buffer for reading and returns a copy of its bytes.
fn read_buffer(b: *mut ID3D10Buffer, len: usize) -> Vec<u8> {
    let mut p = ptr::null_mut();
    assert_eq!(call!(b, Map(D3D10_MAP_READ, 0, &mut p)), S_OK);
    let v = bytes(p, len).to_vec();
    call!(b, Unmap());
    v
}

fn staging_buffer(dev: *mut ID3D10Device, len: u32) -> *mut ID3D10Buffer {
    let d = buffer10(
        len,
        D3D10_USAGE_STAGING,
        0,
        D3D10_CPU_ACCESS_READ | D3D10_CPU_ACCESS_WRITE,
    );
    let (hr, b) = create_buffer(dev, &d, None);
    assert_eq!(hr, S_OK);
    b
}

// ---------------------------------------------------------------------------------------------

#[test]
fn create_device_rules() {
    // SDKVersion must be D3D10_SDK_VERSION; the out pointer is cleared on failure.
    let (hr, d) = create10(
        ptr::null_mut(),
        D3D10_DRIVER_TYPE_HARDWARE,
        ptr::null_mut(),
        0,
        D3D11_SDK_VERSION,
    );
    assert_eq!((hr, d), (E_INVALIDARG, ptr::null_mut()));
    // Validation only.
    // SAFETY: valid arguments, NULL ppDevice.
    let hr = unsafe {
        D3D10CreateDevice(
            ptr::null_mut(),
            D3D10_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            D3D10_SDK_VERSION,
            ptr::null_mut(),
        )
    };
    assert_eq!(hr, S_FALSE);
    // Every real driver type makes a device: HARDWARE on the first Vulkan adapter, REFERENCE and
    // WARP on the software adapter, each on what DXCL_ADAPTER leaves when that is absent.
    for ty in [
        D3D10_DRIVER_TYPE_HARDWARE,
        D3D10_DRIVER_TYPE_REFERENCE,
        D3D10_DRIVER_TYPE_WARP,
    ] {
        let (hr, d) = create10(ptr::null_mut(), ty, ptr::null_mut(), 0, D3D10_SDK_VERSION);
        assert_eq!(hr, S_OK, "driver type {ty}");
        let kind = adapter_info(d).Backend;
        match std::env::var("DXCL_ADAPTER").as_deref() {
            Ok("software") => assert_eq!(kind, DXCL_BACKEND_KIND_HOST),
            Ok("vulkan") => assert_eq!(kind, DXCL_BACKEND_KIND_VULKAN),
            _ if ty == D3D10_DRIVER_TYPE_HARDWARE => assert_eq!(kind, DXCL_BACKEND_KIND_VULKAN),
            _ => assert_eq!(kind, DXCL_BACKEND_KIND_HOST),
        }
        assert_eq!(release(d), 0);
    }
    // SOFTWARE needs a module; other types take none; NULL devices are not offered.
    let (hr, d) = create10(
        ptr::null_mut(),
        D3D10_DRIVER_TYPE_SOFTWARE,
        ptr::null_mut(),
        0,
        D3D10_SDK_VERSION,
    );
    assert_eq!((hr, d), (E_INVALIDARG, ptr::null_mut()));
    let module: HMODULE = ptr::dangling_mut();
    let (hr, _) = create10(
        ptr::null_mut(),
        D3D10_DRIVER_TYPE_HARDWARE,
        module,
        0,
        D3D10_SDK_VERSION,
    );
    assert_eq!(hr, E_INVALIDARG);
    let (hr, _) = create10(
        ptr::null_mut(),
        D3D10_DRIVER_TYPE_NULL,
        ptr::null_mut(),
        0,
        D3D10_SDK_VERSION,
    );
    assert_eq!(hr, DXGI_ERROR_UNSUPPORTED);
    let (hr, _) = create10(ptr::null_mut(), 4, ptr::null_mut(), 0, D3D10_SDK_VERSION);
    assert_eq!(hr, E_INVALIDARG);
    // Flags: only D3D10_CREATE_DEVICE_FLAG bits; GetCreationFlags returns them.
    let (hr, _) = create10(
        ptr::null_mut(),
        D3D10_DRIVER_TYPE_HARDWARE,
        ptr::null_mut(),
        0x40,
        D3D10_SDK_VERSION,
    );
    assert_eq!(hr, E_INVALIDARG);
    let flags = (D3D10_CREATE_DEVICE_SINGLETHREADED | D3D10_CREATE_DEVICE_BGRA_SUPPORT) as u32;
    let (hr, d) = create10(
        ptr::null_mut(),
        D3D10_DRIVER_TYPE_HARDWARE,
        ptr::null_mut(),
        flags,
        D3D10_SDK_VERSION,
    );
    assert_eq!(hr, S_OK);
    assert_eq!(call!(d, GetCreationFlags()), flags);
    assert_eq!(release(d), 0);
}

#[test]
fn create_device_on_an_adapter() {
    let mut f: *mut IDXGIFactory = ptr::null_mut();
    // SAFETY: valid pointers.
    let hr =
        unsafe { CreateDXGIFactory1(&IID_IDXGIFactory, (&mut f as *mut *mut IDXGIFactory).cast()) };
    assert_eq!(hr, S_OK);
    let mut a: *mut IDXGIAdapter = ptr::null_mut();
    assert_eq!(call!(f, EnumAdapters(0, &mut a)), S_OK);
    // D3D10: an adapter goes with DriverType HARDWARE (D3D11 says UNKNOWN).
    let (hr, d) = create10(
        a,
        D3D10_DRIVER_TYPE_HARDWARE,
        ptr::null_mut(),
        0,
        D3D10_SDK_VERSION,
    );
    assert_eq!(hr, S_OK);
    let (_, dxgi): (_, *mut IDXGIDevice) = qi(d, &IID_IDXGIDevice);
    let mut got: *mut IDXGIAdapter = ptr::null_mut();
    assert_eq!(call!(dxgi, GetAdapter(&mut got)), S_OK);
    assert_eq!(got, a);
    release(got);
    release(dxgi);
    assert_eq!(release(d), 0);
    let (hr, d) = create10(
        a,
        D3D10_DRIVER_TYPE_REFERENCE,
        ptr::null_mut(),
        0,
        D3D10_SDK_VERSION,
    );
    assert_eq!((hr, d), (E_INVALIDARG, ptr::null_mut()));
    // A pointer that is not one of our adapters.
    let mut fake = 0u64;
    let foreign = (&mut fake as *mut u64).cast::<IDXGIAdapter>();
    let (hr, _) = create10(
        foreign,
        D3D10_DRIVER_TYPE_HARDWARE,
        ptr::null_mut(),
        0,
        D3D10_SDK_VERSION,
    );
    assert_eq!(hr, E_INVALIDARG);
    release(a);
    release(f);
}

#[test]
fn swap_chain_and_device1_entry_points() {
    let mut d: *mut ID3D10Device = ptr::dangling_mut();
    let mut sc: *mut IDXGISwapChain = ptr::dangling_mut();
    // SAFETY: valid pointers; no swap chain asked for.
    let hr = unsafe {
        D3D10CreateDeviceAndSwapChain(
            ptr::null_mut(),
            D3D10_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            D3D10_SDK_VERSION,
            ptr::null_mut(),
            ptr::null_mut(),
            &mut d,
        )
    };
    assert_eq!(hr, S_OK);
    assert_eq!(release(d), 0);
    let mut desc = DXGI_SWAP_CHAIN_DESC::default();
    // SAFETY: valid pointers; a swap chain is asked for.
    let hr = unsafe {
        D3D10CreateDeviceAndSwapChain(
            ptr::null_mut(),
            D3D10_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            D3D10_SDK_VERSION,
            &mut desc,
            &mut sc,
            &mut d,
        )
    };
    assert_eq!(
        (hr, d, sc),
        (DXGI_ERROR_UNSUPPORTED, ptr::null_mut(), ptr::null_mut())
    );

    let create1 = |level, sdk| {
        let mut d: *mut ID3D10Device1 = ptr::dangling_mut();
        // SAFETY: valid pointers.
        let hr = unsafe {
            D3D10CreateDevice1(
                ptr::null_mut(),
                D3D10_DRIVER_TYPE_HARDWARE,
                ptr::null_mut(),
                0,
                level,
                sdk,
                &mut d,
            )
        };
        (hr, d)
    };
    for level in [D3D10_FEATURE_LEVEL_10_0, D3D10_FEATURE_LEVEL_10_1] {
        let (hr, d) = create1(level, D3D10_1_SDK_VERSION);
        assert_eq!(hr, S_OK);
        assert_eq!(call!(d, GetFeatureLevel()), level);
        assert_eq!(release(d), 0);
    }
    assert_eq!(
        create1(D3D10_FEATURE_LEVEL_9_3, D3D10_1_SDK_VERSION).0,
        E_NOTIMPL
    );
    assert_eq!(create1(0xb000, D3D10_1_SDK_VERSION).0, E_INVALIDARG);
    let (hr, d) = create1(D3D10_FEATURE_LEVEL_10_1, D3D10_SDK_VERSION);
    assert_eq!((hr, d), (E_INVALIDARG, ptr::null_mut()));
    let mut d1: *mut ID3D10Device1 = ptr::null_mut();
    // SAFETY: valid pointers; no swap chain asked for.
    let hr = unsafe {
        D3D10CreateDeviceAndSwapChain1(
            ptr::null_mut(),
            D3D10_DRIVER_TYPE_WARP,
            ptr::null_mut(),
            0,
            D3D10_FEATURE_LEVEL_10_1,
            D3D10_1_SDK_VERSION,
            ptr::null_mut(),
            ptr::null_mut(),
            &mut d1,
        )
    };
    assert_eq!(hr, S_OK);
    assert_eq!(release(d1), 0);

    // A D3D10CreateDevice device is a 10_0 device and answers ID3D10Device1 too.
    let dev = device10();
    let (hr, d1): (_, *mut ID3D10Device1) = qi(dev, &IID_ID3D10Device1);
    assert_eq!(hr, S_OK);
    assert_eq!(d1.cast::<ID3D10Device>(), dev);
    assert_eq!(call!(d1, GetFeatureLevel()), D3D10_FEATURE_LEVEL_10_0);
    release(d1);
    assert_eq!(release(dev), 0);
}

#[test]
fn device_identity_and_interfaces() {
    let dev = device10();
    let (hr, unk): (_, *mut IUnknown) = qi(dev, &IID_IUnknown);
    assert_eq!(hr, S_OK);
    assert_eq!(unk.cast::<ID3D10Device>(), dev);
    for iid in [IID_IDXGIObject, IID_IDXGIDevice, IID_IDXGIDevice1] {
        let (hr, p): (_, *mut IUnknown) = qi(dev, &iid);
        assert_eq!(hr, S_OK);
        let (_, u2): (_, *mut IUnknown) = qi(p, &IID_IUnknown);
        assert_eq!(u2, unk);
        let (_, back): (_, *mut ID3D10Device) = qi(p, &IID_ID3D10Device);
        assert_eq!(back, dev);
        release(back);
        release(u2);
        release(p);
    }
    let (hr, interop): (_, *mut IDxclInteropDevice) = qi(dev, &IID_IDxclInteropDevice);
    assert_eq!(hr, S_OK);
    let mut info = DXCL_ADAPTER_INFO::default();
    assert_eq!(call!(interop, GetAdapterInfo(&mut info)), S_OK);
    assert_eq!(info.Backend, expected_backend());
    release(interop);
    // Not a D3D11 device.
    for iid in [IID_ID3D11Device, IID_ID3D11DeviceChild, IID_ID3D10Buffer] {
        let (hr, p): (_, *mut IUnknown) = qi(dev, &iid);
        assert_eq!((hr, p), (E_NOINTERFACE, ptr::null_mut()));
    }
    release(unk);
    assert_eq!(add_ref(dev), 2);
    assert_eq!(release(dev), 1);
    assert_eq!(release(dev), 0);

    // And a D3D11 device is not a D3D10 device.
    let (dev11, ctx) = device();
    for iid in [IID_ID3D10Device, IID_ID3D10Device1] {
        let (hr, p): (_, *mut IUnknown) = qi(dev11, &iid);
        assert_eq!((hr, p), (E_NOINTERFACE, ptr::null_mut()));
    }
    release(ctx);
    assert_eq!(release(dev11), 0);
}

#[test]
fn resource_identity_refcounts_and_device() {
    let dev = device10();
    let d = buffer10(64, D3D10_USAGE_DEFAULT, D3D10_BIND_VERTEX_BUFFER, 0);
    let (hr, buf) = create_buffer(dev, &d, None);
    assert_eq!(hr, S_OK);
    // The buffer holds a public reference on its device.
    assert_eq!(add_ref(dev), 3);
    assert_eq!(release(dev), 2);

    let (_, unk): (_, *mut IUnknown) = qi(buf, &IID_IUnknown);
    assert_eq!(unk.cast::<ID3D10Buffer>(), buf);
    for iid in [IID_ID3D10DeviceChild, IID_ID3D10Resource, IID_ID3D10Buffer] {
        let (hr, p): (_, *mut ID3D10Buffer) = qi(buf, &iid);
        assert_eq!((hr, p), (S_OK, buf));
        release(p);
    }
    for iid in [
        IID_ID3D10Texture2D,
        IID_ID3D11DeviceChild,
        IID_ID3D11Resource,
        IID_ID3D11Buffer,
        IID_ID3D10Device,
    ] {
        let (hr, p): (_, *mut IUnknown) = qi(buf, &iid);
        assert_eq!((hr, p), (E_NOINTERFACE, ptr::null_mut()));
    }
    // DXGI and interop faces, with IUnknown identity.
    let (hr, res): (_, *mut IDXGIResource) = qi(buf, &IID_IDXGIResource);
    assert_eq!(hr, S_OK);
    let (_, u2): (_, *mut IUnknown) = qi(res, &IID_IUnknown);
    assert_eq!(u2, unk);
    let mut via_dxgi: *mut c_void = ptr::null_mut();
    assert_eq!(
        call!(res, base.GetDevice(&IID_ID3D10Device, &mut via_dxgi)),
        S_OK
    );
    assert_eq!(via_dxgi.cast::<ID3D10Device>(), dev);
    release(via_dxgi.cast::<IUnknown>());
    assert_eq!(
        call!(res, base.GetDevice(&IID_ID3D11Device, &mut via_dxgi)),
        E_NOINTERFACE
    );
    let (hr, interop): (_, *mut IDxclInteropResource) = qi(buf, &IID_IDxclInteropResource);
    assert_eq!(hr, S_OK);
    let (_, back): (_, *mut ID3D10Buffer) = qi(interop, &IID_ID3D10Buffer);
    assert_eq!(back, buf);
    release(back);
    release(interop);
    release(u2);
    release(res);
    release(unk);

    // GetDevice returns the D3D10 face, AddRef'd.
    let mut got = ptr::null_mut();
    call!(buf, base.base.GetDevice(&mut got));
    assert_eq!(got, dev);
    assert_eq!(release(got), 2);
    // Releasing the application's device leaves it alive for the buffer.
    assert_eq!(release(dev), 1);
    let mut dim = 0;
    call!(buf, base.GetType(&mut dim));
    assert_eq!(dim, D3D10_RESOURCE_DIMENSION_BUFFER);
    assert_eq!(release(buf), 0);
}

#[test]
fn buffer_round_trips_and_map_rules() {
    let dev = device10();
    const N: usize = 1000;
    let data = pattern(N, 5);
    let d = buffer10(N as u32, D3D10_USAGE_DEFAULT, D3D10_BIND_VERTEX_BUFFER, 0);
    let (hr, buf) = create_buffer(dev, &d, Some(&sub(&data, 0, 0)));
    assert_eq!(hr, S_OK);
    let st = staging_buffer(dev, N as u32);
    call!(dev, CopyResource(st.cast(), buf.cast()));
    assert_eq!(read_buffer(st, N), data);

    // UpdateSubresource on a box, then CopySubresourceRegion of that box to offset 100.
    let ten = [9u8, 8, 7, 6, 5, 4, 3, 2, 1, 0];
    let b = D3D10_BOX {
        left: 10,
        top: 0,
        front: 0,
        right: 20,
        bottom: 1,
        back: 1,
    };
    call!(
        dev,
        UpdateSubresource(buf.cast(), 0, &b, ten.as_ptr().cast(), 0, 0)
    );
    call!(
        dev,
        CopySubresourceRegion(st.cast(), 0, 100, 0, 0, buf.cast(), 0, &b)
    );
    let got = read_buffer(st, N);
    assert_eq!(&got[100..110], &ten);
    assert_eq!(&got[..100], &data[..100]);

    // Map rules: DEFAULT cannot be mapped; a missing out pointer; a subresource mapped twice.
    let mut p: *mut c_void = ptr::dangling_mut();
    assert_eq!(call!(buf, Map(D3D10_MAP_READ, 0, &mut p)), E_INVALIDARG);
    assert!(p.is_null());
    assert_eq!(
        call!(st, Map(D3D10_MAP_READ, 0, ptr::null_mut())),
        E_INVALIDARG
    );
    assert_eq!(call!(st, Map(D3D10_MAP_READ_WRITE, 0, &mut p)), S_OK);
    assert_eq!(call!(st, Map(D3D10_MAP_READ, 0, &mut p)), E_INVALIDARG);
    call!(st, Unmap());
    call!(st, Unmap()); // not mapped: ignored
    assert_eq!(
        call!(st, Map(D3D10_MAP_WRITE_DISCARD, 0, &mut p)),
        E_INVALIDARG
    );
    assert_eq!(call!(st, Map(6, 0, &mut p)), E_INVALIDARG);
    assert_eq!(call!(st, Map(D3D10_MAP_READ, 1, &mut p)), E_INVALIDARG);
    assert_eq!(
        call!(
            st,
            Map(D3D10_MAP_READ, D3D10_MAP_FLAG_DO_NOT_WAIT as u32, &mut p)
        ),
        S_OK
    );
    call!(st, Unmap());

    // Dynamic buffers: WRITE_DISCARD; NO_OVERWRITE only for vertex and index buffers.
    let cb = buffer10(
        64,
        D3D10_USAGE_DYNAMIC,
        D3D10_BIND_CONSTANT_BUFFER,
        D3D10_CPU_ACCESS_WRITE,
    );
    let (hr, cbuf) = create_buffer(dev, &cb, None);
    assert_eq!(hr, S_OK);
    assert_eq!(call!(cbuf, Map(D3D10_MAP_WRITE_DISCARD, 0, &mut p)), S_OK);
    assert!(!p.is_null());
    call!(cbuf, Unmap());
    // Constant buffers update whole: a box is not valid and the call is ignored.
    let dcb = buffer10(64, D3D10_USAGE_DEFAULT, D3D10_BIND_CONSTANT_BUFFER, 0);
    let (_, dbuf) = create_buffer(dev, &dcb, None);
    let st64 = staging_buffer(dev, 64);
    let ones = [1u8; 64];
    let whole = D3D10_BOX {
        left: 0,
        top: 0,
        front: 0,
        right: 64,
        bottom: 1,
        back: 1,
    };
    call!(
        dev,
        UpdateSubresource(dbuf.cast(), 0, &whole, ones.as_ptr().cast(), 0, 0)
    );
    call!(dev, CopyResource(st64.cast(), dbuf.cast()));
    assert_eq!(read_buffer(st64, 64), vec![0u8; 64]);
    call!(
        dev,
        UpdateSubresource(dbuf.cast(), 0, ptr::null(), ones.as_ptr().cast(), 0, 0)
    );
    call!(dev, CopyResource(st64.cast(), dbuf.cast()));
    assert_eq!(read_buffer(st64, 64), ones);
    assert_eq!(release(dbuf), 0);
    assert_eq!(release(st64), 0);
    assert_eq!(
        call!(cbuf, Map(D3D10_MAP_WRITE_NO_OVERWRITE, 0, &mut p)),
        E_INVALIDARG
    );
    assert_eq!(
        call!(
            cbuf,
            Map(
                D3D10_MAP_WRITE_DISCARD,
                D3D10_MAP_FLAG_DO_NOT_WAIT as u32,
                &mut p
            )
        ),
        E_INVALIDARG
    );
    let vb = buffer10(
        64,
        D3D10_USAGE_DYNAMIC,
        D3D10_BIND_VERTEX_BUFFER,
        D3D10_CPU_ACCESS_WRITE,
    );
    let (_, vbuf) = create_buffer(dev, &vb, None);
    assert_eq!(
        call!(vbuf, Map(D3D10_MAP_WRITE_NO_OVERWRITE, 0, &mut p)),
        S_OK
    );
    call!(vbuf, Unmap());
    assert_eq!(call!(vbuf, Map(D3D10_MAP_READ, 0, &mut p)), E_INVALIDARG);

    // GetDesc returns the D3D10 description.
    let mut got = D3D10_BUFFER_DESC::default();
    call!(vbuf, GetDesc(&mut got));
    assert_eq!(got, vb);

    for r in [buf, st, cbuf, vbuf] {
        assert_eq!(release(r), 0);
    }
    assert_eq!(release(dev), 0);
}

#[test]
fn buffer_creation_errors() {
    let dev = device10();
    let good = buffer10(64, D3D10_USAGE_DEFAULT, D3D10_BIND_VERTEX_BUFFER, 0);
    assert_eq!(
        call!(dev, CreateBuffer(&good, ptr::null(), ptr::null_mut())),
        S_FALSE
    );
    let mut b: *mut ID3D10Buffer = ptr::dangling_mut();
    assert_eq!(
        call!(dev, CreateBuffer(ptr::null(), ptr::null(), &mut b)),
        E_INVALIDARG
    );
    assert!(b.is_null());
    let cases = [
        // IMMUTABLE without initial data.
        buffer10(64, D3D10_USAGE_IMMUTABLE, D3D10_BIND_VERTEX_BUFFER, 0),
        // A constant buffer that is not a multiple of 16 bytes.
        buffer10(60, D3D10_USAGE_DEFAULT, D3D10_BIND_CONSTANT_BUFFER, 0),
        // D3D11's UNORDERED_ACCESS bind does not exist in D3D10.
        buffer10(64, D3D10_USAGE_DEFAULT, 0x80, 0),
        // DYNAMIC without CPU write; STAGING without CPU access; DEFAULT with CPU access.
        buffer10(64, D3D10_USAGE_DYNAMIC, D3D10_BIND_VERTEX_BUFFER, 0),
        buffer10(64, D3D10_USAGE_STAGING, 0, 0),
        buffer10(64, D3D10_USAGE_DEFAULT, 0, D3D10_CPU_ACCESS_READ),
        buffer10(0, D3D10_USAGE_DEFAULT, D3D10_BIND_VERTEX_BUFFER, 0),
    ];
    for (i, d) in cases.iter().enumerate() {
        let (hr, b) = create_buffer(dev, d, None);
        assert_eq!((hr, b), (E_INVALIDARG, ptr::null_mut()), "case {i}");
    }
    // D3D11's BUFFER_STRUCTURED (0x40) and TEXTURECUBE on a buffer are invalid misc flags.
    for misc in [0x40, D3D10_RESOURCE_MISC_TEXTURECUBE as u32] {
        let d = D3D10_BUFFER_DESC {
            MiscFlags: misc,
            ..good
        };
        assert_eq!(create_buffer(dev, &d, None).0, E_INVALIDARG);
    }
    // An IMMUTABLE buffer with data is fine; its misc flags come back in D3D10 numbering.
    let data = pattern(64, 1);
    let imm = buffer10(64, D3D10_USAGE_IMMUTABLE, D3D10_BIND_VERTEX_BUFFER, 0);
    let (hr, ib) = create_buffer(dev, &imm, Some(&sub(&data, 0, 0)));
    assert_eq!(hr, S_OK);
    let st = staging_buffer(dev, 64);
    call!(dev, CopyResource(st.cast(), ib.cast()));
    assert_eq!(read_buffer(st, 64), data);
    // A copy into an IMMUTABLE resource is ignored.
    let zeros = vec![0u8; 64];
    let (_, zb) = create_buffer(
        dev,
        &buffer10(64, D3D10_USAGE_DEFAULT, D3D10_BIND_VERTEX_BUFFER, 0),
        Some(&sub(&zeros, 0, 0)),
    );
    call!(dev, CopyResource(ib.cast(), zb.cast()));
    call!(dev, CopyResource(st.cast(), ib.cast()));
    assert_eq!(read_buffer(st, 64), data);
    for r in [ib, st, zb] {
        assert_eq!(release(r), 0);
    }
    assert_eq!(release(dev), 0);
}

#[test]
fn texture2d_mips_initial_data_and_map() {
    let dev = device10();
    // 16x8 RGBA with 2 mips; pitches wider than a row.
    let mut td = tex2d10(
        16,
        8,
        2,
        1,
        DXGI_FORMAT_R8G8B8A8_UINT,
        D3D10_USAGE_DEFAULT,
        D3D10_BIND_SHADER_RESOURCE,
        0,
    );
    let m0 = pattern(80 * 8, 3);
    let m1 = pattern(40 * 4, 11);
    let init = [sub(&m0, 80, 0), sub(&m1, 40, 0)];
    let (hr, tex) = create_tex2d(dev, &td, Some(&init));
    assert_eq!(hr, S_OK);
    td.Usage = D3D10_USAGE_STAGING;
    td.BindFlags = 0;
    td.CPUAccessFlags = (D3D10_CPU_ACCESS_READ | D3D10_CPU_ACCESS_WRITE) as u32;
    let (hr, st) = create_tex2d(dev, &td, None);
    assert_eq!(hr, S_OK);
    call!(dev, CopyResource(st.cast(), tex.cast()));
    for (s, src, pitch, w, h) in [(0, &m0, 80, 16, 8), (1, &m1, 40, 8, 4)] {
        let mut m = D3D10_MAPPED_TEXTURE2D {
            pData: ptr::null_mut(),
            RowPitch: 0,
        };
        assert_eq!(call!(st, Map(s, D3D10_MAP_READ, 0, &mut m)), S_OK);
        assert!(m.RowPitch >= w * 4);
        for y in 0..h as usize {
            // SAFETY: the mapping spans `h` rows of `RowPitch` bytes.
            let row = bytes(
                unsafe { m.pData.cast::<u8>().add(y * m.RowPitch as usize) }.cast(),
                w as usize * 4,
            );
            assert_eq!(
                row,
                &src[y * pitch..y * pitch + w as usize * 4],
                "sub {s} row {y}"
            );
        }
        call!(st, Unmap(s));
    }
    // Map errors fill the structure with zeros.
    let mut m = D3D10_MAPPED_TEXTURE2D {
        pData: ptr::dangling_mut(),
        RowPitch: 7,
    };
    assert_eq!(call!(tex, Map(0, D3D10_MAP_READ, 0, &mut m)), E_INVALIDARG);
    assert_eq!((m.pData, m.RowPitch), (ptr::null_mut(), 0));
    assert_eq!(call!(st, Map(2, D3D10_MAP_READ, 0, &mut m)), E_INVALIDARG);

    // Update a 2x2 box of mip 1 and read it back through a region copy.
    let patch = [0xabu8; 8 * 2];
    let b = D3D10_BOX {
        left: 2,
        top: 1,
        front: 0,
        right: 4,
        bottom: 3,
        back: 1,
    };
    call!(
        dev,
        UpdateSubresource(tex.cast(), 1, &b, patch.as_ptr().cast(), 8, 0)
    );
    call!(
        dev,
        CopySubresourceRegion(st.cast(), 1, 0, 0, 0, tex.cast(), 1, &b)
    );
    let mut m = D3D10_MAPPED_TEXTURE2D {
        pData: ptr::null_mut(),
        RowPitch: 0,
    };
    assert_eq!(call!(st, Map(1, D3D10_MAP_READ, 0, &mut m)), S_OK);
    for y in 0..2 {
        // SAFETY: inside the mapped subresource.
        let row = bytes(
            unsafe { m.pData.cast::<u8>().add(y * m.RowPitch as usize) }.cast(),
            8,
        );
        assert_eq!(row, &patch[..8]);
    }
    call!(st, Unmap(1));

    let mut got = D3D10_TEXTURE2D_DESC::default();
    call!(st, GetDesc(&mut got));
    assert_eq!(got, td);
    let mut dim = 0;
    call!(st, base.GetType(&mut dim));
    assert_eq!(dim, D3D10_RESOURCE_DIMENSION_TEXTURE2D);
    assert_eq!(release(tex), 0);
    assert_eq!(release(st), 0);
    assert_eq!(release(dev), 0);
}

#[test]
fn texture1d_and_texture3d() {
    let dev = device10();
    // A 1D array of 2 slices, full mip chain of 8 texels (4 levels), R32_FLOAT, initial data.
    let d1 = D3D10_TEXTURE1D_DESC {
        Width: 8,
        MipLevels: 0,
        ArraySize: 2,
        Format: DXGI_FORMAT_R32_FLOAT,
        Usage: D3D10_USAGE_STAGING,
        BindFlags: 0,
        CPUAccessFlags: (D3D10_CPU_ACCESS_READ | D3D10_CPU_ACCESS_WRITE) as u32,
        MiscFlags: 0,
    };
    let levels: Vec<Vec<u8>> = (0..8)
        .map(|i| pattern(4 * (8 >> (i % 4)), i as u8))
        .collect();
    let init: Vec<_> = levels.iter().map(|l| sub(l, 0, 0)).collect();
    let mut t1 = ptr::dangling_mut();
    assert_eq!(
        call!(dev, CreateTexture1D(&d1, init.as_ptr(), &mut t1)),
        S_OK
    );
    let mut got = D3D10_TEXTURE1D_DESC::default();
    call!(t1, GetDesc(&mut got));
    assert_eq!(got.MipLevels, 4);
    for (s, l) in levels.iter().enumerate() {
        let mut p = ptr::null_mut();
        assert_eq!(call!(t1, Map(s as u32, D3D10_MAP_READ, 0, &mut p)), S_OK);
        assert_eq!(bytes(p, l.len()), &l[..], "subresource {s}");
        call!(t1, Unmap(s as u32));
    }
    let mut p = ptr::null_mut();
    assert_eq!(call!(t1, Map(8, D3D10_MAP_READ, 0, &mut p)), E_INVALIDARG);
    assert_eq!(release(t1), 0);

    // A 4x4x4 R32_FLOAT volume with initial data, copied to staging and mapped.
    let vol_data = pattern(4 * 4 * 4 * 4, 9);
    let d3 = D3D10_TEXTURE3D_DESC {
        Width: 4,
        Height: 4,
        Depth: 4,
        MipLevels: 1,
        Format: DXGI_FORMAT_R32_FLOAT,
        Usage: D3D10_USAGE_DEFAULT,
        BindFlags: D3D10_BIND_SHADER_RESOURCE as u32,
        CPUAccessFlags: 0,
        MiscFlags: 0,
    };
    let mut vol = ptr::dangling_mut();
    let init = sub(&vol_data, 16, 64);
    assert_eq!(call!(dev, CreateTexture3D(&d3, &init, &mut vol)), S_OK);
    let ds = D3D10_TEXTURE3D_DESC {
        Usage: D3D10_USAGE_STAGING,
        BindFlags: 0,
        CPUAccessFlags: (D3D10_CPU_ACCESS_READ | D3D10_CPU_ACCESS_WRITE) as u32,
        ..d3
    };
    let mut st = ptr::dangling_mut();
    assert_eq!(call!(dev, CreateTexture3D(&ds, ptr::null(), &mut st)), S_OK);
    call!(dev, CopyResource(st.cast(), vol.cast()));
    let mut m = D3D10_MAPPED_TEXTURE3D {
        pData: ptr::null_mut(),
        RowPitch: 0,
        DepthPitch: 0,
    };
    assert_eq!(call!(st, Map(0, D3D10_MAP_READ_WRITE, 0, &mut m)), S_OK);
    assert!(m.RowPitch >= 16 && m.DepthPitch >= 4 * m.RowPitch);
    for z in 0..4usize {
        for y in 0..4usize {
            let off = z * m.DepthPitch as usize + y * m.RowPitch as usize;
            // SAFETY: inside the mapped subresource.
            let row = bytes(unsafe { m.pData.cast::<u8>().add(off) }.cast(), 16);
            let src = z * 64 + y * 16;
            assert_eq!(row, &vol_data[src..src + 16]);
        }
    }
    // Write through the mapping and read it back.
    // SAFETY: inside the mapped subresource, 4-byte aligned.
    unsafe {
        *m.pData
            .cast::<u8>()
            .add(3 * m.DepthPitch as usize)
            .cast::<f32>()
            .add(1) = 42.0
    };
    call!(st, Unmap(0));
    assert_eq!(call!(st, Map(0, D3D10_MAP_READ, 0, &mut m)), S_OK);
    // SAFETY: as above.
    let v = unsafe {
        *m.pData
            .cast::<u8>()
            .add(3 * m.DepthPitch as usize)
            .cast::<f32>()
            .add(1)
    };
    assert_eq!(v, 42.0);
    call!(st, Unmap(0));
    let mut got = D3D10_TEXTURE3D_DESC::default();
    call!(st, GetDesc(&mut got));
    assert_eq!(got, ds);
    let mut dim = 0;
    call!(st, base.GetType(&mut dim));
    assert_eq!(dim, D3D10_RESOURCE_DIMENSION_TEXTURE3D);
    assert_eq!(release(vol), 0);
    assert_eq!(release(st), 0);
    assert_eq!(release(dev), 0);
}

#[test]
fn texture_rules_of_direct3d10() {
    let dev = device10();
    let base = tex2d10(
        16,
        16,
        1,
        1,
        DXGI_FORMAT_R8G8B8A8_UNORM,
        D3D10_USAGE_DEFAULT,
        D3D10_BIND_SHADER_RESOURCE,
        0,
    );
    assert_eq!(
        call!(dev, CreateTexture2D(&base, ptr::null(), ptr::null_mut())),
        S_FALSE
    );
    let invalid = [
        // Feature level 10 limits: 8192 texels, 512 slices.
        D3D10_TEXTURE2D_DESC {
            Width: 8193,
            ..base
        },
        D3D10_TEXTURE2D_DESC {
            ArraySize: 513,
            ..base
        },
        // Formats a D3D10 device lacks.
        D3D10_TEXTURE2D_DESC {
            Format: DXGI_FORMAT_BC7_UNORM,
            ..base
        },
        D3D10_TEXTURE2D_DESC {
            Format: DXGI_FORMAT_B5G6R5_UNORM,
            ..base
        },
        // No unordered access in D3D10; no D3D11 misc bits.
        D3D10_TEXTURE2D_DESC {
            BindFlags: 0x80,
            ..base
        },
        D3D10_TEXTURE2D_DESC {
            MiscFlags: 0x100,
            ..base
        },
        // A cube array needs Direct3D 10.1.
        D3D10_TEXTURE2D_DESC {
            ArraySize: 12,
            MiscFlags: D3D10_RESOURCE_MISC_TEXTURECUBE as u32,
            ..base
        },
        // Shared rules: too many mips, DYNAMIC with mips, a zero width.
        D3D10_TEXTURE2D_DESC {
            MipLevels: 6,
            ..base
        },
        D3D10_TEXTURE2D_DESC { Width: 0, ..base },
    ];
    for (i, d) in invalid.iter().enumerate() {
        let (hr, t) = create_tex2d(dev, d, None);
        assert_eq!((hr, t), (E_INVALIDARG, ptr::null_mut()), "case {i}");
    }
    // D3D10's SHARED_KEYEDMUTEX (0x10) is understood and reported as not implemented.
    let km = D3D10_TEXTURE2D_DESC {
        MiscFlags: D3D10_RESOURCE_MISC_SHARED_KEYEDMUTEX as u32,
        ..base
    };
    assert_eq!(create_tex2d(dev, &km, None).0, E_NOTIMPL);
    // Cube maps and shared textures keep their D3D10 misc flags.
    for (misc, array) in [
        (D3D10_RESOURCE_MISC_TEXTURECUBE, 6),
        (D3D10_RESOURCE_MISC_SHARED, 1),
    ] {
        let d = D3D10_TEXTURE2D_DESC {
            ArraySize: array,
            MiscFlags: misc as u32,
            ..base
        };
        let (hr, t) = create_tex2d(dev, &d, None);
        assert_eq!(hr, S_OK);
        let mut got = D3D10_TEXTURE2D_DESC::default();
        call!(t, GetDesc(&mut got));
        assert_eq!(got, d);
        assert_eq!(release(t), 0);
    }
    // Initial data with a pitch shorter than a row.
    let px = pattern(16 * 16 * 4, 0);
    let short = [sub(&px, 32, 0)];
    assert_eq!(create_tex2d(dev, &base, Some(&short)).0, E_INVALIDARG);
    assert_eq!(release(dev), 0);

    // A 10.1 device takes cube arrays.
    let mut d1: *mut ID3D10Device1 = ptr::null_mut();
    // SAFETY: valid pointers.
    let hr = unsafe {
        D3D10CreateDevice1(
            ptr::null_mut(),
            D3D10_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            D3D10_FEATURE_LEVEL_10_1,
            D3D10_1_SDK_VERSION,
            &mut d1,
        )
    };
    assert_eq!(hr, S_OK);
    let cubes = D3D10_TEXTURE2D_DESC {
        ArraySize: 12,
        MiscFlags: D3D10_RESOURCE_MISC_TEXTURECUBE as u32,
        ..base
    };
    let (hr, t) = create_tex2d(d1.cast(), &cubes, None);
    assert_eq!(hr, S_OK);
    assert_eq!(release(t), 0);
    assert_eq!(release(d1), 0);
}

#[test]
fn resources_of_other_devices_and_apis_are_ignored() {
    let dev = device10();
    let other = device10();
    let (dev11, ctx) = device();
    let data = pattern(64, 1);
    let vb = buffer10(64, D3D10_USAGE_DEFAULT, D3D10_BIND_VERTEX_BUFFER, 0);
    let (_, src) = create_buffer(dev, &vb, Some(&sub(&data, 0, 0)));
    let (_, foreign_src) = create_buffer(other, &vb, Some(&sub(&data, 0, 0)));
    let st = staging_buffer(dev, 64);
    let zeros = vec![0u8; 64];
    let mut p = ptr::null_mut();
    assert_eq!(call!(st, Map(D3D10_MAP_WRITE, 0, &mut p)), S_OK);
    // SAFETY: the mapping spans 64 bytes.
    unsafe { ptr::write_bytes(p.cast::<u8>(), 0, 64) };
    call!(st, Unmap());

    // Another D3D10 device's buffer, and a D3D11 buffer, as sources: ignored.
    call!(dev, CopyResource(st.cast(), foreign_src.cast()));
    assert_eq!(read_buffer(st, 64), zeros);
    let d11 = D3D11_BUFFER_DESC {
        ByteWidth: 64,
        Usage: D3D11_USAGE_DEFAULT,
        BindFlags: D3D11_BIND_VERTEX_BUFFER as u32,
        ..Default::default()
    };
    let init11 = D3D11_SUBRESOURCE_DATA {
        pSysMem: data.as_ptr().cast(),
        SysMemPitch: 0,
        SysMemSlicePitch: 0,
    };
    let mut b11: *mut ID3D11Buffer = ptr::null_mut();
    assert_eq!(call!(dev11, CreateBuffer(&d11, &init11, &mut b11)), S_OK);
    call!(dev, CopyResource(st.cast(), b11.cast()));
    call!(
        dev,
        CopySubresourceRegion(st.cast(), 0, 0, 0, 0, b11.cast(), 0, ptr::null())
    );
    call!(
        dev,
        UpdateSubresource(b11.cast(), 0, ptr::null(), zeros.as_ptr().cast(), 0, 0)
    );
    assert_eq!(read_buffer(st, 64), zeros);
    // A D3D10 buffer is no more a D3D11 resource: the D3D11 context ignores it.
    let d11s = D3D11_BUFFER_DESC {
        ByteWidth: 64,
        Usage: D3D11_USAGE_STAGING,
        CPUAccessFlags: D3D11_CPU_ACCESS_READ as u32,
        ..Default::default()
    };
    let mut s11: *mut ID3D11Buffer = ptr::null_mut();
    assert_eq!(
        call!(dev11, CreateBuffer(&d11s, ptr::null(), &mut s11)),
        S_OK
    );
    call!(ctx, CopyResource(s11.cast(), src.cast()));
    let (hr, m) = map(ctx, s11, 0, D3D11_MAP_READ);
    assert_eq!(hr, S_OK);
    assert_eq!(bytes(m.pData, 64), &zeros[..]);
    call!(ctx, Unmap(s11.cast(), 0));
    let (hr, _) = map(ctx, src, 0, D3D11_MAP_READ);
    assert_eq!(hr, E_INVALIDARG);
    // A D3D11 buffer does not answer D3D10 interfaces.
    let (hr, none): (_, *mut IUnknown) = qi(b11, &IID_ID3D10Buffer);
    assert_eq!((hr, none), (E_NOINTERFACE, ptr::null_mut()));
    // The source itself still copies.
    call!(dev, CopyResource(st.cast(), src.cast()));
    assert_eq!(read_buffer(st, 64), data);

    for r in [src, st] {
        assert_eq!(release(r), 0);
    }
    assert_eq!(release(foreign_src), 0);
    release(b11);
    release(s11);
    release(ctx);
    assert_eq!(release(dev11), 0);
    assert_eq!(release(other), 0);
    assert_eq!(release(dev), 0);
}

/// Calls `get_data` until it stops answering S_FALSE, and expects S_OK.
fn poll_s_ok(mut get_data: impl FnMut() -> HRESULT) {
    for _ in 0..10_000_000 {
        match get_data() {
            S_FALSE => std::thread::yield_now(),
            hr => return assert_eq!(hr, S_OK),
        }
    }
    panic!("the query never completed");
}

#[test]
fn queries() {
    let dev = device10();
    let qd = D3D10_QUERY_DESC {
        Query: D3D10_QUERY_EVENT,
        MiscFlags: 0,
    };
    assert_eq!(call!(dev, CreateQuery(&qd, ptr::null_mut())), S_FALSE);
    let mut q: *mut ID3D10Query = ptr::dangling_mut();
    assert_eq!(call!(dev, CreateQuery(&qd, &mut q)), S_OK);
    assert_eq!(call!(q, base.GetDataSize()), 4);
    let mut done: BOOL = 0;
    let sz = size_of::<BOOL>() as u32;
    // Never issued.
    assert_eq!(
        call!(q, base.GetData((&mut done as *mut BOOL).cast(), sz, 0)),
        DXGI_ERROR_INVALID_CALL
    );
    call!(q, base.End());
    // Wrong size, unknown flags.
    assert_eq!(
        call!(q, base.GetData((&mut done as *mut BOOL).cast(), 8, 0)),
        E_INVALIDARG
    );
    assert_eq!(
        call!(q, base.GetData((&mut done as *mut BOOL).cast(), sz, 2)),
        E_INVALIDARG
    );
    let mut hr = S_FALSE;
    for _ in 0..1_000_000 {
        hr = call!(q, base.GetData((&mut done as *mut BOOL).cast(), sz, 0));
        if hr != S_FALSE {
            break;
        }
    }
    assert_eq!((hr, done), (S_OK, 1));
    let mut got = D3D10_QUERY_DESC::default();
    call!(q, GetDesc(&mut got));
    assert_eq!(got, qd);

    // Identity and device: the query is a D3D10 object holding its device.
    let (_, unk): (_, *mut IUnknown) = qi(q, &IID_IUnknown);
    assert_eq!(unk.cast::<ID3D10Query>(), q);
    release(unk);
    for iid in [IID_ID3D10Asynchronous, IID_ID3D10DeviceChild] {
        let (hr, p): (_, *mut ID3D10Query) = qi(q, &iid);
        assert_eq!((hr, p), (S_OK, q));
        release(p);
    }
    for iid in [IID_ID3D11Query, IID_ID3D11Asynchronous, IID_ID3D10Predicate] {
        let (hr, p): (_, *mut IUnknown) = qi(q, &iid);
        assert_eq!((hr, p), (E_NOINTERFACE, ptr::null_mut()));
    }
    let mut owner = ptr::null_mut();
    call!(q, base.base.GetDevice(&mut owner));
    assert_eq!(owner, dev);
    release(owner);

    // Timestamps and disjoint brackets.
    let tq = D3D10_QUERY_DESC {
        Query: D3D10_QUERY_TIMESTAMP,
        MiscFlags: 0,
    };
    let mut t = ptr::null_mut();
    assert_eq!(call!(dev, CreateQuery(&tq, &mut t)), S_OK);
    call!(t, base.End());
    let mut ts = 0u64;
    // Timestamps and the disjoint query are fences too: S_FALSE until the queue (which other
    // tests share) reaches them; GetData flushes, so polling ends.
    poll_s_ok(|| call!(t, base.GetData((&mut ts as *mut u64).cast(), 8, 0)));
    assert_eq!(release(t), 0);
    let dq = D3D10_QUERY_DESC {
        Query: D3D10_QUERY_TIMESTAMP_DISJOINT,
        MiscFlags: 0,
    };
    assert_eq!(call!(dev, CreateQuery(&dq, &mut t)), S_OK);
    call!(t, base.Begin());
    call!(t, base.End());
    let mut dj = D3D10_QUERY_DATA_TIMESTAMP_DISJOINT::default();
    let dsz = size_of::<D3D10_QUERY_DATA_TIMESTAMP_DISJOINT>() as u32;
    assert_eq!(call!(t, base.GetDataSize()), dsz);
    poll_s_ok(|| {
        call!(
            t,
            base.GetData(
                (&mut dj as *mut D3D10_QUERY_DATA_TIMESTAMP_DISJOINT).cast(),
                dsz,
                0
            )
        )
    });
    assert_eq!((dj.Frequency, dj.Disjoint), (1_000_000_000, 0));
    assert_eq!(release(t), 0);

    // Errors: a missing desc, values past D3D10_QUERY, a misc flag on a non-predicate, and
    // pipeline queries this runtime does not implement.
    assert_eq!(call!(dev, CreateQuery(ptr::null(), &mut t)), E_INVALIDARG);
    assert!(t.is_null());
    for (kind, misc, want) in [
        (8, 0, E_INVALIDARG),
        (-1, 0, E_INVALIDARG),
        (
            D3D10_QUERY_EVENT,
            D3D10_QUERY_MISC_PREDICATEHINT as u32,
            E_INVALIDARG,
        ),
        (D3D10_QUERY_OCCLUSION, 0, E_NOTIMPL),
    ] {
        let d = D3D10_QUERY_DESC {
            Query: kind,
            MiscFlags: misc,
        };
        assert_eq!(call!(dev, CreateQuery(&d, &mut t)), want, "query {kind}");
    }
    assert_eq!(release(q), 0);
    assert_eq!(release(dev), 0);
}

#[test]
fn device_methods() {
    let dev = device10();
    let mut bits = 0;
    assert_eq!(
        call!(
            dev,
            CheckFormatSupport(DXGI_FORMAT_R8G8B8A8_UNORM, &mut bits)
        ),
        S_OK
    );
    let want = (D3D10_FORMAT_SUPPORT_TEXTURE2D | D3D10_FORMAT_SUPPORT_CPU_LOCKABLE) as u32;
    assert_eq!(bits & want, want);
    assert_eq!(bits & !0x1ff_ffff, 0, "no D3D11-only bits");
    for f in [
        DXGI_FORMAT_BC7_UNORM,
        DXGI_FORMAT_B5G6R5_UNORM,
        DXGI_FORMAT_UNKNOWN,
    ] {
        assert_eq!(call!(dev, CheckFormatSupport(f, &mut bits)), E_FAIL);
        assert_eq!(bits, 0);
    }
    assert_eq!(
        call!(
            dev,
            CheckFormatSupport(DXGI_FORMAT_R8G8B8A8_UNORM, ptr::null_mut())
        ),
        E_INVALIDARG
    );
    let mut levels = 99;
    assert_eq!(
        call!(
            dev,
            CheckMultisampleQualityLevels(DXGI_FORMAT_R8G8B8A8_UNORM, 1, &mut levels)
        ),
        S_OK
    );
    assert!(levels >= 1);
    assert_eq!(
        call!(
            dev,
            CheckMultisampleQualityLevels(DXGI_FORMAT_R8G8B8A8_UNORM, 0, &mut levels)
        ),
        E_FAIL
    );
    assert_eq!(levels, 0);

    assert_eq!(call!(dev, GetExceptionMode()), 0);
    assert_eq!(call!(dev, SetExceptionMode(2)), E_INVALIDARG);
    assert_eq!(
        call!(
            dev,
            SetExceptionMode(D3D10_RAISE_FLAG_DRIVER_INTERNAL_ERROR as u32)
        ),
        S_OK
    );
    assert_eq!(call!(dev, GetExceptionMode()), 1);
    assert_eq!(call!(dev, GetDeviceRemovedReason()), S_OK);
    call!(dev, Flush());
    call!(dev, ClearState());

    // Private data is shared by the device's D3D10 and DXGI faces.
    let guid = GUID {
        Data1: 0x1234,
        Data2: 1,
        Data3: 2,
        Data4: [3; 8],
    };
    let v = 0xfeed_u32;
    assert_eq!(
        call!(dev, SetPrivateData(&guid, 4, (&v as *const u32).cast())),
        S_OK
    );
    let (_, dxgi): (_, *mut IDXGIObject) = qi(dev, &IID_IDXGIObject);
    let mut out = 0u32;
    let mut size = 4;
    assert_eq!(
        call!(
            dxgi,
            GetPrivateData(&guid, &mut size, (&mut out as *mut u32).cast())
        ),
        S_OK
    );
    assert_eq!(out, v);
    release(dxgi);

    // Pipeline getters report the empty state; unimplemented creators say so.
    let mut shader: *mut ID3D10PixelShader = ptr::dangling_mut();
    call!(dev, PSGetShader(&mut shader));
    assert!(shader.is_null());
    let mut cbs = [ptr::dangling_mut::<ID3D10Buffer>(); 2];
    call!(dev, VSGetConstantBuffers(0, 2, cbs.as_mut_ptr()));
    assert_eq!(cbs, [ptr::null_mut(); 2]);
    let mut n = 5;
    call!(dev, RSGetViewports(&mut n, ptr::null_mut()));
    assert_eq!(n, 0);
    let mut ci = D3D10_COUNTER_INFO {
        LastDeviceDependentCounter: 7,
        NumSimultaneousCounters: 7,
        NumDetectableParallelUnits: 7,
    };
    call!(dev, CheckCounterInfo(&mut ci));
    assert_eq!(ci, D3D10_COUNTER_INFO::default());
    let mut view = ptr::dangling_mut();
    let d = buffer10(16, D3D10_USAGE_DEFAULT, D3D10_BIND_SHADER_RESOURCE, 0);
    let (_, b) = create_buffer(dev, &d, None);
    assert_eq!(
        call!(
            dev,
            CreateShaderResourceView(b.cast(), ptr::null(), &mut view)
        ),
        E_NOTIMPL
    );

    // Resource private data and eviction priority.
    assert_eq!(
        call!(
            b,
            base.base
                .SetPrivateData(&guid, 4, (&v as *const u32).cast())
        ),
        S_OK
    );
    let mut size = 4;
    out = 0;
    assert_eq!(
        call!(
            b,
            base.base
                .GetPrivateData(&guid, &mut size, (&mut out as *mut u32).cast())
        ),
        S_OK
    );
    assert_eq!(out, v);
    call!(b, base.SetEvictionPriority(DXGI_RESOURCE_PRIORITY_HIGH));
    assert_eq!(
        call!(b, base.GetEvictionPriority()),
        DXGI_RESOURCE_PRIORITY_HIGH
    );
    let (_, res): (_, *mut IDXGIResource) = qi(b, &IID_IDXGIResource);
    let mut prio = 0;
    assert_eq!(call!(res, GetEvictionPriority(&mut prio)), S_OK);
    assert_eq!(prio, DXGI_RESOURCE_PRIORITY_HIGH);
    release(res);
    assert_eq!(release(b), 0);
    assert_eq!(release(dev), 0);
}

#[test]
fn interop_face_of_d3d10_resources() {
    let dev = device10();
    let px = pattern(8 * 4 * 4, 2);
    let td = tex2d10(
        8,
        4,
        1,
        1,
        DXGI_FORMAT_R8G8B8A8_UNORM,
        D3D10_USAGE_DEFAULT,
        D3D10_BIND_SHADER_RESOURCE,
        0,
    );
    let (hr, tex) = create_tex2d(dev, &td, Some(&[sub(&px, 32, 0)]));
    assert_eq!(hr, S_OK);
    let (hr, interop): (_, *mut IDxclInteropResource) = qi(tex, &IID_IDxclInteropResource);
    assert_eq!(hr, S_OK);
    let mut mem = DXCL_RESOURCE_MEMORY::default();
    assert_eq!(call!(interop, GetMemory(&mut mem)), S_OK);
    let mut l = DXCL_SUBRESOURCE_LAYOUT::default();
    assert_eq!(call!(interop, GetSubresourceLayout(0, &mut l)), S_OK);
    assert_eq!((l.Width, l.Height, l.Depth), (8, 4, 1));
    if expected_backend() == DXCL_BACKEND_KIND_HOST {
        assert_eq!(mem.Kind, DXCL_MEMORY_KIND_HOST);
        for y in 0..4usize {
            let off = l.Offset as usize + y * l.RowPitch as usize;
            // SAFETY: the host allocation spans the subresource's rows.
            let row = bytes(unsafe { mem.pHost.cast::<u8>().add(off) }.cast(), 32);
            assert_eq!(row, &px[y * 32..y * 32 + 32]);
        }
    } else {
        // Device memory: a DEFAULT RGBA8 texture is an exported optimal-tiled image (lavapipe
        // and NVIDIA both export those), not mapped into the process (the data is checked
        // through copies and Map in the other tests).
        assert_eq!(mem.Kind, DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE);
        assert!(mem.pHost.is_null());
        assert_eq!(l.RowPitch % 256, 0);
        let mut fd = -1;
        assert_eq!(call!(interop, ExportMemoryFd(&mut fd)), S_OK);
        // SAFETY: a new fd the caller owns.
        assert_eq!(unsafe { libc::close(fd) }, 0);
    }
    assert_eq!(
        call!(interop, GetSubresourceLayout(1, &mut l)),
        E_INVALIDARG
    );
    assert_eq!(call!(interop, WaitForDeviceWork()), S_OK);
    release(interop);
    assert_eq!(release(tex), 0);
    assert_eq!(release(dev), 0);
}

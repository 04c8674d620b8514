//! The runtime driven through its vtables as a C program would.
// `call!` makes vtable calls; its arguments are plain values and pointers.
#![allow(clippy::macro_metavars_in_unsafe)]

mod common;
use common::*;
use std::ptr;

fn tex2d(
    dev: *mut ID3D11Device,
    d: &D3D11_TEXTURE2D_DESC,
    init: Option<&[D3D11_SUBRESOURCE_DATA]>,
) -> (HRESULT, *mut ID3D11Texture2D) {
    let mut t = ptr::null_mut();
    let p = init.map_or(ptr::null(), |i| i.as_ptr());
    (call!(dev, CreateTexture2D(d, p, &mut t)), t)
}

#[test]
fn refcounts_identity_and_interfaces() {
    let (dev, ctx) = device();
    assert_eq!(add_ref(dev), 3); // the app's device reference + the context's
    assert_eq!(release(dev), 2);
    let (hr, unk1): (_, *mut IUnknown) = qi(dev, &IID_IUnknown);
    assert_eq!(hr, S_OK);
    let (_, dxgi): (_, *mut IDXGIDevice) = qi(dev, &IID_IDXGIDevice);
    let (_, unk2): (_, *mut IUnknown) = qi(dxgi, &IID_IUnknown);
    assert_eq!(unk1, unk2);
    let (hr, none): (_, *mut IUnknown) = qi(dev, &IID_ID3D11Buffer);
    assert_eq!((hr, none), (E_NOINTERFACE, ptr::null_mut()));
    release(unk1);
    release(unk2);

    // A device child holds its device: releasing the app's device leaves it alive.
    let desc = buffer_desc(16, D3D11_USAGE_DEFAULT, D3D11_BIND_CONSTANT_BUFFER, 0);
    let mut buf: *mut ID3D11Buffer = ptr::null_mut();
    assert_eq!(call!(dev, CreateBuffer(&desc, ptr::null(), &mut buf)), S_OK);
    let mut got = ptr::null_mut();
    call!(buf, base.base.GetDevice(&mut got));
    assert_eq!(got, dev);
    release(got);
    let (_, res): (_, *mut IDXGIResource) = qi(buf, &IID_IDXGIResource);
    let (_, interop): (_, *mut IDxclInteropResource) = qi(buf, &IID_IDxclInteropResource);
    let mut usage = 0;
    assert_eq!(call!(res, GetUsage(&mut usage)), S_OK);
    release(res);
    release(interop);
    release(dxgi);
    release(ctx);
    assert_eq!(release(dev), 1); // the buffer's reference
    let mut d = D3D11_BUFFER_DESC::default();
    call!(buf, GetDesc(&mut d));
    assert_eq!(d.ByteWidth, 16);
    assert_eq!(release(buf), 0);
}

#[test]
fn creation_errors_and_validation_only() {
    let (dev, ctx) = device();
    let good = buffer_desc(64, D3D11_USAGE_DEFAULT, D3D11_BIND_VERTEX_BUFFER, 0);
    assert_eq!(
        call!(dev, CreateBuffer(&good, ptr::null(), ptr::null_mut())),
        S_FALSE
    );
    let mut b: *mut ID3D11Buffer = std::ptr::dangling_mut();
    let bad = buffer_desc(60, D3D11_USAGE_DEFAULT, D3D11_BIND_CONSTANT_BUFFER, 0);
    assert_eq!(
        call!(dev, CreateBuffer(&bad, ptr::null(), &mut b)),
        E_INVALIDARG
    );
    assert!(b.is_null());
    let imm = buffer_desc(64, D3D11_USAGE_IMMUTABLE, D3D11_BIND_VERTEX_BUFFER, 0);
    assert_eq!(
        call!(dev, CreateBuffer(&imm, ptr::null(), &mut b)),
        E_INVALIDARG
    );
    let d = tex2d_desc(
        6,
        8,
        1,
        1,
        DXGI_FORMAT_BC1_UNORM,
        D3D11_USAGE_DEFAULT,
        D3D11_BIND_SHADER_RESOURCE,
        0,
    );
    assert_eq!(tex2d(dev, &d, None).0, E_INVALIDARG);
    let mut ms = tex2d_desc(
        8,
        8,
        1,
        1,
        DXGI_FORMAT_R8G8B8A8_UNORM,
        D3D11_USAGE_DEFAULT,
        D3D11_BIND_RENDER_TARGET,
        0,
    );
    ms.SampleDesc.Count = 4;
    let (hr, t) = tex2d(dev, &ms, None);
    assert_eq!(hr, S_OK);
    let mut levels = 0;
    assert_eq!(
        call!(
            dev,
            CheckMultisampleQualityLevels(DXGI_FORMAT_R8G8B8A8_UNORM, 4, &mut levels)
        ),
        S_OK
    );
    assert_eq!(levels, 1);
    // Multisampled resources cannot be mapped.
    assert_eq!(map(ctx, t, 0, D3D11_MAP_READ).0, E_INVALIDARG);
    release(t);
    let mut support = 0;
    assert_eq!(
        call!(
            dev,
            CheckFormatSupport(DXGI_FORMAT_R8G8B8A8_UNORM, &mut support)
        ),
        S_OK
    );
    assert_ne!(support & D3D11_FORMAT_SUPPORT_TEXTURE2D as u32, 0);
    assert_eq!(
        call!(dev, CheckFormatSupport(DXGI_FORMAT_NV12, &mut support)),
        E_FAIL
    );
    release(ctx);
    release(dev);
}

#[test]
fn texture_arrays_mips_initial_data_and_copies() {
    let (dev, ctx) = device();
    // 4x4 RGBA8, 3 mips, 2 slices, every subresource filled with its own index.
    let mut bufs = Vec::new();
    let mut init = Vec::new();
    for sub in 0..6u32 {
        let w = 4u32 >> (sub % 3);
        let data = vec![sub as u8 + 1; (w * w * 4) as usize];
        init.push(D3D11_SUBRESOURCE_DATA {
            pSysMem: data.as_ptr().cast(),
            SysMemPitch: w * 4,
            SysMemSlicePitch: 0,
        });
        bufs.push(data);
    }
    let d = tex2d_desc(
        4,
        4,
        3,
        2,
        DXGI_FORMAT_R8G8B8A8_UNORM,
        D3D11_USAGE_DEFAULT,
        D3D11_BIND_SHADER_RESOURCE,
        0,
    );
    let (hr, src) = tex2d(dev, &d, Some(&init));
    assert_eq!(hr, S_OK);
    let s = tex2d_desc(
        4,
        4,
        0,
        2,
        DXGI_FORMAT_R8G8B8A8_UNORM,
        D3D11_USAGE_STAGING,
        0,
        D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE,
    );
    let (hr, staging) = tex2d(dev, &s, None);
    assert_eq!(hr, S_OK);
    let mut got = D3D11_TEXTURE2D_DESC::default();
    call!(staging, GetDesc(&mut got));
    assert_eq!(got.MipLevels, 3);
    call!(ctx, CopyResource(staging.cast(), src.cast()));
    for sub in 0..6u32 {
        let (hr, m) = map(ctx, staging, sub, D3D11_MAP_READ);
        assert_eq!(hr, S_OK);
        let w = 4u32 >> (sub % 3);
        for row in 0..w {
            let line = bytes(
                m.pData.wrapping_add((row * m.RowPitch) as usize),
                (w * 4) as usize,
            );
            assert!(
                line.iter().all(|&b| b == sub as u8 + 1),
                "sub {sub} row {row}"
            );
        }
        call!(ctx, Unmap(staging.cast(), sub));
    }
    // UpdateSubresource with a box, then CopySubresourceRegion of that texel into slice 1 mip 0.
    let texel = [9u8, 8, 7, 6];
    let bx = D3D11_BOX {
        left: 1,
        top: 2,
        front: 0,
        right: 2,
        bottom: 3,
        back: 1,
    };
    call!(
        ctx,
        UpdateSubresource(src.cast(), 0, &bx, texel.as_ptr().cast(), 4, 4)
    );
    call!(
        ctx,
        CopySubresourceRegion(staging.cast(), 3, 3, 3, 0, src.cast(), 0, &bx)
    );
    let (hr, m) = map(ctx, staging, 3, D3D11_MAP_READ_WRITE);
    assert_eq!(hr, S_OK);
    assert_eq!(
        bytes(m.pData.wrapping_add((3 * m.RowPitch + 12) as usize), 4),
        &texel
    );
    assert_eq!(
        bytes(m.pData.wrapping_add((3 * m.RowPitch + 8) as usize), 4),
        &[4, 4, 4, 4]
    );
    call!(ctx, Unmap(staging.cast(), 3));
    // An invalid box is ignored.
    let outside = D3D11_BOX {
        left: 3,
        top: 0,
        front: 0,
        right: 5,
        bottom: 1,
        back: 1,
    };
    call!(
        ctx,
        UpdateSubresource(src.cast(), 0, &outside, texel.as_ptr().cast(), 4, 4)
    );
    release(staging);
    release(src);
    release(ctx);
    release(dev);
}

#[test]
fn dynamic_map_rules_and_3d() {
    let (dev, ctx) = device();
    let d = buffer_desc(
        64,
        D3D11_USAGE_DYNAMIC,
        D3D11_BIND_VERTEX_BUFFER,
        D3D11_CPU_ACCESS_WRITE,
    );
    let mut b: *mut ID3D11Buffer = ptr::null_mut();
    assert_eq!(call!(dev, CreateBuffer(&d, ptr::null(), &mut b)), S_OK);
    assert_eq!(map(ctx, b, 0, D3D11_MAP_WRITE).0, E_INVALIDARG);
    assert_eq!(map(ctx, b, 0, D3D11_MAP_READ).0, E_INVALIDARG);
    assert_eq!(map(ctx, b, 1, D3D11_MAP_WRITE_DISCARD).0, E_INVALIDARG);
    let (hr, _) = map(ctx, b, 0, D3D11_MAP_WRITE_DISCARD);
    assert_eq!(hr, S_OK);
    call!(ctx, Unmap(b.cast(), 0));
    let (hr, _) = map(ctx, b, 0, D3D11_MAP_WRITE_NO_OVERWRITE);
    assert_eq!(hr, S_OK);
    call!(ctx, Unmap(b.cast(), 0));
    release(b);

    let data: Vec<u8> = (0..64).collect();
    let init = D3D11_SUBRESOURCE_DATA {
        pSysMem: data.as_ptr().cast(),
        SysMemPitch: 4,
        SysMemSlicePitch: 16,
    };
    let d3 = D3D11_TEXTURE3D_DESC {
        Width: 4,
        Height: 4,
        Depth: 4,
        MipLevels: 1,
        Format: DXGI_FORMAT_R8_UNORM,
        Usage: D3D11_USAGE_STAGING,
        BindFlags: 0,
        CPUAccessFlags: D3D11_CPU_ACCESS_READ as u32,
        MiscFlags: 0,
    };
    let mut t: *mut ID3D11Texture3D = ptr::null_mut();
    assert_eq!(call!(dev, CreateTexture3D(&d3, &init, &mut t)), S_OK);
    let (hr, m) = map(ctx, t, 0, D3D11_MAP_READ);
    assert_eq!(hr, S_OK);
    assert_eq!(
        bytes(
            m.pData
                .wrapping_add((2 * m.DepthPitch + 3 * m.RowPitch) as usize),
            4
        ),
        &data[44..48]
    );
    call!(ctx, Unmap(t.cast(), 0));
    release(t);
    release(ctx);
    release(dev);
}

#[test]
fn event_query_and_private_data() {
    let (dev, ctx) = device();
    let qd = D3D11_QUERY_DESC {
        Query: D3D11_QUERY_EVENT,
        MiscFlags: 0,
    };
    let mut q: *mut ID3D11Query = ptr::null_mut();
    assert_eq!(call!(dev, CreateQuery(&qd, &mut q)), S_OK);
    let mut done: BOOL = 0;
    let size = std::mem::size_of::<BOOL>() as u32;
    assert_eq!(
        call!(
            ctx,
            GetData(q.cast(), (&mut done as *mut BOOL).cast(), size, 0)
        ),
        DXGI_ERROR_INVALID_CALL
    );
    call!(ctx, End(q.cast()));
    assert_eq!(
        call!(
            ctx,
            GetData(q.cast(), (&mut done as *mut BOOL).cast(), 2, 0)
        ),
        E_INVALIDARG
    );
    // GetData flushes, so polling ends (S_FALSE while the GPU works: other tests share the
    // adapter's queue); once complete, DONOTFLUSH reports it too.
    let mut polls = 0;
    while call!(
        ctx,
        GetData(q.cast(), (&mut done as *mut BOOL).cast(), size, 0)
    ) == S_FALSE
    {
        polls += 1;
        assert!(polls < 10_000_000, "the event never completed");
    }
    assert_eq!(done, 1);
    done = 0;
    assert_eq!(
        call!(
            ctx,
            GetData(
                q.cast(),
                (&mut done as *mut BOOL).cast(),
                size,
                D3D11_ASYNC_GETDATA_DONOTFLUSH as u32
            )
        ),
        S_OK
    );
    assert_eq!(done, 1);
    release(q);

    let guid = IID_IDxclInteropDevice; // any GUID works as a key
    let value = 0xdead_beef_u32;
    assert_eq!(
        call!(dev, SetPrivateData(&guid, 4, (&value as *const u32).cast())),
        S_OK
    );
    let mut size = 2u32;
    let mut out = 0u32;
    assert_eq!(
        call!(
            dev,
            GetPrivateData(&guid, &mut size, (&mut out as *mut u32).cast())
        ),
        DXGI_ERROR_MORE_DATA
    );
    assert_eq!(size, 4);
    assert_eq!(
        call!(
            dev,
            GetPrivateData(&guid, &mut size, (&mut out as *mut u32).cast())
        ),
        S_OK
    );
    assert_eq!(out, value);
    assert_eq!(
        call!(
            dev,
            GetPrivateData(&IID_IUnknown, &mut size, (&mut out as *mut u32).cast())
        ),
        DXGI_ERROR_NOT_FOUND
    );
    // An interface stored as private data is AddRef'd and released with the object.
    assert_eq!(call!(dev, SetPrivateDataInterface(&guid, ctx.cast())), S_OK);
    assert_eq!(release(ctx), 1);
    assert_eq!(
        call!(dev, SetPrivateDataInterface(&guid, ptr::null())),
        S_OK
    );
    release(dev);
}

#[test]
fn foreign_pointers_are_refused() {
    let (dev, ctx) = device();
    // A fake "resource": a pointer to a vtable pointer that is not one of ours.
    let fake_vtbl = [0usize; 16];
    let fake = [&fake_vtbl as *const _ as usize];
    let fake_res = fake.as_ptr() as *mut ID3D11Resource;
    let mut m = D3D11_MAPPED_SUBRESOURCE {
        pData: ptr::null_mut(),
        RowPitch: 0,
        DepthPitch: 0,
    };
    assert_eq!(
        call!(ctx, Map(fake_res, 0, D3D11_MAP_READ, 0, &mut m)),
        E_INVALIDARG
    );
    call!(ctx, CopyResource(fake_res, fake_res));
    assert_eq!(
        call!(ctx, GetData(fake_res.cast(), ptr::null_mut(), 0, 0)),
        E_INVALIDARG
    );
    release(ctx);
    release(dev);
}

#[test]
fn dxgi_factory_adapter_and_interop() {
    let mut f: *mut IDXGIFactory1 = ptr::null_mut();
    assert_eq!(
        // SAFETY: valid pointers.
        unsafe {
            CreateDXGIFactory1(
                &IID_IDXGIFactory1,
                (&mut f as *mut *mut IDXGIFactory1).cast(),
            )
        },
        S_OK
    );
    // DXCL_ADAPTER=software: the software adapter alone; vulkan: the Vulkan devices alone;
    // unset: the Vulkan devices, then the software adapter.
    let env = std::env::var("DXCL_ADAPTER").unwrap_or_default();
    let mut count = 0;
    loop {
        let mut next: *mut IDXGIAdapter1 = std::ptr::dangling_mut();
        let hr = call!(f, EnumAdapters1(count, &mut next));
        if hr == DXGI_ERROR_NOT_FOUND {
            assert!(next.is_null());
            break;
        }
        assert_eq!(hr, S_OK);
        release(next);
        count += 1;
    }
    match env.as_str() {
        "software" => assert_eq!(count, 1),
        "" => assert!(count >= 2, "a Vulkan device and the software adapter"),
        _ => assert!(count >= 1),
    }
    let mut a: *mut IDXGIAdapter1 = ptr::null_mut();
    assert_eq!(call!(f, EnumAdapters1(0, &mut a)), S_OK);
    let mut desc = DXGI_ADAPTER_DESC1::default();
    assert_eq!(call!(a, GetDesc1(&mut desc)), S_OK);
    // A device on an explicit adapter needs DriverType UNKNOWN.
    let mut dev: *mut ID3D11Device = ptr::null_mut();
    // SAFETY: valid pointers.
    let hr = unsafe {
        D3D11CreateDevice(
            a.cast(),
            D3D_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            ptr::null(),
            0,
            7,
            &mut dev,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(hr, E_INVALIDARG);
    // SAFETY: valid pointers.
    let hr = unsafe {
        D3D11CreateDevice(
            a.cast(),
            D3D_DRIVER_TYPE_UNKNOWN,
            ptr::null_mut(),
            0,
            ptr::null(),
            0,
            7,
            &mut dev,
            ptr::null_mut(),
            ptr::null_mut(),
        )
    };
    assert_eq!(hr, S_OK);
    assert_eq!(call!(dev, GetFeatureLevel()), D3D_FEATURE_LEVEL_11_0);
    // The first adapter is the one this run's devices land on; DXGI and the interop face agree.
    let info = adapter_info(dev);
    assert_eq!(info.Backend, expected_backend());
    check_adapter_desc(&desc, &info);
    let host = info.Backend == DXCL_BACKEND_KIND_HOST;

    // Interop: layout and memory of a 2D texture; pending work runs before the next access.
    let d = tex2d_desc(
        5,
        3,
        1,
        1,
        DXGI_FORMAT_R8G8B8A8_UNORM,
        D3D11_USAGE_STAGING,
        0,
        D3D11_CPU_ACCESS_READ,
    );
    let (hr, t) = tex2d(dev, &d, None);
    assert_eq!(hr, S_OK);
    let (_, ir): (_, *mut IDxclInteropResource) = qi(t, &IID_IDxclInteropResource);
    let mut mem = DXCL_RESOURCE_MEMORY::default();
    assert_eq!(call!(ir, GetMemory(&mut mem)), S_OK);
    let mut l = DXCL_SUBRESOURCE_LAYOUT::default();
    assert_eq!(call!(ir, GetSubresourceLayout(0, &mut l)), S_OK);
    assert_eq!(call!(ir, GetSubresourceLayout(1, &mut l)), E_INVALIDARG);
    let mut fd = -1;
    if host {
        assert_eq!(mem.Kind, DXCL_MEMORY_KIND_HOST);
        assert_eq!(mem.pHost as usize % 4096, 0);
        // Rows of 20 bytes on 16-byte multiples.
        assert_eq!((l.Width, l.Height, l.RowPitch), (5, 3, 32));
        assert_eq!(call!(ir, ExportMemoryFd(&mut fd)), E_NOTIMPL);
    } else {
        // Device memory, exportable; rows on 256 bytes and 64 texels, subresources on 64 KiB.
        assert_eq!(mem.Kind, DXCL_MEMORY_KIND_OPAQUE_FD);
        assert!(mem.pHost.is_null());
        assert!(mem.Size >= 65536);
        assert_eq!((l.Width, l.Height, l.RowPitch, l.Offset), (5, 3, 256, 0));
        assert_eq!(call!(ir, ExportMemoryFd(&mut fd)), S_OK);
        assert!(fd >= 0);
        // SAFETY: a new fd the caller owns.
        assert_eq!(unsafe { libc::close(fd) }, 0);
    }
    assert_eq!(l.DepthPitch, 3 * l.RowPitch);
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    unsafe extern "system" fn wait(_: *mut c_void) {
        CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
    unsafe extern "system" fn rel(_: *mut c_void) {
        CALLS.fetch_add(10, std::sync::atomic::Ordering::SeqCst);
    }
    assert_eq!(
        call!(ir, AddPendingWork(Some(wait), Some(rel), ptr::null_mut())),
        S_OK
    );
    let mut ctx = ptr::null_mut();
    call!(dev, GetImmediateContext(&mut ctx));
    let mut m = D3D11_MAPPED_SUBRESOURCE {
        pData: ptr::null_mut(),
        RowPitch: 0,
        DepthPitch: 0,
    };
    assert_eq!(
        call!(
            ctx,
            Map(
                t.cast(),
                0,
                D3D11_MAP_READ,
                D3D11_MAP_FLAG_DO_NOT_WAIT as u32,
                &mut m
            )
        ),
        DXGI_ERROR_WAS_STILL_DRAWING
    );
    assert_eq!(CALLS.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(
        call!(ctx, Map(t.cast(), 0, D3D11_MAP_READ, 0, &mut m)),
        S_OK
    );
    assert_eq!(CALLS.load(std::sync::atomic::Ordering::SeqCst), 11);
    assert_eq!(m.RowPitch, l.RowPitch);
    if host {
        assert_eq!(m.pData, mem.pHost);
    }
    call!(ctx, Unmap(t.cast(), 0));
    pending_work_ordered(dev, ctx, t, ir, &d, host);
    release(ir);
    release(t);
    release(ctx);
    release(dev);
    release(a);
    release(f);
}

#[test]
fn create_device_rules() {
    let mut level = 0;
    let mut dev: *mut ID3D11Device = ptr::null_mut();
    // SAFETY: valid pointers throughout.
    unsafe {
        // Validation only: S_FALSE and the level that would be created.
        assert_eq!(
            D3D11CreateDevice(
                ptr::null_mut(),
                D3D_DRIVER_TYPE_WARP,
                ptr::null_mut(),
                0,
                ptr::null(),
                0,
                7,
                ptr::null_mut(),
                &mut level,
                ptr::null_mut()
            ),
            S_FALSE
        );
        assert_eq!(level, D3D_FEATURE_LEVEL_11_0);
        let levels = [D3D_FEATURE_LEVEL_12_0, D3D_FEATURE_LEVEL_11_1];
        assert_eq!(
            D3D11CreateDevice(
                ptr::null_mut(),
                D3D_DRIVER_TYPE_HARDWARE,
                ptr::null_mut(),
                0,
                levels.as_ptr(),
                2,
                7,
                ptr::null_mut(),
                &mut level,
                ptr::null_mut()
            ),
            S_FALSE
        );
        assert_eq!(level, D3D_FEATURE_LEVEL_11_1);
        let only12 = [D3D_FEATURE_LEVEL_12_0];
        assert_eq!(
            D3D11CreateDevice(
                ptr::null_mut(),
                D3D_DRIVER_TYPE_HARDWARE,
                ptr::null_mut(),
                0,
                only12.as_ptr(),
                1,
                7,
                &mut dev,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            DXGI_ERROR_UNSUPPORTED
        );
        let bogus = [0x1234];
        assert_eq!(
            D3D11CreateDevice(
                ptr::null_mut(),
                D3D_DRIVER_TYPE_HARDWARE,
                ptr::null_mut(),
                0,
                bogus.as_ptr(),
                1,
                7,
                &mut dev,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            E_INVALIDARG
        );
        assert_eq!(
            D3D11CreateDevice(
                ptr::null_mut(),
                D3D_DRIVER_TYPE_SOFTWARE,
                ptr::null_mut(),
                0,
                ptr::null(),
                0,
                7,
                &mut dev,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            E_INVALIDARG
        );
        assert_eq!(
            D3D11CreateDevice(
                ptr::null_mut(),
                D3D_DRIVER_TYPE_UNKNOWN,
                ptr::null_mut(),
                0,
                ptr::null(),
                0,
                7,
                &mut dev,
                ptr::null_mut(),
                ptr::null_mut()
            ),
            E_INVALIDARG
        );
        assert!(dev.is_null());
        let mut sc: *mut IDXGISwapChain = std::ptr::dangling_mut();
        let hr = dxcl_d3d::D3D11CreateDeviceAndSwapChain(
            ptr::null_mut(),
            D3D_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            ptr::null(),
            0,
            7,
            ptr::null(),
            &mut sc,
            &mut dev,
            ptr::null_mut(),
            ptr::null_mut(),
        );
        assert_eq!(hr, DXGI_ERROR_UNSUPPORTED);
        assert!(sc.is_null());
        let hr = dxcl_d3d::D3D11CreateDeviceAndSwapChain(
            ptr::null_mut(),
            D3D_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            ptr::null(),
            0,
            7,
            ptr::null(),
            ptr::null_mut(),
            &mut dev,
            ptr::null_mut(),
            ptr::null_mut(),
        );
        assert_eq!(hr, S_OK);
    }
    assert_eq!(release(dev), 0);
}

/// `QueryDeviceWorkDone` and `AddPendingWorkOrdered`: a copy (a GPU-side access on the Vulkan
/// backend) asks the order callback first and waits only when it declines; a CPU access (Map)
/// always waits; the release runs once either way.
fn pending_work_ordered(
    dev: *mut ID3D11Device,
    ctx: *mut ID3D11DeviceContext,
    t: *mut ID3D11Texture2D,
    ir: *mut IDxclInteropResource,
    d: &D3D11_TEXTURE2D_DESC,
    host: bool,
) {
    use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
    static WAITS: AtomicU32 = AtomicU32::new(0);
    static ORDERS: AtomicU32 = AtomicU32::new(0);
    static RELEASES: AtomicU32 = AtomicU32::new(0);
    unsafe extern "system" fn wait(_: *mut c_void) {
        WAITS.fetch_add(1, SeqCst);
    }
    unsafe extern "system" fn order_ok(_: *mut c_void) -> HRESULT {
        ORDERS.fetch_add(1, SeqCst);
        S_OK
    }
    unsafe extern "system" fn order_declines(_: *mut c_void) -> HRESULT {
        ORDERS.fetch_add(1, SeqCst);
        E_FAIL
    }
    unsafe extern "system" fn rel(_: *mut c_void) {
        RELEASES.fetch_add(1, SeqCst);
    }
    let counts = || {
        (
            WAITS.load(SeqCst),
            ORDERS.load(SeqCst),
            RELEASES.load(SeqCst),
        )
    };
    // Nothing issued on it is still running after the Map above.
    assert_eq!(call!(ir, QueryDeviceWorkDone()), S_OK);
    // "Without pfnWait there is nothing to call": both callbacks are required.
    assert_eq!(
        call!(
            ir,
            AddPendingWorkOrdered(None, Some(order_ok), Some(rel), ptr::null_mut())
        ),
        E_INVALIDARG
    );
    assert_eq!(
        call!(
            ir,
            AddPendingWorkOrdered(Some(wait), None, Some(rel), ptr::null_mut())
        ),
        E_INVALIDARG
    );
    let (hr, other) = tex2d(dev, d, None);
    assert_eq!(hr, S_OK);
    let copy = || call!(ctx, CopyResource(other.cast(), t.cast()));
    // A copy: the Vulkan backend lets the order callback order it; the host backend copies on
    // the CPU, so it waits.
    let gpu = !host;
    assert_eq!(
        call!(
            ir,
            AddPendingWorkOrdered(Some(wait), Some(order_ok), Some(rel), ptr::null_mut())
        ),
        S_OK
    );
    copy();
    let expect = if gpu { (0, 1, 1) } else { (1, 0, 1) };
    assert_eq!(counts(), expect);
    // A declined order falls back to the wait.
    assert_eq!(
        call!(
            ir,
            AddPendingWorkOrdered(Some(wait), Some(order_declines), Some(rel), ptr::null_mut())
        ),
        S_OK
    );
    copy();
    let expect = if gpu { (1, 2, 2) } else { (2, 0, 2) };
    assert_eq!(counts(), expect);
    // A CPU access waits, never orders.
    assert_eq!(
        call!(
            ir,
            AddPendingWorkOrdered(Some(wait), Some(order_ok), Some(rel), ptr::null_mut())
        ),
        S_OK
    );
    let mut m = D3D11_MAPPED_SUBRESOURCE {
        pData: ptr::null_mut(),
        RowPitch: 0,
        DepthPitch: 0,
    };
    assert_eq!(
        call!(ctx, Map(t.cast(), 0, D3D11_MAP_READ, 0, &mut m)),
        S_OK
    );
    call!(ctx, Unmap(t.cast(), 0));
    let expect = if gpu { (2, 2, 3) } else { (3, 0, 3) };
    assert_eq!(counts(), expect);
    // The copy's work is done once a CPU wait for the device has returned.
    assert_eq!(call!(ir, WaitForDeviceWork()), S_OK);
    assert_eq!(call!(ir, QueryDeviceWorkDone()), S_OK);
    release(other);
}

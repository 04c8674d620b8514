//! Device and buffer basics through the C ABI.
// `call!` makes vtable calls; its arguments are plain values and pointers.
#![allow(clippy::macro_metavars_in_unsafe)]

mod common;
use common::*;
use std::ptr;

#[test]
fn buffer_round_trip_through_staging() {
    let (dev, ctx) = device();
    let data: Vec<u8> = (0..=255).collect();
    let init = D3D11_SUBRESOURCE_DATA {
        pSysMem: data.as_ptr().cast(),
        SysMemPitch: 0,
        SysMemSlicePitch: 0,
    };
    let desc = buffer_desc(256, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0);
    let mut src: *mut ID3D11Buffer = ptr::null_mut();
    assert_eq!(call!(dev, CreateBuffer(&desc, &init, &mut src)), S_OK);
    let desc = buffer_desc(256, D3D11_USAGE_STAGING, 0, D3D11_CPU_ACCESS_READ);
    let mut staging: *mut ID3D11Buffer = ptr::null_mut();
    assert_eq!(
        call!(dev, CreateBuffer(&desc, ptr::null(), &mut staging)),
        S_OK
    );
    call!(ctx, CopyResource(staging.cast(), src.cast()));
    let (hr, m) = map(ctx, staging, 0, D3D11_MAP_READ);
    assert_eq!(hr, S_OK);
    assert_eq!(m.RowPitch, 256);
    assert_eq!(bytes(m.pData, 256), &data[..]);
    // Mapping twice is refused; DEFAULT buffers cannot be mapped.
    assert_eq!(map(ctx, staging, 0, D3D11_MAP_READ).0, E_INVALIDARG);
    assert_eq!(map(ctx, src, 0, D3D11_MAP_READ).0, E_INVALIDARG);
    call!(ctx, Unmap(staging.cast(), 0));
    assert_eq!(release(staging), 0);
    assert_eq!(release(src), 0);
    assert_eq!(release(ctx), 0);
    assert_eq!(release(dev), 0);
}

//! `DXCL_VALIDATE=1` (docs/validation.md): the runtime's reports, driven through the interop
//! calls the OpenCL layer makes (`SetOpenCLAccess`, `SetOpenCLReference`) and the application's
//! Direct3D calls. Each scenario runs in a child process (this binary, one ignored test), because
//! the setting is read once per process and the reports go to the real stderr.
// `call!` makes vtable calls; its arguments are plain values and pointers.
#![allow(clippy::macro_metavars_in_unsafe)]

mod common;
use common::*;
use std::ptr;

/// Runs the ignored test `scenario` in a child process with `DXCL_VALIDATE` set to `validate`
/// (unset for `None`); returns its report lines.
fn run(scenario: &str, validate: Option<&str>) -> Vec<String> {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--ignored",
        "--exact",
        scenario,
        "--nocapture",
        "--test-threads=1",
    ]);
    match validate {
        Some(v) => cmd.env("DXCL_VALIDATE", v),
        None => cmd.env_remove("DXCL_VALIDATE"),
    };
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{scenario}: {stdout}\n{stderr}"
    );
    stderr
        .lines()
        .filter(|l| l.starts_with("dxcl validation: "))
        .map(str::to_owned)
        .collect()
}

fn validating() -> bool {
    std::env::var("DXCL_VALIDATE").as_deref() == Ok("1")
}

fn interop<T>(r: *mut T) -> *mut IDxclInteropResource {
    let (hr, i) = qi::<T, IDxclInteropResource>(r, &IID_IDxclInteropResource);
    assert_eq!(hr, S_OK);
    // The test keeps no extra reference: the resource outlives every use of `i`.
    release(i);
    i
}

/// What the layer does, as it does it: `SetOpenCLAccess` on one subresource.
fn set_access<T>(r: *mut T, sub: u32, access: DXCL_OPENCL_ACCESS, call: &std::ffi::CStr) {
    let i = interop(r);
    let hr = call!(i, SetOpenCLAccess(sub, access, call.as_ptr()));
    assert_eq!(hr, if validating() { S_OK } else { S_FALSE });
}

fn set_reference(dev: *mut ID3D11Device, held: bool) {
    let (hr, i) = qi::<_, IDxclInteropDevice>(dev, &IID_IDxclInteropDevice);
    assert_eq!(hr, S_OK);
    let r = call!(i, SetOpenCLReference(held as BOOL));
    assert_eq!(r, if validating() { S_OK } else { S_FALSE });
    release(i);
}

fn name<T>(r: *mut T, name: &str) {
    let child = r.cast::<ID3D11DeviceChild>();
    let hr = call!(
        child,
        SetPrivateData(
            &WKPDID_D3DDebugObjectName,
            name.len() as u32,
            name.as_ptr().cast()
        )
    );
    assert_eq!(hr, S_OK);
}

struct Objects {
    dev: *mut ID3D11Device,
    ctx: *mut ID3D11DeviceContext,
    buf: *mut ID3D11Buffer,
    staging_buf: *mut ID3D11Buffer,
    tex: *mut ID3D11Texture2D,
    staging_tex: *mut ID3D11Texture2D,
}

fn objects() -> Objects {
    let (dev, ctx) = device();
    let mut buf = ptr::null_mut();
    let mut staging_buf = ptr::null_mut();
    let desc = buffer_desc(256, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0);
    assert_eq!(call!(dev, CreateBuffer(&desc, ptr::null(), &mut buf)), S_OK);
    let desc = buffer_desc(256, D3D11_USAGE_STAGING, 0, D3D11_CPU_ACCESS_READ);
    assert_eq!(
        call!(dev, CreateBuffer(&desc, ptr::null(), &mut staging_buf)),
        S_OK
    );
    let fmt = DXGI_FORMAT_R8G8B8A8_UNORM;
    let mut tex = ptr::null_mut();
    let mut staging_tex = ptr::null_mut();
    let desc = tex2d_desc(8, 8, 2, 1, fmt, D3D11_USAGE_DEFAULT, 0, 0);
    assert_eq!(
        call!(dev, CreateTexture2D(&desc, ptr::null(), &mut tex)),
        S_OK
    );
    let cpu = D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE;
    let desc = tex2d_desc(8, 8, 1, 1, fmt, D3D11_USAGE_STAGING, 0, cpu);
    assert_eq!(
        call!(dev, CreateTexture2D(&desc, ptr::null(), &mut staging_tex)),
        S_OK
    );
    name(buf, "particles");
    Objects {
        dev,
        ctx,
        buf,
        staging_buf,
        tex,
        staging_tex,
    }
}

const CREATE_BUFFER: &std::ffi::CStr = c"clCreateFromD3D11BufferKHR";
const CREATE_TEXTURE: &std::ffi::CStr = c"clCreateFromD3D11Texture2DKHR";
const ACQUIRE: &std::ffi::CStr = c"clEnqueueAcquireD3D11ObjectsKHR";
const RELEASE: &std::ffi::CStr = c"clEnqueueReleaseD3D11ObjectsKHR";

/// OpenCL memory objects made from `buf`, subresource 1 of `tex` and `staging_tex` (each holding
/// a reference, as the layer's do), and a context holding the device.
fn share(o: &Objects) {
    add_ref(o.dev);
    set_reference(o.dev, true);
    add_ref(o.buf);
    set_access(o.buf, 0, DXCL_OPENCL_ACCESS_SHARED, CREATE_BUFFER);
    add_ref(o.tex);
    set_access(o.tex, 1, DXCL_OPENCL_ACCESS_SHARED, CREATE_TEXTURE);
    add_ref(o.staging_tex);
    set_access(o.staging_tex, 0, DXCL_OPENCL_ACCESS_SHARED, CREATE_TEXTURE);
}

fn acquire(o: &Objects, acquired: bool) {
    let (access, call) = if acquired {
        (DXCL_OPENCL_ACCESS_ACQUIRED, ACQUIRE)
    } else {
        (DXCL_OPENCL_ACCESS_SHARED, RELEASE)
    };
    set_access(o.buf, 0, access, call);
    set_access(o.tex, 1, access, call);
    set_access(o.staging_tex, 0, access, call);
}

/// The Direct3D calls of the scenarios: each touches a shared subresource, twice.
fn touch(o: &Objects) {
    let data = [7u8; 256];
    // Mip 1 of `tex` is 4x4.
    let quarter = D3D11_BOX {
        left: 0,
        top: 0,
        front: 0,
        right: 4,
        bottom: 4,
        back: 1,
    };
    for _ in 0..2 {
        let (hr, _) = map(o.ctx, o.staging_tex, 0, D3D11_MAP_READ);
        assert_eq!(hr, S_OK);
        call!(o.ctx, Unmap(o.staging_tex.cast(), 0));
        call!(
            o.ctx,
            UpdateSubresource(o.buf.cast(), 0, ptr::null(), data.as_ptr().cast(), 0, 0)
        );
        call!(o.ctx, CopyResource(o.staging_buf.cast(), o.buf.cast()));
        // Subresource 0 of `tex` has no OpenCL object: never reported.
        call!(
            o.ctx,
            CopySubresourceRegion(
                o.staging_tex.cast(),
                0,
                0,
                0,
                0,
                o.tex.cast(),
                0,
                ptr::null()
            )
        );
        call!(
            o.ctx,
            CopySubresourceRegion(o.tex.cast(), 1, 0, 0, 0, o.staging_tex.cast(), 0, &quarter)
        );
    }
}

/// The layer's release of what `share` holds: NONE first, then its reference.
fn unshare_resources(o: &Objects) {
    set_access(o.buf, 0, DXCL_OPENCL_ACCESS_NONE, RELEASE);
    release(o.buf);
    set_access(o.tex, 1, DXCL_OPENCL_ACCESS_NONE, RELEASE);
    release(o.tex);
    set_access(o.staging_tex, 0, DXCL_OPENCL_ACCESS_NONE, RELEASE);
    release(o.staging_tex);
}

#[test]
#[ignore = "a scenario: run in a child process by the tests below"]
fn scenario_misuse() {
    let o = objects();
    share(&o);
    acquire(&o, true);
    // (1): Direct3D touches acquired subresources.
    touch(&o);
    acquire(&o, false);
    // (2): the application releases its last reference to the buffer and the device while
    // OpenCL objects made from them live.
    assert_eq!(release(o.buf), 1, "OpenCL's reference is left");
    release(o.staging_buf);
    assert!(release(o.dev) > 0, "OpenCL's reference and the children's");
    // The layer lets go: nothing more to report.
    set_access(o.buf, 0, DXCL_OPENCL_ACCESS_NONE, RELEASE);
    assert_eq!(release(o.buf), 0);
    set_access(o.tex, 1, DXCL_OPENCL_ACCESS_NONE, RELEASE);
    release(o.tex);
    set_access(o.staging_tex, 0, DXCL_OPENCL_ACCESS_NONE, RELEASE);
    release(o.staging_tex);
    release(o.tex);
    release(o.staging_tex);
    release(o.ctx);
    set_reference(o.dev, false);
    assert_eq!(release(o.dev), 0);
}

#[test]
#[ignore = "a scenario: run in a child process by the tests below"]
fn scenario_correct() {
    let o = objects();
    share(&o);
    acquire(&o, true);
    // OpenCL works here; Direct3D waits for the release.
    acquire(&o, false);
    touch(&o);
    // The OpenCL objects go first, then the application's references.
    unshare_resources(&o);
    release(o.ctx);
    set_reference(o.dev, false);
    release(o.dev);
    for r in [o.buf, o.staging_buf] {
        assert_eq!(release(r), 0);
    }
    for r in [o.tex, o.staging_tex] {
        assert_eq!(release(r), 0);
    }
    assert_eq!(release(o.dev), 0);
}

#[test]
fn misuse_is_reported_once_per_object_and_kind() {
    let lines = run("scenario_misuse", Some("1"));
    let expected = [
        "ID3D11DeviceContext::Map on ID3D11Texture2D 0x",
        r#"ID3D11DeviceContext::UpdateSubresource on ID3D11Buffer "particles" (0x"#,
        "ID3D11DeviceContext::CopySubresourceRegion on ID3D11Texture2D 0x",
        r#"ID3D11Buffer::Release on ID3D11Buffer "particles" (0x"#,
        "ID3D11Device::Release on ID3D11Device 0x",
    ];
    assert_eq!(lines.len(), expected.len(), "{lines:#?}");
    for (line, start) in lines.iter().zip(expected) {
        assert!(
            line.starts_with(&format!("dxcl validation: {start}")),
            "{line:?} does not start with {start:?}"
        );
    }
    // (1): the subresource and the OpenCL call that acquired it; an unnamed resource by its
    // pointer and description.
    assert!(lines[1].ends_with(
        ") subresource 0 while OpenCL holds it acquired (clEnqueueAcquireD3D11ObjectsKHR)"
    ));
    assert!(lines[0].contains(
        "(8x8x1, 1 mip(s), 1 slice(s), DXGI format 28) subresource 0 while OpenCL holds it \
         acquired"
    ));
    assert!(lines[2].contains("subresource 1 while OpenCL holds it acquired"));
    // (2): how many OpenCL objects hold it, and what made them.
    assert!(lines[3].ends_with(
        "drops the application's last reference while 1 OpenCL memory object(s) made from it \
         live (clCreateFromD3D11BufferKHR)"
    ));
    assert!(lines[4].contains("drops the application's last reference while OpenCL objects"));
}

#[test]
fn nothing_is_reported_for_a_correct_program() {
    assert_eq!(run("scenario_correct", Some("1")), Vec::<String>::new());
}

#[test]
fn nothing_is_reported_when_validation_is_off() {
    // The misuse again, with the setting unset and with another value: no report, and the
    // interop calls answer S_FALSE (checked in the scenario).
    assert_eq!(run("scenario_misuse", None), Vec::<String>::new());
    assert_eq!(run("scenario_misuse", Some("0")), Vec::<String>::new());
}

/// D3D10 names: `ID3D10Buffer::Map` and `ID3D10Device::CopyResource`, with the pointers of the
/// D3D10 faces the application holds.
#[test]
#[ignore = "a scenario: run in a child process by the tests below"]
fn scenario_d3d10() {
    let mut dev: *mut ID3D10Device = ptr::null_mut();
    // SAFETY: valid pointers for every argument.
    let hr = unsafe {
        dxcl_d3d::D3D10CreateDevice(
            ptr::null_mut(),
            D3D10_DRIVER_TYPE_HARDWARE,
            ptr::null_mut(),
            0,
            D3D10_SDK_VERSION,
            &mut dev,
        )
    };
    assert_eq!(hr, S_OK);
    let desc = |usage, cpu: i32| D3D10_BUFFER_DESC {
        ByteWidth: 64,
        Usage: usage,
        BindFlags: 0,
        CPUAccessFlags: cpu as u32,
        MiscFlags: 0,
    };
    let (mut staging, mut default): (*mut ID3D10Buffer, *mut ID3D10Buffer) =
        (ptr::null_mut(), ptr::null_mut());
    let cpu = D3D10_CPU_ACCESS_READ | D3D10_CPU_ACCESS_WRITE;
    let d = desc(D3D10_USAGE_STAGING, cpu);
    assert_eq!(
        call!(dev, CreateBuffer(&d, ptr::null(), &mut staging)),
        S_OK
    );
    let d = desc(D3D10_USAGE_DEFAULT, 0);
    assert_eq!(
        call!(dev, CreateBuffer(&d, ptr::null(), &mut default)),
        S_OK
    );
    let acquire = c"clEnqueueAcquireD3D10ObjectsKHR";
    // The references the layer's memory objects would hold.
    add_ref(staging);
    add_ref(default);
    set_access(staging, 0, DXCL_OPENCL_ACCESS_ACQUIRED, acquire);
    set_access(default, 0, DXCL_OPENCL_ACCESS_ACQUIRED, acquire);
    let mut p = ptr::null_mut();
    assert_eq!(call!(staging, Map(D3D10_MAP_READ, 0, &mut p)), S_OK);
    call!(staging, Unmap());
    call!(dev, CopyResource(default.cast(), staging.cast()));
    set_access(staging, 0, DXCL_OPENCL_ACCESS_NONE, RELEASE);
    set_access(default, 0, DXCL_OPENCL_ACCESS_NONE, RELEASE);
    for b in [staging, default] {
        release(b);
        assert_eq!(release(b), 0);
    }
    assert_eq!(release(dev), 0);
}

#[test]
fn d3d10_calls_are_named_as_the_application_made_them() {
    let lines = run("scenario_d3d10", Some("1"));
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines[0].starts_with("dxcl validation: ID3D10Buffer::Map on ID3D10Buffer 0x")
            && lines[0].contains("(64 bytes) subresource 0 while OpenCL holds it acquired"),
        "{lines:#?}"
    );
    assert!(
        lines[1].starts_with("dxcl validation: ID3D10Device::CopyResource on ID3D10Buffer 0x"),
        "{lines:#?}"
    );
}

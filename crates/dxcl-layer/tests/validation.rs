//! `DXCL_VALIDATE=1` (docs/validation.md) end to end: the real loader and PoCL with this layer,
//! dxcl's D3D11 runtime in-process. Each scenario runs in a child process (this binary, one
//! ignored test): the setting is read once per process, and the reports go to the real stderr.

#![allow(non_snake_case)] // CL and D3D names.

mod support;

use std::ptr::{null, null_mut};

use dxcl_abi::*;
use opencl_sys::*;
use support::*;

/// Runs the ignored test `scenario` in a child process with `DXCL_VALIDATE` set to `validate`
/// (unset for `None`) and `DXCL_STRATEGY` to `strategy`; returns its report lines.
fn run(scenario: &str, validate: Option<&str>, strategy: Option<&str>) -> Vec<String> {
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
    match strategy {
        Some(s) => cmd.env("DXCL_STRATEGY", s),
        None => cmd.env_remove("DXCL_STRATEGY"),
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

/// A device, its immediate context, a named DEFAULT buffer shared with a new OpenCL context, and
/// a queue.
struct Scene {
    device: *mut ID3D11Device,
    immediate: *mut ID3D11DeviceContext,
    buf: *mut ID3D11Buffer,
    ctx: cl_context,
    queue: cl_command_queue,
    mem: cl_mem,
    acquire: Acquire,
    release: Acquire,
}

fn scene() -> Scene {
    let (p, d) = setup();
    let (device, immediate) = d3d11_device(D3D_DRIVER_TYPE_HARDWARE, true);
    let desc = D3D11_BUFFER_DESC {
        ByteWidth: 256,
        Usage: D3D11_USAGE_DEFAULT,
        BindFlags: D3D11_BIND_SHADER_RESOURCE as u32,
        ..Default::default()
    };
    let mut buf = null_mut();
    let name = "particles";
    // SAFETY: a live device and valid arguments; the buffer is a device child.
    unsafe {
        assert_eq!(
            ((*(*device).lpVtbl).CreateBuffer)(device, &desc, null(), &mut buf),
            S_OK
        );
        let child = buf.cast::<ID3D11DeviceChild>();
        let hr = ((*(*child).lpVtbl).SetPrivateData)(
            child,
            &WKPDID_D3DDebugObjectName,
            name.len() as u32,
            name.as_ptr().cast(),
        );
        assert_eq!(hr, S_OK);
    }
    let (ctx, queue) = context(p, d, CL_CONTEXT_D3D11_DEVICE_KHR, device.cast());
    let mut err = 0;
    let create: CreateBuffer = ext(p, c"clCreateFromD3D11BufferKHR");
    // SAFETY: a live context and buffer of its device.
    let mem = unsafe { create(ctx, 0, buf.cast(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    Scene {
        device,
        immediate,
        buf,
        ctx,
        queue,
        mem,
        acquire: ext(p, c"clEnqueueAcquireD3D11ObjectsKHR"),
        release: ext(p, c"clEnqueueReleaseD3D11ObjectsKHR"),
    }
}

impl Scene {
    fn acquire(&self) {
        // SAFETY: a live queue and memory object.
        unsafe {
            assert_eq!(
                (self.acquire)(self.queue, 1, &self.mem, 0, null(), null_mut()),
                CL_SUCCESS
            );
            assert_eq!(clFinish(self.queue), CL_SUCCESS);
        }
    }

    fn release(&self) {
        // SAFETY: a live queue and memory object.
        unsafe {
            assert_eq!(
                (self.release)(self.queue, 1, &self.mem, 0, null(), null_mut()),
                CL_SUCCESS
            );
            assert_eq!(clFinish(self.queue), CL_SUCCESS);
        }
    }

    /// Direct3D writes the buffer.
    fn update(&self) {
        let data = [7u8; 256];
        let c = self.immediate;
        // SAFETY: a live context and buffer; `data` spans the buffer.
        unsafe {
            ((*(*c).lpVtbl).UpdateSubresource)(
                c,
                self.buf.cast(),
                0,
                null(),
                data.as_ptr().cast(),
                0,
                0,
            )
        };
    }
}

/// Releases a COM object through IUnknown.
fn release_com<T>(p: *mut T) -> u32 {
    let u = p.cast::<IUnknown>();
    // SAFETY: a live COM object on which the caller owns a reference.
    unsafe { ((*(*u).lpVtbl).Release)(u) }
}

#[test]
#[ignore = "a scenario: run in a child process by the tests below"]
fn scenario_misuse() {
    let s = scene();
    s.acquire();
    // (1): Direct3D writes the buffer while OpenCL holds it acquired, twice.
    s.update();
    s.update();
    // (2): the application lets go of the buffer and the device first.
    assert_eq!(
        release_com(s.buf),
        1,
        "the memory object's reference is left"
    );
    release_com(s.device);
    // (3): the context goes while the buffer is still acquired.
    // SAFETY: live objects released once.
    unsafe {
        assert_eq!(clReleaseCommandQueue(s.queue), CL_SUCCESS);
        assert_eq!(clReleaseContext(s.ctx), CL_SUCCESS);
        assert_eq!(clReleaseMemObject(s.mem), CL_SUCCESS);
    }
    release_com(s.immediate);
}

#[test]
#[ignore = "a scenario: run in a child process by the tests below"]
fn scenario_correct() {
    let s = scene();
    s.update();
    s.acquire();
    s.release();
    s.update();
    s.acquire();
    s.release();
    // The OpenCL objects go first, then Direct3D's.
    // SAFETY: live objects released once.
    unsafe {
        assert_eq!(clReleaseMemObject(s.mem), CL_SUCCESS);
        assert_eq!(clReleaseCommandQueue(s.queue), CL_SUCCESS);
        assert_eq!(clReleaseContext(s.ctx), CL_SUCCESS);
    }
    assert_eq!(release_com(s.buf), 0);
    release_com(s.immediate);
    assert_eq!(release_com(s.device), 0);
}

#[test]
fn each_misuse_is_reported_once() {
    // The staging copy touches the resource inside acquire and release: never reported.
    for strategy in [None, Some("staging")] {
        let lines = run("scenario_misuse", Some("1"), strategy);
        let expected = [
            r#"ID3D11DeviceContext::UpdateSubresource on ID3D11Buffer "particles" (0x"#,
            r#"ID3D11Buffer::Release on ID3D11Buffer "particles" (0x"#,
            "ID3D11Device::Release on ID3D11Device 0x",
            "clReleaseContext on context 0x",
        ];
        assert_eq!(lines.len(), expected.len(), "{strategy:?}: {lines:#?}");
        for (line, start) in lines.iter().zip(expected) {
            assert!(
                line.starts_with(&format!("dxcl validation: {start}")),
                "{strategy:?}: {line:?} does not start with {start:?}"
            );
        }
        assert!(lines[0].ends_with(
            "subresource 0 while OpenCL holds it acquired (clEnqueueAcquireD3D11ObjectsKHR)"
        ));
        assert!(lines[1].ends_with(
            "drops the application's last reference while 1 OpenCL memory object(s) made from \
             it live (clCreateFromD3D11BufferKHR)"
        ));
        assert!(lines[3].contains(r#"(ID3D11Buffer "particles" (0x"#));
        assert!(lines[3].ends_with(
            "subresource 0) is still acquired (clEnqueueAcquireD3D11ObjectsKHR, no \
             clEnqueueReleaseD3D11ObjectsKHR)"
        ));
    }
}

#[test]
fn a_correct_program_gets_no_report() {
    for strategy in [None, Some("staging")] {
        let lines = run("scenario_correct", Some("1"), strategy);
        assert_eq!(lines, Vec::<String>::new(), "{strategy:?}");
    }
}

#[test]
fn nothing_is_reported_when_validation_is_off() {
    assert_eq!(run("scenario_misuse", None, None), Vec::<String>::new());
}

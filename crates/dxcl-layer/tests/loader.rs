//! Through the real loader (ocl-icd's libOpenCL) onto PoCL, with the freshly built layer in
//! OPENCL_LAYERS. A fake COM device stands in for a D3D11 device where only its identity and
//! reference count matter.

#![allow(non_snake_case)] // CL function names.
#![allow(deprecated)] // clCreateCommandQueue, as OpenCL 1.2 applications call it.

mod support;

use std::ffi::{c_char, c_void, CStr};
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicU32, Ordering};

use opencl_sys::*;
use support::*;

// opencl-sys 0.6.5 declares clGetExtensionFunctionAddress without its return type.
#[link(name = "OpenCL")]
extern "C" {
    fn clGetExtensionFunctionAddress(name: *const c_char) -> *mut c_void;
}

type GetIds = unsafe extern "C" fn(
    cl_platform_id,
    cl_uint,
    Id,
    cl_uint,
    cl_uint,
    *mut cl_device_id,
    *mut cl_uint,
) -> cl_int;
const NAMES: [&str; 24] = [
    "clGetDeviceIDsFromD3D10KHR",
    "clCreateFromD3D10BufferKHR",
    "clCreateFromD3D10Texture2DKHR",
    "clCreateFromD3D10Texture3DKHR",
    "clEnqueueAcquireD3D10ObjectsKHR",
    "clEnqueueReleaseD3D10ObjectsKHR",
    "clGetDeviceIDsFromD3D11KHR",
    "clCreateFromD3D11BufferKHR",
    "clCreateFromD3D11Texture2DKHR",
    "clCreateFromD3D11Texture3DKHR",
    "clEnqueueAcquireD3D11ObjectsKHR",
    "clEnqueueReleaseD3D11ObjectsKHR",
    "clGetDeviceIDsFromD3D10NV",
    "clCreateFromD3D10BufferNV",
    "clCreateFromD3D10Texture2DNV",
    "clCreateFromD3D10Texture3DNV",
    "clEnqueueAcquireD3D10ObjectsNV",
    "clEnqueueReleaseD3D10ObjectsNV",
    "clGetDeviceIDsFromD3D11NV",
    "clCreateFromD3D11BufferNV",
    "clCreateFromD3D11Texture2DNV",
    "clCreateFromD3D11Texture3DNV",
    "clEnqueueAcquireD3D11ObjectsNV",
    "clEnqueueReleaseD3D11ObjectsNV",
];

fn string(query: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> String {
    let mut n = 0;
    assert_eq!(query(0, null_mut(), &mut n), CL_SUCCESS);
    let mut b = vec![0u8; n];
    assert_eq!(query(n, b.as_mut_ptr().cast(), null_mut()), CL_SUCCESS);
    CStr::from_bytes_until_nul(&b)
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn extension_strings_list_each_name_once() {
    let (p, d) = setup();
    // SAFETY: size-query protocol with our own buffers.
    let plat = string(|n, v, r| unsafe { clGetPlatformInfo(p, CL_PLATFORM_EXTENSIONS, n, v, r) });
    // SAFETY: as above.
    let dev = string(|n, v, r| unsafe { clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, v, r) });
    for name in [
        "cl_khr_d3d10_sharing",
        "cl_khr_d3d11_sharing",
        "cl_nv_d3d10_sharing",
        "cl_nv_d3d11_sharing",
    ] {
        assert_eq!(
            plat.split_whitespace().filter(|n| *n == name).count(),
            1,
            "{plat}"
        );
        assert_eq!(
            dev.split_whitespace().filter(|n| *n == name).count(),
            1,
            "{dev}"
        );
    }
    let mut n = 0;
    // SAFETY: size query.
    unsafe {
        assert_eq!(
            clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS_WITH_VERSION, 0, null_mut(), &mut n),
            CL_SUCCESS
        )
    };
    let mut b = vec![0u8; n];
    // SAFETY: our buffer of n bytes.
    unsafe {
        assert_eq!(
            clGetDeviceInfo(
                d,
                CL_DEVICE_EXTENSIONS_WITH_VERSION,
                n,
                b.as_mut_ptr().cast(),
                null_mut()
            ),
            CL_SUCCESS
        )
    };
    let names: Vec<String> = b
        .chunks(68)
        .map(|c| {
            CStr::from_bytes_until_nul(&c[4..])
                .unwrap()
                .to_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(names.iter().filter(|n| n.contains("d3d1")).count(), 4);
    // A too-small buffer is CL_INVALID_VALUE.
    // SAFETY: a one-byte buffer with size 1.
    unsafe {
        assert_eq!(
            clGetPlatformInfo(
                p,
                CL_PLATFORM_EXTENSIONS,
                1,
                b.as_mut_ptr().cast(),
                null_mut()
            ),
            CL_INVALID_VALUE
        )
    };
}

#[test]
fn all_24_functions_are_reachable() {
    let (p, _) = setup();
    for name in NAMES {
        let c = std::ffi::CString::new(name).unwrap();
        // SAFETY: valid platform and names.
        unsafe {
            let a = clGetExtensionFunctionAddressForPlatform(p, c.as_ptr());
            let b = clGetExtensionFunctionAddress(c.as_ptr());
            assert!(!a.is_null() && a == b, "{name}");
        }
    }
    // SAFETY: valid name.
    assert!(unsafe {
        clGetExtensionFunctionAddressForPlatform(p, c"clCreateFromD3D12BufferKHR".as_ptr())
    }
    .is_null());
}

#[test]
fn get_device_ids_argument_errors() {
    let (p, _) = setup();
    let get: GetIds = ext(p, c"clGetDeviceIDsFromD3D11KHR");
    let mut n = 0;
    let mut d = null_mut();
    // SAFETY: every pointer is valid or null as the cases need.
    unsafe {
        assert_eq!(
            get(
                null_mut(),
                0x4019,
                null_mut(),
                0x401B,
                0,
                null_mut(),
                &mut n
            ),
            CL_INVALID_PLATFORM
        );
        assert_eq!(
            get(
                0x1234 as cl_platform_id,
                0x4019,
                null_mut(),
                0x401B,
                0,
                null_mut(),
                &mut n
            ),
            CL_INVALID_PLATFORM
        );
        assert_eq!(
            get(p, 0x4010, null_mut(), 0x401B, 0, null_mut(), &mut n),
            CL_INVALID_VALUE,
            "D3D10 source"
        );
        assert_eq!(
            get(p, 0x4019, null_mut(), 0x4013, 0, null_mut(), &mut n),
            CL_INVALID_VALUE,
            "D3D10 set"
        );
        assert_eq!(
            get(p, 0x4019, null_mut(), 0x401B, 0, &mut d, &mut n),
            CL_INVALID_VALUE,
            "0 entries"
        );
        assert_eq!(
            get(p, 0x4019, null_mut(), 0x401B, 1, null_mut(), null_mut()),
            CL_INVALID_VALUE,
            "no outputs"
        );
        // Only CL_INVALID_PLATFORM, CL_INVALID_VALUE and CL_DEVICE_NOT_FOUND are listed: nothing
        // corresponds to an object that is not a D3D device or adapter.
        assert_eq!(
            get(p, 0x4019, null_mut(), 0x401B, 0, null_mut(), &mut n),
            CL_DEVICE_NOT_FOUND,
            "null device"
        );
        assert_eq!(
            get(p, 0x401A, null_mut(), 0x401B, 0, null_mut(), &mut n),
            CL_DEVICE_NOT_FOUND,
            "null adapter"
        );
    }
}

// --- a fake COM object answering only IUnknown and ID3D11Device ----------------------------

#[repr(C)]
struct Fake {
    vtbl: *const [usize; 3],
    refs: AtomicU32,
}

const IID_IUNKNOWN: [u8; 16] = [0, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0x46];
/// IID_ID3D11Device {db6f6ddb-ac77-4e88-8253-819df9bbf140} in memory order.
const IID_D3D11_DEVICE: [u8; 16] = [
    0xdb, 0x6d, 0x6f, 0xdb, 0x77, 0xac, 0x88, 0x4e, 0x82, 0x53, 0x81, 0x9d, 0xf9, 0xbb, 0xf1, 0x40,
];

unsafe extern "system" fn fake_qi(
    this: *mut Fake,
    iid: *const [u8; 16],
    out: *mut *mut c_void,
) -> i32 {
    // SAFETY: COM contract: valid iid and out pointers.
    unsafe {
        if *iid == IID_IUNKNOWN || *iid == IID_D3D11_DEVICE {
            (*this).refs.fetch_add(1, Ordering::SeqCst);
            *out = this.cast();
            0
        } else {
            *out = null_mut();
            0x80004002_u32 as i32
        }
    }
}
unsafe extern "system" fn fake_add_ref(this: *mut Fake) -> u32 {
    // SAFETY: live object.
    unsafe { (*this).refs.fetch_add(1, Ordering::SeqCst) + 1 }
}
unsafe extern "system" fn fake_release(this: *mut Fake) -> u32 {
    // SAFETY: live object (leaked for the test's life).
    unsafe { (*this).refs.fetch_sub(1, Ordering::SeqCst) - 1 }
}

fn fake_device() -> &'static Fake {
    let vtbl: &'static [usize; 3] = Box::leak(Box::new([
        fake_qi as *const () as usize,
        fake_add_ref as *const () as usize,
        fake_release as *const () as usize,
    ]));
    Box::leak(Box::new(Fake {
        vtbl,
        refs: AtomicU32::new(1),
    }))
}

fn props(p: cl_platform_id, device: *const Fake, user_sync: bool) -> Vec<isize> {
    vec![
        CL_CONTEXT_PLATFORM,
        p as isize,
        0x401D,
        device as isize,
        CL_CONTEXT_INTEROP_USER_SYNC,
        user_sync as isize,
        0,
    ]
}

#[test]
fn context_with_a_d3d11_device() {
    let (p, d) = setup();
    let dev = fake_device();
    let list = props(p, dev, true);
    let mut err = 0;
    // SAFETY: a valid list, device and out pointer.
    let ctx = unsafe { clCreateContext(list.as_ptr(), 1, &d, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    assert!(
        dev.refs.load(Ordering::SeqCst) > 1,
        "device AddRef'd for the context"
    );
    // CL_CONTEXT_PROPERTIES gives back the application's list unchanged.
    let mut n = 0;
    let mut back = vec![0isize; 16];
    // SAFETY: our buffer of 16 entries.
    unsafe {
        assert_eq!(
            clGetContextInfo(
                ctx,
                CL_CONTEXT_PROPERTIES,
                128,
                back.as_mut_ptr().cast(),
                &mut n
            ),
            CL_SUCCESS
        )
    };
    assert_eq!(&back[..n / 8], &list[..]);
    let mut prefer: cl_bool = 7;
    // SAFETY: a cl_bool out value.
    unsafe {
        assert_eq!(
            clGetContextInfo(
                ctx,
                0x402D,
                4,
                (&mut prefer as *mut cl_bool).cast(),
                null_mut()
            ),
            CL_SUCCESS
        )
    };
    assert_eq!(prefer, CL_FALSE);
    // SAFETY: as above; the D3D10 query on a D3D11 context is the platform's CL_INVALID_VALUE.
    unsafe {
        assert_eq!(
            clGetContextInfo(
                ctx,
                0x402C,
                4,
                (&mut prefer as *mut cl_bool).cast(),
                null_mut()
            ),
            CL_INVALID_VALUE
        )
    };

    // Acquire on this context: argument errors and the (0, NULL) no-op with an event.
    let acquire: Acquire = ext(p, c"clEnqueueAcquireD3D11ObjectsKHR");
    let release: Acquire = ext(p, c"clEnqueueReleaseD3D11ObjectsNV");
    // SAFETY: valid context and device.
    let q = unsafe { clCreateCommandQueue(ctx, d, 0, &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let mut ev = null_mut();
    // SAFETY: a valid context and out pointer.
    let plain = unsafe { clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, null_mut(), &mut err) };
    // SAFETY: every pointer valid or null as each case needs.
    unsafe {
        assert_eq!(
            acquire(q, 1, null(), 0, null(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            acquire(q, 0, &plain, 0, null(), null_mut()),
            CL_INVALID_VALUE
        );
        assert_eq!(
            acquire(q, 1, &plain, 0, null(), null_mut()),
            CL_INVALID_MEM_OBJECT
        );
        assert_eq!(
            release(q, 1, &plain, 0, null(), null_mut()),
            CL_INVALID_MEM_OBJECT
        );
        assert_eq!(
            acquire(q, 1, &plain, 1, null(), null_mut()),
            CL_INVALID_EVENT_WAIT_LIST
        );
        assert_eq!(
            acquire(null_mut(), 1, &plain, 0, null(), null_mut()),
            CL_INVALID_COMMAND_QUEUE
        );
        assert_eq!(acquire(q, 0, null(), 0, null(), null_mut()), CL_SUCCESS);
        assert_eq!(acquire(q, 0, null(), 0, null(), &mut ev), CL_SUCCESS);
        let mut ty: cl_command_type = 0;
        assert_eq!(
            clGetEventInfo(
                ev,
                CL_EVENT_COMMAND_TYPE,
                4,
                (&mut ty as *mut cl_uint).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(ty, 0x4020);
        assert_eq!(clReleaseEvent(ev), CL_SUCCESS);
        assert_eq!(release(q, 0, null(), 0, null(), &mut ev), CL_SUCCESS);
        assert_eq!(
            clGetEventInfo(
                ev,
                CL_EVENT_COMMAND_TYPE,
                4,
                (&mut ty as *mut cl_uint).cast(),
                null_mut()
            ),
            CL_SUCCESS
        );
        assert_eq!(ty, 0x4021);
        assert_eq!(clReleaseEvent(ev), CL_SUCCESS);
        // A plain buffer is no D3D object: its queries say so, and using it is not guarded.
        let mut r: Id = null_mut();
        assert_eq!(
            clGetMemObjectInfo(plain, 0x401E, 8, (&mut r as *mut Id).cast(), null_mut()),
            -1007
        );
        assert_eq!(
            clGetMemObjectInfo(
                null_mut(),
                0x401E,
                8,
                (&mut r as *mut Id).cast(),
                null_mut()
            ),
            CL_INVALID_MEM_OBJECT
        );
        let mut buf = [0u8; 64];
        assert_eq!(
            clEnqueueReadBuffer(
                q,
                plain,
                CL_TRUE,
                0,
                64,
                buf.as_mut_ptr().cast(),
                0,
                null(),
                null_mut()
            ),
            CL_SUCCESS
        );
        // The fake device is not a D3D10 device: a D3D10 create on this context is refused.
        let create10: CreateBuffer = ext(p, c"clCreateFromD3D10BufferKHR");
        assert_eq!(create10(ctx, 0, null_mut(), &mut err), null_mut());
        assert_eq!(err, CL_INVALID_CONTEXT);
        let create11: CreateBuffer = ext(p, c"clCreateFromD3D11BufferNV");
        assert_eq!(
            create11(ctx, CL_MEM_USE_HOST_PTR, null_mut(), &mut err),
            null_mut()
        );
        assert_eq!(err, CL_INVALID_VALUE, "flags");
        assert_eq!(create11(ctx, 0, null_mut(), &mut err), null_mut());
        assert_eq!(err, -1007, "null resource");
        assert_eq!(
            create11(ctx, 0, (dev as *const Fake).cast_mut().cast(), &mut err),
            null_mut()
        );
        assert_eq!(err, -1007, "a device is not a buffer");
        clReleaseMemObject(plain);
        clReleaseCommandQueue(q);
        let before = dev.refs.load(Ordering::SeqCst);
        assert_eq!(clReleaseContext(ctx), CL_SUCCESS);
        assert_eq!(
            dev.refs.load(Ordering::SeqCst),
            before - 1,
            "device released with the context"
        );
    }
}

#[test]
fn context_property_errors() {
    let (p, d) = setup();
    let dev = fake_device();
    let mut err = 0;
    let cases: [(Vec<isize>, cl_int); 4] = [
        // INTEROP_USER_SYNC is a cl_bool: CL_INVALID_PROPERTY "if the value specified for a
        // supported property name is not valid".
        (
            vec![
                CL_CONTEXT_PLATFORM,
                p as isize,
                0x401D,
                dev as *const Fake as isize,
                0x1085,
                2,
                0,
            ],
            CL_INVALID_PROPERTY,
        ),
        (
            vec![
                CL_CONTEXT_PLATFORM,
                p as isize,
                0x4014,
                dev as *const Fake as isize,
                0,
            ],
            -1002,
        ),
        (
            vec![0x4014, 1, 0x401D, dev as *const Fake as isize, 0],
            CL_INVALID_OPERATION,
        ),
        (
            vec![0x401D, dev as *const Fake as isize, 0x2008, 5, 0],
            CL_INVALID_OPERATION,
        ),
    ];
    for (list, want) in cases {
        // SAFETY: valid lists and out pointers.
        let ctx = unsafe { clCreateContext(list.as_ptr(), 1, &d, None, null_mut(), &mut err) };
        assert!(ctx.is_null());
        assert_eq!(err, want, "{list:x?}");
    }
    assert_eq!(
        dev.refs.load(Ordering::SeqCst),
        1,
        "no reference kept on failure"
    );
}

#[test]
fn no_d3d_context_passes_through() {
    let (p, d) = setup();
    let list = [CL_CONTEXT_PLATFORM, p as isize, 0];
    let mut err = 0;
    // SAFETY: valid list and out pointer.
    let ctx = unsafe { clCreateContext(list.as_ptr(), 1, &d, None, null_mut(), &mut err) };
    assert_eq!(err, CL_SUCCESS);
    let acquire: Acquire = ext(p, c"clEnqueueAcquireD3D11ObjectsNV");
    // SAFETY: valid context/device; a plain buffer.
    unsafe {
        let q = clCreateCommandQueue(ctx, d, 0, &mut err);
        let b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 16, null_mut(), &mut err);
        assert_eq!(acquire(q, 1, &b, 0, null(), null_mut()), CL_INVALID_CONTEXT);
        let mut prefer: cl_bool = 0;
        assert_eq!(
            clGetContextInfo(
                ctx,
                0x402D,
                4,
                (&mut prefer as *mut cl_bool).cast(),
                null_mut()
            ),
            CL_INVALID_VALUE
        );
        clReleaseMemObject(b);
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    }
}

//! The WoW64 table called as Wine calls it for a 32-bit program: `struct dxcl_call` blocks whose
//! arguments are 32-bit values, pointing at 32-bit arrays and structures in the low 2 GiB, on the
//! host's OpenCL (PoCL in CI). No 32-bit Wine is needed.

use super::*;
use crate::gen::NAMES;
use crate::unixlib::{Call, Callback, CallbackWow64, CALL, CB_CONTEXT_NOTIFY, CB_EVENT};

const CL_SUCCESS: u64 = 0;

/// Memory in the low 2 GiB (`MAP_32BIT`), where a 32-bit program's data lies, handed out in order.
struct Low {
    base: u64,
    used: usize,
}

const LOW_SIZE: usize = 1 << 20;

impl Low {
    fn new() -> Low {
        Low {
            base: crate::low::test_mapping(LOW_SIZE),
            used: 0,
        }
    }

    /// `n` zeroed bytes, 8-aligned.
    fn alloc(&mut self, n: usize) -> u64 {
        let at = self.base + self.used as u64;
        self.used += n.div_ceil(8) * 8;
        assert!(self.used <= LOW_SIZE);
        at
    }

    fn u32s(&mut self, v: &[u32]) -> u64 {
        let at = self.alloc(4 * v.len().max(1));
        for (k, x) in v.iter().enumerate() {
            // SAFETY: within the block just handed out.
            unsafe { write32(at, k, *x) };
        }
        at
    }

    fn bytes(&mut self, v: &[u8]) -> u64 {
        let at = self.alloc(v.len());
        // SAFETY: as above.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), at as usize as *mut u8, v.len()) };
        at
    }

    fn get(&self, at: u64, k: usize) -> u32 {
        // SAFETY: tests read only blocks handed out by this arena.
        unsafe { read32(at, k) }
    }
}

impl Drop for Low {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, no longer used.
        unsafe { libc::munmap(self.base as usize as *mut c_void, LOW_SIZE) };
    }
}

/// Calls entry point `name` through the WoW64 table with 32-bit arguments; its return value.
fn call(name: &str, args: &[u64]) -> u64 {
    let function = NAMES
        .iter()
        .position(|n| *n == name)
        .expect("an entry point") as u32;
    let mut p = Call {
        function,
        pad: 0,
        args: [0; MAX_ARGS],
        ret: 0,
    };
    p.args[..args.len()].copy_from_slice(args);
    // SAFETY: the table's CALL entry with a `struct dxcl_call`, as Wine passes a 32-bit one.
    let status = unsafe { crate::__wine_unix_call_wow64_funcs[CALL]((&mut p as *mut Call).cast()) };
    assert_eq!(
        status, 0,
        "{name}: the unix call failed (is the host's OpenCL there?)"
    );
    p.ret
}

fn code(r: u64) -> i32 {
    r as i32
}

fn is_token(v: u32) -> bool {
    handles::lookup(v).is_some()
}

#[test]
fn a_32_bit_program_runs_a_kernel_through_the_wow64_table() {
    assert!(
        crate::host::host().is_some(),
        "the host's OpenCL did not open ({:?}): scripts/deps.sh installs PoCL",
        crate::host::error()
    );
    let mut low = Low::new();
    let num = low.alloc(4);
    assert_eq!(call("clGetPlatformIDs", &[0, 0, num]), CL_SUCCESS);
    assert!(low.get(num, 0) >= 1);
    let platforms = low.alloc(4);
    assert_eq!(call("clGetPlatformIDs", &[1, platforms, 0]), CL_SUCCESS);
    let platform = low.get(platforms, 0);
    assert!(
        is_token(platform),
        "a platform gets a 32-bit token: {platform:#x}"
    );

    let devices = low.alloc(4);
    let all = opencl_sys::CL_DEVICE_TYPE_ALL;
    assert_eq!(
        call("clGetDeviceIDs", &[platform as u64, all, 1, devices, num]),
        CL_SUCCESS
    );
    let device = low.get(devices, 0);
    assert!(is_token(device));

    // A handle answer, and a size_t[] answer narrowed; the size returned is the 32-bit one.
    let (value, size_ret) = (low.alloc(64), low.alloc(4));
    let info = |low: &Low, name: u32, size: u64| {
        let r = call(
            "clGetDeviceInfo",
            &[device as u64, name as u64, size, value, size_ret],
        );
        (code(r), low.get(size_ret, 0))
    };
    assert_eq!(info(&low, opencl_sys::CL_DEVICE_PLATFORM, 4), (0, 4));
    assert_eq!(low.get(value, 0), platform);
    let dims = opencl_sys::CL_DEVICE_MAX_WORK_ITEM_SIZES;
    let (r, n) = info(&low, dims, 64);
    assert_eq!((r, n % 4), (0, 0));
    let mut host_sizes = [0usize; 16];
    host_device_info(device, dims, &mut host_sizes);
    for (k, host) in host_sizes.iter().enumerate().take(n as usize / 4) {
        assert_eq!(low.get(value, k) as usize, (*host).min(u32::MAX as usize));
    }
    // CL_INVALID_VALUE "if size in bytes specified by param_value_size is < size of return type".
    assert_eq!(info(&low, dims, n as u64 - 4).0, -30);
    assert_eq!(
        info(&low, opencl_sys::CL_DEVICE_NAME, 64).0,
        0,
        "bytes pass as they are"
    );

    // A context from a 32-bit property list.
    let err = low.alloc(4);
    let props = low.u32s(&[0x1084, platform, 0]);
    let context = call("clCreateContext", &[props, 1, devices, 0, 0, err]) as u32;
    assert_eq!((low.get(err, 0), is_token(context)), (0, true));
    let ctx_info = |low: &Low, name: u32| {
        let r = call(
            "clGetContextInfo",
            &[context as u64, name as u64, 64, value, size_ret],
        );
        assert_eq!(code(r), 0);
        (0..low.get(size_ret, 0) as usize / 4)
            .map(|k| low.get(value, k))
            .collect::<Vec<_>>()
    };
    assert_eq!(ctx_info(&low, opencl_sys::CL_CONTEXT_DEVICES), [device]);
    assert_eq!(
        ctx_info(&low, opencl_sys::CL_CONTEXT_PROPERTIES),
        [0x1084, platform, 0]
    );

    let queue = call(
        "clCreateCommandQueueWithProperties",
        &[context as u64, device as u64, 0, err],
    );
    assert_eq!((low.get(err, 0), is_token(queue as u32)), (0, true));
    let buffer = call(
        "clCreateBuffer",
        &[context as u64, opencl_sys::CL_MEM_READ_WRITE, 64, 0, err],
    );
    assert_eq!(low.get(err, 0), 0);

    // A program from an array of 32-bit string pointers, built for a 32-bit device list.
    let source =
        low.bytes(b"kernel void add(global int *b, int k) { b[get_global_id(0)] += k; }\0");
    let strings = low.u32s(&[source as u32]);
    let program = call(
        "clCreateProgramWithSource",
        &[context as u64, 1, strings, 0, err],
    );
    assert_eq!(low.get(err, 0), 0);
    assert_eq!(
        call("clBuildProgram", &[program, 1, devices, 0, 0, 0]),
        CL_SUCCESS
    );
    let name = low.bytes(b"add\0");
    let kernel = call("clCreateKernel", &[program, name, err]);
    assert_eq!(low.get(err, 0), 0);
    // clSetKernelArg: a 4-byte handle for a buffer argument, a 4-byte int for an int one.
    // A buffer argument may be NULL (arg_value NULL, or pointing to a NULL handle).
    let null = low.u32s(&[0]);
    assert_eq!(call("clSetKernelArg", &[kernel, 0, 4, null]), CL_SUCCESS);
    assert_eq!(call("clSetKernelArg", &[kernel, 0, 4, 0]), CL_SUCCESS);
    let buffer_arg = low.u32s(&[buffer as u32]);
    assert_eq!(
        call("clSetKernelArg", &[kernel, 0, 4, buffer_arg]),
        CL_SUCCESS
    );
    let five = low.u32s(&[5]);
    assert_eq!(call("clSetKernelArg", &[kernel, 1, 4, five]), CL_SUCCESS);

    let data: Vec<u32> = (0..16).collect();
    let host_data = low.u32s(&data);
    let event = low.alloc(4);
    let w = call(
        "clEnqueueWriteBuffer",
        &[queue, buffer, 1, 0, 64, host_data, 0, 0, event],
    );
    assert_eq!(w, CL_SUCCESS);
    assert!(
        is_token(low.get(event, 0)),
        "an event comes back as a token"
    );
    let global = low.u32s(&[16]);
    let run = call(
        "clEnqueueNDRangeKernel",
        &[queue, kernel, 1, 0, global, 0, 1, event, 0],
    );
    assert_eq!(run, CL_SUCCESS);
    let out = low.alloc(64);
    assert_eq!(
        call(
            "clEnqueueReadBuffer",
            &[queue, buffer, 1, 0, 64, out, 0, 0, 0]
        ),
        CL_SUCCESS
    );
    let got: Vec<u32> = (0..16).map(|k| low.get(out, k)).collect();
    assert_eq!(got, (5..21).collect::<Vec<u32>>());

    let ev = low.get(event, 0) as u64;
    let r = call(
        "clGetEventInfo",
        &[ev, opencl_sys::CL_EVENT_CONTEXT as u64, 4, value, size_ret],
    );
    assert_eq!((code(r), low.get(value, 0)), (0, context));

    // A mapping, asked non-blocking: complete on return, within the program's reach (a copy
    // where the host's lies beyond it), written back into the buffer at unmap.
    let rw = opencl_sys::CL_MAP_READ | opencl_sys::CL_MAP_WRITE;
    let map_event = low.alloc(4);
    let map = [queue, buffer, 0, rw, 0, 64, 0, 0, map_event, err];
    let p = call("clEnqueueMapBuffer", &map);
    assert_eq!(low.get(err, 0), 0);
    assert!(p != 0 && p + 64 <= 1 << 31, "{p:#x} is out of reach");
    // SAFETY: the program's mapping of 64 bytes.
    let mapped: Vec<u32> = (0..16).map(|k| unsafe { read32(p, k) }).collect();
    assert_eq!(mapped, (5..21).collect::<Vec<u32>>());
    for k in 0..16 {
        // SAFETY: as above, mapped for writing.
        unsafe { write32(p, k, 100 + k as u32) };
    }
    let mapped_event = low.get(map_event, 0);
    assert!(is_token(mapped_event));
    assert_eq!(
        call("clEnqueueUnmapMemObject", &[queue, buffer, p, 0, 0, 0]),
        CL_SUCCESS
    );
    assert_eq!(
        call(
            "clEnqueueReadBuffer",
            &[queue, buffer, 1, 0, 64, out, 0, 0, 0]
        ),
        CL_SUCCESS
    );
    let got: Vec<u32> = (0..16).map(|k| low.get(out, k)).collect();
    assert_eq!(
        got,
        (100..116).collect::<Vec<u32>>(),
        "written back at unmap"
    );

    // An image: its row pitch in the program's size_t, the rows where the pitch says.
    let format = low.u32s(&[opencl_sys::CL_RGBA, opencl_sys::CL_UNSIGNED_INT8]);
    let desc = low.u32s(&[opencl_sys::CL_MEM_OBJECT_IMAGE2D, 4, 3, 1, 1, 0, 0, 0, 0, 0]);
    let image = call(
        "clCreateImage",
        &[
            context as u64,
            opencl_sys::CL_MEM_READ_WRITE,
            format,
            desc,
            0,
            err,
        ],
    );
    assert_eq!(low.get(err, 0), 0);
    let (origin, region) = (low.u32s(&[0, 0, 0]), low.u32s(&[4, 3, 1]));
    let texels: Vec<u32> = (0..12).map(|k| 0x0101_0101 * k).collect();
    let texel_data = low.u32s(&texels);
    let write = [queue, image, 1, origin, region, 0, 0, texel_data, 0, 0, 0];
    assert_eq!(call("clEnqueueWriteImage", &write), CL_SUCCESS);
    let (row_pitch, slice_pitch) = (low.alloc(4), low.alloc(4));
    let map = [
        queue,
        image,
        1,
        opencl_sys::CL_MAP_READ,
        origin,
        region,
        row_pitch,
        slice_pitch,
        0,
        0,
        0,
        err,
    ];
    let p = call("clEnqueueMapImage", &map);
    assert_eq!(low.get(err, 0), 0);
    let pitch = low.get(row_pitch, 0) as u64;
    assert!(p != 0 && pitch >= 16 && p + 2 * pitch + 16 <= 1 << 31);
    for y in 0..3u64 {
        for x in 0..4u64 {
            // SAFETY: texel (x, y) of the mapping, `pitch` bytes a row.
            let t = unsafe { read32(p + y * pitch, x as usize) };
            assert_eq!(t, texels[(y * 4 + x) as usize], "texel ({x}, {y})");
        }
    }
    assert_eq!(
        call("clEnqueueUnmapMemObject", &[queue, image, p, 0, 0, 0]),
        CL_SUCCESS
    );
    assert_eq!(call("clFinish", &[queue]), CL_SUCCESS);

    for (f, h) in [
        ("clReleaseEvent", ev),
        ("clReleaseEvent", mapped_event as u64),
        ("clReleaseMemObject", image),
        ("clReleaseKernel", kernel),
        ("clReleaseProgram", program),
        ("clReleaseMemObject", buffer),
        ("clReleaseCommandQueue", queue),
        ("clReleaseContext", context as u64),
    ] {
        assert_eq!(call(f, &[h]), CL_SUCCESS, "{f}");
    }
}

/// `clGetDeviceInfo` of the host, 64-bit, for comparison.
fn host_device_info(device: u32, name: u32, out: &mut [usize]) {
    let host = crate::host::host().expect("host");
    let f = host.function(index::clGetDeviceInfo);
    // SAFETY: the host's clGetDeviceInfo.
    let get: crate::gen::sig::clGetDeviceInfo = unsafe { std::mem::transmute(f) };
    let object = handles::widen(device) as usize as *mut c_void;
    // SAFETY: a live device; our buffer of out.len() size_t.
    let r = unsafe {
        get(
            object,
            name,
            std::mem::size_of_val(out),
            out.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        )
    };
    assert_eq!(r, 0);
}

#[test]
fn callbacks_reach_32_bit_code_with_tokens_and_readable_text() {
    let host_event = 0x7f12_3456_7000u64;
    let mut p = CallbackWow64 {
        cb: Callback {
            done: 0,
            id: 1,
            kind: CB_EVENT,
            pad: 0,
            function: 0x40_1000,
            args: [host_event, 0, 0x1234, 0],
        },
        text: [0; 1024],
    };
    // SAFETY: a filled block in this test's memory.
    unsafe { callback_out(&mut p) };
    assert_eq!(p.cb.args[0], handles::narrow(host_event) as u64);
    assert_eq!(p.cb.args[2], 0x1234, "user data as it is");

    let text = c"out of resources";
    p.cb.kind = CB_CONTEXT_NOTIFY;
    p.cb.args = [text.as_ptr() as u64, 0x7f00_0000_0000, 16, 0x99];
    // SAFETY: as above; the text outlives the call.
    unsafe { callback_out(&mut p) };
    assert_eq!(
        p.cb.args[0],
        p.text.as_ptr() as u64,
        "the text is in the block"
    );
    assert_eq!(&p.text[..17], b"out of resources\0");
    assert_eq!((p.cb.args[1], p.cb.args[2], p.cb.args[3]), (0, 0, 0x99));
}

#[test]
fn every_entry_point_has_a_shape() {
    assert_eq!(gen::SHAPES.len(), NAMES.len());
    let unsupported = gen::SHAPES
        .iter()
        .filter(|s| matches!(s, Shape::Unsupported(..)))
        .count();
    assert_eq!(unsupported, 11, "SVM, native kernels");
}

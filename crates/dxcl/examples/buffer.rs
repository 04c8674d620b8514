//! A Direct3D 11 buffer processed in place by an OpenCL kernel through `cl_khr_d3d11_sharing`,
//! with `opencl3` for the OpenCL side and the result read back through Direct3D.
//!
//! ```sh
//! cargo build -p dxcl-layer
//! OPENCL_LAYERS=$PWD/target/debug/libdxcl_layer.so DXCL_ADAPTER=software \
//!     cargo run -p dxcl --example buffer
//! ```

mod d3d;

use dxcl::{Access, Context, D3D11};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::program::Program;

const SOURCE: &str = "
kernel void scale(global uint *v, uint factor) {
    size_t i = get_global_id(0);
    v[i] = v[i] * factor + 1;
}";

const COUNT: usize = 1 << 16;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The application's Direct3D side: a device and a buffer of COUNT integers.
    let device = dxcl::runtime::d3d11_device()?;
    let values: Vec<u32> = (0..COUNT as u32).collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_ne_bytes()).collect();
    let buffer = d3d::buffer(&device, &bytes)?;

    // OpenCL, shared with the device: opencl3 for the program, the queue and the kernel.
    let sharing = Context::<D3D11>::new(&device)?;
    let queue = sharing.create_queue()?;
    let program = Program::create_and_build_from_source(sharing.context(), SOURCE, "")?;
    let kernel = Kernel::create(&program, "scale")?;

    let shared = sharing.buffer(&buffer, Access::ReadWrite)?;
    let q = sharing.queue(&queue)?;
    let acquired = q.acquire(&[&shared])?;
    let view = acquired.buffer::<u32>(&shared);
    let factor: u32 = 3;
    // SAFETY: the kernel takes a `global uint *` of COUNT values and a `uint`.
    unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(&view)
            .set_arg(&factor)
            .set_global_work_size(COUNT)
            .enqueue_nd_range(&queue)?;
    }
    let released = acquired.release()?;
    // The release's event: CL_COMMAND_RELEASE_D3D11_OBJECTS_KHR (0x4021).
    println!(
        "release enqueued: event of command type {:#x}",
        released.command_type()?.0
    );

    // Direct3D reads the buffer straight after the release: the runtime waits for OpenCL.
    let out = d3d::read_buffer(&device, &buffer)?;
    let wrong = out
        .chunks_exact(4)
        .zip(&values)
        .filter(|(b, v)| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) != *v * factor + 1)
        .count();
    println!("{COUNT} values, {wrong} wrong");
    if wrong != 0 {
        return Err("the kernel's result differs from the CPU's".into());
    }
    Ok(())
}

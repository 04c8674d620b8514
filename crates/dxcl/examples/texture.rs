//! One subresource (mip 1 of array slice 1) of a Direct3D 11 texture array read by an OpenCL
//! kernel, which writes the same subresource of a second texture; both are acquired together.
//!
//! ```sh
//! cargo build -p dxcl-layer
//! OPENCL_LAYERS=$PWD/target/debug/libdxcl_layer.so DXCL_ADAPTER=software \
//!     cargo run -p dxcl --example texture
//! ```

mod d3d;

use dxcl::abi::DXGI_FORMAT_R8G8B8A8_UINT;
use dxcl::{Access, Context, Subresource, D3D11};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::program::Program;

const SOURCE: &str = "
kernel void invert(read_only image2d_t src, write_only image2d_t dst) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    write_imageui(dst, p, (uint4)(255) - read_imageui(src, p));
}";

/// RGBA8 texels that differ per subresource and position.
fn texel(s: Subresource, x: u32, y: u32) -> Vec<u8> {
    vec![x as u8, y as u8, (s.mip * 16 + s.slice) as u8, 200]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let device = dxcl::runtime::d3d11_device()?;
    let format = (DXGI_FORMAT_R8G8B8A8_UINT, 4);
    let (size, mips, slices) = ([64, 32], 3, 2);
    let src = d3d::texture2d(&device, size, mips, slices, format, texel)?;
    let dst = d3d::texture2d(&device, size, mips, slices, format, |_, _, _| vec![0; 4])?;

    let sharing = Context::<D3D11>::new(&device)?;
    let queue = sharing.create_queue()?;
    let program = Program::create_and_build_from_source(sharing.context(), SOURCE, "")?;
    let kernel = Kernel::create(&program, "invert")?;

    // Subresource index 1 + 1 * 3 = 4: D3D11CalcSubresource(1, 1, 3).
    let sub = Subresource::new(1, 1);
    let src_image = sharing.texture2d(&src, sub, Access::ReadOnly)?;
    let dst_image = sharing.texture2d(&dst, sub, Access::WriteOnly)?;
    let [w, h, _] = src_image.extent();

    let q = sharing.queue(&queue)?;
    let acquired = q.acquire(&[&src_image, &dst_image])?;
    let (src_view, dst_view) = (acquired.image(&src_image), acquired.image(&dst_image));
    // SAFETY: the kernel takes a read-only and a write-only 2D image, both `w` × `h`.
    unsafe {
        ExecuteKernel::new(&kernel)
            .set_arg(&src_view)
            .set_arg(&dst_view)
            .set_global_work_sizes(&[w, h])
            .enqueue_nd_range(&queue)?;
    }
    // The guard's drop would release too; releasing explicitly gives the event.
    acquired.release()?;

    let out = d3d::read_texture2d(&device, &dst, sub, 4)?;
    let mut wrong = 0;
    for y in 0..h {
        for x in 0..w {
            let expected: Vec<u8> = texel(sub, x as u32, y as u32)
                .iter()
                .map(|c| 255 - c)
                .collect();
            let i = (y * w + x) * 4;
            wrong += usize::from(out[i..i + 4] != expected[..]);
        }
    }
    // The other subresources of `dst` are untouched.
    let untouched = d3d::read_texture2d(&device, &dst, Subresource::new(0, 1), 4)?;
    println!(
        "subresource {} ({w}x{h}): {wrong} of {} texels wrong; mip 0 of slice 1 untouched: {}",
        sub.calc(mips),
        w * h,
        untouched.iter().all(|&b| b == 0)
    );
    if wrong != 0 || untouched.iter().any(|&b| b != 0) {
        return Err("the kernel's result differs from the CPU's".into());
    }
    Ok(())
}

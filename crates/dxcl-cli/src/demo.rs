//! `dxcl demo`: the main job on the embedded default. Direct3D 11 fills a texture, an OpenCL kernel
//! processes it where it lives through `cl_khr_d3d11_sharing`, Direct3D reads the result back right
//! after the release (no `clFinish`: the release's synchronisation guarantee is what makes this
//! correct), the result is checked against the CPU and written to a PNG file.
//!
//! With read-write images the kernel inverts the texture in place. Without them (NVIDIA) it reads
//! the texture and writes a second shared texture: still no copy, where a scratch CL image and
//! `clEnqueueCopyImage` would be one.

use crate::cl::{self, check as cl_check, ClHandle};
use crate::d3d::{self, check as hr_check, Com};
use crate::sharing::{self, *};
use dxcl_abi::interop::*;
use dxcl_abi::*;
use opencl_sys::*;
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::ptr;
use std::time::{Duration, Instant};

/// Runs the main job: Direct3D 11 fills a texture, an OpenCL kernel inverts it where it lives, and
/// the result, checked against the CPU, is written to a PNG file.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Width and height of the texture in texels.
    #[arg(long, value_name = "N", default_value_t = 512,
          value_parser = clap::value_parser!(u32).range(1..=8192))]
    pub size: u32,
    /// The PNG file to write.
    #[arg(long, value_name = "FILE.png", default_value = "dxcl-demo.png")]
    pub out: PathBuf,
    /// How the kernel meets the texture.
    #[arg(long, value_enum, default_value_t = KernelChoice::Auto)]
    pub kernel: KernelChoice,
    /// Whose Direct3D 11 runs the demo (dxvk: DXVK-native, found through DXCL_DXVK_LIB).
    #[arg(long, value_enum, default_value_t = D3dChoice::Dxcl)]
    pub d3d: D3dChoice,
}

/// Whose Direct3D 11 the demo runs on (`--d3d`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum D3dChoice {
    /// dxcl's own runtime.
    Dxcl,
    /// DXVK-native (`DXCL_DXVK_LIB`), its textures made by `dxclCreateSharedTexture2D` so that the
    /// layer shares them without copies (docs/dxvk.md).
    Dxvk,
}

/// How the kernel meets the texture (`--kernel`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KernelChoice {
    /// In place where the device has read-write images, else into a second texture.
    Auto,
    /// One texture, a read-write image (an error where the device has none).
    InPlace,
    /// The texture in, a second shared texture out.
    TwoTextures,
}

/// Inverts red, green and blue; alpha stays. Exact in UNORM8: (255 - x) / 255 converts back to 255 - x.
const KERNEL_READ_WRITE: &str = r#"
__kernel void invert(__read_write image2d_t img) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 v = read_imagef(img, p);
    write_imagef(img, p, (float4)(1.0f - v.x, 1.0f - v.y, 1.0f - v.z, v.w));
}
"#;

/// For devices without read-write images: from the texture into a second shared texture.
const KERNEL_TWO_IMAGES: &str = r#"
__kernel void invert(__read_only image2d_t src, __write_only image2d_t dst) {
    int2 p = (int2)(get_global_id(0), get_global_id(1));
    float4 v = read_imagef(src, p);
    write_imagef(dst, p, (float4)(1.0f - v.x, 1.0f - v.y, 1.0f - v.z, v.w));
}
"#;

/// The picture Direct3D starts from: colour bands, a gradient and a ring, so mistakes show.
fn source_pixel(x: u32, y: u32, size: u32) -> [u8; 4] {
    let cx = x as f32 / size as f32 - 0.5;
    let cy = y as f32 / size as f32 - 0.5;
    let ring = (((cx * cx + cy * cy).sqrt() * 24.0).sin() * 0.5 + 0.5) * 255.0;
    [
        (x * 255 / size.max(1)) as u8,
        (y * 255 / size.max(1)) as u8,
        ring as u8,
        255,
    ]
}

struct Timings {
    acquire: Duration,
    kernel: Duration,
    release: Duration,
    readback: Duration,
}

fn find_platform() -> Result<cl_platform_id, Box<dyn std::error::Error>> {
    for p in cl::platforms()? {
        let exts = cl::platform_string(p, CL_PLATFORM_EXTENSIONS)?;
        if exts.split_whitespace().any(|e| e == "cl_khr_d3d11_sharing") {
            return Ok(p);
        }
    }
    Err("no OpenCL platform offers cl_khr_d3d11_sharing: is OPENCL_LAYERS pointing at libdxcl_layer.so?".into())
}

/// A `size`² RGBA8 texture the GPU can read and write (`D3D11_USAGE_DEFAULT`), created empty:
/// through `shared` (DXVK's `dxclCreateSharedTexture2D`) when given, else `CreateTexture2D`.
fn create_texture(
    device: &Com<ID3D11Device>,
    size: u32,
    shared: Option<crate::dxvk::CreateSharedTexture2D>,
) -> Result<Com<ID3D11Texture2D>, Box<dyn std::error::Error>> {
    let desc = D3D11_TEXTURE2D_DESC {
        Width: size,
        Height: size,
        MipLevels: 1,
        ArraySize: 1,
        Format: DXGI_FORMAT_R8G8B8A8_UNORM,
        SampleDesc: DXGI_SAMPLE_DESC {
            Count: 1,
            Quality: 0,
        },
        Usage: D3D11_USAGE_DEFAULT,
        BindFlags: (D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_RENDER_TARGET) as u32,
        CPUAccessFlags: 0,
        MiscFlags: 0,
    };
    let mut texture: *mut ID3D11Texture2D = ptr::null_mut();
    let dev = device.as_raw();
    if let Some(create) = shared {
        // Bound for unordered access rather than as a render target: the helper's linear image
        // need not support colour attachment.
        let desc = D3D11_TEXTURE2D_DESC {
            BindFlags: (D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_UNORDERED_ACCESS) as u32,
            ..desc
        };
        // SAFETY: `dev` is DXVK's live device; `desc` and the out pointer are valid.
        hr_check("dxclCreateSharedTexture2D", unsafe {
            create(dev, &desc, &mut texture)
        })?;
    } else {
        // SAFETY: `dev` is live; `desc` and the out pointer are valid.
        hr_check("ID3D11Device::CreateTexture2D", unsafe {
            ((*(*dev).lpVtbl).CreateTexture2D)(dev, &desc, ptr::null(), &mut texture)
        })?;
    }
    // SAFETY: success gave us one reference.
    Ok(unsafe { Com::from_raw(texture) }.ok_or("CreateTexture2D returned no texture")?)
}

/// Whether the device runs kernels with `__read_write` images: OpenCL 2.x reports a count,
/// OpenCL 3.0 the optional feature `__opencl_c_read_write_images`.
fn has_read_write_images(device: cl_device_id) -> bool {
    let args: cl_uint = cl::device_value(device, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS).unwrap_or(0);
    let feature = cl::device_bytes(device, CL_DEVICE_OPENCL_C_FEATURES)
        .map(|b| {
            b.windows(b"__opencl_c_read_write_images".len())
                .any(|w| w == b"__opencl_c_read_write_images")
        })
        .unwrap_or(false);
    args > 0 || feature
}

/// A program built for `device` from `source`, and its kernel `name`.
pub(crate) fn build_kernel(
    context: cl_context,
    device: cl_device_id,
    source: &str,
    options: &str,
    name: &str,
) -> Result<(ClHandle<cl_program>, ClHandle<cl_kernel>), Box<dyn std::error::Error>> {
    let src = CString::new(source)?;
    let src_ptr = src.as_ptr();
    let mut err = 0;
    // SAFETY: one NUL-terminated source string.
    let program =
        unsafe { cl::clCreateProgramWithSource(context, 1, &src_ptr, ptr::null(), &mut err) };
    cl_check("clCreateProgramWithSource", err)?;
    let program = ClHandle(program, cl::clReleaseProgram);
    let options = CString::new(options)?;
    // SAFETY: valid program, one device, NUL-terminated options.
    let status = unsafe {
        cl::clBuildProgram(
            program.0,
            1,
            &device,
            options.as_ptr(),
            ptr::null(),
            ptr::null_mut(),
        )
    };
    if status != CL_SUCCESS {
        return Err(format!(
            "clBuildProgram failed ({status}):\n{}",
            cl::build_log(program.0, device)
        )
        .into());
    }
    let kname = CString::new(name)?;
    // SAFETY: valid program and kernel name.
    let kernel = unsafe { cl::clCreateKernel(program.0, kname.as_ptr(), &mut err) };
    cl_check("clCreateKernel", err)?;
    Ok((program, ClHandle(kernel, cl::clReleaseKernel)))
}

pub fn run(opts: &Options) -> Result<(), Box<dyn std::error::Error>> {
    let size = opts.size;
    // DXVK's library and SDL outlive its device and textures (declared first, dropped last).
    let mut dxvk = None;
    let mut shared = None;
    let (device, context) = match opts.d3d {
        D3dChoice::Dxcl => d3d::create_device_on(ptr::null_mut())?,
        D3dChoice::Dxvk => {
            let x = crate::dxvk::open()?.ok_or(
                "--d3d dxvk: set DXCL_DXVK_LIB to DXVK-native's library folder (docs/dxvk.md)",
            )?;
            let made = x.create_d3d11_device()?;
            shared = Some(crate::dxvk::shared_texture_fn()?);
            dxvk = Some(x);
            made
        }
    };

    // Direct3D produces the texture: created empty, then written with UpdateSubresource.
    let texture = create_texture(&device, size, shared)?;
    let source: Vec<u8> = (0..size)
        .flat_map(|y| (0..size).flat_map(move |x| source_pixel(x, y, size)))
        .collect();
    let ctx = context.as_raw();
    // SAFETY: `source` holds `size` rows of `size * 4` bytes, the pitch given.
    unsafe {
        ((*(*ctx).lpVtbl).UpdateSubresource)(
            ctx,
            texture.as_raw().cast(),
            0,
            ptr::null(),
            source.as_ptr().cast(),
            size * 4,
            0,
        )
    };

    // OpenCL: the platform with the extension, a device the layer matches to this D3D device.
    let platform = find_platform()?;
    let api = D3d11Sharing::lookup(platform)
        .ok_or("the platform lists cl_khr_d3d11_sharing but lacks its entry points")?;
    let dev = device.as_raw();
    let cl_device = sharing::preferred_device(api.get_ids, platform, dev)?;
    let cl_context = sharing::d3d11_context(platform, dev, cl_device)?;
    let mut err = 0;
    // SAFETY: valid context and device, no properties.
    let queue = unsafe {
        cl::clCreateCommandQueueWithProperties(cl_context.0, cl_device, ptr::null(), &mut err)
    };
    cl_check("clCreateCommandQueueWithProperties", err)?;
    let queue = ClHandle(queue, cl::clReleaseCommandQueue);

    let read_write = has_read_write_images(cl_device);
    let in_place = match opts.kernel {
        KernelChoice::Auto => read_write,
        KernelChoice::InPlace if !read_write => {
            return Err("--kernel in-place: the OpenCL device has no read-write images".into())
        }
        KernelChoice::InPlace => true,
        KernelChoice::TwoTextures => false,
    };
    let (_program, kernel) = if in_place {
        build_kernel(
            cl_context.0,
            cl_device,
            KERNEL_READ_WRITE,
            "-cl-std=CL3.0",
            "invert",
        )?
    } else {
        build_kernel(cl_context.0, cl_device, KERNEL_TWO_IMAGES, "", "invert")?
    };

    // The shared images: subresource 0 of each texture, made by the layer without a copy where
    // the pairing allows (the evidence below says whether it did).
    let share = |tex: &Com<ID3D11Texture2D>,
                 flags|
     -> Result<ClHandle<cl_mem>, Box<dyn std::error::Error>> {
        let mut err = 0;
        // SAFETY: valid context and texture; `err` receives the status.
        let image = unsafe { (api.create_texture)(cl_context.0, flags, tex.as_raw(), 0, &mut err) };
        cl_check("clCreateFromD3D11Texture2DKHR", err)?;
        Ok(ClHandle(image, cl::clReleaseMemObject))
    };
    let target = if in_place {
        None
    } else {
        Some(create_texture(&device, size, shared)?)
    };
    let (images, result_texture) = match &target {
        None => (vec![share(&texture, CL_MEM_READ_WRITE)?], &texture),
        Some(t) => (
            vec![
                share(&texture, CL_MEM_READ_ONLY)?,
                share(t, CL_MEM_WRITE_ONLY)?,
            ],
            t,
        ),
    };
    let handles: Vec<cl_mem> = images.iter().map(|i| i.0).collect();
    let evidence = [Some(&texture), target.as_ref()]
        .into_iter()
        .flatten()
        .zip(&handles)
        .map(|(t, &m)| zero_copy_evidence(t, m))
        .collect::<Vec<_>>();

    let t0 = Instant::now();
    // SAFETY: valid cl_mem handles, no events.
    cl_check("clEnqueueAcquireD3D11ObjectsKHR", unsafe {
        (api.acquire)(
            queue.0,
            handles.len() as cl_uint,
            handles.as_ptr(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    })?;
    let t1 = Instant::now();
    let global = [size as usize, size as usize];
    for (i, m) in handles.iter().enumerate() {
        // SAFETY: each argument is a cl_mem handle of the kernel's image parameter `i`.
        cl_check("clSetKernelArg", unsafe {
            cl::clSetKernelArg(
                kernel.0,
                i as cl_uint,
                std::mem::size_of::<cl_mem>(),
                (m as *const cl_mem).cast(),
            )
        })?;
    }
    // SAFETY: a built kernel with every argument set, a 2-D range over the image.
    cl_check("clEnqueueNDRangeKernel", unsafe {
        cl::clEnqueueNDRangeKernel(
            queue.0,
            kernel.0,
            2,
            ptr::null(),
            global.as_ptr(),
            ptr::null(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    })?;
    let t2 = Instant::now();
    // SAFETY: the acquired cl_mem handles, no events.
    cl_check("clEnqueueReleaseD3D11ObjectsKHR", unsafe {
        (api.release)(
            queue.0,
            handles.len() as cl_uint,
            handles.as_ptr(),
            0,
            ptr::null(),
            ptr::null_mut(),
        )
    })?;
    let t3 = Instant::now();

    // Direct3D reads the result straight away: staging copy, then Map. No clFinish.
    let result = read_back(&device, &context, result_texture, size)?;
    let t4 = Instant::now();
    let timings = Timings {
        acquire: t1 - t0,
        kernel: t2 - t1,
        release: t3 - t2,
        readback: t4 - t3,
    };

    let mismatches = source
        .chunks_exact(4)
        .zip(result.chunks_exact(4))
        .filter(|(s, r)| {
            r[0] != 255 - s[0] || r[1] != 255 - s[1] || r[2] != 255 - s[2] || r[3] != s[3]
        })
        .count();
    write_png(&opts.out, size, &result)?;

    let device_name = cl::device_string(cl_device, CL_DEVICE_NAME)?;
    let platform_name = cl::platform_string(platform, CL_PLATFORM_NAME)?;
    let runtime = match &dxvk {
        Some(x) => format!(
            "DXVK-native ({}), textures made by dxclCreateSharedTexture2D",
            x.path.display()
        ),
        None => adapter_kind(&device).to_string(),
    };
    println!("dxcl demo: {size}x{size} DXGI_FORMAT_R8G8B8A8_UNORM texture, Direct3D 11 {runtime}");
    println!("  OpenCL device: {device_name} ({platform_name})");
    println!(
        "  kernel: invert RGB {}",
        if in_place {
            "in place (one read-write image)"
        } else {
            "from the texture into a second shared texture (read-only image in, write-only out)"
        }
    );
    let names = ["texture", "result texture"];
    for (name, (_, line)) in names.iter().zip(&evidence) {
        println!("  sharing, {name}: {line}");
    }
    // The OpenCL commands are the acquire, the kernel and the release; a copy could only hide in
    // how the layer shares, which the evidence above states for every image.
    if evidence.iter().all(|(zero_copy, _)| *zero_copy) {
        println!(
            "  copies of the texture's data: none (every image is zero-copy; the commands are acquire, \
             one kernel, release)"
        );
    } else {
        println!(
            "  copies of the texture's data: the layer copies on acquire and release (see sharing)"
        );
    }
    println!(
        "  timings: acquire {:.3} ms, kernel enqueue {:.3} ms, release {:.3} ms, D3D read-back (waits for CL) {:.3} ms",
        ms(timings.acquire),
        ms(timings.kernel),
        ms(timings.release),
        ms(timings.readback)
    );
    println!(
        "  check: {} of {} pixels wrong (read back through a D3D staging texture: the check's own copy)",
        mismatches,
        size as usize * size as usize
    );
    println!("  image: {}", opts.out.display());
    if mismatches != 0 {
        return Err(format!("{mismatches} pixels differ from the CPU reference").into());
    }
    println!("dxcl demo: OK");
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Whether the CL image uses the texture's own memory, and how that shows. Host pointer: the layer
/// creates it with CL_MEM_USE_HOST_PTR at the subresource's address, which CL_MEM_HOST_PTR reports
/// back. External memory: the texture's memory is an opaque-fd Vulkan image and the CL image was
/// imported from it.
fn zero_copy_evidence(texture: &Com<ID3D11Texture2D>, image: cl_mem) -> (bool, String) {
    let mut host: *mut c_void = ptr::null_mut();
    // SAFETY: a pointer-sized query into a pointer.
    let status = unsafe {
        cl::clGetMemObjectInfo(
            image,
            CL_MEM_HOST_PTR,
            std::mem::size_of::<*mut c_void>(),
            (&mut host as *mut *mut c_void).cast(),
            ptr::null_mut(),
        )
    };
    let Some(interop) = d3d::interop_of(texture) else {
        return (
            false,
            "staging copy (the texture has no dxcl interop interface)".into(),
        );
    };
    let memory = d3d::interop_memory(&interop);
    let ok = memory.is_some();
    let (mem, layout) = memory.unwrap_or_default();
    // NVIDIA answers CL_MEM_PROPERTIES for an imported image in some runs and not in others:
    // the layer's own tag on the texture then says what it did.
    let tagged = texture
        .cast::<ID3D11Resource>()
        .and_then(|r| d3d::layer_tag(&r));
    let imported = cl::imports_opaque_fd(image) || tagged.as_deref() == Some("external-memory");
    if ok && mem.Kind == DXCL_MEMORY_KIND_OPAQUE_FD_IMAGE && imported {
        return (
            true,
            format!(
            "zero-copy external memory: the CL image was imported from the texture's own Vulkan \
             memory ({} bytes, optimal tiling) through an opaque fd; the layer made no copy",
            mem.Size
        ),
        );
    }
    if status == CL_SUCCESS && ok && !host.is_null() && mem.Kind == DXCL_MEMORY_KIND_HOST {
        let texel0 = (mem.pHost as usize).wrapping_add(layout.Offset as usize);
        if host as usize == texel0 {
            return (true, format!(
                "zero-copy host pointer: the CL image's CL_MEM_HOST_PTR is the texture's memory ({host:p}, row pitch {} bytes)",
                layout.RowPitch
            ));
        }
    }
    (
        false,
        "staging copy (the CL image has its own memory)".into(),
    )
}

fn read_back(
    device: &Com<ID3D11Device>,
    context: &Com<ID3D11DeviceContext>,
    texture: &Com<ID3D11Texture2D>,
    size: u32,
) -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    let desc = D3D11_TEXTURE2D_DESC {
        Width: size,
        Height: size,
        MipLevels: 1,
        ArraySize: 1,
        Format: DXGI_FORMAT_R8G8B8A8_UNORM,
        SampleDesc: DXGI_SAMPLE_DESC {
            Count: 1,
            Quality: 0,
        },
        Usage: D3D11_USAGE_STAGING,
        BindFlags: 0,
        CPUAccessFlags: D3D11_CPU_ACCESS_READ as u32,
        MiscFlags: 0,
    };
    let dev = device.as_raw();
    let mut staging: *mut ID3D11Texture2D = ptr::null_mut();
    // SAFETY: `dev` is live; `desc` and the out pointer are valid.
    hr_check("ID3D11Device::CreateTexture2D", unsafe {
        ((*(*dev).lpVtbl).CreateTexture2D)(dev, &desc, ptr::null(), &mut staging)
    })?;
    // SAFETY: success gave us one reference.
    let staging = unsafe { Com::from_raw(staging) }.ok_or("no staging texture")?;
    let ctx = context.as_raw();
    let mut mapped = D3D11_MAPPED_SUBRESOURCE::default();
    // SAFETY: both resources are live and ours; `mapped` is a valid out struct.
    unsafe {
        ((*(*ctx).lpVtbl).CopyResource)(ctx, staging.as_raw().cast(), texture.as_raw().cast());
        hr_check(
            "ID3D11DeviceContext::Map",
            ((*(*ctx).lpVtbl).Map)(
                ctx,
                staging.as_raw().cast(),
                0,
                D3D11_MAP_READ,
                0,
                &mut mapped,
            ),
        )?;
    }
    let row = size as usize * 4;
    let mut out = vec![0u8; row * size as usize];
    for y in 0..size as usize {
        // SAFETY: a mapped subresource holds `size` rows of at least `row` bytes, RowPitch apart.
        let src = unsafe {
            std::slice::from_raw_parts(
                (mapped.pData as *const u8).add(y * mapped.RowPitch as usize),
                row,
            )
        };
        out[y * row..(y + 1) * row].copy_from_slice(src);
    }
    // SAFETY: the subresource was mapped above.
    unsafe { ((*(*ctx).lpVtbl).Unmap)(ctx, staging.as_raw().cast(), 0) };
    Ok(out)
}

fn write_png(
    path: &std::path::Path,
    size: u32,
    rgba: &[u8],
) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut encoder = png::Encoder::new(file, size, size);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.write_header()?.write_image_data(rgba)?;
    Ok(())
}

/// Which of dxcl's adapters the device landed on.
fn adapter_kind(device: &Com<ID3D11Device>) -> &'static str {
    let Some(interop) = device.cast::<IDxclInteropDevice>() else {
        return "device";
    };
    let mut info = DXCL_ADAPTER_INFO::default();
    let p = interop.as_raw();
    // SAFETY: `p` is live; `info` is a valid out struct.
    let hr = unsafe { ((*(*p).lpVtbl).GetAdapterInfo)(p, &mut info) };
    match (SUCCEEDED(hr), info.Backend) {
        (true, DXCL_BACKEND_KIND_VULKAN) => "Vulkan adapter",
        (true, DXCL_BACKEND_KIND_HOST) => "software adapter",
        _ => "device",
    }
}

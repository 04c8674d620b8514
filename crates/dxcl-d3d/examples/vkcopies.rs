//! The Vulkan backend's per-call cost for the frame loop's Direct3D side: N times
//! `UpdateSubresource` of a whole RGBA8 texture from host memory, then `CopyResource` of it into a
//! second texture, then a wait for the device (as `dxcl frames` waits each frame).
//!
//! ```text
//! cargo run --release -p dxcl-d3d --example vkcopies -- [WxH] [N]   # default 3840x2160 20
//! ```
//!
//! Prints CPU microseconds per call (the calls themselves, without the wait), the frame time with
//! the wait, heap allocations per frame (this process's Rust allocator), and the backend's
//! counters: device-memory allocations, queue submissions and CPU waits per frame.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use dxcl_d3d::backend::vulkan::{enumerate, Options};
use dxcl_d3d::backend::Backend;
use dxcl_d3d::core::flags::USAGE_DEFAULT;
use dxcl_d3d::core::{Dimension, LayoutRules, ResourceDesc, ResourceLayout};

/// Counts heap allocations, to show which calls allocate.
struct Counting;

static HEAP_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; the counter has no effect on
// the memory handed out.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HEAP_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` above, i.e. from the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn texture(w: u32, h: u32) -> (ResourceDesc, ResourceLayout) {
    let d = ResourceDesc {
        dimension: Dimension::Texture2D,
        width: w,
        height: h,
        depth: 1,
        array_size: 1,
        mip_levels: 1,
        format: 28, // DXGI_FORMAT_R8G8B8A8_UNORM
        sample_count: 1,
        sample_quality: 0,
        usage: USAGE_DEFAULT,
        bind: 0,
        cpu_access: 0,
        misc: 0,
        structure_stride: 0,
    }
    .validate(false)
    .expect("valid texture description");
    let l = ResourceLayout::new(&d, &LayoutRules::VULKAN).expect("layout");
    (d, l)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (w, h) = args
        .first()
        .and_then(|s| s.split_once('x'))
        .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
        .unwrap_or((3840u32, 2160u32));
    let n: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(20);
    let Some(b) = enumerate(Options::default()).into_iter().next() else {
        eprintln!("vkcopies: no Vulkan device with VK_KHR_external_memory_fd");
        std::process::exit(1);
    };
    let (d, l) = texture(w, h);
    let src = b.allocate(&d, &l).expect("source texture");
    let dst = b.allocate(&d, &l).expect("destination texture");
    let region = l.full_region(0).expect("subresource 0");
    let row = w as usize * 4;
    let frames: Vec<Vec<u8>> = (0..2u8)
        .map(|k| (0..row * h as usize).map(|i| (i as u8) ^ k).collect())
        .collect();
    b.wait(b.signal());

    let mut update = Duration::ZERO;
    let mut copy = Duration::ZERO;
    let mut total = Duration::ZERO;
    let heap0 = HEAP_ALLOCATIONS.load(Ordering::Relaxed);
    let stats0 = stats(&b);
    for i in 0..n {
        let frame = &frames[i as usize % 2];
        let t0 = Instant::now();
        // SAFETY: both allocations are `b`'s and live; the region is subresource 0's whole extent;
        // `frame` holds `h` rows of `row` bytes.
        unsafe { b.write_region(&src, 0, &region, frame.as_ptr(), row, row * h as usize) };
        let t1 = Instant::now();
        // SAFETY: as above; equal descriptions give equal regions.
        unsafe { b.copy_region(&dst, 0, &region, &src, 0, &region) };
        let t2 = Instant::now();
        b.wait(b.signal());
        let t3 = Instant::now();
        update += t1 - t0;
        copy += t2 - t1;
        total += t3 - t0;
    }
    let heap = HEAP_ALLOCATIONS.load(Ordering::Relaxed) - heap0;
    let stats1 = stats(&b);
    let per = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
    println!(
        "vkcopies: {w}x{h} RGBA8 on {}, {n} frames of UpdateSubresource + CopyResource + wait",
        b.adapter().description
    );
    println!("  UpdateSubresource: {:.0} us/call", per(update));
    println!("  CopyResource:      {:.0} us/call", per(copy));
    println!("  frame with wait:   {:.0} us", per(total));
    println!(
        "  heap allocations:  {:.1} per frame",
        heap as f64 / n as f64
    );
    if let (Some(s0), Some(s1)) = (stats0, stats1) {
        for (name, a, z) in s1.iter().zip(s0.iter()).map(|((n, a), (_, z))| (n, a, z)) {
            println!("  {name:<18} {:.2} per frame", (a - z) as f64 / n as f64);
        }
    }
}

/// The backend's counters.
fn stats(b: &dxcl_d3d::backend::vulkan::VulkanBackend) -> Option<Vec<(&'static str, u64)>> {
    let c = b.counters();
    Some(vec![
        ("vkAllocateMemory:", c.memory_allocations),
        ("vkQueueSubmit:", c.submissions),
        ("CPU waits:", c.cpu_waits),
    ])
}

//! The Vulkan backend on this machine's Vulkan device (lavapipe in CI): textures as images and
//! as linear buffers, both Map paths.

use std::slice;

use super::*;
use crate::backend::BackendKind;
use crate::core::flags::*;
use crate::core::{Dimension, TexelBox};

const READ: MapAccess = MapAccess {
    read: true,
    write: false,
};
const READ_WRITE: MapAccess = MapAccess {
    read: true,
    write: true,
};
const DISCARD: MapAccess = MapAccess {
    read: false,
    write: true,
};

/// One test at a time opens devices: NVIDIA's driver (580) hangs when several threads create and
/// destroy VkDevices at once, which only tests do (the runtime opens each device once per process).
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    lock(&SERIAL)
}

/// The first Vulkan device. The tests need one: scripts/deps.sh installs lavapipe.
fn backend_with(options: Options) -> VulkanBackend {
    enumerate(options)
        .into_iter()
        .next()
        .expect("no Vulkan device with VK_KHR_external_memory_fd (install mesa-vulkan-drivers)")
}

fn backend(force_staging: bool) -> VulkanBackend {
    backend_with(Options {
        force_staging,
        linear_textures: false,
        shader_copies_on_cpu: false,
        copy_lane_on_cpu: false,
    })
}

/// The device with staging maps forced and linear textures, as it is (textures as images where
/// it can; a CPU device maps everything else directly, others their STAGING and DYNAMIC resources
/// where they can), and with a copy lane (`lane.rs`; on a CPU device, the queue itself).
fn backends() -> Vec<VulkanBackend> {
    vec![
        backend_with(Options {
            force_staging: true,
            linear_textures: true,
            ..Options::default()
        }),
        backend(false),
        backend_with(Options {
            copy_lane_on_cpu: true,
            ..Options::default()
        }),
    ]
}

/// An RGBA8 2D texture array with a full mip chain, laid out with the Vulkan rules.
fn texture(w: u32, h: u32, array: u32) -> (ResourceDesc, ResourceLayout) {
    texture_with(w, h, array, USAGE_DEFAULT, 0)
}

fn texture_with(
    w: u32,
    h: u32,
    array: u32,
    usage: u32,
    cpu: u32,
) -> (ResourceDesc, ResourceLayout) {
    texture_of(28, w, h, array, usage, cpu)
}

/// A 2D texture array of DXGI format `format` with a full mip chain (one level when STAGING).
fn texture_of(
    format: u32,
    w: u32,
    h: u32,
    array: u32,
    usage: u32,
    cpu: u32,
) -> (ResourceDesc, ResourceLayout) {
    let d = ResourceDesc {
        dimension: Dimension::Texture2D,
        width: w,
        height: h,
        depth: 1,
        array_size: array,
        mip_levels: if usage == USAGE_STAGING { 1 } else { 0 },
        format,
        sample_count: 1,
        sample_quality: 0,
        usage,
        bind: 0,
        cpu_access: cpu,
        misc: 0,
        structure_stride: 0,
    }
    .validate(false)
    .unwrap();
    let l = ResourceLayout::new(&d, &LayoutRules::VULKAN).unwrap();
    (d, l)
}

/// The rows of a subresource as the CPU sees them: through a READ map, or for images (never
/// mapped) through a copy into a STAGING texture of the subresource's size.
fn read_rows(b: &VulkanBackend, a: &Allocation, sub: u32) -> Vec<Vec<u8>> {
    let s = a.layout.subresources[sub as usize];
    let texel = a.layout.block.2;
    if a.kind == MemoryKind::OpaqueFdImage {
        // A staging texture of the same texel size (its bytes are what is compared).
        let format = match texel {
            8 => 12,
            16 => 1,
            _ => 28,
        };
        let (d, l) = texture_of(format, s.width, s.height, 1, USAGE_STAGING, CPU_ACCESS_READ);
        let mut st = b.allocate(&d, &l).unwrap();
        assert_eq!(st.kind, MemoryKind::OpaqueFd);
        let r = l.full_region(0).unwrap();
        // SAFETY: both are `b`'s; the regions are whole subresources of equal extent.
        unsafe { b.copy_region(&st, 0, &r, a, sub, &r) };
        let rows = read_rows(b, &st, 0);
        // SAFETY: `st` is `b`'s and unused from here.
        unsafe { b.free(&mut st) };
        return rows;
    }
    let row = s.width as usize * texel as usize;
    // SAFETY: `a` is `b`'s; the map spans the subresource (`height` rows of `row_pitch`).
    unsafe {
        let p = b.map(a, sub, READ).unwrap();
        let rows = (0..s.height as usize)
            .map(|y| slice::from_raw_parts(p.add(y * s.row_pitch as usize), row).to_vec())
            .collect();
        b.unmap(a, sub);
        rows
    }
}

#[test]
fn adapter_facts() {
    let _serial = serial();
    let b = backend(false);
    let a = b.adapter();
    assert_eq!(a.backend, BackendKind::Vulkan);
    assert!(!a.description.is_empty());
    assert_ne!(a.uuid, [0; 16]);
    assert_ne!(a.luid, (0, 0));
    assert_eq!(b.layout_rules(), LayoutRules::VULKAN);
    // Enumeration is stable: the same device gets the same LUID.
    assert_eq!(backend(true).adapter().luid, a.luid);
}

#[test]
fn layout_follows_vulkan_rules() {
    let (_, l) = texture(5, 3, 2);
    for s in &l.subresources {
        assert_eq!(s.offset % VULKAN_SUBRESOURCE_ALIGNMENT, 0);
        assert_eq!(s.row_pitch % VULKAN_ROW_ALIGNMENT, 0);
        assert_eq!(s.row_pitch % (VULKAN_ROW_ALIGNMENT_BLOCKS * 4), 0);
    }
    assert_eq!(l.size % VULKAN_SUBRESOURCE_ALIGNMENT, 0);
}

use crate::core::layout::{
    VULKAN_ROW_ALIGNMENT, VULKAN_ROW_ALIGNMENT_BLOCKS, VULKAN_SUBRESOURCE_ALIGNMENT,
};

#[test]
fn zeroed_written_copied_between_subresources() {
    let _serial = serial();
    for b in backends() {
        let (d, l) = texture(8, 4, 2);
        // Subresources: slice 0 mips 0..4, slice 1 mips 4..8.
        let mut a = b.allocate(&d, &l).unwrap();
        if b.linear_textures {
            assert_eq!(a.kind, MemoryKind::OpaqueFd);
            assert!(a.size >= l.size);
        }
        assert!(read_rows(&b, &a, 0).iter().flatten().all(|&x| x == 0));
        let data: Vec<u8> = (0..128u8).collect();
        let full = l.full_region(0).unwrap();
        // SAFETY: `a` is `b`'s; `data` has 4 rows of 32 bytes.
        unsafe { b.write_region(&a, 0, &full, data.as_ptr(), 32, 128) };
        let rows = read_rows(&b, &a, 0);
        for (y, r) in rows.iter().enumerate() {
            assert_eq!(r[..], data[y * 32..y * 32 + 32]);
        }
        // A 2x2 box from (1,1) of slice 0 to (2,1) of slice 1's mip 0, and to mip 1 of slice 0.
        let bx = TexelBox {
            left: 1,
            top: 1,
            front: 0,
            right: 3,
            bottom: 3,
            back: 1,
        };
        let src = l.box_region(0, &bx).unwrap();
        let to_slice = l.place_region(4, 2, 1, 0, &src).unwrap();
        let to_mip = l.place_region(1, 0, 0, 0, &src).unwrap();
        // SAFETY: regions come from the layout; distinct subresources do not overlap.
        unsafe {
            b.copy_region(&a, 4, &to_slice, &a, 0, &src);
            b.copy_region(&a, 1, &to_mip, &a, 0, &src);
        }
        let s1 = read_rows(&b, &a, 4);
        assert_eq!(s1[1][8..16], data[32 + 4..32 + 12]);
        assert_eq!(s1[2][8..16], data[64 + 4..64 + 12]);
        assert!(s1[0].iter().all(|&x| x == 0));
        assert!(s1[1][..8].iter().all(|&x| x == 0));
        let m1 = read_rows(&b, &a, 1);
        // Mip 1 is 4x2: the box fills its left half.
        assert_eq!(m1[0][..8], data[32 + 4..32 + 12]);
        assert_eq!(m1[1][..8], data[64 + 4..64 + 12]);
        assert!(m1[0][8..].iter().all(|&x| x == 0));
        // Another resource: a copy between allocations, then both freed.
        let mut c = b.allocate(&d, &l).unwrap();
        // SAFETY: as above.
        unsafe { b.copy_region(&c, 0, &full, &a, 0, &full) };
        assert_eq!(read_rows(&b, &c, 0), rows);
        // A STAGING texture (always linear) to and from the texture: a box both ways.
        let (sd, sl) = texture_with(8, 4, 1, USAGE_STAGING, CPU_ACCESS_READ | CPU_ACCESS_WRITE);
        let mut st = b.allocate(&sd, &sl).unwrap();
        let to_staging = sl.place_region(0, 4, 2, 0, &src).unwrap();
        // SAFETY: as above.
        unsafe { b.copy_region(&st, 0, &to_staging, &a, 0, &src) };
        let sr = read_rows(&b, &st, 0);
        assert_eq!(sr[2][16..24], data[32 + 4..32 + 12]);
        assert_eq!(sr[3][16..24], data[64 + 4..64 + 12]);
        assert!(sr[1].iter().all(|&x| x == 0));
        let back = l.place_region(0, 0, 0, 0, &to_staging).unwrap();
        // SAFETY: as above.
        unsafe { b.copy_region(&c, 0, &back, &st, 0, &to_staging) };
        let cr = read_rows(&b, &c, 0);
        assert_eq!(cr[0][..8], data[32 + 4..32 + 12]);
        assert_eq!(cr[1][..8], data[64 + 4..64 + 12]);
        assert_eq!(cr[2][..], data[64..96]);
        // SAFETY: `st` is `b`'s and unused from here.
        unsafe { b.free(&mut st) };
        // SAFETY: both are `b`'s and unused from here.
        unsafe {
            b.free(&mut a);
            b.free(&mut c);
        }
    }
}

#[test]
fn map_round_trips_for_every_access() {
    let _serial = serial();
    // Linear DEFAULT textures map through staging (except on CPU devices: Direct3D never maps
    // them, this is the path for memory the CPU cannot reach); STAGING ones map directly where
    // the driver exports host-visible memory.
    let kinds = [
        (USAGE_DEFAULT, 0),
        (USAGE_STAGING, CPU_ACCESS_READ | CPU_ACCESS_WRITE),
    ];
    for b in backends() {
        for (usage, cpu) in kinds {
            if usage == USAGE_DEFAULT && !b.linear_textures {
                continue;
            }
            round_trips(&b, usage, cpu);
        }
    }
}

fn round_trips(b: &VulkanBackend, usage: u32, cpu: u32) {
    let (d, l) = texture_with(16, 4, 1, usage, cpu);
    let mut a = b.allocate(&d, &l).unwrap();
    let s = l.subresources[0];
    let pitch = s.row_pitch as usize;
    // SAFETY: `a` is `b`'s; each map spans 4 rows of `pitch` bytes.
    unsafe {
        // WRITE keeps the bytes it does not touch: fill all, then change one row.
        let p = b.map(&a, 0, READ_WRITE).unwrap();
        std::ptr::write_bytes(p, 7, pitch * 4);
        b.unmap(&a, 0);
        let p = b.map(&a, 0, READ_WRITE).unwrap();
        assert_eq!(*p.add(pitch * 3), 7);
        std::ptr::write_bytes(p.add(pitch), 9, 64);
        b.unmap(&a, 0);
        let rows = read_rows(b, &a, 0);
        assert!(rows[0].iter().all(|&x| x == 7));
        assert!(rows[1].iter().all(|&x| x == 9));
        assert!(rows[3].iter().all(|&x| x == 7));
        // DISCARD writes everything it is given.
        let p = b.map(&a, 0, DISCARD).unwrap();
        std::ptr::write_bytes(p, 3, pitch * 4);
        b.unmap(&a, 0);
        assert!(read_rows(b, &a, 0).iter().flatten().all(|&x| x == 3));
        if !b.maps_directly(&a) {
            // A READ map through staging never writes back.
            let p = b.map(&a, 0, READ).unwrap();
            std::ptr::write_bytes(p, 5, 64);
            b.unmap(&a, 0);
            assert!(read_rows(b, &a, 0).iter().flatten().all(|&x| x == 3));
        }
        // A map after a copy sees the copy (the map waits for the queue).
        let mut c = b.allocate(&d, &l).unwrap();
        let full = l.full_region(0).unwrap();
        b.copy_region(&c, 0, &full, &a, 0, &full);
        assert!(read_rows(b, &c, 0).iter().flatten().all(|&x| x == 3));
        b.free(&mut c);
        b.free(&mut a);
    }
}

#[test]
fn fences_follow_the_queue() {
    let _serial = serial();
    let b = backend(true);
    let (d, l) = texture(64, 64, 1);
    let mut a = b.allocate(&d, &l).unwrap();
    let mut c = b.allocate(&d, &l).unwrap();
    let full = l.full_region(0).unwrap();
    // SAFETY: both are `b`'s; the regions are whole subresources.
    unsafe { b.copy_region(&c, 0, &full, &a, 0, &full) };
    let f = b.signal();
    // Recorded, not submitted: not complete until a flush or a wait.
    assert!(!b.is_complete(f));
    b.wait(f);
    assert!(b.is_complete(f));
    assert!(!b.is_busy(&a) && !b.is_busy(&c));
    // Nothing new issued: the fence is the last one, already complete.
    assert_eq!(b.signal(), f);
    // SAFETY: as above.
    unsafe { b.copy_region(&a, 0, &full, &c, 0, &full) };
    let g = b.signal();
    assert!(g > f);
    b.flush();
    while !b.is_complete(g) {
        std::thread::yield_now();
    }
    assert!(!b.is_busy(&a));
    // SAFETY: both are `b`'s and unused from here.
    unsafe {
        b.free(&mut a);
        b.free(&mut c);
    }
}

#[test]
fn exports_memory_as_fd() {
    let _serial = serial();
    let b = backend(false);
    let (d, l) = texture(4, 4, 1);
    let mut a = b.allocate(&d, &l).unwrap();
    // SAFETY: `a` is `b`'s.
    let fd = unsafe { b.export_fd(&a) }.unwrap();
    assert!(fd >= 0);
    // SAFETY: a new fd we own; fstat only reads it.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        assert_eq!(libc::fstat(fd, &mut st), 0);
        libc::close(fd);
        b.free(&mut a);
    }
}

#[test]
fn shared_semaphores() {
    let _serial = serial();
    let b = backend(false);
    if !b.exports_semaphores() {
        // lavapipe has no VK_KHR_external_semaphore_fd: every operation says so.
        assert_eq!(b.create_shared_semaphore(), Err(BackendError::NotSupported));
        assert_eq!(
            b.signal_shared_semaphore(1),
            Err(BackendError::NotSupported)
        );
        assert_eq!(b.wait_shared_semaphore(1), Err(BackendError::NotSupported));
        assert_eq!(b.shared_semaphore_idle(1), Err(BackendError::NotSupported));
        assert_eq!(
            b.destroy_shared_semaphore(1),
            Err(BackendError::NotSupported)
        );
        return;
    }
    let (id, fd) = b.create_shared_semaphore().unwrap();
    assert!(fd >= 0);
    // SAFETY: the fd is ours.
    unsafe { libc::close(fd) };
    assert_eq!(b.shared_semaphore_idle(id), Ok(true));
    // Signal then wait on the same queue: the wait is satisfied by the signal before it.
    b.signal_shared_semaphore(id).unwrap();
    b.wait_shared_semaphore(id).unwrap();
    let f = b.signal();
    b.wait(f);
    assert_eq!(b.shared_semaphore_idle(id), Ok(true));
    assert_eq!(
        b.signal_shared_semaphore(id + 1000),
        Err(BackendError::UnknownId)
    );
    b.destroy_shared_semaphore(id).unwrap();
    assert_eq!(b.destroy_shared_semaphore(id), Err(BackendError::UnknownId));
}

#[test]
fn textures_as_images_where_the_device_exports_them() {
    let _serial = serial();
    let b = backend(false);
    let (d, l) = texture(64, 32, 2);
    let mut a = b.allocate(&d, &l).unwrap();
    // lavapipe and NVIDIA both export optimal RGBA8 images.
    assert_eq!(a.kind, MemoryKind::OpaqueFdImage);
    // SAFETY: `a` is `b`'s.
    unsafe {
        assert_eq!(b.map(&a, 0, READ), Err(BackendError::NotSupported));
        let fd = b.export_fd(&a).unwrap();
        assert!(fd >= 0);
        libc::close(fd);
        b.free(&mut a);
    }
    // Formats without a bit-exact Vulkan image format (BC1), and STAGING textures, stay linear.
    let bc = ResourceDesc {
        format: 71,
        mip_levels: 1,
        ..d
    }
    .validate(false)
    .unwrap();
    let bl = ResourceLayout::new(&bc, &LayoutRules::VULKAN).unwrap();
    let mut a = b.allocate(&bc, &bl).unwrap();
    assert_eq!(a.kind, MemoryKind::OpaqueFd);
    // SAFETY: as above.
    unsafe { b.free(&mut a) };
    let (sd, sl) = texture_with(16, 16, 1, USAGE_STAGING, CPU_ACCESS_READ);
    let mut a = b.allocate(&sd, &sl).unwrap();
    assert_eq!(a.kind, MemoryKind::OpaqueFd);
    // SAFETY: as above.
    unsafe { b.free(&mut a) };
}

/// Uploads reuse the ring: many more than it holds, each copied elsewhere before the next, all
/// arrive intact (a band is not overwritten before the device read it), and after the first none
/// allocates memory.
#[test]
fn uploads_reuse_the_ring_without_corruption() {
    let _serial = serial();
    for b in backends() {
        // 1 MiB per upload: a 16 MiB ring holds 16, so 40 wrap it twice and wait for the device.
        let (d, l) = texture_with(512, 512, 1, USAGE_DEFAULT, 0);
        let full = l.full_region(0).unwrap();
        let row = 512 * 4;
        let mut src = b.allocate(&d, &l).unwrap();
        let mut dsts: Vec<Allocation> = (0..40).map(|_| b.allocate(&d, &l).unwrap()).collect();
        let frame =
            |k: usize| -> Vec<u8> { (0..row * 512).map(|i| (i / 7 + k * 31) as u8).collect() };
        // SAFETY: all allocations are `b`'s; whole subresources; each frame holds 512 rows.
        unsafe { b.write_region(&src, 0, &full, frame(99).as_ptr(), row, row * 512) };
        let before = b.counters();
        for (k, dst) in dsts.iter().enumerate() {
            let data = frame(k);
            // SAFETY: as above; `data` outlives the call (the backend copies it).
            unsafe {
                b.write_region(&src, 0, &full, data.as_ptr(), row, row * 512);
                b.copy_region(dst, 0, &full, &src, 0, &full);
            }
        }
        let after = b.counters();
        assert_eq!(after.memory_allocations, before.memory_allocations);
        for (k, dst) in dsts.iter().enumerate() {
            let want = frame(k);
            let rows = read_rows(&b, dst, 0);
            for (y, r) in rows.iter().enumerate() {
                assert_eq!(r[..], want[y * row..(y + 1) * row], "upload {k}, row {y}");
            }
        }
        // SAFETY: all are `b`'s and unused from here.
        unsafe {
            for d in dsts.iter_mut() {
                b.free(d);
            }
            b.free(&mut src);
        }
    }
}

/// An upload larger than any ring takes a buffer of its own and still arrives.
#[test]
fn oversized_upload_goes_alone() {
    let _serial = serial();
    let b = backend(false);
    // 8192x4200 RGBA8 = 131 MiB: more than half of the largest ring.
    let (d, l) = texture_with(8192, 4200, 1, USAGE_DEFAULT, 0);
    let full = l.full_region(0).unwrap();
    let row = 8192 * 4;
    let data: Vec<u8> = (0..row * 4200).map(|i| (i % 251) as u8).collect();
    let mut a = b.allocate(&d, &l).unwrap();
    // SAFETY: `a` is `b`'s; `data` holds 4200 rows.
    unsafe { b.write_region(&a, 0, &full, data.as_ptr(), row, row * 4200) };
    assert!(lock(&b.queue).ring.is_none());
    // A few rows, each through a one-row texture (a full read-back would double the memory).
    let (rd, rl) = texture_with(8192, 1, 1, USAGE_DEFAULT, 0);
    let mut one = b.allocate(&rd, &rl).unwrap();
    let to = rl.full_region(0).unwrap();
    for y in [0, 1, 2100, 4199] {
        let from = BlockRegion { y, h: 1, ..full };
        // SAFETY: both are `b`'s; one row of equal width.
        unsafe { b.copy_region(&one, 0, &to, &a, 0, &from) };
        assert_eq!(
            read_rows(&b, &one, 0)[0][..],
            data[y as usize * row..(y as usize + 1) * row]
        );
    }
    // SAFETY: as above.
    unsafe {
        b.free(&mut one);
        b.free(&mut a);
    }
}

/// `free` never waits: memory the device may still use is destroyed by a later reclaim.
#[test]
fn free_defers_instead_of_waiting() {
    let _serial = serial();
    let b = backend(true);
    let (d, l) = texture(256, 256, 1);
    let full = l.full_region(0).unwrap();
    let mut a = b.allocate(&d, &l).unwrap();
    let mut c = b.allocate(&d, &l).unwrap();
    // SAFETY: both are `b`'s; whole subresources.
    unsafe { b.copy_region(&c, 0, &full, &a, 0, &full) };
    let waits = b.counters().cpu_waits;
    // SAFETY: both are `b`'s and unused from here.
    unsafe {
        b.free(&mut a);
        b.free(&mut c);
    }
    assert_eq!(b.counters().cpu_waits, waits);
    // The recorded copy was submitted by the free, so a wait for everything ends.
    b.wait(b.signal());
    assert!(lock(&b.queue).retired.is_empty());
    assert!(lock(&b.memories).is_empty());
}

/// Maps through staging copies reuse the buffers of earlier maps.
#[test]
fn staging_maps_reuse_buffers() {
    let _serial = serial();
    let b = backend(true);
    let (d, l) = texture_with(64, 64, 1, USAGE_STAGING, CPU_ACCESS_READ | CPU_ACCESS_WRITE);
    let mut a = b.allocate(&d, &l).unwrap();
    assert!(!b.maps_directly(&a));
    // SAFETY: `a` is `b`'s; subresource 0 is not mapped between the calls.
    unsafe {
        let p = b.map(&a, 0, READ_WRITE).unwrap();
        std::ptr::write_bytes(p, 6, 64);
        b.unmap(&a, 0);
        b.wait(b.signal());
        let before = b.counters().memory_allocations;
        for _ in 0..5 {
            let p = b.map(&a, 0, READ).unwrap();
            assert_eq!(*p, 6);
            b.unmap(&a, 0);
        }
        assert_eq!(b.counters().memory_allocations, before);
        b.free(&mut a);
    }
}

/// A large upload is submitted in pieces of rows while the CPU writes the next; every row arrives,
/// on images and on linear textures, also into a box that does not start at row 0.
#[test]
fn large_uploads_go_in_pieces() {
    let _serial = serial();
    for b in backends() {
        // 2048x2100 RGBA8: 16.4 MiB, more than two pieces of 4 MiB (512 rows each).
        let (d, l) = texture_with(2048, 2100, 1, USAGE_DEFAULT, 0);
        let mut a = b.allocate(&d, &l).unwrap();
        let row = 2048 * 4;
        let bx = TexelBox {
            left: 0,
            top: 3,
            front: 0,
            right: 2048,
            bottom: 2100,
            back: 1,
        };
        let region = l.box_region(0, &bx).unwrap();
        let rows = 2097;
        let data: Vec<u8> = (0..row * rows)
            .map(|i| (i / 4093) as u8 ^ i as u8)
            .collect();
        b.wait(b.signal());
        let before = b.counters().submissions;
        // SAFETY: `a` is `b`'s; the box lies in subresource 0; `data` holds its rows.
        unsafe { b.write_region(&a, 0, &region, data.as_ptr(), row, row * rows) };
        let pieces = staging::upload_piece_bytes();
        if pieces == staging::UPLOAD_PIECE {
            // 2097 rows of 8 KiB in pieces of 512 rows: four submitted, the fifth recorded.
            assert_eq!(b.counters().submissions - before, 4);
        }
        let got = read_rows(&b, &a, 0);
        assert!(got[..3].iter().flatten().all(|&x| x == 0));
        for y in 0..rows {
            assert_eq!(got[y + 3][..], data[y * row..(y + 1) * row], "row {y}");
        }
        // SAFETY: as above.
        unsafe { b.free(&mut a) };
    }
}

/// Registered host memory: the device copies a subresource straight into it in pieces (each
/// reported once in, in order) and back out of it, for images and linear textures alike; memory
/// never registered is refused for reads and still written through the upload ring.
#[test]
fn host_copies_through_registered_memory() {
    let _serial = serial();
    for (i, b) in backends().into_iter().enumerate() {
        if b.host_import.is_none() {
            eprintln!("host_copies_through_registered_memory: no VK_EXT_external_memory_host");
            continue;
        }
        let lane = lock(&b.queue).lane.is_some();
        // The third backend asked for a lane, which a CPU device makes on its own queue.
        if i == 2 && b.adapter().software && std::env::var("DXCL_COPY_QUEUE").as_deref() != Ok("0")
        {
            assert!(lane, "the copy lane was not made: nothing tests it");
        }
        let (d, l) = texture(61, 37, 2);
        let mut a = b.allocate(&d, &l).unwrap();
        let sub = 1; // mip 1 of layer 0: 30x18
        let s = l.subresources[sub as usize];
        let row = s.width as usize * 4;
        let len = row * s.height as usize;
        let pattern: Vec<u8> = (0..len).map(|i| (i * 13 % 251) as u8).collect();
        let full = l.full_region(sub).unwrap();
        // SAFETY: `a` is `b`'s; the pattern is the packed subresource.
        unsafe { b.write_region(&a, sub, &full, pattern.as_ptr(), row, len) };
        // A page-aligned host range, registered around an unaligned start.
        let mut host = vec![0u8; len + 8192];
        let at = host
            .as_mut_ptr()
            .wrapping_add(4096 - host.as_ptr() as usize % 4096 + 12);
        // SAFETY: `at..at + len` lies in `host`, which outlives the registration.
        assert_eq!(unsafe { b.register_host(at, len) }, Ok(true));
        let pieces: Vec<BlockRegion> = (0..3)
            .map(|i| BlockRegion {
                y: i * 6,
                h: 6,
                ..full
            })
            .collect();
        let mut seen = Vec::new();
        // SAFETY: the regions lie in the subresource; `at` holds its packed bytes.
        unsafe { b.read_to_host(&a, sub, &pieces, at, &mut |i| seen.push(i)) }.unwrap();
        assert_eq!(seen, [0, 1, 2]);
        // SAFETY: `at..at + len` is ours and no copy runs any more.
        let got = unsafe { slice::from_raw_parts(at, len) }.to_vec();
        assert_eq!(got, pattern, "read into registered memory");
        // Back the other way, from changed bytes.
        let changed: Vec<u8> = pattern.iter().map(|v| v ^ 0x5a).collect();
        // SAFETY: as above; the device only reads it during the call.
        unsafe {
            std::ptr::copy_nonoverlapping(changed.as_ptr(), at, len);
            b.write_from_host(&a, sub, at).unwrap();
        }
        if lane {
            // Copies went to the lane: the queue's next batch waits for the last of them.
            assert!(lock(&b.queue).lane_value > 0, "no copy ran on the lane");
        }
        let rows = read_rows(&b, &a, sub);
        assert_eq!(rows.concat(), changed, "written from registered memory");
        assert_eq!(b.unregister_host(at), Ok(()));
        assert_eq!(b.unregister_host(at), Err(BackendError::UnknownId));
        // Unregistered memory: no direct read; a write goes through the upload ring.
        let mut other = vec![0u8; len];
        // SAFETY: as above.
        let refused = unsafe { b.read_to_host(&a, sub, &pieces, other.as_mut_ptr(), &mut |_| {}) };
        assert_eq!(refused, Err(BackendError::NotSupported));
        // SAFETY: as above.
        unsafe { b.write_from_host(&a, sub, pattern.as_ptr()) }.unwrap();
        assert_eq!(
            read_rows(&b, &a, sub).concat(),
            pattern,
            "written through the ring"
        );
        // SAFETY: `a` is `b`'s and unused from here.
        unsafe { b.free(&mut a) };
    }
}

/// `rows` (a subresource read back) hold, at `to`, the `size` box of `data` (600-texel rows of
/// `texel`-byte texels) from `from`, and zeros everywhere else.
fn check_box(
    rows: &[Vec<u8>],
    data: &[u8],
    texel: usize,
    (to, from, size): ((usize, usize), (usize, usize), (usize, usize)),
    what: &str,
) {
    let row = 600 * texel;
    for (y, r) in rows.iter().enumerate() {
        for x in 0..r.len() / texel {
            let inside = (to.0..to.0 + size.0).contains(&x) && (to.1..to.1 + size.1).contains(&y);
            let want = if inside {
                let (sx, sy) = (x - to.0 + from.0, y - to.1 + from.1);
                &data[sy * row + sx * texel..][..texel]
            } else {
                &[0u8; 8][..texel]
            };
            assert_eq!(&r[x * texel..][..texel], want, "{what}, texel ({x}, {y})");
        }
    }
}

/// Copies between large 2D images go through the compute shader where the format allows, bit
/// for bit: a box between slices and the whole subresource into another texture, for RGBA8 UNORM,
/// RGBA8 typeless (kept as UINT) and RGBA16 UINT, everything around the box left as it was; a
/// format no shader carries (RGBA16 UNORM) keeps vkCmdCopyImage.
#[test]
fn shader_copies_are_bit_exact() {
    let _serial = serial();
    if compute_copy::from_env() == Some(false) {
        eprintln!("shader_copies_are_bit_exact: SKIPPED, NOTHING TESTED: DXCL_COMPUTE_COPY=0");
        return;
    }
    // lavapipe is a CPU device: shader copies only where a test asks for them.
    let b = backend_with(Options {
        shader_copies_on_cpu: true,
        ..Options::default()
    });
    assert!(
        b.compute_copy.is_some(),
        "this device runs no shader copies (lavapipe has what they need)"
    );
    // R8G8B8A8_UNORM, R8G8B8A8_TYPELESS, R16G16B16A16_UINT, R16G16B16A16_UNORM.
    for (format, texel, shader) in [
        (28u32, 4usize, true),
        (27, 4, true),
        (12, 8, true),
        (11, 8, false),
    ] {
        let (w, h) = (600u32, 500u32);
        let (d, l) = texture_of(format, w, h, 2, USAGE_DEFAULT, 0);
        let mut a = b.allocate(&d, &l).unwrap();
        let mut c = b.allocate(&d, &l).unwrap();
        assert_eq!(a.kind, MemoryKind::OpaqueFdImage, "format {format}");
        let row = w as usize * texel;
        // Every byte value in every position.
        let data: Vec<u8> = (0..row * h as usize)
            .map(|i| (i * 7 + i / 611) as u8)
            .collect();
        let full = l.full_region(0).unwrap();
        // SAFETY: `a` is `b`'s; `data` holds `h` rows of `row` bytes.
        unsafe { b.write_region(&a, 0, &full, data.as_ptr(), row, row * h as usize) };
        let bx = TexelBox {
            left: 7,
            top: 5,
            front: 0,
            right: 593,
            bottom: 497,
            back: 1,
        };
        let src = l.box_region(0, &bx).unwrap();
        // Slice 1's mip 0.
        let slice1 = d.mip_levels;
        let to_slice = l.place_region(slice1, 3, 2, 0, &src).unwrap();
        let before = b.counters().shader_copies;
        // SAFETY: regions from the layout; distinct subresources of `a`, and `c`.
        unsafe {
            b.copy_region(&a, slice1, &to_slice, &a, 0, &src);
            b.copy_region(&c, 0, &full, &a, 0, &full);
        }
        let made = b.counters().shader_copies - before;
        assert_eq!(made, if shader { 2 } else { 0 }, "format {format}");
        let got = read_rows(&b, &a, slice1);
        check_box(
            &got,
            &data,
            texel,
            ((3, 2), (7, 5), (586, 492)),
            &format!("format {format}"),
        );
        let whole = read_rows(&b, &c, 0);
        for (y, r) in whole.iter().enumerate() {
            assert_eq!(
                r[..],
                data[y * row..(y + 1) * row],
                "format {format}, row {y}"
            );
        }
        // Mip 1 (300x250) of `c`: a 290x240 box of mip 0 at (4, 6), at least 256 KiB.
        let small = TexelBox {
            left: 10,
            top: 9,
            front: 0,
            right: 300,
            bottom: 249,
            back: 1,
        };
        let from = l.box_region(0, &small).unwrap();
        let to_mip = l.place_region(1, 4, 6, 0, &from).unwrap();
        let before = b.counters().shader_copies;
        // SAFETY: as above.
        unsafe { b.copy_region(&c, 1, &to_mip, &a, 0, &from) };
        assert_eq!(
            b.counters().shader_copies - before,
            u64::from(shader),
            "format {format}"
        );
        let mip = read_rows(&b, &c, 1);
        check_box(
            &mip,
            &data,
            texel,
            ((4, 6), (10, 9), (290, 240)),
            &format!("format {format}, mip 1"),
        );
        // SAFETY: both are `b`'s and unused from here.
        unsafe {
            b.free(&mut a);
            b.free(&mut c);
        }
    }
}

/// Whether this process's copy lane takes batches (`DXCL_COPY_QUEUE` is neither `0` nor `host`);
/// if not, says so after `skipped`, loudly: a test that needs the lane then tests nothing.
fn lane_takes_batches(skipped: &str) -> bool {
    let on = lane::wanted() && lane::takes_batches();
    if !on {
        eprintln!("{skipped}: DXCL_COPY_QUEUE=0 or host");
    }
    on
}

/// A batch waits on the timeline for the other queue's batches only while the CPU has not seen
/// the value reached: with all earlier work waited for, an upload's lane batch makes no such
/// wait, and its bytes still arrive.
#[test]
fn a_value_seen_reached_is_not_waited_for_again() {
    let _serial = serial();
    if !lane_takes_batches("a_value_seen_reached...: SKIPPED, NOTHING TESTED") {
        return;
    }
    let b = backend_with(Options {
        copy_lane_on_cpu: true,
        ..Options::default()
    });
    let (w, h) = (64u32, 32u32);
    let (d, l) = texture_of(28, w, h, 1, USAGE_DEFAULT, 0);
    let mut a = b.allocate(&d, &l).unwrap();
    let row = w as usize * 4;
    let full = l.full_region(0).unwrap();
    let bytes: Vec<u8> = (0..row * h as usize).map(|i| (i * 3) as u8).collect();
    // The image's zero-fill (main queue), waited for.
    b.wait(b.signal());
    let before = b.counters();
    // SAFETY: `a` is `b`'s; `bytes` holds `h` rows of `row` bytes.
    unsafe { b.write_region(&a, 0, &full, bytes.as_ptr(), row, row * h as usize) };
    assert!(lock(&b.queue).on_lane, "the upload began no lane batch");
    b.wait(b.signal());
    let after = b.counters();
    assert_eq!(after.submissions, before.submissions + 1, "one batch");
    assert_eq!(
        after.timeline_waits, before.timeline_waits,
        "the lane batch waited for a value already reached"
    );
    assert_eq!(read_rows(&b, &a, 0).concat(), bytes);
    // SAFETY: `a` is `b`'s and unused from here.
    unsafe { b.free(&mut a) };
}

#[test]
fn copies_start_lane_batches_and_shader_copies_the_queues() {
    let _serial = serial();
    if !lane_takes_batches("copies_start_lane_batches...: SKIPPED, NOTHING TESTED") {
        return;
    }
    let b = backend_with(Options {
        shader_copies_on_cpu: true,
        copy_lane_on_cpu: true,
        ..Options::default()
    });
    let shader = b.compute_copy.is_some();
    let (w, h) = (600u32, 500u32);
    let (d, l) = texture_of(28, w, h, 1, USAGE_DEFAULT, 0);
    let mut a = b.allocate(&d, &l).unwrap();
    let mut c = b.allocate(&d, &l).unwrap();
    // An image's zero-fill is main-queue work (its first layout and clear).
    assert!(!lock(&b.queue).on_lane);
    b.flush();
    let row = w as usize * 4;
    let full = l.full_region(0).unwrap();
    let first: Vec<u8> = (0..row * h as usize).map(|i| (i * 5) as u8).collect();
    // SAFETY: `a` is `b`'s; `first` holds `h` rows of `row` bytes.
    unsafe { b.write_region(&a, 0, &full, first.as_ptr(), row, row * h as usize) };
    {
        let q = lock(&b.queue);
        assert!(
            q.recording.is_some() && q.on_lane,
            "an upload began no lane batch"
        );
    }
    // A copy between images: a shader copy (main queue) where the device runs them, else a
    // transfer that joins the lane batch.
    // SAFETY: whole subresources of two resources of one layout.
    unsafe { b.copy_region(&c, 0, &full, &a, 0, &full) };
    {
        let q = lock(&b.queue);
        assert_eq!(q.on_lane, !shader, "the copy went to the wrong queue");
        if shader {
            assert!(q.lane_value > 0, "the lane batch was not submitted first");
        }
    }
    // A second upload into `a` after the copy read it: ordered after it on either queue.
    let second: Vec<u8> = first.iter().map(|v| !v).collect();
    // SAFETY: as above.
    unsafe { b.write_region(&a, 0, &full, second.as_ptr(), row, row * h as usize) };
    assert_eq!(
        read_rows(&b, &c, 0).concat(),
        first,
        "the copy read the first upload"
    );
    assert_eq!(read_rows(&b, &a, 0).concat(), second, "the second upload");
    // SAFETY: both are `b`'s and unused from here.
    unsafe {
        b.free(&mut a);
        b.free(&mut c);
    }
}

#[test]
fn copies_between_resources_take_the_lane_only_while_small() {
    let _serial = serial();
    assert_eq!(Engine::for_device_copy(4096), Engine::Copy);
    assert_eq!(Engine::for_device_copy(16 << 20), Engine::Main);
    assert_eq!(Engine::for_image_copy(6), Engine::Main);
    assert_eq!(Engine::Copy.and(Engine::Main), Engine::Main);
    if !lane_takes_batches("copies_between_resources...: lane part SKIPPED") {
        return;
    }
    let b = backend_with(Options {
        copy_lane_on_cpu: true,
        ..Options::default()
    });
    // R16G16B16A16_UNORM, which no shader copy takes: 2048x1024 texels of 8 bytes, 16 MiB.
    let (d, l) = texture_of(11, 2048, 1024, 1, USAGE_DEFAULT, 0);
    let mut a = b.allocate(&d, &l).unwrap();
    let mut c = b.allocate(&d, &l).unwrap();
    b.flush();
    let full = l.full_region(0).unwrap();
    let small = BlockRegion {
        w: 64,
        h: 64,
        ..full
    };
    // SAFETY: regions of the subresources of two resources of one layout.
    unsafe { b.copy_region(&c, 0, &small, &a, 0, &small) };
    assert!(
        lock(&b.queue).on_lane,
        "a 32 KiB copy between resources is not on the lane"
    );
    // SAFETY: as above.
    unsafe { b.copy_region(&c, 0, &full, &a, 0, &full) };
    {
        let q = lock(&b.queue);
        assert!(
            q.recording.is_some() && !q.on_lane,
            "a 16 MiB copy went to the lane"
        );
    }
    b.flush();
    // A buffer's zero-fill is a transfer: a new buffer begins a lane batch.
    let bd = ResourceDesc::buffer(4096, USAGE_DEFAULT, 0, 0, 0, 0)
        .validate(false)
        .unwrap();
    let bl = ResourceLayout::new(&bd, &LayoutRules::VULKAN).unwrap();
    let mut buffer = b.allocate(&bd, &bl).unwrap();
    assert!(
        lock(&b.queue).on_lane,
        "a buffer's zero-fill is not on the lane"
    );
    assert!(read_rows(&b, &buffer, 0).concat().iter().all(|&x| x == 0));
    // SAFETY: all are `b`'s and unused from here.
    unsafe {
        b.free(&mut a);
        b.free(&mut c);
        b.free(&mut buffer);
    }
}

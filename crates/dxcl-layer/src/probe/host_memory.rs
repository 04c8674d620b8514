//! Does the device use `CL_MEM_USE_HOST_PTR` memory in place? Asked of plain buffers and images.
//!
//! The spec allows a cache: "OpenCL implementations are allowed to cache the buffer contents
//! pointed to by host_ptr in device memory. This cached copy can be used when kernels are executed
//! on a device." (`clCreateBuffer`; images alike). Where the platform keeps one, the host-pointer
//! strategy must copy at each hand-off. The probe looks for every way a cache would show:
//!
//! - a map returns a pointer other than `host_ptr` (or another row pitch, for images);
//! - bytes the host writes into `host_ptr` after creation are not what the next command reads
//!   (a device-side copy into another object, and a read into other memory);
//! - bytes a command writes (a device-side copy from another object, a fill, a write from other
//!   memory) are not in `host_ptr` once the command has completed.
//!
//! Commands, not kernels: the probe needs no compiler, so it costs milliseconds at a device's first
//! use, also under valgrind (a kernel build there took most of a minute on PoCL).
//!
//! Only when every check holds, for buffers and (where the device has images) for images, does the
//! layer skip the copies. A probe that cannot run says why, and the layer copies.

use std::ffi::c_void;

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::*;

use super::plain::{ok, slot, Mem, Plain, Step};
use crate::cl::info::query_value;

/// What a probe of one kind of object found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every check held: the object is the host memory.
    InPlace,
    /// A check failed: the platform keeps a copy. The sentence names the check.
    Caches(String),
    /// The probe could not run (a call failed); the sentence says which.
    Unknown(String),
}

impl Verdict {
    pub fn in_place(&self) -> bool {
        *self == Verdict::InPlace
    }

    fn describe(&self, what: &str) -> String {
        match self {
            Verdict::InPlace => format!("{what} used in place"),
            Verdict::Caches(why) => format!("{what} cached: {why}"),
            Verdict::Unknown(why) => format!("{what} not probed: {why}"),
        }
    }
}

/// The probe of one device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostMemory {
    pub buffers: Verdict,
    /// None where the device has no image support.
    pub images: Option<Verdict>,
}

impl HostMemory {
    /// Whether acquire and release may skip the copies on this device.
    pub fn in_place(&self) -> bool {
        self.buffers.in_place() && self.images.as_ref().is_none_or(Verdict::in_place)
    }

    /// One line for `dxcl info` and `DXCL_LOG`.
    pub fn describe(&self) -> String {
        let mut parts = vec![self.buffers.describe("buffers")];
        if let Some(i) = &self.images {
            parts.push(i.describe("images"));
        }
        format!(
            "CL_MEM_USE_HOST_PTR (plain objects): {}; host-pointer hand-offs {}",
            parts.join(", "),
            if self.in_place() {
                "copy nothing (O(1))"
            } else {
                "copy between the object and host_ptr"
            }
        )
    }
}

/// Probes `device` through `t` (the platform's own table, or the one below the layer).
pub fn probe(t: &cl_icd_dispatch, device: cl_device_id) -> HostMemory {
    let images = match image_support(t, device) {
        Ok(true) => Some(verdict(image_probe(t, device))),
        Ok(false) => None,
        Err(why) => Some(Verdict::Unknown(why)),
    };
    HostMemory {
        buffers: verdict(buffer_probe(t, device)),
        images,
    }
}

/// A probe's result: Ok(None) all held, Ok(Some) the failed check, Err the failed call.
type Checks = Step<Option<String>>;

fn verdict(r: Checks) -> Verdict {
    match r {
        Ok(None) => Verdict::InPlace,
        Ok(Some(why)) => Verdict::Caches(why),
        Err(why) => Verdict::Unknown(why),
    }
}

fn image_support(t: &cl_icd_dispatch, device: cl_device_id) -> Step<bool> {
    let info = slot!(t, clGetDeviceInfo);
    // SAFETY: our own buffer of the queried type's size.
    let b: cl_bool =
        query_value(|n, p, r| unsafe { info(device, CL_DEVICE_IMAGE_SUPPORT, n, p, r) })
            .map_err(|e| format!("clGetDeviceInfo(CL_DEVICE_IMAGE_SUPPORT) failed with {e}"))?;
    Ok(b != 0)
}

/// Host memory for a probe object, not page-aligned: a subresource starts anywhere in its
/// resource. Offset 64 into a 64-aligned allocation of `size` + 64 bytes.
struct HostBlock {
    words: Vec<u64>,
}

impl HostBlock {
    fn new(size: usize) -> Self {
        HostBlock {
            words: vec![0; size.div_ceil(8) + 8],
        }
    }
    fn ptr(&mut self) -> *mut u8 {
        // SAFETY: 64 bytes into an allocation of at least size + 64 bytes.
        unsafe { self.words.as_mut_ptr().cast::<u8>().add(64) }
    }
    /// The `len` bytes at [`ptr`](Self::ptr), read through the pointer so that writes the
    /// platform made through it are seen.
    fn bytes(&mut self, len: usize) -> Vec<u8> {
        let p = self.ptr();
        // SAFETY: `len` bytes inside the allocation; no command on them runs now (every probe
        // step waits for its commands first).
        unsafe { std::slice::from_raw_parts(p, len) }.to_vec()
    }
    fn write(&mut self, data: &[u8]) {
        let p = self.ptr();
        // SAFETY: as above; `data` is another allocation.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
    }
}

const BUFFER_SIZE: usize = 64 << 10;

/// Bytes that differ from one seed to the next and along the buffer.
fn pattern(len: usize, seed: u32) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(7).wrapping_add(seed) as u8)
        .collect()
}

fn buffer_probe(t: &cl_icd_dispatch, device: cl_device_id) -> Checks {
    let cl = Plain::new(t, device)?;
    let mut host = HostBlock::new(BUFFER_SIZE);
    host.write(&pattern(BUFFER_SIZE, 1));
    let buf = cl.buffer(BUFFER_SIZE, Some(host.ptr()))?;
    let out = cl.buffer(BUFFER_SIZE, None)?;

    // The map is host_ptr itself.
    let map = slot!(t, clEnqueueMapBuffer);
    let mut err = CL_SUCCESS;
    // SAFETY: a blocking map of the whole buffer; unmapped below.
    let p = unsafe {
        map(
            cl.queue,
            buf.mem,
            CL_TRUE,
            CL_MAP_READ | CL_MAP_WRITE,
            0,
            BUFFER_SIZE,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
            &mut err,
        )
    };
    ok(err, "clEnqueueMapBuffer")?;
    unmap(&cl, &buf, p)?;
    if p.cast::<u8>() != host.ptr() {
        return Ok(Some(
            "clEnqueueMapBuffer returned a pointer other than host_ptr".into(),
        ));
    }

    // The host's bytes reach the next commands.
    let want = pattern(BUFFER_SIZE, 2);
    host.write(&want);
    cl.copy_buffer(&buf, &out, BUFFER_SIZE)?;
    if read_buffer(&cl, &out)? != want {
        return Ok(Some(
            "a device-side copy did not read what the host wrote into host_ptr".into(),
        ));
    }
    if read_buffer(&cl, &buf)? != want {
        return Ok(Some(
            "clEnqueueReadBuffer did not read what the host wrote into host_ptr".into(),
        ));
    }

    // The commands' bytes are in host_ptr once they completed.
    let src = cl.buffer(BUFFER_SIZE, None)?;
    let want = pattern(BUFFER_SIZE, 3);
    write_buffer(&cl, &src, &want)?;
    cl.copy_buffer(&src, &buf, BUFFER_SIZE)?;
    if host.bytes(BUFFER_SIZE) != want {
        return Ok(Some(
            "a device-side copy's bytes were not in host_ptr once it completed".into(),
        ));
    }
    cl.fill_buffer(&buf, 0xa5, BUFFER_SIZE)?;
    if host.bytes(BUFFER_SIZE) != vec![0xa5; BUFFER_SIZE] {
        return Ok(Some(
            "clEnqueueFillBuffer's bytes were not in host_ptr once it completed".into(),
        ));
    }
    let want = pattern(BUFFER_SIZE, 4);
    write_buffer(&cl, &buf, &want)?;
    if host.bytes(BUFFER_SIZE) != want {
        return Ok(Some(
            "clEnqueueWriteBuffer's bytes were not in host_ptr once it completed".into(),
        ));
    }
    Ok(None)
}

fn write_buffer(cl: &Plain, m: &Mem, data: &[u8]) -> Step<()> {
    let write = slot!(cl.t, clEnqueueWriteBuffer);
    // SAFETY: a blocking write of `data`, which spans the bytes written.
    let r = unsafe {
        write(
            cl.queue,
            m.mem,
            CL_TRUE,
            0,
            data.len(),
            data.as_ptr().cast(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    };
    ok(r, "clEnqueueWriteBuffer")
}

fn read_buffer(cl: &Plain, m: &Mem) -> Step<Vec<u8>> {
    let read = slot!(cl.t, clEnqueueReadBuffer);
    let mut got = vec![0u8; BUFFER_SIZE];
    // SAFETY: a blocking read into `got`, which spans the buffer's size.
    let r = unsafe {
        read(
            cl.queue,
            m.mem,
            CL_TRUE,
            0,
            BUFFER_SIZE,
            got.as_mut_ptr().cast(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    };
    ok(r, "clEnqueueReadBuffer")?;
    Ok(got)
}

fn unmap(cl: &Plain, m: &Mem, p: *mut c_void) -> Step<()> {
    let unmap = slot!(cl.t, clEnqueueUnmapMemObject);
    let mut ev = std::ptr::null_mut();
    // SAFETY: the pointer the blocking map returned, unmapped once.
    let r = unsafe { unmap(cl.queue, m.mem, p, 0, std::ptr::null(), &mut ev) };
    ok(r, "clEnqueueUnmapMemObject")?;
    cl.wait(ev)
}

/// 64 × 32 texels of RGBA8 (CL_UNSIGNED_INT8, a format every image device has), rows padded
/// as a resource's may be.
const W: usize = 64;
const H: usize = 32;
const PITCH: usize = W * 4 + 64;
const IMAGE_BYTES: usize = PITCH * H;

/// The texels' bytes of an image in `PITCH` layout (padding left out).
fn texels(bytes: &[u8]) -> Vec<u8> {
    bytes
        .chunks(PITCH)
        .flat_map(|row| row[..W * 4].iter().copied())
        .collect()
}

fn image_probe(t: &cl_icd_dispatch, device: cl_device_id) -> Checks {
    let cl = Plain::new(t, device)?;
    let format = cl_image_format {
        image_channel_order: CL_RGBA,
        image_channel_data_type: CL_UNSIGNED_INT8,
    };
    let mut host = HostBlock::new(IMAGE_BYTES);
    host.write(&pattern(IMAGE_BYTES, 1));
    let img = cl.image_2d(format, (W, H, 0), Some((host.ptr(), PITCH)))?;
    let out = cl.buffer(W * H * 4, None)?;
    let origin = [0usize; 3];
    let region = [W, H, 1];

    // The map is host_ptr itself, with its row pitch.
    let map = slot!(t, clEnqueueMapImage);
    let (mut row_pitch, mut slice_pitch, mut err) = (0usize, 0usize, CL_SUCCESS);
    // SAFETY: a blocking map of the whole image; unmapped below.
    let p = unsafe {
        map(
            cl.queue,
            img.mem,
            CL_TRUE,
            CL_MAP_READ | CL_MAP_WRITE,
            origin.as_ptr(),
            region.as_ptr(),
            &mut row_pitch,
            &mut slice_pitch,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
            &mut err,
        )
    };
    ok(err, "clEnqueueMapImage")?;
    unmap(&cl, &img, p)?;
    if p.cast::<u8>() != host.ptr() || row_pitch != PITCH {
        return Ok(Some(
            "clEnqueueMapImage returned a pointer or row pitch other than host_ptr's".into(),
        ));
    }

    // The host's texels reach the next commands.
    let want = pattern(IMAGE_BYTES, 2);
    host.write(&want);
    cl.copy_image_to_buffer(&img, &out, region)?;
    let mut packed = vec![0u8; W * H * 4];
    let read = slot!(t, clEnqueueReadBuffer);
    // SAFETY: a blocking read into `packed`, which spans the buffer's W × H texels.
    let r = unsafe {
        read(
            cl.queue,
            out.mem,
            CL_TRUE,
            0,
            W * H * 4,
            packed.as_mut_ptr().cast(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    };
    ok(r, "clEnqueueReadBuffer")?;
    if packed != texels(&want) {
        return Ok(Some(
            "a device-side copy did not read what the host wrote into host_ptr".into(),
        ));
    }
    let image_read = slot!(t, clEnqueueReadImage);
    let mut got = vec![0u8; IMAGE_BYTES];
    // SAFETY: a blocking read into `got`, which spans PITCH × H bytes.
    let r = unsafe {
        image_read(
            cl.queue,
            img.mem,
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            PITCH,
            0,
            got.as_mut_ptr().cast(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    };
    ok(r, "clEnqueueReadImage")?;
    if texels(&got) != texels(&want) {
        return Ok(Some(
            "clEnqueueReadImage did not read what the host wrote into host_ptr".into(),
        ));
    }

    // The commands' texels are in host_ptr once they completed.
    let want = pattern(W * H * 4, 3);
    write_buffer(&cl, &out, &want)?;
    cl.copy_buffer_to_image(&out, &img, region)?;
    if texels(&host.bytes(IMAGE_BYTES)) != want {
        return Ok(Some(
            "a device-side copy's texels were not in host_ptr once it completed".into(),
        ));
    }
    let want = pattern(IMAGE_BYTES, 4);
    let write = slot!(t, clEnqueueWriteImage);
    // SAFETY: a blocking write from `want`, which spans PITCH × H bytes.
    let r = unsafe {
        write(
            cl.queue,
            img.mem,
            CL_TRUE,
            origin.as_ptr(),
            region.as_ptr(),
            PITCH,
            0,
            want.as_ptr().cast(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        )
    };
    ok(r, "clEnqueueWriteImage")?;
    if texels(&host.bytes(IMAGE_BYTES)) != texels(&want) {
        return Ok(Some(
            "clEnqueueWriteImage's texels were not in host_ptr once it completed".into(),
        ));
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texels_leave_out_the_row_padding() {
        let mut image = vec![0u8; IMAGE_BYTES];
        image[PITCH] = 7; // row 1, texel 0
        image[W * 4] = 9; // row 0's padding
        let t = texels(&image);
        assert_eq!(t.len(), W * H * 4);
        assert_eq!(t[W * 4], 7);
        assert!(!t.contains(&9));
    }

    #[test]
    fn only_all_in_place_skips_the_copies() {
        let cached = Verdict::Caches("x".into());
        let all = HostMemory {
            buffers: Verdict::InPlace,
            images: Some(Verdict::InPlace),
        };
        assert!(all.in_place());
        let no_images = HostMemory {
            buffers: Verdict::InPlace,
            images: None,
        };
        assert!(no_images.in_place());
        for (b, i) in [
            (Verdict::InPlace, Some(cached.clone())),
            (cached.clone(), Some(Verdict::InPlace)),
            (Verdict::Unknown("y".into()), None),
        ] {
            let h = HostMemory {
                buffers: b,
                images: i,
            };
            assert!(!h.in_place());
            assert!(h.describe().contains("copy between"));
        }
    }
}

//! `DXCL_TRACE=handoff`: after each hand-off case's timed rounds, a pass of hand-offs of its own,
//! whose step table the layer hands over (`dxclTraceTake`, found in the layer the loader loaded)
//! and the bench prints on stderr.

use std::ffi::{c_char, c_int, CString};
use std::time::{Duration, Instant};

use super::stats::Summary;

type BoxError = Box<dyn std::error::Error>;
type Take = unsafe extern "C" fn(*mut c_char, usize) -> usize;
type Record = unsafe extern "C" fn(c_int) -> c_int;
type Window = unsafe extern "C" fn(c_int) -> u64;

/// Hand-offs per pass: at most this many, and no more once the pass has used `PASS_TIME`.
const PASS_MAX: usize = 200;
const PASS_MIN: usize = 5;
const PASS_TIME: Duration = Duration::from_secs(1);

pub struct Tracer {
    take: Take,
    /// The layer's switch that pauses recording (`dxclTraceRecord`).
    record: Record,
    /// The layer's window around the floor after each hand-off (`dxclTraceWindow`), where the
    /// layer has it.
    window: Option<Window>,
}

/// Whether `DXCL_TRACE` asks for the hand-off trace.
pub fn wanted() -> bool {
    std::env::var("DXCL_TRACE").is_ok_and(|v| v.split(',').any(|w| w == "handoff"))
}

impl Tracer {
    /// The layer's export, once the loader has loaded the layers of `OPENCL_LAYERS` (after the
    /// first OpenCL call); None when `DXCL_TRACE=handoff` is not set.
    pub fn find() -> Result<Option<Tracer>, BoxError> {
        if !wanted() {
            return Ok(None);
        }
        let layers = std::env::var("OPENCL_LAYERS").unwrap_or_default();
        for path in layers.split(':').filter(|p| !p.is_empty()) {
            let Ok(c) = CString::new(path) else {
                continue;
            };
            // SAFETY: a NUL-terminated path; RTLD_NOLOAD only finds a library already loaded
            // (its reference is kept: the loader never unloads a layer either).
            let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
            if handle.is_null() {
                continue;
            }
            // SAFETY: a live handle and a NUL-terminated name.
            let f = unsafe { libc::dlsym(handle, c"dxclTraceTake".as_ptr()) };
            // SAFETY: as above.
            let r = unsafe { libc::dlsym(handle, c"dxclTraceRecord".as_ptr()) };
            // SAFETY: as above.
            let w = unsafe { libc::dlsym(handle, c"dxclTraceWindow".as_ptr()) };
            if !f.is_null() && !r.is_null() {
                // SAFETY: the layer's exports have these signatures (dxcl-layer src/trace.rs).
                let (take, record): (Take, Record) =
                    unsafe { (std::mem::transmute_copy(&f), std::mem::transmute_copy(&r)) };
                // SAFETY: as above; null where the layer has no window.
                let window = (!w.is_null()).then(|| unsafe { std::mem::transmute_copy(&w) });
                return Ok(Some(Tracer {
                    take,
                    record,
                    window,
                }));
            }
        }
        Err(format!(
            "DXCL_TRACE=handoff, but no loaded layer of OPENCL_LAYERS={layers:?} exports \
             dxclTraceTake and dxclTraceRecord"
        )
        .into())
    }

    /// The layer's table so far (then zeroed there).
    fn take(&self) -> String {
        let mut buf = vec![0u8; 1 << 16];
        // SAFETY: a buffer of the size passed.
        let n = unsafe { (self.take)(buf.as_mut_ptr().cast(), buf.len()) };
        String::from_utf8_lossy(&buf[..n.min(buf.len() - 1)]).into_owned()
    }

    /// A pass of hand-offs (`op`, with `quiet` and then `between` before each, as in the timed
    /// rounds), and the table of their steps on stderr under `title`. `quiet` (the floor markers
    /// of `--clean-gap-us`, `quiet_us` long) runs with recording paused: it is no hand-off's.
    /// `between` says whether Direct3D touched the resource. With `floor`, the floor right after
    /// each hand-off runs inside the layer's window, timed: its times split by whether any of the
    /// layer's work outside the entry points (a callback, another thread of the layer's) ran
    /// during it, and by whether Direct3D touched the resource before the hand-off.
    pub fn pass(
        &self,
        title: &str,
        mut op: impl FnMut() -> Result<(), BoxError>,
        mut quiet: impl FnMut() -> Result<(), BoxError>,
        quiet_us: u64,
        mut between: impl FnMut(usize) -> Result<bool, BoxError>,
        mut floor: Option<&mut dyn FnMut() -> Result<(), BoxError>>,
    ) -> Result<(), BoxError> {
        // What verification and the timed rounds left is not this pass's.
        self.take();
        let (start, mut timed, mut n) = (Instant::now(), Duration::ZERO, 0usize);
        let mut afters: Vec<After> = Vec::new();
        while n < PASS_MIN || (n < PASS_MAX && start.elapsed() < PASS_TIME) {
            if quiet_us > 0 {
                // SAFETY: the layer's export takes any int.
                unsafe { (self.record)(0) };
                let quieted = quiet();
                // SAFETY: as above.
                unsafe { (self.record)(1) };
                quieted?;
            }
            let touched = between(n)?;
            let t = Instant::now();
            op()?;
            timed += t.elapsed();
            n += 1;
            if let (Some(f), Some(window)) = (floor.as_mut(), self.window) {
                // SAFETY: the layer's export takes any int.
                unsafe { window(1) };
                let t = Instant::now();
                let r = f();
                let took = t.elapsed();
                // SAFETY: as above.
                let outside = unsafe { window(0) };
                r?;
                afters.push(After {
                    took,
                    outside,
                    touched,
                });
            }
        }
        let table = self.take();
        let after = if quiet_us > 0 {
            format!(", each after {quiet_us} µs of floor markers (not traced)")
        } else {
            String::new()
        };
        eprintln!(
            "\n### Hand-off trace: {title}\n\n{n} hand-offs (acquire + release + clFinish) after \
             the timed rounds{after}: {:.1} µs each by the bench's clock, the trace on\n{}{table}",
            timed.as_secs_f64() * 1e6 / n as f64,
            floor_lines(&afters)
        );
        Ok(())
    }
}

/// One floor right after a traced hand-off.
struct After {
    took: Duration,
    /// Spans of the layer's outside its entry points that closed during it.
    outside: u64,
    /// Direct3D touched the resource before the hand-off.
    touched: bool,
}

/// The floors right after the hand-offs, in all, then split by whether the layer ran anything
/// outside its entry points during them, and by whether Direct3D touched the resource before
/// the hand-off.
fn floor_lines(afters: &[After]) -> String {
    let Some(all) = Summary::of(&afters.iter().map(|a| a.took).collect::<Vec<_>>()) else {
        return String::new();
    };
    let split = |keep: &dyn Fn(&After) -> bool| {
        let times: Vec<Duration> = afters.iter().filter(|a| keep(a)).map(|a| a.took).collect();
        match Summary::of(&times) {
            Some(s) => format!(
                "{} (median {:.1} µs, p90 {:.1} µs)",
                s.samples, s.median_us, s.p90_us
            ),
            None => "0".into(),
        }
    };
    format!(
        "- the floor (marker + clFinish) right after each hand-off, in the layer's window: {} \
         samples, median {:.1} µs, p90 {:.1} µs; with the layer's work outside its entry points \
         during it: {}; without: {}; after a hand-off that followed Direct3D's write: {}; after \
         one that did not: {}\n",
        all.samples,
        all.median_us,
        all.p90_us,
        split(&|a| a.outside > 0),
        split(&|a| a.outside == 0),
        split(&|a| a.touched),
        split(&|a| !a.touched)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_split_by_the_layers_work_and_direct3ds_write() {
        let at = |us: u64, outside: u64, touched: bool| After {
            took: Duration::from_micros(us),
            outside,
            touched,
        };
        let lines = floor_lines(&[
            at(6, 0, false),
            at(7, 0, false),
            at(160, 2, true),
            at(150, 0, true),
        ]);
        assert!(lines.contains("4 samples"), "{lines}");
        assert!(lines.contains("during it: 1 (median 160.0 µs"), "{lines}");
        assert!(lines.contains("without: 3 (median 7.0 µs"), "{lines}");
        assert!(lines.contains("write: 2 (median 155.0 µs"), "{lines}");
        assert!(lines.contains("did not: 2 (median 6.5 µs"), "{lines}");
        assert!(floor_lines(&[]).is_empty());
        assert!(floor_lines(&[at(5, 0, false)]).contains("during it: 0; without: 1"));
    }
}

//! `dxcl frames`: the loop an application runs. Each frame Direct3D updates a texture from a
//! host frame that changes every frame, an OpenCL kernel (a 5×5 blur) reads it and writes a second
//! texture, and Direct3D copies that result onward into a third. Measured in one run, same kernel,
//! same size:
//!
//! - a. the same work without Direct3D or sharing (the baseline);
//! - b. the manual host round trip people write without the extension;
//! - c. dxcl through `cl_khr_d3d11_sharing`, once per sync mode of the layer (`DXCL_SYNC`);
//! - d. the expert's path by hand, without Direct3D or dxcl: Vulkan and OpenCL sharing images
//!   and semaphores through opaque fds (`expert.rs`, `vulkan.rs`). Where that cannot run (no
//!   external memory or semaphores in OpenCL, no Vulkan device of the same UUID) its row says why.
//!
//! Every case's result is read back and checked against a CPU blur before timing and every N-th
//! frame (untimed). A case that fails the check or fails to run keeps its row with the error, the
//! others go on, and the command then fails.

mod breakdown;
mod expert;
mod image;
mod pipeline;
mod report;
mod vulkan;

use crate::bench::Driver;
use breakdown::{Breakdown, Marks};
use expert::Expert;
use image::{blur_reference, compare, host_frame, Extent};
use pipeline::{Gpu, HostRoundTrip, OpenClOnly, Pipeline, Shared, SyncRequest};
use report::{Row, Samples, Summary};
use std::path::PathBuf;
use std::time::Instant;

/// Times the frame pipeline (Direct3D update, OpenCL blur, Direct3D copy) through dxcl, against
/// OpenCL alone and against the manual host round trip.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// The frame's width and height in texels.
    #[arg(long = "size", value_name = "WxH", default_value = "3840x2160", value_parser = parse_extent)]
    pub extent: Extent,
    /// Timed frames per case.
    #[arg(long, value_name = "N", default_value_t = 120, value_parser = positive)]
    pub frames: usize,
    /// Check every N-th timed frame (and the first, untimed, and the last).
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = positive)]
    pub verify_every: usize,
    /// D3D_DRIVER_TYPE_HARDWARE, or _WARP (dxcl: the software adapter).
    #[arg(long, value_enum, default_value_t = Driver::Hardware)]
    pub driver: Driver,
    /// Print the results as a Markdown table.
    #[arg(long)]
    pub markdown: bool,
    /// Where to write the SVG chart.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// After the table, where each case's frame time goes: each step's median, p90, p99 and
    /// maximum, the slowest frames step by step, and CPU time per frame by thread.
    #[arg(long)]
    pub breakdown: bool,
}

/// A count of at least 1 (`--frames`, `--verify-every`).
fn positive(s: &str) -> Result<usize, String> {
    s.parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{s:?} is not a count of 1 or more"))
}

/// Distinct host frames, cycled: consecutive frames always differ.
const RING: usize = 3;
/// Untimed frames per case before timing (after the first, checked one).
const WARMUP: usize = 2;
/// `--breakdown`: timed rounds of each step alone.
const STEP_ROUNDS: usize = 20;
/// Cases take turns in blocks of this many timed frames, each block after one untimed frame, so
/// drift on a shared machine affects every case alike.
const BLOCK: usize = 10;
/// `DXCL_FRAMES_FAULT=stale-upload`: every checked frame is given the previous frame's host data,
/// as a pipeline that dropped the frame's upload would be. For the tests: the check must fail.
const FAULT_ENV: &str = "DXCL_FRAMES_FAULT";

fn parse_extent(s: &str) -> Result<Extent, String> {
    let bad = || format!("{s:?} is not WxH (e.g. 3840x2160)");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if w == 0 || h == 0 || w > 16384 || h > 16384 {
        return Err(format!("{s}: each side must be 1..=16384"));
    }
    Ok(Extent {
        width: w,
        height: h,
    })
}

/// CPU time of the process and of this thread so far, in milliseconds.
fn cpu_ms() -> (f64, f64) {
    let read = |clock| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid clock id and a valid out struct.
        let r = unsafe { libc::clock_gettime(clock, &mut ts) };
        if r == 0 {
            ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
        } else {
            f64::NAN
        }
    };
    (
        read(libc::CLOCK_PROCESS_CPUTIME_ID),
        read(libc::CLOCK_THREAD_CPUTIME_ID),
    )
}

/// One case and what was measured of it.
struct Case<'g> {
    letter: &'static str,
    name: String,
    /// `None` when the case cannot run here (`not_run` says why) or failed to set up (`failure`).
    pipeline: Option<Box<dyn Pipeline + 'g>>,
    not_run: Option<String>,
    /// Case d: its sharing and sync, as built by hand.
    by_hand: Option<(String, String)>,
    /// How the layer shares the input and the result texture (c only).
    sharing: Option<[crate::bench::session::Sharing; 2]>,
    sync: Option<SyncRequest>,
    /// Frames run so far, timed or not: frame `n` shows host frame `n % RING`.
    n: usize,
    samples: Samples,
    /// Step by step (`--breakdown`).
    breakdown: Breakdown,
    /// The last frame was checked (read back): the next timed one is marked as such.
    after_check: bool,
    /// Shared-semaphore signals and waits the runtime saw during the timed frames.
    semaphore_ops: u64,
    checked: usize,
    off_by_one: usize,
    failure: Option<String>,
}

impl<'g> Case<'g> {
    fn new(
        letter: &'static str,
        name: &str,
        pipeline: Box<dyn Pipeline + 'g>,
        sync: Option<SyncRequest>,
        n: usize,
    ) -> Case<'g> {
        Case {
            letter,
            name: name.to_string(),
            pipeline: Some(pipeline),
            not_run: None,
            by_hand: None,
            sharing: None,
            sync,
            n,
            samples: Samples::default(),
            breakdown: Breakdown::default(),
            after_check: false,
            semaphore_ops: 0,
            checked: 0,
            off_by_one: 0,
            failure: None,
        }
    }

    /// A case without a pipeline: `failed` or not run, for `why`.
    fn without(letter: &'static str, name: &str, why: String, failed: bool) -> Case<'g> {
        Case {
            letter,
            name: name.to_string(),
            pipeline: None,
            not_run: (!failed).then(|| why.clone()),
            by_hand: None,
            sharing: None,
            sync: None,
            n: 0,
            samples: Samples::default(),
            breakdown: Breakdown::default(),
            after_check: false,
            semaphore_ops: 0,
            checked: 0,
            off_by_one: 0,
            failure: failed.then_some(why),
        }
    }

    /// Whether the case still runs frames.
    fn runs(&self) -> bool {
        self.pipeline.is_some() && self.failure.is_none()
    }

    fn sync_used(&self) -> &'static str {
        match (self.sync, self.semaphore_ops) {
            (None, _) => "-",
            (Some(_), 0) => "cpu",
            (Some(_), _) => "gpu",
        }
    }

    /// Why the sync is what it is, from what the run saw.
    fn sync_evidence(&self) -> String {
        use crate::bench::session::Sharing;
        let frames = self.samples.frame_ms.len().max(1);
        let asked = self.sync.map(SyncRequest::name).unwrap_or("-");
        let how = match (self.semaphore_ops, self.sharing.map(|s| s[0])) {
            (0, Some(Sharing::HostPointer)) => {
                "no shared semaphores: the textures are host memory the CL device uses in place; \
                 acquire waits for Direct3D on the CPU"
                    .to_string()
            }
            (0, Some(Sharing::StagingCopy)) => {
                "no shared semaphores: the layer copies through staging resources, and acquire and \
                 release wait on the CPU"
                    .to_string()
            }
            (0, _) => "no shared semaphores: acquire and release wait on the CPU".to_string(),
            (ops, _) => format!(
                "{ops} shared-semaphore signals and waits in the runtime over {frames} frames \
                 ({:.1} per frame): GPU-side",
                ops as f64 / frames as f64
            ),
        };
        format!("DXCL_SYNC={asked}: {how}")
    }
}

/// Today's date (UTC) as YYYY-MM-DD, for the chart.
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Civil from days (H. Hinnant's algorithm).
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

pub fn run(opts: &Options) -> Result<(), Box<dyn std::error::Error>> {
    if std::env::var_os("DXCL_LOG").is_none() {
        std::env::set_var("DXCL_LOG", "1");
    }
    let stale_fault = match std::env::var(FAULT_ENV) {
        Ok(v) if v == "stale-upload" => true,
        Ok(v) => return Err(format!("{FAULT_ENV}={v}: the only fault is stale-upload").into()),
        Err(_) => false,
    };
    let e = opts.extent;
    let gpu = Gpu::open(opts.driver.d3d(), e)?;
    let bullet = if opts.markdown { "- " } else { "  " };
    println!(
        "dxcl frames: {} DXGI_FORMAT_R8G8B8A8_UNORM frames; each: Direct3D UpdateSubresource from \
         a host frame that changes every frame, an OpenCL 5x5 box blur into a second texture, \
         Direct3D CopyResource of the result into a third",
        e.name()
    );
    println!(
        "{bullet}Direct3D 11: {} on the default adapter: {}",
        opts.driver.name(),
        gpu.adapter
    );
    println!(
        "{bullet}OpenCL: platform {}, device {} (the first preferred device for the D3D11 device)",
        gpu.platform_name, gpu.cl_device_name
    );
    println!(
        "{bullet}timing: per case {WARMUP} untimed frames after a first checked one, then {} timed \
         frames in blocks of {BLOCK} (cases take turns; one untimed frame before each block); a \
         frame ends when its result is in the last texture or image and the device is done; \
         checked against a CPU blur every {} timed frames (untimed, tolerance {} code)",
        opts.frames,
        opts.verify_every,
        image::TOLERANCE
    );
    if let Some(v) = std::env::var_os("DXCL_SYNC") {
        println!(
            "{bullet}note: DXCL_SYNC={} from the environment is ignored: each c case sets it",
            v.to_string_lossy()
        );
    }
    if stale_fault {
        println!("{bullet}fault injected ({FAULT_ENV}=stale-upload): checked frames get the previous frame's data");
    }

    let ring: Vec<Vec<u8>> = (0..RING as u32).map(|k| host_frame(e, k)).collect();
    let references: Vec<Vec<u8>> = ring.iter().map(|f| blur_reference(e, f)).collect();

    let mut cases = vec![
        Case::new(
            "a",
            "opencl-only",
            Box::new(OpenClOnly::new(&gpu)?),
            None,
            0,
        ),
        Case::new(
            "b",
            "host-round-trip",
            Box::new(HostRoundTrip::new(&gpu)?),
            None,
            0,
        ),
    ];
    for sync in [SyncRequest::Adaptive, SyncRequest::Gpu, SyncRequest::Cpu] {
        // Its first frame (host frame 0) runs while DXCL_SYNC is set.
        let shared = Shared::new(&gpu, sync, &ring[0])?;
        let sharing = shared.sharing;
        let mut case = Case::new(
            "c",
            &format!("dxcl sync={}", sync.name()),
            Box::new(shared),
            Some(sync),
            1,
        );
        case.sharing = Some(sharing);
        cases.push(case);
    }
    let d = match Expert::new(&gpu) {
        Ok(x) => {
            println!(
                "{bullet}d. {EXPERT}: Vulkan device {} (the OpenCL device's UUID); {}",
                x.vulkan_device, x.path
            );
            let mut case = Case::new("d", EXPERT, Box::new(x), None, 0);
            case.by_hand = Some(("external-memory by hand".into(), "gpu".into()));
            case
        }
        Err(expert::Setup::NotRun(why)) => {
            println!("{bullet}d. {EXPERT}: NOT RUN: {why}");
            Case::without("d", EXPERT, format!("not run: {why}"), false)
        }
        Err(expert::Setup::Failed(why)) => {
            println!("{bullet}d. {EXPERT}: FAILED to set up: {why}");
            Case::without("d", EXPERT, format!("set-up: {why}"), true)
        }
    };
    cases.push(d);

    // Checks the last frame's result; a read-back that fails or differs is the case's failure.
    let check = |case: &mut Case<'_>| {
        let Some(pipeline) = case.pipeline.as_mut() else {
            return;
        };
        case.after_check = true;
        let got = match pipeline.result() {
            Ok(got) => got,
            Err(err) => {
                case.failure = Some(format!("reading back frame {}: {err}", case.n - 1));
                return;
            }
        };
        let expected = &references[(case.n - 1) % RING];
        let c = compare(e, expected, &got);
        case.checked += 1;
        case.off_by_one += c.off_by_one;
        if !c.ok() {
            let (x, y) = c.first_wrong.unwrap_or((0, 0));
            case.failure = Some(format!(
                "frame {}: {} of {} bytes differ from the CPU blur by more than {} (largest {}), \
                 the first at texel ({x}, {y})",
                case.n - 1,
                c.wrong,
                expected.len(),
                image::TOLERANCE,
                c.max_diff
            ));
        }
    };
    // One frame of `case`; with `timed`, its wall and CPU time are recorded. An error is the
    // case's failure: its row keeps it and the other cases go on.
    let frame = |case: &mut Case<'_>, timed: bool, checked: bool| {
        let index = if checked && stale_fault {
            (case.n + RING - 1) % RING
        } else {
            case.n % RING
        };
        let Some(pipeline) = case.pipeline.as_mut() else {
            return;
        };
        let threads = (timed && opts.breakdown).then(breakdown::threads_cpu);
        let ops = dxcl_d3d::com::interop::shared_semaphore_operations();
        let (p0, t0) = cpu_ms();
        let start = Instant::now();
        let mut marks = Marks::start();
        let done = pipeline.frame(&ring[index], &mut marks);
        let wall = start.elapsed();
        let (p1, t1) = cpu_ms();
        if let Some(before) = threads {
            let after = breakdown::threads_cpu();
            let ms = wall.as_secs_f64() * 1e3;
            case.breakdown
                .record(marks, ms, case.after_check, &before, &after);
        }
        case.after_check = false;
        case.n += 1;
        if let Err(err) = done {
            case.failure = Some(format!("frame {}: {err}", case.n - 1));
            return;
        }
        if timed {
            case.samples.frame_ms.push(wall.as_secs_f64() * 1e3);
            case.samples.process_cpu_ms += p1 - p0;
            case.samples.thread_cpu_ms += t1 - t0;
            case.semaphore_ops += dxcl_d3d::com::interop::shared_semaphore_operations() - ops;
        }
    };

    // Checked before timed: the first frame, then the warm-up.
    for case in cases.iter_mut().filter(|c| c.runs()) {
        if case.n == 0 {
            frame(case, false, false);
        }
        if case.runs() {
            check(case);
        }
        for _ in 0..WARMUP {
            if case.runs() {
                frame(case, false, false);
            }
        }
    }
    let mut timed = 0;
    while timed < opts.frames {
        let block = BLOCK.min(opts.frames - timed);
        for case in cases.iter_mut().filter(|c| c.runs()) {
            frame(case, false, false);
            for i in timed..timed + block {
                if !case.runs() {
                    break;
                }
                let checked = i % opts.verify_every == 0 || i + 1 == opts.frames;
                frame(case, true, checked);
                if checked && case.runs() {
                    check(case);
                }
            }
        }
        timed += block;
    }

    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            c.failure
                .as_ref()
                .map(|f| format!("{}. {}: {f}", c.letter, c.name))
        })
        .collect();
    let rows: Vec<Row> = cases
        .iter()
        .map(|c| Row {
            letter: c.letter,
            case: c.name.clone(),
            strategy: match (&c.by_hand, c.sharing) {
                (Some((how, _)), _) => how.clone(),
                (None, None) => "-".to_string(),
                (None, Some([i, o])) if i == o => i.name().to_string(),
                (None, Some([i, o])) => format!("in {}, out {}", i.name(), o.name()),
            },
            sync: match &c.by_hand {
                Some((_, sync)) => sync.clone(),
                None => c.sync_used().to_string(),
            },
            summary: if c.failure.is_some() {
                None
            } else {
                Summary::of(&c.samples)
            },
            verified: match (&c.not_run, &c.failure) {
                (Some(why), _) => why.clone(),
                (None, Some(f)) => format!("FAILED: {f}"),
                (None, None) => format!("ok ({} frames)", c.checked),
            },
        })
        .collect();
    let measured = |letter: &str| {
        rows.iter()
            .find(|r| r.letter == letter)
            .and_then(|r| r.summary)
    };
    println!();
    let baseline = measured("a").map(|a| a.median_ms);
    if opts.markdown {
        print!("{}", report::markdown(&rows, baseline));
    } else {
        print!("{}", report::text(&rows, baseline));
    }
    println!();
    println!("ratios (c's over a's, b's and d's, same run):");
    let bases: Vec<&Row> = rows
        .iter()
        .filter(|r| matches!(r.letter, "a" | "b" | "d"))
        .collect();
    for c in rows.iter().filter(|r| r.letter == "c") {
        for base in bases.iter().filter(|b| b.summary.is_some()) {
            let (Some(s), Some(b)) = (&c.summary, &base.summary) else {
                continue;
            };
            println!(
                "{bullet}{}. {} / {}. {}: median frame time {:.2}x, fps {:.2}x, CPU per \
                 frame {:.2}x",
                c.letter,
                c.case,
                base.letter,
                base.case,
                s.median_ms / b.median_ms,
                s.fps / b.fps,
                s.process_cpu_ms / b.process_cpu_ms
            );
        }
    }
    for r in rows.iter().filter(|r| r.summary.is_none()) {
        println!(
            "{bullet}no ratios with {}. {}: {}",
            r.letter, r.case, r.verified
        );
    }
    print!("{}", targets(&rows, bullet));
    if opts.breakdown {
        println!("\n### Where the frame time goes (--breakdown)\n");
        println!(
            "Wall time of each step of a timed frame (its own marks: an enqueue's time is the \
             call's, a wait's is until the device is done); CPU time per frame of each thread \
             (\"main\" runs the frames), read from the kernel's per-thread counters.\n"
        );
        for c in cases.iter().filter(|c| c.failure.is_none()) {
            print!(
                "{}",
                c.breakdown.report(&format!("{}. {}", c.letter, c.name))
            );
        }
        match pipeline::steps_alone(&gpu, &ring[0], STEP_ROUNDS) {
            Ok(steps) => print!("{}", breakdown::steps_report(&steps)),
            Err(err) => println!("steps alone: FAILED: {err}\n"),
        }
    }
    println!("sync, as the runtime saw it:");
    for c in cases
        .iter()
        .filter(|c| c.sync.is_some() && c.failure.is_none())
    {
        println!("{bullet}{}. {}: {}", c.letter, c.name, c.sync_evidence());
    }
    for c in cases.iter().filter(|c| c.by_hand.is_some()) {
        println!(
            "{bullet}{}. {}: by hand: per frame Vulkan signals a binary semaphore OpenCL waits \
             for, and OpenCL signals one Vulkan waits for (both imported as opaque fds); the CPU \
             waits only on Vulkan's fence at the frame's end",
            c.letter, c.name
        );
    }
    if let Some(path) = &opts.svg {
        let title = format!(
            "dxcl frames: {} RGBA8, 5x5 blur, {} frames per case",
            e.name(),
            opts.frames
        );
        let notes = vec![
            format!("Direct3D 11: {}", gpu.adapter),
            format!("OpenCL: {} ({})", gpu.cl_device_name, gpu.platform_name),
            format!("measured {} by dxcl frames", today()),
        ];
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, report::svg(&rows, &title, &notes))?;
        println!("chart: {}", path.display());
    }
    if !failures.is_empty() {
        return Err(format!(
            "{} case(s) failed the check or failed to run:\n  {}",
            failures.len(),
            failures.join("\n  ")
        )
        .into());
    }
    let checked: usize = cases.iter().map(|c| c.checked).sum();
    let off: usize = cases.iter().map(|c| c.off_by_one).sum();
    let not_run: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            c.not_run
                .as_ref()
                .map(|why| format!("; {}. {}: {why}", c.letter, c.name))
        })
        .collect();
    println!(
        "dxcl frames: OK, {} cases, {checked} frames checked against the CPU blur ({off} bytes one \
         code off){}",
        cases.iter().filter(|c| c.pipeline.is_some()).count(),
        not_run.concat()
    );
    Ok(())
}

/// Case d's name in the table.
const EXPERT: &str = "vulkan+opencl by hand";

/// The pipeline's targets for c (adaptive), against a, b and d of the same run
/// (docs/benchmarks.md): a frame rate of at least 0.95× a's with CPU time per frame at most 1.3×
/// a's, at least 3× b's and at least d's. Each met or missed.
fn targets(rows: &[Row], bullet: &str) -> String {
    let summary = |letter: &str, case: Option<&str>| {
        rows.iter()
            .find(|r| r.letter == letter && case.is_none_or(|c| r.case == c))
            .and_then(|r| r.summary)
    };
    let Some(c) = summary("c", Some("dxcl sync=adaptive")) else {
        return String::new();
    };
    let verdict = |ok: bool| if ok { "met" } else { "missed" };
    let mut parts = Vec::new();
    for (letter, factor) in [("a", 0.95), ("b", 3.0), ("d", 1.0)] {
        parts.push(match summary(letter, None) {
            Some(base) => {
                let ratio = c.fps / base.fps;
                let mut part = format!(
                    "fps {ratio:.2}x {letter}'s (target >= {factor}: {})",
                    verdict(ratio >= factor)
                );
                if letter == "a" {
                    let cpu = c.process_cpu_ms / base.process_cpu_ms;
                    part.push_str(&format!(
                        "; CPU per frame {cpu:.2}x a's (target <= 1.3: {})",
                        verdict(cpu <= 1.3)
                    ));
                }
                part
            }
            None => format!("{letter} not measured"),
        });
    }
    format!(
        "{bullet}targets for c. dxcl sync=adaptive: {}\n",
        parts.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn parse(args: &[String]) -> Result<Options, String> {
        crate::parse_options(args)
    }

    #[test]
    fn options_default_and_override() {
        let o = parse(&[]).unwrap();
        assert_eq!((o.extent.width, o.extent.height), (3840, 2160));
        assert_eq!((o.frames, o.verify_every), (120, 10));
        assert_eq!(o.driver, Driver::Hardware);
        let o = parse(&args(
            "--size 64x32 --frames 5 --verify-every 2 --driver warp --svg x.svg --markdown",
        ))
        .unwrap();
        assert_eq!((o.extent.width, o.extent.height), (64, 32));
        assert_eq!((o.frames, o.verify_every, o.markdown), (5, 2, true));
        assert_eq!(o.svg, Some(PathBuf::from("x.svg")));
        for bad in [
            "--size 64",
            "--size 0x5",
            "--size 20000x2",
            "--size ax3",
            "--frames 0",
            "--frames",
            "--verify-every -1",
            "--driver null",
            "--bogus",
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn today_is_a_date() {
        let d = today();
        assert_eq!(d.len(), 10);
        assert!(
            d.starts_with("20") && &d[4..5] == "-" && &d[7..8] == "-",
            "{d}"
        );
    }
}

//! `dxcl bench`: what acquire + release of one shared object costs, against the cheapest round
//! trip the same queue can make (an empty marker + `clFinish`, "the floor"), for sizes from 4 KiB to
//! 256 MiB, with the strategy the layer picks and with the staging copy forced, in one run.
//!
//! A zero-copy strategy should stay at a constant multiple of the floor whatever the size; a copy
//! grows with it, and is measured against the platform's own copies of the same bytes (`bus`).
//! Each object is verified (data moves both ways) before it is timed, so a broken path is never
//! timed. `DXCL_TRACE=handoff` adds each hand-off case's step table from the layer (`trace`).

mod bus;
mod report;
pub(crate) mod session;
mod stats;
mod trace;

use bus::{Bus, Host};
use report::{Case, Row};
use session::{Kind, Session, Shape, Sharing};
use stats::{measure, Budget, Summary, Timed};
use std::time::Duration;

/// Measures acquire + release of one shared object against the floor (an empty marker and
/// clFinish), 4 KiB to 256 MiB, with the strategy the layer picks and with the staging copy.
#[derive(clap::Args, Debug)]
pub struct Options {
    /// Sizes in bytes, comma-separated, binary units (4096, 4K, 64M, 1G).
    #[arg(long, value_name = "4K,64K,...", value_delimiter = ',', value_parser = parse_size,
          default_value = DEFAULT_SIZES)]
    pub sizes: Vec<u64>,
    /// Which objects to share.
    #[arg(long, value_enum, default_value_t = KindChoice::Both)]
    pub kind: KindChoice,
    /// The minimum number of samples per case.
    #[arg(long = "iters", value_name = "N", default_value_t = 20, value_parser = positive)]
    pub min_samples: usize,
    /// Time per case beyond which no more samples are taken.
    #[arg(long = "budget-ms", value_name = "MS", default_value = "1000", value_parser = millis)]
    pub budget: Duration,
    /// Direct3D touches the resource before every K-th sample (0: never).
    #[arg(long, value_name = "K", default_value_t = 4)]
    pub touch_every: usize,
    /// How long the queue runs only floor markers before each clean floor sample and each idle
    /// hand-off sample (dxcl's and the platform's), in µs; 0 times them back to back.
    #[arg(long = "clean-gap-us", value_name = "US", default_value_t = CLEAN_GAP_US)]
    pub clean_gap_us: u64,
    /// After that quiet time, write this many KiB of host memory (0: none), so that the CPU's
    /// caches and TLBs hold nothing of the sample's code and data: as after a host that ran
    /// something else on the core. Both dxcl's and the platform's hand-off start cold.
    #[arg(long = "evict-kib", value_name = "KIB", default_value_t = 0)]
    pub evict_kib: usize,
    /// The step of that write in bytes: 64 writes every cache line; 4096 one line per page, which
    /// empties the TLBs while leaving most of the caches as they were.
    #[arg(long = "evict-stride", value_name = "BYTES", default_value_t = 64,
          value_parser = positive)]
    pub evict_stride: usize,
    /// Write it before the quiet time instead: the floor markers then warm again what the
    /// platform's calls share with them, and only what the hand-off alone touches stays cold.
    #[arg(long = "evict-first")]
    pub evict_first: bool,
    /// Print the results as a Markdown table.
    #[arg(long)]
    pub markdown: bool,
    /// D3D_DRIVER_TYPE_HARDWARE, or _WARP (dxcl: the software adapter).
    #[arg(long, value_enum, default_value_t = Driver::Hardware)]
    pub driver: Driver,
}

impl Options {
    /// The kinds of object `--kind` asked for.
    pub fn kinds(&self) -> Vec<Kind> {
        match self.kind {
            KindChoice::Buffer => vec![Kind::Buffer],
            KindChoice::Texture2d => vec![Kind::Texture2D],
            KindChoice::Both => vec![Kind::Buffer, Kind::Texture2D],
        }
    }
}

/// `--kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KindChoice {
    Buffer,
    Texture2d,
    Both,
}

/// `--driver`: which driver type the Direct3D device is created with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Driver {
    Hardware,
    Warp,
}

impl Driver {
    pub(crate) fn d3d(self) -> dxcl_abi::D3D_DRIVER_TYPE {
        match self {
            Driver::Hardware => dxcl_abi::D3D_DRIVER_TYPE_HARDWARE,
            Driver::Warp => dxcl_abi::D3D_DRIVER_TYPE_WARP,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Driver::Hardware => "D3D_DRIVER_TYPE_HARDWARE",
            Driver::Warp => "D3D_DRIVER_TYPE_WARP",
        }
    }
}

const DEFAULT_SIZES: &str = "4K,16K,64K,256K,1M,4M,16M,64M,256M";
const WARMUP: usize = 5;
/// Enough for stable percentiles; also bounds what a fast case costs.
const MAX_SAMPLES: usize = 10_000;
/// How long (µs) the queue runs only floor markers (no hand-off) before each clean floor sample and
/// each idle hand-off sample.
const CLEAN_GAP_US: u64 = 1000;

/// Host memory written between samples (`--evict-kib`) to push the sample's code and data out of
/// the CPU's caches.
struct Evict {
    bytes: Vec<u8>,
    stride: usize,
    pass: u8,
}

impl Evict {
    fn new(kib: usize, stride: usize) -> Evict {
        // Written, not zero-filled: untouched pages all map the one zero page, which evicts
        // nothing.
        Evict {
            bytes: vec![1; kib << 10],
            stride: stride.max(1),
            pass: 1,
        }
    }

    /// Writes the first byte of every `stride` bytes: each line (or page) is fetched, so the
    /// lines (or translations) before it leave.
    fn run(&mut self) {
        self.pass = self.pass.wrapping_add(1);
        for step in self.bytes.chunks_mut(self.stride) {
            step[0] = self.pass;
        }
        std::hint::black_box(&self.bytes);
    }
}

/// "4096", "4K", "4KiB", "64M", "1G" (binary units).
fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    let digits = upper.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit = match &upper[digits.len()..] {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return Err(format!("bad size {s:?}")),
    };
    let n: u64 = digits.parse().map_err(|_| format!("bad size {s:?}"))?;
    n.checked_mul(unit)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("bad size {s:?}"))
}

/// A count of at least 1 (`--iters`).
fn positive(s: &str) -> Result<usize, String> {
    s.parse()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{s:?} is not a count of 1 or more"))
}

/// Milliseconds (`--budget-ms`).
fn millis(s: &str) -> Result<Duration, String> {
    s.parse()
        .map(Duration::from_millis)
        .map_err(|_| format!("{s:?} is not a number of milliseconds"))
}

pub fn run(opts: &Options) -> Result<(), Box<dyn std::error::Error>> {
    let inherited = std::env::var("DXCL_STRATEGY").ok();
    let clean_gap = Duration::from_micros(opts.clean_gap_us);
    let evict = std::cell::RefCell::new(Evict::new(opts.evict_kib, opts.evict_stride));
    // The layer's own account of each decision, with its reason, on stderr.
    if std::env::var_os("DXCL_LOG").is_none() {
        std::env::set_var("DXCL_LOG", "1");
    }
    let session = Session::open(opts.driver.d3d())?;
    let tracer = trace::Tracer::find()?;
    let budget = Budget {
        warmup: WARMUP,
        min_samples: opts.min_samples,
        time: opts.budget,
        max_samples: MAX_SAMPLES.max(opts.min_samples),
    };
    let bullet = if opts.markdown { "- " } else { "  " };
    println!(
        "dxcl bench: clEnqueueAcquireD3D11ObjectsKHR + clEnqueueReleaseD3D11ObjectsKHR + clFinish \
         of one object, against the clean floor: clEnqueueMarkerWithWaitList + clFinish on the same \
         queue; each clean floor sample and each idle hand-off sample (dxcl's and the platform's) \
         follows {} µs in which the queue ran only floor markers",
        opts.clean_gap_us
    );
    println!(
        "{bullet}Direct3D 11: {} on the default adapter: {}",
        opts.driver.name(),
        session.adapter
    );
    println!(
        "{bullet}OpenCL: platform {}, device {} (the first preferred device for the D3D11 device)",
        session.platform, session.cl_device_name
    );
    println!(
        "{bullet}timing: {WARMUP} warm-up runs, then at least {} samples and more while under {} ms \
         per case (at most {}); Direct3D writes 4 bytes of the resource before every {} sample(s) \
         of dxcl's and of the platform's own hand-off (the staging rows: every sample) and \
         completes that work, outside the timed region (the other API idle)",
        budget.min_samples,
        opts.budget.as_millis(),
        budget.max_samples,
        opts.touch_every
    );
    println!(
        "{bullet}external-memory sync: {}",
        dxcl_layer::strategy::SyncMode::from_env().describe()
    );
    if tracer.is_some() {
        println!(
            "{bullet}DXCL_TRACE=handoff: the layer times each step of every hand-off, which the \
             timings here include; each hand-off case's step table follows its timed rounds on \
             stderr (take the figures from a run without it)"
        );
    }
    if opts.clean_gap_us != CLEAN_GAP_US {
        println!(
            "{bullet}note: the quiet time before each clean floor and idle hand-off sample is {} µs, \
             not {CLEAN_GAP_US} µs (--clean-gap-us)",
            opts.clean_gap_us
        );
    }
    if opts.evict_kib > 0 {
        println!(
            "{bullet}note: {} the quiet time, each of those samples follows a write of one byte \
             every {} bytes of {} KiB of host memory (--evict-kib, --evict-stride): {}",
            if opts.evict_first { "before" } else { "after" },
            opts.evict_stride,
            opts.evict_kib,
            if opts.evict_stride >= 4096 {
                "every page, so the TLBs hold none of the sample's pages"
            } else {
                "every line, so the CPU's caches and TLBs hold none of the sample's code and data"
            }
        );
    }
    if let Some(v) = inherited {
        println!("{bullet}note: DXCL_STRATEGY={v} from the environment is ignored: the bench sets it per object");
    }
    if !opts.markdown {
        println!("{}", report::text_header());
    }

    let mut rows = Vec::new();
    let mut seen: Vec<Sharing> = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    let mut verified = 0usize;
    let mut seed = 0x5EED_0000u32;
    for &size in &opts.sizes {
        for &kind in &opts.kinds() {
            let shape = Shape::for_bytes(kind, size)
                .ok_or_else(|| format!("{} of {size} bytes is too large", kind.name()))?;
            if let Some(why) = session.unsupported(&shape) {
                println!(
                    "{bullet}{} {}: skipped: {why}",
                    kind.name(),
                    report::size_name(size)
                );
                continue;
            }
            let mut emit = |case: Case, strategy: &'static str, summary: Summary, floor: f64| {
                let row = Row {
                    kind: kind.name(),
                    size,
                    extent: shape.extent(),
                    case,
                    strategy,
                    summary,
                    ratio: summary.median_us / floor,
                    verified: match case {
                        Case::Floor
                        | Case::FloorAfterHandOff
                        | Case::PlatformHandOff
                        | Case::FloorAfterPlatformHandOff
                        | Case::PlatformHandOffEvent => "-",
                        Case::Default
                        | Case::Staging
                        | Case::PinnedCopies
                        | Case::PageableCopies => "ok",
                    },
                };
                if !opts.markdown {
                    println!("{}", report::text_row(&row));
                }
                rows.push(row);
            };
            let mut floor_us = None;
            for (case, force_staging) in [(Case::Default, false), (Case::Staging, true)] {
                let shared = session.share(shape, force_staging)?;
                seed = seed.wrapping_add(1);
                let verdict = shared.verify(seed);
                if let Err(e) = &verdict {
                    // Not timed: a path that loses data has no cost worth reporting.
                    let what = format!(
                        "{} {} {}",
                        kind.name(),
                        report::size_name(size),
                        case.name()
                    );
                    println!("{bullet}{what}: verification FAILED: {e}");
                    failures.push(format!("{what}: {e}"));
                } else {
                    verified += 1;
                    if !seen.contains(&shared.sharing) {
                        seen.push(shared.sharing);
                    }
                }
                // Staging: Direct3D writes before every sample, so each acquire copies the
                // subresource in (after a release with no Direct3D access since, the layer
                // copies nothing: the memory object already holds the bytes).
                let every = if case == Case::Staging {
                    1
                } else {
                    opts.touch_every
                };
                // The default strategy's hand-off is the idle one, after the quiet gap (in the
                // timed rounds and in the trace's pass); the staging copy's follows its own.
                let handoff_gap_us = if case == Case::Default {
                    opts.clean_gap_us
                } else {
                    0
                };
                // The floors are timed in rounds with the default strategy: all are small, and
                // drift on a shared machine must not tilt their ratio. Before each clean floor
                // sample and each idle hand-off sample (dxcl's and the platform's) the queue runs
                // only floor markers for `clean_gap`: all three then start from the same state,
                // with no hand-off on the queue just before. The floor right after a hand-off is
                // its own row. The staging copy is timed on its own, so that its copies do not
                // evict the caches the others run from.
                let quiet = {
                    let (session, evict) = (&session, &evict);
                    let first = opts.evict_first;
                    move || -> Result<(), Box<dyn std::error::Error>> {
                        if first {
                            evict.borrow_mut().run();
                        }
                        // Busy with floor markers, not asleep: a queue woken from idle would
                        // add its wake-up to the sample.
                        let start = std::time::Instant::now();
                        while start.elapsed() < clean_gap {
                            session.floor()?;
                        }
                        if !first {
                            evict.borrow_mut().run();
                        }
                        Ok(())
                    }
                };
                let shared_ref = &shared;
                let timed = || {
                    Timed::<Box<dyn std::error::Error>>::new(move || {
                        Ok(shared_ref.acquire_release()?)
                    })
                    .with_between(move |i| {
                        if handoff_gap_us > 0 {
                            quiet()?;
                        }
                        if every > 0 && i % every == 0 {
                            shared_ref.touch(i as u32)?;
                        }
                        Ok(())
                    })
                };
                let clean_floor = || {
                    Timed::<Box<dyn std::error::Error>>::new(|| Ok(session.floor()?))
                        .with_between(move |_| quiet())
                };
                // The platform's own hand-off of the imported object, in the same rounds.
                let platform = verdict
                    .is_ok()
                    .then(|| shared.platform_hand_off(false))
                    .flatten();
                let platform_event = verdict
                    .is_ok()
                    .then(|| shared.platform_hand_off(true))
                    .flatten();
                // Staging's baseline, once per size (with the first kind), in the same rounds.
                let bus = match (case, verdict.is_ok()) {
                    (Case::Staging, true) if opts.kinds().first() == Some(&kind) => {
                        seed = seed.wrapping_add(1);
                        let bus = Bus::new(&session, size as usize)?;
                        let checked = bus
                            .verify(Host::Pinned, seed)
                            .and_then(|()| bus.verify(Host::Pageable, !seed));
                        match checked {
                            Ok(()) => Some(bus),
                            Err(e) => {
                                let what = format!("bus copies {}", report::size_name(size));
                                println!("{bullet}{what}: verification FAILED: {e}");
                                failures.push(format!("{what}: {e}"));
                                None
                            }
                        }
                    }
                    _ => None,
                };
                let mut cases = match (floor_us, verdict.is_ok()) {
                    (None, true) => vec![
                        clean_floor(),
                        timed(),
                        Timed::<Box<dyn std::error::Error>>::new(|| Ok(session.floor()?)),
                    ],
                    (None, false) => vec![clean_floor()],
                    (Some(_), true) => vec![timed()],
                    (Some(_), false) => vec![],
                };
                // The platform's own hand-offs have the same history as dxcl's: the quiet gap,
                // then Direct3D's write before the same samples, so that the floors after the
                // hand-offs follow the same work of both APIs.
                let history = move |i: usize| -> Result<(), Box<dyn std::error::Error>> {
                    quiet()?;
                    if every > 0 && i.is_multiple_of(every) {
                        shared_ref.touch(i as u32)?;
                    }
                    Ok(())
                };
                if let Some(f) = &platform {
                    cases.push(
                        Timed::<Box<dyn std::error::Error>>::new(move || Ok(f()?))
                            .with_between(history),
                    );
                    cases.push(Timed::<Box<dyn std::error::Error>>::new(|| {
                        Ok(session.floor()?)
                    }));
                }
                if let Some(f) = &platform_event {
                    cases.push(
                        Timed::<Box<dyn std::error::Error>>::new(move || Ok(f()?))
                            .with_between(history),
                    );
                }
                if let Some(b) = &bus {
                    for host in [Host::Pinned, Host::Pageable] {
                        cases.push(Timed::<Box<dyn std::error::Error>>::new(move || {
                            Ok(b.copies(host)?)
                        }));
                    }
                }
                let floor_us_was_none = floor_us.is_none() && verdict.is_ok();
                let mut summaries = measure(&budget, &mut cases)?.into_iter();
                drop(cases);
                let floor = match floor_us {
                    Some(f) => f,
                    None => {
                        let f = summaries.next().ok_or("the floor was not timed")?;
                        emit(Case::Floor, "-", f, f.median_us);
                        f.median_us
                    }
                };
                floor_us = Some(floor);
                if let Some(summary) = summaries.next() {
                    emit(case, shared.sharing.name(), summary, floor);
                }
                if floor_us_was_none {
                    if let Some(after) = summaries.next() {
                        emit(Case::FloorAfterHandOff, "-", after, floor);
                    }
                }
                if platform.is_some() {
                    if let Some(own) = summaries.next() {
                        emit(Case::PlatformHandOff, shared.sharing.name(), own, floor);
                    }
                    if let Some(after) = summaries.next() {
                        emit(Case::FloorAfterPlatformHandOff, "-", after, floor);
                    }
                }
                if platform_event.is_some() {
                    if let Some(own) = summaries.next() {
                        emit(
                            Case::PlatformHandOffEvent,
                            shared.sharing.name(),
                            own,
                            floor,
                        );
                    }
                }
                if bus.is_some() {
                    for c in [Case::PinnedCopies, Case::PageableCopies] {
                        if let Some(s) = summaries.next() {
                            emit(c, "-", s, floor);
                        }
                    }
                }
                drop(bus);
                if let (Some(t), true) = (&tracer, verdict.is_ok()) {
                    let title = format!(
                        "{} {} {} ({})",
                        kind.name(),
                        report::size_name(size),
                        case.name(),
                        shared.sharing.name()
                    );
                    let mut touch = |i: usize| -> Result<bool, Box<dyn std::error::Error>> {
                        let now = every > 0 && i.is_multiple_of(every);
                        if now {
                            shared.touch(i as u32)?;
                        }
                        Ok(now)
                    };
                    // The default case's floor after each hand-off, as in its timed rounds.
                    let mut floor =
                        || -> Result<(), Box<dyn std::error::Error>> { Ok(session.floor()?) };
                    t.pass(
                        &title,
                        || Ok(shared.acquire_release()?),
                        quiet,
                        handoff_gap_us,
                        &mut touch,
                        (case == Case::Default).then_some(&mut floor as &mut dyn FnMut() -> _),
                    )?;
                }
                // `shared` drops here: at most one object of each size lives at a time.
            }
        }
    }
    if opts.markdown {
        println!();
        print!("{}", report::markdown(&rows));
        println!();
    }
    let bus = report::bus_lines(&rows);
    if !bus.is_empty() {
        println!(
            "staging against the bus (same run): the staging hand-off's median over the \
             platform's own two copies of the same bytes, clEnqueueWriteBuffer + \
             clEnqueueReadBuffer + clFinish (GB/s: both copies' bytes over the median):"
        );
        for l in bus {
            println!("{bullet}{l}");
        }
        let direct = dxcl_d3d::com::interop::host_copies();
        println!(
            "how the staging rows' bytes left Direct3D: {}",
            if direct > 0 {
                format!(
                    "the runtime copied them straight into the layer's shadow \
                     (IDxclInteropResource::CopyToHost, {direct} calls)"
                )
            } else {
                "through a Direct3D staging resource, mapped and copied into the layer's shadow \
                 (the runtime could not reach the shadow)"
                    .to_string()
            }
        );
    }
    let targets = report::target_lines(&rows);
    if !targets.is_empty() {
        println!(
            "targets per kind and size (docs/benchmarks.md): the floor after dxcl's hand-off \
             against the floor after the platform's own (p90), dxcl's idle hand-off against the \
             platform's own (median), staging against the platform's pinned copies (median):"
        );
        for l in targets {
            println!("{bullet}{l}");
        }
    }
    println!(
        "strategies, as the memory objects show them (DXCL_LOG=1 has the layer print its \
         reasons on stderr):"
    );
    for s in &seen {
        println!("{bullet}{}: {}", s.name(), s.evidence());
    }
    if opts.kinds().contains(&Kind::Buffer) && failures.is_empty() {
        stall_report(&session, &opts.sizes, bullet)?;
    }
    if !failures.is_empty() {
        return Err(format!(
            "{} object(s) failed verification:\n  {}",
            failures.len(),
            failures.join("\n  ")
        )
        .into());
    }
    println!("dxcl bench: OK, {verified} shared objects verified both ways");
    Ok(())
}

/// Rounds and queued commands per side of the CPU-blocking measurement.
const STALL_ROUNDS: usize = 30;
const STALL_COMMANDS: usize = 4;

/// How long acquire and release keep the CPU waiting while the other API has work queued, for
/// the largest buffer of the run with the default strategy: what GPU-side synchronisation buys.
fn stall_report(
    session: &Session,
    sizes: &[u64],
    bullet: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let Some(&size) = sizes.iter().max() else {
        return Ok(());
    };
    let shape = Shape::for_bytes(Kind::Buffer, size).ok_or("buffer size")?;
    let shared = session.share(shape, false)?;
    let s = shared.stall(STALL_COMMANDS, STALL_ROUNDS)?;
    println!(
        "CPU blocked, {} buffer, {} (medians of {STALL_ROUNDS} rounds):",
        report::size_name(size),
        shared.sharing.name()
    );
    println!(
        "{bullet}acquire, right after Direct3D queued {STALL_COMMANDS} copies of the buffer \
         ({:.1} µs of work): {:.1} µs",
        s.d3d_work_us, s.acquire_blocked_us
    );
    println!(
        "{bullet}release, while OpenCL runs {STALL_COMMANDS} fills of the buffer ({:.1} µs of \
         work): {:.1} µs; then the next Direct3D call on it (a copy, and Flush): {:.1} µs",
        s.cl_work_us, s.release_blocked_us, s.next_d3d_blocked_us
    );
    Ok(())
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
    fn sizes_parse_with_binary_units() {
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4kib"), Ok(4096));
        assert_eq!(parse_size("256M"), Ok(256 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("0").is_err());
        assert!(parse_size("4X").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("99999999999999G").is_err());
    }

    /// Every pass writes a new value into the first byte of each step, and only there.
    #[test]
    fn eviction_writes_every_line() {
        for stride in [64, 256] {
            let mut e = Evict::new(1, stride);
            assert_eq!(e.bytes.len(), 1024);
            for pass in [2u8, 3] {
                e.run();
                for (i, step) in e.bytes.chunks(stride).enumerate() {
                    assert_eq!((i, step[0]), (i, pass));
                    assert!(step[1..].iter().all(|&b| b == 1));
                }
            }
        }
        Evict::new(0, 64).run();
    }

    #[test]
    fn options_default_and_override() {
        let o = parse(&[]).unwrap();
        assert_eq!(o.sizes.len(), 9);
        assert_eq!((o.sizes[0], o.sizes[8]), (4 << 10, 256 << 20));
        assert_eq!(o.kinds(), vec![Kind::Buffer, Kind::Texture2D]);
        assert_eq!(o.min_samples, 20);
        let o = parse(&args("--sizes 4K,1M --iters 3 --kind texture2d --markdown")).unwrap();
        assert_eq!(o.sizes, vec![4096, 1 << 20]);
        assert_eq!((o.min_samples, o.markdown), (3, true));
        assert_eq!(o.kinds(), vec![Kind::Texture2D]);
        assert_eq!(o.driver, Driver::Hardware);
        assert_eq!(o.clean_gap_us, CLEAN_GAP_US);
        assert_eq!(parse(&args("--clean-gap-us 0")).unwrap().clean_gap_us, 0);
        assert!(parse(&args("--clean-gap-us -1")).is_err());
        assert_eq!(o.evict_kib, 0);
        assert_eq!(parse(&args("--evict-kib 16384")).unwrap().evict_kib, 16384);
        assert_eq!(o.evict_stride, 64);
        assert!(parse(&args("--evict-stride 0")).is_err());
        assert!(!o.evict_first);
        assert!(parse(&args("--evict-first")).unwrap().evict_first);
        assert_eq!(parse(&args("--driver warp")).unwrap().driver, Driver::Warp);
        assert!(parse(&args("--driver null")).is_err());
        assert!(parse(&args("--iters 0")).is_err());
        assert!(parse(&args("--kind image")).is_err());
        assert!(parse(&args("--sizes")).is_err());
        assert!(parse(&args("--bogus")).is_err());
    }
}

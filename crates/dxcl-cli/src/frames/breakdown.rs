//! `dxcl frames --breakdown`: where a case's frame time goes. Each pipeline marks the end of each
//! of its steps ([`Marks`]); per timed frame the wall time of every step is kept, with whether a
//! checked (read-back) frame came just before, and the CPU time each thread of the process spent
//! during the frame (Linux's per-task `schedstat`, read outside the frame's timed span). The report
//! gives each step's median, p90, p99 and maximum, the slowest frames step by step, and the CPU
//! time per frame by thread name: the frame's own thread, the platform's and the layer's.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Instant;

/// The end of each step of one frame, as the pipeline marks them.
pub struct Marks {
    last: Instant,
    steps: Vec<(&'static str, f64)>,
}

impl Marks {
    pub fn start() -> Marks {
        Marks {
            last: Instant::now(),
            steps: Vec::with_capacity(8),
        }
    }

    /// Ends step `name`: its time is from the previous mark (or the start) to now.
    pub fn mark(&mut self, name: &'static str) {
        let now = Instant::now();
        self.steps
            .push((name, now.duration_since(self.last).as_secs_f64() * 1e3));
        self.last = now;
    }
}

/// CPU nanoseconds run so far by each thread of this process, by thread id, with its name.
pub fn threads_cpu() -> BTreeMap<u32, (String, u64)> {
    let mut out = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for task in tasks.flatten() {
        let Some(tid) = task.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let path = task.path();
        // schedstat: time on the CPU (ns), time waiting to run, timeslices.
        let ran = std::fs::read_to_string(path.join("schedstat"))
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok());
        let name = std::fs::read_to_string(path.join("comm")).unwrap_or_default();
        if let Some(ran) = ran {
            out.insert(tid, (name.trim().to_string(), ran));
        }
    }
    out
}

/// One timed frame.
struct Frame {
    total_ms: f64,
    steps: Vec<(&'static str, f64)>,
    after_check: bool,
}

/// A case's timed frames, step by step, and its threads' CPU time.
#[derive(Default)]
pub struct Breakdown {
    frames: Vec<Frame>,
    /// CPU ms by thread name ("main" for the frames' own thread) over the timed frames.
    cpu_ms: BTreeMap<String, f64>,
}

impl Breakdown {
    /// Records a timed frame: its marks, and the thread CPU times before and after it.
    pub fn record(
        &mut self,
        marks: Marks,
        total_ms: f64,
        after_check: bool,
        before: &BTreeMap<u32, (String, u64)>,
        after: &BTreeMap<u32, (String, u64)>,
    ) {
        self.frames.push(Frame {
            total_ms,
            steps: marks.steps,
            after_check,
        });
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() } as u32;
        for (tid, (name, ns)) in after {
            let was = before.get(tid).map_or(0, |(_, b)| *b);
            let name = if *tid == me { "main" } else { name.as_str() };
            *self.cpu_ms.entry(name.to_string()).or_default() +=
                ns.saturating_sub(was) as f64 / 1e6;
        }
    }

    /// The report of case `name`, in Markdown.
    pub fn report(&self, name: &str) -> String {
        let mut out = String::new();
        let n = self.frames.len();
        if n == 0 {
            return out;
        }
        let _ = writeln!(out, "#### {name}: {n} timed frames\n");
        let _ = writeln!(out, "| step | median ms | p90 ms | p99 ms | max ms |");
        let _ = writeln!(out, "| --- | ---: | ---: | ---: | ---: |");
        let mut order: Vec<&'static str> = Vec::new();
        for f in &self.frames {
            for (s, _) in &f.steps {
                if !order.contains(s) {
                    order.push(s);
                }
            }
        }
        let column = |pick: &dyn Fn(&Frame) -> Option<f64>| {
            let mut v: Vec<f64> = self.frames.iter().filter_map(pick).collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let row = |out: &mut String, label: &str, v: &[f64]| {
            if v.is_empty() {
                return;
            }
            let q = |p: f64| super::report::quantile(v, p);
            let _ = writeln!(
                out,
                "| {label} | {:.3} | {:.3} | {:.3} | {:.3} |",
                q(0.5),
                q(0.9),
                q(0.99),
                v[v.len() - 1]
            );
        };
        for step in &order {
            let v = column(&|f: &Frame| {
                f.steps
                    .iter()
                    .filter(|(s, _)| s == step)
                    .map(|(_, ms)| *ms)
                    .reduce(|a, b| a + b)
            });
            row(&mut out, step, &v);
        }
        row(
            &mut out,
            "whole frame",
            &column(&|f: &Frame| Some(f.total_ms)),
        );
        let checked = self.frames.iter().filter(|f| f.after_check).count();
        if checked > 0 && checked < n {
            let after = column(&|f: &Frame| f.after_check.then_some(f.total_ms));
            let other = column(&|f: &Frame| (!f.after_check).then_some(f.total_ms));
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let _ = writeln!(
                out,
                "\nFrames right after a checked frame: {checked}, mean {:.3} ms; the others mean \
                 {:.3} ms.",
                mean(&after),
                mean(&other)
            );
        }
        let mut slow: Vec<&Frame> = self.frames.iter().collect();
        slow.sort_by(|a, b| b.total_ms.total_cmp(&a.total_ms));
        let _ = writeln!(out, "\nSlowest frames:\n");
        for f in slow.iter().take(4) {
            let steps: Vec<String> = f
                .steps
                .iter()
                .map(|(s, ms)| format!("{s} {ms:.3}"))
                .collect();
            let _ = writeln!(
                out,
                "- {:.3} ms{}: {}",
                f.total_ms,
                if f.after_check {
                    " (after a checked frame)"
                } else {
                    ""
                },
                steps.join(", ")
            );
        }
        let mut cpu: Vec<(&String, &f64)> =
            self.cpu_ms.iter().filter(|(_, ms)| **ms > 0.0).collect();
        cpu.sort_by(|a, b| b.1.total_cmp(a.1));
        let total: f64 = cpu.iter().map(|(_, ms)| **ms).sum();
        let _ = writeln!(
            out,
            "\nCPU ms per frame by thread (all threads {:.3}):\n",
            total / n as f64
        );
        for (name, ms) in cpu.iter().take(8) {
            let _ = writeln!(out, "- {name}: {:.3}", **ms / n as f64);
        }
        out.push('\n');
        out
    }
}

/// Each step of the frame alone (`pipeline::steps_alone`): its median, p10 and p90, in Markdown.
pub fn steps_report(steps: &[(&'static str, Vec<f64>)]) -> String {
    let mut out = String::new();
    let n = steps.first().map_or(0, |(_, v)| v.len());
    let _ = writeln!(
        out,
        "#### Each step alone ({n} rounds each, the devices idle before each; a Direct3D step \
         ends with the frame's 1-texel copy and Map)\n"
    );
    let _ = writeln!(out, "| step | median ms | p10 ms | p90 ms |");
    let _ = writeln!(out, "| --- | ---: | ---: | ---: |");
    for (name, ms) in steps {
        let mut v = ms.clone();
        v.sort_by(f64::total_cmp);
        if v.is_empty() {
            continue;
        }
        let q = |p: f64| super::report::quantile(&v, p);
        let _ = writeln!(
            out,
            "| {name} | {:.3} | {:.3} | {:.3} |",
            q(0.5),
            q(0.1),
            q(0.9)
        );
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_partition_the_frame_and_report_names_each_step() {
        let mut b = Breakdown::default();
        let before = threads_cpu();
        assert!(!before.is_empty(), "this thread is in /proc/self/task");
        for i in 0..5 {
            let mut m = Marks::start();
            std::thread::sleep(std::time::Duration::from_millis(1));
            m.mark("first");
            m.mark("second");
            let total: f64 = m.steps.iter().map(|(_, ms)| ms).sum();
            assert!(m.steps[0].1 >= 1.0, "{:?}", m.steps);
            b.record(m, total, i == 2, &before, &threads_cpu());
        }
        let r = b.report("x");
        for want in [
            "| first |",
            "| second |",
            "| whole frame |",
            "after a checked frame",
            "- main:",
        ] {
            assert!(r.contains(want), "{want} missing from\n{r}");
        }
    }
}

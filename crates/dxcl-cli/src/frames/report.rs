//! The frame benchmark's results: per case a summary, as text, Markdown and an SVG chart.

/// The `q`-quantile (0..=1) of sorted values, interpolating linearly between neighbours.
pub(super) fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// One case's timed frames.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    /// Wall time of each frame, in milliseconds.
    pub frame_ms: Vec<f64>,
    /// CPU time of the whole process during the timed frames, in milliseconds.
    pub process_cpu_ms: f64,
    /// CPU time of the thread running the frames, in milliseconds.
    pub thread_cpu_ms: f64,
}

/// What a row shows of a case's samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub frames: usize,
    /// Frames per second over the timed frames: frames divided by their summed wall time.
    pub fps: f64,
    pub median_ms: f64,
    pub p99_ms: f64,
    /// Mean CPU time per frame, whole process and the frames' own thread.
    pub process_cpu_ms: f64,
    pub thread_cpu_ms: f64,
}

impl Summary {
    pub fn of(s: &Samples) -> Option<Summary> {
        if s.frame_ms.is_empty() {
            return None;
        }
        let mut ms = s.frame_ms.clone();
        ms.sort_by(f64::total_cmp);
        let n = ms.len() as f64;
        let total: f64 = ms.iter().sum();
        Some(Summary {
            frames: ms.len(),
            fps: n * 1e3 / total,
            median_ms: quantile(&ms, 0.5),
            p99_ms: quantile(&ms, 0.99),
            process_cpu_ms: s.process_cpu_ms / n,
            thread_cpu_ms: s.thread_cpu_ms / n,
        })
    }
}

/// One line of the table.
pub struct Row {
    /// "a", "b", "c", "d".
    pub letter: &'static str,
    /// The case's name ("opencl-only", "host-round-trip", "dxcl sync=gpu", ...).
    pub case: String,
    /// How the textures or images are shared ("-" where nothing is shared).
    pub strategy: String,
    /// The synchronisation really used ("-" where nothing is shared).
    pub sync: String,
    /// `None` for a case that did not run or failed: then `verified` says why.
    pub summary: Option<Summary>,
    /// "ok (N frames)", "not run: why" or "FAILED: why".
    pub verified: String,
}

const HEADER: [&str; 11] = [
    "case",
    "strategy",
    "sync used",
    "frames",
    "fps",
    "median ms",
    "p99 ms",
    "CPU ms/frame",
    "thread CPU ms/frame",
    "× a (median)",
    "verified",
];
const NUMERIC: [bool; 11] = [
    false, false, false, true, true, true, true, true, true, true, false,
];

fn cells(r: &Row, baseline_ms: Option<f64>) -> [String; 11] {
    let numbers = match &r.summary {
        Some(s) => [
            s.frames.to_string(),
            format!("{:.1}", s.fps),
            format!("{:.2}", s.median_ms),
            format!("{:.2}", s.p99_ms),
            format!("{:.2}", s.process_cpu_ms),
            format!("{:.2}", s.thread_cpu_ms),
            baseline_ms.map_or("-".to_string(), |b| format!("{:.2}", s.median_ms / b)),
        ],
        None => std::array::from_fn(|_| "-".to_string()),
    };
    let [frames, fps, median, p99, cpu, thread, ratio] = numbers;
    [
        format!("{}. {}", r.letter, r.case),
        r.strategy.clone(),
        r.sync.clone(),
        frames,
        fps,
        median,
        p99,
        cpu,
        thread,
        ratio,
        r.verified.clone(),
    ]
}

/// The whole table as aligned text; `baseline_ms` is case a's median (when a ran).
pub fn text(rows: &[Row], baseline_ms: Option<f64>) -> String {
    let all: Vec<[String; 11]> = std::iter::once(HEADER.map(String::from))
        .chain(rows.iter().map(|r| cells(r, baseline_ms)))
        .collect();
    let widths: Vec<usize> = (0..11)
        .map(|i| all.iter().map(|c| c[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for line in &all {
        let mut l = String::new();
        for (i, c) in line.iter().enumerate() {
            let pad = widths[i] - c.chars().count();
            if NUMERIC[i] {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            }
            l.push_str("  ");
        }
        out.push_str(l.trim_end());
        out.push('\n');
    }
    out
}

/// The whole table in Markdown (a `|` inside a cell becomes `/`).
pub fn markdown(rows: &[Row], baseline_ms: Option<f64>) -> String {
    let mut out = format!("| {} |\n", HEADER.join(" | "));
    let rule: Vec<&str> = NUMERIC
        .iter()
        .map(|&n| if n { "---:" } else { "---" })
        .collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for r in rows {
        let cells = cells(r, baseline_ms).map(|c| c.replace('|', "/"));
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

/// Escapes text for SVG.
fn xml(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A step for axis ticks: 1, 2 or 5 times a power of ten, about `span / 6`.
fn tick_step(span: f64) -> f64 {
    let raw = (span / 6.0).max(f64::MIN_POSITIVE);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * p)
}

/// A horizontal bar chart: per case, the median frame time (bar) with its p99 (whisker), and the
/// process's CPU time per frame (thin bar below it). `title` and `notes` head and foot it.
pub fn svg(rows: &[Row], title: &str, notes: &[String]) -> String {
    const W: f64 = 820.0;
    const LEFT: f64 = 230.0;
    // Room for the labels after the longest whisker.
    const RIGHT: f64 = 200.0;
    const TOP: f64 = 78.0;
    const ROW: f64 = 54.0;
    let plot_w = W - LEFT - RIGHT;
    let max = rows
        .iter()
        .filter_map(|r| r.summary.as_ref())
        .flat_map(|s| [s.p99_ms, s.process_cpu_ms, s.median_ms])
        .fold(0.0f64, f64::max)
        .max(1e-3);
    let step = tick_step(max);
    let axis_max = (max / step).ceil() * step;
    let x = |v: f64| LEFT + plot_w * v / axis_max;
    let plot_h = ROW * rows.len() as f64;
    let h = TOP + plot_h + 44.0 + 16.0 * notes.len() as f64;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{h}\" \
         viewBox=\"0 0 {W} {h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"12\" y=\"22\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
        xml(title)
    );
    // Legend.
    s.push_str(&format!(
        "<rect x=\"{LEFT}\" y=\"36\" width=\"14\" height=\"10\" fill=\"#4878a8\"/>\
         <text x=\"{}\" y=\"45\">median frame time (ms), whisker: p99</text>\n\
         <rect x=\"{}\" y=\"39\" width=\"14\" height=\"5\" fill=\"#d08038\"/>\
         <text x=\"{}\" y=\"45\">CPU time per frame, whole process (ms)</text>\n",
        LEFT + 18.0,
        LEFT + 290.0,
        LEFT + 308.0
    ));
    // Grid and ticks.
    let mut t = 0.0;
    while t <= axis_max + step * 1e-9 {
        let gx = x(t);
        s.push_str(&format!(
            "<line x1=\"{gx:.1}\" y1=\"{TOP}\" x2=\"{gx:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{gx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n",
            TOP + plot_h,
            TOP + plot_h + 16.0,
            trim_number(t)
        ));
        t += step;
    }
    s.push_str(&format!(
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#555\">milliseconds per frame</text>\n",
        LEFT + plot_w / 2.0,
        TOP + plot_h + 34.0
    ));
    for (i, r) in rows.iter().enumerate() {
        let y = TOP + ROW * i as f64 + 8.0;
        let label = format!("{}. {}", r.letter, r.case);
        let Some(m) = &r.summary else {
            // No bars: the row says why, in red, over at most two lines.
            s.push_str(&format!(
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-weight=\"bold\">{}</text>\n",
                LEFT - 8.0,
                y + 12.0,
                xml(&label)
            ));
            for (k, line) in wrap(&r.verified, 95, 2).iter().enumerate() {
                s.push_str(&format!(
                    "<text x=\"{LEFT}\" y=\"{:.1}\" fill=\"#b02020\" font-size=\"11\" \
                     font-weight=\"bold\">{}</text>\n",
                    y + 12.0 + 14.0 * k as f64,
                    xml(line)
                ));
            }
            continue;
        };
        let sub = if r.strategy == "-" {
            format!("{:.1} fps", m.fps)
        } else {
            format!("{:.1} fps, {}, sync {}", m.fps, r.strategy, r.sync)
        };
        s.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" font-weight=\"bold\">{}</text>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#555\" font-size=\"10\">{}</text>\n",
            LEFT - 8.0,
            y + 12.0,
            xml(&label),
            LEFT - 8.0,
            y + 26.0,
            xml(&sub)
        ));
        s.push_str(&format!(
            "<rect x=\"{LEFT}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"20\" fill=\"#4878a8\"/>\n\
             <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#223\" stroke-width=\"1.5\"/>\
             <line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#223\" stroke-width=\"1.5\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#223\" font-size=\"11\">median {:.1}, p99 {:.1}</text>\n\
             <rect x=\"{LEFT}\" y=\"{:.1}\" width=\"{:.1}\" height=\"8\" fill=\"#d08038\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"#8a4a10\" font-size=\"10\">CPU {:.1}</text>\n",
            (x(m.median_ms) - LEFT).max(0.5),
            x(m.median_ms),
            y + 10.0,
            x(m.p99_ms),
            y + 10.0,
            x(m.p99_ms),
            y + 4.0,
            x(m.p99_ms),
            y + 16.0,
            x(m.p99_ms) + 4.0,
            y + 14.0,
            m.median_ms,
            m.p99_ms,
            y + 23.0,
            (x(m.process_cpu_ms) - LEFT).max(0.5),
            x(m.process_cpu_ms).max(LEFT) + 4.0,
            y + 30.0,
            m.process_cpu_ms,
        ));
    }
    for (i, n) in notes.iter().enumerate() {
        s.push_str(&format!(
            "<text x=\"12\" y=\"{:.1}\" fill=\"#444\" font-size=\"11\">{}</text>\n",
            TOP + plot_h + 56.0 + 16.0 * i as f64,
            xml(n)
        ));
    }
    s.push_str("</svg>\n");
    s
}

/// `text` in lines of at most `width` characters, broken at spaces, at most `lines` of them (the
/// last ending in "…" when text is left over).
fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push(line);
    }
    if out.len() > lines {
        out.truncate(lines);
        let last = &mut out[lines - 1];
        let keep: String = last.chars().take(width.saturating_sub(1)).collect();
        *last = format!("{keep}…");
    }
    out
}

/// "0.5", "2", "1500" for axis labels.
fn trim_number(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(letter: &'static str, median: f64) -> Row {
        Row {
            letter,
            case: "opencl-only".into(),
            strategy: "-".into(),
            sync: "-".into(),
            summary: Some(Summary {
                frames: 10,
                fps: 1e3 / median,
                median_ms: median,
                p99_ms: median * 1.5,
                process_cpu_ms: 1.0,
                thread_cpu_ms: 0.5,
            }),
            verified: "ok (2 frames)".into(),
        }
    }

    #[test]
    fn summary_of_frames() {
        let s = Summary::of(&Samples {
            frame_ms: (1..=100).map(f64::from).collect(),
            process_cpu_ms: 200.0,
            thread_cpu_ms: 100.0,
        })
        .unwrap();
        assert_eq!(s.frames, 100);
        assert!((s.median_ms - 50.5).abs() < 1e-9);
        assert!((s.p99_ms - 99.01).abs() < 1e-9);
        assert!((s.fps - 100.0 * 1e3 / 5050.0).abs() < 1e-9);
        assert_eq!((s.process_cpu_ms, s.thread_cpu_ms), (2.0, 1.0));
        assert!(Summary::of(&Samples::default()).is_none());
    }

    #[test]
    fn tables_have_equal_columns() {
        let rows = [row("a", 2.0), row("b", 5.0)];
        let md = markdown(&rows, Some(2.0));
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines.iter().all(|l| l.matches('|').count() == 12), "{md}");
        assert!(lines[3].contains("| 5.00 | 7.50 | 1.00 | 0.50 | 2.50 | ok (2 frames) |"));
        let t = text(&rows, Some(2.0));
        assert_eq!(t.lines().count(), 3);
        assert!(t.lines().nth(1).unwrap().starts_with("a. opencl-only"));
    }

    #[test]
    fn svg_is_one_document_with_a_bar_per_case() {
        let s = svg(&[row("a", 2.0), row("c", 3.0)], "t <&>", &["n".into()]);
        assert!(s.starts_with("<svg ") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("t &lt;&amp;&gt;"));
        assert_eq!(s.matches("fill=\"#4878a8\"/>").count(), 3, "{s}"); // legend + 2 bars
        assert!((tick_step(7.0) - 2.0).abs() < 1e-12);
        assert!((tick_step(0.3) - 0.05).abs() < 1e-12);
        assert_eq!(trim_number(1.5), "1.5");
        assert_eq!(trim_number(20.0), "20");
    }

    fn not_run() -> Row {
        Row {
            letter: "d",
            case: "expert".into(),
            strategy: "-".into(),
            sync: "-".into(),
            summary: None,
            verified: "not run: the device lacks x | y".into(),
        }
    }

    #[test]
    fn a_case_that_did_not_run_keeps_its_row_and_says_why() {
        let rows = [row("a", 2.0), not_run()];
        let md = markdown(&rows, Some(2.0));
        let last = md.lines().last().unwrap();
        assert_eq!(
            last,
            "| d. expert | - | - | - | - | - | - | - | - | - | not run: the device lacks x / y |"
        );
        assert!(text(&rows, None)
            .lines()
            .nth(1)
            .unwrap()
            .ends_with("ok (2 frames)"));
        let s = svg(&rows, "t", &[]);
        assert!(s.contains("not run: the device lacks x | y"), "{s}");
        assert_eq!(s.matches("fill=\"#4878a8\"/>").count(), 2, "{s}"); // legend + a's bar
        assert_eq!(wrap("aa bb cc", 5, 2), ["aa bb", "cc"]);
        assert_eq!(wrap("aa bb cc dd ee", 5, 2), ["aa bb", "cc d…"]);
        assert!(wrap("", 5, 2).is_empty());
    }
}

//! The bench's rows, as aligned text or as a Markdown table.

use super::stats::Summary;

/// Which timed operation a row is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// `clEnqueueMarkerWithWaitList` + `clFinish` with no hand-off on the queue in the
    /// millisecond before: the clean floor, which every ratio divides by.
    Floor,
    /// The same marker + `clFinish` right after a hand-off of the default strategy: what the
    /// queue costs while the hand-off's aftermath (a semaphore signal on NVIDIA) is still
    /// settling. Shown for comparison, never used as a baseline.
    FloorAfterHandOff,
    /// Acquire + release + `clFinish` with the strategy the layer picks.
    Default,
    /// The same with `DXCL_STRATEGY=staging` at creation.
    Staging,
    /// The platform's own external-memory acquire + release + `clFinish` on the object the
    /// layer imported, called directly (no dxcl, no ordering with Direct3D): the least any
    /// hand-off of imported memory costs. Only where the default strategy is external memory.
    PlatformHandOff,
    /// The floor's marker + `clFinish` right after the platform's own hand-off: whether what
    /// [`Case::FloorAfterHandOff`] shows after dxcl's is the platform's too.
    FloorAfterPlatformHandOff,
    /// The platform's own hand-off whose release also returns its event, released after the
    /// `clFinish`: the least a hand-off that orders Direct3D after the release costs, since
    /// knowing when the release completes takes its event.
    PlatformHandOffEvent,
    /// The bytes of a staging hand-off copied by the platform alone: `clEnqueueWriteBuffer` from
    /// pinned host memory (a mapped `CL_MEM_ALLOC_HOST_PTR` buffer) into a device buffer,
    /// `clEnqueueReadBuffer` back, `clFinish` (bench/bus.rs). Staging's baseline.
    PinnedCopies,
    /// The same two copies from pageable host memory (a plain allocation), for contrast.
    PageableCopies,
}

impl Case {
    pub fn name(self) -> &'static str {
        match self {
            Case::Floor => "floor",
            Case::FloorAfterHandOff => "floor-after-handoff",
            Case::Default => "default",
            Case::Staging => "staging",
            Case::PlatformHandOff => "platform-handoff",
            Case::FloorAfterPlatformHandOff => "floor-after-platform-handoff",
            Case::PlatformHandOffEvent => "platform-handoff-event",
            Case::PinnedCopies => "pinned-copies",
            Case::PageableCopies => "pageable-copies",
        }
    }
}

/// One line of the table.
pub struct Row {
    pub kind: &'static str,
    /// The size asked for, in bytes.
    pub size: u64,
    /// Texture extent ("8192x8192"), empty for buffers and the floor.
    pub extent: String,
    pub case: Case,
    /// The strategy's name; "-" for the floor.
    pub strategy: &'static str,
    pub summary: Summary,
    /// Median over the same size's clean floor median.
    pub ratio: f64,
    /// "ok", or "-" for the floor (nothing to verify).
    pub verified: &'static str,
}

/// "4 KiB", "256 MiB", "1.5 MiB", "100 B".
pub fn size_name(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            return if (bytes / unit) * unit == bytes {
                format!("{} {name}", bytes / unit)
            } else {
                format!("{:.1} {name}", bytes as f64 / unit as f64)
            };
        }
    }
    format!("{bytes} B")
}

const HEADER: [&str; 11] = [
    "kind",
    "size",
    "extent",
    "case",
    "strategy",
    "n",
    "median µs",
    "p10 µs",
    "p90 µs",
    "× floor",
    "verified",
];

fn cells(r: &Row) -> [String; 11] {
    [
        r.kind.to_string(),
        size_name(r.size),
        if r.extent.is_empty() {
            "-".into()
        } else {
            r.extent.clone()
        },
        r.case.name().into(),
        r.strategy.into(),
        r.summary.samples.to_string(),
        format!("{:.1}", r.summary.median_us),
        format!("{:.1}", r.summary.p10_us),
        format!("{:.1}", r.summary.p90_us),
        format!("{:.2}", r.ratio),
        r.verified.into(),
    ]
}

/// Numbers are right-aligned in the text table.
const NUMERIC: [bool; 11] = [
    false, true, false, false, false, true, true, true, true, true, false,
];

/// The header line of the text table, then one call of `text_row` per row.
pub fn text_header() -> String {
    text_line(&HEADER.map(String::from))
}

pub fn text_row(r: &Row) -> String {
    text_line(&cells(r))
}

fn text_line(cells: &[String; 11]) -> String {
    const WIDTHS: [usize; 11] = [9, 8, 9, 28, 12, 6, 11, 10, 10, 8, 8];
    let mut out = String::new();
    for (i, c) in cells.iter().enumerate() {
        let w = WIDTHS[i];
        if NUMERIC[i] {
            out.push_str(&format!("{c:>w$}  "));
        } else {
            out.push_str(&format!("{c:<w$}  "));
        }
    }
    out.trim_end().to_string()
}

/// Per staging row, its median against the same size's copies from pinned and pageable memory.
pub fn bus_lines(rows: &[Row]) -> Vec<String> {
    let gbps = |r: &Row| 2.0 * r.size as f64 / (r.summary.median_us * 1e3);
    let of = |case: Case, size: u64| rows.iter().find(|r| r.case == case && r.size == size);
    rows.iter()
        .filter(|r| r.case == Case::Staging)
        .filter_map(|s| {
            let pinned = of(Case::PinnedCopies, s.size)?;
            let mut line = format!(
                "{} {}: staging {:.1} µs ({:.2} GB/s) = {:.2}× the pinned copies' {:.1} µs \
                 ({:.2} GB/s)",
                s.kind,
                size_name(s.size),
                s.summary.median_us,
                gbps(s),
                s.summary.median_us / pinned.summary.median_us,
                pinned.summary.median_us,
                gbps(pinned)
            );
            if let Some(p) = of(Case::PageableCopies, s.size) {
                line.push_str(&format!(
                    ", {:.2}× the pageable copies' {:.1} µs ({:.2} GB/s)",
                    s.summary.median_us / p.summary.median_us,
                    p.summary.median_us,
                    gbps(p)
                ));
            }
            Some(line)
        })
        .collect()
}

/// The hand-off's targets (docs/benchmarks.md), per kind and size, each with its figure and
/// whether it is met:
/// - the floor right after dxcl's hand-off: p90 at most 1.2× the p90 of the floor after the
///   platform's own hand-off (what dxcl leaves running costs the next command nothing);
/// - the idle hand-off: dxcl's median at most 2 µs above the platform's own;
/// - staging: from 4 KiB to 1 MiB at most 3× the platform's two pinned copies of the same bytes;
///   256 MiB at most 1.25× three pinned copies (the crossings a staging hand-off makes), i.e.
///   1.875× the two. Other sizes have no staging target.
///
/// A line per kind and size that has any of them; a last line counts the verdicts.
pub fn target_lines(rows: &[Row]) -> Vec<String> {
    let verdict = |ok: bool| if ok { "met" } else { "missed" };
    let of = |case: Case, kind: &str, size: u64| {
        rows.iter()
            .find(|r| r.case == case && r.kind == kind && r.size == size)
            .map(|r| r.summary)
    };
    let pinned = |size: u64| {
        rows.iter()
            .find(|r| r.case == Case::PinnedCopies && r.size == size)
            .map(|r| r.summary)
    };
    let (mut met, mut all) = (0usize, 0usize);
    let mut lines = Vec::new();
    let mut groups: Vec<(&str, u64)> = Vec::new();
    for r in rows {
        if !groups.contains(&(r.kind, r.size)) {
            groups.push((r.kind, r.size));
        }
    }
    for (kind, size) in groups {
        let mut parts = Vec::new();
        let mut judge = |ok: bool| {
            all += 1;
            met += usize::from(ok);
            verdict(ok)
        };
        if let (Some(after), Some(own)) = (
            of(Case::FloorAfterHandOff, kind, size),
            of(Case::FloorAfterPlatformHandOff, kind, size),
        ) {
            let ratio = after.p90_us / own.p90_us;
            parts.push(format!(
                "floor after the hand-off p90 {:.1} µs = {ratio:.2}× after the platform's own ({:.1} µs; target <= 1.2: {})",
                after.p90_us,
                own.p90_us,
                judge(ratio <= 1.2)
            ));
        }
        if let (Some(dxcl), Some(own)) = (
            of(Case::Default, kind, size),
            of(Case::PlatformHandOff, kind, size),
        ) {
            let over = dxcl.median_us - own.median_us;
            parts.push(format!(
                "hand-off median {over:+.1} µs over the platform's own ({:.1} against {:.1} µs; \
                 target <= 2 µs: {})",
                dxcl.median_us,
                own.median_us,
                judge(over <= 2.0)
            ));
            if let Some(with_event) = of(Case::PlatformHandOffEvent, kind, size) {
                parts.push(format!(
                    "the platform's own with the release's event {:+.1} µs over it, dxcl's \
                     {:+.1} µs over that",
                    with_event.median_us - own.median_us,
                    dxcl.median_us - with_event.median_us
                ));
            }
        }
        if let (Some(staging), Some(copies)) = (of(Case::Staging, kind, size), pinned(size)) {
            let ratio = staging.median_us / copies.median_us;
            let target = if (4 << 10..=1 << 20).contains(&size) {
                Some(("3× the two pinned copies", 3.0))
            } else if size == 256 << 20 {
                Some(("1.25× three pinned copies = 1.875× the two", 1.875))
            } else {
                None
            };
            parts.push(match target {
                Some((what, limit)) => format!(
                    "staging {ratio:.2}× the pinned copies (target <= {what}: {})",
                    judge(ratio <= limit)
                ),
                None => format!("staging {ratio:.2}× the pinned copies (no target)"),
            });
        }
        if !parts.is_empty() {
            lines.push(format!("{kind} {}: {}", size_name(size), parts.join("; ")));
        }
    }
    if all > 0 {
        lines.push(format!("{met} of {all} targets met"));
    }
    lines
}

/// The whole table in Markdown.
pub fn markdown(rows: &[Row]) -> String {
    let mut out = format!("| {} |\n", HEADER.join(" | "));
    let rule: Vec<&str> = NUMERIC
        .iter()
        .map(|&n| if n { "---:" } else { "---" })
        .collect();
    out.push_str(&format!("| {} |\n", rule.join(" | ")));
    for r in rows {
        out.push_str(&format!("| {} |\n", cells(r).join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(case: Case) -> Row {
        Row {
            kind: "buffer",
            size: 4096,
            extent: String::new(),
            case,
            strategy: "host-pointer",
            summary: Summary {
                samples: 20,
                median_us: 12.34,
                p10_us: 10.0,
                p90_us: 20.0,
            },
            ratio: 1.5,
            verified: "ok",
        }
    }

    #[test]
    fn sizes_read_naturally() {
        assert_eq!(size_name(4096), "4 KiB");
        assert_eq!(size_name(256 << 20), "256 MiB");
        assert_eq!(size_name(1536 << 10), "1.5 MiB");
        assert_eq!(size_name(100), "100 B");
    }

    #[test]
    fn markdown_has_one_line_per_row_and_equal_columns() {
        let md = markdown(&[row(Case::Floor), row(Case::Default)]);
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(lines.len(), 4);
        let pipes = |l: &str| l.matches('|').count();
        assert!(lines.iter().all(|l| pipes(l) == 12), "{md}");
        assert!(
            lines[3].contains("| default | host-pointer | 20 | 12.3 | 10.0 | 20.0 | 1.50 | ok |")
        );
        assert!(text_row(&row(Case::Staging)).starts_with("buffer"));
    }

    #[test]
    fn targets_are_judged_per_kind_and_size() {
        let with = |case: Case, kind: &'static str, size: u64, median: f64, p90: f64| {
            let mut r = row(case);
            r.kind = kind;
            r.size = size;
            r.summary.median_us = median;
            r.summary.p90_us = p90;
            r
        };
        let rows = [
            with(Case::Default, "buffer", 4096, 5.0, 9.0),
            with(Case::FloorAfterHandOff, "buffer", 4096, 6.0, 158.0),
            with(Case::PlatformHandOff, "buffer", 4096, 2.5, 3.0),
            with(Case::FloorAfterPlatformHandOff, "buffer", 4096, 6.0, 7.0),
            with(Case::PlatformHandOffEvent, "buffer", 4096, 2.75, 3.5),
            with(Case::Staging, "buffer", 4096, 30.0, 40.0),
            with(Case::PinnedCopies, "buffer", 4096, 12.0, 13.0),
            with(Case::Default, "texture2d", 4096, 9.0, 9.0),
            with(Case::PlatformHandOff, "texture2d", 4096, 2.5, 3.0),
            with(Case::Staging, "texture2d", 4096, 40.0, 40.0),
            with(Case::Staging, "buffer", 256 << 20, 18.0e3, 19.0e3),
            with(Case::PinnedCopies, "buffer", 256 << 20, 10.0e3, 10.0e3),
            with(Case::Staging, "buffer", 4 << 20, 900.0, 900.0),
            with(Case::PinnedCopies, "buffer", 4 << 20, 100.0, 100.0),
        ];
        let lines = target_lines(&rows);
        assert_eq!(lines.len(), 5, "{lines:?}");
        // 158 / 7 = 22.57; 5.0 - 2.5; 30 / 12.
        assert!(
            lines[0].starts_with("buffer 4 KiB: floor after the hand-off p90 158.0 µs = 22.57×")
        );
        assert!(lines[0].contains("target <= 1.2: missed"), "{lines:?}");
        assert!(
            lines[0].contains("+2.5 µs over the platform's own"),
            "{lines:?}"
        );
        assert!(lines[0].contains("target <= 2 µs: missed"), "{lines:?}");
        // 2.75 - 2.5; 5.0 - 2.75. Informative, not a target: still six.
        assert!(
            lines[0].contains("the platform's own with the release's event +0.2 µs over it, dxcl's +2.2 µs over that"),
            "{lines:?}"
        );
        assert!(
            !lines[1].contains("release's event"),
            "no event row, no line"
        );
        assert!(lines[0]
            .contains("staging 2.50× the pinned copies (target <= 3× the two pinned copies: met)"));
        // The texture's staging row goes against the one pinned row of its size; 9.0 - 2.5.
        assert!(
            lines[1].contains("+6.5 µs") && lines[1].contains("staging 3.33×"),
            "{lines:?}"
        );
        assert!(lines[1].ends_with("missed)"), "{lines:?}");
        // 18 / 10 = 1.8 <= 1.875: met. 4 MiB: no target.
        assert!(
            lines[2].contains("1.80×") && lines[2].ends_with("met)"),
            "{lines:?}"
        );
        assert!(lines[3].ends_with("(no target)"), "{lines:?}");
        assert_eq!(lines[4], "2 of 6 targets met");
        assert!(target_lines(&[row(Case::Floor)]).is_empty());
    }

    #[test]
    fn staging_is_set_against_the_copies_of_its_size() {
        let mut pinned = row(Case::PinnedCopies);
        pinned.summary.median_us = 4.0;
        let mut other = row(Case::PinnedCopies);
        other.size = 8192;
        other.summary.median_us = 1.0;
        let lines = bus_lines(&[row(Case::Staging), other, pinned, row(Case::Default)]);
        assert_eq!(lines.len(), 1, "{lines:?}");
        // 12.34 / 4.0; 2 × 4096 bytes in 4 µs.
        assert!(
            lines[0].starts_with("buffer 4 KiB: staging 12.3 µs"),
            "{lines:?}"
        );
        assert!(
            lines[0].contains("= 3.08× the pinned copies' 4.0 µs (2.05 GB/s)"),
            "{lines:?}"
        );
        assert!(!lines[0].contains("pageable"));
        assert!(bus_lines(&[row(Case::Staging)]).is_empty());
    }
}

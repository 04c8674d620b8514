//! `dxcl frames` end to end: the real binary, loader and layer, a small frame, few frames. Checks
//! the output's structure, the check of every case and that the check can fail; not the timings.

mod support;

use std::path::PathBuf;
use std::process::Output;

use support::{dxcl_with_layer, output, stdout_ok, temp_file};

fn frames(args: &str, env: &[(&str, &str)]) -> Output {
    output(
        dxcl_with_layer("frames")
            .args(args.split_whitespace())
            // Set on purpose: each c case must set its own.
            .env("DXCL_SYNC", "cpu")
            .env_remove("DXCL_FRAMES_FAULT")
            .envs(env.iter().copied()),
    )
}

fn svg_path(name: &str) -> PathBuf {
    temp_file("frames-test", &format!("{name}.svg"))
}

/// The Markdown table's rows, split into cells.
fn table(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .filter(|l| l.starts_with("| "))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

/// Runs the cases on `adapter` and checks the table, the ratios, the sync lines and the chart:
/// a, b and the three c cases measured and checked; d (raw Vulkan + OpenCL by hand) not run,
/// because PoCL has neither external memory nor external semaphores, with its row saying so.
fn four_cases(adapter: &str, driver: &str, strategy: &str) {
    let svg = svg_path(adapter);
    let o = frames(
        &format!(
            "--size 64x32 --frames 7 --verify-every 3 --driver {driver} --markdown --svg {}",
            svg.display()
        ),
        &[("DXCL_ADAPTER", adapter)],
    );
    let out = stdout_ok(&o);
    let chart = std::fs::read_to_string(&svg).unwrap_or_default();
    let _ = std::fs::remove_file(&svg);
    assert!(
        out.starts_with("dxcl frames: 64x32 DXGI_FORMAT_R8G8B8A8_UNORM"),
        "{out}"
    );
    assert!(out.contains("\n- OpenCL: platform ["), "{out}");
    assert!(
        out.contains("DXCL_SYNC=cpu from the environment is ignored"),
        "{out}"
    );
    let rows = table(&out);
    assert_eq!(rows.len(), 2 + 6, "{out}");
    assert_eq!(rows[0][0], "case");
    assert!(rows.iter().all(|r| r.len() == 11), "{out}");
    let cases: Vec<&str> = rows[2..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        cases,
        [
            "a. opencl-only",
            "b. host-round-trip",
            "c. dxcl sync=adaptive",
            "c. dxcl sync=gpu",
            "c. dxcl sync=cpu",
            "d. vulkan+opencl by hand"
        ]
    );
    let d = &rows[7];
    assert_eq!(&d[1..10], ["-"; 9], "{d:?}");
    assert!(
        d[10].starts_with("not run: the OpenCL device ")
            && d[10].contains("lacks cl_khr_external_memory_opaque_fd"),
        "{d:?}"
    );
    assert!(
        out.contains("\n- d. vulkan+opencl by hand: NOT RUN: the OpenCL device "),
        "{out}"
    );
    assert!(
        out.contains("\n- no ratios with d. vulkan+opencl by hand: not run: "),
        "{out}"
    );
    assert!(
        out.contains("\n- targets for c. dxcl sync=adaptive: fps ")
            && out.contains("; CPU per frame ")
            && out.contains("d not measured\n"),
        "{out}"
    );
    for r in &rows[2..7] {
        assert_eq!(r[3], "7", "{r:?}");
        let v: Vec<f64> = r[4..10]
            .iter()
            .map(|c| c.parse().expect("a number"))
            .collect();
        let (fps, median, p99) = (v[0], v[1], v[2]);
        assert!(fps > 0.0 && median > 0.0 && median <= p99, "{r:?}");
        assert!(v[3] >= 0.0 && v[4] >= 0.0 && v[5] > 0.0, "{r:?}");
        // The first frame, timed frames 0, 3 and 6.
        assert_eq!(r[10], "ok (4 frames)", "{r:?}");
        if r[0].starts_with("c.") {
            assert_eq!(r[1], strategy, "{r:?}");
            // Neither PoCL nor lavapipe + PoCL has shared semaphores.
            assert_eq!(r[2], "cpu", "{r:?}");
        } else {
            assert_eq!((&r[1][..], &r[2][..]), ("-", "-"), "{r:?}");
        }
    }
    assert_eq!(rows[2][9], "1.00");
    assert_eq!(out.matches("\n- c. dxcl sync=").count(), 6 + 3, "{out}");
    assert!(
        out.contains("- c. dxcl sync=gpu / a. opencl-only: median frame time "),
        "{out}"
    );
    assert!(out.contains("- c. dxcl sync=cpu: DXCL_SYNC=cpu: no shared semaphores"));
    assert!(out.contains("- c. dxcl sync=gpu: DXCL_SYNC=gpu: no shared semaphores"));
    assert!(out.contains("- c. dxcl sync=adaptive: DXCL_SYNC=adaptive: no shared semaphores"));
    let last = out.trim_end().lines().last().unwrap_or_default();
    assert!(
        last.starts_with("dxcl frames: OK, 5 cases, 20 frames checked")
            && last.contains("; d. vulkan+opencl by hand: not run: the OpenCL device "),
        "{out}"
    );
    assert!(chart.starts_with("<svg ") && chart.trim_end().ends_with("</svg>"));
    for case in cases {
        assert!(chart.contains(case), "{case}: {chart}");
    }
    // d's row in the chart: no bar, the reason in red.
    assert!(
        chart.contains(
            "fill=\"#b02020\" font-size=\"11\" font-weight=\"bold\">not run: the OpenCL device"
        ),
        "{chart}"
    );
    assert_eq!(
        chart.matches("fill=\"#4878a8\"/>").count(),
        1 + 5,
        "{chart}"
    );
}

#[test]
fn software_adapter_four_cases_checked_host_pointer() {
    four_cases("software", "warp", "host-pointer");
}

/// lavapipe: PoCL cannot import its opaque-fd memory, so the layer copies.
#[test]
fn vulkan_adapter_four_cases_checked() {
    let o = frames(
        "--size 64x32 --frames 1 --markdown",
        &[("DXCL_ADAPTER", "vulkan")],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    if !out.contains("backend Vulkan") {
        eprintln!("no Vulkan adapter here: skipped\n{out}");
        return;
    }
    four_cases("vulkan", "hardware", "staging-copy");
}

/// Checked frames given the previous frame's data (a pipeline that lost its upload) must fail
/// the check, in every case, with exit status 1.
#[test]
fn a_stale_frame_fails_the_check() {
    let o = frames(
        "--size 48x40 --frames 4 --verify-every 2 --driver warp --markdown",
        &[
            ("DXCL_ADAPTER", "software"),
            ("DXCL_FRAMES_FAULT", "stale-upload"),
        ],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    // d does not run on PoCL, so it cannot fail.
    assert!(
        err.contains("5 case(s) failed the check or failed to run"),
        "{err}"
    );
    for case in [
        "a. opencl-only",
        "b. host-round-trip",
        "c. dxcl sync=adaptive",
        "c. dxcl sync=gpu",
        "c. dxcl sync=cpu",
    ] {
        assert!(
            err.contains(&format!("{case}: frame ")) && err.contains("differ from the CPU blur"),
            "{case}: {err}"
        );
    }
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("dxcl frames: OK"), "{out}");
    // Each failed case keeps its row, with the error and no figures.
    let rows = table(&out);
    assert_eq!(rows.len(), 2 + 6, "{out}");
    for r in &rows[2..7] {
        assert!(r[10].starts_with("FAILED: frame "), "{r:?}");
        assert_eq!(&r[3..10], ["-"; 7], "{r:?}");
    }
    assert!(rows[7][10].starts_with("not run: "), "{out}");
}

#[test]
fn bad_arguments_are_usage_errors() {
    for args in ["--size 12", "--frames 0", "--driver null", "--x"] {
        let o = frames(args, &[]);
        assert_eq!(o.status.code(), Some(2), "{args}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("Usage: dxcl frames [OPTIONS]"));
    }
}

/// `--breakdown`: every case that ran gets its step table (the steps its pipeline marks, then
/// the whole frame), its slowest frames and its threads' CPU time, after the main table.
#[test]
fn breakdown_names_each_cases_steps() {
    let o = frames(
        "--size 48x40 --frames 6 --verify-every 3 --driver warp --markdown --breakdown",
        &[("DXCL_ADAPTER", "software")],
    );
    let out = stdout_ok(&o);
    let (_, tail) = out
        .split_once("### Where the frame time goes (--breakdown)")
        .unwrap_or_else(|| panic!("no breakdown section:\n{out}"));
    for (case, steps) in [
        (
            "a. opencl-only",
            &["upload (blocking write)", "wait (clFinish)"][..],
        ),
        ("b. host-round-trip", &["update", "wait (Map)"][..]),
        (
            "c. dxcl sync=adaptive",
            &["update", "acquire", "release", "wait (Map)"][..],
        ),
        ("c. dxcl sync=cpu", &["acquire", "onward copy"][..]),
    ] {
        let (_, section) = tail
            .split_once(&format!("#### {case}: 6 timed frames"))
            .unwrap_or_else(|| panic!("{case}: no section:\n{tail}"));
        let section = section.split("#### ").next().unwrap_or_default();
        for step in steps.iter().chain(&["whole frame"]) {
            let row = section
                .lines()
                .find(|l| l.starts_with(&format!("| {step} |")))
                .unwrap_or_else(|| panic!("{case}: no row {step}:\n{section}"));
            let v: Vec<f64> = row
                .trim_matches('|')
                .split(" | ")
                .skip(1)
                .map(|c| c.trim().parse().expect("a number"))
                .collect();
            // median <= p90 <= p99 <= max, all >= 0.
            assert!(
                v.len() == 4 && v[0] >= 0.0 && v.windows(2).all(|w| w[0] <= w[1]),
                "{row}"
            );
        }
        // Timed frames 0 and 3 are checked: 1 and 4 come right after.
        assert!(
            section.contains("Frames right after a checked frame: 2, mean "),
            "{section}"
        );
        assert!(section.contains("\nSlowest frames:\n"), "{section}");
        assert!(section.contains("- main: "), "{section}");
    }
    let (_, alone) = tail
        .split_once("#### Each step alone (20 rounds each")
        .unwrap_or_else(|| panic!("no steps-alone table:\n{tail}"));
    for step in [
        "Direct3D: 1-texel copy + Map (the frame's end wait alone)",
        "Direct3D: UpdateSubresource of the frame + wait",
        "Direct3D: CopyResource of the frame + wait",
        "OpenCL: clFinish alone",
        "OpenCL: the blur + clFinish",
        "OpenCL: clEnqueueCopyImage of the frame + clFinish",
    ] {
        assert!(alone.contains(&format!("| {step} | ")), "{step}:\n{alone}");
    }
}

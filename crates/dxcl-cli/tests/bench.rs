//! `dxcl bench` end to end: the real binary, the real loader and layer, two small sizes, few
//! samples. Checks the output's structure and that every object was verified, not the timings.

mod support;

use std::process::Output;

use support::{dxcl_with_layer, output, stdout_ok as stdout};

fn dxcl(args: &str) -> Output {
    dxcl_with(args, &[])
}

fn dxcl_with(args: &str, env: &[(&str, &str)]) -> Output {
    output(
        dxcl_with_layer(args)
            // Set on purpose: the bench must choose the strategy per object, not inherit it.
            .env("DXCL_STRATEGY", "staging")
            .envs(env.iter().copied()),
    )
}

/// The table's rows: lines that start with a kind.
fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| l.starts_with("buffer ") || l.starts_with("texture2d "))
        .map(|l| {
            // "4 KiB" is one cell: join a number with its unit.
            let words: Vec<&str> = l.split_whitespace().collect();
            let mut cells = vec![words[0].to_string(), format!("{} {}", words[1], words[2])];
            cells.extend(words[3..].iter().map(|w| w.to_string()));
            cells
        })
        .collect()
}

#[test]
fn text_table_has_four_rows_per_kind_and_size_two_floors_two_verified_and_the_bus() {
    let o = dxcl("bench --sizes 4K,64K --iters 3 --budget-ms 20 --kind both");
    let out = stdout(&o);
    assert!(
        out.contains("\n  Direct3D 11: D3D_DRIVER_TYPE_HARDWARE"),
        "{out}"
    );
    assert!(out.contains("\n  OpenCL: platform ["), "{out}");
    assert!(
        out.contains("DXCL_STRATEGY=staging from the environment is ignored"),
        "{out}"
    );
    let header = out
        .lines()
        .find(|l| l.starts_with("kind"))
        .expect("header line");
    for column in [
        "case",
        "strategy",
        "median µs",
        "p10 µs",
        "p90 µs",
        "× floor",
        "verified",
    ] {
        assert!(header.contains(column), "{header}");
    }

    let rows = rows(&out);
    assert_eq!(rows.len(), 20, "{out}");
    // The first kind of each size has staging's baseline, the bus copies, after its staging row.
    let with_bus = [
        "floor",
        "default",
        "floor-after-handoff",
        "staging",
        "pinned-copies",
        "pageable-copies",
    ];
    let expected_order = [
        ("buffer", "4 KiB", "-", &with_bus[..]),
        ("texture2d", "4 KiB", "32x32", &with_bus[..4]),
        ("buffer", "64 KiB", "-", &with_bus[..]),
        ("texture2d", "64 KiB", "128x128", &with_bus[..4]),
    ];
    let mut rest = &rows[..];
    for (kind, size, extent, cases) in expected_order {
        let (group, after) = rest.split_at(cases.len());
        rest = after;
        for (row, &case) in group.iter().zip(cases) {
            assert_eq!(row.len(), 11, "{row:?}");
            assert_eq!(
                (&row[0][..], &row[1][..], &row[2][..], &row[3][..]),
                (kind, size, extent, case)
            );
            let n: usize = row[5].parse().expect("sample count");
            assert!(n >= 3, "{row:?}");
            let v: Vec<f64> = row[6..10]
                .iter()
                .map(|c| c.parse().expect("a number"))
                .collect();
            let (median, p10, p90, ratio) = (v[0], v[1], v[2], v[3]);
            assert!(p10 > 0.0 && p10 <= median && median <= p90, "{row:?}");
            assert!(ratio > 0.0, "{row:?}");
            match case {
                "floor" => assert_eq!((&row[4][..], &row[9][..], &row[10][..]), ("-", "1.00", "-")),
                // Divided by the clean floor, like every other row.
                "floor-after-handoff" => assert_eq!((&row[4][..], &row[10][..]), ("-", "-")),
                "pinned-copies" | "pageable-copies" => {
                    assert_eq!((&row[4][..], &row[10][..]), ("-", "ok"))
                }
                "default" => {
                    assert!(
                        ["host-pointer", "staging-copy"].contains(&&row[4][..]),
                        "{row:?}"
                    );
                    assert_eq!(row[10], "ok");
                }
                _ => assert_eq!((&row[4][..], &row[10][..]), ("staging-copy", "ok")),
            }
        }
    }
    // Each staging row against the bus copies of its size (the buffer's, for both kinds).
    let bus: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("staging against the bus (same run)"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(bus.len(), 4, "{out}");
    // dxcl's runtime reaches the layer's shadow: no staging resource on the way.
    assert!(
        out.contains("how the staging rows' bytes left Direct3D: the runtime copied them straight"),
        "{out}"
    );
    for (line, kind_size) in bus.iter().zip([
        "buffer 4 KiB",
        "texture2d 4 KiB",
        "buffer 64 KiB",
        "texture2d 64 KiB",
    ]) {
        assert!(
            line.starts_with(&format!("  {kind_size}: staging ")),
            "{line}"
        );
        assert!(line.contains("× the pinned copies' "), "{line}");
        assert!(line.contains("× the pageable copies' "), "{line}");
    }
    // The CPU-blocking section: the largest buffer, both calls, numbers that parse.
    let blocked: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("CPU blocked, 64 KiB buffer, "))
        .take(3)
        .collect();
    assert_eq!(blocked.len(), 3, "{out}");
    // Every figure of both lines parses and is positive: acquire (work, blocked), release (work,
    // blocked) and the next Direct3D call (blocked).
    for (line, (call, figures)) in blocked[1..]
        .iter()
        .zip([("  acquire, ", 2), ("  release, ", 3)])
    {
        assert!(line.starts_with(call), "{out}");
        let values: Vec<f64> = line
            .split(" µs")
            .filter_map(|part| part.rsplit([' ', '(']).next()?.parse().ok())
            .collect();
        assert_eq!(values.len(), figures, "{line}");
        assert!(values.iter().all(|&v| v > 0.0), "{line}");
    }
    // The strategies section explains each strategy seen; the layer's log gives its reasons.
    let strategies: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("strategies"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert!(
        strategies.contains(&"  staging-copy: the CL object has memory of its own (copies)"),
        "{out}"
    );
    let default = &rows[1][4];
    assert!(
        strategies
            .iter()
            .any(|l| l.starts_with(&format!("  {default}: "))),
        "{out}"
    );
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(
        log.lines().any(|l| l.starts_with("dxcl-layer: ")
            && l.contains("staging-copy (forced by DXCL_STRATEGY=staging)")),
        "{log}"
    );
    assert!(
        log.lines().any(|l| l.starts_with("dxcl-layer: ")
            && l.contains(&format!("{default} ("))
            && !l.contains("forced")),
        "{log}"
    );
    assert!(
        out.trim_end()
            .ends_with("dxcl bench: OK, 8 shared objects verified both ways"),
        "{out}"
    );
}

#[test]
fn markdown_table_is_pasteable() {
    let out = stdout(&dxcl(
        "bench --sizes 4K,16K --iters 2 --budget-ms 10 --kind buffer --markdown",
    ));
    assert!(out.contains("\n- Direct3D 11: "), "{out}");
    let table: Vec<&str> = out.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(table.len(), 2 + 12, "{out}");
    assert!(table[0].starts_with("| kind | size | extent | case | strategy |"));
    assert!(table[1].starts_with("| --- | ---: |"));
    assert!(table.iter().all(|l| l.matches('|').count() == 12), "{out}");
    assert!(table[2].starts_with("| buffer | 4 KiB | - | floor | - |"));
    assert!(table[4].starts_with("| buffer | 4 KiB | - | floor-after-handoff | - |"));
    assert!(table[6].starts_with("| buffer | 4 KiB | - | pinned-copies | - |"));
    assert!(table[7].starts_with("| buffer | 4 KiB | - | pageable-copies | - |"));
    assert!(table[11].starts_with("| buffer | 16 KiB | - | staging | staging-copy |"));
    assert!(table[11].ends_with("| ok |"));
    // No trace unless asked for.
    assert!(!out.contains("DXCL_TRACE"), "{out}");
    assert!(out.contains("dxcl bench: OK, 4 shared objects verified both ways"));
}

/// `DXCL_TRACE=handoff`: each hand-off case's step table from the layer, on stderr, with the
/// entry points' calls counted.
#[test]
fn the_trace_gives_each_hand_off_case_its_steps() {
    let o = dxcl_with(
        "bench --sizes 4K --iters 2 --budget-ms 10 --kind buffer --markdown",
        &[("DXCL_TRACE", "handoff")],
    );
    let out = stdout(&o);
    assert!(
        out.contains("\n- DXCL_TRACE=handoff: the layer times"),
        "{out}"
    );
    let log = String::from_utf8_lossy(&o.stderr);
    let sections: Vec<&str> = log.split("\n### Hand-off trace: ").skip(1).collect();
    assert_eq!(sections.len(), 2, "{log}");
    for (section, case) in sections.iter().zip([
        "buffer 4 KiB default (",
        "buffer 4 KiB staging (staging-copy)",
    ]) {
        assert!(section.starts_with(case), "{section}");
        // Each pass's hand-offs are the table's acquire calls.
        let passes: usize = section
            .lines()
            .find_map(|l| {
                l.split(" hand-offs (acquire")
                    .next()
                    .filter(|_| l.contains(" hand-offs ("))
            })
            .and_then(|n| n.parse().ok())
            .expect("the pass's hand-off count");
        assert!(passes >= 5, "{section}");
        let acquire_calls: usize = section
            .lines()
            .find(|l| l.starts_with("| acquire entry point (its own code) | dxcl layer | "))
            .and_then(|l| l.split('|').nth(3))
            .and_then(|c| c.trim().parse().ok())
            .expect("the acquire row");
        assert_eq!(acquire_calls, passes, "{section}");
        assert!(section.contains("| clFinish | platform | "), "{section}");
        assert!(section.contains("; per hand-off "), "{section}");
    }
}

/// WARP is dxcl's software adapter: host memory, so the default strategy is the host pointer.
#[test]
fn warp_shares_host_memory_without_copies() {
    // DXCL_ADAPTER=vulkan (as some test runs set) would hide the software adapter.
    let out = stdout(&dxcl_with(
        "bench --sizes 4K --iters 2 --budget-ms 10 --kind both --driver warp",
        &[("DXCL_ADAPTER", "software")],
    ));
    assert!(
        out.contains("Direct3D 11: D3D_DRIVER_TYPE_WARP on the default adapter: "),
        "{out}"
    );
    let rows = rows(&out);
    assert_eq!(rows.len(), 10, "{out}");
    // The buffer's staging row is followed by the bus copies (no strategy).
    let strategies = ["-", "host-pointer", "-", "staging-copy", "-", "-"];
    for (row, strategy) in rows.iter().zip(strategies.iter().chain(&strategies[..4])) {
        assert_eq!(&row[4], strategy, "{row:?}");
    }
    assert!(out.contains("  host-pointer: CL_MEM_HOST_PTR is the resource's own memory"));
}

#[test]
fn bad_arguments_are_usage_errors() {
    for args in [
        "bench --kind image",
        "bench --iters 0",
        "bench --sizes 4Q",
        "bench --driver null",
        "bench --x",
    ] {
        let o = dxcl(args);
        assert_eq!(o.status.code(), Some(2), "{args}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("Usage: dxcl bench [OPTIONS]"));
    }
}

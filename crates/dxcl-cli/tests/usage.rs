//! The command line itself: `--help` for every command, `--version`, and usage errors that name
//! the option and exit with status 2, before any OpenCL or Direct3D work.

mod support;

use std::process::Output;

fn dxcl(args: &[&str]) -> Output {
    support::output(support::dxcl("").args(args))
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn every_command_has_help_with_its_options() {
    for (command, options) in [
        ("info", &[][..]),
        ("demo", &["--size", "--out", "--kernel", "--d3d"][..]),
        (
            "bench",
            &[
                "--sizes",
                "--iters",
                "--kind",
                "--budget-ms",
                "--touch-every",
                "--evict-kib",
                "--evict-first",
                "--driver",
                "--markdown",
            ][..],
        ),
        (
            "frames",
            &[
                "--size",
                "--frames",
                "--verify-every",
                "--driver",
                "--svg",
                "--markdown",
            ][..],
        ),
    ] {
        let o = dxcl(&[command, "--help"]);
        let t = text(&o);
        assert!(o.status.success(), "dxcl {command} --help: {t}");
        assert!(t.contains(&format!("dxcl {command}")), "{t}");
        for option in options {
            assert!(
                t.contains(option),
                "dxcl {command} --help lacks {option}: {t}"
            );
        }
    }
    let o = dxcl(&["--help"]);
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    for command in ["info", "demo", "bench", "frames"] {
        assert!(t.contains(command), "dxcl --help lacks {command}: {t}");
    }
}

#[test]
fn version_is_the_crates() {
    let o = dxcl(&["--version"]);
    assert!(o.status.success(), "{}", text(&o));
    let version = format!("dxcl {}", env!("CARGO_PKG_VERSION"));
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), version);
    // A command's own --version names it: `dxcl-bench 0.1.0`.
    let o = dxcl(&["bench", "--version"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.trim().starts_with("dxcl"), "{out}");
    assert!(out.trim().ends_with(env!("CARGO_PKG_VERSION")), "{out}");
}

#[test]
fn usage_errors_name_the_option_and_exit_2() {
    for (args, names) in [
        (&[][..], "Usage"),
        (&["unknown"][..], "unknown"),
        (&["demo", "--size", "0"][..], "--size"),
        (&["demo", "--kernel", "fast"][..], "in-place"),
        (&["demo", "--d3d", "wine"][..], "dxvk"),
        (&["bench", "--iters", "0"][..], "--iters"),
        (&["bench", "--sizes", "4X"][..], "--sizes"),
        (&["frames", "--size", "64"][..], "--size"),
        (&["frames", "--bogus"][..], "--bogus"),
    ] {
        let o = dxcl(args);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "dxcl {args:?}: {t}");
        assert!(
            t.contains(names),
            "dxcl {args:?} does not name {names}: {t}"
        );
    }
}

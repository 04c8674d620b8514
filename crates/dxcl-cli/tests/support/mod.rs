//! What the CLI's tests share: the `dxcl` binary cargo built, run with the layer cargo built
//! beside it (the binary finds it there, as an installed one finds lib/), and its output.

// Each test binary uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `dxcl` binary under test.
pub fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_dxcl"))
}

/// `dxcl` with `args` (split at spaces), for runs that touch no OpenCL platform.
pub fn dxcl(args: &str) -> Command {
    let mut cmd = Command::new(exe());
    cmd.args(args.split_whitespace());
    cmd
}

/// [`dxcl`] for runs through the layer: the layer must have been built (`cargo test` builds
/// only its rlib), or the loader would run without it and the tests would test nothing.
pub fn dxcl_with_layer(args: &str) -> Command {
    let layer = exe().with_file_name("libdxcl_layer.so");
    assert!(
        std::env::var_os("OPENCL_LAYERS").is_some() || layer.exists(),
        "{} is missing: build the layer first (cargo build -p dxcl-layer)",
        layer.display()
    );
    dxcl(args)
}

/// Runs `cmd` to its end.
pub fn output(cmd: &mut Command) -> Output {
    cmd.output().expect("dxcl runs")
}

/// The standard output of a run that must have succeeded (else both outputs, in the failure).
pub fn stdout_ok(o: &Output) -> String {
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "dxcl failed ({}):\n{text}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

/// A file name in the temporary directory, unique to this test process: `dxcl-{what}-{pid}-{name}`.
pub fn temp_file(what: &str, name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("dxcl-{what}-{}-{name}", std::process::id()))
}

//! `dxcl`: the command line of the dxcl project.
//!
//! - `dxcl info`: OpenCL platforms and devices, Direct3D adapters (dxcl's, and DXVK-native's when
//!   `DXCL_DXVK_LIB` names its DXGI library), which extensions the layer adds where, and which
//!   sharing strategy each (adapter, device) pairing gets.
//! - `dxcl demo [--size N] [--out FILE] [--kernel auto|in-place|two-textures] [--d3d dxcl|dxvk]`: the main job on
//!   the embedded default.
//! - `dxcl bench [...]`: acquire + release against the floor, 4 KiB to 256 MiB, default strategy
//!   and staging copy (`docs/benchmarks.md`).
//! - `dxcl frames [...]`: the frame pipeline (Direct3D update, OpenCL blur, Direct3D copy) through
//!   dxcl against OpenCL alone and against the manual host round trip (`docs/benchmarks.md`).

mod bench;
mod cl;
mod d3d;
mod demo;
mod dxvk;
mod frames;
mod info;
mod sharing;

use std::path::PathBuf;
use std::process::ExitCode;

fn usage() -> String {
    format!(
        "usage: dxcl info\n       dxcl demo [--size N] [--out FILE.png] [--kernel auto|in-place|two-textures] [--d3d dxcl|dxvk]\n       {}\n       {}",
        bench::USAGE,
        frames::USAGE
    )
}

/// Points the loader at the layer installed beside this program, unless the user chose one.
/// Must run before the first OpenCL call: the loader reads `OPENCL_LAYERS` once, at start-up.
fn ensure_layer() {
    if std::env::var_os("OPENCL_LAYERS").is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let Some(dir) = exe.parent() else { return };
    // Installed layout (bin/dxcl, lib/libdxcl_layer.so), then cargo's (target/<profile>/).
    for candidate in [
        dir.join("../lib/libdxcl_layer.so"),
        dir.join("libdxcl_layer.so"),
    ] {
        if let Ok(path) = candidate.canonicalize() {
            std::env::set_var("OPENCL_LAYERS", path);
            return;
        }
    }
}

fn parse_demo(args: &[String]) -> Result<demo::Options, String> {
    let mut opts = demo::Options {
        size: 512,
        out: PathBuf::from("dxcl-demo.png"),
        kernel: demo::KernelChoice::Auto,
        d3d: demo::D3dChoice::Dxcl,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--size" => {
                let v = it.next().ok_or("--size needs a value")?;
                opts.size = v.parse().map_err(|_| format!("bad size {v}"))?;
                if !(1..=8192).contains(&opts.size) {
                    return Err("--size must be 1..=8192".into());
                }
            }
            "--out" => opts.out = PathBuf::from(it.next().ok_or("--out needs a value")?),
            "--kernel" => {
                let v = it.next().ok_or("--kernel needs a value")?;
                opts.kernel = demo::KernelChoice::parse(v)
                    .ok_or_else(|| format!("--kernel: auto, in-place or two-textures, not {v}"))?;
            }
            "--d3d" => {
                let v = it.next().ok_or("--d3d needs a value")?;
                opts.d3d = demo::D3dChoice::parse(v)
                    .ok_or_else(|| format!("--d3d: dxcl or dxvk, not {v}"))?;
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(opts)
}

fn main() -> ExitCode {
    ensure_layer();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("info") => info::run(),
        Some("demo") => match parse_demo(&args[1..]) {
            Ok(opts) => demo::run(&opts),
            Err(e) => {
                eprintln!("dxcl: {e}\n{}", usage());
                return ExitCode::from(2);
            }
        },
        Some("bench") => match bench::parse(&args[1..]) {
            Ok(opts) => bench::run(&opts),
            Err(e) => {
                eprintln!("dxcl: {e}\n{}", usage());
                return ExitCode::from(2);
            }
        },
        Some("frames") => match frames::parse(&args[1..]) {
            Ok(opts) => frames::run(&opts),
            Err(e) => {
                eprintln!("dxcl: {e}\n{}", usage());
                return ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("{}", usage());
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dxcl: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn demo_runs_on_dxcl_unless_told_dxvk() {
        assert_eq!(parse_demo(&[]).unwrap().d3d, demo::D3dChoice::Dxcl);
        let o = parse_demo(&args(&["--d3d", "dxvk", "--size", "64"])).unwrap();
        assert_eq!((o.d3d, o.size), (demo::D3dChoice::Dxvk, 64));
        assert!(parse_demo(&args(&["--d3d", "wine"])).is_err());
        assert!(parse_demo(&args(&["--d3d"])).is_err());
    }
}

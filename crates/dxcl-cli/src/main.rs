//! `dxcl`: the command line of the dxcl project (`dxcl --help`, `dxcl COMMAND --help`).
//!
//! - `dxcl info`: OpenCL platforms and devices, Direct3D adapters (dxcl's, and DXVK-native's when
//!   `DXCL_DXVK_LIB` names its DXGI library), which extensions the layer adds where, and which
//!   sharing strategy each (adapter, device) pairing gets.
//! - `dxcl demo`: the main job on the embedded default.
//! - `dxcl bench`: acquire + release against the floor, 4 KiB to 256 MiB, default strategy
//!   and staging copy (`docs/benchmarks.md`).
//! - `dxcl frames`: the frame pipeline (Direct3D update, OpenCL blur, Direct3D copy) through
//!   dxcl against OpenCL alone and against the manual host round trip (`docs/benchmarks.md`).
//! - `dxcl wine install|uninstall|run|env|info`: the Wine bridge in a Wine prefix (`docs/wine.md`).
//!
//! A command is one variant of [`Command`] and one module: its options (a `clap::Args` struct,
//! or a `clap::Subcommand` enum for a group of commands) and its `run`.

mod bench;
mod cl;
mod d3d;
mod demo;
mod dxvk;
mod frames;
mod info;
mod sharing;
mod wine;

use std::error::Error;
use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue};
use clap::{CommandFactory, Parser, Subcommand};

/// OpenCL's Direct3D 10/11 sharing on Linux: what is installed, a demo, and benchmarks.
#[derive(Parser, Debug)]
#[command(name = "dxcl", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// OpenCL platforms and devices, Direct3D adapters, which extensions the layer adds where,
    /// and which sharing strategy each (adapter, device) pairing gets.
    Info,
    Demo(demo::Options),
    Bench(bench::Options),
    Frames(frames::Options),
    /// dxcl's Wine bridge: the sharing extensions for Windows programs under Wine (docs/wine.md).
    Wine(wine::Wine),
}

impl Command {
    fn run(self) -> Result<(), Box<dyn Error>> {
        match self {
            Command::Info => info::run(),
            Command::Demo(opts) => demo::run(&opts),
            Command::Bench(opts) => bench::run(&opts),
            Command::Frames(opts) => frames::run(&opts),
            Command::Wine(w) => w.run(),
        }
    }
}

/// A command's options from its arguments (for the commands' tests).
#[cfg(test)]
fn parse_options<T: clap::Args>(args: &[String]) -> Result<T, String> {
    #[derive(Parser)]
    struct One<T: clap::Args> {
        #[command(flatten)]
        options: T,
    }
    One::<T>::try_parse_from(std::iter::once("dxcl").chain(args.iter().map(String::as_str)))
        .map(|one| one.options)
        .map_err(|e| e.to_string())
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

/// The command line, or exit: --help and --version with status 0, a usage error with status 2 and
/// the usage of the command it concerns (clap shows it for some errors only).
fn parse() -> Cli {
    Cli::try_parse().unwrap_or_else(|mut e| {
        if e.use_stderr() && e.get(ContextKind::Usage).is_none() {
            let mut cmd = Cli::command();
            cmd.build();
            let sub = std::env::args().nth(1);
            let usage = match sub.and_then(|name| cmd.find_subcommand_mut(&name)) {
                Some(sub) => sub.render_usage(),
                None => cmd.render_usage(),
            };
            e.insert(ContextKind::Usage, ContextValue::StyledStr(usage));
        }
        e.exit()
    })
}

fn main() -> ExitCode {
    let cli = parse();
    ensure_layer();
    match cli.command.run() {
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

    fn parse_demo(a: &[String]) -> Result<demo::Options, String> {
        parse_options(a)
    }

    #[test]
    fn demo_runs_on_dxcl_unless_told_dxvk() {
        assert_eq!(parse_demo(&[]).unwrap().d3d, demo::D3dChoice::Dxcl);
        let o = parse_demo(&args(&["--d3d", "dxvk", "--size", "64"])).unwrap();
        assert_eq!((o.d3d, o.size), (demo::D3dChoice::Dxvk, 64));
        assert!(parse_demo(&args(&["--d3d", "wine"])).is_err());
        assert!(parse_demo(&args(&["--d3d"])).is_err());
    }

    #[test]
    fn demo_options_keep_their_names_and_defaults() {
        let o = parse_demo(&[]).unwrap();
        assert_eq!((o.size, o.kernel), (512, demo::KernelChoice::Auto));
        assert_eq!(o.out, std::path::PathBuf::from("dxcl-demo.png"));
        let o = parse_demo(&args(&["--out", "x.png", "--kernel", "two-textures"])).unwrap();
        assert_eq!(o.out, std::path::PathBuf::from("x.png"));
        assert_eq!(o.kernel, demo::KernelChoice::TwoTextures);
        let o = parse_demo(&args(&["--kernel", "in-place"])).unwrap();
        assert_eq!(o.kernel, demo::KernelChoice::InPlace);
        for bad in [
            "--size 0",
            "--size 8193",
            "--size x",
            "--kernel fast",
            "--bogus",
        ] {
            let a: Vec<String> = bad.split(' ').map(String::from).collect();
            assert!(parse_demo(&a).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}

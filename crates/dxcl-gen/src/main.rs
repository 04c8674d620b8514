//! dxcl-gen: reads the interface description `crates/dxcl-abi/api/*.api` and writes
//! - the Rust ABI: `crates/dxcl-abi/src/gen/*.rs`,
//! - the C/C++ headers: `include/**.h`,
//! - the layout test's table: `crates/dxcl-abi/tests/layout/checks.rs`;
//! - from the Khronos `CL/cl.h`, the Wine bridge's thunks (`opencl.rs`) and the typed description of
//!   each entry point that the 32-bit (WoW64) calls are converted by (`wow64.rs`);
//! - the Wine bridge's COM stand-ins' method tables (`com_remote.rs`);
//! - the sharing extensions' entry points, numbered for both sides of the bridge (`sharing.rs`).
//!
//! `cargo run -p dxcl-gen` writes them; `cargo run -p dxcl-gen -- --check` exits 1 when a committed
//! output differs from what the description gives.

mod c;
mod com_remote;
mod ctype;
mod layout;
mod lit;
mod model;
mod opencl;
mod parse;
mod registry;
mod rust;
mod sharing;
mod wow64;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every output file (relative to the workspace root) with its content.
fn outputs(root: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let api_dir = root.join("crates/dxcl-abi/api");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&api_dir)
        .map_err(|e| format!("{}: {e}", api_dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "api"))
        .collect();
    files.sort();
    let mut modules = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?;
        let stem = f
            .file_stem()
            .and_then(|s| s.to_str())
            .ok_or("bad file name")?;
        modules.push(parse::parse_module(
            stem,
            &format!("api/{stem}.api"),
            &text,
        )?);
    }
    let reg = registry::Registry::new(&modules)?;
    reg.validate(&modules)?;
    let mut out = Vec::new();
    for m in &modules {
        out.push((
            PathBuf::from(format!("crates/dxcl-abi/src/gen/{}.rs", m.name)),
            rust::module(&reg, m)?,
        ));
        out.push((
            PathBuf::from("include").join(&m.header),
            c::module(&reg, m)?,
        ));
    }
    out.push((
        PathBuf::from("crates/dxcl-abi/src/gen/mod.rs"),
        rust::mod_rs(&modules),
    ));
    out.push((
        PathBuf::from("crates/dxcl-abi/tests/layout/checks.rs"),
        layout::checks(&reg, &modules),
    ));
    let entry_points = opencl::entry_points()?;
    out.extend(opencl::outputs(&entry_points));
    out.push((
        PathBuf::from("crates/dxcl-wine/src/wow64/gen.rs"),
        wow64::gen_rs(&entry_points)?,
    ));
    out.extend(com_remote::outputs(&reg, &modules)?);
    out.extend(sharing::outputs());
    Ok(out)
}

/// Generated files on disk that the description no longer produces.
fn stale(root: &Path, outputs: &[(PathBuf, String)]) -> Vec<PathBuf> {
    let gen_dir = root.join("crates/dxcl-abi/src/gen");
    let Ok(entries) = std::fs::read_dir(&gen_dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| PathBuf::from("crates/dxcl-abi/src/gen").join(e.file_name()))
        .filter(|p| !outputs.iter().any(|(o, _)| o == p))
        .collect()
}

/// Paths whose committed content differs from the generated one.
fn differences(root: &Path, outputs: &[(PathBuf, String)]) -> Vec<PathBuf> {
    let mut diff: Vec<PathBuf> = outputs
        .iter()
        .filter(|(p, text)| {
            std::fs::read_to_string(root.join(p)).ok().as_deref() != Some(text.as_str())
        })
        .map(|(p, _)| p.clone())
        .collect();
    diff.extend(stale(root, outputs));
    diff
}

fn main() -> ExitCode {
    let check = match std::env::args().nth(1).as_deref() {
        None => false,
        Some("--check") => true,
        Some(other) => {
            eprintln!("usage: dxcl-gen [--check]   (unknown argument `{other}`)");
            return ExitCode::from(2);
        }
    };
    let root = workspace_root();
    let outputs = match outputs(&root) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("dxcl-gen: {e}");
            return ExitCode::FAILURE;
        }
    };
    if check {
        let diff = differences(&root, &outputs);
        for p in &diff {
            eprintln!("dxcl-gen: stale: {}", p.display());
        }
        if diff.is_empty() {
            println!("dxcl-gen: {} outputs up to date", outputs.len());
            return ExitCode::SUCCESS;
        }
        eprintln!("dxcl-gen: run `cargo run -p dxcl-gen` and commit the result");
        return ExitCode::FAILURE;
    }
    for p in stale(&root, &outputs) {
        if let Err(e) = std::fs::remove_file(root.join(&p)) {
            eprintln!("dxcl-gen: {}: {e}", p.display());
            return ExitCode::FAILURE;
        }
    }
    for (p, text) in &outputs {
        let path = root.join(p);
        if std::fs::read_to_string(&path).ok().as_deref() == Some(text.as_str()) {
            continue;
        }
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(&path, text));
        if let Err(e) = written {
            eprintln!("dxcl-gen: {}: {e}", p.display());
            return ExitCode::FAILURE;
        }
        println!("dxcl-gen: wrote {}", p.display());
    }
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The committed outputs are what the committed description gives (the `--check` of CI).
    #[test]
    fn committed_outputs_are_fresh() {
        let root = workspace_root();
        let outputs = outputs(&root).unwrap();
        assert_eq!(
            differences(&root, &outputs),
            Vec::<PathBuf>::new(),
            "run `cargo run -p dxcl-gen`"
        );
    }
}

//! `dxcl wine …`: dxcl's Wine bridge in a Wine prefix (docs/wine.md).
//!
//! - `install [PREFIX]`: puts `dxclcl.dll` and a forwarding `opencl.dll` into the prefix's
//!   `system32` (Wine's own `opencl.dll` saved beside it) and sets the DLL override `opencl=native`;
//! - `uninstall [PREFIX]`: undoes exactly that;
//! - `run [--prefix PREFIX] PROGRAM [ARGS…]`: runs a Windows program with what the bridge needs in
//!   its environment (`WINEDLLPATH`: where Wine finds the bridge's unix side; `OPENCL_LAYERS`: the
//!   layer);
//! - `env [PREFIX]`: prints that environment for a shell;
//! - `info [PREFIX]`: what a Windows program in the prefix sees (platforms, devices, extensions,
//!   the devices each DXGI adapter prefers).
//!
//! `--wine PATH` picks the Wine (default: `wine` on PATH, else `wine64` on PATH, else Debian's
//! `/usr/lib/wine/wine64`); a Wine older than 8.0 (no unix-call table the bridge can use) and a
//! 32-bit prefix (`WINEARCH=win32`) are refused with the reason.
//!
//! The bridge's files come from the installation (`lib/dxcl/wine` beside `bin/dxcl`, made by
//! `make wine install`). Nothing outside the prefix changes: other prefixes keep Wine's `opencl.dll`.

use std::error::Error;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The prefix's `opencl.dll` from before the install.
const SAVED: &str = "opencl.dll.dxcl-saved";
const OVERRIDES: &str = r"HKCU\Software\Wine\DllOverrides";

/// The oldest Wine whose unix-call interface the bridge uses (`__wine_unix_call_dispatcher`,
/// `MemoryWineUnixFuncs`); tested on 8.0 and 10.0.
const OLDEST: (u32, u32) = (8, 0);

#[derive(clap::Args, Debug)]
pub struct Wine {
    /// The Wine program to use (default: `wine` on PATH, else `wine64` on PATH, else
    /// /usr/lib/wine/wine64; DXCL_WINE sets it too).
    #[arg(long, global = true, value_name = "PATH")]
    wine: Option<PathBuf>,
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// Install the bridge into a Wine prefix (default: $WINEPREFIX, else ~/.wine; made if missing).
    Install { prefix: Option<PathBuf> },
    /// Remove the bridge from a prefix, restoring Wine's own opencl.dll.
    Uninstall { prefix: Option<PathBuf> },
    /// Run a Windows program with the bridge.
    Run {
        #[arg(long)]
        prefix: Option<PathBuf>,
        /// The Windows program, then its arguments.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        program: Vec<OsString>,
    },
    /// Print the environment the bridge needs, as shell exports.
    Env { prefix: Option<PathBuf> },
    /// What a Windows program in the prefix sees: platforms, devices, extensions, and the OpenCL
    /// devices each DXGI adapter prefers.
    Info { prefix: Option<PathBuf> },
}

/// Where the bridge's files are and which prefix and `wine` to use.
struct Setup {
    bridge: PathBuf,
    prefix: PathBuf,
    wine: PathBuf,
    /// What `wine --version` printed.
    version: String,
}

fn bridge_dir() -> Result<PathBuf, Box<dyn Error>> {
    let exe = std::env::current_exe()?;
    let dir = exe.parent().ok_or("no directory for this program")?;
    let bridge = dir.join("../lib/dxcl/wine");
    let needed = [
        "x86_64-windows/dxclcl.dll",
        "x86_64-unix/dxclcl.so",
        "opencl.dll",
        "dxcl-wine-info.exe",
    ];
    match needed.iter().find(|f| !bridge.join(f).is_file()) {
        None => Ok(bridge.canonicalize()?),
        Some(f) => Err(format!(
            "the Wine bridge is not installed beside this program ({} is missing): build it with \
             `make wine install PREFIX=…` in dxcl's source tree (it installs MinGW-w64 and Wine's \
             tools through scripts/wine/deps.sh)",
            bridge.join(f).display()
        )
        .into()),
    }
}

fn wine_program(chosen: Option<PathBuf>) -> PathBuf {
    if let Some(w) = chosen.or_else(|| std::env::var_os("DXCL_WINE").map(PathBuf::from)) {
        return w;
    }
    let on_path = |name: &str| {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    };
    // Wine 11 has only `wine`; Debian's wine64 package puts its program outside PATH.
    on_path("wine")
        .or_else(|| on_path("wine64"))
        .unwrap_or_else(|| PathBuf::from("/usr/lib/wine/wine64"))
}

/// The version `wine --version` prints ("wine-10.0 (Debian 10.0~repack-6)" → (10, 0) and the line).
fn wine_version(wine: &Path) -> Result<((u32, u32), String), Box<dyn Error>> {
    let out = Command::new(wine).arg("--version").output().map_err(|e| {
        format!(
            "cannot run {}: {e} (choose one with --wine PATH)",
            wine.display()
        )
    })?;
    let line = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    match parse_version(&line) {
        Some(v) => Ok((v, line)),
        None => Err(format!(
            "{} --version printed {line:?}, not a Wine version",
            wine.display()
        )
        .into()),
    }
}

fn parse_version(line: &str) -> Option<(u32, u32)> {
    let v = line.strip_prefix("wine-")?;
    let v = v.split([' ', '-']).next()?;
    let mut parts = v.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next().map_or(Some(0), |m| m.parse().ok())?;
    Some((major, minor))
}

/// Why the bridge cannot serve programs of this Wine and prefix, if it cannot.
fn refusal(version: (u32, u32), line: &str, prefix: &Path) -> Option<String> {
    if version < OLDEST {
        return Some(format!(
            "{line} is older than Wine {}.{}, the oldest whose unix-call interface the bridge uses",
            OLDEST.0, OLDEST.1
        ));
    }
    let system = std::fs::read_to_string(prefix.join("system.reg")).unwrap_or_default();
    if system.lines().any(|l| l.trim() == "#arch=win32") {
        return Some(format!(
            "{} is a 32-bit prefix (WINEARCH=win32): the bridge serves 64-bit programs; make a \
             64-bit prefix",
            prefix.display()
        ));
    }
    None
}

fn prefix_of(p: Option<PathBuf>) -> Result<PathBuf, Box<dyn Error>> {
    if let Some(p) = p.or_else(|| std::env::var_os("WINEPREFIX").map(PathBuf::from)) {
        return Ok(std::path::absolute(p)?);
    }
    let home = std::env::var_os("HOME").ok_or("neither a prefix, WINEPREFIX nor HOME is set")?;
    Ok(PathBuf::from(home).join(".wine"))
}

fn setup(wine: Option<PathBuf>, prefix: Option<PathBuf>) -> Result<Setup, Box<dyn Error>> {
    let bridge = bridge_dir()?;
    let prefix = prefix_of(prefix)?;
    let wine = wine_program(wine);
    let (version, line) = wine_version(&wine)?;
    if let Some(why) = refusal(version, &line, &prefix) {
        return Err(format!("the bridge cannot serve this prefix: {why}").into());
    }
    Ok(Setup {
        bridge,
        prefix,
        wine,
        version: line,
    })
}

impl Setup {
    fn system32(&self) -> PathBuf {
        self.prefix.join("drive_c/windows/system32")
    }

    /// Where a 64-bit prefix keeps its 32-bit DLLs.
    fn syswow64(&self) -> PathBuf {
        self.prefix.join("drive_c/windows/syswow64")
    }

    /// `wine` in the prefix, with the bridge's environment.
    fn wine(&self) -> Command {
        let mut c = Command::new(&self.wine);
        c.env("WINEPREFIX", &self.prefix);
        for (k, v) in self.environment() {
            c.env(k, v);
        }
        c
    }

    /// `WINEDLLPATH` (the bridge first) and `OPENCL_LAYERS` (the user's, else the installed layer).
    fn environment(&self) -> Vec<(&'static str, OsString)> {
        let mut dll_path = vec![self.bridge.clone()];
        if let Some(old) = std::env::var_os("WINEDLLPATH") {
            dll_path.extend(std::env::split_paths(&old));
        }
        let mut env = vec![(
            "WINEDLLPATH",
            std::env::join_paths(dll_path).unwrap_or_default(),
        )];
        let layer = std::env::var_os("OPENCL_LAYERS").or_else(|| {
            let l = self.bridge.join("../../libdxcl_layer.so");
            l.canonicalize().ok().map(OsString::from)
        });
        if let Some(l) = layer {
            env.push(("OPENCL_LAYERS", l));
        }
        env
    }

    fn reg(&self, args: &[&str]) -> Result<(), Box<dyn Error>> {
        let status = self.wine().arg("reg").args(args).output()?;
        if status.status.success() {
            Ok(())
        } else {
            Err(format!("`wine reg {}` failed", args.join(" ")).into())
        }
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((std::fs::read(a), std::fs::read(b)), (Ok(x), Ok(y)) if x == y)
}

/// Puts the bridge's `opencl.dll` and `dxclcl.dll` into a prefix's system folder (system32 or
/// syswow64), keeping the prefix's own `opencl.dll` as SAVED beside them.
fn place(sys: &Path, opencl: &Path, dxclcl: &Path) -> Result<(), Box<dyn Error>> {
    let current = sys.join("opencl.dll");
    if current.exists() && !same_file(&current, opencl) && !sys.join(SAVED).exists() {
        std::fs::rename(&current, sys.join(SAVED))?;
    }
    std::fs::copy(opencl, &current)?;
    std::fs::copy(dxclcl, sys.join("dxclcl.dll"))?;
    Ok(())
}

/// Takes back what [`place`] put into `sys`: the saved `opencl.dll` returns.
fn unplace(sys: &Path, opencl: &Path) -> Result<(), Box<dyn Error>> {
    let current = sys.join("opencl.dll");
    if sys.join(SAVED).exists() {
        std::fs::rename(sys.join(SAVED), &current)?;
    } else if same_file(&current, opencl) {
        std::fs::remove_file(&current)?;
    }
    std::fs::remove_file(sys.join("dxclcl.dll"))?;
    Ok(())
}

fn install(s: &Setup) -> Result<(), Box<dyn Error>> {
    let sys = s.system32();
    if !sys.is_dir() {
        println!("dxcl wine: making the prefix {}", s.prefix.display());
        let status = s.wine().args(["wineboot", "-i"]).status()?;
        if !sys.is_dir() {
            return Err(
                format!("wineboot could not make the prefix {}", s.prefix.display()).into(),
            );
        }
        // A step of the prefix's set-up that fails (a service the machine cannot start, such as
        // Wine 10's Bluetooth driver in a container) makes wineboot's status non-zero with the
        // prefix made all the same.
        if !status.success() {
            println!("dxcl wine: wineboot ended with {status}, the prefix made all the same");
        }
    }
    place(
        &sys,
        &s.bridge.join("opencl.dll"),
        &s.bridge.join("x86_64-windows/dxclcl.dll"),
    )?;
    // 32-bit programs (Wine's new WoW64 mode) load theirs from syswow64.
    let wow64 = s.syswow64();
    let ours32 = s.bridge.join("i386-windows");
    if wow64.is_dir() && ours32.join("dxclcl.dll").is_file() {
        place(
            &wow64,
            &ours32.join("opencl.dll"),
            &ours32.join("dxclcl.dll"),
        )?;
    }
    s.reg(&["add", OVERRIDES, "/v", "opencl", "/d", "native", "/f"])?;
    println!(
        "dxcl wine: installed in {}; run Windows programs with `dxcl wine run --prefix {} PROGRAM`, \
         or with the environment `dxcl wine env` prints",
        s.prefix.display(),
        s.prefix.display()
    );
    Ok(())
}

fn uninstall(s: &Setup) -> Result<(), Box<dyn Error>> {
    let sys = s.system32();
    if !sys.join("dxclcl.dll").exists() {
        return Err(format!("the bridge is not installed in {}", s.prefix.display()).into());
    }
    unplace(&sys, &s.bridge.join("opencl.dll"))?;
    if s.syswow64().join("dxclcl.dll").exists() {
        unplace(&s.syswow64(), &s.bridge.join("i386-windows/opencl.dll"))?;
    }
    // The override may already be gone; Wine's own opencl.dll is back either way.
    let _ = s.reg(&["delete", OVERRIDES, "/v", "opencl", "/f"]);
    println!("dxcl wine: removed from {}", s.prefix.display());
    Ok(())
}

fn run_program(s: &Setup, program: &[OsString]) -> Result<(), Box<dyn Error>> {
    if !s.system32().join("dxclcl.dll").exists() {
        return Err(format!(
            "the bridge is not installed in {}: run `dxcl wine install {}` first",
            s.prefix.display(),
            s.prefix.display()
        )
        .into());
    }
    let status = s.wine().args(program).status()?;
    match status.code() {
        Some(0) => Ok(()),
        Some(code) => Err(format!("the program exited with status {code}").into()),
        None => Err(format!(
            "the program was killed by signal {}",
            std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0)
        )
        .into()),
    }
}

impl Wine {
    pub fn run(self) -> Result<(), Box<dyn Error>> {
        let wine = self.wine;
        match self.action {
            Action::Install { prefix } => install(&setup(wine, prefix)?),
            Action::Uninstall { prefix } => uninstall(&setup(wine, prefix)?),
            Action::Run { prefix, program } => run_program(&setup(wine, prefix)?, &program),
            Action::Env { prefix } => {
                let s = setup(wine, prefix)?;
                println!("export WINEPREFIX='{}'", s.prefix.display());
                for (k, v) in s.environment() {
                    println!("export {k}='{}'", v.to_string_lossy());
                }
                Ok(())
            }
            Action::Info { prefix } => {
                let s = setup(wine, prefix)?;
                println!("Wine: {} ({})", s.version, s.wine.display());
                if s.syswow64().join("dxclcl.dll").is_file() {
                    println!(
                        "32-bit programs: the bridge is in syswow64; it serves them in Wine's new \
                         WoW64 mode (not shared virtual memory, native kernels)"
                    );
                }
                let info = s.bridge.join("dxcl-wine-info.exe");
                run_program(&s, &[info.into_os_string()])
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_as_wine_prints_them() {
        assert_eq!(
            parse_version("wine-8.0 (Debian 8.0~repack-4)"),
            Some((8, 0))
        );
        assert_eq!(parse_version("wine-10.17"), Some((10, 17)));
        assert_eq!(parse_version("wine-11.0-rc3"), Some((11, 0)));
        assert_eq!(parse_version("wine-9.0 (Staging)"), Some((9, 0)));
        assert_eq!(parse_version("wine-7.22"), Some((7, 22)));
        assert_eq!(parse_version("Wine 10"), None);
    }

    #[test]
    fn old_wines_and_32_bit_prefixes_are_refused_with_the_reason() {
        let dir = std::env::temp_dir().join(format!("dxcl-wine-refusal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(refusal((7, 22), "wine-7.22", &dir)
            .unwrap()
            .contains("older than Wine 8.0"));
        assert_eq!(refusal((8, 0), "wine-8.0", &dir), None);
        std::fs::write(
            dir.join("system.reg"),
            "WINE REGISTRY Version 2\n#arch=win64\n",
        )
        .unwrap();
        assert_eq!(refusal((10, 0), "wine-10.0", &dir), None);
        std::fs::write(
            dir.join("system.reg"),
            "WINE REGISTRY Version 2\n#arch=win32\n",
        )
        .unwrap();
        assert!(refusal((10, 0), "wine-10.0", &dir)
            .unwrap()
            .contains("32-bit prefix"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

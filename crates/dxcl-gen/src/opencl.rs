//! The Wine bridge's thunks, from the Khronos `CL/cl.h` (every core entry point up to 3.0).
//!
//! Writes, from the one header:
//! - `crates/dxcl-wine/src/gen.rs`: the unix side's table of entry-point names, each one's
//!   signature as a host function-pointer type, and the call of every entry point that needs no
//!   special handling;
//! - `wine/gen/calls.h`: the entry-point numbers and the argument count both sides share;
//! - `wine/gen/thunks.c`: the Windows side's exports, each packing its arguments into one unix call;
//! - `wine/gen/dxclcl.def` and `wine/gen/opencl.def`: the builtin's exports, and the `opencl.dll`
//!   that forwards every export to it.
//!
//! Every argument of the core API is an integer or a pointer (no floating point, no structure by
//! value), so each crosses as one 64-bit slot and is narrowed back to its declared type on the
//! unix side.

use std::collections::HashMap;
use std::fmt::Write;
use std::path::PathBuf;

/// Entry points whose unix side is written by hand (crates/dxcl-wine/src/special.rs): they take
/// callbacks into the program, report extensions, or take or return Direct3D objects.
pub const SPECIAL: &[&str] = &[
    "clGetPlatformInfo",
    "clGetDeviceInfo",
    "clGetContextInfo",
    "clGetMemObjectInfo",
    "clCreateContext",
    "clCreateContextFromType",
    "clSetContextDestructorCallback",
    "clSetMemObjectDestructorCallback",
    "clBuildProgram",
    "clCompileProgram",
    "clLinkProgram",
    "clSetProgramReleaseCallback",
    "clSetEventCallback",
    "clEnqueueSVMFree",
    "clEnqueueNativeKernel",
];

/// Entry points whose Windows side is written by hand (wine/dxclcl/main.c): they return addresses
/// of Windows functions.
const WINDOWS_SPECIAL: &[&str] = &[
    "clGetExtensionFunctionAddress",
    "clGetExtensionFunctionAddressForPlatform",
];

/// How one value crosses: its Rust type on the unix side.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Scalar {
    Void,
    Ptr,
    U32,
    I32,
    U64,
    I64,
    Usize,
    Isize,
}

impl Scalar {
    fn rust(self) -> &'static str {
        match self {
            Scalar::Void => "()",
            Scalar::Ptr => "*mut c_void",
            Scalar::U32 => "u32",
            Scalar::I32 => "i32",
            Scalar::U64 => "u64",
            Scalar::I64 => "i64",
            Scalar::Usize => "usize",
            Scalar::Isize => "isize",
        }
    }
}

pub(crate) struct Param {
    /// The declaration as the header writes it (type and name), for the C thunk's prototype.
    decl: String,
    pub(crate) name: String,
    scalar: Scalar,
    pub(crate) callback: bool,
    /// What the type is, as far as a 32-bit caller's layout differs (wow64.rs).
    pub(crate) kind: Kind,
}

/// A type as the 32-bit layout sees it: pointer-sized things (handles, `size_t`, `intptr_t`,
/// pointers) are 4 bytes there, everything else is the same.
#[derive(Clone, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    /// An integer of fixed width, or a pointer to bytes whose layout is the same.
    Plain,
    /// A `cl_*` object handle (`typedef struct _cl_x *`).
    Handle,
    /// `size_t` (or `intptr_t`) by value.
    Size,
    /// A pointer to what the string names: `handle`, `size_t`, `intptr_t`, `pointer` (a pointer
    /// to pointers), or the pointee's type name; `konst` for an input.
    Pointer { to: String, konst: bool },
}

pub(crate) struct Function {
    pub(crate) name: String,
    ret_c: String,
    ret: Scalar,
    pub(crate) ret_kind: Kind,
    pub(crate) params: Vec<Param>,
}

/// `typedef A B;` lines with a one-word `A`, and `typedef struct _x * B;` handles.
fn typedefs(text: &str) -> HashMap<String, String> {
    let mut map = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        let Some(rest) = line.strip_prefix("typedef ") else {
            continue;
        };
        let Some(body) = rest.split(';').next() else {
            continue;
        };
        let words: Vec<&str> = body.split_whitespace().collect();
        match words.as_slice() {
            ["struct", _, "*", name] => {
                map.insert(name.to_string(), "*".to_string());
            }
            [from, name] => {
                map.insert(name.to_string(), from.to_string());
            }
            _ => {}
        }
    }
    map
}

fn resolve(ty: &str, defs: &HashMap<String, String>) -> Result<Scalar, String> {
    if ty.contains('*') {
        return Ok(Scalar::Ptr);
    }
    let base = ty
        .split_whitespace()
        .filter(|w| *w != "const")
        .collect::<Vec<_>>()
        .join(" ");
    let mut name = base.as_str();
    for _ in 0..8 {
        match name {
            "void" => return Ok(Scalar::Void),
            "cl_uint" => return Ok(Scalar::U32),
            "cl_int" => return Ok(Scalar::I32),
            "cl_ulong" => return Ok(Scalar::U64),
            "cl_long" => return Ok(Scalar::I64),
            "size_t" => return Ok(Scalar::Usize),
            "intptr_t" => return Ok(Scalar::Isize),
            "*" => return Ok(Scalar::Ptr),
            _ => {}
        }
        name = defs
            .get(name)
            .ok_or_else(|| format!("cl.h: no typedef for `{name}`"))?;
    }
    Err(format!("cl.h: typedef chain too long at `{ty}`"))
}

/// Splits at commas outside parentheses.
fn split_params(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out.push(cur);
    out.into_iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty() && p != "void")
        .collect()
}

fn param(decl: &str, defs: &HashMap<String, String>) -> Result<Param, String> {
    if decl.contains("CL_CALLBACK") {
        let name = decl
            .split("CL_CALLBACK")
            .nth(1)
            .and_then(|s| s.trim_start().strip_prefix('*'))
            .and_then(|s| s.split(')').next())
            .map(str::trim)
            .ok_or_else(|| format!("cl.h: callback parameter `{decl}`"))?;
        return Ok(Param {
            decl: decl.to_string(),
            name: name.to_string(),
            scalar: Scalar::Ptr,
            callback: true,
            kind: Kind::Plain,
        });
    }
    let array = decl.ends_with("[]");
    let trimmed = decl.trim_end_matches("[]").trim_end();
    let split = trimmed
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_'))
        .ok_or_else(|| format!("cl.h: parameter `{decl}`"))?;
    let (ty, name) = trimmed.split_at(split + 1);
    let scalar = if array {
        Scalar::Ptr
    } else {
        resolve(ty, defs)?
    };
    Ok(Param {
        decl: decl.to_string(),
        name: name.to_string(),
        scalar,
        callback: false,
        kind: kind(ty, array, defs),
    })
}

/// The 32-bit view of type `ty` (an array parameter `[]` is a pointer to its element).
fn kind(ty: &str, array: bool, defs: &HashMap<String, String>) -> Kind {
    let words: Vec<&str> = ty.split_whitespace().collect();
    let konst = words.first() == Some(&"const");
    let stars = ty.matches('*').count() + array as usize;
    let base = words
        .iter()
        .filter(|w| **w != "const" && **w != "*")
        .map(|w| w.trim_matches('*'))
        .find(|w| !w.is_empty())
        .unwrap_or("void");
    let named = |name: &str| {
        let mut n = name;
        for _ in 0..8 {
            match n {
                "*" => return "handle",
                "size_t" => return "size_t",
                "intptr_t" => return "intptr_t",
                _ => {}
            }
            match defs.get(n) {
                Some(next) => n = next,
                None => break,
            }
        }
        "plain"
    };
    match (stars, named(base)) {
        (0, "handle") => Kind::Handle,
        (0, "size_t" | "intptr_t") => Kind::Size,
        (0, _) => Kind::Plain,
        (1, "plain") => Kind::Pointer {
            to: base.to_string(),
            konst,
        },
        (1, to) => Kind::Pointer {
            to: to.to_string(),
            konst,
        },
        _ => Kind::Pointer {
            to: "pointer".to_string(),
            konst,
        },
    }
}

pub(crate) fn functions(text: &str) -> Result<Vec<Function>, String> {
    let defs = typedefs(text);
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("CL_API_CALL") {
        let before = &rest[..at];
        let start = before
            .rfind("CL_API_ENTRY")
            .ok_or("cl.h: CL_API_CALL without entry")?;
        let ret_c = before[start + "CL_API_ENTRY".len()..]
            .split_whitespace()
            .filter(|w| !w.starts_with("CL_API_PREFIX"))
            .collect::<Vec<_>>()
            .join(" ");
        let after = rest[at + "CL_API_CALL".len()..].trim_start();
        let open = after.find('(').ok_or("cl.h: no parameter list")?;
        let name = after[..open].trim().to_string();
        let mut depth = 0;
        let mut close = open;
        for (i, c) in after[open..].char_indices() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let params = split_params(&after[open + 1..close])
            .iter()
            .map(|p| param(p, &defs))
            .collect::<Result<Vec<_>, _>>()?;
        let ret = resolve(&ret_c, &defs)?;
        let ret_kind = kind(&ret_c, false, &defs);
        if !out.iter().any(|f: &Function| f.name == name) {
            out.push(Function {
                name,
                ret_c,
                ret,
                ret_kind,
                params,
            });
        }
        rest = &after[close..];
    }
    Ok(out)
}

const HEADER_NOTE: &str = "Generated by dxcl-gen from the Khronos CL/cl.h: do not edit.";

fn calls_h(fns: &[Function], max: usize) -> String {
    let mut s =
        format!("/* {HEADER_NOTE} */\n#ifndef DXCL_WINE_CALLS_H\n#define DXCL_WINE_CALLS_H\n\n");
    let _ = writeln!(
        s,
        "#define DXCL_MAX_ARGS {max}\n\nenum dxcl_entry_point\n{{"
    );
    for (i, f) in fns.iter().enumerate() {
        let _ = writeln!(s, "    DXCL_FN_{} = {i},", f.name);
    }
    let _ = writeln!(s, "    DXCL_FN_COUNT = {}\n}};\n\n#endif", fns.len());
    s
}

fn thunks_c(fns: &[Function]) -> String {
    let mut s = format!(
        "/* {HEADER_NOTE} */\n/* Each export packs its arguments into one call of the unix side (unix/call). */\n\n\
         #include \"bridge.h\"\n"
    );
    for f in fns
        .iter()
        .filter(|f| !WINDOWS_SPECIAL.contains(&f.name.as_str()))
    {
        let decls: Vec<&str> = f.params.iter().map(|p| p.decl.as_str()).collect();
        let decls = if decls.is_empty() {
            "void".to_string()
        } else {
            decls.join(", ")
        };
        let _ = writeln!(s, "\n{} WINAPI {}({decls})\n{{", f.ret_c, f.name);
        let _ = writeln!(s, "    struct dxcl_call call = {{ DXCL_FN_{} }};", f.name);
        for (i, p) in f.params.iter().enumerate() {
            let value = if p.callback || p.scalar == Scalar::Ptr {
                format!("(UINT64)(ULONG_PTR){}", p.name)
            } else {
                format!("(UINT64){}", p.name)
            };
            let _ = writeln!(s, "    call.args[{i}] = {value};");
        }
        for p in f.params.iter().filter(|p| p.callback) {
            let _ = writeln!(s, "    if ({}) dxcl_start_callbacks();", p.name);
        }
        let _ = writeln!(s, "    dxcl_unix_call(&call);");
        match f.ret {
            Scalar::Void => {}
            Scalar::Ptr => {
                let _ = writeln!(s, "    return ({})(ULONG_PTR)call.ret;", f.ret_c);
            }
            _ => {
                let _ = writeln!(s, "    return ({})call.ret;", f.ret_c);
            }
        }
        s.push_str("}\n");
    }
    s
}

fn defs(fns: &[Function]) -> (String, String) {
    let mut own = format!("; {HEADER_NOTE}\nLIBRARY dxclcl.dll\nEXPORTS\n");
    let mut fwd = format!("; {HEADER_NOTE}\nLIBRARY opencl.dll\nEXPORTS\n");
    for f in fns {
        let _ = writeln!(own, "    {}", f.name);
        let _ = writeln!(fwd, "    {0} = dxclcl.{0}", f.name);
    }
    // Why the bridge has no unix side (wine/dxclcl/main.c), for `dxcl wine info`; named here so
    // that a 32-bit build exports it undecorated too.
    own.push_str("    dxclclStatus\n");
    (own, fwd)
}

fn gen_rs(fns: &[Function], max: usize) -> String {
    let mut s = format!("//! {HEADER_NOTE}\n\n");
    s.push_str(
        "// Every entry point gets a number and a signature; the hand-written code names only some.\n\
         #![allow(dead_code, non_upper_case_globals, non_camel_case_types, clippy::unnecessary_cast)]\n\n\
         use std::ffi::c_void;\n\n",
    );
    let _ = writeln!(
        s,
        "/// Argument slots of one call (the most any entry point takes).\npub const MAX_ARGS: usize = {max};\n"
    );
    s.push_str(
        "/// Every core entry point, in the order of their numbers.\npub const NAMES: [&str; ",
    );
    let _ = writeln!(s, "{}] = [", fns.len());
    for f in fns {
        let _ = writeln!(s, "    \"{}\",", f.name);
    }
    s.push_str("];\n\n");
    let special: Vec<String> = SPECIAL.iter().map(|n| format!("\"{n}\"")).collect();
    let _ = writeln!(
        s,
        "/// Entry points whose unix side is written by hand (special.rs).\npub const SPECIAL: [&str; {}] = [{}];\n",
        SPECIAL.len(),
        special.join(", ")
    );
    s.push_str("/// Each entry point's number.\npub mod index {\n");
    for (i, f) in fns.iter().enumerate() {
        let _ = writeln!(s, "    pub const {}: u32 = {i};", f.name);
    }
    s.push_str("}\n\n/// Each entry point's signature in the host library, as unix-side types.\npub mod sig {\n    use std::ffi::c_void;\n");
    for f in fns {
        let args: Vec<&str> = f.params.iter().map(|p| p.scalar.rust()).collect();
        let ret = match f.ret {
            Scalar::Void => String::new(),
            r => format!(" -> {}", r.rust()),
        };
        let _ = writeln!(
            s,
            "    pub type {} = unsafe extern \"C\" fn({}){ret};",
            f.name,
            args.join(", ")
        );
    }
    s.push_str("}\n\n");
    s.push_str(
        "/// Calls entry point `index` of the host library at `ptr` with the packed arguments;\n\
         /// `None` for a number no entry point has. The hand-written ones (special.rs) call\n\
         /// through it too, with arguments of their own.\n///\n/// # Safety\n\
         /// `ptr` is the host library's function of that name; the arguments are what the program\n\
         /// passed to the Windows export of the same signature.\n\
         pub unsafe fn call(index: u32, ptr: *const c_void, a: &[u64; MAX_ARGS]) -> Option<u64> {\n\
         \x20   let _ = a;\n    Some(match index {\n",
    );
    for (i, f) in fns.iter().enumerate() {
        let args: Vec<String> = f
            .params
            .iter()
            .enumerate()
            .map(|(k, p)| match p.scalar {
                Scalar::Ptr => format!("a[{k}] as usize as *mut c_void"),
                other => format!("a[{k}] as {}", other.rust()),
            })
            .collect();
        let ret = match f.ret {
            Scalar::Void => "0".to_string(),
            Scalar::Ptr => "r as usize as u64".to_string(),
            Scalar::I32 => "r as i64 as u64".to_string(),
            other => format!("r as {} as u64", other.rust()),
        };
        let bind = if f.ret == Scalar::Void {
            ""
        } else {
            "let r = "
        };
        let _ = writeln!(
            s,
            "        {i} => {{\n            // SAFETY: the caller's contract: `ptr` is the host's `{0}`, whose C signature\n\
             \x20           // (CL/cl.h) this type spells in unix-side types.\n\
             \x20           let f: sig::{0} = unsafe {{ std::mem::transmute::<*const c_void, sig::{0}>(ptr) }};\n\
             \x20           // SAFETY: the arguments are the program's, narrowed back to their declared types.\n\
             \x20           {bind}unsafe {{ f({1}) }};\n\
             \x20           {ret}\n        }}",
            f.name,
            args.join(", ")
        );
    }
    s.push_str("        _ => return None,\n    })\n}\n");
    s
}

/// The header: `DXCL_CL_HEADER` if set (for a newer one), else the system's.
fn header_path() -> PathBuf {
    std::env::var_os("DXCL_CL_HEADER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/include/CL/cl.h"))
}

/// Every core entry point of the header (`DXCL_CL_HEADER`, else the system's).
pub fn entry_points() -> Result<Vec<Function>, String> {
    let path = header_path();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{}: {e} (install Debian's opencl-c-headers, or set DXCL_CL_HEADER)",
            path.display()
        )
    })?;
    let fns = functions(&text)?;
    for name in SPECIAL.iter().chain(WINDOWS_SPECIAL) {
        if !fns.iter().any(|f| f.name == *name) {
            return Err(format!("cl.h declares no {name}"));
        }
    }
    Ok(fns)
}

/// The bridge's generated files, relative to the workspace root.
pub fn outputs(fns: &[Function]) -> Vec<(PathBuf, String)> {
    let max = fns.iter().map(|f| f.params.len()).max().unwrap_or(0);
    let (own, fwd) = defs(fns);
    vec![
        (
            PathBuf::from("crates/dxcl-wine/src/gen.rs"),
            gen_rs(fns, max),
        ),
        (PathBuf::from("wine/gen/calls.h"), calls_h(fns, max)),
        (PathBuf::from("wine/gen/thunks.c"), thunks_c(fns)),
        (PathBuf::from("wine/gen/dxclcl.def"), own),
        (PathBuf::from("wine/gen/opencl.def"), fwd),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "typedef struct _cl_mem * cl_mem;\ntypedef cl_ulong cl_bitfield;\n\
        typedef cl_bitfield cl_mem_flags;\n\
        extern CL_API_ENTRY cl_mem CL_API_CALL\nclCreateBuffer(cl_context_x c,\n cl_mem_flags flags, size_t size,\n void * host_ptr, cl_int * errcode_ret) CL_API_SUFFIX__VERSION_1_0;\n\
        extern CL_API_ENTRY CL_API_PREFIX__VERSION_2_2_DEPRECATED cl_int CL_API_CALL\n\
        clSetCb(cl_mem m, void (CL_CALLBACK * pfn_notify)(cl_mem m, void * user_data), void * user_data, void * ptrs[]) CL_API_SUFFIX;\n\
        extern CL_API_ENTRY cl_int CL_API_CALL\nclUnload(void) CL_API_SUFFIX;\n";

    #[test]
    fn parses_parameters_callbacks_and_typedef_chains() {
        let sample = SAMPLE.replace("cl_context_x", "cl_mem");
        let fns = functions(&sample).unwrap();
        assert_eq!(fns.len(), 3);
        let scalars: Vec<Scalar> = fns[0].params.iter().map(|p| p.scalar).collect();
        assert_eq!(
            scalars,
            [
                Scalar::Ptr,
                Scalar::U64,
                Scalar::Usize,
                Scalar::Ptr,
                Scalar::Ptr
            ]
        );
        assert_eq!(fns[0].ret, Scalar::Ptr);
        assert_eq!(fns[1].ret_c, "cl_int");
        assert!(fns[1].params[1].callback);
        assert_eq!(fns[1].params[1].name, "pfn_notify");
        assert_eq!(fns[1].params[3].name, "ptrs");
        assert_eq!(fns[1].params[3].scalar, Scalar::Ptr);
        assert!(fns[2].params.is_empty());
    }

    #[test]
    fn an_unknown_type_is_an_error() {
        assert!(functions(SAMPLE).is_err());
    }
}

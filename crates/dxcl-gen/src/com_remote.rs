//! The Wine bridge's COM stand-ins (`crates/dxcl-wine/src/remote.rs`), from the interface
//! description. Writes:
//! - `crates/dxcl-wine/src/gen_stand_ins.rs`: for every Direct3D/DXGI interface, a method table whose
//!   `IUnknown` slots are the bridge's own and whose every other slot hands the call, with how each
//!   argument crosses (`remote::Kind`), to `remote::call`; `remote_vtable` finds a table by IID;
//! - `wine/gen/remote.h`: the most arguments a remoted method takes, for the Windows side's
//!   request block.
//!
//! An argument crosses as one 64-bit slot: an integer, or a pointer (the program and the bridge
//! share one address space). An interface pointer is translated, one at a time. What cannot cross
//! that way (a float or a structure by value, an array of interface pointers) makes the method
//! not remoted: its slot fails without calling the Windows object.
//!
//! A 32-bit program's objects (Wine's new WoW64 mode) reach only the low 4 GiB, so each pointer
//! to data also says what it points at (`Wow`): the bridge copies that into memory they reach,
//! in their layout, and back where the method writes it. A pointer whose pointee the description
//! does not pin down (an array of unstated length, untyped bytes of no stated size) crosses for
//! 64-bit programs only.

use std::fmt::Write;
use std::path::PathBuf;

use crate::ctype::{rust_param_type, rust_type};
use crate::model::*;
use crate::registry::{Def, Registry};
use crate::rust::ident;

/// dxcl's own interfaces: objects of dxcl's runtime and layer, never a program's.
const OWN: &[&str] = &["IDxclInteropResource", "IDxclInteropDevice"];

/// How one argument crosses: the generated code's `crate::remote::Kind`, with how it becomes a
/// 64-bit slot.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Cross {
    /// An integer or enum (`wide`: already 64 bits unsigned, no cast).
    Int {
        wide: bool,
    },
    /// A pointer to plain data, and what it is for a 32-bit program.
    Ptr(Wow),
    InIface,
    /// `I **pp`: the interface's name.
    OutIface(String),
    /// `void **ppv` named by the `REFIID` parameter at this index.
    OutIfaceRiid(usize),
}

/// A pointer to data as a 32-bit program's object takes it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Wow {
    /// Not a pointer to copy: a value (`HANDLE`).
    Value,
    /// Copied in; `back`: and back out after the call (the pointee is not `const`).
    Data { back: bool, pointee: Pointee },
    /// Not for a 32-bit program, and why.
    No(String),
}

/// What a pointer to data points at.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Pointee {
    /// One value of this Rust type, the same bytes in both layouts.
    Same(String),
    /// A structure holding pointers or `SIZE_T`s, field by field.
    Fields(Vec<Field>),
    /// As many bytes as the parameter at this index says.
    BytesArg(usize),
    /// As many bytes as the `UINT` the parameter at this index points at says.
    BytesAt(usize),
}

/// A structure field for the 32-bit layout.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Field {
    /// A pointer or `SIZE_T`: 4 bytes for a 32-bit program, 8 for the host.
    Word,
    /// A value of this Rust type, the same size and alignment in both layouts.
    Data(String),
}

/// The fields of `members`, flattened; `None` where a pointer lies where it cannot be converted
/// field by field (in a union, an array, or a nested structure).
fn fields(reg: &Registry, members: &[Member]) -> Option<Vec<Field>> {
    let mut out = Vec::new();
    for m in members {
        match m {
            Member::Anon { members, .. } => {
                // An anonymous member is converted only when it holds no pointer: then it is
                // plain bytes, but it has no Rust type of its own to size here.
                let inner = fields(reg, members)?;
                if inner.contains(&Field::Word) {
                    return None;
                }
                out.extend(inner);
            }
            Member::Field { decl, .. } => {
                let word = !decl.ty.ptrs.is_empty()
                    || matches!(reg.resolve(&decl.ty.base),
                        Some(Def::Scalar(r)) if r.starts_with('*') || *r == "usize" || *r == "isize");
                let nested = match reg.resolve(&decl.ty.base) {
                    Some(Def::Aggregate(a)) if decl.ty.ptrs.is_empty() => {
                        Some(fields(reg, &a.members)?)
                    }
                    _ => None,
                };
                if nested.is_some_and(|f| f.contains(&Field::Word)) {
                    return None;
                }
                if word {
                    if !decl.array.is_empty() {
                        return None;
                    }
                    out.push(Field::Word);
                    continue;
                }
                let mut t = crate::ctype::rust_base(&decl.ty.base);
                for n in decl.array.iter().rev() {
                    t = match n.parse::<usize>() {
                        Ok(_) => format!("[{t}; {n}]"),
                        Err(_) => format!("[{t}; {n} as usize]"),
                    };
                }
                out.push(Field::Data(t));
            }
        }
    }
    Some(out)
}

/// What a structure is for a 32-bit program: the same bytes, or converted field by field, or
/// neither (`None`).
fn aggregate_pointee(reg: &Registry, a: &Aggregate) -> Option<Pointee> {
    if a.is_union {
        let f = fields(reg, &a.members)?;
        return (!f.contains(&Field::Word)).then(|| Pointee::Same(a.name.clone()));
    }
    let f = fields(reg, &a.members)?;
    Some(if f.contains(&Field::Word) {
        Pointee::Fields(f)
    } else {
        Pointee::Same(a.name.clone())
    })
}

/// What pointer parameter `i` of `m` (not an interface) is for a 32-bit program.
fn wow(reg: &Registry, m: &Method, i: usize) -> Wow {
    let p = &m.params[i];
    let name = &p.name;
    let levels = p.ty.ptrs.len() + usize::from(!p.array.is_empty());
    let base = p.ty.base.as_str();
    if levels == 0 {
        return match base {
            "REFIID" | "REFGUID" => Wow::Data {
                back: false,
                pointee: Pointee::Same("GUID".into()),
            },
            "HANDLE" | "HWND" | "HMODULE" | "HMONITOR" | "HDC" => Wow::Value,
            _ => Wow::No(format!("`{name}` is a `{base}`")),
        };
    }
    if let Some(c) = m.params[..i].iter().find(|q| is_count(&q.name)) {
        return Wow::No(format!(
            "`{name}` may be an array (counted by `{}`)",
            c.name
        ));
    }
    // What the outermost pointer points at is const when the level before it says so.
    let back = !match p.ty.ptrs.len() {
        0 | 1 => p.ty.is_const,
        n => p.ty.ptrs[n - 2],
    };
    let data = |pointee| Wow::Data { back, pointee };
    if levels == 2 && base == "void" && p.array.is_empty() {
        return data(Pointee::Fields(vec![Field::Word]));
    }
    if levels != 1 {
        return Wow::No(format!("`{name}` is a pointer to pointers"));
    }
    let array = match p.array.as_slice() {
        [] => None,
        [n] if n.parse::<usize>().is_ok() => Some(n.clone()),
        _ => return Wow::No(format!("`{name}` is an array of unstated length")),
    };
    let same = |t: String| match &array {
        Some(n) => data(Pointee::Same(format!("[{t}; {n}]"))),
        None => data(Pointee::Same(t)),
    };
    match (base, reg.resolve(base)) {
        ("void", _) => {
            let sized = i.checked_sub(1).map(|k| (k, &m.params[k]));
            match sized {
                Some((k, q)) if q.name.to_ascii_lowercase().ends_with("size") => {
                    match q.ty.ptrs.len() {
                        0 => data(Pointee::BytesArg(k)),
                        1 => data(Pointee::BytesAt(k)),
                        _ => Wow::No(format!("`{name}` is untyped data of no stated size")),
                    }
                }
                _ => Wow::No(format!("`{name}` is untyped data of no stated size")),
            }
        }
        (_, Some(Def::Scalar(r))) if r.starts_with('*') || *r == "usize" || *r == "isize" => {
            match array {
                None => data(Pointee::Fields(vec![Field::Word])),
                Some(_) => Wow::No(format!("`{name}` is an array of pointers")),
            }
        }
        (_, Some(Def::Aggregate(a))) => match (aggregate_pointee(reg, a), &array) {
            (Some(Pointee::Same(t)), _) => same(t),
            (Some(f), None) => data(f),
            _ => Wow::No(format!(
                "`{name}` points at a structure of another 32-bit layout"
            )),
        },
        _ => same(crate::ctype::rust_base(base)),
    }
}

/// What a return value is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Ret {
    Void,
    Int { wide: bool },
    Ptr,
}

/// What a type's base name is.
enum Base<'a> {
    Int {
        wide: bool,
    },
    /// A scalar that is itself a pointer (`REFIID`, `HANDLE`, `LPVOID`).
    Ptr,
    Float,
    Void,
    Aggregate(&'a Aggregate),
    Interface,
    FnPtr,
}

fn base<'a>(reg: &Registry<'a>, name: &str) -> Result<Base<'a>, String> {
    Ok(match name {
        "void" => Base::Void,
        "float" | "double" => Base::Float,
        "char" | "int" | "signed int" | "unsigned int" | "unsigned" => Base::Int { wide: false },
        "long long" => Base::Int { wide: false },
        "unsigned long long" => Base::Int { wide: true },
        _ => match reg.resolve(name) {
            Some(Def::Scalar(r)) if r.starts_with('*') => Base::Ptr,
            Some(Def::Scalar(r)) if r.starts_with('f') => Base::Float,
            Some(Def::Scalar(r)) => Base::Int { wide: *r == "u64" },
            Some(Def::Enum) => Base::Int { wide: false },
            Some(Def::Aggregate(a)) => Base::Aggregate(a),
            Some(Def::Interface(_)) => Base::Interface,
            Some(Def::FnPtr) => Base::FnPtr,
            _ => return Err(format!("`{name}` is not a type")),
        },
    })
}

/// Whether a structure holds, at any depth by value, an interface or function pointer: such a
/// structure cannot cross as plain data.
fn holds_code_or_object(reg: &Registry, members: &[Member]) -> bool {
    members.iter().any(|m| match m {
        Member::Anon { members, .. } => holds_code_or_object(reg, members),
        Member::Field { decl, .. } => match base(reg, &decl.ty.base) {
            Ok(Base::Interface | Base::FnPtr) => true,
            Ok(Base::Aggregate(a)) if decl.ty.ptrs.is_empty() => {
                holds_code_or_object(reg, &a.members)
            }
            _ => false,
        },
    })
}

/// A parameter that counts the elements of an array argument (`NumViews`, `surface_count`): an
/// interface out-pointer after one may be an array.
fn is_count(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n.starts_with("num") || n.starts_with("pnum") || n.ends_with("count")
}

/// How each parameter of `m` crosses, or why the method cannot be remoted.
fn params(reg: &Registry, m: &Method) -> Result<Vec<Cross>, String> {
    let last = m.params.len().saturating_sub(1);
    let mut out = Vec::new();
    for (i, p) in m.params.iter().enumerate() {
        let b = base(reg, &p.ty.base)?;
        // An array parameter is a pointer to its first element.
        let levels = p.ty.ptrs.len() + usize::from(!p.array.is_empty());
        let name = &p.name;
        let cross = match (b, levels) {
            (Base::Float, 0) => return Err(format!("`{name}` is a float passed by value")),
            (Base::Aggregate(_), 0) => {
                return Err(format!("`{name}` is a structure passed by value"))
            }
            (Base::FnPtr, _) => return Err(format!("`{name}` is a function pointer")),
            (Base::Int { wide }, 0) => Cross::Int { wide },
            (Base::Ptr, 0) => Cross::Ptr(wow(reg, m, i)),
            (Base::Void | Base::Interface, 0) => return Err(format!("`{name}` has no type")),
            (Base::Interface, 1) if p.array.is_empty() => Cross::InIface,
            (Base::Interface, 2) => {
                // `I *const *pp` (or `I *pp[N]`) is an array passed in; `I **pp` an out-pointer,
                // a single one only when last and not counted.
                if p.ty.is_const || p.ty.ptrs.first() == Some(&true) || !p.array.is_empty() {
                    return Err(format!("`{name}` is an array of interface pointers"));
                }
                if i != last {
                    return Err(format!(
                        "`{name}` is an interface out-pointer that is not the last parameter"
                    ));
                }
                if let Some(c) = m.params[..i].iter().find(|q| is_count(&q.name)) {
                    return Err(format!(
                        "`{name}` may be an array of interface pointers (counted by `{}`)",
                        c.name
                    ));
                }
                Cross::OutIface(p.ty.base.clone())
            }
            (Base::Interface, _) => {
                return Err(format!("`{name}` is an array of interface pointers"))
            }
            (Base::Void, 2) if p.array.is_empty() => {
                match m.params[..i]
                    .iter()
                    .position(|q| q.ty.base == "REFIID" && q.ty.ptrs.is_empty())
                {
                    Some(k) => Cross::OutIfaceRiid(k),
                    // No IID names it: a pointer to data the method returns (`Map`).
                    None => Cross::Ptr(wow(reg, m, i)),
                }
            }
            (Base::Aggregate(a), _) if holds_code_or_object(reg, &a.members) => {
                return Err(format!(
                    "`{name}` points at a structure holding interface or function pointers"
                ))
            }
            _ => Cross::Ptr(wow(reg, m, i)),
        };
        out.push(cross);
    }
    Ok(out)
}

/// What `m` returns, or why its result cannot cross as a 64-bit integer.
fn ret(reg: &Registry, m: &Method) -> Result<Ret, String> {
    let r = &m.ret;
    Ok(match (base(reg, &r.base)?, r.ptrs.len()) {
        (Base::Void, 0) => Ret::Void,
        (Base::Int { wide }, 0) => Ret::Int { wide },
        (Base::Ptr, 0) => Ret::Ptr,
        (Base::Float, 0) => return Err("it returns a float".into()),
        (Base::Aggregate(_), 0) => return Err("it returns a structure".into()),
        (Base::Interface, _) => return Err("it returns an interface pointer".into()),
        (Base::FnPtr, _) => return Err("it returns a function pointer".into()),
        _ => Ret::Ptr,
    })
}

/// How `m` crosses: its parameters and result, or why it cannot.
fn remote_plan(reg: &Registry, m: &Method) -> Result<(Vec<Cross>, Ret), String> {
    let p = params(reg, m)?;
    Ok((p, ret(reg, m)?))
}

/// The interfaces that get stand-ins: the model's, less IUnknown and dxcl's own.
fn stand_in_interfaces(modules: &[Module]) -> Vec<&Interface> {
    modules
        .iter()
        .flat_map(|m| &m.items)
        .filter_map(|item| match &item.kind {
            ItemKind::Interface(i) if i.name != "IUnknown" && !OWN.contains(&i.name.as_str()) => {
                Some(i)
            }
            _ => None,
        })
        .collect()
}

/// The 64-bit slot of a parameter.
fn slot(name: &str, cross: &Cross) -> String {
    match cross {
        Cross::Int { wide: true } => name.to_string(),
        Cross::Int { wide: false } => format!("{name} as u64"),
        _ => format!("{name} as usize as u64"),
    }
}

fn pointee(p: &Pointee) -> String {
    match p {
        Pointee::Same(t) => format!("Pointee::Bytes(std::mem::size_of::<{t}>())"),
        Pointee::Fields(f) => {
            let f: Vec<String> = f
                .iter()
                .map(|f| match f {
                    Field::Word => "Field::Word".into(),
                    Field::Data(t) => format!("Field::of::<{t}>()"),
                })
                .collect();
            format!("Pointee::Fields(const {{ &[{}] }})", f.join(", "))
        }
        Pointee::BytesArg(k) => format!("Pointee::BytesArg({k})"),
        Pointee::BytesAt(k) => format!("Pointee::BytesAt({k})"),
    }
}

fn kind(cross: &Cross) -> String {
    match cross {
        Cross::Int { .. } | Cross::Ptr(Wow::Value) => "Kind::Value".into(),
        Cross::Ptr(Wow::Data {
            back: false,
            pointee: p,
        }) => format!("Kind::In({})", pointee(p)),
        Cross::Ptr(Wow::Data {
            back: true,
            pointee: p,
        }) => format!("Kind::InOut({})", pointee(p)),
        Cross::Ptr(Wow::No(why)) => format!("Kind::Not32({why:?})"),
        Cross::InIface => "Kind::InIface".into(),
        Cross::OutIface(i) => format!("Kind::OutIface(&IID_{i})"),
        Cross::OutIfaceRiid(k) => format!("Kind::OutIfaceRiid({k})"),
    }
}

struct Counts {
    remoted: usize,
    refused: usize,
    max_args: usize,
}

/// One method's function: `<Iface>_<Method>`, the type of its vtable field.
fn method_fn(
    out: &mut String,
    reg: &Registry,
    iface: &str,
    m: &Method,
    index: usize,
    counts: &mut Counts,
) -> Result<(), String> {
    let void = m.ret.base == "void" && m.ret.ptrs.is_empty();
    let ret_ty = if void {
        String::new()
    } else {
        format!(" -> {}", rust_type(&m.ret))
    };
    let name = format!("{iface}_{}", m.name);
    match remote_plan(reg, m) {
        Ok((crosses, r)) => {
            counts.remoted += 1;
            counts.max_args = counts.max_args.max(m.params.len());
            let mut args = vec![format!("This: *mut {iface}")];
            args.extend(
                m.params
                    .iter()
                    .map(|p| format!("{}: {}", ident(&p.name), rust_param_type(p))),
            );
            let slots: Vec<String> = m
                .params
                .iter()
                .zip(&crosses)
                .map(|(p, c)| slot(&ident(&p.name), c))
                .collect();
            let kinds: Vec<String> = crosses.iter().map(kind).collect();
            writeln!(
                out,
                "/// `{iface}::{}`, slot {index}.\nunsafe extern \"system\" fn {name}({}){ret_ty} {{",
                m.name,
                args.join(", ")
            )
            .unwrap();
            writeln!(out, "    // SAFETY: `This` is a stand-in (this table is its own) and the arguments are what the method\n    // takes; `call` runs the method of the Windows object it stands for.").unwrap();
            let call = format!(
                "unsafe {{ call(This.cast(), {index}, &[{}], &[{}]) }}",
                slots.join(", "),
                kinds.join(", ")
            );
            match r {
                Ret::Void => writeln!(out, "    {call};").unwrap(),
                Ret::Int { wide: true } => writeln!(out, "    {call}").unwrap(),
                Ret::Int { wide: false } => {
                    writeln!(out, "    let r = {call};\n    r as {}", rust_type(&m.ret)).unwrap()
                }
                Ret::Ptr => writeln!(
                    out,
                    "    let r = {call};\n    r as usize as {}",
                    rust_type(&m.ret)
                )
                .unwrap(),
            }
            writeln!(out, "}}").unwrap();
        }
        Err(why) => {
            counts.refused += 1;
            let mut args = vec![format!("_: *mut {iface}")];
            args.extend(
                m.params
                    .iter()
                    .map(|p| format!("_: {}", rust_param_type(p))),
            );
            let body = if void {
                "{}".to_string()
            } else {
                format!("{{\n    {}\n}}", reg.zero_value(&m.ret))
            };
            writeln!(
                out,
                "/// `{iface}::{}`, slot {index}: not remoted, {why}.\nextern \"system\" fn {name}({}){ret_ty} {body}",
                m.name,
                args.join(", ")
            )
            .unwrap();
        }
    }
    Ok(())
}

/// `gen_stand_ins.rs` and the argument count.
fn stand_in_tables(reg: &Registry, modules: &[Module]) -> Result<(String, Counts), String> {
    let ifaces = stand_in_interfaces(modules);
    let mut counts = Counts {
        remoted: 0,
        refused: 0,
        max_args: 2, // QueryInterface's, which `remote::query_interface` remotes
    };
    let mut body = String::new();
    for i in &ifaces {
        let chain = reg.chain(i);
        // The flattened vtable's first slot of each interface's own methods.
        let first: usize = chain[..chain.len() - 1]
            .iter()
            .map(|c| c.methods.len())
            .sum();
        let name = &i.name;
        let parent = i.parent.as_deref().ok_or(format!("{name} has no parent"))?;
        let parent_const = if parent == "IUnknown" {
            "IUNKNOWN".to_string()
        } else {
            format!("{parent}_VTBL")
        };
        writeln!(
            body,
            "\n// {name}: {{{}}}.\n",
            crate::rust::guid_text(&i.iid)
        )
        .unwrap();
        writeln!(
            body,
            "/// The stand-in table of `{name}`.\npub static {name}_REMOTE: {name}Vtbl = {name}_VTBL;"
        )
        .unwrap();
        writeln!(
            body,
            "const {name}_VTBL: {name}Vtbl = {name}Vtbl {{\n    base: {parent_const},"
        )
        .unwrap();
        for m in &i.methods {
            writeln!(body, "    {}: {name}_{},", m.name, m.name).unwrap();
        }
        writeln!(body, "}};").unwrap();
        for (k, m) in i.methods.iter().enumerate() {
            method_fn(&mut body, reg, name, m, first + k, &mut counts)?;
        }
    }
    let mut out = String::new();
    writeln!(
        out,
        "//! The Wine bridge's COM stand-ins' method tables (`remote.rs`): generated by dxcl-gen from the\n\
         //! interface description `crates/dxcl-abi/api`; do not edit.\n\
         //!\n\
         //! {} interfaces; {} methods remoted, {} not (their slots fail without calling the Windows\n\
         //! object: `E_NOTIMPL`, 0 or nothing; each says why).\n",
        ifaces.len(),
        counts.remoted,
        counts.refused
    )
    .unwrap();
    writeln!(
        out,
        "// The SDK's names (`ID3D11Device_CreateBuffer`, `pDesc`) and argument counts.\n\
         #![allow(non_snake_case, non_upper_case_globals, clippy::too_many_arguments)]\n\n\
         use dxcl_abi::*;\n\n\
         use crate::remote::{{add_ref, call, query_interface, release, Field, Kind, Pointee}};\n"
    )
    .unwrap();
    writeln!(
        out,
        "/// Every table's IUnknown part: the stand-ins' own methods.\n\
         const IUNKNOWN: IUnknownVtbl = IUnknownVtbl {{\n    QueryInterface: query_interface,\n    AddRef: add_ref,\n    Release: release,\n}};\n"
    )
    .unwrap();
    writeln!(
        out,
        "/// The stand-in table of interface `iid`, if it has one.\n\
         pub fn remote_vtable(iid: &GUID) -> Option<*const c_void> {{\n    \
         Some(match *iid {{\n        \
         IID_IUnknown => std::ptr::from_ref(&crate::remote::IUNKNOWN_REMOTE).cast(),"
    )
    .unwrap();
    for i in &ifaces {
        writeln!(
            out,
            "        IID_{0} => std::ptr::from_ref(&{0}_REMOTE).cast(),",
            i.name
        )
        .unwrap();
    }
    writeln!(out, "        _ => return None,\n    }})\n}}").unwrap();
    out.push_str(&body);
    Ok((out, counts))
}

fn limits_rs(max_args: usize) -> String {
    format!(
        "//! Generated by dxcl-gen from the interface description (crates/dxcl-abi/api): do not edit.\n\n\
         /// The most arguments (less the object) a remoted COM method takes: `DXCL_MAX_METHOD_ARGS`\n\
         /// (wine/gen/remote.h).\n\
         pub const MAX_METHOD_ARGS: usize = {max_args};\n"
    )
}

fn remote_h(max_args: usize) -> String {
    format!(
        "/* Generated by dxcl-gen from the interface description (crates/dxcl-abi/api): do not edit. */\n\
         #ifndef DXCL_WINE_REMOTE_H\n#define DXCL_WINE_REMOTE_H\n\n\
         /* The most arguments (less the object) a remoted COM method takes. */\n\
         #define DXCL_MAX_METHOD_ARGS {max_args}\n\n#endif\n"
    )
}

pub fn outputs(reg: &Registry, modules: &[Module]) -> Result<Vec<(PathBuf, String)>, String> {
    let (rs, counts) = stand_in_tables(reg, modules)?;
    Ok(vec![
        (PathBuf::from("crates/dxcl-wine/src/gen_stand_ins.rs"), rs),
        (
            PathBuf::from("crates/dxcl-wine/src/gen_limits.rs"),
            limits_rs(counts.max_args),
        ),
        (
            PathBuf::from("wine/gen/remote.h"),
            remote_h(counts.max_args),
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse_module;

    const TYPES: &str = "header t.h\n\
        scalar UINT | u32 | uint32_t\nscalar UINT64 | u64 | uint64_t\nscalar FLOAT | f32 | float\n\
        scalar HRESULT | i32 | int32_t\nscalar ULONG | u32 | uint32_t\nscalar REFIID | *const GUID | -\n\
        struct GUID\n    UINT a\nend\nstruct BOX\n    UINT left\nend\n\
        interface IUnknown {00000000-0000-0000-c000-000000000046}\n    HRESULT QueryInterface(REFIID riid, void **ppvObject)\n    ULONG AddRef()\n    ULONG Release()\nend\n\
        interface IRes : IUnknown {00000000-0000-0000-0000-000000000001}\nend\n";

    /// The plan of each method of interface `I` declared by `methods`.
    fn plans(methods: &str) -> Vec<Result<(Vec<Cross>, Ret), String>> {
        let text = format!(
            "{TYPES}interface I : IUnknown {{00000000-0000-0000-0000-000000000002}}\n{methods}end\n"
        );
        let modules = [parse_module("t", "t.api", &text).unwrap()];
        let reg = Registry::new(&modules).unwrap();
        reg.validate(&modules).unwrap();
        let i = reg.interface("I").unwrap();
        i.methods.iter().map(|m| remote_plan(&reg, m)).collect()
    }

    #[test]
    fn a_last_interface_out_pointer_is_out_iface() {
        let p = plans("    HRESULT Make(const BOX *pDesc, UINT64 key, IRes **ppRes)\n");
        assert_eq!(
            p[0],
            Ok((
                vec![
                    Cross::Ptr(same(false, "BOX")),
                    Cross::Int { wide: true },
                    Cross::OutIface("IRes".into())
                ],
                Ret::Int { wide: false }
            ))
        );
        // Not last: refused.
        let p = plans("    void Get(IRes **ppRes, UINT *pValue)\n");
        assert!(p[0].as_ref().unwrap_err().contains("not the last"), "{p:?}");
    }

    #[test]
    fn interface_arrays_are_not_remoted() {
        let p = plans(
            "    void Set(UINT StartSlot, UINT NumViews, IRes *const *ppViews)\n\
             \x20   void Get(UINT NumViews, IRes **ppViews)\n\
             \x20   HRESULT Make(const BOX *pDesc, UINT surface_count, IRes **ppSurface)\n\
             \x20   void Use(IRes *pRes, IUnknown *pUnk)\n",
        );
        assert!(p[0].as_ref().unwrap_err().contains("array"), "{p:?}");
        assert!(p[1].as_ref().unwrap_err().contains("NumViews"), "{p:?}");
        assert!(
            p[2].as_ref().unwrap_err().contains("surface_count"),
            "{p:?}"
        );
        assert_eq!(p[3], Ok((vec![Cross::InIface, Cross::InIface], Ret::Void)));
    }

    #[test]
    fn floats_and_structures_by_value_are_not_remoted() {
        let p = plans(
            "    void SetLOD(IRes *pRes, FLOAT MinLOD)\n\
             \x20   FLOAT GetLOD(IRes *pRes)\n\
             \x20   void SetBox(BOX b)\n\
             \x20   void Clear(IRes *pView, const FLOAT Color[4])\n",
        );
        assert!(p[0].as_ref().unwrap_err().contains("float"), "{p:?}");
        assert!(
            p[1].as_ref().unwrap_err().contains("returns a float"),
            "{p:?}"
        );
        assert!(p[2].as_ref().unwrap_err().contains("structure"), "{p:?}");
        // A float array is a pointer to data.
        assert_eq!(
            p[3],
            Ok((
                vec![Cross::InIface, Cross::Ptr(same(false, "[FLOAT; 4]"))],
                Ret::Void
            ))
        );
    }

    #[test]
    fn void_out_pointer_takes_its_interface_from_the_riid() {
        let p = plans(
            "    HRESULT GetBuffer(UINT Buffer, REFIID riid, void **ppSurface)\n\
             \x20   HRESULT Map(UINT Subresource, void **ppData)\n",
        );
        assert_eq!(
            p[0],
            Ok((
                vec![
                    Cross::Int { wide: false },
                    Cross::Ptr(same(false, "GUID")),
                    Cross::OutIfaceRiid(1)
                ],
                Ret::Int { wide: false }
            ))
        );
        // No IID names what it points at: plain data.
        assert_eq!(
            p[1].as_ref().unwrap().0,
            [
                Cross::Int { wide: false },
                Cross::Ptr(Wow::Data {
                    back: true,
                    pointee: Pointee::Fields(vec![Field::Word])
                })
            ]
        );
    }

    fn same(back: bool, t: &str) -> Wow {
        Wow::Data {
            back,
            pointee: Pointee::Same(t.into()),
        }
    }

    #[test]
    fn a_32_bit_program_gets_each_pointee_in_its_own_layout_or_not_at_all() {
        let text = format!(
            "{TYPES}scalar HANDLE | *mut c_void | void *\nscalar SIZE_T | usize | size_t\n\
             struct MAPPED\n    void *pData\n    UINT RowPitch\nend\n\
             struct MIXED\n    void *pData\n    UINT64 Size\nend\n\
             struct OUTER\n    MIXED inner\nend\n\
             interface I : IUnknown {{00000000-0000-0000-0000-000000000002}}\n\
             \x20   HRESULT Map(UINT Subresource, MAPPED *pMapped)\n\
             \x20   HRESULT Set(REFIID guid, UINT DataSize, const void *pData)\n\
             \x20   HRESULT Get(REFIID guid, UINT *pDataSize, void *pData)\n\
             \x20   void Views(UINT NumViews, const BOX *pBoxes)\n\
             \x20   void Bytes(const void *pData)\n\
             \x20   void Mixed(MIXED *pMixed)\n\
             \x20   void Shared(HANDLE h, SIZE_T *pSize)\n\
             \x20   void Nested(OUTER *pOuter)\n\
             end\n"
        );
        let modules = [parse_module("t", "t.api", &text).unwrap()];
        let reg = Registry::new(&modules).unwrap();
        let i = reg.interface("I").unwrap();
        let plan = |k: usize| remote_plan(&reg, &i.methods[k]).unwrap().0;
        let data = |back, pointee| Cross::Ptr(Wow::Data { back, pointee });
        assert_eq!(
            plan(0)[1],
            data(
                true,
                Pointee::Fields(vec![Field::Word, Field::Data("UINT".into())])
            )
        );
        assert_eq!(plan(1)[2], data(false, Pointee::BytesArg(1)));
        assert_eq!(plan(2)[1], data(true, Pointee::Same("UINT".into())));
        assert_eq!(plan(2)[2], data(true, Pointee::BytesAt(1)));
        let refused = |c: &Cross, what: &str| match c {
            Cross::Ptr(Wow::No(why)) => assert!(why.contains(what), "{why}"),
            other => panic!("{other:?}"),
        };
        refused(&plan(3)[1], "NumViews");
        refused(&plan(4)[0], "no stated size");
        assert_eq!(
            plan(5)[0],
            data(
                true,
                Pointee::Fields(vec![Field::Word, Field::Data("UINT64".into())])
            )
        );
        assert_eq!(plan(6)[0], Cross::Ptr(Wow::Value));
        refused(&plan(7)[0], "another 32-bit layout");
        assert_eq!(plan(6)[1], data(true, Pointee::Fields(vec![Field::Word])));
    }

    #[test]
    fn slots_count_the_whole_chain_and_every_table_is_found_by_iid() {
        let text = format!(
            "{TYPES}interface J : IRes {{00000000-0000-0000-0000-000000000003}}\n    ULONG Count()\n    void Set(FLOAT f)\nend\n"
        );
        let modules = [parse_module("t", "t.api", &text).unwrap()];
        let reg = Registry::new(&modules).unwrap();
        let (rs, counts) = stand_in_tables(&reg, &modules).unwrap();
        assert_eq!((counts.remoted, counts.refused), (1, 1));
        assert!(rs.contains("fn J_Count(This: *mut J) -> ULONG"), "{rs}");
        assert!(rs.contains("call(This.cast(), 3, &[], &[])"), "{rs}");
        assert!(rs.contains("extern \"system\" fn J_Set(_: *mut J, _: FLOAT) {}"));
        assert!(rs.contains("base: IRes_VTBL"));
        assert!(rs.contains("IID_J => std::ptr::from_ref(&J_REMOTE).cast()"));
        assert!(rs.contains("IID_IRes => std::ptr::from_ref(&IRes_REMOTE).cast()"));
    }
}

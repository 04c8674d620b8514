//! Emits `crates/dxcl-abi/src/gen/*.rs`.

use std::fmt::Write;

use crate::ctype::{rust_field_type, rust_param_type, rust_type};
use crate::lit;
use crate::model::*;
use crate::registry::Registry;

const KEYWORDS: &[&str] = &[
    "type", "ref", "in", "fn", "mod", "use", "self", "match", "box", "loop", "move", "where",
    "final", "impl", "struct", "enum", "const", "static", "override",
];

pub fn ident(name: &str) -> String {
    if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

fn doc(out: &mut String, indent: &str, doc: &[String]) {
    for d in doc {
        if d.is_empty() {
            writeln!(out, "{indent}///").unwrap();
        } else {
            writeln!(out, "{indent}/// {d}").unwrap();
        }
    }
}

/// Field name and type name of the `index`-th anonymous member of `owner` (of `count`).
pub fn anon_names(owner: &str, index: usize, count: usize) -> (String, String) {
    let field = if count == 1 {
        "Anonymous".to_string()
    } else {
        format!("Anonymous{}", index + 1)
    };
    (field, format!("{owner}_{index}"))
}

fn fn_signature(this: Option<&str>, params: &[Decl], ret: &CType) -> String {
    let mut args: Vec<String> = Vec::new();
    if let Some(t) = this {
        args.push(format!("This: *mut {t}"));
    }
    args.extend(
        params
            .iter()
            .map(|p| format!("{}: {}", ident(&p.name), rust_param_type(p))),
    );
    let ret = if ret.base == "void" && ret.ptrs.is_empty() {
        String::new()
    } else {
        format!(" -> {}", rust_type(ret))
    };
    format!("unsafe extern \"system\" fn({}){ret}", args.join(", "))
}

fn aggregate(out: &mut String, reg: &Registry, agg: &Aggregate, item_doc: &[String]) {
    let count = agg
        .members
        .iter()
        .filter(|m| matches!(m, Member::Anon { .. }))
        .count();
    let mut nested = Vec::new();
    doc(out, "", item_doc);
    let mut derives = vec!["Clone", "Copy"];
    if !reg.has_union(agg) {
        derives.extend(["Debug", "PartialEq"]);
        if !reg.has_float(agg) {
            derives.extend(["Eq", "Hash"]);
        }
    }
    writeln!(out, "#[repr(C)]\n#[derive({})]", derives.join(", ")).unwrap();
    writeln!(
        out,
        "pub {} {} {{",
        if agg.is_union { "union" } else { "struct" },
        agg.name
    )
    .unwrap();
    let mut k = 0;
    for m in &agg.members {
        match m {
            Member::Field { decl, doc: d } => {
                doc(out, "    ", d);
                writeln!(
                    out,
                    "    pub {}: {},",
                    ident(&decl.name),
                    rust_field_type(decl)
                )
                .unwrap();
            }
            Member::Anon { is_union, members } => {
                let (field, ty) = anon_names(&agg.name, k, count);
                k += 1;
                writeln!(out, "    pub {field}: {ty},").unwrap();
                nested.push(Aggregate {
                    name: ty,
                    is_union: *is_union,
                    members: members.clone(),
                });
            }
        }
    }
    writeln!(out, "}}").unwrap();
    if !reg.has_fn_pointer(agg) {
        writeln!(
            out,
            "impl Default for {} {{\n    fn default() -> Self {{",
            agg.name
        )
        .unwrap();
        writeln!(out, "        // SAFETY: every field is an integer, a float, a raw pointer, or an array, struct or union of\n        // those, for all of which all-zero bits is a valid value.").unwrap();
        writeln!(out, "        unsafe {{ core::mem::zeroed() }}\n    }}\n}}").unwrap();
    }
    for n in &nested {
        writeln!(out).unwrap();
        aggregate(
            out,
            reg,
            n,
            &[format!("Anonymous member of [`{}`].", agg.name)],
        );
    }
}

fn guid_expr(g: &Guid) -> String {
    let d4: Vec<String> = g.data4.iter().map(|b| format!("0x{b:02x}")).collect();
    format!(
        "GUID {{ Data1: 0x{:08x}, Data2: 0x{:04x}, Data3: 0x{:04x}, Data4: [{}] }}",
        g.data1,
        g.data2,
        g.data3,
        d4.join(", ")
    )
}

pub fn guid_text(g: &Guid) -> String {
    let d4: String = g.data4.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{:08x}-{:04x}-{:04x}-{}-{}",
        g.data1,
        g.data2,
        g.data3,
        &d4[..4],
        &d4[4..]
    )
}

fn interface(
    out: &mut String,
    stubs: &mut String,
    reg: &Registry,
    i: &Interface,
    item_doc: &[String],
) {
    let name = &i.name;
    doc(out, "", item_doc);
    if !item_doc.is_empty() {
        writeln!(out, "///").unwrap();
    }
    writeln!(out, "/// IID `{{{}}}`.", guid_text(&i.iid)).unwrap();
    writeln!(
        out,
        "#[repr(C)]\npub struct {name} {{\n    pub lpVtbl: *const {name}Vtbl,\n}}"
    )
    .unwrap();
    writeln!(out, "pub const IID_{name}: GUID = {};", guid_expr(&i.iid)).unwrap();
    writeln!(out, "impl crate::Interface for {name} {{\n    const IID: GUID = IID_{name};\n    type Vtbl = {name}Vtbl;\n}}").unwrap();
    writeln!(
        out,
        "/// The vtable of [`{name}`]: its parent's vtable, then its own methods in SDK order."
    )
    .unwrap();
    writeln!(
        out,
        "#[repr(C)]\n#[derive(Clone, Copy)]\npub struct {name}Vtbl {{"
    )
    .unwrap();
    if let Some(p) = &i.parent {
        writeln!(out, "    pub base: {p}Vtbl,").unwrap();
    }
    for m in &i.methods {
        doc(out, "    ", &m.doc);
        writeln!(
            out,
            "    pub {}: {},",
            m.name,
            fn_signature(Some(name), &m.params, &m.ret)
        )
        .unwrap();
    }
    writeln!(out, "}}").unwrap();
    writeln!(out, "impl {name}Vtbl {{").unwrap();
    writeln!(out, "    /// Every method a stub: HRESULT methods return `E_NOTIMPL`, void methods do nothing, others return 0.").unwrap();
    writeln!(out, "    pub const NOT_IMPLEMENTED: Self = Self {{").unwrap();
    if let Some(p) = &i.parent {
        writeln!(out, "        base: {p}Vtbl::NOT_IMPLEMENTED,").unwrap();
    }
    for m in &i.methods {
        writeln!(
            out,
            "        {}: not_implemented::{name}_{},",
            m.name, m.name
        )
        .unwrap();
        let mut args = vec![format!("_: *mut {name}")];
        args.extend(
            m.params
                .iter()
                .map(|p| format!("_: {}", rust_param_type(p))),
        );
        let void = m.ret.base == "void" && m.ret.ptrs.is_empty();
        let ret = if void {
            String::new()
        } else {
            format!(" -> {}", rust_type(&m.ret))
        };
        let body = if void {
            "{}".to_string()
        } else {
            format!("{{\n        {}\n    }}", reg.zero_value(&m.ret))
        };
        writeln!(
            stubs,
            "    pub(super) extern \"system\" fn {name}_{}({}){ret} {body}",
            m.name,
            args.join(", ")
        )
        .unwrap();
    }
    writeln!(out, "    }};\n}}").unwrap();
}

/// The Rust source of one module.
pub fn module(reg: &Registry, m: &Module) -> Result<String, String> {
    let mut out = String::new();
    let mut stubs = String::new();
    writeln!(
        out,
        "//! `{}`: generated by dxcl-gen from `crates/dxcl-abi/api/{}.api`; do not edit.\n",
        m.header, m.name
    )
    .unwrap();
    writeln!(
        out,
        "#[allow(unused_imports)] // a module may use none of the crate's names\nuse crate::*;"
    )
    .unwrap();
    for item in &m.items {
        let before = out.len();
        match &item.kind {
            ItemKind::Scalar { name, rust, .. } => {
                doc(&mut out, "", &item.doc);
                writeln!(out, "pub type {name} = {rust};").unwrap();
            }
            ItemKind::Typedef { name, target } => {
                doc(&mut out, "", &item.doc);
                writeln!(out, "pub type {name} = {target};").unwrap();
            }
            ItemKind::Const { name, ty, lit: l } => {
                let prim = reg
                    .prim_of(ty)
                    .ok_or_else(|| format!("{name}: `{ty}` is not a scalar type"))?;
                let value = if prim.starts_with('f') {
                    if !lit::is_float(l) && lit::int_value(l).is_none() {
                        return Err(format!("{name}: `{l}` is not a number"));
                    }
                    if lit::is_float(l) {
                        l.clone()
                    } else {
                        format!("{l}.0")
                    }
                } else {
                    lit::rust_int(l, prim).map_err(|e| format!("{name}: {e}"))?
                };
                doc(&mut out, "", &item.doc);
                writeln!(out, "pub const {name}: {ty} = {value};").unwrap();
            }
            ItemKind::Enum { name, members } => {
                doc(&mut out, "", &item.doc);
                writeln!(out, "pub type {name} = i32;").unwrap();
                for mem in members {
                    doc(&mut out, "", &mem.doc);
                    let v =
                        lit::rust_int(&mem.lit, "i32").map_err(|e| format!("{}: {e}", mem.name))?;
                    writeln!(out, "pub const {}: {name} = {v};", mem.name).unwrap();
                }
            }
            ItemKind::Aggregate(a) => aggregate(&mut out, reg, a, &item.doc),
            ItemKind::FnPtr { name, ret, params } => {
                doc(&mut out, "", &item.doc);
                writeln!(
                    out,
                    "pub type {name} = Option<{}>;",
                    fn_signature(None, params, ret)
                )
                .unwrap();
            }
            ItemKind::Function { name, ret, params } => {
                doc(&mut out, "", &item.doc);
                writeln!(
                    out,
                    "/// The signature of `{name}`, which the runtime exports."
                )
                .unwrap();
                writeln!(
                    out,
                    "pub type PFN_{name} = {};",
                    fn_signature(None, params, ret)
                )
                .unwrap();
            }
            ItemKind::Interface(i) => interface(&mut out, &mut stubs, reg, i, &item.doc),
            ItemKind::Comment => {
                for d in &item.doc {
                    writeln!(out, "// {d}").unwrap();
                }
            }
            ItemKind::CVerbatim(_) | ItemKind::IncludeAfter(_) => {}
        }
        if out.len() != before {
            out.insert(before, '\n');
        }
    }
    if !stubs.is_empty() {
        writeln!(out, "\n/// The stubs of the `NOT_IMPLEMENTED` vtables.\nmod not_implemented {{\n    use crate::*;\n").unwrap();
        out.push_str(&stubs);
        writeln!(out, "}}").unwrap();
    }
    Ok(out)
}

/// `gen/mod.rs`: the module list, all re-exported flat.
pub fn mod_rs(modules: &[Module]) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "//! Generated by dxcl-gen from `crates/dxcl-abi/api/*.api`; do not edit."
    )
    .unwrap();
    for m in modules {
        writeln!(out, "\npub mod {};\npub use self::{}::*;", m.name, m.name).unwrap();
    }
    out
}

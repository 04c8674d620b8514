//! Emits the C/C++ headers in `include/`.

use std::fmt::Write;

use crate::ctype::{c_decl, c_type};
use crate::lit;
use crate::model::*;
use crate::registry::Registry;
use crate::rust::guid_text;

fn comment(out: &mut String, indent: &str, doc: &[String]) {
    match doc {
        [] => {}
        [one] => writeln!(out, "{indent}/* {one} */").unwrap(),
        _ => {
            writeln!(out, "{indent}/*").unwrap();
            for d in doc {
                writeln!(out, "{indent} * {d}").unwrap();
            }
            writeln!(out, "{indent} */").unwrap();
        }
    }
}

fn params(this: Option<&str>, params: &[Decl]) -> String {
    let mut all: Vec<String> = this.map(|t| format!("{t} *This")).into_iter().collect();
    all.extend(params.iter().map(c_decl));
    if all.is_empty() {
        "void".into()
    } else {
        all.join(", ")
    }
}

fn ret(ty: &CType) -> String {
    let t = c_type(ty);
    if t.ends_with('*') {
        t
    } else {
        t + " "
    }
}

fn members(out: &mut String, indent: &str, list: &[Member]) {
    for m in list {
        match m {
            Member::Field { decl, doc } => {
                comment(out, indent, doc);
                writeln!(out, "{indent}{};", c_decl(decl)).unwrap();
            }
            Member::Anon {
                is_union,
                members: inner,
            } => {
                writeln!(
                    out,
                    "{indent}{} {{",
                    if *is_union { "union" } else { "struct" }
                )
                .unwrap();
                members(out, &format!("{indent}    "), inner);
                writeln!(out, "{indent}}};").unwrap();
            }
        }
    }
}

fn guid_init(g: &Guid) -> String {
    let d4: Vec<String> = g.data4.iter().map(|b| format!("0x{b:02x}")).collect();
    format!(
        "0x{:08x}, 0x{:04x}, 0x{:04x}, {}",
        g.data1,
        g.data2,
        g.data3,
        d4.join(", ")
    )
}

fn interface(out: &mut String, reg: &Registry, i: &Interface, doc: &[String]) {
    let name = &i.name;
    writeln!(out, "/* {name} {{{}}} */", guid_text(&i.iid)).unwrap();
    comment(out, "", doc);
    let g = guid_init(&i.iid);
    let d4: Vec<String> = i.iid.data4.iter().map(|b| format!("0x{b:02x}")).collect();
    let (d1, d2, d3) = (i.iid.data1, i.iid.data2, i.iid.data3);
    writeln!(
        out,
        "static const IID IID_{name} DXCL_UNUSED = {{0x{d1:08x}, 0x{d2:04x}, 0x{d3:04x}, {{{}}}}};",
        d4.join(", ")
    )
    .unwrap();
    // C++: a class with pure virtual methods, whose vtable the compiler lays out in declaration order.
    writeln!(out, "#if defined(__cplusplus) && !defined(CINTERFACE)").unwrap();
    match &i.parent {
        Some(p) => writeln!(out, "struct {name} : public {p} {{").unwrap(),
        None => writeln!(out, "struct {name} {{").unwrap(),
    }
    for m in &i.methods {
        comment(out, "    ", &m.doc);
        let ps = if m.params.is_empty() {
            String::new()
        } else {
            params(None, &m.params)
        };
        writeln!(
            out,
            "    virtual {}STDMETHODCALLTYPE {}({ps}) = 0;",
            ret(&m.ret),
            m.name
        )
        .unwrap();
    }
    if i.parent.is_none() {
        writeln!(out, "    template <class Q> HRESULT QueryInterface(Q **pp) {{ return QueryInterface(__uuidof(Q), (void **)pp); }}").unwrap();
    }
    writeln!(out, "}};").unwrap();
    writeln!(out, "extern \"C++\" {{ DXCL_DEFINE_UUIDOF({name}, {g}) }}").unwrap();
    writeln!(out, "#else").unwrap();
    // C: a flat vtable holding every method, inherited ones first.
    writeln!(out, "typedef struct {name}Vtbl {{").unwrap();
    for anc in reg.chain(i) {
        writeln!(out, "    /* {} */", anc.name).unwrap();
        for m in &anc.methods {
            writeln!(
                out,
                "    {}(STDMETHODCALLTYPE *{})({});",
                ret(&m.ret),
                m.name,
                params(Some(name), &m.params)
            )
            .unwrap();
        }
    }
    writeln!(out, "}} {name}Vtbl;").unwrap();
    writeln!(
        out,
        "struct {name} {{\n    CONST_VTBL struct {name}Vtbl *lpVtbl;\n}};"
    )
    .unwrap();
    writeln!(out, "#ifdef COBJMACROS").unwrap();
    for anc in reg.chain(i) {
        for m in &anc.methods {
            let mut names = vec!["This".to_string()];
            names.extend(m.params.iter().map(|p| p.name.clone()));
            let names = names.join(", ");
            writeln!(
                out,
                "#define {name}_{}({names}) ((This)->lpVtbl->{}({names}))",
                m.name, m.name
            )
            .unwrap();
        }
    }
    writeln!(out, "#endif").unwrap();
    writeln!(out, "#endif").unwrap();
}

/// The header of one module.
pub fn module(reg: &Registry, m: &Module) -> Result<String, String> {
    let mut out = String::new();
    let guard = format!(
        "DXCL_{}_",
        m.header.to_ascii_uppercase().replace(['.', '/'], "_")
    );
    writeln!(
        out,
        "/* {}: generated by dxcl-gen from crates/dxcl-abi/api/{}.api; do not edit. */",
        m.header, m.name
    )
    .unwrap();
    writeln!(out, "#ifndef {guard}\n#define {guard}\n").unwrap();
    for inc in &m.includes {
        writeln!(out, "#include <{inc}>").unwrap();
    }
    let ifaces: Vec<&str> = m
        .items
        .iter()
        .filter(|i| matches!(i.kind, ItemKind::Interface(_)))
        .filter_map(|i| i.kind.name())
        .collect();
    if !ifaces.is_empty() {
        writeln!(out).unwrap();
        for i in ifaces {
            writeln!(out, "typedef struct {i} {i};").unwrap();
        }
    }
    let mut in_functions = false;
    for item in &m.items {
        let is_fn = matches!(item.kind, ItemKind::Function { .. });
        if in_functions && !is_fn {
            writeln!(out, "DXCL_EXTERN_C_END").unwrap();
            in_functions = false;
        }
        writeln!(out).unwrap();
        match &item.kind {
            ItemKind::Scalar { name, c, .. } => {
                if let Some(c) = c {
                    comment(&mut out, "", &item.doc);
                    let sep = if c.ends_with('*') { "" } else { " " };
                    writeln!(out, "typedef {c}{sep}{name};").unwrap();
                }
            }
            ItemKind::Typedef { name, target } => {
                comment(&mut out, "", &item.doc);
                writeln!(out, "typedef {target} {name};").unwrap();
            }
            ItemKind::Const { name, ty, lit: l } => {
                comment(&mut out, "", &item.doc);
                let prim = reg.prim_of(ty).unwrap_or("");
                if prim.starts_with('f') {
                    let l = if lit::is_float(l) {
                        l.clone()
                    } else {
                        format!("{l}.0")
                    };
                    writeln!(out, "#define {name} ({l}f)").unwrap();
                } else if ty == "HRESULT" {
                    writeln!(out, "#define {name} ((HRESULT){l})").unwrap();
                } else {
                    writeln!(out, "#define {name} ({l})").unwrap();
                }
            }
            ItemKind::Enum { name, members } => {
                comment(&mut out, "", &item.doc);
                writeln!(out, "typedef enum {name} {{").unwrap();
                for mem in members {
                    comment(&mut out, "    ", &mem.doc);
                    writeln!(out, "    {} = {},", mem.name, mem.lit).unwrap();
                }
                writeln!(out, "}} {name};").unwrap();
            }
            ItemKind::Aggregate(a) => {
                comment(&mut out, "", &item.doc);
                let kw = if a.is_union { "union" } else { "struct" };
                writeln!(out, "typedef {kw} {} {{", a.name).unwrap();
                members(&mut out, "    ", &a.members);
                writeln!(out, "}} {};", a.name).unwrap();
            }
            ItemKind::FnPtr {
                name,
                ret: r,
                params: ps,
            } => {
                comment(&mut out, "", &item.doc);
                writeln!(out, "typedef {}(*{name})({});", ret(r), params(None, ps)).unwrap();
            }
            ItemKind::Function {
                name,
                ret: r,
                params: ps,
            } => {
                if !in_functions {
                    writeln!(out, "DXCL_EXTERN_C_BEGIN").unwrap();
                    in_functions = true;
                }
                comment(&mut out, "", &item.doc);
                writeln!(out, "{}WINAPI {name}({});", ret(r), params(None, ps)).unwrap();
            }
            ItemKind::Interface(i) => interface(&mut out, reg, i, &item.doc),
            ItemKind::CVerbatim(text) => out.push_str(text),
            ItemKind::Comment => comment(&mut out, "", &item.doc),
            ItemKind::IncludeAfter(h) => writeln!(out, "#include <{h}>").unwrap(),
        }
    }
    if in_functions {
        writeln!(out, "DXCL_EXTERN_C_END").unwrap();
    }
    writeln!(out, "\n#endif /* {guard} */").unwrap();
    Ok(out)
}

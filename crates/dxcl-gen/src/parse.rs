//! Reader for the `.api` interface description format (see `crates/dxcl-abi/api/README.md`).

use crate::ctype::{parse_decl, parse_params, parse_type};
use crate::model::*;

struct Lines<'a> {
    file: &'a str,
    lines: Vec<(usize, &'a str)>,
    pos: usize,
}

impl<'a> Lines<'a> {
    fn next(&mut self) -> Option<(usize, &'a str)> {
        let l = self.lines.get(self.pos).copied();
        self.pos += 1;
        l
    }
    fn err(&self, line: usize, msg: impl std::fmt::Display) -> String {
        format!("{}:{}: {msg}", self.file, line)
    }
}

fn parse_guid(text: &str) -> Option<Guid> {
    let t = text.strip_prefix('{')?.strip_suffix('}')?;
    let parts: Vec<&str> = t.split('-').collect();
    if parts.len() != 5 || parts[3].len() != 4 || parts[4].len() != 12 {
        return None;
    }
    let mut data4 = [0u8; 8];
    let tail = format!("{}{}", parts[3], parts[4]);
    for (i, b) in data4.iter_mut().enumerate() {
        *b = u8::from_str_radix(&tail[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(Guid {
        data1: u32::from_str_radix(parts[0], 16).ok()?,
        data2: u16::from_str_radix(parts[1], 16).ok()?,
        data3: u16::from_str_radix(parts[2], 16).ok()?,
        data4,
    })
}

/// Splits `RET Name(params)` into its three parts.
fn split_signature(text: &str) -> Option<(&str, &str, &str)> {
    let open = text.find('(')?;
    let params = text[open + 1..].strip_suffix(')')?;
    let head = text[..open].trim_end();
    let name_start = head.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))? + 1;
    Some((head[..name_start].trim(), &head[name_start..], params))
}

fn doc_line(text: &str) -> Option<String> {
    text.strip_prefix("##")
        .map(|d| d.strip_prefix(' ').unwrap_or(d).to_string())
}

fn parse_members(lines: &mut Lines, start: usize) -> Result<Vec<Member>, String> {
    let mut members = Vec::new();
    let mut doc = Vec::new();
    while let Some((n, raw)) = lines.next() {
        let line = raw.trim();
        if let Some(d) = doc_line(line) {
            doc.push(d);
            continue;
        }
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line {
            "end" => return Ok(members),
            "union" | "struct" => {
                let inner = parse_members(lines, n)?;
                members.push(Member::Anon {
                    is_union: line == "union",
                    members: inner,
                });
            }
            _ => {
                let decl = parse_decl(line).map_err(|e| lines.err(n, e))?;
                members.push(Member::Field {
                    decl,
                    doc: std::mem::take(&mut doc),
                });
            }
        }
    }
    Err(lines.err(start, "missing `end`"))
}

/// Parses one `.api` file; `name` is its stem.
pub fn parse_module(name: &str, file: &str, text: &str) -> Result<Module, String> {
    let mut lines = Lines {
        file,
        lines: text.lines().enumerate().map(|(i, l)| (i + 1, l)).collect(),
        pos: 0,
    };
    let mut module = Module {
        name: name.to_string(),
        header: String::new(),
        includes: Vec::new(),
        items: Vec::new(),
    };
    let mut doc: Vec<String> = Vec::new();
    while let Some((n, raw)) = lines.next() {
        let line = raw.trim();
        if let Some(d) = doc_line(line) {
            doc.push(d);
            continue;
        }
        if line.is_empty() {
            if !doc.is_empty() {
                module.items.push(Item {
                    kind: ItemKind::Comment,
                    doc: std::mem::take(&mut doc),
                });
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        let kind = match word {
            "header" => {
                module.header = rest.to_string();
                continue;
            }
            "include" => {
                module
                    .includes
                    .extend(rest.split_whitespace().map(str::to_string));
                continue;
            }
            "include-after" => ItemKind::IncludeAfter(rest.to_string()),
            "c-begin" => {
                let mut body = String::new();
                loop {
                    let Some((_, l)) = lines.next() else {
                        return Err(lines.err(n, "missing `c-end`"));
                    };
                    if l.trim() == "c-end" {
                        break;
                    }
                    body.push_str(l);
                    body.push('\n');
                }
                ItemKind::CVerbatim(body)
            }
            "scalar" => {
                let parts: Vec<&str> = rest.split('|').map(str::trim).collect();
                let [name, rust, c] = parts[..] else {
                    return Err(lines.err(n, "scalar NAME | RUST | C"));
                };
                let c = (c != "-").then(|| c.to_string());
                ItemKind::Scalar {
                    name: name.into(),
                    rust: rust.into(),
                    c,
                }
            }
            "typedef" => {
                let (name, target) = rest
                    .split_once('=')
                    .ok_or_else(|| lines.err(n, "typedef NAME = TYPE"))?;
                ItemKind::Typedef {
                    name: name.trim().into(),
                    target: target.trim().into(),
                }
            }
            "const" => {
                let parts: Vec<&str> = rest.split_whitespace().collect();
                let [name, ty, lit] = parts[..] else {
                    return Err(lines.err(n, "const NAME TYPE VALUE"));
                };
                ItemKind::Const {
                    name: name.into(),
                    ty: ty.into(),
                    lit: lit.into(),
                }
            }
            "enum" => {
                let mut members = Vec::new();
                let mut mdoc = Vec::new();
                loop {
                    let Some((m, l)) = lines.next() else {
                        return Err(lines.err(n, "missing `end`"));
                    };
                    let l = l.trim();
                    if let Some(d) = doc_line(l) {
                        mdoc.push(d);
                        continue;
                    }
                    if l.is_empty() || l.starts_with('#') {
                        continue;
                    }
                    if l == "end" {
                        break;
                    }
                    let (k, v) = l
                        .split_once('=')
                        .ok_or_else(|| lines.err(m, "NAME = VALUE"))?;
                    members.push(EnumMember {
                        name: k.trim().into(),
                        lit: v.trim().into(),
                        doc: std::mem::take(&mut mdoc),
                    });
                }
                ItemKind::Enum {
                    name: rest.into(),
                    members,
                }
            }
            "struct" | "union" => {
                let members = parse_members(&mut lines, n)?;
                ItemKind::Aggregate(Aggregate {
                    name: rest.into(),
                    is_union: word == "union",
                    members,
                })
            }
            "fnptr" => {
                let (name, sig) = rest
                    .split_once(' ')
                    .ok_or_else(|| lines.err(n, "fnptr NAME RET (PARAMS)"))?;
                let open = sig
                    .find('(')
                    .ok_or_else(|| lines.err(n, "fnptr NAME RET (PARAMS)"))?;
                let params = sig[open + 1..]
                    .trim_end()
                    .strip_suffix(')')
                    .ok_or_else(|| lines.err(n, "missing `)`"))?;
                let ret = parse_type(sig[..open].trim()).map_err(|e| lines.err(n, e))?;
                let params = parse_params(params).map_err(|e| lines.err(n, e))?;
                ItemKind::FnPtr {
                    name: name.into(),
                    ret,
                    params,
                }
            }
            "function" => {
                let (ret, name, params) = split_signature(rest)
                    .ok_or_else(|| lines.err(n, "function RET Name(PARAMS)"))?;
                let ret = parse_type(ret).map_err(|e| lines.err(n, e))?;
                let params = parse_params(params).map_err(|e| lines.err(n, e))?;
                ItemKind::Function {
                    name: name.into(),
                    ret,
                    params,
                }
            }
            "interface" => {
                let (head, iid) = rest
                    .rsplit_once(' ')
                    .ok_or_else(|| lines.err(n, "interface NAME : PARENT {IID}"))?;
                let iid =
                    parse_guid(iid).ok_or_else(|| lines.err(n, format!("bad IID `{iid}`")))?;
                let (name, parent) = match head.split_once(':') {
                    Some((a, b)) => (a.trim().to_string(), Some(b.trim().to_string())),
                    None => (head.trim().to_string(), None),
                };
                let mut methods = Vec::new();
                let mut mdoc = Vec::new();
                loop {
                    let Some((m, l)) = lines.next() else {
                        return Err(lines.err(n, "missing `end`"));
                    };
                    let l = l.trim();
                    if let Some(d) = doc_line(l) {
                        mdoc.push(d);
                        continue;
                    }
                    if l.is_empty() || l.starts_with('#') {
                        continue;
                    }
                    if l == "end" {
                        break;
                    }
                    let (ret, mname, params) =
                        split_signature(l).ok_or_else(|| lines.err(m, "RET Name(PARAMS)"))?;
                    let ret = parse_type(ret).map_err(|e| lines.err(m, e))?;
                    let params = parse_params(params).map_err(|e| lines.err(m, e))?;
                    methods.push(Method {
                        name: mname.into(),
                        ret,
                        params,
                        doc: std::mem::take(&mut mdoc),
                    });
                }
                ItemKind::Interface(Interface {
                    name,
                    parent,
                    iid,
                    methods,
                })
            }
            _ => return Err(lines.err(n, format!("unknown item `{word}`"))),
        };
        module.items.push(Item {
            kind,
            doc: std::mem::take(&mut doc),
        });
    }
    if module.header.is_empty() {
        return Err(format!("{file}: no `header` line"));
    }
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_item_kind() {
        let text = "header t.h\ninclude a.h b.h\nconst N UINT 0x10\nenum E\n    ## first\n    E_A = 1\nend\n\
                    struct S\n    UINT a\n    union\n        UINT b\n        FLOAT c\n    end\nend\n\
                    interface I : IUnknown {00000000-0000-0000-c000-000000000046}\n    void * Get(const S *p, UINT n)\nend\n\
                    fnptr F void (void *p)\nfunction HRESULT Make(I **pp)\n";
        let m = parse_module("t", "t.api", text).unwrap();
        assert_eq!(m.header, "t.h");
        assert_eq!(m.includes, ["a.h", "b.h"]);
        assert_eq!(m.items.len(), 6);
        let ItemKind::Interface(i) = &m.items[3].kind else {
            panic!()
        };
        assert_eq!(i.parent.as_deref(), Some("IUnknown"));
        assert_eq!(i.iid.data4, [0xc0, 0, 0, 0, 0, 0, 0, 0x46]);
        assert_eq!(i.methods[0].name, "Get");
        assert_eq!(i.methods[0].ret.ptrs, [false]);
        assert_eq!(i.methods[0].params.len(), 2);
    }

    #[test]
    fn reports_errors_with_their_line() {
        let err = parse_module("t", "t.api", "header t.h\nstruct S\n    UINT\nend\n").unwrap_err();
        assert!(err.starts_with("t.api:3:"), "{err}");
        assert!(parse_module("t", "t.api", "header t.h\nenum E\n").is_err());
        assert!(parse_module("t", "t.api", "header t.h\ninterface I {bad}\nend\n").is_err());
    }
}

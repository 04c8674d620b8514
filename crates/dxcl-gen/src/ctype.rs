//! C declarations (`const D3D11_BUFFER_DESC *pDesc`, `ID3D11View *const *ppViews`, `FLOAT c[4]`)
//! and their Rust spelling.

use crate::model::{CType, Decl};

fn tokens(text: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c == '*' || c == '[' || c == ']' {
            out.push(c.to_string());
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let mut word = String::new();
            while let Some(&c) = chars.peek() {
                if c.is_ascii_alphanumeric() || c == '_' {
                    word.push(c);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(word);
        } else {
            return Err(format!("unexpected '{c}' in C declaration `{text}`"));
        }
    }
    Ok(out)
}

/// Parses a declaration; `named` says whether a declarator name must follow the type
/// (parameters, fields) or must not (return types).
fn parse(text: &str, named: bool) -> Result<(CType, Option<String>, Vec<String>), String> {
    let toks = tokens(text)?;
    let mut i = 0;
    let mut is_const = false;
    let mut words = Vec::new();
    while i < toks.len() && toks[i] != "*" && toks[i] != "[" {
        if toks[i] == "const" {
            is_const = true;
        } else {
            words.push(toks[i].clone());
        }
        i += 1;
    }
    let mut ptrs = Vec::new();
    while i < toks.len() && toks[i] == "*" {
        i += 1;
        let ptr_const = toks.get(i).is_some_and(|t| t == "const");
        if ptr_const {
            i += 1;
        }
        ptrs.push(ptr_const);
    }
    let mut name = None;
    if named {
        if ptrs.is_empty() {
            if words.len() < 2 {
                return Err(format!("no name in C declaration `{text}`"));
            }
            name = words.pop();
        } else {
            name = Some(toks.get(i).cloned().ok_or(format!("no name in `{text}`"))?);
            i += 1;
        }
    }
    let mut array = Vec::new();
    while toks.get(i).is_some_and(|t| t == "[") {
        array.push(
            toks.get(i + 1)
                .cloned()
                .ok_or(format!("bad array in `{text}`"))?,
        );
        if toks.get(i + 2).map(String::as_str) != Some("]") {
            return Err(format!("bad array in `{text}`"));
        }
        i += 3;
    }
    if i != toks.len() || words.is_empty() {
        return Err(format!("cannot read C declaration `{text}`"));
    }
    let ty = CType {
        is_const,
        base: words.join(" "),
        ptrs,
    };
    Ok((ty, name, array))
}

/// Parses `TYPE name` or `TYPE name[N]`.
pub fn parse_decl(text: &str) -> Result<Decl, String> {
    let (ty, name, array) = parse(text, true)?;
    Ok(Decl {
        ty,
        name: name.expect("named"),
        array,
    })
}

/// Parses a return type (no declarator name).
pub fn parse_type(text: &str) -> Result<CType, String> {
    let (ty, _, array) = parse(text, false)?;
    if !array.is_empty() {
        return Err(format!("array return type `{text}`"));
    }
    Ok(ty)
}

/// Parses a parameter list `a, b, c` (empty: no parameters).
pub fn parse_params(text: &str) -> Result<Vec<Decl>, String> {
    let text = text.trim();
    if text.is_empty() || text == "void" {
        return Ok(Vec::new());
    }
    text.split(',').map(|p| parse_decl(p.trim())).collect()
}

/// The Rust spelling of a C base type: SDK typedef names stay, C keywords map to `core::ffi`.
pub fn rust_base(base: &str) -> String {
    match base {
        "void" => "c_void",
        "char" => "c_char",
        "int" | "signed int" => "c_int",
        "unsigned int" | "unsigned" => "c_uint",
        "long long" => "i64",
        "unsigned long long" => "u64",
        "float" => "f32",
        "double" => "f64",
        other => other,
    }
    .to_string()
}

/// The Rust type of a C type: each `*` is `*const` when what it points at is `const`.
pub fn rust_type(ty: &CType) -> String {
    let mut out = rust_base(&ty.base);
    let mut pointee_const = ty.is_const;
    for &ptr_const in &ty.ptrs {
        out = format!("*{} {out}", if pointee_const { "const" } else { "mut" });
        pointee_const = ptr_const;
    }
    out
}

/// The Rust type of a parameter: an array parameter is a pointer to its first element.
pub fn rust_param_type(decl: &Decl) -> String {
    let ty = rust_type(&decl.ty);
    if !decl.array.is_empty() {
        let outer_const = decl.ty.ptrs.last().copied().unwrap_or(decl.ty.is_const);
        format!("*{} {ty}", if outer_const { "const" } else { "mut" })
    } else {
        ty
    }
}

/// The Rust type of a struct field: an array field is a Rust array.
pub fn rust_field_type(decl: &Decl) -> String {
    let mut ty = rust_type(&decl.ty);
    for n in decl.array.iter().rev() {
        ty = if n.chars().all(|c| c.is_ascii_digit()) {
            format!("[{ty}; {n}]")
        } else {
            format!("[{ty}; {n} as usize]")
        };
    }
    ty
}

/// The C spelling of a type (no name): `const ID3D11View *const *`.
pub fn c_type(ty: &CType) -> String {
    let mut out = String::new();
    if ty.is_const {
        out.push_str("const ");
    }
    out.push_str(&ty.base);
    if !ty.ptrs.is_empty() {
        out.push(' ');
        for &c in &ty.ptrs {
            out.push('*');
            if c {
                out.push_str("const ");
            }
        }
    }
    out
}

/// The C spelling of a declaration.
pub fn c_decl(decl: &Decl) -> String {
    let ty = c_type(&decl.ty);
    let sep = if ty.ends_with('*') { "" } else { " " };
    let dims: String = decl.array.iter().map(|n| format!("[{n}]")).collect();
    format!("{ty}{sep}{}{dims}", decl.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rust_of(text: &str) -> String {
        rust_param_type(&parse_decl(text).unwrap())
    }

    #[test]
    fn plain_and_pointer_parameters() {
        assert_eq!(rust_of("UINT Width"), "UINT");
        assert_eq!(
            rust_of("D3D11_BUFFER_DESC *pDesc"),
            "*mut D3D11_BUFFER_DESC"
        );
        assert_eq!(
            rust_of("const D3D11_BUFFER_DESC *pDesc"),
            "*const D3D11_BUFFER_DESC"
        );
        assert_eq!(rust_of("ID3D11Buffer **ppBuffer"), "*mut *mut ID3D11Buffer");
        assert_eq!(rust_of("void **ppvObject"), "*mut *mut c_void");
        assert_eq!(rust_of("const void *pData"), "*const c_void");
        assert_eq!(rust_of("int *pFd"), "*mut c_int");
    }

    #[test]
    fn const_pointer_to_pointer() {
        // An array of (const) pointers to mutable views.
        assert_eq!(
            rust_of("ID3D11RenderTargetView *const *ppRTVs"),
            "*const *mut ID3D11RenderTargetView"
        );
        assert_eq!(
            rust_of("const IUnknown *const *pp"),
            "*const *const IUnknown"
        );
    }

    #[test]
    fn array_parameters_decay_and_fields_stay_arrays() {
        assert_eq!(rust_of("const FLOAT ColorRGBA[4]"), "*const FLOAT");
        assert_eq!(rust_of("UINT Values[4]"), "*mut UINT");
        let f = parse_decl("WCHAR Description[128]").unwrap();
        assert_eq!(rust_field_type(&f), "[WCHAR; 128]");
        let f = parse_decl("UINT Rt[D3D11_SIMULTANEOUS_RENDER_TARGET_COUNT]").unwrap();
        assert_eq!(
            rust_field_type(&f),
            "[UINT; D3D11_SIMULTANEOUS_RENDER_TARGET_COUNT as usize]"
        );
        let f = parse_decl("FLOAT PrimaryCoordinates[8][2]").unwrap();
        assert_eq!(rust_field_type(&f), "[[FLOAT; 2]; 8]");
        assert_eq!(c_decl(&f), "FLOAT PrimaryCoordinates[8][2]");
    }

    #[test]
    fn c_keywords_map_to_core_ffi() {
        assert_eq!(rust_of("float r"), "f32");
        assert_eq!(rust_of("unsigned int x"), "c_uint");
        assert_eq!(rust_of("const char *SemanticName"), "*const c_char");
        assert_eq!(rust_type(&parse_type("void *").unwrap()), "*mut c_void");
        assert_eq!(
            rust_type(&parse_type("D3D_FEATURE_LEVEL").unwrap()),
            "D3D_FEATURE_LEVEL"
        );
    }

    #[test]
    fn c_spelling_round_trips() {
        for text in [
            "const D3D11_BUFFER_DESC *pDesc",
            "ID3D11View *const *ppViews",
            "WCHAR Description[128]",
            "UINT x",
        ] {
            assert_eq!(c_decl(&parse_decl(text).unwrap()), text);
        }
    }

    #[test]
    fn bad_declarations_are_refused() {
        assert!(parse_decl("UINT").is_err());
        assert!(parse_decl("UINT x[4").is_err());
        assert!(parse_decl("UINT (x)").is_err());
        assert!(parse_params("UINT a, , UINT b").is_err());
    }
}

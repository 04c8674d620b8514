//! The interface description, as read from `crates/dxcl-abi/api/*.api`.

/// A C type without its declarator name: `const ID3D11Buffer *const *` is
/// `{ is_const: true, base: "ID3D11Buffer", ptrs: [true, false] }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CType {
    /// The base type itself is `const`.
    pub is_const: bool,
    /// `UINT`, `void`, `unsigned int`, …
    pub base: String,
    /// One entry per `*`, left to right: whether that pointer is itself `const`.
    pub ptrs: Vec<bool>,
}

/// A C declaration: a parameter or a struct field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decl {
    pub ty: CType,
    pub name: String,
    /// `[N]` dimensions, outermost first: numbers or constants' names. Empty: not an array.
    pub array: Vec<String>,
}

#[derive(Clone, Debug)]
pub enum Member {
    Field {
        decl: Decl,
        doc: Vec<String>,
    },
    /// An anonymous union or struct; C declares it inline, Rust as a named field of a named type.
    Anon {
        is_union: bool,
        members: Vec<Member>,
    },
}

#[derive(Clone, Debug)]
pub struct Aggregate {
    pub name: String,
    pub is_union: bool,
    pub members: Vec<Member>,
}

#[derive(Clone, Debug)]
pub struct EnumMember {
    pub name: String,
    pub lit: String,
    pub doc: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Method {
    pub name: String,
    pub ret: CType,
    pub params: Vec<Decl>,
    pub doc: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guid {
    pub data1: u32,
    pub data2: u16,
    pub data3: u16,
    pub data4: [u8; 8],
}

#[derive(Clone, Debug)]
pub struct Interface {
    pub name: String,
    pub parent: Option<String>,
    pub iid: Guid,
    pub methods: Vec<Method>,
}

#[derive(Clone, Debug)]
pub enum ItemKind {
    /// A base type: its Rust spelling, and its C spelling (`None`: written by hand in a C block).
    Scalar {
        name: String,
        rust: String,
        c: Option<String>,
    },
    Typedef {
        name: String,
        target: String,
    },
    Const {
        name: String,
        ty: String,
        lit: String,
    },
    Enum {
        name: String,
        members: Vec<EnumMember>,
    },
    Aggregate(Aggregate),
    FnPtr {
        name: String,
        ret: CType,
        params: Vec<Decl>,
    },
    Interface(Interface),
    Function {
        name: String,
        ret: CType,
        params: Vec<Decl>,
    },
    /// C text copied into the header as is (macros, inline helpers).
    CVerbatim(String),
    /// A free-standing documentation comment.
    Comment,
    /// `include-after`: a header included at the end of this one.
    IncludeAfter(String),
}

#[derive(Clone, Debug)]
pub struct Item {
    pub kind: ItemKind,
    pub doc: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Module {
    /// File stem: the Rust module name.
    pub name: String,
    /// Header path relative to `include/`.
    pub header: String,
    pub includes: Vec<String>,
    pub items: Vec<Item>,
}

impl ItemKind {
    /// The type or constant name this item defines, if any.
    pub fn name(&self) -> Option<&str> {
        match self {
            ItemKind::Scalar { name, .. }
            | ItemKind::Typedef { name, .. }
            | ItemKind::Const { name, .. }
            | ItemKind::Enum { name, .. }
            | ItemKind::FnPtr { name, .. }
            | ItemKind::Function { name, .. } => Some(name),
            ItemKind::Aggregate(a) => Some(&a.name),
            ItemKind::Interface(i) => Some(&i.name),
            ItemKind::CVerbatim(_) | ItemKind::Comment | ItemKind::IncludeAfter(_) => None,
        }
    }
}

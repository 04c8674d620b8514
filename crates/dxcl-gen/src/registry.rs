//! Every name the description defines, for checks and for the decisions emitters make.

use std::collections::HashMap;

use crate::model::*;

pub enum Def<'a> {
    Scalar(&'a str),
    Typedef(&'a str),
    Const,
    Enum,
    Aggregate(&'a Aggregate),
    FnPtr,
    Interface(&'a Interface),
    Function,
}

pub struct Registry<'a> {
    defs: HashMap<&'a str, Def<'a>>,
}

const C_KEYWORD_TYPES: &[&str] = &["void", "char", "int", "unsigned int", "float", "double"];

impl<'a> Registry<'a> {
    pub fn new(modules: &'a [Module]) -> Result<Self, String> {
        let mut defs = HashMap::new();
        for m in modules {
            for item in &m.items {
                let def = match &item.kind {
                    ItemKind::Scalar { rust, .. } => Def::Scalar(rust),
                    ItemKind::Typedef { target, .. } => Def::Typedef(target),
                    ItemKind::Const { .. } => Def::Const,
                    ItemKind::Enum { members, .. } => {
                        for mem in members {
                            if defs.insert(mem.name.as_str(), Def::Const).is_some() {
                                return Err(format!("{}: `{}` defined twice", m.name, mem.name));
                            }
                        }
                        Def::Enum
                    }
                    ItemKind::Aggregate(a) => Def::Aggregate(a),
                    ItemKind::FnPtr { .. } => Def::FnPtr,
                    ItemKind::Interface(i) => Def::Interface(i),
                    ItemKind::Function { .. } => Def::Function,
                    ItemKind::CVerbatim(_) | ItemKind::Comment | ItemKind::IncludeAfter(_) => {
                        continue
                    }
                };
                let name = item.kind.name().expect("named item");
                if defs.insert(name, def).is_some() {
                    return Err(format!("{}: `{name}` defined twice", m.name));
                }
            }
        }
        Ok(Registry { defs })
    }

    /// Follows typedefs to the defining item.
    pub fn resolve(&self, name: &str) -> Option<&Def<'a>> {
        let mut name = name;
        for _ in 0..16 {
            match self.defs.get(name)? {
                Def::Typedef(t) => name = t,
                d => return Some(d),
            }
        }
        None
    }

    /// The Rust primitive behind a scalar, typedef or enum name (`HRESULT` -> `i32`).
    pub fn prim_of(&self, name: &str) -> Option<&'a str> {
        match self.resolve(name)? {
            Def::Scalar(r) => Some(r),
            Def::Enum => Some("i32"),
            _ => None,
        }
    }

    pub fn interface(&self, name: &str) -> Option<&'a Interface> {
        match self.resolve(name)? {
            Def::Interface(i) => Some(i),
            _ => None,
        }
    }

    /// The interface and its ancestors, root (IUnknown) first.
    pub fn chain(&self, iface: &'a Interface) -> Vec<&'a Interface> {
        let mut chain = vec![iface];
        let mut cur = iface;
        while let Some(p) = &cur.parent {
            cur = self.interface(p).expect("validated parent");
            chain.push(cur);
        }
        chain.reverse();
        chain
    }

    fn is_float_base(&self, base: &str) -> bool {
        match base {
            "float" | "double" => true,
            _ => matches!(self.resolve(base), Some(Def::Scalar(r)) if r.starts_with('f')),
        }
    }

    /// The value a stub returns for a method returning `ty`.
    pub fn zero_value(&self, ty: &CType) -> String {
        if !ty.ptrs.is_empty() {
            // What the returned pointer points at is const when the level before it says so.
            let n = ty.ptrs.len();
            let pointee_const = if n > 1 { ty.ptrs[n - 2] } else { ty.is_const };
            return if pointee_const {
                "core::ptr::null()"
            } else {
                "core::ptr::null_mut()"
            }
            .into();
        }
        if ty.base == "HRESULT" {
            "E_NOTIMPL".into()
        } else if self.is_float_base(&ty.base) {
            "0.0".into()
        } else {
            "0".into()
        }
    }

    fn walk_fields(&self, members: &[Member], f: &mut dyn FnMut(&Decl) -> bool) -> bool {
        members.iter().any(|m| match m {
            Member::Field { decl, .. } => f(decl),
            Member::Anon { members, .. } => self.walk_fields(members, f),
        })
    }

    /// Whether the aggregate contains, at any depth by value, something matching `pred`.
    fn contains(&self, agg: &Aggregate, pred: &dyn Fn(&Self, &Aggregate, &Decl) -> bool) -> bool {
        self.walk_fields(&agg.members, &mut |d: &Decl| {
            if pred(self, agg, d) {
                return true;
            }
            if d.ty.ptrs.is_empty() {
                if let Some(Def::Aggregate(inner)) = self.resolve(&d.ty.base) {
                    return self.contains(inner, pred);
                }
            }
            false
        })
    }

    /// A union anywhere inside (Rust cannot derive Debug/PartialEq through it).
    pub fn has_union(&self, agg: &Aggregate) -> bool {
        fn anon_union(m: &[Member]) -> bool {
            m.iter().any(|m| {
                matches!(m, Member::Anon { is_union: true, .. })
                    || matches!(m, Member::Anon { members, .. } if anon_union(members))
            })
        }
        agg.is_union
            || anon_union(&agg.members)
            || self.contains(agg, &|r, _, d| d.ty.ptrs.is_empty() && matches!(r.resolve(&d.ty.base), Some(Def::Aggregate(a)) if a.is_union || anon_union(&a.members)))
    }

    pub fn has_float(&self, agg: &Aggregate) -> bool {
        self.contains(agg, &|r, _, d| {
            d.ty.ptrs.is_empty() && r.is_float_base(&d.ty.base)
        })
    }

    pub fn has_fn_pointer(&self, agg: &Aggregate) -> bool {
        self.contains(agg, &|r, _, d| {
            d.ty.ptrs.is_empty() && matches!(r.resolve(&d.ty.base), Some(Def::FnPtr))
        })
    }

    /// Every type a declaration names must be defined (or be a C keyword type).
    pub fn validate(&self, modules: &[Module]) -> Result<(), String> {
        let errors = std::cell::RefCell::new(Vec::new());
        let check = |what: &str, ty: &CType| {
            if !C_KEYWORD_TYPES.contains(&ty.base.as_str()) && self.resolve(&ty.base).is_none() {
                errors
                    .borrow_mut()
                    .push(format!("{what}: unknown type `{}`", ty.base));
            }
        };
        for m in modules {
            for item in &m.items {
                let name = item.kind.name().unwrap_or("");
                match &item.kind {
                    ItemKind::Aggregate(a) => {
                        self.walk_fields(&a.members, &mut |d| {
                            check(&format!("{}.{}", a.name, d.name), &d.ty);
                            false
                        });
                    }
                    ItemKind::Typedef { target, .. } => check(
                        name,
                        &CType {
                            is_const: false,
                            base: target.clone(),
                            ptrs: vec![],
                        },
                    ),
                    ItemKind::Const { ty, .. } => check(
                        name,
                        &CType {
                            is_const: false,
                            base: ty.clone(),
                            ptrs: vec![],
                        },
                    ),
                    ItemKind::FnPtr { ret, params, .. }
                    | ItemKind::Function { ret, params, .. } => {
                        check(name, ret);
                        params.iter().for_each(|p| check(name, &p.ty));
                    }
                    ItemKind::Interface(i) => {
                        if let Some(p) = &i.parent {
                            if self.interface(p).is_none() {
                                errors
                                    .borrow_mut()
                                    .push(format!("{name}: unknown parent interface `{p}`"));
                            }
                        } else if i.name != "IUnknown" {
                            errors
                                .borrow_mut()
                                .push(format!("{name}: only IUnknown has no parent"));
                        }
                        for meth in &i.methods {
                            check(&format!("{name}::{}", meth.name), &meth.ret);
                            meth.params
                                .iter()
                                .for_each(|p| check(&format!("{name}::{}", meth.name), &p.ty));
                        }
                    }
                    _ => {}
                }
            }
        }
        let errors = errors.into_inner();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("\n"))
        }
    }
}

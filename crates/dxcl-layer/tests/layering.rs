//! The layer's parts call only the parts below them, so the strategy seam stays one seam and no
//! import circle comes back: `loader` → `api` → `registry` → `strategy` → `validate` → `d3d` → `probe` → `cl`
//! → `trace` → `core`.
//! A reference to a part above (a `crate::` path in any source file) fails this test.

use std::path::Path;

/// Top to bottom; a part may use itself and any part after it.
const ORDER: [&str; 10] = [
    "loader", "api", "registry", "strategy", "validate", "d3d", "probe", "cl", "trace", "core",
];

fn rank(part: &str) -> Option<usize> {
    ORDER.iter().position(|p| *p == part)
}

/// The parts a source file names through `crate::…` paths.
fn parts_used(source: &str) -> Vec<String> {
    let mut used = Vec::new();
    let mut rest = source;
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        assert!(
            !name.is_empty(),
            "a `crate::{{…}}` group hides which parts it uses: name each path"
        );
        used.push(name);
    }
    used
}

/// Checks every source file under `path` (a file or a folder) of `part`.
fn visit(path: &Path, part: &str, violations: &mut Vec<String>) {
    if path.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            visit(&entry.unwrap().path(), part, violations);
        }
        return;
    }
    if path.extension().is_none_or(|e| e != "rs") {
        return;
    }
    let source = std::fs::read_to_string(path).unwrap();
    // Unit tests may reach anywhere.
    let code = source.split("#[cfg(test)]").next().unwrap_or("");
    for used in parts_used(code) {
        if let (Some(from), Some(to)) = (rank(part), rank(&used)) {
            if to < from {
                violations.push(format!("{} uses crate::{used}", path.display()));
            }
        }
    }
}

#[test]
fn parts_call_only_the_parts_below_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "lib" {
            continue;
        }
        assert!(
            rank(&name).is_some(),
            "{name}: a new part of the layer needs its place in ORDER"
        );
        seen.push(name.clone());
        visit(&path, &name, &mut violations);
    }
    assert_eq!(
        seen.len(),
        ORDER.len(),
        "every part in ORDER exists: {seen:?}"
    );
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn an_upward_reference_is_found() {
    assert_eq!(
        parts_used("use crate::cl::events;\nlet x = crate::api::status(f);"),
        ["cl", "api"]
    );
}

//! `dxcl demo` end to end: the real binary, loader and layer. The check is the demo's own (every
//! pixel against the CPU); these tests add what it claims about copies, per adapter and kernel.

mod support;

use std::process::Output;

fn demo(adapter: &str, kernel: &str, name: &str) -> Output {
    let out = support::temp_file("demo-test", &format!("{name}.png"));
    let o = support::output(
        support::dxcl_with_layer("demo --size 96 --kernel")
            .arg(kernel)
            .arg("--out")
            .arg(&out)
            .env("DXCL_ADAPTER", adapter),
    );
    let png = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&out);
    if o.status.success() {
        assert!(png > 0, "no PNG written");
    }
    o
}

fn stdout_ok(o: &Output) -> String {
    let text = support::stdout_ok(o);
    assert!(text.contains("check: 0 of 9216 pixels wrong"), "{text}");
    text
}

#[test]
fn software_adapter_inverts_in_place_with_no_copy() {
    let out = stdout_ok(&demo("software", "in-place", "sw-in-place"));
    assert!(out.contains("in place (one read-write image)"), "{out}");
    assert_eq!(out.matches("zero-copy host pointer").count(), 1, "{out}");
    assert!(out.contains("copies of the texture's data: none"), "{out}");
}

#[test]
fn software_adapter_writes_a_second_shared_texture_with_no_copy() {
    let out = stdout_ok(&demo("software", "two-textures", "sw-two"));
    assert!(out.contains("into a second shared texture"), "{out}");
    assert!(out.contains("sharing, result texture: zero-copy"), "{out}");
    assert_eq!(out.matches("zero-copy host pointer").count(), 2, "{out}");
    assert!(out.contains("copies of the texture's data: none"), "{out}");
}

/// lavapipe's memory is opaque-fd Vulkan memory that PoCL cannot import: the layer copies, and
/// the demo must say so rather than claim zero-copy.
#[test]
fn vulkan_adapter_without_import_says_the_layer_copies() {
    let out = stdout_ok(&demo("vulkan", "auto", "vk"));
    if out.contains("Direct3D 11 Vulkan adapter") && !out.contains("zero-copy external memory") {
        assert!(
            out.contains("copies of the texture's data: the layer copies"),
            "{out}"
        );
    }
}

#[test]
fn an_unknown_kernel_choice_is_a_usage_error() {
    let o = demo("software", "sideways", "bad");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--kernel"));
}

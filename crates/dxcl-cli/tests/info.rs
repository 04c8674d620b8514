//! `dxcl info`'s DXVK-native part without DXVK (the DXVK suite, scripts/dxvk/test.sh, checks it
//! with DXVK's adapters): one line saying none was found and how to point `dxcl info` at one, or
//! why the library named is not usable; the rest of the report is printed either way and the
//! command succeeds.

mod support;

fn info(dxvk_lib: Option<&str>) -> String {
    let mut cmd = support::dxcl_with_layer("info");
    match dxvk_lib {
        Some(v) => cmd.env("DXCL_DXVK_LIB", v),
        None => cmd.env_remove("DXCL_DXVK_LIB"),
    };
    let text = support::stdout_ok(&support::output(&mut cmd));
    assert!(text.contains("Direct3D adapters (dxcl runtime):"), "{text}");
    text
}

fn dxvk_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.starts_with("DXVK-native"))
        .collect()
}

#[test]
fn without_dxvk_one_line_says_how_to_point_at_one() {
    let text = info(None);
    let lines = dxvk_lines(&text);
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].starts_with("DXVK-native: none found"), "{text}");
    assert!(lines[0].contains("DXCL_DXVK_LIB="), "{text}");
    assert!(
        text.trim_end().ends_with(lines[0]),
        "the DXVK line comes last:\n{text}"
    );
}

#[test]
fn a_library_that_cannot_be_loaded_is_named() {
    let missing = "/nonexistent/libdxvk_dxgi.so";
    let text = info(Some(missing));
    let lines = dxvk_lines(&text);
    assert_eq!(lines.len(), 1, "{text}");
    assert!(
        lines[0].starts_with(&format!(
            "DXVK-native (DXCL_DXVK_LIB={missing}): not usable:"
        )),
        "{text}"
    );
}

#[test]
fn a_library_that_is_not_dxvk_is_refused() {
    // Any library without CreateDXGIFactory1 (the C math library is always there).
    let text = info(Some("libm.so.6"));
    let lines = dxvk_lines(&text);
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].contains("has no CreateDXGIFactory1"), "{text}");
}

/// With no OpenCL platform installed, `dxcl info` names the cause and the package to install
/// instead of a bare status code.
#[test]
fn no_opencl_platform_says_what_to_install() {
    let o = support::output(
        support::dxcl("info")
            .env("OCL_ICD_VENDORS", "/nonexistent-empty-dir")
            .env_remove("DXCL_DXVK_LIB"),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("no OpenCL platform found"), "{err}");
    assert!(err.contains("CL_PLATFORM_NOT_FOUND_KHR"), "{err}");
    assert!(
        err.contains("OCL_ICD_VENDORS=/nonexistent-empty-dir"),
        "{err}"
    );
    assert!(err.contains("pocl-opencl-icd"), "{err}");
    assert!(err.contains("ocl-icd-libopencl1"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

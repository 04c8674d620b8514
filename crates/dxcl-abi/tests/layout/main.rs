//! The layout test: the Rust definitions and the C/C++ headers must describe the same ABI.
//!
//! `checks.rs` (generated from the same description) hands every Rust size, alignment, field
//! offset, vtable slot offset, constant and IID to [`Checks`], which writes them as assertions
//! against the headers in `include/`:
//! - C (`cc -std=c11`): `_Static_assert` on sizes, alignments, `offsetof` of every field and of every
//!   method in each flat `…Vtbl`, and every integer constant; at run time, float constants' bits and
//!   the bytes of every `IID_…`.
//! - C++ (`c++ -std=c++11`): the class form of every interface: the vtable slot of every method
//!   (from the Itanium ABI's pointer-to-member representation) and `__uuidof(T)` against the IID.
//!
//! Any drift fails the build of the check program, or the program itself.

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

#[rustfmt::skip]
mod checks;

/// A Rust integer constant, with the C type of the same width and signedness.
pub trait CInt: Copy {
    const C_TYPE: &'static str;
    fn value(self) -> i128;
}

macro_rules! c_int {
    ($($t:ty => $c:literal),*) => {$(
        impl CInt for $t {
            const C_TYPE: &'static str = $c;
            fn value(self) -> i128 {
                self as i128
            }
        }
    )*};
}
c_int!(i8 => "int8_t", u8 => "uint8_t", i16 => "int16_t", u16 => "uint16_t", i32 => "int32_t", u32 => "uint32_t",
       i64 => "int64_t", u64 => "uint64_t", usize => "uint64_t");

#[derive(Default)]
pub struct Checks {
    /// C file scope: static assertions.
    c_static: String,
    /// C `main`: run-time checks.
    c_run: String,
    /// C: a function (never called) using every COBJMACROS macro.
    c_cobj: String,
    /// C++ file scope.
    cpp_static: String,
    /// C++ `main`.
    cpp_run: String,
    count: usize,
}

fn guid_bytes(g: &dxcl_abi::GUID) -> String {
    let mut b = Vec::new();
    b.extend_from_slice(&g.Data1.to_le_bytes());
    b.extend_from_slice(&g.Data2.to_le_bytes());
    b.extend_from_slice(&g.Data3.to_le_bytes());
    b.extend_from_slice(&g.Data4);
    b.iter()
        .map(|x| format!("0x{x:02x}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Checks {
    pub fn size(&mut self, name: &str, size: usize, align: usize) {
        self.count += 1;
        writeln!(self.c_static, "_Static_assert(sizeof({name}) == {size} && _Alignof({name}) == {align}, \"size or alignment of {name}\");").unwrap();
    }

    pub fn field(&mut self, owner: &str, field: &str, offset: usize) {
        self.count += 1;
        writeln!(self.c_static, "_Static_assert(offsetof({owner}, {field}) == {offset}, \"offset of {owner}.{field}\");").unwrap();
    }

    pub fn int<T: CInt>(&mut self, name: &str, value: T) {
        self.count += 1;
        let t = T::C_TYPE;
        let v = value.value();
        // The most negative 64-bit value has no literal; nothing here comes near it.
        writeln!(
            self.c_static,
            "_Static_assert(({t})({name}) == ({t})({v}LL), \"value of {name}\");"
        )
        .unwrap();
    }

    pub fn float(&mut self, name: &str, value: f32) {
        self.count += 1;
        let bits = value.to_bits();
        writeln!(self.c_run, "    {{ float f = {name}; uint32_t u; memcpy(&u, &f, 4); CHECK(u == 0x{bits:08x}u, \"value of {name}\"); }}").unwrap();
    }

    pub fn interface(&mut self, name: &str, size: usize, vtbl_size: usize, iid: &dxcl_abi::GUID) {
        self.count += 3;
        writeln!(self.c_static, "_Static_assert(sizeof({name}) == {size} && sizeof({name}Vtbl) == {vtbl_size}, \"size of {name} or its vtable\");").unwrap();
        let bytes = guid_bytes(iid);
        writeln!(self.c_run, "    {{ static const unsigned char b[16] = {{{bytes}}}; CHECK(memcmp(&IID_{name}, b, 16) == 0, \"IID_{name}\"); }}").unwrap();
        writeln!(
            self.cpp_static,
            "static_assert(sizeof({name}) == {size}, \"size of {name}\");"
        )
        .unwrap();
        writeln!(self.cpp_run, "    {{ static const unsigned char b[16] = {{{bytes}}}; CHECK(memcmp(&__uuidof({name}), b, 16) == 0 && __uuidof({name}) == IID_{name}, \"__uuidof({name})\"); }}").unwrap();
    }

    pub fn method(&mut self, iface: &str, method: &str, params: usize, offset: usize) {
        self.count += 2;
        // The COBJMACROS macro exists, takes This plus every parameter, and reaches the method.
        let args = ", 0".repeat(params);
        writeln!(self.c_cobj, "    {iface}_{method}(({iface} *)0{args});").unwrap();
        writeln!(self.c_static, "_Static_assert(offsetof({iface}Vtbl, {method}) == {offset}, \"slot of {iface}::{method}\");").unwrap();
        // IUnknown::QueryInterface is overloaded (the template helper), so it has no single
        // pointer to member; AddRef and Release pin down IUnknown's slots.
        if method != "QueryInterface" {
            writeln!(self.cpp_run, "    CHECK(dxcl_slot(&{iface}::{method}) == {offset}, \"slot of {iface}::{method}\");").unwrap();
        }
    }
}

const HEADERS: &str = "#define COBJMACROS\n#include <d3d11.h>\n#include <d3d10_1.h>\n#include <dxcl/dxcl_interop.h>\n";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Compiles `source` with `compiler` against `include/` and runs the result.
fn build_and_run(compiler: &str, std: &str, file: &str, source: &str) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("layout");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(file);
    let exe = dir.join(format!("{file}.bin"));
    std::fs::write(&src, source).unwrap();
    let out = Command::new(compiler)
        .args([std, "-Wall", "-Wextra", "-Werror", "-I"])
        .arg(root().join("include"))
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{compiler} failed on {}:\n{}",
        src.display(),
        stderr.lines().take(60).collect::<Vec<_>>().join("\n")
    );
    let run = Command::new(&exe).output().unwrap();
    assert!(
        run.status.success(),
        "{} failed:\n{}",
        exe.display(),
        String::from_utf8_lossy(&run.stdout)
    );
}

fn all_checks() -> Checks {
    let mut c = Checks::default();
    checks::all(&mut c);
    c
}

const PRELUDE: &str = "#include <stdio.h>\n#include <string.h>\n#include <stdint.h>\n#include <stddef.h>\nstatic int failures;\n#define CHECK(cond, what) do { if (!(cond)) { printf(\"FAILED: %s\\n\", what); failures++; } } while (0)\n";

#[test]
fn c_headers_match_rust_layouts_constants_and_iids() {
    let c = all_checks();
    assert!(c.count > 3000, "only {} checks", c.count);
    let source = format!(
        "{HEADERS}{PRELUDE}\n{}\nvoid dxcl_cobjmacros(void);\nvoid dxcl_cobjmacros(void)\n{{\n{}}}\n\nint main(void)\n{{\n{}    return failures != 0;\n}}\n",
        c.c_static, c.c_cobj, c.c_run
    );
    build_and_run("cc", "-std=c11", "layout.c", &source);
}

#[test]
fn cpp_interfaces_match_rust_vtables_and_uuidof() {
    let c = all_checks();
    let slot = "template <typename M> static ptrdiff_t dxcl_slot(M m)\n{\n    /* Itanium C++ ABI: a pointer to a virtual member function holds 1 + its vtable offset. */\n    struct { ptrdiff_t ptr, adj; } raw;\n    static_assert(sizeof(m) == sizeof(raw), \"pointer to member layout\");\n    memcpy(&raw, &m, sizeof raw);\n    return raw.ptr - 1;\n}\n";
    let source = format!("{HEADERS}{PRELUDE}{slot}\n{}\nint main()\n{{\n{}    IID_PPV_ARGS((ID3D11Device **)0);\n    return failures != 0;\n}}\n", c.cpp_static, c.cpp_run);
    build_and_run("c++", "-std=c++11", "layout.cpp", &source);
}

/// The Khronos headers (`/usr/include/CL`) compile unchanged against ours, in C and C++.
#[test]
fn khronos_cl_d3d_headers_compile() {
    let source = "#define CL_TARGET_OPENCL_VERSION 300\n#include <CL/cl_d3d11.h>\n#include <CL/cl_d3d10.h>\n\
                  int main(void) { clCreateFromD3D11BufferKHR_fn f11 = 0; clCreateFromD3D10BufferKHR_fn f10 = 0; \
                  ID3D11Buffer *b11 = 0; ID3D10Buffer *b10 = 0; DXGI_FORMAT fmt = DXGI_FORMAT_R8G8B8A8_UNORM; \
                  (void)f11; (void)f10; (void)b11; (void)b10; (void)fmt; return 0; }\n";
    build_and_run("cc", "-std=c99", "khronos.c", source);
    build_and_run("c++", "-std=c++11", "khronos.cpp", source);
}

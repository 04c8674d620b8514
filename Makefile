# dxcl — build, install, demo and test.
#   make demo              main job: build, install into build/stage, run `dxcl demo`
#   make check             the fast check: format, clippy, lint, docs, generated code, unit tests
#   make test              everything CI runs (the documents' check, Rust tests, the dxcl crate's
#                          tests and examples, generated-code check, C/C++ programs under valgrind, the OpenCL
#                          conformance suite through the loader on PoCL, natively and under valgrind,
#                          then on Mesa rusticl; the suite built with ASan+UBSan; Windows programs and
#                          the suite's Windows builds under Wine 8.0 and 10.0 with the bridge; the
#                          .debs and the archive installed and used in Debian 13; the fuzzer's CI runs)
#   make deb / make dist   the Debian packages / the relocatable archive (docs/install.md)
#   make wine              builds the Wine bridge (docs/wine.md); make wine-bench: its 4K hand-off figure
#   make test-asan         the conformance suite built with ASan+UBSan, on PoCL with both adapters
#   make fuzz FUZZ_SECONDS=N  fuzzes the sharing entry points for N seconds (docs/fuzzing.md)
#   make install PREFIX=…  installs include/dxcl/, lib/libdxcl_d3d.so, lib/libdxcl_layer.so,
#                          lib/pkgconfig/dxcl.pc, bin/dxcl

PREFIX   ?= /usr/local
STAGE    := $(CURDIR)/build/stage
CARGO    ?= cargo
CC       ?= cc
CXX      ?= c++
RELEASE  := target/release
# Every valgrind run of `make test`: invalid accesses, uses of uninitialised values and definite or
# indirect leaks are errors (exit status 99). tests/valgrind.supp holds third-party suppressions only;
# the conformance suite's canary checks that this command still fails on errors made in a libdxcl_*
# library (docs/conformance.md, "Sanitizers").
VALGRIND := valgrind --quiet --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
            --show-leak-kinds=definite,indirect --suppressions=$(CURDIR)/tests/valgrind.supp

.PHONY: all deps build install stage demo check test test-rust test-crate test-gen test-c test-windows test-conformance lint check-docs clean \
        fuzz test-fuzz test-asan deb dist test-package

# Every test and the demo run on PoCL alone, through an OCL_ICD_VENDORS directory holding only its
# .icd file, unless OCL_ICD_VENDORS is set: mesa-opencl-icd, which the conformance suite's rusticl run
# needs, also installs rusticl and Clover for every program, with no devices unless enabled, and
# valgrind counts rusticl's own leaks. The suite sets its own per platform (tests/conformance/Makefile).
ICD_DIR  ?= /etc/OpenCL/vendors
OCL_ICD_VENDORS ?= $(CURDIR)/build/icd-pocl
export OCL_ICD_VENDORS

build/icd-pocl: $(ICD_DIR)/pocl.icd
	@mkdir -p $@
	cp $< $@/

all: build

deps:
	@scripts/deps.sh

build:
	$(CARGO) build --release -p dxcl-d3d -p dxcl-layer -p dxcl-vk-layer -p dxcl-cli

install: build
	install -d $(DESTDIR)$(PREFIX)/include/dxcl $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	cp -R include/. $(DESTDIR)$(PREFIX)/include/dxcl/
	install -m 755 $(RELEASE)/libdxcl_d3d.so $(RELEASE)/libdxcl_layer.so $(RELEASE)/libdxcl_vk_layer.so $(DESTDIR)$(PREFIX)/lib/
	# The Vulkan layer's manifest (docs/dxvk.md): VK_LAYER_PATH=$(PREFIX)/share/vulkan/explicit_layer.d.
	install -d $(DESTDIR)$(PREFIX)/share/vulkan/explicit_layer.d
	sed -e 's|@LIBRARY@|$(PREFIX)/lib/libdxcl_vk_layer.so|' crates/dxcl-vk-layer/dxcl_external_fd.json.in \
	    > $(DESTDIR)$(PREFIX)/share/vulkan/explicit_layer.d/dxcl_external_fd.json
	install -m 755 $(RELEASE)/dxcl $(DESTDIR)$(PREFIX)/bin/
	# The Wine bridge (docs/wine.md), when `make wine` built it: `dxcl wine install` takes it from here.
	if [ -d $(WINE_DIST) ]; then install -d $(DESTDIR)$(PREFIX)/lib/dxcl && \
	    rm -rf $(DESTDIR)$(PREFIX)/lib/dxcl/wine && cp -R $(WINE_DIST) $(DESTDIR)$(PREFIX)/lib/dxcl/wine; fi
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)|g' \
	    dxcl.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/dxcl.pc

stage:
	@$(MAKE) --no-print-directory install PREFIX=$(STAGE)

# The embedded default: the software adapter (a hardware driver type would take lavapipe, which
# the dependencies install for the tests, and share through staging copies).
demo: deps stage build/icd-pocl
	$(STAGE)/bin/dxcl info
	DXCL_ADAPTER=software $(STAGE)/bin/dxcl demo --out build/demo.png

test: deps build/icd-pocl lint check-docs test-gen test-rust test-crate stage test-c test-wine test-package test-conformance test-asan test-fuzz
	@echo "make test: all suites passed"

# The fast check, a few minutes on 2 cores: format, clippy, import circles, the committed SPIR-V
# and rustdoc (lint), the documents, the generated code, and every crate's unit tests (no loader
# tests, no C programs, no valgrind, no Wine). `make test` runs all of it and the rest.
check: deps build/icd-pocl lint check-docs test-gen
	DXCL_ADAPTER=software $(CARGO) test -q --workspace --lib --bins
	@echo "make check: passed"

# The documents speak of the product only: no words about how the work was organised, no absolute
# path of a build machine (scripts/check-docs.sh prints each offending line as file:line).
check-docs:
	scripts/check-docs.sh

lint:
	python3 scripts/check-circles.py
	sh scripts/shaders.sh --check
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -q -p dxcl --no-deps

test-gen:
	$(CARGO) run -q -p dxcl-gen -- --check

# The layers' loader tests load target/debug/libdxcl_layer.so and libdxcl_vk_layer.so, which
# `cargo test` does not build.
# The runtime's tests run once per backend: DXCL_ADAPTER picks the adapter devices land on.
test-rust: build/icd-pocl
	$(CARGO) build -p dxcl-layer -p dxcl-vk-layer
	$(CARGO) test --workspace --exclude dxcl-d3d --exclude dxcl
	DXCL_ADAPTER=software $(CARGO) test -p dxcl-d3d
	DXCL_ADAPTER=vulkan $(CARGO) test -p dxcl-d3d

# The safe Rust crate: its tests and examples on the software adapter and PoCL, with the layer
# loaded by the OpenCL loader from OPENCL_LAYERS as an application loads it.
CRATE_ENV := DXCL_ADAPTER=software OPENCL_LAYERS=$(CURDIR)/target/debug/libdxcl_layer.so
test-crate: build/icd-pocl
	$(CARGO) build -p dxcl-layer -p dxcl-vk-layer
	$(CRATE_ENV) $(CARGO) test -p dxcl
	$(CRATE_ENV) $(CARGO) run -q -p dxcl --example buffer
	$(CRATE_ENV) $(CARGO) run -q -p dxcl --example texture

# C and C++ programs built against the installed headers and library, exactly as a user builds them.
PKG := PKG_CONFIG_PATH=$(STAGE)/lib/pkgconfig pkg-config
test-c: stage test-windows build/icd-pocl
	@mkdir -p build/tests
	$(CC)  -std=c11   -Wall -Wextra -Werror -o build/tests/d3d_c   tests/c/d3d_api.c   $$($(PKG) --cflags --libs dxcl)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -o build/tests/d3d_cpp tests/cpp/d3d_api.cpp $$($(PKG) --cflags --libs dxcl)
	for a in software vulkan; do \
	    echo "test-c: DXCL_ADAPTER=$$a"; \
	    DXCL_ADAPTER=$$a $(VALGRIND) build/tests/d3d_c && \
	    DXCL_ADAPTER=$$a $(VALGRIND) build/tests/d3d_cpp || exit 1; \
	done

# Windows code as written (tests/windows): <windows.h> and <tchar.h> from C11 (also with UNICODE;
# _UNICODE must stop at <tchar.h>'s #error), ComPtr's unit tests, and a Direct3D 11 + OpenCL program
# in the Windows idiom run through the layer. d3d11_cl runs natively before valgrind: that run fills
# PoCL's kernel cache, so valgrind does not have to watch LLVM compile the kernel on every adapter.
test-windows: stage build/icd-pocl
	@mkdir -p build/tests
	$(CC)  -std=c11   -Wall -Wextra -Werror -o build/tests/windows_c tests/windows/windows_c.c $$($(PKG) --cflags --libs dxcl)
	$(CC)  -std=c11   -Wall -Wextra -Werror -DUNICODE -o build/tests/windows_c_unicode tests/windows/windows_c.c \
	    $$($(PKG) --cflags --libs dxcl)
	@$(CC) -std=c11 -D_UNICODE -fsyntax-only tests/windows/windows_c.c $$($(PKG) --cflags dxcl) 2>&1 | \
	    grep -q "tchar.h.*#error" || { echo "test-windows: <tchar.h> did not refuse _UNICODE" >&2; exit 1; }
	$(CXX) -std=c++17 -Wall -Wextra -Werror -o build/tests/comptr tests/windows/comptr.cpp $$($(PKG) --cflags --libs dxcl)
	$(CXX) -std=c++17 -Wall -Wextra -Werror -o build/tests/d3d11_cl tests/windows/d3d11_cl.cpp \
	    $$($(PKG) --cflags --libs dxcl) -lOpenCL
	$(VALGRIND) build/tests/windows_c build/tests/windows_c.stderr
	$(VALGRIND) build/tests/windows_c_unicode build/tests/windows_c_unicode.stderr
	$(VALGRIND) build/tests/comptr
	for a in software vulkan; do \
	    echo "test-windows: DXCL_ADAPTER=$$a"; \
	    DXCL_ADAPTER=$$a OPENCL_LAYERS=$$($(PKG) --variable=layer dxcl) build/tests/d3d11_cl && \
	    DXCL_ADAPTER=$$a OPENCL_LAYERS=$$($(PKG) --variable=layer dxcl) $(VALGRIND) build/tests/d3d11_cl || exit 1; \
	done

# The suite natively and (reduced) under $(VALGRIND) on PoCL, both adapters, then natively on rusticl.
test-conformance: stage
	@if [ -f tests/conformance/Makefile ]; then \
	    $(MAKE) --no-print-directory -C tests/conformance run STAGE=$(STAGE) VALGRIND="$(VALGRIND)"; \
	else echo "test-conformance: suite missing" >&2; exit 1; fi

# The suite's C side (programs, harness, canary) built with -fsanitize=address,undefined, run on PoCL with
# both adapters; its canary must fail first (tests/conformance/Makefile, run-asan).
test-asan: stage
	$(MAKE) --no-print-directory -C tests/conformance run-asan STAGE=$(STAGE)

# The libFuzzer harness of tests/fuzz (docs/fuzzing.md): `fuzz` runs for FUZZ_SECONDS, `test-fuzz`
# makes CI's short fixed-seed runs.
FUZZ_SECONDS ?= 600
fuzz: build/icd-pocl
	$(MAKE) --no-print-directory -C tests/fuzz run FUZZ_SECONDS=$(FUZZ_SECONDS)

test-fuzz: build/icd-pocl
	$(MAKE) --no-print-directory -C tests/fuzz ci

# The Wine bridge (docs/wine.md): dxclcl.dll (MinGW-w64, marked as a Wine builtin by winebuild) with
# its unix side dxclcl.so (crates/dxcl-wine), the opencl.dll that forwards to it, and
# dxcl-wine-info.exe, laid out as `dxcl wine install` finds them (lib/dxcl/wine under the prefix).
WINE_DIR  := build/wine
WINE_DIST := $(WINE_DIR)/dist
MINGW_CC  := x86_64-w64-mingw32-gcc
# 32-bit programs (Wine's new WoW64 mode): the same sources, i686; stdcall exports keep their
# plain names (the .def files), as Windows' own opencl.dll has them.
MINGW32_CC := i686-w64-mingw32-gcc
MINGW32_LDFLAGS := -Wl,--enable-stdcall-fixup
WINEBUILD ?= $(shell command -v winebuild || echo /usr/lib/wine/winebuild)
# The Khronos and Vulkan headers come from Debian's packages; MinGW must not see the rest of /usr/include.
WINE_INC  := $(WINE_DIR)/inc
WINE_CFLAGS := -O2 -Wall -Wextra -Werror -Wno-missing-field-initializers -Wno-cast-function-type -I$(WINE_INC)
WINE_BRIDGE_SRC := wine/dxclcl/main.c wine/dxclcl/bridge.h wine/dxclcl/unixlib.h wine/dxclcl/vulkan_devices.h wine/gen/thunks.c wine/gen/calls.h wine/gen/sharing.h wine/gen/dxclcl.def

$(WINE_INC):
	@scripts/wine/deps.sh
	mkdir -p $@
	ln -sfn /usr/include/CL $@/CL
	ln -sfn /usr/include/vulkan $@/vulkan
	ln -sfn /usr/include/vk_video $@/vk_video

$(WINE_DIST)/x86_64-windows/dxclcl.dll: $(WINE_BRIDGE_SRC) | $(WINE_INC)
	mkdir -p $(dir $@)
	$(MINGW_CC) $(WINE_CFLAGS) -Iwine/dxclcl -shared -static-libgcc -o $@ wine/dxclcl/main.c wine/gen/thunks.c \
	    wine/gen/dxclcl.def -lsetupapi -luuid
	$(WINEBUILD) --builtin $@

$(WINE_DIST)/opencl.dll: wine/opencl/forward.c wine/gen/opencl.def | $(WINE_INC)
	mkdir -p $(dir $@)
	$(MINGW_CC) $(WINE_CFLAGS) -shared -static-libgcc -o $@ $^

$(WINE_DIST)/i386-windows/dxclcl.dll: $(WINE_BRIDGE_SRC) | $(WINE_INC)
	mkdir -p $(dir $@)
	$(MINGW32_CC) $(WINE_CFLAGS) -Iwine/dxclcl -shared -static-libgcc $(MINGW32_LDFLAGS) -o $@ wine/dxclcl/main.c \
	    wine/gen/thunks.c wine/gen/dxclcl.def -lsetupapi -luuid
	$(WINEBUILD) --builtin $@

$(WINE_DIST)/i386-windows/opencl.dll: wine/opencl/forward.c wine/gen/opencl.def | $(WINE_INC)
	mkdir -p $(dir $@)
	$(MINGW32_CC) $(WINE_CFLAGS) -shared -static-libgcc $(MINGW32_LDFLAGS) -o $@ $^

$(WINE_DIST)/dxcl-wine-info.exe: wine/info/info.c wine/dxclcl/vulkan_devices.h $(WINE_DIST)/opencl.dll | $(WINE_INC)
	$(MINGW_CC) $(WINE_CFLAGS) -o $@ $< -ld3d11 -ldxgi -L$(WINE_DIST) -l:opencl.dll

wine: $(WINE_DIST)/x86_64-windows/dxclcl.dll $(WINE_DIST)/opencl.dll $(WINE_DIST)/dxcl-wine-info.exe \
      $(WINE_DIST)/i386-windows/dxclcl.dll $(WINE_DIST)/i386-windows/opencl.dll
	$(CARGO) build --release -p dxcl-wine
	mkdir -p $(WINE_DIST)/x86_64-unix
	cp $(RELEASE)/libdxclcl.so $(WINE_DIST)/x86_64-unix/dxclcl.so

# Windows programs under Wine with the bridge installed in a fresh prefix, wined3d on llvmpipe under
# Xvfb, PoCL on the unix side, on two Wines: the host's (Debian 12's 8.0) and Debian 13's 10.0 in a
# system made from Debian's archive and kept under build/wine/trixie (scripts/wine/test.sh).
test-wine: wine build/icd-pocl
	@$(MAKE) --no-print-directory stage
	scripts/wine/test.sh

# A 4K texture's hand-off under Wine against the same program on Linux (scripts/wine/bench.sh).
wine-bench: wine build/icd-pocl
	@$(MAKE) --no-print-directory stage
	scripts/wine/bench.sh

# Packages for users without Rust (docs/install.md, scripts/package/build.sh): `deb` makes
# build/package/dxcl_VERSION_amd64.deb and dxcl-wine_VERSION_amd64.deb (lintian-checked), `dist` the
# relocatable build/package/dxcl-VERSION-x86_64-linux.tar.xz. `test-package` installs both into
# the Debian 13 system of the Wine tests and uses them as a user would (scripts/package/test.sh).
deb: build wine
	scripts/package/build.sh deb

dist: build wine
	scripts/package/build.sh dist

test-package: deb dist test-wine
	scripts/package/test.sh

clean:
	$(CARGO) clean
	rm -rf build

#!/usr/bin/env bash
# The layer on DXVK-native: the conformance suite (tests/conformance) and tests/dxvk/foreign.c with
# Direct3D 11 and 10 from DXVK (d3d11, d3d10core, dxgi in build/dxvk), on lavapipe, with PoCL as the
# only OpenCL platform, under a private Xvfb, with the staging strategy (the only one a foreign
# runtime can have), `dxcl info` with DXCL_DXVK_LIB (DXVK's adapters, preferred devices and the
# strategy of each object kind), dxcl's Vulkan layer on DXVK's device, and dxclCreateSharedTexture2D
# (tests/dxvk/shared_texture.c, also under valgrind, and `dxcl demo --d3d dxvk`):
#
#   scripts/dxvk/test.sh            # needs build/dxvk (scripts/dxvk/build.sh SRC_DIR, docs/dxvk.md)
#   DXVK_SRC=/path/to/dxvk scripts/dxvk/test.sh    # builds DXVK first when build/dxvk is missing
#   DXVK_HEADLESS=1 scripts/dxvk/test.sh           # no X server: tests/dxvk/headless_sdl.c stands in
#                                                  # for SDL2 (devices and copies work, no swapchains)
#   scripts/dxvk/test.sh --build-only              # only builds the programs (scripts/gpu/pack.sh)
#
# The suite's programs are compiled against dxcl's headers and linked with DXVK's libraries and
# tests/dxvk/shim.c (SDL video + Vulkan library before the first device, as DXVK-native's SDL2 WSI
# needs; D3D10CreateDevice made from d3d10core's D3D10CoreCreateDevice). Every program's exit
# status counts (a crash at exit is a failure), and the suite's reference-count checks hold for
# DXVK's objects too. Installs its Debian dependencies (sudo only when not root). Exits non-zero
# when a check fails, and when there is no DXVK build to test.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
lib=$repo/build/dxvk/lib
out=$repo/build/dxvk-tests

if [ ! -e "$lib/libdxvk_d3d11.so" ] && [ -n "${DXVK_SRC:-}" ]; then
    scripts/dxvk/build.sh "$DXVK_SRC"
fi
if [ ! -e "$lib/libdxvk_d3d11.so" ]; then
    echo "################################################################################" >&2
    echo "# dxvk test: SKIPPED, NOTHING WAS TESTED: no DXVK build in $lib." >&2
    echo "# Build it with scripts/dxvk/build.sh SRC_DIR (or set DXVK_SRC); see docs/dxvk.md." >&2
    echo "################################################################################" >&2
    exit 2
fi

scripts/deps.sh
packages=(xvfb libsdl2-dev mesa-vulkan-drivers libvulkan-dev)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "dxvk test: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cargo build -q --release -p dxcl-layer -p dxcl-vk-layer -p dxcl-cli
layer=$repo/target/release/libdxcl_layer.so
# dxcl's Vulkan layer, with a manifest of its own for VK_LAYER_PATH.
mkdir -p "$out/vk-layer"
sed "s|@LIBRARY@|$repo/target/release/libdxcl_vk_layer.so|" crates/dxcl-vk-layer/dxcl_external_fd.json.in \
    >"$out/vk-layer/dxcl_external_fd.json"

# dxcl's headers, DXVK's libraries (RPATH, not RUNPATH: libdxvk_d3d11.so finds libdxvk_dxgi.so by it).
mkdir -p "$out/conformance" "$out/logs"
cflags=(-std=c11 -O1 -g -Wall -Wextra -Werror -D_GNU_SOURCE -pthread -I"$repo/include")
libs=(-L"$lib" -Wl,--disable-new-dtags,-rpath,"$lib" -ldxvk_d3d11 -ldxvk_dxgi -ldxvk_d3d10core -lSDL2 -lOpenCL -lm)
cc "${cflags[@]}" -c -o "$out/harness.o" tests/conformance/harness.c
cc "${cflags[@]}" -c -o "$out/shim.o" tests/dxvk/shim.c
programs="discovery contexts buffers textures acquire sync"
for p in $programs; do
    cc "${cflags[@]}" -o "$out/conformance/$p" "tests/conformance/$p.c" "$out/harness.o" "$out/shim.o" "${libs[@]}"
done
cc "${cflags[@]}" -o "$out/foreign" tests/dxvk/foreign.c "${libs[@]}"
cc "${cflags[@]}" -o "$out/vk_layer" tests/dxvk/vk_layer.c "$out/shim.o" "${libs[@]}" -ldl
cc "${cflags[@]}" -o "$out/handoff_bench" tests/dxvk/handoff_bench.c "$out/shim.o" "${libs[@]}"
# dxclCreateSharedTexture2D comes from the layer's own library.
cc "${cflags[@]}" -o "$out/shared_texture" tests/dxvk/shared_texture.c "$out/shim.o" "${libs[@]}" \
    -L"$repo/target/release" -Wl,-rpath,"$repo/target/release" -ldxcl_layer
# The headless stand-in for SDL2, under the soname DXVK's libraries need.
mkdir -p "$out/headless"
cc -std=c11 -O1 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden -Wl,-soname,libSDL2-2.0.so.0 \
    -o "$out/headless/libSDL2-2.0.so.0" tests/dxvk/headless_sdl.c
if [ "${1:-}" = "--build-only" ]; then
    echo "dxvk test: programs built in $out (not run)"
    exit 0
fi

# lavapipe only, PoCL only.
icd=/usr/share/vulkan/icd.d/lvp_icd.$(uname -m).json
[ -e "$icd" ] || { echo "dxvk test: no lavapipe ICD at $icd" >&2; exit 1; }
mkdir -p "$out/vendors"
grep -l pocl /etc/OpenCL/vendors/*.icd | head -1 | xargs -I{} cp {} "$out/vendors/pocl.icd"
[ -e "$out/vendors/pocl.icd" ] || { echo "dxvk test: PoCL's ICD not found in /etc/OpenCL/vendors" >&2; exit 1; }
export VK_ICD_FILENAMES=$icd OCL_ICD_VENDORS=$out/vendors OPENCL_LAYERS=$layer
export DXVK_LOG_LEVEL=${DXVK_LOG_LEVEL:-error} DXVK_LOG_PATH=$out/logs DXVK_STATE_CACHE_PATH=$out/logs

if [ -n "${DXVK_HEADLESS:-}" ]; then
    # No X server: the stand-in answers SDL's calls as a machine without a display would.
    export LD_LIBRARY_PATH=$out/headless${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    unset DISPLAY
    echo "dxvk test: headless (tests/dxvk/headless_sdl.c for SDL2)"
else
    # A private X server (DXVK-native's SDL2 WSI needs one; SDL's offscreen driver has no Vulkan).
    rm -f "$out/logs/display"
    Xvfb -displayfd 3 -screen 0 640x480x24 -nolisten tcp 3>"$out/logs/display" 2>"$out/logs/xvfb.log" &
    xvfb=$!
    trap 'kill "$xvfb" 2>/dev/null || true' EXIT
    display=""
    for _ in $(seq 100); do
        display=$(cat "$out/logs/display" 2>/dev/null || true)
        [ -n "$display" ] && break
        sleep 0.1
    done
    [ -n "$display" ] || { echo "dxvk test: Xvfb did not start (see $out/logs/xvfb.log)" >&2; exit 1; }
    export DISPLAY=:$display
fi
echo "dxvk test: DXVK $(sed -n 's/^tag //p' build/dxvk/SOURCE), lavapipe, PoCL, DISPLAY=${DISPLAY:-none}"

status=0
# dxcl info with DXVK's adapters: the lavapipe adapter, described through DXVK's 4-byte WCHAR,
# paired with the CPU devices through its Vulkan physical device, PoCL's device preferred, and
# staging copies for each object kind with the DXVK reason.
echo "== dxcl info with DXCL_DXVK_LIB"
if DXCL_DXVK_LIB=$lib target/release/dxcl info >"$out/info.txt" 2>&1; then
    sed -n '/^Direct3D adapters (DXVK-native/,$p' "$out/info.txt" >"$out/info-dxvk.txt"
    cat "$out/info-dxvk.txt"
    expect=("^Direct3D adapters (DXVK-native, $lib/libdxvk_dxgi.so):"
            "^  \[0\] llvmpipe.*(description with a 4-byte WCHAR)$"
            "OpenCL devices preferred: runs on the CPU.*IDXGIVkInteropAdapter"
            "platform \[0\] → preferred CL devices (clGetDeviceIDsFromD3D11KHR): \[0\]$")
    for kind in "buffer" "3D texture"; do
        expect+=("^          $kind: staging-copy (DXVK resource: ")
    done
    for kind in "2D texture" "2D texture array"; do
        expect+=("^          $kind: shadow-copy (DXVK texture: ")
    done
    expect+=("^          2D texture made by dxclCreateSharedTexture2D: host-pointer ")
    for e in "${expect[@]}"; do
        grep -q -- "$e" "$out/info-dxvk.txt" || { echo "FAIL dxcl info: no line matching '$e'"; status=1; }
    done
else
    cat "$out/info.txt"
    echo "FAIL dxcl info exited non-zero"
    status=1
fi
echo "== tests/dxvk/foreign.c (the layer picks its own strategy)"
DXCL_LOG=1 "$out/foreign" 2>"$out/foreign.stderr" || status=1
cat "$out/foreign.stderr" >&2
# The layer must have recognised DXVK's device and said so (DXCL_LOG=1 prints each decision once).
grep -q "clCreateFromD3D resource: staging-copy (DXVK resource: " "$out/foreign.stderr" ||
    { echo "FAIL foreign: the layer did not name DXVK in its decision (DXCL_LOG)"; status=1; }
# dxcl's Vulkan layer: DXVK's device exports no memory fd without it, and does with it.
echo "== dxcl's Vulkan layer on DXVK's device (crates/dxcl-vk-layer)"
EXPECT_FD=0 "$out/vk_layer" || status=1
EXPECT_FD=1 VK_LAYER_PATH="$out/vk-layer" VK_INSTANCE_LAYERS=VK_LAYER_DXCL_external_fd DXCL_LOG=1 "$out/vk_layer" ||
    status=1
# A texture made by dxclCreateSharedTexture2D: shared in place, no staging copies.
echo "== dxclCreateSharedTexture2D (include/dxcl/dxcl_dxvk.h)"
DXCL_LOG=1 "$out/shared_texture" 2>"$out/shared_texture.stderr" || status=1
cat "$out/shared_texture.stderr" >&2
grep -q "clCreateFromD3D resource: host-pointer" "$out/shared_texture.stderr" ||
    { echo "FAIL shared_texture: the layer did not share the texture in place (DXCL_LOG)"; status=1; }
# The same on rusticl, which caches images: the host-pointer strategy copies at each hand-off, and
# the release's CPU wait must not stall on commands rusticl runs only once flushed.
if [ -e /etc/OpenCL/vendors/rusticl.icd ]; then
    mkdir -p "$out/vendors-rusticl"
    cp /etc/OpenCL/vendors/rusticl.icd "$out/vendors-rusticl/"
    OCL_ICD_VENDORS=$out/vendors-rusticl RUSTICL_ENABLE=llvmpipe timeout 120 "$out/shared_texture" \
        >"$out/shared_texture.rusticl" 2>&1 ||
        { echo "FAIL shared_texture on rusticl (see $out/shared_texture.rusticl)"; status=1; }
    grep "shared_texture:" "$out/shared_texture.rusticl" | sed 's/^/rusticl: /'
else
    echo "dxvk test: no rusticl ICD: shared_texture not run on a caching platform"
fi
# The helper's GPU path (exportable memory, its fd through dxcl's Vulkan layer), forced on lavapipe:
# PoCL imports no fd, so the layer must fall back to staging copies, saying why, and still pass.
DXCL_SHARED_TEXTURE_MEMORY=exportable VK_LAYER_PATH="$out/vk-layer" VK_INSTANCE_LAYERS=VK_LAYER_DXCL_external_fd \
    DXCL_LOG=1 "$out/shared_texture" >"$out/shared_texture.exportable" 2>&1 ||
    { echo "FAIL shared_texture, exportable memory (see $out/shared_texture.exportable)"; status=1; }
grep -q "staging-copy (a context device cannot import the resource's opaque fd" "$out/shared_texture.exportable" ||
    { echo "FAIL shared_texture, exportable memory: not the staging fallback (DXCL_LOG)"; status=1; }
grep "shared_texture:" "$out/shared_texture.exportable" | sed 's/^/exportable memory: /'
# The same under valgrind: the helper's Vulkan objects and interop object, freed with the texture.
if command -v valgrind >/dev/null; then
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        --suppressions=tests/valgrind.supp "$out/shared_texture" >"$out/shared_texture.valgrind" 2>&1 ||
        { echo "FAIL shared_texture under valgrind (see $out/shared_texture.valgrind)"; status=1; }
    grep "shared_texture:" "$out/shared_texture.valgrind" | sed 's/^/valgrind: /'
fi
# The demo on DXVK: its textures made by dxclCreateSharedTexture2D, shared without a copy.
echo "== dxcl demo --d3d dxvk"
if DXCL_DXVK_LIB=$lib target/release/dxcl demo --d3d dxvk --size 256 --out "$out/demo.png" >"$out/demo.txt" 2>&1; then
    cat "$out/demo.txt"
    grep -q "copies of the texture's data: none" "$out/demo.txt" ||
        { echo "FAIL dxcl demo --d3d dxvk: not zero-copy"; status=1; }
else
    cat "$out/demo.txt"
    echo "FAIL dxcl demo --d3d dxvk exited non-zero"
    status=1
fi
# What a shadow copy saves: a 4K texture's hand-off, staging against shadow copies, in one run.
echo "== hand-off of a DXVK texture: staging-copy against shadow-copy"
DXCL_LOG=1 "$out/handoff_bench" 2>"$out/handoff_bench.stderr" || status=1
grep -q "clCreateFromD3D resource: shadow-copy" "$out/handoff_bench.stderr" ||
    { echo "FAIL handoff_bench: the layer did not pick shadow-copy"; status=1; }
echo "== conformance on DXVK-native (DXCL_STRATEGY=staging)"
DXCL_STRATEGY=staging tests/conformance/run.sh "$out/conformance" "" "$programs" "" || status=1
# The layer's own choice: DXVK's D3D11 2D textures through shadows in dxcl's memory (shadow-copy),
# buffers, 3D textures and D3D10 through staging copies.
echo "== conformance on DXVK-native (the layer's choice: shadow copies for D3D11 2D textures)"
tests/conformance/run.sh "$out/conformance" "" "$programs" "" || status=1
if [ "$status" -ne 0 ]; then
    echo "dxvk test: FAILED (DXVK's own log: $out/logs)" >&2
else
    echo "dxvk test: all passed"
fi
exit "$status"

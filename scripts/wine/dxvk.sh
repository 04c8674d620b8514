#!/usr/bin/env bash
# dxcl's Windows programs under Wine with DXVK's Windows DLLs as the prefix's Direct3D, not wined3d
# (docs/wine.md, "DXVK's Windows DLLs"), outside CI:
#
#   scripts/wine/dxvk.sh SRC_DIR        # SRC_DIR: a DXVK v2.3 tree with its submodules (docs/dxvk.md)
#
# 1. installs what it needs from Debian (scripts/wine/deps.sh's packages, meson, glslang, Mesa's
#    Vulkan drivers; sudo only when not root), builds the Wine bridge and stages dxcl (make);
# 2. builds DXVK's Windows DLLs (d3d11.dll, d3d10core.dll, dxgi.dll; no D3D9) with MinGW-w64 and
#    DXVK's own cross file build-win64.txt, into build/dxvk-windows/x64 (meson's folder:
#    build/dxvk-windows/meson; a second run rebuilds only what changed);
# 3. makes a fresh prefix, build/wine/dxvk-prefix, with `dxcl wine install`, copies the three DLLs
#    into its system32 and sets the DLL overrides d3d11, d3d10core, dxgi = native, as DXVK's own
#    setup script does;
# 4. runs what scripts/wine/test.sh runs (scripts/wine/programs.sh): `dxcl wine info`,
#    tests/wine/bridge.c, tests/wine/affinity.c, tests/windows/d3d11_cl.cpp and the conformance
#    suite's Windows builds, under Xvfb with lavapipe as the only Vulkan driver (winevulkan passes
#    DXVK's Vulkan calls to it), PoCL with dxcl's layer on the unix side;
# 5. checks that DXVK was the Direct3D in use: the DXGI adapter `dxcl wine info` sees is lavapipe's
#    (wined3d's is a made-up GPU), each program's log has DXVK's version line, and DXVK wrote a log
#    for every conformance program.
#
# Logs: build/wine/dxvk-tests (DXVK's own logs in dxvk-logs/). Exit status 0 when everything passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
. scripts/install-debs.sh
. scripts/dxvk/source.sh
. scripts/wine/programs.sh
dxvk_source "wine dxvk" "$@"
start=$(date +%s)

scripts/wine/deps.sh
install_debs "wine dxvk" meson ninja-build glslang-tools mesa-vulkan-drivers libvulkan1
make --no-print-directory wine build/icd-pocl
make --no-print-directory stage
dxcl=$root/build/stage/bin/dxcl
export OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-$root/build/icd-pocl}

# DXVK's Windows DLLs, as DXVK's package-release.sh lays them out (x64/).
dlls=$root/build/dxvk-windows
if [ ! -f "$dlls/meson/build.ninja" ]; then
    meson setup "$dlls/meson" "$dxvk_src" --cross-file "$dxvk_src/build-win64.txt" \
        --cross-file "$root/scripts/wine/mingw-posix.txt" --buildtype release --prefix "$dlls" \
        --bindir x64 --libdir x64 -Denable_d3d9=false
fi
ninja -C "$dlls/meson" -j "${DXVK_JOBS:-$(nproc)}"
ninja -C "$dlls/meson" install >/dev/null
printf 'source %s\ntag %s\n' "$dxvk_src" "$dxvk_tag" > "$dlls/SOURCE"
echo "wine dxvk: DXVK $dxvk_tag's Windows DLLs in $dlls/x64 ($(($(date +%s) - start)) s so far)"

out=$root/build/wine/dxvk-tests
rm -rf "$out"
mkdir -p "$out/dxvk-logs"
wine_build_programs "$out"
wine_prefix "$root/build/wine/dxvk-prefix"
rm -rf "$WINEPREFIX"
timeout 300 xvfb-run -a "$dxcl" wine install "$WINEPREFIX"
sys=$WINEPREFIX/drive_c/windows/system32
# The Wine `dxcl wine` picks (DXCL_WINE, else wine, wine64, Debian's wine64).
wine=${DXCL_WINE:-$(wine_loader)}
for d in d3d11 d3d10core dxgi; do
    cp "$dlls/x64/$d.dll" "$sys/$d.dll"
    "$wine" reg add 'HKCU\Software\Wine\DllOverrides' /v "$d" /d native /f >/dev/null
done

# lavapipe only; DXVK says which version and device it runs on (info), keeps its logs out of the
# programs' folders and writes no pipeline cache.
export VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
export DXVK_LOG_LEVEL=info DXVK_LOG_PATH=$out/dxvk-logs DXVK_STATE_CACHE=0
tests=$(date +%s)
wine_info "$out"
if ! grep -q "DXGI adapter 0: llvmpipe" "$out/info.log"; then
    echo "wine dxvk: the prefix's DXGI adapter is not lavapipe's: DXVK is not the Direct3D in use" >&2
    exit 1
fi
wine_run_programs "$out"
for p in bridge affinity d3d11_cl; do
    if ! grep -q "DXVK: $dxvk_tag" "$out/$p.log"; then
        echo "wine dxvk: $p ran without DXVK (no version line in $out/$p.log)" >&2
        exit 1
    fi
done
conformance=0
# DXVK's info lines stay in its logs, out of the suite's.
wine_run_conformance "$out" "/^info:  /" || conformance=1
for p in $wine_conformance; do
    if ! grep -qs "DXVK: $dxvk_tag" "$out/dxvk-logs/${p}_dxgi.log"; then
        echo "wine dxvk: conformance program $p ran without DXVK (no version line in $out/dxvk-logs/${p}_d3d11.log)" >&2
        conformance=1
    fi
done
if [ "$conformance" -ne 0 ]; then
    echo "wine dxvk: the conformance suite failed under DXVK (see $out/conformance.log)" >&2
    exit 1
fi
echo "wine dxvk: passed (programs: $(($(date +%s) - tests)) s; all: $(($(date +%s) - start)) s)"

#!/usr/bin/env bash
# dxcl's Windows programs under Wine with DXVK's Windows DLLs as the prefix's Direct3D, not wined3d
# (docs/wine.md, "DXVK's Windows DLLs"), outside CI:
#
#   scripts/wine/dxvk.sh SRC_DIR            # the host's Wine (Debian 12's 8.0)
#   scripts/wine/dxvk.sh --wine10 SRC_DIR   # Debian 13's Wine 10.0, in the Debian 13 system that
#                                           # scripts/wine/trixie.sh makes and keeps
#   scripts/wine/dxvk.sh --wow64 SRC_DIR    # 32-bit programs and DLLs, on the Wine built in the new
#                                           # WoW64 mode that scripts/wine/wow64.sh makes and keeps
#
# SRC_DIR: a DXVK v2.3 tree with its submodules (docs/dxvk.md).
#
# 1. installs what it needs from Debian (scripts/wine/deps.sh's packages, meson, glslang, Mesa's
#    Vulkan drivers; sudo only when not root), builds the Wine bridge and stages dxcl (make);
# 2. builds DXVK's Windows DLLs (d3d11.dll, d3d10core.dll, dxgi.dll; no D3D9) with MinGW-w64 and
#    DXVK's own cross file build-win64.txt, into build/dxvk-windows/x64 (meson's folder:
#    build/dxvk-windows/meson; a second run rebuilds only what changed), and the programs;
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
# With --wine10, steps 1 and 2 run on the host as above (the Debian 13 system has no compiler) and
# steps 3-5 in the Debian 13 system (the same DLLs, programs and staged dxcl, its Wine 10.0, Mesa's
# lavapipe and PoCL), through `scripts/wine/trixie.sh scripts/wine/dxvk.sh --run OUT PREFIX`.
#
# With --wow64, DXVK's DLLs are built 32-bit instead (build-win32.txt, into build/dxvk-windows/x32;
# meson's folder build/dxvk-windows/meson32), the programs and the suite 32-bit, and steps 3-5 run
# in the system wow64.sh makes, with the DLLs in the prefix's syswow64.
#
# Logs: build/wine/dxvk-tests, with --wine10 build/wine/dxvk-tests-10.0, with --wow64
# build/wine/dxvk-tests-wow64 (DXVK's own logs in dxvk-logs/); prefix: build/wine/dxvk-prefix (-10.0,
# -wow64). Exit status 0 when everything passed.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
. scripts/install-debs.sh
. scripts/dxvk/source.sh
. scripts/wine/programs.sh
dxcl=$root/build/stage/bin/dxcl
# DXVK's Windows DLLs, as DXVK's package-release.sh lays them out (x64/).
dlls=$root/build/dxvk-windows

# run_tests OUT PREFIX [BITS]: steps 3-5 on the Wine at hand, with the programs already built in OUT
# (BITS 32: 32-bit programs and DLLs, in the prefix's syswow64; default 64).
run_tests() {
    local out=$1 p conformance=0 tests bits=${3:-64} arch=x64 dir=system32
    local suite=$root/build/wine/conformance
    if [ "$bits" = 32 ]; then
        arch=x32 dir=syswow64 suite=$root/build/wine/conformance-i386
    fi
    echo "wine dxvk: Wine $(wine_version) ($(wine_loader)), DXVK $dxvk_tag's DLLs from $dlls/$arch"
    wine_prefix "$2"
    rm -rf "$WINEPREFIX"
    timeout 300 xvfb-run -a "$dxcl" wine install "$WINEPREFIX"
    local sys=$WINEPREFIX/drive_c/windows/$dir
    # The Wine `dxcl wine` picks (DXCL_WINE, else wine, wine64, Debian's wine64).
    local wine=${DXCL_WINE:-$(wine_loader)}
    # 32-bit: the overrides name both architectures, and system32 keeps Wine's own 64-bit DLLs
    # (builtin), which `native` alone would refuse to load; `native,builtin` loads them there.
    local order=native
    [ "$bits" = 32 ] && order=native,builtin
    for p in d3d11 d3d10core dxgi; do
        cp "$dlls/$arch/$p.dll" "$sys/$p.dll"
        "$wine" reg add 'HKCU\Software\Wine\DllOverrides' /v "$p" /d "$order" /f >/dev/null
    done

    # lavapipe only (Debian 12's Mesa names its manifest lvp_icd.x86_64.json, Debian 13's
    # lvp_icd.json); DXVK says which version and device it runs on (info), keeps its logs out of the
    # programs' folders and writes no pipeline cache.
    local icd=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
    [ -f "$icd" ] || icd=/usr/share/vulkan/icd.d/lvp_icd.json
    if [ ! -f "$icd" ]; then
        echo "wine dxvk: no lavapipe manifest in /usr/share/vulkan/icd.d (Mesa's Vulkan drivers)" >&2
        exit 1
    fi
    export VK_ICD_FILENAMES=$icd
    export DXVK_LOG_LEVEL=info DXVK_LOG_PATH=$out/dxvk-logs DXVK_STATE_CACHE=0
    tests=$(date +%s)
    wine_info "$out"
    # (`dxcl wine info` is a 64-bit program: with 32-bit DLLs it sees wined3d's adapter.)
    if [ "$bits" = 64 ] && ! grep -q "DXGI adapter 0: llvmpipe" "$out/info.log"; then
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
    # DXVK's info lines stay in its logs, out of the suite's.
    wine_run_conformance "$out" "/^info:  /" "$suite" || conformance=1
    for p in $wine_conformance; do
        if ! grep -qs "DXVK: $dxvk_tag" "$out/dxvk-logs/${p}_dxgi.log"; then
            echo "wine dxvk: conformance program $p ran without DXVK (no version line in $out/dxvk-logs/${p}_dxgi.log)" >&2
            conformance=1
        fi
    done
    if [ "$conformance" -ne 0 ]; then
        echo "wine dxvk: the conformance suite failed under DXVK (see $out/conformance.log)" >&2
        exit 1
    fi
    echo "wine dxvk: Wine $(wine_version): the programs passed in $(($(date +%s) - tests)) s"
}

# Steps 3-5 alone, inside the Debian 13 system (what --wine10 and --wow64 run there).
if [ "${1:-}" = --run ]; then
    run_tests "$2" "$3" "${4:-64}"
    exit 0
fi

wine10=0 wow64=0
if [ "${1:-}" = --wine10 ]; then
    wine10=1
    shift
elif [ "${1:-}" = --wow64 ]; then
    wow64=1
    shift
fi
dxvk_source "wine dxvk" "$@"
start=$(date +%s)

scripts/wine/deps.sh
install_debs "wine dxvk" meson ninja-build glslang-tools mesa-vulkan-drivers libvulkan1
make --no-print-directory wine build/icd-pocl
make --no-print-directory stage
export OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-$root/build/icd-pocl}

# build_dlls MESON_DIR CROSS_FILE POSIX_FILE ARCH: DXVK's three DLLs into $dlls/ARCH (meson's folder
# MESON_DIR; a second run rebuilds only what changed).
build_dlls() {
    if [ ! -f "$1/build.ninja" ]; then
        meson setup "$1" "$dxvk_src" --cross-file "$dxvk_src/$2" --cross-file "$root/scripts/wine/$3" \
            --buildtype release --prefix "$dlls" --bindir "$4" --libdir "$4" -Denable_d3d9=false
    fi
    ninja -C "$1" -j "${DXVK_JOBS:-$(nproc)}"
    ninja -C "$1" install >/dev/null
    printf 'source %s\ntag %s\n' "$dxvk_src" "$dxvk_tag" > "$dlls/SOURCE"
    echo "wine dxvk: DXVK $dxvk_tag's Windows DLLs in $dlls/$4 ($(($(date +%s) - start)) s so far)"
}

# The DLLs, the programs, then the run: here, in the Debian 13 system, or in the new-mode one.
suffix="" bits=64
if [ "$wow64" -eq 1 ]; then
    # 32-bit: DXVK's build-win32.txt, MinGW-w64's i686 posix-thread compilers.
    build_dlls "$dlls/meson32" build-win32.txt mingw-posix32.txt x32
    suffix=-wow64 bits=32
else
    build_dlls "$dlls/meson" build-win64.txt mingw-posix.txt x64
    [ "$wine10" -eq 0 ] || suffix=-10.0
fi
out=$root/build/wine/dxvk-tests$suffix
prefix=$root/build/wine/dxvk-prefix$suffix
rm -rf "$out"
mkdir -p "$out/dxvk-logs"
wine_build_programs "$out" "$bits"
if [ "$wow64" -eq 1 ]; then
    scripts/wine/wow64.sh "$root/scripts/wine/dxvk.sh" --run "$out" "$prefix" 32
elif [ "$wine10" -eq 1 ]; then
    # The system's own OCL_ICD_VENDORS (its PoCL); the rest of the environment goes in with it.
    scripts/wine/trixie.sh "$root/scripts/wine/dxvk.sh" --run "$out" "$prefix"
else
    run_tests "$out" "$prefix"
fi
echo "wine dxvk: passed ($(($(date +%s) - start)) s in all)"

#!/usr/bin/env bash
# make test-wine: Windows programs (MinGW-w64) run with dxcl's bridge on two Wines: the host's
# (Debian 12's Wine 8.0) and Debian 13's Wine 10.0 in a system made from Debian's archive
# (scripts/wine/trixie.sh). On each, in a fresh prefix made and set up by `dxcl wine install`,
# wined3d on llvmpipe under Xvfb, PoCL (with dxcl's layer) on the unix side: `dxcl wine info`,
# the test programs, the conformance suite's Windows builds; then `dxcl wine uninstall` must give
# the prefix Wine's own opencl.dll back. Run from `make test-wine`, which builds the bridge and
# stages dxcl first. `--run` runs the programs on the Wine at hand only (what each Wine runs).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dxcl=$root/build/stage/bin/dxcl
bin=$root/build/wine/tests
. scripts/wine/programs.sh

if [ "${1:-}" != --run ]; then
    wine_build_programs "$bin"
    "$0" --run
    scripts/wine/trixie.sh "$0" --run
    echo "test-wine: passed on both Wines"
    exit 0
fi

version=$(wine_version)
out=$bin/wine-$version
mkdir -p "$out"
wine_prefix "$root/build/wine/prefix-$version"
rm -rf "$WINEPREFIX"
start=$(date +%s)
timeout 300 xvfb-run -a "$dxcl" wine install "$WINEPREFIX"
echo "test-wine: Wine $version: prefix made and bridge installed in $(($(date +%s) - start)) s"
wine_info "$out"
wine_run_programs "$out" "$bin"
conformance=0
wine_run_conformance "$out" || conformance=1
"$dxcl" wine uninstall "$WINEPREFIX"
sys=$WINEPREFIX/drive_c/windows/system32
if [ -e "$sys/dxclcl.dll" ] || [ -e "$sys/opencl.dll.dxcl-saved" ] || cmp -s "$sys/opencl.dll" build/wine/dist/opencl.dll; then
    echo "test-wine: uninstall left the bridge in the prefix" >&2
    exit 1
fi
if "$(wine_loader)" reg query 'HKCU\Software\Wine\DllOverrides' /v opencl >/dev/null 2>&1; then
    echo "test-wine: uninstall left the opencl override" >&2
    exit 1
fi
# Wine's own opencl.dll again: it hides the sharing extensions.
timeout 120 xvfb-run -a "$(wine_loader)" build/wine/dist/dxcl-wine-info.exe > "$out/after-uninstall.log" 2>&1 || true
if grep -q "d3d1._sharing" "$out/after-uninstall.log"; then
    echo "test-wine: a program still sees the sharing extensions after uninstall" >&2
    exit 1
fi
if [ "$conformance" -ne 0 ]; then
    echo "test-wine: the conformance suite failed under Wine $version (see $out/conformance.log)" >&2
    exit 1
fi
echo "test-wine: Wine $version passed ($(($(date +%s) - start)) s)"

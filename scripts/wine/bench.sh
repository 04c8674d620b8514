#!/usr/bin/env bash
# A 3840x2160 texture's hand-off (acquire + release + clFinish, median of 15) from one C source
# (tests/wine/handoff.c) built twice and run in one go on this machine: for Linux on dxcl's runtime
# (software adapter) with staging copies and with its default (host pointer), and for Windows under
# Wine with the bridge (wined3d, whose textures the layer shares through staging copies). Then where
# the Wine time goes, in the same run:
# - Direct3D's own cost of the staging copies (tests/wine/staging.c, no OpenCL): the calls the
#   layer makes per hand-off, on wined3d under Wine and on dxcl's runtime;
# - the hand-off's split with DXCL_TRACE=handoff: the layer's steps on Linux, and under Wine the
#   layer's steps with the bridge's round trips (its unix side prints both when the program exits);
# - `dxcl frames`' rows a, b and c (tests/wine/frames.c, the same loop in C) on Linux and under Wine.
# The hand-offs run in WINE_BENCH_ROUNDS rounds (default 3), each the Linux and the Wine program back to back
# with the load average beside it: on a machine shared with other work the figures move with it,
# and each round's ratio compares runs made under the same load.
# The hand-off rounds run again in Debian 13's system (scripts/wine/trixie.sh), the Linux program
# there and the Windows one under its Wine 10.0, both on that system's PoCL: its own table.
# Prints the medians, the ratios, the load average before and after, then the two traces. Needs
# `make wine stage` first (`make wine-bench` does both); installs its Debian packages through
# scripts/wine/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dxcl=$root/build/stage/bin/dxcl
out=$root/build/wine/bench
inside=${1:-}
mkdir -p "$out"
# The programs are built here, before the Debian 13 system (which has no compiler) runs them.
if [ "$inside" != --handoffs-only ]; then
    scripts/wine/deps.sh
    export OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-$root/build/icd-pocl}
    dxcl_flags=$(PKG_CONFIG_PATH="$root/build/stage/lib/pkgconfig" pkg-config --cflags --libs dxcl)
    mingw=(x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -Werror -Wno-missing-field-initializers -I"$root/build/wine/inc")
    for p in handoff staging frames; do
        # shellcheck disable=SC2086 # pkg-config's flags are words
        cc -std=c11 -O2 -Wall -Wextra -Werror -o "$out/$p" "tests/wine/$p.c" $dxcl_flags -lOpenCL
        "${mingw[@]}" -o "$out/$p.exe" "tests/wine/$p.c" -ld3d11 -L"$root/build/wine/dist" -l:opencl.dll
    done
fi
layer=$root/build/stage/lib/libdxcl_layer.so
. scripts/wine/programs.sh
version=$(wine_version)
wine_prefix "$root/build/wine/bench-prefix-$version"
wine_install_current
median() { tr -d '\r' | sed -n "s/^$1: \([0-9.]*\) .*/\1/p"; }
linux() { DXCL_ADAPTER=software OPENCL_LAYERS=$layer "$@"; }
wine_run() { timeout 300 xvfb-run -a "$dxcl" wine run --prefix "$WINEPREFIX" "$@"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
load() { cut -d' ' -f1 /proc/loadavg; }
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
rounds=${WINE_BENCH_ROUNDS:-3}
handoffs=$out/handoffs-$version.md
echo "| round | Linux staging µs | Linux DXCL_INTEROP=0 µs | Linux default µs | Wine µs | Wine / Linux staging | Wine / DXCL_INTEROP=0 | load (1 min) |" >"$handoffs"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" >>"$handoffs"
for i in $(seq "$rounds"); do
    linux_staging=$(DXCL_STRATEGY=staging linux "$out/handoff" | median handoff)
    linux_foreign=$(DXCL_STRATEGY=staging DXCL_INTEROP=0 linux "$out/handoff" | median handoff)
    linux_default=$(linux "$out/handoff" | median handoff)
    wine=$(wine_run "$out/handoff.exe" | median handoff)
    echo "| $i | $linux_staging | $linux_foreign | $linux_default | $wine | $(ratio "$wine" "$linux_staging") | $(ratio "$wine" "$linux_foreign") | $(load) |" >>"$handoffs"
done
[ "$inside" != --handoffs-only ] || exit 0
scripts/wine/trixie.sh "$0" --handoffs-only
linux "$out/staging" >"$out/staging-linux.log"
wine_run "$out/staging.exe" | tr -d '\r' >"$out/staging-wine.log"
d3d_linux=$(median staging <"$out/staging-linux.log")
d3d_wine=$(median staging <"$out/staging-wine.log")
# A frame that fails its check fails the bench (the program's exit status), with its log shown.
linux "$out/frames" >"$out/frames-linux.log" || { cat "$out/frames-linux.log"; exit 1; }
wine_run "$out/frames.exe" | tr -d '\r' >"$out/frames-wine.log" || { cat "$out/frames-wine.log"; exit 1; }
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
# The traces, apart from the timed runs (a span costs a clock read or two).
DXCL_TRACE=handoff DXCL_STRATEGY=staging DXCL_INTEROP=0 linux "$out/handoff" >/dev/null 2>"$out/trace-linux.md"
DXCL_TRACE=handoff wine_run "$out/handoff.exe" >/dev/null 2>"$out/trace-wine.md"
echo "3840x2160 R8G8B8A8_UNORM hand-off (acquire + release + clFinish), median of 15, PoCL; per round:"
echo "Linux: dxcl's runtime (software adapter) with staging copies, the same with DXCL_INTEROP=0 (the"
echo "runtime as a foreign device: the release writes back, as under Wine) and its default (host"
echo "pointer); Wine: the Windows program under Wine (wined3d on llvmpipe), through the bridge."
echo
echo "This machine, Wine $version:"
echo
cat "$handoffs"
echo
echo "Debian 13's system (its PoCL for both programs), Wine 10.0:"
echo
cat "$out"/handoffs-10.*.md
echo
steps() { awk '/^update:/ { exit } /^  / { sub(/^  /, "  - "); print }' "$out/staging-$1.log"; }
update() { median update <"$out/staging-$1.log"; }
echo "Direct3D's own staging copies per hand-off (tests/wine/staging.c, no OpenCL), median of 15:"
echo "- dxcl's runtime (software adapter): $d3d_linux µs"
steps linux
echo "- wined3d under Wine: $d3d_wine µs"
steps wine
echo "- wined3d alone / Linux staging hand-off (the last round's): $(ratio "$d3d_wine" "$linux_staging") (the target: 1.3x)"
echo "- the same with the write-back as one UpdateSubresource from the shadow (no Map(WRITE), rows,"
echo "  Unmap or copy back): dxcl's runtime $(update linux) µs, wined3d $(update wine) µs"
echo
frame() { sed -n "s/^frames $1: \([0-9.]*\) .*/\1/p" "$out/frames-$2.log"; }
echo "dxcl frames' rows (tests/wine/frames.c), 3840x2160, median ms of 5 frames after 1:"
echo "| case | Linux, dxcl's runtime (software adapter) | Windows program under Wine (wined3d) |"
echo "| --- | ---: | ---: |"
for c in opencl-only host-round-trip dxcl; do
    echo "| $c | $(frame $c linux) | $(frame $c wine) |"
done
for platform in linux wine; do
    a=$(frame opencl-only $platform) b=$(frame host-round-trip $platform) c=$(frame dxcl $platform)
    echo "- $platform: b/a $(ratio "$b" "$a"), c/a $(ratio "$c" "$a"), c/b $(ratio "$c" "$b")"
done
echo
echo "Load average (1, 5, 15 min): $load_before before, $load_after after the timed runs"
echo
echo "Trace, Linux, DXCL_STRATEGY=staging DXCL_INTEROP=0 (DXCL_TRACE=handoff):"
cat "$out/trace-linux.md"
echo
echo "Trace, Wine, through the bridge (DXCL_TRACE=handoff):"
tr -d '\r' <"$out/trace-wine.md"

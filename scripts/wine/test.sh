#!/usr/bin/env bash
# make test-wine: Windows programs (MinGW-w64) run under Wine 8.0 with dxcl's bridge, in a fresh
# prefix made and set up by `dxcl wine install`, wined3d on llvmpipe under Xvfb, PoCL (with dxcl's
# layer) on the unix side. Then `dxcl wine uninstall` must give the prefix Wine's own opencl.dll
# back. Between the two, the conformance suite's Windows builds run in the prefix. Run from
# `make test-wine`, which builds the bridge and stages dxcl first.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dxcl=$root/build/stage/bin/dxcl
out=$root/build/wine/tests
mkdir -p "$out"
# A crash must fail the run, not wait in Wine's debugger.
export WINEPREFIX=$root/build/wine/prefix WINEDEBUG=-all WINEDLLOVERRIDES="winedbg.exe=d"
cflags=(-O1 -Wall -Wextra -Werror -Wno-missing-field-initializers -Wno-cast-function-type -I"$root/build/wine/inc")
link=(-L"$root/build/wine/dist" -l:opencl.dll)
x86_64-w64-mingw32-gcc "${cflags[@]}" -o "$out/bridge.exe" tests/wine/bridge.c -ld3d10 -ld3d11 -ldxgi "${link[@]}"
x86_64-w64-mingw32-gcc "${cflags[@]}" -o "$out/affinity.exe" tests/wine/affinity.c -ld3d10 -ldxgi "${link[@]}"
# The Windows-idiom example, unchanged (as sdk-check.sh builds it against MinGW-w64's SDK headers).
x86_64-w64-mingw32-g++ -std=c++17 -O1 -Wall -Wextra -Werror -I"$root/build/wine/inc" -o "$out/d3d11_cl.exe" \
    tests/windows/d3d11_cl.cpp -ld3d11 -ldxgi "${link[@]}" -static-libgcc -static-libstdc++
# Wine keeps a server per prefix; stop ours however this script ends.
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
trap '"$wineserver" -k >/dev/null 2>&1 || true' EXIT
rm -rf "$WINEPREFIX"
start=$(date +%s)
timeout 300 xvfb-run -a "$dxcl" wine install "$WINEPREFIX"
echo "test-wine: prefix made and bridge installed in $(($(date +%s) - start)) s"
timeout 120 xvfb-run -a "$dxcl" wine info "$WINEPREFIX" | tee "$out/info.log"
grep -q "extensions a Windows program can use:.*cl_khr_d3d11_sharing" "$out/info.log"
grep -q "preferred OpenCL device: " "$out/info.log"
# Each program must print its pass line with no failure and exit with status 0.
for p in bridge affinity d3d11_cl; do
    timeout 300 xvfb-run -a "$dxcl" wine run --prefix "$WINEPREFIX" "$out/$p.exe" | tee "$out/$p.log"
    tr -d "\r" < "$out/$p.log" | grep -q "^$p: [0-9]* passed, 0 failed$"
done
# The conformance suite (tests/conformance), its Windows builds, run by the suite's own run.sh under
# one X server: each program through `dxcl wine run` with a timeout (beyond its own watchdog), by a
# wrapper that drops the Windows line ends from its output and dxcl's own line about a failed exit
# status (run.sh reads the program's result line last, and reports the status itself). Every
# program runs once, in the full mode (DXCL_CONFORMANCE_REDUCED=1 for the reduced one); no staging
# or DXCL_INTEROP=0 reruns: Wine's Direct3D is a foreign device, which always takes staging copies.
make -s -C tests/conformance windows
# DXCL_WINE_CONFORMANCE names the programs to run (default: all).
programs=${DXCL_WINE_CONFORMANCE:-discovery contexts buffers textures acquire sync threads hostptr}
wrap=$out/conformance
mkdir -p "$wrap"
for p in $programs; do
    cat >"$wrap/$p" <<EOF
#!/usr/bin/env bash
set -o pipefail
timeout 900 "$dxcl" wine run --prefix "$WINEPREFIX" "$root/build/wine/conformance/$p.exe" 2>&1 | tr -d "\r" | sed "/^dxcl: the program /d"
EOF
    chmod +x "$wrap/$p"
done
conformance=0
timeout 2400 xvfb-run -a tests/conformance/run.sh "$wrap" "" "$programs" "" | tee "$out/conformance.log" || conformance=1
"$dxcl" wine uninstall "$WINEPREFIX"
sys=$WINEPREFIX/drive_c/windows/system32
if [ -e "$sys/dxclcl.dll" ] || [ -e "$sys/opencl.dll.dxcl-saved" ] || cmp -s "$sys/opencl.dll" build/wine/dist/opencl.dll; then
    echo "test-wine: uninstall left the bridge in the prefix" >&2
    exit 1
fi
if /usr/lib/wine/wine64 reg query 'HKCU\Software\Wine\DllOverrides' /v opencl >/dev/null 2>&1; then
    echo "test-wine: uninstall left the opencl override" >&2
    exit 1
fi
# Wine's own opencl.dll again: it hides the sharing extensions.
timeout 120 xvfb-run -a /usr/lib/wine/wine64 build/wine/dist/dxcl-wine-info.exe > "$out/after-uninstall.log" 2>&1 || true
if grep -q "d3d1._sharing" "$out/after-uninstall.log"; then
    echo "test-wine: a program still sees the sharing extensions after uninstall" >&2
    exit 1
fi
if [ "$conformance" -ne 0 ]; then
    echo "test-wine: the conformance suite failed under Wine (see $out/conformance.log)" >&2
    exit 1
fi
echo "test-wine: passed ($(($(date +%s) - start)) s)"

#!/usr/bin/env bash
# A 3840x2160 texture's hand-off (acquire + release + clFinish, median of 15) from one C source
# (tests/wine/handoff.c) built twice and run in one go on this machine: for Linux on dxcl's runtime
# (software adapter) with staging copies and with its default (host pointer), and for Windows under
# Wine with the bridge (wined3d, whose textures the layer shares through staging copies).
# Prints the three medians and the Wine-to-Linux-staging ratio. Needs `make wine stage` first
# (`make wine-bench` does both); installs its Debian packages through scripts/wine/deps.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
scripts/wine/deps.sh
out=$root/build/wine/bench
mkdir -p "$out"
export OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-$root/build/icd-pocl}
cc -std=c11 -O2 -Wall -Wextra -Werror -o "$out/handoff" tests/wine/handoff.c \
    $(PKG_CONFIG_PATH="$root/build/stage/lib/pkgconfig" pkg-config --cflags --libs dxcl) -lOpenCL
x86_64-w64-mingw32-gcc -O2 -Wall -Wextra -Werror -Wno-missing-field-initializers -I"$root/build/wine/inc" \
    -o "$out/handoff.exe" tests/wine/handoff.c -ld3d11 -L"$root/build/wine/dist" -l:opencl.dll
layer=$root/build/stage/lib/libdxcl_layer.so
median() { sed -n 's/^handoff: \([0-9.]*\) .*/\1/p' | tr -d '\r'; }
linux_staging=$(DXCL_STRATEGY=staging DXCL_ADAPTER=software OPENCL_LAYERS=$layer "$out/handoff" | median)
linux_default=$(DXCL_ADAPTER=software OPENCL_LAYERS=$layer "$out/handoff" | median)
export WINEPREFIX=$root/build/wine/bench-prefix WINEDEBUG=-all WINEDLLOVERRIDES="winedbg.exe=d"
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
trap '"$wineserver" -k >/dev/null 2>&1 || true' EXIT
[ -e "$WINEPREFIX/drive_c/windows/system32/dxclcl.dll" ] || xvfb-run -a build/stage/bin/dxcl wine install "$WINEPREFIX" >/dev/null
wine=$(timeout 300 xvfb-run -a build/stage/bin/dxcl wine run --prefix "$WINEPREFIX" "$out/handoff.exe" | median)
echo "3840x2160 R8G8B8A8_UNORM hand-off (acquire + release + clFinish), median of 15, PoCL:"
echo "- Linux, dxcl's runtime (software adapter), staging copies: $linux_staging µs"
echo "- Linux, dxcl's runtime (software adapter), default (host pointer): $linux_default µs"
echo "- Windows program under Wine 8.0 (wined3d on llvmpipe), through the bridge: $wine µs"
awk -v w="$wine" -v s="$linux_staging" 'BEGIN { printf "- Wine / Linux staging: %.2fx\n", w / s }'

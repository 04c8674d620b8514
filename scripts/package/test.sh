#!/usr/bin/env bash
# make test-package: dxcl's packages used as a user uses them, in the Debian 13 system of the Wine
# tests (scripts/wine/trixie.sh: no Rust, no compiler). Needs `make deb dist test-wine` first (the
# packages, and the Windows programs the Wine tests built).
#
#   1. On this machine (Debian 12): apt-get accepts both .debs (a simulated install).
#   2. In Debian 13: `apt-get install ./dxcl_….deb ./dxcl-wine_….deb`; `dxcl --version` says the
#      package's version; `dxcl info`; `dxcl demo`; `dxcl wine install` and a Windows program
#      (tests/windows/d3d11_cl.cpp's build) under Wine 10.0; `apt-get remove dxcl dxcl-wine`, after
#      which no file of the packages' lists is left.
#   3. The archive unpacked into a scratch folder of the same system: the same commands.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
pkgs=("build/package/dxcl_${version}_amd64.deb" "build/package/dxcl-wine_${version}_amd64.deb")
dist=build/package/dxcl-$version-x86_64-linux.tar.xz
program=$root/build/wine/tests/d3d11_cl.exe

# The commands a user runs after installing, with `dxcl` found as DXCL.
use() {
    local dxcl=$1 label=$2
    local got
    got=$("$dxcl" --version)
    [ "$got" = "dxcl $version" ] || { echo "test-package: $label: dxcl --version says '$got', not 'dxcl $version'" >&2; return 1; }
    "$dxcl" info > /tmp/info.log
    grep -q "cl_khr_d3d11_sharing" /tmp/info.log || { cat /tmp/info.log; echo "test-package: $label: dxcl info shows no sharing extension" >&2; return 1; }
    "$dxcl" demo --out /tmp/demo.png
    [ -s /tmp/demo.png ]
    export WINEDEBUG=-all WINEPREFIX=/tmp/prefix-$label
    timeout 300 xvfb-run -a "$dxcl" wine install "$WINEPREFIX" >/dev/null
    timeout 300 xvfb-run -a "$dxcl" wine run --prefix "$WINEPREFIX" "$program" 2>&1 | tr -d '\r' | tee /tmp/program.log
    grep -q "^d3d11_cl: [0-9]* passed, 0 failed$" /tmp/program.log
    wineserver -k 2>/dev/null || true
    echo "test-package: $label: --version, info, demo, and a Windows program under $(wine --version 2>/dev/null) passed"
}

if [ "${1:-}" = --inside ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "${pkgs[@]/#/./}" >/dev/null
    use dxcl deb
    dpkg -L dxcl dxcl-wine | grep -vx "/\." | sort -u > /tmp/files
    apt-get remove -y -qq dxcl dxcl-wine >/dev/null
    left=()
    while read -r f; do
        # Directories the system had before (/usr, /usr/lib, …) stay; everything else must go.
        if [ -e "$f" ] && ! { [ -d "$f" ] && dpkg -S "$f" >/dev/null 2>&1; }; then left+=("$f"); fi
    done < /tmp/files
    if ((${#left[@]})); then
        printf 'test-package: left behind by apt-get remove: %s\n' "${left[@]}" >&2
        exit 1
    fi
    echo "test-package: apt-get remove left none of the packages' $(wc -l < /tmp/files) paths"
    mkdir -p /tmp/scratch
    tar -C /tmp/scratch -xJf "$dist"
    use "/tmp/scratch/dxcl-$version/bin/dxcl" archive
    exit 0
fi

for f in "${pkgs[@]}" "$dist" "$program"; do
    [ -f "$f" ] || { echo "test-package: $f missing: run make deb dist test-wine first" >&2; exit 1; }
done
apt-get install --simulate "${pkgs[@]/#/./}" > build/package/simulate-debian12.log 2>&1 || {
    cat build/package/simulate-debian12.log >&2
    echo "test-package: the packages do not install on this Debian 12 machine" >&2
    exit 1
}
echo "test-package: both packages install on Debian 12 (simulated)"
scripts/wine/trixie.sh "$0" --inside
echo "test-package: passed"

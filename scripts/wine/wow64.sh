#!/usr/bin/env bash
# scripts/wine/wow64.sh [build | exit-check [RUNS] | COMMAND [ARG…]]: a Wine in the new WoW64 mode (the mode
# Wine 11 makes standard), built from Debian 13's own Wine 10.0 source package, and dxcl's Windows
# programs run with it, 32-bit and 64-bit.
#
# Debian 13's Wine 10.0 is built in the old mode: a 32-bit program there needs wine32:i386, a 32-bit
# unix side. In the new mode a 32-bit program's unix calls reach the 64-bit dxclcl.so through its
# `__wine_unix_call_wow64_funcs` table, the path this script exists to run end to end.
#
# Made once and kept under build/wine/wow64 (not part of CI: the build takes about an hour on two
# cores): a Debian 13 system with Wine's build dependencies, both MinGW-w64 compilers, PoCL, Xvfb and
# Mesa (mmdebstrap, from Debian's archive), Wine's source (`apt-get source wine`), configured with
# `--enable-archs=i386,x86_64` and installed to /opt/wine-wow64 inside that system.
#
# With no argument: builds what is missing (the Wine, dxcl and its bridge: `make wine stage`), then
# in a fresh prefix `dxcl wine install` (which must put the 32-bit DLLs into syswow64), `dxcl wine
# info`, tests/wine/bridge.c, tests/wine/affinity.c, tests/windows/d3d11_cl.cpp and the conformance
# suite built 32-bit, and bridge.c 64-bit (each: its pass line with 0 failed, exit 0, no FATAL
# line), `dxcl wine uninstall` (syswow64 and system32 as before). Logs in
# build/wine/tests/wine-wow64. `exit-check [RUNS]`: all that, then each 32-bit program RUNS times
# (default 20); fails unless every run exited 0 with no FATAL line (scripts/wine/exit-check.sh does
# the same for the 64-bit programs on the packaged Wines). `build`: only builds the Wine. COMMAND:
# runs it there (bubblewrap, as trixie.sh), /opt/wine-wow64/bin first on PATH. mmdebstrap needs
# root: sudo when not root.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/build/wine/wow64
packages=dpkg-dev,build-essential,gcc-mingw-w64-i686,gcc-mingw-w64-x86-64,xvfb,xauth,pocl-opencl-icd,ocl-icd-libopencl1,mesa-vulkan-drivers,libgl1-mesa-dri,xz-utils
wine=/opt/wine-wow64

if [ "${1:-}" = --inside ]; then
    # In the system: the programs on the new-mode Wine.
    cd "$root"
    dxcl=$root/build/stage/bin/dxcl
    . scripts/wine/programs.sh
    out=$root/build/wine/tests/wine-wow64
    mkdir -p "$out/32" "$out/64"
    wine_prefix "$root/build/wine/prefix-wow64"
    rm -rf "$WINEPREFIX"
    wine --version | tee "$out/version.log"
    timeout 600 xvfb-run -a "$dxcl" wine install "$WINEPREFIX"
    wow=$WINEPREFIX/drive_c/windows/syswow64
    cmp -s "$wow/dxclcl.dll" build/wine/dist/i386-windows/dxclcl.dll ||
        { echo "wow64: dxcl wine install put no 32-bit dxclcl.dll into syswow64" >&2; exit 1; }
    timeout 120 xvfb-run -a "$dxcl" wine info "$WINEPREFIX" | tee "$out/info.log"
    wine_run_programs "$out/32" build/wine/tests/i386
    wine_run_conformance "$out/32" "" "$root/build/wine/conformance-i386"
    wine_run_programs "$out/64" build/wine/tests bridge
    "$dxcl" wine uninstall "$WINEPREFIX"
    if [ -e "$wow/dxclcl.dll" ] || cmp -s "$wow/opencl.dll" build/wine/dist/i386-windows/opencl.dll; then
        echo "wow64: uninstall left the bridge in syswow64" >&2
        exit 1
    fi
    echo "wow64: passed: 32-bit and 64-bit programs on $(cat "$out/version.log") in the new WoW64 mode"
    [ -n "${2:-}" ] || exit 0
    # The exit check: the 32-bit programs again, RUNS times each, in a prefix with the bridge.
    timeout 600 xvfb-run -a "$dxcl" wine install "$WINEPREFIX" >/dev/null
    status=0
    wine_exit_check "wow64 exit check (32-bit)" build/wine/tests/i386 "$out/32" "$2" || status=$?
    "$dxcl" wine uninstall "$WINEPREFIX" >/dev/null
    exit "$status"
fi

. "$root/scripts/install-debs.sh"
install_debs "wow64" mmdebstrap bubblewrap
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

# Runs a command in the system (the tree at its own path, a private /tmp and HOME, the system's own
# OCL_ICD_VENDORS, the built Wine first on PATH); waits for the wineserver before /tmp goes.
enter() {
    $sudo bwrap --bind "$dir/system" / --proc /proc --dev /dev --ro-bind /sys /sys --tmpfs /tmp \
        --bind "$root" "$root" --chdir "$PWD" --setenv HOME /tmp \
        --setenv OCL_ICD_VENDORS /etc/OpenCL/vendors --setenv PATH "$wine/bin:/usr/bin:/bin" \
        --die-with-parent bash -c '"$@"; status=$?; wineserver -w 2>/dev/null; exit $status' wow64 "$@"
}

if [ "$(cat "$dir/packages" 2>/dev/null)" != "$packages" ]; then
    $sudo rm -rf "$dir"
    mkdir -p "$dir"
    start=$(date +%s)
    echo "wow64: making a Debian 13 system with Wine's build dependencies in $dir"
    # The source lines gain deb-src for `apt-get build-dep` and `apt-get source`.
    $sudo mmdebstrap --quiet --variant=apt --include="$packages" \
        --customize-hook='sed -n "p;s/^deb /deb-src /p" "$1/etc/apt/sources.list" > "$1/sources" && mv "$1/sources" "$1/etc/apt/sources.list"' \
        --customize-hook='chroot "$1" apt-get update -qq' \
        --customize-hook='chroot "$1" env DEBIAN_FRONTEND=noninteractive apt-get build-dep -y -qq wine >/dev/null' \
        --customize-hook='mkdir -p "$1/src" && chroot "$1" sh -c "cd /src && apt-get source -qq wine >/dev/null"' \
        trixie "$dir/system.new"
    $sudo mv "$dir/system.new" "$dir/system"
    echo "$packages" > "$dir/packages"
    echo "wow64: made in $(($(date +%s) - start)) s"
fi

if [ ! -x "$dir/system$wine/bin/wine" ]; then
    start=$(date +%s)
    src=$(cd "$dir/system/src" && ls -d wine-*/ | head -1)
    echo "wow64: building ${src%/} in the new WoW64 mode (i386 and x86_64 PE, x86_64 unix)"
    # Debian's source leaves out what its tools regenerate: its rules make them (the generated
    # tables, Vulkan's thunks from the system's vk.xml, autoconf), then run configure with the
    # options given here in place of Debian's (maintainer mode, as Debian's, makes the fonts from their
    # sources, which the repacked source lacks; it also turns warnings into errors, which -O1 has
    # more of than Debian's -O2, so -Wno-error). Tests and debug info are left out: they are most of
    # the build's time and none of what is run here. Its headers come first, as Debian's rules make
    # them: a PE library may otherwise meet MinGW's headers before Wine generated its own.
    # Debian's source installs the data files (nls) to share/ and the DLLs to lib/ARCH, where its
    # Wine looks in share/wine and lib/wine/ARCH: links. Its DLLs link MinGW's zlib (as Debian's do,
    # which ship zlib1.dll beside them): copied in and marked as a builtin, as Wine loads only those
    # from its own folder.
    options="--enable-archs=i386,x86_64 --with-mingw --enable-maintainer-mode --disable-tests --without-oss --without-sane \
        --without-netapi --prefix=$wine ZLIB_PE_LIBS=-lz CFLAGS='-O1 -g0 -Wno-error' CROSSCFLAGS='-O1 -g0 -Wno-error'"
    enter bash -c "cd /src/$src && autoreconf -fi >/src/autoreconf.log 2>&1 \
        && make -f debian/rules override_dh_auto_configure CONFLAGS=\"$options\" >/src/configure.log 2>&1 \
        && make -s -j$(nproc) -C include >/src/make.log 2>&1 && make -s -j$(nproc) >>/src/make.log 2>&1 \
        && make -s install >/src/install.log 2>&1 && ln -sfn . $wine/share/wine && ln -sfn . $wine/lib/wine \
        && cp /usr/x86_64-w64-mingw32/lib/zlib1.dll $wine/lib/x86_64-windows/ \
        && cp /usr/i686-w64-mingw32/lib/zlib1.dll $wine/lib/i386-windows/ \
        && $wine/bin/winebuild --builtin $wine/lib/x86_64-windows/zlib1.dll \
        && $wine/bin/winebuild --builtin $wine/lib/i386-windows/zlib1.dll" ||
        { echo "wow64: the build failed; its logs: $dir/system/src/*.log" >&2; exit 1; }
    echo "wow64: built in $(($(date +%s) - start)) s"
fi

case "${1:-}" in
build)
    enter wine --version
    ;;
"" | exit-check)
    # dxcl, the bridge, the three programs 32-bit and bridge.c 64-bit, then the runs in the system.
    cd "$root"
    # The bridge first: the stage takes its copy of it (build/wine/dist).
    make --no-print-directory wine stage
    . scripts/wine/programs.sh
    wine_build_programs build/wine/tests/i386 32
    x86_64-w64-mingw32-gcc -O1 -Wall -Wextra -Werror -Wno-missing-field-initializers -Wno-cast-function-type \
        -Ibuild/wine/inc -o build/wine/tests/bridge.exe tests/wine/bridge.c -ld3d10 -ld3d11 -ldxgi \
        -Lbuild/wine/dist -l:opencl.dll
    if [ "${1:-}" = exit-check ]; then
        enter bash "$0" --inside "${2:-20}"
    else
        enter bash "$0" --inside
    fi
    ;;
*)
    enter "$@"
    ;;
esac

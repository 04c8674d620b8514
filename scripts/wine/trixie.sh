#!/usr/bin/env bash
# scripts/wine/trixie.sh COMMAND [ARG…]: runs COMMAND in a Debian 13 (trixie) system with its Wine
# 10.0, the Wine Debian 13 users run, from dxcl's source tree (same path inside).
#
# The system is made once by mmdebstrap from Debian's archive into build/wine/trixie (about 2 GB,
# a minute or two), and kept: a second run downloads nothing. It holds only what a user's machine
# would: Wine, Xvfb, PoCL and the OpenCL loader, Mesa's Vulkan and OpenGL drivers, xz; no Rust, no
# compiler. It is entered with bubblewrap: the tree bound at its own path, /proc, /dev, /sys (PoCL
# reads the CPU's topology there), a private /tmp and HOME. OCL_ICD_VENDORS is the system's own
# (its PoCL's .icd names a library this machine's does not). mmdebstrap needs root: sudo when not root.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/build/wine/trixie
packages=wine,wine64,libwine,xvfb,xauth,pocl-opencl-icd,ocl-icd-libopencl1,mesa-vulkan-drivers,libgl1-mesa-dri,xz-utils

. "$root/scripts/install-debs.sh"
install_debs "trixie" mmdebstrap bubblewrap
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

if [ "$(cat "$dir/packages" 2>/dev/null)" != "$packages" ]; then
    $sudo rm -rf "$dir"
    mkdir -p "$dir"
    start=$(date +%s)
    echo "trixie: making a Debian 13 system with $packages in $dir"
    $sudo mmdebstrap --quiet --variant=apt --include="$packages" trixie "$dir/root.new"
    $sudo mv "$dir/root.new" "$dir/root"
    echo "$packages" > "$dir/packages"
    echo "trixie: made in $(($(date +%s) - start)) s"
fi

# The wineserver keeps a prefix's registry in memory and writes it when it exits: wait for it
# before the sandbox (and its private /tmp, where the server's socket is) goes.
exec bwrap --bind "$dir/root" / --proc /proc --dev /dev --ro-bind /sys /sys --tmpfs /tmp \
    --bind "$root" "$root" --chdir "$PWD" --setenv HOME /tmp --setenv OCL_ICD_VENDORS /etc/OpenCL/vendors \
    --die-with-parent bash -c '"$@"; status=$?; wineserver -w 2>/dev/null; exit $status' trixie "$@"

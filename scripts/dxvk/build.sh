#!/usr/bin/env bash
# Builds DXVK-native (Direct3D 10/11 and DXGI on Vulkan, for Linux programs) from a DXVK source tree
# the user provides, into build/dxvk of this repository:
#
#   scripts/dxvk/build.sh SRC_DIR
#
#   build/dxvk/lib/libdxvk_d3d11.so, libdxvk_dxgi.so, libdxvk_d3d10core.so   the runtime
#   build/dxvk/meson/                                                       meson's build folder
#   build/dxvk/SOURCE                                                       which tree and tag built it
#
# The pinned tag, v2.3, and the checks of the tree: scripts/dxvk/source.sh.
#
# SRC_DIR needs its submodules filled at their pinned commits (include/vulkan, include/spirv,
# include/native/directx, subprojects/libdisplay-info): `git clone --recurse-submodules --branch v2.3
# https://github.com/doitsujin/dxvk` does it (docs/dxvk.md also shows how to fill them by hand).
#
# Installs its Debian build dependencies itself (sudo only when not root; nothing when all are
# there) and is idempotent: a second run reconfigures nothing and rebuilds only what changed. In a
# tree without .git (an exported archive) meson prints "fatal: not a git repository" while it writes
# version.h: harmless, the version is then the tag's.
# DXVK_BUILDTYPE (default: debugoptimized, for usable stacks) is meson's build type.
set -euo pipefail

buildtype=${DXVK_BUILDTYPE:-debugoptimized}
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$repo/build/dxvk
. "$repo/scripts/dxvk/source.sh"
. "$repo/scripts/install-debs.sh"
dxvk_source "dxvk build" "$@"
src=$dxvk_src
tag=$dxvk_tag

install_debs "dxvk build" meson ninja-build g++ pkg-config glslang-tools libsdl2-dev libvulkan-dev hwdata

# Only what the layer shares with: D3D11, D3D10 (d3d10core) and DXGI. The SDL2 window-system
# integration is DXVK-native's default.
mkdir -p "$out"
if [ ! -f "$out/meson/build.ninja" ]; then
    meson setup "$out/meson" "$src" \
        --buildtype "$buildtype" --prefix "$out" --libdir lib --bindir bin \
        -Denable_d3d9=false -Denable_d3d10=true -Denable_d3d11=true -Denable_dxgi=true \
        -Ddxvk_native_wsi=sdl2
fi
ninja -C "$out/meson" -j "${DXVK_JOBS:-$(nproc)}"
ninja -C "$out/meson" install >/dev/null
printf 'source %s\ntag %s\nbuildtype %s\n' "$src" "$tag" "$buildtype" > "$out/SOURCE"
for l in libdxvk_d3d11.so libdxvk_dxgi.so libdxvk_d3d10core.so; do
    [ -e "$out/lib/$l" ] || { echo "dxvk build: $out/lib/$l was not built" >&2; exit 1; }
done
echo "dxvk build: DXVK $tag in $out/lib"

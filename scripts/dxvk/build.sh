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
# The pinned tag is v2.3: the release on which the layer's crash and the preferred-device gap were
# reported, so the fixes are checked against the same code; it builds with Debian 12's meson,
# glslang and SDL2. Later tags were not tried. Another tag is refused unless DXVK_TAG names it.
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

tag=${DXVK_TAG:-v2.3}
buildtype=${DXVK_BUILDTYPE:-debugoptimized}
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: $0 DXVK_SOURCE_DIR   (a DXVK $tag tree with its submodules; see docs/dxvk.md)" >&2
    exit 2
fi
src=$(cd "$1" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=$repo/build/dxvk

# The tree must be the pinned release: its meson.build names its version.
version=$(sed -n "s/^project(.*[^_]version *: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -1)
if [ "$version" != "$tag" ]; then
    echo "dxvk build: $src is DXVK '${version:-unknown}', not $tag (set DXVK_TAG=$version to build it anyway)" >&2
    exit 2
fi

# The submodules: a file each must have.
need=(include/vulkan/include/vulkan/vulkan_core.h
      include/spirv/include/spirv/unified1/spirv.hpp
      include/native/directx/d3d11.h
      subprojects/libdisplay-info/meson.build)
for f in "${need[@]}"; do
    if [ ! -f "$src/$f" ]; then
        echo "dxvk build: $src/$f is missing: the submodules are not filled." >&2
        echo "  in a git clone: git -C $src submodule update --init --recursive" >&2
        echo "  else see docs/dxvk.md (\"Getting the source\")" >&2
        exit 2
    fi
done

packages=(meson ninja-build g++ pkg-config glslang-tools libsdl2-dev libvulkan-dev hwdata)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "dxvk build: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

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

# Sourced by the scripts that build DXVK from a source tree the user provides (scripts/dxvk/build.sh
# for DXVK-native, scripts/wine/dxvk.sh for its Windows DLLs): dxvk_source NAME "$@" checks that the
# script's one argument is a tree of the pinned tag with its submodules filled, and sets dxvk_src to
# its absolute path (NAME starts the messages).
#
# The pinned tag is v2.3: the release on which the layer's crash and the preferred-device gap were
# reported, so the fixes are checked against the same code; it builds with Debian 12's meson,
# glslang and MinGW-w64. Later tags were not tried. Another tag is refused unless DXVK_TAG names it.
dxvk_tag=${DXVK_TAG:-v2.3}

dxvk_source() {
    local name=$1 src=${2:-} version f
    if [ $# -ne 2 ] || [ ! -d "$src" ]; then
        echo "usage: $0 DXVK_SOURCE_DIR   (a DXVK $dxvk_tag tree with its submodules; see docs/dxvk.md)" >&2
        exit 2
    fi
    dxvk_src=$(cd "$src" && pwd)
    # The tree must be the pinned release: its meson.build names its version.
    version=$(sed -n "s/^project(.*[^_]version *: *'\([^']*\)'.*/\1/p" "$dxvk_src/meson.build" 2>/dev/null | head -1 || true)
    if [ "$version" != "$dxvk_tag" ]; then
        echo "$name: $dxvk_src is DXVK '${version:-unknown}', not $dxvk_tag (set DXVK_TAG=$version to build it anyway)" >&2
        exit 2
    fi
    # The submodules: a file each must have.
    for f in include/vulkan/include/vulkan/vulkan_core.h include/spirv/include/spirv/unified1/spirv.hpp \
             include/native/directx/d3d11.h subprojects/libdisplay-info/meson.build; do
        if [ ! -f "$dxvk_src/$f" ]; then
            echo "$name: $dxvk_src/$f is missing: the submodules are not filled." >&2
            echo "  in a git clone: git -C $dxvk_src submodule update --init --recursive" >&2
            echo "  else see docs/dxvk.md (\"Getting the source\")" >&2
            exit 2
        fi
    done
}

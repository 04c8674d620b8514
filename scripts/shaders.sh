#!/bin/sh
# Compiles the Vulkan backend's copy shader (crates/dxcl-d3d/src/backend/vulkan/shaders/copy.comp)
# once per storage format it serves, into the SPIR-V the crate embeds (copy_<format>.spv next to
# it, committed, so building needs no shader compiler), and records copy.comp's SHA-256 beside it.
# Installs glslang-tools when glslangValidator is missing (sudo only when not root).
# `--check` (make lint) only checks that copy.comp is the source the SPIR-V was built from.
set -eu
cd "$(dirname "$0")/../crates/dxcl-d3d/src/backend/vulkan/shaders"
if [ "${1:-}" = --check ]; then
    if ! sha256sum --check --status copy.comp.sha256; then
        echo "shaders: copy.comp changed since its SPIR-V was built: run scripts/shaders.sh" >&2
        exit 1
    fi
    echo "shaders: the SPIR-V is built from copy.comp as it stands"
    exit 0
fi
if ! command -v glslangValidator >/dev/null; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get install -y glslang-tools >/dev/null
fi
for v in rgba8:image2D rgba8ui:uimage2D rgba16ui:uimage2D r32ui:uimage2D rgba32ui:uimage2D; do
    format=${v%%:*}
    glslangValidator --quiet -V --target-env vulkan1.2 -DFORMAT="$format" -DIMAGE="${v#*:}" \
        -o "copy_$format.spv" copy.comp
    echo "shaders: copy_$format.spv"
done
sha256sum copy.comp > copy.comp.sha256

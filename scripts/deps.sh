#!/usr/bin/env bash
# Installs what building and testing dxcl needs on a Debian machine, and nothing when it is all there.
# Uses sudo only when not root. The Rust toolchain (rustup, Rust >= 1.87) is expected to be present.
set -euo pipefail

# mesa-opencl-icd: Mesa's rusticl, the suite's second OpenCL platform (llvmpipe, RUSTICL_ENABLE=llvmpipe).
packages=(pocl-opencl-icd mesa-opencl-icd ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-c-headers clinfo
          pkg-config gcc g++ make valgrind mesa-vulkan-drivers libvulkan1)
. "$(dirname "$0")/install-debs.sh"
install_debs deps "${packages[@]}"
if ! command -v cargo >/dev/null; then
    echo "deps: cargo not found; install Rust >= 1.87 with rustup (https://rustup.rs)" >&2
    exit 1
fi

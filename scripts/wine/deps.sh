#!/usr/bin/env bash
# Installs what building and testing dxcl's Wine bridge needs on a Debian machine (Wine 8.0, its
# winebuild, MinGW-w64 (64- and 32-bit), Xvfb, the Vulkan headers), and nothing when it is all there. sudo only when
# not root.
set -euo pipefail
packages=(wine64 wine64-tools gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 gcc-mingw-w64-i686 g++-mingw-w64-i686 mingw-w64-common xvfb xauth
          libvulkan-dev opencl-c-headers)
. "$(dirname "$0")/../install-debs.sh"
install_debs "wine deps" "${packages[@]}"

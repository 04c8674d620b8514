#!/usr/bin/env bash
# Installs what building and testing dxcl's Wine bridge needs on a Debian machine (Wine 8.0, its
# winebuild, MinGW-w64, Xvfb, the Vulkan headers), and nothing when it is all there. sudo only when
# not root.
set -euo pipefail
packages=(wine64 wine64-tools gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 mingw-w64-common xvfb xauth
          libvulkan-dev opencl-c-headers)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "wine deps: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

#!/bin/sh
# Compiles the Windows-idiom test program (tests/windows/d3d11_cl.cpp) against real Windows SDK
# headers, MinGW-w64's, to show it builds there unchanged: the same file make test builds and runs
# against dxcl's headers. Installs the cross compiler (Debian: g++-mingw-w64-x86-64), sudo only when
# not root. Not part of make test (a large package for one compile).
set -eu
cd "$(dirname "$0")/../.."
if ! command -v x86_64-w64-mingw32-g++ >/dev/null; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends g++-mingw-w64-x86-64 >/dev/null
fi
# The Khronos OpenCL headers (opencl-c-headers) beside MinGW's Windows SDK headers.
inc=$(mktemp -d)
trap 'rm -rf "$inc"' EXIT
cp -R /usr/include/CL "$inc/CL"
x86_64-w64-mingw32-g++ -std=c++17 -Wall -Wextra -Werror -I"$inc" -c tests/windows/d3d11_cl.cpp -o "$inc/d3d11_cl.o"
echo "sdk-check: tests/windows/d3d11_cl.cpp compiles against MinGW-w64's Windows headers ($(x86_64-w64-mingw32-g++ --version | head -1))"

#!/usr/bin/env bash
# Installs clang with libFuzzer for the fuzzer, and nothing when it is there. Debian 12's clang-15
# ships libFuzzer in libclang-common-15-dev (PoCL depends on both already). Uses sudo only when not root.
set -euo pipefail
if ls /usr/lib/llvm-16/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 && command -v clang-16 >/dev/null; then
    exit 0
fi
missing=()
for p in clang-15 libclang-common-15-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "fuzz deps: installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

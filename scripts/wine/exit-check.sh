#!/usr/bin/env bash
# scripts/wine/exit-check.sh [RUNS]: runs each Windows test program RUNS times (default 20) on each
# Wine of `make test-wine` (the host's and Debian 13's 10.0, scripts/wine/trixie.sh) and counts the
# runs that exited with a status other than 0 or printed a "FATAL" line (glibc's abort after a
# caught forced unwind, when Wine ends a thread waiting in the bridge). Fails unless every run
# exited 0 with no such line. Needs `make test-wine` first (the bridge, the stage, the programs).
# Logs: build/wine/tests/exit-check-VERSION/ (scripts/wine/programs.sh, wine_exit_check).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
dxcl=$root/build/stage/bin/dxcl
bin=$root/build/wine/tests
runs=${1:-20}
. scripts/wine/programs.sh
for p in bridge affinity d3d11_cl; do
    [ -f "$bin/$p.exe" ] || { echo "exit-check: $bin/$p.exe missing: run make test-wine first" >&2; exit 1; }
done

if [ "${EXIT_CHECK_HERE:-}" != 1 ]; then
    EXIT_CHECK_HERE=1 "$0" "$runs"
    EXIT_CHECK_HERE=1 scripts/wine/trixie.sh "$0" "$runs"
    exit 0
fi

version=$(wine_version)
wine_prefix "$root/build/wine/exit-prefix-$version"
wine_install_current
out=$bin/exit-check-$version
mkdir -p "$out"
wine_exit_check "exit-check: Wine $version" "$bin" "$out" "$runs"

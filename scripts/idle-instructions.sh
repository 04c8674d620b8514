#!/bin/sh
# The instructions an idle hand-off runs in the layer, counted by callgrind on the fake platform
# (no GPU), then timed on this CPU. The unit test an_idle_hand_off_makes_only_its_own_calls hands
# one external-memory object of a fake runtime back and forth: a first hand-off (not counted: it
# retains the queue and asks the runtime), then eight idle ones, Direct3D touching the resource
# after every fourth. Counted: what runs inside those eight calls of idle_hand_off, less the fake
# platform's and runtime's own functions: the instructions, then the distinct lines of code and
# data touched. Both deterministic: compare builds by them (docs/benchmarks.md, "A cold CPU on
# demand").
set -eu
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null || ! command -v python3 >/dev/null; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends valgrind python3 binutils >/dev/null
fi
test=strategy::external::sync::tests::an_idle_hand_off_makes_only_its_own_calls
bin=$(cargo test --release -q -p dxcl-layer --lib --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# sum FILE: the instructions counted, then the fake platform's and runtime's part (each fake
# function's inclusive count: the fake's call counter runs only inside them), on one line.
sum() {
    callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
        sed 's/([^)]*)//g; s/,//g' |
        awk '
            /PROGRAM TOTALS/ { t = $1 + 0 }
            /(cl::fake::|sync::tests::)[a-z_]+ \[/ && !/fake::count |tests::(an_idle_hand_off_makes_only_its_own_calls|first_hand_off|idle_hand_off) / {
                f += $1 + 0
            }
            END { print t, f }'
}
# Entering first_hand_off starts the count and entering idle_hand_off inside it stops it again;
# entered from the test, idle_hand_off starts it.
run() {
    valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
        --toggle-collect='*sync::tests::first_hand_off' --toggle-collect='*sync::tests::idle_hand_off' \
        "$bin" --exact "$test" --test-threads=1 > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }
}
run
set -- $(sum "$out/callgrind.out")
echo "idle hand-off: $1 instructions in 8 idle hand-offs, $2 of them the fake platform's and runtime's"
echo "idle hand-off: $((($1 - $2) / 8)) instructions of the layer's per hand-off"
# The cold count: the distinct lines of code and data the layer's part of each idle hand-off
# touches, each a fetch from memory on a CPU whose caches lost them (lackey's trace, counted by
# scripts/idle-lines.py; deterministic, and unlike a cache simulation blind to where the linker
# put the functions).
python3 scripts/idle-lines.py "$bin"
# The same eight idle hand-offs timed on this CPU (not deterministic: compare builds in one run of
# this script each, alternating): RUNS runs (default 15) warm, then as many with 64 MiB of fresh
# memory written before each hand-off (past this machine's caches, with TLB entries and page-table
# lines lost too: the host's slow state, reproduced); the median of all samples of each.
runs=${RUNS:-15}
timed() {
    i=0
    while [ "$i" -lt "$runs" ]; do
        env "$@" DXCL_IDLE_TIME=1 "$bin" --exact "$test" --test-threads=1 --nocapture 2>&1 |
            sed -n 's/.*idle hand-off: \([0-9]*\) ns$/\1/p'
        i=$((i + 1))
    done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], NR }'
}
set -- $(timed DXCL_IDLE_EVICT_KIB=0)
warm=$1
set -- $(timed DXCL_IDLE_EVICT_KIB=65536)
echo "idle hand-off, timed: median $warm ns warm, $1 ns with 64 MiB of fresh memory written before each ($2 samples each)"

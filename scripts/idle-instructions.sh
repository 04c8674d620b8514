#!/bin/sh
# The instructions an idle hand-off runs in the layer, counted by callgrind on the fake platform
# (no GPU). The unit test an_idle_hand_off_makes_only_its_own_calls hands one external-memory
# object of a fake runtime back and forth: a first hand-off (not counted: it retains the queue
# and asks the runtime), then eight idle ones, Direct3D touching the resource after every fourth.
# Counted: what runs inside those eight calls of idle_hand_off, less the fake platform's and
# runtime's own functions. Deterministic: compare builds by it (docs/benchmarks.md, "A cold CPU
# on demand").
set -eu
cd "$(dirname "$0")/.."
if ! command -v valgrind >/dev/null; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends valgrind >/dev/null
fi
test=strategy::external::sync::tests::an_idle_hand_off_makes_only_its_own_calls
bin=$(cargo test --release -q -p dxcl-layer --lib --no-run --message-format=json 2>/dev/null |
    sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Entering first_hand_off starts the count and entering idle_hand_off inside it stops it again;
# entered from the test, idle_hand_off starts it.
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
    --toggle-collect='*sync::tests::first_hand_off' --toggle-collect='*sync::tests::idle_hand_off' \
    "$bin" --exact "$test" --test-threads=1 > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }
total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/log")
# Each fake function's inclusive count (the fake's call counter runs only inside them).
fakes=$(callgrind_annotate --inclusive=yes --threshold=100 "$out/callgrind.out" 2>/dev/null |
    grep -E '(cl::fake::|sync::tests::)[a-z_]+ \[' |
    grep -v -E 'fake::count |tests::(an_idle_hand_off_makes_only_its_own_calls|first_hand_off|idle_hand_off) ' |
    awk '{ gsub(",", "", $1); n += $1 } END { print n + 0 }')
echo "idle hand-off: $total instructions in 8 idle hand-offs, $fakes of them the fake platform's and runtime's"
echo "idle hand-off: $(((total - fakes) / 8)) instructions of the layer's per hand-off"

#!/bin/sh
# The instructions an idle hand-off runs inside the layer's entry points, counted by callgrind on
# the fake platform (no GPU): the test an_idle_hand_off_makes_only_its_own_calls makes 9 hand-offs
# of one object (the first one not idle), and only what runs inside clEnqueueAcquire/Release is
# counted, the fake platform's and runtime's own work (the same for every build) included.
# Deterministic: compare builds by it (docs/benchmarks.md, "A cold CPU on demand").
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
valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out" \
    --toggle-collect='dxcl_layer::api::share::acquire_release' "$bin" --exact "$test" \
    --test-threads=1 > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }
total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/log")
echo "idle hand-off: $total instructions in the entry points for 9 hand-offs, $((total / 9)) per hand-off"
rm -rf "$out"

#!/bin/sh
# Two builds of the layer on one NVIDIA machine, alternated so that the host's state weighs on
# both alike (docs/benchmarks.md, "A cold CPU on demand"). Run as root from the repository root,
# with this pack (gpu-pack: the build to measure) and OLD, a pack that scripts/gpu/pack.sh made at
# the commit to compare against, copied to the machine too:
#   sh gpu-pack/compare.sh OLD [PAIRS]      (PAIRS: default 4; OUT=dir: default build/gpu-compare)
# 1. The layer's idle hand-off on this CPU with the fake platform (each pack's bin/idle-test: the
#    unit test an_idle_hand_off_makes_only_its_own_calls, no GPU): warm, then with 16 and 64 MiB
#    of fresh memory written before each hand-off; PAIRS runs of each build, alternating.
# 2. PAIRS pairs of cold benches of the 4 KiB rows (`dxcl bench --sizes 4K --evict-kib 16384
#    --evict-first`), this build first in each pair.
# Prints the medians of 1 and, per bench, dxcl's idle hand-off over NVIDIA's own in each row.
set -u
new=$(cd "$(dirname "$0")" && pwd)
old=$(cd "${1:?usage: sh gpu-pack/compare.sh OLD_PACK [PAIRS]}" && pwd)
pairs=${2:-4}
out=${OUT:-build/gpu-compare}
mkdir -p "$out"
test=strategy::external::sync::tests::an_idle_hand_off_makes_only_its_own_calls
i=0
while [ "$i" -lt "$pairs" ]; do
    for b in new old; do
        eval "dir=\$$b"
        for kib in 0 16384 65536; do
            DXCL_IDLE_EVICT_KIB=$kib DXCL_IDLE_TIME=1 "$dir/bin/idle-test" --exact "$test" \
                --test-threads=1 --nocapture 2>&1 | sed -n "s/.*idle hand-off: \([0-9]*\) ns$/$b $kib \1/p"
        done
    done
    i=$((i + 1))
done > "$out/idle-test.txt"
echo "the layer's idle hand-off on this CPU, fake platform (median ns of $pairs runs x 8 hand-offs; KiB written before each):"
for b in new old; do
    for kib in 0 16384 65536; do
        awk -v b="$b" -v k="$kib" '$1 == b && $2 == k { print $3 }' "$out/idle-test.txt" | sort -n |
            awk -v b="$b" -v k="$kib" '{ v[NR] = $1 } END { if (NR) printf "  %s, %s KiB: %d ns (%d samples)\n", b, k, v[int((NR + 1) / 2)], NR }'
    done
done
# Per bench: each row's dxcl median minus NVIDIA's own (the bench's table, columns 2, 4 and 7).
over() {
    awk -F'|' '{ gsub(/ /, "", $3); gsub(/ /, "", $5); gsub(/ /, "", $8) }
        $5 == "default" { d[$2 $3] = $8; k[++n] = $2 $3 }
        $5 == "platform-handoff" { p[$2 $3] = $8 }
        END { for (i = 1; i <= n; i++) printf " %s %+.1f", k[i], d[k[i]] - p[k[i]] }' "$1" | tr -s ' '
}
echo "cold 4 KiB benches, dxcl's idle hand-off over NVIDIA's own (µs):"
i=1
while [ "$i" -le "$pairs" ]; do
    for b in new old; do
        eval "dir=\$$b"
        OUT="$out/bench-$b-$i" BENCH_SIZES=4K BENCH_LIMIT=60 BENCH_ARGS="--evict-kib 16384 --evict-first" \
            sh "$dir/run.sh" bench > "$out/bench-$b-$i.log" 2>&1
        echo "  $b $i:$(over "$out/bench-$b-$i/bench.md")"
    done
    i=$((i + 1))
done

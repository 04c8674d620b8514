#!/bin/sh
# The GPU suite, run as root on your NVIDIA machine from the repository root, after
# scripts/gpu/pack.sh packed gpu-pack on a build machine and you copied it there: the
# loaders, the NVIDIA OpenCL ICD, then the probe, `dxcl info`, the conformance suite on the Vulkan
# adapter and the NVIDIA platform, the demo, the benchmark, the frame pipeline, the fixed sync modes
# for contrast, and every program's exit status. Name parts to run only those (default: all).
# Logs go to the folder OUT names (OUT=dir sh gpu-pack/run.sh), default build/gpu-out.
set -u
g=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-build/gpu-out}
mkdir -p "$out"
for f in "$g"/debs/*.deb; do dpkg -x "$f" /; done
ldconfig
# Only NVIDIA: the suite takes the first platform that has the sharing extensions.
mkdir -p /tmp/vendors
echo /usr/lib/libnvidia-opencl.so.1 > /tmp/vendors/nvidia.icd
export OCL_ICD_VENDORS=/tmp/vendors
export LD_LIBRARY_PATH="$g/lib" OPENCL_LAYERS="$g/lib/libdxcl_layer.so" DXCL_ADAPTER=vulkan DXCL_LOG=1
echo "libOpenCL: $(ldd "$g/bin/dxcl" | grep libOpenCL)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/gpu.txt"
date -u +%Y-%m-%d >> "$out/gpu.txt"
what=${*:-all}
want() { case " $what " in *" all "*|*" $1 "*) return 0 ;; *) return 1 ;; esac; }
# Not part of "all": diagnostics asked for by name.
named() { case " $what " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
if want probe; then "$g/bin/probe" > "$out/probe.log" 2>&1; grep RESULT "$out/probe.log"; fi
# What makes clFinish slow once semaphores are in use, and whether a separate queue avoids it.
if want semfloor; then "$g/bin/probe" semfloor > "$out/semfloor.log" 2>&1; grep -E "RESULT|FAIL" "$out/semfloor.log"; fi
# What one API's first copy costs right after the other's, with no dxcl (asked for by name): the
# staging hand-off's four copies on each kind of Vulkan queue, against each API alone; then each
# way of copying into a small OpenCL buffer right after Vulkan's graphics queue.
if named crossing; then
    { for f in graphics compute transfer; do "$g/bin/probe" crossing "$f"; done; "$g/bin/probe" crossing-cl; } > "$out/crossing.log" 2>&1
    grep -E "RESULT|FAIL|family" "$out/crossing.log"
fi
if want info; then "$g/bin/dxcl" info 2>&1 | tee "$out/info.log"; fi
if want demo; then "$g/bin/dxcl" demo --size 2048 --out "$out/demo.png" 2>&1 | tee "$out/demo.log"; fi
# The whole suite, every program, then the data-path ones again with the staging strategy. Run
# with DXCL_SYNC=gpu or cpu set, it runs in that fixed mode and writes conformance-<mode>.log.
# GPU_PROGRAMS="contexts threads" runs only those (and their staging reruns), to check a fix.
programs=${GPU_PROGRAMS:-discovery contexts buffers textures acquire sync threads hostptr}
staged=$(for p in contexts acquire buffers textures sync threads; do case " $programs " in *" $p "*) printf '%s ' "$p" ;; esac; done)
# suite LOG [LIMIT]: the suite in the current DXCL_SYNC mode into LOG, its failures and times shown.
# A context NVIDIA did not destroy although the layer held none of its objects (contexts.c's
# NOTE, "context lost inside the platform") is the platform's loss only if plain OpenCL shows it in
# the same run: probe teardown, no layer, no Direct3D, 24 rounds, at least one context not gone
# (or a round that hung); else a FAIL line.
suite() {
    (cd "$g/conformance" && DXCL_LOSS_PROOF=caller timeout "${2:-3000}" sh ./run.sh . "" "$programs" "$staged") > "$1" 2>&1
    grep -E "FAIL|passed, .* failed|\(.*: [0-9]+ s\)|context lost inside" "$1" | tail -60
    if grep -q "context lost inside the platform" "$1"; then
        n=$(grep -c "context lost inside the platform" "$1")
        env -u OPENCL_LAYERS timeout 150 "$g/bin/probe" teardown 24 0 > "$1.teardown" 2>&1
        if grep -Eq "RESULT teardown .*: [1-9][0-9]* of [0-9]+ contexts not gone|HUNG" "$1.teardown"; then
            echo "conformance: the platform lost $n context(s) the layer held nothing of; plain OpenCL did the same in this run: $(grep RESULT "$1.teardown")"
        else
            echo "FAIL conformance: the platform lost $n context(s) the layer held nothing of, and plain OpenCL did NOT show it in this run: $(grep RESULT "$1.teardown")"
        fi
    fi
}
if want conformance; then
    echo "conformance: DXCL_SYNC=${DXCL_SYNC:-unset (adaptive)}"
    suite "$out/conformance${DXCL_SYNC:+-$DXCL_SYNC}.log"
fi
# The teardown sequence (acquire's DXCL_CONFORMANCE_PART=teardown, docs/gpu.md): hand-offs through the
# semaphores, a failed user event, objects, resources and the Direct3D device released while OpenCL
# holds them, then clReleaseContext, which must return. SEQUENCE_RUNS runs (default 5) in a row in the
# current DXCL_SYNC mode, a line each; logs teardown-sequence-N.log.
if want teardown-sequence; then
    i=1
    while [ "$i" -le "${SEQUENCE_RUNS:-5}" ]; do
        f="$out/teardown-sequence-$i.log"
        (cd "$g/conformance" && DXCL_CONFORMANCE_PART=teardown timeout 120 ./acquire) > "$f" 2>&1
        rc=$?
        echo "teardown-sequence: run $i: exit status $rc, $(grep -E "^acquire: [0-9]+ passed" "$f" | tail -1)$(grep -m1 -E "watchdog|^FAIL" "$f" | sed 's/^/; first failure: /')"
        i=$((i + 1))
    done
fi
# The suite RUNS times (default 5) in each sync mode, in a row (asked for by name): the "never
# hangs" check of docs/gpu.md. A line per run; the logs are conformance-<mode>-<run>.log.
if named repeat; then
    for m in ${MODES:-adaptive gpu cpu}; do
        i=${FIRST_RUN:-1}
        while [ "$i" -le "${RUNS:-5}" ]; do
            if [ "$m" = adaptive ]; then
                (unset DXCL_SYNC; suite "$out/conformance-$m-$i.log") > "$out/repeat-$m-$i.txt"
            else
                DXCL_SYNC=$m suite "$out/conformance-$m-$i.log" > "$out/repeat-$m-$i.txt"
            fi
            echo "repeat: DXCL_SYNC=$m run $i: $(grep -E "^conformance: [0-9]+ passed" "$out/conformance-$m-$i.log" | tail -1)$(grep -c "^FAIL" "$out/repeat-$m-$i.txt" | sed 's/^0$//; s/^\(.\)/, FAIL lines: \1/')"
            i=$((i + 1))
        done
    done
fi
# A program that dies now and then (by name only): CRASH_RUNS runs (default 30) of CRASH_PROGRAM
# (default contexts) with the layer's log on and libcrashtrace.so preloaded, which prints the dying
# thread's stack; each death's log goes to crash-N.log, its last lines shown.
if named crashes; then
    p=${CRASH_PROGRAM:-contexts}
    i=1
    while [ "$i" -le "${CRASH_RUNS:-30}" ]; do
        # Line-buffered, so a death keeps the program's own lines before it.
        LD_PRELOAD="$g/lib/libcrashtrace.so" timeout 120 stdbuf -oL "$g/conformance/$p" > "$out/crash-$i.log" 2>&1
        rc=$?
        notes=$(grep -c "context lost inside the platform" "$out/crash-$i.log")
        [ "$notes" -eq 0 ] || echo "crashes: $p run $i: the platform lost $notes context(s), exit status $rc"
        if [ "$rc" -ne 0 ]; then
            echo "crashes: $p run $i: exit status $rc"
            grep -v "^dxcl-layer" "$out/crash-$i.log" | grep -v "^[0-9a-f]*-[0-9a-f]* " | tail -40
            grep "^dxcl-layer" "$out/crash-$i.log" | tail -8
        else
            rm -f "$out/crash-$i.log"
        fi
        i=$((i + 1))
    done
    echo "crashes: $p, ${CRASH_RUNS:-30} runs done"
fi
# Timed parts run without the layer's log: a line per hand-off would be part of what they time.
# BENCH_SIZES=4M,256M: those sizes only; BENCH_ARGS: more of `dxcl bench`'s options (--touch-every 0).
if want bench; then DXCL_LOG=0 timeout "${BENCH_LIMIT:-300}" "$g/bin/dxcl" bench --markdown ${BENCH_SIZES:+--sizes "$BENCH_SIZES"} ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.md"; fi
# Where a hand-off's time goes (not part of "all"; docs/benchmarks.md, "Hand-off trace"): the bench
# with DXCL_TRACE=handoff, each hand-off case's step table after its timed rounds (the default
# case's hand-offs after the same quiet gap; BENCH_ARGS="--clean-gap-us 0": back to back). The
# trace's own cost is in these timings: the figures come from `bench`.
if named trace; then
    DXCL_LOG=0 DXCL_TRACE=handoff timeout "${BENCH_LIMIT:-300}" "$g/bin/dxcl" bench --markdown \
        --sizes "${TRACE_SIZES:-4K,4M,256M}" ${BENCH_ARGS:-} > "$out/bench-trace.md" 2>&1
    echo "trace: exit status $?"
    grep -E "^### |hand-offs \(|per hand-off|^\| (buffer|texture2d) .*(floor|default|staging|copies|platform)|^- (buffer|texture2d) " "$out/bench-trace.md"
fi
# The frame pipeline at 3840x2160 (docs/benchmarks.md): a. OpenCL alone, b. the host round trip,
# c. dxcl with each DXCL_SYNC mode (it sets the variable per case), d. raw Vulkan + OpenCL external
# memory and semaphores by hand (no Direct3D, no dxcl), with its chart. d needs the Vulkan loader
# unpacked above and the NVIDIA platform's external memory/semaphore extensions; when it does not
# run or fails, its row says why, and so does the last line here.
if want frames; then
    DXCL_LOG=0 timeout "${FRAMES_LIMIT:-500}" "$g/bin/dxcl" frames --markdown --svg "$out/frames.svg" > "$out/frames.md" 2> "$out/frames.log"
    echo "frames: exit status $?" | tee -a "$out/frames.md"
    cat "$out/frames.md"
    if grep -q '^| d\. .* | ok (' "$out/frames.md"; then
        echo "frames: case d (Vulkan + OpenCL by hand) measured"
    else
        echo "frames: case d (Vulkan + OpenCL by hand) NOT measured: $(grep -E '^(- )?d\. |^\| d\. ' "$out/frames.md" | head -2 | tr '\n' ' ')"
    fi
fi
# Where the frame time goes (asked for by name; docs/benchmarks.md, "Where a frame's time goes"):
# dxcl frames --breakdown, then once more with each setting of BREAKDOWN_ENV (VAR=value words, e.g.
# DXCL_UPLOAD_PIECE=0; default none), BREAKDOWN_RUNS times (default 2) in turn.
if named breakdown; then
    i=1
    while [ "$i" -le "${BREAKDOWN_RUNS:-2}" ]; do
        for v in default ${BREAKDOWN_ENV:-}; do
            f="$out/breakdown-$i-$v.md"
            if [ "$v" = default ]; then set --; else set -- "$v"; fi
            env "$@" DXCL_LOG=0 timeout "${FRAMES_LIMIT:-300}" "$g/bin/dxcl" frames --markdown --breakdown > "$f" 2>&1
            echo "breakdown run $i, $v: exit status $?"
            grep -E "^\| (a|c|d)\. |^- c\. dxcl sync=adaptive / a\." "$f" | cut -c1-160
        done
        i=$((i + 1))
    done
fi
# DXVK-native on this GPU (part of "all" when pack.sh found a DXVK build): dxcl info with
# DXVK's adapters, dxcl's Vulkan layer on DXVK's device (no memory fd without it, an fd with it),
# tests/dxvk/foreign.c, and the conformance suite with the staging strategy, headless
# (tests/dxvk/headless_sdl.c stands in for SDL2: no X server here).
# A 4K DXVK texture's hand-off, staging against shadow copies (shadows imported by NVIDIA's OpenCL
# with dxcl's Vulkan layer), in one run: first as the layer runs by default (semaphores on DXVK's
# queue), then with DXCL_SYNC=cpu (CPU waits) for contrast. Part of "dxvk"; "dxvk-handoff" alone.
dxvk_handoff() {
    for m in adaptive cpu; do
        VK_LAYER_PATH=/tmp/dxcl-vk-layer VK_INSTANCE_LAYERS=VK_LAYER_DXCL_external_fd DXCL_LOG=1 DXCL_SYNC=$m \
            timeout 120 "$d/handoff_bench" 2>"$out/dxvk-handoff-$m.stderr" | sed "s/^/[DXCL_SYNC=$m] /" | tee -a "$out/dxvk-handoff.txt"
        grep -E "clCreateFromD3D resource|semaphore pool of context .*: created" "$out/dxvk-handoff-$m.stderr" |
            sed 's/0x[0-9a-f]*/…/' | sort -u
        # The default must order on the GPU (shared semaphores on DXVK's queue); cpu must not.
        if grep -q "semaphore pool of context .*: created" "$out/dxvk-handoff-$m.stderr"; then
            [ "$m" = cpu ] && echo "FAIL dxvk handoff: DXCL_SYNC=cpu opened a semaphore pool"
        else
            [ "$m" = adaptive ] && echo "FAIL dxvk handoff: no shared semaphores on DXVK's queue (CPU waits)"
        fi
    done
}
if { named dxvk || named dxvk-handoff; } && [ ! -d "$g/dxvk" ]; then
    echo "dxvk: SKIPPED, NOTHING TESTED: no DXVK in gpu-pack/dxvk (build it on the build machine first, then pack: docs/dxvk.md)"
elif { want dxvk || named dxvk-handoff; } && [ -d "$g/dxvk" ]; then
    d=$g/dxvk
    mkdir -p /tmp/dxcl-vk-layer
    sed "s|@LIBRARY@|$d/lib/libdxcl_vk_layer.so|" "$d/dxcl_external_fd.json.in" >/tmp/dxcl-vk-layer/dxcl_external_fd.json
    (
        export LD_LIBRARY_PATH="$d/lib:$g/lib" DXVK_LOG_LEVEL=warn DXVK_LOG_PATH="$out" DXVK_STATE_CACHE=0
        unset DISPLAY
        DXCL_DXVK_LIB="$d/lib" "$g/bin/dxcl" info >"$out/dxvk-info.log" 2>&1
        if ! want dxvk; then
            dxvk_handoff
            exit 0
        fi
        sed -n '/^Direct3D adapters (DXVK-native/,$p' "$out/dxvk-info.log"
        EXPECT_FD=0 "$d/vk_layer" 2>>"$out/dxvk-stderr.log" | grep -E "PASS|FAIL"
        EXPECT_FD=1 VK_LAYER_PATH=/tmp/dxcl-vk-layer VK_INSTANCE_LAYERS=VK_LAYER_DXCL_external_fd \
            "$d/vk_layer" 2>>"$out/dxvk-stderr.log" | grep -E "vkGetMemoryFdKHR =|PASS|FAIL"
        # dxclCreateSharedTexture2D on the GPU: exportable memory through dxcl's Vulkan layer,
        # imported by NVIDIA's OpenCL (the layer's decision must say external-memory), then the
        # demo on DXVK with it.
        VK_LAYER_PATH=/tmp/dxcl-vk-layer VK_INSTANCE_LAYERS=VK_LAYER_DXCL_external_fd DXCL_LOG=1 \
            timeout 120 "$d/shared_texture" >"$out/dxvk-shared-texture.log" 2>&1
        echo "dxvk shared_texture: exit status $?"
        grep -E "clCreateFromD3D resource|dxclCreateSharedTexture2D|shared_texture:|^FAIL" "$out/dxvk-shared-texture.log" | head -8
        VK_LAYER_PATH=/tmp/dxcl-vk-layer VK_INSTANCE_LAYERS=VK_LAYER_DXCL_external_fd DXCL_DXVK_LIB="$d/lib" \
            timeout 120 "$g/bin/dxcl" demo --d3d dxvk --size 2048 --out "$out/dxvk-demo.png" 2>&1 | tee "$out/dxvk-demo.log"
        dxvk_handoff
        timeout 120 "$d/foreign" >"$out/dxvk-foreign.log" 2>&1
        echo "dxvk foreign: exit status $? ($(grep -cE '^FAIL' "$out/dxvk-foreign.log") FAIL lines)"
        (cd "$d/conformance" && DXCL_STRATEGY=staging timeout 300 sh ./run.sh . "" \
            "discovery contexts buffers textures acquire sync" "") >"$out/dxvk-conformance.log" 2>&1
        grep -E "FAIL|passed, .* failed" "$out/dxvk-conformance.log" | tail -20
        # The layer's own choice, with dxcl's Vulkan layer: shadow copies imported by NVIDIA.
        (cd "$d/conformance" && VK_LAYER_PATH=/tmp/dxcl-vk-layer VK_INSTANCE_LAYERS=VK_LAYER_DXCL_external_fd \
            timeout 300 sh ./run.sh . "" "textures acquire sync" "") >"$out/dxvk-conformance-shadow.log" 2>&1
        grep -E "FAIL|passed, .* failed|clCreateFromD3D resource: shadow" "$out/dxvk-conformance-shadow.log" | sort -u | tail -20
        # The same with a semaphore at every hand-off (no adaptive shortcut).
        (cd "$d/conformance" && VK_LAYER_PATH=/tmp/dxcl-vk-layer VK_INSTANCE_LAYERS=VK_LAYER_DXCL_external_fd DXCL_SYNC=gpu \
            timeout 300 sh ./run.sh . "" "textures acquire sync" "") >"$out/dxvk-conformance-shadow-gpu.log" 2>&1
        echo "DXCL_SYNC=gpu:"
        grep -E "FAIL|passed, .* failed" "$out/dxvk-conformance-shadow-gpu.log" | sort -u | tail -20
    )
fi
# The fixed sync modes (DXCL_SYNC=gpu: a semaphore at every hand-off; cpu: CPU waits), for
# contrast with the default adaptive sync: the full conformance suite and the benchmark in each.
if want modes; then
    for m in gpu cpu; do
        echo "DXCL_SYNC=$m:"
        DXCL_SYNC=$m suite "$out/conformance-$m.log" 280 | grep -E "FAIL|passed, .* failed|plain OpenCL" | tail -20
        DXCL_SYNC=$m timeout 200 "$g/bin/dxcl" bench --markdown > "$out/bench-$m.md" 2>&1
        grep -E "floor|blocked|acquire|release" "$out/bench-$m.md" | head -30
    done
fi
# Upload memory and pieces (asked for by name): the frame pipeline once per DXCL_UPLOAD_MEMORY and
# DXCL_UPLOAD_PIECE pair, rows a, c (adaptive) and d of each (docs/benchmarks.md; the H100 run: docs/results/frames-h100-2026-11-25.md).
if named uploads; then
    for v in "cached 4194304" "uncached 4194304" "device 4194304" "uncached 0" "device 0" "uncached 1048576"; do
        # shellcheck disable=SC2086 # two words
        set -- $v
        DXCL_LOG=0 DXCL_UPLOAD_MEMORY=$1 DXCL_UPLOAD_PIECE=$2 timeout 120 "$g/bin/dxcl" frames --markdown \
            > "$out/frames-$1-$2.md" 2>/dev/null
        echo "uploads: memory=$1 piece=$2 (exit status $?)"
        grep -E "^\| (a|c|d)\. " "$out/frames-$1-$2.md" | grep -v "sync=gpu\|sync=cpu" | cut -d'|' -f2,6,7,8,9,11
    done
fi
# A user event that fails (asked for by name; docs/conformance.md, "A user event that fails"): the
# platform's own behaviour with plain objects (no layer), then acquire's failed_wait_list (the
# event fails before the release) and failed_late (after it) through the layer, each under a limit.
if named failed; then
    env -u OPENCL_LAYERS timeout 120 "$g/bin/failed_event" > "$out/failed-platform.log" 2>&1
    echo "failed: platform (no layer): exit status $?"
    grep -E "RESULT|HUNG|case|returned" "$out/failed-platform.log" | head -40
    for part in failed failed_late; do
        for strategy in "" staging; do
            (cd "$g/conformance" && DXCL_CONFORMANCE_PART=$part DXCL_STRATEGY=$strategy timeout 120 ./acquire) \
                > "$out/failed-$part-${strategy:-default}.log" 2>&1
            echo "failed: acquire part=$part strategy=${strategy:-default}: exit status $?"
            grep -E "^FAIL|passed, .* failed" "$out/failed-$part-${strategy:-default}.log" | head -8
        done
    done
fi
# Whether a Vulkan copy out of the GPU and an OpenCL copy into it share the bus at once (asked for by
# name): probe overlap for each size in OVERLAP_MIB (default 64 and 256), what bounds a staging
# acquire on dxcl's runtime (docs/benchmarks.md, "Staging against the bus").
if named overlap; then
    for m in ${OVERLAP_MIB:-64 256}; do
        timeout 120 "$g/bin/probe" overlap "$m" 2>&1 | grep -E "^overlap|RESULT|FAIL"
    done | tee "$out/overlap.log"
fi
# NVIDIA's image release that never returns while completion callbacks run (asked for by name):
# probe releases, no layer, 3000 rounds in each of RELEASE_MODES (default 0 to 5: with callbacks,
# without, and the parts of mode 0 alone; tests/gpu/probe.c says which is which); a hang prints the
# round it hung in after 60 s (docs/gpu.md).
if named releases; then
    for m in ${RELEASE_MODES:-0 1 2 3 4 5}; do
        env -u OPENCL_LAYERS timeout -s ALRM 60 "$g/bin/probe" releases 3000 "$m" 2>&1 | grep RESULT
    done | tee "$out/releases.log"
fi
# NVIDIA's context teardown defect (asked for by name; docs/gpu.md, "NVIDIA's context teardown defect"): the probe's
# plain-OpenCL repetition of contexts.c's "context dies with its objects", three processes of four
# rounds each, the marker's event let go of alone (0) or before a kept queue reference (1), without
# the layer and then with it.
if named teardown; then
    for layer in none "$OPENCL_LAYERS"; do
        for h in 0 1 0 1 0 1; do
            if [ "$layer" = none ]; then
                env -u OPENCL_LAYERS timeout 30 "$g/bin/probe" teardown 4 "$h"
            else
                timeout 30 "$g/bin/probe" teardown 4 "$h"
            fi | grep -E "NOT gone|woken|RESULT" | sed "s|^|layer=${layer##*/}: |"
        done
    done | tee "$out/teardown.log"
fi
# Hang diagnostics (asked for by name): each conformance program that hung here once (or those in
# STACKS), with every thread's stack written to stacks.log if it is still running after
# STACKS_AFTER seconds (default 45, well before the watchdogs).
if named stacks; then
    for p in ${STACKS:-acquire textures buffers sync}; do
        sh "$g/stacks.sh" "${STACKS_AFTER:-45}" "$out/stacks.log" "$g/conformance/$p" > "$out/stacks-$p.out" 2>&1
        grep -E "stacks.sh|FAIL|passed, .* failed" "$out/stacks-$p.out" | tail -8
    done
fi
# Exit status (part of "all"): each program that touches shared objects, three runs (EXIT_RUNS), its status;
# a crash is rerun under the debugger with every thread's stack in exits-gdb.log (how the
# exit-time crash of docs/gpu.md was found).
if want exits; then
    crashed=""
    runs=${EXIT_RUNS:-3}
    for p in buffers textures acquire sync; do
        i=1
        while [ "$i" -le "$runs" ]; do
            (cd "$g/conformance" && DXCL_LOG=0 timeout 120 "./$p" >"$out/exits-$p-$i.log" 2>&1)
            rc=$?
            echo "exits: $p run $i: exit status $rc"
            # A failed check (status 1) keeps its log; a crash is rerun under the debugger.
            if [ "$rc" -eq 0 ]; then rm -f "$out/exits-$p-$i.log"; else grep -E "FAIL" "$out/exits-$p-$i.log" | head -5; fi
            [ "$rc" -gt 1 ] && crashed="$p"
            i=$((i + 1))
        done
    done > "$out/exits.txt"
    cat "$out/exits.txt"
    dbg=$(command -v gdb || command -v cuda-gdb || ls /usr/local/cuda/bin/cuda-gdb 2>/dev/null)
    if [ -n "$crashed" ] && [ -n "$dbg" ]; then
        (cd "$g/conformance" && timeout 240 "$dbg" -batch -ex "set pagination off" -ex run \
            -ex "bt 40" -ex "thread apply all bt 25" --args "./$crashed") > "$out/exits-gdb.log" 2>&1
        grep -E "signal|^#" "$out/exits-gdb.log" | head -40
    fi
fi

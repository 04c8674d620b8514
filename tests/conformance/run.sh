#!/bin/sh
# Runs the suite: run.sh BUILD_DIR "VALGRIND CMD" "PROGRAMS" "PROGRAMS RUN AGAIN WITH THE STAGING STRATEGY"
#                        ["PROGRAMS RUN AGAIN WITH DXCL_INTEROP=0"]
# With a valgrind command, all three lists run once more under it, in the reduced mode.
# DXCL_INTEROP=0 makes the layer ignore dxcl's interop interface, so every object takes the staging copies
# of a foreign device (DXVK's): the path whose release writes back from the read-back's completion callback.
# Every program runs even when an earlier one failed; a program that ends without its
# "<name>: N passed, N failed" line (a crash) counts as one failure. The last line sums them all.
# A context the platform did not destroy although the layer held none of its objects (contexts.c:
# "context lost inside the platform") fails the run unless DXCL_LOSS_PROOF=caller says the caller
# repeats the loss in plain OpenCL in the same run (scripts/gpu/run.sh does).
build=$1
valgrind=$2
programs=$3
staged=$4
foreign=${5:-}
passed=0
failed=0
lost=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

one() { # label, command...
    label=$1
    shift
    start=$(date +%s)
    "$@" >"$log" 2>&1
    rc=$?
    cat "$log"
    last=$(tail -n 1 "$log")
    p=$(printf '%s\n' "$last" | sed -n 's/^[A-Za-z0-9_]*: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p')
    f=$(printf '%s\n' "$last" | sed -n 's/^[A-Za-z0-9_]*: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p')
    if [ -z "$p" ]; then
        echo "FAIL $label: ended without its result line (exit status $rc)"
        p=0
        f=1
    elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "FAIL $label: exit status $rc"
        f=1
    fi
    passed=$((passed + p))
    failed=$((failed + f))
    lost=$((lost + $(grep -c "context lost inside the platform" "$log")))
    echo "   ($label: $(($(date +%s) - start)) s)"
}

for prog in $programs; do
    one "$prog" "$build/$prog"
done
for prog in $staged; do
    one "$prog (staging)" env DXCL_STRATEGY=staging "$build/$prog"
done
for prog in $foreign; do
    one "$prog (DXCL_INTEROP=0)" env DXCL_INTEROP=0 "$build/$prog"
done
if [ -n "$valgrind" ]; then
    # Under valgrind every program runs in the reduced mode (DXCL_CONFORMANCE_REDUCED=1: every test
    # function, strategy and pair with fewer formats, sizes and rounds; docs/conformance.md, "Sanitizers"),
    # then the staging and DXCL_INTEROP=0 reruns, reduced too. acquire's lifecycle part (objects released
    # with commands pending: freed memory that a pending command reads shows only here) is in every one.
    for prog in $programs; do
        # shellcheck disable=SC2086 # the valgrind command is a word list
        one "$prog (valgrind)" env DXCL_CONFORMANCE_REDUCED=1 $valgrind "$build/$prog"
    done
    for prog in $staged; do
        # shellcheck disable=SC2086
        one "$prog (valgrind, staging)" env DXCL_CONFORMANCE_REDUCED=1 DXCL_STRATEGY=staging $valgrind "$build/$prog"
    done
    for prog in $foreign; do
        # shellcheck disable=SC2086
        one "$prog (valgrind, DXCL_INTEROP=0)" env DXCL_CONFORMANCE_REDUCED=1 DXCL_INTEROP=0 $valgrind "$build/$prog"
    done
fi
if [ "$lost" -gt 0 ] && [ "${DXCL_LOSS_PROOF:-}" != caller ]; then
    echo "FAIL conformance: the platform lost $lost context(s) the layer held nothing of, and nothing here repeats that in plain OpenCL (docs/gpu.md)"
    failed=$((failed + lost))
fi
echo "conformance: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

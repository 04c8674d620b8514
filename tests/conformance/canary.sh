#!/bin/sh
# The sanitizers' canary (canary.c, canary_lib.c): proves that a sanitizer run of the suite would catch
# what it is there to catch, with the suite's own suppressions and options.
#
#   canary.sh valgrind PROGRAM "VALGRIND CMD"   the native build under the suite's valgrind command
#                                               (--error-exitcode=99)
#   canary.sh asan PROGRAM                      the ASan+UBSan build, ASAN_OPTIONS, LSAN_OPTIONS and
#                                               UBSAN_OPTIONS as the suite's run sets them (exitcode=98)
#
# `clean` must pass; each error mode must end with the sanitizer's exit status, and its report must name
# the error and the canary function that made it (in libdxcl_canary.so, named like dxcl's libraries).
# Any other outcome fails: a canary that passes means the sanitizer, its exit status or a suppression
# would hide that error in dxcl too.
kind=$1
prog=$2
runner=${3:-}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0

# expect MODE STATUS "TEXT IN THE REPORT" FUNCTION
expect() {
    mode=$1
    want=$2
    text=$3
    func=$4
    # shellcheck disable=SC2086 # the runner is a word list
    $runner "$prog" "$mode" >"$log" 2>&1
    got=$?
    if [ "$got" -ne "$want" ]; then
        echo "FAIL canary ($kind) $mode: exit status $got, want $want"
        sed 's/^/    /' "$log" | tail -n 30
        failed=1
    elif [ -n "$text" ] && ! grep -q "$text" "$log"; then
        echo "FAIL canary ($kind) $mode: the report does not say \"$text\""
        sed 's/^/    /' "$log" | tail -n 30
        failed=1
    elif [ -n "$func" ] && ! grep -q "$func" "$log"; then
        echo "FAIL canary ($kind) $mode: the report does not name $func"
        sed 's/^/    /' "$log" | tail -n 30
        failed=1
    else
        echo "canary ($kind) $mode: exit status $got${text:+, \"$text\"}${func:+ in $func}"
    fi
}

case $kind in
valgrind)
    expect clean 0 "canary clean: done" ""
    expect leak 99 "definitely lost" dxcl_canary_leak
    expect overread 99 "Invalid read of size 1" dxcl_canary_overread
    expect cl-leak 99 "definitely lost" dxcl_canary_cl_objects
    ;;
asan)
    expect clean 0 "canary clean: done" ""
    expect leak 98 "LeakSanitizer: detected memory leaks" dxcl_canary_leak
    expect overread 98 "AddressSanitizer: heap-buffer-overflow" dxcl_canary_overread
    expect cl-leak 98 "LeakSanitizer: detected memory leaks" dxcl_canary_cl_objects
    expect overflow 98 "runtime error: signed integer overflow" dxcl_canary_overflow
    ;;
*)
    echo "usage: canary.sh valgrind|asan PROGRAM [RUNNER]" >&2
    exit 2
    ;;
esac
exit $failed

#!/bin/sh
# stacks.sh SECONDS LOG COMMAND...: runs COMMAND; if it is still running after SECONDS, writes every
# thread's stack to LOG (cuda-gdb or gdb where the machine has one, else the kernel's view from
# /proc), then kills it. For hangs that only the GPU machine shows.
secs=$1
log=$2
shift 2
"$@" &
pid=$!
i=0
while [ "$i" -lt "$secs" ] && kill -0 "$pid" 2>/dev/null; do
    sleep 1
    i=$((i + 1))
done
if kill -0 "$pid" 2>/dev/null; then
    echo "stacks.sh: still running after $secs s: $*" | tee -a "$log"
    dbg=$(command -v gdb || command -v cuda-gdb || ls /usr/local/cuda/bin/cuda-gdb 2>/dev/null)
    if [ -n "$dbg" ]; then
        # Children too: the conformance programs run directly, the bench in-process.
        for p in $pid $(pgrep -P "$pid"); do
            timeout 120 "$dbg" -batch -p "$p" -ex "set pagination off" -ex "thread apply all bt 30" >>"$log" 2>&1
        done
    fi
    for t in /proc/"$pid"/task/*; do
        echo "== $t $(cat "$t/comm") $(cat "$t/wchan")" >>"$log"
        cat "$t/stack" >>"$log" 2>/dev/null
    done
    kill -9 "$pid"
fi
wait "$pid"

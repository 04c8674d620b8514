#!/bin/sh
# stacks.sh SECONDS LOG COMMAND...: runs COMMAND; if it is still running after SECONDS, writes every
# thread's kernel stack to LOG, stops and continues it once (a futex wait whose wake-up was lost
# re-checks its word and returns then: the log says whether that freed it), and if it is still
# running, writes every thread's user stack (gdb or cuda-gdb) and kills it. For hangs that only the
# GPU machine shows.
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
    for t in /proc/"$pid"/task/*; do
        echo "== $t $(cat "$t/comm") $(cat "$t/wchan")" >>"$log"
        cat "$t/stack" >>"$log" 2>/dev/null
    done
    kill -STOP "$pid"
    sleep 1
    kill -CONT "$pid"
    sleep 5
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "stacks.sh: it ended after one SIGSTOP/SIGCONT: $*" | tee -a "$log"
    else
        echo "stacks.sh: still running after SIGSTOP/SIGCONT: $*" | tee -a "$log"
        dbg=$(command -v gdb || command -v cuda-gdb || ls /usr/local/cuda/bin/cuda-gdb 2>/dev/null)
        if [ -n "$dbg" ]; then
            timeout 120 "$dbg" -batch -p "$pid" -ex "set pagination off" -ex "thread apply all bt 30" >>"$log" 2>&1
        fi
        kill -9 "$pid" 2>/dev/null
    fi
fi
wait "$pid"

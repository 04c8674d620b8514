#!/bin/sh
# stacks.sh SECONDS LOG COMMAND...: runs COMMAND; if it is still running after SECONDS, writes every
# thread's kernel stack to LOG, then every thread's user stack (gdb or cuda-gdb; without one, it stops
# and continues it once). Either interrupts every futex wait: one whose wake-up was lost re-checks its
# word and returns then, and the log says whether that freed it. Still running, it is killed. For
# hangs that only the GPU machine shows.
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
    # The debugger first, where there is one: attaching interrupts every futex wait too, so it
    # must read the stacks before anything else wakes them.
    dbg=$(command -v gdb || command -v cuda-gdb || ls /usr/local/cuda/bin/cuda-gdb 2>/dev/null)
    if [ -n "$dbg" ]; then
        timeout 120 "$dbg" -batch -p "$pid" -ex "set pagination off" -ex "thread apply all bt 30" >>"$log" 2>&1
        woke="after the debugger attached"
    else
        echo "stacks.sh: no debugger here: kernel stacks only" | tee -a "$log"
        kill -STOP "$pid"
        sleep 1
        kill -CONT "$pid"
        woke="after one SIGSTOP/SIGCONT"
    fi
    sleep 5
    if ! kill -0 "$pid" 2>/dev/null; then
        echo "stacks.sh: it ended $woke: $*" | tee -a "$log"
    else
        echo "stacks.sh: still running $woke: $*" | tee -a "$log"
        kill -9 "$pid" 2>/dev/null
    fi
fi
wait "$pid"

#!/usr/bin/env python3
"""The distinct lines of code and data an idle hand-off touches in the layer, which a CPU whose
caches lost them fetches again (docs/benchmarks.md, "A cold CPU on demand").

Usage: idle-lines.py TEST_BINARY [--by-function] (scripts/idle-instructions.sh passes the unit
tests' binary; --by-function also lists the lines of code per function, most first).
Runs the unit test an_idle_hand_off_makes_only_its_own_calls under valgrind's lackey, which
traces every instruction and data access, and counts per idle hand-off (the eight calls of
idle_hand_off after the first hand-off) the 64-byte lines of code it runs, the 4 KiB pages they
lie on, and the lines of data it reads or writes, leaving out the fake platform's and the test's
own functions (the C library's, such as memcpy, count). Deterministic for one build: unlike a cache simulation it does not depend on
where the linker put the functions relative to each other.
"""
import bisect
import os
import subprocess
import sys
import tempfile

TEST = "strategy::external::sync::tests::an_idle_hand_off_makes_only_its_own_calls"
FAKES = ("cl::fake::", "sync::tests::")


def functions(binary):
    """Sorted (address, demangled name) of the binary's functions."""
    out = subprocess.run(["nm", "-C", "--defined-only", binary], capture_output=True, text=True,
                         check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            syms.append((int(parts[0], 16), parts[2]))
    return sorted(syms)


def main():
    binary = sys.argv[1]
    by_function = "--by-function" in sys.argv[2:]
    syms = functions(binary)
    starts = [a for a, _ in syms]
    entry = next(a for a, n in syms if n.endswith("sync::tests::idle_hand_off"))
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={entry:#x}",
                          f"--stop-address={entry + 0x400:#x}", binary],
                         capture_output=True, text=True, check=True).stdout
    ret = next(int(l.split(":")[0], 16) for l in asm.splitlines() if "\tret" in l)
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "lackey")
        subprocess.run(["valgrind", "--tool=lackey", "--trace-mem=yes", f"--log-file={log}",
                        binary, "--exact", TEST, "--test-threads=1"],
                       capture_output=True, check=True)
        # valgrind maps a position-independent executable at this address.
        base = 0x108000
        fake = {}

        def is_fake(addr):
            if addr not in fake:
                off = addr - base
                i = bisect.bisect_right(starts, off) - 1
                # Outside the binary: the C library's code (memcpy, malloc), counted.
                fake[addr] = 0 <= off < 0x10000000 and i >= 0 and any(
                    f in syms[i][1] for f in FAKES)
            return fake[addr]

        calls, current, ins = [], None, 0
        with open(log) as f:
            for line in f:
                if line.startswith("I  "):
                    ins = int(line[3:line.index(",")], 16)
                    if ins == base + entry and current is None:
                        current = (set(), set())
                    elif current is not None and ins == base + ret:
                        calls.append(current)
                        current = None
                    elif current is not None and not is_fake(ins):
                        current[0].add(ins >> 6)
                elif current is not None and line[:2] in (" S", " L", " M") and not is_fake(ins):
                    current[1].add(int(line[3:line.index(",")], 16) >> 6)
    idle = calls[1:]  # the first call of idle_hand_off is inside the first hand-off
    n = len(idle)
    code = sum(len(c) for c, _ in idle) / n
    pages = sum(len({line >> 6 for line in c}) for c, _ in idle) / n
    data = sum(len(d) for _, d in idle) / n
    data_pages = sum(len({line >> 6 for line in d}) for _, d in idle) / n
    if by_function:
        # Past the binary's last function lies the C library's code (mapped far above).
        end = syms[-1][0] + 0x10000
        names = {}
        for c, _ in idle:
            for line in c:
                i = bisect.bisect_right(starts, (line << 6) - base) - 1
                inside = 0 <= (line << 6) - base < end and i >= 0
                name = syms[i][1] if inside else "(C library: allocator, locks)"
                names[name] = names.get(name, 0) + 1
        for name, lines in sorted(names.items(), key=lambda kv: -kv[1]):
            print(f"{lines / n:6.1f}  {name}")
    print(f"idle hand-off, lines touched: {code + data:.0f} of the layer's per hand-off "
          f"({code:.0f} of code on {pages:.0f} pages, {data:.0f} of data on {data_pages:.0f}; {n} hand-offs)")


if __name__ == "__main__":
    main()

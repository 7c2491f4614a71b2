#!/usr/bin/env python3
"""Dynamic instruction counts of an aarch64 command under QEMU user mode.

QEMU logs each translated block's instructions (`-d in_asm`) and, with block chaining off,
each block it executes (`-d exec,nochain`); the sum over executions of each block's length is
the number of guest instructions the command retired. Timing under QEMU means nothing for a
real arm64 core, but instruction counts are the emulated program's own, so they compare
backends and sizes: run a command at two input sizes and divide the difference by the extra
bytes to get instructions per byte of the kernel alone (start-up and parsing cancel out).

Usage:
  tools/arm64_icount.py [--cpu max] BINARY ARGS...        prints the instruction count
"""

import os
import re
import subprocess
import sys
import tempfile

TB_START = re.compile(r"^IN:")
INSN = re.compile(r"^0x([0-9a-f]+):\s+[0-9a-f]{8}\s")
EXEC = re.compile(r"^Trace \d+: 0x[0-9a-f]+ \[[0-9a-f]+/([0-9a-f]+)/")


def count(argv, cpu="max"):
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "qemu.log")
        subprocess.run(
            ["qemu-aarch64-static", "-L", "/", "-cpu", cpu,
             "-d", "in_asm,exec,nochain", "-D", log] + argv,
            check=True, stdout=subprocess.DEVNULL)
        lengths = {}
        executions = {}
        current = None
        with open(log, errors="replace") as f:
            for line in f:
                if TB_START.match(line):
                    current = None
                    continue
                m = INSN.match(line)
                if m:
                    pc = int(m.group(1), 16)
                    if current is None:
                        current = pc
                        lengths[current] = 0
                    lengths[current] += 1
                    continue
                m = EXEC.match(line)
                if m:
                    pc = int(m.group(1), 16)
                    executions[pc] = executions.get(pc, 0) + 1
        missing = [pc for pc in executions if pc not in lengths]
        if missing:
            raise SystemExit(f"{len(missing)} executed blocks were never logged as translated")
        return sum(lengths[pc] * n for pc, n in executions.items())


def main():
    args = sys.argv[1:]
    cpu = "max"
    if args[:1] == ["--cpu"]:
        cpu, args = args[1], args[2:]
    if not args:
        raise SystemExit(__doc__)
    print(count(args, cpu))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Flip the yield flag of FFMAs in a binary's SASS, in place: does the warp scheduler's switch after
a promotion's FFMAs let the other consumer's wgmma issue sooner (docs/gemm_tc.md, FP8)?

Usage: sass_yield.py MODE FILE      MODE: alt (every other FFMA of a run) or all (every FFMA of a run)

FILE is an executable or cubin whose device code is not compressed (nvcc --no-compress). Its SASS
(cuobjdump -sass FILE) is read; in every run of 8 or more consecutive FFMAs, the chosen
instructions get bit 45 of their upper 64 bits (the yield flag of the control bits) flipped and
bits 58-61 (the operand reuse flags) cleared, so that no operand cached for the next instruction is
relied on across a switch; the run's bytes are then found in FILE and replaced. The instructions'
operations do not change: only when the scheduler may switch warps and which operands come from
the reuse cache. Prints, per function, the runs patched and the yield flags seen before.
DeepGEMM's interleave_ffma.py patches its cubins this way (yield and reuse bits of FFMAs) and
reports 10 %+ for fine-grained-scaled fp8 GEMMs; this is our own version for a probe, not part of
the build.
"""
import collections
import re
import subprocess
import sys

YIELD = 1 << 45
REUSE = 0xF << 58


def instructions(sass):
    """(function, text, low, high) for every instruction of cuobjdump -sass output."""
    out, fn, pending = [], None, None
    for line in sass.splitlines():
        m = re.search(r"Function : (\S+)", line)
        if m:
            fn = m.group(1)
            continue
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(.*?);\s+/\* (0x[0-9a-f]{16}) \*/", line)
        if m:
            pending = (m.group(1).strip(), int(m.group(2), 16))
            continue
        m = re.match(r"\s+/\* (0x[0-9a-f]{16}) \*/", line)
        if m and pending is not None:
            out.append((fn, pending[0], pending[1], int(m.group(1), 16)))
            pending = None
    return out


def runs(insts):
    cur = []
    for ins in insts + [(None, "END", 0, 0)]:
        op = re.sub(r"^@!?U?P\w+\s+", "", ins[1]).split(None, 1)[0] if ins[1] else ""
        if op.startswith("FFMA") and (not cur or cur[-1][0] == ins[0]):
            cur.append(ins)
            continue
        if len(cur) >= 8:
            yield cur
        cur = [ins] if op.startswith("FFMA") else []


def encode(seq):
    return b"".join(lo.to_bytes(8, "little") + hi.to_bytes(8, "little") for _, _, lo, hi in seq)


def main():
    mode, path = sys.argv[1], sys.argv[2]
    assert mode in ("alt", "all"), mode
    sass = subprocess.run(["cuobjdump", "-sass", path], check=True, capture_output=True, text=True).stdout
    data = bytearray(open(path, "rb").read())
    seen = collections.Counter()
    per_fn = collections.Counter()
    missing = 0
    for run in runs(instructions(sass)):
        new = []
        for i, (fn, text, lo, hi) in enumerate(run):
            seen["yield set" if hi & YIELD else "yield clear"] += 1
            if mode == "all" or i % 2 == 1:
                hi = (hi ^ YIELD) & ~REUSE
            new.append((fn, text, lo, hi))
        old_b, new_b = encode(run), encode(new)
        at = data.find(old_b)
        if at < 0:
            missing += 1
            continue
        while at >= 0:
            data[at:at + len(new_b)] = new_b
            at = data.find(old_b, at + len(new_b))
        per_fn[run[0][0]] += 1
    open(path, "wb").write(bytes(data))
    for fn, n in per_fn.most_common():
        print(f"  {n:4d} FFMA runs patched in {fn[:110]}")
    print(f"  FFMAs in runs before: {dict(seen)}; runs not found in the file: {missing}")


if __name__ == "__main__":
    main()

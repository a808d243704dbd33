#!/usr/bin/env python3
"""Register-file reads per FFMA in a kernel's SASS (docs/gemm.md: why warptile stalls on "dispatch";
cuBLAS's main loop 1.66 reads per FFMA, warptile's pick 2.21).

Usage: cuobjdump -sass OBJ_OR_CUBIN > k.sass; scripts/experiments/sass_regreads/sass_regreads.py k.sass [NAME_SUBSTRING]

Model (from cuBLAS's hand-scheduled SASS, whose .reuse flags only make sense this way): each FFMA
source slot has an operand reuse cache with one entry per register bank (bank = register % 2);
an operand with .reuse is kept, one without it is dropped. A source read from the cache costs
no register-file read; the others do. Per function this prints the FFMAs, the register-file reads
per FFMA, the share of FFMAs with two or more reads in one bank, and which slots had to be read
(slot 0 = a, 1 = b, 2 = the accumulator). Offline: no GPU needed.
"""
import collections
import re
import sys


def functions(path):
    fns, cur = collections.OrderedDict(), None
    for line in open(path):
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = m.group(1)
            fns[cur] = []
            continue
        m = re.match(r"\s+/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if m and cur is not None:
            fns[cur].append(m.group(1).strip())
    return fns


def analyze(insts):
    cache, st, slots = {}, collections.Counter(), collections.Counter()
    for ins in insts:
        ins = re.sub(r"^@!?U?P\w+\s+", "", ins)
        parts = ins.split(None, 1)
        if not parts or not parts[0].startswith("FFMA") or len(parts) < 2:
            continue
        args = [a.strip() for a in parts[1].split(",")]
        st["ffma"] += 1
        need = []
        for slot, s in enumerate(args[1:4]):
            m = re.match(r"-?\|?R(\d+)(\.reuse)?", s)
            if not m:
                continue
            r, keep = int(m.group(1)), bool(m.group(2))
            if cache.get((slot, r % 2)) != r:
                need.append((slot, r))
            if keep:
                cache[(slot, r % 2)] = r
            else:
                cache.pop((slot, r % 2), None)
        regs = {r for _, r in need}
        banks = collections.Counter(r % 2 for r in regs)
        st["reads"] += len(regs)
        st["same_bank"] += bool(banks) and max(banks.values()) >= 2
        slots[tuple(s for s, _ in need)] += 1
    return st, slots


def main():
    path, pat = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    for name, insts in functions(path).items():
        if pat not in name:
            continue
        st, slots = analyze(insts)
        n = st["ffma"]
        if not n:
            continue
        print(f"{name}\n  FFMA {n}, register-file reads per FFMA {st['reads'] / n:.2f}, "
              f"two reads in one bank {st['same_bank'] / n:.3f}")
        print("  slots read: " + ", ".join(f"{k}: {v / n:.3f}" for k, v in slots.most_common()))


if __name__ == "__main__":
    main()

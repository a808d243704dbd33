#!/usr/bin/env python3
"""A model of gemm_host's flow with one persistent kernel that takes C's tiles as their pieces
arrive (the flow kernel of e313837, reverted): how long a piece order takes when the products
cost nothing to launch. Behind docs/gemm_host.md's 4096^3 pinned verdict: no such flow beats ~1.4x
the floor (3.68-4.10 ms by tile shape and rate), so the persistent flow kernel was not kept.

Pieces: A(i, c) = op(A)'s row panel i x k chunk c, B(c, j) = op(B)'s k chunk c x column panel j,
sent one after another over H2D at the rate the H100 measured for their row width. A block
(i, j, c) of C is ready once both of its pieces are in; the products are the ready blocks in order,
cut into bm x bn tiles that 132 SMs take one at a time (a tile's k chunks in order, each tile on one
SM at `rate` / 132). A tile row of a block of the last chunk goes back over D2H once all its tiles
are done. Calibration (e313837's traced call, 4096^3 pinned): 1 MiB pieces of 2 KiB rows took
~31 us, 4 MiB of 8 KiB rows ~83 us, 16 MiB ~320 us; the kernel's tiles ran at ~45 TFLOP/s, and
with that the model gives 4.2-4.4 ms for the plan measured at 4.39-4.48 ms. Calibrated there only:
small problems (1024^3: 16-64 tiles, latency-bound products) are outside what it describes.

usage: flow_sim.py [M N K] [TFLOP/s]   (default 4096^3 at 45 and at cuBLAS's 51.7)
"""
import heapq
import sys

SMS = 132
D2H_BW, D2H_GAP = 51e9, 5e-6
GAP = 3e-6  # between two H2D copies


def h2d_rate(row_bytes, contiguous):
    if contiguous:
        return 53e9
    return 35e9 if row_bytes <= 2048 else 44e9 if row_bytes <= 4096 else 50.5e9 if row_bytes <= 8192 else 53e9


def split(total, parts, align):
    out, lo = [], 0
    for i in range(parts):
        hi = total if i == parts - 1 else (total * (i + 1) // parts) // align * align
        out.append((lo, hi))
        lo = hi
    return out


def run(m, n, k, rows, cols, chunks, order, rate, tile_s=5e-6, bm=128, bn=256):
    """Span (s) of a piece order; rows, cols, chunks: lists of ranges; order: ('A', i, c) / ('B', c, j)."""
    t, arrived = 0.0, {}
    for p in order:
        if p[0] == 'A':
            r, kk = rows[p[1]], chunks[p[2]]
            width, height = kk[1] - kk[0], r[1] - r[0]
            contiguous = width == k
        else:
            kk, c = chunks[p[1]], cols[p[2]]
            width, height = c[1] - c[0], kk[1] - kk[0]
            contiguous = width == n
        t += 4 * width * height / h2d_rate(4 * width, contiguous) + GAP
        arrived[p] = t
    # Ready blocks in arrival order; a block's chunks in order.
    nxt = {(i, j): 0 for i in range(len(rows)) for j in range(len(cols))}
    blocks = []
    for p in order:
        for (i, j), c in nxt.items():
            while c < len(chunks) and arrived.get(('A', i, c), 1e9) <= arrived[p] and \
                    arrived.get(('B', c, j), 1e9) <= arrived[p]:
                blocks.append((i, j, c, arrived[p]))
                c += 1
            nxt[(i, j)] = c
    assert len(blocks) == len(rows) * len(cols) * len(chunks), "the order misses a piece"
    sms = [0.0] * SMS
    tile_done, band_done = {}, {}
    per_sm = rate / SMS
    for i, j, c, ready in blocks:
        (r0, r1), (c0, c1), kk = rows[i], cols[j], chunks[c][1] - chunks[c][0]
        for ti in range(r0 // bm, -(-r1 // bm)):
            for tj in range(c0 // bn, -(-c1 // bn)):
                free = heapq.heappop(sms)
                start = max(free, ready, tile_done.get((ti, tj), 0.0))
                h = min(r1, (ti + 1) * bm) - max(r0, ti * bm)
                w = min(c1, (tj + 1) * bn) - max(c0, tj * bn)
                end = start + 2 * h * w * kk / per_sm + tile_s
                tile_done[(ti, tj)] = end
                heapq.heappush(sms, end)
                if c == len(chunks) - 1:
                    band_done[(i, j, ti)] = max(band_done.get((i, j, ti), 0.0), end)
    t = 0.0
    for i, j, c, _ in blocks:
        if c != len(chunks) - 1:
            continue
        (r0, r1), (c0, c1) = rows[i], cols[j]
        for ti in range(r0 // bm, -(-r1 // bm)):
            h = min(r1, (ti + 1) * bm) - max(r0, ti * bm)
            t = max(t, band_done[(i, j, ti)]) + 4 * h * (c1 - c0) / D2H_BW + D2H_GAP
    return t


def two_phase(p, q, chunks):
    """host/schedule.hpp's order: each chunk's pieces of op(A) and op(B) interleaved (A0 B0 A1 B1 ...,
    as make_schedule sends them), chunk after chunk; the last chunk's blocks finish C."""
    order = []
    for c in range(len(chunks) - 1):
        for x in range(max(p, q)):
            if x < p:
                order.append(('A', x, c))
            if x < q:
                order.append(('B', c, x))
    last = len(chunks) - 1
    for x in range(max(p, q)):
        if x < p:
            order.append(('A', x, last))
        if x < q:
            order.append(('B', last, x))
    return order


def staggered(p, q, nchunks, tb, delta, d):
    """B's chunk c sent by time (c + 1) / C * tb; A's row panel i starts i * delta later, its chunk c by
    i * delta + (c + 1) / C * d (units of the whole transfer): B ahead of A, row panels finishing in turn."""
    keyed = []
    for c in range(nchunks):
        keyed += [((c + 1) / nchunks * tb, 0, ('B', c, j)) for j in range(q)]
        keyed += [(i * delta + (c + 1) / nchunks * d, 1, ('A', i, c)) for i in range(p)]
    return [x[2] for x in sorted(keyed)]


def best(m, n, k, rate, tile_s):
    results = []
    for p in (4, 8, 16, 32):
        for q in (1, 2, 4):
            rows, cols = split(m, p, 128), split(n, q, 256)
            for c1 in (0, 1, 2, 4):
                for frac in ((0,) if c1 == 0 else (0.25, 0.5, 0.75)):
                    k1 = int(k * frac) // 32 * 32
                    chunks = (split(k1, c1, 32) if c1 else []) + [(k1, k)]
                    span = run(m, n, k, rows, cols, chunks, two_phase(p, q, chunks), rate, tile_s)
                    results.append((span, f'two-phase {p}x{q} k{c1}/{frac}'))
            for nc in (2, 4, 8):
                chunks = split(k, nc, 32)
                for tb in (0.3, 0.5, 0.7, 0.9):
                    for delta in (0.0, 0.03, 0.06, 0.1):
                        for d in (0.3, 0.6, 1.0):
                            span = run(m, n, k, rows, cols, chunks, staggered(p, q, nc, tb, delta, d), rate, tile_s)
                            results.append((span, f'staggered {p}x{q} C{nc} tb {tb} delta {delta} d {d}'))
    results.sort()
    return results


if __name__ == '__main__':
    args = sys.argv[1:]
    m, n, k = (int(x) for x in args[:3]) if len(args) >= 3 else (4096, 4096, 4096)
    rates = [float(args[3]) * 1e12] if len(args) >= 4 else [45e12, 51.7e12]
    for rate in rates:
        for tile_s in (5e-6, 0.0):
            res = best(m, n, k, rate, tile_s)
            print(f'{m}x{n}x{k} tiles at {rate / 1e12:.1f} TFLOP/s, {tile_s * 1e6:.0f} us per tile:')
            for span, what in res[:3]:
                print(f'  {span * 1e3:.3f} ms  {what}')

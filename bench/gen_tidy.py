#!/usr/bin/env python3
"""Writes a valid tidy trace of ROWS rows (2 ranks, 1 epoch, 2 workers,
prefetch 2) to stdout, for the memory figures of `stallsim validate`
(issue 10): python3 bench/gen_tidy.py 1000000 > /tmp/t1m.csv"""
import sys

rows = int(sys.argv[1])
ranks = 2
batches = rows // ranks
out = sys.stdout
out.write("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,"
          "compute_end,epoch_start,workers,prefetch\n")
t0 = 1_700_000_000_000_000  # us
buf = []
for k in range(batches):
    for r in range(ranks):
        req = t0 + 100 + k * 1000
        fs = req - 1500 if k >= 2 else t0 + 10
        fe = req - 20 + 7 * r
        rd = req + 5 + 7 * r if fe < req else fe + 5
        ie = req + 1000
        ce = ie - 100
        buf.append(f"{r},0,{k},{k % 2},{fs // 10**6}.{fs % 10**6:06d},{fe // 10**6}.{fe % 10**6:06d},"
                   f"{req // 10**6}.{req % 10**6:06d},{rd // 10**6}.{rd % 10**6:06d},"
                   f"{ie // 10**6}.{ie % 10**6:06d},{ce // 10**6}.{ce % 10**6:06d},"
                   f"{t0 // 10**6}.{t0 % 10**6:06d},2,2\n")
    if len(buf) >= 100000:
        out.write("".join(buf))
        buf = []
out.write("".join(buf))

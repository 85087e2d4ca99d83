#!/usr/bin/env python3
"""Writes a valid tidy trace of about ROWS rows to stdout, for the memory
figures of `stallsim validate` (issue 10): RANKS ranks (default 64) x
EPOCHS epochs (default 2) x ROWS // (RANKS * EPOCHS) batches, 4 workers,
prefetch 2, times monotone per rank and epochs one after the other.

    python3 bench/gen_tidy.py 1000000 > /tmp/t1m.csv
    python3 bench/gen_tidy.py 10000000 64 2 > /tmp/t10m.csv
"""
import sys

rows = int(sys.argv[1])
ranks = int(sys.argv[2]) if len(sys.argv) > 2 else 64
epochs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
workers = 4
batches = max(1, rows // (ranks * epochs))
out = sys.stdout
out.write("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,"
          "compute_end,epoch_start,workers,prefetch\n")


def ts(us):
    return f"{us // 10**6}.{us % 10**6:06d}"


t0 = 1_700_000_000_000_000  # us
epoch_len = batches * 1000 + 5000
buf = []
for e in range(epochs):
    es = t0 + e * epoch_len
    for k in range(batches):
        for r in range(ranks):
            req = es + 100 + k * 1000
            # A fetch takes 2500-3700 us with 4 workers: some batches wait.
            fe = req - 20 + 37 * ((k * 7 + r * 3) % 5) * (1 if k % 3 else 3)
            fs = max(es + 10, fe - 2500 - 13 * ((k + r) % 7))
            rd = max(req, fe) + 5 + 3 * (r % 4)
            ie = max(rd + 100, req + 1000 - 40 + (r * 11 + k) % 30)
            ce = ie - 60 - (r * 5 + k) % 20
            if ce < rd:
                ce = rd
            buf.append(f"{r},{e},{k},{k % workers},{ts(fs)},{ts(fe)},{ts(req)},{ts(rd)},"
                       f"{ts(ie)},{ts(ce)},{ts(es)},{workers},2\n")
        if len(buf) >= 100000:
            out.write("".join(buf))
            buf = []
out.write("".join(buf))

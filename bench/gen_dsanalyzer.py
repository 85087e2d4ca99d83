#!/usr/bin/env python3
"""Writes a valid dsanalyzer trace (the notebook's three CSVs) of N batches x
G GPUs, for the memory figures of `stallsim validate` on dsanalyzer traces
(issue 10): the fetch and start files get one row per (Epoch, Index number),
the perf file one row per (Epoch, Step, GPU), sorted by (Epoch, Step, GPU)
as the notebook writes it. Epochs are numbered 1..EPOCHS (the notebook's
traces start at 1; validate reads `[trace] epoch`, default 1).

The times come from a toy loader: WORKERS workers per GPU fetch batches one
after the other (24-40 ms each, 0.2 ms turnaround), a 10 ms compute step,
and a barrier across the GPUs, so that some batches stall.

    python3 bench/gen_dsanalyzer.py OUT_PREFIX N G [EPOCHS] [WORKERS]
    python3 bench/gen_dsanalyzer.py /tmp/ds1m 1000000 2

writes OUT_PREFIX_simp_fetchdifftime.csv, OUT_PREFIX_simp_fetchstartdifftime.csv,
OUT_PREFIX.csv and OUT_PREFIX.ini (a validate config for them).
"""
import datetime
import sys

prefix = sys.argv[1]
n = int(sys.argv[2])
g = int(sys.argv[3])
epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
workers = int(sys.argv[5]) if len(sys.argv) > 5 else 3

base = datetime.datetime(2021, 9, 1)
day_us = 86400 * 10**6
days = {}


def stamp(us):
    """'YYYY-MM-DD HH:MM:SS.ffffff' of base + us microseconds."""
    d, rest = divmod(us, day_us)
    if d not in days:
        days[d] = (base + datetime.timedelta(days=d)).strftime("%Y-%m-%d ")
    s, frac = divmod(rest, 10**6)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{days[d]}{h:02d}:{m:02d}:{s:02d}.{frac:06d}"


def secs(us):
    return repr(us / 1e6)


fetch = open(prefix + "_simp_fetchdifftime.csv", "w")
start = open(prefix + "_simp_fetchstartdifftime.csv", "w")
perf = open(prefix + ".csv", "w")
fetch.write(",Epoch,Index number," + ",".join(f"Fetch time (sec)_gpu{r}" for r in range(g)) + "\n")
start.write(",Epoch,Index number," + ",".join(f"Start time_gpu{r}" for r in range(g)) + "\n")
perf.write(",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n")

t = 3600 * 10**6  # us after base
row = prow = 0
fb, sb, pb = [], [], []
for e in range(1, epochs + 1):
    q = t + 5000  # the first request of the epoch
    ends = [[0] * workers for _ in range(g)]  # per GPU, per worker: when it is free
    for k in range(n):
        fs, ss, ys = [], [], []
        for r in range(g):
            w = k % workers
            s = max(ends[r][w] + 200, q - 40000 if k >= workers else t + 100 + 37 * r)
            f = 24000 + (k * 7919 + r * 104729) % 16000
            ends[r][w] = s + f
            y = max(q, s + f) + 15 + 3 * r
            fs.append(f)
            ss.append(s)
            ys.append(y)
        c = 10000
        tk = max(ys) + c + 300
        fb.append(f"{row},{e},{k}," + ",".join(secs(f) for f in fs) + "\n")
        sb.append(f"{row},{e},{k}," + ",".join(stamp(s) for s in ss) + "\n")
        for r in range(g):
            pb.append(f"{prow},{e},{k},{r},{stamp(ys[r])},{secs(tk - q)},{secs(ys[r] - q)}\n")
            prow += 1
        row += 1
        q = tk
        if len(pb) >= 200000:
            fetch.write("".join(fb))
            start.write("".join(sb))
            perf.write("".join(pb))
            fb, sb, pb = [], [], []
    t = q + 60 * 10**6
fetch.write("".join(fb))
start.write("".join(sb))
perf.write("".join(pb))
for f in (fetch, start, perf):
    f.close()
with open(prefix + ".ini", "w") as ini:
    ini.write(f"[scenario]\nname = gen_dsanalyzer\nmode = replay\n[trace]\nformat = dsanalyzer\n"
              f"fetch = {prefix}_simp_fetchdifftime.csv\n"
              f"start = {prefix}_simp_fetchstartdifftime.csv\nperf = {prefix}.csv\nepoch = 1\n")

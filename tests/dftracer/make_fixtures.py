#!/usr/bin/env python3
"""Writes the hand-made DLIO/dftracer fixtures of tests/test_dftracer.c, in
the two newer generations' event names (facts: dlio_benchmark's
dlio_ai_logging_test.py and common.py, via /work/shared/trace-formats.md 2.2).
Times are chosen so the expected analysis is known exactly:

gen2025/  2 ranks (trace-0-of-2.pfw, trace-1-of-2.pfw) + a worker file of rank 0
          (trace-0-of-2-777.pfw, pids 777 and 778: 2 workers); 2 epochs
          (epoch.block) x 3 steps; per step fetch.iter (the wait) then compute
          (100 ms); waits rank 0: 50, 20, 30 ms, rank 1: 60, 10, 40 ms; a checkpoint
          `capture` after epoch 0: 200 ms on rank 0, 250 ms on rank 1; HH/FH/SH
          metadata, POSIX events (skipped), ai_root/train events.
gen2024/  1 rank, gzipped (trace-0-of-1.pfw.gz); 2 epochs (DLIOBenchmark._train,
          args.epoch) x 4 steps; loop.iter (the wait, args.step as a string) /
          loop.yield, TorchFramework.compute (80 ms), one more loop.iter than
          computes per epoch (the last one ends the loop); waits 10, 40, 40, 40 ms;
          PyTorchCheckpointing.save_checkpoint (300 ms) holding save_state
          (100 ms) in epoch 1; TorchDataset.__getitem__ in 3 worker threads.
Run from this folder: python3 make_fixtures.py (the files are committed).
"""
import gzip
import json
import os

T0 = 1760000000000000  # us since the epoch
MS = 1000


class W:
    def __init__(self):
        self.lines, self.id = ["["], 0

    def ev(self, name, cat, pid, tid, ts, dur, args=None, ph="X"):
        e = {"id": self.id, "name": name, "cat": cat, "pid": pid, "tid": tid}
        if ph == "X":
            e.update({"ts": ts, "dur": dur})
        e["ph"] = ph
        e["args"] = args or {}
        self.id += 1
        self.lines.append(json.dumps(e, separators=(",", ":")))

    def meta(self, name, pid, a_name, value):
        self.ev(name, "dftracer", pid, pid, 0, 0, {"name": a_name, "value": value}, ph="M")

    def text(self):
        return "\n".join(self.lines + ["]"]) + "\n"


def gen2025(out):
    os.makedirs(out, exist_ok=True)
    waits = {0: [50, 20, 30], 1: [60, 10, 40]}
    ckpt = {0: 200, 1: 250}
    for r in (0, 1):
        w, pid = W(), 100 + r
        w.meta("HH", pid, "host%d" % r, 11 + r)
        w.meta("PR", pid, "rank", str(r))
        w.meta("process_name", pid, "Rank %d" % r, "")
        w.meta("FH", pid, "/data/img_0.npz", 21)
        w.ev("start", "dftracer", pid, pid, T0 - 10 * MS, 0, {"version": "2.0.1"})
        w.ev("ai_root", "ai_root", pid, pid, T0 - 5 * MS, 3000 * MS)
        w.ev("train", "pipeline", pid, pid, T0, 2500 * MS)
        for e in (0, 1):
            es = T0 + e * 1000 * MS
            t = es
            for k, wt in enumerate(waits[r]):
                a = {"epoch": e + 1, "step": k + 1, "count": k + 1}
                w.ev("fetch.iter", "dataloader", pid, pid, t, wt * MS, a)
                w.ev("read", "POSIX", pid, pid, t + MS, 2 * MS, {"fhash": 21})
                w.ev("compute", "compute", pid, pid, t + wt * MS, 100 * MS, a)
                w.ev("fetch.block", "dataloader", pid, pid, t + wt * MS, 100 * MS, a)
                t += (wt + 100) * MS
            w.ev("epoch.block", "pipeline", pid, pid, es, t - es, {"epoch": e + 1})
            if e == 0:
                w.ev("capture", "checkpoint", pid, pid, t + 50 * MS, ckpt[r] * MS, {"epoch": 1})
        w.ev("end", "dftracer", pid, pid, T0 + 3000 * MS, 0, {"num_events": w.id})
        with open(os.path.join(out, "trace-%d-of-2.pfw" % r), "w") as f:
            f.write(w.text())
    w = W()  # rank 0's worker processes
    for wpid in (777, 778):
        w.meta("PR", wpid, "rank", "0")
        for e in (0, 1):
            for j in range(6):
                ts = T0 + e * 1000 * MS + j * 40 * MS + (wpid - 777) * 5 * MS
                w.ev("item", "data", wpid, wpid, ts, 30 * MS,
                     {"epoch": e + 1, "step": j // 2 + 1, "image_idx": j, "image_size": "4096"})
    with open(os.path.join(out, "trace-0-of-2-777.pfw"), "w") as f:
        f.write(w.text())


def gen2024(out):
    os.makedirs(out, exist_ok=True)
    w, pid = W(), 4242
    w.meta("PR", pid, "rank", "0")
    waits = [10, 40, 40, 40]
    for e in (0, 1):
        es = T0 + e * 2000 * MS
        t = es + 5 * MS
        w.ev("TorchDataLoader.next", "data_loader", pid, pid, t - 2 * MS, MS, {"epoch": str(e + 1)})
        for k, wt in enumerate(waits):
            w.ev("loop.iter", "data_loader", pid, pid, t, wt * MS, {"step": str(k + 1)})
            w.ev("TorchFramework.compute", "ai_framework", pid, pid, t + wt * MS, 80 * MS,
                 {"epoch": str(e + 1), "step": str(k + 1)})
            w.ev("loop.yield", "data_loader", pid, pid, t + wt * MS, 80 * MS, {"step": str(k + 1)})
            for s in range(2):
                tid = 5000 + (2 * k + s) % 3
                w.ev("TorchDataset.__getitem__", "data_loader", pid, tid, t - 30 * MS + s * MS,
                     25 * MS, {"epoch": str(e + 1), "image_idx": 2 * k + s})
                w.ev("NPZReader.read_index", "reader", pid, tid, t - 29 * MS + s * MS, 20 * MS,
                     {"epoch": str(e + 1), "step": str(k // 2 + 1), "image_idx": 2 * k + s,
                      "image_size": "146579449"})
            t += (wt + 80) * MS
        w.ev("loop.iter", "data_loader", pid, pid, t, 2 * MS, {"step": "5"})  # StopIteration
        t += 2 * MS
        if e == 1:
            w.ev("PyTorchCheckpointing.save_checkpoint", "checkpoint", pid, pid, t, 300 * MS,
                 {"epoch": "2"})
            w.ev("PyTorchCheckpointing.save_state", "checkpoint", pid, pid, t + 100 * MS, 100 * MS)
            t += 300 * MS
        w.ev("DLIOBenchmark._train", "dlio_benchmark", pid, pid, es, t - es + MS, {"epoch": e + 1})
    with open(os.path.join(out, "trace-0-of-1.pfw.gz"), "wb") as f:
        f.write(gzip.compress(w.text().encode(), mtime=0))


gen2025("gen2025")
gen2024("gen2024")

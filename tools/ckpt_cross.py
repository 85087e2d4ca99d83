#!/usr/bin/env python3
"""Checkpoint stall predicted from one capture for another interval, every
pair of the shipped checkpoint captures, under three write-time rules
(docs/model.md 2.5, issue 19).

The stall of a synchronous checkpoint is its write, so a prediction is
closed-form: a run of E epochs x N batches at interval n writes
c = floor(E*N / n) checkpoints; the first takes the source's first span,
each later one the source's typical write W:

  mean    W = the mean of the source's later writes (the shipped rule)
  median  W = their median (upper median for an even count)
  medE    the median, plus the source's excess over it (sum of later
          writes - median x count) once per run: slow writes that come a
          few times a run whatever the interval

Measured: the target's checkpoint spans (max over ranks) summed / E.
Prints each capture's writes, then for each rule the median, 90th
percentile and largest absolute error over the source != target pairs,
and how many fall within 10%.

    python3 tools/ckpt_cross.py [traces/ckpt_w2_n25 traces/ckpt_w2_n6 ...]

With no arguments: every traces/ckpt_w2_* capture but the _v1 ones (their
tensor was made outside the timed span, docs/model.md 2.5).
"""
import csv
import glob
import os
import statistics
import sys


def load(folder):
    """(spans in run order, epochs, batches per epoch, interval)."""
    spans = {}
    epochs, batches = set(), set()
    with open(os.path.join(folder, "trace.csv"), newline="") as f:
        for row in csv.DictReader(f):
            epochs.add(row["epoch"])
            batches.add(row["batch"])
            if row.get("ckpt_start", "") in ("", "-1"):
                continue
            key = (int(row["epoch"]), int(row["batch"]))
            d = float(row["ckpt_end"]) - float(row["ckpt_start"])
            spans[key] = max(spans.get(key, 0.0), d)
    keys = sorted(spans)
    if len(keys) < 2:
        sys.exit(f"{folder}: fewer than 2 checkpoints")
    every = (keys[1][0] * len(batches) + keys[1][1]) - (keys[0][0] * len(batches) + keys[0][1])
    return [spans[k] for k in keys], len(epochs), len(batches), every


def upper_median(v):
    s = sorted(v)
    return s[len(s) // 2]


def predict(src, every, rule):
    spans, ne, nb, _ = src
    later = spans[1:]
    med = upper_median(later)
    w = statistics.mean(later) if rule == "mean" else med
    count = (ne * nb) // every
    total = spans[0] + (count - 1) * w
    if rule == "medE":
        total += sum(later) - med * len(later)
    return total / ne


def main(argv):
    folders = argv or sorted(
        d for d in glob.glob("traces/ckpt_w2_*") if os.path.isdir(d) and not d.endswith("_v1"))
    caps = {os.path.basename(d): load(d) for d in folders}
    for name, (spans, ne, nb, every) in caps.items():
        later = spans[1:]
        print(f"{name}: every {every}, {len(spans)} writes, first {spans[0]:.3f} s, later mean "
              f"{statistics.mean(later):.3f} median {upper_median(later):.3f} s")
    for rule in ("mean", "median", "medE"):
        errs = []
        for s in caps:
            for t, tgt in caps.items():
                if s == t:
                    continue
                spans, ne, _, every = tgt
                errs.append(abs(predict(caps[s], every, rule) / (sum(spans) / ne) - 1))
        errs.sort()
        print(f"{rule:6s} {len(errs)} pairs: |error| median {100 * errs[len(errs) // 2]:.1f}%, "
              f"p90 {100 * errs[int(0.9 * len(errs))]:.1f}%, max {100 * errs[-1]:.1f}%, "
              f"within 10%: {sum(e <= 0.10 for e in errs)}")


if __name__ == "__main__":
    main(sys.argv[1:])

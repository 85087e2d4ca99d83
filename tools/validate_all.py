#!/usr/bin/env python3
"""`stallsim validate` on every shipped trace: docs/validation.md's table.

    tools/validate_all.py [--bin build/stallsim] > /tmp/table.md

Runs `validate traces/<T>/trace.csv` (and traces/cpushare/*, traces/gpu/*) each in its
measured configuration, prints the markdown table (trace, ranks x workers,
per-epoch errors, mean measured and simulated epoch, the mean's error) and,
per group, the median per-epoch |error|, the worst and how many epochs are
within 3% and 5%.
"""
import argparse
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

HEAD = re.compile(r"validate \S+: (\d+) ranks x (\d+) workers")
ROW = re.compile(r"^\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([+-][0-9.]+)%")
MEAN = re.compile(r"^\s+mean\s+([0-9.]+)\s+([0-9.]+)\s+([+-][0-9.]+)%")


def validate(binary, path):
    out = tempfile.mkdtemp(prefix="valall.")
    shutil.rmtree(out)
    try:
        p = subprocess.run([binary, "validate", path, "-o", out, "--no-sync"],
                           capture_output=True, text=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if p.returncode != 0:
        sys.exit(f"validate_all: {path}: {p.stderr.strip().splitlines()[-1]}")
    head = HEAD.search(p.stdout)
    errs = [float(m.group(4)) for m in map(ROW.match, p.stdout.splitlines()) if m]
    mean = next(m for m in map(MEAN.match, p.stdout.splitlines()) if m)
    return head.group(1), head.group(2), errs, mean


def summary(name, rows):
    errs = [e for r in rows for e in r[3]]
    worst = max(rows, key=lambda r: max(abs(e) for e in r[3]))
    w = max(worst[3], key=abs)
    return (f"{name}: {len(rows)} traces, {len(errs)} epochs; median |error| "
            f"{statistics.median(abs(e) for e in errs):.2f}%, worst {w:+.2f}% ({worst[0]}); "
            f"{sum(abs(e) <= 3 for e in errs)} within 3%, {sum(abs(e) <= 5 for e in errs)} "
            f"within 5%")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    ap.add_argument("--bin", default=os.path.join(root, "build", "stallsim"))
    a = ap.parse_args()
    groups = {"traces/*": [], "traces/cpushare/*": [], "traces/gpu/*": []}
    for group in groups:
        for path in sorted(glob.glob(os.path.join(root, group, "trace.csv"))):
            name = os.path.relpath(os.path.dirname(path), os.path.join(root, "traces"))
            ranks, workers, errs, mean = validate(a.bin, path)
            groups[group].append((name, ranks, workers, errs, mean))
    print("| trace | ranks x workers | per-epoch errors | mean measured s | mean simulated s "
          "| mean error |")
    print("|---|---|---|---|---|---|")
    for rows in groups.values():
        for name, ranks, workers, errs, mean in rows:
            print(f"| {name} | {ranks} x {workers} | " + ", ".join(f"{e:+.2f}%" for e in errs)
                  + f" | {mean.group(1)} | {mean.group(2)} | {mean.group(3)}% |")
    print()
    print(summary("all", [r for rows in groups.values() for r in rows]))
    for group, rows in groups.items():
        print(summary(group, rows))


if __name__ == "__main__":
    main()

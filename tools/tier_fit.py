#!/usr/bin/env python3
"""Fit one [storage] key on a reference trace's cold epoch, then predict.

    tools/tier_fit.py --ref traces/REF --key storage.latency_ms --lo 0 --hi 20 \
        [--set KEY=VALUE ...] [--predict traces/T:storage.cached_start_mb=1280 ...]

Bisection (30 steps) on the key so that `stallsim run REF/trace.csv` with the
sets gives the reference's measured epoch 0; then each prediction runs the
same model with the fitted key and the target's own sets, and prints its
epochs beside the target's measured ones (docs/model.md 2.3, validation.md).
The simulated epoch 0 must grow as the key moves from --lo to --hi (a latency
up, a bandwidth down: give --lo above --hi for a bandwidth).
"""
import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

EPOCHS = re.compile(r"^epochs \(storage tiers.*?\):(.*)$", re.M)


def measured(folder):
    ep = {}
    with open(os.path.join(folder, "trace.csv"), newline="") as f:
        for r in csv.DictReader(f):
            e = int(r["epoch"])
            lo, hi = ep.get(e, (float("inf"), float("-inf")))
            ep[e] = (min(lo, float(r["epoch_start"])), max(hi, float(r["iter_end"])))
    return [hi - lo for _, (lo, hi) in sorted(ep.items())]


def simulate(binary, folder, sets):
    out = tempfile.mkdtemp(prefix="tierfit.")
    shutil.rmtree(out)
    cmd = [binary, "run", os.path.join(folder, "trace.csv"), "-o", out, "--no-sync"]
    for s in sets:
        cmd += ["--set", s]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if p.returncode != 0:
        sys.exit(f"tier_fit: {' '.join(cmd)}: {p.stderr.strip().splitlines()[-1]}")
    m = EPOCHS.search(p.stdout)
    if not m:
        sys.exit(f"tier_fit: no per-epoch line from {' '.join(cmd)} (storage tiers off?)")
    return [float(x) for x in re.findall(r"\d+: ([0-9.]+) s", m.group(1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", required=True, help="capture folder of the reference")
    ap.add_argument("--key", required=True, help="the [storage] key fitted, e.g. storage.latency_ms")
    ap.add_argument("--lo", type=float, required=True)
    ap.add_argument("--hi", type=float, required=True)
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE for every run")
    ap.add_argument("--ref-set", action="append", default=[], help="KEY=VALUE for the fit only")
    ap.add_argument("--predict", action="append", default=[], metavar="FOLDER[:KEY=VALUE,...]")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build",
                                                   "stallsim"))
    a = ap.parse_args()
    want = measured(a.ref)[0]
    lo, hi = a.lo, a.hi
    for _ in range(30):
        mid = (lo + hi) / 2
        got = simulate(a.bin, a.ref, a.set + a.ref_set + [f"{a.key}={mid:.6g}"])[0]
        if got < want:
            lo = mid
        else:
            hi = mid
    value = float(f"{(lo + hi) / 2:.4g}")
    fit = simulate(a.bin, a.ref, a.set + a.ref_set + [f"{a.key}={value:g}"])
    meas = measured(a.ref)
    print(f"{a.key} = {value:g} (reference {a.ref}: epochs "
          + ", ".join(f"{s:.3f}" for s in fit) + " s, measured "
          + ", ".join(f"{s:.3f}" for s in meas) + " s)")
    for spec in a.predict:
        folder, _, extra = spec.partition(":")
        sets = a.set + [f"{a.key}={value:g}"] + [s for s in extra.split(",") if s]
        sim = simulate(a.bin, a.ref, sets)
        line = f"{os.path.basename(folder.rstrip('/'))} ({', '.join(extra.split(',')) or 'as set'}): "
        line += ", ".join(f"{s:.3f}" for s in sim) + " s"
        if os.path.exists(os.path.join(folder, "trace.csv")):
            m = measured(folder)
            line += "; measured " + ", ".join(f"{x:.3f}" for x in m) + " s: " + ", ".join(
                f"{100 * (s / x - 1):+.1f}%" for s, x in zip(sim, m))
        else:
            line += " (not captured yet)"
        print(line)


if __name__ == "__main__":
    main()

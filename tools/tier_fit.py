#!/usr/bin/env python3
"""Fit one [storage] key on a reference capture's cold epoch, then predict.

    tools/tier_fit.py --ref traces/REF --key storage.latency_ms --lo 0.01 --hi 20 \\
        [--set KEY=VALUE ...] [--ref-set KEY=VALUE ...] \\
        [--predict traces/T:storage.cached_start_mb=1280,... ...]

Bisection (30 steps) on the key so that `stallsim run REF/trace.csv` with the
sets gives the reference's measured epoch 0; then each prediction runs the
same model with the fitted key and the target's own sets, and prints its
epochs beside the target's measured ones (docs/model.md 2.3, validation.md).
The simulated epoch 0 must grow from --lo to --hi: a latency grows it upwards
(--lo 0.01 --hi 20), a bandwidth downwards (--lo 8000 --hi 300). The range is
checked: if epoch 0 at --lo is not below the measured one and at --hi not above
it, the fit is refused. Errors: one line, exit 2.
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
MEAN = re.compile(r"^none\s+([0-9.]+)", re.M)


def fail(msg):
    print(f"tier_fit: {msg}", file=sys.stderr)
    sys.exit(2)


def folder_of(path):
    """A capture folder, or its trace.csv given directly."""
    return os.path.dirname(path) or "." if os.path.isfile(path) and path.endswith(".csv") else path


def trace_of(folder):
    path = os.path.join(folder, "trace.csv")
    if not os.path.isfile(path):
        fail(f"{folder}: no trace.csv (give a capture folder, as traces/pagecache4m_cold)")
    return path


def measured(folder):
    ep = {}
    try:
        with open(trace_of(folder), newline="") as f:
            for r in csv.DictReader(f):
                e = int(r["epoch"])
                lo, hi = ep.get(e, (float("inf"), float("-inf")))
                ep[e] = (min(lo, float(r["epoch_start"])), max(hi, float(r["iter_end"])))
    except (KeyError, ValueError) as err:
        fail(f"{folder}/trace.csv: not a tidy trace with epoch, epoch_start and iter_end ({err})")
    if not ep:
        fail(f"{folder}/trace.csv: no rows")
    return [hi - lo for _, (lo, hi) in sorted(ep.items())]


def simulate(binary, folder, sets):
    out = tempfile.mkdtemp(prefix="tierfit.")
    shutil.rmtree(out)
    cmd = [binary, "run", trace_of(folder), "-o", out, "--no-sync"]
    for s in sets:
        cmd += ["--set", s]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as err:
        fail(f"{binary}: {err.strerror} (build it first: make build, or give --bin)")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines()
        fail(f"{' '.join(cmd)}: {lines[-1] if lines else 'exit ' + str(p.returncode)}")
    if "storage tiers:" not in p.stdout:
        fail(f"the storage tiers are off in {' '.join(cmd)}: give the [storage] keys they need")
    m = EPOCHS.search(p.stdout)
    if m:
        return [float(x) for x in re.findall(r"\d+: ([0-9.]+) s", m.group(1))]
    m = MEAN.search(p.stdout)  # one epoch: its time is the mean's
    if not m:
        fail(f"no epoch time in the output of {' '.join(cmd)}")
    return [float(m.group(1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 epilog="\n".join(__doc__.splitlines()[2:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ref", required=True, help="capture folder of the reference (its trace.csv)")
    ap.add_argument("--key", required=True, help="the [storage] key fitted, e.g. storage.latency_ms")
    ap.add_argument("--lo", type=float, required=True,
                    help="the key's value where the reference's epoch 0 is short")
    ap.add_argument("--hi", type=float, required=True,
                    help="the key's value where it is long")
    ap.add_argument("--set", action="append", default=[], help="KEY=VALUE for every run")
    ap.add_argument("--ref-set", action="append", default=[], help="KEY=VALUE for the fit only")
    ap.add_argument("--predict", action="append", default=[], metavar="FOLDER[:KEY=VALUE,...]",
                    help="a target: its capture folder (need not exist yet) and its own sets")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                   "build", "stallsim"),
                    help="the stallsim binary (default: build/stallsim beside this tool)")
    a = ap.parse_args()
    a.ref = folder_of(a.ref)
    if not a.key.startswith("storage."):
        fail(f"--key {a.key}: not a [storage] key (storage.latency_ms, storage.bandwidth_mb_s, ...)")
    for s in a.set + a.ref_set:
        if "=" not in s:
            fail(f"--set {s}: not KEY=VALUE")
    want = measured(a.ref)[0]
    at_lo = simulate(a.bin, a.ref, a.set + a.ref_set + [f"{a.key}={a.lo:g}"])[0]
    at_hi = simulate(a.bin, a.ref, a.set + a.ref_set + [f"{a.key}={a.hi:g}"])[0]
    if not at_lo < want < at_hi:
        fail(f"{a.key} from {a.lo:g} to {a.hi:g} gives epoch 0 from {at_lo:.3f} to {at_hi:.3f} s, "
             f"which does not cross the measured {want:.3f} s: widen the range, or swap --lo "
             f"and --hi (epoch 0 must grow from --lo to --hi)")
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
        folder = folder_of(folder)
        sets = a.set + [f"{a.key}={value:g}"] + [s for s in extra.split(",") if s]
        sim = simulate(a.bin, a.ref, sets)
        line = f"{os.path.basename(folder.rstrip('/'))} ({', '.join(extra.split(',')) or 'as set'}): "
        line += ", ".join(f"{s:.3f}" for s in sim) + " s"
        if os.path.exists(os.path.join(folder, "trace.csv")):
            m = measured(folder)
            line += "; measured " + ", ".join(f"{x:.3f}" for x in m) + " s: " + ", ".join(
                f"{100 * (s / x - 1):+.1f}%" for s, x in zip(sim, m))
        else:
            line += f" ({folder}/trace.csv not there: not captured yet)"
        print(line)


if __name__ == "__main__":
    main()

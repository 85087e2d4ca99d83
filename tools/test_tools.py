#!/usr/bin/env python3
"""Tests of tools/tier_fit.py, tools/validate_all.py, tools/cpushare_fit.py and
tools/tidy_to_dsanalyzer.py (and train_example.py's output folder; stallsim_capture.py merge
and tidy_to_dsanalyzer.py under Ctrl-C and SIGTERM) against the shipped captures and the
built stallsim (run from the repository root by ctest):
the fit meets the reference's cold epoch and reproduces a prediction of
docs/validation.md; bad input is one line on stderr and exit 2."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PY = sys.executable
FIT = os.path.join(ROOT, "tools", "tier_fit.py")
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "stallsim")
failures = []


def run(args):
    return subprocess.run([PY, FIT, "--bin", BIN] + args, capture_output=True, text=True, cwd=ROOT)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


BASE = ["--key", "storage.bandwidth_mb_s", "--set", "storage.cache_mb=20000", "--set",
        "storage.queue=fifo", "--ref-set", "storage.cached_start_mb=0"]

# The fit of docs/validation.md's round 2, and its prediction for half the files cold.
p = run(["--ref", "traces/pagecache4m_cold_r2", "--lo", "8000", "--hi", "300"] + BASE
        + ["--predict", "traces/pagecache4m_half_r2:storage.cached_start_mb=1280"])
check(p.returncode == 0, f"fit runs: {p.stderr.strip()}")
lines = p.stdout.splitlines()
fitted = float(lines[0].split("=")[1].split()[0]) if lines else 0
check(2500 < fitted < 2750, f"fitted bandwidth {fitted} near 2617 MB/s")
check(len(lines) == 2 and "measured 0.798" in lines[1], "the prediction beside the measured run")
ref_line = lines[0] if lines else ""
check("epochs 1.20" in ref_line and "measured 1.203" in ref_line, "the fit meets epoch 0")

# A trace.csv given directly stands for its folder.
p2 = run(["--ref", "traces/pagecache4m_cold_r2/trace.csv", "--lo", "8000", "--hi", "300"] + BASE)
check(p2.returncode == 0 and p2.stdout.splitlines()[:1] == lines[:1], "trace.csv as --ref")

# Bad input: one line, exit 2.
for args, want in [
    (["--ref", "traces/pagecache4m_cold_r2", "--lo", "300", "--hi", "8000"] + BASE,
     "does not cross the measured"),
    (["--ref", "traces/nope", "--key", "storage.latency_ms", "--lo", "0", "--hi", "2"],
     "no trace.csv"),
    (["--ref", "traces/w2", "--key", "loader.startup_s", "--lo", "0", "--hi", "2"],
     "not a [storage] key"),
    (["--ref", "traces/w2", "--key", "storage.latency_ms", "--lo", "0", "--hi", "2"],
     "a cache miss costs nothing"),
]:
    q = run(args)
    err = q.stderr.strip()
    check(q.returncode == 2 and want in err and len(err.splitlines()) == 1,
          f"{' '.join(args[:4])} ...: exit {q.returncode}, '{err}'")

# validate_all: the table and its summary lines.
v = subprocess.run([PY, os.path.join(ROOT, "tools", "validate_all.py"), "--bin", BIN],
                   capture_output=True, text=True, cwd=ROOT)
out = v.stdout.splitlines()
check(v.returncode == 0 and out[0].startswith("| trace | ranks x workers"), "validate_all table")
check(any(line.startswith("| w2 | 1 x 2 |") for line in out), "validate_all has w2")
check(out[-4].startswith("all: ") and out[-3].startswith("traces/*:")
      and out[-1].startswith("traces/gpu/*: 4 traces, 12 epochs"), "validate_all summaries")

# cpushare_fit.py ring (docs/model.md 2.3): without waits the ring leaves no rest; with the
# 8-rank trace's waits it leaves more than the measured rest (the rule docs/model.md rejects).
sys.path.insert(0, os.path.join(ROOT, "tools"))
import cpushare_fit  # noqa: E402
check(abs(cpushare_fit.ring(8, 6.0, 0.0) - 6.0) < 1e-9, "ring without waits: its CPU alone")
check(cpushare_fit.ring(8, 6.0, 14.0) > 6.0 + 14.0 + 2.0, "ring with waits: a rest on top")
r = subprocess.run([PY, os.path.join(ROOT, "tools", "cpushare_fit.py"), "ring",
                    "traces/cpushare/sleep_ddp8_r1/trace.csv"], capture_output=True, text=True,
                   cwd=ROOT)
cells = r.stdout.splitlines()[-1].split() if r.returncode == 0 and r.stdout else []
check(len(cells) == 4 and cells[1] == "8" and float(cells[3]) > 1.5 * float(cells[2]) > 0,
      f"ring on sleep_ddp8_r1: {cells}")

# cpushare_fit.py hops: rest = 2 (G-2) w, post_wait = (2 (G-1) + c) w; no rest below 3 ranks.
check(cpushare_fit.hops(2, 0.5, 2.0) is None, "hops: 2 ranks have no chain beyond their own")
w, c = cpushare_fit.hops(8, 12.0, 22.0)
check(abs(w - 1.0) < 1e-12 and abs(c - 8.0) < 1e-12, f"hops(8, 12, 22) = {w}, {c}")
r = subprocess.run([PY, os.path.join(ROOT, "tools", "cpushare_fit.py"), "hops",
                    "traces/cpushare/sleep_ddp2_r1/trace.csv",
                    "traces/cpushare/sleep_ddp8_r1/trace.csv"], capture_output=True, text=True,
                   cwd=ROOT)
rows8 = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("sleep_ddp8_r1 ")]
rows2 = [ln.split() for ln in r.stdout.splitlines() if ln.startswith("sleep_ddp2_r1 ")]
check(r.returncode == 0 and len(rows8) == 1 and len(rows2) == 1 and rows2[0][5] == "-"
      and abs(float(rows8[0][5]) - float(rows8[0][2]) / 12) < 0.01,
      f"hops on sleep_ddp2_r1, sleep_ddp8_r1: {r.stdout!r}")

# tidy_to_dsanalyzer.py: the notebook's three CSVs laid out as the real ones
# (tests/golden/seed-case1/input/), times carried exactly, read by stallsim.
import csv  # noqa: E402
from decimal import Decimal  # noqa: E402
import tidy_to_dsanalyzer as t2d  # noqa: E402

check(t2d.stamp(1_000_000_001) == "1970-01-01 00:00:01.000000001", "stamp: ns kept")
check(t2d.stamp(1795224160_120357000) == "2026-11-21 01:22:40.120357", "stamp: us as %f")
check(t2d.seconds(86_792_000) == "0.086792" and t2d.seconds(1500) == "0.0000015",
      "seconds: 6 digits at least, 9 at most")
CONV = os.path.join(ROOT, "tools", "tidy_to_dsanalyzer.py")
GOLD = os.path.join(ROOT, "tests", "golden", "seed-case1", "input",
                    "fsNprepNloadNtrain_Imagenet_default_resnet50_epoch1_b2048_worker12_thread0")
with tempfile.TemporaryDirectory() as tmp:
    c = subprocess.run([PY, CONV, "--ini", "traces/w2", tmp], capture_output=True, text=True,
                       cwd=ROOT)
    check(c.returncode == 0 and "3 epochs x 60 batches x 1 GPUs" in c.stdout
          and "not carried (the notebook's format has no column for them): worker, workers"
          in c.stdout, f"converts traces/w2: {c.stdout!r} {c.stderr!r}")
    for suffix in (".csv", "_simp_fetchdifftime.csv", "_simp_fetchstartdifftime.csv"):
        with open(GOLD + suffix) as g, open(os.path.join(tmp, "w2" + suffix)) as o:
            gold = g.readline().rstrip("\n").split(",")
            mine = o.readline().rstrip("\n").split(",")
        want = [h for h in gold if "_gpu" not in h or h.endswith("_gpu0")]
        check(mine == want, f"w2{suffix} header {mine} as the notebook's {want}")
    with open("traces/w2/trace.csv") as f:
        tidy = [r for r in csv.DictReader(f) if r["epoch"] == "1"]
    with open(os.path.join(tmp, "w2_simp_fetchstartdifftime.csv")) as f:
        starts = [r for r in csv.reader(f)][1:]
    with open(os.path.join(tmp, "w2.csv")) as f:
        perf = [r for r in csv.reader(f)][1:]
    ok = len(starts) == 180 and len(perf) == 180
    for r in tidy:
        k = int(r["batch"])
        sec, frac = r["fetch_start"].split(".")
        text = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(sec))) + "." + frac
        row = perf[60 + k]
        ok = ok and starts[60 + k][1:3] == ["1", str(k)] and starts[60 + k][3] == text
        ok = ok and row[1:4] == ["1", str(k), "0"]
        ok = ok and Decimal(row[6]) == Decimal(r["ready"]) - Decimal(r["request"])
    check(ok, "w2 epoch 1: starts as the tidy text, stalls as ready - request")
    v = subprocess.run([BIN, "validate", os.path.join(tmp, "w2.ini"), "-o",
                        os.path.join(tmp, "val")], capture_output=True, text=True, cwd=ROOT)
    check(v.returncode == 0 and "workers per GPU: 2, inferred from the fetch starts" in v.stdout,
          f"stallsim validate reads the converted w2: {v.stdout[-300:]!r} {v.stderr!r}")
    for args, want in [(["traces/nope", tmp], "no tidy trace there"),
                       ([GOLD + ".csv", tmp], "not a tidy trace (no column rank")]:
        q = subprocess.run([PY, CONV] + args, capture_output=True, text=True, cwd=ROOT)
        err = q.stderr.strip()
        check(q.returncode == 2 and want in err and len(err.splitlines()) == 1,
              f"tidy_to_dsanalyzer {args[0]}: exit {q.returncode}, '{err}'")

    # times past stallsim's clock limit (4e9 s): stamp() raised OverflowError (a traceback,
    # exit 1) after the fetch file and half the start file were written
    with open("traces/w2/trace.csv") as f:
        lines = f.read().splitlines()
    head = lines[0].split(",")
    timed = [head.index(c) for c in ("fetch_start", "fetch_end", "request", "ready", "iter_end",
                                     "compute_end", "epoch_start")]
    far_rows = [lines[0]]
    for line in lines[1:]:
        row = line.split(",")
        for i in timed:
            row[i] = str(Decimal(row[i]) + 300_000_000_000) if row[i] else ""
        far_rows.append(",".join(row))
    far = os.path.join(tmp, "far.csv")
    with open(far, "w") as f:
        f.write("\n".join(far_rows) + "\n")
    out = os.path.join(tmp, "far_out")
    q = subprocess.run([PY, CONV, far, out], capture_output=True, text=True, cwd=ROOT)
    err = q.stderr.strip()
    check(q.returncode == 2 and f"far.csv:2:{head.index('fetch_start') + 1}: " in err
          and "past the clock limit" in err and len(err.splitlines()) == 1
          and not os.path.exists(out),
          f"tidy_to_dsanalyzer: a time past the clock limit: exit {q.returncode}, '{err[-300:]}'")

# tools/train_example.py writes its --out folder whole or not at all: a run into a work folder
# renamed into place (it wrote in place, so an interrupted capture left half a folder, and a
# second one replaced the first file by file); an interrupted one leaves the earlier folder as it
# was; a folder that is no capture's is refused.
EX = os.path.join(ROOT, "tools", "train_example.py")
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "run")
    tiny = [PY, EX, "--workers", "0", "--batches", "3", "--epochs", "1", "--batch-size", "2",
            "--cpu-reps", "0", "--width", "4", "--out", out]
    p = subprocess.run(tiny, capture_output=True, text=True, cwd=ROOT)
    check(p.returncode == 0 and os.path.exists(os.path.join(out, "trace.csv"))
          and os.path.exists(os.path.join(out, "meta.json")),
          f"train_example writes its folder: {p.stderr[-300:]!r}")
    check(sorted(os.listdir(tmp)) == ["run"], f"no work folder left: {os.listdir(tmp)}")
    with open(os.path.join(out, "meta.json")) as fh:
        meta = json.load(fh)
    check(meta["config"]["out"] == out, f"meta.json names --out: {meta['config']['out']}")
    before = open(os.path.join(out, "trace.csv")).read()
    files = sorted(os.listdir(out))
    slow = tiny[:-2] + ["--batches", "400", "--io-ms", "20", "--out", out]
    q = subprocess.Popen(slow, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    t0 = time.time()
    while time.time() - t0 < 60 and not any(".tmp." in f for f in os.listdir(tmp)):
        time.sleep(0.1)
    time.sleep(2)
    q.send_signal(signal.SIGTERM)
    q.wait(60)
    check(q.returncode != 0 and sorted(os.listdir(tmp)) == ["run"]
          and open(os.path.join(out, "trace.csv")).read() == before
          and sorted(os.listdir(out)) == files,
          f"SIGTERM leaves the earlier folder as it was: exit {q.returncode}, {os.listdir(tmp)}, "
          f"{sorted(os.listdir(out))} (was {files})")
    foreign = os.path.join(tmp, "mine")
    os.mkdir(foreign)
    open(os.path.join(foreign, "notes.txt"), "w").close()
    r = subprocess.run(tiny[:-1] + [foreign], capture_output=True, text=True, cwd=ROOT)
    check(r.returncode == 2 and "not a capture folder" in r.stderr
          and os.listdir(foreign) == ["notes.txt"],
          f"a folder that is no capture's is refused: {r.returncode} {r.stderr[-200:]!r}")
    # its refusals after the options are read are one line (argparse's p.error printed the
    # 17-line usage before them)
    r = subprocess.run(tiny[:-1] + [out, "--evict", "0.5"], capture_output=True, text=True,
                       cwd=ROOT)
    check(r.returncode == 2 and r.stderr.strip().splitlines() == [
              "train_example.py: error: --evict and --http need --data-dir"],
          f"a refusal after parsing is one line: {r.returncode} {r.stderr[-300:]!r}")

# Ctrl-C and SIGTERM on tidy_to_dsanalyzer.py and stallsim_capture.py merge while they write:
# one line on stderr, the end of the signal, no temporary file, the earlier files as they were
# and no folder made for the output. SIGTERM killed both at once, leaving their temporary
# files (and merge's output folder); Ctrl-C printed a traceback.
def big_tidy(path, ranks, batches):
    with open(path, "w") as f:
        f.write("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,"
                "compute_end,bytes,samples,epoch_start,workers,prefetch,pin_memory,persistent\n")
        for e in range(2):
            for b in range(batches):
                for r in range(ranks):
                    t = 1795224176.0 + e * batches * 0.05 + b * 0.05
                    f.write(f"{r},{e},{b},{b % 2},{t:.6f},{t + 0.08:.6f},{t + 0.03:.6f},"
                            f"{t + 0.081:.6f},{t + 0.09:.6f},{t + 0.089:.6f},196736,16,"
                            f"{1795224176.0 + e * batches * 0.05:.6f},2,2,0,0\n")


def interrupt_writing(argv, watch, sig):
    """Runs argv, sends sig once a temporary file shows in folder watch; (status, stderr)."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                         cwd=ROOT)
    t0 = time.time()
    while time.time() - t0 < 120 and p.poll() is None:
        if os.path.isdir(watch) and any(".tmp" in n for n in os.listdir(watch)):
            p.send_signal(sig)
            break
        time.sleep(0.002)
    return p.wait(60), p.communicate()[1]


with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(tmp, "big.csv")
    big_tidy(src, 16, 3000)
    out = os.path.join(tmp, "ds")
    os.mkdir(out)
    old = {n: str(i) for i, n in enumerate(["big.csv", "big_simp_fetchdifftime.csv"])}
    for n, v in old.items():
        with open(os.path.join(out, n), "w") as f:
            f.write(v)
    for sig in (signal.SIGTERM, signal.SIGINT):
        rc, err = interrupt_writing([PY, CONV, src, out], out, sig)
        now = {n: open(os.path.join(out, n)).read() for n in os.listdir(out)}
        check(rc == -sig and now == old and len(err.strip().splitlines()) == 1
              and "interrupted" in err,
              f"tidy_to_dsanalyzer, signal {sig} while writing: exit {rc}, {sorted(now)}, "
              f"stderr {err[-300:]!r}")
    ranks = []
    with open(src) as f:
        head = f.readline()
        files = {}
        for line in f:
            r = line.split(",", 1)[0]
            if r not in files:
                files[r] = open(os.path.join(tmp, f"r{r}.csv"), "w")
                files[r].write(head)
                ranks.append(os.path.join(tmp, f"r{r}.csv"))
            files[r].write(line)
        for fh in files.values():
            fh.close()
    MERGE = os.path.join(ROOT, "tools", "stallsim_capture.py")
    for sig in (signal.SIGTERM, signal.SIGINT):
        made = os.path.join(tmp, "new")
        rc, err = interrupt_writing([PY, MERGE, "merge", os.path.join(made, "m.csv")] + ranks,
                                    made, sig)
        check(rc == -sig and not os.path.exists(made) and len(err.strip().splitlines()) == 1
              and "interrupted" in err,
              f"merge, signal {sig} while writing: exit {rc}, "
              f"{os.listdir(made) if os.path.exists(made) else 'no folder'}, "
              f"stderr {err[-300:]!r}")
    # --salvage-cut writes OUT.cut first: interrupted before OUT.csv was replaced, the earlier
    # whole OUT.csv is not left marked cut.
    whole = os.path.join(tmp, "whole")
    os.mkdir(whole)
    with open(os.path.join(whole, "m.csv"), "w") as f:
        f.write("earlier\n")
    for r in ranks:
        with open(r + ".status", "w") as f:
            f.write("closed\n" if r != ranks[0] else "open\n")
    rc, err = interrupt_writing([PY, MERGE, "merge", "--salvage-cut", os.path.join(whole, "m.csv")]
                                + ranks, whole, signal.SIGINT)
    check(rc == -signal.SIGINT and sorted(os.listdir(whole)) == ["m.csv"]
          and open(os.path.join(whole, "m.csv")).read() == "earlier\n",
          f"merge --salvage-cut interrupted: exit {rc}, {sorted(os.listdir(whole))}")

sys.exit(1 if failures else 0)

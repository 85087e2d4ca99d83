#!/usr/bin/python3
"""Converts a tidy trace (docs/formats.md, `tidy`) into the research notebook's
three parsed CSVs (`dsanalyzer`: docs/formats.md, ../shared/SEED_SEMANTICS.md
section 2), laid out as tests/golden/seed-case1/input/ is:

  OUT/STEM.csv                         ,Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)
  OUT/STEM_simp_fetchdifftime.csv      ,Epoch,Index number,Fetch time (sec)_gpu0..
  OUT/STEM_simp_fetchstartdifftime.csv ,Epoch,Index number,Start time_gpu0..

one row per (epoch, batch) in the fetch files and per (epoch, batch, rank) in
the perf file, every epoch of the trace, labelled as the trace labels it. Per
rank r (GPU r) and batch k:

  Start time      = fetch_start            (text YYYY-MM-DD HH:MM:SS.ffffff, UTC)
  Fetch time      = fetch_end - fetch_start
  Time            = ready                  (when the loop got the batch)
  Training stall  = ready - request
  Iteration time  = iter_end - request

Times are carried exactly: the tidy text is read as decimals to the nearest
nanosecond (as stallsim's reader does, halves away from zero), and written
with 6 fractional digits, or 9 where the nanoseconds need them (the
notebook's timestamps allow 1 to 9). What the notebook's format has no
column for is not carried, and said so on stdout: worker ids, the loader's
settings (workers, prefetch, pin_memory, persistent), epoch_start,
compute_end, bytes, samples and the CPU columns.

With --ini, also OUT/STEM.ini: a scenario whose [trace] is the three files
(format = dsanalyzer, epoch = --epoch, default 1), the way configs/example.ini
points at the notebook's trace.

Usage: /usr/bin/python3 tools/tidy_to_dsanalyzer.py [--stem STEM] [--ini]
           [--epoch E] TRACE.csv|CAPTURE_FOLDER OUT_DIR
Standard library only. Bad input (a time past stallsim's clock limit of 4e9 s
included): one line on stderr, exit 2, nothing written; the files are written
under temporary names and renamed once all are: whole or not at all.
"""
import csv
import datetime
import decimal
import os
import signal
import sys

NS = 10**9
DROPPED = ("worker", "workers", "prefetch", "pin_memory", "persistent", "epoch_start",
           "compute_end", "bytes", "samples", "fetch_cpu", "fetch_wait", "turn_cpu", "next_cpu",
           "next_wait", "compute_cpu", "compute_wait", "post_cpu", "post_wait", "sync_cpu",
           "cores", "ranks_per_node")


CLOCK_LIMIT_S = 4_000_000_000


class Bad(Exception):
    pass


def to_ns(text, where):
    """Seconds as decimal text to integer nanoseconds, halves away from zero."""
    try:
        d = decimal.Decimal(text.strip())
    except decimal.InvalidOperation:
        raise Bad(f"{where}: '{text}' is not a time in seconds")
    if not d.is_finite() or d < 0:
        raise Bad(f"{where}: '{text}' is not a time in seconds")
    if d > CLOCK_LIMIT_S:  # stallsim's limit (include/stall/limits.h); stamp() ends at 9999
        raise Bad(f"{where}: '{text}' s is past the clock limit of {CLOCK_LIMIT_S} s")
    return int((d * NS).quantize(decimal.Decimal(1), rounding=decimal.ROUND_HALF_UP))


def stamp(ns):
    """The notebook's timestamp text of ns since the epoch (UTC, naive)."""
    t = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=ns // NS)
    frac = ns % NS
    digits = f"{frac // 1000:06d}" if frac % 1000 == 0 else f"{frac:09d}"
    return t.strftime("%Y-%m-%d %H:%M:%S") + "." + digits


def seconds(ns):
    """A duration in ns as decimal text, at least 6 fractional digits."""
    if ns < 0:
        raise ValueError(ns)
    s = f"{ns // NS}.{ns % NS:09d}"
    while s.endswith("0") and len(s.split(".")[1]) > 6:
        s = s[:-1]
    return s


def read_tidy(path):
    with open(path, newline="", encoding="utf-8-sig") as f:
        rows = csv.reader(f)
        try:
            header = next(rows)
        except StopIteration:
            raise Bad(f"{path}: empty file")
        need = ["rank", "epoch", "batch", "fetch_start", "fetch_end", "request", "ready",
                "iter_end"]
        col = {name: i for i, name in enumerate(header)}
        missing = [n for n in need if n not in col]
        if missing:
            raise Bad(f"{path}:1: not a tidy trace (no column {', '.join(missing)})")
        cells = {}
        for line, row in enumerate(rows, start=2):
            if not row:
                continue
            where = f"{path}:{line}"
            try:
                r, e, k = (int(row[col[n]]) for n in ("rank", "epoch", "batch"))
            except (ValueError, IndexError):
                raise Bad(f"{where}: rank, epoch and batch must be integers")
            t = {n: to_ns(row[col[n]], f"{where}:{col[n] + 1}") for n in need[3:]}
            if t["fetch_end"] < t["fetch_start"] or t["ready"] < t["request"] or \
                    t["iter_end"] < t["request"]:
                raise Bad(f"{where}: fetch_end before fetch_start, or ready or iter_end "
                          "before request")
            if (e, k, r) in cells:
                raise Bad(f"{where}: rank {r}, epoch {e}, batch {k} given twice")
            cells[(e, k, r)] = t
    dropped = [n for n in DROPPED if n in col]
    return cells, dropped


def convert(src, out_dir, stem, ini, epoch):
    path = os.path.join(src, "trace.csv") if os.path.isdir(src) else src
    if not os.path.isfile(path):
        raise Bad(f"{src}: no tidy trace there")
    cells, dropped = read_tidy(path)
    if not cells:
        raise Bad(f"{path}: no rows")
    epochs = sorted({e for e, _, _ in cells})
    ranks = sorted({r for _, _, r in cells})
    if ranks != list(range(len(ranks))):
        raise Bad(f"{path}: ranks are not 0..{len(ranks) - 1}")
    keys = sorted({(e, k) for e, k, _ in cells})
    for e, k in keys:
        for r in ranks:
            if (e, k, r) not in cells:
                raise Bad(f"{path}: epoch {e}, batch {k} has no row of rank {r}")
    made = []  # the folders made for OUT_DIR, outermost first: gone again if it fails
    d = os.path.abspath(out_dir)
    while not os.path.exists(d):
        made.insert(0, d)
        d = os.path.dirname(d)
    os.makedirs(out_dir, exist_ok=True)
    g = len(ranks)
    names = {"perf": f"{stem}.csv", "fetch": f"{stem}_simp_fetchdifftime.csv",
             "start": f"{stem}_simp_fetchstartdifftime.csv"}
    # Each file is written to a temporary name and renamed once all are written: an error
    # (or Ctrl-C) on the way leaves OUT_DIR as it was, not a file and a half.
    temps = {}

    def tmp(n):
        temps[n] = os.path.join(out_dir, f".{names[n]}.tmp{os.getpid()}")
        return temps[n]
    try:
        with open(tmp("fetch"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["", "Epoch", "Index number"] + [f"Fetch time (sec)_gpu{r}" for r in ranks])
            for i, (e, k) in enumerate(keys):
                w.writerow([i, e, k] + [seconds(cells[(e, k, r)]["fetch_end"] -
                                                cells[(e, k, r)]["fetch_start"]) for r in ranks])
        with open(tmp("start"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["", "Epoch", "Index number"] + [f"Start time_gpu{r}" for r in ranks])
            for i, (e, k) in enumerate(keys):
                w.writerow([i, e, k] + [stamp(cells[(e, k, r)]["fetch_start"]) for r in ranks])
        with open(tmp("perf"), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(["", "Epoch", "Step", "GPU", "Time", "Iteration time (sec)",
                        "Training stall time (sec)"])
            i = 0
            for e, k in keys:
                for r in ranks:
                    t = cells[(e, k, r)]
                    w.writerow([i, e, k, r, stamp(t["ready"]),
                                seconds(t["iter_end"] - t["request"]),
                                seconds(t["ready"] - t["request"])])
                    i += 1
        if ini:
            names["ini"] = f"{stem}.ini"
            with open(tmp("ini"), "w") as f:
                f.write(f"; {path} in the notebook's format, by tools/tidy_to_dsanalyzer.py\n"
                        f"[trace]\nformat = dsanalyzer\nfetch = {names['fetch']}\n"
                        f"start = {names['start']}\nperf = {names['perf']}\nepoch = {epoch}\n")
        # No signal between the renames: all the new files or none (a Ctrl-C, held, comes
        # after them).
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            for n, t in temps.items():
                os.replace(t, os.path.join(out_dir, names[n]))
            temps.clear()
            convert.done = True
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
    finally:
        for t in temps.values():
            if os.path.exists(t):
                os.remove(t)
        for d in reversed(made if temps else []):
            try:
                os.rmdir(d)
            except OSError:
                pass
    written = [os.path.join(out_dir, names[n]) for n in ("perf", "fetch", "start", "ini")
               if n in names]
    print(f"{path}: {len(epochs)} epochs x {len(keys) // len(epochs)} batches x {g} GPUs "
          f"(epochs {epochs[0]}..{epochs[-1]}) written to {', '.join(written)}")
    if dropped:
        print("not carried (the notebook's format has no column for them): " +
              ", ".join(dropped))
    return written


def main(argv):
    stem, ini, epoch, pos = None, False, 1, []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--stem", "--epoch") and i + 1 < len(argv):
            if a == "--stem":
                stem = argv[i + 1]
            else:
                try:
                    epoch = int(argv[i + 1])
                except ValueError:
                    raise Bad(f"--epoch: '{argv[i + 1]}' is not an integer")
            i += 2
            continue
        if a == "--ini":
            ini = True
        elif a.startswith("-") and a != "-":
            raise Bad(f"unknown option {a} (usage: tidy_to_dsanalyzer.py [--stem STEM] [--ini] "
                      "[--epoch E] TRACE.csv|FOLDER OUT_DIR)")
        else:
            pos.append(a)
        i += 1
    if len(pos) != 2:
        raise Bad("usage: tidy_to_dsanalyzer.py [--stem STEM] [--ini] [--epoch E] "
                  "TRACE.csv|FOLDER OUT_DIR")
    src, out = pos
    if stem is None:  # the file's stem, or its folder's name for trace.csv (w1)
        base = os.path.abspath(src)
        if os.path.isdir(src) or os.path.basename(base) == "trace.csv":
            base = base if os.path.isdir(src) else os.path.dirname(base)
        stem = os.path.splitext(os.path.basename(base))[0]
    convert(src, out, stem, ini, epoch)


def _on_interrupt(sig, frame):
    """Ctrl-C and SIGTERM: KeyboardInterrupt, whose clean-up (the temporary files removed) a
    further signal does not cut short."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _on_interrupt.sig = sig
    raise KeyboardInterrupt


convert.done = False

if __name__ == "__main__":
    _on_interrupt.sig = signal.SIGINT
    signal.signal(signal.SIGINT, _on_interrupt)
    signal.signal(signal.SIGTERM, _on_interrupt)
    try:
        main(sys.argv[1:])
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # written: a signal now ends it as usual
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    except KeyboardInterrupt:
        print("tidy_to_dsanalyzer: interrupted; " + ("its files were all written" if convert.done
              else "OUT_DIR left as it was"), file=sys.stderr)
        sys.stderr.flush()
        signal.signal(_on_interrupt.sig, signal.SIG_DFL)
        os.kill(os.getpid(), _on_interrupt.sig)
    except (Bad, OSError) as exc:
        print(f"tidy_to_dsanalyzer: {exc}", file=sys.stderr)
        sys.exit(2)

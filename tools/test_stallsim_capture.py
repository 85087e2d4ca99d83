#!/usr/bin/env python3
"""Tests for stallsim_capture (CPU, a few seconds): /usr/bin/python3 tools/test_stallsim_capture.py"""

import atexit
import csv
import decimal
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import torch

# Every folder the tests make (tempfile.mkdtemp here, and in the processes
# they start, through TMPDIR) lies in one, removed when the tests end: each
# run left some 20 folders of traces in /tmp.
_TOP = tempfile.mkdtemp(prefix="stallsim_capture_test_")
atexit.register(shutil.rmtree, _TOP, True)
tempfile.tempdir = _TOP
os.environ["TMPDIR"] = _TOP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stallsim_capture as sc  # noqa: E402


class Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 40

    def __getitem__(self, i):
        time.sleep(0.001)
        return torch.tensor([float(i)]), i * i


class Batched(Squares):
    """A dataset with its own __getitems__, which the wrapper must call."""

    calls = 0

    def __getitems__(self, idx):
        Batched.calls += 1
        return [self[i] for i in idx]


def spin_cpu(seconds):
    """Busy work of exactly `seconds` of this thread's CPU time (however loaded the machine)."""
    t0 = time.thread_time()
    while time.thread_time() - t0 < seconds:
        pass


class Sleeping(torch.utils.data.Dataset):
    """Each sample sleeps 10 ms: a fetch that waits, not one that computes."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        time.sleep(0.010)
        return torch.tensor([float(i)]), i * i


class Spinning(torch.utils.data.Dataset):
    """Each sample costs 2 ms of CPU time in the worker."""

    def __len__(self):
        return 16

    def __getitem__(self, i):
        spin_cpu(0.002)
        return torch.tensor([float(i)]), i * i


def rows_of(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


class CaptureTest(unittest.TestCase):
    def run_loader(self, workers, epochs=2, dataset=None, stop_after=None, call_marks=True, **kw):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "trace_rank0.csv")
        rec = sc.Recorder(rank=0, path=path)
        ds = dataset or Squares()
        extra = dict(prefetch_factor=2) if workers else {}
        loader = rec.dataloader(ds, batch_size=4, shuffle=True, num_workers=workers, **extra, **kw)
        seen = []
        for _ in range(epochs):
            for k, (x, y) in enumerate(loader):
                # the loop gets the user's batch, untouched
                self.assertEqual(x.shape, (4, 1))
                self.assertTrue(torch.equal(y, (x[:, 0] ** 2).long()))
                seen.append(x[:, 0].tolist())
                if call_marks:
                    rec.compute_end()
                    rec.iter_end()
                if stop_after is not None and k + 1 == stop_after:
                    break
        rec.close()
        merged = os.path.join(d, "trace.csv")
        sc.merge(merged, [path])
        return merged, rows_of(merged), seen, loader

    def test_header_is_tidy_and_times_consistent(self):
        for workers in (0, 2):
            merged, rows, _, _ = self.run_loader(workers)
            with open(merged) as fh:
                self.assertTrue(fh.readline().startswith(
                    "rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,"))
            self.assertEqual(len(rows), 20)
            bad, times = sc.check(merged)
            self.assertEqual(bad, [], f"workers={workers}")
            self.assertEqual(len(times), 2)
            self.assertEqual([int(r["batch"]) for r in rows[:10]], list(range(10)))
            ws = {int(r["worker"]) for r in rows}
            self.assertEqual(ws, {-1} if workers == 0 else {0, 1})
            if workers == 2:  # round robin: batch k goes to worker k mod 2
                self.assertTrue(all(int(r["worker"]) == int(r["batch"]) % 2 for r in rows))
            self.assertTrue(all(r["samples"] == "4" and r["bytes"] == str(4 * 4 + 4 * 8)
                                for r in rows))

    def test_dataset_getitems_is_used(self):
        for workers in (0, 2):
            _, rows, _, _ = self.run_loader(workers, dataset=Batched())
            self.assertEqual(len(rows), 20)
        self.assertEqual(Batched.calls, 20)  # counted in this process: the workers=0 run

    def test_break_and_missing_marks(self):
        merged, rows, _, _ = self.run_loader(2, stop_after=3, call_marks=False)
        self.assertEqual(len(rows), 6)
        bad, _ = sc.check(merged)
        self.assertEqual(bad, [])
        self.assertTrue(all(r["compute_end"] == "" for r in rows))
        # without marks, an iteration ends when the loop asks for the next batch
        by = {(r["epoch"], int(r["batch"])): r for r in rows}
        self.assertEqual(by[("0", 0)]["iter_end"], by[("0", 1)]["request"])

    def test_check_without_compute_end_prints_no_nan(self):
        # a loop that never calls compute_end: check printed "compute nan, post nan"
        merged, _, _, _ = self.run_loader(2, call_marks=False)
        p = subprocess.run([sys.executable, sc.__file__, "check", merged],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertNotIn("nan", p.stdout)
        self.assertIn("compute -, post -, iter ", p.stdout)

    def test_break_ends_the_epoch_when_the_loop_is_left(self):
        # Without iter_end, a break used to leave the epoch open until the next iter(loader) or
        # close(): its last iteration ran on through what the script did in between (here a
        # 0.3 s sleep, e.g. an evaluation) and the rows stayed unwritten.
        for workers in (0, 2):
            d = tempfile.mkdtemp()
            path = os.path.join(d, "trace_rank0.csv")
            rec = sc.Recorder(rank=0, path=path)
            loader = rec.dataloader(Squares(), batch_size=4, num_workers=workers)
            for k, _ in enumerate(loader):
                if k == 2:
                    break
            left = sc.now()
            self.assertEqual(len(rows_of(path)), 3, f"workers={workers}: written at the break")
            time.sleep(0.3)
            for _ in loader:
                rec.iter_end()
            rec.close()
            rows = rows_of(path)
            last = max(float(r["iter_end"]) for r in rows if r["epoch"] == "0")
            self.assertLessEqual(last, left, f"workers={workers}: the last iteration ends at "
                                 "the break")

    def test_loader_exposes_user_objects(self):
        ds = Squares()
        _, _, _, loader = self.run_loader(0, epochs=1, dataset=ds)
        self.assertIs(loader.dataset, ds)
        self.assertIsInstance(loader.sampler, torch.utils.data.RandomSampler)
        self.assertEqual(len(loader), 10)

    def test_a_second_loader_on_one_recorder(self):
        # A validation loader built by the training loader's recorder used to be recorded as
        # further epochs, and its settings relabelled the training rows written after it
        # ('worker' is 1 but 'workers' is 0): a trace stallsim refused, far from the cause.
        d = tempfile.mkdtemp()
        rec = sc.Recorder(rank=0, path=os.path.join(d, "trace_rank0.csv"))
        train = Squares()
        rec.dataloader(train, batch_size=4, num_workers=2)
        for ds, kw in ((Squares(), dict(num_workers=2)), (train, dict(num_workers=0))):
            with self.assertRaisesRegex(ValueError, "already records a DataLoader.*own Recorder"):
                rec.dataloader(ds, batch_size=4, **kw)
        self.assertEqual(rec.workers, 2)
        # the same loader rebuilt (each epoch) records one run
        loader = rec.dataloader(train, batch_size=4, num_workers=2)
        for _ in loader:
            rec.iter_end()
        rec.close()
        self.assertTrue(all(r["workers"] == "2" for r in rows_of(rec.path)))

    def test_a_sampler_without_set_epoch_is_said(self):
        # DistributedSampler without set_epoch reads the same order every epoch: the capture
        # says so once (the trace itself is valid); with set_epoch, or after a peek that left
        # an epoch early, it says nothing.
        import contextlib
        import io
        from torch.utils.data.distributed import DistributedSampler

        def run(set_epoch, peek=False, epochs=3):
            d = tempfile.mkdtemp()
            rec = sc.Recorder(rank=0, path=os.path.join(d, "trace_rank0.csv"))
            ds = Squares()
            sampler = DistributedSampler(ds, num_replicas=1, rank=0, shuffle=True, seed=0)
            loader = rec.dataloader(ds, batch_size=4, sampler=sampler, num_workers=0)
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                if peek:
                    next(iter(loader))
                for epoch in range(epochs):
                    if set_epoch:
                        sampler.set_epoch(epoch)
                    for _ in loader:
                        rec.iter_end()
            rec.close()
            return err.getvalue()

        said = run(False)
        self.assertEqual(said.count("set_epoch() was not called"), 1, said)
        self.assertIn("its epoch is still 0", said)
        self.assertEqual(run(True), "")
        self.assertEqual(run(True, peek=True), "")

    def test_merge_sorts_ranks(self):
        d = tempfile.mkdtemp()
        paths = []
        for r in (1, 0):
            p = os.path.join(d, f"trace_rank{r}.csv")
            rec = sc.Recorder(rank=r, path=p)
            loader = rec.dataloader(Squares(), batch_size=8)
            for _ in loader:
                rec.iter_end()
            rec.close()
            paths.append(p)
        out = os.path.join(d, "m.csv")
        sc.merge(out, paths)
        keys = [(int(r["epoch"]), int(r["batch"]), int(r["rank"])) for r in rows_of(out)]
        self.assertEqual(keys, sorted(keys))
        self.assertEqual(len(keys), 10)


class EpochsCutShortTest(unittest.TestCase):
    """merge leaves out the epochs the loop left early: a peek, Ctrl-C."""

    def record(self, d, rank, peek=False, stop_in=None, epochs=2):
        path = os.path.join(d, f"trace_rank{rank}.csv")
        rec = sc.Recorder(rank=rank, path=path)
        loader = rec.dataloader(Squares(), batch_size=8, num_workers=0)
        if peek:
            next(iter(loader))  # a look at one batch before training
        try:
            for e in range(epochs):
                for k, _ in enumerate(loader):
                    rec.compute_end()
                    rec.iter_end()
                    if (e, k) == stop_in:
                        raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        rec.close()
        return path

    def merged(self, paths):
        out = os.path.join(os.path.dirname(paths[0]), "trace.csv")
        p = subprocess.run([sys.executable, sc.__file__, "merge", out, *paths],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(sc.check(out)[0], [])
        return out, p.stdout

    def test_a_peek_before_training(self):
        # next(iter(loader)) made an epoch 0 of one batch, without compute_end, and stallsim
        # refused the whole trace ("'compute_end' is not empty here but empty on line 2").
        d = tempfile.mkdtemp()
        out, said = self.merged([self.record(d, 0, peek=True), self.record(d, 1)])
        self.assertIn("rank 0 epoch 0 (1 of 5 batches)", said)
        rows = rows_of(out)
        self.assertEqual(len(rows), 2 * 2 * 5)
        self.assertTrue(all(r["compute_end"] for r in rows))
        # rank 0's training epochs 1 and 2 are the trace's 0 and 1, beside rank 1's
        self.assertEqual(sorted({r["epoch"] for r in rows}), ["0", "1"])

    def test_ctrl_c_in_an_epoch_keeps_the_finished_ones(self):
        d = tempfile.mkdtemp()
        out, said = self.merged([self.record(d, 0, stop_in=(1, 2), epochs=3),
                                 self.record(d, 1, epochs=3)])
        self.assertIn("rank 0 epoch 1 (3 of 5 batches)", said)
        self.assertIn("keep 1 complete epoch(s)", said)
        self.assertEqual(len(rows_of(out)), 2 * 5)

    def test_epochs_of_equal_breaks_are_kept(self):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "trace_rank0.csv")
        rec = sc.Recorder(rank=0, path=path)
        loader = rec.dataloader(Squares(), batch_size=8)
        for _ in range(2):
            for k, _ in enumerate(loader):
                rec.iter_end()
                if k == 2:
                    break
        rec.close()
        out, said = self.merged([path])
        self.assertNotIn("left out", said)
        self.assertEqual(len(rows_of(out)), 6)


class CpuColumnsTest(unittest.TestCase):
    """The CPU columns: CPU time beside wall time, in the worker and in the training process."""

    def run_epochs(self, dataset, workers, ranks_per_node=None, epochs=2):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "trace_rank0.csv")
        rec = sc.Recorder(rank=0, path=path, ranks_per_node=ranks_per_node)
        extra = dict(prefetch_factor=2) if workers else {}
        loader = rec.dataloader(dataset, batch_size=4, num_workers=workers, **extra)
        for _ in range(epochs):
            for _ in loader:
                spin_cpu(0.005)         # "forward+backward": 5 ms of CPU
                rec.compute_end()
                spin_cpu(0.003)         # "all-reduce": 3 ms of CPU
                rec.sync_end()
                time.sleep(0.005)       # "optimizer step" that waits: no CPU
                rec.iter_end()
        rec.close()
        merged = os.path.join(d, "trace.csv")
        sc.merge(merged, [path])
        return merged, rows_of(merged)

    def test_header_has_the_cpu_columns(self):
        merged, rows = self.run_epochs(Squares(), 2, ranks_per_node=4, epochs=1)
        with open(merged) as fh:
            head = fh.readline().strip().split(",")
        self.assertEqual(head, sc.COLUMNS)
        self.assertEqual(head[-len(sc.CPU_COLUMNS):], sc.CPU_COLUMNS)
        self.assertEqual(sc.check(merged)[0], [])
        cores = len(os.sched_getaffinity(0))
        self.assertTrue(all(r["cores"] == str(cores) for r in rows))
        self.assertTrue(all(r["ranks_per_node"] == "4" for r in rows))

    def test_worker_cpu_is_measured(self):
        for workers in (0, 2):
            _, rows = self.run_epochs(Spinning(), workers)
            for r in rows:
                # 4 samples x 2 ms of CPU, spun in the process that fetched the batch
                self.assertGreaterEqual(float(r["fetch_cpu"]), 0.008, f"workers={workers}")
                wall = float(r["fetch_end"]) - float(r["fetch_start"])
                # all the worker's threads count (its queue's feeder thread may pickle the
                # previous batch meanwhile): at most every core for the whole fetch
                ncores = len(os.sched_getaffinity(0))
                self.assertLessEqual(float(r["fetch_cpu"]), ncores * wall + 0.002)
                self.assertGreaterEqual(float(r["fetch_wait"]), 0.0)
            if workers == 2:
                # turn_cpu: empty for each worker's first batch of an epoch, measured after it
                first = [r for r in rows if int(r["batch"]) < 2]
                later = [r for r in rows if int(r["batch"]) >= 2]
                self.assertTrue(all(r["turn_cpu"] == "" for r in first))
                self.assertTrue(all(r["turn_cpu"] != "" and float(r["turn_cpu"]) >= 0
                                    for r in later))

    def test_sleeping_fetch_takes_little_cpu(self):
        # 4 x 10 ms of sleep per batch: the worker's CPU time (collate, bookkeeping, about 1 ms
        # on an idle core, a few ms on a loaded one) stays well under the fetch's wall time.
        _, rows = self.run_epochs(Sleeping(), 2)
        cpu = sum(float(r["fetch_cpu"]) for r in rows) / len(rows)
        wall = sum(float(r["fetch_end"]) - float(r["fetch_start"]) for r in rows) / len(rows)
        self.assertLess(cpu, 0.5 * wall)

    def test_training_process_cpu(self):
        _, rows = self.run_epochs(Squares(), 2)
        for r in rows:
            self.assertGreaterEqual(float(r["compute_cpu"]), 0.005)   # the 5 ms spin
            self.assertGreaterEqual(float(r["sync_cpu"]), 0.003)      # the 3 ms spin
            self.assertGreaterEqual(float(r["post_cpu"]), float(r["sync_cpu"]))
            self.assertGreaterEqual(float(r["next_cpu"]), 0.0)
            for c in ("next_wait", "compute_wait", "post_wait"):
                self.assertGreaterEqual(float(r[c]), 0.0)
        # the rest of the tail, a 5 ms sleep, takes little CPU (on average: a row can catch the
        # loader's own threads)
        rest = [float(r["post_cpu"]) - float(r["sync_cpu"]) for r in rows]
        self.assertLess(sum(rest) / len(rest), 0.0025)

    def test_check_refuses_a_negative_cpu_time(self):
        merged, rows = self.run_epochs(Squares(), 0, epochs=1)
        with open(merged) as fh:
            text = fh.read().splitlines()
        head = text[0].split(",")
        cells = text[1].split(",")
        cells[head.index("compute_cpu")] = "-0.001"
        text[1] = ",".join(cells)
        with open(merged, "w") as fh:
            fh.write("\n".join(text) + "\n")
        bad, _ = sc.check(merged)
        col = head.index("compute_cpu") + 1
        self.assertEqual(bad, [f"{merged}:2:{col}: 'compute_cpu': not a CPU time in seconds "
                               "(0 to 1e6): \"-0.001\""])


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DDP2 = os.path.join(ROOT, "traces", "ddp2_w2", "trace.csv")  # 2 ranks, 2 workers, real capture
STALLSIM = os.environ.get("STALLSIM", os.path.join(ROOT, "build", "stallsim"))


def stallsim_reader(path):
    """stallsim's own verdict on a trace: None when it reads it, else its error line
    (FILE:LINE:COLUMN: ...); skipped (returns "skip") without a built binary."""
    if not os.access(STALLSIM, os.X_OK):
        return "skip"
    out = tempfile.mkdtemp()
    p = subprocess.run([STALLSIM, "validate", path, "-o", out, "-q"], capture_output=True,
                       text=True)
    errs = [ln[len("stallsim: "):] for ln in p.stderr.splitlines()
            if ln.startswith("stallsim: ") and "a tidy trace; assumed" not in ln]
    if p.returncode == 0:
        return None
    return errs[0] if errs else f"exit {p.returncode}"


def edited(lines, line, column, value):
    """A copy of the trace's lines with the field at (1-based) line and column set to value."""
    out = list(lines)
    f = out[line - 1].split(",")
    f[column - 1] = value
    out[line - 1] = ",".join(f)
    return out


def write(lines, name):
    d = tempfile.mkdtemp()
    path = os.path.join(d, name)
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


class CheckAgreesWithStallsimTest(unittest.TestCase):
    """`check` rejects what stallsim's reader rejects, with its message, and accepts what it
    accepts (docs/formats.md): each case runs both on the same file."""

    @classmethod
    def setUpClass(cls):
        with open(DDP2) as fh:
            cls.lines = fh.read().splitlines()
        cls.head = cls.lines[0].split(",")

    def col(self, name):
        return self.head.index(name) + 1

    def agree(self, lines, name, expect):
        """expect: None (valid) or the text after FILE: of the one problem both must report."""
        path = write(lines, name)
        bad, _ = sc.check(path)
        want = [] if expect is None else [f"{path}:{expect}"]
        self.assertEqual(bad, want)
        rc = subprocess.run([sys.executable, sc.__file__, "check", path],
                            capture_output=True, text=True).returncode
        self.assertEqual(rc, 0 if expect is None else 1)
        got = stallsim_reader(path)
        if got != "skip":
            self.assertEqual(got, None if expect is None else want[0])
        return path

    def test_the_shipped_trace_is_valid(self):
        self.agree(self.lines, "plain.csv", None)

    def test_a_row_past_64_columns(self):
        # stallsim's reader stops at 64 columns; check said "row has 70 fields, the header 17"
        lines = list(self.lines)
        lines[3] = lines[3] + "," * (70 - len(self.head))
        self.agree(lines, "wide.csv", "4:65: more than 64 columns")

    def test_a_worker_id_beyond_workers(self):
        # line 4 is rank 0, batch 1 (worker 1)
        c = self.col("worker")
        self.agree(edited(self.lines, 4, c, "9"), "w9.csv",
                   f"4:{c}: 'worker' is 9 but 'workers' is 2 (ids run from 0 to 1)")

    def test_a_prefetch_of_0_with_workers(self):
        # a capture writes 0 only without workers; it once ran as prefetch 2, the note
        # saying "prefetch factor from its prefetch column"
        lines = list(self.lines)
        c = self.col("prefetch")
        for i in range(2, len(lines) + 1):
            lines = edited(lines, i, c, "0")
        self.agree(lines, "pf0.csv", f"2:{c}: 'prefetch' is 0 but 'workers' is 2 (a DataLoader "
                   "with workers prefetches prefetch_factor >= 1 batches each; 0 is for a loader "
                   "without workers)")

    def test_a_negative_byte_count(self):
        c = self.col("bytes")
        self.agree(edited(self.lines, 4, c, "-5"), "bytes.csv",
                   f"4:{c}: 'bytes': not a byte count: \"-5\"")

    def test_a_request_before_the_previous_iter_end(self):
        # rank 0's batch 1 (line 4) requested 1 ms before its batch 0 (line 2) ended
        c = self.col("request")
        prev_end = decimal.Decimal(self.lines[1].split(",")[self.col("iter_end") - 1])
        lines = edited(self.lines, 4, c, str(prev_end - decimal.Decimal("0.001")))
        self.agree(lines, "request.csv",
                   f"4:{c}: 'request' is before the 'iter_end' of rank 0's previous batch on "
                   "line 2 (batches must follow each other)")

    def test_durations_past_the_limit(self):
        # a fetch, or the rest of an iteration, of more than 1e6 s (docs/limits.md): the
        # tidy reader took them (a docs audit's finding; the notebook's CSVs refused them)
        d = decimal.Decimal
        f = self.lines[1].split(",")
        c = self.col("fetch_start")
        start = d(f[self.col("fetch_end") - 1]) - d("1000000.5")
        self.agree(edited(self.lines, 2, c, str(start)), "fetch_long.csv",
                   f"2:{self.col('fetch_end')}: 'fetch_end': the fetch takes 1000000.500000 s, "
                   "more than the duration limit of 1e6 s")
        c = self.col("iter_end")
        end = d(f[self.col("ready") - 1]) + d("1000001")
        self.agree(edited(self.lines, 2, c, str(end)), "iter_long.csv",
                   f"2:{c}: 'iter_end': the iteration takes 1000001.000000 s after 'ready', more "
                   "than the duration limit of 1e6 s")

    def test_exponent_notation_is_accepted_and_reads_the_same(self):
        times = {"fetch_start", "fetch_end", "request", "ready", "iter_end", "compute_end",
                 "epoch_start", "bytes"}
        lines = [self.lines[0]]
        for ln in self.lines[1:]:
            f = ln.split(",")
            f = [f"{float(v):.15e}" if h in times and v else v
                 for h, v in zip(self.head, f)]
            lines.append(",".join(f))
        self.assertIn("e+09", lines[1])
        path = self.agree(lines, "expo.csv", None)
        self.assertEqual(sc.check(path)[1], sc.check(DDP2)[1])
        self.assertEqual(sc.summary(path), sc.summary(DDP2))

    def test_invalid_values_in_exponent_notation_are_refused(self):
        c = self.col("iter_end")
        self.agree(edited(self.lines, 4, c, "1e400"), "huge.csv",
                   f"4:{c}: 'iter_end': 1e400 s is past the clock limit of 4000000000 s")
        c = self.col("fetch_start")
        self.agree(edited(self.lines, 4, c, "-1e-3"), "neg.csv",
                   f"4:{c}: 'fetch_start': negative time \"-1e-3\"")
        self.agree(edited(self.lines, 4, c, "nan"), "nan.csv",
                   f"4:{c}: 'fetch_start': not a time in seconds: \"nan\"")
        c = self.col("samples")
        self.agree(edited(self.lines, 4, c, "1.65e1"), "samples.csv",
                   f"4:{c}: 'samples': not an integer: \"1.65e1\"")


class MergeRefusesTest(unittest.TestCase):
    """merge writes one run's ranks, each once, or nothing."""

    def setUp(self):
        self.d = tempfile.mkdtemp()

    def split(self, trace, tag):
        """The trace's per-rank files."""
        with open(trace) as fh:
            lines = fh.read().splitlines()
        out = []
        for r in ("0", "1"):
            p = os.path.join(self.d, f"{tag}_rank{r}.csv")
            with open(p, "w") as fh:
                fh.write("\n".join([lines[0]] + [ln for ln in lines[1:]
                                                 if ln.split(",")[0] == r]) + "\n")
            out.append(p)
        return out

    def merge_cli(self, *paths):
        out = os.path.join(self.d, "out.csv")
        p = subprocess.run([sys.executable, sc.__file__, "merge", out, *paths],
                           capture_output=True, text=True)
        return p, out

    def test_the_ranks_of_one_run_merge_back_to_the_trace(self):
        r0, r1 = self.split(DDP2, "a")
        p, out = self.merge_cli(r1, r0)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(out) as a, open(DDP2) as b:
            self.assertEqual(a.read(), b.read())

    def refused(self, paths, words):
        p, out = self.merge_cli(*paths)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        for w in words:
            self.assertIn(w, p.stderr)
        self.assertFalse(os.path.exists(out))
        self.assertEqual([f for f in os.listdir(self.d) if f.startswith("out.csv")], [])

    def test_the_same_rank_file_twice(self):
        r0, _ = self.split(DDP2, "a")
        self.refused([r0, r0], ["rank 0 is also in", "the same file given twice"])

    def test_a_rank_file_with_another_runs_trace(self):
        r0, _ = self.split(DDP2, "a")
        self.refused([r0, os.path.join(ROOT, "traces", "ddp2_straggler", "trace.csv")],
                     ["rank 0 is also in"])

    def test_rank_files_of_different_runs(self):
        r0, _ = self.split(DDP2, "a")
        _, r1 = self.split(os.path.join(ROOT, "traces", "ddp2_straggler", "trace.csv"), "b")
        self.refused([r0, r1], ["than either lasts", "different runs"])

    def test_an_existing_output_is_left_as_it_was(self):
        r0, _ = self.split(DDP2, "a")
        out = os.path.join(self.d, "out.csv")
        with open(out, "w") as fh:
            fh.write("before\n")
        p, _ = self.merge_cli(r0, r0)
        self.assertEqual(p.returncode, 1)
        with open(out) as fh:
            self.assertEqual(fh.read(), "before\n")

    def test_a_rank_file_without_rows(self):
        # a rank whose loop used no loader of rec.dataloader(): close() wrote the header alone,
        # and merge made a one-rank trace of a two-rank run without a word
        r0, r1 = self.split(DDP2, "a")
        with open(r0) as fh:
            head = fh.readline()
        with open(r1, "w") as fh:
            fh.write(head)
        self.refused([r0, r1], [f"{r1}: no rows", "rec.dataloader()"])

    def test_an_empty_rank_file(self):
        r0, r1 = self.split(DDP2, "a")
        open(r1, "w").close()
        self.refused([r0, r1], [f"{r1}: empty file"])

    def test_a_rank_file_cut_short(self):
        # a rank killed while writing: its last line lost fields (merge wrote a row of empty
        # fields, which check then named in the merged file) or only its newline and a digit
        # or two of the last value (merge took the cut value as it was)
        r0, r1 = self.split(DDP2, "a")
        with open(r1) as fh:
            text = fh.read()
        n = text.count("\n")
        for cut in (150, 2):
            with open(r1, "w") as fh:
                fh.write(text[:-cut])
            self.refused([r0, r1], [f"{r1}:{n}: the last line", "no newline", "delete that line"])

    def test_a_rank_missing(self):
        # ranks 1 alone, or 0 and 2: merged without a word, then refused by check
        _, r1 = self.split(DDP2, "a")
        self.refused([r1], ["rank 0 is missing", "give every rank's file"])


# A real training run in a process of its own: a tiny model over a DataLoader with 2 workers,
# 2 epochs of 5 batches, rec.close() after the loop. FAIL_AT: the sample whose fetch raises in
# its worker (the run dies with the traceback); BREAK_AT: the batch after which the loop breaks;
# KILL_AT: the (epoch, batch) at which the process is killed (SIGKILL: no Python runs after it).
RUN = """
import os, signal, sys, torch
sys.path.insert(0, {tools!r})
import stallsim_capture as sc

class Data(torch.utils.data.Dataset):
    def __len__(self):
        return 40
    def __getitem__(self, i):
        if i == {fail_at}:
            raise RuntimeError("a sample that cannot be read")
        return torch.full((4,), float(i)), i % 2

rec = sc.Recorder(rank=0, path={path!r})
loader = rec.dataloader(Data(), batch_size=8, num_workers=2, multiprocessing_context="fork")
model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for k, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        rec.compute_end()
        opt.step()
        rec.iter_end()
        if k == {break_at}:
            break
        if (epoch, k) == {kill_at}:
            os.kill(os.getpid(), signal.SIGKILL)
rec.close()
"""


class RunClosedTest(unittest.TestCase):
    """merge takes a rank file whose run ended with rec.close(), and refuses one that crashed
    (unless told to salvage it, and then says the trace is cut)."""

    def run_training(self, fail_at=-1, break_at=-1, kill_at=None):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "trace_rank0.csv")
        script = os.path.join(d, "train.py")
        with open(script, "w") as fh:
            fh.write(RUN.format(tools=os.path.dirname(sc.__file__), path=path, fail_at=fail_at,
                                break_at=break_at, kill_at=kill_at))
        p = subprocess.run([sys.executable, script], capture_output=True, text=True)
        return p, path

    def merge_cli(self, path, *opts):
        out = os.path.join(os.path.dirname(path), "trace.csv")
        p = subprocess.run([sys.executable, sc.__file__, "merge", *opts, out, path],
                           capture_output=True, text=True)
        return p, out

    def test_a_worker_that_raises_in_the_first_epoch_is_refused_or_salvaged_as_cut(self):
        # the run died in its first epoch: merge made a short trace of its 2 batches that
        # looked like a whole run's (what a break leaves), and check took it
        run, path = self.run_training(fail_at=20)  # batch 2 of epoch 0
        self.assertNotEqual(run.returncode, 0, run.stderr)
        self.assertIn("a sample that cannot be read", run.stderr)
        self.assertEqual(len(rows_of(path)), 2)  # the rows it wrote as the loop was left
        p, out = self.merge_cli(path)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertEqual(len(p.stderr.strip().splitlines()), 1, p.stderr)
        for w in (f"{path}: the run did not close", "crashed or was killed before rec.close()",
                  sc.SALVAGE_OPTION, "nothing written"):
            self.assertIn(w, p.stderr)
        self.assertEqual(sorted(os.listdir(os.path.dirname(path))),
                         ["trace_rank0.csv", "trace_rank0.csv.status", "train.py"])
        p, out = self.merge_cli(path, sc.SALVAGE_OPTION)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(f"the trace is marked cut ({out}.cut)", p.stdout)
        self.assertEqual(len(rows_of(out)), 2)
        with open(out + ".cut") as fh:
            self.assertIn(f"{path}: the run did not close", fh.read())
        c = subprocess.run([sys.executable, sc.__file__, "check", out],
                           capture_output=True, text=True)
        self.assertEqual(c.returncode, 0, c.stdout)
        self.assertIn(f"{out}.cut: cut: merged with {sc.SALVAGE_OPTION}", c.stdout)
        # merged again from a closed run, the trace loses its stale mark
        with open(path + ".status", "w") as fh:
            fh.write("closed\n")
        p, out = self.merge_cli(path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(out + ".cut"))

    def test_a_killed_run_is_refused_or_salvaged_as_cut(self):
        run, path = self.run_training(kill_at=(1, 2))
        self.assertEqual(run.returncode, -9, run.stderr)
        self.assertEqual(len(rows_of(path)), 5)  # epoch 0; epoch 1 was never written
        p, out = self.merge_cli(path)
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn(f"{path}: the run did not close (trace_rank0.csv.status says 'open')",
                      p.stderr)
        self.assertFalse(os.path.exists(out))
        p, out = self.merge_cli(path, sc.SALVAGE_OPTION)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("the trace is marked cut", p.stdout)
        self.assertEqual(len(rows_of(out)), 5)
        # stallsim reads the salvaged trace (its finished epoch) and says it is cut
        if not os.access(STALLSIM, os.X_OK):
            self.skipTest(f"no stallsim binary at {STALLSIM}")
        v = subprocess.run([STALLSIM, "validate", out, "-o", os.path.join(tempfile.mkdtemp(),
                            "v"), "-q"], capture_output=True, text=True)
        self.assertEqual(v.returncode, 0, v.stderr)
        self.assertIn(f"stallsim: warning: {out}: merged from rank files whose run did not "
                      f"close (crashed or killed)", v.stderr)
        self.assertIn(f"({out}.cut: cut: merged with {sc.SALVAGE_OPTION}: {path}", v.stderr)

    def test_a_run_that_closed_merges(self):
        run, path = self.run_training()
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(path + ".status") as fh:
            self.assertEqual(fh.read(), "closed\n")
        p, out = self.merge_cli(path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("cut", p.stdout)
        self.assertNotIn("status", p.stdout)
        self.assertFalse(os.path.exists(out + ".cut"))
        self.assertEqual(len(rows_of(out)), 10)
        self.assertEqual(sc.check(out)[0], [])

    def test_a_break_then_close_merges(self):
        # a deliberate break in the first epoch leaves the same rows as a crash there: only
        # rec.close() after it tells them apart
        run, path = self.run_training(break_at=1)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(path + ".status") as fh:
            self.assertEqual(fh.read(), "closed\n")
        p, out = self.merge_cli(path)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("cut", p.stdout)
        self.assertEqual(len(rows_of(out)), 4)  # batches 0 and 1 of both epochs
        self.assertEqual(sc.check(out)[0], [])

    def loop_then_raise(self, close_each, close_in_finally):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "trace_rank0.csv")
        rec = sc.Recorder(rank=0, path=path)
        loader = rec.dataloader(Squares(), batch_size=8)
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err), self.assertRaises(KeyError):
            try:
                for epoch in range(2):
                    for k, _ in enumerate(loader):
                        rec.iter_end()
                        if (epoch, k) == (1, 2):
                            raise KeyError("the loop failed")
                    if close_each:
                        rec.close()
            finally:
                if close_in_finally:
                    rec.close()
        return path, err.getvalue()

    def test_a_close_in_finally_or_before_the_crash_does_not_close_the_run(self):
        # rec.close() in a `finally` ran on the way out of a crash, and a close() after each
        # epoch left its "closed" from before the epoch that crashed
        for close_each, close_in_finally in ((False, True), (True, False)):
            path, err = self.loop_then_raise(close_each, close_in_finally)
            with self.assertRaises(ValueError) as e:
                sc.merge(os.path.join(os.path.dirname(path), "trace.csv"), [path])
            self.assertIn("the run did not close", str(e.exception))
            self.assertEqual(sc._rank_status(path), "open", (close_each, close_in_finally))
            if close_in_finally:
                self.assertIn("rec.close() called while handling KeyError", err)

    def test_rank_files_of_an_older_tool_merge_as_given(self):
        # rank files with no status anywhere beside them: written before the status existed
        d = tempfile.mkdtemp()
        with open(DDP2) as fh:
            lines = fh.read().splitlines()
        paths = []
        for r in ("0", "1"):
            paths.append(os.path.join(d, f"trace_rank{r}.csv"))
            with open(paths[-1], "w") as fh:
                fh.write("\n".join([lines[0]] + [ln for ln in lines[1:]
                                                 if ln.split(",")[0] == r]) + "\n")
        out = os.path.join(d, "trace.csv")
        notes = []
        sc.merge(out, paths, notes)
        self.assertIn("whether the run ended with rec.close() cannot be told", notes[0])
        # but beside another rank's status, a rank file without one is refused
        with open(paths[0] + ".status", "w") as fh:
            fh.write("closed\n")
        with self.assertRaises(ValueError) as e:
            sc.merge(out, paths)
        self.assertIn(f"{paths[1]}: the run did not close (no trace_rank1.csv.status beside it)",
                      str(e.exception))


class RecorderMisuseTest(unittest.TestCase):
    """What a loop gets wrong is kept right, or said once with the loop's line."""

    def loop(self, body, epochs=2, close_each=False, stderr=None):
        d = tempfile.mkdtemp()
        path = os.path.join(d, "trace_rank0.csv")
        rec = sc.Recorder(rank=0, path=path)
        loader = rec.dataloader(Squares(), batch_size=8)
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            for _ in range(epochs):
                for _ in loader:
                    body(rec)
                if close_each:
                    rec.close()
            rec.close()
        return path, err.getvalue()

    def test_close_twice_or_each_epoch_keeps_every_epoch(self):
        # close() again reopened the file with "w": the second close left the header alone,
        # and a close() after each epoch kept only the last epoch
        def body(rec):
            rec.compute_end()
            rec.iter_end()
        for close_each in (False, True):
            path, err = self.loop(body, close_each=close_each)
            self.assertEqual(len(rows_of(path)), 2 * 5, f"close_each={close_each}")
            self.assertEqual(err, "")
            self.assertEqual(sc.check(self.merged(path))[0], [])

    def merged(self, path):
        out = os.path.join(os.path.dirname(path), "trace.csv")
        sc.merge(out, [path])
        return out

    def test_compute_end_twice_keeps_the_first(self):
        # the second call (e.g. after the all-reduce) replaced the first: compute then held
        # the gradient sync, silently
        marks = []

        def body(rec):
            rec.compute_end()
            marks.append(rec.current["compute_end"])
            time.sleep(0.002)
            rec.compute_end()  # the line named below
            rec.iter_end()
        path, err = self.loop(body)
        self.assertEqual([float(r["compute_end"]) for r in rows_of(path)],
                         [round(t, 6) for t in marks])
        self.assertEqual(err.count("\n"), 1, err)
        self.assertIn(f"{__file__}:", err)
        self.assertIn("compute_end() called twice", err)

    def test_sync_end_twice_keeps_the_first_and_without_compute_end_is_said(self):
        # the second call replaced the first: sync_cpu then held the optimizer step, silently;
        # and a sync_end() before compute_end() was dropped without a word
        firsts = []

        def body(rec):
            rec.compute_end()
            rec.sync_end()
            firsts.append(rec.current["sync_cpu"])
            t = time.process_time()
            while time.process_time() - t < 0.003:  # CPU time the second call would add
                pass
            rec.sync_end()
            rec.iter_end()
        path, err = self.loop(body)
        self.assertEqual([float(r["sync_cpu"]) for r in rows_of(path)],
                         [round(c, 6) for c in firsts])
        self.assertEqual(err.count("\n"), 1, err)
        self.assertIn("sync_end() called twice", err)

        def early(rec):
            rec.sync_end()
            rec.compute_end()
            rec.iter_end()
        path, err = self.loop(early)
        self.assertTrue(all(r["sync_cpu"] == "" for r in rows_of(path)))
        self.assertEqual(err.count("\n"), 1, err)
        self.assertIn("sync_end() without rec.compute_end()", err)

    def test_compute_end_after_iter_end_is_said(self):
        def body(rec):
            rec.iter_end()
            rec.compute_end()
        path, err = self.loop(body)
        self.assertTrue(all(r["compute_end"] == "" for r in rows_of(path)))
        self.assertEqual(err.count("\n"), 1, err)
        self.assertIn("compute_end() after rec.iter_end()", err)

    def test_a_recorder_that_recorded_nothing_says_so(self):
        d = tempfile.mkdtemp()
        rec = sc.Recorder(rank=0, path=os.path.join(d, "trace_rank0.csv"))
        loader = torch.utils.data.DataLoader(Squares(), batch_size=8)  # not rec.dataloader()
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            for _ in loader:
                rec.compute_end()
                rec.iter_end()
            rec.close()
        self.assertIn("recorded no batch", err.getvalue())
        self.assertIn("rec.dataloader()", err.getvalue())


if __name__ == "__main__":
    print("torch", torch.__version__)
    unittest.main()

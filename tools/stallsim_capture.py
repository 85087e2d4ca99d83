#!/usr/bin/env python3
"""stallsim_capture: record a `tidy` data-pipeline trace from a PyTorch training loop.

The trace is what stallsim replays: one CSV row per (rank, epoch, batch) with the times at which a
DataLoader worker fetched the batch, the training loop asked for it and got it, and the iteration
computed and ended. See docs/capture.md for the column meanings and the caveats; the short version:

    import stallsim_capture as sc
    rec = sc.Recorder(rank=rank, path=f"out/trace_rank{rank}.csv")
    loader = rec.dataloader(dataset, batch_size=32, sampler=sampler, num_workers=4,
                            prefetch_factor=2, pin_memory=True)   # same arguments as DataLoader
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for x, y in loader:                 # request / ready are recorded here
            loss = model(x).loss(y); loss.backward()
            rec.compute_end()               # local forward+backward done, BEFORE gradient sync
            all_reduce_grads(model); opt.step(); opt.zero_grad()
            rec.iter_end()                  # end of the iteration
    rec.close()
    # later, once:  python3 tools/stallsim_capture.py merge trace.csv out/trace_rank*.csv

How it works. `Recorder.dataloader` builds an ordinary torch DataLoader around three thin wrappers:
  * the batch sampler yields each batch's index list as a `_TaggedBatch` (a list subclass that
    carries the epoch and batch number, so it survives the trip to the worker process);
  * the dataset gets a `__getitems__` (the batch entry point of the map-style fetcher since torch
    1.13) that notes fetch_start and the worker id before the first sample is loaded;
  * the collate function notes fetch_end after collating (still inside the worker) and returns
    {_KEY: timing, "data": batch}; a dict is used because pin_memory walks dicts and pins their
    tensors, so timing never stops a batch from being pinned.
The loader's iterator is wrapped to take request/ready around next() and to strip the timing again,
so the loop sees exactly the batch the user's collate_fn produced.

Every time is time.time() (the wall clock shared by all processes on a host), written with
6 decimals. Only torch and the standard library are used.
"""

import contextlib
import csv
import math
import os
import sys
import time

COLUMNS = ["rank", "epoch", "batch", "worker", "fetch_start", "fetch_end", "request", "ready",
           "iter_end", "compute_end", "bytes", "samples", "epoch_start", "workers", "prefetch",
           "pin_memory", "persistent"]
CKPT_COLUMNS = ["ckpt_start", "ckpt_end", "ckpt_bytes"]  # a checkpoint after the row's iteration
COLUMNS = COLUMNS + CKPT_COLUMNS
# CPU time beside wall time (seconds; empty where not measured). In the worker: fetch_cpu and
# fetch_wait over [fetch_start, fetch_end], turn_cpu between the worker's previous fetch_end and
# this fetch_start (pickling and sending the previous batch, receiving this one's indices). In the
# training process: over [request, ready] (next_*), [ready, compute_end] (compute_*) and
# [compute_end, next request] (post_*: all-reduce, optimizer step, loop bookkeeping; up to iter_end
# for an epoch's last batch), and of that the gradient all-reduce alone, [compute_end, sync_end]
# (sync_cpu; empty unless the loop calls rec.sync_end()). *_cpu: the process's CPU time (all its
# threads: gloo's included);
# *_wait: the time its threads were runnable but waiting for a core (the run queue, Linux
# schedstat). cores: the node's cores; ranks_per_node: the ranks sharing them.
CPU_COLUMNS = ["fetch_cpu", "fetch_wait", "turn_cpu", "next_cpu", "next_wait", "compute_cpu",
               "compute_wait", "post_cpu", "post_wait", "sync_cpu", "cores", "ranks_per_node"]
COLUMNS = COLUMNS + CPU_COLUMNS

_KEY = "__stallsim_timing__"  # key of the timing entry in the dict a timed collate returns


def now():
    """The one clock of a trace: time.time(), seconds since the epoch, shared by all processes."""
    return time.time()


def _schedstat_waits():
    """{thread id: run-queue wait ns} of this process's live threads, from Linux schedstat
    (the second field of /proc/self/task/TID/schedstat)."""
    out = {}
    base = "/proc/self/task"
    for tid in os.listdir(base):
        try:
            with open(f"{base}/{tid}/schedstat", "rb") as fh:
                out[tid] = int(fh.read().split()[1])
        except (OSError, IndexError, ValueError):  # the thread ended meanwhile
            continue
    return out


_HAS_SCHEDSTAT = None


def cpu_clock():
    """This process's CPU clock: (CPU seconds of all its threads, ended ones included;
    {thread: run-queue wait ns} or None where Linux schedstat is not available)."""
    global _HAS_SCHEDSTAT
    if _HAS_SCHEDSTAT is None:
        try:
            _HAS_SCHEDSTAT = bool(_schedstat_waits())
        except OSError:
            _HAS_SCHEDSTAT = False
    return time.process_time(), (_schedstat_waits() if _HAS_SCHEDSTAT else None)


def _diff(a, b):
    """(CPU seconds, run-queue wait seconds or None) between two cpu_clock() readings. A thread's
    wait counts from its first reading (0 for one born between); one that ended between the two
    loses what it waited after the first (process_time keeps an ended thread's CPU)."""
    cpu = max(0.0, b[0] - a[0])
    if a[1] is None or b[1] is None:
        return cpu, None
    wait = sum(max(0, w - a[1].get(tid, 0)) for tid, w in b[1].items())
    return cpu, wait / 1e9


def node_cores():
    """The cores this process may run on (its affinity), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# ---------------------------------------------------------------------------------------------
# Worker side: the sampler tag, the dataset and the collate wrappers.
# These classes live at module level so they pickle by reference (spawn start method included).

class _TaggedBatch(list):
    """One batch's index list, tagged with (epoch, batch). Pickles as a list plus its __dict__."""

    def __init__(self, indices, epoch, batch):
        super().__init__(indices)
        self.epoch = epoch
        self.batch = batch


class _TaggedBatchSampler:
    """Wraps a batch sampler; numbers its batches 0.. each time it is iterated (once per epoch)."""

    def __init__(self, batch_sampler, recorder):
        self.batch_sampler = batch_sampler
        self.recorder = recorder

    def __iter__(self):
        epoch = self.recorder.epoch
        for k, indices in enumerate(self.batch_sampler):
            yield _TaggedBatch(indices, epoch, k)

    def __len__(self):
        return len(self.batch_sampler)


# Fetch start of the batch this worker process is working on. A worker runs one fetch at a time
# (dataset access, then collate, in one call of the fetcher), so one slot per process suffices.
_pending = None
_dataset = None  # the dataset whose bytes_read a pending batch started from (in this process)
# This worker's CPU clock at its previous fetch_end: (epoch, cpu_clock()), or None.
_last_end_cpu = None


def _worker_id():
    import torch.utils.data
    info = torch.utils.data.get_worker_info()
    return -1 if info is None else info.id


class TimedDataset:
    """Map-style dataset wrapper that notes when each batch's fetch begins.

    Only `__getitems__` is timed; it calls the wrapped dataset's own `__getitems__` when it has
    one, else `__getitem__` per index, exactly as torch's fetcher would have.
    """

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, idx):
        return self.dataset[idx]

    def __getitems__(self, indices):
        global _pending
        t0 = now()
        c0 = cpu_clock()
        if isinstance(indices, _TaggedBatch):
            _pending = (indices.epoch, indices.batch, _worker_id(), t0, len(indices),
                        _bytes_read(self.dataset), c0)
            plain = list(indices)
        else:
            _pending = None
            plain = indices
        inner = getattr(self.dataset, "__getitems__", None)
        if inner:
            return inner(plain)
        return [self.dataset[i] for i in plain]

    def __getattr__(self, name):  # anything else (e.g. custom attributes) goes to the dataset
        if name == "dataset":
            raise AttributeError(name)
        return getattr(self.dataset, name)


class TimedCollate:
    """Collate wrapper: notes fetch_end after the user's collate, inside the worker."""

    def __init__(self, collate_fn):
        self.collate_fn = collate_fn

    def __call__(self, samples):
        global _pending, _last_end_cpu
        pending, _pending = _pending, None
        batch = self.collate_fn(samples)
        if pending is None:
            return batch
        t1 = now()
        c1 = cpu_clock()
        epoch, k, worker, t0, n, read0, c0 = pending
        read1 = _bytes_read(_dataset) if read0 is not None else None
        nbytes = read1 - read0 if read1 is not None else _nbytes(batch)
        fetch_cpu, fetch_wait = _diff(c0, c1)
        # The worker's CPU between its previous batch's end and this start: pickling and sending
        # the previous batch (the queue's feeder thread), receiving this one. Same epoch only: a
        # worker of a new epoch (or a persistent one after the reset) starts afresh.
        turn = None
        if _last_end_cpu is not None and _last_end_cpu[0] == epoch and worker >= 0:
            turn = _diff(_last_end_cpu[1], c0)[0]
        _last_end_cpu = (epoch, c1) if worker >= 0 else None
        cpu = (fetch_cpu, fetch_wait, turn)
        return {_KEY: (epoch, k, worker, t0, t1, n, nbytes, cpu), "data": batch}


def _bytes_read(dataset):
    """The dataset's own count of bytes read from storage (an attribute `bytes_read` that it
    increases in each process, e.g. a worker), or None when it keeps none."""
    global _dataset
    v = getattr(dataset, "bytes_read", None)
    if v is None:
        return None
    _dataset = dataset
    return int(v)


def _nbytes(obj):
    """Bytes of all tensors / numpy arrays in a (nested) batch; cheap, walks the structure."""
    if hasattr(obj, "element_size") and hasattr(obj, "nelement"):
        return obj.element_size() * obj.nelement()
    if hasattr(obj, "nbytes") and not isinstance(obj, (bytes, bytearray, str)):
        try:
            return int(obj.nbytes)
        except (TypeError, ValueError):
            return 0
    if isinstance(obj, dict):
        return sum(_nbytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(_nbytes(v) for v in obj)
    return 0


# ---------------------------------------------------------------------------------------------
# Main-process side: the loader wrapper and the recorder.

class TimedLoader:
    """Iterable over the wrapped DataLoader; records request/ready and strips the timing."""

    def __init__(self, loader, recorder, dataset, sampler, batch_sampler):
        self.loader = loader
        self.recorder = recorder
        self.dataset = dataset              # the user's dataset, unwrapped
        self.sampler = sampler              # the user's sampler (e.g. DistributedSampler)
        self.batch_sampler = batch_sampler  # the user's batch sampler, untagged

    def __len__(self):
        return len(self.loader)

    def __getattr__(self, name):
        if name == "loader":
            raise AttributeError(name)
        return getattr(self.loader, name)

    def __iter__(self):
        rec = self.recorder
        rec._begin_epoch()
        it = iter(self.loader)  # with non-persistent workers this starts the worker processes
        while True:
            t_req = now()
            c_req = cpu_clock()
            rec._close_current(t_req, c_req)
            try:
                item = next(it)
            except StopIteration:
                rec._end_epoch()
                return
            t_ready = now()
            c_ready = cpu_clock()
            yield rec._got(item, t_req, t_ready, c_req, c_ready)


class Recorder:
    """Collects one rank's rows and writes them to `path` (CSV, tidy columns).

    rank: the DDP rank (0 without DDP). path: this rank's CSV (e.g. trace_rank{r}.csv); rows are
    appended at the end of each epoch, so a crashed run keeps its finished epochs.
    ranks_per_node: the ranks that share this node's cores (torchrun's LOCAL_WORLD_SIZE when not
    given; the column stays empty when neither says).
    """

    def __init__(self, rank=0, path=None, ranks_per_node=None):
        self.rank = int(rank)
        if ranks_per_node is None and os.environ.get("LOCAL_WORLD_SIZE", "").isdigit():
            ranks_per_node = int(os.environ["LOCAL_WORLD_SIZE"])
        self.ranks_per_node = None if ranks_per_node is None else int(ranks_per_node)
        self.cores = node_cores()
        self.path = path if path is not None else f"trace_rank{self.rank}.csv"
        self.epoch = -1
        self.rows = []          # rows of the current epoch, finished or not
        self.current = None     # the row of the batch the loop is working on
        self.epoch_start = None
        self.workers = 0
        self.prefetch = 0
        self.pin_memory = 0
        self.persistent = 0
        self._hook_t = None     # last DDP comm-hook call (see attach_ddp)
        self._hook_c = None     # the CPU clock at that call
        self._fh = None
        self._writer = None
        self.last = None        # the row whose tail runs until the next request
        self.epoch_times = []   # last iter_end - epoch_start, per epoch

    # --- building the loader ---
    def dataloader(self, dataset, loader_cls=None, **kwargs):
        """A DataLoader over `dataset` with the given DataLoader arguments, instrumented.

        Accepts the usual batch_size/shuffle/sampler/drop_last or batch_sampler; map-style
        datasets with automatic batching only (the common case). Returns a TimedLoader.
        """
        import torch.utils.data as tud
        loader_cls = loader_cls or tud.DataLoader
        if isinstance(dataset, tud.IterableDataset):
            raise TypeError("stallsim_capture: IterableDataset is not supported (no batch sampler)")
        # Let torch build the batch sampler and default collate from the user's arguments.
        plain = loader_cls(dataset, **kwargs)
        if plain.batch_sampler is None:
            raise ValueError("stallsim_capture: batch_size=None (no automatic batching) is not supported")
        user_sampler = plain.sampler
        user_batch_sampler = plain.batch_sampler
        kw = dict(kwargs)
        for k in ("batch_size", "shuffle", "sampler", "drop_last", "batch_sampler", "collate_fn"):
            kw.pop(k, None)
        loader = loader_cls(TimedDataset(dataset),
                            batch_sampler=_TaggedBatchSampler(user_batch_sampler, self),
                            collate_fn=TimedCollate(plain.collate_fn), **kw)
        self.workers = int(loader.num_workers)
        self.prefetch = int(loader.prefetch_factor or 0) if loader.num_workers > 0 else 0
        # Effective pinning: torch pins only when CUDA is available (or a pin device is given).
        pin = bool(loader.pin_memory)
        if pin and not getattr(loader, "pin_memory_device", ""):
            import torch
            pin = torch.cuda.is_available()
        self.pin_memory = int(pin)
        self.persistent = int(bool(loader.persistent_workers))
        return TimedLoader(loader, self, dataset, user_sampler, user_batch_sampler)

    def attach_ddp(self, ddp_model, process_group=None):
        """Take compute_end from a DistributedDataParallel model's gradient communication hook.

        Registers an allreduce comm hook (same result as DDP's default) that notes the time it is
        called; the last call of an iteration is when the last gradient bucket became ready, i.e.
        when local backward finished. iter_end() uses that time unless compute_end() was called.
        Earlier buckets' all-reduces overlap with backward, so this is 'backward done', and the
        time after it (exposed all-reduce tail + optimizer step) lands in iter_end - compute_end.
        """
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

        def hook(state, bucket):
            self._hook_t = now()
            self._hook_c = cpu_clock()
            return default_hooks.allreduce_hook(state, bucket)

        ddp_model.register_comm_hook(process_group, hook)

    # --- called by the training loop ---
    def compute_end(self):
        """Mark the end of local forward+backward for the current batch (before gradient sync)."""
        if self.current is not None:
            self.current["compute_end"] = now()
            self.current["_c_ce"] = cpu_clock()

    def sync_end(self):
        """Mark the end of the gradient all-reduce (after compute_end, before the optimizer step):
        its CPU time goes to the sync_cpu column (optional; the model scales it with the ring's
        steps when predicting other rank counts)."""
        row = self.current
        if row is not None and row["_c_ce"] is not None:
            row["sync_cpu"] = _diff(row["_c_ce"], cpu_clock())[0]

    def iter_end(self, t=None, c=None):
        """Mark the end of the current iteration (after gradient sync and optimizer step)."""
        if self.current is None:
            return
        t = now() if t is None else t
        c = cpu_clock() if c is None else c
        row = self.current
        if row["compute_end"] is None and self._hook_t is not None and self._hook_t >= row["ready"]:
            row["compute_end"] = self._hook_t
            row["_c_ce"] = self._hook_c
        row["iter_end"] = t
        row["_c_ie"] = c
        if row["_c_ce"] is not None:
            row["compute_cpu"], row["compute_wait"] = _diff(row["_c_ready"], row["_c_ce"])
        self._hook_t = None
        self._hook_c = None
        self.current = None
        self.last = row

    @contextlib.contextmanager
    def checkpoint(self, path=None, nbytes=None):
        """`with rec.checkpoint(path):` around a checkpoint write (e.g. torch.save) after an
        iteration: its start, end and bytes (`nbytes`, else the size of `path` on exit) go on the
        row of the iteration it follows (ckpt_start, ckpt_end, ckpt_bytes)."""
        row = self.current if self.current is not None else (self.rows[-1] if self.rows else None)
        t0 = now()
        try:
            yield self
        finally:
            t1 = now()
            if row is not None:
                size = nbytes if nbytes is not None else (os.path.getsize(path) if path else 0)
                row.update(ckpt_start=t0, ckpt_end=t1, ckpt_bytes=int(size))

    @contextlib.contextmanager
    def iteration(self):
        """`with rec.iteration():` around the loop body marks iter_end on exit."""
        try:
            yield self
        finally:
            self.iter_end()

    # --- internals ---
    def _begin_epoch(self):
        if self.rows:           # the previous epoch was left early (break): write it now
            self._end_epoch()
        self._close_current()
        self.epoch += 1
        self.rows = []
        self.epoch_start = now()

    def _got(self, item, t_req, t_ready, c_req=None, c_ready=None):
        self._close_current()
        if not (isinstance(item, dict) and _KEY in item):
            raise RuntimeError("stallsim_capture: batch arrived without timing; this torch version's "
                               "fetcher may not call Dataset.__getitems__ (needs torch >= 1.13)")
        epoch, k, worker, t0, t1, n, nbytes, (fcpu, fwait, turn) = item[_KEY]
        row = {"rank": self.rank, "epoch": epoch, "batch": k, "worker": worker,
               "fetch_start": t0, "fetch_end": t1, "request": t_req, "ready": t_ready,
               "iter_end": None, "compute_end": None, "bytes": nbytes, "samples": n,
               "epoch_start": self.epoch_start, "workers": self.workers,
               "prefetch": self.prefetch, "pin_memory": self.pin_memory,
               "persistent": self.persistent,
               "fetch_cpu": fcpu, "fetch_wait": fwait, "turn_cpu": turn,
               "next_cpu": None, "next_wait": None, "compute_cpu": None, "compute_wait": None,
               "post_cpu": None, "post_wait": None, "sync_cpu": None, "cores": self.cores,
               "ranks_per_node": self.ranks_per_node,
               "_c_ready": c_ready, "_c_ce": None, "_c_ie": None}
        if c_req is not None and c_ready is not None:
            row["next_cpu"], row["next_wait"] = _diff(c_req, c_ready)
        row.update(dict.fromkeys(CKPT_COLUMNS))
        self.rows.append(row)
        self.current = row
        self.last = None
        return item["data"]

    def _close_current(self, t=None, c=None):
        # A loop that never called iter_end: the iteration ends when the next batch is requested
        # (t), or now when the epoch is closed some other way.
        if self.current is not None:
            self.iter_end(t, c)
        # The tail's CPU (all-reduce, optimizer step, bookkeeping) runs from compute_end to the
        # next request (c), or to iter_end for the epoch's last batch.
        row, self.last = self.last, None
        if row is not None and row["_c_ready"] is not None:
            start = row["_c_ce"] if row["_c_ce"] is not None else row["_c_ready"]
            end = c if c is not None else row["_c_ie"]
            row["post_cpu"], row["post_wait"] = _diff(start, end)

    def _end_epoch(self):
        self._close_current()
        if self.rows:
            self.epoch_times.append(self.rows[-1]["iter_end"] - self.epoch_start)
        self._write(self.rows)
        self.rows = []

    def _write(self, rows):
        if self._writer is None:
            d = os.path.dirname(self.path)
            if d:
                os.makedirs(d, exist_ok=True)
            self._fh = open(self.path, "w", newline="")
            self._writer = csv.writer(self._fh, lineterminator="\n")
            self._writer.writerow(COLUMNS)
        for r in rows:
            self._writer.writerow([_fmt(r[c]) for c in COLUMNS])
        self._fh.flush()

    def close(self):
        """Write what is left (an epoch cut short) and close the file."""
        if self.rows:
            self._end_epoch()
        if self._writer is None:
            self._write([])
        self._fh.close()
        self._fh = None
        self._writer = None


def _fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6f}"
    return str(v)


# ---------------------------------------------------------------------------------------------
# Merge and check.

_INT_COLS = ("rank", "epoch", "batch", "worker")


def read_rows(path):
    # utf-8-sig: a byte order mark is read as stallsim reads it (skipped).
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rd = csv.DictReader(fh)
        head = rd.fieldnames or []
        if head[:1] == [""] and len(head) > 1:
            head = head[1:]  # pandas' unnamed index column (to_csv without index=False)
        if head[:9] != COLUMNS[:9]:
            raise ValueError(f"{path}: header does not start with the tidy columns {COLUMNS[:9]}")
        return head, list(rd)


def merge(out_path, in_paths):
    """Merge per-rank CSVs into one tidy CSV sorted by (epoch, batch, rank). Returns row count."""
    header = None
    rows = []
    for p in in_paths:
        head, rs = read_rows(p)
        if header is None:
            header = head
        elif head != header:
            raise ValueError(f"{p}: header differs from {in_paths[0]}")
        rows.extend(rs)
    if header is None:
        raise ValueError("merge: no input files")
    rows.sort(key=lambda r: (int(r["epoch"]), int(r["batch"]), int(r["rank"])))
    d = os.path.dirname(out_path)
    if d:
        os.makedirs(d, exist_ok=True)
    tmp = out_path + ".tmp"
    with open(tmp, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        for r in rows:
            w.writerow([r[c] for c in header])
    os.replace(tmp, out_path)
    return len(rows)


def check(path):
    """Consistency checks on a merged trace; returns (problems, epoch_times per epoch).

    Checks: ready >= request, fetch_end >= fetch_start, iter_end >= ready,
    compute_end in [ready, iter_end] when present, batches 0..N-1 on every rank of an epoch with
    the same N, and one epoch_start per (rank, epoch).
    Epoch time = max over ranks of (last iter_end - epoch_start).
    """
    head, rows = read_rows(path)
    bad = []
    per = {}
    bad.extend(_check_values_and_order(head, rows))
    if bad:
        return bad, []
    for i, r in enumerate(rows, start=2):
        f = {c: float(r[c]) for c in ("fetch_start", "fetch_end", "request", "ready", "iter_end")}
        if f["ready"] < f["request"]:
            bad.append(f"line {i}: ready < request")
        if f["fetch_end"] < f["fetch_start"]:
            bad.append(f"line {i}: fetch_end < fetch_start")
        if f["iter_end"] < f["ready"]:
            bad.append(f"line {i}: iter_end < ready")
        if r.get("compute_end"):
            c = float(r["compute_end"])
            if not (f["ready"] <= c <= f["iter_end"]):
                bad.append(f"line {i}: compute_end outside [ready, iter_end]")
        key = (int(r["epoch"]), int(r["rank"]))
        e = per.setdefault(key, {"batches": [], "starts": set(), "last": -math.inf})
        e["batches"].append(int(r["batch"]))
        if "epoch_start" in r and r["epoch_start"]:
            e["starts"].add(r["epoch_start"])
        e["last"] = max(e["last"], f["iter_end"])
    epochs = {}
    for (ep, rank), e in sorted(per.items()):
        n = len(e["batches"])
        if sorted(e["batches"]) != list(range(n)):
            bad.append(f"epoch {ep} rank {rank}: batches are not 0..{n - 1}")
        if len(e["starts"]) > 1:
            bad.append(f"epoch {ep} rank {rank}: more than one epoch_start")
        epochs.setdefault(ep, []).append((rank, n, e))
    times = []
    for ep, lst in sorted(epochs.items()):
        counts = {n for _, n, _ in lst}
        if len(counts) != 1:
            bad.append(f"epoch {ep}: batch counts differ across ranks: {sorted(counts)}")
        if all(e["starts"] for _, _, e in lst):
            times.append(max(e["last"] - float(next(iter(e["starts"]))) for _, _, e in lst))
    return bad, times


def _check_values_and_order(head, rows):
    """What stallsim's reader (formats/tidy.c) also rejects: rows with a different field count,
    values that are not non-negative integers / times, and rows that are not sorted by
    (epoch, batch, rank) starting at (0, 0, 0) with every rank in every batch."""
    bad = []
    prev = None
    ranks = nb = None
    times = ["fetch_start", "fetch_end", "request", "ready", "iter_end"]
    times += [c for c in ("compute_end", "epoch_start") if c in head]
    times += [c for c in CPU_COLUMNS if c in head]
    optional = {"compute_end"} | set(CPU_COLUMNS)
    for i, r in enumerate(rows, start=2):
        if None in r or any(v is None for v in r.values()):
            bad.append(f"line {i}: row has a different number of fields than the header")
            return bad
        try:
            rank, ep, b = int(r["rank"]), int(r["epoch"]), int(r["batch"])
            if int(r["worker"]) < -1 or min(rank, ep, b) < 0:
                raise ValueError
            # compute_end may be empty (not marked); the CPU columns where not measured
            if any(not math.isfinite(float(r[c])) or float(r[c]) < 0 for c in times
                   if r[c] != "" or c not in optional):
                raise ValueError
        except ValueError:
            bad.append(f"line {i}: a value is not a non-negative integer or time")
            return bad
        cur = (ep, b, rank)
        if prev is None:
            ok = cur == (0, 0, 0)
        elif cur == (prev[0], prev[1], prev[2] + 1):
            ok = ranks is None or rank < ranks
        elif cur[2] == 0 and (cur[:2] == (prev[0], prev[1] + 1) or cur[:2] == (prev[0] + 1, 0)):
            if ranks is None:
                ranks = prev[2] + 1
            ok = prev[2] + 1 == ranks
            if cur[:2] == (prev[0] + 1, 0):
                nb = prev[1] + 1 if nb is None else nb
                ok = ok and prev[1] + 1 == nb
        else:
            ok = False
            if rank != prev[2] and (ep, b) < (prev[0], prev[1]):
                bad.append(f"line {i}: rank {rank} starts over at epoch {ep}, batch {b}: rows are "
                           "in per-rank order; merge the per-rank files with "
                           "`stallsim_capture.py merge`")
                return bad
        if not ok:
            bad.append(f"line {i}: row (rank {rank}, epoch {ep}, batch {b}) out of order, missing "
                       "or duplicated: rows must be sorted by (epoch, batch, rank)")
            return bad
        prev = cur
    return bad


def summary(path, skip=1):
    """Means (ms) over a merged trace, leaving out the first `skip` batches of each epoch
    (they carry worker start-up): fetch duration, stall, compute (ready..compute_end),
    post-compute (compute_end..iter_end), iteration time (iter_end - previous iter_end)."""
    _, rows = read_rows(path)
    acc = {k: [] for k in ("fetch", "stall", "compute", "post", "iter")}
    prev = {}
    for r in rows:
        f = lambda c: float(r[c])
        key = (r["rank"], r["epoch"])
        if int(r["batch"]) >= skip:
            acc["fetch"].append(f("fetch_end") - f("fetch_start"))
            acc["stall"].append(f("ready") - f("request"))
            if r.get("compute_end"):
                acc["compute"].append(f("compute_end") - f("ready"))
                acc["post"].append(f("iter_end") - f("compute_end"))
            if key in prev:
                acc["iter"].append(f("iter_end") - prev[key])
        prev[key] = f("iter_end")
    return {k: (1e3 * sum(v) / len(v) if v else float("nan")) for k, v in acc.items()}


def main(argv):
    usage = ("usage: stallsim_capture.py merge OUT.csv IN.csv [IN.csv ...]\n"
             "       stallsim_capture.py check TRACE.csv")
    if len(argv) >= 3 and argv[0] == "merge":
        n = merge(argv[1], argv[2:])
        print(f"wrote {argv[1]}: {n} rows")
        return 0
    if len(argv) == 2 and argv[0] == "check":
        try:
            bad, times = check(argv[1])
        except (ValueError, OSError) as e:
            print(e)
            print("1 problem(s)")
            return 1
        for b in bad:
            print(b)
        if bad:
            print(f"{len(bad)} problem(s)")
            return 1
        print("epoch times (s): " + ", ".join(f"{t:.3f}" for t in times))
        m = summary(argv[1])
        print("means without batch 0 (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in m.items()))
        print("OK" if not bad else f"{len(bad)} problem(s)")
        return 0 if not bad else 1
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

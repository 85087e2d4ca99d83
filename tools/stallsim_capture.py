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
import decimal
import io
import math
import os
import re
import signal
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

# A rank file's status, in a file beside it (PATH.status; the trace format is left as it is):
# "open" from before its first row until rec.close() ends the run in order, then "closed". A
# run that crashed or was killed never gets to "closed", and merge refuses its rank files
# (unless told to salvage them). The merged trace of a salvaged run gets OUT.cut beside it.
STATUS_SUFFIX = ".status"
CUT_SUFFIX = ".cut"
SALVAGE_OPTION = "--salvage-cut"


def status_path(path):
    """The file beside a rank file that says whether its run closed (PATH.status)."""
    return path + STATUS_SUFFIX


def _write_whole(path, text):
    """Writes `text` to `path` whole or not at all (a temporary file renamed)."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def _makedirs(d):
    """os.makedirs(d), returning the folders it made, outermost first."""
    made = []
    d = os.path.abspath(d) if d else ""
    while d and not os.path.exists(d):
        made.append(d)
        d = os.path.dirname(d)
    made.reverse()
    for m in made:
        with contextlib.suppress(FileExistsError):
            os.mkdir(m)
    return made


def _on_interrupt(sig, frame):
    """Ctrl-C and SIGTERM in the merge and check commands: KeyboardInterrupt, whose clean-up
    (temporary files removed) a further signal does not cut short."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _on_interrupt.sig = sig
    raise KeyboardInterrupt


def _die_of(sig, line):
    """One line on stderr, then the end a signal gives (exit 130 or 143 in a shell)."""
    print(line, file=sys.stderr)
    sys.stderr.flush()
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    return 128 + sig


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

    def _sampler_epoch(self):
        """The epoch of a sampler with set_epoch (DistributedSampler), else None."""
        s = self.sampler
        if s is None or not hasattr(s, "set_epoch"):
            return None
        return getattr(s, "epoch", None)

    def _check_set_epoch(self):
        """Warns, once, when an epoch starts at a sampler epoch that an earlier complete epoch
        already read: set_epoch was not called, so every epoch reads the same order (the trace is
        still valid; the training is not what was meant). A peek (an epoch left early) counts
        for nothing."""
        e = self._sampler_epoch()
        done = self.__dict__.get("_done_epochs", ())
        if e is None or e not in done or self.__dict__.get("_warned", False):
            return
        self._warned = True
        print(f"stallsim_capture: warning: {type(self.sampler).__name__}.set_epoch() was not "
              f"called before this epoch (its epoch is still {e}): every epoch reads the same "
              f"order; call sampler.set_epoch(epoch) before each epoch", file=sys.stderr)

    def __iter__(self):
        rec = self.recorder
        self._check_set_epoch()
        rec._begin_epoch()
        epoch = rec.epoch
        it = iter(self.loader)  # with non-persistent workers this starts the worker processes
        try:
            while True:
                t_req = now()
                c_req = cpu_clock()
                rec._close_current(t_req, c_req)
                try:
                    item = next(it)
                except StopIteration:
                    rec._end_epoch()
                    if self._sampler_epoch() is not None:
                        self.__dict__.setdefault("_done_epochs", set()).add(self._sampler_epoch())
                    return
                t_ready = now()
                c_ready = cpu_clock()
                yield rec._got(item, t_req, t_ready, c_req, c_ready)
        finally:
            # The loop left the epoch early (break, an exception): CPython closes this generator
            # as the loop lets go of it, so the epoch ends here, not at the next iter(loader) or
            # close(): the last iteration (without iter_end) must not run on through whatever
            # the script does in between (evaluation, a sleep), nor the write delay the next
            # epoch_start.
            if rec.epoch == epoch and rec.rows:
                rec._end_epoch()


class Recorder:
    """Collects one rank's rows and writes them to `path` (CSV, tidy columns).

    rank: the DDP rank (0 without DDP). path: this rank's CSV (e.g. trace_rank{r}.csv); rows are
    appended at the end of each epoch, so a crashed run keeps its finished epochs (and the rows of
    the one cut short, which merge leaves out). PATH.status beside it says "open" until close()
    ends the run in order, then "closed": merge refuses a rank file whose run did not close.
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
        self._dataset = None    # the dataset of the loader this recorder records
        self._setting = None    # and its (workers, prefetch, pin_memory, persistent)
        self._fh = None
        self._writer = None
        self._written = None    # rows written to path; None until the file is created
        self._warned_empty = False
        self._warned = set()    # the kinds of misuse already warned of (_warn_once)
        self._closed = False    # PATH.status says "closed" (no row written since)
        self.last = None        # the row whose tail runs until the next request
        self.epoch_times = []   # last iter_end - epoch_start, per epoch

    # --- building the loader ---
    def dataloader(self, dataset, loader_cls=None, **kwargs):
        """A DataLoader over `dataset` with the given DataLoader arguments, instrumented.

        Accepts the usual batch_size/shuffle/sampler/drop_last or batch_sampler; map-style
        datasets with automatic batching only (the common case). Returns a TimedLoader.
        One recorder records one loader: called again, it must get the same dataset and
        settings (a loader rebuilt each epoch), else it raises ValueError.
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
        workers = int(loader.num_workers)
        prefetch = int(loader.prefetch_factor or 0) if loader.num_workers > 0 else 0
        # Effective pinning: torch pins only when CUDA is available (or a pin device is given).
        pin = bool(loader.pin_memory)
        if pin and not getattr(loader, "pin_memory_device", ""):
            import torch
            pin = torch.cuda.is_available()
        setting = (workers, prefetch, int(pin), int(bool(loader.persistent_workers)))
        # One recorder, one loader: every iter() of a recorder's loaders is an epoch of its
        # trace, and the loader settings are the recorder's. A second loader over the same
        # dataset with the same settings (the loader rebuilt each epoch) records the same run;
        # one over another dataset (a validation loader) or with other settings would put its
        # epochs between the training epochs and relabel their rows with its own settings.
        if self._dataset is not None and (dataset is not self._dataset
                                          or setting != self._setting):
            what = ("another dataset" if dataset is not self._dataset else
                    "other settings (workers, prefetch, pin_memory, persistent: "
                    f"{setting} against {self._setting})")
            raise ValueError(f"stallsim_capture: this Recorder already records a DataLoader; "
                             f"this one has {what}, and its epochs would be taken for epochs of "
                             "the first: build other loaders (validation) with "
                             "torch.utils.data.DataLoader, or give each its own Recorder (and "
                             "path)")
        self._dataset, self._setting = dataset, setting
        self.workers, self.prefetch, self.pin_memory, self.persistent = setting
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
        """Mark the end of local forward+backward for the current batch (before gradient sync).
        Once per iteration: a second call is ignored (the first is the one before the sync), and
        a call with no batch in hand (after iter_end) too; each is warned of once on stderr."""
        row = self.current
        if row is None:
            if self.last is not None:
                self._warn_once("late", "rec.compute_end() after rec.iter_end() (or after "
                                "the `with rec.iteration()` block) is ignored, and the trace's "
                                "compute_end stays empty: call it after loss.backward(), before "
                                "the gradient sync and iter_end")
            return
        if row["compute_end"] is not None:
            self._warn_once("twice", "rec.compute_end() called twice in one iteration: the "
                            "first call is kept (the end of the local backward, before the "
                            "gradient sync); call it once per iteration")
            return
        row["compute_end"] = now()
        row["_c_ce"] = cpu_clock()

    def sync_end(self):
        """Mark the end of the gradient all-reduce (after compute_end, before the optimizer step):
        its CPU time goes to the sync_cpu column (optional; the model scales it with the ring's
        steps when predicting other rank counts). Once per iteration, after compute_end: a
        second call is ignored (it would add the optimizer step), and a call without
        compute_end, whose CPU time it counts from, too; each is warned of once on stderr."""
        row = self.current
        if row is None or row["_c_ce"] is None:
            self._warn_once("sync_early", "rec.sync_end() without rec.compute_end() before it in "
                            "the iteration is ignored, and the trace's sync_cpu stays empty: "
                            "call compute_end() after loss.backward(), sync_end() after the "
                            "all-reduce")
            return
        if row["sync_cpu"] is not None:
            self._warn_once("sync_twice", "rec.sync_end() called twice in one iteration: the "
                            "first call is kept (the end of the all-reduce); call it once per "
                            "iteration")
            return
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
            # "open" before the file gets a row: a crash from here on leaves it so (a stale
            # "closed" of an earlier run at this path, or of an earlier close(), goes first)
            _write_whole(status_path(self.path), "open: the run has not reached rec.close() "
                         "since rows were last written\n")
            self._closed = False
            if self._written is None:  # this recorder's first write: a new file
                self._fh = open(self.path, "w", newline="")
                self._writer = csv.writer(self._fh, lineterminator="\n")
                self._writer.writerow(COLUMNS)
                self._written = 0
            else:  # after close(): go on appending, never start the file over
                self._fh = open(self.path, "a", newline="")
                self._writer = csv.writer(self._fh, lineterminator="\n")
        for r in rows:
            self._writer.writerow([_fmt(r[c]) for c in COLUMNS])
        self._written += len(rows)
        self._fh.flush()

    def close(self):
        """Write what is left (an epoch cut short) and close the file, and mark the run closed
        (PATH.status says "closed"; merge refuses rank files without it). Called again (or
        before more epochs), it keeps what was written: the file is never started over.
        Called while an exception is being handled (in a `finally` or `except` block, or
        after the interpreter reported an uncaught one), the run did not end in order: the
        file is closed but stays "open", and that is said on stderr."""
        crash = sys.exc_info()[1]
        if crash is None:
            crash = getattr(sys, "last_value", None)  # an uncaught one (atexit, a prompt)
        if self.rows:
            self._end_epoch()
        if self._written is None:
            self._write([])
        if self._written == 0 and not self._warned_empty:
            self._warned_empty = True
            print(f"stallsim_capture: warning: rank {self.rank} recorded no batch, {self.path} "
                  "holds only the header: iterate over the loader rec.dataloader() returned "
                  "(a DataLoader built directly is not recorded)", file=sys.stderr)
        if self._fh is not None:
            self._fh.close()
        self._fh = None
        self._writer = None
        if crash is None:
            _write_whole(status_path(self.path), "closed\n")
            self._closed = True
        elif not self._closed:  # (closed before, nothing written since: it stays closed)
            print(f"stallsim_capture: warning: rank {self.rank}: rec.close() called while "
                  f"handling {type(crash).__name__}: the run is taken as cut, and merge refuses "
                  f"{self.path} unless given {SALVAGE_OPTION}; call rec.close() after the "
                  "training loop, outside `finally` and `except` blocks", file=sys.stderr)

    def _warn_once(self, kind, msg):
        """One warning of each kind per recorder, naming the line of the loop that called."""
        if kind in self._warned:
            return
        self._warned.add(kind)
        f = sys._getframe(2)
        print(f"stallsim_capture: warning: {f.f_code.co_filename}:{f.f_lineno}: {msg}",
              file=sys.stderr)


def _fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6f}"
    return str(v)


# ---------------------------------------------------------------------------------------------
# Merge and check.

_ALL_COLUMNS = frozenset(COLUMNS)


# What stallsim's tidy reader (formats/tidy.c) checks, in its order and with its messages
# ("FILE:LINE:COLUMN: ..."), so that `check` rejects what stallsim rejects and accepts what it
# accepts. The limits are include/stall/limits.h's.

_NS_PER_S = 10**9
_LIMIT_CLOCK_NS = 4_000_000_000 * _NS_PER_S
_LIMIT_SPAN_NS = 10_000_000 * _NS_PER_S
_LIMIT_DURATION_NS = 1_000_000 * _NS_PER_S
_INT_MAX = {"rank": 65535, "epoch": 1048575, "batch": 999_999_999, "worker": 1023,
            "workers": 1024, "prefetch": 65536, "pin_memory": 1, "persistent": 1,
            "cores": 1 << 20, "ranks_per_node": 65536, "samples": 1 << 40}
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_INT64_MAX = 2**63 - 1


def _decimal(s, scale):
    """stallsim's exact decimal (tidy_decimal): s times 10**scale to the nearest integer, halves
    away from zero, from the digits. Returns (rc, value, exact): rc 0, -1 (not a decimal) or -2
    (past int64: value is the sign)."""
    if not _DECIMAL.match(s):
        return -1, 0, False
    d = decimal.Decimal(s)
    if d.is_zero():
        return 0, 0, True
    neg = d.is_signed()
    if d.adjusted() + scale >= 19:  # at least 10**19: past int64
        return -2, -1 if neg else 1, False
    if d.adjusted() + scale < -2:  # under 0.01: rounds to 0
        return 0, 0, False
    with decimal.localcontext() as ctx:
        ctx.prec = len(s) + 40
        x = d.scaleb(scale)
        v = int(x.to_integral_value(rounding=decimal.ROUND_HALF_UP))
        exact = x == v
    if abs(v) > _INT64_MAX - 9:
        return -2, -1 if neg else 1, False
    return 0, v, exact


def _byte_count(s):
    if _decimal(s, 0)[0] == -1:
        return None
    b = float(s)
    return b if 0 <= b <= 1e300 else None


class _Bad(Exception):
    pass


def reader_checks(path):
    """The first problem stallsim's tidy reader finds in the file, as it words it
    ("FILE:LINE[:COLUMN]: ..."), or None when it reads the file."""
    try:
        _read_like_stallsim(path)
    except _Bad as e:
        return str(e)
    return None


def _read_like_stallsim(path):
    csv.field_size_limit(1 << 24)
    where = {"line": 1}

    def fail(col, msg):
        if col is None:
            raise _Bad(f"{path}:{where['line']}: {msg}")
        raise _Bad(f"{path}:{where['line']}:{col + 1}: {msg}")

    # surrogateescape: bytes that are not UTF-8 fail as numbers do in stallsim, at their column
    with open(path, newline="", encoding="utf-8-sig", errors="surrogateescape") as fh:
        rd = csv.reader(fh, strict=True)
        head = None
        col = {}
        st = {"rows": 0, "ranks": 0, "batches": 0, "e": 0, "k": 0, "r": 0, "t0": None}
        setting = {}
        setting_line = 0
        last_iter_end, epoch_start, last_line = {}, {}, {}
        compute_empty = None
        cpu_once = {}
        prev_end = 0
        last_row_line = 0
        while True:
            try:
                fields = next(rd)
            except StopIteration:
                break
            except csv.Error as e:
                where["line"] = prev_end + 1
                fail(None, f"malformed CSV: {e}")
            where["line"] = prev_end + 1
            prev_end = rd.line_num
            if fields == []:
                continue  # a blank line
            fields = [f.strip(" \t") for f in fields]
            if any("\0" in f for f in fields):
                fail(next(i for i, f in enumerate(fields) if "\0" in f), "NUL byte in the field")
            if head is None:
                head = fields
                skip = 1 if len(head) > 1 and head[0] == "" else 0
                for i in range(skip, len(head)):
                    if head[i] in _ALL_COLUMNS:
                        if head[i] in col:
                            fail(i, f"column '{head[i]}' appears twice")
                        col[head[i]] = i
                for j, name in enumerate(COLUMNS[:9]):
                    if col.get(name) != j + skip:
                        fail(j + skip if j + skip < len(head) else None,
                             f"expected column '{name}' here (header must start "
                             f"{','.join(COLUMNS[:9])})")
                continue
            if fields == [""] and head is not None:
                continue  # a line of spaces
            if len(fields) > 64:  # stallsim's reader stops at its 64 columns
                fail(64, "more than 64 columns")
            if len(fields) != len(head):
                fail(None, f"row has {len(fields)} fields, the header {len(head)}")

            def integer(name, lo):
                s = fields[col[name]]
                rc, x, exact = _decimal(s, 0)
                if rc == -1 or (rc == 0 and not exact):
                    fail(col[name], f"'{name}': not an integer: \"{s}\"")
                if rc == -2:
                    x = -2**63 if x < 0 else _INT64_MAX
                if x < lo:
                    fail(col[name], f"'{name}': negative value \"{s}\"")
                if x > _INT_MAX[name]:
                    fail(col[name], f"'{name}': {s} is more than the limit of {_INT_MAX[name]}")
                return x

            def time_ns(name):
                s = fields[col[name]]
                rc, v, _ = _decimal(s, 9)
                if rc == -1:
                    fail(col[name], f"'{name}': not a time in seconds: \"{s}\"")
                if rc == -2:
                    v = -1 if v < 0 else _LIMIT_CLOCK_NS + 1
                if v < 0:
                    fail(col[name], f"'{name}': negative time \"{s}\"")
                if v > _LIMIT_CLOCK_NS:
                    fail(col[name], f"'{name}': {s} s is past the clock limit of 4000000000 s")
                if st["t0"] is None:
                    st["t0"] = v
                elif abs(v - st["t0"]) > _LIMIT_SPAN_NS:
                    fail(col[name], f"'{name}': {s} s is more than 10000000 s from the trace's "
                         "first time (the span limit)")
                return v

            r, e, k, w = (integer("rank", 0), integer("epoch", 0), integer("batch", 0),
                          integer("worker", -1))
            _place(st, e, k, r, fail, col)
            v = {c: time_ns(c) for c in COLUMNS[4:9]}
            if "compute_end" in col:
                empty = fields[col["compute_end"]] == ""
                if compute_empty is None:
                    compute_empty = empty
                if empty != compute_empty:
                    fail(col["compute_end"],
                         f"'compute_end' is {'' if empty else 'not '}empty here but "
                         f"{'not ' if empty else ''}empty on line {setting_line}")
                if not empty:
                    v["compute_end"] = time_ns("compute_end")
            if "epoch_start" in col:
                v["epoch_start"] = time_ns("epoch_start")
            for c in ("samples", "workers", "prefetch", "pin_memory", "persistent"):
                if c in col:
                    v[c] = integer(c, 0)
            if "bytes" in col and _byte_count(fields[col["bytes"]]) is None:
                fail(col["bytes"], f"'bytes': not a byte count: \"{fields[col['bytes']]}\"")
            if "ckpt_start" in col and "ckpt_end" in col:
                hs, he = fields[col["ckpt_start"]] != "", fields[col["ckpt_end"]] != ""
                if hs != he:
                    a, b = ("ckpt_end", "ckpt_start") if hs else ("ckpt_start", "ckpt_end")
                    fail(col[a], f"'{a}' is empty but '{b}' is not")
                if hs:
                    cs, ce = time_ns("ckpt_start"), time_ns("ckpt_end")
                    if ce < cs:
                        fail(col["ckpt_end"], "'ckpt_end' is before 'ckpt_start'")
                    if "ckpt_bytes" in col and fields[col["ckpt_bytes"]] != "" and \
                            _byte_count(fields[col["ckpt_bytes"]]) is None:
                        fail(col["ckpt_bytes"],
                             f"'ckpt_bytes': not a byte count: \"{fields[col['ckpt_bytes']]}\"")
            has_compute = "compute_end" in col and not compute_empty
            if v["fetch_end"] < v["fetch_start"]:
                fail(col["fetch_end"], "'fetch_end' is before 'fetch_start'")
            if v["ready"] < v["request"]:
                fail(col["ready"], "'ready' is before 'request'")
            if v["iter_end"] < v["ready"]:
                fail(col["iter_end"], "'iter_end' is before 'ready'")
            if has_compute and not v["ready"] <= v["compute_end"] <= v["iter_end"]:
                fail(col["compute_end"], "'compute_end' is not between 'ready' and iter_end")
            if v["fetch_end"] > v["ready"]:
                fail(col["fetch_end"], "'fetch_end' is after 'ready' (a batch is ready once "
                     "fetched)")
            for a, b, c, what, rest in (("fetch_start", "fetch_end", "fetch_end", "fetch", ""),
                                        ("request", "ready", "ready", "wait", ""),
                                        ("ready", "iter_end", "iter_end", "iteration",
                                         " after 'ready'")):
                if v[b] - v[a] > _LIMIT_DURATION_NS:
                    fail(col[c], f"'{c}': the {what} takes {(v[b] - v[a]) / 1e9:.6f} s{rest}, "
                         "more than the duration limit of 1e6 s")
            # one loader configuration; per rank, batches follow each other; epoch_start
            for c in ("workers", "prefetch", "pin_memory", "persistent"):
                if c not in col:
                    continue
                if st["rows"] == 0:
                    setting[c] = v[c]
                elif v[c] != setting[c]:
                    fail(col[c], f"'{c}' is {v[c]} here but {setting[c]} on line {setting_line} "
                         "(one loader configuration per trace)")
            if st["rows"] == 0:
                setting_line = where["line"]
            req = v["request"]
            if r in last_iter_end and req < last_iter_end[r]:
                fail(col["request"], f"'request' is before the 'iter_end' of rank {r}'s previous "
                     f"batch on line {last_line[r]} (batches must follow each other)")
            if "epoch_start" in col:
                es = v["epoch_start"]
                if k == 0:
                    epoch_start[r] = es
                if es > req:
                    fail(col["epoch_start"], "'epoch_start' is after this batch's 'request'")
                if es != epoch_start.get(r):
                    fail(col["epoch_start"],
                         f"'epoch_start' differs from batch 0 of epoch {e} on rank {r}")
                if k == 0 and r in last_iter_end and es < last_iter_end[r]:
                    fail(col["epoch_start"], "'epoch_start' is before the previous epoch's last "
                         f"'iter_end' (line {last_line[r]})")
            last_iter_end[r] = v["iter_end"]
            last_line[r] = where["line"]
            if "workers" in col and w >= max(setting["workers"], 1):
                fail(col["worker"], f"'worker' is {w} but 'workers' is {setting['workers']} (ids "
                     f"run from 0 to {max(setting['workers'] - 1, 0)})")
            if "workers" in col and "prefetch" in col and setting["workers"] > 0 and \
                    setting["prefetch"] == 0:
                fail(col["prefetch"], f"'prefetch' is 0 but 'workers' is {setting['workers']} (a "
                     "DataLoader with workers prefetches prefetch_factor >= 1 batches each; 0 is "
                     "for a loader without workers)")
            for c in CPU_COLUMNS[:-2]:
                if c in col and fields[col[c]] != "":
                    rc, ns, _ = _decimal(fields[col[c]], 9)
                    if rc != 0 or ns < 0 or ns > _LIMIT_DURATION_NS:
                        fail(col[c], f"'{c}': not a CPU time in seconds (0 to 1e6): "
                             f"\"{fields[col[c]]}\"")
            for c in CPU_COLUMNS[-2:]:
                if c in col and fields[col[c]] != "":
                    x = integer(c, 1)
                    if cpu_once.setdefault(c, x) != x:
                        fail(col[c], f"'{c}' is {x} here but {cpu_once[c]} above (one value per "
                             "trace)")
            st["rows"] += 1
            last_row_line = where["line"]
        if head is None:
            raise _Bad(f"{path}:1: empty file (no header)")
        if st["rows"] == 0:
            raise _Bad(f"{path}:2: empty trace (no rows)")
        ranks = st["ranks"] or st["r"] + 1
        if st["r"] + 1 != ranks:
            raise _Bad(f"{path}:{last_row_line}: the last batch has {st['r'] + 1} rows for "
                       f"{ranks} ranks")
        batches = st["batches"] or st["k"] + 1
        if st["k"] + 1 != batches:
            raise _Bad(f"{path}:{last_row_line}: the last epoch has {st['k'] + 1} batches, "
                       f"epoch 0 has {batches}")


def _place(st, e, k, r, fail, col):
    """The row's place in the (epoch, batch, rank) grid (tidy_place)."""
    if st["rows"] == 0:
        if (e, k, r) != (0, 0, 0):
            fail(None, "the first row must be rank 0, epoch 0, batch 0")
    elif (e, k, r) == (st["e"], st["k"], st["r"] + 1):
        if st["ranks"] and r >= st["ranks"]:
            fail(col["rank"], f"rank {r} is beyond the known ranks of the first batch")
    elif (e, k, r) == (st["e"], st["k"] + 1, 0):
        if st["ranks"] == 0:
            st["ranks"] = st["r"] + 1
        elif st["r"] + 1 != st["ranks"]:
            fail(None, "batch before this line has fewer rows than there are ranks (ranks "
                 "disagree on batches, or rows are unsorted)")
    elif (e, k, r) == (st["e"] + 1, 0, 0):
        if st["ranks"] == 0:
            st["ranks"] = st["r"] + 1
        elif st["r"] + 1 != st["ranks"]:
            fail(None, "batch before this line has fewer rows than there are ranks")
        if st["batches"] == 0:
            st["batches"] = st["k"] + 1
        elif st["k"] + 1 != st["batches"]:
            fail(None, "the epoch before this line has a different batch count than epoch 0 "
                 "(ranks must agree on batches per epoch)")
    elif r != st["r"] and (e < st["e"] or (e == st["e"] and k < st["k"])):
        fail(col["rank"], f"rank {r} starts over at epoch {e}, batch {k}: rows are in per-rank "
             "order (per-rank files concatenated?); merge the per-rank files with `python3 "
             "tools/stallsim_capture.py merge trace.csv trace_rank*.csv`")
    else:
        fail(None, f"row (rank {r}, epoch {e}, batch {k}) out of order or duplicated: rows must "
             "be sorted by (epoch, batch, rank) with no gaps")
    st["e"], st["k"], st["r"] = e, k, r


def _as_int(s):
    """An integer column's value (any notation the reader takes: 16, 1.6e1, 16.0)."""
    try:
        return int(decimal.Decimal(s.strip(" \t")))
    except (decimal.InvalidOperation, ValueError, TypeError):
        raise ValueError(f"not an integer: {s!r}") from None




def read_rows(path):
    """(header, rows as dicts) of a tidy CSV. Raises ValueError naming the file (and line) for
    an empty file, a header that is not tidy, and a row whose field count is not the header's
    (a rank killed while writing leaves its last line cut short)."""
    # utf-8-sig: a byte order mark is read as stallsim reads it (skipped).
    with open(path, newline="", encoding="utf-8-sig") as fh:
        text = fh.read()
    if not text.strip():
        raise ValueError(f"{path}: empty file (no header): the rank wrote nothing (it was "
                         "killed before its first epoch ended?); leave it out or run again")
    rd = csv.reader(io.StringIO(text, newline=""))
    head = next(rd)
    skip = 1 if head[:1] == [""] and len(head) > 1 else 0  # pandas' unnamed index column
    if head[skip:skip + 9] != COLUMNS[:9]:
        raise ValueError(f"{path}: header does not start with the tidy columns {COLUMNS[:9]}")
    rows = []
    start = rd.line_num + 1
    for fields in rd:
        line, start = start, rd.line_num + 1
        if not fields:
            continue  # a blank line
        # The Recorder ends every line with a newline: a last line without one was cut short
        # (a rank killed while writing), even where its field count came out right.
        cut = not text.endswith(("\n", "\r")) and rd.line_num == text.count("\n") + 1
        if len(fields) != len(head) or cut:
            raise ValueError(f"{path}:{line}: " + (
                f"row has {len(fields)} fields, the header {len(head)}" if not cut else
                f"the last line ({len(fields)} of {len(head)} fields) has no newline at its "
                "end: it was cut short (the rank was killed while writing it?); delete that "
                "line (merge then leaves out the epoch it cut short), or end a file made by "
                "hand with a newline"))
        rows.append(dict(zip(head[skip:], fields[skip:])))
    return head[skip:], rows


def _complete_epochs(rows, notes):
    """The rows of the epochs that ran to the end, each rank's renumbered from 0.

    stallsim reads a trace whose epochs all hold the same batches; an epoch the loop left early
    (Ctrl-C, an exception, a break, or a peek such as next(iter(loader)) before training) holds
    fewer than the others and made the whole trace unreadable. An epoch is complete when it
    holds the most batches any (rank, epoch) holds; the others are left out, and where ranks
    then keep different counts of epochs, each keeps the fewest any keeps. Where some rank has
    no complete epoch (ranks that differ in batches per epoch), nothing is left out: the checks
    name the problem. What was left out is appended to `notes`."""
    count = {}
    for r in rows:
        key = (_as_int(r["rank"]), _as_int(r["epoch"]))
        count[key] = count.get(key, 0) + 1
    full = max(count.values(), default=0)
    kept = {}  # rank -> its complete epochs, in order
    for (rank, ep), n in sorted(count.items()):
        kept.setdefault(rank, [])
        if n == full:
            kept[rank].append(ep)
    if all(n == full for n in count.values()) or not all(kept.values()):
        return rows
    epochs = min(len(eps) for eps in kept.values())
    new = {(rank, ep): i for rank, eps in kept.items() for i, ep in enumerate(eps[:epochs])}
    short = [f"rank {rank} epoch {ep} ({n} of {full} batches)"
             for (rank, ep), n in sorted(count.items()) if n < full]
    if short:
        notes.append("left out the epochs cut short (the loop left the loader early: Ctrl-C, an "
                     "exception, a break, or a peek such as next(iter(loader))): "
                     + ", ".join(short) + "; each rank's epochs renumbered from 0")
    cut = [f"rank {rank} epoch {ep}" for rank, eps in kept.items() for ep in eps[epochs:]]
    if cut:
        notes.append(f"left out, to keep {epochs} complete epoch(s) on every rank (the fewest "
                     "any rank has): " + ", ".join(cut))
    out = []
    for r in rows:
        i = new.get((_as_int(r["rank"]), _as_int(r["epoch"])))
        if i is not None:
            r = dict(r)
            r["epoch"] = str(i)
            out.append(r)
    return out


def _rank_status(path):
    """A rank file's status: "closed", "open" (or whatever else PATH.status says first), or
    None when it has no PATH.status (a file written by hand, or by a capture tool from before
    the status)."""
    try:
        with open(status_path(path)) as fh:
            words = fh.read().split()
    except FileNotFoundError:
        return None
    return words[0].rstrip(":") if words else "empty"


def _closing(in_paths, salvage, notes):
    """Whether the inputs' runs closed (rec.close() in order): None when all did, else the
    line that says which did not. Refuses (ValueError) a rank file without "closed" beside it
    unless `salvage`. Where no input has its PATH.status and none is in their folders, the
    files are an older capture tool's, which wrote none: taken as they are, which is said in
    `notes`."""
    status = {p: _rank_status(p) for p in in_paths}
    if all(v is None for v in status.values()):
        folders = {os.path.dirname(os.path.abspath(p)) for p in in_paths}
        if not any(f.endswith(".csv" + STATUS_SUFFIX) for d in folders
                   for f in (os.listdir(d) if os.path.isdir(d) else ())):
            notes.append(f"no rank file has a {STATUS_SUFFIX} file beside it (written by hand "
                         "or by a capture tool from before the status): whether the run ended "
                         "with rec.close() cannot be told; merged as given")
            return None
    # (a file that is not there is named by read_rows)
    cut = [p for p, v in status.items() if v != "closed" and os.path.exists(p)]
    if not cut:
        return None
    p = cut[0]
    why = (f"{os.path.basename(status_path(p))} says '{status[p]}'" if status[p] is not None
           else f"no {os.path.basename(status_path(p))} beside it")
    line = (f"{p}: the run did not close ({why}): it crashed or was killed before rec.close(), "
            "and its trace is cut short")
    if len(cut) > 1:
        line += f" ({len(cut) - 1} other rank file(s) did not close either)"
    if not salvage:
        raise ValueError(f"{line}; to merge what it recorded anyway, give {SALVAGE_OPTION}")
    return line


def merge(out_path, in_paths, notes=None, salvage=False):
    """Merge per-rank CSVs into one tidy CSV sorted by (epoch, batch, rank). Returns row count.

    Refuses (ValueError, nothing written) a rank file whose run did not close (PATH.status
    beside it does not say "closed": it crashed or was killed before rec.close()), unless
    `salvage`: then the merged trace is marked cut (OUT.cut beside it, also said in `notes`).
    Rank files without any status (an older capture tool's) are merged as given. Refuses
    (ValueError, nothing written) inputs that cannot be one run's ranks: headers that
    differ, a rank in more than one input (the same file twice, or a merged trace again), loader
    settings that differ, or inputs further apart in time than either lasts (the ranks of one run
    train at the same time; the format carries no run id), an empty input or one without rows,
    a row cut short (read_rows), and ranks that are not 0 to N-1. Leaves out the epochs cut short
    (_complete_epochs), saying so in `notes` (a list) when given. The output is written whole
    or not at all; so is OUT.cut, written before it, or removed after it (a stale one)."""
    notes = notes if notes is not None else []
    cut = _closing(in_paths, salvage, notes)
    header = None
    rows = []
    owner = {}  # rank -> the input it came from
    spans = []  # per input: (first time, last time, path)
    settings = None
    for p in in_paths:
        head, rs = read_rows(p)
        if header is None:
            header = head
        elif head != header:
            raise ValueError(f"{p}: header differs from {in_paths[0]}")
        if not rs:
            raise ValueError(f"{p}: no rows: the rank recorded no batch (did its loop iterate "
                             "over the loader rec.dataloader() returned?); leave it out or run "
                             "again")
        mine = set()
        for i, r in enumerate(rs, start=2):
            try:
                rank = _as_int(r["rank"])
            except ValueError as e:
                raise ValueError(f"{p}:{i}: 'rank': {e}") from None
            mine.add(rank)
        for rank in sorted(mine):
            if rank in owner:
                same = os.path.abspath(owner[rank]) == os.path.abspath(p)
                raise ValueError(f"{p}: rank {rank} is also in {owner[rank]}"
                                 + (" (the same file given twice)" if same else "")
                                 + ": each rank once, from one run")
            owner[rank] = p
        if rs:
            got = {c: rs[0][c] for c in ("workers", "prefetch", "pin_memory", "persistent")
                   if c in head}
            if settings is None:
                settings = (got, p)
            else:
                for c, v in got.items():
                    if _as_int(v) != _as_int(settings[0][c]):
                        raise ValueError(f"{p}: '{c}' is {v} but {settings[0][c]} in "
                                         f"{settings[1]}: files from different runs?")
            try:
                lo = min(float(r[c]) for r in rs for c in ("fetch_start", "request"))
                hi = max(float(r["iter_end"]) for r in rs)
            except (ValueError, TypeError):
                lo = hi = None  # check and stallsim name the bad value
            if lo is not None:
                for lo2, hi2, q in spans:
                    # the ranks of one run train together: their spans overlap (or, for ranks
                    # recorded one after the other, nearly meet)
                    if max(lo, lo2) - min(hi, hi2) > max(hi - lo, hi2 - lo2):
                        raise ValueError(f"{p}: its times ({lo:.6f} to {hi:.6f} s) are further "
                                         f"from those of {q} ({lo2:.6f} to {hi2:.6f} s) than "
                                         "either lasts: files from different runs?")
                spans.append((lo, hi, p))
        rows.extend(rs)
    if header is None:
        raise ValueError("merge: no input files")
    missing = sorted(set(range(max(owner) + 1)) - set(owner))
    if missing:
        raise ValueError(f"rank {missing[0]} is missing (ranks "
                         f"{', '.join(map(str, sorted(owner)))} given; stallsim reads ranks 0 "
                         "to N-1): give every rank's file")
    try:
        rows.sort(key=lambda r: (_as_int(r["epoch"]), _as_int(r["batch"]), _as_int(r["rank"])))
    except ValueError as e:
        raise ValueError(f"merge: {e} in an epoch, batch or rank column") from None
    rows = _complete_epochs(rows, notes)
    rows.sort(key=lambda r: (_as_int(r["epoch"]), _as_int(r["batch"]), _as_int(r["rank"])))
    made = _makedirs(os.path.dirname(out_path))
    # The mark goes first: a crash between the two leaves a trace taken for cut, never a
    # cut trace taken for whole. An error or an interrupt (Ctrl-C, SIGTERM) between them puts
    # the earlier mark (or none) back, so that an earlier whole OUT.csv is not taken for cut.
    mark = out_path + CUT_SUFFIX
    try:
        with open(mark) as fh:
            old_mark = fh.read()
    except FileNotFoundError:
        old_mark = None
    tmp = f"{out_path}.tmp{os.getpid()}"
    placed = False
    try:
        if cut is not None:
            _write_whole(mark, f"cut: merged with {SALVAGE_OPTION}: {cut}\n")
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            for r in rows:
                w.writerow([r[c] for c in header])
        os.replace(tmp, out_path)
        placed = True
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        if not placed and cut is not None:
            with contextlib.suppress(OSError):
                if old_mark is None:
                    os.remove(mark)
                else:
                    _write_whole(mark, old_mark)
        for d in reversed(made):  # the folders it made for OUT.csv, if still empty
            with contextlib.suppress(OSError):
                os.rmdir(d)
        raise
    if cut is None:
        with contextlib.suppress(FileNotFoundError):
            os.remove(out_path + CUT_SUFFIX)
    else:
        notes.append(f"the trace is marked cut ({out_path}{CUT_SUFFIX}): {cut}")
    return len(rows)


def cut_note(path):
    """What PATH.cut beside a merged trace says (a run merged with --salvage-cut), or None."""
    try:
        with open(path + CUT_SUFFIX) as fh:
            return fh.read().strip() or "cut"
    except FileNotFoundError:
        return None


def check(path):
    """Checks a merged trace as stallsim's reader does; returns (problems, epoch_times per epoch).

    problems: the first problem stallsim's tidy reader would report, worded as it words it
    ("FILE:LINE:COLUMN: ..."), or []. Epoch time = max over ranks of (last iter_end -
    epoch_start), when the trace has epoch_start.
    """
    bad = reader_checks(path)
    if bad:
        return [bad], []
    head, rows = read_rows(path)
    per = {}
    for r in rows:
        key = (_as_int(r["epoch"]), _as_int(r["rank"]))
        e = per.setdefault(key, {"start": None, "last": -math.inf})
        if r.get("epoch_start"):
            e["start"] = float(r["epoch_start"])
        e["last"] = max(e["last"], float(r["iter_end"]))
    epochs = {}
    for (ep, _), e in sorted(per.items()):
        epochs.setdefault(ep, []).append(e)
    times = [max(e["last"] - e["start"] for e in lst) for _, lst in sorted(epochs.items())
             if all(e["start"] is not None for e in lst)]
    return [], times


def summary(path, skip=1):
    """Means (ms) over a merged trace, leaving out the first `skip` batches of each epoch
    (they carry worker start-up): fetch duration, stall, compute (ready..compute_end),
    post-compute (compute_end..iter_end), iteration time (iter_end - previous iter_end)."""
    _, rows = read_rows(path)
    acc = {k: [] for k in ("fetch", "stall", "compute", "post", "iter")}
    prev = {}
    for r in rows:
        f = lambda c: float(r[c])
        key = (_as_int(r["rank"]), _as_int(r["epoch"]))
        if _as_int(r["batch"]) >= skip:
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
    usage = (f"usage: stallsim_capture.py merge [{SALVAGE_OPTION}] OUT.csv IN.csv [IN.csv ...]\n"
             "       stallsim_capture.py check TRACE.csv")
    salvage = argv[:1] == ["merge"] and SALVAGE_OPTION in argv
    if salvage:
        argv = [a for a in argv if a != SALVAGE_OPTION]
    if len(argv) >= 3 and argv[0] == "merge":
        notes = []
        n = None
        _on_interrupt.sig = signal.SIGINT
        signal.signal(signal.SIGINT, _on_interrupt)
        signal.signal(signal.SIGTERM, _on_interrupt)
        try:
            n = merge(argv[1], argv[2:], notes, salvage=salvage)
            for note in notes:
                print(f"stallsim_capture.py merge: {note}")
            print(f"wrote {argv[1]}: {n} rows")
            return 0
        except KeyboardInterrupt:
            return _die_of(_on_interrupt.sig, f"stallsim_capture.py merge: interrupted; "
                           + (f"{argv[1]} written whole" if n is not None
                              else f"{argv[1]} left as it was"))
        except (ValueError, OSError, csv.Error) as e:
            print(f"stallsim_capture.py merge: {e}; nothing written", file=sys.stderr)
            return 1
        finally:  # a signal after this ends it as usual, without a traceback
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if len(argv) == 2 and argv[0] == "check":
        try:
            bad, times = check(argv[1])
        except (ValueError, OSError, csv.Error) as e:
            print(e)
            print("1 problem(s)")
            return 1
        for b in bad:
            print(b)
        if bad:
            print(f"{len(bad)} problem(s)")
            return 1
        cut = cut_note(argv[1])
        if cut is not None:
            print(f"{argv[1]}{CUT_SUFFIX}: {cut}")
        print("epoch times (s): " + ", ".join(f"{t:.3f}" for t in times))
        m = summary(argv[1])
        # '-' where the trace has nothing to average (compute and post without compute_end)
        print("means without batch 0 (ms): " + ", ".join(
            f"{k} {v:.1f}" if not math.isnan(v) else f"{k} -" for k, v in m.items()))
        print("OK" if not bad else f"{len(bad)} problem(s)")
        return 0 if not bad else 1
    print(usage, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

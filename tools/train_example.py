#!/usr/bin/env python3
"""train_example: a small CPU training job that records a stallsim `tidy` trace.

A small CNN is trained on synthetic 32x32 images. Each sample costs real work in the DataLoader
worker: a sleep standing for I/O (--io-ms) and real CPU work standing for decoding/augmentation
(--cpu-ms: numpy blur/normalise/crop/flip repetitions, calibrated once at start-up to about that
much CPU time per sample). --ddp N runs N ranks on CPU with the gloo backend, each with a
DistributedSampler, and all-reduces gradients by hand after the local backward (--sync manual,
the default) so that compute_end is a clean pre-synchronisation time; --sync ddp uses
DistributedDataParallel and takes compute_end from its communication hook instead. --device cuda
trains on the GPU (one process: no --ddp), copies each batch with non_blocking=True and
synchronises before compute_end, as docs/capture.md asks of GPU runs.

    /usr/bin/python3 tools/train_example.py --workers 2 --batches 60 --epochs 3 --out traces/w2

writes OUT/trace.csv (merged, sorted) and OUT/meta.json, and prints the epoch times.
"""

import argparse
import json
import os
import shlex
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stallsim_capture as sc  # noqa: E402

IMG = 40     # stored ("decoded") image side; a random 32x32 crop is trained on
CROP = 32
CLASSES = 10


def _transform_rep(img):
    """One repetition of the CPU work: 3x3 box blur, then normalisation."""
    b = img.copy()
    b[:, 1:-1, 1:-1] = (img[:, :-2, 1:-1] + img[:, 2:, 1:-1] + img[:, 1:-1, :-2] +
                        img[:, 1:-1, 2:] + img[:, 1:-1, 1:-1]) * 0.2
    return (b - b.mean()) / (b.std() + 1e-6)


def rep_cost_s():
    """CPU seconds of one _transform_rep, measured here (thread CPU time, 400 repetitions)."""
    img = np.random.default_rng(0).random((3, IMG, IMG), dtype=np.float32)
    for _ in range(20):
        img = _transform_rep(img)
    n = 400
    t0 = time.thread_time()
    for _ in range(n):
        img = _transform_rep(img)
    return (time.thread_time() - t0) / n


def calibrate(cpu_ms, per=None):
    """Repetitions of _transform_rep that take about cpu_ms of CPU time."""
    if cpu_ms <= 0:
        return 0
    per = per or rep_cost_s()
    return max(1, round(cpu_ms / 1e3 / per))


class SyntheticImages(torch.utils.data.Dataset):
    """Sample i: sleep io_ms ('read'), build a class-dependent noisy image ('decode'),
    then `reps` blur/normalise repetitions, a random crop and a flip ('augment')."""

    def __init__(self, n, io_ms, reps):
        self.n, self.io_s, self.reps = n, io_ms / 1e3, reps

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.io_s > 0:
            time.sleep(self.io_s)
        rng = np.random.default_rng(i)
        label = i % CLASSES
        img = rng.random((3, IMG, IMG), dtype=np.float32)
        img[label % 3] += 0.5 * (label / CLASSES)          # something learnable
        for _ in range(self.reps):
            img = _transform_rep(img)
        y0, x0 = rng.integers(0, IMG - CROP + 1, size=2)
        img = img[:, y0:y0 + CROP, x0:x0 + CROP]
        if rng.random() < 0.5:
            img = img[:, :, ::-1]
        return torch.from_numpy(np.ascontiguousarray(img)), label


class FileImages(torch.utils.data.Dataset):
    """Sample i is the real file ROOT/sample-i.bin (--data-dir), read whole in the worker: from
    the local disk (through the page cache), or with --http from a slowstore server on the
    loopback through a local disk cache of at most cache_bytes that keeps what it admitted
    (files are admitted while they fit, none is evicted). Its first 4800 bytes become the
    image ('decode'), then the same CPU work as SyntheticImages. bytes_read counts the bytes
    this process read, whatever the tier (the capture's `bytes` column)."""

    def __init__(self, root, n, reps, url_port=None, cache_dir=None, cache_bytes=0, used=None,
                 write_s=None):
        self.root, self.n, self.reps = root, n, reps
        self.port, self.cache_dir, self.cache_bytes, self.used = url_port, cache_dir, cache_bytes, used
        self.write_s = write_s
        self.bytes_read = 0
        self._conn, self._pid = None, None

    def __len__(self):
        return self.n

    def _get(self, name):
        import http.client
        if self._pid != os.getpid():          # one keep-alive connection per process
            import socket
            self._conn, self._pid = http.client.HTTPConnection("127.0.0.1", self.port), os.getpid()
            self._conn.connect()
            self._conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._conn.request("GET", "/" + name)
        r = self._conn.getresponse()
        data = r.read()
        if r.status != 200:
            raise OSError(f"slowstore: {name}: HTTP {r.status}")
        return data

    def read(self, i):
        name = f"sample-{i:06d}.bin"
        if self.port is None:
            with open(os.path.join(self.root, name), "rb") as fh:
                return fh.read()
        cached = os.path.join(self.cache_dir, name) if self.cache_dir else None
        if cached and os.path.exists(cached):
            with open(cached, "rb") as fh:
                return fh.read()
        data = self._get(name)
        if cached and self.cache_bytes > 0:
            with self.used.get_lock():
                admit = self.used.value + len(data) <= self.cache_bytes
                if admit:
                    self.used.value += len(data)
            if admit:
                t0 = time.perf_counter()
                tmp = f"{cached}.tmp{os.getpid()}"
                with open(tmp, "wb") as fh:
                    fh.write(data)
                os.replace(tmp, cached)
                if self.write_s is not None:   # the admission write's own time (meta.json)
                    with self.write_s.get_lock():
                        self.write_s.value += time.perf_counter() - t0
        return data

    def __getitem__(self, i):
        data = self.read(i)
        self.bytes_read += len(data)
        rng = np.random.default_rng(i)
        label = i % CLASSES
        img = np.frombuffer(data[:3 * IMG * IMG], dtype=np.uint8).reshape(3, IMG, IMG)
        img = img.astype(np.float32) / 255.0
        img[label % 3] += 0.5 * (label / CLASSES)
        for _ in range(self.reps):
            img = _transform_rep(img)
        y0, x0 = rng.integers(0, IMG - CROP + 1, size=2)
        img = img[:, y0:y0 + CROP, x0:x0 + CROP]
        if rng.random() < 0.5:
            img = img[:, :, ::-1]
        return torch.from_numpy(np.ascontiguousarray(img)), label


def make_files(root, n, sample_kb):
    """n files of sample_kb KB (1000 bytes) of seeded random bytes; kept when already there."""
    os.makedirs(root, exist_ok=True)
    size = int(sample_kb * 1000)
    rng = np.random.default_rng(1)
    for i in range(n):
        path = os.path.join(root, f"sample-{i:06d}.bin")
        if os.path.exists(path) and os.path.getsize(path) == size:
            continue
        with open(path, "wb") as fh:
            fh.write(rng.integers(0, 256, size=size, dtype=np.uint8).tobytes())


def resident_bytes(paths):
    """Bytes of these files in the page cache, by fincore(1) (mincore(2))."""
    import subprocess
    out = subprocess.run(["fincore", "--bytes", "--noheadings", "--raw", "-o", "RES"] + paths,
                         check=True, capture_output=True, text=True).stdout
    return sum(int(x) for x in out.split())


def disk_read_mb_s(folder, mb=64):
    """The disk's cold read speed: a file of mb MB written, flushed, evicted from the page cache
    and read back whole in 1 MB reads (MB = 1e6 bytes/s); the file is removed."""
    path = os.path.join(folder, ".disk-probe")
    with open(path, "wb") as fh:
        fh.write(np.random.default_rng(2).integers(0, 256, size=mb * 1000000, dtype=np.uint8))
        fh.flush()
        os.fsync(fh.fileno())
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        t0 = time.perf_counter()
        while os.read(fd, 1 << 20):
            pass
        dt = time.perf_counter() - t0
    finally:
        os.close(fd)
        os.remove(path)
    return mb / dt


def set_page_cache(paths, evict_frac):
    """Read every file (warm), then evict the first evict_frac of them from the page cache with
    posix_fadvise(POSIX_FADV_DONTNEED) (no root needed). Returns (resident before, after)."""
    for path in paths:
        with open(path, "rb") as fh:
            fh.read()
    before = resident_bytes(paths)
    cut = round(evict_frac * len(paths))
    for path in paths[:cut]:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return before, resident_bytes(paths)


class SmallCNN(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.c1 = nn.Conv2d(3, width, 3, padding=1)
        self.c2 = nn.Conv2d(width, 2 * width, 3, padding=1)
        self.fc = nn.Linear(2 * width * (CROP // 4) ** 2, CLASSES)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.fc(x.flatten(1))


def allreduce_grads(model, world):
    """Average gradients over the ranks with one all-reduce of a flat buffer."""
    import torch.distributed as dist
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    flat = torch.cat([g.reshape(-1) for g in grads])
    dist.all_reduce(flat)
    flat /= world
    off = 0
    for g in grads:
        n = g.numel()
        g.copy_(flat[off:off + n].view_as(g))
        off += n


def _cpu_busy_s():
    """Busy CPU seconds of the whole machine so far (all processes), from /proc/stat."""
    try:
        with open("/proc/stat") as fh:
            v = [int(x) for x in fh.readline().split()[1:]]
    except OSError:
        return float("nan")
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _own_cpu_s():
    import resource
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def wait_idle(max_s, busy_cores=0.3):
    """Wait (at most max_s) until the machine's other load is below busy_cores for 2 s."""
    t_end = time.time() + max_s
    while time.time() < t_end:
        b0 = _cpu_busy_s()
        time.sleep(2.0)
        if (_cpu_busy_s() - b0) / 2.0 < busy_cores:
            return True
    return False


def run_rank(rank, a, reps):
    world = max(1, a.ddp)
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    if a.ddp >= 1:
        import torch.distributed as dist
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{a.port}",
                                rank=rank, world_size=world)
    if a.data_dir:
        ds = FileImages(a.data_dir, dataset_samples(a), reps, url_port=a.store_port,
                        cache_dir=a.cache_dir, cache_bytes=int(a.cache_mb * 1e6), used=a.cache_used,
                        write_s=a.cache_write_s)
    else:
        ds = SyntheticImages(dataset_samples(a), a.io_ms, reps)
    if a.ddp >= 1:
        sampler = torch.utils.data.distributed.DistributedSampler(
            ds, num_replicas=world, rank=rank, shuffle=True, seed=0)
    else:
        sampler = torch.utils.data.RandomSampler(ds, generator=torch.Generator().manual_seed(0))
    rec = sc.Recorder(rank=rank, path=os.path.join(a.out, f"trace_rank{rank}.csv"),
                      ranks_per_node=world)
    if a.pin_ranks:
        # Every thread of this rank (gloo's included) and the workers it forks on one core,
        # rank % cores: no migrations between cores (the Recorder has noted the node's cores).
        cpus = sorted(os.sched_getaffinity(0))
        for tid in os.listdir("/proc/self/task"):
            try:
                os.sched_setaffinity(int(tid), {cpus[rank % len(cpus)]})
            except OSError:  # the thread ended meanwhile
                pass
    kw = dict(batch_size=a.batch_size, sampler=sampler, num_workers=a.workers,
              pin_memory=a.pin_memory)
    if a.workers > 0:
        kw.update(prefetch_factor=a.prefetch, persistent_workers=a.persistent_workers,
                  multiprocessing_context=a.mp_context)
    loader = rec.dataloader(ds, **kw)

    dev = torch.device(a.device)
    model = SmallCNN(a.width).to(dev)
    sync = a.sync if a.ddp >= 1 else "none"
    if sync == "ddp":
        model = nn.parallel.DistributedDataParallel(model)   # no buffers: no forward broadcast
        rec.attach_ddp(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    losses = []
    slow = a.slow_factor if (a.slow_rank is not None and rank == a.slow_rank) else 1.0
    step = 0
    if a.ckpt_every > 0:  # the padding exists before training, as a model's parameters do
        global _PAD
        _PAD = torch.ones(int(a.ckpt_mb * 1e6) // 4)
    for epoch in range(a.epochs):
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(epoch)
        total, n = 0.0, 0
        for x, y in loader:
            rec_t0 = time.time()
            if dev.type == "cuda":
                x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if dev.type == "cuda":
                torch.cuda.synchronize()    # the GPU's work is done: compute_end means it
            if a.compute_sleep_ms > 0:
                # Accelerator time: the host waits, its cores are free for others.
                time.sleep(a.compute_sleep_ms / 1e3)
            if slow > 1.0:
                # A slower accelerator on this rank: its forward+backward takes slow x as long.
                # A sleep, not CPU work, as a slower GPU would not take host cores either.
                time.sleep((slow - 1.0) * (time.time() - rec_t0))
            if sync != "ddp":
                rec.compute_end()           # with ddp the comm hook supplies it
            if sync == "manual":
                allreduce_grads(model, world)
                rec.sync_end()              # the all-reduce's CPU time: sync_cpu
            opt.step()
            rec.iter_end()
            step += 1
            if a.ckpt_every > 0 and step % a.ckpt_every == 0:
                save_checkpoint(rec, a, rank, model, opt)
            total += loss.item()
            n += 1
        losses.append(total / max(1, n))
    rec.close()
    if a.ddp >= 1:
        import torch.distributed as dist
        dist.barrier()
        dist.destroy_process_group()
    if rank == 0:
        print("mean loss per epoch: " + ", ".join(f"{v:.3f}" for v in losses), flush=True)


_PAD = None  # the checkpoint's padding, made on the first save


def save_checkpoint(rec, a, rank, model, opt):
    """Synchronous torch.save of the model, optimizer and --ckpt-mb MB of padding (standing for a
    larger model's state, made once like a model's parameters: allocating it per checkpoint took
    0.1-0.2 s outside the timed span), flushed to disk (fsync), every rank to its own file."""
    path = os.path.join(a.out, f"ckpt_rank{rank}.pt")
    global _PAD
    if _PAD is None:
        _PAD = torch.ones(int(a.ckpt_mb * 1e6) // 4)
    pad = _PAD
    with rec.checkpoint(path):
        with open(path, "wb") as fh:
            torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "pad": pad}, fh)
            fh.flush()
            os.fsync(fh.fileno())


def dataset_samples(a):
    """L: the dataset's samples, --samples, else --batches x --batch-size x ranks."""
    return a.samples if a.samples else a.batches * a.batch_size * max(1, a.ddp)


def rank_batches(a):
    """Batches per rank and epoch: DistributedSampler gives each of G ranks ceil(L / G) samples
    (padding by repeating some), the DataLoader makes batches of --batch-size, the last partial."""
    per = -(-dataset_samples(a) // max(1, a.ddp))
    return -(-per // a.batch_size), per


def _spawn_entry(rank, a, reps):
    run_rank(rank, a, reps)


def _storage_words(a, meta):
    st = meta.get("storage", {})
    if a.http:
        return (f"over HTTP from tools/slowstore.py on 127.0.0.1: {a.bandwidth_mb_s:g} MB/s shared, "
                f"{a.latency_ms:g} ms per request, through a local disk cache of {a.cache_mb:g} MB "
                f"that keeps what it admitted, empty at the start")
    if a.evict is not None:
        return (f"from the local disk; before epoch 0 a fraction {a.evict:g} of the files was "
                f"evicted from the page cache, {st.get('resident_at_start_bytes')} of "
                f"{st.get('files', 0) * st.get('file_bytes', 0)} bytes stayed resident (fincore)")
    return "from the local disk, as the page cache holds it"


def write_readme(a, meta, nrows):
    world = max(1, a.ddp)
    m = meta["means_ms_without_batch0"]
    lines = [
        f"# {os.path.basename(a.final_out)}: real trace from tools/train_example.py",
        "",
        "Command (from the repository root):",
        "",
        "    " + meta["command"],
        "",
        f"- torch {meta['torch']}, numpy {meta['numpy']}, Python {meta['python']}, "
        f"{meta['cpu_cores']} CPU cores, "
        + (f"training on {meta['gpu']} (CUDA {meta['cuda']})." if meta.get("gpu") else "CPU only."),
        f"- {world} rank(s); {a.workers} DataLoader worker(s) per rank, prefetch_factor "
        f"{a.prefetch if a.workers else 0}, pin_memory {('on (pinned)' if meta.get('gpu') else 'on (no CUDA: not pinned)') if a.pin_memory else 'off'}, "
        f"persistent workers {'on' if a.persistent_workers else 'off'}, worker start method "
        f"{a.mp_context}.",
        (f"- dataset: {a.samples} samples (--samples), split by DistributedSampler: "
         f"{rank_batches(a)[1]} per rank (ceil({a.samples} / {world})), {rank_batches(a)[0]} "
         f"batches, the last of {rank_batches(a)[1] - (rank_batches(a)[0] - 1) * a.batch_size}."
         if a.samples else "- dataset: --batches x --batch-size x ranks samples."),
        f"- per epoch per rank: {rank_batches(a)[0]} batches of {a.batch_size} samples; per sample "
        + (f"one real file of {a.sample_kb:g} KB read whole ({_storage_words(a, meta)})"
           if a.data_dir else f"{a.io_ms:g} ms sleep (I/O)")
        + f" + {meta['cpu_reps_per_sample']} transform repetitions "
        f"(CPU work: {meta['cpu_ms_per_sample_est']:g} ms of CPU time, measured at start-up).",
        f"- compute: a CNN of width {a.width}, {a.threads} torch thread(s) per rank"
        + (f", then {a.compute_sleep_ms:g} ms of sleep (accelerator time) after each backward."
           if a.compute_sleep_ms > 0 else "."),
        f"- gradient sync: {('none (one process)' if a.ddp < 1 else a.sync)}; compute_end = "
        f"{meta['compute_end']}.",
        (f"- straggler: rank {a.slow_rank}'s forward+backward is stretched {a.slow_factor:g}x "
         f"(a sleep after backward, standing for a slower GPU)." if a.slow_rank is not None
         else "- no straggler: every rank computes at the same speed."),
        f"- {nrows} rows; consistency checks (`stallsim_capture.py check`): "
        f"{'passed' if meta['checks_passed'] else 'FAILED'}.",
        f"- CPU used by other processes during the run: {meta['other_cpu_s']} s "
        f"(this run: {meta['own_cpu_s']} s, wall {meta['wall_s']} s).",
        "",
        "Measured epoch times (last iter_end - epoch_start, max over ranks):",
        "",
        "| epoch | time (s) |",
        "|---|---|",
    ] + [f"| {e} | {t:.3f} |" for e, t in enumerate(meta["epoch_times_s"])] + [
        "",
        "Means over all rows except batch 0 of each epoch (ms): "
        f"fetch {m['fetch']:.1f}, stall {m['stall']:.1f}, compute {m['compute']:.1f}, "
        f"compute_end..iter_end {m['post']:.1f}, iteration {m['iter']:.1f}.",
        "",
        "`meta.json` holds the same facts in machine-readable form.",
        "",
    ]
    with open(os.path.join(a.out, "README.md"), "w") as fh:
        fh.write("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--io-ms", type=float, default=3.0, help="sleep per sample (I/O stand-in), ms")
    p.add_argument("--cpu-ms", type=float, default=1.0, help="CPU work per sample, ms (approx.)")
    p.add_argument("--cpu-reps", type=int, default=None, metavar="N",
                   help="fix the CPU work at N transform repetitions per sample instead of "
                        "calibrating --cpu-ms (use it to run the same job several times)")
    p.add_argument("--workers", type=int, default=2, help="DataLoader num_workers")
    p.add_argument("--prefetch", type=int, default=2, help="prefetch_factor (workers > 0)")
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--batches", type=int, default=60, help="batches per epoch per rank")
    p.add_argument("--samples", type=int, default=0, metavar="L",
                   help="dataset size in samples, the same whatever --ddp (strong scaling: each "
                        "of G ranks gets ceil(L / G), DistributedSampler's split); replaces "
                        "--batches")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--pin-memory", action="store_true", help="(pins only when CUDA is available)")
    p.add_argument("--persistent-workers", action="store_true")
    p.add_argument("--ddp", type=int, default=0, help="number of ranks (gloo, CPU); 0 = no DDP")
    p.add_argument("--sync", choices=["manual", "ddp"], default="manual",
                   help="gradient sync with --ddp: manual all-reduce (default) or DDP + comm hook")
    p.add_argument("--mp-context", choices=["fork", "spawn", "forkserver"], default="fork",
                   help="start method of the DataLoader workers. fork (Linux default) also inside "
                        "the --ddp ranks, which mp.spawn would otherwise make 'spawn' (a worker "
                        "start-up of seconds per epoch that torchrun-launched ranks do not have)")
    p.add_argument("--slow-rank", type=int, default=None, metavar="R",
                   help="make rank R a straggler: its forward+backward takes --slow-factor times "
                        "as long (a sleep after backward, standing for a slower GPU)")
    p.add_argument("--slow-factor", type=float, default=1.0, metavar="F",
                   help="compute slowdown of --slow-rank (>= 1; default 1 = none)")
    p.add_argument("--width", type=int, default=16, help="CNN width (compute per batch)")
    p.add_argument("--compute-sleep-ms", type=float, default=0.0, metavar="MS",
                   help="sleep MS after each backward: accelerator time, during which the host's "
                        "cores are free (default 0)")
    p.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                   help="where the model trains: cuda = the first GPU, one process (no --ddp)")
    p.add_argument("--pin-ranks", action="store_true",
                   help="pin each rank (its threads and workers) to one core, rank %% cores")
    p.add_argument("--port", type=int, default=29517)
    p.add_argument("--ckpt-every", type=int, default=0, metavar="N",
                   help="torch.save a checkpoint after every N-th iteration (0: none)")
    p.add_argument("--ckpt-mb", type=float, default=32.0, help="checkpoint padding, MB")
    p.add_argument("--out", required=True, help="output folder: trace.csv, meta.json")
    p.add_argument("--keep-rank-files", action="store_true")
    p.add_argument("--wait-idle", type=float, default=0.0, metavar="S",
                   help="on a shared machine: wait up to S seconds for other load to go quiet")
    p.add_argument("--data-dir", default=None, metavar="DIR",
                   help="read real files: DIR/sample-I.bin, one per sample (created when missing, "
                        "--sample-kb each); --io-ms is then not used")
    p.add_argument("--sample-kb", type=float, default=64.0, help="file size with --data-dir, KB")
    p.add_argument("--evict", type=float, default=None, metavar="F",
                   help="--data-dir from the local disk: before epoch 0 read every file, then "
                        "evict the fraction F of them from the page cache (POSIX_FADV_DONTNEED; "
                        "checked with fincore); later epochs find what epoch 0 read")
    p.add_argument("--http", action="store_true",
                   help="--data-dir served by tools/slowstore.py on 127.0.0.1 (started and "
                        "stopped here) and read over HTTP through a local cache (--cache-mb)")
    p.add_argument("--bandwidth-mb-s", type=float, default=20.0,
                   help="--http: the store's bandwidth shared by every reader, MB/s")
    p.add_argument("--latency-ms", type=float, default=2.0, help="--http: wait per request, ms")
    p.add_argument("--cache-mb", type=float, default=0.0,
                   help="--http: local disk cache size, MB (it keeps what it admitted; 0 = none)")
    a = p.parse_args()

    def fail(msg):
        # one line, as argparse's own errors end (p.error printed the 17-line usage first)
        print(f"{p.prog}: error: {msg}", file=sys.stderr)
        sys.exit(2)

    if (a.evict is not None or a.http) and not a.data_dir:
        fail("--evict and --http need --data-dir")
    if a.http and a.ddp >= 1:
        fail("--http reads in one process (no --ddp)")
    if a.device == "cuda" and a.ddp >= 1:
        fail("--device cuda trains in one process on one GPU (no --ddp)")
    if a.device == "cuda" and not torch.cuda.is_available():
        fail("--device cuda: torch sees no CUDA device here")
    if a.evict is not None and not 0.0 <= a.evict <= 1.0:
        fail("--evict must be in [0, 1]")
    if a.slow_factor < 1.0 or (a.slow_rank is not None and not 0 <= a.slow_rank < max(1, a.ddp)):
        fail("--slow-factor must be >= 1 and --slow-rank a rank in 0..ddp-1")
    # Written whole or not at all: into a work folder beside --out, renamed into place at the
    # end (an earlier folder of that name is replaced only then); an interrupted or failed
    # capture removes its work folder and leaves --out as it was.
    import shutil
    import signal
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # cleaned up as Ctrl-C is
    a.final_out = os.path.normpath(a.out)
    if os.path.lexists(a.final_out) and not (
            os.path.isdir(a.final_out) and (not os.listdir(a.final_out) or os.path.exists(
                os.path.join(a.final_out, "meta.json")))):
        fail(f"--out {a.out}: exists and is not a capture folder (no meta.json): give another")
    a.out = f"{a.final_out}.tmp.{os.getpid()}"
    shutil.rmtree(a.out, ignore_errors=True)
    os.makedirs(a.out)
    try:
        rc = capture(a)
    except BaseException:
        shutil.rmtree(a.out, ignore_errors=True)
        raise
    old = f"{a.final_out}.old.{os.getpid()}"
    if os.path.lexists(a.final_out):
        os.rename(a.final_out, old)
    os.rename(a.out, a.final_out)
    shutil.rmtree(old, ignore_errors=True)
    print(f"results in {a.final_out}/")
    return rc


def capture(a):
    """The run, its trace merged and checked, meta.json and README.md, all in a.out."""
    idle = wait_idle(a.wait_idle) if a.wait_idle > 0 else None
    per_rep = rep_cost_s()
    reps = a.cpu_reps if a.cpu_reps is not None else calibrate(a.cpu_ms, per_rep)

    store = None
    a.store_port = a.cache_dir = a.cache_used = a.cache_write_s = None
    storage = {}
    if a.data_dir:
        n = dataset_samples(a)
        make_files(a.data_dir, n, a.sample_kb)
        paths = [os.path.join(a.data_dir, f"sample-{i:06d}.bin") for i in range(n)]
        storage = {"files": n, "file_bytes": int(a.sample_kb * 1000),
                   "dataset_mb": n * int(a.sample_kb * 1000) / 1e6}
        if a.evict is not None:
            storage["disk_cold_read_mb_s"] = round(disk_read_mb_s(a.data_dir), 1)
            before, after = set_page_cache(paths, a.evict)
            storage.update(evict_fraction=a.evict, resident_before_evict_bytes=before,
                           resident_at_start_bytes=after)
            print(f"page cache: {before} bytes resident, {after} after evicting "
                  f"{a.evict:g} of {n} files; the disk reads {storage['disk_cold_read_mb_s']} "
                  f"MB/s cold", flush=True)
        if a.http:
            import multiprocessing
            import shutil
            import subprocess
            a.cache_dir = os.path.join(a.out, "cache")
            shutil.rmtree(a.cache_dir, ignore_errors=True)
            os.makedirs(a.cache_dir)
            a.cache_used = multiprocessing.Value("q", 0)
            a.cache_write_s = multiprocessing.Value("d", 0.0)
            store = subprocess.Popen(
                [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                              "slowstore.py"), a.data_dir,
                 "--bandwidth-mb-s", str(a.bandwidth_mb_s), "--latency-ms", str(a.latency_ms)],
                stdout=subprocess.PIPE, text=True)
            a.store_port = int(store.stdout.readline().split()[1])
            storage.update(http=True, bandwidth_mb_s=a.bandwidth_mb_s, latency_ms=a.latency_ms,
                           cache_mb=a.cache_mb, cache_policy="keeps what it admitted")

    load0 = os.getloadavg()
    busy0, own0 = _cpu_busy_s(), _own_cpu_s()
    t0 = time.time()
    if a.ddp >= 1:
        import torch.multiprocessing as mp
        mp.spawn(_spawn_entry, args=(a, reps), nprocs=a.ddp, join=True)
    else:
        run_rank(0, a, reps)
    wall = time.time() - t0
    if store is not None:
        import shutil
        store.terminate()
        storage["store_said"] = store.communicate(timeout=30)[0].strip().splitlines()[-1:]
        storage["cache_used_bytes"] = a.cache_used.value
        files = a.cache_used.value // max(1, int(a.sample_kb * 1000))
        storage["cache_write_s"] = round(a.cache_write_s.value, 4)   # summed over the workers
        storage["cache_write_ms_per_file"] = round(1e3 * a.cache_write_s.value / files, 4) if files else None
        shutil.rmtree(a.cache_dir, ignore_errors=True)
        a.cache_used = a.cache_write_s = None
    busy, own = _cpu_busy_s() - busy0, _own_cpu_s() - own0

    world = max(1, a.ddp)
    rank_files = [os.path.join(a.out, f"trace_rank{r}.csv") for r in range(world)]
    merged = os.path.join(a.out, "trace.csv")
    nrows = sc.merge(merged, rank_files)
    if not a.keep_rank_files:
        for f in rank_files:
            os.remove(f)
            os.remove(sc.status_path(f))  # whether its run closed: merge has read it
    for r in range(world):  # the checkpoints are not kept, only their times
        if os.path.exists(os.path.join(a.out, f"ckpt_rank{r}.pt")):
            os.remove(os.path.join(a.out, f"ckpt_rank{r}.pt"))
    bad, times = sc.check(merged)
    for b in bad:
        print("CHECK:", b)
    # The interpreter that ran it (Debian's /usr/bin/python3 here; another where torch lives
    # elsewhere, as on the GPU machine of traces/gpu).
    cmd = " ".join(shlex.quote(x) for x in [sys.executable or "python3"] + sys.argv)
    meta = {
        "command": cmd,
        "torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
        # the cores this run could use (taskset narrows them; stallsim's [trace] cores default)
        "cpu_cores": len(os.sched_getaffinity(0)), "machine_cpu_cores": os.cpu_count(),
        "config": {**{k: v for k, v in vars(a).items() if k != "final_out"},
                   "out": a.final_out},
        "cpu_reps_per_sample": reps,
        "cpu_ms_per_sample_est": round(reps * per_rep * 1e3, 3),
        "rows": nrows, "checks_passed": not bad,
        "epoch_times_s": [round(t, 6) for t in times],
        "wall_s": round(wall, 3),
        "clock": "time.time() on one host",
        "machine_cpu_busy_s": round(busy, 2), "own_cpu_s": round(own, 2),
        "other_cpu_s": round(busy - own, 2),
        "loadavg_before": [round(x, 2) for x in load0],
        "waited_for_idle": idle,
        "compute_end": {"none": "after loss.backward() (single process)",
                        "manual": "after local loss.backward(), before the manual all-reduce",
                        "ddp": "DDP comm-hook call of the last gradient bucket"}[
                            a.sync if a.ddp >= 1 else "none"],
    }
    if a.device == "cuda":
        meta["gpu"], meta["cuda"] = torch.cuda.get_device_name(0), torch.version.cuda
    if storage:
        meta["storage"] = storage
    means = sc.summary(merged)
    meta["means_ms_without_batch0"] = {k: round(v, 2) for k, v in means.items()}
    with open(os.path.join(a.out, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=2)
        fh.write("\n")
    write_readme(a, meta, nrows)
    print(f"torch {torch.__version__}; {nrows} rows; wall {wall:.2f} s")
    for e, t in enumerate(times):
        print(f"epoch {e}: {t:.3f} s")
    print(f"CPU during the run: own {own:.1f} s, other processes {busy - own:.1f} s "
          f"(of {wall * (os.cpu_count() or 1):.1f} s available)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""train_example: a small CPU training job that records a stallsim `tidy` trace.

A small CNN is trained on synthetic 32x32 images. Each sample costs real work in the DataLoader
worker: a sleep standing for I/O (--io-ms) and real CPU work standing for decoding/augmentation
(--cpu-ms: numpy blur/normalise/crop/flip repetitions, calibrated once at start-up to about that
much CPU time per sample). --ddp N runs N ranks on CPU with the gloo backend, each with a
DistributedSampler, and all-reduces gradients by hand after the local backward (--sync manual,
the default) so that compute_end is a clean pre-synchronisation time; --sync ddp uses
DistributedDataParallel and takes compute_end from its communication hook instead.

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
    ds = SyntheticImages(a.batches * a.batch_size * world, a.io_ms, reps)
    if a.ddp >= 1:
        sampler = torch.utils.data.distributed.DistributedSampler(
            ds, num_replicas=world, rank=rank, shuffle=True, seed=0)
    else:
        sampler = torch.utils.data.RandomSampler(ds, generator=torch.Generator().manual_seed(0))
    rec = sc.Recorder(rank=rank, path=os.path.join(a.out, f"trace_rank{rank}.csv"),
                      ranks_per_node=world)
    kw = dict(batch_size=a.batch_size, sampler=sampler, num_workers=a.workers,
              pin_memory=a.pin_memory)
    if a.workers > 0:
        kw.update(prefetch_factor=a.prefetch, persistent_workers=a.persistent_workers,
                  multiprocessing_context=a.mp_context)
    loader = rec.dataloader(ds, **kw)

    model = SmallCNN(a.width)
    sync = a.sync if a.ddp >= 1 else "none"
    if sync == "ddp":
        model = nn.parallel.DistributedDataParallel(model)   # no buffers: no forward broadcast
        rec.attach_ddp(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    losses = []
    slow = a.slow_factor if (a.slow_rank is not None and rank == a.slow_rank) else 1.0
    for epoch in range(a.epochs):
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(epoch)
        total, n = 0.0, 0
        for x, y in loader:
            rec_t0 = time.time()
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
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


def _spawn_entry(rank, a, reps):
    run_rank(rank, a, reps)


def write_readme(a, meta, nrows):
    world = max(1, a.ddp)
    m = meta["means_ms_without_batch0"]
    lines = [
        f"# {os.path.basename(os.path.normpath(a.out))}: real trace from tools/train_example.py",
        "",
        "Command (from the repository root):",
        "",
        "    " + meta["command"],
        "",
        f"- torch {meta['torch']}, numpy {meta['numpy']}, Python {meta['python']}, "
        f"{meta['cpu_cores']} CPU cores, CPU only.",
        f"- {world} rank(s); {a.workers} DataLoader worker(s) per rank, prefetch_factor "
        f"{a.prefetch if a.workers else 0}, pin_memory {'on (no CUDA: not pinned)' if a.pin_memory else 'off'}, "
        f"persistent workers {'on' if a.persistent_workers else 'off'}, worker start method "
        f"{a.mp_context}.",
        f"- per epoch per rank: {a.batches} batches of {a.batch_size} samples; per sample "
        f"{a.io_ms:g} ms sleep (I/O) + {meta['cpu_reps_per_sample']} transform repetitions "
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
    p.add_argument("--port", type=int, default=29517)
    p.add_argument("--out", required=True, help="output folder: trace.csv, meta.json")
    p.add_argument("--keep-rank-files", action="store_true")
    p.add_argument("--wait-idle", type=float, default=0.0, metavar="S",
                   help="on a shared machine: wait up to S seconds for other load to go quiet")
    a = p.parse_args()
    if a.slow_factor < 1.0 or (a.slow_rank is not None and not 0 <= a.slow_rank < max(1, a.ddp)):
        p.error("--slow-factor must be >= 1 and --slow-rank a rank in 0..ddp-1")
    os.makedirs(a.out, exist_ok=True)
    idle = wait_idle(a.wait_idle) if a.wait_idle > 0 else None
    per_rep = rep_cost_s()
    reps = a.cpu_reps if a.cpu_reps is not None else calibrate(a.cpu_ms, per_rep)

    load0 = os.getloadavg()
    busy0, own0 = _cpu_busy_s(), _own_cpu_s()
    t0 = time.time()
    if a.ddp >= 1:
        import torch.multiprocessing as mp
        mp.spawn(_spawn_entry, args=(a, reps), nprocs=a.ddp, join=True)
    else:
        run_rank(0, a, reps)
    wall = time.time() - t0
    busy, own = _cpu_busy_s() - busy0, _own_cpu_s() - own0

    world = max(1, a.ddp)
    rank_files = [os.path.join(a.out, f"trace_rank{r}.csv") for r in range(world)]
    merged = os.path.join(a.out, "trace.csv")
    nrows = sc.merge(merged, rank_files)
    if not a.keep_rank_files:
        for f in rank_files:
            os.remove(f)
    bad, times = sc.check(merged)
    for b in bad:
        print("CHECK:", b)
    cmd = " ".join(shlex.quote(x) for x in ["/usr/bin/python3"] + sys.argv)
    meta = {
        "command": cmd,
        "torch": torch.__version__, "numpy": np.__version__, "python": sys.version.split()[0],
        "cpu_cores": os.cpu_count(),
        "config": vars(a), "cpu_reps_per_sample": reps,
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
    means = sc.summary(merged)
    meta["means_ms_without_batch0"] = {k: round(v, 2) for k, v in means.items()}
    with open(os.path.join(a.out, "meta.json"), "w") as fh:
        json.dump(meta, fh, indent=2)
        fh.write("\n")
    write_readme(a, meta, nrows)
    print(f"torch {torch.__version__}; {nrows} rows -> {merged}; wall {wall:.2f} s")
    for e, t in enumerate(times):
        print(f"epoch {e}: {t:.3f} s")
    print(f"CPU during the run: own {own:.1f} s, other processes {busy - own:.1f} s "
          f"(of {wall * (os.cpu_count() or 1):.1f} s available)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Writes the real PyTorch profiler (Kineto) traces under tests/kineto/ that
tests/test_kineto.c reads: a small training loop on CPU (Debian's
python3-torch: `apt-get install -y python3-torch`, run with /usr/bin/python3)
profiled by torch.profiler and saved by tensorboard_trace_handler, one folder
per case:

  w0_nosched/   0 workers, no schedule (iterations from one __next__ to the next),
                uncompressed .json
  w2_nosched/   2 workers, no schedule, gzipped
  w0_sched/     0 workers, schedule(wait=1, warmup=1, active=ACTIVE): 6 ProfilerStep ranges (torch 1.13 numbers them #1..#6)
  w2_sched/     2 workers, the same schedule
  ddp2_w2/      2 DDP ranks over gloo (a process each), 2 workers, the schedule,
                one gzipped file per rank (distributedInfo in each)
  w0_repeat/    0 workers, schedule(wait=1, warmup=1, active=3, repeat=2): a file per
                cycle (3 ProfilerStep ranges each: #1..#3, #6..#8 in torch 1.13), gzipped
  cuda_w2/      only where CUDA is available (not in the default set): w2_sched's loop with
                the model on the GPU, pin_memory, batches copied non_blocking, the CPU and
                CUDA activities profiled (kernels and memcpys in the file), gzipped

Every sample's __getitem__ sleeps SAMPLE_MS, so with 0 workers a batch's
fetch (the _SingleProcessDataLoaderIter.__next__ range) takes about
BATCH * SAMPLE_MS; the step sleeps COMPUTE_MS. The numbers are in
tests/kineto/README.md and in the assertions of tests/test_kineto.c.

Usage: /usr/bin/python3 tools/make_kineto_fixtures.py [OUT_DIR [CASE...]]
(default tests/kineto, every case)
"""
import os
import shutil
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

BATCH = 4
SAMPLE_MS = 5  # per sample: a batch's fetch is about 20 ms with 0 workers
COMPUTE_MS = 10
BATCHES = 8  # batches of a loop without a schedule
WAIT, WARMUP, ACTIVE = 1, 1, 6  # the schedule: 6 active steps recorded


class Sleepy(torch.utils.data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(SAMPLE_MS / 1000.0)
        return torch.full((16,), float(i)), torch.tensor(i % 4)


def make(workers, n, pin=False):
    return torch.utils.data.DataLoader(Sleepy(n), batch_size=BATCH, num_workers=workers,
                                       shuffle=False, pin_memory=pin)


def train_step(model, opt, x, y):
    if x.device != next(model.parameters()).device:
        dev = next(model.parameters()).device
        x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
    opt.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    time.sleep(COMPUTE_MS / 1000.0)
    opt.step()


def run_repeat(out, name):
    torch.manual_seed(0)
    model = torch.nn.Linear(16, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    os.makedirs(out, exist_ok=True)
    handler = tensorboard_trace_handler(out, worker_name=name, use_gzip=True)
    loader = make(0, 2 * (WAIT + WARMUP + 3) * BATCH)
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=WAIT, warmup=WARMUP, active=3, repeat=2),
                 on_trace_ready=handler) as p:
        for x, y in loader:
            train_step(model, opt, x, y)
            p.step()


def run(out, name, workers, sched, gzip, model=None, rank_name=None, cuda=False):
    torch.manual_seed(0)
    model = model or torch.nn.Linear(16, 4)
    acts = [ProfilerActivity.CPU]
    if cuda:
        model = model.cuda()
        acts.append(ProfilerActivity.CUDA)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    os.makedirs(out, exist_ok=True)
    handler = tensorboard_trace_handler(out, worker_name=rank_name or name, use_gzip=gzip)
    if sched:
        steps = WAIT + WARMUP + ACTIVE
        loader = make(workers, steps * BATCH, pin=cuda)
        with profile(activities=acts,
                     schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
                     on_trace_ready=handler) as p:
            for x, y in loader:
                train_step(model, opt, x, y)
                p.step()
    else:
        loader = make(workers, BATCHES * BATCH)
        with profile(activities=[ProfilerActivity.CPU], on_trace_ready=handler):
            for x, y in loader:
                train_step(model, opt, x, y)


def ddp_rank(rank, world, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29533"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 4))
    run(out, "ddp2_w2", 2, True, True, model=model, rank_name="rank%d" % rank)
    dist.destroy_process_group()


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "tests/kineto"
    only = set(sys.argv[2:])
    torch.set_num_threads(1)
    cases = [("w0_nosched", 0, False, False), ("w2_nosched", 2, False, True),
             ("w0_sched", 0, True, True), ("w2_sched", 2, True, True)]
    for name, workers, sched, gz in cases:
        if only and name not in only:
            continue
        out = os.path.join(root, name)
        shutil.rmtree(out, ignore_errors=True)
        run(out, name, workers, sched, gz)
    if not only or "ddp2_w2" in only:
        out = os.path.join(root, "ddp2_w2")
        shutil.rmtree(out, ignore_errors=True)
        mp.spawn(ddp_rank, args=(2, out), nprocs=2, join=True)
    if "cuda_w2" in only:
        out = os.path.join(root, "cuda_w2")
        shutil.rmtree(out, ignore_errors=True)
        run(out, "cuda_w2", 2, True, True, cuda=True)
    if not only or "w0_repeat" in only:
        out = os.path.join(root, "w0_repeat")
        shutil.rmtree(out, ignore_errors=True)
        run_repeat(out, "w0_repeat")
    for d in sorted(os.listdir(root)):
        p = os.path.join(root, d)
        if os.path.isdir(p):
            print(d, sorted(os.listdir(p)))
    print("torch", torch.__version__)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""simpy_baseline.py - the closed-loop DataLoader/DDP model of docs/model.md written
the way a researcher writes it in SimPy: one process per DataLoader worker, a
pin-memory thread and a training loop per rank, and the DDP barrier. It is the
speed baseline the C engine (models/model.c) is measured against; see
docs/simpy-baseline.md.

SimPy here is Debian's python3-simpy 2.3.1, the SimPy 2 API (`from
SimPy.Simulation import ...`: Process, hold, get/put on a Store, waitevent on
a SimEvent, passivate/reactivate). The clock holds integer nanoseconds
(Python ints: exact).

Rules (docs/model.md, "PyTorch DataLoader, per rank" and "Training loop and DDP
barrier"), no shared CPU or storage:
  - batch k goes to worker k mod W (round robin, restarting every epoch); at
    epoch start batches 0 .. P*W-1 are handed out; taking batch k (at Y) hands
    out batch k + P*W to the same worker; a worker fetches its batches one at
    a time in order, so S = max(dispatch, end of its previous batch);
  - pin memory (pin > 0): one thread per rank pins arrivals one at a time in
    arrival order, ties lower batch first, adding `pin` each;
  - Y(r,k) = max(Q(r,k), arrival(r,k), Y(r,k-1)) + handover (in order);
  - T(k) = max_r (Y(r,k) + C(r,k)) + A(k); Q(r,k) = T(k-1), Q(r,0) = epoch
    start; epoch e+1 starts at T(N-1) of epoch e; epoch 0 starts at 0;
    worker start-up 0.
Durations are bench/bench_model.c's pure functions, ported bit for bit:
fetch = lognormal(median 0.6e9 ns, sigma 0.4, salt 1), compute =
lognormal(median 0.1e9 ns, sigma 0.2, salt 2), A = 3 ms, pin 0.5 ms,
handover 1.4 ms, prefetch 2.

Time: wall (perf_counter) and process CPU time around simulate() only; the
duration functions are called inside, as bench_model.c's callbacks are.

Events: SimPy 2 schedules one event notice per process resumption (every
`yield hold/get/put/waitevent/passivate` and every activation; a blocked
get/waitevent/passivate is resumed by the put/signal/reactivate that
satisfies it). Per rank and batch that is about 8: worker get + hold, pin
wake-up + hold, loop hand-over hold, refill put, compute hold, barrier
(waitevent, or the tail hold for the last rank in), plus a waitevent when the
batch is not there yet. The count reported is the number of notices posted,
-sim._sortpr (SimPy decrements it once per post); this model cancels none,
so it equals the number of steps executed (--count-steps runs its own step
loop and checks that).

usage: simpy_baseline.py [--ranks G] [--workers W] [--batches N] [--epochs E]
                         [--check FILE] [--dump FILE] [--count-steps]
                         [--repeat R] [--quantum NS]
FILE lines: "epoch batch T_ns" (what the C driver writes), one per iteration.
"""
import argparse
import math
import sys
import time
from heapq import heappop, heappush

import SimPy

from SimPy.Simulation import (Process, SimEvent, Simulation, Store, get, hold,
                              passivate, put, waitevent)

M64 = 0xFFFFFFFFFFFFFFFF

FETCH_MEDIAN_NS = 0.6e9
COMPUTE_MEDIAN_NS = 0.1e9
SIGMA = 0.4
TAIL_NS = 3000000       # A(k): exposed all-reduce + optimizer step
PIN_NS = 500000         # pin memory per batch
HANDOVER_NS = 1400000   # result queue + unpickle per batch
PREFETCH = 2


def bench_mix(x):
    """splitmix64 finaliser, as bench_model.c's bench_mix (uint64 arithmetic)."""
    x = (x + 0x9e3779b97f4a7c15) & M64
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & M64
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & M64
    return x ^ (x >> 31)


def bench_lognormal(median, sigma, salt, e, r, k):
    """bench_model.c's bench_lognormal: same integer hash, same libm calls
    (CPython's math.* call the C library), same truncation to int64 ns."""
    h = bench_mix(salt ^ bench_mix(((e << 40) & M64) ^ ((r << 20) & M64)
                                   ^ bench_mix(k & M64)))
    u1 = ((h >> 11) + 0.5) / 9007199254740992.0
    u2 = (bench_mix(h) >> 11) / 9007199254740992.0
    z = math.sqrt(-2.0 * math.log(u1)) * math.cos(6.283185307179586 * u2)
    return int(median * math.exp(sigma * z))


QUANTUM = 1  # --quantum: durations rounded down to a multiple (forces ties)


def fetch_ns(e, r, k):
    d = bench_lognormal(FETCH_MEDIAN_NS, SIGMA, 1, e, r, k)
    return d - d % QUANTUM


def compute_ns(e, r, k):
    d = bench_lognormal(COMPUTE_MEDIAN_NS, SIGMA / 2, 2, e, r, k)
    return d - d % QUANTUM


class Rank(object):
    """Per-rank shared state: arrivals waiting for the loop, the pin queue."""

    def __init__(self, r, sim):
        self.r = r
        self.arrived = {}          # batch k -> arrival time (after pin)
        self.want = -1             # batch the loop is blocked on, -1 = none
        self.ready = SimEvent(name='ready%d' % r, sim=sim)
        self.pinq = []             # heap of (fetch end E, batch k, epoch)
        self.workers = []
        self.pin = None

    def arrive(self, k, t):
        self.arrived[k] = t
        if self.want == k:
            self.want = -1
            self.ready.signal()


class Worker(Process):
    """A DataLoader worker: fetches the batches handed to it, in order."""

    def __init__(self, rank, w, sim):
        Process.__init__(self, name='worker%d.%d' % (rank.r, w), sim=sim)
        self.rank = rank
        self.todo = Store(name='todo%d.%d' % (rank.r, w), sim=sim)

    def run(self):
        rank = self.rank
        r = rank.r
        sim = self.sim
        while True:
            yield get, self, self.todo, 1
            e, k = self.got[0]
            yield hold, self, fetch_ns(e, r, k)
            if rank.pin is None:
                rank.arrive(k, sim.now())
            else:
                rank.pin.enqueue(sim.now(), k, e)


class PinThread(Process):
    """pin_memory thread: pins arrivals one at a time, in arrival order."""

    def __init__(self, rank, sim):
        Process.__init__(self, name='pin%d' % rank.r, sim=sim)
        self.rank = rank
        self.idle = False

    def enqueue(self, t, k, e):
        heappush(self.rank.pinq, (t, k, e))
        if self.idle:
            # Wake the thread after every event already due at this instant
            # (reactivate without prior): all workers delivering now are in
            # the queue before it picks, so a tie goes to the lower batch.
            self.idle = False
            self.sim.reactivate(self)

    def run(self):
        rank = self.rank
        q = rank.pinq
        sim = self.sim
        while True:
            if not q:
                self.idle = True
                yield passivate, self
            elif q[0][0] == sim.now():
                # Done pinning just as a batch arrived: other workers may
                # deliver at this same instant too; let them first.
                yield hold, self, 0
            t, k, e = heappop(q)
            yield hold, self, PIN_NS
            rank.arrive(k, sim.now())


class Barrier(object):
    """DDP: no rank leaves iteration k before every rank computed it."""

    def __init__(self, ranks, sim):
        self.ranks = ranks
        self.count = 0
        self.done = SimEvent(name='allreduce', sim=sim)
        self.t = []                # (epoch, k, T(k))


class TrainLoop(Process):
    """The training loop of one rank: next(), hand-over, compute, barrier."""

    def __init__(self, rank, bar, args, sim):
        Process.__init__(self, name='loop%d' % rank.r, sim=sim)
        self.rank = rank
        self.bar = bar
        self.a = args

    def run(self):
        rank, bar, sim = self.rank, self.bar, self.sim
        r = rank.r
        W, N, E = self.a.workers, self.a.batches, self.a.epochs
        PW = PREFETCH * W
        todo = [w.todo for w in rank.workers]
        for e in range(E):
            # iter(): hand out batches 0 .. P*W-1, round robin.
            for k in range(min(N, PW)):
                yield put, self, todo[k % W], [(e, k)]
            for k in range(N):
                # Q(r,k) = now. In order: wait for batch k itself.
                if k not in rank.arrived:
                    rank.want = k
                    yield waitevent, self, rank.ready
                del rank.arrived[k]
                yield hold, self, HANDOVER_NS
                # Y(r,k) = now: refill, to the worker that produced batch k.
                if k + PW < N:
                    yield put, self, todo[(k + PW) % W], [(e, k + PW)]
                yield hold, self, compute_ns(e, r, k)
                bar.count += 1
                if bar.count < bar.ranks:
                    yield waitevent, self, bar.done
                else:
                    # last rank in: the exposed all-reduce tail, then T(k)
                    yield hold, self, TAIL_NS
                    bar.count = 0
                    bar.t.append((e, k, sim.now()))
                    bar.done.signal()


def build(args):
    sim = Simulation()
    bar = Barrier(args.ranks, sim)
    for r in range(args.ranks):
        rank = Rank(r, sim)
        for w in range(args.workers):
            wk = Worker(rank, w, sim)
            rank.workers.append(wk)
            sim.activate(wk, wk.run())
        if PIN_NS > 0:
            rank.pin = PinThread(rank, sim)
            sim.activate(rank.pin, rank.pin.run())
        loop = TrainLoop(rank, bar, args, sim)
        sim.activate(loop, loop.run())
    return sim, bar


def run_counting(sim):
    """simulate() without an end time, counting the steps that resumed a
    process (no notice is ever cancelled in this model)."""
    ts = sim._timestamps
    step = sim.step
    n = 0
    while ts:
        step()
        n += 1
    return n


def check(path, got):
    want = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts:
                want.append((int(parts[0]), int(parts[1]), int(parts[2])))
    if len(want) != len(got):
        return 'FAIL: %d T values in %s, model has %d' % (len(want), path, len(got))
    worst = 0
    first = None
    for a, b in zip(want, got):
        if a[:2] != b[:2]:
            return 'FAIL: iteration order differs at %s vs %s' % (a[:2], b[:2])
        d = b[2] - a[2]
        if d != 0 and first is None:
            first = (a, b)
        worst = max(worst, abs(d))
    if first is None:
        return 'OK: all %d T(k) equal to the ns' % len(got)
    return ('FAIL: max |diff| %d ns; first at epoch %d batch %d: %s %d, model %d'
            % (worst, first[0][0], first[0][1], path, first[0][2], first[1][2]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--ranks', type=int, default=8)
    ap.add_argument('--workers', type=int, default=8)
    ap.add_argument('--batches', type=int, default=500)
    ap.add_argument('--epochs', type=int, default=1)
    ap.add_argument('--check', metavar='FILE',
                    help='compare T(k) with FILE ("epoch batch T_ns" lines)')
    ap.add_argument('--dump', metavar='FILE', help='write T(k) to FILE')
    ap.add_argument('--count-steps', action='store_true',
                    help='run its own step loop and count executed steps')
    ap.add_argument('--repeat', type=int, default=1, metavar='R',
                    help='run R times, report the fastest (wall time)')
    ap.add_argument('--quantum', type=int, default=1, metavar='NS',
                    help='round fetch and compute durations down to a '
                    'multiple of NS (1 = as bench_model.c; larger values '
                    'make equal-time events common, to test tie order)')
    args = ap.parse_args()
    global QUANTUM
    QUANTUM = args.quantum
    if args.ranks < 1 or args.workers < 1 or args.batches < 1 or args.epochs < 1 \
            or args.repeat < 1:
        ap.error('ranks, workers, batches, epochs, repeat must be >= 1')
    if args.quantum < 1 or args.quantum > 50000000:
        ap.error('quantum must be in [1, 50000000] ns')

    best = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        sim, bar = build(args)
        t1 = time.perf_counter()
        c1 = time.process_time()
        if args.count_steps:
            steps = run_counting(sim)
        else:
            sim.simulate(until=float('inf'))
            steps = None
        c2 = time.process_time()
        t2 = time.perf_counter()
        if best is None or t2 - t1 < best[0]:
            best = (t2 - t1, c2 - c1, t1 - t0)
    wall, cpu, setup = best

    events = -sim._sortpr          # notices posted = process resumptions
    assert not sim._timestamps
    if steps is not None and steps != events:
        print('simpy_baseline: steps %d != notices posted %d' % (steps, events),
              file=sys.stderr)
        return 1
    expect = args.epochs * args.batches
    if len(bar.t) != expect:
        print('simpy_baseline: %d iterations, expected %d' % (len(bar.t), expect),
              file=sys.stderr)
        return 1
    if args.dump:
        with open(args.dump, 'w') as f:
            for e, k, t in bar.t:
                f.write('%d %d %d\n' % (e, k, t))
    nb = args.ranks * args.batches * args.epochs
    line = ('simpy %s ranks=%d workers=%d batches=%d epochs=%d: wall %.3f s '
            '(best of %d; cpu %.3f s; setup %.3f s), events %d = %.3f M events/s, '
            '%.0f batches/s, end T = %d ns' % (
                SimPy.__version__, args.ranks, args.workers, args.batches,
                args.epochs, wall, args.repeat, cpu, setup, events,
                events / wall / 1e6, nb / wall, bar.t[-1][2]))
    if args.check:
        res = check(args.check, bar.t)
        line += ', check ' + res
        print(line)
        return 0 if res.startswith('OK') else 1
    print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())

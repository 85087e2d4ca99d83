#!/usr/bin/env python3
"""Writes a synthetic trace of about MB megabytes for the JSON readers'
benchmark (bench/bench_json.c, bench/run.sh):

  gen_json.py kineto   OUT.json MB   a PyTorch profiler (Kineto) trace of one
      rank, laid out as Kineto writes it (one key per line, as in HTA's test
      trace): per iteration a ProfilerStep#N range, the DataLoader's
      _MultiProcessingDataLoaderIter.__next__ wait, and 300 cpu_op events
      with Kineto's args (what makes up most of a real trace's bytes).
  gen_json.py dftracer OUT.pfw  MB   a DLIO trace (dftracer, late-2025 names,
      one event per line): per step fetch.iter, compute, fetch.block and 40
      POSIX read events; epoch.block ranges of 1000 steps.

Deterministic (no randomness): the same arguments give the same bytes.
"""
import sys

T0 = 1760000000000000  # us


def kineto(out, target):
    w = out.write
    w('{\n  "schemaVersion": 1,\n  "distributedInfo": {"backend": "nccl", "rank": 0, '
      '"world_size": 1},\n  "traceEvents": [\n')
    ts, k, ext, first = T0, 0, 0, True
    while out.tell() < target:
        wait, step = 2000 + (k * 7919) % 5000, 100000
        ev = []
        ev.append(('user_annotation', 'ProfilerStep#%d' % k, ts, step))
        ev.append(('user_annotation',
                   'enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__', ts + 5, wait))
        t = ts + 10 + wait
        for i in range(300):
            ev.append(('cpu_op', ('aten::conv2d', 'aten::add_', 'aten::empty', 'aten::mm')[i % 4],
                       t, 200))
            t += 300
        for cat, name, s, d in ev:
            ext += 1
            w(('' if first else ',\n') +
              '  {\n    "ph": "X", "cat": "%s", "name": "%s", "pid": 2568503, "tid": 2568503,\n'
              '    "ts": %d, "dur": %d,\n    "args": {\n'
              '      "Trace name": "PyTorch Profiler", "Trace iteration": 0,\n'
              '      "External id": %d,\n'
              '      "Profiler Event Index": %d, "Input Dims": [[64, 3, 224, 224], [64]], '
              '"Input type": ["float", "float"], "Module Hierarchy": "", "Call stack": ""\n'
              '    }\n  }' % (cat, name, s, d, ext, ext))
            first = False
        ts += step + 1000
        k += 1
    w('\n  ],\n  "traceName": "bench"\n}\n')


def dftracer(out, target):
    w = out.write
    w('[\n{"id":0,"name":"PR","cat":"dftracer","pid":100,"tid":100,"ph":"M",'
      '"args":{"name":"rank","value":"0"}}\n')
    ts, i, epoch, step = T0, 1, 1, 0
    ep_start = ts

    def ev(name, cat, s, d, args):
        nonlocal i
        w('{"id":%d,"name":"%s","cat":"%s","pid":100,"tid":100,"ts":%d,"dur":%d,"ph":"X",'
          '"args":%s}\n' % (i, name, cat, s, d, args))
        i += 1

    while out.tell() < target:
        step += 1
        wait = 1000 + (step * 7919) % 5000
        a = '{"epoch":%d,"step":%d,"count":%d}' % (epoch, step, step)
        ev('fetch.iter', 'dataloader', ts, wait, a)
        for r in range(40):
            ev('read', 'POSIX', ts + 10 + 20 * r, 15, '{"fhash":21,"size":"4096"}')
        ev('compute', 'compute', ts + wait, 100000, a)
        ev('fetch.block', 'dataloader', ts + wait, 100000, a)
        ts += wait + 100000
        if step == 1000:
            ev('epoch.block', 'pipeline', ep_start, ts - ep_start, '{"epoch":%d}' % epoch)
            epoch, step, ts = epoch + 1, 0, ts + 10000
            ep_start = ts
    if step:
        ev('epoch.block', 'pipeline', ep_start, ts - ep_start, '{"epoch":%d}' % epoch)
    w(']\n')


def main():
    kind, path, mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(path, 'w') as out:
        (kineto if kind == 'kineto' else dftracer)(out, int(mb * 1e6))


if __name__ == '__main__':
    main()

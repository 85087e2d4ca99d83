#!/usr/bin/env python3
"""CPU time against the wait for a core in the traces of traces/cpushare/ (docs/model.md 2.3,
"CPU time grows with the load").

  python3 tools/cpushare_fit.py rows TRACE.csv...      per activity, the rows' CPU time regressed
                                                       on their run-queue wait (least squares),
                                                       and on the share of their time waited
  python3 tools/cpushare_fit.py overlap CORES TRACE.csv...  per activity, the rows' CPU time
                                                       regressed on u, the mean number of other
                                                       cores busy with the node's other
                                                       activities during the row (their CPU time
                                                       spread evenly over their spans, at most
                                                       CORES - 1)
  python3 tools/cpushare_fit.py growth A.csv B.csv     the node's growth g = extra CPU per ns
                                                       waited, from two traces of the same job
                                                       at two loads (means per rank-iteration)
  python3 tools/cpushare_fit.py tail TRACE.csv...      the tail A (T(k) - the last compute_end)
                                                       against post_cpu + post_wait: its rest,
                                                       neither CPU nor wait, and sync_cpu (ms)
  python3 tools/cpushare_fit.py sync FROM.csv TRACE.csv...  the all-reduce's CPU (sync_cpu, ms) of
                                                       each trace against three laws from FROM's
                                                       (G0 ranks): ring bytes s0 (G-1)/G / ((G0-1)/G0),
                                                       ring steps s0 (G-1)/(G0-1), and steps with a
                                                       fixed part f = post_cpu - sync_cpu (the
                                                       optimizer step's CPU over the same gradients):
                                                       f + (s0 - f) (G-1)/(G0-1)
  python3 tools/cpushare_fit.py startup TRACE.csv...   per epoch, batch 0's span (epoch start to
                                                       T(0)) and the workers' start-up (median of
                                                       the first W fetches' start - epoch start,
                                                       as stallsim takes it), and per worker
                                                       process on the node (s)

  python3 tools/cpushare_fit.py ring TRACE.csv...      the tail's rest against a ring all-reduce
                                                       of 2 (G-1) steps whose waits for a core are
                                                       random: each rank's step starts when its
                                                       own and its left peer's previous steps are
                                                       done, and takes post_cpu / steps + an
                                                       exponential wait of mean post_wait / steps
                                                       (Monte Carlo, fixed seed): the rest the
                                                       peers' waits alone would leave (ms)
  python3 tools/cpushare_fit.py hops TRACE.csv...      the tail's rest as a chain of woken ranks:
                                                       after the last rank arrives, its data
                                                       passes 2 (G-1) hops, each waking a rank
                                                       that waits w for a core; every rank is
                                                       itself woken at its 2 (G-1) steps and c
                                                       more times (post_wait = (2 (G-1) + c) w),
                                                       and 2 of the chain's hops are the rank's
                                                       own: rest = 2 (G-2) w. Prints rest /
                                                       post_wait, and the w and c it implies

Rows of batch >= 1 (batch 0 carries start-up), as stallsim's CPU demand. Standard library only."""
import csv
import random
import sys

ACTS = [("fetch", "fetch_cpu", "fetch_wait"), ("next", "next_cpu", "next_wait"),
        ("compute", "compute_cpu", "compute_wait"), ("post", "post_cpu", "post_wait")]


def rows(path):
    with open(path, newline="") as fh:
        return [r for r in csv.DictReader(fh) if int(r["batch"]) >= 1]


def col(rs, name):
    return [float(r[name]) * 1e3 for r in rs if r.get(name, "") != ""]


def label(path):
    """The trace's folder name (its CSV's parent), else the path."""
    return path.rstrip("/").split("/")[-2] if "/" in path else path


def ranks(path):
    with open(path, newline="") as fh:
        return len({r["rank"] for r in csv.DictReader(fh)})


def mean(v):
    return sum(v) / len(v) if v else 0.0


def fit(x, y):
    """Least squares y = a + b x: (a, b, r2)."""
    mx, my = mean(x), mean(y)
    sxx = sum((u - mx) ** 2 for u in x)
    syy = sum((v - my) ** 2 for v in y)
    sxy = sum((u - mx) * (v - my) for u, v in zip(x, y))
    b = sxy / sxx if sxx > 0 else 0.0
    return my - b * mx, b, (sxy * sxy / (sxx * syy) if sxx > 0 and syy > 0 else 0.0)


def totals(path):
    """Per rank-iteration means (ms): CPU without the all-reduce's, and the waits."""
    rs = rows(path)
    cpu = sum(mean(col(rs, c)) for _, c, _ in ACTS) + mean(col(rs, "turn_cpu"))
    wait = sum(mean(col(rs, w)) for _, _, w in ACTS)
    return cpu - mean(col(rs, "sync_cpu")), wait


def spans(path):
    """[(start, end, cpu s, activity, batch)] of every activity with CPU time in the trace: fetch
    [fetch_start, fetch_end], next [request, ready], compute [ready, compute_end], post
    [compute_end, the rank's next request, else iter_end]."""
    with open(path, newline="") as fh:
        rs = list(csv.DictReader(fh))

    def f(r, c):
        return float(r[c]) if r.get(c, "") != "" else None

    req = {(r["rank"], r["epoch"], int(r["batch"])): f(r, "request") for r in rs}
    out = []
    for r in rs:
        b = int(r["batch"])
        out.append((f(r, "fetch_start"), f(r, "fetch_end"), f(r, "fetch_cpu"), "fetch", b))
        out.append((f(r, "request"), f(r, "ready"), f(r, "next_cpu"), "next", b))
        if f(r, "compute_end") is not None:
            out.append((f(r, "ready"), f(r, "compute_end"), f(r, "compute_cpu"), "compute", b))
            nxt = req.get((r["rank"], r["epoch"], b + 1))
            end = nxt if nxt is not None else f(r, "iter_end")
            out.append((f(r, "compute_end"), end, f(r, "post_cpu"), "post", b))
    return sorted(x for x in out if None not in x[:3] and x[1] > x[0])


def overlap(path, cores):
    sp = spans(path)
    longest = max(e - s for s, e, _, _, _ in sp)
    u = []
    for i, (s, e, _, _, _) in enumerate(sp):
        busy = 0.0
        j = i - 1
        while j >= 0 and sp[j][0] > s - longest:  # spans that started before, may reach into it
            busy += sp[j][2] / (sp[j][1] - sp[j][0]) * max(0.0, min(e, sp[j][1]) - s)
            j -= 1
        j = i + 1
        while j < len(sp) and sp[j][0] < e:
            busy += sp[j][2] / (sp[j][1] - sp[j][0]) * max(0.0, min(e, sp[j][1]) - sp[j][0])
            j += 1
        u.append(min(busy / (e - s), max(cores - 1, 1)))
    name = label(path)
    for act, _, _ in ACTS:
        idx = [i for i, x in enumerate(sp) if x[3] == act and x[4] >= 1]
        x, y = [u[i] for i in idx], [sp[i][2] * 1e3 for i in idx]
        a, b, r2 = fit(x, y)
        print(f"{name} {act} {len(x)} {mean(y):.2f} {mean(x):.2f} {a:.2f} {b:.2f} {r2:.2f}")


def tail(path):
    """Means over batches >= 1 (ms): A = T(k) - max compute_end, T(k) the ranks' latest next
    request (iter_end after the epoch's last batch), as stallsim measures it."""
    with open(path, newline="") as fh:
        rs = list(csv.DictReader(fh))
    by = {}
    for r in rs:
        by.setdefault((r["epoch"], int(r["batch"])), []).append(r)
    req = {(r["rank"], r["epoch"], int(r["batch"])): float(r["request"]) for r in rs}
    a = []
    for (e, k), v in by.items():
        if k < 1:
            continue
        tk = max(req.get((r["rank"], e, k + 1), float(r["iter_end"])) for r in v)
        a.append(tk - max(float(r["compute_end"]) for r in v))
    sel = [r for r in rs if int(r["batch"]) >= 1]
    pc, pw, sc = (mean(col(sel, c)) for c in ("post_cpu", "post_wait", "sync_cpu"))
    return mean(a) * 1e3, pc, pw, sc


def startup(path):
    """Per epoch (s): batch 0's span, the median start-up of the first W fetches."""
    with open(path, newline="") as fh:
        rs = list(csv.DictReader(fh))
    out = []
    for e in sorted({r["epoch"] for r in rs}, key=int):
        v = [r for r in rs if r["epoch"] == e]
        e0 = min(float(r["epoch_start"]) for r in v)
        w = int(v[0]["workers"])
        t0 = max(float(r["iter_end"]) for r in v if r["batch"] == "0")
        su = sorted(max(0.0, float(r["fetch_start"]) - e0) for r in v if int(r["batch"]) < w)
        n = len(su)
        med = (su[n // 2] if n % 2 else (su[n // 2 - 1] + su[n // 2]) / 2) if n else 0.0
        out.append((t0 - e0, med, w * len({r["rank"] for r in v})))
    return out


def ring(g, cpu, wait, draws=1500, seed=1):
    """Mean over draws of the last rank's end (ms) in a ring of 2 (g-1) dependent steps."""
    rnd, steps, tot = random.Random(seed), 2 * (g - 1), 0.0
    for _ in range(draws):
        end = [0.0] * g
        for _ in range(steps):
            end = [max(end[r], end[r - 1]) + cpu / steps + rnd.expovariate(steps / wait)
                   if wait > 0 else max(end[r], end[r - 1]) + cpu / steps for r in range(g)]
        tot += max(end)
    return tot / draws


def hops(g, rest, post_wait):
    """(w ms, c) that rest = 2 (g-2) w and post_wait = (2 (g-1) + c) w imply; None below 3 ranks
    (the rule's rest is 0 there) or without a rest."""
    if g < 3 or rest <= 0:
        return None
    w = rest / (2 * (g - 2))
    return w, post_wait / w - 2 * (g - 1)


def main(argv):
    if len(argv) >= 2 and argv[0] == "rows":
        print("trace activity rows mean_cpu_ms mean_wait_ms intercept_ms slope r2 slope*wait/cpu "
              "| on q = wait/(cpu+wait): intercept_ms slope_ms r2")
        for path in argv[1:]:
            rs = rows(path)
            name = label(path)
            for act, c, w in ACTS:
                pairs = [(float(r[w]) * 1e3, float(r[c]) * 1e3) for r in rs
                         if r.get(w, "") != "" and r.get(c, "") != ""]
                x, y = [p[0] for p in pairs], [p[1] for p in pairs]
                a, b, r2 = fit(x, y)
                q = [u / (u + v) if u + v > 0 else 0.0 for u, v in pairs]
                qa, qb, qr2 = fit(q, y)
                print(f"{name} {act} {len(x)} {mean(y):.2f} {mean(x):.2f} {a:.2f} {b:.3f} "
                      f"{r2:.2f} {b * mean(x) / mean(y):.2f} | {qa:.2f} {qb:.2f} {qr2:.2f}")
        return 0
    if len(argv) >= 3 and argv[0] == "overlap":
        print("trace activity rows mean_cpu_ms mean_u intercept_ms slope_ms_per_core r2")
        for path in argv[2:]:
            overlap(path, int(argv[1]))
        return 0
    if len(argv) == 3 and argv[0] == "growth":
        (ca, wa), (cb, wb) = totals(argv[1]), totals(argv[2])
        g = (cb - ca) / (wb - wa) if wb != wa else 0.0
        print(f"A: cpu {ca:.2f} ms wait {wa:.2f} ms; B: cpu {cb:.2f} ms wait {wb:.2f} ms "
              f"(per rank-iteration, without sync_cpu); growth {g:.4f}")
        return 0
    if len(argv) >= 2 and argv[0] == "tail":
        print("trace A_ms post_cpu_ms post_wait_ms rest_ms sync_cpu_ms")
        for path in argv[1:]:
            a, pc, pw, sc = tail(path)
            name = label(path)
            print(f"{name} {a:.2f} {pc:.2f} {pw:.2f} {a - pc - pw:.2f} {sc:.2f}")
        return 0
    if len(argv) >= 2 and argv[0] == "ring":
        print("trace G rest_ms ring_rest_ms")
        for path in argv[1:]:
            g = ranks(path)
            a, pc, pw, _ = tail(path)
            name = label(path)
            if g > 1:
                print(f"{name} {g} {a - pc - pw:.2f} {ring(g, pc, pw) - pc - pw:.2f}")
        return 0
    if len(argv) >= 2 and argv[0] == "hops":
        print("trace G rest_ms post_wait_ms rest/post_wait w_ms c")
        for path in argv[1:]:
            g = ranks(path)
            a, pc, pw, _ = tail(path)
            name = label(path)
            h = hops(g, a - pc - pw, pw)
            tailcells = f"{h[0]:.2f} {h[1]:.1f}" if h else "- -"
            print(f"{name} {g} {a - pc - pw:.2f} {pw:.2f} {(a - pc - pw) / pw:.2f} {tailcells}")
        return 0
    if len(argv) >= 3 and argv[0] == "sync":
        r0 = rows(argv[1])
        g0, s0 = ranks(argv[1]), mean(col(r0, "sync_cpu"))
        f = mean(col(r0, "post_cpu")) - s0
        print(f"from {argv[1]}: G0 {g0} sync_cpu {s0:.2f} ms, post_cpu - sync_cpu {f:.2f} ms")
        print("trace G measured_ms bytes_ms steps_ms fixed+steps_ms (each: % off measured)")
        for path in argv[2:]:
            g, s = ranks(path), mean(col(rows(path), "sync_cpu"))
            laws = [s0 * ((g - 1) / g) / ((g0 - 1) / g0), s0 * (g - 1) / (g0 - 1),
                    f + (s0 - f) * (g - 1) / (g0 - 1)]
            name = label(path)
            print(f"{name} {g} {s:.2f} " + " ".join(f"{v:.2f} ({100 * (v / s - 1):+.0f}%)"
                                                      for v in laws))
        return 0
    if len(argv) >= 2 and argv[0] == "startup":
        print("trace epoch batch0_s startup_s workers_on_node startup_per_worker_s")
        for path in argv[1:]:
            name = label(path)
            for e, (b0, su, nw) in enumerate(startup(path)):
                print(f"{name} {e} {b0:.3f} {su:.3f} {nw} {su / nw:.4f}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""CPU time against the wait for a core in the traces of traces/cpushare/ (docs/model.md 2.3,
"CPU time grows with the load").

  python3 tools/cpushare_fit.py rows TRACE.csv...      per activity, the rows' CPU time regressed
                                                       on their run-queue wait (least squares),
                                                       and on the share of their time waited
  python3 tools/cpushare_fit.py growth A.csv B.csv     the node's growth g = extra CPU per ns
                                                       waited, from two traces of the same job
                                                       at two loads (means per rank-iteration)

Rows of batch >= 1 (batch 0 carries start-up), as stallsim's CPU demand. Standard library only."""
import csv
import sys

ACTS = [("fetch", "fetch_cpu", "fetch_wait"), ("next", "next_cpu", "next_wait"),
        ("compute", "compute_cpu", "compute_wait"), ("post", "post_cpu", "post_wait")]


def rows(path):
    with open(path, newline="") as fh:
        return [r for r in csv.DictReader(fh) if int(r["batch"]) >= 1]


def col(rs, name):
    return [float(r[name]) * 1e3 for r in rs if r.get(name, "") != ""]


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


def main(argv):
    if len(argv) >= 2 and argv[0] == "rows":
        print("trace activity rows mean_cpu_ms mean_wait_ms intercept_ms slope r2 slope*wait/cpu "
              "| on q = wait/(cpu+wait): intercept_ms slope_ms r2")
        for path in argv[1:]:
            rs = rows(path)
            name = path.rstrip("/").split("/")[-2] if "/" in path else path
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
    if len(argv) == 3 and argv[0] == "growth":
        (ca, wa), (cb, wb) = totals(argv[1]), totals(argv[2])
        g = (cb - ca) / (wb - wa) if wb != wa else 0.0
        print(f"A: cpu {ca:.2f} ms wait {wa:.2f} ms; B: cpu {cb:.2f} ms wait {wb:.2f} ms "
              f"(per rank-iteration, without sync_cpu); growth {g:.4f}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

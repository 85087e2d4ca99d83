#!/usr/bin/env python3
"""Writes the fuzz corpora's seeds of real files (issue 17 item 10): the
notebook's CSVs, tidy traces as the capture tool and as pandas' to_csv write
them (with its unnamed index column), byte-order-mark and CRLF variants, and
the heads of the public traces. Usage: tools/fuzz_seeds.py (from anywhere);
rewrites fuzz/corpus/<target>/real-* only."""
import glob
import gzip
import os

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
corpus = os.path.join(root, "fuzz", "corpus")
nb = os.path.join(root, "tests", "golden", "seed-case1", "input")
NB = "fsNprepNloadNtrain_Imagenet_default_resnet50_epoch1_b2048_worker12_thread0"


def head(path, lines):
    with open(path, "rb") as f:
        return b"".join(f.readline() for _ in range(lines))


def variants(name, data):
    """name -> data, with BOM, CRLF, BOM+CRLF, an index column and no final newline."""
    crlf = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    out = {name: data, name + "-bom": b"\xef\xbb\xbf" + data, name + "-crlf": crlf,
           name + "-bom-crlf": b"\xef\xbb\xbf" + crlf, name + "-cut": data[:-5]}
    return out


def pandas_index(data):
    """The trace as pandas' df.to_csv(path) writes it: an unnamed index column first."""
    rows = data.split(b"\n")
    body = [(b"" if i == 0 else str(i - 1).encode()) + b"," + r for i, r in enumerate(rows) if r]
    return b"\n".join(body) + b"\n"


def write(target, files):
    d = os.path.join(corpus, target)
    os.makedirs(d, exist_ok=True)
    for old in glob.glob(os.path.join(d, "real-*")):
        os.remove(old)
    for name, data in sorted(files.items()):
        with open(os.path.join(d, "real-" + name), "wb") as f:
            f.write(data)


def main():
    tidy = {}
    for p in sorted(glob.glob(os.path.join(root, "traces", "*", "trace.csv"))):
        n = os.path.basename(os.path.dirname(p))
        h = head(p, 41)
        tidy.update(variants(n, h))
        tidy.update(variants(n + "-pandas", pandas_index(h)))
    pub = {}
    for p in sorted(glob.glob("/work/shared/public-traces/*.gz")):
        with gzip.open(p, "rb") as f:
            pub["public-" + os.path.basename(p)[:-3]] = f.read(4096)
    small = {k: v for k, v in tidy.items() if len(v) <= 8192}
    write("tidy", {**tidy, **pub})
    write("pipeline", {**small, **{k: v[:8192] for k, v in pub.items()}})
    fetch = head(os.path.join(nb, NB + "_simp_fetchdifftime.csv"), 16)
    start = head(os.path.join(nb, NB + "_simp_fetchstartdifftime.csv"), 16)
    perf = head(os.path.join(nb, NB + ".csv"), 61)
    ds = {}
    for n, (a, b, c) in {"notebook": (fetch, start, perf)}.items():
        joined = lambda x, y, z: x + b"@@\n" + y + b"@@\n" + z
        ds[n] = joined(fetch, start, perf)
        crlf = lambda x: x.replace(b"\n", b"\r\n")
        bom = lambda x: b"\xef\xbb\xbf" + x
        ds[n + "-crlf"] = joined(crlf(fetch), crlf(start), crlf(perf))
        ds[n + "-bom"] = joined(bom(fetch), bom(start), bom(perf))
        ds[n + "-cut"] = joined(fetch[:-5], start, perf)
        ds[n + "-fetch-only"] = fetch
    write("dsanalyzer", ds)
    nums = {}
    for i, v in enumerate(fetch.split(b"\n")[1].split(b",")[3:5] +
                          start.split(b"\n")[1].split(b",")[3:5] +
                          perf.split(b"\n")[1].split(b",")[4:7]):
        nums["notebook-%d" % i] = v
    write("numbers", nums)
    ini = {}
    for p in sorted(glob.glob(os.path.join(root, "configs", "*.ini"))):
        with open(p, "rb") as f:
            data = f.read()
        ini[os.path.basename(p)] = data
        ini[os.path.basename(p) + "-crlf-bom"] = b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n")
    write("ini", ini)


if __name__ == "__main__":
    main()

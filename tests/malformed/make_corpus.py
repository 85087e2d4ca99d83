#!/usr/bin/env python3
"""Writes the malformed-input corpus (issue 10) and its MANIFEST.

Each case: kind, file, expected exit status, a text the one-line error must
hold (its file:line:column), or '-' for an accepted input. Kinds:
  ini   the file is the scenario: stallsim run FILE
  tidy  stallsim validate base_tidy.ini --set trace.path=FILE
  fetch / start / perf  stallsim run base_ds.ini --set trace.KIND=FILE
  kineto / dftracer  stallsim analyze FILE -o OUT
Run from this folder: python3 make_corpus.py (the files are committed)."""
import os

cases = []


def put(name, data, kind, code, want):
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(name, mode, **({} if mode == "wb" else {"newline": ""})) as f:
        f.write(data)
    cases.append((kind, name, code, want))


# ---- a small valid tidy trace: 2 ranks x 2 epochs x 4 batches ----
TH = "rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,workers,prefetch,epoch_start"


def tidy_rows(ranks=2, epochs=2, batches=4):
    rows = []
    for e in range(epochs):
        es = 1000.0 + e * 10
        for k in range(batches):
            for r in range(ranks):
                req = es + 0.1 + k * 1.0
                fs, fe = req - 0.05, req + 0.2
                rd = fe + 0.01
                ie = rd + 0.5
                rows.append([r, e, k, k % 2, f"{fs:.6f}", f"{fe:.6f}", f"{req:.6f}", f"{rd:.6f}",
                             f"{ie:.6f}", 2, 2, f"{es:.6f}"])
    return rows


def tidy_text(rows, header=TH, nl="\n"):
    return nl.join([header] + [",".join(str(x) for x in r) for r in rows]) + nl


good = tidy_rows()
put("base_tidy.csv", tidy_text(good), "tidy", 0, "-")
put("tidy_crlf.csv", tidy_text(good, nl="\r\n"), "tidy", 0, "-")
put("tidy_extra_columns.csv", tidy_text([r + ["x", 7] for r in good], TH + ",note,other"), "tidy", 0, "-")
put("tidy_blank_lines.csv", tidy_text(good).replace("\n", "\n\n", 3), "tidy", 0, "-")
put("tidy_empty.csv", "", "tidy", 2, "tidy_empty.csv:1: empty file")
put("tidy_header_only.csv", TH + "\n", "tidy", 2, "tidy_header_only.csv:2: empty trace")
put("tidy_bom.csv", b"\xef\xbb\xbf" + tidy_text(good).encode(), "tidy", 0, "-")  # a UTF-8 BOM is skipped
put("tidy_truncated_row.csv", tidy_text(good)[:-20], "tidy", 2, "tidy_truncated_row.csv:17:")
put("tidy_stray_quote.csv", tidy_text(good).replace("1000.", '10"00.', 1), "tidy", 2, "tidy_stray_quote.csv:2")
put("tidy_unterminated_quote.csv", tidy_text(good) + '0,2,0,"0\n', "tidy", 2, "tidy_unterminated_quote.csv:18")
put("tidy_non_utf8.csv", tidy_text(good).encode().replace(b"1000.05", b"\xff\xfe00.05", 1), "tidy", 2,
    "tidy_non_utf8.csv:2:5:")
bad = [list(r) for r in good]; bad[3][4] = "nan"
put("tidy_nan.csv", tidy_text(bad), "tidy", 2, "tidy_nan.csv:5:5:")
bad = [list(r) for r in good]; bad[3][5] = "inf"
put("tidy_inf.csv", tidy_text(bad), "tidy", 2, "tidy_inf.csv:5:6:")
bad = [list(r) for r in good]; bad[2][8] = "1e400"
put("tidy_exponent.csv", tidy_text(bad), "tidy", 2, "tidy_exponent.csv:4:9:")
bad = [list(r) for r in good]; bad[0][4] = "-1.0"
put("tidy_negative_time.csv", tidy_text(bad), "tidy", 2, "tidy_negative_time.csv:2:5:")
bad = [list(r) for r in good]; bad[1][5], bad[1][4] = bad[1][4], bad[1][5]
put("tidy_reversed_fetch.csv", tidy_text(bad), "tidy", 2, "tidy_reversed_fetch.csv:3:6:")
bad = [list(r) for r in good]; bad[4][8] = bad[4][6]
put("tidy_iter_before_ready.csv", tidy_text(bad), "tidy", 2, "tidy_iter_before_ready.csv:6:9:")
bad = [list(r) for r in good]; bad[2][5] = "1001.400000"
put("tidy_fetch_end_after_ready.csv", tidy_text(bad), "tidy", 2, "tidy_fetch_end_after_ready.csv:4:6:")
bad = [list(r) for r in good]; bad = bad[:3] + [bad[2]] + bad[3:]
put("tidy_duplicate_row.csv", tidy_text(bad), "tidy", 2, "tidy_duplicate_row.csv:5:")
bad = [list(r) for r in good]; del bad[5]
put("tidy_missing_row.csv", tidy_text(bad), "tidy", 2, "tidy_missing_row.csv:7:")
bad = [list(r) for r in good]; bad[2], bad[4] = bad[4], bad[2]
put("tidy_reordered_rows.csv", tidy_text(bad), "tidy", 2, "tidy_reordered_rows.csv:4:")
hdr = TH.split(","); hdr[4], hdr[5] = hdr[5], hdr[4]
put("tidy_reordered_columns.csv", tidy_text(good, ",".join(hdr)), "tidy", 2, "tidy_reordered_columns.csv:1:5:")
put("tidy_missing_column.csv", tidy_text([r[:8] for r in good], ",".join(TH.split(",")[:8])), "tidy", 2,
    "tidy_missing_column.csv:1")
put("tidy_duplicate_column.csv", tidy_text([r + [2] for r in good], TH + ",workers"), "tidy", 2,
    "tidy_duplicate_column.csv:1:13:")
bad = [list(r) for r in good]; bad[0][9] = 4294967298
put("tidy_workers_32bit.csv", tidy_text(bad), "tidy", 2, "tidy_workers_32bit.csv:2:10:")
bad = [list(r) for r in good]; bad[0][3] = 4294967296
put("tidy_worker_huge.csv", tidy_text(bad), "tidy", 2, "tidy_worker_huge.csv:2:4:")
bad = [list(r) for r in good]; bad[0][10] = 99999999999
put("tidy_prefetch_huge.csv", tidy_text(bad), "tidy", 2, "tidy_prefetch_huge.csv:2:11:")
bad = [list(r) for r in good]; bad[5][9] = 3
put("tidy_workers_disagree.csv", tidy_text(bad), "tidy", 2, "tidy_workers_disagree.csv:7:10:")
bad = [list(r) for r in good]; bad[0][11] = "1000.5"
put("tidy_epoch_start_late.csv", tidy_text(bad), "tidy", 2, "tidy_epoch_start_late.csv:2:12:")
bad = [list(r) for r in good]
for c in (4, 5, 6, 7, 8):
    bad[2][c] = f"{float(bad[2][c]) - 0.9:.6f}"
put("tidy_batch_goes_back.csv", tidy_text(bad), "tidy", 2, "tidy_batch_goes_back.csv:4:7:")
bad = [list(r) for r in good]; bad[0][4] = "9999999999.0"
put("tidy_clock_limit.csv", tidy_text(bad), "tidy", 2, "tidy_clock_limit.csv:2:5:")
bad = [list(r) for r in good]
for r in bad[8:]:
    for c in (4, 5, 6, 7, 8, 11):
        r[c] = f"{float(r[c]) + 2e7:.6f}"
put("tidy_span_limit.csv", tidy_text(bad), "tidy", 2, "tidy_span_limit.csv:10:5:")
bad = [list(r) for r in good]; bad[0][0] = "99999999999999999999"
put("tidy_rank_overflow.csv", tidy_text(bad), "tidy", 2, "tidy_rank_overflow.csv:2:1:")
put("tidy_quoted_newline.csv", tidy_text([r + ['"a\nb"'] for r in good[:1]] + [r + ["c"] for r in good[1:2]] +
                                         [good[2] + ["x"]], TH + ",note").replace(",1000.", ",x1000.", 1)
    if False else tidy_text([good[0] + ['"a\nb"']] + [r + ["c"] for r in good[1:]], TH + ",note")
    .replace("\n1,0,1,", "\n1,0,1,x", 1), "tidy", 2, "tidy_quoted_newline.csv:6:4:")
put("tidy_short_row.csv", tidy_text(good).replace(",2,2,1000.000000\n", "\n", 1), "tidy", 2, "tidy_short_row.csv:2")
put("tidy_nul_byte.csv", tidy_text(good).encode().replace(b"1000.05", b"1000\x0005", 1), "tidy", 2,
    "tidy_nul_byte.csv:2:5:")
put("tidy_binary.csv", bytes(range(256)) * 4, "tidy", 2, "tidy_binary.csv:1")
# libcsv trims blanks around unquoted fields: legal.
put("tidy_spaces_in_numbers.csv", tidy_text(good).replace(",1000.05", ", 1000.05", 1), "tidy", 0, "-")

# ---- a small valid dsanalyzer set: 2 GPUs, epoch 1, 6 batches ----
N, G = 6, 2
fetch = ",Epoch,Index number," + ",".join(f"Fetch time (sec)_gpu{g}" for g in range(G)) + "\n"
start = ",Epoch,Index number," + ",".join(f"Start time_gpu{g}" for g in range(G)) + "\n"
perf = ",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n"
for k in range(N):
    fetch += f"{k},1,{k}," + ",".join(f"{0.2 + 0.01 * g:.3f}" for g in range(G)) + "\n"
    start += f"{k},1,{k}," + ",".join(f"2022-03-01 10:00:{k:02d}.{100 + g:03d}" for g in range(G)) + "\n"
for k in range(N):
    for g in range(G):
        perf += f"{k * G + g},1,{k},{g},2022-03-01 10:00:{k:02d}.900,0.8,0.05\n"
put("base_ds_fetch.csv", fetch, "fetch", 0, "-")
put("base_ds_start.csv", start, "start", 0, "-")
put("base_ds_perf.csv", perf, "perf", 0, "-")
put("ds_fetch_crlf.csv", fetch.replace("\n", "\r\n"), "fetch", 0, "-")
put("ds_fetch_empty.csv", "", "fetch", 2, "ds_fetch_empty.csv:1:1:")
put("ds_fetch_header_only.csv", fetch.split("\n")[0] + "\n", "fetch", 2, "ds_fetch_header_only.csv")
put("ds_fetch_bom.csv", b"\xef\xbb\xbf" + fetch.encode(), "fetch", 0, "-")  # skipped, as in tidy
put("ds_fetch_truncated.csv", fetch[:-8], "fetch", 2, "ds_fetch_truncated.csv:7:")
put("ds_fetch_stray_quote.csv", fetch.replace("0.200", '0."200', 1), "fetch", 2, "ds_fetch_stray_quote.csv:2:")
put("ds_fetch_nan.csv", fetch.replace("0.200", "nan", 1), "fetch", 2, "ds_fetch_nan.csv:2:4:")
put("ds_fetch_inf.csv", fetch.replace("0.210", "inf", 1), "fetch", 2, "ds_fetch_inf.csv:2:5:")
put("ds_fetch_negative.csv", fetch.replace("0.200", "-0.2", 1), "fetch", 2, "ds_fetch_negative.csv:2:4:")
put("ds_fetch_huge.csv", fetch.replace("0.200", "5e9", 1), "fetch", 2, "ds_fetch_huge.csv:2:4:")
put("ds_fetch_1e300.csv", fetch.replace("0.200", "1e300", 1), "fetch", 2, "ds_fetch_1e300.csv:2:4:")
lines = fetch.split("\n")
put("ds_fetch_duplicate_row.csv", "\n".join(lines[:3] + [lines[2]] + lines[3:]), "fetch", 2,
    "ds_fetch_duplicate_row.csv:4:")
put("ds_fetch_reversed_rows.csv", "\n".join(lines[:2] + [lines[3], lines[2]] + lines[4:]), "fetch", 2,
    "ds_fetch_reversed_rows.csv:4:")
put("ds_fetch_missing_row.csv", "\n".join(lines[:3] + lines[4:]), "fetch", 2, "ds_fetch_missing_row.csv")
put("ds_fetch_three_gpus.csv", "\n".join([lines[0] + ",Fetch time (sec)_gpu2"] +
                                         [l + ",0.3" for l in lines[1:-1]]) + "\n", "fetch", 2,
    "ds_fetch_three_gpus.csv")
put("ds_fetch_gpu_gap.csv", fetch.replace("_gpu1", "_gpu3", 1), "fetch", 2, "ds_fetch_gpu_gap.csv:1")
put("ds_fetch_duplicate_column.csv", "\n".join([lines[0] + ",Epoch"] + [l + ",1" for l in lines[1:-1]]) + "\n",
    "fetch", 2, "ds_fetch_duplicate_column.csv:1:6:")
put("ds_fetch_extra_column.csv", "\n".join([lines[0] + ",comment"] + [l + ",ok" for l in lines[1:-1]]) + "\n",
    "fetch", 0, "-")
put("ds_fetch_reordered_columns.csv", "\n".join(",".join([p[0], p[2], p[1], p[3], p[4]]) for p in
                                                 (l.split(",") for l in lines[:-1])) + "\n", "fetch", 0, "-")
put("ds_fetch_non_utf8.csv", fetch.encode().replace(b"0.200", b"0.2\xff0", 1), "fetch", 2,
    "ds_fetch_non_utf8.csv:2:4:")
put("ds_fetch_no_index_column.csv", "\n".join(l[l.index(",") + 1:] for l in lines[:-1]) + "\n", "fetch", 2,
    "ds_fetch_no_index_column.csv:1:1:")
put("ds_fetch_epoch_overflow.csv", fetch.replace("\n0,1,0,", "\n0,99999999999999999999,0,", 1), "fetch", 2,
    "ds_fetch_epoch_overflow.csv:2:2:")
put("ds_fetch_nul_byte.csv", fetch.encode().replace(b"0.200", b"0.2\x0099", 1), "fetch", 2,
    "ds_fetch_nul_byte.csv:2:4:")
put("ds_start_bad_date.csv", start.replace("2022-03-01 10:00:00.100", "2022-02-30 10:00:00.100", 1), "start", 2,
    "ds_start_bad_date.csv:2:4:")
put("ds_start_year_1900.csv", start.replace("2022-03-01 10:00:00.100", "1900-01-01 00:00:00.100", 1), "start", 2,
    "ds_start_year_1900.csv:2:4:")
put("ds_start_year_2300.csv", start.replace("2022-03-01 10:00:00.100", "2300-01-01 00:00:00.100", 1), "start", 2,
    "ds_start_year_2300.csv:2:4:")
put("ds_start_ten_digits.csv", start.replace("10:00:00.100", "10:00:00.1000000000", 1), "start", 2,
    "ds_start_ten_digits.csv:2:4:")
put("ds_start_one_gpu.csv", "\n".join(",".join(l.split(",")[:4]) for l in start.split("\n")[:-1]) + "\n",
    "start", 2, "ds_start_one_gpu.csv")
put("ds_start_missing_row.csv", "\n".join(start.split("\n")[:2] + start.split("\n")[3:]), "start", 2,
    "ds_start_missing_row.csv")
# The start file's clock an hour off the perf file's (one written in UTC, the
# other in local time): refused at the first row (fetch ends after the batch was
# received; fetch starts an hour before the loop's first request). 5 ms of clock
# jitter is not refused (tolerance: 1 s late, 60 s early; docs/formats.md).
def start_shift(hours, ms=0):
    def one(ts):
        hh = int(ts[11:13]) + hours
        sec = float(ts[17:]) + ms / 1000
        return f"{ts[:11]}{hh:02d}:{ts[14:16]}:{sec:06.3f}"
    rows = [l.split(",") for l in start.split("\n")[1:-1]]
    return start.split("\n")[0] + "\n" + "".join(",".join(r[:3] + [one(x) for x in r[3:]]) + "\n" for r in rows)


put("ds_start_utc_ahead.csv", start_shift(1), "start", 2, "ds_start_utc_ahead.csv:2:4: 'Start time_gpu0'")
put("ds_start_utc_behind.csv", start_shift(-1), "start", 2, "ds_start_utc_behind.csv:2:4: 'Start time_gpu0'")
put("ds_start_jitter_5ms.csv", start_shift(0, 5), "start", 0, "-")
plines = perf.split("\n")
put("ds_perf_gpu_out_of_range.csv", perf.replace("\n1,1,0,1,", "\n1,1,0,7,", 1), "perf", 2,
    "ds_perf_gpu_out_of_range.csv:3:4:")
put("ds_perf_duplicate.csv", "\n".join(plines[:2] + [plines[1]] + plines[2:]), "perf", 2,
    "ds_perf_duplicate.csv:3:")
put("ds_perf_missing_gpu_row.csv", "\n".join(plines[:2] + plines[3:]), "perf", 2,
    "ds_perf_missing_gpu_row.csv:2:4:")  # where the row belongs: its step's first row, GPU column
put("ds_perf_nan_stall.csv", perf.replace("0.8,0.05\n", "0.8,NaN\n", 1), "perf", 2, "ds_perf_nan_stall.csv:2:7:")
put("ds_perf_huge_iter.csv", perf.replace("0.8,0.05\n", "2e6,0.05\n", 1), "perf", 2, "ds_perf_huge_iter.csv:2:6:")
put("ds_perf_empty.csv", "", "perf", 2, "ds_perf_empty.csv:1:1:")

# ---- INI scenarios ----
MODEL = "[scenario]\nname = m\nmode = model\n[trace]\nformat = none\n[fetch]\nmean_s = 0.01\n[compute]\nmean_s = 0.02\n"
put("ini_model_ok.ini", MODEL + "[run]\nbatches = 20\n", "ini", 0, "-")
put("ini_model_crlf.ini", (MODEL + "[run]\nbatches = 20\n").replace("\n", "\r\n"), "ini", 0, "-")
put("ini_model_bom.ini", b"\xef\xbb\xbf" + (MODEL + "[run]\nbatches = 20\n").encode(), "ini", 0, "-")
put("ini_empty.ini", "", "ini", 2, "ini_empty.ini")
put("ini_nuls.ini", b"\0" * 64, "ini", 2, "ini_nuls.ini:1:1: NUL byte")
put("ini_nul_in_value.ini", (MODEL + "[run]\nbatches = 20\0 000\n").encode(), "ini", 2, "ini_nul_in_value.ini:11:13:")
put("ini_indented.ini", MODEL + "[run]\nbatches = 2\n   64\n", "ini", 2, "ini_indented.ini:12:4: indented")
put("ini_dup_section.ini", MODEL + "[run]\nbatches = 20\n[fetch]\nsigma = 1\n", "ini", 2,
    "ini_dup_section.ini:12:1: section [fetch] given twice (first on line 6)")
put("ini_dup_key.ini", MODEL + "[run]\nbatches = 20\nbatches = 30\n", "ini", 2,
    "ini_dup_key.ini:12: [run] batches: given twice (first on line 11)")
put("ini_name_dotdot.ini", MODEL.replace("name = m", "name = ../x") + "[run]\nbatches = 20\n", "ini", 2,
    "ini_name_dotdot.ini:2: [scenario] name")
put("ini_name_empty.ini", MODEL.replace("name = m", "name =") + "[run]\nbatches = 20\n", "ini", 2,
    "ini_name_empty.ini:2: [scenario] name")
put("ini_batches_wrap.ini", MODEL + "[run]\nbatches = 576460752303423488\nepochs = 4\n", "ini", 2,
    "ini_batches_wrap.ini:11: [run] batches")
put("ini_batches_memory.ini", MODEL + "[run]\nbatches = 1000000000\nepochs = 4\n", "ini", 2, "GB of memory")
put("ini_gpus_huge.ini", MODEL + "[run]\nbatches = 20\n[cluster]\ngpus = 16777216\n", "ini", 2,
    "ini_gpus_huge.ini:13: [cluster] gpus")
put("ini_allreduce_huge.ini", MODEL + "[run]\nbatches = 20\n[ddp]\nallreduce_s = 1e18\n", "ini", 2,
    "ini_allreduce_huge.ini:13: [ddp] allreduce_s")
put("ini_startup_huge.ini", MODEL + "[run]\nbatches = 20\n[loader]\nstartup_s = 5e9\n", "ini", 2,
    "ini_startup_huge.ini:13: [loader] startup_s")
put("ini_mean_nan.ini", MODEL.replace("mean_s = 0.01", "mean_s = nan") + "[run]\nbatches = 20\n", "ini", 2,
    "ini_mean_nan.ini:7: [fetch] mean_s")
put("ini_mean_inf.ini", MODEL.replace("mean_s = 0.02", "mean_s = inf") + "[run]\nbatches = 20\n", "ini", 2,
    "ini_mean_inf.ini:9: [compute] mean_s")
put("ini_long_line.ini", "[scenario]\nname = t\n[trace]\nformat = tidy\npath = " + "p" * 600 + ".csv\n", "ini", 2,
    "ini_long_line.ini:5")
put("ini_no_equals.ini", "[scenario]\nname = t\nthis line has no equals\n", "ini", 2, "ini_no_equals.ini:3")
put("ini_unknown_key.ini", MODEL + "[run]\nbatchez = 20\n", "ini", 2, "ini_unknown_key.ini:11: unknown key")
put("ini_non_utf8.ini", (MODEL + "[run]\nbatches = 2\xff0\n").encode("latin-1"), "ini", 2, "ini_non_utf8.ini:11:")
put("ini_normal_draw.ini", MODEL.replace("mean_s = 0.01", "mean_s = 1e6\ndist = normal\nsd_s = 1e6") +
    "[run]\nbatches = 2000\n", "ini", 2, "drew a duration")

put("ini_horizon.ini", MODEL.replace("mean_s = 0.02", "mean_s = 1e6") + "[run]\nbatches = 10000\n", "ini", 2,
    "s of simulated time, more than the limit of 5000000000 s")
put("ini_ring_allreduce_huge.ini", MODEL + "[run]\nbatches = 20\n[cluster]\ngpus = 4\n[ddp]\nbucket_mb = 1e18\n"
    "bandwidth_gb_s = 1e-9\n", "ini", 2, "[ddp] the ring all-reduce for 4 ranks")
put("ini_storage_slow.ini", MODEL + "[run]\nbatches = 20\n[storage]\nbandwidth_mb_s = 1e-9\nbatch_mb = 100\n",
    "ini", 2, "[storage] batch_mb")


# ---- Kineto (stallsim analyze FILE): a small trace, 0 workers, no schedule ----
import gzip as _gzip


def kineto_text(calls=4, extra=""):
    ev = ['{"ph": "X", "cat": "user_annotation", "name": '
          '"enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "pid": 7, "tid": 7, '
          f'"ts": {1000 + 100 * i}.500, "dur": 20.250, "args": {{}}}}' for i in range(calls)]
    ev.append('{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 1050, "dur": 5}')
    return ('{"schemaVersion": 1,\n "traceEvents": [\n  ' + ",\n  ".join(ev) + extra +
            '\n ],\n "baseTimeNanoseconds": 1700000000000000000}\n')


KT = kineto_text()
put("kineto_ok.json", KT, "kineto", 0, "-")
put("kineto_trailing_comma.json", KT.replace("\n ],", ",\n ],"), "kineto", 0, "-")
put("kineto_ok.json.gz", _gzip.compress(KT.encode(), mtime=0), "kineto", 0, "-")
put("kineto_empty.json", "", "kineto", 2, "kineto_empty.json: line 1: empty file")
put("kineto_truncated.json", KT[:300], "kineto", 2, "kineto_truncated.json: line 4 (byte 300): the JSON ends early")
put("kineto_truncated.json.gz", _gzip.compress(KT.encode(), mtime=0)[:120], "kineto", 2,
    "kineto_truncated.json.gz: byte 94: gzip: unexpected end of file")
put("kineto_not_json.json", KT.replace('"pid": 7, "tid": 7, "ts": 1200', '"pid": 7, "tid": 7 "ts": 1200'),
    "kineto", 2, "kineto_not_json.json: line 5 (byte")
put("kineto_bad_ts.json", KT.replace('"ts": 1100.500', '"ts": "soon"'), "kineto", 2,
    "kineto_bad_ts.json: line 4 (byte 385): 'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__': ts 'soon'")
put("kineto_no_dataloader.json", KT.replace("enumerate(DataLoader)#", "other#"), "kineto", 2,
    "kineto_no_dataloader.json: no DataLoader events")
put("kineto_one_call.json", kineto_text(calls=1), "kineto", 2, "kineto_one_call.json: only 1 DataLoader call")
put("kineto_nul.json", KT.replace('"cpu_op"', '"cpu\x00op"'), "kineto", 2, "kineto_nul.json: line 7 (byte")
put("kineto_scalar.json", "42\n", "kineto", 2, "kineto_scalar.json: no DataLoader events")

# ---- dftracer (stallsim analyze FILE.pfw) ----


def dft_text(steps=3, sep=""):
    out = ["[", '{"id":0,"name":"PR","cat":"dftracer","pid":5,"tid":5,"ph":"M","args":{"name":"rank","value":"0"}}' + sep]
    t = 1760000000000000
    out.append(f'{{"id":1,"name":"epoch.block","cat":"pipeline","pid":5,"tid":5,"ts":{t},"dur":900000,"ph":"X","args":{{"epoch":1}}}}' + sep)
    for k in range(steps):
        out.append(f'{{"id":{2 + 2 * k},"name":"fetch.iter","cat":"dataloader","pid":5,"tid":5,"ts":{t},"dur":1000,"ph":"X","args":{{"step":{k + 1}}}}}' + sep)
        out.append(f'{{"id":{3 + 2 * k},"name":"compute","cat":"compute","pid":5,"tid":5,"ts":{t + 1000},"dur":5000,"ph":"X","args":{{"step":{k + 1}}}}}' + sep)
        t += 6000
    out.append("]")
    return "\n".join(out) + "\n"


DT = dft_text()
put("dft_ok.pfw", DT, "dftracer", 0, "-")
put("dft_commas.pfw", dft_text(sep=","), "dftracer", 0, "-")
put("dft_no_brackets.pfw", "\n".join(DT.split("\n")[1:-2]) + "\n", "dftracer", 0, "-")
put("dft_ok.pfw.gz", _gzip.compress(DT.encode(), mtime=0), "dftracer", 0, "-")
put("dft_truncated_line.pfw", DT[:DT.rindex('{"id":7')] + '{"id":7,"name":"comp', "dftracer", 2,
    "dft_truncated_line.pfw: line 9 (byte")
put("dft_truncated.pfw.gz", _gzip.compress(DT.encode(), mtime=0)[:150], "dftracer", 2, "dft_truncated.pfw.gz: byte 204: gzip: unexpected end of file")
put("dft_array_line.pfw", DT.replace('{"id":1,', '[1, 2]\n{"id":1,'), "dftracer", 2,
    "dft_array_line.pfw: line 3 (byte")
put("dft_garbage.pfw", DT.replace('"cat":"compute"', '"cat":compute'), "dftracer", 2, "dft_garbage.pfw: line 5 (byte")
put("dft_bad_ts.pfw", DT.replace('"ts":1760000000001000', '"ts":"x"'), "dftracer", 2,
    "dft_bad_ts.pfw: line 5 (byte 454): 'compute': ts 'x'")
put("dft_no_compute.pfw", DT.replace('"name":"compute"', '"name":"other"'), "dftracer", 2,
    "dft_no_compute.pfw: rank 0: no compute events")
put("dft_empty.pfw", "", "dftracer", 2, "dft_empty.pfw: rank 0: no compute events")
put("dft_nul.pfw", DT.replace('"cat":"dataloader"', '"cat":"data\x00loader"', 1), "dftracer", 2,
    "dft_nul.pfw: line 4 (byte")

with open("MANIFEST", "w") as f:
    f.write("# kind\tfile\texit\texpected text ('-': accepted); written by make_corpus.py\n")
    for kind, name, code, want in cases:
        if name.startswith("base_ds_"):
            continue
        f.write(f"{kind}\t{name}\t{code}\t{want}\n")
    f.write("tidy\t@100MB_line\t2\t@100MB_line:2: line longer than 16777216 bytes\n")
with open("base_tidy.ini", "w") as f:
    f.write("[scenario]\nname = malformed\nmode = model\n[trace]\nformat = tidy\npath = base_tidy.csv\n")
with open("base_ds.ini", "w") as f:
    f.write("[scenario]\nname = malformed\nmode = replay\n[trace]\nfetch = base_ds_fetch.csv\n"
            "start = base_ds_start.csv\nperf = base_ds_perf.csv\n[report]\nwarmup = 0\n")
print(len(cases) + 1, "cases")

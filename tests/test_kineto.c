/* The PyTorch profiler (Kineto) reader on real traces: HTA's public sample
 * (Kineto layout: traceEvents, baseTimeNanoseconds, distributedInfo,
 * ProfilerStep, a multi-worker DataLoader) and the traces that
 * tools/make_kineto_fixtures.py wrote with Debian's torch (tests/kineto/
 * README.md: 0 and 2 workers, with and without a schedule, 2 DDP ranks),
 * then with torch 2.11 on an H100 (torch211/: CUDA events, 2 DDP ranks on
 * one clock); the numbers checked are the ones the traces and the script
 * fix. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "formats/jsonev.h"
#include "stall/analyze.h"
#include "stall/dftracer.h"
#include "stall/kineto.h"
#include "stall/io.h"
#include "stall/table.h"
#include "stall/tlexport.h"

#include "tmpdir.h"

#define SRC STALL_SOURCE_DIR
#define HTA SRC "/tests/public/hta_trace_diff_test.json.gz"
#define KT SRC "/tests/kineto"
#define MS INT64_C(1000000)

static char kdir[] = "/tmp/stall_kineto_XXXXXX";
static void k_setup(void)
{
    tmpdir_make(kdir);
}
static void k_teardown(void)
{
    tmpdir_remove(kdir);
}
TestSuite(kineto, .init = k_setup, .fini = k_teardown);

static stall_tidy_trace *load(const char *path)
{
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    int rc = stall_kineto_load(path, &t, &err);
    cr_assert_eq(rc, 0, "%s: %s", path, err.msg);
    cr_assert_not_null(t);
    cr_assert_not_null(t->summary);
    return t;
}

Test(kineto, microseconds_to_ns_exactly)
{
    int64_t v;
    cr_assert_eq(jev_us_to_ns("1212075529876.817", &v), 0);
    cr_expect_eq(v, INT64_C(1212075529876817));
    cr_assert_eq(jev_us_to_ns("1698352095942658", &v), 0);
    cr_expect_eq(v, INT64_C(1698352095942658000));
    cr_assert_eq(jev_us_to_ns("12.3456", &v), 0);
    cr_expect_eq(v, 12346); /* half away from zero beyond the ns */
    cr_assert_eq(jev_us_to_ns("-1", &v), 0);
    cr_expect_eq(v, -1000);
    cr_assert_eq(jev_us_to_ns("1.5e3", &v), 0);
    cr_expect_eq(v, 1500000);
    cr_expect_neq(jev_us_to_ns("", &v), 0);
    cr_expect_neq(jev_us_to_ns("abc", &v), 0);
    cr_expect_neq(jev_us_to_ns("12x", &v), 0);
    cr_expect_neq(jev_us_to_ns("99999999999999999999", &v), 0);
}

/* HTA's trace: rank 1 of 2, 6 ProfilerStep#1009..#1014, each holding one
 * _MultiProcessingDataLoaderIter.__next__ wait; times exact to the ns. */
Test(kineto, hta_public_sample)
{
    stall_tidy_trace *t = load(HTA);
    cr_expect_eq(t->ranks, 1);
    cr_expect_eq(t->epochs, 1);
    cr_expect_eq(t->batches, 6);
    cr_expect(t->fetch_unknown, "workers > 0: the fetches are not in the trace");
    cr_expect_null(t->compute_end);
    cr_expect_null(t->checkpoint_s);
    cr_expect_eq(t->workers, -1);
    static const int64_t req_us[6] = {1661938466265552, 1661938466365785, 1661938466487986,
                                      1661938466654541, 1661938466736474, 1661938466843729};
    static const int64_t wait_us[6] = {102, 81, 85, 118, 103, 81};
    for (int k = 0; k < 6; k++) {
        cr_expect_eq(t->request[k], req_us[k] * 1000, "request %d", k);
        cr_expect_eq(t->ready[k] - t->request[k], wait_us[k] * 1000, "wait %d", k);
        cr_expect_eq(t->worker[k], -1);
    }
    cr_expect_eq(t->epoch_start[0], INT64_C(1661938466265087000)); /* ProfilerStep#1009 */
    cr_expect_eq(t->iter_end[5], (INT64_C(1661938466843382) + 166350) * 1000);
    cr_expect(strstr(t->summary, "rank 1 of world size 2 (nccl)"), "%s", t->summary);
    cr_expect(strstr(t->summary, "rank from distributedInfo"), "%s", t->summary);
    cr_expect(strstr(t->summary, "ProfilerStep#"), "%s", t->summary);
    cr_expect(strstr(t->summary, "censored"), "%s", t->summary);
    stall_analysis a;
    stall_analyze(t, &a);
    cr_expect(a.fetch_unknown);
    cr_expect_eq(a.nwk, 0, "no per-worker rows without fetch times");
    cr_expect(isnan(a.rank[0].handover_s));
    cr_expect(fabs(a.rank[0].data_s - (81 + 85 + 118 + 103 + 81) * 1e-6) < 1e-12);
    cr_expect(fabs(a.rank[0].startup_s - (265552 + 102 - 265087) * 1e-6) < 1e-12);
    cr_expect(fabs(a.rank[0].total_s - 0.744645) < 1e-12);
    cr_expect_eq(a.verdict, STALL_VERDICT_COMPUTE);
    for (int i = 0; i < a.nslow; i++)
        cr_expect(isnan(a.slow[i].fetch_s));
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

/* 0 workers, no schedule: 8 batches; each __next__ is the whole fetch of
 * 4 samples sleeping 5 ms (>= 20 ms), each iteration adds a 10 ms step. */
Test(kineto, zero_workers_without_schedule)
{
    stall_tidy_trace *t = load(KT "/w0_nosched");
    cr_expect_eq(t->ranks, 1);
    cr_expect_eq(t->batches, 8, "iterations = the batches the script ran");
    cr_expect_not(t->fetch_unknown);
    cr_expect_eq(t->workers, 0);
    for (int k = 0; k < 8; k++) {
        stall_time f = t->fetch_end[k] - t->fetch_start[k];
        cr_expect_geq(f, 20 * MS, "fetch %d: %lld ns, below the script's 4 x 5 ms sleep", k,
                      (long long)f);
        cr_expect_lt(f, 1000 * MS);
        cr_expect_eq(t->fetch_start[k], t->request[k]);
        cr_expect_eq(t->fetch_end[k], t->ready[k]);
        cr_expect_geq(t->iter_end[k] - t->ready[k], 10 * MS, "the 10 ms step of %d", k);
    }
    cr_expect(strstr(t->summary, "0 workers: each call is the whole fetch"), "%s", t->summary);
    cr_expect(strstr(t->summary, "9 calls"), "%s", t->summary);
    cr_expect(strstr(t->summary, "relative to the profiler's start"), "%s", t->summary);
    stall_analysis a;
    stall_analyze(t, &a);
    cr_expect_not(a.fetch_unknown);
    cr_expect_not(isnan(a.rank[0].handover_s));
    cr_expect_geq(a.rank[0].data_s, 7 * 0.020);
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

Test(kineto, zero_workers_with_schedule)
{
    stall_tidy_trace *t = load(KT "/w0_sched");
    cr_expect_eq(t->batches, 6, "6 active ProfilerSteps (wait 1, warmup 1, active 6)");
    cr_expect_not(t->fetch_unknown);
    for (int k = 0; k < 6; k++)
        cr_expect_geq(t->fetch_end[k] - t->fetch_start[k], 20 * MS);
    cr_expect(strstr(t->summary, "ProfilerStep# ranges holding a DataLoader call (6; 0 without"),
              "%s", t->summary);
    stall_tidy_free(t);
}

Test(kineto, two_workers_without_and_with_schedule)
{
    stall_tidy_trace *t = load(KT "/w2_nosched");
    cr_expect_eq(t->batches, 8);
    cr_expect(t->fetch_unknown);
    cr_expect(strstr(t->summary, "_MultiProcessingDataLoaderIter"), "%s", t->summary);
    /* the first wait holds the workers' start-up and their first fetch */
    cr_expect_geq(t->ready[0] - t->request[0], 20 * MS);
    stall_tidy_free(t);
    t = load(KT "/w2_sched");
    cr_expect_eq(t->batches, 6);
    cr_expect(t->fetch_unknown);
    stall_tidy_free(t);
}

/* Two DDP ranks over gloo, a gzipped file each, ranks from the names. */
Test(kineto, ddp_two_ranks_a_file_each)
{
    stall_tidy_trace *t = load(KT "/ddp2_w2");
    cr_expect_eq(t->ranks, 2);
    cr_expect_eq(t->epochs, 1);
    cr_expect_eq(t->batches, 6);
    cr_expect(t->fetch_unknown);
    cr_expect(strstr(t->summary, "2 files, ranks 0,1"), "%s", t->summary);
    cr_expect(strstr(t->summary, "rank from the file name"), "%s", t->summary);
    cr_expect(strstr(t->summary, "not aligned"), "%s", t->summary);
    cr_expect(strstr(t->summary, "DistributedDataParallel.forward 12"), "%s", t->summary);
    stall_tidy_free(t);
}

Test(kineto, probes)
{
    char head[4096];
    long n = jev_head(HTA, head, sizeof head);
    cr_assert_gt(n, 100);
    cr_expect(stall_kineto_probe(head, (size_t)n));
    cr_expect_not(stall_dftracer_probe(head, (size_t)n));
    n = jev_head(SRC "/tests/public/dftracer_dlio_unet3d_2023.pfw.gz", head, sizeof head);
    cr_assert_gt(n, 100);
    cr_expect_not(stall_kineto_probe(head, (size_t)n));
    cr_expect(stall_dftracer_probe(head, (size_t)n));
    cr_expect_not(stall_kineto_probe("rank,epoch", 10));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* A schedule with repeat: a file per cycle, each a profiling window (an
 * epoch of the analysis); the legacy exporter's times restart in each, so
 * the windows are placed back to back, in the file names' order. */
Test(kineto, repeat_windows)
{
    stall_tidy_trace *t = load(KT "/w0_repeat");
    cr_expect_eq(t->ranks, 1);
    cr_expect_eq(t->epochs, 2);
    cr_expect_eq(t->batches, 3);
    cr_expect_not(t->fetch_unknown);
    cr_expect_geq(t->epoch_start[1], t->iter_end[stall_tidy_at(t, 0, 0, 2)]);
    for (int e = 0; e < 2; e++)
        for (int k = 0; k < 3; k++) {
            size_t i = stall_tidy_at(t, e, 0, k);
            cr_expect_geq(t->fetch_end[i] - t->fetch_start[i], 20 * MS);
        }
    cr_expect(strstr(t->summary, "2 profiling windows"), "%s", t->summary);
    cr_expect(strstr(t->summary, "back to back"), "%s", t->summary);
    stall_tidy_free(t);
}

/* Two processes' files that claim one rank overlap in time: refused. */
Test(kineto, one_file_per_rank)
{
    char cmd[2400], d[600];
    snprintf(d, sizeof d, "%s/two", kdir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s && cp " HTA " %s/a.json.gz && cp " HTA " %s/b.json.gz",
             d, d, d);
    cr_assert_eq(system(cmd), 0);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_expect_eq(stall_kineto_load(d, &t, &err), STALL_EPARSE);
    cr_expect(strstr(err.msg, "two files of rank 1 overlap in time"), "%s", err.msg);
    cr_expect_null(t);
}

/* A distributedInfo.rank that is not a rank (negative, a string, not
 * below world_size) is refused, naming it: it was taken as absent, the
 * note saying "no distributedInfo" and the rank drawn from the file name or
 * taken as 0. */
Test(kineto, a_rank_that_is_not_a_rank_is_refused)
{
    static const char *const v[] = {"-1", "\\\"x\\\"", "3"};
    static const char *const want[] = {"distributedInfo.rank: \"-1\" is not a rank",
                                       "distributedInfo.rank: \"x\" is not a rank",
                                       "distributedInfo.rank: 3 is not below its world_size, 2"};
    for (int i = 0; i < 3; i++) {
        char cmd[2400], f[600];
        snprintf(f, sizeof f, "%s/badrank%d.json", kdir, i);
        snprintf(cmd, sizeof cmd, "zcat " HTA " | sed '0,/\"rank\": 1/s//\"rank\": %s/' > %s", v[i],
                 f);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        stall_tidy_trace *t = NULL;
        stall_err err = {0};
        cr_expect_eq(stall_kineto_load(f, &t, &err), STALL_EPARSE, "%s", v[i]);
        cr_expect(strstr(err.msg, want[i]), "%s", err.msg);
        cr_expect_null(t);
    }
}

/* analyze through an INI ([trace] format = kineto) and directly, with the
 * outputs that say what the trace cannot show; run (mode = model) asks
 * for the worker count, then infers the fetch durations and says so;
 * replay refuses the format. */
Test(kineto, analyze_job_and_ini)
{
    char ini[600], out[600], log[600];
    snprintf(ini, sizeof ini, "%s/k.ini", kdir);
    char text[1000];
    snprintf(text, sizeof text, "[trace]\nformat = kineto\npath = %s\n", HTA);
    write_file(ini, text);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_an_load(ini, 0, &t, &err), 0, "%s", err.msg);
    cr_expect_eq(t->batches, 6);
    stall_tidy_free(t);
    snprintf(out, sizeof out, "%s/out", kdir);
    snprintf(log, sizeof log, "%s/log.txt", kdir);
    FILE *term = fopen(log, "w");
    cr_assert_eq(stall_analyze_job(HTA, out, 0, term, &err), 0, "%s", err.msg);
    fclose(term);
    size_t len;
    char *s = stall_read_file(log, &len);
    cr_assert_not_null(s);
    cr_expect(strstr(s, "workers unknown"), "%s", s);
    cr_expect(strstr(s, "fetch times are not in this trace"), "%s", s);
    free(s);
    char p[700];
    snprintf(p, sizeof p, "%s/per_rank.csv", out);
    s = stall_read_file(p, &len);
    cr_assert_not_null(s);
    cr_expect(strstr(s, ",0.000468000,,"), "hand-over left empty: %s", s);
    free(s);
    snprintf(p, sizeof p, "%s/analyze.csv", out);
    s = stall_read_file(p, &len);
    cr_expect(strstr(s, "measured,fetch_known,0\n"), "%s", s);
    free(s);
    snprintf(text, sizeof text, "[scenario]\nmode = model\n[trace]\nformat = kineto\npath = %s\n",
             HTA);
    write_file(ini, text);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, STALL_BINARY_DIR "/stallsim run %s -q -o %s/r 2>%s", ini, kdir, log);
    int st = system(cmd);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    s = stall_read_file(log, &len);
    cr_expect(strstr(s, "set [trace] workers"), "the worker count is asked for: %s", s);
    free(s);
    /* Given it, the fetch durations are inferred, and said so. */
    snprintf(cmd, sizeof cmd,
             STALL_BINARY_DIR "/stallsim run %s --set trace.workers=2 -o %s/r >%s 2>&1", ini, kdir,
             log);
    st = system(cmd);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    s = stall_read_file(log, &len);
    cr_expect(strstr(s, "fetch durations: INFERRED, not measured"), "%s", s);
    cr_expect(strstr(s, "CAUTION: the loop hardly waited for data"), "HTA's loop hardly waits: %s",
              s);
    /* bounded: the fit's mean is one of many, printed without a range */
    cr_expect(strstr(s, "(one fit of many: the waits bound them, below)"), "%s", s);
    cr_expect(strstr(s, "none*"), "the what-if row is marked: %s", s);
    free(s);
    snprintf(p, sizeof p, "%s/r/fetch_fit.csv", kdir);
    s = stall_read_file(p, &len);
    cr_assert_not_null(s, "fetch_fit.csv written");
    cr_expect(strstr(s, "INFERRED"), "%s", s);
    cr_expect(strstr(s, "workers_assumed,2,,"), "%s", s);
    free(s);
    /* replay replays measured fetch starts, which the trace does not have
     * (config/check.c refuses every format but dsanalyzer there). */
    snprintf(text, sizeof text, "[scenario]\nmode = replay\n[trace]\nformat = kineto\npath = %s\n",
             HTA);
    write_file(ini, text);
    snprintf(cmd, sizeof cmd, STALL_BINARY_DIR "/stallsim run %s -q -o %s/r2 2>%s", ini, kdir, log);
    st = system(cmd);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    s = stall_read_file(log, &len);
    cr_expect(strstr(s, "replay and seed modes read dsanalyzer traces"), "%s", s);
    free(s);
}

/* The timeline of a multi-worker trace draws the waits and no fetch. */
Test(kineto, timeline_draws_no_unknown_fetch)
{
    stall_tidy_trace *t = load(KT "/w2_nosched");
    char path[600];
    snprintf(path, sizeof path, "%s/tl.json", kdir);
    stall_err err = {0};
    cr_assert_eq(stall_timeline_export(t, NULL, path, &err), 0, "%s", err.msg);
    size_t len;
    char *s = stall_read_file(path, &len);
    cr_assert_not_null(s);
    cr_expect(strstr(s, "wait for data"), "the waits are drawn");
    cr_expect_null(strstr(s, "fetch e0"), "no fetch slice invented");
    free(s);
    stall_tidy_free(t);
}

/* What the traces above lack, written by hand from the facts of
 * /work/shared/trace-formats.md section 1: torch 1.8/1.9's cat "Operator"
 * and string tid, absolute epoch microseconds (no baseTimeNanoseconds),
 * nested DataPipe ranges (the outermost is the wait), gpu_user_annotation
 * copies (skipped), fractional microseconds, a trailing comma, the rank in
 * the file name (rank-3.<ms>.pt.trace.json). */
Test(kineto, old_layout_datapipes_and_gpu_copies)
{
    char d[600], p[700];
    snprintf(d, sizeof d, "%s/old", kdir);
    cr_assert_eq(mkdir(d, 0755), 0);
    snprintf(p, sizeof p, "%s/rank-3.1623143089861.pt.trace.json", d);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", f);
    for (int k = 0; k < 3; k++) {
        long long ts = 1623143089861000LL + 1000LL * k;
        fprintf(f,
                "{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": "
                "\"enumerate(DataPipe)#ShardingFilterIterDataPipe\", \"pid\": 4242, \"tid\": "
                "\"5555\", \"ts\": %lld.250, \"dur\": 500.5},\n",
                ts);
        fprintf(f,
                "{\"ph\": \"X\", \"cat\": \"Operator\", \"name\": "
                "\"enumerate(DataPipe)#MapperIterDataPipe\", \"pid\": 4242, \"tid\": \"5555\", "
                "\"ts\": %lld.300, \"dur\": 400},\n",
                ts + 10);
        fprintf(f,
                "{\"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": "
                "\"enumerate(DataPipe)#ShardingFilterIterDataPipe\", \"pid\": 0, \"tid\": "
                "\"stream 7\", \"ts\": %lld, \"dur\": 90000},\n",
                ts + 300);
    }
    fputs("]}\n", f);
    fclose(f);
    stall_tidy_trace *t = load(d);
    cr_expect_eq(t->ranks, 1);
    cr_expect_eq(t->batches, 2, "3 outermost calls: 2 whole iterations");
    cr_expect(t->fetch_unknown, "DataPipe workers: censored");
    cr_expect_eq(t->request[0], INT64_C(1623143089861000250));
    cr_expect_eq(t->ready[0] - t->request[0], 500500);
    cr_expect_eq(t->iter_end[0], t->request[1]);
    cr_expect_eq(t->request[1], INT64_C(1623143089862000250));
    cr_expect(strstr(t->summary, "rank 3;"), "%s", t->summary);
    cr_expect(strstr(t->summary, "rank from the file name"), "%s", t->summary);
    cr_expect(strstr(t->summary, "gpu_user_annotation copies skipped: 3"), "%s", t->summary);
    cr_expect_null(strstr(t->summary, "relative"), "epoch times: %s", t->summary);
    stall_tidy_free(t);
}

/* torch 2.11's Kineto layout (tests/kineto/README.md, torch211/): the
 * ProfilerStep ranges and DataLoader calls below are the files' own
 * numbers (ts and dur, microseconds with 3 decimals, written here in ns
 * relative to baseTimeNanoseconds), read with Python's json module. */
#define K211 KT "/torch211"
#define K211_BASE INT64_C(1790857026000000000)

typedef struct k211_step {
    int n;                          /* ProfilerStep#n */
    int64_t ts, dur, dl_ts, dl_dur; /* the step, its DataLoader call */
} k211_step;

static const k211_step k211_cuda[6] = {
    {2, 4941861652289266, 12809518, 4941861652326404, 89263},
    {3, 4941861665146208, 12386462, 4941861665161980, 78160},
    {4, 4941861677573302, 12291122, 4941861677607405, 64695},
    {5, 4941861689916613, 12419501, 4941861689960545, 67103},
    {6, 4941861702391054, 12637781, 4941861702440436, 78019},
    {7, 4941861715114171, 12545301, 4941861715150963, 72876},
};
static const k211_step k211_w2[6] = {
    {2, 4941842973914167, 12574333, 4941842973939426, 1343833},
    {3, 4941842986522863, 12397739, 4941842986547886, 1262092},
    {4, 4941842998955761, 12219188, 4941842998968422, 1184435},
    {5, 4941843011211142, 12718492, 4941843011234260, 1424712},
    {6, 4941843023985342, 13257820, 4941843024019369, 1715888},
    {7, 4941843037319399, 13269331, 4941843037344159, 1714438},
};
static const k211_step k211_ddp[2][6] = {
    {
        {2, 4941859485463755, 50450953, 4941859485533176, 3275713},
        {3, 4941859535959275, 68212218, 4941859535981962, 56445},
        {4, 4941859604231634, 53128682, 4941859604262122, 6006029},
        {5, 4941859657402987, 46911005, 4941859657421480, 1287321},
        {6, 4941859704361978, 47370795, 4941859704382550, 1662162},
        {7, 4941859751797174, 44427234, 4941859751817220, 1199538},
    },
    {
        {2, 4941859485186742, 50589942, 4941859485253276, 133209},
        {3, 4941859535811481, 68380329, 4941859535824824, 1075752},
        {4, 4941859604233280, 53211648, 4941859604249412, 33685},
        {5, 4941859657476275, 49092690, 4941859657489521, 1240964},
        {6, 4941859706615253, 45065470, 4941859706636439, 1268445},
        {7, 4941859751719896, 44386964, 4941859751734544, 1227158},
    },
};

/* Rank r's 6 iterations are the file's 6 CPU ProfilerSteps: the request and
 * ready are the DataLoader call's ends on the epoch clock (baseTimeNanoseconds
 * added), the iteration ends with its step; each iteration spans its step
 * but for the few microseconds before the call (p.step() to __next__), and
 * holds the script's 10 ms sleep. */
static void k211_expect(const stall_tidy_trace *t, int r, const k211_step *s)
{
    cr_expect_eq(t->epoch_start[r], K211_BASE + s[0].ts, "rank %d starts at ProfilerStep#2", r);
    for (int k = 0; k < 6; k++) {
        size_t i = stall_tidy_at(t, 0, r, k);
        cr_expect_eq(t->request[i], K211_BASE + s[k].dl_ts, "rank %d request %d", r, k);
        cr_expect_eq(t->ready[i] - t->request[i], s[k].dl_dur, "rank %d wait %d", r, k);
        cr_expect_eq(t->iter_end[i], K211_BASE + s[k].ts + s[k].dur, "rank %d end of step #%d", r,
                     s[k].n);
        stall_time span = t->iter_end[i] - t->request[i];
        cr_expect_leq(span, s[k].dur);
        cr_expect_lt(s[k].dur - span, 100000, "rank %d iteration %d: %lld ns short of its step", r,
                     k, (long long)(s[k].dur - span));
        cr_expect_geq(span, 10 * MS, "the 10 ms step of rank %d iteration %d", r, k);
        cr_expect_lt(t->ready[i] - t->request[i], s[k].dur / 4, "a wait well inside its step");
        cr_expect_eq(t->worker[i], -1);
    }
}

/* The parts analyze gives a rank, from the same numbers: start-up up to the
 * first call's end, data = the other waits, total = first step's start to
 * the last step's end. */
static void k211_expect_parts(const stall_analysis *a, int r, const k211_step *s)
{
    double data = 0;
    for (int k = 1; k < 6; k++)
        data += (double)s[k].dl_dur * 1e-9;
    cr_expect(fabs(a->rank[r].total_s - (double)(s[5].ts + s[5].dur - s[0].ts) * 1e-9) < 1e-9,
              "rank %d total %.9f", r, a->rank[r].total_s);
    cr_expect(fabs(a->rank[r].startup_s - (double)(s[0].dl_ts + s[0].dl_dur - s[0].ts) * 1e-9) <
                  1e-9,
              "rank %d start-up %.9f", r, a->rank[r].startup_s);
    cr_expect(fabs(a->rank[r].data_s - data) < 1e-9, "rank %d data %.9f", r, a->rank[r].data_s);
    cr_expect(isnan(a->rank[r].handover_s));
}

/* The model on the GPU: the file holds kernels, memcpys and the GPU's
 * copies of ProfilerStep#2..#7 and Optimizer.step (gpu_user_annotation,
 * pid 0); these copies are skipped, so they neither become iterations
 * nor steps without a DataLoader call, nor double the counts. */
Test(kineto, torch211_cuda_events_are_no_iterations)
{
    stall_tidy_trace *t = load(K211 "/cuda_w2");
    cr_expect_eq(t->ranks, 1);
    cr_expect_eq(t->epochs, 1);
    cr_expect_eq(t->batches, 6);
    cr_expect(t->fetch_unknown, "2 workers: the fetches are not in the trace");
    cr_expect_eq(t->workers, -1);
    cr_expect_null(t->compute_end);
    cr_expect_not(t->clocks_unaligned);
    k211_expect(t, 0, k211_cuda);
    /* epoch time: the handler's file-name suffix is time.time_ns() at saving */
    int64_t saved = INT64_C(1795798887731615825);
    cr_expect_lt(t->iter_end[5], saved);
    cr_expect_gt(t->epoch_start[0], saved - 1000 * MS, "%lld", (long long)t->epoch_start[0]);
    cr_expect(strstr(t->summary, "ProfilerStep# ranges holding a DataLoader call (6; 0 without"),
              "%s", t->summary);
    cr_expect(strstr(t->summary, "gpu_user_annotation copies skipped: 12"), "%s", t->summary);
    cr_expect(strstr(t->summary, "Optimizer.step 6,"), "6 on the CPU, not 12: %s", t->summary);
    cr_expect(strstr(t->summary, "rank: taken as 0 (no distributedInfo"), "%s", t->summary);
    cr_expect_null(strstr(t->summary, "relative"), "epoch times: %s", t->summary);
    stall_analysis a;
    stall_analyze(t, &a);
    k211_expect_parts(&a, 0, k211_cuda);
    cr_expect_eq(a.verdict, STALL_VERDICT_COMPUTE);
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

/* CPU only, 2 workers: torch 2.11 numbers the active steps #2..#7. */
Test(kineto, torch211_two_workers_with_schedule)
{
    stall_tidy_trace *t = load(K211 "/w2_sched");
    cr_expect_eq(t->ranks, 1);
    cr_expect_eq(t->batches, 6);
    cr_expect(t->fetch_unknown);
    k211_expect(t, 0, k211_w2);
    cr_expect(strstr(t->summary, "(6; 0 without"), "%s", t->summary);
    cr_expect(strstr(t->summary, "gpu_user_annotation copies skipped: 0"), "%s", t->summary);
    cr_expect(strstr(t->summary, "_MultiProcessingDataLoaderIter"), "%s", t->summary);
    cr_expect_null(strstr(t->summary, "relative"), "%s", t->summary);
    stall_analysis a;
    stall_analyze(t, &a);
    k211_expect_parts(&a, 0, k211_w2);
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

/* Two DDP ranks over gloo: ranks from distributedInfo, one clock
 * (baseTimeNanoseconds), so the barrier waits are measured. Without
 * compute_end a rank arrives at the barrier when its batch is ready: at
 * each iteration the later rank's ready minus this rank's (at most up to
 * its next request) is its wait; the rank last at it is charged. From the
 * tables: rank 0 is last at iterations 2 and 5 (of 1..5), rank 1 at 1, 3
 * and 4; rank 0 waits 2.744025 ms in all (iteration 0's 3.422404 ms wait
 * is rank 1's), rank 1 waits 9.462514 ms, of which 6.040110 ms at
 * iterations 1..5 caused by rank 0, the straggler. */
Test(kineto, torch211_ddp_ranks_on_one_clock)
{
    stall_tidy_trace *t = load(K211 "/ddp2_w2");
    cr_expect_eq(t->ranks, 2);
    cr_expect_eq(t->epochs, 1);
    cr_expect_eq(t->batches, 6);
    cr_expect_not(t->clocks_unaligned, "baseTimeNanoseconds: one clock");
    for (int r = 0; r < 2; r++)
        k211_expect(t, r, k211_ddp[r]);
    cr_expect(strstr(t->summary, "2 files, ranks 0,1 of world size 2 (gloo); rank from "
                                 "distributedInfo"),
              "%s", t->summary);
    cr_expect(strstr(t->summary, "(12; 0 without"), "%s", t->summary);
    cr_expect(strstr(t->summary, "DistributedDataParallel.forward 12, CPU all_reduce 12"), "%s",
              t->summary);
    cr_expect_null(strstr(t->summary, "not aligned"), "%s", t->summary);
    stall_analysis a;
    stall_analyze(t, &a);
    cr_expect_not(a.clocks_unaligned);
    for (int r = 0; r < 2; r++)
        k211_expect_parts(&a, r, k211_ddp[r]);
    cr_expect(fabs(a.rank[0].barrier_s - 0.002744025) < 1e-9, "%.9f", a.rank[0].barrier_s);
    cr_expect(fabs(a.rank[1].barrier_s - 0.009462514) < 1e-9, "%.9f", a.rank[1].barrier_s);
    cr_expect_eq(a.rank[0].last, 2);
    cr_expect_eq(a.rank[1].last, 3);
    cr_expect(fabs(a.rank[0].caused_s - 0.006040110) < 1e-9, "%.9f", a.rank[0].caused_s);
    cr_expect(fabs(a.rank[1].caused_s - 0.002744025) < 1e-9, "%.9f", a.rank[1].caused_s);
    cr_expect_eq(a.straggler, 0);
    cr_expect_not(isnan(a.share_straggler));
    cr_expect_gt(a.share_straggler, 0);
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

/* The CLI on it: analyze.csv does not say clocks_aligned,0 (as it does for
 * the 1.13 ddp2_w2, test_cli), names the straggler, and per_rank.csv holds
 * the barrier waits; the terminal's verdict names rank 0 last in 2 of the 5
 * iterations after the first. */
Test(kineto, torch211_ddp_analyze_cli_measures_the_barrier)
{
    char cmd[1600], log[600], p[700];
    snprintf(log, sizeof log, "%s/ddp.txt", kdir);
    snprintf(cmd, sizeof cmd,
             STALL_BINARY_DIR "/stallsim analyze " K211 "/ddp2_w2 -o %s/ddp >%s 2>&1", kdir, log);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    size_t len;
    char *s = stall_read_file(log, &len);
    cr_assert_not_null(s);
    cr_expect(strstr(s, "rank 0 is last at the barrier in 40% of iterations"), "%s", s);
    cr_expect_null(strstr(s, "unknown (the ranks' clocks are not aligned"), "%s", s);
    free(s);
    snprintf(p, sizeof p, "%s/ddp/analyze.csv", kdir);
    s = stall_read_file(p, &len);
    cr_assert_not_null(s);
    cr_expect_null(strstr(s, "clocks_aligned,0"), "%s", s);
    cr_expect(strstr(s, "measured,straggler_rank,0\n"), "%s", s);
    cr_expect(strstr(s, "measured,fetch_known,0\n"), "%s", s);
    cr_expect_null(strstr(s, "measured,share_straggler,\n"), "a number: %s", s);
    /* rank 0's excess wait at the 2 iterations it was last: 6.006029 -
     * 0.033685 and 1.199538 - 1.227158 ms */
    cr_expect(strstr(s, "measured,straggler_input_s,0.005944724\n"), "%s", s);
    free(s);
    snprintf(p, sizeof p, "%s/ddp/per_rank.csv", kdir);
    s = stall_read_file(p, &len);
    cr_assert_not_null(s);
    cr_expect(
        strstr(s, "\nmeasured,0,0.310760653,0.003345134,0.010211495,,0.294459999,0.002744025,"),
        "%s", s);
    cr_expect(
        strstr(s, "\nmeasured,1,0.310920118,0.000199743,0.004846004,,0.296411857,0.009462514,"),
        "%s", s);
    free(s);
}

/* validate of profiling windows opened mid-training (the fit's warm_start,
 * docs/model.md 8.2) compares each measured window with the window the fit
 * simulated after a warm-up, its pipeline running, not with a run from an
 * empty start and the workers' start-up, which the window never held (the
 * 1.13 ddp2_w2: 0.2711 s for 0.1689 s, +60.6%). Both files of the 1.13 and
 * the 2.11 DDP runs, and the 2.11 single-process one: within 2%, and the
 * terminal no longer cautions that the runs below start empty. */
Test(kineto, validate_of_windows_opened_mid_training_compares_warm_windows)
{
    static const char *const src[] = {KT "/ddp2_w2", K211 "/ddp2_w2", K211 "/w2_sched"};
    for (size_t i = 0; i < sizeof src / sizeof src[0]; i++) {
        char cmd[1600], log[600], p[700];
        snprintf(log, sizeof log, "%s/val%zu.txt", kdir, i);
        snprintf(cmd, sizeof cmd,
                 STALL_BINARY_DIR "/stallsim validate %s --set trace.workers=2 --analyze "
                                  "--plots -o %s/val%zu >%s 2>&1",
                 src[i], kdir, i, log);
        int st = system(cmd);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %d", src[i], st);
        size_t len;
        char *s = stall_read_file(log, &len);
        cr_assert_not_null(s);
        cr_expect(strstr(s, "profiling windows opened mid-training"), "%s", s);
        cr_expect(strstr(s, "each a window simulated after a warm-up"), "%s", s);
        cr_expect_null(strstr(s, "start every epoch with empty queues"), "%s", s);
        /* --analyze's simulated ranks are the run from an empty start: the
         * measured windows are left out beside them, and the breakdown
         * figure says what its bars are */
        cr_expect(strstr(s, "measured: left out:"), "%s", s);
        free(s);
        snprintf(p, sizeof p, "%s/val%zu/plots/breakdown.gp", kdir, i);
        s = stall_read_file(p, &len);
        cr_assert_not_null(s, "%s", p);
        cr_expect(strstr(s, "simulated (fetch times inferred; each epoch from an empty start)"),
                  "%s", s);
        free(s);
        snprintf(p, sizeof p, "%s/val%zu/validate.csv", kdir, i);
        stall_table *t = NULL;
        stall_err err = {0};
        cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
        int col = stall_table_col(t, "error_pct");
        cr_assert_geq(col, 0);
        for (size_t r = 0; r < t->nrows; r++) {
            double e = stall_table_num(t, r, col);
            cr_expect_lt(fabs(e), 2.0, "%s, row %zu: %+.2f%%", src[i], r, e);
        }
        stall_table_free(t);
    }
}

/* run at such a trace's own configuration starts each epoch empty, as
 * every what-if built on the fit does: its epoch is not the window's, and
 * vs_meas is left empty with the reason (it printed +60.56%). */
Test(kineto, run_of_windows_opened_mid_training_prints_no_vs_measured)
{
    char cmd[1600], log[600], p[700];
    snprintf(log, sizeof log, "%s/run.txt", kdir);
    snprintf(cmd, sizeof cmd,
             STALL_BINARY_DIR "/stallsim run " KT "/ddp2_w2 --set trace.workers=2 -o %s/run >%s "
                              "2>&1",
             kdir, log);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d", st);
    size_t len;
    char *s = stall_read_file(log, &len);
    cr_assert_not_null(s);
    cr_expect(strstr(s, "vs_meas left empty: the trace's epochs are profiling windows opened "
                        "mid-training"),
              "%s", s);
    free(s);
    snprintf(p, sizeof p, "%s/run/summary.csv", kdir);
    stall_table *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    int col = stall_table_col(t, "vs_measured_pct");
    cr_assert_geq(col, 0);
    cr_expect_str_empty(stall_table_get(t, 0, col));
    cr_expect_gt(stall_table_num(t, 0, stall_table_col(t, "measured_epoch_time_s")), 0);
    stall_table_free(t);
}

/* A trace of 3 DataLoader waits inside 3 ProfilerSteps; the second wait's
 * (or step's) field `key` written as `val` (JSON text; NULL: left out). */
static const char *ids_trace(int n, bool step, const char *key, const char *val)
{
    static char p[700];
    snprintf(p, sizeof p, "%s/ids%d.pt.trace.json", kdir, n);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs("{\"schemaVersion\": 1, \"traceEvents\": [\n", f);
    for (int k = 0; k < 3; k++) {
        const char *fields[] = {"pid", "tid", "ts", "dur"};
        char dflt[4][32];
        long long ts = 1000000LL + 10000LL * k;
        snprintf(dflt[0], 32, "4242");
        snprintf(dflt[1], 32, "4242");
        for (int s = 0; s < 2; s++) {
            bool this_one = k == 1 && s == (step ? 0 : 1);
            snprintf(dflt[2], 32, "%lld", s == 0 ? ts : ts + 100);
            snprintf(dflt[3], 32, "%d", s == 0 ? 9000 : 3000);
            fprintf(f, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"%s\"",
                    s == 0 ? (k == 0   ? "ProfilerStep#0"
                              : k == 1 ? "ProfilerStep#1"
                                       : "ProfilerStep#2")
                           : "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
            for (int i = 0; i < 4; i++) {
                if (this_one && strcmp(fields[i], key) == 0) {
                    if (val)
                        fprintf(f, ", \"%s\": %s", key, val);
                } else {
                    fprintf(f, ", \"%s\": %s", fields[i], dflt[i]);
                }
            }
            fputs(k == 2 && s == 1 ? "}\n" : "},\n", f);
        }
    }
    fputs("]}\n", f);
    fclose(f);
    return p;
}

/* A bad pid, tid, ts or dur on an event the reader uses is refused naming
 * the file, the event's line and name, and the value: they were taken
 * silently (a missing or unreadable pid put the wait on no process, or
 * made it the main one). */
Test(kineto, bad_ids_and_times_of_used_events_are_refused)
{
    static const struct {
        bool step;
        const char *key, *val, *want;
    } bad[] = {
        {false, "pid", "\"abc\"", "pid 'abc' is not a process id"},
        {false, "pid", "-1", "pid '-1' is not a process id"},
        {false, "pid", "1.5", "pid '1.5' is not a process id"},
        {false, "pid", NULL, "pid missing (or null) is not a process id"},
        {false, "pid", "null", "pid missing (or null) is not a process id"},
        {false, "pid", "true", "pid 'true' is not a process id"},
        {true, "pid", "\"x\"", "pid 'x' is not a process id"},
        {false, "tid", "\"main\"", "tid 'main' is not a thread id"},
        {false, "tid", NULL, "tid missing (or null) is not a thread id"},
        {true, "tid", "2.5", "tid '2.5' is not a thread id"},
        {false, "ts", "-5", "ts '-5' is not a time in microseconds"},
        {false, "ts", "\"nan\"", "ts 'nan' is not a time"},
        {true, "ts", NULL, "ts missing (or null) is not a time"},
        {false, "dur", "\"inf\"", "dur 'inf' is not a duration"},
        {false, "dur", NULL, "dur missing (or null) is not a duration"},
        {true, "dur", "-1", "dur '-1' is not a duration"},
        /* past the limits (docs/limits.md): a clock reading after 4e9 s, a
         * duration over 1e6 s; 9e15 us was taken, and analyze said the
         * loop never waited for data */
        {false, "ts", "8999999999999999", "ts '8999999999999999' is not a time"},
        {false, "dur", "1000000000001", "dur '1000000000001' is not a duration"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *p = ids_trace((int)i, bad[i].step, bad[i].key, bad[i].val);
        stall_tidy_trace *t = NULL;
        stall_err err = {0};
        cr_expect_eq(stall_kineto_load(p, &t, &err), STALL_EPARSE, "%zu: %s = %s read", i,
                     bad[i].key, bad[i].val ? bad[i].val : "(none)");
        cr_expect(
            strstr(err.msg, p) && strstr(err.msg, bad[i].want) &&
                strstr(err.msg, bad[i].step ? "'ProfilerStep#1'" : "'enumerate(DataLoader)#") &&
                strstr(err.msg, bad[i].step ? ": line 4 " : ": line 5 "),
            "%zu: %s", i, err.msg);
        cr_expect_null(t);
    }
    /* what real traces hold is read: a pid as a string of digits, the
     * legacy exporter's "CPU functions", a negative tid, a tid string */
    static const char *const key[] = {"pid", "pid", "tid", "tid"};
    static const char *const ok[] = {"\"4242\"", "\"CPU functions\"", "-7", "\"5555\""};
    for (int i = 0; i < 4; i++) {
        const char *p = ids_trace(100 + i, false, key[i], ok[i]);
        stall_tidy_trace *t = NULL;
        stall_err err = {0};
        cr_expect_eq(stall_kineto_load(p, &t, &err), 0, "%s = %s: %s", key[i], ok[i], err.msg);
        stall_tidy_free(t);
    }
}

/* A baseTimeNanoseconds that is not a clock reading was taken as absent:
 * the times read as relative to the profiler's start. */
Test(kineto, a_base_time_that_is_not_a_clock_reading_is_refused)
{
    static const char *const v[] = {"\\\"x\\\"", "-5", "99999999999999999999"};
    for (int i = 0; i < 3; i++) {
        char cmd[2400], f[600];
        snprintf(f, sizeof f, "%s/badbase%d.json", kdir, i);
        snprintf(cmd, sizeof cmd,
                 "zcat " KT "/torch211/w2_sched/*.json.gz"
                 " | sed '0,/\"baseTimeNanoseconds\": [0-9]*/s//\"baseTimeNanoseconds\": %s/' > %s",
                 v[i], f);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        stall_tidy_trace *t = NULL;
        stall_err err = {0};
        cr_expect_eq(stall_kineto_load(f, &t, &err), STALL_EPARSE, "%s", v[i]);
        cr_expect(strstr(err.msg, f) && strstr(err.msg, "baseTimeNanoseconds:") &&
                      strstr(err.msg, "is not a clock reading"),
                  "%s", err.msg);
        cr_expect_null(t);
    }
}

/* A trace saved by an editor with a UTF-8 byte order mark was "not JSON:
 * lexical error" at byte 1; it reads as the file without it. */
Test(kineto, a_byte_order_mark_is_skipped)
{
    char cmd[2400], f[600];
    snprintf(f, sizeof f, "%s/bom.pt.trace.json", kdir);
    snprintf(cmd, sizeof cmd, "(printf '\\357\\273\\277'; cat " KT "/w0_nosched/*.json) > %s", f);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    stall_tidy_trace *a = load(f), *b = load(KT "/w0_nosched");
    cr_expect_eq(a->batches, b->batches);
    cr_expect_eq(a->iter_end[stall_tidy_at(a, a->epochs - 1, 0, a->batches - 1)],
                 b->iter_end[stall_tidy_at(b, b->epochs - 1, 0, b->batches - 1)]);
    stall_tidy_free(a);
    stall_tidy_free(b);
}

/* A training loop's ProfilerStep ranges follow one another. Two that
 * overlap (here one moved into the previous step, or stretched into the
 * next) were read: each DataLoader call went to the step it fell in, and
 * analyze, run and validate went on with iterations that overlap. Refused,
 * naming the file and both steps; steps that only touch are read as
 * before. */
Test(kineto, overlapping_profiler_steps_are_refused)
{
    static const struct {
        const char *key, *val, *first, *second;
    } bad[] = {
        {"ts", "1005000", "ProfilerStep#0", "ProfilerStep#1"},
        {"dur", "15000", "ProfilerStep#1", "ProfilerStep#2"},
    };
    for (int i = 0; i < 2; i++) {
        const char *p = ids_trace(200 + i, true, bad[i].key, bad[i].val);
        stall_tidy_trace *t = NULL;
        stall_err err = {0};
        cr_expect_eq(stall_kineto_load(p, &t, &err), STALL_EPARSE, "%s = %s read", bad[i].key,
                     bad[i].val);
        cr_expect(strstr(err.msg, p) && strstr(err.msg, bad[i].first) &&
                      strstr(err.msg, bad[i].second) && strstr(err.msg, "overlap"),
                  "%d: %s", i, err.msg);
        cr_expect_null(t);
    }
    /* touching: step 1 ends as step 2 begins */
    const char *p = ids_trace(202, true, "dur", "10000");
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_expect_eq(stall_kineto_load(p, &t, &err), 0, "%s", err.msg);
    stall_tidy_free(t);
}

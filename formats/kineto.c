/*
 * kineto.c - PyTorch profiler (Kineto) Chrome traces into the tidy shape
 * (stall/kineto.h). One streaming pass per file (jsonev.c: yajl + zlib);
 * what is kept grows with the iterations, never with the file: the
 * DataLoader calls and ProfilerStep ranges (two times each) and counters
 * of the other events that say what the trace holds.
 *
 * Events used, by name (facts: /work/shared/trace-formats.md, section 1):
 *   enumerate(DataLoader)#<Iter>.__next__, enumerate(DataPipe)#...  the wait
 *       for a batch (outermost range only: DataPipes nest)
 *   ProfilerStep#N                                            iterations
 *   Optimizer.step#, DistributedDataParallel.forward, nccl:/gloo: all_reduce,
 *   ncclKernel_* / ncclDevKernel_*                            counted, said
 * Events whose cat is gpu_user_annotation are the GPU timeline's copies of
 * CPU annotations: counted once, on the CPU side. Times: ts and dur in
 * microseconds (integer or fractional text, exact to the ns), relative to
 * baseTimeNanoseconds when the file has it. Rank: distributedInfo.rank,
 * else the file name (rank-3., rank3_), else 0 (said).
 */
#include "stall/kineto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonev.h"
#include "stall/limits.h"
#include "tracebuild.h"

typedef struct kt_step {
    int64_t n;
    stall_time ts, dur;
} kt_step;

typedef struct kt_file {
    const char *file;
    tb_span *dl;
    size_t ndl, capdl;
    kt_step *st;
    size_t nst, capst;
    char pid[40];
    char dl_name[192];
    int64_t n_multi, n_single, n_pipe, n_other_pid;
    int64_t n_opt, n_ddp, n_allreduce, n_ncclk, n_gpu_copy, n_events;
    int64_t base_ns, rank, world;
    bool have_base, have_rank, have_world;
    char backend[32];
    char bad_rank[40]; /* a distributedInfo.rank that is not a rank ("": none) */
    char bad_base[40]; /* a baseTimeNanoseconds that is not a clock reading ("": none) */
} kt_file;

static bool kt_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* The legacy exporter's (torch 1.13, export_chrome_trace) pid of the CPU
 * events: the one pid that is not a number. */
#define KT_LEGACY_PID "CPU functions"

/* An event the reader uses (a DataLoader wait, a ProfilerStep) must say
 * which process and thread it is on: pid a process id (an integer from 0,
 * as a number or a string of digits, or the legacy exporter's "CPU
 * functions"), tid an integer (negative ones occur: Kineto's ids of
 * threads it made up), both present. */
static int kt_ids(const jev_event *e, const jev_pos *p, stall_err *err)
{
    int64_t v;
    if (e->pid[0] == '\0' ||
        ((jev_int(e->pid, &v) != 0 || v < 0) && strcmp(e->pid, KT_LEGACY_PID) != 0))
        return jev_bad_field(e, p, "pid", e->pid, "a process id (an integer from 0)", err);
    if (e->tid[0] == '\0' || jev_int(e->tid, &v) != 0)
        return jev_bad_field(e, p, "tid", e->tid, "a thread id (an integer)", err);
    return 0;
}

static int kt_times(const jev_event *e, const jev_pos *p, stall_time *ts, stall_time *dur,
                    stall_err *err)
{
    if (jev_us_to_ns(e->ts, ts) != 0 || *ts < 0 || (double)*ts > STALL_LIMIT_CLOCK_S * 1e9)
        return jev_bad_field(e, p, "ts", e->ts,
                             "a time in microseconds (a clock reading, 0 to 4e9 s)", err);
    if (jev_us_to_ns(e->dur, dur) != 0 || *dur < 0 || (double)*dur > STALL_LIMIT_DURATION_S * 1e9)
        return jev_bad_field(e, p, "dur", e->dur, "a duration in microseconds (0 to 1e6 s)", err);
    return 0;
}

static int kt_event(void *ctx, const jev_event *e, const jev_pos *p, stall_err *err)
{
    kt_file *f = ctx;
    f->n_events++;
    if (e->ph[0] && strcmp(e->ph, "X") != 0)
        return 0;
    const char *n = e->name;
    bool dl = kt_prefix(n, "enumerate(DataLoader)#"), pipe = kt_prefix(n, "enumerate(DataPipe)#");
    if (strcmp(e->cat, "gpu_user_annotation") == 0) {
        f->n_gpu_copy++;
        return 0;
    }
    if (dl || pipe) {
        int idrc = kt_ids(e, p, err);
        if (idrc)
            return idrc;
        if (f->pid[0] == '\0')
            snprintf(f->pid, sizeof f->pid, "%s", e->pid);
        else if (strcmp(f->pid, e->pid) != 0) {
            f->n_other_pid++;
            return 0;
        }
        tb_span s = {0};
        int rc = kt_times(e, p, &s.ts, &s.dur, err);
        if (rc)
            return rc;
        if (f->ndl == f->capdl) {
            f->capdl = f->capdl ? 2 * f->capdl : 256;
            f->dl = stall_xrealloc(f->dl, f->capdl * sizeof *f->dl);
        }
        f->dl[f->ndl++] = s;
        if (f->dl_name[0] == '\0' || (dl && kt_prefix(f->dl_name, "enumerate(DataPipe)#")))
            snprintf(f->dl_name, sizeof f->dl_name, "%s", n);
        if (pipe)
            f->n_pipe++;
        else if (strstr(n, "_SingleProcessDataLoaderIter"))
            f->n_single++;
        else
            f->n_multi++;
        return 0;
    }
    if (kt_prefix(n, "ProfilerStep#")) {
        kt_step s;
        if (jev_int(n + 13, &s.n) != 0)
            return 0;
        int rc = kt_ids(e, p, err);
        if (rc == 0)
            rc = kt_times(e, p, &s.ts, &s.dur, err);
        if (rc)
            return rc;
        if (f->nst == f->capst) {
            f->capst = f->capst ? 2 * f->capst : 256;
            f->st = stall_xrealloc(f->st, f->capst * sizeof *f->st);
        }
        f->st[f->nst++] = s;
        return 0;
    }
    if (kt_prefix(n, "Optimizer.step#"))
        f->n_opt++;
    else if (strcmp(n, "DistributedDataParallel.forward") == 0)
        f->n_ddp++;
    else if ((kt_prefix(n, "nccl:") || kt_prefix(n, "gloo:")) && strstr(n, "all_reduce"))
        f->n_allreduce++;
    else if (kt_prefix(n, "ncclKernel") || kt_prefix(n, "ncclDevKernel"))
        f->n_ncclk++;
    return 0;
}

static void kt_top(void *ctx, const char *path, const char *text)
{
    kt_file *f = ctx;
    int64_t v;
    if (strcmp(path, "baseTimeNanoseconds") == 0) {
        if (jev_int(text, &v) == 0 && v >= 0 && (double)v <= STALL_LIMIT_CLOCK_S * 1e9) {
            f->base_ns = v;
            f->have_base = true;
        } else {
            snprintf(f->bad_base, sizeof f->bad_base, "%s", text[0] ? text : "\"\"");
        }
    } else if (strcmp(path, "distributedInfo.rank") == 0) {
        if (jev_int(text, &v) == 0 && v >= 0) {
            f->rank = v;
            f->have_rank = true;
        } else {
            snprintf(f->bad_rank, sizeof f->bad_rank, "%s", text[0] ? text : "\"\"");
        }
    } else if (strcmp(path, "distributedInfo.world_size") == 0 && jev_int(text, &v) == 0) {
        f->world = v;
        f->have_world = true;
    } else if (strcmp(path, "distributedInfo.backend") == 0) {
        snprintf(f->backend, sizeof f->backend, "%s", text);
    }
}

/* Times relative to the profiler's start, not the epoch (legacy exporter). */
static bool kt_relative(const kt_file *f)
{
    return !f->have_base && f->ndl > 0 && f->dl[0].ts < INT64_C(100000000000000000);
}

static int kt_cmp_window(const void *a, const void *b)
{
    const tb_epoch *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static int kt_cmp_step(const void *a, const void *b)
{
    const kt_step *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* A training loop's ProfilerStep ranges follow one another: two that
 * overlap pair DataLoader calls with iterations that overlap (each call went
 * to the step it fell in, and the iterations read as measured). An exact
 * duplicate (same ts and dur, as in a file concatenated with itself) is
 * left to kt_iterations, which reads it as a step without a call. */
static int kt_steps_check(kt_file *f, const char *file, stall_err *err)
{
    if (f->nst > 1)
        qsort(f->st, f->nst, sizeof *f->st, kt_cmp_step);
    for (size_t i = 1; i < f->nst; i++) {
        const kt_step *a = &f->st[i - 1], *b = &f->st[i];
        if (b->ts < a->ts + a->dur && !(b->ts == a->ts && b->dur == a->dur))
            return stall_err_set(err, STALL_EPARSE,
                                 "%s: ProfilerStep#%lld (ts %.3f us) starts before "
                                 "ProfilerStep#%lld (ts %.3f us, dur %.3f us) ends: the "
                                 "profiler's steps overlap, so which DataLoader call belongs to "
                                 "which iteration is unknown",
                                 file, (long long)b->n, (double)b->ts / 1e3, (long long)a->n,
                                 (double)a->ts / 1e3, (double)a->dur / 1e3);
    }
    return 0;
}

/* The file's iterations into r (one epoch); *rule says which rule made them. */
static void kt_iterations(kt_file *f, tb_rank *r, int64_t *steps_used, int64_t *steps_without,
                          int64_t *steps_multi, int64_t *calls)
{
    size_t m = tb_sort_unique(f->dl, f->ndl);
    /* outermost calls only (DataPipes nest) */
    size_t k = 0;
    stall_time outer_end = INT64_MIN;
    for (size_t i = 0; i < m; i++) {
        if (f->dl[i].ts < outer_end)
            continue;
        f->dl[k++] = f->dl[i];
        outer_end = f->dl[i].ts + f->dl[i].dur;
    }
    f->ndl = k;
    *calls = (int64_t)k;
    if (f->nst > 0)
        qsort(f->st, f->nst, sizeof *f->st, kt_cmp_step);
    stall_time base = f->have_base ? f->base_ns : 0;
    *steps_used = *steps_without = *steps_multi = 0;
    tb_epoch *ep = NULL;
    if (f->nst > 0) {
        size_t j = 0;
        for (size_t i = 0; i < f->nst; i++) {
            const kt_step *s = &f->st[i];
            stall_time end = s->ts + s->dur;
            while (j < f->ndl && f->dl[j].ts < s->ts)
                j++;
            if (j >= f->ndl || f->dl[j].ts > end) {
                (*steps_without)++;
                continue;
            }
            const tb_span *d = &f->dl[j];
            size_t more = j + 1;
            while (more < f->ndl && f->dl[more].ts <= end)
                more++;
            if (more - j > 1)
                (*steps_multi)++;
            j = more;
            if (!ep)
                ep = tb_add_epoch(r, base + s->ts);
            stall_time ready = d->ts + d->dur;
            tb_iter it = {.request = base + d->ts,
                          .ready = base + ready,
                          .compute_end = base + ready,
                          .iter_end = base + (end > ready ? end : ready)};
            tb_push(ep, &it);
            (*steps_used)++;
        }
        if (*steps_used > 0)
            return;
    }
    for (size_t i = 0; i + 1 < f->ndl; i++) {
        const tb_span *d = &f->dl[i];
        if (!ep)
            ep = tb_add_epoch(r, base + d->ts);
        stall_time ready = d->ts + d->dur;
        tb_iter it = {.request = base + d->ts,
                      .ready = base + ready,
                      .compute_end = base + ready,
                      .iter_end = base + f->dl[i + 1].ts};
        tb_push(ep, &it);
    }
}

bool stall_kineto_probe(const char *head, size_t n)
{
    size_t i = 0;
    if (n >= 3 && (unsigned char)head[0] == 0xEF && (unsigned char)head[1] == 0xBB &&
        (unsigned char)head[2] == 0xBF)
        i = 3;
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    if (i >= n || head[i] != '{')
        return false;
    static const char *const keys[] = {"\"traceEvents\"", "\"schemaVersion\"",
                                       "\"deviceProperties\"", "\"distributedInfo\"",
                                       "\"baseTimeNanoseconds\""};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        size_t kl = strlen(keys[k]);
        for (size_t j = i; j + kl <= n; j++)
            if (memcmp(head + j, keys[k], kl) == 0)
                return true;
    }
    return false;
}

static const char *const kineto_exts[] = {".json", ".json.gz", NULL};

int stall_kineto_files(const char *path, char ***files, int *n, stall_err *err)
{
    return tb_files(path, kineto_exts, files, n, err);
}

int stall_kineto_load(const char *path, stall_tidy_trace **out, stall_err *err)
{
    const char *const *exts = kineto_exts;
    char **files = NULL;
    int nf = 0;
    *out = NULL;
    int rc = tb_files(path, exts, &files, &nf, err);
    if (rc)
        return rc;
    tb_rank *ranks = stall_xcalloc((size_t)nf, sizeof *ranks);
    kt_file *fs = stall_xcalloc((size_t)nf, sizeof *fs);
    int64_t steps_used = 0, steps_without = 0, steps_multi = 0, calls = 0;
    int no_rank = 0, from_name = 0, nr = 0, windows = 0;
    bool *rel = stall_xcalloc((size_t)nf, sizeof *rel), shifted = false;
    for (int i = 0; i < nf && rc == 0; i++) {
        kt_file *f = &fs[i];
        f->file = files[i];
        rc = jev_read(files[i], JEV_CHROME, kt_event, kt_top, f, err);
        if (rc)
            break;
        if (f->ndl == 0) {
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: no DataLoader events (enumerate(DataLoader)#...__next__ or "
                               "enumerate(DataPipe)#...) among its %lld events: nothing says when "
                               "the loop waited for data",
                               files[i], (long long)f->n_events);
            break;
        }
        if (f->bad_base[0]) {
            rc =
                stall_err_set(err, STALL_EPARSE,
                              "%s: baseTimeNanoseconds: \"%s\" is not a clock reading (nanoseconds "
                              "of Unix time, 0 to %.0f s)",
                              files[i], f->bad_base, STALL_LIMIT_CLOCK_S);
            break;
        }
        if (f->bad_rank[0] || (f->have_rank && f->have_world && f->rank >= f->world)) {
            char is[80];
            if (f->bad_rank[0])
                snprintf(is, sizeof is, "\"%s\" is not a rank (a whole number >= 0)", f->bad_rank);
            else
                snprintf(is, sizeof is, "%lld is not below its world_size, %lld",
                         (long long)f->rank, (long long)f->world);
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: distributedInfo.rank: %s: the file's rank is not known "
                               "(torch.profiler writes the process group's rank)",
                               files[i], is);
            break;
        }
        int64_t world = -1, rv;
        if (f->have_rank) {
            rv = f->rank;
        } else if ((rv = tb_rank_from_name(files[i], &world)) >= 0) {
            from_name++;
        } else {
            rv = 0;
            no_rank++;
        }
        /* a rank's further files are further profiling windows (a schedule
         * with repeat writes a file per cycle): its epochs in this shape */
        int j = 0;
        while (j < nr && ranks[j].rank != rv)
            j++;
        if (j == nr) {
            ranks[nr].rank = rv;
            ranks[nr].file = stall_xstrdup(files[i]);
            nr++;
        } else {
            windows++;
        }
        tb_rank *r = &ranks[j];
        rel[j] = rel[j] || kt_relative(f);
        if ((rc = kt_steps_check(f, files[i], err)) != 0)
            break;
        int before = r->nep;
        int64_t su, sw, sm, c;
        kt_iterations(f, r, &su, &sw, &sm, &c);
        steps_used += su;
        steps_without += sw;
        steps_multi += sm;
        calls += c;
        if (r->nep == before || r->ep[r->nep - 1].n == 0) {
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: only %lld DataLoader call%s and no ProfilerStep holding one: "
                               "no whole iteration to analyse",
                               files[i], (long long)c, c == 1 ? "" : "s");
            break;
        }
    }
    /* windows of a rank in time order, one after the other; with times
     * relative to each window's start (legacy exporter) in file-name order
     * (the handler's time suffix), placed back to back */
    for (int j = 0; j < nr && rc == 0; j++) {
        tb_rank *r = &ranks[j];
        if (rel[j] && r->nep > 1) {
            for (int e = 1; e < r->nep; e++) {
                tb_epoch *p = &r->ep[e - 1], *q = &r->ep[e];
                stall_time d = p->it[p->n - 1].iter_end - q->start;
                if (d <= 0)
                    continue;
                q->start += d;
                for (size_t k = 0; k < q->n; k++) {
                    q->it[k].request += d;
                    q->it[k].ready += d;
                    q->it[k].compute_end += d;
                    q->it[k].iter_end += d;
                }
                shifted = true;
            }
        }
        qsort(r->ep, (size_t)r->nep, sizeof *r->ep, kt_cmp_window);
        for (int e = 1; e < r->nep && rc == 0; e++)
            if (r->ep[e].start < r->ep[e - 1].it[r->ep[e - 1].n - 1].iter_end)
                rc = stall_err_set(err, STALL_EPARSE,
                                   "%s: two files of rank %lld overlap in time: two processes "
                                   "with one rank? (%s)",
                                   path, (long long)r->rank,
                                   no_rank ? "neither distributedInfo nor the file names name the "
                                             "ranks"
                                           : "one file per rank and profiling window expected");
    }
    stall_tidy_trace *t = NULL;
    int64_t dropped = 0;
    if (rc == 0) {
        int64_t multi = 0, pipe = 0;
        for (int i = 0; i < nf; i++) {
            multi += fs[i].n_multi;
            pipe += fs[i].n_pipe;
        }
        bool known = multi == 0 && pipe == 0;
        t = tb_build(ranks, nr, known, false, known ? 0 : -1, false, path, &dropped, NULL, NULL);
        if (!t)
            rc = stall_err_set(err, STALL_EPARSE, "%s: no iteration common to every rank", path);
    }
    if (rc == 0) {
        /* what was found */
        const kt_file *f0 = &fs[0];
        char *s = NULL;
        tb_say(&s, "kineto: %s: %d file%s, rank%s", path, nf, nf == 1 ? "" : "s",
               nr == 1 ? "" : "s");
        for (int i = 0; i < nr; i++)
            tb_say(&s, "%s%lld", i ? "," : " ", (long long)ranks[i].rank);
        if (f0->have_world)
            tb_say(&s, " of world size %lld", (long long)f0->world);
        if (f0->backend[0])
            tb_say(&s, " (%s)", f0->backend);
        tb_say(&s, "%s\n",
               no_rank     ? "; rank: taken as 0 (no distributedInfo, none in the file name)"
               : from_name ? "; rank from the file name (no distributedInfo)"
                           : "; rank from distributedInfo");
        bool renumbered = false;
        for (int i = 0; i < nr; i++)
            renumbered = renumbered || ranks[i].rank != i;
        if (renumbered && nr == 1)
            tb_say(&s, "  rank %lld analysed as rank 0\n", (long long)ranks[0].rank);
        else if (renumbered)
            tb_say(&s, "  ranks above analysed as ranks 0..%d, in that order\n", nr - 1);
        bool relative = false;
        for (int i = 0; i < nf; i++)
            relative = relative || kt_relative(&fs[i]);
        if (shifted)
            tb_say(&s, "  profiling windows with times relative to their own start placed back to "
                       "back (the gap between them is not in the trace)\n");
        t->clocks_unaligned = relative && nr > 1;
        if (relative)
            tb_say(&s,
                   "  times: relative to the profiler's start (no baseTimeNanoseconds, not "
                   "epoch times, as torch's legacy exporter writes them: a torch built without "
                   "Kineto)%s\n",
                   nr > 1 ? "; the ranks' clocks are not aligned, so waits at the barrier "
                            "between ranks are not meaningful"
                          : "");
        if (steps_used > 0)
            tb_say(&s,
                   "  iterations: ProfilerStep# ranges holding a DataLoader call (%lld; %lld "
                   "without one left out%s)",
                   (long long)steps_used, (long long)steps_without,
                   steps_multi ? ", the first call taken where a step holds several" : "");
        else
            tb_say(&s,
                   "  iterations: from one DataLoader call's start to the next (%lld calls; no "
                   "ProfilerStep: the profiler had no schedule; the last call, which ends the "
                   "loop, is no iteration)",
                   (long long)calls);
        if (windows == 0)
            tb_say(&s,
                   "; %d rank%s x 1 epoch (Kineto marks none: a profiler around several of the "
                   "loop's epochs reads as one, each earlier epoch's call that ends its loop an "
                   "iteration; one profiler per epoch, a file each in one folder, gives epochs) x "
                   "%lld iterations",
                   t->ranks, t->ranks == 1 ? "" : "s", (long long)t->batches);
        else
            tb_say(&s,
                   "; %d rank%s x %d profiling windows (a file each, a schedule with repeat; "
                   "the epochs of this analysis, not training epochs) x %lld iterations",
                   t->ranks, t->ranks == 1 ? "" : "s", t->epochs, (long long)t->batches);
        if (dropped > 0)
            tb_say(&s, " (%lld more cut so every rank has as many)", (long long)dropped);
        tb_say(&s, "\n  DataLoader: %s: ", f0->dl_name);
        if (!t->fetch_unknown)
            tb_say(&s, "0 workers: each call is the whole fetch, in the main process\n");
        else
            tb_say(&s, "workers > 0 (how many is not recorded): the trace holds only the loop's "
                       "wait for each batch; the workers' fetch times are not in it (censored), so "
                       "fetch durations, worker ids and the hand-over are unknown and the whole "
                       "wait counts as waiting for data\n");
        int64_t opt = 0, ddp = 0, ar = 0, nk = 0, copies = 0, other = 0;
        for (int i = 0; i < nf; i++) {
            opt += fs[i].n_opt;
            ddp += fs[i].n_ddp;
            ar += fs[i].n_allreduce;
            nk += fs[i].n_ncclk;
            copies += fs[i].n_gpu_copy;
            other += fs[i].n_other_pid;
        }
        tb_say(&s,
               "  also: Optimizer.step %lld, DistributedDataParallel.forward %lld, CPU "
               "all_reduce %lld, NCCL kernels %lld (counted, not used); gpu_user_annotation "
               "copies skipped: %lld",
               (long long)opt, (long long)ddp, (long long)ar, (long long)nk, (long long)copies);
        if (other)
            tb_say(&s, "; DataLoader events of another process skipped: %lld", (long long)other);
        tb_say(&s, "; no compute_end (no event marks the end of forward+backward)\n");
        t->summary = s;
        *out = t;
    }
    for (int i = 0; i < nf; i++) {
        free(fs[i].dl);
        free(fs[i].st);
        tb_rank_free(&ranks[i]);
    }
    free(fs);
    free(rel);
    free(ranks);
    tb_files_free(files, nf);
    return rc;
}

/*
 * dftracer.c - DLIO benchmark traces written by dftracer / dlio_profiler
 * into the tidy shape (stall/dftracer.h). One streaming pass per file
 * (jsonev.c, line by line); what is kept grows with the iterations, epochs,
 * checkpoints and samples (a span each), never with the POSIX and other
 * events, which are skipped.
 *
 * Facts used (/work/shared/trace-formats.md, section 2): times are
 * microseconds since the epoch (JSON numbers, or strings in 2023); the
 * rank is the PR metadata event, else the file name trace-R-of-W, else
 * process_name "Rank N"; files of one rank (the main file and worker files
 * trace-R-of-W-PID.pfw) are merged. dlio_profiler (2023) logged some events
 * several times over (the same name, thread, ts and dur): exact duplicates
 * are counted once. DLIO's compute is a sleep: the compute it reports is
 * synthetic, which the summary says.
 */
#include "stall/dftracer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonev.h"
#include "stall/limits.h"
#include "tracebuild.h"

typedef struct df_vec {
    tb_span *v;
    size_t n, cap;
} df_vec;

enum { DF_COMP, DF_WAIT, DF_EPOCH, DF_CKPT, DF_SAMPLE, DF_NVEC };

typedef struct df_file {
    const char *file;
    df_vec vec[DF_NVEC];
    int64_t rank, proc_rank;
    bool have_rank, have_proc_rank;
    int gen; /* bits: 1 late 2025 names, 2 loop.iter (2024-25), 4 TorchDataLoader.next only */
    char name[DF_NVEC][48];
    int64_t n_events;
} df_file;

static void df_add(df_vec *v, const tb_span *s)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 256;
        v->v = stall_xrealloc(v->v, v->cap * sizeof *v->v);
    }
    v->v[v->n++] = *s;
}

static void df_append(df_vec *dst, const df_vec *src)
{
    for (size_t i = 0; i < src->n; i++)
        df_add(dst, &src->v[i]);
}

static int df_kind(const jev_event *e, int *gen)
{
    const char *n = e->name, *c = e->cat;
    if ((strcmp(n, "compute") == 0 && strcmp(c, "compute") == 0)) {
        *gen |= 1;
        return DF_COMP;
    }
    if (strcmp(n, "TorchFramework.compute") == 0)
        return DF_COMP;
    if (strcmp(n, "fetch.iter") == 0) {
        *gen |= 1;
        return DF_WAIT;
    }
    if (strcmp(n, "loop.iter") == 0) {
        *gen |= 2;
        return DF_WAIT;
    }
    if (strcmp(n, "TorchDataLoader.next") == 0) {
        *gen |= 4;
        return -1;
    }
    if ((strcmp(n, "epoch.block") == 0 && strcmp(c, "pipeline") == 0) ||
        strcmp(n, "DLIOBenchmark._train") == 0)
        return DF_EPOCH;
    if ((strcmp(c, "checkpoint") == 0 && strcmp(n, "init") != 0) ||
        strcmp(n, "TorchFramework.checkpoint") == 0)
        return DF_CKPT;
    if ((strcmp(n, "item") == 0 && strcmp(c, "data") == 0) ||
        strcmp(n, "TorchDataset.__getitem__") == 0)
        return DF_SAMPLE;
    return -1;
}

static int df_event(void *ctx, const jev_event *e, const jev_pos *p, stall_err *err)
{
    df_file *f = ctx;
    f->n_events++;
    if (strcmp(e->ph, "M") == 0) {
        int64_t v;
        if (strcmp(e->name, "PR") == 0 && strcmp(e->a_name, "rank") == 0) {
            if (jev_int(e->a_value, &v) != 0 || v < 0)
                return stall_err_set(err, STALL_EPARSE,
                                     "%s: line %lld: 'PR' metadata: rank '%s' is not a rank (a "
                                     "whole number >= 0)",
                                     p->file, (long long)p->line, e->a_value);
            f->rank = v;
            f->have_rank = true;
        } else if (strcmp(e->name, "process_name") == 0 && strncmp(e->a_name, "Rank ", 5) == 0 &&
                   jev_int(e->a_name + 5, &v) == 0 && v >= 0) {
            f->proc_rank = v;
            f->have_proc_rank = true;
        }
        return 0;
    }
    if (e->ph[0] && strcmp(e->ph, "X") != 0)
        return 0;
    int k = df_kind(e, &f->gen);
    if (k < 0)
        return 0;
    /* A used event's process and thread key its spans (a worker's reads, the
     * loop's): a missing or non-numeric pid or tid put events of different
     * threads together without a word. */
    int64_t id;
    if (e->pid[0] == '\0' || jev_int(e->pid, &id) != 0 || id < 0)
        return jev_bad_field(e, p, "pid", e->pid, "a process id (an integer from 0)", err);
    if (e->tid[0] == '\0' || jev_int(e->tid, &id) != 0)
        return jev_bad_field(e, p, "tid", e->tid, "a thread id (an integer)", err);
    tb_span s = {0};
    if (jev_us_to_ns(e->ts, &s.ts) != 0 || s.ts < 0 || (double)s.ts > STALL_LIMIT_CLOCK_S * 1e9)
        return jev_bad_field(e, p, "ts", e->ts,
                             "a time in microseconds (a clock reading, 0 to 4e9 s)", err);
    if (jev_us_to_ns(e->dur, &s.dur) != 0 || s.dur < 0 ||
        (double)s.dur > STALL_LIMIT_DURATION_S * 1e9)
        return jev_bad_field(e, p, "dur", e->dur, "a duration in microseconds (0 to 1e6 s)", err);
    s.key = tb_hash(e->pid, e->tid);
    if (f->name[k][0] == '\0')
        snprintf(f->name[k], sizeof f->name[k], "%.47s", e->name);
    df_add(&f->vec[k], &s);
    return 0;
}

bool stall_dftracer_probe(const char *head, size_t n)
{
    size_t i = 0;
    while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
        i++;
    if (i < n && head[i] == '[') {
        i++;
        while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r'))
            i++;
        if (i >= n || head[i] != '\n')
            return false; /* a Chrome trace array holds its first event on the same line or so */
        while (i < n && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t'))
            i++;
    }
    if (i >= n || head[i] != '{')
        return false;
    size_t end = i;
    while (end < n && head[end] != '\n')
        end++;
    bool ph = false, ts = false;
    for (size_t j = i; j + 5 <= end; j++) {
        ph = ph || memcmp(head + j, "\"ph\":", 5) == 0;
        ts = ts || memcmp(head + j, "\"ts\":", 5) == 0;
    }
    return ph && ts;
}

/* The epoch holding time x: the last one starting at or before it. */
static long df_epoch_of(const tb_span *ep, size_t n, stall_time x)
{
    long lo = -1;
    for (size_t i = 0; i < n; i++)
        if (ep[i].ts <= x)
            lo = (long)i;
    return lo;
}

typedef struct df_stats {
    int64_t comps, waits, epochs, ckpts, samples, dups, outside, gap_rule, wait_rule;
    /* checkpoints (union spans) before their epoch's first compute: put on the previous
     * epoch's last iteration, or (the run's first epoch) on none; and ones merged into an
     * iteration's earlier one */
    int64_t ck_prev, ck_none, ck_merged;
    double ckpt_s, sample_s;
    int workers;
} df_stats;

/* One rank's merged events into r. */
static void df_rank(df_vec *v, tb_rank *r, df_stats *st)
{
    size_t before = 0, after = 0;
    for (int k = 0; k < DF_NVEC; k++) {
        before += v[k].n;
        v[k].n = tb_sort_unique(v[k].v, v[k].n);
        after += v[k].n;
    }
    st->dups += (int64_t)(before - after);
    st->comps += (int64_t)v[DF_COMP].n;
    st->waits += (int64_t)v[DF_WAIT].n;
    st->ckpts += (int64_t)v[DF_CKPT].n;
    st->samples += (int64_t)v[DF_SAMPLE].n;
    const tb_span *c = v[DF_COMP].v, *w = v[DF_WAIT].v;
    size_t nc = v[DF_COMP].n, nw = v[DF_WAIT].n;
    /* epochs: the epoch events, else one spanning the computes */
    tb_span one = {0};
    const tb_span *ep = v[DF_EPOCH].v;
    size_t ne = v[DF_EPOCH].n;
    if (ne == 0 && nc > 0) {
        one.ts = c[0].ts;
        for (size_t i = 0; i < nw; i++)
            one.ts = w[i].ts < one.ts ? w[i].ts : one.ts;
        one.dur = INT64_MAX / 4;
        ep = &one;
        ne = 1;
    }
    st->epochs = (int64_t)ne > st->epochs ? (int64_t)ne : st->epochs;
    uint64_t main_key = nc ? c[0].key : 0;
    size_t ci = 0, wi = 0;
    for (size_t e = 0; e < ne; e++) {
        tb_epoch *te = tb_add_epoch(r, ep[e].ts);
        stall_time end = ep[e].ts + ep[e].dur;
        while (ci < nc && c[ci].ts < ep[e].ts) {
            st->outside++;
            ci++;
        }
        stall_time lo = ep[e].ts;
        for (; ci < nc && c[ci].ts <= end; ci++) {
            /* the last wait starting in [lo, compute start] */
            while (wi < nw && w[wi].ts < lo)
                wi++;
            size_t wj = wi;
            long found = -1;
            while (wj < nw && w[wj].ts <= c[ci].ts)
                found = (long)wj++;
            stall_time q = found >= 0 ? w[found].ts : lo;
            if (found >= 0)
                st->wait_rule++;
            else
                st->gap_rule++;
            if (q > c[ci].ts)
                q = c[ci].ts;
            stall_time ce = c[ci].ts + c[ci].dur;
            if (te->n > 0)
                te->it[te->n - 1].iter_end =
                    q > te->it[te->n - 1].compute_end ? q : te->it[te->n - 1].compute_end;
            tb_iter it = {.request = q, .ready = c[ci].ts, .compute_end = ce, .iter_end = ce};
            tb_push(te, &it);
            lo = ce;
        }
        /* workers: threads other than the loop's with sample reads in the epoch */
        uint64_t seen[256];
        int ns = 0;
        for (size_t i = 0; i < v[DF_SAMPLE].n; i++) {
            const tb_span *s = &v[DF_SAMPLE].v[i];
            if (s->ts < ep[e].ts || s->ts > end || s->key == main_key)
                continue;
            bool dup = false;
            for (int j = 0; j < ns && !dup; j++)
                dup = seen[j] == s->key;
            if (!dup && ns < 256)
                seen[ns++] = s->key;
        }
        st->workers = ns > st->workers ? ns : st->workers;
    }
    st->outside += (int64_t)(nc - ci);
    for (size_t i = 0; i < v[DF_SAMPLE].n; i++)
        st->sample_s += stall_ns_to_s(v[DF_SAMPLE].v[i].dur);
    /* checkpoints: the union of their spans (they nest), by epoch */
    const tb_span *k = v[DF_CKPT].v;
    stall_time cur_s = 0, cur_e = INT64_MIN;
    for (size_t i = 0; i <= v[DF_CKPT].n; i++) {
        bool flush = i == v[DF_CKPT].n || k[i].ts > cur_e;
        if (flush && cur_e != INT64_MIN && r->nep > 0) {
            long e = df_epoch_of(ep, ne, cur_s);
            double d = stall_ns_to_s(cur_e - cur_s);
            tb_epoch *te = &r->ep[e < 0 ? 0 : e];
            /* ... onto the iteration it follows (the last whose compute
             * began before it), as a tidy trace's ckpt_start/ckpt_end, for
             * run and validate (docs/model.md 2.5, 8.1) */
            tb_iter *at = NULL;
            for (size_t j = 0; j < te->n && te->it[j].ready <= cur_s; j++)
                at = &te->it[j];
            if (!at && te->n > 0) {
                /* Before the epoch's first compute: no iteration of it ran
                 * yet, so it follows the previous epoch's last one and
                 * belongs to that epoch (2.5); the epoch and its first
                 * wait begin at its end, so that it counts once. One
                 * before the run's first compute follows none: left out
                 * of run and validate (said). */
                tb_iter *first = &te->it[0];
                stall_time upto = cur_e < first->ready ? cur_e : first->ready;
                if (first->request < upto)
                    first->request = upto;
                if (te->start < upto)
                    te->start = upto;
                if (e > 0 && r->ep[e - 1].n > 0) {
                    te = &r->ep[e - 1];
                    at = &te->it[te->n - 1];
                    st->ck_prev++;
                } else
                    st->ck_none++;
            }
            te->checkpoint_s += d;
            st->ckpt_s += d;
            if (at && at->has_ckpt) {
                /* Two after one iteration: one checkpoint (a row holds
                 * one), from the first's start to the last's end, as
                 * Recorder.checkpoint() times everything in it (2.5). */
                at->ckpt_end = cur_e;
                st->ck_merged++;
            } else if (at) {
                at->ckpt_start = cur_s;
                at->ckpt_end = cur_e;
                at->has_ckpt = true;
            }
        }
        if (i == v[DF_CKPT].n)
            break;
        if (flush) {
            cur_s = k[i].ts;
            cur_e = k[i].ts + k[i].dur;
        } else if (k[i].ts + k[i].dur > cur_e) {
            cur_e = k[i].ts + k[i].dur;
        }
    }
}

static const char *const dftracer_exts[] = {".pfw", ".pfw.gz", NULL};

int stall_dftracer_files(const char *path, char ***files, int *n, stall_err *err)
{
    return tb_files(path, dftracer_exts, files, n, err);
}

int stall_dftracer_load(const char *path, stall_tidy_trace **out, stall_err *err)
{
    const char *const *exts = dftracer_exts;
    char **files = NULL;
    int nf = 0;
    *out = NULL;
    int rc = tb_files(path, exts, &files, &nf, err);
    if (rc)
        return rc;
    df_file *fs = stall_xcalloc((size_t)nf, sizeof *fs);
    int64_t *rank_of = stall_xmalloc((size_t)nf * sizeof *rank_of);
    int by_meta = 0, by_name = 0, by_proc = 0, by_none = 0;
    int64_t world = -1;
    for (int i = 0; i < nf && rc == 0; i++) {
        df_file *f = &fs[i];
        f->file = files[i];
        rc = jev_read(files[i], JEV_LINES, df_event, NULL, f, err);
        if (rc)
            break;
        int64_t w = -1, nr = tb_rank_from_name(files[i], &w);
        if (w > 0)
            world = w;
        if (f->have_rank) {
            rank_of[i] = f->rank;
            by_meta++;
        } else if (nr >= 0) {
            rank_of[i] = nr;
            by_name++;
        } else if (f->have_proc_rank) {
            rank_of[i] = f->proc_rank;
            by_proc++;
        } else {
            rank_of[i] = 0;
            by_none++;
        }
    }
    /* the ranks, each with its files' events merged */
    tb_rank *ranks = stall_xcalloc((size_t)nf, sizeof *ranks);
    df_vec(*merged)[DF_NVEC] = stall_xcalloc((size_t)nf, sizeof *merged);
    int nr = 0;
    int gen = 0;
    char names[DF_NVEC][48] = {{0}};
    for (int i = 0; i < nf && rc == 0; i++) {
        int j = 0;
        while (j < nr && ranks[j].rank != rank_of[i])
            j++;
        if (j == nr) {
            ranks[nr].rank = rank_of[i];
            ranks[nr].file = stall_xstrdup(files[i]);
            nr++;
        }
        for (int k = 0; k < DF_NVEC; k++) {
            df_append(&merged[j][k], &fs[i].vec[k]);
            if (names[k][0] == '\0')
                memcpy(names[k], fs[i].name[k], sizeof names[k]);
        }
        gen |= fs[i].gen;
    }
    df_stats st = {0};
    for (int j = 0; j < nr && rc == 0; j++) {
        if (merged[j][DF_COMP].n == 0) {
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: rank %lld: no compute events (compute, "
                               "TorchFramework.compute): no iteration of the training loop%s",
                               ranks[j].file, (long long)ranks[j].rank,
                               (merged[j][DF_WAIT].n || merged[j][DF_SAMPLE].n)
                                   ? " (a worker's file alone? give the folder with the rank's "
                                     "main file)"
                                   : "");
            break;
        }
        df_rank(merged[j], &ranks[j], &st);
    }
    stall_tidy_trace *t = NULL;
    int64_t dropped = 0;
    int dropped_ep = 0;
    int64_t dropped_ck[2] = {0, 0};
    if (rc == 0) {
        t = tb_build(ranks, nr, false, true, st.workers > 0 ? st.workers : -1, true, path, &dropped,
                     &dropped_ep, dropped_ck);
        if (!t)
            rc = stall_err_set(err, STALL_EPARSE, "%s: no epoch where every rank has an iteration",
                               path);
        else
            t->ckpt_no_size = "DLIO logs none"; /* its checkpoints' size, when it has some */
    }
    if (rc == 0) {
        char *s = NULL;
        tb_say(&s, "dftracer: %s: %d file%s, rank%s", path, nf, nf == 1 ? "" : "s",
               nr == 1 ? "" : "s");
        for (int j = 0; j < nr; j++)
            tb_say(&s, "%s%lld", j ? "," : " ", (long long)ranks[j].rank);
        if (world > 0)
            tb_say(&s, " of %lld", (long long)world);
        tb_say(&s, "; rank %s\n",
               by_none   ? "taken as 0 (no PR metadata, file name or process_name)"
               : by_meta ? "from the PR metadata"
               : by_name ? "from the file name"
                         : "from process_name");
        const char *g = (gen & 1)   ? "late 2025 (dftracer AI events)"
                        : (gen & 2) ? "2024-2025 (loop.iter)"
                                    : "2023 (dlio_profiler)";
        tb_say(&s,
               "  event names of %s: iterations are %s events (%lld), ready = the compute's "
               "start; request = ",
               g, names[DF_COMP], (long long)st.comps);
        if (st.wait_rule > 0)
            tb_say(&s,
                   "the start of the %s event before it (%lld events; %lld iterations had none: "
                   "the end of the previous compute)",
                   names[DF_WAIT], (long long)st.waits, (long long)st.gap_rule);
        else
            tb_say(&s,
                   "the end of the previous compute (this generation has no per-batch wait "
                   "event%s)",
                   (gen & 4) ? "; TorchDataLoader.next spans the loader's creation only" : "");
        if (st.waits != st.comps && st.waits > 0)
            tb_say(&s, "; %lld waits and %lld computes: unequal, as older DLIO wrote them",
                   (long long)st.waits, (long long)st.comps);
        tb_say(&s, "\n  epochs: %s; %d rank%s x %d epoch%s x %lld iterations",
               names[DF_EPOCH][0] ? names[DF_EPOCH] : "no epoch events (one epoch)", t->ranks,
               t->ranks == 1 ? "" : "s", t->epochs, t->epochs == 1 ? "" : "s",
               (long long)t->batches);
        if (dropped > 0 || dropped_ep > 0)
            tb_say(&s, " (%lld iterations%s cut so every rank and epoch has as many)",
                   (long long)dropped, dropped_ep ? " and epochs without any" : "");
        if (st.outside > 0)
            tb_say(&s, "; %lld computes outside every epoch left out", (long long)st.outside);
        tb_say(&s, "\n  workers: ");
        if (st.workers > 0)
            tb_say(&s,
                   "%d (threads with per-sample %s events in an epoch; %lld reads, mean %.3f s)",
                   st.workers, names[DF_SAMPLE], (long long)st.samples,
                   st.sample_s / (double)st.samples);
        else
            tb_say(&s, "not seen (no per-sample events outside the loop's thread)");
        tb_say(&s, "; reads are per sample, not per batch: batch fetch times are unknown, the "
                   "whole wait counts as waiting for data\n");
        tb_say(&s, "  checkpoints: ");
        if (st.ckpts > 0)
            tb_say(&s,
                   "%lld event%s (%s, ...; cat checkpoint), %.3f s in all (nested ones "
                   "counted once), by epoch in the analysis",
                   (long long)st.ckpts, st.ckpts == 1 ? "" : "s", names[DF_CKPT], st.ckpt_s);
        if (st.ck_prev > 0)
            tb_say(&s,
                   "; %lld before their epoch's first compute follow the previous epoch's last "
                   "iteration (its epoch ends, and the next begins, at their end)",
                   (long long)st.ck_prev);
        if (st.ck_none > 0)
            tb_say(&s,
                   "; %lld before the run's first compute follow no iteration: left out of run "
                   "and validate (the epoch begins at their end)",
                   (long long)st.ck_none);
        if (st.ck_merged > 0)
            tb_say(&s,
                   "; %lld after an iteration that already had one: one checkpoint with it, from "
                   "the first's start to the last's end",
                   (long long)st.ck_merged);
        if (dropped_ck[0] > 0)
            tb_say(&s,
                   "; %lld after iterations cut so every rank has as many: left out of run and "
                   "validate (no kept iteration precedes them; the analysis's sums by epoch keep "
                   "them)",
                   (long long)dropped_ck[0]);
        if (dropped_ck[1] > 0)
            tb_say(&s, "; %lld in epochs left out: left out of run, validate and the analysis",
                   (long long)dropped_ck[1]);
        if (st.ckpts > 0)
            tb_say(&s, "\n");
        else
            tb_say(&s, "none in the trace\n");
        tb_say(&s, "  DLIO's compute is a sleep of the configured time (synthetic)");
        if (st.dups > 0)
            tb_say(&s, "; %lld exact duplicate events counted once", (long long)st.dups);
        tb_say(&s, "\n");
        t->summary = s;
        *out = t;
    }
    for (int j = 0; j < nf; j++) {
        for (int k = 0; k < DF_NVEC; k++) {
            free(fs[j].vec[k].v);
            free(merged[j][k].v);
        }
        tb_rank_free(&ranks[j]);
    }
    free(merged);
    free(ranks);
    free(rank_of);
    free(fs);
    tb_files_free(files, nf);
    return rc;
}

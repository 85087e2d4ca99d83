/*
 * tlexport.c - a run in the tidy shape as a Perfetto timeline
 * (stall/tlexport.h). Tracks are written one after another, each in time
 * order, so every track's events are monotone and nest (the loop's slices
 * follow each other; a worker runs one fetch at a time, and lanes are
 * filled so that their fetches never overlap). Time O(rows log rows).
 */
#include "stall/tlexport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stall/io.h"
#include "stall/timeline.h"

enum { TL_LOOP = 1, TL_FETCH0 = 100 };

int stall_tl_parse_window(const char *s, stall_tl_opts *o)
{
    char *end = NULL;
    double a = strtod(s, &end);
    if (end == s || *end != ':')
        return -1;
    const char *b0 = end + 1;
    double b = strtod(b0, &end);
    if (end == b0 || *end != '\0' || !(a >= 0) || !(b > a))
        return -1;
    o->window = true;
    o->from_s = a;
    o->to_s = b;
    return 0;
}

int stall_tl_parse_ranks(const char *s, stall_tl_opts *o)
{
    char *end = NULL;
    long a = strtol(s, &end, 10), b = a;
    if (end == s || a < 0)
        return -1;
    if (*end == '-') {
        const char *b0 = end + 1;
        b = strtol(b0, &end, 10);
        if (end == b0 || b < a)
            return -1;
    }
    if (*end != '\0' || b > 1 << 20)
        return -1;
    o->rank_lo = (int)a;
    o->rank_hi = (int)b;
    return 0;
}

typedef struct tl_ctx {
    const stall_tidy_trace *t;
    stall_tl_opts o;
    stall_time origin, from, to;
    const char *path; /* the file written, for a write failure's message */
} tl_ctx;

typedef struct tl_fetch {
    stall_time s, e;
    int epoch;
    int64_t k;
} tl_fetch;

typedef struct tl_step {
    stall_time ts;
    int d;
} tl_step;

static int tl_cmp_fetch(const void *pa, const void *pb)
{
    const tl_fetch *a = pa, *b = pb;
    if (a->s != b->s)
        return a->s < b->s ? -1 : 1;
    if (a->epoch != b->epoch)
        return a->epoch < b->epoch ? -1 : 1;
    return a->k < b->k ? -1 : (a->k > b->k);
}

static int tl_cmp_step(const void *pa, const void *pb)
{
    const tl_step *a = pa, *b = pb;
    if (a->ts != b->ts)
        return a->ts < b->ts ? -1 : 1;
    return a->d < b->d ? -1 : (a->d > b->d); /* leave before enter at one instant */
}

static bool tl_in(const tl_ctx *c, stall_time s, stall_time e)
{
    return !c->o.window || (e >= c->from && s <= c->to);
}

static uint64_t tl_flow_id(const stall_tidy_trace *t, int e, int r, int64_t k)
{
    return (uint64_t)stall_tidy_at(t, e, r, k) + 1;
}

/* Batch k of rank r in epoch e as the loop takes it: its request q, ready
 * Y, the next request (or the iteration's end) nx, and the barrier wait bw
 * after its compute end ce (Y without a compute_end column). */
typedef struct tl_take {
    stall_time q, y, nx, ce, bw;
} tl_take;

static tl_take tl_take_of(const stall_tidy_trace *t, int e, int r, int64_t k)
{
    size_t i = stall_tidy_at(t, e, r, k);
    tl_take a = {.q = t->request[i], .y = t->ready[i]};
    a.nx = k + 1 < t->batches ? t->request[stall_tidy_at(t, e, r, k + 1)] : t->iter_end[i];
    stall_time latest = 0;
    for (int x = 0; x < t->ranks; x++) {
        size_t j = stall_tidy_at(t, e, x, k);
        stall_time ar = t->compute_end ? t->compute_end[j] : t->ready[j];
        latest = ar > latest ? ar : latest;
    }
    a.ce = t->compute_end ? t->compute_end[i] : a.y;
    a.bw = latest - a.ce < a.nx - a.ce ? latest - a.ce : a.nx - a.ce;
    a.bw = a.bw < 0 ? 0 : a.bw;
    return a;
}

/* The slice the batch's flow arrow ends on (compute; dsanalyzer: compute
 * with the all-reduce, after the barrier wait). */
static void tl_flow_end(const stall_tidy_trace *t, const tl_take *a, stall_time *s, stall_time *e)
{
    *s = t->compute_end ? a->y : a->y + a->bw;
    *e = t->compute_end ? a->ce : a->nx;
}

/* A flow arrow goes out only when both its slices are drawn: a window that
 * cuts one off would leave a start without an end (or an end without a
 * start) that Perfetto draws from nowhere. */
static bool tl_flow_in(const tl_ctx *c, int e, int r, int64_t k)
{
    const stall_tidy_trace *t = c->t;
    size_t i = stall_tidy_at(t, e, r, k);
    if (!(t->fetch_end[i] > t->fetch_start[i]) || !tl_in(c, t->fetch_start[i], t->fetch_end[i]))
        return false;
    tl_take a = tl_take_of(t, e, r, k);
    stall_time s, f;
    tl_flow_end(t, &a, &s, &f);
    return s < f && tl_in(c, s, f);
}

static void tl_slice(stall_tl *w, const tl_ctx *c, int pid, const char *name, const char *cat,
                     stall_time s, stall_time e, const char *args)
{
    if (e > s && tl_in(c, s, e))
        stall_tl_complete(w, pid, TL_LOOP, name, cat, s - c->origin, e - s, args);
}

static void tl_loop(stall_tl *w, const tl_ctx *c, int r)
{
    const stall_tidy_trace *t = c->t;
    int pid = r + 1, g = t->ranks;
    char args[96];
    for (int e = 0; e < t->epochs; e++)
        for (int64_t k = 0; k < t->batches; k++) {
            size_t i = stall_tidy_at(t, e, r, k);
            tl_take a = tl_take_of(t, e, r, k);
            stall_time q = a.q, y = a.y, nx = a.nx, ce = a.ce, bw = a.bw;
            snprintf(args, sizeof args, "{\"epoch\":%d,\"batch\":%lld}", t->epoch0 + e,
                     (long long)k);
            if (k == 0) {
                stall_time e0 = t->epoch_start[(size_t)e * g + r];
                tl_slice(w, c, pid, "start-up + first batch", "startup", e0 < q ? e0 : q, y, args);
            } else {
                stall_time dw = t->fetch_end[i] - q;
                dw = dw < 0 ? 0 : (dw > y - q ? y - q : dw);
                tl_slice(w, c, pid, "wait for data", "stall", q, q + dw, args);
                tl_slice(w, c, pid, "hand-over", "handover", q + dw, y, args);
            }
            stall_time fs, fe;
            tl_flow_end(t, &a, &fs, &fe);
            bool flow = tl_flow_in(c, e, r, k);
            if (t->compute_end) {
                tl_slice(w, c, pid, "compute", "compute", y, ce, args);
                if (flow)
                    stall_tl_flow(w, pid, TL_LOOP, fs - c->origin, tl_flow_id(t, e, r, k), false);
                tl_slice(w, c, pid, "barrier wait", "barrier", ce, ce + bw, args);
                /* A recorded checkpoint is its own slice, as analyze counts
                 * it: its duration, cut to the rest of the iteration, from
                 * its start (or as late as that duration allows). */
                stall_time cs = nx, ck = 0;
                if (t->ckpt_start && t->ckpt_start[i] >= 0) {
                    ck = t->ckpt_end[i] - t->ckpt_start[i];
                    ck = ck < nx - ce - bw ? ck : nx - ce - bw;
                    ck = ck < 0 ? 0 : ck;
                    cs = t->ckpt_start[i] > ce + bw ? t->ckpt_start[i] : ce + bw;
                    cs = cs < nx - ck ? cs : nx - ck;
                }
                tl_slice(w, c, pid, "all-reduce + step", "allreduce", ce + bw, cs, args);
                tl_slice(w, c, pid, "checkpoint", "checkpoint", cs, cs + ck, args);
                tl_slice(w, c, pid, "all-reduce + step", "allreduce", cs + ck, nx, args);
            } else {
                /* dsanalyzer: the barrier wait (for data) comes first, then
                 * compute with the all-reduce inside. */
                tl_slice(w, c, pid, "barrier wait", "barrier", y, y + bw, args);
                tl_slice(w, c, pid, "compute + all-reduce", "compute", y + bw, nx, args);
                if (flow)
                    stall_tl_flow(w, pid, TL_LOOP, fs - c->origin, tl_flow_id(t, e, r, k), false);
            }
        }
}

/* The rank's fetches on their workers' tracks, or on lanes when worker ids
 * are unknown or a worker's fetches overlap. */
static void tl_fetches(stall_tl *w, const tl_ctx *c, int r)
{
    const stall_tidy_trace *t = c->t;
    int pid = r + 1;
    size_t n = (size_t)t->epochs * (size_t)t->batches;
    tl_fetch *f = stall_xmalloc(n * sizeof *f);
    int *track = stall_xmalloc(n * sizeof *track);
    size_t m = 0;
    bool by_worker = true;
    int maxw = -1;
    for (int e = 0; e < t->epochs; e++)
        for (int64_t k = 0; k < t->batches; k++) {
            size_t i = stall_tidy_at(t, e, r, k);
            f[m] = (tl_fetch){t->fetch_start[i], t->fetch_end[i], e, k};
            if (t->worker[i] < 0)
                by_worker = false;
            maxw = t->worker[i] > maxw ? t->worker[i] : maxw;
            m++;
        }
    qsort(f, m, sizeof *f, tl_cmp_fetch);
    int ntrack = by_worker ? maxw + 1 : 0;
    stall_time *busy = stall_xcalloc((size_t)(ntrack > 0 ? ntrack : 1) + m, sizeof *busy);
    for (size_t j = 0; j < m && by_worker; j++) {
        int wk = t->worker[stall_tidy_at(t, f[j].epoch, r, f[j].k)];
        if (f[j].s < busy[wk])
            by_worker = false; /* overlapping fetches on one worker: use lanes */
        busy[wk] = f[j].e;
        track[j] = wk;
    }
    if (!by_worker) {
        ntrack = 0;
        memset(busy, 0, m * sizeof *busy);
        for (size_t j = 0; j < m; j++) {
            int l = 0;
            while (l < ntrack && busy[l] > f[j].s)
                l++;
            if (l == ntrack)
                ntrack++;
            busy[l] = f[j].e;
            track[j] = l;
        }
    }
    char name[64], args[96];
    for (int l = 0; l < ntrack; l++) {
        snprintf(name, sizeof name, by_worker ? "worker %d" : "fetch lane %d", l);
        stall_tl_thread(w, pid, TL_FETCH0 + l, name, 10 + l);
    }
    for (int l = 0; l < ntrack; l++)
        for (size_t j = 0; j < m; j++) {
            if (track[j] != l || !tl_in(c, f[j].s, f[j].e))
                continue;
            /* Epochs as the trace labels them (epoch0: the notebook's epoch 1). */
            int label = t->epoch0 + f[j].epoch;
            snprintf(name, sizeof name, "fetch e%d b%lld", label, (long long)f[j].k);
            snprintf(args, sizeof args, "{\"epoch\":%d,\"batch\":%lld}", label, (long long)f[j].k);
            stall_tl_complete(w, pid, TL_FETCH0 + l, name, "fetch", f[j].s - c->origin,
                              f[j].e - f[j].s, args);
            if (tl_flow_in(c, f[j].epoch, r, f[j].k))
                stall_tl_flow(w, pid, TL_FETCH0 + l, f[j].s - c->origin,
                              tl_flow_id(t, f[j].epoch, r, f[j].k), true);
        }
    free(busy);
    free(track);
    free(f);
}

/* A counter from +1/-1 steps, one sample per instant where it changes. */
static void tl_counter(stall_tl *w, const tl_ctx *c, int pid, const char *name, tl_step *s,
                       size_t n)
{
    qsort(s, n, sizeof *s, tl_cmp_step);
    long v = 0;
    for (size_t j = 0; j < n;) {
        stall_time ts = s[j].ts;
        while (j < n && s[j].ts == ts)
            v += s[j++].d;
        if (tl_in(c, ts, ts))
            stall_tl_counter(w, pid, name, ts - c->origin, (double)v);
    }
}

static void tl_counters(stall_tl *w, const tl_ctx *c, int r)
{
    const stall_tidy_trace *t = c->t;
    size_t n = (size_t)t->epochs * (size_t)t->batches;
    tl_step *q = stall_xmalloc(2 * n * sizeof *q), *fl = stall_xmalloc(2 * n * sizeof *fl);
    size_t nq = 0, nf = 0;
    for (int e = 0; e < t->epochs; e++)
        for (int64_t k = 0; k < t->batches; k++) {
            size_t i = stall_tidy_at(t, e, r, k);
            if (t->fetch_end[i] < t->ready[i]) {
                q[nq++] = (tl_step){t->fetch_end[i], +1};
                q[nq++] = (tl_step){t->ready[i], -1};
            }
            if (t->fetch_start[i] < t->fetch_end[i]) {
                fl[nf++] = (tl_step){t->fetch_start[i], +1};
                fl[nf++] = (tl_step){t->fetch_end[i], -1};
            }
        }
    tl_counter(w, c, r + 1, "prefetch queue depth", q, nq);
    tl_counter(w, c, r + 1, "batches in flight", fl, nf);
    free(q);
    free(fl);
}

static int tl_fill(FILE *f, void *arg, stall_err *err)
{
    const tl_ctx *c = arg;
    stall_tl w;
    stall_tl_begin(&w, f);
    char name[64];
    for (int r = c->o.rank_lo; r <= c->o.rank_hi; r++) {
        snprintf(name, sizeof name, "rank %d", r);
        stall_tl_process(&w, r + 1, name, r);
        stall_tl_thread(&w, r + 1, TL_LOOP, "training loop", 0);
        tl_loop(&w, c, r);
        if (!c->t->fetch_unknown) /* Kineto with workers, dftracer: no fetch in the trace */
            tl_fetches(&w, c, r);
        tl_counters(&w, c, r);
    }
    /* The stream's error (a full disk, the file-size limit) is the
     * failure: returned without a message it read "success", exit 0. */
    int rc = stall_tl_end(&w);
    return rc ? stall_err_set(err, rc, "%s: write failed: %s", c->path, strerror(errno)) : 0;
}

int stall_timeline_export(const stall_tidy_trace *t, const stall_tl_opts *o, const char *path,
                          stall_err *err)
{
    return stall_timeline_export_with(t, o, path, NULL, err);
}

int stall_timeline_export_with(const stall_tidy_trace *t, const stall_tl_opts *o, const char *path,
                               const char *work, stall_err *err)
{
    tl_ctx c = {.t = t, .path = path};
    if (o)
        c.o = *o;
    else
        c.o.rank_hi = -1;
    if (c.o.rank_hi < 0) {
        c.o.rank_lo = 0;
        c.o.rank_hi = t->ranks - 1;
    }
    if (c.o.rank_hi >= t->ranks)
        return stall_err_set(err, STALL_ECONFIG, "--ranks: %d-%d, but %s has ranks 0-%d",
                             c.o.rank_lo, c.o.rank_hi, t->path, t->ranks - 1);
    c.origin = t->epoch_start[0];
    for (int r = 1; r < t->ranks; r++)
        c.origin = t->epoch_start[r] < c.origin ? t->epoch_start[r] : c.origin;
    c.from = c.origin + (stall_time)(c.o.from_s * 1e9);
    c.to = c.origin + (stall_time)(c.o.to_s * 1e9);
    if (c.o.window) {
        /* A window after the run's last iteration would give a file of
         * names and no events: refused, saying where the run ends. */
        size_t cells = (size_t)t->epochs * (size_t)t->batches * (size_t)t->ranks;
        stall_time end = c.origin;
        for (size_t i = 0; i < cells; i++)
            end = t->iter_end[i] > end ? t->iter_end[i] : end;
        if (c.from > end)
            return stall_err_set(err, STALL_ECONFIG,
                                 "--window %g:%g: starts after the run's last iteration (%.3f s "
                                 "from the start of %s)",
                                 c.o.from_s, c.o.to_s, stall_ns_to_s(end - c.origin), t->path);
    }
    return work ? stall_write_atomic_with(path, work, tl_fill, &c, err)
                : stall_write_atomic(path, tl_fill, &c, err);
}

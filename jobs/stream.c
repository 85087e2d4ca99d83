/*
 * stream.c - a tidy trace decomposed and fed to the model in streaming
 * passes (see stream.h for the passes and the memory they need; the rows'
 * decomposition, one batch at a time, is stream_dec.c's).
 */
#include "stream.h"

#include "spill.h"
#include "stream_dec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stall/dsanalyzer.h"
#include "stall/tidy.h"

/* ---- the passes ---- */

/* Where the rows come from: a tidy trace's stream, or a dsanalyzer trace's
 * batches handed out one GPU at a time as the tidy rows the in-memory path
 * decomposes (stall_ds_tidy_row), in the same (batch, rank) order. */
typedef struct wi_src {
    wi_spill_reader *sp; /* the rows of pass 1, read back (spill.h) */
    const char *path;
    bool ds_rows; /* sp holds a dsanalyzer trace's rows: workers as below */
    stall_tidy_stream *ts;
    stall_ds_stream *ds; /* borrowed from the wi_stream */
    const stall_ds_trace *b;
    size_t k;
    int r, g, workers;
    stall_time *e0; /* [g] each GPU's first request */
} wi_src;

struct wi_stream {
    char *path;
    stall_ds_stream *ds; /* a dsanalyzer trace, checked once; NULL for tidy */
    wi_spill *spill;     /* pass 1's rows, which the later passes read; NULL: none */
    stall_tidy_info info;
    int workers, prefetch; /* as decided in pass 1 */
    int workers_from;      /* STALL_WORKERS_* */
    int workers_shown;     /* a notebook trace's fetch starts, where a count was given */
    bool persistent;       /* [trace] persistent_workers: start-up from epoch 0 only */
    int expect_workers;    /* [trace] workers, the tidy reader's check of the worker ids (-1) */
    char *workers_at;      /* where it was given */
    char *start_path;      /* a dsanalyzer trace's start file (its worker check) */
    int epoch0;            /* the trace's label of epoch 0 (a dsanalyzer trace's epoch) */
    int64_t samples;       /* the first row's samples (0: absent), from pass 1 */
    int64_t samples_last;  /* rank 0's last batch of epoch 0: its samples, from pass 1 */
    bool late_any;         /* some rank began some epoch after another, from pass 1 */
    bool late_wide;        /* ... by more than 5% of the epoch (its first start to its last
                              iter_end), from pass 1 */
    stall_time turn;
    double span, span_x;
    stall_time *gap;   /* [epochs] from pass 3 */
    stall_time *late;  /* [epochs * ranks] from pass 3: each rank's late start */
    stall_time *first; /* [ranks] from pass 3 */
    /* pass 4 */
    wi_src src;
    wi_dec dec;
    wi_xform feed_x;
    bool feeding;
    int rc;
    stall_err err;
};

/* Opens a pass; workers: the worker count a dsanalyzer row's worker id
 * follows (batch mod workers, as stall_measured_from_dsanalyzer sets it),
 * -1 before it is known. */
static int wi_src_open(wi_stream *s, wi_src *src, int workers, stall_err *err)
{
    memset(src, 0, sizeof *src);
    src->path = s->path;
    if (s->spill) {
        src->sp = wi_spill_read(s->spill);
        src->ds_rows = s->ds != NULL;
        src->workers = workers;
        return 0;
    }
    if (!s->ds) {
        int rc = stall_tidy_open(s->path, &src->ts, err);
        if (rc == 0 && s->expect_workers >= 0)
            stall_tidy_expect_workers(src->ts, s->expect_workers, s->workers_at);
        return rc;
    }
    src->ds = s->ds;
    src->g = stall_ds_stream_gpus(s->ds);
    src->r = src->g;
    src->workers = workers;
    src->e0 = stall_xmalloc((size_t)src->g * sizeof *src->e0);
    return stall_ds_rewind(s->ds, err);
}

/* As stall_tidy_next: 1, 0 at the end, or an error. */
static int wi_src_next(wi_src *src, stall_tidy_row *row, stall_err *err)
{
    if (src->sp) {
        int rc = wi_spill_next(src->sp, row);
        if (rc < 0)
            return stall_err_set(err, STALL_EIO, "%s: cannot read back the spilled rows",
                                 src->path);
        if (rc == 1 && src->ds_rows) /* spilled before the worker count was known */
            row->worker = stall_ds_worker(row->batch, src->workers);
        return rc;
    }
    if (src->ts)
        return stall_tidy_next(src->ts, row, err);
    if (src->r == src->g) {
        int rc = stall_ds_next(src->ds, &src->k, &src->b, err);
        if (rc != 1)
            return rc;
        src->r = 0;
    }
    int r = src->r++;
    stall_ds_tidy_row(src->b, 0, r, row);
    /* The model's compute estimate, as stall_measured_from_dsanalyzer's. */
    row->compute_end = row->ready + stall_ds_compute(src->b, 0, r);
    row->batch = (int64_t)src->k;
    row->worker = stall_ds_worker((int64_t)src->k, src->workers);
    if (src->k == 0)
        src->e0[r] = row->request;
    row->epoch_start = src->e0[r];
    return 1;
}

static void wi_src_close(wi_src *src)
{
    wi_spill_reader_close(src->sp);
    stall_tidy_close(src->ts);
    free(src->e0);
    memset(src, 0, sizeof *src);
}

static void wi_stream_unfeed(wi_stream *s);

void wi_stream_close(wi_stream *s)
{
    if (!s)
        return;
    wi_stream_unfeed(s);
    stall_ds_close(s->ds);
    wi_spill_free(s->spill);
    free(s->gap);
    free(s->late);
    free(s->first);
    free(s->workers_at);
    free(s->start_path);
    free(s->path);
    free(s);
}

/* A dsanalyzer trace as stall_measured_from_dsanalyzer sees it: one epoch,
 * compute_end, no loader columns. */
static stall_tidy_info wi_ds_info(const stall_ds_stream *ds)
{
    return (stall_tidy_info){.ranks = stall_ds_stream_gpus(ds),
                             .epochs = 1,
                             .batches = (int64_t)stall_ds_stream_rows(ds),
                             .workers = -1,
                             .prefetch = -1,
                             .pin_memory = -1,
                             .persistent = -1,
                             .has_compute = true};
}

/* Pass 1: the grid, the settings, the largest worker id and the per-rank
 * worker counts epoch 0's fetch starts show (stall_measured_infer_workers). */
static int wi_pass1(wi_stream *s, int *maxid, int *inferred, stall_err *err)
{
    wi_src src;
    int rc = wi_src_open(s, &src, -1, err);
    if (rc) {
        wi_src_close(&src);
        return rc;
    }
    int cap = 0, *w = NULL;
    stall_time *first_end = NULL;
    bool *stopped = NULL;
    stall_tidy_row row;
    *maxid = -1;
    bool first = true;
    stall_time es0 = 0, lo = 0, hi = 0, end = 0;
    int ep = -1;
    /* The rows, kept for the later passes (each of which would otherwise
     * parse the text again: 4 parses of the file before issue 21). */
    wi_spill *spill = wi_spill_new();
    while ((rc = wi_src_next(&src, &row, err)) == 1) {
        if (spill)
            wi_spill_put(spill, &row);
        if (first)
            s->samples = row.samples;
        first = false;
        if (row.epoch == 0 && row.rank == 0)
            s->samples_last = row.samples;
        /* a rank that began an epoch after rank 0 (batch 0's rows come in
         * rank order): [ranks] late_start has an effect */
        if (row.batch == 0 && row.rank == 0)
            es0 = row.epoch_start;
        else if (row.batch == 0 && row.epoch_start != es0)
            s->late_any = true;
        if (row.epoch != ep) {
            s->late_wide |= ep >= 0 && (double)(hi - lo) > 0.05 * (double)(end - lo);
            ep = row.epoch;
            lo = hi = row.epoch_start;
            end = row.iter_end;
        }
        lo = row.epoch_start < lo ? row.epoch_start : lo;
        hi = row.epoch_start > hi ? row.epoch_start : hi;
        end = row.iter_end > end ? row.iter_end : end;
        *maxid = row.worker > *maxid ? row.worker : *maxid;
        if (row.epoch != 0)
            continue;
        int r = row.rank;
        if (r >= cap) {
            int nc = r + 1 > 2 * cap ? r + 1 : 2 * cap;
            w = stall_xrealloc(w, (size_t)nc * sizeof *w);
            first_end = stall_xrealloc(first_end, (size_t)nc * sizeof *first_end);
            stopped = stall_xrealloc(stopped, (size_t)nc * sizeof *stopped);
            cap = nc;
        }
        if (row.batch == 0) {
            first_end[r] = row.fetch_end;
            stopped[r] = false;
        } else if (!stopped[r]) {
            if (row.fetch_start >= first_end[r]) {
                stopped[r] = true;
                w[r] = row.batch > INT32_MAX ? INT32_MAX : (int)row.batch;
            } else if (row.fetch_end < first_end[r]) {
                first_end[r] = row.fetch_end;
            }
        }
    }
    if (rc == 0) {
        s->late_wide |= ep >= 0 && (double)(hi - lo) > 0.05 * (double)(end - lo);
        s->info = src.ts ? *stall_tidy_stream_info(src.ts) : wi_ds_info(s->ds);
        for (int r = 0; r < s->info.ranks; r++)
            if (!stopped[r])
                w[r] = s->info.batches > INT32_MAX ? INT32_MAX : (int)s->info.batches;
        *inferred = stall_measured_vote(w, s->info.ranks, NULL);
    }
    if (rc == 0 && spill && wi_spill_end(spill)) {
        s->spill = spill;
        spill = NULL;
    }
    wi_spill_free(spill);
    free(w);
    free(first_end);
    free(stopped);
    wi_src_close(&src);
    return rc;
}

/* Pass 2: the worker ids against the worker count, and the turnaround
 * (stall_measured_from_tidy's rule, its sum kept exact). */
static int wi_pass2(wi_stream *s, stall_err *err)
{
    wi_src src;
    int rc = wi_src_open(s, &src, s->workers, err);
    if (rc) {
        wi_src_close(&src);
        return rc;
    }
    int g = s->info.ranks, w = s->workers, pf = s->prefetch > 0 ? s->prefetch : 2;
    size_t pw = w > 0 ? (size_t)pf * (size_t)w : 1, ww = w > 0 ? (size_t)w : 1;
    /* A count given for a dsanalyzer trace, against its fetch starts
     * (stall_ds_check_workers's rule, batch by batch). */
    bool check = s->ds && s->workers_from == STALL_WORKERS_GIVEN && w >= 0;
    stall_time slack = stall_s_to_ns(STALL_DS_WORKER_SLACK_S);
    /* Per rank: fetch_end of the last max(W, 1) batches, ready of the last P*W. */
    stall_time *fe = w > 0 || check ? stall_xmalloc((size_t)g * ww * sizeof *fe) : NULL;
    stall_time *rd = w > 0 ? stall_xmalloc((size_t)g * pw * sizeof *rd) : NULL;
    __int128 tsum = 0;
    size_t tn = 0;
    stall_tidy_row row;
    while ((rc = wi_src_next(&src, &row, err)) == 1) {
        if (row.worker >= (w > 0 ? w : 1)) {
            rc =
                stall_err_set(err, STALL_EPARSE, "%s: worker id %d but the trace says workers = %d",
                              s->path, row.worker, w);
            break;
        }
        if (check && row.batch >= (int64_t)ww) {
            stall_time end = fe[(size_t)row.rank * ww + (size_t)(row.batch % (int64_t)ww)];
            if (row.fetch_start + slack < end) {
                rc = stall_ds_workers_err(s->start_path, s->epoch0, row.batch, row.rank,
                                          end - row.fetch_start, w, s->workers_at, err);
                break;
            }
        }
        if (w <= 0) {
            if (check)
                fe[(size_t)row.rank] = row.fetch_end;
            continue;
        }
        size_t r = (size_t)row.rank;
        int64_t j = row.batch, k = j - w, from = j - (int64_t)pf * w;
        if (k >= 0) {
            stall_time fek = fe[r * ww + (size_t)(k % w)];
            stall_time disp = from >= 0 ? rd[r * pw + (size_t)(from % (int64_t)pw)] : 0;
            if (disp <= fek && row.fetch_start >= fek) {
                tsum += row.fetch_start - fek;
                tn++;
            }
        }
        fe[r * ww + (size_t)(j % w)] = row.fetch_end;
        rd[r * pw + (size_t)(j % (int64_t)pw)] = row.ready;
    }
    s->turn = tn ? (stall_time)llround((double)tsum / (double)tn) : 0;
    free(fe);
    free(rd);
    wi_src_close(&src);
    return rc;
}

/* Pass 3: everything else the decomposition computes over the trace. */
static int wi_pass3(wi_stream *s, const wi_xform *x, const stall_model_params *p, stall_measured *m,
                    stall_err *err)
{
    wi_src src;
    int rc = wi_src_open(s, &src, s->workers, err);
    if (rc) {
        wi_src_close(&src);
        return rc;
    }
    wi_dec d;
    wi_dec_init(&d, &s->info, s->workers, s->turn, x);
    d.persistent = s->persistent;
    if (p) {
        d.keep_e = p->epochs;
        d.keep_n = p->batches;
    }
    stall_tidy_row row;
    bool first = true;
    while ((rc = wi_src_next(&src, &row, err)) == 1) {
        if (first)
            m->samples = row.samples;
        first = false;
        if (row.epoch == 0 && row.rank == 0)
            m->samples_last = row.samples;
        wi_dec_row(&d, &row);
    }
    wi_src_close(&src);
    if (rc == 0) {
        size_t cells = (size_t)s->info.epochs * (size_t)s->info.ranks * (size_t)s->info.batches;
        if (s->info.has_bytes)
            m->batch_mb = d.bytes_sum / (double)cells / 1e6;
        m->startup = stall_median_time(d.startups, d.nstart);
        m->persistent = s->persistent;
        m->handover = d.nhand ? (stall_time)llround(d.hsum / (double)d.nhand) : 0;
        if (d.nhand == (size_t)cells && d.nhand > 0) {
            m->handover_epoch = stall_xcalloc((size_t)s->info.epochs, sizeof *m->handover_epoch);
            for (int e = 0; e < s->info.epochs; e++)
                m->handover_epoch[e] = (stall_time)llround(
                    d.ehand[e] / ((double)s->info.ranks * (double)s->info.batches));
        }
        m->mean_fetch_s = d.fetch_sum / (double)cells;
        for (int e = 0; e < s->info.epochs; e++)
            d.efetch[e] /= (double)s->info.ranks * (double)s->info.batches;
        for (int e = 0; e < s->info.epochs; e++)
            d.efetch2[e] =
                fmax(0.0, d.efetch2[e] / ((double)s->info.ranks * (double)s->info.batches) -
                              d.efetch[e] * d.efetch[e]);
        m->epoch_fetch_s = d.efetch;
        m->epoch_fetch_var = d.efetch2;
        d.efetch = d.efetch2 = NULL;
        stall_measured_read_above(m);
        m->epoch_s = d.epoch_s;
        m->stall_s = d.stall_s;
        m->start_spread_s = d.spread;
        m->start_last = d.last;
        m->late = d.late;
        m->late_any = s->late_any;
        m->late_wide = s->late_wide;
        d.spread = NULL;
        d.last = NULL;
        d.late = NULL;
        m->gap = d.gap;
        d.epoch_s = d.stall_s = NULL;
        d.gap = NULL;
        s->span = d.span;
        s->span_x = d.span_x;
        s->first = d.first;
        d.first = NULL;
        s->gap = stall_xmalloc((size_t)s->info.epochs * sizeof *s->gap);
        memcpy(s->gap, m->gap, (size_t)s->info.epochs * sizeof *s->gap);
        size_t nl = (size_t)s->info.epochs * (size_t)s->info.ranks;
        s->late = stall_xmalloc(nl * sizeof *s->late);
        memcpy(s->late, m->late, nl * sizeof *s->late);
    }
    wi_dec_free(&d);
    return rc;
}

/* wi_trace_workers's last resort: the vote of pass 1 over the fetch starts. */
static int wi_stream_inferred(void *inferred)
{
    return *(int *)inferred;
}

int wi_stream_start(const wi_trace_src *src, wi_stream **out, stall_err *err)
{
    *out = NULL;
    wi_stream *s = stall_xcalloc(1, sizeof *s);
    s->persistent = src->persistent;
    s->expect_workers = src->workers >= 0 ? (int)src->workers : -1;
    s->workers_at = stall_xstrdup(src->workers_at);
    int rc = 0;
    if (src->format == STALL_FORMAT_DSANALYZER) {
        /* Its checks run in pass 1, which reads each of its files once
         * (dsanalyzer_check.c); the later passes read the spill. */
        s->path = stall_xstrdup(src->perf);
        s->start_path = stall_xstrdup(src->start);
        s->epoch0 = (int)src->epoch;
        rc = stall_ds_open(src->fetch, src->start, src->perf, src->epoch, &s->ds, err);
    } else {
        s->path = stall_xstrdup(src->path);
    }
    int maxid = -1, inferred = 1;
    if (rc == 0)
        rc = wi_pass1(s, &maxid, &inferred, err);
    s->workers_from = STALL_WORKERS_TRACE;
    s->workers = s->info.workers;
    s->prefetch = s->info.prefetch;
    if (rc == 0)
        rc = wi_trace_persistent(src, s->info.persistent, &s->persistent, err);
    if (rc == 0)
        rc = wi_trace_workers(src, s->info.workers, maxid, wi_stream_inferred, &inferred,
                              &s->workers, &s->workers_from, err);
    if (rc == 0 && s->ds && s->workers_from == STALL_WORKERS_GIVEN && inferred != s->workers)
        s->workers_shown = inferred; /* as stall_measured_from_dsanalyzer */
    if (rc == 0)
        rc = wi_trace_prefetch(src, s->prefetch, &s->prefetch, err);
    if (rc == 0 && s->ds && s->prefetch < 1)
        s->prefetch = 2; /* as stall_measured_from_dsanalyzer */
    if (rc == 0 && (s->info.has_ckpt || s->info.cpu.has))
        rc = WI_STREAM_WHOLE;
    if (rc) {
        wi_stream_close(s);
        return rc;
    }
    *out = s;
    return 0;
}

const char *wi_stream_whole_why(void)
{
    return "the trace was read whole into memory: its checkpoint or CPU columns are taken out of "
           "the measured tails and fetches by the whole-trace decomposition only";
}

void wi_stream_grid(const wi_stream *s, stall_measured *m)
{
    memset(m, 0, sizeof *m);
    m->ranks = s->info.ranks;
    m->epochs = s->info.epochs;
    m->batches = s->info.batches;
    m->workers = s->workers; /* as decided after pass 1 */
    m->samples = s->samples;
    m->samples_last = s->samples_last;
    m->ranks_per_node = s->info.ranks; /* as wi_stream_measure says it */
    m->late_any = s->late_any;
    m->late_wide = s->late_wide;
}

int wi_stream_measure(wi_stream *s, const wi_xform *x, const stall_model_params *p,
                      stall_measured *m, stall_err *err)
{
    memset(m, 0, sizeof *m);
    int rc = wi_pass2(s, err);
    if (rc == 0) {
        m->ranks = s->info.ranks;
        m->epochs = s->info.epochs;
        m->epoch0 = s->epoch0;
        m->batches = s->info.batches;
        m->workers = s->workers;
        m->prefetch = s->prefetch;
        m->workers_from = s->workers_from;
        m->workers_shown = s->workers_shown;
        m->ranks_per_node = s->info.ranks;
        m->turnaround = s->turn;
        rc = wi_pass3(s, x, p, m, err);
    }
    if (rc)
        stall_measured_free(m);
    return rc;
}

int wi_stream_open(const wi_trace_src *src, stall_measured *m, wi_stream **out, stall_err *err)
{
    memset(m, 0, sizeof *m);
    int rc = wi_stream_start(src, out, err);
    if (rc == 0)
        rc = wi_stream_measure(*out, NULL, NULL, m, err);
    if (rc) {
        wi_stream_close(*out);
        *out = NULL;
    }
    return rc;
}

double wi_stream_span(const wi_stream *s, bool whatif)
{
    return whatif ? s->span_x : s->span;
}

stall_time wi_stream_first_fetch(const wi_stream *s, int r)
{
    return s->first[r];
}

/* ---- pass 4: the window ---- */

static int wi_fail(wi_stream *s, int code, const char *what, int e, int r, int64_t k)
{
    if (s->rc == 0)
        s->rc = stall_err_set(&s->err, code,
                              "%s: the model asked for %s of epoch %d, rank %d, batch %lld, "
                              "which has left the window of %lld batches read from the trace",
                              s->path, what, e, r, (long long)k, (long long)s->dec.ring_cap);
    return -1;
}

/* The finished batch (e, k), reading on as needed; NULL on failure. */
static const wi_batch *wi_at(wi_stream *s, const char *what, int e, int r, int64_t k)
{
    if (s->rc)
        return NULL;
    int64_t at = (int64_t)e * s->dec.keep_n + k;
    stall_tidy_row row;
    while (s->dec.kept <= at) {
        int rc = wi_src_next(&s->src, &row, &s->err);
        if (rc <= 0) {
            s->rc = rc ? rc : stall_err_set(&s->err, STALL_EIO, "%s: ended early", s->path);
            return NULL;
        }
        wi_dec_row(&s->dec, &row);
    }
    const wi_batch *b = &s->dec.ring[at % s->dec.ring_cap];
    if (b->at != at) {
        wi_fail(s, STALL_EINVAL, what, e, r, k);
        return NULL;
    }
    return b;
}

static stall_time wi_st_fetch(void *ctx, int e, int r, int64_t k)
{
    wi_stream *s = ctx;
    const wi_batch *b = wi_at(s, "the fetch", e, r, k);
    return b ? wi_xform_fetch(&s->feed_x, b->fetch[r]) : -1;
}

static stall_time wi_st_compute(void *ctx, int e, int r, int64_t k)
{
    wi_stream *s = ctx;
    const wi_batch *b = wi_at(s, "the compute", e, r, k);
    return b ? wi_xform_compute(&s->feed_x, b->compute[r]) : -1;
}

static stall_time wi_st_tail(void *ctx, int e, int64_t k)
{
    wi_stream *s = ctx;
    const wi_batch *b = wi_at(s, "the tail", e, 0, k);
    return b ? wi_xform_tail(&s->feed_x, b->tail) : -1;
}

static stall_time wi_st_gap(void *ctx, int e)
{
    const wi_stream *s = ctx;
    return s->gap[e];
}

static stall_time wi_st_late(void *ctx, int e, int r)
{
    const wi_stream *s = ctx;
    return s->late[(size_t)e * (size_t)s->info.ranks + (size_t)r];
}

/* Ends a pass 4, so that another can begin. */
static void wi_stream_unfeed(wi_stream *s)
{
    wi_src_close(&s->src);
    if (s->dec.ring) {
        for (int64_t i = 0; i < s->dec.ring_cap; i++) {
            free(s->dec.ring[i].fetch);
            free(s->dec.ring[i].compute);
        }
        free(s->dec.ring);
        s->dec.ring = NULL;
    }
    if (s->feeding)
        wi_dec_free(&s->dec);
    s->feeding = false;
    s->rc = 0;
    memset(&s->err, 0, sizeof s->err);
}

int wi_stream_durations(wi_stream *s, const stall_model_params *p, const wi_xform *x,
                        stall_durations *d, stall_err *err)
{
    wi_stream_unfeed(s);
    if (p->ranks > s->info.ranks || p->batches > s->info.batches || p->epochs > s->info.epochs ||
        p->ranks < 1 || p->batches < 1 || p->epochs < 1)
        return stall_err_set(err, STALL_EINVAL,
                             "%s: streaming needs at most the trace's ranks, batches and epochs",
                             s->path);
    int rc = wi_src_open(s, &s->src, s->workers, err);
    if (rc)
        return rc;
    /* The model asks for fetches up to P * W batches ahead of the batch it
     * computes; one more is read to know T(k); the rest is slack. */
    int64_t w = p->workers > 0 ? p->workers : 1, cap = w * p->prefetch + 8,
            all = (int64_t)p->epochs * p->batches;
    cap = cap < all ? cap : all;
    wi_dec_init(&s->dec, &s->info, s->workers, s->turn, NULL);
    s->dec.persistent = s->persistent;
    s->feeding = true;
    s->feed_x = x ? *x : WI_XFORM_NONE;
    s->dec.keep_e = p->epochs;
    s->dec.keep_n = p->batches;
    s->dec.ring_cap = cap;
    s->dec.ring = stall_xcalloc((size_t)cap, sizeof *s->dec.ring);
    for (int64_t i = 0; i < cap; i++) {
        s->dec.ring[i].at = -1;
        s->dec.ring[i].fetch = stall_xmalloc((size_t)s->info.ranks * sizeof(stall_time));
        s->dec.ring[i].compute = stall_xmalloc((size_t)s->info.ranks * sizeof(stall_time));
    }
    /* The model asks for an epoch's gap before its first batch: pass 3's. */
    *d = (stall_durations){.fetch = wi_st_fetch,
                           .compute = wi_st_compute,
                           .tail = wi_st_tail,
                           .epoch_gap = wi_st_gap,
                           .late_start =
                               p->ranks == s->info.ranks && !(x && x->no_late) ? wi_st_late : NULL,
                           .ctx = s};
    return 0;
}

int wi_stream_error(const wi_stream *s, stall_err *err)
{
    if (s->rc && err)
        *err = s->err;
    return s->rc;
}

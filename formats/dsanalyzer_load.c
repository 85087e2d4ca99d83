/*
 * dsanalyzer_load.c - stall_ds_load: the three dsanalyzer CSVs read whole
 * into a stall_ds_trace, with the checks of dsanalyzer.c.
 *
 * Cost: O(size of the files) to read, O(P log P) to sort the P perf rows;
 * memory: the three files' text plus O(rows) offsets, freed before return.
 */
#include "stall/dsanalyzer.h"

#include "stall/traceend.h"

#include "stall/limits.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stall/pdparse.h"
#include "dsanalyzer_int.h"

/* ---- stall_ds_load ------------------------------------------------------ */

/* Everything stall_ds_load allocates, so that one function frees it. */
typedef struct dsa_work {
    dsa_table fetch, start, perf;
    int64_t *f_ep, *f_ix, *s_ep, *s_ix;
    dsa_cols fc, sc, pc;
    dsa_prow *prows;
    long *pline; /* [N*G] the perf line of batch k on GPU g */
} dsa_work;

static void dsa_work_free(dsa_work *w)
{
    dsa_table_free(&w->fetch);
    dsa_table_free(&w->start);
    dsa_table_free(&w->perf);
    free(w->f_ep);
    free(w->f_ix);
    free(w->s_ep);
    free(w->s_ix);
    free(w->fc.gpu);
    free(w->sc.gpu);
    free(w->prows);
    free(w->pline);
}

/* Fetch CSV: header, G, and keys. */
static int dsa_load_fetch(dsa_work *w, stall_ds_trace *tr, stall_err *err)
{
    const dsa_table *t = &w->fetch;
    int rc = dsa_fetch_header(t, &w->fc, &tr->gpus, err);
    if (rc)
        return rc;
    w->f_ep = stall_xcalloc(t->nrows, sizeof *w->f_ep);
    w->f_ix = stall_xcalloc(t->nrows, sizeof *w->f_ix);
    return dsa_keys(t, w->fc.ce, w->fc.ci, w->f_ep, w->f_ix, err);
}

/* Start CSV: header with exactly the fetch CSV's GPU columns, and keys. */
static int dsa_load_start(dsa_work *w, int G, stall_err *err)
{
    const dsa_table *t = &w->start;
    int rc = dsa_start_header(t, G, w->fetch.path, &w->sc, err);
    if (rc)
        return rc;
    w->s_ep = stall_xcalloc(t->nrows, sizeof *w->s_ep);
    w->s_ix = stall_xcalloc(t->nrows, sizeof *w->s_ix);
    return dsa_keys(t, w->sc.ce, w->sc.ci, w->s_ep, w->s_ix, err);
}

/* Both files hold the same keys (both are sorted): the seed's inner merges
 * then drop nothing and keep the fetch CSV's row order (quirks Q5, Q6). */
static int dsa_same_keys(const dsa_work *w, stall_err *err)
{
    const dsa_table *f = &w->fetch, *s = &w->start;
    size_t i = 0, j = 0;
    while (i < f->nrows || j < s->nrows) {
        int c;
        if (i == f->nrows)
            c = 1;
        else if (j == s->nrows)
            c = -1;
        else if (w->f_ep[i] != w->s_ep[j])
            c = w->f_ep[i] < w->s_ep[j] ? -1 : 1;
        else
            c = w->f_ix[i] < w->s_ix[j] ? -1 : w->f_ix[i] > w->s_ix[j];
        if (c == 0) {
            i++;
            j++;
            continue;
        }
        if (c < 0)
            return dsa_key_missing(f->path, f->line[i], w->fc.ci + 1, w->f_ep[i], w->f_ix[i],
                                   s->path, err);
        return dsa_key_missing(s->path, s->line[j], w->sc.ci + 1, w->s_ep[j], w->s_ix[j], f->path,
                               err);
    }
    return 0;
}

/* Where perf's missing row of (epoch, step) belongs (DSA_AT_*, dsa_no_row)
 * and its line: the first row of that step in file order, else the first
 * of a later (Epoch, Step), else the last row; in a file sorted by (Epoch,
 * Step) the place the streaming check names. */
static int dsa_row_place(const dsa_work *w, int64_t epoch, int64_t step, long *line)
{
    const dsa_table *t = &w->perf;
    size_t step_row = SIZE_MAX, after_row = SIZE_MAX;
    for (size_t i = 0; i < t->nrows; i++) {
        const dsa_prow *p = &w->prows[i];
        if (p->epoch == epoch && p->step == step)
            step_row = p->row < step_row ? p->row : step_row;
        else if (p->epoch > epoch || (p->epoch == epoch && p->step > step))
            after_row = p->row < after_row ? p->row : after_row;
    }
    if (step_row != SIZE_MAX || after_row != SIZE_MAX) {
        *line = t->line[step_row != SIZE_MAX ? step_row : after_row];
        return step_row != SIZE_MAX ? DSA_AT_STEP : DSA_AT_BEFORE;
    }
    *line = t->nrows > 0 ? t->line[t->nrows - 1] : 1;
    return DSA_AT_END;
}

/* Perf CSV: checks every row's keys, then matches the selected epoch's rows
 * to batches and reads their values. */
static int dsa_load_perf(dsa_work *w, stall_ds_trace *tr, stall_err *err)
{
    const dsa_table *t = &w->perf;
    const dsa_cols *c = &w->pc;
    const int G = tr->gpus;
    int rc = dsa_perf_header(t, &w->pc, err);
    if (rc)
        return rc;
    w->prows = stall_xcalloc(t->nrows, sizeof *w->prows);
    w->pline = stall_xcalloc(tr->rows * (size_t)G, sizeof *w->pline);
    for (size_t r = 0; r < t->nrows; r++)
        if ((rc = dsa_perf_key(t, r, c, G, w->fetch.path, &w->prows[r], err)))
            return rc;
    qsort(w->prows, t->nrows, sizeof *w->prows, dsa_prow_cmp);
    for (size_t i = 1; i < t->nrows; i++) {
        const dsa_prow *a = &w->prows[i - 1], *b = &w->prows[i];
        if (a->epoch == b->epoch && a->gpu == b->gpu && a->step == b->step)
            return dsa_perf_dup(t->path, t->line[b->row], c, b, t->line[a->row], err);
    }
    /* Rows of the selected epoch, by GPU and then Step: GPU g's k-th row is
     * batch k's (Q9). Walking it beside the ascending Index numbers checks
     * that this is also the row whose Step equals the Index number. */
    size_t j = 0, N = tr->rows;
    while (j < t->nrows && w->prows[j].epoch < tr->epoch)
        j++;
    for (int g = 0; g < G; g++) {
        for (size_t k = 0; k < N; k++, j++) {
            const dsa_prow *p = j < t->nrows ? &w->prows[j] : NULL;
            int here = p && p->epoch == tr->epoch && p->gpu == g;
            if (here && p->step < tr->index[k])
                break; /* extra step, reported below */
            if (!here || p->step > tr->index[k]) {
                long line;
                int at = dsa_row_place(w, tr->epoch, tr->index[k], &line);
                return dsa_no_row(t->path, c, g, tr->index[k], tr->epoch, w->fetch.path,
                                  w->fetch.line[tr->label0 + k], at, line, err);
            }
            size_t o = k * (size_t)G + (size_t)g;
            w->pline[o] = t->line[p->row];
            if ((rc = dsa_perf_values(t, p->row, c, &tr->time_ns[o], &tr->iter_s[o],
                                      &tr->stall_s[o], err)))
                return rc;
        }
        if (j < t->nrows && w->prows[j].epoch == tr->epoch && w->prows[j].gpu == g) {
            const dsa_prow *p = &w->prows[j];
            return dsa_extra_step(t->path, t->line[p->row], c, p->step, g, tr->epoch, w->fetch.path,
                                  err);
        }
    }
    return 0;
}

/* The clocks of start and perf, batch by batch (the last check). */
static int dsa_load_clock(const dsa_work *w, const stall_ds_trace *tr, stall_err *err)
{
    const size_t G = (size_t)tr->gpus;
    stall_time *q0 = stall_xcalloc(G, sizeof *q0);
    for (int g = 0; g < tr->gpus; g++)
        q0[g] = stall_ds_request(tr, 0, g);
    int rc = 0;
    for (size_t k = 0; k < tr->rows && !rc; k++)
        rc = dsa_clock(w->start.path, w->start.line[tr->label0 + k], &w->sc, w->perf.path,
                       w->pline + k * G, tr, k, q0, w->pline, err);
    free(q0);
    return rc;
}

void dsa_trace_alloc(stall_ds_trace *tr, size_t N)
{
    const size_t G = (size_t)tr->gpus;
    tr->index = stall_xcalloc(N, sizeof *tr->index);
    tr->fetch_s = stall_xcalloc(N * G, sizeof *tr->fetch_s);
    tr->start_ns = stall_xcalloc(N * G, sizeof *tr->start_ns);
    tr->time_ns = stall_xcalloc(N * G, sizeof *tr->time_ns);
    tr->iter_s = stall_xcalloc(N * G, sizeof *tr->iter_s);
    tr->stall_s = stall_xcalloc(N * G, sizeof *tr->stall_s);
}

static stall_ds_trace *dsa_trace_new(const char *fetch_csv, const char *start_csv,
                                     const char *perf_csv, int64_t epoch)
{
    stall_ds_trace *tr = stall_xcalloc(1, sizeof *tr);
    tr->epoch = epoch;
    tr->fetch_path = stall_xstrdup(fetch_csv);
    tr->start_path = stall_xstrdup(start_csv);
    tr->perf_path = stall_xstrdup(perf_csv);
    return tr;
}

int dsa_no_epoch(const char *fetch_path, const dsa_cols *fc, int64_t epoch, stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE, "%s:1:%zu: no rows with Epoch %lld (empty trace)",
                         fetch_path, fc->ce + 1, (long long)epoch);
}

/* Appends batch k of a stream's first pass to tr, growing its arrays. */
static void dsa_append(stall_ds_trace *tr, size_t *cap, size_t k, const stall_ds_trace *b)
{
    const size_t G = (size_t)tr->gpus;
    if (k == *cap) {
        *cap = *cap ? 2 * *cap : 1024;
        tr->index = stall_xrealloc(tr->index, *cap * sizeof *tr->index);
        tr->fetch_s = stall_xrealloc(tr->fetch_s, *cap * G * sizeof *tr->fetch_s);
        tr->start_ns = stall_xrealloc(tr->start_ns, *cap * G * sizeof *tr->start_ns);
        tr->time_ns = stall_xrealloc(tr->time_ns, *cap * G * sizeof *tr->time_ns);
        tr->iter_s = stall_xrealloc(tr->iter_s, *cap * G * sizeof *tr->iter_s);
        tr->stall_s = stall_xrealloc(tr->stall_s, *cap * G * sizeof *tr->stall_s);
    }
    if (k == 0)
        tr->label0 = b->label0;
    tr->index[k] = b->index[0];
    memcpy(tr->fetch_s + k * G, b->fetch_s, G * sizeof *tr->fetch_s);
    memcpy(tr->start_ns + k * G, b->start_ns, G * sizeof *tr->start_ns);
    memcpy(tr->time_ns + k * G, b->time_ns, G * sizeof *tr->time_ns);
    memcpy(tr->iter_s + k * G, b->iter_s, G * sizeof *tr->iter_s);
    memcpy(tr->stall_s + k * G, b->stall_s, G * sizeof *tr->stall_s);
    tr->rows = k + 1;
}

/* The stream's first pass reads each file once, checks as stall_ds_load
 * always did, and keeps only the batches (about 40 bytes per GPU and batch,
 * not the files' text); perf rows out of (Epoch, Step) order are read whole. */
int stall_ds_load(const char *fetch_csv, const char *start_csv, const char *perf_csv, int64_t epoch,
                  stall_ds_trace **out, stall_err *err)
{
    if (!fetch_csv || !start_csv || !perf_csv || !out)
        return stall_err_set(err, STALL_EINVAL, "stall_ds_load: NULL argument");
    stall_ds_stream *s = NULL;
    int rc = stall_ds_open(fetch_csv, start_csv, perf_csv, epoch, &s, err);
    if (rc)
        return rc;
    stall_ds_trace *tr = dsa_trace_new(fetch_csv, start_csv, perf_csv, epoch);
    tr->gpus = stall_ds_stream_gpus(s);
    size_t cap = 0, k;
    const stall_ds_trace *b;
    rc = stall_ds_rewind(s, err);
    while (rc == 0 && (rc = stall_ds_next(s, &k, &b, err)) == 1) {
        dsa_append(tr, &cap, k, b);
        rc = 0;
    }
    stall_ds_close(s);
    if (rc) {
        stall_ds_free(tr);
        return rc == STALL_DS_UNSORTED
                   ? dsa_load_whole(fetch_csv, start_csv, perf_csv, epoch, out, err)
                   : rc;
    }
    *out = tr;
    return 0;
}

int dsa_load_whole(const char *fetch_csv, const char *start_csv, const char *perf_csv,
                   int64_t epoch, stall_ds_trace **out, stall_err *err)
{
    /* A file cut short: warned, or refused when cut inside a number. */
    for (int i = 0; i < 3; i++) {
        const char *p = i == 0 ? fetch_csv : i == 1 ? start_csv : perf_csv;
        int crc = access(p, R_OK) == 0 ? stall_trace_check_end_warn(p, err) : 0;
        if (crc)
            return crc;
    }
    dsa_work w;
    memset(&w, 0, sizeof w);
    stall_ds_trace *tr = dsa_trace_new(fetch_csv, start_csv, perf_csv, epoch);
    int rc = dsa_read(fetch_csv, &w.fetch, err);
    if (!rc)
        rc = dsa_load_fetch(&w, tr, err);
    if (!rc)
        rc = dsa_read(start_csv, &w.start, err);
    if (!rc)
        rc = dsa_load_start(&w, tr->gpus, err);
    if (!rc)
        rc = dsa_same_keys(&w, err);
    if (rc)
        goto done;

    /* The selected epoch is one run of rows, since the keys are sorted. */
    const dsa_table *f = &w.fetch, *s = &w.start;
    size_t lo = 0;
    while (lo < f->nrows && w.f_ep[lo] < epoch)
        lo++;
    size_t hi = lo;
    while (hi < f->nrows && w.f_ep[hi] == epoch)
        hi++;
    if (hi == lo) {
        rc = dsa_no_epoch(f->path, &w.fc, epoch, err);
        goto done;
    }
    const size_t G = (size_t)tr->gpus, N = hi - lo;
    tr->rows = N;
    tr->label0 = lo;
    dsa_trace_alloc(tr, N);
    memcpy(tr->index, w.f_ix + lo, N * sizeof *tr->index);
    /* Every row's values are checked, as pandas converts whole columns; only
     * the selected epoch's are kept. Row r of fetch is row r of start. */
    for (size_t r = 0; r < f->nrows && !rc; r++) {
        int in = r >= lo && r < hi;
        rc = dsa_fs_values(f, r, &w.fc, s, r, &w.sc, tr->gpus,
                           in ? tr->fetch_s + (r - lo) * G : NULL,
                           in ? tr->start_ns + (r - lo) * G : NULL, err);
    }
    if (!rc)
        rc = dsa_read(perf_csv, &w.perf, err);
    if (!rc)
        rc = dsa_load_perf(&w, tr, err);
    if (!rc)
        rc = dsa_load_clock(&w, tr, err);
done:
    dsa_work_free(&w);
    if (rc) {
        stall_ds_free(tr);
        return rc;
    }
    *out = tr;
    return 0;
}

void stall_ds_free(stall_ds_trace *t)
{
    if (!t)
        return;
    free(t->index);
    free(t->fetch_s);
    free(t->start_ns);
    free(t->time_ns);
    free(t->iter_s);
    free(t->stall_s);
    free(t->fetch_path);
    free(t->start_path);
    free(t->perf_path);
    free(t);
}

stall_time stall_ds_request(const stall_ds_trace *t, size_t k, int g)
{
    size_t i = k * (size_t)t->gpus + (size_t)g;
    return t->time_ns[i] - stall_s_to_ns(t->stall_s[i]);
}

stall_time stall_ds_compute(const stall_ds_trace *t, size_t k, int g)
{
    double maxst = 0;
    for (int r = 0; r < t->gpus; r++)
        if (t->stall_s[k * (size_t)t->gpus + (size_t)r] > maxst)
            maxst = t->stall_s[k * (size_t)t->gpus + (size_t)r];
    double c = t->iter_s[k * (size_t)t->gpus + (size_t)g] - maxst;
    return c > 0 ? stall_s_to_ns(c) : 0;
}

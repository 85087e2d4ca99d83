/*
 * tidy_load.c - a tidy trace read whole into columns (stall_tidy_load,
 * stall_tidy_free, stall/tidy.h), on top of the row stream of tidy.c.
 */
#include "stall/tidy.h"

#include <stdlib.h>
#include <string.h>

#include "stall/base.h"

/* Appends every row to growable columns (stall_tidy_load's in-memory trace). */
typedef struct tidy_cols {
    size_t n, cap;
    stall_time *v[6];
    int32_t *worker;
    int64_t *samples;
    double *bytes;
    stall_time *ck[2];
    double *ckb;
    stall_time *estart;
    size_t nestart, estart_cap;
} tidy_cols;

static void tidy_cols_add(tidy_cols *c, const stall_tidy_info *in, const stall_tidy_row *row)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 4096;
        for (int j = 0; j < 6; j++)
            if (j < 5 || in->has_compute)
                c->v[j] = stall_xrealloc(c->v[j], c->cap * sizeof *c->v[j]);
        c->worker = stall_xrealloc(c->worker, c->cap * sizeof *c->worker);
        if (in->has_samples)
            c->samples = stall_xrealloc(c->samples, c->cap * sizeof *c->samples);
        if (in->has_bytes)
            c->bytes = stall_xrealloc(c->bytes, c->cap * sizeof *c->bytes);
        if (in->has_ckpt) {
            c->ck[0] = stall_xrealloc(c->ck[0], c->cap * sizeof *c->ck[0]);
            c->ck[1] = stall_xrealloc(c->ck[1], c->cap * sizeof *c->ck[1]);
            c->ckb = stall_xrealloc(c->ckb, c->cap * sizeof *c->ckb);
        }
    }
    if (c->ckb) {
        c->ck[0][c->n] = row->ckpt_start;
        c->ck[1][c->n] = row->ckpt_end;
        c->ckb[c->n] = row->ckpt_bytes;
    }
    const stall_time t[6] = {row->fetch_start, row->fetch_end, row->request,
                             row->ready,       row->iter_end,  row->compute_end};
    for (int j = 0; j < 6; j++)
        if (c->v[j])
            c->v[j][c->n] = t[j];
    c->worker[c->n] = row->worker;
    if (c->samples)
        c->samples[c->n] = row->samples;
    if (c->bytes)
        c->bytes[c->n] = row->bytes;
    c->n++;
    /* Batch-0 rows come in (epoch, rank) order: [e * ranks + r]. */
    if (row->batch == 0) {
        if (c->nestart == c->estart_cap) {
            c->estart_cap = c->estart_cap ? 2 * c->estart_cap : 64;
            c->estart = stall_xrealloc(c->estart, c->estart_cap * sizeof *c->estart);
        }
        c->estart[c->nestart++] = row->epoch_start;
    }
}

int stall_tidy_load(const char *path, stall_tidy_trace **out, stall_err *err)
{
    return stall_tidy_load_workers(path, -1, NULL, out, err);
}

int stall_tidy_load_workers(const char *path, int workers, const char *origin,
                            stall_tidy_trace **out, stall_err *err)
{
    *out = NULL;
    stall_tidy_stream *s = NULL;
    int rc = stall_tidy_open(path, &s, err);
    if (rc)
        return rc;
    if (workers >= 0)
        stall_tidy_expect_workers(s, workers, origin);
    const stall_tidy_info *in = stall_tidy_stream_info(s);
    tidy_cols c = {0};
    stall_tidy_row row;
    while ((rc = stall_tidy_next(s, &row, err)) == 1)
        tidy_cols_add(&c, in, &row);
    if (rc) {
        for (int j = 0; j < 6; j++)
            free(c.v[j]);
        free(c.worker);
        free(c.samples);
        free(c.bytes);
        free(c.ck[0]), free(c.ck[1]), free(c.ckb);
        free(c.estart);
        stall_tidy_close(s);
        return rc;
    }
    stall_tidy_trace *tr = stall_xcalloc(1, sizeof *tr);
    tr->ranks = in->ranks;
    tr->batches = in->batches;
    tr->epochs = in->epochs;
    tr->fetch_start = c.v[0];
    tr->fetch_end = c.v[1];
    tr->request = c.v[2];
    tr->ready = c.v[3];
    tr->iter_end = c.v[4];
    tr->compute_end = c.v[5];
    tr->worker = c.worker;
    tr->samples = c.samples;
    tr->bytes = c.bytes;
    tr->epoch_start = c.estart;
    tr->ckpt_start = c.ck[0];
    tr->ckpt_end = c.ck[1];
    tr->ckpt_bytes = c.ckb;
    stall_tidy_ckpt_sums(tr);
    tr->workers = in->workers;
    tr->prefetch = in->prefetch;
    tr->pin_memory = in->pin_memory;
    tr->persistent = in->persistent;
    tr->cpu = in->cpu;
    tr->path = stall_xstrdup(path);
    stall_tidy_close(s);
    *out = tr;
    return 0;
}

void stall_tidy_free(stall_tidy_trace *t)
{
    if (!t)
        return;
    free(t->fetch_start);
    free(t->fetch_end);
    free(t->request);
    free(t->ready);
    free(t->iter_end);
    free(t->compute_end);
    free(t->worker);
    free(t->samples);
    free(t->bytes);
    free(t->epoch_start);
    free(t->checkpoint_s);
    free(t->ckpt_start), free(t->ckpt_end), free(t->ckpt_bytes);
    free(t->summary);
    free(t->path);
    free(t);
}

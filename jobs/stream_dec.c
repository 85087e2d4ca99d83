/*
 * stream_dec.c - a trace's rows decomposed one batch at a time, for the
 * streaming passes of stream.c.
 *
 * wi_dec is stall_measured_from_tidy's epoch loop turned inside out: rows
 * arrive in file order, (epoch, batch, rank); a batch's compute time (when
 * the trace has no compute_end) and tail need T(k), the latest request of
 * batch k + 1, so batch k is finished when batch k + 1 has been read, or
 * at once when it is the epoch's last. Every sum runs in the in-memory
 * path's order, so the doubles come out bit for bit the same.
 */
#include "stream_dec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void wi_dec_init(wi_dec *d, const stall_tidy_info *in, int workers, stall_time turn,
                 const wi_xform *x)
{
    memset(d, 0, sizeof *d);
    d->x = x ? *x : WI_XFORM_NONE;
    d->keep_e = in->epochs;
    d->keep_n = in->batches;
    d->g = in->ranks;
    d->ne = in->epochs;
    d->n = in->batches;
    d->workers = workers;
    d->turn = turn;
    d->has_compute = in->has_compute;
    d->cur = stall_xmalloc((size_t)d->g * sizeof *d->cur);
    d->prev = stall_xmalloc((size_t)d->g * sizeof *d->prev);
    d->epoch_s = stall_xcalloc((size_t)d->ne, sizeof *d->epoch_s);
    d->efetch = stall_xcalloc((size_t)d->ne, sizeof *d->efetch);
    d->efetch2 = stall_xcalloc((size_t)d->ne, sizeof *d->efetch2);
    d->stall_s = stall_xcalloc((size_t)d->ne, sizeof *d->stall_s);
    d->spread = stall_xcalloc((size_t)d->ne, sizeof *d->spread);
    d->last = stall_xcalloc((size_t)d->ne, sizeof *d->last);
    d->late = stall_xcalloc((size_t)d->ne * (size_t)d->g, sizeof *d->late);
    d->gap = stall_xcalloc((size_t)d->ne, sizeof *d->gap);
    d->ehand = stall_xcalloc((size_t)d->ne, sizeof *d->ehand);
    d->first = stall_xcalloc((size_t)d->g, sizeof *d->first);
}

void wi_dec_free(wi_dec *d)
{
    free(d->cur);
    free(d->prev);
    free(d->epoch_s);
    free(d->efetch);
    free(d->efetch2);
    free(d->stall_s);
    free(d->spread);
    free(d->last);
    free(d->late);
    free(d->gap);
    free(d->ehand);
    free(d->startups);
    free(d->first);
}

/* Batch b (rows P) finished; next: the rows of batch k + 1, or NULL for the
 * epoch's last batch. */
static void wi_dec_finish(wi_dec *d, const stall_tidy_row *b, const stall_tidy_row *next)
{
    int g = d->g, e = b[0].epoch;
    int64_t k = b[0].batch;
    stall_time tk = 0, ymax = 0, cemax = 0, smax = 0;
    for (int r = 0; r < g; r++) {
        stall_time nx = next ? next[r].request : b[r].iter_end;
        tk = nx > tk ? nx : tk;
        ymax = b[r].ready > ymax ? b[r].ready : ymax;
        stall_time ce = d->has_compute ? b[r].compute_end : 0;
        cemax = ce > cemax ? ce : cemax;
        /* The first batch from the epoch's start, as measured.c. */
        stall_time st = b[r].ready - (k == 0 ? d->e0 : b[r].request);
        smax = st > smax ? st : smax;
    }
    d->stall_sum += stall_ns_to_s(smax);
    bool keep = d->ring && e < d->keep_e && k < d->keep_n;
    wi_batch *slot = keep ? &d->ring[d->kept % d->ring_cap] : NULL;
    stall_time c0 = 0;
    for (int r = 0; r < g; r++) {
        stall_time f = b[r].fetch_end - b[r].fetch_start + d->turn;
        d->fetch_sum += stall_ns_to_s(f);
        d->efetch[e] += stall_ns_to_s(f);
        d->efetch2[e] += stall_ns_to_s(f) * stall_ns_to_s(f);
        stall_time c = d->has_compute ? b[r].compute_end - b[r].ready : tk - ymax;
        stall_time fe = b[r].fetch_end + d->turn;
        stall_time arrived = fe > b[r].request ? fe : b[r].request;
        d->hsum += (double)(b[r].ready - arrived > 0 ? b[r].ready - arrived : 0);
        d->ehand[e] += (double)(b[r].ready - arrived > 0 ? b[r].ready - arrived : 0);
        d->nhand++;
        if (d->workers > 0 && k < d->workers && b[r].worker >= 0 && (!d->persistent || e == 0)) {
            if (d->nstart == d->start_cap) {
                d->start_cap = d->start_cap ? 2 * d->start_cap : 64;
                d->startups = stall_xrealloc(d->startups, d->start_cap * sizeof *d->startups);
            }
            /* from the rank's own start, as measured.c */
            stall_time es = b[r].epoch_start;
            d->startups[d->nstart++] = b[r].fetch_start - es > 0 ? b[r].fetch_start - es : 0;
        }
        if (r == 0)
            c0 = c;
        if (e == 0 && k == 0)
            d->first[r] = f;
        if (slot) {
            slot->fetch[r] = f;
            slot->compute[r] = c;
        }
    }
    stall_time a = d->has_compute ? tk - cemax : 0;
    a = a > 0 ? a : 0;
    /* As wi_tables_build sums them: rank 0's compute plus the tail, per batch. */
    d->span += (double)c0 + (double)a;
    if (e < d->keep_e && k < d->keep_n)
        d->span_x += (double)wi_xform_compute(&d->x, c0) + (double)wi_xform_tail(&d->x, a);
    if (slot) {
        slot->tail = a;
        slot->at = (int64_t)e * d->keep_n + k;
        d->kept++;
    }
    if (k == d->n - 1) {
        d->prev_end = tk;
        d->epoch_s[e] = stall_ns_to_s(tk - d->e0);
        d->stall_s[e] = d->stall_sum / (double)d->n;
        d->stall_sum = 0;
    }
}

void wi_dec_row(wi_dec *d, const stall_tidy_row *row)
{
    d->bytes_sum += row->bytes;
    d->cur[d->ncur++] = *row;
    if (d->ncur < d->g)
        return;
    d->ncur = 0;
    int e = row->epoch;
    int64_t k = row->batch;
    if (k == 0) {
        d->e0 = d->cur[0].epoch_start;
        stall_time elast = d->e0;
        for (int r = 1; r < d->g; r++) {
            d->e0 = d->cur[r].epoch_start < d->e0 ? d->cur[r].epoch_start : d->e0;
            if (d->cur[r].epoch_start > elast) {
                elast = d->cur[r].epoch_start;
                d->last[e] = r;
            }
        }
        d->spread[e] = stall_ns_to_s(elast - d->e0);
        for (int r = 0; r < d->g; r++)
            d->late[(size_t)e * d->g + r] = d->cur[r].epoch_start - d->e0;
        d->gap[e] = e > 0 && d->e0 - d->prev_end > 0 ? d->e0 - d->prev_end : 0;
    } else {
        wi_dec_finish(d, d->prev, d->cur);
    }
    if (k == d->n - 1) {
        wi_dec_finish(d, d->cur, NULL);
    } else {
        stall_tidy_row *t = d->prev;
        d->prev = d->cur;
        d->cur = t;
    }
}

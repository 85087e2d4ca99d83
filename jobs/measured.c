/*
 * measured.c - a measured tidy trace decomposed into the model's inputs
 * (stall/measured.h).
 */
#include "stall/measured.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the measured run ---- */

void stall_measured_free(stall_measured *m)
{
    if (!m)
        return;
    free(m->fetch);
    free(m->compute);
    free(m->tail);
    free(m->gap);
    free(m->epoch_s);
    free(m->epoch_fetch_s);
    free(m->epoch_fetch_var);
    free(m->read_above);
    free(m->handover_epoch);
    free(m->stall_s);
    free(m->start_spread_s);
    free(m->late);
    free(m->start_last);
    free(m->ckpt_s);
    free(m->fetch_fit);
    free(m->window_s);
    free(m->window_stall_s);
    memset(m, 0, sizeof *m);
}

/* The checkpoint after iteration k of epoch e: the longest of the ranks'
 * spans (0: none), counted into m's checkpoint figures. */
static stall_time measured_ckpt(const stall_tidy_trace *t, stall_measured *m, int e, int64_t k)
{
    if (!t->ckpt_start)
        return 0;
    stall_time span = -1;
    double bytes = 0;
    for (int r = 0; r < t->ranks; r++) {
        size_t i = stall_tidy_at(t, e, r, k);
        if (t->ckpt_start[i] < 0)
            continue;
        stall_time d = t->ckpt_end[i] - t->ckpt_start[i];
        span = d > span ? d : span;
        bytes += t->ckpt_bytes[i];
    }
    if (span < 0)
        return 0;
    if (!m->ckpt_s)
        m->ckpt_s = stall_xcalloc((size_t)t->epochs, sizeof *m->ckpt_s);
    m->ckpt_s[e] += stall_ns_to_s(span);
    int64_t at = (int64_t)e * t->batches + k + 1; /* iterations of the run so far */
    /* ckpt_every keeps the first interval seen, then the commonest of two
     * candidates is not needed: a capture checkpoints at a fixed step. */
    if (m->ckpt_n == 0) {
        m->ckpt_every = at;
        m->ckpt_first_s = stall_ns_to_s(span); /* its excess over the rest: ckpt_finish */
    } else if (m->ckpt_n == 1)
        m->ckpt_every = at - m->ckpt_every;
    m->ckpt_n++;
    m->ckpt_mb += bytes / t->ranks / 1e6; /* summed here, a mean in measured_ckpt_finish */
    m->ckpt_mb_s += stall_ns_to_s(span);
    return span;
}

/* Means over the checkpoints: MB per rank, and the bandwidth per node that
 * gives the mean write time back (W = ranks per node x MB / MB/s). */
static void measured_ckpt_finish(const stall_tidy_trace *t, stall_measured *m)
{
    if (m->ckpt_n == 0)
        return;
    double mb = m->ckpt_mb / (double)m->ckpt_n, s = m->ckpt_mb_s / (double)m->ckpt_n;
    /* The run's first checkpoint apart (docs/model.md 2.5: it took 2x the
     * later ones in every capture): W from the later ones, the first's
     * excess over them kept. */
    double first = m->ckpt_first_s;
    m->ckpt_first_s = 0;
    if (m->ckpt_n >= 2) {
        double later = (m->ckpt_mb_s - first) / (double)(m->ckpt_n - 1);
        if (first > later) {
            m->ckpt_first_s = first - later;
            s = later;
        }
    }
    m->ckpt_unsized = !(mb > 0);
    if (m->ckpt_unsized) {
        mb = 1.0; /* no ckpt_bytes: one unit, so that the time comes back */
        m->ckpt_unsized_why = t->ckpt_no_size ? t->ckpt_no_size : "no ckpt_bytes";
    }
    m->ckpt_mb = mb;
    m->ckpt_mb_s = s > 0 && mb > 0 ? m->ranks_per_node * mb / s : 0;
}

int stall_measured_from_tidy(const stall_tidy_trace *t, stall_measured *m, stall_err *err)
{
    return stall_measured_from_tidy_p(t, false, m, err);
}

int stall_measured_from_tidy_p(const stall_tidy_trace *t, bool persistent, stall_measured *m,
                               stall_err *err)
{
    memset(m, 0, sizeof *m);
    m->persistent = persistent;
    m->epoch0 = t->epoch0;
    int g = t->ranks, ne = t->epochs;
    int64_t n = t->batches;
    size_t cells = (size_t)ne * g * (size_t)n;
    m->ranks = g;
    m->epochs = ne;
    m->batches = n;
    m->workers = t->workers;
    m->prefetch = t->prefetch;
    m->samples = t->samples ? t->samples[0] : 0;
    m->samples_last = t->samples ? t->samples[stall_tidy_at(t, 0, 0, n - 1)] : 0;
    m->workers_from = STALL_WORKERS_TRACE;
    m->ranks_per_node = g;
    if (t->bytes) {
        double b = 0;
        for (size_t i = 0; i < cells; i++)
            b += t->bytes[i];
        m->batch_mb = b / (double)cells / 1e6;
    }
    if (t->workers >= 0) {
        for (size_t i = 0; i < cells; i++)
            if (t->worker[i] >= (t->workers > 0 ? t->workers : 1))
                return stall_err_set(err, STALL_EPARSE,
                                     "%s: worker id %d but the trace says workers = %d", t->path,
                                     t->worker[i], t->workers);
    }
    m->fetch = stall_xmalloc(cells * sizeof *m->fetch);
    m->compute = stall_xmalloc(cells * sizeof *m->compute);
    m->tail = stall_xmalloc((size_t)ne * (size_t)n * sizeof *m->tail);
    m->gap = stall_xcalloc((size_t)ne, sizeof *m->gap);
    m->epoch_s = stall_xcalloc((size_t)ne, sizeof *m->epoch_s);
    m->stall_s = stall_xcalloc((size_t)ne, sizeof *m->stall_s);
    m->start_spread_s = stall_xcalloc((size_t)ne, sizeof *m->start_spread_s);
    m->start_last = stall_xcalloc((size_t)ne, sizeof *m->start_last);
    m->late = stall_xcalloc((size_t)ne * (size_t)g, sizeof *m->late);
    m->epoch_fetch_s = stall_xcalloc((size_t)ne, sizeof *m->epoch_fetch_s);
    m->epoch_fetch_var = stall_xcalloc((size_t)ne, sizeof *m->epoch_fetch_var);
    m->handover_epoch = stall_xcalloc((size_t)ne, sizeof *m->handover_epoch);
    /* Worker turnaround: after collating a batch a worker still has to hand
     * it to the result queue (pickling, the feeder thread) before it starts
     * its next batch. The trace shows it as S(k+W) - E(k) for batches whose
     * successor was already dispatched when k ended (the worker, not the
     * prefetch window, was the limit). Its mean is added to every fetch, so
     * that both the worker's occupancy and the batch's arrival include it. */
    stall_time turn = 0;
    if (t->workers > 0) {
        int w = t->workers, pf = t->prefetch > 0 ? t->prefetch : 2;
        /* An exact sum: the streaming path (stream.c) adds in file order. */
        __int128 tsum = 0;
        size_t tn = 0;
        for (int e = 0; e < ne; e++)
            for (int r = 0; r < g; r++)
                for (int64_t k = 0; k + w < n; k++) {
                    size_t i = stall_tidy_at(t, e, r, k), j = stall_tidy_at(t, e, r, k + w);
                    int64_t from = k + w - (int64_t)pf * w; /* the yield that dispatched k+W */
                    stall_time disp = from >= 0 ? t->ready[stall_tidy_at(t, e, r, from)] : 0;
                    if (disp <= t->fetch_end[i] && t->fetch_start[j] >= t->fetch_end[i]) {
                        tsum += t->fetch_start[j] - t->fetch_end[i];
                        tn++;
                    }
                }
        turn = tn ? (stall_time)llround((double)tsum / (double)tn) : 0;
    }
    m->turnaround = turn;
    stall_time *startups = stall_xmalloc(cells * sizeof *startups);
    stall_time *hand = stall_xmalloc(cells * sizeof *hand);
    size_t nstart = 0, nhand = 0;
    double fetch_sum = 0;
    stall_time prev_end = 0;
    for (int e = 0; e < ne; e++) {
        stall_time e0 = t->epoch_start[(size_t)e * g], elast = e0;
        for (int r = 1; r < g; r++) {
            stall_time es = t->epoch_start[(size_t)e * g + r];
            e0 = es < e0 ? es : e0;
            if (es > elast) {
                elast = es;
                m->start_last[e] = r;
            }
        }
        m->start_spread_s[e] = stall_ns_to_s(elast - e0);
        /* (on clocks of their own, a start on another clock is no late one) */
        for (int r = 0; r < g && !t->clocks_unaligned; r++) {
            m->late[(size_t)e * g + r] = t->epoch_start[(size_t)e * g + r] - e0;
            m->late_any |= m->late[(size_t)e * g + r] > 0;
        }
        m->gap[e] = e > 0 ? e0 - prev_end : 0;
        if (m->gap[e] < 0)
            m->gap[e] = 0;
        double stall_sum = 0;
        stall_time tk = 0;
        for (int64_t k = 0; k < n; k++) {
            /* T(k): when the slowest rank asks for the next batch (the loop's
             * bookkeeping after the optimizer step is part of the iteration). */
            tk = 0;
            stall_time ymax = 0, cemax = 0, smax = 0;
            for (int r = 0; r < g; r++) {
                size_t i = stall_tidy_at(t, e, r, k);
                stall_time next =
                    k + 1 < n ? t->request[stall_tidy_at(t, e, r, k + 1)] : t->iter_end[i];
                /* A checkpoint after the epoch's last iteration belongs to it. */
                if (k + 1 == n && t->ckpt_end && t->ckpt_start[i] >= 0 && t->ckpt_end[i] > next)
                    next = t->ckpt_end[i];
                tk = next > tk ? next : tk;
                ymax = t->ready[i] > ymax ? t->ready[i] : ymax;
                stall_time ce = t->compute_end ? t->compute_end[i] : 0;
                cemax = ce > cemax ? ce : cemax;
                /* The first batch is waited for from the epoch's start
                 * (iter(loader) starts the workers): the model's Q(r,0) = e0
                 * (docs/model.md 2.2 and 5). */
                stall_time q = k == 0 ? e0 : t->request[i];
                stall_time st = t->ready[i] - q;
                smax = st > smax ? st : smax;
            }
            stall_sum += stall_ns_to_s(smax);
            /* A recorded checkpoint is the model's own (docs/model.md 2.5):
             * its time comes out of the tail (or, without compute_end, the
             * compute) and comes back through [checkpoint]. */
            stall_time ck = measured_ckpt(t, m, e, k);
            for (int r = 0; r < g; r++) {
                size_t i = stall_tidy_at(t, e, r, k);
                size_t o = ((size_t)e * g + r) * (size_t)n + (size_t)k;
                m->fetch[o] = t->fetch_end[i] - t->fetch_start[i] + turn;
                fetch_sum += stall_ns_to_s(m->fetch[o]);
                m->epoch_fetch_s[e] += stall_ns_to_s(m->fetch[o]);
                m->epoch_fetch_var[e] += stall_ns_to_s(m->fetch[o]) * stall_ns_to_s(m->fetch[o]);
                m->compute[o] = t->compute_end ? t->compute_end[i] - t->ready[i] : tk - ymax;
                if (!t->compute_end)
                    m->compute[o] = m->compute[o] > ck ? m->compute[o] - ck : 0;
                stall_time fe = t->fetch_end[i] + turn;
                stall_time arrived = fe > t->request[i] ? fe : t->request[i];
                hand[nhand++] = t->ready[i] - arrived > 0 ? t->ready[i] - arrived : 0;
                /* Start-up: the first W batches of each epoch, of epoch 0
                 * only when the workers persist (later epochs reuse them). */
                /* From the rank's own start: a rank that began late starts
                 * that late in the model too (m->late). */
                if (t->workers > 0 && k < t->workers && t->worker[i] >= 0 &&
                    (!persistent || e == 0)) {
                    stall_time es = t->epoch_start[(size_t)e * g + r];
                    startups[nstart++] = t->fetch_start[i] - es > 0 ? t->fetch_start[i] - es : 0;
                }
            }
            stall_time a = t->compute_end ? tk - cemax - ck : 0;
            m->tail[(size_t)e * n + k] = a > 0 ? a : 0;
        }
        prev_end = tk;
        m->epoch_fetch_s[e] /= (double)g * (double)n;
        m->epoch_fetch_var[e] = fmax(0.0, m->epoch_fetch_var[e] / ((double)g * (double)n) -
                                              m->epoch_fetch_s[e] * m->epoch_fetch_s[e]);
        m->epoch_s[e] = stall_ns_to_s(tk - e0);
        m->stall_s[e] = stall_sum / (double)n;
    }
    m->late_wide = stall_measured_late_epoch(m, 0.05) >= 0;
    m->startup = stall_median_time(startups, nstart);
    /* The mean, not the median: per-batch hand-over costs add up over the
     * epoch, and the occasional slow one (a page fault, a descheduled
     * process) is part of the measured time. */
    double hsum = 0;
    for (size_t i = 0; i < nhand; i++)
        hsum += (double)hand[i];
    m->handover = nhand ? (stall_time)llround(hsum / (double)nhand) : 0;
    /* and per epoch (hand[] holds the epochs' g x n in order): a cold epoch
     * hands its batches over slower (docs/model.md 2.4) */
    size_t per = nhand / (size_t)ne;
    for (int e = 0; per > 0 && nhand == per * (size_t)ne && e < ne; e++) {
        double es = 0;
        for (size_t i = (size_t)e * per; i < (size_t)(e + 1) * per; i++)
            es += (double)hand[i];
        m->handover_epoch[e] = (stall_time)llround(es / (double)per);
    }
    if (nhand != per * (size_t)ne || per == 0) {
        free(m->handover_epoch);
        m->handover_epoch = NULL;
    }
    m->mean_fetch_s = fetch_sum / (double)cells;
    measured_ckpt_finish(t, m);
    stall_measured_read_above(m);
    stall_measured_cpu_from(&t->cpu, m);
    free(startups);
    free(hand);
    return 0;
}

double stall_measured_mean_epoch(const stall_measured *m)
{
    double s = 0;
    for (int e = 0; e < m->epochs; e++)
        s += m->epoch_s[e];
    return s / m->epochs;
}

int stall_measured_late_epoch(const stall_measured *m, double share)
{
    int w = -1;
    for (int e = 0; m->late_any && m->start_spread_s && e < m->epochs; e++)
        if (m->start_spread_s[e] > share * m->epoch_s[e] &&
            (w < 0 || m->start_spread_s[e] > m->start_spread_s[w]))
            w = e;
    return w;
}

/* ---- the notebook's dsanalyzer traces ---- */

int stall_measured_vote(const int *w, int g, int *agree)
{
    int best = w[0], best_n = 0;
    for (int r = 0; r < g; r++) {
        int c = 0;
        for (int q = 0; q < g; q++)
            c += w[q] == w[r];
        if (c > best_n || (c == best_n && w[r] < best)) {
            best = w[r];
            best_n = c;
        }
    }
    if (agree)
        *agree = best_n;
    return best;
}

int stall_measured_infer_workers(const stall_tidy_trace *t, int *agree)
{
    int g = t->ranks;
    int64_t n = t->batches;
    int *w = stall_xcalloc((size_t)g, sizeof *w);
    for (int r = 0; r < g; r++) {
        int64_t k = 1;
        stall_time first_end = t->fetch_end[stall_tidy_at(t, 0, r, 0)];
        for (; k < n; k++) {
            size_t i = stall_tidy_at(t, 0, r, k);
            if (t->fetch_start[i] >= first_end)
                break;
            if (t->fetch_end[i] < first_end)
                first_end = t->fetch_end[i];
        }
        w[r] = k > INT32_MAX ? INT32_MAX : (int)k;
    }
    int best = stall_measured_vote(w, g, agree);
    free(w);
    return best;
}

int stall_measured_from_dsanalyzer(const stall_ds_trace *d, int workers, int prefetch,
                                   stall_measured *m, stall_err *err)
{
    stall_tidy_trace *t = stall_ds_to_tidy(d, -1);
    t->prefetch = prefetch > 0 ? prefetch : 2;
    /* The notebook measures no compute end; the model's compute is the
     * estimate of stall_ds_compute (docs/model.md 2.4). */
    size_t cells = d->rows * (size_t)d->gpus;
    t->compute_end = stall_xmalloc(cells * sizeof *t->compute_end);
    for (size_t i = 0; i < cells; i++)
        t->compute_end[i] =
            t->ready[i] + stall_ds_compute(d, i / (size_t)d->gpus, (int)(i % (size_t)d->gpus));
    int from = STALL_WORKERS_GIVEN;
    int shown = stall_measured_infer_workers(t, NULL);
    if (workers < 0) {
        workers = shown;
        from = STALL_WORKERS_INFERRED;
    }
    stall_ds_tidy_workers(t, workers);
    int rc = stall_measured_from_tidy(t, m, err);
    if (rc == 0) {
        m->workers_from = from;
        /* a count the starts allow but do not show (a multiple): said */
        m->workers_shown = from == STALL_WORKERS_GIVEN && shown != workers ? shown : 0;
    }
    stall_tidy_free(t);
    return rc;
}

void stall_measured_read_above(stall_measured *m)
{
    if (!m->epoch_fetch_s || m->epochs < 1)
        return;
    free(m->read_above);
    m->read_above = stall_xcalloc((size_t)m->epochs, sizeof *m->read_above);
    int fast = 0;
    for (int e = 1; e < m->epochs; e++)
        if (m->epoch_fetch_s[e] < m->epoch_fetch_s[fast])
            fast = e;
    double sum = 0, nf = (double)m->ranks * (double)m->batches;
    for (int e = 0; e < m->epochs; e++) {
        double above = m->epoch_fetch_s[e] - m->epoch_fetch_s[fast];
        /* A read shows where the epoch's mean fetch exceeds the fastest's by
         * more than twice the standard error of the difference (docs/model.md
         * 2.3): less is the fetches' own spread, not a read. */
        if (m->epoch_fetch_var) {
            double se = sqrt((m->epoch_fetch_var[e] + m->epoch_fetch_var[fast]) / nf);
            if (!(above > 2 * se))
                above = 0;
        }
        m->read_above[e] = stall_s_to_ns(above);
        sum += above;
    }
    m->read_above_mean = stall_s_to_ns(sum / m->epochs);
}

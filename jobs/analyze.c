/*
 * analyze.c - where the time of a run went (stall/analyze.h, docs/model.md
 * section 8).
 *
 * Per rank r, epoch e, iteration k, with Q = request, Y = ready, E = fetch
 * end, CE = compute_end, next = the rank's next request (iter_end for the
 * last batch), the interval [epoch_start, last iter_end] is cut into parts
 * that add up exactly:
 *   k = 0:  start-up    = Y - epoch_start (worker start-up and the first fetch)
 *   k > 0:  data        = clamp(E - Q, 0, Y - Q),  hand-over = (Y - Q) - data
 *   all k:  compute     = CE - Y
 *           barrier     = min(next - CE, max_r' CE(r') - CE)
 *           post        = next - CE - barrier (all-reduce, optimizer, loop)
 * Without compute_end (dsanalyzer traces) CE is taken as Y: the barrier is
 * then the wait for the other ranks' data and compute holds everything else.
 *
 * Barrier waits are charged to their cause: in each iteration the last rank
 * s to reach the barrier made the others wait; its lateness against the
 * mean of the other ranks is split into input (longer stall) and compute
 * (longer compute), and the others' waits are shared out in proportion.
 * Time O(rows log rows) (percentiles, slowest batches), memory O(rows).
 * The outputs of an analysis: analyze_out.c; its sources in the tidy shape
 * (an INI or a trace of any format): analyze_load.c.
 */
#include "stall/analyze.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stall/measured.h"
#include "stall/io.h"
#include "stall/scenario.h"
#include "stall/validate.h"

#include "inputs.h"

const char *stall_verdict_name(stall_verdict v)
{
    switch (v) {
    case STALL_VERDICT_DATA:
        return "data-bound";
    case STALL_VERDICT_STRAGGLER:
        return "straggler-bound";
    case STALL_VERDICT_COMPUTE:
        return "compute-bound";
    case STALL_VERDICT_STARTUP:
        return "start-up-bound";
    }
    return "?";
}

void stall_analysis_free(stall_analysis *a)
{
    if (!a)
        return;
    free(a->rank);
    free(a->wk);
    free(a->checkpoint_s);
    free(a->io);
    free(a->epoch_time_s);
    memset(a, 0, sizeof *a);
}

static stall_time an_next(const stall_tidy_trace *t, int e, int r, int64_t k)
{
    return k + 1 < t->batches ? t->request[stall_tidy_at(t, e, r, k + 1)]
                              : t->iter_end[stall_tidy_at(t, e, r, k)];
}

/* Epoch e's start: the earliest rank's epoch_start. */
static stall_time an_e0(const stall_tidy_trace *t, int e)
{
    stall_time e0 = t->epoch_start[(size_t)e * t->ranks];
    for (int r = 1; r < t->ranks; r++)
        e0 = t->epoch_start[(size_t)e * t->ranks + r] < e0
                 ? t->epoch_start[(size_t)e * t->ranks + r]
                 : e0;
    return e0;
}

static stall_time an_arrive(const stall_tidy_trace *t, size_t i)
{
    return t->compute_end ? t->compute_end[i] : t->ready[i];
}

static int an_cmp_slow(const void *pa, const void *pb)
{
    const stall_an_slow *a = pa, *b = pb;
    if (a->iteration_s != b->iteration_s)
        return a->iteration_s > b->iteration_s ? -1 : 1;
    if (a->epoch != b->epoch)
        return a->epoch < b->epoch ? -1 : 1;
    return a->batch < b->batch ? -1 : (a->batch > b->batch);
}

/* Per rank parts and the charging of barrier waits. */
static void an_ranks(const stall_tidy_trace *t, stall_analysis *a, double *wait_input,
                     double *wait_compute, double *wait_start)
{
    int g = t->ranks;
    for (int e = 0; e < t->epochs; e++) {
        for (int r = 0; r < g; r++) {
            size_t last = stall_tidy_at(t, e, r, t->batches - 1);
            a->rank[r].total_s += stall_ns_to_s(t->iter_end[last] - t->epoch_start[e * g + r]);
        }
        for (int64_t k = 0; k < t->batches; k++) {
            stall_time latest = 0;
            int s = 0, at_latest = 0;
            for (int r = 0; r < g; r++) {
                stall_time ar = an_arrive(t, stall_tidy_at(t, e, r, k));
                if (r == 0 || ar > latest) {
                    latest = ar;
                    s = r;
                    at_latest = 1;
                } else if (ar == latest) {
                    at_latest++;
                }
            }
            double sumw = 0, oth_stall = 0, oth_comp = 0;
            for (int r = 0; r < g; r++) {
                size_t i = stall_tidy_at(t, e, r, k);
                stall_an_rank *ar = &a->rank[r];
                stall_time q = t->request[i], y = t->ready[i], ce = an_arrive(t, i);
                stall_time nx = an_next(t, e, r, k);
                if (k == 0) {
                    ar->startup_s += stall_ns_to_s(y - t->epoch_start[e * g + r]);
                } else {
                    stall_time st = y - q, dw = t->fetch_end[i] - q;
                    dw = dw < 0 ? 0 : (dw > st ? st : dw);
                    ar->data_s += stall_ns_to_s(dw);
                    if (!t->fetch_unknown)
                        ar->handover_s += stall_ns_to_s(st - dw);
                }
                ar->compute_s += stall_ns_to_s(ce - y);
                stall_time rem = nx - ce > 0 ? nx - ce : 0;
                stall_time w = latest - ce < rem ? latest - ce : rem;
                if (t->clocks_unaligned)
                    w = 0; /* unknown: the wait stays in post (compute) */
                ar->barrier_s += stall_ns_to_s(w);
                if (t->compute_end && t->ckpt_start && t->ckpt_start[i] >= 0) {
                    /* A recorded checkpoint after the barrier is its own part. */
                    stall_time ck = t->ckpt_end[i] - t->ckpt_start[i];
                    ck = ck < rem - w ? ck : rem - w;
                    ar->ckpt_s += stall_ns_to_s(ck);
                    ar->post_s -= stall_ns_to_s(ck);
                }
                if (t->compute_end)
                    ar->post_s += stall_ns_to_s(rem - w);
                else
                    ar->compute_s += stall_ns_to_s(rem - w); /* all-reduce inside */
                /* nx < ce cannot happen in a checked trace; keep the parts summing. */
                if (nx < ce)
                    ar->post_s += stall_ns_to_s(nx - ce);
                if (r != s) {
                    sumw += stall_ns_to_s(w);
                    oth_stall += stall_ns_to_s(y - q);
                    oth_comp += stall_ns_to_s(ce - y);
                }
            }
            if (g < 2 || t->clocks_unaligned) {
                *wait_input += sumw;
                continue;
            }
            size_t si = stall_tidy_at(t, e, s, k);
            double din = stall_ns_to_s(t->ready[si] - t->request[si]) - oth_stall / (g - 1);
            if (k == 0) {
                /* The first batch: the last rank's lateness before its
                 * compute is its start (a late start, its workers' start-up,
                 * its first fetch), counted from the earliest rank's start. */
                stall_time e0 = an_e0(t, e);
                double oth_start = 0;
                for (int r = 0; r < g; r++)
                    if (r != s)
                        oth_start += stall_ns_to_s(t->ready[stall_tidy_at(t, e, r, 0)] - e0);
                din = stall_ns_to_s(t->ready[si] - e0) - oth_start / (g - 1);
            }
            double dc = stall_ns_to_s(an_arrive(t, si) - t->ready[si]) - oth_comp / (g - 1);
            din = din > 0 ? din : 0;
            dc = dc > 0 ? dc : 0;
            double fc = din + dc > 0 ? dc / (din + dc) : 0.5;
            if (k == 0) {
                *wait_start += (1 - fc) * sumw;
                *wait_compute += fc * sumw;
                continue;
            }
            a->rank[s].last++;
            a->rank[s].last_tied += at_latest > 1;
            if (at_latest - 1 > a->rank[s].last_tie_ranks)
                a->rank[s].last_tie_ranks = at_latest - 1;
            a->rank[s].caused_s += sumw;
            *wait_input += (1 - fc) * sumw;
            *wait_compute += fc * sumw;
        }
    }
}

static void an_workers(const stall_tidy_trace *t, stall_analysis *a, double epoch_sum)
{
    int g = t->ranks, w = a->workers;
    if (w <= 0 || t->fetch_unknown)
        return;
    a->nwk = g * w;
    a->wk = stall_xcalloc((size_t)a->nwk, sizeof *a->wk);
    size_t cap = (size_t)t->epochs * (size_t)t->batches;
    double *v = stall_xmalloc((cap ? cap : 1) * sizeof *v);
    for (int r = 0; r < g; r++)
        for (int wi = 0; wi < w; wi++) {
            stall_an_worker *x = &a->wk[r * w + wi];
            x->rank = r;
            x->worker = wi;
            size_t n = 0;
            for (int e = 0; e < t->epochs; e++)
                for (int64_t k = 0; k < t->batches; k++) {
                    size_t i = stall_tidy_at(t, e, r, k);
                    if (t->worker[i] == wi)
                        v[n++] = stall_ns_to_s(t->fetch_end[i] - t->fetch_start[i]);
                }
            x->batches = (int64_t)n;
            if (n == 0) {
                x->mean_fetch_s = x->p95_fetch_s = NAN;
                continue;
            }
            double sum = 0;
            for (size_t j = 0; j < n; j++)
                sum += v[j];
            gsl_sort(v, 1, n);
            x->mean_fetch_s = sum / (double)n;
            x->p95_fetch_s = gsl_stats_quantile_from_sorted_data(v, 1, n, 0.95);
            x->busy_share = epoch_sum > 0 ? sum / epoch_sum : NAN;
        }
    free(v);
}

/* Throughput over time: the run (epochs back to back, gaps left out) cut
 * into STALL_AN_WINDOWS windows of equal iteration counts, window i holding
 * iterations [i * total / n, (i + 1) * total / n); batches of all ranks per
 * second of the window. */
static void an_windows(const stall_tidy_trace *t, stall_analysis *a)
{
    int64_t total = (int64_t)t->epochs * t->batches;
    int nw = total < STALL_AN_WINDOWS ? (int)total : STALL_AN_WINDOWS;
    a->nwin = nw;
    double off = 0, prev = 0; /* run time before this epoch; end of the previous iteration */
    int64_t idx = 0;
    for (int e = 0; e < t->epochs; e++) {
        stall_time e0 = an_e0(t, e);
        double tt = off;
        for (int64_t k = 0; k < t->batches; k++, idx++) {
            /* From the epoch's start: the earliest rank's on one clock; on
             * clocks of their own each rank's from its own start (a time on
             * one rank's clock minus another's start would carry their
             * offset). */
            stall_time tk = INT64_MIN;
            for (int r = 0; r < t->ranks; r++) {
                stall_time nx = an_next(t, e, r, k);
                if (t->clocks_unaligned)
                    nx -= t->epoch_start[(size_t)e * t->ranks + r] - e0;
                tk = nx > tk ? nx : tk;
            }
            tt = off + stall_ns_to_s(tk - e0);
            int wi = (int)(idx * nw / total);
            if (idx == wi * total / nw)
                a->win_start_s[wi] = prev;
            a->win_end_s[wi] = tt;
            prev = tt;
        }
        off = tt;
    }
    for (int wi = 0; wi < nw; wi++) {
        int64_t nb = (wi + 1) * total / nw - wi * total / nw;
        double d = a->win_end_s[wi] - a->win_start_s[wi];
        a->win_batches_s[wi] = d > 0 ? (double)(nb * t->ranks) / d : NAN;
    }
}

static void an_slowest(const stall_tidy_trace *t, stall_analysis *a)
{
    size_t n = (size_t)t->epochs * (size_t)t->batches;
    stall_an_slow *all = stall_xmalloc(n * sizeof *all);
    size_t m = 0;
    for (int e = 0; e < t->epochs; e++)
        for (int64_t k = 0; k < t->batches; k++) {
            stall_an_slow s = {.epoch = t->epoch0 + e, .batch = k, .rank = 0};
            stall_time best = -1;
            for (int r = 0; r < t->ranks; r++) {
                size_t i = stall_tidy_at(t, e, r, k);
                double it = stall_ns_to_s(an_next(t, e, r, k) - t->request[i]);
                s.iteration_s = it > s.iteration_s ? it : s.iteration_s;
                if (t->ready[i] - t->request[i] > best) {
                    best = t->ready[i] - t->request[i];
                    s.rank = r;
                    s.worker = t->worker[i];
                    s.stall_s = stall_ns_to_s(best);
                    s.fetch_s =
                        t->fetch_unknown ? NAN : stall_ns_to_s(t->fetch_end[i] - t->fetch_start[i]);
                }
            }
            all[m++] = s;
        }
    qsort(all, m, sizeof *all, an_cmp_slow);
    a->nslow = m < STALL_AN_SLOWEST ? (int)m : STALL_AN_SLOWEST;
    memcpy(a->slow, all, (size_t)a->nslow * sizeof *all);
    free(all);
}

/* The verdict: the largest loss (data, straggler, start-up) when it takes at
 * least STALL_AN_LOSS of the ranks' time, else compute-bound (docs/model.md
 * section 8 says why). */
static void an_verdict(stall_analysis *a)
{
    double s[4] = {a->share_data, a->share_straggler, a->share_compute, a->share_startup};
    int best = STALL_VERDICT_DATA;
    if (s[STALL_VERDICT_STRAGGLER] > s[best])
        best = STALL_VERDICT_STRAGGLER;
    if (s[STALL_VERDICT_STARTUP] > s[best])
        best = STALL_VERDICT_STARTUP;
    if (s[best] < STALL_AN_LOSS)
        best = STALL_VERDICT_COMPUTE;
    a->verdict = (stall_verdict)best;
    char strag[512] = "";
    const stall_an_rank *sr = a->straggler >= 0 ? &a->rank[a->straggler] : NULL;
    /* Named only when it was last at all; its cause only when it has one. */
    if (sr && sr->last > 0 && sr->last_tied == sr->last && sr->last_tie_ranks >= a->ranks - 1) {
        snprintf(strag, sizeof strag,
                 "; all %d ranks reach the barrier together in every iteration (no straggler)",
                 a->ranks);
    } else if (sr && sr->last > 0) {
        char tied[160] = "";
        /* Equally slow ranks reach the barrier at the same instant: the
         * lowest index is named, and how often and with how many is said. */
        if (sr->last_tied > 0 && sr->last_tie_ranks >= a->ranks - 1)
            snprintf(tied, sizeof tied,
                     ", tied with all %d other ranks in %.0f%% of those (no rank is slower: the "
                     "lowest index is named)",
                     a->ranks - 1, 100.0 * (double)sr->last_tied / (double)sr->last);
        else if (sr->last_tied > 0)
            snprintf(tied, sizeof tied,
                     ", tied with %s%d other rank%s in %.0f%% of those (equally slow ranks: the "
                     "lowest index is named)",
                     sr->last_tie_ranks > 1 ? "up to " : "", sr->last_tie_ranks,
                     sr->last_tie_ranks > 1 ? "s" : "",
                     100.0 * (double)sr->last_tied / (double)sr->last);
        char why[48] = "";
        if (a->straggler_compute_s > 0 || a->straggler_input_s > 0)
            snprintf(why, sizeof why, " (%s)",
                     a->straggler_compute_s > a->straggler_input_s ? "compute-bound: longer compute"
                                                                   : "input-bound: longer stalls");
        double share =
            (double)sr->last / (double)((int64_t)a->epochs * (a->batches > 1 ? a->batches - 1 : 1));
        /* Last no more than twice as often as chance among equal ranks
         * gives: no slow rank, the waits come from each iteration's spread. */
        char chance[200] = "";
        if (a->ranks >= 3 && share < 2.0 / a->ranks)
            snprintf(chance, sizeof chance,
                     ", about as often as chance gives each of %d equal ranks (%.1f%%): no rank "
                     "is persistently last, the barrier waits come from the spread of each "
                     "iteration's times",
                     a->ranks, 100.0 / a->ranks);
        snprintf(strag, sizeof strag,
                 "; rank %d is last at the barrier in %.0f%% of iterations%s%s%s", a->straggler,
                 100.0 * share, tied, why, chance);
    }
    char ckpt[64] = "";
    if (a->share_checkpoint > 0)
        snprintf(ckpt, sizeof ckpt, ", %.0f%% writes checkpoints", 100 * a->share_checkpoint);
    char barrier[160];
    if (isnan(a->share_straggler))
        snprintf(barrier, sizeof barrier,
                 "the waits at the barrier for a slower rank are unknown (the ranks' clocks are "
                 "not aligned; they are inside the next share)");
    else
        snprintf(barrier, sizeof barrier, "%.0f%% waits at the barrier for a slower rank",
                 100 * a->share_straggler);
    char late[160] = "";
    if (a->late_rank >= 0)
        snprintf(late, sizeof late,
                 " (with the others' wait for rank %d, which began epoch %d %.3f s after the "
                 "first)",
                 a->late_rank, a->epoch0 + a->late_epoch, a->late_s);
    snprintf(a->sentence, sizeof a->sentence,
             "%s: %.0f%% of the ranks' time waits for data, %s, %.0f%% computes (incl. "
             "all-reduce), %.0f%% is epoch start-up%s%s%s",
             stall_verdict_name(a->verdict), 100 * a->share_data, barrier, 100 * a->share_compute,
             100 * a->share_startup, late, ckpt, strag);
}

void stall_analyze(const stall_tidy_trace *t, stall_analysis *a)
{
    memset(a, 0, sizeof *a);
    a->ranks = t->ranks;
    a->epochs = t->epochs;
    a->batches = t->batches;
    a->have_compute_end = t->compute_end != NULL;
    a->fetch_unknown = t->fetch_unknown;
    a->clocks_unaligned = t->clocks_unaligned && t->ranks > 1;
    a->no_workers = t->workers == 0;
    a->straggler = -1;
    a->ckpt_inside = t->compute_end && t->ckpt_start;
    if (t->checkpoint_s) {
        size_t nc = (size_t)t->epochs * (size_t)t->ranks;
        a->checkpoint_s = stall_xmalloc(nc * sizeof *a->checkpoint_s);
        memcpy(a->checkpoint_s, t->checkpoint_s, nc * sizeof *a->checkpoint_s);
    }
    /* Workers: the trace's column, else the largest id + 1. */
    int maxw = -1;
    size_t cells = (size_t)t->epochs * (size_t)t->batches * (size_t)t->ranks;
    for (size_t i = 0; i < cells; i++)
        maxw = t->worker[i] > maxw ? t->worker[i] : maxw;
    a->workers = t->workers > 0 ? t->workers : maxw + 1;
    a->rank = stall_xcalloc((size_t)t->ranks, sizeof *a->rank);
    double win = 0, wcomp = 0, wstart = 0;
    an_ranks(t, a, &win, &wcomp, &wstart);
    /* The widest start spread beyond 5% of its epoch (the earliest start to
     * the latest iter_end), as validate says it. */
    a->late_rank = -1;
    for (int e = 0; e < t->epochs && t->ranks > 1 && !t->clocks_unaligned; e++) {
        int g = t->ranks, last = 0;
        stall_time lo = an_e0(t, e), hi = lo, end = 0;
        for (int r = 0; r < g; r++) {
            stall_time es = t->epoch_start[(size_t)e * g + r];
            stall_time ie = t->iter_end[stall_tidy_at(t, e, r, t->batches - 1)];
            if (es > hi) {
                hi = es;
                last = r;
            }
            end = ie > end ? ie : end;
        }
        double sp = stall_ns_to_s(hi - lo);
        if (sp > 0.05 * stall_ns_to_s(end - lo) && sp > a->late_s) {
            a->late_s = sp;
            a->late_rank = last;
            a->late_epoch = e;
        }
    }
    double tot = 0, data = 0, comp = 0, start = 0, epoch_sum = 0, ckpt = 0;
    for (int r = 0; r < t->ranks; r++) {
        stall_an_rank *x = &a->rank[r];
        if (t->fetch_unknown)
            x->handover_s = NAN; /* inside data: the trace cannot tell them apart */
        else
            data += x->handover_s;
        tot += x->total_s;
        data += x->data_s;
        comp += x->compute_s + x->post_s;
        start += x->startup_s;
        ckpt += x->ckpt_s;
    }
    epoch_sum = tot / t->ranks;
    if (tot > 0) {
        a->share_data = (data + win) / tot;
        a->share_straggler = a->clocks_unaligned ? NAN : wcomp / tot;
        a->share_compute = comp / tot;
        a->share_startup = (start + wstart) / tot;
        a->share_checkpoint = ckpt / tot;
    }
    for (int r = 0; r < t->ranks && a->clocks_unaligned; r++)
        a->rank[r].barrier_s = NAN;
    if (t->ranks > 1 && !a->clocks_unaligned) {
        int s = 0;
        for (int r = 1; r < t->ranks; r++)
            if (a->rank[r].caused_s > a->rank[s].caused_s)
                s = r;
        a->straggler = s;
        /* The straggler's lateness by cause, over the iterations it was last. */
        for (int e = 0; e < t->epochs; e++)
            for (int64_t k = 1; k < t->batches; k++) {
                stall_time latest = 0;
                int last = 0;
                for (int r = 0; r < t->ranks; r++) {
                    stall_time ar = an_arrive(t, stall_tidy_at(t, e, r, k));
                    if (r == 0 || ar > latest) {
                        latest = ar;
                        last = r;
                    }
                }
                if (last != s)
                    continue;
                double os = 0, oc = 0;
                for (int r = 0; r < t->ranks; r++)
                    if (r != s) {
                        size_t i = stall_tidy_at(t, e, r, k);
                        os += stall_ns_to_s(t->ready[i] - t->request[i]);
                        oc += stall_ns_to_s(an_arrive(t, i) - t->ready[i]);
                    }
                size_t i = stall_tidy_at(t, e, s, k);
                a->straggler_input_s +=
                    stall_ns_to_s(t->ready[i] - t->request[i]) - os / (t->ranks - 1);
                a->straggler_compute_s +=
                    stall_ns_to_s(an_arrive(t, i) - t->ready[i]) - oc / (t->ranks - 1);
            }
    }
    stall_analyze_causes(t, a); /* storage reads, checkpoints per epoch */
    an_workers(t, a, epoch_sum);
    an_windows(t, a);
    an_slowest(t, a);
    an_verdict(a);
}

/* ---- a simulated run in the tidy shape ---- */

void stall_an_params(void *ctx, const stall_model_params *p)
{
    stall_an_recorder *c = ctx;
    c->ranks = p->ranks;
    c->workers = p->workers;
}

void stall_an_record(void *ctx, const stall_iter_record *rec)
{
    stall_an_recorder *c = ctx;
    if (!c->t) {
        c->t = stall_xcalloc(1, sizeof *c->t);
        c->t->workers = c->workers;
        c->t->prefetch = c->t->pin_memory = c->t->persistent = -1;
        c->t->path = stall_xstrdup("(simulated)");
    }
    stall_tidy_trace *t = c->t;
    t->ranks = c->ranks;
    int g = t->ranks;
    size_t need = (size_t)(c->rows + 1) * (size_t)g;
    if (need > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : (size_t)g * 256;
        t->fetch_start = stall_xrealloc(t->fetch_start, cap * sizeof *t->fetch_start);
        t->fetch_end = stall_xrealloc(t->fetch_end, cap * sizeof *t->fetch_end);
        t->request = stall_xrealloc(t->request, cap * sizeof *t->request);
        t->ready = stall_xrealloc(t->ready, cap * sizeof *t->ready);
        t->iter_end = stall_xrealloc(t->iter_end, cap * sizeof *t->iter_end);
        t->compute_end = stall_xrealloc(t->compute_end, cap * sizeof *t->compute_end);
        t->worker = stall_xrealloc(t->worker, cap * sizeof *t->worker);
        t->ckpt_start = stall_xrealloc(t->ckpt_start, cap * sizeof *t->ckpt_start);
        t->ckpt_end = stall_xrealloc(t->ckpt_end, cap * sizeof *t->ckpt_end);
        t->ckpt_bytes = stall_xrealloc(t->ckpt_bytes, cap * sizeof *t->ckpt_bytes);
        c->cap = cap;
    }
    if (rec->batch == 0) {
        t->epochs = rec->epoch + 1;
        t->epoch_start =
            stall_xrealloc(t->epoch_start, (size_t)t->epochs * (size_t)g * sizeof *t->epoch_start);
        for (int r = 0; r < g; r++)
            t->epoch_start[(size_t)rec->epoch * g + r] =
                rec->rank_start ? rec->rank_start[r] : rec->epoch_start;
    }
    if (rec->epoch == 0)
        t->batches = rec->batch + 1;
    size_t base = (size_t)c->rows * (size_t)g;
    for (int r = 0; r < g; r++) {
        size_t i = base + (size_t)r;
        /* a rank asks for its first batch when it begins the epoch */
        t->request[i] = rec->batch == 0 ? t->epoch_start[(size_t)rec->epoch * g + r] : c->last_end;
        t->ready[i] = rec->ready[r];
        t->compute_end[i] = rec->ready[r] + rec->compute[r];
        t->iter_end[i] = rec->iter_end;
        t->fetch_start[i] = rec->fetch_start[r];
        t->fetch_end[i] = rec->fetch_end[r];
        t->worker[i] = c->workers > 0 ? (int32_t)(rec->fetched[r] % c->workers) : -1;
        /* The loop's wait for a checkpoint ends the iteration (model.md 2.5). */
        t->ckpt_start[i] = rec->ckpt_wait > 0 ? rec->iter_end - rec->ckpt_wait : -1;
        t->ckpt_end[i] = rec->ckpt_wait > 0 ? rec->iter_end : -1;
        t->ckpt_bytes[i] = 0;
    }
    c->ckpt = c->ckpt || rec->ckpt_wait > 0;
    c->last_end = rec->iter_end;
    c->rows++;
}

stall_tidy_trace *stall_an_recorder_take(stall_an_recorder *r)
{
    stall_tidy_trace *t = r->t;
    r->t = NULL;
    if (t && (t->batches <= 0 || (int64_t)t->epochs * t->batches != r->rows)) {
        stall_tidy_free(t); /* a run that stopped half-way */
        t = NULL;
    }
    if (t && !r->ckpt) {
        free(t->ckpt_start);
        free(t->ckpt_end);
        free(t->ckpt_bytes);
        t->ckpt_start = t->ckpt_end = NULL;
        t->ckpt_bytes = NULL;
    }
    if (t)
        stall_tidy_ckpt_sums(t);
    return t;
}

/* ---- stallsim analyze ---- */

int stall_analyze_job(const char *path, const char *outdir, int workers, FILE *term, stall_err *err)
{
    stall_tidy_trace *t = NULL;
    stall_an_src *src = stall_xcalloc(1, sizeof *src); /* src->given: where [trace] workers
                                                          gave the count ("": not) */
    int rc = stall_an_load_src(path, workers, &t, src, err);
    if (rc) {
        free(src);
        return rc;
    }
    const char *given = src->given;
    int format = src->format;
    /* The format from the INI's [trace] as from the trace itself
     * (stall_an_load_src refused --workers for a tidy one). */
    bool tidy = format == STALL_FORMAT_TIDY;
    bool json = t->summary != NULL; /* a Kineto or dftracer trace */
    /* A dsanalyzer trace without --workers: the count its fetch starts
     * show, as validate infers it (it said "0 workers per rank"). */
    bool inferred = false;
    if (workers <= 0 && !given[0] && !tidy && !json) {
        int w = stall_measured_infer_workers(t, NULL);
        if (w > 0) {
            stall_tidy_free(t);
            t = NULL;
            rc = stall_an_load(path, w, &t, err);
            if (rc) {
                free(src);
                return rc;
            }
            workers = w;
            inferred = true;
        }
    }
    stall_analysis a;
    stall_analyze(t, &a);
    /* A Kineto or dftracer trace's count given is its run's, no worker ids
     * assigned (it has none). */
    a.workers_inferred = workers > 0 || (given[0] && !tidy && !json && a.workers > 0);
    char *dir = outdir ? stall_xstrdup(outdir) : stall_an_default_outdir(path);
    char *named = stall_an_default_outdir(path); /* results/analyze-<input> */
    snprintf(a.input, sizeof a.input, "%s", named + strlen("results/analyze-"));
    free(named);
    const char *label = "measured";
    rc = stall_analysis_write(&a, &label, 1, dir, err);
    if (rc == 0 && term) {
        if (t->summary)
            fputs(t->summary, term);
        char wk[48];
        if (a.workers <= 0 && t->fetch_unknown)
            snprintf(wk, sizeof wk, "workers unknown");
        else
            snprintf(wk, sizeof wk, "%d workers per rank", a.workers);
        char gave[sizeof src->given + 32];
        snprintf(gave, sizeof gave, " (%s%s)", a.workers_inferred ? "round robin, " : "", given);
        char how[112]; /* an INI's own key beside the option */
        snprintf(how, sizeof how,
                 " (inferred from the fetch starts, round robin; %s--workers N says otherwise)",
                 stall_an_is_ini(path) ? "[trace] workers or " : "");
        fprintf(term, "stallsim %s: analyze %s: %d ranks x %d epochs x %lld batches, %s%s\n",
                stall_version(), path, a.ranks, a.epochs, (long long)a.batches, wk,
                inferred             ? how
                : given[0]           ? gave
                : a.workers_inferred ? " (round robin, as given)"
                : tidy               ? " (the trace's worker column)"
                                     : "");
        if (src->left[0])
            fprintf(term, "left out (analyze reads what the trace recorded): %s\n", src->left);
        stall_analysis_print(&a, &label, 1, term);
        fprintf(term,
                "results in %s/ (analyze.csv, per_rank.csv, per_worker.csv, windows.csv, "
                "slowest.csv%s%s)\n",
                dir, a.checkpoint_s ? ", checkpoint.csv" : "", a.io ? ", storage.csv" : "");
    }
    free(dir);
    free(src);
    stall_analysis_free(&a);
    stall_tidy_free(t);
    return rc;
}

/* ---- stallsim run/validate --analyze --timeline ---- */

/* What run and validate --analyze --timeline write into the job's work
 * folder before it is committed (stall_run_opts.before_commit), so that the
 * analysis is part of the result folder, whole or absent with it: an
 * interrupt during the analysis left the new run committed beside no
 * analysis, the earlier one deleted. */
typedef struct an_observed {
    const stall_config *cfg;
    stall_an_recorder rec;
    bool comparable, analyze, done;
    const char *timeline;
    const stall_tl_opts *tl;
    stall_analysis a[2];
    int n;
} an_observed;

static int an_before_commit(void *ctx, const char *work, stall_err *err)
{
    an_observed *ob = ctx;
    stall_tidy_trace *sim = stall_an_recorder_take(&ob->rec);
    int rc =
        sim ? 0 : stall_err_set(err, STALL_EINTERNAL, "the simulated run recorded no iteration");
    if (rc == 0 && ob->timeline)
        rc = stall_timeline_export_with(sim, ob->tl, ob->timeline, work, err);
    if (rc == 0 && ob->analyze) {
        ob->n = 1;
        stall_analyze(sim, &ob->a[0]);
        /* The measured run beside it only where the two can be compared:
         * summary.csv's rule (vs_measured_pct), which plot follows too. */
        if (ob->cfg->format != STALL_FORMAT_NONE && ob->comparable) {
            stall_tidy_trace *meas = NULL;
            bool rr = false;
            rc = stall_an_load_measured(ob->cfg, &meas, &rr, err);
            if (rc == 0) {
                stall_analyze(meas, &ob->a[1]);
                ob->a[1].workers_inferred = rr;
                ob->n = 2;
            }
            stall_tidy_free(meas);
        }
        const char *labels[2] = {"simulated", "measured"};
        if (rc == 0)
            rc = stall_analysis_write(ob->a, labels, ob->n, work, err);
    }
    ob->done = rc == 0;
    stall_tidy_free(sim);
    return rc;
}

int stall_run_observed(const stall_config *cfg, const stall_run_opts *opts, bool analyze,
                       bool validate, const char *timeline, const stall_tl_opts *tl, stall_err *err)
{
    if (!validate && cfg->mode != STALL_MODE_MODEL)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [scenario] mode: --analyze and --timeline on run need mode = "
                             "model (replay and seed simulate no workers); for the measured "
                             "trace use stallsim analyze / stallsim timeline",
                             cfg->ini_path);
    an_observed *ob = stall_xcalloc(1, sizeof *ob);
    ob->cfg = cfg;
    ob->analyze = analyze;
    ob->timeline = timeline;
    ob->tl = tl;
    stall_run_opts o = *opts;
    o.comparable = &ob->comparable;
    o.on_params = stall_an_params;
    o.on_iter = stall_an_record;
    o.observer = &ob->rec;
    o.before_commit = an_before_commit;
    o.before_commit_ctx = ob;
    int rc = validate ? stall_validate(cfg, &o, err) : stall_scenario_run(cfg, &o, err);
    stall_tidy_free(ob->rec.t);
    if (rc == 0 && !ob->done)
        rc = stall_err_set(err, STALL_EINTERNAL, "the simulated run wrote no result folder");
    /* The job's own folder: validate's is results/<name>-validate. */
    char *dir = validate ? stall_validate_outdir(cfg, opts) : stall_job_outdir(cfg, opts);
    if (rc == 0 && analyze && opts->term) {
        const char *labels[2] = {"simulated", "measured"};
        bool ck = false, io = false;
        for (int j = 0; j < ob->n; j++) {
            ck = ck || ob->a[j].checkpoint_s;
            io = io || ob->a[j].io;
        }
        fputc('\n', opts->term);
        if (cfg->format != STALL_FORMAT_NONE && !ob->comparable)
            fputs("measured: left out: the what-if changes GPUs, batches or epochs, or the "
                  "trace's epochs are profiling windows that it starts empty, so the trace's run "
                  "is not comparable with it (stallsim analyze gives the trace's own)\n",
                  opts->term);
        stall_analysis_print(ob->a, labels, ob->n, opts->term);
        fprintf(opts->term,
                "analysis in %s/ (analyze.csv, per_rank.csv, per_worker.csv, windows.csv, "
                "slowest.csv%s%s)\n",
                dir, ck ? ", checkpoint.csv" : "", io ? ", storage.csv" : "");
    }
    if (rc == 0 && timeline && opts->term)
        fprintf(opts->term, "timeline of the simulated run in %s (open in ui.perfetto.dev)\n",
                timeline);
    for (int j = 0; j < ob->n; j++)
        stall_analysis_free(&ob->a[j]);
    free(dir);
    free(ob);
    return rc;
}

/*
 * cpudemand.c - a trace's CPU columns (CPU time and run-queue wait beside
 * the wall times, tools/stallsim_capture.py) turned into the model's CPU
 * demand (docs/model.md 2.3, "CPU time from the trace"):
 *  - a fetch's CPU share: (mean fetch_cpu + mean turn_cpu) / mean D, D the
 *    measured fetch with the workers' turnaround (2.4); its wait share:
 *    mean fetch_wait / mean D;
 *  - the compute's: mean compute_cpu / mean C and mean compute_wait / mean C;
 *  - the hand-over's CPU work: mean next_cpu, at most the measured
 *    hand-over h, and its wait, at most what is left of h;
 *  - the tail's CPU work per rank: mean post_cpu, at most the mean measured
 *    tail A, and its wait, at most what is left of A; of it, the gradient
 *    all-reduce's (mean sync_cpu) scales with the ring's bytes per rank,
 *    2 (G - 1) / G of the gradients, when the what-if has G ranks for the
 *    trace's G0 > 1: tail_cpu + sync_cpu ((G-1)/G / ((G0-1)/G0) - 1).
 * Means over the rows of batch >= 1 (batch 0 carries the workers' start-up).
 * The shares and waits are clamped so that CPU + wait never exceed the wall
 * time they are part of.
 */
#include "feed.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static double cd_mean(const stall_tidy_cpu *c, int j)
{
    return c->n[j] ? c->sum[j] / (double)c->n[j] : 0.0;
}

static double cd_clamp01(double v)
{
    return !(v > 0.0) ? 0.0 : v > 1.0 ? 1.0 : v;
}

void stall_measured_cpu_from(const stall_tidy_cpu *c, stall_measured *m)
{
    memset(&m->cpu, 0, sizeof m->cpu);
    if (!c->has)
        return;
    stall_measured_cpu *o = &m->cpu;
    o->has = true;
    o->cores = c->cores;
    if (c->ranks_per_node > 0 && c->ranks_per_node < m->ranks)
        m->ranks_per_node = c->ranks_per_node;
    /* Mean D, C and A over batches >= 1 (ns). */
    double dsum = 0, csum = 0, asum = 0;
    size_t n = 0, na = 0;
    for (int e = 0; e < m->epochs; e++) {
        for (int64_t k = 1; k < m->batches; k++) {
            for (int r = 0; r < m->ranks; r++) {
                size_t i =
                    ((size_t)e * (size_t)m->ranks + (size_t)r) * (size_t)m->batches + (size_t)k;
                dsum += (double)m->fetch[i];
                csum += (double)m->compute[i];
                n++;
            }
            asum += (double)m->tail[(size_t)e * (size_t)m->batches + (size_t)k];
            na++;
        }
    }
    double d = n ? dsum / (double)n : 0, cc = n ? csum / (double)n : 0,
           a = na ? asum / (double)na : 0;
    if (d > 0) {
        o->fetch_share =
            cd_clamp01((cd_mean(c, STALL_TIDY_CPU_FETCH) + cd_mean(c, STALL_TIDY_CPU_TURN)) / d);
        o->demand.fetch_wait_share =
            fmin(cd_clamp01(cd_mean(c, STALL_TIDY_CPU_FETCH_WAIT) / d), 1.0 - o->fetch_share);
    }
    if (cc > 0) {
        o->compute_share = cd_clamp01(cd_mean(c, STALL_TIDY_CPU_COMPUTE) / cc);
        o->demand.compute_wait_share =
            fmin(cd_clamp01(cd_mean(c, STALL_TIDY_CPU_COMPUTE_WAIT) / cc), 1.0 - o->compute_share);
    }
    double h = (double)m->handover;
    double hc = fmin(cd_mean(c, STALL_TIDY_CPU_NEXT), h);
    o->demand.handover_cpu = llround(hc);
    o->demand.handover_wait = llround(fmin(cd_mean(c, STALL_TIDY_CPU_NEXT_WAIT), h - hc));
    double tc = fmin(cd_mean(c, STALL_TIDY_CPU_POST), a);
    o->demand.tail_cpu = llround(tc);
    o->sync_cpu = llround(fmin(cd_mean(c, STALL_TIDY_CPU_SYNC), tc));
    o->demand.tail_wait = llround(fmin(cd_mean(c, STALL_TIDY_CPU_POST_WAIT), a - tc));
}

bool wi_cpu_trace(const wi_whatif *what, const stall_measured *m, bool whatif,
                  stall_model_params *p)
{
    if (!whatif || !m || !m->cpu.has)
        return false;
    const stall_measured_cpu *c = &m->cpu;
    if (!what->cores_given)
        p->cores = c->cores;
    if (p->cores <= 0)
        return false;
    if (!what->cpu_share_given)
        p->cpu_share = c->fetch_share;
    if (!what->compute_cpu_share_given)
        p->compute_cpu_share = c->compute_share;
    p->cpu = c->demand;
    /* The ring all-reduce: each of G ranks sends and receives 2 (G - 1) / G
     * of the gradients, so its CPU work scales with (G - 1) / G (a trace of
     * one rank shows no all-reduce to scale). */
    if (m->ranks > 1 && p->ranks != m->ranks) {
        double ring = ((double)(p->ranks - 1) / p->ranks) / ((double)(m->ranks - 1) / m->ranks);
        p->cpu.tail_cpu += llround((double)c->sync_cpu * (ring - 1.0));
    }
    return true;
}

void wi_cpu_waits_scale(stall_model_params *p, double out)
{
    stall_cpu_demand *c = &p->cpu;
    c->fetch_wait_share *= out;
    c->compute_wait_share *= out;
    c->handover_wait = llround((double)c->handover_wait * out);
    c->tail_wait = llround((double)c->tail_wait * out);
}

/* The trace's own configuration simulated with the share `out` of its
 * waits taken out: the mean epoch. */
static int cd_sim(const wi_whatif *what, const stall_measured *m, wi_tables *w, double out,
                  double *epoch_s, stall_err *err)
{
    stall_model_params p;
    wi_params(what, m, true, &p);
    wi_cpu_waits_scale(&p, out);
    return wi_sim_params(&p, w, NULL, epoch_s, NULL, err);
}

/* A fingerprint of what the fit depends on: the decomposed trace (a plan
 * or sweep runs the same trace many times; the fit is kept per process). */
uint64_t wi_fnv(uint64_t h, const void *v, size_t n)
{
    const unsigned char *b = v;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t cd_key(const stall_measured *m)
{
    size_t cells = (size_t)m->epochs * (size_t)m->ranks * (size_t)m->batches;
    size_t iters = (size_t)m->epochs * (size_t)m->batches;
    uint64_t h = 14695981039346656037ull;
    int dims[5] = {m->ranks, m->epochs, m->workers, m->prefetch, m->ranks_per_node};
    h = wi_fnv(h, dims, sizeof dims);
    h = wi_fnv(h, &m->batches, sizeof m->batches);
    h = wi_fnv(h, &m->startup, sizeof m->startup);
    h = wi_fnv(h, &m->handover, sizeof m->handover);
    if (m->handover_epoch)
        h = wi_fnv(h, m->handover_epoch, (size_t)m->epochs * sizeof *m->handover_epoch);
    h = wi_fnv(h, &m->persistent, sizeof m->persistent);
    h = wi_fnv(h, &m->cpu, sizeof m->cpu);
    h = wi_fnv(h, m->fetch, cells * sizeof *m->fetch);
    h = wi_fnv(h, m->compute, cells * sizeof *m->compute);
    h = wi_fnv(h, m->tail, iters * sizeof *m->tail);
    if (m->late)
        h = wi_fnv(h, m->late, (size_t)m->epochs * (size_t)m->ranks * sizeof *m->late);
    return h;
}

static pthread_mutex_t cd_memo_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    bool set;
    uint64_t key;
    wi_cpu_fit fit;
} cd_memo;

int wi_cpu_waits_fit(const stall_measured *m, wi_cpu_fit *fit, stall_err *err)
{
    *fit = (wi_cpu_fit){.out = 1.0};
    if (!m->fetch || !m->compute || !m->tail)
        return 0; /* streamed: a trace with CPU columns is read whole (stream.c) */
    uint64_t key = cd_key(m);
    pthread_mutex_lock(&cd_memo_mu);
    bool hit = cd_memo.set && cd_memo.key == key;
    if (hit)
        *fit = cd_memo.fit;
    pthread_mutex_unlock(&cd_memo_mu);
    if (hit)
        return 0;
    wi_whatif what;
    wi_whatif_defaults(&what);
    stall_model_params p;
    wi_params(&what, m, true, &p);
    double meas = stall_measured_mean_epoch(m);
    if (p.cores <= 0 || !(meas > 0))
        return 0;
    wi_tables w = {0};
    int rc = wi_tables_build(&what, m, p.ranks, p.epochs, p.batches, true, &w, err);
    double hi = 1.0, lo = 0.0, e1 = 0, e0 = 0;
    if (rc == 0)
        rc = cd_sim(&what, m, &w, 1.0, &e1, err);
    if (rc == 0)
        rc = cd_sim(&what, m, &w, 0.0, &e0, err);
    if (rc == 0) {
        fit->all = e1 / meas - 1.0;
        fit->none = e0 / meas - 1.0;
        if (e1 >= meas)
            fit->out = 1.0; /* the sharing alone gives it back, or more */
        else if (e0 <= meas)
            fit->out = 0.0; /* even every wait kept falls short */
        else {
            for (int it = 0; it < 14 && rc == 0; it++) {
                double mid = 0.5 * (lo + hi), e;
                rc = cd_sim(&what, m, &w, mid, &e, err);
                if (e > meas)
                    lo = mid;
                else
                    hi = mid;
            }
            fit->out = 0.5 * (lo + hi);
        }
    }
    wi_tables_free(&w);
    if (rc == 0) {
        pthread_mutex_lock(&cd_memo_mu);
        cd_memo.set = true;
        cd_memo.key = key;
        cd_memo.fit = *fit;
        pthread_mutex_unlock(&cd_memo_mu);
    }
    return rc;
}

/*
 * The closed-loop model against an independent implementation of docs/model.md's
 * max-plus recurrence (the oracle below shares no code with models/model.c;
 * it even writes the fetch-align policies out again), on hundreds of random
 * configurations, plus targeted cases and configuration errors.
 *
 * The oracle computes, per epoch, batch by batch:
 *   D'(r,j)  = fetch align over r of fetch(e,r,j)
 *   Disp     = epoch start for j < P*W, else Y(r, j-P*W)  (in order)
 *   S(r,j)   = max(Disp, E(r,j-W) or worker ready), E = S + D'
 *   arrival  = E, or with pin: pinned one at a time in (E, j) order,
 *              max(E, previous pin end) + pin
 *   Y(r,k)   = max(Q, arrival, Y(r,k-1)) + handover
 *   T(k)     = max_r (Y + C) + A(k); Q(r,0) = epoch start, Q(r,k) = T(k-1)
 * Out of order, iteration k takes the earliest (arrival, j) batch handed
 * out, and the refill goes to that batch's worker. With W = 0 the fetch
 * starts at Q.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stall/model.h"

#define MS INT64_C(1000000)

/* ---- duration tables ------------------------------------------------------ */

typedef struct tab {
    int g, epochs;
    int64_t n;
    stall_time *fetch;   /* [(e * g + r) * n + j] */
    stall_time *compute; /* [(e * g + r) * n + k] */
    stall_time *tail;    /* [e * n + k] */
    stall_time *gap;     /* [e] */
    stall_time *late;    /* NULL or [e * g + r]: rank r's late start in epoch e */
} tab;

static stall_time tab_fetch(void *ctx, int e, int r, int64_t j)
{
    const tab *t = ctx;
    return t->fetch[((size_t)e * t->g + r) * t->n + j];
}

static stall_time tab_compute(void *ctx, int e, int r, int64_t k)
{
    const tab *t = ctx;
    return t->compute[((size_t)e * t->g + r) * t->n + k];
}

static stall_time tab_tail(void *ctx, int e, int64_t k)
{
    const tab *t = ctx;
    return t->tail[(size_t)e * t->n + k];
}

static stall_time tab_gap(void *ctx, int e)
{
    const tab *t = ctx;
    return t->gap[e];
}

static stall_time tab_late(void *ctx, int e, int r)
{
    const tab *t = ctx;
    return t->late[(size_t)e * t->g + r];
}

static void tab_alloc(tab *t, int g, int64_t n, int epochs)
{
    t->late = NULL;
    t->g = g;
    t->n = n;
    t->epochs = epochs;
    size_t cells = (size_t)epochs * g * n;
    t->fetch = calloc(cells, sizeof(stall_time));
    t->compute = calloc(cells, sizeof(stall_time));
    t->tail = calloc((size_t)epochs * n, sizeof(stall_time));
    t->gap = calloc((size_t)epochs, sizeof(stall_time));
}

static void tab_free(tab *t)
{
    free(t->fetch);
    free(t->compute);
    free(t->tail);
    free(t->gap);
    free(t->late);
}

static stall_durations tab_durations(tab *t)
{
    return (stall_durations){.fetch = tab_fetch,
                             .compute = tab_compute,
                             .tail = tab_tail,
                             .epoch_gap = tab_gap,
                             .late_start = t->late ? tab_late : NULL,
                             .ctx = t};
}

#define TF(t, e, r, j) (t)->fetch[((size_t)(e) * (t)->g + (r)) * (t)->n + (j)]
#define TC(t, e, r, k) (t)->compute[((size_t)(e) * (t)->g + (r)) * (t)->n + (k)]

/* ---- what the model reported ---------------------------------------------- */

typedef struct got {
    int g;
    int64_t count, cap;
    stall_iter_record *rec; /* scalar fields; array pointers cleared */
    stall_time *y, *c, *s, *e, *stall;
    int64_t *b;
} got;

static void got_init(got *o, int g, int64_t cap)
{
    memset(o, 0, sizeof *o);
    o->g = g;
    o->cap = cap;
    o->rec = calloc((size_t)cap, sizeof *o->rec);
    size_t cells = (size_t)cap * g;
    o->y = calloc(cells, sizeof(stall_time));
    o->c = calloc(cells, sizeof(stall_time));
    o->s = calloc(cells, sizeof(stall_time));
    o->e = calloc(cells, sizeof(stall_time));
    o->stall = calloc(cells, sizeof(stall_time));
    o->b = calloc(cells, sizeof(int64_t));
}

static void got_free(got *o)
{
    free(o->rec);
    free(o->y);
    free(o->c);
    free(o->s);
    free(o->e);
    free(o->stall);
    free(o->b);
}

static void got_record(void *ctx, const stall_iter_record *rec)
{
    got *o = ctx;
    if (o->count >= o->cap) {
        o->count++;
        return;
    }
    size_t i = (size_t)o->count++;
    o->rec[i] = *rec;
    size_t row = i * o->g;
    memcpy(o->y + row, rec->ready, o->g * sizeof(stall_time));
    memcpy(o->c + row, rec->compute, o->g * sizeof(stall_time));
    memcpy(o->s + row, rec->fetch_start, o->g * sizeof(stall_time));
    memcpy(o->e + row, rec->fetch_end, o->g * sizeof(stall_time));
    memcpy(o->stall + row, rec->stall, o->g * sizeof(stall_time));
    memcpy(o->b + row, rec->fetched, o->g * sizeof(int64_t));
    o->rec[i].stall = o->rec[i].ready = o->rec[i].compute = NULL;
    o->rec[i].fetch_start = o->rec[i].fetch_end = NULL;
    o->rec[i].fetched = NULL;
}

/* ---- the oracle ------------------------------------------------------------ */

typedef struct orc {
    stall_time *t, *q, *a;     /* [e * n + k] */
    stall_time *y, *s, *e, *c; /* [(e * n + k) * g + r] */
    int64_t *b;
} orc;

static stall_time omax(stall_time a, stall_time b)
{
    return a > b ? a : b;
}

static void orc_align(int policy, const stall_time *in, int g, stall_time *out)
{
    stall_time v = in[0];
    if (policy == STALL_ALIGN_MIN) {
        for (int r = 1; r < g; r++)
            v = in[r] < v ? in[r] : v;
    } else if (policy == STALL_ALIGN_AVG) {
        int64_t sum = 0;
        for (int r = 0; r < g; r++)
            sum += in[r];
        v = (sum + g / 2) / g;
    }
    for (int r = 0; r < g; r++)
        out[r] = policy == STALL_ALIGN_NONE ? in[r] : v;
}

static void oracle(const stall_model_params *p, const tab *t, orc *o)
{
    int g = p->ranks, w = p->workers;
    int64_t n = p->batches, pw = (int64_t)p->prefetch * w;
    size_t cells = (size_t)p->epochs * n * g;
    o->t = calloc((size_t)p->epochs * n, sizeof(stall_time));
    o->q = calloc((size_t)p->epochs * n, sizeof(stall_time));
    o->a = calloc((size_t)p->epochs * n, sizeof(stall_time));
    o->y = calloc(cells, sizeof(stall_time));
    o->s = calloc(cells, sizeof(stall_time));
    o->e = calloc(cells, sizeof(stall_time));
    o->c = calloc(cells, sizeof(stall_time));
    o->b = calloc(cells, sizeof(int64_t));

    /* Per rank, per batch index j (or iteration k). */
    size_t rn = (size_t)g * n;
    stall_time *D = calloc(rn, sizeof(stall_time)), *S = calloc(rn, sizeof(stall_time));
    stall_time *E = calloc(rn, sizeof(stall_time)), *ARR = calloc(rn, sizeof(stall_time));
    stall_time *Y = calloc(rn, sizeof(stall_time));
    char *pinned = calloc(rn, 1), *taken = calloc(rn, 1);
    int *worker = calloc(rn, sizeof(int));
    int64_t *known = calloc((size_t)g, sizeof(int64_t)), *send = calloc((size_t)g, sizeof(int64_t));
    stall_time *pinfree = calloc((size_t)g, sizeof(stall_time));
    stall_time *rready = calloc((size_t)g, sizeof(stall_time));
    stall_time *wfree = calloc((size_t)g * (w > 0 ? w : 1), sizeof(stall_time));
    stall_time *raw = calloc((size_t)g, sizeof(stall_time)),
               *al = calloc((size_t)g, sizeof(stall_time));
#define AT(arr, r, j) (arr)[(size_t)(r)*n + (j)]

    stall_time prev_end = 0;
    for (int ep = 0; ep < p->epochs; ep++) {
        stall_time t0 = prev_end + t->gap[ep];
        stall_time ready = t0 + (w > 0 && (!p->persistent_workers || ep == 0) ? p->startup : 0);
        for (int64_t j = 0; j < n; j++) {
            for (int r = 0; r < g; r++)
                raw[r] = TF(t, ep, r, j);
            orc_align(p->fetch_align, raw, g, al);
            for (int r = 0; r < g; r++)
                AT(D, r, j) = al[r];
        }
        memset(pinned, 0, rn);
        memset(taken, 0, rn);
        for (int r = 0; r < g; r++) {
            /* a rank that starts late: its workers (with W = 0 its first
             * fetch) count from its own start */
            rready[r] = ready + (t->late ? t->late[(size_t)ep * g + r] : 0);
            known[r] = 0;
            pinfree[r] = INT64_MIN;
            for (int x = 0; x < (w > 0 ? w : 1); x++)
                wfree[(size_t)r * (w > 0 ? w : 1) + x] = rready[r];
            if (w > 0 && !p->in_order) {
                send[r] = n < pw ? n : pw;
                for (int64_t j = 0; j < send[r]; j++) {
                    int x = (int)(j % w);
                    stall_time *wf = &wfree[(size_t)r * w + x];
                    AT(worker, r, j) = x;
                    AT(S, r, j) = omax(t0, *wf);
                    AT(E, r, j) = AT(S, r, j) + AT(D, r, j);
                    *wf = AT(E, r, j);
                }
            }
        }
        for (int64_t k = 0; k < n; k++) {
            size_t it = (size_t)ep * n + k;
            stall_time q = k == 0 ? t0 : o->t[it - 1];
            stall_time bar = INT64_MIN;
            for (int r = 0; r < g; r++) {
                stall_time yprev = k == 0 ? q : AT(Y, r, k - 1);
                int64_t took = k;
                stall_time arr;
                if (w == 0) {
                    AT(S, r, k) = omax(q, rready[r]);
                    AT(E, r, k) = AT(S, r, k) + AT(D, r, k);
                    arr = AT(E, r, k) + p->pin;
                } else if (p->in_order) {
                    int64_t lim = k + pw < n ? k + pw : n;
                    for (; known[r] < lim; known[r]++) {
                        int64_t j = known[r];
                        stall_time disp = j < pw ? t0 : AT(Y, r, j - pw);
                        stall_time prev = j >= w ? AT(E, r, j - w) : rready[r];
                        AT(S, r, j) = omax(disp, prev);
                        AT(E, r, j) = AT(S, r, j) + AT(D, r, j);
                    }
                    if (p->pin == 0) {
                        AT(ARR, r, k) = AT(E, r, k);
                    } else {
                        while (!AT(pinned, r, k)) {
                            int64_t best = -1;
                            for (int64_t j = 0; j < known[r]; j++)
                                if (!AT(pinned, r, j) && (best < 0 || AT(E, r, j) < AT(E, r, best)))
                                    best = j;
                            AT(ARR, r, best) = omax(AT(E, r, best), pinfree[r]) + p->pin;
                            pinfree[r] = AT(ARR, r, best);
                            AT(pinned, r, best) = 1;
                        }
                    }
                    arr = AT(ARR, r, k);
                } else {
                    int64_t best = -1;
                    for (int64_t j = 0; j < send[r]; j++)
                        if (!AT(taken, r, j) && (best < 0 || AT(E, r, j) < AT(E, r, best)))
                            best = j;
                    arr = p->pin == 0 ? AT(E, r, best) : omax(AT(E, r, best), pinfree[r]) + p->pin;
                    pinfree[r] = arr;
                    AT(taken, r, best) = 1;
                    took = best;
                }
                stall_time y = omax(omax(q, arr), yprev) + p->handover;
                AT(Y, r, k) = y;
                if (w > 0 && !p->in_order && send[r] < n) {
                    int64_t j = send[r]++;
                    int x = AT(worker, r, took);
                    stall_time *wf = &wfree[(size_t)r * w + x];
                    AT(worker, r, j) = x;
                    AT(S, r, j) = omax(y, *wf);
                    AT(E, r, j) = AT(S, r, j) + AT(D, r, j);
                    *wf = AT(E, r, j);
                }
                stall_time c = TC(t, ep, r, k);
                size_t cell = it * g + r;
                o->y[cell] = y;
                o->c[cell] = c;
                o->s[cell] = AT(S, r, took);
                o->e[cell] = AT(E, r, took);
                o->b[cell] = took;
                bar = omax(bar, y + c);
            }
            o->q[it] = q;
            o->a[it] = t->tail[it];
            o->t[it] = bar + t->tail[it];
        }
        prev_end = o->t[(size_t)ep * n + n - 1];
    }
#undef AT
    free(D);
    free(S);
    free(E);
    free(ARR);
    free(Y);
    free(pinned);
    free(taken);
    free(worker);
    free(known);
    free(send);
    free(pinfree);
    free(rready);
    free(wfree);
    free(raw);
    free(al);
}

static void orc_free(orc *o)
{
    free(o->t);
    free(o->q);
    free(o->a);
    free(o->y);
    free(o->s);
    free(o->e);
    free(o->c);
    free(o->b);
}

/* ---- random configurations -------------------------------------------------- */

static stall_time rnd_dur(gsl_rng *rng, int style, double median_ms)
{
    switch (style) {
    case 0: /* continuous lognormal, ns resolution */
        return (stall_time)(gsl_ran_lognormal(rng, log(median_ms * 1e6), 0.5));
    case 1: /* whole milliseconds, many ties and zeros */
        return (stall_time)gsl_rng_uniform_int(rng, (unsigned long)(2 * median_ms) + 1) * MS;
    case 2: /* whole 10 ms: even more ties */
        return (stall_time)gsl_rng_uniform_int(rng, (unsigned long)(median_ms / 5) + 1) * 10 * MS;
    default: /* constant */
        return (stall_time)(median_ms * MS);
    }
}

static void random_case(gsl_rng *rng, stall_model_params *p, tab *t)
{
    stall_model_defaults(p);
    p->ranks = 1 + (int)gsl_rng_uniform_int(rng, 8);
    p->gpus_per_node = 1 + (int)gsl_rng_uniform_int(rng, (unsigned long)p->ranks);
    p->workers = (int)gsl_rng_uniform_int(rng, 7);
    p->prefetch = 1 + (int)gsl_rng_uniform_int(rng, 4);
    p->in_order = gsl_rng_uniform_int(rng, 2) == 0;
    p->persistent_workers = gsl_rng_uniform_int(rng, 2) == 0;
    p->batches = 1 + (int64_t)gsl_rng_uniform_int(rng, 40);
    p->epochs = 1 + (int)gsl_rng_uniform_int(rng, 3);
    int style = (int)gsl_rng_uniform_int(rng, 4);
    if (gsl_rng_uniform_int(rng, 2))
        p->startup = rnd_dur(rng, style, 20);
    if (gsl_rng_uniform_int(rng, 3) == 0)
        p->pin = 1 + rnd_dur(rng, style, 2);
    if (gsl_rng_uniform_int(rng, 2))
        p->handover = rnd_dur(rng, style, 1.4);
    p->fetch_align = (stall_align)gsl_rng_uniform_int(rng, 3);

    tab_alloc(t, p->ranks, p->batches, p->epochs);
    double fetch_ms = 5 + 200 * gsl_rng_uniform(rng); /* loading-bound or compute-bound */
    double compute_ms = 5 + 100 * gsl_rng_uniform(rng);
    int slow =
        gsl_rng_uniform_int(rng, 2) ? (int)gsl_rng_uniform_int(rng, (unsigned long)p->ranks) : -1;
    double slow_f = 2 + 4 * gsl_rng_uniform(rng);
    bool slow_compute = gsl_rng_uniform_int(rng, 2);
    if (gsl_rng_uniform_int(rng, 3) == 0) { /* ranks that start an epoch late */
        t->late = calloc((size_t)p->epochs * p->ranks, sizeof *t->late);
        for (size_t i = 0; i < (size_t)p->epochs * p->ranks; i++)
            t->late[i] = gsl_rng_uniform_int(rng, 2) ? rnd_dur(rng, style, 60) : 0;
    }
    for (int e = 0; e < p->epochs; e++) {
        t->gap[e] = gsl_rng_uniform_int(rng, 2) ? rnd_dur(rng, style, 50) : 0;
        for (int64_t k = 0; k < p->batches; k++) {
            t->tail[(size_t)e * p->batches + k] =
                gsl_rng_uniform_int(rng, 2) ? rnd_dur(rng, style, 3) : 0;
            for (int r = 0; r < p->ranks; r++) {
                double ff = r == slow && !slow_compute ? slow_f : 1.0;
                double cf = r == slow && slow_compute ? slow_f : 1.0;
                TF(t, e, r, k) = rnd_dur(rng, style, fetch_ms * ff);
                TC(t, e, r, k) = rnd_dur(rng, style, compute_ms * cf);
            }
        }
    }
}

static void describe(char *buf, size_t size, const stall_model_params *p)
{
    snprintf(buf, size,
             "G=%d gpn=%d W=%d P=%d in_order=%d persistent=%d N=%" PRId64
             " epochs=%d startup=%" PRId64 " pin=%" PRId64 " handover=%" PRId64 " align=%s",
             p->ranks, p->gpus_per_node, p->workers, p->prefetch, p->in_order,
             p->persistent_workers, p->batches, p->epochs, p->startup, p->pin, p->handover,
             stall_align_name(p->fetch_align));
}

/* Runs the model and the oracle on one configuration and compares every
 * number; returns the number of iterations compared. */
static int64_t compare_case(int id, const stall_model_params *p, tab *t)
{
    char what[272];
    describe(what, sizeof what - 16, p);
    if (t->late)
        strcat(what, " late ranks");
    int64_t iters = (int64_t)p->epochs * p->batches;
    int g = p->ranks;
    got o;
    got_init(&o, g, iters);
    stall_durations d = tab_durations(t);
    stall_err err = {0};
    stall_model_stats stats;
    int rc = stall_model_run(p, &d, got_record, &o, &stats, &err);
    cr_assert_eq(rc, 0, "case %d (%s): run failed: %d %s", id, what, rc, err.msg);
    cr_assert_eq(o.count, iters, "case %d (%s): %" PRId64 " records, expected %" PRId64, id, what,
                 o.count, iters);
    cr_assert_eq(stats.iterations, iters, "case %d: stats.iterations %" PRId64, id,
                 stats.iterations);
    orc x;
    oracle(p, t, &x);
    for (int64_t i = 0; i < iters; i++) {
        const stall_iter_record *rec = &o.rec[i];
        int e = (int)(i / p->batches);
        int64_t k = i % p->batches;
        cr_assert(rec->epoch == e && rec->batch == k,
                  "case %d (%s): record %" PRId64 " is (%d,%" PRId64 "), expected (%d,%" PRId64 ")",
                  id, what, i, rec->epoch, rec->batch, e, k);
        cr_assert_eq(rec->iter_end, x.t[i],
                     "case %d (%s): T(e=%d,k=%" PRId64 ") model %" PRId64 " oracle %" PRId64, id,
                     what, e, k, rec->iter_end, x.t[i]);
        cr_assert_eq(rec->iter_time, x.t[i] - x.q[i], "case %d: iter_time %" PRId64, id,
                     rec->iter_time);
        cr_assert_eq(rec->tail, x.a[i], "case %d: tail", id);
        stall_time smax = INT64_MIN, smin = INT64_MAX, wmax = INT64_MIN;
        stall_time fmin = INT64_MAX, fmax = INT64_MIN, s0min = INT64_MAX, s0max = INT64_MIN;
        for (int r = 0; r < g; r++) {
            size_t c = i * g + r;
            cr_assert_eq(o.b[c], x.b[c],
                         "case %d (%s): e=%d k=%" PRId64 " rank %d took batch %" PRId64
                         ", oracle %" PRId64,
                         id, what, e, k, r, o.b[c], x.b[c]);
            cr_assert_eq(o.y[c], x.y[c],
                         "case %d (%s): Y(e=%d,r=%d,k=%" PRId64 ") model %" PRId64
                         " oracle %" PRId64,
                         id, what, e, r, k, o.y[c], x.y[c]);
            cr_assert_eq(o.s[c], x.s[c],
                         "case %d (%s): S(e=%d,r=%d,k=%" PRId64 ") model %" PRId64
                         " oracle %" PRId64,
                         id, what, e, r, k, o.s[c], x.s[c]);
            cr_assert_eq(o.e[c], x.e[c],
                         "case %d (%s): E(e=%d,r=%d,k=%" PRId64 ") model %" PRId64
                         " oracle %" PRId64,
                         id, what, e, r, k, o.e[c], x.e[c]);
            cr_assert_eq(o.c[c], x.c[c], "case %d: C", id);
            stall_time st = x.y[c] - x.q[i];
            cr_assert_eq(o.stall[c], st, "case %d: stall(r=%d) model %" PRId64 " oracle %" PRId64,
                         id, r, o.stall[c], st);
            stall_time w = x.t[i] - x.a[i] - (x.y[c] + x.c[c]);
            cr_assert_geq(w, 0, "case %d: negative barrier wait %" PRId64, id, w);
            smax = omax(smax, st);
            smin = st < smin ? st : smin;
            wmax = omax(wmax, w);
            stall_time f = x.e[c] - x.s[c];
            fmax = omax(fmax, f);
            fmin = f < fmin ? f : fmin;
            s0max = omax(s0max, x.s[c]);
            s0min = x.s[c] < s0min ? x.s[c] : s0min;
        }
        cr_assert_eq(rec->stall_max, smax, "case %d: stall_max", id);
        cr_assert_eq(rec->stall_train, smax,
                     "case %d: every iteration synchronises: the "
                     "training stall is max_r stall",
                     id);
        cr_assert_eq(rec->stall_min, smin, "case %d: stall_min", id);
        cr_assert_eq(rec->delay, smax - smin, "case %d: delay", id);
        cr_assert_eq(rec->wait_max, wmax, "case %d: wait_max %" PRId64 " vs %" PRId64, id,
                     rec->wait_max, wmax);
        cr_assert_eq(rec->fetch_spread, fmax - fmin, "case %d: fetch_spread", id);
        cr_assert_eq(rec->start_spread, s0max - s0min, "case %d: start_spread", id);
    }
    cr_assert_eq(stats.end, x.t[iters - 1], "case %d: stats.end", id);
    orc_free(&x);
    got_free(&o);
    return iters;
}

static void run_random(unsigned long seed, int cases, int force_in_order)
{
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    int64_t iters = 0;
    int pinned = 0, ooo = 0, zero_w = 0, late = 0;
    for (int i = 0; i < cases; i++) {
        stall_model_params p;
        tab t;
        random_case(rng, &p, &t);
        if (force_in_order >= 0)
            p.in_order = force_in_order;
        pinned += p.pin > 0;
        ooo += !p.in_order && p.workers > 0;
        zero_w += p.workers == 0;
        late += t.late != NULL;
        iters += compare_case(i, &p, &t);
        tab_free(&t);
    }
    /* The pin rule (one pin thread per rank, arrival order) has no real
     * trace behind it (no CUDA on the capture machine): this oracle is
     * what holds it, so a good share of the cases must pin. */
    cr_assert(pinned * 5 >= cases, "only %d of %d random cases pin", pinned, cases);
    /* and the late start (docs/model.md 2.4) likewise */
    cr_assert(late * 5 >= cases, "only %d of %d random cases start ranks late", late, cases);
    cr_log_info("%d random configurations (%d with pin, %d out of order, %d with W = 0, %d with "
                "late ranks), %" PRId64 " iterations, all equal to the oracle",
                cases, pinned, ooo, zero_w, late, iters);
    gsl_rng_free(rng);
}

Test(model, in_order_matches_closed_form_on_300_random_configs)
{
    run_random(20240601, 300, 1);
}

Test(model, out_of_order_matches_closed_form_on_300_random_configs)
{
    run_random(7771, 300, 0);
}

Test(model, mixed_matches_closed_form_on_200_random_configs)
{
    run_random(99, 200, -1);
}

/* ---- targeted cases ------------------------------------------------------------ */

static int run_tab(const stall_model_params *p, tab *t, got *o, stall_err *err)
{
    got_init(o, p->ranks, (int64_t)p->epochs * p->batches);
    stall_durations d = tab_durations(t);
    return stall_model_run(p, &d, got_record, o, NULL, err);
}

Test(model, one_rank_one_worker_is_sum_of_max_fetch_and_compute)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 1;
    p.prefetch = 1;
    p.batches = 6;
    tab t;
    tab_alloc(&t, 1, 6, 1);
    stall_time f[6] = {30, 10, 50, 20, 20, 5}, c[6] = {20, 40, 10, 20, 30, 10};
    for (int k = 0; k < 6; k++) {
        TF(&t, 0, 0, k) = f[k] * MS;
        TC(&t, 0, 0, k) = c[k] * MS;
    }
    got o;
    stall_err err = {0};
    cr_assert_eq(run_tab(&p, &t, &o, &err), 0, "%s", err.msg);
    /* Batch k+1 is handed out when k is taken, so its fetch overlaps the
     * compute of k: T = D0 + sum max(D(k+1), C(k)) + C(last). */
    stall_time expect = f[0];
    for (int k = 0; k + 1 < 6; k++)
        expect += f[k + 1] > c[k] ? f[k + 1] : c[k];
    expect += c[5];
    cr_assert_eq(o.rec[5].iter_end, expect * MS,
                 "epoch end %" PRId64 " ns, expected %" PRId64 " ms", o.rec[5].iter_end, expect);
    got_free(&o);
    tab_free(&t);
}

Test(model, zero_workers_load_at_request_without_overlap)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 0;
    p.prefetch = 0; /* ignored without workers */
    p.batches = 4;
    p.handover = 1 * MS;
    tab t;
    tab_alloc(&t, 1, 4, 1);
    stall_time expect = 0;
    for (int k = 0; k < 4; k++) {
        TF(&t, 0, 0, k) = (10 + k) * MS;
        TC(&t, 0, 0, k) = 7 * MS;
        expect += (10 + k + 1 + 7) * MS;
    }
    got o;
    stall_err err = {0};
    cr_assert_eq(run_tab(&p, &t, &o, &err), 0, "%s", err.msg);
    cr_assert_eq(o.rec[3].iter_end, expect, "epoch end %" PRId64 ", expected %" PRId64,
                 o.rec[3].iter_end, expect);
    cr_assert_eq(o.stall[2], 13 * MS, "stall of batch 2 = %" PRId64, o.stall[2]);
    got_free(&o);
    tab_free(&t);
}

Test(model, slow_rank_delays_everyone_at_the_barrier)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 4;
    p.gpus_per_node = 4;
    p.workers = 1;
    p.prefetch = 1;
    p.batches = 5;
    tab t;
    tab_alloc(&t, 4, 5, 1);
    for (int r = 0; r < 4; r++)
        for (int k = 0; k < 5; k++) {
            TF(&t, 0, r, k) = (r == 2 ? 100 : 10) * MS;
            TC(&t, 0, r, k) = 5 * MS;
        }
    got o;
    stall_err err = {0};
    cr_assert_eq(run_tab(&p, &t, &o, &err), 0, "%s", err.msg);
    for (int k = 1; k < 5; k++) {
        const stall_iter_record *rec = &o.rec[k];
        /* The slow rank needs 100 ms per batch and its fetch starts when it
         * takes the previous batch: 100 ms per iteration for everyone. The
         * fast ranks' batches are long there, so they lose 95 ms at the
         * barrier instead of stalling. */
        cr_assert_eq(rec->iter_time, 100 * MS, "iteration %d took %" PRId64, k, rec->iter_time);
        cr_assert_eq(rec->stall_max, 95 * MS, "iteration %d: slow rank stall %" PRId64, k,
                     rec->stall_max);
        cr_assert_eq(rec->stall_min, 0, "iteration %d: fast ranks stall %" PRId64, k,
                     rec->stall_min);
        cr_assert_eq(rec->delay, 95 * MS, "iteration %d: delay %" PRId64, k, rec->delay);
        cr_assert_eq(rec->wait_max, 95 * MS, "iteration %d: fast ranks wait %" PRId64, k,
                     rec->wait_max);
        cr_assert_float_eq(rec->wait_mean_s, 0.07125, 1e-12, "wait mean %g", rec->wait_mean_s);
    }
    got_free(&o);
    tab_free(&t);
}

static void hol_case(bool in_order, got *o)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 2;
    p.prefetch = 1;
    p.batches = 2;
    p.in_order = in_order;
    tab t;
    tab_alloc(&t, 1, 2, 1);
    TF(&t, 0, 0, 0) = 100 * MS;
    TF(&t, 0, 0, 1) = 10 * MS;
    TC(&t, 0, 0, 0) = TC(&t, 0, 0, 1) = 1 * MS;
    stall_err err = {0};
    cr_assert_eq(run_tab(&p, &t, o, &err), 0, "%s", err.msg);
    tab_free(&t);
}

Test(model, in_order_blocks_on_head_of_line)
{
    got o;
    hol_case(true, &o);
    /* Batch 1 arrived at 10 ms but waits behind batch 0 (100 ms). */
    cr_assert_eq(o.b[0], 0, "first taken %" PRId64, o.b[0]);
    cr_assert_eq(o.stall[0], 100 * MS, "stall(0) = %" PRId64, o.stall[0]);
    cr_assert_eq(o.e[1], 10 * MS, "batch 1 arrived at %" PRId64, o.e[1]);
    cr_assert_eq(o.y[1], 101 * MS, "batch 1 taken at %" PRId64, o.y[1]);
    got_free(&o);
}

Test(model, out_of_order_takes_earliest_arrival)
{
    got o;
    hol_case(false, &o);
    cr_assert_eq(o.b[0], 1, "first taken %" PRId64 ", expected batch 1", o.b[0]);
    cr_assert_eq(o.y[0], 10 * MS, "first Y = %" PRId64, o.y[0]);
    cr_assert_eq(o.b[1], 0, "second taken %" PRId64, o.b[1]);
    cr_assert_eq(o.y[1], 100 * MS, "second Y = %" PRId64, o.y[1]);
    got_free(&o);
}

Test(model, no_prefetch_crosses_epoch_boundary)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 2;
    p.prefetch = 2;
    p.batches = 3;
    p.epochs = 2;
    tab t;
    tab_alloc(&t, 1, 3, 2);
    for (int e = 0; e < 2; e++)
        for (int k = 0; k < 3; k++) {
            TF(&t, e, 0, k) = 20 * MS;
            TC(&t, e, 0, k) = 50 * MS; /* long compute: plenty of time to prefetch */
        }
    t.gap[1] = 7 * MS;
    got o;
    stall_err err = {0};
    cr_assert_eq(run_tab(&p, &t, &o, &err), 0, "%s", err.msg);
    cr_assert_eq(o.stall[1], 0, "within the epoch batch 1 is ready: stall %" PRId64, o.stall[1]);
    cr_assert_eq(o.rec[3].epoch_start, o.rec[2].iter_end + 7 * MS,
                 "epoch 1 starts at %" PRId64 ", epoch 0 ended at %" PRId64, o.rec[3].epoch_start,
                 o.rec[2].iter_end);
    cr_assert_eq(o.stall[3], 20 * MS, "epoch 1 starts with an empty pipeline: stall %" PRId64,
                 o.stall[3]);
    cr_assert_eq(o.s[3], o.rec[3].epoch_start, "first fetch of epoch 1 starts at %" PRId64, o.s[3]);
    got_free(&o);
    tab_free(&t);
}

Test(model, startup_paid_every_epoch_unless_persistent)
{
    for (int persistent = 0; persistent < 2; persistent++) {
        stall_model_params p;
        stall_model_defaults(&p);
        p.workers = 1;
        p.batches = 1;
        p.epochs = 3;
        p.startup = 40 * MS;
        p.persistent_workers = persistent;
        tab t;
        tab_alloc(&t, 1, 1, 3);
        for (int e = 0; e < 3; e++) {
            TF(&t, e, 0, 0) = 10 * MS;
            TC(&t, e, 0, 0) = 1 * MS;
        }
        got o;
        stall_err err = {0};
        cr_assert_eq(run_tab(&p, &t, &o, &err), 0, "%s", err.msg);
        cr_assert_eq(o.stall[0], 50 * MS, "epoch 0 stall %" PRId64, o.stall[0]);
        for (int e = 1; e < 3; e++)
            cr_assert_eq(o.stall[e], (persistent ? 10 : 50) * MS,
                         "persistent=%d epoch %d stall %" PRId64, persistent, e, o.stall[e]);
        got_free(&o);
        tab_free(&t);
    }
}

Test(model, pin_thread_serialises_arrivals_of_all_workers)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 3;
    p.prefetch = 1;
    p.batches = 3;
    p.pin = 4 * MS;
    tab t;
    tab_alloc(&t, 1, 3, 1);
    for (int k = 0; k < 3; k++)
        TF(&t, 0, 0, k) = 10 * MS; /* all three arrive at 10 ms */
    got o;
    stall_err err = {0};
    cr_assert_eq(run_tab(&p, &t, &o, &err), 0, "%s", err.msg);
    cr_assert_eq(o.y[0], 14 * MS, "Y0 = %" PRId64, o.y[0]);
    cr_assert_eq(o.y[1], 18 * MS, "Y1 = %" PRId64, o.y[1]);
    cr_assert_eq(o.y[2], 22 * MS, "Y2 = %" PRId64, o.y[2]);
    got_free(&o);
    tab_free(&t);
}

Test(model, equal_arrivals_out_of_order_go_lowest_index_first)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 4;
    p.prefetch = 1;
    p.batches = 4;
    p.in_order = false;
    tab t;
    tab_alloc(&t, 1, 4, 1);
    stall_time f[4] = {9, 5, 5, 5};
    for (int k = 0; k < 4; k++)
        TF(&t, 0, 0, k) = f[k] * MS;
    got o;
    stall_err err = {0};
    cr_assert_eq(run_tab(&p, &t, &o, &err), 0, "%s", err.msg);
    int64_t order[4] = {1, 2, 3, 0};
    for (int k = 0; k < 4; k++)
        cr_assert_eq(o.b[k], order[k], "iteration %d took batch %" PRId64 ", expected %" PRId64, k,
                     o.b[k], order[k]);
    got_free(&o);
    tab_free(&t);
}

Test(model, stats_count_iterations_events_and_end)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 2;
    p.gpus_per_node = 2;
    p.workers = 2;
    p.batches = 10;
    p.epochs = 2;
    tab t;
    tab_alloc(&t, 2, 10, 2);
    for (size_t i = 0; i < 40; i++) {
        t.fetch[i] = 3 * MS;
        t.compute[i] = 2 * MS;
    }
    stall_durations d = tab_durations(&t);
    stall_model_stats stats;
    stall_err err = {0};
    got o;
    got_init(&o, 2, 20);
    cr_assert_eq(stall_model_run(&p, &d, got_record, &o, &stats, &err), 0, "%s", err.msg);
    cr_assert_eq(stats.iterations, 20, "iterations %" PRId64, stats.iterations);
    cr_assert_eq(stats.end, o.rec[19].iter_end, "end %" PRId64, stats.end);
    /* One fetch end per batch and rank, one barrier per iteration, one
     * epoch start per epoch. */
    cr_assert_eq(stats.events, (uint64_t)(2 * 2 * 10 + 2 * 10 + 2), "events %" PRIu64,
                 stats.events);
    /* A NULL callback and NULL stats are fine. */
    cr_assert_eq(stall_model_run(&p, &d, NULL, NULL, NULL, &err), 0, "%s", err.msg);
    got_free(&o);
    tab_free(&t);
}

/* ---- configuration errors -------------------------------------------------------- */

static stall_time const_dur(void *ctx, int e, int r, int64_t k)
{
    (void)ctx;
    (void)e;
    (void)r;
    (void)k;
    return MS;
}

static stall_time neg_fetch(void *ctx, int e, int r, int64_t k)
{
    (void)ctx;
    (void)e;
    return r == 1 && k == 3 ? -5 : MS;
}

static stall_time neg_tail(void *ctx, int e, int64_t k)
{
    (void)ctx;
    (void)e;
    return k == 2 ? -1 : 0;
}

static void expect_config_error(const stall_model_params *p, const char *field)
{
    stall_durations d = {.fetch = const_dur, .compute = const_dur};
    stall_err err = {0};
    int rc = stall_model_run(p, &d, NULL, NULL, NULL, &err);
    cr_assert_eq(rc, STALL_ECONFIG, "expected STALL_ECONFIG for %s, got %d (%s)", field, rc,
                 err.msg);
    cr_assert_eq(err.code, STALL_ECONFIG, "err.code %d", err.code);
    cr_assert(strstr(err.msg, field) != NULL, "message \"%s\" does not name %s", err.msg, field);
}

Test(model, rejects_zero_ranks)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 0;
    expect_config_error(&p, "ranks");
}

Test(model, rejects_gpus_per_node_above_ranks)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 4;
    p.gpus_per_node = 8;
    expect_config_error(&p, "gpus_per_node");
}

Test(model, rejects_prefetch_zero_with_workers)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = 2;
    p.prefetch = 0;
    expect_config_error(&p, "prefetch");
}

Test(model, rejects_other_impossible_settings)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = -1;
    expect_config_error(&p, "workers");
    stall_model_defaults(&p);
    p.batches = 0;
    expect_config_error(&p, "batches");
    stall_model_defaults(&p);
    p.epochs = 0;
    expect_config_error(&p, "epochs");
    stall_model_defaults(&p);
    p.handover = -1;
    expect_config_error(&p, "handover");
    stall_model_defaults(&p);
    p.pin = -1;
    expect_config_error(&p, "pin");
    stall_model_defaults(&p);
    p.startup = -1;
    expect_config_error(&p, "startup");
    stall_model_defaults(&p);
    p.cpu_share = 1.5;
    expect_config_error(&p, "cpu_share");
    stall_model_defaults(&p);
    p.compute_cpu_share = -0.1;
    expect_config_error(&p, "compute_cpu_share");
    stall_model_defaults(&p);
    p.cpu_deflate = 0.0;
    expect_config_error(&p, "cpu_deflate");
    stall_model_defaults(&p);
    p.cores = -2;
    expect_config_error(&p, "cores");
    stall_model_defaults(&p);
    p.storage_mb_s = -1;
    expect_config_error(&p, "storage_mb_s");
    stall_model_defaults(&p);
    p.fetch_align = (stall_align)7;
    expect_config_error(&p, "fetch_align");
}

Test(model, rejects_start_align_pointing_to_replay_mode)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.start_align = STALL_ALIGN_MIN;
    expect_config_error(&p, "start_align");
    stall_durations d = {.fetch = const_dur, .compute = const_dur};
    stall_err err = {0};
    stall_model_run(&p, &d, NULL, NULL, NULL, &err);
    cr_assert(strstr(err.msg, "replay") != NULL, "message \"%s\" should point to replay mode",
              err.msg);
}

Test(model, rejects_null_durations)
{
    stall_model_params p;
    stall_model_defaults(&p);
    stall_durations d = {.fetch = const_dur};
    stall_err err = {0};
    cr_assert_eq(stall_model_run(&p, &d, NULL, NULL, NULL, &err), STALL_EINVAL, "%s", err.msg);
    cr_assert_eq(stall_model_run(&p, NULL, NULL, NULL, NULL, &err), STALL_EINVAL, "%s", err.msg);
    cr_assert_eq(stall_model_run(NULL, &d, NULL, NULL, NULL, &err), STALL_EINVAL, "%s", err.msg);
}

Test(model, negative_fetch_duration_from_callback_is_an_error)
{
    for (int align = 0; align < 3; align++) {
        stall_model_params p;
        stall_model_defaults(&p);
        p.ranks = 2;
        p.gpus_per_node = 2;
        p.workers = 2;
        p.batches = 8;
        p.fetch_align = (stall_align)align;
        stall_durations d = {.fetch = neg_fetch, .compute = const_dur};
        stall_err err = {0};
        stall_model_stats stats;
        int rc = stall_model_run(&p, &d, NULL, NULL, &stats, &err);
        cr_assert_eq(rc, STALL_EINVAL, "align %d: rc %d (%s)", align, rc, err.msg);
        cr_assert(strstr(err.msg, "fetch") && strstr(err.msg, "rank 1") &&
                      strstr(err.msg, "batch 3"),
                  "message \"%s\" should name fetch, rank 1, batch 3", err.msg);
        cr_assert_lt(stats.iterations, 8, "the run stopped early: %" PRId64, stats.iterations);
    }
}

Test(model, negative_tail_from_callback_is_an_error)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.batches = 5;
    stall_durations d = {.fetch = const_dur, .compute = const_dur, .tail = neg_tail};
    stall_err err = {0};
    int rc = stall_model_run(&p, &d, NULL, NULL, NULL, &err);
    cr_assert_eq(rc, STALL_EINVAL, "rc %d (%s)", rc, err.msg);
    cr_assert(strstr(err.msg, "tail") != NULL, "message \"%s\" should name tail", err.msg);
}

static stall_time neg_late(void *ctx, int e, int r)
{
    (void)ctx;
    return e == 1 && r == 2 ? -3 : 0;
}

Test(model, negative_late_start_from_callback_is_an_error)
{
    for (int cores = 0; cores <= 2; cores += 2) { /* the fast path and the event engine */
        stall_model_params p;
        stall_model_defaults(&p);
        p.ranks = 3;
        p.gpus_per_node = 3;
        p.workers = 1;
        p.batches = 4;
        p.epochs = 2;
        p.cores = cores;
        stall_durations d = {.fetch = const_dur, .compute = const_dur, .late_start = neg_late};
        stall_err err = {0};
        stall_model_stats stats;
        int rc = stall_model_run(&p, &d, NULL, NULL, &stats, &err);
        cr_assert_eq(rc, STALL_EINVAL, "cores %d: rc %d (%s)", cores, rc, err.msg);
        cr_assert(strstr(err.msg, "late_start(epoch 1, rank 2") != NULL,
                  "message \"%s\" should name late_start, epoch 1, rank 2", err.msg);
        cr_assert_eq(stats.iterations, 4, "cores %d: epoch 0 ran, epoch 1 did not: %" PRId64, cores,
                     stats.iterations);
    }
}

/* ---- the steady-state pipeline law ---------------------------------------- */

typedef struct law_dur {
    stall_time d, c;
} law_dur;

static stall_time law_fetch(void *ctx, int e, int r, int64_t k)
{
    (void)e, (void)r, (void)k;
    return ((law_dur *)ctx)->d;
}

static stall_time law_compute(void *ctx, int e, int r, int64_t k)
{
    (void)e, (void)r, (void)k;
    return ((law_dur *)ctx)->c;
}

static double law_max(double a, double b)
{
    return a > b ? a : b;
}

/* The law: epoch = startup + D + p + h + C + (N-1) x max(C + h, D/W, p,
 * (D + p + h)/(P W)) for one rank, in order, constant durations. Runs it
 * against the model; returns sim - law in ns. */
static double law_case(int w, int pf, stall_time d, stall_time c, stall_time h, stall_time pin,
                       stall_time startup, int64_t n, double *law_out)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.workers = w;
    p.prefetch = pf;
    p.batches = n;
    p.handover = h;
    p.pin = pin;
    p.startup = startup;
    law_dur x = {d, c};
    stall_durations dur = {.fetch = law_fetch, .compute = law_compute, .ctx = &x};
    stall_model_stats st;
    stall_err err = {0};
    cr_assert_eq(stall_model_run(&p, &dur, NULL, NULL, &st, &err), 0, "%s", err.msg);
    double cyc = law_max(law_max((double)(c + h), (double)d / w),
                         law_max((double)pin, (double)(d + pin + h) / (pf * w)));
    double law = (double)(startup + d + pin + h + c) + (double)(n - 1) * cyc;
    *law_out = law;
    return (double)st.end - law;
}

Test(model, steady_state_pipeline_law_for_one_rank)
{
    /* The closed form of a pipeline in steady state (docs/model.md 3). On a
     * grid of 1620 settings (W 1..8, P 1..4, D, C, h, p) it holds to the
     * nanosecond whenever W and P W divide N - 1 (N = 121); for other N the
     * model is never above the law and below it by less than one batch's
     * D + p + h + C (the last workers' round is partial: the largest gap,
     * N = 124, W = 4, P = 1, D = 90 ms, is -60 ms, 2.0% of the epoch). */
    static const struct {
        int w, pf;
        stall_time d, c, h, pin;
    } exact[] = {
        {1, 2, 40 * MS, 10 * MS, 1 * MS, 0},      /* worker-bound, D/W */
        {4, 2, 40 * MS, 15 * MS, 1 * MS, 0},      /* loop-bound, C + h */
        {2, 2, 10 * MS, 2 * MS, 1 * MS, 8 * MS},  /* pin-bound */
        {1, 1, 40 * MS, 30 * MS, 2 * MS, 5 * MS}, /* window-bound, (D + p + h)/(PW) */
    };
    const int64_t n = 1 + 4 * 60; /* N - 1 divisible by every W */
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++) {
        double law, dev = law_case(exact[i].w, exact[i].pf, exact[i].d, exact[i].c, exact[i].h,
                                   exact[i].pin, 20 * MS, n, &law);
        cr_expect(fabs(dev) < 0.5, "case %zu (W=%d P=%d): model - law = %.0f ns of %.0f", i,
                  exact[i].w, exact[i].pf, dev, law);
    }
    /* A grid: report the largest gap. */
    double worst = 0, worst_law = 1;
    char where[160] = "";
    int ws[] = {1, 2, 3, 4, 8}, pfs[] = {1, 2, 4};
    stall_time ds[] = {5 * MS, 20 * MS, 40 * MS, 90 * MS}, cs[] = {3 * MS, 12 * MS, 30 * MS},
               hs[] = {0, 1 * MS, 4 * MS}, pins[] = {0, 2 * MS, 9 * MS};
    for (int64_t n2 = 121; n2 <= 124; n2++)
        for (size_t a = 0; a < 5; a++)
            for (size_t b = 0; b < 3; b++)
                for (size_t e = 0; e < 4; e++)
                    for (size_t f = 0; f < 3; f++)
                        for (size_t g = 0; g < 3; g++)
                            for (size_t q = 0; q < 3; q++) {
                                double law, dev = law_case(ws[a], pfs[b], ds[e], cs[f], hs[g],
                                                           pins[q], 20 * MS, n2, &law);
                                double bound = (double)(ds[e] + pins[q] + hs[g] + cs[f]);
                                if (fabs(dev) / law > worst / worst_law) {
                                    worst = fabs(dev);
                                    worst_law = law;
                                    snprintf(where, sizeof where,
                                             "N=%lld W=%d P=%d D=%lld C=%lld h=%lld p=%lld ms: "
                                             "%+.3f ms",
                                             (long long)n2, ws[a], pfs[b], (long long)(ds[e] / MS),
                                             (long long)(cs[f] / MS), (long long)(hs[g] / MS),
                                             (long long)(pins[q] / MS), dev / 1e6);
                                }
                                /* N - 1 = 120: every W and P W here divides it. */
                                if (n2 == 121)
                                    cr_expect(
                                        fabs(dev) < 1.0,
                                        "N=121 W=%d P=%d D=%lld C=%lld h=%lld p=%lld ms: model "
                                        "- law = %+.0f ns",
                                        ws[a], pfs[b], (long long)(ds[e] / MS),
                                        (long long)(cs[f] / MS), (long long)(hs[g] / MS),
                                        (long long)(pins[q] / MS), dev);
                                cr_expect(dev <= 0.5 && -dev <= bound,
                                          "W=%d P=%d D=%lld C=%lld h=%lld p=%lld ms: model - law = "
                                          "%+.3f ms of %.3f ms",
                                          ws[a], pfs[b], (long long)(ds[e] / MS),
                                          (long long)(cs[f] / MS), (long long)(hs[g] / MS),
                                          (long long)(pins[q] / MS), dev / 1e6, law / 1e6);
                            }
    cr_log_info("pipeline law: largest gap %s (%.3f%% of the epoch)", where,
                100 * worst / worst_law);
}

/* ---- gradient accumulation (DDP no_sync) ----------------------------------- */

/* Two ranks loading in the main process (S = Q): in iteration k rank r
 * waits stall0/stall1 for its data, computes C (+ b on rank 1), tail A. */
static void acc_case(int acc, int alternate, stall_time a, stall_time b, stall_time c,
                     stall_time tail, int64_t n, got *o)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 2;
    p.gpus_per_node = 2;
    p.workers = 0;
    p.batches = n;
    p.accumulation = acc;
    tab t;
    tab_alloc(&t, 2, n, 1);
    for (int64_t k = 0; k < n; k++) {
        int slow = alternate ? (int)(k % 2) : 0;
        TF(&t, 0, slow, k) = a;
        TC(&t, 0, 0, k) = c;
        TC(&t, 0, 1, k) = c + b;
        t.tail[k] = tail;
    }
    stall_err err = {0};
    cr_assert_eq(run_tab(&p, &t, o, &err), 0, "%s", err.msg);
    tab_free(&t);
}

Test(model, gradient_accumulation_meets_at_the_barrier_every_kth_iteration)
{
    const stall_time a = 30 * MS, b = 12 * MS, c = 20 * MS, A = 5 * MS;
    const int64_t n = 10;
    got o;
    /* Every iteration synchronised: rank 0 waits a, rank 1 computes b
     * longer, the barrier takes the later: max(a, b) + C + A each. */
    acc_case(1, 0, a, b, c, A, n, &o);
    cr_expect_eq(o.rec[n - 1].iter_end, n * ((a > b ? a : b) + c + A), "k = 1: %" PRId64,
                 o.rec[n - 1].iter_end);
    got_free(&o);
    /* The stall alternates between the ranks (b = 0). Synchronised every
     * iteration each costs a + C + A; with accumulation 2 each rank loses a
     * once per window of two and they meet after it: a + 2C + A. */
    acc_case(1, 1, a, 0, c, A, n, &o);
    cr_expect_eq(o.rec[n - 1].iter_end, n * (a + c + A), "k = 1 alternating: %" PRId64,
                 o.rec[n - 1].iter_end);
    got_free(&o);
    acc_case(2, 1, a, 0, c, A, n, &o);
    cr_expect_eq(o.rec[n - 1].iter_end, n / 2 * (a + 2 * c + A),
                 "k = 2 alternating: %" PRId64 " ns, want %" PRId64, o.rec[n - 1].iter_end,
                 n / 2 * (a + 2 * c + A));
    for (int64_t w = 0; w < n / 2; w++) {
        /* The window's first iteration ends for the report when the later
         * rank computed it (no tail, nobody waits); the second at the
         * barrier plus A. */
        cr_expect_eq(o.rec[2 * w].iter_end, w * (a + 2 * c + A) + a + c, "window %" PRId64, w);
        cr_expect_eq(o.rec[2 * w].tail, 0);
        cr_expect_eq(o.rec[2 * w].wait_max, 0);
        cr_expect_eq(o.rec[2 * w + 1].iter_end, (w + 1) * (a + 2 * c + A), "window %" PRId64, w);
        cr_expect_eq(o.rec[2 * w + 1].tail, A);
        /* Each rank's own stall: rank 0 in the first, rank 1 in the second. */
        cr_expect_eq(o.stall[(size_t)(2 * w) * 2 + 0], a);
        cr_expect_eq(o.stall[(size_t)(2 * w) * 2 + 1], 0);
        cr_expect_eq(o.stall[(size_t)(2 * w + 1) * 2 + 0], 0);
        cr_expect_eq(o.stall[(size_t)(2 * w + 1) * 2 + 1], a);
        /* The training stall reported: the window lost a once (the most one
         * rank waited in it), not 2a, so the stall share is a / (a + 2C + A),
         * never above 1. */
        cr_expect_eq(o.rec[2 * w].stall_train, a, "window %" PRId64 ": %" PRId64, w,
                     o.rec[2 * w].stall_train);
        cr_expect_eq(o.rec[2 * w + 1].stall_train, 0, "window %" PRId64 ": %" PRId64, w,
                     o.rec[2 * w + 1].stall_train);
    }
    got_free(&o);
    /* Rank 0 waits a, rank 1 computes b longer, every iteration, k = 2:
     * max(2a + 2C, 2C + 2b) + A per window; an odd N ends with a window of
     * one (the epoch's last iteration always synchronises). */
    acc_case(2, 0, a, b, c, A, n + 1, &o);
    stall_time win = (a > b ? 2 * a : 2 * b) + 2 * c + A;
    cr_expect_eq(o.rec[n].iter_end, n / 2 * win + (a > b ? a : b) + c + A, "k = 2, odd N: %" PRId64,
                 o.rec[n].iter_end);
    got_free(&o);
}

/*
 * plan_gpus.c - the plan's GPU-count questions (stall/plan.h): the weak-
 * scaling curve with what limits it (max_efficient_gpus), and the fewest
 * GPUs for a throughput or an epoch deadline (gpus_for_throughput,
 * gpus_for_epoch_s). Split from plan.c, which asks the other questions and
 * puts the answers together.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"
#include "stall/plan.h"

/* ---- the storage tiers' simulation cost ---- */

void plan_cost_at(const plan_ctx *c, const stall_config *cfg, const stall_plan_result *r, int g,
                  int gpn, bool strong, plan_cost *e)
{
    memset(e, 0, sizeof *e);
    e->gpus = g;
    int per = g < gpn ? g : gpn;
    if (per < 1)
        per = 1;
    e->nodes = (g + per - 1) / per;
    if (!c->have_eff || !(c->eff_tier_requests > 0))
        return;
    /* weak scaling keeps the requests per rank; strong splits the last
     * run's among the g */
    e->requests = c->eff_tier_requests * (strong ? c->eff_ranks : g);
    /* the fair store (models/fluid.c), where a bandwidth makes one,
     * passes each request over every node; a FIFO one queues it once, and
     * without a bandwidth a request is its latency alone */
    bool fluid = cfg->queue != 1 && (cfg->bandwidth_mb_s > 0 || cfg->global_mb_s > 0);
    e->work = fluid ? e->requests * e->nodes : 0;
    e->over = e->requests > r->max_requests ? 1 : e->work > r->max_request_nodes ? 2 : 0;
}

const char *plan_cost_text(const stall_plan_result *r, const plan_cost *e, char *b, size_t n)
{
    if (e->over == 1)
        snprintf(b, n,
                 "a run of %d GPU%s would simulate %.3g requests, above [plan] max_requests = "
                 "%.3g per run (fewer, larger requests: [storage] requests_per_batch; a higher "
                 "max_requests, about 1 us each)",
                 e->gpus, e->gpus == 1 ? "" : "s", e->requests, r->max_requests);
    else
        snprintf(b, n,
                 "a run of %d GPU%s would simulate %.3g requests on %d node%s, %.3g requests x "
                 "nodes, above [plan] max_request_nodes = %.3g per run (the fair store passes "
                 "every request over every node, about 3-5 ns each: fewer nodes, [cluster] "
                 "gpus_per_node; fewer, larger requests, [storage] requests_per_batch; a lower "
                 "[plan] max_gpus; or a higher max_request_nodes)",
                 e->gpus, e->gpus == 1 ? "" : "s", e->requests, e->nodes, e->nodes == 1 ? "" : "s",
                 e->work, r->max_request_nodes);
    return b;
}

/* ---- 2. scaling ---- */

int plan_curve_point(plan_ctx *c, const stall_config *chosen, int gpn, int g, plan_probe *p,
                     stall_err *err)
{
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    *cfg = *chosen;
    plan_set_int(cfg, "cluster", "gpus", g);
    plan_set_int(cfg, "cluster", "gpus_per_node", g < gpn ? g : gpn);
    /* The curve is weak scaling (per-GPU batches fixed, docs/model.md 9),
     * whatever [cluster] scaling says. */
    stall_err e;
    if (stall_config_apply(cfg, "cluster", "scaling", "weak", "plan", &e) != 0)
        abort();
    int rc = plan_sim(c, cfg, p, err);
    free(cfg);
    return rc;
}

/* Whether cfg writes checkpoints: an interval given, or a tidy trace's
 * recorded ones, and not [checkpoint] mode = off. */
bool plan_ckpt_on(const plan_ctx *c, const stall_config *cfg)
{
    return cfg->ckpt_mode != 2 && (cfg->ckpt_every > 0 || cfg->ckpt_every_s > 0 || c->trace_ckpt);
}

/* Makes cfg write no checkpoints: its [checkpoint] keys dropped, and the
 * trace's own switched off. */
void plan_ckpt_none(const plan_ctx *c, stall_config *cfg)
{
    static const char *const ck[] = {"checkpoint", NULL};
    char buf[8];
    stall_config_drop(cfg, ck, buf, sizeof buf);
    stall_err e;
    if (c->trace_ckpt && stall_config_apply(cfg, "checkpoint", "mode", "off", "plan", &e) != 0)
        abort();
}

const char *plan_miss_text(char *b, size_t n, double v, double target)
{
    int d = 3;
    snprintf(b, n, "%.*f", d, v);
    while (d < 9 && (v < target ? strtod(b, NULL) >= target : strtod(b, NULL) <= target))
        snprintf(b, n, "%.*f", ++d, v);
    return b;
}

/* Puts the count g (its probe p, p1 the 1-GPU one) into the curve in GPU
 * order: the counts the bisection decided between are rows of scaling.csv
 * and points of its figure, beside the doublings. */
static void plan_curve_insert(stall_plan_result *r, int g, const plan_probe *p,
                              const plan_probe *p1)
{
    int at = 0;
    while (at < r->n && r->curve_gpus[at] < g)
        at++;
    if ((at < r->n && r->curve_gpus[at] == g) || r->n >= STALL_PLAN_CURVE_MAX)
        return;
    for (int i = r->n; i > at; i--) {
        r->curve_gpus[i] = r->curve_gpus[i - 1];
        r->curve_batches_s[i] = r->curve_batches_s[i - 1];
        r->curve_samples_s[i] = r->curve_samples_s[i - 1];
        r->curve_speedup[i] = r->curve_speedup[i - 1];
        r->curve_efficiency[i] = r->curve_efficiency[i - 1];
        r->curve_stall[i] = r->curve_stall[i - 1];
    }
    r->n++;
    r->curve_gpus[at] = g;
    r->curve_batches_s[at] = p->thr;
    r->curve_samples_s[at] = p->samples_s;
    r->curve_speedup[at] = p->thr / p1->thr;
    r->curve_efficiency[at] = r->curve_speedup[at] / g;
    r->curve_stall[at] = p->stall;
}

int plan_scaling(plan_ctx *c, const stall_config *chosen, int gpn, stall_plan_result *r,
                 stall_err *err)
{
    c->sims = &r->gpus.sims;
    plan_probe p, p1 = {0};
    plan_cost cut = {0};
    int rc = 0, last_ok = 0, first_bad = 0;
    for (int g = 1; rc == 0 && r->n < STALL_PLAN_CURVE_MAX;) {
        rc = plan_curve_point(c, chosen, gpn, g, &p, err);
        if (rc)
            break;
        if (g == 1)
            p1 = p;
        int i = r->n++;
        r->curve_gpus[i] = g;
        r->curve_batches_s[i] = p.thr;
        r->curve_samples_s[i] = p.samples_s;
        r->curve_speedup[i] = p.thr / p1.thr;
        r->curve_efficiency[i] = r->curve_speedup[i] / g;
        r->curve_stall[i] = p.stall;
        if (first_bad == 0 && r->curve_efficiency[i] >= r->efficiency)
            last_ok = g;
        else if (first_bad == 0)
            first_bad = g;
        if (g == r->max_gpus)
            break;
        int next = g * 2 > r->max_gpus ? r->max_gpus : g * 2;
        /* The storage tiers simulate every request of every batch (about
         * 1 us each), and the fair store passes each over every node: a
         * run of `next` GPUs past either bound would take minutes; the
         * curve stops, and says so (past its answer too). */
        plan_cost e;
        plan_cost_at(c, chosen, r, next, gpn, false, &e);
        if (e.over && first_bad == 0) {
            r->cut_gpus = g;
            r->cut_requests = e.requests;
            cut = e;
            break;
        }
        if (e.over) {
            char t[512];
            snprintf(r->curve_note, sizeof r->curve_note,
                     "the curve stops at %d GPUs, past its answer: %s", g,
                     plan_cost_text(r, &e, t, sizeof t));
            break;
        }
        g = next;
    }
    /* Bisect between the last count that holds and the first that fails. */
    int lo = last_ok, hi = first_bad;
    plan_probe plo = {0}, phi = {0};
    while (rc == 0 && hi > 0 && hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        rc = plan_curve_point(c, chosen, gpn, mid, &p, err);
        if (rc == 0 && p.thr / p1.thr / mid >= r->efficiency) {
            lo = mid;
            plo = p;
        } else {
            hi = mid;
            phi = p;
        }
    }
    if (rc)
        return rc;
    if (plo.thr > 0)
        plan_curve_insert(r, lo, &plo, &p1);
    if (phi.thr > 0)
        plan_curve_insert(r, hi, &phi, &p1);
    r->gpus.value = lo;
    if (hi == 0 && r->cut_gpus > 0) {
        char t[512];
        snprintf(r->gpus.binding, sizeof r->gpus.binding, "cost");
        snprintf(r->limit, sizeof r->limit,
                 "efficiency stays >= %g up to %d GPUs, where the search stops: with the storage "
                 "tiers every request is simulated, and %s: the answer is at least %d",
                 r->efficiency, r->cut_gpus, plan_cost_text(r, &cut, t, sizeof t), r->cut_gpus);
        return 0;
    }
    if (hi == 0) {
        /* Not reached within the search: the bound is the answer's limit,
         * said so (the answer is at least max_gpus). */
        snprintf(r->gpus.binding, sizeof r->gpus.binding, "max_gpus");
        snprintf(r->limit, sizeof r->limit,
                 "efficiency stays >= %g up to max_gpus = %d, the bound of the search: the "
                 "answer is at least %d (raise [plan] max_gpus to search further)",
                 r->efficiency, r->max_gpus, r->max_gpus);
        return 0;
    }
    /* What limits it: the failing count without each shared resource, and
     * without the checkpoints (a node's ranks share its write bandwidth, or
     * with target = store its link to the store, with the reads). */
    double eff = 0;
    rc = plan_curve_point(c, chosen, gpn, hi, &p, err);
    eff = p.thr / p1.thr / hi;
    enum { PLAN_LIMITERS = 4 };
    const char *names[PLAN_LIMITERS] = {"storage", "cores", "allreduce", "checkpoint"};
    const char *words[PLAN_LIMITERS] = {
        "shared storage bandwidth", "shared host cores", "the all-reduce",
        chosen->ckpt_target == 1 ? "checkpoint writes sharing the store with the reads"
                                 : "checkpoint writes sharing each node's write bandwidth"};
    const char *without[PLAN_LIMITERS] = {"it", "it", "it", "checkpoints"};
    double gain[PLAN_LIMITERS] = {0, 0, 0, 0};
    char untested[640] = "";
    for (int k = 0; k < PLAN_LIMITERS && rc == 0; k++) {
        stall_config *cf = stall_xmalloc(sizeof *cf);
        *cf = *chosen;
        bool tiers = stall_config_tiers(cf);
        bool has = k == 0   ? cf->bandwidth_mb_s > 0 || tiers
                   : k == 1 ? cf->cores > 0
                   : k == 2 ? (cf->allreduce_s > 0 || cf->bucket_mb > 0 || cf->latency_us > 0)
                            : plan_ckpt_on(c, cf);
        if (has) {
            if (k == 0 && tiers) { /* a store that costs nothing (0 would be refused) */
                plan_tiers_free(cf);
                /* its bandwidths make the fair store, whose cost the
                 * configuration's latency alone did not have */
                plan_cost e;
                plan_cost_at(c, cf, r, hi, gpn, false, &e);
                if (e.over) {
                    char t[512];
                    snprintf(untested, sizeof untested,
                             "; the storage is not tried (its run without the store's cost, "
                             "which takes the fair store: %s)",
                             plan_cost_text(r, &e, t, sizeof t));
                    has = false;
                    r->storage_untried = true;
                }
            } else if (k == 0)
                cf->bandwidth_mb_s = 0;
            else if (k == 1)
                cf->cores = 0;
            else if (k == 2)
                cf->allreduce_s = cf->bucket_mb = cf->bandwidth_gb_s = cf->latency_us = 0;
            else
                plan_ckpt_none(c, cf);
            /* Efficiency against the same counterfactual on 1 GPU. */
            plan_probe q1;
            if (has)
                rc = plan_curve_point(c, cf, gpn, 1, &q1, err);
            if (rc == 0 && has)
                rc = plan_curve_point(c, cf, gpn, hi, &p, err);
            if (rc == 0 && has)
                gain[k] = p.thr / q1.thr / hi - eff;
        }
        free(cf);
    }
    if (rc)
        return rc;
    int best = -1;
    for (int k = 0; k < PLAN_LIMITERS; k++)
        if (gain[k] >= 0.01 && (best < 0 || gain[k] > gain[best]))
            best = k;
    snprintf(r->gpus.binding, sizeof r->gpus.binding, "%s", best < 0 ? "stragglers" : names[best]);
    char et[32];
    plan_miss_text(et, sizeof et, eff, r->efficiency);
    if (best < 0)
        snprintf(r->limit, sizeof r->limit,
                 "at %d GPUs efficiency falls to %s: stragglers at the barrier (every "
                 "iteration waits for the slowest of more ranks; no shared resource and no "
                 "checkpoint gives back 1%%)%s",
                 hi, et, untested);
    else
        snprintf(r->limit, sizeof r->limit,
                 "at %d GPUs efficiency falls to %s: %s (without %s, %.3f)%s", hi, et, words[best],
                 without[best], eff + gain[best], untested);
    return 0;
}

/* ---- 2b. GPU counts for a throughput or an epoch deadline ---- */

/* One GPU count of a target's search: weak scaling for a throughput (the
 * curve's configuration), strong for an epoch deadline (the configuration's
 * dataset split over g GPUs, docs/model.md 2.4). */
static int plan_target_point(plan_ctx *c, const stall_config *chosen, int gpn, int g, bool strong,
                             plan_probe *p, stall_err *err)
{
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    *cfg = *chosen;
    plan_set_int(cfg, "cluster", "gpus", g);
    plan_set_int(cfg, "cluster", "gpus_per_node", g < gpn ? g : gpn);
    stall_err e;
    if (stall_config_apply(cfg, "cluster", "scaling", strong ? "strong" : "weak", "plan", &e) != 0)
        abort();
    int rc = plan_sim(c, cfg, p, err);
    free(cfg);
    return rc;
}

/* Whether probe p meets the target: throughput (samples/s when known, else
 * batches/s) at least target_throughput, or epoch time at most
 * target_epoch_s. */
static bool plan_meets(const stall_plan_result *r, const plan_probe *p, bool strong)
{
    if (strong)
        return p->epoch_s <= r->target_epoch_s;
    double thr = isnan(p->samples_s) ? p->thr : p->samples_s;
    return thr >= r->target_throughput;
}

/* The data one epoch of probe p holds: samples (else batches) of all its
 * GPUs, its throughput x its epoch time (the summary's throughput is every
 * iteration of every GPU over the epochs' time). */
double plan_epoch_amount(const plan_probe *p)
{
    /* A whole number of samples or batches, up to the rounding of the
     * summary's quotients. */
    return round((isnan(p->samples_s) ? p->thr : p->samples_s) * p->epoch_s);
}

/* That of p as a multiple of the planned configuration's epoch. */
double plan_epoch_data(const plan_ctx *c, const plan_probe *p)
{
    return c->base_amount > 0 ? plan_epoch_amount(p) / c->base_amount : NAN;
}

/* The fewest GPUs in 1..max_gpus that meet the target: the powers of two,
 * then bisection between the last that fails and the first that meets
 * (throughput grows and the epoch shrinks with the GPUs; the brute-force
 * test holds the answer against every count). Not reached: binding
 * max_gpus, and `why` says what the last count gave. */
int plan_target(plan_ctx *c, const stall_config *chosen, int gpn, bool strong, stall_plan_result *r,
                stall_plan_answer *a, char *why, size_t nwhy, stall_err *err)
{
    c->sims = &a->sims;
    plan_probe p = {0}, best = {0};
    plan_cost cut = {0};
    int rc = 0, lo = 0, hi = 0;
    for (int g = 1;;) {
        rc = plan_target_point(c, chosen, gpn, g, strong, &p, err);
        if (rc)
            return rc;
        if (plan_meets(r, &p, strong)) {
            hi = g;
            best = p;
            break;
        }
        lo = g;
        if (g == r->max_gpus)
            break;
        int next = g * 2 > r->max_gpus ? r->max_gpus : g * 2;
        /* past the bounds on the storage tiers' simulation, as the curve */
        plan_cost_at(c, chosen, r, next, gpn, strong, &cut);
        if (cut.over)
            break;
        g = next;
    }
    if (hi == 0 && cut.over) {
        a->value = NAN;
        a->gpu_h = NAN;
        snprintf(a->binding, sizeof a->binding, "cost");
        char t[512], got[160];
        double thr = isnan(p.samples_s) ? p.thr : p.samples_s;
        if (strong)
            snprintf(got, sizeof got, "an epoch takes %.6g s, above the %g s asked", p.epoch_s,
                     r->target_epoch_s);
        else
            snprintf(got, sizeof got, "throughput is %.6g %s, below the %g asked", thr,
                     isnan(p.samples_s) ? "batches/s" : "samples/s", r->target_throughput);
        snprintf(why, nwhy,
                 "not reached up to %d GPUs, where the search stops (there %s, stall share "
                 "%.3f): with the storage tiers every request is simulated, and %s",
                 lo, got, p.stall, plan_cost_text(r, &cut, t, sizeof t));
        return 0;
    }
    if (hi == 0) {
        a->value = NAN;
        a->gpu_h = NAN;
        snprintf(a->binding, sizeof a->binding, "max_gpus");
        double thr = isnan(p.samples_s) ? p.thr : p.samples_s;
        if (strong)
            snprintf(why, nwhy,
                     "not reached up to max_gpus = %d: there an epoch takes %.6g s, above the "
                     "%g s asked (stall share %.3f); raise [plan] max_gpus, or see what limits "
                     "the scaling above",
                     r->max_gpus, p.epoch_s, r->target_epoch_s, p.stall);
        else
            snprintf(why, nwhy,
                     "not reached up to max_gpus = %d: there throughput is %.6g %s, below the "
                     "%g asked (stall share %.3f); raise [plan] max_gpus, or see what limits "
                     "the scaling above",
                     r->max_gpus, thr, isnan(p.samples_s) ? "batches/s" : "samples/s",
                     r->target_throughput, p.stall);
        return 0;
    }
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        rc = plan_target_point(c, chosen, gpn, mid, strong, &p, err);
        if (rc)
            return rc;
        if (plan_meets(r, &p, strong)) {
            hi = mid;
            best = p;
        } else {
            lo = mid;
        }
    }
    a->value = hi;
    snprintf(a->binding, sizeof a->binding, "met");
    a->gpu_h = hi * best.epoch_s / 3600.0;
    a->gpus = hi;
    a->stall = best.stall;
    a->data = plan_epoch_data(c, &best);
    if (fabs(a->data - 1.0) < 1e-4)
        snprintf(why, nwhy, "%d GPU%s: epoch %.6g s, %.6g GPU-hours per epoch", hi,
                 hi == 1 ? "" : "s", best.epoch_s, a->gpu_h);
    else
        snprintf(why, nwhy,
                 "%d GPU%s: epoch %.6g s of %.6g times the configuration's data, %.6g GPU-hours "
                 "per epoch, %.6g per epoch of the configuration's data",
                 hi, hi == 1 ? "" : "s", best.epoch_s, a->data, a->gpu_h, a->gpu_h / a->data);
    return 0;
}

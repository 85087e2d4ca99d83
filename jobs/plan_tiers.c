/*
 * plan_tiers.c - plan's storage-tier questions (stall/plan.h, question 6):
 * the least link bandwidth, global bandwidth and cache per node that keep
 * the stall share of the chosen configuration at most the stall target.
 * Each is a search on a real line: the unlimited value first (bandwidth 0 =
 * unlimited; a cache holding the dataset), which must meet the target, then
 * galloping up from a small value and bisection to 0.1%, assuming the stall
 * share does not grow with the resource; tests/test_plan.c holds the
 * answers against brute-force sweeps.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

/* The least value of [storage] key in (0, top] (top <= 0: unbounded) with
 * stall share <= target; NAN when not even `top` (or unlimited) meets it. */
static int tiers_least(plan_ctx *c, const stall_config *chosen, const char *key, double start,
                       double top, double target, stall_plan_answer *a, double *best,
                       stall_err *err)
{
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    *cfg = *chosen;
    /* A FIFO store has one bandwidth (docs/model.md 2.3): the other one
     * off while this one is searched. */
    if (cfg->queue == 1 && strcmp(key, "bandwidth_mb_s") == 0)
        plan_set_real(cfg, "storage", "global_mb_s", 0);
    else if (cfg->queue == 1 && strcmp(key, "global_mb_s") == 0)
        plan_set_real(cfg, "storage", "bandwidth_mb_s", 0);
    plan_probe p;
    c->sims = &a->sims;
    a->value = NAN;
    a->gpu_h = NAN;
    /* The best it can be: a bandwidth far above any demand (0, unlimited,
     * could leave a miss costing nothing, which the check refuses), or the
     * whole dataset cached. */
    plan_set_real(cfg, "storage", key, top > 0 ? top : 1e12);
    int rc = plan_sim(c, cfg, &p, err);
    if (rc == 0 && p.stall > target) {
        snprintf(a->binding, sizeof a->binding, "not_met");
        *best = p.stall;
        free(cfg);
        return 0;
    }
    /* A cache of nothing may do (the store keeps up): then 0 is the answer. */
    if (rc == 0 && top > 0) {
        plan_set_real(cfg, "storage", key, 0);
        rc = plan_sim(c, cfg, &p, err);
        if (rc == 0 && p.stall <= target) {
            free(cfg);
            a->value = 0;
            snprintf(a->binding, sizeof a->binding, "met");
            return 0;
        }
    }
    double lo = 0, hi = start > 0 ? start : 1;
    if (top > 0 && hi > top)
        hi = top;
    for (; rc == 0;) {
        plan_set_real(cfg, "storage", key, hi);
        rc = plan_sim(c, cfg, &p, err);
        if (rc || p.stall <= target || (top > 0 && hi >= top))
            break;
        lo = hi;
        hi = top > 0 && hi * 2 > top ? top : hi * 2;
    }
    /* to 0.1%, and not below a thousandth of a MB (or MB/s) */
    while (rc == 0 && hi - lo > fmax(0.001 * hi, 0.001)) {
        double mid = 0.5 * (lo + hi);
        plan_set_real(cfg, "storage", key, mid);
        rc = plan_sim(c, cfg, &p, err);
        if (rc == 0 && p.stall <= target)
            hi = mid;
        else
            lo = mid;
    }
    free(cfg);
    if (rc)
        return rc;
    a->value = hi;
    snprintf(a->binding, sizeof a->binding, "met");
    return 0;
}

int plan_tiers(plan_ctx *c, const stall_config *chosen, stall_plan_result *r, stall_err *err)
{
    r->tiers = true;
    r->tier_best_stall = NAN;
    double t = r->stall_target;
    /* Bandwidths gallop from 1 MB/s; the cache from 1 MB up to the
     * dataset's size per node (a replicated dataset: all of it). */
    int rc =
        tiers_least(c, chosen, "bandwidth_mb_s", 1, 0, t, &r->tier_link, &r->tier_best_stall, err);
    if (rc == 0)
        rc = tiers_least(c, chosen, "global_mb_s", 1, 0, t, &r->tier_global, &r->tier_best_stall,
                         err);
    double top = chosen->dataset_mb;
    if (rc == 0 && !(top > 0)) {
        /* dataset_mb = 0: what an epoch reads; the model resolves it, so
         * bound the search by a cache that is never the limit. */
        top = 1e12;
    }
    if (rc == 0)
        rc =
            tiers_least(c, chosen, "cache_mb", 1, top, t, &r->tier_cache, &r->tier_best_stall, err);
    return rc;
}

void plan_tiers_free(stall_config *cfg)
{
    plan_set_real(cfg, "storage", "bandwidth_mb_s", 1e12);
    plan_set_real(cfg, "storage", "global_mb_s", cfg->queue == 1 ? 0 : 1e12);
    plan_set_real(cfg, "storage", "latency_ms", 0);
}

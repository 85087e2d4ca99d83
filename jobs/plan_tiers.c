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
                       double top, double target, stall_plan_answer *a, double *best, double *most,
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
    *most = top > 0 ? top : 1e12;
    plan_set_real(cfg, "storage", key, *most);
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

/* A bandwidth as configured, in words: 0 is unlimited. */
static const char *tiers_mb_s(char *buf, size_t n, double v)
{
    if (v > 0)
        snprintf(buf, n, "%g MB/s", v);
    else
        snprintf(buf, n, "unlimited");
    return buf;
}

/* What a not_met row's best run simulated, and its stall share: row 0 the
 * link, 1 the global store, 2 the cache. */
static size_t tiers_say(const stall_config *chosen, const stall_plan_result *r, int row,
                        double most, bool first, char *out, size_t n)
{
    static const char *const names[3] = {"tier_link_mb_s", "tier_global_mb_s", "tier_cache_mb"};
    char link[32], glob[32], rest[256];
    tiers_mb_s(link, sizeof link, chosen->bandwidth_mb_s);
    tiers_mb_s(glob, sizeof glob, chosen->global_mb_s);
    const char *fifo = chosen->queue == 1 ? ", a fifo store having one bandwidth" : "";
    if (row == 0)
        snprintf(rest, sizeof rest,
                 "the link at %g MB/s per node (the global store %s%s; latency %g ms and cache "
                 "%g MB as configured)",
                 most, chosen->queue == 1 ? "off" : glob, fifo, chosen->latency_ms,
                 chosen->cache_mb);
    else if (row == 1)
        snprintf(rest, sizeof rest,
                 "the global store at %g MB/s (the link %s%s; latency %g ms and cache %g MB as "
                 "configured)",
                 most, chosen->queue == 1 ? "off" : link, fifo, chosen->latency_ms,
                 chosen->cache_mb);
    else
        snprintf(rest, sizeof rest,
                 "a cache of %g MB per node, the whole dataset (link %s, global store %s, "
                 "latency %g ms as configured)",
                 most, link, glob, chosen->latency_ms);
    int k = snprintf(out, n, "%s%s not_met: with %s the stall share is %.4f", first ? "" : "\n",
                     names[row], rest, r->tier_best_stall[row]);
    return k > 0 ? (size_t)k : 0;
}

int plan_tiers(plan_ctx *c, const stall_config *chosen, stall_plan_result *r, stall_err *err)
{
    r->tiers = true;
    for (int i = 0; i < 3; i++)
        r->tier_best_stall[i] = NAN;
    r->tiers_why[0] = '\0';
    double t = r->stall_target, most[3] = {0, 0, 0};
    /* Bandwidths gallop from 1 MB/s; the cache from 1 MB up to the
     * dataset's size per node (a replicated dataset: all of it). */
    int rc = tiers_least(c, chosen, "bandwidth_mb_s", 1, 0, t, &r->tier_link,
                         &r->tier_best_stall[0], &most[0], err);
    if (rc == 0)
        rc = tiers_least(c, chosen, "global_mb_s", 1, 0, t, &r->tier_global, &r->tier_best_stall[1],
                         &most[1], err);
    double top = chosen->dataset_mb;
    if (rc == 0 && !(top > 0)) {
        /* dataset_mb = 0: what an epoch reads; the model resolves it, so
         * bound the search by a cache that is never the limit. */
        top = 1e12;
    }
    if (rc == 0)
        rc = tiers_least(c, chosen, "cache_mb", 1, top, t, &r->tier_cache, &r->tier_best_stall[2],
                         &most[2], err);
    if (rc)
        return rc;
    /* Each row's own run, not one figure for them all (the cache's, at the
     * configured link, was once printed as the stall "with the resource
     * unlimited", beside a storage bandwidth that binds). */
    size_t at = 0, n = sizeof r->tiers_why;
    double least = INFINITY;
    for (int i = 0; i < 3; i++) {
        if (isnan(r->tier_best_stall[i]) || at >= n)
            continue;
        at += tiers_say(chosen, r, i, most[i], at == 0, r->tiers_why + at, n - at);
        least = fmin(least, r->tier_best_stall[i]);
    }
    /* Every row not met: what none of them alone takes away. */
    bool all = !isnan(r->tier_best_stall[0]) && !isnan(r->tier_best_stall[1]) &&
               !isnan(r->tier_best_stall[2]);
    if (all && at < n)
        snprintf(r->tiers_why + at, n - at,
                 "\nno one of them alone brings the stall share (%.4f with the store as "
                 "configured) to stall_target = %g; the least, %.4f, is what the loop and the "
                 "store's other keys leave%s",
                 r->stall_at_workers, t, least,
                 strcmp(r->workers.binding, "not_met") == 0 ? ": see workers below" : "");
    return 0;
}

void plan_tiers_free(stall_config *cfg)
{
    plan_set_real(cfg, "storage", "bandwidth_mb_s", 1e12);
    plan_set_real(cfg, "storage", "global_mb_s", cfg->queue == 1 ? 0 : 1e12);
    plan_set_real(cfg, "storage", "latency_ms", 0);
}

/*
 * plan.c - `stallsim plan` (contract in stall/plan.h).
 *
 * Every question is a search over one key of a mode = model configuration;
 * each probe is one in-memory run of the model job (stall_scenario_run
 * with no_files and a summary pointer), counted. Searches over integers
 * gallop (1, 2, 4, ...) to bracket the answer and then bisect, so a count
 * up to N takes about 2 log2 N runs; bandwidth bisects on a real line to
 * 0.1%. Every search assumes its quantity is monotone in the key (more
 * workers, bandwidth or cores never hurt); brute-force sweeps in
 * tests/test_plan.c hold it to that.
 */
#include "stall/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "feed.h"
#include "memo.h"
#include "model_check.h"
#include "plan_ckpt.h"
#include "plan_int.h"
#include "stall/io.h"
#include "stall/job.h"
#include "stall/limits.h"
#include "stall/report.h"
#include "stall/results.h"
#include "stall/scenario.h"

static void plan_eff(void *observer, const stall_model_params *p)
{
    plan_ctx *c = observer;
    c->have_eff = true;
    c->eff_batch_mb = p->batch_mb;
    c->eff_storage_mb_s = p->storage_mb_s;
    c->eff_per_batch_s = stall_ns_to_s(p->handover + p->pin);
    c->eff_startup_s = p->workers > 0 ? stall_ns_to_s(p->startup) : 0;
    c->eff_workers = p->workers;
    c->eff_batches = p->batches;
    c->eff_ranks = p->ranks;
    c->eff_gpn = p->gpus_per_node;
    double nreq = floor(p->storage.requests + 0.5);
    c->eff_tier_requests =
        p->tiers ? (double)p->batches * p->epochs * (nreq < 1 ? 1 : fmin(nreq, 1e6)) : 0;
    /* the run's own warning (tiers.c), which a probe does not print */
    const stall_storage *s = &p->storage;
    bool whole = p->tiers && s->fit_rho < 0 && s->read_out && s->read_epochs > 0;
    for (int e = 0; whole && e < s->read_epochs; e++)
        whole = s->read_out[e] == 0;
    if (whole)
        c->reads_twice_epochs = s->read_epochs;
}

int plan_sim(plan_ctx *c, const stall_config *cfg, plan_probe *out, stall_err *err)
{
    stall_summary sum;
    stall_run_opts o = {.jobs = 1,
                        .no_files = 1,
                        .plan_probe = 1,
                        .summary = &sum,
                        .on_params = plan_eff,
                        .observer = c,
                        .memo = c->memo};
    (*c->sims)++;
    int rc = stall_scenario_run(cfg, &o, err);
    c->total_sims++;
    if (c->prog.f) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        double s = (double)(t.tv_sec - c->t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - c->t0.tv_nsec);
        stall_progress_line(&c->prog, s, false, "plan: %d simulations, %.1f s", c->total_sims, s);
    }
    if (rc == 0) {
        out->thr = sum.throughput_batches_s;
        out->samples_s = sum.throughput_samples_s;
        out->stall = sum.stall_share;
        out->epoch_s = sum.epoch_time_s;
    }
    return rc;
}

/* Sets an integer or real key as given, as the file would. */
void plan_set_int(stall_config *cfg, const char *section, const char *key, long long v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    stall_err e;
    if (stall_config_apply(cfg, section, key, buf, "plan", &e) != 0)
        abort(); /* the values plan sets are in range by construction */
}

void plan_set_real(stall_config *cfg, const char *section, const char *key, double v)
{
    char buf[STALL_REPR_MAX];
    stall_err e;
    if (stall_config_apply(cfg, section, key, stall_repr(buf, v), "plan", &e) != 0)
        abort();
}

static int plan_keys(const stall_config *cfg, stall_plan_result *r, const char *src, stall_err *err)
{
    r->stall_target = 0.05;
    r->efficiency = 0.80;
    r->max_workers = 64;
    r->max_gpus = 1024;
    r->max_requests = STALL_PLAN_TIER_REQUESTS;
    r->max_request_nodes = STALL_PLAN_TIER_REQUEST_NODES;
    for (int i = 0; i < cfg->nextra; i++) {
        const struct stall_config_extra *x = &cfg->extra[i];
        char where[STALL_PATH_MAX + 96];
        if (x->command_line && strcmp(x->section, "sweep") == 0)
            snprintf(where, sizeof where, "--sweep %s", x->key);
        else if (x->command_line)
            snprintf(where, sizeof where, "--set %s.%s", x->section, x->key);
        else if (x->line > 0)
            snprintf(where, sizeof where, "%s:%d: [%s] %s", src, x->line, x->section, x->key);
        else
            snprintf(where, sizeof where, "%s: [%s] %s", src, x->section, x->key);
        if (strcmp(x->section, "plan") != 0)
            return stall_err_set(err, STALL_ECONFIG, "%s: only `stallsim %s` reads [%s]", where,
                                 x->section, x->section);
        /* decimal text, as the INI loader reads its numbers */
        double v = 0;
        char why[256];
        bool num = stall_config_number(x->value, &v, why, sizeof why) == 0;
        if (strcmp(x->key, "stall_target") == 0 && num && v >= 0 && v <= 1)
            r->stall_target = v;
        else if (strcmp(x->key, "efficiency") == 0 && num && v > 0 && v <= 1)
            r->efficiency = v;
        /* the simulator's own limits (stall/limits.h): a search past them
         * would set a count the configuration refuses */
        else if (strcmp(x->key, "max_workers") == 0 && num && v == floor(v) && v >= 1 &&
                 v <= STALL_LIMIT_WORKERS)
            r->max_workers = (int)v;
        else if (strcmp(x->key, "max_gpus") == 0 && num && v == floor(v) && v >= 1 &&
                 v <= STALL_LIMIT_RANKS)
            r->max_gpus = (int)v;
        else if (strcmp(x->key, "target_throughput") == 0 && num && v > 0)
            r->target_throughput = v;
        else if (strcmp(x->key, "target_epoch_s") == 0 && num && v > 0)
            r->target_epoch_s = v;
        else if (strcmp(x->key, "ckpt_stall_budget") == 0 && num && v > 0 && v < 1)
            r->ckpt_budget = v;
        else if (strcmp(x->key, "max_requests") == 0 && num && v >= 1 && v <= 1e12) {
            r->max_requests = v;
            r->max_requests_given = true;
            if (!stall_config_tiers(cfg))
                return stall_err_set(err, STALL_ECONFIG,
                                     "%s: has no effect without the storage tiers (it bounds the "
                                     "requests a run of the scaling curve simulates)",
                                     where);
        } else if (strcmp(x->key, "max_request_nodes") == 0 && num && v >= 1 && v <= 1e15) {
            r->max_request_nodes = v;
            r->max_request_nodes_given = true;
            if (!stall_config_tiers(cfg))
                return stall_err_set(err, STALL_ECONFIG,
                                     "%s: has no effect without the storage tiers (it bounds the "
                                     "requests x nodes a run of the scaling curve simulates)",
                                     where);
            /* a FIFO store queues each request once, whatever the nodes */
            if (cfg->queue == 1)
                return stall_err_set(err, STALL_ECONFIG,
                                     "%s: has no effect with [storage] queue = fifo (a FIFO "
                                     "store's request costs the same at any node count; "
                                     "max_requests bounds them)",
                                     where);
        } else if (strcmp(x->key, "stall_target") == 0 || strcmp(x->key, "efficiency") == 0 ||
                   strcmp(x->key, "max_workers") == 0 || strcmp(x->key, "max_gpus") == 0 ||
                   strcmp(x->key, "target_throughput") == 0 ||
                   strcmp(x->key, "target_epoch_s") == 0 ||
                   strcmp(x->key, "ckpt_stall_budget") == 0 ||
                   strcmp(x->key, "max_requests") == 0 || strcmp(x->key, "max_request_nodes") == 0)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: bad value '%s' (stall_target in [0, 1], efficiency in (0, "
                                 "1], max_workers 1..1024, max_gpus 1..65536, "
                                 "target_throughput and target_epoch_s > 0, ckpt_stall_budget in "
                                 "(0, 1), max_requests 1..1e12, max_request_nodes 1..1e15)",
                                 where, x->value);
        else
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: unknown key (expected stall_target, efficiency, max_workers, "
                                 "max_gpus, target_throughput, target_epoch_s, "
                                 "ckpt_stall_budget, max_requests or max_request_nodes)",
                                 where);
    }
    return 0;
}

/* ---- 1. workers ---- */

static int plan_workers(plan_ctx *c, stall_plan_result *r, stall_err *err)
{
    c->sims = &r->workers.sims;
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    *cfg = c->base;
    plan_probe p, best = {0};
    int lo = 0, hi = 0, rc = 0; /* lo fails (0: none tried), hi meets (0: none found) */
    int best_w = 0;             /* the count of least stall among those tried */
    double stall_hi = NAN;
    for (int w = 1; rc == 0;) {
        plan_set_int(cfg, "loader", "workers", w);
        rc = plan_sim(c, cfg, &p, err);
        if (rc)
            break;
        /* Every question but the GPU counts' asks at the configuration's
         * GPUs, tens of runs: one past the bounds on the storage tiers'
         * simulation refuses the plan (the GPU-count searches stop short
         * of such runs, and say so). */
        plan_cost e;
        char t[640];
        plan_cost_at(c, cfg, r, c->eff_ranks, c->eff_gpn, false, &e);
        if (w == 1 && e.over) {
            rc = stall_err_set(err, STALL_ECONFIG,
                               "plan: %s; plan makes tens of runs at the configuration's GPUs "
                               "(the workers, bandwidth, cores and tier questions), so it stops "
                               "here",
                               plan_cost_text(r, &e, t, sizeof t));
            break;
        }
        if (best_w == 0 || p.stall < best.stall) {
            best = p;
            best_w = w;
        }
        if (p.stall <= r->stall_target) {
            hi = w;
            stall_hi = p.stall;
            break;
        }
        lo = w;
        if (w == r->max_workers)
            break;
        w = w * 2 > r->max_workers ? r->max_workers : w * 2;
    }
    while (rc == 0 && hi > 0 && hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        plan_set_int(cfg, "loader", "workers", mid);
        rc = plan_sim(c, cfg, &p, err);
        if (rc == 0 && p.stall <= r->stall_target) {
            hi = mid;
            stall_hi = p.stall;
        } else {
            lo = mid;
        }
    }
    free(cfg);
    if (rc)
        return rc;
    if (hi > 0) {
        r->workers.value = hi;
        r->stall_at_workers = stall_hi;
        snprintf(r->workers.binding, sizeof r->workers.binding, "met");
        return 0;
    }
    /* None meets the target: the count of least stall among those tried
     * (more workers can stall more: each starts every epoch), on which the
     * rest of the plan builds. */
    r->workers.value = best_w;
    r->stall_at_workers = best.stall;
    p = best;
    snprintf(r->workers.binding, sizeof r->workers.binding, "not_met");
    const stall_config *b = &c->base;
    /* As the model took them (a trace gives hand-over, start-up and bytes
     * where the INI says 0). */
    double per_batch = c->have_eff ? c->eff_per_batch_s : b->handover_s + b->pin_memory_s;
    /* at best_w: the start-up grows with the node's worker processes
     * (docs/model.md 2.4), and the last run may have had other workers */
    double startup = c->have_eff && c->eff_workers > 0
                         ? c->eff_startup_s * (double)best_w / (double)c->eff_workers
                         : 0;
    double floor_s = per_batch * (double)(c->have_eff ? c->eff_batches : 0) + startup;
    c->why_mb = c->have_eff ? c->eff_batch_mb : b->batch_mb;
    c->why_mb_s = c->have_eff ? c->eff_storage_mb_s : b->bandwidth_mb_s;
    /* The floor here, at the runs that found it; the storage and the cores
     * once their answers say whether they bind (plan_workers_why). */
    c->why_floor[0] = '\0';
    if (per_batch > 0 &&
        (floor_s <= 0 || p.epoch_s <= 0 || floor_s / p.epoch_s >= r->stall_target * 0.5))
        snprintf(c->why_floor, sizeof c->why_floor,
                 "a stall floor: the loop pays the per-batch hand-over and pinning "
                 "(%g s per batch) and each epoch's empty start (the workers' "
                 "start-up, %g s at %d per GPU and longer with more, then the first "
                 "fetch) whatever the workers",
                 per_batch, startup, best_w);
    return 0;
}

/* ---- 3. bandwidth and cores ---- */

/* The least value of section.key (from *hi upwards, doubling; then
 * bisection down to lo) that keeps throughput within 1% of thr0, the
 * unlimited run's: galloping then bisection, as throughput does not fall
 * when the resource grows. Integer keys stop at a gap of 1 (and at 2^20),
 * real ones at 0.1% of the value. The answer is left in *hi. */
static int plan_least(plan_ctx *c, stall_config *cfg, const char *section, const char *key,
                      bool integer, double lo, double *hi, double thr0, stall_err *err)
{
    plan_probe p;
    int rc = 0;
    for (;;) {
        if (integer)
            plan_set_int(cfg, section, key, (long long)*hi);
        else
            plan_set_real(cfg, section, key, *hi);
        rc = plan_sim(c, cfg, &p, err);
        if (rc || p.thr >= 0.99 * thr0 || (integer && *hi >= 1 << 20))
            break;
        lo = *hi;
        *hi *= 2;
    }
    while (rc == 0 && (integer ? *hi - lo > 1 : *hi - lo > 0.001 * *hi)) {
        double mid = integer ? lo + floor((*hi - lo) / 2) : 0.5 * (lo + *hi);
        if (integer)
            plan_set_int(cfg, section, key, (long long)mid);
        else
            plan_set_real(cfg, section, key, mid);
        rc = plan_sim(c, cfg, &p, err);
        if (rc == 0 && p.thr >= 0.99 * thr0)
            *hi = mid;
        else
            lo = mid;
    }
    return rc;
}

static int plan_bandwidth(plan_ctx *c, const stall_config *chosen, stall_plan_result *r,
                          stall_err *err)
{
    c->sims = &r->bandwidth.sims;
    r->bandwidth.value = NAN;
    /* The bytes per batch as the model takes them: the INI's, or a tidy
     * trace's bytes column. */
    double batch_mb = chosen->batch_mb;
    if (batch_mb <= 0 && c->have_eff)
        batch_mb = c->eff_batch_mb;
    if (batch_mb <= 0) {
        snprintf(r->bandwidth.binding, sizeof r->bandwidth.binding, "not_modelled");
        snprintf(r->bandwidth_note, sizeof r->bandwidth_note,
                 "storage_bandwidth_mb_s is not_modelled: %s, so nothing tells the MB a batch "
                 "reads; set [storage] batch_mb to ask it",
                 chosen->format == STALL_FORMAT_NONE ? "there is no trace"
                 : chosen->format == STALL_FORMAT_TIDY
                     ? "the trace has no bytes column and the INI sets no [storage] batch_mb"
                     : "the trace records no bytes per batch (only a tidy trace's bytes column "
                       "does) and the INI sets no [storage] batch_mb");
        return 0;
    }
    /* A FIFO store has one bandwidth (models/storage.c): with one queue
     * for every node (global_mb_s) there is no node's bandwidth to search,
     * and each probe of one would be refused beside it. */
    if (chosen->queue == 1 && chosen->global_mb_s > 0) {
        snprintf(r->bandwidth.binding, sizeof r->bandwidth.binding, "not_modelled");
        snprintf(r->bandwidth_note, sizeof r->bandwidth_note,
                 "storage_bandwidth_mb_s is not_modelled: [storage] queue = fifo with "
                 "global_mb_s is one queue for every node, which has no bandwidth per node (a "
                 "FIFO store has one bandwidth); the tiers' answer names the least global_mb_s");
        return 0;
    }
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    *cfg = *chosen;
    cfg->bandwidth_mb_s = 0;
    plan_probe p0;
    int rc = plan_sim(c, cfg, &p0, err);
    /* The least it can be: the unlimited run's bytes per second per node. */
    int nodes = 1;
    if (cfg->gpus > 0 && cfg->gpus_per_node > 0)
        nodes = (int)((cfg->gpus + cfg->gpus_per_node - 1) / cfg->gpus_per_node);
    double lo = 0, hi = rc == 0 ? 0.99 * p0.thr * batch_mb / nodes : 0;
    if (!(hi > 0))
        hi = 1;
    if (rc == 0)
        rc = plan_least(c, cfg, "storage", "bandwidth_mb_s", false, lo, &hi, p0.thr, err);
    free(cfg);
    if (rc)
        return rc;
    r->bandwidth.value = ceil(hi * 10) / 10;
    snprintf(r->bandwidth.binding, sizeof r->bandwidth.binding, "%s",
             chosen->bandwidth_mb_s > 0 && chosen->bandwidth_mb_s < r->bandwidth.value ? "binds"
                                                                                       : "ok");
    return 0;
}

/* The reference is the same model with a core for every process of a node
 * (2^20, far above its workers and training processes): with [cluster]
 * cores a fetch is split into its CPU part, on the node's cores, and the
 * rest, and with the storage tiers the reads come before the CPU part,
 * where without cores the whole fetch is waiting spread between the
 * reads. The run without cores is thus another model, which no core count
 * gives back (with the tiers its throughput was 1.4% higher, and the
 * search went on to its bound of 2^20: 41 tier simulations, not_met). With
 * this reference the answer is at most the node's processes, found in
 * about 2 log2 of them runs. */
static int plan_cores(plan_ctx *c, const stall_config *chosen, stall_plan_result *r, stall_err *err)
{
    c->sims = &r->cores.sims;
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    *cfg = *chosen;
    /* The trace's contention is found on its capture machine's cores, the
     * same for every count tried: where the trace does not say them, the
     * configuration's cores (none given: the trace taken as uncontended),
     * not each count's own (docs/model.md 6). */
    const char *from = NULL;
    int tc = wi_trace_cores(chosen, (int)chosen->cores, &from, err);
    if (tc < 0) {
        free(cfg);
        return STALL_EPARSE;
    }
    if (!from)
        cfg->trace_cores = tc > 0 ? tc : 1 << 20;
    plan_set_int(cfg, "cluster", "cores", 1 << 20);
    plan_probe p0;
    int rc = plan_sim(c, cfg, &p0, err);
    double hi = 1;
    if (rc == 0)
        rc = plan_least(c, cfg, "cluster", "cores", true, 0, &hi, p0.thr, err);
    free(cfg);
    if (rc)
        return rc;
    r->cores.value = hi;
    snprintf(r->cores.binding, sizeof r->cores.binding, "%s",
             chosen->cores > 0 && chosen->cores < hi ? "binds" : "ok");
    /* A count that rests on the default share, not on a measurement: said. */
    if (!c->trace_cpu && !stall_config_given(chosen, "fetch", "cpu_share"))
        snprintf(r->cores_note, sizeof r->cores_note,
                 "cores_per_node assumes every fetch is CPU work throughout ([fetch] cpu_share = "
                 "%g, the default: %s); set [fetch] cpu_share to the share of a fetch spent on a "
                 "core (stallsim calibrate fits it from traces of the job at two or more worker "
                 "counts)",
                 chosen->cpu_share,
                 chosen->format == STALL_FORMAT_NONE ? "no trace records CPU time"
                                                     : "the trace records no CPU time");
    return 0;
}

/* Why no worker count meets the stall target: the floor plan_workers
 * found, the storage bandwidth where its answer binds (the configuration's
 * is below what the throughput needs) and the host cores where theirs
 * does; a resource that does not bind is not blamed (a new user's plan
 * at 100000 MB/s said that bandwidth capped the batches). */
static void plan_workers_why(const plan_ctx *c, const stall_config *chosen, stall_plan_result *r)
{
    if (strcmp(r->workers.binding, "not_met") != 0)
        return;
    char cause[640];
    size_t at = (size_t)snprintf(cause, sizeof cause, "%s", c->why_floor);
    if (strcmp(r->bandwidth.binding, "binds") == 0 && c->why_mb_s > 0 && c->why_mb > 0 &&
        at < sizeof cause)
        at += (size_t)snprintf(cause + at, sizeof cause - at,
                               "%sthe storage bandwidth (%g MB/s per node for %g MB per batch, "
                               "below the %.1f MB/s of storage_bandwidth_mb_s) caps the batches "
                               "that more workers could load",
                               at ? "; and " : "", c->why_mb_s, c->why_mb, r->bandwidth.value);
    if (strcmp(r->cores.binding, "binds") == 0 && at < sizeof cause)
        at += (size_t)snprintf(cause + at, sizeof cause - at,
                               "%sthe %lld host cores per node are shared by every worker: more "
                               "workers do not load faster",
                               at ? "; and " : "", (long long)chosen->cores);
    if (at == 0)
        snprintf(cause, sizeof cause,
                 "a batch takes longer to load than %d workers can hide behind compute",
                 r->max_workers);
    snprintf(r->why, sizeof r->why,
             "no worker count up to max_workers = %d reaches stall_target = %g (the least "
             "stall share, %.4f, at %.0f): %s",
             r->max_workers, r->stall_target, r->stall_at_workers, r->workers.value, cause);
}

/* Checks the configuration planned, its keys as the questions that read
 * them run them: the cores question runs with [cluster] cores, so [fetch]
 * and [compute] cpu_share apply without it (as [storage] batch_mb does for
 * the bandwidth question); and with [plan] ckpt_stall_budget and no
 * interval, the [checkpoint] keys describe the checkpoint whose interval
 * is the answer. `run` refuses both, having no such question. */
static int plan_check(const plan_ctx *c, const stall_plan_result *r, stall_err *err)
{
    const stall_config *b = &c->base;
    if (r->ckpt_budget > 0 && b->ckpt_mode == 2) {
        char at[STALL_PATH_MAX + 96];
        stall_config_origin(b, "checkpoint", "mode", at, sizeof at);
        return stall_err_set(err, STALL_ECONFIG,
                             "[plan] ckpt_stall_budget: has no effect with %s = off (no "
                             "checkpoints to plan)",
                             at);
    }
    /* plan answers from one run per count, drawn from [run] seed: it runs
     * no replications and gives no interval (run does) */
    if (b->replications > 1 && stall_config_given(b, "run", "replications")) {
        char at[STALL_PATH_MAX + 96];
        stall_config_origin(b, "run", "replications", at, sizeof at);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect in plan: its answers come from one run at each "
                             "worker and GPU count (drawn from [run] seed), with no interval over "
                             "seeds; replications are stallsim run's",
                             at);
    }
    stall_config *ck = stall_xmalloc(sizeof *ck);
    *ck = *b;
    if (ck->cores == 0)
        plan_set_int(ck, "cluster", "cores", 1 << 20);
    if (r->ckpt_budget > 0 && b->ckpt_every <= 0 && b->ckpt_every_s <= 0)
        plan_set_int(ck, "checkpoint", "every_iterations", 1);
    int rc = stall_config_check(ck, err);
    free(ck);
    return rc;
}

/* The configuration's GPU count as the model reads it, and what its trace
 * records (c->trace_ckpt, c->trace_cpu, r->late_*); the keys without effect in any of
 * the plan's runs refused (plan_effects). */
static int plan_trace(plan_ctx *c, stall_plan_result *r, int *ranks, stall_err *err)
{
    stall_measured m = {0};
    bool have = c->base.format != STALL_FORMAT_NONE;
    wi_inputs in;
    wi_inputs_resolve(&c->base, &in);
    int rc = have ? wi_load_measured(&in.trace, &m, err) : 0;
    if (rc == 0) {
        stall_model_params mp;
        wi_params(&in.what, have ? &m : NULL, true, &mp);
        *ranks = mp.ranks;
        rc = plan_effects(&c->base, have ? &m : NULL, mp.ranks, r, err);
        /* Ranks that began an epoch apart (docs/model.md 2.4): a late
         * launch is no question of workers, GPUs, bandwidth or cores, and
         * replayed at the trace's GPU count only it would make that count
         * an outlier of the curve: every run of the plan begins each epoch
         * with every rank, and the output says so. */
        r->late_rank = -1;
        if (rc == 0 && have && m.late_any && stall_config_given(&c->base, "ranks", "late_start")) {
            char at[STALL_PATH_MAX + 64];
            stall_config_origin(&c->base, "ranks", "late_start", at, sizeof at);
            rc = stall_err_set(err, STALL_ECONFIG,
                               "%s: plan's runs begin every epoch with every rank together (a "
                               "launch's late start is no question of workers, GPUs, bandwidth "
                               "or cores); ask it of stallsim run",
                               at);
        }
        if (rc == 0 && have && m.late_any) {
            /* said where the spread exceeds 5% of its epoch, as run and
             * validate say it */
            int w = stall_measured_late_epoch(&m, 0.05);
            if (w >= 0) {
                r->late_s = m.start_spread_s[w];
                r->late_rank = m.start_last[w];
                r->late_epoch = m.epoch0 + w;
            }
            stall_err e2;
            if (stall_config_apply(&c->base, "ranks", "late_start", "none", "plan", &e2) != 0)
                abort();
        }
        c->trace_ckpt = have && m.ckpt_n > 0;
        c->trace_cpu = have && m.cpu.has;
        /* The cores the model takes from a trace's CPU columns where the
         * INI gives none: given here, as --set cluster.cores would, so that
         * every answer (its binding, the reasons, the scaling's limit)
         * reads the cores the runs simulate, not whether the key was given
         * (the same configuration once gave `cores_per_node 3 ok` and,
         * with --set cluster.cores=2, the trace's own count, `3 binds`). */
        if (rc == 0 && have && mp.cores > 0 && !stall_config_given(&c->base, "cluster", "cores"))
            plan_set_int(&c->base, "cluster", "cores", mp.cores);
    }
    /* kept for the probes, which read the same [trace] */
    if (!(rc == 0 && have && wi_memo_keep(c->memo, &in.trace, &m)))
        stall_measured_free(&m);
    return rc;
}

int stall_plan_compute(const stall_config *cfg, stall_plan_result *r, stall_err *err)
{
    return plan_compute(cfg, r, NULL, err);
}

int plan_compute(const stall_config *cfg, stall_plan_result *r, FILE *progress, stall_err *err)
{
    memset(r, 0, sizeof *r);
    r->workers.gpu_h = r->gpus.gpu_h = r->bandwidth.gpu_h = r->cores.gpu_h = NAN;
    r->workers.data = r->gpus.data = NAN;
    r->throughput_gpus.value = r->epoch_gpus.value = NAN;
    r->throughput_gpus.gpu_h = r->epoch_gpus.gpu_h = NAN;
    r->tier_link.value = r->tier_global.value = r->tier_cache.value = NAN;
    r->tier_link.gpu_h = r->tier_global.gpu_h = r->tier_cache.gpu_h = NAN;
    plan_ctx *c = stall_xcalloc(1, sizeof *c);
    c->memo = wi_memo_new();
    c->base = *cfg;
    c->base.nextra = 0;
    c->src = stall_config_src(cfg);
    c->prog.f = progress;
    clock_gettime(CLOCK_MONOTONIC, &c->t0);
    int rc = plan_keys(cfg, r, c->src, err);
    char at[STALL_PATH_MAX + 64];
    if (rc == 0 && cfg->mode != STALL_MODE_MODEL) {
        stall_config_origin(cfg, "scenario", "mode", at, sizeof at);
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: plan simulates mode = model (the closed loop); fix: --set "
                           "scenario.mode=model",
                           at);
    }
    if (rc == 0 && (cfg->format == STALL_FORMAT_KINETO || cfg->format == STALL_FORMAT_DFTRACER)) {
        stall_config_origin(cfg, "trace", "format", at, sizeof at);
        /* a Kineto trace does not record its workers (run asks for them
         * where its DataLoader had some); a dftracer trace does */
        bool ask =
            cfg->format == STALL_FORMAT_KINETO && !stall_config_given(cfg, "trace", "workers");
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: plan takes tidy or dsanalyzer traces (or none); ask its "
                           "what-ifs one at a time with stallsim run on this trace (mode = "
                           "model), e.g. --set loader.workers=8%s",
                           at,
                           ask ? " (and --set trace.workers=N where its DataLoader had workers: "
                                 "a Kineto trace does not record how many)"
                               : "");
    }
    if (rc == 0 && cfg->fetch_align.n > 1 && stall_config_given(cfg, "align", "fetch")) {
        stall_config_origin(cfg, "align", "fetch", at, sizeof at);
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: plan takes one policy, the list has %d; fix: --set "
                           "align.fetch=none (or avg, or min)",
                           at, cfg->fetch_align.n);
    }
    if (rc == 0)
        rc = plan_check(c, r, err);
    if (rc == 0) /* a missing trace file names its INI line, as run's does */
        rc = stall_job_inputs_json(cfg, err);
    int ranks = 1;
    if (rc == 0)
        rc = plan_trace(c, r, &ranks, err);
    /* The checkpoint question without an interval given or recorded: the
     * interval is its answer, the other answers are the loop's without
     * checkpoints, and ckbase keeps the [checkpoint] keys for the question. */
    stall_config *ckbase = NULL;
    if (rc == 0 && r->ckpt_budget > 0 && !plan_ckpt_on(c, &c->base)) {
        ckbase = stall_xmalloc(sizeof *ckbase);
        *ckbase = c->base;
        plan_ckpt_none(c, &c->base);
    }
    stall_config *chosen = stall_xmalloc(sizeof *chosen);
    if (rc == 0)
        rc = plan_workers(c, r, err);
    if (rc == 0) {
        *chosen = c->base;
        plan_set_int(chosen, "loader", "workers", (long long)r->workers.value);
    }
    if (rc == 0) {
        stall_config *curve = stall_xmalloc(sizeof *curve);
        *curve = *chosen;
        if (curve->format != STALL_FORMAT_NONE && curve->resample == STALL_RESAMPLE_NONE) {
            stall_err e;
            stall_config_apply(curve, "fetch", "resample", "bootstrap", "plan", &e);
            r->resampled = true;
        }
        int gpn = chosen->gpus_per_node > 0 ? (int)chosen->gpus_per_node : ranks;
        rc = plan_scaling(c, curve, gpn, r, err);
        /* The configuration's own epoch: the unit of the answers' epoch
         * data, and the workers' answer's GPU-hours. */
        plan_probe p0;
        c->sims = &r->workers.sims;
        if (rc == 0 && (rc = plan_sim(c, chosen, &p0, err)) == 0) {
            r->workers.gpu_h = ranks * p0.epoch_s / 3600.0;
            r->workers.gpus = ranks;
            r->workers.stall = r->stall_at_workers;
            c->base_amount = plan_epoch_amount(&p0);
            r->workers.data = 1.0;
        }
        if (rc == 0 && r->target_throughput > 0)
            rc = plan_target(c, curve, gpn, false, r, &r->throughput_gpus, r->throughput_why,
                             sizeof r->throughput_why, err);
        if (rc == 0 && r->target_epoch_s > 0)
            rc = plan_target(c, curve, gpn, true, r, &r->epoch_gpus, r->epoch_why,
                             sizeof r->epoch_why, err);
        /* GPU-hours per epoch of the two GPU-count answers: the workers'
         * at the configuration's GPUs, the scaling's at its count. */
        plan_probe p;
        c->sims = &r->gpus.sims;
        if (rc == 0 && (rc = plan_curve_point(c, curve, gpn, (int)r->gpus.value, &p, err)) == 0) {
            r->gpus.gpu_h = r->gpus.value * p.epoch_s / 3600.0;
            r->gpus.gpus = (int)r->gpus.value;
            r->gpus.stall = p.stall;
            r->gpus.data = plan_epoch_data(c, &p);
        }
        free(curve);
    }
    if (rc == 0 && r->ckpt_budget > 0) {
        if (ckbase)
            plan_set_int(ckbase, "loader", "workers", (long long)r->workers.value);
        plan_ckpt_answer ca;
        rc = plan_ckpt(ckbase ? ckbase : chosen, r->ckpt_budget, c->memo, &ca, err);
        r->ckpt_every.value = ca.value;
        r->ckpt_every.gpu_h = NAN;
        r->ckpt_every.sims = ca.sims;
        snprintf(r->ckpt_every.binding, sizeof r->ckpt_every.binding, "%s", ca.binding);
        int n = snprintf(r->ckpt_why, sizeof r->ckpt_why, "%s", ca.why);
        if (ckbase && n >= 0 && (size_t)n < sizeof r->ckpt_why)
            snprintf(r->ckpt_why + n, sizeof r->ckpt_why - (size_t)n,
                     "; the answers above are without checkpoints (no interval given)");
    }
    if (rc == 0)
        rc = plan_bandwidth(c, chosen, r, err);
    if (rc == 0)
        rc = plan_cores(c, chosen, r, err);
    if (rc == 0)
        plan_workers_why(c, chosen, r);
    if (rc == 0 && stall_config_tiers(chosen))
        rc = plan_tiers(c, chosen, r, err);
    if (rc == 0 && c->reads_twice_epochs > 0)
        wi_tiers_twice_text(r->reads_note, sizeof r->reads_note, c->reads_twice_epochs == 1,
                            " in every answer above");
    if (rc == 0) {
        int w = (int)r->workers.value;
        char least[32];
        if (strcmp(r->workers.binding, "not_met") == 0)
            snprintf(r->sentence, sizeof r->sentence,
                     "Data loading binds: no worker count up to %d per GPU brings the stall "
                     "share to %g; the least, %s, is at %d workers per GPU, on which the plan's "
                     "other answers build.",
                     r->max_workers, r->stall_target,
                     plan_miss_text(least, sizeof least, r->stall_at_workers, r->stall_target), w);
        else if (strcmp(r->bandwidth.binding, "binds") == 0)
            snprintf(r->sentence, sizeof r->sentence,
                     "Storage binds: %d workers per GPU reach the stall target, but %g MB/s per "
                     "node is below the %.1f MB/s they need.",
                     w, chosen->bandwidth_mb_s, r->bandwidth.value);
        else if (strcmp(r->cores.binding, "binds") == 0)
            snprintf(r->sentence, sizeof r->sentence,
                     "Host cores bind: %d workers per GPU reach the stall target, but %lld cores "
                     "per node are fewer than the %.0f they need.",
                     w, (long long)chosen->cores, r->cores.value);
        else if (strcmp(r->gpus.binding, "max_gpus") == 0)
            snprintf(r->sentence, sizeof r->sentence,
                     "Nothing binds at %d GPU%s with %d workers per GPU (stall share %.3f); "
                     "scaling stays efficient up to max_gpus = %d GPUs, the bound of the search.",
                     ranks, ranks == 1 ? "" : "s", w, r->stall_at_workers, r->max_gpus);
        else if (strcmp(r->gpus.binding, "cost") == 0)
            snprintf(r->sentence, sizeof r->sentence,
                     "Nothing binds at %d GPU%s with %d workers per GPU (stall share %.3f); "
                     "scaling stays efficient up to %d GPUs, where the search stopped (the "
                     "storage tiers' simulation cost, above).",
                     ranks, ranks == 1 ? "" : "s", w, r->stall_at_workers, r->cut_gpus);
        else {
            const char *lim =
                strcmp(r->gpus.binding, "checkpoint") == 0 ? "checkpoint writes" : r->gpus.binding;
            snprintf(r->sentence, sizeof r->sentence,
                     "Nothing binds at %d GPU%s with %d workers per GPU (stall share %.3f); "
                     "scaling stays efficient up to %.0f GPU%s, then %s limit%s it.",
                     ranks, ranks == 1 ? "" : "s", w, r->stall_at_workers, r->gpus.value,
                     r->gpus.value == 1 ? "" : "s", lim, lim[strlen(lim) - 1] == 's' ? "" : "s");
        }
    }
    /* gone before the table, an error or the next command's line */
    stall_progress_clear(&c->prog);
    free(ckbase);
    free(chosen);
    wi_memo_free(c->memo);
    free(c);
    return rc;
}

/* ---- output ---- */

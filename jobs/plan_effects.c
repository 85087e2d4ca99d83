/*
 * plan_effects.c - the what-if keys plan refuses where none of its runs
 * gives them an effect (plan_int.h: plan_effects), judged as run and sweep
 * judge them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"
#include "model_check.h"
#include "modes.h"
#include "plan_int.h"

/* The what-if of cfg at g GPUs (g <= 0: cfg's own count) with one worker
 * per GPU, under `scaling` (NULL: cfg's own), as the model reads it. Every
 * run of a plan has workers (1..max_workers), and the effects judged here
 * need only that there are some. */
static void plan_fx_at(const stall_config *cfg, const stall_measured *m, int g, int gpn,
                       const char *scaling, stall_model_effects *fx)
{
    stall_config *x = stall_xmalloc(sizeof *x);
    *x = *cfg;
    plan_set_int(x, "loader", "workers", 1);
    stall_err e;
    if (g > 0) {
        plan_set_int(x, "cluster", "gpus", g);
        plan_set_int(x, "cluster", "gpus_per_node", g < gpn ? g : gpn);
        if (x->format != STALL_FORMAT_NONE && x->resample == STALL_RESAMPLE_NONE &&
            stall_config_apply(x, "fetch", "resample", "bootstrap", "plan", &e) != 0)
            abort();
    }
    if (scaling && stall_config_apply(x, "cluster", "scaling", scaling, "plan", &e) != 0)
        abort();
    wi_inputs *in = stall_xmalloc(sizeof *in);
    wi_inputs_resolve(x, in);
    stall_model_params p;
    wi_params(&in->what, m, true, &p);
    wi_effects(m, &in->what, &p, fx);
    free(in);
    free(x);
}

/* The what-if keys that `run` refuses where they change nothing
 * (stall_model_effects_check), judged over every run the plan can make, as
 * a sweep judges them over its points: the configuration's GPUs, and 1 to
 * max_gpus GPUs under weak scaling (the curve, gpus_for_throughput) and,
 * with target_epoch_s, strong scaling, each with 1 to max_workers workers
 * (a key with an effect in any of them is taken). The effects are
 * monotone in the GPU count (more ranks than the trace, than a node, than
 * one) or, under strong scaling, in the batches per GPU, so 1 and max_gpus
 * stand for the counts between, except a partial last batch, which is
 * looked for at every count. [storage] batch_mb is taken: the bandwidth
 * question, which every plan asks, runs with a bandwidth and reads it.
 * [cluster] cpu_waits_out acts wherever a run shares cores with a trace's
 * CPU columns: the cores question runs with cores, so it is taken with any
 * trace that has them and refused without (before, the first probe refused
 * it at the configuration's cores = 0, though the cores question used it).
 * [cluster] scaling is judged at the configuration's GPUs only: the curve
 * and the GPU targets set their own. m: the trace's grid (NULL without a
 * trace). */
int plan_effects(const stall_config *cfg, const stall_measured *m, int ranks,
                 const stall_plan_result *r, stall_err *err)
{
    int gpn = cfg->gpus_per_node > 0 ? (int)cfg->gpus_per_node : ranks;
    stall_model_effects any, fx;
    plan_fx_at(cfg, m, 0, gpn, NULL, &any);
    bool rescales = any.rescales;
    const int gs[2] = {1, r->max_gpus};
    for (int s = 0; s < (r->target_epoch_s > 0 ? 2 : 1); s++)
        for (int i = 0; i < 2; i++) {
            plan_fx_at(cfg, m, gs[i], gpn, s ? "strong" : "weak", &fx);
            stall_model_effects_or(&any, &fx); /* rescales, reads, cpu_waits: set below */
        }
    /* A partial last batch at any count the epoch target may try (strong
     * scaling over the trace's dataset, no [run] batches). */
    if (r->target_epoch_s > 0 && m && !any.drops && cfg->batches <= 0) {
        wi_inputs *in = stall_xmalloc(sizeof *in);
        wi_inputs_resolve(cfg, in);
        int64_t l = wi_dataset_samples(&in->what, m), b = wi_batch_samples(&in->what, m);
        for (int g = 1; g <= r->max_gpus && !any.drops; g++)
            any.drops = wi_strong_batches(l, g, b, true) != wi_strong_batches(l, g, b, false);
        free(in);
    }
    any.rescales = rescales;
    any.reads = true;
    any.cpu_waits = m && m->cpu.has;
    /* its probes run one worker per GPU; the workers question tries up to
     * max_workers */
    any.orders = r->max_workers > 1 && (cfg->batches > 1 || !m || m->batches > 1);
    /* the workers question tries 1 worker per GPU: the factor matters
     * wherever an epoch has more than one batch per GPU (strong scaling
     * only shrinks the trace's) */
    any.prefetches = cfg->batches > 1 || !m || m->batches > 1;
    /* with [plan] ckpt_stall_budget the interval is the answer, whatever
     * the configuration's */
    any.ckpts |= r->ckpt_budget > 0;
    /* [report] keys: left out by plan, and listed (plan_out.c) */
    any.batches_max = INT64_MAX;
    int rc = stall_model_effects_check(cfg, &any, NULL, err);
    /* [storage] trace_cache_mb fits the trace's read against its other
     * epochs: a trace of one has none (model_job.c refuses it on a run;
     * plan's probes run it as not given), unless it is the cache of the
     * run at the trace's storage */
    if (rc == 0 && (!m || m->epochs < 2) && stall_config_given(cfg, "storage", "trace_cache_mb") &&
        !stall_config_given(cfg, "storage", "trace_mb_s") &&
        !stall_config_given(cfg, "storage", "trace_latency_ms")) {
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "storage", "trace_cache_mb", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect: %s, and its read is fitted against the others' "
                             "(its fetches are taken whole); leave it out",
                             where, m ? "the trace has one epoch" : "there is no measured trace");
    }
    if (rc && err) {
        size_t n = strlen(err->msg);
        snprintf(err->msg + n, sizeof err->msg - n,
                 " (plan judges it over all its runs: %d GPU%s as configured, and GPU counts 1 "
                 "to %d ([plan] max_gpus), with 1 to %d workers per GPU ([plan] max_workers))",
                 ranks, ranks == 1 ? "" : "s", r->max_gpus, r->max_workers);
    }
    return rc;
}

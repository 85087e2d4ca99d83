/*
 * plan_out.c - `stallsim plan`'s files and terminal report (stall_plan_run,
 * stall/plan.h) over the answers stall_plan_compute (plan.c) finds.
 */
#include "stall/plan.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "feed.h"
#include "plan_int.h"
#include "stall/io.h"
#include "stall/job.h"
#include "stall/report.h"
#include "stall/results.h"
#include "stall/scenario.h"

static void plan_num(FILE *f, double v)
{
    if (isnan(v))
        fputc(',', f);
    else
        fprintf(f, ",%.9g", v);
}

static int plan_fill_plan(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const stall_plan_result *r = arg;
    const char *names[10] = {"min_workers_per_gpu",
                             "max_efficient_gpus",
                             "storage_bandwidth_mb_s",
                             "cores_per_node",
                             "gpus_for_throughput",
                             "gpus_for_epoch_s",
                             "checkpoint_every_iterations",
                             "tier_link_mb_s",
                             "tier_global_mb_s",
                             "tier_cache_mb"};
    const stall_plan_answer *a[10] = {
        &r->workers,    &r->gpus,       &r->bandwidth, &r->cores,       &r->throughput_gpus,
        &r->epoch_gpus, &r->ckpt_every, &r->tier_link, &r->tier_global, &r->tier_cache};
    bool asked[10] = {true,
                      true,
                      true,
                      true,
                      r->target_throughput > 0,
                      r->target_epoch_s > 0,
                      r->ckpt_budget > 0,
                      r->tiers,
                      r->tiers,
                      r->tiers};
    fputs(STALL_PLAN_HEADER "\n", f);
    for (int i = 0; i < 10; i++) {
        if (!asked[i])
            continue;
        fputs(names[i], f);
        plan_num(f, a[i]->value);
        fprintf(f, ",%s,%d", a[i]->binding, a[i]->sims);
        plan_num(f, a[i]->gpu_h);
        bool h = !isnan(a[i]->gpu_h) && a[i]->data > 0;
        plan_num(f, h ? a[i]->data : NAN);
        plan_num(f, h ? a[i]->gpu_h / a[i]->data : NAN);
        /* the run behind the GPU-hours: its GPUs and stall share */
        bool run = !isnan(a[i]->gpu_h) && a[i]->gpus > 0;
        if (run)
            fprintf(f, ",%d", a[i]->gpus);
        else
            fputc(',', f);
        plan_num(f, run ? a[i]->stall : NAN);
        fputc('\n', f);
    }
    return 0;
}

static int plan_fill_scaling(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const stall_plan_result *r = arg;
    fputs("gpus,throughput_samples_s,speedup,efficiency,stall_share,throughput_batches_s\n", f);
    for (int i = 0; i < r->n; i++) {
        fprintf(f, "%d", r->curve_gpus[i]);
        plan_num(f, r->curve_samples_s[i]);
        plan_num(f, r->curve_speedup[i]);
        plan_num(f, r->curve_efficiency[i]);
        plan_num(f, r->curve_stall[i]);
        plan_num(f, r->curve_batches_s[i]);
        fputc('\n', f);
    }
    return 0;
}

/* A sentence as comment lines of at most about 100 characters (the INI
 * reader takes lines of 198), each "; " and the first "; what: ". */
static void plan_comment(FILE *f, const char *what, const char *text)
{
    int col = fprintf(f, "; %s:", what);
    for (const char *w = text; *w;) {
        while (*w == ' ')
            w++;
        int len = (int)strcspn(w, " ");
        if (len == 0)
            break;
        if (col + 1 + len > 100) {
            fputs("\n;", f);
            col = 1;
        }
        col += fprintf(f, " %.*s", len, w);
        w += len;
    }
    fputc('\n', f);
}

/* effective.ini's [plan] section: every key, resolved, so that the file
 * plans again as is. */
static int plan_fill_keys(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const stall_plan_result *r = arg;
    char a[STALL_REPR_MAX], b[STALL_REPR_MAX];
    fprintf(f, "[plan]\nstall_target = %s\nefficiency = %s\nmax_workers = %d\nmax_gpus = %d\n",
            stall_repr(a, r->stall_target), stall_repr(b, r->efficiency), r->max_workers,
            r->max_gpus);
    if (r->target_throughput > 0)
        fprintf(f, "target_throughput = %s\n", stall_repr(a, r->target_throughput));
    if (r->target_epoch_s > 0)
        fprintf(f, "target_epoch_s = %s\n", stall_repr(a, r->target_epoch_s));
    if (r->ckpt_budget > 0)
        fprintf(f, "ckpt_stall_budget = %s\n", stall_repr(a, r->ckpt_budget));
    if (r->max_requests_given)
        fprintf(f, "max_requests = %s\n", stall_repr(a, r->max_requests));
    if (r->max_request_nodes_given)
        fprintf(f, "max_request_nodes = %s\n", stall_repr(a, r->max_request_nodes));
    /* The searches that stopped short of a run past those bounds, as the
     * terminal says them (plan.csv: binding cost). */
    if (strcmp(r->gpus.binding, "cost") == 0 || r->storage_untried)
        plan_comment(f, "max_efficient_gpus", r->limit);
    if (r->curve_note[0])
        plan_comment(f, "scaling", r->curve_note);
    if (strcmp(r->throughput_gpus.binding, "cost") == 0)
        plan_comment(f, "gpus_for_throughput", r->throughput_why);
    if (strcmp(r->epoch_gpus.binding, "cost") == 0)
        plan_comment(f, "gpus_for_epoch_s", r->epoch_why);
    return 0;
}

/* Keys no answer of plan reads: its answers are whole epochs' stall share
 * and throughput (no means over the kept batches, no delay threshold) and
 * it writes no per-iteration files. They are left out and said so, as
 * validate leaves out what-if keys. */
static const char *const plan_ignored[] = {"report.warmup", "report.delay_threshold",
                                           "report.per_rank", NULL};

int stall_plan_run(const stall_config *cfg_in, const stall_plan_opts *opts, stall_err *err)
{
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    *cfg = *cfg_in;
    char ignored[256];
    size_t nign = stall_config_drop(cfg, plan_ignored, ignored, sizeof ignored);
    stall_plan_result *r = stall_xmalloc(sizeof *r);
    /* A progress line on stderr where it is a terminal, unless -q (no
     * term), as sweep's: never on stdout, nothing where redirected. */
    int rc = plan_compute(cfg, r, opts->term && isatty(STDERR_FILENO) ? stderr : NULL, err);
    /* Its own folder, not the run's it would replace. */
    char *outdir = stall_job_outdir_as(cfg, opts->outdir, "-plan"), *work = NULL;
    /* Built beside the target and renamed whole (job.h). */
    if (rc == 0)
        rc = stall_job_begin(outdir, true, &work, err);
    if (rc == 0)
        rc = stall_write_atomic_in(work, "plan.csv", plan_fill_plan, r, err);
    if (rc == 0)
        rc = stall_write_atomic_in(work, "scaling.csv", plan_fill_scaling, r, err);
    if (rc == 0) {
        /* The configuration planned (its [plan] lines resolved), with the
         * SHA-256 of its inputs. */
        stall_config *eff = stall_xmalloc(sizeof *eff);
        *eff = *cfg;
        eff->nextra = 0;
        rc = stall_job_manifest_with(eff, work, NULL, plan_fill_keys, r, err);
        free(eff);
    }
    if (rc == 0)
        rc = stall_job_commit(outdir, work, err);
    else
        stall_job_abort(work);
    free(work);
    FILE *f = opts->term;
    if (rc == 0 && f) {
        fprintf(f, "stallsim %s plan: scenario '%s'\n", stall_version(), cfg->name);
        /* Every run of the plan takes its workers per GPU from the search
         * (answer 1, then the runs built on it): a given count is not one of
         * them, and is said so, as validate lists what it leaves out. */
        if (stall_config_given(cfg, "loader", "workers")) {
            char where[600];
            stall_config_origin(cfg, "loader", "workers", where, sizeof where);
            fprintf(f,
                    "left out (plan searches the workers per GPU, 1 to max_workers, and builds "
                    "on its answer): %s = %lld\n",
                    where, (long long)cfg->workers);
        }
        if (nign)
            fprintf(f,
                    "left out (plan's answers are whole epochs' stall share and throughput, "
                    "and it writes no per-iteration files): %s\n",
                    ignored);
        fprintf(f, "%-24s %12s  %-12s %s\n", "question", "answer", "binding", "simulations");
        fprintf(f, "%-24s %12.0f  %-12s %d\n", "min_workers_per_gpu", r->workers.value,
                r->workers.binding, r->workers.sims);
        fprintf(f, "%-24s %12.0f  %-12s %d\n", "max_efficient_gpus", r->gpus.value, r->gpus.binding,
                r->gpus.sims);
        if (isnan(r->bandwidth.value))
            fprintf(f, "%-24s %12s  %-12s %d\n", "storage_bandwidth_mb_s", "-",
                    r->bandwidth.binding, r->bandwidth.sims);
        else
            fprintf(f, "%-24s %12.1f  %-12s %d\n", "storage_bandwidth_mb_s", r->bandwidth.value,
                    r->bandwidth.binding, r->bandwidth.sims);
        if (isnan(r->cores.value))
            fprintf(f, "%-24s %12s  %-12s %d\n", "cores_per_node", "-", r->cores.binding,
                    r->cores.sims);
        else
            fprintf(f, "%-24s %12.0f  %-12s %d\n", "cores_per_node", r->cores.value,
                    r->cores.binding, r->cores.sims);
        const stall_plan_answer *ta[3] = {&r->tier_link, &r->tier_global, &r->tier_cache};
        const char *tn[3] = {"tier_link_mb_s", "tier_global_mb_s", "tier_cache_mb"};
        for (int i = 0; r->tiers && i < 3; i++) {
            char v[32] = "-";
            if (!isnan(ta[i]->value))
                snprintf(v, sizeof v, "%.1f", ta[i]->value);
            fprintf(f, "%-24s %12s  %-12s %d\n", tn[i], v, ta[i]->binding, ta[i]->sims);
        }
        /* Two bandwidths side by side answer two questions. */
        if (r->tiers && !isnan(r->bandwidth.value))
            fprintf(f,
                    "storage_bandwidth_mb_s keeps the throughput within 1%% of an unlimited "
                    "store; tier_link_mb_s and tier_global_mb_s keep the stall share within "
                    "stall_target = %g\n",
                    r->stall_target);
        if (r->bandwidth_note[0])
            fprintf(f, "%s\n", r->bandwidth_note);
        if (r->cores_note[0])
            fprintf(f, "%s\n", r->cores_note);
        if (r->reads_note[0])
            fprintf(f, "%s\n", r->reads_note);
        /* one line per not_met tier row, then what they leave */
        for (const char *l = r->tiers_why; r->tiers && *l;) {
            const char *nl = strchr(l, '\n');
            int len = nl ? (int)(nl - l) : (int)strlen(l);
            fprintf(f, "tiers: %.*s\n", len, l);
            l += len + (nl ? 1 : 0);
        }
        if (r->why[0])
            fprintf(f, "workers: %s\n", r->why);
        if (r->late_rank >= 0)
            fprintf(f,
                    "ranks that start late: the trace's ranks began epoch %d %.3f s apart (rank %d "
                    "last); every run here begins each epoch with every rank together, as an "
                    "aligned launch would ([ranks] late_start = none; stallsim run replays it at "
                    "the trace's GPU count)\n",
                    r->late_epoch, r->late_s, r->late_rank);
        fprintf(f, "scaling (weak, %s): %s\n",
                r->resampled ? "trace resampled with bootstrap beyond its ranks"
                             : "per-GPU batches fixed",
                r->limit);
        if (r->curve_note[0])
            fprintf(f, "scaling: %s\n", r->curve_note);
        /* in the unit of the figure and of the throughput target: samples/s
         * when the samples per batch are known, else batches/s */
        bool samples = r->n > 0 && !isnan(r->curve_samples_s[0]);
        /* efficiency in % as the figure draws it (plan.csv keeps the fraction of the key) */
        fprintf(f, "%6s %14s %9s %12s %7s\n", "gpus", samples ? "samples/s" : "batches/s",
                "speedup", "efficiency%", "stall%");
        for (int i = 0; i < r->n; i++)
            fprintf(f, "%6d %14.2f %9.2f %12.2f %7.2f\n", r->curve_gpus[i],
                    samples ? r->curve_samples_s[i] : r->curve_batches_s[i], r->curve_speedup[i],
                    100 * r->curve_efficiency[i], 100 * r->curve_stall[i]);
        fprintf(f, "%s\n", r->sentence);
        if (r->target_throughput > 0)
            fprintf(f, "gpus_for_throughput (target %g %s, weak scaling): %s\n",
                    r->target_throughput, isnan(r->curve_samples_s[0]) ? "batches/s" : "samples/s",
                    r->throughput_why);
        if (r->target_epoch_s > 0)
            fprintf(f, "gpus_for_epoch_s (target %g s, the dataset split over the GPUs): %s\n",
                    r->target_epoch_s, r->epoch_why);
        if (r->ckpt_budget > 0)
            fprintf(f,
                    "checkpoint_every_iterations (checkpoint stall budget %g%% of the epoch): %s\n",
                    100 * r->ckpt_budget, r->ckpt_why);
        fprintf(f, "results in %s/ (plan.csv, scaling.csv, effective.ini)\n", outdir);
    }
    free(outdir);
    free(r);
    free(cfg);
    return rc;
}

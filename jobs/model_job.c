/*
 * model_job.c - mode = model: the closed-loop what-if, fed from a measured
 * trace or from distributions (feed.h), every fetch alignment of [align]
 * fetch, written as a result folder.
 *
 * A trace is read in streaming passes (stream.h), in memory that does not
 * grow with its length, whenever the what-if's ranks, epochs and batches
 * lie within the trace's: nothing is resampled, so each duration the model
 * asks for is a measured one, transformed as wi_tables_build would
 * (wi_xform). Each fetch alignment streams the trace once more, and CPU
 * contention (cores) adds a pass per simulation of wi_deflate's bisection
 * (up to 16); replications need resampling, so they never stream. A grid
 * beyond the trace (resampling draws from the pool of every measured
 * duration), or a dsanalyzer perf file not sorted by (Epoch, Step), reads
 * the trace whole and builds the duration tables, and the terminal says so.
 */
#include "modes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>

#include "ckpt_job.h"
#include "feed.h"
#include "model_check.h"
#include "model_job.h"
#include "infer.h"
#include "memo.h"
#include "stream.h"
#include "stall/dsanalyzer.h"
#include "stall/io.h"
#include "stall/limits.h"

/* ---- mode = model ---- */

/* ---- replications ---- */

typedef struct wi_ci {
    double mean, lo, hi;
} wi_ci;

/* Mean and 95% interval (Student t, n - 1 degrees of freedom) of v[i*3+k]. */
static wi_ci wi_interval(const double *v, int n, int k)
{
    wi_ci c;
    c.mean = gsl_stats_mean(v + k, 3, (size_t)n);
    double half = n > 1 ? gsl_cdf_tdist_Pinv(0.975, n - 1.0) *
                              gsl_stats_sd_m(v + k, 3, (size_t)n, c.mean) / sqrt((double)n)
                        : NAN;
    c.lo = c.mean - half;
    c.hi = c.mean + half;
    return c;
}

/* Runs replication i (seed + i) of job j's what-if; replication 0 is the
 * main run. */
static int wi_replicate(const stall_config *cfg, const wi_whatif *what, const stall_measured *m,
                        const stall_model_params *p, int64_t samples, int64_t samples_last,
                        wi_alignment *j, int i, stall_err *err)
{
    wi_whatif c = *what;
    c.seed = what->seed + i;
    wi_tables w;
    int rc = wi_tables_build(&c, m, p->ranks, p->epochs, p->batches, true, &w, err);
    stall_model_params pj = *p;
    pj.fetch_align = j->fa;
    pj.uneven.seed = (uint64_t)c.seed; /* the stragglers are drawn anew too */
    wi_collect col = {
        .rep = stall_report_create(p->ranks, cfg->warmup, cfg->delay_threshold, samples)};
    stall_report_last_samples(col.rep, samples_last);
    if (rc == 0)
        rc = stall_report_stream(col.rep, NULL, NULL, err); /* the summary only */
    stall_model_stats st;
    if (rc == 0)
        rc = wi_run(&pj, &w, &col, &st, err);
    if (rc == 0)
        rc = stall_report_finish(col.rep, err);
    if (rc == 0) {
        stall_summary s;
        stall_report_summarize(col.rep, &s);
        j->rep[i * 3] = s.epoch_time_s;
        j->rep[i * 3 + 1] = samples > 0 ? s.throughput_samples_s : s.throughput_batches_s;
        j->rep[i * 3 + 2] = s.stall_share;
    }
    stall_report_destroy(col.rep);
    wi_tables_free(&w);
    return rc;
}

typedef struct wi_reps {
    const wi_alignment *jobs;
    int n, reps;
    int64_t seed;
    bool samples;
} wi_reps;

static int wi_fill_reps(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const wi_reps *r = arg;
    fprintf(f, "fetch_align,replication,seed,epoch_time_s,%s,stall_share\n",
            r->samples ? "throughput_samples_s" : "throughput_batches_s");
    for (int a = 0; a < r->n; a++)
        for (int i = 0; i < r->reps; i++)
            fprintf(f, "%s,%d,%lld,%.9g,%.9g,%.9g\n", stall_align_name(r->jobs[a].fa), i,
                    (long long)(r->seed + i), r->jobs[a].rep[i * 3], r->jobs[a].rep[i * 3 + 1],
                    r->jobs[a].rep[i * 3 + 2]);
    return 0;
}

static int wi_fill_reps_summary(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const wi_reps *r = arg;
    static const char *const names[3] = {"epoch_time_s", "throughput", "stall_share"};
    fputs("fetch_align,metric,replications,mean,ci95_low,ci95_high\n", f);
    for (int a = 0; a < r->n; a++)
        for (int k = 0; k < 3; k++) {
            wi_ci c = wi_interval(r->jobs[a].rep, r->reps, k);
            fprintf(f, "%s,%s,%d,%.9g,%.9g,%.9g\n", stall_align_name(r->jobs[a].fa),
                    k == 1 ? (r->samples ? "throughput_samples_s" : "throughput_batches_s")
                           : names[k],
                    r->reps, c.mean, c.lo, c.hi);
        }
    return 0;
}

typedef struct wi_out {
    const wi_alignment *jobs;
    int n;
    const stall_model_params *p;
    double measured_epoch_s; /* NAN without a trace */
    bool comparable;         /* same GPUs, batches and epochs as the trace */
} wi_out;

static int wi_fill_summary(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const wi_out *o = arg;
    fputs("fetch_align,start_align,gpus,workers,prefetch_factor,", f);
    stall_summary_header(f);
    fputs(",events,measured_epoch_time_s,vs_measured_pct\n", f);
    for (int i = 0; i < o->n; i++) {
        const wi_alignment *j = &o->jobs[i];
        fprintf(f, "%s,none,%d,%d,%d,", stall_align_name(j->fa), o->p->ranks, o->p->workers,
                o->p->prefetch);
        stall_summary_fields(f, &j->sum);
        fprintf(f, ",%llu", (unsigned long long)j->st.events);
        if (isnan(o->measured_epoch_s))
            fputs(",,\n", f);
        else if (!o->comparable)
            fprintf(f, ",%.9g,\n", o->measured_epoch_s);
        else
            fprintf(f, ",%.9g,%.6f\n", o->measured_epoch_s,
                    100.0 * (j->sum.epoch_time_s - o->measured_epoch_s) / o->measured_epoch_s);
    }
    return 0;
}

/* The measured run's durations from the stream, for wi_deflate_fed. */
static int wi_feed_open(void *ctx, const stall_model_params *p, stall_durations *d, stall_err *err)
{
    return wi_stream_durations(ctx, p, NULL, d, err);
}

static int wi_feed_error(void *ctx, stall_err *err)
{
    return wi_stream_error(ctx, err);
}

/* Opens the trace for streaming when the what-if needs nothing beyond it:
 * *ws and *m (passes 1-3), and *x, the what-if's transform. Otherwise *ws stays
 * NULL and `whole` says why the trace is to be read whole. */
static int wi_open_stream(const wi_inputs *in, wi_stream **ws, stall_measured *m, wi_xform *x,
                          char *whole, size_t wsize, stall_err *err)
{
    int rc = wi_stream_start(&in->trace, ws, err);
    if (rc == STALL_DS_UNSORTED) {
        snprintf(whole, wsize,
                 "%s: rows not sorted by (Epoch, Step): the trace was read whole into memory "
                 "(sort them for a read in bounded memory)",
                 in->trace.perf);
        return 0;
    }
    if (rc == WI_STREAM_WHOLE) {
        snprintf(whole, wsize, "%s: %s", in->trace.path, wi_stream_whole_why());
        return 0;
    }
    if (rc)
        return rc;
    stall_measured grid;
    stall_model_params q;
    wi_stream_grid(*ws, &grid);
    wi_params(&in->what, &grid, true, &q);
    if (q.ranks > grid.ranks || q.epochs > grid.epochs || q.batches > grid.batches) {
        snprintf(whole, wsize,
                 "the trace was read whole into memory: the what-if's %d GPUs x %d epochs x %lld "
                 "batches go beyond the trace's %d x %d x %lld, so durations are resampled",
                 q.ranks, q.epochs, (long long)q.batches, grid.ranks, grid.epochs,
                 (long long)grid.batches);
        wi_stream_close(*ws);
        *ws = NULL;
        return 0;
    }
    *x = wi_xform_make(&in->what, q.ranks, true);
    rc = wi_stream_measure(*ws, x, &q, m, err);
    if (rc == 0)
        wi_xform_inline(x, &in->what, m, true);
    if (rc) {
        wi_stream_close(*ws);
        *ws = NULL;
    }
    return rc;
}

/* One mode = model job as it runs: what the steps below share. */
typedef struct wi_model_run {
    const stall_config *cfg;
    wi_inputs in; /* cfg resolved for what runs under the job */
    const stall_run_opts *opts;
    bool have; /* a measured trace */
    stall_measured m;
    bool m_kept;                      /* m is opts->memo's (jobs/memo.h), not the run's to free */
    wi_stream *ws;                    /* the trace in streaming passes, or NULL */
    wi_xform x;                       /* the what-if's transform (streaming) */
    wi_tables w;                      /* the duration tables (not streaming) */
    char whole[STALL_PATH_MAX + 256]; /* why the trace was read whole ("" when not) */
    stall_model_params p;
    double contention;
    int trace_cores;        /* the cores the contention was found on */
    const char *trace_from; /* where they come from (NULL: the run's own) */
    wi_cpu_fit cpufit;      /* the trace's waits for a core taken out (its CPU columns) */
    wi_store_fit store;     /* the measured read at the trace's storage ([storage] trace_mb_s) */
    int reps;
    int64_t samples;
    int64_t samples_last; /* in each rank's last batch of an epoch (0: full) */
    stall_align_list fl;  /* the fetch alignments run */
    wi_alignment *jobs;   /* [fl.n] */
    char *final, *outdir;
    wi_ckstats ck; /* the first alignment's checkpoints */
} wi_model_run;

/* mode = model takes start = none: start alignment replays measured starts. */
static int wi_check_start(const stall_config *cfg, stall_err *err)
{
    for (int i = 0; i < cfg->start_align.n; i++)
        if (cfg->start_align.v[i] != STALL_ALIGN_NONE && stall_config_given(cfg, "align", "start"))
            return stall_err_set(
                err, STALL_ECONFIG,
                "%s: [align] start: start alignment is a counterfactual on measured "
                "starts, available in mode = replay; mode = model takes start = none",
                cfg->ini_path);
    return 0;
}

/* The measured read at the trace's storage ([storage] trace_mb_s,
 * trace_latency_ms): found by simulating the trace's run there
 * (tierfit.c), or refused where no read gives that run back. */
static int wi_store_fit_run(wi_model_run *j, stall_err *err)
{
    const wi_whatif *what = &j->in.what;
    char where[STALL_PATH_MAX + 64];
    stall_config_origin(j->cfg, "storage",
                        stall_config_given(j->cfg, "storage", "trace_mb_s") ? "trace_mb_s"
                                                                            : "trace_latency_ms",
                        where, sizeof where);
    if (!j->m.epoch_fetch_s || !(j->m.mean_fetch_s > 0))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect: the trace's fetch times are not known, so no "
                             "read can be taken out of them",
                             where);
    /* A read and a miss's waits are durations (limits.md): name the key
     * that made the trace's run one past the limit (the model's own checks,
     * in the simulations of that run, name none). */
    const stall_storage *s = &j->p.storage;
    if (what->trace_mb_s > 0 && s->batch_mb / what->trace_mb_s > STALL_LIMIT_DURATION_S) {
        stall_config_origin(j->cfg, "storage", "trace_mb_s", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: %g MB/s reads a batch of %g MB in %g s, past the limit of %g s "
                             "for one duration (docs/limits.md)",
                             where, what->trace_mb_s, s->batch_mb, s->batch_mb / what->trace_mb_s,
                             STALL_LIMIT_DURATION_S);
    }
    if (what->trace_latency_ms / 1e3 * s->requests > STALL_LIMIT_DURATION_S) {
        stall_config_origin(j->cfg, "storage", "trace_latency_ms", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: %g ms for each of a batch's %g requests is %g s, past the limit "
                             "of %g s for one duration (docs/limits.md)",
                             where, what->trace_latency_ms, s->requests,
                             what->trace_latency_ms / 1e3 * s->requests, STALL_LIMIT_DURATION_S);
    }
    wi_feed f = {.open = wi_feed_open,
                 .error = wi_feed_error,
                 .span = j->ws ? wi_stream_span(j->ws, false) : 0,
                 .ctx = j->ws};
    int rc = wi_store_fit_find(what, &j->m, j->ws ? &f : NULL, &j->store, err);
    if (rc)
        return rc;
    /* both make the storage: name both */
    char named[2 * (STALL_PATH_MAX + 64) + 8], lat[STALL_PATH_MAX + 64] = "";
    if (stall_config_given(j->cfg, "storage", "trace_mb_s") &&
        stall_config_given(j->cfg, "storage", "trace_latency_ms"))
        stall_config_origin(j->cfg, "storage", "trace_latency_ms", lat, sizeof lat);
    snprintf(named, sizeof named, "%s%s%s", where, lat[0] ? " with " : "", lat);
    if (j->store.rho < 0)
        return stall_err_set(
            err, STALL_ECONFIG,
            "%s: the trace's run could not have read at that storage: simulated there with "
            "every read taken out of its fetches and read again, its mean fetch is %.4f s, "
            "%s %.4f s%s (%sa faster store, a lower trace_latency_ms, or the cache its run "
            "had: trace_cache_mb)",
            named, j->store.emptied_s, j->m.fetch_fit ? "inferred" : "measured", j->store.meas_s,
            j->m.fetch_fit ? " from the loop's waits" : "",
            j->m.fetch_fit ? "docs/model.md 8.2; " : "");
    wi_store_fit_apply(what, &j->m, &j->store, &j->p);
    return 0;
}

/* The trace (streamed or whole), the model's parameters and durations,
 * and the checks that need them. */
/* wi_disk_check for the run's files: none where it writes none. */
static int wi_run_disk_check(const wi_model_run *j, stall_err *err)
{
    const stall_run_opts *opts = j->opts;
    if (opts->no_files || opts->no_iterations || !j->final)
        return 0;
    return wi_disk_check(&j->in.what, j->final, j->p.ranks, j->p.epochs, j->p.batches,
                         stall_job_per_rank(j->cfg, j->p.ranks), j->fl.n, err);
}

static int wi_prepare(wi_model_run *j, stall_err *err)
{
    const stall_config *cfg = j->cfg;
    int rc = stall_job_inputs_json(cfg, err);
    if (rc == 0 && j->have && stall_job_streams(cfg, j->opts))
        rc = wi_open_stream(&j->in, &j->ws, &j->m, &j->x, j->whole, sizeof j->whole, err);
    if (rc == 0 && j->have && !j->ws) {
        j->m_kept = wi_memo_take(j->opts->memo, &j->in.trace, &j->m);
        if (!j->m_kept)
            rc = wi_json_format(cfg->format) ? wi_load_json(&j->in.trace, &j->m, err)
                                             : wi_load_measured(&j->in.trace, &j->m, err);
        if (rc == 0 && !j->m_kept)
            j->m_kept = wi_memo_keep(j->opts->memo, &j->in.trace, &j->m);
    }
    if (rc)
        return rc;
    stall_model_params *p = &j->p;
    const wi_whatif *what = &j->in.what;
    wi_params(what, j->have ? &j->m : NULL, true, p);
    rc = wi_grid_check(cfg, what, j->have ? &j->m : NULL, p, err);
    if (rc == 0)
        rc = wi_ckpt_check(what, j->have ? &j->m : NULL, p, err);
    if (rc)
        return rc;
    if (j->ws) {
        /* wi_tables_build's checks that apply within the trace. */
        rc = wi_xform_check(what, &j->x, p->ranks, err);
        if (rc == 0)
            rc = wi_horizon_check(what, wi_stream_span(j->ws, true), err);
        if (rc == 0)
            rc = wi_mem_check(what, p->ranks, p->epochs, p->batches, false, err);
        if (rc == 0)
            rc = wi_run_disk_check(j, err);
    } else {
        /* memory, then disk, before a cell is drawn */
        rc = wi_tables_mem_check(what, j->have ? &j->m : NULL, p->ranks, p->epochs, p->batches, -1,
                                 err);
        if (rc == 0)
            rc = wi_run_disk_check(j, err);
        if (rc == 0)
            rc = wi_tables_build_j(what, j->have ? &j->m : NULL, p->ranks, p->epochs, p->batches,
                                   true, j->opts->jobs > 1 ? j->opts->jobs : 1, &j->w, err);
    }
    if (rc)
        return rc;
    if ((p->storage_mb_s > 0 || p->tiers) && p->batch_mb <= 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [storage] batch_mb: must be > 0 when bandwidth_mb_s or a tier "
                             "key is set (the trace has no bytes column)",
                             cfg->ini_path);
    /* A read's time is a duration (limits.md): name the key that made it
     * one past the limit (the model's own check names none). */
    if (p->storage_mb_s > 0 && p->batch_mb / p->storage_mb_s > 1e6) {
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "storage", "bandwidth_mb_s", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: %g MB/s reads a batch of %g MB in %g s, past the limit of 1e6 s "
                             "for one duration (docs/limits.md)",
                             where, p->storage_mb_s, p->batch_mb, p->batch_mb / p->storage_mb_s);
    }
    /* ... and so is a batch's wait for its missed requests */
    double nreq = p->tiers ? fmax(1.0, floor(p->storage.requests + 0.5)) : 0;
    if (p->tiers && (double)p->storage.latency * nreq > STALL_LIMIT_DURATION_S * 1e9) {
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "storage", "latency_ms", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: %g ms x %g requests per batch is %g s, past the limit of %g s "
                             "for one duration (docs/limits.md)",
                             where, (double)p->storage.latency / 1e6, nreq,
                             (double)p->storage.latency * nreq / 1e9, STALL_LIMIT_DURATION_S);
    }
    stall_model_effects fx;
    wi_effects(j->have ? &j->m : NULL, &j->in.what, p, &fx);
    rc = wi_reps_check(cfg, &fx, err);
    if (rc == 0 && !j->opts->no_files && !j->opts->sweep_point)
    /* A run (plan's probes and a sweep's points judge these over
     * all their runs). */
    {
        /* cpu_waits_out: refused below, with the reason that applies */
        stall_model_effects one = fx;
        one.cpu_waits = true;
        /* every_iterations past the run: refused below, with its numbers */
        one.ckpts = true;
        /* late_start: refused here with the reason that applies */
        if (!one.late && stall_config_given(cfg, "ranks", "late_start")) {
            char where[STALL_PATH_MAX + 64], why[160];
            stall_config_origin(cfg, "ranks", "late_start", where, sizeof where);
            if (!j->have)
                snprintf(why, sizeof why,
                         "there is no measured trace whose ranks' starts it "
                         "would take");
            else if (j->m.ranks == 1)
                snprintf(why, sizeof why, "the trace has 1 rank, which no other waits for");
            else if (!j->m.late_any)
                snprintf(why, sizeof why, "the trace's %d ranks began every epoch together",
                         j->m.ranks);
            else
                snprintf(why, sizeof why,
                         "the run has %d GPUs, the trace %d: a late start is replayed at the "
                         "trace's own GPU count only",
                         p->ranks, j->m.ranks);
            return stall_err_set(err, STALL_ECONFIG, "%s: has no effect: %s (docs/model.md 2.4)",
                                 where, why);
        }
        rc = stall_model_effects_check(cfg, &one, NULL, err);
        /* More GPUs per node than the run has (the trace's count, gpus not
         * given): config/check.c refuses it where gpus is given; a sweep
         * over gpus may share a node size among its points. */
        if (rc == 0 && cfg->gpus_per_node > p->ranks &&
            stall_config_given(cfg, "cluster", "gpus_per_node")) {
            char where[STALL_PATH_MAX + 64];
            stall_config_origin(cfg, "cluster", "gpus_per_node", where, sizeof where);
            rc = stall_err_set(err, STALL_ECONFIG,
                               "%s: %lld is more than the run's %d GPUs (%sset [cluster] gpus "
                               "for more)",
                               where, (long long)cfg->gpus_per_node, p->ranks,
                               j->have ? "the trace's; " : "");
        }
    }
    if (rc)
        return rc;
    bool cpu_trace = j->have && p->cores > 0 && j->m.cpu.has;
    /* A sweep judges it over all its points (stall__sweep_model_check), plan
     * over all its runs (plan_effects: its cores question runs with cores,
     * where a probe of the others may have none). */
    if (rc == 0 && !cpu_trace && !j->opts->sweep_point && !j->opts->plan_probe &&
        stall_config_given(cfg, "cluster", "cpu_waits_out")) {
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "cluster", "cpu_waits_out", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG, "%s: has no effect: %s", where,
                             !j->have || !j->m.cpu.has
                                 ? "the trace has no CPU columns (fetch_cpu, fetch_wait, ...) "
                                   "whose waits it would take out"
                                 : "[cluster] cores = 0 shares no cores");
    }
    /* trace_cache_mb whose fit leaves the measured read unknown (a sweep's
     * points and plan's probes run it as not given). */
    char why[512];
    if (rc == 0 && !j->opts->sweep_point && !j->opts->plan_probe &&
        wi_tiers_fit_none(what, j->have ? &j->m : NULL, p, why, sizeof why)) {
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "storage", "trace_cache_mb", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG, "%s: has no effect: %s; leave it out", where, why);
    }
    if (rc == 0 && what->trace_store_given && p->tiers && j->have)
        rc = wi_store_fit_run(j, err);
    /* An interval longer than the run writes no checkpoint: with a trace
     * that records none, the [checkpoint] keys then change nothing. */
    int64_t iters = (int64_t)p->epochs * p->batches;
    if (rc == 0 && !j->opts->sweep_point && !j->opts->plan_probe &&
        stall_config_given(cfg, "checkpoint", "every_iterations") && p->ckpt.every > iters &&
        p->ckpt.every_ns <= 0 && !(j->have && j->m.ckpt_n > 0)) {
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "checkpoint", "every_iterations", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect: the run's %lld iterations (%d epoch%s x %lld "
                             "batches, counted over the run) end before the first checkpoint, "
                             "after iteration %lld%s; it needs a shorter interval or a longer run "
                             "([run] epochs)",
                             where, (long long)iters, p->epochs, p->epochs == 1 ? "" : "s",
                             (long long)p->batches, (long long)p->ckpt.every,
                             j->have ? ", and the trace records none" : "");
    }
    if (rc == 0 && cpu_trace) {
        /* The trace's CPU columns: how much of its measured waits for a
         * core the model's own sharing stands for (docs/model.md 2.3). */
        if (what->cpu_waits_out >= 0)
            j->cpufit = (wi_cpu_fit){.out = what->cpu_waits_out, .given = true};
        else
            rc = wi_cpu_waits_fit(&j->m, &j->cpufit, err);
        wi_cpu_waits_scale(p, j->cpufit.out);
    }
    if (j->have && p->cores > 0 && !j->m.cpu.has) {
        /* The trace's durations were measured under contention: find how
         * much by simulating the measured configuration on these cores.
         * (A trace with CPU columns measured it: cpudemand.c.) */
        j->trace_cores = wi_trace_cores(cfg, p->cores, &j->trace_from, err);
        if (j->trace_cores < 0)
            return STALL_EPARSE;
        wi_cpu cpu = {.cores = j->trace_cores,
                      .gpn = (int)cfg->gpus_per_node,
                      .fetch_share = p->cpu_share,
                      .compute_share = p->compute_cpu_share};
        wi_feed f = {.open = wi_feed_open,
                     .error = wi_feed_error,
                     .span = j->ws ? wi_stream_span(j->ws, false) : 0,
                     .ctx = j->ws};
        rc = j->ws ? wi_deflate_fed(&j->m, &f, &cpu, &p->cpu_deflate, err)
                   : wi_deflate(&j->m, &cpu, &p->cpu_deflate, err);
        j->contention = 1.0 / p->cpu_deflate;
    }
    return rc;
}

/* Streams one alignment's iterations.csv (and ranks.csv) into its folder
 * as the run produces the rows (stall_report_stream): memory does not grow
 * with the iterations. *dir gets the folder. */
static int wi_stream_iterations(const wi_model_run *j, const wi_alignment *job, stall_report *rep,
                                bool ranks_csv, char **dir, stall_err *err)
{
    char name[64];
    snprintf(name, sizeof name, "fetch-%s_start-none", stall_align_name(job->fa));
    *dir = stall_path_join(j->outdir, name);
    int rc = stall_mkdirs(*dir, err);
    if (rc == 0) {
        char *it = stall_path_join(*dir, "iterations.csv");
        char *rk = ranks_csv ? stall_path_join(*dir, "ranks.csv") : NULL;
        rc = stall_report_stream(rep, it, rk, err);
        free(it);
        free(rk);
    }
    return rc;
}

/* Runs fetch alignment i (and its replications), keeping its summary. */
static int wi_run_alignment(wi_model_run *j, int i, stall_err *err)
{
    const stall_config *cfg = j->cfg;
    const stall_run_opts *opts = j->opts;
    wi_alignment *job = &j->jobs[i];
    job->fa = j->fl.v[i];
    stall_model_params pj = j->p;
    pj.fetch_align = job->fa;
    wi_collect c = {
        .rep = stall_report_create(j->p.ranks, cfg->warmup, cfg->delay_threshold, j->samples)};
    if (i == 0 && opts->on_params)
        opts->on_params(opts->observer, &pj);
    if (i == 0 && opts->on_iter) {
        c.hook = opts->on_iter;
        c.hook_ctx = opts->observer;
    }
    if (i == 0) {
        wi_ck_init(&j->ck, &pj);
        j->ck.epoch0 = j->have ? j->m.epoch0 : 0;
        j->ck.unsized =
            j->have && j->m.ckpt_n > 0 && j->m.ckpt_unsized && !j->in.what.ckpt_mb_given;
        j->ck.unsized_why = wi_ckpt_unsized_why(&j->m);
        c.ck = &j->ck;
    }
    bool ranks_csv = stall_job_per_rank(cfg, j->p.ranks);
    stall_report_keep_ranks(c.rep, ranks_csv);
    stall_report_last_samples(c.rep, j->samples_last);
    stall_report_label_epochs(c.rep, j->have ? j->m.epoch0 : 0);
    bool files = !opts->no_files && !opts->no_iterations;
    job->dir = NULL;
    int rc = files ? wi_stream_iterations(j, job, c.rep, ranks_csv, &job->dir, err)
                   : stall_report_stream(c.rep, NULL, NULL, err);
    if (rc == 0 && j->ws) {
        stall_durations dur;
        rc = wi_stream_durations(j->ws, &pj, &j->x, &dur, err);
        if (rc == 0)
            rc = wi_run_with(&pj, &dur, &c, &job->st, err);
        int src = rc ? wi_stream_error(j->ws, err) : 0;
        rc = src ? src : rc;
    } else if (rc == 0) {
        /* The tables' lookups are pure, or keep their state per rank
         * (drawn as asked, lazy.c): the run may use -j threads
         * (models/model_par.c), with the same output. */
        pj.threads = opts->jobs > 1 ? opts->jobs : 1;
        rc = wi_run(&pj, &j->w, &c, &job->st, err);
    }
    if (rc == 0)
        rc = stall_report_finish(c.rep, err);
    if (rc == 0) {
        stall_report_summarize(c.rep, &job->sum);
        job->sum.ckpt_share = i == 0 ? wi_ck_share(&j->ck) : 0.0;
        job->rep = stall_xcalloc((size_t)j->reps * 3, sizeof *job->rep);
        job->rep[0] = job->sum.epoch_time_s;
        job->rep[1] =
            j->samples > 0 ? job->sum.throughput_samples_s : job->sum.throughput_batches_s;
        job->rep[2] = job->sum.stall_share;
    }
    if (rc == 0 && files && job == &j->jobs[0])
        rc = wi_ck_write(&j->ck, job->dir, err);
    free(job->dir);
    job->dir = NULL;
    stall_report_destroy(c.rep);
    for (int r = 1; r < j->reps && rc == 0; r++)
        rc = wi_replicate(cfg, &j->in.what, j->have ? &j->m : NULL, &j->p, j->samples,
                          j->samples_last, job, r, err);
    return rc;
}

/* vs_measured only where the run is the trace's run (a what-if on
 * workers, speed or cores), never across GPU, batch or epoch counts, nor
 * where the trace's epochs are profiling windows opened mid-training (a
 * warm fit, m.window_s): the run starts each epoch empty, the window did
 * not (the 1.13 ddp2_w2 printed +60.56% for its own configuration). */
static bool wi_comparable(const wi_model_run *j)
{
    return j->have && j->p.ranks == j->m.ranks && j->p.batches == j->m.batches &&
           j->p.epochs == j->m.epochs && !j->m.window_s;
}

/* replications*.csv, summary.csv and effective.ini into the work folder. */
static int wi_write_results(const wi_model_run *j, double measured, stall_err *err)
{
    wi_reps rs = {.jobs = j->jobs,
                  .n = j->fl.n,
                  .reps = j->reps,
                  .seed = j->cfg->seed,
                  .samples = j->samples > 0};
    int rc = 0;
    if (j->reps > 1)
        rc = stall_write_atomic_in(j->outdir, "replications.csv", wi_fill_reps, &rs, err);
    if (rc == 0 && j->reps > 1)
        rc = stall_write_atomic_in(j->outdir, "replications_summary.csv", wi_fill_reps_summary, &rs,
                                   err);
    if (rc == 0) {
        wi_out o = {.jobs = j->jobs,
                    .n = j->fl.n,
                    .p = &j->p,
                    .measured_epoch_s = measured,
                    .comparable = wi_comparable(j)};
        rc = stall_write_atomic_in(j->outdir, "summary.csv", wi_fill_summary, &o, err);
    }
    if (rc == 0 && j->have && j->m.fetch_fit)
        rc = wi_fit_write(j->outdir, j->m.fetch_fit, err);
    if (rc == 0) {
        /* effective.ini says what ran, so that it runs again as is. */
        stall_config eff = *j->cfg;
        eff.fetch_align = j->fl;
        eff.start_align = (stall_align_list){1, {STALL_ALIGN_NONE}};
        rc = stall_job_manifest_with(&eff, j->outdir, j->opts->digests, NULL, NULL, err);
    }
    return rc;
}

/* The terminal summary, and the replications' intervals. */
static void wi_print(const wi_model_run *j, double measured)
{
    FILE *f = j->opts->term;
    const stall_model_params *p = &j->p;
    /* The floor's first fetch of each rank, as the run was fed it. */
    stall_time *first = stall_xmalloc((size_t)p->ranks * sizeof *first);
    /* With a shared bandwidth (no tiers) a fetch lasts at least its read
     * and its CPU part (2.3: the read comes out of the waiting part only). */
    stall_time read = p->storage_mb_s > 0 && !p->tiers && p->batch_mb > 0
                          ? stall_s_to_ns(p->batch_mb / p->storage_mb_s)
                          : 0;
    for (int r = 0; r < p->ranks; r++) {
        /* The storage tiers take the trace's read out of each fetch and
         * read again at the what-if's store (2.3): the measured first fetch
         * still holds the old read (a faster store's floor came out above
         * the run's whole stall), so the first fetch as run stands for it. */
        if (p->tiers && j->ck.first_n > 0) {
            first[r] = wi_ck_first_fetch(&j->ck, r);
            continue;
        }
        first[r] = j->ws ? wi_xform_fetch(&j->x, wi_stream_first_fetch(j->ws, r))
                         : wi_tables_fetch(&j->w, 0, r, 0);
        stall_time cpu = p->cores > 0 ? llround(p->cpu_share * (double)first[r]) : 0;
        if (read > 0 && first[r] < read + cpu)
            first[r] = read + cpu;
    }
    wi_term(f, j->cfg, p, j->have ? &j->m : NULL, first, j->whole, j->jobs, j->fl.n, measured,
            wi_comparable(j), j->contention, j->trace_cores, j->trace_from, &j->cpufit, &j->store,
            j->samples > 0);
    free(first);
    int from, to;
    if (j->have && wi_startup_scaled(&j->in.what, &j->m, true, p, &from, &to))
        fprintf(f,
                "worker start-up: %.4f s, the trace's %.4f s x %d / %d worker processes per node "
                "(they start one after another, docs/model.md 2.4; [loader] startup_s sets it)\n",
                stall_ns_to_s(p->startup), stall_ns_to_s(j->m.startup), to, from);
    if (j->have)
        wi_late_print(f, &j->m, p, j->m.epoch0, j->in.what.late_none);
    wi_ck_print(f, &j->ck, p);
    wi_epochs_print(f, &j->ck, p);
    wi_uneven_print(f, p);
    int64_t seed = j->cfg->seed;
    for (int i = 0; j->reps > 1 && i < j->fl.n; i++) {
        const double *v = j->jobs[i].rep;
        wi_ci e = wi_interval(v, j->reps, 0), t = wi_interval(v, j->reps, 1),
              s = wi_interval(v, j->reps, 2);
        fprintf(f,
                "%d replications (seeds %lld..%lld), fetch %s, mean [95%% interval]: epoch_s "
                "%.3f [%.3f, %.3f], %s %.1f [%.1f, %.1f], stall%% %.2f [%.2f, %.2f] "
                "(replications.csv, replications_summary.csv)\n",
                j->reps, (long long)seed, (long long)(seed + j->reps - 1),
                stall_align_name(j->jobs[i].fa), e.mean, e.lo, e.hi,
                j->samples > 0 ? "samples/s" : "batches/s", t.mean, t.lo, t.hi, 100 * s.mean,
                100 * s.lo, 100 * s.hi);
    }
    /* Last, so that every line above it is read before the folder's name. */
    /* As replay says it: the means leave out each epoch's first batches. */
    if (j->cfg->warmup > 0)
        fprintf(f,
                "means (iter_s, stall_s, delay_s) exclude the first %lld batches of each epoch; ",
                (long long)j->cfg->warmup);
    fprintf(f, "results in %s/ (summary.csv, fetch-*_start-none/iterations.csv, %seffective.ini)\n",
            j->final, j->have && j->m.fetch_fit ? "fetch_fit.csv, " : "");
}

static void wi_run_free(wi_model_run *j)
{
    free(j->outdir);
    free(j->final);
    if (j->jobs)
        for (int i = 0; i < j->fl.n; i++)
            free(j->jobs[i].rep);
    free(j->jobs);
    wi_tables_free(&j->w);
    wi_stream_close(j->ws);
    if (!j->m_kept)
        stall_measured_free(&j->m);
    wi_ck_free(&j->ck);
}

int stall_model_job(const stall_config *cfg, const stall_run_opts *opts, stall_err *err)
{
    int rc = wi_check_start(cfg, err);
    if (rc)
        return rc;
    wi_model_run j = {.cfg = cfg,
                      .opts = opts,
                      .have = cfg->format != STALL_FORMAT_NONE,
                      .x = WI_XFORM_NONE,
                      .contention = 1.0,
                      .reps = (int)cfg->replications,
                      /* Fetch alignments: the [align] fetch list when given, else none. */
                      .fl = {1, {STALL_ALIGN_NONE}}};
    if (stall_config_given(cfg, "align", "fetch"))
        j.fl = cfg->fetch_align;
    wi_inputs_resolve(cfg, &j.in);
    j.in.what.observed = opts->on_iter != NULL;
    bool files = !opts->no_files;
    j.final = stall_job_outdir(cfg, opts);
    rc = wi_prepare(&j, err);
    j.jobs = stall_xcalloc((size_t)j.fl.n, sizeof *j.jobs);
    if (rc == 0 && files)
        rc = stall_job_begin(j.final, !opts->sweep_point, &j.outdir, err);
    j.samples = cfg->samples > 0 ? cfg->samples : (j.have ? j.m.samples : 0);
    if (rc == 0 && j.have && j.samples > 0 && j.samples == wi_batch_samples(&j.in.what, &j.m))
        j.samples_last = wi_last_samples(&j.in.what, &j.m, j.p.ranks, j.p.batches, true);
    for (int i = 0; i < j.fl.n && rc == 0; i++)
        rc = wi_run_alignment(&j, i, err);
    double measured = j.have && rc == 0 ? stall_measured_mean_epoch(&j.m) : NAN;
    if (rc == 0 && opts->summary)
        *opts->summary = j.jobs[0].sum;
    if (rc == 0 && opts->comparable)
        *opts->comparable = wi_comparable(&j);
    if (rc == 0 && files)
        rc = wi_write_results(&j, measured, err);
    if (rc == 0 && files && opts->before_commit)
        rc = opts->before_commit(opts->before_commit_ctx, j.outdir, err);
    if (rc == 0 && files)
        rc = stall_job_commit(j.final, j.outdir, err);
    else if (files)
        stall_job_abort(j.outdir);
    if (rc == 0 && opts->term)
        wi_print(&j, measured);
    wi_run_free(&j);
    return rc;
}

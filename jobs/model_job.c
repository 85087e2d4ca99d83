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

#include "feed.h"
#include "stream.h"
#include "stall/dsanalyzer.h"
#include "stall/io.h"

/* ---- mode = model ---- */

typedef struct wi_job {
    stall_align fa;
    stall_summary sum;
    stall_model_stats st;
    double *rep; /* [3 * replications]: epoch_time_s, throughput, stall_share */
} wi_job;

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
static int wi_replicate(const stall_config *cfg, const stall_measured *m,
                        const stall_model_params *p, int64_t samples, wi_job *j, int i,
                        stall_err *err)
{
    stall_config c = *cfg;
    c.seed = cfg->seed + i;
    wi_tables w;
    int rc = wi_tables_build(&c, m, p->ranks, p->epochs, p->batches, true, &w, err);
    stall_model_params pj = *p;
    pj.fetch_align = j->fa;
    wi_collect col = {
        .rep = stall_report_create(p->ranks, cfg->warmup, cfg->delay_threshold, samples)};
    stall_model_stats st;
    if (rc == 0)
        rc = wi_run(&pj, &w, &col, &st, err);
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
    const wi_job *jobs;
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
    const wi_job *jobs;
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
        const wi_job *j = &o->jobs[i];
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

/* The terminal summary: what ran (nodes, where the measured loader came
 * from, storage), one row per fetch alignment, the measured epoch, and the
 * stall floor that no loader setting removes. */
static void wi_term(FILE *f, const stall_config *cfg, const stall_model_params *p,
                    const stall_measured *m, const stall_time *first_fetch, const char *whole,
                    const wi_job *jobs, int n, double measured, bool comparable, double contention,
                    bool samples, const char *outdir)
{
    int nodes = (p->ranks + p->gpus_per_node - 1) / p->gpus_per_node;
    fprintf(f,
            "stallsim %s: scenario '%s' (model), %d GPUs on %d node%s (%d per node) x %d workers x "
            "prefetch %d, %lld batches x %d epochs%s\n",
            stall_version(), cfg->name, p->ranks, nodes, nodes == 1 ? "" : "s", p->gpus_per_node,
            p->workers, p->prefetch, (long long)p->batches, p->epochs,
            p->cores ? "" : ", no CPU contention");
    if (m && m->workers_from != STALL_WORKERS_TRACE)
        fprintf(f, "measured run: %d GPUs x %d workers per GPU (%s), prefetch factor %d%s\n",
                m->ranks, m->workers,
                m->workers_from == STALL_WORKERS_GIVEN
                    ? "from [trace] workers"
                    : "inferred from the fetch starts; set [trace] workers if wrong",
                m->prefetch >= 1 ? m->prefetch : 2,
                stall_config_given(cfg, "trace", "prefetch_factor") ? "" : " (PyTorch's default)");
    if (whole[0])
        fprintf(f, "%s\n", whole);
    if (p->cores > 0)
        fprintf(f,
                "CPU: %d cores per node; %.0f%% of a fetch and %.0f%% of a compute is CPU work%s",
                p->cores, 100 * p->cpu_share, 100 * p->compute_cpu_share, m ? "" : "\n");
    if (p->cores > 0 && m)
        fprintf(f, "; the trace's CPU work ran %.3fx slower than alone (measured %d workers)\n",
                contention, m->workers);
    if (p->storage_mb_s > 0)
        fprintf(f,
                "storage: %.6g MB/s per node, %.6g MB per batch%s; the read alone (%.4f s) is "
                "part of each measured fetch, only the time lost to sharing is added\n",
                p->storage_mb_s, p->batch_mb,
                m && !stall_config_given(cfg, "storage", "batch_mb")
                    ? " (mean of the trace's bytes column)"
                    : "",
                p->batch_mb / p->storage_mb_s);
    fprintf(f, "%-5s %11s %9s %10s %9s %9s %7s %7s %12s\n", "fetch", "epoch_s", "vs_meas", "iter_s",
            "stall_s", "delay_s", "stall%", "busy%", samples ? "samples/s" : "batches/s");
    for (int i = 0; i < n; i++) {
        const wi_job *j = &jobs[i];
        char vs[16] = "";
        if (!isnan(measured) && comparable)
            snprintf(vs, sizeof vs, "%+.2f%%", 100.0 * (j->sum.epoch_time_s - measured) / measured);
        fprintf(f, "%-5s %11.3f %9s %10.4f %9.4f %9.4f %7.2f %7.2f %12.1f\n",
                stall_align_name(j->fa), j->sum.epoch_time_s, vs, j->sum.iteration.mean,
                j->sum.stall.mean, j->sum.delay.mean, 100.0 * j->sum.stall_share,
                100.0 * j->sum.gpu_busy_share,
                samples ? j->sum.throughput_samples_s : j->sum.throughput_batches_s);
    }
    if (!isnan(measured))
        fprintf(f, "%-5s %11.3f   (measured mean epoch time of the trace%s)\n", "trace", measured,
                comparable ? ""
                           : "; vs_meas left empty: the what-if changes GPUs, batches or epochs");
    if (!samples)
        fprintf(f, "batches/s: batches over all GPUs per second (set [report] samples for "
                   "samples/s)\n");
    /* The floor: the per-batch hand-over is paid even when a batch is
     * waiting, and every epoch starts empty (worker start-up and the first
     * fetch), whatever the workers and prefetch. */
    double first = 0;
    for (int r = 0; r < p->ranks; r++)
        first += stall_ns_to_s(first_fetch[r]);
    first /= p->ranks;
    double hand = stall_ns_to_s(p->handover) * (double)p->batches,
           start = (p->workers > 0 ? stall_ns_to_s(p->startup) : 0) + first;
    double floor_s = hand + start, stall_s = 0;
    for (int i = 0; i < n; i++)
        stall_s = fmax(stall_s, jobs[i].sum.stall.mean * (double)p->batches);
    fprintf(f,
            "stall floor: about %.3f s per epoch whatever the loader: hand-over %.6f s per batch "
            "x %lld batches = %.3f s, and the empty start of each epoch (worker start-up %.4f s + "
            "first fetch %.4f s)\n",
            floor_s, stall_ns_to_s(p->handover), (long long)p->batches, hand,
            p->workers > 0 ? stall_ns_to_s(p->startup) : 0.0, first);
    (void)stall_s;
    fprintf(f, "results in %s/ (summary.csv, fetch-*_start-none/iterations.csv, effective.ini)\n",
            outdir);
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

/* Opens cfg's trace for streaming when the what-if needs nothing beyond it:
 * *ws and *m (passes 1-3), and *x, cfg's transform. Otherwise *ws stays
 * NULL and `whole` says why the trace is to be read whole. */
static int wi_open_stream(const stall_config *cfg, wi_stream **ws, stall_measured *m, wi_xform *x,
                          char *whole, size_t wsize, stall_err *err)
{
    int rc = wi_stream_start(cfg, ws, err);
    if (rc == STALL_DS_UNSORTED) {
        snprintf(whole, wsize,
                 "%s: rows not sorted by (Epoch, Step): the trace was read whole into memory "
                 "(sort them for a read in bounded memory)",
                 cfg->perf);
        return 0;
    }
    if (rc)
        return rc;
    stall_measured grid;
    stall_model_params q;
    wi_stream_grid(*ws, &grid);
    wi_params(cfg, &grid, true, &q);
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
    *x = wi_xform_make(cfg, q.ranks, true);
    rc = wi_stream_measure(*ws, x, &q, m, err);
    if (rc) {
        wi_stream_close(*ws);
        *ws = NULL;
    }
    return rc;
}

int stall_model_job(const stall_config *cfg, const stall_run_opts *opts, stall_err *err)
{
    stall_measured m = {0};
    bool have = cfg->format != STALL_FORMAT_NONE;
    for (int i = 0; i < cfg->start_align.n; i++)
        if (cfg->start_align.v[i] != STALL_ALIGN_NONE && stall_config_given(cfg, "align", "start"))
            return stall_err_set(
                err, STALL_ECONFIG,
                "%s: [align] start: start alignment is a counterfactual on measured "
                "starts, available in mode = replay; mode = model takes start = none",
                cfg->ini_path);
    int rc = stall_job_inputs(cfg, err);
    wi_stream *ws = NULL;
    wi_xform x = WI_XFORM_NONE;
    char whole[STALL_PATH_MAX + 256] = "";
    if (rc == 0 && have && stall_job_streams(cfg, opts))
        rc = wi_open_stream(cfg, &ws, &m, &x, whole, sizeof whole, err);
    if (rc == 0 && have && !ws)
        rc = wi_load_measured(cfg, &m, err);
    stall_model_params p;
    wi_tables w = {0};
    double contention = 1.0;
    if (rc == 0) {
        wi_params(cfg, have ? &m : NULL, true, &p);
        if (ws) {
            /* wi_tables_build's checks that apply within the trace. */
            rc = wi_xform_check(cfg, &x, p.ranks, err);
            if (rc == 0)
                rc = wi_horizon_check(cfg, wi_stream_span(ws, true), err);
        } else {
            rc =
                wi_tables_build(cfg, have ? &m : NULL, p.ranks, p.epochs, p.batches, true, &w, err);
        }
    }
    if (rc == 0 && p.storage_mb_s > 0 && p.batch_mb <= 0)
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: [storage] batch_mb: must be > 0 when bandwidth_mb_s is set (the "
                           "trace has no bytes column)",
                           cfg->ini_path);
    /* Replications only where the what-if draws durations: otherwise every
     * seed gives the same numbers and the interval would be a pretence. */
    int reps = (int)cfg->replications;
    bool draws = !have || p.ranks > m.ranks || p.epochs > m.epochs || p.batches > m.batches;
    if (rc == 0 && reps > 1 && !draws) {
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "run", "replications", where, sizeof where);
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: has no effect: this what-if replays measured durations only "
                           "(nothing is drawn, every seed gives the same run); replications need "
                           "more GPUs, batches or epochs than the trace with [fetch] resample, or "
                           "format = none",
                           where);
    }
    if (rc == 0 && have && p.cores > 0) {
        /* The trace's durations were measured under contention: find how
         * much by simulating the measured configuration on these cores. */
        wi_cpu cpu = {.cores = p.cores,
                      .gpn = (int)cfg->gpus_per_node,
                      .fetch_share = p.cpu_share,
                      .compute_share = p.compute_cpu_share};
        wi_feed f = {.open = wi_feed_open,
                     .error = wi_feed_error,
                     .span = ws ? wi_stream_span(ws, false) : 0,
                     .ctx = ws};
        rc = ws ? wi_deflate_fed(&m, &f, &cpu, &p.cpu_deflate, err)
                : wi_deflate(&m, &cpu, &p.cpu_deflate, err);
        contention = 1.0 / p.cpu_deflate;
    }
    /* Fetch alignments: the [align] fetch list when given, else none. */
    stall_align_list fl = {1, {STALL_ALIGN_NONE}};
    if (stall_config_given(cfg, "align", "fetch"))
        fl = cfg->fetch_align;
    wi_job *jobs = stall_xcalloc((size_t)fl.n, sizeof *jobs);
    char *final = stall_job_outdir(cfg, opts), *outdir = NULL;
    if (rc == 0 && !opts->no_files)
        rc = stall_job_begin(final, &outdir, err);
    int64_t samples = cfg->samples > 0 ? cfg->samples : (have ? m.samples : 0);
    for (int i = 0; i < fl.n && rc == 0; i++) {
        wi_job *j = &jobs[i];
        j->fa = fl.v[i];
        stall_model_params pj = p;
        pj.fetch_align = j->fa;
        wi_collect c = {
            .rep = stall_report_create(p.ranks, cfg->warmup, cfg->delay_threshold, samples)};
        if (i == 0 && opts->on_iter) {
            if (opts->on_params)
                opts->on_params(opts->observer, &pj);
            c.hook = opts->on_iter;
            c.hook_ctx = opts->observer;
        }
        bool ranks_csv = stall_job_per_rank(cfg, p.ranks);
        stall_report_keep_ranks(c.rep, ranks_csv);
        if (ws) {
            stall_durations dur;
            rc = wi_stream_durations(ws, &pj, &x, &dur, err);
            if (rc == 0)
                rc = wi_run_with(&pj, &dur, &c, &j->st, err);
            int src = rc ? wi_stream_error(ws, err) : 0;
            rc = src ? src : rc;
        } else {
            rc = wi_run(&pj, &w, &c, &j->st, err);
        }
        if (rc == 0)
            stall_report_summarize(c.rep, &j->sum);
        if (rc == 0) {
            j->rep = stall_xcalloc((size_t)reps * 3, sizeof *j->rep);
            j->rep[0] = j->sum.epoch_time_s;
            j->rep[1] = samples > 0 ? j->sum.throughput_samples_s : j->sum.throughput_batches_s;
            j->rep[2] = j->sum.stall_share;
        }
        if (rc == 0 && !opts->no_files && !opts->no_iterations) {
            char name[64];
            snprintf(name, sizeof name, "fetch-%s_start-none", stall_align_name(j->fa));
            char *dir = stall_path_join(outdir, name);
            rc = stall_mkdirs(dir, err);
            if (rc == 0) {
                char *path = stall_path_join(dir, "iterations.csv");
                rc = stall_report_write_iterations(c.rep, path, err);
                free(path);
            }
            if (rc == 0 && ranks_csv) {
                char *path = stall_path_join(dir, "ranks.csv");
                rc = stall_report_write_ranks(c.rep, path, err);
                free(path);
            }
            free(dir);
        }
        stall_report_destroy(c.rep);
        for (int r = 1; r < reps && rc == 0; r++)
            rc = wi_replicate(cfg, have ? &m : NULL, &p, samples, j, r, err);
    }
    wi_reps rs = {.jobs = jobs, .n = fl.n, .reps = reps, .seed = cfg->seed, .samples = samples > 0};
    if (rc == 0 && reps > 1 && !opts->no_files)
        rc = stall_write_atomic_in(outdir, "replications.csv", wi_fill_reps, &rs, err);
    if (rc == 0 && reps > 1 && !opts->no_files)
        rc = stall_write_atomic_in(outdir, "replications_summary.csv", wi_fill_reps_summary, &rs,
                                   err);
    double measured = NAN;
    if (have && rc == 0)
        measured = stall_measured_mean_epoch(&m);
    if (rc == 0 && opts->summary)
        *opts->summary = jobs[0].sum;
    /* vs_measured only where the run is the trace's run (a what-if on
     * workers, speed or cores), never across GPU, batch or epoch counts. */
    bool comparable = have && p.ranks == m.ranks && p.batches == m.batches && p.epochs == m.epochs;
    if (rc == 0 && !opts->no_files) {
        wi_out o = {.jobs = jobs,
                    .n = fl.n,
                    .p = &p,
                    .measured_epoch_s = measured,
                    .comparable = comparable};
        rc = stall_write_atomic_in(outdir, "summary.csv", wi_fill_summary, &o, err);
    }
    if (rc == 0 && !opts->no_files) {
        /* effective.ini says what ran, so that it runs again as is. */
        stall_config eff = *cfg;
        eff.fetch_align = fl;
        eff.start_align = (stall_align_list){1, {STALL_ALIGN_NONE}};
        rc = stall_job_manifest_with(&eff, outdir, opts->digests, NULL, NULL, err);
    }
    if (rc == 0 && !opts->no_files)
        rc = stall_job_commit(final, outdir, err);
    else if (!opts->no_files)
        stall_job_abort(outdir);
    if (rc == 0 && opts->term) {
        /* The floor's first fetch of each rank, as the run was fed it. */
        stall_time *first = stall_xmalloc((size_t)p.ranks * sizeof *first);
        for (int r = 0; r < p.ranks; r++)
            first[r] = ws ? wi_xform_fetch(&x, wi_stream_first_fetch(ws, r))
                          : w.fetch[(size_t)r * (size_t)w.n];
        wi_term(opts->term, cfg, &p, have ? &m : NULL, first, whole, jobs, fl.n, measured,
                comparable, contention, samples > 0, final);
        free(first);
    }
    if (rc == 0 && opts->term && reps > 1)
        for (int i = 0; i < fl.n; i++) {
            wi_ci e = wi_interval(jobs[i].rep, reps, 0), t = wi_interval(jobs[i].rep, reps, 1),
                  s = wi_interval(jobs[i].rep, reps, 2);
            fprintf(opts->term,
                    "%d replications (seeds %lld..%lld), fetch %s, mean [95%% interval]: epoch_s "
                    "%.3f [%.3f, %.3f], %s %.1f [%.1f, %.1f], stall%% %.2f [%.2f, %.2f] "
                    "(replications.csv, replications_summary.csv)\n",
                    reps, (long long)cfg->seed, (long long)(cfg->seed + reps - 1),
                    stall_align_name(jobs[i].fa), e.mean, e.lo, e.hi,
                    samples > 0 ? "samples/s" : "batches/s", t.mean, t.lo, t.hi, 100 * s.mean,
                    100 * s.lo, 100 * s.hi);
        }
    free(outdir);
    free(final);
    for (int i = 0; i < fl.n; i++)
        free(jobs[i].rep);
    free(jobs);
    wi_tables_free(&w);
    wi_stream_close(ws);
    stall_measured_free(&m);
    return rc;
}

/*
 * model_job.c - mode = model: the closed-loop what-if, fed from a measured
 * trace or from distributions (feed.h), every fetch alignment of [align]
 * fetch, written as a result folder.
 */
#include "modes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"
#include "stall/io.h"

/* ---- mode = model ---- */

typedef struct wi_job {
    stall_align fa;
    stall_summary sum;
    stall_model_stats st;
} wi_job;

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
                    const stall_measured *m, const wi_tables *w, const wi_job *jobs, int n,
                    double measured, bool comparable, double contention, bool samples,
                    const char *outdir)
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
                m->prefetch,
                stall_config_given(cfg, "trace", "prefetch_factor") ? "" : " (PyTorch's default)");
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
    for (int r = 0; r < w->g; r++)
        first += stall_ns_to_s(w->fetch[(size_t)r * (size_t)w->n]);
    first /= w->g;
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
    if (rc == 0 && have)
        rc = wi_load_measured(cfg, &m, err);
    stall_model_params p;
    wi_tables w = {0};
    double contention = 1.0;
    if (rc == 0) {
        wi_params(cfg, have ? &m : NULL, true, &p);
        rc = wi_tables_build(cfg, have ? &m : NULL, p.ranks, p.epochs, p.batches, true, &w, err);
    }
    if (rc == 0 && p.storage_mb_s > 0 && p.batch_mb <= 0)
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: [storage] batch_mb: must be > 0 when bandwidth_mb_s is set (the "
                           "trace has no bytes column)",
                           cfg->ini_path);
    if (rc == 0 && have && p.cores > 0) {
        /* The trace's durations were measured under contention: find how
         * much by simulating the measured configuration on these cores. */
        wi_cpu cpu = {.cores = p.cores,
                      .gpn = (int)cfg->gpus_per_node,
                      .fetch_share = p.cpu_share,
                      .compute_share = p.compute_cpu_share};
        rc = wi_deflate(&m, &cpu, &p.cpu_deflate, err);
        contention = 1.0 / p.cpu_deflate;
    }
    /* Fetch alignments: the [align] fetch list when given, else none. */
    stall_align_list fl = {1, {STALL_ALIGN_NONE}};
    if (stall_config_given(cfg, "align", "fetch"))
        fl = cfg->fetch_align;
    wi_job *jobs = stall_xcalloc((size_t)fl.n, sizeof *jobs);
    char *final = stall_job_outdir(cfg, opts), *outdir = NULL;
    if (rc == 0)
        rc = stall_job_begin(final, &outdir, err);
    int64_t samples = cfg->samples > 0 ? cfg->samples : (have ? m.samples : 0);
    for (int i = 0; i < fl.n && rc == 0; i++) {
        wi_job *j = &jobs[i];
        j->fa = fl.v[i];
        stall_model_params pj = p;
        pj.fetch_align = j->fa;
        wi_collect c = {
            .rep = stall_report_create(p.ranks, cfg->warmup, cfg->delay_threshold, samples)};
        bool ranks_csv = stall_job_per_rank(cfg, p.ranks);
        stall_report_keep_ranks(c.rep, ranks_csv);
        rc = wi_run(&pj, &w, &c, &j->st, err);
        if (rc == 0) {
            stall_report_summarize(c.rep, &j->sum);
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
    }
    double measured = NAN;
    if (have && rc == 0)
        measured = stall_measured_mean_epoch(&m);
    /* vs_measured only where the run is the trace's run (a what-if on
     * workers, speed or cores), never across GPU, batch or epoch counts. */
    bool comparable = have && p.ranks == m.ranks && p.batches == m.batches && p.epochs == m.epochs;
    if (rc == 0) {
        wi_out o = {.jobs = jobs,
                    .n = fl.n,
                    .p = &p,
                    .measured_epoch_s = measured,
                    .comparable = comparable};
        rc = stall_write_atomic_in(outdir, "summary.csv", wi_fill_summary, &o, err);
    }
    if (rc == 0) {
        /* effective.ini says what ran, so that it runs again as is. */
        stall_config eff = *cfg;
        eff.fetch_align = fl;
        eff.start_align = (stall_align_list){1, {STALL_ALIGN_NONE}};
        rc = stall_job_manifest(&eff, outdir, err);
    }
    if (rc == 0)
        rc = stall_job_commit(final, outdir, err);
    else
        stall_job_abort(outdir);
    if (rc == 0 && opts->term)
        wi_term(opts->term, cfg, &p, have ? &m : NULL, &w, jobs, fl.n, measured, comparable,
                contention, samples > 0, final);
    free(outdir);
    free(final);
    free(jobs);
    wi_tables_free(&w);
    stall_measured_free(&m);
    return rc;
}

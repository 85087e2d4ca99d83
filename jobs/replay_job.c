/*
 * replay_job.c - mode = replay and mode = seed: from a dsanalyzer trace to a
 * finished result folder.
 *
 * replay: the dsanalyzer trace becomes a stall_replay_input (measured starts,
 * durations, arrival lags, hand-over floors, compute) and each (fetch, start)
 * combination is replayed in the event engine. seed: the notebook's
 * row-by-row computation (models/seed.c), written in its exact layout, with
 * the event replay's answer beside it in replay_summary.csv.
 *
 * Combinations run on a small pthread pool; each job owns its outputs, and
 * everything shared (the summary files, the terminal table) is produced in
 * combination order after the pool has joined, so -j never changes a byte.
 */
#include "modes.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "stall/dsanalyzer.h"
#include "stall/io.h"
#include "stall/replay.h"
#include "stall/report.h"
#include "stall/seed.h"

/* The notebook's effective-delay threshold, hard-coded (SEED_SEMANTICS Q23:
 * delay > 0.030 s, strict); the replay beside it takes [report]
 * delay_threshold. */
#define SCEN_SEED_DELAY_S 0.030

typedef struct scen_job {
    stall_align fa, sa;
    stall_summary sum;
    stall_seed_summary seed;
    int rc;
    stall_err err;
} scen_job;

typedef struct scen_ctx {
    const stall_config *cfg;
    const char *outdir;
    const stall_ds_trace *ds;
    const stall_replay_input *rin;
    const char *stem;
    scen_job *jobs;
    int njobs;
    int next;
    int no_iterations; /* opts->no_iterations: no iterations.csv per combination */
    pthread_mutex_t lock;
} scen_ctx;

/* ---- measured reference and replay input from a dsanalyzer trace ---- */

typedef struct scen_replay_data {
    stall_replay_input in;
    stall_time *start, *fetch, *lag, *floor, *compute, *request0;
    double measured_epoch_s;
} scen_replay_data;

static void scen_replay_free(scen_replay_data *d)
{
    free(d->start);
    free(d->fetch);
    free(d->lag);
    free(d->floor);
    free(d->compute);
    free(d->request0);
}

static void scen_replay_build(const stall_config *cfg, const stall_ds_trace *t, scen_replay_data *d)
{
    int g = t->gpus;
    int64_t n = (int64_t)t->rows;
    size_t cells = (size_t)n * (size_t)g;
    memset(d, 0, sizeof *d);
    d->start = stall_xmalloc(cells * sizeof *d->start);
    d->fetch = stall_xmalloc(cells * sizeof *d->fetch);
    d->compute = stall_xmalloc(cells * sizeof *d->compute);
    d->request0 = stall_xmalloc((size_t)g * sizeof *d->request0);
    stall_time floor_ns = stall_s_to_ns(cfg->stall_floor);
    stall_time t_end = 0;
    for (int64_t k = 0; k < n; k++) {
        for (int r = 0; r < g; r++) {
            size_t i = (size_t)k * g + (size_t)r;
            d->start[i] = t->start_ns[i];
            d->fetch[i] = stall_s_to_ns(t->fetch_s[i]);
            d->compute[i] = stall_ds_compute(t, (size_t)k, r);
            stall_time q = stall_ds_request(t, (size_t)k, r);
            if (k == 0)
                d->request0[r] = q;
            stall_time te = q + stall_s_to_ns(t->iter_s[i]);
            if (k == n - 1 && te > t_end)
                t_end = te;
        }
    }
    stall_time t0 = d->request0[0];
    for (int r = 1; r < g; r++)
        if (d->request0[r] < t0)
            t0 = d->request0[r];
    d->measured_epoch_s = stall_ns_to_s(t_end - t0);

    if (cfg->lag == 1) {
        /* Arrival lag and hand-over floor, per batch, from the trace: a batch
         * the loop waited for (stall above the floor) was delivered at its
         * measured ready time, so lag = Y - E; one that was already there
         * was handed over in its measured stall, and its unknown lag is the
         * rank's typical one, capped so it still arrived before Y. */
        d->lag = stall_xmalloc(cells * sizeof *d->lag);
        d->floor = stall_xmalloc(cells * sizeof *d->floor);
        stall_time *waited = stall_xmalloc((size_t)n * sizeof *waited);
        stall_time *handed = stall_xmalloc((size_t)n * sizeof *handed);
        for (int r = 0; r < g; r++) {
            size_t nw = 0, nh = 0;
            for (int64_t k = 0; k < n; k++) {
                size_t i = (size_t)k * g + (size_t)r;
                stall_time st = stall_s_to_ns(t->stall_s[i]);
                stall_time y_e = t->time_ns[i] - (d->start[i] + d->fetch[i]);
                if (st > floor_ns)
                    waited[nw++] = y_e > 0 ? y_e : 0;
                else
                    handed[nh++] = st;
            }
            stall_time lag_typ = stall_median_time(waited, nw),
                       floor_typ = stall_median_time(handed, nh);
            for (int64_t k = 0; k < n; k++) {
                size_t i = (size_t)k * g + (size_t)r;
                stall_time st = stall_s_to_ns(t->stall_s[i]);
                stall_time y_e = t->time_ns[i] - (d->start[i] + d->fetch[i]);
                if (y_e < 0)
                    y_e = 0;
                if (st > floor_ns) {
                    d->lag[i] = y_e;
                    d->floor[i] = floor_typ;
                } else {
                    d->lag[i] = lag_typ < y_e ? lag_typ : y_e;
                    d->floor[i] = st;
                }
            }
        }
        free(waited);
        free(handed);
    }
    d->in = (stall_replay_input){.ranks = g,
                                 .batches = n,
                                 .epoch = (int)t->epoch,
                                 .start = d->start,
                                 .fetch = d->fetch,
                                 .lag = d->lag,
                                 .floor = d->floor,
                                 .compute = d->compute,
                                 .tail = NULL,
                                 .request0 = d->request0};
}

/* ---- jobs ---- */

static char *scen_replay_dir(const char *outdir, const scen_job *j)
{
    char name[64];
    snprintf(name, sizeof name, "fetch-%s_start-%s", stall_align_name(j->fa),
             stall_align_name(j->sa));
    return stall_path_join(outdir, name);
}

static int scen_do_replay(scen_ctx *c, scen_job *j, bool write_rows)
{
    const stall_config *cfg = c->cfg;
    int64_t samples = cfg->samples;
    stall_report *rep =
        stall_report_create(c->rin->ranks, cfg->warmup, cfg->delay_threshold, samples);
    bool ranks_csv = write_rows && stall_job_per_rank(cfg, c->rin->ranks);
    stall_report_keep_ranks(rep, ranks_csv);
    int rc = stall_replay_run(c->rin, j->fa, j->sa, rep, NULL, &j->err);
    if (rc == 0) {
        stall_report_summarize(rep, &j->sum);
        if (write_rows) {
            char *dir = scen_replay_dir(c->outdir, j);
            rc = stall_mkdirs(dir, &j->err);
            if (rc == 0) {
                char *p = stall_path_join(dir, "iterations.csv");
                rc = stall_report_write_iterations(rep, p, &j->err);
                free(p);
            }
            if (rc == 0 && ranks_csv) {
                char *p = stall_path_join(dir, "ranks.csv");
                rc = stall_report_write_ranks(rep, p, &j->err);
                free(p);
            }
            free(dir);
        }
    }
    stall_report_destroy(rep);
    return rc;
}

static int scen_do_seed(scen_ctx *c, scen_job *j)
{
    stall_seed_result *res = NULL;
    int rc = stall_seed_run(c->ds, j->fa, j->sa, &res, &j->err);
    if (rc == 0) {
        char name[96];
        snprintf(name, sizeof name, "FETCH_ALIGN_%s_START_ALIGN_%s", stall_align_name(j->fa),
                 stall_align_name(j->sa));
        char *dir = stall_path_join(c->outdir, name);
        rc = stall_mkdirs(dir, &j->err);
        if (rc == 0) {
            char file[STALL_PATH_MAX];
            snprintf(file, sizeof file, "%s.csv", c->stem);
            char *p = stall_path_join(dir, file);
            rc = stall_seed_write_csv(res, p, &j->err);
            free(p);
        }
        free(dir);
        if (rc == 0)
            rc = stall_seed_summarize(res, 10, SCEN_SEED_DELAY_S, &j->seed, &j->err);
    }
    stall_seed_free(res);
    /* The event simulation's answer on the same trace, for comparison. */
    if (rc == 0)
        rc = scen_do_replay(c, j, false);
    return rc;
}

static void *scen_worker(void *arg)
{
    scen_ctx *c = arg;
    for (;;) {
        pthread_mutex_lock(&c->lock);
        int i = c->next < c->njobs ? c->next++ : -1;
        pthread_mutex_unlock(&c->lock);
        if (i < 0)
            return NULL;
        scen_job *j = &c->jobs[i];
        j->rc = c->cfg->mode == STALL_MODE_SEED ? scen_do_seed(c, j)
                                                : scen_do_replay(c, j, !c->no_iterations);
    }
}

static int scen_run_jobs(scen_ctx *c, int threads)
{
    if (threads > c->njobs)
        threads = c->njobs;
    if (threads <= 1) {
        scen_worker(c);
        return 0;
    }
    pthread_t *tid = stall_xcalloc((size_t)threads, sizeof *tid);
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&tid[started], NULL, scen_worker, c) != 0)
            break;
    if (started == 0)
        scen_worker(c);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    free(tid);
    return 0;
}

/* ---- result files ---- */

typedef struct scen_out {
    const scen_ctx *c;
    double measured_epoch_s;
} scen_out;

static int scen_fill_summary(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const scen_out *o = arg;
    fputs("fetch_align,start_align,", f);
    stall_summary_header(f);
    fputs(",measured_epoch_time_s,vs_measured_pct\n", f);
    for (int i = 0; i < o->c->njobs; i++) {
        const scen_job *j = &o->c->jobs[i];
        fprintf(f, "%s,%s,", stall_align_name(j->fa), stall_align_name(j->sa));
        stall_summary_fields(f, &j->sum);
        fprintf(f, ",%.9g,%.6f\n", o->measured_epoch_s,
                100.0 * (j->sum.epoch_time_s - o->measured_epoch_s) / o->measured_epoch_s);
    }
    return 0;
}

/* v with dec decimals, or "-" when it is not a number (a mean over no kept
 * batch). */
static const char *scen_num(char *buf, size_t n, int dec, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.*f", dec, v);
    return buf;
}

/* The line under a table whose means are "-": [report] warmup leaves out
 * every batch. */
static void scen_term_no_means(FILE *t, const scen_ctx *c, bool any, const char *cols)
{
    if (any)
        fprintf(t,
                "%s: -: no batch comes after the %lld left out of the means ([report] warmup), "
                "so there is nothing to average (a smaller warmup: --set report.warmup=1)\n",
                cols, (long long)c->cfg->warmup);
}

static void scen_term_replay(FILE *t, const scen_ctx *c, double measured)
{
    fprintf(t, "%-5s %-5s %11s %9s %10s %9s %9s %10s %7s\n", "fetch", "start", "epoch_s", "vs_meas",
            "iter_s", "stall_s", "delay_s", "eff_delay%", "stall%");
    bool none = false;
    for (int i = 0; i < c->njobs; i++) {
        const scen_job *j = &c->jobs[i];
        char b[4][32];
        none |= isnan(j->sum.iteration.mean);
        fprintf(t, "%-5s %-5s %11.3f %+8.2f%% %10s %9s %9s %10s %7.2f\n", stall_align_name(j->fa),
                stall_align_name(j->sa), j->sum.epoch_time_s,
                stall_pct_nz(100.0 * (j->sum.epoch_time_s - measured) / measured),
                scen_num(b[0], sizeof b[0], 4, j->sum.iteration.mean),
                scen_num(b[1], sizeof b[1], 4, j->sum.stall.mean),
                scen_num(b[2], sizeof b[2], 4, j->sum.delay.mean),
                scen_num(b[3], sizeof b[3], 2, j->sum.effective_delay_pct),
                100.0 * j->sum.stall_share);
    }
    fprintf(t, "%-11s %11.3f   (measured epoch time)\n", "measured", measured);
    scen_term_no_means(t, c, none, "iter_s, stall_s, delay_s, eff_delay%");
}

static void scen_term_seed(FILE *t, const scen_ctx *c)
{
    fprintf(t, "%-5s %-5s | %-27s | %-27s\n", "", "", "notebook (seed mode)", "event replay");
    fprintf(t, "%-5s %-5s | %9s %9s %7s | %9s %9s %7s\n", "fetch", "start", "iter_s", "stall_s",
            "eff%", "iter_s", "stall_s", "eff%");
    bool none = false;
    for (int i = 0; i < c->njobs; i++) {
        const scen_job *j = &c->jobs[i];
        char b[3][32];
        none |= isnan(j->sum.iteration.mean);
        fprintf(t, "%-5s %-5s | %9.4f %9.4f %7.2f | %9s %9s %7s\n", stall_align_name(j->fa),
                stall_align_name(j->sa), j->seed.mean_iter_s, j->seed.mean_stall_s,
                j->seed.effective_delay_pct, scen_num(b[0], sizeof b[0], 4, j->sum.iteration.mean),
                scen_num(b[1], sizeof b[1], 4, j->sum.stall.mean),
                scen_num(b[2], sizeof b[2], 2, j->sum.effective_delay_pct));
    }
    scen_term_no_means(t, c, none, "the event replay's iter_s, stall_s, eff%");
}

static const char *scen_basename(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* A trace of one GPU: alignment across GPUs leaves its values as they are,
 * so an [align] list given with a policy other than none changes nothing
 * (every row the same); refused, naming where it was given. So is [report]
 * delay_threshold: the delay (max - min stall over the GPUs) is 0. */
static int scen_align_check(const stall_config *cfg, stall_err *err)
{
    static const char *const key[2] = {"fetch", "start"};
    const stall_align_list *l[2] = {&cfg->fetch_align, &cfg->start_align};
    for (int k = 0; k < 2; k++) {
        bool acts = false;
        for (int i = 0; i < l[k]->n; i++)
            acts |= l[k]->v[i] != STALL_ALIGN_NONE;
        if (!acts || !stall_config_given(cfg, "align", key[k]))
            continue;
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "align", key[k], where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect: the trace has one GPU, whose %s no alignment "
                             "across GPUs changes (every policy runs as none); give align.%s = "
                             "none",
                             where, k == 0 ? "fetch durations" : "fetch starts", key[k]);
    }
    if (stall_config_given(cfg, "report", "delay_threshold")) {
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "report", "delay_threshold", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect: the trace has one GPU, whose delay (max - min "
                             "stall over the GPUs) is always 0, so no iteration's delay exceeds "
                             "the threshold (effective_delay_pct stays 0)",
                             where);
    }
    return 0;
}

int stall_replay_job(const stall_config *cfg, const stall_run_opts *opts, stall_err *err)
{
    if (cfg->format != STALL_FORMAT_DSANALYZER) {
        /* named where the mode was set (an INI's line, or --set on a trace
         * given directly, which has no INI to name) */
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "scenario", "mode", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: replay and seed modes read dsanalyzer traces; this [trace] is "
                             "format = %s (mode = model simulates it)",
                             where,
                             cfg->format == STALL_FORMAT_TIDY       ? "tidy"
                             : cfg->format == STALL_FORMAT_KINETO   ? "kineto"
                             : cfg->format == STALL_FORMAT_DFTRACER ? "dftracer"
                                                                    : "none");
    }
    stall_ds_trace *ds = NULL;
    int rc = stall_job_inputs(cfg, err);
    if (rc)
        return rc;
    /* The inputs' SHA-256 for effective.ini, hashed on another core while
     * the trace is read and simulated. */
    stall_job_hasher hasher = {0};
    if (!opts->digests)
        stall_job_hash_start(&hasher, cfg);
    rc = stall_ds_load(cfg->fetch, cfg->start, cfg->perf, cfg->epoch, &ds, err);
    if (rc == 0 && ds->gpus == 1 && !opts->sweep_point)
        rc = scen_align_check(cfg, err);
    char *final = NULL, *outdir = NULL;
    if (rc == 0) {
        final = stall_job_outdir(cfg, opts);
        rc = stall_job_begin(final, !opts->sweep_point, &outdir, err);
    }
    if (rc) {
        if (!opts->digests)
            stall_job_hash_finish(&hasher, NULL);
        stall_job_digests_free(&hasher.d);
        free(final);
        stall_ds_free(ds);
        return rc;
    }
    char stem[STALL_PATH_MAX];
    snprintf(stem, sizeof stem, "%s", scen_basename(cfg->perf));
    size_t sl = strlen(stem);
    if (sl > 4 && strcmp(stem + sl - 4, ".csv") == 0)
        stem[sl - 4] = '\0';

    scen_replay_data rd;
    scen_replay_build(cfg, ds, &rd);
    scen_ctx c = {.cfg = cfg,
                  .outdir = outdir,
                  .ds = ds,
                  .rin = &rd.in,
                  .stem = stem,
                  .no_iterations = opts->no_iterations};
    c.njobs = cfg->fetch_align.n * cfg->start_align.n;
    c.jobs = stall_xcalloc((size_t)c.njobs, sizeof *c.jobs);
    for (int a = 0; a < cfg->fetch_align.n; a++)
        for (int b = 0; b < cfg->start_align.n; b++) {
            scen_job *j = &c.jobs[a * cfg->start_align.n + b];
            j->fa = cfg->fetch_align.v[a];
            j->sa = cfg->start_align.v[b];
        }
    pthread_mutex_init(&c.lock, NULL);

    rc = stall_mkdirs(outdir, err);
    if (rc == 0) {
        scen_run_jobs(&c, opts->jobs);
        for (int i = 0; i < c.njobs && rc == 0; i++)
            if (c.jobs[i].rc) {
                *err = c.jobs[i].err;
                rc = c.jobs[i].rc;
            }
    }
    scen_out o = {.c = &c, .measured_epoch_s = rd.measured_epoch_s};
    if (rc == 0 && cfg->mode == STALL_MODE_SEED) {
        stall_seed_summary *rows = stall_xcalloc((size_t)c.njobs, sizeof *rows);
        for (int i = 0; i < c.njobs; i++)
            rows[i] = c.jobs[i].seed;
        char *p = stall_path_join(outdir, "total_summary.csv");
        rc = stall_seed_write_summary(p, stem, rows, (size_t)c.njobs, err);
        free(p);
        free(rows);
        if (rc == 0)
            rc = stall_write_atomic_in(outdir, "replay_summary.csv", scen_fill_summary, &o, err);
    } else if (rc == 0) {
        rc = stall_write_atomic_in(outdir, "summary.csv", scen_fill_summary, &o, err);
    }
    const stall_job_digests *digests = opts->digests;
    if (!digests) {
        int hrc = stall_job_hash_finish(&hasher, rc == 0 ? err : NULL);
        rc = rc ? rc : hrc;
        digests = &hasher.d;
    }
    if (rc == 0)
        rc = stall_job_manifest_with(cfg, outdir, digests, NULL, NULL, err);
    if (rc == 0 && opts->before_commit)
        rc = opts->before_commit(opts->before_commit_ctx, outdir, err);
    if (rc == 0)
        rc = stall_job_commit(final, outdir, err);
    else
        stall_job_abort(outdir);
    if (rc == 0 && opts->term) {
        FILE *t = opts->term;
        fprintf(t, "stallsim %s: scenario '%s' (%s), %d GPUs x %zu batches, epoch %lld\n",
                stall_version(), cfg->name, cfg->mode == STALL_MODE_SEED ? "seed" : "replay",
                ds->gpus, ds->rows, (long long)cfg->epoch);
        if (cfg->mode == STALL_MODE_SEED)
            scen_term_seed(t, &c);
        else
            scen_term_replay(t, &c, rd.measured_epoch_s);
        /* The default lists on one GPU (a given one is refused above):
         * rows that differ only in their labels. */
        if (ds->gpus == 1 && c.njobs > 1)
            fprintf(t, "one GPU: no alignment across GPUs changes its fetches, so every row is the "
                       "same, the measured run (set [align] fetch = none and start = none for one "
                       "row)\n");
        /* The two eff% columns count delays over different thresholds
         * when [report] delay_threshold is not the notebook's: say so. */
        if (cfg->mode == STALL_MODE_SEED && cfg->delay_threshold != SCEN_SEED_DELAY_S)
            fprintf(t,
                    "eff%%: the notebook counts delays > %g s (its own threshold, fixed), the "
                    "replay > %g s ([report] delay_threshold), so the two are not comparable\n",
                    SCEN_SEED_DELAY_S, cfg->delay_threshold);
        if (cfg->mode == STALL_MODE_SEED)
            fprintf(t, "notebook means keep Index number > 10; ");
        fprintf(t, "%smeans exclude the first %lld batches; results in %s/ (%s, effective.ini)\n",
                cfg->mode == STALL_MODE_SEED ? "replay " : "", (long long)cfg->warmup, final,
                cfg->mode == STALL_MODE_SEED
                    ? "FETCH_ALIGN_*/, total_summary.csv, replay_summary.csv"
                    : "summary.csv, fetch-*_start-*/iterations.csv");
    }
    pthread_mutex_destroy(&c.lock);
    stall_job_digests_free(&hasher.d);
    free(c.jobs);
    scen_replay_free(&rd);
    stall_ds_free(ds);
    free(outdir);
    free(final);
    return rc;
}

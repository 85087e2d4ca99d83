/*
 * validate.c - `stallsim validate`: the measured configuration of a trace,
 * simulated, against what was measured, epoch by epoch.
 */
#include "stall/validate.h"

#include <stdbool.h>
#include <stdlib.h>

#include "feed.h"
#include "infer.h"
#include "stream.h"
#include "stall/dsanalyzer.h"
#include "stall/io.h"
#include "stall/limits.h"

/* ---- validate ---- */

typedef struct wi_val {
    const stall_measured *m;
    const double *sim_e, *sim_s;
    int epoch0; /* the trace's label of epoch 0 (wi_epoch0) */
} wi_val;

/* Epochs as the trace labels them: the notebook's trace holds the selected
 * epoch ([trace] epoch, 1 in the notebook), a tidy trace counts from 0. */
static int wi_epoch0(const stall_config *cfg)
{
    return cfg->format == STALL_FORMAT_DSANALYZER ? (int)cfg->epoch : 0;
}

static int wi_fill_validate(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const wi_val *v = arg;
    fputs("epoch,measured_s,simulated_s,error_pct,measured_stall_s,simulated_stall_s,stall_error_"
          "pct,rank_start_spread_s\n",
          f);
    for (int e = 0; e < v->m->epochs; e++)
        fprintf(f, "%d,%.6f,%.6f,%.3f,%.6f,%.6f,%.3f,%.6f\n", v->epoch0 + e, v->m->epoch_s[e],
                v->sim_e[e], 100.0 * (v->sim_e[e] - v->m->epoch_s[e]) / v->m->epoch_s[e],
                v->m->stall_s[e], v->sim_s[e],
                v->m->stall_s[e] > 0 ? 100.0 * (v->sim_s[e] - v->m->stall_s[e]) / v->m->stall_s[e]
                                     : 0.0,
                v->m->start_spread_s ? v->m->start_spread_s[e] : 0.0);
    return 0;
}

/* [report]: validate writes validate.csv, epoch times and total stalls,
 * none of the means, counts, throughput or ranks.csv its keys shape.
 * [trace] cores says the capture machine's cores, on which mode = model
 * finds the contention a what-if on other cores takes out; validate shares
 * no cores and keeps the durations as measured (waits for a core
 * included), so no output depends on it: left out and listed, as analyze
 * and timeline list it. */
const char *const stall_validate_ignored[] = {
    "report", "align", "replay",     "loader", "cluster",   "fetch",       "compute", "storage",
    "ddp",    "run",   "checkpoint", "ranks",  "straggler", "trace.cores", NULL};

/* validate of a scenario without a measured trace. */
static int stall_validate_no_trace(const stall_config *cfg, stall_err *err)
{
    char where[STALL_PATH_MAX + 64];
    stall_config_origin(cfg, "trace", "format", where, sizeof where);
    return stall_err_set(err, STALL_ECONFIG,
                         "%s = none: validate compares a simulation with a measured run and "
                         "needs its trace (format = tidy, dsanalyzer, kineto or dftracer)",
                         where);
}

int stall_validate_check(const stall_config *cfg, stall_err *err)
{
    /* First: without a measured trace the checks of its replacement (the
     * [fetch] and [compute] distributions, left out here) would speak. */
    if (cfg->format == STALL_FORMAT_NONE)
        return stall_validate_no_trace(cfg, err);
    stall_config *c = stall_xmalloc(sizeof *c);
    *c = *cfg;
    char buf[8];
    stall_config_drop(c, stall_validate_ignored, buf, sizeof buf);
    c->mode = STALL_MODE_MODEL;
    int rc = stall_config_check(c, err);
    free(c);
    return rc;
}

char *stall_validate_outdir(const stall_config *cfg, const stall_run_opts *opts)
{
    /* Its own folder, so that it never mixes with a run's results. */
    return stall_job_outdir_as(cfg, opts->outdir, "-validate");
}

int stall_validate_persistent_check(const stall_config *cfg, const struct stall_measured *m,
                                    stall_err *err)
{
    /* The measured run's persistent workers: start-up estimated from epoch
     * 0 only and paid once, which one epoch does anyway; and kept workers,
     * which a run of 0 workers has none of. */
    if ((m->epochs != 1 && m->workers != 0) ||
        !stall_config_given(cfg, "trace", "persistent_workers"))
        return 0;
    char where[STALL_PATH_MAX + 64];
    stall_config_origin(cfg, "trace", "persistent_workers", where, sizeof where);
    return m->workers == 0 ? stall_err_set(err, STALL_ECONFIG,
                                           "%s: has no effect: the trace's run has no DataLoader "
                                           "workers (its workers = 0), so no worker processes "
                                           "were kept and no start-up was measured (PyTorch "
                                           "refuses persistent_workers=True without workers)",
                                           where)
                           : stall_err_set(err, STALL_ECONFIG,
                                           "%s: has no effect: the trace has one epoch, whose "
                                           "start-up is estimated and paid once either way",
                                           where);
}

int stall_validate(const stall_config *cfg_in, const stall_run_opts *opts, stall_err *err)
{
    /* What-if keys are left out, and said so below. */
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    *cfg = *cfg_in;
    char ignored[1024];
    size_t nign = stall_config_drop(cfg, stall_validate_ignored, ignored, sizeof ignored);
    stall_measured m = {0};
    int rc = 0;
    if (cfg->format == STALL_FORMAT_NONE)
        rc = stall_validate_no_trace(cfg, err);
    if (rc == 0)
        rc = stall_job_inputs_json(cfg, err);
    /* The inputs' SHA-256 for effective.ini, hashed on another core while
     * the trace is read and simulated (it was the last read of the trace,
     * a third of validate's time on a 1 M-row trace). */
    stall_job_hasher hasher = {0};
    bool hashing = rc == 0 && !opts->digests;
    if (hashing)
        stall_job_hash_start(&hasher, cfg);
    /* A large trace is read in streaming passes (stream.h), in memory that
     * does not grow with its length (stall_job_streams); a dsanalyzer trace whose perf rows are not
     * in (Epoch, Step) order is read whole, and the terminal says so. */
    wi_stream *ws = NULL;
    bool unsorted = false, whole_cols = false;
    wi_inputs in;
    wi_inputs_resolve(cfg, &in);
    in.what.observed = opts->on_iter != NULL;
    if (rc == 0 && stall_job_streams(cfg, opts)) {
        rc = wi_stream_open(&in.trace, &m, &ws, err);
        unsorted = rc == STALL_DS_UNSORTED;
        whole_cols = rc == WI_STREAM_WHOLE;
        rc = unsorted || whole_cols ? 0 : rc;
    }
    if (rc == 0 && !ws)
        rc = wi_json_format(cfg->format) ? wi_load_json(&in.trace, &m, err)
                                         : wi_load_measured(&in.trace, &m, err);
    if (rc == 0)
        rc = stall_validate_persistent_check(cfg, &m, err);
    stall_model_params p;
    stall_durations dur;
    wi_tables w = {0};
    double *sim_e = NULL, *sim_s = NULL;
    char *final = stall_validate_outdir(cfg, opts), *outdir = NULL;
    /* Refused before the run: a configuration effective.ini cannot give back. */
    if (rc == 0)
        rc = stall_config_roundtrip(cfg, final, err);
    if (rc == 0) {
        wi_params(&in.what, &m, false, &p);
        if (!ws)
            rc = wi_tables_build(&in.what, &m, p.ranks, p.epochs, p.batches, false, &w, err);
        else if ((rc = wi_horizon_check(&in.what, wi_stream_span(ws, false), err)) == 0 &&
                 (rc = wi_mem_check(&in.what, p.ranks, p.epochs, p.batches, false, err)) == 0)
            /* wi_tables_build's horizon check, on the same sum. */
            rc = wi_stream_durations(ws, &p, NULL, &dur, err);
    }
    if (rc == 0) {
        sim_e = stall_xcalloc((size_t)m.epochs, sizeof *sim_e);
        sim_s = stall_xcalloc((size_t)m.epochs, sizeof *sim_s);
        wi_collect c = {
            .epoch_s = sim_e, .stall_s = sim_s, .hook = opts->on_iter, .hook_ctx = opts->observer};
        if (opts->on_params)
            opts->on_params(opts->observer, &p);
        stall_model_stats st;
        rc = ws ? wi_run_with(&p, &dur, &c, &st, err) : wi_run(&p, &w, &c, &st, err);
        int src = rc && ws ? wi_stream_error(ws, err) : 0;
        rc = src ? src : rc;
        /* Profiling windows opened mid-training: the run above starts each
         * epoch empty, with the workers' start-up, which the measured window
         * never held (ddp2_w2 of torch 1.13: +61% against its window). The
         * fit simulated each window after a warm-up, its pipeline running,
         * as it was measured: those are what compare. */
        for (int e = 0; rc == 0 && m.window_s && e < m.epochs; e++) {
            sim_e[e] = m.window_s[e];
            sim_s[e] = m.window_stall_s[e];
        }
    }
    if (rc == 0)
        rc = stall_job_begin(final, true, &outdir, err);
    if (rc == 0) {
        wi_val v = {.m = &m, .sim_e = sim_e, .sim_s = sim_s, .epoch0 = wi_epoch0(cfg)};
        rc = stall_write_atomic_in(outdir, "validate.csv", wi_fill_validate, &v, err);
    }
    if (hashing) {
        int hrc = stall_job_hash_finish(&hasher, rc == 0 ? err : NULL);
        rc = rc ? rc : hrc;
    }
    if (rc == 0 && m.fetch_fit)
        rc = wi_fit_write(outdir, m.fetch_fit, err);
    if (rc == 0) {
        stall_config eff = *cfg;
        eff.start_align = (stall_align_list){1, {STALL_ALIGN_NONE}};
        rc = stall_job_manifest_with(&eff, outdir, hashing ? &hasher.d : opts->digests, NULL, NULL,
                                     err);
    }
    /* The measured configuration, simulated; but of profiling windows opened
     * mid-training the run (what --analyze and the figures take) starts
     * each epoch empty: only the table's windows compare. */
    if (rc == 0 && opts->comparable)
        *opts->comparable = !m.window_s;
    if (rc == 0 && opts->before_commit)
        rc = opts->before_commit(opts->before_commit_ctx, outdir, err);
    if (rc == 0)
        rc = stall_job_commit(final, outdir, err);
    else
        stall_job_abort(outdir);
    if (rc == 0 && opts->term) {
        FILE *f = opts->term;
        char each[160] = "";
        if (p.handover_epoch && !m.fetch_fit) {
            size_t at =
                (size_t)snprintf(each, sizeof each, "; the model takes each epoch's own, ms:");
            for (int e = 0; e < p.handover_epochs && e < 8 && at < sizeof each; e++)
                at += (size_t)snprintf(each + at, sizeof each - at, " %.3f",
                                       stall_ns_to_s(p.handover_epoch[e]) * 1e3);
            if (p.handover_epochs > 8 && at < sizeof each)
                snprintf(each + at, sizeof each - at, " ...");
        }
        /* 0 workers: the training process loads each batch, nothing is
         * prefetched (it printed "0 workers x prefetch 2"). */
        char loader[96];
        if (p.workers > 0)
            snprintf(loader, sizeof loader, "%d workers x prefetch %d", p.workers, p.prefetch);
        else
            snprintf(loader, sizeof loader, "0 workers (the training process loads each batch)");
        /* The workers' start-up, not analyze's epoch start-up (the first
         * batch's wait, first fetch included): with 0 workers there is none
         * (a 0-worker trace read "start-up 0.0000 s" beside analyze's
         * 0.028 s of epoch start-up). */
        char startup[160];
        if (p.workers > 0)
            snprintf(startup, sizeof startup, "worker start-up %.4f s (%s%s)",
                     stall_ns_to_s(p.startup), m.fetch_fit ? "fitted" : "median",
                     m.persistent ? " of epoch 0, paid once: persistent workers" : "");
        else
            snprintf(startup, sizeof startup, "no worker start-up (0 workers)");
        fprintf(f,
                "stallsim %s: validate %s: %d ranks x %s, %lld batches x %d "
                "epochs; %s: %s, hand-over %.6f s per batch (%s%s)\n",
                stall_version(), cfg->format == STALL_FORMAT_DSANALYZER ? cfg->perf : cfg->path,
                p.ranks, loader, (long long)p.batches, p.epochs,
                m.fetch_fit ? "fitted to the waits" : "from the trace", startup,
                stall_ns_to_s(p.handover), m.fetch_fit ? "in the fetch" : "the run's mean", each);
        if (m.workers_from != STALL_WORKERS_TRACE)
            fprintf(f, "workers per GPU: %d, %s%s; prefetch factor %d%s\n", m.workers,
                    m.workers_from == STALL_WORKERS_GIVEN
                        ? "from [trace] workers"
                        : "inferred from the fetch starts (the first batch of each GPU to start "
                          "after an earlier one finished; set [trace] workers if wrong)",
                    wi_workers_trace_say(&m), p.prefetch,
                    stall_config_given(cfg, "trace", "prefetch_factor") ? " (from [trace])"
                                                                        : " (PyTorch's default)");
        if (m.fetch_fit) {
            char say[4096];
            wi_fit_say(m.fetch_fit, m.window_s != NULL, say, sizeof say);
            fprintf(f,
                    "%s; simulated epochs below reproduce the waits the fit was made on, so "
                    "they check the fit, not the model%s\n",
                    say,
                    m.window_s ? " (each a window simulated after a warm-up, its pipeline "
                                 "running, as the fit did; not from an empty start)"
                               : "");
        }
        if (nign)
            fprintf(f, "left out (validate simulates the measured configuration): %s\n", ignored);
        if (m.cpu.has) {
            char cores[32] = "";
            if (m.cpu.cores > 0)
                snprintf(cores, sizeof cores, "%d ", m.cpu.cores);
            fprintf(f,
                    "CPU columns: validate replays the durations as measured, their waits for a "
                    "core included, and shares no cores; stallsim run on the trace simulates its "
                    "node's %scores from them (docs/model.md 2.3)\n",
                    cores);
        }
        if (whole_cols)
            fprintf(f, "%s: %s\n", cfg->path, wi_stream_whole_why());
        if (unsorted)
            fprintf(f,
                    "%s: rows not sorted by (Epoch, Step): the trace was read whole into memory "
                    "(sort them for a read in bounded memory)\n",
                    cfg->perf);
        fprintf(f, "%5s %11s %11s %8s | %11s %11s %8s\n", "epoch", "measured_s", "simulated_s",
                "error", "meas_stall", "sim_stall", "error");
        double ms = 0, ss = 0;
        for (int e = 0; e < m.epochs; e++) {
            ms += m.epoch_s[e];
            ss += sim_e[e];
            fprintf(f, "%5d %11.4f %11.4f %+7.2f%% | %11.5f %11.5f %+7.2f%%\n", wi_epoch0(cfg) + e,
                    m.epoch_s[e], sim_e[e],
                    stall_pct_nz(100.0 * (sim_e[e] - m.epoch_s[e]) / m.epoch_s[e]), m.stall_s[e],
                    sim_s[e],
                    m.stall_s[e] > 0
                        ? stall_pct_nz(100.0 * (sim_s[e] - m.stall_s[e]) / m.stall_s[e])
                        : 0.0);
        }
        fprintf(f, "%5s %11.4f %11.4f %+7.2f%%\n", "mean", ms / m.epochs, ss / m.epochs,
                stall_pct_nz(100.0 * (ss - ms) / ms));
        for (int e = 0; m.start_spread_s && e < m.epochs; e++)
            if (m.start_spread_s[e] > 0.05 * m.epoch_s[e])
                fprintf(f,
                        "epoch %d: the ranks began it %.3f s apart (rank %d last, %.0f%% of the "
                        "measured epoch); the model starts each rank as late, at its own "
                        "epoch_start, so the others wait for it at the first synchronisation "
                        "(docs/model.md 2.4, \"Ranks that start late\")\n",
                        wi_epoch0(cfg) + e, m.start_spread_s[e], m.start_last[e],
                        100.0 * m.start_spread_s[e] / m.epoch_s[e]);
        fprintf(f, "results in %s/ (validate.csv, %seffective.ini)\n", final,
                m.fetch_fit ? "fetch_fit.csv, " : "");
    }
    stall_job_digests_free(&hasher.d);
    free(outdir);
    free(final);
    free(sim_e);
    free(sim_s);
    wi_tables_free(&w);
    wi_stream_close(ws);
    stall_measured_free(&m);
    free(cfg);
    return rc;
}

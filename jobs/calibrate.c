/*
 * calibrate.c - `stallsim calibrate`: the CPU shares of a fetch and a
 * compute (and the core count) that best predict every trace of a job from
 * every other, each deflated by the contention it met.
 */
#include "stall/calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "feed.h"
#include "inputs.h"
#include "stall/config.h"
#include "stall/detect.h"
#include "stall/job.h"
#include "stall/tidy.h"
#include "stall/validate.h"

/* ---- calibrate ---- */

/* Least squares for the mean fetch D_i = io + cpu * f_i, f_i = max(1, W_i *
 * R_i / cores), at each candidate core count (or the given one), keeping the
 * best: a first estimate of the core count. */
static int wi_cores_fit(const stall_measured *ms, int n, int cores, int gpn, stall_calibration *c,
                        stall_err *err)
{
    double best_sse = INFINITY, *f = stall_xcalloc((size_t)n, sizeof *f);
    int lo = cores > 0 ? cores : 1, hi = cores > 0 ? cores : 256;
    for (int k = lo; k <= hi; k++) {
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (int i = 0; i < n; i++) {
            int rpn = gpn > 0 && gpn < ms[i].ranks ? gpn : ms[i].ranks;
            f[i] = fmax(1.0, (double)ms[i].workers * rpn / k);
            double y = ms[i].mean_fetch_s;
            sx += f[i];
            sy += y;
            sxx += f[i] * f[i];
            sxy += f[i] * y;
        }
        double den = n * sxx - sx * sx;
        if (fabs(den) < 1e-12)
            continue;
        double cpu = (n * sxy - sx * sy) / den, io = (sy - cpu * sx) / n;
        if (cpu < 0) {
            cpu = 0;
            io = sy / n;
        }
        if (io < 0) {
            io = 0;
            cpu = sxy / sxx;
        }
        double sse = 0;
        for (int i = 0; i < n; i++) {
            double d = io + cpu * f[i] - ms[i].mean_fetch_s;
            sse += d * d;
        }
        if (sse < best_sse - 1e-15) {
            best_sse = sse;
            c->fit_io_s = io;
            c->fit_cpu_s = cpu;
            c->cores = k;
        }
    }
    free(f);
    if (!isfinite(best_sse) && cores > 0) {
        /* No trace was contended in the linear sense: nothing to fit, the
         * simulation below still is. */
        c->cores = cores;
        c->fit_io_s = c->fit_cpu_s = NAN;
        return 0;
    }
    if (!isfinite(best_sse))
        return stall_err_set(err, STALL_EINVAL, "calibrate: the traces do not determine a fit");
    return 0;
}

/* The keys of an INI that calibrate does not use: everything but [trace]
 * (it reads the measured run, as validate does, and takes the cores and
 * GPUs per node from its options), and the [sweep] and [plan] lines. */
static const char *const cal_ignored[] = {"scenario", "report", "align",      "replay",    "loader",
                                          "cluster",  "fetch",  "compute",    "storage",   "ddp",
                                          "run",      "ranks",  "checkpoint", "straggler", NULL};

/* A Kineto or dftracer trace's fetch durations, with workers, are inferred
 * from the loop's waits by the model calibrate fits (docs/model.md 8.2):
 * nothing to calibrate it on. */
static int cal_refuse_json(const char *path, const char *what, stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE,
                         "%s: calibrate reads measured fetch durations of runs with workers, "
                         "which %s does not hold (with workers its fetches are not in it, the "
                         "model calibrate fits would infer them from the loop's waits; without, "
                         "it has no worker count to fit): give tidy traces "
                         "(tools/stallsim_capture.py, "
                         "docs/capture.md) or the notebook's (dsanalyzer) traces, or [fetch] "
                         "cpu_share by hand",
                         path, what);
}

/* One input of calibrate, decomposed into *m: a tidy trace or a capture
 * folder holding one (its workers column gives the count, as before); an
 * INI whose [trace] is a tidy or a dsanalyzer trace, or one of the
 * notebook's CSVs with its companions beside it, read as validate reads
 * them (wi_load_measured: [trace] workers, else the count inferred from the
 * fetch starts; [trace] prefetch_factor and persistent_workers). *note gets
 * (allocated, or NULL) what calibrate says of it: where its worker count
 * came from, and the INI's keys it leaves out. */
static int cal_load(const char *arg, stall_measured *m, char **note, int *cores, const char **from,
                    stall_err *err)
{
    *cores = 0;
    *from = "";
    char csv[STALL_DETECT_PATH_MAX];
    const char *path = stall_trace_capture_folder(arg, csv, sizeof csv) ? csv : arg;
    stall_trace_detected *d = stall_xmalloc(sizeof *d);
    stall_err e = {0};
    stall_trace_kind k = stall_trace_detect(path, d, &e);
    int rc = 0;
    if (k == STALL_TRACE_KINETO || k == STALL_TRACE_DFTRACER)
        rc = cal_refuse_json(arg, d->what, err);
    /* An input the detection recognised and refused (a folder without
     * traces, a notebook CSV without its companions): its words, not the
     * tidy reader's "read error" or "expected column 'rank'". */
    if (k == STALL_TRACE_UNKNOWN && !d->unrecognised)
        rc = stall_err_set(err, e.code, "%s", e.msg);
    bool ini = k == STALL_TRACE_INI;
    if (rc == 0 && (k == STALL_TRACE_UNKNOWN || k == STALL_TRACE_TIDY)) {
        /* A tidy file (or one that is not a trace: the tidy reader says
         * where it breaks). Without a workers column the count is inferred
         * from the fetch starts below, as validate infers it. */
        stall_tidy_trace *t = NULL;
        rc = stall_tidy_load(path, &t, err);
        bool infer = rc == 0 && t->workers < 0;
        if (rc == 0 && !infer)
            rc = stall_measured_from_tidy(t, m, err);
        if (rc == 0 && !infer && m->workers < 1)
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: calibrate needs runs with workers >= 1 (its workers column "
                               "says %d)",
                               arg, m->workers);
        /* the machine it was captured on: its cores column, else meta.json */
        if (rc == 0 && t->cpu.cores > 0) {
            *cores = t->cpu.cores;
            *from = "their cores column";
        } else if (rc == 0 && (*cores = wi_meta_cores(path, err)) > 0) {
            *from = "their capture's meta.json cpu_cores";
        } else if (rc == 0 && *cores < 0) {
            rc = STALL_EPARSE;
        }
        stall_tidy_free(t);
        if (rc || !infer) {
            free(d);
            return rc;
        }
    }
    free(d);
    if (rc)
        return rc;
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    stall_config_defaults(cfg);
    rc = stall_config_load_any(cfg, path, NULL, 0, err);
    if (rc == 0 && (cfg->format == STALL_FORMAT_KINETO || cfg->format == STALL_FORMAT_DFTRACER))
        rc = cal_refuse_json(
            arg, cfg->format == STALL_FORMAT_KINETO ? "its Kineto trace" : "its dftracer trace",
            err);
    if (rc == 0 && cfg->format == STALL_FORMAT_NONE) {
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "trace", "format", where, sizeof where);
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s = none: calibrate fits measured runs and needs their traces "
                           "(format = tidy or dsanalyzer)",
                           where);
    }
    /* A [trace] key of another format (path with format = dsanalyzer):
     * refused as run refuses it. */
    if (rc == 0)
        rc = stall_config_check_trace_keys(cfg, err);
    if (rc == 0) /* a missing trace file names its INI line, as run's does */
        rc = stall_job_inputs(cfg, err);
    wi_inputs *in = stall_xmalloc(sizeof *in);
    if (rc == 0) {
        wi_inputs_resolve(cfg, in);
        rc = wi_load_measured(&in->trace, m, err);
    }
    if (rc == 0 && m->cpu.has && m->cpu.cores > 0 && stall_config_given(cfg, "trace", "cores")) {
        /* as run refuses it: the trace says its own */
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "trace", "cores", where, sizeof where);
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: has no effect: the trace records its cores (its cores column: %d)",
                           where, m->cpu.cores);
    } else if (rc == 0 && m->cpu.has && m->cpu.cores > 0) {
        *cores = m->cpu.cores;
        *from = "their cores column";
    } else if (rc == 0) {
        const char *f = NULL;
        *cores = wi_trace_cores(cfg, 0, &f, err);
        if (*cores < 0)
            rc = STALL_EPARSE;
        *from = f && strcmp(f, "[trace] cores") == 0 ? "their INIs' [trace] cores"
                : f                                  ? "their capture's meta.json cpu_cores"
                                                     : "";
    }
    if (rc == 0)
        rc = stall_validate_persistent_check(cfg, m, err);
    if (rc == 0 && m->workers < 1)
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: calibrate needs runs with workers >= 1 (this one has %d%s)", arg,
                           m->workers,
                           m->workers_from == STALL_WORKERS_GIVEN      ? ", from [trace] workers"
                           : m->workers_from == STALL_WORKERS_INFERRED ? ", inferred from the "
                                                                         "fetch starts"
                                                                       : "");
    if (rc == 0) {
        char left[1024] = "";
        size_t nl = ini ? stall_config_list_given(cfg, cal_ignored, left, sizeof left) : 0;
        for (int x = 0; ini && x < cfg->nextra; x++) {
            size_t len = strlen(left);
            snprintf(left + len, sizeof left - len, "%s[%s] %s", nl++ ? ", " : "",
                     cfg->extra[x].section, cfg->extra[x].key);
        }
        char say[1400];
        int w = 0;
        if (m->workers_from == STALL_WORKERS_GIVEN)
            w = snprintf(say, sizeof say, "workers per GPU %d from [trace] workers", m->workers);
        else if (m->workers_from == STALL_WORKERS_INFERRED)
            w = snprintf(say, sizeof say,
                         "workers per GPU %d inferred from the fetch starts (set [trace] "
                         "workers if wrong)",
                         m->workers);
        if (nl)
            snprintf(say + w, sizeof say - (size_t)w,
                     "%sleft out (calibrate reads the measured run of [trace]): %s", w ? "; " : "",
                     left);
        *note = say[0] ? stall_xstrdup(say) : NULL;
    }
    free(in);
    free(cfg);
    return rc;
}

void stall_calibration_free(stall_calibration *c)
{
    if (!c)
        return;
    free(c->workers);
    free(c->mean_fetch_s);
    free(c->contention);
    free(c->measured_s);
    free(c->predicted_s);
    free(c->workers_from);
    for (int i = 0; c->note && i < c->n; i++)
        free(c->note[i]);
    free(c->note);
    memset(c, 0, sizeof *c);
}

int stall_calibrate_fit(const char *const *paths, int n, int cores, int gpus_per_node,
                        stall_calibration *c, stall_err *err)
{
    memset(c, 0, sizeof *c);
    if (n < 2)
        return stall_err_set(err, STALL_EINVAL,
                             "calibrate needs two or more traces of the same job");
    c->n = n;
    stall_measured *ms = stall_xcalloc((size_t)n, sizeof *ms);
    int rc = 0;
    c->workers_from = stall_xcalloc((size_t)n, sizeof *c->workers_from);
    c->note = stall_xcalloc((size_t)n, sizeof *c->note);
    /* the cores every trace recorded alike (the machine they were
     * captured on) stand for --cores when it is not given */
    int *rk = stall_xcalloc((size_t)n, sizeof *rk); /* each trace's recorded cores, 0: none */
    const char *from0 = "";
    bool same_from = true;
    for (int i = 0; i < n && rc == 0; i++) {
        const char *from;
        rc = cal_load(paths[i], &ms[i], &c->note[i], &rk[i], &from, err);
        c->workers_from[i] = ms[i].workers_from;
        from0 = i == 0 ? from : from0;
        same_from = same_from && strcmp(from, from0) == 0;
    }
    bool alike = true, any = false;
    for (int i = 0; i < n; i++) {
        alike = alike && rk[i] == rk[0];
        any = any || rk[i] > 0;
    }
    c->cores_recorded = "";
    c->cores_differ[0] = '\0';
    if (rc == 0 && cores <= 0 && alike && rk[0] > 0) {
        cores = rk[0];
        c->cores_recorded = same_from ? from0 : "their cores column, INIs or meta.json";
    } else if (rc == 0 && cores <= 0 && any) {
        for (int i = 0; i < n; i++) {
            size_t len = strlen(c->cores_differ);
            char k[16] = "none";
            if (rk[i] > 0)
                snprintf(k, sizeof k, "%d", rk[i]);
            snprintf(c->cores_differ + len, sizeof c->cores_differ - len, "%s%s", i ? ", " : "", k);
        }
    }
    free(rk);
    int distinct = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= ms[j].workers == ms[i].workers;
        distinct += !seen;
    }
    if (rc == 0 && distinct < 2)
        rc = stall_err_set(err, STALL_EINVAL,
                           "calibrate needs traces with at least two different worker counts: "
                           "all %d have %d workers per GPU (capture the same job with another "
                           "num_workers)",
                           n, ms[0].workers);
    if (rc == 0 && cores <= 0 && distinct < 3)
        rc = c->cores_differ[0]
                 ? stall_err_set(err, STALL_EINVAL,
                                 "calibrate: the traces recorded different cores (%s, in the order "
                                 "given) and with two worker counts the core count cannot be "
                                 "estimated; give --cores N",
                                 c->cores_differ)
                 : stall_err_set(err, STALL_EINVAL,
                                 "calibrate: with two worker counts the core count cannot be "
                                 "estimated; give --cores N");
    c->cores_given = cores > 0 && !c->cores_recorded[0];
    c->gpus_per_node = gpus_per_node;
    if (rc == 0)
        rc = wi_cores_fit(ms, n, cores, gpus_per_node, c, err);
    /* Refinement by simulation: the fit above assumes every worker is in
     * its CPU part all the time, which overstates contention, and it leaves
     * out the training loop's own CPU use. Search the share of a measured
     * fetch and of a measured compute that is CPU time (the same for every
     * trace) minimising the squared relative error of the simulated
     * cross-predictions (trace i run with trace j's worker count, i != j),
     * where each base trace's CPU work is deflated by the contention it met
     * in the simulation of its own run (wi_deflate). */
    c->measured_s = stall_xcalloc((size_t)n, sizeof *c->measured_s);
    for (int j = 0; j < n && rc == 0; j++)
        c->measured_s[j] = stall_measured_mean_epoch(&ms[j]);
    double best_obj = INFINITY;
    wi_cpu best = {.cores = c->cores, .gpn = gpus_per_node};
    enum { CAL_FETCH_STEPS = 20, CAL_COMPUTE_STEPS = 10 };
    double grid[CAL_COMPUTE_STEPS + 1][CAL_FETCH_STEPS + 1];
    for (int cs = 0; cs <= CAL_COMPUTE_STEPS && rc == 0; cs++)
        for (int fs = 0; fs <= CAL_FETCH_STEPS && rc == 0; fs++) {
            wi_cpu cpu = {.cores = c->cores,
                          .gpn = gpus_per_node,
                          .fetch_share = (double)fs / CAL_FETCH_STEPS,
                          .compute_share = (double)cs / CAL_COMPUTE_STEPS};
            double obj = 0;
            for (int i = 0; i < n && rc == 0; i++)
                for (int j = 0; j < n && rc == 0; j++) {
                    if (j == i)
                        continue;
                    double pred;
                    rc = wi_predict(&ms[i], ms[j].workers, &cpu, &pred, err);
                    double e = pred / c->measured_s[j] - 1;
                    obj += e * e;
                }
            grid[cs][fs] = 100.0 * sqrt(obj / (n * (n - 1.0)));
            if (rc == 0 && obj < best_obj - 1e-15) {
                best_obj = obj;
                best = cpu;
            }
        }
    c->fetch_share = best.fetch_share;
    c->compute_share = best.compute_share;
    c->rms_pct = 100.0 * sqrt(best_obj / (n * (n - 1.0)));
    /* How well the traces pin the shares down: the ranges of the fits whose
     * rms error is within CAL_SLACK percentage points of the best. */
    const double CAL_SLACK = 0.5;
    c->fetch_share_lo = c->compute_share_lo = 1.0;
    c->fetch_share_hi = c->compute_share_hi = 0.0;
    for (int cs = 0; cs <= CAL_COMPUTE_STEPS && rc == 0; cs++)
        for (int fs = 0; fs <= CAL_FETCH_STEPS; fs++)
            if (grid[cs][fs] <= c->rms_pct + CAL_SLACK) {
                double f = (double)fs / CAL_FETCH_STEPS, k = (double)cs / CAL_COMPUTE_STEPS;
                c->fetch_share_lo = fmin(c->fetch_share_lo, f);
                c->fetch_share_hi = fmax(c->fetch_share_hi, f);
                c->compute_share_lo = fmin(c->compute_share_lo, k);
                c->compute_share_hi = fmax(c->compute_share_hi, k);
            }
    c->workers = stall_xcalloc((size_t)n, sizeof *c->workers);
    c->mean_fetch_s = stall_xcalloc((size_t)n, sizeof *c->mean_fetch_s);
    c->contention = stall_xcalloc((size_t)n, sizeof *c->contention);
    c->predicted_s = stall_xcalloc((size_t)n * (size_t)n, sizeof *c->predicted_s);
    for (int i = 0; i < n && rc == 0; i++) {
        c->workers[i] = ms[i].workers;
        c->mean_fetch_s[i] = ms[i].mean_fetch_s;
        double d;
        rc = wi_deflate(&ms[i], &best, &d, err);
        c->contention[i] = 1.0 / d;
        for (int j = 0; j < n && rc == 0; j++)
            rc = wi_predict(&ms[i], ms[j].workers, &best, &c->predicted_s[(size_t)i * n + j], err);
    }
    for (int i = 0; i < n; i++)
        stall_measured_free(&ms[i]);
    free(ms);
    if (rc)
        stall_calibration_free(c);
    return rc;
}

/* Short unique names for paths: the '/'-separated parts left once the
 * leading and trailing parts every path shares are taken off; a path left
 * empty, or names that would repeat, fall back to the whole paths. */
static char **cal_short_names(const char *const *paths, int n)
{
    char **out = stall_xcalloc((size_t)n, sizeof *out);
    size_t pre = 0, suf = 0; /* shared prefix and suffix, in bytes, at '/' */
    size_t minlen = (size_t)-1;
    for (int i = 0; i < n; i++)
        minlen = strlen(paths[i]) < minlen ? strlen(paths[i]) : minlen;
    for (size_t k = 0; k < minlen; k++) {
        bool same = true;
        for (int i = 1; i < n; i++)
            same &= paths[i][k] == paths[0][k];
        if (!same)
            break;
        if (paths[0][k] == '/')
            pre = k + 1;
    }
    for (size_t k = 0; k < minlen - pre; k++) {
        bool same = true;
        size_t l0 = strlen(paths[0]);
        for (int i = 1; i < n; i++)
            same &= paths[i][strlen(paths[i]) - 1 - k] == paths[0][l0 - 1 - k];
        if (!same)
            break;
        if (paths[0][l0 - 1 - k] == '/')
            suf = k + 1;
    }
    bool whole = n < 2;
    for (int i = 0; i < n && !whole; i++) {
        size_t l = strlen(paths[i]);
        whole = l <= pre + suf;
        if (!whole)
            out[i] = stall_xstrdup(paths[i] + pre), out[i][l - pre - suf] = '\0';
        for (int j = 0; j < i && !whole; j++)
            whole = strcmp(out[i], out[j]) == 0;
    }
    for (int i = 0; i < n; i++) {
        if (whole) {
            free(out[i]);
            out[i] = stall_xstrdup(paths[i]);
        }
    }
    return out;
}

void stall_calibration_print(const stall_calibration *c, const char *const *paths, FILE *out)
{
    int n = c->n;
    char how[256];
    if (c->cores_recorded && c->cores_recorded[0])
        snprintf(how, sizeof how, " (the traces' machine: %s; --cores sets others)",
                 c->cores_recorded);
    else if (c->cores_differ[0])
        snprintf(how, sizeof how, " (fitted: the traces recorded different cores, %s)",
                 c->cores_differ);
    else
        snprintf(how, sizeof how, "%s", c->cores_given ? " (given)" : " (fitted)");
    fprintf(out,
            "stallsim %s: calibrate from %d traces on %d cores%s: %.0f%% of a measured fetch "
            "and %.0f%% of a measured compute is CPU time (rms cross-prediction error "
            "%.2f%%)",
            stall_version(), n, c->cores, how, 100 * c->fetch_share, 100 * c->compute_share,
            c->rms_pct);
    if (isnan(c->fit_io_s))
        fputs("; mean-fetch fit: none (no trace had more workers than cores)\n", out);
    else
        fprintf(out, "; mean-fetch fit: %.6f s waiting + %.6f s CPU\n", c->fit_io_s, c->fit_cpu_s);
    fprintf(out,
            "fits within 0.5 points of the best: fetch CPU share %.2f-%.2f, compute CPU share "
            "%.2f-%.2f\n",
            c->fetch_share_lo, c->fetch_share_hi, c->compute_share_lo, c->compute_share_hi);
    double most = 0;
    for (int i = 0; i < n; i++)
        most = fmax(most, c->contention[i]);
    if (most < 1.05 || c->fetch_share_hi - c->fetch_share_lo > 0.25)
        fprintf(out,
                "warning: the shares are not pinned down (the most contended trace ran its CPU "
                "work %.3fx slower than alone); predictions for more workers than measured are "
                "unreliable: add a trace with more workers than cores\n",
                most);
    /* A poor fit, or one on the edge of the search, is said so: its
     * numbers are then not to be copied into a scenario as they are. */
    if (c->rms_pct > STALL_CAL_POOR_PCT)
        fprintf(out,
                "warning: poor fit: the best shares still predict the traces' epoch times with an "
                "rms error of %.1f%% (above %.0f%%): CPU sharing on %d cores does not explain how "
                "these runs differ (not the same job? storage, the network or another program "
                "changed between them?); do not use the INI lines below as they are\n",
                c->rms_pct, STALL_CAL_POOR_PCT, c->cores);
    static const char *const share_name[2] = {"fetch", "compute"};
    double ev[2] = {c->fetch_share, c->compute_share};
    for (int k = 0; k < 2; k++) {
        if (ev[k] >= 1.0)
            fprintf(out,
                    "warning: the fit sits on a bound of its search: the %s CPU share is 100%%, "
                    "the most it can be; the runs may differ by more than CPU sharing on %d cores "
                    "explains (fewer effective cores? another shared resource?)%s\n",
                    share_name[k], c->cores,
                    k == 1 ? "; right where training runs on the CPU" : "");
        else if (ev[k] <= 0.0)
            fprintf(out,
                    "warning: the fit sits on a bound of its search: the %s CPU share is 0%%, the "
                    "least it can be; the runs show no CPU sharing in it, or less than none "
                    "explains\n",
                    share_name[k]);
    }
    fprintf(out, "%-40s %7s %12s %11s\n", "trace", "workers", "mean_fetch_s", "contention");
    for (int i = 0; i < n; i++)
        fprintf(out, "%-40s %7d %12.6f %10.3fx\n", paths[i], c->workers[i], c->mean_fetch_s[i],
                c->contention[i]);
    /* What was assumed of a trace that does not record its workers, and
     * the keys of an INI left out. */
    for (int i = 0; c->note && i < n; i++)
        if (c->note[i])
            fprintf(out, "%s: %s\n", paths[i], c->note[i]);
    fprintf(out,
            "\nINI lines for a scenario built on any of these traces (mode = model deflates "
            "the trace's CPU work by the contention it met, as above):\n[cluster]\ncores = "
            "%d\n",
            c->cores);
    if (c->gpus_per_node > 0)
        fprintf(out, "gpus_per_node = %d\n", c->gpus_per_node);
    fprintf(out, "[fetch]\ncpu_share = %.2f\n[compute]\ncpu_share = %.2f\n", c->fetch_share,
            c->compute_share);
    fprintf(out, "\npredicted mean epoch time (rows: trace the prediction starts from; "
                 "columns: worker count)\n");
    /* Columns by short unique names: the paths without the folders and
     * file name they all share (traces/w1/trace.csv, traces/w2/trace.csv:
     * w1, w2), whole paths where that leaves nothing. */
    char **names = cal_short_names(paths, n);
    int width = 16;
    for (int j = 0; j < n; j++)
        width = (int)strlen(names[j]) > width ? (int)strlen(names[j]) : width;
    fprintf(out, "%-40s", "from \\ to");
    for (int j = 0; j < n; j++)
        fprintf(out, " %*s", width, names[j]);
    fprintf(out, "\n%-40s", "measured");
    for (int j = 0; j < n; j++)
        fprintf(out, " %*.4f", width, c->measured_s[j]);
    fputc('\n', out);
    for (int i = 0; i < n; i++) {
        fprintf(out, "%-40s", paths[i]);
        for (int j = 0; j < n; j++) {
            double pred = c->predicted_s[(size_t)i * n + j], mj = c->measured_s[j];
            fprintf(out, " %*.4f %+6.1f%%", width - 8, pred, 100.0 * (pred - mj) / mj);
        }
        fputc('\n', out);
    }
    for (int j = 0; j < n; j++)
        free(names[j]);
    free(names);
}

int stall_calibrate(const char *const *paths, int n, int cores, int gpus_per_node, FILE *out,
                    stall_err *err)
{
    stall_calibration c;
    int rc = stall_calibrate_fit(paths, n, cores, gpus_per_node, &c, err);
    if (rc == 0)
        stall_calibration_print(&c, paths, out);
    stall_calibration_free(&c);
    return rc;
}

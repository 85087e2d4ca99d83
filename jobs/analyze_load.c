/*
 * analyze_load.c - the sources of an analysis in the tidy shape
 * (stall/analyze.h, docs/model.md section 8): an INI or a trace of any
 * format (tidy, dsanalyzer, Kineto, dftracer), with [trace] workers read as
 * run reads it, and the result folder named after a source. The analysis
 * itself: analyze.c.
 */
#include "stall/analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stall/dftracer.h"
#include "stall/job.h"
#include "stall/kineto.h"
#include "stall/measured.h"

#include "infer.h"
#include "inputs.h"

bool stall_an_is_ini(const char *path)
{
    size_t n = strlen(path);
    return n > 4 && strcmp(path + n - 4, ".ini") == 0;
}

char *stall_an_default_outdir(const char *path)
{
    /* results/analyze-<name>: the INI's file name, or the trace's folder
     * (named without its trailing '/': "ddp2_w2/" is ddp2_w2). */
    char *trimmed = stall_xstrdup(path);
    for (size_t n = strlen(trimmed); n > 1 && trimmed[n - 1] == '/'; n--)
        trimmed[n - 1] = '\0';
    path = trimmed;
    char *dir = stall_path_dir(path);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    char name[STALL_NAME_MAX];
    struct stat st;
    if (stall_an_is_ini(path)) {
        snprintf(name, sizeof name, "%.*s", (int)(strlen(base) - 4), base);
    } else if (base[0] && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(name, sizeof name, "%s", base); /* a folder of per-rank traces */
    } else {
        /* the trace's stem, or its folder's name for a trace.csv, as run
         * names it (a folder name alone made every trace of an input/
         * folder write results/analyze-input) */
        stall_config_name_from_path(path, name, sizeof name);
    }
    free(dir);
    free(trimmed);
    char buf[STALL_NAME_MAX + 32];
    snprintf(buf, sizeof buf, "results/analyze-%s", name);
    return stall_xstrdup(buf);
}

static int an_load_other(int format, const char *path, stall_tidy_trace **out, stall_err *err)
{
    int rc = format == STALL_FORMAT_KINETO ? stall_kineto_load(path, out, err)
                                           : stall_dftracer_load(path, out, err);
    if (rc == 0 && *out) {
        /* A dftracer trace's checkpoints by iteration are the model's
         * (run, validate: docs/model.md 2.5); analyze and timeline keep the
         * reader's sums per epoch, outside the parts (8.1). */
        stall_tidy_trace *t = *out;
        free(t->ckpt_start), free(t->ckpt_end), free(t->ckpt_bytes);
        t->ckpt_start = t->ckpt_end = NULL;
        t->ckpt_bytes = NULL;
    }
    return rc;
}

/* The keys of cfg that src's reading leaves out, listed into src->left
 * (validate's "left out" line): [trace] prefetch_factor and
 * persistent_workers (the measured loader of run's model: the trace shows
 * what its loader did, start-ups included), [trace] cores (the capture
 * machine's, for mode = model's what-ifs on other cores), [trace] workers where it
 * changes nothing (timeline of a Kineto or dftracer trace: no worker ids,
 * so no worker tracks to give it; a count the trace contradicts is
 * refused first), every key of the what-if, [align],
 * [replay] and [report] sections, and the [sweep] and [plan] lines. */
static void an_left_out(const stall_config *cfg, stall_an_src *src)
{
    static const char *const sections[] = {
        "align",   "replay", "report", "loader",     "cluster", "fetch",     "compute",
        "storage", "ddp",    "run",    "checkpoint", "ranks",   "straggler", NULL};
    const char *keys[4];
    int nk = 0;
    bool json = cfg->format == STALL_FORMAT_KINETO || cfg->format == STALL_FORMAT_DFTRACER;
    if (stall_config_given(cfg, "trace", "workers") && src->timeline && json)
        keys[nk++] = "workers";
    if (stall_config_given(cfg, "trace", "prefetch_factor"))
        keys[nk++] = "prefetch_factor";
    if (stall_config_given(cfg, "trace", "persistent_workers"))
        keys[nk++] = "persistent_workers";
    /* the capture machine's cores: mode = model's, for what-ifs on others */
    if (stall_config_given(cfg, "trace", "cores"))
        keys[nk++] = "cores";
    size_t n = sizeof src->left, len = 0;
    src->left[0] = '\0';
    for (int i = 0; i < nk; i++) {
        int w = snprintf(src->left + len, n - len, "%s[trace] %s", i ? ", " : "", keys[i]);
        len += w > 0 && len + (size_t)w < n ? (size_t)w : 0;
    }
    char rest[sizeof src->left];
    if (stall_config_list_given(cfg, sections, rest, sizeof rest)) {
        int w = snprintf(src->left + len, n - len, "%s%s", len ? ", " : "", rest);
        len += w > 0 && len + (size_t)w < n ? (size_t)w : 0;
    }
    /* [sweep] and [plan] lines: read by sweep and plan alone (run and
     * validate refuse them). */
    for (int i = 0; i < cfg->nextra; i++) {
        int w = snprintf(src->left + len, n - len, "%s[%s] %s", len ? ", " : "",
                         cfg->extra[i].section, cfg->extra[i].key);
        len += w > 0 && len + (size_t)w < n ? (size_t)w : 0;
    }
}

/* cfg's trace in the tidy shape (workers: stall_an_load's); path names
 * the INI or trace in the message of a configuration without one.
 * [trace] workers is read as run reads it (wi_load_measured): a tidy
 * trace's worker ids past it are refused at their line:column where the
 * trace has no workers column, a count that contradicts the column is
 * refused, and otherwise it is the measured run's count; a dsanalyzer
 * trace's batches go round robin to it unless workers > 0 gives the same
 * (another is refused: which one the run had would be a guess); a Kineto or
 * dftracer trace's run has it as its count (wi_json_workers: 0 where the
 * trace records the fetches, in the main process, another count refused;
 * else the count given, 0 refused) where the trace records none or
 * another. src->given: where it was given ("" when not), so that the first
 * line says so. */
static int an_load_cfg(const stall_config *cfg, const char *path, int workers,
                       stall_tidy_trace **out, stall_an_src *src_out, stall_err *err)
{
    wi_inputs *in = stall_xmalloc(sizeof *in);
    wi_inputs_resolve(cfg, in);
    const wi_trace_src *src = &in->trace;
    bool has = src->workers_given && src->workers >= 0;
    char *given = src_out->given;
    const size_t ngiven = sizeof src_out->given;
    given[0] = '\0';
    int rc = 0;
    if (cfg->format != STALL_FORMAT_NONE)
        rc = stall_config_check_trace_keys(cfg, err);
    if (rc == 0) /* a missing trace file names its INI line, as run's does */
        rc = stall_job_inputs_json(cfg, err);
    if (rc) {
        /* a [trace] key of another format: refused as run refuses it */
    } else if (cfg->format == STALL_FORMAT_TIDY) {
        rc = stall_tidy_load_workers(cfg->path, has ? (int)src->workers : -1, src->workers_at, out,
                                     err);
        if (rc == 0 && has) {
            /* wi_trace_workers infers nothing when the count is given. */
            int w, from;
            rc = wi_trace_workers(src, (*out)->workers, -1, NULL, NULL, &w, &from, err);
            if (rc == 0 && (*out)->workers < 0) {
                (*out)->workers = w;
                snprintf(given, ngiven, "%s", src->workers_at);
            }
            if (rc) { /* the count contradicts the trace's: nothing loaded */
                stall_tidy_free(*out);
                *out = NULL;
            }
        }
    } else if (cfg->format == STALL_FORMAT_DSANALYZER) {
        if (has && workers > 0 && workers != src->workers)
            rc = stall_err_set(err, STALL_ECONFIG,
                               "--workers: %d, but %s = %lld (the measured run's workers; give "
                               "one of them)",
                               workers, src->workers_at, (long long)src->workers);
        stall_ds_trace *d = NULL;
        if (rc == 0)
            rc = stall_ds_load(cfg->fetch, cfg->start, cfg->perf, cfg->epoch, &d, err);
        if (rc == 0 && has && workers <= 0 && src->workers > 0) {
            workers = (int)src->workers;
            snprintf(given, ngiven, "%s", src->workers_at);
        }
        /* A count given (--workers, or [trace] workers, 0 included) must fit
         * the fetch starts: one batch at a time per worker. */
        if (rc == 0 && workers > 0)
            rc = stall_ds_check_workers(d, workers, given[0] ? given : "--workers", err);
        else if (rc == 0 && has && src->workers == 0)
            rc = stall_ds_check_workers(d, 0, src->workers_at, err);
        if (rc == 0)
            *out = stall_ds_to_tidy(d, workers > 0 ? workers : -1);
        stall_ds_free(d);
    } else if (cfg->format == STALL_FORMAT_KINETO || cfg->format == STALL_FORMAT_DFTRACER) {
        rc = an_load_other(cfg->format, cfg->path, out, err);
        int w = -1;
        if (rc == 0)
            rc = wi_json_workers(src, *out, false, &w, err);
        if (rc == 0 && has && !src_out->timeline) {
            /* The run's count, which analyze reports; the trace's own
             * (dftracer's reader threads) said beside it where another. */
            int own = (*out)->workers;
            (*out)->workers = w;
            if (own > 0 && own != w)
                snprintf(given, ngiven, "%s; the trace reports %d", src->workers_at, own);
            else
                snprintf(given, ngiven, "%s", src->workers_at);
        }
        if (rc) {
            stall_tidy_free(*out);
            *out = NULL;
        }
    } else {
        rc = stall_err_set(
            err, STALL_ECONFIG,
            "%s: [trace] format: analyze needs a measured trace (tidy, dsanalyzer, kineto or "
            "dftracer)",
            path);
    }
    if (rc == 0)
        an_left_out(cfg, src_out);
    free(in);
    return rc;
}

int stall_an_load_src(const char *path, int workers, stall_tidy_trace **out, stall_an_src *src,
                      stall_err *err)
{
    src->given[0] = src->left[0] = '\0';
    /* An INI or a trace of any format (stall_config_load_any detects it). */
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    stall_config_defaults(cfg);
    int rc = stall_config_load_any(cfg, path, NULL, 0, err);
    src->format = rc == 0 ? (int)cfg->format : -1;
    if (rc == 0)
        rc = an_load_cfg(cfg, path, workers, out, src, err);
    /* --workers assigns a dsanalyzer trace's batches; a tidy trace names
     * its workers whichever way it was given, a Kineto or dftracer trace
     * does not show them. Refused for both, by analyze and timeline. */
    if (rc == 0 && workers > 0 && (cfg->format == STALL_FORMAT_TIDY || (*out)->summary)) {
        bool json = (*out)->summary != NULL;
        stall_tidy_free(*out);
        *out = NULL;
        rc = stall_err_set(err, STALL_ECONFIG,
                           json ? "--workers: for dsanalyzer traces only (Kineto and "
                                  "dftracer traces do not show which worker fetched a "
                                  "batch: nothing to assign)"
                                : "--workers: a tidy trace names its workers; --workers "
                                  "is for dsanalyzer traces only");
    }
    free(cfg);
    return rc;
}

/* The measured trace beside a simulated run, in the tidy shape. A
 * dsanalyzer trace records no worker ids: its batches go round robin to
 * [trace] workers, else to the count its fetch starts show, the count the
 * model's measured run has (stall_measured_from_dsanalyzer); *round_robin
 * says so. */
int stall_an_load_measured(const stall_config *cfg, stall_tidy_trace **out, bool *round_robin,
                           stall_err *err)
{
    *round_robin = false;
    stall_an_src *src = stall_xcalloc(1, sizeof *src);
    int rc = an_load_cfg(cfg, cfg->ini_path, -1, out, src, err);
    free(src);
    if (rc == 0 && cfg->format == STALL_FORMAT_DSANALYZER) {
        int w = cfg->trace_workers >= 0 ? (int)cfg->trace_workers
                                        : stall_measured_infer_workers(*out, NULL);
        stall_ds_tidy_workers(*out, w);
        *round_robin = w > 0;
    }
    return rc;
}

int stall_an_load(const char *path, int workers, stall_tidy_trace **out, stall_err *err)
{
    stall_an_src *src = stall_xcalloc(1, sizeof *src);
    int rc = stall_an_load_src(path, workers, out, src, err);
    free(src);
    return rc;
}

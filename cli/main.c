/*
 * main.c - the stallsim command line: a thin layer over the library.
 *
 *   stallsim run CONFIG.ini [-o DIR] [--set section.key=value]... [-j N]
 *
 * Exit status: 0 success, 2 bad input or configuration, 1 internal failure.
 * Every error is one line on stderr that names the file and line (or key).
 */
#define _DEFAULT_SOURCE /* realpath */
#define _GNU_SOURCE     /* fopencookie */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/cleanup.h"
#include "stall/config.h"
#include "stall/detect.h"
#include "stall/traceend.h"
#include "stall/io.h"
#include "stall/job.h"
#include "stall/scenario.h"
#include "stall/calibrate.h"
#include "stall/limits.h"
#include "stall/validate.h"
#include "stall/analyze.h"
#include "stall/tlexport.h"
#include "stall/sweep.h"
#include "stall/plan.h"
#include <unistd.h>
#include "stall/plot.h"
#include "stall/htmlreport.h"

#include "help.h"

/* A trace whose last line has no newline may be cut: said once at the
 * end, in the error line on failure. */
static void cli_cut_note(FILE *f)
{
    for (int i = 0; stall_trace_cut_file(i); i++)
        fprintf(f, " (note: %s: %s)", stall_trace_cut_file(i), stall_trace_cut_why(i));
}

static int cli_fail(const stall_err *err)
{
    fprintf(stderr, "stallsim: %s", err->msg[0] ? err->msg : stall_strerror(err->code));
    cli_cut_note(stderr);
    fputc('\n', stderr);
    return stall_exit_status(err->code);
}

static int cli_warn_cut(int rc)
{
    if (rc == 0)
        for (int i = 0; stall_trace_cut_file(i); i++)
            fprintf(stderr, "stallsim: warning: %s: %s\n", stall_trace_cut_file(i),
                    stall_trace_cut_why(i));
    return rc;
}

static int cli_bad_usage(const char *what)
{
    fprintf(stderr, "stallsim: %s (try stallsim --help)\n", what);
    return 2;
}

/* An option that takes one value given twice: refused, as a key given
 * twice is (-o a -o b wrote to b without a word). */
static int cli_given_twice(const char *opt, const char *first, const char *second)
{
    fprintf(stderr, "stallsim: %s %s: %s given twice (first %s %s); give it once\n", opt, second,
            opt, opt, first);
    return 2;
}

/* An option's value that does not parse, repeated (NULL: none given). */
static int cli_bad_value(const char *opt, const char *value, const char *needs)
{
    if (value)
        fprintf(stderr, "stallsim: %s %s: needs %s (try stallsim --help)\n", opt, value, needs);
    else
        fprintf(stderr, "stallsim: %s needs %s (try stallsim --help)\n", opt, needs);
    return 2;
}

/* An output option's destination checked before anything runs (a bad one
 * used to be found after the simulation, with the result folder already
 * written or replaced): a result folder that a job replaces whole (job),
 * another folder, or a file. `opt` names where the path came from. With
 * cfg, a path that is one of its inputs or holds one is refused: the
 * timeline was written over the trace it drew, and a result folder that
 * held its trace was replaced without it. */
static int cli_check_out(const char *opt, const char *path, bool folder, bool job,
                         const stall_config *cfg, stall_err *err)
{
    int rc = job ? stall_job_check_out(path, err) : stall_check_writable(path, folder, err);
    if (rc == 0 && cfg)
        rc = stall_job_check_apart(cfg, path, err);
    if (rc) {
        char msg[STALL_ERR_MSG];
        snprintf(msg, sizeof msg, "%s", err->msg);
        stall_err_set(err, rc, "%s %s", opt, msg);
    }
    return rc;
}

/* A --timeline file inside the result folder would be in the old folder
 * when the new one replaces it whole: refused (it was lost). */
static int cli_timeline_apart(const char *timeline, const char *dir, stall_err *err)
{
    char *tdir = stall_path_dir(timeline);
    char *rt = realpath(tdir, NULL), *rd = realpath(dir, NULL);
    int rc = 0;
    size_t n = rd ? strlen(rd) : 0;
    if (rt && rd && strncmp(rt, rd, n) == 0 && (rt[n] == '\0' || rt[n] == '/' || n == 1))
        rc = stall_err_set(err, STALL_EIO,
                           "--timeline %s: inside the result folder %s, which the run replaces "
                           "whole; choose a file outside it",
                           timeline, dir);
    free(rt);
    free(rd);
    free(tdir);
    return rc;
}

/* Refuses a key given twice among the overrides (is_sweep NULL: all are
 * --set): --set took the last one silently, yet the default result folder
 * was named after both ("+loader.workers=1+loader.workers=3" for a run of
 * 3), and a second --sweep of a key dropped the first axis; an INI refuses
 * a key given twice, the command line does too. A --set and a --sweep of
 * one key are the sweep's to refuse (sweep_grid.c). 0 or 2, said. */
static int cli_sets_once(const char **sets, const bool *is_sweep, int nsets)
{
    for (int i = 1; i < nsets; i++) {
        size_t n = strcspn(sets[i], "=");
        for (int j = 0; j < i; j++) {
            bool sw = is_sweep && is_sweep[i];
            if (sw != (is_sweep && is_sweep[j]) || strcspn(sets[j], "=") != n ||
                strncmp(sets[i], sets[j], n) != 0)
                continue;
            const char *opt = sw ? "--sweep" : "--set";
            fprintf(stderr, "stallsim: %s %s: %.*s given twice (first %s %s); give it once\n", opt,
                    sets[i], (int)n, sets[i], opt, sets[j]);
            return 2;
        }
    }
    return 0;
}

/* The terminal of run, validate, plan and sweep, which says what was
 * detected of a trace given in place of an INI (and how the command takes
 * it) just before its first line: a refusal (of the configuration, or of
 * the trace's fit to the what-if) is then the one line it names, not the
 * notes and then the error. */
typedef struct {
    const char *note[2];
    bool said;
} cli_noted;

static void cli_noted_say(cli_noted *w)
{
    for (int i = 0; !w->said && i < 2; i++)
        if (w->note[i] && w->note[i][0])
            printf("stallsim: %s\n", w->note[i]);
    w->said = true;
    fflush(stdout);
}

static ssize_t cli_noted_write(void *c, const char *buf, size_t n)
{
    cli_noted_say(c);
    size_t put = fwrite(buf, 1, n, stdout);
    fflush(stdout);
    return put == n ? (ssize_t)n : -1;
}

/* The terminal (stdout, or NULL with -q) that says w's notes first, if any
 * (cli_noted_close after). */
static FILE *cli_noted_open(cli_noted *w, FILE *term)
{
    bool any = (w->note[0] && w->note[0][0]) || (w->note[1] && w->note[1][0]);
    if (!term || !any)
        return term;
    fflush(stdout);
    FILE *f = fopencookie(w, "w", (cookie_io_functions_t){.write = cli_noted_write});
    if (!f) {
        cli_noted_say(w);
        return term;
    }
    setvbuf(f, NULL, _IONBF, 0);
    return f;
}

static void cli_noted_close(FILE *f)
{
    if (f && f != stdout)
        fclose(f);
}

static int cli_run(int argc, char **argv, bool validate)
{
    const char *ini = NULL, *outdir = NULL;
    /* The combinations run on every CPU unless -j says otherwise: their
     * output does not depend on the thread count. */
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int jobs = online < 1 ? 1 : online > 1024 ? 1024 : (int)online, quiet = 0;
    bool analyze = false, plots = false;
    const char *timeline = NULL;
    stall_tl_opts tl = {.rank_hi = -1};
    /* Overrides are applied after the file, in the order given. */
    const char **sets = calloc((size_t)argc, sizeof *sets);
    int nsets = 0, rc = 0;
    if (!sets)
        return 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) {
            if (++i >= argc) {
                rc = cli_bad_usage("-o needs a folder");
                goto done;
            }
            if (outdir) {
                rc = cli_given_twice("-o", outdir, argv[i]);
                goto done;
            }
            outdir = argv[i];
        } else if (strcmp(a, "--set") == 0) {
            if (++i >= argc) {
                rc = cli_bad_usage("--set needs section.key=value");
                goto done;
            }
            sets[nsets++] = argv[i];
        } else if (strncmp(a, "--set=", 6) == 0) {
            sets[nsets++] = a + 6;
        } else if (strcmp(a, "-j") == 0 || strncmp(a, "-j", 2) == 0) {
            const char *v = a[2] ? a + 2 : (++i < argc ? argv[i] : NULL);
            char *end = NULL;
            long n = v ? strtol(v, &end, 10) : 0;
            if (!v || *end != '\0' || n < 1 || n > 1024) {
                rc = cli_bad_usage("-j needs a thread count between 1 and 1024");
                goto done;
            }
            jobs = (int)n;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "--analyze") == 0) {
            analyze = true;
        } else if (strcmp(a, "--plots") == 0) {
            plots = true;
        } else if (strcmp(a, "--timeline") == 0) {
            if (++i >= argc) {
                rc = cli_bad_usage("--timeline needs FILE.json");
                goto done;
            }
            if (timeline) {
                rc = cli_given_twice("--timeline", timeline, argv[i]);
                goto done;
            }
            timeline = argv[i];
        } else if (strcmp(a, "--window") == 0 || strcmp(a, "--ranks") == 0) {
            if (++i >= argc || (a[2] == 'w' ? stall_tl_parse_window(argv[i], &tl)
                                            : stall_tl_parse_ranks(argv[i], &tl))) {
                rc = cli_bad_value(a, i < argc ? argv[i] : NULL,
                                   a[2] == 'w' ? "START:END seconds, START < END" : "R or LO-HI");
                goto done;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "stallsim: unknown option %s (try stallsim --help)\n", a);
            rc = 2;
            goto done;
        } else if (!ini) {
            ini = a;
        } else {
            rc = cli_bad_usage("more than one TRACE or CONFIG.ini given");
            goto done;
        }
    }
    if (!ini) {
        rc = cli_bad_usage(validate ? "validate needs a TRACE or CONFIG.ini"
                                    : "run needs a TRACE or CONFIG.ini");
        goto done;
    }
    rc = cli_sets_once(sets, NULL, nsets);
    if (rc)
        goto done;
    {
        stall_config *cfg = malloc(sizeof *cfg);
        stall_err err = {0};
        if (!cfg) {
            rc = 1;
            goto done;
        }
        stall_config_defaults(cfg);
        char note[3 * STALL_PATH_MAX];
        rc = stall_config_load_any(cfg, ini, note, sizeof note, &err);
        bool noted = rc == 0 && note[0] && !quiet;
        for (int i = 0; rc == 0 && i < nsets; i++)
            rc = stall_config_set(cfg, sets[i], &err);
        /* Said once the mode is known (--set may change it): replay and
         * seed take nothing of the loader the trace does not record. */
        if (noted) {
            bool replays = !validate && cfg->mode != STALL_MODE_MODEL;
            stall_config_note_for(note, sizeof note,
                                  replays ? STALL_NOTE_REPLAY : STALL_NOTE_LOADER, 0);
        }
        if (rc == 0)
            rc = validate ? stall_validate_check(cfg, &err) : stall_config_check(cfg, &err);
        /* The note, where there is one, before the terminal's first line. */
        cli_noted nw = {.note = {rc == 0 && noted ? note : ""}};
        FILE *term = cli_noted_open(&nw, quiet ? NULL : stdout);
        stall_run_opts o = {.outdir = outdir, .jobs = jobs, .term = term};
        if (rc == 0) {
            char *dir = validate ? stall_validate_outdir(cfg, &o) : stall_job_outdir(cfg, &o);
            rc = cli_check_out(outdir ? "-o" : "result folder", dir, true, true, cfg, &err);
            if (rc == 0 && timeline)
                rc = cli_check_out("--timeline", timeline, false, false, cfg, &err);
            if (rc == 0 && timeline)
                rc = cli_timeline_apart(timeline, dir, &err);
            free(dir);
        }
        if (rc == 0) {
            if ((tl.window || tl.rank_hi >= 0) && !timeline)
                rc = stall_err_set(&err, STALL_ECONFIG, "--window and --ranks need --timeline");
            else if (analyze || timeline)
                rc = stall_run_observed(cfg, &o, analyze, validate, timeline, &tl, &err);
            else
                rc = validate ? stall_validate(cfg, &o, &err) : stall_scenario_run(cfg, &o, &err);
            if (rc == 0 && plots) {
                char *dir = validate ? stall_validate_outdir(cfg, &o) : stall_job_outdir(cfg, &o);
                stall_plot_opts po = {.term = o.term};
                rc = stall_plot(dir, &po, NULL, &err);
                free(dir);
            }
        }
        free(cfg);
        cli_noted_close(term);
        rc = rc ? cli_fail(&err) : 0;
    }
done:
    free(sets);
    return rc;
}

static int cli_int_arg(const char *v, int lo, int hi, int *out)
{
    char *end = NULL;
    long n = v ? strtol(v, &end, 10) : 0;
    if (!v || *end != '\0' || n < lo || n > hi)
        return -1;
    *out = (int)n;
    return 0;
}

static int cli_calibrate(int argc, char **argv)
{
    int cores = 0, gpn = 0, n = 0;
    const char **paths = calloc((size_t)argc + 1, sizeof *paths);
    if (!paths)
        return 1;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--cores") == 0) {
            /* The bounds of [cluster] cores and gpus_per_node, which the
             * printed INI lines set. */
            if (cli_int_arg(i + 1 < argc ? argv[++i] : NULL, 1, 1 << 24, &cores)) {
                free(paths);
                return cli_bad_usage("--cores needs a count from 1 to 16777216 ([cluster] cores)");
            }
        } else if (strcmp(argv[i], "--gpus-per-node") == 0) {
            if (cli_int_arg(i + 1 < argc ? argv[++i] : NULL, 1, STALL_LIMIT_RANKS, &gpn)) {
                free(paths);
                return cli_bad_usage(
                    "--gpus-per-node needs a count from 1 to 65536 (the GPU limit)");
            }
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "stallsim: unknown option %s (try stallsim --help)\n", argv[i]);
            free(paths);
            return 2;
        } else {
            paths[n++] = argv[i];
        }
    }
    stall_err err = {0};
    int rc = stall_calibrate(paths, n, cores, gpn, stdout, &err);
    free(paths);
    return rc ? cli_fail(&err) : 0;
}

/* analyze and timeline: one trace (or INI) and options. */
static int cli_trace_cmd(int argc, char **argv, bool timeline)
{
    const char *path = NULL, *out = NULL;
    int workers = 0;
    stall_tl_opts tl = {.rank_hi = -1};
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) {
            if (++i >= argc)
                return cli_bad_usage(timeline ? "-o needs FILE.json" : "-o needs a folder");
            if (out)
                return cli_given_twice("-o", out, argv[i]);
            out = argv[i];
        } else if (strcmp(a, "--workers") == 0) {
            _Static_assert(STALL_LIMIT_WORKERS == 1024, "the message below names the limit");
            if (cli_int_arg(i + 1 < argc ? argv[++i] : NULL, 1, STALL_LIMIT_WORKERS, &workers))
                return cli_bad_usage("--workers needs a count between 1 and 1024 (workers per "
                                     "GPU, the limit of [loader] workers)");
        } else if (timeline && strcmp(a, "--window") == 0) {
            if (++i >= argc || stall_tl_parse_window(argv[i], &tl))
                return cli_bad_value(a, i < argc ? argv[i] : NULL,
                                     "START:END seconds, START < END");
        } else if (timeline && strcmp(a, "--ranks") == 0) {
            if (++i >= argc || stall_tl_parse_ranks(argv[i], &tl))
                return cli_bad_value(a, i < argc ? argv[i] : NULL, "R or LO-HI");
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "stallsim: unknown option %s (try stallsim --help)\n", a);
            return 2;
        } else if (!path) {
            path = a;
        } else {
            return cli_bad_usage("more than one TRACE or CONFIG.ini given");
        }
    }
    if (!path)
        return cli_bad_usage(timeline ? "timeline needs a TRACE or CONFIG.ini"
                                      : "analyze needs a TRACE or CONFIG.ini");
    stall_err err = {0};
    int rc;
    /* What the path is, in one line (as run and validate say it). */
    stall_config *c = malloc(sizeof *c);
    char note[3 * STALL_PATH_MAX];
    if (!c)
        return 1;
    stall_config_defaults(c);
    bool loaded = stall_config_load_any(c, path, note, sizeof note, &err) == 0;
    /* A tidy trace needs no word: analyze reads it as written. */
    if (loaded && note[0] && c->format != STALL_FORMAT_TIDY) {
        /* analyze and timeline take the workers alone, from --workers */
        stall_config_note_for(note, sizeof note, STALL_NOTE_WORKERS, workers);
        printf("stallsim: %s\n", note), fflush(stdout);
    }
    err = (stall_err){0};
    /* The destination before the trace is read; a timeline's file is none
     * of the trace's (analyze writes its own names into its folder). */
    rc = out ? cli_check_out("-o", out, !timeline, false, timeline && loaded ? c : NULL, &err) : 0;
    /* analyze writes its files into the folder, over whatever holds their
     * names: none of them may be an input */
    if (rc == 0 && out && !timeline && loaded && stall_analysis_check_apart(c, out, &err) != 0) {
        char msg[STALL_ERR_MSG];
        snprintf(msg, sizeof msg, "%s", err.msg);
        rc = stall_err_set(&err, STALL_EIO, "-o %s", msg);
    }
    free(c);
    if (rc)
        return cli_fail(&err);
    if (!timeline) {
        rc = stall_analyze_job(path, out, workers, stdout, &err);
    } else {
        if (!out)
            return cli_bad_usage("timeline needs -o FILE.json");
        stall_tidy_trace *t = NULL;
        stall_an_src *src = calloc(1, sizeof *src);
        if (!src)
            return 1;
        src->timeline = true;
        rc = stall_an_load_src(path, workers, &t, src, &err);
        if (rc == 0)
            rc = stall_timeline_export(t, &tl, out, &err);
        if (rc == 0) {
            int lo = tl.rank_hi >= 0 ? tl.rank_lo : 0,
                hi = tl.rank_hi >= 0 ? tl.rank_hi : t->ranks - 1;
            if (hi - lo + 1 == t->ranks)
                printf("stallsim %s: timeline of %s (%d rank%s) in %s (open in ui.perfetto.dev)\n",
                       stall_version(), path, t->ranks, t->ranks == 1 ? "" : "s", out);
            else if (lo == hi) /* "ranks 1-1" read as a range */
                printf("stallsim %s: timeline of %s (rank %d of %d) in %s (open in "
                       "ui.perfetto.dev)\n",
                       stall_version(), path, lo, t->ranks, out);
            else
                printf("stallsim %s: timeline of %s (ranks %d-%d of %d) in %s (open in "
                       "ui.perfetto.dev)\n",
                       stall_version(), path, lo, hi, t->ranks, out);
        }
        if (rc == 0 && src->left[0])
            printf("left out (timeline draws what the trace recorded): %s\n", src->left);
        free(src);
        stall_tidy_free(t);
    }
    return rc ? cli_fail(&err) : 0;
}

/* Loads ini, applies --set and --sweep in order; note (n bytes) gets what
 * was detected of a trace given in place of an INI ("" for an INI). */
static int cli_load(stall_config *cfg, const char *ini, const char **sets, const bool *is_sweep,
                    int nsets, char *note, size_t n, stall_err *err)
{
    stall_config_defaults(cfg);
    int rc = stall_config_load_any(cfg, ini, note, n, err);
    for (int i = 0; rc == 0 && i < nsets; i++) {
        if (!is_sweep[i]) {
            rc = stall_config_set(cfg, sets[i], err);
            continue;
        }
        const char *eq = strchr(sets[i], '=');
        char key[64];
        if (!eq || (size_t)(eq - sets[i]) >= sizeof key)
            return stall_err_set(err, STALL_ECONFIG, "--sweep %s: expected section.key=LIST",
                                 sets[i]);
        snprintf(key, sizeof key, "%.*s", (int)(eq - sets[i]), sets[i]);
        rc = stall_config_extra_add(cfg, "sweep", key, eq + 1, true, "--sweep", err);
    }
    return rc;
}

/* stallsim sweep and stallsim plan. */
static int cli_sweep_plan(int argc, char **argv, bool plan)
{
    const char *ini = NULL, *outdir = NULL;
    stall_sweep_opts so = {.jobs = 1};
    int quiet = 0, rc = 0;
    bool plots = false;
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    bool *is_sweep = calloc((size_t)argc + 1, sizeof *is_sweep);
    int nsets = 0;
    if (!sets || !is_sweep) {
        free(sets);
        free(is_sweep);
        return 1;
    }
    for (int i = 0; i < argc && rc == 0; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-o") == 0 || strcmp(a, "--out") == 0) {
            if (!v)
                rc = cli_bad_usage("-o needs a folder");
            else if (outdir)
                rc = cli_given_twice("-o", outdir, v);
            outdir = v;
            i++;
        } else if (strcmp(a, "--set") == 0 || (!plan && strcmp(a, "--sweep") == 0)) {
            if (!v)
                rc = cli_bad_usage("--set and --sweep need section.key=value");
            is_sweep[nsets] = a[2] == 's' && a[3] == 'w';
            sets[nsets++] = v;
            i++;
        } else if (!plan && strncmp(a, "-j", 2) == 0) {
            int n = 1;
            if (cli_int_arg(a[2] ? a + 2 : (i++, v), 1, 1024, &n))
                rc = cli_bad_usage("-j needs a thread count between 1 and 1024");
            so.jobs = n;
        } else if (!plan && strcmp(a, "--keep") == 0) {
            if (!v || strcmp(v, "iterations") != 0)
                rc = cli_bad_usage("--keep takes 'iterations'");
            so.keep_iterations = true;
            i++;
        } else if (!plan && strcmp(a, "--max-points") == 0) {
            int n = 1;
            if (cli_int_arg(v, 1, 2000000000, &n))
                rc = cli_bad_usage("--max-points needs a count >= 1");
            so.max_points = n;
            i++;
        } else if (!plan && strcmp(a, "--max-point-mb") == 0) {
            int n = 1;
            if (cli_int_arg(v, 1, 1 << 30, &n))
                rc = cli_bad_usage("--max-point-mb needs a size in MB >= 1");
            so.max_point_mb = n;
            i++;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "--plots") == 0) {
            plots = true;
        } else if (plan && (strncmp(a, "-j", 2) == 0 || strcmp(a, "--keep") == 0 ||
                            strncmp(a, "--max-point", 11) == 0)) {
            /* "unknown option -j" left a sweep user guessing */
            fprintf(stderr,
                    "stallsim: %s is an option of sweep, not of plan (try stallsim plan "
                    "--help)\n",
                    a);
            rc = 2;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "stallsim: unknown option %s (try stallsim --help)\n", a);
            rc = 2;
        } else if (!ini) {
            ini = a;
        } else {
            rc = cli_bad_usage("more than one TRACE or CONFIG.ini given");
        }
    }
    if (rc == 0 && !ini)
        rc = cli_bad_usage(plan ? "plan needs a TRACE or CONFIG.ini"
                                : "sweep needs a TRACE or CONFIG.ini");
    if (rc == 0)
        rc = cli_sets_once(sets, is_sweep, nsets);
    stall_config *cfg = rc == 0 ? malloc(sizeof *cfg) : NULL;
    if (rc == 0 && !cfg)
        rc = 1;
    if (rc == 0) {
        stall_err err = {0};
        char detected[3 * STALL_PATH_MAX] = "";
        rc = cli_load(cfg, ini, sets, is_sweep, nsets, detected, sizeof detected, &err);
        /* Under mpirun every rank runs this; rank 0 alone speaks and draws. */
        bool root = stall_sweep_launch_rank() == 0;
        /* What was detected, once it is known whether the points simulate
         * the measured loader (plan, a sweep of what-if keys) or replay. */
        bool say = rc == 0 && !quiet && root;
        if (say && detected[0]) {
            bool replays = !plan && !stall_config_wants_model(cfg) && cfg->mode != STALL_MODE_MODEL;
            stall_config_note_for(detected, sizeof detected,
                                  replays ? STALL_NOTE_REPLAY : STALL_NOTE_LOADER, 0);
        }
        /* plan, and a sweep of what-if keys, run a replay scenario's trace
         * as the model's input, and say so. */
        char note[2 * STALL_PATH_MAX] = "";
        if (rc == 0 && (plan || stall_config_wants_model(cfg)))
            rc = stall_config_as_model(cfg, plan ? "plan" : "sweep", note, sizeof note, &err);
        /* Both just before the terminal's first line, as run's. */
        cli_noted nw = {.note = {say ? detected : "", say && rc == 0 ? note : ""}};
        FILE *term = cli_noted_open(&nw, quiet ? NULL : stdout);
        if (rc == 0) {
            /* The folder before the searches or points run. */
            char *dir = stall_job_outdir_as(cfg, outdir, plan ? "-plan" : "-sweep");
            rc = cli_check_out(outdir ? "-o" : "result folder", dir, true, plan, plan ? cfg : NULL,
                               &err);
            free(dir);
        }
        const char *drawn = NULL;
        char *plan_dir = NULL;
        /* out here: drawn points into its outdir after the branch */
        stall_sweep_result res;
        if (rc == 0 && plan) {
            stall_plan_opts po = {.outdir = outdir, .term = term};
            rc = stall_plan_run(cfg, &po, &err);
            plan_dir = stall_job_outdir_as(cfg, outdir, "-plan");
            drawn = plan_dir;
        } else if (rc == 0) {
            so.outdir = outdir;
            so.term = term;
            so.progress = !quiet && isatty(STDERR_FILENO) ? stderr : NULL;
            so.notices = true; /* also with -q: Ctrl-C is answered at once */
            rc = stall_sweep_run(cfg, &so, &res, &err);
            if (rc == 0 && res.interrupted) {
                fprintf(stderr,
                        "stallsim: sweep interrupted: %zu of %zu points done are kept in %s/; run "
                        "the same command again to run the rest\n",
                        res.ran + res.skipped, res.points, res.outdir);
                rc = 130;
            }
            if (rc == 0)
                drawn = res.outdir;
        }
        if (rc == 0 && plots && root && drawn) {
            stall_plot_opts po = {.term = term};
            rc = stall_plot(drawn, &po, NULL, &err);
        }
        free(plan_dir);
        cli_noted_close(term);
        /* Under mpirun rank 0 alone reports and sets the job's exit status:
         * every rank meets the same error (the points are checked on every
         * rank before MPI starts, and a point's failure is shared after),
         * and a rank that exited first with an error would make mpirun kill
         * rank 0 before it spoke. */
        if (rc < 0)
            rc = root ? cli_fail(&err) : 0;
        stall_sweep_launch_end();
    }
    free(cfg);
    free(sets);
    free(is_sweep);
    return rc;
}

/* plot and report: one result folder. */
static int cli_result_cmd(int argc, char **argv, bool report)
{
    /* An option anywhere is named: "plot DIR -q" said "plot needs one
     * RESULT_DIR", as if the folder were missing. */
    for (int i = 0; i < argc; i++)
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr,
                    "stallsim: unknown option %s (plot and report take RESULT_DIR only; try "
                    "stallsim --help %s)\n",
                    argv[i], report ? "report" : "plot");
            return 2;
        }
    if (argc != 1)
        return cli_bad_usage(report ? "report needs one RESULT_DIR" : "plot needs one RESULT_DIR");
    stall_err err = {0};
    int rc = report ? stall_html_report(argv[0], stdout, &err)
                    : stall_plot(argv[0], &(stall_plot_opts){.term = stdout}, NULL, &err);
    return rc ? cli_fail(&err) : 0;
}

static int cli_main(int argc, char **argv);

/* What the terminal was told must have reached it: a full disk under
 * `stallsim run ... > out.txt`, or /dev/full, lost the table while the
 * command said success. The result files are written (and checked) apart. */
int main(int argc, char **argv)
{
    int rc = cli_main(argc, argv);
    bool flushed = fflush(stdout) == 0;
    int e = errno;
    if (!flushed || ferror(stdout)) {
        fprintf(stderr, "stallsim: standard output: write error%s%s%s%s\n", flushed ? "" : " (",
                flushed ? "" : strerror(e), flushed ? "" : ")",
                rc == 0 ? ": what it printed is incomplete" : "");
        return rc ? rc : 2;
    }
    return rc;
}

static int cli_main(int argc, char **argv)
{
    /* Ctrl-C or SIGTERM leaves no temporary files or folders behind. */
    stall_cleanup_on_signals();
    if (argc < 2) {
        cli_usage(stderr);
        return 2;
    }
    /* --no-sync applies to every command that writes results: take it out
     * before the command's own options are read. */
    int kept = 1;
    for (int i = 1; i < argc; i++) {
        if (i >= 2 && strcmp(argv[i], "--no-sync") == 0) {
            if (strcmp(argv[1], "calibrate") == 0) { /* it prints, writes nothing */
                fprintf(stderr, "stallsim: calibrate writes no file: --no-sync has nothing to "
                                "do; leave it out\n");
                return 2;
            }
            stall_io_set_sync(false);
        } else {
            argv[kept++] = argv[i];
        }
    }
    argc = kept;
    argv[argc] = NULL;
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        if (argc > 2)
            return cli_help_command(argv[2], stdout);
        cli_usage(stdout);
        return 0;
    }
    /* stallsim COMMAND --help: that command's usage. */
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return cli_help_command(cmd, stdout);
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("stallsim %s\n", stall_version());
        return 0;
    }
    if (strcmp(cmd, "run") == 0)
        return cli_warn_cut(cli_run(argc - 2, argv + 2, false));
    if (strcmp(cmd, "validate") == 0)
        return cli_warn_cut(cli_run(argc - 2, argv + 2, true));
    if (strcmp(cmd, "calibrate") == 0)
        return cli_warn_cut(cli_calibrate(argc - 2, argv + 2));
    if (strcmp(cmd, "analyze") == 0)
        return cli_warn_cut(cli_trace_cmd(argc - 2, argv + 2, false));
    if (strcmp(cmd, "timeline") == 0)
        return cli_warn_cut(cli_trace_cmd(argc - 2, argv + 2, true));
    if (strcmp(cmd, "sweep") == 0)
        return cli_warn_cut(cli_sweep_plan(argc - 2, argv + 2, false));
    if (strcmp(cmd, "plan") == 0)
        return cli_warn_cut(cli_sweep_plan(argc - 2, argv + 2, true));
    if (strcmp(cmd, "plot") == 0)
        return cli_result_cmd(argc - 2, argv + 2, false);
    if (strcmp(cmd, "report") == 0)
        return cli_result_cmd(argc - 2, argv + 2, true);
    fprintf(stderr, "stallsim: unknown command '%s' (try stallsim --help)\n", cmd);
    return 2;
}

/*
 * sweep_prep.c - before a sweep's points run (sweep_int.h): the result
 * folder holds exactly what its sweep.csv describes (or is moved aside),
 * the figures drawn from an older sweep.csv are dropped, and mode = model's
 * checks that need the trace's grid are made on every point.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "feed.h"
#include "modes.h"
#include "stall/cleanup.h"
#include "stall/dsanalyzer.h"
#include "stall/io.h"
#include "sweep_int.h"

static bool prep_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ---- the sweep folder holds exactly what its sweep.csv describes ---- */

/* An entry a sweep writes: sweep.csv (and its temporary files), point
 * folders (and theirs), and what plot and report draw from sweep.csv. */
static bool sweep_own_entry(const char *name);

/* A work path of the sweep's own: <own entry>.tmp.<pid> (sweep.csv's
 * temporary file, a point's run's work folder .point-N.tmp.tmp.<pid>). */
static bool sweep_own_work(const char *base, size_t len, void *ctx)
{
    (void)ctx;
    char b[256];
    if (len >= sizeof b)
        return false;
    memcpy(b, base, len);
    b[len] = '\0';
    return sweep_own_entry(b);
}

static bool sweep_own_entry(const char *name)
{
    size_t blen = 0;
    if (stall_cleanup_work_pid(name, &blen) > 0 && sweep_own_work(name, blen, NULL))
        return true;
    if (strcmp(name, "sweep.csv") == 0 || strcmp(name, "plots") == 0 ||
        strcmp(name, "report.html") == 0 || strncmp(name, ".point-", 7) == 0 ||
        strncmp(name, ".sweep.csv", 10) == 0 || strncmp(name, ".report.html", 12) == 0 ||
        strncmp(name, ".plots", 6) == 0)
        return true;
    if (strncmp(name, "point-", 6) != 0 || name[6] == '\0')
        return false;
    for (const char *p = name + 6; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

int stall__sweep_width(size_t points)
{
    int width = 6;
    for (size_t p = points; p >= 1000000; p /= 10)
        width++;
    return width;
}

const char *stall__sweep_summary_name(const stall_config *c)
{
    return c->mode == STALL_MODE_SEED ? "replay_summary.csv" : "summary.csv";
}

/* Whether text is a header and one row of as many fields, each ended by a
 * newline (what sweep.csv takes from a point's summary). */
static bool prep_one_row(const char *text)
{
    const char *nl = text ? strchr(text, '\n') : NULL;
    const char *end = nl ? strchr(nl + 1, '\n') : NULL;
    if (!end || end[1] != '\0' || end == nl + 1)
        return false;
    size_t a = 0, b = 0;
    for (const char *p = text; p < nl; p++)
        a += *p == ',';
    for (const char *p = nl + 1; p < end; p++)
        b += *p == ',';
    return a == b;
}

int stall__sweep_point_state(const stall_sweep *s, size_t i, const char *dir,
                             const stall_job_digests *d, char *why, size_t n, stall_err *err)
{
    why[0] = '\0';
    struct stat st;
    if (lstat(dir, &st) != 0)
        return STALL__SWEEP_PT_ABSENT;
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    stall_sweep_config(s, i, cfg);
    char *ini = stall_path_join(dir, "effective.ini");
    char *have = stall_read_file(ini, NULL), *want = NULL;
    free(ini);
    /* Paths in effective.ini are relative to the point's folder: the one
     * there now is a sibling of the one a run would write. */
    int rc = have ? stall_job_manifest_text(cfg, dir, d, &want, err) : 0;
    const char *sumname = stall__sweep_summary_name(cfg);
    if (rc == 0 && !have) {
        snprintf(why, n, "no effective.ini");
        rc = STALL__SWEEP_PT_DAMAGED;
    } else if (rc == 0 && strcmp(have, want) != 0) {
        /* Cut short (a crash of a file system that kept part of it) is
         * this point's, damaged; anything else another configuration's. */
        bool cut = strncmp(have, want, strlen(have)) == 0;
        snprintf(why, n, "effective.ini is cut short");
        rc = cut ? STALL__SWEEP_PT_DAMAGED : STALL__SWEEP_PT_OTHER;
    } else if (rc == 0) {
        char *sum = stall_path_join(dir, sumname);
        char *text = stall_read_file(sum, NULL);
        free(sum);
        if (!prep_one_row(text)) {
            snprintf(why, n, "%s %s", sumname, text ? "is not a header and one row" : "is missing");
            rc = STALL__SWEEP_PT_DAMAGED;
        } else {
            rc = STALL__SWEEP_PT_DONE;
        }
        free(text);
    }
    free(have);
    free(want);
    free(cfg);
    return rc;
}

/* Before a sweep writes into outdir: refuses a folder of other files (as
 * `run` does); moves a folder that holds another sweep (other axes, points
 * beyond this grid, or a point of another configuration) aside to
 * outdir.old-K, named in *note. A resumed run of the same sweep keeps its
 * points, their state[] set. */
int stall__sweep_prepare(const stall_sweep *s, const char *outdir, const stall_job_digests *dg,
                         unsigned char *state, char *note, size_t n, stall_err *err)
{
    note[0] = '\0';
    /* What a killed sweep left: its points' work folders and sweep.csv's
     * temporary file, where their process is gone (before any rank runs). */
    stall_cleanup_stale(outdir, sweep_own_work, NULL);
    DIR *d = opendir(outdir);
    if (!d)
        return 0; /* absent: created below */
    bool other = false, ours = false, stale = false;
    char foreign[256] = "";
    /* The point folders there, by number: looked at once the folder is
     * known to be a sweep's. */
    size_t *pts = NULL, npts = 0, cap = 0;
    int width = stall__sweep_width(s->points);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *nm = e->d_name;
        if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0)
            continue;
        if (!sweep_own_entry(nm)) {
            if (!other)
                snprintf(foreign, sizeof foreign, "%s", nm);
            other = true;
            continue;
        }
        if (strcmp(nm, "sweep.csv") == 0 || strncmp(nm, "point-", 6) == 0)
            ours = true;
        if (strncmp(nm, "point-", 6) == 0) {
            size_t k = (size_t)strtoull(nm + 6, NULL, 10);
            /* another point count's names, or a point beyond this grid */
            if (k >= s->points || strlen(nm + 6) != (size_t)width) {
                stale = true;
            } else {
                if (npts == cap) {
                    cap = cap ? 2 * cap : 64;
                    pts = stall_xrealloc(pts, cap * sizeof *pts);
                }
                pts[npts++] = k;
            }
        }
    }
    closedir(d);
    if (other) {
        free(pts);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: holds files that are not part of a stallsim sweep (e.g. %s); "
                             "choose another result folder (-o)",
                             outdir, foreign);
    }
    if (!ours) {
        free(pts);
        return 0;
    }
    /* The axes of the sweep.csv there, against this sweep's. */
    char *path = stall_path_join(outdir, "sweep.csv");
    char *old = stall_read_file(path, NULL);
    free(path);
    if (old) {
        char *nl = strchr(old, '\n');
        if (nl)
            *nl = '\0';
        size_t len = 0;
        char want[4096] = "point";
        len = strlen(want);
        for (int a = 0; a < s->naxes && len + 2 < sizeof want; a++)
            len += (size_t)snprintf(want + len, sizeof want - len, ",%s", s->ax[a].key);
        if (len + 1 < sizeof want)
            want[len++] = ',';
        want[len] = '\0';
        if (strncmp(old, want, len) != 0)
            stale = true;
        free(old);
    }
    /* The same axes with other values, another --set or other inputs: a
     * point folder whose effective.ini is not this sweep's point's. Its
     * results are moved aside with the rest, never replaced unsaid. */
    char why[128] = "other axes or more points", bad[256] = "";
    size_t nbad = 0;
    for (size_t k = 0; k < npts && !stale; k++) {
        char name[64], what[128];
        snprintf(name, sizeof name, "point-%0*zu", width, pts[k]);
        char *dir = stall_path_join(outdir, name);
        int st = stall__sweep_point_state(s, pts[k], dir, dg, what, sizeof what, err);
        free(dir);
        if (st < 0) {
            free(pts);
            return st;
        }
        state[pts[k]] = (unsigned char)st;
        if (st == STALL__SWEEP_PT_OTHER) {
            stale = true;
            snprintf(why, sizeof why, "another configuration: %s's effective.ini differs", name);
        }
        if (st == STALL__SWEEP_PT_DAMAGED && nbad++ == 0)
            snprintf(bad, sizeof bad, "%s: %s", name, what);
    }
    free(pts);
    if (!stale && nbad > 0)
        snprintf(note, n, "stallsim sweep: %zu point folder%s not whole (%s%s): running %s again\n",
                 nbad, nbad == 1 ? " is" : "s are", bad, nbad > 1 ? ", ..." : "",
                 nbad == 1 ? "it" : "them");
    if (!stale)
        return 0;
    memset(state, 0, s->points);
    char *aside = NULL;
    for (int k = 1; k < 1000 && !aside; k++) {
        char suffix[32];
        snprintf(suffix, sizeof suffix, ".old-%d", k);
        size_t l = strlen(outdir);
        while (l > 1 && outdir[l - 1] == '/')
            l--;
        char *cand = stall_xmalloc(l + sizeof suffix);
        snprintf(cand, l + sizeof suffix, "%.*s%s", (int)l, outdir, suffix);
        if (!prep_exists(cand))
            aside = cand;
        else
            free(cand);
    }
    if (!aside || rename(outdir, aside) != 0) {
        int rc = stall_err_set(err, STALL_EIO,
                               "%s: holds another sweep (%s) and cannot be moved aside: %s; "
                               "choose another result folder (-o)",
                               outdir, why, aside ? strerror(errno) : "no free name");
        free(aside);
        return rc;
    }
    snprintf(note, n, "stallsim sweep: %s held another sweep (%s): moved aside to %s\n", outdir,
             why, aside);
    free(aside);
    return 0;
}

/* After sweep.csv changed, the figures and report drawn from the old one
 * are removed (`stallsim plot`, `report` or --plots draw them again). */
void stall__sweep_drop_drawn(const char *outdir)
{
    char *p = stall_path_join(outdir, "plots");
    stall_remove_tree(p);
    free(p);
    p = stall_path_join(outdir, "report.html");
    remove(p);
    free(p);
}

/* Replay and seed mode: an [align] list given with a policy other than
 * none, or [report] delay_threshold, is refused where every point's trace
 * has one GPU (alignment across
 * GPUs changes nothing there: every row the same), as stall_replay_job
 * refuses it on a run; one point of more GPUs gives it an effect (a
 * [trace] axis may mix them). Given means in the scenario, with --set, or
 * as a [sweep] line or --sweep: replay runs the default lists as axes too,
 * which are not given. Each distinct trace is read once, until one of more
 * GPUs is found. */
static int sweep_replay_align_check(const stall_sweep *s, char *note, size_t nn, stall_err *err)
{
    static const char *const key[2] = {"fetch", "start"};
    static const char *const axis_key[2] = {"align.fetch", "align.start"};
    int axis[2];
    bool given[2];
    for (int k = 0; k < 2; k++) {
        axis[k] = stall__sweep_axis_of(s, axis_key[k]);
        given[k] = axis[k] >= 0 && !s->ax[axis[k]].from_base
                       ? true
                       : stall_config_given(&s->base, "align", key[k]);
    }
    /* So is [report] delay_threshold: one GPU's delay (max - min stall over
     * the GPUs) is always 0. */
    int dt_axis = stall__sweep_axis_of(s, "report.delay_threshold");
    bool dt_given = dt_axis >= 0 && !s->ax[dt_axis].from_base
                        ? true
                        : stall_config_given(&s->base, "report", "delay_threshold");
    /* The scenario's default lists as axes on traces of one GPU: points
     * that differ only in those labels, said (a list given is refused). */
    bool defaults = false;
    for (int k = 0; k < 2; k++)
        defaults |= axis[k] >= 0 && s->ax[axis[k]].from_base && s->ax[axis[k]].n > 1;
    if ((!given[0] && !given[1] && !dt_given && !defaults) ||
        s->base.format != STALL_FORMAT_DSANALYZER)
        return 0;
    stall_config *pc = stall_xmalloc(sizeof *pc);
    char id[4 * STALL_PATH_MAX + 64];
    char **seen = NULL;
    size_t nseen = 0;
    int rc = 0;
    bool many = false, acts[2] = {false, false};
    for (size_t i = 0; i < s->points && rc == 0; i++) {
        stall_sweep_config(s, i, pc);
        const stall_align_list *l[2] = {&pc->fetch_align, &pc->start_align};
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < l[k]->n; j++)
                acts[k] |= given[k] && l[k]->v[j] != STALL_ALIGN_NONE;
        if (many)
            continue;
        if (pc->format != STALL_FORMAT_DSANALYZER) {
            many = true; /* told when the point runs */
            continue;
        }
        snprintf(id, sizeof id, "%s|%s|%s|%lld", pc->fetch, pc->start, pc->perf,
                 (long long)pc->epoch);
        bool known = false;
        for (size_t j = 0; j < nseen && !known; j++)
            known = strcmp(seen[j], id) == 0;
        if (known)
            continue;
        seen = stall_xrealloc(seen, (nseen + 1) * sizeof *seen);
        seen[nseen++] = stall_xstrdup(id);
        stall_ds_trace *ds = NULL;
        rc = stall_ds_load(pc->fetch, pc->start, pc->perf, pc->epoch, &ds, err);
        many = rc == 0 && ds->gpus > 1;
        stall_ds_free(ds);
    }
    for (size_t j = 0; j < nseen; j++)
        free(seen[j]);
    free(seen);
    free(pc);
    if (rc == 0 && !many && defaults && !given[0] && !given[1])
        snprintf(note, nn,
                 "one GPU: no alignment across GPUs changes its fetches, so the points that "
                 "differ only in align.fetch or align.start are the same run (set [align] fetch = "
                 "none and start = none for one point each)");
    char where[STALL_PATH_MAX + 128];
    if (rc == 0 && !many && dt_given) {
        if (dt_axis >= 0)
            stall__sweep_axis_where(s, dt_axis, where, sizeof where);
        else
            stall_config_origin(&s->base, "report", "delay_threshold", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect: %s one GPU, whose delay (max - min stall over "
                             "the GPUs) is always 0, so no iteration's delay exceeds the "
                             "threshold (effective_delay_pct stays 0)",
                             where, nseen > 1 ? "every trace of the sweep has" : "the trace has");
    }
    int k = acts[0] ? 0 : 1;
    if (rc || many || !acts[k])
        return rc;
    if (axis[k] >= 0)
        stall__sweep_axis_where(s, axis[k], where, sizeof where);
    else
        stall_config_origin(&s->base, "align", key[k], where, sizeof where);
    return stall_err_set(err, STALL_ECONFIG,
                         "%s: has no effect: %s one GPU, whose %s no alignment across GPUs "
                         "changes (every policy runs as none); give align.%s = none",
                         where, nseen > 1 ? "every trace of the sweep has" : "the trace has",
                         k == 0 ? "fetch durations" : "fetch starts", key[k]);
}

/* mode = model's checks that need the trace's grid, on every point before
 * any runs (stall_model_point_check: a point beyond the trace without
 * resampling, replications where nothing is drawn), and the keys whose
 * effect a sweep judges over all its points (stall_model_effects_check:
 * [run] seed where no point draws, [storage] batch_mb where no point
 * reads, [storage] layout where no point spans nodes, ...). The trace is
 * read once (each distinct one once, with a [trace] axis), as its first
 * point would read it; Kineto and dftracer traces, whose fetches are
 * inferred, are checked when their points run. Replay and seed mode:
 * sweep_replay_align_check. */
int stall__sweep_model_check(const stall_sweep *s, char *late, size_t n, stall_err *err)
{
    late[0] = '\0';
    if (s->points == 0)
        return 0;
    if (s->base.mode != STALL_MODE_MODEL)
        return sweep_replay_align_check(s, late, n, err);
    stall_config *pc = stall_xmalloc(sizeof *pc), *first = stall_xmalloc(sizeof *first);
    stall_measured grid;
    char last[4 * STALL_PATH_MAX + 64] = "", id[sizeof last];
    int grc = 1, rc = 0;
    bool have = false;
    stall_model_effects any = {0};
    long long replayed = -1, together = -1; /* a point that replays a late start, one that
                                               cannot (another GPU count) */
    bool aligns = false;  /* a point aligns its fetches (a policy other than none) */
    double cache_max = 0; /* the largest [storage] cache_mb of a point */
    /* a point whose trace's read [storage] trace_cache_mb can fit: a trace
     * of more than one epoch (model_job.c refuses it on a run of one), or
     * the run at the trace's storage that it is the cache of */
    bool fits_cache = false;
    int64_t warmup_min = INT64_MAX; /* the smallest [report] warmup of a point */
    /* A point whose trace's contention would be found on the point's own
     * cores (the trace does not say its machine's): with a cores axis each
     * point would take the trace for a run on its cores. */
    long long unpinned = -1;
    int cores_axis = stall__sweep_axis_of(s, "cluster.cores");
    for (size_t i = 0; i < s->points && rc == 0; i++) {
        stall_sweep_config(s, i, pc);
        if (i == 0)
            *first = *pc;
        /* What the grid depends on: the trace's format, files and epoch,
         * and the worker count [trace] workers gives it (the trace's
         * workers, read against its worker ids). */
        snprintf(id, sizeof id, "%d|%s|%s|%s|%s|%lld|%lld", pc->format, pc->path, pc->fetch,
                 pc->start, pc->perf, (long long)pc->epoch, (long long)pc->trace_workers);
        if (!have || strcmp(id, last) != 0) {
            stall_err ge = {0};
            grc = stall_model_grid(pc, &grid, &ge);
            if (grc < 0) {
                rc = stall__sweep_point_err(s, i, &ge, err);
                break;
            }
            have = true;
            snprintf(last, sizeof last, "%s", id);
        }
        /* More GPUs per node than the point's GPUs, the trace's (gpus not
         * given; config/check.c refuses it against a given gpus): its GPUs
         * are on one node whatever the size, as model_job.c refuses a run. */
        if (grc == 0 && pc->gpus <= 0 && pc->gpus_per_node > grid.ranks &&
            stall_config_given(pc, "cluster", "gpus_per_node")) {
            stall_err e = {0};
            char where[STALL_PATH_MAX + 64];
            stall_config_origin(pc, "cluster", "gpus_per_node", where, sizeof where);
            stall_err_set(&e, STALL_ECONFIG,
                          "%s: %lld is more than the run's %d GPUs (the trace's; set [cluster] "
                          "gpus for more)",
                          where, (long long)pc->gpus_per_node, grid.ranks);
            rc = stall__sweep_point_err(s, i, &e, err);
            break;
        }
        fits_cache |= (grc == 1 && pc->format != STALL_FORMAT_NONE) ||
                      (grc == 0 && grid.epochs > 1) ||
                      stall_config_given(pc, "storage", "trace_mb_s") ||
                      stall_config_given(pc, "storage", "trace_latency_ms");
        if (grc == 1 && pc->format != STALL_FORMAT_NONE) {
            /* told when the point runs */
            any.draws = any.reads = any.cpu_waits = any.beyond = any.rescales = any.drops = true;
            any.epochs = any.trace_epochs = any.workers = any.trace_workers = true;
            any.nodes = any.ranks = any.late = any.caches = any.accumulates = any.ckpts = true;
            any.batches_max = INT64_MAX;
            continue;
        }
        stall_err e = {0};
        stall_model_effects fx;
        rc = stall_model_point_check(pc, grc == 0 ? &grid : NULL, &fx, &e);
        if (rc != 0) {
            rc = stall__sweep_point_err(s, i, &e, err);
            break;
        }
        stall_model_effects_or(&any, &fx);
        const char *from = NULL;
        if (cores_axis >= 0 && fx.deflates && unpinned < 0) {
            if (wi_trace_cores(pc, (int)pc->cores, &from, &e) < 0) {
                rc = stall__sweep_point_err(s, i, &e, err);
                break;
            }
            if (!from)
                unpinned = (long long)i;
        }
        /* the late start replayed at the trace's GPU count only */
        if (fx.late && pc->late_start == 0 && replayed < 0)
            replayed = (long long)i;
        if (grc == 0 && grid.late_wide && !fx.late && together < 0)
            together = (long long)i;
        if (pc->cache_mb > cache_max)
            cache_max = pc->cache_mb;
        if (pc->warmup < warmup_min)
            warmup_min = pc->warmup;
        for (int k = 0; k < pc->fetch_align.n; k++)
            aligns |= stall_config_given(pc, "align", "fetch") &&
                      pc->fetch_align.v[k] != STALL_ALIGN_NONE;
    }
    if (rc == 0) {
        /* the keys of stall_model_effects_check, in its order */
        static const char *const axis[STALL_MODEL_EFFECT_KEYS] = {"run.seed",
                                                                  "storage.batch_mb",
                                                                  "cluster.cpu_waits_out",
                                                                  "fetch.resample",
                                                                  "cluster.scaling",
                                                                  "loader.drop_last",
                                                                  "loader.persistent_workers",
                                                                  "trace.persistent_workers",
                                                                  "loader.persistent_workers",
                                                                  "trace.persistent_workers",
                                                                  "storage.layout",
                                                                  "align.fetch",
                                                                  "loader.in_order",
                                                                  "ranks.late_start",
                                                                  "report.delay_threshold",
                                                                  "trace.cores",
                                                                  "storage.cache_mb",
                                                                  "loader.prefetch_factor",
                                                                  "ddp.bucket_mb",
                                                                  "ddp.bandwidth_gb_s",
                                                                  "ddp.latency_us",
                                                                  "ddp.accumulation",
                                                                  "checkpoint.every_iterations",
                                                                  "report.delay_threshold"};
        char where[STALL_MODEL_EFFECT_KEYS][STALL_PATH_MAX + 128];
        const char *where_of[STALL_MODEL_EFFECT_KEYS];
        for (int k = 0; k < STALL_MODEL_EFFECT_KEYS; k++) {
            where[k][0] = '\0';
            int a = stall__sweep_axis_of(s, axis[k]);
            if (a >= 0)
                stall__sweep_axis_where(s, a, where[k], sizeof where[k]);
            where_of[k] = where[k][0] ? where[k] : NULL;
        }
        /* [align] fetch: an axis's points each hold one policy; judged on
         * whether any point aligns (first stands for them all). */
        first->fetch_align = (stall_align_list){1, {aligns ? STALL_ALIGN_AVG : STALL_ALIGN_NONE}};
        /* [storage] cache_mb: judged on whether any point has a cache */
        first->cache_mb = cache_max;
        /* [report] warmup: judged on the point that keeps the most */
        if (warmup_min < INT64_MAX)
            first->warmup = warmup_min;
        rc = stall_model_effects_check(first, &any, where_of, err);
    }
    if (rc == 0 && !fits_cache && stall_config_given(first, "storage", "trace_cache_mb")) {
        char where[STALL_PATH_MAX + 128];
        int a = stall__sweep_axis_of(s, "storage.trace_cache_mb");
        if (a >= 0)
            stall__sweep_axis_where(s, a, where, sizeof where);
        else
            stall_config_origin(first, "storage", "trace_cache_mb", where, sizeof where);
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: has no effect: %s, and its read is fitted against the others' "
                           "(its fetches are taken whole); leave it out",
                           where,
                           first->format == STALL_FORMAT_NONE ? "there is no measured trace"
                                                              : "every trace of the sweep has "
                                                                "one epoch");
    }
    if (rc == 0 && unpinned >= 0) {
        char where[STALL_PATH_MAX + 128];
        stall__sweep_axis_where(s, cores_axis, where, sizeof where);
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: point %lld's trace does not say the cores of the machine it was "
                           "captured on (no meta.json beside it), so each point would take it for "
                           "a run on its own cores and find its contention anew (docs/model.md "
                           "6); give [trace] cores, the capture machine's",
                           where, unpinned);
    }
    if (rc == 0 && replayed >= 0 && together >= 0)
        snprintf(
            late, n,
            "ranks that start late: point %lld replays the trace's late-starting ranks (at its "
            "GPU count), point %lld and the others at other GPU counts begin every epoch "
            "together, so they differ by more than the sweep's keys; --set "
            "ranks.late_start=none begins them all together (docs/model.md 2.4)",
            replayed, together);
    free(pc);
    free(first);
    return rc;
}

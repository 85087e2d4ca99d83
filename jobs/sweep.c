/*
 * sweep.c - `stallsim sweep` (contract in stall/sweep.h).
 *
 * Parsing turns every [sweep] line into an axis of values (text, applied by
 * stall_config_apply as the file would) and groups zipped axes; the point
 * index is a mixed-radix number over the groups. Every point is built and
 * checked before the first one runs, O(points x keys).
 *
 * Running hands this rank's points to `jobs` threads through one counter;
 * each point runs the ordinary scenario job into a temporary folder that is
 * renamed into place, so a folder is whole or absent. Durability is per
 * batch of folders (group commit): files under .point-* are not fsynced one
 * by one (a deferred prefix, stall/io.h); finished folders wait in a list,
 * and every STALL__SWEEP_COMMIT_S seconds (or STALL__SWEEP_COMMIT_MAX
 * folders) one thread syncs the file system once and renames the batch into
 * place. A crash keeps every renamed folder whole; a kill loses the points
 * in flight and those finished since the last commit. sweep.csv is then
 * assembled by rank 0 from the point folders in point order: its bytes do
 * not depend on which thread, rank or earlier run produced a point. A
 * SIGINT/SIGTERM handler (installed for the run only) sets a flag; threads
 * finish the points in flight and take no more.
 */
#include "stall/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef STALL_HAVE_MPI
#include <mpi.h>
#endif

#include "stall/cleanup.h"
#include "stall/io.h"
#include "stall/job.h"
#include "stall/scenario.h"

typedef struct sweep_axis {
    char key[64]; /* section.key */
    bool command_line;
    int n;
    char **vals;
    int group;
} sweep_axis;

struct stall_sweep {
    stall_config base; /* without [sweep] lines, align lists made single */
    int naxes;
    sweep_axis ax[STALL_EXTRA_MAX + 2];
    int ngroups;
    int group_n[STALL_EXTRA_MAX + 2]; /* values per group */
    size_t group_stride[STALL_EXTRA_MAX + 2];
    size_t points;
    const char *src; /* for messages */
};

/* ---- lists ---- */

static char *sweep_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

static void sweep_axis_push(sweep_axis *a, const char *v)
{
    a->vals = stall_xrealloc(a->vals, (size_t)(a->n + 1) * sizeof *a->vals);
    a->vals[a->n++] = stall_xstrdup(v);
}

static void sweep_axis_clear(sweep_axis *a)
{
    for (int i = 0; i < a->n; i++)
        free(a->vals[i]);
    free(a->vals);
    a->vals = NULL;
    a->n = 0;
}

/* A number as written; *is_int when it is an integer literal. Decimals: the
 * digits after the point (for arithmetic steps). */
static int sweep_number(const char *t, double *x, bool *is_int, int *decimals)
{
    char *end = NULL;
    errno = 0;
    *x = strtod(t, &end);
    if (t[0] == '\0' || *end != '\0' || errno == ERANGE || !isfinite(*x))
        return -1;
    *is_int = strspn(t + (t[0] == '-' || t[0] == '+'), "0123456789") ==
              strlen(t + (t[0] == '-' || t[0] == '+'));
    const char *dot = strchr(t, '.');
    *decimals = dot ? (int)strspn(dot + 1, "0123456789") : 0;
    return 0;
}

/* Parses LIST into a->vals. At most max values. */
static int sweep_parse_list(const char *where, const char *text, long long max, sweep_axis *a,
                            stall_err *err)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    char *s = sweep_trim(buf);
    char *dots = strstr(s, "..");
    if (!dots || strchr(s, ',')) {
        char *save = NULL;
        int items = 0;
        for (char *p = s;; p = NULL) {
            char *tok = strtok_r(p, ",", &save);
            if (!tok)
                break;
            tok = sweep_trim(tok);
            if (tok[0] == '\0')
                return stall_err_set(err, STALL_ECONFIG, "%s: empty value in list '%s'", where,
                                     text);
            sweep_axis_push(a, tok);
            items++;
        }
        /* strtok_r skips empty fields: count the commas to catch "1,,2". */
        int commas = 0;
        for (const char *p = text; *p; p++)
            commas += *p == ',';
        if (items == 0)
            return stall_err_set(err, STALL_ECONFIG, "%s: empty list", where);
        if (commas != items - 1)
            return stall_err_set(err, STALL_ECONFIG, "%s: empty value in list '%s'", where, text);
        return 0;
    }
    /* A range: A..B [xF | +S] */
    *dots = '\0';
    char *lo = sweep_trim(s), *rest = sweep_trim(dots + 2);
    char *op = strpbrk(rest, "x+");
    char stepbuf[64] = "";
    char kind = 0;
    if (op && op != rest) {
        kind = *op;
        snprintf(stepbuf, sizeof stepbuf, "%s", op + 1);
        *op = '\0';
    }
    char *hi = sweep_trim(rest), *step = sweep_trim(stepbuf);
    double A, B, S = 1;
    bool ia, ib, is = true;
    int da, db, ds = 0;
    if (sweep_number(lo, &A, &ia, &da) || sweep_number(hi, &B, &ib, &db) ||
        (kind && sweep_number(step, &S, &is, &ds)))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: bad range '%s' (expected A..B, A..B xF or A..B +S with numbers)",
                             where, text);
    if (A > B)
        return stall_err_set(err, STALL_ECONFIG, "%s: bad range '%s': %s is above %s", where, text,
                             lo, hi);
    double count;
    if (kind == 'x') {
        if (!(S > 1) || !(A > 0))
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: bad range '%s': a geometric range needs A > 0 and F > 1",
                                 where, text);
        count = floor(log(B / A) / log(S) + 1e-9) + 1;
    } else if (kind == '+') {
        if (!(S > 0))
            return stall_err_set(err, STALL_ECONFIG, "%s: bad range '%s': the step must be > 0",
                                 where, text);
        count = floor((B - A) / S + 1e-9) + 1;
    } else {
        if (!ia || !ib)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: bad range '%s': A..B needs integers (use A..B +S for a step)",
                                 where, text);
        count = B - A + 1;
    }
    if (count > (double)max)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: range '%s' has %.0f values, more than the limit of %lld points "
                             "(--max-points)",
                             where, text, count, max);
    bool ints = ia && ib && is;
    int dec = da > ds ? da : ds;
    char v[64];
    for (long long k = 0; k < (long long)count; k++) {
        if (ints && kind == 'x') {
            long long x = (long long)A;
            for (long long j = 0; j < k; j++)
                x *= (long long)S;
            snprintf(v, sizeof v, "%lld", x);
        } else if (kind == 'x') {
            snprintf(v, sizeof v, "%.15g", A * pow(S, (double)k));
        } else if (ints) {
            snprintf(v, sizeof v, "%lld", (long long)A + k * (long long)S);
        } else {
            snprintf(v, sizeof v, "%.*f", dec, A + (double)k * S);
        }
        sweep_axis_push(a, v);
    }
    return 0;
}

/* ---- the grid ---- */

static sweep_axis *sweep_find(stall_sweep *s, const char *key)
{
    for (int i = 0; i < s->naxes; i++)
        if (strcmp(s->ax[i].key, key) == 0)
            return &s->ax[i];
    return NULL;
}

static void sweep_describe(const stall_sweep *s, size_t i, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int a = 0; a < s->naxes && used < len; a++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s=%s", a ? ", " : "", s->ax[a].key,
                                 stall_sweep_value(s, i, a));
}

size_t stall_sweep_points(const stall_sweep *s)
{
    return s->points;
}
int stall_sweep_keys(const stall_sweep *s)
{
    return s->naxes;
}
const char *stall_sweep_key(const stall_sweep *s, int a)
{
    return s->ax[a].key;
}

const char *stall_sweep_value(const stall_sweep *s, size_t i, int a)
{
    const sweep_axis *x = &s->ax[a];
    size_t k = (i / s->group_stride[x->group]) % (size_t)s->group_n[x->group];
    return x->vals[k];
}

/* Point i's configuration; err names the point when a value or the check
 * fails. */
static int sweep_build(const stall_sweep *s, size_t i, stall_config *cfg, stall_err *err)
{
    *cfg = s->base;
    stall_err e = {0};
    int rc = 0;
    for (int a = 0; a < s->naxes && rc == 0; a++) {
        const sweep_axis *x = &s->ax[a];
        char section[64];
        snprintf(section, sizeof section, "%s", x->key);
        *strchr(section, '.') = '\0';
        const char *key = strchr(x->key, '.') + 1;
        char saved[STALL_PATH_MAX];
        strcpy(saved, cfg->ini_dir);
        if (x->command_line)
            cfg->ini_dir[0] = '\0';
        rc = stall_config_apply(cfg, section, key, stall_sweep_value(s, i, a), "", &e);
        strcpy(cfg->ini_dir, saved);
    }
    if (rc == 0)
        rc = stall_config_check(cfg, &e);
    if (rc == 0 && cfg->mode == STALL_MODE_MODEL) {
        /* What the model job runs, so that its effective.ini is this
         * configuration's (the resume check compares them). */
        if (!stall_config_given(cfg, "align", "fetch"))
            cfg->fetch_align = (stall_align_list){1, {STALL_ALIGN_NONE}};
        if (!stall_config_given(cfg, "align", "start"))
            cfg->start_align = (stall_align_list){1, {STALL_ALIGN_NONE}};
    }
    if (rc != 0) {
        /* Drop the "file: " or ": " the inner message starts with. */
        const char *m = e.msg;
        size_t sl = strlen(s->src);
        if (strncmp(m, s->src, sl) == 0 && m[sl] == ':')
            m += sl + 1;
        else if (m[0] == ':')
            m += 1;
        while (*m == ' ')
            m++;
        char desc[STALL_ERR_MSG / 2];
        sweep_describe(s, i, desc, sizeof desc);
        return stall_err_set(err, STALL_ECONFIG, "%s: [sweep] point %zu (%s): %s", s->src, i, desc,
                             m);
    }
    return 0;
}

void stall_sweep_config(const stall_sweep *s, size_t i, stall_config *out)
{
    stall_err e;
    if (sweep_build(s, i, out, &e) != 0)
        abort(); /* every point was checked by stall_sweep_create */
}

/* Memory a point needs, in MB, when it can be told from the configuration
 * (model mode, GPUs and batches given); 0 otherwise. */
static double sweep_point_mb(const stall_config *c)
{
    if (c->mode != STALL_MODE_MODEL || c->gpus <= 0 || c->batches <= 0)
        return 0;
    double e = c->epochs > 0 ? (double)c->epochs : 1;
    double cells = e * (double)c->gpus * (double)c->batches;
    /* fetch and compute tables, and per-iteration rows: stalls per rank
     * plus a fixed record. */
    return (cells * 3 * 8 + e * (double)c->batches * 96) / 1e6;
}

static int sweep_add_axis(stall_sweep *s, const char *key, const char *value, bool cmdline,
                          long long maxp, stall_err *err)
{
    char where[160];
    snprintf(where, sizeof where, "%s: [sweep] %s", s->src, key);
    const char *dot = strchr(key, '.');
    if (!dot || dot == key || dot[1] == '\0' || strchr(dot + 1, '.'))
        return stall_err_set(err, STALL_ECONFIG, "%s: expected section.key (e.g. loader.workers)",
                             where);
    if (strcmp(key, "scenario.mode") == 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: a sweep runs one mode (its summaries have different columns)",
                             where);
    /* The key must exist: a scratch configuration takes the first value
     * below; unknown keys fail here with the loader's message. */
    sweep_axis *a = sweep_find(s, key);
    if (!a) {
        if (s->naxes >= (int)(sizeof s->ax / sizeof s->ax[0]))
            return stall_err_set(err, STALL_ECONFIG, "%s: too many swept keys", where);
        a = &s->ax[s->naxes++];
        snprintf(a->key, sizeof a->key, "%s", key);
    }
    sweep_axis_clear(a);
    a->command_line = cmdline;
    int rc = sweep_parse_list(where, value, maxp, a, err);
    if (rc)
        return rc;
    char section[64];
    snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
    stall_config *scratch = stall_xmalloc(sizeof *scratch);
    *scratch = s->base;
    stall_err e = {0};
    for (int i = 0; i < a->n && rc == 0; i++)
        rc = stall_config_apply(scratch, section, dot + 1, a->vals[i], where, &e);
    free(scratch);
    if (rc && err)
        *err = e;
    return rc;
}

void stall_sweep_destroy(stall_sweep *s)
{
    if (!s)
        return;
    for (int a = 0; a < s->naxes; a++)
        sweep_axis_clear(&s->ax[a]);
    free(s);
}

static void sweep_align_axis(stall_sweep *s, const char *key, const stall_align_list *l)
{
    sweep_axis *a = &s->ax[s->naxes++];
    snprintf(a->key, sizeof a->key, "%s", key);
    for (int i = 0; i < l->n; i++)
        sweep_axis_push(a, stall_align_name(l->v[i]));
}

int stall_sweep_create(const stall_config *cfg, const stall_sweep_opts *opts, stall_sweep **out,
                       stall_err *err)
{
    long long maxp = opts->max_points > 0 ? opts->max_points : STALL_SWEEP_MAX_POINTS;
    double maxmb = opts->max_point_mb > 0 ? opts->max_point_mb : STALL_SWEEP_MAX_POINT_MB;
    stall_sweep *s = stall_xcalloc(1, sizeof *s);
    s->base = *cfg;
    s->base.nextra = 0;
    s->src = s->base.ini_path[0] ? s->base.ini_path : "config";
    int rc = 0;
    /* The align lists the mode runs one by one are axes, first. */
    bool replay = cfg->mode != STALL_MODE_MODEL;
    if (cfg->fetch_align.n > 1 && (replay || stall_config_given(cfg, "align", "fetch")))
        sweep_align_axis(s, "align.fetch", &cfg->fetch_align);
    if (cfg->start_align.n > 1 && (replay || stall_config_given(cfg, "align", "start")))
        sweep_align_axis(s, "align.start", &cfg->start_align);
    /* [sweep] lines, then --sweep (a later line for a key replaces it). */
    for (int pass = 0; pass < 2 && rc == 0; pass++)
        for (int i = 0; i < cfg->nextra && rc == 0; i++) {
            const struct stall_config_extra *x = &cfg->extra[i];
            if (strcmp(x->section, "sweep") != 0 || strcmp(x->key, "zip") == 0 ||
                x->command_line != (pass == 1))
                continue;
            rc = sweep_add_axis(s, x->key, x->value, x->command_line, maxp, err);
        }
    for (int i = 0; i < cfg->nextra && rc == 0; i++) {
        const struct stall_config_extra *x = &cfg->extra[i];
        if (strcmp(x->section, "sweep") == 0)
            continue;
        if (x->command_line)
            rc = stall_err_set(err, STALL_ECONFIG,
                               "--set %s.%s: only `stallsim %s` reads [%s] (sweep would ignore "
                               "it)",
                               x->section, x->key, x->section, x->section);
        else
            rc = stall_err_set(err, STALL_ECONFIG,
                               "%s: [%s] %s: only `stallsim %s` reads this section", s->src,
                               x->section, x->key, x->section);
    }
    /* Groups: every axis its own, then zip lines merge theirs. */
    for (int a = 0; a < s->naxes; a++)
        s->ax[a].group = a;
    for (int i = 0; i < cfg->nextra && rc == 0; i++) {
        const struct stall_config_extra *x = &cfg->extra[i];
        if (strcmp(x->section, "sweep") != 0 || strcmp(x->key, "zip") != 0)
            continue;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", x->value);
        char *save = NULL;
        int first = -1, n = 0;
        for (char *p = buf;; p = NULL) {
            char *tok = strtok_r(p, ",", &save);
            if (!tok)
                break;
            tok = sweep_trim(tok);
            sweep_axis *a = sweep_find(s, tok);
            if (!a) {
                rc = stall_err_set(err, STALL_ECONFIG, "%s: [sweep] zip: '%s' is not a swept key",
                                   s->src, tok);
                break;
            }
            if (first < 0) {
                first = (int)(a - s->ax);
                n = a->n;
            } else if (a->n != n) {
                rc = stall_err_set(err, STALL_ECONFIG,
                                   "%s: [sweep] zip: %s has %d values but %s has %d (zipped keys "
                                   "step together)",
                                   s->src, tok, a->n, s->ax[first].key, n);
                break;
            } else if (a->group != (int)(a - s->ax)) {
                rc = stall_err_set(err, STALL_ECONFIG, "%s: [sweep] zip: %s is zipped twice",
                                   s->src, tok);
                break;
            } else {
                a->group = s->ax[first].group;
            }
        }
        if (rc == 0 && first < 0)
            rc = stall_err_set(err, STALL_ECONFIG, "%s: [sweep] zip: empty list", s->src);
    }
    /* Renumber groups in axis order and size them. */
    int map[STALL_EXTRA_MAX + 2];
    for (int a = 0; a < s->naxes; a++)
        map[a] = -1;
    for (int a = 0; a < s->naxes && rc == 0; a++) {
        int g = s->ax[a].group;
        if (map[g] < 0) {
            map[g] = s->ngroups;
            s->group_n[s->ngroups++] = s->ax[a].n;
        }
        s->ax[a].group = map[g];
    }
    s->points = 1;
    for (int g = s->ngroups - 1; g >= 0 && rc == 0; g--) {
        s->group_stride[g] = s->points;
        if ((double)s->points * s->group_n[g] > (double)maxp)
            rc = stall_err_set(err, STALL_ECONFIG,
                               "%s: [sweep]: more than %lld points (the limit; --max-points "
                               "raises it)",
                               s->src, maxp);
        s->points *= (size_t)s->group_n[g];
    }
    /* Every point, before anything runs. */
    stall_config *pc = stall_xmalloc(sizeof *pc);
    for (size_t i = 0; i < s->points && rc == 0; i++) {
        rc = sweep_build(s, i, pc, err);
        double mb = rc == 0 ? sweep_point_mb(pc) : 0;
        if (rc == 0 && mb > maxmb) {
            char desc[STALL_ERR_MSG / 2];
            sweep_describe(s, i, desc, sizeof desc);
            rc = stall_err_set(err, STALL_ECONFIG,
                               "%s: [sweep] point %zu (%s): needs about %.0f MB, above the limit "
                               "of %.0f MB per point (--max-point-mb)",
                               s->src, i, desc, mb, maxmb);
        }
    }
    free(pc);
    if (rc) {
        stall_sweep_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

/* ---- files ---- */

static bool sweep_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Removes the sub-folders of dir (per-iteration files). */
static void sweep_drop_subdirs(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *child = stall_path_join(dir, e->d_name);
        struct stat st;
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
            stall_remove_tree(child);
        free(child);
    }
    closedir(d);
}

static bool sweep_same_file(const char *a, const char *b)
{
    char *x = stall_read_file(a, NULL), *y = stall_read_file(b, NULL);
    bool same = x && y && strcmp(x, y) == 0;
    free(x);
    free(y);
    return same;
}

static const char *sweep_summary_name(const stall_config *c)
{
    return c->mode == STALL_MODE_SEED ? "replay_summary.csv" : "summary.csv";
}

/* ---- running ---- */

static volatile sig_atomic_t sweep_stop;

static void sweep_on_signal(int sig)
{
    (void)sig;
    sweep_stop = 1;
}

/* Group commit: at most this long between a point's end and its rename,
 * and at most this many folders per sync. */
#define STALL__SWEEP_COMMIT_S 0.25
#define STALL__SWEEP_COMMIT_MAX 256

typedef struct sweep_run {
    const stall_sweep *s;
    const stall_sweep_opts *opts;
    const char *outdir;
    int width;
    size_t first, step; /* this rank's points: first, first + step, ... */
    size_t next;        /* next of this rank's points to hand out */
    size_t mine, done, ran, skipped;
    size_t fail_point; /* lowest failing point, or SIZE_MAX */
    stall_err fail;
    pthread_mutex_t lock;
    struct timespec t0;
    double last_print;
    int ranks;
    size_t *pending; /* finished .point-N.tmp folders, not yet synced and renamed */
    size_t npending, cap_pending;
    bool committing;           /* a thread is syncing and renaming a batch */
    double last_commit;        /* seconds since t0 */
    stall_job_digests digests; /* every point's inputs, hashed once */
} sweep_run;

static double sweep_now(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* outdir/<pre>NNNNNN<suf> */
static char *sweep_point_dir(const sweep_run *r, size_t i, const char *pre, const char *suf)
{
    char name[64];
    snprintf(name, sizeof name, "%s%0*zu%s", pre, r->width, i, suf);
    return stall_path_join(r->outdir, name);
}

/* Runs point i unless its folder already holds the same configuration.
 * *skipped tells which. */
static int sweep_point(sweep_run *r, size_t i, bool *skipped, stall_err *err)
{
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    stall_sweep_config(r->s, i, cfg);
    char *final = sweep_point_dir(r, i, "point-", "");
    char *tmp = sweep_point_dir(r, i, ".point-", ".tmp");
    char *old = sweep_point_dir(r, i, ".point-", ".old");
    stall_remove_tree(tmp);
    stall_remove_tree(old);
    *skipped = false;
    int rc = 0;
    char *fin_ini = stall_path_join(final, "effective.ini");
    char *fin_sum = stall_path_join(final, sweep_summary_name(cfg));
    if (sweep_exists(fin_ini) && sweep_exists(fin_sum)) {
        /* tmp and final are siblings: paths in effective.ini read alike. */
        rc = stall_mkdirs(tmp, err);
        if (rc == 0)
            rc = stall_job_manifest_with(cfg, tmp, &r->digests, NULL, NULL, err);
        if (rc == 0) {
            char *tmp_ini = stall_path_join(tmp, "effective.ini");
            *skipped = sweep_same_file(tmp_ini, fin_ini);
            free(tmp_ini);
        }
        stall_remove_tree(tmp);
    }
    if (rc == 0 && !*skipped) {
        /* tmp waits for sweep_commit, which syncs and renames it. */
        stall_run_opts o = {.outdir = tmp,
                            .jobs = 1,
                            .term = NULL,
                            .no_iterations = !r->opts->keep_iterations,
                            .digests = &r->digests};
        rc = stall_scenario_run(cfg, &o, err);
        if (rc == 0 && !r->opts->keep_iterations)
            sweep_drop_subdirs(tmp);
        if (rc != 0)
            stall_remove_tree(tmp);
    }
    free(fin_ini);
    free(fin_sum);
    free(final);
    free(tmp);
    free(old);
    free(cfg);
    return rc;
}

/* Moves finished point i's folder into place (after the sync). */
static int sweep_rename(const sweep_run *r, size_t i, stall_err *err)
{
    char *final = sweep_point_dir(r, i, "point-", "");
    char *tmp = sweep_point_dir(r, i, ".point-", ".tmp");
    char *old = sweep_point_dir(r, i, ".point-", ".old");
    int rc = 0;
    if (sweep_exists(final) && rename(final, old) != 0)
        rc = stall_err_set(err, STALL_EIO, "%s: cannot move aside: %s", final, strerror(errno));
    if (rc == 0 && rename(tmp, final) != 0)
        rc = stall_err_set(err, STALL_EIO, "%s: cannot rename to %s: %s", tmp, final,
                           strerror(errno));
    if (rc != 0)
        stall_remove_tree(tmp);
    stall_remove_tree(old);
    free(final);
    free(tmp);
    free(old);
    return rc;
}

/* Called with r->lock held. Commits the pending folders when the batch is
 * due (or `all`): one sync of the file system, then a rename per folder,
 * outside the lock so that the other threads go on simulating. One thread
 * commits at a time; folders finished meanwhile wait for the next batch. */
static void sweep_commit(sweep_run *r, bool all)
{
    while (r->npending > 0 && !r->committing) {
        double t = sweep_now(&r->t0);
        if (!all && t - r->last_commit < STALL__SWEEP_COMMIT_S &&
            r->npending < STALL__SWEEP_COMMIT_MAX)
            return;
        size_t n = r->npending, *batch = stall_xmalloc(n * sizeof *batch);
        memcpy(batch, r->pending, n * sizeof *batch);
        r->npending = 0;
        r->committing = true;
        pthread_mutex_unlock(&r->lock);
        stall_err e = {0};
        int rc = stall_sync_fs(r->outdir, &e);
        size_t failed = SIZE_MAX;
        for (size_t k = 0; k < n; k++) {
            if (rc != 0) {
                char *tmp = sweep_point_dir(r, batch[k], ".point-", ".tmp");
                stall_remove_tree(tmp);
                free(tmp);
            } else if (sweep_rename(r, batch[k], &e) != 0) {
                rc = e.code;
            }
            if (rc != 0 && failed == SIZE_MAX)
                failed = batch[k];
        }
        pthread_mutex_lock(&r->lock);
        r->committing = false;
        r->last_commit = sweep_now(&r->t0);
        if (rc != 0 && failed < r->fail_point) {
            r->fail_point = failed;
            r->fail = e;
        }
        free(batch);
        if (!all)
            return;
    }
}

static void sweep_progress(sweep_run *r, bool last)
{
    FILE *f = r->opts->progress;
    if (!f)
        return;
    double t = sweep_now(&r->t0);
    if (!last && t - r->last_print < 0.2)
        return;
    r->last_print = t;
    double rate = t > 0 ? (double)r->done / t : 0;
    double left = rate > 0 ? (double)(r->mine - r->done) / rate : 0;
    fprintf(f, "\rsweep: %zu/%zu points%s, %.1f points/s, %.0f s left   ", r->done, r->mine,
            r->ranks > 1 ? " (rank 0)" : "", rate, left);
    if (last)
        fputc('\n', f);
    fflush(f);
}

static void *sweep_worker(void *arg)
{
    sweep_run *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        size_t k = r->next;
        bool go = k < r->mine && !sweep_stop && r->fail_point == SIZE_MAX;
        if (go)
            r->next++;
        pthread_mutex_unlock(&r->lock);
        if (!go)
            break;
        size_t i = r->first + k * r->step;
        stall_err e = {0};
        bool skipped = false;
        int rc = sweep_point(r, i, &skipped, &e);
        pthread_mutex_lock(&r->lock);
        if (rc != 0 && i < r->fail_point) {
            r->fail_point = i;
            r->fail = e;
        } else if (rc == 0) {
            r->done++;
            if (skipped) {
                r->skipped++;
            } else {
                r->ran++;
                if (r->npending == r->cap_pending) {
                    r->cap_pending = r->cap_pending ? 2 * r->cap_pending : 64;
                    r->pending = stall_xrealloc(r->pending, r->cap_pending * sizeof *r->pending);
                }
                r->pending[r->npending++] = i;
            }
            sweep_progress(r, false);
        }
        sweep_commit(r, false);
        pthread_mutex_unlock(&r->lock);
    }
    return NULL;
}

typedef struct sweep_table {
    const sweep_run *r;
} sweep_table;

/* sweep.csv from the point folders, in point order. */
static int sweep_fill_csv(FILE *f, void *arg, stall_err *err)
{
    const sweep_run *r = ((const sweep_table *)arg)->r;
    const stall_sweep *s = r->s;
    const char *sumname = sweep_summary_name(&s->base);
    char *header = NULL;
    for (size_t i = 0; i < s->points; i++) {
        char *dir = sweep_point_dir(r, i, "point-", "");
        char *path = stall_path_join(dir, sumname);
        char *text = stall_read_file(path, NULL);
        free(dir);
        if (!text) {
            int rc = stall_err_set(err, STALL_EIO, "%s: cannot read", path);
            free(path);
            free(header);
            return rc;
        }
        char *nl = strchr(text, '\n');
        char *row = nl ? nl + 1 : NULL;
        char *end = row ? strchr(row, '\n') : NULL;
        if (!nl || !end || end[1] != '\0') {
            int rc = stall_err_set(err, STALL_EIO, "%s: expected a header and one row", path);
            free(text);
            free(path);
            free(header);
            return rc;
        }
        *nl = '\0';
        if (!header) {
            header = stall_xstrdup(text);
            fputs("point", f);
            for (int a = 0; a < s->naxes; a++)
                fprintf(f, ",%s", s->ax[a].key);
            fprintf(f, ",%s\n", header);
        } else if (strcmp(header, text) != 0) {
            int rc = stall_err_set(err, STALL_EIO, "%s: columns differ from point 0's", path);
            free(text);
            free(path);
            free(header);
            return rc;
        }
        fprintf(f, "%zu", i);
        for (int a = 0; a < s->naxes; a++)
            fprintf(f, ",%s", stall_sweep_value(s, i, a));
        fprintf(f, ",%s", row);
        free(text);
        free(path);
    }
    free(header);
    return 0;
}

#ifdef STALL_HAVE_MPI
/* Under mpirun or srun (not a plain start, which would make MPI start a
 * singleton runtime for nothing). */
static bool sweep_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}
#endif

int stall_sweep_launch_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

int stall_sweep_run(const stall_config *cfg, const stall_sweep_opts *opts, stall_sweep_result *res,
                    stall_err *err)
{
    memset(res, 0, sizeof *res);
    stall_sweep *s = NULL;
    int rc = stall_sweep_create(cfg, opts, &s, err);
    if (rc)
        return rc;
    /* Every point's input files are read and hashed once, before anything
     * runs or is written: a missing trace fails here, naming its key. */
    stall_job_digests digests = {0};
    stall_config *pc = stall_xmalloc(sizeof *pc);
    for (size_t i = 0; i < s->points && rc == 0; i++) {
        stall_sweep_config(s, i, pc);
        rc = stall_job_digests_add(&digests, pc, err);
    }
    free(pc);
    if (rc) {
        stall_job_digests_free(&digests);
        stall_sweep_destroy(s);
        return rc;
    }
    stall_run_opts ro = {.outdir = opts->outdir};
    char *outdir = stall_job_outdir(cfg, &ro);
    snprintf(res->outdir, sizeof res->outdir, "%s", outdir);
    res->points = s->points;
    int rank = 0, ranks = 1;
#ifdef STALL_HAVE_MPI
    bool mpi = sweep_mpi_launched();
    if (mpi) {
        int provided;
        MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    }
#endif
    sweep_run r = {.s = s,
                   .opts = opts,
                   .outdir = outdir,
                   .width = 6,
                   .first = (size_t)rank,
                   .step = (size_t)ranks,
                   .fail_point = SIZE_MAX,
                   .ranks = ranks,
                   .digests = digests};
    for (size_t p = s->points; p >= 1000000; p /= 10)
        r.width++;
    r.mine = s->points > (size_t)rank
                 ? (s->points - (size_t)rank + (size_t)ranks - 1) / (size_t)ranks
                 : 0;
    stall_sweep_opts local = *opts;
    if (rank != 0)
        local.progress = local.term = NULL;
    r.opts = &local;
    pthread_mutex_init(&r.lock, NULL);
    clock_gettime(CLOCK_MONOTONIC, &r.t0);
    rc = stall_mkdirs(outdir, err);
    /* Point folders are synced in batches (sweep_commit). */
    char *deferred = stall_path_join(outdir, ".point-");
    stall_io_defer_sync(deferred);
    if (rc == 0) {
        struct sigaction sa = {0}, old_int, old_term;
        sa.sa_handler = sweep_on_signal;
        sigemptyset(&sa.sa_mask);
        sweep_stop = 0;
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        int nt = opts->jobs > 1 ? opts->jobs : 1;
        if ((size_t)nt > r.mine)
            nt = r.mine > 0 ? (int)r.mine : 1;
        pthread_t *th = stall_xcalloc((size_t)nt, sizeof *th);
        int started = 0;
        for (int t = 1; t < nt; t++)
            if (pthread_create(&th[t], NULL, sweep_worker, &r) == 0)
                started = t;
            else
                break;
        sweep_worker(&r);
        for (int t = 1; t <= started; t++)
            pthread_join(th[t], NULL);
        free(th);
        /* What finished is kept, also when interrupted or failed. */
        pthread_mutex_lock(&r.lock);
        sweep_commit(&r, true);
        pthread_mutex_unlock(&r.lock);
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        if (r.done > 0 || r.mine == 0)
            sweep_progress(&r, true);
        res->interrupted = sweep_stop != 0;
        if (r.fail_point != SIZE_MAX) {
            *err = r.fail;
            rc = r.fail.code ? r.fail.code : STALL_EINTERNAL;
        }
    }
    stall_io_defer_end(deferred);
    free(deferred);
    free(r.pending);
    stall_job_digests_free(&r.digests);
    res->ran = r.ran;
    res->skipped = r.skipped;
#ifdef STALL_HAVE_MPI
    if (mpi) {
        /* Every rank learns the worst outcome; the lowest failing point's
         * message is the one reported. */
        int mine[2] = {rc != 0 ? 1 : 0, res->interrupted ? 1 : 0}, all[2];
        MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        unsigned long long fp = r.fail_point, minfp;
        MPI_Allreduce(&fp, &minfp, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        if (all[0] && minfp != (unsigned long long)SIZE_MAX) {
            /* The rank that ran the lowest failing point tells every rank
             * its message, so that rank 0 alone can report it. */
            int owner = (int)(minfp % (unsigned long long)ranks);
            stall_err e = rank == owner ? *err : (stall_err){0};
            MPI_Bcast(&e.code, 1, MPI_INT, owner, MPI_COMM_WORLD);
            MPI_Bcast(e.msg, (int)sizeof e.msg, MPI_CHAR, owner, MPI_COMM_WORLD);
            *err = e;
            rc = e.code ? e.code : STALL_EINTERNAL;
        } else if (all[0] && rc == 0) {
            rc = STALL_EINTERNAL;
            stall_err_set(err, rc, "[sweep] a point failed on another rank");
        }
        res->interrupted = all[1] != 0;
        unsigned long long counts[2] = {r.ran, r.skipped}, sums[2];
        MPI_Allreduce(counts, sums, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        res->ran = sums[0];
        res->skipped = sums[1];
    }
#endif
    if (rc == 0 && !res->interrupted && rank == 0) {
        sweep_table t = {&r};
        rc = stall_write_atomic_in(outdir, "sweep.csv", sweep_fill_csv, &t, err);
    }
#ifdef STALL_HAVE_MPI
    if (mpi) {
        /* Rank 0's outcome for all (a failed sweep.csv). */
        int code = rc;
        MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank != 0 && code != 0 && rc == 0)
            rc = stall_err_set(err, code, "rank 0 could not write sweep.csv");
        MPI_Finalize();
    }
#endif
    if (rc == 0 && local.term && !res->interrupted)
        fprintf(local.term,
                "stallsim sweep: %zu points (%zu run, %zu found done) on %d thread%s x %d "
                "rank%s; %s/sweep.csv\n",
                res->points, res->ran, res->skipped, opts->jobs, opts->jobs == 1 ? "" : "s", ranks,
                ranks == 1 ? "" : "s", outdir);
    pthread_mutex_destroy(&r.lock);
    free(outdir);
    stall_sweep_destroy(s);
    return rc;
}

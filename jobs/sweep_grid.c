/*
 * sweep_grid.c - a sweep's grid (contract in stall/sweep.h): parsing turns
 * every [sweep] line into an axis of values (text, applied by
 * stall_config_apply as the file would) and groups zipped axes; the point
 * index is a mixed-radix number over the groups. Every point is built and
 * checked before the first one runs, O(points x keys).
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
#include "sweep_int.h"

/* ---- lists ---- */

/* The most decimals an arithmetic range prints its values with ("%.*f" in
 * a 64-byte value); a finer step is printed with 15 significant digits. */
#define SWEEP_MAX_DECIMALS 30

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

/* The decimal places a number as written needs: the digits after its point,
 * less its exponent (0.005, 5e-3 and 0.5e-2 all need 3; 2.5e1 none). The
 * exponent counted too: an arithmetic range with the step 1e-3 printed its
 * values with no decimals, every point the same. */
static int sweep_decimals(const char *t)
{
    const char *dot = strchr(t, '.'), *exp = strpbrk(t, "eE");
    long d = dot ? (long)strspn(dot + 1, "0123456789") : 0;
    if (exp)
        d -= strtol(exp + 1, NULL, 10);
    return d < 0 ? 0 : d > SWEEP_MAX_DECIMALS ? SWEEP_MAX_DECIMALS + 1 : (int)d;
}

/* A number as written; *is_int when it is an integer literal. Decimals: as
 * sweep_decimals (for arithmetic steps). */
static int sweep_number(const char *t, double *x, bool *is_int, int *decimals)
{
    /* Decimal as the loader reads a number key (no hexadecimal, inf, nan). */
    char why[160];
    if (t[0] == '\0' || stall_config_number(t, x, why, sizeof why) != 0)
        return -1;
    *is_int = strspn(t + (t[0] == '-' || t[0] == '+'), "0123456789") ==
              strlen(t + (t[0] == '-' || t[0] == '+'));
    *decimals = sweep_decimals(t);
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
        return stall_err_set(
            err, STALL_ECONFIG,
            "%s: bad range '%s' (expected A..B, A..B xF or A..B +S with decimal numbers)", where,
            text);
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
                             "%s: range '%s' has %.15g values, more than the limit of %lld points "
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
        } else if (dec > SWEEP_MAX_DECIMALS) {
            snprintf(v, sizeof v, "%.15g", A + (double)k * S);
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
        if (rc == 0)
            stall_config_swept(cfg, section, key,
                               x->command_line ? 0 : (x->line > 0 ? x->line : -1));
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
    if (rc != 0)
        return stall__sweep_point_err(s, i, &e, err);
    return 0;
}

int stall__sweep_point_err(const stall_sweep *s, size_t i, const stall_err *inner, stall_err *err)
{
    /* Drop the "file: " or ": " the inner message starts with; a
     * "file:line: " names a line and stays whole. */
    const char *m = inner->msg;
    size_t sl = strlen(s->src);
    if (strncmp(m, s->src, sl) == 0 && m[sl] == ':' && m[sl + 1] == ' ')
        m += sl + 1;
    else if (m[0] == ':')
        m += 1;
    while (*m == ' ')
        m++;
    char desc[STALL_ERR_MSG / 2];
    sweep_describe(s, i, desc, sizeof desc);
    /* The inner code stays: bad data in a point's trace is still bad data. */
    int code = inner->code != 0 ? inner->code : STALL_ECONFIG;
    /* A sweep without axes (its one point) has no values to name. */
    if (!desc[0])
        return stall_err_set(err, code, "%s: [sweep] point %zu: %s", s->src, i, m);
    return stall_err_set(err, code, "%s: [sweep] point %zu (%s): %s", s->src, i, desc, m);
}

void stall__sweep_axis_where(const stall_sweep *s, int a, char *buf, size_t n)
{
    const sweep_axis *x = &s->ax[a];
    if (x->from_base) {
        /* an [align] list of the scenario: where the scenario gave it */
        char sec[64];
        const char *dot = strchr(x->key, '.');
        snprintf(sec, sizeof sec, "%.*s", (int)(dot - x->key), x->key);
        stall_config_origin(&s->base, sec, dot + 1, buf, n);
    } else if (x->command_line)
        snprintf(buf, n, "--sweep %s", x->key);
    else if (x->line > 0)
        snprintf(buf, n, "%s:%d: [sweep] %s", s->src, x->line, x->key);
    else
        snprintf(buf, n, "%s: [sweep] %s", s->src, x->key);
}

int stall__sweep_axis_of(const stall_sweep *s, const char *key)
{
    for (int a = 0; a < s->naxes; a++)
        if (strcmp(s->ax[a].key, key) == 0)
            return a;
    return -1;
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
                          int line, long long maxp, stall_err *err)
{
    /* Where the axis was given: --sweep, or the INI's line. */
    char where[STALL_PATH_MAX + 128];
    if (cmdline)
        snprintf(where, sizeof where, "--sweep %s", key);
    else if (line > 0)
        snprintf(where, sizeof where, "%s:%d: [sweep] %s", s->src, line, key);
    else
        snprintf(where, sizeof where, "%s: [sweep] %s", s->src, key);
    const char *dot = strchr(key, '.');
    if (!dot || dot == key || dot[1] == '\0' || strchr(dot + 1, '.'))
        return stall_err_set(err, STALL_ECONFIG, "%s: expected section.key (e.g. loader.workers)",
                             where);
    if (strcmp(key, "scenario.mode") == 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: a sweep runs one mode (its summaries have different columns)",
                             where);
    if (strcmp(key, "scenario.name") == 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect: no point's results depend on the scenario's "
                             "name (the sweep's folder is named once; -o names another)",
                             where);
    if (strncmp(key, "plan.", 5) == 0 || strncmp(key, "sweep.", 6) == 0) {
        /* Not keys of a scenario: [plan] holds the questions of `stallsim
         * plan`, which a sweep's points do not ask. */
        char hint[160];
        stall_config_extra_suggest(key[0] == 'p' ? "plan" : "sweep", dot + 1, hint, sizeof hint);
        if (key[0] == 's')
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [sweep] is not a section of a scenario: a swept key is "
                                 "section.key of a scenario key (stallsim --help lists them)",
                                 where);
        if (hint[0])
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: unknown key [plan] %s%s; and [plan] keys cannot be swept",
                                 where, dot + 1, hint);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [plan] %s is a question of `stallsim plan`, which a sweep's "
                             "points do not ask: a sweep varies scenario keys (stallsim --help "
                             "lists them); run plan once per value (--set plan.%s=...)",
                             where, dot + 1, dot + 1);
    }
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
    a->from_base = false;
    a->line = cmdline ? 0 : line;
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
    a->from_base = true;
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
    s->src = s->base.ini_path[0] ? s->base.ini_path : "command line";
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
            rc = sweep_add_axis(s, x->key, x->value, x->command_line, x->line, maxp, err);
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
    /* A key both swept and set: the point's value would silently replace
     * the set one. --sweep replaces the file's value, as --set does; a
     * [sweep] line beside the key in the same file, or --set beside any
     * axis, is refused, naming both. */
    for (int a = 0; a < s->naxes && rc == 0; a++) {
        const sweep_axis *x = &s->ax[a];
        char section[64];
        snprintf(section, sizeof section, "%s", x->key);
        char *dot = strchr(section, '.');
        if (x->from_base || !dot)
            continue;
        *dot = '\0';
        int how = stall_config_given_how(cfg, section, dot + 1);
        if (how == 0 || (x->command_line && how == 1))
            continue;
        char axis[STALL_PATH_MAX + 128], set[STALL_PATH_MAX + 128];
        stall__sweep_axis_where(s, a, axis, sizeof axis);
        stall_config_origin(cfg, section, dot + 1, set, sizeof set);
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: also set by %s: the sweep's values would replace it at every "
                           "point; give the key once",
                           axis, set);
    }
    /* Groups: every axis its own, then zip lines merge theirs. */
    bool zipped[STALL_EXTRA_MAX + 2] = {false};
    for (int a = 0; a < s->naxes; a++)
        s->ax[a].group = a;
    for (int i = 0; i < cfg->nextra && rc == 0; i++) {
        const struct stall_config_extra *x = &cfg->extra[i];
        if (strcmp(x->section, "sweep") != 0 || strcmp(x->key, "zip") != 0)
            continue;
        /* Where the zip line was given, as for an axis (sweep_add_axis). */
        char where[STALL_PATH_MAX + 64];
        if (x->command_line)
            snprintf(where, sizeof where, "--sweep zip");
        else if (x->line > 0)
            snprintf(where, sizeof where, "%s:%d: [sweep] zip", s->src, x->line);
        else
            snprintf(where, sizeof where, "%s: [sweep] zip", s->src);
        char buf[256];
        snprintf(buf, sizeof buf, "%s", x->value);
        char *save = NULL;
        int first = -1, n = 0, nkeys = 0;
        for (char *p = buf;; p = NULL) {
            char *tok = strtok_r(p, ",", &save);
            if (!tok)
                break;
            tok = sweep_trim(tok);
            sweep_axis *a = sweep_find(s, tok);
            if (!a) {
                rc = stall_err_set(err, STALL_ECONFIG, "%s: '%s' is not a swept key", where, tok);
                break;
            }
            /* A key zipped twice, in one line or two, would step with
             * itself or join two groups silently. */
            if (zipped[a - s->ax]) {
                rc = stall_err_set(err, STALL_ECONFIG, "%s: %s is zipped twice", where, tok);
                break;
            }
            zipped[a - s->ax] = true;
            nkeys++;
            if (first < 0) {
                first = (int)(a - s->ax);
                n = a->n;
            } else if (a->n != n) {
                rc = stall_err_set(err, STALL_ECONFIG,
                                   "%s: %s has %d values but %s has %d (zipped keys "
                                   "step together)",
                                   where, tok, a->n, s->ax[first].key, n);
                break;
            } else {
                a->group = s->ax[first].group;
            }
        }
        if (rc == 0 && first < 0)
            rc = stall_err_set(err, STALL_ECONFIG, "%s: empty list", where);
        else if (rc == 0 && nkeys < 2)
            rc = stall_err_set(err, STALL_ECONFIG,
                               "%s: %s alone (a zip steps two or more swept keys together)", where,
                               s->ax[first].key);
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
    /* [report] per_rank shapes ranks.csv, which a point writes only with
     * --keep iterations: without it the key has no effect. */
    if (rc == 0 && !opts->keep_iterations) {
        int a = stall__sweep_axis_of(s, "report.per_rank");
        char where[STALL_PATH_MAX + 128] = "";
        if (a >= 0 && !s->ax[a].from_base)
            stall__sweep_axis_where(s, a, where, sizeof where);
        else if (stall_config_given(cfg, "report", "per_rank"))
            stall_config_origin(cfg, "report", "per_rank", where, sizeof where);
        if (where[0])
            rc = stall_err_set(err, STALL_ECONFIG,
                               "%s: has no effect: a sweep's points write no iterations.csv or "
                               "ranks.csv without --keep iterations (give it, or leave the key "
                               "out)",
                               where);
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

/*
 * check.c - which keys apply in which mode and trace format, where a key's
 * value came from (for messages), and the cross-key checks of
 * stall_config_check.
 */
#include "stall/config.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stall/io.h"
#include "stall/limits.h"
#include "config_int.h"

/* ---- which keys apply in which mode ----
 *
 * A key given explicitly where it has no effect is an error naming the key,
 * where it was given (file:line or --set) and the mode, never ignored. */

enum { CFG_M_REPLAY = 1, CFG_M_SEED = 2, CFG_M_MODEL = 4, CFG_M_ALL = 7 };
/* Kineto and dftracer traces: analyze, timeline, validate and mode = model. */
enum { CFG_F_DSA = 1, CFG_F_TIDY = 2, CFG_F_NONE = 4, CFG_F_KINETO = 8, CFG_F_DFTRACER = 16 };
enum { CFG_F_TRACE = 1 | 2 | 8 | 16, CFG_F_ALL = 31 };

typedef struct cfg_rule {
    const char *section, *key; /* key NULL: every key of the section */
    int modes, formats;
    const char *why; /* what the key is for, in the message */
} cfg_rule;

/* The first matching rule wins; keys no rule names apply everywhere. */
static const cfg_rule cfg_rules[] = {
    {"trace", "fetch", CFG_M_ALL, CFG_F_DSA, "a dsanalyzer file"},
    {"trace", "start", CFG_M_ALL, CFG_F_DSA, "a dsanalyzer file"},
    {"trace", "perf", CFG_M_ALL, CFG_F_DSA, "a dsanalyzer file"},
    {"trace", "epoch", CFG_M_ALL, CFG_F_DSA, "the dsanalyzer epoch"},
    {"trace", "path", CFG_M_ALL, CFG_F_TIDY | CFG_F_KINETO | CFG_F_DFTRACER, "the trace"},
    {"trace", "workers", CFG_M_MODEL, CFG_F_TRACE, "the measured loader, for mode = model"},
    {"trace", "prefetch_factor", CFG_M_MODEL, CFG_F_TRACE, "the measured loader, for mode = model"},
    {"trace", "persistent_workers", CFG_M_MODEL, CFG_F_TRACE,
     "the measured loader, for mode = model"},
    {"trace", "cores", CFG_M_MODEL, CFG_F_TRACE, "the measured machine, for mode = model"},
    {"storage", "trace_mb_s", CFG_M_MODEL, CFG_F_TRACE, "the measured storage, for mode = model"},
    {"storage", "trace_latency_ms", CFG_M_MODEL, CFG_F_TRACE,
     "the measured storage, for mode = model"},
    {"storage", "trace_cache_mb", CFG_M_MODEL, CFG_F_TRACE, "the measured cache, for mode = model"},
    {"align", "start", CFG_M_REPLAY | CFG_M_SEED, CFG_F_ALL,
     "a counterfactual on measured starts, replay and seed only"},
    {"replay", NULL, CFG_M_REPLAY | CFG_M_SEED, CFG_F_ALL, "trace-timed replay"},
    {"report", "per_rank", CFG_M_REPLAY | CFG_M_MODEL, CFG_F_ALL,
     "for iterations.csv, which seed mode does not write"},
    {"fetch", "resample", CFG_M_MODEL, CFG_F_TRACE, "drawing beyond a trace"},
    {"fetch", "dist", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"fetch", "mean_s", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"fetch", "sigma", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"fetch", "sd_s", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"compute", "dist", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"compute", "mean_s", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"compute", "sigma", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"compute", "sd_s", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"loader", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"cluster", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"fetch", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"compute", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"storage", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"ddp", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"run", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"checkpoint", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"ranks", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"straggler", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
};

static const char *cfg_mode_name(int mode)
{
    return mode == STALL_MODE_SEED ? "seed" : mode == STALL_MODE_MODEL ? "model" : "replay";
}

static const char *cfg_format_name(int format)
{
    return format == STALL_FORMAT_TIDY       ? "tidy"
           : format == STALL_FORMAT_NONE     ? "none"
           : format == STALL_FORMAT_KINETO   ? "kineto"
           : format == STALL_FORMAT_DFTRACER ? "dftracer"
                                             : "dsanalyzer";
}

void stall_config_origin(const stall_config *cfg, const char *section, const char *key, char *buf,
                         size_t n)
{
    size_t idx;
    const char *ini = stall_config_src(cfg);
    const cfg_key *k = cfg_find(section, key, &idx);
    if (k && !cfg->given[idx])
        snprintf(buf, n, "%s: [%s] %s (default %s)", ini, section, key,
                 k->def[0] ? k->def : "\"\"");
    else if (!k || !cfg->given[idx])
        snprintf(buf, n, "%s: [%s] %s", ini, section, key);
    else if (cfg->given[idx] == 2)
        snprintf(buf, n, "--set %s.%s", section, key);
    else if (cfg->given[idx] == 3 && cfg->given_line[idx] == 0)
        snprintf(buf, n, "--sweep %s.%s", section, key);
    else if (cfg->given[idx] == 3 && cfg->given_line[idx] < 0)
        snprintf(buf, n, "%s: [sweep] %s.%s", ini, section, key);
    else if (cfg->given[idx] == 3)
        snprintf(buf, n, "%s:%d: [sweep] %s.%s", ini, cfg->given_line[idx], section, key);
    else if (cfg->given_line[idx] > 0)
        snprintf(buf, n, "%s:%d: [%s] %s", ini, cfg->given_line[idx], section, key);
    else if (!cfg->ini_path[0] && cfg->trace_arg[0])
        snprintf(buf, n, "%s", ini); /* set from the trace, not written by anyone */
    else
        snprintf(buf, n, "%s: [%s] %s", ini, section, key);
}

const char *stall_config_src(const stall_config *cfg)
{
    return cfg->ini_path[0] ? cfg->ini_path : cfg->trace_arg[0] ? cfg->trace_arg : "config";
}

bool stall_config_applies(const stall_config *cfg, const char *section, const char *key)
{
    int mbit = 1 << cfg->mode, fbit = 1 << cfg->format;
    for (size_t i = 0; i < sizeof cfg_rules / sizeof cfg_rules[0]; i++) {
        const cfg_rule *r = &cfg_rules[i];
        if (strcmp(r->section, section) != 0 || (r->key && strcmp(r->key, key) != 0))
            continue;
        return (r->modes & mbit) && (r->formats & fbit);
    }
    return true;
}

static bool cfg_model_only(const stall_config *cfg, const char *section, const char *key);

static int cfg_check_applies(const stall_config *cfg, stall_err *err)
{
    int mbit = 1 << cfg->mode, fbit = 1 << cfg->format;
    for (size_t k = 0; k < cfg_nkeys; k++) {
        if (!cfg->given[k])
            continue;
        const cfg_key *key = &cfg_keys[k];
        for (size_t i = 0; i < sizeof cfg_rules / sizeof cfg_rules[0]; i++) {
            const cfg_rule *r = &cfg_rules[i];
            if (strcmp(r->section, key->section) != 0 || (r->key && strcmp(r->key, key->key) != 0))
                continue;
            if ((r->modes & mbit) && (r->formats & fbit))
                break;
            /* [align] start = none says what model mode does anyway. */
            if (strcmp(key->section, "align") == 0 && cfg->start_align.n == 1 &&
                cfg->start_align.v[0] == STALL_ALIGN_NONE)
                break;
            char where[STALL_PATH_MAX + 64];
            stall_config_origin(cfg, key->section, key->key, where, sizeof where);
            /* When the mode or format that makes the key useless came
             * from --set, say so: the file alone was consistent. */
            bool by_mode = !(r->modes & mbit);
            char cause[STALL_PATH_MAX + 160] = "";
            if (stall_config_given(cfg, "scenario", by_mode ? "mode" : "format") ||
                stall_config_given(cfg, "trace", "format")) {
                char o[STALL_PATH_MAX + 64];
                stall_config_origin(cfg, by_mode ? "scenario" : "trace",
                                    by_mode ? "mode" : "format", o, sizeof o);
                if (strncmp(o, "--set", 5) == 0)
                    snprintf(cause, sizeof cause, "; %s comes from %s", by_mode ? "mode" : "format",
                             o);
            }
            /* The exact fix: a value that says "no effect", else the key
             * left out (the line removed, the --set dropped). */
            char fix[2 * STALL_PATH_MAX + 200];
            /* A what-if asked of a replay or seed scenario: the mode that
             * answers it comes first (with the file's start alignment, which
             * the model refuses, set to none), then leaving the key out. */
            char or_model[160] = "";
            /* A key of another format while [trace] format is left at its
             * default (dsanalyzer): say it is the default, and name the
             * format that reads the key first (a tidy path given without
             * format = tidy is the likely mistake). */
            bool fmt_default = !by_mode && !stall_config_given(cfg, "trace", "format");
            if (fmt_default && (r->formats & CFG_F_TIDY))
                snprintf(or_model, sizeof or_model,
                         "%s to read it (kineto, dftracer: as the trace is), or ",
                         cfg->given[k] == 2 ? "--set trace.format=tidy"
                                            : "format = tidy in [trace]");
            if (by_mode && cfg_model_only(cfg, key->section, key->key)) {
                bool starts =
                    stall_config_given(cfg, "align", "start") &&
                    !(cfg->start_align.n == 1 && cfg->start_align.v[0] == STALL_ALIGN_NONE);
                snprintf(or_model, sizeof or_model, "%s%s to ask it (the closed-loop what-if), or ",
                         cfg->given[k] == 2 ? "--set scenario.mode=model"
                                            : "mode = model in [scenario]",
                         starts ? (cfg->given[k] == 2 ? " --set align.start=none"
                                                      : " and [align] start = none")
                                : "");
            }
            if (strcmp(key->section, "align") == 0 && strcmp(key->key, "start") == 0)
                snprintf(fix, sizeof fix, "; fix: --set align.start=none");
            else if (cfg->given[k] == 2)
                snprintf(fix, sizeof fix, "; fix: %sleave out --set %s.%s", or_model, key->section,
                         key->key);
            else if (cfg->given_line[k] > 0)
                snprintf(fix, sizeof fix, "; fix: %sremove line %d of %s", or_model,
                         cfg->given_line[k], cfg->ini_path);
            else
                fix[0] = '\0';
            if (by_mode)
                return stall_err_set(err, STALL_ECONFIG,
                                     "%s: has no effect in mode = %s (it is %s%s)%s", where,
                                     cfg_mode_name(cfg->mode), r->why, cause, fix);
            return stall_err_set(
                err, STALL_ECONFIG, "%s: has no effect with [trace] format = %s%s (it is %s%s)%s",
                where, cfg_format_name(cfg->format),
                fmt_default ? ", the default (no [trace] format given)" : "", r->why, cause, fix);
        }
    }
    return 0;
}

static int cfg_need_trace(const stall_config *cfg, stall_err *err);

int stall_config_check_trace_keys(const stall_config *cfg, stall_err *err)
{
    stall_config *c = stall_xmalloc(sizeof *c);
    *c = *cfg;
    c->mode = STALL_MODE_MODEL; /* every [trace] key applies in it */
    for (size_t k = 0; k < cfg_nkeys; k++)
        if (strcmp(cfg_keys[k].section, "trace") != 0)
            c->given[k] = 0;
    int rc = cfg_check_applies(c, err);
    free(c);
    /* and the files its format needs, named before an open fails on "" */
    return rc ? rc : cfg_need_trace(cfg, err);
}

/* Where section.key came from, for messages (stall_config_origin). */
static const char *cfg_at(const stall_config *cfg, const char *section, const char *key, char *buf,
                          size_t n)
{
    stall_config_origin(cfg, section, key, buf, n);
    return buf;
}

enum { CFG_AT = STALL_PATH_MAX + 96 };

/* True when section.key applies in mode = model but not in cfg's mode. */
static bool cfg_model_only(const stall_config *cfg, const char *section, const char *key)
{
    stall_config *m = stall_xmalloc(sizeof *m);
    memcpy(m, cfg, offsetof(stall_config, given));
    m->mode = STALL_MODE_MODEL;
    bool yes = !stall_config_applies(cfg, section, key) && stall_config_applies(m, section, key);
    free(m);
    return yes;
}

bool stall_config_wants_model(const stall_config *cfg)
{
    if (cfg->mode == STALL_MODE_MODEL)
        return false;
    for (size_t k = 0; k < cfg_nkeys; k++)
        if (cfg->given[k] == 2 && cfg_model_only(cfg, cfg_keys[k].section, cfg_keys[k].key))
            return true;
    for (int i = 0; i < cfg->nextra; i++) {
        const struct stall_config_extra *x = &cfg->extra[i];
        const char *dot = strchr(x->key, '.');
        if (strcmp(x->section, "sweep") != 0 || !dot)
            continue;
        char sec[64];
        snprintf(sec, sizeof sec, "%.*s", (int)(dot - x->key), x->key);
        if (cfg_model_only(cfg, sec, dot + 1))
            return true;
    }
    return false;
}

int stall_config_as_model(stall_config *cfg, const char *command, char *note, size_t n,
                          stall_err *err)
{
    size_t idx;
    if (n)
        note[0] = '\0';
    if (!cfg_find("scenario", "mode", &idx))
        abort();
    bool by_set = cfg->given[idx] == 2;
    if (cfg->mode == STALL_MODE_MODEL && !by_set)
        return 0;
    if (cfg->format == STALL_FORMAT_NONE)
        return 0; /* stall_config_check says what is missing */
    int was = cfg->mode;
    char where[STALL_PATH_MAX + 32];
    snprintf(where, sizeof where, "%s", stall_config_src(cfg));
    if (cfg->mode != STALL_MODE_MODEL) {
        int rc = stall_config_apply(cfg, "scenario", "mode", "model", where, err);
        if (rc)
            return rc;
    }
    /* The file's keys of the replay (its alignment lists, [replay]) do not
     * apply to the model; they are left out and named. A --set key that
     * cannot apply is still refused (stall_config_check, with its fix). */
    char dropped[512] = "";
    size_t len = 0;
    stall_config def;
    stall_config_defaults(&def);
    for (size_t k = 0; k < cfg_nkeys; k++) {
        const cfg_key *key = &cfg_keys[k];
        if (cfg->given[k] != 1)
            continue;
        bool drop = !stall_config_applies(cfg, key->section, key->key);
        if (strcmp(key->section, "align") == 0) {
            const stall_align_list *l =
                strcmp(key->key, "fetch") == 0 ? &cfg->fetch_align : &cfg->start_align;
            drop = l->n > 1 || (strcmp(key->key, "start") == 0 && l->v[0] != STALL_ALIGN_NONE);
        }
        if (!drop)
            continue;
        if (len + 40 < sizeof dropped)
            len += (size_t)snprintf(dropped + len, sizeof dropped - len, "%s[%s] %s",
                                    len ? ", " : "", key->section, key->key);
        memcpy((char *)cfg + key->offset, (const char *)&def + key->offset, key->size);
        cfg->given[k] = 0;
        cfg->given_line[k] = 0;
    }
    /* One fetch policy: the model's default, none, unless one was given. */
    if (!stall_config_given(cfg, "align", "fetch"))
        cfg->fetch_align = (stall_align_list){1, {STALL_ALIGN_NONE}};
    if (!stall_config_given(cfg, "align", "start"))
        cfg->start_align = (stall_align_list){1, {STALL_ALIGN_NONE}};
    if (n && (was != STALL_MODE_MODEL || dropped[0]))
        snprintf(note, n,
                 "%s: %s simulates the %sscenario's trace as the input of mode = model (the "
                 "closed loop)%s%s%s",
                 where, command,
                 was == STALL_MODE_SEED     ? "seed "
                 : was == STALL_MODE_REPLAY ? "replay "
                                            : "",
                 dropped[0] ? "; left out, as the replay's: " : "", dropped, "");
    return 0;
}

/* The storage tier keys (stall_config_tiers): each must change something. */
/* Why [storage] batch_mb is needed, and how to give it: only a tidy
 * trace's bytes column records the MB a batch reads. */
static const char *cfg_no_batch_mb(const stall_config *cfg)
{
    return cfg->format == STALL_FORMAT_NONE
               ? "there is no trace, so nothing tells the MB a batch reads; fix: [storage] "
                 "batch_mb = MB (or --set storage.batch_mb=MB), the MB one batch reads"
               : "the trace records no bytes per batch (only a tidy trace's bytes column does), "
                 "so nothing tells the MB a batch reads; fix: --set storage.batch_mb=MB (or "
                 "[storage] batch_mb in an INI), the MB one batch reads";
}

static int cfg_check_tiers(const stall_config *cfg, stall_err *err)
{
    char a[CFG_AT], b[CFG_AT];
    /* admit_ms without any cache_mb given is refused; a cache_mb of 0
     * given (a sweep of cache_mb down to no cache, the baseline) keeps it,
     * writing nothing. */
    if (cfg->admit_ms > 0 && cfg->cache_mb <= 0 && !stall_config_given(cfg, "storage", "cache_mb"))
        return stall_err_set(err, STALL_ECONFIG, "%s: has no effect without %s > 0 (no cache)",
                             cfg_at(cfg, "storage", "admit_ms", a, sizeof a),
                             cfg_at(cfg, "storage", "cache_mb", b, sizeof b));
    if (!stall_config_tiers(cfg)) {
        /* The tier model's own keys would do nothing. */
        static const char *const own[] = {"queue", "latency", "admit_ms"};
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
            if (stall_config_given(cfg, "storage", own[i]))
                return stall_err_set(err, STALL_ECONFIG,
                                     "%s: has no effect without the storage tiers (a tier key: "
                                     "cache_mb, latency_ms, global_mb_s, dataset_mb...)",
                                     cfg_at(cfg, "storage", own[i], a, sizeof a));
        return 0;
    }
    if (cfg->batch_mb <= 0 && cfg->format != STALL_FORMAT_TIDY)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: must be > 0 for the storage tiers (a tier key is set): %s",
                             cfg_at(cfg, "storage", "batch_mb", a, sizeof a), cfg_no_batch_mb(cfg));
    /* the storage the trace's run read from (docs/model.md 2.3): its read
     * is found by simulating that run there, and the what-if's may cost
     * nothing (a store as fast as memory) */
    bool tstore = stall_config_given(cfg, "storage", "trace_mb_s") ||
                  stall_config_given(cfg, "storage", "trace_latency_ms");
    if (tstore && cfg->trace_mb_s <= 0 && cfg->trace_latency_ms <= 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect: a store of unlimited bandwidth and no latency "
                             "reads in no time, so nothing is taken out of the trace's fetches; "
                             "give trace_mb_s or trace_latency_ms > 0",
                             cfg_at(cfg, "storage",
                                    stall_config_given(cfg, "storage", "trace_mb_s")
                                        ? "trace_mb_s"
                                        : "trace_latency_ms",
                                    a, sizeof a));
    if (cfg->bandwidth_mb_s <= 0 && cfg->global_mb_s <= 0 && cfg->latency_ms <= 0 && !tstore)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: a cache miss costs nothing without [storage] bandwidth_mb_s, "
                             "global_mb_s or latency_ms: set one (the store behind the cache)",
                             cfg_at(cfg, "storage", "cache_mb", a, sizeof a));
    if (stall_config_given(cfg, "storage", "requests_per_batch") && cfg->latency_ms <= 0 &&
        !(tstore && cfg->trace_latency_ms > 0))
        return stall_err_set(err, STALL_ECONFIG, "%s: has no effect without %s > 0",
                             cfg_at(cfg, "storage", "requests_per_batch", a, sizeof a),
                             cfg_at(cfg, "storage", "latency_ms", b, sizeof b));
    if (stall_config_given(cfg, "storage", "queue") && cfg->bandwidth_mb_s <= 0 &&
        cfg->global_mb_s <= 0 && !(tstore && cfg->trace_mb_s > 0))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect without [storage] bandwidth_mb_s or global_mb_s",
                             cfg_at(cfg, "storage", "queue", a, sizeof a));
    if (cfg->queue == 1 && cfg->bandwidth_mb_s > 0 && cfg->global_mb_s > 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: a FIFO store has one bandwidth: give bandwidth_mb_s (a queue per "
                             "node) or global_mb_s (one queue), not both",
                             cfg_at(cfg, "storage", "queue", a, sizeof a));
    if (stall_config_given(cfg, "storage", "latency") && cfg->latency_ms <= 0 &&
        !(tstore && cfg->trace_latency_ms > 0))
        return stall_err_set(err, STALL_ECONFIG, "%s: has no effect without %s > 0",
                             cfg_at(cfg, "storage", "latency", a, sizeof a),
                             cfg_at(cfg, "storage", "latency_ms", b, sizeof b));
    static const char *const need_cache[] = {"dataset_mb", "layout", "cached_start_mb"};
    for (size_t i = 0; i < 3; i++)
        if (stall_config_given(cfg, "storage", need_cache[i]) && cfg->cache_mb <= 0 &&
            !(i < 2 && tstore && cfg->trace_cache_mb > 0))
            return stall_err_set(err, STALL_ECONFIG, "%s: has no effect without %s > 0 (no cache)",
                                 cfg_at(cfg, "storage", need_cache[i], a, sizeof a),
                                 cfg_at(cfg, "storage", "cache_mb", b, sizeof b));
    if (cfg->cached_start_mb > cfg->cache_mb)
        return stall_err_set(
            err, STALL_ECONFIG, "%s: %g MB cannot be cached at the start in a cache of %g MB (%s)",
            cfg_at(cfg, "storage", "cached_start_mb", a, sizeof a), cfg->cached_start_mb,
            cfg->cache_mb, cfg_at(cfg, "storage", "cache_mb", b, sizeof b));
    return 0;
}

static int cfg_need(const stall_config *cfg, const char *key, const char *value, stall_err *err)
{
    if (value[0] != '\0')
        return 0;
    char f[CFG_AT];
    return stall_err_set(err, STALL_ECONFIG, "%s: [trace] %s: required for format = %s (%s)",
                         stall_config_src(cfg), key, cfg_format_name(cfg->format),
                         cfg_at(cfg, "trace", "format", f, sizeof f));
}

/* The [trace] files cfg's format needs: dsanalyzer's three, the others' path. */
static int cfg_need_trace(const stall_config *cfg, stall_err *err)
{
    int rc = 0;
    if (cfg->format == STALL_FORMAT_DSANALYZER)
        (void)((rc = cfg_need(cfg, "fetch", cfg->fetch, err)) ||
               (rc = cfg_need(cfg, "start", cfg->start, err)) ||
               (rc = cfg_need(cfg, "perf", cfg->perf, err)));
    else if (cfg->format == STALL_FORMAT_TIDY || cfg->format == STALL_FORMAT_KINETO ||
             cfg->format == STALL_FORMAT_DFTRACER)
        rc = cfg_need(cfg, "path", cfg->path, err);
    return rc;
}

int stall_config_check(const stall_config *cfg, stall_err *err)
{
    const char *src = stall_config_src(cfg);
    if (cfg->nextra > 0) {
        const struct stall_config_extra *x = &cfg->extra[0];
        if (x->command_line) {
            char where[96];
            if (strcmp(x->section, "sweep") == 0)
                snprintf(where, sizeof where, "--sweep %s", x->key);
            else
                snprintf(where, sizeof where, "--set %s.%s", x->section, x->key);
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: only `stallsim %s` reads [%s] (this command would ignore it)",
                                 where, x->section, x->section);
        }
        char at[32] = "";
        if (x->line > 0)
            snprintf(at, sizeof at, ":%d", x->line);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s%s: [%s] %s: only `stallsim %s` reads this section (this command "
                             "would ignore it)",
                             src, at, x->section, x->key, x->section);
    }
    int arc = cfg_check_applies(cfg, err);
    if (arc)
        return arc;
    char a[CFG_AT], b[CFG_AT];
    if (cfg->mode == STALL_MODE_SEED || cfg->mode == STALL_MODE_REPLAY) {
        if (cfg->format != STALL_FORMAT_DSANALYZER && cfg->mode == STALL_MODE_SEED)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: mode = seed needs format = dsanalyzer (%s)",
                                 cfg_at(cfg, "trace", "format", a, sizeof a),
                                 cfg_at(cfg, "scenario", "mode", b, sizeof b));
        if (cfg->format == STALL_FORMAT_NONE)
            return stall_err_set(err, STALL_ECONFIG, "%s: mode = replay needs a trace (%s)",
                                 cfg_at(cfg, "trace", "format", a, sizeof a),
                                 cfg_at(cfg, "scenario", "mode", b, sizeof b));
    }
    int nrc = cfg_need_trace(cfg, err);
    if (nrc)
        return nrc;
    /* Each message names where the offending values came from: file:line,
     * --set, or the default. */
    if (cfg->workers == 0 && stall_config_given(cfg, "loader", "prefetch_factor"))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: needs workers > 0, and %s = 0 (PyTorch rejects a prefetch "
                             "factor without workers)",
                             cfg_at(cfg, "loader", "prefetch_factor", a, sizeof a),
                             cfg_at(cfg, "loader", "workers", b, sizeof b));
    /* The run's loader and the measured one's: workers x prefetch_factor. */
    const struct {
        const char *section;
        int64_t workers, prefetch;
    } loaders[2] = {
        {"loader", cfg->workers, cfg->prefetch_factor},
        {"trace", cfg->trace_workers, cfg->trace_prefetch > 0 ? cfg->trace_prefetch : 2}};
    for (int l = 0; l < 2; l++) {
        int64_t n = loaders[l].workers * loaders[l].prefetch;
        if (loaders[l].workers > 0 && n > STALL_LIMIT_IN_FLIGHT)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s x %s = %lld batches in flight per GPU, more than the limit "
                                 "of %lld",
                                 cfg_at(cfg, loaders[l].section, "workers", a, sizeof a),
                                 cfg_at(cfg, loaders[l].section, "prefetch_factor", b, sizeof b),
                                 (long long)n, (long long)STALL_LIMIT_IN_FLIGHT);
    }
    int64_t in_flight = cfg->workers * cfg->prefetch_factor;
    if (cfg->workers > 0 && cfg->gpus > 0 && in_flight * cfg->gpus > STALL_LIMIT_SLOTS)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: %lld GPUs x %lld batches in flight each (workers x "
                             "prefetch_factor) = %lld, more than the limit of %lld",
                             cfg_at(cfg, "cluster", "gpus", a, sizeof a), (long long)cfg->gpus,
                             (long long)in_flight, (long long)(in_flight * cfg->gpus),
                             (long long)STALL_LIMIT_SLOTS);
    if (cfg->gpus > 0 && cfg->gpus_per_node > cfg->gpus)
        return stall_err_set(err, STALL_ECONFIG, "%s: %lld is more than %s = %lld",
                             cfg_at(cfg, "cluster", "gpus_per_node", a, sizeof a),
                             (long long)cfg->gpus_per_node,
                             cfg_at(cfg, "cluster", "gpus", b, sizeof b), (long long)cfg->gpus);
    if (cfg->mode == STALL_MODE_MODEL && cfg->format == STALL_FORMAT_NONE) {
        if (cfg->fetch_dist.mean_s <= 0)
            return stall_err_set(err, STALL_ECONFIG, "%s: must be > 0 without a trace",
                                 cfg_at(cfg, "fetch", "mean_s", a, sizeof a));
        if (cfg->compute_dist.mean_s <= 0)
            return stall_err_set(err, STALL_ECONFIG, "%s: must be > 0 without a trace",
                                 cfg_at(cfg, "compute", "mean_s", a, sizeof a));
        if (cfg->batches <= 0)
            return stall_err_set(err, STALL_ECONFIG, "%s: must be > 0 without a trace",
                                 cfg_at(cfg, "run", "batches", a, sizeof a));
    }
    if (cfg->cpu_waits_out != -1.0 && cfg->cpu_waits_out < 0.0)
        return stall_err_set(err, STALL_ECONFIG, "%s: must be -1 (fitted) or in [0, 1]",
                             cfg_at(cfg, "cluster", "cpu_waits_out", a, sizeof a));
    if (cfg->mode == STALL_MODE_MODEL && cfg->cores == 0 &&
        (cfg->cpu_share != 1.0 || cfg->compute_cpu_share != 0.0))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect without [cluster] cores (the host cores it is a "
                             "share of)",
                             cfg_at(cfg, cfg->compute_cpu_share != 0.0 ? "compute" : "fetch",
                                    "cpu_share", a, sizeof a));
    if (cfg->bandwidth_mb_s > 0 && cfg->batch_mb <= 0 && cfg->format != STALL_FORMAT_TIDY)
        return stall_err_set(err, STALL_ECONFIG, "%s: must be > 0 when %s is set: %s",
                             cfg_at(cfg, "storage", "batch_mb", a, sizeof a),
                             cfg_at(cfg, "storage", "bandwidth_mb_s", b, sizeof b),
                             cfg_no_batch_mb(cfg));
    int rc = cfg_check_tiers(cfg, err);
    if (rc)
        return rc;
    if (cfg->bandwidth_mb_s > 0 && cfg->batch_mb / cfg->bandwidth_mb_s > STALL_LIMIT_DURATION_S)
        return stall_err_set(
            err, STALL_ECONFIG, "%s: reading a batch takes longer than the limit of %g s at %s",
            cfg_at(cfg, "storage", "batch_mb", a, sizeof a), STALL_LIMIT_DURATION_S,
            cfg_at(cfg, "storage", "bandwidth_mb_s", b, sizeof b));
    /* [ddp] allreduce_s replaces the measured tail whole (feed.c), the ring
     * model's with it: a ring key beside it is never read. */
    static const char *const ring_keys[] = {"bucket_mb", "bandwidth_gb_s", "latency_us"};
    for (int i = 0; i < 3 && stall_config_given(cfg, "ddp", "allreduce_s"); i++)
        if (stall_config_given(cfg, "ddp", ring_keys[i]))
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: has no effect: %s replaces the whole tail after backward, "
                                 "the ring model's too; give one of them",
                                 cfg_at(cfg, "ddp", ring_keys[i], a, sizeof a),
                                 cfg_at(cfg, "ddp", "allreduce_s", b, sizeof b));
    /* The ring's tail is 2(G-1) x latency_us + 2(G-1)/G x bucket_mb /
     * bandwidth_gb_s (jobs/feed.c): the bandwidth is read only for the
     * bucket's term, so a ring of 0 MB never reads it (with latency_us = 0
     * its tail is 0 s; with latency_us > 0 the latency alone sets it). */
    if (stall_config_given(cfg, "ddp", "bandwidth_gb_s") && cfg->bucket_mb <= 0) {
        if (cfg->latency_us <= 0)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: has no effect: the ring moves [ddp] bucket_mb = 0 MB with "
                                 "latency_us = 0, so its tail is 0 s whatever the bandwidth; set "
                                 "bucket_mb (or allreduce_s = 0 for a tail of 0)",
                                 cfg_at(cfg, "ddp", "bandwidth_gb_s", a, sizeof a));
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect: the ring moves [ddp] bucket_mb = 0 MB, so its "
                             "tail is the latency's alone (2 (G - 1) x latency_us) whatever the "
                             "bandwidth; set bucket_mb, or leave bandwidth_gb_s out",
                             cfg_at(cfg, "ddp", "bandwidth_gb_s", a, sizeof a));
    }
    if (cfg->bucket_mb > 0 && cfg->bandwidth_gb_s <= 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: must be > 0 for the ring all-reduce model to move %s",
                             cfg_at(cfg, "ddp", "bandwidth_gb_s", a, sizeof a),
                             cfg_at(cfg, "ddp", "bucket_mb", b, sizeof b));
    return cfg_check_uneven(cfg, err);
}

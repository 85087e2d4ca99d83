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
enum { CFG_F_DSA = 1, CFG_F_TIDY = 2, CFG_F_NONE = 4, CFG_F_TRACE = 3, CFG_F_ALL = 7 };
/* Kineto and dftracer traces (analyze and timeline read them). */
enum { CFG_F_KINETO = 8, CFG_F_DFTRACER = 16 };

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
    const char *ini = cfg->ini_path[0] ? cfg->ini_path : "config";
    if (!cfg_find(section, key, &idx) || !cfg->given[idx])
        snprintf(buf, n, "%s: [%s] %s", ini, section, key);
    else if (cfg->given[idx] == 2)
        snprintf(buf, n, "--set %s.%s", section, key);
    else if (cfg->given_line[idx] > 0)
        snprintf(buf, n, "%s:%d: [%s] %s", ini, cfg->given_line[idx], section, key);
    else
        snprintf(buf, n, "%s: [%s] %s", ini, section, key);
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
            if (by_mode)
                return stall_err_set(err, STALL_ECONFIG,
                                     "%s: has no effect in mode = %s (it is %s%s)", where,
                                     cfg_mode_name(cfg->mode), r->why, cause);
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: has no effect with [trace] format = %s (it is %s%s)", where,
                                 cfg_format_name(cfg->format), r->why, cause);
        }
    }
    return 0;
}

static int cfg_need(const stall_config *cfg, const char *key, const char *value, stall_err *err)
{
    if (value[0] != '\0')
        return 0;
    return stall_err_set(err, STALL_ECONFIG, "%s: [trace] %s: required for format = %s",
                         cfg->ini_path[0] ? cfg->ini_path : "config", key,
                         cfg_format_name(cfg->format));
}

int stall_config_check(const stall_config *cfg, stall_err *err)
{
    const char *src = cfg->ini_path[0] ? cfg->ini_path : "config";
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
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [%s] %s: only `stallsim %s` reads this section (this command "
                             "would ignore it)",
                             src, x->section, x->key, x->section);
    }
    int arc = cfg_check_applies(cfg, err);
    if (arc)
        return arc;
    if (cfg->mode == STALL_MODE_SEED || cfg->mode == STALL_MODE_REPLAY) {
        if (cfg->format != STALL_FORMAT_DSANALYZER && cfg->mode == STALL_MODE_SEED)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [trace] format: mode = seed needs format = dsanalyzer", src);
        if (cfg->format == STALL_FORMAT_NONE)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [trace] format: mode = replay needs a trace", src);
    }
    if (cfg->format == STALL_FORMAT_DSANALYZER) {
        int rc;
        if ((rc = cfg_need(cfg, "fetch", cfg->fetch, err)) ||
            (rc = cfg_need(cfg, "start", cfg->start, err)) ||
            (rc = cfg_need(cfg, "perf", cfg->perf, err)))
            return rc;
    }
    if (cfg->format == STALL_FORMAT_TIDY || cfg->format == STALL_FORMAT_KINETO ||
        cfg->format == STALL_FORMAT_DFTRACER) {
        int rc = cfg_need(cfg, "path", cfg->path, err);
        if (rc)
            return rc;
    }
    if (cfg->workers == 0 && stall_config_given(cfg, "loader", "prefetch_factor"))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [loader] prefetch_factor: needs workers > 0 (PyTorch rejects "
                             "a prefetch factor without workers)",
                             src);
    if (cfg->gpus > 0 && cfg->gpus_per_node > cfg->gpus)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [cluster] gpus_per_node: %lld is more than gpus = %lld", src,
                             (long long)cfg->gpus_per_node, (long long)cfg->gpus);
    if (cfg->mode == STALL_MODE_MODEL && cfg->format == STALL_FORMAT_NONE) {
        if (cfg->fetch_dist.mean_s <= 0)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [fetch] mean_s: must be > 0 without a trace", src);
        if (cfg->compute_dist.mean_s <= 0)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [compute] mean_s: must be > 0 without a trace", src);
        if (cfg->batches <= 0)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [run] batches: must be > 0 without a trace", src);
    }
    if (cfg->mode == STALL_MODE_MODEL && cfg->cores == 0 &&
        (cfg->cpu_share != 1.0 || cfg->compute_cpu_share != 0.0))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [%s] cpu_share: has no effect without [cluster] cores (the "
                             "host cores it is a share of)",
                             src, cfg->compute_cpu_share != 0.0 ? "compute" : "fetch");
    if (cfg->bandwidth_mb_s > 0 && cfg->batch_mb <= 0 && cfg->format != STALL_FORMAT_TIDY)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [storage] batch_mb: must be > 0 when bandwidth_mb_s is set", src);
    if (cfg->bandwidth_mb_s > 0 && cfg->batch_mb / cfg->bandwidth_mb_s > STALL_LIMIT_DURATION_S)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [storage] batch_mb: reading a batch takes longer than the "
                             "limit of %g s at bandwidth_mb_s",
                             src, STALL_LIMIT_DURATION_S);
    bool ring = cfg->bucket_mb > 0 || cfg->bandwidth_gb_s > 0 || cfg->latency_us > 0;
    if (ring && cfg->bandwidth_gb_s <= 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [ddp] bandwidth_gb_s: must be > 0 for the ring all-reduce model",
                             src);
    return 0;
}

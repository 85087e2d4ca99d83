/*
 * check_ckpt.c - the cross-key checks of [checkpoint], [ranks] and
 * [straggler] (stall/ckpt.h): a key that would have no effect is refused,
 * naming where it was given.
 */
#include "stall/config.h"

#include <string.h>

#include "config_int.h"

#define CK_AT (STALL_PATH_MAX + 96)

static int ck_no_effect(const stall_config *cfg, const char *section, const char *key,
                        const char *why, stall_err *err)
{
    char a[CK_AT];
    stall_config_origin(cfg, section, key, a, sizeof a);
    return stall_err_set(err, STALL_ECONFIG, "%s: has no effect %s", a, why);
}

/* A trace that may record checkpoints, whose interval, size and write time
 * then come from it (docs/model.md 2.5): a tidy trace's ckpt_* columns, a
 * DLIO trace's checkpoint events (8.1). Whether it does is known once it is
 * read (jobs/ckpt_job.c). */
static bool ck_may_record(const stall_config *cfg)
{
    return cfg->format == STALL_FORMAT_TIDY || cfg->format == STALL_FORMAT_DFTRACER;
}

static int ck_checkpoint(const stall_config *cfg, stall_err *err)
{
    static const char *const keys[] = {"mb_per_rank",   "bandwidth_mb_s", "mode",
                                       "snapshot_mb_s", "target",         "first_extra_s"};
    char a[CK_AT], b[CK_AT];
    bool every = cfg->ckpt_every > 0 || cfg->ckpt_every_s > 0;
    if (cfg->ckpt_mode == 2) {
        /* off: every other [checkpoint] key would describe checkpoints
         * that are not written. */
        static const char *const all[] = {"every_iterations", "every_s",       "mb_per_rank",
                                          "bandwidth_mb_s",   "snapshot_mb_s", "target",
                                          "first_extra_s"};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            if (stall_config_given(cfg, "checkpoint", all[i]))
                return ck_no_effect(cfg, "checkpoint", all[i], "with [checkpoint] mode = off", err);
        if (!ck_may_record(cfg))
            return ck_no_effect(cfg, "checkpoint", "mode",
                                "= off: only a tidy or DLIO (dftracer) trace records checkpoints "
                                "to switch off",
                                err);
        return 0;
    }
    if (cfg->ckpt_every > 0 && cfg->ckpt_every_s > 0) {
        stall_config_origin(cfg, "checkpoint", "every_iterations", a, sizeof a);
        stall_config_origin(cfg, "checkpoint", "every_s", b, sizeof b);
        return stall_err_set(err, STALL_ECONFIG, "%s and %s: give one interval, not both", a, b);
    }
    /* A tidy trace may record checkpoints (their interval, size and write
     * time); without one, nothing says when to write. */
    if (!every && !ck_may_record(cfg))
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (stall_config_given(cfg, "checkpoint", keys[i]))
                return ck_no_effect(cfg, "checkpoint", keys[i],
                                    "without [checkpoint] every_iterations or every_s", err);
    bool store = cfg->ckpt_target == 1;
    if (store && stall_config_given(cfg, "checkpoint", "bandwidth_mb_s")) {
        stall_config_origin(cfg, "checkpoint", "bandwidth_mb_s", a, sizeof a);
        stall_config_origin(cfg, "checkpoint", "target", b, sizeof b);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: contradicts %s = store (the write then shares [storage] "
                             "bandwidth_mb_s with the reads)",
                             a, b);
    }
    if (store && (!stall_config_tiers(cfg) || !(cfg->bandwidth_mb_s > 0 || cfg->global_mb_s > 0))) {
        stall_config_origin(cfg, "checkpoint", "target", a, sizeof a);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: needs the storage tiers (a [storage] tier key such as cache_mb) "
                             "with bandwidth_mb_s or global_mb_s > 0",
                             a);
    }
    if (every && !ck_may_record(cfg) && (cfg->ckpt_mb <= 0 || (!store && cfg->ckpt_mb_s <= 0))) {
        const char *k = cfg->ckpt_mb <= 0 ? "mb_per_rank" : "bandwidth_mb_s";
        stall_config_origin(cfg, "checkpoint", k, a, sizeof a);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: must be > 0 to write checkpoints (only a tidy or DLIO trace "
                             "that records them gives a default)",
                             a);
    }
    if (cfg->ckpt_mb_s > 0 && cfg->ckpt_mb / cfg->ckpt_mb_s > STALL_LIMIT_DURATION_S) {
        stall_config_origin(cfg, "checkpoint", "mb_per_rank", a, sizeof a);
        stall_config_origin(cfg, "checkpoint", "bandwidth_mb_s", b, sizeof b);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: writing it takes longer than the limit of %g s at %s", a,
                             STALL_LIMIT_DURATION_S, b);
    }
    if (cfg->ckpt_mode == 0 && stall_config_given(cfg, "checkpoint", "snapshot_mb_s"))
        return ck_no_effect(cfg, "checkpoint", "snapshot_mb_s",
                            "with [checkpoint] mode = sync (the snapshot is async's)", err);
    return 0;
}

static int ck_ranks(const stall_config *cfg, stall_err *err)
{
    if (cfg->slow_ranks == 0) {
        static const char *const keys[] = {"unit", "compute_factor", "fetch_factor"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (stall_config_given(cfg, "ranks", keys[i]))
                return ck_no_effect(cfg, "ranks", keys[i], "without [ranks] slow > 0", err);
    } else if (cfg->slow_compute_factor == 1.0 && cfg->slow_fetch_factor == 1.0) {
        return ck_no_effect(cfg, "ranks", "slow",
                            "while [ranks] compute_factor and fetch_factor are 1", err);
    }
    if (cfg->straggler_fraction == 0.0) {
        static const char *const keys[] = {"factor", "iterations"};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            if (stall_config_given(cfg, "straggler", keys[i]))
                return ck_no_effect(cfg, "straggler", keys[i], "without [straggler] fraction > 0",
                                    err);
    } else if (cfg->straggler_factor == 1.0) {
        return ck_no_effect(cfg, "straggler", "fraction", "while [straggler] factor is 1", err);
    }
    return 0;
}

int cfg_check_uneven(const stall_config *cfg, stall_err *err)
{
    if (cfg->mode != STALL_MODE_MODEL)
        return 0;
    int rc = ck_checkpoint(cfg, err);
    return rc ? rc : ck_ranks(cfg, err);
}

/*
 * scenario.c - `stallsim run`: the dispatch on [scenario] mode, in one place.
 */
#include "stall/scenario.h"

#include <stdlib.h>

#include "stall/job.h"

#include "modes.h"

int stall_scenario_run(const stall_config *cfg, const stall_run_opts *opts, stall_err *err)
{
    /* Refused before the run rather than after it: a configuration that
     * effective.ini could not reproduce. */
    char *outdir = stall_job_outdir(cfg, opts);
    int rc = stall_config_roundtrip(cfg, outdir, err);
    free(outdir);
    if (rc)
        return rc;
    switch (cfg->mode) {
    case STALL_MODE_MODEL:
        return stall_model_job(cfg, opts, err);
    case STALL_MODE_REPLAY:
    case STALL_MODE_SEED:
        return stall_replay_job(cfg, opts, err);
    }
    return stall_err_set(err, STALL_ECONFIG, "%s: [scenario] mode: unknown mode", cfg->ini_path);
}

/* Fuzz target: whole pipelines on a fuzzed tidy trace, with small limits:
 * `stallsim validate` and a model run (mode = model, format = tidy), each
 * writing its result folder in a scratch folder. Oracle: exit code 0 or a
 * bad-input code with one error line; never a crash, hang or leak. */
#include "fuzz_common.h"
#include "stall/config.h"
#include "stall/scenario.h"
#include "stall/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 8192)
        return 0; /* small traces only: a pipeline run per input */
    const char *p = fz_file(0, "trace.csv", data, size);
    char out[160];
    snprintf(out, sizeof out, "%s/out", fz_scratch());
    for (int job = 0; job < 2; job++) {
        stall_config cfg;
        stall_config_defaults(&cfg);
        stall_err err = {0};
        if (stall_config_set(&cfg, "trace.format=tidy", &err) ||
            stall_config_set(&cfg, job ? "scenario.mode=model" : "scenario.mode=replay", &err))
            abort();
        snprintf(cfg.path, sizeof cfg.path, "%s", p);
        if (job) {
            /* A bounded what-if: 2 epochs at most, resampled. */
            if (stall_config_set(&cfg, "run.epochs=2", &err) ||
                stall_config_set(&cfg, "fetch.resample=bootstrap", &err))
                abort();
        }
        stall_run_opts o = {.outdir = out, .jobs = 1, .term = NULL};
        int rc = job ? stall_scenario_run(&cfg, &o, &err) : stall_validate(&cfg, &o, &err);
        if (rc != 0 && (stall_exit_status(rc) != 2 || strchr(err.msg, '\n'))) {
            fprintf(stderr, "oracle: job %d rc %d: %s\n", job, rc, err.msg);
            abort();
        }
        fz_rm_tree(out);
    }
    return 0;
}

/*
 * main.c - the stallsim command line: a thin layer over the library.
 *
 *   stallsim run CONFIG.ini [-o DIR] [--set section.key=value]... [-j N]
 *
 * Exit status: 0 success, 2 bad input or configuration, 1 internal failure.
 * Every error is one line on stderr that names the file and line (or key).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/config.h"
#include "stall/scenario.h"
#include "stall/calibrate.h"
#include "stall/limits.h"
#include "stall/validate.h"

static void cli_usage(FILE *f)
{
    fprintf(
        f,
        "usage: stallsim run CONFIG.ini [-o DIR] [--set section.key=value]... [-j N] [-q]\n"
        "       stallsim validate CONFIG.ini [-o DIR] [--set section.key=value]...\n"
        "       stallsim calibrate [--cores N] [--gpus-per-node N] TRACE.csv TRACE.csv...\n"
        "       stallsim --help | --version\n"
        "\n"
        "Simulates the data pipeline of a DDP training run from a measured trace:\n"
        "  run        mode = replay | seed: every alignment combination of a measured trace;\n"
        "             mode = model: the closed-loop what-if (workers, GPUs, cores, storage...)\n"
        "  validate   simulate a tidy trace's measured configuration; simulated vs measured\n"
        "             epoch time and stall per epoch (validate.csv)\n"
        "  calibrate  from traces of one job with different worker counts, estimate the CPU\n"
        "             share of a fetch (and the effective cores) and print the INI lines\n"
        "\n"
        "options:\n"
        "  -o DIR          result folder (default results/<scenario name>/)\n"
        "  --set S.K=V     override an INI key, e.g. --set align.fetch=min\n"
        "  -j N            run combinations in N threads (output identical to -j 1)\n"
        "  -q              no terminal summary\n"
        "\n"
        "exit status: 0 ok, 2 bad input or configuration, 1 internal error\n"
        "\n"
        "%s\n"
        "\n"
        "INI keys (section, key, default, meaning):\n",
        STALL_LIMITS_TEXT);
    stall_config_help(f);
}

static int cli_fail(const stall_err *err)
{
    fprintf(stderr, "stallsim: %s\n", err->msg[0] ? err->msg : stall_strerror(err->code));
    return stall_exit_status(err->code);
}

static int cli_bad_usage(const char *what)
{
    fprintf(stderr, "stallsim: %s (try stallsim --help)\n", what);
    return 2;
}

static int cli_run(int argc, char **argv, bool validate)
{
    const char *ini = NULL, *outdir = NULL;
    int jobs = 1, quiet = 0;
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
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "stallsim: unknown option %s (try stallsim --help)\n", a);
            rc = 2;
            goto done;
        } else if (!ini) {
            ini = a;
        } else {
            rc = cli_bad_usage("more than one CONFIG.ini given");
            goto done;
        }
    }
    if (!ini) {
        rc = cli_bad_usage("run needs a CONFIG.ini");
        goto done;
    }
    {
        stall_config *cfg = malloc(sizeof *cfg);
        stall_err err = {0};
        if (!cfg) {
            rc = 1;
            goto done;
        }
        stall_config_defaults(cfg);
        rc = stall_config_load(cfg, ini, &err);
        for (int i = 0; rc == 0 && i < nsets; i++)
            rc = stall_config_set(cfg, sets[i], &err);
        if (rc == 0)
            rc = stall_config_check(cfg, &err);
        if (rc == 0) {
            stall_run_opts o = {.outdir = outdir, .jobs = jobs, .term = quiet ? NULL : stdout};
            rc = validate ? stall_validate(cfg, &o, &err) : stall_scenario_run(cfg, &o, &err);
        }
        free(cfg);
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
            if (cli_int_arg(i + 1 < argc ? argv[++i] : NULL, 1, 1 << 20, &cores)) {
                free(paths);
                return cli_bad_usage("--cores needs a count >= 1");
            }
        } else if (strcmp(argv[i], "--gpus-per-node") == 0) {
            if (cli_int_arg(i + 1 < argc ? argv[++i] : NULL, 1, 1 << 20, &gpn)) {
                free(paths);
                return cli_bad_usage("--gpus-per-node needs a count >= 1");
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        cli_usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("stallsim %s\n", stall_version());
        return 0;
    }
    if (strcmp(cmd, "run") == 0)
        return cli_run(argc - 2, argv + 2, false);
    if (strcmp(cmd, "validate") == 0)
        return cli_run(argc - 2, argv + 2, true);
    if (strcmp(cmd, "calibrate") == 0)
        return cli_calibrate(argc - 2, argv + 2);
    fprintf(stderr, "stallsim: unknown command '%s' (try stallsim --help)\n", cmd);
    return 2;
}

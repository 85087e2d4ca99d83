/*
 * job.c - what every job shares: its result folder and its manifest
 * (effective.ini).
 */
#include "stall/job.h"

#include <stdlib.h>

#include "stall/digest.h"
#include "stall/io.h"

char *stall_job_outdir(const stall_config *cfg, const stall_run_opts *opts)
{
    return opts->outdir ? stall_xstrdup(opts->outdir) : stall_path_join("results", cfg->name);
}

typedef struct job_manifest {
    const stall_config *cfg;
    const char *outdir;
    const char *paths[4];
    char hex[4][65];
    int n;
} job_manifest;

/* Paths are written relative to the result folder (where effective.ini is
 * read from when run again), each on a line of its own to stay within the
 * INI reader's line length. */
static int job_fill_manifest(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const job_manifest *m = arg;
    fprintf(f, "; stallsim %s: effective configuration of this run\n", stall_version());
    if (m->cfg->ini_path[0]) {
        char *rel = stall_path_relative(m->outdir, m->cfg->ini_path);
        fprintf(f, "; config %s\n", rel);
        free(rel);
    }
    for (int i = 0; i < m->n; i++) {
        char *rel = stall_path_relative(m->outdir, m->paths[i]);
        fprintf(f, "; input %s\n;   sha256 %s\n", rel, m->hex[i]);
        free(rel);
    }
    fputc('\n', f);
    stall_config_write(m->cfg, m->outdir, f);
    return 0;
}

int stall_job_manifest(const stall_config *cfg, const char *outdir, stall_err *err)
{
    job_manifest m = {.cfg = cfg, .outdir = outdir};
    int rrc = stall_config_roundtrip(cfg, outdir, err);
    if (rrc)
        return rrc;
    if (cfg->format == STALL_FORMAT_DSANALYZER) {
        m.paths[m.n++] = cfg->fetch;
        m.paths[m.n++] = cfg->start;
        m.paths[m.n++] = cfg->perf;
    } else if (cfg->format == STALL_FORMAT_TIDY) {
        m.paths[m.n++] = cfg->path;
    }
    for (int i = 0; i < m.n; i++) {
        int rc = stall_sha256_file(m.paths[i], m.hex[i], err);
        if (rc)
            return rc;
    }
    return stall_write_atomic_in(outdir, "effective.ini", job_fill_manifest, &m, err);
}

/*
 * stall/job.h - what every job a user runs (run, validate, calibrate, and
 * later sweep and plan) shares: the run options, the result folder and the
 * manifest that makes a result folder reproducible.
 *
 * This is the bottom of the jobs layer: it knows the configuration and the
 * I/O helpers, and no job.
 */
#ifndef STALL_JOB_H
#define STALL_JOB_H

#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>

#include "stall/base.h"
#include "stall/config.h"
#include "stall/io.h"
#include "stall/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SHA-256 of input files, computed once and reused: a sweep hashes its
 * points' inputs before the first point runs, not once per point. */
typedef struct stall_job_digests {
    int n, cap;
    char **path;     /* as the configuration holds it */
    char (*hex)[65]; /* its SHA-256 */
} stall_job_digests;

/* Checks that cfg's input files can be read (stall_job_inputs: a missing
 * one names the INI line or --set) and adds the SHA-256 of each one not in
 * d yet. Returns 0 or STALL_EIO; d is left usable either way. */
int stall_job_digests_add(stall_job_digests *d, const stall_config *cfg, stall_err *err);
void stall_job_digests_free(stall_job_digests *d);

/* The same, in a thread of its own while the job reads and simulates:
 * stall_job_hash_start begins (or, when no thread can be started, does) the
 * hashing of cfg's inputs; stall_job_hash_finish waits for it and returns
 * its result (0 or STALL_EIO with err set). Between the two, h->d is not to
 * be touched; after finish it holds the digests until
 * stall_job_digests_free(&h->d). cfg must outlive the hashing. Its input
 * check is stall_job_inputs_json's: the job has taken or refused cfg's
 * format before it starts the hashing. */
typedef struct stall_job_hasher {
    const stall_config *cfg;
    stall_job_digests d;
    stall_err err;
    int rc;
    int threaded;
    pthread_t thread;
} stall_job_hasher;
void stall_job_hash_start(stall_job_hasher *h, const stall_config *cfg);
int stall_job_hash_finish(stall_job_hasher *h, stall_err *err);

/* A trace kept across the runs of one job (jobs/memo.h; plan's probes). */
typedef struct stall_trace_memo stall_trace_memo;

typedef struct stall_run_opts {
    const char *outdir; /* result folder; NULL: results/<name> */
    int jobs;           /* threads for the combinations (>= 1) */
    FILE *term;         /* terminal summary; NULL: none */
    /* Observers of the first simulated run of a job (mode = model: the first
     * fetch alignment; validate), all may be NULL: on_params once before it,
     * on_iter for each of its iterations, both with ctx = observer. They
     * change nothing in the run or its outputs. */
    void (*on_params)(void *observer, const stall_model_params *p);
    stall_iter_fn on_iter;
    void *observer;
    /* Called with the work folder once the run's own files are in it and
     * before it is committed (every mode and validate; not with no_files):
     * what it writes there, or removes, is part of the result folder, whole
     * or absent with it (--analyze; a sweep point's dropped sub-folders).
     * Non-zero abandons the job. NULL: none. */
    int (*before_commit)(void *ctx, const char *work, stall_err *err);
    void *before_commit_ctx;
    int no_iterations; /* 1: no per-iteration files (sweep points without --keep) */
    int no_files;      /* 1: write nothing (mode = model only; plan's searches) */
    int sweep_point;   /* 1: a sweep's point (mode = model leaves the keys whose effect the
                          sweep judges over all its points, [run] seed, [storage] batch_mb,
                          to the sweep) */
    int plan_probe;    /* 1: a run of stallsim plan's (mode = model leaves [cluster]
                          cpu_waits_out, which plan judges over all its runs, to plan) */
    struct stall_summary *summary; /* not NULL: mode = model stores the first fetch
                                      alignment's summary here (report.h) */
    bool *comparable; /* not NULL: mode = model and validate store here whether the simulated
                         run can be set beside the trace's measured one (same GPUs, batches
                         and epochs: summary.csv's vs_measured_pct is filled; validate always;
                         false without a trace) */
    const stall_job_digests *digests; /* not NULL: input SHA-256 known to the caller
                                         (a path not in it is hashed) */
    int in_memory;          /* how validate and mode = model read a trace (tidy or dsanalyzer),
                               with the same outputs either way (the tests compare them):
                               0 auto: in streaming passes, memory flat in its length, when its
                                 files hold STALL_STREAM_MIN_BYTES or more, else whole (reading
                                 a small file four times only costs time: sweeps and plans
                                 read it once per point);
                               1: whole into memory; -1: always in streaming passes */
    stall_trace_memo *memo; /* not NULL (stallsim plan's probes): mode = model keeps the trace
                               it reads whole here, or takes it from here where a run before
                               read the same [trace], with the same outputs; NULL: each run
                               reads its own */
} stall_run_opts;

/* Traces this large (their files together) are streamed when in_memory = 0:
 * read whole, one would take about half its size in memory. */
#define STALL_STREAM_MIN_BYTES (64LL << 20)

/* Whether validate or mode = model reads cfg's trace in streaming passes
 * (opts->in_memory, above). A file that cannot be sized counts as large. */
bool stall_job_streams(const stall_config *cfg, const stall_run_opts *opts);

/* The result folder of a run: opts->outdir, or results/<name>. Caller frees. */
char *stall_job_outdir(const stall_config *cfg, const stall_run_opts *opts);

/* The result folder of a command that must not mix with a run's: outdir
 * when given, else results/<scenario name><suffix> (validate "-validate",
 * plan "-plan", sweep "-sweep"). Free it. */
char *stall_job_outdir_as(const stall_config *cfg, const char *outdir, const char *suffix);

/* Result folders never mix runs. A job writes into a fresh work folder
 * beside its target, "<final>.tmp.<pid>", registered for removal on
 * SIGINT/SIGTERM (stall/cleanup.h), and stall_job_commit swaps it into
 * place: an existing result folder at `final` is replaced whole. A target
 * that exists and is neither empty nor a stallsim result folder (one with
 * effective.ini) is refused, so that -o never deletes other files.
 *
 * stall_job_begin checks the target, creates its parent folders and the
 * work folder, and sets *work (caller frees). With clean_stale it first
 * removes the work folders of earlier jobs into final that were killed
 * (stall_cleanup_stale over final's parent); a sweep's point leaves that to
 * the sweep, which cleans its folder once (a scan per point read the sweep
 * folder once per point: quadratic in the points). Returns 0 or STALL_EIO. */
int stall_job_begin(const char *final, bool clean_stale, char **work, stall_err *err);

/* stall_job_begin's checks of the target, writing nothing: it is a
 * replaceable folder or absent, and its folder can be created (io.h's
 * stall_check_writable). The command line calls it before a job runs, so
 * that a bad -o is refused before the simulation, not after it. Returns 0
 * or STALL_EIO naming final. */
int stall_job_check_out(const char *final, stall_err *err);

/* Refuses an output `out` (a result folder that a job replaces whole, or a
 * file such as a timeline) that is one of cfg's inputs, its INI or a trace
 * file, or a folder that holds one: writing it would delete the input. The
 * folder's own effective.ini as the INI passes: the job writes it anew.
 * Paths are compared resolved (links, ./ and ../ see through). An out that
 * does not exist, or inputs that cannot be listed (the reader says why
 * later), pass. Returns 0 or STALL_EIO naming out and the input. */
int stall_job_check_apart(const stall_config *cfg, const char *out, stall_err *err);

/* Files written into the work folder are not fsynced one by one (it is a
 * deferred prefix, stall/io.h): stall_job_commit syncs the file system once
 * and then renames work to final, replacing an old result folder there, so
 * that after a crash final is the whole new folder or the old one. When work
 * lies under an outer deferred prefix (a sweep's point folders), the outer
 * owner syncs instead, before its own rename. On failure the old folder is
 * kept and work removed. Returns 0 or STALL_EIO. */
int stall_job_commit(const char *final, const char *work, stall_err *err);

/* Removes the work folder of a job that failed (NULL-safe). */
void stall_job_abort(const char *work);

/* Checks that the trace files of cfg's format can be read; a missing one
 * is STALL_EIO naming the INI file, line and key that point at it (or
 * --set). */
int stall_job_inputs(const stall_config *cfg, stall_err *err);
/* The same, taking Kineto and dftracer traces too (validate and mode =
 * model read them; stall_job_inputs refuses them for replay, seed and
 * sweep). */
int stall_job_inputs_json(const stall_config *cfg, stall_err *err);

/* Whether a run of `ranks` ranks writes ranks.csv: [report] per_rank =
 * true, or auto and at most STALL_PER_RANK_AUTO ranks. */
#define STALL_PER_RANK_AUTO 64
bool stall_job_per_rank(const stall_config *cfg, int ranks);

/* Writes <outdir>/effective.ini: the version, the SHA-256 of every input
 * file and the complete effective configuration (stall_config_write), paths
 * relative to outdir, so that running it again reproduces the results. */
int stall_job_manifest(const stall_config *cfg, const char *outdir, stall_err *err);

/* stall_job_manifest taking the SHA-256 of inputs found in d (NULL: none)
 * from there, and, when tail is not NULL, letting it append sections the
 * configuration does not hold (plan's [plan] values). */
int stall_job_manifest_with(const stall_config *cfg, const char *outdir, const stall_job_digests *d,
                            stall_fill_fn tail, void *tail_ctx, stall_err *err);

/* The text stall_job_manifest_with (no tail) would write into a folder
 * outdir, which must exist (paths are made relative to it), without
 * writing anything or the round-trip check: what a sweep compares a point
 * folder's effective.ini with. Sets *text (caller frees). Returns 0, or
 * STALL_EIO (an input not in d that cannot be hashed) with *text NULL. */
int stall_job_manifest_text(const stall_config *cfg, const char *outdir, const stall_job_digests *d,
                            char **text, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif

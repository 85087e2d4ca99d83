/*
 * stall/analyze.h - where the time of a training run went (`stallsim
 * analyze`, `stallsim run --analyze`), measured or simulated, per rank, per
 * worker and over time, and a verdict in one sentence (docs/model.md,
 * section 8).
 *
 * Every source is first put in one shape, a stall_tidy_trace: a tidy trace
 * as read; the notebook's dsanalyzer trace (request = Time - stall, ready =
 * Time, fetch end = start + fetch, no compute_end, workers only when given:
 * round robin); a simulated run (stall_an_recorder: request = T(k-1), ready
 * = Y, compute_end = Y + C, iter_end = T(k)). The analysis and the timeline
 * then read that shape only, so measured and simulated runs are analysed by
 * the same code.
 */
#ifndef STALL_ANALYZE_H
#define STALL_ANALYZE_H

#include <stdbool.h>
#include <stdio.h>

#include "stall/base.h"
#include "stall/config.h"
#include "stall/dsanalyzer.h"
#include "stall/job.h"
#include "stall/model.h"
#include "stall/tidy.h"
#include "stall/tlexport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum stall_verdict {
    STALL_VERDICT_DATA = 0,  /* waiting for data (incl. barrier waits for a rank's data) */
    STALL_VERDICT_STRAGGLER, /* barrier waits for a rank that computes longer */
    STALL_VERDICT_COMPUTE,   /* compute, all-reduce and the loop's own work */
    STALL_VERDICT_STARTUP    /* the first batch of every epoch (worker start-up) */
} stall_verdict;

/* Where one rank's time went, seconds summed over epochs; the parts add up
 * to total_s, the sum over epochs of (last iter_end - epoch_start). */
typedef struct stall_an_rank {
    double startup_s;  /* epoch start to the first batch's ready */
    double data_s;     /* request to max(request, fetch end), clipped to the stall */
    double handover_s; /* the rest of the stall: fetch end (or request) to ready */
    double compute_s;  /* ready to compute_end (without compute_end: to the barrier) */
    double barrier_s;  /* waiting for the last rank to reach the barrier */
    double post_s;     /* all-reduce, optimizer step, bookkeeping: to the next request */
    double total_s;
    int64_t last;       /* iterations (after the first) where this rank reached the barrier last */
    int64_t last_tied;  /* of those, iterations where another rank arrived at the same ns (the
                           lowest index is counted last) */
    int last_tie_ranks; /* the most other ranks tied with it in one of those iterations */
    double caused_s;    /* barrier wait of the other ranks while this rank was last */
    double ckpt_s;      /* checkpoints inside the epoch (a tidy trace's ckpt columns, a simulated
                           run's waits for them), taken out of post_s (0: none) */
} stall_an_rank;

typedef struct stall_an_worker {
    int rank, worker;
    int64_t batches;
    double busy_share; /* sum of fetch time / sum of epoch times */
    double mean_fetch_s, p95_fetch_s;
} stall_an_worker;

typedef struct stall_an_slow {
    int epoch;
    int64_t batch;
    double iteration_s; /* max over ranks of next request - request */
    int rank;           /* the rank with the longest stall in that iteration */
    int worker;         /* the worker that fetched its batch (-1: unknown) */
    double stall_s, fetch_s;
} stall_an_slow;

/* One epoch of a trace that records the bytes each batch read, fetch times
 * and at least two epochs (docs/model.md 8, "Storage and checkpoints");
 * means over ranks. */
typedef struct stall_an_io {
    double epoch_s;      /* last iter_end - epoch_start */
    double mean_fetch_s; /* fetch_end - fetch_start over the epoch's batches (all ranks) */
    double read_above_s; /* mean_fetch_s minus the fastest epoch's: model.md 2.3 read_above(e) */
    double mb_s_fetch;   /* MB read / fetch time, summed over the epoch's batches */
    double mb_s_epoch; /* MB read by all ranks / the epoch's wall time (first start to last end) */
    double data_s;     /* the data part of the epoch (k >= 1) */
    double storage_s;  /* of it, reads above the fastest epoch: min(data_s, read_above_s x
                          (N - 1) / max(1, workers)), 0 where read_above_s is within twice
                          the standard error of the two epochs' mean fetches */
} stall_an_io;

/* A loss (data, straggler, start-up) names the verdict when it is the
 * largest and takes at least this share of the ranks' time. */
#define STALL_AN_LOSS 0.20
/* An epoch's fetches count as slower reads (stall_an_io.storage_s) when their
 * mean exceeds the fastest epoch's by more than this share of it (and by
 * twice the standard error of the difference): docs/model.md 8 says why. */
#define STALL_AN_READ_REL 0.30
#define STALL_AN_SLOWEST 10
#define STALL_AN_WINDOWS 20

typedef struct stall_analysis {
    int ranks, epochs;
    int64_t batches;
    int workers;           /* per rank; 0 when unknown */
    bool workers_inferred; /* round robin from a given count (dsanalyzer) */
    bool have_compute_end; /* else compute holds all-reduce, barrier only data waits */
    bool no_workers;       /* the trace says 0 workers: fetches in the main process */
    bool clocks_unaligned; /* the ranks' clocks are not aligned (stall_tidy_trace): the barrier
                              waits, the last rank and the straggler are unknown (NaN, -1) */
    bool fetch_unknown;    /* the trace holds waits only (Kineto with workers, dftracer): the
                              whole wait is data, hand-over NaN, no per-worker table */
    double *checkpoint_s;  /* [e * ranks + r] checkpoint time (dftracer); NULL: none */
    stall_an_rank *rank;   /* [ranks] */
    stall_an_worker *wk;   /* [nwk], rank-major */
    int nwk;
    int nwin;
    double win_start_s[STALL_AN_WINDOWS], win_end_s[STALL_AN_WINDOWS]; /* from the run's start */
    double win_batches_s[STALL_AN_WINDOWS]; /* batches (all ranks) per second */
    int nslow;
    stall_an_slow slow[STALL_AN_SLOWEST];
    /* Shares of the sum over ranks of total_s (they add up to 1). */
    double share_data;      /* stall after the first batch + barrier waits caused by data */
    double share_straggler; /* barrier waits caused by a rank's longer compute */
    double share_compute;   /* compute + all-reduce and post-compute */
    double share_startup;
    double share_checkpoint; /* a tidy trace's checkpoints inside the epochs (then the five add
                                up to 1; 0: none) */
    bool ckpt_inside;        /* the source records checkpoints inside the epochs (tidy ckpt columns
                                with compute_end, a simulated run's waits): rank[].ckpt_s is one of
                                the parts that add up to total_s */
    int epoch0;              /* the trace's label of epoch 0 */
    stall_an_io *io;         /* [epochs]: storage per epoch; NULL when the trace records no
                                bytes, no fetch times or one epoch */
    int warm_epoch;          /* index of the fastest-fetching epoch (io only) */
    double storage_s;        /* sum over epochs of io[].storage_s (per rank) */
    double share_storage;    /* storage_s x ranks / the ranks' time: a part of share_data */
    char input[128];         /* the input analysed, as its default folder names it
                                (analyze-<input>: the INI's stem, the trace's name); "": not
                                said (a simulated run's, whose folder has effective.ini) */
    double *epoch_time_s;    /* [e * ranks + r] the rank's epoch time, for the checkpoints'
                                share of it; NULL unless ckpt_inside and checkpoint_s */
    int straggler;           /* the rank the others waited for most; -1 with one rank */
    double straggler_input_s, straggler_compute_s; /* its lateness, split by cause */
    /* The widest start spread of an epoch where it exceeds 5% of that epoch
     * (ranks that begin an epoch late, docs/model.md 2.4): the others' wait
     * for the late rank at the first barrier is start-up. late_rank -1: none. */
    int late_rank, late_epoch; /* the rank that began last; the epoch's index */
    double late_s;             /* its epoch_start minus the earliest rank's */
    stall_verdict verdict;
    char sentence[1024];
} stall_analysis;

/* Analyses t. Never fails on a loaded trace; a is freed with
 * stall_analysis_free. */
void stall_analyze(const stall_tidy_trace *t, stall_analysis *a);
void stall_analysis_free(stall_analysis *a);
const char *stall_verdict_name(stall_verdict v);

/* Loads what `stallsim analyze` and `stallsim timeline` take: a tidy CSV,
 * a PyTorch profiler trace (.json, .json.gz) or DLIO dftracer trace (.pfw,
 * .pfw.gz) or a folder of per-rank ones, or an INI whose [trace] is tidy,
 * dsanalyzer, kineto or dftracer (workers: as above, for dsanalyzer;
 * workers > 0 for any other format is refused, STALL_ECONFIG naming
 * --workers). Returns 0, STALL_EIO, STALL_EPARSE or STALL_ECONFIG. */
int stall_an_load(const char *trace_or_ini, int workers, stall_tidy_trace **out, stall_err *err);

/* stall_an_load's parts (jobs/analyze_load.c). Whether path names an INI
 * file (ends in .ini). */
bool stall_an_is_ini(const char *path);
/* `stallsim analyze`'s result folder when none is given:
 * results/analyze-<name>, name the INI's file name less ".ini", a folder of
 * per-rank traces' name, or a trace's stem (its folder's name for a
 * trace.csv), as run names it. Returns a string to free. */
char *stall_an_default_outdir(const char *path);

/* What stall_an_load_src says of its source, for the first lines. */
typedef struct stall_an_src {
    bool timeline; /* in: read for stallsim timeline, which shows no worker count */
    int format;    /* the trace's STALL_FORMAT_* as the INI names it or detection finds
                      it, so that an INI and its trace given directly are treated alike
                      (-1: not read) */
    char given[STALL_PATH_MAX + 96]; /* where [trace] workers gave the count, "" when
                                        not (and the trace's own where it differs) */
    char left[1024];                 /* the INI's keys the reading leaves out ("[section] key, ...",
                                        "" when none), for a "left out" line as validate's */
} stall_an_src;

/* stall_an_load, saying in *src what it read (src->timeline set by the
 * caller). */
int stall_an_load_src(const char *path, int workers, stall_tidy_trace **out, stall_an_src *src,
                      stall_err *err);

/* The measured trace beside a simulated run, in the tidy shape; a
 * dsanalyzer trace's batches go round robin to its workers (*round_robin
 * says so). */
int stall_an_load_measured(const stall_config *cfg, stall_tidy_trace **out, bool *round_robin,
                           stall_err *err);

/* Collects a simulated run in the tidy shape: pass stall_an_record as the
 * model's per-iteration hook. */
typedef struct stall_an_recorder {
    int ranks, workers;  /* of the simulated run (stall_an_params sets them) */
    stall_time last_end; /* T of the previous record */
    stall_tidy_trace *t;
    size_t cap;
    int64_t rows; /* (epoch, batch) records so far */
    bool ckpt;    /* a checkpoint was recorded (the ckpt columns are kept) */
} stall_an_recorder;

void stall_an_record(void *ctx, const stall_iter_record *rec);
/* The run's parameters, before its first record (stall_run_opts.on_params). */
void stall_an_params(void *ctx, const stall_model_params *p);
/* The collected run (owned by the caller from now on; NULL when nothing
 * was recorded). */
stall_tidy_trace *stall_an_recorder_take(stall_an_recorder *r);

/* Storage and checkpoints per epoch (jobs/analyze_causes.c): fills io,
 * warm_epoch, storage_s, share_storage and epoch_time_s of a (after the
 * parts). */
void stall_analyze_causes(const stall_tidy_trace *t, stall_analysis *a);
/* storage.csv (when some source has io): one row per source and epoch. */
int stall_analysis_write_storage(const stall_analysis *a, const char *const *labels, int n,
                                 const char *dir, stall_err *err);
/* The terminal's per-epoch storage table of one source (nothing without io
 * or when no epoch's fetches were slower than the fastest epoch's by more
 * than their spread while the loop waited for data: storage_s = 0). */
void stall_analysis_print_storage(const stall_analysis *a, FILE *f);

/* Writes analyze.csv, per_rank.csv, per_worker.csv (and windows.csv,
 * slowest.csv) into dir: one row set per analysis, the first column naming
 * its source (labels[i], e.g. "measured", "simulated"). */
int stall_analysis_write(const stall_analysis *a, const char *const *labels, int n, const char *dir,
                         stall_err *err);

/* Refuses an analysis folder dir where a file an analysis writes
 * (per_rank.csv, ...) is one of cfg's inputs: it would be written over.
 * Returns 0 or STALL_EIO naming dir and the file. */
int stall_analysis_check_apart(const stall_config *cfg, const char *dir, stall_err *err);

/* The terminal report: the analyses side by side, then each verdict. */
void stall_analysis_print(const stall_analysis *a, const char *const *labels, int n, FILE *f);

/* `stallsim analyze TRACE_OR_CONFIG`: loads, analyses, writes into outdir
 * (NULL: results/analyze-<name>), prints to term (may be NULL). */
int stall_analyze_job(const char *trace_or_ini, const char *outdir, int workers, FILE *term,
                      stall_err *err);

/* `stallsim run --analyze`: runs cfg (mode = model) with the recorder on
 * its first fetch alignment, then writes the analysis of the simulated run
 * beside the measured one (when cfg has a trace, of any format analyze
 * reads, and the run is comparable with it: same GPUs, batches and
 * epochs, opts->comparable's rule; else the terminal says why it is left
 * out) into the result folder (validate: results/<name>-validate).
 * timeline (may be NULL) writes the simulated run's timeline too. */
int stall_run_observed(const stall_config *cfg, const stall_run_opts *opts, bool analyze,
                       bool validate, const char *timeline, const stall_tl_opts *tl,
                       stall_err *err);

#ifdef __cplusplus
}
#endif
#endif

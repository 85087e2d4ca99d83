/*
 * stall/results.h - the result folder format: what kind of result folder a
 * folder is (one rule, used by the jobs that write and replace folders and
 * by plot and report that read them), and the names of the files and
 * columns that writers and readers share.
 *
 * A reader looks a column up by the name defined here, and the writer
 * prints the same name, so that a change of format breaks the reader's
 * test (tests/test_plot.c runs the real commands) instead of leaving a
 * figure silently empty.
 */
#ifndef STALL_RESULTS_H
#define STALL_RESULTS_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum stall_result_kind {
    STALL_RESULT_NONE = 0,
    STALL_RESULT_RUN,      /* run, replay or model mode: summary.csv */
    STALL_RESULT_VALIDATE, /* validate.csv */
    STALL_RESULT_ANALYZE,  /* stallsim analyze: per_rank.csv only */
    STALL_RESULT_SWEEP,    /* sweep.csv */
    STALL_RESULT_PLAN,     /* scaling.csv (and plan.csv) */
    STALL_RESULT_SEED      /* run in seed mode: total_summary.csv, replay_summary.csv */
} stall_result_kind;

/* ---- files ---- */

/* Every job writes its manifest into its result folder: the marker that a
 * folder is a stallsim result (and may be replaced by a new run). */
#define STALL_RESULTS_MANIFEST "effective.ini"
#define STALL_RESULTS_SUMMARY "summary.csv"
#define STALL_RESULTS_SEED_SUMMARY "total_summary.csv"
#define STALL_RESULTS_REPLAY_SUMMARY "replay_summary.csv"
#define STALL_RESULTS_VALIDATE "validate.csv"
#define STALL_RESULTS_PER_RANK "per_rank.csv"
#define STALL_RESULTS_ANALYZE "analyze.csv"
#define STALL_RESULTS_SWEEP "sweep.csv"
#define STALL_RESULTS_SCALING "scaling.csv"
#define STALL_RESULTS_PLAN "plan.csv"
/* In each alignment's folder, fetch-<fa>_start-<sa>/ (printf format). */
#define STALL_RESULTS_ALIGN_DIR "fetch-%s_start-%s"
#define STALL_RESULTS_ITERATIONS "iterations.csv"
#define STALL_RESULTS_RANKS "ranks.csv"

/* ---- columns ---- */

/* iterations.csv: one row per iteration, aggregates over the ranks. */
#define STALL_COL_EPOCH "epoch"
#define STALL_COL_BATCH "batch"
#define STALL_COL_ITER_END "iter_end_s"
#define STALL_COL_ITERATION "iteration_s"
#define STALL_COL_STALL "stall_s"
#define STALL_COL_COMPUTE "compute_s"
#define STALL_ITERATIONS_HEADER                                                                    \
    STALL_COL_EPOCH "," STALL_COL_BATCH "," STALL_COL_ITER_END "," STALL_COL_ITERATION             \
                    "," STALL_COL_STALL ",delay_s,wait_max_s,wait_mean_s," STALL_COL_COMPUTE       \
                    ",fetch_spread_s,start_spread_s"

/* ranks.csv: the long table of per-rank stalls, one row per (iteration,
 * rank), in iteration order and rank order within it. */
#define STALL_COL_RANK "rank"
#define STALL_RANKS_HEADER                                                                         \
    STALL_COL_EPOCH "," STALL_COL_BATCH "," STALL_COL_RANK "," STALL_COL_STALL

/* summary.csv (run), replay_summary.csv (seed), and each row of sweep.csv
 * after the swept keys. */
#define STALL_COL_FETCH_ALIGN "fetch_align"
#define STALL_COL_START_ALIGN "start_align"
#define STALL_COL_EPOCH_TIME "epoch_time_s"
#define STALL_COL_MEASURED_EPOCH "measured_epoch_time_s"
/* Empty where the what-if changes GPUs, batches or epochs: the measured run
 * is then not comparable (docs/model.md 5), and no figure draws it. */
#define STALL_COL_VS_MEASURED "vs_measured_pct"
#define STALL_COL_THROUGHPUT_SAMPLES "throughput_samples_s"
#define STALL_COL_THROUGHPUT_BATCHES "throughput_batches_s"
#define STALL_COL_MEAN_ITERATION "mean_iteration_s"
#define STALL_COL_MEAN_STALL "mean_stall_s"
#define STALL_COL_STALL_SHARE "stall_share"

/* sweep.csv: point, then one column per swept key named section.key. */
#define STALL_COL_POINT "point"

/* validate.csv */
#define STALL_COL_MEASURED "measured_s"
#define STALL_COL_SIMULATED "simulated_s"
#define STALL_COL_MEASURED_STALL "measured_stall_s"
#define STALL_COL_SIMULATED_STALL "simulated_stall_s"

/* per_rank.csv: source (simulated, measured), rank, then the parts. */
#define STALL_COL_SOURCE "source"
#define STALL_PER_RANK_PARTS                                                                       \
    {                                                                                              \
        "startup_s", "data_s", "handover_s", "compute_s", "barrier_s", "post_s"                    \
    }
/* The checkpoint part (after post_s; empty where the source records no checkpoints inside
 * the epochs). */
#define STALL_COL_CHECKPOINT "checkpoint_s"

/* scaling.csv and plan.csv */
#define STALL_COL_GPUS "gpus"
#define STALL_COL_SPEEDUP "speedup"
#define STALL_COL_EFFICIENCY "efficiency"
#define STALL_COL_QUANTITY "quantity"
#define STALL_COL_VALUE "value"
#define STALL_PLAN_MAX_EFFICIENT "max_efficient_gpus"
/* plan.csv's header, as plan.c writes it (no newline). */
#define STALL_PLAN_HEADER                                                                          \
    "quantity,value,binding,simulations,gpu_hours_per_epoch,epoch_data,gpu_hours_per_base_epoch,"  \
    "gpus,stall_share"
/* plan.csv's row of the workers' answer: its gpus and stall_share are the
 * configuration's GPU count and the stall share there with the answer's
 * workers (binding not_met: the least stall share the plan found). */
#define STALL_PLAN_MIN_WORKERS "min_workers_per_gpu"

/* total_summary.csv (seed mode, the notebook's layout). */
#define STALL_COL_SEED_ALIGN "Align"
#define STALL_COL_SEED_ITERATION "Avg iteration time (sec)"
#define STALL_COL_SEED_STALL "Avg training stall time (sec)"

/* ---- the kind of a folder ---- */

/* The kind of result folder dir is, from its files, in this order of
 * precedence: sweep.csv, scaling.csv, validate.csv, summary.csv,
 * total_summary.csv (seed), per_rank.csv (analyze). STALL_RESULT_NONE when
 * none is there (or dir is no folder). Every folder a job writes has a kind
 * (tests/test_plot.c runs each). */
stall_result_kind stall_result_kind_of(const char *dir);
const char *stall_result_kind_name(stall_result_kind k);

/* True when dir may be replaced by a new result: it is empty, or holds the
 * manifest every job writes (STALL_RESULTS_MANIFEST). */
bool stall_result_replaceable(const char *dir);

/* True when dir/name is a regular file. */
bool stall_result_has(const char *dir, const char *name);

/* Whether dir holds a sweep's point folders (point-N, or their work
 * folders .point-N.tmp...) but no sweep.csv: a sweep that was interrupted
 * or stopped at a failing point, which the same command finishes. */
bool stall_result_unfinished_sweep(const char *dir);

#ifdef __cplusplus
}
#endif
#endif

/*
 * stall/config.h - scenarios as INI files.
 *
 * One table (config.c) lists every section and key with its type, default,
 * range and help text. The loader applies the defaults, then the file (via
 * inih), then command-line overrides (--set section.key=value), checking each
 * value against the table. Unknown keys and bad values are errors that name
 * file:line and the key. The same table prints the effective configuration
 * into every result folder and the key reference in --help.
 */
#ifndef STALL_CONFIG_H
#define STALL_CONFIG_H

#include <stdbool.h>
#include <stdio.h>

#include "stall/align.h"
#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STALL_PATH_MAX 1024
#define STALL_NAME_MAX 128
#define STALL_EXTRA_MAX 32 /* [sweep] and [plan] lines */

typedef enum stall_mode { STALL_MODE_REPLAY = 0, STALL_MODE_SEED, STALL_MODE_MODEL } stall_mode;
typedef enum stall_format {
    STALL_FORMAT_DSANALYZER = 0,
    STALL_FORMAT_TIDY,
    STALL_FORMAT_NONE,
    STALL_FORMAT_KINETO,  /* PyTorch profiler traces (stall/kineto.h): analyze, timeline */
    STALL_FORMAT_DFTRACER /* DLIO's dftracer traces (stall/dftracer.h): analyze, timeline */
} stall_format;
typedef enum stall_resample {
    STALL_RESAMPLE_NONE = 0,
    STALL_RESAMPLE_BOOTSTRAP,
    STALL_RESAMPLE_LOGNORMAL,
    STALL_RESAMPLE_GAMMA
} stall_resample;
/* [storage] layout: what each node's page cache sees of the dataset. */
typedef enum stall_layout { STALL_LAYOUT_REPLICATED = 0, STALL_LAYOUT_PARTITIONED } stall_layout;

/* [cluster] scaling: what a GPU count other than the trace's does. */
typedef enum stall_scaling { STALL_SCALING_STRONG = 0, STALL_SCALING_WEAK } stall_scaling;
typedef enum stall_dist_kind {
    STALL_DIST_LOGNORMAL = 0,
    STALL_DIST_GAMMA,
    STALL_DIST_NORMAL,
    STALL_DIST_CONSTANT
} stall_dist_kind;

/* A list of alignment policies; one run per combination of the two lists. */
typedef struct stall_align_list {
    int n;
    stall_align v[3];
} stall_align_list;

/* A duration given as a distribution (used when there is no trace). */
typedef struct stall_dist {
    int kind; /* stall_dist_kind */
    double mean_s;
    double sigma; /* lognormal: sd of log */
    double sd_s;  /* gamma, normal: sd in seconds */
    double scale; /* multiplies every duration (what-if speed factor) */
} stall_dist;

/* Every field has a default (see the table in config.c or `stallsim --help`).
 * Paths are absolute or relative to the INI file's folder once loaded. */
typedef struct stall_config {
    char ini_path[STALL_PATH_MAX]; /* the file loaded ("" when none) */
    char ini_dir[STALL_PATH_MAX];  /* its folder, for relative paths */
    /* the trace given in place of an INI (stall_config_load_any), as given;
     * "" otherwise */
    char trace_arg[STALL_PATH_MAX];

    /* [scenario] */
    char name[STALL_NAME_MAX];
    int mode; /* stall_mode */

    /* [trace] */
    int format; /* stall_format */
    char fetch[STALL_PATH_MAX], start[STALL_PATH_MAX], perf[STALL_PATH_MAX];
    char path[STALL_PATH_MAX]; /* tidy trace */
    int64_t epoch;             /* dsanalyzer: the epoch to replay */

    /* [align] */
    stall_align_list fetch_align, start_align;

    /* [report] */
    int64_t warmup;         /* leading batches of each epoch left out of means */
    double delay_threshold; /* s, for the effective-delay share */
    int64_t samples;        /* samples per batch per rank, for throughput; 0 = from trace */

    /* [replay] */
    int lag;            /* 1: replay the measured arrival lag after fetch end */
    double stall_floor; /* s: measured stalls above this were waiting for data */

    /* [loader] */
    int64_t workers, prefetch_factor;
    bool in_order, persistent_workers;
    bool drop_last; /* the last incomplete batch of a rank is dropped */
    double pin_memory_s, startup_s, handover_s;

    /* [cluster] */
    int64_t gpus, gpus_per_node, cores;
    int scaling;          /* stall_scaling */
    double cpu_waits_out; /* share of a trace's measured waits for a core taken out; -1: fitted */

    /* [fetch] */
    double cpu_share;
    int resample; /* stall_resample */
    stall_dist fetch_dist;

    /* [compute] */
    double compute_cpu_share; /* fraction of compute that is host CPU work */
    stall_dist compute_dist;

    /* [storage] */
    double bandwidth_mb_s, batch_mb;
    /* [storage], the tier model (models/storage.c): on when one of these is given */
    double global_mb_s, latency_ms, requests_per_batch, cache_mb, dataset_mb, cached_start_mb;
    double trace_cache_mb; /* the measured run's cache (given: the measured read is fitted) */
    double trace_mb_s, trace_latency_ms; /* the storage the measured run read from */
    int layout;                          /* stall_layout */
    int latency_dist;                    /* 0 exponential, 1 constant: a miss's latency_ms */
    int queue;       /* 0 fair (max-min fluid), 1 fifo: how the store serves transfers */
    double admit_ms; /* per request admitted to the cache: its write, a delay */

    /* [ddp] */
    double allreduce_s, bucket_mb, bandwidth_gb_s, latency_us;
    int64_t accumulation; /* iterations per gradient synchronisation */

    /* [run] */
    int64_t batches, epochs, seed;

    /* [trace], the measured run's loader when the trace does not record it */
    int64_t trace_workers;  /* -1: infer from the fetch starts */
    int64_t trace_prefetch; /* 0: PyTorch's default 2 */
    bool trace_persistent;  /* the measured run's persistent_workers */
    int64_t trace_cores;    /* the capture machine's cores per node (0: meta.json, else cores) */

    /* [report] per_rank: 0 auto (up to STALL_PER_RANK_AUTO ranks), 1 true, 2 false */
    int per_rank;

    /* [run] replications: runs with seeds seed .. seed + N - 1 */
    int64_t replications;

    /* [checkpoint] (stall/ckpt.h) */
    int64_t ckpt_every;
    double ckpt_every_s, ckpt_mb, ckpt_mb_s, ckpt_snapshot_mb_s;
    int ckpt_mode;             /* 0 sync, 1 async, 2 off */
    int ckpt_target;           /* 0 local (bandwidth_mb_s), 1 store (the storage tiers' link) */
    double ckpt_first_extra_s; /* the run's first checkpoint's extra write time */

    /* [ranks] and [straggler] (stall/ckpt.h) */
    int64_t slow_ranks;
    int slow_unit;  /* 0 rank, 1 node */
    int late_start; /* 0 trace (each rank begins the trace's epochs as late as it did), 1 none */
    double slow_compute_factor, slow_fetch_factor;
    double straggler_fraction, straggler_factor;
    int64_t straggler_iters;

    /* Which keys were set explicitly, by table index: 0 no, 1 in the INI
     * file (at given_line), 2 with --set, 3 a sweep axis (--sweep when
     * given_line is 0, else the file's [sweep] line): stall_config_swept. */
    unsigned char given[96];

    /* [sweep] and [plan] lines (and --sweep), kept as text in the order
     * given for `stallsim sweep` and `stallsim plan` to parse (sweep.h,
     * plan.h). They are not scenario keys: stall_config_check refuses a
     * configuration that still holds any, as `stallsim run` would ignore
     * them; sweep and plan take them out first. */
    int nextra;
    struct stall_config_extra {
        char section[8];   /* "sweep" or "plan" */
        char key[64];      /* e.g. "loader.workers", "zip", "stall_target" */
        char value[256];   /* as written */
        bool command_line; /* from --sweep or --set: paths relative to the current folder */
        int line;          /* the INI line (0: command line or unknown), for messages */
    } extra[STALL_EXTRA_MAX];
    int given_line[96];

    /* The --set overrides, for the default result folder's name
     * (stall_config_set_tag): "+section.key=value" each, outside
     * [A-Za-z0-9._=-] written '_', while it fits; set_len is the whole
     * tag's length and set_sha a SHA-256 chained over every override. */
    char set_tag[97];
    size_t set_len;
    char set_sha[65];
    /* The same overrides whole, for effective.ini's "; set" lines and the
     * figures' titles, which the folder's name cuts: "section.key=value\n"
     * each as given (a control character written '_'), while they fit;
     * set_more counts those that did not. */
    char set_list[1024];
    int set_more;
} stall_config;

/* Fills cfg with the defaults. */
void stall_config_defaults(stall_config *cfg);

/* Loads an INI file over the defaults. Returns 0, STALL_EIO (cannot open) or
 * STALL_ECONFIG with err naming "file:line: [section] key: problem". */
int stall_config_load(stall_config *cfg, const char *ini_path, stall_err *err);

/* Loads path as a scenario: an INI (stall_config_load), or a trace file
 * whose format is detected from its content (stall/detect.h): a tidy trace
 * or one of the notebook's CSVs with its companions beside it, replayed
 * under the defaults, the scenario named after the file. note (n bytes)
 * gets one line saying what was detected and what was assumed (the measured
 * loader's workers and prefetch factor); "" for an INI. Returns 0 or an
 * error code with err naming the file. */
int stall_config_load_any(stall_config *cfg, const char *path, char *note, size_t n,
                          stall_err *err);

/* What a command takes of the measured loader that a trace given in place
 * of an INI does not record, for the note of stall_config_load_any. */
typedef enum stall_note_use {
    STALL_NOTE_LOADER,  /* its workers and prefetch factor ([trace] keys or --set): validate,
                           mode = model, plan, a sweep of what-if keys */
    STALL_NOTE_WORKERS, /* its workers alone, from --workers: analyze, timeline */
    STALL_NOTE_REPLAY   /* neither: run (or sweep) in mode = replay or seed replays the
                           measured times */
} stall_note_use;

/* Rewords note (n bytes, as stall_config_load_any wrote it) for use: what
 * it says was assumed, and how to say otherwise, are what the command
 * takes (workers > 0: the count --workers gave). A note that assumes
 * nothing (an INI, a Kineto or dftracer trace) is left as it is. */
void stall_config_note_for(char *note, size_t n, stall_note_use use, int workers);

/* Applies one "section.key=value" override (paths relative to the current
 * folder); plan.key=value and sweep.section.key=LIST are kept as [plan] and
 * [sweep] lines (stall_config_extra_add). Returns 0 or STALL_ECONFIG naming
 * the override. */
int stall_config_set(stall_config *cfg, const char *assignment, stall_err *err);

/* The --set overrides as a folder-name tag ("" when none), n >= 97 bytes:
 * "+fetch.resample=bootstrap+cluster.gpus=8", so that what-ifs of one
 * scenario do not replace each other's results. A tag longer than 96
 * characters keeps its first 83 and "+" and 12 hex digits of set_sha. */
void stall_config_set_tag(const stall_config *cfg, char *buf, size_t n);

/* Sets one key from text, as the file would. where names the origin for
 * messages ("file:line" or "--set"). */
int stall_config_apply(stall_config *cfg, const char *section, const char *key, const char *value,
                       const char *where, stall_err *err);

/* Reads text (blanks around it allowed) as the loader reads a number key:
 * decimal only (digits, a point, an exponent: no hexadecimal, inf or nan),
 * finite, and 0 or at least DBL_MIN (2.2e-308) in magnitude. Returns 0 with
 * *out set, or with why (n bytes) saying what is wrong, for messages "where:
 * why": -2 for a number beyond the largest double, -1 for anything else. */
int stall_config_number(const char *text, double *out, char *why, size_t n);

/* Cross-key checks for the chosen mode (e.g. trace files given, 0 workers
 * with an explicit prefetch factor). Returns 0 or STALL_ECONFIG. */
int stall_config_check(const stall_config *cfg, stall_err *err);

/* Keeps one [sweep] or [plan] line (section "sweep" or "plan") for sweep.c
 * and plan.c. Returns 0 or STALL_ECONFIG naming `where` (too many lines, a
 * value too long). */
int stall_config_extra_add(stall_config *cfg, const char *section, const char *key,
                           const char *value, bool command_line, const char *where, stall_err *err);

/* Where cfg came from, for messages: the INI file loaded, else the trace
 * given in its place (trace_arg), else "config" (defaults and --set). */
const char *stall_config_src(const stall_config *cfg);

/* Where section.key was set, for messages: "--set section.key",
 * "file:line: [section] key", or "file: [section] key" when not given;
 * the trace's path alone for a key that a trace given in place of an INI
 * set (its format, its files). */
void stall_config_origin(const stall_config *cfg, const char *section, const char *key, char *buf,
                         size_t n);

/* True when section.key has an effect in cfg's mode and trace format
 * (stall_config_check refuses a key given where it has none). */
bool stall_config_applies(const stall_config *cfg, const char *section, const char *key);

/* True when a key given with --set, or a [sweep] axis, applies only in
 * mode = model while cfg is a replay or seed scenario (sweep then runs it
 * as a model, stall_config_as_model). */
bool stall_config_wants_model(const stall_config *cfg);

/* plan, and a sweep of what-if keys, on a replay or seed scenario: its
 * trace becomes the input of mode = model; the file's keys of the replay
 * that cannot apply to the model ([align] lists, [replay]) are left out,
 * and note (n bytes) gets one line saying so ("" when nothing changed).
 * Keys given with --set are kept, for stall_config_check to refuse with
 * their fix. Also when the mode itself came from --set. Returns 0 or
 * STALL_ECONFIG. */
int stall_config_as_model(stall_config *cfg, const char *command, char *note, size_t n,
                          stall_err *err);

/* The part of stall_config_check that refuses a [trace] key given for
 * another trace format ([trace] epoch with format = kineto), for analyze
 * and timeline, which read the trace whatever the mode. Returns 0 or
 * STALL_ECONFIG, with the message stall_config_check gives. */
int stall_config_check_trace_keys(const stall_config *cfg, stall_err *err);

/* Lists the keys given explicitly in any of `sections` (NULL-terminated:
 * "section" names all its keys, "section.key" one) as "[section] key, ..."
 * into buf (truncated to n); returns their count. */
size_t stall_config_list_given(const stall_config *cfg, const char *const *sections, char *buf,
                               size_t n);

/* stall_config_list_given, then puts those keys back to their defaults
 * and not given (for jobs that leave them out, such as validate). */
size_t stall_config_drop(stall_config *cfg, const char *const *sections, char *buf, size_t n);

/* Whether a key of the storage tier model ([storage] global_mb_s, latency_ms,
 * requests_per_batch, cache_mb, dataset_mb, layout, cached_start_mb, trace_cache_mb,
 * trace_mb_s, trace_latency_ms) was
 * given: the tier model is on (docs/model.md 2.3). */
bool stall_config_tiers(const stall_config *cfg);

/* True when section.key was set explicitly. */
bool stall_config_given(const stall_config *cfg, const char *section, const char *key);
/* How section.key was set: 0 not (or no such key), 1 in the INI file, 2
 * with --set. */
int stall_config_given_how(const stall_config *cfg, const char *section, const char *key);

/* A scenario name from a trace's path: the file's stem (.csv dropped), or
 * its folder's name for a file called trace.csv; characters other than
 * letters, digits, '.', '-' and '_' become '_'. run names a trace given in
 * place of an INI so, analyze its result folder. */
void stall_config_name_from_path(const char *path, char *name, size_t n);

/* Marks section.key, just applied from a sweep axis, as the axis's value:
 * messages then name "--sweep section.key" (line 0) or the file's [sweep]
 * line (-1: the file's, line unknown), not the file's [section]. */
void stall_config_swept(stall_config *cfg, const char *section, const char *key, int line);

/* The keys of [plan], the questions of `stallsim plan` (NULL-terminated). */
extern const char *const stall_plan_keys[];

/* " (did you mean KEY?)" for a misspelt key of [plan] (section "plan"), or
 * "" when key is one of them or none is near. */
void stall_config_extra_suggest(const char *section, const char *key, char *buf, size_t n);

/* Writes the effective configuration as INI text: every key, resolved; the
 * keys that were not given (defaults) as comments, so that loading the text
 * gives the same configuration, given flags included.
 * Paths are written relative to base_dir, the directory the text will be
 * loaded from (see stall_path_relative), or as stored when base_dir is
 * NULL. */
void stall_config_write(const stall_config *cfg, const char *base_dir, FILE *f);

/* Checks that the effective configuration written relative to base_dir
 * (stall_config_write) loads back to the same text and given keys. Returns
 * 0 or STALL_ECONFIG naming the line that would not read back (a value
 * holding an INI comment, a line past inih's length limit, ...). */
int stall_config_roundtrip(const stall_config *cfg, const char *base_dir, stall_err *err);

/* Writes the key reference (section, key, default, help) for --help. */
void stall_config_help(FILE *f);

#ifdef __cplusplus
}
#endif
#endif

/*
 * feed.h - feeding the closed-loop model (models/model.c) from a measured
 * run or from distributions: duration tables, model parameters, the row
 * collector, and the simulation of a trace under CPU contention. Private to
 * jobs/: mode = model, validate and calibrate (and later sweep and plan)
 * share it.
 *
 * Durations are laid out in tables before the run, drawn in a fixed (epoch,
 * rank, batch) order from one GSL generator seeded by [run] seed, so a run is
 * a pure function of its configuration, whatever the thread count. Cells the
 * trace measured are replayed as measured; cells beyond it (more ranks,
 * batches or epochs than measured) are resampled as [fetch] resample says.
 * Memory: O(epochs x ranks x batches) int64 for the tables, except where
 * the cells beyond a trace are resampled with bootstrap and its rows are
 * long: those are drawn as the run asks for them (lazy.c), O(epochs x
 * ranks) generator states and windows.
 */
#ifndef STALL_JOBS_FEED_H
#define STALL_JOBS_FEED_H

#include <gsl/gsl_rng.h>
#include <stdbool.h>
#include <stdio.h>

#include "inputs.h"
#include "stall/measured.h"
#include "stall/model.h"
#include "stall/report.h"

/* Duration tables [(e * g + r) * n + k], [e * n + k] and [e]; ns. compute
 * is NULL when every cell is compute_ns (a constant drawn without a
 * trace). */
typedef struct wi_tables {
    int g, ne;
    int64_t n;
    stall_time *fetch, *compute, *tail, *gap;
    stall_time *late; /* [e * g + r] a rank's late start (the trace's, at its own ranks); NULL:
                         none */
    stall_time compute_ns;
    struct wi_ovl *ovl;   /* fetch and compute still being filled (fill.c), or NULL */
    struct wi_lazy *lazy; /* not NULL: fetch and compute are NULL and drawn as asked (lazy.c) */
} wi_tables;

/* A cell of the tables, wherever it is kept (w->fetch and w->compute may
 * be NULL: drawn as asked, w->lazy). Not for two threads on one rank. */
stall_time wi_tables_fetch(const wi_tables *w, int e, int r, int64_t k);
stall_time wi_tables_compute(const wi_tables *w, int e, int r, int64_t k);

/* Frees the tables (a fill under way stopped and its threads joined). */
void wi_tables_free(wi_tables *w);

/* What a what-if does to a measured duration: the [fetch] and [compute]
 * speed factors, and the [ddp] all-reduce that replaces the measured tail
 * when configured. wi_tables_build applies it to the measured cells, and
 * stream.h to the durations it feeds, with the same functions. */
typedef struct wi_xform {
    double fscale, cscale;
    stall_time ddp;    /* -1: the measured tail; -2: the ring all-reduce is past the limit */
    stall_time unturn; /* taken off every fetch: the measured workers' turnaround when the
                          what-if loads in the main process (workers = 0) */
    bool no_late;      /* the ranks begin every epoch together ([ranks] late_start = none) */
} wi_xform;

#define WI_XFORM_NONE ((wi_xform){.fscale = 1.0, .cscale = 1.0, .ddp = -1})

/* The what-if's transform for a run of g ranks (whatif false: none). */
wi_xform wi_xform_make(const wi_whatif *what, int g, bool whatif);

/* workers = 0 from a trace taken with workers: PyTorch's single-process
 * iterator fetches inline, so the workers' turnaround (result queue,
 * pickling) measured into every fetch comes off (x->unturn). */
void wi_xform_inline(wi_xform *x, const wi_whatif *what, const stall_measured *m, bool whatif);

/* The what-if loads in the main process from a trace taken with workers. */
bool wi_inline_from_workers(const wi_whatif *what, const stall_measured *m, bool whatif);
/* Whether a what-if's worker start-up is the trace's scaled by the worker
 * processes a node starts (docs/model.md 2.4): then *from and *to are the
 * trace's and the what-if's (ranks per node x workers). */
bool wi_startup_scaled(const wi_whatif *what, const stall_measured *m, bool whatif,
                       const stall_model_params *p, int *from, int *to);
/* 0, or the error for a [ddp] all-reduce past the limit (ddp == -2). */
int wi_xform_check(const wi_whatif *what, const wi_xform *x, int g, stall_err *err);
/* A measured duration transformed; a negative v (a feed's error) unchanged. */
stall_time wi_xform_fetch(const wi_xform *x, stall_time v);
stall_time wi_xform_compute(const wi_xform *x, stall_time v);
stall_time wi_xform_tail(const wi_xform *x, stall_time v);

/* 0, or the error for a run whose rank 0 computes (compute plus tails,
 * span ns) past the engine's horizon, refused before any output. */
int wi_horizon_check(const wi_whatif *what, double span, stall_err *err);

/* How a run holds its duration tables, for its memory check. */
typedef enum wi_store {
    WI_STORE_NONE,  /* none: a streamed trace */
    WI_STORE_WHOLE, /* the fetch and compute tables, every cell */
    WI_STORE_LAZY   /* the cells beyond the trace drawn as asked (lazy.c) */
} wi_store;

/* The memory check of a run whose tables are held as `store` says, lazy
 * bytes beside them for WI_STORE_LAZY (memcheck.c). */
int wi_mem_check_as(const wi_whatif *what, int g, int ne, int64_t n, wi_store store, size_t lazy,
                    stall_err *err);
/* Refuses (STALL_ECONFIG, naming the run and the keys that size it) a run
 * of g ranks x ne epochs x n batches whose estimated memory exceeds the
 * machine's: with whole tables (the duration tables) or without (a
 * streamed trace), and what->observed's records. */
int wi_mem_check(const wi_whatif *what, int g, int ne, int64_t n, bool tables, stall_err *err);
/* Refuses (STALL_ECONFIG, naming the run, the size, the free space and
 * the keys that shrink it) a run whose per-iteration files, in dir, cannot
 * fit even at their smallest rows: iterations.csv (and ranks.csv where
 * ranks_csv) for each of alignments fetch alignments (memcheck.c). */
int wi_disk_check(const wi_whatif *what, const char *dir, int g, int ne, int64_t n, bool ranks_csv,
                  int alignments, stall_err *err);
/* The check wi_tables_build_l makes (lazy as there) for the tables of g x
 * ne x n over trace m (may be NULL): the cells it draws as asked counted
 * as lazy.c holds them (wi_lazy_bytes), not as tables. */
int wi_tables_mem_check(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                        int lazy, stall_err *err);
/* Builds the tables for g ranks x ne epochs x n batches: from m where it
 * measured the cell (scaled by the what-if speed factors when whatif),
 * resampled beyond it, drawn from the what-if's distributions without m. */
int wi_tables_build(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                    bool whatif, wi_tables *w, stall_err *err);
/* The same tables, drawn on up to `threads` threads (fill.c) when they are
 * drawn without a trace; the values do not depend on threads. Where no
 * drawn cell can fail and the tables are large, w->fetch and w->compute may
 * still be being filled on return (w->ovl): wi_run's model waits for the
 * cells it asks for; any other reader calls wi_tables_finish first. */
int wi_tables_build_j(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                      bool whatif, int threads, wi_tables *w, stall_err *err);
/* The same with the overlap forced (ovl 1: wherever no cell can fail, at
 * any size), never (0) or as wi_tables_build_j chooses (-1); for tests. */
int wi_tables_build_x(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                      bool whatif, int threads, int ovl, wi_tables *w, stall_err *err);

/* The same choosing whether cells beyond the trace resampled with
 * bootstrap are drawn as the run asks for them (lazy.c): lazy 1 wherever
 * they can be, 0 never, -1 where rows are long (WI_LAZY_BATCHES); for
 * tests. The values are the same either way. */
int wi_tables_build_l(const wi_whatif *what, const stall_measured *m, int g, int ne, int64_t n,
                      bool whatif, int threads, int ovl, int lazy, wi_tables *w, stall_err *err);

/* lazy.c: the cells of g ranks x ne epochs x n batches beyond trace m,
 * resampled with bootstrap from the pools pf and pc (npool each), drawn as
 * asked with the values wi_tables_build's serial loop gives them (x
 * applied, charged by lb, mlast and lnum as it charges them). wi_lazy_new
 * advances rng past every drawn cell, as that loop does, and copies what it
 * needs of m and the pools. A row (epoch and rank) is asked by one thread
 * at a time. */
typedef struct wi_lazy wi_lazy;
typedef struct wi_lazy_src {
    const stall_measured *m;
    const stall_time *pf, *pc;
    size_t npool;
    wi_xform x;
    int g, ne;
    int64_t n, lb, mlast, lnum;
} wi_lazy_src;
wi_lazy *wi_lazy_new(const wi_lazy_src *s, gsl_rng *rng);
/* The bytes wi_lazy_new and the rows' first windows take for g ranks x ne
 * epochs over a trace of mcells cells, with its own copy of the pools
 * (npool each) where own_pools (they are not the trace's): two generator
 * states and a window of 512 cells per row (a window grows only to the
 * batches the model has in flight). SIZE_MAX on overflow. */
size_t wi_lazy_bytes(int g, int ne, size_t mcells, size_t npool, bool own_pools);
stall_time wi_lazy_fetch(wi_lazy *z, int e, int r, int64_t k);
stall_time wi_lazy_compute(wi_lazy *z, int e, int r, int64_t k);
void wi_lazy_free(wi_lazy *z); /* NULL-safe */
/* v x num / den rounded to nearest (v unchanged when num == den, v < 0 or
 * den < 1): a duration charged by the samples of its batch. */
stall_time wi_part(stall_time v, int64_t num, int64_t den);

/* fill.c: the drawn tables (no trace): whether rng and the two draws allow
 * it, and the fill of w->fetch and w->compute (NULL: the constant cd->ns)
 * with the values of wi_tables_build's serial loop, x applied. Returns the
 * first cell whose draw failed (its fetch and compute left as drawn, not
 * transformed), or SIZE_MAX. */
struct wi_draw;
bool wi_tables_fill_on(const gsl_rng *rng, const struct wi_draw *fd, const struct wi_draw *cd);
size_t wi_tables_fill(wi_tables *w, gsl_rng *rng, const struct wi_draw *fd,
                      const struct wi_draw *cd, const wi_xform *x, int threads);
/* The fill overlapped with the run: whether no cell of the two draws can
 * fail; the start (on threads - 1 >= 1 helper threads, taking rng), after
 * which w->ovl is set; the wait for every cell of epochs before e and of
 * batches <= k of epoch e (the run's thread only); the wait for all of
 * them, the helpers joined and w->ovl NULL; and the end without waiting
 * (the tables' values then undefined), for freeing. */
bool wi_tables_ovl_on(const struct wi_draw *fd, const struct wi_draw *cd);
void wi_tables_ovl_start(wi_tables *w, gsl_rng *rng, const struct wi_draw *fd,
                         const struct wi_draw *cd, const wi_xform *x, int threads);
void wi_tables_ready(wi_tables *w, int e, int64_t k);
void wi_tables_finish(wi_tables *w);
void wi_tables_abandon(wi_tables *w);

/* What a run collects per iteration: report rows, per-epoch times and the
 * mean simulated fetch. */
typedef struct wi_collect {
    double fetch_sum; /* sum of simulated E - S over the batches taken */
    int64_t fetch_n;
    stall_report *rep;
    int ranks;
    double *compute_s; /* scratch */
    double epoch_stall_sum;
    double *epoch_s, *stall_s; /* per epoch, simulated */
    int64_t batches;
    struct wi_ckstats *ck; /* checkpoint figures per epoch (may be NULL) */
    stall_iter_fn hook;    /* an observer of every iteration (may be NULL) */
    void *hook_ctx;
    const stall_durations *d; /* the run's (wi_run_with sets it): the hook's records of batch 0
                                 carry each rank's start (rank_start) where ranks start late */
    stall_time *rank_start;   /* scratch [ranks] for them */
} wi_collect;

int wi_run(const stall_model_params *p, wi_tables *w, wi_collect *c, stall_model_stats *st,
           stall_err *err);
/* The same with durations from elsewhere (stream.h's window). */
int wi_run_with(const stall_model_params *p, const stall_durations *d, wi_collect *c,
                stall_model_stats *st, stall_err *err);

/* Loads and decomposes the trace; the rows are freed once decomposed. */
int wi_load_measured(const wi_trace_src *src, stall_measured *m, stall_err *err);

/* Samples per batch per rank: the trace's, else [report] samples, else 1
 * (then L counts batches). */
int64_t wi_batch_samples(const wi_whatif *what, const stall_measured *m);

/* L, the trace's dataset in samples: its batches per rank x its ranks x
 * samples per batch, its last batch counted by its recorded samples
 * (batches when the trace does not say). */
int64_t wi_dataset_samples(const wi_whatif *what, const stall_measured *m);

/* Strong scaling (docs/model.md 2.4): the batches per rank when a dataset
 * of l samples is split over g ranks as DistributedSampler does:
 * ceil(L / g) samples per rank, batches of b, the last one dropped when
 * incomplete and drop_last. */
int64_t wi_strong_batches(int64_t l, int g, int64_t b, bool drop_last);

/* Samples in each rank's last batch of an epoch of the run (g ranks, n
 * batches): under strong scaling what the split leaves it; else the
 * trace's own last batch when n is the trace's, else a full batch. */
int64_t wi_last_samples(const wi_whatif *what, const stall_measured *m, int g, int64_t n,
                        bool whatif);

/* Model parameters: the measured configuration, then the INI's explicit
 * what-if keys on top (when whatif); with a trace, [cluster] scaling =
 * strong and no [run] batches, the batches per rank of wi_strong_batches. */
void wi_params(const wi_whatif *what, const stall_measured *m, bool whatif, stall_model_params *p);
/* The storage tiers of the what-if into p (tiers.c): p->storage from the
 * [storage] keys and the trace's measured reads (m may be NULL). */
void wi_tiers(const wi_whatif *what, const stall_measured *m, stall_model_params *p);
/* The measured run's grid (ranks, node size, batches, epochs) and cache
 * (trace_cache_mb) into s's fit fields, whose miss shares per epoch
 * stall_storage_fit_misses then gives. */
void wi_tiers_fit_grid(const wi_whatif *what, const stall_measured *m, stall_storage *s);
/* The measured read of a trace whose run's storage is known ([storage]
 * trace_mb_s, trace_latency_ms; tierfit.c): rho, the read of a fetch that
 * misses everything, for which the trace's own run simulated at that
 * storage (its cache trace_cache_mb, started cold) gives the measured mean
 * fetch back; -1 where even every read taken out leaves it longer (that
 * storage is slower than the run read). whole_s and emptied_s: that run's
 * mean fetch with nothing and with everything taken out. */
struct wi_feed;
typedef struct wi_store_fit {
    bool on;
    double rho;
    double mb_s, latency_ms, cache_mb; /* the trace's storage */
    double meas_s, whole_s, emptied_s;
} wi_store_fit;
/* Finds it (bisection, up to 18 simulations of the trace's run, from f
 * when the trace is streamed, else from m's tables; kept per process for
 * the same trace and storage). */
int wi_store_fit_find(const wi_whatif *what, const stall_measured *m, const struct wi_feed *f,
                      wi_store_fit *fit, stall_err *err);
/* Puts it into p's storage: the trace's miss shares and fit->rho. */
void wi_store_fit_apply(const wi_whatif *what, const stall_measured *m, const wi_store_fit *fit,
                        stall_model_params *p);
/* Whether an explicit [storage] trace_cache_mb changes nothing (its fit
 * leaves the read unknown: every epoch of the trace's run misses alike, or
 * the trace has one epoch); why into why. */
bool wi_tiers_fit_none(const wi_whatif *what, const stall_measured *m, const stall_model_params *p,
                       char *why, size_t n);
/* What the terminal says about them. */
void wi_tiers_say(FILE *f, const stall_model_params *p, const stall_measured *m,
                  const wi_store_fit *store);
/* The warning for a trace whose reads nothing tells from its fetches (one
 * epoch, or epochs that read alike) with its fix, one line without a
 * newline into buf, for run (wi_tiers_say) and plan alike; where follows
 * "counts twice" (plan: " in every answer above"). snprintf's return. */
int wi_tiers_twice_text(char *buf, size_t n, bool one_epoch, const char *where);
/* The trace's CPU columns into a what-if's parameters (cpudemand.c): cores,
 * shares, waits and the hand-over's and tail's CPU work, each unless the INI
 * gives it. True when the trace's CPU time is used (no deflation then). */
bool wi_cpu_trace(const wi_whatif *what, const stall_measured *m, bool whatif,
                  stall_model_params *p);
/* How much of the trace's measured waits for a core comes out of its
 * durations (docs/model.md 2.3, "The waits taken out"): the share `out` in
 * [0, 1] with which the trace's own configuration, simulated as `stallsim
 * run` of the trace simulates it, gives its measured mean epoch back
 * (bisection; the simulated epoch falls as more comes out). `all` is that
 * simulation's error with every wait taken out (out = 1), `none` with
 * none (out = 0), as fractions of the measured epoch. */
typedef struct wi_cpu_fit {
    double out, all, none;
    bool given; /* out from [cluster] cpu_waits_out, not fitted (all, none unset) */
} wi_cpu_fit;
int wi_cpu_waits_fit(const stall_measured *m, wi_cpu_fit *fit, stall_err *err);
/* The waits of p's CPU demand (from wi_cpu_trace) scaled by `out`. */
void wi_cpu_waits_scale(stall_model_params *p, double out);

/* p's start-up: trace m's x the worker processes per node (docs/model.md
 * 2.4: they start one after another). */
void wi_startup_apply(const stall_measured *m, stall_model_params *p);

/* ---- CPU contention (jobs/deflate.c) ---- */

/* How a job uses the host CPU: cores per node, ranks per node, and the
 * fraction of a measured fetch and of a measured compute that is CPU work. */
typedef struct wi_cpu {
    int cores, gpn;
    double fetch_share, compute_share;
} wi_cpu;

/* Runs trace `base` with `workers` under the CPU model *cpu, its CPU parts
 * multiplied by `deflate`. Mean epoch and mean simulated fetch time. */
int wi_sim(const stall_measured *base, int workers, const wi_cpu *cpu, double deflate,
           double *epoch_s, double *fetch_s, stall_err *err);

/* The cores per node of the machine trace cfg was captured on, under which
 * its durations' contention is found: [trace] cores, else a capture
 * folder's meta.json cpu_cores (*from says which), else `cores`, the run's
 * own (*from NULL: not known); -1 (err set) for a meta.json that is there
 * but damaged. */
int wi_trace_cores(const stall_config *cfg, int cores, const char **from, stall_err *err);
/* meta.json's cpu_cores beside a tidy trace (a capture folder), 0 when it
 * has none, -1 (err set) when the file is there but damaged. */
int wi_meta_cores(const char *trace, stall_err *err);

/* The contention the trace's CPU work met, as the deflate in (0, 1] that
 * gives the measured mean fetch time back in a simulation of its own run. */
int wi_deflate(const stall_measured *base, const wi_cpu *cpu, double *deflate, stall_err *err);

/* Durations from elsewhere than the tables (stream.h's window): open fills
 * *d for a run of p as measured, error gives the error a callback met
 * (0: none); span is what wi_tables_build's horizon check would sum. */
typedef struct wi_feed {
    int (*open)(void *ctx, const stall_model_params *p, stall_durations *d, stall_err *err);
    int (*error)(void *ctx, stall_err *err);
    double span;
    void *ctx;
} wi_feed;

/* wi_deflate with base's durations from f (base without per-cell arrays):
 * each simulation of the bisection, up to 16, opens f once more. */
int wi_deflate_fed(const stall_measured *base, const wi_feed *f, const wi_cpu *cpu, double *deflate,
                   stall_err *err);

/* One simulation of p, its durations from f (a streamed trace) or else
 * from w: the mean epoch and the mean simulated fetch (E - S), s (either
 * may be NULL). */
int wi_sim_params(const stall_model_params *p, wi_tables *w, const wi_feed *f, double *epoch_s,
                  double *fetch_s, stall_err *err);

/* 64-bit FNV-1a of n bytes at v, continuing h (start: 14695981039346656037):
 * the fingerprints under which a fit is kept per process (cpudemand.c,
 * tierfit.c). */
uint64_t wi_fnv(uint64_t h, const void *v, size_t n);

/* Simulated mean epoch time of trace `base` run with `workers`. */
int wi_predict(const stall_measured *base, int workers, const wi_cpu *cpu, double *epoch_s,
               stall_err *err);

#endif

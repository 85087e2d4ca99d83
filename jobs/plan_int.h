/*
 * plan_int.h - what plan.c shares with its storage-tier questions
 * (plan_tiers.c). Private to jobs/.
 */
#ifndef STALL_JOBS_PLAN_INT_H
#define STALL_JOBS_PLAN_INT_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include "stall/config.h"
#include "stall/job.h"
#include "stall/measured.h"
#include "stall/plan.h"
#include "stall/progress.h"

typedef struct plan_ctx {
    stall_config base; /* the configuration, without [plan] lines */
    const char *src;
    int *sims; /* the counter of the answer being searched */
    /* The last run's parameters as the model took them (a trace's bytes
     * column, hand-over, start-up: what the INI leaves at 0), for the
     * answers' reasons. */
    bool have_eff;
    double eff_batch_mb, eff_storage_mb_s, eff_per_batch_s, eff_startup_s;
    int eff_workers; /* the workers eff_startup_s was taken at */
    int64_t eff_batches;
    /* storage-tier requests one rank simulates in a run (batches x epochs x
     * requests per batch; 0 without the tiers): the cost of a run grows
     * with this times the GPUs */
    double eff_tier_requests;
    int eff_ranks, eff_gpn; /* the last run's GPUs and GPUs per node */
    double base_amount;     /* samples (else batches) in one epoch of the planned configuration:
                               the unit of an answer's epoch data */
    /* What the trace records (false without one): checkpoints (tidy
     * ckpt_* columns, written where no interval is given) and CPU time
     * (tidy cpu_* columns, which give the fetches' CPU share). */
    bool trace_ckpt, trace_cpu;
    /* Where no worker count meets the stall target: the stall floor found
     * (empty: none) and the bytes per batch and bandwidth the runs took,
     * for the reason, which names the storage and the cores only where
     * their answers bind (plan.c, plan_workers_why). */
    char why_floor[512];
    double why_mb, why_mb_s;
    /* A run whose storage tiers kept the trace's fetches whole (its epochs
     * read alike, or one epoch, and no trace storage given): their cold
     * reads count twice (docs/model.md 2.3); 0: none seen, else the trace's
     * epochs */
    int reads_twice_epochs;
    stall_trace_memo *memo; /* the trace, read once for every probe (memo.h) */
    /* The progress line (stderr on a terminal; stall_plan_run): the
     * simulations made so far and the time since the plan began. */
    stall_progress prog;
    struct timespec t0;
    int total_sims;
} plan_ctx;

typedef struct plan_probe {
    double thr; /* batches per second, all GPUs */
    double samples_s;
    double stall;   /* stall share */
    double epoch_s; /* mean epoch time */
} plan_probe;

/* One in-memory run of cfg, counted in *c->sims. */
int plan_sim(plan_ctx *c, const stall_config *cfg, plan_probe *out, stall_err *err);
/* stall_plan_compute with a progress line on progress (NULL: none). */
int plan_compute(const stall_config *cfg, stall_plan_result *r, FILE *progress, stall_err *err);
/* Sets a real key as given, as the file would. */
void plan_set_real(stall_config *cfg, const char *section, const char *key, double v);
/* Sets an integer key as given (values in range by construction). */
void plan_set_int(stall_config *cfg, const char *section, const char *key, long long v);

/* v, a value that misses target (above or below it), as text: "%.3f", with
 * more decimals (up to 9) where three would round it onto the target or past
 * it ("efficiency falls to 0.800" under efficiency = 0.8 read as met; it was
 * 0.79958). Returns b. */
const char *plan_miss_text(char *b, size_t n, double v, double target);

/* The GPU-count questions (plan_gpus.c). */
/* What a run of g GPUs (nodes of gpn; strong: the dataset split over
 * them, else weak scaling) would simulate with the storage tiers, from the
 * last run's requests, and which bound it passes: over 0 none, 1 [plan]
 * max_requests, 2 max_request_nodes. */
typedef struct plan_cost {
    int gpus, nodes, over;
    double requests, work; /* work: requests x nodes with the fair store, else 0 */
} plan_cost;
void plan_cost_at(const plan_ctx *c, const stall_config *cfg, const stall_plan_result *r, int g,
                  int gpn, bool strong, plan_cost *e);
/* That run and the bound it passes, in words: "a run of g GPUs would
 * simulate ..., above [plan] ... (the keys that lower it)". */
const char *plan_cost_text(const stall_plan_result *r, const plan_cost *e, char *b, size_t n);
/* One run of the chosen configuration at g GPUs, nodes of gpn, weak scaling. */
int plan_curve_point(plan_ctx *c, const stall_config *chosen, int gpn, int g, plan_probe *p,
                     stall_err *err);
/* Whether cfg writes checkpoints; makes it write none. */
bool plan_ckpt_on(const plan_ctx *c, const stall_config *cfg);
void plan_ckpt_none(const plan_ctx *c, stall_config *cfg);
/* The weak-scaling curve and max_efficient_gpus with what limits it. */
int plan_scaling(plan_ctx *c, const stall_config *chosen, int gpn, stall_plan_result *r,
                 stall_err *err);
/* The data one epoch of probe p holds (samples, else batches), and that as
 * a multiple of the planned configuration's epoch. */
double plan_epoch_amount(const plan_probe *p);
double plan_epoch_data(const plan_ctx *c, const plan_probe *p);
/* The fewest GPUs for the throughput target, or (strong) the epoch deadline. */
int plan_target(plan_ctx *c, const stall_config *chosen, int gpn, bool strong, stall_plan_result *r,
                stall_plan_answer *a, char *why, size_t nwhy, stall_err *err);

/* With the storage tiers on (stall_config_tiers): the least link
 * bandwidth, global bandwidth and cache per node for which the chosen
 * configuration's stall share is at most the stall target (plan_tiers.c). */
/* Makes cfg's store cost nothing: bandwidths far above any demand, no
 * latency (plan's scaling diagnosis, without the storage). */
void plan_tiers_free(stall_config *cfg);

int plan_tiers(plan_ctx *c, const stall_config *chosen, stall_plan_result *r, stall_err *err);

/* Refuses the what-if keys that no run of the plan gives an effect
 * (plan_effects.c): over its configuration's `ranks` GPUs and 1 to
 * r->max_gpus GPUs with 1 to r->max_workers workers; m: the trace's grid
 * (NULL without a trace). */
int plan_effects(const stall_config *cfg, const stall_measured *m, int ranks,
                 const stall_plan_result *r, stall_err *err);

#endif

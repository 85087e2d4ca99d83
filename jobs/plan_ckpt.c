/*
 * plan_ckpt.c - `stallsim plan`'s checkpoint question (plan_ckpt.h): each
 * probe is an in-memory run of the model job, as plan.c's.
 */
#include "plan_ckpt.h"

#include <math.h>
#include <stdlib.h>

#include "stall/io.h"
#include "stall/report.h"
#include "stall/scenario.h"

typedef struct ck_probe {
    double share, epoch_s;
    size_t iterations;
    int epochs;
} ck_probe;

static int ck_sim(stall_config *cfg, int64_t every, stall_trace_memo *memo, ck_probe *p, int *sims,
                  stall_err *err)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)every);
    stall_err e;
    if (stall_config_apply(cfg, "checkpoint", "every_iterations", buf, "plan", &e) != 0)
        abort(); /* in range by construction */
    stall_summary sum;
    stall_run_opts o = {.jobs = 1, .no_files = 1, .plan_probe = 1, .summary = &sum, .memo = memo};
    (*sims)++;
    int rc = stall_scenario_run(cfg, &o, err);
    if (rc == 0) {
        p->share = sum.ckpt_share;
        p->epoch_s = sum.epoch_time_s;
        p->iterations = sum.iterations;
        p->epochs = sum.epochs;
    }
    return rc;
}

int plan_ckpt(const stall_config *chosen, double budget, stall_trace_memo *memo,
              plan_ckpt_answer *a, stall_err *err)
{
    *a = (plan_ckpt_answer){.value = NAN};
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    *cfg = *chosen;
    stall_err e;
    if (cfg->ckpt_every_s > 0 && stall_config_apply(cfg, "checkpoint", "every_s", "0", "plan", &e))
        abort();
    ck_probe p;
    int rc = ck_sim(cfg, 1, memo, &p, &a->sims, err);
    if (rc == 0 && !(p.share > 0))
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: [plan] ckpt_stall_budget: no checkpoint to plan; give [checkpoint] "
                           "mb_per_rank and bandwidth_mb_s (or a tidy trace that records "
                           "checkpoints)",
                           stall_config_src(cfg));
    int64_t lo = 0, hi = 1, most = rc == 0 ? (int64_t)p.iterations : 1;
    double share_hi = p.share;
    while (rc == 0 && p.share > budget && hi < most) {
        lo = hi;
        hi = hi * 2 < most ? hi * 2 : most;
        rc = ck_sim(cfg, hi, memo, &p, &a->sims, err);
        share_hi = p.share;
    }
    if (rc == 0 && p.share > budget) {
        snprintf(a->binding, sizeof a->binding, "not_met");
        a->value = (double)most;
        snprintf(a->why, sizeof a->why,
                 "not met: one checkpoint per run (every %lld iterations) already stalls %.2f%% "
                 "of the epoch time",
                 (long long)most, 100 * p.share);
        free(cfg);
        return 0;
    }
    while (rc == 0 && hi - lo > 1) {
        int64_t mid = lo + (hi - lo) / 2;
        rc = ck_sim(cfg, mid, memo, &p, &a->sims, err);
        if (rc == 0 && p.share <= budget) {
            hi = mid;
            share_hi = p.share;
        } else {
            lo = mid;
        }
    }
    if (rc == 0) {
        /* The answer's own run, for its share and epoch time. */
        rc = ck_sim(cfg, hi, memo, &p, &a->sims, err);
        share_hi = p.share;
        snprintf(a->binding, sizeof a->binding, "met");
        a->value = (double)hi;
        double it = p.iterations ? p.epoch_s * p.epochs / (double)p.iterations : NAN;
        snprintf(a->why, sizeof a->why,
                 "every %lld iterations (about %.3g s of training), checkpoint stall %.2f%% of the "
                 "epoch time, epoch %.3f s",
                 (long long)hi, (double)hi * it, 100 * share_hi, p.epoch_s);
    }
    free(cfg);
    return rc;
}

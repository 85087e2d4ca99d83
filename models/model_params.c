/*
 * model_params.c - the closed-loop model's parameters: their defaults and
 * the checks a run's parameters and durations pass before the first event
 * (stall_model_run refuses what model_check refuses).
 */
#include "stall/model.h"
#include "stall/limits.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "model_int.h"
#include "stall/storage.h"

#include "ckpt_int.h"

void stall_model_defaults(stall_model_params *p)
{
    *p = (stall_model_params){
        .ranks = 1,
        .gpus_per_node = 1,
        .workers = 0,
        .prefetch = 2,
        .in_order = true,
        .persistent_workers = false,
        .startup = 0,
        .pin = 0,
        .handover = 0,
        .batches = 1,
        .epochs = 1,
        .accumulation = 1,
        .fetch_align = STALL_ALIGN_NONE,
        .start_align = STALL_ALIGN_NONE,
        .cores = 0,
        .cpu_share = 1.0,
        .compute_cpu_share = 0.0,
        .cpu_deflate = 1.0,
        .storage_mb_s = 0.0,
        .batch_mb = 0.0,
        .threads = 1,
        .uneven = {.compute_factor = 1.0,
                   .fetch_factor = 1.0,
                   .straggler_factor = 1.0,
                   .straggler_iters = 1},
    };
}

/* ---- validation ------------------------------------------------------ */

int model_check(const stall_model_params *p, const stall_durations *d, stall_err *err)
{
    if (!p || !d)
        return stall_err_set(err, STALL_EINVAL, "model: params and durations must not be NULL");
    if (!d->fetch || !d->compute)
        return stall_err_set(err, STALL_EINVAL,
                             "model: durations.fetch and durations.compute are required");
    if (p->ranks < 1)
        return stall_err_set(err, STALL_ECONFIG, "model: ranks = %d, must be >= 1", p->ranks);
    if (p->gpus_per_node < 1 || p->gpus_per_node > p->ranks)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: gpus_per_node = %d, must be in [1, ranks = %d]",
                             p->gpus_per_node, p->ranks);
    if (p->workers < 0)
        return stall_err_set(err, STALL_ECONFIG, "model: workers = %d, must be >= 0", p->workers);
    if (p->workers > 0 && p->prefetch < 1)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: prefetch = %d, must be >= 1 when workers = %d > 0",
                             p->prefetch, p->workers);
    if (p->workers > 0 && (int64_t)p->prefetch * p->workers > MODEL_MAX_PW)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: prefetch * workers = %" PRId64 ", must be <= %" PRId32,
                             (int64_t)p->prefetch * p->workers, MODEL_MAX_PW);
    int64_t pw = p->workers > 0 ? (int64_t)p->prefetch * p->workers : 1;
    if (pw * p->ranks > MODEL_MAX_SLOTS)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: ranks * prefetch * workers = %" PRId64 " is too large",
                             pw * p->ranks);
    if (p->startup < 0)
        return stall_err_set(err, STALL_ECONFIG, "model: startup = %" PRId64 " ns, must be >= 0",
                             p->startup);
    if (p->pin < 0)
        return stall_err_set(err, STALL_ECONFIG, "model: pin = %" PRId64 " ns, must be >= 0",
                             p->pin);
    if (p->handover < 0)
        return stall_err_set(err, STALL_ECONFIG, "model: handover = %" PRId64 " ns, must be >= 0",
                             p->handover);
    for (int e = 0; p->handover_epoch && e < p->handover_epochs; e++)
        if (p->handover_epoch[e] < 0)
            return stall_err_set(err, STALL_ECONFIG,
                                 "model: handover of epoch %d = %" PRId64 " ns, must be >= 0", e,
                                 p->handover_epoch[e]);
    if (p->batches < 1)
        return stall_err_set(err, STALL_ECONFIG, "model: batches = %" PRId64 ", must be >= 1",
                             p->batches);
    if (p->epochs < 1)
        return stall_err_set(err, STALL_ECONFIG, "model: epochs = %d, must be >= 1", p->epochs);
    if ((unsigned)p->fetch_align > STALL_ALIGN_NONE)
        return stall_err_set(err, STALL_ECONFIG, "model: fetch_align = %d is not avg, min or none",
                             (int)p->fetch_align);
    if (p->start_align != STALL_ALIGN_NONE)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: start_align = %s: start alignment is an idealised "
                             "non-causal policy, available in replay mode only; use none here",
                             stall_align_name(p->start_align));
    if (p->cores < 0)
        return stall_err_set(err, STALL_ECONFIG, "model: cores = %d, must be >= 0", p->cores);
    if (!(p->cpu_share >= 0.0 && p->cpu_share <= 1.0))
        return stall_err_set(err, STALL_ECONFIG, "model: cpu_share = %g, must be in [0, 1]",
                             p->cpu_share);
    if (!(p->compute_cpu_share >= 0.0 && p->compute_cpu_share <= 1.0))
        return stall_err_set(err, STALL_ECONFIG, "model: compute_cpu_share = %g, must be in [0, 1]",
                             p->compute_cpu_share);
    if (!(p->cpu_deflate > 0.0 && p->cpu_deflate <= 1.0))
        return stall_err_set(err, STALL_ECONFIG, "model: cpu_deflate = %g, must be in (0, 1]",
                             p->cpu_deflate);
    const stall_cpu_demand *c = &p->cpu;
    if (!(c->fetch_wait_share >= 0.0 && c->fetch_wait_share <= 1.0) ||
        !(c->compute_wait_share >= 0.0 && c->compute_wait_share <= 1.0) || c->handover_cpu < 0 ||
        c->handover_wait < 0 || c->tail_cpu < 0 || c->tail_wait < 0 ||
        c->handover_cpu > STALL_LIMIT_DURATION_NS || c->tail_cpu > STALL_LIMIT_DURATION_NS ||
        c->handover_wait > STALL_LIMIT_DURATION_NS || c->tail_wait > STALL_LIMIT_DURATION_NS)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: cpu demand out of range (wait shares in [0, 1], CPU work and "
                             "waits in [0, 1e6 s])");
    if (!(p->storage_mb_s >= 0.0 && isfinite(p->storage_mb_s)))
        return stall_err_set(err, STALL_ECONFIG,
                             "model: storage_mb_s = %g, must be finite and >= 0", p->storage_mb_s);
    if (!(p->batch_mb >= 0.0 && isfinite(p->batch_mb)))
        return stall_err_set(err, STALL_ECONFIG, "model: batch_mb = %g, must be finite and >= 0",
                             p->batch_mb);
    if (p->storage_mb_s > 0.0 && p->batch_mb / p->storage_mb_s * 1e9 > 1e15)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: batch_mb / storage_mb_s = %g s per read is out of range",
                             p->batch_mb / p->storage_mb_s);
    int rc =
        stall__ckpt_check(&p->ckpt, p->gpus_per_node < p->ranks ? p->gpus_per_node : p->ranks, err);
    if (rc == 0)
        rc = stall__uneven_check(&p->uneven, p->ranks, p->gpus_per_node, err);
    if (rc == 0 && p->tiers)
        rc = stall_storage_check(&p->storage, err);
    if (rc == 0)
        rc = stall__ckpt_store_check(p, err);
    return rc;
}

/*
 * ckpt.c - checkpoints in the closed-loop model (rules in stall/ckpt.h and
 * docs/model.md 2.5): when one is due after a synchronising iteration, and
 * how long the loop waits for it, synchronous or asynchronous.
 */
#include "stall/ckpt.h"

#include <inttypes.h>
#include <math.h>

#include "ckpt_int.h"
#include "stall/limits.h"

bool stall_ckpt_on(const stall_ckpt_params *c)
{
    return (c->every > 0 || c->every_ns > 0) && c->mb > 0.0 && (c->mb_s > 0.0 || c->store);
}

stall_time stall_ckpt_write_ns(const stall_ckpt_params *c, int per_node)
{
    if (c->store || !(c->mb > 0.0 && c->mb_s > 0.0))
        return 0;
    return llround((double)per_node * c->mb / c->mb_s * 1e9);
}

stall_time stall_ckpt_snapshot_ns(const stall_ckpt_params *c)
{
    if (!c->async || !(c->snapshot_mb_s > 0.0))
        return 0;
    return llround(c->mb / c->snapshot_mb_s * 1e9);
}

int stall__ckpt_check(const stall_ckpt_params *p, int per_node, stall_err *err)
{
    if (p->every < 0 || p->every_ns < 0)
        return stall_err_set(err, STALL_ECONFIG, "model: checkpoint interval must be >= 0");
    if (p->every > 0 && p->every_ns > 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: checkpoints every %" PRId64 " iterations and every %" PRId64
                             " ns: give one",
                             p->every, p->every_ns);
    if (!(p->mb >= 0.0 && isfinite(p->mb) && p->mb_s >= 0.0 && isfinite(p->mb_s) &&
          p->snapshot_mb_s >= 0.0 && isfinite(p->snapshot_mb_s) && p->first_extra >= 0 &&
          p->first_extra <= STALL_LIMIT_DURATION_NS))
        return stall_err_set(err, STALL_ECONFIG,
                             "model: checkpoint MB, bandwidths and first_extra must be finite "
                             "and >= 0");
    if (!p->store && p->mb_s > 0.0 && per_node * p->mb / p->mb_s > STALL_LIMIT_DURATION_S)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: a checkpoint write takes %g s (%d ranks x %g MB at %g MB/s), "
                             "more than the limit of %g s",
                             per_node * p->mb / p->mb_s, per_node, p->mb, p->mb_s,
                             STALL_LIMIT_DURATION_S);
    if (p->async && p->snapshot_mb_s > 0.0 && p->mb / p->snapshot_mb_s > STALL_LIMIT_DURATION_S)
        return stall_err_set(err, STALL_ECONFIG,
                             "model: a checkpoint snapshot takes %g s, more than the limit of %g s",
                             p->mb / p->snapshot_mb_s, STALL_LIMIT_DURATION_S);
    return 0;
}

void stall__ckpt_init(stall__ckpt *c, const stall_ckpt_params *p, int ranks, int gpn)
{
    *c = (stall__ckpt){0};
    c->on = stall_ckpt_on(p);
    if (!c->on)
        return;
    c->every = p->every;
    c->every_ns = p->every_ns;
    c->async = p->async;
    c->store = p->store;
    c->mb = p->mb;
    c->write = stall_ckpt_write_ns(p, gpn < ranks ? gpn : ranks);
    c->snap = stall_ckpt_snapshot_ns(p);
    c->first = p->first_extra;
    c->next_due = p->every;
}

stall_time stall__ckpt_background(stall__ckpt *c, stall_time start, stall_time write)
{
    (void)c;
    return start + write;
}

bool stall__ckpt_due(stall__ckpt *c, int64_t iter, stall_time t0, bool sync)
{
    if (!c->on || !sync)
        return false;
    if (c->every > 0) {
        if (iter + 1 < c->next_due)
            return false;
        c->next_due = ((iter + 1) / c->every + 1) * c->every;
    } else {
        if (t0 - c->last < c->every_ns)
            return false;
        c->last = t0;
    }
    return true;
}

stall_time stall__ckpt_after(stall__ckpt *c, int64_t iter, stall_time t0, bool sync,
                             stall_time *write)
{
    *write = 0;
    if (!stall__ckpt_due(c, iter, t0, sync))
        return 0;
    stall_time w = c->write + c->first;
    c->first = 0;
    *write = w;
    if (!c->async)
        return w;
    /* The loop waits for the previous write still under way, then for its
     * snapshot; the write goes on in the background. */
    stall_time wait = c->bg_end > t0 ? c->bg_end - t0 : 0;
    wait += c->snap;
    c->bg_end = stall__ckpt_background(c, t0 + wait, w);
    return wait;
}

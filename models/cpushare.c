/*
 * cpushare.c - the node's cores shared by everything its ranks do on them,
 * with each activity's CPU work as the trace measured it (docs/model.md 2.3,
 * "CPU time from the trace"; stall_cpu_demand).
 *
 * The fetches' and the compute's CPU parts already join the node's
 * processor-sharing resource (model.c); this file adds the two activities of
 * the training process that a trace's CPU columns show and that otherwise
 * take no core:
 *  - the hand-over (result queue, unpickling): at the take, a CPU job of
 *    handover_cpu on the rank's node, then the rest of the hand-over
 *    (handover - cpu - the measured run-queue wait) as a delay, then Y;
 *  - the tail (all-reduce, optimizer step): once the last rank reached the
 *    barrier, a CPU job of tail_cpu per rank on its node; when the last of
 *    them is done, the rest of A (A - tail_cpu - tail_wait) as a delay, then
 *    T(k).
 * The measured run-queue waits come out of the waiting parts (they were the
 * measured run's contention; the sharing simulated here adds the what-if's
 * back), so with the trace's own layout the measured durations come back
 * when the simulated contention equals the measured one.
 *
 * PS job ids: fetches r * pw + s, compute compute_id0 + r, hand-over
 * hand_id0 + r, tail tail_id0 + r.
 */
#include "cpushare.h"

#include <math.h>

static stall_time cpu_clamp(stall_time v)
{
    return v > 0 ? v : 0;
}

stall_time model_cpu_fetch_wait(const model_state *st, stall_time dur)
{
    return llround(st->p->cpu.fetch_wait_share * (double)dur);
}

stall_time model_cpu_compute_wait(const model_state *st, stall_time c)
{
    return llround(st->p->cpu.compute_wait_share * (double)c);
}

bool model_cpu_handover_on(const model_state *st)
{
    return st->shared && st->p->cores > 0 && st->p->cpu.handover_cpu > 0;
}

int model_cpu_take(model_state *st, int r, int32_t s, stall_err *err)
{
    int node = r / st->p->gpus_per_node;
    st->hand_slot[r] = s;
    stall__ps_add(&st->cpu[node], stall_engine_now(st->eng), st->p->cpu.handover_cpu,
                  st->hand_id0 + r);
    return model_ps_resched(st, node, MODEL_RES_CPU, err);
}

bool model_cpu_tail_on(const model_state *st)
{
    return st->shared && st->p->cores > 0 && st->p->cpu.tail_cpu > 0;
}

int model_cpu_tail_start(model_state *st, int64_t i, stall_err *err)
{
    stall_time now = stall_engine_now(st->eng);
    st->tail_iter = i;
    st->tail_left = st->g;
    for (int r = 0; r < st->g; r++)
        stall__ps_add(&st->cpu[r / st->p->gpus_per_node], now, st->p->cpu.tail_cpu,
                      st->tail_id0 + r);
    for (int n = 0; n < st->nodes; n++) {
        int rc = model_ps_resched(st, n, MODEL_RES_CPU, err);
        if (rc)
            return rc;
    }
    return 0;
}

int model_cpu_done(model_state *st, int64_t id, stall_err *err)
{
    const stall_cpu_demand *c = &st->p->cpu;
    stall_time now = stall_engine_now(st->eng);
    if (id < st->tail_id0) {
        int r = (int)(id - st->hand_id0);
        stall_time rest =
            cpu_clamp(stall_model_handover(st->p, st->epoch) - c->handover_cpu - c->handover_wait);
        return model_at(st, now + rest, MODEL_EV_TAKE, r, st->hand_slot[r], err);
    }
    if (--st->tail_left > 0)
        return 0;
    int slot = (int)(st->tail_iter % st->acc);
    stall_time rest = cpu_clamp(st->tail[slot] - c->tail_cpu - c->tail_wait);
    /* The tail as it ran: the barrier waits stay T - A - (Y + C). */
    st->tail[slot] = now + rest - st->bar_max[slot];
    return model_tail_end(st, st->tail_iter, now + rest, true, err);
}

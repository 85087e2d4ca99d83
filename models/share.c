/*
 * share.c - egalitarian processor sharing with a virtual-time clock.
 *
 * Invariant: every job in the heap has finish > v at the time of the last
 * advance, except jobs that stall__ps_pop_done is about to hand out; v is
 * reset to 0 whenever the resource empties, so it never outgrows one busy
 * period. Joins, departures and next-departure queries are O(log n); the
 * caller keeps one pending event per resource, so a change in n costs one
 * cancel and one schedule, not a rescheduling of every job.
 *
 * Rounding: advancing by dt adds floor(dt * SCALE * m / n) with m =
 * min(n, servers); the next departure is the least dt whose advance reaches
 * F, ceil((F - v) * n / (SCALE * m)). A job alone (n <= servers) moves at
 * exactly SCALE per ns, so it takes exactly its work.
 */
#include "share.h"

#include "stall/limits.h"

#include <stdlib.h>

__extension__ typedef __int128 share_i128;

void stall__ps_init(stall__ps *ps, int servers, int capacity)
{
    ps->servers = servers < 1 ? 1 : servers;
    ps->n = 0;
    ps->cap = capacity < 4 ? 4 : capacity;
    ps->heap = stall_xcalloc((size_t)ps->cap, sizeof *ps->heap);
    ps->v = 0;
    ps->last = 0;
    ps->seq = 0;
    ps->event = NULL;
}

void stall__ps_free(stall__ps *ps)
{
    if (!ps)
        return;
    free(ps->heap);
    ps->heap = NULL;
    ps->n = ps->cap = 0;
}

static bool share_less(const stall__ps_job *a, const stall__ps_job *b)
{
    return a->finish < b->finish || (a->finish == b->finish && a->seq < b->seq);
}

static void share_advance(stall__ps *ps, stall_time now)
{
    stall_time dt = now - ps->last;
    ps->last = now;
    if (ps->n == 0 || dt <= 0)
        return;
    int m = ps->n < ps->servers ? ps->n : ps->servers;
    share_i128 dv = (share_i128)dt * STALL__PS_SCALE * m / ps->n;
    ps->v += (int64_t)dv;
}

void stall__ps_add(stall__ps *ps, stall_time now, stall_time work, int64_t id)
{
    share_advance(ps, now);
    if (ps->n == ps->cap) {
        ps->cap *= 2;
        ps->heap = stall_xrealloc(ps->heap, (size_t)ps->cap * sizeof *ps->heap);
    }
    stall__ps_job job = {.finish = ps->v + work * STALL__PS_SCALE, .seq = ps->seq++, .id = id};
    int i = ps->n++;
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (!share_less(&job, &ps->heap[parent]))
            break;
        ps->heap[i] = ps->heap[parent];
        i = parent;
    }
    ps->heap[i] = job;
}

bool stall__ps_pop_done(stall__ps *ps, stall_time now, int64_t *id)
{
    share_advance(ps, now);
    if (ps->n == 0 || ps->heap[0].finish > ps->v)
        return false;
    *id = ps->heap[0].id;
    stall__ps_job last = ps->heap[--ps->n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= ps->n)
            break;
        if (c + 1 < ps->n && share_less(&ps->heap[c + 1], &ps->heap[c]))
            c++;
        if (!share_less(&ps->heap[c], &last))
            break;
        ps->heap[i] = ps->heap[c];
        i = c;
    }
    if (ps->n > 0)
        ps->heap[i] = last;
    else
        ps->v = 0; /* idle: start the next busy period afresh */
    return true;
}

stall_time stall__ps_next(const stall__ps *ps, stall_time now)
{
    if (ps->n == 0)
        return -1;
    /* v is current as of ps->last; the caller asks right after a change, so
     * now == ps->last, but be exact for any now >= last. */
    int m = ps->n < ps->servers ? ps->n : ps->servers;
    share_i128 v = ps->v;
    if (now > ps->last)
        v += (share_i128)(now - ps->last) * STALL__PS_SCALE * m / ps->n;
    share_i128 need = (share_i128)ps->heap[0].finish - v;
    if (need <= 0)
        return now;
    share_i128 den = (share_i128)STALL__PS_SCALE * m;
    share_i128 dt = (need * ps->n + den - 1) / den;
    /* Past the horizon: the engine refuses the event with the limit. */
    if (dt > (share_i128)STALL_LIMIT_HORIZON_NS - now)
        return STALL_LIMIT_HORIZON_NS + 1;
    return now + (stall_time)dt;
}

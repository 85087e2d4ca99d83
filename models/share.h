/*
 * share.h - processor sharing (private to the models).
 *
 * A resource with `servers` identical servers serves its n jobs at once,
 * each at rate min(1, servers / n) work-ns per ns (egalitarian processor
 * sharing). The host CPU of a node is one (servers = cores); a node's storage
 * is another (servers = 1, work = read time at full bandwidth).
 *
 * Virtual time: V advances at the per-job rate, so a job that joins at V0
 * with work w leaves when V reaches F = V0 + w, whatever happens to n in
 * between. Jobs sit in a min-heap on (F, join order); the resource needs one
 * scheduled event, at the next departure, which the caller moves whenever n
 * changes (stall__ps_next). V is an integer in 1/STALL__PS_SCALE ns of work
 * and is floored on each advance, departures are rounded up to whole ns:
 * integer arithmetic, exact for a job alone, deterministic always.
 */
#ifndef STALL_SHARE_H
#define STALL_SHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "stall/base.h"

#define STALL__PS_SCALE INT64_C(1024)

typedef struct stall__ps_job {
    int64_t finish; /* F in V units */
    uint64_t seq;   /* join order, breaks ties in F */
    int64_t id;     /* caller's job id */
} stall__ps_job;

typedef struct stall__ps {
    int servers;
    int n, cap;          /* jobs in service, heap capacity */
    stall__ps_job *heap; /* binary min-heap on (finish, seq) */
    int64_t v;           /* virtual time, 1/STALL__PS_SCALE ns of work */
    stall_time last;     /* when v was last advanced */
    uint64_t seq;
    void *event; /* the caller's pending departure event, or NULL */
} stall__ps;

/* Prepares an empty resource with room for `capacity` jobs (it grows when
 * needed). servers >= 1. */
void stall__ps_init(stall__ps *ps, int servers, int capacity);
/* Frees the heap. NULL-safe. */
void stall__ps_free(stall__ps *ps);
/* Adds a job of `work` ns (> 0) at time now (>= the last call's time). */
void stall__ps_add(stall__ps *ps, stall_time now, stall_time work, int64_t id);
/* Removes one job that has finished by time now, in (F, join order); returns
 * false when none has. */
bool stall__ps_pop_done(stall__ps *ps, stall_time now, int64_t *id);
/* When the next job will finish if nothing joins or leaves (>= now), or -1
 * when idle. */
stall_time stall__ps_next(const stall__ps *ps, stall_time now);

#endif

/*
 * engine.c - the discrete-event engine: clock, event pool and run loop.
 *
 * The run loop is: peek the earliest event, stop if it lies after `until`,
 * pop it, set the clock, call the hooks in the order they were added,
 * dispatch to the model, recycle. Observers live in hooks so that the loop
 * stays this short; the engine never prints.
 *
 * Invariants, holding between calls:
 *   - now never decreases, and every queued event has time >= now
 *     (schedule enforces it; the loop re-checks it and reports a violation,
 *     e.g. a queued event whose time a model edited, as STALL_EINTERNAL);
 *   - every event the engine handed out is either queued or on the free list
 *     (in the malloc build: queued or freed), never both.
 *
 * Events come from slabs that stay until destroy (the first of
 * ENGINE_SLAB_FIRST events, each next one twice as large up to
 * ENGINE_SLAB_EVENTS); a slab is handed out from its start on demand, never
 * walked as a whole, so a small run touches only the memory it uses (a sweep
 * point's queue holds a few dozen events). Freed events go on an intrusive
 * free list, so steady state does no malloc and get/put are O(1). The pool
 * never shrinks: its size is the queue's peak.
 * With STALL_POOL_MALLOC every event is its own malloc/free so the sanitizers
 * can catch use after free. Per event the loop costs one pop, O(log n) in
 * the queue size, plus the hooks and the model.
 */
#include "stall/engine.h"
#include "evq.h"
#include "stall/limits.h"

#include <assert.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>

#define ENGINE_MAX_HOOKS 8
#define ENGINE_SLAB_FIRST 64
#define ENGINE_SLAB_EVENTS 4096

typedef struct engine_hook {
    stall_hook_fn fn;
    void *ctx;
} engine_hook;

#ifndef STALL_POOL_MALLOC
/* A pooled event. The event is the first member, so a stall_event pointer
 * that the pool handed out converts back to its node. */
typedef struct engine_node {
    stall_event ev;
    struct engine_node *next_free;
} engine_node;

typedef struct engine_slab {
    struct engine_slab *next;
    engine_node nodes[]; /* the engine's slab_cap when the slab was added */
} engine_slab;
#endif

struct stall_engine {
    const stall_model_ops *ops;
    void *state;
    stall_time now;
    stall_evq *queue;
    uint64_t dispatched;
    bool running;
    int nhooks;
    engine_hook hooks[ENGINE_MAX_HOOKS];
#ifndef STALL_POOL_MALLOC
    engine_slab *slabs; /* the newest first */
    engine_node *free_list;
    size_t slab_used; /* nodes of the newest slab handed out, from its start */
    size_t slab_cap;  /* nodes in the newest slab */
#endif
};

#ifdef STALL_POOL_MALLOC

static stall_event *engine_pool_get(stall_engine *eng)
{
    (void)eng;
    return stall_xmalloc(sizeof(stall_event));
}

static void engine_pool_put(stall_engine *eng, stall_event *ev)
{
    (void)eng;
    free(ev);
}

static void engine_pool_free(stall_engine *eng)
{
    stall_event *ev;
    while ((ev = stall_evq_pop(eng->queue)) != NULL)
        free(ev);
}

#else

/* Adds a slab, twice as large as the previous one (up to
 * ENGINE_SLAB_EVENTS), handed out from its start by engine_pool_get. */
static void engine_pool_grow(stall_engine *eng)
{
    size_t cap = eng->slabs ? 2 * eng->slab_cap : ENGINE_SLAB_FIRST;
    cap = cap < ENGINE_SLAB_EVENTS ? cap : ENGINE_SLAB_EVENTS;
    engine_slab *slab = stall_xmalloc(sizeof *slab + cap * sizeof slab->nodes[0]);
    slab->next = eng->slabs;
    eng->slabs = slab;
    eng->slab_cap = cap;
    eng->slab_used = 0;
}

static stall_event *engine_pool_get(stall_engine *eng)
{
    engine_node *node = eng->free_list;
    if (node) {
        eng->free_list = node->next_free;
        return &node->ev;
    }
    if (!eng->slabs || eng->slab_used == eng->slab_cap)
        engine_pool_grow(eng);
    return &eng->slabs->nodes[eng->slab_used++].ev;
}

static void engine_pool_put(stall_engine *eng, stall_event *ev)
{
    engine_node *node = (engine_node *)ev;
    node->next_free = eng->free_list;
    eng->free_list = node;
}

/* Queued events live in the slabs, so freeing the slabs frees them too. */
static void engine_pool_free(stall_engine *eng)
{
    engine_slab *slab = eng->slabs;
    while (slab) {
        engine_slab *next = slab->next;
        free(slab);
        slab = next;
    }
    eng->slabs = NULL;
    eng->free_list = NULL;
    eng->slab_used = eng->slab_cap = 0;
}

#endif

stall_engine *stall_engine_create(const stall_model_ops *ops, void *state, stall_time start)
{
    assert(ops && ops->handle);
    stall_engine *eng = stall_xcalloc(1, sizeof *eng);
    eng->ops = ops;
    eng->state = state;
    eng->now = start;
    eng->queue = stall_evq_create(0);
    return eng;
}

void stall_engine_destroy(stall_engine *eng)
{
    if (!eng)
        return;
    engine_pool_free(eng);
    stall_evq_destroy(eng->queue);
    free(eng);
}

stall_time stall_engine_now(const stall_engine *eng)
{
    return eng->now;
}

stall_event *stall_engine_schedule(stall_engine *eng, stall_time at, int32_t type, int32_t a,
                                   int64_t b, int64_t c, stall_err *err)
{
    if (at > STALL_LIMIT_HORIZON_NS) {
        stall_err_set(err, STALL_ECONFIG,
                      "simulated time passes the limit of %.0f s (at %.0f s); make the run "
                      "shorter",
                      STALL_LIMIT_HORIZON_S, (double)at / 1e9);
        return NULL;
    }
    if (at < eng->now) {
        stall_err_set(err, STALL_ECAUSAL,
                      "event type %" PRId32 " scheduled at %" PRId64
                      " ns, before the current time %" PRId64 " ns",
                      type, at, eng->now);
        return NULL;
    }
    stall_event *ev = engine_pool_get(eng);
    ev->time = at;
    ev->slot = STALL_EVQ_NOSLOT;
    ev->type = type;
    ev->a = a;
    ev->b = b;
    ev->c = c;
    stall_evq_push(eng->queue, ev);
    return ev;
}

int stall_engine_cancel(stall_engine *eng, stall_event *ev)
{
    int rc = stall_evq_remove(eng->queue, ev);
    if (rc == 0)
        engine_pool_put(eng, ev);
    return rc;
}

int stall_engine_add_hook(stall_engine *eng, stall_hook_fn fn, void *ctx)
{
    if (!fn || eng->nhooks == ENGINE_MAX_HOOKS)
        return STALL_EINVAL;
    eng->hooks[eng->nhooks++] = (engine_hook){.fn = fn, .ctx = ctx};
    return 0;
}

/* Turns a failed dispatch into the caller's error record. The model's own
 * message wins when it set one for this very code. */
static int engine_model_failed(const stall_engine *eng, int rc, const stall_err *model_err,
                               const stall_event *ev, stall_err *err)
{
    const char *name = eng->ops->name ? eng->ops->name : "(unnamed)";
    if (rc > 0)
        return stall_err_set(err, STALL_EINTERNAL,
                             "model %s returned %d (not 0 or negative) on event type %" PRId32
                             " at %" PRId64 " ns",
                             name, rc, ev->type, ev->time);
    if (model_err->code == rc)
        return stall_err_set(err, rc, "%s", model_err->msg);
    return stall_err_set(err, rc, "model %s failed on event type %" PRId32 " at %" PRId64 " ns: %s",
                         name, ev->type, ev->time, stall_strerror(rc));
}

int stall_engine_run(stall_engine *eng, stall_time until, stall_err *err)
{
    if (eng->running)
        return stall_err_set(err, STALL_EINVAL, "stall_engine_run called from inside a handler");
    eng->running = true;
    int rc = 0;
    stall_err model_err = {.code = STALL_OK, .msg = ""};
    stall_event *ev;
    while ((ev = stall_evq_peek(eng->queue)) != NULL && ev->time <= until) {
        if (ev->time < eng->now) {
            /* The event stays queued: a failed run changes nothing. */
            rc = stall_err_set(err, STALL_EINTERNAL,
                               "queued event type %" PRId32 " at %" PRId64
                               " ns lies before the current time %" PRId64
                               " ns; was its time changed after scheduling?",
                               ev->type, ev->time, eng->now);
            break;
        }
        stall_evq_pop(eng->queue);
        eng->now = ev->time;
        for (int i = 0; i < eng->nhooks; i++)
            eng->hooks[i].fn(eng->hooks[i].ctx, eng, ev);
        /* A model that returned 0 may have left a record behind; start clean
         * so that a later failure never reports a stale message. */
        model_err.code = STALL_OK;
        model_err.msg[0] = '\0';
        rc = eng->ops->handle(eng, eng->state, ev, &model_err);
        eng->dispatched++;
        if (rc != 0)
            rc = engine_model_failed(eng, rc, &model_err, ev, err);
        engine_pool_put(eng, ev);
        if (rc != 0)
            break;
    }
    eng->running = false;
    return rc;
}

uint64_t stall_engine_dispatched(const stall_engine *eng)
{
    return eng->dispatched;
}

size_t stall_engine_pending(const stall_engine *eng)
{
    return stall_evq_size(eng->queue);
}

/*
 * stall/engine.h - the discrete-event engine: clock, event pool, run loop.
 *
 * The engine knows nothing of GPUs or data loaders. A model is a const ops
 * table plus a state pointer; the engine pops the earliest event, advances
 * the clock to it, calls the observers' hooks, dispatches the event to the
 * model and recycles it. Scheduling before the current time is an error
 * (STALL_ECAUSAL), never a clamp.
 *
 * Events come from a pool that grows in slabs and recycles freed events, so
 * steady-state simulation does no malloc per event. Building with
 * -DSTALL_POOL_MALLOC makes every event a separate malloc/free so that the
 * sanitizers see each one.
 */
#ifndef STALL_ENGINE_H
#define STALL_ENGINE_H

#include "stall/base.h"
#include "stall/event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stall_engine stall_engine;

/* Handles one event at time stall_engine_now(eng) == ev->time. Returns 0, or
 * a negative code after filling err; a failure stops the run. The event is
 * recycled after the call: copy what must outlive it. */
typedef int (*stall_handle_fn)(stall_engine *eng, void *state, const stall_event *ev,
                               stall_err *err);

typedef struct stall_model_ops {
    const char *name;
    stall_handle_fn handle;
} stall_model_ops;

/* Observer hook: called before each dispatch, clock already set. */
typedef void (*stall_hook_fn)(void *ctx, const stall_engine *eng, const stall_event *ev);

/* Creates an engine whose clock reads `start` (usually 0), for a model whose
 * handler gets `state` on every call. ops must outlive the engine; ops and
 * ops->handle must not be NULL. Never returns NULL (out of memory aborts). */
stall_engine *stall_engine_create(const stall_model_ops *ops, void *state, stall_time start);
/* Frees the engine, its pool and any events still queued; pointers to its
 * events become invalid. Not from inside a handler. NULL-safe. */
void stall_engine_destroy(stall_engine *eng);

/* The current simulated time. */
stall_time stall_engine_now(const stall_engine *eng);

/* Schedules an event at time `at` and returns it (owned by the engine; valid
 * until it fires or is cancelled). Events at equal times fire in the order
 * they were scheduled, including events scheduled at `now` from a handler.
 * The caller may change the payload (type, a, b, c) of a returned event but
 * not its time; to move an event, cancel it and schedule anew. Returns NULL,
 * changing nothing, with err (may be NULL) set to STALL_ECAUSAL and a message
 * naming both times when at < now. */
stall_event *stall_engine_schedule(stall_engine *eng, stall_time at, int32_t type, int32_t a,
                                   int64_t b, int64_t c, stall_err *err);

/* Removes a scheduled event and recycles it; ev is invalid afterwards.
 * Returns 0, or STALL_EINVAL when ev is not queued in this engine (for example
 * the event being handled right now, or one from another engine). Passing a
 * pointer to an event that already fired or was cancelled is a use after free
 * in the STALL_POOL_MALLOC build; the pooled build refuses it unless the
 * event was reused meanwhile. */
int stall_engine_cancel(stall_engine *eng, stall_event *ev);

/* Adds an observer (at most 8); hooks run in the order they were added.
 * Returns 0, or STALL_EINVAL when fn is NULL or eight hooks are in place. */
int stall_engine_add_hook(stall_engine *eng, stall_hook_fn fn, void *ctx);

/* Runs until the queue is empty or the next event lies after `until`
 * (STALL_TIME_MAX: to the end); events at exactly `until` fire, later ones
 * stay queued and the clock stays at the last event that fired. Calling run
 * again resumes.
 *
 * Returns 0 or the first failure, with err (may be NULL) filled:
 *   - a negative code from the model: the run stops after that event, which
 *     counts as dispatched and is recycled; err carries the model's message,
 *     or one naming the model, event and time if the model left none;
 *   - STALL_EINTERNAL when the earliest queued event lies before now (its
 *     time was changed after scheduling), or the model returned a positive
 *     value; the offending event stays queued in the first case;
 *   - STALL_EINVAL when called from inside a handler. */
int stall_engine_run(stall_engine *eng, stall_time until, stall_err *err);

/* Events dispatched so far, and events queued now. */
uint64_t stall_engine_dispatched(const stall_engine *eng);
size_t stall_engine_pending(const stall_engine *eng);

#ifdef __cplusplus
}
#endif
#endif

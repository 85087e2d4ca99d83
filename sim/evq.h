/*
 * sim/evq.h - the event queue: a radix heap of events (evq.c). Private to
 * the engine (sim/engine.c); stall_event itself is public (stall/engine.h).
 *
 * Order is total and deterministic: by time, then by insertion sequence, so
 * events with equal times pop in the order they were pushed (FIFO). Each event
 * stores its slot in the queue, which makes removal O(1).
 *
 * The queue does not own events; it stores pointers to caller-owned
 * stall_event records (the engine keeps them in a pool). An event may sit in
 * at most one queue at a time.
 *
 * Complexity: push and remove O(1); pop and peek O(1) amortised (an event
 * moves between the 65 buckets at most 64 times in all); size O(1). A push
 * earlier than the last peeked or popped time costs O(n) (rare: the engine
 * does it only when resuming a run that stopped at `until`).
 */
#ifndef STALL_SIM_EVQ_H
#define STALL_SIM_EVQ_H

#include "stall/event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stall_evq stall_evq;

/* Creates an empty queue; capacity is a hint (0 is fine). Never NULL. */
stall_evq *stall_evq_create(size_t capacity);
/* Frees the queue (not the events). NULL-safe. */
void stall_evq_destroy(stall_evq *q);

/* Queues ev, giving it the next sequence number (a 64-bit counter that never
 * wraps in practice). ev must not be queued in any queue; pushing one that is
 * queued here fails an assertion in debug builds (which reads ev->slot, so
 * give new events slot = STALL_EVQ_NOSLOT) and corrupts the queue otherwise.
 * The array grows as needed; out of memory aborts. */
void stall_evq_push(stall_evq *q, stall_event *ev);
/* Removes and returns the earliest event (smallest time, then smallest seq),
 * or NULL when empty. The returned event's slot is STALL_EVQ_NOSLOT. */
stall_event *stall_evq_pop(stall_evq *q);
/* The earliest event without removing it, or NULL when empty. Not const:
 * finding it may reorganise the buckets (the order is unchanged). */
stall_event *stall_evq_peek(stall_evq *q);
/* Removes a queued event and sets its slot to STALL_EVQ_NOSLOT. Returns 0, or
 * STALL_EINVAL, changing nothing, when ev is NULL or not in q (checked: its
 * slot must be in range and q's entry there must be ev, so events from other
 * queues and events already popped are refused). */
int stall_evq_remove(stall_evq *q, stall_event *ev);
/* Number of queued events. */
size_t stall_evq_size(const stall_evq *q);

#ifdef __cplusplus
}
#endif
#endif

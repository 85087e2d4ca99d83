/*
 * stall/event.h - one event of the discrete-event engine (stall/engine.h).
 * Header only; the queue that orders events (sim/evq.h) is private to the
 * engine.
 */
#ifndef STALL_EVENT_H
#define STALL_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "stall/base.h"

/* An event. Payload fields are the model's; the queue (sim/evq.h) reads only time and
 * seq and writes only seq and slot. While an event is queued its time, seq
 * and slot must not change (the queue is ordered by them); the payload may. */
typedef struct stall_event {
    stall_time time; /* when it fires */
    uint64_t seq;    /* insertion order, set by push */
    size_t slot;     /* position in the queue; STALL_EVQ_NOSLOT when not queued */
    int32_t type;    /* model-defined kind */
    int32_t a;       /* model payload, e.g. a rank */
    int64_t b;       /* model payload, e.g. a batch */
    int64_t c;       /* model payload */
} stall_event;

#define STALL_EVQ_NOSLOT SIZE_MAX

#endif

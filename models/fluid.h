/*
 * fluid.h - the store's bandwidth shared as a fluid by the reads of every
 * node (private to the models; stall/storage.h states the rule).
 *
 * Per node: its reads in a min-heap on the MB each must have received when
 * it is done (F, in the node's virtual time V: MB received by every read of
 * the node, as all its reads get the same rate), and the current rate per
 * read. Rates change only when a read joins or leaves; then every node's V
 * is advanced and the rates recomputed by water-filling (O(nodes log
 * nodes)). Doubles, in a fixed order: deterministic; departures are rounded
 * up to whole ns, so a read alone at rate b takes ceil(mb / b) ns.
 */
#ifndef STALL_MODELS_FLUID_H
#define STALL_MODELS_FLUID_H

#include <stdbool.h>
#include <stdint.h>

#include "stall/base.h"

typedef struct fluid_job {
    double finish; /* F, MB of the node's V */
    uint64_t seq;
    int64_t id;
} fluid_job;

typedef struct fluid_node {
    fluid_job *heap;
    int cap;
} fluid_node;

/* The per-node values every event reads or updates sit in arrays of their
 * own (n, v, rate and the heap's top), so that the passes over all nodes
 * (advance, the done scan, the next departure) read them in order instead
 * of following each node's heap. */
typedef struct stall__fluid {
    int nodes;
    fluid_node *node;
    int *n;              /* [nodes] reads in flight */
    double *v;           /* [nodes] MB each of its reads has received */
    double *rate;        /* [nodes] MB per ns per read */
    double *head;        /* [nodes] the heap top's F; NaN when n = 0 */
    double link, global; /* MB per ns; 0 = unlimited */
    int total;           /* reads in flight */
    int64_t *order;      /* [nodes] scratch for the water-filling */
    stall_time last;
    uint64_t seq;
    void *event; /* the caller's pending departure event, or NULL */
} stall__fluid;

/* link_mb_s, global_mb_s >= 0, not both 0. */
void stall__fluid_init(stall__fluid *f, int nodes, double link_mb_s, double global_mb_s);
void stall__fluid_free(stall__fluid *f);
/* A read of mb > 0 MB on `node` joins at now (>= the last call's now). */
void stall__fluid_add(stall__fluid *f, stall_time now, int node, double mb, int64_t id);
/* Removes one read done by now; false when none is. */
bool stall__fluid_pop_done(stall__fluid *f, stall_time now, int64_t *id);
/* When the next read will be done if none joins or leaves, or -1 when idle. */
stall_time stall__fluid_next(const stall__fluid *f, stall_time now);

#endif

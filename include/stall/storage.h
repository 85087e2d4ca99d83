/*
 * stall/storage.h - the storage tiers of the closed-loop model (docs/model.md
 * 2.3, "Storage tiers"): each node's page cache in front of a shared store
 * reached through the node's link (bandwidth per node) and a bandwidth shared
 * by all nodes, with a latency per request that misses the cache.
 *
 * The cache keeps what it admitted: a byte read on a miss is admitted while
 * the cache has room and never evicted. Each epoch reads each sample once
 * (DistributedSampler without replacement), so what an epoch finds is what
 * earlier epochs (and the start) put there: per node i, with W_i its
 * working set (the dataset, replicated; its share r_i / G of it,
 * partitioned), R_i the MB it reads per epoch (batch_mb x batches x r_i) and
 * c_e what its cache holds when epoch e starts,
 *   h_e = c_e / W_i                         (hit fraction of epoch e's reads)
 *   c_0 = min(cache, cached_start, W_i)
 *   c_{e+1} = min(cache, W_i, c_e + (1 - h_e) R_i)
 * A batch then reads (1 - h_e) batch_mb MB from the store, after waiting
 * (1 - h_e) x requests x latency; hits read at memory speed, which the warm
 * fetch already contains.
 *
 * The store's bandwidth is shared as a fluid, max-min fair: the reads of a
 * node share its link equally, and the global bandwidth is filled level by
 * level (a node whose reads get less from their link than the common level
 * keeps that; the rest share what is left equally). stall__fluid implements
 * it per node with a virtual time and a heap (private: models/fluid.h).
 */
#ifndef STALL_STORAGE_H
#define STALL_STORAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stall_storage {
    double link_mb_s;      /* each node's link, MB/s; 0 = unlimited */
    double global_mb_s;    /* shared by all nodes, MB/s; 0 = unlimited */
    stall_time latency;    /* ns per request that misses: the mean of an exponential draw */
    bool latency_constant; /* ... or exactly that (a store answering in a fixed time) */
    bool fifo;         /* transfers served one at a time in arrival order at the full bandwidth (per
                          node's link, or one queue at the global bandwidth), not shared fairly */
    double requests;   /* requests per batch, >= 0 */
    double batch_mb;   /* MB per batch, > 0 */
    double cache_mb;   /* per node, >= 0 */
    double dataset_mb; /* > 0 */
    bool partitioned;  /* each node reads its own shard */
    double start_mb;   /* per node, in its cache when epoch 0 starts */
    /* ns a worker spends writing a request it admits to the cache (a plain
     * delay): in epoch e a node admits c_{e+1} - c_e MB, the first missed
     * requests that fit. 0: free. */
    stall_time admit;
    /* The measured read taken out of every fetch of epoch e (a measured
     * fetch already contains its reads): read_out[e] for e < read_epochs,
     * read_rest beyond (fetches drawn from the whole trace). NULL: none. */
    const stall_time *read_out;
    int read_epochs;
    stall_time read_rest;
    /* The trace's mean fetch per epoch, s (read_epochs of them; NULL: not
     * known), and over all its epochs: the read is taken out of each fetch
     * in proportion to its length, read_out[e] / read_mean_s[e] of it, so
     * no fetch goes below 0 and the epoch's mean loses exactly read_out[e].
     * Without them read_out[e] is subtracted (floored at 0). */
    const double *read_mean_s;
    double read_rest_mean_s;
    /* The trace's grid: a fetch of rank >= read_ranks or batch >=
     * read_batches was drawn from the whole trace, and takes read_rest (or
     * the fitted mean) whatever its epoch. 0: no limit. */
    int read_ranks;
    int64_t read_batches;
    /* Or, fitted (fit_rho >= 0): the measured run had a cache of fit_cache_mb
     * per node, started cold, over fit_ranks ranks (fit_gpn per node), its
     * fit_batches per rank, fit_epochs epochs and this dataset; epoch e's
     * fetches are taken to hold fit_rho ns x its miss share (1 - h_e,
     * averaged over the nodes), beyond fit_epochs the mean. Replaces
     * read_out. */
    double fit_rho, fit_cache_mb;
    int fit_ranks, fit_gpn, fit_epochs;
    int64_t fit_batches;
} stall_storage;

/* The measured run's miss share per epoch, miss[e] for e < fit_epochs
 * (stall_storage_hits over its configuration, averaged over its nodes). */
void stall_storage_fit_misses(const stall_storage *s, double *miss);

/* Checks *s (STALL_ECONFIG naming the field). */
int stall_storage_check(const stall_storage *s, stall_err *err);

/* The cache of each node over the epochs: hit[e * nodes + i] = h_e of node
 * i, for `ranks` ranks, `gpn` per node (the last node may hold fewer),
 * `batches` per rank per epoch. hit has epochs x ceil(ranks / gpn) entries. */
void stall_storage_hits(const stall_storage *s, int ranks, int gpn, int64_t batches, int epochs,
                        double *hit);

/* One node's cache step: the hit fraction of the epoch starting with
 * *content MB cached, and *content moved to the next epoch's start. */
double stall_storage_step(const stall_storage *s, double working_mb, double read_mb,
                          double *content);

#ifdef __cplusplus
}
#endif
#endif

/*
 * evq.c - the event queue: a radix heap of event pointers.
 *
 * A simulation pops events in non-decreasing time, which is what a radix heap
 * (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) exploits. Keys are the times
 * mapped to unsigned integers in the same order; `last` is the key of the
 * latest minimum taken out. An entry with key k lives in bucket
 *   0                          when k == last,
 *   64 - clz(k ^ last)         otherwise (1..64: the highest bit where k
 *                              differs from last),
 * so every key in bucket i is below every key in bucket i + 1. Push appends
 * to a bucket: O(1). Pop takes the head of bucket 0; when bucket 0 is empty,
 * the lowest non-empty bucket is scanned for its minimum, which becomes
 * `last`, and its entries move to lower buckets. An entry only ever moves
 * down, at most 64 times, so pop is O(1) amortised per bucket move and
 * O(log(key range)) in the worst case, against O(log n) comparisons with
 * unpredictable branches for a binary heap.
 *
 * Order is total and deterministic: by time, then by push sequence. Bucket 0
 * holds only keys equal to `last` and is kept sorted by sequence: the entries
 * a redistribution brings there are sorted (there are few), and later pushes
 * with key == last carry larger sequence numbers than any queued entry.
 *
 * Removal: an entry in a bucket above 0 is swapped with the bucket's last
 * entry (order inside those buckets does not matter); an entry in bucket 0
 * leaves a tombstone (NULL) that pop skips, so bucket 0 stays sorted. Each
 * event stores its slot: bucket << 48 | index.
 *
 * A push below `last` (possible when a caller peeked, so `last` moved up to
 * the next event, and then pushed an earlier one: the engine's run(until)
 * stops that way) re-buckets every entry around the new key: O(n), rare.
 *
 * Invariants, holding between calls:
 *   - every live entry of bucket i has bucket index i for the current last;
 *   - bucket 0 entries from head on are sorted by seq (tombstones aside);
 *   - ev->slot encodes the entry's position for every queued event, and
 *     events that are not queued have slot == STALL_EVQ_NOSLOT;
 *   - bit i - 1 of `mask` is set exactly when bucket i (1..64) is non-empty;
 *   - size counts live entries.
 * The buckets' arrays grow by doubling and never shrink.
 */
#include "evq.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>

#define EVQ_BUCKETS 65
#define EVQ_INDEX_BITS 48
#define EVQ_INDEX_MASK ((UINT64_C(1) << EVQ_INDEX_BITS) - 1)

_Static_assert(sizeof(size_t) >= 8, "slots need a 64-bit size_t");

typedef struct evq_entry {
    uint64_t key;
    uint64_t seq;
    stall_event *ev; /* NULL: a removed entry in bucket 0 */
} evq_entry;

typedef struct evq_bucket {
    evq_entry *v;
    size_t n, cap;
    size_t head; /* bucket 0 only: first entry not yet popped */
} evq_bucket;

struct stall_evq {
    evq_bucket b[EVQ_BUCKETS];
    uint64_t last; /* key of the latest minimum */
    uint64_t mask; /* bit i - 1: bucket i non-empty */
    size_t size;
    size_t hint; /* initial capacity of a bucket */
    uint64_t next_seq;
};

/* Times to keys: flipping the sign bit maps int64 order onto uint64 order. */
static inline uint64_t evq_key(stall_time t)
{
    return (uint64_t)t ^ (UINT64_C(1) << 63);
}

static inline int evq_bucket_of(uint64_t key, uint64_t last)
{
    return key == last ? 0 : 64 - __builtin_clzll(key ^ last);
}

static inline size_t evq_slot(int bucket, size_t index)
{
    return (size_t)bucket << EVQ_INDEX_BITS | index;
}

/* Appends e to bucket i and records the slot in its event. */
static void evq_append(stall_evq *q, int i, evq_entry e)
{
    evq_bucket *b = &q->b[i];
    if (b->n == b->cap) {
        /* cap entries were allocated, so doubling cannot overflow size_t on
         * any machine that could hold the array. */
        b->cap = b->cap ? 2 * b->cap : q->hint;
        b->v = stall_xrealloc(b->v, b->cap * sizeof *b->v);
    }
    b->v[b->n] = e;
    e.ev->slot = evq_slot(i, b->n);
    b->n++;
    if (i > 0)
        q->mask |= UINT64_C(1) << (i - 1);
}

/* Sorts v[0..n) by seq. Sequence numbers are unique, so any correct sort
 * gives the one order. */
static int evq_cmp_seq(const void *x, const void *y)
{
    uint64_t a = ((const evq_entry *)x)->seq, b = ((const evq_entry *)y)->seq;
    return (a > b) - (a < b);
}

/* Sorts bucket 0's entries from head on by seq and rewrites their slots.
 * A redistribution usually brings few equal keys (insertion sort); where
 * many events share a time (thousands of ranks released by one barrier, or
 * resumed by one node's core) their entries come in the spilled bucket's
 * order, which removals have shuffled, and insertion sort was quadratic:
 * those take qsort. An already sorted run is left as it is. */
static void evq_sort_front(stall_evq *q)
{
    evq_bucket *b = &q->b[0];
    size_t n = b->n - b->head;
    evq_entry *v = b->v + b->head;
    size_t k = 1;
    while (k < n && v[k - 1].seq < v[k].seq)
        k++;
    if (k < n && n > 32) {
        qsort(v, n, sizeof *v, evq_cmp_seq);
    } else {
        for (size_t i = k; i < n; i++) {
            evq_entry e = v[i];
            size_t j = i;
            while (j > 0 && v[j - 1].seq > e.seq) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = e;
        }
    }
    for (size_t i = b->head; i < b->n; i++)
        b->v[i].ev->slot = evq_slot(0, i);
}

/* Moves every entry of bucket i (> 0) to the bucket it belongs in now. */
static void evq_spill(stall_evq *q, int i)
{
    evq_bucket *b = &q->b[i];
    size_t n = b->n;
    b->n = 0;
    q->mask &= ~(UINT64_C(1) << (i - 1));
    for (size_t k = 0; k < n; k++)
        evq_append(q, evq_bucket_of(b->v[k].key, q->last), b->v[k]);
}

/* Makes bucket 0's head the earliest live entry, if any. Returns false when
 * the queue is empty. */
static bool evq_front(stall_evq *q)
{
    evq_bucket *z = &q->b[0];
    while (z->head < z->n && z->v[z->head].ev == NULL)
        z->head++;
    if (z->head < z->n)
        return true;
    z->head = z->n = 0;
    if (q->mask == 0)
        return false;
    int i = __builtin_ctzll(q->mask) + 1;
    evq_bucket *b = &q->b[i];
    uint64_t min = b->v[0].key;
    for (size_t k = 1; k < b->n; k++)
        min = b->v[k].key < min ? b->v[k].key : min;
    q->last = min;
    evq_spill(q, i);
    evq_sort_front(q);
    return true;
}

/* Re-buckets every live entry around a new, lower `last`. No queued key
 * equals it, so bucket 0 ends up empty and nothing needs sorting. */
static void evq_lower(stall_evq *q, uint64_t key)
{
    evq_entry *all = stall_xmalloc(q->size * sizeof *all);
    size_t m = 0;
    for (int i = 0; i < EVQ_BUCKETS; i++) {
        evq_bucket *b = &q->b[i];
        for (size_t k = i == 0 ? b->head : 0; k < b->n; k++)
            if (b->v[k].ev)
                all[m++] = b->v[k];
        b->n = b->head = 0;
    }
    q->mask = 0;
    q->last = key;
    for (size_t k = 0; k < m; k++)
        evq_append(q, evq_bucket_of(all[k].key, key), all[k]);
    free(all);
}

stall_evq *stall_evq_create(size_t capacity)
{
    stall_evq *q = stall_xcalloc(1, sizeof *q);
    q->hint = capacity > 16 ? capacity : 16;
    q->hint = q->hint < 4096 ? q->hint : 4096;
    return q;
}

void stall_evq_destroy(stall_evq *q)
{
    if (!q)
        return;
    for (int i = 0; i < EVQ_BUCKETS; i++)
        free(q->b[i].v);
    free(q);
}

void stall_evq_push(stall_evq *q, stall_event *ev)
{
    /* Pushing an event that is already queued here would corrupt the queue. */
    assert(!(ev->slot != STALL_EVQ_NOSLOT && (ev->slot >> EVQ_INDEX_BITS) < EVQ_BUCKETS &&
             (ev->slot & EVQ_INDEX_MASK) < q->b[ev->slot >> EVQ_INDEX_BITS].n &&
             q->b[ev->slot >> EVQ_INDEX_BITS].v[ev->slot & EVQ_INDEX_MASK].ev == ev));
    uint64_t key = evq_key(ev->time);
    if (q->size == 0) {
        /* Empty: start afresh around this key (drops bucket 0's tombstones). */
        q->b[0].head = q->b[0].n = 0;
        q->last = key;
    } else if (key < q->last) {
        evq_lower(q, key);
    }
    ev->seq = q->next_seq++;
    evq_append(q, evq_bucket_of(key, q->last), (evq_entry){.key = key, .seq = ev->seq, .ev = ev});
    q->size++;
}

stall_event *stall_evq_pop(stall_evq *q)
{
    if (!evq_front(q))
        return NULL;
    evq_bucket *z = &q->b[0];
    stall_event *top = z->v[z->head++].ev;
    top->slot = STALL_EVQ_NOSLOT;
    q->size--;
    return top;
}

stall_event *stall_evq_peek(stall_evq *q)
{
    return evq_front(q) ? q->b[0].v[q->b[0].head].ev : NULL;
}

int stall_evq_remove(stall_evq *q, stall_event *ev)
{
    /* The slot alone is not proof: an event from another queue, or one that
     * was popped long ago, may carry a slot that is in range here. */
    if (!ev || ev->slot == STALL_EVQ_NOSLOT)
        return STALL_EINVAL;
    size_t i = ev->slot >> EVQ_INDEX_BITS, k = ev->slot & EVQ_INDEX_MASK;
    if (i >= EVQ_BUCKETS)
        return STALL_EINVAL;
    evq_bucket *b = &q->b[i];
    if (k >= b->n || (i == 0 && k < b->head) || b->v[k].ev != ev)
        return STALL_EINVAL;
    ev->slot = STALL_EVQ_NOSLOT;
    q->size--;
    if (i == 0) {
        b->v[k].ev = NULL;
        return 0;
    }
    b->v[k] = b->v[--b->n];
    if (k < b->n)
        b->v[k].ev->slot = evq_slot((int)i, k);
    if (b->n == 0)
        q->mask &= ~(UINT64_C(1) << (i - 1));
    return 0;
}

size_t stall_evq_size(const stall_evq *q)
{
    return q->size;
}

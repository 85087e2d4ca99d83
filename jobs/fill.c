/*
 * fill.c - the drawn duration tables filled on several threads, with the
 * very values of wi_tables_build's serial loop (see feed.h, wi_tables_fill).
 *
 * The serial loop draws, cell after cell in table order, the fetch and then
 * the compute duration from one mt19937 stream: that order is the output's,
 * so the stream stays on one thread. What a draw takes from the stream is
 * small (draw.h, wi_draw_raw: two 32-bit outputs for a lognormal, nothing
 * for a constant), and the costly rest (log, sqrt, exp, the rounding, the
 * what-if's scaling) is a pure function of it (wi_draw_cook). So the
 * calling thread takes the stream's outputs into the tables themselves, a
 * chunk at a time, and the other threads, then the caller too, cook each
 * chunk in place once it is there. A constant compute needs no table at all
 * (w->compute stays NULL, w->compute_ns holds it): half the memory.
 *
 * Complexity: O(cells) work; the serial part is the generator's, about a
 * fifth of the draw; memory: the tables only.
 */
/* madvise's MADV_POPULATE_WRITE. */
#define _DEFAULT_SOURCE
#include "feed.h"

#include "draw.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <stdint.h>
#include <stdlib.h>

#define FILL_CHUNK ((size_t)1 << 15)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; refused before (then not used) */
#endif

typedef struct fill {
    wi_tables *w;
    const wi_draw *fd, *cd;
    const wi_xform *x;
    size_t cells, nchunks;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t made;        /* chunks whose raw draws are in (under mu) */
    atomic_size_t next; /* the next chunk to cook */
    atomic_size_t bad;  /* the first cell whose draw failed, or SIZE_MAX */
} fill;

static void fill_cook(fill *F, size_t c)
{
    wi_tables *w = F->w;
    size_t o0 = c * FILL_CHUNK, o1 = o0 + FILL_CHUNK < F->cells ? o0 + FILL_CHUNK : F->cells;
    size_t bad = SIZE_MAX;
    for (size_t o = o0; o < o1; o++) {
        stall_time f = wi_draw_cook((uint64_t)w->fetch[o], F->fd);
        stall_time v = w->compute ? wi_draw_cook((uint64_t)w->compute[o], F->cd) : F->cd->ns;
        if (f < 0 || v < 0) {
            /* Left as drawn, for the caller's message; no later cell of
             * this chunk can come first. */
            w->fetch[o] = f;
            if (w->compute)
                w->compute[o] = v;
            bad = o;
            break;
        }
        w->fetch[o] = wi_xform_fetch(F->x, f);
        if (w->compute)
            w->compute[o] = wi_xform_compute(F->x, v);
    }
    size_t cur = atomic_load(&F->bad);
    while (bad < cur && !atomic_compare_exchange_weak(&F->bad, &cur, bad))
        ;
}

/* Cooks chunks as they come, until none is left. */
static void *fill_worker(void *arg)
{
    fill *F = arg;
    for (;;) {
        size_t c = atomic_fetch_add(&F->next, 1);
        if (c >= F->nchunks)
            return NULL;
        pthread_mutex_lock(&F->mu);
        while (F->made <= c)
            pthread_cond_wait(&F->cv, &F->mu);
        pthread_mutex_unlock(&F->mu);
        fill_cook(F, c);
    }
}

bool wi_tables_fill_on(const gsl_rng *rng, const wi_draw *fd, const wi_draw *cd)
{
    return wi_draw_splits(rng, fd) && wi_draw_splits(rng, cd);
}

size_t wi_tables_fill(wi_tables *w, gsl_rng *rng, const wi_draw *fd, const wi_draw *cd,
                      const wi_xform *x, int threads)
{
    size_t cells = (size_t)w->ne * (size_t)w->g * (size_t)w->n;
    fill F = {.w = w, .fd = fd, .cd = cd, .x = x, .cells = cells};
    F.nchunks = (cells + FILL_CHUNK - 1) / FILL_CHUNK;
    atomic_init(&F.next, 0);
    atomic_init(&F.bad, SIZE_MAX);
    pthread_mutex_init(&F.mu, NULL);
    pthread_cond_init(&F.cv, NULL);
    int nt = threads > 1 ? threads - 1 : 0;
    nt = (size_t)nt < F.nchunks ? nt : (int)F.nchunks;
    pthread_t th[64];
    nt = nt < 64 ? nt : 64;
    int started = 0;
    for (int t = 0; t < nt; t++, started++)
        if (pthread_create(&th[t], NULL, fill_worker, &F) != 0)
            break;
    for (size_t c = 0; c < F.nchunks; c++) {
        size_t o0 = c * FILL_CHUNK, o1 = o0 + FILL_CHUNK < cells ? o0 + FILL_CHUNK : cells;
        wi_draw_raw_cells(rng, fd, cd, w->fetch + o0, w->compute ? w->compute + o0 : NULL, o1 - o0);
        if (started == 0) {
            /* One thread: each chunk cooked while still in cache. */
            atomic_store(&F.next, c + 1);
            fill_cook(&F, c);
            continue;
        }
        pthread_mutex_lock(&F.mu);
        F.made = c + 1;
        pthread_cond_broadcast(&F.cv);
        pthread_mutex_unlock(&F.mu);
    }
    fill_worker(&F);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&F.mu);
    pthread_cond_destroy(&F.cv);
    return atomic_load(&F.bad);
}

/* ---- the fill overlapped with the run (wi_tables_ovl_start) ----
 *
 * The run asks for the cells in column order (batch k of every rank, one
 * iteration after the other), the stream gives them in table order (every
 * batch of rank 0 first), so no cell of an epoch can be cooked for the run
 * before the epoch's last raw draw. The first helper draws the epochs' raw
 * values one epoch after the other (publishing `drawn`, release); then
 * every thread cooks the drawn epochs in blocks of bw batches of every
 * rank, each block claimed (st 0 -> 1) by one thread and marked cooked
 * (st 2, release). The run's thread, in wi_tables_ready (once per
 * iteration, through stall_durations.ready), takes the blocks in the run's
 * order: a cooked one as it is, a free one it cooks itself, one being
 * cooked it waits for (spinning first: a block is about a millisecond).
 * While the epoch it needs is still being drawn, it works on the other
 * core instead of waiting: it populates the table's pages ahead of the
 * drawer (MADV_POPULATE_WRITE: the kernel's clearing of the pages moves off
 * the drawer; the memory's contents are not touched), then cooks the
 * epoch's cells in table order behind the drawer (`pre`, a prefix that the
 * drawer closes when the epoch is drawn; the blocks skip it). So the
 * drawing core is busy with the draws alone, the other with the cooking,
 * and once the epoch is drawn the run (one thread) finds about half of
 * every block cooked; the helpers cook the rest of each free block from
 * OVL_LEAD blocks past the run's (`want`), so that the run seldom waits
 * for the block it needs, then any left. Used only where no cell can fail
 * (wi_draw_max), so that the tables are what the serial fill gives and
 * wi_tables_build returns before they are complete. */

#define OVL_UNIT ((size_t)2 << 20) /* bytes populated at a time: a huge page */
#define OVL_LEAD 2                 /* blocks the helpers keep ahead of the run */
#define OVL_SPIN 4000              /* polls of a block being cooked before sleeping */

enum { OVL_FREE, OVL_CLAIMED, OVL_COOKED };
#define OVL_CLOSED ((size_t)1 << (sizeof(size_t) * 8 - 1))
#define OVL_BUSY ((size_t)1 << (sizeof(size_t) * 8 - 2))
#define OVL_PRE ((size_t)1 << 14) /* cells the run's thread cooks behind the drawer at a time */

struct wi_ovl {
    wi_tables *w;
    gsl_rng *rng; /* owned; the drawer's */
    wi_draw fd, cd;
    wi_xform x;
    size_t ecells; /* cells per epoch */
    int64_t bw;    /* batches per block */
    size_t nb;     /* blocks per epoch */
    size_t total;  /* blocks in all */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int drawn;         /* epochs whose raw draws are in */
    atomic_size_t drawn_at;   /* cells drawn (release) */
    atomic_int sleepers;      /* the run's thread waits for drawn_at to move (under mu) */
    atomic_size_t want;       /* the run's next block (relaxed: a hint to the helpers) */
    atomic_size_t fault_next; /* the next unit to populate */
    atomic_bool fault_off;    /* populating refused or not worth it */
    atomic_bool stop;         /* freed before the end: stop early */
    atomic_uchar *st;         /* [total]: OVL_FREE, OVL_CLAIMED, OVL_COOKED */
    atomic_size_t *pre;       /* [ne]: cells cooked from the epoch's start in table order by the
                                 run's thread while it is drawn (| OVL_BUSY while a chunk is
                                 cooked, | OVL_CLOSED once the drawer has ended it) */
    size_t ok;                /* the run's thread: blocks [0, ok) known cooked */
    pthread_t th[64];
    struct ovl_arg {
        struct wi_ovl *O;
        int idx; /* 0: the drawer */
    } arg[64];
    int nth;
};

static inline void ovl_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* Cooks cells [o0, o1) of the table in place. */
static void ovl_cook_cells(struct wi_ovl *O, size_t o0, size_t o1)
{
    wi_tables *w = O->w;
    for (size_t o = o0; o < o1; o++) {
        w->fetch[o] = wi_xform_fetch(&O->x, wi_draw_cook((uint64_t)w->fetch[o], &O->fd));
        if (w->compute)
            w->compute[o] = wi_xform_compute(&O->x, wi_draw_cook((uint64_t)w->compute[o], &O->cd));
    }
}

/* The run's thread, while epoch e is drawn: cooks the next OVL_PRE cells
 * of its prefix once the drawer is past them. 1: done; 0: the drawer is
 * not past them yet; -1: the prefix has ended (the drawer closed it, or it
 * reached the epoch's end). */
static int ovl_pre(struct wi_ovl *O, int e)
{
    size_t p = atomic_load_explicit(&O->pre[e], memory_order_relaxed);
    size_t e0 = (size_t)e * O->ecells;
    if ((p & OVL_CLOSED) || p + OVL_PRE > O->ecells)
        return -1;
    if (e0 + p + OVL_PRE > atomic_load_explicit(&O->drawn_at, memory_order_acquire))
        return 0;
    if (!atomic_compare_exchange_strong(&O->pre[e], &p, p | OVL_BUSY))
        return -1;
    ovl_cook_cells(O, e0 + p, e0 + p + OVL_PRE);
    size_t cur = p | OVL_BUSY;
    while (!atomic_compare_exchange_weak(&O->pre[e], &cur, (p + OVL_PRE) | (cur & OVL_CLOSED)))
        ;
    if (cur & OVL_CLOSED) {
        pthread_mutex_lock(&O->mu);
        pthread_cond_broadcast(&O->cv);
        pthread_mutex_unlock(&O->mu);
    }
    return 1;
}

/* Cooks block b, claimed by this thread. */
static void ovl_cook(struct wi_ovl *O, size_t b)
{
    wi_tables *w = O->w;
    size_t e = b / O->nb;
    int64_t k0 = (int64_t)(b % O->nb) * O->bw, k1 = k0 + O->bw < w->n ? k0 + O->bw : w->n;
    /* The epoch is drawn: its prefix is final, and cooked already. */
    size_t pre = atomic_load_explicit(&O->pre[e], memory_order_acquire) & ~OVL_CLOSED;
    for (int r = (int)(pre / (size_t)w->n); r < w->g; r++) {
        size_t local = (size_t)r * (size_t)w->n, base = e * O->ecells + local;
        int64_t from = local + (size_t)k0 >= pre ? k0 : (int64_t)(pre - local);
        for (int64_t k = from; k < k1; k++) {
            size_t o = base + (size_t)k;
            /* Cannot fail (wi_draw_max). */
            w->fetch[o] = wi_xform_fetch(&O->x, wi_draw_cook((uint64_t)w->fetch[o], &O->fd));
            if (w->compute)
                w->compute[o] =
                    wi_xform_compute(&O->x, wi_draw_cook((uint64_t)w->compute[o], &O->cd));
        }
    }
    pthread_mutex_lock(&O->mu);
    atomic_store_explicit(&O->st[b], OVL_COOKED, memory_order_release);
    pthread_cond_broadcast(&O->cv);
    pthread_mutex_unlock(&O->mu);
}

/* Claims the first free block in [from, to). */
static bool ovl_claim(struct wi_ovl *O, size_t from, size_t to, size_t *b)
{
    for (size_t i = from; i < to; i++) {
        unsigned char f = OVL_FREE;
        if (atomic_load_explicit(&O->st[i], memory_order_relaxed) == OVL_FREE &&
            atomic_compare_exchange_strong(&O->st[i], &f, OVL_CLAIMED)) {
            *b = i;
            return true;
        }
    }
    return false;
}

/* Blocks whose epochs are drawn. */
static size_t ovl_drawn_blocks(struct wi_ovl *O)
{
    return (size_t)atomic_load_explicit(&O->drawn, memory_order_acquire) * O->nb;
}

/* Populates the next unit ahead of the drawer; false when none is left. */
static bool ovl_fault(struct wi_ovl *O)
{
    wi_tables *w = O->w;
    size_t cells = O->ecells * (size_t)w->ne, per = OVL_UNIT / sizeof *w->fetch;
    while (!atomic_load_explicit(&O->fault_off, memory_order_relaxed)) {
        size_t u = atomic_fetch_add_explicit(&O->fault_next, 1, memory_order_relaxed);
        size_t c0 = u * per;
        if (c0 >= cells)
            return false;
        if (c0 + per <= atomic_load_explicit(&O->drawn_at, memory_order_relaxed))
            continue; /* the drawer is past it */
        size_t c1 = c0 + per < cells ? c0 + per : cells;
        for (int t = 0; t < 2; t++) {
            stall_time *tab = t == 0 ? w->fetch : w->compute;
            if (!tab)
                continue;
            /* Whole pages inside the table only. */
            uintptr_t a = ((uintptr_t)(tab + c0) + 4095) & ~(uintptr_t)4095;
            uintptr_t z = (uintptr_t)(tab + c1) & ~(uintptr_t)4095;
            if (z > a && madvise((void *)a, z - a, MADV_POPULATE_WRITE) != 0)
                atomic_store(&O->fault_off, true);
        }
        return true;
    }
    return false;
}

/* The first helper: the raw draws, epoch after epoch. */
static void ovl_draw(struct wi_ovl *O)
{
    wi_tables *w = O->w;
    for (int e = 0; e < w->ne; e++) {
        size_t e0 = (size_t)e * O->ecells;
        for (size_t o0 = e0; o0 < e0 + O->ecells; o0 += FILL_CHUNK) {
            if (atomic_load_explicit(&O->stop, memory_order_relaxed))
                return;
            size_t m = e0 + O->ecells - o0 < FILL_CHUNK ? e0 + O->ecells - o0 : FILL_CHUNK;
            wi_draw_raw_cells(O->rng, &O->fd, &O->cd, w->fetch + o0,
                              w->compute ? w->compute + o0 : NULL, m);
            atomic_store(&O->drawn_at, o0 + m);
            if (atomic_load(&O->sleepers)) {
                pthread_mutex_lock(&O->mu);
                pthread_cond_broadcast(&O->cv);
                pthread_mutex_unlock(&O->mu);
            }
        }
        /* The prefix ends here; a chunk being cooked is waited out (its
         * cook wakes this thread when it sees OVL_CLOSED). */
        pthread_mutex_lock(&O->mu);
        if (atomic_fetch_or(&O->pre[e], OVL_CLOSED) & OVL_BUSY)
            while (atomic_load(&O->pre[e]) & OVL_BUSY)
                pthread_cond_wait(&O->cv, &O->mu);
        atomic_store_explicit(&O->drawn, e + 1, memory_order_release);
        pthread_cond_broadcast(&O->cv);
        pthread_mutex_unlock(&O->mu);
    }
}

/* A helper's cooking: the free blocks of the drawn epochs, from OVL_LEAD
 * past the run's, then any left, until every block is claimed. */
static void ovl_cook_all(struct wi_ovl *O)
{
    size_t h = 0, b;
    for (;;) {
        if (atomic_load_explicit(&O->stop, memory_order_relaxed))
            return;
        size_t lim = ovl_drawn_blocks(O);
        size_t want = atomic_load_explicit(&O->want, memory_order_relaxed);
        size_t from = h > want + OVL_LEAD ? h : want + OVL_LEAD;
        if (ovl_claim(O, from, lim, &b) || ovl_claim(O, want, lim, &b)) {
            ovl_cook(O, b);
            h = b + 1;
            continue;
        }
        if (lim == O->total) {
            /* All drawn: whatever the run passed over is cooked or claimed
             * already (it takes the blocks in order). */
            if (ovl_claim(O, 0, O->total, &b)) {
                ovl_cook(O, b);
                continue;
            }
            return;
        }
        pthread_mutex_lock(&O->mu);
        while (ovl_drawn_blocks(O) == lim && !atomic_load(&O->stop))
            pthread_cond_wait(&O->cv, &O->mu);
        pthread_mutex_unlock(&O->mu);
    }
}

static void *ovl_helper(void *arg)
{
    const struct ovl_arg *a = arg;
    struct wi_ovl *O = a->O;
    if (a->idx == 0)
        ovl_draw(O);
    else
        while (atomic_load_explicit(&O->drawn, memory_order_acquire) < O->w->ne && ovl_fault(O))
            ;
    ovl_cook_all(O);
    return NULL;
}

bool wi_tables_ovl_on(const wi_draw *fd, const wi_draw *cd)
{
    return wi_draw_max(fd) >= 0 && wi_draw_max(cd) >= 0;
}

void wi_tables_ovl_start(wi_tables *w, gsl_rng *rng, const wi_draw *fd, const wi_draw *cd,
                         const wi_xform *x, int threads)
{
    struct wi_ovl *O = stall_xcalloc(1, sizeof *O);
    O->w = w;
    O->rng = rng;
    O->fd = *fd;
    O->cd = *cd;
    O->x = *x;
    O->ecells = (size_t)w->g * (size_t)w->n;
    int64_t bw = (65536 + w->g - 1) / w->g;
    O->bw = bw < w->n ? bw : w->n;
    O->nb = (size_t)((w->n + O->bw - 1) / O->bw);
    O->total = O->nb * (size_t)w->ne;
    O->st = stall_xmalloc(O->total * sizeof *O->st);
    for (size_t b = 0; b < O->total; b++)
        atomic_init(&O->st[b], OVL_FREE);
    O->pre = stall_xmalloc((size_t)w->ne * sizeof *O->pre);
    for (int e = 0; e < w->ne; e++)
        atomic_init(&O->pre[e], 0);
    atomic_init(&O->drawn, 0);
    atomic_init(&O->drawn_at, 0);
    atomic_init(&O->sleepers, 0);
    atomic_init(&O->want, 0);
    atomic_init(&O->fault_next, 0);
    atomic_init(&O->fault_off, O->ecells * (size_t)w->ne * sizeof *w->fetch < 2 * OVL_UNIT);
    atomic_init(&O->stop, false);
    pthread_mutex_init(&O->mu, NULL);
    pthread_cond_init(&O->cv, NULL);
    w->ovl = O;
    int nt = threads - 1 < 64 ? threads - 1 : 64;
    for (int t = 0; t < nt; t++) {
        O->arg[t] = (struct ovl_arg){.O = O, .idx = t};
        if (pthread_create(&O->th[t], NULL, ovl_helper, &O->arg[t]) != 0)
            break;
        O->nth++;
    }
    if (O->nth == 0)
        ovl_draw(O); /* no helper: the draws here, the cooking in the run */
}

void wi_tables_ready(wi_tables *w, int e, int64_t k)
{
    struct wi_ovl *O = w->ovl;
    if (!O)
        return;
    if (k >= w->n)
        k = w->n - 1;
    size_t need = (size_t)e * O->nb + (size_t)(k / O->bw);
    while (O->ok <= need) {
        size_t b = O->ok;
        unsigned char s = atomic_load_explicit(&O->st[b], memory_order_acquire);
        if (s == OVL_COOKED) {
            O->ok++;
            atomic_store_explicit(&O->want, O->ok, memory_order_relaxed);
            continue;
        }
        if (b >= ovl_drawn_blocks(O)) {
            /* Its epoch is still being drawn: populate ahead, else sleep. */
            int pr = ovl_fault(O) ? 1 : ovl_pre(O, (int)(b / O->nb));
            if (pr > 0)
                continue;
            if (pr == 0) {
                /* The drawer is less than a chunk ahead: wait for the next
                 * (the drawer reads sleepers after it moves drawn_at, this
                 * thread drawn_at after it raised sleepers: one of the two
                 * sees the other's). */
                size_t at = atomic_load(&O->drawn_at);
                pthread_mutex_lock(&O->mu);
                atomic_fetch_add(&O->sleepers, 1);
                while (atomic_load(&O->drawn_at) == at && b >= ovl_drawn_blocks(O))
                    pthread_cond_wait(&O->cv, &O->mu);
                atomic_fetch_sub(&O->sleepers, 1);
                pthread_mutex_unlock(&O->mu);
                continue;
            }
            pthread_mutex_lock(&O->mu);
            while (b >= ovl_drawn_blocks(O))
                pthread_cond_wait(&O->cv, &O->mu);
            pthread_mutex_unlock(&O->mu);
            continue;
        }
        if (s == OVL_FREE) {
            if (atomic_compare_exchange_strong(&O->st[b], &s, OVL_CLAIMED))
                ovl_cook(O, b);
            continue;
        }
        /* Being cooked by a helper. */
        for (int i = 0;
             i < OVL_SPIN && atomic_load_explicit(&O->st[b], memory_order_relaxed) != OVL_COOKED;
             i++)
            ovl_pause();
        pthread_mutex_lock(&O->mu);
        while (atomic_load_explicit(&O->st[b], memory_order_acquire) != OVL_COOKED)
            pthread_cond_wait(&O->cv, &O->mu);
        pthread_mutex_unlock(&O->mu);
    }
}

/* Joins the helpers and frees the fill's state; the tables stay. */
static void ovl_end(wi_tables *w)
{
    struct wi_ovl *O = w->ovl;
    for (int t = 0; t < O->nth; t++)
        pthread_join(O->th[t], NULL);
    gsl_rng_free(O->rng);
    pthread_mutex_destroy(&O->mu);
    pthread_cond_destroy(&O->cv);
    free(O->st);
    free(O->pre);
    free(O);
    w->ovl = NULL;
}

void wi_tables_finish(wi_tables *w)
{
    if (!w->ovl)
        return;
    wi_tables_ready(w, w->ne - 1, w->n - 1);
    ovl_end(w);
}

void wi_tables_abandon(wi_tables *w)
{
    if (!w->ovl)
        return;
    struct wi_ovl *O = w->ovl;
    pthread_mutex_lock(&O->mu);
    atomic_store(&O->stop, true);
    pthread_cond_broadcast(&O->cv);
    pthread_mutex_unlock(&O->mu);
    ovl_end(w);
}

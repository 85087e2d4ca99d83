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
#include "feed.h"

#include "draw.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define FILL_CHUNK ((size_t)1 << 15)

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

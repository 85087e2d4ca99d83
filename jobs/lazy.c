/*
 * lazy.c - the duration tables of a run beyond its trace, resampled with
 * bootstrap, drawn as the run asks for them instead of laid out whole (see
 * feed.h, wi_lazy_new).
 *
 * wi_tables_build's serial loop draws, cell after cell in (epoch, rank,
 * batch) order, a fetch and then a compute pool index from one mt19937
 * stream for every cell beyond the trace. A bootstrap draw cannot fail and
 * its value is a pure function of the two indices and of the cell's place,
 * so nothing needs the values before the run asks for them: what fixes them
 * is where the stream stands at each cell. A first pass walks the stream
 * through every drawn cell, as the loop does, and keeps its state where
 * each row (an epoch and a rank) begins its drawn cells; a row then draws
 * its own cells from a copy of that state when first asked, a chunk at a
 * time, keeping a window of recent cells. The model asks each rank's cells
 * nearly in order (compute at batch k, fetch up to the P x W batches in
 * flight ahead of it), so a window of a few chunks serves it; an ask behind
 * the window draws the row again from its start, and one close behind it
 * (a window too small for the batches in flight) doubles the row's window
 * first, so that each row restarts only a few times.
 *
 * Memory: two generator states (5 KB each) and the window (16 B per cell,
 * 512 cells at first) per row, against 16 B per cell of the whole tables:
 * wi_tables_build takes this way only where rows are long (WI_LAZY_BATCHES),
 * and its memory check counts these (wi_lazy_bytes), not the tables.
 * Time: the stream is walked twice (the first pass only advances it), both
 * times with GSL's mt19937 run inline (draw.h, wi_draw_uniform_ints), and a
 * row's pool reads, which miss the cache, are gathered per chunk after its
 * indices are drawn, so that they overlap.
 * Each row's state is its own: threads may ask for different ranks at once
 * (models/model_par.c splits ranks by node), never for one rank.
 */
#include "feed.h"

#include "draw.h"
#include "stall/limits.h"

#include <gsl/gsl_rng.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Cells drawn at a time, and a row's first window (two chunks). */
#define LZ_CHUNK ((int64_t)256)

typedef struct lz_row {
    gsl_rng *start; /* the stream where the row's first drawn cell begins; NULL: none drawn */
    gsl_rng *rng;   /* where its cell hi begins; NULL until the row is first asked */
    int64_t lo, hi; /* the window: cells [lo, hi) at f[k - lo], c[k - lo] */
    int64_t cap;    /* cells the window holds, a multiple of LZ_CHUNK */
    stall_time *f, *c;
} lz_row;

struct wi_lazy {
    int g, ne, mr, me;
    int64_t n, mb;
    stall_time *mf, *mc; /* the trace's cells [(e * mr + r) * mb + k] (copies) */
    stall_time *pf, *pc; /* the pools, npool each (copies) */
    size_t npool;
    wi_xform x;
    bool same; /* x changes no duration of the pools (none is negative) */
    int64_t lb, mlast, lnum;
    lz_row *rows; /* [e * g + r] */
};

static bool lz_measured(const wi_lazy *z, int e, int r, int64_t k)
{
    return e < z->me && r < z->mr && k < z->mb;
}

/* The row's first drawn cell. */
static int64_t lz_first(const wi_lazy *z, int e, int r)
{
    return e < z->me && r < z->mr ? z->mb : 0;
}

static stall_time *lz_dup(const stall_time *v, size_t n)
{
    stall_time *d = stall_xmalloc_big(n * sizeof *d);
    memcpy(d, v, n * sizeof *d);
    return d;
}

size_t wi_lazy_bytes(int g, int ne, size_t mcells, size_t npool, bool own_pools)
{
    /* per row: its two generators and first window, as lz_seek allocates them */
    size_t gen = sizeof(gsl_rng) + gsl_rng_mt19937->size;
    size_t row = sizeof(lz_row) + 2 * gen + 2 * (size_t)LZ_CHUNK * 2 * sizeof(stall_time);
    size_t rows, a, b, w;
    if (!stall_size_mul((size_t)ne, (size_t)g, &rows) || !stall_size_mul(rows, row, &a) ||
        !stall_size_mul(mcells + (own_pools ? npool : 0), 2 * sizeof(stall_time), &b) ||
        __builtin_add_overflow(a, b, &w) || __builtin_add_overflow(w, sizeof(wi_lazy), &w))
        return SIZE_MAX;
    return w;
}

/* A copy of a generator; out of memory aborts, as stall_xmalloc does. */
static gsl_rng *lz_clone(const gsl_rng *rng)
{
    gsl_rng *c = gsl_rng_clone(rng);
    if (!c) {
        fprintf(stderr, "stallsim: out of memory (a copy of a random generator)\n");
        abort();
    }
    return c;
}

wi_lazy *wi_lazy_new(const wi_lazy_src *s, gsl_rng *rng)
{
    const stall_measured *m = s->m;
    wi_lazy *z = stall_xcalloc(1, sizeof *z);
    z->g = s->g;
    z->ne = s->ne;
    z->n = s->n;
    z->mr = m->ranks;
    z->me = m->epochs;
    z->mb = m->batches;
    size_t mcells = (size_t)m->epochs * (size_t)m->ranks * (size_t)m->batches;
    z->mf = lz_dup(m->fetch, mcells);
    z->mc = lz_dup(m->compute, mcells);
    z->npool = s->npool;
    z->pf = s->pf == m->fetch ? z->mf : lz_dup(s->pf, s->npool);
    z->pc = s->pc == m->compute ? z->mc : lz_dup(s->pc, s->npool);
    z->x = s->x;
    z->same = s->x.fscale == 1.0 && s->x.cscale == 1.0 && s->x.unturn == 0;
    z->lb = s->lb;
    z->mlast = s->mlast;
    z->lnum = s->lnum;
    z->rows = stall_xcalloc((size_t)s->ne * (size_t)s->g, sizeof *z->rows);
    /* The stream through every drawn cell, in the serial loop's order. */
    for (int e = 0; e < z->ne; e++)
        for (int r = 0; r < z->g; r++) {
            int64_t k0 = lz_first(z, e, r);
            if (k0 >= z->n)
                continue;
            lz_row *row = &z->rows[(size_t)e * (size_t)z->g + (size_t)r];
            row->start = lz_clone(rng);
            wi_draw_uniform_ints(rng, z->npool, NULL, 2 * (size_t)(z->n - k0));
        }
    return z;
}

void wi_lazy_free(wi_lazy *z)
{
    if (!z)
        return;
    size_t rows = (size_t)z->ne * (size_t)z->g;
    for (size_t i = 0; i < rows; i++) {
        if (z->rows[i].start)
            gsl_rng_free(z->rows[i].start);
        if (z->rows[i].rng)
            gsl_rng_free(z->rows[i].rng);
        free(z->rows[i].f);
        free(z->rows[i].c);
    }
    free(z->rows);
    if (z->pf != z->mf)
        free(z->pf);
    if (z->pc != z->mc)
        free(z->pc);
    free(z->mf);
    free(z->mc);
    free(z);
}

/* Draws cells [row->hi, row->hi + cnt) into the window at row->hi - lo:
 * the stream's indices first, then the pool reads, which do not wait on
 * one another. A drawn cell is charged by the samples its own batch holds
 * (from the pools of full batches), as the serial loop charges it. */
static void lz_draw(const wi_lazy *z, lz_row *row, int64_t cnt)
{
    size_t at = (size_t)(row->hi - row->lo);
    stall_time *f = row->f + at, *c = row->c + at;
    int64_t idx[2 * LZ_CHUNK]; /* a fetch's index, then its compute's */
    for (int64_t i0 = 0; i0 < cnt; i0 += LZ_CHUNK) {
        int64_t m = cnt - i0 < LZ_CHUNK ? cnt - i0 : LZ_CHUNK;
        wi_draw_uniform_ints(row->rng, z->npool, idx, 2 * (size_t)m);
        for (int64_t i = 0; i < m; i++) {
            f[i0 + i] = z->pf[idx[2 * i]];
            c[i0 + i] = z->pc[idx[2 * i + 1]];
        }
    }
    for (int64_t i = 0; i < cnt && !z->same; i++) {
        f[i] = wi_xform_fetch(&z->x, f[i]);
        c[i] = wi_xform_compute(&z->x, c[i]);
    }
    /* every drawn cell holds a full batch but each rank's last */
    int64_t last = z->n - 1 - row->hi;
    if (last < cnt) {
        f[last] = wi_part(f[last], z->lnum, z->lb);
        c[last] = wi_part(c[last], z->lnum, z->lb);
    }
    row->hi += cnt;
}

/* Makes the window of row (e, r) hold cell k. */
static void lz_seek(const wi_lazy *z, int e, int r, lz_row *row, int64_t k)
{
    if (!row->rng || k < row->lo) {
        int64_t k0 = lz_first(z, e, r);
        /* Asked close behind its window: the window is too small for the
         * batches in flight; a larger one stops the restarts. */
        if (row->rng && row->hi - k <= 2 * row->cap && row->cap < z->n)
            row->cap *= 2;
        if (!row->cap)
            row->cap = 2 * LZ_CHUNK;
        free(row->f);
        free(row->c);
        row->f = stall_xmalloc((size_t)row->cap * sizeof *row->f);
        row->c = stall_xmalloc((size_t)row->cap * sizeof *row->c);
        if (!row->rng) {
            row->rng = lz_clone(row->start);
        } else {
            gsl_rng_memcpy(row->rng, row->start);
        }
        row->lo = row->hi = k0;
    }
    int64_t chunk = row->cap / 2;
    while (k >= row->hi) {
        int64_t cnt = z->n - row->hi < chunk ? z->n - row->hi : chunk;
        int64_t drop = row->hi - row->lo + cnt - row->cap;
        if (drop > 0) {
            size_t keep = (size_t)(row->hi - row->lo - drop);
            memmove(row->f, row->f + drop, keep * sizeof *row->f);
            memmove(row->c, row->c + drop, keep * sizeof *row->c);
            row->lo += drop;
        }
        lz_draw(z, row, cnt);
    }
}

/* The trace's own cell, transformed and charged as the serial loop does. */
static stall_time lz_meas(const wi_lazy *z, const stall_time *v, bool fetch, int e, int r,
                          int64_t k)
{
    size_t i = ((size_t)e * (size_t)z->mr + (size_t)r) * (size_t)z->mb + (size_t)k;
    stall_time t = fetch ? wi_xform_fetch(&z->x, v[i]) : wi_xform_compute(&z->x, v[i]);
    int64_t num = k == z->n - 1 ? z->lnum : z->lb, den = k == z->mb - 1 ? z->mlast : z->lb;
    return wi_part(t, num, den);
}

stall_time wi_lazy_fetch(wi_lazy *z, int e, int r, int64_t k)
{
    if (lz_measured(z, e, r, k))
        return lz_meas(z, z->mf, true, e, r, k);
    lz_row *row = &z->rows[(size_t)e * (size_t)z->g + (size_t)r];
    if (k < row->lo || k >= row->hi)
        lz_seek(z, e, r, row, k);
    return row->f[k - row->lo];
}

stall_time wi_lazy_compute(wi_lazy *z, int e, int r, int64_t k)
{
    if (lz_measured(z, e, r, k))
        return lz_meas(z, z->mc, false, e, r, k);
    lz_row *row = &z->rows[(size_t)e * (size_t)z->g + (size_t)r];
    if (k < row->lo || k >= row->hi)
        lz_seek(z, e, r, row, k);
    return row->c[k - row->lo];
}

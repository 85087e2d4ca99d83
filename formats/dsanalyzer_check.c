/*
 * dsanalyzer_check.c - the first pass of a stall_ds_stream: every check of
 * stall_ds_load run while the three files are read side by side, once each,
 * handing out the selected epoch's batches as they are found good (issue 21;
 * before, stall_ds_open read fetch three times and start and perf once in
 * its check passes, and the batch pass read all three again).
 *
 * The perf rows drive: each group of rows with one (Epoch, Step) is matched
 * against the next fetch/start row pair of the selected epoch (the cursor),
 * as the third check pass did; the pairs are read in lockstep and merged as
 * stall_ds_load's dsa_same_keys merges its key arrays. A batch is handed out
 * when its perf group closes (the first row of the next group, or the end)
 * and nothing is wrong so far.
 *
 * The first error: stall_ds_load reads fetch whole, then checks its header and
 * keys, then start, the merge, the epoch, the values, then perf. Reading the
 * three side by side finds them in another order, so each kind keeps its first
 * error in a slot (dsc_slot, in stall_ds_load's order), and a pass that finds
 * one reads on only as far as an error of an earlier slot could still be found
 * (a file is read to its end while a slot of its own comes before the best so
 * far). The error given is that of the earliest slot: the same one, with the
 * same message, as stall_ds_load's. Within a slot the first found is first in
 * file order, except for duplicates and perf problems, which are kept as the
 * third check pass kept them (the smallest (Epoch, GPU, Step), the smallest
 * GPU's first problem) and given at the end.
 * The clock check of start against perf (dsa_clock) comes after all of
 * these, as in stall_ds_load: it runs on each batch about to be handed out,
 * and the first batch that fails it stops the handing out and is given
 * only when nothing else was found.
 *
 * Memory: O(G) beside a line of each file.
 */
#include "stall/dsanalyzer.h"

#include "stall/limits.h"

#include <stdlib.h>
#include <string.h>

#include "dsanalyzer_int.h"

/* The kinds of error, in the order stall_ds_load finds them. */
enum dsc_slot {
    DSC_FTEXT, /* fetch: open, text */
    DSC_FHDR,
    DSC_FKEY,
    DSC_STEXT, /* start */
    DSC_SHDR,
    DSC_SKEY,
    DSC_MISS,  /* a key in one of fetch and start only */
    DSC_NOEP,  /* no row of the selected epoch */
    DSC_FSVAL, /* a fetch or start value */
    DSC_PTEXT, /* perf */
    DSC_PHDR,
    DSC_PKEY,
    DSC_UNSORT, /* perf rows out of (Epoch, Step) order: STALL_DS_UNSORTED */
    DSC_NONE
};

/* What went wrong with one GPU's rows of the selected epoch first, in
 * stall_ds_load's (GPU, batch) order. */
typedef struct dsc_prob {
    int kind; /* 0 none, DSC_EXTRA, DSC_MISSING, DSC_VALUE */
    int64_t step;
    long line;    /* DSC_EXTRA: the perf line; DSC_MISSING: the fetch line */
    int at;       /* DSC_MISSING: where in perf the row belongs (DSA_AT_*), */
    long at_line; /* on this perf line */
} dsc_prob;

enum { DSC_EXTRA = 1, DSC_MISSING, DSC_VALUE };

struct dsa_check {
    const char *fetch_path, *start_path, *perf_path;
    int64_t epoch;
    int G;
    dsa_cols *fc, *sc, *pc; /* the stream's */
    dsa_file f, s, p;
    stall_err ferr, serr, perr; /* the files' own errors */
    int fend, send, pdone;      /* read to the end (or given up) */
    int best, best_rc;          /* the earliest slot with an error */
    stall_err best_err;
    /* fetch and start, side by side */
    dsa_key fk, sk;
    int paired; /* 0: the merge goes on; 1: ended (the end, or an error) */
    size_t lo, n;
    /* the cursor: the pair of the selected epoch being matched */
    int cvalid, cdone;
    int64_t cix;
    long cline, csline; /* the pair's fetch and start lines */
    double *cf;
    stall_time *cs;
    /* perf */
    dsc_prob *prob;
    int nprob, vg; /* vg: the smallest GPU with a DSC_VALUE problem (G: none) */
    stall_err verr;
    uint64_t *seen, gid;
    long *seen_line;
    stall_time *gt;
    double *gi, *gs;
    dsa_prow cur, dup;
    long gline, last_line; /* the group's first perf line; the last row's */
    long dup_line, dup_first;
    int gmatch, have_dup;
    /* the clocks of start and perf (the last check) */
    stall_time *q0;
    long *q0_line;
    int have_clock;
    stall_err clock_err;
    /* the batch handed out next */
    int ready;
    size_t handed;
};

static void dsc_set(dsa_check *c, int slot, int rc, const stall_err *e)
{
    if (slot >= c->best)
        return;
    c->best = slot;
    c->best_rc = rc;
    if (e)
        c->best_err = *e;
}

/* Records the error that a check wrote into scratch. */
static void dsc_set_rc(dsa_check *c, int slot, int rc, const stall_err *scratch)
{
    if (rc)
        dsc_set(c, slot, rc, scratch);
}

static int dsc_clean(const dsa_check *c)
{
    return c->best == DSC_NONE && !c->have_dup && c->nprob == 0 && !c->have_clock;
}

/* ---- fetch and start -------------------------------------------------- */

/* The next row of a file, or 0 at its end or error (recorded in slot). */
static int dsc_row(dsa_check *c, dsa_file *d, int *end, stall_err *derr, int slot, size_t *row)
{
    if (*end)
        return 0;
    int rc = dsa_next(d, row);
    if (rc == 1)
        return 1;
    *end = 1;
    if (rc)
        dsc_set(c, slot, rc, derr);
    return 0;
}

/* The next fetch row and start row side by side, merged as dsa_same_keys
 * merges them. Returns 1 for a pair with the same key (in c->fk; its values
 * in cf/cs when of the selected epoch), 0 when the merge has ended. */
static int dsc_pair(dsa_check *c)
{
    if (c->paired)
        return 0;
    size_t fr = 0, sr = 0;
    stall_err e;
    int fh = c->best > DSC_FTEXT && dsc_row(c, &c->f, &c->fend, &c->ferr, DSC_FTEXT, &fr);
    if (fh && c->best > DSC_FKEY)
        dsc_set_rc(c, DSC_FKEY, dsa_key_row(&c->f.t, fr, c->fc->ce, c->fc->ci, &c->fk, &e), &e);
    int sh = c->best > DSC_STEXT && dsc_row(c, &c->s, &c->send, &c->serr, DSC_STEXT, &sr);
    if (sh && c->best > DSC_SKEY)
        dsc_set_rc(c, DSC_SKEY, dsa_key_row(&c->s.t, sr, c->sc->ce, c->sc->ci, &c->sk, &e), &e);
    if (c->best <= DSC_MISS || (!fh && !sh)) {
        c->paired = 1;
        return 0;
    }
    int cmp = !fh                    ? 1
              : !sh                  ? -1
              : c->fk.ep != c->sk.ep ? (c->fk.ep < c->sk.ep ? -1 : 1)
                                     : (c->fk.ix > c->sk.ix) - (c->fk.ix < c->sk.ix);
    if (cmp) {
        const dsa_key *k = cmp < 0 ? &c->fk : &c->sk;
        dsa_key_missing(cmp < 0 ? c->fetch_path : c->start_path, k->line,
                        (cmp < 0 ? c->fc->ci : c->sc->ci) + 1, k->ep, k->ix,
                        cmp < 0 ? c->start_path : c->fetch_path, &e);
        dsc_set(c, DSC_MISS, STALL_EPARSE, &e);
        c->paired = 1;
        return 0;
    }
    int in = c->fk.ep == c->epoch;
    c->lo += c->fk.ep < c->epoch;
    c->n += in;
    if (c->best > DSC_FSVAL) {
        int rc = dsa_fs_values(&c->f.t, fr, c->fc, &c->s.t, sr, c->sc, c->G, in ? c->cf : NULL,
                               in ? c->cs : NULL, &e);
        dsc_set_rc(c, DSC_FSVAL, rc, &e);
    }
    return 1;
}

/* Moves the cursor to the next pair of the selected epoch. */
static void dsc_cursor(dsa_check *c)
{
    c->cvalid = 0;
    while (!c->cdone && dsc_pair(c) == 1) {
        if (c->fk.ep == c->epoch) {
            c->cvalid = 1;
            c->cix = c->fk.ix;
            c->cline = c->fk.line;
            c->csline = c->sk.line;
            return;
        }
        if (c->fk.ep > c->epoch)
            break;
    }
    c->cdone = 1;
}

/* ---- perf --------------------------------------------------------------- */

/* Every GPU without a problem so far misses the cursor's step, whose rows
 * belong at perf line `line` (at: DSA_AT_BEFORE or DSA_AT_END). */
static void dsc_missing_all(dsa_check *c, int at, long line)
{
    for (int g = 0; g < c->G; g++)
        if (!c->prob[g].kind) {
            c->prob[g] = (dsc_prob){
                .kind = DSC_MISSING, .step = c->cix, .line = c->cline, .at = at, .at_line = line};
            c->nprob++;
        }
}

/* The group that matched the cursor has ended: a GPU without a row misses
 * one; the batch is handed out when all is well; the cursor moves on. */
static void dsc_close(dsa_check *c, stall_ds_trace *v)
{
    for (int g = 0; g < c->G; g++)
        if (c->seen[g] != c->gid && !c->prob[g].kind) {
            c->prob[g] = (dsc_prob){.kind = DSC_MISSING,
                                    .step = c->cix,
                                    .line = c->cline,
                                    .at = DSA_AT_STEP,
                                    .at_line = c->gline};
            c->nprob++;
        }
    if (dsc_clean(c)) {
        size_t G = (size_t)c->G;
        v->index[0] = c->cix;
        memcpy(v->fetch_s, c->cf, G * sizeof *c->cf);
        memcpy(v->start_ns, c->cs, G * sizeof *c->cs);
        memcpy(v->time_ns, c->gt, G * sizeof *c->gt);
        memcpy(v->iter_s, c->gi, G * sizeof *c->gi);
        memcpy(v->stall_s, c->gs, G * sizeof *c->gs);
        v->label0 = c->lo + c->handed;
        if (c->handed == 0)
            for (int g = 0; g < c->G; g++) {
                c->q0[g] = stall_ds_request(v, 0, g);
                c->q0_line[g] = c->seen_line[g];
            }
        if (dsa_clock(c->start_path, c->csline, c->sc, c->perf_path, c->seen_line, v, 0, c->q0,
                      c->q0_line, &c->clock_err))
            c->have_clock = 1;
        else
            c->ready = 1;
    }
    dsc_cursor(c);
}

/* One perf row (the last, at the end: pr NULL), as the third check pass
 * of stall_ds_open took it. */
static void dsc_perf_row(dsa_check *c, const dsa_prow *pr, size_t row, stall_ds_trace *v)
{
    if (!pr) {
        if (c->gmatch)
            dsc_close(c, v);
        while (c->cvalid) {
            dsc_missing_all(c, DSA_AT_END, c->last_line);
            dsc_cursor(c);
        }
        return;
    }
    long line = c->p.t.line[row];
    c->last_line = line;
    if (c->gid == 0 || pr->epoch != c->cur.epoch || pr->step != c->cur.step) {
        if (c->gid &&
            (pr->epoch < c->cur.epoch || (pr->epoch == c->cur.epoch && pr->step < c->cur.step))) {
            dsc_set(c, DSC_UNSORT, STALL_DS_UNSORTED, NULL);
            return;
        }
        /* A new step: close the last one, and place this one. */
        if (c->gmatch)
            dsc_close(c, v);
        c->gid++;
        c->cur = *pr;
        c->gline = line;
        c->gmatch = 0;
        /* The steps of the selected epoch before this one that perf lacks
         * belong before this line. */
        while (c->cvalid &&
               (pr->epoch > c->epoch || (pr->epoch == c->epoch && c->cix < pr->step))) {
            dsc_missing_all(c, DSA_AT_BEFORE, line);
            dsc_cursor(c);
        }
        c->gmatch = pr->epoch == c->epoch && c->cvalid && c->cix == pr->step;
    }
    int g = (int)pr->gpu;
    if (c->seen[g] == c->gid) {
        if (!c->have_dup || dsa_prow_cmp(pr, &c->dup) < 0) {
            c->have_dup = 1;
            c->dup = *pr;
            c->dup_line = line;
            c->dup_first = c->seen_line[g];
        }
        return;
    }
    c->seen[g] = c->gid;
    c->seen_line[g] = line;
    if (pr->epoch != c->epoch || c->prob[g].kind)
        return;
    if (!c->gmatch) {
        c->prob[g] = (dsc_prob){.kind = DSC_EXTRA, .step = pr->step, .line = line};
        c->nprob++;
        return;
    }
    stall_err e;
    if (dsa_perf_values(&c->p.t, row, c->pc, &c->gt[g], &c->gi[g], &c->gs[g], &e)) {
        c->prob[g] = (dsc_prob){.kind = DSC_VALUE};
        c->nprob++;
        if (g < c->vg) {
            c->vg = g;
            c->verr = e;
        }
    }
}

/* Reads the next perf row and takes it; sets c->pdone at the end of what
 * is worth reading of perf. */
static void dsc_perf_next(dsa_check *c, stall_ds_trace *v)
{
    size_t row;
    if (c->best < DSC_PTEXT || !dsc_row(c, &c->p, &c->pdone, &c->perr, DSC_PTEXT, &row)) {
        if (c->best > DSC_UNSORT)
            dsc_perf_row(c, NULL, 0, v);
        c->pdone = 1;
        return;
    }
    if (c->best <= DSC_PKEY)
        return;
    dsa_prow pr;
    stall_err e;
    int rc = dsa_perf_key(&c->p.t, row, c->pc, c->G, c->fetch_path, &pr, &e);
    if (rc)
        dsc_set(c, DSC_PKEY, rc, &e);
    else if (c->best > DSC_UNSORT)
        dsc_perf_row(c, &pr, row, v);
}

/* ---- the pass ------------------------------------------------------------ */

static int dsc_open(dsa_check *c, dsa_file *d, const char *path, stall_err *derr, int *end,
                    int slot)
{
    int rc = dsa_open(path, 0, d, derr);
    if (rc) {
        *end = 1;
        dsc_set(c, slot, rc, derr);
    }
    return rc;
}

int dsa_check_open(const char *fetch_csv, const char *start_csv, const char *perf_csv,
                   int64_t epoch, dsa_cols *fc, dsa_cols *sc, dsa_cols *pc, int *G, dsa_check **out,
                   stall_err *err)
{
    dsa_check *c = stall_xcalloc(1, sizeof *c);
    c->fetch_path = fetch_csv;
    c->start_path = start_csv;
    c->perf_path = perf_csv;
    c->epoch = epoch;
    c->fc = fc;
    c->sc = sc;
    c->pc = pc;
    c->best = DSC_NONE;
    c->last_line = 1; /* perf's header, while it has no row */
    /* An error in fetch's header line comes before anything. */
    int rc = dsa_open(fetch_csv, 0, &c->f, &c->ferr);
    if (rc) {
        if (err)
            *err = c->ferr;
        free(c);
        return rc;
    }
    stall_err e;
    dsc_set_rc(c, DSC_FHDR, dsa_fetch_header(&c->f.t, fc, &c->G, &e), &e);
    if (c->best > DSC_STEXT && !dsc_open(c, &c->s, start_csv, &c->serr, &c->send, DSC_STEXT))
        dsc_set_rc(c, DSC_SHDR, dsa_start_header(&c->s.t, c->G, fetch_csv, sc, &e), &e);
    if (c->best > DSC_PTEXT && !dsc_open(c, &c->p, perf_csv, &c->perr, &c->pdone, DSC_PTEXT))
        dsc_set_rc(c, DSC_PHDR, dsa_perf_header(&c->p.t, pc, &e), &e);
    /* A file not opened (an earlier slot's error) is not read. */
    if (c->best < DSC_STEXT)
        c->send = 1;
    if (c->best < DSC_PTEXT)
        c->pdone = 1;
    const size_t n = c->G > 0 ? (size_t)c->G : 1;
    c->vg = c->G;
    c->cf = stall_xcalloc(n, sizeof *c->cf);
    c->cs = stall_xcalloc(n, sizeof *c->cs);
    c->gt = stall_xcalloc(n, sizeof *c->gt);
    c->gi = stall_xcalloc(n, sizeof *c->gi);
    c->gs = stall_xcalloc(n, sizeof *c->gs);
    c->prob = stall_xcalloc(n, sizeof *c->prob);
    c->seen = stall_xcalloc(n, sizeof *c->seen);
    c->seen_line = stall_xcalloc(n, sizeof *c->seen_line);
    c->q0 = stall_xcalloc(n, sizeof *c->q0);
    c->q0_line = stall_xcalloc(n, sizeof *c->q0_line);
    if (c->best > DSC_FSVAL)
        dsc_cursor(c);
    *G = c->G;
    *out = c;
    return 0;
}

/* The end of the pass: the rest of fetch and start, then the first error. */
static int dsc_finish(dsa_check *c, stall_err *err)
{
    while (dsc_pair(c) == 1)
        ;
    size_t row;
    stall_err e;
    while (c->best > DSC_FTEXT && dsc_row(c, &c->f, &c->fend, &c->ferr, DSC_FTEXT, &row))
        if (c->best > DSC_FKEY)
            dsc_set_rc(c, DSC_FKEY, dsa_key_row(&c->f.t, row, c->fc->ce, c->fc->ci, &c->fk, &e),
                       &e);
    while (c->best > DSC_STEXT && dsc_row(c, &c->s, &c->send, &c->serr, DSC_STEXT, &row))
        if (c->best > DSC_SKEY)
            dsc_set_rc(c, DSC_SKEY, dsa_key_row(&c->s.t, row, c->sc->ce, c->sc->ci, &c->sk, &e),
                       &e);
    if (c->best > DSC_NOEP && c->n == 0)
        dsc_set(c, DSC_NOEP, dsa_no_epoch(c->fetch_path, c->fc, c->epoch, &e), &e);
    if (c->best < DSC_NONE) {
        if (err && c->best != DSC_UNSORT)
            *err = c->best_err;
        return c->best_rc;
    }
    if (c->have_dup)
        return dsa_perf_dup(c->perf_path, c->dup_line, c->pc, &c->dup, c->dup_first, err);
    for (int g = 0; g < c->G; g++) {
        const dsc_prob *p = &c->prob[g];
        if (p->kind == DSC_EXTRA)
            return dsa_extra_step(c->perf_path, p->line, c->pc, p->step, g, c->epoch, c->fetch_path,
                                  err);
        if (p->kind == DSC_MISSING)
            return dsa_no_row(c->perf_path, c->pc, g, p->step, c->epoch, c->fetch_path, p->line,
                              p->at, p->at_line, err);
        if (p->kind == DSC_VALUE) {
            if (err)
                *err = c->verr;
            return c->verr.code;
        }
    }
    if (c->have_clock) {
        if (err)
            *err = c->clock_err;
        return c->clock_err.code;
    }
    return 0;
}

int dsa_check_next(dsa_check *c, stall_ds_trace *v, size_t *k, stall_err *err)
{
    while (!c->ready && !c->pdone)
        dsc_perf_next(c, v);
    if (c->ready) {
        c->ready = 0;
        *k = c->handed++;
        return 1;
    }
    return dsc_finish(c, err);
}

size_t dsa_check_rows(const dsa_check *c)
{
    return c->n;
}

size_t dsa_check_label0(const dsa_check *c)
{
    return c->lo;
}

void dsa_check_close(dsa_check *c)
{
    if (!c)
        return;
    dsa_close(&c->f);
    dsa_close(&c->s);
    dsa_close(&c->p);
    free(c->cf);
    free(c->cs);
    free(c->gt);
    free(c->gi);
    free(c->gs);
    free(c->prob);
    free(c->seen);
    free(c->seen_line);
    free(c->q0);
    free(c->q0_line);
    free(c);
}

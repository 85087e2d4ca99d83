/*
 * dsanalyzer_stream.c - stall_ds_open: the same checks as stall_ds_load in
 * streaming passes, then the selected epoch's batches one at a time in
 * bounded memory (the passes and their cost are described at stall_ds_open).
 */
#include "stall/dsanalyzer.h"

#include "stall/traceend.h"

#include "stall/limits.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stall/pdparse.h"
#include "dsanalyzer_int.h"

/* ---- stall_ds_open: the same checks in streaming passes ----------------- */

struct stall_ds_stream {
    char *fetch_path, *start_path, *perf_path;
    int64_t epoch;
    int gpus;
    size_t rows, label0;
    dsa_cols fc, sc, pc;
    dsa_file f, s, p; /* open during a batch pass */
    size_t k;         /* the next batch of the pass */
    stall_ds_trace view;
};

/* The first error of one kind, kept while a pass reads on for errors that
 * come first in stall_ds_load's order. */
typedef struct dss_first {
    int rc;
    stall_err err;
} dss_first;

static int dss_give(const dss_first *e, stall_err *err)
{
    if (err)
        *err = e->err;
    return e->rc;
}

/* Pass 1, fetch alone: its text, header and keys (stall_ds_load reads a
 * whole file before it looks at the header). */
static int dss_check_fetch(stall_ds_stream *s, stall_err *err)
{
    dsa_file f;
    int rc = dsa_open(s->fetch_path, 0, &f, err);
    if (rc)
        return rc;
    dss_first h = {0}, k = {0};
    h.rc = dsa_fetch_header(&f.t, &s->fc, &s->gpus, &h.err);
    dsa_key prev = {0};
    size_t row;
    while ((rc = dsa_next(&f, &row)) == 1)
        if (!h.rc && !k.rc)
            k.rc = dsa_key_row(&f.t, row, s->fc.ce, s->fc.ci, &prev, &k.err);
    dsa_close(&f);
    return rc ? rc : h.rc ? dss_give(&h, err) : k.rc ? dss_give(&k, err) : 0;
}

/* Pass 2, start beside fetch: start's text, header and keys, the same keys
 * in both, the selected epoch's rows, and every row's values. */
static int dss_check_start(stall_ds_stream *s, stall_err *err)
{
    dsa_file f, st;
    int rc = dsa_open(s->fetch_path, 0, &f, err);
    if (rc)
        return rc;
    if ((rc = dsa_open(s->start_path, 0, &st, err))) {
        dsa_close(&f);
        return rc;
    }
    const int G = s->gpus;
    dss_first h = {0}, k = {0}, m = {0}, v = {0};
    h.rc = dsa_start_header(&st.t, G, s->fetch_path, &s->sc, &h.err);
    dsa_key fk = {0}, sk = {0};
    size_t frow = 0, srow, lo = 0, n = 0;
    int fhave = 0, fdone = 0;
    while ((rc = dsa_next(&st, &srow)) == 1) {
        if (h.rc || k.rc || (k.rc = dsa_key_row(&st.t, srow, s->sc.ce, s->sc.ci, &sk, &k.err)) ||
            m.rc)
            continue;
        if (!fhave && !fdone) {
            int frc = dsa_next(&f, &frow);
            if (frc < 0) {
                rc = frc;
                break;
            }
            fdone = frc == 0;
            fhave = frc == 1;
            if (fhave && (rc = dsa_key_row(&f.t, frow, s->fc.ce, s->fc.ci, &fk, err)))
                break;
        }
        int c = fdone            ? 1
                : fk.ep != sk.ep ? (fk.ep < sk.ep ? -1 : 1)
                                 : (fk.ix > sk.ix) - (fk.ix < sk.ix);
        if (c < 0)
            m.rc =
                dsa_key_missing(f.t.path, fk.line, s->fc.ci + 1, fk.ep, fk.ix, st.t.path, &m.err);
        else if (c > 0)
            m.rc =
                dsa_key_missing(st.t.path, sk.line, s->sc.ci + 1, sk.ep, sk.ix, f.t.path, &m.err);
        if (m.rc)
            continue;
        fhave = 0;
        lo += fk.ep < s->epoch;
        n += fk.ep == s->epoch;
        if (!v.rc)
            v.rc = dsa_fs_values(&f.t, frow, &s->fc, &st.t, srow, &s->sc, G, NULL, NULL, &v.err);
    }
    /* A fetch row after start's last is missing from start. */
    if (!rc && !h.rc && !k.rc && !m.rc && (fhave || (!fdone && (rc = dsa_next(&f, &frow)) == 1))) {
        if (!fhave)
            rc = dsa_key_row(&f.t, frow, s->fc.ce, s->fc.ci, &fk, err);
        if (!rc || rc == 1)
            m.rc =
                dsa_key_missing(f.t.path, fk.line, s->fc.ci + 1, fk.ep, fk.ix, st.t.path, &m.err);
        rc = 0;
    }
    dsa_close(&f);
    dsa_close(&st);
    if (rc)
        return rc;
    if (h.rc || k.rc || m.rc)
        return dss_give(h.rc ? &h : k.rc ? &k : &m, err);
    if (n == 0)
        return dsa_no_epoch(s->fetch_path, &s->fc, s->epoch, err);
    s->label0 = lo;
    s->rows = n;
    return v.rc ? dss_give(&v, err) : 0;
}

/* What pass 3 found wrong with one GPU's rows of the selected epoch first,
 * in stall_ds_load's (GPU, batch) order. */
typedef struct dss_prob {
    int kind; /* 0 none, DSS_EXTRA, DSS_MISSING, DSS_VALUE */
    int64_t step;
    long line;  /* DSS_EXTRA: the perf line; DSS_MISSING: the fetch line */
    size_t rec; /* DSS_VALUE: the perf record, counting from 0 */
} dss_prob;

enum { DSS_EXTRA = 1, DSS_MISSING, DSS_VALUE };

/* Pass 3's cursor over the selected epoch's Index numbers in the fetch CSV. */
typedef struct dss_cursor {
    dsa_file f;
    size_t k, n;
    int64_t ix;
    long line;
} dss_cursor;

static int dss_cursor_step(stall_ds_stream *s, dss_cursor *c, stall_err *err)
{
    size_t row;
    if (++c->k >= c->n)
        return 0;
    int rc = dsa_next(&c->f, &row);
    if (rc == 1)
        rc = dsa_int(&c->f.t, row, s->fc.ci, &c->ix, err);
    else if (rc == 0)
        rc = stall_err_set(err, STALL_EIO, "%s: changed while being read", s->fetch_path);
    c->line = rc ? 0 : c->f.t.line[row];
    return rc;
}

static void dss_missing_all(dss_prob *prob, int G, const dss_cursor *c)
{
    for (int g = 0; g < G; g++)
        if (!prob[g].kind)
            prob[g] = (dss_prob){.kind = DSS_MISSING, .step = c->ix, .line = c->line};
}

/* The message of pass 3's problem of GPU g. */
static int dss_prob_err(stall_ds_stream *s, const dss_prob *p, int g, stall_err *err)
{
    if (p->kind == DSS_EXTRA)
        return dsa_extra_step(s->perf_path, p->line, &s->pc, p->step, g, s->epoch, s->fetch_path,
                              err);
    if (p->kind == DSS_MISSING)
        return dsa_no_row(s->perf_path, &s->pc, g, p->step, s->epoch, s->fetch_path, p->line, err);
    /* A bad value: read up to its record again for the message. */
    dsa_file pf;
    int rc = dsa_open(s->perf_path, 0, &pf, err);
    size_t row;
    while (!rc && (rc = dsa_next(&pf, &row)) == 1 && pf.nread <= p->rec)
        rc = 0;
    if (rc == 1) {
        stall_time t;
        double x;
        rc = dsa_perf_values(&pf.t, row, &s->pc, &t, &x, &x, err);
    }
    if (rc == 0)
        rc = stall_err_set(err, STALL_EIO, "%s: changed while being read", s->perf_path);
    dsa_close(&pf);
    return rc;
}

/* Pass 3, perf beside the selected epoch's Index numbers: perf's text,
 * header and keys, duplicates, and the match of rows to batches with their
 * values. Rows must come sorted by (Epoch, Step), GPUs in any order within
 * a step: then a duplicate and every GPU's rows of the selected epoch are
 * seen in O(G) memory. Returns STALL_DS_UNSORTED for other orders. */
static int dss_check_perf(stall_ds_stream *s, stall_err *err)
{
    dsa_file p;
    int rc = dsa_open(s->perf_path, 0, &p, err);
    if (rc)
        return rc;
    dss_cursor c = {.n = s->rows, .k = (size_t)-1};
    if ((rc = dsa_open(s->fetch_path, 0, &c.f, err))) {
        dsa_close(&p);
        return rc;
    }
    size_t row;
    for (size_t i = 0; i < s->label0 && rc == 0; i++)
        rc = dsa_next(&c.f, &row) == 1
                 ? 0
                 : stall_err_set(err, STALL_EIO, "%s: changed while being read", s->fetch_path);
    if (rc == 0)
        rc = dss_cursor_step(s, &c, err);
    const int G = s->gpus;
    dss_first h = {0}, k = {0};
    h.rc = dsa_perf_header(&p.t, &s->pc, &h.err);
    dss_prob *prob = stall_xcalloc((size_t)G, sizeof *prob);
    uint64_t *seen = stall_xcalloc((size_t)G, sizeof *seen), gid = 0;
    long *seen_line = stall_xcalloc((size_t)G, sizeof *seen_line);
    dsa_prow cur = {0}, dup = {0};
    long dup_line = 0, dup_first = 0;
    int unsorted = 0, have_dup = 0, gmatch = 0;
    while (rc == 0 && (rc = dsa_next(&p, &row)) == 1) {
        rc = 0;
        dsa_prow pr;
        if (h.rc || k.rc ||
            (k.rc = dsa_perf_key(&p.t, row, &s->pc, G, s->fetch_path, &pr, &k.err)) || unsorted)
            continue;
        if (gid == 0 || pr.epoch != cur.epoch || pr.step != cur.step) {
            if (gid && (pr.epoch < cur.epoch || (pr.epoch == cur.epoch && pr.step < cur.step))) {
                unsorted = 1;
                continue;
            }
            /* A new step: close the last one, and place this one. */
            if (gmatch) {
                for (int g = 0; g < G; g++)
                    if (seen[g] != gid && !prob[g].kind)
                        prob[g] = (dss_prob){.kind = DSS_MISSING, .step = c.ix, .line = c.line};
                if ((rc = dss_cursor_step(s, &c, err)))
                    break;
            }
            gid++;
            cur = pr;
            gmatch = 0;
            if (pr.epoch == s->epoch) {
                while (c.k < c.n && c.ix < pr.step && rc == 0) {
                    dss_missing_all(prob, G, &c);
                    rc = dss_cursor_step(s, &c, err);
                }
                gmatch = c.k < c.n && c.ix == pr.step;
            }
        }
        int g = (int)pr.gpu;
        if (seen[g] == gid) {
            if (!have_dup || dsa_prow_cmp(&pr, &dup) < 0) {
                have_dup = 1;
                dup = pr;
                dup_line = p.t.line[row];
                dup_first = seen_line[g];
            }
            continue;
        }
        seen[g] = gid;
        seen_line[g] = p.t.line[row];
        if (pr.epoch != s->epoch || prob[g].kind)
            continue;
        if (!gmatch) {
            prob[g] = (dss_prob){.kind = DSS_EXTRA, .step = pr.step, .line = p.t.line[row]};
        } else {
            stall_time t;
            double x;
            stall_err scratch;
            if (dsa_perf_values(&p.t, row, &s->pc, &t, &x, &x, &scratch))
                prob[g] = (dss_prob){.kind = DSS_VALUE, .rec = p.nread - 1};
        }
    }
    if (rc == 0 && !h.rc && !k.rc && !unsorted) {
        if (gmatch) {
            for (int g = 0; g < G; g++)
                if (seen[g] != gid && !prob[g].kind)
                    prob[g] = (dss_prob){.kind = DSS_MISSING, .step = c.ix, .line = c.line};
            rc = dss_cursor_step(s, &c, err);
        }
        while (rc == 0 && c.k < c.n) {
            dss_missing_all(prob, G, &c);
            rc = dss_cursor_step(s, &c, err);
        }
    }
    dsa_close(&p);
    dsa_close(&c.f);
    if (rc == 0 && (h.rc || k.rc))
        rc = dss_give(h.rc ? &h : &k, err);
    else if (rc == 0 && unsorted)
        rc = STALL_DS_UNSORTED;
    else if (rc == 0 && have_dup)
        rc = dsa_perf_dup(s->perf_path, dup_line, &s->pc, &dup, dup_first, err);
    for (int g = 0; g < G && rc == 0; g++)
        if (prob[g].kind)
            rc = dss_prob_err(s, &prob[g], g, err);
    free(prob);
    free(seen);
    free(seen_line);
    return rc;
}

static void dss_close_files(stall_ds_stream *s)
{
    dsa_close(&s->f);
    dsa_close(&s->s);
    dsa_close(&s->p);
}

void stall_ds_close(stall_ds_stream *s)
{
    if (!s)
        return;
    dss_close_files(s);
    free(s->fc.gpu);
    free(s->sc.gpu);
    free(s->view.index);
    free(s->view.fetch_s);
    free(s->view.start_ns);
    free(s->view.time_ns);
    free(s->view.iter_s);
    free(s->view.stall_s);
    free(s->fetch_path);
    free(s->start_path);
    free(s->perf_path);
    free(s);
}

int stall_ds_open(const char *fetch_csv, const char *start_csv, const char *perf_csv, int64_t epoch,
                  stall_ds_stream **out, stall_err *err)
{
    if (!fetch_csv || !start_csv || !perf_csv || !out)
        return stall_err_set(err, STALL_EINVAL, "stall_ds_open: NULL argument");
    /* A file cut short: warned, or refused when cut inside a number. */
    for (int i = 0; i < 3; i++) {
        const char *p = i == 0 ? fetch_csv : i == 1 ? start_csv : perf_csv;
        int crc = access(p, R_OK) == 0 ? stall_trace_check_end_warn(p, err) : 0;
        if (crc)
            return crc;
    }
    stall_ds_stream *s = stall_xcalloc(1, sizeof *s);
    s->fetch_path = stall_xstrdup(fetch_csv);
    s->start_path = stall_xstrdup(start_csv);
    s->perf_path = stall_xstrdup(perf_csv);
    s->epoch = epoch;
    int rc = dss_check_fetch(s, err);
    if (!rc)
        rc = dss_check_start(s, err);
    if (!rc)
        rc = dss_check_perf(s, err);
    if (rc) {
        stall_ds_close(s);
        return rc;
    }
    s->view = (stall_ds_trace){.gpus = s->gpus,
                               .epoch = epoch,
                               .rows = 1,
                               .fetch_path = s->fetch_path,
                               .start_path = s->start_path,
                               .perf_path = s->perf_path};
    dsa_trace_alloc(&s->view, 1);
    *out = s;
    return 0;
}

int stall_ds_stream_gpus(const stall_ds_stream *s)
{
    return s->gpus;
}

size_t stall_ds_stream_rows(const stall_ds_stream *s)
{
    return s->rows;
}

int stall_ds_rewind(stall_ds_stream *s, stall_err *err)
{
    dss_close_files(s);
    s->k = 0;
    int rc = dsa_open(s->fetch_path, 0, &s->f, err);
    if (!rc)
        rc = dsa_open(s->start_path, 0, &s->s, err);
    if (!rc)
        rc = dsa_open(s->perf_path, 0, &s->p, err);
    size_t row;
    for (size_t i = 0; i < s->label0 && !rc; i++)
        if (dsa_next(&s->f, &row) != 1 || dsa_next(&s->s, &row) != 1)
            rc = stall_err_set(err, STALL_EIO, "%s: changed while being read", s->fetch_path);
    if (rc)
        dss_close_files(s);
    return rc;
}

int stall_ds_next(stall_ds_stream *s, size_t *k, const stall_ds_trace **row, stall_err *err)
{
    if (!s->f.f)
        return stall_err_set(err, STALL_EINVAL, "stall_ds_next: no pass (stall_ds_rewind)");
    if (s->k == s->rows)
        return 0;
    stall_ds_trace *v = &s->view;
    size_t fr, sr, pr;
    int rc = dsa_next(&s->f, &fr);
    if (rc == 1)
        rc = dsa_next(&s->s, &sr);
    if (rc == 0)
        rc = stall_err_set(err, STALL_EIO, "%s: changed while being read", s->fetch_path);
    else if (rc == 1)
        rc = dsa_int(&s->f.t, fr, s->fc.ci, &v->index[0], err);
    if (rc == 0)
        rc = dsa_fs_values(&s->f.t, fr, &s->fc, &s->s.t, sr, &s->sc, s->gpus, v->fetch_s,
                           v->start_ns, err);
    /* The batch's G perf rows, after the rows of earlier epochs. */
    for (int got = 0; rc == 0 && got < s->gpus;) {
        dsa_prow p;
        if ((rc = dsa_next(&s->p, &pr)) != 1) {
            rc = rc ? rc
                    : stall_err_set(err, STALL_EIO, "%s: changed while being read", s->perf_path);
            break;
        }
        rc = dsa_perf_key(&s->p.t, pr, &s->pc, s->gpus, s->fetch_path, &p, err);
        if (rc || p.epoch != s->epoch || p.step != v->index[0])
            continue;
        size_t g = (size_t)p.gpu;
        rc = dsa_perf_values(&s->p.t, pr, &s->pc, &v->time_ns[g], &v->iter_s[g], &v->stall_s[g],
                             err);
        got++;
    }
    if (rc)
        return rc < 0
                   ? rc
                   : stall_err_set(err, STALL_EIO, "%s: changed while being read", s->fetch_path);
    v->label0 = s->label0 + s->k;
    *k = s->k++;
    *row = v;
    return 1;
}

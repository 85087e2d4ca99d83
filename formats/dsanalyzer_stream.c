/*
 * dsanalyzer_stream.c - stall_ds_open: the selected epoch's batches one at a
 * time in bounded memory. The first pass runs every check of stall_ds_load
 * as it reads (dsanalyzer_check.c), each file once; a later pass (a caller
 * that cannot keep the batches) reads the three files again without them.
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

/* ---- stall_ds_open: the checks in the first pass, then plain passes ---- */

struct stall_ds_stream {
    char *fetch_path, *start_path, *perf_path;
    int64_t epoch;
    int gpus;
    size_t rows, label0;
    dsa_cols fc, sc, pc;
    dsa_check *chk;   /* the first pass, until it has ended well */
    int fresh;        /* chk opened and not read yet */
    dsa_file f, s, p; /* open during a later pass */
    size_t k;         /* the next batch of the pass */
    stall_ds_trace view;
};

static void dss_close_files(stall_ds_stream *s)
{
    dsa_close(&s->f);
    dsa_close(&s->s);
    dsa_close(&s->p);
}

static void dss_cols_free(stall_ds_stream *s)
{
    free(s->fc.gpu);
    free(s->sc.gpu);
    s->fc.gpu = s->sc.gpu = NULL;
}

void stall_ds_close(stall_ds_stream *s)
{
    if (!s)
        return;
    dss_close_files(s);
    dsa_check_close(s->chk);
    dss_cols_free(s);
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
    int rc = dsa_check_open(s->fetch_path, s->start_path, s->perf_path, epoch, &s->fc, &s->sc,
                            &s->pc, &s->gpus, &s->chk, err);
    s->fresh = 1;
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
    return s->chk ? dsa_check_rows(s->chk) : s->rows;
}

int stall_ds_rewind(stall_ds_stream *s, stall_err *err)
{
    if (s->chk && s->fresh) {
        s->fresh = 0;
        return 0;
    }
    if (s->chk) { /* the first pass again */
        dsa_check_close(s->chk);
        s->chk = NULL;
        dss_cols_free(s);
        int rc = dsa_check_open(s->fetch_path, s->start_path, s->perf_path, s->epoch, &s->fc,
                                &s->sc, &s->pc, &s->gpus, &s->chk, err);
        return rc;
    }
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
    if (s->chk) {
        s->fresh = 0;
        int rc = dsa_check_next(s->chk, &s->view, k, err);
        if (rc == 1)
            *row = &s->view;
        if (rc == 0) { /* every check held: later passes read without them */
            s->rows = dsa_check_rows(s->chk);
            s->label0 = dsa_check_label0(s->chk);
            dsa_check_close(s->chk);
            s->chk = NULL;
        }
        return rc;
    }
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

/*
 * tidy.c - streaming reader of the tidy trace format (stall/tidy.h).
 *
 * A physical line with none of the bytes CSV gives a meaning beyond the
 * comma (quote, CR, the space and tab libcsv trims, NUL) is split in place
 * by tidy_fast_line, its fields pointing into the read buffer: every line
 * a capture tool writes, and the reason a 1 M-row trace parses about 4x
 * faster than through libcsv, whose callback per field cost a copy, a
 * malloc and a free each (issue 21). Any other line, and a line that does
 * not fit in the buffer, goes to libcsv, which calls back per field and per
 * row; the reader keeps only the current row's fields and hands the row out
 * through stall_tidy_next (a pull interface over libcsv's push: the file is
 * fed a line at a time until a row is ready). stall_tidy_load appends the rows to growable columns.
 * Because rows must come sorted by (epoch, batch, rank), each row's place
 * in the (epoch, batch, rank) grid is known when it is read, so a gap,
 * duplicate or disagreement between ranks is reported at the line where it
 * shows. Memory of a stream: O(ranks) (per-rank consistency state) plus
 * one line; stall_tidy_load adds the exported columns (the five times,
 * compute_end, samples and bytes when present, the worker id), never the
 * text.
 */
#include "stall/tidy.h"
#include "stall/io.h"

#include "stall/traceend.h"
#include "tidy_int.h"
#include "tidy_num.h"

#include "stall/limits.h"

#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const tidy_names[TC_ALL] = {
    "rank",        "epoch",         "batch",        "worker",      "fetch_start", "fetch_end",
    "request",     "ready",         "iter_end",     "compute_end", "bytes",       "samples",
    "epoch_start", "workers",       "prefetch",     "pin_memory",  "persistent",  "ckpt_start",
    "ckpt_end",    "ckpt_bytes",    "fetch_cpu",    "fetch_wait",  "turn_cpu",    "next_cpu",
    "next_wait",   "compute_cpu",   "compute_wait", "post_cpu",    "post_wait",   "sync_cpu",
    "cores",       "ranks_per_node"};

int tidy_fail(stall_tidy_stream *t, int col, const char *fmt, ...)
{
    if (t->rc)
        return t->rc;
    char what[STALL_ERR_MSG]; /* it may quote where a key was given */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (col >= 0)
        t->rc =
            stall_err_set(t->err, STALL_EPARSE, "%s:%ld:%d: %s", t->path, t->line, col + 1, what);
    else
        t->rc = stall_err_set(t->err, STALL_EPARSE, "%s:%ld: %s", t->path, t->line, what);
    return t->rc;
}

int stall_parse_seconds_ns(const char *s, stall_time *ns)
{
    return tidy_seconds(s, ns) == 0 ? 0 : -1;
}

/* The largest value each integer column may hold (the stated limits). */
static int64_t tidy_int_max(int c)
{
    switch (c) {
    case TC_RANK:
        return STALL_LIMIT_RANKS - 1;
    case TC_EPOCH:
        return STALL_LIMIT_EPOCHS - 1;
    case TC_BATCH:
        return STALL_LIMIT_BATCHES - 1;
    case TC_WORKER:
        return STALL_LIMIT_WORKERS - 1;
    case TC_WORKERS:
        return STALL_LIMIT_WORKERS;
    case TC_PREFETCH:
        return STALL_LIMIT_PREFETCH;
    case TC_PIN:
    case TC_PERSISTENT:
        return 1;
    case TC_CORES:
        return 1 << 20;
    case TC_RPN:
        return STALL_LIMIT_RANKS;
    default:
        return INT64_C(1) << 40; /* samples per batch */
    }
}

static int tidy_int(stall_tidy_stream *t, int c, int64_t lo, int64_t *out)
{
    const char *s = t->field[t->col[c]];
    /* Up to 18 plain digits cannot overflow: read here; anything else
     * (sign, spaces strtoll skips, more digits) as strtoll reads it. */
    int64_t x = 0;
    const char *p = s;
    while (*p >= '0' && *p <= '9' && p - s < 18)
        x = x * 10 + (*p++ - '0');
    if (p == s || *p != '\0') {
        /* Any other decimal text whose value is whole ("+3", "1e3",
         * "16.0"); past int64 it is out of range either way. */
        bool exact = false;
        int rc = tidy_decimal(s, 0, &x, &exact);
        if (rc == -1 || (rc == 0 && !exact))
            return tidy_fail(t, t->col[c], "'%s': not an integer: \"%s\"", tidy_names[c], s);
        if (rc == -2)
            x = x < 0 ? INT64_MIN : INT64_MAX;
    }
    if (x < lo)
        return tidy_fail(t, t->col[c], "'%s': negative value \"%s\"", tidy_names[c], s);
    if (x > tidy_int_max(c))
        return tidy_fail(t, t->col[c], "'%s': %s is more than the limit of %lld", tidy_names[c], s,
                         (long long)tidy_int_max(c));
    *out = x;
    return 0;
}

static int tidy_time(stall_tidy_stream *t, int c, stall_time *out)
{
    const char *s = t->field[t->col[c]];
    int rc = tidy_seconds(s, out);
    if (rc == -1)
        return tidy_fail(t, t->col[c], "'%s': not a time in seconds: \"%s\"", tidy_names[c], s);
    if (rc == -2) /* past int64 ns: its sign says which limit */
        *out = *out < 0 ? -1 : STALL_LIMIT_CLOCK_NS + 1;
    if (*out < 0)
        return tidy_fail(t, t->col[c], "'%s': negative time \"%s\"", tidy_names[c], s);
    if (*out > STALL_LIMIT_CLOCK_NS)
        return tidy_fail(t, t->col[c], "'%s': %s s is past the clock limit of %.0f s",
                         tidy_names[c], s, STALL_LIMIT_CLOCK_S);
    if (!t->have_t0) {
        t->have_t0 = true;
        t->t0 = *out;
    } else if (*out - t->t0 > STALL_LIMIT_SPAN_NS || t->t0 - *out > STALL_LIMIT_SPAN_NS) {
        return tidy_fail(t, t->col[c],
                         "'%s': %s s is more than %.0f s from the trace's first time (the span "
                         "limit)",
                         tidy_names[c], s, STALL_LIMIT_SPAN_S);
    }
    return 0;
}

static void tidy_header(stall_tidy_stream *t)
{
    /* A UTF-8 byte order mark (Excel and some editors write one) is not
     * part of the first column's name. strncmp, not memcmp: the field may
     * be shorter than the mark (an empty first field, as pandas writes its
     * index column), and strncmp stops at its terminating NUL. */
    if (t->nfield > 0 && strncmp(t->field[0], "\xEF\xBB\xBF", 3) == 0)
        memmove(t->field[0], t->field[0] + 3, strlen(t->field[0] + 3) + 1);
    for (int c = 0; c < TC_ALL; c++)
        t->col[c] = -1;
    t->ncols = t->nfield;
    /* An unnamed first column is pandas' index (DataFrame.to_csv without
     * index=False): its values are skipped. */
    int skip = t->nfield > 1 && t->field[0][0] == '\0';
    for (int f = skip; f < t->nfield; f++)
        for (int c = 0; c < TC_ALL; c++)
            if (strcmp(t->field[f], tidy_names[c]) == 0) {
                if (t->col[c] >= 0) {
                    tidy_fail(t, f, "column '%s' appears twice%s", tidy_names[c], "");
                    return;
                }
                t->col[c] = f;
            }
    for (int c = 0; c < TC_REQUIRED; c++) {
        if (t->col[c] != c + skip) {
            char want[160] = "";
            for (int i = 0; i < TC_REQUIRED; i++)
                snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? "," : "",
                         tidy_names[i]);
            tidy_fail(t, c + skip < t->nfield ? c + skip : -1,
                      "expected column '%s' here (header must start %s)", tidy_names[c], want);
            return;
        }
    }
    t->header_done = true;
}

/* The CPU columns (stall_tidy_cpu): durations in seconds, empty where not
 * measured, summed over the rows of batch >= 1; cores and ranks_per_node,
 * empty or one value for the whole trace. */
static void tidy_cpu(stall_tidy_stream *t, int64_t k)
{
    stall_tidy_cpu *cpu = &t->info.cpu;
    for (int j = 0; j < STALL_TIDY_CPU_N; j++) {
        int c = TC_CPU0 + j;
        if (t->col[c] < 0 || t->field[t->col[c]][0] == '\0')
            continue;
        stall_time v;
        if (stall_parse_seconds_ns(t->field[t->col[c]], &v) != 0 || v < 0 ||
            v > STALL_LIMIT_DURATION_NS) {
            tidy_fail(t, t->col[c], "'%s': not a CPU time in seconds (0 to 1e6): \"%s\"",
                      tidy_names[c], t->field[t->col[c]]);
            return;
        }
        cpu->has = true;
        if (k >= 1) {
            cpu->sum[j] += (double)v;
            cpu->n[j]++;
        }
    }
    for (int c = TC_CORES; c <= TC_RPN; c++) {
        if (t->col[c] < 0 || t->field[t->col[c]][0] == '\0')
            continue;
        int64_t v;
        if (tidy_int(t, c, 1, &v))
            return;
        int *have = c == TC_CORES ? &cpu->cores : &cpu->ranks_per_node;
        if (*have == 0)
            *have = (int)v;
        else if (*have != v) {
            tidy_fail(t, t->col[c], "'%s' is %lld here but %d above (one value per trace)",
                      tidy_names[c], (long long)v, *have);
            return;
        }
    }
}

/* The checkpoint columns of the row: both times, or both empty (no
 * checkpoint after this iteration); bytes may be empty. */
static int tidy_ckpt(stall_tidy_stream *t, stall_time *start, stall_time *end, double *bytes)
{
    if (t->col[TC_CKSTART] < 0 || t->col[TC_CKEND] < 0)
        return 0;
    bool hs = t->field[t->col[TC_CKSTART]][0] != '\0', he = t->field[t->col[TC_CKEND]][0] != '\0';
    if (hs != he)
        return tidy_fail(t, t->col[hs ? TC_CKEND : TC_CKSTART], "'%s' is empty but '%s' is not",
                         tidy_names[hs ? TC_CKEND : TC_CKSTART],
                         tidy_names[hs ? TC_CKSTART : TC_CKEND]);
    if (!hs)
        return 0;
    if (tidy_time(t, TC_CKSTART, start) || tidy_time(t, TC_CKEND, end))
        return t->rc;
    if (*end < *start)
        return tidy_fail(t, t->col[TC_CKEND], "'%s' is before '%s'", "ckpt_end", "ckpt_start");
    if (t->col[TC_CKBYTES] >= 0 && t->field[t->col[TC_CKBYTES]][0] != '\0') {
        const char *s = t->field[t->col[TC_CKBYTES]];
        if (tidy_byte_count(s, bytes) != 0)
            return tidy_fail(t, t->col[TC_CKBYTES], "'%s': not a byte count: \"%s\"", "ckpt_bytes",
                             s);
    }
    return 0;
}

static void tidy_push(stall_tidy_stream *t, const stall_tidy_row *row)
{
    if (t->qn == 0)
        t->qhead = 0;
    if (t->qhead + t->qn == t->qcap) {
        t->qcap = t->qcap ? 2 * t->qcap : 4;
        t->q = stall_xrealloc(t->q, t->qcap * sizeof *t->q);
    }
    t->q[t->qhead + t->qn++] = *row;
}

static void tidy_row(stall_tidy_stream *t)
{
    t->line = t->rec_line;
    if (t->rc)
        return;
    if (!t->header_done) {
        tidy_header(t);
        return;
    }
    if (t->nfield == 1 && t->field[0][0] == '\0')
        return; /* blank line */
    if (t->nfield != t->ncols) {
        char a[32], b[32];
        snprintf(a, sizeof a, "%d", t->nfield);
        snprintf(b, sizeof b, "%d", t->ncols);
        tidy_fail(t, -1, "row has %s fields, the header %s", a, b);
        return;
    }
    int64_t r, e, k, w;
    if (tidy_int(t, TC_RANK, 0, &r) || tidy_int(t, TC_EPOCH, 0, &e) ||
        tidy_int(t, TC_BATCH, 0, &k) || tidy_int(t, TC_WORKER, -1, &w) || tidy_place(t, e, k, r))
        return;
    for (int c = TC_FSTART; c <= TC_ITEREND; c++)
        if (tidy_time(t, c, &t->v[c]))
            return;
    /* compute_end empty on every row (a capture whose loop never marked it)
     * is as if the column were absent; empty on some rows only is refused. */
    if (t->col[TC_COMPUTE] >= 0) {
        bool empty = t->field[t->col[TC_COMPUTE]][0] == '\0';
        if (t->rows == 0)
            t->compute_empty = empty;
        if (empty != t->compute_empty) {
            tidy_fail(t, t->col[TC_COMPUTE],
                      "'compute_end' is %sempty here but %sempty on line %ld", empty ? "" : "not ",
                      empty ? "not " : "", t->setting_line);
            return;
        }
        if (!empty && tidy_time(t, TC_COMPUTE, &t->v[TC_COMPUTE]))
            return;
    }
    bool has_compute = t->col[TC_COMPUTE] >= 0 && !t->compute_empty;
    if (t->col[TC_ESTART] >= 0 && tidy_time(t, TC_ESTART, &t->v[TC_ESTART]))
        return;
    for (int c = TC_SAMPLES; c <= TC_PERSISTENT; c++) {
        if (c == TC_ESTART || t->col[c] < 0)
            continue;
        if (tidy_int(t, c, 0, &t->v[c]))
            return;
    }
    t->bytes = 0;
    if (t->col[TC_BYTES] >= 0) {
        const char *s = t->field[t->col[TC_BYTES]];
        if (tidy_byte_count(s, &t->bytes) != 0) {
            tidy_fail(t, t->col[TC_BYTES], "'%s': not a byte count: \"%s\"", "bytes", s);
            return;
        }
    }
    stall_time cks = -1, cke = -1;
    double ckb = 0;
    if (tidy_ckpt(t, &cks, &cke, &ckb))
        return;
    stall_time fs = t->v[TC_FSTART], fe = t->v[TC_FEND], rq = t->v[TC_REQUEST], rd = t->v[TC_READY],
               ie = t->v[TC_ITEREND];
    if (fe < fs)
        tidy_fail(t, t->col[TC_FEND], "'%s' is before '%s'", "fetch_end", "fetch_start");
    else if (rd < rq)
        tidy_fail(t, t->col[TC_READY], "'%s' is before '%s'", "ready", "request");
    else if (ie < rd)
        tidy_fail(t, t->col[TC_ITEREND], "'%s' is before '%s'", "iter_end", "ready");
    else if (has_compute && (t->v[TC_COMPUTE] < rd || t->v[TC_COMPUTE] > ie))
        tidy_fail(t, t->col[TC_COMPUTE], "'%s' is not between '%s' and iter_end", "compute_end",
                  "ready");
    else if (fe > rd)
        tidy_fail(t, t->col[TC_FEND], "'%s' is after '%s' (a batch is ready once fetched)",
                  "fetch_end", "ready");
    /* A duration is at most 1e6 s (limits.md), as in the notebook's CSVs:
     * the fetch, the wait for it and the rest of the iteration. */
    else if (fe - fs > STALL_LIMIT_DURATION_NS)
        tidy_fail(t, t->col[TC_FEND],
                  "'%s': the fetch takes %.6f s, more than the duration limit "
                  "of 1e6 s",
                  "fetch_end", (double)(fe - fs) / 1e9);
    else if (rd - rq > STALL_LIMIT_DURATION_NS)
        tidy_fail(t, t->col[TC_READY],
                  "'%s': the wait takes %.6f s, more than the duration limit "
                  "of 1e6 s",
                  "ready", (double)(rd - rq) / 1e9);
    else if (ie - rd > STALL_LIMIT_DURATION_NS)
        tidy_fail(t, t->col[TC_ITEREND],
                  "'%s': the iteration takes %.6f s after 'ready', more "
                  "than the duration limit of 1e6 s",
                  "iter_end", (double)(ie - rd) / 1e9);
    if (t->rc == 0)
        tidy_consistent(t, e, k, r);
    /* Ids run from 0 to workers - 1 (-1: the main process); with workers
     * = 0 the main process may also be called 0. */
    if (t->rc == 0 && t->col[TC_WORKERS] >= 0 && w >= (t->setting[0] > 0 ? t->setting[0] : 1))
        tidy_fail(t, t->col[TC_WORKER],
                  "'worker' is %lld but 'workers' is %lld (ids run from 0 to %lld)", (long long)w,
                  (long long)t->setting[0], (long long)(t->setting[0] > 0 ? t->setting[0] - 1 : 0));
    /* Without the column, against the count the reader was given. */
    else if (t->rc == 0 && t->col[TC_WORKERS] < 0 && t->expect_workers >= 0 &&
             w >= (t->expect_workers > 0 ? t->expect_workers : 1))
        tidy_fail(t, t->col[TC_WORKER],
                  "'worker' is %lld but the trace has no 'workers' column and %s = %d (ids run "
                  "from 0 to %d)",
                  (long long)w, t->expect_origin, t->expect_workers,
                  t->expect_workers > 0 ? t->expect_workers - 1 : 0);
    /* A loader with workers prefetches prefetch_factor >= 1 batches each
     * (PyTorch refuses 0); 0 is what a capture writes without workers. */
    if (t->rc == 0 && t->col[TC_WORKERS] >= 0 && t->col[TC_PREFETCH] >= 0 && t->setting[0] > 0 &&
        t->setting[1] == 0)
        tidy_fail(t, t->col[TC_PREFETCH],
                  "'prefetch' is 0 but 'workers' is %lld (a DataLoader with workers prefetches "
                  "prefetch_factor >= 1 batches each; 0 is for a loader without workers)",
                  (long long)t->setting[0]);
    if (t->rc == 0)
        tidy_cpu(t, k);
    if (t->rc)
        return;
    if (t->rows == 0) {
        t->info.workers = t->col[TC_WORKERS] >= 0 ? (int)t->setting[0] : -1;
        t->info.prefetch = t->col[TC_PREFETCH] >= 0 ? (int)t->setting[1] : -1;
        t->info.pin_memory = t->col[TC_PIN] >= 0 ? (int)t->setting[2] : -1;
        t->info.persistent = t->col[TC_PERSISTENT] >= 0 ? (int)t->setting[3] : -1;
        t->info.has_compute = has_compute;
        t->info.has_samples = t->col[TC_SAMPLES] >= 0;
        t->info.has_bytes = t->col[TC_BYTES] >= 0;
        t->info.has_ckpt = t->col[TC_CKSTART] >= 0 && t->col[TC_CKEND] >= 0;
    }
    t->rows++;
    stall_tidy_row row = {.rank = (int)r,
                          .epoch = (int)e,
                          .batch = k,
                          .worker = (int32_t)w,
                          .fetch_start = fs,
                          .fetch_end = fe,
                          .request = rq,
                          .ready = rd,
                          .iter_end = ie,
                          .compute_end = has_compute ? t->v[TC_COMPUTE] : -1,
                          .epoch_start = t->cur_epoch_start[r],
                          .samples = t->col[TC_SAMPLES] >= 0 ? t->v[TC_SAMPLES] : 0,
                          .bytes = t->bytes,
                          .ckpt_start = cks,
                          .ckpt_end = cke,
                          .ckpt_bytes = ckb};
    tidy_push(t, &row);
}

static void tidy_cb_field(void *s, size_t len, void *data)
{
    stall_tidy_stream *t = data;
    if (t->rc)
        return;
    if (t->nfield >= TIDY_MAXF) {
        t->line = t->rec_line; /* the row's line, not the one before it */
        tidy_fail(t, t->nfield, "more than %s columns%s", "64", "");
        return;
    }
    if (memchr(s, '\0', len)) {
        t->line = t->rec_line;
        tidy_fail(t, t->nfield, "NUL byte in the field%s", "");
        return;
    }
    char *f = stall_xmalloc(len + 1);
    memcpy(f, s, len);
    f[len] = '\0';
    t->field[t->nfield++] = f;
}

static void tidy_end_row(stall_tidy_stream *t)
{
    tidy_row(t);
    if (!t->borrowed)
        for (int i = 0; i < t->nfield; i++)
            free(t->field[i]);
    t->borrowed = false;
    t->nfield = 0;
    t->last_line = t->rec_line;
}

static void tidy_cb_row(int c, void *data)
{
    (void)c;
    tidy_end_row(data);
}

/* Bytes that end the fast path: what libcsv reads otherwise than as part of
 * an unquoted field (quote, CR, and the space and tab it trims), and NUL. */
static const bool tidy_special[256] = {
    ['"'] = true, ['\r'] = true, [' '] = true, ['\t'] = true, ['\0'] = true};

/* The line s[0..len) (its '\n' at s[len]) split at its commas in place, as
 * libcsv would split it, when it has none of tidy_special's bytes and at
 * most TIDY_MAXF fields; false (s untouched) otherwise. */
static bool tidy_fast_line(stall_tidy_stream *t, char *s, size_t len)
{
    uint32_t comma[TIDY_MAXF];
    int nc = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ',') {
            if (nc == TIDY_MAXF - 1)
                return false;
            comma[nc++] = (uint32_t)i;
        } else if (tidy_special[c]) {
            return false;
        }
    }
    t->field[0] = s;
    for (int i = 0; i < nc; i++) {
        s[comma[i]] = '\0';
        t->field[i + 1] = s + comma[i] + 1;
    }
    s[len] = '\0';
    t->nfield = nc + 1;
    t->borrowed = true;
    tidy_end_row(t);
    return true;
}

/* The read buffer: a line that fits is parsed whole by tidy_fast_line. */
#define TIDY_BUF (1 << 18)

/* A gzip or JSON file given as a tidy trace ([trace] format = tidy, path =
 * a profiler or DLIO trace), or an INI (its "[section]"): named as such,
 * where the CSV reader would report a NUL byte or a bad header, and the
 * end check a cut file. */
static int tidy_not_csv(const char *path, stall_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0; /* the open that follows says why */
    unsigned char head[64];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    size_t i = n >= 3 && head[0] == 0xef && head[1] == 0xbb && head[2] == 0xbf ? 3 : 0;
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\r' || head[i] == '\n'))
        i++;
    /* an INI's first section, "[name]", is not JSON's "[" */
    size_t j = i + 1;
    while (j < n && (isalnum(head[j]) || head[j] == '_' || head[j] == '-' || head[j] == '.'))
        j++;
    if (i < n && head[i] == '[' && j > i + 1 && j < n && head[j] == ']')
        return stall_err_set(err, STALL_EPARSE,
                             "%s:1: an INI file (a scenario), not a tidy trace CSV: give it to the "
                             "command as its CONFIG, and its [trace] the trace's file",
                             path);
    const char *what = n >= 2 && head[0] == 0x1f && head[1] == 0x8b  ? "gzip-compressed"
                       : i < n && (head[i] == '{' || head[i] == '[') ? "JSON"
                                                                     : NULL;
    if (!what)
        return 0;
    return stall_err_set(err, STALL_EPARSE,
                         "%s:1: %s, not a tidy trace CSV (a PyTorch profiler or DLIO trace is "
                         "read with [trace] format = kineto or dftracer)",
                         path, what);
}

int stall_tidy_open(const char *path, stall_tidy_stream **out, stall_err *err)
{
    *out = NULL;
    if (stall_input_check(path, err) != 0)
        return STALL_EIO;
    int jrc = tidy_not_csv(path, err);
    if (jrc)
        return jrc;
    /* A file cut short: warned, or refused when cut inside a number. */
    int crc = stall_trace_check_end_warn(path, err);
    if (crc)
        return crc;
    FILE *f = fopen(path, "rb");
    if (!f)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
    stall_tidy_stream *t = stall_xcalloc(1, sizeof *t);
    t->path = stall_xstrdup(path);
    t->line = t->phys = t->rec_line = 1;
    t->err = err;
    t->f = f;
    t->buf = stall_xmalloc(TIDY_BUF);
    t->info.workers = t->info.prefetch = t->info.pin_memory = t->info.persistent = -1;
    t->expect_workers = -1;
    csv_init(&t->p, CSV_STRICT);
    /* libcsv grows a field by blk_size bytes at a time: with its default
     * of 128, a long field costs quadratic copying. */
    csv_set_blk_size(&t->p, 1 << 20);
    *out = t;
    return 0;
}

/* End of input: the last record, then what only the whole file shows. */
static void tidy_finish(stall_tidy_stream *t)
{
    t->done = true;
    if (t->rc == 0 && ferror(t->f))
        t->rc = stall_err_set(t->err, STALL_EIO, "%s: read error", t->path);
    if (t->rc == 0)
        csv_fini(&t->p, tidy_cb_field, tidy_cb_row, t);
    if (t->rc == 0 && !t->header_done)
        t->rc = stall_err_set(t->err, STALL_EPARSE, "%s:1: empty file (no header)", t->path);
    if (t->rc == 0 && t->rows == 0)
        t->rc = stall_err_set(t->err, STALL_EPARSE, "%s:2: empty trace (no rows)", t->path);
    if (t->rc)
        return;
    int ranks = t->ranks ? t->ranks : t->cur_r + 1;
    if (t->cur_r + 1 != ranks)
        t->rc =
            stall_err_set(t->err, STALL_EPARSE, "%s:%ld: the last batch has %d rows for %d ranks",
                          t->path, t->last_line, t->cur_r + 1, ranks);
    int64_t batches = t->batches ? t->batches : t->cur_k + 1;
    if (t->rc == 0 && t->cur_k + 1 != batches)
        t->rc = stall_err_set(t->err, STALL_EPARSE,
                              "%s:%ld: the last epoch has %lld batches, epoch 0 has %lld", t->path,
                              t->last_line, (long long)(t->cur_k + 1), (long long)batches);
    t->info.ranks = ranks;
    t->info.batches = batches;
    t->info.epochs = (int)(t->cur_e + 1);
}

int stall_tidy_next(stall_tidy_stream *t, stall_tidy_row *row, stall_err *err)
{
    t->err = err;
    /* Fed one physical line at a time, so that a record's line is known
     * (libcsv counts records; blank lines and quoted newlines differ). */
    while (t->qn == 0 && t->rc == 0 && !t->done) {
        if (t->pos == t->n) {
            t->n = t->eof ? 0 : fread(t->buf, 1, TIDY_BUF, t->f);
            t->pos = 0;
            if (t->n == 0) {
                tidy_finish(t);
                break;
            }
        }
        char *nl = memchr(t->buf + t->pos, '\n', t->n - t->pos);
        if (!nl && t->pos > 0 && !t->eof) {
            /* A line begun at the buffer's end: moved to its start and
             * completed, so that tidy_fast_line sees it whole. */
            size_t left = t->n - t->pos;
            memmove(t->buf, t->buf + t->pos, left);
            size_t got = fread(t->buf + left, 1, TIDY_BUF - left, t->f);
            t->eof = got == 0;
            t->n = left + got;
            t->pos = 0;
            continue;
        }
        size_t len = nl ? (size_t)(nl - (t->buf + t->pos)) + 1 : t->n - t->pos;
        if (t->p.pstate == 0) /* no record begun: the next one starts here */
            t->rec_line = t->phys;
        bool whole = t->linelen == 0;
        t->linelen += nl ? len - 1 : len;
        if (t->linelen > STALL_LIMIT_LINE_BYTES) {
            t->rc =
                stall_err_set(err, STALL_EPARSE, "%s:%ld: line longer than %d bytes (the limit)",
                              t->path, t->phys, STALL_LIMIT_LINE_BYTES);
            break;
        }
        if (nl && whole && t->p.pstate == 0 &&
            (len == 1 || tidy_fast_line(t, t->buf + t->pos, len - 1))) {
            /* parsed (an empty line is no record, as libcsv skips it) */
        } else if (csv_parse(&t->p, t->buf + t->pos, len, tidy_cb_field, tidy_cb_row, t) != len &&
                   t->rc == 0) {
            t->rc = stall_err_set(err, STALL_EPARSE, "%s:%ld: malformed CSV: %s", t->path, t->phys,
                                  csv_strerror(csv_error(&t->p)));
        }
        t->pos += len;
        if (nl) {
            t->phys++;
            t->linelen = 0;
        }
    }
    if (t->rc)
        return t->rc;
    if (t->qn == 0)
        return 0;
    *row = t->q[t->qhead++];
    t->qn--;
    return 1;
}

const stall_tidy_info *stall_tidy_stream_info(const stall_tidy_stream *t)
{
    return &t->info;
}

void stall_tidy_close(stall_tidy_stream *t)
{
    if (!t)
        return;
    if (!t->borrowed)
        for (int i = 0; i < t->nfield; i++)
            free(t->field[i]);
    csv_free(&t->p);
    fclose(t->f);
    free(t->buf);
    free(t->q);
    free(t->last_iter_end);
    free(t->cur_epoch_start);
    free(t->last_row_line);
    free(t->expect_origin);
    free(t->path);
    free(t);
}

void stall_tidy_expect_workers(stall_tidy_stream *t, int workers, const char *origin)
{
    t->expect_workers = workers;
    free(t->expect_origin);
    t->expect_origin = stall_xstrdup(origin ? origin : "the worker count given");
}

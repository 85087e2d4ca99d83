/*
 * dsanalyzer.c - the dsanalyzer trace CSVs (fetch, start, perf) of one
 * training run as text, and the checks of each file, one header or record at
 * a time. The whole-file reader (dsanalyzer_load.c, stall_ds_load) and the
 * streaming reader (dsanalyzer_stream.c, stall_ds_open) both run these
 * checks, so they give the same messages.
 *
 * Two stages. First the text: a dsa_file feeds libcsv a line at a time
 * (cut at every '\n', so that the physical line number is known when a
 * field or record callback fires) and keeps every field as a NUL-terminated
 * string together with its record's line, in a dsa_table. stall_ds_load
 * keeps every record; a stream keeps the header and the records of the last
 * line fed. Second the meaning: header, keys, values, then the cross-file
 * rules of dsanalyzer.h.
 *
 * Invariants: fetch and start rows are strictly sorted by (Epoch, Index
 * number) and hold the same keys, so the seed's inner merges keep every row
 * in file order and the selected epoch is one contiguous run of rows. The
 * first error wins; later rows are not looked at.
 */
#include "stall/dsanalyzer.h"
#include "stall/io.h"

#include "stall/limits.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/pdparse.h"
#include "dsanalyzer_int.h"

void dsa_table_free(dsa_table *t)
{
    free(t->text);
    free(t->off);
    free(t->line);
    memset(t, 0, sizeof *t);
}

static const char *dsa_header(const dsa_table *t, size_t col)
{
    return t->text + t->off[col];
}

static const char *dsa_field(const dsa_table *t, size_t row, size_t col)
{
    return t->text + t->off[(row + 1) * t->ncols + col];
}

/* ---- stage 1: text ---------------------------------------------------- */

static void dsa_on_field(void *s, size_t len, void *data)
{
    dsa_reader *r = data;
    dsa_table *t = r->t;
    if (r->rc)
        return;
    if (len > 0 && memchr(s, '\0', len)) {
        r->rc = stall_err_set(r->err, STALL_EPARSE, "%s:%ld:%zu: field contains a NUL byte",
                              t->path, r->line, r->nfields + 1);
        return;
    }
    if (t->text_len + len + 1 > t->text_cap) {
        size_t cap = t->text_cap ? t->text_cap : 4096;
        while (t->text_len + len + 1 > cap)
            cap *= 2;
        t->text = stall_xrealloc(t->text, cap);
        t->text_cap = cap;
    }
    if (t->noff == t->off_cap) {
        t->off_cap = t->off_cap ? 2 * t->off_cap : 256;
        t->off = stall_xrealloc(t->off, t->off_cap * sizeof *t->off);
    }
    t->off[t->noff++] = t->text_len;
    if (len > 0)
        memcpy(t->text + t->text_len, s, len);
    t->text[t->text_len + len] = '\0';
    t->text_len += len + 1;
    r->nfields++;
}

static void dsa_on_record(int c, void *data)
{
    (void)c;
    dsa_reader *r = data;
    dsa_table *t = r->t;
    if (r->rc)
        return;
    if (!r->header_done) {
        t->ncols = r->nfields;
        r->hdr_text = t->text_len;
        r->header_done = 1;
    } else if (r->nfields != t->ncols) {
        size_t col = (r->nfields < t->ncols ? r->nfields : t->ncols) + 1;
        r->rc = stall_err_set(r->err, STALL_EPARSE,
                              "%s:%ld:%zu: expected %zu fields as in the header, found %zu",
                              t->path, r->line, col, t->ncols, r->nfields);
        return;
    } else {
        if (t->nrows == t->line_cap) {
            t->line_cap = t->line_cap ? 2 * t->line_cap : 256;
            t->line = stall_xrealloc(t->line, t->line_cap * sizeof *t->line);
        }
        t->line[t->nrows++] = r->line;
    }
    r->nfields = 0;
}

/* No white space is trimmed from unquoted fields: pandas keeps it too, so
 * " Epoch" is not "Epoch". */
static int dsa_no_space(unsigned char c)
{
    (void)c;
    return 0;
}

/* Drops the records already handed out (a stream), keeping the header and
 * the fields of a record still being read. */
static void dsa_drop(dsa_file *d)
{
    dsa_table *t = &d->t;
    size_t hdr_noff = t->ncols, part = d->r.nfields;
    size_t from = part ? t->off[t->noff - part] : t->text_len;
    memmove(t->text + d->r.hdr_text, t->text + from, t->text_len - from);
    for (size_t i = 0; i < part; i++)
        t->off[hdr_noff + i] = t->off[t->noff - part + i] - from + d->r.hdr_text;
    t->noff = hdr_noff + part;
    t->text_len = d->r.hdr_text + (t->text_len - from);
    t->nrows = 0;
    d->next = 0;
}

/* The line s[0..len) (its '\n' at s[len]) as libcsv would split it, when it
 * holds no quote, CR or NUL (no space is trimmed here: dsa_no_space):
 * the fields and the record go straight to the callbacks, without libcsv's
 * state machine, 30% of a dsanalyzer trace's read before (issue 21).
 * Returns 0, having done nothing, for any other line. */
static int dsa_fast_line(dsa_file *d, char *s, size_t len)
{
    /* One scan finds the commas (up to DSA_FAST_COMMAS; a line with more
     * takes the two scans below) and the bytes that need libcsv. */
    enum { DSA_FAST_COMMAS = 32 };
    size_t comma[DSA_FAST_COMMAS], nc = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c > ',')
            continue;
        if (c == '"' || c == '\r' || c == '\0')
            return 0;
        if (c == ',' && nc < DSA_FAST_COMMAS)
            comma[nc] = i;
        nc += c == ',';
    }
    if (nc <= DSA_FAST_COMMAS) {
        size_t from = 0;
        for (size_t i = 0; i < nc; i++) {
            dsa_on_field(s + from, comma[i] - from, &d->r);
            from = comma[i] + 1;
        }
        dsa_on_field(s + from, len - from, &d->r);
        dsa_on_record('\n', &d->r);
        return 1;
    }
    char *f = s, *end = s + len;
    for (;;) {
        char *cm = memchr(f, ',', (size_t)(end - f));
        char *e = cm ? cm : end;
        dsa_on_field(f, (size_t)(e - f), &d->r);
        if (!cm)
            break;
        f = cm + 1;
    }
    dsa_on_record('\n', &d->r);
    return 1;
}

/* Feeds libcsv the next line (or the rest of the buffer), reading more
 * when the buffer is used up, and finishing at the end of the file. A
 * line begun at the buffer's end is moved to its start and completed
 * first, so that dsa_fast_line sees it whole. */
static int dsa_feed(dsa_file *d)
{
    dsa_reader *r = &d->r;
    const char *path = d->t.path;
    if (d->pos == d->n) {
        d->n = d->tail ? 0 : fread(d->buf, 1, DSA_BUF, d->f);
        d->pos = 0;
        if (d->n == 0) {
            d->eof = 1;
            if (ferror(d->f))
                return r->rc = stall_err_set(r->err, STALL_EIO, "%s: read error: %s", path,
                                             strerror(errno));
            if (csv_fini(&d->p, dsa_on_field, dsa_on_record, r) != 0 && !r->rc)
                r->rc = stall_err_set(r->err, STALL_EPARSE,
                                      "%s:%ld:%zu: malformed CSV at end of file: %s", path, r->line,
                                      r->nfields + 1, csv_strerror(csv_error(&d->p)));
            if (!r->rc && !r->header_done)
                r->rc = stall_err_set(r->err, STALL_EPARSE,
                                      "%s:1:1: empty file, expected a header line", path);
            return r->rc;
        }
    }
    /* Feed one line at a time so that r->line is right in the callbacks;
     * libcsv keeps its state across calls, quoted newlines included. */
    const char *nl = memchr(d->buf + d->pos, '\n', d->n - d->pos);
    if (!nl && d->pos > 0 && !d->tail) {
        size_t left = d->n - d->pos;
        memmove(d->buf, d->buf + d->pos, left);
        size_t got = fread(d->buf + left, 1, DSA_BUF - left, d->f);
        d->tail = got == 0;
        d->n = left + got;
        d->pos = 0;
        return r->rc;
    }
    size_t len = nl ? (size_t)(nl - (d->buf + d->pos)) + 1 : d->n - d->pos;
    bool whole = d->linelen == 0;
    d->linelen += nl ? len - 1 : len;
    if (d->linelen > STALL_LIMIT_LINE_BYTES)
        return r->rc = stall_err_set(r->err, STALL_EPARSE,
                                     "%s:%ld: line longer than %d bytes (the limit)", path, r->line,
                                     STALL_LIMIT_LINE_BYTES);
    if (nl && whole && d->p.pstate == 0 &&
        (len == 1 || dsa_fast_line(d, d->buf + d->pos, len - 1))) {
        /* parsed (an empty line is no record, as libcsv skips it) */
    } else if (csv_parse(&d->p, d->buf + d->pos, len, dsa_on_field, dsa_on_record, r) != len &&
               !r->rc)
        r->rc = stall_err_set(r->err, STALL_EPARSE, "%s:%ld:%zu: malformed CSV: %s", path, r->line,
                              r->nfields + 1, csv_strerror(csv_error(&d->p)));
    d->pos += len;
    if (nl) {
        r->line++;
        d->linelen = 0;
    }
    return r->rc;
}

void dsa_close(dsa_file *d)
{
    if (d->p_init)
        csv_free(&d->p);
    if (d->f)
        fclose(d->f);
    free(d->buf);
    dsa_table_free(&d->t);
    memset(d, 0, sizeof *d);
}

/* Opens path and reads its header. On failure d is closed. */
int dsa_open(const char *path, int keep, dsa_file *d, stall_err *err)
{
    memset(d, 0, sizeof *d);
    d->t.path = path;
    d->keep = keep;
    d->r = (dsa_reader){.t = &d->t, .line = 1, .err = err};
    if (stall_input_check(path, err) != 0)
        return STALL_EIO;
    d->f = fopen(path, "rb");
    if (!d->f)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
    /* A UTF-8 byte order mark (pandas' to_csv with encoding="utf-8-sig",
     * Excel) is skipped, as the tidy and INI readers skip it. */
    unsigned char bom[3];
    if (!(fread(bom, 1, 3, d->f) == 3 && bom[0] == 0xef && bom[1] == 0xbb && bom[2] == 0xbf))
        rewind(d->f);
    if (csv_init(&d->p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
        dsa_close(d);
        return stall_err_set(err, STALL_ENOMEM, "%s: cannot set up the CSV parser", path);
    }
    d->p_init = 1;
    csv_set_space_func(&d->p, dsa_no_space);
    csv_set_blk_size(&d->p, 1 << 20); /* see tidy.c: the default grows fields quadratically */
    d->buf = stall_xmalloc(DSA_BUF);
    int rc = 0;
    while (!rc && !d->r.header_done && !d->eof)
        rc = dsa_feed(d);
    if (rc)
        dsa_close(d);
    return rc;
}

/* The next data record: returns 1 and sets *row (valid until the next
 * call), 0 at the end of the file, or the error. */
int dsa_next(dsa_file *d, size_t *row)
{
    if (!d->keep && d->next == d->t.nrows && d->t.nrows > 0)
        dsa_drop(d);
    int rc = d->r.rc;
    while (!rc && d->next == d->t.nrows && !d->eof)
        rc = dsa_feed(d);
    if (rc)
        return rc;
    if (d->next == d->t.nrows)
        return 0;
    *row = d->next++;
    d->nread++;
    return 1;
}

/* Reads a whole file into t (stall_ds_load). */
int dsa_read(const char *path, dsa_table *t, stall_err *err)
{
    dsa_file d;
    int rc = dsa_open(path, 1, &d, err);
    size_t row;
    if (rc)
        return rc;
    while ((rc = dsa_next(&d, &row)) == 1)
        ;
    if (rc == 0) {
        *t = d.t;
        memset(&d.t, 0, sizeof d.t);
    }
    dsa_close(&d);
    return rc;
}

/* ---- stage 2: header --------------------------------------------------- */

typedef struct dsa_hcol {
    const char *name;
    size_t col;
} dsa_hcol;

static int dsa_hcol_cmp(const void *a, const void *b)
{
    const dsa_hcol *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->col > y->col) - (x->col < y->col);
}

/* The first column must be pandas' unnamed index column; names are unique. */
static int dsa_check_header(const dsa_table *t, stall_err *err)
{
    if (dsa_header(t, 0)[0] != '\0')
        return stall_err_set(err, STALL_EPARSE,
                             "%s:1:1: expected pandas' unnamed index column (an empty header "
                             "field) first, found '" DSA_QUOTE "'",
                             t->path, dsa_header(t, 0));
    /* Sorted by (name, column): duplicates are neighbours, O(n log n). */
    dsa_hcol *h = stall_xmalloc(t->ncols * sizeof *h);
    for (size_t i = 0; i < t->ncols; i++)
        h[i] = (dsa_hcol){dsa_header(t, i), i};
    qsort(h, t->ncols, sizeof *h, dsa_hcol_cmp);
    size_t first = 0, dup = 0; /* the duplicate with the smallest later column */
    for (size_t i = 1; i < t->ncols; i++)
        if (strcmp(h[i].name, h[i - 1].name) == 0 && (dup == 0 || h[i].col < dup)) {
            size_t j = i;
            while (j > 0 && strcmp(h[j - 1].name, h[i].name) == 0)
                j--;
            dup = h[j + 1].col; /* the second occurrence */
            first = h[j].col;
        }
    free(h);
    if (dup)
        return stall_err_set(err, STALL_EPARSE,
                             "%s:1:%zu: duplicate column '" DSA_QUOTE "' (also column %zu)",
                             t->path, dup + 1, dsa_header(t, dup), first + 1);
    return 0;
}

static int dsa_find(const dsa_table *t, const char *name, size_t *col)
{
    for (size_t i = 1; i < t->ncols; i++)
        if (strcmp(dsa_header(t, i), name) == 0) {
            *col = i;
            return 0;
        }
    return -1;
}

/* Finds a required column; `canon` is its 0-based position in the seed's
 * layout, which the error message points at. */
static int dsa_require(const dsa_table *t, const char *name, size_t canon, size_t *col,
                       stall_err *err)
{
    if (dsa_find(t, name, col) == 0)
        return 0;
    if (canon < t->ncols)
        return stall_err_set(err, STALL_EPARSE,
                             "%s:1:%zu: missing column '%s' (found '" DSA_QUOTE "' there)", t->path,
                             canon + 1, name, dsa_header(t, canon));
    return stall_err_set(err, STALL_EPARSE,
                         "%s:1:%zu: missing column '%s' (the header has %zu fields)", t->path,
                         canon + 1, name, t->ncols);
}

/* The i of a column named prefix + i (decimal, no sign, no leading zero),
 * or -1. */
static long dsa_gpu_suffix(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n) != 0)
        return -1;
    const char *s = name + n;
    if (s[0] < '0' || s[0] > '9' || (s[0] == '0' && s[1] != '\0'))
        return -1;
    long v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > 100000)
            return -1;
        v = v * 10 + (*s - '0');
    }
    return v;
}

static size_t dsa_count_gpu_cols(const dsa_table *t, const char *prefix)
{
    size_t m = 0;
    for (size_t i = 1; i < t->ncols; i++)
        m += dsa_gpu_suffix(dsa_header(t, i), prefix) >= 0;
    return m;
}

/* Looks up prefix0 .. prefix{g-1}; cols gets their positions. */
static int dsa_gpu_col(const dsa_table *t, const char *prefix, int g, size_t *col)
{
    char name[64];
    snprintf(name, sizeof name, "%s%d", prefix, g);
    return dsa_find(t, name, col);
}

/* ---- stage 2: values --------------------------------------------------- */

static int dsa_field_err(const dsa_table *t, size_t row, size_t col, const char *what,
                         stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE, "%s:%ld:%zu: '%s': %s: \"" DSA_QUOTE "\"", t->path,
                         t->line[row], col + 1, dsa_header(t, col), what, dsa_field(t, row, col));
}

/* An integer as pandas reads one: optional blanks, sign, digits, blanks. */
int dsa_int(const dsa_table *t, size_t row, size_t col, int64_t *out, stall_err *err)
{
    const char *s = dsa_field(t, row, col);
    while (*s == ' ' || *s == '\t')
        s++;
    int neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (*s < '0' || *s > '9')
        return dsa_field_err(t, row, col, "not an integer", err);
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_C(1) << 63) / 10)
            return dsa_field_err(t, row, col, "integer out of range", err);
        v = v * 10 + (uint64_t)(*s - '0');
    }
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s != '\0')
        return dsa_field_err(t, row, col, "not an integer", err);
    if (v > (uint64_t)INT64_MAX + (uint64_t)neg)
        return dsa_field_err(t, row, col, "integer out of range", err);
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* A duration in seconds: finite, >= 0, and small enough for int64 ns. */
static int dsa_seconds(const dsa_table *t, size_t row, size_t col, double *out, stall_err *err)
{
    const char *s = dsa_field(t, row, col);
    if (*s == '\0')
        return dsa_field_err(t, row, col, "empty field (pandas reads NaN)", err);
    char *end;
    double v = stall_pd_strtod(s, &end);
    if (end == s || *end != '\0') {
        double w = strtod(s, &end); /* only to name NaN and inf properly */
        if (end != s && *end == '\0' && !isfinite(w))
            return dsa_field_err(t, row, col, "not a finite number", err);
        return dsa_field_err(t, row, col, "not a number", err);
    }
    if (!isfinite(v))
        return dsa_field_err(t, row, col, "not a finite number", err);
    if (v < 0)
        return dsa_field_err(t, row, col, "negative time", err);
    /* Within the limit, the conversion to int64 ns (stall_pd_s_to_ns_*,
     * which refuses only |v| >= 9.2e9 s) cannot fail: not tried here. */
    if (v > STALL_LIMIT_DURATION_S)
        return dsa_field_err(t, row, col, "more than the duration limit of 1e6 s", err);
    *out = v;
    return 0;
}

static int dsa_timestamp(const dsa_table *t, size_t row, size_t col, stall_time *out,
                         stall_err *err)
{
    if (stall_parse_timestamp(dsa_field(t, row, col), out) != 0)
        return dsa_field_err(t, row, col,
                             "not a timestamp YYYY-MM-DD HH:MM:SS.f (1 to 9 fractional digits, "
                             "valid date and time)",
                             err);
    if (*out < 0 || *out > STALL_LIMIT_CLOCK_NS)
        return dsa_field_err(t, row, col,
                             "outside the clock limit (1970-01-01 to 2096-10-02, Unix time 0 to "
                             "4e9 s)",
                             err);
    return 0;
}

/* Reads row r's (Epoch, Index number) and checks that it comes after *prev,
 * which it then becomes. */
int dsa_key_row(const dsa_table *t, size_t r, size_t ce, size_t ci, dsa_key *prev, stall_err *err)
{
    dsa_key k = {.line = t->line[r], .set = 1};
    int rc = dsa_int(t, r, ce, &k.ep, err);
    if (!rc)
        rc = dsa_int(t, r, ci, &k.ix, err);
    if (rc)
        return rc;
    dsa_key p = *prev;
    *prev = k;
    if (!p.set || k.ep > p.ep || (k.ep == p.ep && k.ix > p.ix))
        return 0;
    size_t col = (k.ep == p.ep ? ci : ce) + 1;
    if (k.ep == p.ep && k.ix == p.ix)
        return stall_err_set(err, STALL_EPARSE,
                             "%s:%ld:%zu: duplicate row (Epoch %lld, Index number %lld), "
                             "first on line %ld",
                             t->path, k.line, col, (long long)k.ep, (long long)k.ix, p.line);
    return stall_err_set(err, STALL_EPARSE,
                         "%s:%ld:%zu: rows not sorted by (Epoch, Index number): (%lld, %lld) "
                         "comes after (%lld, %lld) on line %ld",
                         t->path, k.line, col, (long long)k.ep, (long long)k.ix, (long long)p.ep,
                         (long long)p.ix, p.line);
}

/* Reads (Epoch, Index number) of every row and checks they increase. */
int dsa_keys(const dsa_table *t, size_t ce, size_t ci, int64_t *ep, int64_t *ix, stall_err *err)
{
    dsa_key prev = {0};
    for (size_t r = 0; r < t->nrows; r++) {
        int rc = dsa_key_row(t, r, ce, ci, &prev, err);
        if (rc)
            return rc;
        ep[r] = prev.ep;
        ix[r] = prev.ix;
    }
    return 0;
}

/* A key of `has` (its row on `line`) that `lacks` does not hold. */
int dsa_key_missing(const char *has, long line, size_t col, int64_t ep, int64_t ix,
                    const char *lacks, stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE,
                         "%s:%ld:%zu: row (Epoch %lld, Index number %lld) is missing from %s", has,
                         line, col, (long long)ep, (long long)ix, lacks);
}

int dsa_prow_cmp(const void *a, const void *b)
{
    const dsa_prow *x = a, *y = b;
    if (x->epoch != y->epoch)
        return x->epoch < y->epoch ? -1 : 1;
    if (x->gpu != y->gpu)
        return x->gpu < y->gpu ? -1 : 1;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* ---- the checks of each file, one header or row at a time ---------------- */

/* The header of fetch or start, and its key columns. */
static int dsa_key_header(const dsa_table *t, dsa_cols *c, stall_err *err)
{
    int rc = dsa_check_header(t, err);
    if (!rc)
        rc = dsa_require(t, DSA_EPOCH, 1, &c->ce, err);
    if (!rc)
        rc = dsa_require(t, DSA_INDEX, 2, &c->ci, err);
    return rc;
}

/* Fetch CSV header: the key columns and G GPU columns (*cols->gpu is
 * allocated; the caller frees it). */
int dsa_fetch_header(const dsa_table *t, dsa_cols *c, int *G, stall_err *err)
{
    int rc = dsa_key_header(t, c, err);
    if (rc)
        return rc;
    size_t m = dsa_count_gpu_cols(t, DSA_FETCH_GPU), unused;
    if (m == 0)
        return dsa_require(t, DSA_FETCH_GPU "0", 3, &unused, err);
    c->gpu = stall_xcalloc(m, sizeof *c->gpu);
    for (size_t g = 0; g < m; g++)
        if (dsa_gpu_col(t, DSA_FETCH_GPU, (int)g, &c->gpu[g]) != 0) {
            char name[64];
            snprintf(name, sizeof name, DSA_FETCH_GPU "%zu", g);
            return stall_err_set(err, STALL_EPARSE,
                                 "%s:1:%zu: missing column '%s' (GPU columns must be numbered "
                                 "0..G-1 without gaps; %zu found)",
                                 t->path, 4 + g, name, m);
        }
    *G = (int)m;
    return 0;
}

/* Start CSV header: exactly the fetch CSV's GPU columns. */
int dsa_start_header(const dsa_table *t, int G, const char *fetch_path, dsa_cols *c, stall_err *err)
{
    int rc = dsa_key_header(t, c, err);
    if (rc)
        return rc;
    c->gpu = stall_xcalloc((size_t)G, sizeof *c->gpu);
    for (int g = 0; g < G; g++)
        if (dsa_gpu_col(t, DSA_START_GPU, g, &c->gpu[g]) != 0)
            return stall_err_set(err, STALL_EPARSE,
                                 "%s:1:%d: missing column '" DSA_START_GPU
                                 "%d' (%s has '" DSA_FETCH_GPU "%d')",
                                 t->path, 4 + g, g, fetch_path, g);
    if (dsa_count_gpu_cols(t, DSA_START_GPU) != (size_t)G)
        for (size_t i = 1; i < t->ncols; i++) {
            long k = dsa_gpu_suffix(dsa_header(t, i), DSA_START_GPU);
            if (k >= G)
                return stall_err_set(err, STALL_EPARSE,
                                     "%s:1:%zu: column '" DSA_START_GPU
                                     "%ld' has no '" DSA_FETCH_GPU "%ld' in %s (%d GPUs)",
                                     t->path, i + 1, k, k, fetch_path, G);
        }
    return 0;
}

/* Row fr of fetch and row sr of start (the same key): every GPU's fetch
 * time and start, in the order pandas converts them. v, ts: NULL or [G]. */
int dsa_fs_values(const dsa_table *f, size_t fr, const dsa_cols *fc, const dsa_table *s, size_t sr,
                  const dsa_cols *sc, int G, double *v, stall_time *ts, stall_err *err)
{
    for (int g = 0; g < G; g++) {
        double x = 0;
        stall_time y = 0;
        int rc = dsa_seconds(f, fr, fc->gpu[g], &x, err);
        if (!rc)
            rc = dsa_timestamp(s, sr, sc->gpu[g], &y, err);
        if (rc)
            return rc;
        if (v)
            v[g] = x;
        if (ts)
            ts[g] = y;
    }
    return 0;
}

int dsa_perf_header(const dsa_table *t, dsa_cols *c, stall_err *err)
{
    int rc = dsa_check_header(t, err);
    if (!rc)
        rc = dsa_require(t, DSA_EPOCH, 1, &c->ce, err);
    if (!rc)
        rc = dsa_require(t, DSA_STEP, 2, &c->cs, err);
    if (!rc)
        rc = dsa_require(t, DSA_GPU, 3, &c->cg, err);
    if (!rc)
        rc = dsa_require(t, DSA_TIME, 4, &c->ct, err);
    if (!rc)
        rc = dsa_require(t, DSA_ITER, 5, &c->cit, err);
    if (!rc)
        rc = dsa_require(t, DSA_STALL, 6, &c->cst, err);
    return rc;
}

/* A perf row's (Epoch, Step, GPU), the GPU in 0..G-1. */
int dsa_perf_key(const dsa_table *t, size_t r, const dsa_cols *c, int G, const char *fetch_path,
                 dsa_prow *p, stall_err *err)
{
    int rc;
    p->row = r;
    if ((rc = dsa_int(t, r, c->ce, &p->epoch, err)) || (rc = dsa_int(t, r, c->cs, &p->step, err)) ||
        (rc = dsa_int(t, r, c->cg, &p->gpu, err)))
        return rc;
    if (p->gpu < 0 || p->gpu >= G)
        return stall_err_set(
            err, STALL_EPARSE, "%s:%ld:%zu: 'GPU': %lld is outside 0..%d (%s has %d GPU columns)",
            t->path, t->line[r], c->cg + 1, (long long)p->gpu, G - 1, fetch_path, G);
    return 0;
}

/* A perf row's values. The training stall is the part of the iteration
 * spent waiting for the batch, so it cannot be longer than the iteration:
 * one that was made a request before the iteration began, and an epoch
 * longer on that GPU than on the others. Up to DSA_STALL_SLACK over is
 * taken as the two timers' own disagreement (the notebook reads such a row
 * as it stands, and seed mode must too). */
#define DSA_STALL_SLACK 1e-3
int dsa_perf_values(const dsa_table *t, size_t r, const dsa_cols *c, stall_time *time, double *iter,
                    double *stall, stall_err *err)
{
    int rc;
    if ((rc = dsa_timestamp(t, r, c->ct, time, err)) ||
        (rc = dsa_seconds(t, r, c->cit, iter, err)) || (rc = dsa_seconds(t, r, c->cst, stall, err)))
        return rc;
    if (*stall > *iter + DSA_STALL_SLACK) {
        char what[128];
        snprintf(what, sizeof what,
                 "longer than the row's '" DSA_ITER "' (" DSA_QUOTE " s) by more than 1 ms",
                 dsa_field(t, r, c->cit));
        return dsa_field_err(t, r, c->cst, what, err);
    }
    return 0;
}

int dsa_perf_dup(const char *path, long line, const dsa_cols *c, const dsa_prow *b, long first_line,
                 stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE,
                         "%s:%ld:%zu: duplicate row (Epoch %lld, Step %lld, GPU %lld), "
                         "first on line %ld",
                         path, line, c->cs + 1, (long long)b->epoch, (long long)b->step,
                         (long long)b->gpu, first_line);
}

int dsa_no_row(const char *path, const dsa_cols *c, int g, int64_t index, int64_t epoch,
               const char *fetch_path, long fetch_line, int at, long line, stall_err *err)
{
    const char *where = at == DSA_AT_STEP     ? "among that step's rows, which begin on this line"
                        : at == DSA_AT_BEFORE ? "before this line"
                                              : "after this line, the file's last";
    return stall_err_set(err, STALL_EPARSE,
                         "%s:%ld:%zu: no row for GPU %d, Step %lld of Epoch %lld %s "
                         "(%s:%ld has that Index number)",
                         path, line, (at == DSA_AT_STEP ? c->cg : c->cs) + 1, g, (long long)index,
                         (long long)epoch, where, fetch_path, fetch_line);
}

int dsa_extra_step(const char *path, long line, const dsa_cols *c, int64_t step, int g,
                   int64_t epoch, const char *fetch_path, stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE,
                         "%s:%ld:%zu: Step %lld of GPU %d (Epoch %lld) has no row with "
                         "that Index number in %s",
                         path, line, c->cs + 1, (long long)step, g, (long long)epoch, fetch_path);
}

/* The cross-file check of the two clocks (dsanalyzer.h): a fetch cannot end
 * after the loop received its batch, nor start before the GPU's DataLoader
 * iterator existed. Found last, after every other check, by both readers. */
int dsa_clock(const char *start_path, long start_line, const dsa_cols *sc, const char *perf_path,
              const long *perf_line, const stall_ds_trace *b, size_t k, const stall_time *q0,
              const long *q0_line, stall_err *err)
{
    const stall_time late = (stall_time)(STALL_DS_CLOCK_LATE_S * 1e9);
    const stall_time early = (stall_time)(STALL_DS_CLOCK_EARLY_S * 1e9);
    for (int g = 0; g < b->gpus; g++) {
        size_t i = k * (size_t)b->gpus + (size_t)g;
        stall_time s = b->start_ns[i];
        if (s < q0[g] - early)
            return stall_err_set(err, STALL_EPARSE,
                                 "%s:%ld:%zu: '" DSA_START_GPU
                                 "%d': Index number %lld's fetch starts %.3f s before GPU %d's "
                                 "first request of Epoch %lld (%s:%ld, Time - stall), when no "
                                 "DataLoader ran: the two files' clocks disagree (UTC vs local "
                                 "time?); tolerance %g s",
                                 start_path, start_line, sc->gpu[g] + 1, g, (long long)b->index[k],
                                 (double)(q0[g] - s) / 1e9, g, (long long)b->epoch, perf_path,
                                 q0_line[g], STALL_DS_CLOCK_EARLY_S);
        stall_time end = s + stall_s_to_ns(b->fetch_s[i]);
        if (end > b->time_ns[i] + late)
            return stall_err_set(err, STALL_EPARSE,
                                 "%s:%ld:%zu: '" DSA_START_GPU
                                 "%d': Index number %lld's fetch (start + %.6f s) ends %.3f s "
                                 "after GPU %d received the batch (%s:%ld, Time): the two files' "
                                 "clocks disagree (UTC vs local time?); tolerance %g s",
                                 start_path, start_line, sc->gpu[g] + 1, g, (long long)b->index[k],
                                 b->fetch_s[i], (double)(end - b->time_ns[i]) / 1e9, g, perf_path,
                                 perf_line[g], STALL_DS_CLOCK_LATE_S);
    }
    return 0;
}

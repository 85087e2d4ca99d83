/*
 * dsanalyzer.c - reads and cross-checks the dsanalyzer trace CSVs (fetch,
 * start, perf) of one training run: whole into a stall_ds_trace
 * (stall_ds_load), or batch by batch in bounded memory (stall_ds_open).
 *
 * Two stages. First the text: a dsa_file feeds libcsv a line at a time
 * (cut at every '\n', so that the physical line number is known when a
 * field or record callback fires) and keeps every field as a NUL-terminated
 * string together with its record's line, in a dsa_table. stall_ds_load
 * keeps every record; a stream keeps the header and the records of the last
 * line fed. Second the meaning: header, keys, values, then the cross-file
 * rules of dsanalyzer.h, by functions that look at one record at a time,
 * so that both readers run the same checks and give the same messages.
 *
 * Invariants: fetch and start rows are strictly sorted by (Epoch, Index
 * number) and hold the same keys, so the seed's inner merges keep every row
 * in file order and the selected epoch is one contiguous run of rows. The
 * first error wins; later rows are not looked at.
 *
 * Cost of stall_ds_load: O(size of the files) to read, O(P log P) to sort
 * the P perf rows; memory: the three files' text plus O(rows) offsets,
 * freed before return. The stream's check passes and the cost of each
 * batch pass are described at stall_ds_open below.
 */
#include "stall/dsanalyzer.h"

#include "stall/limits.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/pdparse.h"

/* One CSV file as text. Field f of data record r is text + off[(r+1)*ncols + f];
 * the header's fields come first. */
typedef struct dsa_table {
    const char *path;
    size_t ncols;
    size_t nrows;
    char *text;
    size_t text_len, text_cap;
    size_t *off;
    size_t noff, off_cap;
    long *line; /* physical line of each data record */
    size_t line_cap;
} dsa_table;

/* libcsv callback state while one file is read. */
typedef struct dsa_reader {
    dsa_table *t;
    long line;      /* physical line being fed to libcsv, from 1 */
    size_t nfields; /* fields of the current record so far */
    int header_done;
    size_t hdr_text; /* where the header's text ends */
    int rc;
    stall_err *err;
} dsa_reader;

/* A file being read: its table, libcsv and the unread part of the buffer.
 * keep = 1: every record stays in the table (stall_ds_load); keep = 0:
 * only those of the last line fed (a stream). */
typedef struct dsa_file {
    dsa_table t;
    dsa_reader r;
    FILE *f;
    struct csv_parser p;
    int p_init, keep, eof;
    char *buf;
    size_t pos, n, linelen;
    size_t next;  /* the next record to hand out */
    size_t nread; /* records handed out so far */
} dsa_file;

#define DSA_BUF (1 << 16)
/* The seed's column names. */
#define DSA_EPOCH "Epoch"
#define DSA_INDEX "Index number"
#define DSA_FETCH_GPU "Fetch time (sec)_gpu"
#define DSA_START_GPU "Start time_gpu"
#define DSA_STEP "Step"
#define DSA_GPU "GPU"
#define DSA_TIME "Time"
#define DSA_ITER "Iteration time (sec)"
#define DSA_STALL "Training stall time (sec)"

/* Longest field text quoted in an error message. */
#define DSA_QUOTE "%.40s"

static void dsa_table_free(dsa_table *t)
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

/* Feeds libcsv the next line (or the rest of the buffer), reading more
 * when the buffer is used up, and finishing at the end of the file. */
static int dsa_feed(dsa_file *d)
{
    dsa_reader *r = &d->r;
    const char *path = d->t.path;
    if (d->pos == d->n) {
        d->n = fread(d->buf, 1, DSA_BUF, d->f);
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
    size_t len = nl ? (size_t)(nl - (d->buf + d->pos)) + 1 : d->n - d->pos;
    d->linelen += nl ? len - 1 : len;
    if (d->linelen > STALL_LIMIT_LINE_BYTES)
        return r->rc = stall_err_set(r->err, STALL_EPARSE,
                                     "%s:%ld: line longer than %d bytes (the limit)", path, r->line,
                                     STALL_LIMIT_LINE_BYTES);
    if (csv_parse(&d->p, d->buf + d->pos, len, dsa_on_field, dsa_on_record, r) != len && !r->rc)
        r->rc = stall_err_set(r->err, STALL_EPARSE, "%s:%ld:%zu: malformed CSV: %s", path, r->line,
                              r->nfields + 1, csv_strerror(csv_error(&d->p)));
    d->pos += len;
    if (nl) {
        r->line++;
        d->linelen = 0;
    }
    return r->rc;
}

static void dsa_close(dsa_file *d)
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
static int dsa_open(const char *path, int keep, dsa_file *d, stall_err *err)
{
    memset(d, 0, sizeof *d);
    d->t.path = path;
    d->keep = keep;
    d->r = (dsa_reader){.t = &d->t, .line = 1, .err = err};
    d->f = fopen(path, "rb");
    if (!d->f)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
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
static int dsa_next(dsa_file *d, size_t *row)
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
static int dsa_read(const char *path, dsa_table *t, stall_err *err)
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
static int dsa_int(const dsa_table *t, size_t row, size_t col, int64_t *out, stall_err *err)
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
    if (v > STALL_LIMIT_DURATION_S)
        return dsa_field_err(t, row, col, "more than the duration limit of 1e6 s", err);
    stall_time ns;
    if (stall_pd_s_to_ns_vec(v, &ns) != 0)
        return dsa_field_err(t, row, col, "too large for int64 nanoseconds", err);
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

/* A row's (Epoch, Index number) and its line; set = 0 before the first. */
typedef struct dsa_key {
    int64_t ep, ix;
    long line;
    int set;
} dsa_key;

/* Reads row r's (Epoch, Index number) and checks that it comes after *prev,
 * which it then becomes. */
static int dsa_key_row(const dsa_table *t, size_t r, size_t ce, size_t ci, dsa_key *prev,
                       stall_err *err)
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
static int dsa_keys(const dsa_table *t, size_t ce, size_t ci, int64_t *ep, int64_t *ix,
                    stall_err *err)
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
static int dsa_key_missing(const char *has, long line, size_t col, int64_t ep, int64_t ix,
                           const char *lacks, stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE,
                         "%s:%ld:%zu: row (Epoch %lld, Index number %lld) is missing from %s", has,
                         line, col, (long long)ep, (long long)ix, lacks);
}

/* One perf row, for sorting by (Epoch, GPU, Step) and then file order. */
typedef struct dsa_prow {
    int64_t epoch, step;
    int64_t gpu;
    size_t row;
} dsa_prow;

static int dsa_prow_cmp(const void *a, const void *b)
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

/* The columns a check needs. */
typedef struct dsa_cols {
    size_t ce, ci;     /* fetch, start: Epoch, Index number */
    size_t *gpu;       /* [G] fetch: Fetch time (sec)_gpu{g}; start: Start time_gpu{g} */
    size_t cs, cg, ct; /* perf: Step, GPU, Time */
    size_t cit, cst;   /* perf: Iteration time (sec), Training stall time (sec) */
} dsa_cols;

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
static int dsa_fetch_header(const dsa_table *t, dsa_cols *c, int *G, stall_err *err)
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
static int dsa_start_header(const dsa_table *t, int G, const char *fetch_path, dsa_cols *c,
                            stall_err *err)
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
static int dsa_fs_values(const dsa_table *f, size_t fr, const dsa_cols *fc, const dsa_table *s,
                         size_t sr, const dsa_cols *sc, int G, double *v, stall_time *ts,
                         stall_err *err)
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

static int dsa_perf_header(const dsa_table *t, dsa_cols *c, stall_err *err)
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
static int dsa_perf_key(const dsa_table *t, size_t r, const dsa_cols *c, int G,
                        const char *fetch_path, dsa_prow *p, stall_err *err)
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

/* A perf row's values. */
static int dsa_perf_values(const dsa_table *t, size_t r, const dsa_cols *c, stall_time *time,
                           double *iter, double *stall, stall_err *err)
{
    int rc;
    if ((rc = dsa_timestamp(t, r, c->ct, time, err)) ||
        (rc = dsa_seconds(t, r, c->cit, iter, err)) || (rc = dsa_seconds(t, r, c->cst, stall, err)))
        return rc;
    return 0;
}

static int dsa_perf_dup(const char *path, long line, const dsa_cols *c, const dsa_prow *b,
                        long first_line, stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE,
                         "%s:%ld:%zu: duplicate row (Epoch %lld, Step %lld, GPU %lld), "
                         "first on line %ld",
                         path, line, c->cs + 1, (long long)b->epoch, (long long)b->step,
                         (long long)b->gpu, first_line);
}

static int dsa_no_row(const char *path, const dsa_cols *c, int g, int64_t index, int64_t epoch,
                      const char *fetch_path, long fetch_line, stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE,
                         "%s:1:%zu: no row for GPU %d, Step %lld of Epoch %lld "
                         "(%s:%ld has that Index number)",
                         path, c->cs + 1, g, (long long)index, (long long)epoch, fetch_path,
                         fetch_line);
}

static int dsa_extra_step(const char *path, long line, const dsa_cols *c, int64_t step, int g,
                          int64_t epoch, const char *fetch_path, stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE,
                         "%s:%ld:%zu: Step %lld of GPU %d (Epoch %lld) has no row with "
                         "that Index number in %s",
                         path, line, c->cs + 1, (long long)step, g, (long long)epoch, fetch_path);
}

/* ---- stall_ds_load ------------------------------------------------------ */

/* Everything stall_ds_load allocates, so that one function frees it. */
typedef struct dsa_work {
    dsa_table fetch, start, perf;
    int64_t *f_ep, *f_ix, *s_ep, *s_ix;
    dsa_cols fc, sc, pc;
    dsa_prow *prows;
} dsa_work;

static void dsa_work_free(dsa_work *w)
{
    dsa_table_free(&w->fetch);
    dsa_table_free(&w->start);
    dsa_table_free(&w->perf);
    free(w->f_ep);
    free(w->f_ix);
    free(w->s_ep);
    free(w->s_ix);
    free(w->fc.gpu);
    free(w->sc.gpu);
    free(w->prows);
}

/* Fetch CSV: header, G, and keys. */
static int dsa_load_fetch(dsa_work *w, stall_ds_trace *tr, stall_err *err)
{
    const dsa_table *t = &w->fetch;
    int rc = dsa_fetch_header(t, &w->fc, &tr->gpus, err);
    if (rc)
        return rc;
    w->f_ep = stall_xcalloc(t->nrows, sizeof *w->f_ep);
    w->f_ix = stall_xcalloc(t->nrows, sizeof *w->f_ix);
    return dsa_keys(t, w->fc.ce, w->fc.ci, w->f_ep, w->f_ix, err);
}

/* Start CSV: header with exactly the fetch CSV's GPU columns, and keys. */
static int dsa_load_start(dsa_work *w, int G, stall_err *err)
{
    const dsa_table *t = &w->start;
    int rc = dsa_start_header(t, G, w->fetch.path, &w->sc, err);
    if (rc)
        return rc;
    w->s_ep = stall_xcalloc(t->nrows, sizeof *w->s_ep);
    w->s_ix = stall_xcalloc(t->nrows, sizeof *w->s_ix);
    return dsa_keys(t, w->sc.ce, w->sc.ci, w->s_ep, w->s_ix, err);
}

/* Both files hold the same keys (both are sorted): the seed's inner merges
 * then drop nothing and keep the fetch CSV's row order (quirks Q5, Q6). */
static int dsa_same_keys(const dsa_work *w, stall_err *err)
{
    const dsa_table *f = &w->fetch, *s = &w->start;
    size_t i = 0, j = 0;
    while (i < f->nrows || j < s->nrows) {
        int c;
        if (i == f->nrows)
            c = 1;
        else if (j == s->nrows)
            c = -1;
        else if (w->f_ep[i] != w->s_ep[j])
            c = w->f_ep[i] < w->s_ep[j] ? -1 : 1;
        else
            c = w->f_ix[i] < w->s_ix[j] ? -1 : w->f_ix[i] > w->s_ix[j];
        if (c == 0) {
            i++;
            j++;
            continue;
        }
        if (c < 0)
            return dsa_key_missing(f->path, f->line[i], w->fc.ci + 1, w->f_ep[i], w->f_ix[i],
                                   s->path, err);
        return dsa_key_missing(s->path, s->line[j], w->sc.ci + 1, w->s_ep[j], w->s_ix[j], f->path,
                               err);
    }
    return 0;
}

/* Perf CSV: checks every row's keys, then matches the selected epoch's rows
 * to batches and reads their values. */
static int dsa_load_perf(dsa_work *w, stall_ds_trace *tr, stall_err *err)
{
    const dsa_table *t = &w->perf;
    const dsa_cols *c = &w->pc;
    const int G = tr->gpus;
    int rc = dsa_perf_header(t, &w->pc, err);
    if (rc)
        return rc;
    w->prows = stall_xcalloc(t->nrows, sizeof *w->prows);
    for (size_t r = 0; r < t->nrows; r++)
        if ((rc = dsa_perf_key(t, r, c, G, w->fetch.path, &w->prows[r], err)))
            return rc;
    qsort(w->prows, t->nrows, sizeof *w->prows, dsa_prow_cmp);
    for (size_t i = 1; i < t->nrows; i++) {
        const dsa_prow *a = &w->prows[i - 1], *b = &w->prows[i];
        if (a->epoch == b->epoch && a->gpu == b->gpu && a->step == b->step)
            return dsa_perf_dup(t->path, t->line[b->row], c, b, t->line[a->row], err);
    }
    /* Rows of the selected epoch, by GPU and then Step: GPU g's k-th row is
     * batch k's (Q9). Walking it beside the ascending Index numbers checks
     * that this is also the row whose Step equals the Index number. */
    size_t j = 0, N = tr->rows;
    while (j < t->nrows && w->prows[j].epoch < tr->epoch)
        j++;
    for (int g = 0; g < G; g++) {
        for (size_t k = 0; k < N; k++, j++) {
            const dsa_prow *p = j < t->nrows ? &w->prows[j] : NULL;
            int here = p && p->epoch == tr->epoch && p->gpu == g;
            if (here && p->step < tr->index[k])
                break; /* extra step, reported below */
            if (!here || p->step > tr->index[k])
                return dsa_no_row(t->path, c, g, tr->index[k], tr->epoch, w->fetch.path,
                                  w->fetch.line[tr->label0 + k], err);
            size_t o = k * (size_t)G + (size_t)g;
            if ((rc = dsa_perf_values(t, p->row, c, &tr->time_ns[o], &tr->iter_s[o],
                                      &tr->stall_s[o], err)))
                return rc;
        }
        if (j < t->nrows && w->prows[j].epoch == tr->epoch && w->prows[j].gpu == g) {
            const dsa_prow *p = &w->prows[j];
            return dsa_extra_step(t->path, t->line[p->row], c, p->step, g, tr->epoch, w->fetch.path,
                                  err);
        }
    }
    return 0;
}

static void dsa_trace_alloc(stall_ds_trace *tr, size_t N)
{
    const size_t G = (size_t)tr->gpus;
    tr->index = stall_xcalloc(N, sizeof *tr->index);
    tr->fetch_s = stall_xcalloc(N * G, sizeof *tr->fetch_s);
    tr->start_ns = stall_xcalloc(N * G, sizeof *tr->start_ns);
    tr->time_ns = stall_xcalloc(N * G, sizeof *tr->time_ns);
    tr->iter_s = stall_xcalloc(N * G, sizeof *tr->iter_s);
    tr->stall_s = stall_xcalloc(N * G, sizeof *tr->stall_s);
}

static stall_ds_trace *dsa_trace_new(const char *fetch_csv, const char *start_csv,
                                     const char *perf_csv, int64_t epoch)
{
    stall_ds_trace *tr = stall_xcalloc(1, sizeof *tr);
    tr->epoch = epoch;
    tr->fetch_path = stall_xstrdup(fetch_csv);
    tr->start_path = stall_xstrdup(start_csv);
    tr->perf_path = stall_xstrdup(perf_csv);
    return tr;
}

static int dsa_no_epoch(const char *fetch_path, const dsa_cols *fc, int64_t epoch, stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE, "%s:1:%zu: no rows with Epoch %lld (empty trace)",
                         fetch_path, fc->ce + 1, (long long)epoch);
}

int stall_ds_load(const char *fetch_csv, const char *start_csv, const char *perf_csv, int64_t epoch,
                  stall_ds_trace **out, stall_err *err)
{
    if (!fetch_csv || !start_csv || !perf_csv || !out)
        return stall_err_set(err, STALL_EINVAL, "stall_ds_load: NULL argument");
    dsa_work w;
    memset(&w, 0, sizeof w);
    stall_ds_trace *tr = dsa_trace_new(fetch_csv, start_csv, perf_csv, epoch);
    int rc = dsa_read(fetch_csv, &w.fetch, err);
    if (!rc)
        rc = dsa_load_fetch(&w, tr, err);
    if (!rc)
        rc = dsa_read(start_csv, &w.start, err);
    if (!rc)
        rc = dsa_load_start(&w, tr->gpus, err);
    if (!rc)
        rc = dsa_same_keys(&w, err);
    if (rc)
        goto done;

    /* The selected epoch is one run of rows, since the keys are sorted. */
    const dsa_table *f = &w.fetch, *s = &w.start;
    size_t lo = 0;
    while (lo < f->nrows && w.f_ep[lo] < epoch)
        lo++;
    size_t hi = lo;
    while (hi < f->nrows && w.f_ep[hi] == epoch)
        hi++;
    if (hi == lo) {
        rc = dsa_no_epoch(f->path, &w.fc, epoch, err);
        goto done;
    }
    const size_t G = (size_t)tr->gpus, N = hi - lo;
    tr->rows = N;
    tr->label0 = lo;
    dsa_trace_alloc(tr, N);
    memcpy(tr->index, w.f_ix + lo, N * sizeof *tr->index);
    /* Every row's values are checked, as pandas converts whole columns; only
     * the selected epoch's are kept. Row r of fetch is row r of start. */
    for (size_t r = 0; r < f->nrows && !rc; r++) {
        int in = r >= lo && r < hi;
        rc = dsa_fs_values(f, r, &w.fc, s, r, &w.sc, tr->gpus,
                           in ? tr->fetch_s + (r - lo) * G : NULL,
                           in ? tr->start_ns + (r - lo) * G : NULL, err);
    }
    if (!rc)
        rc = dsa_read(perf_csv, &w.perf, err);
    if (!rc)
        rc = dsa_load_perf(&w, tr, err);
done:
    dsa_work_free(&w);
    if (rc) {
        stall_ds_free(tr);
        return rc;
    }
    *out = tr;
    return 0;
}

void stall_ds_free(stall_ds_trace *t)
{
    if (!t)
        return;
    free(t->index);
    free(t->fetch_s);
    free(t->start_ns);
    free(t->time_ns);
    free(t->iter_s);
    free(t->stall_s);
    free(t->fetch_path);
    free(t->start_path);
    free(t->perf_path);
    free(t);
}

stall_time stall_ds_request(const stall_ds_trace *t, size_t k, int g)
{
    size_t i = k * (size_t)t->gpus + (size_t)g;
    return t->time_ns[i] - stall_s_to_ns(t->stall_s[i]);
}

stall_time stall_ds_compute(const stall_ds_trace *t, size_t k, int g)
{
    double maxst = 0;
    for (int r = 0; r < t->gpus; r++)
        if (t->stall_s[k * (size_t)t->gpus + (size_t)r] > maxst)
            maxst = t->stall_s[k * (size_t)t->gpus + (size_t)r];
    double c = t->iter_s[k * (size_t)t->gpus + (size_t)g] - maxst;
    return c > 0 ? stall_s_to_ns(c) : 0;
}

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

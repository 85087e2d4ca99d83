/*
 * table.c - reading a CSV file with a header into text cells
 * (stall/table.h), with libcsv (quoted fields, embedded commas and
 * newlines). One pass over the file; cells are collected in growable
 * arrays, so time and memory are O(file size).
 */
#include "stall/table.h"
#include "stall/io.h"

#include <csv.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct table_reader {
    stall_table *t;
    char **cells; /* all fields, header first */
    size_t n, cap;
    size_t row_start; /* index of the current record's first field */
    long line;        /* records seen, for messages (1 = header) */
    long phys;        /* physical lines before the current record */
    long nl;          /* newlines inside the current record's quoted fields */
    long *lines;      /* [records - 1]: each data row's line */
    size_t cap_lines;
    int rc;
    stall_err *err;
} table_reader;

static void table_on_field(void *s, size_t len, void *ctx)
{
    table_reader *r = ctx;
    if (r->rc)
        return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 256;
        r->cells = stall_xrealloc(r->cells, r->cap * sizeof *r->cells);
    }
    char *c = stall_xmalloc(len + 1);
    if (len)
        memcpy(c, s, len);
    c[len] = '\0';
    r->cells[r->n++] = c;
    for (size_t i = 0; i < len; i++)
        r->nl += c[i] == '\n';
}

static void table_on_record(int term, void *ctx)
{
    (void)term;
    table_reader *r = ctx;
    if (r->rc)
        return;
    r->line++;
    long at = r->phys + 1; /* the record's first line */
    r->phys += 1 + r->nl;
    r->nl = 0;
    size_t fields = r->n - r->row_start;
    if (r->line == 1) {
        r->t->ncols = (int)fields;
    } else if (fields != (size_t)r->t->ncols) {
        r->rc = stall_err_set(r->err, STALL_EPARSE, "%s:%ld: %zu fields, the header has %d",
                              r->t->path, at, fields, r->t->ncols);
        return;
    } else {
        size_t k = (size_t)(r->line - 2);
        if (k == r->cap_lines) {
            r->cap_lines = r->cap_lines ? 2 * r->cap_lines : 256;
            r->lines = stall_xrealloc(r->lines, r->cap_lines * sizeof *r->lines);
        }
        r->lines[k] = at;
    }
    r->row_start = r->n;
}

int stall_table_read(const char *path, stall_table **out, stall_err *err)
{
    *out = NULL;
    if (stall_input_check(path, err) != 0)
        return STALL_EIO;
    FILE *f = fopen(path, "rb");
    if (!f)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
    stall_table *t = stall_xcalloc(1, sizeof *t);
    t->path = stall_xstrdup(path);
    table_reader r = {.t = t, .err = err};
    struct csv_parser p;
    csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL);
    char buf[65536];
    size_t len;
    bool first = true;
    while (!r.rc && (len = fread(buf, 1, sizeof buf, f)) > 0) {
        char *at = buf;
        /* a UTF-8 byte order mark (a table saved again by a spreadsheet) */
        if (first && len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
            at += 3;
            len -= 3;
        }
        first = false;
        if (csv_parse(&p, at, len, table_on_field, table_on_record, &r) != len && !r.rc)
            r.rc = stall_err_set(err, STALL_EPARSE, "%s:%ld: %s", path, r.line + 1,
                                 csv_strerror(csv_error(&p)));
    }
    if (!r.rc && ferror(f))
        r.rc = stall_err_set(err, STALL_EIO, "%s: read error", path);
    if (!r.rc && csv_fini(&p, table_on_field, table_on_record, &r) != 0 && !r.rc)
        r.rc = stall_err_set(err, STALL_EPARSE, "%s:%ld: %s", path, r.line + 1,
                             csv_strerror(csv_error(&p)));
    csv_free(&p);
    fclose(f);
    if (!r.rc && (r.line == 0 || t->ncols == 0))
        r.rc = stall_err_set(err, STALL_EPARSE, "%s:1: empty file, expected a header", path);
    if (!r.rc && r.n != r.row_start) /* a last record without fields cannot happen */
        r.rc = stall_err_set(err, STALL_EPARSE, "%s: truncated last row", path);
    if (r.rc) {
        for (size_t i = 0; i < r.n; i++)
            free(r.cells[i]);
        free(r.cells);
        free(r.lines);
        free(t->path);
        free(t);
        return r.rc;
    }
    t->header = r.cells;
    t->cell = r.cells + t->ncols;
    t->nrows = (r.n - (size_t)t->ncols) / (size_t)t->ncols;
    t->line = r.lines;
    t->nan_ok = t->header[0][0] == '\0';
    *out = t;
    return 0;
}

void stall_table_free(stall_table *t)
{
    if (!t)
        return;
    size_t n = (t->nrows + 1) * (size_t)t->ncols;
    for (size_t i = 0; i < n; i++)
        free(t->header[i]);
    free(t->header);
    free(t->line);
    free(t->path);
    free(t);
}

int stall_table_col(const stall_table *t, const char *name)
{
    for (int c = 0; c < t->ncols; c++)
        if (strcmp(t->header[c], name) == 0)
            return c;
    return -1;
}

const char *stall_table_get(const stall_table *t, size_t row, int col)
{
    return t->cell[row * (size_t)t->ncols + (size_t)col];
}

/* A finite decimal number, as stallsim writes one (%.9g, ryu's shortest,
 * integers): sign, digits with an optional point, optional exponent; not
 * inf, nan, hexadecimal or out of range. */
static bool table_decimal(const char *s, size_t n, double *v)
{
    size_t i = 0, digits = 0;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        i++;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        digits++;
    if (i < n && s[i] == '.')
        for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            digits++;
    if (digits == 0)
        return false;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+'))
            i++;
        size_t e = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            e++;
        if (e == 0)
            return false;
    }
    if (i != n || n >= 64)
        return false;
    char buf[64];
    memcpy(buf, s, n);
    buf[n] = '\0';
    errno = 0;
    double x = strtod(buf, NULL);
    if (!isfinite(x) || (errno == ERANGE && fabs(x) > 1))
        return false;
    *v = x;
    return true;
}

static _Thread_local bool table_bad_set;
static _Thread_local char table_bad[STALL_ERR_MSG];

/* The cell's part [s, s + n) as a number; NAN when empty or "nan" where
 * allowed; anything else refused (kept when keep). */
static double table_part(const stall_table *t, size_t row, int col, const char *s, size_t n,
                         bool keep)
{
    double v;
    if (n == 0)
        return NAN;
    if (table_decimal(s, n, &v))
        return v;
    if (t->nan_ok && n == 3 && strncmp(s, "nan", 3) == 0)
        return NAN;
    if (keep && !table_bad_set) {
        table_bad_set = true;
        const char *cell = stall_table_get(t, row, col);
        snprintf(table_bad, sizeof table_bad,
                 "%s:%ld:%d: column '%.60s': '%.40s' is not a number (stallsim writes a finite "
                 "decimal number here, %s)",
                 t->path, t->line ? t->line[row] : (long)row + 2, col + 1, t->header[col], cell,
                 t->nan_ok ? "or nan where the value is undefined"
                           : "or nothing where the value is undefined");
    }
    return NAN;
}

static double table_num(const stall_table *t, size_t row, int col, bool keep)
{
    if (col < 0 || col >= t->ncols || row >= t->nrows)
        return NAN;
    const char *s = stall_table_get(t, row, col);
    return table_part(t, row, col, s, strlen(s), keep);
}

double stall_table_num(const stall_table *t, size_t row, int col)
{
    return table_num(t, row, col, true);
}

double stall_table_num_probe(const stall_table *t, size_t row, int col)
{
    return table_num(t, row, col, false);
}

double stall_table_num_mean(const stall_table *t, size_t row, int col)
{
    if (col < 0 || col >= t->ncols || row >= t->nrows)
        return NAN;
    const char *s = stall_table_get(t, row, col);
    const char *pm = strstr(s, "\xc2\xb1"); /* ± in UTF-8 */
    if (!pm)
        return table_part(t, row, col, s, strlen(s), true);
    double mean = table_part(t, row, col, s, (size_t)(pm - s), true);
    if (pm == s) /* "±std": no mean */
        table_part(t, row, col, "?", 1, true);
    table_part(t, row, col, pm + 2, strlen(pm + 2), true);
    return mean;
}

void stall_table_refused_reset(void)
{
    table_bad_set = false;
    table_bad[0] = '\0';
}

int stall_table_refused(stall_err *err)
{
    if (!table_bad_set)
        return 0;
    int rc = stall_err_set(err, STALL_EPARSE, "%s", table_bad);
    stall_table_refused_reset();
    return rc;
}

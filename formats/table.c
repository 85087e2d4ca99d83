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
}

static void table_on_record(int term, void *ctx)
{
    (void)term;
    table_reader *r = ctx;
    if (r->rc)
        return;
    r->line++;
    size_t fields = r->n - r->row_start;
    if (r->line == 1) {
        r->t->ncols = (int)fields;
    } else if (fields != (size_t)r->t->ncols) {
        r->rc = stall_err_set(r->err, STALL_EPARSE, "%s:%ld: %zu fields, the header has %d",
                              r->t->path, r->line, fields, r->t->ncols);
        return;
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
    while (!r.rc && (len = fread(buf, 1, sizeof buf, f)) > 0)
        if (csv_parse(&p, buf, len, table_on_field, table_on_record, &r) != len && !r.rc)
            r.rc = stall_err_set(err, STALL_EPARSE, "%s:%ld: %s", path, r.line + 1,
                                 csv_strerror(csv_error(&p)));
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
        free(t->path);
        free(t);
        return r.rc;
    }
    t->header = r.cells;
    t->cell = r.cells + t->ncols;
    t->nrows = (r.n - (size_t)t->ncols) / (size_t)t->ncols;
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

double stall_table_num(const stall_table *t, size_t row, int col)
{
    if (col < 0 || col >= t->ncols || row >= t->nrows)
        return NAN;
    const char *s = stall_table_get(t, row, col);
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE)
        return NAN;
    return v;
}

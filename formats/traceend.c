/*
 * traceend.c - the end of a trace file, checked for a cut (stall/traceend.h):
 * a last line without its newline is warned of, a number cut inside is
 * refused. Every trace reader calls it; it knows no format.
 */
#include "stall/traceend.h"
#include "stall/io.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TE_PATH_MAX 1024
#define TE_WHY_MAX 2048

/* ---- the end of a file: cut? ---- */

/* A value that reads as a number or a timestamp: digits, sign, point,
 * exponent, '-', ':' and ' ' (pandas' timestamps). */
static bool te_numeric(const char *s, size_t n)
{
    bool digit = false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9')
            digit = true;
        else if (!strchr("+-.eE: ", c))
            return false;
    }
    return digit;
}

int stall_trace_check_end(const char *path, bool *cut, stall_err *err)
{
    *cut = false;
    if (stall_input_check(path, err) != 0)
        return STALL_EIO;
    FILE *f = fopen(path, "rb");
    if (!f)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
    int rc = 0;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    int last = EOF;
    if (size > 0 && fseek(f, size - 1, SEEK_SET) == 0)
        last = getc(f);
    if (size <= 0 || last == '\n' || last == EOF) {
        fclose(f);
        return 0;
    }
    *cut = true;
    /* The last line's number, and the complete lines of the last MiB
     * before it for the lengths of each column. */
    long lines = 1;
    rewind(f);
    for (int c; (c = getc(f)) != EOF;)
        lines += c == '\n';
    long from = size > (1L << 20) ? size - (1L << 20) : 0;
    size_t n = (size_t)(size - from);
    char *buf = stall_xmalloc(n + 1);
    if (fseek(f, from, SEEK_SET) != 0 || fread(buf, 1, n, f) != n) {
        fclose(f);
        free(buf);
        return stall_err_set(err, STALL_EIO, "%s: cannot read its end", path);
    }
    fclose(f);
    buf[n] = '\0';
    char *lastline = strrchr(buf, '\n');
    if (!lastline || strchr(lastline, '"') || memchr(buf, '\0', n)) {
        free(buf);
        return 0; /* one line only, or quoted fields: nothing to compare */
    }
    *lastline++ = '\0';
    /* Lines of buf before the last: skip a partial first line, and the
     * header when buf starts the file. */
    char *p = buf; /* its first line is a header (from = 0) or partial */
    {
        char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : p + strlen(p);
    }
    enum { MAXC = 256 };
    size_t minlen[MAXC];
    int rows[MAXC];
    for (int c = 0; c < MAXC; c++)
        minlen[c] = (size_t)-1, rows[c] = 0;
    int lastn = 1;
    for (const char *q = lastline; *q; q++)
        lastn += *q == ',';
    while (*p) {
        char *nl = strchr(p, '\n');
        char *end = nl ? nl : p + strlen(p);
        int nf = 1;
        bool quoted = false;
        for (const char *q = p; q < end; q++) {
            nf += *q == ',';
            quoted |= *q == '"';
        }
        if (nf == lastn && !quoted) {
            int c = 0;
            const char *fs = p;
            for (const char *q = p;; q++)
                if (q == end || *q == ',' || *q == '\r') {
                    size_t len = (size_t)(q - fs);
                    if (c < MAXC) {
                        if (len < minlen[c])
                            minlen[c] = len;
                        rows[c]++;
                    }
                    c++;
                    fs = q + 1;
                    if (q == end || *q == '\r')
                        break;
                }
        }
        p = nl ? nl + 1 : end;
    }
    int c = 0;
    const char *fs = lastline;
    for (const char *q = lastline;; q++)
        if (*q == '\0' || *q == ',' || *q == '\r') {
            size_t len = (size_t)(q - fs);
            if (c < MAXC && rows[c] >= 2 && len > 0 && len < minlen[c] && te_numeric(fs, len)) {
                rc = stall_err_set(err, STALL_EPARSE,
                                   "%s:%ld:%d: \"%.*s\" is shorter than every other value of its "
                                   "column, and the file ends without a newline: it looks cut "
                                   "inside this number",
                                   path, lines, c + 1, (int)(len > 80 ? 80 : len), fs);
                break;
            }
            c++;
            fs = q + 1;
            if (*q != ',')
                break;
        }
    free(buf);
    return rc;
}

static pthread_mutex_t te_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char path[TE_PATH_MAX];
    char why[TE_WHY_MAX];
} te_cut[8];
static int te_ncut;

/* Remembers path with why, once per (path, why). */
static void te_remember(const char *path, const char *why)
{
    pthread_mutex_lock(&te_lock);
    bool seen = false;
    for (int i = 0; i < te_ncut && !seen; i++)
        seen = strcmp(te_cut[i].path, path) == 0 && strcmp(te_cut[i].why, why) == 0;
    if (!seen && te_ncut < 8 && strlen(path) < TE_PATH_MAX) {
        strcpy(te_cut[te_ncut].path, path);
        snprintf(te_cut[te_ncut].why, TE_WHY_MAX, "%s", why);
        te_ncut++;
    }
    pthread_mutex_unlock(&te_lock);
}

/* PATH.cut, left by the capture tool's `merge --salvage-cut` beside a trace
 * merged from rank files whose run did not close: its first line, or "". */
static void te_salvaged(const char *path, char *line, size_t n)
{
    line[0] = '\0';
    char mark[TE_PATH_MAX + 8];
    if (snprintf(mark, sizeof mark, "%s.cut", path) >= (int)sizeof mark)
        return;
    FILE *f = fopen(mark, "r");
    if (!f)
        return;
    if (!fgets(line, (int)n, f) || !line[0])
        snprintf(line, n, "cut");
    fclose(f);
    line[strcspn(line, "\r\n")] = '\0';
}

int stall_trace_check_end_warn(const char *path, stall_err *err)
{
    bool cut = false;
    int rc = stall_trace_check_end(path, &cut, err);
    if (rc)
        return rc;
    if (cut)
        te_remember(path, "the last line has no newline: the file may be cut");
    char line[TE_WHY_MAX - 160];
    te_salvaged(path, line, sizeof line);
    if (line[0]) {
        char why[TE_WHY_MAX];
        snprintf(why, sizeof why,
                 "merged from rank files whose run did not close (crashed or killed): the "
                 "epochs it did not finish are missing (%s.cut: %s)",
                 path, line);
        te_remember(path, why);
    }
    return 0;
}

const char *stall_trace_cut_file(int i)
{
    pthread_mutex_lock(&te_lock);
    const char *p = i >= 0 && i < te_ncut ? te_cut[i].path : NULL;
    pthread_mutex_unlock(&te_lock);
    return p;
}

const char *stall_trace_cut_why(int i)
{
    pthread_mutex_lock(&te_lock);
    const char *p = i >= 0 && i < te_ncut ? te_cut[i].why : NULL;
    pthread_mutex_unlock(&te_lock);
    return p;
}

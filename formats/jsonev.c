/*
 * jsonev.c - trace events streamed out of JSON with libyajl (a push
 * parser: it calls back per key and value, keeping no tree) over gzin.c
 * (gzip and plain files alike; bytes after the gzip data refused), for the
 * Kineto and dftracer readers (jsonev.h).
 *
 * Memory is one 64 KiB chunk (Chrome traces) or one line (dftracer's
 * line-per-event files), yajl's state, and one jev_event: whatever the
 * length of the file. Two things are done by hand, both because yajl has no
 * option for them: Chrome traces whose writers leave trailing commas
 * ("[..., {...},\n]") have such a comma turned into a space before yajl
 * sees it (a scan that tracks strings and escapes, and keeps byte offsets
 * unchanged); dftracer's files are "[", then one object per line without
 * commas, then "]", which is not one JSON value, so they are fed to yajl
 * line by line as a sequence of values (yajl_allow_multiple_values), each
 * line checked to hold whole objects.
 */
#include "jsonev.h"
#include "gzin.h"
#include "stall/io.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>
#include <zlib.h>

#define JEV_CHUNK 65536
#define JEV_MAXDEPTH 64
#define JEV_MAXLINE ((size_t)64 << 20)

typedef struct jev_state {
    jev_kind kind;
    jev_event_fn on_event;
    jev_top_fn on_top;
    void *ctx;
    stall_err *err;
    int rc;
    yajl_handle h;
    const char *file;
    /* position: the text being fed starts at byte base, line line0 */
    const unsigned char *buf;
    int64_t base, line0;
    size_t scan; /* newlines counted in buf[0, scan) */
    int64_t scan_lines;
    /* structure */
    int depth;
    char type[JEV_MAXDEPTH + 1]; /* 'm' or 'a' per open depth (1-based) */
    int arr_depth, ev_depth;     /* the array holding events; the event maps' depth */
    bool in_event, in_args, seen_value;
    char top_key[48], sub_key[48], ev_key[24], args_key[16];
    jev_event ev;
} jev_state;

static void jev_where(jev_state *s, jev_pos *p)
{
    size_t upto = yajl_get_bytes_consumed(s->h);
    while (s->scan < upto) {
        if (s->buf[s->scan] == '\n')
            s->scan_lines++;
        s->scan++;
    }
    p->file = s->file;
    p->offset = s->base + (int64_t)upto;
    p->line = s->line0 + s->scan_lines;
}

static void jev_copy(char *dst, size_t cap, const unsigned char *v, size_t n, bool *cut)
{
    size_t k = n < cap - 1 ? n : cap - 1;
    memcpy(dst, v, k);
    dst[k] = '\0';
    if (cut)
        *cut = k < n;
}

#define JEV_SET(field) jev_copy(s->ev.field, sizeof s->ev.field, v, n, NULL)

static int jev_scalar(void *ctx, const unsigned char *v, size_t n)
{
    jev_state *s = ctx;
    if (s->depth == 0) {
        if (s->kind == JEV_LINES) {
            jev_pos p;
            jev_where(s, &p);
            s->rc = stall_err_set(s->err, STALL_EPARSE,
                                  "%s: line %lld (byte %lld): not an event object (dftracer "
                                  "files hold one JSON object per line)",
                                  s->file, (long long)p.line, (long long)p.offset);
            return 0;
        }
        s->seen_value = true;
        return 1;
    }
    if (s->in_args && s->depth == s->ev_depth + 1) {
        const char *k = s->args_key;
        if (strcmp(k, "epoch") == 0)
            JEV_SET(a_epoch);
        else if (strcmp(k, "step") == 0)
            JEV_SET(a_step);
        else if (strcmp(k, "count") == 0)
            JEV_SET(a_count);
        else if (strcmp(k, "name") == 0)
            JEV_SET(a_name);
        else if (strcmp(k, "value") == 0)
            JEV_SET(a_value);
        return 1;
    }
    if (s->in_event && s->depth == s->ev_depth) {
        const char *k = s->ev_key;
        if (strcmp(k, "name") == 0)
            jev_copy(s->ev.name, sizeof s->ev.name, v, n, &s->ev.name_cut);
        else if (strcmp(k, "cat") == 0)
            JEV_SET(cat);
        else if (strcmp(k, "ph") == 0)
            JEV_SET(ph);
        else if (strcmp(k, "pid") == 0)
            JEV_SET(pid);
        else if (strcmp(k, "tid") == 0)
            JEV_SET(tid);
        else if (strcmp(k, "ts") == 0)
            JEV_SET(ts);
        else if (strcmp(k, "dur") == 0)
            JEV_SET(dur);
        return 1;
    }
    if (!s->in_event && s->kind == JEV_CHROME && s->on_top && s->type[1] == 'm') {
        char text[96];
        jev_copy(text, sizeof text, v, n, NULL);
        if (s->depth == 1) {
            s->on_top(s->ctx, s->top_key, text);
        } else if (s->depth == 2 && s->type[2] == 'm') {
            char path[100];
            snprintf(path, sizeof path, "%s.%s", s->top_key, s->sub_key);
            s->on_top(s->ctx, path, text);
        }
    }
    return 1;
}

static int jev_null(void *ctx)
{
    return jev_scalar(ctx, (const unsigned char *)"", 0);
}

static int jev_bool(void *ctx, int b)
{
    return b ? jev_scalar(ctx, (const unsigned char *)"true", 4)
             : jev_scalar(ctx, (const unsigned char *)"false", 5);
}

static int jev_number(void *ctx, const char *v, size_t n)
{
    return jev_scalar(ctx, (const unsigned char *)v, n);
}

static int jev_string(void *ctx, const unsigned char *v, size_t n)
{
    return jev_scalar(ctx, v, n);
}

static int jev_open(jev_state *s, char type)
{
    bool ev_start =
        type == 'm' &&
        (s->kind == JEV_LINES ? s->depth == 0 : s->arr_depth > 0 && s->depth == s->arr_depth);
    s->depth++;
    if (s->depth <= JEV_MAXDEPTH)
        s->type[s->depth] = type;
    if (s->depth == 1)
        s->seen_value = true;
    if (ev_start) {
        s->in_event = true;
        s->ev_depth = s->depth;
        memset(&s->ev, 0, sizeof s->ev);
        s->ev_key[0] = '\0';
    } else if (type == 'm' && s->in_event && s->depth == s->ev_depth + 1 &&
               strcmp(s->ev_key, "args") == 0) {
        s->in_args = true;
        s->args_key[0] = '\0';
    }
    return 1;
}

static int jev_start_map(void *ctx)
{
    return jev_open(ctx, 'm');
}

static int jev_start_array(void *ctx)
{
    jev_state *s = ctx;
    if (s->kind == JEV_LINES && s->depth == 0) {
        jev_pos p;
        jev_where(s, &p);
        s->rc = stall_err_set(s->err, STALL_EPARSE,
                              "%s: line %lld (byte %lld): an array where an event object was "
                              "expected (dftracer files hold one JSON object per line)",
                              s->file, (long long)p.line, (long long)p.offset);
        return 0;
    }
    if (s->kind == JEV_CHROME && s->arr_depth == 0 &&
        (s->depth == 0 ||
         (s->depth == 1 && s->type[1] == 'm' && strcmp(s->top_key, "traceEvents") == 0)))
        s->arr_depth = s->depth + 1;
    return jev_open(s, 'a');
}

static int jev_map_key(void *ctx, const unsigned char *v, size_t n)
{
    jev_state *s = ctx;
    if (s->in_args && s->depth == s->ev_depth + 1)
        jev_copy(s->args_key, sizeof s->args_key, v, n, NULL);
    else if (s->in_event && s->depth == s->ev_depth)
        jev_copy(s->ev_key, sizeof s->ev_key, v, n, NULL);
    else if (!s->in_event && s->depth == 1)
        jev_copy(s->top_key, sizeof s->top_key, v, n, NULL);
    else if (!s->in_event && s->depth == 2)
        jev_copy(s->sub_key, sizeof s->sub_key, v, n, NULL);
    return 1;
}

static int jev_end_map(void *ctx)
{
    jev_state *s = ctx;
    if (s->in_args && s->depth == s->ev_depth + 1) {
        s->in_args = false;
    } else if (s->in_event && s->depth == s->ev_depth) {
        s->in_event = false;
        jev_pos p;
        jev_where(s, &p);
        int rc = s->on_event(s->ctx, &s->ev, &p, s->err);
        if (rc) {
            s->rc = rc;
            s->depth--;
            return 0;
        }
    }
    s->depth--;
    return 1;
}

static int jev_end_array(void *ctx)
{
    jev_state *s = ctx;
    s->depth--;
    return 1;
}

static const yajl_callbacks jev_callbacks = {
    jev_null,    jev_bool,        NULL,          NULL,
    jev_number,  jev_string,      jev_start_map, jev_map_key,
    jev_end_map, jev_start_array, jev_end_array,
};

/* yajl's complaint, on one line. */
static int jev_syntax(jev_state *s, const unsigned char *text, size_t len)
{
    if (s->rc)
        return s->rc;
    jev_pos p;
    jev_where(s, &p);
    unsigned char *m = yajl_get_error(s->h, 0, text, len);
    char msg[200];
    snprintf(msg, sizeof msg, "%s", m ? (const char *)m : "parse error");
    if (m)
        yajl_free_error(s->h, m);
    msg[strcspn(msg, "\n")] = '\0';
    return s->rc = stall_err_set(s->err, STALL_EPARSE, "%s: line %lld (byte %lld): not JSON: %s",
                                 s->file, (long long)p.line, (long long)p.offset, msg);
}

static int jev_feed(jev_state *s, const unsigned char *text, size_t len)
{
    s->buf = text;
    s->scan = 0;
    s->scan_lines = 0;
    yajl_status st = yajl_parse(s->h, text, len);
    if (st == yajl_status_ok)
        return 0;
    if (st == yajl_status_client_canceled && s->rc)
        return s->rc;
    return jev_syntax(s, text, len);
}

/* After feeding text: advance base and line0 past it. */
static void jev_advance(jev_state *s, const unsigned char *text, size_t len)
{
    for (size_t i = 0; i < len; i++)
        s->line0 += text[i] == '\n';
    s->base += (int64_t)len;
}

static int jev_gz_error(jev_state *s, gzin *gz)
{
    const char *m = gzin_msg(gz);
    if (!gzin_is_gzip(gz))
        return s->rc = stall_err_set(s->err, STALL_EIO, "%s: byte %lld: %s", s->file,
                                     (long long)s->base, m[0] ? m : "read error");
    return s->rc = stall_err_set(s->err, STALL_EPARSE, "%s: byte %lld: gzip: %s", s->file,
                                 (long long)s->base, m[0] ? m : "read error");
}

/* Chrome traces: 64 KiB chunks, trailing commas turned into spaces. */
static int jev_chrome(jev_state *s, gzin *gz)
{
    unsigned char *buf = stall_xmalloc(JEV_CHUNK);
    size_t carry = 0;
    bool in_str = false, esc = false;
    int rc = 0;
    for (;;) {
        long got = gzin_read(gz, buf + carry, JEV_CHUNK - carry);
        if (got < 0) {
            rc = jev_gz_error(s, gz);
            break;
        }
        size_t n = carry + (size_t)got;
        if (s->base == 0 && carry == 0 && n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
            /* a UTF-8 byte order mark (a file saved by an editor): skipped,
             * its bytes counted */
            memmove(buf, buf + 3, n - 3);
            n -= 3;
            s->base = 3;
        }
        bool eof = got == 0;
        long pend = -1;
        for (size_t i = 0; i < n; i++) {
            unsigned char c = buf[i];
            if (in_str) {
                if (esc)
                    esc = false;
                else if (c == '\\')
                    esc = true;
                else if (c == '"')
                    in_str = false;
                continue;
            }
            if (pend >= 0) {
                if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
                    continue;
                if (c == ']' || c == '}')
                    buf[pend] = ' ';
                pend = -1;
            }
            if (c == '"')
                in_str = true;
            else if (c == ',')
                pend = (long)i;
        }
        size_t feed = n;
        if (pend >= 0 && !eof && n - (size_t)pend < JEV_CHUNK / 2)
            feed = (size_t)pend; /* the comma's fate is known with the next chunk */
        if (feed > 0 && (rc = jev_feed(s, buf, feed)) != 0)
            break;
        jev_advance(s, buf, feed);
        carry = n - feed;
        memmove(buf, buf + feed, carry);
        if (eof) {
            if (gzin_failed(gz)) {
                rc = jev_gz_error(s, gz);
                break;
            }
            s->buf = buf;
            s->scan = 0;
            s->scan_lines = 0;
            if (!s->seen_value) {
                rc = s->rc = stall_err_set(s->err, STALL_EPARSE, "%s: line 1: empty file", s->file);
                break;
            }
            if (yajl_complete_parse(s->h) != yajl_status_ok)
                rc = s->rc ? s->rc
                           : stall_err_set(s->err, STALL_EPARSE,
                                           "%s: line %lld (byte %lld): the JSON ends early "
                                           "(truncated file?)",
                                           s->file, (long long)s->line0, (long long)s->base);
            break;
        }
        /* in_str/esc hold for the carried bytes: only whitespace follows the comma */
    }
    free(buf);
    return rc;
}

static bool jev_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* dftracer: a line at a time. */
static int jev_lines(jev_state *s, gzin *gz)
{
    size_t cap = JEV_CHUNK, len = 0;
    unsigned char *line = stall_xmalloc(cap);
    int rc = 0;
    int64_t lineno = 0;
    for (;;) {
        /* one physical line into line[0, len) */
        len = 0;
        bool got_any = false, nl = false;
        for (;;) {
            if (cap - len < 2) {
                if (cap >= JEV_MAXLINE) {
                    rc = s->rc =
                        stall_err_set(s->err, STALL_EPARSE, "%s: line %lld: longer than %zu MiB",
                                      s->file, (long long)lineno + 1, JEV_MAXLINE >> 20);
                    goto out;
                }
                cap *= 2;
                line = stall_xrealloc(line, cap);
            }
            char *r = gzin_gets(gz, (char *)line + len, cap - len);
            if (!r)
                break;
            got_any = true;
            size_t k = strlen((char *)line + len);
            if (k == 0) { /* a NUL byte in the file */
                rc = s->rc = stall_err_set(
                    s->err, STALL_EPARSE, "%s: line %lld (byte %lld): a NUL byte", s->file,
                    (long long)lineno + 1, (long long)(s->base + (int64_t)len));
                goto out;
            }
            len += k;
            if (line[len - 1] == '\n') {
                nl = true;
                break;
            }
        }
        if (!got_any) {
            if (gzin_failed(gz)) {
                rc = jev_gz_error(s, gz);
                goto out;
            }
            break;
        }
        if (!nl) { /* the last line: a gzip stream cut short says so here */
            if (gzin_failed(gz)) {
                s->base += (int64_t)len;
                rc = jev_gz_error(s, gz);
                goto out;
            }
        }
        lineno++;
        /* the event text: brackets and a trailing comma taken off (and a
         * UTF-8 byte order mark before the first line) */
        size_t a = lineno == 1 && len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0 ? 3 : 0, b = len;
        while (a < b && jev_space(line[a]))
            a++;
        while (b > a && jev_space(line[b - 1]))
            b--;
        if (a < b && line[a] == '[')
            a++;
        while (a < b && jev_space(line[a]))
            a++;
        if (b > a && line[b - 1] == ']' &&
            (b - a == 1 || line[b - 2] == '}' || jev_space(line[b - 2])))
            b--;
        while (b > a && jev_space(line[b - 1]))
            b--;
        if (b > a && line[b - 1] == ',')
            b--;
        if (a < b) {
            s->line0 = lineno;
            s->base += (int64_t)a;
            if ((rc = jev_feed(s, line + a, b - a)) != 0)
                goto out;
            s->base -= (int64_t)a;
            if (s->depth != 0) {
                rc = s->rc =
                    stall_err_set(s->err, STALL_EPARSE,
                                  "%s: line %lld (byte %lld): the event does not end on "
                                  "its line (truncated or split?)",
                                  s->file, (long long)lineno, (long long)(s->base + (int64_t)b));
                goto out;
            }
        }
        s->base += (int64_t)len;
    }
    if (s->seen_value && yajl_complete_parse(s->h) != yajl_status_ok)
        rc = s->rc ? s->rc
                   : stall_err_set(s->err, STALL_EPARSE, "%s: line %lld: the JSON ends early",
                                   s->file, (long long)lineno);
out:
    free(line);
    return rc;
}

int jev_read(const char *path, jev_kind kind, jev_event_fn on_event, jev_top_fn on_top, void *ctx,
             stall_err *err)
{
    if (stall_input_check(path, err) != 0)
        return STALL_EIO;
    gzin *gz = gzin_open(path);
    if (!gz)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
    jev_state *s = stall_xcalloc(1, sizeof *s);
    s->kind = kind;
    s->on_event = on_event;
    s->on_top = on_top;
    s->ctx = ctx;
    s->err = err;
    s->file = path;
    s->line0 = 1;
    s->h = yajl_alloc(&jev_callbacks, NULL, s);
    if (kind == JEV_LINES)
        yajl_config(s->h, yajl_allow_multiple_values, 1);
    int rc = kind == JEV_CHROME ? jev_chrome(s, gz) : jev_lines(s, gz);
    yajl_free(s->h);
    free(s);
    gzin_close(gz);
    return rc;
}

long jev_head(const char *path, char *buf, size_t n)
{
    stall_err ignored;
    if (stall_input_check(path, &ignored) != 0)
        return -1; /* jev_read says why */
    gzFile gz = gzopen(path, "rb");
    if (!gz)
        return -1;
    int got = gzread(gz, buf, (unsigned)(n > INT_MAX ? INT_MAX : n));
    gzclose(gz);
    return got < 0 ? 0 : got;
}

int jev_bad_field(const jev_event *e, const jev_pos *p, const char *field, const char *val,
                  const char *what, stall_err *err)
{
    return stall_err_set(err, STALL_EPARSE, "%s: line %lld (byte %lld): '%s': %s %s%s%s is not %s",
                         p->file, (long long)p->line, (long long)p->offset, e->name, field,
                         val[0] ? "'" : "", val[0] ? val : "missing (or null)", val[0] ? "'" : "",
                         what);
}

int jev_int(const char *text, int64_t *v)
{
    const char *p = text;
    bool neg = *p == '-';
    if (neg)
        p++;
    if (*p < '0' || *p > '9')
        return -1;
    int64_t x = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (x > (INT64_MAX - 9) / 10)
            return -1;
        x = x * 10 + (*p - '0');
    }
    if (*p)
        return -1;
    *v = neg ? -x : x;
    return 0;
}

int jev_us_to_ns(const char *text, int64_t *ns)
{
    const char *p = text;
    bool neg = *p == '-';
    if (neg)
        p++;
    int64_t ip = 0;
    int nd = 0;
    for (; *p >= '0' && *p <= '9'; p++, nd++) {
        if (ip > INT64_C(9000000000000000))
            return -1;
        ip = ip * 10 + (*p - '0');
    }
    int64_t frac = 0;
    int nf = 0;
    bool round_up = false;
    if (*p == '.') {
        p++;
        for (; *p >= '0' && *p <= '9'; p++, nf++) {
            if (nf < 3)
                frac = frac * 10 + (*p - '0');
            else if (nf == 3)
                round_up = *p >= '5';
        }
    }
    if (nd + nf == 0)
        return -1;
    if (*p == 'e' || *p == 'E') { /* rare: through double */
        char *end = NULL;
        errno = 0;
        double d = strtod(text, &end);
        if (*end || errno || !isfinite(d) || fabs(d) > 9e15)
            return -1;
        *ns = (int64_t)llround(d * 1000.0);
        return 0;
    }
    if (*p || ip > INT64_C(9000000000000000))
        return -1;
    for (int i = nf; i < 3; i++)
        frac *= 10;
    int64_t v = ip * 1000 + frac + (round_up ? 1 : 0);
    *ns = neg ? -v : v;
    return 0;
}

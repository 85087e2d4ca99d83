/*
 * spill.c - a trace's rows in a compact temporary file (see spill.h).
 */
#include "spill.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stall/base.h"
#include "stall/io.h"

#define SP_BUF (1 << 18)
#define SP_ROW_MAX 160 /* 12 varints of at most 10 bytes, a tag and a double */

struct wi_spill {
    int fd;
    bool ok;
    unsigned char *buf; /* the writer's */
    size_t n;
    int64_t rows;
    uint64_t size;       /* bytes in the file */
    stall_time last_req; /* the previous row's request */
};

struct wi_spill_reader {
    const wi_spill *s;
    unsigned char *buf;
    size_t n, pos;
    uint64_t off; /* file offset of buf[n] */
    int64_t left; /* rows not yet handed out */
    stall_time last_req;
};

wi_spill *wi_spill_new(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char *path = stall_path_join(dir, "stallsim-spill-XXXXXX");
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    free(path);
    if (fd < 0)
        return NULL;
    wi_spill *s = stall_xcalloc(1, sizeof *s);
    s->fd = fd;
    s->ok = true;
    s->buf = stall_xmalloc(SP_BUF);
    return s;
}

static bool sp_write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return false;
        p += w;
        n -= (size_t)w;
    }
    return true;
}

static void sp_flush(wi_spill *s)
{
    if (s->ok && s->n > 0)
        s->ok = sp_write_all(s->fd, s->buf, s->n);
    s->size += s->n;
    s->n = 0;
}

static unsigned char *sp_uv(unsigned char *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    *p++ = (unsigned char)v;
    return p;
}

/* Zigzag: small differences of either sign take few bytes. */
static uint64_t sp_zz(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static int64_t sp_unzz(uint64_t u)
{
    return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

/* a - b and b + d modulo 2^64: exact for any times, no signed overflow. */
static int64_t sp_diff(stall_time a, stall_time b)
{
    return (int64_t)((uint64_t)a - (uint64_t)b);
}

static stall_time sp_add(stall_time b, int64_t d)
{
    return (stall_time)((uint64_t)b + (uint64_t)d);
}

void wi_spill_put(wi_spill *s, const stall_tidy_row *row)
{
    if (!s->ok)
        return;
    if (SP_BUF - s->n < SP_ROW_MAX)
        sp_flush(s);
    unsigned char *p = s->buf + s->n;
    stall_time rq = row->request;
    static const double zero = 0.0;
    bool has_ce = row->compute_end != -1, has_bytes = memcmp(&row->bytes, &zero, sizeof zero) != 0;
    p = sp_uv(p, (uint64_t)row->rank);
    p = sp_uv(p, (uint64_t)row->epoch);
    p = sp_uv(p, (uint64_t)row->batch);
    /* The worker, and whether compute_end and bytes follow. */
    p = sp_uv(p, sp_zz(row->worker) << 2 | (uint64_t)has_ce << 1 | (uint64_t)has_bytes);
    p = sp_uv(p, sp_zz(sp_diff(rq, s->last_req)));
    p = sp_uv(p, sp_zz(sp_diff(row->fetch_start, rq)));
    p = sp_uv(p, sp_zz(sp_diff(row->fetch_end, rq)));
    p = sp_uv(p, sp_zz(sp_diff(row->ready, rq)));
    p = sp_uv(p, sp_zz(sp_diff(row->iter_end, rq)));
    if (has_ce)
        p = sp_uv(p, sp_zz(sp_diff(row->compute_end, rq)));
    p = sp_uv(p, sp_zz(sp_diff(row->epoch_start, rq)));
    p = sp_uv(p, sp_zz(row->samples));
    if (has_bytes) {
        memcpy(p, &row->bytes, sizeof row->bytes);
        p += sizeof row->bytes;
    }
    s->n = (size_t)(p - s->buf);
    s->last_req = rq;
    s->rows++;
}

bool wi_spill_end(wi_spill *s)
{
    sp_flush(s);
    return s->ok;
}

wi_spill_reader *wi_spill_read(const wi_spill *s)
{
    wi_spill_reader *r = stall_xcalloc(1, sizeof *r);
    r->s = s;
    r->buf = stall_xmalloc(SP_BUF);
    r->left = s->rows;
    return r;
}

/* Keeps at least SP_ROW_MAX bytes (or the rest of the file) after pos. */
static int sp_fill(wi_spill_reader *r)
{
    size_t have = r->n - r->pos;
    if (have >= SP_ROW_MAX || r->off == r->s->size)
        return 0;
    memmove(r->buf, r->buf + r->pos, have);
    r->n = have;
    r->pos = 0;
    while (r->n < SP_BUF && r->off < r->s->size) {
        ssize_t got = pread(r->s->fd, r->buf + r->n, SP_BUF - r->n, (off_t)r->off);
        if (got <= 0)
            return -1;
        r->n += (size_t)got;
        r->off += (uint64_t)got;
    }
    return 0;
}

static uint64_t sp_get_uv(const unsigned char **pp)
{
    const unsigned char *p = *pp;
    uint64_t v = 0;
    for (int sh = 0;; sh += 7) {
        unsigned char c = *p++;
        v |= (uint64_t)(c & 0x7f) << sh;
        if (c < 0x80)
            break;
    }
    *pp = p;
    return v;
}

int wi_spill_next(wi_spill_reader *r, stall_tidy_row *row)
{
    if (r->left == 0)
        return 0;
    if (sp_fill(r) != 0)
        return -1;
    const unsigned char *p = r->buf + r->pos;
    row->rank = (int)sp_get_uv(&p);
    row->epoch = (int)sp_get_uv(&p);
    row->batch = (int64_t)sp_get_uv(&p);
    uint64_t wf = sp_get_uv(&p);
    row->worker = (int32_t)sp_unzz(wf >> 2);
    stall_time rq = sp_add(r->last_req, sp_unzz(sp_get_uv(&p)));
    row->request = rq;
    row->fetch_start = sp_add(rq, sp_unzz(sp_get_uv(&p)));
    row->fetch_end = sp_add(rq, sp_unzz(sp_get_uv(&p)));
    row->ready = sp_add(rq, sp_unzz(sp_get_uv(&p)));
    row->iter_end = sp_add(rq, sp_unzz(sp_get_uv(&p)));
    row->compute_end = wf & 2 ? sp_add(rq, sp_unzz(sp_get_uv(&p))) : -1;
    row->epoch_start = sp_add(rq, sp_unzz(sp_get_uv(&p)));
    row->samples = sp_unzz(sp_get_uv(&p));
    row->bytes = 0.0;
    if (wf & 1) {
        memcpy(&row->bytes, p, sizeof row->bytes);
        p += sizeof row->bytes;
    }
    r->pos = (size_t)(p - r->buf);
    r->last_req = rq;
    r->left--;
    return 1;
}

void wi_spill_reader_close(wi_spill_reader *r)
{
    if (!r)
        return;
    free(r->buf);
    free(r);
}

void wi_spill_free(wi_spill *s)
{
    if (!s)
        return;
    close(s->fd);
    free(s->buf);
    free(s);
}

/*
 * gzin.c - gzip or plain files read whole, trailing bytes refused
 * (gzin.h). zlib's inflate in gzip-only mode over 128 KiB reads; after a
 * member's end the next bytes must be another member's magic (1f 8b) or
 * the end of the file.
 */
#include "gzin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "stall/base.h"

#define GZIN_IN (1 << 17)
#define GZIN_OUT (1 << 16)

struct gzin {
    int fd;
    bool gzip, z_ready, member_done, eof, failed;
    z_stream z;
    int64_t in_total; /* bytes read from the file */
    unsigned char in[GZIN_IN];
    unsigned char out[GZIN_OUT];
    size_t out_pos, out_len;
    char msg[200];
};

static void gzin_fail(gzin *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gzin_fail(gzin *g, const char *fmt, ...)
{
    g->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->msg, sizeof g->msg, fmt, ap);
    va_end(ap);
}

/* More compressed bytes into in[]; 0 at the end of the file, -1 on error. */
static long gzin_raw(gzin *g, unsigned char *to, size_t n)
{
    for (;;) {
        ssize_t got = read(g->fd, to, n);
        if (got >= 0) {
            g->in_total += got;
            return (long)got;
        }
        if (errno != EINTR) {
            gzin_fail(g, "read error: %s", strerror(errno));
            return -1;
        }
    }
}

gzin *gzin_open(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    gzin *g = stall_xcalloc(1, sizeof *g);
    g->fd = fd;
    /* the first bytes tell gzip from plain text */
    size_t have = 0;
    while (have < 2) {
        long got = gzin_raw(g, g->in + have, GZIN_OUT - have) /* fits out[] */;
        if (got <= 0)
            break;
        have += (size_t)got;
    }
    g->gzip = have >= 2 && g->in[0] == 0x1f && g->in[1] == 0x8b;
    if (g->gzip) {
        g->z.next_in = g->in;
        g->z.avail_in = (uInt)have;
        if (inflateInit2(&g->z, 15 + 16) != Z_OK) {
            gzin_fail(g, "out of memory");
        } else {
            g->z_ready = true;
        }
    } else {
        memcpy(g->out, g->in, have);
        g->out_len = have;
    }
    return g;
}

/* Refills out[]: false at the end or on an error. */
static bool gzin_fill(gzin *g)
{
    g->out_pos = g->out_len = 0;
    if (g->failed || g->eof)
        return false;
    if (!g->gzip) {
        long got = gzin_raw(g, g->out, GZIN_OUT);
        if (got <= 0) {
            g->eof = got == 0;
            return false;
        }
        g->out_len = (size_t)got;
        return true;
    }
    while (g->out_len == 0) {
        if (g->z.avail_in == 0) {
            long got = gzin_raw(g, g->in, GZIN_IN);
            if (got < 0)
                return false;
            if (got == 0) {
                if (g->member_done) {
                    g->eof = true;
                } else {
                    gzin_fail(g,
                              "unexpected end of file after compressed byte %lld (truncated "
                              "file?)",
                              (long long)g->in_total);
                }
                return false;
            }
            g->z.next_in = g->in;
            g->z.avail_in = (uInt)got;
        }
        if (g->member_done) {
            /* after a member: another one (its magic), or nothing */
            if (g->z.avail_in == 1 && g->z.next_in[0] == 0x1f) {
                g->in[0] = 0x1f;
                long got = gzin_raw(g, g->in + 1, GZIN_IN - 1);
                if (got < 0)
                    return false;
                g->z.next_in = g->in;
                g->z.avail_in = (uInt)(1 + got);
            }
            if (g->z.avail_in < 2 || g->z.next_in[0] != 0x1f || g->z.next_in[1] != 0x8b) {
                long long at = (long long)g->in_total - (long long)g->z.avail_in;
                gzin_fail(g,
                          "trailing garbage after the gzip data (from compressed byte %lld of "
                          "%lld; not another gzip member: the file is damaged or something "
                          "was appended to it)",
                          at, (long long)g->in_total);
                return false;
            }
            inflateReset(&g->z);
            g->member_done = false;
        }
        g->z.next_out = g->out;
        g->z.avail_out = GZIN_OUT;
        int rc = inflate(&g->z, Z_NO_FLUSH);
        g->out_len = GZIN_OUT - g->z.avail_out;
        if (rc == Z_STREAM_END) {
            g->member_done = true;
        } else if (rc == Z_BUF_ERROR && g->z.avail_in == 0) {
            /* needs more input */
        } else if (rc != Z_OK) {
            gzin_fail(g, "%s (near compressed byte %lld)",
                      g->z.msg            ? g->z.msg
                      : rc == Z_MEM_ERROR ? "out of memory"
                                          : "damaged data",
                      (long long)g->in_total - (long long)g->z.avail_in);
            return false;
        }
    }
    return true;
}

long gzin_read(gzin *g, void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        if (g->out_pos == g->out_len && !gzin_fill(g))
            break;
        size_t k = g->out_len - g->out_pos;
        if (k > n - done)
            k = n - done;
        memcpy((unsigned char *)buf + done, g->out + g->out_pos, k);
        g->out_pos += k;
        done += k;
    }
    if (g->failed && done == 0)
        return -1;
    return (long)done;
}

char *gzin_gets(gzin *g, char *buf, size_t n)
{
    size_t done = 0;
    if (n == 0)
        return NULL;
    while (done + 1 < n) {
        if (g->out_pos == g->out_len && !gzin_fill(g))
            break;
        unsigned char c = g->out[g->out_pos++];
        buf[done++] = (char)c;
        if (c == '\n')
            break;
    }
    buf[done] = '\0';
    return done > 0 ? buf : NULL;
}

bool gzin_failed(const gzin *g)
{
    return g->failed;
}

const char *gzin_msg(const gzin *g)
{
    return g->msg;
}

bool gzin_is_gzip(const gzin *g)
{
    return g->gzip;
}

void gzin_close(gzin *g)
{
    if (!g)
        return;
    if (g->z_ready)
        inflateEnd(&g->z);
    close(g->fd);
    free(g);
}

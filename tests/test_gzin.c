/* gzin: gzip or plain files read whole. Concatenated gzip members are one
 * stream (as gzip -d reads them); bytes after the gzip data that are not
 * another member, and a member cut short, are errors that say where. Then
 * the readers that take .gz (Kineto, dftracer) on a real trace so
 * damaged. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/gzin.h"
#include "stall/dftracer.h"
#include "stall/io.h"
#include "stall/kineto.h"

#include "tmpdir.h"

#define SRC STALL_SOURCE_DIR

static char gdir[] = "/tmp/stall_gzin_XXXXXX";
static void g_setup(void)
{
    tmpdir_make(gdir);
}
static void g_teardown(void)
{
    tmpdir_remove(gdir);
}
TestSuite(gzin, .init = g_setup, .fini = g_teardown);

/* text as one gzip member into out (cap bytes); its length. */
static size_t gz_member(const char *text, size_t len, unsigned char *out, size_t cap)
{
    z_stream z = {0};
    cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    z.next_in = (unsigned char *)(uintptr_t)text;
    z.avail_in = (uInt)len;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    return n;
}

static const char *put(const char *name, const void *bytes, size_t n)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", gdir, name);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(bytes, 1, n, f), n);
    fclose(f);
    return path;
}

/* The whole decompressed text of path, or NULL with msg on an error. */
static char *read_all(const char *path, char *msg, size_t cap)
{
    gzin *g = gzin_open(path);
    cr_assert_not_null(g, "%s", path);
    size_t len = 0, sz = 1 << 20;
    char *buf = malloc(sz);
    long got;
    while ((got = gzin_read(g, buf + len, 7)) > 0) /* odd reads: members straddled */
        len += (size_t)got;
    buf[len] = '\0';
    bool bad = got < 0 || gzin_failed(g);
    snprintf(msg, cap, "%s", gzin_msg(g));
    gzin_close(g);
    if (bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

static const char TEXT[] = "line one\nline two\n{\"a\": 1}\nthe end\n";

Test(gzin, plain_and_one_member_read_whole)
{
    char msg[256];
    char *t = read_all(put("p.txt", TEXT, strlen(TEXT)), msg, sizeof msg);
    cr_assert_not_null(t, "%s", msg);
    cr_expect_str_eq(t, TEXT);
    free(t);
    unsigned char z[512];
    size_t n = gz_member(TEXT, strlen(TEXT), z, sizeof z);
    t = read_all(put("one.gz", z, n), msg, sizeof msg);
    cr_assert_not_null(t, "%s", msg);
    cr_expect_str_eq(t, TEXT);
    free(t);
    /* a plain file longer than the buffers (the first read once overran one) */
    size_t big = 300000;
    char *text = malloc(big + 1);
    for (size_t i = 0; i < big; i++)
        text[i] = (char)('a' + i % 26);
    text[big] = '\0';
    t = read_all(put("big.txt", text, big), msg, sizeof msg);
    cr_assert_not_null(t, "%s", msg);
    cr_expect_str_eq(t, text);
    free(t);
    free(text);
}

Test(gzin, concatenated_members_are_one_stream)
{
    unsigned char z[1024];
    size_t cut = 13; /* inside the second line */
    size_t n = gz_member(TEXT, cut, z, sizeof z);
    n += gz_member(TEXT + cut, strlen(TEXT) - cut, z + n, sizeof z - n);
    n += gz_member("", 0, z + n, sizeof z - n); /* an empty member too */
    char msg[256];
    char *t = read_all(put("two.gz", z, n), msg, sizeof msg);
    cr_assert_not_null(t, "%s", msg);
    cr_expect_str_eq(t, TEXT);
    free(t);
    /* line by line, across the members */
    gzin *g = gzin_open(put("two.gz", z, n));
    char line[64];
    cr_assert_not_null(gzin_gets(g, line, sizeof line));
    cr_expect_str_eq(line, "line one\n");
    cr_assert_not_null(gzin_gets(g, line, sizeof line));
    cr_expect_str_eq(line, "line two\n");
    gzin_close(g);
}

Test(gzin, trailing_garbage_is_an_error_saying_where)
{
    unsigned char z[1024];
    size_t n = gz_member(TEXT, strlen(TEXT), z, sizeof z);
    const char *tails[] = {"garbage!", "\x1f", "\n", "\0\0\0\0"};
    size_t tlen[] = {8, 1, 1, 4};
    for (size_t k = 0; k < 4; k++) {
        memcpy(z + n, tails[k], tlen[k]);
        char msg[256], want[64];
        char *t = read_all(put("tail.gz", z, n + tlen[k]), msg, sizeof msg);
        cr_expect_null(t, "tail %zu read without a word", k);
        free(t);
        cr_expect(strstr(msg, "trailing garbage after the gzip data") != NULL, "%s", msg);
        snprintf(want, sizeof want, "compressed byte %zu of %zu", n, n + tlen[k]);
        cr_expect(strstr(msg, want) != NULL, "tail %zu: %s (want %s)", k, msg, want);
    }
    /* a second member's magic and then nothing: a member cut short */
    memcpy(z + n, "\x1f\x8b", 2);
    char msg[256];
    char *t = read_all(put("magic.gz", z, n + 2), msg, sizeof msg);
    cr_expect_null(t);
    free(t);
    cr_expect(strstr(msg, "truncated") != NULL, "%s", msg);
}

Test(gzin, a_member_cut_short_is_an_error)
{
    unsigned char z[1024];
    size_t n = gz_member(TEXT, strlen(TEXT), z, sizeof z);
    char msg[256];
    char *t = read_all(put("cut.gz", z, n - 5), msg, sizeof msg); /* in the trailer */
    cr_expect_null(t);
    free(t);
    cr_expect(strstr(msg, "truncated file?") != NULL, "%s", msg);
}

/* The bytes of a shipped file, with extra appended, into gdir/name. */
static const char *damaged(const char *src, const char *name, const void *extra, size_t n)
{
    size_t len = 0;
    char *b = stall_read_file(src, &len);
    cr_assert_not_null(b, "%s", src);
    b = realloc(b, len + n);
    memcpy(b + len, extra, n);
    const char *p = put(name, b, len + n);
    free(b);
    return p;
}

Test(gzin, kineto_and_dftracer_refuse_bytes_after_the_gzip_data)
{
    const char *kt = SRC "/tests/kineto/w0_sched/w0_sched.1795464294069.pt.trace.json.gz";
    const char *df = SRC "/tests/dftracer/gen2024/trace-0-of-1.pfw.gz";
    stall_tidy_trace *t = NULL;
    stall_err e = {0};
    const char *p = damaged(kt, "k.pt.trace.json.gz", "junk\n", 5);
    cr_expect_neq(stall_kineto_load(p, &t, &e), 0, "a Kineto trace with junk after it was read");
    cr_expect(strstr(e.msg, p) && strstr(e.msg, "trailing garbage"), "%s", e.msg);
    stall_tidy_free(t);
    t = NULL;
    e = (stall_err){0};
    p = damaged(df, "trace-0-of-1.pfw.gz", "xy", 2);
    cr_expect_neq(stall_dftracer_load(p, &t, &e), 0,
                  "a dftracer trace with junk after it was read");
    cr_expect(strstr(e.msg, p) && strstr(e.msg, "trailing garbage"), "%s", e.msg);
    stall_tidy_free(t);
    /* dftracer writes its .pfw.gz as concatenated members: the same trace
     * twice over is read (the repeats counted once), not refused */
    size_t len = 0;
    char *b = stall_read_file(df, &len);
    t = NULL;
    e = (stall_err){0};
    p = damaged(df, "twice-0-of-1.pfw.gz", b, len);
    free(b);
    cr_expect_eq(stall_dftracer_load(p, &t, &e), 0, "%s", e.msg);
    stall_tidy_free(t);
}

/* text as one gzip member whose header carries a comment of clen bytes
 * (so that its length can be set to the byte); its length. */
static size_t gz_member_c(const char *text, size_t clen, unsigned char *out, size_t cap)
{
    z_stream z = {0};
    cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    char *comment = malloc(clen + 1);
    memset(comment, 'c', clen);
    comment[clen] = '\0';
    gz_header h = {0};
    h.comment = (Bytef *)comment;
    cr_assert_eq(deflateSetHeader(&z, &h), Z_OK);
    z.next_in = (unsigned char *)(uintptr_t)text;
    z.avail_in = (uInt)strlen(text);
    z.next_out = out;
    z.avail_out = (uInt)cap;
    cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
    size_t n = cap - z.avail_out;
    deflateEnd(&z);
    free(comment);
    return n;
}

/* The first read takes 64 KiB: a member ending one byte before it leaves
 * the next member's 1f in that read and its 8b in the next (the path that
 * reads on for the second magic byte); one ending at it leaves the next
 * member wholly to the next read. Both are one stream; a lone 1f there, or
 * 1f and another byte, is trailing garbage. */
Test(gzin, a_member_ending_at_a_read_boundary_is_followed_across_it)
{
    size_t cap = 1 << 18, first = 1 << 16;
    unsigned char *z = malloc(cap);
    size_t probe = gz_member_c("first\n", 100, z, cap);
    for (size_t back = 0; back <= 1; back++) {
        size_t clen = 100 + (first - back) - probe;
        size_t n = gz_member_c("first\n", clen, z, cap);
        cr_assert_eq(n, first - back);
        size_t m = n + gz_member("second\n", 7, z + n, cap - n);
        char msg[256];
        char *t = read_all(put("edge.gz", z, m), msg, sizeof msg);
        cr_assert_not_null(t, "member ending %zu before the read's end: %s", back, msg);
        cr_expect_str_eq(t, "first\nsecond\n");
        free(t);
        const unsigned char tails[2][2] = {{0x1f, 0x00}, {0x1f, 0x8c}};
        for (int k = 0; k < 2; k++) {
            memcpy(z + n, tails[k], 2);
            t = read_all(put("edge-bad.gz", z, n + 1 + (size_t)k), msg, sizeof msg);
            cr_expect_null(t, "tail %d after a member ending %zu before the read's end", k, back);
            free(t);
            cr_expect(strstr(msg, "trailing garbage") != NULL, "%s", msg);
        }
    }
    free(z);
}

/* An empty file, one byte, and a gzip header cut short: read as an empty
 * or one-byte plain file, or refused as truncated, never a crash. */
Test(gzin, tiny_and_headless_files)
{
    char msg[256];
    char *t = read_all(put("empty.gz", "", 0), msg, sizeof msg);
    cr_assert_not_null(t, "%s", msg);
    cr_expect_str_eq(t, "");
    free(t);
    t = read_all(put("one.gz", "\x1f", 1), msg, sizeof msg);
    cr_assert_not_null(t, "%s", msg);
    cr_expect_str_eq(t, "\x1f");
    free(t);
    unsigned char z[512];
    gz_member(TEXT, strlen(TEXT), z, sizeof z);
    for (size_t cut = 2; cut < 10; cut += 3) {
        t = read_all(put("head.gz", z, cut), msg, sizeof msg);
        cr_expect_null(t, "a header of %zu bytes read without a word", cut);
        free(t);
        cr_expect(strstr(msg, "truncated") != NULL, "%zu: %s", cut, msg);
    }
}

/*
 * base.c - error table, error records and the allocation wrappers.
 *
 * Out of memory is not recoverable in a simulator that sizes its arrays from
 * the input up front, so the wrappers abort with one line instead of making
 * every caller check.
 */
/* madvise and MADV_HUGEPAGE (stall_xmalloc_big). */
#define _DEFAULT_SOURCE
#include "stall/base.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#ifndef STALL_VERSION_STRING
#define STALL_VERSION_STRING "0.0.0"
#endif

const char *stall_version(void)
{
    return STALL_VERSION_STRING;
}

#ifndef STALL_TOOLS_DIR
#define STALL_TOOLS_DIR "tools"
#endif

const char *stall_tools_dir(void)
{
    return STALL_TOOLS_DIR;
}

const char *stall_strerror(int code)
{
    switch (code) {
#define STALL__CASE(name, value, text)                                                             \
    case (value):                                                                                  \
        return text;
        STALL_ERRORS(STALL__CASE)
#undef STALL__CASE
    default:
        return "unknown error";
    }
}

int stall_exit_status(int code)
{
    switch (code) {
    case STALL_OK:
        return 0;
    case STALL_EINVAL:
    case STALL_EIO:
    case STALL_EPARSE:
    case STALL_ECONFIG:
        return 2;
    default:
        return 1;
    }
}

int stall_err_set(stall_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        /* One line whatever the input echoed in it holds (a quoted newline
         * of a CSV field, a carriage return): control characters become '?'. */
        for (char *p = err->msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
        err->code = code;
    }
    return code;
}

static void base_oom(size_t size)
{
    fprintf(stderr, "stallsim: out of memory (asked for %zu bytes)\n", size);
    abort();
}

void *stall_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);
    if (!p)
        base_oom(size);
    return p;
}

void *stall_xcalloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        base_oom(SIZE_MAX);
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        base_oom(n * size);
    return p;
}

void *stall_xrealloc(void *ptr, size_t size)
{
    void *p = realloc(ptr, size ? size : 1);
    if (!p)
        base_oom(size);
    return p;
}

char *stall_xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = stall_xmalloc(n);
    memcpy(p, s, n);
    return p;
}

stall_time stall_s_to_ns(double seconds)
{
    return (stall_time)llround(seconds * 1e9);
}

void *stall_xmalloc_big(size_t size)
{
#ifdef MADV_HUGEPAGE
    const size_t huge = (size_t)2 << 20;
    if (size >= 2 * huge && size <= SIZE_MAX - huge) {
        size_t whole = (size + huge - 1) & ~(huge - 1);
        void *p = aligned_alloc(huge, whole);
        if (p) {
            (void)madvise(p, whole, MADV_HUGEPAGE); /* a hint: refused is fine */
            return p;
        }
    }
#endif
    return stall_xmalloc(size);
}

void stall_heap_keep(void)
{
#ifdef __GLIBC__
    /* Up to 32 MiB from the heap (glibc's largest dynamic threshold, and
     * what it would reach by itself after freeing such blocks), and give
     * back only above 256 MiB free at the top. */
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);
#endif
}

static int base_cmp_time(const void *a, const void *b)
{
    stall_time x = *(const stall_time *)a, y = *(const stall_time *)b;
    return (x > y) - (x < y);
}

stall_time stall_median_time(stall_time *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, base_cmp_time);
    return v[n / 2];
}

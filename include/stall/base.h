/*
 * stall/base.h - time, errors and memory: what every stallsim module shares.
 *
 * Time is an int64 count of nanoseconds (stall_time). Event order and every
 * reported number derive from it, so results are exact and repeatable; doubles
 * appear only at the edges (reading traces, writing reports).
 *
 * Errors: functions return 0 or a negative STALL_E* code. Fallible calls also
 * fill a caller-owned stall_err with one line that names the input (file:line:
 * column, or the INI key). On failure a function leaves its outputs untouched
 * or freed; nothing half-built escapes.
 */
#ifndef STALL_BASE_H
#define STALL_BASE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nanoseconds. Absolute times in traces are ns since the Unix epoch. */
typedef int64_t stall_time;

#define STALL_NS_PER_S INT64_C(1000000000)
#define STALL_TIME_MAX INT64_MAX

/* X(name, value, text): the one table of error codes. */
#define STALL_ERRORS(X)                                                                            \
    X(OK, 0, "success")                                                                            \
    X(EINVAL, -1, "invalid argument")                                                              \
    X(EIO, -2, "cannot read or write a file")                                                      \
    X(EPARSE, -3, "bad input data")                                                                \
    X(ECONFIG, -4, "bad configuration")                                                            \
    X(ECAUSAL, -5, "event scheduled before the current time")                                      \
    X(ENOMEM, -6, "out of memory")                                                                 \
    X(EINTERNAL, -7, "internal error")

enum stall_errcode {
#define STALL__ENUM(name, value, text) STALL_##name = (value),
    STALL_ERRORS(STALL__ENUM)
#undef STALL__ENUM
};

/* Text for a code; never NULL ("unknown error" for values outside the table). */
const char *stall_strerror(int code);

/* Process exit status for a code: 0 for STALL_OK, 2 for bad input or
 * configuration (EINVAL, EIO, EPARSE, ECONFIG), 1 for everything else. */
int stall_exit_status(int code);

#define STALL_ERR_MSG 512

/* Error record. msg holds one line without a trailing newline (control
 * characters of echoed input are replaced by '?'). */
typedef struct stall_err {
    int code;
    char msg[STALL_ERR_MSG];
} stall_err;

/* Sets err (when not NULL) and returns code, so callers can write
 * `return stall_err_set(err, STALL_EPARSE, "%s:%d:%d: ...", ...)`. */
int stall_err_set(stall_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Allocation that never returns NULL: out of memory aborts with a message.
 * stall_xcalloc checks n * size for overflow. */
void *stall_xmalloc(size_t size);
void *stall_xcalloc(size_t n, size_t size);
void *stall_xrealloc(void *ptr, size_t size);
char *stall_xstrdup(const char *s);
/* stall_xmalloc for a large array filled once and read often (the duration
 * tables): from 4 MiB on it is placed on 2 MiB boundaries and the kernel
 * asked for transparent huge pages (madvise), which cuts the page faults of
 * its first filling about 500-fold. Freed with free(). */
void *stall_xmalloc_big(size_t size);

/* Seconds (finite, may be negative) to nanoseconds, rounded to nearest. */
stall_time stall_s_to_ns(double seconds);
/* Nanoseconds to seconds (inline: the model's per-iteration sums call it
 * once per rank). */
static inline double stall_ns_to_s(stall_time ns)
{
    return (double)ns / 1e9;
}

/* Keeps memory a job frees for its next allocations instead of handing it
 * back to the system at once (glibc: fixed mmap and trim thresholds), so
 * that a sweep's or plan's next simulation does not fault the same pages
 * in again. Process-wide; a no-op elsewhere. */
void stall_heap_keep(void);

/* v, or +0 where "%+.2f" would print "-0.00" (|v| < 0.005): a signed
 * difference that rounds to nothing is no difference. */
static inline double stall_pct_nz(double v)
{
    return v > -0.005 && v < 0.005 ? 0.0 : v;
}

/* Median of v[0..n) (the upper one for even n); sorts v in place. 0 when
 * n == 0. */
stall_time stall_median_time(stall_time *v, size_t n);

/* The version string of the library ("0.1.0"). */
const char *stall_version(void);

/* The absolute path of the source tree's tools/ folder (the capture tool,
 * tools/stallsim_capture.py, and the other scripts), as the build saw it,
 * without a trailing slash: messages that give a command to run name the
 * script by it, so that the command works from any directory ("tools" in
 * a build that does not define it). */
const char *stall_tools_dir(void);

#ifdef __cplusplus
}
#endif
#endif

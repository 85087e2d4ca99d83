/*
 * stall/limits.h - the stated limits of stallsim, and the checked arithmetic
 * and memory estimate that enforce them.
 *
 * Every size and time the input can set is bounded where it is read (the
 * INI loader, the trace readers), so that the nanosecond arithmetic of a run
 * cannot overflow int64: a duration is at most STALL_LIMIT_DURATION_S, a
 * clock reading at most STALL_LIMIT_CLOCK_S, the times of one trace lie
 * within STALL_LIMIT_SPAN_S of each other, and a simulation stops with an
 * error when its clock would pass STALL_LIMIT_HORIZON_S. The worst sum the
 * models form (a clock reading plus a few scaled durations) stays below
 * INT64_MAX ns by a wide margin. Sizes are multiplied with checked
 * arithmetic, and a run whose tables would not fit in the machine's memory
 * is refused up front with the estimate.
 */
#ifndef STALL_LIMITS_H
#define STALL_LIMITS_H

#include <stdbool.h>
#include <stdint.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STALL_LIMIT_BATCHES INT64_C(1000000000)  /* batches per rank per epoch */
#define STALL_LIMIT_EPOCHS 1048576               /* epochs */
#define STALL_LIMIT_RANKS 65536                  /* GPUs (DDP ranks) */
#define STALL_LIMIT_WORKERS 1024                 /* DataLoader workers per rank */
#define STALL_LIMIT_PREFETCH 65536               /* prefetch factor */
#define STALL_LIMIT_IN_FLIGHT (INT64_C(1) << 20) /* workers x prefetch factor per GPU */
#define STALL_LIMIT_SLOTS INT64_C(0x7fffffff)    /* that x GPUs */
#define STALL_LIMIT_DURATION_S 1e6               /* one duration (fetch, compute, ...) */
#define STALL_LIMIT_SCALE 100.0                  /* a what-if speed factor */
#define STALL_LIMIT_SPAN_S 1e7                   /* first to last time of one trace */
#define STALL_LIMIT_CLOCK_S 4e9                  /* a clock reading (Unix time: year 2096) */
#define STALL_LIMIT_HORIZON_S 5e9                /* simulated clock */
#define STALL_LIMIT_LINE_BYTES 16777216 /* one line of a trace CSV (65536 GPU columns fit) */

#define STALL_LIMIT_DURATION_NS (INT64_C(1000000) * STALL_NS_PER_S)
#define STALL_LIMIT_SPAN_NS (INT64_C(10000000) * STALL_NS_PER_S)
#define STALL_LIMIT_CLOCK_NS (INT64_C(4000000000) * STALL_NS_PER_S)
#define STALL_LIMIT_HORIZON_NS (INT64_C(5000000000) * STALL_NS_PER_S)

/* One line stating the limits, for --help and messages. */
#define STALL_LIMITS_TEXT                                                                          \
    "limits: batches <= 1e9 per epoch, epochs <= 1048576, GPUs <= 65536, workers <= 1024, "        \
    "prefetch_factor <= 65536, workers x prefetch_factor <= 1048576 (x GPUs < 2^31), a duration "  \
    "<= 1e6 s, a speed factor <= 100, a trace's times "                                            \
    "within 1e7 s of each other and <= 4e9 s (Unix time), simulated time <= 5e9 s, a trace line "  \
    "<= 16 MiB, memory <= the machine's"

/* *out = a * b for sizes; false (and *out untouched) on overflow. */
static inline bool stall_size_mul(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

/* *out = a + b for times; false on int64 overflow. */
static inline bool stall_time_add(stall_time a, stall_time b, stall_time *out)
{
    return !__builtin_add_overflow(a, b, out);
}

/* Seconds to ns when 0 <= seconds <= limit_s (NaN fails); 0 or -1. */
int stall_s_to_ns_bounded(double seconds, double limit_s, stall_time *ns);

/* The machine's physical memory in bytes (0 when unknown). */
uint64_t stall_phys_memory(void);

/* The memory the kernel says a new process can take without swapping
 * (MemAvailable in /proc/meminfo), in bytes; 0 when unknown. Allocates
 * nothing. */
uint64_t stall_mem_available(void);

/* The memory this process may use, in bytes: the least of the machine's
 * physical memory, 90% of its available memory (stall_mem_available), the address-space limit
 * (ulimit -v, RLIMIT_AS) and the cgroup's limit (v2 memory.max, v1 memory.limit_in_bytes: a Slurm
 * job's
 * --mem, a container's); 0 when none is known. *source (when not NULL)
 * names the one that binds, as "the machine's", for messages. Allocates
 * nothing. */
uint64_t stall_mem_limit(const char **source);

/* Refuses (STALL_ECONFIG naming what, the estimate and the memory, then
 * fix: what to change, e.g. the keys that size the run) a run whose
 * estimated memory is more than stall_mem_limit: the machine's memory, or
 * less where ulimit -v or a cgroup allows less (a run past those was killed
 * or aborted half-way). bytes = UINT64_MAX means the estimate itself
 * overflowed. */
int stall_mem_check(uint64_t bytes, const char *what, const char *fix, stall_err *err);

/* The bytes free to this user on the file system of path, or of its
 * nearest folder that exists (statvfs f_bavail); UINT64_MAX when unknown. */
uint64_t stall_disk_free(const char *path);

/* Refuses (STALL_ECONFIG naming what, the bytes, the free space and dir,
 * then fix) output of at least bytes that the file system of dir has no
 * room for: a run that would fill the disk before failing (a 1e9-batch
 * what-if wrote 55 GB of iterations.csv and ranks.csv). */
int stall_disk_check(uint64_t bytes, const char *dir, const char *what, const char *fix,
                     stall_err *err);

#ifdef __cplusplus
}
#endif
#endif

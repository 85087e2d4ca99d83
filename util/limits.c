/*
 * limits.c - the bounded conversions and the memory check (stall/limits.h).
 */
#include "stall/limits.h"

#include <math.h>
#include <unistd.h>

int stall_s_to_ns_bounded(double seconds, double limit_s, stall_time *ns)
{
    if (!(seconds >= 0 && seconds <= limit_s))
        return -1;
    *ns = (stall_time)llround(seconds * 1e9);
    return 0;
}

uint64_t stall_phys_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0)
        return 0;
    return (uint64_t)pages * (uint64_t)size;
}

int stall_mem_check(uint64_t bytes, const char *what, const char *fix, stall_err *err)
{
    uint64_t have = stall_phys_memory();
    if (have == 0 || bytes <= have)
        return 0;
    if (bytes == UINT64_MAX)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: the memory needed overflows 64 bits (more than the machine's "
                             "%.1f GB; see the limits in --help); %s",
                             what, (double)have / 1e9, fix);
    return stall_err_set(err, STALL_ECONFIG,
                         "%s: needs an estimated %.1f GB of memory, more than the machine's %.1f "
                         "GB; %s",
                         what, (double)bytes / 1e9, (double)have / 1e9, fix);
}

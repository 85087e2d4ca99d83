/*
 * limits.c - the bounded conversions and the memory check (stall/limits.h).
 */
#include "stall/limits.h"

#include <fcntl.h>
#include <stdbool.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
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

/* The start of a small file, NUL-terminated: read with open and read, not
 * stdio, as the check may run where malloc would fail. False when it
 * cannot be read or is empty. */
static bool limits_read(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t got = read(fd, buf, n - 1);
    close(fd);
    if (got <= 0)
        return false;
    buf[got] = '\0';
    return true;
}

/* A cgroup's limit in bytes from the file at path ("max" or a number);
 * UINT64_MAX when there is none or it cannot be read. */
static uint64_t limits_cgroup_file(const char *path)
{
    char buf[64];
    if (!limits_read(path, buf, sizeof buf))
        return UINT64_MAX;
    char *end = NULL;
    unsigned long long v = strtoull(buf, &end, 10);
    if (end == buf || (*end != '\n' && *end != '\0') || v == 0)
        return UINT64_MAX;
    return (uint64_t)v;
}

uint64_t stall_mem_available(void)
{
    static const char key[] = "MemAvailable:";
    char buf[4096];
    const char *p = limits_read("/proc/meminfo", buf, sizeof buf) ? strstr(buf, key) : NULL;
    if (!p)
        return 0;
    char *end = NULL;
    unsigned long long kb = strtoull(p + strlen(key), &end, 10);
    if (end == p + strlen(key) || strncmp(end, " kB", 3) != 0 || kb == 0 || kb > UINT64_MAX / 1024)
        return 0;
    return (uint64_t)kb * 1024;
}

uint64_t stall_mem_limit(const char **source)
{
    uint64_t have = stall_phys_memory();
    const char *from = "the machine's";
    /* what the machine can give a new process without swapping out others:
     * a run sized to its whole memory was killed by the kernel half-way */
    /* less a tenth: the process's code, stacks and allocator, the
     * estimate's own error, and the other processes' growth meanwhile (a
     * run estimated at 24.0 GB passed 24.1 GB available and wrote on) */
    uint64_t avail = stall_mem_available() / 10 * 9;
    if (avail != 0 && (have == 0 || avail < have)) {
        have = avail;
        from = "90% of the memory the machine has available (/proc/meminfo MemAvailable)";
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (have == 0 || (uint64_t)rl.rlim_cur < have)) {
        have = (uint64_t)rl.rlim_cur;
        from = "this process's address-space limit (ulimit -v)";
    }
    /* cgroup v2, then v1 (a Slurm job's --mem, a container's limit) */
    static const char *const cg[] = {"/sys/fs/cgroup/memory.max",
                                     "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < sizeof cg / sizeof cg[0]; i++) {
        uint64_t v = limits_cgroup_file(cg[i]);
        if (v != UINT64_MAX && (have == 0 || v < have)) {
            have = v;
            from = i == 0 ? "the cgroup's memory.max" : "the cgroup's memory.limit_in_bytes";
        }
    }
    if (source)
        *source = from;
    return have;
}

int stall_mem_check(uint64_t bytes, const char *what, const char *fix, stall_err *err)
{
    const char *from = NULL;
    uint64_t have = stall_mem_limit(&from);
    if (have == 0 || bytes <= have)
        return 0;
    if (bytes == UINT64_MAX)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: the memory needed overflows 64 bits (more than %s "
                             "%.1f GB; see the limits in --help); %s",
                             what, from, (double)have / 1e9, fix);
    return stall_err_set(err, STALL_ECONFIG,
                         "%s: needs an estimated %.1f GB of memory, more than %s %.1f GB; %s", what,
                         (double)bytes / 1e9, from, (double)have / 1e9, fix);
}

uint64_t stall_disk_free(const char *path)
{
    /* the nearest folder of path that exists (a result folder is made
     * after the check) */
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return UINT64_MAX;
    memcpy(buf, path, n + 1);
    struct statvfs sv;
    while (statvfs(buf, &sv) != 0) {
        /* its parent: "a/b" -> "a", "/a" -> "/", "a" -> "." */
        char *slash = strrchr(buf, '/');
        if ((slash == buf && buf[1] == '\0') || strcmp(buf, ".") == 0)
            return UINT64_MAX;
        if (slash)
            slash[slash == buf] = '\0';
        else
            memcpy(buf, ".", 2);
    }
    /* a file system of no blocks (/proc, /sys) is no disk: unknown, and
     * making the folder there fails with its own message */
    if (sv.f_blocks == 0 || (sv.f_frsize != 0 && sv.f_bavail > UINT64_MAX / sv.f_frsize))
        return UINT64_MAX;
    return (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize;
}

int stall_disk_check(uint64_t bytes, const char *dir, const char *what, const char *fix,
                     stall_err *err)
{
    uint64_t have = stall_disk_free(dir);
    if (have == UINT64_MAX || bytes <= have)
        return 0;
    return stall_err_set(
        err, STALL_ECONFIG,
        "%s: writes at least %.1f GB, more than the %.1f GB free where %s goes; %s", what,
        (double)bytes / 1e9, (double)have / 1e9, dir, fix);
}

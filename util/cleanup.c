/*
 * cleanup.c - removing registered temporary paths, also from a signal
 * handler (stall/cleanup.h).
 *
 * The registry is a fixed array of path buffers, each with a flag that is
 * set only once its buffer holds a complete path and cleared before the
 * buffer is reused, so the handler, which may interrupt add or forget, sees
 * either a whole path or none. Threads register under a mutex; the handler
 * takes no lock. Folder removal reads entries with getdents64 and removes
 * them with unlinkat, rereading from the start until a pass finds nothing
 * left (removing while reading may skip entries).
 */
#define _GNU_SOURCE /* syscall, getdents64 */
#include "stall/cleanup.h"
#include "stall/progress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static char cleanup_paths[STALL_CLEANUP_SLOTS][STALL_CLEANUP_PATH];
static volatile sig_atomic_t cleanup_used[STALL_CLEANUP_SLOTS];
static pthread_mutex_t cleanup_lock = PTHREAD_MUTEX_INITIALIZER;

/* Puts path in the first free one of n slots (a path too long, or no
 * slot free, is not kept). */
static void cleanup_claim(char (*slots)[STALL_CLEANUP_PATH], volatile sig_atomic_t *used, int n,
                          const char *path)
{
    size_t len = strlen(path);
    if (len >= STALL_CLEANUP_PATH)
        return;
    pthread_mutex_lock(&cleanup_lock);
    for (int i = 0; i < n; i++)
        if (!used[i]) {
            memcpy(slots[i], path, len + 1);
            used[i] = 1;
            break;
        }
    pthread_mutex_unlock(&cleanup_lock);
}

void stall_cleanup_add(const char *path)
{
    cleanup_claim(cleanup_paths, cleanup_used, STALL_CLEANUP_SLOTS, path);
}

void stall_cleanup_forget(const char *path)
{
    pthread_mutex_lock(&cleanup_lock);
    for (int i = 0; i < STALL_CLEANUP_SLOTS; i++)
        if (cleanup_used[i] && strcmp(cleanup_paths[i], path) == 0) {
            cleanup_used[i] = 0;
            break;
        }
    pthread_mutex_unlock(&cleanup_lock);
}

static char cleanup_made[STALL_CLEANUP_MADE][STALL_CLEANUP_PATH];
static volatile sig_atomic_t cleanup_made_used[STALL_CLEANUP_MADE];

void stall_cleanup_add_made(const char *path)
{
    cleanup_claim(cleanup_made, cleanup_made_used, STALL_CLEANUP_MADE, path);
}

void stall_cleanup_add_made_for(const char *dir)
{
    size_t len = strlen(dir);
    if (len >= STALL_CLEANUP_PATH)
        return;
    char made[STALL_CLEANUP_PATH];
    for (size_t n = 0; n < len;) {
        while (n < len && dir[n] == '/')
            n++;
        while (n < len && dir[n] != '/')
            n++;
        memcpy(made, dir, n);
        made[n] = '\0';
        struct stat st;
        if (stat(made, &st) != 0)
            stall_cleanup_add_made(made);
    }
}

/* Whether dir is path's ancestor (a prefix ending at a '/'). */
static bool cleanup_ancestor(const char *dir, const char *path)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return strncmp(dir, path, n) == 0 && path[n] == '/';
}

void stall_cleanup_made_end(const char *final, bool remove)
{
    pthread_mutex_lock(&cleanup_lock);
    /* Innermost first: the slots hold them outermost first. */
    for (int i = STALL_CLEANUP_MADE - 1; i >= 0; i--)
        if (cleanup_made_used[i] && cleanup_ancestor(cleanup_made[i], final)) {
            if (remove)
                rmdir(cleanup_made[i]);
            cleanup_made_used[i] = 0;
        }
    pthread_mutex_unlock(&cleanup_lock);
}

struct cleanup_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static int cleanup_dot(const char *s)
{
    return s[0] == '.' && (s[1] == '\0' || (s[1] == '.' && s[2] == '\0'));
}

static int cleanup_rm_at(int dirfd, const char *name, int depth)
{
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (depth > 16)
        return -1;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[4096] __attribute__((aligned(8)));
    for (;;) {
        int found = 0;
        if (lseek(fd, 0, SEEK_SET) != 0)
            break;
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
            for (long off = 0; off < n;) {
                struct cleanup_dirent64 *d = (struct cleanup_dirent64 *)(void *)(buf + off);
                off += d->d_reclen;
                if (cleanup_dot(d->d_name))
                    continue;
                if (cleanup_rm_at(fd, d->d_name, depth + 1) == 0)
                    found = 1;
            }
        if (!found)
            break;
    }
    close(fd);
    return unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT ? 0 : -1;
}

int stall_remove_tree(const char *path)
{
    int saved = errno;
    int rc = cleanup_rm_at(AT_FDCWD, path, 0);
    errno = saved;
    return rc;
}

static volatile sig_atomic_t cleanup_dying;

void stall_cleanup_check(void)
{
    while (cleanup_dying)
        pause(); /* the handler's raise() ends the process */
}

static void cleanup_on_signal(int sig)
{
    cleanup_dying = 1;
    /* A thread that passed its stall_cleanup_check before the flag was set
     * may still create a file (or, through mkdir -p, a folder again), also
     * after a round that found every path gone: go round until every
     * registered path has stayed gone for 50 rounds of 1 ms (50 ms after
     * the last removal; at most 2 s). One clean round was not enough: under
     * valgrind, which runs one thread at a time, the run's thread made its
     * work folder again between that round and the process's end (CI,
     * test_cli's interrupted runs). */
    for (int round = 0, quiet = 0; round < 2000 && quiet < 50; round++) {
        int left = 0;
        for (int i = 0; i < STALL_CLEANUP_SLOTS; i++) {
            if (!cleanup_used[i])
                continue;
            struct stat st;
            if (lstat(cleanup_paths[i], &st) != 0)
                continue;
            left = 1;
            stall_remove_tree(cleanup_paths[i]);
        }
        quiet = left ? 0 : quiet + 1;
        struct timespec pause_1ms = {0, 1000000};
        nanosleep(&pause_1ms, NULL);
    }
    /* The folders made on the way, if nothing else is in them now. */
    for (int i = STALL_CLEANUP_MADE - 1; i >= 0; i--)
        if (cleanup_made_used[i])
            rmdir(cleanup_made[i]);
    /* One line, so that a user sees why it stopped (the shell says nothing
     * of a Ctrl-C): async-signal-safe write(2) of a fixed text. */
    const char *said = sig == SIGINT ? "stallsim: interrupted (SIGINT); temporary files removed\n"
                       : sig == SIGTERM
                           ? "stallsim: interrupted (SIGTERM); temporary files removed\n"
                           : "stallsim: interrupted (SIGHUP); temporary files removed\n";
    /* below a progress line (sweep, plan), which has no newline yet */
    ssize_t w = stall_progress_any_open() ? write(STDERR_FILENO, "\n", 1) : 0;
    w = write(STDERR_FILENO, said, strlen(said)); /* strlen: async-signal-safe */
    (void)w;
    signal(sig, SIG_DFL);
    raise(sig);
}

void stall_cleanup_on_signals(void)
{
    static int installed;
    if (installed)
        return;
    installed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = cleanup_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGHUP);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

long stall_cleanup_work_pid(const char *name, size_t *base_len)
{
    size_t n = strlen(name), d = n;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
        d--;
    if (d == n || n - d > 18 || d < 6 || strncmp(name + d - 5, ".tmp.", 5) != 0 || name[d] == '0')
        return 0;
    *base_len = d - 5;
    return strtol(name + d, NULL, 10);
}

int stall_cleanup_stale(const char *dir, stall_cleanup_mine_fn mine, void *ctx)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int removed = 0;
    long self = (long)getpid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t blen = 0;
        long pid = stall_cleanup_work_pid(e->d_name, &blen);
        if (pid <= 0 || pid == self || !mine(e->d_name, blen, ctx))
            continue;
        /* Only where no such process exists: never a live process's. */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *p = malloc(n);
        if (!p)
            break;
        snprintf(p, n, "%s/%s", dir, e->d_name);
        removed += stall_remove_tree(p) == 0;
        free(p);
    }
    closedir(d);
    return removed;
}

/*
 * io.c - atomic file output, folder creation and repr-style doubles.
 *
 * Atomicity: every result file goes through stall_write_atomic, which writes
 * a temporary file beside the target and renames it into place. rename(2)
 * within one folder is atomic on POSIX file systems, so a reader (or a sweep
 * interrupted half way) sees either the old file, no file, or the whole new
 * one, never a truncated one.
 *
 * Durability (unless switched off, stall_io_set_sync): a file is fsynced
 * before its rename, unless it lies under a
 * deferred prefix (a work folder whose owner syncs the file system once
 * before renaming the folder into place). The prefixes are a short list
 * under a mutex; each write scans it, O(prefixes), fine for the handful a
 * run holds at once.
 */
#define _GNU_SOURCE /* realpath, syncfs */
#include "stall/io.h"

#include "stall/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *io_deferred[STALL_IO_DEFER_MAX];
static bool io_sync = true; /* set once, before any thread starts */

void stall_io_set_sync(bool on)
{
    io_sync = on;
}

bool stall_io_sync(void)
{
    return io_sync;
}

static pthread_mutex_t io_defer_lock = PTHREAD_MUTEX_INITIALIZER;

void stall_io_defer_sync(const char *prefix)
{
    pthread_mutex_lock(&io_defer_lock);
    for (int i = 0; i < STALL_IO_DEFER_MAX; i++)
        if (!io_deferred[i]) {
            io_deferred[i] = stall_xstrdup(prefix);
            break;
        }
    pthread_mutex_unlock(&io_defer_lock);
}

void stall_io_defer_end(const char *prefix)
{
    pthread_mutex_lock(&io_defer_lock);
    for (int i = 0; i < STALL_IO_DEFER_MAX; i++)
        if (io_deferred[i] && strcmp(io_deferred[i], prefix) == 0) {
            free(io_deferred[i]);
            io_deferred[i] = NULL;
            break;
        }
    pthread_mutex_unlock(&io_defer_lock);
}

bool stall_io_deferred(const char *path)
{
    bool found = false;
    pthread_mutex_lock(&io_defer_lock);
    for (int i = 0; i < STALL_IO_DEFER_MAX && !found; i++)
        found = io_deferred[i] && strncmp(path, io_deferred[i], strlen(io_deferred[i])) == 0;
    pthread_mutex_unlock(&io_defer_lock);
    return found;
}

int stall_sync_fs(const char *path, stall_err *err)
{
    if (!io_sync)
        return 0;
#ifdef __linux__
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return stall_err_set(err, STALL_EIO, "%s: cannot open to sync: %s", path, strerror(errno));
    int rc = syncfs(fd);
    int e = errno;
    close(fd);
    if (rc != 0)
        return stall_err_set(err, STALL_EIO, "%s: sync failed: %s", path, strerror(e));
#else
    (void)path;
    (void)err;
    sync();
#endif
    return 0;
}

void stall_sync_fs_now(const char *path)
{
    if (!io_sync)
        return;
#ifdef __linux__
    int saved = errno;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)syncfs(fd);
        close(fd);
    }
    errno = saved;
#else
    (void)path;
    sync();
#endif
}

/* stall_cleanup_stale's test: a temporary file of the file named ctx. */
static bool io_own_tmp(const char *base, size_t len, void *ctx)
{
    const char *name = ctx;
    return strlen(name) == len && strncmp(base, name, len) == 0;
}

/* Removes the temporary files "<path>.tmp.<pid>" that a killed process
 * (SIGKILL) left beside path, so that a rerun leaves nothing behind either
 * (`timeline -o`, analyze's files); one readdir of path's folder. */
static void io_clean_stale(const char *path)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/')
        len--;
    size_t start = len;
    while (start > 0 && path[start - 1] != '/')
        start--;
    if (start == len)
        return;
    char *name = stall_xmalloc(len - start + 1);
    memcpy(name, path + start, len - start);
    name[len - start] = '\0';
    char *dir = stall_path_dir(path);
    stall_cleanup_stale(dir, io_own_tmp, name);
    free(dir);
    free(name);
}

int stall_atomic_open(stall_atomic *a, const char *path, stall_err *err)
{
    memset(a, 0, sizeof *a);
    stall_cleanup_check();
    io_clean_stale(path);
    size_t n = strlen(path) + 32;
    char *tmp = stall_xmalloc(n);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
    stall_cleanup_add(tmp);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        stall_cleanup_forget(tmp);
        /* The user's path, not the temporary name they never gave. */
        int rc = stall_err_set(err, STALL_EIO, "%s: cannot create: %s", path, strerror(errno));
        free(tmp);
        return rc;
    }
    a->f = f;
    a->tmp = tmp;
    a->path = stall_xstrdup(path);
    return 0;
}

static void io_atomic_release(stall_atomic *a)
{
    stall_cleanup_forget(a->tmp);
    free(a->tmp);
    free(a->path);
    memset(a, 0, sizeof *a);
}

void stall_atomic_abort(stall_atomic *a)
{
    if (!a->f)
        return;
    fclose(a->f);
    remove(a->tmp);
    io_atomic_release(a);
}

/* Ends an open handle: rc != 0 (fill's failure) removes the file. */
/* Flushes (and syncs) a's temporary file and closes it; rc carried on. */
static int io_atomic_close(stall_atomic *a, int rc, stall_err *err)
{
    const char *path = a->path;
    bool sync = io_sync && !stall_io_deferred(path);
    FILE *f = a->f;
    if (rc == 0 && (ferror(f) || fflush(f) != 0 || (sync && fsync(fileno(f)) != 0)))
        rc = stall_err_set(err, STALL_EIO, "%s: write failed: %s", path, strerror(errno));
    if (fclose(f) != 0 && rc == 0)
        rc = stall_err_set(err, STALL_EIO, "%s: close failed: %s", path, strerror(errno));
    a->f = NULL;
    return rc;
}

static int io_atomic_end(stall_atomic *a, int rc, stall_err *err)
{
    const char *path = a->path;
    rc = io_atomic_close(a, rc, err);
    if (rc == 0 && rename(a->tmp, path) != 0)
        rc = stall_err_set(err, STALL_EIO, "%s: cannot rename into place: %s", path,
                           strerror(errno));
    if (rc != 0)
        remove(a->tmp);
    io_atomic_release(a);
    return rc;
}

int stall_atomic_commit(stall_atomic *a, stall_err *err)
{
    return io_atomic_end(a, 0, err);
}

/* Files written beside a result folder, put in place with it
 * (stall_write_atomic_with): the work folder, the temporary name and the
 * final one. */
#define IO_COMPANIONS 8
static struct {
    char *work, *tmp, *path;
} io_comp[IO_COMPANIONS];
static pthread_mutex_t io_comp_lock = PTHREAD_MUTEX_INITIALIZER;

int stall_write_atomic_with(const char *path, const char *work, stall_fill_fn fill, void *ctx,
                            stall_err *err)
{
    stall_atomic a;
    int rc = stall_atomic_open(&a, path, err);
    if (rc)
        return rc;
    rc = io_atomic_close(&a, fill(a.f, ctx, err), err);
    int slot = -1;
    pthread_mutex_lock(&io_comp_lock);
    for (int i = 0; rc == 0 && i < IO_COMPANIONS && slot < 0; i++)
        if (!io_comp[i].work)
            slot = i;
    if (slot >= 0) {
        io_comp[slot].work = stall_xstrdup(work);
        io_comp[slot].tmp = a.tmp;
        io_comp[slot].path = a.path;
    }
    pthread_mutex_unlock(&io_comp_lock);
    if (slot >= 0)
        return 0; /* the tmp stays registered for removal on a signal */
    if (rc == 0)
        rc = stall_err_set(err, STALL_EINTERNAL, "%s: too many files beside one result folder",
                           path);
    remove(a.tmp);
    io_atomic_release(&a);
    return rc;
}

/* Puts work's companion files in place (place) or removes them; returns 0
 * or STALL_EIO for the first that would not rename (the others still
 * go). */
static int io_companions_end(const char *work, bool place, stall_err *err)
{
    int rc = 0;
    pthread_mutex_lock(&io_comp_lock);
    for (int i = 0; i < IO_COMPANIONS; i++) {
        if (!io_comp[i].work || strcmp(io_comp[i].work, work) != 0)
            continue;
        if (place && rename(io_comp[i].tmp, io_comp[i].path) != 0 && rc == 0)
            rc = stall_err_set(err, STALL_EIO, "%s: cannot rename into place: %s", io_comp[i].path,
                               strerror(errno));
        remove(io_comp[i].tmp); /* ENOENT once renamed */
        stall_cleanup_forget(io_comp[i].tmp);
        free(io_comp[i].work);
        free(io_comp[i].tmp);
        free(io_comp[i].path);
        memset(&io_comp[i], 0, sizeof io_comp[i]);
    }
    pthread_mutex_unlock(&io_comp_lock);
    return rc;
}

int stall_write_atomic(const char *path, stall_fill_fn fill, void *ctx, stall_err *err)
{
    stall_atomic a;
    int rc = stall_atomic_open(&a, path, err);
    if (rc)
        return rc;
    return io_atomic_end(&a, fill(a.f, ctx, err), err);
}

int stall_write_atomic_in(const char *dir, const char *name, stall_fill_fn fill, void *ctx,
                          stall_err *err)
{
    char *path = stall_path_join(dir, name);
    int rc = stall_write_atomic(path, fill, ctx, err);
    free(path);
    return rc;
}

/* final's sibling "<final>.<tag>.<pid>" (trailing slashes dropped). */
static char *io_sibling(const char *final, const char *tag)
{
    size_t len = strlen(final);
    while (len > 1 && final[len - 1] == '/')
        len--;
    size_t n = len + strlen(tag) + 32;
    char *p = stall_xmalloc(n);
    snprintf(p, n, "%.*s.%s.%ld", (int)len, final, tag, (long)getpid());
    return p;
}

void stall_signals_hold(sigset_t *saved)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, saved);
}

char *stall_work_dir_begin(const char *final, stall_err *err)
{
    io_clean_stale(final);
    return stall_work_dir_make(final, err);
}

char *stall_work_dir_make(const char *final, stall_err *err)
{
    char *w = io_sibling(final, "tmp");
    stall_remove_tree(w); /* a stale one of a dead process with our pid */
    stall_cleanup_add(w);
    stall_cleanup_check();
    if (mkdir(w, 0777) != 0) {
        stall_err_set(err, STALL_EIO, "%s: cannot create folder: %s (its work folder %s)", final,
                      strerror(errno), w);
        stall_cleanup_forget(w);
        free(w);
        return NULL;
    }
    char *prefix = stall_path_join(w, "");
    stall_io_defer_sync(prefix);
    free(prefix);
    return w;
}

static void io_defer_end(const char *work)
{
    char *prefix = stall_path_join(work, "");
    stall_io_defer_end(prefix);
    free(prefix);
}

int stall_work_dir_commit(const char *final, const char *work, stall_err *err)
{
    io_defer_end(work);
    /* Durable before it is visible: one sync for every file of the folder.
     * A work folder under an outer deferred prefix (a sweep point) is
     * synced by that prefix's owner, with others, before its own rename. */
    int rc = stall_io_deferred(work) ? 0 : stall_sync_fs(work, err);
    if (rc) {
        io_companions_end(work, false, NULL);
        stall_remove_tree(work);
        stall_cleanup_forget(work);
        return rc;
    }
    char *old = io_sibling(final, "old");
    /* No signal between the two renames: the old folder is either in place
     * or replaced, never gone with the new one unfinished. */
    sigset_t saved;
    stall_signals_hold(&saved);
    struct stat st;
    bool had = lstat(final, &st) == 0;
    if (had && rename(final, old) != 0)
        rc = stall_err_set(err, STALL_EIO, "%s: cannot move the previous results aside: %s", final,
                           strerror(errno));
    if (rc == 0 && rename(work, final) != 0) {
        rc = stall_err_set(err, STALL_EIO, "%s: cannot rename into place: %s", final,
                           strerror(errno));
        if (had)
            rename(old, final);
    }
    /* The files beside it (run --timeline) with it, signals still held. */
    int crc = io_companions_end(work, rc == 0, err);
    if (rc == 0 && had)
        stall_remove_tree(old);
    if (rc)
        stall_remove_tree(work);
    stall_cleanup_forget(work);
    rc = rc ? rc : crc;
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    free(old);
    return rc;
}

void stall_work_dir_abort(const char *work)
{
    if (!work)
        return;
    io_defer_end(work);
    io_companions_end(work, false, NULL);
    stall_remove_tree(work);
    stall_cleanup_forget(work);
}

int stall_mkdirs(const char *path, stall_err *err)
{
    stall_cleanup_check();
    /* The common cases first: the parent exists, one mkdir does it; or the
     * folder is there already (a sweep point's job asks for its parent). */
    if (mkdir(path, 0777) == 0)
        return 0;
    struct stat there;
    if (errno == EEXIST && stat(path, &there) == 0 && S_ISDIR(there.st_mode))
        return 0;
    char *p = stall_xstrdup(path);
    size_t len = strlen(p);
    while (len > 1 && p[len - 1] == '/')
        p[--len] = '\0';
    for (char *s = p + 1;; s++) {
        char c = *s;
        if (c == '/' || c == '\0') {
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                int rc = stall_err_set(err, STALL_EIO, "%s: cannot create folder: %s", p,
                                       strerror(errno));
                free(p);
                return rc;
            }
            struct stat st;
            if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
                int rc = stall_err_set(err, STALL_EIO, "%s: exists and is not a folder", p);
                free(p);
                return rc;
            }
            *s = c;
        }
        if (c == '\0')
            break;
    }
    free(p);
    return 0;
}

char *stall_path_join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = stall_xmalloc(a + b + 2);
    memcpy(p, dir, a);
    size_t o = a;
    if (a > 0 && dir[a - 1] != '/')
        p[o++] = '/';
    memcpy(p + o, name, b + 1);
    return p;
}

char *stall_path_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return stall_xstrdup(".");
    if (slash == path)
        return stall_xstrdup("/");
    size_t n = (size_t)(slash - path);
    char *p = stall_xmalloc(n + 1);
    memcpy(p, path, n);
    p[n] = '\0';
    return p;
}

char *stall_path_relative(const char *from, const char *path)
{
    char *to = realpath(path, NULL);
    if (!to)
        return stall_xstrdup(path);
    char *base = realpath(from, NULL);
    if (!base)
        return to;
    /* Longest common prefix that ends at a component boundary. */
    size_t common = 0;
    for (size_t i = 0;; i++) {
        bool end_b = base[i] == '\0', end_t = to[i] == '\0' || to[i] == '/';
        if ((end_b || base[i] == '/') && end_t)
            common = i;
        if (end_b || base[i] != to[i])
            break;
    }
    /* base = /a/b/c, to = /a/x: common = 2, one ".." per component of base
     * after the prefix. */
    size_t ups = 0;
    for (size_t i = common; base[i]; i++)
        ups += base[i] == '/' && base[i + 1] != '\0';
    const char *rest = to + common + (to[common] == '/');
    size_t n = 3 * ups + strlen(rest) + 2;
    char *rel = stall_xmalloc(n);
    rel[0] = '\0';
    for (size_t i = 0; i < ups; i++)
        strcat(rel, "../");
    strcat(rel, rest);
    if (rel[0] == '\0')
        strcpy(rel, ".");
    size_t len = strlen(rel);
    if (len > 1 && rel[len - 1] == '/')
        rel[len - 1] = '\0';
    free(base);
    free(to);
    return rel;
}

int stall_input_check(const char *path, stall_err *err)
{
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return 0;
    const char *what = S_ISFIFO(st.st_mode)                         ? "a pipe or FIFO"
                       : S_ISSOCK(st.st_mode)                       ? "a socket"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                    : "not a file";
    return stall_err_set(err, STALL_EIO,
                         "%s: not a regular file (%s; stallsim reads its inputs more than once: "
                         "save it to a file first)",
                         path, what);
}

char *stall_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0, got;
    do {
        if (cap - n < 65536) {
            cap = cap ? 2 * cap : 65536;
            buf = stall_xrealloc(buf, cap + 1);
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    bool bad = ferror(f);
    int e = errno;
    fclose(f);
    if (bad) {
        free(buf);
        errno = e;
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

char *stall_path_shell(const char *path)
{
    static const char safe[] = "_./:=,+@%-";
    bool plain = path[0] != '\0';
    size_t quotes = 0;
    for (const char *c = path; *c; c++) {
        unsigned char u = (unsigned char)*c;
        bool ok = (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
                  strchr(safe, u);
        plain = plain && ok;
        quotes += u == '\'';
    }
    if (plain)
        return stall_xstrdup(path);
    size_t n = strlen(path);
    char *w = stall_xmalloc(n + 3 * quotes + 3), *o = w;
    *o++ = '\'';
    for (const char *c = path; *c; c++) {
        if (*c == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *c;
        }
    }
    *o++ = '\'';
    *o = '\0';
    return w;
}

int stall_check_writable(const char *path, bool folder, stall_err *err)
{
    struct stat st;
    if (path[0] == '\0')
        return stall_err_set(err, STALL_EIO, "an empty path cannot be written");
    if (stat(path, &st) == 0) {
        if (!folder && S_ISDIR(st.st_mode))
            return stall_err_set(err, STALL_EIO, "%s: cannot be written: it is a folder", path);
        if (folder && !S_ISDIR(st.st_mode))
            return stall_err_set(err, STALL_EIO, "%s: exists and is not a folder", path);
    }
    /* The folder the output is created in (its work folder or temporary
     * file lies beside it), or for a result folder the nearest existing
     * ancestor, where stall_mkdirs starts creating. */
    char *dir = stall_path_dir(path);
    while (folder && stat(dir, &st) != 0 && (errno == ENOENT || errno == ENOTDIR) &&
           strcmp(dir, ".") != 0 && strcmp(dir, "/") != 0) {
        char *up = stall_path_dir(dir);
        free(dir);
        dir = up;
    }
    int rc = 0;
    if (stat(dir, &st) != 0)
        rc = stall_err_set(err, STALL_EIO, "%s: cannot be written: %s: %s", path, dir,
                           errno == ENOENT ? "no such folder" : strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = stall_err_set(err, STALL_EIO, "%s: cannot be written: %s is not a folder", path, dir);
    else if (access(dir, W_OK | X_OK) != 0)
        rc = stall_err_set(err, STALL_EIO, "%s: cannot be written: %s: %s", path, dir,
                           strerror(errno));
    free(dir);
    return rc;
}

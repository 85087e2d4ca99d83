/*
 * stall/cleanup.h - temporary files and folders that must not outlive an
 * interrupted run.
 *
 * Result folders are built as a temporary folder beside the target and
 * renamed into place (jobs/job.c), and every file inside is written to a
 * temporary name first (stall_write_atomic). While such a path exists it is
 * registered here; stall_cleanup_on_signals() installs SIGINT, SIGTERM and
 * SIGHUP handlers that remove every registered path (a folder with
 * everything in it), restore the default action and raise the signal again,
 * so the process still dies of it. Other threads may be writing meanwhile:
 * they stop at their next stall_cleanup_check, and the handler repeats its
 * removal (every millisecond, for at most 200 ms) until every registered
 * path is gone. The handler uses only async-signal-safe calls (openat,
 * getdents64, unlinkat, lstat, nanosleep, close) on fixed buffers.
 *
 * Limits: STALL_CLEANUP_SLOTS paths at once (a path registered beyond that
 * is still removed on the normal paths, only not on a signal) of at most
 * STALL_CLEANUP_PATH - 1 bytes; folders up to 16 levels deep.
 */
#ifndef STALL_CLEANUP_H
#define STALL_CLEANUP_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STALL_CLEANUP_SLOTS 64
#define STALL_CLEANUP_PATH 4096

/* Registers / unregisters a temporary path (thread-safe). */
void stall_cleanup_add(const char *path);
void stall_cleanup_forget(const char *path);

/* Folders made on the way to a result (`-o a/b/R` makes a and a/b):
 * stall_cleanup_add_made registers one (outermost first); the signal
 * handler, after the registered paths, removes them innermost first if
 * they are empty (rmdir: never what another process put there).
 * stall_cleanup_made_end forgets those that are final's ancestors (final
 * is in place: they hold it), or (remove) removes those that are empty
 * first, innermost first (an error). Thread-safe. */
#define STALL_CLEANUP_MADE 16
void stall_cleanup_add_made(const char *path);
void stall_cleanup_made_end(const char *final, bool remove);
/* stall_cleanup_add_made for each folder of the path dir (dir too) that
 * is not there yet, outermost first; before stall_mkdirs(dir). */
void stall_cleanup_add_made_for(const char *dir);

/* Installs the signal handlers (once; later calls do nothing). */
void stall_cleanup_on_signals(void);

/* Called before creating a file or folder: when a signal handler is
 * removing the registered paths (another thread of this process took the
 * signal), the caller waits here until the process dies of that signal, so
 * that nothing new appears under a folder being removed and no error is
 * printed for an interrupted run. Returns at once otherwise. */
void stall_cleanup_check(void);

/* Removes path: a file, or a folder and everything in it (links are
 * removed, not followed). Async-signal-safe. Returns 0, or -1 when
 * something could not be removed (a missing path is not an error). */
int stall_remove_tree(const char *path);

/* Work paths left by a process that was killed (SIGKILL, a lost node):
 * entries of dir named "<base>.tmp.<pid>" (stall_job_begin's work folders,
 * stall_atomic_open's files) where mine(base, base_len, ctx) and no
 * process pid exists (kill(pid, 0) fails with ESRCH) are removed; a path
 * of a live process, or of one this process may not signal, is kept. The
 * pid is looked up on this machine only. Returns how many were removed. */
typedef bool (*stall_cleanup_mine_fn)(const char *base, size_t base_len, void *ctx);
int stall_cleanup_stale(const char *dir, stall_cleanup_mine_fn mine, void *ctx);

/* The pid of a work path's name "<base>.tmp.<pid>", with *base_len set to
 * the length of <base>; 0 when name is not one. */
long stall_cleanup_work_pid(const char *name, size_t *base_len);

#ifdef __cplusplus
}
#endif
#endif

/*
 * stall/io.h - output files that are written whole or not at all, and the
 * number formatting every CSV writer shares.
 */
#ifndef STALL_IO_H
#define STALL_IO_H

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

#include "stall/base.h"
#include "stall/fmt.h" /* the number formatting every CSV writer shares */

#ifdef __cplusplus
extern "C" {
#endif

/* Fills an open stream; returns 0 or a negative code after setting err. */
typedef int (*stall_fill_fn)(FILE *f, void *ctx, stall_err *err);

/* Writes `path` atomically: fill() writes into a temporary file in the same
 * folder, which is flushed, synced (fsync, unless `path` is under a
 * deferred prefix, below) and renamed over `path` only if fill() and every
 * write succeeded. On failure the temporary file is removed and `path` is
 * left as it was. Returns 0 or STALL_EIO / fill's code. */
int stall_write_atomic(const char *path, stall_fill_fn fill, void *ctx, stall_err *err);

/* A file written over time, whole or not at all (a report's rows as the
 * run produces them): stall_atomic_open creates path's temporary file (the
 * name stall_write_atomic uses, registered for removal on a signal) and
 * sets a->f; stall_atomic_commit flushes, syncs as stall_write_atomic does
 * and renames it into place; stall_atomic_abort removes it. Exactly one of
 * the two ends every successful open; both release what open took and
 * leave *a zeroed, and abort on a zeroed handle does nothing. */
typedef struct stall_atomic {
    FILE *f;
    char *path, *tmp;
} stall_atomic;
int stall_atomic_open(stall_atomic *a, const char *path, stall_err *err);
int stall_atomic_commit(stall_atomic *a, stall_err *err);
void stall_atomic_abort(stall_atomic *a);

/* stall_write_atomic, except that the written file (flushed, synced and
 * closed) stays under its temporary name, still removed on a signal, until
 * the result folder being made in `work` (stall_work_dir_make) is
 * committed: stall_work_dir_commit renames it into place right after the
 * folder, under the same held signals, so that an interrupt leaves both
 * new or both as they were (run --timeline FILE beside its folder); an
 * abort or a failed commit removes it. */
int stall_write_atomic_with(const char *path, const char *work, stall_fill_fn fill, void *ctx,
                            stall_err *err);

/* Refuses an input path that names a pipe, FIFO, socket or device:
 * stallsim reads an input more than once (its format is told from its
 * head, then a reader reads it, some in several passes; its SHA-256 goes
 * into effective.ini), which such a file cannot give, and opening a FIFO
 * without a writer would wait forever. Looks with stat() only, so a FIFO is
 * never opened. Returns 0 for a regular file or a folder (and when stat
 * fails: the open that follows says why), else STALL_EIO with "PATH: not a
 * regular file (...)". */
int stall_input_check(const char *path, stall_err *err);

/* Reads the whole file at path into a NUL-terminated buffer (caller
 * frees); *len gets its size when len is not NULL. NULL when it cannot be
 * opened or read (errno says why). */
char *stall_read_file(const char *path, size_t *len);

/* stall_write_atomic on dir/name. */
int stall_write_atomic_in(const char *dir, const char *name, stall_fill_fn fill, void *ctx,
                          stall_err *err);

/* Durability per folder rather than per file. A result folder is built
 * under a work name and renamed into place when complete (jobs/job.c,
 * jobs/sweep.c); an fsync per file inside it costs a journal commit each
 * and buys nothing, since nobody reads the folder before the rename. Its
 * owner registers the work path as a deferred prefix (matched as text:
 * "d/" covers everything under folder d, "d/.point-" every entry of d whose
 * name starts with .point-), stall_write_atomic skips the fsync of files
 * whose path starts with it, and the owner calls stall_sync_fs once before
 * the rename, so that after a crash the renamed folder is whole (or the
 * rename is lost and the folder absent), never partly written.
 * Thread-safe; up to STALL_IO_DEFER_MAX prefixes at once (beyond that a
 * prefix is not registered: its files are synced one by one, as before). */
#define STALL_IO_DEFER_MAX 64
void stall_io_defer_sync(const char *prefix);
void stall_io_defer_end(const char *prefix);

/* True when path starts with a registered deferred prefix. */
bool stall_io_deferred(const char *path);

/* Durability switch for the whole process (on by default). Off
 * (`stallsim ... --no-sync`), stall_write_atomic does not fsync and
 * stall_sync_fs does nothing: files are still written whole or not at all
 * for any reader and across Ctrl-C or a crash of stallsim (the rename is
 * atomic in the page cache), but a power loss or an OS crash soon after a
 * run may lose them. Set it before any output is written. */
void stall_io_set_sync(bool on);
bool stall_io_sync(void);

/* Makes everything written so far on the file system that holds `path`
 * durable: syncfs(2) (one writeback and one journal commit for all the
 * files of a folder, or of a batch of folders), sync(2) where there is no
 * syncfs. Returns 0 or STALL_EIO naming path. */
int stall_sync_fs(const char *path, stall_err *err);
/* The same from a signal handler (open, syncfs or sync, close: all
 * async-signal-safe; errno kept), errors ignored. */
void stall_sync_fs_now(const char *path);

/* Blocks SIGINT, SIGTERM and SIGHUP in the calling thread (the old mask in
 * *saved, for pthread_sigmask(SIG_SETMASK, saved, NULL)): between the
 * renames that put results in place, so that an interrupt finds them either
 * old or new. */
void stall_signals_hold(sigset_t *saved);

/* A folder written whole or not at all, beside its target `final`: the work
 * folder "<final>.tmp.<pid>" is made (after removing those of killed
 * processes, stall_cleanup_stale), registered for removal on SIGINT, SIGTERM
 * and SIGHUP (stall/cleanup.h) and its files' fsyncs deferred to the commit.
 * Returns the work path (caller frees), or NULL with err set. */
char *stall_work_dir_begin(const char *final, stall_err *err);
/* The same without looking for killed processes' work folders (a caller
 * that cleaned the folder's parent once for many, as a sweep for its
 * points). */
char *stall_work_dir_make(const char *final, stall_err *err);
/* Replaces `final` by `work` whole: one sync of the file system, final (if
 * any) moved aside, work renamed into place and the old removed, with
 * SIGINT, SIGTERM and SIGHUP blocked between the renames so that the old
 * folder is either in place or replaced. On failure work is removed and
 * final left as it was. Returns 0 or STALL_EIO naming final. */
int stall_work_dir_commit(const char *final, const char *work, stall_err *err);
/* Removes an uncommitted work folder (NULL: nothing). */
void stall_work_dir_abort(const char *work);

/* mkdir -p. Returns 0 or STALL_EIO naming the folder. */
int stall_mkdirs(const char *path, stall_err *err);

/* Joins dir and name with one '/' into a new string (caller frees). */
char *stall_path_join(const char *dir, const char *name);

/* The folder part of a path ("." when it has none), as a new string. */
char *stall_path_dir(const char *path);
/* `path` as seen from directory `from`: relative ("../traces/w2/trace.csv")
 * when both exist, else `path` made absolute when it exists, else `path` as
 * given. Symbolic links are resolved. Never NULL; free() it. */
char *stall_path_relative(const char *from, const char *path);

/* `path` as one word of a POSIX shell command line, to print in a command
 * the user can paste: as given when it holds only letters, digits and
 * "_./:=,+@%-" (and is not empty), else in single quotes ('\'' for a
 * quote). Never NULL; free() it. */
char *stall_path_shell(const char *path);

/* Checks, before anything is run, that an output can be created at `path`
 * without writing anything. folder = false (a file such as a timeline): its
 * folder exists, is a folder we may write in, and path is not a folder.
 * folder = true (a result folder, created with its parents): path is a
 * folder or absent, and its nearest existing ancestor is a folder we may
 * write in. Returns 0 or STALL_EIO with a message that names path first
 * ("x/t.json: cannot be written: x: no such folder"); the caller adds which
 * option gave it. */
int stall_check_writable(const char *path, bool folder, stall_err *err);

#ifdef __cplusplus
}
#endif
#endif

/*
 * sweep_sig.c - SIGINT/SIGTERM while a sweep's points run (sweep_int.h;
 * the runner is sweep.c).
 *
 * The handler is installed for the run only. The first signal sets a flag
 * that the runner's threads read before taking a point, and says so on
 * stderr at once; the points in flight finish. A second signal commits,
 * from the handler, every finished point not yet in place, then goes to the
 * handlers it replaced (stall/cleanup.h's), which remove the points' work
 * folders and end the process. The handler reads only this file's state:
 * the stop flag, the count of points in flight, and a per-point atomic
 * state (sweep_pst) that the runner sets as a point's job starts and as it
 * returns, and claims while it renames the point's folder; paths are built
 * in fixed buffers, with async-signal-safe calls only.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stall/base.h"
#include "stall/io.h"
#include "sweep_int.h"

static volatile sig_atomic_t sweep_stop;
static volatile sig_atomic_t sweep_notices; /* say at once on fd 2 (opts->notices); 2: after
                                               the progress line */
static atomic_int sweep_inflight;           /* points being run now */
static struct sigaction sweep_old_int, sweep_old_term;

/* A point's state for the signal handler: its job running (its folder
 * whole in .point-N.tmp once the job has renamed it there, which the
 * handler looks for), its folder finished (whole in .point-N.tmp) but not
 * in place, claimed by the thread or handler that renames it (or, from
 * RUN, by the handler that looks), or in place. A committer holds signals
 * while it holds a claim, so the handler, waiting for claims to end, never
 * waits for itself; a handler's claim is held only while it looks and
 * renames. */
enum { SWEEP_PT_NONE, SWEEP_PT_FIN, SWEEP_PT_CLAIM, SWEEP_PT_PLACED, SWEEP_PT_RUN };
static _Atomic unsigned char *sweep_pst; /* [sweep_npts], NULL outside a run */
static size_t sweep_npts;
static const unsigned char *sweep_seen; /* sweep_run.seen */
static int sweep_width;
static char sweep_dir[4096]; /* the result folder ("" when too long) */

/* sweep_dir/<pre>NNNNNN<suf> into b (n bytes); async-signal-safe. false
 * when it does not fit. */
static bool sweep_sig_path(char *b, size_t n, size_t i, const char *pre, const char *suf)
{
    size_t len = 0;
    char num[32];
    int k = (int)sizeof num;
    do
        num[--k] = (char)('0' + i % 10);
    while ((i /= 10) > 0 && k > 0);
    while ((int)sizeof num - k < sweep_width && k > 0)
        num[--k] = '0';
    const char *parts[] = {sweep_dir, "/", pre};
    for (size_t p = 0; p < 3; p++)
        for (const char *c = parts[p]; *c; c++)
            if (len + 1 < n)
                b[len++] = *c;
            else
                return false;
    for (; k < (int)sizeof num; k++)
        if (len + 1 < n)
            b[len++] = num[k];
        else
            return false;
    for (const char *c = suf; *c; c++)
        if (len + 1 < n)
            b[len++] = *c;
        else
            return false;
    b[len] = '\0';
    return true;
}

/* From the handler of the second signal: every finished point not yet in
 * place is renamed into place (after one sync of the file system, as
 * sweep_commit does), and so is every running point whose job has renamed
 * its folder to .point-N.tmp but not yet returned; renames that threads are
 * doing are waited for (at most 10 s). O(points) lookups of state, one
 * lstat per running point. Only async-signal-safe calls. */
static void sweep_sig_commit(void)
{
    if (!sweep_pst || !sweep_dir[0])
        return;
    bool synced = false;
    for (size_t i = 0; i < sweep_npts; i++) {
        /* A running point may be marked finished meanwhile: claimed all
         * the same. */
        unsigned char was = atomic_load(&sweep_pst[i]);
        while ((was == SWEEP_PT_FIN || was == SWEEP_PT_RUN) &&
               !atomic_compare_exchange_strong(&sweep_pst[i], &was, SWEEP_PT_CLAIM))
            ;
        if (was != SWEEP_PT_FIN && was != SWEEP_PT_RUN)
            continue;
        char tmp[4200], final[4200], old[4200];
        struct stat st;
        bool whole = sweep_sig_path(tmp, sizeof tmp, i, ".point-", ".tmp") &&
                     sweep_sig_path(final, sizeof final, i, "point-", "") &&
                     sweep_sig_path(old, sizeof old, i, ".point-", ".old") && lstat(tmp, &st) == 0;
        if (was == SWEEP_PT_RUN && !whole) {
            atomic_store(&sweep_pst[i], SWEEP_PT_RUN); /* still in its job */
            continue;
        }
        if (!synced) {
            stall_sync_fs_now(sweep_dir);
            synced = true;
        }
        if (whole) {
            bool aside = sweep_seen[i] && lstat(final, &st) == 0 && rename(final, old) == 0;
            if (rename(tmp, final) != 0 && aside)
                rename(old, final);
            /* an .old left is removed by the rerun */
        }
        atomic_store(&sweep_pst[i], SWEEP_PT_PLACED);
    }
    for (int round = 0; round < 10000; round++) {
        bool busy = false;
        for (size_t i = 0; i < sweep_npts && !busy; i++)
            busy = atomic_load(&sweep_pst[i]) == SWEEP_PT_CLAIM;
        if (!busy)
            break;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* Appends s to b (n bytes, at *len); async-signal-safe. */
static void sweep_sig_put(char *b, size_t n, size_t *len, const char *s)
{
    while (*s && *len + 1 < n)
        b[(*len)++] = *s++;
}

/* The first SIGINT/SIGTERM: the points in flight finish, no other starts,
 * and one line says so at once (only write(2) and the formatting here: the
 * handler is async-signal-safe). A second one stops now: the finished
 * points are put in place (sweep_sig_commit), then the handlers the sweep
 * replaced (stall/cleanup.h's: they remove the points' work folders and end
 * the process of the signal) take it, raised again on return. */
static void sweep_on_signal(int sig)
{
    if (sweep_stop) {
        int saved = errno;
        sweep_sig_commit();
        errno = saved;
        sigaction(SIGINT, &sweep_old_int, NULL);
        sigaction(SIGTERM, &sweep_old_term, NULL);
        raise(sig); /* blocked in this handler: taken once it returns */
        return;
    }
    sweep_stop = 1;
    if (!sweep_notices)
        return;
    int saved = errno;
    char b[160], num[24];
    size_t len = 0, k = sizeof num - 1;
    int n = atomic_load(&sweep_inflight);
    unsigned v = n > 0 ? (unsigned)n : 0;
    num[k] = '\0';
    do
        num[--k] = (char)('0' + v % 10);
    while ((v /= 10) > 0 && k > 0);
    /* below the progress line, which has no newline yet */
    sweep_sig_put(b, sizeof b, &len, sweep_notices > 1 ? "\n" : "");
    sweep_sig_put(b, sizeof b, &len, "stallsim sweep: interrupted; finishing ");
    sweep_sig_put(b, sizeof b, &len, num + k);
    sweep_sig_put(b, sizeof b, &len, n == 1 ? " point" : " points");
    sweep_sig_put(b, sizeof b, &len,
                  sig == SIGINT ? " in flight, Ctrl-C again to stop now\n"
                                : " in flight, SIGTERM again to stop now\n");
    ssize_t w = write(STDERR_FILENO, b, len);
    (void)w;
    errno = saved;
}

void stall__sweep_sig_begin(const char *outdir, size_t points, const unsigned char *seen, int width,
                            int notices)
{
    struct sigaction sa = {0};
    sa.sa_handler = sweep_on_signal;
    sigemptyset(&sa.sa_mask); /* one handler at a time: no nested sweep_sig_commit */
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    sweep_stop = 0;
    sweep_npts = points;
    sweep_seen = seen;
    sweep_width = width;
    if (strlen(outdir) < sizeof sweep_dir)
        memcpy(sweep_dir, outdir, strlen(outdir) + 1);
    else
        sweep_dir[0] = '\0';
    sweep_pst = stall_xcalloc(points ? points : 1, sizeof *sweep_pst);
    sweep_notices = notices;
    atomic_store(&sweep_inflight, 0);
    sigaction(SIGINT, &sa, &sweep_old_int);
    sigaction(SIGTERM, &sa, &sweep_old_term);
}

void stall__sweep_sig_end(void)
{
    sigaction(SIGINT, &sweep_old_int, NULL);
    sigaction(SIGTERM, &sweep_old_term, NULL);
    _Atomic unsigned char *pst = sweep_pst;
    sweep_pst = NULL;
    free((void *)pst);
}

bool stall__sweep_sig_stopped(void)
{
    return sweep_stop != 0;
}

void stall__sweep_sig_inflight(int delta)
{
    atomic_fetch_add(&sweep_inflight, delta);
}

void stall__sweep_sig_running(size_t i)
{
    atomic_store(&sweep_pst[i], SWEEP_PT_RUN);
}

void stall__sweep_sig_ran(size_t i, bool ok)
{
    unsigned char run = SWEEP_PT_RUN;
    while (
        !atomic_compare_exchange_strong(&sweep_pst[i], &run, ok ? SWEEP_PT_FIN : SWEEP_PT_NONE)) {
        if (run != SWEEP_PT_CLAIM)
            return; /* PLACED: the handler put it in place */
        /* The handler is looking at it (on another thread: this one is
         * not in the handler); it leaves it RUN or PLACED. */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
        run = SWEEP_PT_RUN;
    }
}

bool stall__sweep_sig_claim(size_t i)
{
    unsigned char fin = SWEEP_PT_FIN;
    return atomic_compare_exchange_strong(&sweep_pst[i], &fin, SWEEP_PT_CLAIM);
}

void stall__sweep_sig_release(size_t i, bool placed)
{
    atomic_store(&sweep_pst[i], placed ? SWEEP_PT_PLACED : SWEEP_PT_NONE);
}

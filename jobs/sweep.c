/*
 * sweep.c - `stallsim sweep`: running the points (contract in stall/sweep.h;
 * the grid is built by sweep_grid.c).
 *
 * Running hands this rank's points to `jobs` threads through one counter;
 * each point runs the ordinary scenario job into a temporary folder that is
 * renamed into place, so a folder is whole or absent. Durability is per
 * batch of folders (group commit): files under .point-* are not fsynced one
 * by one (a deferred prefix, stall/io.h); finished folders wait in a list,
 * and every STALL__SWEEP_COMMIT_S seconds (or STALL__SWEEP_COMMIT_MAX
 * folders) one thread syncs the file system once and renames the batch into
 * place. A crash keeps every renamed folder whole; a kill loses the points
 * in flight and those finished since the last commit. sweep.csv is then
 * assembled by rank 0 from the point folders in point order: its bytes do
 * not depend on which thread, rank or earlier run produced a point. A
 * SIGINT/SIGTERM handler (sweep_sig.c, installed for the run only) sets a
 * flag and says so on stderr; threads finish the points in flight and take
 * no more, and each finished point is committed at once from then on. A
 * second signal first commits, from the handler, every finished point not
 * yet in place, its job's folder whole in .point-N.tmp (a per-point atomic
 * state says which: a point is marked running, then finished, then claimed
 * around its rename, through stall__sweep_sig_*), then goes to the handlers
 * it replaced, which remove the points' work folders and end the process:
 * a rerun finds every point that had finished.
 */
#include "stall/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef STALL_HAVE_MPI
#include <mpi.h>
#endif

#include "stall/cleanup.h"
#include "stall/io.h"
#include "stall/job.h"
#include "stall/progress.h"
#include "modes.h"
#include "stall/scenario.h"
#include "sweep_int.h"

/* ---- files ---- */

static bool sweep_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Removes the sub-folders of dir (per-iteration files): a point job's
 * before_commit, so that its folder is final once the job renames it to
 * .point-N.tmp. Never fails. */
static int sweep_drop_subdirs(void *ctx, const char *dir, stall_err *err)
{
    (void)ctx;
    (void)err;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *child = stall_path_join(dir, e->d_name);
        struct stat st;
        if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
            stall_remove_tree(child);
        free(child);
    }
    closedir(d);
    return 0;
}

/* ---- running ---- */

/* Group commit: at most this long between a point's end and its rename,
 * and at most this many folders per sync. */
#define STALL__SWEEP_COMMIT_S 0.25
#define STALL__SWEEP_COMMIT_MAX 256

typedef struct sweep_run {
    const stall_sweep *s;
    const stall_sweep_opts *opts;
    const char *outdir;
    int width;
    size_t first, step; /* this rank's points: first, first + step, ... */
    size_t next;        /* next of this rank's points to hand out */
    size_t mine, done, ran, skipped;
    size_t fail_point; /* lowest failing point, or SIZE_MAX */
    stall_err fail;
    pthread_mutex_t lock;
    struct timespec t0;
    stall_progress prog; /* the progress line (opts->progress) */
    int ranks;
    size_t *pending; /* finished .point-N.tmp folders, not yet synced and renamed */
    size_t npending, cap_pending;
    bool committing;           /* a thread is syncing and renaming a batch */
    double last_commit;        /* seconds since t0 */
    stall_job_digests digests; /* every point's inputs, hashed once */
    /* The summary files of the points run here, as written (sweep_keep),
     * for sweep.csv: its assembly then reads only the others' files. */
    unsigned char *seen;  /* [points]: 1 where outdir held an entry of the point at start */
    unsigned char *state; /* [points]: a stall__sweep_pt, where rank 0's look at the folder set
                             it (UNKNOWN elsewhere) */
    char **kept;          /* [points]: a point's summary text, or NULL */
    size_t kept_bytes;    /* kept so far, up to STALL__SWEEP_KEEP_BYTES */
} sweep_run;

/* At most this much summary text is kept for sweep.csv (about 300 k points
 * of 8 GPUs); points beyond it are read back from their folders. */
#define STALL__SWEEP_KEEP_BYTES ((size_t)64 << 20)

static double sweep_now(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

/* outdir/<pre>NNNNNN<suf> */
static char *sweep_point_dir(const sweep_run *r, size_t i, const char *pre, const char *suf)
{
    char name[64];
    snprintf(name, sizeof name, "%s%0*zu%s", pre, r->width, i, suf);
    return stall_path_join(r->outdir, name);
}

/* Marks in seen[] every point that outdir holds an entry of (point-N,
 * .point-N.tmp, .point-N.old, or anything else named after N), as the run
 * starts: only those can have a folder to resume, move aside or remove.
 * The others' folders are created by this process alone (a rank runs its
 * own points), which spares a fresh sweep 6 lookups of absent names a
 * point in a folder of thousands. */
static void sweep_list(const char *outdir, size_t points, unsigned char *seen)
{
    DIR *d = opendir(outdir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *p = e->d_name;
        p += *p == '.';
        if (strncmp(p, "point-", 6) != 0 || p[6] < '0' || p[6] > '9')
            continue;
        unsigned long long k = strtoull(p + 6, NULL, 10);
        if (k < points)
            seen[k] = 1;
    }
    closedir(d);
}

/* Keeps point i's summary file as written in dir (while the budget lasts:
 * the points run here; sweep.csv reads the others from their folders). */
static void sweep_keep(sweep_run *r, size_t i, const char *dir, const char *name)
{
    char *path = stall_path_join(dir, name);
    size_t len = 0;
    char *text = stall_read_file(path, &len);
    free(path);
    if (text) /* read into 64 KiB */
        text = stall_xrealloc(text, len + 1);
    pthread_mutex_lock(&r->lock);
    if (text && r->kept_bytes + len <= STALL__SWEEP_KEEP_BYTES) {
        r->kept_bytes += len;
        r->kept[i] = text;
        text = NULL;
    }
    pthread_mutex_unlock(&r->lock);
    free(text);
}

/* Runs point i unless its folder already holds the same configuration.
 * *skipped tells which. */
static int sweep_point(sweep_run *r, size_t i, bool *skipped, stall_err *err)
{
    stall_config *cfg = stall_xmalloc(sizeof *cfg);
    stall_sweep_config(r->s, i, cfg);
    char *final = sweep_point_dir(r, i, "point-", "");
    char *tmp = sweep_point_dir(r, i, ".point-", ".tmp");
    char *old = sweep_point_dir(r, i, ".point-", ".old");
    if (r->seen[i]) {
        stall_remove_tree(tmp);
        stall_remove_tree(old);
    }
    *skipped = false;
    int rc = 0;
    if (r->seen[i]) {
        /* Rank 0 looked at every point folder before the run (sweep_prep.c);
         * another rank looks at its own here. */
        int st = r->state[i];
        char why[128];
        if (st == STALL__SWEEP_PT_UNKNOWN)
            st = stall__sweep_point_state(r->s, i, final, &r->digests, why, sizeof why, err);
        rc = st < 0 ? st : 0;
        *skipped = st == STALL__SWEEP_PT_DONE;
    }
    if (rc == 0 && !*skipped) {
        /* tmp waits for sweep_commit, which syncs and renames it. A model
         * job told no_iterations makes no sub-folder (model_job.c); the
         * others' go before the job renames its folder to tmp. */
        bool drop = !r->opts->keep_iterations && cfg->mode != STALL_MODE_MODEL;
        stall_run_opts o = {.outdir = tmp,
                            .jobs = 1,
                            .term = NULL,
                            .before_commit = drop ? sweep_drop_subdirs : NULL,
                            .no_iterations = !r->opts->keep_iterations,
                            .sweep_point = 1,
                            .digests = &r->digests};
        stall_err e = {0};
        /* From the job's rename of its folder to tmp, whole and final, a
         * second signal puts the point in place (sweep_sig.c), also before
         * the job returns; then it is marked finished, as it waits for the
         * group commit. */
        stall__sweep_sig_running(i);
        rc = stall_scenario_run(cfg, &o, &e);
        stall__sweep_sig_ran(i, rc == 0);
        /* Any error names the point it stopped at (its trace's too). */
        if (rc != 0)
            stall__sweep_point_err(r->s, i, &e, err);
        if (rc == 0)
            sweep_keep(r, i, tmp, stall__sweep_summary_name(cfg));
        if (rc != 0)
            stall_remove_tree(tmp);
    }
    free(final);
    free(tmp);
    free(old);
    free(cfg);
    return rc;
}

/* Moves finished point i's folder into place (after the sync). */
static int sweep_rename(const sweep_run *r, size_t i, stall_err *err)
{
    char *final = sweep_point_dir(r, i, "point-", "");
    char *tmp = sweep_point_dir(r, i, ".point-", ".tmp");
    char *old = sweep_point_dir(r, i, ".point-", ".old");
    int rc = 0;
    bool seen = r->seen[i];
    if (seen && sweep_exists(final) && rename(final, old) != 0)
        rc = stall_err_set(err, STALL_EIO, "%s: cannot move aside: %s", final, strerror(errno));
    if (rc == 0 && rename(tmp, final) != 0)
        rc = stall_err_set(err, STALL_EIO, "%s: cannot rename to %s: %s", tmp, final,
                           strerror(errno));
    if (rc != 0)
        stall_remove_tree(tmp);
    if (seen)
        stall_remove_tree(old);
    free(final);
    free(tmp);
    free(old);
    return rc;
}

/* Called with r->lock held. Commits the pending folders when the batch is
 * due (or `all`): one sync of the file system, then a rename per folder,
 * outside the lock so that the other threads go on simulating. One thread
 * commits at a time; folders finished meanwhile wait for the next batch. */
static void sweep_commit(sweep_run *r, bool all)
{
    while (r->npending > 0 && !r->committing) {
        double t = sweep_now(&r->t0);
        if (!all && t - r->last_commit < STALL__SWEEP_COMMIT_S &&
            r->npending < STALL__SWEEP_COMMIT_MAX)
            return;
        size_t n = r->npending, *batch = stall_xmalloc(n * sizeof *batch);
        memcpy(batch, r->pending, n * sizeof *batch);
        r->npending = 0;
        r->committing = true;
        pthread_mutex_unlock(&r->lock);
        stall_err e = {0};
        int rc = stall_sync_fs(r->outdir, &e);
        size_t failed = SIZE_MAX;
        for (size_t k = 0; k < n; k++) {
            /* A point the signal handler put in place is not claimed here. */
            sigset_t saved;
            stall_signals_hold(&saved);
            if (stall__sweep_sig_claim(batch[k])) {
                if (rc != 0) {
                    char *tmp = sweep_point_dir(r, batch[k], ".point-", ".tmp");
                    stall_remove_tree(tmp);
                    free(tmp);
                } else if (sweep_rename(r, batch[k], &e) != 0) {
                    rc = e.code;
                }
                stall__sweep_sig_release(batch[k], rc == 0);
            }
            pthread_sigmask(SIG_SETMASK, &saved, NULL);
            if (rc != 0 && failed == SIZE_MAX)
                failed = batch[k];
        }
        pthread_mutex_lock(&r->lock);
        r->committing = false;
        r->last_commit = sweep_now(&r->t0);
        if (rc != 0 && failed < r->fail_point) {
            r->fail_point = failed;
            r->fail = e;
        }
        free(batch);
        if (!all)
            return;
    }
}

static void sweep_progress(sweep_run *r, bool last)
{
    if (!r->prog.f)
        return;
    double t = sweep_now(&r->t0);
    double rate = t > 0 ? (double)r->done / t : 0;
    double left = rate > 0 ? (double)(r->mine - r->done) / rate : 0;
    stall_progress_line(&r->prog, t, last, "sweep: %zu/%zu points%s, %.1f points/s, %.0f s left",
                        r->done, r->mine, r->ranks > 1 ? " (rank 0)" : "", rate, left);
}

static void *sweep_worker(void *arg)
{
    sweep_run *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        size_t k = r->next;
        bool go = k < r->mine && !stall__sweep_sig_stopped() && r->fail_point == SIZE_MAX;
        if (go)
            r->next++;
        pthread_mutex_unlock(&r->lock);
        if (!go)
            break;
        size_t i = r->first + k * r->step;
        stall_err e = {0};
        bool skipped = false;
        stall__sweep_sig_inflight(1);
        int rc = sweep_point(r, i, &skipped, &e);
        stall__sweep_sig_inflight(-1);
        pthread_mutex_lock(&r->lock);
        if (rc != 0 && i < r->fail_point) {
            r->fail_point = i;
            r->fail = e;
        } else if (rc == 0) {
            r->done++;
            if (skipped) {
                r->skipped++;
            } else {
                r->ran++;
                if (r->npending == r->cap_pending) {
                    r->cap_pending = r->cap_pending ? 2 * r->cap_pending : 64;
                    r->pending = stall_xrealloc(r->pending, r->cap_pending * sizeof *r->pending);
                }
                /* marked finished in sweep_point; a second signal may
                 * have put it in place since, which sweep_commit skips */
                r->pending[r->npending++] = i;
            }
            sweep_progress(r, false);
        }
        /* Interrupted: what finished goes in place now, not after the
         * points still in flight. */
        sweep_commit(r, stall__sweep_sig_stopped());
        pthread_mutex_unlock(&r->lock);
    }
    return NULL;
}

typedef struct sweep_table {
    sweep_run *r;
} sweep_table;

/* sweep.csv from the point folders, in point order. */
static int sweep_fill_csv(FILE *f, void *arg, stall_err *err)
{
    sweep_run *r = ((const sweep_table *)arg)->r;
    const stall_sweep *s = r->s;
    const char *sumname = stall__sweep_summary_name(&s->base);
    char *header = NULL;
    for (size_t i = 0; i < s->points; i++) {
        char *dir = sweep_point_dir(r, i, "point-", "");
        char *path = stall_path_join(dir, sumname);
        char *text = r->kept[i] ? r->kept[i] : stall_read_file(path, NULL);
        r->kept[i] = NULL;
        free(dir);
        if (!text) {
            int rc = stall_err_set(err, STALL_EIO, "%s: cannot read", path);
            free(path);
            free(header);
            return rc;
        }
        char *nl = strchr(text, '\n');
        char *row = nl ? nl + 1 : NULL;
        char *end = row ? strchr(row, '\n') : NULL;
        if (!nl || !end || end[1] != '\0') {
            int rc = stall_err_set(err, STALL_EIO, "%s: expected a header and one row", path);
            free(text);
            free(path);
            free(header);
            return rc;
        }
        *nl = '\0';
        if (!header) {
            header = stall_xstrdup(text);
            fputs("point", f);
            for (int a = 0; a < s->naxes; a++)
                fprintf(f, ",%s", s->ax[a].key);
            fprintf(f, ",%s\n", header);
        } else if (strcmp(header, text) != 0) {
            int rc = stall_err_set(err, STALL_EIO, "%s: columns differ from point 0's", path);
            free(text);
            free(path);
            free(header);
            return rc;
        }
        fprintf(f, "%zu", i);
        for (int a = 0; a < s->naxes; a++)
            fprintf(f, ",%s", stall_sweep_value(s, i, a));
        fprintf(f, ",%s", row);
        free(text);
        free(path);
    }
    free(header);
    return 0;
}

#ifdef STALL_HAVE_MPI
/* Under mpirun or srun (not a plain start, which would make MPI start a
 * singleton runtime for nothing). */
static bool sweep_mpi_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}
#endif

#ifdef STALL_HAVE_MPI
static bool sweep_mpi_open; /* MPI initialised by stall_sweep_run, not yet finalised */
#endif

void stall_sweep_launch_end(void)
{
#ifdef STALL_HAVE_MPI
    if (sweep_mpi_open) {
        sweep_mpi_open = false;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
    }
#endif
}

int stall_sweep_launch_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

int stall_sweep_run(const stall_config *cfg, const stall_sweep_opts *opts, stall_sweep_result *res,
                    stall_err *err)
{
    memset(res, 0, sizeof *res);
    stall_sweep *s = NULL;
    int rc = stall_sweep_create(cfg, opts, &s, err);
    /* Points allocate and free the same sizes one after the other. */
    stall_heap_keep();
    if (rc)
        return rc;
    /* Every point's input files are read and hashed once, before anything
     * runs or is written: a missing trace fails here, naming its key. */
    stall_job_digests digests = {0};
    stall_config *pc = stall_xmalloc(sizeof *pc);
    /* A point's inputs are its [trace] keys: without a [trace] axis every
     * point has point 0's. */
    bool trace_axis = false;
    char late_note[512];
    for (int a = 0; a < s->naxes; a++)
        trace_axis |= strncmp(s->ax[a].key, "trace.", 6) == 0;
    size_t ndig = trace_axis || s->points == 0 ? s->points : 1;
    for (size_t i = 0; i < ndig && rc == 0; i++) {
        stall_sweep_config(s, i, pc);
        rc = stall_job_digests_add(&digests, pc, err);
    }
    free(pc);
    if (rc == 0)
        rc = stall__sweep_model_check(s, late_note, sizeof late_note, err);
    if (rc) {
        stall_job_digests_free(&digests);
        stall_sweep_destroy(s);
        return rc;
    }
    /* Its own folder: a run of the same INI would replace it. */
    char *outdir = stall_job_outdir_as(cfg, opts->outdir, "-sweep");
    snprintf(res->outdir, sizeof res->outdir, "%s", outdir);
    res->points = s->points;
    int rank = 0, ranks = 1;
#ifdef STALL_HAVE_MPI
    bool mpi = sweep_mpi_launched();
    if (mpi) {
        int provided;
        MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    }
#endif
    sweep_run r = {.s = s,
                   .opts = opts,
                   .outdir = outdir,
                   .width = 6,
                   .first = (size_t)rank,
                   .step = (size_t)ranks,
                   .fail_point = SIZE_MAX,
                   .ranks = ranks,
                   .digests = digests};
    r.width = stall__sweep_width(s->points);
    r.kept = stall_xcalloc(s->points ? s->points : 1, sizeof *r.kept);
    r.seen = stall_xcalloc(s->points ? s->points : 1, sizeof *r.seen);
    r.state = stall_xcalloc(s->points ? s->points : 1, sizeof *r.state);
    r.mine = s->points > (size_t)rank
                 ? (s->points - (size_t)rank + (size_t)ranks - 1) / (size_t)ranks
                 : 0;
    stall_sweep_opts local = *opts;
    if (rank != 0)
        local.progress = local.term = NULL;
    r.opts = &local;
    r.prog.f = local.progress;
    pthread_mutex_init(&r.lock, NULL);
    clock_gettime(CLOCK_MONOTONIC, &r.t0);
    char note[2 * 4096 + 128] = "";
    char *before = NULL; /* sweep.csv as it was */
    if (rank == 0) {
        rc = stall__sweep_prepare(s, outdir, &r.digests, r.state, note, sizeof note, err);
        if (rc == 0 && note[0] && local.term)
            fputs(note, local.term);
        char *p = stall_path_join(outdir, "sweep.csv");
        before = rc == 0 ? stall_read_file(p, NULL) : NULL;
        free(p);
    }
#ifdef STALL_HAVE_MPI
    if (mpi) {
        /* Every rank waits for rank 0's look at the folder. */
        int code = rc;
        MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank != 0 && code != 0)
            rc = stall_err_set(err, code, "rank 0 refused the result folder");
    }
#endif
    /* A folder this run makes is removed again when no point is left in it
     * (a sweep that failed before any point finished). */
    bool made = rank == 0 && rc == 0 && !sweep_exists(outdir);
    if (rc == 0)
        rc = stall_mkdirs(outdir, err);
    if (rc == 0)
        sweep_list(outdir, s->points, r.seen);
    /* Point folders are synced in batches (sweep_commit). */
    char *deferred = stall_path_join(outdir, ".point-");
    stall_io_defer_sync(deferred);
    if (rc == 0) {
        stall__sweep_sig_begin(outdir, s->points, r.seen, r.width,
                               rank == 0 && opts->notices ? (local.progress ? 2 : 1) : 0);
        int nt = opts->jobs > 1 ? opts->jobs : 1;
        if ((size_t)nt > r.mine)
            nt = r.mine > 0 ? (int)r.mine : 1;
        pthread_t *th = stall_xcalloc((size_t)nt, sizeof *th);
        int started = 0;
        for (int t = 1; t < nt; t++)
            if (pthread_create(&th[t], NULL, sweep_worker, &r) == 0)
                started = t;
            else
                break;
        sweep_worker(&r);
        for (int t = 1; t <= started; t++)
            pthread_join(th[t], NULL);
        free(th);
        /* What finished is kept, also when interrupted or failed. */
        pthread_mutex_lock(&r.lock);
        sweep_commit(&r, true);
        pthread_mutex_unlock(&r.lock);
        stall__sweep_sig_end();
        if (r.done > 0 || r.mine == 0)
            sweep_progress(&r, true);
        res->interrupted = stall__sweep_sig_stopped();
        if (r.fail_point != SIZE_MAX) {
            *err = r.fail;
            rc = r.fail.code ? r.fail.code : STALL_EINTERNAL;
        }
    }
    stall_io_defer_end(deferred);
    free(deferred);
    free(r.pending);
    stall_job_digests_free(&r.digests);
    res->ran = r.ran;
    res->skipped = r.skipped;
#ifdef STALL_HAVE_MPI
    if (mpi) {
        /* Every rank learns the worst outcome; the lowest failing point's
         * message is the one reported. */
        int mine[2] = {rc != 0 ? 1 : 0, res->interrupted ? 1 : 0}, all[2];
        MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        unsigned long long fp = r.fail_point, minfp;
        MPI_Allreduce(&fp, &minfp, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        if (all[0] && minfp != (unsigned long long)SIZE_MAX) {
            /* The rank that ran the lowest failing point tells every rank
             * its message, so that rank 0 alone can report it. */
            int owner = (int)(minfp % (unsigned long long)ranks);
            stall_err e = rank == owner ? *err : (stall_err){0};
            MPI_Bcast(&e.code, 1, MPI_INT, owner, MPI_COMM_WORLD);
            MPI_Bcast(e.msg, (int)sizeof e.msg, MPI_CHAR, owner, MPI_COMM_WORLD);
            *err = e;
            rc = e.code ? e.code : STALL_EINTERNAL;
        } else if (all[0] && rc == 0) {
            rc = STALL_EINTERNAL;
            stall_err_set(err, rc, "[sweep] a point failed on another rank");
        }
        res->interrupted = all[1] != 0;
        unsigned long long counts[2] = {r.ran, r.skipped}, sums[2];
        MPI_Allreduce(counts, sums, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        res->ran = sums[0];
        res->skipped = sums[1];
    }
#endif
    if (rc == 0 && !res->interrupted && rank == 0) {
        sweep_table t = {&r};
        rc = stall_write_atomic_in(outdir, "sweep.csv", sweep_fill_csv, &t, err);
        char *p = stall_path_join(outdir, "sweep.csv");
        /* Read back only to compare with the one before, if any. */
        char *after = rc == 0 && before ? stall_read_file(p, NULL) : NULL;
        free(p);
        if (rc == 0 && (!before || !after || strcmp(before, after) != 0))
            stall__sweep_drop_drawn(outdir);
        free(after);
    }
    free(before);
#ifdef STALL_HAVE_MPI
    if (mpi) {
        /* Rank 0's outcome for all (a failed sweep.csv). */
        int code = rc;
        MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank != 0 && code != 0 && rc == 0)
            rc = stall_err_set(err, code, "rank 0 could not write sweep.csv");
        /* MPI_Finalize waits for stall_sweep_launch_end, after rank 0 has
         * reported: a rank that exits first with an error would make mpirun
         * kill rank 0 before it speaks. */
        sweep_mpi_open = true;
    }
#endif
    if (made && (rc != 0 || res->interrupted))
        rmdir(outdir); /* only when empty: finished points stay, to resume */
    if (rc == 0 && local.term && !res->interrupted)
        fprintf(local.term,
                "stallsim sweep: %zu points (%zu run, %zu found done) on %d thread%s x %d "
                "rank%s; %s/sweep.csv\n",
                res->points, res->ran, res->skipped, opts->jobs, opts->jobs == 1 ? "" : "s", ranks,
                ranks == 1 ? "" : "s", outdir);
    if (rc == 0 && local.term && !res->interrupted && late_note[0])
        fprintf(local.term, "%s\n", late_note);
    /* Seed mode's headline is the notebook's; sweep.csv holds the other. */
    if (rc == 0 && local.term && !res->interrupted && s->base.mode == STALL_MODE_SEED)
        fprintf(local.term, "sweep.csv holds the event replay's rows (seed mode: each point's "
                            "replay_summary.csv); the notebook's numbers are in each point's "
                            "total_summary.csv\n");
    pthread_mutex_destroy(&r.lock);
    for (size_t i = 0; i < s->points; i++)
        free(r.kept[i]);
    free(r.kept);
    free(r.seen);
    free(r.state);
    free(outdir);
    stall_sweep_destroy(s);
    return rc;
}

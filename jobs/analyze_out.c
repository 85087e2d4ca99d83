/*
 * analyze_out.c - an analysis (analyze.c, docs/model.md section 8) written
 * out: analyze.csv, per_rank.csv, per_worker.csv, windows.csv, slowest.csv,
 * checkpoint.csv (stall_analysis_write) and the terminal table
 * (stall_analysis_print).
 */
#include "stall/detect.h"
#include "stall/analyze.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stall/cleanup.h"
#include "stall/dftracer.h"
#include "stall/io.h"
#include "stall/kineto.h"
#include "stall/scenario.h"
#include "stall/validate.h"

/* Ranks the terminal lists (the files have all). */
#define AN_TERM_RANKS 16

/* ---- output ---- */

typedef struct an_out {
    const stall_analysis *a;
    const char *const *labels;
    int n;
} an_out;

static void an_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(",", f);
    else
        fprintf(f, ",%.9g", v);
}

static int an_fill_summary(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const an_out *o = ctx;
    fputs("source,metric,value\n", f);
    for (int j = 0; j < o->n; j++) {
        const stall_analysis *a = &o->a[j];
        const char *l = o->labels[j];
        /* the input, for the figures' titles: a folder given with -o
         * named them by itself ("Where each rank's time went - an_kin") */
        if (a->input[0]) {
            fprintf(f, "%s,input,\"", l);
            for (const char *q = a->input; *q; q++)
                if (*q != '"' && (unsigned char)*q >= 0x20)
                    fputc(*q, f);
            fputs("\"\n", f);
        }
        fprintf(f, "%s,ranks,%d\n%s,epochs,%d\n%s,batches,%lld\n", l, a->ranks, l, a->epochs, l,
                (long long)a->batches);
        fprintf(f, "%s,workers,%d\n%s,workers_inferred,%d\n%s,have_compute_end,%d\n", l, a->workers,
                l, a->workers_inferred, l, a->have_compute_end);
        if (a->fetch_unknown)
            fprintf(f, "%s,fetch_known,0\n", l);
        if (a->clocks_unaligned)
            fprintf(f, "%s,clocks_aligned,0\n", l);
        fprintf(f, "%s,verdict,%s\n", l, stall_verdict_name(a->verdict));
        fprintf(f, "%s,share_data", l);
        an_num(f, a->share_data);
        fprintf(f, "\n%s,share_straggler", l);
        an_num(f, a->share_straggler);
        fprintf(f, "\n%s,share_compute", l);
        an_num(f, a->share_compute);
        fprintf(f, "\n%s,share_startup", l);
        an_num(f, a->share_startup);
        if (a->share_checkpoint > 0) {
            fprintf(f, "\n%s,share_checkpoint", l);
            an_num(f, a->share_checkpoint);
        }
        if (a->late_rank >= 0) /* ranks that began an epoch apart (docs/model.md 8) */
            fprintf(f, "\n%s,late_start_rank,%d\n%s,late_start_epoch,%d\n%s,late_start_s,%.9g", l,
                    a->late_rank, l, a->epoch0 + a->late_epoch, l, a->late_s);
        if (a->io && a->storage_s > 0) { /* slower fetches (docs/model.md 8): where shown */
            double st = 0, da = 0;
            for (int e = 0; e < a->epochs; e++) {
                st += a->io[e].storage_s;
                da += a->io[e].data_s;
            }
            fprintf(f, "\n%s,warm_epoch,%d\n%s,storage_s", l, a->epoch0 + a->warm_epoch, l);
            an_num(f, a->storage_s);
            fprintf(f, "\n%s,share_storage", l);
            an_num(f, a->share_storage);
            fprintf(f, "\n%s,storage_share_of_data", l);
            an_num(f, da > 0 ? st / da : NAN);
        }
        fprintf(f, "\n%s,straggler_rank,", l);
        if (a->straggler >= 0)
            fprintf(f, "%d", a->straggler);
        fprintf(f, "\n%s,straggler_input_s", l);
        an_num(f, a->straggler >= 0 ? a->straggler_input_s : NAN);
        fprintf(f, "\n%s,straggler_compute_s", l);
        an_num(f, a->straggler >= 0 ? a->straggler_compute_s : NAN);
        fprintf(f, "\n%s,sentence,\"%s\"\n", l, a->sentence);
    }
    return 0;
}

static int an_fill_ranks(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const an_out *o = ctx;
    fputs("source,rank,total_s,startup_s,data_s,handover_s,compute_s,barrier_s,post_s,"
          "checkpoint_s,last_iterations,caused_wait_s\n",
          f);
    for (int j = 0; j < o->n; j++)
        for (int r = 0; r < o->a[j].ranks; r++) {
            const stall_an_rank *x = &o->a[j].rank[r];
            fprintf(f, "%s,%d,%.9f,%.9f,%.9f,", o->labels[j], r, x->total_s, x->startup_s,
                    x->data_s);
            if (!isnan(x->handover_s)) /* empty: the trace cannot tell it from the wait */
                fprintf(f, "%.9f", x->handover_s);
            fprintf(f, ",%.9f", x->compute_s);
            an_num(f, x->barrier_s); /* empty: the ranks' clocks are not aligned */
            fprintf(f, ",%.9f,", x->post_s);
            if (o->a[j].ckpt_inside) /* empty: no checkpoints recorded inside the epochs */
                fprintf(f, "%.9f", x->ckpt_s);
            if (o->a[j].clocks_unaligned)
                fputs(",,\n", f);
            else
                fprintf(f, ",%lld,%.9f\n", (long long)x->last, x->caused_s);
        }
    return 0;
}

static int an_fill_workers(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const an_out *o = ctx;
    fputs("source,rank,worker,batches,busy_share,mean_fetch_s,p95_fetch_s\n", f);
    for (int j = 0; j < o->n; j++)
        for (int i = 0; i < o->a[j].nwk; i++) {
            const stall_an_worker *x = &o->a[j].wk[i];
            fprintf(f, "%s,%d,%d,%lld", o->labels[j], x->rank, x->worker, (long long)x->batches);
            an_num(f, x->busy_share);
            an_num(f, x->mean_fetch_s);
            an_num(f, x->p95_fetch_s);
            fputc('\n', f);
        }
    return 0;
}

static int an_fill_windows(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const an_out *o = ctx;
    fputs("source,window,start_s,end_s,batches_per_s\n", f);
    for (int j = 0; j < o->n; j++)
        for (int i = 0; i < o->a[j].nwin; i++) {
            fprintf(f, "%s,%d,%.9f,%.9f", o->labels[j], i, o->a[j].win_start_s[i],
                    o->a[j].win_end_s[i]);
            an_num(f, o->a[j].win_batches_s[i]);
            fputc('\n', f);
        }
    return 0;
}

static int an_fill_slowest(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const an_out *o = ctx;
    fputs("source,epoch,batch,iteration_s,rank,worker,stall_s,fetch_s\n", f);
    for (int j = 0; j < o->n; j++)
        for (int i = 0; i < o->a[j].nslow; i++) {
            const stall_an_slow *x = &o->a[j].slow[i];
            fprintf(f, "%s,%d,%lld,%.9f,%d,", o->labels[j], x->epoch, (long long)x->batch,
                    x->iteration_s, x->rank);
            if (x->worker >= 0)
                fprintf(f, "%d", x->worker);
            fprintf(f, ",%.9f,", x->stall_s);
            if (!isnan(x->fetch_s)) /* empty: fetch times not in the trace */
                fprintf(f, "%.9f", x->fetch_s);
            fputc('\n', f);
        }
    return 0;
}

/* checkpoint.csv: only for sources with checkpoint events (dftracer). */
static int an_fill_checkpoints(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const an_out *o = ctx;
    /* The epoch's time and the checkpoints' share of it where they lie
     * inside the epochs (tidy, simulated); dftracer's lie outside. */
    bool share = false;
    for (int j = 0; j < o->n; j++)
        share = share || o->a[j].epoch_time_s;
    fputs(share ? "source,rank,epoch,checkpoint_s,epoch_s,share_of_epoch\n"
                : "source,rank,epoch,checkpoint_s\n",
          f);
    for (int j = 0; j < o->n; j++)
        for (int r = 0; o->a[j].checkpoint_s && r < o->a[j].ranks; r++)
            for (int e = 0; e < o->a[j].epochs; e++) {
                size_t i = (size_t)e * o->a[j].ranks + r;
                fprintf(f, "%s,%d,%d,%.9f", o->labels[j], r, e, o->a[j].checkpoint_s[i]);
                if (o->a[j].epoch_time_s) {
                    double ep = o->a[j].epoch_time_s[i];
                    fprintf(f, ",%.9f", ep);
                    an_num(f, ep > 0 ? o->a[j].checkpoint_s[i] / ep : NAN);
                } else if (share) {
                    fputs(",,", f);
                }
                fputc('\n', f);
            }
    return 0;
}

/* The files an analysis writes into its folder, every kind. */
static const char *const an_kinds[] = {
    "analyze.csv", "per_rank.csv",   "per_worker.csv", "windows.csv",
    "slowest.csv", "checkpoint.csv", "storage.csv",    NULL};

int stall_analysis_check_apart(const stall_config *cfg, const char *dir, stall_err *err)
{
    int rc = 0;
    for (int i = 0; rc == 0 && an_kinds[i]; i++) {
        char *p = stall_path_join(dir, an_kinds[i]);
        if (stall_job_check_apart(cfg, p, err) != 0)
            rc = stall_err_set(err, STALL_EIO,
                               "%s: its %s is an input of this run, which analyze would write "
                               "over; choose another result folder (-o)",
                               dir, an_kinds[i]);
        free(p);
    }
    return rc;
}

int stall_analysis_write(const stall_analysis *a, const char *const *labels, int n, const char *dir,
                         stall_err *err)
{
    an_out o = {.a = a, .labels = labels, .n = n};
    bool ckpt = false;
    for (int j = 0; j < n; j++)
        ckpt = ckpt || a[j].checkpoint_s;
    /* The folders made for it go again if it fails or is interrupted
     * before its files are in place. */
    stall_cleanup_add_made_for(dir);
    int rc = stall_mkdirs(dir, err);
    /* The new analysis is written whole into a work folder in dir
     * (.analyze.tmp.<pid>, removed on SIGINT/SIGTERM/SIGHUP, and by the
     * next analyze when a killed one left it), then, with those signals
     * blocked, an older analysis's files go, every kind (analyze -o into a
     * folder keeps the folder's other files, outputs.md), and the new ones
     * are renamed into place: the folder's analysis files are one
     * analysis's, the old one or the new one. Before, the old files were
     * removed first and the new written one by one, so that an interrupt
     * half-way lost the old analysis and left part of the new. */
    const char *const *kinds = an_kinds;
    char *tag = rc == 0 ? stall_path_join(dir, ".analyze") : NULL;
    char *work = tag ? stall_work_dir_begin(tag, err) : NULL;
    free(tag);
    if (rc == 0 && !work)
        rc = err->code;
    if (rc == 0)
        rc = stall_write_atomic_in(work, "per_rank.csv", an_fill_ranks, &o, err);
    if (rc == 0)
        rc = stall_write_atomic_in(work, "per_worker.csv", an_fill_workers, &o, err);
    if (rc == 0)
        rc = stall_write_atomic_in(work, "windows.csv", an_fill_windows, &o, err);
    if (rc == 0)
        rc = stall_write_atomic_in(work, "slowest.csv", an_fill_slowest, &o, err);
    if (rc == 0 && ckpt)
        rc = stall_write_atomic_in(work, "checkpoint.csv", an_fill_checkpoints, &o, err);
    if (rc == 0)
        rc = stall_analysis_write_storage(a, labels, n, work, err);
    if (rc == 0)
        rc = stall_write_atomic_in(work, "analyze.csv", an_fill_summary, &o, err);
    if (rc == 0) {
        char *prefix = stall_path_join(work, "");
        stall_io_defer_end(prefix);
        free(prefix);
        rc = stall_io_deferred(work) ? 0 : stall_sync_fs(work, err);
    }
    sigset_t saved;
    stall_signals_hold(&saved);
    for (size_t i = 0; kinds[i] && rc == 0; i++) {
        char *p = stall_path_join(dir, kinds[i]);
        if (unlink(p) != 0 && errno != ENOENT)
            rc = stall_err_set(err, STALL_EIO, "%s: cannot remove an older analysis's file: %s", p,
                               strerror(errno));
        free(p);
    }
    for (size_t i = 0; kinds[i] && rc == 0; i++) {
        char *from = stall_path_join(work, kinds[i]), *to = stall_path_join(dir, kinds[i]);
        struct stat st;
        if (lstat(from, &st) == 0 && rename(from, to) != 0)
            rc = stall_err_set(err, STALL_EIO, "%s: cannot rename into place: %s", to,
                               strerror(errno));
        free(from);
        free(to);
    }
    stall_work_dir_abort(work);
    char *inside = stall_path_join(dir, ".analyze");
    stall_cleanup_made_end(inside, rc != 0);
    free(inside);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    free(work);
    return rc;
}

void stall_analysis_print(const stall_analysis *a, const char *const *labels, int n, FILE *f)
{
    fprintf(f, "%-48s", "share of all ranks' time (summed over ranks)");
    for (int j = 0; j < n; j++)
        fprintf(f, " %11s", labels[j]);
    fputc('\n', f);
    static const char *const rows[] = {
        "waiting for data (incl. barrier waits for data)", "barrier wait for a slower rank",
        "compute, all-reduce and post-compute", "epoch start-up (first batch)"};
    bool io = false;
    for (int j = 0; j < n; j++)
        io = io || (a[j].io && a[j].storage_s > 0);
    for (int i = 0; i < 4; i++) {
        fprintf(f, "%-48.48s", rows[i]);
        for (int j = 0; j < n; j++) {
            double v[4] = {a[j].share_data, a[j].share_straggler, a[j].share_compute,
                           a[j].share_startup};
            if (isnan(v[i]))
                fprintf(f, " %11s", "-");
            else
                fprintf(f, " %10.1f%%", 100 * v[i]);
        }
        fputc('\n', f);
        if (i == 0 && io) { /* a part of the data wait, where the trace records its bytes */
            fprintf(f, "%-48.48s", "  incl. fetches slower than the fastest epoch's");
            for (int j = 0; j < n; j++)
                if (a[j].io && a[j].storage_s > 0)
                    fprintf(f, " %10.1f%%", 100 * a[j].share_storage);
                else
                    fprintf(f, " %11s", "-");
            fputc('\n', f);
        }
    }
    bool inside = false;
    for (int j = 0; j < n; j++)
        inside = inside || a[j].share_checkpoint > 0;
    if (inside) {
        fprintf(f, "%-48.48s", "checkpoints (recorded, taken out of post)");
        for (int j = 0; j < n; j++)
            fprintf(f, " %10.1f%%", 100 * a[j].share_checkpoint);
        fputc('\n', f);
    }
    for (int j = 0; j < n; j++) {
        /* The barrier column holds every wait there; the shares charge each
         * to its cause, so the two did not seem to add up (5.0% data over
         * per-rank hand-overs of 4.1% on ddp2_straggler). */
        fprintf(f,
                "\n%s, per rank (seconds over %d epoch%s; barrier: every wait there, which the "
                "shares above charge to its cause):\n",
                labels[j], a[j].epochs, a[j].epochs == 1 ? "" : "s");
        bool ck = a[j].ckpt_inside; /* a column of its own: the parts add up to total */
        fprintf(f, "%4s %10s %9s %9s %9s %9s %9s %9s%s %6s\n", "rank", "total", "start-up", "data",
                "hand-over", "compute", "barrier", "post", ck ? " checkpoint" : "", "last%");
        int64_t its = (int64_t)a[j].epochs * (a[j].batches > 1 ? a[j].batches - 1 : 1);
        /* Many ranks: the ones most often last at the barrier (the straggler
         * first), the rest in per_rank.csv. */
        int nr = a[j].ranks, show = nr > AN_TERM_RANKS ? AN_TERM_RANKS : nr;
        int *order = stall_xmalloc((size_t)nr * sizeof *order);
        for (int r = 0; r < nr; r++)
            order[r] = r;
        if (show < nr)
            for (int i = 0; i < show; i++) {
                int best = i;
                for (int k = i + 1; k < nr; k++)
                    if (a[j].rank[order[k]].last > a[j].rank[order[best]].last)
                        best = k;
                int tmp = order[i];
                order[i] = order[best];
                order[best] = tmp;
            }
        for (int i = 0; i < show; i++) {
            int r = order[i];
            const stall_an_rank *x = &a[j].rank[r];
            char ho[32] = "-", ba[32] = "-", cp[32] = "", la[32] = "-";
            if (!isnan(x->handover_s))
                snprintf(ho, sizeof ho, "%.3f", x->handover_s);
            if (!isnan(x->barrier_s))
                snprintf(ba, sizeof ba, "%.3f", x->barrier_s);
            if (ck)
                snprintf(cp, sizeof cp, " %10.3f", x->ckpt_s);
            if (!a[j].clocks_unaligned)
                snprintf(la, sizeof la, "%.1f",
                         a[j].ranks > 1 ? 100.0 * (double)x->last / (double)its : 100.0);
            fprintf(f, "%4d %10.3f %9.3f %9.3f %9s %9.3f %9s %9.3f%s %6s\n", r, x->total_s,
                    x->startup_s, x->data_s, ho, x->compute_s, ba, x->post_s, cp, la);
        }
        if (show < nr)
            fprintf(f,
                    "(the %d ranks most often last at the barrier, of %d; every rank in "
                    "per_rank.csv)\n",
                    show, nr);
        free(order);
        if (a[j].checkpoint_s) {
            fprintf(f, "checkpoint time (s), per rank and epoch (%s):\n%4s",
                    a[j].share_checkpoint > 0
                        ? "recorded by the trace, inside the epochs: taken out of post"
                        : "not in the parts above, which end at each epoch's last iteration",
                    "rank");
            for (int e = 0; e < a[j].epochs; e++)
                fprintf(f, " %9s%-3d", "epoch ", e);
            fputc('\n', f);
            for (int r = 0; r < a[j].ranks && r < AN_TERM_RANKS; r++) {
                fprintf(f, "%4d", r);
                for (int e = 0; e < a[j].epochs; e++)
                    fprintf(f, " %12.3f", a[j].checkpoint_s[(size_t)e * a[j].ranks + r]);
                fputc('\n', f);
                if (!a[j].epoch_time_s)
                    continue;
                fprintf(f, "%4s", "%"); /* of the rank's epoch */
                for (int e = 0; e < a[j].epochs; e++) {
                    size_t i = (size_t)e * a[j].ranks + r;
                    double ep = a[j].epoch_time_s[i];
                    fprintf(f, " %11.1f%%", ep > 0 ? 100 * a[j].checkpoint_s[i] / ep : 0.0);
                }
                fputc('\n', f);
            }
            if (a[j].ranks > AN_TERM_RANKS)
                fprintf(f, "(ranks 0-%d of %d; every rank in checkpoint.csv)\n", AN_TERM_RANKS - 1,
                        a[j].ranks);
        }
        stall_analysis_print_storage(&a[j], f);
        if (!a[j].have_compute_end && a[j].clocks_unaligned)
            fputs("(no compute_end in this trace: compute includes the all-reduce)\n", f);
        else if (!a[j].have_compute_end)
            fputs("(no compute_end in this trace: compute includes the all-reduce, and the "
                  "barrier wait is the wait for the other ranks' data only)\n",
                  f);
        if (a[j].clocks_unaligned)
            fprintf(f,
                    "(the ranks' clocks are not aligned (times relative to each profiler's "
                    "start): the waits at the barrier, the last rank and the straggler are "
                    "unknown ('-'); each rank's wait for the others is inside its %s)\n",
                    a[j].have_compute_end ? "post" : "compute");
        if (a[j].fetch_unknown)
            fputs("(fetch times are not in this trace, only the loop's waits: the whole wait "
                  "counts as data, hand-over ('-') and the per-worker table are unknown)\n",
                  f);
        else if (a[j].nwk == 0 && a[j].no_workers)
            fputs("(0 workers: every batch was fetched in the main process, inside the loop's "
                  "wait)\n",
                  f);
        else if (a[j].nwk == 0)
            fputs("(no worker ids: no per-worker table; give --workers N to assign batches round "
                  "robin)\n",
                  f);
        else if (a[j].workers_inferred)
            fprintf(f, "(worker ids assigned round robin over %d workers per rank)\n",
                    a[j].workers);
        fprintf(f, "verdict (%s): %s\n", labels[j], a[j].sentence);
    }
}

/*
 * analyze_causes.c - the measured time attributed to storage reads and
 * checkpoints, per epoch, where a trace shows them (docs/model.md 8,
 * "Storage and checkpoints"):
 *   storage (a tidy trace with bytes, fetch times, >= 2 epochs): per epoch
 *     the mean fetch, read_above(e) = that mean minus the fastest epoch's
 *     (the tier rule's measured read, model.md 2.3), MB/s per fetch and of
 *     the epoch, and of the loop's data wait the part the reads above the
 *     fastest epoch explain: min(data, read_above x (N - 1) / max(1, W)),
 *     where read_above exceeds twice the standard error of the two means'
 *     difference and STALL_AN_READ_REL of the fastest mean (else 0);
 *   checkpoints inside the epochs: each rank's epoch time, for the share of
 *     it its checkpoints took (checkpoint.csv, the terminal).
 * Nothing is filled for a trace that does not show a cause.
 */
#include "stall/analyze.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stall/io.h"

/* The rank's data part of epoch e (k >= 1), as analyze.c cuts it. */
static double causes_data(const stall_tidy_trace *t, int e, int r)
{
    double s = 0;
    for (int64_t k = 1; k < t->batches; k++) {
        size_t i = stall_tidy_at(t, e, r, k);
        stall_time st = t->ready[i] - t->request[i], dw = t->fetch_end[i] - t->request[i];
        dw = dw < 0 ? 0 : (dw > st ? st : dw);
        s += stall_ns_to_s(dw);
    }
    return s;
}

static double causes_epoch_time(const stall_tidy_trace *t, int e, int r)
{
    size_t last = stall_tidy_at(t, e, r, t->batches - 1);
    return stall_ns_to_s(t->iter_end[last] - t->epoch_start[(size_t)e * t->ranks + r]);
}

static void causes_storage(const stall_tidy_trace *t, stall_analysis *a)
{
    int g = t->ranks, ne = t->epochs;
    size_t nf = (size_t)g * (size_t)t->batches; /* fetches per epoch */
    double bytes_all = 0;
    size_t cells = (size_t)ne * (size_t)t->batches * (size_t)g;
    for (size_t i = 0; i < cells; i++)
        bytes_all += t->bytes[i];
    if (bytes_all <= 0)
        return; /* nothing read: no storage attribution (and nothing allocated) */
    double *fe = stall_xmalloc((size_t)ne * nf * sizeof *fe),
           *var = stall_xcalloc((size_t)ne, sizeof *var);
    a->io = stall_xcalloc((size_t)ne, sizeof *a->io);
    for (int e = 0; e < ne; e++) {
        stall_an_io *x = &a->io[e];
        double fsum = 0, bsum = 0;
        stall_time first = 0, lastend = 0;
        for (int r = 0; r < g; r++) {
            for (int64_t k = 0; k < t->batches; k++) {
                size_t i = stall_tidy_at(t, e, r, k);
                double d = stall_ns_to_s(t->fetch_end[i] - t->fetch_start[i]);
                fe[(size_t)e * nf + (size_t)r * (size_t)t->batches + (size_t)k] = d;
                fsum += d;
                bsum += t->bytes[i];
            }
            stall_time s0 = t->epoch_start[(size_t)e * g + r];
            stall_time s1 = t->iter_end[stall_tidy_at(t, e, r, t->batches - 1)];
            first = r == 0 || s0 < first ? s0 : first;
            lastend = r == 0 || s1 > lastend ? s1 : lastend;
            x->epoch_s += causes_epoch_time(t, e, r) / g;
        }
        x->mean_fetch_s = fsum / (double)nf;
        var[e] = nf > 1 ? gsl_stats_variance_m(fe + (size_t)e * nf, 1, nf, x->mean_fetch_s) : 0;
        x->mb_s_fetch = fsum > 0 ? bsum / 1e6 / fsum : NAN;
        double wall = stall_ns_to_s(lastend - first);
        x->mb_s_epoch = wall > 0 ? bsum / 1e6 / wall : NAN;
    }
    int warm = 0;
    for (int e = 1; e < ne; e++)
        if (a->io[e].mean_fetch_s < a->io[warm].mean_fetch_s)
            warm = e;
    a->warm_epoch = warm;
    double w = a->workers > 0 ? a->workers : 1; /* 0 workers: every read in the loop's wait */
    for (int e = 0; e < ne; e++) {
        stall_an_io *x = &a->io[e];
        x->read_above_s = x->mean_fetch_s - a->io[warm].mean_fetch_s;
        /* Counted where the two epochs' means differ by more than twice the
         * standard error of their difference (less is the fetches' own
         * spread) and by more than STALL_AN_READ_REL of the fastest (less is
         * what the machine's speed moves between epochs of in-memory data). */
        double se = sqrt((var[e] + var[warm]) / (double)nf);
        double above = x->read_above_s > 2 * se &&
                               x->read_above_s > STALL_AN_READ_REL * a->io[warm].mean_fetch_s
                           ? x->read_above_s
                           : 0;
        double bound = above * (double)(t->batches - 1) / w;
        for (int r = 0; r < g; r++) {
            double d = causes_data(t, e, r);
            x->data_s += d / g;
            x->storage_s += fmin(d, bound) / g;
        }
        a->storage_s += x->storage_s;
    }
    double tot = 0;
    for (int r = 0; r < g; r++)
        tot += a->rank[r].total_s;
    a->share_storage = tot > 0 ? a->storage_s * g / tot : NAN;
    free(fe);
    free(var);
}

void stall_analyze_causes(const stall_tidy_trace *t, stall_analysis *a)
{
    a->epoch0 = t->epoch0;
    if (t->bytes && !t->fetch_unknown && t->epochs >= 2 && t->batches >= 1)
        causes_storage(t, a);
    if (a->ckpt_inside && a->checkpoint_s) {
        size_t n = (size_t)t->epochs * (size_t)t->ranks;
        a->epoch_time_s = stall_xmalloc(n * sizeof *a->epoch_time_s);
        for (int e = 0; e < t->epochs; e++)
            for (int r = 0; r < t->ranks; r++)
                a->epoch_time_s[(size_t)e * t->ranks + r] = causes_epoch_time(t, e, r);
    }
}

/* ---- output ---- */

typedef struct causes_out {
    const stall_analysis *a;
    const char *const *labels;
    int n;
} causes_out;

static void causes_num(FILE *f, double v)
{
    if (isnan(v))
        fputs(",", f);
    else
        fprintf(f, ",%.9g", v);
}

static int causes_fill_storage(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const causes_out *o = ctx;
    fputs("source,epoch,epoch_s,mean_fetch_s,read_above_s,read_mb_s_fetch,read_mb_s_epoch,data_s,"
          "storage_s,storage_share_of_data\n",
          f);
    for (int j = 0; j < o->n; j++) {
        const stall_analysis *a = &o->a[j];
        for (int e = 0; a->io && e < a->epochs; e++) {
            const stall_an_io *x = &a->io[e];
            fprintf(f, "%s,%d,%.9f,%.9f,%.9f", o->labels[j], a->epoch0 + e, x->epoch_s,
                    x->mean_fetch_s, x->read_above_s);
            causes_num(f, x->mb_s_fetch);
            causes_num(f, x->mb_s_epoch);
            fprintf(f, ",%.9f,%.9f", x->data_s, x->storage_s);
            causes_num(f, x->data_s > 0 ? x->storage_s / x->data_s : NAN);
            fputc('\n', f);
        }
    }
    return 0;
}

int stall_analysis_write_storage(const stall_analysis *a, const char *const *labels, int n,
                                 const char *dir, stall_err *err)
{
    bool any = false;
    for (int j = 0; j < n; j++)
        any = any || a[j].io;
    if (!any)
        return 0;
    causes_out o = {.a = a, .labels = labels, .n = n};
    return stall_write_atomic_in(dir, "storage.csv", causes_fill_storage, &o, err);
}

void stall_analysis_print_storage(const stall_analysis *a, FILE *f)
{
    if (!a->io || a->storage_s <= 0) /* nothing slower than the fastest epoch: storage.csv */
        return;
    fprintf(f,
            "fetches slower than epoch %d's (the fastest, taken as warm: its reads as cache hits), "
            "as the reads of a colder cache, per epoch:\n",
            a->epoch0 + a->warm_epoch);
    fprintf(f, "%5s %9s %11s %11s %11s %11s %10s %12s\n", "epoch", "epoch", "mean fetch",
            "above warm", "MB/s fetch", "MB/s epoch", "data wait", "of it: reads");
    for (int e = 0; e < a->epochs; e++) {
        const stall_an_io *x = &a->io[e];
        char sh[32] = "-";
        if (x->data_s > 0)
            snprintf(sh, sizeof sh, "%.1f%%", 100 * x->storage_s / x->data_s);
        fprintf(f, "%5d %9.3f %11.4f %11.4f %11.2f %11.2f %10.3f %7.3f %6s\n", a->epoch0 + e,
                x->epoch_s, x->mean_fetch_s, x->read_above_s, x->mb_s_fetch, x->mb_s_epoch,
                x->data_s, x->storage_s, sh);
    }
}

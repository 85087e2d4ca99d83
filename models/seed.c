/*
 * seed.c - seed-compatible mode: the notebook's per-row what-if and its
 * summary, with the notebook's arithmetic (docs/model.md section 4.3).
 *
 * Purpose: give the seed's users their published numbers back, bit for bit,
 * so that the event simulation can be compared against them. Everything
 * here follows the notebook, including what looks wrong (quirks Q8-Q24):
 * rows are independent, a GPU whose stall was <= 0.01 s absorbs any
 * lateness, START avg is the mid-range, the iteration time is a maximum.
 *
 * Arithmetic, in evaluation order (each step matters for the last bit):
 *   Fd = S + ns_vec(F)              measured fetch done (pandas Series path)
 *   s  = smax - trunc((double)(smax - smin) / 2)   (avg), smin (min), S (none)
 *   f  = ((F0 + F1) + F2 ... ) / G  (avg), min F (min), F (none)
 *   d  = s + ns_scalar(f)           simulated fetch done (pandas scalar path)
 *   gap = Fd - d (int64 ns); moved stall by (double)gap / 1e9 with the
 *   floor and threshold rules; iteration = max_g(max new + (it_g - max st)).
 * The summary re-reads the numbers as pandas would read the written CSV.
 *
 * Cost: O(N*G) per configuration, O(N) per summary. No state outside the
 * result objects.
 */
#include "stall/seed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/pdparse.h"
#include "stall/io.h"

struct stall_seed_result {
    stall_align fa, sa;
    int gpus;
    size_t rows;
    int64_t epoch;
    int64_t *index;     /* [rows] */
    double *iter;       /* [rows] */
    double *gpu_stall;  /* [rows*gpus] */
    double *stall;      /* [rows] */
    double *delay;      /* [rows] */
    double *fetch_diff; /* [rows] */
    double *start_diff; /* [rows] */
};

/* Seed stall floor (Q16) and the threshold below which lateness is
 * absorbed (Q17), as the notebook hard-codes them. */
#define SEED_STALL_FLOOR 0.000002
#define SEED_LATE_MIN_STALL 0.01

void stall_seed_free(stall_seed_result *r)
{
    if (!r)
        return;
    free(r->index);
    free(r->iter);
    free(r->gpu_stall);
    free(r->stall);
    free(r->delay);
    free(r->fetch_diff);
    free(r->start_diff);
    free(r);
}

char *stall_seed_config_name(char *buf, stall_align fa, stall_align sa)
{
    snprintf(buf, 64, "FETCH_ALIGN_%s_START_ALIGN_%s", stall_align_name(fa), stall_align_name(sa));
    return buf;
}

size_t stall_seed_rows(const stall_seed_result *r)
{
    return r->rows;
}

int stall_seed_gpus(const stall_seed_result *r)
{
    return r->gpus;
}

void stall_seed_get_row(const stall_seed_result *r, size_t k, stall_seed_row *row)
{
    row->epoch = r->epoch;
    row->index = r->index[k];
    row->iter_s = r->iter[k];
    row->gpu_stall_s = r->gpu_stall + k * (size_t)r->gpus;
    row->stall_s = r->stall[k];
    row->delay_s = r->delay[k];
    row->fetch_diff_s = r->fetch_diff[k];
    row->start_diff_s = r->start_diff[k];
}

/* The new stall of one GPU (Q16, Q17): gap = measured done - simulated done. */
static double seed_moved_stall(double st, stall_time gap)
{
    if (gap > 0) {
        double v = st - (double)gap / 1e9;
        return v < 0.0 ? SEED_STALL_FLOOR : v;
    }
    if (gap < 0 && st > SEED_LATE_MIN_STALL)
        return st + (double)(-gap) / 1e9;
    return st;
}

/* One row k. Returns 0, or -1 when a ns sum overflows. */
static int seed_row(const stall_ds_trace *t, stall_align fa, stall_align sa, size_t k,
                    stall_seed_result *r, stall_time *fd, double *nw)
{
    const int G = t->gpus;
    const double *F = t->fetch_s + k * (size_t)G;
    const stall_time *S = t->start_ns + k * (size_t)G;
    const double *it = t->iter_s + k * (size_t)G;
    const double *st = t->stall_s + k * (size_t)G;

    double fmin = F[0], fsum = F[0];
    stall_time smin = S[0], smax = S[0];
    double stmax = st[0];
    for (int g = 1; g < G; g++) {
        fmin = F[g] < fmin ? F[g] : fmin;
        fsum += F[g]; /* left to right, as bottleneck sums (Q29) */
        smin = S[g] < smin ? S[g] : smin;
        smax = S[g] > smax ? S[g] : smax;
        stmax = st[g] > stmax ? st[g] : stmax;
    }
    const double favg = fsum / G;
    stall_time spread;
    if (__builtin_sub_overflow(smax, smin, &spread))
        return -1;
    /* Timestamp - Timedelta / 2: the ns spread halved as a double, truncated (Q11). */
    const stall_time smid = smax - (stall_time)((double)spread / 2);

    double fmx = 0, fmn = 0;
    stall_time smx = 0, smn = 0;
    for (int g = 0; g < G; g++) {
        stall_time mns, sns, s, d;
        if (stall_pd_s_to_ns_vec(F[g], &mns) || __builtin_add_overflow(S[g], mns, &fd[g]))
            return -1;
        s = sa == STALL_ALIGN_AVG ? smid : sa == STALL_ALIGN_MIN ? smin : S[g];
        double f = fa == STALL_ALIGN_AVG ? favg : fa == STALL_ALIGN_MIN ? fmin : F[g];
        if (stall_pd_s_to_ns_scalar(f, &sns) || __builtin_add_overflow(s, sns, &d))
            return -1;
        stall_time gap;
        if (__builtin_sub_overflow(fd[g], d, &gap))
            return -1;
        nw[g] = seed_moved_stall(st[g], gap);
        if (g == 0 || f > fmx)
            fmx = f;
        if (g == 0 || f < fmn)
            fmn = f;
        if (g == 0 || s > smx)
            smx = s;
        if (g == 0 || s < smn)
            smn = s;
    }
    double nmax = nw[0], nmin = nw[0];
    for (int g = 1; g < G; g++) {
        nmax = nw[g] > nmax ? nw[g] : nmax;
        nmin = nw[g] < nmin ? nw[g] : nmin;
    }
    /* Q14/Q18: pure_g = it_g - max st (row-wide), iteration = max_g(max new + pure_g). */
    double iter = 0;
    for (int g = 0; g < G; g++) {
        double v = nmax + (it[g] - stmax);
        if (g == 0 || v > iter)
            iter = v;
    }
    memcpy(r->gpu_stall + k * (size_t)G, nw, (size_t)G * sizeof *nw);
    r->iter[k] = iter;
    r->stall[k] = nmax;
    r->delay[k] = nmax - nmin;
    r->fetch_diff[k] = fmx - fmn;
    r->start_diff[k] = (double)(smx - smn) / 1e9; /* total_seconds in pandas 1.5.3 */
    return 0;
}

int stall_seed_run(const stall_ds_trace *t, stall_align fa, stall_align sa, stall_seed_result **out,
                   stall_err *err)
{
    if (!t || !out || t->gpus < 1 || t->rows < 1)
        return stall_err_set(err, STALL_EINVAL, "stall_seed_run: empty or missing trace");
    if (t->label0 != 0)
        return stall_err_set(
            err, STALL_EINVAL,
            "%s: %zu rows of other epochs come before Epoch %lld; the seed notebook reads "
            "rows by label then and crashes (quirks Q7, Q13), so there is no seed result",
            t->fetch_path, t->label0, (long long)t->epoch);
    const size_t N = t->rows, G = (size_t)t->gpus;
    stall_seed_result *r = stall_xcalloc(1, sizeof *r);
    r->fa = fa;
    r->sa = sa;
    r->gpus = t->gpus;
    r->rows = N;
    r->epoch = t->epoch;
    r->index = stall_xcalloc(N, sizeof *r->index);
    memcpy(r->index, t->index, N * sizeof *r->index);
    r->iter = stall_xcalloc(N, sizeof *r->iter);
    r->gpu_stall = stall_xcalloc(N * G, sizeof *r->gpu_stall);
    r->stall = stall_xcalloc(N, sizeof *r->stall);
    r->delay = stall_xcalloc(N, sizeof *r->delay);
    r->fetch_diff = stall_xcalloc(N, sizeof *r->fetch_diff);
    r->start_diff = stall_xcalloc(N, sizeof *r->start_diff);
    stall_time *fd = stall_xcalloc(G, sizeof *fd);
    double *nw = stall_xcalloc(G, sizeof *nw);
    int rc = 0;
    for (size_t k = 0; k < N && !rc; k++)
        if (seed_row(t, fa, sa, k, r, fd, nw) != 0)
            rc = stall_err_set(err, STALL_EPARSE,
                               "%s: Index number %lld: times overflow int64 nanoseconds",
                               t->fetch_path, (long long)t->index[k]);
    free(fd);
    free(nw);
    if (rc) {
        stall_seed_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

/* ---- per-configuration CSV -------------------------------------------- */

static int seed_fill_csv(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const stall_seed_result *r = ctx;
    fputs(",Epoch,Index number,Iteration time (sec)", f);
    for (int g = 0; g < r->gpus; g++)
        fprintf(f, ",Training Stall time (sec)_gpu%d", g);
    fputs(",Training stall time (sec),Delay time (sec),Batch fetch time diff (sec),"
          "Batch fetch start time diff (sec)\n",
          f);
    stall_out w;
    stall_out_init(&w, f);
    for (size_t k = 0; k < r->rows; k++) {
        char *o = stall_out_room(&w);
        o = stall_fmt_i64(o, (int64_t)k);
        *o++ = ',';
        o = stall_fmt_i64(o, r->epoch);
        *o++ = ',';
        o = stall_fmt_i64(o, r->index[k]);
        *o++ = ',';
        o = stall_fmt_repr(o, r->iter[k]);
        for (int g = 0; g < r->gpus; g++) {
            w.o = o;
            o = stall_out_room(&w); /* a row of many GPUs spans blocks */
            *o++ = ',';
            o = stall_fmt_repr(o, r->gpu_stall[k * (size_t)r->gpus + (size_t)g]);
        }
        const double tail[4] = {r->stall[k], r->delay[k], r->fetch_diff[k], r->start_diff[k]};
        for (int i = 0; i < 4; i++) {
            *o++ = ',';
            o = stall_fmt_repr(o, tail[i]);
        }
        *o++ = '\n';
        w.o = o;
    }
    stall_out_flush(&w);
    return 0;
}

int stall_seed_write_csv(const stall_seed_result *r, const char *path, stall_err *err)
{
    return stall_write_atomic(path, seed_fill_csv, (void *)r, err);
}

/* ---- summary ------------------------------------------------------------ */

/* A value as pandas reads back what pandas wrote: repr text parsed by
 * precise_xstrtod, which does not always give the same double back (Q28). */
static double seed_readback(double v)
{
    if (!isfinite(v))
        return v;
    char buf[STALL_REPR_MAX];
    return stall_pd_strtod(stall_repr(buf, v), NULL);
}

/* Mean and sample std of the kept values as pandas 1.5 computes them with
 * bottleneck: NaN skipped, left-to-right sums, two passes, ddof = 1. */
static void seed_mean_std(const double *x, size_t n, double *mean, double *std)
{
    double sum = 0;
    size_t cnt = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i])) {
            sum += x[i];
            cnt++;
        }
    *mean = cnt ? sum / (double)cnt : NAN;
    if (cnt <= 1) {
        *std = NAN;
        return;
    }
    double ss = 0;
    for (size_t i = 0; i < n; i++)
        if (!isnan(x[i])) {
            double d = x[i] - *mean;
            double sq = d * d; /* a separate statement: never fused into an fma */
            ss += sq;
        }
    *std = sqrt(ss / (double)(cnt - 1));
}

/* numpy's round(v, 4): rint(v * 1e4) / 1e4. */
static double seed_round4(double v)
{
    return rint(v * 1e4) / 1e4;
}

/* "{round(mean,4)}±{round(std,4)}" with repr text; ± is U+00B1. */
static void seed_mean_std_text(char *buf, const double *x, size_t n, double *mean)
{
    double m, s;
    seed_mean_std(x, n, &m, &s);
    char a[STALL_REPR_MAX], b[STALL_REPR_MAX];
    snprintf(buf, 64, "%s\xC2\xB1%s", stall_repr(a, seed_round4(m)), stall_repr(b, seed_round4(s)));
    if (mean)
        *mean = m;
}

int stall_seed_summarize(const stall_seed_result *r, int64_t warmup_index, double threshold,
                         stall_seed_summary *out, stall_err *err)
{
    size_t n = 0;
    for (size_t k = 0; k < r->rows; k++)
        n += r->index[k] > warmup_index;
    char name[64];
    stall_seed_config_name(name, r->fa, r->sa);
    if (n == 0)
        return stall_err_set(err, STALL_EINVAL, "%s: no rows with Index number > %lld to summarise",
                             name, (long long)warmup_index);
    /* Columns: iteration, stall, delay, start diff, fetch diff. */
    double *col[5];
    for (int c = 0; c < 5; c++)
        col[c] = stall_xcalloc(n, sizeof **col);
    size_t j = 0, late = 0;
    for (size_t k = 0; k < r->rows; k++) {
        if (r->index[k] <= warmup_index)
            continue;
        col[0][j] = seed_readback(r->iter[k]);
        col[1][j] = seed_readback(r->stall[k]);
        col[2][j] = seed_readback(r->delay[k]);
        col[3][j] = seed_readback(r->start_diff[k]);
        col[4][j] = seed_readback(r->fetch_diff[k]);
        late += col[2][j] > threshold;
        j++;
    }
    stall_seed_summary s;
    memset(&s, 0, sizeof s);
    memcpy(s.align, name, sizeof s.align);
    seed_mean_std_text(s.iter, col[0], n, &s.mean_iter_s);
    seed_mean_std_text(s.stall, col[1], n, &s.mean_stall_s);
    seed_mean_std_text(s.delay, col[2], n, &s.mean_delay_s);
    seed_mean_std_text(s.start_diff, col[3], n, NULL);
    seed_mean_std_text(s.fetch_diff, col[4], n, NULL);
    s.effective_delay_pct = (double)late / (double)n * 100.0;
    s.kept_rows = n;
    for (int c = 0; c < 5; c++)
        free(col[c]);
    *out = s;
    return 0;
}

/* ---- total_summary.csv -------------------------------------------------- */

/* The file-name fields of quirk Q21. */
typedef struct seed_names {
    char *logtype, *dataset, *model, *aug;
    long long worker, thread, epoch, batch;
} seed_names;

/* Python's str.replace(old, "") into a new string. */
static char *seed_remove_all(const char *s, const char *old)
{
    size_t n = strlen(old);
    char *o = stall_xmalloc(strlen(s) + 1), *p = o;
    while (*s) {
        if (strncmp(s, old, n) == 0) {
            s += n;
        } else {
            *p++ = *s++;
        }
    }
    *p = '\0';
    return o;
}

/* The notebook's find_value: the token after the first token equal to
 * target, without '\n' and ',' (replace_str). NULL when target is absent or
 * last (the notebook raises). */
static char *seed_find_value(char **tok, size_t n, const char *target)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(tok[i], target) == 0) {
            if (i + 1 >= n)
                return NULL;
            char *a = seed_remove_all(tok[i + 1], "\n");
            char *b = seed_remove_all(a, ",");
            free(a);
            return b;
        }
    return NULL;
}

static int seed_pyspace(char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

/* Python's int(s) for ASCII text that fits in long long: blanks, sign,
 * digits with single underscores between them, blanks. Returns 0 or -1. */
static int seed_pyint(const char *s, long long *out)
{
    while (seed_pyspace(*s))
        s++;
    int neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (*s < '0' || *s > '9')
        return -1;
    long long v = 0;
    for (;;) {
        if (*s == '_' && s[1] >= '0' && s[1] <= '9')
            s++;
        if (*s < '0' || *s > '9')
            break;
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v))
            return -1;
        s++;
    }
    while (seed_pyspace(*s))
        s++;
    if (*s)
        return -1;
    *out = neg ? -v : v;
    return 0;
}

static void seed_names_free(seed_names *nm)
{
    free(nm->logtype);
    free(nm->dataset);
    free(nm->model);
    free(nm->aug);
    memset(nm, 0, sizeof *nm);
}

/* Parses "<stem>.csv" as cell 6 does. Returns 0, or -1 (nm cleared) where
 * the notebook would raise. */
static int seed_parse_names(const char *stem, seed_names *nm)
{
    memset(nm, 0, sizeof *nm);
    size_t len = strlen(stem);
    char *buf = stall_xmalloc(len + 5);
    memcpy(buf, stem, len);
    memcpy(buf + len, ".csv", 5);
    size_t n = 1;
    for (char *p = buf; *p; p++)
        n += *p == '_';
    char **tok = stall_xcalloc(n, sizeof *tok);
    tok[0] = buf;
    for (size_t i = 1, j = 0; buf[j]; j++)
        if (buf[j] == '_') {
            buf[j] = '\0';
            tok[i++] = buf + j + 1;
        }
    char *epoch = NULL, *batch = NULL, *worker = NULL, *thread = NULL, *t1 = NULL, *t2 = NULL;
    int rc = -1;
    if (n < 2)
        goto done;
    nm->logtype = stall_xstrdup(tok[0]);
    nm->dataset = stall_xstrdup(tok[1]);
    if (!(nm->aug = seed_find_value(tok, n, nm->dataset)) ||
        !(nm->model = seed_find_value(tok, n, nm->aug)) ||
        !(epoch = seed_find_value(tok, n, nm->model)) ||
        !(batch = seed_find_value(tok, n, epoch)) || !(worker = seed_find_value(tok, n, batch)) ||
        !(thread = seed_find_value(tok, n, worker)))
        goto done;
    t1 = seed_remove_all(nm->model, "_");
    free(nm->model);
    nm->model = t1;
    t1 = seed_remove_all(thread, ".csv");
    free(thread);
    thread = t1;
    t1 = NULL;
#define SEED_INT(str, word, dst)                                                                   \
    do {                                                                                           \
        free(t2);                                                                                  \
        t2 = seed_remove_all(str, word);                                                           \
        if (seed_pyint(t2, &nm->dst) != 0)                                                         \
            goto done;                                                                             \
    } while (0)
    SEED_INT(epoch, "epoch", epoch);
    SEED_INT(batch, "b", batch);
    SEED_INT(worker, "worker", worker);
    SEED_INT(thread, "thread", thread);
#undef SEED_INT
    rc = 0;
done:
    free(t2);
    free(epoch);
    free(batch);
    free(worker);
    free(thread);
    free(tok);
    free(buf);
    if (rc)
        seed_names_free(nm);
    return rc;
}

/* A text field as Python's csv module writes it (QUOTE_MINIMAL). */
static void seed_put_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

typedef struct seed_summary_ctx {
    const stall_seed_summary *rows;
    size_t n;
    const seed_names *names; /* NULL: empty name fields */
} seed_summary_ctx;

static int seed_fill_summary(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    const seed_summary_ctx *c = ctx;
    fputs(",Align,Log type,Dataset size(GB),Model,Augmentation,Worker,Worker batch size,Epoch,"
          "Batch size,Avg iteration time (sec),Avg training stall time (sec),Avg delay time "
          "(sec),Effective Delay time (%),Avg preprocessing start diff (sec),Avg "
          "preprocessing diff (sec)\n",
          f);
    const seed_names *nm = c->names;
    for (size_t i = 0; i < c->n; i++) {
        const stall_seed_summary *s = &c->rows[i];
        fprintf(f, "%zu,", i);
        seed_put_text(f, s->align);
        if (nm) {
            const char *txt[4] = {nm->logtype, nm->dataset, nm->model, nm->aug};
            for (int k = 0; k < 4; k++) {
                fputc(',', f);
                seed_put_text(f, txt[k]);
            }
            fprintf(f, ",%lld,%lld,%lld,%lld", nm->worker, nm->thread, nm->epoch, nm->batch);
        } else {
            fputs(",,,,,,,,", f);
        }
        const char *stats[3] = {s->iter, s->stall, s->delay};
        for (int k = 0; k < 3; k++) {
            fputc(',', f);
            seed_put_text(f, stats[k]);
        }
        fputc(',', f);
        stall_put_double(f, s->effective_delay_pct);
        fputc(',', f);
        seed_put_text(f, s->start_diff);
        fputc(',', f);
        seed_put_text(f, s->fetch_diff);
        fputc('\n', f);
    }
    return 0;
}

int stall_seed_write_summary(const char *path, const char *file_stem,
                             const stall_seed_summary *rows, size_t n, stall_err *err)
{
    seed_names nm;
    int named = file_stem && seed_parse_names(file_stem, &nm) == 0;
    seed_summary_ctx c = {.rows = rows, .n = n, .names = named ? &nm : NULL};
    int rc = stall_write_atomic(path, seed_fill_summary, &c, err);
    if (named)
        seed_names_free(&nm);
    return rc;
}

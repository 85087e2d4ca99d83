/*
 * storage.c - the storage tiers (stall/storage.h): each node's cache over
 * the epochs, and the store's bandwidth shared as a max-min fair fluid by
 * the reads of all nodes (fluid.h).
 */
#include "stall/storage.h"

#include <math.h>
#include <stdlib.h>

#include "fluid.h"
#include "stall/limits.h"

/* ---- the cache ------------------------------------------------------------ */

int stall_storage_check(const stall_storage *s, stall_err *err)
{
    const struct {
        const char *name;
        double v;
    } pos[] = {{"link_mb_s", s->link_mb_s},  {"global_mb_s", s->global_mb_s},
               {"requests", s->requests},    {"cache_mb", s->cache_mb},
               {"start_mb", s->start_mb},    {"batch_mb", s->batch_mb},
               {"dataset_mb", s->dataset_mb}};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (!(pos[i].v >= 0 && isfinite(pos[i].v)))
            return stall_err_set(err, STALL_ECONFIG, "storage: %s = %g, must be finite and >= 0",
                                 pos[i].name, pos[i].v);
    if (!(s->batch_mb > 0) || !(s->dataset_mb > 0))
        return stall_err_set(err, STALL_ECONFIG,
                             "storage: batch_mb = %g and dataset_mb = %g must be > 0", s->batch_mb,
                             s->dataset_mb);
    if (s->fit_rho >= 0 && s->fit_epochs > 0 &&
        (!(s->fit_cache_mb >= 0) || s->fit_ranks < 1 || s->fit_gpn < 1 || s->fit_batches < 1 ||
         !(s->fit_rho <= STALL_LIMIT_DURATION_S * 1e9)))
        return stall_err_set(err, STALL_ECONFIG,
                             "storage: the fitted measured read is out of range");
    if (s->fifo && s->link_mb_s > 0 && s->global_mb_s > 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "storage: a FIFO store has one bandwidth (link_mb_s or global_mb_s)");
    if (s->latency < 0 || (double)s->latency * s->requests > STALL_LIMIT_DURATION_S * 1e9)
        return stall_err_set(err, STALL_ECONFIG,
                             "storage: latency x requests per batch is out of range");
    if (s->admit < 0 || (double)s->admit * s->requests > STALL_LIMIT_DURATION_S * 1e9)
        return stall_err_set(err, STALL_ECONFIG,
                             "storage: admit x requests per batch is out of range");
    double fast = s->link_mb_s > 0 && (s->global_mb_s <= 0 || s->link_mb_s < s->global_mb_s)
                      ? s->link_mb_s
                      : s->global_mb_s;
    if (fast > 0 && s->batch_mb / fast > STALL_LIMIT_DURATION_S)
        return stall_err_set(err, STALL_ECONFIG,
                             "storage: reading a batch (%g MB at %g MB/s) takes longer than the "
                             "limit of %g s",
                             s->batch_mb, fast, STALL_LIMIT_DURATION_S);
    return 0;
}

double stall_storage_step(const stall_storage *s, double working_mb, double read_mb,
                          double *content)
{
    double c = *content;
    double h = working_mb > 0 ? fmin(1.0, c / working_mb) : 1.0;
    double next = c + (1.0 - h) * read_mb;
    next = fmin(next, fmin(s->cache_mb, working_mb));
    *content = next > c ? next : c;
    return h;
}

void stall_storage_hits(const stall_storage *s, int ranks, int gpn, int64_t batches, int epochs,
                        double *hit)
{
    int nodes = (ranks + gpn - 1) / gpn;
    for (int i = 0; i < nodes; i++) {
        int on = ranks - i * gpn < gpn ? ranks - i * gpn : gpn;
        double work = s->partitioned ? s->dataset_mb * on / ranks : s->dataset_mb;
        double read = s->batch_mb * (double)batches * on;
        double c = fmin(s->cache_mb, fmin(s->start_mb, work));
        for (int e = 0; e < epochs; e++)
            hit[(size_t)e * (size_t)nodes + (size_t)i] = stall_storage_step(s, work, read, &c);
    }
}

void stall_storage_fit_misses(const stall_storage *s, double *miss)
{
    stall_storage m = *s;
    m.cache_mb = s->fit_cache_mb;
    m.start_mb = 0;
    int nodes = (s->fit_ranks + s->fit_gpn - 1) / s->fit_gpn;
    double *hit = stall_xcalloc((size_t)s->fit_epochs * (size_t)nodes, sizeof *hit);
    stall_storage_hits(&m, s->fit_ranks, s->fit_gpn, s->fit_batches, s->fit_epochs, hit);
    for (int e = 0; e < s->fit_epochs; e++) {
        double sum = 0;
        for (int i = 0; i < nodes; i++)
            sum += 1.0 - hit[(size_t)e * (size_t)nodes + (size_t)i];
        miss[e] = sum / nodes;
    }
    free(hit);
}

/* ---- the fluid ------------------------------------------------------------ */

void stall__fluid_init(stall__fluid *f, int nodes, double link_mb_s, double global_mb_s)
{
    f->nodes = nodes;
    f->node = stall_xcalloc((size_t)nodes, sizeof *f->node);
    f->n = stall_xcalloc((size_t)nodes, sizeof *f->n);
    f->v = stall_xcalloc((size_t)nodes, sizeof *f->v);
    f->rate = stall_xcalloc((size_t)nodes, sizeof *f->rate);
    f->head = stall_xcalloc((size_t)nodes, sizeof *f->head);
    for (int i = 0; i < nodes; i++)
        f->head[i] = NAN; /* idle */
    f->order = stall_xcalloc((size_t)nodes, sizeof *f->order);
    f->link = link_mb_s * 1e-9;
    f->global = global_mb_s * 1e-9;
    f->total = 0;
    f->last = 0;
    f->seq = 0;
    f->event = NULL;
}

void stall__fluid_free(stall__fluid *f)
{
    if (!f || !f->node)
        return;
    for (int i = 0; i < f->nodes; i++)
        free(f->node[i].heap);
    free(f->node);
    free(f->n);
    free(f->v);
    free(f->rate);
    free(f->head);
    free(f->order);
    f->node = NULL;
    f->n = NULL;
    f->v = f->rate = f->head = NULL;
    f->order = NULL;
}

static bool fluid_less(const fluid_job *a, const fluid_job *b)
{
    return a->finish < b->finish || (a->finish == b->finish && a->seq < b->seq);
}

/* Every busy node's V moves on by its rate x dt (a node's own arithmetic,
 * in the same order as ever: v += rate x dt at each event). An idle node's
 * V moves too, without a branch, so that the loop vectorises: nothing reads
 * it until its next read joins and sets it to 0. */
static void fluid_advance(stall__fluid *f, stall_time now)
{
    stall_time dt = now - f->last;
    f->last = now;
    if (dt <= 0 || f->total == 0)
        return;
    double d = (double)dt;
    const double *restrict rate = f->rate;
    double *restrict v = f->v;
    for (int i = 0; i < f->nodes; i++)
        v[i] += rate[i] * d;
}

/* More reads first (they get less of their link each), then the lower node:
 * keys (2^31 - n) << 32 | node, ascending. */
static int fluid_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Water-filling: each read gets min(link / n_i, level), the level such that
 * the global bandwidth is used up (or every link is full). */
static void fluid_rates(stall__fluid *f, int changed)
{
    if (f->total == 0)
        return;
    if (f->global <= 0) {
        /* links alone: a node's rate is its own reads' (the others keep
         * theirs, the same value the loop over every node gave them) */
        if (f->n[changed] > 0)
            f->rate[changed] = f->link / f->n[changed];
        return;
    }
    if (f->link <= 0) {
        double r = f->global / f->total;
        for (int i = 0; i < f->nodes; i++)
            f->rate[i] = r;
        return;
    }
    int k = 0;
    for (int i = 0; i < f->nodes; i++)
        if (f->n[i] > 0)
            f->order[k++] = (((int64_t)1 << 31) - f->n[i]) * ((int64_t)1 << 32) + i;
    qsort(f->order, (size_t)k, sizeof *f->order, fluid_cmp);
    double left = f->global;
    int reads = f->total;
    int j = 0;
    for (; j < k; j++) {
        int i = (int)(f->order[j] & 0xffffffff);
        double own = f->link / f->n[i];
        if (own * reads > left)
            break;
        f->rate[i] = own;
        left -= f->link;
        reads -= f->n[i];
    }
    for (; j < k; j++)
        f->rate[f->order[j] & 0xffffffff] = left / reads;
}

void stall__fluid_add(stall__fluid *f, stall_time now, int node, double mb, int64_t id)
{
    fluid_advance(f, now);
    fluid_node *nd = &f->node[node];
    int n = f->n[node];
    if (n == nd->cap) {
        nd->cap = nd->cap ? nd->cap * 2 : 8;
        nd->heap = stall_xrealloc(nd->heap, (size_t)nd->cap * sizeof *nd->heap);
    }
    if (n == 0)
        f->v[node] = 0; /* a new busy period */
    fluid_job job = {.finish = f->v[node] + mb, .seq = f->seq++, .id = id};
    int i = n++;
    while (i > 0) {
        int parent = (i - 1) / 2;
        if (!fluid_less(&job, &nd->heap[parent]))
            break;
        nd->heap[i] = nd->heap[parent];
        i = parent;
    }
    nd->heap[i] = job;
    f->n[node] = n;
    f->head[node] = nd->heap[0].finish;
    f->total++;
    fluid_rates(f, node);
}

/* Done: F reached, up to what a thousandth of a ns at the rate gives (the
 * departure was rounded up to a whole ns). */
static bool fluid_done(const stall__fluid *f, int i)
{
    double h = f->head[i]; /* NaN on an idle node: never done */
    return h - f->v[i] <= f->rate[i] * 1e-3 + 1e-12 * h;
}

/* The first node done by now, or -1: blocks of 8 nodes tested without a
 * branch (an idle node's values are read but not taken), then the block
 * that holds one node by node. */
static int fluid_first_done(const stall__fluid *f)
{
    enum { B = 8 };
    const double *restrict v = f->v, *restrict rate = f->rate, *restrict head = f->head;
    int i = 0;
    for (; i + B <= f->nodes; i += B) {
        long any = 0;
        for (int k = 0; k < B; k++) {
            double h = head[i + k];
            any |= (long)(h - v[i + k] <= rate[i + k] * 1e-3 + 1e-12 * h);
        }
        if (any)
            break;
    }
    for (; i < f->nodes; i++)
        if (fluid_done(f, i))
            return i;
    return -1;
}

bool stall__fluid_pop_done(stall__fluid *f, stall_time now, int64_t *id)
{
    fluid_advance(f, now);
    int i = fluid_first_done(f);
    if (i >= 0) {
        fluid_node *nd = &f->node[i];
        int n = f->n[i];
        *id = nd->heap[0].id;
        fluid_job last = nd->heap[--n];
        int j = 0;
        for (;;) {
            int c = 2 * j + 1;
            if (c >= n)
                break;
            if (c + 1 < n && fluid_less(&nd->heap[c + 1], &nd->heap[c]))
                c++;
            if (!fluid_less(&nd->heap[c], &last))
                break;
            nd->heap[j] = nd->heap[c];
            j = c;
        }
        if (n > 0) {
            nd->heap[j] = last;
            f->head[i] = nd->heap[0].finish;
        } else
            f->head[i] = NAN;
        f->n[i] = n;
        f->total--;
        fluid_rates(f, i);
        return true;
    }
    return false;
}

/* A node's time to its next departure, ceil(need / rate) ns (0 when due). */
static double fluid_dt(double need, double rate)
{
    return need <= 0 ? 0 : ceil(need / rate);
}

static double fluid_next_runs(const stall__fluid *f, double d);
static double fluid_next_links(const stall__fluid *f, double d);

/* The least of the nodes' times to their next departure. For one rate r >
 * 0, need -> fluid_dt(need, r) does not decrease (the division is
 * correctly rounded, ceil monotone), so the least over a run of nodes of
 * that rate is fluid_dt of their least need: one division per run of equal
 * rates (every node's with only a global bandwidth) instead of one per
 * node, the same value. */
stall_time stall__fluid_next(const stall__fluid *f, stall_time now)
{
    if (f->total == 0)
        return -1;
    double best = INFINITY, d = (double)(now - f->last);
    if (f->link <= 0 && f->global > 0) {
        /* A global bandwidth alone: every node's rate is global / total
         * (fluid_rates), one run; the least need without a branch, in four
         * lanes (the least of a set whatever its order; an idle node's
         * head is NaN, never less). */
        const double *restrict head = f->head, *restrict v = f->v;
        double r = f->rate[0], rd = r * d, m[4] = {INFINITY, INFINITY, INFINITY, INFINITY};
        int i = 0;
        for (; i + 4 <= f->nodes; i += 4)
            for (int k = 0; k < 4; k++) {
                double need = head[i + k] - (v[i + k] + rd);
                m[k] = need < m[k] ? need : m[k];
            }
        for (; i < f->nodes; i++) {
            double need = head[i] - (v[i] + rd);
            m[0] = need < m[0] ? need : m[0];
        }
        double least = fmin(fmin(m[0], m[1]), fmin(m[2], m[3]));
        best = fluid_dt(least, r);
    } else if (f->global <= 0)
        best = fluid_next_links(f, d);
    else
        best = fluid_next_runs(f, d);
    if (best > (double)(STALL_LIMIT_HORIZON_NS - now))
        return STALL_LIMIT_HORIZON_NS + 1;
    return now + (stall_time)best;
}

static double fluid_next_runs(const stall__fluid *f, double d)
{
    double best = INFINITY;
    double run_rate = 0, run_need = INFINITY; /* run_rate 0: no run open */
    for (int i = 0; i < f->nodes; i++) {
        if (f->n[i] == 0)
            continue;
        double r = f->rate[i];
        double v = f->v[i] + r * d;
        double need = f->head[i] - v;
        if (r > 0 && r == run_rate) {
            run_need = need < run_need ? need : run_need;
            continue;
        }
        if (run_rate > 0) {
            double dt = fluid_dt(run_need, run_rate);
            best = dt < best ? dt : best;
        }
        if (r > 0 && need == need) { /* open a run (a NaN need is passed over, as below) */
            run_rate = r;
            run_need = need;
            continue;
        }
        run_rate = 0;
        double dt = fluid_dt(need, r);
        best = dt < best ? dt : best;
    }
    if (run_rate > 0) {
        double dt = fluid_dt(run_need, run_rate);
        best = dt < best ? dt : best;
    }
    return best;
}

/* Links alone: a node's rate is link / n (fluid_rates sets it whenever its
 * n changes and the node is busy), so the nodes with n reads in flight, n
 * < 64, share one rate and one division, of the same link / n. Without a
 * branch but past 64: an idle node (n = 0, head NaN) leaves slot 0 as it
 * is (a NaN need is never less). */
static double fluid_next_links(const stall__fluid *f, double d)
{
    enum { NMAX = 64 };
    /* two tables, even and odd nodes, so that neighbours of one count do
     * not wait for each other's store */
    double least[2][NMAX], best = INFINITY;
    for (int k = 0; k < NMAX; k++)
        least[0][k] = least[1][k] = INFINITY;
    for (int i = 0; i < f->nodes; i++) {
        int n = f->n[i];
        double need = f->head[i] - (f->v[i] + f->rate[i] * d);
        double *l = least[i & 1];
        if (n < NMAX) {
            l[n] = need < l[n] ? need : l[n];
            continue;
        }
        double dt = fluid_dt(need, f->rate[i]);
        best = dt < best ? dt : best;
    }
    for (int n = 1; n < NMAX; n++) {
        double m = least[0][n] < least[1][n] ? least[0][n] : least[1][n];
        if (m < INFINITY) {
            double dt = fluid_dt(m, f->link / n);
            best = dt < best ? dt : best;
        }
    }
    return best;
}

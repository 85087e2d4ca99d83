/*
 * deflate.c - the CPU contention a trace's durations were measured under
 * (calibrate, and the contention model of traces without CPU columns):
 * simulations of the trace's own configuration under a CPU model, and the
 * deflate that gives its measured mean fetch back (see feed.h).
 */
#include "feed.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "stall/io.h"

/* meta.json's cpu_cores beside a tidy trace (a capture folder of
 * tools/train_example.py or stallsim_capture.py), 0 when it has none, -1
 * (err set) when the file is there but not what the capture writes. */
int wi_meta_cores(const char *trace, stall_err *err)
{
    const char *slash = strrchr(trace, '/');
    size_t dir = slash ? (size_t)(slash - trace) + 1 : 0;
    char *path = stall_xmalloc(dir + sizeof "meta.json");
    memcpy(path, trace, dir);
    memcpy(path + dir, "meta.json", sizeof "meta.json");
    size_t n = 0;
    char *text = stall_input_check(path, &(stall_err){0}) == 0 ? stall_read_file(path, &n) : NULL;
    if (!text) {
        free(path);
        return 0;
    }
    char why[256] = "";
    yajl_val root = n < (1u << 20) ? yajl_tree_parse(text, why, sizeof why) : NULL;
    free(text);
    int cores = 0;
    if (!root || !YAJL_IS_OBJECT(root)) {
        why[strcspn(why, "\n")] = '\0';
        cores = -1;
        stall_err_set(err, STALL_EPARSE,
                      "%s: %s: it says the cores of the machine the trace was captured on "
                      "(cpu_cores); mend it, or set [trace] cores",
                      path,
                      n >= (1u << 20) ? "larger than 1 MB, not a capture's meta.json"
                      : root          ? "not a JSON object"
                      : why[0]        ? why
                                      : "not JSON");
    } else {
        const char *key[] = {"cpu_cores", NULL};
        yajl_val v = yajl_tree_get(root, key, yajl_t_any);
        long long c = v && YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) : -1;
        if (v && !(c > 0 && c <= (1 << 24))) {
            cores = -1;
            stall_err_set(err, STALL_EPARSE,
                          "%s: cpu_cores: not a whole number of cores from 1 to 16777216 "
                          "(the machine the trace was captured on); mend it, or set [trace] "
                          "cores",
                          path);
        } else if (v) {
            cores = (int)c;
        }
    }
    yajl_tree_free(root);
    free(path);
    return cores;
}

int wi_trace_cores(const stall_config *cfg, int cores, const char **from, stall_err *err)
{
    if (cfg->trace_cores > 0) {
        *from = "[trace] cores";
        return (int)cfg->trace_cores;
    }
    int c = cfg->format == STALL_FORMAT_TIDY && cfg->path[0] ? wi_meta_cores(cfg->path, err) : 0;
    if (c < 0) {
        *from = NULL;
        return -1;
    }
    if (c > 0) {
        *from = "the capture's meta.json";
        return c;
    }
    *from = NULL; /* not known: taken as the run's */
    return cores;
}

int wi_sim_params(const stall_model_params *p, wi_tables *w, const wi_feed *f, double *epoch_s,
                  double *fetch_s, stall_err *err)
{
    stall_durations d;
    int rc = f ? f->open(f->ctx, p, &d, err) : 0;
    double *e = stall_xcalloc((size_t)p->epochs, sizeof *e),
           *st = stall_xcalloc((size_t)p->epochs, sizeof *st);
    wi_collect c = {.epoch_s = e, .stall_s = st};
    if (rc == 0) {
        stall_model_stats ms;
        rc = f ? wi_run_with(p, &d, &c, &ms, err) : wi_run(p, w, &c, &ms, err);
        int src = rc && f ? f->error(f->ctx, err) : 0;
        rc = src ? src : rc;
    }
    double sum = 0;
    for (int i = 0; i < p->epochs; i++)
        sum += e[i];
    if (epoch_s)
        *epoch_s = sum / p->epochs;
    if (fetch_s)
        *fetch_s = c.fetch_n ? c.fetch_sum / (double)c.fetch_n : 0;
    free(e);
    free(st);
    return rc;
}

/* Runs trace `base` with `workers` under the CPU model *cpu, its CPU parts
 * multiplied by `deflate` (the inverse of the contention they were measured
 * under). Mean epoch and mean simulated fetch time (E - S). */
static int wi_sim_from(const stall_measured *base, const wi_feed *f, int workers, const wi_cpu *cpu,
                       double deflate, double *epoch_s, double *fetch_s, stall_err *err)
{
    wi_whatif what;
    wi_whatif_defaults(&what);
    stall_model_params p;
    wi_params(&what, base, false, &p);
    p.workers = workers;
    p.cores = cpu->cores;
    p.cpu_share = cpu->fetch_share;
    p.compute_cpu_share = cpu->compute_share;
    p.cpu_deflate = deflate;
    p.gpus_per_node = cpu->gpn > 0 && cpu->gpn <= p.ranks ? cpu->gpn : p.ranks;
    /* the node starts workers x ranks processes (docs/model.md 2.4) */
    wi_startup_apply(base, &p);
    wi_tables w = {0};
    int rc = f ? wi_horizon_check(&what, f->span, err)
               : wi_tables_build(&what, base, p.ranks, p.epochs, p.batches, false, &w, err);
    if (rc == 0)
        rc = wi_sim_params(&p, &w, f, epoch_s, fetch_s, err);
    else
        *epoch_s = *fetch_s = 0;
    wi_tables_free(&w);
    return rc;
}

int wi_sim(const stall_measured *base, int workers, const wi_cpu *cpu, double deflate,
           double *epoch_s, double *fetch_s, stall_err *err)
{
    return wi_sim_from(base, NULL, workers, cpu, deflate, epoch_s, fetch_s, err);
}

/* The contention the trace's CPU work met: the deflate in [1 / most, 1] for
 * which simulating the measured configuration gives the measured mean fetch
 * time back, where `most` is the largest possible slowdown (every fetch and
 * compute of a node on its cores at once). Bisection: the simulated fetch
 * time grows with deflate. */
static int wi_deflate_from(const stall_measured *base, const wi_feed *f, const wi_cpu *cpu,
                           double *deflate, stall_err *err)
{
    int rpn = cpu->gpn > 0 && cpu->gpn < base->ranks ? cpu->gpn : base->ranks;
    int per_rank = (base->workers > 0 ? base->workers : 0) + (cpu->compute_share > 0 ? 1 : 0);
    double most = fmax(1.0, (double)per_rank * rpn / cpu->cores);
    double lo = 1.0 / most, hi = 1.0, ep, fe;
    *deflate = 1.0;
    if (cpu->cores <= 0 || most <= 1.0 || (cpu->fetch_share <= 0 && cpu->compute_share <= 0))
        return 0;
    int rc = wi_sim_from(base, f, base->workers, cpu, hi, &ep, &fe, err);
    if (rc || fe <= base->mean_fetch_s)
        return rc;
    rc = wi_sim_from(base, f, base->workers, cpu, lo, &ep, &fe, err);
    if (rc || fe >= base->mean_fetch_s) {
        *deflate = lo;
        return rc;
    }
    for (int it = 0; it < 14 && rc == 0; it++) {
        double mid = 0.5 * (lo + hi);
        rc = wi_sim_from(base, f, base->workers, cpu, mid, &ep, &fe, err);
        if (fe > base->mean_fetch_s)
            hi = mid;
        else
            lo = mid;
    }
    *deflate = 0.5 * (lo + hi);
    return rc;
}

int wi_deflate(const stall_measured *base, const wi_cpu *cpu, double *deflate, stall_err *err)
{
    return wi_deflate_from(base, NULL, cpu, deflate, err);
}

int wi_deflate_fed(const stall_measured *base, const wi_feed *f, const wi_cpu *cpu, double *deflate,
                   stall_err *err)
{
    return wi_deflate_from(base, f, cpu, deflate, err);
}

/* Simulated mean epoch time of trace `base` run with `workers`. */
int wi_predict(const stall_measured *base, int workers, const wi_cpu *cpu, double *epoch_s,
               stall_err *err)
{
    double d, fe;
    int rc = wi_deflate(base, cpu, &d, err);
    if (rc == 0)
        rc = wi_sim(base, workers, cpu, d, epoch_s, &fe, err);
    return rc;
}

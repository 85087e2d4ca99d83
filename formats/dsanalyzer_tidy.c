/*
 * dsanalyzer_tidy.c - the notebook's rows as tidy rows: the one mapping from
 * a dsanalyzer trace (fetch, start, perf of one epoch) to stallsim's tidy
 * trace, used by analyze, timeline, validate and mode = model alike
 * (docs/model.md, "The dsanalyzer trace as tidy rows").
 *
 * Per (batch k, GPU g): the fetch starts at the start file's time and lasts
 * the fetch file's seconds; the batch is ready at the perf row's Time; the
 * loop asked for it that row's training stall earlier (stall_ds_request);
 * the iteration ends the perf row's iteration time after the request. The
 * notebook measures no compute end: the rows leave it absent, and a model
 * that needs a compute duration estimates it openly (stall_ds_compute, in
 * jobs/measured.c and jobs/stream.c). Seconds become ns with
 * stall_s_to_ns (the nearest ns of the decimal text's value). The notebook
 * does not record workers: with W given, batch k went to worker k mod W, as
 * PyTorch's DataLoader dispatches within an epoch.
 */
#include "stall/dsanalyzer.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void stall_ds_tidy_row(const stall_ds_trace *d, size_t k, int r, stall_tidy_row *row)
{
    size_t i = k * (size_t)d->gpus + (size_t)r;
    memset(row, 0, sizeof *row);
    row->rank = r;
    row->batch = (int64_t)k;
    row->worker = -1;
    row->fetch_start = d->start_ns[i];
    row->fetch_end = d->start_ns[i] + stall_s_to_ns(d->fetch_s[i]);
    row->ready = d->time_ns[i];
    row->request = stall_ds_request(d, k, r);
    row->iter_end = row->request + stall_s_to_ns(d->iter_s[i]);
    row->compute_end = -1; /* not measured: see stall_ds_compute */
    row->epoch_start = row->request;
}

stall_tidy_trace *stall_ds_to_tidy(const stall_ds_trace *d, int workers)
{
    stall_tidy_trace *t = stall_xcalloc(1, sizeof *t);
    int g = d->gpus;
    size_t n = d->rows, cells = n * (size_t)g;
    t->ranks = g;
    t->epochs = 1;
    t->epoch0 = (int)d->epoch; /* the notebook's label, e.g. epoch 1 */
    t->batches = (int64_t)n;
    t->fetch_start = stall_xmalloc(cells * sizeof *t->fetch_start);
    t->fetch_end = stall_xmalloc(cells * sizeof *t->fetch_end);
    t->request = stall_xmalloc(cells * sizeof *t->request);
    t->ready = stall_xmalloc(cells * sizeof *t->ready);
    t->iter_end = stall_xmalloc(cells * sizeof *t->iter_end);
    t->worker = stall_xmalloc(cells * sizeof *t->worker);
    t->epoch_start = stall_xmalloc((size_t)g * sizeof *t->epoch_start);
    /* Both layouts are [k * G + g] for one epoch. */
    for (size_t k = 0; k < n; k++)
        for (int r = 0; r < g; r++) {
            size_t i = k * (size_t)g + (size_t)r;
            stall_tidy_row row;
            stall_ds_tidy_row(d, k, r, &row);
            t->fetch_start[i] = row.fetch_start;
            t->fetch_end[i] = row.fetch_end;
            t->ready[i] = row.ready;
            t->request[i] = row.request;
            t->iter_end[i] = row.iter_end;
            if (k == 0)
                t->epoch_start[r] = row.epoch_start;
        }
    t->prefetch = t->pin_memory = t->persistent = -1;
    t->path = stall_xstrdup(d->perf_path);
    stall_ds_tidy_workers(t, workers);
    return t;
}

void stall_ds_tidy_workers(stall_tidy_trace *t, int workers)
{
    size_t cells = (size_t)t->batches * (size_t)t->ranks;
    t->workers = workers >= 0 ? workers : -1;
    for (size_t i = 0; i < cells; i++)
        t->worker[i] = stall_ds_worker((int64_t)(i / (size_t)t->ranks), workers);
}

int stall_ds_workers_err(const char *start_path, int64_t epoch, int64_t k, int g,
                         stall_time early_ns, int workers, const char *given, stall_err *err)
{
    int64_t step = workers > 0 ? workers : 1;
    /* An option (analyze --workers N) or a key (where = N). */
    bool option = strncmp(given, "--", 2) == 0 && !strchr(given, '=') && !strchr(given, '.');
    return stall_err_set(
        err, STALL_ECONFIG,
        "%s: Epoch %" PRId64 ", batch %" PRId64 " (0-based), Start time_gpu%d: starts %.6f s "
        "before batch %" PRId64 " ended, which the same %s fetched with %s%s%d (%s; it fetches "
        "one batch at a time): the run had another worker count; give it, or leave the %s out "
        "to infer it from the fetch starts",
        start_path, epoch, k, g, (double)early_ns / 1e9, k - step,
        workers > 0 ? "worker" : "training process", given, option ? " " : " = ", workers,
        workers > 0 ? "PyTorch hands batch k to worker k mod workers"
                    : "0 workers: the training process loads its own batches",
        option ? "option" : "key");
}

int stall_ds_check_workers(const stall_ds_trace *t, int workers, const char *given, stall_err *err)
{
    if (workers < 0)
        return 0;
    size_t step = workers > 0 ? (size_t)workers : 1, G = (size_t)t->gpus;
    stall_time slack = stall_s_to_ns(STALL_DS_WORKER_SLACK_S);
    for (size_t k = step; k < t->rows; k++)
        for (size_t g = 0; g < G; g++) {
            size_t i = k * G + g, j = (k - step) * G + g;
            stall_time end = t->start_ns[j] + stall_s_to_ns(t->fetch_s[j]);
            if (t->start_ns[i] + slack < end)
                return stall_ds_workers_err(t->start_path, t->epoch, (int64_t)k, (int)g,
                                            end - t->start_ns[i], workers, given, err);
        }
    return 0;
}

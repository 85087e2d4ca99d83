/*
 * ckpt_job.c - checkpoints and uneven ranks in the jobs (docs/model.md 2.5,
 * 2.6): the keys resolved into the what-if, the model's parameters (a
 * trace's recorded checkpoints as defaults), and the per-epoch checkpoint
 * figures a run collects, writes (checkpoints.csv) and prints.
 */
#include "ckpt_job.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stall/io.h"

void wi_inputs_ckpt(const stall_config *cfg, wi_whatif *w)
{
    w->ckpt = (stall_ckpt_params){.every = cfg->ckpt_every,
                                  .every_ns = stall_s_to_ns(cfg->ckpt_every_s),
                                  .mb = cfg->ckpt_mb,
                                  .mb_s = cfg->ckpt_mb_s,
                                  .async = cfg->ckpt_mode == 1,
                                  .snapshot_mb_s = cfg->ckpt_snapshot_mb_s,
                                  .store = cfg->ckpt_target == 1,
                                  .first_extra = stall_s_to_ns(cfg->ckpt_first_extra_s)};
    w->ckpt_every_given = stall_config_given(cfg, "checkpoint", "every_iterations") ||
                          stall_config_given(cfg, "checkpoint", "every_s");
    w->ckpt_mb_given = stall_config_given(cfg, "checkpoint", "mb_per_rank");
    w->ckpt_mb_s_given = stall_config_given(cfg, "checkpoint", "bandwidth_mb_s");
    w->ckpt_first_given = stall_config_given(cfg, "checkpoint", "first_extra_s");
    w->ckpt_off = cfg->ckpt_mode == 2;
    w->ckpt_any_key[0] = '\0';
    static const char *const any[] = {"mode",          "mb_per_rank", "bandwidth_mb_s",
                                      "snapshot_mb_s", "target",      "first_extra_s"};
    for (size_t i = 0; i < sizeof any / sizeof any[0] && !w->ckpt_any_key[0]; i++)
        if (stall_config_given(cfg, "checkpoint", any[i]))
            stall_config_origin(cfg, "checkpoint", any[i], w->ckpt_any_key, sizeof w->ckpt_any_key);
    stall_config_origin(cfg, "checkpoint", "mb_per_rank", w->ckpt_mb_key, sizeof w->ckpt_mb_key);
    stall_config_origin(cfg, "checkpoint", "bandwidth_mb_s", w->ckpt_mb_s_key,
                        sizeof w->ckpt_mb_s_key);
    stall_config_origin(cfg, "checkpoint", "target", w->ckpt_target_key, sizeof w->ckpt_target_key);
    stall_config_origin(cfg, "checkpoint", "snapshot_mb_s", w->ckpt_snap_key,
                        sizeof w->ckpt_snap_key);
    stall_config_origin(cfg, "ranks", "slow", w->slow_key, sizeof w->slow_key);
    w->uneven = (stall_uneven_params){.slow = (int)cfg->slow_ranks,
                                      .by_node = cfg->slow_unit == 1,
                                      .compute_factor = cfg->slow_compute_factor,
                                      .fetch_factor = cfg->slow_fetch_factor,
                                      .straggler_fraction = cfg->straggler_fraction,
                                      .straggler_factor = cfg->straggler_factor,
                                      .straggler_iters = cfg->straggler_iters,
                                      .seed = (uint64_t)cfg->seed};
}

void wi_params_ckpt(const wi_whatif *what, const stall_measured *m, bool whatif,
                    stall_model_params *p)
{
    /* The trace's checkpoints (their tail taken out by the decomposition)
     * come back at the measured interval, size and bandwidth; the what-if's
     * keys replace each when given. */
    if (m && m->ckpt_n > 0) {
        p->ckpt.every = m->ckpt_every;
        p->ckpt.mb = m->ckpt_mb;
        p->ckpt.mb_s = m->ckpt_mb_s;
        p->ckpt.first_extra = stall_s_to_ns(m->ckpt_first_s);
    }
    if (!whatif)
        return;
    const stall_ckpt_params *c = &what->ckpt;
    if (what->ckpt_every_given || !m || m->ckpt_n == 0) {
        p->ckpt.every = c->every;
        p->ckpt.every_ns = c->every_ns;
    }
    if (what->ckpt_mb_given || !m || m->ckpt_n == 0)
        p->ckpt.mb = c->mb;
    if (what->ckpt_mb_s_given || !m || m->ckpt_n == 0)
        p->ckpt.mb_s = c->mb_s;
    if (what->ckpt_first_given || !m || m->ckpt_n == 0)
        p->ckpt.first_extra = c->first_extra;
    p->ckpt.async = c->async;
    p->ckpt.snapshot_mb_s = c->snapshot_mb_s;
    p->ckpt.store = c->store;
    if (what->ckpt_off) {
        p->ckpt.every = 0;
        p->ckpt.every_ns = 0;
    }
    p->uneven = what->uneven;
}

double wi_ckpt_measured_s(const stall_measured *m)
{
    return m->ckpt_mb_s > 0 ? m->ranks_per_node * m->ckpt_mb / m->ckpt_mb_s : 0.0;
}

const char *wi_ckpt_unsized_why(const stall_measured *m)
{
    return m && m->ckpt_unsized_why ? m->ckpt_unsized_why : "no ckpt_bytes";
}

int wi_ckpt_check(const wi_whatif *what, const stall_measured *m, const stall_model_params *p,
                  stall_err *err)
{
    if (what->ckpt_off && (!m || m->ckpt_n == 0))
        return stall_err_set(err, STALL_ECONFIG,
                             "[checkpoint] mode = off: has no effect, the trace records no "
                             "checkpoints to switch off");
    /* More slow ranks (or nodes) than the run has: said here, where the
     * key's origin is known (the model only knows its parameters). */
    const stall_uneven_params *u = &p->uneven;
    int units = u->by_node && p->gpus_per_node > 0
                    ? (p->ranks + p->gpus_per_node - 1) / p->gpus_per_node
                    : p->ranks;
    if (u->slow > units)
        return stall_err_set(
            err, STALL_ECONFIG, "%s: %d slow %s, but the run has %d %s ([cluster] gpus%s)",
            what->slow_key, u->slow, u->by_node ? "nodes" : "ranks", units,
            u->by_node ? "nodes" : "ranks", u->by_node ? " and gpus_per_node" : "");
    /* The trace's checkpoints record no size (docs/model.md 2.5): their MB
     * are one unit and their bandwidth the one that gives the measured
     * write time back, so a key that takes the size (alone, or through the
     * store's or the snapshot's bandwidth) would scale a placeholder. */
    if (!what->ckpt_off && m && m->ckpt_n > 0 && m->ckpt_unsized && !what->ckpt_mb_given) {
        const char *key = NULL, *why = NULL;
        if (what->ckpt_mb_s_given && !what->ckpt.store)
            key = what->ckpt_mb_s_key, why = "a bandwidth alone gives no write time";
        else if (what->ckpt.store)
            key = what->ckpt_target_key, why = "the store has no size to carry";
        else if (what->ckpt.async && what->ckpt.snapshot_mb_s > 0)
            key = what->ckpt_snap_key, why = "the snapshot has no size to copy";
        if (key)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: the trace's checkpoints record no size (%s), only their "
                                 "write time (%.3f s), so %s: give also [checkpoint] "
                                 "mb_per_rank, or a trace with ckpt_bytes",
                                 key, wi_ckpt_unsized_why(m), wi_ckpt_measured_s(m), why);
    }
    if (!what->ckpt_off && m && m->ckpt_n > 0 && m->ckpt_unsized && what->ckpt_mb_given &&
        !what->ckpt_mb_s_given && !what->ckpt.store)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: the trace's checkpoints record no size (%s), only their "
                             "write time (%.3f s), so a size has nothing to scale: give also "
                             "[checkpoint] bandwidth_mb_s, or a trace with ckpt_bytes",
                             what->ckpt_mb_key, wi_ckpt_unsized_why(m), wi_ckpt_measured_s(m));
    /* config/check_ckpt.c cannot refuse this for a tidy trace before it is
     * read: only a trace that records checkpoints gives the size and the
     * bandwidth defaults. Asked for and still off, the keys would do
     * nothing: refused. */
    const stall_ckpt_params *c = &what->ckpt;
    /* Keys describing checkpoints that are not written: no interval given
     * and none recorded in the trace. */
    if (!what->ckpt_off && c->every <= 0 && c->every_ns <= 0 && !stall_ckpt_on(&p->ckpt) &&
        what->ckpt_any_key[0])
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: has no effect: no checkpoints are written (the trace records "
                             "none, and no [checkpoint] every_iterations or every_s is given)",
                             what->ckpt_any_key);
    if ((c->every <= 0 && c->every_ns <= 0) || stall_ckpt_on(&p->ckpt))
        return 0;
    return stall_err_set(err, STALL_ECONFIG,
                         "%s: must be > 0 to write checkpoints (the trace records none to give "
                         "a default)",
                         p->ckpt.mb > 0.0 ? what->ckpt_mb_s_key : what->ckpt_mb_key);
}

/* ---- per-epoch figures ---- */

void wi_ck_init(wi_ckstats *s, const stall_model_params *p)
{
    memset(s, 0, sizeof *s);
    s->on = stall_ckpt_on(&p->ckpt);
    s->ne = p->epochs;
    s->n = stall_xcalloc((size_t)s->ne, sizeof *s->n);
    s->wait = stall_xcalloc((size_t)s->ne, sizeof *s->wait);
    s->write = stall_xcalloc((size_t)s->ne, sizeof *s->write);
    s->epoch = stall_xcalloc((size_t)s->ne, sizeof *s->epoch);
    s->ranks = p->ranks;
    s->first = stall_xcalloc((size_t)s->ranks, sizeof *s->first);
}

void wi_ck_free(wi_ckstats *s)
{
    free(s->n);
    free(s->wait);
    free(s->write);
    free(s->epoch);
    free(s->first);
    memset(s, 0, sizeof *s);
}

void wi_ck_add(wi_ckstats *s, const stall_iter_record *rec, bool last)
{
    if (rec->epoch < 0 || rec->epoch >= s->ne)
        return;
    if (rec->ckpt_write > 0 || rec->ckpt_wait > 0) {
        s->n[rec->epoch] += rec->ckpt_write > 0;
        s->wait[rec->epoch] += rec->ckpt_wait;
        s->write[rec->epoch] += rec->ckpt_write;
    }
    if (last)
        s->epoch[rec->epoch] = rec->iter_end - rec->epoch_start;
    if (rec->batch == 0) {
        for (int r = 0; r < s->ranks; r++)
            s->first[r] += rec->fetch_end[r] - rec->fetch_start[r];
        s->first_n++;
    }
}

stall_time wi_ck_first_fetch(const wi_ckstats *s, int r)
{
    return s->first_n > 0 ? s->first[r] / s->first_n : 0;
}

double wi_ck_share(const wi_ckstats *s)
{
    stall_time w = 0, e = 0;
    for (int i = 0; i < s->ne; i++) {
        w += s->wait[i];
        e += s->epoch[i];
    }
    return e > 0 ? (double)w / (double)e : 0.0;
}

static int wi_ck_fill(FILE *f, void *arg, stall_err *err)
{
    (void)err;
    const wi_ckstats *s = arg;
    fputs("epoch,checkpoints,checkpoint_s,stall_s,epoch_s,stall_share\n", f);
    for (int e = 0; e < s->ne; e++)
        fprintf(f, "%d,%lld,%.9f,%.9f,%.9f,%.9f\n", s->epoch0 + e, (long long)s->n[e],
                stall_ns_to_s(s->write[e]), stall_ns_to_s(s->wait[e]), stall_ns_to_s(s->epoch[e]),
                s->epoch[e] > 0 ? (double)s->wait[e] / (double)s->epoch[e] : 0.0);
    return 0;
}

int wi_ck_write(const wi_ckstats *s, const char *dir, stall_err *err)
{
    if (!s->on)
        return 0;
    return stall_write_atomic_in(dir, "checkpoints.csv", wi_ck_fill, (void *)s, err);
}

void wi_ck_print(FILE *f, const wi_ckstats *s, const stall_model_params *p)
{
    if (!s->on)
        return;
    int64_t n = 0;
    stall_time wait = 0, write = 0, ep = 0;
    for (int e = 0; e < s->ne; e++) {
        n += s->n[e];
        wait += s->wait[e];
        write += s->write[e];
        ep += s->epoch[e];
    }
    char every[64];
    if (p->ckpt.every > 0)
        snprintf(every, sizeof every, "every %lld iterations", (long long)p->ckpt.every);
    else
        snprintf(every, sizeof every, "every %g s", stall_ns_to_s(p->ckpt.every_ns));
    char to[160];
    int per_node = p->gpus_per_node < p->ranks ? p->gpus_per_node : p->ranks;
    if (s->unsized)
        snprintf(to, sizeof to,
                 "size not recorded (%s): each written in %.3f s, the trace's "
                 "measured write time",
                 s->unsized_why ? s->unsized_why : "no ckpt_bytes",
                 p->ckpt.mb_s > 0 ? (double)per_node * p->ckpt.mb / p->ckpt.mb_s : 0.0);
    else if (p->ckpt.store)
        snprintf(to, sizeof to, "to the store, sharing its link with the reads");
    else
        snprintf(to, sizeof to, "at %g MB/s per node", p->ckpt.mb_s);
    char size[32] = "";
    if (!s->unsized)
        snprintf(size, sizeof size, "%g MB per rank ", p->ckpt.mb);
    fprintf(f,
            "checkpoints (%s, %s, %s%s): %.2f per epoch, write "
            "%.3f s%s, the loop waited %.3f s per epoch for them (%.2f%% of the epoch; the "
            "epoch grows by at most that, less where the workers prefetch meanwhile; "
            "checkpoints.csv)\n",
            p->ckpt.async ? "async" : "sync", every, size, to, (double)n / s->ne,
            stall_ns_to_s(write) / s->ne,
            p->ckpt.store && p->ckpt.async ? " (alone on the link)" : "",
            stall_ns_to_s(wait) / s->ne, ep > 0 ? 100.0 * (double)wait / (double)ep : 0.0);
    /* An async checkpoint's step waits for the snapshot copy; slower than
     * the node's write it costs more than sync would: said, not refused
     * (a what-if may ask it on purpose). */
    if (p->ckpt.async && !p->ckpt.store && p->ckpt.snapshot_mb_s > 0 && p->ckpt.mb_s > 0) {
        double snap = p->ckpt.mb / p->ckpt.snapshot_mb_s,
               sync = p->ckpt.mb * (double)per_node / p->ckpt.mb_s;
        if (snap >= sync)
            fprintf(f,
                    "note: the async snapshot (%.3f s per checkpoint at %g MB/s per rank) takes "
                    "at least as long as a sync write would (%.3f s: %d rank%s x %g MB at %g "
                    "MB/s per node): async saves nothing here, mode = sync would wait less\n",
                    snap, p->ckpt.snapshot_mb_s, sync, per_node, per_node == 1 ? "" : "s",
                    p->ckpt.mb, p->ckpt.mb_s);
    }
}

void wi_epochs_print(FILE *f, const wi_ckstats *s, const stall_model_params *p)
{
    /* With the storage tiers the epochs differ by what the cache holds
     * (a cold first epoch, warm later ones): each one's time, which the
     * mean above hides. */
    if (!p->tiers || s->ne < 2)
        return;
    fputs("epochs (storage tiers: what the cache holds sets each one):", f);
    for (int e = 0; e < s->ne; e++)
        fprintf(f, " %d: %.3f s%s", s->epoch0 + e, stall_ns_to_s(s->epoch[e]),
                e + 1 < s->ne ? "," : "\n");
}

void wi_uneven_print(FILE *f, const stall_model_params *p)
{
    const stall_uneven_params *u = &p->uneven;
    if (u->slow > 0 && (u->compute_factor != 1.0 || u->fetch_factor != 1.0))
        fprintf(f, "uneven ranks: the last %d %s%s compute x %g, fetch x %g\n", u->slow,
                u->by_node ? "node" : "rank", u->slow == 1 ? " runs" : "s run", u->compute_factor,
                u->fetch_factor);
    if (u->straggler_fraction > 0 && u->straggler_factor != 1.0)
        fprintf(f,
                "stragglers: each rank with probability %g per window of %lld iteration%s, "
                "compute x %g (seed %llu)\n",
                u->straggler_fraction, (long long)u->straggler_iters,
                u->straggler_iters == 1 ? "" : "s", u->straggler_factor,
                (unsigned long long)u->seed);
}

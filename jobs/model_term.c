/*
 * model_term.c - mode = model's terminal summary (model_job.h): the run's
 * configuration and what the trace gave, a row per fetch alignment, the
 * CPU, storage, stall-floor and late-start lines. Split from model_job.c, which runs
 * the job and writes its files.
 */
#include "model_job.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "stall/dsanalyzer.h"

/* A mean for the terminal, as %.4f: "-" where there was nothing to average
 * (NaN). */
const char *wi_mean_text(char *buf, size_t n, double v)
{
    if (isnan(v))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.4f", v);
    return buf;
}

/* The share of the trace's measured waits for a core taken out (its CPU
 * columns; docs/model.md 2.3): given, fitted, or at a bound where the
 * trace's own run still misses. */
static void wi_term_cpu_waits(FILE *f, const wi_cpu_fit *fit)
{
    if (fit->given)
        fprintf(f,
                "CPU waits: %.0f%% of the trace's measured waits for a core taken out of its "
                "durations ([cluster] cpu_waits_out); the sharing simulated here adds the "
                "what-if's own\n",
                100 * fit->out);
    else if (fit->out >= 1.0 && fit->all > 0)
        fprintf(f,
                "CPU waits: all of the trace's measured waits for a core taken out of its "
                "durations, and its own run simulated is still %+.1f%% of its mean epoch (the "
                "sharing simulated here alone makes longer waits than were measured; none "
                "taken out: %+.1f%%)\n",
                100 * fit->all, 100 * fit->none);
    else if (fit->out <= 0.0 && fit->none < 0)
        fprintf(f,
                "CPU waits: none of the trace's measured waits for a core taken out, and its own "
                "run simulated is still %+.1f%% of its mean epoch (all taken out: %+.1f%%)\n",
                100 * fit->none, 100 * fit->all);
    else
        fprintf(f,
                "CPU waits: %.0f%% of the trace's measured waits for a core taken out of its "
                "durations, the share with which its own run simulated gives its mean epoch "
                "back (all taken out: %+.1f%%, none: %+.1f%%); the sharing simulated here "
                "adds the what-if's own\n",
                100 * fit->out, 100 * fit->all, 100 * fit->none);
}

/* More ranks on a node than the trace's: each activity's CPU time is the
 * trace's, and that is the prediction's stated limit (docs/model.md 2.3:
 * the CPU time of the same work changed with the load in either direction
 * and drifted between captures; docs/validation.md has the errors). */
static void wi_term_cpu_load(FILE *f, const stall_model_params *p, const stall_measured *m)
{
    int per = p->gpus_per_node < p->ranks ? p->gpus_per_node : p->ranks;
    int had = m->ranks_per_node > 0 && m->ranks_per_node < m->ranks ? m->ranks_per_node : m->ranks;
    if (per <= had)
        return;
    fprintf(f,
            "CPU limit: %d ranks per node where the trace ran %d: each activity's CPU time is "
            "the trace's, but the CPU time of the same work changes with the load and drifts "
            "between captures by up to 25%% (docs/model.md 2.3); from 2-rank captures to 4 and "
            "8 ranks the epoch came out -26%% to +40%% (mean |error| 12%%, "
            "docs/validation.md), so read this prediction with that margin\n",
            per, had);
}

/* The terminal summary: what ran (nodes, where the measured loader came
 * from, storage), one row per fetch alignment, the measured epoch, and the
 * stall floor that no loader setting removes. */
void wi_term(FILE *f, const stall_config *cfg, const stall_model_params *p, const stall_measured *m,
             const stall_time *first_fetch, const char *whole, const wi_alignment *jobs, int n,
             double measured, bool comparable, double contention, int trace_cores,
             const char *trace_from, const wi_cpu_fit *fit, const wi_store_fit *store, bool samples)
{
    int nodes = (p->ranks + p->gpus_per_node - 1) / p->gpus_per_node;
    fprintf(f,
            "stallsim %s: scenario '%s' (model), %d GPUs on %d node%s (%d per node) x %d workers x "
            "prefetch %d, %lld batches x %d epochs%s\n",
            stall_version(), cfg->name, p->ranks, nodes, nodes == 1 ? "" : "s", p->gpus_per_node,
            p->workers, p->prefetch, (long long)p->batches, p->epochs,
            p->cores          ? ""
            : m && m->cpu.has ? ", no CPU sharing modelled (the measured waits kept)"
                              : ", no CPU contention");
    if (m && m->workers_from != STALL_WORKERS_TRACE)
        fprintf(f, "measured run: %d GPUs x %d workers per GPU (%s%s), prefetch factor %d%s\n",
                m->ranks, m->workers,
                m->workers_from == STALL_WORKERS_GIVEN
                    ? "from [trace] workers"
                    : "inferred from the fetch starts; set [trace] workers if wrong",
                wi_workers_trace_say(m), m->prefetch >= 1 ? m->prefetch : 2,
                stall_config_given(cfg, "trace", "prefetch_factor") ? "" : " (PyTorch's default)");
    if (m && p->ranks != m->ranks) {
        /* Which scaling: it sets the batches per rank of every number below. */
        int64_t b = m->samples > 0 ? m->samples : (cfg->samples > 0 ? cfg->samples : 1);
        if (cfg->batches > 0)
            fprintf(f,
                    "scaling: %lld batches per GPU from [run] batches (the trace: %lld on %d "
                    "GPUs)\n",
                    (long long)p->batches, (long long)m->batches, m->ranks);
        else if (cfg->scaling == STALL_SCALING_STRONG) {
            const wi_whatif what = {.samples = cfg->samples};
            int64_t l = wi_dataset_samples(&what, m), per = (l + p->ranks - 1) / p->ranks,
                    rem = per - (p->batches - 1) * b;
            char last[256];
            if (cfg->drop_last && per % b)
                snprintf(last, sizeof last, "drop_last: the incomplete batch dropped");
            else if (b > 1 && rem > 0 && rem < b)
                snprintf(last, sizeof last, "the last of %lld samples, charged for them",
                         (long long)rem);
            else
                snprintf(last, sizeof last, "all full");
            /* DistributedSampler pads the dataset to G x ceil(L / G) by
             * repeating its first samples: say how many are repeats (the
             * DLIO trace's 1 batch over 8 GPUs: 7 of 8). */
            int64_t pad = per * p->ranks - l;
            if (pad > 0)
                snprintf(last + strlen(last), sizeof last - strlen(last),
                         "; %lld of the %lld %s are repeats: DistributedSampler pads the dataset "
                         "by repeating it",
                         (long long)pad, (long long)(per * p->ranks),
                         b > 1 ? "samples" : "batches");
            /* The trace's own last batch, when partial, counts its samples. */
            char per_batch[64] = " x samples per batch";
            if (b > 1 && m->samples_last > 0 && m->samples_last < b)
                snprintf(per_batch, sizeof per_batch, " x %lld samples, the last of %lld",
                         (long long)b, (long long)m->samples_last);
            fprintf(f,
                    "scaling: strong, the trace's dataset split over %d GPUs: %lld %s (%lld "
                    "batches x %d GPU%s%s) give %lld per GPU, %lld batches (%s)\n",
                    p->ranks, (long long)l, b > 1 ? "samples" : "batches", (long long)m->batches,
                    m->ranks, m->ranks == 1 ? "" : "s", b > 1 ? per_batch : "", (long long)per,
                    (long long)p->batches, last);
        } else
            fprintf(f,
                    "scaling: weak, %lld batches per GPU as in the trace: %d GPUs load %.6g "
                    "times its data\n",
                    (long long)p->batches, p->ranks, (double)p->ranks / m->ranks);
    }
    if (whole[0])
        fprintf(f, "%s\n", whole);
    if (m && m->fetch_fit) {
        char say[4096];
        wi_fit_say(m->fetch_fit, false, say, sizeof say);
        fprintf(f, "%s (rows marked *: inferred)\n", say);
    }
    if (p->cores > 0)
        fprintf(f,
                "CPU: %d cores per node; %.0f%% of a fetch and %.0f%% of a compute is CPU work%s",
                p->cores, 100 * p->cpu_share, 100 * p->compute_cpu_share, m ? "" : "\n");
    if (p->cores > 0 && m && m->cpu.has) {
        fprintf(f,
                " (the trace's CPU columns); and %.2f ms of CPU work in each hand-over, %.2f ms "
                "per rank in each synchronisation's tail\n",
                stall_ns_to_s(p->cpu.handover_cpu) * 1e3, stall_ns_to_s(p->cpu.tail_cpu) * 1e3);
        wi_term_cpu_waits(f, fit);
        wi_term_cpu_load(f, p, m);
    } else if (p->cores > 0 && m && trace_from)
        fprintf(f,
                "; the trace's CPU work ran %.3fx slower than alone (measured %d workers on %d "
                "cores per node, from %s)\n",
                contention, m->workers, trace_cores, trace_from);
    else if (p->cores > 0 && m)
        fprintf(f,
                "; the trace's CPU work ran %.3fx slower than alone (measured %d workers, taken "
                "on these %d cores: the trace does not say its own; [trace] cores sets them)\n",
                contention, m->workers, trace_cores);
    else if (m && m->cpu.has) {
        /* [cluster] cores = 0 turns the CPU model off: the measured
         * durations are replayed with every wait for a core they hold, so
         * this is not the run on unlimited cores (which can be faster than
         * any count; docs/model.md 2.3). */
        char on[48] = "";
        if (m->cpu.cores > 0)
            snprintf(on, sizeof on, " on its %d cores per node", m->cpu.cores);
        fprintf(f,
                "CPU: not shared ([cluster] cores = 0): the trace's durations are replayed with "
                "the waits for a core its run measured%s, not as on unlimited cores; for cores "
                "that never bind set [cluster] cores to at least the node's %d processes\n",
                on, p->gpus_per_node * (p->workers + 1));
    }
    if (p->tiers)
        wi_tiers_say(f, p, m, store);
    else if (p->storage_mb_s > 0) {
        double read = p->batch_mb / p->storage_mb_s;
        fprintf(f, "storage: %.6g MB/s per node, %.6g MB per batch%s; ", p->storage_mb_s,
                p->batch_mb,
                m && !stall_config_given(cfg, "storage", "batch_mb")
                    ? " (mean of the trace's bytes column)"
                    : "");
        /* A read longer than the measured fetches cannot have been part of
         * them: the measured run read faster than this bandwidth, and the
         * model's fetch grows to the read (2.3: max(0, D' - cpu - R)). */
        if (m && m->mean_fetch_s > 0 && read > m->mean_fetch_s)
            fprintf(f,
                    "the read alone (%.4f s) is longer than the measured mean fetch (%.4f s): "
                    "the measured run read faster than this, and each fetch grows to at least "
                    "its read (plus the time lost to sharing)\n",
                    read, m->mean_fetch_s);
        else
            fprintf(f,
                    "the read alone (%.4f s) is part of each measured fetch, only the time lost "
                    "to sharing is added\n",
                    read);
        /* The measured fetches hold the trace's own reads: this bandwidth
         * shares, it does not speed them up (docs/model.md 2.3). */
        if (m)
            fprintf(f, "storage: the trace's fetches keep the reads of its own run, so a store "
                       "faster than that one is not faster here; [storage] trace_mb_s and "
                       "trace_latency_ms give the storage the trace read from (its read is then "
                       "taken out and read again at this one)\n");
    }
    fprintf(f, "%-5s %11s %9s %10s %9s %9s %7s %7s %12s\n", "fetch", "epoch_s", "vs_meas", "iter_s",
            "stall_s", "delay_s", "stall%", "busy%", samples ? "samples/s" : "batches/s");
    bool no_means = false;
    for (int i = 0; i < n; i++) {
        const wi_alignment *j = &jobs[i];
        char vs[16] = "";
        if (!isnan(measured) && comparable)
            snprintf(vs, sizeof vs, "%+.2f%%",
                     stall_pct_nz(100.0 * (j->sum.epoch_time_s - measured) / measured));
        char name[16];
        snprintf(name, sizeof name, "%s%s", stall_align_name(j->fa), m && m->fetch_fit ? "*" : "");
        char it[24], st[24], de[24];
        no_means |= isnan(j->sum.iteration.mean);
        fprintf(f, "%-5s %11.3f %9s %10s %9s %9s %7.2f %7.2f %12.1f\n", name, j->sum.epoch_time_s,
                vs, wi_mean_text(it, sizeof it, j->sum.iteration.mean),
                wi_mean_text(st, sizeof st, j->sum.stall.mean),
                wi_mean_text(de, sizeof de, j->sum.delay.mean), 100.0 * j->sum.stall_share,
                100.0 * j->sum.gpu_busy_share,
                samples ? j->sum.throughput_samples_s : j->sum.throughput_batches_s);
    }
    if (no_means)
        fprintf(f,
                "iter_s, stall_s, delay_s: -: no batch of an epoch comes after the %lld left "
                "out of the means ([report] warmup), so there is nothing to average (a "
                "smaller warmup: --set report.warmup=1)\n",
                (long long)cfg->warmup);
    if (!isnan(measured))
        fprintf(f, "%-5s %11.3f   (measured mean epoch time of the trace%s)\n", "trace", measured,
                comparable ? ""
                : m && m->window_s
                    ? "; vs_meas left empty: the trace's epochs are profiling windows opened "
                      "mid-training, these runs start each epoch empty (validate compares the "
                      "windows)"
                    : "; vs_meas left empty: the what-if changes GPUs, batches or epochs");
    /* Not the share of all ranks' time that --analyze prints. */
    if (p->ranks > 1)
        fprintf(f,
                "stall_s, stall%%: of the slowest GPU in each iteration (max over the %d GPUs), "
                "not the mean over GPUs\n",
                p->ranks);
    if (!samples)
        fprintf(f, "batches/s: batches over all GPUs per second (set [report] samples for "
                   "samples/s)\n");
    /* The floor: the per-batch hand-over is paid even when a batch is
     * waiting, and every epoch starts empty (worker start-up and the first
     * fetch), whatever the workers and prefetch. */
    double first = 0;
    for (int r = 0; r < p->ranks; r++)
        first += stall_ns_to_s(first_fetch[r]);
    first /= p->ranks;
    /* persistent workers start once: their start-up spread over the epochs */
    double su = p->workers > 0 ? stall_ns_to_s(p->startup) : 0;
    double hand = stall_ns_to_s(p->handover) * (double)p->batches,
           start = (p->persistent_workers ? su / p->epochs : su) + first;
    double floor_s = hand + start, stall_s = 0;
    for (int i = 0; i < n; i++)
        stall_s = fmax(stall_s, jobs[i].sum.stall.mean * (double)p->batches);
    char empty[224];
    /* with the tiers, the first fetch as run (model_job.c wi_print) */
    const char *ff = p->tiers ? " as run at the what-if's store" : "";
    if (p->persistent_workers && p->workers > 0)
        snprintf(empty, sizeof empty,
                 "first fetch %.4f s%s; the workers' start-up, %.4f s, in epoch 0 only: "
                 "persistent workers",
                 first, ff, su);
    else if (p->workers == 0)
        snprintf(empty, sizeof empty,
                 "first fetch %.4f s%s; no worker processes to start: the loop loads each batch "
                 "itself",
                 first, ff);
    else
        snprintf(empty, sizeof empty, "worker start-up %.4f s + first fetch %.4f s%s", su, first,
                 ff);
    fprintf(f,
            "stall floor: about %.3f s per epoch whatever the loader: hand-over %.6f s per batch "
            "(the run's mean) x %lld batches = %.3f s, and the empty start of each epoch (%s)\n",
            floor_s, stall_ns_to_s(p->handover), (long long)p->batches, hand, empty);
    (void)stall_s;
}

/* Ranks that began an epoch late (docs/model.md 2.4): said where the
 * widest start spread exceeds 5% of its measured epoch, as validate says
 * it, with whether the run replays it (the trace's own rank count) or not. */
void wi_late_print(FILE *f, const stall_measured *m, const stall_model_params *p, int e0, bool none)
{
    /* with late_start = none given, whatever the spread: what the key took
     * away (it is refused where there is none) */
    int w = stall_measured_late_epoch(m, none ? 0.0 : 0.05);
    if (w < 0)
        return;
    fprintf(f,
            "ranks that start late: the trace's ranks began epoch %d %.3f s apart (rank %d last%s)",
            e0 + w, m->start_spread_s[w], m->start_last[w],
            m->start_spread_s[w] > 0.05 * m->epoch_s[w] ? "" : ", under 5% of the epoch");
    if (p->ranks == m->ranks && none)
        fprintf(f, "; [ranks] late_start = none: every rank begins every epoch together, as an "
                   "aligned launch would (docs/model.md 2.4)\n");
    else if (p->ranks == m->ranks)
        fprintf(
            f, "; each rank begins the trace's epochs as late as it did, and its lateness "
               "counts in its first batch's stall from the epoch's start (stall_s, stall%%), "
               "as in the measured run ([ranks] late_start = none: together; docs/model.md 2.4)\n");
    else
        fprintf(f,
                "; not simulated for %d GPUs (a late start has no rule for another rank count): "
                "the ranks begin every epoch together, so compare the epochs they began together "
                "(docs/model.md 2.4)\n",
                p->ranks);
}

/*
 * keys.c - the scenario key table. Every key lives in cfg_keys[]: section,
 * key, type, where it is stored, default (as text, parsed by the same code
 * as user input, so defaults obey the same rules), range and help. The same
 * table prints the key reference of --help.
 */
#include "stall/config.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stall/io.h"
#include "stall/limits.h"
#include "config_int.h"

const cfg_key cfg_keys[] = {
    CFG_K("scenario", "name", CFG_STR, name, "scenario", 0, 0, NULL,
          "name of the scenario; results go to results/<name>/ unless -o is given"),
    CFG_K("scenario", "mode", CFG_ENUM, mode, "replay", 0, 0, "replay|seed|model",
          "replay: event simulation of the measured trace under the alignment policies; "
          "seed: the original notebook's numbers, exactly; model: closed-loop what-if simulation"),
    CFG_K("trace", "format", CFG_ENUM, format, "dsanalyzer", 0, 0,
          "dsanalyzer|tidy|none|kineto|dftracer",
          "input trace format (none: durations from the [fetch] and [compute] distributions; "
          "kineto: PyTorch profiler traces, dftracer: DLIO traces, for analyze, timeline, "
          "validate and mode = model)"),
    CFG_K("trace", "fetch", CFG_PATH, fetch, "", 0, 0, NULL,
          "dsanalyzer: fetch-time CSV (Epoch, Index number, Fetch time (sec)_gpu{i})"),
    CFG_K("trace", "start", CFG_PATH, start, "", 0, 0, NULL,
          "dsanalyzer: fetch-start CSV (Epoch, Index number, Start time_gpu{i})"),
    CFG_K("trace", "perf", CFG_PATH, perf, "", 0, 0, NULL,
          "dsanalyzer: perf CSV (Epoch, Step, GPU, Time, Iteration time (sec), Training stall "
          "time (sec))"),
    CFG_K("trace", "path", CFG_PATH, path, "", 0, 0, NULL,
          "tidy: the trace CSV; kineto, dftracer: a trace file (.json[.gz], .pfw[.gz]) or a "
          "folder of per-rank files"),
    CFG_K("trace", "epoch", CFG_INT, epoch, "1", 0, CFG_BIG, NULL,
          "dsanalyzer: the epoch to replay (the notebook uses 1)"),
    CFG_K("trace", "workers", CFG_INT, trace_workers, "-1", -1, STALL_LIMIT_WORKERS, NULL,
          "the measured run's DataLoader workers per GPU when the trace does not record them "
          "(dsanalyzer; tidy without a workers column; kineto, dftracer: the loader the fetch "
          "inference assumes); -1: inferred from the fetch starts (dftracer: its reader threads)"),
    CFG_K("trace", "prefetch_factor", CFG_INT, trace_prefetch, "0", 0, 65536, NULL,
          "the measured run's prefetch factor when the trace does not record it; 0: PyTorch's "
          "default 2; a tidy trace's prefetch column says it by itself (a contradicting value "
          "is refused)"),
    CFG_K("trace", "persistent_workers", CFG_BOOL, trace_persistent, "false", 0, 0, NULL,
          "the measured run kept its workers across epochs (persistent_workers=True): its "
          "start-up is estimated from epoch 0 only and paid once; a tidy trace's persistent "
          "column says it by itself (a contradicting value is refused)"),
    CFG_K("trace", "cores", CFG_INT, trace_cores, "0", 0, 1 << 24, NULL,
          "the cores per node of the machine the trace was captured on: mode = model finds the "
          "CPU contention its durations were measured under on these, whatever [cluster] cores "
          "asks (docs/model.md 6); 0: a capture folder's meta.json cpu_cores, else [cluster] "
          "cores"),
    CFG_K("align", "fetch", CFG_ALIGNS, fetch_align, "avg, min, none", 0, 0, NULL,
          "fetch-duration alignment across GPUs per batch: a list of avg, min, none"),
    CFG_K("align", "start", CFG_ALIGNS, start_align, "avg, min, none", 0, 0, NULL,
          "fetch-start alignment across GPUs per batch: a list of avg (midpoint), min, none"),
    CFG_K("report", "warmup", CFG_INT, warmup, "11", 0, CFG_BIG, NULL,
          "leading batches of each epoch left out of the means (11 = the notebook's Index "
          "number <= 10)"),
    CFG_K("report", "delay_threshold", CFG_DOUBLE, delay_threshold, "0.030", 0, CFG_DUR, NULL,
          "seconds; iterations whose delay exceeds it count in effective_delay_pct"),
    CFG_K("report", "samples", CFG_INT, samples, "0", 0, CFG_BIG, NULL,
          "samples per batch per GPU for throughput (0: from the trace, or report batches)"),
    CFG_K("report", "per_rank", CFG_ENUM, per_rank, "auto", 0, 0, "auto|true|false",
          "write ranks.csv (epoch,batch,rank,stall_s) beside iterations.csv; auto: up to 64 "
          "ranks"),
    CFG_K("replay", "lag", CFG_ENUM, lag, "measured", 0, 0, "none|measured",
          "measured: replay each batch's measured delay between fetch end and delivery"),
    CFG_K("replay", "stall_floor", CFG_DOUBLE, stall_floor, "0.001", 0, CFG_DUR, NULL,
          "seconds; a measured stall above it means the loop waited for that batch's data"),
    CFG_K("loader", "workers", CFG_INT, workers, "4", 0, STALL_LIMIT_WORKERS, NULL,
          "DataLoader workers per GPU (0: loading in the training process)"),
    CFG_K("loader", "prefetch_factor", CFG_INT, prefetch_factor, "2", 1, STALL_LIMIT_PREFETCH, NULL,
          "batches each worker may hold in flight"),
    CFG_K("loader", "in_order", CFG_BOOL, in_order, "true", 0, 0, NULL,
          "deliver batches in index order (PyTorch's default)"),
    CFG_K("loader", "pin_memory_s", CFG_DOUBLE, pin_memory_s, "0", 0, CFG_DUR, NULL,
          "seconds the pin-memory thread spends per batch (0: pin_memory off)"),
    CFG_K("loader", "persistent_workers", CFG_BOOL, persistent_workers, "false", 0, 0, NULL,
          "keep workers alive across epochs (no start-up cost after the first)"),
    CFG_K("loader", "drop_last", CFG_BOOL, drop_last, "false", 0, 0, NULL,
          "drop each rank's last incomplete batch (strong scaling: batches per rank = "
          "floor instead of ceil of its samples / batch size; refused where no rank's share "
          "ends in a partial batch)"),
    CFG_K("loader", "startup_s", CFG_DOUBLE, startup_s, "0", 0, CFG_DUR, NULL,
          "seconds for a worker to start before its first fetch (from a trace: its own, x the "
          "what-if's worker processes per node over the trace's)"),
    CFG_K("loader", "handover_s", CFG_DOUBLE, handover_s, "0", 0, CFG_DUR, NULL,
          "seconds to hand a ready batch to the loop (result queue, unpickling)"),
    CFG_K("cluster", "gpus", CFG_INT, gpus, "0", 0, STALL_LIMIT_RANKS, NULL,
          "GPUs (DDP ranks); 0: as many as the trace has"),
    CFG_K("cluster", "gpus_per_node", CFG_INT, gpus_per_node, "0", 0, STALL_LIMIT_RANKS, NULL,
          "GPUs per node; 0: the trace's layout (its GPUs on one node), 8 without a trace"),
    CFG_K("cluster", "scaling", CFG_ENUM, scaling, "strong", 0, 0, "strong|weak",
          "what more or fewer GPUs than the trace's do: strong splits the trace's dataset "
          "(each rank gets ceil(samples / GPUs), as DistributedSampler), weak keeps the "
          "batches per rank (more data)"),
    CFG_K("cluster", "cores", CFG_INT, cores, "0", 0, 1 << 24, NULL,
          "host CPU cores per node shared by the fetches (0: none shared, durations as measured "
          "or drawn, waits for a core included; a trace with CPU columns: its cores, shared by "
          "all it measured)"),
    CFG_K("cluster", "cpu_waits_out", CFG_DOUBLE, cpu_waits_out, "-1", -1, 1, NULL,
          "a trace with CPU columns: the share of its measured waits for a core taken out of its "
          "durations (1: all, 0: none); -1: the share with which the trace's own run, "
          "simulated, gives its mean epoch back"),
    CFG_K("fetch", "cpu_share", CFG_DOUBLE, cpu_share, "1", 0, 1, NULL,
          "fraction of a fetch that is CPU work (the rest is waiting, e.g. I/O)"),
    CFG_K("fetch", "scale", CFG_DOUBLE, fetch_dist.scale, "1", 0, STALL_LIMIT_SCALE, NULL,
          "multiplies every fetch duration (0.5: loading twice as fast)"),
    CFG_K("fetch", "resample", CFG_ENUM, resample, "none", 0, 0, "none|bootstrap|lognormal|gamma",
          "how to draw durations beyond the measured ranks or batches"),
    CFG_K("fetch", "dist", CFG_ENUM, fetch_dist.kind, "constant", 0, 0,
          "lognormal|gamma|normal|constant", "fetch duration distribution without a trace"),
    CFG_K("fetch", "mean_s", CFG_DOUBLE, fetch_dist.mean_s, "0", 0, CFG_DUR, NULL,
          "mean fetch duration in seconds (without a trace)"),
    CFG_K("fetch", "sigma", CFG_DOUBLE, fetch_dist.sigma, "0", 0, 10, NULL,
          "lognormal: standard deviation of log(duration)"),
    CFG_K("fetch", "sd_s", CFG_DOUBLE, fetch_dist.sd_s, "0", 0, CFG_DUR, NULL,
          "gamma, normal: standard deviation in seconds"),
    CFG_K("compute", "cpu_share", CFG_DOUBLE, compute_cpu_share, "0", 0, 1, NULL,
          "fraction of compute that is CPU work on the node's cores, shared with the fetches "
          "(1: training on the CPU; 0: on a GPU)"),
    CFG_K("compute", "dist", CFG_ENUM, compute_dist.kind, "constant", 0, 0,
          "lognormal|gamma|normal|constant", "compute duration distribution without a trace"),
    CFG_K("compute", "mean_s", CFG_DOUBLE, compute_dist.mean_s, "0", 0, CFG_DUR, NULL,
          "mean forward+backward time in seconds (without a trace)"),
    CFG_K("compute", "sigma", CFG_DOUBLE, compute_dist.sigma, "0", 0, 10, NULL,
          "lognormal: standard deviation of log(duration)"),
    CFG_K("compute", "sd_s", CFG_DOUBLE, compute_dist.sd_s, "0", 0, CFG_DUR, NULL,
          "gamma, normal: standard deviation in seconds"),
    CFG_K("compute", "scale", CFG_DOUBLE, compute_dist.scale, "1", 0, STALL_LIMIT_SCALE, NULL,
          "multiplies every compute duration (0.5: a GPU twice as fast)"),
    CFG_K("storage", "bandwidth_mb_s", CFG_DOUBLE, bandwidth_mb_s, "0", 0, CFG_BIG, NULL,
          "shared read bandwidth per node in MB/s (0: unlimited); with the tier model each "
          "node's link to the store"),
    CFG_K("storage", "batch_mb", CFG_DOUBLE, batch_mb, "0", 0, CFG_BIG, NULL,
          "MB read from storage per batch (0: a tidy trace's bytes column); a measured fetch "
          "already contains its read, so only the time lost to sharing the bandwidth is added"),
    CFG_K("storage", "global_mb_s", CFG_DOUBLE, global_mb_s, "0", 0, CFG_BIG, NULL,
          "tier model: read bandwidth in MB/s shared by all nodes (a parallel file system, an "
          "object store; 0: unlimited), beside bandwidth_mb_s, each node's link"),
    CFG_K("storage", "latency_ms", CFG_DOUBLE, latency_ms, "0", 0, CFG_DUR * 1e3, NULL,
          "tier model: ms per request that misses the node's cache"),
    CFG_K("storage", "latency", CFG_ENUM, latency_dist, "exponential", 0, 0, "exponential|constant",
          "tier model: how a missed request's latency_ms is drawn: exponential with that mean, "
          "or constant (a store that answers in a fixed time, as tools/slowstore.py)"),
    CFG_K("storage", "queue", CFG_ENUM, queue, "fair", 0, 0, "fair|fifo",
          "tier model: how the store serves the transfers in flight: fair: they share the "
          "bandwidth (max-min); fifo: one at a time at the full bandwidth, in arrival order (a "
          "token bucket, as tools/slowstore.py; only one of bandwidth_mb_s, global_mb_s)"),
    CFG_K("storage", "requests_per_batch", CFG_DOUBLE, requests_per_batch, "0", 0, 1e6, NULL,
          "tier model: requests a batch makes (0: one per sample, the trace's samples or "
          "[report] samples, else 1)"),
    CFG_K("storage", "cache_mb", CFG_DOUBLE, cache_mb, "0", 0, CFG_BIG, NULL,
          "tier model: node memory given to the page cache, MB; it keeps what it admitted "
          "(docs/model.md 2.3)"),
    CFG_K("storage", "dataset_mb", CFG_DOUBLE, dataset_mb, "0", 0, CFG_BIG, NULL,
          "tier model: dataset size in MB (0: batch_mb x batches per GPU x GPUs, what an epoch "
          "reads)"),
    CFG_K("storage", "layout", CFG_ENUM, layout, "replicated", 0, 0, "replicated|partitioned",
          "tier model: replicated: every node's cache sees the whole dataset (the sampler "
          "reshuffles across nodes each epoch); partitioned: each node reads its own shard"),
    CFG_K("storage", "cached_start_mb", CFG_DOUBLE, cached_start_mb, "0", 0, CFG_BIG, NULL,
          "tier model: MB of each node's share of the dataset already in its cache when epoch 0 "
          "starts (0: a cold start)"),
    CFG_K("storage", "admit_ms", CFG_DOUBLE, admit_ms, "0", 0, CFG_DUR * 1e3, NULL,
          "tier model: ms a worker spends writing each request it admits to the node's cache (a "
          "cache of files, as tools/train_example.py --http; needs cache_mb > 0; 0: free)"),
    CFG_K("storage", "trace_cache_mb", CFG_DOUBLE, trace_cache_mb, "0", 0, CFG_BIG, NULL,
          "tier model: the cache the trace's run had, MB per node, started cold: the measured "
          "read is fitted to its misses per epoch (not given: the fastest epoch read only hits; "
          "with trace_mb_s or trace_latency_ms: that run's cache, 0 when not given)"),
    CFG_K("storage", "trace_mb_s", CFG_DOUBLE, trace_mb_s, "0", 0, CFG_BIG, NULL,
          "tier model: the link the trace's run read from, MB/s per node (0: unlimited): the "
          "measured read is found by simulating that run at that storage (with trace_latency_ms "
          "and trace_cache_mb, default 0: every read missed; docs/model.md 2.3)"),
    CFG_K("storage", "trace_latency_ms", CFG_DOUBLE, trace_latency_ms, "0", 0, CFG_DUR * 1e3, NULL,
          "tier model: ms per request of the trace's run that missed its cache (with trace_mb_s)"),
    CFG_K("ddp", "allreduce_s", CFG_DOUBLE, allreduce_s, "0", 0, CFG_DUR, NULL,
          "seconds per iteration after the last GPU's backward: the whole tail A(k), exposed "
          "all-reduce + optimizer step + loop bookkeeping up to the next request; replaces the "
          "measured tail whole (a trace does not separate the all-reduce)"),
    CFG_K("ddp", "bucket_mb", CFG_DOUBLE, bucket_mb, "0", 0, CFG_BIG, NULL,
          "ring model: MB in the last gradient bucket (exposed after backward)"),
    CFG_K("ddp", "bandwidth_gb_s", CFG_DOUBLE, bandwidth_gb_s, "0", 0, CFG_BIG, NULL,
          "ring model: link bandwidth in GB/s"),
    CFG_K("ddp", "latency_us", CFG_DOUBLE, latency_us, "0", 0, CFG_DUR, NULL,
          "ring model: per-step latency in microseconds"),
    CFG_K("ddp", "accumulation", CFG_INT, accumulation, "1", 1, 4096, NULL,
          "gradient accumulation: iterations per gradient synchronisation (DDP no_sync for the "
          "others); the ranks meet at the barrier and pay the tail every accumulation-th "
          "iteration and at the epoch's end"),
    CFG_K("run", "batches", CFG_INT, batches, "0", 0, (double)STALL_LIMIT_BATCHES, NULL,
          "batches per GPU per epoch (0: as in the trace)"),
    CFG_K("run", "epochs", CFG_INT, epochs, "0", 0, STALL_LIMIT_EPOCHS, NULL,
          "epochs to simulate (0: as in the trace, or 1)"),
    CFG_K("run", "seed", CFG_INT, seed, "1", 0, CFG_BIG, NULL,
          "random seed for resampling and distributions"),
    CFG_K("run", "replications", CFG_INT, replications, "1", 1, 10000, NULL,
          "runs with seeds seed .. seed+N-1: mean and 95% interval of epoch time, throughput "
          "and stall share (only for what-ifs that draw durations)"),
    CFG_K("checkpoint", "every_iterations", CFG_INT, ckpt_every, "0", 0, CFG_BIG, NULL,
          "write a checkpoint after every N-th iteration, counted over the run (0: none, or "
          "every_s; with a tidy trace that records checkpoints: its interval)"),
    CFG_K("checkpoint", "every_s", CFG_DOUBLE, ckpt_every_s, "0", 0, CFG_DUR, NULL,
          "write a checkpoint at the first iteration ending at least this many seconds after "
          "the last checkpoint began (0: by every_iterations)"),
    CFG_K("checkpoint", "mb_per_rank", CFG_DOUBLE, ckpt_mb, "0", 0, CFG_BIG, NULL,
          "MB each rank writes per checkpoint (0: a tidy trace's ckpt_bytes)"),
    CFG_K("checkpoint", "bandwidth_mb_s", CFG_DOUBLE, ckpt_mb_s, "0", 0, CFG_BIG, NULL,
          "write bandwidth per node in MB/s, shared by its ranks (0: a tidy trace's measured "
          "bytes / write time)"),
    CFG_K("checkpoint", "mode", CFG_ENUM, ckpt_mode, "sync", 0, 0, "sync|async|off",
          "sync: the step waits for the write; async: it waits for a snapshot copy (and a "
          "previous write still under way), the write runs in the background; off: no "
          "checkpoints, not even those a tidy trace records"),
    CFG_K("checkpoint", "snapshot_mb_s", CFG_DOUBLE, ckpt_snapshot_mb_s, "0", 0, CFG_BIG, NULL,
          "async: bandwidth of the snapshot copy per rank in MB/s (0: instantaneous)"),
    CFG_K("checkpoint", "first_extra_s", CFG_DOUBLE, ckpt_first_extra_s, "0", 0, CFG_DUR, NULL,
          "the run's first checkpoint takes this much longer to write (a first save's set-up; "
          "0, or a tidy trace's first checkpoint above the mean of its later ones)"),
    CFG_K("checkpoint", "target", CFG_ENUM, ckpt_target, "local", 0, 0, "local|store",
          "local: the write takes bandwidth_mb_s alone; store: each rank's write goes to the "
          "storage tiers' store, sharing its node's link (and the global bandwidth) with the "
          "reads (needs the tiers; bandwidth_mb_s is then refused)"),
    CFG_K("ranks", "slow", CFG_INT, slow_ranks, "0", 0, STALL_LIMIT_RANKS, NULL,
          "how many ranks (the last ones; nodes with unit = node) run at the factors below"),
    CFG_K("ranks", "unit", CFG_ENUM, slow_unit, "rank", 0, 0, "rank|node",
          "what slow counts: ranks, or nodes of [cluster] gpus_per_node ranks"),
    CFG_K("ranks", "compute_factor", CFG_DOUBLE, slow_compute_factor, "1", 1e-6, 1e6, NULL,
          "multiplies the slow ranks' compute durations (2: half as fast)"),
    CFG_K("ranks", "fetch_factor", CFG_DOUBLE, slow_fetch_factor, "1", 1e-6, 1e6, NULL,
          "multiplies the slow ranks' fetch durations"),
    CFG_K("ranks", "late_start", CFG_ENUM, late_start, "trace", 0, 0, "trace|none",
          "ranks that began an epoch apart in the trace (docs/model.md 2.4): trace, each begins "
          "the trace's epochs as late as it did (at the trace's GPU count); none, every rank "
          "begins every epoch together (what an aligned launch would give)"),
    CFG_K("straggler", "fraction", CFG_DOUBLE, straggler_fraction, "0", 0, 1, NULL,
          "probability that a rank straggles in a window of iterations, drawn per rank and "
          "window from [run] seed (0: none)"),
    CFG_K("straggler", "factor", CFG_DOUBLE, straggler_factor, "1", 1e-6, 1e6, NULL,
          "multiplies a straggling rank's compute durations in its window"),
    CFG_K("straggler", "iterations", CFG_INT, straggler_iters, "1", 1, CFG_BIG, NULL,
          "length of a straggler window in iterations (windows restart every epoch)"),
};
const size_t cfg_nkeys = sizeof cfg_keys / sizeof cfg_keys[0];

_Static_assert(sizeof cfg_keys / sizeof cfg_keys[0] <= sizeof(((stall_config *)0)->given),
               "grow stall_config.given");

/* cfg_find's index: (section, key) hashed (FNV-1a) into an open-addressed
 * table of key numbers + 1, built once. Every stall_config_given goes
 * through it (a sweep point asks some hundreds of times), where a scan of
 * the table with strcmp cost a point about 1% of its CPU. */
#define CFG_SLOTS 1024u
_Static_assert(2 * (sizeof cfg_keys / sizeof cfg_keys[0]) <= CFG_SLOTS, "grow CFG_SLOTS");
static uint16_t cfg_slot[CFG_SLOTS];
static pthread_once_t cfg_slot_once = PTHREAD_ONCE_INIT;

static uint32_t cfg_hash(const char *section, const char *key)
{
    uint32_t h = 2166136261u;
    for (const char *p = section; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    h = (h ^ (unsigned char)'.') * 16777619u;
    for (const char *p = key; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    return h;
}

static void cfg_slot_build(void)
{
    for (size_t i = 0; i < cfg_nkeys; i++) {
        uint32_t j = cfg_hash(cfg_keys[i].section, cfg_keys[i].key) & (CFG_SLOTS - 1);
        bool dup = false;
        for (; cfg_slot[j] && !dup; j = (j + 1) & (CFG_SLOTS - 1)) {
            const cfg_key *k = &cfg_keys[cfg_slot[j] - 1];
            dup = strcmp(k->section, cfg_keys[i].section) == 0 &&
                  strcmp(k->key, cfg_keys[i].key) == 0;
        }
        if (!dup) /* the first of equal names wins, as the scan found it */
            cfg_slot[j] = (uint16_t)(i + 1);
    }
}

const cfg_key *cfg_find(const char *section, const char *key, size_t *idx)
{
    pthread_once(&cfg_slot_once, cfg_slot_build);
    for (uint32_t j = cfg_hash(section, key) & (CFG_SLOTS - 1); cfg_slot[j];
         j = (j + 1) & (CFG_SLOTS - 1)) {
        const cfg_key *k = &cfg_keys[cfg_slot[j] - 1];
        if (strcmp(k->key, key) == 0 && strcmp(k->section, section) == 0) {
            if (idx)
                *idx = (size_t)(cfg_slot[j] - 1);
            return k;
        }
    }
    return NULL;
}

bool cfg_section_known(const char *section)
{
    for (size_t i = 0; i < cfg_nkeys; i++)
        if (strcmp(cfg_keys[i].section, section) == 0)
            return true;
    return false;
}

/* Edit distance (insertions, deletions, substitutions, swaps of neighbours;
 * letters compared case-blind), capped at 9. */
static int cfg_distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > 63 || nb > 63)
        return 9;
    int d[64][64];
    for (size_t i = 0; i <= na; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            int ca = a[i - 1], cb = b[j - 1];
            if (ca >= 'A' && ca <= 'Z')
                ca += 'a' - 'A';
            if (cb >= 'A' && cb <= 'Z')
                cb += 'a' - 'A';
            int v = d[i - 1][j - 1] + (ca != cb);
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[na][nb] > 9 ? 9 : d[na][nb];
}

/* Close enough to be a misspelling of a name this long. */
static bool cfg_near(int dist, const char *name)
{
    size_t n = strlen(name);
    return dist <= (n <= 3 ? 0 : n <= 5 ? 1 : 2);
}

void cfg_suggest(const char *section, const char *key, char *buf, size_t n)
{
    static const char *const extra_sections[] = {"sweep", "plan"};
    buf[0] = '\0';
    const cfg_key *best = NULL;
    int bd = 10;
    bool known = cfg_section_known(section);
    if (known) {
        /* The nearest key of the same section, else the same key in
         * another section, else the nearest key anywhere. */
        for (size_t i = 0; i < cfg_nkeys; i++) {
            int d =
                strcmp(cfg_keys[i].section, section) == 0 ? cfg_distance(key, cfg_keys[i].key) : 10;
            if (d < bd && cfg_near(d, cfg_keys[i].key))
                best = &cfg_keys[i], bd = d;
        }
        /* Else the keys of the section of which key is whole words
         * (prefetch: prefetch_factor; mb_s: trace_mb_s or bandwidth_mb_s). */
        size_t kn = strlen(key), len = 0;
        for (size_t i = 0; i < cfg_nkeys && !best && kn >= 3; i++) {
            const char *k = cfg_keys[i].key, *at = strstr(k, key);
            if (strcmp(cfg_keys[i].section, section) == 0 && at && (at == k || at[-1] == '_') &&
                (at[kn] == '\0' || at[kn] == '_') && len + strlen(k) + 24 < n)
                len += (size_t)snprintf(buf + len, n - len, "%s%s",
                                        len ? " or " : " (did you mean ", k);
        }
        if (len) {
            snprintf(buf + len, n - len, "?)");
            return;
        }
        if (best) {
            snprintf(buf, n, " (did you mean %s?)", best->key);
            return;
        }
    }
    /* The same key in other sections: every one of them. */
    size_t len = 0;
    for (size_t i = 0; i < cfg_nkeys; i++)
        if (strcmp(cfg_keys[i].key, key) == 0 &&
            (known || section[0] == '\0' ||
             cfg_near(cfg_distance(section, cfg_keys[i].section), cfg_keys[i].section)) &&
            len + 64 < n) {
            len += (size_t)snprintf(buf + len, n - len, "%s[%s] %s",
                                    len ? " or " : " (did you mean ", cfg_keys[i].section, key);
            best = &cfg_keys[i];
        }
    if (best) {
        snprintf(buf + len, n - len, "?)");
        return;
    }
    if (!best && !known) {
        /* The nearest section; with the key, when that section has it. */
        const char *sec = NULL;
        for (size_t i = 0; i < cfg_nkeys; i++) {
            int d = cfg_distance(section, cfg_keys[i].section);
            if (d < bd && cfg_near(d, cfg_keys[i].section))
                sec = cfg_keys[i].section, bd = d;
        }
        for (size_t i = 0; i < 2; i++) {
            int d = cfg_distance(section, extra_sections[i]);
            if (d > 0 && d < bd && cfg_near(d, extra_sections[i]))
                sec = extra_sections[i], bd = d;
        }
        if (sec) {
            const cfg_key *k = cfg_find(sec, key, NULL);
            if (k)
                snprintf(buf, n, " (did you mean [%s] %s?)", sec, key);
            else
                snprintf(buf, n, " (did you mean [%s]?)", sec);
        }
        return;
    }
    if (!best) {
        bd = 10;
        for (size_t i = 0; i < cfg_nkeys; i++) {
            int d = cfg_distance(key, cfg_keys[i].key);
            if (d < bd && cfg_near(d, cfg_keys[i].key))
                best = &cfg_keys[i], bd = d;
        }
    }
    if (best)
        snprintf(buf, n, " (did you mean [%s] %s?)", best->section, best->key);
}

const char *const stall_plan_keys[] = {
    "stall_target",      "efficiency",     "max_workers",       "max_gpus",
    "target_throughput", "target_epoch_s", "ckpt_stall_budget", NULL};

void stall_config_extra_suggest(const char *section, const char *key, char *buf, size_t n)
{
    buf[0] = '\0';
    if (strcmp(section, "plan") != 0)
        return;
    const char *best = NULL;
    int bd = 10;
    for (size_t i = 0; stall_plan_keys[i]; i++) {
        int d = cfg_distance(key, stall_plan_keys[i]);
        if (d == 0)
            return;
        if (d < bd && cfg_near(d, stall_plan_keys[i]))
            best = stall_plan_keys[i], bd = d;
    }
    if (best)
        snprintf(buf, n, " (did you mean %s?)", best);
    else {
        size_t len = (size_t)snprintf(buf, n, " (the [plan] keys:");
        for (size_t i = 0; stall_plan_keys[i] && len < n; i++)
            len += (size_t)snprintf(buf + len, n - len, "%s %s", i ? "," : "", stall_plan_keys[i]);
        if (len < n)
            snprintf(buf + len, n - len, ")");
    }
}

void stall_config_help(FILE *f)
{
    const char *section = "";
    for (size_t i = 0; i < cfg_nkeys; i++) {
        const cfg_key *k = &cfg_keys[i];
        if (strcmp(section, k->section) != 0) {
            fprintf(f, "  [%s]\n", k->section);
            section = k->section;
        }
        fprintf(f, "    %-18s default %-14s %s%s%s\n", k->key, k->def[0] ? k->def : "(none)",
                k->help, k->choices ? "; one of " : "", k->choices ? k->choices : "");
    }
}

bool stall_config_tiers(const stall_config *cfg)
{
    static const char *const keys[] = {
        "global_mb_s", "latency_ms",      "requests_per_batch", "cache_mb",   "dataset_mb",
        "layout",      "cached_start_mb", "trace_cache_mb",     "trace_mb_s", "trace_latency_ms"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (stall_config_given(cfg, "storage", keys[i]))
            return true;
    return false;
}

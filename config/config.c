/*
 * config.c - the scenario key table and the generic loader over inih.
 *
 * Every key lives in cfg_keys[]: section, key, type, where it is stored,
 * default (as text, parsed by the same code as user input, so defaults obey
 * the same rules), range and help. Loading is: defaults, then the INI file,
 * then --set overrides; each value is checked when it is set. inih reports
 * the line of the first failing handler call, so the handler keeps the first
 * message and the loader prefixes it with "file:line".
 */
#include "stall/config.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stall/io.h"
#include "stall/limits.h"

typedef enum cfg_type {
    CFG_STR,
    CFG_PATH,
    CFG_INT,
    CFG_DOUBLE,
    CFG_BOOL,
    CFG_ENUM,
    CFG_ALIGNS
} cfg_type;

typedef struct cfg_key {
    const char *section, *key;
    cfg_type type;
    size_t offset, size;
    const char *def;
    double min, max;
    const char *choices; /* CFG_ENUM: "a|b|c", stored as the index */
    const char *help;
} cfg_key;

#define CFG_K(sec, key, type, field, def, min, max, choices, help)                                 \
    {                                                                                              \
        sec, key, type, offsetof(stall_config, field), sizeof(((stall_config *)0)->field), def,    \
            min, max, choices, help                                                                \
    }
#define CFG_BIG 1e18
#define CFG_DUR STALL_LIMIT_DURATION_S

static const cfg_key cfg_keys[] = {
    CFG_K("scenario", "name", CFG_STR, name, "scenario", 0, 0, NULL,
          "name of the scenario; results go to results/<name>/ unless -o is given"),
    CFG_K("scenario", "mode", CFG_ENUM, mode, "replay", 0, 0, "replay|seed|model",
          "replay: event simulation of the measured trace under the alignment policies; "
          "seed: the original notebook's numbers, exactly; model: closed-loop what-if simulation"),
    CFG_K("trace", "format", CFG_ENUM, format, "dsanalyzer", 0, 0, "dsanalyzer|tidy|none",
          "input trace format (none: durations from the [fetch] and [compute] distributions)"),
    CFG_K("trace", "fetch", CFG_PATH, fetch, "", 0, 0, NULL,
          "dsanalyzer: fetch-time CSV (Epoch, Index number, Fetch time (sec)_gpu{i})"),
    CFG_K("trace", "start", CFG_PATH, start, "", 0, 0, NULL,
          "dsanalyzer: fetch-start CSV (Epoch, Index number, Start time_gpu{i})"),
    CFG_K("trace", "perf", CFG_PATH, perf, "", 0, 0, NULL,
          "dsanalyzer: perf CSV (Epoch, Step, GPU, Time, Iteration time (sec), Training stall "
          "time (sec))"),
    CFG_K("trace", "path", CFG_PATH, path, "", 0, 0, NULL, "tidy: the trace CSV"),
    CFG_K("trace", "epoch", CFG_INT, epoch, "1", 0, CFG_BIG, NULL,
          "dsanalyzer: the epoch to replay (the notebook uses 1)"),
    CFG_K("trace", "workers", CFG_INT, trace_workers, "-1", -1, 65536, NULL,
          "the measured run's DataLoader workers per GPU when the trace does not record them "
          "(dsanalyzer; tidy without a workers column); -1: inferred from the fetch starts"),
    CFG_K("trace", "prefetch_factor", CFG_INT, trace_prefetch, "0", 0, 65536, NULL,
          "the measured run's prefetch factor when the trace does not record it; 0: PyTorch's "
          "default 2"),
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
    CFG_K("loader", "startup_s", CFG_DOUBLE, startup_s, "0", 0, CFG_DUR, NULL,
          "seconds for a worker to start before its first fetch"),
    CFG_K("loader", "handover_s", CFG_DOUBLE, handover_s, "0", 0, CFG_DUR, NULL,
          "seconds to hand a ready batch to the loop (result queue, unpickling)"),
    CFG_K("cluster", "gpus", CFG_INT, gpus, "0", 0, STALL_LIMIT_RANKS, NULL,
          "GPUs (DDP ranks); 0: as many as the trace has"),
    CFG_K("cluster", "gpus_per_node", CFG_INT, gpus_per_node, "0", 0, STALL_LIMIT_RANKS, NULL,
          "GPUs per node; 0: the trace's layout (its GPUs on one node), 8 without a trace"),
    CFG_K("cluster", "cores", CFG_INT, cores, "0", 0, 1 << 24, NULL,
          "host CPU cores per node shared by the fetches (0: unlimited)"),
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
          "shared read bandwidth per node in MB/s (0: unlimited)"),
    CFG_K("storage", "batch_mb", CFG_DOUBLE, batch_mb, "0", 0, CFG_BIG, NULL,
          "MB read from storage per batch (0: a tidy trace's bytes column); a measured fetch "
          "already contains its read, so only the time lost to sharing the bandwidth is added"),
    CFG_K("ddp", "allreduce_s", CFG_DOUBLE, allreduce_s, "0", 0, CFG_DUR, NULL,
          "exposed all-reduce + optimizer time per iteration (replaces the measured value)"),
    CFG_K("ddp", "bucket_mb", CFG_DOUBLE, bucket_mb, "0", 0, CFG_BIG, NULL,
          "ring model: MB in the last gradient bucket (exposed after backward)"),
    CFG_K("ddp", "bandwidth_gb_s", CFG_DOUBLE, bandwidth_gb_s, "0", 0, CFG_BIG, NULL,
          "ring model: link bandwidth in GB/s"),
    CFG_K("ddp", "latency_us", CFG_DOUBLE, latency_us, "0", 0, CFG_DUR, NULL,
          "ring model: per-step latency in microseconds"),
    CFG_K("run", "batches", CFG_INT, batches, "0", 0, (double)STALL_LIMIT_BATCHES, NULL,
          "batches per GPU per epoch (0: as in the trace)"),
    CFG_K("run", "epochs", CFG_INT, epochs, "0", 0, STALL_LIMIT_EPOCHS, NULL,
          "epochs to simulate (0: as in the trace, or 1)"),
    CFG_K("run", "seed", CFG_INT, seed, "1", 0, CFG_BIG, NULL,
          "random seed for resampling and distributions"),
    CFG_K("run", "replications", CFG_INT, replications, "1", 1, 10000, NULL,
          "runs with seeds seed .. seed+N-1: mean and 95% interval of epoch time, throughput "
          "and stall share (only for what-ifs that draw durations)"),
};
#define CFG_NKEYS (sizeof cfg_keys / sizeof cfg_keys[0])

_Static_assert(CFG_NKEYS <= sizeof(((stall_config *)0)->given), "grow stall_config.given");

static const cfg_key *cfg_find(const char *section, const char *key, size_t *idx)
{
    for (size_t i = 0; i < CFG_NKEYS; i++)
        if (strcmp(cfg_keys[i].section, section) == 0 && strcmp(cfg_keys[i].key, key) == 0) {
            if (idx)
                *idx = i;
            return &cfg_keys[i];
        }
    return NULL;
}

static bool cfg_section_known(const char *section)
{
    for (size_t i = 0; i < CFG_NKEYS; i++)
        if (strcmp(cfg_keys[i].section, section) == 0)
            return true;
    return false;
}

static char *cfg_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* Index of value in "a|b|c", or -1. */
static int cfg_choice(const char *choices, const char *value)
{
    size_t len = strlen(value);
    int i = 0;
    for (const char *p = choices;; i++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, value, n) == 0)
            return i;
        if (!bar)
            return -1;
        p = bar + 1;
    }
}

static int cfg_parse_aligns(const char *value, stall_align_list *out, char *why, size_t whylen)
{
    char buf[128];
    if (strlen(value) >= sizeof buf) {
        snprintf(why, whylen, "list too long");
        return -1;
    }
    strcpy(buf, value);
    stall_align_list l = {0};
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        tok = cfg_trim(tok);
        stall_align a;
        if (stall_align_parse(tok, &a) != 0) {
            snprintf(why, whylen, "unknown policy '%s' (expected avg, min or none)", tok);
            return -1;
        }
        for (int i = 0; i < l.n; i++)
            if (l.v[i] == a) {
                snprintf(why, whylen, "policy '%s' listed twice", tok);
                return -1;
            }
        l.v[l.n++] = a;
    }
    if (l.n == 0) {
        snprintf(why, whylen, "empty list (expected avg, min and/or none)");
        return -1;
    }
    *out = l;
    return 0;
}

/* Values that effective.ini could not give back: control characters (a
 * newline through --set) and an inline comment (white space then ';'). */
static bool cfg_value_unsafe(const char *v, char *why, size_t whylen)
{
    for (const char *p = v; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            snprintf(why, whylen, "control character 0x%02x in the value", (unsigned char)*p);
            return true;
        }
        if (*p == ';' && p > v && (p[-1] == ' ' || p[-1] == '\t')) {
            snprintf(why, whylen, "' ;' in the value (an INI comment starts there)");
            return true;
        }
    }
    return false;
}

/* [scenario] name names a folder under results/: one safe path component. */
static bool cfg_bad_name(const char *v)
{
    if (v[0] == '\0' || v[0] == '.')
        return true;
    for (const char *p = v; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-' || *p == '+'))
            return true;
    return false;
}

/* Parses value for key k into cfg. base: folder for relative paths. */
static int cfg_store(stall_config *cfg, const cfg_key *k, const char *raw, const char *base,
                     char *why, size_t whylen)
{
    char buf[STALL_PATH_MAX];
    if (strlen(raw) >= sizeof buf) {
        snprintf(why, whylen, "value too long");
        return -1;
    }
    strcpy(buf, raw);
    char *v = cfg_trim(buf);
    void *dst = (char *)cfg + k->offset;
    char *end = NULL;
    if (cfg_value_unsafe(v, why, whylen))
        return -1;
    switch (k->type) {
    case CFG_STR:
        if (strlen(v) >= k->size) {
            snprintf(why, whylen, "longer than %zu characters", k->size - 1);
            return -1;
        }
        if (cfg_bad_name(v)) {
            snprintf(why, whylen,
                     "'%s' is not a safe folder name (1 or more of A-Z a-z 0-9 . _ + -, not "
                     "starting with '.')",
                     v);
            return -1;
        }
        strcpy(dst, v);
        return 0;
    case CFG_PATH: {
        char *p = (v[0] == '\0' || v[0] == '/' || !base || !base[0]) ? stall_xstrdup(v)
                                                                     : stall_path_join(base, v);
        int ok = strlen(p) < k->size;
        if (ok)
            strcpy(dst, p);
        else
            snprintf(why, whylen, "path longer than %zu characters", k->size - 1);
        free(p);
        return ok ? 0 : -1;
    }
    case CFG_INT: {
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (v[0] == '\0' || *end != '\0' || errno == ERANGE) {
            snprintf(why, whylen, "not an integer: '%s'", v);
            return -1;
        }
        if ((double)x < k->min || (double)x > k->max) {
            snprintf(why, whylen, "%lld is out of range [%.0f, %.0f]", x, k->min, k->max);
            return -1;
        }
        *(int64_t *)dst = x;
        return 0;
    }
    case CFG_DOUBLE: {
        errno = 0;
        double x = strtod(v, &end);
        if (v[0] == '\0' || *end != '\0' || errno == ERANGE || !isfinite(x)) {
            snprintf(why, whylen, "not a finite number: '%s'", v);
            return -1;
        }
        if (x < k->min || x > k->max) {
            snprintf(why, whylen, "%g is out of range [%g, %g]", x, k->min, k->max);
            return -1;
        }
        *(double *)dst = x;
        return 0;
    }
    case CFG_BOOL: {
        int t = cfg_choice("true|yes|on|1", v), f = cfg_choice("false|no|off|0", v);
        if (t < 0 && f < 0) {
            snprintf(why, whylen, "not a boolean: '%s' (expected true or false)", v);
            return -1;
        }
        *(bool *)dst = t >= 0;
        return 0;
    }
    case CFG_ENUM: {
        int i = cfg_choice(k->choices, v);
        if (i < 0) {
            snprintf(why, whylen, "unknown value '%s' (expected one of %s)", v, k->choices);
            return -1;
        }
        *(int *)dst = i;
        return 0;
    }
    case CFG_ALIGNS:
        return cfg_parse_aligns(v, dst, why, whylen);
    }
    snprintf(why, whylen, "internal: unknown key type");
    return -1;
}

void stall_config_defaults(stall_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    char why[256];
    for (size_t i = 0; i < CFG_NKEYS; i++)
        if (cfg_store(cfg, &cfg_keys[i], cfg_keys[i].def, NULL, why, sizeof why) != 0) {
            fprintf(stderr, "stallsim: bad default for [%s] %s: %s\n", cfg_keys[i].section,
                    cfg_keys[i].key, why);
            abort();
        }
}

int stall_config_apply(stall_config *cfg, const char *section, const char *key, const char *value,
                       const char *where, stall_err *err)
{
    size_t idx;
    const cfg_key *k = cfg_find(section, key, &idx);
    if (!k) {
        if (!cfg_section_known(section))
            return stall_err_set(err, STALL_ECONFIG, "%s: unknown section [%s] (key %s)", where,
                                 section, key);
        return stall_err_set(err, STALL_ECONFIG, "%s: unknown key [%s] %s", where, section, key);
    }
    char why[384];
    if (cfg_store(cfg, k, value, cfg->ini_dir, why, sizeof why) != 0)
        return stall_err_set(err, STALL_ECONFIG, "%s: [%s] %s: %s", where, section, key, why);
    cfg->given[idx] = 1;
    return 0;
}

/* inih reads lines into a buffer of its compile-time INI_MAX_LINE and would
 * parse the rest of a longer line as a line of its own; this reader stops
 * the parse at such a line instead (as if at end of file) and remembers it. */
typedef struct cfg_reader {
    FILE *f;
    int line, max;
    bool too_long;
} cfg_reader;

typedef struct cfg_load_ctx {
    stall_config *cfg;
    const cfg_reader *rd;
    int key_line[sizeof(((stall_config *)0)->given)]; /* where each key was set; 0: not */
    stall_err first;                                  /* the first failure; code 0 while none */
} cfg_load_ctx;

static int cfg_ini_handler(void *user, const char *section, const char *name, const char *value)
{
    cfg_load_ctx *ctx = user;
    stall_err e = {0};
    size_t idx;
    if (strcmp(section, "sweep") == 0 || strcmp(section, "plan") == 0) {
        /* Not scenario keys: kept as text for stallsim sweep and plan. */
        if (stall_config_extra_add(ctx->cfg, section, name, value, false, "", &e) != 0) {
            if (ctx->first.code == 0)
                ctx->first = e;
            return 0;
        }
        return 1;
    }
    if (cfg_find(section, name, &idx) && ctx->key_line[idx]) {
        stall_err_set(&e, STALL_ECONFIG, ": [%s] %s: given twice (first on line %d)", section, name,
                      ctx->key_line[idx]);
        if (ctx->first.code == 0)
            ctx->first = e;
        return 0;
    }
    if (stall_config_apply(ctx->cfg, section, name, value, "", &e) != 0) {
        if (ctx->first.code == 0)
            ctx->first = e;
        return 0;
    }
    if (cfg_find(section, name, &idx)) {
        ctx->key_line[idx] = ctx->rd->line;
        ctx->cfg->given_line[idx] = ctx->rd->line;
    }
    return 1;
}

static char *cfg_read_line(char *str, int num, void *stream)
{
    cfg_reader *rd = stream;
    if (rd->too_long || !fgets(str, num, rd->f))
        return NULL;
    rd->line++;
    size_t n = strlen(str);
    if ((int)n == num - 1 && str[n - 1] != '\n' && !feof(rd->f)) {
        rd->too_long = true;
        rd->max = num;
        return NULL;
    }
    return str;
}

/* What inih's line reader cannot be trusted with, checked on the raw bytes
 * before it parses: a NUL byte (ends the line for fgets, hiding the rest),
 * an indented line (inih continues the previous value with it) and a
 * section given twice. */
static int cfg_prescan(FILE *f, const char *path, stall_err *err)
{
    enum { NSEC = 64 };
    char secs[NSEC][64];
    int sec_line[NSEC], nsec = 0;
    char head[80];
    int line = 1, col = 0, c;
    size_t nhead = 0;
    bool started = false, blank_prefix = false;
    unsigned char bom[3];
    if (!(fread(bom, 1, 3, f) == 3 && bom[0] == 0xef && bom[1] == 0xbb && bom[2] == 0xbf))
        rewind(f); /* a UTF-8 byte order mark is skipped, as inih does */
    while ((c = getc(f)) != EOF) {
        col++;
        if (c == '\0')
            return stall_err_set(err, STALL_ECONFIG, "%s:%d:%d: NUL byte", path, line, col);
        if (c == '\n') {
            line++;
            col = 0;
            nhead = 0;
            started = blank_prefix = false;
            continue;
        }
        if (!started) {
            if (c == ' ' || c == '\t' || c == '\r') {
                blank_prefix |= c != '\r';
                continue;
            }
            started = true;
            if (blank_prefix && c != ';' && c != '#')
                return stall_err_set(err, STALL_ECONFIG,
                                     "%s:%d:%d: indented line (the INI reader would append it to "
                                     "the previous value); remove the leading blanks",
                                     path, line, col);
        }
        if (nhead >= sizeof head - 1)
            continue;
        head[nhead++] = (char)c;
        if (head[0] == '[' && c == ']') {
            head[nhead] = '\0';
            head[nhead - 1] = '\0';
            char *name = cfg_trim(head + 1);
            for (int i = 0; i < nsec; i++)
                if (strcmp(secs[i], name) == 0)
                    return stall_err_set(err, STALL_ECONFIG,
                                         "%s:%d:1: section [%s] given twice (first on line %d)",
                                         path, line, name, sec_line[i]);
            if (nsec < NSEC && strlen(name) < sizeof secs[0]) {
                strcpy(secs[nsec], name);
                sec_line[nsec++] = line;
            }
            nhead = sizeof head; /* nothing more to learn from this line */
        }
    }
    if (ferror(f))
        return stall_err_set(err, STALL_EIO, "%s: cannot read", path);
    rewind(f);
    return 0;
}

/* Parses INI text from f over cfg; name is the file name for messages. */
static int cfg_load_stream(stall_config *cfg, FILE *f, const char *name, stall_err *err)
{
    int rc = cfg_prescan(f, name, err);
    if (rc)
        return rc;
    cfg_reader rd = {.f = f};
    cfg_load_ctx ctx = {.cfg = cfg, .rd = &rd};
    int line = ini_parse_stream(cfg_read_line, &rd, cfg_ini_handler, &ctx);
    if (rd.too_long && (line == 0 || line > rd.line))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s:%d: line longer than %d characters (inih's limit; use a shorter "
                             "path, e.g. relative to the INI file)",
                             name, rd.line, rd.max - 2);
    if (line == 0)
        return 0;
    if (line < 0)
        return stall_err_set(err, STALL_EIO, "%s: cannot read", name);
    if (ctx.first.code == 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s:%d: syntax error (expected [section] or key = value)", name, line);
    /* The stored message starts with ": " (empty origin); prefix file:line. */
    return stall_err_set(err, STALL_ECONFIG, "%s:%d%s", name, line, ctx.first.msg);
}

int stall_config_load(stall_config *cfg, const char *ini_path, stall_err *err)
{
    if (strlen(ini_path) >= sizeof cfg->ini_path)
        return stall_err_set(err, STALL_EIO, "%s: path too long", ini_path);
    FILE *f = fopen(ini_path, "r");
    if (!f)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", ini_path, strerror(errno));
    strcpy(cfg->ini_path, ini_path);
    char *dir = stall_path_dir(ini_path);
    snprintf(cfg->ini_dir, sizeof cfg->ini_dir, "%s", dir);
    free(dir);
    int rc = cfg_load_stream(cfg, f, ini_path, err);
    fclose(f);
    return rc;
}

/* Removes the comment lines of INI text in place; returns the new length. */
static size_t cfg_drop_comments(char *text)
{
    char *w = text;
    for (char *r = text; *r;) {
        size_t n = strcspn(r, "\n");
        bool keep = r[0] != ';';
        if (keep) {
            memmove(w, r, n);
            w += n;
            if (r[n] == '\n')
                *w++ = '\n';
        }
        r += n + (r[n] == '\n');
    }
    *w = '\0';
    return (size_t)(w - text);
}

int stall_config_roundtrip(const stall_config *cfg, const char *base_dir, stall_err *err)
{
    char *text = NULL, *again = NULL;
    size_t ntext = 0, nagain = 0;
    FILE *f = open_memstream(&text, &ntext);
    if (!f)
        return stall_err_set(err, STALL_ENOMEM, "effective.ini: cannot write to memory");
    stall_config_write(cfg, base_dir, f);
    fclose(f);
    stall_config *back = stall_xmalloc(sizeof *back);
    stall_config_defaults(back);
    snprintf(back->ini_dir, sizeof back->ini_dir, "%s", base_dir ? base_dir : "");
    stall_err e = {0};
    int rc = 0;
    f = fmemopen(text, ntext, "r");
    if (!f || cfg_load_stream(back, f, "effective.ini", &e) != 0) {
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: the configuration cannot be written to effective.ini and read "
                           "back: %s",
                           cfg->ini_path[0] ? cfg->ini_path : "config", f ? e.msg : "fmemopen");
    }
    if (f)
        fclose(f);
    if (rc == 0) {
        f = open_memstream(&again, &nagain);
        if (!f) {
            rc = stall_err_set(err, STALL_ENOMEM, "effective.ini: cannot write to memory");
        } else {
            stall_config_write(back, base_dir, f);
            fclose(f);
        }
    }
    /* The given keys must come back, as written; the others are comments
     * (defaults, or values set by a program rather than the INI). */
    if (rc == 0)
        ntext = cfg_drop_comments(text);
    if (rc == 0)
        nagain = cfg_drop_comments(again);
    /* given: 1 in a file, 2 with --set; both read back as 1. */
    bool same_given = true;
    for (size_t k = 0; k < sizeof cfg->given; k++)
        same_given &= (back->given[k] != 0) == (cfg->given[k] != 0);
    if (rc == 0 && (nagain != ntext || memcmp(text, again, ntext) != 0 || !same_given)) {
        size_t i = 0;
        while (i < ntext && i < nagain && text[i] == again[i])
            i++;
        size_t ls = i;
        while (ls > 0 && text[ls - 1] != '\n')
            ls--;
        size_t le = strcspn(text + ls, "\n");
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: effective.ini would not reproduce this run (the line '%.*s' reads "
                           "back differently)",
                           cfg->ini_path[0] ? cfg->ini_path : "config", (int)(le > 200 ? 200 : le),
                           text + ls);
    }
    free(text);
    free(again);
    free(back);
    return rc;
}

int stall_config_set(stall_config *cfg, const char *assignment, stall_err *err)
{
    const char *eq = strchr(assignment, '=');
    const char *dot = strchr(assignment, '.');
    if (!eq || !dot || dot > eq)
        return stall_err_set(err, STALL_ECONFIG, "--set %s: expected section.key=value",
                             assignment);
    char section[64], key[64], where[200];
    size_t ns = (size_t)(dot - assignment), nk = (size_t)(eq - dot - 1);
    if (ns >= sizeof section || nk >= sizeof key)
        return stall_err_set(err, STALL_ECONFIG, "--set %s: name too long", assignment);
    memcpy(section, assignment, ns);
    section[ns] = '\0';
    memcpy(key, dot + 1, nk);
    key[nk] = '\0';
    snprintf(where, sizeof where, "--set %s.%s", section, key);
    /* [plan] and [sweep] lines are kept for the command that reads them. */
    if (strcmp(section, "plan") == 0 || strcmp(section, "sweep") == 0)
        return stall_config_extra_add(cfg, section, key, eq + 1, true, where, err);
    /* Paths on the command line are relative to the current folder. */
    char saved[STALL_PATH_MAX];
    strcpy(saved, cfg->ini_dir);
    cfg->ini_dir[0] = '\0';
    int rc = stall_config_apply(cfg, section, key, eq + 1, where, err);
    strcpy(cfg->ini_dir, saved);
    size_t idx;
    if (rc == 0 && cfg_find(section, key, &idx))
        cfg->given[idx] = 2; /* named "--set" in messages */
    return rc;
}

int stall_config_extra_add(stall_config *cfg, const char *section, const char *key,
                           const char *value, bool command_line, const char *where, stall_err *err)
{
    if (cfg->nextra >= STALL_EXTRA_MAX)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [%s] %s: more than %d [sweep] and [plan] lines", where, section,
                             key, STALL_EXTRA_MAX);
    struct stall_config_extra *x = &cfg->extra[cfg->nextra];
    if (strlen(section) >= sizeof x->section || strlen(key) >= sizeof x->key ||
        strlen(value) >= sizeof x->value)
        return stall_err_set(err, STALL_ECONFIG, "%s: [%s] %s: name or value too long (limit %zu)",
                             where, section, key, sizeof x->value - 1);
    strcpy(x->section, section);
    strcpy(x->key, key);
    strcpy(x->value, value);
    x->command_line = command_line;
    cfg->nextra++;
    return 0;
}

bool stall_config_given(const stall_config *cfg, const char *section, const char *key)
{
    size_t idx;
    return cfg_find(section, key, &idx) && cfg->given[idx];
}

/* ---- which keys apply in which mode ----
 *
 * A key given explicitly where it has no effect is an error naming the key,
 * where it was given (file:line or --set) and the mode, never ignored. */

enum { CFG_M_REPLAY = 1, CFG_M_SEED = 2, CFG_M_MODEL = 4, CFG_M_ALL = 7 };
enum { CFG_F_DSA = 1, CFG_F_TIDY = 2, CFG_F_NONE = 4, CFG_F_TRACE = 3, CFG_F_ALL = 7 };

typedef struct cfg_rule {
    const char *section, *key; /* key NULL: every key of the section */
    int modes, formats;
    const char *why; /* what the key is for, in the message */
} cfg_rule;

/* The first matching rule wins; keys no rule names apply everywhere. */
static const cfg_rule cfg_rules[] = {
    {"trace", "fetch", CFG_M_ALL, CFG_F_DSA, "a dsanalyzer file"},
    {"trace", "start", CFG_M_ALL, CFG_F_DSA, "a dsanalyzer file"},
    {"trace", "perf", CFG_M_ALL, CFG_F_DSA, "a dsanalyzer file"},
    {"trace", "epoch", CFG_M_ALL, CFG_F_DSA, "the dsanalyzer epoch"},
    {"trace", "path", CFG_M_ALL, CFG_F_TIDY, "the tidy trace"},
    {"trace", "workers", CFG_M_MODEL, CFG_F_TRACE, "the measured loader, for mode = model"},
    {"trace", "prefetch_factor", CFG_M_MODEL, CFG_F_TRACE, "the measured loader, for mode = model"},
    {"align", "start", CFG_M_REPLAY | CFG_M_SEED, CFG_F_ALL,
     "a counterfactual on measured starts, replay and seed only"},
    {"replay", NULL, CFG_M_REPLAY | CFG_M_SEED, CFG_F_ALL, "trace-timed replay"},
    {"report", "per_rank", CFG_M_REPLAY | CFG_M_MODEL, CFG_F_ALL,
     "for iterations.csv, which seed mode does not write"},
    {"fetch", "resample", CFG_M_MODEL, CFG_F_TRACE, "drawing beyond a trace"},
    {"fetch", "dist", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"fetch", "mean_s", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"fetch", "sigma", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"fetch", "sd_s", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"compute", "dist", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"compute", "mean_s", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"compute", "sigma", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"compute", "sd_s", CFG_M_MODEL, CFG_F_NONE, "durations without a trace"},
    {"loader", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"cluster", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"fetch", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"compute", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"storage", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"ddp", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
    {"run", NULL, CFG_M_MODEL, CFG_F_ALL, "a what-if of mode = model"},
};

static const char *cfg_mode_name(int mode)
{
    return mode == STALL_MODE_SEED ? "seed" : mode == STALL_MODE_MODEL ? "model" : "replay";
}

static const char *cfg_format_name(int format)
{
    return format == STALL_FORMAT_TIDY   ? "tidy"
           : format == STALL_FORMAT_NONE ? "none"
                                         : "dsanalyzer";
}

void stall_config_origin(const stall_config *cfg, const char *section, const char *key, char *buf,
                         size_t n)
{
    size_t idx;
    const char *ini = cfg->ini_path[0] ? cfg->ini_path : "config";
    if (!cfg_find(section, key, &idx) || !cfg->given[idx])
        snprintf(buf, n, "%s: [%s] %s", ini, section, key);
    else if (cfg->given[idx] == 2)
        snprintf(buf, n, "--set %s.%s", section, key);
    else if (cfg->given_line[idx] > 0)
        snprintf(buf, n, "%s:%d: [%s] %s", ini, cfg->given_line[idx], section, key);
    else
        snprintf(buf, n, "%s: [%s] %s", ini, section, key);
}

bool stall_config_applies(const stall_config *cfg, const char *section, const char *key)
{
    int mbit = 1 << cfg->mode, fbit = 1 << cfg->format;
    for (size_t i = 0; i < sizeof cfg_rules / sizeof cfg_rules[0]; i++) {
        const cfg_rule *r = &cfg_rules[i];
        if (strcmp(r->section, section) != 0 || (r->key && strcmp(r->key, key) != 0))
            continue;
        return (r->modes & mbit) && (r->formats & fbit);
    }
    return true;
}

static int cfg_check_applies(const stall_config *cfg, stall_err *err)
{
    int mbit = 1 << cfg->mode, fbit = 1 << cfg->format;
    for (size_t k = 0; k < CFG_NKEYS; k++) {
        if (!cfg->given[k])
            continue;
        const cfg_key *key = &cfg_keys[k];
        for (size_t i = 0; i < sizeof cfg_rules / sizeof cfg_rules[0]; i++) {
            const cfg_rule *r = &cfg_rules[i];
            if (strcmp(r->section, key->section) != 0 || (r->key && strcmp(r->key, key->key) != 0))
                continue;
            if ((r->modes & mbit) && (r->formats & fbit))
                break;
            /* [align] start = none says what model mode does anyway. */
            if (strcmp(key->section, "align") == 0 && cfg->start_align.n == 1 &&
                cfg->start_align.v[0] == STALL_ALIGN_NONE)
                break;
            char where[STALL_PATH_MAX + 64];
            stall_config_origin(cfg, key->section, key->key, where, sizeof where);
            /* When the mode or format that makes the key useless came
             * from --set, say so: the file alone was consistent. */
            bool by_mode = !(r->modes & mbit);
            char cause[STALL_PATH_MAX + 160] = "";
            if (stall_config_given(cfg, "scenario", by_mode ? "mode" : "format") ||
                stall_config_given(cfg, "trace", "format")) {
                char o[STALL_PATH_MAX + 64];
                stall_config_origin(cfg, by_mode ? "scenario" : "trace",
                                    by_mode ? "mode" : "format", o, sizeof o);
                if (strncmp(o, "--set", 5) == 0)
                    snprintf(cause, sizeof cause, "; %s comes from %s", by_mode ? "mode" : "format",
                             o);
            }
            if (by_mode)
                return stall_err_set(err, STALL_ECONFIG,
                                     "%s: has no effect in mode = %s (it is %s%s)", where,
                                     cfg_mode_name(cfg->mode), r->why, cause);
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: has no effect with [trace] format = %s (it is %s%s)", where,
                                 cfg_format_name(cfg->format), r->why, cause);
        }
    }
    return 0;
}

static int cfg_need(const stall_config *cfg, const char *key, const char *value, stall_err *err)
{
    if (value[0] != '\0')
        return 0;
    return stall_err_set(err, STALL_ECONFIG, "%s: [trace] %s: required for format = %s",
                         cfg->ini_path[0] ? cfg->ini_path : "config", key,
                         cfg->format == STALL_FORMAT_TIDY ? "tidy" : "dsanalyzer");
}

int stall_config_check(const stall_config *cfg, stall_err *err)
{
    const char *src = cfg->ini_path[0] ? cfg->ini_path : "config";
    if (cfg->nextra > 0) {
        const struct stall_config_extra *x = &cfg->extra[0];
        if (x->command_line) {
            char where[96];
            if (strcmp(x->section, "sweep") == 0)
                snprintf(where, sizeof where, "--sweep %s", x->key);
            else
                snprintf(where, sizeof where, "--set %s.%s", x->section, x->key);
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: only `stallsim %s` reads [%s] (this command would ignore it)",
                                 where, x->section, x->section);
        }
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [%s] %s: only `stallsim %s` reads this section (this command "
                             "would ignore it)",
                             src, x->section, x->key, x->section);
    }
    int arc = cfg_check_applies(cfg, err);
    if (arc)
        return arc;
    if (cfg->mode == STALL_MODE_SEED || cfg->mode == STALL_MODE_REPLAY) {
        if (cfg->format != STALL_FORMAT_DSANALYZER && cfg->mode == STALL_MODE_SEED)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [trace] format: mode = seed needs format = dsanalyzer", src);
        if (cfg->format == STALL_FORMAT_NONE)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [trace] format: mode = replay needs a trace", src);
    }
    if (cfg->format == STALL_FORMAT_DSANALYZER) {
        int rc;
        if ((rc = cfg_need(cfg, "fetch", cfg->fetch, err)) ||
            (rc = cfg_need(cfg, "start", cfg->start, err)) ||
            (rc = cfg_need(cfg, "perf", cfg->perf, err)))
            return rc;
    }
    if (cfg->format == STALL_FORMAT_TIDY) {
        int rc = cfg_need(cfg, "path", cfg->path, err);
        if (rc)
            return rc;
    }
    if (cfg->workers == 0 && stall_config_given(cfg, "loader", "prefetch_factor"))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [loader] prefetch_factor: needs workers > 0 (PyTorch rejects "
                             "a prefetch factor without workers)",
                             src);
    if (cfg->gpus > 0 && cfg->gpus_per_node > cfg->gpus)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [cluster] gpus_per_node: %lld is more than gpus = %lld", src,
                             (long long)cfg->gpus_per_node, (long long)cfg->gpus);
    if (cfg->mode == STALL_MODE_MODEL && cfg->format == STALL_FORMAT_NONE) {
        if (cfg->fetch_dist.mean_s <= 0)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [fetch] mean_s: must be > 0 without a trace", src);
        if (cfg->compute_dist.mean_s <= 0)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [compute] mean_s: must be > 0 without a trace", src);
        if (cfg->batches <= 0)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s: [run] batches: must be > 0 without a trace", src);
    }
    if (cfg->mode == STALL_MODE_MODEL && cfg->cores == 0 &&
        (cfg->cpu_share != 1.0 || cfg->compute_cpu_share != 0.0))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [%s] cpu_share: has no effect without [cluster] cores (the "
                             "host cores it is a share of)",
                             src, cfg->compute_cpu_share != 0.0 ? "compute" : "fetch");
    if (cfg->bandwidth_mb_s > 0 && cfg->batch_mb <= 0 && cfg->format != STALL_FORMAT_TIDY)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [storage] batch_mb: must be > 0 when bandwidth_mb_s is set", src);
    if (cfg->bandwidth_mb_s > 0 && cfg->batch_mb / cfg->bandwidth_mb_s > STALL_LIMIT_DURATION_S)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [storage] batch_mb: reading a batch takes longer than the "
                             "limit of %g s at bandwidth_mb_s",
                             src, STALL_LIMIT_DURATION_S);
    bool ring = cfg->bucket_mb > 0 || cfg->bandwidth_gb_s > 0 || cfg->latency_us > 0;
    if (ring && cfg->bandwidth_gb_s <= 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [ddp] bandwidth_gb_s: must be > 0 for the ring all-reduce model",
                             src);
    return 0;
}

static void cfg_write_value(const stall_config *cfg, const cfg_key *k, const char *base_dir,
                            FILE *f)
{
    const void *src = (const char *)cfg + k->offset;
    char buf[STALL_REPR_MAX];
    switch (k->type) {
    case CFG_STR:
        fputs(src, f);
        break;
    case CFG_PATH: {
        /* Relative to the directory the file is written to, which is how
         * the loader reads it back. */
        if (base_dir && *(const char *)src) {
            char *rel = stall_path_relative(base_dir, src);
            char cwd[STALL_PATH_MAX];
            /* A relative path that does not exist (yet) stays as given;
             * made absolute, it still names the same file from base_dir. */
            if (rel[0] != '/' && strcmp(rel, src) == 0 && getcwd(cwd, sizeof cwd)) {
                fputs(cwd, f);
                fputc('/', f);
            }
            fputs(rel, f);
            free(rel);
        } else {
            fputs(src, f);
        }
        break;
    }
    case CFG_INT:
        fprintf(f, "%lld", (long long)*(const int64_t *)src);
        break;
    case CFG_DOUBLE:
        fputs(stall_repr(buf, *(const double *)src), f);
        break;
    case CFG_BOOL:
        fputs(*(const bool *)src ? "true" : "false", f);
        break;
    case CFG_ENUM: {
        int want = *(const int *)src, i = 0;
        for (const char *p = k->choices;; i++) {
            const char *bar = strchr(p, '|');
            size_t n = bar ? (size_t)(bar - p) : strlen(p);
            if (i == want) {
                fwrite(p, 1, n, f);
                break;
            }
            if (!bar)
                break;
            p = bar + 1;
        }
        break;
    }
    case CFG_ALIGNS: {
        const stall_align_list *l = src;
        for (int i = 0; i < l->n; i++)
            fprintf(f, "%s%s", i ? ", " : "", stall_align_name(l->v[i]));
        break;
    }
    }
}

void stall_config_write(const stall_config *cfg, const char *base_dir, FILE *f)
{
    const char *section = "";
    for (size_t i = 0; i < CFG_NKEYS; i++) {
        const cfg_key *k = &cfg_keys[i];
        if (strcmp(section, k->section) != 0) {
            fprintf(f, "%s[%s]\n", i ? "\n" : "", k->section);
            section = k->section;
        }
        /* Keys left at their default stay comments, so that the text loads
         * back with the same keys given: several defaults mean "as the
         * trace says", which an explicit value would override. */
        fprintf(f, "%s%s = ", cfg->given[i] ? "" : "; ", k->key);
        cfg_write_value(cfg, k, base_dir, f);
        fputc('\n', f);
    }
}

void stall_config_help(FILE *f)
{
    const char *section = "";
    for (size_t i = 0; i < CFG_NKEYS; i++) {
        const cfg_key *k = &cfg_keys[i];
        if (strcmp(section, k->section) != 0) {
            fprintf(f, "  [%s]\n", k->section);
            section = k->section;
        }
        fprintf(f, "    %-18s default %-14s %s%s%s\n", k->key, k->def[0] ? k->def : "(none)",
                k->help, k->choices ? "; one of " : "", k->choices ? k->choices : "");
    }
}

size_t stall_config_list_given(const stall_config *cfg, const char *const *sections, char *buf,
                               size_t n)
{
    size_t count = 0, len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < CFG_NKEYS; k++) {
        if (!cfg->given[k])
            continue;
        for (const char *const *sec = sections; *sec; sec++)
            if (strcmp(*sec, cfg_keys[k].section) == 0) {
                int w = snprintf(buf + len, len < n ? n - len : 0, "%s[%s] %s", count ? ", " : "",
                                 cfg_keys[k].section, cfg_keys[k].key);
                if (w > 0 && len + (size_t)w < n)
                    len += (size_t)w;
                count++;
                break;
            }
    }
    return count;
}

size_t stall_config_drop(stall_config *cfg, const char *const *sections, char *buf, size_t n)
{
    size_t count = stall_config_list_given(cfg, sections, buf, n);
    stall_config def;
    stall_config_defaults(&def);
    for (size_t k = 0; k < CFG_NKEYS; k++)
        for (const char *const *sec = sections; *sec; sec++)
            if (cfg->given[k] && strcmp(*sec, cfg_keys[k].section) == 0) {
                memcpy((char *)cfg + cfg_keys[k].offset, (const char *)&def + cfg_keys[k].offset,
                       cfg_keys[k].size);
                cfg->given[k] = 0;
                cfg->given_line[k] = 0;
            }
    return count;
}

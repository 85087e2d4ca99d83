/*
 * job.c - what every job shares: its result folder and its manifest
 * (effective.ini).
 */
#include "stall/job.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stall/cleanup.h"

#include "stall/dftracer.h"
#include "stall/digest.h"
#include "stall/io.h"
#include "stall/kineto.h"
#include "stall/results.h"

char *stall_job_outdir(const stall_config *cfg, const stall_run_opts *opts)
{
    return stall_job_outdir_as(cfg, opts->outdir, "");
}

char *stall_job_outdir_as(const stall_config *cfg, const char *outdir, const char *suffix)
{
    if (outdir)
        return stall_xstrdup(outdir);
    /* What-ifs given with --set get folders of their own: results/w2+cluster.gpus=8 */
    char tag[97], name[STALL_NAME_MAX + 16 + sizeof tag];
    stall_config_set_tag(cfg, tag, sizeof tag);
    snprintf(name, sizeof name, "%s%s%s", cfg->name, suffix, tag);
    return stall_path_join("results", name);
}

/* The input files of a job: paths, and each one's SHA-256 once hashed. */
typedef struct job_files {
    char **paths;
    char (*hex)[65];
    int n;
} job_files;

static void job_files_free(job_files *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    free(l->hex);
    memset(l, 0, sizeof *l);
}

/* The input files of cfg's format into *l: a dsanalyzer trace's three, a
 * tidy trace, a Kineto or dftracer trace's file or the trace files of its
 * folder (as their readers take them). */
static int job_input_files(const stall_config *cfg, job_files *l, stall_err *err)
{
    memset(l, 0, sizeof *l);
    int rc = 0;
    if (cfg->format == STALL_FORMAT_KINETO)
        rc = stall_kineto_files(cfg->path, &l->paths, &l->n, err);
    else if (cfg->format == STALL_FORMAT_DFTRACER)
        rc = stall_dftracer_files(cfg->path, &l->paths, &l->n, err);
    else {
        const char *one[3] = {cfg->path};
        int n = cfg->format == STALL_FORMAT_TIDY ? 1 : 0;
        if (cfg->format == STALL_FORMAT_DSANALYZER) {
            one[0] = cfg->fetch, one[1] = cfg->start, one[2] = cfg->perf;
            n = 3;
        }
        l->paths = stall_xmalloc((size_t)(n ? n : 1) * sizeof *l->paths);
        for (int i = 0; i < n; i++)
            l->paths[i] = stall_xstrdup(one[i]);
        l->n = n;
    }
    if (rc == 0)
        l->hex = stall_xcalloc((size_t)(l->n ? l->n : 1), sizeof *l->hex);
    return rc;
}

typedef struct job_manifest {
    const stall_config *cfg;
    const char *outdir;
    const job_files *in;
    stall_fill_fn tail;
    void *tail_ctx;
} job_manifest;

/* Paths are written relative to the result folder (where effective.ini is
 * read from when run again), each on a line of its own to stay within the
 * INI reader's line length. */
static int job_fill_manifest(FILE *f, void *arg, stall_err *err)
{
    const job_manifest *m = arg;
    fprintf(f, "; stallsim %s: effective configuration of this run\n", stall_version());
    if (m->cfg->ini_path[0]) {
        char *rel = stall_path_relative(m->outdir, m->cfg->ini_path);
        fprintf(f, "; config %s\n", rel);
        free(rel);
    }
    for (int i = 0; i < m->in->n; i++) {
        char *rel = stall_path_relative(m->outdir, m->in->paths[i]);
        fprintf(f, "; input %s\n;   sha256 %s\n", rel, m->in->hex[i]);
        free(rel);
    }
    /* the what-if's --set keys, whole, for the figures' titles (plot): the
     * folder's name cuts them (stall_config_set_tag) */
    for (const char *k = m->cfg->set_list; *k;) {
        size_t len = strcspn(k, "\n");
        fprintf(f, "; set %.*s\n", (int)len, k);
        k += len + (k[len] == '\n');
    }
    if (m->cfg->set_more)
        fprintf(f, "; set ... %d more\n", m->cfg->set_more);
    fputc('\n', f);
    stall_config_write(m->cfg, m->outdir, f);
    if (!m->tail)
        return 0;
    fputc('\n', f);
    return m->tail(f, m->tail_ctx, err);
}

static const char *job_digest_find(const stall_job_digests *d, const char *path)
{
    for (int i = 0; d && i < d->n; i++)
        if (strcmp(d->path[i], path) == 0)
            return d->hex[i];
    return NULL;
}

static int job_inputs(const stall_config *cfg, bool json, stall_err *err);

/* stall_job_digests_add, taking Kineto and dftracer traces when json. */
static int job_digests_add(stall_job_digests *d, const stall_config *cfg, bool json, stall_err *err)
{
    int rc = job_inputs(cfg, json, err);
    job_files l = {0};
    if (rc == 0)
        rc = job_input_files(cfg, &l, err);
    const char *const *paths = (const char *const *)l.paths;
    for (int i = 0; i < l.n && rc == 0; i++) {
        if (job_digest_find(d, paths[i]))
            continue;
        char hex[65];
        rc = stall_sha256_file(paths[i], hex, err);
        if (rc)
            break;
        if (d->n == d->cap) {
            d->cap = d->cap ? 2 * d->cap : 4;
            d->path = stall_xrealloc(d->path, (size_t)d->cap * sizeof *d->path);
            d->hex = stall_xrealloc(d->hex, (size_t)d->cap * sizeof *d->hex);
        }
        d->path[d->n] = stall_xstrdup(paths[i]);
        memcpy(d->hex[d->n], hex, sizeof hex);
        d->n++;
    }
    job_files_free(&l);
    return rc;
}

int stall_job_digests_add(stall_job_digests *d, const stall_config *cfg, stall_err *err)
{
    return job_digests_add(d, cfg, false, err);
}

void stall_job_digests_free(stall_job_digests *d)
{
    if (!d)
        return;
    for (int i = 0; i < d->n; i++)
        free(d->path[i]);
    free(d->path);
    free(d->hex);
    *d = (stall_job_digests){0};
}

static void *job_hash_thread(void *arg)
{
    stall_job_hasher *h = arg;
    /* The job has taken or refused cfg's format already: validate and
     * mode = model read Kineto and dftracer traces, which sweep's
     * stall_job_digests_add refuses. */
    h->rc = job_digests_add(&h->d, h->cfg, true, &h->err);
    return NULL;
}

void stall_job_hash_start(stall_job_hasher *h, const stall_config *cfg)
{
    *h = (stall_job_hasher){.cfg = cfg};
    h->threaded = pthread_create(&h->thread, NULL, job_hash_thread, h) == 0;
    if (!h->threaded)
        job_hash_thread(h);
}

int stall_job_hash_finish(stall_job_hasher *h, stall_err *err)
{
    if (h->threaded)
        pthread_join(h->thread, NULL);
    h->threaded = 0;
    if (h->rc && err)
        *err = h->err;
    return h->rc;
}

bool stall_job_streams(const stall_config *cfg, const stall_run_opts *opts)
{
    if (cfg->format == STALL_FORMAT_KINETO || cfg->format == STALL_FORMAT_DFTRACER)
        return false; /* read whole by their readers (jobs/infer.h) */
    if (opts->in_memory)
        return opts->in_memory < 0;
    job_files l;
    if (job_input_files(cfg, &l, NULL) != 0)
        return true;
    long long bytes = 0;
    bool gone = false;
    for (int i = 0; i < l.n && !gone; i++) {
        struct stat st;
        gone = stat(l.paths[i], &st) != 0;
        bytes += gone ? 0 : (long long)st.st_size;
    }
    job_files_free(&l);
    return gone || bytes >= STALL_STREAM_MIN_BYTES;
}

/* cfg's input files into *in with the SHA-256 of each: d's when it knows
 * the file, else hashed here. */
static int job_input_digests(const stall_config *cfg, const stall_job_digests *d, job_files *in,
                             stall_err *err)
{
    int rc = job_input_files(cfg, in, err);
    for (int i = 0; i < in->n && rc == 0; i++) {
        const char *known = job_digest_find(d, in->paths[i]);
        if (known)
            memcpy(in->hex[i], known, sizeof in->hex[i]);
        else
            rc = stall_sha256_file(in->paths[i], in->hex[i], err);
    }
    return rc;
}

int stall_job_manifest_with(const stall_config *cfg, const char *outdir, const stall_job_digests *d,
                            stall_fill_fn tail, void *tail_ctx, stall_err *err)
{
    /* effective.ini must run again to the same results: refuse a value
     * that would not read back as written. */
    int rrc = stall_config_roundtrip(cfg, outdir, err);
    if (rrc)
        return rrc;
    job_files in;
    int rc = job_input_digests(cfg, d, &in, err);
    job_manifest m = {.cfg = cfg, .outdir = outdir, .in = &in, .tail = tail, .tail_ctx = tail_ctx};
    if (rc == 0)
        rc = stall_write_atomic_in(outdir, "effective.ini", job_fill_manifest, &m, err);
    job_files_free(&in);
    return rc;
}

int stall_job_manifest_text(const stall_config *cfg, const char *outdir, const stall_job_digests *d,
                            char **text, stall_err *err)
{
    *text = NULL;
    job_files in;
    int rc = job_input_digests(cfg, d, &in, err);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = rc == 0 ? open_memstream(&buf, &len) : NULL;
    if (rc == 0 && !f)
        rc = stall_err_set(err, STALL_ENOMEM, "effective.ini: cannot write to memory");
    if (f) {
        job_manifest m = {.cfg = cfg, .outdir = outdir, .in = &in};
        rc = job_fill_manifest(f, &m, err);
        fclose(f);
        if (rc == 0)
            *text = buf;
        else
            free(buf);
    }
    job_files_free(&in);
    return rc;
}

int stall_job_manifest(const stall_config *cfg, const char *outdir, stall_err *err)
{
    return stall_job_manifest_with(cfg, outdir, NULL, NULL, NULL, err);
}

/* ---- result folders ---- */

static bool job_same(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether the file `in` is the file or folder whose stat is *out, or lies
 * under that folder: the file, then each folder above it (its folder, then
 * "/.." appended up to the root, its own parent), compared by device and
 * inode, so that links and other spellings of a path are the same file. */
static bool job_path_under(const char *in, const struct stat *out)
{
    struct stat st, prev;
    if (stat(in, &st) != 0)
        return false;
    bool under = job_same(&st, out);
    char *up = stall_path_dir(in);
    for (int depth = 0; !under && depth < 4096 && stat(up, &prev) == 0; depth++) {
        if (depth > 0 && job_same(&prev, &st))
            break; /* the root */
        under = job_same(&prev, out);
        st = prev;
        char *next = stall_path_join(up, "..");
        free(up);
        up = next;
    }
    free(up);
    return under;
}

/* Whether ini is the effective.ini of the result folder *dir, which the job
 * writes anew: `stallsim run results/x/effective.ini` runs it again into
 * results/x (docs/outputs.md), the INI read whole before the folder is
 * replaced. */
static bool job_own_manifest(const char *ini, const struct stat *dir)
{
    const char *base = strrchr(ini, '/');
    if (strcmp(base ? base + 1 : ini, "effective.ini") != 0)
        return false;
    char *up = stall_path_dir(ini);
    struct stat st;
    bool own = stat(up, &st) == 0 && job_same(&st, dir);
    free(up);
    return own;
}

int stall_job_check_apart(const stall_config *cfg, const char *out, stall_err *err)
{
    struct stat st;
    if (stat(out, &st) != 0)
        return 0; /* not there yet: it holds nothing */
    job_files in;
    stall_err ignored = {0};
    if (job_input_files(cfg, &in, &ignored) != 0)
        return 0; /* the reader names what is wrong with the trace */
    int rc = 0;
    for (int i = -1; rc == 0 && i < in.n; i++) {
        const char *path = i < 0 ? cfg->ini_path : in.paths[i];
        if (!path[0] || !job_path_under(path, &st) || (i < 0 && job_own_manifest(path, &st)))
            continue;
        rc = S_ISDIR(st.st_mode)
                 ? stall_err_set(err, STALL_EIO,
                                 "%s: holds %s, an input of this run, which replacing the folder "
                                 "would delete; choose another result folder (-o)",
                                 out, path)
                 : stall_err_set(err, STALL_EIO,
                                 "%s: is %s, an input of this run; choose another file", out, path);
    }
    job_files_free(&in);
    return rc;
}

int stall_job_check_out(const char *final, stall_err *err)
{
    struct stat st;
    if (lstat(final, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return stall_err_set(err, STALL_EIO, "%s: exists and is not a folder", final);
        if (!stall_result_replaceable(final))
            return stall_err_set(err, STALL_EIO,
                                 "%s: holds files that are not a stallsim result (no "
                                 "effective.ini); choose another result folder (-o)",
                                 final);
    }
    return stall_check_writable(final, true, err);
}

int stall_job_begin(const char *final, bool clean_stale, char **work, stall_err *err)
{
    *work = NULL;
    int rc = stall_job_check_out(final, err);
    if (rc)
        return rc;
    char *parent = stall_path_dir(final);
    /* The folders -o names that are not there yet (outermost first) are
     * registered, so that an error or a signal before the result is in
     * place removes them again: an interrupted `run -o a/b/R` left a/b. */
    stall_cleanup_add_made_for(parent);
    rc = stall_mkdirs(parent, err);
    free(parent);
    if (rc) {
        stall_cleanup_made_end(final, true);
        return rc;
    }
    /* The work folders of earlier runs into final that were killed
     * (SIGKILL leaves them; their pid is gone) go first, unless the caller
     * cleaned the parent once for many (a sweep's points). */
    *work = clean_stale ? stall_work_dir_begin(final, err) : stall_work_dir_make(final, err);
    if (!*work)
        stall_cleanup_made_end(final, true);
    return *work ? 0 : err->code;
}

int stall_job_commit(const char *final, const char *work, stall_err *err)
{
    int rc = stall_work_dir_commit(final, work, err);
    stall_cleanup_made_end(final, rc != 0);
    return rc;
}

void stall_job_abort(const char *work)
{
    stall_work_dir_abort(work);
    if (work)
        stall_cleanup_made_end(work, true); /* final's ancestors are work's */
}

/* The words after "cannot open" when a result folder's effective.ini names
 * an input that is not there: its paths are relative to its own folder
 * (stall_config_write), so a copy of the folder elsewhere, without the
 * inputs at the same relative place, finds none. "" otherwise (another
 * INI, a path given with --set, a file that is there but unreadable). */
static const char *job_moved_hint(const stall_config *cfg, const char *where, int e)
{
    const char *slash = strrchr(cfg->ini_path, '/');
    const char *base = slash ? slash + 1 : cfg->ini_path;
    if (e != ENOENT || strcmp(base, "effective.ini") != 0 || strncmp(where, "--", 2) == 0)
        return "";
    return " (effective.ini names its inputs relative to its own folder: a result folder copied "
           "or moved away from its inputs, or whose inputs were removed, finds none there; put "
           "the input at that path, or give it with --set trace.";
}

static int job_inputs(const stall_config *cfg, bool json, stall_err *err)
{
    static const char *const ds_keys[] = {"fetch", "start", "perf"};
    const char *paths[3] = {cfg->fetch, cfg->start, cfg->perf};
    bool is_json = cfg->format == STALL_FORMAT_KINETO || cfg->format == STALL_FORMAT_DFTRACER;
    if (is_json && !json) {
        char where[STALL_PATH_MAX + 64];
        stall_config_origin(cfg, "trace", "format", where, sizeof where);
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: %s traces are read by stallsim analyze, timeline, validate and "
                             "run with mode = model (sweep takes tidy or dsanalyzer traces)",
                             where, cfg->format == STALL_FORMAT_KINETO ? "kineto" : "dftracer");
    }
    int n = cfg->format == STALL_FORMAT_DSANALYZER        ? 3
            : cfg->format == STALL_FORMAT_TIDY || is_json ? 1
                                                          : 0;
    for (int i = 0; i < n; i++) {
        const char *key = cfg->format == STALL_FORMAT_DSANALYZER ? ds_keys[i] : "path";
        const char *path = cfg->format == STALL_FORMAT_DSANALYZER ? paths[i] : cfg->path;
        char where[STALL_PATH_MAX + 64];
        if (access(path, R_OK) != 0) {
            int e = errno;
            stall_config_origin(cfg, "trace", key, where, sizeof where);
            const char *hint = job_moved_hint(cfg, where, e);
            return stall_err_set(err, STALL_EIO, "%s: %s: cannot open: %s%s%s%s", where, path,
                                 strerror(e), hint, *hint ? key : "", *hint ? "=FILE)" : "");
        }
        stall_err bad = {0};
        if (stall_input_check(path, &bad) != 0) { /* a FIFO: named with its INI line */
            stall_config_origin(cfg, "trace", key, where, sizeof where);
            return stall_err_set(err, bad.code, "%s: %s", where, bad.msg);
        }
        /* A folder opens, and its first read fails: say so here, where the
         * key is known, not "read error" later (Kineto and dftracer take a
         * folder of per-rank files). */
        struct stat st;
        if (!is_json && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            char csv[STALL_PATH_MAX + 16];
            stall_config_origin(cfg, "trace", key, where, sizeof where);
            snprintf(csv, sizeof csv, "%s/trace.csv", path);
            bool capture = cfg->format == STALL_FORMAT_TIDY && access(csv, R_OK) == 0;
            return stall_err_set(
                err, STALL_EIO, "%s: %s: a folder, not a %s CSV file%s%s%s", where, path,
                cfg->format == STALL_FORMAT_TIDY ? "tidy trace" : "dsanalyzer",
                capture ? " (give its trace.csv: " : "", capture ? csv : "", capture ? ")" : "");
        }
    }
    return 0;
}

int stall_job_inputs(const stall_config *cfg, stall_err *err)
{
    return job_inputs(cfg, false, err);
}

int stall_job_inputs_json(const stall_config *cfg, stall_err *err)
{
    return job_inputs(cfg, true, err);
}

bool stall_job_per_rank(const stall_config *cfg, int ranks)
{
    return cfg->per_rank == 1 || (cfg->per_rank == 0 && ranks <= STALL_PER_RANK_AUTO);
}

/*
 * tracebuild.c - per-rank iterations into the tidy shape, the files of a
 * trace path, and small helpers the Kineto and dftracer readers share
 * (tracebuild.h).
 */
#include "tracebuild.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void tb_push(tb_epoch *e, const tb_iter *it)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 64;
        e->it = stall_xrealloc(e->it, e->cap * sizeof *e->it);
    }
    e->it[e->n++] = *it;
}

tb_epoch *tb_add_epoch(tb_rank *r, stall_time start)
{
    if (r->nep == r->capep) {
        r->capep = r->capep ? 2 * r->capep : 8;
        r->ep = stall_xrealloc(r->ep, (size_t)r->capep * sizeof *r->ep);
    }
    tb_epoch *e = &r->ep[r->nep++];
    memset(e, 0, sizeof *e);
    e->start = start;
    return e;
}

void tb_rank_free(tb_rank *r)
{
    for (int i = 0; i < r->nep; i++)
        free(r->ep[i].it);
    free(r->ep);
    free(r->file);
    memset(r, 0, sizeof *r);
}

static int tb_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool tb_ends(const char *s, const char *ext)
{
    size_t n = strlen(s), m = strlen(ext);
    return n > m && strcmp(s + n - m, ext) == 0;
}

int tb_files(const char *path, const char *const *exts, char ***files, int *n, stall_err *err)
{
    struct stat st;
    *files = NULL;
    *n = 0;
    if (stat(path, &st) != 0)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) {
        *files = stall_xmalloc(sizeof **files);
        (*files)[0] = stall_xstrdup(path);
        *n = 1;
        return 0;
    }
    DIR *d = opendir(path);
    if (!d)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
    int cap = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        bool ok = false;
        for (int i = 0; exts[i] && !ok; i++)
            ok = tb_ends(de->d_name, exts[i]);
        if (!ok || de->d_name[0] == '.')
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            *files = stall_xrealloc(*files, (size_t)cap * sizeof **files);
        }
        size_t len = strlen(path) + strlen(de->d_name) + 2;
        char *p = stall_xmalloc(len);
        snprintf(p, len, "%s%s%s", path, tb_ends(path, "/") ? "" : "/", de->d_name);
        (*files)[(*n)++] = p;
    }
    closedir(d);
    if (*n == 0) {
        char list[128] = "";
        for (int i = 0; exts[i]; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     exts[i]);
        return stall_err_set(err, STALL_EPARSE, "%s: a folder without trace files (%s)", path,
                             list);
    }
    qsort(*files, (size_t)*n, sizeof **files, tb_cmp_str);
    return 0;
}

void tb_files_free(char **files, int n)
{
    for (int i = 0; i < n; i++)
        free(files[i]);
    free(files);
}

static int tb_cmp_rank(const void *a, const void *b)
{
    const tb_rank *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

stall_tidy_trace *tb_build(tb_rank *ranks, int n, bool fetch_known, bool with_compute_end,
                           int workers, bool with_checkpoints, const char *path,
                           int64_t *dropped_it, int *dropped_ep, int64_t dropped_ck[2])
{
    qsort(ranks, (size_t)n, sizeof *ranks, tb_cmp_rank);
    int nep = n > 0 ? ranks[0].nep : 0;
    for (int r = 1; r < n; r++)
        nep = ranks[r].nep < nep ? ranks[r].nep : nep;
    /* epochs kept: those where every rank has iterations */
    int *keep = stall_xmalloc((size_t)(nep > 0 ? nep : 1) * sizeof *keep);
    int kept = 0;
    size_t batches = SIZE_MAX;
    for (int e = 0; e < nep; e++) {
        size_t m = SIZE_MAX;
        for (int r = 0; r < n; r++)
            m = ranks[r].ep[e].n < m ? ranks[r].ep[e].n : m;
        if (m == 0)
            continue;
        keep[kept++] = e;
        batches = m < batches ? m : batches;
    }
    int64_t total = 0, used = 0;
    int allep = 0;
    for (int r = 0; r < n; r++) {
        allep = ranks[r].nep > allep ? ranks[r].nep : allep;
        for (int e = 0; e < ranks[r].nep; e++)
            total += (int64_t)ranks[r].ep[e].n;
    }
    if (dropped_ep)
        *dropped_ep = allep - kept;
    /* Checkpoints on iterations that are cut (docs/model.md 8.1): each
     * follows its iteration (2.5), and the last kept one ends at the next
     * request, before them, so none has an iteration to go on (moved to
     * the last kept one it would lie past that iteration's end and change
     * the interval): counted, for the reader to say. */
    if (dropped_ck) {
        dropped_ck[0] = dropped_ck[1] = 0;
        for (int r = 0; r < n; r++)
            for (int e = 0, ei = 0; e < ranks[r].nep; e++) {
                bool in = ei < kept && keep[ei] == e;
                ei += in;
                for (size_t k = in ? batches : 0; k < ranks[r].ep[e].n; k++)
                    dropped_ck[in ? 0 : 1] += ranks[r].ep[e].it[k].has_ckpt;
            }
    }
    if (kept == 0 || n == 0) {
        if (dropped_it)
            *dropped_it = total;
        free(keep);
        return NULL;
    }
    stall_tidy_trace *t = stall_xcalloc(1, sizeof *t);
    t->ranks = n;
    t->epochs = kept;
    t->batches = (int64_t)batches;
    size_t cells = (size_t)kept * batches * (size_t)n;
    t->fetch_start = stall_xmalloc(cells * sizeof *t->fetch_start);
    t->fetch_end = stall_xmalloc(cells * sizeof *t->fetch_end);
    t->request = stall_xmalloc(cells * sizeof *t->request);
    t->ready = stall_xmalloc(cells * sizeof *t->ready);
    t->iter_end = stall_xmalloc(cells * sizeof *t->iter_end);
    t->compute_end = with_compute_end ? stall_xmalloc(cells * sizeof *t->compute_end) : NULL;
    t->worker = stall_xmalloc(cells * sizeof *t->worker);
    t->epoch_start = stall_xmalloc((size_t)kept * (size_t)n * sizeof *t->epoch_start);
    t->checkpoint_s =
        with_checkpoints ? stall_xcalloc((size_t)kept * (size_t)n, sizeof *t->checkpoint_s) : NULL;
    /* Checkpoints after kept iterations: the tidy ckpt_* columns (bytes
     * unknown: 0), which run and validate take (docs/model.md 2.5, 8.1). */
    bool any_ck = false;
    for (int ei = 0; ei < kept && with_checkpoints && !any_ck; ei++)
        for (int r = 0; r < n && !any_ck; r++)
            for (size_t k = 0; k < batches && !any_ck; k++)
                any_ck = ranks[r].ep[keep[ei]].it[k].has_ckpt;
    if (any_ck) {
        t->ckpt_start = stall_xmalloc(cells * sizeof *t->ckpt_start);
        t->ckpt_end = stall_xmalloc(cells * sizeof *t->ckpt_end);
        t->ckpt_bytes = stall_xcalloc(cells, sizeof *t->ckpt_bytes);
    }
    for (int ei = 0; ei < kept; ei++)
        for (int r = 0; r < n; r++) {
            const tb_epoch *ep = &ranks[r].ep[keep[ei]];
            t->epoch_start[(size_t)ei * (size_t)n + (size_t)r] =
                ep->start < ep->it[0].request ? ep->start : ep->it[0].request;
            if (t->checkpoint_s)
                t->checkpoint_s[(size_t)ei * (size_t)n + (size_t)r] = ep->checkpoint_s;
            for (size_t k = 0; k < batches; k++) {
                const tb_iter *it = &ep->it[k];
                size_t i = stall_tidy_at(t, ei, r, (int64_t)k);
                t->request[i] = it->request;
                t->ready[i] = it->ready;
                /* the last kept iteration ends where the trace says, or
                 * at the next request when later ones were cut */
                t->iter_end[i] =
                    k + 1 == batches && k + 1 < ep->n ? ep->it[k + 1].request : it->iter_end;
                if (t->compute_end)
                    t->compute_end[i] = it->compute_end;
                if (t->ckpt_start) {
                    t->ckpt_start[i] = it->has_ckpt ? it->ckpt_start : -1;
                    t->ckpt_end[i] = it->has_ckpt ? it->ckpt_end : -1;
                }
                t->worker[i] = -1;
                if (fetch_known) {
                    t->fetch_start[i] = it->request;
                    t->fetch_end[i] = it->ready;
                } else { /* unknown: nothing drawn, the whole wait counts as data */
                    t->fetch_start[i] = t->fetch_end[i] = it->ready;
                }
                used++;
            }
        }
    t->workers = workers;
    t->prefetch = t->pin_memory = t->persistent = -1;
    t->fetch_unknown = !fetch_known;
    t->path = stall_xstrdup(path);
    if (dropped_it)
        *dropped_it = total - used;
    free(keep);
    return t;
}

void tb_say(char **s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int add = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    size_t have = *s ? strlen(*s) : 0;
    *s = stall_xrealloc(*s, have + (size_t)add + 1);
    va_start(ap, fmt);
    vsnprintf(*s + have, (size_t)add + 1, fmt, ap);
    va_end(ap);
}

int64_t tb_rank_from_name(const char *file, int64_t *world)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    *world = -1;
    /* dftracer/DLIO: trace-R-of-W */
    const char *p = strstr(base, "trace-");
    while (p) {
        char *end;
        const char *q = p + 6;
        if (isdigit((unsigned char)*q)) {
            long long r = strtoll(q, &end, 10);
            if (strncmp(end, "-of-", 4) == 0 && isdigit((unsigned char)end[4])) {
                *world = strtoll(end + 4, NULL, 10);
                return r;
            }
        }
        p = strstr(p + 1, "trace-");
    }
    /* rank-34., rank34_, rank_3 */
    p = strstr(base, "rank");
    while (p) {
        const char *q = p + 4;
        if (*q == '-' || *q == '_')
            q++;
        if (isdigit((unsigned char)*q))
            return strtoll(q, NULL, 10);
        p = strstr(p + 1, "rank");
    }
    return -1;
}

static int tb_cmp_span(const void *a, const void *b)
{
    const tb_span *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->dur != y->dur)
        return x->dur < y->dur ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

size_t tb_sort_unique(tb_span *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, tb_cmp_span);
    size_t m = 1;
    for (size_t i = 1; i < n; i++)
        if (tb_cmp_span(&v[i], &v[m - 1]) != 0)
            v[m++] = v[i];
    return m;
}

uint64_t tb_hash(const char *a, const char *b)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *a; a++)
        h = (h ^ (unsigned char)*a) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
    for (; *b; b++)
        h = (h ^ (unsigned char)*b) * 1099511628211ULL;
    return h ? h : 1;
}

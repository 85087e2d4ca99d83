/*
 * memo.c - a measured trace kept across the runs of one job (see memo.h).
 *
 * Plan's searches run the model some 30 times on one configuration; each
 * run read its trace whole again (a 300k-row notebook trace: about 0.2 s a
 * run, a third of a plan without the scaling curve). The key is the
 * resolved [trace] source, its strings copied, so that a run whose source
 * differs in anything reads its own.
 */
#include "memo.h"

#include <stdlib.h>
#include <string.h>

#include "stall/base.h"

struct stall_trace_memo {
    bool have;
    wi_trace_src src; /* its strings below, owned */
    char *fetch, *start, *perf, *path, *ini;
    stall_measured m;
};

stall_trace_memo *wi_memo_new(void)
{
    return stall_xcalloc(1, sizeof(stall_trace_memo));
}

void wi_memo_free(stall_trace_memo *memo)
{
    if (!memo)
        return;
    if (memo->have)
        stall_measured_free(&memo->m);
    free(memo->fetch);
    free(memo->start);
    free(memo->perf);
    free(memo->path);
    free(memo->ini);
    free(memo);
}

static bool memo_str_same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static char *memo_dup(const char *s)
{
    return s ? stall_xstrdup(s) : NULL;
}

static bool memo_same(const wi_trace_src *a, const wi_trace_src *b)
{
    return a->format == b->format && memo_str_same(a->fetch, b->fetch) &&
           memo_str_same(a->start, b->start) && memo_str_same(a->perf, b->perf) &&
           memo_str_same(a->path, b->path) && a->epoch == b->epoch && a->workers == b->workers &&
           a->workers_given == b->workers_given && strcmp(a->workers_at, b->workers_at) == 0 &&
           a->prefetch == b->prefetch && strcmp(a->prefetch_at, b->prefetch_at) == 0 &&
           a->persistent == b->persistent && a->persistent_given == b->persistent_given &&
           strcmp(a->persistent_at, b->persistent_at) == 0 && memo_str_same(a->ini, b->ini);
}

bool wi_memo_take(const stall_trace_memo *memo, const wi_trace_src *src, stall_measured *m)
{
    if (!memo || !memo->have || !memo_same(&memo->src, src))
        return false;
    *m = memo->m;
    return true;
}

bool wi_memo_keep(stall_trace_memo *memo, const wi_trace_src *src, const stall_measured *m)
{
    if (!memo || memo->have)
        return false;
    memo->src = *src;
    memo->src.fetch = memo->fetch = memo_dup(src->fetch);
    memo->src.start = memo->start = memo_dup(src->start);
    memo->src.perf = memo->perf = memo_dup(src->perf);
    memo->src.path = memo->path = memo_dup(src->path);
    memo->src.ini = memo->ini = memo_dup(src->ini);
    memo->m = *m;
    memo->have = true;
    return true;
}

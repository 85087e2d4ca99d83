/*
 * detect.c - a file's kind from its content (stall/detect.h).
 */
#include "stall/detect.h"
#include "stall/io.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <zlib.h>

#include "stall/dftracer.h"
#include "stall/kineto.h"

#define DSA_FETCH_SUFFIX "_simp_fetchdifftime.csv"
#define DSA_START_SUFFIX "_simp_fetchstartdifftime.csv"

/* The header's fields, split at commas outside double quotes, quotes
 * removed; returns their count (at most max). */
static int det_fields(char *line, char **f, int max)
{
    int n = 0;
    char *w = line, *p = line;
    f[n++] = w;
    bool q = false;
    for (; *p; p++) {
        if (*p == '"') {
            q = !q;
        } else if (*p == ',' && !q) {
            *w++ = '\0';
            if (n == max)
                return n;
            f[n++] = w;
        } else {
            *w++ = *p;
        }
    }
    *w = '\0';
    return n;
}

static bool det_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The notebook's companions of path, whose own role is given. */
static int det_companions(const char *path, const char *role, stall_trace_detected *d,
                          stall_err *err)
{
    const char *suffix = strcmp(role, "fetch") == 0   ? DSA_FETCH_SUFFIX
                         : strcmp(role, "start") == 0 ? DSA_START_SUFFIX
                                                      : ".csv";
    if (!det_ends_with(path, suffix))
        return stall_err_set(err, STALL_EPARSE,
                             "%s: the notebook's %s CSV, but its name does not end in %s, so its "
                             "companions cannot be found; name the three files in an INI ([trace] "
                             "fetch, start, perf)",
                             path, role, suffix);
    size_t stem = strlen(path) - strlen(suffix);
    if (stem + strlen(DSA_START_SUFFIX) >= STALL_DETECT_PATH_MAX)
        return stall_err_set(err, STALL_EIO, "%s: path too long", path);
    snprintf(d->fetch, sizeof d->fetch, "%.*s%s", (int)stem, path, DSA_FETCH_SUFFIX);
    snprintf(d->start, sizeof d->start, "%.*s%s", (int)stem, path, DSA_START_SUFFIX);
    snprintf(d->perf, sizeof d->perf, "%.*s.csv", (int)stem, path);
    const char *need[3][2] = {
        {d->perf, "perf"}, {d->fetch, "fetch-time"}, {d->start, "fetch-start"}};
    for (int i = 0; i < 3; i++)
        if (access(need[i][0], R_OK) != 0)
            return stall_err_set(err, STALL_EIO,
                                 "%s: the notebook's %s CSV, but its %s companion %s is not beside "
                                 "it (%s); name the three files in an INI ([trace] fetch, start, "
                                 "perf)",
                                 path, role, need[i][1], need[i][0], strerror(errno));
    snprintf(d->what, sizeof d->what, "the notebook's %s CSV (dsanalyzer), with its companions",
             role);
    return 0;
}

bool stall_trace_capture_folder(const char *dir, char *csv, size_t n)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return false;
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool trace = false, other = false;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        const char *f = de->d_name;
        trace |= strcmp(f, "trace.csv") == 0;
        other |= (det_ends_with(f, ".json") && strcmp(f, "meta.json") != 0) ||
                 det_ends_with(f, ".json.gz") || det_ends_with(f, ".pfw") ||
                 det_ends_with(f, ".pfw.gz");
    }
    closedir(d);
    if (!trace || other)
        return false;
    int w = snprintf(csv, n, "%s%strace.csv", dir, det_ends_with(dir, "/") ? "" : "/");
    return w > 0 && (size_t)w < n;
}

/* A folder: per-rank PyTorch profiler files (.json, .json.gz) or dftracer
 * files (.pfw, .pfw.gz), told by their names. */
static stall_trace_kind det_folder(const char *path, stall_trace_detected *out, stall_err *err)
{
    DIR *d = opendir(path);
    if (!d) {
        stall_err_set(err, STALL_EIO, "%s: cannot open the folder: %s", path, strerror(errno));
        return STALL_TRACE_UNKNOWN;
    }
    int kineto = 0, pfw = 0, ds = 0, simp = 0, ranks = 0;
    char perf[256] = "";
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        /* the capture tool's per-rank files (docs/capture.md: trace_rank{r}.csv) */
        ranks += strncmp(de->d_name, "trace_rank", 10) == 0 && det_ends_with(de->d_name, ".csv");
        kineto += det_ends_with(de->d_name, ".json") || det_ends_with(de->d_name, ".json.gz");
        pfw += det_ends_with(de->d_name, ".pfw") || det_ends_with(de->d_name, ".pfw.gz");
        /* the notebook's perf file, beside its _simp_ companions */
        simp += det_ends_with(de->d_name, "_simp_fetchdifftime.csv");
        if (det_ends_with(de->d_name, ".csv") && !strstr(de->d_name, "_simp_") && ds++ == 0)
            snprintf(perf, sizeof perf, "%s", de->d_name);
    }
    closedir(d);
    if (pfw == 0 && kineto == 0) {
        /* A folder of the notebook's CSVs: name the file to give, which
         * finds its companions (a new user gave the folder). */
        const char *sep = det_ends_with(path, "/") ? "" : "/";
        if (ds == 1 && simp == 1)
            stall_err_set(err, STALL_EPARSE,
                          "%s: a folder, not a trace: for the notebook's CSVs give the perf "
                          "file, %s%s%s, which finds its _simp_ companions beside it",
                          path, path, sep, perf);
        else if (ranks > 0) /* the capture's files, before its merge step: a folder
                             * with trace.csv is taken as its trace.csv instead */
            stall_err_set(err, STALL_EPARSE,
                          "%s: a folder of %d per-rank capture file%s (trace_rank*.csv) and no "
                          "trace.csv: merge them first, python3 %s/stallsim_capture.py merge "
                          "%s%strace.csv %s%strace_rank*.csv, then give the folder or its "
                          "trace.csv",
                          path, ranks, ranks == 1 ? "" : "s", stall_tools_dir(), path, sep, path,
                          sep);
        else
            stall_err_set(err, STALL_EPARSE,
                          "%s: a folder without trace files: a folder holds per-rank PyTorch "
                          "profiler traces (.json, .json.gz) or DLIO dftracer traces (.pfw, "
                          ".pfw.gz); a trace in the notebook's or the tidy format is given as "
                          "its file",
                          path);
        return STALL_TRACE_UNKNOWN;
    }
    out->kind = pfw > 0 ? STALL_TRACE_DFTRACER : STALL_TRACE_KINETO;
    snprintf(out->what, sizeof out->what, "a folder of %d %s file%s", pfw > 0 ? pfw : kineto,
             pfw > 0 ? "DLIO (dftracer)" : "PyTorch profiler (Kineto)",
             (pfw > 0 ? pfw : kineto) == 1 ? "" : "s");
    return out->kind;
}

stall_trace_kind stall_trace_detect(const char *path, stall_trace_detected *out, stall_err *err)
{
    memset(out, 0, sizeof *out);
    out->prefetch = -1;
    if (strlen(path) >= STALL_DETECT_PATH_MAX) {
        stall_err_set(err, STALL_EIO, "%s: path too long", path);
        return STALL_TRACE_UNKNOWN;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        /* before a name is taken for a kind: nothing to announce */
        stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
        return STALL_TRACE_UNKNOWN;
    }
    if (S_ISDIR(st.st_mode))
        return det_folder(path, out, err);
    if (stall_input_check(path, err) != 0)
        return STALL_TRACE_UNKNOWN;
    /* The JSON traces' own names: their reader gives the precise error of a
     * file that is cut, empty or malformed. */
    bool pfw = det_ends_with(path, ".pfw") || det_ends_with(path, ".pfw.gz");
    /* A capture folder's meta.json (the run's settings) beside its trace:
     * read as a profiler trace it gave two lines, the second "no
     * DataLoader events among its 0 events". */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strcmp(base, "meta.json") == 0) {
        char folder[STALL_DETECT_PATH_MAX], csv[STALL_DETECT_PATH_MAX];
        if (base == path)
            snprintf(folder, sizeof folder, ".");
        else
            snprintf(folder, sizeof folder, "%.*s", (int)(base - path), path);
        if (stall_trace_capture_folder(folder, csv, sizeof csv)) {
            stall_err_set(err, STALL_EPARSE,
                          "%s: the capture's settings (stallsim_capture.py's meta.json), not a "
                          "trace: give its folder or %s",
                          path, csv);
            return STALL_TRACE_UNKNOWN;
        }
    }
    if (pfw || det_ends_with(path, ".json") || det_ends_with(path, ".json.gz")) {
        out->kind = pfw ? STALL_TRACE_DFTRACER : STALL_TRACE_KINETO;
        snprintf(out->what, sizeof out->what, "%s",
                 pfw ? "a DLIO (dftracer) trace" : "a PyTorch profiler (Kineto) trace");
        return out->kind;
    }
    /* The first 64 KiB, decompressed when gzipped (zlib reads a plain file
     * as it is), without a byte order mark. */
    gzFile f = gzopen(path, "rb");
    if (!f) {
        stall_err_set(err, STALL_EIO, "%s: cannot open: %s", path, strerror(errno));
        return STALL_TRACE_UNKNOWN;
    }
    static const size_t cap = 65536;
    char *buf = stall_xmalloc(cap + 1);
    int got = gzread(f, buf, (unsigned)cap);
    bool gz = gzdirect(f) == 0;
    gzclose(f);
    size_t n = got > 0 ? (size_t)got : 0;
    buf[n] = '\0';
    char *s = buf;
    if (n >= 3 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
        s += 3;
    stall_trace_kind kind = STALL_TRACE_UNKNOWN;
    /* JSON traces first: a dftracer file opens with "[" as an INI section does. */
    size_t len = n - (size_t)(s - buf);
    if (!det_ends_with(path, ".ini") &&
        (stall_kineto_probe(s, len) || stall_dftracer_probe(s, len))) {
        bool kineto = stall_kineto_probe(s, len);
        out->kind = kineto ? STALL_TRACE_KINETO : STALL_TRACE_DFTRACER;
        snprintf(out->what, sizeof out->what, "%s",
                 kineto ? "a PyTorch profiler (Kineto) trace" : "a DLIO (dftracer) trace");
        free(buf);
        return out->kind;
    }
    if (gz) {
        stall_err_set(err, STALL_EPARSE,
                      "%s: a gzip-compressed file that is no PyTorch profiler or dftracer trace: "
                      "stallsim reads tidy CSV traces and the notebook's CSVs uncompressed "
                      "(decompress it if it is one of those)",
                      path);
        free(buf);
        return STALL_TRACE_UNKNOWN;
    }
    /* An INI: by its name, or a first line that is a [section], a comment
     * or blank (CSV headers are none of these). */
    const char *p = s;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
        p++;
    if (det_ends_with(path, ".ini") || *p == '[' || *p == ';' || *p == '#') {
        out->kind = STALL_TRACE_INI;
        snprintf(out->what, sizeof out->what, "a scenario INI");
        free(buf);
        return STALL_TRACE_INI;
    }
    char *nl = strpbrk(s, "\r\n");
    char *row = NULL; /* the first data row, for a tidy trace's prefetch */
    if (nl) {
        row = nl + strspn(nl, "\r\n");
        *nl = '\0';
    }
    char *fld[64];
    int nf = det_fields(s, fld, 64);
    int skip = nf > 1 && fld[0][0] == '\0'; /* pandas' unnamed index column */
    if (nf - skip >= 3 && strcmp(fld[skip], "rank") == 0 && strcmp(fld[skip + 1], "epoch") == 0 &&
        strcmp(fld[skip + 2], "batch") == 0) {
        kind = STALL_TRACE_TIDY;
        snprintf(out->what, sizeof out->what, "a tidy trace%s",
                 skip ? " (with pandas' index column)" : "");
        /* The loader settings the trace records. */
        int at = -1;
        for (int i = 0; i < nf; i++) {
            out->has_workers |= strcmp(fld[i], "workers") == 0;
            if (strcmp(fld[i], "prefetch") == 0)
                out->has_prefetch = true, at = i;
        }
        /* Its value on the first row (the reader holds it to every row). */
        out->prefetch = -1;
        char *end = row ? strpbrk(row, "\r\n") : NULL;
        if (at >= 0 && end) {
            *end = '\0';
            char *val[64];
            char *e = NULL;
            if (det_fields(row, val, 64) > at) {
                long v = strtol(val[at], &e, 10);
                if (e != val[at] && *e == '\0' && v >= 0 && v <= INT_MAX)
                    out->prefetch = (int)v;
            }
        }
    } else if (nf >= 3 && fld[0][0] == '\0' && strcmp(fld[1], "Epoch") == 0) {
        const char *role = NULL;
        if (strcmp(fld[2], "Step") == 0)
            role = "perf";
        else if (strcmp(fld[2], "Index number") == 0 && nf >= 4 &&
                 strncmp(fld[3], "Fetch time (sec)_gpu", 20) == 0)
            role = "fetch";
        else if (strcmp(fld[2], "Index number") == 0 && nf >= 4 &&
                 strncmp(fld[3], "Start time_gpu", 14) == 0)
            role = "start";
        if (role && det_companions(path, role, out, err) == 0)
            kind = STALL_TRACE_DSANALYZER;
        else if (role) {
            free(buf);
            return STALL_TRACE_UNKNOWN;
        }
    }
    free(buf);
    if (kind == STALL_TRACE_UNKNOWN) {
        out->unrecognised = true;
        stall_err_set(err, STALL_EPARSE,
                      "%s:1: not a trace or scenario stallsim reads: expected a tidy trace (header "
                      "rank,epoch,batch,...), one of the notebook's CSVs (header ,Epoch,Step,... "
                      "or ,Epoch,Index number,...), a PyTorch profiler or DLIO (dftracer) JSON "
                      "trace, or an INI ([section] lines)",
                      path);
        return kind;
    }
    out->kind = kind;
    return kind;
}

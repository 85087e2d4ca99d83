/*
 * timeline: the Chrome Trace Event JSON of a measured and a simulated run
 * is valid JSON (a small recursive-descent checker here, so CI needs
 * nothing more), its complete events nest per track and are monotone in
 * time per track, counters are monotone per series, every flow end has a
 * start, and the window and rank filters keep what they say.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stall/analyze.h"
#include "stall/tlexport.h"
#include "stall/io.h"

#include "tmpdir.h"

static char tdir[] = "/tmp/stall_timeline_XXXXXX";
static void tl_setup(void)
{
    tmpdir_make(tdir);
}
static void tl_teardown(void)
{
    tmpdir_remove(tdir);
}
TestSuite(timeline, .init = tl_setup, .fini = tl_teardown, .timeout = 120);

/* ---- a JSON checker that also collects the events ---- */

typedef struct ev {
    char ph;
    long pid, tid;
    double ts, dur;
    long long id;
    char name[64];
} ev;

typedef struct js {
    const char *p;
    ev *evs;
    size_t nev, cap;
    int depth;
} js;

static void ws(js *j)
{
    while (isspace((unsigned char)*j->p))
        j->p++;
}

static int jvalue(js *j, ev *into, const char *key);

static int jstring(js *j, char *out, size_t cap)
{
    if (*j->p != '"')
        return -1;
    j->p++;
    size_t n = 0;
    while (*j->p && *j->p != '"') {
        char c = *j->p++;
        if ((unsigned char)c < 0x20)
            return -1;
        if (c == '\\') {
            c = *j->p++;
            if (c == 'u') {
                for (int i = 0; i < 4; i++)
                    if (!isxdigit((unsigned char)*j->p++))
                        return -1;
                c = '?';
            } else if (!strchr("\"\\/bfnrt", c)) {
                return -1;
            }
        }
        if (out && n + 1 < cap)
            out[n++] = c;
    }
    if (*j->p != '"')
        return -1;
    j->p++;
    if (out)
        out[n] = '\0';
    return 0;
}

static int jnumber(js *j, double *v)
{
    const char *s = j->p;
    if (*j->p == '-')
        j->p++;
    if (!isdigit((unsigned char)*j->p))
        return -1;
    if (*j->p == '0' && isdigit((unsigned char)j->p[1]))
        return -1; /* no leading zeros in JSON */
    while (isdigit((unsigned char)*j->p))
        j->p++;
    if (*j->p == '.') {
        j->p++;
        if (!isdigit((unsigned char)*j->p))
            return -1;
        while (isdigit((unsigned char)*j->p))
            j->p++;
    }
    if (*j->p == 'e' || *j->p == 'E') {
        j->p++;
        if (*j->p == '+' || *j->p == '-')
            j->p++;
        if (!isdigit((unsigned char)*j->p))
            return -1;
        while (isdigit((unsigned char)*j->p))
            j->p++;
    }
    if (v)
        *v = strtod(s, NULL);
    return 0;
}

static int jobject(js *j, bool is_event)
{
    ev e = {.ph = 0, .pid = -1, .tid = -1, .dur = -1, .id = -1};
    j->p++;
    ws(j);
    if (*j->p == '}') {
        j->p++;
        return 0;
    }
    for (;;) {
        char key[64];
        ws(j);
        if (jstring(j, key, sizeof key))
            return -1;
        ws(j);
        if (*j->p++ != ':')
            return -1;
        ws(j);
        if (jvalue(j, is_event ? &e : NULL, key))
            return -1;
        ws(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p == '}') {
            j->p++;
            break;
        }
        return -1;
    }
    if (is_event) {
        if (j->nev == j->cap) {
            j->cap = j->cap ? 2 * j->cap : 1024;
            j->evs = realloc(j->evs, j->cap * sizeof *j->evs);
        }
        j->evs[j->nev++] = e;
    }
    return 0;
}

static int jarray(js *j, bool of_events)
{
    j->p++;
    ws(j);
    if (*j->p == ']') {
        j->p++;
        return 0;
    }
    for (;;) {
        ws(j);
        if (of_events) {
            if (*j->p != '{' || jobject(j, true))
                return -1;
        } else if (jvalue(j, NULL, NULL)) {
            return -1;
        }
        ws(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p == ']') {
            j->p++;
            return 0;
        }
        return -1;
    }
}

static int jvalue(js *j, ev *into, const char *key)
{
    ws(j);
    if (++j->depth > 64)
        return -1;
    int rc;
    if (*j->p == '{') {
        rc = jobject(j, false);
    } else if (*j->p == '[') {
        rc = jarray(j, key && strcmp(key, "traceEvents") == 0);
    } else if (*j->p == '"') {
        char s[64];
        rc = jstring(j, s, sizeof s);
        if (rc == 0 && into && key && strcmp(key, "ph") == 0)
            into->ph = s[0];
        if (rc == 0 && into && key && strcmp(key, "name") == 0)
            snprintf(into->name, sizeof into->name, "%s", s);
    } else if (strncmp(j->p, "true", 4) == 0 || strncmp(j->p, "null", 4) == 0) {
        j->p += 4;
        rc = 0;
    } else if (strncmp(j->p, "false", 5) == 0) {
        j->p += 5;
        rc = 0;
    } else {
        double v = 0;
        rc = jnumber(j, &v);
        if (rc == 0 && into && key) {
            if (strcmp(key, "pid") == 0)
                into->pid = (long)v;
            else if (strcmp(key, "tid") == 0)
                into->tid = (long)v;
            else if (strcmp(key, "ts") == 0)
                into->ts = v;
            else if (strcmp(key, "dur") == 0)
                into->dur = v;
            else if (strcmp(key, "id") == 0)
                into->id = (long long)v;
        }
    }
    j->depth--;
    return rc;
}

static char *slurp(const char *path)
{
    char *s = stall_read_file(path, NULL);
    cr_assert_not_null(s, "%s", path);
    return s;
}

/* Parses path and checks the timeline's structure; returns the events. */
static js check_file(const char *path, bool flows_closed)
{
    char *text = slurp(path);
    js j = {.p = text};
    ws(&j);
    cr_assert_eq(*j.p, '{', "%s: not an object", path);
    cr_assert_eq(jvalue(&j, NULL, NULL), 0, "%s: invalid JSON near offset %ld", path,
                 (long)(j.p - text));
    ws(&j);
    cr_assert_eq(*j.p, '\0', "%s: text after the JSON value", path);
    cr_assert_gt(j.nev, 0);
    /* Complete events: per (pid, tid) in file order, monotone start and
     * nested (a stack of open ends). */
    for (size_t a = 0; a < j.nev; a++) {
        const ev *x = &j.evs[a];
        cr_assert(x->ph == 'X' || x->ph == 'M' || x->ph == 'C' || x->ph == 's' || x->ph == 'f',
                  "unknown ph %c", x->ph);
        if (x->ph == 'X')
            cr_assert(x->dur >= 0 && x->pid >= 0 && x->tid >= 0, "event %zu incomplete", a);
    }
    double *stack = malloc(j.nev * sizeof *stack);
    for (size_t a = 0; a < j.nev; a++) {
        const ev *x = &j.evs[a];
        if (x->ph != 'X' || x->name[0] == '\0')
            continue;
        bool first = true;
        for (size_t b = 0; b < a; b++)
            if (j.evs[b].ph == 'X' && j.evs[b].pid == x->pid && j.evs[b].tid == x->tid) {
                first = false;
                break;
            }
        if (!first)
            continue;
        /* walk this track */
        size_t sp = 0;
        double last = -1e300;
        for (size_t b = a; b < j.nev; b++) {
            const ev *y = &j.evs[b];
            if (y->ph != 'X' || y->pid != x->pid || y->tid != x->tid)
                continue;
            cr_assert_geq(y->ts, last, "track %ld/%ld: event %zu at %f before %f", y->pid, y->tid,
                          b, y->ts, last);
            last = y->ts;
            while (sp > 0 && stack[sp - 1] <= y->ts + 1e-9)
                sp--;
            if (sp > 0)
                cr_assert_leq(y->ts + y->dur, stack[sp - 1] + 1e-9,
                              "track %ld/%ld: event %zu overlaps its parent", y->pid, y->tid, b);
            stack[sp++] = y->ts + y->dur;
        }
    }
    free(stack);
    /* Counters monotone per (pid, name); flows closed. */
    for (size_t a = 0; a < j.nev; a++) {
        const ev *x = &j.evs[a];
        if (x->ph == 'C')
            for (size_t b = a + 1; b < j.nev; b++)
                if (j.evs[b].ph == 'C' && j.evs[b].pid == x->pid &&
                    strcmp(j.evs[b].name, x->name) == 0) {
                    cr_assert_gt(j.evs[b].ts, x->ts, "counter %s not monotone", x->name);
                    break;
                }
        if ((x->ph == 'f' || x->ph == 's') && flows_closed) {
            char other = x->ph == 'f' ? 's' : 'f';
            bool found = false;
            for (size_t b = 0; b < j.nev && !found; b++)
                found = j.evs[b].ph == other && j.evs[b].id == x->id;
            cr_assert(found, "flow %s %lld has no %s", x->ph == 'f' ? "end" : "start", x->id,
                      x->ph == 'f' ? "start" : "end");
        }
    }
    free(text);
    return j;
}

static size_t count(const js *j, char ph, const char *name)
{
    size_t n = 0;
    for (size_t a = 0; a < j->nev; a++)
        n += j->evs[a].ph == ph && (!name || strcmp(j->evs[a].name, name) == 0);
    return n;
}

static stall_tidy_trace *load(const char *rel, int workers)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", STALL_SOURCE_DIR, rel);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_an_load(path, workers, &t, &err), 0, "%s", err.msg);
    return t;
}

Test(timeline, measured_ddp_trace_is_valid_and_complete)
{
    stall_tidy_trace *t = load("traces/ddp2_straggler/trace.csv", 0);
    char out[512];
    snprintf(out, sizeof out, "%s/m.json", tdir);
    stall_err err = {0};
    cr_assert_eq(stall_timeline_export(t, NULL, out, &err), 0, "%s", err.msg);
    js j = check_file(out, true);
    size_t rows = (size_t)t->ranks * (size_t)t->epochs * (size_t)t->batches;
    cr_expect_eq(count(&j, 'X', "compute"), rows);
    cr_expect_eq(count(&j, 's', NULL), rows, "one flow per batch");
    cr_expect_eq(count(&j, 'f', NULL), rows);
    cr_expect_gt(count(&j, 'X', "barrier wait"), 0);
    cr_expect_gt(count(&j, 'C', "prefetch queue depth"), 0);
    cr_expect_gt(count(&j, 'C', "batches in flight"), 0);
    free(j.evs);
    stall_tl_opts o = {.rank_hi = -1};
    cr_assert_eq(stall_tl_parse_window("1:2", &o), 0);
    cr_assert_eq(stall_tl_parse_ranks("1", &o), 0);
    cr_assert_eq(stall_timeline_export(t, &o, out, &err), 0, "%s", err.msg);
    js w = check_file(out, true);
    cr_expect_gt(count(&w, 's', NULL), 0);
    cr_expect_eq(count(&w, 's', NULL), count(&w, 'f', NULL));
    free(w.evs);
    stall_tidy_free(t);
}

static double total_dur_s(const js *j, const char *name)
{
    double us = 0;
    for (size_t a = 0; a < j->nev; a++)
        if (j->evs[a].ph == 'X' && strcmp(j->evs[a].name, name) == 0)
            us += j->evs[a].dur;
    return us * 1e-6;
}

/* A recorded checkpoint write is its own slice, as analyze counts it: it
 * was drawn as 'all-reduce + step' (0.26 s after batch 13 of
 * ckpt_w2_n14), measured and simulated alike. */
Test(timeline, checkpoints_are_their_own_slices_as_analyze_counts_them)
{
    stall_tidy_trace *t = load("traces/ckpt_w2_n14/trace.csv", 0);
    size_t writes = 0, rows = (size_t)t->ranks * (size_t)t->epochs * (size_t)t->batches;
    for (size_t i = 0; i < rows; i++)
        writes += t->ckpt_start[i] >= 0;
    cr_assert_gt(writes, 0);
    stall_analysis a;
    stall_analyze(t, &a);
    char out[512];
    snprintf(out, sizeof out, "%s/ck.json", tdir);
    stall_err err = {0};
    cr_assert_eq(stall_timeline_export(t, NULL, out, &err), 0, "%s", err.msg);
    js j = check_file(out, true);
    cr_expect_eq(count(&j, 'X', "checkpoint"), writes);
    double ck = total_dur_s(&j, "checkpoint"), post = total_dur_s(&j, "all-reduce + step");
    cr_expect(fabs(ck - a.rank[0].ckpt_s) < 1e-5, "checkpoint %.6f s, analyze %.6f s", ck,
              a.rank[0].ckpt_s);
    cr_expect(fabs(post - a.rank[0].post_s) < 1e-5, "all-reduce + step %.6f s, analyze post %.6f s",
              post, a.rank[0].post_s);
    free(j.evs);
    stall_analysis_free(&a);
    stall_tidy_free(t);
}

Test(timeline, dsanalyzer_without_workers_uses_lanes)
{
    stall_tidy_trace *t = load("configs/example.ini", 0);
    char out[512];
    snprintf(out, sizeof out, "%s/d.json", tdir);
    stall_err err = {0};
    stall_tl_opts o = {.rank_hi = -1};
    cr_assert_eq(stall_tl_parse_window("100:160", &o), 0);
    cr_assert_eq(stall_tl_parse_ranks("1-2", &o), 0);
    cr_assert_eq(stall_timeline_export(t, &o, out, &err), 0, "%s", err.msg);
    /* A window cuts batches whose fetch or compute lies outside it: their
     * flow arrows are left out whole (a new user's report: 19 starts for
     * 18 ends). */
    js j = check_file(out, true);
    for (size_t a = 0; a < j.nev; a++) {
        const ev *x = &j.evs[a];
        cr_expect(x->pid == 2 || x->pid == 3, "rank filter let pid %ld through", x->pid);
        if (x->ph == 'X')
            cr_expect(x->ts <= 160e6 && x->ts + x->dur >= 100e6, "event outside the window");
    }
    cr_expect_gt(count(&j, 'X', "wait for data"), 0);
    free(j.evs);
    o.rank_hi = 4;
    cr_expect_eq(stall_timeline_export(t, &o, out, &err), STALL_ECONFIG);
    /* A window after the run's end (the epoch is 2451 s) would hold no
     * event: refused, saying where the run ends, and no file written. */
    stall_tl_opts late = {.rank_hi = -1};
    cr_assert_eq(stall_tl_parse_window("5000:6000", &late), 0);
    snprintf(out, sizeof out, "%s/late.json", tdir);
    cr_expect_eq(stall_timeline_export(t, &late, out, &err), STALL_ECONFIG);
    cr_expect(strstr(err.msg, "starts after the run's last iteration (2450.910 s"), "%s", err.msg);
    cr_expect_neq(access(out, F_OK), 0, "a file was written");
    stall_tidy_free(t);
}

Test(timeline, option_parsing_rejects_bad_input)
{
    stall_tl_opts o = {.rank_hi = -1};
    cr_expect_eq(stall_tl_parse_window("5:2", &o), -1);
    cr_expect_eq(stall_tl_parse_window("abc", &o), -1);
    cr_expect_eq(stall_tl_parse_window("1:", &o), -1);
    cr_expect_eq(stall_tl_parse_ranks("3-1", &o), -1);
    cr_expect_eq(stall_tl_parse_ranks("x", &o), -1);
    cr_expect_eq(stall_tl_parse_ranks("2", &o), 0);
    cr_expect_eq(o.rank_lo, 2);
    cr_expect_eq(o.rank_hi, 2);
}

static stall_time s_fetch(void *ctx, int e, int r, int64_t k)
{
    (void)ctx, (void)e;
    return 20000000 + 7000000 * ((k + r) % 3);
}
static stall_time s_compute(void *ctx, int e, int r, int64_t k)
{
    (void)ctx, (void)e, (void)k;
    return r == 1 ? 25000000 : 8000000;
}

Test(timeline, simulated_run_is_valid_with_one_track_per_worker)
{
    stall_model_params p;
    stall_model_defaults(&p);
    p.ranks = 3;
    p.workers = 2;
    p.prefetch = 2;
    p.batches = 30;
    p.epochs = 2;
    p.startup = 5000000;
    stall_durations d = {.fetch = s_fetch, .compute = s_compute};
    stall_an_recorder rec = {0};
    stall_an_params(&rec, &p);
    stall_err err = {0};
    cr_assert_eq(stall_model_run(&p, &d, stall_an_record, &rec, NULL, &err), 0, "%s", err.msg);
    stall_tidy_trace *t = stall_an_recorder_take(&rec);
    cr_assert_not_null(t);
    char out[512];
    snprintf(out, sizeof out, "%s/s.json", tdir);
    cr_assert_eq(stall_timeline_export(t, NULL, out, &err), 0, "%s", err.msg);
    js j = check_file(out, true);
    cr_expect_eq(count(&j, 'X', "compute"), 3 * 2 * 30);
    cr_expect_eq(count(&j, 'M', "thread_name"), 3 * (1 + 2), "a loop and 2 worker tracks per rank");
    cr_expect_gt(count(&j, 'X', "barrier wait"), 0, "ranks 0 and 2 wait for rank 1");
    free(j.evs);
    stall_tidy_free(t);
}

Test(timeline, a_rerun_removes_the_temporary_file_a_killed_one_left)
{
    /* SIGKILL leaves <file>.tmp.<pid> beside the timeline (no handler can
     * remove it); the next timeline into the same file removed nothing: it
     * stayed for good. Now it is removed when its process is gone, never a
     * live process's. A dead pid: a child's, reaped. */
    pid_t dead = fork();
    cr_assert_neq(dead, -1);
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    char out[512], stale[600], live[600], cmd[2048];
    snprintf(out, sizeof out, "%s/k.json", tdir);
    snprintf(stale, sizeof stale, "%s.tmp.%ld", out, (long)dead);
    snprintf(live, sizeof live, "%s.tmp.%ld", out, (long)getpid());
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(i ? live : stale, "w");
        cr_assert_not_null(f);
        fputs("{\"traceEvents\": [", f);
        fclose(f);
    }
    snprintf(cmd, sizeof cmd, "%s/stallsim timeline %s/traces/w2/trace.csv -o %s >/dev/null 2>&1",
             STALL_BINARY_DIR, STALL_SOURCE_DIR, out);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: status %d", cmd, st);
    struct stat sb;
    cr_expect_eq(stat(out, &sb), 0, "no timeline written");
    cr_expect_neq(stat(stale, &sb), 0, "the killed run's %s was left", stale);
    cr_expect_eq(stat(live, &sb), 0, "a live process's temporary file was removed");
}

/* A timeline that cannot be written (here: past the file-size limit, as on
 * a full disk) is an error naming the file, and leaves nothing. The write
 * failure came back as STALL_EIO with no message: `stallsim timeline`
 * printed "stallsim: success" and exited 0, and `run`/`validate
 * --timeline` exited 0 without their result folder. */
Test(timeline, a_write_failure_is_an_error_naming_the_file)
{
    stall_tidy_trace *t = load("traces/w2/trace.csv", 0);
    char out[512];
    snprintf(out, sizeof out, "%s/full.json", tdir);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 4096;
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    stall_err err = {0};
    int rc = stall_timeline_export(t, NULL, out, &err);
    setrlimit(RLIMIT_FSIZE, &old);
    cr_expect_eq(rc, STALL_EIO, "rc %d", rc);
    cr_expect_eq(err.code, STALL_EIO, "err.code %d (%s)", err.code, err.msg);
    cr_expect(strstr(err.msg, out) != NULL && strstr(err.msg, "write failed") != NULL, "%s",
              err.msg);
    struct stat sb;
    cr_expect_neq(stat(out, &sb), 0, "a partial timeline was left");
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid());
    cr_expect_neq(stat(tmp, &sb), 0, "its temporary file was left");
    stall_tidy_free(t);
}

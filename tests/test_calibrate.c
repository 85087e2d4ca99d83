/* calibrate's report (issue 17 item 6): a poor fit and a fit on a bound of
 * the search are said so, and the table's columns name the traces by short
 * unique names (never a path cut from the left). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stall/calibrate.h"
#include "stall/measured.h"

static char *print(const stall_calibration *c, const char *const *paths)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    stall_calibration_print(c, paths, f);
    fclose(f);
    return buf;
}

/* The case: --cores 2, two traces, the search's bounds 100%/100%
 * and an rms error of 15.7%. */
Test(calibrate, a_poor_fit_on_its_bounds_is_said_so)
{
    int workers[2] = {1, 2};
    double fetch[2] = {0.07, 0.09}, cont[2] = {1.0, 1.5}, meas[2] = {4.4, 2.7},
           pred[4] = {4.4, 2.2, 4.3, 2.7};
    stall_calibration c = {.n = 2,
                           .cores = 2,
                           .cores_given = true,
                           .fetch_share = 1.0,
                           .compute_share = 1.0,
                           .rms_pct = 15.7,
                           .fetch_share_lo = 1.0,
                           .fetch_share_hi = 1.0,
                           .compute_share_lo = 1.0,
                           .compute_share_hi = 1.0,
                           .fit_io_s = 0.05,
                           .fit_cpu_s = 0.01,
                           .workers = workers,
                           .mean_fetch_s = fetch,
                           .contention = cont,
                           .measured_s = meas,
                           .predicted_s = pred};
    const char *paths[2] = {"/data/runs/traces/w1/trace.csv", "/data/runs/traces/w2/trace.csv"};
    char *out = print(&c, paths);
    cr_assert(strstr(out, "warning: poor fit: the best shares still predict the traces' epoch "
                          "times with an rms error of 15.7% (above 5%)"),
              "%s", out);
    cr_assert(strstr(out, "the fetch CPU share is 100%, the most it can be"), "%s", out);
    cr_assert(strstr(out, "the compute CPU share is 100%, the most it can be"), "%s", out);
    cr_assert(strstr(out, " ces/w1/trace.csv") == NULL, "%s", out);
    cr_assert(strstr(out, "to                                              w1               w2\n"),
              "%s", out);
    free(out);
    /* A good fit inside its range: no warning. */
    c.rms_pct = 1.0;
    c.fetch_share = 0.4;
    c.compute_share = 0.5;
    out = print(&c, paths);
    cr_assert(strstr(out, "warning") == NULL, "%s", out);
    free(out);
    /* Names that would repeat, or be empty: the whole paths. */
    const char *same[2] = {"a/trace.csv", "a/trace.csv"};
    out = print(&c, same);
    cr_assert(strstr(out, "to                                     a/trace.csv      a/trace.csv\n"),
              "%s", out);
    free(out);
}

/* ---- the notebook's (dsanalyzer) traces, and INIs of them ---- */

#include <math.h>

#include "tmpdir.h"

static char tdir[] = "/tmp/stall_cal_XXXXXX";
static void cal_setup(void)
{
    tmpdir_make(tdir);
}
static void cal_teardown(void)
{
    tmpdir_remove(tdir);
}
TestSuite(calds, .init = cal_setup, .fini = cal_teardown, .timeout = 300);

static const char *const W[3] = {"w1", "w2", "w4"};

/* traces/<w>/trace.csv in the notebook's three CSVs and an INI of them
 * (tdir/<w>.ini, [trace] epoch = 1) by the real converter. */
static void convert(const char *w)
{
    char cmd[1200];
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 %s/tools/tidy_to_dsanalyzer.py --ini --epoch 1 %s/traces/%s %s "
             ">/dev/null",
             STALL_SOURCE_DIR, STALL_SOURCE_DIR, w, tdir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

/* Epoch 1 of traces/<w>/trace.csv as a tidy trace of one epoch, in
 * tdir/<sub>/<w>.csv: as captured (view = false), or holding only what the
 * notebook's format holds (view = true): epoch_start at the first request,
 * compute_end at ready + iteration time - max stall (docs/model.md 2.4; for
 * these one-rank traces iter_end), batch k on worker k mod workers, no
 * bytes, samples, pin_memory or persistent columns. */
static void epoch1(const char *w, const char *sub, bool view, char *out, size_t n)
{
    char in[600], dir[300];
    snprintf(in, sizeof in, "%s/traces/%s/trace.csv", STALL_SOURCE_DIR, w);
    snprintf(dir, sizeof dir, "%s/%s", tdir, sub);
    mkdir(dir, 0700);
    snprintf(out, n, "%s/%s.csv", dir, w);
    FILE *f = fopen(in, "r"), *g = fopen(out, "w");
    cr_assert(f && g);
    char line[1024], first_request[64] = "";
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert(strncmp(line,
                      "rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,"
                      "compute_end,bytes,samples,epoch_start,workers,prefetch,",
                      119) == 0,
              "%s", line);
    fputs(view ? "rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,"
                 "compute_end,epoch_start,workers,prefetch\n"
               : line,
          g);
    while (fgets(line, sizeof line, f)) {
        char *c[20], *save = NULL;
        int nc = 0;
        char copy[1024];
        snprintf(copy, sizeof copy, "%s", line);
        for (char *t = strtok_r(copy, ",\n", &save); t && nc < 20; t = strtok_r(NULL, ",\n", &save))
            c[nc++] = t;
        cr_assert(nc >= 15 && strcmp(c[0], "0") == 0, "one rank: %s", line);
        if (strcmp(c[1], "1") != 0)
            continue;
        if (!view) {
            fprintf(g, "%s,0,%s", c[0], strchr(strchr(line, ',') + 1, ',') + 1);
            continue;
        }
        long k = atol(c[2]), workers = atol(c[13]);
        if (k == 0)
            snprintf(first_request, sizeof first_request, "%s", c[6]);
        fprintf(g, "0,0,%ld,%ld,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", k, k % workers, c[4], c[5], c[6],
                c[7], c[8], c[8], first_request, c[13], c[14]);
    }
    fclose(f);
    fclose(g);
}

static stall_calibration fit(const char *const *paths, int n)
{
    stall_calibration c;
    stall_err err = {0};
    cr_assert_eq(stall_calibrate_fit(paths, n, 0, 0, &c, &err), 0, "%s", err.msg);
    return c;
}

static void same(const stall_calibration *a, const stall_calibration *b, double tol)
{
    cr_assert_eq(a->cores, b->cores);
    cr_assert(fabs(a->fetch_share - b->fetch_share) < 1e-12);
    cr_assert(fabs(a->compute_share - b->compute_share) < 1e-12);
    cr_assert(fabs(a->rms_pct - b->rms_pct) < tol, "rms %.9f vs %.9f", a->rms_pct, b->rms_pct);
    for (int i = 0; i < a->n; i++) {
        cr_assert_eq(a->workers[i], b->workers[i]);
        cr_assert(fabs(a->mean_fetch_s[i] - b->mean_fetch_s[i]) < 1e-12);
        cr_assert(fabs(a->contention[i] - b->contention[i]) < tol);
        cr_assert(fabs(a->measured_s[i] - b->measured_s[i]) < tol);
        for (int j = 0; j < a->n; j++)
            cr_assert(fabs(a->predicted_s[i * a->n + j] - b->predicted_s[i * b->n + j]) < tol,
                      "%d from %d: %.9f vs %.9f", j, i, a->predicted_s[i * a->n + j],
                      b->predicted_s[i * b->n + j]);
    }
}

/* The oracle: the same runs as tidy traces. Converted to the notebook's
 * format (tools/tidy_to_dsanalyzer.py) and read through INIs, calibrate
 * gives what it gives on the tidy traces of the same epoch holding what
 * that format holds, figure for figure; against the tidy traces as
 * captured, what the format loses moves only what it must: the measured
 * epoch starts at the first request, not at iter(loader) (each epoch
 * shorter by that gap: the workers' start-up, 6, 24 and 41 ms), the
 * compute ends at the iteration's end, and the workers are inferred (1, 2
 * and 4, as captured); the mean fetches are the same to the nanosecond and
 * the fitted cores and fetch share the same. */
Test(calds, dsanalyzer_inis_give_the_tidy_traces_answer)
{
    char ini[3][600], view[3][600], orig[3][600];
    const char *pi[3], *pv[3], *po[3];
    for (int i = 0; i < 3; i++) {
        convert(W[i]);
        snprintf(ini[i], sizeof ini[i], "%s/%s.ini", tdir, W[i]);
        epoch1(W[i], "view", true, view[i], sizeof view[i]);
        epoch1(W[i], "orig", false, orig[i], sizeof orig[i]);
        pi[i] = ini[i], pv[i] = view[i], po[i] = orig[i];
    }
    stall_calibration d = fit(pi, 3), v = fit(pv, 3), o = fit(po, 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(d.workers_from[i], STALL_WORKERS_INFERRED);
    same(&d, &v, 1e-9);
    /* Against the traces as captured. */
    cr_assert_eq(d.cores, o.cores);
    cr_assert_eq(d.cores, 2, "fitted %d cores", d.cores);
    cr_assert(fabs(d.fetch_share - o.fetch_share) < 1e-12, "fetch share %.2f vs %.2f",
              d.fetch_share, o.fetch_share);
    cr_assert(d.compute_share >= o.compute_share_lo && d.compute_share <= o.compute_share_hi &&
                  o.compute_share >= d.compute_share_lo && o.compute_share <= d.compute_share_hi,
              "compute share %.2f vs %.2f: each in the other's near-best range", d.compute_share,
              o.compute_share);
    cr_assert(fabs(d.rms_pct - o.rms_pct) < 0.5, "rms %.2f%% vs %.2f%%", d.rms_pct, o.rms_pct);
    const double gap[3] = {0.006347, 0.024278, 0.040801}; /* request - epoch_start, batch 0 */
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(d.workers[i], o.workers[i]);
        cr_assert(fabs(d.mean_fetch_s[i] - o.mean_fetch_s[i]) < 1e-12);
        cr_assert(fabs(o.measured_s[i] - d.measured_s[i] - gap[i]) < 1e-6,
                  "%s: measured %.6f vs %.6f", W[i], o.measured_s[i], d.measured_s[i]);
        cr_assert(fabs(d.contention[i] - o.contention[i]) < 0.02, "%s: %.3f vs %.3f", W[i],
                  d.contention[i], o.contention[i]);
    }
    stall_calibration_free(&d);
    stall_calibration_free(&v);
    stall_calibration_free(&o);
}

/* A tidy trace beside INIs of the notebook's traces, and the notebook's perf
 * CSV given directly (its companions beside it): the worker counts as run
 * and validate take them, said so; an INI's keys calibrate does not use are
 * listed as left out. */
Test(calds, mixed_inputs_and_the_keys_left_out)
{
    for (int i = 1; i < 3; i++)
        convert(W[i]);
    char ini[600], csv[600], tidy[600];
    snprintf(ini, sizeof ini, "%s/w2_keys.ini", tdir);
    FILE *f = fopen(ini, "w");
    cr_assert_not_null(f);
    fputs("[scenario]\nmode = model\n[trace]\nformat = dsanalyzer\nfetch = "
          "w2_simp_fetchdifftime.csv\nstart = w2_simp_fetchstartdifftime.csv\nperf = w2.csv\n"
          "epoch = 2\nworkers = 2\nprefetch_factor = 2\n[loader]\nworkers = 8\n[cluster]\ncores "
          "= 4\n[report]\nsamples = 16\n[sweep]\nloader.workers = 1, 2\n",
          f);
    fclose(f);
    snprintf(csv, sizeof csv, "%s/w4.csv", tdir);
    snprintf(tidy, sizeof tidy, "%s/traces/w1/trace.csv", STALL_SOURCE_DIR);
    const char *paths[3] = {tidy, ini, csv};
    stall_calibration c = fit(paths, 3);
    cr_assert_eq(c.workers[0], 1);
    cr_assert_eq(c.workers[1], 2);
    cr_assert_eq(c.workers[2], 4);
    cr_assert_eq(c.workers_from[0], STALL_WORKERS_TRACE);
    cr_assert_eq(c.workers_from[1], STALL_WORKERS_GIVEN);
    cr_assert_eq(c.workers_from[2], STALL_WORKERS_INFERRED);
    cr_assert_eq(c.cores, 2);
    cr_assert(c.rms_pct < STALL_CAL_POOR_PCT, "rms %.2f%%", c.rms_pct);
    char *out = print(&c, paths);
    cr_assert(strstr(out, "w2_keys.ini: workers per GPU 2 from [trace] workers; left out "
                          "(calibrate reads the measured run of [trace]): [scenario] mode, "
                          "[report] samples, [loader] workers, [cluster] cores, [sweep] "
                          "loader.workers\n"),
              "%s", out);
    cr_assert(strstr(out, "w4.csv: workers per GPU 4 inferred from the fetch starts (set [trace] "
                          "workers if wrong)\n"),
              "%s", out);
    cr_assert(strstr(out, "trace.csv: ") == NULL, "the tidy trace's workers are its column: %s",
              out);
    free(out);
    stall_calibration_free(&c);
}

/* What calibrate cannot take is refused naming the key or the file and why;
 * nothing is taken silently. */
Test(calds, what_it_cannot_take_is_refused)
{
    convert("w4");
    static const struct {
        const char *body, *want;
    } cases[] = {
        /* 3 workers would put batch 3 on worker 0 while it still fetched batch 0 */
        {"workers = 3\n", "Start time_gpu0: starts 0.07"},
        {"persistent_workers = true\n",
         ":9: [trace] persistent_workers: has no effect: the trace has one epoch"},
        {"path = w4.csv\n", ":9: [trace] path: has no effect with [trace] format = dsanalyzer"},
    };
    char ini[600], tidy[600], err_ini[600];
    snprintf(tidy, sizeof tidy, "%s/traces/w1/trace.csv", STALL_SOURCE_DIR);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(ini, sizeof ini, "%s/bad%zu.ini", tdir, i);
        FILE *f = fopen(ini, "w");
        cr_assert_not_null(f);
        fprintf(f,
                "; a refusal\n[trace]\nformat = dsanalyzer\nfetch = w4_simp_fetchdifftime.csv\n"
                "start = w4_simp_fetchstartdifftime.csv\nperf = w4.csv\nepoch = 1\n\n%s",
                cases[i].body);
        fclose(f);
        const char *paths[2] = {tidy, ini};
        stall_calibration c;
        stall_err err = {0};
        cr_assert_neq(stall_calibrate_fit(paths, 2, 2, 0, &c, &err), 0, "%s", cases[i].body);
        cr_assert(strstr(err.msg, cases[i].want), "%s: %s", cases[i].body, err.msg);
    }
    /* No trace, or a trace whose fetch durations the model infers. */
    static const struct {
        const char *body, *want;
    } other[] = {
        {"[scenario]\nmode = model\n[trace]\nformat = none\n",
         ":4: [trace] format = none: calibrate fits measured runs and needs their traces"},
        {"[trace]\nformat = kineto\npath = " STALL_SOURCE_DIR "/tests/kineto/w2_nosched\n"
         "workers = 2\n",
         "calibrate reads measured fetch durations of runs with workers, which its Kineto trace "
         "does not hold"},
    };
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        snprintf(err_ini, sizeof err_ini, "%s/other%zu.ini", tdir, i);
        FILE *f = fopen(err_ini, "w");
        cr_assert_not_null(f);
        fputs(other[i].body, f);
        fclose(f);
        const char *paths[2] = {tidy, err_ini};
        stall_calibration c;
        stall_err err = {0};
        cr_assert_neq(stall_calibrate_fit(paths, 2, 2, 0, &c, &err), 0, "%s", other[i].body);
        cr_assert(strstr(err.msg, other[i].want), "%s", err.msg);
    }
}

/* An input the detection recognises and refuses keeps its words: a folder
 * without traces was "read error", and the notebook's perf CSV without its
 * companions "expected column 'rank' here", the tidy reader's. */
Test(calds, a_refused_input_says_what_it_is)
{
    char tidy[600], empty[600], lone[600], cmd[1400];
    snprintf(tidy, sizeof tidy, "%s/traces/w1/trace.csv", STALL_SOURCE_DIR);
    snprintf(empty, sizeof empty, "%s/empty", tdir);
    cr_assert_eq(mkdir(empty, 0755), 0, "%s", empty);
    snprintf(lone, sizeof lone, "%s/lone/w2.csv", tdir);
    snprintf(cmd, sizeof cmd,
             "mkdir %s/lone && cp %s/tests/golden/seed-case1/input/*thread0.csv %s", tdir,
             STALL_SOURCE_DIR, lone);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    static const struct {
        int input;
        const char *want;
    } cases[] = {
        {0, "/empty: a folder without trace files: a folder holds per-rank PyTorch profiler"},
        {1, "/lone/w2.csv: the notebook's perf CSV, but its fetch-time companion "},
    };
    const char *inputs[2] = {empty, lone};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *paths[2] = {tidy, inputs[cases[i].input]};
        stall_calibration c;
        stall_err err = {0};
        cr_assert_neq(stall_calibrate_fit(paths, 2, 2, 0, &c, &err), 0, "%s", paths[1]);
        cr_expect(strstr(err.msg, cases[i].want), "%s: %s", paths[1], err.msg);
    }
}

/* A tidy trace without a workers column (nor the loader's other columns):
 * calibrate infers the count from the fetch starts, as validate does, and
 * gives the traces' own answer figure for figure (it refused: "needs
 * traces with a workers column"). */
Test(calds, tidy_traces_without_a_workers_column_give_the_same_answer)
{
    char cut[3][600];
    const char *pc[3], *po[3];
    char orig[3][600];
    for (int i = 0; i < 3; i++) {
        snprintf(orig[i], sizeof orig[i], "%s/traces/%s/trace.csv", STALL_SOURCE_DIR, W[i]);
        snprintf(cut[i], sizeof cut[i], "%s/nw_%s.csv", tdir, W[i]);
        char cmd[1200];
        snprintf(cmd, sizeof cmd,
                 "cut -d, -f1-13 " STALL_SOURCE_DIR
                 "/traces/%s/trace.csv > %s/nw_%s.csv && head -1 %s/nw_%s.csv | grep -qv workers",
                 W[i], tdir, W[i], tdir, W[i]);
        cr_assert_eq(system(cmd), 0, "%s", cmd);
        pc[i] = cut[i], po[i] = orig[i];
    }
    stall_calibration c = fit(pc, 3), o = fit(po, 3);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(c.workers_from[i], STALL_WORKERS_INFERRED, "%s", W[i]);
    same(&c, &o, 1e-9);
    stall_calibration_free(&c);
    stall_calibration_free(&o);
}

/* The cores of the machine the traces were captured on (each capture
 * folder's meta.json cpu_cores) stand for --cores: two worker counts need
 * no --cores, and three give the answer of --cores 2, not a fitted count; a
 * copy of the same traces without meta.json still needs it. */
Test(calds, the_traces_recorded_cores_stand_for_cores)
{
    char p[3][600];
    const char *paths[3];
    for (int i = 0; i < 3; i++) {
        snprintf(p[i], sizeof p[i], "%s/traces/%s/trace.csv", STALL_SOURCE_DIR, W[i]);
        paths[i] = p[i];
    }
    stall_calibration two = fit(paths + 1, 2);
    cr_expect_eq(two.cores, 2);
    cr_expect_not(two.cores_given);
    cr_expect(strstr(two.cores_recorded, "meta.json") != NULL, "'%s'", two.cores_recorded);
    stall_calibration_free(&two);
    stall_calibration three = fit(paths, 3), given;
    stall_err err = {0};
    cr_assert_eq(stall_calibrate_fit(paths, 3, 2, 0, &given, &err), 0, "%s", err.msg);
    same(&three, &given, 1e-12);
    stall_calibration_free(&three);
    stall_calibration_free(&given);
    char c[2][600];
    epoch1("w2", "bare", false, c[0], sizeof c[0]);
    epoch1("w4", "bare", false, c[1], sizeof c[1]);
    const char *bare[] = {c[0], c[1]};
    stall_calibration none;
    cr_expect_neq(stall_calibrate_fit(bare, 2, 0, 0, &none, &err), 0);
    cr_expect(strstr(err.msg, "the core count cannot be estimated; give --cores N") != NULL, "%s",
              err.msg);
}

/* Traces that recorded different cores (a copy of w4 said to come from an
 * 8-core machine): the count is fitted and the line says what they
 * recorded; with two worker counts the refusal says so too. An INI's
 * [trace] cores beside a trace with a cores column is refused, as run
 * refuses it. */
Test(calds, traces_that_recorded_different_cores_are_said_so)
{
    char w1[600], w2[600], c8[600], cmd[1400];
    snprintf(w1, sizeof w1, "%s/traces/w1/trace.csv", STALL_SOURCE_DIR);
    snprintf(w2, sizeof w2, "%s/traces/w2/trace.csv", STALL_SOURCE_DIR);
    snprintf(c8, sizeof c8, "%s/c8/trace.csv", tdir);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/c8 && cp %s/traces/w4/trace.csv %s && echo '{\"cpu_cores\": 8}' > "
             "%s/c8/meta.json",
             tdir, STALL_SOURCE_DIR, c8, tdir);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    const char *three[] = {w1, w2, c8};
    stall_calibration c = fit(three, 3);
    cr_expect_str_eq(c.cores_differ, "2, 2, 8");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    stall_calibration_print(&c, three, f);
    fclose(f);
    cr_expect(strstr(buf, "(fitted: the traces recorded different cores, 2, 2, 8)"), "%s", buf);
    free(buf);
    stall_calibration_free(&c);
    const char *two[] = {w1, c8};
    stall_err err = {0};
    cr_expect_neq(stall_calibrate_fit(two, 2, 0, 0, &c, &err), 0);
    cr_expect(strstr(err.msg, "the traces recorded different cores (2, 8, in the order given)"),
              "%s", err.msg);
    char ini[600];
    snprintf(ini, sizeof ini, "%s/cc.ini", tdir);
    f = fopen(ini, "w");
    cr_assert_not_null(f);
    fprintf(
        f, "[trace]\nformat = tidy\npath = %s/traces/cpushare/sleep_ddp2_r1/trace.csv\ncores = 4\n",
        STALL_SOURCE_DIR);
    fclose(f);
    const char *mix[] = {ini, w2};
    cr_expect_neq(stall_calibrate_fit(mix, 2, 0, 0, &c, &err), 0);
    cr_expect(strstr(err.msg, "cc.ini:4: [trace] cores: has no effect: the trace records its "
                              "cores (its cores column: 2)"),
              "%s", err.msg);
}

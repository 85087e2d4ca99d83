/* seed: the notebook's per-row what-if, bit for bit against the golden case,
 * plus the quirks (Q11, Q14-Q18, Q21-Q24) on hand-made traces. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stall/dsanalyzer.h"
#include "stall/io.h"
#include "stall/seed.h"

#define CASE1 STALL_SOURCE_DIR "/tests/golden/seed-case1"
#define STEM "fsNprepNloadNtrain_Imagenet_default_resnet50_epoch1_b2048_worker12_thread0"

static stall_ds_trace *load_case1(void)
{
    stall_ds_trace *t = NULL;
    stall_err err = {0};
    int rc = stall_ds_load(CASE1 "/input/" STEM "_simp_fetchdifftime.csv",
                           CASE1 "/input/" STEM "_simp_fetchstartdifftime.csv",
                           CASE1 "/input/" STEM ".csv", 1, &t, &err);
    cr_assert_eq(rc, 0, "load failed (%d): %s", rc, err.msg);
    return t;
}

static char *slurp(const char *path, size_t *len)
{
    char *s = stall_read_file(path, len);
    cr_assert_not_null(s, "cannot open %s", path);
    return s;
}

/* Asserts two files are equal byte for byte; on failure prints the first
 * differing line of each. */
static void assert_same_file(const char *got_path, const char *want_path)
{
    size_t gn, wn;
    char *got = slurp(got_path, &gn), *want = slurp(want_path, &wn);
    if (gn != wn || memcmp(got, want, gn) != 0) {
        size_t i = 0, line = 1, start = 0;
        while (i < gn && i < wn && got[i] == want[i]) {
            if (got[i] == '\n') {
                line++;
                start = i + 1;
            }
            i++;
        }
        int gl = (int)strcspn(got + start, "\n"), wl = (int)strcspn(want + start, "\n");
        cr_assert_fail("%s differs from %s at line %zu:\n  got  %.*s\n  want %.*s", got_path,
                       want_path, line, gl, got + start, wl, want + start);
    }
    free(got);
    free(want);
}

static char *make_tmpdir(void)
{
    char *dir = strdup("/tmp/stall_seed_XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    return dir;
}

static void remove_file(const char *dir, const char *name)
{
    char *p = stall_path_join(dir, name);
    remove(p);
    free(p);
}

static const stall_align aligns[3] = {STALL_ALIGN_AVG, STALL_ALIGN_MIN, STALL_ALIGN_NONE};

Test(seed, golden_case1_csvs_are_bit_exact)
{
    stall_ds_trace *t = load_case1();
    char *dir = make_tmpdir();
    stall_err err = {0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            stall_seed_result *r = NULL;
            cr_assert_eq(stall_seed_run(t, aligns[i], aligns[j], &r, &err), 0, "%s", err.msg);
            cr_assert_eq(stall_seed_rows(r), 850, "rows %zu", stall_seed_rows(r));
            char name[64], want[512];
            stall_seed_config_name(name, aligns[i], aligns[j]);
            char *got = stall_path_join(dir, "out.csv");
            cr_assert_eq(stall_seed_write_csv(r, got, &err), 0, "%s", err.msg);
            snprintf(want, sizeof want, CASE1 "/output/%s/" STEM ".csv", name);
            assert_same_file(got, want);
            free(got);
            stall_seed_free(r);
        }
    remove_file(dir, "out.csv");
    rmdir(dir);
    free(dir);
    stall_ds_free(t);
}

/* Splits one CSV line (no quoted fields) into at most 32 fields in place. */
static int split_line(char *line, char **f)
{
    int n = 0;
    f[n++] = line;
    for (char *p = line; *p && n < 32; p++)
        if (*p == ',') {
            *p = '\0';
            f[n++] = p + 1;
        }
    return n;
}

Test(seed, golden_case1_total_summary_rows_match_by_align)
{
    stall_ds_trace *t = load_case1();
    char *dir = make_tmpdir();
    stall_err err = {0};
    stall_seed_summary rows[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            stall_seed_result *r = NULL;
            cr_assert_eq(stall_seed_run(t, aligns[i], aligns[j], &r, &err), 0, "%s", err.msg);
            cr_assert_eq(stall_seed_summarize(r, 10, 0.030, &rows[i * 3 + j], &err), 0, "%s",
                         err.msg);
            cr_assert_eq(rows[i * 3 + j].kept_rows, 839, "kept %zu", rows[i * 3 + j].kept_rows);
            stall_seed_free(r);
        }
    char *got_path = stall_path_join(dir, "total_summary.csv");
    cr_assert_eq(stall_seed_write_summary(got_path, STEM, rows, 9, &err), 0, "%s", err.msg);
    char *got = slurp(got_path, NULL), *want = slurp(CASE1 "/output/total_summary.csv", NULL);
    /* Header equal; then each golden row has an equal row with the same Align
     * (the seed's row order is file-system order, Q20). */
    char *gsave = NULL, *wsave = NULL;
    char *gl = strtok_r(got, "\n", &gsave), *wl = strtok_r(want, "\n", &wsave);
    cr_assert_str_eq(gl, wl, "header");
    char *glines[16];
    int ng = 0;
    while ((gl = strtok_r(NULL, "\n", &gsave)) && ng < 16)
        glines[ng++] = gl;
    cr_assert_eq(ng, 9, "rows written: %d", ng);
    int matched = 0;
    while ((wl = strtok_r(NULL, "\n", &wsave))) {
        char *wf[32], *gf[32];
        char wcopy[1024];
        snprintf(wcopy, sizeof wcopy, "%s", wl);
        int wn = split_line(wcopy, wf);
        int found = 0;
        for (int k = 0; k < ng && !found; k++) {
            char gcopy[1024];
            snprintf(gcopy, sizeof gcopy, "%s", glines[k]);
            int gn = split_line(gcopy, gf);
            if (gn < 2 || strcmp(gf[1], wf[1]) != 0)
                continue;
            found = 1;
            cr_assert_eq(gn, wn, "%s: %d fields, golden %d", wf[1], gn, wn);
            for (int c = 1; c < wn; c++)
                cr_assert_str_eq(gf[c], wf[c], "%s: column %d is %s, golden %s", wf[1], c, gf[c],
                                 wf[c]);
        }
        cr_assert(found, "golden row %s not written", wf[1]);
        matched++;
    }
    cr_assert_eq(matched, 9, "golden rows %d", matched);
    free(got);
    free(want);
    remove(got_path);
    free(got_path);
    rmdir(dir);
    free(dir);
    stall_ds_free(t);
}

/* ---- hand-made traces ----------------------------------------------------- */

#define MAXG 4
typedef struct mini {
    stall_ds_trace t;
    int64_t index[4];
    double fetch[4 * MAXG], iter[4 * MAXG], stall[4 * MAXG];
    stall_time start[4 * MAXG], time[4 * MAXG];
} mini;

/* A trace of n rows and g GPUs, Index number 0..n-1, all fields zero. */
static void mini_init(mini *m, int g, size_t n)
{
    memset(m, 0, sizeof *m);
    m->t.gpus = g;
    m->t.epoch = 1;
    m->t.rows = n;
    m->t.index = m->index;
    m->t.fetch_s = m->fetch;
    m->t.start_ns = m->start;
    m->t.time_ns = m->time;
    m->t.iter_s = m->iter;
    m->t.stall_s = m->stall;
    m->t.fetch_path = "mini_fetch.csv";
    for (size_t k = 0; k < n; k++)
        m->index[k] = (int64_t)k;
}

static stall_seed_row run_row0(const mini *m, stall_align fa, stall_align sa,
                               stall_seed_result **keep)
{
    stall_err err = {0};
    stall_seed_result *r = NULL;
    cr_assert_eq(stall_seed_run(&m->t, fa, sa, &r, &err), 0, "%s", err.msg);
    stall_seed_row row;
    stall_seed_get_row(r, 0, &row);
    *keep = r;
    return row;
}

Test(seed, start_avg_is_the_mid_range_not_the_mean)
{
    /* Q11: starts 0, 0, 3 s -> avg start 1.5 s (the mean would be 1 s). GPU 0
     * becomes ready 1.5 s later; its 0.1 s stall grows by the whole 1.5 s. */
    mini m;
    mini_init(&m, 3, 1);
    double f = 1.0;
    for (int g = 0; g < 3; g++) {
        m.fetch[g] = f;
        m.stall[g] = 0.1;
        m.iter[g] = 0.5;
    }
    m.start[0] = 0;
    m.start[1] = 0;
    m.start[2] = 3 * STALL_NS_PER_S;
    stall_seed_result *r;
    stall_seed_row row = run_row0(&m, STALL_ALIGN_NONE, STALL_ALIGN_AVG, &r);
    cr_assert_eq(row.gpu_stall_s[0], 0.1 + 1.5, "gpu0 stall %.17g", row.gpu_stall_s[0]);
    /* GPU 2 becomes ready 1.5 s earlier: 0.1 - 1.5 < 0 -> floor 2e-6 (Q16). */
    cr_assert_eq(row.gpu_stall_s[2], 0.000002, "gpu2 stall %.17g", row.gpu_stall_s[2]);
    cr_assert_eq(row.start_diff_s, 0.0, "aligned starts have no spread (Q27)");
    stall_seed_free(r);
}

Test(seed, lateness_is_absorbed_when_stall_is_at_most_10ms)
{
    /* Q17: fetch min aligns nothing here, start min moves GPU 1 earlier and
     * GPU 0 stays; with fetch avg GPU 0 (short fetch) becomes ready later. */
    mini m;
    mini_init(&m, 2, 1);
    m.fetch[0] = 1.0;
    m.fetch[1] = 3.0;  /* avg 2.0: GPU 0 is 1 s later, GPU 1 1 s earlier */
    m.stall[0] = 0.01; /* not > 0.01: absorbs the second */
    m.stall[1] = 0.5;
    m.iter[0] = m.iter[1] = 1.0;
    stall_seed_result *r;
    stall_seed_row row = run_row0(&m, STALL_ALIGN_AVG, STALL_ALIGN_NONE, &r);
    cr_assert_eq(row.gpu_stall_s[0], 0.01, "gpu0 %.17g", row.gpu_stall_s[0]);
    cr_assert_eq(row.gpu_stall_s[1], 0.000002, "gpu1 %.17g", row.gpu_stall_s[1]);
    stall_seed_free(r);
    m.stall[0] = 0.010000001; /* just above: grows by the whole gap */
    row = run_row0(&m, STALL_ALIGN_AVG, STALL_ALIGN_NONE, &r);
    cr_assert_eq(row.gpu_stall_s[0], 0.010000001 + 1.0, "gpu0 %.17g", row.gpu_stall_s[0]);
    cr_assert_eq(row.fetch_diff_s, 0.0, "aligned fetch has no spread (Q27)");
    stall_seed_free(r);
}

Test(seed, exact_zero_stall_stays_and_tiny_positive_stays)
{
    /* Q16: only a result below 0.0 becomes 2e-6. */
    mini m;
    mini_init(&m, 2, 1);
    m.fetch[0] = 1.0;
    m.fetch[1] = 1.5;
    m.stall[0] = 0.0;
    m.stall[1] = 0.5; /* min fetch: 0.5 s earlier -> exactly 0.0 */
    m.iter[0] = m.iter[1] = 1.0;
    stall_seed_result *r;
    stall_seed_row row = run_row0(&m, STALL_ALIGN_MIN, STALL_ALIGN_NONE, &r);
    cr_assert_eq(row.gpu_stall_s[1], 0.0, "gpu1 %.17g", row.gpu_stall_s[1]);
    cr_assert(!signbit(row.gpu_stall_s[1]));
    cr_assert_eq(row.gpu_stall_s[0], 0.0, "gpu0 %.17g", row.gpu_stall_s[0]);
    cr_assert_eq(row.delay_s, 0.0);
    stall_seed_free(r);
}

Test(seed, iteration_is_max_over_gpus_with_row_wide_max_stall)
{
    /* Q14/Q18: pure_g = it_g - max st; iteration = max_g(max new + pure_g). */
    mini m;
    mini_init(&m, 2, 1);
    m.fetch[0] = m.fetch[1] = 1.0;
    m.stall[0] = 0.2;
    m.stall[1] = 0.6;
    m.iter[0] = 1.0;
    m.iter[1] = 1.3;
    stall_seed_result *r;
    stall_seed_row row = run_row0(&m, STALL_ALIGN_NONE, STALL_ALIGN_NONE, &r);
    double want = 0.6 + (1.3 - 0.6);
    cr_assert_eq(row.iter_s, want, "iter %.17g want %.17g", row.iter_s, want);
    cr_assert_eq(row.stall_s, 0.6);
    cr_assert_eq(row.delay_s, 0.6 - 0.2, "delay %.17g", row.delay_s);
    stall_seed_free(r);
}

Test(seed, rows_before_the_epoch_are_refused)
{
    /* Q7/Q13: with an epoch 0 before, the notebook crashes; no result. */
    mini m;
    mini_init(&m, 2, 1);
    m.t.label0 = 3;
    stall_err err = {0};
    stall_seed_result *r = (stall_seed_result *)&m; /* must stay untouched */
    cr_assert_eq(stall_seed_run(&m.t, STALL_ALIGN_AVG, STALL_ALIGN_AVG, &r, &err), STALL_EINVAL);
    cr_assert_eq((void *)r, (void *)&m);
    cr_assert(strstr(err.msg, "mini_fetch.csv") && strstr(err.msg, "Q7"), "%s", err.msg);
}

Test(seed, summary_of_one_row_has_nan_std_and_no_rows_is_an_error)
{
    mini m;
    mini_init(&m, 2, 2);
    m.index[0] = 10;
    m.index[1] = 11;
    for (int i = 0; i < 4; i++) {
        m.fetch[i] = 1.0;
        m.iter[i] = 0.8765432;
        m.stall[i] = 0.00004;
    }
    stall_err err = {0};
    stall_seed_result *r = NULL;
    cr_assert_eq(stall_seed_run(&m.t, STALL_ALIGN_NONE, STALL_ALIGN_NONE, &r, &err), 0);
    stall_seed_summary s;
    cr_assert_eq(stall_seed_summarize(r, 10, 0.030, &s, &err), 0, "%s", err.msg);
    cr_assert_eq(s.kept_rows, 1, "index 10 is warm-up (Q22), kept %zu", s.kept_rows);
    cr_assert_str_eq(s.iter, "0.8765\xC2\xB1nan");
    cr_assert_str_eq(s.stall, "0.0\xC2\xB1nan");
    cr_assert_str_eq(s.align, "FETCH_ALIGN_none_START_ALIGN_none");
    cr_assert_eq(s.effective_delay_pct, 0.0);
    memset(&s, 0x5a, sizeof s);
    cr_assert_eq(stall_seed_summarize(r, 11, 0.030, &s, &err), STALL_EINVAL);
    cr_assert(strstr(err.msg, "Index number > 11"), "%s", err.msg);
    cr_assert_eq(s.kept_rows, (size_t)0x5a5a5a5a5a5a5a5a, "untouched on failure");
    stall_seed_free(r);
}

Test(seed, summary_name_fields_follow_q21_or_stay_empty)
{
    char *dir = make_tmpdir();
    char *p = stall_path_join(dir, "s.csv");
    stall_seed_summary row;
    memset(&row, 0, sizeof row);
    strcpy(row.align, "FETCH_ALIGN_avg_START_ALIGN_avg");
    strcpy(row.iter, "1.0\xC2\xB1"
                     "0.0");
    stall_err err = {0};
    /* Too few '_' fields: the notebook raises; here the eight fields are empty. */
    cr_assert_eq(stall_seed_write_summary(p, "mytrace", &row, 1, &err), 0, "%s", err.msg);
    char *txt = slurp(p, NULL);
    cr_assert(strstr(txt, "\n0,FETCH_ALIGN_avg_START_ALIGN_avg,,,,,,,,,1.0\xC2\xB1"
                          "0.0,"),
              "%s", txt);
    free(txt);
    /* The convention, with Worker batch size holding the thread number. */
    cr_assert_eq(
        stall_seed_write_summary(p, "log_ds_aug_model_epoch3_b64_worker4_thread2", &row, 1, &err),
        0);
    txt = slurp(p, NULL);
    cr_assert(strstr(txt, ",log,ds,model,aug,4,2,3,64,"), "%s", txt);
    free(txt);
    /* A repeated token: find_value takes the first occurrence, so "x" after
     * "x" gives model "x" and the epoch field is not a number: no names. */
    cr_assert_eq(stall_seed_write_summary(p, "a_x_x_m_epoch1_b2_worker3_thread4", &row, 1, &err),
                 0);
    txt = slurp(p, NULL);
    cr_assert(strstr(txt, "START_ALIGN_avg,,,,,,,,,"), "%s", txt);
    free(txt);
    remove(p);
    free(p);
    rmdir(dir);
    free(dir);
}

Test(seed, write_csv_to_missing_folder_is_eio)
{
    stall_ds_trace *t = load_case1();
    stall_seed_result *r = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_seed_run(t, STALL_ALIGN_MIN, STALL_ALIGN_MIN, &r, &err), 0);
    cr_assert_eq(stall_seed_write_csv(r, "/nonexistent-dir/x/out.csv", &err), STALL_EIO);
    cr_assert(strstr(err.msg, "/nonexistent-dir/x/out.csv"), "%s", err.msg);
    stall_seed_free(r);
    stall_ds_free(t);
}

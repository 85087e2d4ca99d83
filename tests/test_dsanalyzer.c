/* dsanalyzer: loading the golden trace, and every kind of bad input, each
 * with its error code and a message naming file:line:column. Bad CSVs are
 * written into a fresh mkdtemp folder by each test. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "formats/dsanalyzer_int.h"
#include "stall/dsanalyzer.h"
#include "stall/io.h"
#include "stall/pdparse.h"

#define CASE1 STALL_SOURCE_DIR "/tests/golden/seed-case1/input/"
#define STEM "fsNprepNloadNtrain_Imagenet_default_resnet50_epoch1_b2048_worker12_thread0"

/* A small good trace: 2 GPUs, Epoch 1, Index numbers 0..2. */
static const char *const GOOD_FETCH =
    ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
    "0,1,0,1.5,1.25\n"
    "1,1,1,2.0,2.5\n"
    "2,1,2,0.75,0.5\n";
static const char *const GOOD_START =
    ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n"
    "0,1,0,2021-09-01 19:48:46.731757,2021-09-01 19:48:46.728846\n"
    "1,1,1,2021-09-01 19:48:47.5,2021-09-01 19:48:47.25\n"
    "2,1,2,2021-09-01 19:48:48.000000001,2021-09-01 19:48:48.1\n";
/* Rows deliberately out of order: matching goes by (GPU, Step). */
static const char *const GOOD_PERF =
    ",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n"
    "0,1,2,1,2021-09-01 19:48:57.6,1.6,0.06\n"
    "1,1,0,0,2021-09-01 19:48:55.1,1.1,0.01\n"
    "2,1,0,1,2021-09-01 19:48:55.2,1.2,0.02\n"
    "3,1,1,0,2021-09-01 19:48:56.3,1.3,0.03\n"
    "4,1,1,1,2021-09-01 19:48:56.4,1.4,0.04\n"
    "5,1,2,0,2021-09-01 19:48:57.5,1.5,0.05\n";
/* The same rows by (Epoch, Step, GPU), as the notebook writes them: read
 * in one pass by stall_ds_load and the stream alike. */
static const char *const SORTED_PERF =
    ",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n"
    "1,1,0,0,2021-09-01 19:48:55.1,1.1,0.01\n"
    "2,1,0,1,2021-09-01 19:48:55.2,1.2,0.02\n"
    "3,1,1,0,2021-09-01 19:48:56.3,1.3,0.03\n"
    "4,1,1,1,2021-09-01 19:48:56.4,1.4,0.04\n"
    "5,1,2,0,2021-09-01 19:48:57.5,1.5,0.05\n"
    "0,1,2,1,2021-09-01 19:48:57.6,1.6,0.06\n";

typedef struct files {
    char dir[64];
    char *fetch, *start, *perf;
} files;

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Writes the three files (NULL: the good one) into a new temp folder. */
static void make(files *fs, const char *fetch, const char *start, const char *perf)
{
    strcpy(fs->dir, "/tmp/stall_dsa_XXXXXX");
    cr_assert_not_null(mkdtemp(fs->dir));
    fs->fetch = stall_path_join(fs->dir, "fetch.csv");
    fs->start = stall_path_join(fs->dir, "start.csv");
    fs->perf = stall_path_join(fs->dir, "perf.csv");
    put(fs->fetch, fetch ? fetch : GOOD_FETCH);
    put(fs->start, start ? start : GOOD_START);
    put(fs->perf, perf ? perf : GOOD_PERF);
}

static void clean(files *fs)
{
    remove(fs->fetch);
    remove(fs->start);
    remove(fs->perf);
    rmdir(fs->dir);
    free(fs->fetch);
    free(fs->start);
    free(fs->perf);
}

/* Opens a stream and reads every batch twice; returns the first error. */
static int stream_all(const files *fs, int64_t epoch, stall_ds_stream **st, stall_err *err)
{
    int rc = stall_ds_open(fs->fetch, fs->start, fs->perf, epoch, st, err);
    if (rc)
        return rc;
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
        rc = stall_ds_rewind(*st, err);
        size_t k;
        const stall_ds_trace *row;
        while (rc == 0 && (rc = stall_ds_next(*st, &k, &row, err)) == 1)
            rc = 0;
    }
    stall_ds_close(*st);
    *st = NULL;
    return rc;
}

/* Loads, expects `code`, *out untouched, and a one-line message containing
 * `where` (e.g. "fetch.csv:3:5:") and, when not NULL, `what`; the same error
 * and message from the whole-file reader (the reference: it reads each file
 * whole before it looks at the next) and from a stream. */
static void expect_fail_once(const char *fetch, const char *start, const char *perf, int64_t epoch,
                             int code, const char *where, const char *what)
{
    files fs;
    make(&fs, fetch, start, perf);
    stall_ds_trace sentinel, *t = &sentinel;
    stall_err err = {0};
    int rc = stall_ds_load(fs.fetch, fs.start, fs.perf, epoch, &t, &err);
    cr_assert_eq(rc, code, "rc %d, want %d; message: %s", rc, code, err.msg);
    cr_assert_eq(err.code, code, "err.code %d", err.code);
    cr_assert_eq(t, &sentinel, "*out changed on failure");
    cr_assert(strstr(err.msg, where), "message \"%s\" lacks \"%s\"", err.msg, where);
    if (what)
        cr_assert(strstr(err.msg, what), "message \"%s\" lacks \"%s\"", err.msg, what);
    cr_assert_null(strchr(err.msg, '\n'), "message has more than one line: %s", err.msg);
    stall_err werr = {0};
    int wrc = dsa_load_whole(fs.fetch, fs.start, fs.perf, epoch, &t, &werr);
    cr_assert_eq(wrc, code, "whole rc %d, want %d; message: %s", wrc, code, werr.msg);
    cr_assert_str_eq(werr.msg, err.msg, "whole: \"%s\", stall_ds_load: \"%s\"", werr.msg, err.msg);
    /* The streaming reader finds the same first error, or sends the caller
     * to stall_ds_load for perf rows out of (Epoch, Step) order. */
    stall_ds_stream *st = NULL;
    stall_err serr = {0};
    int src = stream_all(&fs, epoch, &st, &serr);
    if (src != STALL_DS_UNSORTED) {
        cr_assert_eq(src, code, "stream rc %d, want %d; message: %s", src, code, serr.msg);
        cr_assert_str_eq(serr.msg, err.msg, "stream: \"%s\", stall_ds_load: \"%s\"", serr.msg,
                         err.msg);
    }
    cr_assert_null(st, "stream left open on failure");
    clean(&fs);
}

/* With the good perf file: once as given (its rows out of order) and once
 * sorted, which the one-pass reader takes beside fetch and start. */
static void expect_fail_epoch(const char *fetch, const char *start, const char *perf, int64_t epoch,
                              int code, const char *where, const char *what)
{
    expect_fail_once(fetch, start, perf, epoch, code, where, what);
    if (!perf)
        expect_fail_once(fetch, start, SORTED_PERF, epoch, code, where, what);
}

static void expect_fail(const char *fetch, const char *start, const char *perf, const char *where,
                        const char *what)
{
    expect_fail_epoch(fetch, start, perf, 1, STALL_EPARSE, where, what);
}

/* ---- good inputs ------------------------------------------------------------ */

Test(dsanalyzer, golden_case1_has_4_gpus_and_850_rows)
{
    stall_ds_trace *t = NULL;
    stall_err err = {0};
    int rc =
        stall_ds_load(CASE1 STEM "_simp_fetchdifftime.csv",
                      CASE1 STEM "_simp_fetchstartdifftime.csv", CASE1 STEM ".csv", 1, &t, &err);
    cr_assert_eq(rc, 0, "rc %d: %s", rc, err.msg);
    cr_assert_eq(t->gpus, 4, "gpus %d", t->gpus);
    cr_assert_eq(t->rows, 850, "rows %zu", t->rows);
    cr_assert_eq(t->label0, 0, "label0 %zu", t->label0);
    cr_assert_eq(t->epoch, 1);
    for (size_t k = 0; k < t->rows; k++)
        cr_assert_eq(t->index[k], (int64_t)k, "index[%zu] = %lld", k, (long long)t->index[k]);
    /* Row 0 as in the files; the fetch time parsed as pandas 1.5 parses it. */
    cr_assert_eq(t->fetch_s[0], stall_pd_strtod("8.680903887459785", NULL));
    cr_assert_eq(t->fetch_s[849 * 4 + 3], stall_pd_strtod("8.044573952139334", NULL));
    cr_assert_eq(t->start_ns[0], INT64_C(1630525726731757000), "S %lld", (long long)t->start_ns[0]);
    cr_assert_eq(t->time_ns[1], INT64_C(1630525735423241000), "T %lld", (long long)t->time_ns[1]);
    cr_assert_eq(t->iter_s[0], 10.158128, "it %.17g", t->iter_s[0]);
    cr_assert_eq(t->stall_s[1], 8.821552, "st %.17g", t->stall_s[1]);
    cr_assert_str_eq(t->perf_path, CASE1 STEM ".csv");
    stall_ds_free(t);
    stall_ds_free(NULL);
}

/* The one mapping to tidy rows (dsanalyzer_tidy.c), held against the
 * notebook's numbers read from the files: fetch end = start + fetch seconds,
 * ready = Time, request = Time - the row's training stall, iteration end =
 * request + iteration time; no compute end (not measured); worker k mod W. */
Test(dsanalyzer, tidy_rows_follow_the_notebook_columns)
{
    stall_ds_trace *d = NULL;
    stall_err err = {0};
    int rc =
        stall_ds_load(CASE1 STEM "_simp_fetchdifftime.csv",
                      CASE1 STEM "_simp_fetchstartdifftime.csv", CASE1 STEM ".csv", 1, &d, &err);
    cr_assert_eq(rc, 0, "%s", err.msg);
    stall_tidy_trace *t = stall_ds_to_tidy(d, 3);
    cr_assert_eq(t->ranks, 4);
    cr_assert_eq(t->batches, 850);
    cr_assert_eq(t->workers, 3);
    cr_assert_null(t->compute_end);
    for (size_t k = 0; k < d->rows; k++)
        for (int r = 0; r < 4; r++) {
            size_t i = k * 4 + (size_t)r;
            stall_tidy_row row;
            stall_ds_tidy_row(d, k, r, &row);
            cr_assert_eq(row.compute_end, -1);
            cr_assert_eq(t->fetch_start[i], d->start_ns[i]);
            cr_assert_eq(t->fetch_end[i] - t->fetch_start[i], stall_s_to_ns(d->fetch_s[i]));
            cr_assert_eq(t->ready[i], d->time_ns[i]);
            cr_assert_eq(t->request[i], d->time_ns[i] - stall_s_to_ns(d->stall_s[i]),
                         "request of batch %zu rank %d", k, r);
            cr_assert_eq(t->iter_end[i], t->request[i] + stall_s_to_ns(d->iter_s[i]));
            cr_assert_eq(t->worker[i], (int32_t)(k % 3));
            cr_assert_eq(row.request, t->request[i]);
        }
    stall_ds_tidy_workers(t, -1);
    cr_assert_eq(t->workers, -1);
    cr_assert_eq(t->worker[5], -1);
    stall_tidy_free(t);
    stall_ds_free(d);
}

Test(dsanalyzer, perf_rows_are_matched_by_gpu_and_step)
{
    files fs;
    make(&fs, NULL, NULL, NULL);
    stall_ds_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_ds_load(fs.fetch, fs.start, fs.perf, 1, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t->gpus, 2);
    cr_assert_eq(t->rows, 3);
    const double it[6] = {1.1, 1.2, 1.3, 1.4, 1.5, 1.6};
    for (int i = 0; i < 6; i++)
        cr_assert_eq(t->iter_s[i], it[i], "iter[%d] = %g", i, t->iter_s[i]);
    cr_assert_eq(t->stall_s[5], 0.06);
    cr_assert_eq(t->start_ns[4], INT64_C(1630525728000000001), "%lld", (long long)t->start_ns[4]);
    cr_assert_eq(t->fetch_s[5], 0.5);
    stall_ds_free(t);
    clean(&fs);
}

Test(dsanalyzer, epoch_0_rows_set_label0_and_are_skipped)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
                        "0,0,0,9.0,9.0\n"
                        "1,0,1,9.0,9.0\n"
                        "2,1,0,1.5,1.25\n"
                        "3,1,1,2.0,2.5\n"
                        "4,1,2,0.75,0.5\n"
                        "5,2,0,9.0,9.0\n";
    const char *start = ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n"
                        "0,0,0,2021-09-01 19:00:00.0,2021-09-01 19:00:00.0\n"
                        "1,0,1,2021-09-01 19:00:00.0,2021-09-01 19:00:00.0\n"
                        "2,1,0,2021-09-01 19:48:46.731757,2021-09-01 19:48:46.728846\n"
                        "3,1,1,2021-09-01 19:48:47.5,2021-09-01 19:48:47.25\n"
                        "4,1,2,2021-09-01 19:48:48.000000001,2021-09-01 19:48:48.1\n"
                        "5,2,0,2021-09-01 20:00:00.0,2021-09-01 20:00:00.0\n";
    files fs;
    make(&fs, fetch, start, NULL);
    stall_ds_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_ds_load(fs.fetch, fs.start, fs.perf, 1, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t->label0, 2, "label0 %zu", t->label0);
    cr_assert_eq(t->rows, 3, "rows %zu", t->rows);
    cr_assert_eq(t->fetch_s[0], 1.5);
    stall_ds_free(t);
    clean(&fs);
}

Test(dsanalyzer, crlf_line_endings_and_quoted_fields_load)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\r\n"
                        "0,1,0,1.5,1.25\r\n"
                        "\"1\",1,1,\"2.0\",2.5\r\n"
                        "2,1,2,0.75,0.5\r\n";
    files fs;
    make(&fs, fetch, NULL, NULL);
    stall_ds_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_ds_load(fs.fetch, fs.start, fs.perf, 1, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t->fetch_s[2], 2.0);
    stall_ds_free(t);
    clean(&fs);
}

/* A UTF-8 byte order mark before the header (pandas' encoding="utf-8-sig")
 * is skipped in each of the three files, as the tidy reader skips it; it
 * was refused as "expected pandas' unnamed index column ..., found '\xEF\xBB\xBF'". */
Test(dsanalyzer, a_utf8_byte_order_mark_is_skipped)
{
    char fetch[512], start[512], perf[512];
    snprintf(fetch, sizeof fetch, "\xEF\xBB\xBF%s", GOOD_FETCH);
    snprintf(start, sizeof start, "\xEF\xBB\xBF%s", GOOD_START);
    snprintf(perf, sizeof perf, "\xEF\xBB\xBF%s", GOOD_PERF);
    files fs;
    make(&fs, fetch, start, perf);
    stall_ds_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_ds_load(fs.fetch, fs.start, fs.perf, 1, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t->fetch_s[2], 2.0);
    stall_ds_free(t);
    clean(&fs);
}

/* ---- files and CSV structure ------------------------------------------------ */

Test(dsanalyzer, missing_file_is_eio_naming_it)
{
    files fs;
    make(&fs, NULL, NULL, NULL);
    remove(fs.start);
    stall_ds_trace sentinel, *t = &sentinel;
    stall_err err = {0};
    cr_assert_eq(stall_ds_load(fs.fetch, fs.start, fs.perf, 1, &t, &err), STALL_EIO, "%s", err.msg);
    cr_assert(strstr(err.msg, fs.start) && strstr(err.msg, "cannot open"), "%s", err.msg);
    cr_assert_eq(t, &sentinel);
    clean(&fs);
}

Test(dsanalyzer, empty_file_names_line_1)
{
    expect_fail(NULL, NULL, "", "perf.csv:1:1:", "empty file");
}

Test(dsanalyzer, row_with_an_extra_field_names_line_and_first_extra_column)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
                        "0,1,0,1.5,1.25\n"
                        "1,1,1,2.0,2.5,7\n"
                        "2,1,2,0.75,0.5\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:3:6:", "expected 5 fields");
}

Test(dsanalyzer, row_with_a_missing_field_names_first_missing_column)
{
    const char *start = ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n"
                        "0,1,0,2021-09-01 19:48:46.731757,2021-09-01 19:48:46.728846\n"
                        "1,1,1,2021-09-01 19:48:47.5\n";
    expect_fail(NULL, start, NULL, "start.csv:3:5:", "found 4");
}

Test(dsanalyzer, last_row_without_newline_is_still_checked)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
                        "0,1,0,1.5,1.25\n"
                        "1,1,1,2.0";
    expect_fail(fetch, NULL, NULL, "fetch.csv:3:5:", "found 4");
}

Test(dsanalyzer, quoted_newline_keeps_physical_line_numbers)
{
    /* Record 2 spans lines 2-3 (its ignored index field holds a newline), so
     * the bad value in the next record is on line 4. */
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
                        "\"a\nb\",1,0,1.5,1.25\n"
                        "1,1,1,2.0,x\n"
                        "2,1,2,0.75,0.5\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:4:5:", "not a number: \"x\"");
}

Test(dsanalyzer, unterminated_quote_is_malformed)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
                        "0,1,0,1.5,1.25\n"
                        "1,1,1,\"2.0,2.5\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:", "malformed CSV");
}

Test(dsanalyzer, quote_inside_unquoted_field_is_malformed)
{
    const char *perf = ",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n"
                       "0,1,0,0,2021-09-01 19:48:55.1,1\"1,0.01\n";
    expect_fail(NULL, NULL, perf, "perf.csv:2:6:", "malformed CSV");
}

Test(dsanalyzer, first_column_must_be_the_unnamed_index)
{
    const char *fetch = "Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
                        "1,0,1.5,1.25\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:1:1:", "unnamed index column");
}

/* ---- columns ---------------------------------------------------------------- */

Test(dsanalyzer, misspelled_column_names_the_expected_one)
{
    const char *fetch = ",Epoch,Index numbr,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
                        "0,1,0,1.5,1.25\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:1:3:", "missing column 'Index number'");
}

Test(dsanalyzer, missing_perf_column_names_it)
{
    const char *perf = ",Epoch,Step,GPU,Time,Iteration time (sec)\n"
                       "0,1,0,0,2021-09-01 19:48:55.1,1.1\n";
    expect_fail(NULL, NULL, perf, "perf.csv:1:7:", "missing column 'Training stall time (sec)'");
}

Test(dsanalyzer, duplicate_column_is_refused)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu0\n"
                        "0,1,0,1.5,1.25\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:1:5:", "duplicate column");
}

Test(dsanalyzer, no_fetch_gpu_columns_at_all)
{
    const char *fetch = ",Epoch,Index number\n0,1,0\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:1:4:", "'Fetch time (sec)_gpu0'");
}

Test(dsanalyzer, gap_in_fetch_gpu_columns)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu2\n"
                        "0,1,0,1.5,1.25\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:1:5:", "missing column 'Fetch time (sec)_gpu1'");
}

Test(dsanalyzer, start_lacks_a_gpu_column_the_fetch_csv_has)
{
    const char *start = ",Epoch,Index number,Start time_gpu0\n"
                        "0,1,0,2021-09-01 19:48:46.731757\n";
    expect_fail(NULL, start, NULL, "start.csv:1:5:", "'Start time_gpu1'");
    expect_fail(NULL, start, NULL, "start.csv:1:5:", "fetch.csv");
}

Test(dsanalyzer, start_has_a_gpu_column_the_fetch_csv_lacks)
{
    const char *start = ",Epoch,Index number,Start time_gpu0,Start time_gpu1,Start time_gpu2\n"
                        "0,1,0,2021-09-01 19:48:46.1,2021-09-01 19:48:46.1,2021-09-01 19:48:46.1\n";
    expect_fail(NULL, start, NULL, "start.csv:1:6:", "'Start time_gpu2' has no");
    expect_fail(NULL, start, NULL, "start.csv:1:6:", "fetch.csv");
}

/* ---- values ------------------------------------------------------------------ */

static char *fetch_with_value(const char *v)
{
    char *s = malloc(512);
    snprintf(s, 512,
             ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
             "0,1,0,1.5,1.25\n"
             "1,1,1,2.0,%s\n"
             "2,1,2,0.75,0.5\n",
             v);
    return s;
}

Test(dsanalyzer, non_numeric_fetch_time)
{
    char *f = fetch_with_value("abc");
    expect_fail(f, NULL, NULL, "fetch.csv:3:5:", "'Fetch time (sec)_gpu1': not a number: \"abc\"");
    free(f);
}

Test(dsanalyzer, negative_fetch_time)
{
    char *f = fetch_with_value("-0.5");
    expect_fail(f, NULL, NULL, "fetch.csv:3:5:", "negative time");
    free(f);
}

Test(dsanalyzer, nan_and_inf_fetch_times)
{
    const char *bad[] = {"nan", "NaN", "inf", "-inf", "1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *f = fetch_with_value(bad[i]);
        expect_fail(f, NULL, NULL, "fetch.csv:3:5:", "not a finite number");
        free(f);
    }
}

Test(dsanalyzer, empty_fetch_time_is_nan_to_pandas)
{
    char *f = fetch_with_value("");
    expect_fail(f, NULL, NULL, "fetch.csv:3:5:", "empty field");
    free(f);
}

Test(dsanalyzer, fetch_time_too_large_for_ns)
{
    char *f = fetch_with_value("1e10");
    expect_fail(f, NULL, NULL, "fetch.csv:3:5:", "duration limit");
    free(f);
    /* Just past the limit: no duration the models add up may reach int64. */
    f = fetch_with_value("1000000.5");
    expect_fail(f, NULL, NULL, "fetch.csv:3:5:", "duration limit");
    free(f);
}

/* A wide header is checked for duplicates in O(n log n), and the duplicate
 * named is the first repeated column, with its first occurrence. */
Test(dsanalyzer, duplicate_column_in_a_wide_header)
{
    size_t n = 100000;
    char *f = stall_xmalloc(n * 12 + 100);
    size_t len = (size_t)sprintf(f, ",Epoch,Index number,Fetch time (sec)_gpu0");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(f + len, ",x%zu", i % 60000 == 59999 ? (size_t)7 : i);
    sprintf(f + len, "\n");
    expect_fail(f, NULL, NULL, "fetch.csv:1:", "duplicate column 'x7' (also column 12)");
    free(f);
}

Test(dsanalyzer, non_integer_index_number)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
                        "0,1,0,1.5,1.25\n"
                        "1,1,1.0,2.0,2.5\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:3:3:", "not an integer");
}

/* GOOD_PERF with its line 3 (GPU 0, Step 0) replaced by `row`. */
static char *perf_with_row(const char *row)
{
    const char *l3 = strstr(GOOD_PERF, "\n1,1,0,0,") + 1, *l4 = strchr(l3, '\n');
    char *s = malloc(1024);
    snprintf(s, 1024, "%.*s%s%s", (int)(l3 - GOOD_PERF), GOOD_PERF, row, l4);
    return s;
}

Test(dsanalyzer, non_numeric_perf_stall)
{
    char *perf = perf_with_row("1,1,0,0,2021-09-01 19:48:55.1,1.1,oops");
    expect_fail(NULL, NULL, perf, "perf.csv:3:7:", "not a number: \"oops\"");
    free(perf);
}

Test(dsanalyzer, negative_perf_iteration_time)
{
    char *perf = perf_with_row("1,1,0,0,2021-09-01 19:48:55.1,-1.1,0.01");
    expect_fail(NULL, NULL, perf, "perf.csv:3:6:", "negative time");
    free(perf);
}

/* The stall is part of the iteration: a longer one put the request before
 * the iteration began, and that GPU's epoch grew by the difference. */
Test(dsanalyzer, perf_stall_longer_than_its_iteration)
{
    char *perf = perf_with_row("1,1,0,0,2021-09-01 19:48:55.1,1.1,1.2");
    expect_fail(NULL, NULL, perf, "perf.csv:3:7:",
                "'Training stall time (sec)': longer than the row's 'Iteration time (sec)' (1.1 "
                "s) by more than 1 ms: \"1.2\"");
    free(perf);
    /* As long as the iteration (nothing computed) is a measurement, and a
     * stall up to 1 ms over it the two timers' disagreement (seed mode
     * reads every row the notebook reads). */
    files fs;
    perf = perf_with_row("1,1,0,0,2021-09-01 19:48:55.1,1.1,1.1005");
    make(&fs, NULL, NULL, perf);
    stall_ds_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_ds_load(fs.fetch, fs.start, fs.perf, 1, &t, &err), 0, "%s", err.msg);
    stall_ds_free(t);
    clean(&fs);
    free(perf);
}

Test(dsanalyzer, start_timestamp_without_fraction)
{
    const char *start = ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n"
                        "0,1,0,2021-09-01 19:48:46.731757,2021-09-01 19:48:46\n"
                        "1,1,1,2021-09-01 19:48:47.5,2021-09-01 19:48:47.25\n"
                        "2,1,2,2021-09-01 19:48:48.000000001,2021-09-01 19:48:48.1\n";
    expect_fail(NULL, start, NULL, "start.csv:2:5:", "not a timestamp");
}

Test(dsanalyzer, start_timestamp_with_invalid_date)
{
    const char *start = ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n"
                        "0,1,0,2021-02-29 19:48:46.1,2021-09-01 19:48:46.2\n"
                        "1,1,1,2021-09-01 19:48:47.5,2021-09-01 19:48:47.25\n"
                        "2,1,2,2021-09-01 19:48:48.000000001,2021-09-01 19:48:48.1\n";
    expect_fail(NULL, start, NULL, "start.csv:2:4:", "2021-02-29");
}

Test(dsanalyzer, perf_time_with_ten_fractional_digits)
{
    char *perf = perf_with_row("1,1,0,0,2021-09-01 19:48:55.1234567890,1.1,0.01");
    expect_fail(NULL, NULL, perf, "perf.csv:3:5:", "'Time': not a timestamp");
    free(perf);
}

/* ---- keys and cross-file rules ----------------------------------------------- */

Test(dsanalyzer, unsorted_fetch_rows)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
                        "0,1,0,1.5,1.25\n"
                        "1,1,2,2.0,2.5\n"
                        "2,1,1,0.75,0.5\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:4:3:", "not sorted");
}

Test(dsanalyzer, unsorted_start_epochs_name_the_epoch_column)
{
    const char *start = ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n"
                        "0,1,0,2021-09-01 19:48:46.1,2021-09-01 19:48:46.1\n"
                        "1,0,1,2021-09-01 19:48:47.1,2021-09-01 19:48:47.1\n";
    expect_fail(NULL, start, NULL, "start.csv:3:2:", "not sorted");
}

Test(dsanalyzer, duplicate_fetch_key)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n"
                        "0,1,0,1.5,1.25\n"
                        "1,1,1,2.0,2.5\n"
                        "2,1,1,0.75,0.5\n";
    expect_fail(fetch, NULL, NULL, "fetch.csv:4:3:", "duplicate row (Epoch 1, Index number 1)");
}

Test(dsanalyzer, row_missing_from_start)
{
    const char *start = ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n"
                        "0,1,0,2021-09-01 19:48:46.731757,2021-09-01 19:48:46.728846\n"
                        "1,1,1,2021-09-01 19:48:47.5,2021-09-01 19:48:47.25\n";
    expect_fail(NULL, start, NULL, "fetch.csv:4:3:", "(Epoch 1, Index number 2)");
    expect_fail(NULL, start, NULL, "fetch.csv:4:3:", "missing from ");
    expect_fail(NULL, start, NULL, "fetch.csv:4:3:", "start.csv");
}

Test(dsanalyzer, row_missing_from_fetch)
{
    const char *start = ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n"
                        "0,1,0,2021-09-01 19:48:46.731757,2021-09-01 19:48:46.728846\n"
                        "1,1,1,2021-09-01 19:48:47.5,2021-09-01 19:48:47.25\n"
                        "2,1,2,2021-09-01 19:48:48.000000001,2021-09-01 19:48:48.1\n"
                        "3,1,3,2021-09-01 19:48:49.1,2021-09-01 19:48:49.1\n";
    expect_fail(NULL, start, NULL, "start.csv:5:3:", "(Epoch 1, Index number 3)");
    expect_fail(NULL, start, NULL, "start.csv:5:3:", "fetch.csv");
}

Test(dsanalyzer, perf_gpu_outside_range)
{
    const char *perf = ",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n"
                       "0,1,0,0,2021-09-01 19:48:55.1,1.1,0.01\n"
                       "1,1,0,2,2021-09-01 19:48:55.2,1.2,0.02\n";
    expect_fail(NULL, NULL, perf, "perf.csv:3:4:", "outside 0..1");
}

Test(dsanalyzer, duplicate_perf_epoch_step_gpu)
{
    char perf[1024];
    snprintf(perf, sizeof perf, "%s6,1,1,0,2021-09-01 19:48:56.3,1.3,0.03\n", GOOD_PERF);
    expect_fail(NULL, NULL, perf, "perf.csv:8:3:", "duplicate row (Epoch 1, Step 1, GPU 0)");
    expect_fail(NULL, NULL, perf, "perf.csv:8:3:", "first on line 5");
}

Test(dsanalyzer, perf_missing_a_step_for_one_gpu)
{
    const char *perf = ",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n"
                       "1,1,0,0,2021-09-01 19:48:55.1,1.1,0.01\n"
                       "2,1,0,1,2021-09-01 19:48:55.2,1.2,0.02\n"
                       "3,1,1,0,2021-09-01 19:48:56.3,1.3,0.03\n"
                       "4,1,1,1,2021-09-01 19:48:56.4,1.4,0.04\n"
                       "5,1,2,0,2021-09-01 19:48:57.5,1.5,0.05\n";
    expect_fail(NULL, NULL, perf, "perf.csv:6:4:",
                "no row for GPU 1, Step 2 of Epoch 1 among that step's rows, which begin on this "
                "line");
    expect_fail(NULL, NULL, perf, "perf.csv:6:4:", "fetch.csv:4");
}

/* A missing perf row is named where it belongs in perf, by both readers
 * (it was named at the header, perf.csv:1, wherever it was missing): a
 * whole step missing before the next step's first row, or before the next
 * epoch's, and the last step missing after the file's last row. */
Test(dsanalyzer, a_missing_perf_row_is_named_where_it_belongs)
{
    const char *h = ",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n";
    const char *s0 = "1,1,0,0,2021-09-01 19:48:55.1,1.1,0.01\n"
                     "2,1,0,1,2021-09-01 19:48:55.2,1.2,0.02\n";
    const char *s1 = "3,1,1,0,2021-09-01 19:48:56.3,1.3,0.03\n"
                     "4,1,1,1,2021-09-01 19:48:56.4,1.4,0.04\n";
    const char *s2 = "5,1,2,0,2021-09-01 19:48:57.5,1.5,0.05\n"
                     "0,1,2,1,2021-09-01 19:48:57.6,1.6,0.06\n";
    const char *e2 = "6,2,0,0,2021-09-01 19:48:58.5,1.5,0.05\n"
                     "7,2,0,1,2021-09-01 19:48:58.6,1.6,0.06\n";
    char perf[2048];
    snprintf(perf, sizeof perf, "%s%s%s", h, s0, s2);
    expect_fail(NULL, NULL, perf,
                "perf.csv:4:3:", "no row for GPU 0, Step 1 of Epoch 1 before this line (");
    expect_fail(NULL, NULL, perf, "perf.csv:4:3:", "/fetch.csv:3 has that Index number");
    snprintf(perf, sizeof perf, "%s%s%s", h, s0, s1);
    expect_fail(NULL, NULL, perf, "perf.csv:5:3:",
                "no row for GPU 0, Step 2 of Epoch 1 after this line, the file's last");
    snprintf(perf, sizeof perf, "%s%s%s%s", h, s0, s1, e2);
    expect_fail(NULL, NULL, perf, "perf.csv:6:3:", "no row for GPU 0, Step 2 of Epoch 1 before");
    snprintf(perf, sizeof perf, "%s", h);
    expect_fail(NULL, NULL, perf, "perf.csv:1:3:",
                "no row for GPU 0, Step 0 of Epoch 1 after this line, the file's last");
}

Test(dsanalyzer, perf_extra_step_is_not_matched_by_position)
{
    /* GPU 0 has steps 0, 1, 5 instead of 0, 1, 2: matching by position (Q9)
     * would silently take step 5 for batch 2. */
    const char *perf = ",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n"
                       "0,1,2,1,2021-09-01 19:48:57.6,1.6,0.06\n"
                       "1,1,0,0,2021-09-01 19:48:55.1,1.1,0.01\n"
                       "2,1,0,1,2021-09-01 19:48:55.2,1.2,0.02\n"
                       "3,1,1,0,2021-09-01 19:48:56.3,1.3,0.03\n"
                       "4,1,1,1,2021-09-01 19:48:56.4,1.4,0.04\n"
                       "5,1,5,0,2021-09-01 19:48:57.5,1.5,0.05\n";
    expect_fail(NULL, NULL, perf, "fetch.csv", NULL);
    expect_fail(NULL, NULL, perf, "perf.csv:2:4:", "no row for GPU 0, Step 2");
}

Test(dsanalyzer, perf_surplus_step_after_the_last_batch)
{
    char perf[1024];
    snprintf(perf, sizeof perf, "%s6,1,3,1,2021-09-01 19:48:58.1,1.7,0.07\n", GOOD_PERF);
    expect_fail(NULL, NULL, perf, "perf.csv:8:3:", "Step 3 of GPU 1 (Epoch 1) has no row");
    expect_fail(NULL, NULL, perf, "perf.csv:8:3:", "fetch.csv");
}

Test(dsanalyzer, empty_trace_for_the_selected_epoch)
{
    expect_fail_epoch(NULL, NULL, NULL, 2, STALL_EPARSE, "fetch.csv:1:2:", "no rows with Epoch 2");
}

Test(dsanalyzer, header_only_files_are_an_empty_trace)
{
    const char *fetch = ",Epoch,Index number,Fetch time (sec)_gpu0,Fetch time (sec)_gpu1\n";
    const char *start = ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n";
    expect_fail(fetch, start, NULL, "fetch.csv:1:2:", "empty trace");
}

/* Fuzz finding (fuzz_dsanalyzer): a quoted newline in the header came back
 * inside the error message, which then took two lines. */
Test(dsanalyzer, error_message_stays_one_line)
{
    expect_fail("\"1\no\"\n", NULL, NULL, "fetch.csv:1:1:", "found '1?o'");
}

/* A line past the stated limit is refused before it is buffered whole. */
Test(dsanalyzer, line_longer_than_the_limit)
{
    size_t n = 17u << 20;
    char *f = stall_xmalloc(n + 64);
    memset(f, 'x', n);
    strcpy(f + n, "\n");
    expect_fail(f, NULL, NULL, "fetch.csv:1:", "longer than 16777216 bytes");
    free(f);
}

/* ---- one pass over the three files: the first error is stall_ds_load's ---- */

/* An error late in an earlier file comes before one early in a later file
 * (stall_ds_load reads fetch whole, then start, then perf), though the one
 * pass reads perf's first rows before fetch's last. */
Test(dsanalyzer, late_fetch_error_comes_before_early_perf_error)
{
    char fetch[1024], perf[1024];
    snprintf(fetch, sizeof fetch, "%s3,1,1,0.5,0.5\n", GOOD_FETCH); /* unsorted, last line */
    /* GPU 7 on perf's first line */
    snprintf(perf, sizeof perf, "%s", SORTED_PERF);
    char *gpu = strstr(perf, "\n1,1,0,0,") + 7;
    *gpu = '7';
    expect_fail(NULL, NULL, perf, "perf.csv:2:4:", "'GPU': 7 is outside 0..1");
    expect_fail(fetch, NULL, perf, "fetch.csv:5:3:", "rows not sorted");
}

Test(dsanalyzer, late_start_text_error_comes_before_early_perf_duplicate)
{
    char start[1024], perf[1024];
    snprintf(start, sizeof start, "%s3,1,3\n", GOOD_START); /* too few fields */
    snprintf(perf, sizeof perf, "%s", SORTED_PERF);
    memcpy(strstr(perf, "\n2,1,0,1,") + 1, "2,1,0,0,", 8); /* GPU 0 twice at Step 0 */
    expect_fail(NULL, NULL, perf, "perf.csv:3:3:", "duplicate row (Epoch 1, Step 0, GPU 0)");
    expect_fail(NULL, start, perf, "start.csv:5:4:", "expected 5 fields");
}

/* A bad value in fetch's last row comes before a GPU missing from perf's
 * first batch, and the lack of the selected epoch before a bad value. */
Test(dsanalyzer, late_value_error_comes_before_early_missing_perf_row)
{
    char fetch[1024], perf[1024];
    snprintf(fetch, sizeof fetch, "%s", GOOD_FETCH);
    memcpy(strstr(fetch, "0.75,0.5"), "-.75", 4);
    const char *nl = strchr(strchr(SORTED_PERF, '\n') + 1, '\n'); /* drop Step 0, GPU 0 */
    snprintf(perf, sizeof perf, "%.*s%s", (int)(strchr(SORTED_PERF, '\n') + 1 - SORTED_PERF),
             SORTED_PERF, nl + 1);
    expect_fail(NULL, NULL, perf, "perf.csv:2:4:", "no row for GPU 0, Step 0");
    expect_fail(fetch, NULL, perf, "fetch.csv:4:4:", "negative time");
    expect_fail_epoch(fetch, NULL, perf, 2, STALL_EPARSE, "fetch.csv:1:2:", "no rows with Epoch 2");
}

/* The first pass hands out the batches as stall_ds_load keeps them; a
 * second pass (rewind) reads the same again. */
Test(dsanalyzer, stream_passes_equal_the_loaded_trace)
{
    files fs;
    make(&fs, NULL, NULL, SORTED_PERF);
    stall_ds_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(dsa_load_whole(fs.fetch, fs.start, fs.perf, 1, &t, &err), 0, "%s", err.msg);
    stall_ds_stream *st = NULL;
    cr_assert_eq(stall_ds_open(fs.fetch, fs.start, fs.perf, 1, &st, &err), 0, "%s", err.msg);
    for (int pass = 0; pass < 2; pass++) {
        cr_assert_eq(stall_ds_rewind(st, &err), 0, "%s", err.msg);
        size_t k, n = 0;
        const stall_ds_trace *b;
        int rc;
        while ((rc = stall_ds_next(st, &k, &b, &err)) == 1) {
            cr_assert_eq(k, n);
            cr_assert_eq(b->index[0], t->index[k]);
            cr_assert_eq(b->label0, t->label0 + k);
            for (int g = 0; g < 2; g++) {
                size_t i = k * 2 + (size_t)g;
                cr_assert_eq(b->fetch_s[g], t->fetch_s[i]);
                cr_assert_eq(b->start_ns[g], t->start_ns[i]);
                cr_assert_eq(b->time_ns[g], t->time_ns[i]);
                cr_assert_eq(b->iter_s[g], t->iter_s[i]);
                cr_assert_eq(b->stall_s[g], t->stall_s[i]);
            }
            n++;
        }
        cr_assert_eq(rc, 0, "%s", err.msg);
        cr_assert_eq(n, t->rows);
        cr_assert_eq(stall_ds_stream_rows(st), t->rows);
    }
    stall_ds_close(st);
    stall_ds_free(t);
    clean(&fs);
}

/* ---- the clocks of start and perf (one file in UTC, the other local) ------- */

/* A golden input file's text. */
static char *golden_text(const char *suffix)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s%s", CASE1, STEM, suffix);
    size_t n;
    char *s = stall_read_file(path, &n);
    cr_assert_not_null(s, "cannot read %s", path);
    return s;
}

/* The golden start file with every timestamp moved by ns (as a file written
 * with another clock or time zone): 9 fractional digits, naive UTC. */
static char *golden_start_shifted(stall_time ns)
{
    char *in = golden_text("_simp_fetchstartdifftime.csv");
    size_t cap = strlen(in) * 2 + 1, len = 0;
    char *out = malloc(cap);
    cr_assert_not_null(out);
    int header = 1;
    for (char *save = NULL, *line = strtok_r(in, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        int field = 0;
        for (char *f = line, *next; f; f = next, field++) {
            next = strchr(f, ',');
            if (next)
                *next++ = '\0';
            char buf[64];
            stall_time t;
            if (!header && field >= 3) {
                cr_assert_eq(stall_parse_timestamp(f, &t), 0, "%s", f);
                t += ns;
                time_t sec = (time_t)(t / STALL_NS_PER_S);
                struct tm tm;
                gmtime_r(&sec, &tm);
                char day[32];
                strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm);
                snprintf(buf, sizeof buf, "%s.%09lld", day, (long long)(t % STALL_NS_PER_S));
                f = buf;
            }
            len += (size_t)snprintf(out + len, cap - len, "%s%s", field ? "," : "", f);
        }
        len += (size_t)snprintf(out + len, cap - len, "\n");
        header = 0;
    }
    free(in);
    return out;
}

/* The golden trace with its start file moved by ns: refused by the clock
 * check with `where` and `what` in the message (where NULL: loads, every
 * start moved by exactly ns). */
static void golden_shifted(stall_time ns, const char *where, const char *what)
{
    char *fetch = golden_text("_simp_fetchdifftime.csv"), *perf = golden_text(".csv");
    char *start = golden_start_shifted(ns);
    if (where) {
        expect_fail(fetch, start, perf, where, what);
    } else {
        files fs;
        make(&fs, fetch, start, perf);
        stall_ds_trace *t = NULL, *ref = NULL;
        stall_err err = {0};
        cr_assert_eq(stall_ds_load(fs.fetch, fs.start, fs.perf, 1, &t, &err), 0, "%s", err.msg);
        cr_assert_eq(stall_ds_load(CASE1 STEM "_simp_fetchdifftime.csv",
                                   CASE1 STEM "_simp_fetchstartdifftime.csv", CASE1 STEM ".csv", 1,
                                   &ref, &err),
                     0, "%s", err.msg);
        cr_assert_eq(t->rows, ref->rows);
        for (size_t i = 0; i < t->rows * (size_t)t->gpus; i++)
            cr_assert_eq(t->start_ns[i], ref->start_ns[i] + ns);
        stall_ds_free(t);
        stall_ds_free(ref);
        clean(&fs);
    }
    free(fetch);
    free(start);
    free(perf);
}

Test(dsanalyzer, start_clock_an_hour_ahead_of_perf_is_refused_at_its_first_row)
{
    /* Batch 0's fetch would end 3599.7 s after GPU 0 received it. */
    golden_shifted(3600 * STALL_NS_PER_S, "start.csv:2:4: 'Start time_gpu0': Index number 0's",
                   "ends 3599.660 s after GPU 0 received the batch (");
    golden_shifted(3600 * STALL_NS_PER_S, "perf.csv:2, Time)", "tolerance 1 s");
}

Test(dsanalyzer, start_clock_an_hour_behind_perf_is_refused_at_its_first_row)
{
    /* Batch 0's fetch would start an hour before the loop asked for it. */
    golden_shifted(-3600 * STALL_NS_PER_S, "start.csv:2:4: 'Start time_gpu0': Index number 0's",
                   "starts 3599.871 s before GPU 0's first request of Epoch 1 (");
    golden_shifted(-3600 * STALL_NS_PER_S, "perf.csv:2, Time - stall)", "tolerance 60 s");
}

Test(dsanalyzer, milliseconds_of_clock_jitter_between_the_files_are_accepted)
{
    golden_shifted(5 * 1000000, NULL, NULL);
    golden_shifted(-5 * 1000000, NULL, NULL);
}

Test(dsanalyzer, clock_tolerances_are_1_s_late_and_60_s_early)
{
    /* The golden trace's tightest batch (Index number 402, GPU 0) is received
     * 0.151 s after its fetch ends: 1.0 s later is within 1 s; 1.2 s is not,
     * first at Index number 102 on GPU 2 (line 104, column 6). */
    cr_assert_eq(STALL_DS_CLOCK_LATE_S, 1.0);
    cr_assert_eq(STALL_DS_CLOCK_EARLY_S, 60.0);
    golden_shifted(STALL_NS_PER_S, NULL, NULL);
    golden_shifted(1200 * 1000000, "start.csv:104:6: 'Start time_gpu2': Index number 102's",
                   "after GPU 2 received");
    /* Each GPU's first fetch starts 0.12-0.13 s after its first request. */
    golden_shifted(-60 * STALL_NS_PER_S, NULL, NULL);
    golden_shifted(-61 * STALL_NS_PER_S, "start.csv:2:4: 'Start time_gpu0': Index number 0's",
                   "before GPU 0's first request");
}

/* Runs cmd with stderr to errf; its exit status. */
static int run_cli(const char *cmd, const char *errf)
{
    char full[4096];
    snprintf(full, sizeof full, "%s >/dev/null 2>%s", cmd, errf);
    int st = system(full);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(dsanalyzer, cli_refuses_an_hour_offset_start_file_with_exit_2_and_writes_nothing)
{
    char dir[] = "/tmp/stall_dsa_cli_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fetch[256], start[256], perf[256], out[256], errf[256], ini[256];
    snprintf(fetch, sizeof fetch, "%s/%s_simp_fetchdifftime.csv", dir, STEM);
    snprintf(start, sizeof start, "%s/%s_simp_fetchstartdifftime.csv", dir, STEM);
    snprintf(perf, sizeof perf, "%s/%s.csv", dir, STEM);
    snprintf(out, sizeof out, "%s/out", dir);
    snprintf(errf, sizeof errf, "%s/stderr.txt", dir);
    snprintf(ini, sizeof ini, "%s/seed.ini", dir);
    char *f = golden_text("_simp_fetchdifftime.csv"), *p = golden_text(".csv");
    char *s = golden_start_shifted(3600 * STALL_NS_PER_S);
    put(fetch, f);
    put(start, s);
    put(perf, p);
    FILE *ini_f = fopen(ini, "w");
    cr_assert_not_null(ini_f);
    fprintf(ini_f,
            "[scenario]\nname = seed\nmode = seed\n[trace]\nformat = dsanalyzer\nfetch = %s\n"
            "start = %s\nperf = %s\nepoch = 1\n",
            fetch, start, perf);
    fclose(ini_f);
    char where[400];
    snprintf(where, sizeof where, "%s:2:4: 'Start time_gpu0'", start);
    const char *verbs[] = {"run", "validate", "analyze", "run-seed"};
    for (int v = 0; v < 4; v++) {
        char cmd[2048];
        snprintf(cmd, sizeof cmd, STALL_BINARY_DIR "/stallsim %s %s -o %s",
                 v == 3 ? "run" : verbs[v], v == 3 ? ini : perf, out);
        cr_assert_eq(run_cli(cmd, errf), 2, "%s: exit status", verbs[v]);
        size_t n;
        char *err = stall_read_file(errf, &n);
        cr_assert_not_null(err);
        /* One error line (after the detection note on stdout). */
        char *last = strstr(err, where);
        cr_assert_not_null(last, "%s: stderr lacks \"%s\": %s", verbs[v], where, err);
        cr_assert(strchr(last, '\n') == last + strlen(last) - 1, "%s: %s", verbs[v], err);
        cr_assert_eq(access(out, F_OK), -1, "%s: %s was written", verbs[v], out);
        free(err);
    }
    free(f);
    free(s);
    free(p);
    remove(fetch);
    remove(start);
    remove(perf);
    remove(errf);
    remove(ini);
    rmdir(dir);
}

Test(dsanalyzer, clock_offset_is_found_alike_with_perf_rows_in_any_order)
{
    /* GOOD_START an hour later; the perf rows once out of order (read whole)
     * and once sorted (read in one pass); then only batch 1's GPU 1 moved
     * (9 s later: its fetch ends 2.35 s after the loop received it). */
    const char *hour = ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n"
                       "0,1,0,2021-09-01 20:48:46.731757,2021-09-01 20:48:46.728846\n"
                       "1,1,1,2021-09-01 20:48:47.5,2021-09-01 20:48:47.25\n"
                       "2,1,2,2021-09-01 20:48:48.000000001,2021-09-01 20:48:48.1\n";
    expect_fail(NULL, hour, NULL, "start.csv:2:4: 'Start time_gpu0': Index number 0's",
                "ends 3593.132 s after GPU 0 received the batch (");
    const char *one = ",Epoch,Index number,Start time_gpu0,Start time_gpu1\n"
                      "0,1,0,2021-09-01 19:48:46.731757,2021-09-01 19:48:46.728846\n"
                      "1,1,1,2021-09-01 19:48:47.5,2021-09-01 19:48:56.25\n"
                      "2,1,2,2021-09-01 19:48:48.000000001,2021-09-01 19:48:48.1\n";
    expect_fail(NULL, one, NULL, "start.csv:3:5: 'Start time_gpu1': Index number 1's",
                "ends 2.350 s after GPU 1 received");
}

/* The tidy trace reader: exact seconds parsing, the grid checks, and one
 * error test per bad-input rule, each naming file:line(:column). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/tidy.h"

#include "tmpdir.h"

static char tdir[] = "/tmp/stall_tidy_XXXXXX";
static void tidy_setup(void)
{
    tmpdir_make(tdir);
}
static void tidy_teardown(void)
{
    tmpdir_remove(tdir);
}
TestSuite(tidy, .init = tidy_setup, .fini = tidy_teardown);

#define HDR "rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end"

static const char *put(const char *text)
{
    static char path[600];
    static int n;
    snprintf(path, sizeof path, "%s/t%d.csv", tdir, n++);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
    return path;
}

static void expect_error(const char *text, int code, const char *where, const char *what)
{
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    const char *p = put(text);
    int rc = stall_tidy_load(p, &t, &err);
    cr_assert_eq(rc, code, "rc %d for:\n%s\nmessage: %s", rc, text, err.msg);
    cr_assert_null(t);
    cr_assert(strstr(err.msg, p) != NULL, "no file name in: %s", err.msg);
    cr_assert(strstr(err.msg, where) != NULL, "expected '%s' in: %s", where, err.msg);
    cr_assert(strstr(err.msg, what) != NULL, "expected '%s' in: %s", what, err.msg);
}

Test(tidy, seconds_parse_exactly_to_ns)
{
    stall_time ns;
    cr_assert_eq(stall_parse_seconds_ns("1763700000.123456789", &ns), 0);
    cr_assert_eq(ns, 1763700000123456789LL, "%lld", (long long)ns);
    cr_assert_eq(stall_parse_seconds_ns("0.0000000015", &ns), 0);
    cr_assert_eq(ns, 2);
    cr_assert_eq(stall_parse_seconds_ns("12", &ns), 0);
    cr_assert_eq(ns, 12000000000LL);
    cr_assert_eq(stall_parse_seconds_ns(".5", &ns), 0);
    cr_assert_eq(ns, 500000000);
    cr_assert_eq(stall_parse_seconds_ns("-1.25", &ns), 0);
    cr_assert_eq(ns, -1250000000);
    cr_assert_eq(stall_parse_seconds_ns("nan", &ns), -1);
    cr_assert_eq(stall_parse_seconds_ns("1.2.3", &ns), -1);
    cr_assert_eq(stall_parse_seconds_ns("", &ns), -1);
    cr_assert_eq(stall_parse_seconds_ns("1..5", &ns), -1);
}

Test(tidy, loads_two_ranks_two_epochs_with_optional_columns)
{
    const char *text = HDR ",compute_end,samples,epoch_start,workers,prefetch\n"
                           "0,0,0,0,1.0,2.0,1.5,2.1,2.5,2.4,32,1.0,2,2\n"
                           "1,0,0,0,1.0,2.2,1.5,2.3,2.5,2.45,32,1.0,2,2\n"
                           "0,0,1,1,1.0,2.0,2.5,2.6,3.0,2.9,32,1.0,2,2\n"
                           "1,0,1,1,1.0,2.0,2.5,2.6,3.0,2.9,32,1.0,2,2\n"
                           "0,1,0,0,5.0,6.0,5.5,6.1,6.5,6.4,32,4.9,2,2\n"
                           "1,1,0,0,5.0,6.0,5.5,6.1,6.5,6.4,32,4.9,2,2\n"
                           "0,1,1,1,5.0,6.0,6.5,6.6,7.0,6.9,32,4.9,2,2\n"
                           "1,1,1,1,5.0,6.0,6.5,6.6,7.0,6.9,32,4.9,2,2\n";
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(put(text), &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t->ranks, 2);
    cr_assert_eq(t->epochs, 2);
    cr_assert_eq(t->batches, 2);
    cr_assert_eq(t->workers, 2);
    cr_assert_eq(t->prefetch, 2);
    cr_assert_eq(t->fetch_end[stall_tidy_at(t, 0, 1, 0)], 2200000000LL);
    cr_assert_eq(t->epoch_start[1 * 2 + 0], 4900000000LL);
    cr_assert_not_null(t->compute_end);
    cr_assert_eq(t->samples[0], 32);
    stall_tidy_free(t);
}

Test(tidy, missing_file_is_io_error)
{
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load("/nonexistent/trace.csv", &t, &err), STALL_EIO);
    cr_assert(strstr(err.msg, "/nonexistent/trace.csv") != NULL);
}

Test(tidy, misspelled_column_names_line_and_column)
{
    expect_error("rank,epoch,batch,worker,fetch_start,fetch_end,requets,ready,iter_end\n",
                 STALL_EPARSE, ":1:7:", "'request'");
}

Test(tidy, empty_trace_is_rejected)
{
    expect_error(HDR "\n", STALL_EPARSE, ":2", "empty trace");
    expect_error("", STALL_EPARSE, ":1", "empty file");
}

/* A row of more than 64 fields is named at its own line (it was the line
 * before it: the header's, 1, for the first row). */
Test(tidy, a_row_past_64_columns_names_its_own_line)
{
    char text[1024];
    int n = snprintf(text, sizeof text, HDR "\n0,0,0,0,1,2,1,2,3\n0");
    for (int i = 1; i < 70; i++)
        n += snprintf(text + n, sizeof text - (size_t)n, ",0");
    snprintf(text + n, sizeof text - (size_t)n, "\n");
    expect_error(text, STALL_EPARSE, ":3:65:", "more than 64 columns");
}

/* A profiler (JSON, gzipped or not) or DLIO trace given as a tidy one
 * ([trace] format = tidy): said so, naming the formats that read it (a
 * gzipped one was "NUL byte in the field", with a note that the file may be
 * cut). */
Test(tidy, a_json_or_gzip_file_is_named_as_such)
{
    expect_error("{\"traceEvents\": []}\n", STALL_EPARSE, ":1:", "JSON, not a tidy trace CSV");
    expect_error("\xEF\xBB\xBF [{\"name\": \"read\"}]\n", STALL_EPARSE,
                 ":1:", "JSON, not a tidy trace CSV");
    expect_error("\x1f\x8b\x08\x08"
                 "abc",
                 STALL_EPARSE, ":1:",
                 "gzip-compressed, not a tidy trace CSV (a PyTorch profiler or DLIO trace is read "
                 "with [trace] format = kineto or dftracer)");
    /* an INI's first section is not JSON's "[" (it was named JSON) */
    expect_error("[scenario]\nname = x\n", STALL_EPARSE, ":1:",
                 "an INI file (a scenario), not a tidy trace CSV: give it to the command as its "
                 "CONFIG");
    expect_error("  [trace]\npath = t.csv\n", STALL_EPARSE, ":1:", "an INI file (a scenario)");
    expect_error("[1, 2]\n", STALL_EPARSE, ":1:", "JSON, not a tidy trace CSV");
}

Test(tidy, non_numeric_negative_and_nan_times)
{
    expect_error(HDR "\n0,0,0,0,abc,2,1,2,3\n", STALL_EPARSE, ":2:5:", "not a time");
    expect_error(HDR "\n0,0,0,0,1,2,1,nan,3\n", STALL_EPARSE, ":2:8:", "not a time");
    expect_error(HDR "\n0,0,0,0,-1,2,1,2,3\n", STALL_EPARSE, ":2:5:", "negative");
    expect_error(HDR "\n0,0,0,x,1,2,1,2,3\n", STALL_EPARSE, ":2:4:", "not an integer");
}

Test(tidy, inconsistent_times_are_rejected)
{
    expect_error(HDR "\n0,0,0,0,3,2,1,2,3\n", STALL_EPARSE, ":2:6:", "before 'fetch_start'");
    expect_error(HDR "\n0,0,0,0,1,2,3,2,3\n", STALL_EPARSE, ":2:8:", "before 'request'");
    expect_error(HDR "\n0,0,0,0,1,2,1,2,1.5\n", STALL_EPARSE, ":2:9:", "before 'ready'");
}

Test(tidy, unsorted_or_duplicate_rows_are_rejected)
{
    expect_error(HDR "\n0,0,0,0,1,2,1,2,3\n0,0,0,0,1,2,1,2,3\n", STALL_EPARSE, ":3",
                 "out of order or duplicated");
    expect_error(HDR "\n0,0,0,0,1,2,1,2,3\n0,0,2,0,1,2,1,2,3\n", STALL_EPARSE, ":3",
                 "out of order");
    expect_error(HDR "\n0,0,1,0,1,2,1,2,3\n", STALL_EPARSE, ":2", "first row");
}

Test(tidy, ranks_disagreeing_on_batches_are_rejected)
{
    /* Rank 1 lacks batch 1. */
    expect_error(HDR
                 "\n0,0,0,0,1,2,1,2,3\n1,0,0,0,1,2,1,2,3\n0,0,1,0,3,4,3,4,5\n0,1,0,0,5,6,5,6,7\n",
                 STALL_EPARSE, ":5", "fewer rows than there are ranks");
    /* Epoch 1 shorter than epoch 0. */
    expect_error(HDR "\n0,0,0,0,1,2,1,2,3\n0,0,1,0,3,4,3,4,5\n0,1,0,0,5,6,5,6,7\n", STALL_EPARSE,
                 ":4", "the last epoch has 1 batches");
}

Test(tidy, wrong_field_count_is_rejected)
{
    expect_error(HDR "\n0,0,0,0,1,2,1,2\n", STALL_EPARSE, ":2", "8 fields");
}

/* ---- what is valid: stallsim's reader and `stallsim_capture.py check` agree (issue 8) ---- */

#include <sys/wait.h>

/* Writes the w2 trace's header and first `rows` rows with a change. */
static void variant(const char *out, const char *prefix, int rows, int swap, const char *replace,
                    const char *with)
{
    FILE *in = fopen(STALL_SOURCE_DIR "/traces/ddp2_w2/trace.csv", "r");
    FILE *f = fopen(out, "w");
    cr_assert(in && f);
    fputs(prefix, f);
    char line[2048], held[2048] = "";
    for (int i = 0; i <= rows && fgets(line, sizeof line, in); i++) {
        if (replace && i == 3) {
            char *p = strstr(line, replace);
            if (p) {
                char tmp[2048];
                snprintf(tmp, sizeof tmp, "%.*s%s%s", (int)(p - line), line, with,
                         p + strlen(replace));
                strcpy(line, tmp);
            }
        }
        if (swap && i == swap) {
            strcpy(held, line);
            continue;
        }
        fputs(line, f);
        if (held[0]) {
            fputs(held, f);
            held[0] = '\0';
        }
    }
    fclose(in);
    fclose(f);
}

Test(tidy, capture_check_agrees_with_the_reader)
{
    if (system("python3 -c 'import csv' >/dev/null 2>&1") != 0)
        tmpdir_skip(tdir, "python3 not available");
    static char dir[] = "/tmp/stall_tidy_agree_XXXXXX";
    tmpdir_make(dir);
    struct {
        const char *name, *prefix;
        int rows, swap;
        const char *replace, *with;
        bool valid;
    } cases[] = {
        {"plain", "", 40, 0, NULL, NULL, true},
        {"bom", "\xEF\xBB\xBF", 40, 0, NULL, NULL, true},
        {"swapped", "", 40, 5, NULL, NULL, false},
        {"negative", "", 40, 0, ",17952", ",-17952", false},
        {"text", "", 40, 0, ",17952", ",x17952", false},
        {"ragged", "", 40, 0, ",0,0", ",0", false},
        {"partial_batch", "", 41, 0, NULL, NULL, false},
        {"worker_beyond_workers", "", 40, 0, "0,0,1,1,", "0,0,1,9,", false},
        {"bytes_negative", "", 40, 0, ",196736,", ",-5,", false},
        {"request_before_iter_end", "", 40, 0, ",1795224194.893904,", ",1795224194.893000,", false},
        {"exponent", "", 40, 0, ",1795224194.893904,", ",1.795224194893904e+09,", true},
        {"exponent_bytes", "", 40, 0, ",196736,", ",1.96736e+05,", true},
        {"exponent_huge", "", 40, 0, ",1795224194.893904,", ",1e400,", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char path[700], cmd[1600];
        snprintf(path, sizeof path, "%s/%s.csv", dir, cases[i].name);
        variant(path, cases[i].prefix, cases[i].rows, cases[i].swap, cases[i].replace,
                cases[i].with);
        stall_tidy_trace *t = NULL;
        stall_err err = {0};
        bool c_ok = stall_tidy_load(path, &t, &err) == 0;
        stall_tidy_free(t);
        snprintf(cmd, sizeof cmd, "python3 %s/tools/stallsim_capture.py check %s >/dev/null 2>&1",
                 STALL_SOURCE_DIR, path);
        int st = system(cmd);
        bool py_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
        cr_expect_eq(c_ok, cases[i].valid, "%s: stallsim says %s (%s)", cases[i].name,
                     c_ok ? "valid" : "invalid", err.msg);
        cr_expect_eq(py_ok, c_ok, "%s: check says %s, stallsim %s (%s)", cases[i].name,
                     py_ok ? "valid" : "invalid", c_ok ? "valid" : "invalid", err.msg);
    }
    tmpdir_remove(dir);
}

Test(tidy, per_rank_order_points_to_the_merge_command)
{
    static char dir[] = "/tmp/stall_tidy_order_XXXXXX";
    tmpdir_make(dir);
    char path[700];
    snprintf(path, sizeof path, "%s/per_rank.csv", dir);
    FILE *f = fopen(path, "w");
    fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end\n"
          "0,0,0,0,1,2,1,2,3\n0,0,1,1,1,2,3,3,4\n1,0,0,0,1,2,1,2,3\n1,0,1,1,1,2,3,3,4\n",
          f);
    fclose(f);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_neq(stall_tidy_load(path, &t, &err), 0);
    cr_expect(strstr(err.msg, ":4:") != NULL, "%s", err.msg);
    cr_expect(strstr(err.msg, "stallsim_capture.py merge") != NULL, "%s", err.msg);
    tmpdir_remove(dir);
}

/* Issue 10: sizes beyond the stated limits are refused, never truncated. */
Test(tidy, integers_beyond_the_limits_are_refused)
{
    expect_error(HDR ",workers\n0,0,0,0,1,2,1,2,3,4294967298\n", STALL_EPARSE,
                 ":2:10:", "limit of 1024");
    expect_error(HDR ",prefetch\n0,0,0,0,1,2,1,2,3,99999999999\n", STALL_EPARSE, ":2:10:", "limit");
    expect_error(HDR "\n0,0,0,4294967296,1,2,1,2,3\n", STALL_EPARSE, ":2:4:", "limit");
    expect_error(HDR "\n0,0,0,0,1,2,1,2,3\n99999999999,0,0,0,1,2,1,2,3\n", STALL_EPARSE,
                 ":3:1:", "limit");
}

Test(tidy, times_beyond_the_clock_or_span_limit_are_refused)
{
    expect_error(HDR "\n0,0,0,0,5000000000,5000000001,5000000000,5000000001,5000000002\n",
                 STALL_EPARSE, ":2:5:", "clock limit");
    expect_error(HDR "\n0,0,0,0,1,2,1,2,30000000\n", STALL_EPARSE, ":2:9:", "span");
}

Test(tidy, loader_settings_must_agree_between_rows)
{
    expect_error(HDR ",workers\n0,0,0,0,1,2,1,2,3,2\n0,0,1,0,3,4,3,4,5,3\n", STALL_EPARSE,
                 ":3:10:", "on line 2");
    expect_error(HDR ",pin_memory\n0,0,0,0,1,2,1,2,3,0\n0,0,1,0,3,4,3,4,5,1\n", STALL_EPARSE,
                 ":3:10:", "one loader configuration");
}

Test(tidy, rows_that_go_back_in_time_are_refused)
{
    /* Batch 1 requested before batch 0 ended. */
    expect_error(HDR "\n0,0,0,0,1,2,1,2,3\n0,0,1,0,1,2,1,2,3\n", STALL_EPARSE,
                 ":3:7:", "previous batch on line 2");
    /* epoch_start after its epoch's first request: a negative epoch. */
    expect_error(HDR ",epoch_start\n0,0,0,0,1,2,1,2,3,9\n", STALL_EPARSE,
                 ":2:10:", "after this batch's 'request'");
    /* epoch_start changing within an epoch. */
    expect_error(HDR ",epoch_start\n0,0,0,0,1,2,1,2,3,0.5\n0,0,1,0,3,4,3,4,5,0.7\n", STALL_EPARSE,
                 ":3:10:", "differs");
    /* A batch fetched after it was handed to the loop. */
    expect_error(HDR "\n0,0,0,0,1,2.5,1,2,3\n", STALL_EPARSE, ":2:6:", "after 'ready'");
}

Test(tidy, errors_name_the_physical_line)
{
    /* Blank lines and a quoted newline: the record count is not the line. */
    expect_error(HDR "\n\n0,0,0,0,1,2,1,2,3\n\n\n0,0,1,0,1,2,1,2,3\n", STALL_EPARSE,
                 ":6:", "previous batch on line 3");
    expect_error(HDR ",note\n0,0,0,0,1,2,1,2,3,\"a\nb\"\n0,0,1,0,x,2,1,2,3,c\n", STALL_EPARSE,
                 ":4:5:", "not a time");
    expect_error(HDR "\r\n0,0,0,0,1,2,1,2,3\r\n\r\n0,0,0,0,1,2,1,2,3\r\n", STALL_EPARSE, ":4",
                 "out of order");
}

/* Fuzz finding (fuzz_tidy): a NUL byte cut a field short, silently. */
Test(tidy, nul_bytes_are_refused)
{
    static const char text[] = HDR ",prefetch\0@\n0,0,0,0,1,2,1,2,3,2\n";
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    const char *p = put("");
    FILE *f = fopen(p, "wb");
    fwrite(text, 1, sizeof text - 1, f);
    fclose(f);
    cr_assert_eq(stall_tidy_load(p, &t, &err), STALL_EPARSE);
    cr_assert(strstr(err.msg, ":1:10: NUL byte") != NULL, "%s", err.msg);
}

/* Fuzz finding (fuzz_pipeline): a field holding a newline was echoed into
 * a two-line error message. */
Test(tidy, error_message_stays_one_line)
{
    expect_error(HDR ",prefetch\n0,0,0,0,1,2,1,2,3,\"a\nb\"\n", STALL_EPARSE, ":2:10:", "\"a?b\"");
}

/* Fuzz finding (fuzz_pipeline, issue 17 item 10): a header whose first field
 * is empty (pandas' to_csv writes its index column so) made the byte order
 * mark check compare 3 bytes of a 1-byte field: a heap-buffer-overflow under
 * AddressSanitizer, a read past the buffer in a release build. */
Test(tidy, short_first_header_field_is_read_within_its_bytes)
{
    expect_error(",x\n0,0\n", STALL_EPARSE, ":1:", "expected column 'rank'");
    expect_error("\xEF\n0,0,0,0,1,2,1,2,3\n", STALL_EPARSE, ":1:1:", "expected column 'rank'");
    expect_error("\xEF\xBB\n", STALL_EPARSE, ":1:1:", "expected column 'rank'");
    expect_error("\xEF\xBB\xBF\n", STALL_EPARSE, ":1:1:", "expected column 'rank'");
}

/* Issue 17 items 1 and 10: a tidy trace written by pandas' DataFrame.to_csv
 * with its index column loads as the same trace without it. */
Test(tidy, pandas_index_column_is_skipped)
{
    const char *plain = HDR "\n0,0,0,0,1,2,1,2,3\n0,0,1,1,1,2,3,3,4\n";
    const char *indexed = "," HDR "\n0,0,0,0,0,1,2,1,2,3\n1,0,0,1,1,1,2,3,3,4\n";
    stall_tidy_trace *a = NULL, *b = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(put(plain), &a, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_tidy_load(put(indexed), &b, &err), 0, "%s", err.msg);
    cr_assert_eq(a->batches, b->batches);
    cr_assert_eq(a->ready[1], b->ready[1]);
    stall_tidy_free(a);
    stall_tidy_free(b);
    expect_error(",rank,epoch,batch\n", STALL_EPARSE, ":1:", "expected column 'worker'");
    expect_error("\xEF\xBB\xBF," HDR "\r\n0,0,0,0,0,1,2,1,2\r\n", STALL_EPARSE, ":2", "fields");
}

/* The in-place splitter (plain lines) and libcsv (any line with a quote,
 * space, tab or CR) read the same values: a shipped trace, and the same
 * trace with every field quoted, padded with blanks, and CRLF line ends,
 * load to the same columns; a line longer than the read buffer is read. */
static stall_tidy_trace *load_ok(const char *path)
{
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(path, &t, &err), 0, "%s", err.msg);
    return t;
}

Test(tidy, plain_and_quoted_lines_read_the_same)
{
    FILE *in = fopen("traces/w2/trace.csv", "rb");
    cr_assert(in);
    char out[600];
    snprintf(out, sizeof out, "%s/quoted.csv", tdir);
    FILE *q = fopen(out, "wb");
    int c, line = 0, at_start = 1;
    while ((c = getc(in)) != EOF) {
        int mode = line % 3; /* 0 quoted, 1 blanks around, 2 plain with CRLF */
        if (c == '\n') {
            if (!at_start && mode == 0)
                fputc('"', q);
            else if (mode == 1)
                fputc(' ', q);
            fputs(mode == 2 ? "\r\n" : "\n", q);
            line++;
            at_start = 1;
            continue;
        }
        if (at_start)
            fputs(mode == 0 ? "\"" : mode == 1 ? " " : "", q);
        at_start = 0;
        if (c == ',')
            fputs(mode == 0 ? "\",\"" : mode == 1 ? " ,\t" : ",", q);
        else
            fputc(c, q);
    }
    fclose(in);
    fclose(q);
    stall_tidy_trace *a = load_ok("traces/w2/trace.csv"), *b = load_ok(out);
    size_t n = (size_t)a->ranks * (size_t)a->epochs * (size_t)a->batches;
    cr_assert_eq(a->ranks, b->ranks);
    cr_assert_eq(a->batches, b->batches);
    cr_assert_eq(a->epochs, b->epochs);
    cr_assert_eq(a->workers, b->workers);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(a->fetch_start[i], b->fetch_start[i], "row %zu", i);
        cr_assert_eq(a->fetch_end[i], b->fetch_end[i], "row %zu", i);
        cr_assert_eq(a->request[i], b->request[i], "row %zu", i);
        cr_assert_eq(a->ready[i], b->ready[i], "row %zu", i);
        cr_assert_eq(a->iter_end[i], b->iter_end[i], "row %zu", i);
        cr_assert_eq(a->worker[i], b->worker[i], "row %zu", i);
    }
    stall_tidy_free(a);
    stall_tidy_free(b);
}

Test(tidy, a_line_longer_than_the_read_buffer_is_read)
{
    /* A header padded past 256 KiB with an unknown column's long name. */
    size_t pad = 300000;
    char *text = malloc(pad + 4096);
    strcpy(text, HDR ",");
    size_t n = strlen(text);
    memset(text + n, 'x', pad);
    strcpy(text + n + pad, "\n0,0,0,0,1.0,2.0,1.5,2.5,3.0,7\n");
    stall_tidy_trace *t = load_ok(put(text));
    cr_assert_eq(t->ranks, 1);
    cr_assert_eq(t->iter_end[0], 3000000000);
    stall_tidy_free(t);
    free(text);
}

/* Issue 16: the capture's persistent column (the run's persistent_workers)
 * is read: 0 or 1, one value per trace; absent: -1. */
Test(tidy, persistent_column_is_read_and_must_agree_between_rows)
{
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(put(HDR ",persistent\n0,0,0,0,1,2,1,2,3,1\n0,0,1,0,3,4,3,4,5,1\n"),
                                 &t, &err),
                 0, "%s", err.msg);
    cr_expect_eq(t->persistent, 1);
    stall_tidy_free(t);
    cr_assert_eq(stall_tidy_load(put(HDR ",persistent\n0,0,0,0,1,2,1,2,3,0\n"), &t, &err), 0, "%s",
                 err.msg);
    cr_expect_eq(t->persistent, 0);
    stall_tidy_free(t);
    cr_assert_eq(stall_tidy_load(put(HDR "\n0,0,0,0,1,2,1,2,3\n"), &t, &err), 0, "%s", err.msg);
    cr_expect_eq(t->persistent, -1, "no column: unknown");
    stall_tidy_free(t);
    expect_error(HDR ",persistent\n0,0,0,0,1,2,1,2,3,1\n0,0,1,0,3,4,3,4,5,0\n", STALL_EPARSE,
                 ":3:10:", "one loader configuration");
    expect_error(HDR ",persistent\n0,0,0,0,1,2,1,2,3,2\n", STALL_EPARSE, ":2:10:", "limit of 1");
}

/* ---- exponent notation (Python's repr writes 1e-06, 1.795224177e+09) ---- */

Test(tidy, exponent_notation_parses_exactly_to_ns)
{
    stall_time ns;
    cr_assert_eq(stall_parse_seconds_ns("1.795224177e+09", &ns), 0);
    cr_assert_eq(ns, 1795224177000000000LL, "%lld", (long long)ns);
    cr_assert_eq(stall_parse_seconds_ns("1e-06", &ns), 0);
    cr_assert_eq(ns, 1000);
    cr_assert_eq(stall_parse_seconds_ns("4E-6", &ns), 0);
    cr_assert_eq(ns, 4000);
    cr_assert_eq(stall_parse_seconds_ns("1e3", &ns), 0);
    cr_assert_eq(ns, 1000000000000LL);
    /* the nearest ns of the decimal value, halves away from zero, as without an exponent */
    cr_assert_eq(stall_parse_seconds_ns("15e-10", &ns), 0);
    cr_assert_eq(ns, 2);
    cr_assert_eq(stall_parse_seconds_ns("1.4999e-9", &ns), 0);
    cr_assert_eq(ns, 1);
    cr_assert_eq(stall_parse_seconds_ns("-5e-10", &ns), 0);
    cr_assert_eq(ns, -1);
    cr_assert_eq(stall_parse_seconds_ns("4.9999999999999999e-10", &ns), 0);
    cr_assert_eq(ns, 0);
    /* more digits than a double holds: exact, from the text */
    cr_assert_eq(stall_parse_seconds_ns("17637000001234567894e-10", &ns), 0);
    cr_assert_eq(ns, 1763700000123456789LL, "%lld", (long long)ns);
    cr_assert_eq(stall_parse_seconds_ns("0.00017637000001234567895e+13", &ns), 0);
    cr_assert_eq(ns, 1763700000123456790LL, "%lld", (long long)ns);
    cr_assert_eq(stall_parse_seconds_ns("0e999999999999", &ns), 0);
    cr_assert_eq(ns, 0);
    cr_assert_eq(stall_parse_seconds_ns("1e-999999999999", &ns), 0);
    cr_assert_eq(ns, 0);
    cr_assert_eq(stall_parse_seconds_ns("1e400", &ns), -1);
    cr_assert_eq(stall_parse_seconds_ns("1e", &ns), -1);
    cr_assert_eq(stall_parse_seconds_ns("1e+", &ns), -1);
    cr_assert_eq(stall_parse_seconds_ns("e3", &ns), -1);
    cr_assert_eq(stall_parse_seconds_ns("1e3.5", &ns), -1);
    cr_assert_eq(stall_parse_seconds_ns("1e3x", &ns), -1);
    cr_assert_eq(stall_parse_seconds_ns("inf", &ns), -1);
    cr_assert_eq(stall_parse_seconds_ns("0x1p3", &ns), -1);
}

/* Plain decimal text d (digits, one optional point, an optional sign) written with its
 * point moved `shift` digits left (right when negative) and the exponent that undoes it. */
static void to_exponent(const char *d, int shift, char *out, size_t cap)
{
    char sign[2] = "", digits[96];
    if (*d == '-' || *d == '+')
        sign[0] = *d++;
    size_t n = 0, nw = 0;
    for (const char *p = d; *p && n + 1 < sizeof digits; p++)
        if (*p == '.')
            nw = n;
        else
            digits[n++] = *p;
    if (!strchr(d, '.'))
        nw = n;
    digits[n] = '\0';
    /* the new point: nw - shift digits in, zeros padded on either side */
    long q = (long)nw - shift;
    char m[160] = "";
    if (q < 0)
        snprintf(m, sizeof m, "0.%0*d%s", (int)-q, 0, digits);
    else if (q == 0)
        snprintf(m, sizeof m, "0.%s", digits);
    else if ((size_t)q > n)
        snprintf(m, sizeof m, "%s%0*d", digits, (int)((size_t)q - n), 0);
    else if ((size_t)q == n)
        snprintf(m, sizeof m, "%s", digits);
    else {
        snprintf(m, sizeof m, "%.*s.%s", (int)q, digits, digits + q);
    }
    snprintf(out, cap, "%s%se%s%d", sign, m, shift >= 0 ? "+" : "", shift);
}

Test(tidy, a_trace_in_exponent_notation_reads_as_in_plain_decimals)
{
    /* every field of a trace with all the columns (checkpoint and CPU ones too), its point
     * moved by a different number of digits per column */
    const char *plain = STALL_SOURCE_DIR "/traces/ckpt_s10_n12_r1/trace.csv";
    char expo[700];
    snprintf(expo, sizeof expo, "%s/expo.csv", tdir);
    FILE *in = fopen(plain, "r"), *f = fopen(expo, "w");
    cr_assert(in && f);
    char line[4096];
    int lines = 0, changed = 0;
    while (fgets(line, sizeof line, in)) {
        if (lines++ == 0) {
            fputs(line, f);
            continue;
        }
        line[strcspn(line, "\n")] = '\0';
        int col = 0;
        for (char *s = line, *e;; s = e + 1, col++) {
            e = s + strcspn(s, ",");
            char end = *e, field[96], x[200];
            *e = '\0';
            snprintf(field, sizeof field, "%.95s", s);
            if (field[0]) {
                to_exponent(field, col % 13 - 4, x, sizeof x);
                changed++;
            }
            fprintf(f, "%s%s", col ? "," : "", field[0] ? x : "");
            if (!end)
                break;
        }
        fputc('\n', f);
    }
    fclose(in);
    fclose(f);
    cr_assert_gt(changed, 1000);

    stall_tidy_trace *a = NULL, *b = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(plain, &a, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_tidy_load(expo, &b, &err), 0, "%s", err.msg);
    cr_assert_eq(a->ranks, b->ranks);
    cr_assert_eq(a->epochs, b->epochs);
    cr_assert_eq(a->batches, b->batches);
    cr_assert_eq(a->workers, b->workers);
    cr_assert_eq(a->prefetch, b->prefetch);
    size_t n = (size_t)a->epochs * (size_t)a->ranks * (size_t)a->batches;
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(a->fetch_start[i], b->fetch_start[i]);
        cr_assert_eq(a->fetch_end[i], b->fetch_end[i]);
        cr_assert_eq(a->request[i], b->request[i]);
        cr_assert_eq(a->ready[i], b->ready[i]);
        cr_assert_eq(a->iter_end[i], b->iter_end[i]);
        cr_assert_eq(a->compute_end[i], b->compute_end[i]);
        cr_assert_eq(a->worker[i], b->worker[i]);
        cr_assert_eq(a->samples[i], b->samples[i]);
        cr_assert_eq(a->bytes[i], b->bytes[i]);
        if (a->ckpt_start) {
            cr_assert_eq(a->ckpt_start[i], b->ckpt_start[i]);
            cr_assert_eq(a->ckpt_end[i], b->ckpt_end[i]);
        }
    }
    for (size_t i = 0; i < (size_t)a->epochs * (size_t)a->ranks; i++)
        cr_assert_eq(a->epoch_start[i], b->epoch_start[i]);
    cr_assert(a->cpu.has && b->cpu.has);
    cr_assert_eq(memcmp(&a->cpu, &b->cpu, sizeof a->cpu), 0, "the CPU columns differ");
    stall_tidy_free(a);
    stall_tidy_free(b);
}

Test(tidy, integers_in_exponent_notation_must_be_whole)
{
    const char *text = HDR ",samples,workers\n"
                           "0e0,0,0,1e0,1,2,1,2,3,1.6e1,2E+0\n"
                           "0,0,1,0,1,2,3,3,4,160e-1,2.0\n";
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(put(text), &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t->worker[0], 1);
    cr_assert_eq(t->samples[0], 16);
    cr_assert_eq(t->samples[1], 16);
    cr_assert_eq(t->workers, 2);
    stall_tidy_free(t);
    expect_error(HDR ",samples\n0,0,0,0,1,2,1,2,3,1.65e1\n", STALL_EPARSE,
                 ":2:10:", "not an integer");
    expect_error(HDR ",samples\n0,0,0,0,1,2,1,2,3,-1e1\n", STALL_EPARSE, ":2:10:", "negative");
    expect_error(HDR ",samples\n0,0,0,0,1,2,1,2,3,1e400\n", STALL_EPARSE, ":2:10:", "limit");
    expect_error(HDR ",workers\n0,0,0,0,1,2,1,2,3,1e4\n", STALL_EPARSE, ":2:10:", "limit of 1024");
}

Test(tidy, invalid_values_in_exponent_notation_are_still_refused)
{
    expect_error(HDR "\n0,0,0,0,-1e-3,2,1,2,3\n", STALL_EPARSE, ":2:5:", "negative");
    expect_error(HDR "\n0,0,0,0,1,2,1,2,5e9\n", STALL_EPARSE, ":2:9:", "clock limit");
    expect_error(HDR "\n0,0,0,0,1,2,1,2,1e400\n", STALL_EPARSE, ":2:9:", "clock limit");
    expect_error(HDR "\n0,0,0,0,1,2,1,2,-1e400\n", STALL_EPARSE, ":2:9:", "negative");
    expect_error(HDR "\n0,0,0,0,1,2,1,2,1e\n", STALL_EPARSE, ":2:9:", "not a time");
    expect_error(HDR "\n0,0,0,0,1,2,1,2,3e+inf\n", STALL_EPARSE, ":2:9:", "not a time");
    expect_error(HDR ",fetch_wait\n0,0,0,0,1,2,1,2,3,2e6\n", STALL_EPARSE,
                 ":2:10:", "not a CPU time");
    expect_error(HDR ",fetch_wait\n0,0,0,0,1,2,1,2,3,-1e-6\n", STALL_EPARSE,
                 ":2:10:", "not a CPU time");
    expect_error(HDR ",bytes\n0,0,0,0,1,2,1,2,3,-5e0\n", STALL_EPARSE, ":2:10:", "byte count");
    expect_error(HDR ",bytes\n0,0,0,0,1,2,1,2,3,0x10\n", STALL_EPARSE, ":2:10:", "byte count");
    expect_error(HDR ",bytes\n0,0,0,0,1,2,1,2,3,inf\n", STALL_EPARSE, ":2:10:", "byte count");
}

Test(tidy, a_cpu_time_in_exponent_notation_is_read)
{
    const char *text = HDR ",fetch_wait\n0,0,0,0,1,2,1,2,3,1e-06\n0,0,1,0,1,2,3,3,4,4e-06\n";
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(put(text), &t, &err), 0, "%s", err.msg);
    /* batch 0 is left out of the sums */
    cr_assert_eq(t->cpu.sum[STALL_TIDY_CPU_FETCH_WAIT], 4000.0);
    cr_assert_eq(t->cpu.n[STALL_TIDY_CPU_FETCH_WAIT], 1);
    stall_tidy_free(t);
}

/* A worker id beyond the workers column is refused at its line and column (it was refused
 * later, by the decomposition, with the file name alone). */
Test(tidy, a_worker_id_beyond_the_workers_column_names_line_and_column)
{
    expect_error(HDR ",workers\n0,0,0,0,1,2,1,2,3,2\n0,0,1,9,1,2,3,3,4,2\n", STALL_EPARSE,
                 ":3:4:", "'worker' is 9 but 'workers' is 2");
    expect_error(HDR ",workers\n0,0,0,2,1,2,1,2,3,2\n", STALL_EPARSE, ":2:4:", "'workers' is 2");
    expect_error(HDR ",workers\n0,0,0,1,1,2,1,2,3,0\n", STALL_EPARSE, ":2:4:", "'workers' is 0");
    /* -1 (no worker) and, with workers = 0, 0 (the main process) are ids */
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(
        stall_tidy_load(put(HDR ",workers\n0,0,0,-1,1,2,1,2,3,0\n0,0,1,0,1,2,3,3,4,0\n"), &t, &err),
        0, "%s", err.msg);
    stall_tidy_free(t);
    /* without the column, ids are not checked here */
    cr_assert_eq(stall_tidy_load(put(HDR "\n0,0,0,9,1,2,1,2,3\n"), &t, &err), 0, "%s", err.msg);
    stall_tidy_free(t);
}

/* A capture whose loop never calls rec.compute_end() writes the column empty on every row
 * (capture.md): read as if the column were absent, as `stallsim_capture.py check` accepts it. */
Test(tidy, compute_end_empty_on_every_row_is_as_if_absent)
{
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_tidy_load(put(HDR ",compute_end\n0,0,0,0,1,2,1,2,3,\n0,0,1,0,1,2,3,3,4,\n"),
                                 &t, &err),
                 0, "%s", err.msg);
    cr_assert_null(t->compute_end);
    cr_assert_eq(t->iter_end[1], 4000000000LL);
    stall_tidy_free(t);
    expect_error(HDR ",compute_end\n0,0,0,0,1,2,1,2,3,2.5\n0,0,1,0,1,2,3,3,4,\n", STALL_EPARSE,
                 ":3:10:", "'compute_end' is empty here");
    expect_error(HDR ",compute_end\n0,0,0,0,1,2,1,2,3,\n0,0,1,0,1,2,3,3,4,3.5\n", STALL_EPARSE,
                 ":3:10:", "not empty here");
}

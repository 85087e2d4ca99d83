/* formats/table.c: result CSVs read back as text cells. */
#include <criterion/criterion.h>
#include <math.h>

#include "resultdir.h"
#include "stall/table.h"
#include "tmpdir.h"

static char dir[] = "/tmp/stall_table_XXXXXX";
static void setup(void)
{
    tmpdir_make(dir);
}
static void teardown(void)
{
    tmpdir_remove(dir);
}
TestSuite(table, .init = setup, .fini = teardown);

Test(table, quoted_fields_keep_commas_and_numbers_parse)
{
    rd_write(dir, "a.csv", "source,metric,value\nm,sentence,\"a, b \"\"c\"\"\"\nm,n,2.5\nm,e,\n");
    char p[1100];
    snprintf(p, sizeof p, "%s/a.csv", dir);
    stall_table *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t->ncols, 3);
    cr_assert_eq(t->nrows, 3);
    cr_assert_str_eq(stall_table_get(t, 0, 2), "a, b \"c\"");
    cr_assert_float_eq(stall_table_num(t, 1, stall_table_col(t, "value")), 2.5, 0);
    cr_assert(isnan(stall_table_num(t, 2, 2)), "an empty cell is NAN");
    cr_assert(isnan(stall_table_num(t, 0, 2)), "text is NAN");
    cr_assert_eq(stall_table_col(t, "nope"), -1);
    stall_table_free(t);
}

Test(table, a_row_with_another_field_count_names_its_line)
{
    rd_write(dir, "b.csv", "a,b\n1,2\n3\n");
    char p[1100];
    snprintf(p, sizeof p, "%s/b.csv", dir);
    stall_table *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &t, &err), STALL_EPARSE);
    cr_assert_null(t);
    cr_assert(strstr(err.msg, "b.csv:3: 1 fields, the header has 2"), "%s", err.msg);
    rd_write(dir, "c.csv", "");
    snprintf(p, sizeof p, "%s/c.csv", dir);
    cr_assert_eq(stall_table_read(p, &t, &err), STALL_EPARSE);
    cr_assert(strstr(err.msg, "empty file"), "%s", err.msg);
    snprintf(p, sizeof p, "%s/none.csv", dir);
    cr_assert_eq(stall_table_read(p, &t, &err), STALL_EIO);
}

/* A cell read as a number that stallsim never writes (garbage, inf, nan
 * outside the notebook's tables, hexadecimal, out of range) is refused,
 * naming file, line (quoted newlines counted) and column; what stallsim
 * writes reads: decimals with or without an exponent, nothing for an
 * undefined value, "nan" in the notebook-format tables (an unnamed index
 * column first, as seed mode writes them: Python's repr of NaN). */
Test(table, numbers_stallsim_never_writes_are_refused_naming_the_cell)
{
    static const char *const bad[] = {"garbage", "inf", "-inf", "nan", "NaN", "0x10", "1e999",
                                      "1.5x",    " 1",  "1,5",  "+",   "1e",  "..",   "infinity"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rd_write(dir, "n.csv", "name,x,y\n\"two\nlines\",1,2\nb,\"%s\",3\n", bad[i]);
        char p[1100];
        snprintf(p, sizeof p, "%s/n.csv", dir);
        stall_table *t = NULL;
        stall_err err = {0};
        cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
        stall_table_refused_reset();
        cr_expect_float_eq(stall_table_num(t, 0, 1), 1.0, 0);
        cr_expect_eq(stall_table_refused(&err), 0, "a number refused: %s", err.msg);
        cr_expect(isnan(stall_table_num(t, 1, 1)), "%s", bad[i]);
        cr_expect(isnan(stall_table_num_probe(t, 1, 1)));
        cr_expect_eq(stall_table_refused(&err), STALL_EPARSE, "'%s' was taken", bad[i]);
        char want[1300];
        snprintf(want, sizeof want, "%s:4:2: column 'x': '%s' is not a number", p, bad[i]);
        cr_expect(strstr(err.msg, want), "%s (want %s)", err.msg, want);
        cr_expect_eq(stall_table_refused(&err), 0, "kept after it was said");
        stall_table_free(t);
    }
    /* the probe keeps nothing */
    rd_write(dir, "p.csv", "axis,y\ntrue,1\n");
    char p[1100];
    snprintf(p, sizeof p, "%s/p.csv", dir);
    stall_table *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    stall_table_refused_reset();
    cr_expect(isnan(stall_table_num_probe(t, 0, 0)));
    cr_expect_eq(stall_table_refused(&err), 0);
    cr_expect_float_eq(stall_table_num(t, 0, 1), 1.0, 0);
    stall_table_free(t);
    /* what stallsim writes */
    rd_write(dir, "ok.csv", "a,b,c,d\n1.5e-07,-0.0,,42\n");
    snprintf(p, sizeof p, "%s/ok.csv", dir);
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    for (int c = 0; c < 4; c++)
        stall_table_num(t, 0, c);
    cr_expect_eq(stall_table_refused(&err), 0, "%s", err.msg);
    stall_table_free(t);
    /* the notebook's tables: nan, and "mean±std" cells */
    rd_write(dir, "nb.csv",
             ",Align,Avg iteration time (sec),Effective Delay time (%%)\n0,A,0.9764\xc2\xb1"
             "0.598,3.09\n1,B,nan\xc2\xb1nan,nan\n2,C,0.5\xc2\xb1inf,1\n");
    snprintf(p, sizeof p, "%s/nb.csv", dir);
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    cr_expect(t->nan_ok);
    cr_expect_float_eq(stall_table_num_mean(t, 0, 2), 0.9764, 0);
    cr_expect(isnan(stall_table_num_mean(t, 1, 2)));
    cr_expect(isnan(stall_table_num(t, 1, 3)));
    cr_expect_eq(stall_table_refused(&err), 0, "%s", err.msg);
    cr_expect_float_eq(stall_table_num_mean(t, 2, 2), 0.5, 0);
    cr_expect_eq(stall_table_refused(&err), STALL_EPARSE, "0.5±inf was taken");
    cr_expect(strstr(err.msg, "nb.csv:4:3: column 'Avg iteration time (sec)'"), "%s", err.msg);
    stall_table_free(t);
}

/* A result table saved again by a spreadsheet: a UTF-8 byte order mark
 * and CRLF line ends. The mark was read as part of the first column's name
 * (report: "no fetch_align/start_align columns"); both are read as
 * stallsim's own file. */
Test(table, a_byte_order_mark_and_crlf_are_read_as_the_plain_file)
{
    rd_write(dir, "s.csv",
             "\xef\xbb\xbf"
             "fetch_align,epoch_time_s\r\nnone,1.5\r\n");
    char p[1100];
    snprintf(p, sizeof p, "%s/s.csv", dir);
    stall_table *t = NULL;
    stall_err err = {0};
    cr_assert_eq(stall_table_read(p, &t, &err), 0, "%s", err.msg);
    cr_expect_eq(stall_table_col(t, "fetch_align"), 0);
    cr_expect_eq(t->nrows, 1);
    stall_table_refused_reset();
    cr_expect_float_eq(stall_table_num(t, 0, 1), 1.5, 0);
    cr_expect_eq(stall_table_refused(&err), 0, "%s", err.msg);
    stall_table_free(t);
}

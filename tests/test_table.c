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

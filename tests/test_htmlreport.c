/*
 * stallsim report: report.html is one self-contained page (nothing loaded
 * from anywhere), every figure inlined with unique ids, text from files
 * escaped, and it renders in headless Chromium when one is installed.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resultdir.h"
#include "stall/htmlreport.h"
#include "tmpdir.h"

static char dir[] = "/tmp/stall_html_XXXXXX";
static void setup(void)
{
    tmpdir_make(dir);
}
static void teardown(void)
{
    tmpdir_remove(dir);
}
TestSuite(htmlreport, .init = setup, .fini = teardown, .timeout = 120);

static int count(const char *s, const char *pat)
{
    int n = 0;
    for (const char *p = strstr(s, pat); p; p = strstr(p + 1, pat))
        n++;
    return n;
}

static char *report_of(const char *d)
{
    stall_err err = {0};
    cr_assert_eq(stall_html_report(d, NULL, &err), 0, "%s", err.msg);
    char path[1100];
    snprintf(path, sizeof path, "%s/report.html", d);
    char *html = rd_slurp(path);
    cr_assert_not_null(html);
    return html;
}

/* Nothing that would load from elsewhere. */
static void assert_self_contained(const char *html)
{
    cr_assert(strncmp(html, "<!DOCTYPE html>", 15) == 0);
    cr_assert(strstr(html, "</html>\n"));
    cr_assert_eq(count(html, "src=\"http"), 0);
    cr_assert_eq(count(html, "href=\"http"), 0);
    cr_assert_eq(count(html, "href='http"), 0);
    cr_assert_eq(count(html, "<link"), 0);
    cr_assert_eq(count(html, "<script"), 0);
    cr_assert_eq(count(html, "@import"), 0);
}

static void write_analyze(const char *sentence)
{
    rd_write(dir, "analyze.csv",
             "source,metric,value\nmeasured,verdict,data-bound\n"
             "measured,sentence,\"%s\"\n",
             sentence);
    rd_write(dir, "per_rank.csv",
             "source,rank,total_s,startup_s,data_s,handover_s,compute_s,barrier_s,post_s,"
             "last_iterations,caused_wait_s\nmeasured,0,3,0.1,1,0.2,1,0.5,0.2,3,0\n"
             "measured,1,3,0.1,1.2,0.2,0.8,0.5,0.2,4,0.1\n");
}

Test(htmlreport, run_folder_inlines_every_figure_with_unique_ids)
{
    if (!rd_have("gnuplot"))
        cr_skip_test("gnuplot not installed");
    rd_run(dir, 3, 2, 20);
    write_analyze("data-bound: 40% of the ranks' time waits for data");
    char *html = report_of(dir);
    assert_self_contained(html);
    /* stall_ranks, cdf, gpu_util, epochs, breakdown. */
    cr_assert_eq(count(html, "<svg"), 5, "%d svg", count(html, "<svg"));
    cr_assert_eq(count(html, "<figure>"), 5);
    cr_assert_eq(count(html, "<?xml"), 0, "XML prolog left in");
    cr_assert_eq(count(html, "<!DOCTYPE svg"), 0);
    cr_assert_eq(count(html, "id='gpPt0'"), 0, "gnuplot ids not prefixed");
    cr_assert_eq(count(html, "id='cdf-gpPt0'"), 1);
    cr_assert_eq(count(html, "href='#gpPt"), 0);
    cr_assert(strstr(html, "<h2>Verdict</h2>"));
    cr_assert(strstr(html, "data-bound: 40% of the ranks&#39; time waits for data"));
    cr_assert(strstr(html, "<th>epoch_time_s</th>"), "summary table missing");
    free(html);
}

Test(htmlreport, text_from_files_is_escaped)
{
    write_analyze("<script>alert(1)</script> & 'q'");
    setenv("PATH", "/nonexistent", 1);
    char *html = report_of(dir);
    assert_self_contained(html);
    cr_assert(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;q&#39;"), "%s", html);
    /* Without gnuplot the page says so instead of showing no figures. */
    cr_assert(strstr(html, "gnuplot was not found"));
    cr_assert_eq(count(html, "<svg"), 0);
    free(html);
    char *out = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&out, &n);
    stall_html_escape(f, "a<b>&\"'");
    fclose(f);
    cr_assert_str_eq(out, "a&lt;b&gt;&amp;&quot;&#39;");
    free(out);
}

Test(htmlreport, no_result_folder_writes_nothing)
{
    stall_err err = {0};
    cr_assert_eq(stall_html_report(dir, NULL, &err), STALL_EIO);
    cr_assert_not(rd_exists(dir, "report.html"));
}

Test(htmlreport, renders_in_headless_chromium)
{
    if (!rd_have("gnuplot") || !rd_have("chromium"))
        cr_skip_test("gnuplot or chromium not installed");
    rd_run(dir, 2, 1, 30);
    free(report_of(dir));
    char cmd[2400];
    snprintf(cmd, sizeof cmd,
             "sh %s/tools/render-report.sh %s/report.html %s/shot.png 1000x1500 >/dev/null",
             STALL_SOURCE_DIR, dir, dir);
    cr_assert_eq(system(cmd), 0, "chromium did not render the report");
    char shot[1100];
    snprintf(shot, sizeof shot, "%s/shot.png", dir);
    FILE *f = fopen(shot, "rb");
    cr_assert_not_null(f);
    unsigned char sig[8] = {0};
    cr_assert_eq(fread(sig, 1, 8, f), 8);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    cr_assert(memcmp(sig, "\x89PNG", 4) == 0);
    /* A blank page compresses to a few kB; one with tables and figures does not. */
    cr_assert_gt(size, 30000, "screenshot of %ld bytes: blank page?", size);
}

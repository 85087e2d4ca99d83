/* calibrate's report (issue 17 item 6): a poor fit and a fit on a bound of
 * the search are said so, and the table's columns name the traces by short
 * unique names (never a path cut from the left). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stall/calibrate.h"

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

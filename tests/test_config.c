/* Scenario INI loading: defaults, every key type, and the errors that name
 * file:line and the key. */
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stall/config.h"
#include "tmpdir.h"

static char cfg_dir[] = "/tmp/stall_cfg_XXXXXX";

static void cfg_setup(void)
{
    tmpdir_make(cfg_dir);
}
static void cfg_teardown(void)
{
    tmpdir_remove(cfg_dir);
}

static const char *write_ini(const char *name, const char *text)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", cfg_dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static int load(const char *text, stall_config *cfg, stall_err *err)
{
    stall_config_defaults(cfg);
    return stall_config_load(cfg, write_ini("t.ini", text), err);
}

TestSuite(config, .init = cfg_setup, .fini = cfg_teardown);

Test(config, defaults_match_the_notebook)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    cr_assert_eq(cfg.mode, STALL_MODE_REPLAY);
    cr_assert_eq(cfg.epoch, 1);
    cr_assert_eq(cfg.fetch_align.n, 3);
    cr_assert_eq(cfg.fetch_align.v[0], STALL_ALIGN_AVG);
    cr_assert_eq(cfg.start_align.v[2], STALL_ALIGN_NONE);
    cr_assert_float_eq(cfg.delay_threshold, 0.030, 1e-15);
    cr_assert_eq(cfg.warmup, 11);
}

Test(config, paths_are_relative_to_the_ini_file)
{
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[trace]\nfetch = data/f.csv\nperf = /abs/p.csv\n", &cfg, &err), 0, "%s",
                 err.msg);
    char want[600];
    snprintf(want, sizeof want, "%s/data/f.csv", cfg_dir);
    cr_assert_str_eq(cfg.fetch, want);
    cr_assert_str_eq(cfg.perf, "/abs/p.csv");
}

Test(config, align_list_keeps_order_and_sets_given)
{
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[align]\nfetch = none, min\nstart=avg\n", &cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.fetch_align.n, 2);
    cr_assert_eq(cfg.fetch_align.v[0], STALL_ALIGN_NONE);
    cr_assert_eq(cfg.fetch_align.v[1], STALL_ALIGN_MIN);
    cr_assert_eq(cfg.start_align.n, 1);
    cr_assert(stall_config_given(&cfg, "align", "fetch"));
    cr_assert(!stall_config_given(&cfg, "report", "warmup"));
}

Test(config, unknown_key_names_line)
{
    stall_config cfg;
    stall_err err = {0};
    int rc = load("[scenario]\nname = x\n\n[trace]\nfecth = a.csv\n", &cfg, &err);
    cr_assert_eq(rc, STALL_ECONFIG);
    cr_assert(strstr(err.msg, "t.ini:5:") != NULL, "message: %s", err.msg);
    cr_assert(strstr(err.msg, "unknown key [trace] fecth") != NULL, "message: %s", err.msg);
}

Test(config, unknown_section_is_named)
{
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[trcae]\nfetch = a.csv\n", &cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "t.ini:2: unknown section [trcae]") != NULL, "message: %s", err.msg);
}

static void cfg_refused(const char *set, const char *want);

/* A key above the first [section] line: said so, with the sections that
 * have the key ("unknown section [] (key workers)" before). */
Test(config, a_key_before_any_section_is_named_so)
{
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("workers = 4\n[scenario]\nname = x\n", &cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "t.ini:1: key workers comes before any [section] line (did you "
                              "mean [trace] workers or [loader] workers?)"),
              "message: %s", err.msg);
    cr_assert_eq(load("frobnicate = 4\n", &cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "key frobnicate comes before any [section] line (put it under "
                              "its section)"),
              "message: %s", err.msg);
    /* --set without a section has no line to be above */
    cfg_refused(".workers=4", "--set .workers=4: expected section.key=value");
}

Test(config, unknown_align_value_names_key_and_value)
{
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[align]\nfetch = avg, mean\n", &cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "t.ini:2: [align] fetch: unknown policy 'mean'") != NULL,
              "message: %s", err.msg);
}

Test(config, bad_numbers_and_ranges_are_rejected)
{
    const char *bad[] = {"[report]\nwarmup = ten\n",          "[report]\nwarmup = -1\n",
                         "[report]\ndelay_threshold = nan\n", "[report]\ndelay_threshold = 1e999\n",
                         "[fetch]\ncpu_share = 1.5\n",        "[loader]\nin_order = maybe\n",
                         "[scenario]\nmode = simulate\n",     "[storage]\nbandwidth_mb_s = -5\n",
                         "[align]\nstart = min, min\n",       "[align]\nstart = \n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        stall_config cfg;
        stall_err err = {0};
        cr_assert_eq(load(bad[i], &cfg, &err), STALL_ECONFIG, "accepted: %s", bad[i]);
        cr_assert(strstr(err.msg, "t.ini:2: [") != NULL, "case %zu message: %s", i, err.msg);
    }
}

/* Every boolean spelling is taken in any case (TRUE was refused while yes
 * was taken), per_rank's true and false too, and a refusal lists them. */
Test(config, booleans_take_every_spelling_in_any_case)
{
    const char *yes[] = {"true", "TRUE", "True", "yes", "YES", "on", "On", "1"};
    const char *no[] = {"false", "FALSE", "False", "no", "No", "off", "OFF", "0"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        for (int b = 0; b < 2; b++) {
            char text[128];
            const char *v = b ? yes[i] : no[i];
            snprintf(text, sizeof text, "[loader]\nin_order = %s\n[report]\nper_rank = %s\n", v, v);
            stall_config cfg;
            stall_err err = {0};
            cr_assert_eq(load(text, &cfg, &err), 0, "%s: %s", v, err.msg);
            cr_assert_eq(cfg.in_order, b == 1, "in_order = %s read as %d", v, cfg.in_order);
            cr_assert_eq(cfg.per_rank, b ? 1 : 2, "per_rank = %s read as %d", v, cfg.per_rank);
        }
    }
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[loader]\nin_order = maybe\n", &cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "t.ini:2: [loader] in_order: not a boolean: 'maybe' (expected "
                              "true/false, yes/no, on/off or 1/0, in any case)"),
              "%s", err.msg);
    cr_assert_eq(load("[report]\nper_rank = Auto\n", &cfg, &err), STALL_ECONFIG,
                 "an enum's own values keep their case");
}

static void cfg_refused(const char *set, const char *want)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    cr_assert_eq(stall_config_set(&cfg, set, &err), STALL_ECONFIG, "accepted %s", set);
    cr_assert(strstr(err.msg, want), "%s: '%s' should say '%s'", set, err.msg, want);
}

/* An integer past a long long is out of the key's range, not "not an
 * integer"; a double past a double likewise. */
Test(config, numbers_past_the_machine_types_are_out_of_range)
{
    cfg_refused("loader.workers=99999999999999999999",
                "[loader] workers: 99999999999999999999 is out of range [0, 1024]");
    cfg_refused("loader.workers=-99999999999999999999", "is out of range [0, 1024]");
    cfg_refused("fetch.scale=1e400", "[fetch] scale: 1e400 is out of range [0, 100]");
}

/* A double just past its bound is quoted as written: %g printed 1000001 as
 * "1e+06 is out of range [0, 1e+06]", a value that looks inside it. */
Test(config, a_value_just_past_its_bound_is_quoted_as_written)
{
    cfg_refused("loader.startup_s=1000001",
                "[loader] startup_s: 1000001 is out of range [0, 1e+06]");
    cfg_refused("fetch.scale=100.0000001", "[fetch] scale: 100.0000001 is out of range [0, 100]");
}

/* 1e-320 is a subnormal (read as 9.99989e-321) and 1e-400 becomes 0: the
 * number used would not be the one written, so both are refused as too
 * small, not called "not a finite number"; 0 in any spelling is taken. */
Test(config, doubles_below_the_smallest_normal_are_too_small)
{
    cfg_refused("fetch.scale=1e-320", "[fetch] scale: 1e-320 is too small (below 2.2e-308");
    cfg_refused("fetch.scale=-1e-400", "-1e-400 is too small");
    const char *zero[] = {"fetch.scale=0", "fetch.scale=0e-999", "fetch.scale=-0.0"};
    for (size_t i = 0; i < sizeof zero / sizeof zero[0]; i++) {
        stall_config cfg;
        stall_config_defaults(&cfg);
        stall_err err = {0};
        cr_assert_eq(stall_config_set(&cfg, zero[i], &err), 0, "%s: %s", zero[i], err.msg);
        cr_assert_eq(cfg.fetch_dist.scale, 0.0, "%s", zero[i]);
    }
}

/* Decimal text only, for integers and doubles alike: 0x10 was refused for
 * an integer while 0x1p-3 was taken for a double. */
Test(config, numbers_are_decimal_for_integers_and_doubles_alike)
{
    cfg_refused("loader.workers=0x10", "[loader] workers: not an integer: '0x10'");
    cfg_refused("loader.workers=1e3", "not an integer: '1e3'");
    cfg_refused("fetch.scale=0x1p-3", "[fetch] scale: not a number: '0x1p-3'");
    cfg_refused("fetch.scale=0x10", "not a number: '0x10'");
    cfg_refused("fetch.scale=inf", "not a finite number: 'inf'");
    cfg_refused("fetch.scale=NaN", "not a finite number: 'NaN'");
    cfg_refused("fetch.scale=1e", "not a number: '1e'");
    cfg_refused("fetch.scale=.", "not a number: '.'");
    const char *good[][2] = {{"fetch.scale=0.125", "0.125"}, {"fetch.scale=.5", "0.5"},
                             {"fetch.scale=5.", "5"},        {"fetch.scale=+2E-1", "0.2"},
                             {"fetch.scale=1e+1", "10"},     {"loader.workers=+4", "4"}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        stall_config cfg;
        stall_config_defaults(&cfg);
        stall_err err = {0};
        cr_assert_eq(stall_config_set(&cfg, good[i][0], &err), 0, "%s: %s", good[i][0], err.msg);
        double got = i < 5 ? cfg.fetch_dist.scale : (double)cfg.workers;
        cr_assert_eq(got, strtod(good[i][1], NULL), "%s read as %g", good[i][0], got);
    }
    double v;
    char why[256];
    cr_assert_eq(stall_config_number(" 2.5 ", &v, why, sizeof why), 0, "%s", why);
    cr_assert_eq(v, 2.5);
    cr_assert_eq(stall_config_number("0x1p-3", &v, why, sizeof why), -1);
}

Test(config, syntax_error_names_line)
{
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[scenario]\nname = a\nthis line has no equals\n", &cfg, &err),
                 STALL_ECONFIG);
    cr_assert(strstr(err.msg, "t.ini:3:") != NULL, "message: %s", err.msg);
}

Test(config, missing_file_is_an_io_error)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    cr_assert_eq(stall_config_load(&cfg, "/nonexistent/x.ini", &err), STALL_EIO);
    cr_assert(strstr(err.msg, "/nonexistent/x.ini") != NULL, "message: %s", err.msg);
}

/* An INI that is a FIFO or a pipe is refused as a trace is, without
 * opening it (no writer: open would wait forever): the loader reads it
 * twice and resolves its paths against its folder. */
Test(config, a_fifo_ini_is_refused_without_being_opened, .timeout = 30)
{
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/pipe.ini", cfg_dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    cr_assert_eq(stall_config_load(&cfg, fifo, &err), STALL_EIO);
    char want[700];
    snprintf(want, sizeof want, "%s: not a regular file (a pipe or FIFO; ", fifo);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    char note[256];
    cr_assert_eq(stall_config_load_any(&cfg, fifo, note, sizeof note, &err), STALL_EIO);
    cr_assert(strstr(err.msg, want), "load_any: %s", err.msg);
}

Test(config, set_overrides_and_reports_bad_overrides)
{
    stall_config cfg;
    stall_err err = {0};
    stall_config_defaults(&cfg);
    cr_assert_eq(stall_config_set(&cfg, "align.fetch=min", &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.fetch_align.n, 1);
    cr_assert_eq(stall_config_set(&cfg, "report.warmup=3", &err), 0);
    cr_assert_eq(cfg.warmup, 3);
    cr_assert_eq(stall_config_set(&cfg, "report.nope=3", &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "--set report.nope") != NULL, "message: %s", err.msg);
    cr_assert_eq(stall_config_set(&cfg, "warmup=3", &err), STALL_ECONFIG);
}

/* The default folder's tag: each override in order, odd characters as '_',
 * and past 96 characters a prefix and the chained SHA-256, which tells two
 * long lists that differ only at their end apart. */
Test(config, set_overrides_name_the_default_folder)
{
    stall_config a, b;
    stall_err err = {0};
    char ta[128], tb[128];
    stall_config_defaults(&a);
    stall_config_set_tag(&a, ta, sizeof ta);
    cr_assert_str_eq(ta, "");
    cr_assert_eq(stall_config_set(&a, "loader.workers=8", &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_set(&a, "trace.path=x/y z+1.csv", &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_set(&a, "report.nope=3", &err), STALL_ECONFIG);
    stall_config_set_tag(&a, ta, sizeof ta);
    cr_assert_str_eq(ta, "+loader.workers=8+trace.path=x_y_z_1.csv");
    stall_config_defaults(&a);
    stall_config_defaults(&b);
    for (int i = 0; i < 12; i++) {
        char set[64];
        snprintf(set, sizeof set, "report.warmup=%d", i);
        cr_assert_eq(stall_config_set(&a, set, &err), 0, "%s", err.msg);
        snprintf(set, sizeof set, "report.warmup=%d", i == 11 ? 12 : i);
        cr_assert_eq(stall_config_set(&b, set, &err), 0, "%s", err.msg);
    }
    stall_config_set_tag(&a, ta, sizeof ta);
    stall_config_set_tag(&b, tb, sizeof tb);
    cr_assert_eq(strlen(ta), 96, "%s", ta);
    cr_assert_eq(strncmp(ta, tb, 84), 0, "%s %s", ta, tb);
    cr_assert_str_neq(ta, tb);
}

Test(config, check_rejects_impossible_configurations)
{
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[trace]\nfetch=a\nstart=b\n", &cfg, &err), 0);
    cr_assert_eq(stall_config_check(&cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "[trace] perf") != NULL, "message: %s", err.msg);

    cr_assert_eq(load("[scenario]\nmode=model\n[trace]\nformat=none\n[loader]\nworkers=0\n"
                      "prefetch_factor=2\n",
                      &cfg, &err),
                 0);
    cr_assert_eq(stall_config_check(&cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "prefetch_factor") != NULL, "message: %s", err.msg);

    cr_assert_eq(load("[scenario]\nmode=model\n[trace]\nformat=none\n[cluster]\ngpus=4\n"
                      "gpus_per_node=8\n",
                      &cfg, &err),
                 0);
    cr_assert_eq(stall_config_check(&cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "gpus_per_node") != NULL, "message: %s", err.msg);

    cr_assert_eq(
        load("[scenario]\nmode=model\n[trace]\nformat=none\n[fetch]\nmean_s=1\n[run]\nbatches=5\n"
             "[compute]\nmean_s=1\ncpu_share=1\n",
             &cfg, &err),
        0);
    cr_assert_eq(stall_config_check(&cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "[compute] cpu_share") != NULL, "message: %s", err.msg);
}

Test(config, effective_config_round_trips)
{
    stall_config a, b;
    stall_err err = {0};
    cr_assert_eq(load("[scenario]\nname=rt\n[align]\nfetch=min\n[report]\ndelay_threshold=0.05\n"
                      "[trace]\nfetch=/x/f.csv\n",
                      &a, &err),
                 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    stall_config_write(&a, NULL, f);
    fclose(f);
    cr_assert_eq(load(buf, &b, &err), 0, "%s\n%s", err.msg, buf);
    cr_assert_str_eq(b.name, "rt");
    cr_assert_eq(b.fetch_align.n, 1);
    cr_assert_float_eq(b.delay_threshold, 0.05, 0);
    cr_assert_str_eq(b.fetch, "/x/f.csv");
    free(buf);
}

/* ---- keys that cannot apply are refused (issue 8) ---- */

static void expect_check_error(const char *ini, const char *set, const char *const *needles)
{
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load(ini, &cfg, &err), 0, "%s", err.msg);
    if (set)
        cr_assert_eq(stall_config_set(&cfg, set, &err), 0, "%s", err.msg);
    cr_assert_neq(stall_config_check(&cfg, &err), 0, "accepted: %s + %s", ini, set ? set : "");
    for (const char *const *n = needles; *n; n++)
        cr_expect(strstr(err.msg, *n) != NULL, "'%s' not in: %s", *n, err.msg);
}

Test(config, every_whatif_key_is_refused_in_replay_mode_naming_line_and_mode)
{
    static const char *const keys[][3] = {
        {"loader", "workers", "8"},      {"loader", "prefetch_factor", "4"},
        {"loader", "in_order", "false"}, {"loader", "pin_memory_s", "0.01"},
        {"cluster", "gpus", "32"},       {"cluster", "gpus_per_node", "8"},
        {"cluster", "cores", "16"},      {"fetch", "scale", "0.5"},
        {"compute", "scale", "0.5"},     {"storage", "bandwidth_mb_s", "100"},
        {"ddp", "allreduce_s", "0.1"},   {"run", "batches", "10"},
        {"run", "epochs", "2"},          {"run", "seed", "7"},
        {"trace", "workers", "3"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char ini[256], key[64];
        snprintf(ini, sizeof ini, "[scenario]\nmode = replay\n[%s]\n%s = %s\n", keys[i][0],
                 keys[i][1], keys[i][2]);
        snprintf(key, sizeof key, "[%s] %s", keys[i][0], keys[i][1]);
        const char *needles[] = {key, "t.ini:4:", "mode = replay", NULL};
        expect_check_error(ini, NULL, needles);
        /* In mode = seed as well. */
        snprintf(ini, sizeof ini, "[scenario]\nmode = seed\n[%s]\n%s = %s\n", keys[i][0],
                 keys[i][1], keys[i][2]);
        const char *seed_needles[] = {key, "mode = seed", NULL};
        expect_check_error(ini, NULL, seed_needles);
    }
}

Test(config, a_key_given_with_set_is_named_as_set)
{
    const char *needles[] = {"--set loader.workers", "mode = replay", NULL};
    expect_check_error("[scenario]\nmode = replay\n", "loader.workers=8", needles);
}

Test(config, a_conflict_caused_by_set_mode_names_both_places)
{
    const char *needles[] = {"t.ini:5: [align] start", "mode = model", "--set scenario.mode", NULL};
    expect_check_error("[scenario]\nmode = replay\n[trace]\n[align]\nstart = avg, none\n",
                       "scenario.mode=model", needles);
}

Test(config, replay_keys_are_refused_in_model_mode)
{
    const char *needles[] = {"t.ini:6: [replay] lag", "mode = model", NULL};
    expect_check_error("[scenario]\nmode = model\n[trace]\nformat = none\n[replay]\nlag = none\n",
                       NULL, needles);
}

Test(config, keys_of_another_trace_format_are_refused)
{
    const char *path_needles[] = {"[trace] path", "format = dsanalyzer", NULL};
    expect_check_error("[trace]\nfetch = f\nstart = s\nperf = p\npath = x.csv\n", NULL,
                       path_needles);
    const char *dist_needles[] = {"[fetch] mean_s", "format = tidy", NULL};
    expect_check_error("[scenario]\nmode = model\n[trace]\nformat = tidy\npath = t.csv\n"
                       "[fetch]\nmean_s = 0.1\n",
                       NULL, dist_needles);
    const char *rs_needles[] = {"[fetch] resample", "format = none", NULL};
    expect_check_error("[scenario]\nmode = model\n[trace]\nformat = none\n[fetch]\nmean_s = 0.1\n"
                       "resample = bootstrap\n[compute]\nmean_s = 0.1\n[run]\nbatches = 4\n",
                       NULL, rs_needles);
}

Test(config, whatif_keys_apply_in_model_mode_on_every_trace_format)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    cfg.mode = STALL_MODE_MODEL;
    for (int f = STALL_FORMAT_DSANALYZER; f <= STALL_FORMAT_NONE; f++) {
        cfg.format = f;
        cr_expect(stall_config_applies(&cfg, "loader", "workers"), "format %d", f);
        cr_expect(stall_config_applies(&cfg, "cluster", "gpus"), "format %d", f);
        cr_expect(stall_config_applies(&cfg, "storage", "bandwidth_mb_s"), "format %d", f);
        cr_expect(!stall_config_applies(&cfg, "replay", "lag"), "format %d", f);
    }
    cfg.mode = STALL_MODE_REPLAY;
    cfg.format = STALL_FORMAT_DSANALYZER;
    cr_expect(!stall_config_applies(&cfg, "loader", "workers"));
    cr_expect(stall_config_applies(&cfg, "align", "start"));
}

/* ---- issue 10: what inih alone would take silently ---- */

static void expect_load_error(const char *text, size_t len, const char *want)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bad.ini", cfg_dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fwrite(text, 1, len, f);
    fclose(f);
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    cr_assert_eq(stall_config_load(&cfg, path, &err), STALL_ECONFIG, "accepted: %.*s", (int)len,
                 text);
    cr_assert(strstr(err.msg, path) != NULL, "no file in: %s", err.msg);
    cr_assert(strstr(err.msg, want) != NULL, "expected '%s' in: %s", want, err.msg);
}

#define BAD(lit, want) expect_load_error(lit, sizeof lit - 1, want)

Test(config, nul_bytes_are_refused_with_their_place)
{
    BAD("[loader]\nworkers = 2\0 64\n", ":2:12: NUL byte");
    BAD("\0\0\0\0", ":1:1: NUL byte");
}

Test(config, indented_lines_do_not_continue_a_value)
{
    BAD("[loader]\nworkers = 2\n   64\n", ":3:4: indented line");
    BAD("[loader]\nworkers = 2\n\t[run]\n", ":3:2: indented line");
    /* Indented comments and blank lines are fine. */
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[loader]\nworkers = 2\n   ; note\n   \n\n", &cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.workers, 2);
}

/* A section line without its ']' (inih reports the line, then reads the
 * next keys in section "": the message was "unknown section [] (key
 * workers)", a new user's report). */
Test(config, an_unclosed_section_header_names_its_line_and_column)
{
    BAD("[loader\nworkers = 2\n", ":1:8: section header not closed (missing ']')");
    BAD("[scenario]\nmode = model\n[loader", ":3:8: section header not closed");
    /* a header without a name: its keys read as above any section */
    BAD("[scenario]\nname = a\n[ ]\nworkers = 2\n",
        ":3:1: a section header without a name ([]); name the section");
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[loader] ; [note\nworkers = 2\n", &cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(cfg.workers, 2);
}

Test(config, duplicate_sections_and_keys_name_both_lines)
{
    BAD("[loader]\nworkers = 2\n[run]\nseed = 3\n[loader]\n", ":5:1: section [loader] given twice "
                                                              "(first on line 1)");
    BAD("[loader]\nworkers = 2\nprefetch_factor = 3\nworkers = 5\n",
        ":4: [loader] workers: given twice (first on line 2)");
    /* [sweep] and [plan] lines too (the last one won, a new user's
     * finding); zip once per group, and --sweep or --set over a file's line
     * replace it. */
    BAD("[sweep]\nloader.workers = 1,2\nloader.workers = 3\n",
        ":3: [sweep] loader.workers: given twice (first on line 2)");
    BAD("[plan]\nmax_gpus = 4\nstall_target = 0.1\nmax_gpus = 8\n",
        ":4: [plan] max_gpus: given twice (first on line 2)");
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[sweep]\na.b = 1,2\nc.d = 1,2\ne.f = 1,2\ng.h = 1,2\nzip = a.b, c.d\nzip = "
                      "e.f, g.h\n",
                      &cfg, &err),
                 0, "%s", err.msg);
    cr_assert_eq(load("[plan]\nmax_gpus = 4\n", &cfg, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_set(&cfg, "plan.max_gpus=8", &err), 0, "%s", err.msg);
}

Test(config, scenario_name_is_one_safe_folder_name)
{
    BAD("[scenario]\nname = ../x\n", "not a safe folder name");
    BAD("[scenario]\nname =\n", "not a safe folder name");
    BAD("[scenario]\nname = a/b\n", "not a safe folder name");
    BAD("[scenario]\nname = .hidden\n", "not a safe folder name");
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[scenario]\nname = run-1.b_2+x\n", &cfg, &err), 0, "%s", err.msg);
}

Test(config, values_that_could_not_round_trip_are_refused)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    cr_assert_eq(stall_config_set(&cfg, "trace.path=a\nb.csv", &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "control character") != NULL, "%s", err.msg);
    cr_assert_eq(stall_config_set(&cfg, "trace.path=a ;b.csv", &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "comment") != NULL, "%s", err.msg);
    /* A path that is fine but whose line would pass inih's limit. */
    char set[1100] = "trace.path=";
    memset(set + strlen(set), 'p', 900);
    cr_assert_eq(stall_config_set(&cfg, set, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_roundtrip(&cfg, NULL, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "effective.ini") != NULL, "%s", err.msg);
}

Test(config, durations_and_sizes_beyond_the_limits_are_refused)
{
    const char *sets[] = {"ddp.allreduce_s=5e9",
                          "ddp.allreduce_s=1e18",
                          "loader.startup_s=1e7",
                          "loader.handover_s=2e6",
                          "loader.pin_memory_s=1e300",
                          "replay.stall_floor=1e18",
                          "run.batches=576460752303423488",
                          "run.batches=1000000001",
                          "cluster.gpus=16777216",
                          "loader.workers=1025",
                          "fetch.scale=1e9",
                          "fetch.mean_s=-1"};
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        stall_config cfg;
        stall_config_defaults(&cfg);
        stall_err err = {0};
        cr_assert_eq(stall_config_set(&cfg, sets[i], &err), STALL_ECONFIG, "accepted %s", sets[i]);
        cr_assert(strstr(err.msg, "out of range") != NULL, "%s: %s", sets[i], err.msg);
    }
}

/* The oracle the INI fuzzer uses: a loaded file's effective.ini loads back
 * to the same given keys and values. */
Test(config, effective_ini_round_trips_for_every_shipped_config)
{
    const char *files[] = {STALL_SOURCE_DIR "/configs/example.ini",
                           STALL_SOURCE_DIR "/configs/w2.ini",
                           STALL_SOURCE_DIR "/configs/seed-case1.ini"};
    for (size_t i = 0; i < 3; i++) {
        stall_config cfg;
        stall_config_defaults(&cfg);
        stall_err err = {0};
        cr_assert_eq(stall_config_load(&cfg, files[i], &err), 0, "%s", err.msg);
        cr_assert_eq(stall_config_roundtrip(&cfg, cfg_dir, &err), 0, "%s: %s", files[i], err.msg);
    }
}

/* Fuzz finding (fuzz_set): a relative path that does not exist was written
 * to effective.ini as given and read back relative to the result folder. */
Test(config, a_missing_relative_path_round_trips)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    cr_assert_eq(stall_config_set(&cfg, "trace.path=no-such-dir/a.csv", &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_roundtrip(&cfg, cfg_dir, &err), 0, "%s", err.msg);
}

/* Found by fuzz_set (corpus/set/finding-relative-path-equal-text): an
 * existing file given relative to the current folder whose path relative to
 * the result folder is the same text ("../x" from a sibling folder) was
 * written as cwd/../x and read back as another text. */
Test(config, an_existing_relative_path_whose_text_is_the_same_from_the_result_folder)
{
    char a[600], b[600], x[600], old[1024];
    snprintf(a, sizeof a, "%s/a", cfg_dir);
    snprintf(b, sizeof b, "%s/b", cfg_dir);
    snprintf(x, sizeof x, "%s/x", cfg_dir);
    cr_assert_eq(mkdir(a, 0755), 0);
    cr_assert_eq(mkdir(b, 0755), 0);
    FILE *f = fopen(x, "w");
    cr_assert_not_null(f);
    fclose(f);
    cr_assert_not_null(getcwd(old, sizeof old));
    cr_assert_eq(chdir(a), 0);
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    cr_assert_eq(stall_config_set(&cfg, "trace.path=../x", &err), 0, "%s", err.msg);
    int rc = stall_config_roundtrip(&cfg, b, &err);
    cr_assert_eq(chdir(old), 0);
    cr_assert_eq(rc, 0, "%s", err.msg);
}

/* Issue 17 item 3: an error names where the offending values came from
 * (file:line, --set, or the default), never the file for a --set value. */
Test(config, cross_key_errors_name_the_origin_of_each_value)
{
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[scenario]\nmode = model\n[trace]\nformat = none\n[fetch]\nmean_s = 1\n"
                      "[compute]\nmean_s = 1\n[run]\nbatches = 4\n[loader]\nworkers = 4\n",
                      &cfg, &err),
                 0, "%s", err.msg);
    cr_assert_eq(stall_config_set(&cfg, "loader.workers=0", &err), 0);
    cr_assert_eq(stall_config_set(&cfg, "loader.prefetch_factor=2", &err), 0);
    cr_assert_eq(stall_config_check(&cfg, &err), STALL_ECONFIG);
    cr_assert(strncmp(err.msg, "--set loader.prefetch_factor: ", 30) == 0, "%s", err.msg);
    cr_assert(strstr(err.msg, "--set loader.workers = 0") != NULL, "%s", err.msg);
    cr_assert(strstr(err.msg, "t.ini") == NULL, "%s", err.msg);
    /* From the file: its line. */
    cr_assert_eq(load("[scenario]\nmode = model\n[trace]\nformat = none\n[fetch]\nmean_s = 1\n"
                      "[compute]\nmean_s = 1\n[run]\nbatches = 4\n[cluster]\ngpus = 2\n"
                      "gpus_per_node = 4\n",
                      &cfg, &err),
                 0, "%s", err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "t.ini:13: [cluster] gpus_per_node: 4 is more than") != NULL, "%s",
              err.msg);
    cr_assert(strstr(err.msg, "t.ini:12: [cluster] gpus = 2") != NULL, "%s", err.msg);
    /* Not given: the default. */
    cr_assert_eq(load("[scenario]\nmode = model\n[trace]\nformat = none\n[fetch]\nmean_s = 1\n"
                      "[compute]\nmean_s = 1\n",
                      &cfg, &err),
                 0, "%s", err.msg);
    cr_assert_eq(stall_config_check(&cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "[run] batches (default 0): must be > 0") != NULL, "%s", err.msg);
}

/* Issue 17 item 3: an unknown section or key suggests the nearest known one. */
Test(config, unknown_names_suggest_the_nearest_known_one)
{
    stall_config cfg;
    stall_err err = {0};
    cr_assert_eq(load("[loader]\nwokers = 3\n", &cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "t.ini:2: unknown key [loader] wokers (did you mean workers?)"), "%s",
              err.msg);
    cr_assert_eq(load("[loadr]\nworkers = 3\n", &cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "(did you mean [loader] workers?)"), "%s", err.msg);
    cr_assert_eq(load("[swep]\nx = 3\n", &cfg, &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "(did you mean [sweep]?)"), "%s", err.msg);
    stall_config_defaults(&cfg);
    cr_assert_eq(stall_config_set(&cfg, "cluster.workers=3", &err), STALL_ECONFIG);
    cr_assert(strstr(err.msg, "[loader] workers?)"), "%s", err.msg);
    cr_assert_eq(stall_config_set(&cfg, "loader.zzz=3", &err), STALL_ECONFIG);
    cr_assert(!strstr(err.msg, "did you mean"), "%s", err.msg);
}

/* The round trip remembers, per thread, the last text that passed (the
 * configuration is checked before a run and again as effective.ini): a
 * text of the same length and keys whose value does not read back is still
 * refused, and the one that passed passes again. */
Test(config, a_round_trip_after_one_that_passed_still_reads_the_text)
{
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    cr_assert_eq(stall_config_set(&cfg, "loader.workers=40", &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_roundtrip(&cfg, cfg_dir, &err), 0, "%s", err.msg);
    stall_config bad = cfg;
    bad.workers = -5; /* set by a program, not the loader: out of range */
    cr_assert_eq(stall_config_roundtrip(&bad, cfg_dir, &err), STALL_ECONFIG,
                 "workers = -5 passed the round trip");
    cr_assert(strstr(err.msg, "effective.ini") != NULL, "%s", err.msg);
    cr_assert_eq(stall_config_roundtrip(&cfg, cfg_dir, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_roundtrip(&cfg, cfg_dir, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_config_roundtrip(&bad, cfg_dir, &err), STALL_ECONFIG,
                 "workers = -5 passed the round trip after a pass");
}

/* A trace's default name is its stem without the trace suffix, for every
 * format (a new user saw results/analyze-hta_trace_diff_test.json.gz/ where
 * outputs.md promises the stem), and the folder's name for a trace.csv. */
Test(config, a_traces_name_is_its_stem_without_the_format_suffix)
{
    static const char *const c[][2] = {
        {"/a/b/run3.csv", "run3"},
        {"/a/b/run3.csv.gz", "run3"},
        {"x/rank-3.1623143089861.pt.trace.json", "rank-3.1623143089861"},
        {"x/rank-3.pt.trace.json.gz", "rank-3"},
        {"hta_trace_diff_test.json.gz", "hta_trace_diff_test"},
        {"p/dftracer_dlio_unet3d_2023.pfw.gz", "dftracer_dlio_unet3d_2023"},
        {"p/app-1.pfw", "app-1"},
        {"traces/w2/trace.csv", "w2"},
        {"tests/kineto/ddp2_w2/", "ddp2_w2"},
        {"tests/kineto/ddp2_w2//", "ddp2_w2"},
        {"my trace.json", "my_trace"},
        {".json", "_json"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char name[128];
        stall_config_name_from_path(c[i][0], name, sizeof name);
        cr_expect_str_eq(name, c[i][1], "%s", c[i][0]);
    }
}

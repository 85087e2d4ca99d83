/*
 * test_plan_cost.c - `stallsim plan` with the storage tiers bounds the
 * simulation cost of its runs (docs/limits.md): a run of the GPU-count
 * searches that would simulate more than [plan] max_request_nodes requests
 * x nodes (the fair store passes every request over every node) is not
 * made; the search stops there and says so in the terminal, plan.csv
 * (binding cost) and effective.ini. Through the real binary.
 *
 * The configuration: no trace, one GPU per node, 20 batches of 4 requests
 * per GPU (80 requests per GPU: a run of g GPUs simulates 80 g requests
 * on g nodes, 80 g^2 requests x nodes), a global store of 800 MB/s that
 * makes efficiency fall below 0.8 at 5 GPUs. Without a bound the curve
 * runs to max_gpus = 64 (max_efficient_gpus 4, storage).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tmpdir.h"

#define BIN STALL_BINARY_DIR "/stallsim"

static char dir[] = "/tmp/stall_plancost_XXXXXX";
static void setup(void)
{
    tmpdir_make(dir);
}
static void teardown(void)
{
    tmpdir_remove(dir);
}
TestSuite(plan_cost, .init = setup, .fini = teardown, .timeout = 120);

#define PC_INI_TEXT                                                                                \
    "[scenario]\nname = cost\nmode = model\n[trace]\nformat = none\n"                              \
    "[fetch]\ndist = constant\nmean_s = 0.02\n[compute]\ndist = constant\nmean_s = 0.01\n"         \
    "[cluster]\ngpus = 1\ngpus_per_node = 1\n[run]\nbatches = 20\nepochs = 1\n"                    \
    "[storage]\nbatch_mb = 2\nlatency_ms = 1\nrequests_per_batch = 4\n%s"                          \
    "[plan]\nmax_workers = 4\nmax_gpus = 64\n"

/* Writes the INI (store: its [storage] bandwidth lines) and returns its path. */
static const char *pc_ini(const char *store)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/cost.ini", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, PC_INI_TEXT, store);
    fclose(f);
    return path;
}

/* Runs `stallsim plan INI -o DIR/out ARGS`; its stdout and stderr in out
 * (whole), its exit status returned. */
static int pc_plan(const char *ini, const char *args, char *out, size_t n)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "rm -rf %s/out; %s plan %s -o %s/out %s 2>&1", dir, BIN, ini, dir,
             args);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t k = fread(out, 1, n - 1, p);
    out[k] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A file of the result folder, whole. */
static char *pc_file(const char *name)
{
    static char buf[16384];
    char path[700];
    snprintf(path, sizeof path, "%s/out/%s", dir, name);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    size_t k = fread(buf, 1, sizeof buf - 1, f);
    buf[k] = '\0';
    fclose(f);
    return buf;
}

static int pc_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* Past its answer the curve stops short of a run of too many requests x
 * nodes: the answer stands (4, storage), scaling.csv ends at 8 GPUs (16
 * would be 20480 > 20000), and the terminal and effective.ini say why.
 * Before, the curve ran every count to max_gpus whatever its cost (plan
 * traces/w2 --set storage.global_mb_s=100: 1,024 nodes, 8.5 of its 14 s). */
Test(plan_cost, the_curve_stops_past_its_answer_and_says_so)
{
    static char out[65536];
    const char *ini = pc_ini("global_mb_s = 800\n");
    cr_assert_eq(pc_plan(ini, "", out, sizeof out), 0, "%s", out);
    cr_expect_eq(pc_lines(pc_file("scaling.csv")), 1 + 8, "the whole curve: 1 2 4 5 8 16 32 64");
    cr_assert_eq(pc_plan(ini, "--set plan.max_request_nodes=20000", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "scaling: the curve stops at 8 GPUs, past its answer: a run of 16 GPUs "
                          "would simulate 1.28e+03 requests on 16 nodes, 2.05e+04 requests x "
                          "nodes, above [plan] max_request_nodes = 2e+04") != NULL,
              "%s", out);
    cr_expect(strstr(pc_file("plan.csv"), "\nmax_efficient_gpus,4,storage,") != NULL, "%s",
              pc_file("plan.csv"));
    const char *sc = pc_file("scaling.csv");
    cr_expect_eq(pc_lines(sc), 1 + 5, "%s", sc); /* 1 2 4 5 8 */
    cr_expect(strstr(sc, "\n8,") != NULL && strstr(sc, "\n16,") == NULL, "%s", sc);
    const char *eff = pc_file("effective.ini");
    cr_expect(strstr(eff, "\nmax_request_nodes = ") != NULL, "%s", eff);
    cr_expect(strstr(eff, "\n; scaling: the curve stops at 8 GPUs, past its answer:") != NULL, "%s",
              eff);
}

/* Before its answer the search stops, binding cost, the answer "at least"
 * the last count run; a GPU target not reached below the bound binds cost
 * too (before, the target galloped to max_gpus whatever a run cost). The
 * effective.ini plans again to the same answers. */
Test(plan_cost, searches_stop_before_their_answer_binding_cost)
{
    static char out[65536];
    const char *ini = pc_ini("global_mb_s = 800\n");
    cr_assert_eq(pc_plan(ini, "--set plan.max_request_nodes=5000 --set plan.target_throughput=1e6",
                         out, sizeof out),
                 0, "%s", out);
    cr_expect(strstr(out, "efficiency stays >= 0.8 up to 4 GPUs, where the search stops: with the "
                          "storage tiers every request is simulated, and a run of 8 GPUs would "
                          "simulate 640 requests on 8 nodes, 5.12e+03 requests x nodes, above "
                          "[plan] max_request_nodes = 5e+03") != NULL,
              "%s", out);
    cr_expect(strstr(out, "gpus_for_throughput (target 1e+06 batches/s, weak scaling): not "
                          "reached up to 4 GPUs, where the search stops") != NULL &&
                  strstr(out, "or a higher max_request_nodes)\n") != NULL,
              "%s", out);
    char plan[16384];
    snprintf(plan, sizeof plan, "%s", pc_file("plan.csv"));
    cr_expect(strstr(plan, "\nmax_efficient_gpus,4,cost,") != NULL, "%s", plan);
    cr_expect(strstr(plan, "\ngpus_for_throughput,,cost,") != NULL, "%s", plan);
    cr_expect_eq(pc_lines(pc_file("scaling.csv")), 1 + 3, "1 2 4");
    const char *eff = pc_file("effective.ini");
    cr_expect(strstr(eff, "\n; max_efficient_gpus: efficiency stays >= 0.8 up to 4 GPUs") != NULL,
              "%s", eff);
    cr_expect(strstr(eff, "\n; gpus_for_throughput: not reached up to 4 GPUs") != NULL, "%s", eff);
    /* the file plans again as is */
    char again[700];
    snprintf(again, sizeof again, "%s/again.ini", dir);
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "cp %s/out/effective.ini %s", dir, again);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(pc_plan(again, "", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(pc_file("plan.csv"), "\nmax_efficient_gpus,4,cost,") != NULL, "%s",
              pc_file("plan.csv"));
}

/* A configuration whose own run passes the bound is refused, in one line
 * naming the key, before the tens of runs plan makes at its GPUs. */
Test(plan_cost, a_configuration_past_the_bound_is_refused_up_front)
{
    static char out[65536];
    const char *ini = pc_ini("global_mb_s = 800\n");
    cr_expect_eq(pc_plan(ini, "--set plan.max_request_nodes=10", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out,
                     "stallsim: plan: a run of 1 GPU would simulate 80 requests on 1 node, "
                     "80 requests x nodes, above [plan] max_request_nodes = 10 per run") != NULL,
              "%s", out);
    cr_expect_eq(pc_lines(out), 1, "%s", out);
}

/* max_request_nodes has no effect without the storage tiers, nor with a
 * FIFO store (a request queues once, whatever the nodes): refused there,
 * as every key without effect is. */
Test(plan_cost, max_request_nodes_is_refused_where_it_has_no_effect)
{
    static char out[65536];
    char ini[700];
    snprintf(ini, sizeof ini, "%s", pc_ini("queue = fifo\nbandwidth_mb_s = 800\n"));
    cr_expect_eq(pc_plan(ini, "--set plan.max_request_nodes=5000", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--set plan.max_request_nodes: has no effect with [storage] queue = "
                          "fifo") != NULL,
              "%s", out);
    cr_expect_eq(pc_plan(ini, "--set plan.max_requests=5000", out, sizeof out), 0, "%s", out);
    snprintf(ini, sizeof ini, "%s/none.ini", dir);
    FILE *f = fopen(ini, "w");
    cr_assert_not_null(f);
    fputs("[scenario]\nname = none\nmode = model\n[trace]\nformat = none\n[run]\nbatches = 20\n",
          f);
    fclose(f);
    cr_expect_eq(pc_plan(ini, "--set plan.max_request_nodes=5000", out, sizeof out), 2, "%s", out);
    cr_expect(
        strstr(out, "--set plan.max_request_nodes: has no effect without the storage tiers") !=
            NULL,
        "%s", out);
}

/* Without a bandwidth a request is its latency alone (no fair store): the
 * curve is not cut by max_request_nodes. Where efficiency falls, the run
 * without the store's cost would take the fair store (bandwidths far above
 * the demand): past the bound it is not made, and the limit says so. */
Test(plan_cost, latency_alone_is_not_cut_and_an_untried_storage_is_said)
{
    static char out[65536];
    const char *ini = pc_ini("");
    cr_assert_eq(pc_plan(ini, "--set plan.max_request_nodes=5000", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(pc_file("plan.csv"), "\nmax_efficient_gpus,64,max_gpus,") != NULL, "%s",
              pc_file("plan.csv"));
    cr_expect(strstr(out, "max_request_nodes") == NULL, "%s", out);
    cr_assert_eq(pc_plan(ini,
                         "--set plan.max_request_nodes=100 --set compute.dist=lognormal --set "
                         "compute.sigma=1 --set fetch.dist=lognormal --set fetch.sigma=1",
                         out, sizeof out),
                 0, "%s", out);
    cr_expect(strstr(out, "at 2 GPUs efficiency falls to 0.765: stragglers at the barrier") != NULL,
              "%s", out);
    cr_expect(strstr(out,
                     "; the storage is not tried (its run without the store's cost, which "
                     "takes the fair store: a run of 2 GPUs would simulate 160 requests on "
                     "2 nodes, 320 requests x nodes, above [plan] max_request_nodes = 100") != NULL,
              "%s", out);
    cr_expect(strstr(pc_file("effective.ini"), "the storage is not tried") != NULL, "%s",
              pc_file("effective.ini"));
}

/* The whole of a file, or NULL. */
static char *pc_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    static char buf[2][65536];
    static int i;
    i ^= 1;
    size_t k = fread(buf[i], 1, sizeof buf[i] - 1, f);
    buf[i][k] = '\0';
    fclose(f);
    return buf[i];
}

/* plan said nothing while it ran (tens of seconds on a large search). On a
 * terminal it writes sweep's progress line on stderr, erased before the
 * table; stdout, and stderr where it is redirected, are as they were: the
 * same bytes with stderr a terminal (script(1)'s) as with it redirected,
 * and nothing on a redirected stderr. A plan of 0.5 s: past the line's
 * first 0.2 s. */
Test(plan_cost, progress_on_a_terminal_only)
{
    if (system("command -v script >/dev/null 2>&1") != 0)
        tmpdir_skip(dir, "script(1) not installed");
    const char *args = "plan configs/example-whatif.ini --set plan.max_gpus=4096";
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "cd %s && script -qec '%s %s -o %s/pr > %s/tty.out' %s/tty.log > /dev/null "
             "2>&1 && %s %s -o %s/pr > %s/red.out 2> %s/red.err",
             STALL_SOURCE_DIR, BIN, args, dir, dir, dir, BIN, args, dir, dir, dir);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %d", cmd, st);
    char p[700];
    snprintf(p, sizeof p, "%s/tty.log", dir);
    char *log = pc_slurp(p);
    cr_assert_not_null(log);
    cr_expect(strstr(log, "\rplan: ") && strstr(log, " simulations, "), "no progress line:\n%s",
              log);
    cr_expect(strstr(log, "\r\033[K"), "the progress line is not erased:\n%s", log);
    snprintf(p, sizeof p, "%s/red.err", dir);
    char *err = pc_slurp(p);
    cr_assert_not_null(err);
    cr_expect_str_eq(err, "", "a redirected stderr got: %s", err);
    snprintf(p, sizeof p, "%s/tty.out", dir);
    char *tty = pc_slurp(p);
    snprintf(p, sizeof p, "%s/red.out", dir);
    char *red = pc_slurp(p);
    cr_assert(tty && red);
    cr_expect(strstr(red, "max_efficient_gpus"), "%s", red);
    cr_expect_str_eq(tty, red, "stdout differs with stderr a terminal");
}

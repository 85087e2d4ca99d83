/* Format detection (formats/detect.c): a file's kind from its content. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "stall/config.h"
#include "stall/detect.h"
#include "stall/digest.h"
#include "stall/dsanalyzer.h"
#include "stall/kineto.h"
#include "stall/table.h"
#include "stall/tidy.h"
#include "stall/traceend.h"
#include "tmpdir.h"

static char ddir[] = "/tmp/stall_detect_XXXXXX";
static void d_setup(void)
{
    tmpdir_make(ddir);
}
static void d_teardown(void)
{
    tmpdir_remove(ddir);
}
TestSuite(detect, .init = d_setup, .fini = d_teardown);

static const char *put(const char *name, const char *text)
{
    static char path[4][600];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 600, "%s/%s", ddir, name);
    FILE *f = fopen(p, "wb");
    fputs(text, f);
    fclose(f);
    return p;
}

Test(detect, tidy_traces_in_every_spelling_users_have)
{
    stall_trace_detected d;
    stall_err err = {0};
    const char *texts[] = {
        "rank,epoch,batch,worker,fetch_start\n0,0,0,0,1\n",
        "\xEF\xBB\xBFrank,epoch,batch,worker,fetch_start,workers,prefetch\r\n0,0,0,0,1,2,2\r\n",
        ",rank,epoch,batch,worker\n0,0,0,0,0\n",
    };
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(stall_trace_detect(put("t.csv", texts[i]), &d, &err), STALL_TRACE_TIDY,
                     "%d: %s", i, err.msg);
        cr_assert_eq(d.has_workers, i == 1);
        cr_assert_eq(d.has_prefetch, i == 1);
        cr_assert_eq(d.prefetch, i == 1 ? 2 : -1);
    }
}

/* The note of a trace given in place of an INI says which prefetch factor
 * runs: a prefetch column of 0 (a loader without workers) is not the
 * factor for the workers a what-if gives it. */
Test(detect, a_tidy_traces_prefetch_of_0_is_noted_as_the_default)
{
    const char *head = "rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end,"
                       "workers,prefetch\n";
    char text[512];
    for (int pf = 0; pf <= 3; pf += 3) {
        snprintf(text, sizeof text, "%s0,0,0,%d,1,2,1,2,3,%d,%d\n", head, pf ? 0 : -1, pf ? 2 : 0,
                 pf);
        stall_trace_detected d;
        stall_err err = {0};
        cr_assert_eq(stall_trace_detect(put("pf.csv", text), &d, &err), STALL_TRACE_TIDY, "%s",
                     err.msg);
        cr_assert_eq(d.prefetch, pf);
        stall_config cfg;
        stall_config_defaults(&cfg);
        char note[1024];
        cr_assert_eq(stall_config_load_any(&cfg, put("pf.csv", text), note, sizeof note, &err), 0,
                     "%s", err.msg);
        cr_assert(strstr(note, pf ? "prefetch factor from its prefetch column"
                                  : "prefetch factor 2 (PyTorch's default)"),
                  "%s", note);
    }
}

Test(detect, a_notebook_csv_finds_its_companions)
{
    const char *perf = put("run.csv", ",Epoch,Step,GPU,Time,Iteration time (sec)\n");
    put("run_simp_fetchdifftime.csv", ",Epoch,Index number,Fetch time (sec)_gpu0\n");
    const char *start =
        put("run_simp_fetchstartdifftime.csv", ",Epoch,Index number,Start time_gpu0\n");
    stall_trace_detected d;
    stall_err err = {0};
    cr_assert_eq(stall_trace_detect(start, &d, &err), STALL_TRACE_DSANALYZER, "%s", err.msg);
    cr_assert_str_eq(d.perf, perf);
    cr_assert(strstr(d.fetch, "/run_simp_fetchdifftime.csv"));
    cr_assert_str_eq(d.start, start);
    cr_assert(strstr(d.what, "fetch-start") || strstr(d.what, "start"), "%s", d.what);
    /* A perf CSV alone: the missing companion is named. */
    const char *lone = put("lone.csv", ",Epoch,Step,GPU,Time,Iteration time (sec)\n");
    cr_assert_eq(stall_trace_detect(lone, &d, &err), STALL_TRACE_UNKNOWN);
    cr_assert(strstr(err.msg, "lone_simp_fetchdifftime.csv is not beside it"), "%s", err.msg);
}

/* A folder of the notebook's three CSVs given as the trace: it was "a
 * folder without trace files"; the message now names the perf file to give
 * (which finds its companions). A folder with one other CSV keeps the
 * general message. */
Test(detect, a_folder_of_the_notebooks_csvs_names_the_file_to_give)
{
    stall_trace_detected d;
    stall_err err = {0};
    const char *dir = STALL_SOURCE_DIR "/tests/golden/seed-case1/input";
    cr_assert_eq(stall_trace_detect(dir, &d, &err), STALL_TRACE_UNKNOWN);
    cr_expect_not_null(strstr(err.msg, "a folder, not a trace: for the notebook's CSVs give the "
                                       "perf file, " STALL_SOURCE_DIR
                                       "/tests/golden/seed-case1/input/fsNprepNloadNtrain_"
                                       "Imagenet_default_resnet50_epoch1_b2048_worker12_thread0."
                                       "csv, which finds"),
                       "%s", err.msg);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/onecsv", ddir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    snprintf(sub, sizeof sub, "%s/onecsv/x.csv", ddir);
    FILE *f = fopen(sub, "w");
    cr_assert_not_null(f);
    fputs("a,b\n1,2\n", f);
    fclose(f);
    snprintf(sub, sizeof sub, "%s/onecsv", ddir);
    cr_assert_eq(stall_trace_detect(sub, &d, &err), STALL_TRACE_UNKNOWN);
    cr_expect_not_null(strstr(err.msg, "a folder without trace files"), "%s", err.msg);
}

/* The capture's per-rank files given as a folder before its merge step
 * (docs/capture.md: trace_rank{r}.csv, then merge into trace.csv): the
 * message was that a tidy trace is given as its file, which named no file
 * to give; it now names the merge. Once merged, the folder is its
 * trace.csv. */
Test(detect, a_folder_of_unmerged_rank_files_names_the_merge)
{
    stall_trace_detected d;
    stall_err err = {0};
    char sub[600], file[700];
    snprintf(sub, sizeof sub, "%s/unmerged", ddir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    for (int r = 0; r < 2; r++) {
        snprintf(file, sizeof file, "%s/trace_rank%d.csv", sub, r);
        FILE *f = fopen(file, "w");
        cr_assert_not_null(f);
        fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end\n", f);
        fclose(f);
    }
    cr_assert_eq(stall_trace_detect(sub, &d, &err), STALL_TRACE_UNKNOWN);
    char want[600];
    snprintf(want, sizeof want,
             "a folder of 2 per-rank capture files (trace_rank*.csv) and no trace.csv: merge "
             "them first, python3 %s/stallsim_capture.py merge ",
             stall_tools_dir());
    cr_expect_not_null(strstr(err.msg, want), "%s", err.msg);
    cr_expect_not_null(strstr(err.msg, "/unmerged/trace.csv "), "%s", err.msg);
    char csv[700];
    cr_expect_not(stall_trace_capture_folder(sub, csv, sizeof csv));
    snprintf(file, sizeof file, "%s/trace.csv", sub);
    FILE *f = fopen(file, "w");
    cr_assert_not_null(f);
    fclose(f);
    cr_expect(stall_trace_capture_folder(sub, csv, sizeof csv));
    cr_expect_str_eq(csv, file);
}

/* The merge the message above gives runs as written from any directory:
 * it named the script as tools/stallsim_capture.py, which only the source
 * tree's root holds (the tests run there), so that from anywhere else the
 * command was "can't open file". Run verbatim from the folder itself, it
 * writes the folder's trace.csv. */
Test(detect, the_merge_named_for_unmerged_rank_files_runs_from_anywhere)
{
    if (system("command -v python3 >/dev/null 2>&1") != 0)
        tmpdir_skip(ddir, "no python3");
    stall_trace_detected d;
    stall_err err = {0};
    char sub[600], file[700];
    snprintf(sub, sizeof sub, "%s/elsewhere", ddir);
    cr_assert_eq(mkdir(sub, 0755), 0);
    for (int r = 0; r < 2; r++) {
        snprintf(file, sizeof file, "%s/trace_rank%d.csv", sub, r);
        FILE *f = fopen(file, "w");
        cr_assert_not_null(f);
        fprintf(f,
                "rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end\n"
                "%d,0,0,0,1.0,2.0,1.0,2.0,3.0\n",
                r);
        fclose(f);
    }
    cr_assert_eq(stall_trace_detect(sub, &d, &err), STALL_TRACE_UNKNOWN);
    const char *from = strstr(err.msg, "merge them first, ");
    const char *to = from ? strstr(from, ", then give") : NULL;
    cr_assert(from && to, "%s", err.msg);
    from += strlen("merge them first, ");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd %s && %.*s >/dev/null 2>&1", sub, (int)(to - from), from);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exit %d: %s", st, cmd);
    char csv[700];
    snprintf(file, sizeof file, "%s/trace.csv", sub);
    cr_expect(stall_trace_capture_folder(sub, csv, sizeof csv), "%s: no trace.csv", cmd);
    cr_expect_str_eq(csv, file);
}

Test(detect, inis_and_unknown_files)
{
    stall_trace_detected d;
    stall_err err = {0};
    cr_assert_eq(stall_trace_detect(put("a.ini", "x"), &d, &err), STALL_TRACE_INI);
    cr_assert_eq(stall_trace_detect(put("a.txt", "; c\n[scenario]\n"), &d, &err), STALL_TRACE_INI);
    cr_assert_eq(stall_trace_detect(put("a.csv", "a,b\n"), &d, &err), STALL_TRACE_UNKNOWN);
    cr_assert(strstr(err.msg, "a.csv:1: not a trace"), "%s", err.msg);
    cr_assert_eq(stall_trace_detect(put("e.csv", ""), &d, &err), STALL_TRACE_UNKNOWN);
    cr_assert_eq(stall_trace_detect(put("g.gz", "\x1f\x8b\x08"), &d, &err), STALL_TRACE_UNKNOWN);
    cr_assert(strstr(err.msg, "gzip"), "%s", err.msg);
    cr_assert_eq(stall_trace_detect("/nonexistent/x.csv", &d, &err), STALL_TRACE_UNKNOWN);
    cr_assert_eq(err.code, STALL_EIO);
}

/* Issue 17 item 4: a file whose last line has no newline may be cut; cut
 * inside its last number (shorter than every other value of its column),
 * it is refused. */
Test(detect, a_cut_file_is_told_from_a_whole_one)
{
    bool cut = true;
    stall_err err = {0};
    const char *whole = put("w.csv", "a,b\n1.25,2021-09-01 19:48:46.731757\n1.5,2021-09-01 "
                                     "19:48:46.722795\n1.75,2021-09-01 19:48:47.000001\n");
    cr_assert_eq(stall_trace_check_end(whole, &cut, &err), 0, "%s", err.msg);
    cr_assert(!cut);
    const char *nonl = put("n.csv", "a,b\n1.25,2021-09-01 19:48:46.731757\n1.5,2021-09-01 "
                                    "19:48:46.722795\n1.75,2021-09-01 19:48:47.000001");
    cr_assert_eq(stall_trace_check_end(nonl, &cut, &err), 0, "%s", err.msg);
    cr_assert(cut);
    const char *c = put("c.csv", "a,b\n1.25,2021-09-01 19:48:46.731757\n1.5,2021-09-01 "
                                 "19:48:46.722795\n1.75,2021-09-01 19:48:47.00");
    cr_assert_eq(stall_trace_check_end(c, &cut, &err), STALL_EPARSE);
    cr_assert(strstr(err.msg, "c.csv:4:2: \"2021-09-01 19:48:47.00\" is shorter than every other "
                              "value of its column"),
              "%s", err.msg);
    /* A short value in a file that ends with its newline is a value. */
    const char *s = put("s.csv", "a,b\n1.25,2\n1.5,3\n1,4\n");
    cr_assert_eq(stall_trace_check_end(s, &cut, &err), 0, "%s", err.msg);
}

/* The JSON traces, gzipped or not, and folders of per-rank files: told by
 * their content (a dftracer file opens with "[" as an INI section does, and
 * is still a trace); a gzipped CSV is refused with the reason. */
Test(detect, json_traces_and_their_folders)
{
    stall_trace_detected d;
    stall_err err = {0};
    cr_assert_eq(
        stall_trace_detect(STALL_SOURCE_DIR "/tests/public/hta_trace_diff_test.json.gz", &d, &err),
        STALL_TRACE_KINETO, "%s", err.msg);
    cr_assert_eq(stall_trace_detect(
                     STALL_SOURCE_DIR "/tests/public/dftracer_dlio_unet3d_2023.pfw.gz", &d, &err),
                 STALL_TRACE_DFTRACER, "%s", err.msg);
    cr_assert_eq(stall_trace_detect(STALL_SOURCE_DIR "/tests/kineto/ddp2_w2", &d, &err),
                 STALL_TRACE_KINETO, "%s", err.msg);
    cr_assert(strstr(d.what, "folder of 2"), "%s", d.what);
    /* A name of a JSON trace that is not there: cannot open, not "a DLIO
     * (dftracer) trace" announced from its name first. */
    const char *gone[] = {"/nonexistent/x.pfw.gz", "/nonexistent/x.json"};
    for (int i = 0; i < 2; i++) {
        err = (stall_err){0};
        cr_expect_eq(stall_trace_detect(gone[i], &d, &err), STALL_TRACE_UNKNOWN, "%s", gone[i]);
        cr_expect_eq(err.code, STALL_EIO);
        cr_expect(strstr(err.msg, "cannot open") != NULL, "%s", err.msg);
        cr_expect_str_empty(d.what);
    }
    /* The same dftracer events uncompressed, opening with "[". */
    char path[512];
    snprintf(path, sizeof path, "%s/t.pfw", ddir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("[\n{\"id\":1,\"name\":\"compute\",\"cat\":\"ai_framework\",\"pid\":1,\"tid\":1,"
          "\"ts\":100,\"dur\":5,\"ph\":\"X\",\"args\":{}}\n",
          f);
    fclose(f);
    cr_assert_eq(stall_trace_detect(path, &d, &err), STALL_TRACE_DFTRACER, "%s", err.msg);
    /* A gzipped tidy CSV: refused, naming why. */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "gzip -c %s/traces/w2/trace.csv > %s/t.csv.gz", STALL_SOURCE_DIR,
             ddir);
    cr_assert_eq(system(cmd), 0);
    snprintf(path, sizeof path, "%s/t.csv.gz", ddir);
    err = (stall_err){0};
    cr_assert_eq(stall_trace_detect(path, &d, &err), STALL_TRACE_UNKNOWN);
    cr_assert(strstr(err.msg, "gzip-compressed"), "%s", err.msg);
}

/* A capture folder (trace.csv beside meta.json, as tools/train_example.py
 * writes it) is its trace.csv: its meta.json was taken for a PyTorch
 * profiler trace ("no DataLoader events ... among its 0 events", a new
 * user's report). A folder of profiler files is not one. */
Test(detect, a_capture_folder_is_its_trace_csv)
{
    char csv[1024];
    cr_assert(
        stall_trace_capture_folder(STALL_SOURCE_DIR "/traces/store_warm_r3", csv, sizeof csv));
    cr_assert_str_eq(csv, STALL_SOURCE_DIR "/traces/store_warm_r3/trace.csv");
    cr_assert(stall_trace_capture_folder(STALL_SOURCE_DIR "/traces/w2/", csv, sizeof csv));
    cr_assert_str_eq(csv, STALL_SOURCE_DIR "/traces/w2/trace.csv");
    cr_assert_not(
        stall_trace_capture_folder(STALL_SOURCE_DIR "/tests/kineto/ddp2_w2", csv, sizeof csv));
    cr_assert_not(
        stall_trace_capture_folder(STALL_SOURCE_DIR "/traces/w2/trace.csv", csv, sizeof csv));
    /* A folder with trace.csv and a profiler file beside it: not a capture. */
    char dir[600], cmd[1400];
    snprintf(dir, sizeof dir, "%s/cap", ddir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s && cp %s/traces/w2/trace.csv %s/traces/w2/meta.json %s",
             dir, STALL_SOURCE_DIR, STALL_SOURCE_DIR, dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert(stall_trace_capture_folder(dir, csv, sizeof csv));
    snprintf(cmd, sizeof cmd, "touch %s/rank0.json", dir);
    cr_assert_eq(system(cmd), 0);
    cr_assert_not(stall_trace_capture_folder(dir, csv, sizeof csv));
    /* Through the loader every command uses: a tidy trace named after the
     * folder. */
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    char note[1200];
    cr_assert_eq(stall_config_load_any(&cfg, STALL_SOURCE_DIR "/traces/store_warm_r3", note,
                                       sizeof note, &err),
                 0, "%s", err.msg);
    cr_assert_eq(cfg.format, STALL_FORMAT_TIDY);
    cr_assert_str_eq(cfg.name, "store_warm_r3");
    cr_assert(strstr(note, "store_warm_r3/trace.csv: a tidy trace"), "%s", note);
}

/* A FIFO (what `cat x | stallsim validate /dev/stdin` hands over is a pipe)
 * is refused by detection and by every reader by path, with stat alone: a
 * FIFO without a writer would block open() forever (the timeout fails the
 * test then), and a pipe cannot be read twice (detection, then the reader:
 * it said "empty file (no header)"). */
Test(detect, a_fifo_is_refused_by_every_reader_without_being_opened, .timeout = 30)
{
    const char *names[] = {"f.csv", "k.pt.trace.json", "d.pfw"};
    char fifo[3][600];
    for (int i = 0; i < 3; i++) {
        snprintf(fifo[i], sizeof fifo[i], "%s/%s", ddir, names[i]);
        cr_assert_eq(mkfifo(fifo[i], 0600), 0, "mkfifo %s", fifo[i]);
    }
    char want[700];
    snprintf(want, sizeof want, "%s: not a regular file (a pipe or FIFO; ", fifo[0]);
    stall_trace_detected d;
    stall_err err = {0};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(stall_trace_detect(fifo[i], &d, &err), STALL_TRACE_UNKNOWN, "%s", fifo[i]);
        cr_assert(strstr(err.msg, "not a regular file (a pipe or FIFO; stallsim reads its inputs "
                                  "more than once: save it to a file first)"),
                  "%s: %s", fifo[i], err.msg);
    }
    stall_tidy_stream *ts = NULL;
    cr_assert_eq(stall_tidy_open(fifo[0], &ts, &err), STALL_EIO);
    cr_assert(strstr(err.msg, want), "tidy: %s", err.msg);
    stall_tidy_trace *tt = NULL;
    cr_assert_eq(stall_tidy_load(fifo[0], &tt, &err), STALL_EIO);
    cr_assert(strstr(err.msg, want), "tidy load: %s", err.msg);
    bool cut;
    cr_assert_eq(stall_trace_check_end(fifo[0], &cut, &err), STALL_EIO);
    cr_assert(strstr(err.msg, want), "check_end: %s", err.msg);
    stall_table *tab = NULL;
    cr_assert_eq(stall_table_read(fifo[0], &tab, &err), STALL_EIO);
    cr_assert(strstr(err.msg, want), "table: %s", err.msg);
    stall_ds_trace *ds = NULL;
    cr_assert_neq(stall_ds_load(fifo[0], fifo[0], fifo[0], 1, &ds, &err), 0);
    cr_assert(strstr(err.msg, want), "dsanalyzer: %s", err.msg);
    cr_assert_neq(stall_kineto_load(fifo[1], &tt, &err), 0);
    cr_assert(strstr(err.msg, "k.pt.trace.json: not a regular file"), "kineto: %s", err.msg);
    char hex[65];
    cr_assert_eq(stall_sha256_file(fifo[0], hex, &err), STALL_EIO);
    cr_assert(strstr(err.msg, want), "sha256: %s", err.msg);
    /* /dev/null, a device, likewise */
    cr_assert_eq(stall_trace_detect("/dev/null", &d, &err), STALL_TRACE_UNKNOWN);
    cr_assert(strstr(err.msg, "/dev/null: not a regular file (a device; "), "%s", err.msg);
}

/* A capture folder's meta.json given as the trace was read as a Kineto
 * trace: two lines, the second "no DataLoader events among its 0
 * events". It is refused in one line naming the trace beside it; a
 * meta.json with no trace.csv beside it is still read as a JSON trace. */
Test(detect, a_captures_meta_json_names_its_trace)
{
    stall_trace_detected d;
    stall_err err = {0};
    const char *meta = put("meta.json", "{\"command\": \"python3 train.py\", \"cpu_cores\": 2}\n");
    cr_assert_eq(stall_trace_detect(meta, &d, &err), STALL_TRACE_KINETO,
                 "no trace.csv beside it: %s", err.msg);
    put("trace.csv", "rank,epoch,batch,worker,fetch_start\n0,0,0,0,1\n");
    cr_assert_eq(stall_trace_detect(meta, &d, &err), STALL_TRACE_UNKNOWN);
    char want[700];
    snprintf(want, sizeof want,
             "%s: the capture's settings (stallsim_capture.py's meta.json), not a trace: give its "
             "folder or %s/trace.csv",
             meta, ddir);
    cr_assert_str_eq(err.msg, want);
    cr_assert_null(strchr(err.msg, '\n'));
}

/* The malformed-input corpus (tests/malformed/, written by make_corpus.py):
 * each file of MANIFEST run through the stallsim binary as its kind says,
 * (kineto and dftracer: stallsim analyze FILE) checked for its expected exit status and, for a
 * refused input, for one error line naming the place (file:line:column) and no result folder. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tmpdir.h"

#define BIN STALL_BINARY_DIR "/stallsim"
#define DIR STALL_SOURCE_DIR "/tests/malformed"

static char mdir[] = "/tmp/stall_malformed_XXXXXX";
static void mal_setup(void)
{
    tmpdir_make(mdir);
}
static void mal_teardown(void)
{
    tmpdir_remove(mdir);
}
TestSuite(malformed, .init = mal_setup, .fini = mal_teardown);

/* Runs cmd; stderr's lines counted, its first line kept. */
static int run(const char *cmd, char *first, size_t n, int *lines)
{
    char full[4000], errf[100];
    snprintf(errf, sizeof errf, "%s/stderr.txt", mdir);
    snprintf(full, sizeof full, "%s >/dev/null 2>%s", cmd, errf);
    int st = system(full);
    FILE *f = fopen(errf, "r");
    first[0] = '\0';
    *lines = 0;
    char buf[4096];
    while (f && fgets(buf, sizeof buf, f)) {
        if (*lines == 0) {
            size_t k = strlen(buf) < n ? strlen(buf) : n - 1;
            memcpy(first, buf, k);
            first[k] = '\0';
        }
        *lines += 1;
    }
    if (f)
        fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A trace whose second line is 100 MB long (made here, not committed). */
static void make_big_line(const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("rank,epoch,batch,worker,fetch_start,fetch_end,request,ready,iter_end\n", f);
    static char chunk[1 << 20];
    memset(chunk, '7', sizeof chunk);
    for (int i = 0; i < 100; i++)
        fwrite(chunk, 1, sizeof chunk, f);
    fputs(",0,0,0,1,2,1,2,3\n", f);
    fclose(f);
}

Test(malformed, every_corpus_file_gives_its_expected_outcome, .timeout = 600)
{
    FILE *m = fopen(DIR "/MANIFEST", "r");
    cr_assert_not_null(m, "no MANIFEST");
    char line[1024];
    int cases = 0, refused = 0;
    while (fgets(line, sizeof line, m)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\n")] = '\0';
        char *save = NULL, *kind = strtok_r(line, "\t", &save), *file = strtok_r(NULL, "\t", &save),
             *code = strtok_r(NULL, "\t", &save), *want = strtok_r(NULL, "\t", &save);
        cr_assert(kind && file && code && want, "bad MANIFEST line %d", cases + 1);
        char path[800], out[800], cmd[2500], want_buf[800];
        if (strcmp(file, "@100MB_line") == 0) {
            snprintf(path, sizeof path, "%s/big.csv", mdir);
            make_big_line(path);
            snprintf(want_buf, sizeof want_buf, "big.csv%s", want + strlen(file));
            want = want_buf;
        } else {
            snprintf(path, sizeof path, DIR "/%s", file);
        }
        snprintf(out, sizeof out, "%s/out%d", mdir, cases);
        if (strcmp(kind, "ini") == 0)
            snprintf(cmd, sizeof cmd, BIN " run '%s' -q -o %s", path, out);
        else if (strcmp(kind, "kineto") == 0 || strcmp(kind, "dftracer") == 0)
            snprintf(cmd, sizeof cmd, BIN " analyze '%s' -o %s", path, out);
        else if (strcmp(kind, "tidy") == 0)
            snprintf(cmd, sizeof cmd,
                     BIN " validate " DIR "/base_tidy.ini -o %s --set 'trace.path=%s'", out, path);
        else
            snprintf(cmd, sizeof cmd, BIN " run " DIR "/base_ds.ini -q -o %s --set 'trace.%s=%s'",
                     out, kind, path);
        char first[1024];
        int nlines;
        int rc = run(cmd, first, sizeof first, &nlines);
        cr_expect_eq(rc, atoi(code), "%s: exit %d, expected %s; stderr: %s", file, rc, code, first);
        if (atoi(code) == 2) {
            refused++;
            cr_expect_eq(nlines, 1, "%s: %d lines on stderr: %s", file, nlines, first);
            cr_expect(strstr(first, want) != NULL, "%s: expected '%s' in: %s", file, want, first);
            char test[1700];
            snprintf(test, sizeof test, "test ! -e %s", out);
            cr_expect_eq(system(test), 0, "%s: a result folder was written", file);
        }
        cases++;
    }
    fclose(m);
    cr_assert_geq(cases, 60, "only %d cases", cases);
    cr_assert_geq(refused, 40);
}

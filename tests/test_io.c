/* io: atomic writes, mkdir -p, SHA-256 vectors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stall/digest.h"
#include "stall/io.h"

#include "tmpdir.h"

static char iodir[] = "/tmp/stall_io_XXXXXX";
static void io_setup(void)
{
    tmpdir_make(iodir);
}
static void io_teardown(void)
{
    tmpdir_remove(iodir);
}
TestSuite(io, .init = io_setup, .fini = io_teardown);

static int fill_ok(FILE *f, void *ctx, stall_err *err)
{
    (void)err;
    fputs(ctx, f);
    return 0;
}

static int fill_fail(FILE *f, void *ctx, stall_err *err)
{
    (void)ctx;
    fputs("partial", f);
    return stall_err_set(err, STALL_EPARSE, "failed half way");
}

Test(io, atomic_write_leaves_old_file_on_failure)
{
    const char *dir = iodir;
    char *p = stall_path_join(dir, "out.csv");
    stall_err err = {0};
    cr_assert_eq(stall_write_atomic(p, fill_ok, "old\n", &err), 0);
    cr_assert_eq(stall_write_atomic(p, fill_fail, NULL, &err), STALL_EPARSE);
    FILE *f = fopen(p, "r");
    char line[32] = {0};
    cr_assert(fgets(line, sizeof line, f));
    fclose(f);
    cr_assert_str_eq(line, "old\n");
    /* No temporary file is left behind. */
    char cmd[256];
    snprintf(cmd, sizeof cmd, "test $(ls %s | wc -l) -eq 1", dir);
    cr_assert_eq(system(cmd), 0, "stray files in %s", dir);
    free(p);
}

Test(io, mkdirs_creates_nested_and_rejects_files)
{
    const char *dir = iodir;
    char *p = stall_path_join(dir, "a/b/c/");
    stall_err err = {0};
    cr_assert_eq(stall_mkdirs(p, &err), 0, "%s", err.msg);
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    char *file = stall_path_join(dir, "a/b/c/f");
    FILE *f = fopen(file, "w");
    fclose(f);
    char *under = stall_path_join(file, "x");
    cr_assert_eq(stall_mkdirs(under, &err), STALL_EIO);
    free(p);
    free(file);
    free(under);
}

Test(io, sha256_fips_vectors)
{
    char hex[65];
    stall_sha256_hex("abc", 3, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    stall_sha256_hex("", 0, hex);
    cr_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    stall_sha256_hex(two, strlen(two), hex);
    cr_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* The SHA extensions' path (where the processor has it) and the portable
 * one give the same digests, over every length around the block edges and
 * one long buffer. */
Test(io, sha256_accelerated_equals_portable)
{
    static unsigned char buf[200003];
    uint32_t x = 21;
    for (size_t i = 0; i < sizeof buf; i++) {
        x = x * 1103515245u + 12345u;
        buf[i] = (unsigned char)(x >> 16);
    }
    bool ni = stall__sha256_accel(1);
    cr_log_info("SHA extensions %s", ni ? "used" : "absent: portable both times");
    for (size_t n = 0; n <= sizeof buf; n = n < 300 ? n + 1 : n * 3 + 7) {
        size_t len = n < sizeof buf ? n : sizeof buf;
        char a[65], b[65];
        stall__sha256_accel(1);
        stall_sha256_hex(buf, len, a);
        stall__sha256_accel(0);
        stall_sha256_hex(buf, len, b);
        cr_assert_str_eq(a, b, "length %zu", len);
        if (len == sizeof buf)
            break;
    }
    stall__sha256_accel(1);
    char hex[65];
    stall_sha256_hex("abc", 3, hex);
    cr_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

Test(io, path_dir_and_join)
{
    char *d = stall_path_dir("a/b/c.ini");
    cr_assert_str_eq(d, "a/b");
    free(d);
    d = stall_path_dir("c.ini");
    cr_assert_str_eq(d, ".");
    free(d);
    char *j = stall_path_join("a/", "b");
    cr_assert_str_eq(j, "a/b");
    free(j);
}

Test(io, path_relative_between_existing_paths)
{
    const char *dir = iodir;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "mkdir -p %s/a/b/c %s/a/bc %s/x && touch %s/x/f %s/a/bc/g", dir, dir,
             dir, dir, dir);
    cr_assert_eq(system(cmd), 0);
    struct {
        const char *from, *to, *want;
    } cases[] = {
        {"a/b/c", "x/f", "../../../x/f"}, {"a", "a/bc/g", "bc/g"},
        {"a/b", "a/bc/g", "../bc/g"}, /* "b" is not a prefix component of "bc" */
        {"a/b/c", "a/b/c", "."},          {"x", "x/f", "f"},
        {"a/b/c/../..", "x/f", "../x/f"}, /* the from side is resolved */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char from[200], to[200];
        snprintf(from, sizeof from, "%s/%s", dir, cases[i].from);
        snprintf(to, sizeof to, "%s/%s", dir, cases[i].to);
        char *got = stall_path_relative(from, to);
        cr_assert_str_eq(got, cases[i].want, "from %s to %s", cases[i].from, cases[i].to);
        free(got);
    }
    char *root = stall_path_relative("/", dir);
    cr_assert_str_eq(root, dir + 1, "from / got %s", root);
    free(root);
    /* A path that does not exist comes back as given. */
    char *missing = stall_path_relative(dir, "no/such/file");
    cr_assert_str_eq(missing, "no/such/file");
    free(missing);
}

Test(io, deferred_prefix_matches_as_text_and_sync_names_a_missing_path)
{
    char *pre = stall_path_join(iodir, ".point-");
    char *inside = stall_path_join(iodir, ".point-000001.tmp/summary.csv");
    char *outside = stall_path_join(iodir, "point-000001/summary.csv");
    cr_assert_not(stall_io_deferred(inside));
    stall_io_defer_sync(pre);
    cr_assert(stall_io_deferred(inside), "%s under %s", inside, pre);
    cr_assert_not(stall_io_deferred(outside), "%s not under %s", outside, pre);
    /* A write under the prefix is still whole and atomic. */
    char *dir = stall_path_join(iodir, ".point-000001.tmp");
    stall_err err = {0};
    cr_assert_eq(stall_mkdirs(dir, &err), 0, "%s", err.msg);
    cr_assert_eq(stall_write_atomic(inside, fill_ok, "x\n", &err), 0, "%s", err.msg);
    FILE *f = fopen(inside, "r");
    cr_assert_not_null(f);
    fclose(f);
    stall_io_defer_end(pre);
    cr_assert_not(stall_io_deferred(inside));
    cr_assert_eq(stall_sync_fs(iodir, &err), 0, "%s", err.msg);
    char *missing = stall_path_join(iodir, "nope");
    cr_assert_eq(stall_sync_fs(missing, &err), STALL_EIO);
    cr_assert(strstr(err.msg, missing), "%s", err.msg);
    free(missing);
    free(dir);
    free(pre);
    free(inside);
    free(outside);
}

Test(io, atomic_write_error_names_the_path_not_its_temporary)
{
    stall_err err = {0};
    char path[256];
    snprintf(path, sizeof path, "%s/no/such/dir/x.json", iodir);
    cr_assert_neq(stall_write_atomic(path, fill_ok, "x", &err), 0);
    cr_assert(strstr(err.msg, path) == err.msg, "names the path first: %s", err.msg);
    cr_assert(!strstr(err.msg, ".tmp."), "names a temporary file: %s", err.msg);
}

Test(io, check_writable_refuses_before_writing_and_names_the_folder)
{
    stall_err err = {0};
    char path[256], file[256];
    /* A file: its folder must exist; a result folder: parents are made. */
    snprintf(path, sizeof path, "%s/missing/x.json", iodir);
    cr_assert_eq(stall_check_writable(path, false, &err), STALL_EIO);
    cr_assert(strstr(err.msg, path) == err.msg && strstr(err.msg, "no such folder"), "%s", err.msg);
    cr_assert_eq(stall_check_writable(path, true, &err), 0, "%s", err.msg);
    /* Below a file, or a file where a folder is, or a folder where a file is. */
    snprintf(file, sizeof file, "%s/plain", iodir);
    cr_assert_eq(stall_write_atomic(file, fill_ok, "x", &err), 0);
    snprintf(path, sizeof path, "%s/plain/sub/x", iodir);
    cr_assert_eq(stall_check_writable(path, true, &err), STALL_EIO);
    cr_assert(strstr(err.msg, "is not a folder"), "%s", err.msg);
    cr_assert_eq(stall_check_writable(file, true, &err), STALL_EIO);
    cr_assert_eq(stall_check_writable(iodir, false, &err), STALL_EIO);
    cr_assert(strstr(err.msg, "it is a folder"), "%s", err.msg);
    cr_assert_eq(stall_check_writable(file, false, &err), 0, "%s", err.msg);
    /* Nothing was created by the checks. */
    snprintf(path, sizeof path, "%s/missing", iodir);
    cr_assert_neq(access(path, F_OK), 0);
}

Test(io, path_shell_quotes_only_what_the_shell_would_split)
{
    const char *cases[][2] = {{"results/example", "results/example"},
                              {"/tmp/a-b_c.d/x=1,y:2", "/tmp/a-b_c.d/x=1,y:2"},
                              {"my results/run 1", "'my results/run 1'"},
                              {"it's", "'it'\\''s'"},
                              {"a$b", "'a$b'"},
                              {"", "''"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *w = stall_path_shell(cases[i][0]);
        cr_assert_str_eq(w, cases[i][1], "[%s]", cases[i][0]);
        free(w);
    }
}

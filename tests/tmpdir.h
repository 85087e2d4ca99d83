/* A scratch folder per test, removed with everything in it when the test
 * ends, so that the suites leave nothing behind in /tmp.
 *
 *   static char dir[] = "/tmp/stall_x_XXXXXX";
 *   static void setup(void) { tmpdir_make(dir); }
 *   static void teardown(void) { tmpdir_remove(dir); }
 *   TestSuite(x, .init = setup, .fini = teardown);
 */
#ifndef STALL_TESTS_TMPDIR_H
#define STALL_TESTS_TMPDIR_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline void tmpdir_make(char *tmpl)
{
    cr_assert_not_null(mkdtemp(tmpl), "mkdtemp(%s) failed", tmpl);
}

/* Removes path and, when it is a folder (not followed when a link),
 * everything in it. */
static inline void tmpdir_remove(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                size_t n = strlen(path) + strlen(e->d_name) + 2;
                char *child = malloc(n);
                if (!child)
                    break;
                snprintf(child, n, "%s/%s", path, e->d_name);
                tmpdir_remove(child);
                free(child);
            }
            closedir(d);
        }
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Criterion runs no .fini for a test that skips (cr_skip_test), so the
 * suite's folder stayed in /tmp, one a run of each skipped test: a test
 * that skips removes it first. */
#define tmpdir_skip(path, ...)                                                                     \
    do {                                                                                           \
        tmpdir_remove(path);                                                                       \
        cr_skip_test(__VA_ARGS__);                                                                 \
    } while (0)

#endif

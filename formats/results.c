/*
 * results.c - the result folder format: which kind of result folder a
 * folder is (stall/results.h).
 */
#include "stall/results.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stall/io.h"

bool stall_result_has(const char *dir, const char *name)
{
    char *p = stall_path_join(dir, name);
    struct stat st;
    bool ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
    free(p);
    return ok;
}

stall_result_kind stall_result_kind_of(const char *dir)
{
    static const struct {
        const char *file;
        stall_result_kind kind;
    } marks[] = {
        {STALL_RESULTS_SWEEP, STALL_RESULT_SWEEP},
        {STALL_RESULTS_SCALING, STALL_RESULT_PLAN},
        {STALL_RESULTS_VALIDATE, STALL_RESULT_VALIDATE},
        {STALL_RESULTS_SUMMARY, STALL_RESULT_RUN},
        {STALL_RESULTS_SEED_SUMMARY, STALL_RESULT_SEED},
        {STALL_RESULTS_PER_RANK, STALL_RESULT_ANALYZE},
    };
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++)
        if (stall_result_has(dir, marks[i].file))
            return marks[i].kind;
    return STALL_RESULT_NONE;
}

const char *stall_result_kind_name(stall_result_kind k)
{
    static const char *const names[] = {"none",  "run",  "validate", "analyze",
                                        "sweep", "plan", "seed"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

bool stall_result_replaceable(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool empty = true;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        empty = false;
        break;
    }
    closedir(d);
    return empty || stall_result_has(dir, STALL_RESULTS_MANIFEST);
}

bool stall_result_unfinished_sweep(const char *dir)
{
    if (stall_result_has(dir, STALL_RESULTS_SWEEP))
        return false;
    DIR *d = opendir(dir);
    if (!d)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        const char *p = e->d_name;
        p += *p == '.';
        if (strncmp(p, "point-", 6) != 0 || p[6] < '0' || p[6] > '9')
            continue;
        size_t k = strspn(p + 6, "0123456789");
        found = p[6 + k] == '\0' || strncmp(p + 6 + k, ".tmp", 4) == 0;
    }
    closedir(d);
    return found;
}

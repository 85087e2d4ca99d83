/*
 * fuzz_common.h - what the libFuzzer targets share: the input written to a
 * scratch file (the readers take paths) and a scratch folder removed after
 * each input. Built only with -DSTALL_FUZZ=ON (clang); see `make fuzz`.
 */
#ifndef STALL_FUZZ_COMMON_H
#define STALL_FUZZ_COMMON_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A scratch folder for this process, made once, removed at exit. */
static char fz_dir[64];

/* Removes a folder tree (no symbolic links are made in it). */
static inline void fz_rm_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[512];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (remove(p) != 0)
                fz_rm_tree(p);
        }
        closedir(d);
    }
    remove(dir);
}

static void fz_cleanup(void)
{
    if (fz_dir[0])
        fz_rm_tree(fz_dir);
}

static inline const char *fz_scratch(void)
{
    if (!fz_dir[0]) {
        snprintf(fz_dir, sizeof fz_dir, "/tmp/stall_fuzz_XXXXXX");
        if (!mkdtemp(fz_dir))
            abort();
        atexit(fz_cleanup);
    }
    return fz_dir;
}

/* Writes data to <scratch>/name and returns the path (static storage per
 * slot 0..3). */
static inline const char *fz_file(int slot, const char *name, const uint8_t *data, size_t size)
{
    static char path[4][128];
    snprintf(path[slot], sizeof path[slot], "%s/%s", fz_scratch(), name);
    FILE *f = fopen(path[slot], "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    return path[slot];
}

#endif

/*
 * bench_json: reading speed of the JSON trace readers (formats/kineto.c,
 * formats/dftracer.c over formats/jsonev.c): MB of JSON per second on one
 * core (the readers are single-threaded), best of 3 loads of each file
 * given, and the process's peak RSS after them.
 *
 *   bench_json KINETO.json DFTRACER.pfw
 *
 * bench/run.sh writes the two files with bench/gen_json.py and times
 * Python's json module on the same files as the reference. Without
 * arguments it says so and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "stall/dftracer.h"
#include "stall/kineto.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench(const char *kind, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "bench_json: %s: cannot stat\n", path);
        return 1;
    }
    double best = 1e30;
    long long iters = 0;
    for (int rep = 0; rep < 3; rep++) {
        stall_tidy_trace *t = NULL;
        stall_err err = {0};
        double t0 = now_s();
        int rc = kind[0] == 'k' ? stall_kineto_load(path, &t, &err)
                                : stall_dftracer_load(path, &t, &err);
        double dt = now_s() - t0;
        if (rc) {
            fprintf(stderr, "bench_json: %s\n", err.msg);
            return 1;
        }
        iters = (long long)t->epochs * t->ranks * t->batches;
        stall_tidy_free(t);
        best = dt < best ? dt : best;
    }
    double mb = (double)st.st_size / 1e6;
    printf("%-8s %8.1f MB  best of 3 %8.3f s  %7.1f MB/s per core  (%lld iterations kept)\n", kind,
           mb, best, mb / best, iters);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("bench_json: no trace files given (bench/run.sh writes them with "
               "bench/gen_json.py): skipped\n");
        return 0;
    }
    int rc = bench("kineto", argv[1]) || bench("dftracer", argv[2]);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS of this process: %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
    return rc;
}

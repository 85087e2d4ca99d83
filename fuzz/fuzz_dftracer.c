/* Fuzz target: the dftracer reader (formats/dftracer.c over formats/jsonev.c) and
 * the analysis of what it accepts. The input is written as trace.pfw; its
 * gzip form is reached through the corpus. Oracle: success with a trace
 * that analyses, or one error line naming the file. */
#include "fuzz_common.h"
#include "stall/analyze.h"
#include "stall/dftracer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_file(0, "trace.pfw", data, size);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    int rc = stall_dftracer_load(p, &t, &err);
    if (rc != 0) {
        if (t || rc != STALL_EPARSE || strchr(err.msg, '\n') || strncmp(err.msg, p, strlen(p)) ||
            err.msg[strlen(p)] != ':') {
            fprintf(stderr, "oracle: rc %d: %s\n", rc, err.msg);
            abort();
        }
        return 0;
    }
    stall_analysis a;
    stall_analyze(t, &a);
    stall_analysis_free(&a);
    stall_tidy_free(t);
    return 0;
}

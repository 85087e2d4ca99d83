/* Fuzz target: the tidy reader and the decomposition of what it accepts.
 * Oracle: success, or one error line naming the file and a line. */
#include "fuzz_common.h"
#include "stall/measured.h"
#include "stall/tidy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_file(0, "trace.csv", data, size);
    stall_tidy_trace *t = NULL;
    stall_err err = {0};
    int rc = stall_tidy_load(p, &t, &err);
    if (rc != 0) {
        if (t || rc != STALL_EPARSE || strchr(err.msg, '\n') || strncmp(err.msg, p, strlen(p)) ||
            err.msg[strlen(p)] != ':') {
            fprintf(stderr, "oracle: rc %d: %s\n", rc, err.msg);
            abort();
        }
        return 0;
    }
    stall_measured m;
    if (stall_measured_from_tidy(t, &m, &err) == 0)
        stall_measured_free(&m);
    stall_tidy_free(t);
    return 0;
}

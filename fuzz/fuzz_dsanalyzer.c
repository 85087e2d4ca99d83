/* Fuzz target: the dsanalyzer reader. The input holds up to three files
 * (fetch, start, perf) separated by a line "@@\n"; missing ones are small
 * valid files. Oracle: success or one error line naming one of the files. */
#include "fuzz_common.h"
#include "stall/dsanalyzer.h"

static const char *fz_default[3] = {
    ",Epoch,Index number,Fetch time (sec)_gpu0\n0,1,0,0.5\n1,1,1,0.25\n",
    ",Epoch,Index number,Start time_gpu0\n0,1,0,2022-01-01 00:00:00.5\n"
    "1,1,1,2022-01-01 00:00:01.5\n",
    ",Epoch,Step,GPU,Time,Iteration time (sec),Training stall time (sec)\n"
    "0,1,0,0,2022-01-01 00:00:01.0,0.6,0.1\n1,1,1,0,2022-01-01 00:00:02.0,0.7,0.2\n"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *names[3] = {"fetch.csv", "start.csv", "perf.csv"}, *paths[3];
    const uint8_t *p = data, *end = data + size;
    int i = 0;
    for (; i < 3 && p <= end; i++) {
        const uint8_t *sep = NULL;
        for (const uint8_t *q = p; q + 3 <= end; q++)
            if (q[0] == '@' && q[1] == '@' && q[2] == '\n') {
                sep = q;
                break;
            }
        const uint8_t *stop = sep && i < 2 ? sep : end;
        paths[i] = fz_file(i, names[i], p, (size_t)(stop - p));
        if (stop == end) {
            i++;
            break;
        }
        p = sep + 3;
    }
    for (; i < 3; i++)
        paths[i] = fz_file(i, names[i], (const uint8_t *)fz_default[i], strlen(fz_default[i]));
    stall_ds_trace *t = NULL;
    stall_err err = {0};
    int rc = stall_ds_load(paths[0], paths[1], paths[2], 1, &t, &err);
    if (rc == 0) {
        stall_ds_free(t);
        return 0;
    }
    if (t || (rc != STALL_EPARSE && rc != STALL_EIO) || strchr(err.msg, '\n') ||
        !(strstr(err.msg, "fetch.csv") || strstr(err.msg, "start.csv") ||
          strstr(err.msg, "perf.csv"))) {
        fprintf(stderr, "oracle: rc %d: %s\n", rc, err.msg);
        abort();
    }
    return 0;
}

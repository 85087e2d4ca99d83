/*
 * sweep_int.h - a sweep's axes and grid (sweep_grid.c), shared with the
 * runner (sweep.c). Private to jobs/.
 */
#ifndef STALL_JOBS_SWEEP_INT_H
#define STALL_JOBS_SWEEP_INT_H

#include "stall/sweep.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct sweep_axis {
    char key[64]; /* section.key */
    bool command_line;
    int n;
    char **vals;
    int group;
} sweep_axis;

struct stall_sweep {
    stall_config base; /* without [sweep] lines, align lists made single */
    int naxes;
    sweep_axis ax[STALL_EXTRA_MAX + 2];
    int ngroups;
    int group_n[STALL_EXTRA_MAX + 2]; /* values per group */
    size_t group_stride[STALL_EXTRA_MAX + 2];
    size_t points;
    const char *src; /* for messages */
};

#endif

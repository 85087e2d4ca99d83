/*
 * stall/align.h - the seed's alignment policies as a what-if on measured
 * values (docs/model.md, section 4.1).
 *
 * Per batch index k, across the G ranks:
 *   fetch align: D'(r,k) = mean_r D (avg), min_r D (min), or D(r,k) (none);
 *   start align: S'(r,k) = (max_r S + min_r S)/2 (avg, the midpoint, not the
 *                mean), min_r S (min), or S(r,k) (none).
 */
#ifndef STALL_ALIGN_H
#define STALL_ALIGN_H

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum stall_align {
    STALL_ALIGN_AVG = 0,
    STALL_ALIGN_MIN = 1,
    STALL_ALIGN_NONE = 2
} stall_align;

/* "avg", "min" or "none". */
const char *stall_align_name(stall_align a);
/* Parses exactly "avg", "min" or "none". Returns 0 or STALL_EINVAL. */
int stall_align_parse(const char *s, stall_align *out);

/* Aligns one batch's starts across g ranks: out[r] for r < g. The midpoint
 * is computed in integer ns without overflow, rounding toward the minimum.
 * in and out may be the same array. */
void stall_align_starts(stall_align a, const stall_time *in, int g, stall_time *out);
/* Aligns one batch's fetch durations across g ranks (ns). The mean is taken
 * as the exact integer sum divided by g, rounded to nearest. */
void stall_align_durations(stall_align a, const stall_time *in, int g, stall_time *out);

#ifdef __cplusplus
}
#endif
#endif

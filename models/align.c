/*
 * align.c - alignment policies on one batch's values across ranks.
 *
 * O(G) per batch. Integer nanoseconds throughout, so the policies are exact;
 * the seed-compatible mode has its own arithmetic (seed.c) because the
 * notebook's differs in the last bit.
 */
#include "stall/align.h"

#include <string.h>

static const char *const align_names[] = {"avg", "min", "none"};

const char *stall_align_name(stall_align a)
{
    return (unsigned)a < 3 ? align_names[a] : "?";
}

int stall_align_parse(const char *s, stall_align *out)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(s, align_names[i]) == 0) {
            *out = (stall_align)i;
            return 0;
        }
    return STALL_EINVAL;
}

static void align_minmax(const stall_time *in, int g, stall_time *mn, stall_time *mx)
{
    *mn = *mx = in[0];
    for (int r = 1; r < g; r++) {
        if (in[r] < *mn)
            *mn = in[r];
        if (in[r] > *mx)
            *mx = in[r];
    }
}

void stall_align_starts(stall_align a, const stall_time *in, int g, stall_time *out)
{
    if (a == STALL_ALIGN_NONE || g <= 0) {
        if (out != in)
            memmove(out, in, (size_t)(g > 0 ? g : 0) * sizeof *out);
        return;
    }
    stall_time mn, mx;
    align_minmax(in, g, &mn, &mx);
    stall_time v = a == STALL_ALIGN_MIN ? mn : mn + (mx - mn) / 2;
    for (int r = 0; r < g; r++)
        out[r] = v;
}

void stall_align_durations(stall_align a, const stall_time *in, int g, stall_time *out)
{
    if (a == STALL_ALIGN_NONE || g <= 0) {
        if (out != in)
            memmove(out, in, (size_t)(g > 0 ? g : 0) * sizeof *out);
        return;
    }
    stall_time v;
    if (a == STALL_ALIGN_MIN) {
        stall_time mx;
        align_minmax(in, g, &v, &mx);
    } else {
        /* Durations are below ~10^15 ns, so the sum of a few thousand ranks
         * fits in int64 with room to spare. */
        int64_t sum = 0;
        for (int r = 0; r < g; r++)
            sum += in[r];
        v = (sum + g / 2) / g;
    }
    for (int r = 0; r < g; r++)
        out[r] = v;
}

/*
 * tidy_ckpt.c - a tidy trace's recorded checkpoints summed per epoch and
 * rank (stall_tidy_ckpt_sums, stall/tidy.h), as analyze shows them.
 */
#include "stall/tidy.h"

#include <stdlib.h>

void stall_tidy_ckpt_sums(stall_tidy_trace *t)
{
    if (!t->ckpt_start || t->checkpoint_s)
        return;
    size_t n = (size_t)t->epochs * (size_t)t->ranks * (size_t)t->batches;
    bool any = false;
    for (size_t i = 0; i < n && !any; i++)
        any = t->ckpt_start[i] >= 0;
    if (!any)
        return;
    t->checkpoint_s = stall_xcalloc((size_t)t->epochs * (size_t)t->ranks, sizeof *t->checkpoint_s);
    for (int e = 0; e < t->epochs; e++)
        for (int r = 0; r < t->ranks; r++)
            for (int64_t k = 0; k < t->batches; k++) {
                size_t i = stall_tidy_at(t, e, r, k);
                if (t->ckpt_start[i] >= 0)
                    t->checkpoint_s[(size_t)e * t->ranks + r] +=
                        stall_ns_to_s(t->ckpt_end[i] - t->ckpt_start[i]);
            }
}

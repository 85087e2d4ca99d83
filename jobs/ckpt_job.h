/*
 * ckpt_job.h - checkpoints and uneven ranks in the jobs (ckpt_job.c).
 * Private to jobs/.
 */
#ifndef STALL_JOBS_CKPT_JOB_H
#define STALL_JOBS_CKPT_JOB_H

#include <stdio.h>

#include "inputs.h"
#include "stall/measured.h"
#include "stall/model.h"

/* p->ckpt and p->uneven: a trace's recorded checkpoints, then (whatif) the
 * INI's keys on top. */
void wi_params_ckpt(const wi_whatif *what, const stall_measured *m, bool whatif,
                    stall_model_params *p);

/* Checkpoints asked for by the what-if that are still off once the trace
 * is read (no size or bandwidth and none recorded): an error naming the
 * missing key. And `mode = off` where the trace m (NULL: none) records no
 * checkpoints: nothing to switch off, refused. */
int wi_ckpt_check(const wi_whatif *what, const stall_measured *m, const stall_model_params *p,
                  stall_err *err);

/* The trace's checkpoints' mean write time (the later ones', s), which its
 * size and bandwidth give back. */
double wi_ckpt_measured_s(const stall_measured *m);
/* Why its checkpoints record no size, as said: "no ckpt_bytes" (a tidy
 * trace) or "DLIO logs none". */
const char *wi_ckpt_unsized_why(const stall_measured *m);

/* Per epoch: checkpoints taken, the loop's wait for them, their write time
 * and the epoch time. */
typedef struct wi_ckstats {
    bool on;
    bool unsized;            /* the size is the trace's one unit (stall_measured ckpt_unsized, no
                                mb_per_rank given): the terminal says the write time, not a size */
    const char *unsized_why; /* then why (wi_ckpt_unsized_why) */
    int ne, epoch0;
    int64_t *n;
    stall_time *wait, *write, *epoch;
    /* Each rank's fetch of the batch its iteration 0 took, summed over the
     * epochs (first_n of them): the empty start's first fetch as run. */
    int ranks;
    stall_time *first;
    int first_n;
} wi_ckstats;

void wi_ck_init(wi_ckstats *s, const stall_model_params *p);
/* With the storage tiers and 2 or more epochs: each epoch's time, one line. */
void wi_epochs_print(FILE *f, const wi_ckstats *s, const stall_model_params *p);
void wi_ck_free(wi_ckstats *s);
void wi_ck_add(wi_ckstats *s, const stall_iter_record *rec, bool last);
/* Rank r's mean first fetch of an epoch as run (0 before any epoch ran). */
stall_time wi_ck_first_fetch(const wi_ckstats *s, int r);
/* The run's checkpoint stall over its epoch time. */
double wi_ck_share(const wi_ckstats *s);
/* checkpoints.csv in dir (nothing without checkpoints). */
int wi_ck_write(const wi_ckstats *s, const char *dir, stall_err *err);
/* One terminal line (nothing without checkpoints). */
void wi_ck_print(FILE *f, const wi_ckstats *s, const stall_model_params *p);
/* One line each for slow ranks and stragglers (nothing without them). */
void wi_uneven_print(FILE *f, const stall_model_params *p);

#endif

/*
 * sweep_int.h - a sweep's axes and grid (sweep_grid.c), shared with the
 * runner (sweep.c), its preparation of the folder (sweep_prep.c) and its
 * signal handling (sweep_sig.c). Private to jobs/.
 */
#ifndef STALL_JOBS_SWEEP_INT_H
#define STALL_JOBS_SWEEP_INT_H

#include "stall/job.h"
#include "stall/sweep.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct sweep_axis {
    char key[64]; /* section.key */
    bool command_line;
    bool from_base; /* an [align] list of the scenario itself, not a [sweep] line */
    int line;       /* the [sweep] line of the INI (0: --sweep or unknown) */
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

/* Sets *err to point i's error: "src: [sweep] point i (key=value, ...):
 * inner's message" (its own "src: " left out). Returns inner's code
 * (STALL_ECONFIG where it has none). */
int stall__sweep_point_err(const stall_sweep *s, size_t i, const stall_err *inner, stall_err *err);

/* Where axis a was given: "--sweep key" or "src:line: [sweep] key"; an
 * [align] list of the scenario, where the scenario gave it. */
void stall__sweep_axis_where(const stall_sweep *s, int a, char *buf, size_t n);

/* The axis of section.key, or -1. */
int stall__sweep_axis_of(const stall_sweep *s, const char *key);

/* Digits of a sweep's point folder names: at least 6, as many as its
 * point count has. */
int stall__sweep_width(size_t points);
/* The mode's summary file, the one sweep.csv is assembled from. */
const char *stall__sweep_summary_name(const stall_config *c);

/* What the folder of point i (dir, outdir/point-NNNNNN) holds. */
typedef enum stall__sweep_pt {
    STALL__SWEEP_PT_UNKNOWN = 0, /* not looked at */
    STALL__SWEEP_PT_ABSENT,      /* no folder: the point runs */
    STALL__SWEEP_PT_DONE,        /* this point's effective.ini and its summary: skipped */
    STALL__SWEEP_PT_OTHER,       /* another configuration's results */
    STALL__SWEEP_PT_DAMAGED,     /* this point's, but a file is cut short or missing: run again */
} stall__sweep_pt;

/* Point i's folder dir against the effective.ini the point would write (its
 * inputs' SHA-256 taken from d): an effective.ini missing or a prefix of
 * the point's (cut short), or a summary that is not a header and one row
 * of as many fields, is DAMAGED, what is wrong written to why (n bytes).
 * Returns a stall__sweep_pt, or a negative code (an input that cannot be
 * hashed). */
int stall__sweep_point_state(const stall_sweep *s, size_t i, const char *dir,
                             const stall_job_digests *d, char *why, size_t n, stall_err *err);

/* sweep_prep.c: before the points run. Refuses an outdir of other files;
 * moves one holding another sweep aside (named in *note): other axes,
 * points beyond this grid, or a point folder whose effective.ini is not
 * this sweep's point's (other values, other --set keys, other inputs).
 * Else state[i] (points entries, zeroed by the caller) is set for every
 * point folder there, so that the runner need not look again. */
int stall__sweep_prepare(const stall_sweep *s, const char *outdir, const stall_job_digests *d,
                         unsigned char *state, char *note, size_t n, stall_err *err);
/* Drops the figures and report drawn from an older sweep.csv. */
void stall__sweep_drop_drawn(const char *outdir);
/* mode = model's checks that need the trace's grid, on every point; in
 * replay and seed mode, [align] lists on traces of one GPU. */
/* ... and in late (n bytes) a line for the terminal where some points
 * replay the trace's late-starting ranks (its own GPU count) and others,
 * at other GPU counts, begin every epoch together, or, in replay and seed
 * mode, where the default [align] lists are axes on traces of one GPU
 * (points that differ only in their labels) ("" else). */
int stall__sweep_model_check(const stall_sweep *s, char *late, size_t n, stall_err *err);

/* sweep_sig.c: SIGINT and SIGTERM while the points run. One run at a time
 * per process (the state is the handler's, file-scope). */

/* Installs the handler for a run of `points` points into outdir (folders
 * named with width digits; seen: sweep_run.seen, read by the handler, kept
 * by the caller until stall__sweep_sig_end). notices: 0 says nothing on a
 * first signal, 1 says it on stderr at once, 2 the same below the progress
 * line. Clears the stop flag; every point starts unfinished. Allocates one
 * byte a point (out of memory aborts). */
void stall__sweep_sig_begin(const char *outdir, size_t points, const unsigned char *seen, int width,
                            int notices);
/* Restores the handlers that begin replaced and frees the points' states;
 * stall__sweep_sig_stopped still answers for the run that ended. */
void stall__sweep_sig_end(void);
/* Whether a first signal came since stall__sweep_sig_begin: no point starts
 * and each finished one is committed at once. */
bool stall__sweep_sig_stopped(void);
/* Counts the points in flight, for the first signal's line (+1 as a point
 * starts, -1 as it ends). */
void stall__sweep_sig_inflight(int delta);
/* Point i's job starts (its .point-N.tmp absent): from the job's rename of
 * its folder to .point-N.tmp, whole, a second signal puts it in place,
 * also before the job returns. */
void stall__sweep_sig_running(size_t i);
/* Point i's job returned: ok, its folder whole in .point-N.tmp, it is
 * marked finished (a second signal puts it in place unless the runner has
 * claimed it), unless a second signal has put it in place already; failed,
 * it is not finished. Waits (1 ms steps) while a handler on another thread
 * looks at it. */
void stall__sweep_sig_ran(size_t i, bool ok);
/* Claims finished point i for the caller's rename; false when it is not
 * marked finished (the handler put it in place). The caller holds signals
 * (stall_signals_hold) from the claim to stall__sweep_sig_release, so that
 * the handler, which waits for claims to end, never waits for its own
 * thread. */
bool stall__sweep_sig_claim(size_t i);
/* Ends point i's claim: in place, or not (its folder was removed). */
void stall__sweep_sig_release(size_t i, bool placed);

#endif

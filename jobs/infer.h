/*
 * infer.h - fetch durations inferred from a censored trace (private to
 * jobs/; docs/model.md, section 8.2).
 *
 * A PyTorch profiler trace taken with DataLoader workers, and every DLIO
 * (dftracer) trace, holds the training loop's wait for each batch but not
 * the workers' fetches. The fetch durations are then inferred: a lognormal
 * family (mu, sigma, in log seconds) plus the workers' start-up at each
 * epoch, fitted so that the measured configuration (the trace's ranks,
 * workers, prefetch, compute, tails and epoch gaps), simulated by the
 * model with fetch durations exp(mu + sigma z) for fixed standard normal z
 * (common random numbers: the objective is a deterministic, continuous
 * function of the parameters), gives the loop the waits the trace saw. The
 * distance is the 2-Wasserstein one between the observed and simulated
 * waits (the mean squared difference of their sorted values: every
 * quantile matched), minimised by GSL's Nelder-Mead (nmsimplex2). Its
 * uncertainty: the fit repeated on bootstrap resamples of the observed
 * waits. The fitted draws replace the trace's unknown fetch durations, and
 * every result built on them says so.
 */
#ifndef STALL_JOBS_INFER_H
#define STALL_JOBS_INFER_H

#include <stdbool.h>

#include "inputs.h"
#include "stall/measured.h"
#include "stall/tidy.h"

#define WI_INFER_BOOT 20 /* bootstrap refits */

/* The fit and what it rests on. */
typedef struct wi_fit {
    int workers, prefetch;           /* the measured loader the fit assumed */
    double mu, sigma;                /* lognormal of one fetch, log seconds */
    double startup_s;                /* the workers' start-up at each epoch (s) */
    double handover_s;               /* per batch, paid even when it was there (s) */
    double mean_s, p50_s, p95_s;     /* of the fitted fetch distribution */
    double mean_lo, mean_hi;         /* bootstrap 5%..95% of mean_s */
    double p95_lo, p95_hi;           /* the same for p95_s */
    double startup_lo, startup_hi;   /* the same for startup_s */
    double handover_lo, handover_hi; /* the same for handover_s (a warm window's) */
    double obs_wait_s, sim_wait_s;   /* mean wait: observed, simulated with the fit */
    double obs_p95_s, sim_p95_s;     /* 95th percentile wait: observed, simulated */
    double rms_s;                    /* RMS of the sorted waits' differences */
    double waited;                   /* share of batches the loop waited > 1 ms for */
    int evals;                       /* objective evaluations (model runs) of the fit */
    bool bounded_only;               /* the loop hardly waited: the fetch times are
                                        bounded from above, not determined */
    double upper_s;                  /* bounded_only: the largest mean fetch that gives the
                                        same waits (within 1 ms of their mean); else 0 */
    long long waits;                 /* observed waits the fit rests on */
    bool warm_start;                 /* the epochs' first waits say they are profiling
                                        windows opened mid-training: the fit simulated each
                                        after a warm-up and fitted the hand-over, not the
                                        start-up */
    double first_wait_s;             /* median over epochs and ranks of the first wait */
    bool startup_confounded;         /* batches per epoch <= workers: every wait is one of an
                                        epoch's first, start-up and fetch inseparable */
} wi_fit;

/* Decomposes a trace whose fetch times are unknown (t->fetch_unknown) and
 * fits its fetch durations: *m as stall_measured_from_tidy_p would give
 * it, with m->fetch the fitted draws, m->startup the fitted start-up,
 * m->fetch_fit set (owned by m). workers and prefetch: the measured
 * loader (t's or [trace]'s; workers >= 1). Returns 0, or STALL_ECONFIG /
 * STALL_EINVAL with the reason the fit cannot be made. */
int wi_infer_measured(const stall_tidy_trace *t, int workers, int prefetch, bool persistent,
                      stall_measured *m, stall_err *err);

/* The DataLoader workers per GPU of a Kineto or dftracer trace's run, as
 * run and validate read them (*w): 0 where its fetch times are known (the
 * loader's call is the whole fetch, in the main process: a [trace] workers
 * other than 0 is refused); else [trace] workers where given (0 is
 * refused: a trace of the loop's waits alone had workers), else the
 * trace's own count (dftracer's reader threads; 0 when not recorded,
 * refused when need, as the fetch inference needs it). Returns 0 or
 * STALL_ECONFIG. */
int wi_json_workers(const wi_trace_src *src, const stall_tidy_trace *t, bool need, int *w,
                    stall_err *err);

/* Loads a Kineto or dftracer trace (src->format) into *m: decomposed as
 * measured when its fetch times are known (Kineto with 0 workers), else
 * with the fetch durations inferred (wi_infer_measured; the workers: the
 * trace's count, else [trace] workers, which is then needed). Returns 0 or
 * the reader's error, or STALL_ECONFIG naming what is missing. */
int wi_load_json(const wi_trace_src *src, stall_measured *m, stall_err *err);

/* Whether a format is read by wi_load_json. */
static inline bool wi_json_format(int format)
{
    return format == STALL_FORMAT_KINETO || format == STALL_FORMAT_DFTRACER;
}

/* A trace with its worker-side columns hidden, as a Kineto trace taken with
 * workers shows it (for the method's check): a copy of t with fetch_start =
 * fetch_end = ready, worker -1, fetch_unknown, workers and prefetch kept. */
stall_tidy_trace *wi_infer_hide(const stall_tidy_trace *t);

/* One line saying what was inferred, for terminals ("fetch durations:
 * INFERRED ..."), into buf. runs_warm: the runs the terminal shows next
 * start each window after a warm-up, as the fit did (validate's of a warm
 * fit); else a warm fit's line cautions that they start empty. */
void wi_fit_say(const wi_fit *f, bool runs_warm, char *buf, size_t n);

/* ", the trace reports N" where [trace] workers overrode what a Kineto or
 * dftracer trace reported (m->workers_trace), else "". Static storage. */
const char *wi_workers_trace_say(const stall_measured *m);

/* fetch_fit.csv: the fit as key,value,low,high rows. */
int wi_fit_write(const char *dir, const wi_fit *f, stall_err *err);

#endif

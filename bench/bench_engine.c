/*
 * bench_engine.c - the classic hold benchmark for the engine.
 *
 * A queue of Q events is kept full: each event's handler schedules one
 * successor at now + an exponential delay, until E events have been
 * scheduled in all; then the queue drains. Every one of the E events is
 * scheduled, popped, dispatched and recycled once, so the figure covers the
 * whole engine path (pool, heap, loop), not the heap alone. Delays come from
 * a ring of 65536 precomputed exponential draws (mean 1 ms) so that the random
 * generator's cost stays out of the figure; keys still spread as with fresh
 * draws, since each reuse lands on a different current time. The last Q
 * events drain without successors, a small share of the total.
 *
 * Usage: bench_engine [events [queue]]   (defaults 20000000 and 100000)
 */
#include "stall/engine.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BENCH_RING 65536 /* a power of two, so the index wraps with a mask */
#define BENCH_MEAN_NS 1e6

typedef struct bench_hold {
    stall_time delay[BENCH_RING];
    uint64_t next;      /* index of the next delay */
    uint64_t scheduled; /* events scheduled so far */
    uint64_t total;     /* events to schedule in all */
} bench_hold;

static stall_time bench_delay(bench_hold *h)
{
    return h->delay[h->next++ & (BENCH_RING - 1)];
}

static int bench_handle(stall_engine *eng, void *state, const stall_event *ev, stall_err *err)
{
    bench_hold *h = state;
    if (h->scheduled == h->total)
        return 0;
    h->scheduled++;
    if (!stall_engine_schedule(eng, ev->time + bench_delay(h), 0, 0, 0, 0, err))
        return err->code;
    return 0;
}

static const stall_model_ops bench_ops = {.name = "hold", .handle = bench_handle};

static double bench_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t bench_arg(int argc, char **argv, int i, uint64_t dflt)
{
    if (argc <= i)
        return dflt;
    char *end;
    unsigned long long v = strtoull(argv[i], &end, 10);
    if (*end != '\0' || v == 0) {
        fprintf(stderr, "bench_engine: bad count '%s'\n", argv[i]);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    uint64_t total = bench_arg(argc, argv, 1, 20000000);
    uint64_t queue = bench_arg(argc, argv, 2, 100000);
    if (queue > total)
        queue = total;

    gsl_set_error_handler_off();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng) {
        fprintf(stderr, "bench_engine: cannot allocate the random generator\n");
        return 1;
    }
    gsl_rng_set(rng, 1);
    bench_hold *h = stall_xcalloc(1, sizeof *h);
    for (size_t i = 0; i < BENCH_RING; i++)
        h->delay[i] = (stall_time)gsl_ran_exponential(rng, BENCH_MEAN_NS);
    gsl_rng_free(rng);
    h->total = total;

    stall_engine *eng = stall_engine_create(&bench_ops, h, 0);
    stall_err err = {0};
    for (uint64_t i = 0; i < queue; i++, h->scheduled++)
        if (!stall_engine_schedule(eng, bench_delay(h), 0, 0, 0, 0, &err)) {
            fprintf(stderr, "bench_engine: %s\n", err.msg);
            return 1;
        }

    double t0 = bench_seconds();
    int rc = stall_engine_run(eng, STALL_TIME_MAX, &err);
    double secs = bench_seconds() - t0;
    uint64_t events = stall_engine_dispatched(eng);
    stall_engine_destroy(eng);
    free(h);
    if (rc != 0) {
        fprintf(stderr, "bench_engine: %s\n", err.msg);
        return 1;
    }
    if (events != total) {
        fprintf(stderr, "bench_engine: dispatched %" PRIu64 " events, expected %" PRIu64 "\n",
                events, total);
        return 1;
    }
    printf("engine hold: %" PRIu64 " events in %.2f s = %.1f M events/s, %.1f ns/event "
           "(queue %" PRIu64 ")\n",
           events, secs, (double)events / secs / 1e6, secs * 1e9 / (double)events, queue);
    return 0;
}

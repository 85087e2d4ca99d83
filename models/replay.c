/*
 * replay.c - trace-timed replay of one epoch on the event engine.
 *
 * Events: ARRIVE(r,k) at the aligned arrival, REQUEST(r,k) when the loop asks
 * (epoch start for k = 0, T(k-1) after), READY(r,k) when the loop gets the
 * batch, COMPUTED(r,k) at Y + C, and ITER_END(k) at T(k) once every rank has
 * computed k (the DDP barrier). All arrivals are queued up front: G*N events
 * in the heap, O(log(GN)) each. The loop asks for one batch at a time, so
 * in-order delivery needs no reorder buffer: a rank's next batch is always
 * the one it asked for.
 */
#include "stall/replay.h"

#include <stdlib.h>
#include <string.h>

#include "stall/engine.h"

enum { EV_ARRIVE = 1, EV_REQUEST, EV_READY, EV_COMPUTED, EV_ITER_END };

typedef struct replay_state {
    const stall_replay_input *in;
    int g;
    int64_t n;
    stall_time *start, *fetch; /* aligned S', D' */
    unsigned char *arrived;    /* [k*g + r] */
    int64_t *asked;            /* [r]: batch asked for, -1 none */
    stall_time *request;       /* [r]: Q(r, asked) */
    stall_time *ready;         /* [r]: Y of the current batch */
    stall_time *stall;         /* [r]: stall of the current batch */
    int computed;              /* ranks done with the current batch */
    stall_time compute_end_max;
    stall_time prev_end; /* T(k-1), or epoch start */
    stall_report *rep;
    stall_replay_stats *stats;
} replay_state;

#define RP_AT(a, k, r) ((a) ? (a)[(size_t)(k) * (size_t)st->g + (size_t)(r)] : 0)

/* Delivers rank r's asked batch when it is there. */
static int replay_try_deliver(stall_engine *eng, replay_state *st, int r, stall_err *err)
{
    int64_t k = st->asked[r];
    if (k < 0 || k >= st->n || !st->arrived[(size_t)k * (size_t)st->g + (size_t)r])
        return 0;
    stall_time y = st->request[r] + RP_AT(st->in->floor, k, r);
    stall_time now = stall_engine_now(eng);
    if (y < now)
        y = now;
    st->asked[r] = -1;
    return stall_engine_schedule(eng, y, EV_READY, r, k, 0, err) ? 0 : err->code;
}

static void replay_finish_iteration(replay_state *st, int64_t k, stall_time t)
{
    const stall_replay_input *in = st->in;
    int g = st->g;
    stall_time smax = st->stall[0], smin = st->stall[0], wmax = 0;
    stall_time fmin = st->fetch[(size_t)k * g], fmax = fmin, s0min = st->start[(size_t)k * g],
               s0max = s0min;
    double wsum = 0, csum = 0;
    stall_time a = in->tail ? in->tail[k] : 0;
    for (int r = 0; r < g; r++) {
        size_t i = (size_t)k * g + (size_t)r;
        if (st->stall[r] > smax)
            smax = st->stall[r];
        if (st->stall[r] < smin)
            smin = st->stall[r];
        stall_time w = t - a - (st->ready[r] + in->compute[i]);
        if (w > wmax)
            wmax = w;
        wsum += stall_ns_to_s(w);
        csum += stall_ns_to_s(in->compute[i]);
        if (st->fetch[i] < fmin)
            fmin = st->fetch[i];
        if (st->fetch[i] > fmax)
            fmax = st->fetch[i];
        if (st->start[i] < s0min)
            s0min = st->start[i];
        if (st->start[i] > s0max)
            s0max = st->start[i];
    }
    if (st->rep) {
        stall_iter_row row = {.epoch = in->epoch,
                              .batch = k,
                              .iter_end = t,
                              .iter_time = t - st->prev_end,
                              .stall_max = smax,
                              .stall_min = smin,
                              .wait_max = wmax,
                              .wait_mean_s = wsum / g,
                              .compute_mean_s = csum / g,
                              .fetch_spread = fmax - fmin,
                              .start_spread = s0max - s0min,
                              .stall = st->stall};
        stall_report_add(st->rep, &row);
    }
    st->prev_end = t;
}

static int replay_handle(stall_engine *eng, void *state, const stall_event *ev, stall_err *err)
{
    replay_state *st = state;
    const stall_replay_input *in = st->in;
    stall_time now = stall_engine_now(eng);
    int r = ev->a;
    int64_t k = ev->b;
    switch (ev->type) {
    case EV_ARRIVE:
        st->arrived[(size_t)k * st->g + (size_t)r] = 1;
        return replay_try_deliver(eng, st, r, err);
    case EV_REQUEST:
        st->asked[r] = k;
        st->request[r] = now;
        return replay_try_deliver(eng, st, r, err);
    case EV_READY: {
        st->ready[r] = now;
        st->stall[r] = now - st->request[r];
        stall_time c = in->compute[(size_t)k * st->g + (size_t)r];
        return stall_engine_schedule(eng, now + c, EV_COMPUTED, r, k, 0, err) ? 0 : err->code;
    }
    case EV_COMPUTED:
        if (now > st->compute_end_max)
            st->compute_end_max = now;
        if (++st->computed < st->g)
            return 0;
        st->computed = 0;
        {
            stall_time t = st->compute_end_max + (in->tail ? in->tail[k] : 0);
            st->compute_end_max = 0;
            return stall_engine_schedule(eng, t, EV_ITER_END, 0, k, 0, err) ? 0 : err->code;
        }
    case EV_ITER_END:
        replay_finish_iteration(st, k, now);
        if (k + 1 < st->n)
            for (int q = 0; q < st->g; q++)
                if (!stall_engine_schedule(eng, now, EV_REQUEST, q, k + 1, 0, err))
                    return err->code;
        if (st->stats)
            st->stats->epoch_end = now;
        return 0;
    default:
        return stall_err_set(err, STALL_EINTERNAL, "replay: unknown event type %d", ev->type);
    }
}

static const stall_model_ops replay_ops = {.name = "replay", .handle = replay_handle};

int stall_replay_run(const stall_replay_input *in, stall_align fa, stall_align sa,
                     stall_report *rep, stall_replay_stats *stats, stall_err *err)
{
    if (in->ranks < 1 || in->batches < 1 || !in->start || !in->fetch || !in->compute ||
        !in->request0)
        return stall_err_set(err, STALL_EINVAL, "replay: empty or incomplete input");
    int g = in->ranks;
    int64_t n = in->batches;
    size_t cells = (size_t)n * (size_t)g;
    replay_state st = {.in = in, .g = g, .n = n, .rep = rep, .stats = stats};
    st.start = stall_xmalloc(cells * sizeof *st.start);
    st.fetch = stall_xmalloc(cells * sizeof *st.fetch);
    st.arrived = stall_xcalloc(cells, 1);
    st.asked = stall_xmalloc((size_t)g * sizeof *st.asked);
    st.request = stall_xcalloc((size_t)g, sizeof *st.request);
    st.ready = stall_xcalloc((size_t)g, sizeof *st.ready);
    st.stall = stall_xcalloc((size_t)g, sizeof *st.stall);
    for (int r = 0; r < g; r++)
        st.asked[r] = -1;

    stall_time t0 = in->request0[0];
    for (int r = 1; r < g; r++)
        if (in->request0[r] < t0)
            t0 = in->request0[r];
    st.prev_end = t0;
    stall_replay_stats local = {0};
    if (!stats)
        stats = &local;
    st.stats = stats;
    stats->epoch_start = t0;

    /* Start at the earliest time anything happens, so no event is in the past. */
    stall_time origin = t0;
    for (size_t i = 0; i < cells; i++) {
        if (in->start[i] < origin)
            origin = in->start[i];
    }
    for (int64_t k = 0; k < n; k++) {
        stall_align_starts(sa, in->start + (size_t)k * g, g, st.start + (size_t)k * g);
        stall_align_durations(fa, in->fetch + (size_t)k * g, g, st.fetch + (size_t)k * g);
    }
    stall_engine *eng = stall_engine_create(&replay_ops, &st, origin);
    int rc = 0;
    for (size_t i = 0; i < cells && rc == 0; i++) {
        int r = (int)(i % (size_t)g);
        int64_t k = (int64_t)(i / (size_t)g);
        stall_time lag = in->lag ? in->lag[i] : 0;
        if (!stall_engine_schedule(eng, st.start[i] + st.fetch[i] + lag, EV_ARRIVE, r, k, 0, err))
            rc = err->code;
    }
    for (int r = 0; r < g && rc == 0; r++)
        if (!stall_engine_schedule(eng, in->request0[r], EV_REQUEST, r, 0, 0, err))
            rc = err->code;
    if (rc == 0)
        rc = stall_engine_run(eng, STALL_TIME_MAX, err);
    stats->events = stall_engine_dispatched(eng);
    if (rc == 0 && st.prev_end == t0)
        rc = stall_err_set(err, STALL_EINTERNAL, "replay: no iteration completed");
    if (rc == 0 && rep)
        stall_report_epoch(rep, in->epoch, t0, stats->epoch_end);
    stall_engine_destroy(eng);
    free(st.start);
    free(st.fetch);
    free(st.arrived);
    free(st.asked);
    free(st.request);
    free(st.ready);
    free(st.stall);
    return rc;
}

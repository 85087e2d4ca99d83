/*
 * stall/progress.h - a progress line on a terminal ("\r<text>   ", no
 * newline, rewritten at most every 0.2 s): `stallsim sweep`'s and `plan`'s.
 *
 * The caller decides whether there is one (f: stderr where it is a
 * terminal, else NULL) and keeps its own clock (t: seconds since it began).
 * While a line is on the terminal without its newline, the signal handler
 * of stall/cleanup.h starts its own line below it.
 */
#ifndef STALL_PROGRESS_H
#define STALL_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct stall_progress {
    FILE *f;     /* NULL: no progress line */
    double last; /* t of the last line written */
    bool open;   /* a line is on the terminal, without its newline */
} stall_progress;

/* Writes "\r<fmt...>   " to p->f when t is 0.2 s or more past the last
 * line, or when last (then followed by a newline); nothing without p->f. */
void stall_progress_line(stall_progress *p, double t, bool last, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Erases an open line (blanks over it, the cursor back at its start), so
 * that what is written next reads as it would without it. */
void stall_progress_clear(stall_progress *p);

/* Whether some progress line is open (async-signal-safe; cleanup.c). */
bool stall_progress_any_open(void);

#ifdef __cplusplus
}
#endif
#endif

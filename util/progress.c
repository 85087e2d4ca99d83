/*
 * progress.c - the progress line of stall/progress.h.
 */
#include "stall/progress.h"

#include <signal.h>
#include <stdarg.h>

/* A line is open (its newline not written): the signal handler's line
 * starts below it (cleanup.c). */
static volatile sig_atomic_t progress_open;

void stall_progress_line(stall_progress *p, double t, bool last, const char *fmt, ...)
{
    if (!p->f || (!last && t - p->last < 0.2))
        return;
    p->last = t;
    fputc('\r', p->f);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->f, fmt, ap);
    va_end(ap);
    fputs("   ", p->f);
    if (last)
        fputc('\n', p->f);
    p->open = !last;
    progress_open = p->open;
    fflush(p->f);
}

void stall_progress_clear(stall_progress *p)
{
    if (!p->f || !p->open)
        return;
    /* ANSI erase-line: every terminal stallsim runs in (xterm, VT100) */
    fputs("\r\033[K", p->f);
    fflush(p->f);
    p->open = false;
    progress_open = 0;
}

bool stall_progress_any_open(void)
{
    return progress_open != 0;
}

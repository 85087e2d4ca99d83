/*
 * timeline.c - Chrome Trace Event JSON writer (stall/timeline.h). Streams:
 * every event is written as it comes, so memory is constant.
 */
#include "stall/timeline.h"

#include <inttypes.h>

static void tl_sep(stall_tl *w)
{
    fputs(w->events++ ? ",\n" : "\n", w->f);
}

static void tl_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* ns as microseconds with three decimals, exactly. */
static void tl_us(FILE *f, stall_time ns)
{
    if (ns < 0) {
        fputc('-', f);
        ns = -ns;
    }
    fprintf(f, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

void stall_tl_begin(stall_tl *w, FILE *f)
{
    w->f = f;
    w->events = 0;
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", f);
}

void stall_tl_process(stall_tl *w, int pid, const char *name, int sort)
{
    tl_sep(w);
    fprintf(
        w->f,
        "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":", pid);
    tl_str(w->f, name);
    fputs("}}", w->f);
    tl_sep(w);
    fprintf(w->f,
            "{\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_"
            "index\":%d}}",
            pid, sort);
}

void stall_tl_thread(stall_tl *w, int pid, int tid, const char *name, int sort)
{
    tl_sep(w);
    fprintf(w->f,
            "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":", pid,
            tid);
    tl_str(w->f, name);
    fputs("}}", w->f);
    tl_sep(w);
    fprintf(w->f,
            "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":{\"sort_"
            "index\":%d}}",
            pid, tid, sort);
}

void stall_tl_complete(stall_tl *w, int pid, int tid, const char *name, const char *cat,
                       stall_time ts, stall_time dur, const char *args_json)
{
    tl_sep(w);
    fprintf(w->f, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"name\":", pid, tid);
    tl_str(w->f, name);
    fputs(",\"cat\":", w->f);
    tl_str(w->f, cat);
    fputs(",\"ts\":", w->f);
    tl_us(w->f, ts);
    fputs(",\"dur\":", w->f);
    tl_us(w->f, dur < 0 ? 0 : dur);
    if (args_json)
        fprintf(w->f, ",\"args\":%s", args_json);
    fputc('}', w->f);
}

void stall_tl_counter(stall_tl *w, int pid, const char *name, stall_time ts, double v)
{
    tl_sep(w);
    fprintf(w->f, "{\"ph\":\"C\",\"pid\":%d,\"tid\":0,\"name\":", pid);
    tl_str(w->f, name);
    fputs(",\"ts\":", w->f);
    tl_us(w->f, ts);
    fprintf(w->f, ",\"args\":{\"value\":%.17g}}", v);
}

void stall_tl_flow(stall_tl *w, int pid, int tid, stall_time ts, uint64_t id, bool start)
{
    tl_sep(w);
    fprintf(
        w->f,
        "{\"ph\":\"%s\",\"pid\":%d,\"tid\":%d,\"name\":\"batch\",\"cat\":\"flow\",\"id\":%" PRIu64
        ",\"ts\":",
        start ? "s" : "f", pid, tid, id);
    tl_us(w->f, ts);
    fputs(start ? "}" : ",\"bp\":\"e\"}", w->f);
}

int stall_tl_end(stall_tl *w)
{
    fputs("\n]}\n", w->f);
    return ferror(w->f) ? STALL_EIO : 0;
}

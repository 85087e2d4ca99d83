/*
 * htmlfmt.c - the report's number text and HTML escaping (htmlfmt.h).
 */
#include "htmlfmt.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "stall/io.h"

/* v with 4 significant digits, no exponent; suffix k, M, G from 10^4. */
static void hf_sig4(char *buf, size_t len, double v)
{
    if (v == 0) {
        strcpy(buf, "0");
        return;
    }
    char e[32];
    snprintf(e, sizeof e, "%.3e", v); /* rounds first: 9.99996 -> 1.000e+01 */
    const char *x = strchr(e, 'e');
    int ex = x ? atoi(x + 1) : 0;
    if (ex >= 4 && ex < 12) {
        static const char *const suffix[] = {"k", "M", "G"};
        int group = ex / 3 * 3;
        snprintf(buf, len, "%.*f %s", 3 - (ex - group), v / pow(10.0, group),
                 suffix[group / 3 - 1]);
    } else if (ex >= 12) {
        snprintf(buf, len, "%.3e", v);
    } else {
        snprintf(buf, len, "%.*f", ex >= 3 ? 0 : 3 - ex, v);
    }
}

/* A percentage with one decimal, never "-0.0%". */
static void hf_pct(char *buf, double p, bool sign)
{
    if (fabs(p) < 0.05)
        strcpy(buf, "0.0%");
    else
        snprintf(buf, HF_LEN, sign ? "%+.1f%%" : "%.1f%%", p);
}

const char *hf_fmt(char *buf, double v, hf_unit u)
{
    if (isnan(v)) {
        strcpy(buf, "\xe2\x80\x93"); /* en dash */
        return buf;
    }
    char n[HF_LEN - 8];
    switch (u) {
    case HF_INT:
        snprintf(buf, HF_LEN, "%.0f", v);
        break;
    case HF_SHARE:
        hf_pct(buf, 100 * v, false);
        break;
    case HF_PCT:
        hf_pct(buf, v, false);
        break;
    case HF_DPCT:
        hf_pct(buf, v, true);
        break;
    case HF_TIME: {
        double a = fabs(v);
        if (a == 0) {
            strcpy(buf, "0 s");
        } else if (a >= 1e4) {
            hf_sig4(n, sizeof n, v / 3600);
            snprintf(buf, HF_LEN, "%s h", n);
        } else if (a >= 1) {
            hf_sig4(n, sizeof n, v);
            snprintf(buf, HF_LEN, "%s s", n);
        } else if (a >= 1e-3) {
            hf_sig4(n, sizeof n, v * 1e3);
            snprintf(buf, HF_LEN, "%s ms", n);
        } else if (a >= 1e-6) {
            hf_sig4(n, sizeof n, v * 1e6);
            snprintf(buf, HF_LEN, "%s \xc2\xb5s", n);
        } else {
            hf_sig4(n, sizeof n, v * 1e9);
            snprintf(buf, HF_LEN, "%s ns", n);
        }
        break;
    }
    case HF_RATIO:
        hf_sig4(n, sizeof n, v);
        snprintf(buf, HF_LEN, "%sx", n);
        break;
    case HF_NUM:
        hf_sig4(buf, HF_LEN, v);
        break;
    }
    return buf;
}

const char *hf_share_below(char *buf, double v, double target)
{
    hf_fmt(buf, v, HF_SHARE);
    if (v < target && strtod(buf, NULL) >= 100 * target)
        snprintf(buf, HF_LEN, "%.1f%%", floor(1000 * v) / 10);
    return buf;
}

static bool hf_ends(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

hf_unit hf_unit_of(const char *c)
{
    if (hf_ends(c, "_share") || strcmp(c, "efficiency") == 0 || strncmp(c, "share_", 6) == 0)
        return HF_SHARE;
    if (strcmp(c, "vs_measured_pct") == 0 || hf_ends(c, "error_pct"))
        return HF_DPCT;
    if (hf_ends(c, "_pct"))
        return HF_PCT;
    if (strncmp(c, "throughput", 10) == 0)
        return HF_NUM;
    if (hf_ends(c, "_s"))
        return HF_TIME;
    return HF_NUM;
}

void hf_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

bool hf_has(const char *dir, const char *name)
{
    char *p = stall_path_join(dir, name);
    FILE *f = fopen(p, "r");
    free(p);
    if (f)
        fclose(f);
    return f != NULL;
}

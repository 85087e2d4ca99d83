/*
 * stall/fmt.h - exact, fast number text for the result files.
 *
 * Times are integer nanoseconds, so their decimal seconds are printed from
 * the integer, digit by digit, never through a double: stall_fmt_ns gives
 * the exact value whatever its size. Doubles printed with nine decimals
 * (means, shares) go through stall_fmt_f9, which gives the text of
 * printf("%.9f") (the exact binary value rounded half to even) without
 * printf. Seed mode's Python repr is Ryu's shortest round trip
 * (stall_fmt_repr). A stall_out batches the text of many rows and hands it
 * to stdio in large blocks.
 *
 * Every stall_fmt_* writes at `o`, adds no NUL, and returns the end of what
 * it wrote; each needs at most STALL_FMT_MAX bytes at `o`.
 */
#ifndef STALL_FMT_H
#define STALL_FMT_H

#include <stdint.h>
#include <stdio.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most bytes one stall_fmt_* call writes ("-9223372036.854775808" is
 * 21; repr needs 24; %.9f of the largest double falls back to printf and
 * is cut to this, which only happens for |v| >= 9.2e9). */
#define STALL_FMT_MAX 48

/* v in decimal: "-12", "0". */
char *stall_fmt_i64(char *o, int64_t v);

/* ns as seconds with exactly nine decimals: 1500000000 -> "1.500000000",
 * -1 -> "-0.000000001". Exact for every int64. */
char *stall_fmt_ns(char *o, stall_time ns);

/* printf("%.9f", v), byte for byte: "nan", "-inf", "-0.000000000" when v
 * is negative and rounds to zero. Integer arithmetic for |v| < 9.2e9,
 * snprintf beyond. */
char *stall_fmt_f9(char *o, double v);

/* Python's repr(v): the shortest text that reads back to v (Ryu), fixed
 * notation for decimal exponents in [-4, 16), else "1e+16", "4e-06";
 * "nan", "inf", "-0.0". */
char *stall_fmt_repr(char *o, double v);

/* v * 10^9 rounded half to even on v's exact binary value, as the C
 * library's printf rounds. Returns 0, or -1 (and leaves *n alone) when v
 * is not finite or |v| >= 9.2e9. */
int stall_round_e9(double v, int64_t *n);

/* Formats v as Python's repr() does into buf (STALL_REPR_MAX bytes, NUL
 * terminated). Returns buf. */
#define STALL_REPR_MAX 32
char *stall_repr(char *buf, double v);

/* Writes stall_repr(v) to f. */
void stall_put_double(FILE *f, double v);

/* ---- batched row output ----
 * A stall_out collects text in its own block and writes it to f with one
 * fwrite when the block is nearly full (and at stall_out_flush). Write
 * errors surface as ferror(f), which stall_write_atomic checks. Use it
 * from a fill function:
 *     stall_out w;
 *     stall_out_init(&w, f);
 *     char *o = stall_out_room(&w);
 *     o = stall_fmt_ns(o, t); *o++ = ','; ...; *o++ = '\\n';
 *     w.o = o;
 *     stall_out_flush(&w);
 * stall_out_room flushes when fewer than STALL_OUT_ROOM bytes are left and
 * returns w.o: room for a row of up to 16 numbers with their separators. */
#define STALL_OUT_ROOM 1024
#define STALL_OUT_BLOCK 65536
typedef struct stall_out {
    FILE *f;
    char *o; /* next free byte of buf */
    char buf[STALL_OUT_BLOCK];
} stall_out;

void stall_out_init(stall_out *w, FILE *f);
void stall_out_flush(stall_out *w);
char *stall_out_room(stall_out *w);
/* Appends s (any length). */
void stall_out_str(stall_out *w, const char *s);

#ifdef __cplusplus
}
#endif

#endif /* STALL_FMT_H */

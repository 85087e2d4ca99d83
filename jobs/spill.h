/*
 * spill.h - the rows of a trace's first streaming pass kept in a compact
 * binary file, so that the later passes (stream.h: the turnaround, the
 * decomposition, the model's window, each contention simulation) read them
 * back instead of parsing the text again (issue 21). Private to jobs/.
 *
 * A row takes about 30 bytes (varints: the grid position, the worker, the
 * request as a difference from the previous row's, every other time as a
 * difference from the request; bytes raw when not 0), against about 140 of
 * CSV text; reading it back costs a few ns per byte instead of a parse.
 * The file is made in $TMPDIR (else /tmp) and unlinked at once: nothing is
 * left behind, whatever ends the process. Memory: two buffers of 256 KiB.
 * Any failure to make or write the file (no space) only drops the spill:
 * the caller reads the text again, as before.
 */
#ifndef STALL_JOBS_SPILL_H
#define STALL_JOBS_SPILL_H

#include <stdbool.h>
#include <stdint.h>

#include "stall/tidy.h"

typedef struct wi_spill wi_spill;

/* A new, empty spill; NULL when no file can be made. */
wi_spill *wi_spill_new(void);

/* Appends a row (after a write failure, nothing: wi_spill_end says so). */
void wi_spill_put(wi_spill *s, const stall_tidy_row *row);

/* Ends the writing: true when every row is in the file. */
bool wi_spill_end(wi_spill *s);

/* A reader of the whole spill from its first row; several may be open. */
typedef struct wi_spill_reader wi_spill_reader;
wi_spill_reader *wi_spill_read(const wi_spill *s);

/* The next row: 1, 0 after the last, -1 on a read error. */
int wi_spill_next(wi_spill_reader *r, stall_tidy_row *row);

void wi_spill_reader_close(wi_spill_reader *r);

/* NULL-safe. */
void wi_spill_free(wi_spill *s);

#endif

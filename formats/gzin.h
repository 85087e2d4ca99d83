/*
 * gzin.h - private to formats/: a file read as gzip or plain text, told by
 * its first two bytes, for the JSON trace readers (jsonev.c). Unlike
 * zlib's gzread, which stops without a word at bytes after the last gzip
 * member, it refuses them: concatenated members are read as one stream
 * (as gzip -d does), anything else after the end of a member is an error
 * (gzip -d: "trailing garbage ignored", exit 2), as is a member cut short.
 */
#ifndef STALL_FORMATS_GZIN_H
#define STALL_FORMATS_GZIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gzin gzin;

/* Opens path; NULL with errno set when it cannot be opened. */
gzin *gzin_open(const char *path);
/* Up to n decompressed bytes into buf: the count (0 at the end), or -1 on
 * an error (gzin_msg says which). */
long gzin_read(gzin *g, void *buf, size_t n);
/* Like fgets: up to n - 1 bytes, through the first newline, NUL-ended;
 * NULL at the end or on an error (gzin_failed tells which). */
char *gzin_gets(gzin *g, char *buf, size_t n);
bool gzin_failed(const gzin *g);
/* The error, without the file's name: "trailing garbage after the gzip
 * data (compressed byte 5284 of 5293)", "invalid stored block lengths",
 * "unexpected end of file (truncated file?)", "read error: ...". */
const char *gzin_msg(const gzin *g);
/* Whether the file is gzip (false: read as it is). */
bool gzin_is_gzip(const gzin *g);
void gzin_close(gzin *g);

#endif

/*
 * stall/digest.h - SHA-256 of input files, recorded in every result folder
 * so a result can be traced back to the exact trace it came from.
 */
#ifndef STALL_DIGEST_H
#define STALL_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "stall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SHA-256 of a buffer as 64 lowercase hex digits plus NUL. */
void stall_sha256_hex(const void *data, size_t len, char hex[65]);
/* SHA-256 of a file's contents. Returns 0 or STALL_EIO naming the file. */
int stall_sha256_file(const char *path, char hex[65], stall_err *err);
/* For tests: force 0 uses the portable code, 1 the processor's SHA
 * extensions when present, -1 keeps the choice; returns 1 when they are
 * used. */
int stall__sha256_accel(int force);

#ifdef __cplusplus
}
#endif
#endif

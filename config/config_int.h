/*
 * config_int.h - what the parts of the configuration share (private to
 * config/): the key table of keys.c (every section and key with its type,
 * storage, default, range and help) and the helpers that look keys up.
 */
#ifndef STALL_CONFIG_CONFIG_INT_H
#define STALL_CONFIG_CONFIG_INT_H

#include "stall/config.h"

#include <stddef.h>

#include "stall/limits.h"

typedef enum cfg_type {
    CFG_STR,
    CFG_PATH,
    CFG_INT,
    CFG_DOUBLE,
    CFG_BOOL,
    CFG_ENUM,
    CFG_ALIGNS
} cfg_type;

typedef struct cfg_key {
    const char *section, *key;
    cfg_type type;
    size_t offset, size;
    const char *def;
    double min, max;
    const char *choices; /* CFG_ENUM: "a|b|c", stored as the index */
    const char *help;
} cfg_key;

#define CFG_K(sec, key, type, field, def, min, max, choices, help)                                 \
    {                                                                                              \
        sec, key, type, offsetof(stall_config, field), sizeof(((stall_config *)0)->field), def,    \
            min, max, choices, help                                                                \
    }
#define CFG_BIG 1e18
#define CFG_DUR STALL_LIMIT_DURATION_S

const cfg_key *cfg_find(const char *section, const char *key, size_t *idx);
bool cfg_section_known(const char *section);
/* " (did you mean KEY?)", " (did you mean [SECTION] KEY?)", " (did you
 * mean [SECTION]?)" for the nearest known name of an unknown one, or "". */
void cfg_suggest(const char *section, const char *key, char *buf, size_t n);
extern const cfg_key cfg_keys[];
extern const size_t cfg_nkeys;

/* Loads INI text from f over cfg (name: for messages), as stall_config_load
 * loads a file (config.c; effective.ini's round trip reads it back). */
int cfg_load_stream(stall_config *cfg, FILE *f, const char *name, stall_err *err);

/* The cross-key checks of [checkpoint], [ranks] and [straggler]
 * (check_ckpt.c), the last of stall_config_check. */
int cfg_check_uneven(const stall_config *cfg, stall_err *err);

#endif

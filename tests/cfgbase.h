/* A test scenario's base: "section.key=value" lines applied as if read
 * from the scenario's INI file (stall_config_apply, origin "test"), so a
 * key given there may still be swept with --sweep, where one given with
 * --set may not. */
#ifndef STALL_TESTS_CFGBASE_H
#define STALL_TESTS_CFGBASE_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "stall/config.h"

static inline void cfgbase_apply(stall_config *cfg, const char *const *base)
{
    stall_err e = {0};
    for (int i = 0; base[i]; i++) {
        char sec[32], key[32];
        const char *dot = strchr(base[i], '.'), *eq = strchr(base[i], '=');
        cr_assert(dot && eq && eq > dot, "not section.key=value: %s", base[i]);
        snprintf(sec, sizeof sec, "%.*s", (int)(dot - base[i]), base[i]);
        snprintf(key, sizeof key, "%.*s", (int)(eq - dot - 1), dot + 1);
        cr_assert_eq(stall_config_apply(cfg, sec, key, eq + 1, "test", &e), 0, "%s", e.msg);
    }
}

#endif

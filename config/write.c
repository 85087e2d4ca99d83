/*
 * write.c - the effective configuration written back as INI text (every
 * result folder's effective.ini) and its round-trip check, and the lists
 * of given keys that jobs report or drop.
 */
#include "stall/config.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stall/io.h"
#include "stall/limits.h"
#include "config_int.h"

static void cfg_write_value(const stall_config *cfg, const cfg_key *k, const char *base_dir,
                            FILE *f)
{
    const void *src = (const char *)cfg + k->offset;
    char buf[STALL_REPR_MAX];
    switch (k->type) {
    case CFG_STR:
        fputs(src, f);
        break;
    case CFG_PATH: {
        /* Relative to the directory the file is written to, which is how
         * the loader reads it back. */
        if (base_dir && *(const char *)src) {
            /* A relative path that does not exist (yet) stays as given,
             * made absolute: it still names the same file from base_dir.
             * (Told by the file system, not by the relative text equalling
             * the given one: "../x" can be both.) */
            char cwd[STALL_PATH_MAX];
            if (access(src, F_OK) != 0 && ((const char *)src)[0] != '/' &&
                getcwd(cwd, sizeof cwd)) {
                fputs(cwd, f);
                fputc('/', f);
                fputs(src, f);
            } else {
                char *rel = stall_path_relative(base_dir, src);
                fputs(rel, f);
                free(rel);
            }
        } else {
            fputs(src, f);
        }
        break;
    }
    case CFG_INT:
        fprintf(f, "%lld", (long long)*(const int64_t *)src);
        break;
    case CFG_DOUBLE:
        fputs(stall_repr(buf, *(const double *)src), f);
        break;
    case CFG_BOOL:
        fputs(*(const bool *)src ? "true" : "false", f);
        break;
    case CFG_ENUM: {
        int want = *(const int *)src, i = 0;
        for (const char *p = k->choices;; i++) {
            const char *bar = strchr(p, '|');
            size_t n = bar ? (size_t)(bar - p) : strlen(p);
            if (i == want) {
                fwrite(p, 1, n, f);
                break;
            }
            if (!bar)
                break;
            p = bar + 1;
        }
        break;
    }
    case CFG_ALIGNS: {
        const stall_align_list *l = src;
        for (int i = 0; i < l->n; i++)
            fprintf(f, "%s%s", i ? ", " : "", stall_align_name(l->v[i]));
        break;
    }
    }
}

void stall_config_write(const stall_config *cfg, const char *base_dir, FILE *f)
{
    const char *section = "";
    for (size_t i = 0; i < cfg_nkeys; i++) {
        const cfg_key *k = &cfg_keys[i];
        if (strcmp(section, k->section) != 0) {
            fprintf(f, "%s[%s]\n", i ? "\n" : "", k->section);
            section = k->section;
        }
        /* Keys left at their default stay comments, so that the text loads
         * back with the same keys given: several defaults mean "as the
         * trace says", which an explicit value would override. */
        fprintf(f, "%s%s = ", cfg->given[i] ? "" : "; ", k->key);
        cfg_write_value(cfg, k, base_dir, f);
        fputc('\n', f);
    }
}
/* Whether key k is named by an entry of a stall_config_list_given list:
 * "section" (every key of it) or "section.key". */
static bool cfg_named(const char *entry, size_t k)
{
    const char *dot = strchr(entry, '.');
    if (!dot)
        return strcmp(entry, cfg_keys[k].section) == 0;
    size_t ns = (size_t)(dot - entry);
    return strlen(cfg_keys[k].section) == ns && strncmp(entry, cfg_keys[k].section, ns) == 0 &&
           strcmp(dot + 1, cfg_keys[k].key) == 0;
}

size_t stall_config_list_given(const stall_config *cfg, const char *const *sections, char *buf,
                               size_t n)
{
    size_t count = 0, len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < cfg_nkeys; k++) {
        if (!cfg->given[k])
            continue;
        for (const char *const *sec = sections; *sec; sec++)
            if (cfg_named(*sec, k)) {
                int w = snprintf(buf + len, len < n ? n - len : 0, "%s[%s] %s", count ? ", " : "",
                                 cfg_keys[k].section, cfg_keys[k].key);
                if (w > 0 && len + (size_t)w < n)
                    len += (size_t)w;
                count++;
                break;
            }
    }
    return count;
}

size_t stall_config_drop(stall_config *cfg, const char *const *sections, char *buf, size_t n)
{
    size_t count = stall_config_list_given(cfg, sections, buf, n);
    stall_config def;
    stall_config_defaults(&def);
    for (size_t k = 0; k < cfg_nkeys; k++)
        for (const char *const *sec = sections; *sec; sec++)
            if (cfg->given[k] && cfg_named(*sec, k)) {
                memcpy((char *)cfg + cfg_keys[k].offset, (const char *)&def + cfg_keys[k].offset,
                       cfg_keys[k].size);
                cfg->given[k] = 0;
                cfg->given_line[k] = 0;
            }
    return count;
}

/* Removes the comment lines of INI text in place; returns the new length. */
static size_t cfg_drop_comments(char *text)
{
    char *w = text;
    for (char *r = text; *r;) {
        size_t n = strcspn(r, "\n");
        bool keep = r[0] != ';';
        if (keep) {
            memmove(w, r, n);
            w += n;
            if (r[n] == '\n')
                *w++ = '\n';
        }
        r += n + (r[n] == '\n');
    }
    *w = '\0';
    return (size_t)(w - text);
}

/* The last text whose round trip passed, per thread, and which keys it
 * gave. Only a configuration without paths is remembered: its round trip
 * is then a function of the text alone (a path's is not: writing one asks
 * the file system, and reading it joins the base folder), so the same
 * text with the same keys given passes again without being read back. A
 * run checks its configuration before it runs and again as effective.ini
 * (the same text); a sweep point did both, 2 reads and 4 writes. */
static _Thread_local struct {
    size_t n; /* 0: none */
    char text[8192];
    unsigned char given[sizeof(((stall_config *)0)->given)];
} cfg_passed;

static bool cfg_has_path(const stall_config *cfg)
{
    for (size_t i = 0; i < cfg_nkeys; i++)
        if (cfg_keys[i].type == CFG_PATH && *((const char *)cfg + cfg_keys[i].offset))
            return true;
    return false;
}

static bool cfg_passed_before(const stall_config *cfg, const char *text, size_t n)
{
    if (cfg_passed.n != n || memcmp(cfg_passed.text, text, n) != 0)
        return false;
    for (size_t k = 0; k < sizeof cfg->given; k++)
        if ((cfg->given[k] != 0) != cfg_passed.given[k])
            return false;
    return true;
}

int stall_config_roundtrip(const stall_config *cfg, const char *base_dir, stall_err *err)
{
    char *text = NULL, *again = NULL;
    size_t ntext = 0, nagain = 0;
    FILE *f = open_memstream(&text, &ntext);
    if (!f)
        return stall_err_set(err, STALL_ENOMEM, "effective.ini: cannot write to memory");
    stall_config_write(cfg, base_dir, f);
    fclose(f);
    bool memo = ntext < sizeof cfg_passed.text && !cfg_has_path(cfg);
    if (memo && cfg_passed_before(cfg, text, ntext)) {
        free(text);
        return 0;
    }
    if (memo) {
        cfg_passed.n = 0; /* set again below when this one passes */
        memcpy(cfg_passed.text, text, ntext);
    }
    size_t nwritten = ntext;
    stall_config *back = stall_xmalloc(sizeof *back);
    stall_config_defaults(back);
    snprintf(back->ini_dir, sizeof back->ini_dir, "%s", base_dir ? base_dir : "");
    stall_err e = {0};
    int rc = 0;
    f = fmemopen(text, ntext, "r");
    if (!f || cfg_load_stream(back, f, "effective.ini", &e) != 0) {
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: the configuration cannot be written to effective.ini and read "
                           "back: %s",
                           stall_config_src(cfg), f ? e.msg : "fmemopen");
    }
    if (f)
        fclose(f);
    if (rc == 0) {
        f = open_memstream(&again, &nagain);
        if (!f) {
            rc = stall_err_set(err, STALL_ENOMEM, "effective.ini: cannot write to memory");
        } else {
            stall_config_write(back, base_dir, f);
            fclose(f);
        }
    }
    /* The given keys must come back, as written; the others are comments
     * (defaults, or values set by a program rather than the INI). */
    if (rc == 0)
        ntext = cfg_drop_comments(text);
    if (rc == 0)
        nagain = cfg_drop_comments(again);
    /* given: 1 in a file, 2 with --set; both read back as 1. */
    bool same_given = true;
    for (size_t k = 0; k < sizeof cfg->given; k++)
        same_given &= (back->given[k] != 0) == (cfg->given[k] != 0);
    if (rc == 0 && (nagain != ntext || memcmp(text, again, ntext) != 0 || !same_given)) {
        size_t i = 0;
        while (i < ntext && i < nagain && text[i] == again[i])
            i++;
        size_t ls = i;
        while (ls > 0 && text[ls - 1] != '\n')
            ls--;
        size_t le = strcspn(text + ls, "\n");
        rc = stall_err_set(err, STALL_ECONFIG,
                           "%s: effective.ini would not reproduce this run (the line '%.*s' reads "
                           "back differently)",
                           stall_config_src(cfg), (int)(le > 200 ? 200 : le), text + ls);
    }
    if (memo && rc == 0) {
        for (size_t k = 0; k < sizeof cfg->given; k++)
            cfg_passed.given[k] = cfg->given[k] != 0;
        cfg_passed.n = nwritten;
    }
    free(text);
    free(again);
    free(back);
    return rc;
}

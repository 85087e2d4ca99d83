/*
 * config.c - the generic loader over inih: defaults, then the INI file, then
 * --set overrides; each value is checked against the key table (keys.c)
 * when it is set. inih reports the line of the first failing handler call,
 * so the handler keeps the first message and the loader prefixes it with
 * "file:line".
 */
#include "stall/config.h"

#include "stall/detect.h"
#include "stall/digest.h"

#include <errno.h>
#include <float.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "stall/io.h"
#include "stall/limits.h"
#include "config_int.h"

static char *cfg_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
        s[--n] = '\0';
    return s;
}

/* Index of value in "a|b|c", or -1. */
static int cfg_choice(const char *choices, const char *value)
{
    size_t len = strlen(value);
    int i = 0;
    for (const char *p = choices;; i++) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, value, n) == 0)
            return i;
        if (!bar)
            return -1;
        p = bar + 1;
    }
}

/* A boolean in any of the spellings INI files use (inih's own examples
 * among them), in any case: 1 for true, 0 for false, -1 for neither. */
static int cfg_bool(const char *v)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(v, yes[i]) == 0)
            return 1;
        if (strcasecmp(v, no[i]) == 0)
            return 0;
    }
    return -1;
}

#define CFG_BOOL_SPELLINGS "true/false, yes/no, on/off or 1/0, in any case"

static int cfg_parse_aligns(const char *value, stall_align_list *out, char *why, size_t whylen)
{
    char buf[128];
    if (strlen(value) >= sizeof buf) {
        snprintf(why, whylen, "list too long");
        return -1;
    }
    strcpy(buf, value);
    stall_align_list l = {0};
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        tok = cfg_trim(tok);
        stall_align a;
        if (stall_align_parse(tok, &a) != 0) {
            snprintf(why, whylen, "unknown policy '%s' (expected avg, min or none)", tok);
            return -1;
        }
        for (int i = 0; i < l.n; i++)
            if (l.v[i] == a) {
                snprintf(why, whylen, "policy '%s' listed twice", tok);
                return -1;
            }
        l.v[l.n++] = a;
    }
    if (l.n == 0) {
        snprintf(why, whylen, "empty list (expected avg, min and/or none)");
        return -1;
    }
    *out = l;
    return 0;
}

/* Whether v is decimal number text: an optional sign, digits with at most
 * one point (a digit beside it), then for a real number an optional
 * exponent (e or E, an optional sign, digits). strtod and strtoll alone
 * differ: strtod also takes hexadecimal (0x1p-3), inf and nan, which an INI
 * value has no need of, while strtoll in base 10 refuses 0x10. */
static bool cfg_decimal(const char *v, bool integer)
{
    const char *p = v + (*v == '+' || *v == '-');
    size_t digits = strspn(p, "0123456789");
    p += digits;
    if (integer)
        return digits > 0 && *p == '\0';
    if (*p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        digits += frac;
        p += 1 + frac;
    }
    if (digits == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        p += *p == '+' || *p == '-';
        size_t exp = strspn(p, "0123456789");
        if (exp == 0)
            return false;
        p += exp;
    }
    return *p == '\0';
}

int stall_config_number(const char *text, double *out, char *why, size_t n)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", text);
    char *v = cfg_trim(buf);
    if (strlen(text) >= sizeof buf || !cfg_decimal(v, false)) {
        const char *w = v + (*v == '+' || *v == '-');
        bool nonfinite = strcasecmp(w, "inf") == 0 || strcasecmp(w, "infinity") == 0 ||
                         strcasecmp(w, "nan") == 0;
        snprintf(why, n, "%s: '%.64s' (expected a decimal number such as 0.25 or 1e-3)",
                 nonfinite ? "not a finite number" : "not a number", v);
        return -1;
    }
    errno = 0;
    double x = strtod(v, NULL);
    if (errno == ERANGE && fabs(x) > 1) {
        snprintf(why, n, "%s is too large (beyond %.1e, the largest double)", v, DBL_MAX);
        return -2;
    }
    /* Below the smallest normal double a value keeps fewer digits than
     * written (1e-320 is read as 9.99989e-321) or becomes 0, so the number
     * used would not be the one given; no key means anything near there. */
    if (errno == ERANGE || (x != 0 && fabs(x) < DBL_MIN)) {
        snprintf(why, n,
                 "%s is too small (below %.1e, the smallest normal double; write 0 for zero)", v,
                 DBL_MIN);
        return -1;
    }
    *out = x;
    return 0;
}

/* Values that effective.ini could not give back: control characters (a
 * newline through --set) and an inline comment (white space then ';'). */
static bool cfg_value_unsafe(const char *v, char *why, size_t whylen)
{
    for (const char *p = v; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f) {
            snprintf(why, whylen, "control character 0x%02x in the value", (unsigned char)*p);
            return true;
        }
        if (*p == ';' && p > v && (p[-1] == ' ' || p[-1] == '\t')) {
            snprintf(why, whylen, "' ;' in the value (an INI comment starts there)");
            return true;
        }
    }
    return false;
}

/* [scenario] name names a folder under results/: one safe path component. */
static bool cfg_bad_name(const char *v)
{
    if (v[0] == '\0' || v[0] == '.')
        return true;
    for (const char *p = v; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '.' || *p == '_' || *p == '-' || *p == '+'))
            return true;
    return false;
}

/* Parses value for key k into cfg. base: folder for relative paths. */
static int cfg_store(stall_config *cfg, const cfg_key *k, const char *raw, const char *base,
                     char *why, size_t whylen)
{
    char buf[STALL_PATH_MAX];
    if (strlen(raw) >= sizeof buf) {
        snprintf(why, whylen, "value too long");
        return -1;
    }
    strcpy(buf, raw);
    char *v = cfg_trim(buf);
    void *dst = (char *)cfg + k->offset;
    if (cfg_value_unsafe(v, why, whylen))
        return -1;
    switch (k->type) {
    case CFG_STR:
        if (strlen(v) >= k->size) {
            snprintf(why, whylen, "longer than %zu characters", k->size - 1);
            return -1;
        }
        if (cfg_bad_name(v)) {
            snprintf(why, whylen,
                     "'%s' is not a safe folder name (1 or more of A-Z a-z 0-9 . _ + -, not "
                     "starting with '.')",
                     v);
            return -1;
        }
        strcpy(dst, v);
        return 0;
    case CFG_PATH: {
        char *p = (v[0] == '\0' || v[0] == '/' || !base || !base[0]) ? stall_xstrdup(v)
                                                                     : stall_path_join(base, v);
        int ok = strlen(p) < k->size;
        if (ok)
            strcpy(dst, p);
        else
            snprintf(why, whylen, "path longer than %zu characters", k->size - 1);
        free(p);
        return ok ? 0 : -1;
    }
    case CFG_INT: {
        if (!cfg_decimal(v, true)) {
            snprintf(why, whylen, "not an integer: '%s' (expected decimal digits such as 8)", v);
            return -1;
        }
        errno = 0;
        long long x = strtoll(v, NULL, 10);
        if (errno == ERANGE) {
            snprintf(why, whylen, "%s is out of range [%.0f, %.0f]", v, k->min, k->max);
            return -1;
        }
        if ((double)x < k->min || (double)x > k->max) {
            snprintf(why, whylen, "%lld is out of range [%.0f, %.0f]", x, k->min, k->max);
            return -1;
        }
        *(int64_t *)dst = x;
        return 0;
    }
    case CFG_DOUBLE: {
        double x;
        int bad = stall_config_number(v, &x, why, whylen);
        if (bad == -2) /* past a double: past the key's own limit too */
            snprintf(why, whylen, "%s is out of range [%g, %g]", v, k->min, k->max);
        if (bad != 0)
            return -1;
        if (x < k->min || x > k->max) {
            /* the value as written: %g rounds 1000001 to 1e+06, the bound */
            snprintf(why, whylen, "%s is out of range [%g, %g]", v, k->min, k->max);
            return -1;
        }
        *(double *)dst = x;
        return 0;
    }
    case CFG_BOOL: {
        int b = cfg_bool(v);
        if (b < 0) {
            snprintf(why, whylen, "not a boolean: '%s' (expected " CFG_BOOL_SPELLINGS ")", v);
            return -1;
        }
        *(bool *)dst = b == 1;
        return 0;
    }
    case CFG_ENUM: {
        int i = cfg_choice(k->choices, v);
        /* An enum with true and false among its values (auto|true|false)
         * takes them in every boolean spelling, as a boolean key does. */
        int b = i < 0 ? cfg_bool(v) : -1;
        if (b >= 0)
            i = cfg_choice(k->choices, b ? "true" : "false");
        if (i < 0) {
            snprintf(why, whylen, "unknown value '%s' (expected one of %s)", v, k->choices);
            return -1;
        }
        *(int *)dst = i;
        return 0;
    }
    case CFG_ALIGNS:
        return cfg_parse_aligns(v, dst, why, whylen);
    }
    snprintf(why, whylen, "internal: unknown key type");
    return -1;
}

void stall_config_defaults(stall_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    char why[256];
    for (size_t i = 0; i < cfg_nkeys; i++)
        if (cfg_store(cfg, &cfg_keys[i], cfg_keys[i].def, NULL, why, sizeof why) != 0) {
            fprintf(stderr, "stallsim: bad default for [%s] %s: %s\n", cfg_keys[i].section,
                    cfg_keys[i].key, why);
            abort();
        }
}

int stall_config_apply(stall_config *cfg, const char *section, const char *key, const char *value,
                       const char *where, stall_err *err)
{
    size_t idx;
    const cfg_key *k = cfg_find(section, key, &idx);
    if (!k) {
        char hint[160];
        cfg_suggest(section, key, hint, sizeof hint);
        if (section[0] == '\0') /* a key line above the file's first [section] */
            return stall_err_set(err, STALL_ECONFIG, "%s: key %s comes before any [section] line%s",
                                 where, key, hint[0] ? hint : " (put it under its section)");
        if (!cfg_section_known(section))
            return stall_err_set(err, STALL_ECONFIG, "%s: unknown section [%s] (key %s)%s", where,
                                 section, key, hint);
        return stall_err_set(err, STALL_ECONFIG, "%s: unknown key [%s] %s%s", where, section, key,
                             hint);
    }
    char why[384];
    if (cfg_store(cfg, k, value, cfg->ini_dir, why, sizeof why) != 0)
        return stall_err_set(err, STALL_ECONFIG, "%s: [%s] %s: %s", where, section, key, why);
    cfg->given[idx] = 1;
    return 0;
}

/* inih reads lines into a buffer of its compile-time INI_MAX_LINE and would
 * parse the rest of a longer line as a line of its own; this reader stops
 * the parse at such a line instead (as if at end of file) and remembers it. */
typedef struct cfg_reader {
    FILE *f;
    int line, max;
    bool too_long;
} cfg_reader;

typedef struct cfg_load_ctx {
    stall_config *cfg;
    const cfg_reader *rd;
    int key_line[sizeof(((stall_config *)0)->given)]; /* where each key was set; 0: not */
    stall_err first;                                  /* the first failure; code 0 while none */
} cfg_load_ctx;

static int cfg_ini_handler(void *user, const char *section, const char *name, const char *value)
{
    cfg_load_ctx *ctx = user;
    stall_err e = {0};
    size_t idx;
    if (strcmp(section, "sweep") == 0 || strcmp(section, "plan") == 0) {
        /* Not scenario keys: kept as text for stallsim sweep and plan. A
         * key given twice in the file is refused as any other is (the last
         * one won); [sweep] zip may be given once per group. */
        for (int i = 0; i < ctx->cfg->nextra; i++) {
            const struct stall_config_extra *x = &ctx->cfg->extra[i];
            if (!x->command_line && strcmp(x->section, section) == 0 && strcmp(x->key, name) == 0 &&
                strcmp(name, "zip") != 0) {
                stall_err_set(&e, STALL_ECONFIG, ": [%s] %s: given twice (first on line %d)",
                              section, name, x->line);
                if (ctx->first.code == 0)
                    ctx->first = e;
                return 0;
            }
        }
        if (stall_config_extra_add(ctx->cfg, section, name, value, false, "", &e) != 0) {
            if (ctx->first.code == 0)
                ctx->first = e;
            return 0;
        }
        ctx->cfg->extra[ctx->cfg->nextra - 1].line = ctx->rd->line;
        return 1;
    }
    if (cfg_find(section, name, &idx) && ctx->key_line[idx]) {
        stall_err_set(&e, STALL_ECONFIG, ": [%s] %s: given twice (first on line %d)", section, name,
                      ctx->key_line[idx]);
        if (ctx->first.code == 0)
            ctx->first = e;
        return 0;
    }
    if (stall_config_apply(ctx->cfg, section, name, value, "", &e) != 0) {
        if (ctx->first.code == 0)
            ctx->first = e;
        return 0;
    }
    if (cfg_find(section, name, &idx)) {
        ctx->key_line[idx] = ctx->rd->line;
        ctx->cfg->given_line[idx] = ctx->rd->line;
    }
    return 1;
}

static char *cfg_read_line(char *str, int num, void *stream)
{
    cfg_reader *rd = stream;
    if (rd->too_long || !fgets(str, num, rd->f))
        return NULL;
    rd->line++;
    size_t n = strlen(str);
    if ((int)n == num - 1 && str[n - 1] != '\n' && !feof(rd->f)) {
        rd->too_long = true;
        rd->max = num;
        return NULL;
    }
    return str;
}

/* What inih's line reader cannot be trusted with, checked on the raw bytes
 * before it parses: a NUL byte (ends the line for fgets, hiding the rest),
 * an indented line (inih continues the previous value with it), a section
 * given twice and one without a name (its keys would read as above any
 * section). */
static int cfg_prescan(FILE *f, const char *path, stall_err *err)
{
    enum { NSEC = 64 };
    char secs[NSEC][64];
    int sec_line[NSEC], nsec = 0;
    char head[80];
    int line = 1, col = 0, c;
    size_t nhead = 0;
    bool started = false, blank_prefix = false, open_sec = false;
    unsigned char bom[3];
    if (!(fread(bom, 1, 3, f) == 3 && bom[0] == 0xef && bom[1] == 0xbb && bom[2] == 0xbf))
        rewind(f); /* a UTF-8 byte order mark is skipped, as inih does */
    /* Unlocked: no other thread holds f (a file or memory its caller opened). */
    while ((c = getc_unlocked(f)) != EOF) {
        col++;
        if (c == '\0')
            return stall_err_set(err, STALL_ECONFIG, "%s:%d:%d: NUL byte", path, line, col);
        if (c == '\n' && open_sec)
            return stall_err_set(err, STALL_ECONFIG,
                                 "%s:%d:%d: section header not closed (missing ']')", path, line,
                                 col);
        if (c == '\n') {
            line++;
            col = 0;
            nhead = 0;
            started = blank_prefix = false;
            continue;
        }
        if (!started) {
            if (c == ' ' || c == '\t' || c == '\r') {
                blank_prefix |= c != '\r';
                continue;
            }
            started = true;
            open_sec = c == '[';
            if (blank_prefix && c != ';' && c != '#')
                return stall_err_set(err, STALL_ECONFIG,
                                     "%s:%d:%d: indented line (the INI reader would append it to "
                                     "the previous value); remove the leading blanks",
                                     path, line, col);
        }
        if (c == ']')
            open_sec = false;
        if (nhead >= sizeof head - 1)
            continue;
        head[nhead++] = (char)c;
        if (head[0] == '[' && c == ']') {
            head[nhead] = '\0';
            head[nhead - 1] = '\0';
            char *name = cfg_trim(head + 1);
            if (name[0] == '\0')
                return stall_err_set(err, STALL_ECONFIG,
                                     "%s:%d:1: a section header without a name ([]); name the "
                                     "section, e.g. [trace]",
                                     path, line);
            for (int i = 0; i < nsec; i++)
                if (strcmp(secs[i], name) == 0)
                    return stall_err_set(err, STALL_ECONFIG,
                                         "%s:%d:1: section [%s] given twice (first on line %d)",
                                         path, line, name, sec_line[i]);
            if (nsec < NSEC && strlen(name) < sizeof secs[0]) {
                strcpy(secs[nsec], name);
                sec_line[nsec++] = line;
            }
            nhead = sizeof head; /* nothing more to learn from this line */
        }
    }
    if (ferror(f))
        return stall_err_set(err, STALL_EIO, "%s: cannot read", path);
    if (open_sec)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s:%d:%d: section header not closed (missing ']')", path, line,
                             col + 1);
    rewind(f);
    return 0;
}

/* Parses INI text from f over cfg; name is the file name for messages. */
int cfg_load_stream(stall_config *cfg, FILE *f, const char *name, stall_err *err)
{
    int rc = cfg_prescan(f, name, err);
    if (rc)
        return rc;
    cfg_reader rd = {.f = f};
    cfg_load_ctx ctx = {.cfg = cfg, .rd = &rd};
    int line = ini_parse_stream(cfg_read_line, &rd, cfg_ini_handler, &ctx);
    if (rd.too_long && (line == 0 || line > rd.line))
        return stall_err_set(err, STALL_ECONFIG,
                             "%s:%d: line longer than %d characters (inih's limit; use a shorter "
                             "path, e.g. relative to the INI file)",
                             name, rd.line, rd.max - 2);
    if (line == 0)
        return 0;
    if (line < 0)
        return stall_err_set(err, STALL_EIO, "%s: cannot read", name);
    if (ctx.first.code == 0)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s:%d: syntax error (expected [section] or key = value)", name, line);
    /* The stored message starts with ": " (empty origin); prefix file:line. */
    return stall_err_set(err, STALL_ECONFIG, "%s:%d%s", name, line, ctx.first.msg);
}

int stall_config_load(stall_config *cfg, const char *ini_path, stall_err *err)
{
    if (strlen(ini_path) >= sizeof cfg->ini_path)
        return stall_err_set(err, STALL_EIO, "%s: path too long", ini_path);
    /* Refused as a trace is: the loader reads the file twice (a check of
     * its raw bytes, then inih), and its paths are relative to its folder. */
    int rc = stall_input_check(ini_path, err);
    if (rc)
        return rc;
    FILE *f = fopen(ini_path, "r");
    if (!f)
        return stall_err_set(err, STALL_EIO, "%s: cannot open: %s", ini_path, strerror(errno));
    strcpy(cfg->ini_path, ini_path);
    char *dir = stall_path_dir(ini_path);
    snprintf(cfg->ini_dir, sizeof cfg->ini_dir, "%s", dir);
    free(dir);
    rc = cfg_load_stream(cfg, f, ini_path, err);
    fclose(f);
    return rc;
}

/* Adds one override to cfg's folder tag (stall_config_set_tag). */
static void cfg_tag_add(stall_config *cfg, const char *assignment)
{
    char buf[64 + 65];
    snprintf(buf, sizeof buf, "%s", cfg->set_sha);
    size_t n = strlen(buf), len = strlen(assignment);
    char *chain = stall_xmalloc(n + len + 1);
    memcpy(chain, buf, n);
    memcpy(chain + n, assignment, len + 1);
    stall_sha256_hex(chain, n + len, cfg->set_sha);
    free(chain);
    size_t have = strlen(cfg->set_list);
    if (have + len + 2 <= sizeof cfg->set_list) {
        for (size_t i = 0; i < len; i++)
            cfg->set_list[have + i] = (unsigned char)assignment[i] < 0x20 ? '_' : assignment[i];
        cfg->set_list[have + len] = '\n';
        cfg->set_list[have + len + 1] = '\0';
    } else
        cfg->set_more++;
    for (size_t i = 0; i <= len; i++, cfg->set_len++) {
        char c = i == 0 ? '+' : assignment[i - 1];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  strchr("._=-+", c);
        if (cfg->set_len + 1 < sizeof cfg->set_tag) {
            cfg->set_tag[cfg->set_len] = ok && (c != '+' || i == 0) ? c : '_';
            cfg->set_tag[cfg->set_len + 1] = '\0';
        }
    }
}

void stall_config_set_tag(const stall_config *cfg, char *buf, size_t n)
{
    if (cfg->set_len < sizeof cfg->set_tag)
        snprintf(buf, n, "%s", cfg->set_tag);
    else
        snprintf(buf, n, "%.83s+%.12s", cfg->set_tag, cfg->set_sha);
}

int stall_config_set(stall_config *cfg, const char *assignment, stall_err *err)
{
    const char *eq = strchr(assignment, '=');
    const char *dot = strchr(assignment, '.');
    if (!eq || !dot || dot > eq || dot == assignment)
        return stall_err_set(err, STALL_ECONFIG, "--set %s: expected section.key=value",
                             assignment);
    char section[64], key[64], where[200];
    size_t ns = (size_t)(dot - assignment), nk = (size_t)(eq - dot - 1);
    if (ns >= sizeof section || nk >= sizeof key)
        return stall_err_set(err, STALL_ECONFIG, "--set %s: name too long", assignment);
    memcpy(section, assignment, ns);
    section[ns] = '\0';
    memcpy(key, dot + 1, nk);
    key[nk] = '\0';
    snprintf(where, sizeof where, "--set %s.%s", section, key);
    /* [plan] and [sweep] lines are kept for the command that reads them. */
    if (strcmp(section, "plan") == 0 || strcmp(section, "sweep") == 0) {
        int rc = stall_config_extra_add(cfg, section, key, eq + 1, true, where, err);
        if (rc == 0)
            cfg_tag_add(cfg, assignment);
        return rc;
    }
    /* Paths on the command line are relative to the current folder. */
    char saved[STALL_PATH_MAX];
    strcpy(saved, cfg->ini_dir);
    cfg->ini_dir[0] = '\0';
    int rc = stall_config_apply(cfg, section, key, eq + 1, where, err);
    strcpy(cfg->ini_dir, saved);
    size_t idx;
    if (rc == 0 && cfg_find(section, key, &idx))
        cfg->given[idx] = 2; /* named "--set" in messages */
    if (rc == 0)
        cfg_tag_add(cfg, assignment);
    return rc;
}

int stall_config_extra_add(stall_config *cfg, const char *section, const char *key,
                           const char *value, bool command_line, const char *where, stall_err *err)
{
    if (cfg->nextra >= STALL_EXTRA_MAX)
        return stall_err_set(err, STALL_ECONFIG,
                             "%s: [%s] %s: more than %d [sweep] and [plan] lines", where, section,
                             key, STALL_EXTRA_MAX);
    struct stall_config_extra *x = &cfg->extra[cfg->nextra];
    if (strlen(section) >= sizeof x->section || strlen(key) >= sizeof x->key ||
        strlen(value) >= sizeof x->value)
        return stall_err_set(err, STALL_ECONFIG, "%s: [%s] %s: name or value too long (limit %zu)",
                             where, section, key, sizeof x->value - 1);
    strcpy(x->section, section);
    strcpy(x->key, key);
    strcpy(x->value, value);
    x->command_line = command_line;
    x->line = 0;
    cfg->nextra++;
    return 0;
}

/* A scenario name from a trace's file name: its stem (without the first of
 * the trace suffixes below that it ends in), or its folder's name for a
 * file called trace.csv; characters other than letters, digits, '.', '-'
 * and '_' become '_'. */
void stall_config_name_from_path(const char *path, char *name, size_t n)
{
    static const char *const suffix[] = {".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json",
                                         ".pfw.gz",           ".pfw",           ".csv.gz",  ".csv"};
    /* a folder given as "ddp2_w2/" is named as "ddp2_w2" */
    char trimmed[STALL_PATH_MAX];
    size_t plen = strlen(path);
    if (plen > 1 && path[plen - 1] == '/' && plen < sizeof trimmed) {
        memcpy(trimmed, path, plen + 1);
        while (plen > 1 && trimmed[plen - 1] == '/')
            trimmed[--plen] = '\0';
        path = trimmed;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        size_t k = strlen(suffix[i]);
        if (len > k && strcmp(base + len - k, suffix[i]) == 0) {
            len -= k;
            break;
        }
    }
    const char *from = base;
    if (len == 5 && strncmp(base, "trace", 5) == 0 && base > path + 1) {
        const char *end = base - 1, *start = end;
        while (start > path && start[-1] != '/')
            start--;
        if (end > start && !(end - start == 1 && start[0] == '.') &&
            !(end - start == 2 && start[0] == '.' && start[1] == '.')) {
            from = start;
            len = (size_t)(end - start);
        }
    }
    if (len > 100)
        len = 100;
    size_t o = 0;
    for (size_t i = 0; i < len && o + 1 < n; i++) {
        char c = from[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_' || (c == '.' && o > 0);
        name[o++] = ok ? c : '_';
    }
    name[o] = '\0';
    if (o == 0)
        snprintf(name, n, "trace");
}

/* Where a trace's note turns from what was detected to what was assumed
 * (stall_config_note_for rewords the rest). */
#define CFG_NOTE_ASSUMED "; assumed: "

int stall_config_load_any(stall_config *cfg, const char *path, char *note, size_t n, stall_err *err)
{
    if (n)
        note[0] = '\0';
    /* A capture folder (trace.csv beside meta.json): its trace.csv; the run
     * is named after the folder. */
    char *csv = stall_xmalloc(STALL_DETECT_PATH_MAX);
    const char *folder = path;
    if (stall_trace_capture_folder(path, csv, STALL_DETECT_PATH_MAX))
        path = csv;
    stall_trace_detected *d = stall_xmalloc(sizeof *d);
    stall_trace_kind kind = stall_trace_detect(path, d, err);
    int rc = 0;
    if (kind == STALL_TRACE_UNKNOWN) {
        rc = err->code ? err->code : STALL_EPARSE;
    } else if (kind == STALL_TRACE_INI) {
        rc = stall_config_load(cfg, path, err);
    } else {
        /* Paths as given: relative to the current folder, as with --set. */
        cfg->ini_path[0] = cfg->ini_dir[0] = '\0';
        snprintf(cfg->trace_arg, sizeof cfg->trace_arg, "%s", folder);
        char name[STALL_NAME_MAX];
        stall_config_name_from_path(folder, name, sizeof name);
        const char *kv[5][2] = {{"name", name}};
        int nkv = 1;
        const char *kv_mode = "replay";
        if (kind == STALL_TRACE_TIDY || kind == STALL_TRACE_KINETO ||
            kind == STALL_TRACE_DFTRACER) {
            /* A tidy trace's own run is simulated closed-loop: replay and
             * seed read the notebook's format. */
            kv_mode = "model";
            kv[nkv][0] = "format", kv[nkv++][1] = kind == STALL_TRACE_TIDY     ? "tidy"
                                                  : kind == STALL_TRACE_KINETO ? "kineto"
                                                                               : "dftracer";
            kv[nkv][0] = "path", kv[nkv++][1] = path;
        } else {
            kv[nkv][0] = "format", kv[nkv++][1] = "dsanalyzer";
            kv[nkv][0] = "fetch", kv[nkv++][1] = d->fetch;
            kv[nkv][0] = "start", kv[nkv++][1] = d->start;
            kv[nkv][0] = "perf", kv[nkv++][1] = d->perf;
        }
        rc = stall_config_apply(cfg, "scenario", "mode", kv_mode, path, err);
        for (int i = 0; i < nkv && rc == 0; i++)
            rc = stall_config_apply(cfg, i == 0 ? "scenario" : "trace", kv[i][0], kv[i][1], path,
                                    err);
        const char *workers = "workers per GPU inferred from the fetch starts";
        const char *prefetch = "prefetch factor 2 (PyTorch's default)";
        if (kind == STALL_TRACE_TIDY && d->has_workers)
            workers = "workers per GPU from its workers column";
        if (kind == STALL_TRACE_TIDY && d->has_prefetch)
            prefetch = d->prefetch == 0 ? "prefetch factor 2 (PyTorch's default) for workers it "
                                          "is given (its prefetch column is 0: no workers)"
                                        : "prefetch factor from its prefetch column";
        if (kind == STALL_TRACE_KINETO || kind == STALL_TRACE_DFTRACER) {
            if (rc == 0 && n) /* the reader says what it found and assumed */
                snprintf(note, n, "%s: %s", path, d->what);
        } else if (rc == 0 && n)
            snprintf(note, n,
                     "%s: %s" CFG_NOTE_ASSUMED "%s, %s (an INI's [trace] workers and "
                     "prefetch_factor, or --set, say otherwise)",
                     path, d->what, workers, prefetch);
    }
    free(d);
    free(csv);
    return rc;
}

void stall_config_note_for(char *note, size_t n, stall_note_use use, int workers)
{
    char *tail = use == STALL_NOTE_LOADER ? NULL : strstr(note, CFG_NOTE_ASSUMED);
    if (!tail)
        return;
    size_t at = (size_t)(tail - note);
    if (use == STALL_NOTE_REPLAY)
        snprintf(note + at, n - at,
                 "; replayed as measured (the workers and prefetch factor of its DataLoader, "
                 "which the trace does not record, matter to validate and mode = model only)");
    else if (workers > 0)
        snprintf(note + at, n - at, "; workers per GPU: %d, from --workers", workers);
    else
        snprintf(note + at, n - at,
                 CFG_NOTE_ASSUMED "workers per GPU inferred from the fetch starts (--workers N "
                                  "says otherwise)");
}

int stall_config_given_how(const stall_config *cfg, const char *section, const char *key)
{
    size_t idx;
    return cfg_find(section, key, &idx) ? cfg->given[idx] : 0;
}

void stall_config_swept(stall_config *cfg, const char *section, const char *key, int line)
{
    size_t idx;
    if (cfg_find(section, key, &idx) && cfg->given[idx]) {
        cfg->given[idx] = 3;
        cfg->given_line[idx] = line;
    }
}

bool stall_config_given(const stall_config *cfg, const char *section, const char *key)
{
    size_t idx;
    return cfg_find(section, key, &idx) && cfg->given[idx];
}

/* Fuzz target: --set section.key=value overrides, applied one per line of
 * the input over the defaults. Oracle: as for fuzz_ini, what is accepted
 * round-trips through effective.ini. */
#include "fuzz_common.h"
#include "stall/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    char *save = NULL;
    for (char *a = strtok_r(text, "\n", &save); a; a = strtok_r(NULL, "\n", &save)) {
        int rc = stall_config_set(&cfg, a, &err);
        if (rc != 0 && (rc != STALL_ECONFIG || strchr(err.msg, '\n')))
            abort();
    }
    free(text);
    (void)stall_config_check(&cfg, &err);
    if (stall_config_roundtrip(&cfg, fz_scratch(), &err) != 0 && !strstr(err.msg, "longer than")) {
        fprintf(stderr, "oracle: %s\n", err.msg);
        abort();
    }
    return 0;
}

/* Fuzz target: the INI loader. Oracle: a configuration that loads writes an
 * effective.ini that loads back to the same given keys and values
 * (stall_config_roundtrip), unless its line passes inih's length limit,
 * which the round trip must then name. */
#include "fuzz_common.h"
#include "stall/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = fz_file(0, "in.ini", data, size);
    stall_config cfg;
    stall_config_defaults(&cfg);
    stall_err err = {0};
    int rc = stall_config_load(&cfg, p, &err);
    if (rc != 0) {
        if (rc != STALL_ECONFIG && rc != STALL_EIO)
            abort();
        if (!strstr(err.msg, p) || strchr(err.msg, '\n'))
            abort(); /* one line naming the file */
        return 0;
    }
    (void)stall_config_check(&cfg, &err);
    if (stall_config_roundtrip(&cfg, fz_scratch(), &err) != 0 && !strstr(err.msg, "longer than")) {
        fprintf(stderr, "oracle: %s\n", err.msg);
        abort();
    }
    return 0;
}

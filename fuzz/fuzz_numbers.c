/* Fuzz target: the number and timestamp parsers. Oracles: exact decimal
 * seconds agree with strtod to within rounding; pandas' float parser agrees
 * with strtod to a few ulps; a parsed timestamp formats back to a time in
 * range. */
#include <math.h>

#include "fuzz_common.h"
#include "stall/pdparse.h"
#include "stall/tidy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 256)
        return 0;
    char s[257];
    memcpy(s, data, size);
    s[size] = '\0';
    stall_time ns;
    if (stall_parse_seconds_ns(s, &ns) == 0) {
        double x = strtod(s, NULL);
        if (!(fabs((double)ns / 1e9 - x) <= 1e-9 + 1e-15 * fabs(x)))
            abort();
    }
    char *end = NULL;
    double v = stall_pd_strtod(s, &end);
    int digits = 0;
    for (const char *q = s; *q; q++)
        digits += *q >= '0' && *q <= '9';
    if (end && end != s && *end == '\0' && isfinite(v) && digits <= 17) {
        double w = strtod(s, NULL);
        /* pandas keeps at most 17 digits, leading zeros included (a quirk
         * kept on purpose, finding 1): compared only below that. */
        if (!(fabs(v - w) <= 4 * fabs(w) * 2.3e-16 + 1e-15)) {
            fprintf(stderr, "oracle: pandas %.17g, strtod %.17g\n", v, w);
            abort();
        }
        (void)stall_pd_s_to_ns_vec(v, &ns);
    }
    if (stall_parse_timestamp(s, &ns) == 0 && strlen(s) < 19)
        abort(); /* YYYY-MM-DD HH:MM:SS at the least */
    return 0;
}

/* stallsim's glue around Ryu (not part of Ryu; see README): Ryu's own
 * d2s.c, unchanged, plus ryu_shortest, which hands out the decimal that
 * d2s_buffered_n would print, before it is printed. Compiled instead of
 * d2s.c so that both share Ryu's static functions. */
#include "ryu/d2s.c"

#include "shortest.h"

void ryu_shortest(double f, uint64_t *digits, int32_t *exp10)
{
    const uint64_t bits = double_to_bits(f);
    const uint64_t ieeeMantissa = bits & ((1ull << DOUBLE_MANTISSA_BITS) - 1);
    const uint32_t ieeeExponent =
        (uint32_t)((bits >> DOUBLE_MANTISSA_BITS) & ((1u << DOUBLE_EXPONENT_BITS) - 1));
    floating_decimal_64 v;
    if (!d2d_small_int(ieeeMantissa, ieeeExponent, &v))
        v = d2d(ieeeMantissa, ieeeExponent);
    /* Small integers come with their trailing zeros; d2d's do not have any. */
    for (;;) {
        const uint64_t q = div10(v.mantissa);
        if ((uint32_t)v.mantissa - 10 * (uint32_t)q != 0)
            break;
        v.mantissa = q;
        ++v.exponent;
    }
    *digits = v.mantissa;
    *exp10 = v.exponent;
}

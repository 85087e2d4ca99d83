/* stallsim's glue around Ryu (not part of Ryu; see README): the shortest
 * round-trip decimal of a double as an integer and a power of ten. */
#ifndef STALL_RYU_SHORTEST_H
#define STALL_RYU_SHORTEST_H

#include <stdint.h>

/* For finite, nonzero |f|: |f| reads back from digits * 10^exp10, digits
 * has the fewest decimal digits that do so (the closest such, as
 * d2s_buffered_n prints) and no trailing zero. */
void ryu_shortest(double f, uint64_t *digits, int32_t *exp10);

#endif

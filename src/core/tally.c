/*
 * tally.c — the stripes' owners and sums (tally.h).
 */
#include "core/tally.h"

_Thread_local unsigned amq__tally_mine;

static unsigned stripes_given;

unsigned amq__tally_take_stripe(void) {
    unsigned next = __atomic_fetch_add(&stripes_given, 1, __ATOMIC_RELAXED);
    amq__tally_mine = next % AMQ__TALLY_STRIPES + 1;
    return amq__tally_mine;
}

uint64_t amq__tally_sum(const amq__tally *t, unsigned c) {
    uint64_t sum = 0;
    for (unsigned s = 0; s < AMQ__TALLY_STRIPES; s++)
        sum += __atomic_load_n(&t->s[s].n[c], __ATOMIC_RELAXED);
    return sum;
}

void amq__tally_clear(amq__tally *t, unsigned c) {
    for (unsigned s = 0; s < AMQ__TALLY_STRIPES; s++)
        __atomic_store_n(&t->s[s].n[c], 0, __ATOMIC_RELAXED);
}

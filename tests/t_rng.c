/* Suite "rng". */
#include "test.h"

static const t_case rng_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(rng, rng_cases)

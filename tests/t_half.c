/* Suite "half". */
#include "test.h"

static const t_case half_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(half, half_cases)

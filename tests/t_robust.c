/* Suite "robust". */
#include "test.h"

static const t_case robust_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(robust, robust_cases)

/* Suite "kernels". */
#include "test.h"

static const t_case kernels_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(kernels, kernels_cases)

/* Suite "sampling". */
#include "test.h"

static const t_case sampling_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(sampling, sampling_cases)

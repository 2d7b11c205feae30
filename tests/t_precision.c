/* Suite "precision". */
#include "test.h"

static const t_case precision_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(precision, precision_cases)

/* Suite "core". */
#include "test.h"

static const t_case core_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(core, core_cases)

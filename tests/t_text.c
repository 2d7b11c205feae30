/* Suite "text". */
#include "test.h"

static const t_case text_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(text, text_cases)

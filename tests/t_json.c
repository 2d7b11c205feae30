/* Suite "json". */
#include "test.h"

static const t_case json_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(json, json_cases)

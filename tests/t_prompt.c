/* Suite "prompt". */
#include "test.h"

static const t_case prompt_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(prompt, prompt_cases)

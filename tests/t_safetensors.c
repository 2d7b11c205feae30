/* Suite "safetensors". */
#include "test.h"

static const t_case safetensors_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(safetensors, safetensors_cases)

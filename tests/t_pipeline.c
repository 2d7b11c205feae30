/* Suite "pipeline". */
#include "test.h"

static const t_case pipeline_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(pipeline, pipeline_cases)

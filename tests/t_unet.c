/* Suite "unet". */
#include "test.h"

static const t_case unet_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(unet, unet_cases)

/* Suite "vae". */
#include "test.h"

static const t_case vae_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(vae, vae_cases)

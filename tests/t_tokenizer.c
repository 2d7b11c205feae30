/* Suite "tokenizer". */
#include "test.h"

static const t_case tokenizer_cases[] = {
    { 0, 0 }
};
SDX_TEST_SUITE(tokenizer, tokenizer_cases)

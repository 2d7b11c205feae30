/* Fuzzes vocabulary loading from memory (sdx_tokenizer_load_memory): a
 * merge list, plain or gzip-compressed, from an untrusted file. A loaded
 * vocabulary must tokenize text to ids inside its own range. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const texts[] = { "a photo of a cute cat", "\xc3\xa9t\xc3\xa9 \xe7\x8c\xab <|endoftext|>", "" };
    sdx_ctx *ctx = fz_ctx();
    sdx_tokenizer *tok = NULL;
    int rc;
    if (!ctx) return 0;
    rc = sdx_tokenizer_load_memory(ctx, data, size, &tok);
    fz_require_message(ctx, rc, "sdx_tokenizer_load_memory");
    FZ_ASSERT((rc == SDX_OK) == (tok != NULL), "result %d but handle %p", rc, (void *)tok);
    if (tok) {
        int n_vocab;
        int32_t bos, eos;
        sdx_tokenizer_info(tok, &n_vocab, &bos, &eos);
        FZ_ASSERT(n_vocab > 0 && bos >= 0 && bos < n_vocab && eos >= 0 && eos < n_vocab, "vocabulary %d, bos %d, eos %d", n_vocab, bos, eos);
        for (int k = 0; k < 3; k++) {
            int32_t *ids;
            int n;
            rc = sdx_tokenize(ctx, tok, texts[k], &ids, &n);
            FZ_ASSERT(rc == SDX_OK, "tokenize with a loaded vocabulary: %s", sdx_last_error(ctx));
            for (int i = 0; i < n; i++) FZ_ASSERT(ids[i] >= 0 && ids[i] < n_vocab, "id %d outside [0, %d)", ids[i], n_vocab);
            sdx_tokens_free(ctx, ids);
        }
        sdx_tokenizer_free(tok);
    }
    sdx_destroy(ctx);
    return 0;
}

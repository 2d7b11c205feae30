/* Fuzzes the CLIP tokenizer (text clean-up, pre-tokenizer, BPE) with the
 * real vocabulary on arbitrary bytes, including invalid UTF-8. Every id
 * must be in the vocabulary and the padded form must be BOS, the first 75
 * ids, EOS, padding. */
#define FZ_NEED_VOCAB
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const sdx_tokenizer *tok = fz_vocab();
    sdx_ctx *ctx;
    char *text;
    int32_t *ids = NULL, padded[SDX_TEXT_CONTEXT];
    int n = 0, n_vocab, rc;
    int32_t bos, eos;
    if (!tok) return 0;
    ctx = fz_ctx();
    if (!ctx) return 0;
    text = fz_cstr(data, size);
    sdx_tokenizer_info(tok, &n_vocab, &bos, &eos);
    rc = sdx_tokenize(ctx, tok, text, &ids, &n);
    fz_require_message(ctx, rc, "sdx_tokenize");
    FZ_ASSERT(rc == SDX_OK, "tokenize failed on %zu bytes: %s", size, sdx_last_error(ctx));
    FZ_ASSERT(ids != NULL && n >= 0, "no ids array");
    for (int i = 0; i < n; i++)
        FZ_ASSERT(ids[i] >= 0 && ids[i] < n_vocab, "id %d = %d outside the vocabulary", i, ids[i]);  /* "<|endoftext|>" in the text is the special id, as in CLIP */
    rc = sdx_tokenize_padded(ctx, tok, text, 0, padded);
    FZ_ASSERT(rc == SDX_OK, "tokenize_padded failed: %s", sdx_last_error(ctx));
    {
        int keep = n < SDX_TEXT_CONTEXT - 2 ? n : SDX_TEXT_CONTEXT - 2;
        FZ_ASSERT(padded[0] == bos && padded[keep + 1] == eos, "BOS/EOS misplaced");
        FZ_ASSERT(!memcmp(padded + 1, ids, (size_t)keep * sizeof(int32_t)), "padded ids differ from the raw ids");
        for (int i = keep + 2; i < SDX_TEXT_CONTEXT; i++) FZ_ASSERT(padded[i] == 0, "padding at %d", i);
    }
    sdx_tokens_free(ctx, ids);
    free(text);
    sdx_destroy(ctx);
    return 0;
}

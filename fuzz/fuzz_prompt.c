/* Fuzzes the A1111 prompt-weighting parser and the 75-token chunker
 * (src/prompt.c). Weights must stay finite and within the documented
 * clamp; chunks must be BOS, 75 ids, EOS with finite multipliers. The
 * parser runs even without the vocabulary; chunking needs it. */
#define FZ_NEED_VOCAB
#include "fuzz.h"

static void fz_check_parse(sdx_ctx *ctx, const char *text) {
    sdx__parsed p;
    int rc = sdx__prompt_parse(ctx, text, &p);
    fz_require_message(ctx, rc, "sdx__prompt_parse");
    FZ_ASSERT(rc == SDX_OK, "parse failed: %s", sdx_last_error(ctx));
    FZ_ASSERT(p.n >= 1, "no fragments");
    for (int i = 0; i < p.n; i++) {
        double w = p.frag[i].weight;
        FZ_ASSERT(isfinite(w) && fabs(w) <= SDX__PROMPT_WEIGHT_MAX, "fragment %d weight %g", i, w);
        FZ_ASSERT(strlen(p.frag[i].text) <= p.frag[i].len, "fragment %d text longer than its length", i);
        fz_touch(p.frag[i].text, p.frag[i].len + 1);
    }
    sdx__parsed_free(ctx, &p);
}

static void fz_check_chunks(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *text) {
    sdx__chunks c;
    int n_vocab, rc;
    int32_t bos, eos;
    sdx_tokenizer_info(tok, &n_vocab, &bos, &eos);
    rc = sdx__prompt_chunks(ctx, tok, text, &c);
    fz_require_message(ctx, rc, "sdx__prompt_chunks");
    FZ_ASSERT(rc == SDX_OK, "chunking failed: %s", sdx_last_error(ctx));
    FZ_ASSERT(c.n >= 1 && c.tokens && c.mult, "no chunks");
    for (int k = 0; k < c.n; k++) {
        const int32_t *ids = c.tokens + 77 * (size_t)k;
        const float *m = c.mult + 77 * (size_t)k;
        FZ_ASSERT(ids[0] == bos && ids[76] == eos, "chunk %d lacks BOS/EOS", k);
        for (int i = 0; i < 77; i++) {
            FZ_ASSERT(ids[i] >= 0 && ids[i] < n_vocab, "chunk %d id %d = %d", k, i, ids[i]);
            FZ_ASSERT(isfinite(m[i]) && fabsf(m[i]) <= (float)SDX__PROMPT_WEIGHT_MAX, "chunk %d multiplier %d = %g", k, i, m[i]);
        }
    }
    sdx__chunks_free(ctx, &c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const sdx_tokenizer *tok = fz_vocab();
    sdx_ctx *ctx = fz_ctx();
    char *text;
    if (!ctx) return 0;
    text = fz_cstr(data, size);
    fz_check_parse(ctx, text);
    if (tok) fz_check_chunks(ctx, tok, text);
    free(text);
    sdx_destroy(ctx);
    return 0;
}

/* A program with the CLIP vocabulary compiled in, built and run by the
 * "sources" suite (tests/t_sources.c):
 *
 *   tools/sdx-vocab2c VOCAB > DIR/clip_vocab.h
 *   cc -I. -DSDX_EMBED_VOCAB='"DIR/clip_vocab.h"' tests/sources_embed.c -lm -lpthread
 *   ./a.out VOCAB CHECKPOINT
 *
 * Checks that the compiled-in vocabulary gives the file's tokens for a
 * set of prompts, and that a model whose description names no vocabulary
 * (SDX_VOCAB unset) loads with it and generates what it generates with
 * the file. Prints "same tokens, same image" and exits 0, or says what
 * differs and exits 1. */
#define SDX_IMPLEMENTATION
#include "sdx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const prompts[] = {
    "a photograph of an astronaut riding a horse",
    "",
    "  Ünïcödé   façade, naïve café!!  ",
    "emoji \xF0\x9F\x98\x80 and CJK \xE4\xBD\xA0\xE5\xA5\xBD, tabs\tand\nnewlines",
    "&amp; &lt;tags&gt; don't won't it's 1234567890 3.14 x_y-z",
    "(masterpiece:1.2), [blurry], <lora:x:1>, BREAK, a very long prompt that goes on and on and on and on and on and on "
    "and on and on and on and on and on and on and on and on and on and on and on and on and on and on and on and on end",
};

static int same_tokens(sdx_ctx *ctx, const sdx_tokenizer *a, const sdx_tokenizer *b, const char *text) {
    int32_t *x = NULL, *y = NULL;
    int nx = 0, ny = 0, same;
    same = sdx_tokenize(ctx, a, text, &x, &nx) == SDX_OK && sdx_tokenize(ctx, b, text, &y, &ny) == SDX_OK && nx == ny &&
           (nx == 0 || !memcmp(x, y, sizeof *x * (size_t)nx));
    sdx_tokens_free(ctx, x);
    sdx_tokens_free(ctx, y);
    return same;
}

/* One small image; NULL data when it fails. */
static sdx_image generate(sdx_ctx *ctx, const char *ckpt, const char *vocab) {
    sdx_model_desc md;
    sdx_model *m = NULL;
    sdx_gen_params gp;
    sdx_gen_result res;
    sdx_image img = { 0, 0, 3, NULL };
    memset(&md, 0, sizeof md);
    md.checkpoint = ckpt;
    md.vocab = vocab;
    memset(&gp, 0, sizeof gp);
    gp.prompt = prompts[0];
    gp.width = gp.height = 64;
    gp.steps = 1;
    gp.seed = 3;
    if (sdx_model_load(ctx, &md, &m) != SDX_OK) {
        fprintf(stderr, "load (vocabulary %s): %s\n", vocab ? vocab : "compiled in", sdx_last_error(ctx));
        return img;
    }
    if (sdx_generate(m, &gp, &res) == SDX_OK) {
        size_t n = (size_t)res.images[0].width * (size_t)res.images[0].height * 3;
        img = res.images[0];
        img.data = (uint8_t *)malloc(n);
        if (img.data) memcpy(img.data, res.images[0].data, n);
        sdx_gen_result_free(ctx, &res);
    } else {
        fprintf(stderr, "generate: %s\n", sdx_last_error(ctx));
    }
    sdx_model_free(m);
    return img;
}

int main(int argc, char **argv) {
    sdx_desc desc;
    sdx_ctx *ctx;
    sdx_tokenizer *embedded = NULL, *file = NULL;
    sdx_image a, b;
    int bad = 0;
    if (argc != 3) {
        fprintf(stderr, "usage: %s VOCAB CHECKPOINT\n", argv[0]);
        return 2;
    }
    memset(&desc, 0, sizeof desc);
    desc.n_threads = 2;
    if (!(ctx = sdx_create(&desc))) return 1;
    if (sdx_tokenizer_load_embedded(ctx, &embedded) != SDX_OK || sdx_tokenizer_load(ctx, argv[1], &file) != SDX_OK) {
        fprintf(stderr, "%s\n", sdx_last_error(ctx));
        return 1;
    }
    for (size_t i = 0; i < sizeof prompts / sizeof prompts[0]; i++)
        if (!same_tokens(ctx, embedded, file, prompts[i])) {
            fprintf(stderr, "prompt %zu: the tokens differ\n", i);
            bad = 1;
        }
    sdx_tokenizer_free(embedded);
    sdx_tokenizer_free(file);
#ifdef _WIN32
    _putenv("SDX_VOCAB=");
#else
    unsetenv("SDX_VOCAB");
#endif
    a = generate(ctx, argv[2], NULL);
    b = generate(ctx, argv[2], argv[1]);
    if (!a.data || !b.data || a.width != b.width || a.height != b.height ||
        memcmp(a.data, b.data, (size_t)a.width * (size_t)a.height * 3)) {
        fprintf(stderr, "the images differ or were not made\n");
        bad = 1;
    }
    free(a.data);
    free(b.data);
    sdx_destroy(ctx);
    if (!bad) printf("same tokens, same image\n");
    return bad;
}

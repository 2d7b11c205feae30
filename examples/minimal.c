/* minimal.c - the smallest program that embeds sdx.h: one prompt, one PNG.
 *   cc -O2 -I. examples/minimal.c -o minimal -lstb -lm -lpthread
 *   ./minimal model.safetensors "a red fox in the snow" fox.png [SIZE]
 * SIZE: width and height in pixels (default: the model's, 512 for SD 1.x) */
#define SDX_IMPLEMENTATION
#include "sdx.h"
#include <stdio.h>
#include <stdlib.h>
#include <stb/stb_image_write.h>

int main(int argc, char **argv) {
    sdx_desc desc = { 0 };             /* all cores, default allocator */
    sdx_model_desc md = { 0 };
    sdx_gen_params gp = { 0 };         /* zero = defaults: 20 steps, cfg 7, ... */
    sdx_gen_result res;
    sdx_model *model;
    sdx_ctx *ctx;
    int ok = 0;

    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s MODEL.safetensors PROMPT OUT.png [SIZE]\n", argv[0]);
        return 2;
    }
    ctx = sdx_create(&desc);
    if (!ctx) return 1;
    md.checkpoint = argv[1];           /* vocabulary: next to it or $SDX_VOCAB */
    if (sdx_model_load(ctx, &md, &model) != SDX_OK) {
        fprintf(stderr, "%s\n", sdx_last_error(ctx));
        sdx_destroy(ctx);
        return 1;
    }
    gp.prompt = argv[2];
    gp.seed = 42;
    if (argc == 5) gp.width = gp.height = atoi(argv[4]);   /* a multiple of 8 */
    if (sdx_generate(model, &gp, &res) == SDX_OK) {
        sdx_image *img = &res.images[0];
        ok = stbi_write_png(argv[3], img->width, img->height, 3, img->data, img->width * 3);
        sdx_gen_result_free(ctx, &res);
    } else {
        fprintf(stderr, "%s\n", sdx_last_error(ctx));
    }
    sdx_model_free(model);
    sdx_destroy(ctx);
    return ok ? 0 : 1;
}

/* texture.c - a tileable texture for a game: seamless tiling (the image's
 * right edge continues into its left, the bottom into the top), written
 * with a 2x2 repeat beside it so the seams, or their absence, show.
 *   cc -O2 -I. examples/texture.c -o texture -lstb -lm -lpthread
 *   ./texture model.safetensors "mossy cobblestones, top-down" stones.png [size] [steps] */
#define SDX_IMPLEMENTATION
#include "sdx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stb/stb_image_write.h>

/* out.png and out-2x2.png (the texture repeated twice each way) */
static int write_texture(const char *path, const sdx_image *img) {
    size_t len = strlen(path), row = (size_t)img->width * 3;
    char *repeat_path = (char *)malloc(len + 8);
    uint8_t *repeat = (uint8_t *)malloc(row * 2 * (size_t)img->height * 2);
    int ok = 0;
    if (repeat_path && repeat) {
        const char *dot = NULL;
        size_t stem;
        for (const char *p = path; *p; p++)       /* a dot in a folder's name is no extension */
            if (*p == '.') dot = p;
            else if (*p == '/' || *p == '\\') dot = NULL;
        stem = dot ? (size_t)(dot - path) : len;
        memcpy(repeat_path, path, stem);
        strcpy(repeat_path + stem, "-2x2.png");
        for (int y = 0; y < 2 * img->height; y++)
            for (int copy = 0; copy < 2; copy++)
                memcpy(repeat + (size_t)y * 2 * row + (size_t)copy * row, img->data + (size_t)(y % img->height) * row, row);
        ok = stbi_write_png(path, img->width, img->height, 3, img->data, (int)row) &&
             stbi_write_png(repeat_path, 2 * img->width, 2 * img->height, 3, repeat, (int)(2 * row));
        if (ok) printf("wrote %s and %s\n", path, repeat_path);
    }
    free(repeat_path);
    free(repeat);
    return ok;
}

int main(int argc, char **argv) {
    sdx_desc desc = { 0 };
    sdx_model_desc md = { 0 };
    sdx_gen_params gp = { 0 };
    sdx_gen_result res;
    sdx_model *model;
    sdx_ctx *ctx;
    int ok = 0;

    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: %s MODEL.safetensors PROMPT OUT.png [SIZE] [STEPS]\n", argv[0]);
        return 2;
    }
    if (!(ctx = sdx_create(&desc))) return 1;
    md.checkpoint = argv[1];
    if (sdx_model_load(ctx, &md, &model) != SDX_OK) {
        fprintf(stderr, "%s\n", sdx_last_error(ctx));
        sdx_destroy(ctx);
        return 1;
    }
    gp.prompt = argv[2];
    gp.negative_prompt = "seam, border, frame, text";
    gp.width = gp.height = argc > 4 ? atoi(argv[4]) : 0;    /* 0: the model's size */
    gp.steps = argc > 5 ? atoi(argv[5]) : 0;
    gp.seed = 7;
    gp.seamless = 1;                   /* circular padding in the UNet and VAE */
    if (sdx_generate(model, &gp, &res) == SDX_OK) {
        ok = write_texture(argv[3], &res.images[0]);
        sdx_gen_result_free(ctx, &res);
    } else {
        fprintf(stderr, "%s\n", sdx_last_error(ctx));
    }
    sdx_model_free(model);
    sdx_destroy(ctx);
    return ok ? 0 : 1;
}

/* stepper.c - a generation spread over the frames of a game loop with the
 * staged API: the prompt is encoded once, each "frame" runs one UNet
 * evaluation and draws a progress bar, and every few frames the current
 * prediction of the finished image is decoded into a preview PNG.
 *   cc -O2 -I. examples/stepper.c -o stepper -lstb -lm -lpthread
 *   ./stepper model.safetensors "a castle on a hill" out.png [steps] [preview-every] */
#define SDX_IMPLEMENTATION
#include "sdx.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stb/stb_image_write.h>

static int save(sdx_ctx *ctx, sdx_model *model, const sdx_tensor *latent, const sdx_gen_params *gp, const char *path) {
    sdx_image img;
    int ok;
    if (sdx_decode_latent(model, latent, gp, &img) != SDX_OK) return 0;
    ok = stbi_write_png(path, img.width, img.height, 3, img.data, img.width * 3);
    sdx_image_free(ctx, &img);
    return ok;
}

static void draw_frame(int frame, int step, int steps) {
    char bar[41];
    int filled = steps ? 40 * step / steps : 0;
    memset(bar, '#', (size_t)filled);
    memset(bar + filled, '.', (size_t)(40 - filled));
    bar[40] = 0;
    printf("frame %3d  [%s] step %d/%d\n", frame, bar, step, steps);
    fflush(stdout);
}

int main(int argc, char **argv) {
    sdx_desc desc = { 0 };
    sdx_model_desc md = { 0 };
    sdx_gen_params gp = { 0 };
    sdx_model *model = NULL;
    sdx_cond *cond = NULL;
    sdx_sampling *s = NULL;
    sdx_ctx *ctx;
    int every, frame = 0, rc;
    char preview[1024];

    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: %s MODEL.safetensors PROMPT OUT.png [STEPS] [PREVIEW-EVERY]\n", argv[0]);
        return 2;
    }
    every = argc > 5 ? atoi(argv[5]) : 5;
    if (!(ctx = sdx_create(&desc))) return 1;
    md.checkpoint = argv[1];
    gp.prompt = argv[2];
    gp.steps = argc > 4 ? atoi(argv[4]) : 20;
    gp.sampler = "dpmpp_2m";
    gp.scheduler = "karras";
    gp.seed = 1234;
    rc = sdx_model_load(ctx, &md, &model);
    if (rc == SDX_OK) rc = sdx_encode_prompt(model, &gp, &cond);            /* once, before the loop */
    if (rc == SDX_OK) rc = sdx_sampling_begin(model, &gp, cond, 0, &s);
    while (rc == SDX_OK && !sdx_sampling_done(s)) {                          /* the game loop */
        int total, step;
        rc = sdx_sampling_step(s);                                           /* one UNet call this frame */
        step = sdx_sampling_steps(s, &total);
        draw_frame(++frame, step, total);
        if (rc == SDX_OK && every > 0 && frame % every == 0 && !sdx_sampling_done(s)) {
            snprintf(preview, sizeof preview, "%s.preview-%03d.png", argv[3], frame);
            if (save(ctx, model, sdx_sampling_denoised(s), &gp, preview)) printf("           preview %s\n", preview);
        }
    }
    if (rc == SDX_OK && !save(ctx, model, sdx_sampling_latent(s), &gp, argv[3])) rc = SDX_ERR_IO;
    if (rc != SDX_OK) fprintf(stderr, "%s\n", rc == SDX_ERR_IO ? "cannot write the image" : sdx_last_error(ctx));
    else printf("wrote %s\n", argv[3]);
    sdx_sampling_free(s);
    sdx_cond_free(cond);
    sdx_model_free(model);
    sdx_destroy(ctx);
    return rc == SDX_OK ? 0 : 1;
}

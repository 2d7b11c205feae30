/* Suite "hires": A1111's hires fix through sdx_generate on the tiny sd1
 * model, 64x64 -> 128x128. How the references are obtained: from pieces
 * already verified, composed by hand through the public API: txt2img at
 * 64 (pipeline suite), the same seed; the latent upscaled here by plain
 * loops (nearest: each pixel twice; bilinear at x2: torch's taps 0.25 /
 * 0.75, clamped at the edges) or, for a model, sdx_decode_latent ->
 * sdx_upscale (upscale suite, BasicSR-exact) -> sdx_encode_image; then
 * img2img at 128 from that init latent with the hires strength and steps
 * (img2img suite, exact to ComfyUI). Hires fix must equal it bit for bit,
 * and examples/sdx's --hires-* flags must give sdx_generate's result. */
#include "test.h"

static void hr_params(sdx_gen_params *p) {
    memset(p, 0, sizeof *p);
    p->prompt = "a castle on a hill";
    p->negative_prompt = "blurry";
    p->width = 64;
    p->height = 64;
    p->steps = 3;
    p->cfg_scale = 5.0f;
    p->sampler = "euler";
    p->seed = 11;
    p->rng = SDX_RNG_CPU;
}

/* torch's bilinear x2 tap (align_corners False) for output i of n: */
static void hr_tap2(int n_in, int i, int *a, int *b, float *wb) {
    float src = ((float)i + 0.5f) * 0.5f - 0.5f;
    if (src < 0) src = 0;
    *a = (int)src;
    *b = *a + 1 < n_in ? *a + 1 : *a;
    *wb = src - (float)*a;
}

/* x2 of the [1, 4, h, w] latent by hand: nearest or bilinear. */
static int hr_up2(sdx_ctx *ctx, const sdx_tensor *in, int bilinear, sdx_tensor *out) {
    int64_t c = in->shape[1], h = in->shape[2], w = in->shape[3], shape[4] = { 1, c, 2 * h, 2 * w };
    const float *s = (const float *)in->data;
    if (sdx_tensor_alloc(ctx, out, SDX_F32, 4, shape) != SDX_OK) return 0;
    for (int64_t k = 0; k < c; k++)
        for (int y = 0; y < 2 * h; y++)
            for (int x = 0; x < 2 * w; x++) {
                const float *p = s + k * h * w;
                float v;
                if (!bilinear) v = p[(y / 2) * w + x / 2];
                else {
                    int y0, y1, x0, x1;
                    float wy, wx;
                    hr_tap2((int)h, y, &y0, &y1, &wy);
                    hr_tap2((int)w, x, &x0, &x1, &wx);
                    float top = p[y0 * w + x0] * (1 - wx) + p[y0 * w + x1] * wx;
                    float bot = p[y1 * w + x0] * (1 - wx) + p[y1 * w + x1] * wx;
                    v = top * (1 - wy) + bot * wy;
                }
                ((float *)out->data)[(k * 2 * h + y) * 2 * w + x] = v;
            }
    return 1;
}

/* The second pass by hand: img2img at 128 from `init`. */
static int hr_second(sdx_model *m, const sdx_gen_params *p, const sdx_tensor *init, sdx_gen_result *r) {
    sdx_gen_params q = *p;
    q.hires_scale = 0;
    q.hires_width = q.hires_height = 0;
    q.hires_upscaler = NULL;
    q.width = q.height = 128;
    q.steps = p->hires_steps;
    q.strength = p->hires_denoise;
    q.init_latent = init;
    return sdx_generate(m, &q, r) == SDX_OK;
}

static int hires_latent_equals_txt2img_upscale_img2img_by_hand(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    static const char *ups[2] = { "latent-nearest", "latent" };
    for (int u = 0; u < 2; u++) {
        sdx_gen_params p;
        sdx_gen_result got, small, ref;
        sdx_tensor init;
        char text[2048];
        hr_params(&p);
        T_CHECK(sdx_generate(m, &p, &small) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(hr_up2(ctx, &small.latents[0], u, &init), "alloc");
        p.hires_scale = 2;
        p.hires_steps = 2;
        p.hires_denoise = 0.6f;
        p.hires_upscaler = ups[u];
        T_CHECK(hr_second(m, &p, &init, &ref), "%s", sdx_last_error(ctx));
        T_CHECK(sdx_generate(m, &p, &got) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(got.count == 1 && got.images[0].width == 128 && got.images[0].height == 128 && got.seeds[0] == 11, "shape/seed");
        T_CHECK(!memcmp(got.latents[0].data, ref.latents[0].data, sdx_tensor_nbytes(&ref.latents[0])),
                "%s: the hires latent differs from the one made by hand", ups[u]);
        T_CHECK(!memcmp(got.images[0].data, ref.images[0].data, 128 * 128 * 3), "%s: the images differ", ups[u]);
        T_CHECK(sdx_format_parameters(m, &p, 11, text, sizeof text, NULL) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(strstr(text, "Size: 64x64") && strstr(text, "Denoising strength: 0.6, Hires upscale: 2, Hires steps: 2, Hires upscaler: ") &&
                strstr(text, u ? "upscaler: Latent," : "upscaler: Latent (nearest),"), "%s", text);
        sdx_gen_result_free(ctx, &got);
        sdx_gen_result_free(ctx, &small);
        sdx_gen_result_free(ctx, &ref);
        sdx_tensor_free(ctx, &init);
    }
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

static int hires_esrgan_equals_decode_upscale_encode_img2img_by_hand(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    char model[4096], text[2048];
    sdx_gen_params p;
    sdx_gen_result got, small, ref;
    sdx_upscaler *up;
    sdx_image img, big;
    sdx_tensor init;
    snprintf(model, sizeof model, "%s/golden/upscale/rrdb_x2.safetensors", t_shared_dir());
    T_SKIP_IF(!t_file_exists(model), "%s not found", model);
    hr_params(&p);
    T_CHECK(sdx_generate(m, &p, &small) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_decode_latent(m, &small.latents[0], &p, &img) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_upscaler_load(ctx, model, &up) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_upscale(up, &img, 1, &big) == SDX_OK && big.width == 128, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_encode_image(m, &big, &p, &init) == SDX_OK, "%s", sdx_last_error(ctx));
    p.hires_width = 128;
    p.hires_steps = 2;
    p.hires_denoise = 0.5f;
    p.hires_upscaler = model;
    T_CHECK(hr_second(m, &p, &init, &ref), "%s", sdx_last_error(ctx));
    T_CHECK(sdx_generate(m, &p, &got) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(got.images[0].width == 128 && got.images[0].height == 128, "size");
    T_CHECK(!memcmp(got.latents[0].data, ref.latents[0].data, sdx_tensor_nbytes(&ref.latents[0])),
            "the ESRGAN hires latent differs from the one made by hand");
    T_CHECK(sdx_format_parameters(m, &p, 11, text, sizeof text, NULL) == SDX_OK && strstr(text, "Hires resize: 128x0") &&
            strstr(text, "Hires upscaler: rrdb_x2,"), "%s", text);
    p.init_latent = &init;
    T_CHECK(sdx_generate(m, &p, &got) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "txt2img"), "%s", sdx_last_error(ctx));
    sdx_upscaler_free(up);
    sdx_image_free(ctx, &img);
    sdx_image_free(ctx, &big);
    sdx_tensor_free(ctx, &init);
    sdx_gen_result_free(ctx, &got);
    sdx_gen_result_free(ctx, &small);
    sdx_gen_result_free(ctx, &ref);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* The command: --hires-width/--hires-height, --hires-steps and
 * --hires-denoise give sdx_generate's latent at the hires size, and the
 * PNG is that size and records A1111's fields (Size is the first pass's). */
static int cli_hires_flags_equal_generate_and_are_recorded(void) {
    T_SKIP_IF(T_WINDOWS, "the CLI cases run examples/sdx through a POSIX shell");
    T_NEED_SDX_COMMAND();
    T_NEED_MODEL(ctx, m, "sd1");
    static char out[16384];
    char args[4096];
    const char *png = t_tmp("sdx_t_hires.png"), *lat = t_tmp("sdx_t_hires.safetensors");
    sdx_gen_params p;
    sdx_gen_result ref;
    sdx_tensor got;
    int w, h;
    hr_params(&p);
    p.hires_width = 128;
    p.hires_height = 96;
    p.hires_steps = 2;
    p.hires_denoise = 0.6f;
    T_CHECK(sdx_generate(m, &p, &ref) == SDX_OK, "%s", sdx_last_error(ctx));
    remove(png);
    remove(lat);
    snprintf(args, sizeof args, "-m '%s' --vocab '%s/vocab' -p '%s' -n '%s' -W 64 -H 64 --steps 3 --cfg-scale 5 --sampling-method euler "
             "-s 11 --rng cpu -t 2 --hires-width 128 --hires-height 96 --hires-steps 2 --hires-denoise 0.6 -o %s --output-latent %s",
             t_golden_ckpt("sd1"), t_shared_dir(), p.prompt, p.negative_prompt, png, lat);
    T_CHECK(t_sdx(args, out, sizeof out) == 0, "sdx %s: %s", args, out);
    T_CHECK(t_png_size(png, &w, &h) && w == 128 && h == 96, "the PNG is %dx%d, not 128x96", w, h);
    T_CHECK(t_png_has_parameters(png, "Steps: 3, Sampler: Euler, Schedule type: Automatic, CFG scale: 5, Seed: 11, Size: 64x64, "
                                      "Model: model, Denoising strength: 0.6, Hires resize: 128x96, Hires steps: 2, Hires upscaler: Latent,"),
            "the PNG's parameters lack the hires fields");
    T_CHECK(t_read_f32(ctx, lat, "latent", &got) == SDX_OK, "%s: %s", lat, sdx_last_error(ctx));
    T_CHECK(got.ndim == 4 && got.shape[2] == 12 && got.shape[3] == 16 && sdx_tensor_numel(&got) == sdx_tensor_numel(&ref.latents[0]) &&
            !memcmp(got.data, ref.latents[0].data, sdx_tensor_nbytes(&got)), "the CLI's latent differs from sdx_generate's");
    sdx_tensor_free(ctx, &got);
    snprintf(args, sizeof args, "-m '%s' --vocab '%s/vocab' -p x -W 64 -H 64 --hires-width 100 -o %s", t_golden_ckpt("sd1"),
             t_shared_dir(), png);
    remove(png);
    T_CHECK(t_sdx(args, out, sizeof out) != 0 && strstr(out, "multiples of 8") && !t_file_exists(png), "--hires-width 100: %s", out);
    remove(lat);
    sdx_gen_result_free(ctx, &ref);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

static const t_case hires_cases[] = {
    { "hires_latent_equals_txt2img_upscale_img2img_by_hand", hires_latent_equals_txt2img_upscale_img2img_by_hand },
    { "hires_esrgan_equals_decode_upscale_encode_img2img_by_hand", hires_esrgan_equals_decode_upscale_encode_img2img_by_hand },
    { "cli_hires_flags_equal_generate_and_are_recorded", cli_hires_flags_equal_generate_and_are_recorded },
    { 0, 0 }
};
SDX_TEST_SUITE(hires, hires_cases)

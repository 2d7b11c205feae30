/* Suite "tiling": seamless textures. With params.seamless the UNet's and
 * VAE's convolutions pad circularly, so the right edge of an image
 * continues into the left one (and the bottom into the top) as smoothly
 * as neighbouring interior columns continue into each other. */
#include "test.h"

static int circular_padding_wraps_every_index(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_tensor x, y;
    int64_t H = 3, W = 5;
    int top = 2, left = 6, bottom = 4, right = 1;   /* pads beyond the size wrap more than once */
    int64_t xs[4] = { 2, 3, H, W }, ys[4] = { 2, 3, H + top + bottom, W + left + right };
    T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F16, 4, xs) == SDX_OK, "alloc");
    T_CHECK(sdx_tensor_alloc(ctx, &y, SDX_F32, 4, ys) == SDX_OK, "alloc");
    for (int64_t i = 0; i < sdx_tensor_numel(&x); i++) ((uint16_t *)x.data)[i] = sdx_f32_to_f16((float)i);
    T_CHECK(sdx__pad_circular(ctx, &y, &x, top, left, bottom, right) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int64_t p = 0; p < 6; p++)
        for (int64_t i = 0; i < y.shape[2]; i++)
            for (int64_t j = 0; j < y.shape[3]; j++) {
                int64_t si = ((i - top) % H + H) % H, sj = ((j - left) % W + W) % W;
                float want = (float)((p * H + si) * W + sj);
                float got = ((const float *)y.data)[(p * y.shape[2] + i) * y.shape[3] + j];
                T_CHECK(got == want, "y[%lld, %lld, %lld] = %g, expected %g", (long long)p, (long long)i, (long long)j, got, want);
            }
    y.shape[3] -= 1;
    T_CHECK(sdx__pad_circular(ctx, &y, &x, top, left, bottom, right) == SDX_ERR_INVALID_ARG, "wrong output shape accepted");
    sdx_tensor_free(ctx, &x);
    sdx_tensor_free(ctx, &y);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Mean absolute step across a seam (last column to the first) and
 * between neighbouring interior columns, over all rows and channels;
 * rows likewise when `vertical`. */
static void tl_steps(const sdx_image *img, int vertical, double *seam, double *interior) {
    int w = img->width, h = img->height, len = vertical ? h : w, across = vertical ? w : h;
    double s = 0, in = 0;
    for (int a = 0; a < across; a++)
        for (int c = 0; c < 3; c++) {
            for (int k = 0; k < len; k++) {
                int k2 = (k + 1) % len;
                int i1 = vertical ? (k * w + a) : (a * w + k), i2 = vertical ? (k2 * w + a) : (a * w + k2);
                double d = fabs((double)img->data[i1 * 3 + c] - (double)img->data[i2 * 3 + c]);
                if (k2 == 0) s += d; else in += d;
            }
        }
    *seam = s / (double)(across * 3);
    *interior = in / (double)(across * 3 * (len - 1));
}

static int seamless_images_continue_across_their_edges(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(vocab, "vocab");
    sdx_ctx *ctx = t_ctx();
    sdx_model *m;
    sdx_gen_params p;
    double ratio[2][2];   /* [seamless][vertical] seam / interior */
    (void)vocab;
    m = t_model_file(ctx, ckpt);
    T_CHECK(m, "%s", sdx_last_error(ctx));
    memset(&p, 0, sizeof p);
    p.prompt = "a brick wall texture";
    p.width = 96;
    p.height = 64;
    p.steps = 6;
    p.seed = 3;
    p.batch_count = 4;
    for (int seamless = 0; seamless < 2; seamless++) {
        sdx_gen_result res;
        double seam[2] = { 0, 0 }, interior[2] = { 0, 0 };
        char text[512];
        p.seamless = seamless;
        T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s", sdx_last_error(ctx));
        for (int i = 0; i < res.count; i++)
            for (int v = 0; v < 2; v++) {
                double s, in;
                tl_steps(&res.images[i], v, &s, &in);
                seam[v] += s;
                interior[v] += in;
            }
        for (int v = 0; v < 2; v++) ratio[seamless][v] = seam[v] / interior[v];
        T_NOTE("seamless %d: seam/interior step %.2f horizontally, %.2f vertically", seamless, ratio[seamless][0], ratio[seamless][1]);
        sdx_gen_result_free(ctx, &res);
        sdx_format_parameters(m, &p, 3, text, sizeof text, NULL);
        T_CHECK(!seamless == !strstr(text, ", Tiling: True"), "parameters text: %s", text);
    }
    for (int v = 0; v < 2; v++)
        T_CHECK(ratio[1][v] < 1.25, "%s seam of a seamless image is %.2fx an interior step", v ? "vertical" : "horizontal", ratio[1][v]);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* The exact property behind seamless tiles: with circular padding the
 * networks commute with circular shifts (the VAE decoder with any latent
 * shift, the UNet with shifts that survive its downsampling), so an image
 * has no edge at all. Without it the shifted results differ at the edges. */
static void tl_roll(const float *src, float *dst, int planes, int h, int w, int dy, int dx) {
    for (int p = 0; p < planes; p++)
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++)
                dst[((size_t)p * h + (size_t)((i + dy) % h)) * w + (size_t)((j + dx) % w)] = src[((size_t)p * h + i) * w + j];
}

static int circular_networks_commute_with_shifts(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(vocab, "vocab");
    enum { LH = 16, LW = 24, SHIFT = 8 };
    static float z[4 * LH * LW], zr[4 * LH * LW], o1[2 * 4 * LH * LW], o2[2 * 4 * LH * LW], o1r[2 * 4 * LH * LW];
    sdx_ctx *ctx = t_ctx();
    sdx_model *m;
    sdx_gen_params p;
    sdx_cond *cond;
    double rel[2][2];   /* [seamless][vae, unet] */
    (void)vocab;
    m = t_model_file(ctx, ckpt);
    T_CHECK(m, "%s", sdx_last_error(ctx));
    memset(&p, 0, sizeof p);
    p.prompt = "moss";
    p.width = LW * 8;
    p.height = LH * 8;
    T_CHECK(sdx_encode_prompt(m, &p, &cond) == SDX_OK, "%s", sdx_last_error(ctx));
    t_seed(11);
    for (int i = 0; i < 4 * LH * LW; i++) z[i] = (float)t_normal();
    tl_roll(z, zr, 4, LH, LW, 3, 5);
    for (int seamless = 0; seamless < 2; seamless++) {
        sdx_tensor lt = sdx__view4(SDX_F32, z, 1, 4, LH, LW), ltr = sdx__view4(SDX_F32, zr, 1, 4, LH, LW);
        sdx_image a, b;
        static float fa[3 * LH * 8 * LW * 8], fb[3 * LH * 8 * LW * 8], fr[3 * LH * 8 * LW * 8];
        float ts[2] = { 500.0f, 500.0f };
        sdx_tensor x, out;
        size_t npx = (size_t)LH * 8 * LW * 8;
        p.seamless = seamless;
        /* VAE: decode(roll(z)) against roll(decode(z)), by 3 and 5 latent pixels */
        T_CHECK(sdx_decode_latent(m, &lt, &p, &a) == SDX_OK && sdx_decode_latent(m, &ltr, &p, &b) == SDX_OK, "%s", sdx_last_error(ctx));
        for (size_t i = 0; i < npx; i++)
            for (int c = 0; c < 3; c++) { fa[(size_t)c * npx + i] = a.data[i * 3 + (size_t)c]; fb[(size_t)c * npx + i] = b.data[i * 3 + (size_t)c]; }
        tl_roll(fa, fr, 3, LH * 8, LW * 8, 24, 40);
        rel[seamless][0] = t_rel_l2_f32(fb, fr, 3 * npx);
        sdx_image_free(ctx, &a);
        sdx_image_free(ctx, &b);
        /* UNet: both predictions of the batch, shifted by SHIFT latent pixels */
        for (int r = 0; r < 2; r++) {
            const float *src = r ? zr : z;
            T_CHECK(sdx__arena_tensor4(&m->arena, &x, SDX_F32, 2, 4, LH, LW) &&
                    sdx__arena_tensor4(&m->arena, &out, SDX_F32, 2, 4, LH, LW), "%s", sdx_last_error(ctx));
            if (r) tl_roll(z, zr, 4, LH, LW, SHIFT, SHIFT);
            memcpy(x.data, src, sizeof z);
            memcpy((float *)x.data + 4 * LH * LW, src, sizeof z);
            if (seamless) sdx__circular_begin(ctx);
            T_CHECK(sdx__unet_forward(ctx, &m->unet, &m->arena, &x, ts, &cond->unet_context, NULL, &out) == SDX_OK,
                    "%s", sdx_last_error(ctx));
            sdx__circular_end(ctx);
            memcpy(r ? o2 : o1, out.data, sizeof o1);
            sdx__arena_reset(&m->arena);
        }
        tl_roll(o1, o1r, 8, LH, LW, SHIFT, SHIFT);
        rel[seamless][1] = t_rel_l2_f32(o2, o1r, 8 * LH * LW);
        tl_roll(z, zr, 4, LH, LW, 3, 5);
        T_NOTE("seamless %d: shifted vs shifted-back rel-L2: VAE decode %.2g, UNet %.2g", seamless, rel[seamless][0], rel[seamless][1]);
    }
    T_CHECK(rel[1][0] < 1e-3, "seamless VAE decode does not commute with shifts: %.3g (beyond 8-bit rounding)", rel[1][0]);
    T_CHECK(rel[1][1] < 1e-5, "seamless UNet does not commute with shifts: %.3g", rel[1][1]);
    T_CHECK(rel[0][0] > 10 * rel[1][0] && rel[0][1] > 1e-3, "without seamless the edges should differ (%.3g, %.3g)", rel[0][0], rel[0][1]);
    sdx_cond_free(cond);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Seamless images through a tiled VAE: the tiles wrap around the image
 * edges as the untiled convolutions do, so decode and encode are the same
 * (and the decode differs from the non-seamless one: the check can fail). */
static int tiled_vae_keeps_seamless_decode_and_encode(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(vocab, "vocab");
    enum { LH = 12, LW = 20, NPX = 3 * LH * 8 * LW * 8 };
    static float z[4 * LH * LW], out[3][NPX];
    sdx_ctx *ctx = t_ctx();
    sdx_model *m;
    /* 3x2 tiles, the last ones narrower */
    sdx__vae_tiling off = { -1, 0, 0, 0 }, on = { 1, 8, 7, 0 };
    sdx_tensor lt = sdx__view4(SDX_F32, z, 1, 4, LH, LW);
    double rel_tiled, rel_plain, rel_enc;
    (void)vocab;
    m = t_model_file(ctx, ckpt);
    T_CHECK(m, "%s", sdx_last_error(ctx));
    t_seed(5);
    for (int i = 0; i < 4 * LH * LW; i++) z[i] = (float)t_normal() / 0.18215f;
    for (int k = 0; k < 3; k++) {
        sdx_tensor img = sdx__view4(SDX_F32, out[k], 1, 3, LH * 8, LW * 8);
        if (k < 2) sdx__circular_begin(ctx);
        T_CHECK(sdx__vae_decode(ctx, &m->vae, &m->arena, &lt, &img, k == 1 ? &on : &off) == SDX_OK, "%s", sdx_last_error(ctx));
        sdx__circular_end(ctx);
    }
    rel_tiled = t_rel_l2_f32(out[1], out[0], NPX);
    rel_plain = t_rel_l2_f32(out[2], out[0], NPX);
    /* and back: the seamless image encoded seamlessly, tiled and untiled */
    for (int k = 0; k < 2; k++) {
        sdx_tensor img = sdx__view4(SDX_F32, out[0], 1, 3, LH * 8, LW * 8);
        sdx_tensor mean = sdx__view4(SDX_F32, out[1 + k], 1, 4, LH, LW);
        sdx__circular_begin(ctx);
        T_CHECK(sdx__vae_encode(ctx, &m->vae, &m->arena, &img, &mean, NULL, k ? &on : &off) == SDX_OK, "%s", sdx_last_error(ctx));
        sdx__circular_end(ctx);
    }
    rel_enc = t_rel_l2_f32(out[2], out[1], 4 * LH * LW);
    T_NOTE("seamless decode: tiled vs untiled rel-L2 %.2e (non-seamless vs seamless %.2e); seamless encode tiled vs untiled %.2e",
           rel_tiled, rel_plain, rel_enc);
    sdx_model_free(m);
    sdx_destroy(ctx);
    T_CHECK(rel_tiled <= 1e-5 && rel_enc <= 1e-5, "tiled seamless decode/encode differ from untiled: rel-L2 %.3g / %.3g",
            rel_tiled, rel_enc);
    T_CHECK(rel_plain > 1e-3, "seamless and plain decodes should differ at the edges (%.3g)", rel_plain);
    return T_PASS;
}

static const t_case tiling_cases[] = {
    { "circular_padding_wraps_every_index", circular_padding_wraps_every_index },
    { "circular_networks_commute_with_shifts", circular_networks_commute_with_shifts },
    { "seamless_images_continue_across_their_edges", seamless_images_continue_across_their_edges },
    { "tiled_vae_keeps_seamless_decode_and_encode", tiled_vae_keeps_seamless_decode_and_encode },
    { 0, 0 }
};
SDX_TEST_SUITE(tiling, tiling_cases)

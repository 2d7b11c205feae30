#pragma once
#include "vae_model.c"
#include "vae_tiled.c"

/* ===================================================================== */
/*  VAE: decode and encode, whole or in tiles                             */
/* ===================================================================== */
/* The parts: vae_model.c (the encoder and decoder, their loading and the
 * untiled walk) and vae_tiled.c (the same walk in tiles); here the entry
 * points the pipeline calls and the choice between the two. */

/* Latents here are the VAE's own: the pipeline divides a diffusion-space
 * latent by the family's scale factor before decoding and multiplies an
 * encoded mean by it (sdx__family.vae_scale: a property of the model
 * family, not of the VAE file). */

/* Auto tiling kicks in when a full-size pass is estimated to need more
 * activation memory than this (bytes); sdx__vae_tiling.budget_bytes
 * overrides it per call. A 1024x1024 SD/SDXL decode needs ~2.6 GB with
 * f32 activations, so the default leaves such a decode untiled. */
#ifndef SDX_VAE_TILE_BUDGET
#define SDX_VAE_TILE_BUDGET ((size_t)4 << 30)
#endif

typedef struct sdx__vae_tiling {
    int mode;              /* 0 auto, 1 force on, -1 off */
    int tile_h, tile_w;    /* largest tile in latent pixels; 0 = choose from the budget */
    size_t budget_bytes;   /* auto: tile when a full pass needs more; 0 = SDX_VAE_TILE_BUDGET */
} sdx__vae_tiling;

/* Exact tiling needs every global layer in the untiled part. */
static int sdx__vae_tileable(const sdx__vae *v) {
    for (int i = 0; i < v->dec.n_levels; i++)
        if (v->dec.level[i].has_attn || (v->has_encoder && v->enc.level[i].has_attn)) return 0;
    return 1;
}

/* Decides whether to tile and picks the grid: ny x nx tiles over an h x w
 * latent. bytes_fn estimates an untiled pass of a th x tw latent region;
 * a tile needs less (one stage's temporaries), so tiles whose untiled
 * pass fits the budget are safe. */
typedef size_t (*sdx__vae_bytes_fn)(const sdx__vae *, int64_t, int64_t);

static size_t sdx__vae_dec_bytes_latent(const sdx__vae *v, int64_t h, int64_t w) { return sdx__vae_decode_bytes(v, h, w); }
static size_t sdx__vae_enc_bytes_latent(const sdx__vae *v, int64_t h, int64_t w) {
    return sdx__vae_encode_bytes(v, h * v->factor, w * v->factor);
}

static int sdx__vae_plan_tiles(sdx_ctx *ctx, const sdx__vae *v, const sdx__vae_tiling *tiling, sdx__vae_bytes_fn bytes,
                               int64_t h, int64_t w, int64_t *ny, int64_t *nx) {
    int mode = tiling ? tiling->mode : 0;
    size_t budget = tiling && tiling->budget_bytes ? tiling->budget_bytes : SDX_VAE_TILE_BUDGET;
    size_t full;
    int64_t th, tw;
    if (mode < 0) return 0;
    full = bytes(v, h, w);
    if (mode == 0 && full <= budget) return 0;
    if (!sdx__vae_tileable(v)) {
        sdx__log(ctx, SDX_LOG_WARN, "vae: not tiled: attention inside the VAE's levels needs the whole image");
        return 0;
    }
    if (tiling && (tiling->tile_h > 0 || tiling->tile_w > 0)) {
        th = tiling->tile_h > 0 ? tiling->tile_h : tiling->tile_w;
        tw = tiling->tile_w > 0 ? tiling->tile_w : tiling->tile_h;
    } else {
        /* the largest square tile that fits (fewer, larger tiles cost less
         * per stage); forced tiling with room to spare uses 32 (sd-cli's) */
        int64_t t = SDX__MAX(h, w);
        if (mode > 0) t = SDX__MIN(t, 32);
        while (t > 8 && bytes(v, t, t) > budget) t -= t % 8 ? t % 8 : 8;
        th = tw = t;
    }
    *ny = (h + th - 1) / th;
    *nx = (w + tw - 1) / tw;
    sdx__log(ctx, SDX_LOG_INFO, "vae: tiling %lldx%lld latent in %lldx%lld tiles of at most %lldx%lld (untiled: %zu MB, budget %zu MB)",
             (long long)h, (long long)w, (long long)*ny, (long long)*nx, (long long)th, (long long)tw, full >> 20, budget >> 20);
    return 1;
}

/* ---- entry points --------------------------------------------------------- */

/* z: latent already divided by the scale factor, [1, latent, h, w] (any
 * float dtype) -> image: caller-allocated F32 [1, 3, f*h, f*w], the raw
 * decoder output (f = 8 for SD VAEs). tiling may be NULL (auto, default
 * budget). */
static int sdx__vae_decode(sdx_ctx *ctx, sdx__vae *v, sdx__arena *arena, const sdx_tensor *z, sdx_tensor *image,
                           const sdx__vae_tiling *tiling) {
    char zs[96], is[96];
    int64_t ny = 1, nx = 1;
    if (z->ndim != 4 || z->shape[0] != 1 || z->shape[1] != v->latent_channels || z->shape[2] < 1 || z->shape[3] < 1 ||
        image->ndim != 4 || image->dtype != SDX_F32 || image->shape[0] != 1 || image->shape[1] != 3 ||
        image->shape[2] != z->shape[2] * v->factor || image->shape[3] != z->shape[3] * v->factor)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "vae decode: latent %s -> image %s %s; expected [1, %d, h, w] -> F32 [1, 3, %dh, %dw]",
                         sdx_shape_str(z, zs, sizeof zs), sdx_shape_str(image, is, sizeof is), sdx_dtype_name(image->dtype),
                         v->latent_channels, v->factor, v->factor);
    if (sdx__vae_plan_tiles(ctx, v, tiling, sdx__vae_dec_bytes_latent, z->shape[2], z->shape[3], &ny, &nx))
        return sdx__vae_decode_tiled(ctx, v, arena, z, image, ny, nx);
    return sdx__vae_run_host(ctx, v, arena, sdx__vae_decoder_walk_fn, z, image);
}

/* moments -> mean and clamp(logvar, -30, 20) (DiagonalGaussianDistribution). */
static void sdx__vae_split_moments(const sdx_tensor *moments, sdx_tensor *mean, sdx_tensor *logvar) {
    int64_t n = sdx_tensor_numel(mean);
    const float *m = (const float *)moments->data;
    memcpy(mean->data, m, (size_t)n * sizeof(float));
    if (!logvar) return;
    for (int64_t i = 0; i < n; i++) {
        float lv = m[n + i];
        ((float *)logvar->data)[i] = lv < -30.0f ? -30.0f : lv > 20.0f ? 20.0f : lv;
    }
}

/* image in [-1, 1], [1, 3, H, W] (any float dtype) -> mean (and logvar if
 * non-NULL), caller-allocated F32 [1, latent, H/f, W/f]. Not multiplied
 * by the scale factor. tiling may be NULL (auto). */
static int sdx__vae_encode(sdx_ctx *ctx, sdx__vae *v, sdx__arena *arena, const sdx_tensor *image, sdx_tensor *mean,
                           sdx_tensor *logvar, const sdx__vae_tiling *tiling) {
    char is[96], ms[96];
    int64_t h, w, ny = 1, nx = 1;
    sdx_tensor moments;
    sdx__mark m;
    int rc, tiled;
    if (!v->has_encoder)
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s: this VAE has no encoder ('%sencoder.conv_in.weight' is missing)",
                         sdx_st_path(v->w.st), v->w.prefix);
    if (image->ndim != 4 || image->shape[0] != 1 || image->shape[1] != 3 || image->shape[2] < v->factor ||
        image->shape[3] < v->factor)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "vae encode: image %s; expected [1, 3, H, W] with H, W >= %d",
                         sdx_shape_str(image, is, sizeof is), v->factor);
    h = image->shape[2] / v->factor;
    w = image->shape[3] / v->factor;
    if (mean->ndim != 4 || mean->dtype != SDX_F32 || mean->shape[0] != 1 || mean->shape[1] != v->latent_channels ||
        mean->shape[2] != h || mean->shape[3] != w || (logvar && !sdx__same_shape(logvar, mean)) ||
        (logvar && logvar->dtype != SDX_F32))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "vae encode: image %s -> mean %s; expected F32 [1, %d, %lld, %lld]",
                         sdx_shape_str(image, is, sizeof is), sdx_shape_str(mean, ms, sizeof ms), v->latent_channels,
                         (long long)h, (long long)w);
    tiled = sdx__vae_plan_tiles(ctx, v, tiling, sdx__vae_enc_bytes_latent, h, w, &ny, &nx);
    m = sdx__arena_mark(arena);
    {
        int64_t mshape[4] = { 1, 2 * v->latent_channels, h, w };
        if (!sdx__arena_host_tensor(arena, &moments, SDX_F32, 4, mshape)) return SDX_ERR_NOMEM;
    }
    if (tiled) rc = sdx__vae_encode_tiled(ctx, v, arena, image, &moments, ny, nx);
    else rc = sdx__vae_run_host(ctx, v, arena, sdx__vae_encoder_walk_fn, image, &moments);
    if (rc == SDX_OK) sdx__vae_split_moments(&moments, mean, logvar);
    sdx__arena_release(arena, m);
    return rc;
}

/* Suite "vae": the AutoencoderKL decoder/encoder against the reference
 * goldens of the three tiny models, storage precisions, tiling, and
 * loading VAEs from checkpoints and standalone files. */
#include "test.h"
#include <unistd.h>

/* A scratch file name per process: suites of several builds (make test,
 * make sanitize) may run at the same time. */
static const char *t_vae_tmp(const char *tag) {
    static char buf[4][128];
    static int slot = 0;
    char *p = buf[slot++ & 3];
    snprintf(p, sizeof buf[0], "%s/sdx_t_vae_%s_%ld.safetensors", t_tmp_dir(), tag, (long)getpid());
    return p;
}

/* One model's VAE goldens. sd2's checkpoint is BF16, sdxl's F16, sd1's F32. */
typedef struct t_vae_model {
    const char *dir;
    const char *decode[2];
    const char *decoded_key;   /* raw decoder output */
    const char *encode;
} t_vae_model;

static const t_vae_model t_vae_models[3] = {
    { "golden/sd1", { "vae_decode_case0", "vae_decode_case1" }, "decoded", "vae_encode_case0" },
    { "golden/sd2", { "vae_decode_case0", "vae_decode_case1" }, "decoded", "vae_encode_case0" },
    { "golden/sdxl", { "vae_decode_0", "vae_decode_1" }, "decoder_out", "vae_encode_0" },
};

/* An open checkpoint with its VAE and an arena. */
typedef struct t_vae_env {
    sdx_ctx *ctx;
    sdx_st *st;
    sdx__vae vae;
    sdx__arena arena;
    int loaded;
} t_vae_env;

static void t_vae_close(t_vae_env *e) {
    if (e->loaded) sdx__vae_free(&e->vae);
    if (e->ctx) sdx__arena_free(&e->arena);
    sdx_st_close(e->st);
    sdx_destroy(e->ctx);
    memset(e, 0, sizeof *e);
}

/* Opens `path` and loads its VAE with `prefix` (NULL = detect). */
static int t_vae_open_path(t_vae_env *e, const char *path, const char *prefix) {
    memset(e, 0, sizeof *e);
    if (!(e->ctx = t_ctx())) return SDX_ERR_NOMEM;
    sdx__arena_init(&e->arena, e->ctx, 0);
    if (sdx_st_open(e->ctx, path, &e->st) != SDX_OK) return SDX_ERR_IO;
    if (sdx__vae_load(e->ctx, &e->vae, e->st, prefix) != SDX_OK) return SDX_ERR_MODEL;
    e->loaded = 1;
    return SDX_OK;
}

static const char *t_vae_file(const t_vae_model *m, const char *name) {
    static char rel[8][256];
    static int slot = 0;
    char *p = rel[slot++ & 7];
    if (name) snprintf(p, 256, "%s/cases/%s.safetensors", m->dir, name);
    else snprintf(p, 256, "%s/model.safetensors", m->dir);
    return t_shared(p);
}

/* Decodes golden `name`; returns rel-L2 of the raw output and of the
 * [0, 1] image, or a negative value on failure (t_msg set). */
static int t_vae_decode_golden(t_vae_env *e, const t_vae_model *m, const char *name, const sdx__vae_tiling *tiling,
                               double *err_decoded, double *err_image, int *finite) {
    sdx_st *g = NULL;
    sdx_tensor z, want, want_img, got;
    int rc;
    memset(&got, 0, sizeof got);
    if (sdx_st_open(e->ctx, t_vae_file(m, name), &g) != SDX_OK) return -1;
    sdx_st_read_f32(e->ctx, g, "z", &z);
    sdx_st_read_f32(e->ctx, g, m->decoded_key, &want);
    sdx_st_read_f32(e->ctx, g, "image", &want_img);
    rc = sdx_tensor_alloc(e->ctx, &got, SDX_F32, 4, want.shape);
    if (rc == SDX_OK) rc = sdx__vae_decode(e->ctx, &e->vae, &e->arena, &z, &got, tiling);
    if (rc == SDX_OK) {
        size_t n = (size_t)sdx_tensor_numel(&got);
        float *img = (float *)got.data;
        *finite = 1;
        for (size_t i = 0; i < n; i++) *finite &= isfinite(img[i]) != 0;
        *err_decoded = t_rel_l2_f32(img, (const float *)want.data, n);
        for (size_t i = 0; i < n; i++) {
            float p = (img[i] + 1.0f) * 0.5f;
            img[i] = p < 0 ? 0 : p > 1 ? 1 : p;
        }
        *err_image = t_rel_l2_f32(img, (const float *)want_img.data, n);
    } else {
        snprintf(t_msg, sizeof t_msg, "decode %s: %s", name, sdx_last_error(e->ctx));
    }
    sdx_tensor_free(e->ctx, &z);
    sdx_tensor_free(e->ctx, &want);
    sdx_tensor_free(e->ctx, &want_img);
    sdx_tensor_free(e->ctx, &got);
    sdx_st_close(g);
    return rc == SDX_OK ? 0 : -1;
}

static int t_vae_encode_golden(t_vae_env *e, const t_vae_model *m, double *err_mean, double *err_logvar, int *finite) {
    sdx_st *g = NULL;
    sdx_tensor image, want_mean, want_logvar, mean, logvar;
    int rc;
    memset(&mean, 0, sizeof mean);
    memset(&logvar, 0, sizeof logvar);
    if (sdx_st_open(e->ctx, t_vae_file(m, m->encode), &g) != SDX_OK) return -1;
    sdx_st_read_f32(e->ctx, g, "image", &image);
    sdx_st_read_f32(e->ctx, g, "mean", &want_mean);
    sdx_st_read_f32(e->ctx, g, "logvar", &want_logvar);
    rc = sdx_tensor_alloc(e->ctx, &mean, SDX_F32, 4, want_mean.shape);
    if (rc == SDX_OK) rc = sdx_tensor_alloc(e->ctx, &logvar, SDX_F32, 4, want_mean.shape);
    if (rc == SDX_OK) rc = sdx__vae_encode(e->ctx, &e->vae, &e->arena, &image, &mean, &logvar, NULL);
    if (rc == SDX_OK) {
        size_t n = (size_t)sdx_tensor_numel(&mean);
        *finite = 1;
        for (size_t i = 0; i < n; i++) *finite &= isfinite(((float *)mean.data)[i]) && isfinite(((float *)logvar.data)[i]);
        *err_mean = t_rel_l2_f32((const float *)mean.data, (const float *)want_mean.data, n);
        *err_logvar = t_rel_l2_f32((const float *)logvar.data, (const float *)want_logvar.data, n);
    } else {
        snprintf(t_msg, sizeof t_msg, "encode %s: %s", m->encode, sdx_last_error(e->ctx));
    }
    sdx_tensor_free(e->ctx, &image);
    sdx_tensor_free(e->ctx, &want_mean);
    sdx_tensor_free(e->ctx, &want_logvar);
    sdx_tensor_free(e->ctx, &mean);
    sdx_tensor_free(e->ctx, &logvar);
    sdx_st_close(g);
    return rc == SDX_OK ? 0 : -1;
}

/* Every decode and encode golden of model `mi` with activations stored
 * as `act`, compared at rel-L2 `tol`. Goldens are always full size. */
static int t_vae_goldens(int mi, sdx_dtype act, double tol) {
    const t_vae_model *m = &t_vae_models[mi];
    const char *ckpt = t_vae_file(m, NULL);
    sdx__vae_tiling off = { -1, 0, 0, 0 };
    t_vae_env e;
    double worst = 0;
    T_SKIP_IF(!ckpt, "golden data %s/%s/model.safetensors not found", t_shared_dir(), m->dir);
    T_CHECK(t_vae_open_path(&e, ckpt, "first_stage_model.") == SDX_OK, "load: %s", sdx_last_error(e.ctx));
    e.vae.act_type = act;
    for (int c = 0; c < 2; c++) {
        double ed = 1, ei = 1;
        int finite = 0;
        if (t_vae_decode_golden(&e, m, m->decode[c], &off, &ed, &ei, &finite)) { t_vae_close(&e); return T_FAIL; }
        T_NOTE("%s %s (%s activations): decoded rel-L2 %.2e, image rel-L2 %.2e", m->dir, m->decode[c], sdx_dtype_name(act), ed, ei);
        if (!finite || !(ed <= tol) || !(ei <= tol)) {
            t_vae_close(&e);
            T_CHECK(0, "%s %s: finite %d, decoded rel-L2 %.3g, image %.3g > %.1g", m->dir, m->decode[c], finite, ed, ei, tol);
        }
        worst = ed > worst ? ed : worst;
    }
    {
        double em = 1, el = 1;
        int finite = 0;
        if (t_vae_encode_golden(&e, m, &em, &el, &finite)) { t_vae_close(&e); return T_FAIL; }
        T_NOTE("%s %s (%s activations): mean rel-L2 %.2e, logvar rel-L2 %.2e", m->dir, m->encode, sdx_dtype_name(act), em, el);
        t_vae_close(&e);
        T_CHECK(finite && em <= tol && el <= tol, "%s %s: finite %d, mean rel-L2 %.3g, logvar %.3g > %.1g", m->dir, m->encode,
                finite, em, el, tol);
    }
    return T_PASS;
}

/* f32: the reference was computed in f32 on the same weights; the
 * READMEs' f32-vs-f64 errors are ~1e-6. */
static int sd1_goldens_f32(void) { return t_vae_goldens(0, SDX_F32, 1e-4); }
static int sd2_bf16_checkpoint_goldens_f32(void) { return t_vae_goldens(1, SDX_F32, 1e-4); }
static int sdxl_goldens_f32(void) { return t_vae_goldens(2, SDX_F32, 1e-4); }
/* f16 storage rounds every activation to 11 bits (2^-11 ~ 5e-4 relative
 * per store); errors accumulate over ~30 layers. */
static int sd1_goldens_f16_storage(void) { return t_vae_goldens(0, SDX_F16, 1e-2); }
static int sd2_goldens_f16_storage(void) { return t_vae_goldens(1, SDX_F16, 1e-2); }
static int sdxl_goldens_f16_storage(void) { return t_vae_goldens(2, SDX_F16, 1e-2); }
/* bf16 storage keeps 8 bits (2^-8 ~ 4e-3 relative per store). */
static int sd1_goldens_bf16_storage(void) { return t_vae_goldens(0, SDX_BF16, 3e-2); }
static int sd2_goldens_bf16_storage(void) { return t_vae_goldens(1, SDX_BF16, 3e-2); }
static int sdxl_goldens_bf16_storage(void) { return t_vae_goldens(2, SDX_BF16, 3e-2); }

static int hyperparameters_read_from_shapes(void) {
    const char *ckpt = t_vae_file(&t_vae_models[0], NULL);
    t_vae_env e;
    int ok;
    T_SKIP_IF(!ckpt, "golden sd1 checkpoint not found under %s", t_shared_dir());
    T_CHECK(t_vae_open_path(&e, ckpt, NULL) == SDX_OK, "load: %s", sdx_last_error(e.ctx));
    /* sd1/README.md: ch 32, ch_mult [1,2,2,2], num_res_blocks 2, z 4 */
    ok = e.vae.ch == 32 && e.vae.n_levels == 4 && e.vae.ch_mult[0] == 1 && e.vae.ch_mult[1] == 2 && e.vae.ch_mult[2] == 2 &&
         e.vae.ch_mult[3] == 2 && e.vae.num_res_blocks == 2 && e.vae.z_channels == 4 && e.vae.latent_channels == 4 &&
         e.vae.has_mid_attn && e.vae.has_encoder && e.vae.factor == 8 && e.vae.layout == SDX__VAE_LDM &&
         !strcmp(e.vae.w.prefix, "first_stage_model.");
    T_NOTE("ch %d levels %d mult [%d %d %d %d] res %d z %d factor %d prefix '%s'", e.vae.ch, e.vae.n_levels, e.vae.ch_mult[0],
           e.vae.ch_mult[1], e.vae.ch_mult[2], e.vae.ch_mult[3], e.vae.num_res_blocks, e.vae.z_channels, e.vae.factor,
           e.vae.w.prefix);
    t_vae_close(&e);
    T_CHECK(ok, "hyperparameters differ from sd1/README.md");
    return T_PASS;
}

static int scale_factor_by_family(void) {
    T_CHECK(sdx__family_get(SDX_FAMILY_SD1)->vae_scale == 0.18215f && sdx__family_get(SDX_FAMILY_SDXL)->vae_scale == 0.13025f, "scale factors");
    return T_PASS;
}

/* ---- tiling ---------------------------------------------------------- */

/* Decodes a random latent of h x w with `tiling`, into `out` (allocated). */
static int t_vae_decode_random(t_vae_env *e, int64_t h, int64_t w, uint64_t seed, const sdx__vae_tiling *tiling,
                               sdx_tensor *out) {
    sdx_tensor z;
    int rc;
    t_seed(seed);
    if (sdx_tensor_alloc(e->ctx, &z, SDX_F32, 4, (int64_t[]){ 1, 4, h, w }) != SDX_OK) return SDX_ERR_NOMEM;
    /* a diffusion-space latent ~N(0,1) divided by the SD scale factor */
    t_fill_normal((float *)z.data, (size_t)sdx_tensor_numel(&z), 1.0 / 0.18215);
    rc = sdx_tensor_alloc(e->ctx, out, SDX_F32, 4, (int64_t[]){ 1, 3, 8 * h, 8 * w });
    if (rc == SDX_OK) rc = sdx__vae_decode(e->ctx, &e->vae, &e->arena, &z, out, tiling);
    sdx_tensor_free(e->ctx, &z);
    return rc;
}

static int t_vae_open_sd1(t_vae_env *e) {
    const char *ckpt = t_vae_file(&t_vae_models[0], NULL);
    if (!ckpt) return SDX_ERR_IO;
    return t_vae_open_path(e, ckpt, "first_stage_model.");
}

/* A tile that covers the whole latent is the untiled computation. */
static int single_tile_equals_full(void) {
    t_vae_env e;
    sdx_tensor full, tiled;
    sdx__vae_tiling off = { -1, 0, 0, 0 }, one = { 1, 64, 64, 0 };
    int same;
    T_SKIP_IF(!t_vae_file(&t_vae_models[0], NULL), "golden sd1 checkpoint not found under %s", t_shared_dir());
    T_CHECK(t_vae_open_sd1(&e) == SDX_OK, "load: %s", sdx_last_error(e.ctx));
    T_CHECK(t_vae_decode_random(&e, 6, 10, 3, &off, &full) == SDX_OK, "full: %s", sdx_last_error(e.ctx));
    T_CHECK(t_vae_decode_random(&e, 6, 10, 3, &one, &tiled) == SDX_OK, "tiled: %s", sdx_last_error(e.ctx));
    same = !memcmp(full.data, tiled.data, sdx_tensor_nbytes(&full));
    sdx_tensor_free(e.ctx, &full);
    sdx_tensor_free(e.ctx, &tiled);
    t_vae_close(&e);
    T_CHECK(same, "a single tile differs from the untiled decode");
    return T_PASS;
}

/* Auto mode tiles exactly when the estimate exceeds the budget. */
static int auto_tiling_follows_budget(void) {
    t_vae_env e;
    sdx_tensor full, forced, small, large;
    sdx__vae_tiling off = { -1, 0, 0, 0 }, force = { 1, 8, 8, 0 };
    size_t need;
    int tiled_same, full_same;
    T_SKIP_IF(!t_vae_file(&t_vae_models[0], NULL), "golden sd1 checkpoint not found under %s", t_shared_dir());
    T_CHECK(t_vae_open_sd1(&e) == SDX_OK, "load: %s", sdx_last_error(e.ctx));
    need = sdx__vae_decode_bytes(&e.vae, 12, 8);
    {
        sdx__vae_tiling tight = { 0, 8, 8, need - 1 }, roomy = { 0, 8, 8, need };
        T_CHECK(t_vae_decode_random(&e, 12, 8, 5, &off, &full) == SDX_OK, "%s", sdx_last_error(e.ctx));
        T_CHECK(t_vae_decode_random(&e, 12, 8, 5, &force, &forced) == SDX_OK, "%s", sdx_last_error(e.ctx));
        T_CHECK(t_vae_decode_random(&e, 12, 8, 5, &tight, &small) == SDX_OK, "%s", sdx_last_error(e.ctx));
        T_CHECK(t_vae_decode_random(&e, 12, 8, 5, &roomy, &large) == SDX_OK, "%s", sdx_last_error(e.ctx));
    }
    tiled_same = !memcmp(small.data, forced.data, sdx_tensor_nbytes(&full));
    full_same = !memcmp(large.data, full.data, sdx_tensor_nbytes(&full));
    T_NOTE("untiled 96x64 decode estimate: %zu bytes", need);
    sdx_tensor_free(e.ctx, &full);
    sdx_tensor_free(e.ctx, &forced);
    sdx_tensor_free(e.ctx, &small);
    sdx_tensor_free(e.ctx, &large);
    t_vae_close(&e);
    T_CHECK(tiled_same, "budget below the estimate did not give the tiled result");
    T_CHECK(full_same, "budget equal to the estimate did not give the untiled result");
    return T_PASS;
}

/* The estimate used by auto tiling matches what the arena really holds. */
static int memory_estimate_matches_arena_peak(void) {
    t_vae_env e;
    sdx_tensor out, img, mean;
    sdx__vae_tiling off = { -1, 0, 0, 0 };
    size_t est_dec, peak_dec, est_enc, peak_enc;
    T_SKIP_IF(!t_vae_file(&t_vae_models[0], NULL), "golden sd1 checkpoint not found under %s", t_shared_dir());
    T_CHECK(t_vae_open_sd1(&e) == SDX_OK, "load: %s", sdx_last_error(e.ctx));
    est_dec = sdx__vae_decode_bytes(&e.vae, 8, 12);
    T_CHECK(t_vae_decode_random(&e, 8, 12, 9, &off, &out) == SDX_OK, "%s", sdx_last_error(e.ctx));
    peak_dec = e.arena.peak;
    e.arena.peak = 0;
    est_enc = sdx__vae_encode_bytes(&e.vae, 64, 96);
    T_CHECK(sdx_tensor_alloc(e.ctx, &mean, SDX_F32, 4, (int64_t[]){ 1, 4, 8, 12 }) == SDX_OK, "alloc");
    img = out;   /* any image in roughly [-1, 1] */
    T_CHECK(sdx__vae_encode(e.ctx, &e.vae, &e.arena, &img, &mean, NULL, &off) == SDX_OK, "%s", sdx_last_error(e.ctx));
    peak_enc = e.arena.peak;
    T_NOTE("decode 64x96: estimate %zu, arena peak %zu; encode: estimate %zu, peak %zu", est_dec, peak_dec, est_enc, peak_enc);
    sdx_tensor_free(e.ctx, &out);
    sdx_tensor_free(e.ctx, &mean);
    t_vae_close(&e);
    T_CHECK(peak_dec <= est_dec && est_dec <= peak_dec + peak_dec / 50, "decode estimate %zu vs peak %zu", est_dec, peak_dec);
    T_CHECK(peak_enc <= est_enc && est_enc <= peak_enc + peak_enc / 50, "encode estimate %zu vs peak %zu", est_enc, peak_enc);
    return T_PASS;
}

/* A smooth test image in [-1, 1]: a few random plane waves per channel. */
static void t_smooth_image(float *img, int64_t h, int64_t w) {
    for (int c = 0; c < 3; c++) {
        double fy[3], fx[3], ph[3];
        for (int k = 0; k < 3; k++) fy[k] = t_normal() * 0.08, fx[k] = t_normal() * 0.08, ph[k] = t_uniform() * 6.28;
        for (int64_t y = 0; y < h; y++)
            for (int64_t x = 0; x < w; x++) {
                double v = 0;
                for (int k = 0; k < 3; k++) v += sin(fy[k] * (double)y + fx[k] * (double)x + ph[k]) / 3.0;
                img[(c * h + y) * w + x] = (float)(0.9 * v);
            }
    }
}

/* Decodes a random latent of h x w and encodes a smooth image of 8h x 8w,
 * untiled and in tiles of at most th x tw latent pixels; gives the
 * rel-L2 of the tiled results (decoded image, posterior mean) against the
 * untiled ones. */
static int t_vae_tiled_vs_untiled(t_vae_env *e, int64_t h, int64_t w, int th, int tw, double *dec_rel, double *enc_rel) {
    sdx__vae_tiling off = { -1, 0, 0, 0 }, on = { 1, 0, 0, 0 };
    sdx_tensor full, tiled, image, m_full, m_tiled;
    int rc;
    on.tile_h = th;
    on.tile_w = tw;
    memset(&image, 0, sizeof image);
    memset(&m_full, 0, sizeof m_full);
    memset(&m_tiled, 0, sizeof m_tiled);
    if ((rc = t_vae_decode_random(e, h, w, 21, &off, &full)) != SDX_OK) return rc;
    if ((rc = t_vae_decode_random(e, h, w, 21, &on, &tiled)) != SDX_OK) { sdx_tensor_free(e->ctx, &full); return rc; }
    *dec_rel = t_rel_l2_f32((const float *)tiled.data, (const float *)full.data, (size_t)sdx_tensor_numel(&full));
    sdx_tensor_free(e->ctx, &full);
    sdx_tensor_free(e->ctx, &tiled);
    *enc_rel = -1;
    if (!e->vae.has_encoder) return SDX_OK;
    t_seed(22);
    rc = sdx_tensor_alloc(e->ctx, &image, SDX_F32, 4, (int64_t[]){ 1, 3, 8 * h, 8 * w });
    if (rc == SDX_OK) rc = sdx_tensor_alloc(e->ctx, &m_full, SDX_F32, 4, (int64_t[]){ 1, 4, h, w });
    if (rc == SDX_OK) rc = sdx_tensor_alloc(e->ctx, &m_tiled, SDX_F32, 4, (int64_t[]){ 1, 4, h, w });
    if (rc == SDX_OK) {
        t_smooth_image((float *)image.data, 8 * h, 8 * w);
        rc = sdx__vae_encode(e->ctx, &e->vae, &e->arena, &image, &m_full, NULL, &off);
    }
    if (rc == SDX_OK) rc = sdx__vae_encode(e->ctx, &e->vae, &e->arena, &image, &m_tiled, NULL, &on);
    if (rc == SDX_OK) *enc_rel = t_rel_l2_f32((const float *)m_tiled.data, (const float *)m_full.data, (size_t)(4 * h * w));
    sdx_tensor_free(e->ctx, &image);
    sdx_tensor_free(e->ctx, &m_full);
    sdx_tensor_free(e->ctx, &m_tiled);
    return rc;
}

/* Tiles normalise with the whole image's GroupNorm statistics and are cut
 * with each convolution's exact margin, so tiling does not change the
 * result beyond float rounding (before: per-tile statistics, 0.066
 * rel-L2 for decode and 0.43 for encode on 2x2 tiles at 192x192). */
static int t_vae_tiled_model(int mi) {
    const t_vae_model *m = &t_vae_models[mi];
    t_vae_env e;
    double dr = 1, er = 1;
    int rc;
    T_SKIP_IF(!t_vae_file(m, NULL), "golden data %s/%s/model.safetensors not found", t_shared_dir(), m->dir);
    T_CHECK(t_vae_open_path(&e, t_vae_file(m, NULL), "first_stage_model.") == SDX_OK, "load: %s", sdx_last_error(e.ctx));
    rc = t_vae_tiled_vs_untiled(&e, 24, 24, 8, 8, &dr, &er);   /* 3x3 tiles, 192x192 */
    if (rc != SDX_OK) { t_vae_close(&e); T_CHECK(0, "%s", sdx_last_error(e.ctx)); }
    T_NOTE("%s 192x192 in 3x3 tiles: decode rel-L2 %.2e, encode (mean) rel-L2 %.2e", m->dir, dr, er);
    t_vae_close(&e);
    T_CHECK(dr <= 1e-5 && er <= 1e-5, "tiled differs from untiled: decode %.3g, encode %.3g", dr, er);
    return T_PASS;
}
static int sd1_tiled_decode_and_encode_match_untiled(void) { return t_vae_tiled_model(0); }
static int sdxl_tiled_decode_and_encode_match_untiled(void) { return t_vae_tiled_model(2); }

/* Odd sizes, tiles that do not divide them, more tiles than pixels at the
 * lowest resolution, non-square tiles and a single row of tiles. */
static int tiles_of_any_size_and_count_match_untiled(void) {
    static const int cases[][4] = { { 13, 21, 5, 7 }, { 9, 7, 2, 3 }, { 5, 17, 5, 3 }, { 11, 11, 4, 11 } };
    t_vae_env e;
    double worst = 0;
    T_SKIP_IF(!t_vae_file(&t_vae_models[0], NULL), "golden sd1 checkpoint not found under %s", t_shared_dir());
    T_CHECK(t_vae_open_sd1(&e) == SDX_OK, "load: %s", sdx_last_error(e.ctx));
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        double dr = 1, er = 1;
        int rc = t_vae_tiled_vs_untiled(&e, cases[i][0], cases[i][1], cases[i][2], cases[i][3], &dr, &er);
        if (rc != SDX_OK) { t_vae_close(&e); T_CHECK(0, "case %d: %s", i, sdx_last_error(e.ctx)); }
        T_NOTE("latent %dx%d, tiles %dx%d: decode rel-L2 %.2e, encode %.2e", cases[i][0], cases[i][1], cases[i][2], cases[i][3], dr, er);
        worst = dr > worst ? dr : worst;
        worst = er > worst ? er : worst;
    }
    t_vae_close(&e);
    T_CHECK(worst <= 1e-5, "tiled differs from untiled: worst rel-L2 %.3g", worst);
    return T_PASS;
}

/* Images whose sides are not multiples of 8 (the encoder floors each
 * level's size) encode the same tiled as untiled. */
static int tiled_encode_of_uneven_image_matches_untiled(void) {
    sdx__vae_tiling off = { -1, 0, 0, 0 }, on = { 1, 3, 2, 0 };
    t_vae_env e;
    sdx_tensor image, m_full, m_tiled;
    double rel;
    T_SKIP_IF(!t_vae_file(&t_vae_models[0], NULL), "golden sd1 checkpoint not found under %s", t_shared_dir());
    T_CHECK(t_vae_open_sd1(&e) == SDX_OK, "load: %s", sdx_last_error(e.ctx));
    t_seed(23);
    T_CHECK(sdx_tensor_alloc(e.ctx, &image, SDX_F32, 4, (int64_t[]){ 1, 3, 61, 45 }) == SDX_OK, "alloc");
    T_CHECK(sdx_tensor_alloc(e.ctx, &m_full, SDX_F32, 4, (int64_t[]){ 1, 4, 7, 5 }) == SDX_OK, "alloc");
    T_CHECK(sdx_tensor_alloc(e.ctx, &m_tiled, SDX_F32, 4, (int64_t[]){ 1, 4, 7, 5 }) == SDX_OK, "alloc");
    t_smooth_image((float *)image.data, 61, 45);
    T_CHECK(sdx__vae_encode(e.ctx, &e.vae, &e.arena, &image, &m_full, NULL, &off) == SDX_OK, "%s", sdx_last_error(e.ctx));
    T_CHECK(sdx__vae_encode(e.ctx, &e.vae, &e.arena, &image, &m_tiled, NULL, &on) == SDX_OK, "%s", sdx_last_error(e.ctx));
    rel = t_rel_l2_f32((const float *)m_tiled.data, (const float *)m_full.data, 4 * 7 * 5);
    T_NOTE("61x45 image in 3x3 tiles: mean rel-L2 %.2e", rel);
    sdx_tensor_free(e.ctx, &image);
    sdx_tensor_free(e.ctx, &m_full);
    sdx_tensor_free(e.ctx, &m_tiled);
    t_vae_close(&e);
    T_CHECK(rel <= 1e-5, "tiled encode differs from untiled: rel-L2 %.3g", rel);
    return T_PASS;
}

/* The size: 512x512 in 2x2 tiles of 32 latent pixels (sd-cli's default tile). */
static int tiled_512px_matches_untiled(void) {
    t_vae_env e;
    double dr = 1, er = 1;
    T_SKIP_IF(!t_vae_file(&t_vae_models[0], NULL), "golden sd1 checkpoint not found under %s", t_shared_dir());
    T_CHECK(t_vae_open_sd1(&e) == SDX_OK, "load: %s", sdx_last_error(e.ctx));
    if (t_vae_tiled_vs_untiled(&e, 64, 64, 32, 32, &dr, &er) != SDX_OK) { t_vae_close(&e); T_CHECK(0, "%s", sdx_last_error(e.ctx)); }
    T_NOTE("sd1 512x512 in 2x2 tiles: decode rel-L2 %.2e, encode (mean) rel-L2 %.2e", dr, er);
    t_vae_close(&e);
    T_CHECK(dr <= 1e-3 && er <= 1e-3, "tiled differs from untiled: decode %.3g, encode %.3g", dr, er);
    return T_PASS;
}

/* In low-memory mode a tiled decode never makes an Upsample's plane (the
 * largest): each Upsample runs per tile, fused with the ResBlock after
 * it. The image is the untiled one to float rounding, like any tiled
 * decode, and the host planes peak lower than the plain tiled pass's. */
static int low_memory_tiled_decode_skips_the_upsampled_planes(void) {
    sdx__vae_tiling off = { -1, 0, 0, 0 }, on = { 1, 6, 6, 0 };
    sdx_tensor full, plain, fused;
    size_t plain_peak, fused_peak;
    double rel_plain, rel_fused;
    t_vae_env e;
    T_SKIP_IF(!t_vae_file(&t_vae_models[0], NULL), "golden sd1 checkpoint not found under %s", t_shared_dir());
    T_CHECK(t_vae_open_sd1(&e) == SDX_OK, "load: %s", sdx_last_error(e.ctx));
    if (t_vae_decode_random(&e, 12, 10, 31, &off, &full) != SDX_OK || t_vae_decode_random(&e, 12, 10, 31, &on, &plain) != SDX_OK) {
        t_vae_close(&e);
        T_CHECK(0, "%s", sdx_last_error(e.ctx));
    }
    plain_peak = e.vae.tiled_plane_peak;
    e.vae.low_memory = 1;
    if (t_vae_decode_random(&e, 12, 10, 31, &on, &fused) != SDX_OK) { t_vae_close(&e); T_CHECK(0, "%s", sdx_last_error(e.ctx)); }
    fused_peak = e.vae.tiled_plane_peak;
    rel_plain = t_rel_l2_f32((const float *)plain.data, (const float *)full.data, (size_t)sdx_tensor_numel(&full));
    rel_fused = t_rel_l2_f32((const float *)fused.data, (const float *)full.data, (size_t)sdx_tensor_numel(&full));
    sdx_tensor_free(e.ctx, &full);
    sdx_tensor_free(e.ctx, &plain);
    sdx_tensor_free(e.ctx, &fused);
    t_vae_close(&e);
    T_NOTE("96x80 in 2x2 tiles against untiled: plain tiles rel-L2 %.2e (planes %zu KB), low-memory %.2e (planes %zu KB)",
           rel_plain, plain_peak >> 10, rel_fused, fused_peak >> 10);
    T_CHECK(rel_fused <= 1e-5, "low-memory tiled decode differs from untiled: rel-L2 %.3g", rel_fused);
    T_CHECK(fused_peak < plain_peak, "low-memory planes peaked at %zu bytes, plain tiles at %zu", fused_peak, plain_peak);
    return T_PASS;
}

/* A decode whose tiling sdx chooses, and that runs out of memory untiled
 * (here: an allocator that refuses to hold more than the tiled decode
 * needs, less than the untiled one), is tried again in tiles and gives
 * the tiled image; one the caller asked untiled fails with
 * SDX_ERR_NOMEM. Each decode starts from an empty arena. */
static int t_vae_decode_measured(sdx_model *m, t_allocs *f, const sdx_tensor *latent, int tiling, sdx_image *out, size_t *need) {
    sdx_gen_params p;
    size_t before;
    int rc;
    memset(&p, 0, sizeof p);
    p.vae_tiling = tiling;
    sdx__arena_trim(&m->arena);
    before = f->peak = f->live;
    rc = sdx_decode_latent(m, latent, &p, out);
    if (need) *need = f->peak - before;
    return rc;
}

static int out_of_memory_decode_is_retried_in_tiles(void) {
    t_allocs f;
    sdx_ctx *ctx;
    sdx_model *m;
    sdx_tensor latent;
    sdx_image untiled, tiled, retried, refused;
    size_t untiled_need, tiled_need;
    int rc_retried, rc_refused, same;
    T_NEED_SHARED(ckpt, "golden/sd1/index.json");
    (void)ckpt;
    memset(&f, 0, sizeof f);
    ctx = t_allocs_ctx(&f);
    T_CHECK(ctx && (m = t_model(ctx, "sd1")) != NULL, "load: %s", ctx ? sdx_last_error(ctx) : "no context");
    T_CHECK(sdx_tensor_alloc(ctx, &latent, SDX_F32, 4, (int64_t[]){ 1, 4, 64, 64 }) == SDX_OK, "alloc");
    t_seed(41);
    t_fill_normal((float *)latent.data, (size_t)sdx_tensor_numel(&latent), 1.0);
    T_CHECK(t_vae_decode_measured(m, &f, &latent, -1, &untiled, &untiled_need) == SDX_OK, "untiled: %s", sdx_last_error(ctx));
    T_CHECK(t_vae_decode_measured(m, &f, &latent, 1, &tiled, &tiled_need) == SDX_OK, "tiled: %s", sdx_last_error(ctx));
    T_CHECK(tiled_need < untiled_need, "the tiled decode held %zu bytes at most, the untiled one %zu", tiled_need, untiled_need);
    f.max_live = f.live + tiled_need + (untiled_need - tiled_need) / 2;
    rc_retried = t_vae_decode_measured(m, &f, &latent, 0, &retried, NULL);
    rc_refused = t_vae_decode_measured(m, &f, &latent, -1, &refused, NULL);
    same = rc_retried == SDX_OK && !memcmp(retried.data, tiled.data, (size_t)tiled.width * (size_t)tiled.height * 3);
    T_NOTE("512x512 decode: untiled it holds %zu KB at most, in 32x32 tiles %zu KB; with %zu KB: auto %s, untiled %s",
           untiled_need >> 10, tiled_need >> 10, (untiled_need + tiled_need) / 2 >> 10, sdx_result_name(rc_retried),
           sdx_result_name(rc_refused));
    sdx_image_free(ctx, &untiled);
    sdx_image_free(ctx, &tiled);
    if (rc_retried == SDX_OK) sdx_image_free(ctx, &retried);
    if (rc_refused == SDX_OK) sdx_image_free(ctx, &refused);
    sdx_tensor_free(ctx, &latent);
    sdx_model_free(m);
    sdx_destroy(ctx);
    T_CHECK(rc_retried == SDX_OK, "the auto-tiled decode did not recover from running out of memory: %s", sdx_result_name(rc_retried));
    T_CHECK(same, "the retried decode is not the tiled image");
    T_CHECK(rc_refused == SDX_ERR_NOMEM, "the decode asked untiled gave %s, not SDX_ERR_NOMEM", sdx_result_name(rc_refused));
    return T_PASS;
}

/* The arena (device memory on a GPU) holds one tile's temporaries, which
 * do not grow with the image, or the mid block at latent size (1/64 of
 * the pixels), so it grows far slower than the untiled pass's: at 9x the
 * pixels, by less than an eighth of the untiled growth. The host planes
 * of a tiled pass grow with the image (each is one whole activation). */
static int tiled_working_set_bounded(void) {
    sdx__vae_tiling off = { -1, 0, 0, 0 }, on = { 1, 8, 8, 0 };
    size_t tiled[2], untiled[2], planes[2];
    t_vae_env e;
    T_SKIP_IF(!t_vae_file(&t_vae_models[0], NULL), "golden sd1 checkpoint not found under %s", t_shared_dir());
    for (int k = 0; k < 2; k++) {
        int64_t side = k ? 48 : 16;
        sdx_tensor out;
        for (int tiledp = 0; tiledp < 2; tiledp++) {
            T_CHECK(t_vae_open_sd1(&e) == SDX_OK, "load: %s", sdx_last_error(e.ctx));
            if (t_vae_decode_random(&e, side, side, 4, tiledp ? &on : &off, &out) != SDX_OK) {
                t_vae_close(&e);
                T_CHECK(0, "%s", sdx_last_error(e.ctx));
            }
            sdx_tensor_free(e.ctx, &out);
            (tiledp ? tiled : untiled)[k] = e.arena.peak;
            if (tiledp) planes[k] = e.vae.tiled_plane_peak;
            t_vae_close(&e);
        }
        T_NOTE("%lldx%lld decode: arena peak untiled %zu KB, tiled %zu KB (+ host planes %zu KB)", (long long)side * 8,
               (long long)side * 8, untiled[k] >> 10, tiled[k] >> 10, planes[k] >> 10);
    }
    T_CHECK(untiled[1] > 8 * untiled[0], "untiled peak should grow with the area: %zu -> %zu", untiled[0], untiled[1]);
    T_CHECK(tiled[1] - tiled[0] < (untiled[1] - untiled[0]) / 8, "tiled arena peak grew from %zu to %zu bytes for 9x the pixels",
            tiled[0], tiled[1]);
    T_CHECK(tiled[1] < untiled[1] / 4, "tiled arena peak %zu not well below untiled %zu", tiled[1], untiled[1]);
    return T_PASS;
}

/* ---- standalone files ----------------------------------------------- */

typedef int (*t_vae_rename_fn)(const char *ldm, char *out, size_t size);

/* Writes sd1's first_stage_model.* tensors to `path`, renamed by
 * `rename` (0 = drop the tensor). `edit` may replace one tensor. */
static int t_vae_write_sd1(const char *path, t_vae_rename_fn rename, const char *edit_name, const sdx_tensor *edit) {
    static const char prefix[] = "first_stage_model.";
    const char *ckpt = t_vae_file(&t_vae_models[0], NULL);
    sdx_ctx *ctx;
    sdx_st *st = NULL;
    sdx_tensor *ts;
    char(*names)[160];
    int n, k = 0, rc;
    T_SKIP_IF(!ckpt, "golden sd1 checkpoint not found under %s", t_shared_dir());
    ctx = t_ctx();
    T_CHECK(ctx && sdx_st_open(ctx, ckpt, &st) == SDX_OK, "open %s", ckpt);
    n = sdx_st_count(st);
    ts = (sdx_tensor *)calloc((size_t)n, sizeof *ts);
    names = (char(*)[160])calloc((size_t)n, 160);
    T_CHECK(ts && names, "alloc");
    for (int i = 0; i < n; i++) {
        const sdx_tensor *t = sdx_st_get(st, i);
        if (strncmp(t->name, prefix, sizeof prefix - 1)) continue;
        if (!rename(t->name + sizeof prefix - 1, names[k], sizeof names[k])) continue;
        ts[k] = edit_name && !strcmp(names[k], edit_name) ? *edit : *t;
        ts[k].owned = 0;
        ts[k].name = names[k];
        /* diffusers stores attention projections as linear [C, C] */
        if (strstr(names[k], "attentions.0.to_") && strstr(names[k], ".weight") && ts[k].ndim == 4) ts[k].ndim = 2;
        k++;
    }
    rc = sdx_st_write(ctx, path, ts, k, NULL, 0);
    if (rc != SDX_OK) snprintf(t_msg, sizeof t_msg, "write %s: %s", path, sdx_last_error(ctx));
    free(ts);
    free(names);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return rc == SDX_OK ? T_PASS : T_FAIL;
}

static int t_keep(const char *ldm, char *out, size_t size) { snprintf(out, size, "%s", ldm); return 1; }
static int t_decoder_only(const char *ldm, char *out, size_t size) {
    if (!strncmp(ldm, "encoder.", 8) || !strncmp(ldm, "quant_conv.", 11)) return 0;
    return t_keep(ldm, out, size);
}
static int t_encoder_only(const char *ldm, char *out, size_t size) {
    if (strncmp(ldm, "encoder.", 8)) return 0;
    return t_keep(ldm, out, size);
}

/* Maps an LDM VAE key to the diffusers AutoencoderKL key (4 levels). */
static int t_to_diffusers(const char *k, char *out, size_t size) {
    int i, j;
    char rest[96], coder[16];
    const char *sub;
    if (sscanf(k, "decoder.up.%d.block.%d.%95s", &i, &j, rest) == 3) {
        sub = strncmp(rest, "nin_shortcut", 12) ? rest : rest + 12;
        snprintf(out, size, "decoder.up_blocks.%d.resnets.%d.%s%s", 3 - i, j, sub == rest ? "" : "conv_shortcut", sub);
    } else if (sscanf(k, "encoder.down.%d.block.%d.%95s", &i, &j, rest) == 3) {
        sub = strncmp(rest, "nin_shortcut", 12) ? rest : rest + 12;
        snprintf(out, size, "encoder.down_blocks.%d.resnets.%d.%s%s", i, j, sub == rest ? "" : "conv_shortcut", sub);
    } else if (sscanf(k, "decoder.up.%d.upsample.conv.%95s", &i, rest) == 2) {
        snprintf(out, size, "decoder.up_blocks.%d.upsamplers.0.conv.%s", 3 - i, rest);
    } else if (sscanf(k, "encoder.down.%d.downsample.conv.%95s", &i, rest) == 2) {
        snprintf(out, size, "encoder.down_blocks.%d.downsamplers.0.conv.%s", i, rest);
    } else if (sscanf(k, "%15[a-z].mid.block_%d.%95s", coder, &i, rest) == 3) {
        snprintf(out, size, "%s.mid_block.resnets.%d.%s", coder, i - 1, rest);
    } else if (sscanf(k, "%15[a-z].mid.attn_1.%95s", coder, rest) == 2) {
        static const char *const map[5][2] = {
            { "norm.", "group_norm." }, { "q.", "to_q." }, { "k.", "to_k." }, { "v.", "to_v." }, { "proj_out.", "to_out.0." } };
        for (int m = 0; m < 5; m++)
            if (!strncmp(rest, map[m][0], strlen(map[m][0])))
                snprintf(out, size, "%s.mid_block.attentions.0.%s%s", coder, map[m][1], rest + strlen(map[m][0]));
    } else if (sscanf(k, "%15[a-z].norm_out.%95s", coder, rest) == 2) {
        snprintf(out, size, "%s.conv_norm_out.%s", coder, rest);
    } else {
        snprintf(out, size, "%s", k);
    }
    return 1;
}

/* Decodes golden decode case 0 of sd1 with the VAE of `path`. */
static int t_vae_decode_case0(const char *path, const char *prefix, sdx_tensor *out, char *err, size_t err_size) {
    t_vae_env e;
    sdx_st *g = NULL;
    sdx_tensor z;
    int rc = t_vae_open_path(&e, path, prefix);
    memset(out, 0, sizeof *out);
    if (rc == SDX_OK) rc = sdx_st_open(e.ctx, t_vae_file(&t_vae_models[0], "vae_decode_case0"), &g);
    if (rc == SDX_OK) rc = sdx_st_read_f32(e.ctx, g, "z", &z);
    if (rc == SDX_OK) {
        rc = sdx_tensor_alloc(NULL, out, SDX_F32, 4, (int64_t[]){ 1, 3, z.shape[2] * 8, z.shape[3] * 8 });
        if (rc == SDX_OK) rc = sdx__vae_decode(e.ctx, &e.vae, &e.arena, &z, out, NULL);
        sdx_tensor_free(e.ctx, &z);
    }
    snprintf(err, err_size, "%s", rc == SDX_OK ? "" : sdx_last_error(e.ctx));
    sdx_st_close(g);
    t_vae_close(&e);
    return rc;
}

/* Writes sd1's VAE as a standalone file through `rename` and checks that
 * decoding through it is bit-identical to the checkpoint. */
static int t_vae_standalone(t_vae_rename_fn rename, const char *path) {
    const char *ckpt = t_vae_file(&t_vae_models[0], NULL);
    sdx_tensor a, b;
    char err[1024];
    int rc, same;
    T_SKIP_IF(!ckpt || !t_vae_file(&t_vae_models[0], "vae_decode_case0"), "golden sd1 data not found under %s", t_shared_dir());
    if ((rc = t_vae_write_sd1(path, rename, NULL, NULL)) != T_PASS) return rc;
    T_CHECK(t_vae_decode_case0(ckpt, "first_stage_model.", &a, err, sizeof err) == SDX_OK, "checkpoint: %s", err);
    rc = t_vae_decode_case0(path, NULL, &b, err, sizeof err);
    if (rc != SDX_OK) { sdx_tensor_free(NULL, &a); T_CHECK(0, "standalone %s: %s", path, err); }
    same = !memcmp(a.data, b.data, sdx_tensor_nbytes(&a));
    sdx_tensor_free(NULL, &a);
    sdx_tensor_free(NULL, &b);
    remove(path);
    T_CHECK(same, "standalone VAE file decodes differently from the checkpoint");
    return T_PASS;
}

static int standalone_vae_file_identical(void) { return t_vae_standalone(t_keep, t_vae_tmp("standalone")); }
static int diffusers_layout_identical(void) { return t_vae_standalone(t_to_diffusers, t_vae_tmp("diffusers")); }

/* Writes a variant of sd1's VAE and expects loading it to fail with a
 * message containing every string of `want`. */
static int t_vae_bad_file(t_vae_rename_fn rename, const char *edit_name, const sdx_tensor *edit, const char *const *want,
                          int n_want) {
    const char *path = t_vae_tmp("bad");
    t_vae_env e;
    char err[1024];
    int rc;
    if ((rc = t_vae_write_sd1(path, rename, edit_name, edit)) != T_PASS) return rc;
    rc = t_vae_open_path(&e, path, NULL);
    snprintf(err, sizeof err, "%s", sdx_last_error(e.ctx));
    T_NOTE("error: %s", err);
    t_vae_close(&e);
    remove(path);
    T_CHECK(rc == SDX_ERR_MODEL, "loading succeeded or failed otherwise (%d)", rc);
    for (int i = 0; i < n_want; i++) T_CHECK(strstr(err, want[i]), "message lacks '%s': %s", want[i], err);
    return T_PASS;
}

static int wrong_latent_channels_rejected(void) {
    static float w16[4 * 16];
    sdx_tensor pq = sdx__view4(SDX_F32, w16, 4, 16, 1, 1);
    static const char *const want[] = { "sdx_t_vae_bad_", "post_quant_conv.weight", "16 channels" };
    return t_vae_bad_file(t_keep, "post_quant_conv.weight", &pq, want, 3);
}

static int missing_decoder_rejected(void) {
    static const char *const want[] = { "sdx_t_vae_bad_", "no VAE decoder", "decoder.mid.block_1.conv1.weight" };
    return t_vae_bad_file(t_encoder_only, NULL, NULL, want, 3);
}

static int misshaped_tensor_named(void) {
    static float w[64 * 64 * 9];
    sdx_tensor t = sdx__view4(SDX_F32, w, 64, 32, 3, 3);
    static const char *const want[] = { "decoder.up.2.block.1.conv2.weight", "expected shape [64, 64, 3, 3]", "[64, 32, 3, 3]" };
    return t_vae_bad_file(t_keep, "decoder.up.2.block.1.conv2.weight", &t, want, 3);
}

/* A decoder-only file (enough for txt2img) loads; encoding says why not. */
static int decoder_only_file_decodes(void) {
    const char *path = t_vae_tmp("deconly");
    t_vae_env e;
    sdx_tensor img, mean;
    char err[1024];
    int rc, rc_dec, rc_enc;
    if ((rc = t_vae_write_sd1(path, t_decoder_only, NULL, NULL)) != T_PASS) return rc;
    rc = t_vae_open_path(&e, path, NULL);
    remove(path);
    if (rc != SDX_OK) { t_vae_close(&e); T_CHECK(0, "load: %s", sdx_last_error(e.ctx)); }
    rc_dec = t_vae_decode_random(&e, 2, 3, 1, NULL, &img);
    rc_enc = sdx_tensor_alloc(e.ctx, &mean, SDX_F32, 4, (int64_t[]){ 1, 4, 2, 3 });
    if (rc_enc == SDX_OK) rc_enc = sdx__vae_encode(e.ctx, &e.vae, &e.arena, &img, &mean, NULL, NULL);
    snprintf(err, sizeof err, "%s", sdx_last_error(e.ctx));
    T_NOTE("encode error: %s", err);
    sdx_tensor_free(e.ctx, &img);
    sdx_tensor_free(e.ctx, &mean);
    T_CHECK(!e.vae.has_encoder, "has_encoder set");
    t_vae_close(&e);
    T_CHECK(rc_dec == SDX_OK, "decode failed");
    T_CHECK(rc_enc == SDX_ERR_MODEL && strstr(err, "no encoder"), "encode: %d %s", rc_enc, err);
    return T_PASS;
}

static const t_case vae_cases[] = {
    { "hyperparameters_read_from_shapes", hyperparameters_read_from_shapes },
    { "scale_factor_by_family", scale_factor_by_family },
    { "sd1_goldens_f32", sd1_goldens_f32 },
    { "sd2_bf16_checkpoint_goldens_f32", sd2_bf16_checkpoint_goldens_f32 },
    { "sdxl_goldens_f32", sdxl_goldens_f32 },
    { "sd1_goldens_f16_storage", sd1_goldens_f16_storage },
    { "sd2_goldens_f16_storage", sd2_goldens_f16_storage },
    { "sdxl_goldens_f16_storage", sdxl_goldens_f16_storage },
    { "sd1_goldens_bf16_storage", sd1_goldens_bf16_storage },
    { "sd2_goldens_bf16_storage", sd2_goldens_bf16_storage },
    { "sdxl_goldens_bf16_storage", sdxl_goldens_bf16_storage },
    { "single_tile_equals_full", single_tile_equals_full },
    { "auto_tiling_follows_budget", auto_tiling_follows_budget },
    { "memory_estimate_matches_arena_peak", memory_estimate_matches_arena_peak },
    { "sd1_tiled_decode_and_encode_match_untiled", sd1_tiled_decode_and_encode_match_untiled },
    { "sdxl_tiled_decode_and_encode_match_untiled", sdxl_tiled_decode_and_encode_match_untiled },
    { "tiles_of_any_size_and_count_match_untiled", tiles_of_any_size_and_count_match_untiled },
    { "tiled_encode_of_uneven_image_matches_untiled", tiled_encode_of_uneven_image_matches_untiled },
    { "tiled_512px_matches_untiled", tiled_512px_matches_untiled },
    { "low_memory_tiled_decode_skips_the_upsampled_planes", low_memory_tiled_decode_skips_the_upsampled_planes },
    { "out_of_memory_decode_is_retried_in_tiles", out_of_memory_decode_is_retried_in_tiles },
    { "tiled_working_set_bounded", tiled_working_set_bounded },
    { "standalone_vae_file_identical", standalone_vae_file_identical },
    { "diffusers_layout_identical", diffusers_layout_identical },
    { "decoder_only_file_decodes", decoder_only_file_decodes },
    { "wrong_latent_channels_rejected", wrong_latent_channels_rejected },
    { "missing_decoder_rejected", missing_decoder_rejected },
    { "misshaped_tensor_named", misshaped_tensor_named },
    { 0, 0 }
};
SDX_TEST_SUITE(vae, vae_cases)

/* Suite "text": CLIP ViT-L, OpenCLIP and SDXL conditioning against the
 * golden data (shared/golden/{sd1,sd2,sdxl}), precision policies, and the
 * errors a broken checkpoint must produce. */
#include "test.h"
#include <unistd.h>

/* Everything a text test holds; t_te_close releases what is set. */
typedef struct t_te {
    sdx_ctx *ctx;
    sdx_st *model, *cases;
    sdx__textenc te;
    int te_loaded;
    sdx__arena arena;
} t_te;

static void t_te_close(t_te *t) {
    if (t->te_loaded) sdx__textenc_free(t->ctx, &t->te);
    sdx__arena_free(&t->arena);
    if (t->cases) sdx_st_close(t->cases);
    if (t->model) sdx_st_close(t->model);
    if (t->ctx) sdx_destroy(t->ctx);
    memset(t, 0, sizeof *t);
}

/* Opens a checkpoint (and optionally a case file) and loads its text
 * encoders with the given weight storage type. */
static int t_te_open(t_te *t, const char *model, const char *cases, int weight_type) {
    memset(t, 0, sizeof *t);
    t->ctx = t_ctx();
    if (!t->ctx) return SDX_ERR_NOMEM;
    sdx__arena_init(&t->arena, t->ctx, (size_t)4 << 20);
    if (sdx_st_open(t->ctx, model, &t->model) != SDX_OK) return SDX_ERR_IO;
    if (cases && sdx_st_open(t->ctx, cases, &t->cases) != SDX_OK) return SDX_ERR_IO;
    if (sdx__textenc_load_as(t->ctx, &t->te, t->model, weight_type) != SDX_OK) return SDX_ERR_MODEL;
    t->te_loaded = 1;
    return SDX_OK;
}

/* Token ids of a golden tensor (I32 or I64) as int32. */
static int32_t *t_te_ids(t_te *t, const char *name, int64_t *count) {
    sdx_tensor f;
    int32_t *ids;
    if (sdx_st_read_f32(t->ctx, t->cases, name, &f) != SDX_OK) return NULL;
    *count = sdx_tensor_numel(&f);
    ids = (int32_t *)malloc((size_t)*count * sizeof *ids);
    for (int64_t i = 0; ids && i < *count; i++) ids[i] = (int32_t)((float *)f.data)[i];
    sdx_tensor_free(t->ctx, &f);
    return ids;
}

/* rel-L2 of n floats against golden tensor `name` starting at element
 * `offset`; -1 if the golden cannot be read or is too short. */
static double t_te_rel(t_te *t, const char *name, int64_t offset, const float *got, int64_t n) {
    sdx_tensor g;
    double r = -1;
    if (sdx_st_read_f32(t->ctx, t->cases, name, &g) != SDX_OK) return -1;
    if (offset + n <= sdx_tensor_numel(&g)) r = t_rel_l2_f32(got, (const float *)g.data + offset, (size_t)n);
    sdx_tensor_free(t->ctx, &g);
    return r;
}

/* Copy of a [B, T, W] activation as f32 (the test owns the result). */
static float *t_te_f32(const sdx_tensor *x) {
    int64_t n = sdx_tensor_numel(x);
    float *f = (float *)malloc((size_t)n * sizeof *f);
    if (f) sdx__load_f32(x->data, x->dtype, 0, n, f);
    return f;
}

static int t_te_finite(const float *x, int64_t n) {
    for (int64_t i = 0; i < n; i++) if (!isfinite(x[i])) return 0;
    return 1;
}

/* ---- SD 1.x: CLIP ViT-L (HF layout) ------------------------------------ */

#define T_TE_SD1_MODEL "golden/sd1/model.safetensors"
#define T_TE_SD2_MODEL "golden/sd2/model.safetensors"
#define T_TE_XL_MODEL  "golden/sdxl/model.safetensors"

/* t_te_open on the golden checkpoint and text-encoder cases of an area
 * ("sd1", "sd2"); T_SKIP without them. */
static int t_te_open_golden(t_te *t, const char *area, int weight_type) {
    char model[64], cases[80];
    snprintf(model, sizeof model, "golden/%s/model.safetensors", area);
    snprintf(cases, sizeof cases, "golden/%s/cases/text_encoder.safetensors", area);
    T_SKIP_IF(!t_shared(model) || !t_shared(cases), "golden data %s/golden/%s not found", t_shared_dir(), area);
    T_CHECK(t_te_open(t, t_shared(model), t_shared(cases), weight_type) == SDX_OK, "open: %s", sdx_last_error(t->ctx));
    return T_PASS;
}

static int sd1_detects_clip_l_from_shapes(void) {
    T_NEED_SHARED(model, T_TE_SD1_MODEL);
    t_te t;
    int rc = t_te_open(&t, model, NULL, SDX_AUTO);
    T_CHECK(rc == SDX_OK, "load: %s", t.ctx ? sdx_last_error(t.ctx) : "no ctx");
    T_CHECK(t.te.family == SDX_FAMILY_SD1 && t.te.n_enc == 1, "family %d, %d encoders", t.te.family, t.te.n_enc);
    T_CHECK(t.te.context_dim == 64 && t.te.pooled_dim == 64 && t.te.n_ctx == 77, "dims %d %d %d",
            t.te.context_dim, t.te.pooled_dim, t.te.n_ctx);
    T_CHECK(t.te.enc[0].n_layers == 4 && t.te.enc[0].heads == 1 && t.te.enc[0].mlp == 256,
            "layers %d heads %d mlp %d", t.te.enc[0].n_layers, t.te.enc[0].heads, t.te.enc[0].mlp);
    t_te_close(&t);
    return T_PASS;
}

/* Runs the embedding and every layer of encoder `e` on `ids` (B chunks)
 * and compares hidden state k with the golden: slice k of "hidden_states"
 * [L+1, B, T, W] when `prefix` is NULL, else tensor prefix + k. */
static int t_te_hidden(t_te *t, int e, const int32_t *ids, int64_t B, const char *prefix, double tol,
                       const char *label) {
    const sdx__clip *c = &t->te.enc[e];
    sdx_tensor x;
    int64_t n = B * c->n_ctx * c->width;
    if (!sdx__arena_tensor3(&t->arena, &x, (sdx_dtype)t->te.act_type, B, c->n_ctx, c->width)) return 0;
    if (sdx__clip_embed(t->ctx, c, &t->arena, ids, &x) != SDX_OK) return 0;
    for (int k = 0; k <= c->n_layers; k++) {
        char name[64];
        float *got;
        double r;
        if (k > 0 && sdx__clip_block_forward(t->ctx, c, k - 1, &t->arena, &x, SDX_F32) != SDX_OK) return 0;
        if (prefix) snprintf(name, sizeof name, "%s%d", prefix, k);
        else snprintf(name, sizeof name, "hidden_states");
        got = t_te_f32(&x);
        r = got ? t_te_rel(t, name, prefix ? 0 : k * n, got, n) : -1;
        free(got);
        T_NOTE("%s hidden %d: rel-L2 %.2e", label, k, r);
        if (r < 0 || r > tol) return 0;
    }
    sdx__arena_reset(&t->arena);
    return 1;
}

/* Every hidden state of the area's encoder on the 4 golden prompts. */
static int t_te_hidden_golden(const char *area) {
    t_te t;
    int64_t n_ids;
    int32_t *ids;
    int ok, r;
    if ((r = t_te_open_golden(&t, area, SDX_AUTO)) != T_PASS) return r;
    ids = t_te_ids(&t, "tokens", &n_ids);
    T_CHECK(ids && n_ids == 4 * 77, "tokens");
    ok = t_te_hidden(&t, 0, ids, 4, NULL, 1e-4, area);
    free(ids);
    T_CHECK(ok, "hidden states differ (see -v) %s", sdx_last_error(t.ctx));
    t_te_close(&t);
    return T_PASS;
}

static int sd1_hidden_states_match_golden_per_layer(void) { return t_te_hidden_golden("sd1"); }

/* Encodes the 4 golden prompts as 4 chunks of one call and compares the
 * context with golden `name` (tol <= 0: only finiteness is required). */
static int t_te_context(const char *area, const char *name, int clip_skip, int weight_type, int act_type, double tol,
                        const char *label) {
    t_te t;
    sdx_tensor context;
    int64_t n_ids;
    int32_t *ids;
    double r;
    int rc;
    if ((rc = t_te_open_golden(&t, area, weight_type)) != T_PASS) return rc;
    t.te.act_type = act_type;
    ids = t_te_ids(&t, "tokens", &n_ids);
    T_CHECK(ids && n_ids == 4 * 77, "tokens");
    T_CHECK(sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, ids, NULL, 4, clip_skip, &context, NULL) == SDX_OK,
            "encode: %s", sdx_last_error(t.ctx));
    free(ids);
    T_CHECK(context.ndim == 2 && context.shape[0] == 4 * 77 && context.shape[1] == t.te.context_dim,
            "context shape");
    T_CHECK(t_te_finite((const float *)context.data, sdx_tensor_numel(&context)), "non-finite context");
    r = t_te_rel(&t, name, 0, (const float *)context.data, sdx_tensor_numel(&context));
    if (tol > 0) T_NOTE("%s %s: rel-L2 %.2e (tolerance %.0e)", label, name, r, tol);
    else T_NOTE("%s %s: rel-L2 %.2e (reported, not checked)", label, name, r);
    T_CHECK(r >= 0 && (tol <= 0 || r <= tol), "%s %s rel-L2 %.3e > %.0e", label, name, r, tol);
    sdx_tensor_free(t.ctx, &context);
    t_te_close(&t);
    return T_PASS;
}

static int sd1_context_matches_golden(void) { return t_te_context("sd1", "context", 0, SDX_AUTO, SDX_F32, 1e-4, "sd1"); }

static int sd1_clip_skip2_uses_penultimate_layer_then_final_norm(void) {
    return t_te_context("sd1", "context_clip_skip2", 2, SDX_AUTO, SDX_F32, 1e-4, "sd1");
}

/* Encodes each golden prompt alone with a pooled output and compares. */
static int t_te_pooled(const char *area) {
    t_te t;
    int64_t n_ids;
    int32_t *ids;
    double worst = 0;
    int rc;
    if ((rc = t_te_open_golden(&t, area, SDX_AUTO)) != T_PASS) return rc;
    ids = t_te_ids(&t, "tokens", &n_ids);
    T_CHECK(ids && n_ids == 4 * 77, "tokens");
    for (int b = 0; b < 4; b++) {
        sdx_tensor context, pooled;
        double r;
        T_CHECK(sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, ids + b * 77, NULL, 1, 0, &context, &pooled) == SDX_OK,
                "encode: %s", sdx_last_error(t.ctx));
        T_CHECK(pooled.ndim == 1 && pooled.shape[0] == t.te.pooled_dim, "pooled shape");
        r = t_te_rel(&t, "pooled", (int64_t)b * t.te.pooled_dim, (const float *)pooled.data, t.te.pooled_dim);
        T_CHECK(r >= 0 && r <= 1e-4, "%s pooled[%d] rel-L2 %.3e", area, b, r);
        if (r > worst) worst = r;
        sdx_tensor_free(t.ctx, &context);
        sdx_tensor_free(t.ctx, &pooled);
    }
    T_NOTE("%s pooled: worst rel-L2 over 4 prompts %.2e", area, worst);
    free(ids);
    t_te_close(&t);
    return T_PASS;
}

/* The non-finite tracer names every layer as it runs; with it on, the
 * result must be unchanged. */
static int sd1_tracer_on_changes_nothing(void) {
    t_te t;
    sdx_tensor context;
    int64_t n_ids;
    int32_t *ids;
    double r;
    int rc;
    if ((rc = t_te_open_golden(&t, "sd1", SDX_AUTO)) != T_PASS) return rc;
    sdx_set_trace(t.ctx, 1);
    ids = t_te_ids(&t, "tokens", &n_ids);
    T_CHECK(ids && n_ids == 4 * 77, "tokens");
    T_CHECK(sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, ids, NULL, 4, 0, &context, NULL) == SDX_OK,
            "encode with tracer: %s", sdx_last_error(t.ctx));
    r = t_te_rel(&t, "context", 0, (const float *)context.data, sdx_tensor_numel(&context));
    T_CHECK(r >= 0 && r <= 1e-4, "rel-L2 %.3e", r);
    free(ids);
    sdx_tensor_free(t.ctx, &context);
    t_te_close(&t);
    return T_PASS;
}

static int sd1_pooled_is_final_norm_of_first_eos(void) { return t_te_pooled("sd1"); }

/* ---- SD 2.x: OpenCLIP ViT-H layout ----------------------------------- */

static int sd2_detects_openclip_from_shapes(void) {
    T_NEED_SHARED(model, T_TE_SD2_MODEL);
    t_te t;
    T_CHECK(t_te_open(&t, model, NULL, SDX_AUTO) == SDX_OK, "load: %s", sdx_last_error(t.ctx));
    T_CHECK(t.te.family == SDX_FAMILY_SD2 && t.te.context_dim == 128 && t.te.pooled_dim == 128,
            "family %d dims %d %d", t.te.family, t.te.context_dim, t.te.pooled_dim);
    T_CHECK(t.te.enc[0].heads == 2 && t.te.enc[0].n_layers == 4 && t.te.enc[0].mlp == 512 && t.te.enc[0].pad_id == 0,
            "heads %d layers %d mlp %d pad %d", t.te.enc[0].heads, t.te.enc[0].n_layers, t.te.enc[0].mlp,
            t.te.enc[0].pad_id);
    t_te_close(&t);
    return T_PASS;
}

static int sd2_hidden_states_match_golden_per_layer(void) { return t_te_hidden_golden("sd2"); }

static int sd2_context_is_ln_final_of_penultimate_layer(void) {
    return t_te_context("sd2", "context", 0, SDX_AUTO, SDX_F32, 1e-4, "sd2");
}

static int sd2_pooled_is_projected_first_eos(void) { return t_te_pooled("sd2"); }

/* ---- SDXL: CLIP-L + OpenCLIP bigG + vector y ---------------------------- */

/* Checks one SDXL text case completely: hidden states of both encoders,
 * the tokens_g padding, context, pooled and the vector y. */
static int t_te_sdxl_case(int i, int act_type, double tol) {
    char rel[64];
    const char *model = t_shared(T_TE_XL_MODEL), *cases;
    t_te t;
    sdx_tensor context, pooled, size_cond;
    int64_t n_l, n_g;
    int32_t *ids_l, *ids_g, repadded[77];
    float y[1664];
    double r_ctx, r_pool, r_y;
    snprintf(rel, sizeof rel, "golden/sdxl/cases/text_%d.safetensors", i);
    cases = t_shared(rel);
    T_SKIP_IF(!model || !cases, "golden data %s/%s not found", t_shared_dir(), rel);
    T_CHECK(t_te_open(&t, model, cases, SDX_AUTO) == SDX_OK, "open: %s", sdx_last_error(t.ctx));
    T_CHECK(t.te.family == SDX_FAMILY_SDXL && t.te.context_dim == 192 && t.te.pooled_dim == 128, "family/dims");
    t.te.act_type = act_type;
    ids_l = t_te_ids(&t, "tokens_l", &n_l);
    ids_g = t_te_ids(&t, "tokens_g", &n_g);
    T_CHECK(ids_l && ids_g && n_l == 77 && n_g == 77, "tokens");
    /* OpenCLIP pads with 0 after the first EOS: the encoder's re-padding
     * of the CLIP-L ids must give exactly tokens_g */
    sdx__clip_repad(&t.te.enc[1], ids_l, repadded, 1);
    T_CHECK(!memcmp(repadded, ids_g, sizeof repadded), "re-padded CLIP-L ids differ from tokens_g");
    if (act_type == SDX_F32) {
        T_CHECK(t_te_hidden(&t, 0, ids_l, 1, "clip_l.hidden.", tol, "clip_l"), "clip_l hidden (see -v)");
        T_CHECK(t_te_hidden(&t, 1, ids_g, 1, "clip_g.hidden.", tol, "clip_g"), "clip_g hidden (see -v)");
    }
    T_CHECK(sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, ids_l, NULL, 1, 0, &context, &pooled) == SDX_OK,
            "encode: %s", sdx_last_error(t.ctx));
    T_CHECK(sdx_st_read_f32(t.ctx, t.cases, "size_cond", &size_cond) == SDX_OK, "size_cond");
    T_CHECK(sdx__sdxl_vector(t.ctx, (const float *)pooled.data, 128, (const float *)size_cond.data, y, 1664) == SDX_OK,
            "vector: %s", sdx_last_error(t.ctx));
    r_ctx = t_te_rel(&t, "context", 0, (const float *)context.data, 77 * 192);
    r_pool = t_te_rel(&t, "pooled_g", 0, (const float *)pooled.data, 128);
    r_y = t_te_rel(&t, "vector_y", 0, y, 1664);
    T_NOTE("text_%d: context %.2e, pooled_g %.2e, vector_y %.2e (tolerance %.0e)", i, r_ctx, r_pool, r_y, tol);
    T_CHECK(r_ctx >= 0 && r_ctx <= tol, "context rel-L2 %.3e", r_ctx);
    T_CHECK(r_pool >= 0 && r_pool <= tol, "pooled rel-L2 %.3e", r_pool);
    T_CHECK(r_y >= 0 && r_y <= tol, "vector_y rel-L2 %.3e", r_y);
    free(ids_l);
    free(ids_g);
    sdx_tensor_free(t.ctx, &size_cond);
    sdx_tensor_free(t.ctx, &context);
    sdx_tensor_free(t.ctx, &pooled);
    t_te_close(&t);
    return T_PASS;
}

static int sdxl_text0_short_prompt_matches_golden(void) { return t_te_sdxl_case(0, SDX_F32, 1e-4); }
static int sdxl_text1_empty_prompt_matches_golden(void) { return t_te_sdxl_case(1, SDX_F32, 1e-4); }
static int sdxl_text2_size_and_crop_conditioning_match_golden(void) { return t_te_sdxl_case(2, SDX_F32, 1e-4); }
static int sdxl_text3_truncated_prompt_matches_golden(void) { return t_te_sdxl_case(3, SDX_F32, 1e-4); }

/* Two chunks in one call: the context stacks both, pooled is chunk 0's. */
static int sdxl_pooled_comes_from_first_chunk(void) {
    const char *model = t_shared(T_TE_XL_MODEL);
    const char *c0 = t_shared("golden/sdxl/cases/text_0.safetensors");
    const char *c2 = t_shared("golden/sdxl/cases/text_2.safetensors");
    t_te t;
    sdx_st *second;
    sdx_tensor context, pooled, g;
    int32_t ids[2 * 77], *a, *b;
    int64_t n;
    double r0, r1, rp;
    T_SKIP_IF(!model || !c0 || !c2, "golden data %s/golden/sdxl not found", t_shared_dir());
    T_CHECK(t_te_open(&t, model, c0, SDX_AUTO) == SDX_OK, "open: %s", sdx_last_error(t.ctx));
    T_CHECK(sdx_st_open(t.ctx, c2, &second) == SDX_OK, "open text_2");
    a = t_te_ids(&t, "tokens_l", &n);
    T_CHECK(a && n == 77, "tokens");
    memcpy(ids, a, sizeof *a * 77);
    free(a);
    {
        sdx_st *first = t.cases;
        t.cases = second;
        b = t_te_ids(&t, "tokens_l", &n);
        t.cases = first;
    }
    T_CHECK(b && n == 77, "tokens");
    memcpy(ids + 77, b, sizeof *b * 77);
    free(b);
    T_CHECK(sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, ids, NULL, 2, 0, &context, &pooled) == SDX_OK,
            "encode: %s", sdx_last_error(t.ctx));
    T_CHECK(context.shape[0] == 2 * 77 && context.shape[1] == 192, "context shape");
    r0 = t_te_rel(&t, "context", 0, (const float *)context.data, 77 * 192);
    rp = t_te_rel(&t, "pooled_g", 0, (const float *)pooled.data, 128);
    T_CHECK(sdx_st_read_f32(t.ctx, second, "context", &g) == SDX_OK, "read");
    r1 = t_rel_l2_f32((const float *)context.data + 77 * 192, (const float *)g.data, 77 * 192);
    sdx_tensor_free(t.ctx, &g);
    T_NOTE("chunk 0 context %.2e, chunk 1 context %.2e, pooled (chunk 0) %.2e", r0, r1, rp);
    T_CHECK(r0 <= 1e-4 && r1 <= 1e-4 && rp >= 0 && rp <= 1e-4, "rel-L2 %.3e %.3e %.3e", r0, r1, rp);
    sdx_tensor_free(t.ctx, &context);
    sdx_tensor_free(t.ctx, &pooled);
    sdx_st_close(second);
    t_te_close(&t);
    return T_PASS;
}

/* y = pooled, then per size value [cos(v f_i), sin(v f_i)], f_i =
 * 10000^(-i / half); checked against double precision on small sizes. */
static int sdxl_vector_embeds_sizes_cos_first(void) {
    sdx_ctx *ctx = t_ctx();
    float pooled[8], y[8 + 6 * 8], size[6] = { 64, 96, 8, 0, 64, 48 };
    double worst = 0;
    t_seed(3);
    t_fill_normal(pooled, 8, 1.0);
    T_CHECK(sdx__sdxl_vector(ctx, pooled, 8, size, y, 8 + 6 * 8) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(y, pooled, sizeof pooled), "pooled part changed");
    for (int k = 0; k < 6; k++)
        for (int i = 0; i < 4; i++) {
            double f = exp(-log(10000.0) * i / 4.0);
            double c = cos(size[k] * f), s = sin(size[k] * f);
            worst = fmax(worst, fmax(fabs(y[8 + 8 * k + i] - c), fabs(y[8 + 8 * k + 4 + i] - s)));
        }
    T_NOTE("size embeddings vs double: max-abs %.2e", worst);
    T_CHECK(worst < 1e-5, "size embedding max-abs %.3e", worst);
    sdx_destroy(ctx);
    return T_PASS;
}

static int sdxl_vector_rejects_sizes_that_do_not_split(void) {
    sdx_ctx *ctx = t_ctx();
    float pooled[8] = { 0 }, y[64], size[6] = { 64, 64, 0, 0, 64, 64 };
    int rc = sdx__sdxl_vector(ctx, pooled, 8, size, y, 8 + 6 * 8 + 3);
    T_CHECK(rc == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), "59"), "odd size accepted: %s", sdx_last_error(ctx));
    rc = sdx__sdxl_vector(ctx, pooled, 8, size, y, 8 + 6 * 3);
    T_CHECK(rc == SDX_ERR_MODEL, "odd embedding size accepted");
    sdx_destroy(ctx);
    return T_PASS;
}

/* ---- precision policies ------------------------------------------------ */

static int sd1_f16_activations_stay_within_1e_2(void) {
    return t_te_context("sd1", "context", 0, SDX_AUTO, SDX_F16, 1e-2, "sd1 f16 activations");
}

static int sd1_f16_weights_stay_within_1e_2(void) {
    return t_te_context("sd1", "context", 0, SDX_F16, SDX_F32, 1e-2, "sd1 f16 weights");
}

static int sd2_f16_weights_and_activations_stay_within_1e_2(void) {
    return t_te_context("sd2", "context", 0, SDX_F16, SDX_F16, 1e-2, "sd2 f16 weights+activations");
}

static int sdxl_f16_activations_stay_within_1e_2(void) { return t_te_sdxl_case(2, SDX_F16, 1e-2); }

/* bf16 keeps 8 mantissa bits: only finiteness is a requirement, the error
 * is reported. */
static int sd1_bf16_weights_and_activations_stay_finite(void) {
    return t_te_context("sd1", "context", 0, SDX_BF16, SDX_BF16, -1, "sd1 bf16 weights+activations");
}

/* ---- synthetic checkpoints: errors -------------------------------------- */

/* A tiny random SD 1.x-layout text encoder (vocab 32, width 64, 2 layers,
 * MLP 128) written to `path`. `drop` (if set) is left out; `reshape` (if
 * set) gets shape `new_shape` ({rows, cols}, cols 0 for a vector). */
static int t_te_write_tiny(sdx_ctx *ctx, const char *path, const char *drop, const char *reshape,
                            const int64_t *new_shape) {
    static const char *leaf[] = {
        "layer_norm1.weight", "layer_norm1.bias", "self_attn.q_proj.weight", "self_attn.q_proj.bias",
        "self_attn.k_proj.weight", "self_attn.k_proj.bias", "self_attn.v_proj.weight", "self_attn.v_proj.bias",
        "self_attn.out_proj.weight", "self_attn.out_proj.bias", "layer_norm2.weight", "layer_norm2.bias",
        "mlp.fc1.weight", "mlp.fc1.bias", "mlp.fc2.weight", "mlp.fc2.bias",
    };
    static const int64_t leaf_shape[][2] = {
        { 64, 0 }, { 64, 0 }, { 64, 64 }, { 64, 0 }, { 64, 64 }, { 64, 0 }, { 64, 64 }, { 64, 0 },
        { 64, 64 }, { 64, 0 }, { 64, 0 }, { 64, 0 }, { 128, 64 }, { 128, 0 }, { 64, 128 }, { 64, 0 },
    };
    enum { N_LEAF = 16, N_MAX = 2 * N_LEAF + 4 };
    const char *pre = "cond_stage_model.transformer.text_model.";
    char names[N_MAX][128];
    sdx_tensor ts[N_MAX];
    int n = 0, rc;
    int64_t shapes[N_MAX][2];
    snprintf(names[n], 128, "%sembeddings.token_embedding.weight", pre);
    shapes[n][0] = 32, shapes[n++][1] = 64;
    snprintf(names[n], 128, "%sembeddings.position_embedding.weight", pre);
    shapes[n][0] = 77, shapes[n++][1] = 64;
    snprintf(names[n], 128, "%sfinal_layer_norm.weight", pre);
    shapes[n][0] = 64, shapes[n++][1] = 0;
    snprintf(names[n], 128, "%sfinal_layer_norm.bias", pre);
    shapes[n][0] = 64, shapes[n++][1] = 0;
    for (int l = 0; l < 2; l++)
        for (int i = 0; i < N_LEAF; i++) {
            snprintf(names[n], 128, "%sencoder.layers.%d.%s", pre, l, leaf[i]);
            shapes[n][0] = leaf_shape[i][0], shapes[n++][1] = leaf_shape[i][1];
        }
    t_seed(7);
    for (int i = 0, k = 0; i < n; i++) {
        int64_t s[2] = { shapes[i][0], shapes[i][1] };
        if (drop && !strcmp(names[i], drop)) continue;
        if (reshape && !strcmp(names[i], reshape)) { s[0] = new_shape[0]; s[1] = new_shape[1]; }
        if (sdx_tensor_alloc(ctx, &ts[k], SDX_F32, s[1] ? 2 : 1, s) != SDX_OK) return SDX_ERR_NOMEM;
        t_fill_normal((float *)ts[k].data, (size_t)sdx_tensor_numel(&ts[k]), 0.1);
        ts[k].name = names[i];
        k++;
    }
    {
        int k = n - (drop ? 1 : 0);
        rc = sdx_st_write(ctx, path, ts, k, NULL, 0);
        for (int i = 0; i < k; i++) sdx_tensor_free(ctx, &ts[i]);
    }
    return rc;
}

/* Loads the tiny checkpoint after writing it with the given defect;
 * returns the load result and leaves the message in ctx. */
static int t_te_load_tiny(sdx_ctx *ctx, const char *drop, const char *reshape, int64_t rows, int64_t cols) {
    int64_t new_shape[2] = { rows, cols };
    char path[256];
    sdx_st *st;
    sdx__textenc te;
    int rc;
    snprintf(path, sizeof path, "%s/sdx_t_text_%ld.safetensors", t_tmp_dir(), (long)getpid());
    if ((rc = t_te_write_tiny(ctx, path, drop, reshape, new_shape)) != SDX_OK) return rc;
    rc = sdx_st_open(ctx, path, &st);
    remove(path);
    if (rc != SDX_OK) return rc;
    rc = sdx__textenc_load(ctx, &te, st);
    if (rc == SDX_OK) sdx__textenc_free(ctx, &te);
    sdx_st_close(st);
    return rc;
}

static int tiny_checkpoint_loads(void) {
    sdx_ctx *ctx = t_ctx();
    int rc = t_te_load_tiny(ctx, NULL, NULL, 0, 0);
    T_CHECK(rc == SDX_OK, "tiny checkpoint: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

static int missing_tensor_is_named(void) {
    sdx_ctx *ctx = t_ctx();
    const char *name = "cond_stage_model.transformer.text_model.encoder.layers.1.self_attn.k_proj.weight";
    int rc = t_te_load_tiny(ctx, name, NULL, 0, 0);
    T_NOTE("%s", sdx_last_error(ctx));
    T_CHECK(rc == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), name) && strstr(sdx_last_error(ctx), "missing"),
            "rc %d: %s", rc, sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

static int misshaped_tensor_names_expected_and_found_shape(void) {
    sdx_ctx *ctx = t_ctx();
    const char *name = "cond_stage_model.transformer.text_model.encoder.layers.1.mlp.fc2.weight";
    int rc = t_te_load_tiny(ctx, NULL, name, 128, 64);
    const char *msg = sdx_last_error(ctx);
    T_NOTE("%s", msg);
    T_CHECK(rc == SDX_ERR_MODEL && strstr(msg, name) && strstr(msg, "[64, 128]") && strstr(msg, "[128, 64]"),
            "rc %d: %s", rc, msg);
    sdx_destroy(ctx);
    return T_PASS;
}

static int mlp_width_mismatch_between_layers_is_named(void) {
    sdx_ctx *ctx = t_ctx();
    const char *name = "cond_stage_model.transformer.text_model.encoder.layers.1.mlp.fc1.weight";
    int rc = t_te_load_tiny(ctx, NULL, name, 96, 64);   /* layer 0 has 128 rows */
    const char *msg = sdx_last_error(ctx);
    T_NOTE("%s", msg);
    T_CHECK(rc == SDX_ERR_MODEL && strstr(msg, name) && strstr(msg, "[128, 64]") && strstr(msg, "[96, 64]"),
            "rc %d: %s", rc, msg);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Prompt chunks are 77 ids long; an encoder with 80 positions must be
 * refused instead of reading 3 ids (and multipliers) past each chunk. */
static int prompt_chunks_need_77_positions(void) {
    sdx_ctx *ctx = t_ctx();
    const char *pos = "cond_stage_model.transformer.text_model.embeddings.position_embedding.weight";
    int64_t shape[2] = { 80, 64 };
    char path[256];
    sdx_st *st;
    sdx__textenc te;
    sdx__arena arena;
    sdx__chunks chunks;
    sdx_tensor context;
    int rc;
    snprintf(path, sizeof path, "%s/sdx_t_text_pos_%ld.safetensors", t_tmp_dir(), (long)getpid());
    T_CHECK(t_te_write_tiny(ctx, path, NULL, pos, shape) == SDX_OK, "write: %s", sdx_last_error(ctx));
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "open: %s", sdx_last_error(ctx));
    remove(path);
    T_CHECK(sdx__textenc_load(ctx, &te, st) == SDX_OK && te.n_ctx == 80, "load: %s", sdx_last_error(ctx));
    chunks.n = 1;
    chunks.tokens = (int32_t *)malloc(77 * sizeof(int32_t));
    chunks.mult = (float *)malloc(77 * sizeof(float));
    T_CHECK(chunks.tokens && chunks.mult, "alloc");
    sdx__textenc_empty_ids(chunks.tokens, 77);
    for (int i = 0; i < 77; i++) chunks.mult[i] = 1.0f;
    sdx__arena_init(&arena, ctx, (size_t)1 << 20);
    rc = sdx__textenc_encode(ctx, &te, &arena, &chunks, 0, &context, NULL);
    T_NOTE("%s", sdx_last_error(ctx));
    if (rc == SDX_OK) sdx_tensor_free(ctx, &context);
    T_CHECK(rc == SDX_ERR_UNSUPPORTED && strstr(sdx_last_error(ctx), "80 positions"), "rc %d: %s", rc,
            sdx_last_error(ctx));
    free(chunks.tokens);
    free(chunks.mult);
    sdx__arena_free(&arena);
    sdx__textenc_free(ctx, &te);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

static int unknown_layout_lists_the_keys_looked_for(void) {
    sdx_ctx *ctx = t_ctx();
    char path[256];
    sdx_st *st;
    sdx__textenc te;
    sdx_tensor x;
    int64_t shape[1] = { 4 };
    int rc;
    snprintf(path, sizeof path, "%s/sdx_t_text_unknown_%ld.safetensors", t_tmp_dir(), (long)getpid());
    T_CHECK(sdx_tensor_alloc(ctx, &x, SDX_F32, 1, shape) == SDX_OK, "alloc");
    x.name = "model.diffusion_model.out.2.bias";
    T_CHECK(sdx_st_write(ctx, path, &x, 1, NULL, 0) == SDX_OK, "write: %s", sdx_last_error(ctx));
    sdx_tensor_free(ctx, &x);
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "open: %s", sdx_last_error(ctx));
    remove(path);
    rc = sdx__textenc_load(ctx, &te, st);
    T_NOTE("%s", sdx_last_error(ctx));
    T_CHECK(rc == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), "cond_stage_model.model.token_embedding.weight") &&
            strstr(sdx_last_error(ctx), "conditioner.embedders.1.model."), "rc %d: %s", rc, sdx_last_error(ctx));
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

static int clip_skip_beyond_depth_and_bad_ids_are_rejected(void) {
    T_NEED_SHARED(model, T_TE_SD1_MODEL);
    t_te t;
    sdx_tensor context;
    int32_t ids[77];
    int rc;
    T_CHECK(t_te_open(&t, model, NULL, SDX_AUTO) == SDX_OK, "open: %s", sdx_last_error(t.ctx));
    sdx__textenc_empty_ids(ids, 77);
    rc = sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, ids, NULL, 1, 5, &context, NULL);
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(t.ctx), "clip_skip 5"), "rc %d: %s", rc,
            sdx_last_error(t.ctx));
    ids[0] = 49408;     /* one past the vocabulary */
    rc = sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, ids, NULL, 1, 0, &context, NULL);
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(t.ctx), "49408"), "rc %d: %s", rc,
            sdx_last_error(t.ctx));
    ids[0] = -1;
    rc = sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, ids, NULL, 1, 0, &context, NULL);
    T_CHECK(rc == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(t.ctx), "-1"), "rc %d: %s", rc,
            sdx_last_error(t.ctx));
    t_te_close(&t);
    return T_PASS;
}

/* ---- emphasis and long prompts ------------------------------------------ */

/* A1111 "Original": z1 = z * m; z1 * mean(z) / mean(z1), per chunk. The
 * reference here is the same formula in double on the unweighted output. */
static int emphasis_scales_tokens_and_restores_the_mean(void) {
    t_te t;
    sdx_tensor plain, weighted;
    int64_t n_ids;
    int32_t *ids;
    float mult[2 * 77];
    double r = 0;
    int rc;
    if ((rc = t_te_open_golden(&t, "sd1", SDX_AUTO)) != T_PASS) return rc;
    ids = t_te_ids(&t, "tokens", &n_ids);
    T_CHECK(ids && n_ids == 4 * 77, "tokens");
    t_seed(11);
    for (int i = 0; i < 2 * 77; i++) mult[i] = i < 77 ? (float)(1.0 + 0.3 * t_normal()) : 1.0f;
    T_CHECK(sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, ids, NULL, 2, 0, &plain, NULL) == SDX_OK, "encode");
    T_CHECK(sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, ids, mult, 2, 0, &weighted, NULL) == SDX_OK, "encode");
    {
        const float *z = (const float *)plain.data, *got = (const float *)weighted.data;
        double mean0 = 0, mean1 = 0, num = 0, den = 0;
        int64_t W = 64, n = 77 * W;
        for (int64_t i = 0; i < n; i++) mean0 += z[i], mean1 += (double)z[i] * mult[i / W];
        for (int64_t i = 0; i < n; i++) {
            double want = (double)z[i] * mult[i / W] * (mean0 / mean1);
            num += (got[i] - want) * (got[i] - want);
            den += want * want;
        }
        r = sqrt(num / den);
        /* chunk 1 has all multipliers 1: untouched */
        T_CHECK(!memcmp(z + n, got + n, (size_t)n * sizeof *z), "unweighted chunk changed");
    }
    T_NOTE("weighted chunk vs double-precision emphasis of the plain output: rel-L2 %.2e", r);
    T_CHECK(r < 1e-5, "emphasis rel-L2 %.3e", r);
    free(ids);
    sdx_tensor_free(t.ctx, &plain);
    sdx_tensor_free(t.ctx, &weighted);
    t_te_close(&t);
    return T_PASS;
}

/* ---- allocation failures ------------------------------------------------ */

/* Load, encode the empty prompt with pooled output, free everything. */
static int t_te_roundtrip(sdx_ctx *ctx, void *st) {
    sdx__textenc te;
    sdx__arena arena;
    sdx_tensor context, pooled;
    int32_t ids[77];
    int rc;
    sdx__textenc_empty_ids(ids, 77);
    sdx__arena_init(&arena, ctx, (size_t)1 << 20);
    if ((rc = sdx__textenc_load(ctx, &te, (const sdx_st *)st)) == SDX_OK) {
        rc = sdx__textenc_encode_ids(ctx, &te, &arena, ids, NULL, 1, 0, &context, &pooled);
        if (rc == SDX_OK) {
            sdx_tensor_free(ctx, &context);
            sdx_tensor_free(ctx, &pooled);
        }
        sdx__textenc_free(ctx, &te);
    }
    sdx__arena_free(&arena);
    return rc;
}

/* Fails the 1st, 2nd, ... allocation of an SDXL load + encode (both
 * encoders, pooled output) until one run gets through: every failure must
 * come back as an out-of-memory error without a crash or a leak (leaks
 * show under ASan). One clean run comes first so the kernels' per-context
 * scratch is in place and the failures land in the text encoder's own
 * allocations (the kernels suite covers the scratch). */
static int allocation_failures_are_reported_and_clean(void) {
    T_NEED_SHARED(model, T_TE_XL_MODEL);
    t_allocs f = T_ALLOCS_INIT;
    sdx_ctx *ctx = t_allocs_ctx(&f);
    sdx_st *st;
    int r;
    T_CHECK(ctx && sdx_st_open(ctx, model, &st) == SDX_OK, "open");
    T_CHECK(t_te_roundtrip(ctx, st) == SDX_OK, "clean run: %s", sdx_last_error(ctx));
    if ((r = t_fail_each_allocation(ctx, &f, t_te_roundtrip, st, 1000)) != T_PASS) return r;
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* A weighted prompt of more than 75 tokens, through the tokenizer and the
 * A1111 chunker: one call encodes every chunk, and each chunk's rows equal
 * that chunk encoded alone with its multipliers. */
static int long_weighted_prompt_encodes_every_chunk(void) {
    T_NEED_SHARED(model, T_TE_SD1_MODEL);
    T_NEED_SHARED(vocab, "vocab/merges.txt");
    const char *prompt =
        "(a photograph of an astronaut riding a horse:1.3), on the surface of the moon, [dusty], "
        "earth rising over the horizon, dramatic lighting, ((highly detailed)), sharp focus, "
        "a very long prompt that keeps going with many many words, cinematic composition, "
        "award winning photograph, 35mm film grain, [[[soft shadows]]], wide angle lens, "
        "and a small flag planted in the grey sand beside the rover BREAK stars in the sky";
    t_te t;
    sdx_tokenizer *tok = NULL;
    sdx__chunks chunks;
    sdx_tensor context;
    char vocab_dir[1024];
    double worst = 0;
    int weighted = 0;
    snprintf(vocab_dir, sizeof vocab_dir, "%s/vocab", t_shared_dir());
    (void)vocab;
    T_CHECK(t_te_open(&t, model, NULL, SDX_AUTO) == SDX_OK, "open: %s", sdx_last_error(t.ctx));
    T_CHECK(sdx_tokenizer_load(t.ctx, vocab_dir, &tok) == SDX_OK, "tokenizer: %s",
            sdx_last_error(t.ctx));
    T_CHECK(sdx__prompt_chunks(t.ctx, tok, prompt, &chunks) == SDX_OK, "chunks: %s", sdx_last_error(t.ctx));
    T_CHECK(chunks.n >= 3, "expected at least 3 chunks (2 from length, 1 from BREAK), got %d", chunks.n);
    T_CHECK(sdx__textenc_encode(t.ctx, &t.te, &t.arena, &chunks, 0, &context, NULL) == SDX_OK, "encode: %s",
            sdx_last_error(t.ctx));
    T_CHECK(context.shape[0] == (int64_t)chunks.n * 77 && context.shape[1] == 64, "context shape");
    T_CHECK(t_te_finite((const float *)context.data, sdx_tensor_numel(&context)), "non-finite context");
    for (int c = 0; c < chunks.n; c++) {
        sdx_tensor one;
        double r;
        for (int i = 0; i < 77; i++) weighted |= chunks.mult[c * 77 + i] != 1.0f;
        T_CHECK(sdx__textenc_encode_ids(t.ctx, &t.te, &t.arena, chunks.tokens + c * 77, chunks.mult + c * 77, 1, 0,
                                        &one, NULL) == SDX_OK, "encode chunk %d", c);
        r = t_rel_l2_f32((const float *)context.data + (size_t)c * 77 * 64, (const float *)one.data, 77 * 64);
        if (r > worst) worst = r;
        sdx_tensor_free(t.ctx, &one);
    }
    T_NOTE("%d chunks; batched vs one chunk at a time: worst rel-L2 %.2e", chunks.n, worst);
    T_CHECK(weighted, "the prompt's weights did not reach the multipliers");
    T_CHECK(worst <= 1e-6, "batched chunks differ from single chunks: %.3e", worst);
    sdx_tensor_free(t.ctx, &context);
    sdx__chunks_free(t.ctx, &chunks);
    sdx_tokenizer_free(tok);
    t_te_close(&t);
    return T_PASS;
}

static const t_case text_cases[] = {
    { "sd1_detects_clip_l_from_shapes", sd1_detects_clip_l_from_shapes },
    { "sd1_hidden_states_match_golden_per_layer", sd1_hidden_states_match_golden_per_layer },
    { "sd1_context_matches_golden", sd1_context_matches_golden },
    { "sd1_clip_skip2_uses_penultimate_layer_then_final_norm", sd1_clip_skip2_uses_penultimate_layer_then_final_norm },
    { "sd1_pooled_is_final_norm_of_first_eos", sd1_pooled_is_final_norm_of_first_eos },
    { "sd1_tracer_on_changes_nothing", sd1_tracer_on_changes_nothing },
    { "sd2_detects_openclip_from_shapes", sd2_detects_openclip_from_shapes },
    { "sd2_hidden_states_match_golden_per_layer", sd2_hidden_states_match_golden_per_layer },
    { "sd2_context_is_ln_final_of_penultimate_layer", sd2_context_is_ln_final_of_penultimate_layer },
    { "sd2_pooled_is_projected_first_eos", sd2_pooled_is_projected_first_eos },
    { "sdxl_text0_short_prompt_matches_golden", sdxl_text0_short_prompt_matches_golden },
    { "sdxl_text1_empty_prompt_matches_golden", sdxl_text1_empty_prompt_matches_golden },
    { "sdxl_text2_size_and_crop_conditioning_match_golden", sdxl_text2_size_and_crop_conditioning_match_golden },
    { "sdxl_text3_truncated_prompt_matches_golden", sdxl_text3_truncated_prompt_matches_golden },
    { "sdxl_pooled_comes_from_first_chunk", sdxl_pooled_comes_from_first_chunk },
    { "sdxl_vector_embeds_sizes_cos_first", sdxl_vector_embeds_sizes_cos_first },
    { "sdxl_vector_rejects_sizes_that_do_not_split", sdxl_vector_rejects_sizes_that_do_not_split },
    { "sd1_f16_activations_stay_within_1e_2", sd1_f16_activations_stay_within_1e_2 },
    { "sd1_f16_weights_stay_within_1e_2", sd1_f16_weights_stay_within_1e_2 },
    { "sd2_f16_weights_and_activations_stay_within_1e_2", sd2_f16_weights_and_activations_stay_within_1e_2 },
    { "sdxl_f16_activations_stay_within_1e_2", sdxl_f16_activations_stay_within_1e_2 },
    { "sd1_bf16_weights_and_activations_stay_finite", sd1_bf16_weights_and_activations_stay_finite },
    { "tiny_checkpoint_loads", tiny_checkpoint_loads },
    { "missing_tensor_is_named", missing_tensor_is_named },
    { "misshaped_tensor_names_expected_and_found_shape", misshaped_tensor_names_expected_and_found_shape },
    { "mlp_width_mismatch_between_layers_is_named", mlp_width_mismatch_between_layers_is_named },
    { "unknown_layout_lists_the_keys_looked_for", unknown_layout_lists_the_keys_looked_for },
    { "prompt_chunks_need_77_positions", prompt_chunks_need_77_positions },
    { "clip_skip_beyond_depth_and_bad_ids_are_rejected", clip_skip_beyond_depth_and_bad_ids_are_rejected },
    { "emphasis_scales_tokens_and_restores_the_mean", emphasis_scales_tokens_and_restores_the_mean },
    { "allocation_failures_are_reported_and_clean", allocation_failures_are_reported_and_clean },
    { "long_weighted_prompt_encodes_every_chunk", long_weighted_prompt_encodes_every_chunk },
    { 0, 0 }
};
SDX_TEST_SUITE(text, text_cases)

/* Suite "mkckpt": tools/sdx-mkckpt writes whole checkpoints (text
 * encoders, UNet, VAE) that the engine loads through sdx_model_load, with
 * the key names and shapes of the released files. The golden tiny
 * checkpoints keep the released names and topology at reduced sizes, so
 * they are the reference for the names. */
#include "test.h"
#ifndef SDX_MKCKPT_NO_MAIN
#define SDX_MKCKPT_NO_MAIN
#endif
#include "../tools/sdx-mkckpt.c"

/* The generator's tensor list for c, or NULL (out of memory). */
static mk_list *tm_list(const mk_ckpt *c) {
    static mk_list L;
    memset(&L, 0, sizeof L);
    mk_ckpt_entries(&L, c);
    if (L.failed) { free(L.e); return NULL; }
    return &L;
}

static const mk_entry *tm_find(const mk_list *L, const char *name) {
    for (int i = 0; i < L->n; i++) if (!strcmp(L->e[i].name, name)) return &L->e[i];
    return NULL;
}

/* The architectures of golden/{sd1,sd2,sdxl}/config.json, as mk_ckpt. */
static void tm_golden_config(int family, mk_ckpt *c) {
    static const char *const names[3] = { "sd15", "sd21", "sdxl" };
    mk_ckpt_tiny(names[family], c);
}

/* Configured like a golden checkpoint, the generator writes exactly its
 * tensors: the same names, and each with the same shape. */
static int golden_configurations_give_the_golden_keys_and_shapes(void) {
    static const char *const areas[3] = { "golden/sd1/model.safetensors", "golden/sd2/model.safetensors",
                                          "golden/sdxl/model.safetensors" };
    T_NEED_SHARED(probe, "golden/sd1/model.safetensors");
    (void)probe;
    for (int f = 0; f < 3; f++) {
        const char *path = t_shared(areas[f]);
        sdx_ctx *ctx = t_ctx();
        sdx_st *st = NULL;
        mk_ckpt c;
        mk_list *L;
        int n;
        T_CHECK(path, "%s missing", areas[f]);
        tm_golden_config(f, &c);
        T_CHECK((L = tm_list(&c)) != NULL, "out of memory");
        T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
        n = sdx_st_count(st);
        T_CHECK(n == L->n, "%s: %d tensors, the generator lists %d", path, n, L->n);
        for (int i = 0; i < n; i++) {
            const sdx_tensor *t = sdx_st_get(st, i);
            const mk_entry *e = tm_find(L, t->name);
            T_CHECK(e, "%s: '%s' is not in the generator's list", path, t->name);
            T_CHECK(e->ndim == t->ndim, "%s: '%s': %d dims, generator %d", path, t->name, t->ndim, e->ndim);
            for (int d = 0; d < e->ndim; d++)
                T_CHECK(e->shape[d] == t->shape[d], "%s: '%s': dim %d is %lld, generator %lld", path, t->name, d,
                        (long long)t->shape[d], (long long)e->shape[d]);
            T_CHECK((e->init == MK_ARANGE) == (t->dtype == SDX_I64), "%s: '%s': integer tensor mismatch", path, t->name);
        }
        free(L->e);
        sdx_st_close(st);
        sdx_destroy(ctx);
    }
    return T_PASS;
}

/* The full-size SD 1.5 listing (--list) against the golden sd1 key set:
 * every golden key is there, and the only others are the text encoder's
 * layers 4..11 (the golden keeps 4 of 12) and three shortcut convolutions
 * that exist because the released channel multipliers (1,2,4,4) change
 * the width where the golden's (1,2,2,2) do not. */
static int full_size_sd15_listing_has_the_golden_sd1_keys(void) {
    static const char *const width_changes[6] = {
        "model.diffusion_model.input_blocks.7.0.skip_connection.weight",
        "model.diffusion_model.input_blocks.7.0.skip_connection.bias",
        "first_stage_model.encoder.down.2.block.0.nin_shortcut.weight",
        "first_stage_model.encoder.down.2.block.0.nin_shortcut.bias",
        "first_stage_model.decoder.up.1.block.0.nin_shortcut.weight",
        "first_stage_model.decoder.up.1.block.0.nin_shortcut.bias",
    };
    static const char text_layers[] = "cond_stage_model.transformer.text_model.encoder.layers.";
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    mk_ckpt c;
    mk_list *L;
    int extra = 0;
    T_CHECK(mk_ckpt_preset("sd15", 1, &c), "preset");
    T_CHECK((L = tm_list(&c)) != NULL, "out of memory");
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    for (int i = 0; i < sdx_st_count(st); i++)
        T_CHECK(tm_find(L, sdx_st_get(st, i)->name), "golden key '%s' missing from the listing", sdx_st_get(st, i)->name);
    for (int i = 0; i < L->n; i++) {
        const char *name = L->e[i].name;
        int known = 0;
        if (sdx_st_find(st, name)) continue;
        if (!strncmp(name, text_layers, sizeof text_layers - 1) && atoi(name + sizeof text_layers - 1) >= 4) known = 1;
        for (int k = 0; k < 6; k++) known |= !strcmp(name, width_changes[k]);
        T_CHECK(known, "listing key '%s' is not in the golden sd1 checkpoint", name);
        extra++;
    }
    T_CHECK(extra == 8 * 16 + 6, "%d keys beyond the golden's, expected %d", extra, 8 * 16 + 6);
    free(L->e);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

/* The whole checkpoints hold the released parameter counts: UNet (see
 * unet.t_generator_presets_...) + CLIP ViT-L text 123,060,480 (+ OpenCLIP
 * ViT-H text 354,032,641 or ViT-bigG text 694,659,841) + VAE 83,653,863. */
static int whole_checkpoints_have_the_released_parameter_counts(void) {
    static const struct { const char *name; int64_t params; } want[3] = {
        { "sd15", 859520964LL + 123060480LL + 83653863LL },
        { "sd21", 865910724LL + 354032641LL + 83653863LL },
        { "sdxl", 2567463684LL + 123060480LL + 694659841LL + 83653863LL },
    };
    for (int i = 0; i < 3; i++) {
        mk_ckpt c;
        mk_list *L;
        int64_t params = 0;
        T_CHECK(mk_ckpt_preset(want[i].name, 1, &c), "preset %s", want[i].name);
        T_CHECK((L = tm_list(&c)) != NULL, "out of memory");
        for (int k = 0; k < L->n; k++) if (L->e[k].init != MK_ARANGE) params += mk_numel(&L->e[k]);
        T_NOTE("%s: %d tensors, %lld parameters, %.2f GB in f16", want[i].name, L->n, (long long)params,
               (double)mk_list_bytes(L, SDX_F16) / 1e9);
        free(L->e);
        T_CHECK(params == want[i].params, "%s: %lld parameters, want %lld", want[i].name, (long long)params,
                (long long)want[i].params);
    }
    return T_PASS;
}

/* One shrunk checkpoint: written, loaded by sdx_model_load as `family`
 * with `pred`, and a 1-step 64x64 generation gives a finite latent and an
 * image that is not flat. */
static int tm_generate(const char *preset, int v_pred, sdx_dtype dtype, sdx_family family, sdx_prediction pred) {
    char path[256], err[512];
    sdx_ctx *ctx;
    sdx_model *model = NULL;
    sdx_model_desc md;
    sdx_gen_params gp;
    sdx_gen_result res;
    mk_ckpt c;
    int lo = 255, hi = 0, rc;
    snprintf(path, sizeof path, "%s/sdx_t_mkckpt_%s_%d_%d.safetensors", t_tmp_dir(), preset, v_pred, (int)dtype);
    T_CHECK(mk_ckpt_preset(preset, 10, &c), "preset %s", preset);
    c.v_pred = v_pred;
    T_CHECK(mk_write_ckpt(path, &c, dtype, 5, err, sizeof err), "%s", err);
    ctx = t_ctx();
    memset(&md, 0, sizeof md);
    md.checkpoint = path;
    md.vocab = t_shared("vocab/merges.txt");
    rc = sdx_model_load(ctx, &md, &model);
    T_CHECK(rc == SDX_OK, "%s: %s", path, sdx_last_error(ctx));
    T_CHECK(sdx_model_family(model) == family, "%s: family %s", path, sdx_family_name(sdx_model_family(model)));
    T_CHECK(sdx_model_prediction(model) == pred, "%s: prediction %d, want %d", path, (int)sdx_model_prediction(model), (int)pred);
    memset(&gp, 0, sizeof gp);
    gp.prompt = "a lighthouse at dusk";
    gp.negative_prompt = "blurry";
    gp.width = gp.height = 64;
    gp.steps = 1;
    gp.sampler = "euler";
    gp.seed = 3;
    rc = sdx_generate(model, &gp, &res);
    T_CHECK(rc == SDX_OK, "%s: %s", path, sdx_last_error(ctx));
    for (int64_t i = 0; i < sdx_tensor_numel(&res.latents[0]); i++)
        T_CHECK(isfinite(((const float *)res.latents[0].data)[i]), "%s: latent %lld not finite", path, (long long)i);
    for (int i = 0; i < 64 * 64 * 3; i++) {
        int v = res.images[0].data[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    T_NOTE("%s: pixels in [%d, %d]", path, lo, hi);
    T_CHECK(hi - lo > 8, "%s: flat image [%d, %d]", path, lo, hi);
    sdx_gen_result_free(ctx, &res);
    sdx_model_free(model);
    sdx_destroy(ctx);
    remove(path);
    return T_PASS;
}

static int shrunk_checkpoints_of_each_family_load_and_generate(void) {
    T_NEED_SHARED(vocab, "vocab/merges.txt");
    (void)vocab;
    if (tm_generate("sd15", 0, SDX_F16, SDX_FAMILY_SD1, SDX_PRED_EPS) != T_PASS) return T_FAIL;
    if (tm_generate("sd21", 0, SDX_F16, SDX_FAMILY_SD2, SDX_PRED_EPS) != T_PASS) return T_FAIL;
    if (tm_generate("sd21", 1, SDX_BF16, SDX_FAMILY_SD2, SDX_PRED_V) != T_PASS) return T_FAIL;
    if (tm_generate("sdxl", 0, SDX_F16, SDX_FAMILY_SDXL, SDX_PRED_EPS) != T_PASS) return T_FAIL;
    return tm_generate("sd15", 0, SDX_F32, SDX_FAMILY_SD1, SDX_PRED_EPS);
}

/* The values are the released files' where they are not weights:
 * position_ids 0..76 (int64), logit_scale ln(100); and the same seed
 * writes the same bytes. */
static int fixed_tensors_hold_their_values_and_files_are_deterministic(void) {
    const char *a = t_tmp("sdx_t_mkckpt_det_a.safetensors"), *b = t_tmp("sdx_t_mkckpt_det_b.safetensors");
    char err[512];
    sdx_ctx *ctx = t_ctx();
    sdx_st *sa = NULL, *sb = NULL;
    const sdx_tensor *pos, *scale;
    mk_ckpt c;
    int64_t last;
    T_CHECK(mk_ckpt_preset("sd15", 10, &c), "preset");
    T_CHECK(mk_write_ckpt(a, &c, SDX_F16, 9, err, sizeof err) && mk_write_ckpt(b, &c, SDX_F16, 9, err, sizeof err), "%s", err);
    T_CHECK(sdx_st_open(ctx, a, &sa) == SDX_OK && sdx_st_open(ctx, b, &sb) == SDX_OK, "%s", sdx_last_error(ctx));
    pos = sdx_st_find(sa, "cond_stage_model.transformer.text_model.embeddings.position_ids");
    T_CHECK(pos && pos->dtype == SDX_I64 && sdx_tensor_numel(pos) == 77, "position_ids");
    memcpy(&last, (const char *)pos->data + 76 * 8, 8);
    T_CHECK(last == 76, "position_ids[76] = %lld", (long long)last);
    for (int i = 0; i < sdx_st_count(sa); i++) {
        const sdx_tensor *x = sdx_st_get(sa, i), *y = sdx_st_find(sb, x->name);
        T_CHECK(y && !memcmp(x->data, y->data, sdx_tensor_nbytes(x)), "'%s' differs between two writes", x->name);
    }
    sdx_st_close(sa);
    sdx_st_close(sb);
    T_CHECK(mk_ckpt_preset("sd21", 10, &c), "preset");
    T_CHECK(mk_write_ckpt(a, &c, SDX_F32, 9, err, sizeof err), "%s", err);
    T_CHECK(sdx_st_open(ctx, a, &sa) == SDX_OK, "%s", sdx_last_error(ctx));
    scale = sdx_st_find(sa, "cond_stage_model.model.logit_scale");
    T_CHECK(scale && scale->ndim == 0 && fabsf(*(const float *)scale->data - 4.6051702f) < 1e-6f, "logit_scale");
    sdx_st_close(sa);
    sdx_destroy(ctx);
    remove(a);
    remove(b);
    return T_PASS;
}

static const t_case t_mkckpt_cases[] = {
    { "golden_configurations_give_the_golden_keys_and_shapes", golden_configurations_give_the_golden_keys_and_shapes },
    { "full_size_sd15_listing_has_the_golden_sd1_keys", full_size_sd15_listing_has_the_golden_sd1_keys },
    { "whole_checkpoints_have_the_released_parameter_counts", whole_checkpoints_have_the_released_parameter_counts },
    { "shrunk_checkpoints_of_each_family_load_and_generate", shrunk_checkpoints_of_each_family_load_and_generate },
    { "fixed_tensors_hold_their_values_and_files_are_deterministic", fixed_tensors_hold_their_values_and_files_are_deterministic },
    { NULL, NULL },
};
SDX_TEST_SUITE(mkckpt, t_mkckpt_cases)

/* Suite "lora": LoRA / LyCORIS files merged into a loaded model, against
 * ComfyUI's merged tensors (../shared/golden/lora), the apply/remove round
 * trip, errors that leave the model alone, merged-checkpoint export and
 * prompt tags. */
#include "test.h"

/* Every weight slot of the model (UNet, text encoders, VAE). */
typedef struct lora_slots { sdx__wslot *s[4096]; int n; } lora_slots;

static void lora_collect(sdx_model *m, lora_slots *out) {
    sdx__wset *sets[4] = { &m->unet.w, &m->vae.w, NULL, NULL };
    out->n = 0;
    for (int e = 0; e < m->te.n_enc; e++) sets[2 + e] = &m->te.enc[e].w;
    for (int k = 0; k < 4; k++)
        for (int i = 0; sets[k] && i < sets[k]->n_slots && out->n < 4096; i++) out->s[out->n++] = sets[k]->slots[i];
}

static int lora_slot_is_file(const sdx__wslot *s) {
    return s->t.dtype == s->file->dtype && !memcmp(s->t.data, s->file->data, sdx_tensor_nbytes(s->file));
}

/* Bytes of every slot, to check that something left the model as it was. */
typedef struct lora_snapshot { void *data[4096]; size_t bytes[4096]; int n; } lora_snapshot;

static void lora_snap(sdx_model *m, lora_snapshot *sn) {
    lora_slots sl;
    lora_collect(m, &sl);
    sn->n = sl.n;
    for (int i = 0; i < sl.n; i++) {
        sn->bytes[i] = sdx_tensor_nbytes(&sl.s[i]->t);
        sn->data[i] = malloc(sn->bytes[i]);
        memcpy(sn->data[i], sl.s[i]->t.data, sn->bytes[i]);
    }
}

/* Frees the snapshot; returns 1 when the model still holds its bytes. */
static int lora_same_as_snap(sdx_model *m, lora_snapshot *sn) {
    lora_slots sl;
    int same = 1;
    lora_collect(m, &sl);
    same = sl.n == sn->n;
    for (int i = 0; i < sn->n; i++) {
        if (same && (sn->bytes[i] != sdx_tensor_nbytes(&sl.s[i]->t) || memcmp(sn->data[i], sl.s[i]->t.data, sn->bytes[i]))) same = 0;
        free(sn->data[i]);
    }
    return same;
}

static int lora_in_list(const sdx__json *list, const char *key) {
    for (const sdx__json *c = list ? list->child : NULL; c; c = c->next)
        if (!strcmp(c->str, key)) return 1;
    return 0;
}

/* One golden case: merged values, the touched set, untouched tensors
 * byte-identical, every LoRA tensor consumed. */
static int lora_golden_case(sdx_ctx *ctx, const sdx__json *c) {
    const char *name = sdx__json_get(c, "name")->str, *model = sdx__json_get(c, "model")->str;
    const sdx__json *touched = sdx__json_get(c, "touched_keys");
    char area[32], path[1024];
    sdx_model *m;
    sdx_st *exp;
    lora_slots sl;
    int n_changed = 0, n_lora_tensors = 0, n_consumed = 0;
    snprintf(area, sizeof area, "%.*s", (int)(strrchr(model, '/') - model - 3), model + 3);   /* "../sd1/model..." */
    m = t_model(ctx, area);
    T_CHECK(m, "%s: load %s: %s", name, area, sdx_last_error(ctx));
    for (const sdx__json *l = sdx__json_get(c, "loras")->child; l; l = l->next) {
        snprintf(path, sizeof path, "%s/golden/lora/%s", t_shared_dir(), sdx__json_get(l, "file")->str);
        T_CHECK(sdx_model_apply_lora(m, path, (float)sdx__json_get(l, "strength_model")->num,
                                     (float)sdx__json_get(l, "strength_clip")->num) == SDX_OK,
                "%s: %s", name, sdx_last_error(ctx));
    }
    for (int i = 0; i < m->n_loras; i++) {
        n_lora_tensors += sdx_st_count(m->loras[i].st);
        for (int k = 0; k < m->loras[i].n_mod; k++)
            for (int r = 0; r < SDX__LR_COUNT; r++) n_consumed += m->loras[i].mod[k].t[r] != NULL;
    }
    T_CHECK(n_consumed == n_lora_tensors, "%s: %d of %d LoRA tensors used", name, n_consumed, n_lora_tensors);
    snprintf(path, sizeof path, "%s/golden/lora/%s", t_shared_dir(), sdx__json_get(c, "expected")->str);
    T_CHECK(sdx_st_open(ctx, path, &exp) == SDX_OK, "%s", sdx_last_error(ctx));
    lora_collect(m, &sl);
    for (int i = 0; i < sl.n; i++) {
        sdx__wslot *s = sl.s[i];
        int want = lora_in_list(touched, s->file->name), changed = !lora_slot_is_file(s);
        T_CHECK(want == changed, "%s: '%s' %s", name, s->file->name, want ? "was not changed" : "changed but no LoRA touches it");
        if (!want) continue;
        n_changed++;
        {
            sdx_tensor ref;
            int64_t n = sdx_tensor_numel(s->file);
            float *merged = malloc((size_t)n * sizeof(float)), *stored = malloc((size_t)n * sizeof(float));
            uint16_t *half = malloc((size_t)n * sizeof(uint16_t));
            double err;
            T_CHECK(sdx_st_read_f32(ctx, exp, s->file->name, &ref) == SDX_OK, "%s: %s", name, sdx_last_error(ctx));
            T_CHECK(sdx__lora_merged(ctx, m->loras, m->n_loras, s, merged) == SDX_OK, "%s", sdx_last_error(ctx));
            err = t_rel_l2_f32(merged, (const float *)ref.data, (size_t)n);
            T_NOTE("%s %s rel-L2 %.2e", name, s->file->name, err);
            T_CHECK(err <= 1e-5, "%s: '%s': rel-L2 %.3e vs ComfyUI's merge", name, s->file->name, err);
            /* the slot holds that merge rounded once to its dtype */
            sdx__download(ctx, stored, &s->t);
            if (s->t.dtype == SDX_F16) {
                sdx_f32_to_f16_n(merged, half, (size_t)n);
                T_CHECK(!memcmp(half, s->t.data, (size_t)n * 2), "%s: '%s': slot is not the f32 merge rounded once", name, s->file->name);
            } else if (s->t.dtype == SDX_BF16) {
                sdx__store_f32(half, SDX_BF16, 0, n, merged);
                T_CHECK(!memcmp(half, s->t.data, (size_t)n * 2), "%s: '%s': slot is not the f32 merge rounded once", name, s->file->name);
            } else {
                T_CHECK(!memcmp(merged, stored, (size_t)n * 4), "%s: '%s': slot differs from the merge", name, s->file->name);
            }
            sdx_tensor_free(ctx, &ref);
            free(merged); free(stored); free(half);
        }
    }
    T_CHECK(n_changed == (int)touched->len, "%s: %d tensors changed, golden touches %d", name, n_changed, (int)touched->len);
    sdx_st_close(exp);
    sdx_model_free(m);
    return T_PASS;
}

static int every_public_lora_case_matches_comfyui(void) {
    T_NEED_SHARED(index, "golden/lora/index.json");
    sdx_ctx *ctx = t_ctx();
    sdx__json_doc doc;
    int n = 0;
    T_CHECK(sdx__json_parse_file(ctx, index, &doc) == SDX_OK, "%s", sdx_last_error(ctx));
    for (const sdx__json *c = sdx__json_get(doc.root, "cases")->child; c; c = c->next, n++) {
        int rc = lora_golden_case(ctx, c);
        if (rc != T_PASS) { sdx__json_free(&doc); sdx_destroy(ctx); return rc; }
    }
    T_CHECK(n == 6, "%d cases", n);
    sdx__json_free(&doc);
    sdx_destroy(ctx);
    return T_PASS;
}

static int clearing_loras_gives_back_the_checkpoint_bit_exact(void) {
    T_NEED_SHARED(dir, "golden/lora/loras");
    static const char *const areas[] = { "sd1", "sd2", "sdxl" };
    static const char *const files[][2] = { { "sd1_diffusers", "sd1_kohya_small_bf16" }, { "sd2_kohya", NULL },
                                            { "sdxl_kohya_locon", "sdxl_diffusers" } };
    sdx_ctx *ctx = t_ctx();
    for (int a = 0; a < 3; a++) {
        sdx_model *m = t_model(ctx, areas[a]);
        lora_slots sl;
        lora_snapshot first;
        T_CHECK(m, "%s", sdx_last_error(ctx));
        for (int round = 0; round < 2; round++) {
            char path[1024];
            for (int f = 0; f < 2 && files[a][f]; f++) {
                snprintf(path, sizeof path, "%s/%s.safetensors", dir, files[a][f]);
                T_CHECK(sdx_model_apply_lora(m, path, 0.7f, -0.5f) == SDX_OK, "%s", sdx_last_error(ctx));
            }
            if (round == 0) lora_snap(m, &first);
            else T_CHECK(lora_same_as_snap(m, &first), "%s: re-applying after a clear gives other weights", areas[a]);
            T_CHECK(sdx_model_clear_loras(m) == SDX_OK && sdx_model_lora_count(m) == 0, "%s", sdx_last_error(ctx));
            lora_collect(m, &sl);
            for (int i = 0; i < sl.n; i++)
                T_CHECK(lora_slot_is_file(sl.s[i]), "%s: '%s' is not the checkpoint's after clear", areas[a], sl.s[i]->file->name);
        }
        sdx_model_free(m);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

/* Writes a small LoRA file: two modules (up/down) with the given names
 * and shapes. */
static int lora_write(sdx_ctx *ctx, const char *path, const char *mod0, int64_t out0, int64_t in0,
                      const char *mod1, int64_t out1, int64_t in1) {
    static float data[4][4 * 4096];
    char names[4][256];
    sdx_tensor t[4];
    const char *mods[2] = { mod0, mod1 };
    int64_t outs[2] = { out0, out1 }, ins[2] = { in0, in1 };
    for (int i = 0; i < 4; i++) for (int k = 0; k < 4 * 4096; k++) data[i][k] = (float)((k * 7 + i) % 13) * 0.01f;
    for (int i = 0; i < 2; i++) {
        snprintf(names[2 * i], 256, "%s.lora_up.weight", mods[i]);
        snprintf(names[2 * i + 1], 256, "%s.lora_down.weight", mods[i]);
        t[2 * i] = sdx__view(SDX_F32, data[2 * i], 2, (const int64_t[]){ outs[i], 4 });
        t[2 * i + 1] = sdx__view(SDX_F32, data[2 * i + 1], 2, (const int64_t[]){ 4, ins[i] });
        t[2 * i].name = names[2 * i];
        t[2 * i + 1].name = names[2 * i + 1];
    }
    return sdx_st_write(ctx, path, t, 4, NULL, 0);
}

static int unmapped_keys_and_wrong_shapes_fail_and_leave_the_model_alone(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    const char *path = t_tmp("sdx_t_lora_bad.safetensors");
    const char *good = "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_q";
    const sdx_tensor *q = sdx_st_find(m->ckpt, "model.diffusion_model.input_blocks.1.1.transformer_blocks.0.attn1.to_q.weight");
    int64_t W = q->shape[0];
    lora_snapshot sn;
    /* a valid module first: nothing may be patched before the bad one is found */
    lora_snap(m, &sn);
    T_CHECK(lora_write(ctx, path, good, W, W, "lora_unet_down_blocks_9_attentions_0_proj_in", W, W) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_model_apply_lora(m, path, 1, 1) == SDX_ERR_MODEL, "unmapped module accepted");
    T_CHECK(strstr(sdx_last_error(ctx), "lora_unet_down_blocks_9_attentions_0_proj_in"), "message: %s", sdx_last_error(ctx));
    T_CHECK(lora_same_as_snap(m, &sn) && sdx_model_lora_count(m) == 0, "the model changed");

    lora_snap(m, &sn);
    T_CHECK(lora_write(ctx, path, good, W, W, "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_k", W, W + 8) == SDX_OK,
            "%s", sdx_last_error(ctx));
    T_CHECK(sdx_model_apply_lora(m, path, 1, 1) == SDX_ERR_MODEL, "mis-shaped module accepted");
    T_CHECK(strstr(sdx_last_error(ctx), "attn1_to_k") && strstr(sdx_last_error(ctx), "attn1.to_k.weight"), "message: %s", sdx_last_error(ctx));
    T_NOTE("%s", sdx_last_error(ctx));
    T_CHECK(lora_same_as_snap(m, &sn) && sdx_model_lora_count(m) == 0, "the model changed");

    /* a tensor with no LoRA suffix is named too */
    {
        float v[4] = { 0 };
        sdx_tensor t = sdx__view(SDX_F32, v, 1, (const int64_t[]){ 4 });
        t.name = "lora_unet_conv_in.something";
        T_CHECK(sdx_st_write(ctx, path, &t, 1, NULL, 0) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_model_apply_lora(m, path, 1, 1) == SDX_ERR_MODEL && strstr(sdx_last_error(ctx), "lora_unet_conv_in.something"),
                "message: %s", sdx_last_error(ctx));
    }
    remove(path);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* LyCORIS LoHa, LoKr and GLoRA, a diff and a DoRA LoRA written here, checked
 * against ComfyUI's formulas computed independently in double. */
static int lycoris_loha_lokr_glora_diff_and_dora_follow_comfyui_formulas(void) {
    T_NEED_MODEL(ctx, m, "sd1");
    const char *path = t_tmp("sdx_t_lora_lyco.safetensors");
    const char *kq = "model.diffusion_model.input_blocks.1.1.transformer_blocks.0.attn1.to_q.weight";
    const char *kc = "model.diffusion_model.input_blocks.2.0.in_layers.2.weight";
    const char *kd = "model.diffusion_model.input_blocks.1.1.proj_out.weight";
    const char *kk = "model.diffusion_model.input_blocks.1.1.transformer_blocks.0.attn1.to_k.weight";
    const sdx_tensor *q, *cv, *dw, *kt;
    static float dora_up[1 << 12], dora_down[1 << 12], dora_m[256];
    float alpha_d = 6.0f, alpha_g = 3.0f;
    const char *kg = "model.diffusion_model.input_blocks.2.0.out_layers.3.weight";
    const sdx_tensor *gw;
    int64_t GO, GI;
    static float ga1[1 << 14], ga2[1 << 14], gb1[1 << 14], gb2[1 << 16];
    int64_t W, O, I, R = 3;
    static float f[8][1 << 16];
    char names[8][200];
    sdx_tensor t[8];
    float alpha_h = 2.0f, alpha_k = 1.5f;
    q = sdx_st_find(m->ckpt, kq); cv = sdx_st_find(m->ckpt, kc); dw = sdx_st_find(m->ckpt, kd); kt = sdx_st_find(m->ckpt, kk);
    W = q->shape[0]; O = cv->shape[0]; I = cv->shape[1];
    gw = sdx_st_find(m->ckpt, kg); GO = gw->shape[0]; GI = gw->shape[1];
    T_CHECK(W % 2 == 0 && O % 2 == 0, "shapes");
    t_seed(5);
    for (int i = 0; i < 8; i++) t_fill_normal(f[i], 1 << 16, 0.1);
    /* LoHa on to_q: w1a [W,R] w1b [R,W] w2a [W,R] w2b [R,W] + alpha */
    const char *mh = "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_q";
    const char *mk = "lora_unet_down_blocks_0_resnets_1_conv1";
    const char *md = "lora_unet_down_blocks_0_attentions_0_proj_out";
    snprintf(names[0], 200, "%s.hada_w1_a", mh); t[0] = sdx__view(SDX_F32, f[0], 2, (const int64_t[]){ W, R });
    snprintf(names[1], 200, "%s.hada_w1_b", mh); t[1] = sdx__view(SDX_F32, f[1], 2, (const int64_t[]){ R, W });
    snprintf(names[2], 200, "%s.hada_w2_a", mh); t[2] = sdx__view(SDX_F32, f[2], 2, (const int64_t[]){ W, R });
    snprintf(names[3], 200, "%s.hada_w2_b", mh); t[3] = sdx__view(SDX_F32, f[3], 2, (const int64_t[]){ R, W });
    snprintf(names[4], 200, "%s.alpha", mh); t[4] = sdx__view(SDX_F32, &alpha_h, 0, NULL);
    /* LoKr on a 3x3 conv: w1 [2, 2] full, w2 = w2_a [O/2, R] @ w2_b [R, I/2*9] + alpha (scale alpha / R) */
    snprintf(names[5], 200, "%s.lokr_w1", mk); t[5] = sdx__view(SDX_F32, f[4], 2, (const int64_t[]){ 2, 2 });
    snprintf(names[6], 200, "%s.lokr_w2_a", mk); t[6] = sdx__view(SDX_F32, f[5], 2, (const int64_t[]){ O / 2, R });
    snprintf(names[7], 200, "%s.lokr_w2_b", mk); t[7] = sdx__view(SDX_F32, f[6], 2, (const int64_t[]){ R, I / 2 * 9 });
    {
        const char *mdo = "lora_unet_down_blocks_0_attentions_0_transformer_blocks_0_attn1_to_k";
        const char *mg = "lora_unet_down_blocks_0_resnets_1_conv2";
        sdx_tensor all[19];
        char n8[200], n9[200], n10[4][200], n14[5][200];
        T_CHECK(W * R <= (1 << 12) && W <= 256, "tiny model");
        for (int i = 0; i < 8; i++) { all[i] = t[i]; all[i].name = names[i]; }
        snprintf(n8, sizeof n8, "%s.alpha", mk);
        all[8] = sdx__view(SDX_F32, &alpha_k, 0, NULL); all[8].name = n8;
        snprintf(n9, sizeof n9, "%s.diff", md);
        all[9] = *dw; all[9].data = f[7]; all[9].dtype = SDX_F32; all[9].name = n9;
        t_fill_normal(dora_up, (size_t)(W * R), 0.2);
        t_fill_normal(dora_down, (size_t)(W * R), 0.2);
        for (int64_t i = 0; i < W; i++) dora_m[i] = 0.5f + (float)i / (float)W;
        snprintf(n10[0], 200, "%s.lora_up.weight", mdo); all[10] = sdx__view(SDX_F32, dora_up, 2, (const int64_t[]){ W, R });
        snprintf(n10[1], 200, "%s.lora_down.weight", mdo); all[11] = sdx__view(SDX_F32, dora_down, 2, (const int64_t[]){ R, W });
        snprintf(n10[2], 200, "%s.alpha", mdo); all[12] = sdx__view(SDX_F32, &alpha_d, 0, NULL);
        snprintf(n10[3], 200, "%s.dora_scale", mdo); all[13] = sdx__view(SDX_F32, dora_m, 2, (const int64_t[]){ 1, W });
        for (int i = 0; i < 4; i++) all[10 + i].name = n10[i];
        T_CHECK(GI * R <= (1 << 14) && GO * R <= (1 << 14) && R * GI * 9 <= (1 << 16) && gw->ndim == 4, "tiny model");
        t_fill_normal(ga1, (size_t)(GI * R), 0.1); t_fill_normal(ga2, (size_t)(GI * R), 0.1);
        t_fill_normal(gb1, (size_t)(GO * R), 0.1); t_fill_normal(gb2, (size_t)(R * GI * 9), 0.1);
        snprintf(n14[0], 200, "%s.a1.weight", mg); all[14] = sdx__view(SDX_F32, ga1, 2, (const int64_t[]){ GI, R });
        snprintf(n14[1], 200, "%s.a2.weight", mg); all[15] = sdx__view(SDX_F32, ga2, 2, (const int64_t[]){ R, GI });
        snprintf(n14[2], 200, "%s.b1.weight", mg); all[16] = sdx__view(SDX_F32, gb1, 2, (const int64_t[]){ GO, R });
        snprintf(n14[3], 200, "%s.b2.weight", mg); all[17] = sdx__view(SDX_F32, gb2, 4, (const int64_t[]){ R, GI, 3, 3 });
        snprintf(n14[4], 200, "%s.alpha", mg); all[18] = sdx__view(SDX_F32, &alpha_g, 0, NULL);
        for (int i = 0; i < 5; i++) all[14 + i].name = n14[i];
        T_CHECK(sdx_st_write(ctx, path, all, 19, NULL, 0) == SDX_OK, "%s", sdx_last_error(ctx));
    }
    T_CHECK(sdx_model_apply_lora(m, path, 0.5f, 1.0f) == SDX_OK, "%s", sdx_last_error(ctx));
    {
        const sdx_tensor *s = &sdx__wset_find(&m->unet.w, kq)->t;
        double err = 0, ref = 0, sc = 0.5 * alpha_h / (double)R;
        for (int64_t o = 0; o < W; o++)
            for (int64_t i = 0; i < W; i++) {
                double a = 0, b = 0, want;
                for (int64_t r = 0; r < R; r++) { a += (double)f[0][o * R + r] * f[1][r * W + i]; b += (double)f[2][o * R + r] * f[3][r * W + i]; }
                want = sdx__get_f32(q, o * W + i) + sc * a * b;
                err += (want - sdx__get_f32(s, o * W + i)) * (want - sdx__get_f32(s, o * W + i));
                ref += want * want;
            }
        T_CHECK(sqrt(err / ref) < 1e-6, "LoHa rel-L2 %.3e", sqrt(err / ref));
    }
    {
        const sdx_tensor *s = &sdx__wset_find(&m->unet.w, kc)->t;
        int64_t cols = I * 9, c2 = I / 2 * 9;
        double err = 0, ref = 0, sc = 0.5 * alpha_k / (double)R;
        for (int64_t o = 0; o < O; o++)
            for (int64_t c = 0; c < cols; c++) {
                int64_t i = o / (O / 2), p = o % (O / 2), j = c / c2, qq = c % c2;
                double w2 = 0, want;
                for (int64_t r = 0; r < R; r++) w2 += (double)f[5][p * R + r] * f[6][r * c2 + qq];
                want = sdx__get_f32(cv, o * cols + c) + sc * f[4][i * 2 + j] * w2;
                err += (want - sdx__get_f32(s, o * cols + c)) * (want - sdx__get_f32(s, o * cols + c));
                ref += want * want;
            }
        T_CHECK(sqrt(err / ref) < 1e-6, "LoKr rel-L2 %.3e", sqrt(err / ref));
    }
    {   /* GLoRA (new layout) on a 3x3 conv: W a1 a2 along the input channels + b1 @ b2, scale alpha / rank */
        const sdx_tensor *s = &sdx__wset_find(&m->unet.w, kg)->t;
        int64_t KL = 9;
        double err = 0, ref = 0, sc = 0.5 * alpha_g / (double)R;
        for (int64_t o = 0; o < GO; o++)
            for (int64_t i2 = 0; i2 < GI; i2++)
                for (int64_t q = 0; q < KL; q++) {
                    double d = 0, want;
                    for (int64_t i = 0; i < GI; i++) {
                        double wa = 0;
                        for (int64_t j = 0; j < R; j++) wa += (double)ga1[i * R + j] * ga2[j * GI + i2];
                        d += sdx__get_f32(gw, (o * GI + i) * KL + q) * wa;
                    }
                    for (int64_t r = 0; r < R; r++) d += (double)gb1[o * R + r] * gb2[r * GI * KL + i2 * KL + q];
                    want = sdx__get_f32(gw, (o * GI + i2) * KL + q) + sc * d;
                    err += (want - sdx__get_f32(s, (o * GI + i2) * KL + q)) * (want - sdx__get_f32(s, (o * GI + i2) * KL + q));
                    ref += want * want;
                }
        T_CHECK(sqrt(err / ref) < 1e-6, "GLoRA rel-L2 %.3e", sqrt(err / ref));
    }
    {   /* DoRA: V = W + alpha/rank up@down, V[:, i] *= m[i] / |V[:, i]|, W + 0.5 (V - W) */
        const sdx_tensor *s = &sdx__wset_find(&m->unet.w, kk)->t;
        double *v = malloc(sizeof(double) * (size_t)(W * W)), err = 0, ref = 0;
        for (int64_t o = 0; o < W; o++)
            for (int64_t i = 0; i < W; i++) {
                double d = 0;
                for (int64_t r = 0; r < R; r++) d += (double)dora_up[o * R + r] * dora_down[r * W + i];
                v[o * W + i] = sdx__get_f32(kt, o * W + i) + alpha_d / (double)R * d;
            }
        for (int64_t i = 0; i < W; i++) {
            double n = 0;
            for (int64_t o = 0; o < W; o++) n += v[o * W + i] * v[o * W + i];
            for (int64_t o = 0; o < W; o++) {
                double w0 = sdx__get_f32(kt, o * W + i), want = w0 + 0.5 * (v[o * W + i] * dora_m[i] / sqrt(n) - w0);
                err += (want - sdx__get_f32(s, o * W + i)) * (want - sdx__get_f32(s, o * W + i));
                ref += want * want;
            }
        }
        free(v);
        T_CHECK(sqrt(err / ref) < 1e-6, "DoRA rel-L2 %.3e", sqrt(err / ref));
    }
    {
        const sdx_tensor *s = &sdx__wset_find(&m->unet.w, kd)->t;
        int64_t n = sdx_tensor_numel(dw);
        for (int64_t i = 0; i < n; i++)
            T_CHECK(sdx__get_f32(s, i) == sdx__get_f32(dw, i) + 0.5f * f[7][i], "diff at %lld", (long long)i);
    }
    remove(path);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

static int generating_with_a_lora_equals_the_merged_checkpoint(void) {
    T_NEED_SHARED(dir, "golden/lora/loras");
    static const char *const areas[] = { "sd1", "sdxl" };
    static const char *const files[] = { "sd1_kohya_locon", "sdxl_kohya_locon" };
    sdx_ctx *ctx = t_ctx();
    for (int a = 0; a < 2; a++) {
        const char *out = t_tmp("sdx_t_lora_merged.safetensors");
        char path[1024];
        sdx_model *m = t_model(ctx, areas[a]), *merged;
        sdx_gen_params gp;
        sdx_gen_result r1, r2;
        sdx_st *in, *res;
        T_CHECK(m, "%s", sdx_last_error(ctx));
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, files[a]);
        T_CHECK(sdx_model_apply_lora(m, path, 0.9f, 0.7f) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_model_save(m, out) == SDX_OK, "%s", sdx_last_error(ctx));
        /* the written checkpoint: same keys, dtypes and metadata; untouched tensors byte-identical */
        in = m->ckpt;
        T_CHECK(sdx_st_open(ctx, out, &res) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_st_count(res) == sdx_st_count(in) && sdx_st_meta_count(res) == sdx_st_meta_count(in), "counts differ");
        for (int i = 0; i < sdx_st_count(in); i++) {
            const sdx_tensor *t = sdx_st_get(in, i), *u = sdx_st_find(res, t->name);
            sdx__wslot *s = sdx__wset_find(&m->unet.w, t->name);
            for (int e = 0; !s && e < m->te.n_enc; e++) s = sdx__wset_find(&m->te.enc[e].w, t->name);
            T_CHECK(u && u->dtype == t->dtype && u->ndim == t->ndim, "'%s' missing or retyped", t->name);
            if (s && !lora_slot_is_file(s))
                T_CHECK(!memcmp(u->data, s->t.data, sdx_tensor_nbytes(t)), "'%s': written merge differs from the model's", t->name);
            else
                T_CHECK(!memcmp(u->data, t->data, sdx_tensor_nbytes(t)), "'%s' not byte-identical", t->name);
        }
        sdx_st_close(res);
        memset(&gp, 0, sizeof gp);
        gp.prompt = "a red fox";
        gp.width = gp.height = 64;
        gp.steps = 2;
        gp.seed = 7;
        T_CHECK(sdx_generate(m, &gp, &r1) == SDX_OK, "%s", sdx_last_error(ctx));
        merged = t_model_file(ctx, out);
        T_CHECK(merged, "%s", sdx_last_error(ctx));
        T_CHECK(sdx_generate(merged, &gp, &r2) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(!memcmp(r1.latents[0].data, r2.latents[0].data, sdx_tensor_nbytes(&r1.latents[0])) &&
                !memcmp(r1.images[0].data, r2.images[0].data, 64 * 64 * 3), "%s: LoRA run differs from the merged checkpoint", areas[a]);
        sdx_gen_result_free(ctx, &r1);
        sdx_gen_result_free(ctx, &r2);
        sdx_model_free(merged);
        sdx_model_free(m);
        remove(out);
    }
    sdx_destroy(ctx);
    return T_PASS;
}

static int prompt_lora_tags_apply_for_one_generation(void) {
    T_NEED_SHARED(dir, "golden/lora/loras");
    T_NEED_MODEL(ctx, m, "sd1");
    sdx_gen_params gp;
    sdx_gen_result r1, r2;
    char path[1024], text[1024];
    lora_slots sl;
    memset(&gp, 0, sizeof gp);
    gp.width = gp.height = 64;
    gp.steps = 2;
    gp.seed = 3;
    /* A1111 order: <lora:name:te:unet> */
    gp.prompt = "a red <lora:sd1_kohya_locon:0.6:0.8>fox";
    T_CHECK(sdx_generate(m, &gp, &r1) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "sd1_kohya_locon"),
            "a tag without a folder: %s", sdx_last_error(ctx));
    gp.lora_dir = dir;
    {   /* one stage cannot apply a tag for the whole generation */
        sdx_cond *cond = NULL;
        T_CHECK(sdx_encode_prompt(m, &gp, &cond) == SDX_ERR_INVALID_ARG && !cond && strstr(sdx_last_error(ctx), "sdx_model_apply_lora"),
                "staged API took a tag: %s", sdx_last_error(ctx));
    }
    T_CHECK(sdx_generate(m, &gp, &r1) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_model_lora_count(m) == 0, "prompt LoRA still applied");
    lora_collect(m, &sl);
    for (int i = 0; i < sl.n; i++) T_CHECK(lora_slot_is_file(sl.s[i]), "'%s' not restored", sl.s[i]->file->name);
    snprintf(path, sizeof path, "%s/sd1_kohya_locon.safetensors", dir);
    T_CHECK(sdx_model_apply_lora(m, path, 0.8f, 0.6f) == SDX_OK, "%s", sdx_last_error(ctx));
    gp.prompt = "a red fox";
    T_CHECK(sdx_generate(m, &gp, &r2) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!memcmp(r1.latents[0].data, r2.latents[0].data, sdx_tensor_nbytes(&r1.latents[0])), "tag and API differ");
    /* parameters carry the applied LoRA as an A1111 tag */
    T_CHECK(sdx_format_parameters(m, &gp, 3, text, sizeof text, NULL) == SDX_OK && strstr(text, "a red fox <lora:sd1_kohya_locon:0.6:0.8>\n") &&
            strstr(text, ", Lora hashes: \"sd1_kohya_locon: b7e66346c278\", Version"), "parameters: %s", text);
    /* and from the prompt's tags, in order, before the model's */
    gp.prompt = "a <lora:sd2_kohya:1> fox";
    T_CHECK(sdx_format_parameters(m, &gp, 3, text, sizeof text, NULL) == SDX_OK &&
            strstr(text, "a <lora:sd2_kohya:1> fox <lora:sd1_kohya_locon:0.6:0.8>\n") &&
            strstr(text, "Lora hashes: \"sd2_kohya: e4978057320d, sd1_kohya_locon: b7e66346c278\""), "parameters: %s", text);
    sdx_gen_result_free(ctx, &r1);
    sdx_gen_result_free(ctx, &r2);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* A1111's short hash is SHA-256 (of the file after its header). */
static int sha256_matches_fips_vectors(void) {
    static const char a60[61] = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    unsigned char *a1000 = malloc(1000);
    char hex[65];
    memset(a1000, 'a', 1000);
    sdx__sha256_hex((const unsigned char *)"abc", 3, hex);
    T_CHECK(!strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"), "abc: %s", hex);
    sdx__sha256_hex((const unsigned char *)a60, 60, hex);      /* padding spills into a second block */
    T_CHECK(!strcmp(hex, "11ee391211c6256460b6ed375957fadd8061cafbb31daf967db875aebd5aaad4"), "60 x a: %s", hex);
    sdx__sha256_hex(a1000, 1000, hex);
    T_CHECK(!strcmp(hex, "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"), "1000 x a: %s", hex);
    sdx__sha256_hex(a1000, 0, hex);
    T_CHECK(!strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"), "empty: %s", hex);
    free(a1000);
    return T_PASS;
}

static const t_case lora_cases[] = {
    { "every_public_lora_case_matches_comfyui", every_public_lora_case_matches_comfyui },
    { "clearing_loras_gives_back_the_checkpoint_bit_exact", clearing_loras_gives_back_the_checkpoint_bit_exact },
    { "unmapped_keys_and_wrong_shapes_fail_and_leave_the_model_alone", unmapped_keys_and_wrong_shapes_fail_and_leave_the_model_alone },
    { "lycoris_loha_lokr_glora_diff_and_dora_follow_comfyui_formulas", lycoris_loha_lokr_glora_diff_and_dora_follow_comfyui_formulas },
    { "generating_with_a_lora_equals_the_merged_checkpoint", generating_with_a_lora_equals_the_merged_checkpoint },
    { "prompt_lora_tags_apply_for_one_generation", prompt_lora_tags_apply_for_one_generation },
    { "sha256_matches_fips_vectors", sha256_matches_fips_vectors },
    { 0, 0 }
};
SDX_TEST_SUITE(lora, lora_cases)

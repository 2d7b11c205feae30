#pragma once
#include "../core/safetensors.c"
#include "../core/ops.c"
#include "../family/family.c"
#include "../text/text_encoder.c"
#include "unet.c"

/* ===================================================================== */
/*  LoRA and LyCORIS: low-rank patches merged into the weight slots       */
/* ===================================================================== */
/* Follows ComfyUI (comfy/lora.py, comfy/weight_adapter; the rules are in
 * ../shared/golden/lora/README.md):
 *
 *   - A LoRA tensor is "<module><suffix>". The module name is looked up in
 *     a table built from the model's weights: every UNet weight under its
 *     LDM/SGM name (lora_unet_input_blocks_4_1_..., diffusion_model.X) and
 *     its diffusers name (lora_unet_down_blocks_..., lycoris_...,
 *     [unet.]down_blocks.... including the attention-processor form
 *     ...attn1.processor.to_q / to_out); every text-encoder projection
 *     (q/k/v/out_proj, mlp fc1/fc2) under its kohya name (lora_te_,
 *     lora_te1_, SDXL bigG lora_te2_) and its diffusers name
 *     (text_encoder., text_encoder_2.). OpenCLIP q/k/v land on row blocks
 *     of the fused in_proj_weight. A module that is not in the table, or a
 *     tensor with no known suffix, is an error naming it.
 *   - Adapters: LoRA / LoCon (up, down, optional mid and alpha: delta =
 *     up @ down, scale alpha / rank), LoHa ((w1a @ w1b) * (w2a @ w2b),
 *     optional Tucker t1/t2, scale alpha / rank), LoKr (kron(w1, w2),
 *     factors optionally low-rank, scale alpha / dim), GLoRA (from the
 *     current weight: W a1 a2 + b1 b2), full differences (.diff,
 *     .diff_b), and DoRA's magnitude rescaling (.dora_scale).
 *   - W' = W_file + sum over LoRAs in order of (strength * scale) * delta,
 *     in f32, written into the slot once (rounded once to its dtype).
 *     A patched tensor is always rebuilt from the file, so removing LoRAs
 *     gives back the file's weights exactly.
 *
 * Merging is host work (the file's factors are host memory): the products
 * run on the CPU GEMM whatever the backend, and the result goes into the
 * slot through sdx__wslot_set. */

typedef enum sdx__lora_kind { SDX__LORA_LOW_RANK, SDX__LORA_LOHA, SDX__LORA_LOKR, SDX__LORA_GLORA, SDX__LORA_DIFF } sdx__lora_kind;

/* What a module name stands for: the weight (rows [row0, row0 + rows) of
 * its slot) and the matching bias, which .diff_b patches. */
typedef struct sdx__lora_target {
    sdx__wset *w;
    sdx__wslot *weight, *bias;
    int64_t row0, rows;
    int te;                     /* text encoder: te strength; else UNet */
} sdx__lora_target;

typedef struct sdx__lora_name { char *name; sdx__lora_target tg; } sdx__lora_name;
typedef struct sdx__lora_map { sdx__lora_name *e; int n, cap; int oom; } sdx__lora_map;

/* Roles of the tensors of one module. */
enum {
    SDX__LR_UP, SDX__LR_DOWN, SDX__LR_MID, SDX__LR_ALPHA, SDX__LR_DORA,
    SDX__LR_W1A, SDX__LR_W1B, SDX__LR_W2A, SDX__LR_W2B, SDX__LR_T1, SDX__LR_T2,
    SDX__LR_K1, SDX__LR_K2, SDX__LR_K1A, SDX__LR_K1B, SDX__LR_K2A, SDX__LR_K2B, SDX__LR_KT2,
    SDX__LR_GA1, SDX__LR_GA2, SDX__LR_GB1, SDX__LR_GB2, SDX__LR_DIFF, SDX__LR_DIFF_B, SDX__LR_COUNT
};

/* Suffixes in ComfyUI's order (the first match wins). */
static const struct { const char *suffix; int role; } sdx__lora_suffixes[] = {
    { ".lora_up.weight", SDX__LR_UP }, { ".lora_down.weight", SDX__LR_DOWN }, { ".lora_mid.weight", SDX__LR_MID },
    { "_lora.up.weight", SDX__LR_UP }, { "_lora.down.weight", SDX__LR_DOWN },
    { ".lora_B.weight", SDX__LR_UP }, { ".lora_A.weight", SDX__LR_DOWN },
    { ".lora.up.weight", SDX__LR_UP }, { ".lora.down.weight", SDX__LR_DOWN },
    { ".lora_B", SDX__LR_UP }, { ".lora_A", SDX__LR_DOWN },
    { ".lora_linear_layer.up.weight", SDX__LR_UP }, { ".lora_linear_layer.down.weight", SDX__LR_DOWN },
    { ".alpha", SDX__LR_ALPHA }, { ".dora_scale", SDX__LR_DORA },
    { ".hada_w1_a", SDX__LR_W1A }, { ".hada_w1_b", SDX__LR_W1B }, { ".hada_w2_a", SDX__LR_W2A },
    { ".hada_w2_b", SDX__LR_W2B }, { ".hada_t1", SDX__LR_T1 }, { ".hada_t2", SDX__LR_T2 },
    { ".lokr_w1", SDX__LR_K1 }, { ".lokr_w2", SDX__LR_K2 }, { ".lokr_w1_a", SDX__LR_K1A }, { ".lokr_w1_b", SDX__LR_K1B },
    { ".lokr_w2_a", SDX__LR_K2A }, { ".lokr_w2_b", SDX__LR_K2B }, { ".lokr_t2", SDX__LR_KT2 },
    { ".a1.weight", SDX__LR_GA1 }, { ".a2.weight", SDX__LR_GA2 }, { ".b1.weight", SDX__LR_GB1 }, { ".b2.weight", SDX__LR_GB2 },
    { ".diff", SDX__LR_DIFF }, { ".diff_b", SDX__LR_DIFF_B },
};

typedef struct sdx__lora_module {
    char *name;
    sdx__lora_target tg;
    int mapped;
    sdx__lora_kind kind;
    int glora_old;              /* GLoRA: LyCORIS' first layout */
    int64_t glora_rank;
    const sdx_tensor *t[SDX__LR_COUNT];
} sdx__lora_module;

/* One LoRA file as applied: its tensors stay in the mapped file. */
typedef struct sdx__lora {
    sdx_st *st;
    char name[128];             /* file name without folder and extension */
    char hash[13];              /* A1111's short hash */
    float unet_strength, te_strength;
    sdx__lora_module *mod;
    int n_mod;
} sdx__lora;

static void sdx__lora_free(sdx_ctx *ctx, sdx__lora *l) {
    for (int i = 0; i < l->n_mod; i++) sdx__free(ctx, l->mod[i].name);
    sdx__free(ctx, l->mod);
    sdx_st_close(l->st);
    memset(l, 0, sizeof *l);
}

/* ---- the name table --------------------------------------------------- */

static void sdx__lora_map_free(sdx_ctx *ctx, sdx__lora_map *m) {
    for (int i = 0; i < m->n; i++) sdx__free(ctx, m->e[i].name);
    sdx__free(ctx, m->e);
    memset(m, 0, sizeof *m);
}

static void sdx__lora_map_add(sdx_ctx *ctx, sdx__lora_map *m, const char *name, const sdx__lora_target *tg) {
    char *copy;
    if (m->oom) return;
    if (m->n == m->cap) {
        int ncap = m->cap ? m->cap * 2 : 256;
        sdx__lora_name *ne = (sdx__lora_name *)sdx__realloc(ctx, m->e, sizeof *ne * (size_t)ncap);
        if (!ne) { m->oom = 1; return; }
        m->e = ne;
        m->cap = ncap;
    }
    if (!(copy = sdx__strdup(ctx, name))) { m->oom = 1; return; }
    m->e[m->n].name = copy;
    m->e[m->n].tg = *tg;
    m->n++;
}

/* name with every '.' turned into '_', behind `prefix` */
static void sdx__lora_map_add_kohya(sdx_ctx *ctx, sdx__lora_map *m, const char *prefix, const char *name,
                                    const sdx__lora_target *tg) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s%s", prefix, name);
    for (char *p = buf; *p; p++) if (*p == '.') *p = '_';
    sdx__lora_map_add(ctx, m, buf, tg);
}

static int sdx__lora_name_cmp(const void *a, const void *b) {
    return strcmp(((const sdx__lora_name *)a)->name, ((const sdx__lora_name *)b)->name);
}

static const sdx__lora_target *sdx__lora_map_find(const sdx__lora_map *m, const char *name) {
    sdx__lora_name key, *hit;
    key.name = (char *)name;
    hit = (sdx__lora_name *)bsearch(&key, m->e, (size_t)m->n, sizeof *m->e, sdx__lora_name_cmp);
    return hit ? &hit->tg : NULL;
}

/* Diffusers name of a UNet module given by its LDM name (no ".weight"),
 * as comfy.utils.unet_to_diffusers pairs them; 0 when there is none. */
static int sdx__unet_diffusers_name(const sdx__unet *u, const char *ldm, char *out, size_t size) {
    static const char *const resnet[][2] = {
        { "in_layers.0", "norm1" }, { "in_layers.2", "conv1" }, { "emb_layers.1", "time_emb_proj" },
        { "out_layers.0", "norm2" }, { "out_layers.3", "conv2" }, { "skip_connection", "conv_shortcut" },
    };
    static const char *const basic[][2] = {
        { "input_blocks.0.0", "conv_in" }, { "time_embed.0", "time_embedding.linear_1" },
        { "time_embed.2", "time_embedding.linear_2" }, { "label_emb.0.0", "add_embedding.linear_1" },
        { "label_emb.0.2", "add_embedding.linear_2" }, { "out.0", "conv_norm_out" }, { "out.2", "conv_out" },
    };
    char block[64] = "";
    const char *rest;
    int n, sub, len = 0;
    for (int i = 0; i < SDX__ARRAY_LEN(basic); i++)
        if (!strcmp(ldm, basic[i][0])) return snprintf(out, size, "%s", basic[i][1]) < (int)size;
    if (sscanf(ldm, "input_blocks.%d.%d.%n", &n, &sub, &len) == 2 && len > 0 && n >= 1) {
        int first = 1;
        for (int l = 0; l < u->n_levels; l++) {
            int nres = u->num_res_blocks[l], down = l + 1 < u->n_levels;
            if (n < first + nres) {
                snprintf(block, sizeof block, "down_blocks.%d.%s.%d", l, sub ? "attentions" : "resnets", n - first);
                break;
            }
            if (down && n == first + nres) {
                if (strcmp(ldm + len, "op") || sub) return 0;
                return snprintf(out, size, "down_blocks.%d.downsamplers.0.conv", l) < (int)size;
            }
            first += nres + down;
        }
    } else if (sscanf(ldm, "middle_block.%d.%n", &sub, &len) == 1 && len > 0) {
        if (sub == 1) snprintf(block, sizeof block, "mid_block.attentions.0");
        else snprintf(block, sizeof block, "mid_block.resnets.%d", sub / 2);
    } else if (sscanf(ldm, "output_blocks.%d.%d.%n", &n, &sub, &len) == 2 && len > 0) {
        int first = 0, found = 0;
        for (int l = u->n_levels - 1, up = 0; l >= 0; l--, up++) {
            int count = u->num_res_blocks[l] + 1;
            if (n < first + count) {
                rest = ldm + len;
                if (sub > 0 && !strcmp(rest, "conv")) {
                    if (n != first + count - 1) return 0;
                    return snprintf(out, size, "up_blocks.%d.upsamplers.0.conv", up) < (int)size;
                }
                snprintf(block, sizeof block, "up_blocks.%d.%s.%d", up, sub ? "attentions" : "resnets", n - first);
                found = 1;
                break;
            }
            first += count;
        }
        if (!found) return 0;
    } else {
        return 0;
    }
    if (len <= 0 || !block[0]) return 0;
    rest = ldm + len;
    if (strstr(block, "resnets")) {
        for (int i = 0; i < SDX__ARRAY_LEN(resnet); i++)
            if (!strcmp(rest, resnet[i][0])) return snprintf(out, size, "%s.%s", block, resnet[i][1]) < (int)size;
        return 0;
    }
    return snprintf(out, size, "%s.%s", block, rest) < (int)size;
}

static void sdx__lora_map_unet(sdx_ctx *ctx, sdx__lora_map *m, sdx__unet *u) {
    static const char pre[] = "model.diffusion_model.";
    for (int i = 0; i < u->w.n_slots; i++) {
        sdx__wslot *sl = u->w.slots[i];
        const char *key = sl->file->name;
        size_t n = strlen(key);
        char ldm[400], d[400], buf[460], *p;
        sdx__lora_target tg;
        if (strncmp(key, pre, sizeof pre - 1) || n < sizeof pre - 1 + 7 || strcmp(key + n - 7, ".weight")) continue;
        if (n - (sizeof pre - 1) - 7 >= sizeof ldm) continue;
        memcpy(ldm, key + sizeof pre - 1, n - (sizeof pre - 1) - 7);
        ldm[n - (sizeof pre - 1) - 7] = 0;
        memset(&tg, 0, sizeof tg);
        tg.w = &u->w;
        tg.weight = sl;
        snprintf(buf, sizeof buf, "%s%s.bias", pre, ldm);
        tg.bias = sdx__wset_find(&u->w, buf);
        tg.rows = sl->t.shape[0];
        sdx__lora_map_add_kohya(ctx, m, "lora_unet_", ldm, &tg);
        snprintf(buf, sizeof buf, "diffusion_model.%s", ldm);
        sdx__lora_map_add(ctx, m, buf, &tg);
        if (!sdx__unet_diffusers_name(u, ldm, d, sizeof d)) continue;
        sdx__lora_map_add_kohya(ctx, m, "lora_unet_", d, &tg);
        sdx__lora_map_add_kohya(ctx, m, "lycoris_", d, &tg);
        sdx__lora_map_add(ctx, m, d, &tg);                  /* PEFT, no prefix */
        snprintf(buf, sizeof buf, "unet.%s", d);
        sdx__lora_map_add(ctx, m, buf, &tg);                /* PEFT */
        if (!(p = strstr(d, ".to_"))) continue;
        /* the attention-processor form: ...attn1.processor.to_q, .to_out */
        snprintf(buf, sizeof buf, "%.*s.processor%s", (int)(p - d), d, p);
        n = strlen(buf);
        if (n > 9 && !strcmp(buf + n - 9, ".to_out.0")) buf[n - 2] = 0;
        sdx__lora_map_add(ctx, m, buf, &tg);
        memmove(buf + 5, buf, strlen(buf) + 1);
        memcpy(buf, "unet.", 5);
        sdx__lora_map_add(ctx, m, buf, &tg);
    }
}

/* Text encoder e of te: which kohya / diffusers prefixes name it. */
static void sdx__lora_map_clip(sdx_ctx *ctx, sdx__lora_map *m, sdx__textenc *te, int e) {
    static const char *const hf[6] = { "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj",
                                       "mlp.fc1", "mlp.fc2" };
    static const char *const open[6] = { "attn.in_proj", "attn.in_proj", "attn.in_proj", "attn.out_proj", "mlp.c_fc",
                                         "mlp.c_proj" };
    sdx__clip *c = &te->enc[e];
    const sdx__family_encoder *fe = &sdx__family_get(te->family)->enc[e];   /* its LoRA names */
    const char *const *kohya = fe->lora_kohya;
    const char *diffusers = fe->lora_diffusers;
    for (int b = 0; b < c->n_layers; b++)
        for (int k = 0; k < 6; k++) {
            char key[400], bias[400], name[200];
            sdx__lora_target tg;
            memset(&tg, 0, sizeof tg);
            tg.w = &c->w;
            tg.te = 1;
            if (c->layout == SDX__CLIP_HF) {
                snprintf(key, sizeof key, "%sencoder.layers.%d.%s.weight", c->w.prefix, b, hf[k]);
                snprintf(bias, sizeof bias, "%sencoder.layers.%d.%s.bias", c->w.prefix, b, hf[k]);
            } else {
                const char *sep = k < 3 ? "_" : ".";     /* in_proj_weight, out_proj.weight */
                snprintf(key, sizeof key, "%stransformer.resblocks.%d.%s%sweight", c->w.prefix, b, open[k], sep);
                snprintf(bias, sizeof bias, "%stransformer.resblocks.%d.%s%sbias", c->w.prefix, b, open[k], sep);
            }
            if (!(tg.weight = sdx__wset_find(&c->w, key))) continue;
            tg.bias = sdx__wset_find(&c->w, bias);
            tg.rows = tg.weight->t.shape[0];
            if (c->layout == SDX__CLIP_OPEN && k < 3) {
                tg.rows = c->width;
                tg.row0 = (int64_t)k * c->width;
            }
            snprintf(name, sizeof name, "text_model.encoder.layers.%d.%s", b, hf[k]);
            for (int p = 0; p < 2; p++)
                if (kohya[p]) sdx__lora_map_add_kohya(ctx, m, kohya[p], name, &tg);
            {
                char full[256];
                snprintf(full, sizeof full, "%s%s", diffusers, name);
                sdx__lora_map_add(ctx, m, full, &tg);
            }
        }
}

/* The table for a model: sorted, duplicates (the same name for the same
 * weight) harmless. */
static int sdx__lora_map_build(sdx_ctx *ctx, sdx__textenc *te, sdx__unet *u, sdx__lora_map *m) {
    memset(m, 0, sizeof *m);
    if (u) sdx__lora_map_unet(ctx, m, u);
    for (int e = 0; te && e < te->n_enc; e++) sdx__lora_map_clip(ctx, m, te, e);
    if (m->oom) { sdx__lora_map_free(ctx, m); return sdx__nomem(ctx, "LoRA key table", 0); }
    qsort(m->e, (size_t)m->n, sizeof *m->e, sdx__lora_name_cmp);
    return SDX_OK;
}

/* ---- reading a LoRA file ---------------------------------------------- */

static int sdx__lora_split(const char *name, size_t *module_len) {
    size_t n = strlen(name);
    for (int i = 0; i < SDX__ARRAY_LEN(sdx__lora_suffixes); i++) {
        size_t k = strlen(sdx__lora_suffixes[i].suffix);
        if (n > k && !strcmp(name + n - k, sdx__lora_suffixes[i].suffix)) { *module_len = n - k; return sdx__lora_suffixes[i].role; }
    }
    return -1;
}

static sdx__lora_module *sdx__lora_module_get(sdx_ctx *ctx, sdx__lora *l, const char *name, size_t len, int *cap) {
    for (int i = l->n_mod - 1; i >= 0; i--)
        if (strlen(l->mod[i].name) == len && !memcmp(l->mod[i].name, name, len)) return &l->mod[i];
    if (l->n_mod == *cap) {
        int ncap = *cap ? *cap * 2 : 64;
        sdx__lora_module *nm = (sdx__lora_module *)sdx__realloc(ctx, l->mod, sizeof *nm * (size_t)ncap);
        if (!nm) return NULL;
        l->mod = nm;
        *cap = ncap;
    }
    memset(&l->mod[l->n_mod], 0, sizeof *l->mod);
    if (!(l->mod[l->n_mod].name = (char *)sdx__malloc(ctx, len + 1))) return NULL;
    memcpy(l->mod[l->n_mod].name, name, len);
    l->mod[l->n_mod].name[len] = 0;
    return &l->mod[l->n_mod++];
}

/* A list of names for a message: the first few, then a count. */
static void sdx__names_add(char *buf, size_t size, int *count, const char *name) {
    size_t used = strlen(buf);
    if (*count < 8 && used + 8 < size) snprintf(buf + used, size - used, "%s'%s'", *count ? ", " : "", name);
    (*count)++;
}

static int64_t sdx__numel(const sdx_tensor *t) { return t ? sdx_tensor_numel(t) : 0; }

/* rows x cols of the delta a module produces, after checking its
 * factors agree with each other. */
static int sdx__lora_module_shape(sdx_ctx *ctx, const sdx__lora *l, sdx__lora_module *md, int64_t *rows, int64_t *cols) {
    const sdx_tensor *const *t = (const sdx_tensor *const *)md->t;
    const char *path = sdx_st_path(l->st);
    char s1[96], s2[96];
    switch (md->kind) {
    case SDX__LORA_LOW_RANK: {
        int64_t rank = t[SDX__LR_DOWN]->ndim ? t[SDX__LR_DOWN]->shape[0] : 0, up_in;
        *rows = t[SDX__LR_UP]->ndim ? t[SDX__LR_UP]->shape[0] : 0;
        up_in = *rows ? sdx__numel(t[SDX__LR_UP]) / *rows : 0;
        *cols = rank ? sdx__numel(t[SDX__LR_DOWN]) / rank : 0;
        if (t[SDX__LR_MID]) {
            const sdx_tensor *mid = t[SDX__LR_MID];
            if (mid->ndim != 4 || mid->shape[0] != rank || mid->shape[1] != rank || t[SDX__LR_DOWN]->ndim < 2)
                return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoRA '%s': lora_mid %s does not fit lora_down %s", path, md->name,
                                 sdx_shape_str(mid, s1, sizeof s1), sdx_shape_str(t[SDX__LR_DOWN], s2, sizeof s2));
            *cols = t[SDX__LR_DOWN]->shape[1] * mid->shape[2] * mid->shape[3];
        }
        if (!rank || up_in != rank)
            return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoRA '%s': up %s and down %s disagree on the rank", path, md->name,
                             sdx_shape_str(t[SDX__LR_UP], s1, sizeof s1), sdx_shape_str(t[SDX__LR_DOWN], s2, sizeof s2));
        return SDX_OK;
    }
    case SDX__LORA_LOHA: {
        for (int k = 0; k < 2; k++) {
            const sdx_tensor *a = t[k ? SDX__LR_W2A : SDX__LR_W1A], *b = t[k ? SDX__LR_W2B : SDX__LR_W1B];
            const sdx_tensor *tk = t[k ? SDX__LR_T2 : SDX__LR_T1];
            int64_t r, c;
            if (a->ndim != 2 || b->ndim != 2 || (tk && tk->ndim != 4))
                return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoHa '%s': hada_w%d_a %s / _b %s must be matrices", path, md->name, k + 1,
                                 sdx_shape_str(a, s1, sizeof s1), sdx_shape_str(b, s2, sizeof s2));
            if (tk) {     /* Tucker: a [rank, out], b [rank, in], t [rank, rank, kh, kw] */
                if (tk->shape[0] != a->shape[0] || tk->shape[1] != b->shape[0])
                    return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoHa '%s': hada_t%d does not fit its factors", path, md->name, k + 1);
                r = a->shape[1];
                c = b->shape[1] * tk->shape[2] * tk->shape[3];
            } else {
                if (a->shape[1] != b->shape[0])
                    return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoHa '%s': hada_w%d_a %s and _b %s disagree on the rank", path,
                                     md->name, k + 1, sdx_shape_str(a, s1, sizeof s1), sdx_shape_str(b, s2, sizeof s2));
                r = a->shape[0];
                c = b->shape[1];
            }
            if (k && (r != *rows || c != *cols))
                return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoHa '%s': the two Hadamard factors have different shapes", path, md->name);
            *rows = r;
            *cols = c;
        }
        return SDX_OK;
    }
    case SDX__LORA_LOKR: {
        int64_t r1, c1, r2, c2;
        if (t[SDX__LR_K1]) { r1 = t[SDX__LR_K1]->ndim ? t[SDX__LR_K1]->shape[0] : 0; c1 = r1 ? sdx__numel(t[SDX__LR_K1]) / r1 : 0; }
        else {
            if (t[SDX__LR_K1A]->ndim != 2 || t[SDX__LR_K1B]->ndim != 2 || t[SDX__LR_K1A]->shape[1] != t[SDX__LR_K1B]->shape[0])
                return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoKr '%s': lokr_w1_a and lokr_w1_b do not multiply", path, md->name);
            r1 = t[SDX__LR_K1A]->shape[0];
            c1 = t[SDX__LR_K1B]->shape[1];
        }
        if (t[SDX__LR_K2]) { r2 = t[SDX__LR_K2]->ndim ? t[SDX__LR_K2]->shape[0] : 0; c2 = r2 ? sdx__numel(t[SDX__LR_K2]) / r2 : 0; }
        else if (t[SDX__LR_KT2]) {
            const sdx_tensor *a = t[SDX__LR_K2A], *b = t[SDX__LR_K2B], *tk = t[SDX__LR_KT2];
            if (a->ndim != 2 || b->ndim != 2 || tk->ndim != 4 || tk->shape[0] != a->shape[0] || tk->shape[1] != b->shape[0])
                return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoKr '%s': lokr_t2 does not fit lokr_w2_a / lokr_w2_b", path, md->name);
            r2 = a->shape[1];
            c2 = b->shape[1] * tk->shape[2] * tk->shape[3];
        } else {
            if (t[SDX__LR_K2A]->ndim != 2 || t[SDX__LR_K2B]->ndim != 2 || t[SDX__LR_K2A]->shape[1] != t[SDX__LR_K2B]->shape[0])
                return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoKr '%s': lokr_w2_a and lokr_w2_b do not multiply", path, md->name);
            r2 = t[SDX__LR_K2A]->shape[0];
            c2 = t[SDX__LR_K2B]->shape[1];
        }
        *rows = r1 * r2;
        *cols = c1 * c2;
        return SDX_OK;
    }
    case SDX__LORA_GLORA:
        return SDX_OK;      /* checked against the weight (sdx__lora_glora_check) */
    case SDX__LORA_DIFF:
    default: {
        const sdx_tensor *d = t[SDX__LR_DIFF] ? t[SDX__LR_DIFF] : t[SDX__LR_DIFF_B];
        *rows = d->ndim ? d->shape[0] : 1;
        *cols = *rows ? sdx__numel(d) / *rows : 0;
        return SDX_OK;
    }
    }
}

/* Which adapter a module's tensors make, or an error naming what is
 * missing or does not belong. */
static int sdx__lora_module_kind(sdx_ctx *ctx, const sdx__lora *l, sdx__lora_module *md) {
    const sdx_tensor *const *t = (const sdx_tensor *const *)md->t;
    const char *path = sdx_st_path(l->st);
    int lr = t[SDX__LR_UP] || t[SDX__LR_DOWN] || t[SDX__LR_MID];
    int ha = t[SDX__LR_W1A] || t[SDX__LR_W1B] || t[SDX__LR_W2A] || t[SDX__LR_W2B] || t[SDX__LR_T1] || t[SDX__LR_T2];
    int kr = t[SDX__LR_K1] || t[SDX__LR_K2] || t[SDX__LR_K1A] || t[SDX__LR_K1B] || t[SDX__LR_K2A] || t[SDX__LR_K2B] || t[SDX__LR_KT2];
    int gl = t[SDX__LR_GA1] || t[SDX__LR_GA2] || t[SDX__LR_GB1] || t[SDX__LR_GB2];
    int df = t[SDX__LR_DIFF] || t[SDX__LR_DIFF_B];
    if (lr + ha + kr + gl + df != 1)
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s: module '%s' has %s", path, md->name,
                         lr + ha + kr + gl + df ? "tensors of several adapter kinds" : "only an alpha and no weights");
    if (lr) {
        if (!t[SDX__LR_UP] || !t[SDX__LR_DOWN])
            return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoRA module '%s' has no %s", path, md->name, t[SDX__LR_UP] ? "down weight" : "up weight");
        md->kind = SDX__LORA_LOW_RANK;
    } else if (ha) {
        if (!t[SDX__LR_W1A] || !t[SDX__LR_W1B] || !t[SDX__LR_W2A] || !t[SDX__LR_W2B] || (!t[SDX__LR_T1]) != (!t[SDX__LR_T2]))
            return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoHa module '%s' needs hada_w1_a, hada_w1_b, hada_w2_a, hada_w2_b "
                             "(and both or neither of hada_t1, hada_t2)", path, md->name);
        md->kind = SDX__LORA_LOHA;
    } else if (kr) {
        int w1 = t[SDX__LR_K1] ? !t[SDX__LR_K1A] && !t[SDX__LR_K1B] : t[SDX__LR_K1A] && t[SDX__LR_K1B];
        int w2 = t[SDX__LR_K2] ? !t[SDX__LR_K2A] && !t[SDX__LR_K2B] && !t[SDX__LR_KT2] : t[SDX__LR_K2A] && t[SDX__LR_K2B];
        if (!w1 || !w2)
            return sdx__fail(ctx, SDX_ERR_MODEL, "%s: LoKr module '%s' needs lokr_w1 or lokr_w1_a + lokr_w1_b, and lokr_w2 "
                             "or lokr_w2_a + lokr_w2_b (+ lokr_t2)", path, md->name);
        md->kind = SDX__LORA_LOKR;
    } else if (gl) {
        for (int r = SDX__LR_GA1; r <= SDX__LR_GB2; r++)
            if (!t[r] || t[r]->ndim < 2)
                return sdx__fail(ctx, SDX_ERR_MODEL, "%s: GLoRA module '%s' needs matrices a1, a2, b1 and b2 (.weight)", path, md->name);
        md->kind = SDX__LORA_GLORA;
    } else {
        md->kind = SDX__LORA_DIFF;
        if (t[SDX__LR_DORA])
            return sdx__fail(ctx, SDX_ERR_MODEL, "%s: '%s.dora_scale' belongs to no low-rank adapter", path, md->name);
    }
    for (int r = 0; r < SDX__LR_COUNT; r++)
        if (t[r] && t[r]->dtype != SDX_F32 && t[r]->dtype != SDX_F16 && t[r]->dtype != SDX_BF16)
            return sdx__fail(ctx, SDX_ERR_MODEL, "%s: tensor of '%s' has dtype %s; LoRA tensors must be F32, F16 or BF16", path,
                             md->name, sdx_dtype_name(t[r]->dtype));
    return SDX_OK;
}

/* GLoRA (ComfyUI glora.py): which layout the four matrices are in, and
 * that their products fit the weight [O, I, KL] (O = rows). Old layout:
 * delta = b2 @ b1 + (W @ a2) @ a1 over W [O, I*KL]; new: W a1 a2 along
 * the input channels, + b1 @ b2. */
static int sdx__lora_glora_check(sdx_ctx *ctx, const sdx__lora *l, sdx__lora_module *md, int64_t O, int64_t I, int64_t KL) {
    const sdx_tensor *a1 = md->t[SDX__LR_GA1], *a2 = md->t[SDX__LR_GA2], *b1 = md->t[SDX__LR_GB1], *b2 = md->t[SDX__LR_GB2];
    int64_t a1c = sdx_tensor_numel(a1) / SDX__MAX(a1->shape[0], 1), a2c = sdx_tensor_numel(a2) / SDX__MAX(a2->shape[0], 1);
    int64_t b1c = sdx_tensor_numel(b1) / SDX__MAX(b1->shape[0], 1), b2c = sdx_tensor_numel(b2) / SDX__MAX(b2->shape[0], 1);
    int64_t N = I * KL;
    int old = b2->shape[1] == b1->shape[0] && b1->shape[0] == a1->shape[0] && a1->shape[0] == a2->shape[1], ok;
    md->glora_rank = a1->shape[0];
    if (b2->shape[0] == b1->shape[1] && b1->shape[1] == a1->shape[1] && a1->shape[1] == a2->shape[0] &&
        !(old && a2->shape[0] == O && O == I)) {
        old = 0;
        md->glora_rank = a2->shape[0];
    } else if (!old) {
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s: GLoRA module '%s': a1, a2, b1, b2 fit neither GLoRA layout", sdx_st_path(l->st), md->name);
    }
    md->glora_old = old;
    if (old) ok = b2c == b1->shape[0] && b2->shape[0] * b1c == O * N && a2->shape[0] == N && a2c == a1->shape[0] && a1c == N;
    else ok = a1->shape[0] == I && a1c == a2->shape[0] && a2c == I && b1c == b2->shape[0] && b1->shape[0] * b2c == O * N;
    if (!ok)
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s: GLoRA module '%s' does not fit model weight '%s' (%lld outputs x %lld inputs x %lld)",
                         sdx_st_path(l->st), md->name, md->tg.weight->file->name, (long long)O, (long long)I, (long long)KL);
    return SDX_OK;
}

/* Checks that the delta fits its target; the message names the key, the
 * model's shape and what the file holds. */
static int sdx__lora_module_check(sdx_ctx *ctx, const sdx__lora *l, sdx__lora_module *md) {
    const sdx__lora_target *tg = &md->tg;
    int64_t rows = 0, cols = 0, want_rows, want_cols;
    const sdx_tensor *target = md->t[SDX__LR_DIFF_B] && !md->t[SDX__LR_DIFF] ? (tg->bias ? &tg->bias->t : NULL) : &tg->weight->t;
    char s1[96], s2[96];
    int rc;
    if ((rc = sdx__lora_module_kind(ctx, l, md)) != SDX_OK) return rc;
    if (md->kind == SDX__LORA_DIFF && md->t[SDX__LR_DIFF] && md->t[SDX__LR_DIFF_B])
        return sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "%s: module '%s' has both .diff and .diff_b; give them as two modules",
                         sdx_st_path(l->st), md->name);
    if (!target)
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s: '%s.diff_b': the model weight '%s' has no bias", sdx_st_path(l->st), md->name,
                         tg->weight->file->name);
    if ((rc = sdx__lora_module_shape(ctx, l, md, &rows, &cols)) != SDX_OK) return rc;
    want_rows = tg->rows;
    want_cols = target->shape[0] ? sdx_tensor_numel(target) / target->shape[0] : 0;
    if (target->ndim == 1) want_cols = 1;
    if (md->kind == SDX__LORA_GLORA) {
        if (target->ndim < 2)
            return sdx__fail(ctx, SDX_ERR_MODEL, "%s: GLoRA module '%s' on a 1-D weight", sdx_st_path(l->st), md->name);
        if ((rc = sdx__lora_glora_check(ctx, l, md, want_rows, target->shape[1], want_cols / target->shape[1])) != SDX_OK) return rc;
        rows = want_rows;
        cols = want_cols;
    }
    if (md->t[SDX__LR_DORA] && (target->ndim < 2 || sdx_tensor_numel(md->t[SDX__LR_DORA]) != target->shape[1]))
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s: '%s.dora_scale' %s: expected one magnitude per input channel of '%s' (%lld)",
                         sdx_st_path(l->st), md->name, sdx_shape_str(md->t[SDX__LR_DORA], s1, sizeof s1), target->name,
                         (long long)(target->ndim >= 2 ? target->shape[1] : 0));
    if (rows != want_rows || cols != want_cols) {
        sdx_tensor shown = *target;
        if (target->ndim >= 1) shown.shape[0] = tg->rows;
        sdx_shape_str(&shown, s1, sizeof s1);
        s2[0] = 0;
        for (int r = 0, used = 0; r < SDX__LR_COUNT && used < (int)sizeof s2 - 24; r++)
            if (md->t[r] && r != SDX__LR_ALPHA) {
                char one[64];
                used += snprintf(s2 + used, sizeof s2 - (size_t)used, "%s%s", used ? " " : "", sdx_shape_str(md->t[r], one, sizeof one));
            }
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s: '%s' -> model weight '%s'%s: expected a %s delta, found factors %s "
                         "(a %lldx%lld delta)", sdx_st_path(l->st), md->name, target->name ? target->name : tg->weight->file->name,
                         tg->row0 || tg->rows != target->shape[0] ? " (row block)" : "", s1, s2, (long long)rows, (long long)cols);
    }
    return SDX_OK;
}

/* Opens a LoRA (its file, buffer or read callbacks, all of it read: the
 * merge reads every factor, the hash every byte) and resolves every
 * tensor to a module and target. Errors name each tensor that maps to
 * nothing. The model is not touched. */
static int sdx__lora_open(sdx_ctx *ctx, const sdx_source *src, const sdx__lora_map *map, sdx__lora *l) {
    char unmapped[1024] = "", unknown[1024] = "";
    int n_unmapped = 0, n_unknown = 0, cap = 0, rc;
    const char *path;
    memset(l, 0, sizeof *l);
    if ((rc = sdx_st_open_source(ctx, src, &l->st)) != SDX_OK) return rc;
    path = sdx_st_path(l->st);
    sdx__path_stem(path, l->name, sizeof l->name);
    if ((rc = sdx__st_need_all(l->st)) != SDX_OK) goto fail;
    for (int i = 0; i < sdx_st_count(l->st); i++) {
        const sdx_tensor *t = sdx_st_get(l->st, i);
        size_t len = 0;
        int role = sdx__lora_split(t->name, &len);
        sdx__lora_module *md;
        if (role < 0) { sdx__names_add(unknown, sizeof unknown, &n_unknown, t->name); continue; }
        if (!(md = sdx__lora_module_get(ctx, l, t->name, len, &cap))) { rc = sdx__nomem(ctx, "LoRA modules", 0); goto fail; }
        md->t[role] = t;
    }
    if (n_unknown) {
        rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: %d tensor(s) are not LoRA / LyCORIS weights (unknown suffix): %s%s", path, n_unknown,
                       unknown, n_unknown > 8 ? ", ..." : "");
        goto fail;
    }
    for (int i = 0; i < l->n_mod; i++) {
        sdx__lora_module *md = &l->mod[i];
        const sdx__lora_target *tg = sdx__lora_map_find(map, md->name);
        if (!tg) { sdx__names_add(unmapped, sizeof unmapped, &n_unmapped, md->name); continue; }
        md->tg = *tg;
        md->mapped = 1;
    }
    if (n_unmapped) {
        rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: %d LoRA module(s) match no weight of this model: %s%s", path, n_unmapped, unmapped,
                       n_unmapped > 8 ? ", ..." : "");
        goto fail;
    }
    for (int i = 0; i < l->n_mod; i++)
        if ((rc = sdx__lora_module_check(ctx, l, &l->mod[i])) != SDX_OK) goto fail;
    return SDX_OK;
fail:
    sdx__lora_free(ctx, l);
    return rc;
}

/* ---- merging ---------------------------------------------------------- */

/* Host copy of a file tensor in f32. */
static float *sdx__lora_f32(sdx_ctx *ctx, const sdx_tensor *t) {
    int64_t n = sdx_tensor_numel(t);
    float *p = (float *)sdx__malloc(ctx, (size_t)(n ? n : 1) * sizeof(float));
    if (p) sdx__load_f32(t->data, t->dtype, 0, n, p);
    else sdx__nomem(ctx, t->name, (size_t)n * sizeof(float));
    return p;
}

/* c[M, N] = a[M, K] @ b[K, N] (f32 host buffers) on the host backend's GEMM. */
static int sdx__lora_matmul(sdx_ctx *ctx, float *c, const float *a, const float *b, int64_t M, int64_t K, int64_t N) {
    float *bt = (float *)sdx__malloc(ctx, (size_t)(K * N > 0 ? K * N : 1) * sizeof(float));
    sdx_tensor y, x, w;
    int rc;
    if (!bt) return sdx__nomem(ctx, "LoRA product", (size_t)(K * N) * sizeof(float));
    for (int64_t k = 0; k < K; k++)
        for (int64_t n = 0; n < N; n++) bt[n * K + k] = b[k * N + n];
    {
        const int64_t ys[2] = { M, N }, xs[2] = { M, K }, ws[2] = { N, K };
        y = sdx__view(SDX_F32, c, 2, ys);
        x = sdx__view(SDX_F32, (void *)a, 2, xs);
        w = sdx__view(SDX_F32, bt, 2, ws);
    }
    rc = sdx__host_linear(ctx, &y, &x, &w, NULL, SDX_F32);
    sdx__free(ctx, bt);
    return rc;
}

/* Tucker product einsum('i j k l, j r, i p -> p r k l', t, b, a):
 * out[p, r, k, l] = sum_ij t[i, j, k, l] b[j, r] a[i, p]. */
static int sdx__lora_tucker(sdx_ctx *ctx, const sdx_tensor *tt, const sdx_tensor *ta, const sdx_tensor *tb, float *out) {
    int64_t I = tt->shape[0], J = tt->shape[1], KL = tt->shape[2] * tt->shape[3], P = ta->shape[1], R = tb->shape[1];
    float *t = sdx__lora_f32(ctx, tt), *a = sdx__lora_f32(ctx, ta), *b = sdx__lora_f32(ctx, tb);
    int rc = t && a && b ? SDX_OK : SDX_ERR_NOMEM;
    if (rc == SDX_OK) {
        for (int64_t i = 0; i < P * R * KL; i++) out[i] = 0;
        for (int64_t i = 0; i < I; i++)
            for (int64_t j = 0; j < J; j++)
                for (int64_t p = 0; p < P; p++) {
                    float ap = a[i * P + p];
                    for (int64_t r = 0; r < R; r++) {
                        float f = ap * b[j * R + r];
                        const float *tij = t + (i * J + j) * KL;
                        float *o = out + (p * R + r) * KL;
                        for (int64_t q = 0; q < KL; q++) o[q] += f * tij[q];
                    }
                }
    }
    sdx__free(ctx, t); sdx__free(ctx, a); sdx__free(ctx, b);
    return rc;
}

/* a @ b of two file tensors as matrices [rows, rank] @ [rank, cols]. */
static int sdx__lora_product(sdx_ctx *ctx, const sdx_tensor *ta, const sdx_tensor *tb, float *out) {
    int64_t M = ta->shape[0], K = tb->shape[0], N = sdx_tensor_numel(tb) / (K ? K : 1);
    float *a = sdx__lora_f32(ctx, ta), *b = sdx__lora_f32(ctx, tb);
    int rc = a && b ? sdx__lora_matmul(ctx, out, a, b, M, K, N) : SDX_ERR_NOMEM;
    sdx__free(ctx, a);
    sdx__free(ctx, b);
    return rc;
}

/* GLoRA's delta from the current weight cur [O, I, KL] (see
 * sdx__lora_glora_check). */
static int sdx__lora_glora_delta(sdx_ctx *ctx, const sdx__lora_module *md, const float *cur, int64_t I, int64_t O, int64_t cols,
                                 float *delta) {
    const sdx_tensor *a1 = md->t[SDX__LR_GA1], *a2 = md->t[SDX__LR_GA2], *b1 = md->t[SDX__LR_GB1], *b2 = md->t[SDX__LR_GB2];
    int64_t KL = cols / I, a2c = sdx_tensor_numel(a2) / a2->shape[0], J = sdx_tensor_numel(a1) / a1->shape[0];
    float *fa1 = sdx__lora_f32(ctx, a1), *fa2 = sdx__lora_f32(ctx, a2);
    float *tmp = (float *)sdx__malloc(ctx, (size_t)(O * (md->glora_old ? a2c : J * KL) + O * cols) * sizeof(float));
    int rc = fa1 && fa2 && tmp ? SDX_OK : sdx__nomem(ctx, "GLoRA", (size_t)(O * cols) * sizeof(float));
    if (rc == SDX_OK && md->glora_old) {       /* b2 @ b1 + (W @ a2) @ a1 */
        rc = sdx__lora_product(ctx, b2, b1, delta);
        if (rc == SDX_OK) rc = sdx__lora_matmul(ctx, tmp, cur, fa2, O, cols, a2c);
        if (rc == SDX_OK) rc = sdx__lora_matmul(ctx, tmp + O * a2c, tmp, fa1, O, a2c, cols);
        for (int64_t i = 0; rc == SDX_OK && i < O * cols; i++) delta[i] += tmp[O * a2c + i];
    } else if (rc == SDX_OK) {                 /* W a1 a2 along dim 1, + b1 @ b2 */
        float *t1 = tmp, *t2 = tmp + O * J * KL;
        for (int64_t i = 0; i < O * J * KL; i++) t1[i] = 0;
        for (int64_t o = 0; o < O; o++)
            for (int64_t i = 0; i < I; i++)
                for (int64_t j = 0; j < J; j++) {
                    float f = fa1[i * J + j];
                    for (int64_t q = 0; q < KL; q++) t1[(o * J + j) * KL + q] += cur[(o * I + i) * KL + q] * f;
                }
        for (int64_t i = 0; i < O * cols; i++) t2[i] = 0;
        for (int64_t o = 0; o < O; o++)
            for (int64_t j = 0; j < J; j++)
                for (int64_t i = 0; i < I; i++) {
                    float f = fa2[j * I + i];
                    for (int64_t q = 0; q < KL; q++) t2[(o * I + i) * KL + q] += t1[(o * J + j) * KL + q] * f;
                }
        rc = sdx__lora_product(ctx, b1, b2, delta);
        for (int64_t i = 0; rc == SDX_OK && i < O * cols; i++) delta[i] += t2[i];
    }
    sdx__free(ctx, fa1);
    sdx__free(ctx, fa2);
    sdx__free(ctx, tmp);
    return rc;
}

/* The module's unscaled delta [rows * cols] and its scale. */
static int sdx__lora_delta(sdx_ctx *ctx, const sdx__lora_module *md, const float *cur, int64_t in, int64_t rows, int64_t cols,
                           float *delta, double *scale) {
    const sdx_tensor *const *t = (const sdx_tensor *const *)md->t;
    double alpha = t[SDX__LR_ALPHA] && sdx_tensor_numel(t[SDX__LR_ALPHA]) >= 1 ? sdx__get_f32(t[SDX__LR_ALPHA], 0) : 0;
    int has_alpha = t[SDX__LR_ALPHA] && sdx_tensor_numel(t[SDX__LR_ALPHA]) >= 1;
    int rc = SDX_OK;
    *scale = 1.0;
    switch (md->kind) {
    case SDX__LORA_LOW_RANK: {
        const sdx_tensor *down = t[SDX__LR_DOWN];
        int64_t rank = down->shape[0];
        if (has_alpha) *scale = alpha / (double)rank;
        if (t[SDX__LR_MID]) {     /* down'[r, in, kh, kw] = sum_j down[j, in] mid[r, j, kh, kw] */
            const sdx_tensor *mid = t[SDX__LR_MID];
            int64_t in = down->shape[1], KL = mid->shape[2] * mid->shape[3];
            float *d = sdx__lora_f32(ctx, down), *m = sdx__lora_f32(ctx, mid), *up = sdx__lora_f32(ctx, t[SDX__LR_UP]);
            float *d2 = (float *)sdx__malloc(ctx, (size_t)(rank * in * KL) * sizeof(float));
            if (d && m && up && d2) {
                for (int64_t r = 0; r < rank; r++)
                    for (int64_t c = 0; c < in; c++)
                        for (int64_t q = 0; q < KL; q++) {
                            float s = 0;
                            for (int64_t j = 0; j < rank; j++) s += d[j * (sdx_tensor_numel(down) / rank) + c] * m[(r * rank + j) * KL + q];
                            d2[(r * in + c) * KL + q] = s;
                        }
                rc = sdx__lora_matmul(ctx, delta, up, d2, rows, rank, cols);
            } else {
                rc = sdx__nomem(ctx, "LoRA mid", 0);
            }
            sdx__free(ctx, d); sdx__free(ctx, m); sdx__free(ctx, up); sdx__free(ctx, d2);
            return rc;
        }
        return sdx__lora_product(ctx, t[SDX__LR_UP], down, delta);
    }
    case SDX__LORA_LOHA: {
        float *m2 = (float *)sdx__malloc(ctx, (size_t)(rows * cols) * sizeof(float));
        if (!m2) return sdx__nomem(ctx, "LoHa", (size_t)(rows * cols) * sizeof(float));
        if (has_alpha) *scale = alpha / (double)t[SDX__LR_W1B]->shape[0];
        if (t[SDX__LR_T1]) {
            rc = sdx__lora_tucker(ctx, t[SDX__LR_T1], t[SDX__LR_W1A], t[SDX__LR_W1B], delta);
            if (rc == SDX_OK) rc = sdx__lora_tucker(ctx, t[SDX__LR_T2], t[SDX__LR_W2A], t[SDX__LR_W2B], m2);
        } else {
            rc = sdx__lora_product(ctx, t[SDX__LR_W1A], t[SDX__LR_W1B], delta);
            if (rc == SDX_OK) rc = sdx__lora_product(ctx, t[SDX__LR_W2A], t[SDX__LR_W2B], m2);
        }
        for (int64_t i = 0; rc == SDX_OK && i < rows * cols; i++) delta[i] *= m2[i];
        sdx__free(ctx, m2);
        return rc;
    }
    case SDX__LORA_LOKR: {
        int64_t r1, c1, r2, c2, dim = 0;
        float *w1 = NULL, *w2 = NULL;
        if (t[SDX__LR_K1]) { w1 = sdx__lora_f32(ctx, t[SDX__LR_K1]); r1 = t[SDX__LR_K1]->shape[0]; }
        else {
            r1 = t[SDX__LR_K1A]->shape[0];
            dim = t[SDX__LR_K1B]->shape[0];
            w1 = (float *)sdx__malloc(ctx, (size_t)(r1 * t[SDX__LR_K1B]->shape[1]) * sizeof(float));
            if (w1 && (rc = sdx__lora_product(ctx, t[SDX__LR_K1A], t[SDX__LR_K1B], w1)) != SDX_OK) { sdx__free(ctx, w1); return rc; }
        }
        c1 = r1 ? (t[SDX__LR_K1] ? sdx_tensor_numel(t[SDX__LR_K1]) : r1 * t[SDX__LR_K1B]->shape[1]) / r1 : 0;
        r2 = rows / (r1 ? r1 : 1);
        c2 = cols / (c1 ? c1 : 1);
        if (t[SDX__LR_K2]) w2 = sdx__lora_f32(ctx, t[SDX__LR_K2]);
        else {
            dim = t[SDX__LR_K2B]->shape[0];
            w2 = (float *)sdx__malloc(ctx, (size_t)(r2 * c2) * sizeof(float));
            if (w2) rc = t[SDX__LR_KT2] ? sdx__lora_tucker(ctx, t[SDX__LR_KT2], t[SDX__LR_K2A], t[SDX__LR_K2B], w2)
                                        : sdx__lora_product(ctx, t[SDX__LR_K2A], t[SDX__LR_K2B], w2);
        }
        if (has_alpha && dim) *scale = alpha / (double)dim;
        if (rc == SDX_OK && (!w1 || !w2)) rc = sdx__nomem(ctx, "LoKr", (size_t)(rows * cols) * sizeof(float));
        /* kron: delta[i*r2 + p, j*c2 + q] = w1[i, j] w2[p, q] */
        for (int64_t i = 0; rc == SDX_OK && i < r1; i++)
            for (int64_t j = 0; j < c1; j++)
                for (int64_t p = 0; p < r2; p++)
                    for (int64_t q = 0; q < c2; q++) delta[(i * r2 + p) * cols + j * c2 + q] = w1[i * c1 + j] * w2[p * c2 + q];
        sdx__free(ctx, w1);
        sdx__free(ctx, w2);
        return rc;
    }
    case SDX__LORA_GLORA:
        if (has_alpha) *scale = alpha / (double)md->glora_rank;
        return sdx__lora_glora_delta(ctx, md, cur, in, rows, cols, delta);
    case SDX__LORA_DIFF:
    default: {
        const sdx_tensor *d = t[SDX__LR_DIFF] ? t[SDX__LR_DIFF] : t[SDX__LR_DIFF_B];
        sdx__load_f32(d->data, d->dtype, 0, rows * cols, delta);
        return SDX_OK;
    }
    }
}

/* The slot a module writes: its weight, or for .diff_b its bias. */
static sdx__wslot *sdx__lora_module_slot(const sdx__lora_module *md) {
    return md->t[SDX__LR_DIFF_B] ? md->tg.bias : md->tg.weight;
}

/* DoRA (ComfyUI's weight_decompose): V = W + scale * delta, each input
 * channel i of V rescaled to the magnitude m[i] (V[:, i] *= m[i] /
 * ||V[:, i]||, the norm over outputs and kernel), then W += strength *
 * (V - W). w and delta are [O, I, KL]. */
static int sdx__lora_dora(sdx_ctx *ctx, const sdx_tensor *mag, float *w, float *delta, int64_t O, int64_t I, int64_t KL,
                          float scale, float strength) {
    double *norm = (double *)sdx__calloc(ctx, (size_t)I, sizeof(double));
    if (!norm) return sdx__nomem(ctx, "DoRA norms", (size_t)I * sizeof(double));
    for (int64_t i = 0; i < O * I * KL; i++) {
        delta[i] = w[i] + delta[i] * scale;          /* V */
        norm[(i / KL) % I] += (double)delta[i] * delta[i];
    }
    for (int64_t i = 0; i < O * I * KL; i++) {
        int64_t c = (i / KL) % I;
        float v = delta[i] * (sdx__get_f32(mag, c) / (float)sqrt(norm[c]));
        w[i] = strength != 1.0f ? w[i] + strength * (v - w[i]) : v;
    }
    sdx__free(ctx, norm);
    return SDX_OK;
}

/* Adds the module's term, (strength * scale) * delta, into w (the f32
 * values of its whole slot). */
static int sdx__lora_add_term(sdx_ctx *ctx, const sdx__lora *l, const sdx__lora_module *md, float *w) {
    const sdx_tensor *t = &sdx__lora_module_slot(md)->t;
    int64_t cols = t->ndim >= 2 ? sdx_tensor_numel(t) / t->shape[0] : 1, rows = md->tg.rows, row0 = md->tg.row0;
    double scale = 1.0, strength = md->tg.te ? l->te_strength : l->unet_strength;
    float *delta, f;
    int rc;
    if (md->t[SDX__LR_DIFF_B]) { rows = t->ndim ? md->tg.rows : 1; cols = 1; }
    if (strength == 0) return SDX_OK;
    delta = (float *)sdx__malloc(ctx, (size_t)(rows * cols) * sizeof(float));
    if (!delta) return sdx__nomem(ctx, "LoRA delta", (size_t)(rows * cols) * sizeof(float));
    if ((rc = sdx__lora_delta(ctx, md, w + row0 * cols, t->ndim >= 2 ? t->shape[1] : 1, rows, cols, delta, &scale)) == SDX_OK) {
        float *dst = w + row0 * cols;
        if (md->t[SDX__LR_DORA]) {
            rc = sdx__lora_dora(ctx, md->t[SDX__LR_DORA], dst, delta, rows, t->shape[1], cols / t->shape[1], (float)scale, (float)strength);
        } else {
            f = (float)(strength * scale);
            for (int64_t i = 0; i < rows * cols; i++) dst[i] += f * delta[i];
        }
    }
    sdx__free(ctx, delta);
    return rc;
}

/* f32 value of `slot` with every term of loras[0..n) that targets it,
 * in order, added to the file's values. */
static int sdx__lora_merged(sdx_ctx *ctx, const sdx__lora *loras, int n, sdx__wslot *slot, float *w) {
    int rc;
    sdx__load_f32(slot->file->data, slot->file->dtype, 0, sdx_tensor_numel(slot->file), w);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < loras[i].n_mod; k++)
            if (sdx__lora_module_slot(&loras[i].mod[k]) == slot && (rc = sdx__lora_add_term(ctx, &loras[i], &loras[i].mod[k], w)) != SDX_OK)
                return rc;
    return SDX_OK;
}

/* Rewrites every slot that `l`'s modules touch from the file and loras
 * [0, n) (reset to the file when none of them touches it any more). */
static int sdx__lora_rewrite(sdx_ctx *ctx, const sdx__lora *loras, int n, const sdx__lora *l) {
    for (int k = 0; k < l->n_mod; k++) {
        sdx__wslot *slot = sdx__lora_module_slot(&l->mod[k]);
        const sdx__lora_target *tg = &l->mod[k].tg;
        int touched = 0, done = 0, rc;
        float *w;
        for (int j = 0; j < k && !done; j++) done = sdx__lora_module_slot(&l->mod[j]) == slot;
        if (done) continue;    /* two modules of one file on one tensor (q/k/v blocks) */
        for (int i = 0; i < n && !touched; i++)
            for (int j = 0; j < loras[i].n_mod && !touched; j++) touched = sdx__lora_module_slot(&loras[i].mod[j]) == slot;
        if (!touched) {
            if ((rc = sdx__wslot_reset(tg->w, slot)) != SDX_OK) return rc;
            continue;
        }
        w = (float *)sdx__malloc(ctx, (size_t)sdx_tensor_numel(&slot->t) * sizeof(float));
        if (!w) return sdx__nomem(ctx, slot->file->name, (size_t)sdx_tensor_numel(&slot->t) * sizeof(float));
        rc = sdx__lora_merged(ctx, loras, n, slot, w);
        if (rc == SDX_OK) rc = sdx__wslot_set(tg->w, slot, w);
        sdx__free(ctx, w);
        if (rc != SDX_OK) return rc;
    }
    return SDX_OK;
}

/* ---- A1111's short hash ------------------------------------------------ */

/* SHA-256 (FIPS 180-4) of n bytes, as 64 lowercase hex digits. */
static void sdx__sha256_hex(const unsigned char *p, size_t n, char hex[65]) {
    static const uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
        0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
        0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
        0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
        0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
        0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2 };
    uint32_t h[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    unsigned char tail[128];
    size_t full = n / 64, rest = n % 64, blocks;
    memset(tail, 0, sizeof tail);
    memcpy(tail, p + full * 64, rest);
    tail[rest] = 0x80;
    blocks = rest < 56 ? 1 : 2;       /* the padded tail: 0x80, zeros, the bit length */
    for (int i = 0; i < 8; i++) tail[blocks * 64 - 1 - i] = (unsigned char)(((uint64_t)n * 8) >> (8 * i));
    for (size_t b = 0; b < full + blocks; b++) {
        const unsigned char *q = b < full ? p + b * 64 : tail + (b - full) * 64;
        uint32_t w[64], v[8];
#define SDX__ROR(x, r) (((x) >> (r)) | ((x) << (32 - (r))))
        for (int i = 0; i < 16; i++) w[i] = (uint32_t)q[4 * i] << 24 | (uint32_t)q[4 * i + 1] << 16 | (uint32_t)q[4 * i + 2] << 8 | q[4 * i + 3];
        for (int i = 16; i < 64; i++) {
            uint32_t s0 = SDX__ROR(w[i - 15], 7) ^ SDX__ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = SDX__ROR(w[i - 2], 17) ^ SDX__ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        memcpy(v, h, sizeof v);
        for (int i = 0; i < 64; i++) {
            uint32_t t1 = v[7] + (SDX__ROR(v[4], 6) ^ SDX__ROR(v[4], 11) ^ SDX__ROR(v[4], 25)) + ((v[4] & v[5]) ^ (~v[4] & v[6])) + k[i] + w[i];
            uint32_t t2 = (SDX__ROR(v[0], 2) ^ SDX__ROR(v[0], 13) ^ SDX__ROR(v[0], 22)) + ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
            memmove(v + 1, v, 7 * sizeof *v);
            v[4] += t1;
            v[0] = t1 + t2;
        }
#undef SDX__ROR
        for (int i = 0; i < 8; i++) h[i] += v[i];
    }
    for (int i = 0; i < 8; i++) snprintf(hex + 8 * i, 9, "%08x", (unsigned)h[i]);
}

/* A1111's "Lora hashes" value for a safetensors LoRA: the first 12 hex
 * digits of the SHA-256 of the file after its header (the addnet hash). */
static void sdx__lora_short_hash(const sdx_st *st, char out[13]) {
    char hex[65];
    sdx__sha256_hex(st->data, st->data_size, hex);
    memcpy(out, hex, 12);
    out[12] = 0;
}

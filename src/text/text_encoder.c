#pragma once
#include "../core/safetensors.c"
#include "../core/ops.c"
#include "../family/family.c"
#include "prompt.c"

/* ===================================================================== */
/*  Text encoders: CLIP ViT-L (Hugging Face layout), OpenCLIP text tower  */
/*  (ViT-H for SD 2.x, ViT-bigG for SDXL) and SDXL vector conditioning    */
/* ===================================================================== */
/*
 * Everything is read from key names and shapes. The only fixed
 * conventions are those of the reference code: heads = width / 64,
 * LayerNorm eps 1e-5, causal attention, quick_gelu for CLIP ViT-L and erf
 * gelu for OpenCLIP; the token count per chunk comes from the positional
 * embedding (77 for every released model).
 *
 * Interface used by the pipeline:
 *
 *   sdx__textenc te;
 *   sdx__textenc_load(ctx, &te, ckpt)       detect SD1 / SD2 / SDXL, bind weights
 *   sdx__textenc_load_as(ctx, &te, ckpt, weight_type)   same, weight type given
 *   te.family, te.context_dim, te.pooled_dim, te.n_ctx, te.act_type
 *   sdx__textenc_encode(ctx, &te, arena, chunks, clip_skip, &context, &pooled)
 *   sdx__textenc_encode_ids(ctx, &te, arena, ids, mult, n_chunks, clip_skip,
 *                           &context, &pooled)     raw 77-id chunks
 *   sdx__textenc_empty_ids(ids, n_ctx)      the ids of the empty prompt
 *   sdx__sdxl_vector(ctx, pooled, pooled_dim, size_cond, y, y_dim)
 *   sdx__vector_cond(ctx, pooled, pooled_dim, values, n, y, y_dim)   any family's
 *   sdx__textenc_free(ctx, &te)
 *   te.enc[i].low_memory = 1                give each layer's pages back after it runs
 *   sdx__textenc_release(&te)               give every weight page back (between stages)
 *
 * Outputs are owned f32 tensors (free with sdx_tensor_free): context
 * [n_chunks * n_ctx, context_dim]; pooled [pooled_dim], from the first
 * chunk as AUTOMATIC1111 does. The arena only holds temporaries and is
 * back at its mark when a call returns.
 *
 * What each family produces (see PIPELINE.md):
 *   SD1   context = final_layer_norm(layer L - skip + 1), skip 1 by default.
 *         pooled (on request) = final_layer_norm(last layer)[first EOS].
 *   SD2   context = ln_final(layer L - skip + 1), skip 2 by default.
 *         pooled = ln_final(last layer)[first EOS] @ text_projection.
 *   SDXL  context = concat(CLIP-L layer L-1, bigG layer L-1), no final
 *         norms; pooled as SD2 from bigG. A clip_skip N > 2 moves both
 *         encoders to layer L - N + 1.
 * Emphasis multipliers (A1111 "Original") are applied per chunk to each
 * encoder's part of the context before concatenation, as the webui does
 * (each embedder normalises its own output); pooled is never weighted.
 */

#define SDX__TE_LN_EPS 1e-5f
#define SDX__TE_HEAD_DIM 64
#define SDX__TE_MAX_ENCODERS SDX__FAMILY_MAX_ENCODERS

/* One pre-LN transformer block: pointers to the wset's weight slots, so a
 * weight rewritten in place (LoRA) is what the next forward reads. OpenCLIP
 * keeps q/k/v fused (in_w/in_b set, q_w..v_b NULL); their row slices are
 * taken at use. */
typedef struct sdx__clip_block {
    const sdx_tensor *ln1_w, *ln1_b, *q_w, *q_b, *k_w, *k_b, *v_w, *v_b, *in_w, *in_b, *out_w, *out_b;
    const sdx_tensor *ln2_w, *ln2_b, *fc1_w, *fc1_b, *fc2_w, *fc2_b;
    int slot0, slot1;           /* its weights: wset slots [slot0, slot1) */
} sdx__clip_block;

typedef struct sdx__clip {
    sdx__clip_layout layout;
    sdx__wset w;
    int wset_live;
    int width, heads, mlp, n_layers, n_ctx, vocab;
    int proj_dim;               /* text_projection columns; 0 when absent */
    int pad_id;                 /* id written after the first EOS */
    int default_skip;           /* 1 = last layer, 2 = penultimate */
    int low_memory;             /* 1: give each layer's weight pages back after it runs */
    int norm_context;           /* apply the final norm to the context */
    int gelu_erf;               /* 1: erf gelu (OpenCLIP), 0: quick_gelu */
    const sdx_tensor *tok_emb, *pos_emb, *lnf_w, *lnf_b, *proj;   /* slots; proj NULL for CLIP-L */
    sdx__clip_block *blocks;
    char prefix[96];            /* for messages */
} sdx__clip;

typedef struct sdx__textenc {
    sdx_family family;
    int context_dim;            /* features per context token */
    int pooled_dim;             /* pooled vector size (SD1: CLIP-L width) */
    int n_ctx;                  /* tokens per chunk (77) */
    int act_type;               /* activation storage dtype; default SDX_TEXT_ACT_TYPE */
    int compute_type;           /* GEMM arithmetic; default SDX_TEXT_COMPUTE_TYPE */
    int n_enc;
    sdx__clip enc[SDX__TE_MAX_ENCODERS];   /* SDXL: [0] CLIP-L, [1] bigG */
} sdx__textenc;

#define SDX__TE_TRY(expr) do { if ((rc = (expr)) != SDX_OK) goto done; } while (0)

/* ---- loading -------------------------------------------------------- */

/* A weight fetched through the wset: *dst points at its slot. */
static int sdx__clip_fetch(sdx__clip *c, const sdx_tensor **dst, int ndim, int64_t d0, int64_t d1,
                           const char *base, int layer, const char *leaf) {
    sdx__shape shape = sdx__s2(d0, d1);
    shape.ndim = ndim;
    *dst = layer >= 0 ? sdx__wget(&c->w, shape, "%s%d.%s", base, layer, leaf)
                      : sdx__wget(&c->w, shape, "%s", leaf);
    return *dst ? SDX_OK : sdx__werr(&c->w);
}

/* A weight that host code reads (the embedding tables, the projection). */
static int sdx__clip_fetch_host(sdx__clip *c, const sdx_tensor **dst, int64_t d0, int64_t d1, const char *name) {
    *dst = sdx__wget_host(&c->w, sdx__s2(d0, d1), "%s", name);
    return *dst ? SDX_OK : sdx__werr(&c->w);
}

/* Rows [row0, row0 + rows) of a fused [3W, ...] weight or [3W] bias. */
static sdx_tensor sdx__rows_view(const sdx_tensor *t, int64_t row0, int64_t rows) {
    sdx_tensor v = *t;
    size_t skip = 0;
    v.shape[0] = row0;        /* the bytes of row0 rows, also of block-quantized ones */
    sdx__shape_bytes(t->dtype, t->ndim, v.shape, &skip);
    v.data = (unsigned char *)t->data + skip;
    v.shape[0] = rows;
    v.owned = 0;
    return v;
}

static int sdx__clip_load_hf_block(sdx__clip *c, int i) {
    static const char *base = "encoder.layers.";
    sdx__clip_block *b = &c->blocks[i];
    int64_t W = c->width, M;
    int rc;
    /* the MLP width is whatever fc1 says; everything else follows */
    if ((rc = sdx__clip_fetch(c, &b->fc1_w, 2, -1, W, base, i, "mlp.fc1.weight")) != SDX_OK) return rc;
    M = b->fc1_w->shape[0];
    if (i == 0) c->mlp = (int)M;
    else if (M != c->mlp) return sdx__clip_fetch(c, &b->fc1_w, 2, c->mlp, W, base, i, "mlp.fc1.weight");
    if ((rc = sdx__clip_fetch(c, &b->ln1_w, 1, W, 0, base, i, "layer_norm1.weight")) ||
        (rc = sdx__clip_fetch(c, &b->ln1_b, 1, W, 0, base, i, "layer_norm1.bias")) ||
        (rc = sdx__clip_fetch(c, &b->q_w, 2, W, W, base, i, "self_attn.q_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->q_b, 1, W, 0, base, i, "self_attn.q_proj.bias")) ||
        (rc = sdx__clip_fetch(c, &b->k_w, 2, W, W, base, i, "self_attn.k_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->k_b, 1, W, 0, base, i, "self_attn.k_proj.bias")) ||
        (rc = sdx__clip_fetch(c, &b->v_w, 2, W, W, base, i, "self_attn.v_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->v_b, 1, W, 0, base, i, "self_attn.v_proj.bias")) ||
        (rc = sdx__clip_fetch(c, &b->out_w, 2, W, W, base, i, "self_attn.out_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->out_b, 1, W, 0, base, i, "self_attn.out_proj.bias")) ||
        (rc = sdx__clip_fetch(c, &b->ln2_w, 1, W, 0, base, i, "layer_norm2.weight")) ||
        (rc = sdx__clip_fetch(c, &b->ln2_b, 1, W, 0, base, i, "layer_norm2.bias")) ||
        (rc = sdx__clip_fetch(c, &b->fc1_b, 1, M, 0, base, i, "mlp.fc1.bias")) ||
        (rc = sdx__clip_fetch(c, &b->fc2_w, 2, W, M, base, i, "mlp.fc2.weight")) ||
        (rc = sdx__clip_fetch(c, &b->fc2_b, 1, W, 0, base, i, "mlp.fc2.bias")))
        return rc;
    return SDX_OK;
}

static int sdx__clip_load_open_block(sdx__clip *c, int i) {
    static const char *base = "transformer.resblocks.";
    sdx__clip_block *b = &c->blocks[i];
    int64_t W = c->width, M;
    int rc;
    if ((rc = sdx__clip_fetch(c, &b->fc1_w, 2, -1, W, base, i, "mlp.c_fc.weight")) != SDX_OK) return rc;
    M = b->fc1_w->shape[0];
    if (i == 0) c->mlp = (int)M;
    else if (M != c->mlp) return sdx__clip_fetch(c, &b->fc1_w, 2, c->mlp, W, base, i, "mlp.c_fc.weight");
    if ((rc = sdx__clip_fetch(c, &b->ln1_w, 1, W, 0, base, i, "ln_1.weight")) ||
        (rc = sdx__clip_fetch(c, &b->ln1_b, 1, W, 0, base, i, "ln_1.bias")) ||
        (rc = sdx__clip_fetch(c, &b->in_w, 2, 3 * W, W, base, i, "attn.in_proj_weight")) ||
        (rc = sdx__clip_fetch(c, &b->in_b, 1, 3 * W, 0, base, i, "attn.in_proj_bias")) ||
        (rc = sdx__clip_fetch(c, &b->out_w, 2, W, W, base, i, "attn.out_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->out_b, 1, W, 0, base, i, "attn.out_proj.bias")) ||
        (rc = sdx__clip_fetch(c, &b->ln2_w, 1, W, 0, base, i, "ln_2.weight")) ||
        (rc = sdx__clip_fetch(c, &b->ln2_b, 1, W, 0, base, i, "ln_2.bias")) ||
        (rc = sdx__clip_fetch(c, &b->fc1_b, 1, M, 0, base, i, "mlp.c_fc.bias")) ||
        (rc = sdx__clip_fetch(c, &b->fc2_w, 2, W, M, base, i, "mlp.c_proj.weight")) ||
        (rc = sdx__clip_fetch(c, &b->fc2_b, 1, W, 0, base, i, "mlp.c_proj.bias")))
        return rc;
    return SDX_OK;
}

/* Layers are counted by key presence: a block exists if any of a few of
 * its tensors does, so a block with one tensor missing is reported by
 * name instead of silently shortening the model. */
static int sdx__clip_count_layers(const sdx__clip *c) {
    int n = 0;
    if (c->layout == SDX__CLIP_HF) {
        while (sdx__whas(&c->w, "encoder.layers.%d.layer_norm1.weight", n) ||
               sdx__whas(&c->w, "encoder.layers.%d.self_attn.q_proj.weight", n) ||
               sdx__whas(&c->w, "encoder.layers.%d.mlp.fc1.weight", n))
            n++;
    } else {
        while (sdx__whas(&c->w, "transformer.resblocks.%d.ln_1.weight", n) ||
               sdx__whas(&c->w, "transformer.resblocks.%d.attn.in_proj_weight", n) ||
               sdx__whas(&c->w, "transformer.resblocks.%d.mlp.c_fc.weight", n))
            n++;
    }
    return n;
}

static int sdx__clip_load_globals(sdx_ctx *ctx, sdx__clip *c) {
    int hf = c->layout == SDX__CLIP_HF;
    const char *tok = hf ? "embeddings.token_embedding.weight" : "token_embedding.weight";
    const char *pos = hf ? "embeddings.position_embedding.weight" : "positional_embedding";
    const char *lnw = hf ? "final_layer_norm.weight" : "ln_final.weight";
    const char *lnb = hf ? "final_layer_norm.bias" : "ln_final.bias";
    int rc;
    if ((rc = sdx__clip_fetch_host(c, &c->tok_emb, -1, -1, tok)) != SDX_OK) return rc;
    c->vocab = (int)c->tok_emb->shape[0];
    c->width = (int)c->tok_emb->shape[1];
    if (c->width <= 0 || c->width % SDX__TE_HEAD_DIM)
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s%s: width %d is not a positive multiple of the head size %d",
                         c->prefix, tok, c->width, SDX__TE_HEAD_DIM);
    c->heads = c->width / SDX__TE_HEAD_DIM;
    if ((rc = sdx__clip_fetch_host(c, &c->pos_emb, -1, c->width, pos)) != SDX_OK) return rc;
    c->n_ctx = (int)c->pos_emb->shape[0];
    if (c->n_ctx < 2)
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s%s: %d positions, need at least 2", c->prefix, pos, c->n_ctx);
    if ((rc = sdx__clip_fetch(c, &c->lnf_w, 1, c->width, 0, NULL, -1, lnw)) ||
        (rc = sdx__clip_fetch(c, &c->lnf_b, 1, c->width, 0, NULL, -1, lnb)))
        return rc;
    c->proj_dim = 0;
    if (!hf) {
        /* stored [W, P] and applied as x @ text_projection */
        if ((rc = sdx__clip_fetch_host(c, &c->proj, c->width, -1, "text_projection")) != SDX_OK)
            return rc;
        c->proj_dim = (int)c->proj->shape[1];
    }
    return SDX_OK;
}

static void sdx__clip_free(sdx_ctx *ctx, sdx__clip *c) {
    sdx__free(ctx, c->blocks);
    if (c->wset_live) sdx__wset_free(&c->w);
    memset(c, 0, sizeof *c);
}

static int sdx__clip_load(sdx_ctx *ctx, sdx__clip *c, const sdx_st *ckpt, const char *prefix,
                          sdx__clip_layout layout, int default_skip, int norm_context, int weight_type) {
    int rc;
    memset(c, 0, sizeof *c);
    c->layout = layout;
    c->default_skip = default_skip;
    c->norm_context = norm_context;
    c->gelu_erf = layout == SDX__CLIP_OPEN;
    c->pad_id = layout == SDX__CLIP_OPEN ? 0 : SDX_TOKEN_EOS;
    snprintf(c->prefix, sizeof c->prefix, "%s", prefix);
    sdx__wset_init(&c->w, ctx, ckpt, prefix, SDX__PART_TEXT, weight_type);
    c->wset_live = 1;
    if ((rc = sdx__clip_load_globals(ctx, c)) != SDX_OK) goto fail;
    c->n_layers = sdx__clip_count_layers(c);
    if (c->n_layers < 1) {
        rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: no transformer layers found (looked for %s0.*)", prefix,
                       layout == SDX__CLIP_HF ? "encoder.layers." : "transformer.resblocks.");
        goto fail;
    }
    c->blocks = (sdx__clip_block *)sdx__calloc(ctx, (size_t)c->n_layers, sizeof *c->blocks);
    if (!c->blocks) {
        rc = sdx__nomem(ctx, "text encoder layers", (size_t)c->n_layers * sizeof *c->blocks);
        goto fail;
    }
    for (int i = 0; i < c->n_layers; i++) {
        c->blocks[i].slot0 = sdx__wset_mark(&c->w);
        rc = layout == SDX__CLIP_HF ? sdx__clip_load_hf_block(c, i) : sdx__clip_load_open_block(c, i);
        if (rc != SDX_OK) goto fail;
        c->blocks[i].slot1 = sdx__wset_mark(&c->w);
    }
    return SDX_OK;
fail:
    sdx__clip_free(ctx, c);
    return rc;
}

/* The encoders' mapped weight pages go back to the OS; they fault back
 * in, unchanged, at the next encode. */
static void sdx__textenc_release(const sdx__textenc *te) {
    for (int i = 0; i < te->n_enc; i++) sdx__wset_release_all(&te->enc[i].w);
}

static void sdx__textenc_free(sdx_ctx *ctx, sdx__textenc *te) {
    for (int i = 0; i < te->n_enc; i++) sdx__clip_free(ctx, &te->enc[i]);
    memset(te, 0, sizeof *te);
}

/* sdx__textenc_load with an explicit weight storage type (SDX_AUTO or a
 * float dtype) instead of the compile-time SDX_TEXT_WEIGHT_TYPE. */
static int sdx__textenc_load_as(sdx_ctx *ctx, sdx__textenc *te, const sdx_st *ckpt, int weight_type) {
    const sdx__family *f = sdx__family_detect(ckpt);
    int rc = SDX_OK;
    memset(te, 0, sizeof *te);
    te->act_type = SDX_TEXT_ACT_TYPE;
    te->compute_type = SDX_TEXT_COMPUTE_TYPE;
    if (!f) return sdx__family_unknown(ctx, ckpt);
    te->family = f->id;
    te->n_enc = f->n_enc;
    for (int i = 0; i < f->n_enc && rc == SDX_OK; i++) {
        const sdx__family_encoder *e = &f->enc[i];
        rc = sdx__clip_load(ctx, &te->enc[i], ckpt, sdx__family_encoder_at(e, ckpt), e->layout, e->default_skip, e->norm_context,
                            weight_type);
    }
    if (rc != SDX_OK) goto fail;
    te->n_ctx = te->enc[0].n_ctx;
    for (int i = 0; i < te->n_enc; i++) {
        if (te->enc[i].n_ctx != te->n_ctx) {
            rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: %d positions, but %s has %d", te->enc[i].prefix,
                           te->enc[i].n_ctx, te->enc[0].prefix, te->n_ctx);
            goto fail;
        }
        te->context_dim += te->enc[i].width;
    }
    /* SD1 has no projection: its pooled vector is the normed EOS token */
    {
        const sdx__clip *last = &te->enc[te->n_enc - 1];
        te->pooled_dim = last->proj_dim ? last->proj_dim : last->width;
    }
    return SDX_OK;
fail:
    sdx__textenc_free(ctx, te);
    return rc;
}

/* Detects the family by the text encoders `ckpt` holds (SD1 CLIP-L, SD2
 * OpenCLIP-H, SDXL both; sdx__families) and binds every text-encoder
 * weight. On failure `te` is left empty (safe to free) and the message
 * names what was looked for. */
static int sdx__textenc_load(sdx_ctx *ctx, sdx__textenc *te, const sdx_st *ckpt) {
    return sdx__textenc_load_as(ctx, te, ckpt, SDX_TEXT_WEIGHT_TYPE);
}

/* ---- forward -------------------------------------------------------- */

/* x[B, T, W] = token_embedding[ids] + positional_embedding, gathered on
 * the host from host copies of the tables and uploaded once. Positions
 * that `emb` (may be NULL) fills take columns [col, col + W) of their
 * textual-inversion vector instead of the token's row. */
static int sdx__clip_embed_with(sdx_ctx *ctx, const sdx__clip *c, sdx__arena *a, const int32_t *ids, const sdx__chunks *emb,
                                int col, sdx_tensor *x) {
    int64_t B = x->shape[0], T = x->shape[1], W = c->width;
    sdx__mark m = sdx__arena_mark(a);
    float *rows = (float *)sdx__arena_host_alloc(a, (size_t)((B * T + 1) * W) * sizeof(float)), *pos;
    int rc;
    if (!rows) return SDX_ERR_NOMEM;
    pos = rows + B * T * W;
    /* the tables, given back in low-memory mode, are read again (from read callbacks) */
    if ((rc = sdx__refill_need(ctx, c->tok_emb->data, sdx_tensor_nbytes(c->tok_emb))) != SDX_OK ||
        (rc = sdx__refill_need(ctx, c->pos_emb->data, sdx_tensor_nbytes(c->pos_emb))) != SDX_OK) {
        sdx__arena_release(a, m);
        return rc;
    }
    for (int64_t b = 0; b < B; b++) {
        for (int64_t t = 0; t < T; t++) {
            int32_t id = ids[b * T + t];
            float *tok = rows + (b * T + t) * W;
            if (id < 0 || id >= c->vocab) {
                sdx__arena_release(a, m);
                return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: token id %d at position %lld is outside [0, %d)",
                                 c->prefix, (int)id, (long long)t, c->vocab);
            }
            sdx__load_f32(c->tok_emb->data, c->tok_emb->dtype, (int64_t)id * W, W, tok);
            for (int k = 0; emb && k < emb->n_emb; k++)
                if (emb->emb_pos[k] == b * T + t) memcpy(tok, emb->emb_vec[k] + col, (size_t)W * sizeof(float));
            sdx__load_f32(c->pos_emb->data, c->pos_emb->dtype, t * W, W, pos);
            for (int64_t i = 0; i < W; i++) tok[i] += pos[i];
        }
    }
    rc = sdx__upload(ctx, x, rows);
    sdx__arena_release(a, m);
    return rc == SDX_OK ? sdx__trace_check(ctx, "embedding", x) : rc;
}

static int sdx__clip_embed(sdx_ctx *ctx, const sdx__clip *c, sdx__arena *a, const int32_t *ids, sdx_tensor *x) {
    return sdx__clip_embed_with(ctx, c, a, ids, NULL, 0, x);
}

/* x += attn(ln_1(x)); x += mlp(ln_2(x)), in place on x[B, T, W]. */
static int sdx__clip_block_forward(sdx_ctx *ctx, const sdx__clip *c, int i, sdx__arena *a, sdx_tensor *x,
                                   sdx_dtype compute) {
    const sdx__clip_block *b = &c->blocks[i];
    int64_t B = x->shape[0], T = x->shape[1], W = c->width;
    sdx_dtype dt = x->dtype;
    sdx__mark m = sdx__arena_mark(a);
    sdx_tensor h, q, k, v, att, f, qw, qb, kw, kb, vw, vb;
    int rc = SDX_ERR_NOMEM;
    if (b->in_w) {      /* OpenCLIP: in_proj rows are q; k; v */
        qw = sdx__rows_view(b->in_w, 0, W); kw = sdx__rows_view(b->in_w, W, W); vw = sdx__rows_view(b->in_w, 2 * W, W);
        qb = sdx__rows_view(b->in_b, 0, W); kb = sdx__rows_view(b->in_b, W, W); vb = sdx__rows_view(b->in_b, 2 * W, W);
    } else {
        qw = *b->q_w; kw = *b->k_w; vw = *b->v_w;
        qb = *b->q_b; kb = *b->k_b; vb = *b->v_b;
    }
    sdx__trace_at(ctx, SDX__PART_TEXT, "%s%s%d", c->prefix,
                  c->layout == SDX__CLIP_HF ? "encoder.layers." : "transformer.resblocks.", i);
    if (!sdx__arena_tensor3(a, &h, dt, B, T, c->width) || !sdx__arena_tensor3(a, &q, dt, B, T, c->width) ||
        !sdx__arena_tensor3(a, &k, dt, B, T, c->width) || !sdx__arena_tensor3(a, &v, dt, B, T, c->width) ||
        !sdx__arena_tensor3(a, &att, dt, B, T, c->width) || !sdx__arena_tensor3(a, &f, dt, B, T, c->mlp))
        goto done;
    SDX__TE_TRY(sdx__layer_norm(ctx, &h, x, SDX__TE_LN_EPS, b->ln1_w, b->ln1_b));
    SDX__TE_TRY(sdx__linear(ctx, &q, &h, &qw, &qb, compute));
    SDX__TE_TRY(sdx__linear(ctx, &k, &h, &kw, &kb, compute));
    SDX__TE_TRY(sdx__linear(ctx, &v, &h, &vw, &vb, compute));
    SDX__TE_TRY(sdx__attention(ctx, &att, &q, &k, &v, c->heads, 1, compute));
    SDX__TE_TRY(sdx__linear_add(ctx, x, &att, b->out_w, b->out_b, x, compute));
    SDX__TE_TRY(sdx__layer_norm(ctx, &h, x, SDX__TE_LN_EPS, b->ln2_w, b->ln2_b));
    SDX__TE_TRY(sdx__linear(ctx, &f, &h, b->fc1_w, b->fc1_b, compute));
    SDX__TE_TRY(c->gelu_erf ? sdx__gelu(ctx, &f, &f, compute) : sdx__quick_gelu(ctx, &f, &f));
    SDX__TE_TRY(sdx__linear_add(ctx, x, &f, b->fc2_w, b->fc2_b, x, compute));
    if (c->low_memory) sdx__wset_release(&c->w, b->slot0, b->slot1);
done:
    sdx__arena_release(a, m);
    return rc;
}

static int sdx__clip_final_norm(sdx_ctx *ctx, const sdx__clip *c, sdx_tensor *y, const sdx_tensor *x) {
    sdx__trace_at(ctx, SDX__PART_TEXT, "%s final norm", c->prefix);
    return sdx__layer_norm(ctx, y, x, SDX__TE_LN_EPS, c->lnf_w, c->lnf_b);
}

/* Index of the first largest id: the first EOS, as the reference's
 * argmax finds it (EOS is the largest id in the CLIP vocabulary). */
static int sdx__te_argmax(const int32_t *ids, int n) {
    int best = 0;
    for (int i = 1; i < n; i++) if (ids[i] > ids[best]) best = i;
    return best;
}

/* Copies n_chunks chunks and rewrites everything after each chunk's first
 * EOS with the encoder's pad id (OpenCLIP pads with 0, CLIP-L with EOS). */
static void sdx__clip_repad(const sdx__clip *c, const int32_t *src, int32_t *dst, int n_chunks) {
    for (int b = 0; b < n_chunks; b++) {
        const int32_t *s = src + (size_t)b * c->n_ctx;
        int32_t *d = dst + (size_t)b * c->n_ctx;
        int seen_eos = 0;
        for (int t = 0; t < c->n_ctx; t++) {
            d[t] = seen_eos ? c->pad_id : s[t];
            if (s[t] == SDX_TOKEN_EOS) seen_eos = 1;
        }
    }
}

/* Number of layers to run for a clip_skip value (<= 1: the default). */
static int sdx__clip_stop_layer(sdx_ctx *ctx, const sdx__clip *c, int clip_skip, int *stop) {
    int skip = clip_skip <= 1 ? c->default_skip : clip_skip;
    if (skip > c->n_layers)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "clip_skip %d: %s has only %d layers", clip_skip,
                         c->prefix, c->n_layers);
    *stop = c->n_layers - skip + 1;
    return SDX_OK;
}

/* y[P] = x[W] @ proj[W, P] (the OpenCLIP orientation), f32 accumulation. */
static int sdx__clip_project(const sdx__clip *c, sdx__arena *a, const float *x, float *y) {
    sdx__mark m = sdx__arena_mark(a);
    int P = c->proj_dim;
    float *row = (float *)sdx__arena_host_alloc(a, (size_t)P * sizeof(float));
    if (!row) return SDX_ERR_NOMEM;
    for (int p = 0; p < P; p++) y[p] = 0.0f;
    for (int w = 0; w < c->width; w++) {
        sdx__load_f32(c->proj->data, c->proj->dtype, (int64_t)w * P, P, row);
        for (int p = 0; p < P; p++) y[p] += x[w] * row[p];
    }
    sdx__arena_release(a, m);
    return SDX_OK;
}

/* Pooled vector of the first chunk: finish the remaining layers on it,
 * final norm, take the first EOS row, project if the encoder can. `x`
 * holds the first `done` layers' output of chunk 0 ([1, T, W]). */
static int sdx__clip_pool(sdx_ctx *ctx, const sdx__clip *c, sdx__arena *a, sdx_tensor *x, int done,
                          const int32_t *ids, float *pooled, sdx_dtype compute) {
    sdx__mark m = sdx__arena_mark(a);
    sdx_tensor y;
    float *row;
    int rc = SDX_ERR_NOMEM;
    for (int i = done; i < c->n_layers; i++) SDX__TE_TRY(sdx__clip_block_forward(ctx, c, i, a, x, compute));
    if (!sdx__arena_tensor3(a, &y, x->dtype, 1, c->n_ctx, c->width)) { rc = SDX_ERR_NOMEM; goto done; }
    row = (float *)sdx__arena_host_alloc(a, (size_t)c->width * sizeof(float));
    if (!row) { rc = SDX_ERR_NOMEM; goto done; }
    SDX__TE_TRY(sdx__clip_final_norm(ctx, c, &y, x));
    y.data = (unsigned char *)y.data + (size_t)sdx__te_argmax(ids, c->n_ctx) * (size_t)c->width * sdx_dtype_size(y.dtype);
    y.ndim = 1;
    y.shape[0] = c->width;     /* the first EOS row */
    SDX__TE_TRY(sdx__download(ctx, row, &y));
    if (c->proj_dim) {
        SDX__TE_TRY(sdx__refill_need(ctx, c->proj->data, sdx_tensor_nbytes(c->proj)));   /* as the tables */
        SDX__TE_TRY(sdx__clip_project(c, a, row, pooled));
    } else {
        memcpy(pooled, row, (size_t)c->width * sizeof(float));
    }
done:
    sdx__arena_release(a, m);
    return rc;
}

/* Writes chunk b of z[B, T, W] (any dtype) into context columns
 * [col, col + W) of rows b*T .. b*T+T-1, applying the chunk's emphasis. */
static int sdx__clip_scatter(sdx_ctx *ctx, const sdx__clip *c, sdx__arena *a, const sdx_tensor *z, int b,
                             const float *mult, float *context, int context_dim, int col) {
    sdx__mark m = sdx__arena_mark(a);
    int64_t T = c->n_ctx, W = c->width;
    float *zf = (float *)sdx__arena_host_alloc(a, (size_t)(T * W) * sizeof(float));
    sdx_tensor zb = *z;       /* chunk b */
    int rc;
    if (!zf) return SDX_ERR_NOMEM;
    zb.shape[0] = 1;
    zb.data = (unsigned char *)z->data + (size_t)(b * T * W) * sdx_dtype_size(z->dtype);
    if ((rc = sdx__download(ctx, zf, &zb)) != SDX_OK) { sdx__arena_release(a, m); return rc; }
    if (mult) sdx__emphasis_original(zf, (int)T, (int)W, mult);   /* all-one: untouched */
    for (int64_t t = 0; t < T; t++)
        memcpy(context + ((int64_t)b * T + t) * context_dim + col, zf + t * W, (size_t)W * sizeof(float));
    sdx__arena_release(a, m);
    return SDX_OK;
}

/* One encoder's share of the context (columns [col, col + width)) and,
 * when `pooled` is not NULL, the pooled vector of chunk 0. */
static int sdx__clip_encode(sdx_ctx *ctx, const sdx__clip *c, sdx__arena *a, sdx_dtype act, const int32_t *ids_in,
                            const float *mult, const sdx__chunks *emb, int n_chunks, int clip_skip, float *context,
                            int context_dim, int col, float *pooled, sdx_dtype compute) {
    sdx__mark m = sdx__arena_mark(a);
    int64_t T = c->n_ctx;
    int32_t *ids;
    sdx_tensor x, y, x0;
    int stop = 0, rc;
    if ((rc = sdx__clip_stop_layer(ctx, c, clip_skip, &stop)) != SDX_OK) return rc;
    rc = SDX_ERR_NOMEM;
    ids = (int32_t *)sdx__arena_host_alloc(a, (size_t)n_chunks * (size_t)T * sizeof(int32_t));
    if (!ids || !sdx__arena_tensor3(a, &x, act, n_chunks, T, c->width) ||
        (c->norm_context && !sdx__arena_tensor3(a, &y, act, n_chunks, T, c->width)))
        goto done;
    sdx__clip_repad(c, ids_in, ids, n_chunks);
    sdx__trace_at(ctx, SDX__PART_TEXT, "%s embeddings", c->prefix);
    SDX__TE_TRY(sdx__clip_embed_with(ctx, c, a, ids, emb, col, &x));
    for (int i = 0; i < stop; i++) SDX__TE_TRY(sdx__clip_block_forward(ctx, c, i, a, &x, compute));
    if (c->norm_context) SDX__TE_TRY(sdx__clip_final_norm(ctx, c, &y, &x));
    for (int b = 0; b < n_chunks; b++)
        SDX__TE_TRY(sdx__clip_scatter(ctx, c, a, c->norm_context ? &y : &x, b, mult ? mult + (size_t)b * T : NULL,
                                      context, context_dim, col));
    if (pooled) {
        x0 = x;                 /* chunk 0 only: the first T rows */
        x0.shape[0] = 1;
        SDX__TE_TRY(sdx__clip_pool(ctx, c, a, &x0, stop, ids, pooled, compute));
    }
done:
    sdx__arena_release(a, m);
    return rc;
}

/* Raw form of sdx__textenc_encode: `ids` holds n_chunks * n_ctx token ids
 * (BOS ... EOS, any padding after the first EOS: each encoder re-pads with
 * its own pad id); `mult` the matching emphasis multipliers or NULL.
 * `pooled` may be NULL. See the top of this file for what is produced. */
static int sdx__textenc_encode_emb(sdx_ctx *ctx, sdx__textenc *te, sdx__arena *arena, const int32_t *ids,
                                   const float *mult, const sdx__chunks *emb, int n_chunks, int clip_skip,
                                   sdx_tensor *context, sdx_tensor *pooled) {
    int64_t cshape[2], pshape[1];
    int rc, col = 0;
    if (!te || !te->n_enc || !ids || n_chunks < 1 || !context)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "text encode: no encoder, ids or chunks");
    cshape[0] = (int64_t)n_chunks * te->n_ctx;
    cshape[1] = te->context_dim;
    pshape[0] = te->pooled_dim;
    if ((rc = sdx_tensor_alloc(ctx, context, SDX_F32, 2, cshape)) != SDX_OK) return rc;
    if (pooled && (rc = sdx_tensor_alloc(ctx, pooled, SDX_F32, 1, pshape)) != SDX_OK) goto fail;
    for (int e = 0; e < te->n_enc; e++) {
        const sdx__clip *c = &te->enc[e];
        /* the pooled vector comes from the last encoder (SDXL: bigG) */
        float *pool = pooled && e == te->n_enc - 1 ? (float *)pooled->data : NULL;
        rc = sdx__clip_encode(ctx, c, arena, (sdx_dtype)te->act_type, ids, mult, emb, n_chunks, clip_skip,
                              (float *)context->data, te->context_dim, col, pool, (sdx_dtype)te->compute_type);
        if (rc != SDX_OK) goto fail;
        col += c->width;
    }
    return SDX_OK;
fail:
    sdx_tensor_free(ctx, context);
    if (pooled) sdx_tensor_free(ctx, pooled);
    return rc;
}

static int sdx__textenc_encode_ids(sdx_ctx *ctx, sdx__textenc *te, sdx__arena *arena, const int32_t *ids,
                                   const float *mult, int n_chunks, int clip_skip, sdx_tensor *context,
                                   sdx_tensor *pooled) {
    return sdx__textenc_encode_emb(ctx, te, arena, ids, mult, NULL, n_chunks, clip_skip, context, pooled);
}

/* Prompt chunks (from sdx__prompt_chunks) -> context and pooled. */
static int sdx__textenc_encode(sdx_ctx *ctx, sdx__textenc *te, sdx__arena *arena, const sdx__chunks *chunks,
                               int clip_skip, sdx_tensor *context, sdx_tensor *pooled) {
    if (!chunks || chunks->n < 1)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "text encode: no prompt chunks");
    /* chunks hold 77 ids each; an encoder with another positional length
     * (LongCLIP's 248) would read past every chunk */
    if (te && te->n_enc && te->n_ctx != SDX__CHUNK_TOKENS + 2)
        return sdx__fail(ctx, SDX_ERR_UNSUPPORTED, "%s: text encoder '%s' has %d positions; prompt chunks have %d tokens",
                         sdx_st_path(te->enc[0].w.st), te->enc[0].prefix, te->n_ctx, SDX__CHUNK_TOKENS + 2);
    return sdx__textenc_encode_emb(ctx, te, arena, chunks->tokens, chunks->mult, chunks, chunks->n, clip_skip, context, pooled);
}

/* The ids of the empty prompt: BOS, EOS, then EOS padding (the pipeline
 * repeats its context to pad a shorter negative prompt, as A1111 does). */
static void sdx__textenc_empty_ids(int32_t *ids, int n_ctx) {
    ids[0] = SDX_TOKEN_BOS;
    for (int i = 1; i < n_ctx; i++) ids[i] = SDX_TOKEN_EOS;
}

/* Vector conditioning y = concat(pooled, e(v[0]), ..., e(v[n - 1])); e =
 * sinusoidal embedding, cos first, max_period 10000, of size (y_dim -
 * pooled_dim) / n (256 in SDXL and its refiner). The family says which
 * numbers (sdx__family.adm). */
static int sdx__vector_cond(sdx_ctx *ctx, const float *pooled, int pooled_dim, const float *v, int n, float *y, int y_dim) {
    int emb = n > 0 && pooled_dim >= 0 && y_dim > pooled_dim ? (y_dim - pooled_dim) / n : 0;
    if (emb <= 0 || emb % 2 || pooled_dim + n * emb != y_dim)
        return sdx__fail(ctx, SDX_ERR_MODEL,
                         "vector conditioning: %d features cannot hold the pooled vector (%d) "
                         "plus %d embeddings of equal even size", y_dim, pooled_dim, n);
    memcpy(y, pooled, (size_t)pooled_dim * sizeof(float));
    for (int i = 0; i < n; i++)
        sdx__timestep_embedding(y + pooled_dim + i * emb, &v[i], 1, emb, 10000.0f);
    return SDX_OK;
}

/* SDXL's: the numbers are orig_h, orig_w, crop_top, crop_left, target_h,
 * target_w. */
static int sdx__sdxl_vector(sdx_ctx *ctx, const float *pooled, int pooled_dim, const float size_cond[6], float *y,
                            int y_dim) {
    return sdx__vector_cond(ctx, pooled, pooled_dim, size_cond, 6, y, y_dim);
}

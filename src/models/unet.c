#pragma once
#include "../core/safetensors.c"
#include "../core/ops.c"
#include "../family/family.c"

/* ===================================================================== */
/*  UNet (SD 1.x, SD 2.x, SDXL and their distilled variants)              */
/* ===================================================================== */

/* The architecture is read from the checkpoint, never from a table of
 * known models. LDM/SGM checkpoints name each module by its position:
 * input_blocks.N.M, middle_block.M, output_blocks.N.M. Walking those
 * indices until the first gap gives the block list of SD 1.x/2.x/SDXL
 * and equally of distilled models that drop blocks or thin transformers
 * (SSD-1B, Vega, BK-SDM). What a module is comes from the keys it has:
 *   ResBlock            M.in_layers.2.weight
 *   SpatialTransformer  M.proj_in.weight (depth = transformer_blocks.K count)
 *   Downsample          M.op.weight
 *   Upsample            M.conv.weight
 * Widths come from tensor shapes; every tensor is then fetched with the
 * shape the data flow implies, so a bad file names the tensor and the
 * expected vs found shape at load time.
 *
 * Attention heads cannot be read from shapes (PIPELINE.md): they are the
 * family's (SD 1.x 8 heads, SD 2.x and SDXL head_dim 64), the family
 * recognised by a label_emb, Linear proj_in/proj_out or the context
 * width (sdx__family_of_unet). sdx__unet.num_heads / head_dim hold the
 * result; a caller that knows better may change them after loading
 * (exactly one of them > 0). */

#define SDX__UNET_MAX_LAYERS 4    /* modules per block (LDM uses at most 3) */
#define SDX__UNET_MAX_LEVELS 8
#define SDX__UNET_MAX_BLOCKS 64   /* input/output blocks (SDXL: 9, SD 1.x: 12) */
#define SDX__UNET_MAX_DEPTH 64    /* transformer blocks per SpatialTransformer */
#define SDX__UNET_GROUPS 32
#define SDX__UNET_MAX_WIDTH (1 << 20)   /* channels; keeps int products of widths exact */
/* The feed-forward's hidden activations (GEGLU's 2 x inner and inner
 * columns; on a device the inner ones alone, sdx__unet_ff) are computed
 * over token rows in passes of at most this many
 * bytes: at 64x64 latents they would otherwise be the largest
 * temporaries of the whole UNet. Rows are independent through LayerNorm,
 * Linear and GEGLU, so the result is the same bit for bit. Passes are
 * even, in whole 128-row tiles. A device's budget is twice the host's:
 * its products want a pass's rows in whole waves of tiles (in passes of
 * 1092 and 956 rows, SDXL's 1280-wide level left its second product 72
 * and 64 tiles for 132 SMs, split over k; one pass of 2048 rows is 128),
 * and its arena holds just the live set (sdx__plan), which SDXL's passes
 * then leave at 302 MiB (SD 1.5's, in one pass, go from 95 to 126). */
#ifndef SDX__UNET_FF_CHUNK_BYTES
#define SDX__UNET_FF_CHUNK_BYTES ((size_t)32 << 20)
#endif
#ifndef SDX__UNET_FF_CHUNK_BYTES_DEVICE
#define SDX__UNET_FF_CHUNK_BYTES_DEVICE ((size_t)64 << 20)
#endif

enum { SDX__UL_CONV, SDX__UL_RES, SDX__UL_ATTN, SDX__UL_DOWN, SDX__UL_UP };

typedef struct sdx__unet_res {
    int cin, cout;
    const sdx_tensor *norm1_w, *norm1_b, *conv1_w, *conv1_b;
    const sdx_tensor *emb_w, *emb_b;
    const sdx_tensor *norm2_w, *norm2_b, *conv2_w, *conv2_b;
    const sdx_tensor *skip_w, *skip_b;           /* NULL: identity skip */
} sdx__unet_res;

/* BasicTransformerBlock: self-attention, cross-attention, GEGLU FF. */
typedef struct sdx__unet_xblock {
    const sdx_tensor *ln1_w, *ln1_b, *q1, *k1, *v1, *o1_w, *o1_b;
    const sdx_tensor *ln2_w, *ln2_b, *q2, *k2, *v2, *o2_w, *o2_b;
    const sdx_tensor *ln3_w, *ln3_b, *ff1_w, *ff1_b, *ff2_w, *ff2_b;
    int ff_inner;
} sdx__unet_xblock;

typedef struct sdx__unet_attn {
    int channels, inner, depth, linear;
    const sdx_tensor *norm_w, *norm_b, *proj_in_w, *proj_in_b, *proj_out_w, *proj_out_b;
    sdx__unet_xblock *blocks;                    /* depth entries, owned */
} sdx__unet_attn;

typedef struct sdx__unet_layer {
    int kind;                                    /* SDX__UL_* */
    int cin, cout;
    int slot0, slot1;                            /* its weights: wset slots [slot0, slot1) */
    sdx__unet_res res;
    sdx__unet_attn attn;
    const sdx_tensor *conv_w, *conv_b;           /* CONV, DOWN, UP */
} sdx__unet_layer;

typedef struct sdx__unet_block {
    int n_layers, cin, cout;
    sdx__unet_layer layer[SDX__UNET_MAX_LAYERS];
} sdx__unet_block;

typedef struct sdx__unet {
    sdx_ctx *ctx;
    sdx__wset w;
    /* read from the checkpoint */
    int in_channels, out_channels, model_channels, embed_dim;
    int context_dim;                 /* 0 when there is no attention at all */
    int adm_channels;                /* label_emb input width; 0 = none    */
    int linear_proj;                 /* first transformer uses Linear proj */
    int n_levels;
    int channel_mult[SDX__UNET_MAX_LEVELS];
    int num_res_blocks[SDX__UNET_MAX_LEVELS];
    int n_in, n_out;
    sdx__unet_block *in, *out;       /* SDX__UNET_MAX_BLOCKS each, owned */
    sdx__unet_block mid;
    const sdx_tensor *te0_w, *te0_b, *te2_w, *te2_b;   /* time_embed   */
    const sdx_tensor *le0_w, *le0_b, *le2_w, *le2_b;   /* label_emb.0  */
    const sdx_tensor *out_norm_w, *out_norm_b, *out_conv_w, *out_conv_b;
    /* policy; may be changed between load and forward */
    int low_memory;                  /* 1: give each layer's weight pages back after it runs */
    int64_t ff_chunk_rows;           /* feed-forward rows per pass; 0: from SDX__UNET_FF_CHUNK_BYTES */
    int num_heads;                   /* > 0: fixed head count (SD 1.x)    */
    int head_dim;                    /* > 0: heads = channels / head_dim  */
    sdx_dtype act_type;              /* activation storage (SDX_UNET_ACT_TYPE) */
    sdx_dtype compute_type;          /* GEMM arithmetic (SDX_UNET_COMPUTE_TYPE) */
} sdx__unet;

#define SDX__UNET_DO(expr) do { if ((rc = (expr)) != SDX_OK) goto done; } while (0)

/* ---- loading ------------------------------------------------------------ */

/* A failed fetch returns its code: SDX_ERR_NOMEM when converting to the
 * policy's weight type ran out of memory, else SDX_ERR_MODEL. */
#define SDX__UNET_GET(dst, w, ...) do { if (!((dst) = sdx__wget(w, __VA_ARGS__))) return sdx__werr(w); } while (0)

/* The file tensor, only to read a width from its shape: unlike
 * sdx__wget_any it never makes a converted copy, which the real fetch
 * (with the expected shape) would then make a second time. */
static SDX__PRINTF(2, 3) const sdx_tensor *sdx__unet_probe(sdx__unet *u, const char *fmt, ...) {
    char name[512];
    const sdx_tensor *t;
    va_list ap;
    va_start(ap, fmt);
    t = sdx__wfind(&u->w, name, sizeof name, fmt, ap);
    va_end(ap);
    if (!t) u->w.rc = sdx__fail(u->ctx, SDX_ERR_MODEL, "%s: missing tensor '%s' (%s)", sdx_st_path(u->w.st), name, sdx__part_name(u->w.part));
    return t;
}

/* Dim `axis` of t when it is a plausible width (1..SDX__UNET_MAX_WIDTH), else 0. */
static int sdx__unet_width(const sdx_tensor *t, int axis) {
    int64_t v = axis < t->ndim ? t->shape[axis] : 0;
    return v > 0 && v <= SDX__UNET_MAX_WIDTH ? (int)v : 0;
}

static int sdx__unet_bad_probe(sdx__unet *u, const sdx_tensor *t, const char *expected) {
    char found[96];
    return sdx__fail(u->ctx, SDX_ERR_MODEL, "%s: tensor '%s': expected %s (widths 1..%d), found %s",
                     sdx_st_path(u->w.st), t->name, expected, SDX__UNET_MAX_WIDTH, sdx_shape_str(t, found, sizeof found));
}

static int sdx__unet_load_res(sdx__unet *u, sdx__unet_res *r, const char *base, int cin) {
    sdx__wset *w = &u->w;
    /* the width comes from the output norm, so that a mis-shaped conv is
     * reported against the shape the rest of the block implies */
    const sdx_tensor *probe = sdx__unet_probe(u, "%s.out_layers.0.weight", base);
    int co;
    if (!probe) return sdx__werr(w);
    if (probe->ndim != 1 || !(co = sdx__unet_width(probe, 0))) return sdx__unet_bad_probe(u, probe, "a norm scale [C]");
    r->cin = cin;
    r->cout = co;
    SDX__UNET_GET(r->norm1_w, w, sdx__s1(cin), "%s.in_layers.0.weight", base);
    SDX__UNET_GET(r->norm1_b, w, sdx__s1(cin), "%s.in_layers.0.bias", base);
    SDX__UNET_GET(r->conv1_w, w, sdx__s4(co, cin, 3, 3), "%s.in_layers.2.weight", base);
    SDX__UNET_GET(r->conv1_b, w, sdx__s1(co), "%s.in_layers.2.bias", base);
    SDX__UNET_GET(r->emb_w, w, sdx__s2(co, u->embed_dim), "%s.emb_layers.1.weight", base);
    SDX__UNET_GET(r->emb_b, w, sdx__s1(co), "%s.emb_layers.1.bias", base);
    SDX__UNET_GET(r->norm2_w, w, sdx__s1(co), "%s.out_layers.0.weight", base);
    SDX__UNET_GET(r->norm2_b, w, sdx__s1(co), "%s.out_layers.0.bias", base);
    SDX__UNET_GET(r->conv2_w, w, sdx__s4(co, co, 3, 3), "%s.out_layers.3.weight", base);
    SDX__UNET_GET(r->conv2_b, w, sdx__s1(co), "%s.out_layers.3.bias", base);
    r->skip_w = r->skip_b = NULL;
    /* LDM uses an identity skip when the width does not change */
    if (cin != co || sdx__whas(w, "%s.skip_connection.weight", base)) {
        SDX__UNET_GET(r->skip_w, w, sdx__s4(co, cin, 1, 1), "%s.skip_connection.weight", base);
        SDX__UNET_GET(r->skip_b, w, sdx__s1(co), "%s.skip_connection.bias", base);
    }
    return SDX_OK;
}

static int sdx__unet_load_xblock(sdx__unet *u, sdx__unet_xblock *b, const char *base, int d, int inner) {
    sdx__wset *w = &u->w;
    const sdx_tensor *k2, *ff1;
    /* the first transformer fixes context_dim; the others must agree */
    if (!(k2 = sdx__unet_probe(u, "%s.transformer_blocks.%d.attn2.to_k.weight", base, d))) return sdx__werr(w);
    if (u->context_dim == 0 && !(u->context_dim = k2->ndim == 2 ? sdx__unet_width(k2, 1) : 0))
        return sdx__unet_bad_probe(u, k2, "[inner, context_dim]");
    if (!(ff1 = sdx__unet_probe(u, "%s.transformer_blocks.%d.ff.net.0.proj.weight", base, d))) return sdx__werr(w);
    b->ff_inner = ff1->ndim == 2 ? sdx__unet_width(ff1, 0) / 2 : 0;
    if (b->ff_inner <= 0) b->ff_inner = 4 * inner;   /* let the shape check below report it */
#define SDX__XB_GET(dst, shp, name) \
    SDX__UNET_GET(b->dst, w, shp, "%s.transformer_blocks.%d." name, base, d)
    SDX__XB_GET(ln1_w, sdx__s1(inner), "norm1.weight");
    SDX__XB_GET(ln1_b, sdx__s1(inner), "norm1.bias");
    SDX__XB_GET(q1, sdx__s2(inner, inner), "attn1.to_q.weight");
    SDX__XB_GET(k1, sdx__s2(inner, inner), "attn1.to_k.weight");
    SDX__XB_GET(v1, sdx__s2(inner, inner), "attn1.to_v.weight");
    SDX__XB_GET(o1_w, sdx__s2(inner, inner), "attn1.to_out.0.weight");
    SDX__XB_GET(o1_b, sdx__s1(inner), "attn1.to_out.0.bias");
    SDX__XB_GET(ln2_w, sdx__s1(inner), "norm2.weight");
    SDX__XB_GET(ln2_b, sdx__s1(inner), "norm2.bias");
    SDX__XB_GET(q2, sdx__s2(inner, inner), "attn2.to_q.weight");
    SDX__XB_GET(k2, sdx__s2(inner, u->context_dim), "attn2.to_k.weight");
    SDX__XB_GET(v2, sdx__s2(inner, u->context_dim), "attn2.to_v.weight");
    SDX__XB_GET(o2_w, sdx__s2(inner, inner), "attn2.to_out.0.weight");
    SDX__XB_GET(o2_b, sdx__s1(inner), "attn2.to_out.0.bias");
    SDX__XB_GET(ln3_w, sdx__s1(inner), "norm3.weight");
    SDX__XB_GET(ln3_b, sdx__s1(inner), "norm3.bias");
    SDX__XB_GET(ff1_w, sdx__s2(2 * b->ff_inner, inner), "ff.net.0.proj.weight");
    SDX__XB_GET(ff1_b, sdx__s1(2 * b->ff_inner), "ff.net.0.proj.bias");
    SDX__XB_GET(ff2_w, sdx__s2(inner, b->ff_inner), "ff.net.2.weight");
    SDX__XB_GET(ff2_b, sdx__s1(inner), "ff.net.2.bias");
#undef SDX__XB_GET
    return SDX_OK;
}

static int sdx__unet_load_attn(sdx__unet *u, sdx__unet_attn *t, const char *base, int c) {
    sdx__wset *w = &u->w;
    const sdx_tensor *probe = sdx__unet_probe(u, "%s.proj_in.weight", base);
    int rc, inner, depth = 0;
    if (!probe) return sdx__werr(w);
    t->linear = probe->ndim == 2;
    inner = probe->ndim == 2 || probe->ndim == 4 ? sdx__unet_width(probe, 0) : 0;
    if (!inner) return sdx__unet_bad_probe(u, probe, "a Linear [inner, C] or a 1x1 convolution [inner, C, 1, 1]");
    t->channels = c;
    t->inner = inner;
    SDX__UNET_GET(t->norm_w, w, sdx__s1(c), "%s.norm.weight", base);
    SDX__UNET_GET(t->norm_b, w, sdx__s1(c), "%s.norm.bias", base);
    if (t->linear) {
        SDX__UNET_GET(t->proj_in_w, w, sdx__s2(inner, c), "%s.proj_in.weight", base);
        SDX__UNET_GET(t->proj_out_w, w, sdx__s2(c, inner), "%s.proj_out.weight", base);
    } else {
        SDX__UNET_GET(t->proj_in_w, w, sdx__s4(inner, c, 1, 1), "%s.proj_in.weight", base);
        SDX__UNET_GET(t->proj_out_w, w, sdx__s4(c, inner, 1, 1), "%s.proj_out.weight", base);
    }
    SDX__UNET_GET(t->proj_in_b, w, sdx__s1(inner), "%s.proj_in.bias", base);
    SDX__UNET_GET(t->proj_out_b, w, sdx__s1(c), "%s.proj_out.bias", base);
    while (depth < SDX__UNET_MAX_DEPTH && sdx__whas(w, "%s.transformer_blocks.%d.attn1.to_q.weight", base, depth)) depth++;
    if (depth == 0) {   /* let wget phrase the missing-tensor message */
        SDX__UNET_GET(probe, w, sdx__s2(inner, inner), "%s.transformer_blocks.0.attn1.to_q.weight", base);
    }
    t->blocks = (sdx__unet_xblock *)sdx__calloc(u->ctx, (size_t)depth, sizeof *t->blocks);
    if (!t->blocks) return sdx__nomem(u->ctx, "UNet transformer blocks", (size_t)depth * sizeof *t->blocks);
    t->depth = depth;
    for (int d = 0; d < depth; d++)
        if ((rc = sdx__unet_load_xblock(u, &t->blocks[d], base, d, inner)) != SDX_OK) return rc;
    return SDX_OK;
}

/* Loads module `base` if present: returns 1 (loaded), 0 (absent) or an
 * error code (< 0). `cin` is the width entering it. */
static int sdx__unet_load_layer(sdx__unet *u, sdx__unet_layer *L, const char *base, int cin) {
    sdx__wset *w = &u->w;
    int rc;
    memset(L, 0, sizeof *L);
    L->cin = L->cout = cin;
    if (sdx__whas(w, "%s.in_layers.2.weight", base)) {
        L->kind = SDX__UL_RES;
        if ((rc = sdx__unet_load_res(u, &L->res, base, cin)) != SDX_OK) return rc;
        L->cout = L->res.cout;
    } else if (sdx__whas(w, "%s.proj_in.weight", base)) {
        L->kind = SDX__UL_ATTN;
        if ((rc = sdx__unet_load_attn(u, &L->attn, base, cin)) != SDX_OK) return rc;
    } else if (sdx__whas(w, "%s.op.weight", base) || sdx__whas(w, "%s.conv.weight", base)) {
        const char *name = sdx__whas(w, "%s.op.weight", base) ? "op" : "conv";
        L->kind = name[0] == 'o' ? SDX__UL_DOWN : SDX__UL_UP;
        SDX__UNET_GET(L->conv_w, w, sdx__s4(cin, cin, 3, 3), "%s.%s.weight", base, name);
        SDX__UNET_GET(L->conv_b, w, sdx__s1(cin), "%s.%s.bias", base, name);
    } else {
        return 0;
    }
    return 1;
}

/* Loads the modules base.0, base.1, ... of one block. */
static int sdx__unet_load_block(sdx__unet *u, sdx__unet_block *b, const char *base, int cin) {
    char name[96];
    int c = cin, rc;
    b->cin = cin;
    b->n_layers = 0;
    for (int m = 0; m < SDX__UNET_MAX_LAYERS; m++) {
        int slot0 = sdx__wset_mark(&u->w);
        snprintf(name, sizeof name, "%s.%d", base, m);
        rc = sdx__unet_load_layer(u, &b->layer[m], name, c);
        if (rc < 0) return rc;
        if (rc == 0) break;
        b->layer[m].slot0 = slot0;
        b->layer[m].slot1 = sdx__wset_mark(&u->w);
        c = b->layer[m].cout;
        b->n_layers = m + 1;
    }
    b->cout = c;
    return SDX_OK;
}

static int sdx__unet_block_has(const sdx__unet_block *b, int kind) {
    for (int i = 0; i < b->n_layers; i++) if (b->layer[i].kind == kind) return 1;
    return 0;
}

static int sdx__unet_load_stem(sdx__unet *u) {
    sdx__wset *w = &u->w;
    const sdx_tensor *conv_in = sdx__unet_probe(u, "input_blocks.0.0.weight");
    const sdx_tensor *te0 = conv_in ? sdx__unet_probe(u, "time_embed.0.weight") : NULL;
    sdx__unet_layer *L = &u->in[0].layer[0];
    int slot0 = sdx__wset_mark(w);
    if (!conv_in || !te0 || conv_in->ndim != 4 || te0->ndim != 2)
        return sdx__fail(u->ctx, SDX_ERR_MODEL,
                         "%s: not an LDM/SGM UNet: no '%sinput_blocks.0.0.weight' [C, in, 3, 3] and "
                         "'%stime_embed.0.weight' (wrong prefix, or an unsupported architecture)",
                         sdx_st_path(w->st), w->prefix, w->prefix);
    /* a zero width would divide by zero in the level bookkeeping */
    if (!(u->model_channels = sdx__unet_width(conv_in, 0)) || !(u->in_channels = sdx__unet_width(conv_in, 1)))
        return sdx__unet_bad_probe(u, conv_in, "[model_channels, in_channels, 3, 3]");
    if (!(u->embed_dim = sdx__unet_width(te0, 0))) return sdx__unet_bad_probe(u, te0, "[embed_dim, model_channels]");
    SDX__UNET_GET(u->te0_w, w, sdx__s2(u->embed_dim, u->model_channels), "time_embed.0.weight");
    SDX__UNET_GET(u->te0_b, w, sdx__s1(u->embed_dim), "time_embed.0.bias");
    SDX__UNET_GET(u->te2_w, w, sdx__s2(u->embed_dim, u->embed_dim), "time_embed.2.weight");
    SDX__UNET_GET(u->te2_b, w, sdx__s1(u->embed_dim), "time_embed.2.bias");
    if (sdx__whas(w, "label_emb.0.0.weight")) {
        const sdx_tensor *le = sdx__unet_probe(u, "label_emb.0.0.weight");
        if (!le) return sdx__werr(w);
        if (!(u->adm_channels = le->ndim == 2 ? sdx__unet_width(le, 1) : 0))
            return sdx__unet_bad_probe(u, le, "[embed_dim, adm_channels]");
        SDX__UNET_GET(u->le0_w, w, sdx__s2(u->embed_dim, u->adm_channels), "label_emb.0.0.weight");
        SDX__UNET_GET(u->le0_b, w, sdx__s1(u->embed_dim), "label_emb.0.0.bias");
        SDX__UNET_GET(u->le2_w, w, sdx__s2(u->embed_dim, u->embed_dim), "label_emb.0.2.weight");
        SDX__UNET_GET(u->le2_b, w, sdx__s1(u->embed_dim), "label_emb.0.2.bias");
    }
    L->kind = SDX__UL_CONV;
    L->cin = u->in_channels;
    L->cout = u->model_channels;
    SDX__UNET_GET(L->conv_w, w, sdx__s4(u->model_channels, u->in_channels, 3, 3), "input_blocks.0.0.weight");
    SDX__UNET_GET(L->conv_b, w, sdx__s1(u->model_channels), "input_blocks.0.0.bias");
    L->slot0 = slot0;      /* the embeddings run just before it */
    L->slot1 = sdx__wset_mark(w);
    u->in[0].n_layers = 1;
    u->in[0].cin = u->in_channels;
    u->in[0].cout = u->model_channels;
    return SDX_OK;
}

static int sdx__unet_layout_error(sdx__unet *u, const char *what, const char *where, int n) {
    return sdx__fail(u->ctx, SDX_ERR_MODEL, "%s: unrecognised UNet layout: %s in %s%s.%d",
                     sdx_st_path(u->w.st), what, u->w.prefix, where, n);
}

/* The encoder: time/label embedding, input_blocks and middle_block (all a
 * ControlNet has). Records the level structure (informational: the
 * forward pass follows the blocks). */
static int sdx__unet_load_encoder(sdx__unet *u) {
    char base[64];
    int c, rc, level = 0;
    if ((rc = sdx__unet_load_stem(u)) != SDX_OK) return rc;
    c = u->model_channels;
    u->n_in = 1;
    for (int n = 1; n < SDX__UNET_MAX_BLOCKS; n++) {
        sdx__unet_block *b = &u->in[n];
        snprintf(base, sizeof base, "input_blocks.%d", n);
        if ((rc = sdx__unet_load_block(u, b, base, c)) != SDX_OK) return rc;
        if (b->n_layers == 0) break;
        if (sdx__unet_block_has(b, SDX__UL_UP)) return sdx__unet_layout_error(u, "an upsampler", "input_blocks", n);
        if (sdx__unet_block_has(b, SDX__UL_DOWN)) {
            if (++level >= SDX__UNET_MAX_LEVELS) return sdx__unet_layout_error(u, "too many levels", "input_blocks", n);
        } else if (b->layer[0].kind == SDX__UL_RES) {
            if (u->num_res_blocks[level]++ == 0) u->channel_mult[level] = b->cout / u->model_channels;
        }
        c = b->cout;
        u->n_in = n + 1;
    }
    u->n_levels = level + 1;
    if ((rc = sdx__unet_load_block(u, &u->mid, "middle_block", c)) != SDX_OK) return rc;
    if (sdx__unet_block_has(&u->mid, SDX__UL_UP) || sdx__unet_block_has(&u->mid, SDX__UL_DOWN))
        return sdx__unet_layout_error(u, "a resampler", "middle_block", 0);
    return SDX_OK;
}

/* output_blocks and out, after the encoder. */
static int sdx__unet_load_decoder(sdx__unet *u) {
    char base[64];
    int c = u->mid.cout, rc;
    for (int n = 0; n < SDX__UNET_MAX_BLOCKS; n++) {
        snprintf(base, sizeof base, "output_blocks.%d", n);
        if (!sdx__whas(&u->w, "%s.0.in_layers.2.weight", base)) break;
        if (n >= u->n_in) return sdx__unet_layout_error(u, "more output blocks than skip connections", "output_blocks", n);
        /* each output block starts with the newest unused skip concatenated */
        if ((rc = sdx__unet_load_block(u, &u->out[n], base, c + u->in[u->n_in - 1 - n].cout)) != SDX_OK) return rc;
        if (sdx__unet_block_has(&u->out[n], SDX__UL_DOWN))
            return sdx__unet_layout_error(u, "a downsampler", "output_blocks", n);
        c = u->out[n].cout;
        u->n_out = n + 1;
    }
    if (u->n_out != u->n_in)
        return sdx__fail(u->ctx, SDX_ERR_MODEL,
                         "%s: unrecognised UNet layout: %d input blocks (skip connections) but %d output blocks "
                         "(expected '%soutput_blocks.%d.0.in_layers.2.weight')",
                         sdx_st_path(u->w.st), u->n_in, u->n_out, u->w.prefix, u->n_out);
    SDX__UNET_GET(u->out_norm_w, &u->w, sdx__s1(c), "out.0.weight");
    SDX__UNET_GET(u->out_norm_b, &u->w, sdx__s1(c), "out.0.bias");
    SDX__UNET_GET(u->out_conv_w, &u->w, sdx__s4(-1, c, 3, 3), "out.2.weight");
    if (!(u->out_channels = sdx__unet_width(u->out_conv_w, 0))) return sdx__unet_bad_probe(u, u->out_conv_w, "[out_channels, C, 3, 3]");
    SDX__UNET_GET(u->out_conv_b, &u->w, sdx__s1(u->out_channels), "out.2.bias");
    return SDX_OK;
}

/* The heads of the UNet's family (see the top of this file). */
static void sdx__unet_pick_heads(sdx__unet *u) {
    const sdx__family *f;
    u->linear_proj = 0;
    for (int n = 0; n < u->n_in && !u->linear_proj; n++)
        for (int m = 0; m < u->in[n].n_layers; m++)
            if (u->in[n].layer[m].kind == SDX__UL_ATTN) { u->linear_proj = u->in[n].layer[m].attn.linear; break; }
    f = sdx__family_of_unet(u->adm_channels, u->linear_proj, u->context_dim);
    u->num_heads = f->num_heads;
    u->head_dim = f->head_dim;
}

/* Every slot, not just n_layers: a load that failed half-way may have
 * allocated the transformer list of the layer it stopped in. */
static void sdx__unet_free_block(sdx_ctx *ctx, sdx__unet_block *b) {
    for (int i = 0; i < SDX__UNET_MAX_LAYERS; i++)
        if (b->layer[i].kind == SDX__UL_ATTN) sdx__free(ctx, b->layer[i].attn.blocks);
    memset(b, 0, sizeof *b);
}

static void sdx__unet_free(sdx__unet *u) {
    if (!u->ctx) return;
    for (int n = 0; u->in && n < SDX__UNET_MAX_BLOCKS; n++) sdx__unet_free_block(u->ctx, &u->in[n]);
    for (int n = 0; u->out && n < SDX__UNET_MAX_BLOCKS; n++) sdx__unet_free_block(u->ctx, &u->out[n]);
    sdx__free(u->ctx, u->in);
    sdx__free(u->ctx, u->out);
    sdx__unet_free_block(u->ctx, &u->mid);
    sdx__wset_free(&u->w);
    memset(u, 0, sizeof *u);
}

/* An empty UNet reading weights from `file` under `prefix` for `part`
 * (a ControlNet reuses the UNet's encoder); the caller loads and, on
 * failure, frees it. */
static int sdx__unet_init(sdx_ctx *ctx, sdx__unet *u, const sdx_st *file, const char *prefix, sdx__part part, int weight_type) {
    memset(u, 0, sizeof *u);
    u->ctx = ctx;
    u->act_type = (sdx_dtype)SDX_UNET_ACT_TYPE;
    u->compute_type = (sdx_dtype)SDX_UNET_COMPUTE_TYPE;
    sdx__wset_init(&u->w, ctx, file, prefix, part, weight_type);
    u->in = (sdx__unet_block *)sdx__calloc(ctx, SDX__UNET_MAX_BLOCKS, sizeof *u->in);
    u->out = (sdx__unet_block *)sdx__calloc(ctx, SDX__UNET_MAX_BLOCKS, sizeof *u->out);
    if (!u->in || !u->out) return sdx__nomem(ctx, "UNet block list", 2 * SDX__UNET_MAX_BLOCKS * sizeof(sdx__unet_block));
    return SDX_OK;
}

/* Loads with an explicit weight storage type (SDX_AUTO keeps the file's). */
static int sdx__unet_load_typed(sdx_ctx *ctx, sdx__unet *u, const sdx_st *ckpt, const char *prefix, int weight_type) {
    int rc;
    if ((rc = sdx__unet_init(ctx, u, ckpt, prefix, SDX__PART_UNET, weight_type)) == SDX_OK &&
        (rc = sdx__unet_load_encoder(u)) == SDX_OK && (rc = sdx__unet_load_decoder(u)) == SDX_OK) {
        sdx__unet_pick_heads(u);
        return SDX_OK;
    }
    /* keep the message: sdx__unet_free does not touch ctx->error */
    if (rc != SDX_ERR_NOMEM && rc != SDX_ERR_MODEL && rc != SDX_ERR_IO) rc = SDX_ERR_MODEL;   /* IO: a read callback */
    sdx__unet_free(u);
    return rc;
}

/* Resolves every UNet tensor under `prefix` ("model.diffusion_model.")
 * once; the storage type comes from SDX_UNET_WEIGHT_TYPE. */
static int sdx__unet_load(sdx_ctx *ctx, sdx__unet *u, const sdx_st *ckpt, const char *prefix) {
    return sdx__unet_load_typed(ctx, u, ckpt, prefix, SDX_UNET_WEIGHT_TYPE);
}

/* One line for logs: "UNet: in 4, out 4, model_channels 320, mult [1,2,4,4], ..." */
static void sdx__unet_describe(const sdx__unet *u, char *buf, size_t size) {
    size_t used = 0;
#define SDX__APPEND(...) do { if (used < size) used += (size_t)snprintf(buf + used, size - used, __VA_ARGS__); } while (0)
    SDX__APPEND("UNet: in %d, out %d, model_channels %d, mult [", u->in_channels, u->out_channels, u->model_channels);
    for (int l = 0; l < u->n_levels; l++) SDX__APPEND(l ? ",%d" : "%d", u->channel_mult[l]);
    SDX__APPEND("], res blocks [");
    for (int l = 0; l < u->n_levels; l++) SDX__APPEND(l ? ",%d" : "%d", u->num_res_blocks[l]);
    SDX__APPEND("], transformer depth in [");
    for (int n = 1; n < u->n_in; n++) {
        int d = 0;
        for (int m = 0; m < u->in[n].n_layers; m++)
            if (u->in[n].layer[m].kind == SDX__UL_ATTN) d = u->in[n].layer[m].attn.depth;
        SDX__APPEND(n > 1 ? ",%d" : "%d", d);
    }
    SDX__APPEND("], context %d, %s proj, adm %d, ", u->context_dim, u->linear_proj ? "linear" : "conv", u->adm_channels);
    if (u->num_heads > 0) SDX__APPEND("%d heads", u->num_heads);
    else SDX__APPEND("head_dim %d", u->head_dim);
#undef SDX__APPEND
}

/* ---- forward -------------------------------------------------------------- */

/* ---- cross-attention keys and values of a conditioning ------------------ */
/* The to_k and to_v products of the text context are the same at every
 * step of a generation: neither the context nor the weights change. On
 * a device they cost an SDXL step about 2.4 ms of its 64 (140 products
 * of 154 rows, split over k, and their sums; H200 profile), so a
 * conditioning keeps them there (sdx__unet_kv_make, before a UNet call)
 * and the UNet reads them instead. A host computes them at every call:
 * about 1% of an SDXL step on the CPU, not worth the 100 MB of f32 they
 * would hold. Made by the same op from the same operands, they are the
 * same bits. */
typedef struct sdx__unet_kv {
    sdx_tensor *t;              /* 2 n: each cross-attention's k, then its v, in the UNet's order */
    int n;
    const sdx__unet *u;         /* made by this UNet, */
    unsigned writes;            /* at this count of writes to its weights, */
    const void *context;        /* from this context */
} sdx__unet_kv;

static void sdx__unet_kv_free(sdx_ctx *ctx, sdx__unet_kv *kv) {
    if (!kv) return;
    for (int i = 0; i < 2 * kv->n; i++) sdx__dev_free(ctx, kv->t[i].data, sdx_tensor_nbytes(&kv->t[i]));
    sdx__free(ctx, kv->t);
    memset(kv, 0, sizeof *kv);
}

/* The UNet's transformer blocks in the order a forward pass runs them
 * (input blocks, middle, output blocks): their count, the first `cap`
 * into out. */
static int sdx__unet_xblocks(const sdx__unet *u, const sdx__unet_xblock **out, int cap) {
    int n = 0;
    for (int bi = 0; bi < u->n_in + 1 + u->n_out; bi++) {
        const sdx__unet_block *b = bi < u->n_in ? &u->in[bi] : bi == u->n_in ? &u->mid : &u->out[bi - u->n_in - 1];
        for (int l = 0; l < b->n_layers; l++)
            if (b->layer[l].kind == SDX__UL_ATTN)
                for (int d = 0; d < b->layer[l].attn.depth; d++, n++)
                    if (n < cap) out[n] = &b->layer[l].attn.blocks[d];
    }
    return n;
}

/* kv holds keys and values made by this UNet, its weights as they are,
 * from `context`. */
static int sdx__unet_kv_fits(const sdx__unet_kv *kv, const sdx__unet *u, const sdx_tensor *context) {
    return kv->n && kv->u == u && kv->writes == u->w.writes && kv->context == context->data;
}

/* kv for this UNet, its weights as they are and `context` ([B, T, D], the
 * UNet's input): kept when it fits, else made again. */
static int sdx__unet_kv_make(sdx_ctx *ctx, sdx__unet *u, const sdx_tensor *context, sdx__unet_kv *kv) {
    const sdx__unet_xblock **xb;
    int n, rc = SDX_OK;
    if (sdx__unet_kv_fits(kv, u, context)) return SDX_OK;
    sdx__unet_kv_free(ctx, kv);
    n = sdx__unet_xblocks(u, NULL, 0);
    if (!n) return SDX_OK;
    xb = (const sdx__unet_xblock **)sdx__malloc(ctx, sizeof *xb * (size_t)n);
    kv->t = (sdx_tensor *)sdx__calloc(ctx, 2 * (size_t)n, sizeof *kv->t);
    if (!xb || !kv->t) {
        sdx__free(ctx, xb);
        sdx__free(ctx, kv->t);
        kv->t = NULL;
        return sdx__nomem(ctx, "cross-attention keys and values", sizeof *xb * (size_t)n);
    }
    sdx__unet_xblocks(u, xb, n);
    for (int i = 0; i < n && rc == SDX_OK; i++) {
        const sdx_tensor *w[2] = { xb[i]->k2, xb[i]->v2 };
        for (int j = 0; j < 2 && rc == SDX_OK; j++) {
            int64_t shape[3] = { context->shape[0], context->shape[1], w[j]->shape[0] };
            sdx_tensor *t = &kv->t[2 * i + j];
            *t = sdx__view(u->act_type, NULL, 3, shape);
            t->device = sdx__on_device(ctx);
            if (!(t->data = sdx__dev_alloc(ctx, sdx_tensor_nbytes(t))))
                rc = sdx__nomem(ctx, "cross-attention keys and values", sdx_tensor_nbytes(t));
            else
                rc = sdx__linear(ctx, t, context, w[j], NULL, u->compute_type);
            kv->n = i + 1;      /* what to free */
        }
    }
    sdx__free(ctx, xb);
    if (rc != SDX_OK) {
        sdx__unet_kv_free(ctx, kv);
        return rc;
    }
    kv->u = u;
    kv->writes = u->w.writes;
    kv->context = context->data;
    return SDX_OK;
}

/* What a forward pass needs besides the weights. */
typedef struct sdx__unet_run {
    sdx__unet *u;
    sdx_ctx *ctx;
    sdx__arena *a;
    const sdx_tensor *emb;      /* silu(time_embed + label_emb), f32 [B, E] */
    const sdx_tensor *context;  /* [B, T, D] */
    const sdx__unet_kv *kv;     /* its cross-attention keys and values, or NULL: computed */
    int kv_next;                /* the next cross-attention's entry of kv */
    const char *block;          /* tracer names: "input_blocks" ... */
    int block_index;            /* N, or -1 for middle_block */
    sdx_dtype compute;          /* the blocks' arithmetic: u->compute_type */
} sdx__unet_run;

static int sdx__unet_act(sdx__unet_run *r, sdx_tensor *t, sdx_dtype dtype, int ndim, const int64_t *shape) {
    return sdx__arena_tensor(r->a, t, dtype, ndim, shape) ? SDX_OK : SDX_ERR_NOMEM;
}
static int sdx__unet_act4(sdx__unet_run *r, sdx_tensor *t, int64_t n, int64_t c, int64_t h, int64_t w) {
    int64_t s[4] = { n, c, h, w };
    return sdx__unet_act(r, t, r->u->act_type, 4, s);
}
static int sdx__unet_act3(sdx__unet_run *r, sdx_tensor *t, int64_t n, int64_t l, int64_t c) {
    int64_t s[3] = { n, l, c };
    return sdx__unet_act(r, t, r->u->act_type, 3, s);
}

static void sdx__unet_trace(sdx__unet_run *r, int m) {
    if (r->block_index < 0) sdx__trace_at(r->ctx, r->u->w.part, "%s.%d", r->block, m);
    else sdx__trace_at(r->ctx, r->u->w.part, "%s.%d.%d", r->block, r->block_index, m);
}

static int sdx__unet_res_forward(sdx__unet_run *r, const sdx__unet_res *p, sdx_tensor *y, const sdx_tensor *x) {
    sdx_ctx *ctx = r->ctx;
    sdx__mark m = sdx__arena_mark(r->a);
    int64_t B = x->shape[0], H = x->shape[2], W = x->shape[3];
    int64_t es[2] = { B, p->cout };
    sdx_tensor h, g, e, s;
    int rc;
    SDX__UNET_DO(sdx__unet_act4(r, &h, B, p->cin, H, W));
    SDX__UNET_DO(sdx__group_norm(ctx, &h, x, SDX__UNET_GROUPS, 1e-5f, p->norm1_w, p->norm1_b, 1, r->compute));
    SDX__UNET_DO(sdx__unet_act4(r, &g, B, p->cout, H, W));
    SDX__UNET_DO(sdx__conv2d(ctx, &g, &h, p->conv1_w, p->conv1_b, 1, 1, r->compute));
    SDX__UNET_DO(sdx__unet_act(r, &e, SDX_F32, 2, es));
    SDX__UNET_DO(sdx__linear(ctx, &e, r->emb, p->emb_w, p->emb_b, r->compute));
    SDX__UNET_DO(sdx__add_channel_bias(ctx, &g, &g, &e));
    SDX__UNET_DO(sdx__group_norm(ctx, &g, &g, SDX__UNET_GROUPS, 1e-5f, p->norm2_w, p->norm2_b, 1, r->compute));
    if (p->skip_w) {   /* y = conv2(g) + skip(x), the sum in conv2's epilogue where the backend fuses it */
        SDX__UNET_DO(sdx__unet_act4(r, &s, B, p->cout, H, W));
        SDX__UNET_DO(sdx__conv2d(ctx, &s, x, p->skip_w, p->skip_b, 1, 0, r->compute));
        SDX__UNET_DO(sdx__conv2d_add(ctx, y, &g, p->conv2_w, p->conv2_b, &s, 1, 1, r->compute));
    } else {
        SDX__UNET_DO(sdx__conv2d_add(ctx, y, &g, p->conv2_w, p->conv2_b, x, 1, 1, r->compute));
    }
done:
    sdx__arena_release(r->a, m);
    return rc;
}

static int sdx__unet_heads(sdx__unet_run *r, int inner, int *heads) {
    const sdx__unet *u = r->u;
    int h = u->num_heads > 0 ? u->num_heads : (u->head_dim > 0 ? inner / u->head_dim : 0);
    if (h <= 0 || inner % h != 0)
        return sdx__fail(r->ctx, SDX_ERR_INVALID_ARG,
                         "unet: %d attention channels cannot be split into heads (num_heads %d, head_dim %d)",
                         inner, u->num_heads, u->head_dim);
    *heads = h;
    return SDX_OK;
}

/* tok += to_out(attention(to_q(norm(tok)), to_k(src), to_v(src))), where
 * src is norm(tok) itself (self-attention) or the context; kept, the
 * context's keys and values kv[0] and kv[1] instead of to_k and to_v. */
static int sdx__unet_attention(sdx__unet_run *r, sdx_tensor *tok, const sdx_tensor *lnw, const sdx_tensor *lnb,
                               const sdx_tensor *wq, const sdx_tensor *wk, const sdx_tensor *wv,
                               const sdx_tensor *wo, const sdx_tensor *bo, const sdx_tensor *context, const sdx_tensor *kv,
                               int heads) {
    sdx_ctx *ctx = r->ctx;
    sdx__mark m = sdx__arena_mark(r->a);
    int64_t B = tok->shape[0], L = tok->shape[1], C = tok->shape[2], inner = wq->shape[0];
    const sdx_tensor *src;
    sdx_tensor n, q, k, v, o;
    int rc;
    SDX__UNET_DO(sdx__unet_act3(r, &n, B, L, C));
    SDX__UNET_DO(sdx__layer_norm(ctx, &n, tok, 1e-5f, lnw, lnb));
    src = context ? context : &n;
    SDX__UNET_DO(sdx__unet_act3(r, &q, B, L, inner));
    SDX__UNET_DO(sdx__linear(ctx, &q, &n, wq, NULL, r->compute));
    if (kv) {
        k = kv[0];
        v = kv[1];
    } else {
        SDX__UNET_DO(sdx__unet_act3(r, &k, B, src->shape[1], inner));
        SDX__UNET_DO(sdx__unet_act3(r, &v, B, src->shape[1], inner));
        SDX__UNET_DO(sdx__linear(ctx, &k, src, wk, NULL, r->compute));
        SDX__UNET_DO(sdx__linear(ctx, &v, src, wv, NULL, r->compute));
    }
    SDX__UNET_DO(sdx__unet_act3(r, &o, B, L, inner));
    SDX__UNET_DO(sdx__attention(ctx, &o, &q, &k, &v, heads, 0, r->compute));
    SDX__UNET_DO(sdx__linear_add(ctx, tok, &o, wo, bo, tok, r->compute));
done:
    sdx__arena_release(r->a, m);
    return rc;
}

/* Rows [row0, row0 + rows) of x seen as [1, rows, C] (x: [B, L, C]). */
static sdx_tensor sdx__unet_rows(const sdx_tensor *x, int64_t row0, int64_t rows) {
    sdx_tensor v = *x;
    int64_t C = x->shape[x->ndim - 1];
    v.ndim = 3;
    v.shape[0] = 1;
    v.shape[1] = rows;
    v.shape[2] = C;
    v.data = (unsigned char *)x->data + (size_t)(row0 * C) * sdx_dtype_size(x->dtype);
    v.owned = 0;
    return v;
}

/* Rows of a feed-forward pass at `row_bytes` each: the budget's worth,
 * spread evenly over the passes that takes and rounded up to whole tiles
 * of 128 rows. */
static int64_t sdx__unet_ff_rows(int64_t rows, size_t row_bytes, size_t budget) {
    int64_t most = SDX__MAX((int64_t)1, (int64_t)(budget / row_bytes)), passes = (rows + most - 1) / most;
    return SDX__MIN(rows, ((rows + passes - 1) / passes + 127) / 128 * 128);
}

/* tok += ff(norm3(tok)), over passes of at most ff_chunk_rows rows (see
 * SDX__UNET_FF_CHUNK_BYTES): three buffers of one pass's size, GEGLU's 2 x
 * inner columns the fused op's scratch. A device gets none: a GPU fuses
 * the gate into its GEMM and needs no product in memory (SD 1.5's and
 * SDXL's 40 MiB of the call's live set), and takes room of its own where
 * it does not fuse. */
static int sdx__unet_ff(sdx__unet_run *r, sdx_tensor *tok, const sdx__unet_xblock *b) {
    sdx_ctx *ctx = r->ctx;
    sdx__mark m = sdx__arena_mark(r->a);
    int64_t rows = tok->shape[0] * tok->shape[1], C = tok->shape[2], inner = b->ff_inner;
    int64_t chunk = r->u->ff_chunk_rows;
    const int device = sdx__on_device(ctx);
    sdx_tensor nb, fb, gb;
    int rc;
    if (chunk <= 0)     /* a row's bytes in the buffers the pass takes (the normed rows aside) */
        chunk = sdx__unet_ff_rows(rows, (size_t)((device ? 1 : 3) * inner) * sdx_dtype_size(r->u->act_type),
                                  device ? SDX__UNET_FF_CHUNK_BYTES_DEVICE : SDX__UNET_FF_CHUNK_BYTES);
    chunk = SDX__MAX((int64_t)1, SDX__MIN(chunk, rows));
    SDX__UNET_DO(sdx__unet_act3(r, &nb, 1, chunk, C));
    if (!device) SDX__UNET_DO(sdx__unet_act3(r, &fb, 1, chunk, 2 * inner));
    SDX__UNET_DO(sdx__unet_act3(r, &gb, 1, chunk, inner));
    for (int64_t row0 = 0; row0 < rows; row0 += chunk) {
        int64_t nr = SDX__MIN(chunk, rows - row0);
        sdx_tensor t = sdx__unet_rows(tok, row0, nr), n = sdx__unet_rows(&nb, 0, nr), g = sdx__unet_rows(&gb, 0, nr), f;
        if (!device) f = sdx__unet_rows(&fb, 0, nr);
        SDX__UNET_DO(sdx__layer_norm(ctx, &n, &t, 1e-5f, b->ln3_w, b->ln3_b));
        SDX__UNET_DO(sdx__linear_geglu(ctx, &g, device ? NULL : &f, &n, b->ff1_w, b->ff1_b, r->compute));
        SDX__UNET_DO(sdx__linear_add(ctx, &t, &g, b->ff2_w, b->ff2_b, &t, r->compute));
    }
done:
    sdx__arena_release(r->a, m);
    return rc;
}

/* SpatialTransformer: y = x + proj_out(blocks(proj_in(norm(x)))). */
static int sdx__unet_attn_forward(sdx__unet_run *r, const sdx__unet_attn *p, sdx_tensor *y, const sdx_tensor *x) {
    sdx_ctx *ctx = r->ctx;
    sdx__mark m = sdx__arena_mark(r->a), m2;
    int64_t B = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3], L = H * W;
    sdx_tensor tok, n, t;
    int rc, heads = 1;
    SDX__UNET_DO(sdx__unet_heads(r, p->inner, &heads));
    SDX__UNET_DO(sdx__unet_act3(r, &tok, B, L, p->inner));
    m2 = sdx__arena_mark(r->a);
    SDX__UNET_DO(sdx__unet_act4(r, &n, B, C, H, W));
    SDX__UNET_DO(sdx__group_norm(ctx, &n, x, SDX__UNET_GROUPS, 1e-6f, p->norm_w, p->norm_b, 0, r->compute));
    if (p->linear) {   /* norm on NCHW, flatten, then the Linear */
        SDX__UNET_DO(sdx__unet_act3(r, &t, B, L, C));
        SDX__UNET_DO(sdx__nchw_to_nlc(ctx, &t, &n));
        SDX__UNET_DO(sdx__linear(ctx, &tok, &t, p->proj_in_w, p->proj_in_b, r->compute));
    } else {
        SDX__UNET_DO(sdx__unet_act4(r, &t, B, p->inner, H, W));
        SDX__UNET_DO(sdx__conv2d(ctx, &t, &n, p->proj_in_w, p->proj_in_b, 1, 0, r->compute));
        SDX__UNET_DO(sdx__nchw_to_nlc(ctx, &tok, &t));
    }
    sdx__arena_release(r->a, m2);
    for (int d = 0; d < p->depth; d++) {
        const sdx__unet_xblock *b = &p->blocks[d];
        const sdx_tensor *kv = r->kv && r->kv_next < r->kv->n ? &r->kv->t[2 * r->kv_next++] : NULL;
        SDX__UNET_DO(sdx__unet_attention(r, &tok, b->ln1_w, b->ln1_b, b->q1, b->k1, b->v1, b->o1_w, b->o1_b, NULL, NULL, heads));
        SDX__UNET_DO(sdx__unet_attention(r, &tok, b->ln2_w, b->ln2_b, b->q2, b->k2, b->v2, b->o2_w, b->o2_b, r->context, kv, heads));
        SDX__UNET_DO(sdx__unet_ff(r, &tok, b));
    }
    if (p->linear) {
        SDX__UNET_DO(sdx__unet_act3(r, &t, B, L, C));
        SDX__UNET_DO(sdx__linear(ctx, &t, &tok, p->proj_out_w, p->proj_out_b, r->compute));
        SDX__UNET_DO(sdx__nlc_to_nchw(ctx, y, &t));
        SDX__UNET_DO(sdx__add(ctx, y, y, x));
    } else {   /* the residual in proj_out's epilogue where the backend fuses it */
        SDX__UNET_DO(sdx__unet_act4(r, &t, B, p->inner, H, W));
        SDX__UNET_DO(sdx__nlc_to_nchw(ctx, &t, &tok));
        SDX__UNET_DO(sdx__conv2d_add(ctx, y, &t, p->proj_out_w, p->proj_out_b, x, 1, 0, r->compute));
    }
done:
    sdx__arena_release(r->a, m);
    return rc;
}

static int sdx__unet_up_forward(sdx__unet_run *r, const sdx__unet_layer *p, sdx_tensor *y, const sdx_tensor *x) {
    sdx__mark m = sdx__arena_mark(r->a);
    sdx_tensor t;
    int rc;
    SDX__UNET_DO(sdx__unet_act4(r, &t, x->shape[0], x->shape[1], y->shape[2], y->shape[3]));
    if (y->shape[2] == 2 * x->shape[2] && y->shape[3] == 2 * x->shape[3])
        SDX__UNET_DO(sdx__upsample2x(r->ctx, &t, x));
    else
        SDX__UNET_DO(sdx__resize_nearest(r->ctx, &t, x));
    SDX__UNET_DO(sdx__conv2d(r->ctx, y, &t, p->conv_w, p->conv_b, 1, 1, r->compute));
done:
    sdx__arena_release(r->a, m);
    return rc;
}

/* Spatial size after a stride-2, pad-1, 3x3 convolution. */
static int64_t sdx__unet_down_size(int64_t n) { return (n - 1) / 2 + 1; }

/* Runs one block into y (allocated by the caller with the block's output
 * shape; its H, W also give an upsampler's target size). */
static int sdx__unet_block_forward(sdx__unet_run *r, const sdx__unet_block *b, sdx_tensor *y, const sdx_tensor *x) {
    sdx_ctx *ctx = r->ctx;
    sdx__mark m = sdx__arena_mark(r->a);
    sdx_tensor cur = *x, next;
    int rc = SDX_OK;
    for (int i = 0; i < b->n_layers; i++) {
        const sdx__unet_layer *L = &b->layer[i];
        int64_t H = cur.shape[2], W = cur.shape[3];
        if (L->kind == SDX__UL_DOWN) H = sdx__unet_down_size(H), W = sdx__unet_down_size(W);
        if (L->kind == SDX__UL_UP) H = y->shape[2], W = y->shape[3];
        if (i == b->n_layers - 1) next = *y;
        else SDX__UNET_DO(sdx__unet_act4(r, &next, cur.shape[0], L->cout, H, W));
        sdx__unet_trace(r, i);
        switch (L->kind) {
        case SDX__UL_CONV: rc = sdx__conv2d(ctx, &next, &cur, L->conv_w, L->conv_b, 1, 1, r->compute); break;
        case SDX__UL_DOWN: rc = sdx__conv2d(ctx, &next, &cur, L->conv_w, L->conv_b, 2, 1, r->compute); break;
        case SDX__UL_UP:   rc = sdx__unet_up_forward(r, L, &next, &cur); break;
        case SDX__UL_RES:  rc = sdx__unet_res_forward(r, &L->res, &next, &cur); break;
        default:           rc = sdx__unet_attn_forward(r, &L->attn, &next, &cur); break;
        }
        if (rc != SDX_OK) goto done;
        if (r->u->low_memory) sdx__wset_release(&r->u->w, L->slot0, L->slot1);
        cur = next;
    }
done:
    sdx__arena_release(r->a, m);
    return rc;
}

/* emb = silu(time_embed(sinusoid(t)) [+ label_emb(y)]): every ResBlock
 * starts its emb_layers with a SiLU, so it is applied once here. Kept in
 * f32: it is [B, 4 * model_channels]. */
/* compute: the UNet's f32 (the embedding feeds every block); a ControlNet
 * runs its own in its blocks' arithmetic */
static int sdx__unet_embed(sdx__unet_run *r, sdx_tensor *emb, const float *timesteps, const sdx_tensor *y,
                           sdx_dtype compute) {
    sdx__unet *u = r->u;
    sdx_ctx *ctx = r->ctx;
    int64_t B = emb->shape[0];
    int64_t ts[2] = { B, u->model_channels }, hs[2] = { B, u->embed_dim };
    sdx__mark m = sdx__arena_mark(r->a);
    sdx_tensor t, h;
    int rc;
    sdx__trace_at(ctx, u->w.part, "time_embed");
    SDX__UNET_DO(sdx__unet_act(r, &t, SDX_F32, 2, ts));
    {
        float *tf = (float *)sdx__arena_host_alloc(r->a, (size_t)sdx_tensor_nbytes(&t));
        if (!tf) { rc = SDX_ERR_NOMEM; goto done; }
        sdx__timestep_embedding(tf, timesteps, (int)B, u->model_channels, 10000.0f);
        SDX__UNET_DO(sdx__upload(ctx, &t, tf));
    }
    SDX__UNET_DO(sdx__unet_act(r, &h, SDX_F32, 2, hs));
    SDX__UNET_DO(sdx__linear(ctx, &h, &t, u->te0_w, u->te0_b, compute));
    SDX__UNET_DO(sdx__silu(ctx, &h, &h, compute));
    SDX__UNET_DO(sdx__linear(ctx, emb, &h, u->te2_w, u->te2_b, compute));
    if (u->adm_channels > 0) {
        sdx_tensor l;
        sdx__trace_at(ctx, u->w.part, "label_emb");
        SDX__UNET_DO(sdx__linear(ctx, &h, y, u->le0_w, u->le0_b, compute));
        SDX__UNET_DO(sdx__silu(ctx, &h, &h, compute));
        SDX__UNET_DO(sdx__unet_act(r, &l, SDX_F32, 2, hs));
        SDX__UNET_DO(sdx__linear(ctx, &l, &h, u->le2_w, u->le2_b, compute));
        SDX__UNET_DO(sdx__add(ctx, emb, emb, &l));
    }
    SDX__UNET_DO(sdx__silu(ctx, emb, emb, compute));
done:
    sdx__arena_release(r->a, m);
    return rc;
}

/* x, timesteps, context and y of a forward pass (UNet or its encoder). */
static int sdx__unet_check_inputs(sdx__unet *u, const sdx_tensor *x, const float *timesteps, const sdx_tensor *context,
                                  const sdx_tensor *y) {
    char s1[64];
    int64_t B = x && x->ndim == 4 ? x->shape[0] : 0;
    if (!x || x->ndim != 4 || x->shape[1] != u->in_channels || B < 1 || x->shape[2] < 1 || x->shape[3] < 1)
        return sdx__fail(u->ctx, SDX_ERR_INVALID_ARG, "unet: x must be [B, %d, h, w], got %s", u->in_channels,
                         x ? sdx_shape_str(x, s1, sizeof s1) : "NULL");
    if (!timesteps) return sdx__fail(u->ctx, SDX_ERR_INVALID_ARG, "unet: timesteps is NULL");
    if (u->context_dim > 0 &&
        (!context || context->ndim != 3 || context->shape[0] != B || context->shape[2] != u->context_dim || context->shape[1] < 1))
        return sdx__fail(u->ctx, SDX_ERR_INVALID_ARG, "unet: context must be [%lld, T, %d], got %s", (long long)B,
                         u->context_dim, context ? sdx_shape_str(context, s1, sizeof s1) : "NULL");
    if (u->adm_channels > 0 && (!y || y->ndim != 2 || y->shape[0] != B || y->shape[1] != u->adm_channels))
        return sdx__fail(u->ctx, SDX_ERR_INVALID_ARG, "unet: this UNet needs the vector y [%lld, %d], got %s",
                         (long long)B, u->adm_channels, y ? sdx_shape_str(y, s1, sizeof s1) : "NULL");
    return SDX_OK;
}

static int sdx__unet_check_output(sdx__unet *u, const sdx_tensor *x, const sdx_tensor *out) {
    char s2[64];
    int64_t B = x->shape[0];
    if (!out || out->ndim != 4 || out->shape[0] != B || out->shape[1] != u->out_channels ||
        out->shape[2] != x->shape[2] || out->shape[3] != x->shape[3])
        return sdx__fail(u->ctx, SDX_ERR_INVALID_ARG, "unet: out must be [%lld, %d, %lld, %lld], got %s", (long long)B,
                         u->out_channels, (long long)x->shape[2], (long long)x->shape[3],
                         out ? sdx_shape_str(out, s2, sizeof s2) : "NULL");
    return SDX_OK;
}

/* Spatial sizes of the skip connections (input block outputs). */
static void sdx__unet_plan(const sdx__unet *u, int64_t H, int64_t W, int64_t *sh, int64_t *sw) {
    for (int n = 0; n < u->n_in; n++) {
        if (sdx__unet_block_has(&u->in[n], SDX__UL_DOWN)) H = sdx__unet_down_size(H), W = sdx__unet_down_size(W);
        sh[n] = H;
        sw[n] = W;
    }
}

/* Output block n works at the size of skip k = n_in-1-n; an upsampler
 * takes it to the next skip's size (ComfyUI's output_shape), or 2x after
 * the last one. */
static void sdx__unet_out_size(const sdx__unet *u, int n, const int64_t *sh, const int64_t *sw, int64_t *H, int64_t *W) {
    int k = u->n_in - 1 - n;
    *H = sh[k];
    *W = sw[k];
    if (sdx__unet_block_has(&u->out[n], SDX__UL_UP)) {
        if (k > 0) *H = sh[k - 1], *W = sw[k - 1];
        else *H *= 2, *W *= 2;
    }
}

static void sdx__unet_run_init(sdx__unet_run *r, sdx__unet *u, sdx_ctx *ctx, sdx__arena *a, const sdx_tensor *context) {
    memset(r, 0, sizeof *r);
    r->u = u;
    r->ctx = ctx;
    r->a = a;
    r->context = context;
    r->compute = u->compute_type;
}

/* The hook through which a ControlNet steers the UNet (ComfyUI's
 * apply_control): skip[n] is added to the output of input block n when
 * the decoder takes it as a skip connection, mid to the middle block's
 * output. Shapes are those of the tensors they are added to; a NULL
 * data pointer adds nothing. */
typedef struct sdx__unet_control {
    sdx_tensor skip[SDX__UNET_MAX_BLOCKS];
    sdx_tensor mid;
} sdx__unet_control;

static int sdx__unet_control_add(sdx__unet_run *r, sdx_tensor *t, const sdx_tensor *res, const char *what, int n) {
    char s1[64], s2[64];
    if (!res->data) return SDX_OK;
    if (!sdx__same_shape(t, res))
        return sdx__fail(r->ctx, SDX_ERR_INVALID_ARG, "unet: control residual for %s %d is %s, the UNet's tensor is %s", what, n,
                         sdx_shape_str(res, s1, sizeof s1), sdx_shape_str(t, s2, sizeof s2));
    return sdx__add(r->ctx, t, t, res);
}

/* Memory: the skip connections stay on the arena stack while the decoder
 * consumes them newest first; the running activation h alternates
 * between two buffers at the bottom sized for the largest decoder output,
 * so a consumed skip and a block's temporaries are released as soon as
 * the block is done. Peak = live skips + 2 h buffers + one block's
 * temporaries. */
static int sdx__unet_forward_ops(sdx_ctx *ctx, sdx__unet *u, sdx__arena *a, const sdx_tensor *x, const float *timesteps,
                                 const sdx_tensor *context, const sdx_tensor *y, const sdx__unet_control *control,
                                 const sdx__unet_kv *kv, sdx_tensor *out) {
    int64_t sh[SDX__UNET_MAX_BLOCKS], sw[SDX__UNET_MAX_BLOCKS], B, hmax, H, W;
    int64_t es[2];
    sdx__mark m0 = sdx__arena_mark(a), mk[SDX__UNET_MAX_BLOCKS];
    sdx_tensor skip[SDX__UNET_MAX_BLOCKS], emb, cat, buf[2], h, tmp;
    sdx__unet_run r;
    int rc, cur = 0;
    u->ctx = ctx;
    if ((rc = sdx__unet_check_inputs(u, x, timesteps, context, y)) != SDX_OK) return rc;
    if ((rc = sdx__unet_check_output(u, x, out)) != SDX_OK) return rc;
    if (kv && kv->n && !sdx__unet_kv_fits(kv, u, context))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "unet: cross-attention keys and values kept for another UNet, weights or context");
    B = x->shape[0];
    sdx__unet_run_init(&r, u, ctx, a, context);
    r.kv = kv && kv->n ? kv : NULL;
    sdx__unet_plan(u, x->shape[2], x->shape[3], sh, sw);
    hmax = (int64_t)u->mid.cout * sh[u->n_in - 1] * sw[u->n_in - 1];
    for (int n = 0; n < u->n_out; n++) {
        sdx__unet_out_size(u, n, sh, sw, &H, &W);
        hmax = SDX__MAX(hmax, (int64_t)u->out[n].cout * H * W);
    }
    es[0] = B; es[1] = u->embed_dim;
    SDX__UNET_DO(sdx__unet_act(&r, &emb, SDX_F32, 2, es));
    SDX__UNET_DO(sdx__unet_act4(&r, &buf[0], B, hmax, 1, 1));
    SDX__UNET_DO(sdx__unet_act4(&r, &buf[1], B, hmax, 1, 1));
    SDX__UNET_DO(sdx__unet_embed(&r, &emb, timesteps, y, SDX_F32));   /* feeds every block: f32 */
    r.emb = &emb;

    r.block = "input_blocks";
    for (int n = 0; n < u->n_in; n++) {
        mk[n] = sdx__arena_mark(a);
        SDX__UNET_DO(sdx__unet_act4(&r, &skip[n], B, u->in[n].cout, sh[n], sw[n]));
        r.block_index = n;
        SDX__UNET_DO(sdx__unet_block_forward(&r, &u->in[n], &skip[n], n ? &skip[n - 1] : x));
    }

    h = sdx__view4(u->act_type, buf[cur].data, B, u->mid.cout, sh[u->n_in - 1], sw[u->n_in - 1]);
    h.device = buf[cur].device;
    r.block = "middle_block";
    r.block_index = -1;
    if (u->mid.n_layers) SDX__UNET_DO(sdx__unet_block_forward(&r, &u->mid, &h, &skip[u->n_in - 1]));
    else SDX__UNET_DO(sdx__copy(ctx, &h, &skip[u->n_in - 1]));   /* BK-SDM: no middle block */
    if (control) SDX__UNET_DO(sdx__unet_control_add(&r, &h, &control->mid, "middle block", 0));

    r.block = "output_blocks";
    for (int n = 0; n < u->n_out; n++) {
        int k = u->n_in - 1 - n;
        sdx_tensor next;
        sdx__unet_out_size(u, n, sh, sw, &H, &W);
        next = sdx__view4(u->act_type, buf[cur ^ 1].data, B, u->out[n].cout, H, W);
        next.device = buf[cur ^ 1].device;
        if (control) SDX__UNET_DO(sdx__unet_control_add(&r, &skip[k], &control->skip[k], "input block", k));
        SDX__UNET_DO(sdx__unet_act4(&r, &cat, B, h.shape[1] + skip[k].shape[1], sh[k], sw[k]));
        sdx__trace_at(ctx, SDX__PART_UNET, "output_blocks.%d (skip concat)", n);
        SDX__UNET_DO(sdx__concat_channels(ctx, &cat, &h, &skip[k]));
        r.block_index = n;
        SDX__UNET_DO(sdx__unet_block_forward(&r, &u->out[n], &next, &cat));
        sdx__arena_release(a, mk[k]);   /* the skip, the concat, the temporaries */
        h = next;
        cur ^= 1;
    }

    sdx__trace_at(ctx, SDX__PART_UNET, "out");
    /* f32: 4 output channels, nothing to gain, error to lose */
    SDX__UNET_DO(sdx__unet_act4(&r, &tmp, B, h.shape[1], h.shape[2], h.shape[3]));
    SDX__UNET_DO(sdx__group_norm(ctx, &tmp, &h, SDX__UNET_GROUPS, 1e-5f, u->out_norm_w, u->out_norm_b, 1, SDX_F32));
    SDX__UNET_DO(sdx__conv2d(ctx, out, &tmp, u->out_conv_w, u->out_conv_b, 1, 1, SDX_F32));
    /* all of it, not just the last layer: each layer's read faults in
     * whole page-cache folios, which map pages of layers released before */
    if (u->low_memory) sdx__wset_release_all(&u->w);
done:
    sdx__arena_release(a, m0);
    return rc;
}

/* One UNet call's arguments, for sdx__graph_call. */
typedef struct {
    sdx_ctx *ctx; sdx__unet *u; sdx__arena *a;
    const sdx_tensor *x; const float *timesteps; const sdx_tensor *context, *y;
    const sdx__unet_control *control; const sdx__unet_kv *kv; sdx_tensor *out;
} sdx__unet_call;

static int sdx__unet_call_run(void *arg) {
    const sdx__unet_call *c = (const sdx__unet_call *)arg;
    return sdx__unet_forward_ops(c->ctx, c->u, c->a, c->x, c->timesteps, c->context, c->y, c->control, c->kv, c->out);
}

/* A UNet call: on a backend with graphs, recorded once and replayed while
 * its ops stay the same (sdx__graph_call). kv: the context's keys and
 * values (sdx__unet_kv_make), or NULL to compute them. */
static int sdx__unet_forward_control(sdx_ctx *ctx, sdx__unet *u, sdx__arena *a, const sdx_tensor *x, const float *timesteps,
                                     const sdx_tensor *context, const sdx_tensor *y, const sdx__unet_control *control,
                                     const sdx__unet_kv *kv, sdx_tensor *out) {
    sdx__unet_call c;
    c.ctx = ctx; c.u = u; c.a = a; c.x = x; c.timesteps = timesteps; c.context = context; c.y = y; c.control = control;
    c.kv = kv; c.out = out;
    return sdx__graph_call(ctx, SDX__GRAPH_UNET, sdx__unet_call_run, &c);
}

/* The plain UNet: no control, the context's keys and values computed. */
static int sdx__unet_forward(sdx_ctx *ctx, sdx__unet *u, sdx__arena *a, const sdx_tensor *x, const float *timesteps,
                             const sdx_tensor *context, const sdx_tensor *y, sdx_tensor *out) {
    return sdx__unet_forward_control(ctx, u, a, x, timesteps, context, y, NULL, NULL, out);
}

#pragma once
#include "../core/safetensors.c"
#include "../core/ops.c"
#include "../core/host_run.c"

/* ===================================================================== */
/*  TAESD: the tiny autoencoder (madebyollin/taesd) for SD latents        */
/* ===================================================================== */
/* A conv-only encoder and decoder that read and write the diffusion
 * model's latent space directly ("model space": no VAE scale factor).
 * The network is taesd.py's nn.Sequential, a fixed list of layers; the
 * channel counts (latent channels included) come from the tensors.
 * Decoder: tanh(x/3)*3, then convs, Blocks and three nearest 2x
 * upsamples, giving RGB of about [0, 1] (not clamped by the network).
 * Encoder: RGB in [0, 1], three stride-2 convs (H/2 = ceil(H/2)). TAESDXL
 * and the SD3/FLUX.1 variants share the layout; only the weights (and
 * for the latter the latent channels) differ. */

typedef enum sdx__taesd_op {
    SDX__TAESD_SOFTCLAMP,   /* tanh(x / 3) * 3, no weights                   */
    SDX__TAESD_CONV,        /* 3x3 conv, padding 1, with bias                */
    SDX__TAESD_CONV_NB,     /* 3x3 conv without bias (after an upsample)     */
    SDX__TAESD_DOWN,        /* 3x3 conv, stride 2, padding 1, without bias   */
    SDX__TAESD_RELU,
    SDX__TAESD_BLOCK,       /* relu(conv4(relu(conv2(relu(conv0(x))))) + skip(x)) */
    SDX__TAESD_UP           /* nearest 2x                                    */
} sdx__taesd_op;

#define SDX__TAESD_MAX_LAYERS 20
#define SDX__TAESD_MAX_CHANNELS 4096

static const unsigned char sdx__taesd_decoder_ops[] = {
    SDX__TAESD_SOFTCLAMP, SDX__TAESD_CONV, SDX__TAESD_RELU,
    SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_UP, SDX__TAESD_CONV_NB,
    SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_UP, SDX__TAESD_CONV_NB,
    SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_UP, SDX__TAESD_CONV_NB,
    SDX__TAESD_BLOCK, SDX__TAESD_CONV,
};

static const unsigned char sdx__taesd_encoder_ops[] = {
    SDX__TAESD_CONV, SDX__TAESD_BLOCK,
    SDX__TAESD_DOWN, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK,
    SDX__TAESD_DOWN, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK,
    SDX__TAESD_DOWN, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK, SDX__TAESD_BLOCK,
    SDX__TAESD_CONV,
};

/* Where a file keeps one half: tensor `prefix + (layer index + shift)`.
 * taesd.py's own files (taesd_decoder.safetensors, ...) have no prefix;
 * diffusers' AutoencoderTiny holds both halves and has no module for the
 * decoder's soft clamp, so its decoder indices are one lower; ComfyUI
 * keeps both halves in one state dict under taesd_decoder./taesd_encoder. */
typedef struct sdx__taesd_layout { const char *prefix; int shift; const char *name; } sdx__taesd_layout;

static const sdx__taesd_layout sdx__taesd_dec_layouts[] = {
    { "", 0, "taesd.py" }, { "decoder.layers.", -1, "diffusers AutoencoderTiny" }, { "taesd_decoder.", 0, "ComfyUI" },
};
static const sdx__taesd_layout sdx__taesd_enc_layouts[] = {
    { "", 0, "taesd.py" }, { "encoder.layers.", 0, "diffusers AutoencoderTiny" }, { "taesd_encoder.", 0, "ComfyUI" },
};

typedef struct sdx__taesd_layer {
    const sdx_tensor *w[3], *b[3];   /* convs: w[0], b[0] (NULL without bias); Block: conv.0, .2, .4 */
    const sdx_tensor *skip;          /* Block whose channels change: 1x1 conv without bias */
    int cin, cout;
} sdx__taesd_layer;

typedef struct sdx__taesd_net {
    sdx__wset w;                     /* w.ctx == NULL: this half is not loaded */
    const char *layout;
    int shift;
    const unsigned char *ops;
    int n_ops;
    sdx__taesd_layer layer[SDX__TAESD_MAX_LAYERS];
    int in_channels, out_channels, max_channels;
} sdx__taesd_net;

typedef struct sdx__taesd {
    sdx__taesd_net dec, enc;
    int latent_channels;
    int factor;              /* image pixels per latent pixel: 2^3 */
    int act_type;            /* activation storage, SDX_VAE_ACT_TYPE unless overridden */
} sdx__taesd;

/* ---- loading -------------------------------------------------------- */

static int sdx__taesd_fail_channels(sdx__taesd_net *n, int i, int c) {
    return sdx__fail(n->w.ctx, SDX_ERR_MODEL, "%s: TAESD layer '%s%d' has %d channels; 1..%d supported",
                     sdx_st_path(n->w.st), n->w.prefix, i + n->shift, c, SDX__TAESD_MAX_CHANNELS);
}

static int sdx__taesd_load_layer(sdx__taesd_net *n, int i, int cin) {
    sdx__taesd_layer *l = &n->layer[i];
    sdx__wset *w = &n->w;
    int idx = i + n->shift, op = n->ops[i];
    const sdx_tensor *t;
    l->cin = l->cout = cin;
    switch (op) {
    case SDX__TAESD_CONV: case SDX__TAESD_CONV_NB: case SDX__TAESD_DOWN:
        if (!(t = l->w[0] = sdx__wget(w, sdx__s4(-1, cin, 3, 3), "%d.weight", idx))) return sdx__werr(w);
        l->cout = (int)t->shape[0];
        if (l->cout < 1 || l->cout > SDX__TAESD_MAX_CHANNELS) return sdx__taesd_fail_channels(n, i, l->cout);
        if (op == SDX__TAESD_CONV && !(l->b[0] = sdx__wget(w, sdx__s1(l->cout), "%d.bias", idx))) return sdx__werr(w);
        return SDX_OK;
    case SDX__TAESD_BLOCK:
        if (!(t = l->w[0] = sdx__wget(w, sdx__s4(-1, cin, 3, 3), "%d.conv.0.weight", idx))) return sdx__werr(w);
        l->cout = (int)t->shape[0];
        if (l->cout < 1 || l->cout > SDX__TAESD_MAX_CHANNELS) return sdx__taesd_fail_channels(n, i, l->cout);
        for (int k = 0; k < 3; k++)
            if ((k && !(l->w[k] = sdx__wget(w, sdx__s4(l->cout, l->cout, 3, 3), "%d.conv.%d.weight", idx, 2 * k))) ||
                !(l->b[k] = sdx__wget(w, sdx__s1(l->cout), "%d.conv.%d.bias", idx, 2 * k)))
                return sdx__werr(w);
        if (cin != l->cout && !(l->skip = sdx__wget(w, sdx__s4(l->cout, cin, 1, 1), "%d.skip.weight", idx))) return sdx__werr(w);
        return SDX_OK;
    default:
        return SDX_OK;      /* no weights */
    }
}

/* Loads one half from `file` under `layout`. in_channels < 0: read from
 * the first conv (the decoder's latent channels). */
static int sdx__taesd_load_net(sdx_ctx *ctx, sdx__taesd_net *n, const sdx_st *file, const sdx__taesd_layout *layout,
                               const unsigned char *ops, int n_ops, int in_channels) {
    int rc, c = in_channels;
    memset(n, 0, sizeof *n);
    sdx__wset_init(&n->w, ctx, file, layout->prefix, SDX__PART_VAE, SDX_VAE_WEIGHT_TYPE);
    n->layout = layout->name;
    n->shift = layout->shift;
    n->ops = ops;
    n->n_ops = n_ops;
    if (c < 0) {
        int first = 0;
        const sdx_tensor *t;
        while (ops[first] != SDX__TAESD_CONV) first++;
        if (!(t = sdx__wget(&n->w, sdx__s4(-1, -1, 3, 3), "%d.weight", first + n->shift))) return sdx__werr(&n->w);
        c = (int)t->shape[1];
        if (c < 1 || c > SDX__TAESD_MAX_CHANNELS) return sdx__taesd_fail_channels(n, first, c);
    }
    n->in_channels = c;
    for (int i = 0; i < n_ops; i++) {
        if ((rc = sdx__taesd_load_layer(n, i, c)) != SDX_OK) return rc;
        c = n->layer[i].cout;
        n->max_channels = SDX__MAX(n->max_channels, c);
    }
    n->out_channels = c;
    return SDX_OK;
}

static void sdx__taesd_init(sdx__taesd *t) {
    memset(t, 0, sizeof *t);
    t->act_type = SDX_VAE_ACT_TYPE;
    t->factor = 8;
}

static void sdx__taesd_free(sdx__taesd *t) {
    if (t->dec.w.ctx) sdx__wset_free(&t->dec.w);
    if (t->enc.w.ctx) sdx__wset_free(&t->enc.w);
    sdx__taesd_init(t);
}

/* The layout of a half in `file`, or NULL: its first conv decides. */
static const sdx__taesd_layout *sdx__taesd_find(const sdx_st *file, const sdx__taesd_layout *layouts, int n, int first) {
    char name[128];
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s%d.weight", layouts[i].prefix, first + layouts[i].shift);
        if (sdx_st_find(file, name)) return &layouts[i];
    }
    return NULL;
}

/* Adds the halves `file` holds (a decoder, an encoder or both) to t. The
 * file must stay open while t is used. On failure t keeps what it had. */
static int sdx__taesd_load(sdx_ctx *ctx, sdx__taesd *t, const sdx_st *file) {
    const sdx__taesd_layout *dl = sdx__taesd_find(file, sdx__taesd_dec_layouts, SDX__ARRAY_LEN(sdx__taesd_dec_layouts), 1);
    const sdx__taesd_layout *el = sdx__taesd_find(file, sdx__taesd_enc_layouts, SDX__ARRAY_LEN(sdx__taesd_enc_layouts), 0);
    sdx__taesd_net dec, enc;
    int rc = SDX_OK, lc;
    memset(&dec, 0, sizeof dec);
    memset(&enc, 0, sizeof enc);
    if (!dl && !el)
        return sdx__fail(ctx, SDX_ERR_MODEL,
                         "%s: not a TAESD file: no decoder ('1.weight' as in taesd_decoder.safetensors, "
                         "'decoder.layers.0.weight' as in diffusers AutoencoderTiny) and no encoder ('0.weight', "
                         "'encoder.layers.0.weight')", sdx_st_path(file));
    if ((dl && t->dec.w.ctx) || (el && t->enc.w.ctx))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: a second TAESD %s (the first came from %s)", sdx_st_path(file),
                         dl && t->dec.w.ctx ? "decoder" : "encoder", sdx_st_path(dl && t->dec.w.ctx ? t->dec.w.st : t->enc.w.st));
    if (dl) {
        rc = sdx__taesd_load_net(ctx, &dec, file, dl, sdx__taesd_decoder_ops, SDX__ARRAY_LEN(sdx__taesd_decoder_ops), -1);
        if (rc == SDX_OK && dec.out_channels != 3)
            rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: TAESD decoder gives %d channels (tensor '%s%d.weight'), expected RGB",
                           sdx_st_path(file), dec.out_channels, dec.w.prefix, dec.n_ops - 1 + dec.shift);
    }
    if (rc == SDX_OK && el)
        rc = sdx__taesd_load_net(ctx, &enc, file, el, sdx__taesd_encoder_ops, SDX__ARRAY_LEN(sdx__taesd_encoder_ops), 3);
    lc = dl ? dec.in_channels : el ? enc.out_channels : 0;
    if (rc == SDX_OK && dl && el && enc.out_channels != dec.in_channels)
        rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: TAESD encoder makes %d latent channels but the decoder takes %d",
                       sdx_st_path(file), enc.out_channels, dec.in_channels);
    if (rc == SDX_OK && t->latent_channels && lc != t->latent_channels)
        rc = sdx__fail(ctx, SDX_ERR_MODEL, "%s: TAESD %s has %d latent channels, the one loaded before %d", sdx_st_path(file),
                       dl ? "decoder" : "encoder", lc, t->latent_channels);
    if (rc != SDX_OK) {
        if (dec.w.ctx) sdx__wset_free(&dec.w);
        if (enc.w.ctx) sdx__wset_free(&enc.w);
        return rc;
    }
    if (dl) t->dec = dec;
    if (el) t->enc = enc;
    t->latent_channels = lc;
    t->factor = 8;
    sdx__log(ctx, SDX_LOG_INFO, "%s: TAESD %s%s%s (%s layout), %d latent channels, %d wide", sdx_st_path(file),
             dl ? "decoder" : "", dl && el ? " and " : "", el ? "encoder" : "", (dl ? dl : el)->name, lc,
             dl ? dec.max_channels : enc.max_channels);
    return SDX_OK;
}

/* ---- forward pass --------------------------------------------------- */
/* Activations rotate through three slots sized for the largest one: a
 * Block needs its input and two temporaries. The last layer writes the
 * caller's output tensor. */

typedef struct sdx__taesd_run {
    sdx_ctx *ctx;
    const sdx__taesd_net *n;
    sdx_dtype act;
    int device;              /* the slots are backend memory */
    void *slot[3];
    sdx_tensor x;            /* current activation */
    int cur;                 /* its slot; -1: the caller's input */
} sdx__taesd_run;

/* Output size of layer op for an input of h x w. */
static void sdx__taesd_resize(int op, int64_t *h, int64_t *w) {
    if (op == SDX__TAESD_UP) { *h *= 2; *w *= 2; }
    if (op == SDX__TAESD_DOWN) { *h = (*h + 1) / 2; *w = (*w + 1) / 2; }
}

/* Walks the shapes: the largest activation (elements) and the output size. */
static int64_t sdx__taesd_plan(const sdx__taesd_net *n, int64_t batch, int64_t h, int64_t w, int64_t *oh, int64_t *ow) {
    int64_t most = 0;
    for (int i = 0; i < n->n_ops; i++) {
        sdx__taesd_resize(n->ops[i], &h, &w);
        most = SDX__MAX(most, batch * n->layer[i].cout * h * w);
    }
    *oh = h;
    *ow = w;
    return most;
}

/* A tensor in a slot other than the current one and `also` (-1: none). */
static sdx_tensor sdx__taesd_slot(sdx__taesd_run *r, int also, int *which, int64_t c, int64_t h, int64_t w) {
    int s = 0;
    sdx_tensor t;
    while (s == r->cur || s == also) s++;
    *which = s;
    t = sdx__view4(r->act, r->slot[s], r->x.shape[0], c, h, w);
    t.device = r->device;
    return t;
}

static int sdx__taesd_block(sdx__taesd_run *r, const sdx__taesd_layer *l, sdx_tensor *out) {
    sdx_ctx *ctx = r->ctx;
    int64_t h = r->x.shape[2], w = r->x.shape[3];
    int sa, sb, rc;
    sdx_tensor a = sdx__taesd_slot(r, -1, &sa, l->cout, h, w);
    sdx_tensor b = sdx__taesd_slot(r, sa, &sb, l->cout, h, w);
    sdx_tensor *y = out ? out : &a;
    if ((rc = sdx__conv2d(ctx, &a, &r->x, l->w[0], l->b[0], 1, 1, SDX_F32)) != SDX_OK ||
        (rc = sdx__clamp(ctx, &a, &a, 0.0f, INFINITY)) != SDX_OK ||
        (rc = sdx__conv2d(ctx, &b, &a, l->w[1], l->b[1], 1, 1, SDX_F32)) != SDX_OK ||
        (rc = sdx__clamp(ctx, &b, &b, 0.0f, INFINITY)) != SDX_OK ||
        (rc = sdx__conv2d(ctx, y, &b, l->w[2], l->b[2], 1, 1, SDX_F32)) != SDX_OK)
        return rc;
    if (l->skip) {
        if ((rc = sdx__conv2d(ctx, &b, &r->x, l->skip, NULL, 1, 0, SDX_F32)) != SDX_OK || (rc = sdx__add(ctx, y, y, &b)) != SDX_OK) return rc;
    } else if ((rc = sdx__add(ctx, y, y, &r->x)) != SDX_OK) {
        return rc;
    }
    if ((rc = sdx__clamp(ctx, y, y, 0.0f, INFINITY)) != SDX_OK) return rc;
    r->x = *y;
    r->cur = out ? -1 : sa;
    return SDX_OK;
}

static int sdx__taesd_layer_fwd(sdx__taesd_run *r, int i, sdx_tensor *out) {
    const sdx__taesd_layer *l = &r->n->layer[i];
    int op = r->n->ops[i], s = -1, rc;
    int64_t h = r->x.shape[2], w = r->x.shape[3];
    sdx_tensor y;
    sdx__taesd_resize(op, &h, &w);
    if (op == SDX__TAESD_BLOCK) return sdx__taesd_block(r, l, out);
    y = out ? *out : sdx__taesd_slot(r, -1, &s, l->cout, h, w);
    switch (op) {
    case SDX__TAESD_SOFTCLAMP: rc = sdx__tanh_clamp(r->ctx, &y, &r->x, 3.0f); break;
    case SDX__TAESD_RELU: rc = sdx__clamp(r->ctx, &y, &r->x, 0.0f, INFINITY); break;
    case SDX__TAESD_UP: rc = sdx__upsample2x(r->ctx, &y, &r->x); break;
    case SDX__TAESD_DOWN: rc = sdx__conv2d(r->ctx, &y, &r->x, l->w[0], NULL, 2, 1, SDX_F32); break;
    default: rc = sdx__conv2d(r->ctx, &y, &r->x, l->w[0], l->b[0], 1, 1, SDX_F32); break;
    }
    r->x = y;
    r->cur = out ? -1 : s;
    return rc;
}

static int sdx__taesd_run_net(sdx_ctx *ctx, const sdx__taesd_net *n, sdx__arena *arena, int act_type, const char *half,
                              const sdx_tensor *in, sdx_tensor *out) {
    sdx__taesd_run r;
    sdx__mark m = sdx__arena_mark(arena);
    int64_t oh, ow, most = sdx__taesd_plan(n, in->shape[0], in->shape[2], in->shape[3], &oh, &ow);
    size_t bytes;
    int rc = SDX_OK;
    memset(&r, 0, sizeof r);
    r.ctx = ctx;
    r.n = n;
    r.act = (sdx_dtype)act_type;
    r.device = arena->device;
    r.x = *in;
    r.cur = -1;
    if (!sdx__mul_size((size_t)most, sdx_dtype_size(r.act), &bytes))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "TAESD %s: activation size overflows", half);
    for (int s = 0; s < 3; s++)
        if (!(r.slot[s] = sdx__arena_alloc(arena, bytes))) {
            sdx__arena_release(arena, m);
            return sdx__nomem(ctx, "TAESD activations", 3 * bytes);
        }
    for (int i = 0; i < n->n_ops && rc == SDX_OK; i++) {
        sdx__trace_at(ctx, SDX__PART_VAE, "taesd %s %d", half, i + n->shift);
        rc = sdx__taesd_layer_fwd(&r, i, i == n->n_ops - 1 ? out : NULL);
    }
    sdx__arena_release(arena, m);
    return rc;
}

/* A pass from host tensors (in: any float dtype, out: F32): on a device
 * backend through device copies (sdx__host_run). */
typedef struct sdx__taesd_pass {
    const sdx__taesd_net *n;
    int act_type;
    const char *half;
    int clamp01;             /* clamp the output to [0, 1] */
} sdx__taesd_pass;

static int sdx__taesd_pass_run(sdx_ctx *ctx, sdx__arena *arena, const void *user, const sdx_tensor *in, sdx_tensor *out) {
    const sdx__taesd_pass *p = (const sdx__taesd_pass *)user;
    int rc = sdx__taesd_run_net(ctx, p->n, arena, p->act_type, p->half, in, out);
    return rc == SDX_OK && p->clamp01 ? sdx__clamp(ctx, out, out, 0.0f, 1.0f) : rc;
}

static int sdx__taesd_run_host(sdx_ctx *ctx, const sdx__taesd_net *n, sdx__arena *arena, int act_type, const char *half,
                               const sdx_tensor *in, sdx_tensor *out, int clamp01) {
    sdx__taesd_pass p;
    p.n = n;
    p.act_type = act_type;
    p.half = half;
    p.clamp01 = clamp01;
    return sdx__host_run(ctx, arena, sdx__taesd_pass_run, &p, in, out);
}

/* ---- entry points --------------------------------------------------- */
/* Host tensors in and out, as the VAE's. */

/* latent [N, C, h, w] in model space (host, any float dtype) -> image,
 * caller allocated host F32 [N, 3, 8h, 8w]: RGB, clamped to [0, 1] when
 * clamp01 (the final image), else the raw network output. */
static int sdx__taesd_decode(sdx_ctx *ctx, const sdx__taesd *t, sdx__arena *arena, const sdx_tensor *latent, sdx_tensor *image,
                             int clamp01) {
    char ls[96], is[96];
    if (!t->dec.w.ctx) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "TAESD decode: no TAESD decoder is loaded");
    if (latent->ndim != 4 || latent->shape[0] < 1 || latent->shape[1] != t->dec.in_channels || latent->shape[2] < 1 ||
        latent->shape[3] < 1 || image->ndim != 4 || image->dtype != SDX_F32 || image->shape[0] != latent->shape[0] || image->shape[1] != 3 ||
        image->shape[2] != latent->shape[2] * t->factor || image->shape[3] != latent->shape[3] * t->factor)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "TAESD decode: latent %s -> image %s; expected [N, %d, h, w] -> [N, 3, %dh, %dw]",
                         sdx_shape_str(latent, ls, sizeof ls), sdx_shape_str(image, is, sizeof is), t->dec.in_channels,
                         t->factor, t->factor);
    return sdx__taesd_run_host(ctx, &t->dec, arena, t->act_type, "decoder", latent, image, clamp01);
}

/* image [N, 3, H, W], RGB in [0, 1] (host, any float dtype) -> latent,
 * caller allocated host F32 [N, C, ceil(H/8), ceil(W/8)] in model space. */
static int sdx__taesd_encode(sdx_ctx *ctx, const sdx__taesd *t, sdx__arena *arena, const sdx_tensor *image, sdx_tensor *latent) {
    char ls[96], is[96];
    int64_t oh = 0, ow = 0;
    if (!t->enc.w.ctx) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "TAESD encode: no TAESD encoder is loaded");
    if (image->ndim == 4 && image->shape[0] >= 1 && image->shape[2] >= 1 && image->shape[3] >= 1)
        sdx__taesd_plan(&t->enc, image->shape[0], image->shape[2], image->shape[3], &oh, &ow);
    if (image->ndim != 4 || image->shape[0] < 1 || image->shape[1] != 3 || image->shape[2] < 1 || image->shape[3] < 1 ||
        latent->ndim != 4 || latent->dtype != SDX_F32 || latent->shape[0] != image->shape[0] || latent->shape[1] != t->enc.out_channels ||
        latent->shape[2] != oh || latent->shape[3] != ow)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "TAESD encode: image %s -> latent %s; expected [N, 3, H, W] -> [N, %d, H/8, W/8]",
                         sdx_shape_str(image, is, sizeof is), sdx_shape_str(latent, ls, sizeof ls), t->enc.out_channels);
    return sdx__taesd_run_host(ctx, &t->enc, arena, t->act_type, "encoder", image, latent, 0);
}

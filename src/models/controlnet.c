#pragma once
#include "../family/family.c"
#include "unet.c"

/* ===================================================================== */
/*  ControlNet (SD 1.x, SD 2.x, SDXL)                                     */
/* ===================================================================== */

/* A ControlNet is a copy of the UNet's encoder (time/label embedding,
 * input_blocks, middle_block: loaded and run by unet.c's own code) plus
 *   input_hint_block.{0,2,...}  3x3 convs with SiLU between them, three
 *                               of stride 2: the control picture at 8x the
 *                               latent size becomes [model_channels, h, w],
 *                               added to the output of input block 0;
 *   zero_convs.N.0              1x1 conv per input block: residual N;
 *   middle_block_out.0          1x1 conv: the middle residual.
 * The residuals, times the strength, are added to the UNet's skip
 * connections and middle block (sdx__unet_control). Layouts: the original
 * (`control_model.` prefix, as released), the same without the prefix,
 * and diffusers' (renamed on lookup, see sdx__cn_diffusers_name). */

#define SDX__CN_MAX_HINT 32            /* convs in the hint block (8 in every release) */

typedef struct sdx__controlnet {
    sdx__unet enc;                     /* its encoder; enc.w reads the file */
    int hint_channels, n_hint;
    const sdx_tensor *hint_w[SDX__CN_MAX_HINT], *hint_b[SDX__CN_MAX_HINT];
    int hint_stride[SDX__CN_MAX_HINT];
    const sdx_tensor *zero_w[SDX__UNET_MAX_BLOCKS], *zero_b[SDX__UNET_MAX_BLOCKS];
    const sdx_tensor *mid_w, *mid_b;
    /* diffusers layout: resnets per down block and hint embedding blocks */
    int diffusers, layers_per_block, cond_blocks;
} sdx__controlnet;

/* ---- the diffusers layout ------------------------------------------------ */

static SDX__PRINTF(3, 4) int sdx__cn_put(char *out, size_t size, const char *fmt, ...) {
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(out, size, fmt, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size;
}

/* ResBlock sub-module names: LDM -> diffusers. */
static const char *sdx__cn_res_name(const char *rest, const char **tail) {
    static const char *const map[][2] = {
        { "in_layers.0.", "norm1." }, { "in_layers.2.", "conv1." }, { "emb_layers.1.", "time_emb_proj." },
        { "out_layers.0.", "norm2." }, { "out_layers.3.", "conv2." }, { "skip_connection.", "conv_shortcut." },
    };
    for (int i = 0; i < SDX__ARRAY_LEN(map); i++) {
        size_t n = strlen(map[i][0]);
        if (!strncmp(rest, map[i][0], n)) { *tail = rest + n; return map[i][1]; }
    }
    return NULL;
}

/* A module M of an LDM block (0 ResBlock, 1 transformer) as diffusers
 * names it under `parent` ("down_blocks.1", "mid_block"), index j. */
static int sdx__cn_module_name(const char *parent, int m, int j, const char *rest, char *out, size_t size) {
    const char *res, *tail;
    if (m == 1) return sdx__cn_put(out, size, "%s.attentions.%d.%s", parent, j, rest);
    if (m != 0 || !(res = sdx__cn_res_name(rest, &tail))) return 0;
    return sdx__cn_put(out, size, "%s.resnets.%d.%s%s", parent, j, res, tail);
}

/* wset name map: the diffusers name of an LDM ControlNet tensor. */
static int sdx__cn_diffusers_name(const void *user, const char *name, char *out, size_t size) {
    const sdx__controlnet *cn = (const sdx__controlnet *)user;
    int nrb = cn->layers_per_block, n, m, k, used = 0;
    char parent[32];
    if (sscanf(name, "time_embed.%d.%n", &k, &used) == 1 && used && (k == 0 || k == 2))
        return sdx__cn_put(out, size, "time_embedding.linear_%d.%s", k / 2 + 1, name + used);
    if (sscanf(name, "label_emb.0.%d.%n", &k, &used) == 1 && used && (k == 0 || k == 2))
        return sdx__cn_put(out, size, "add_embedding.linear_%d.%s", k / 2 + 1, name + used);
    if (!strncmp(name, "input_blocks.0.0.", 17)) return sdx__cn_put(out, size, "conv_in.%s", name + 17);
    if (sscanf(name, "input_blocks.%d.%d.%n", &n, &m, &used) == 2 && used && n > 0 && nrb > 0) {
        int level = (n - 1) / (nrb + 1), j = (n - 1) % (nrb + 1);
        snprintf(parent, sizeof parent, "down_blocks.%d", level);
        if (j < nrb) return sdx__cn_module_name(parent, m, j, name + used, out, size);
        if (m == 0 && !strncmp(name + used, "op.", 3))
            return sdx__cn_put(out, size, "%s.downsamplers.0.conv.%s", parent, name + used + 3);
        return 0;
    }
    if (sscanf(name, "middle_block.%d.%n", &m, &used) == 1 && used && m >= 0 && m <= 2)
        return sdx__cn_module_name("mid_block", m == 1, m / 2, name + used, out, size);
    if (sscanf(name, "input_hint_block.%d.%n", &k, &used) == 1 && used && k >= 0 && k % 2 == 0) {
        if (k == 0) return sdx__cn_put(out, size, "controlnet_cond_embedding.conv_in.%s", name + used);
        if (k == 2 * (cn->cond_blocks + 1)) return sdx__cn_put(out, size, "controlnet_cond_embedding.conv_out.%s", name + used);
        if (k / 2 - 1 < cn->cond_blocks) return sdx__cn_put(out, size, "controlnet_cond_embedding.blocks.%d.%s", k / 2 - 1, name + used);
        return 0;
    }
    if (sscanf(name, "zero_convs.%d.0.%n", &n, &used) == 1 && used)
        return sdx__cn_put(out, size, "controlnet_down_blocks.%d.%s", n, name + used);
    if (!strncmp(name, "middle_block_out.0.", 19)) return sdx__cn_put(out, size, "controlnet_mid_block.%s", name + 19);
    return 0;
}

static int sdx__cn_count(const sdx_st *st, const char *fmt) {
    char name[128];
    int n = 0;
    for (;; n++) {
        snprintf(name, sizeof name, fmt, n);
        if (!sdx_st_find(st, name) || n >= SDX__UNET_MAX_BLOCKS) return n;
    }
}

/* ---- loading -------------------------------------------------------------- */

static void sdx__controlnet_free(sdx__controlnet *cn) {
    sdx__unet_free(&cn->enc);
    memset(cn, 0, sizeof *cn);
}

static int sdx__cn_load_hint(sdx__controlnet *cn) {
    sdx__unet *u = &cn->enc;
    sdx__wset *w = &u->w;
    const sdx_tensor *first;
    int c, n = 0, factor = 1;
    while (n < SDX__CN_MAX_HINT && sdx__whas(w, "input_hint_block.%d.weight", 2 * n)) n++;
    if (n < 2) return sdx__fail(u->ctx, SDX_ERR_MODEL, "%s: ControlNet without a hint block ('%sinput_hint_block.0.weight' ... "
                                "or controlnet_cond_embedding.*)", sdx_st_path(w->st), w->prefix);
    if (!(first = sdx__unet_probe(u, "input_hint_block.0.weight"))) return sdx__werr(w);
    if (first->ndim != 4 || !(cn->hint_channels = sdx__unet_width(first, 1))) return sdx__unet_bad_probe(u, first, "[16, hint_channels, 3, 3]");
    c = cn->hint_channels;
    for (int k = 0; k < n; k++) {
        /* the last conv gives model_channels; the others their own width */
        const sdx_tensor *p = k == n - 1 ? NULL : sdx__unet_probe(u, "input_hint_block.%d.weight", 2 * k);
        int co = p ? (p->ndim == 4 ? sdx__unet_width(p, 0) : 0) : u->model_channels;
        if (!co) return sdx__unet_bad_probe(u, p, "[C, C_in, 3, 3]");
        SDX__UNET_GET(cn->hint_w[k], w, sdx__s4(co, c, 3, 3), "input_hint_block.%d.weight", 2 * k);
        SDX__UNET_GET(cn->hint_b[k], w, sdx__s1(co), "input_hint_block.%d.bias", 2 * k);
        /* convs 2, 4, 6 halve the size (diffusers: every second block) */
        cn->hint_stride[k] = k > 0 && k < n - 1 && k % 2 == 0 ? 2 : 1;
        factor *= cn->hint_stride[k];
        c = co;
    }
    cn->n_hint = n;
    if (factor != 8)
        return sdx__fail(u->ctx, SDX_ERR_MODEL, "%s: the ControlNet hint block downsamples by %d, expected 8 (%d convs)",
                         sdx_st_path(w->st), factor, n);
    return SDX_OK;
}

static int sdx__cn_load_outputs(sdx__controlnet *cn) {
    sdx__unet *u = &cn->enc;
    sdx__wset *w = &u->w;
    for (int n = 0; n < u->n_in; n++) {
        int c = u->in[n].cout;
        SDX__UNET_GET(cn->zero_w[n], w, sdx__s4(c, c, 1, 1), "zero_convs.%d.0.weight", n);
        SDX__UNET_GET(cn->zero_b[n], w, sdx__s1(c), "zero_convs.%d.0.bias", n);
    }
    if (sdx__whas(w, "zero_convs.%d.0.weight", u->n_in))
        return sdx__fail(u->ctx, SDX_ERR_MODEL, "%s: %d input blocks but a zero conv for input block %d",
                         sdx_st_path(w->st), u->n_in, u->n_in);
    SDX__UNET_GET(cn->mid_w, w, sdx__s4(u->mid.cout, u->mid.cout, 1, 1), "middle_block_out.0.weight");
    SDX__UNET_GET(cn->mid_b, w, sdx__s1(u->mid.cout), "middle_block_out.0.bias");
    return SDX_OK;
}

/* Finds the layout, then resolves every tensor once (weights stay in the
 * mapped file, in the file's dtype unless SDX_UNET_WEIGHT_TYPE says
 * otherwise). */
static int sdx__controlnet_load(sdx_ctx *ctx, sdx__controlnet *cn, const sdx_st *file) {
    const char *prefix = NULL;
    int rc;
    memset(cn, 0, sizeof *cn);
    if (sdx_st_find(file, "control_model.zero_convs.0.0.weight")) prefix = "control_model.";
    else if (sdx_st_find(file, "zero_convs.0.0.weight")) prefix = "";
    else if (sdx_st_find(file, "controlnet_down_blocks.0.weight")) {
        prefix = "";
        cn->diffusers = 1;
        cn->layers_per_block = sdx__cn_count(file, "down_blocks.0.resnets.%d.conv1.weight");
        cn->cond_blocks = sdx__cn_count(file, "controlnet_cond_embedding.blocks.%d.weight");
    } else {
        return sdx__fail(ctx, SDX_ERR_MODEL, "%s: not a ControlNet: none of 'control_model.zero_convs.0.0.weight', "
                         "'zero_convs.0.0.weight', 'controlnet_down_blocks.0.weight'", sdx_st_path(file));
    }
    if ((rc = sdx__unet_init(ctx, &cn->enc, file, prefix, SDX__PART_CONTROLNET, SDX_UNET_WEIGHT_TYPE)) == SDX_OK) {
        if (cn->diffusers) {
            cn->enc.w.map = sdx__cn_diffusers_name;
            cn->enc.w.map_user = cn;
        }
        if ((rc = sdx__unet_load_encoder(&cn->enc)) == SDX_OK && (rc = sdx__cn_load_hint(cn)) == SDX_OK &&
            (rc = sdx__cn_load_outputs(cn)) == SDX_OK) {
            sdx__unet_pick_heads(&cn->enc);
            return SDX_OK;
        }
    }
    if (rc != SDX_ERR_NOMEM && rc != SDX_ERR_MODEL && rc != SDX_ERR_IO) rc = SDX_ERR_MODEL;   /* IO: a read callback */
    sdx__controlnet_free(cn);
    return rc;
}

/* The family a UNet encoder belongs to, by the clues that chose its heads. */
static const char *sdx__cn_family(const sdx__unet *u) {
    return sdx__family_of_unet(u->adm_channels, u->linear_proj, u->context_dim)->name;
}

/* Does this ControlNet fit the UNet: same context width, vector
 * conditioning and encoder (block widths and resolutions)? Then it takes
 * the UNet's attention heads, which the file cannot tell. */
static int sdx__controlnet_fit(sdx_ctx *ctx, sdx__controlnet *cn, const sdx__unet *unet, const char *unet_file) {
    const sdx__unet *e = &cn->enc;
    char why[160];
    why[0] = 0;
    if (e->context_dim != unet->context_dim)
        snprintf(why, sizeof why, "text context width %d vs %d", e->context_dim, unet->context_dim);
    else if (e->adm_channels != unet->adm_channels)
        snprintf(why, sizeof why, "vector conditioning (label_emb) width %d vs %d", e->adm_channels, unet->adm_channels);
    else if (e->in_channels != 4)
        snprintf(why, sizeof why, "the ControlNet takes %d latent channels, not 4", e->in_channels);
    else if (e->model_channels != unet->model_channels || e->n_in != unet->n_in || e->mid.cout != unet->mid.cout)
        snprintf(why, sizeof why, "encoder of %d blocks, width %d vs %d blocks, width %d", e->n_in, e->model_channels,
                 unet->n_in, unet->model_channels);
    for (int n = 0; !why[0] && n < e->n_in; n++)
        if (e->in[n].cout != unet->in[n].cout ||
            sdx__unet_block_has(&e->in[n], SDX__UL_DOWN) != sdx__unet_block_has(&unet->in[n], SDX__UL_DOWN))
            snprintf(why, sizeof why, "input block %d: %d channels vs %d", n, e->in[n].cout, unet->in[n].cout);
    if (why[0])
        return sdx__fail(ctx, SDX_ERR_MODEL, "ControlNet %s (%s) does not fit the model %s (%s): %s", sdx_st_path(e->w.st),
                         sdx__cn_family(e), unet_file, sdx__cn_family(unet), why);
    cn->enc.num_heads = unet->num_heads;
    cn->enc.head_dim = unet->head_dim;
    return SDX_OK;
}

/* ---- forward -------------------------------------------------------------- */

/* Arena tensors for the residuals of a [B, 4, h, w] call, shaped like the
 * UNet's skip connections. */
static int sdx__controlnet_alloc(const sdx__controlnet *cn, sdx__arena *a, sdx_dtype dtype, int64_t B, int64_t h, int64_t w,
                                 sdx__unet_control *ctl) {
    const sdx__unet *u = &cn->enc;
    int64_t sh[SDX__UNET_MAX_BLOCKS], sw[SDX__UNET_MAX_BLOCKS];
    memset(ctl, 0, sizeof *ctl);
    sdx__unet_plan(u, h, w, sh, sw);
    for (int n = 0; n < u->n_in; n++)
        if (!sdx__arena_tensor4(a, &ctl->skip[n], dtype, B, u->in[n].cout, sh[n], sw[n])) return SDX_ERR_NOMEM;
    if (!sdx__arena_tensor4(a, &ctl->mid, dtype, B, u->mid.cout, sh[u->n_in - 1], sw[u->n_in - 1])) return SDX_ERR_NOMEM;
    return SDX_OK;
}

/* input_hint_block: hint [Hb, C, 8h, 8w] -> g [Hb, model_channels, h, w]. */
static int sdx__cn_hint_forward(sdx__unet_run *r, const sdx__controlnet *cn, const sdx_tensor *hint, sdx_tensor *g) {
    sdx__mark m = sdx__arena_mark(r->a);
    sdx_tensor cur = *hint, next;
    int rc = SDX_OK;
    for (int k = 0; k < cn->n_hint; k++) {
        int64_t H = cur.shape[2], W = cur.shape[3];
        if (cn->hint_stride[k] == 2) H = sdx__unet_down_size(H), W = sdx__unet_down_size(W);
        sdx__trace_at(r->ctx, SDX__PART_CONTROLNET, "input_hint_block.%d", 2 * k);
        if (k == cn->n_hint - 1) next = *g;
        else SDX__UNET_DO(sdx__unet_act4(r, &next, cur.shape[0], cn->hint_w[k]->shape[0], H, W));
        SDX__UNET_DO(sdx__conv2d(r->ctx, &next, &cur, cn->hint_w[k], cn->hint_b[k], cn->hint_stride[k], 1, r->compute));
        if (k < cn->n_hint - 1) SDX__UNET_DO(sdx__silu(r->ctx, &next, &next, r->compute));
        cur = next;
    }
done:
    sdx__arena_release(r->a, m);
    return rc;
}

/* residual = strength * conv1x1(h), stored into (or, accumulate, added to) dst. */
static int sdx__cn_residual(sdx__unet_run *r, const sdx_tensor *h, const sdx_tensor *w, const sdx_tensor *b, float strength,
                            sdx_tensor *dst, int accumulate) {
    sdx__mark m = sdx__arena_mark(r->a);
    sdx_tensor t;
    int rc;
    if (!accumulate) {
        SDX__UNET_DO(sdx__conv2d(r->ctx, dst, h, w, b, 1, 0, r->compute));
        SDX__UNET_DO(sdx__scale(r->ctx, dst, dst, strength));
    } else {
        SDX__UNET_DO(sdx__unet_act4(r, &t, dst->shape[0], dst->shape[1], dst->shape[2], dst->shape[3]));
        SDX__UNET_DO(sdx__conv2d(r->ctx, &t, h, w, b, 1, 0, r->compute));
        SDX__UNET_DO(sdx__scale(r->ctx, &t, &t, strength));
        SDX__UNET_DO(sdx__add(r->ctx, dst, dst, &t));
    }
done:
    sdx__arena_release(r->a, m);
    return rc;
}

/* One model call: x [B, 4, h, w] (already scaled by c_in), the UNet's
 * timesteps, context and y, hint [B, hint_channels, 8h, 8w] (ComfyUI
 * broadcasts one picture over cond and uncond, as copies). The
 * residuals times strength go into ctl (sdx__controlnet_alloc), added
 * to what is there when `accumulate` (several ControlNets). */
static int sdx__controlnet_forward(sdx_ctx *ctx, sdx__controlnet *cn, sdx__arena *a, const sdx_tensor *x, const float *timesteps,
                                   const sdx_tensor *context, const sdx_tensor *y, const sdx_tensor *hint, float strength,
                                   sdx__unet_control *ctl, int accumulate) {
    sdx__unet *u = &cn->enc;
    int64_t sh[SDX__UNET_MAX_BLOCKS], sw[SDX__UNET_MAX_BLOCKS], B, hmax, es[2];
    sdx__mark m0 = sdx__arena_mark(a);
    sdx_tensor emb, g, buf[2], h, prev;
    sdx__unet_run r;
    char s1[64];
    int rc;
    u->ctx = ctx;
    if ((rc = sdx__unet_check_inputs(u, x, timesteps, context, y)) != SDX_OK) return rc;
    B = x->shape[0];
    if (!hint || hint->ndim != 4 || hint->shape[0] != B || hint->shape[1] != cn->hint_channels ||
        hint->shape[2] != 8 * x->shape[2] || hint->shape[3] != 8 * x->shape[3])
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "controlnet: hint must be [%lld, %d, %lld, %lld], got %s", (long long)B,
                         cn->hint_channels,
                         (long long)(8 * x->shape[2]), (long long)(8 * x->shape[3]), hint ? sdx_shape_str(hint, s1, sizeof s1) : "NULL");
    sdx__unet_run_init(&r, u, ctx, a, context);
    sdx__unet_plan(u, x->shape[2], x->shape[3], sh, sw);
    hmax = 0;
    for (int n = 0; n < u->n_in; n++) hmax = SDX__MAX(hmax, (int64_t)u->in[n].cout * sh[n] * sw[n]);
    hmax = SDX__MAX(hmax, (int64_t)u->mid.cout * sh[u->n_in - 1] * sw[u->n_in - 1]);
    es[0] = B; es[1] = u->embed_dim;
    SDX__UNET_DO(sdx__unet_act(&r, &emb, SDX_F32, 2, es));
    SDX__UNET_DO(sdx__unet_act4(&r, &g, hint->shape[0], u->model_channels, sh[0], sw[0]));
    SDX__UNET_DO(sdx__unet_act4(&r, &buf[0], B, hmax, 1, 1));
    SDX__UNET_DO(sdx__unet_act4(&r, &buf[1], B, hmax, 1, 1));
    SDX__UNET_DO(sdx__unet_embed(&r, &emb, timesteps, y, r.compute));
    r.emb = &emb;
    SDX__UNET_DO(sdx__cn_hint_forward(&r, cn, hint, &g));

    r.block = "input_blocks";
    prev = *x;
    for (int n = 0; n < u->n_in; n++) {
        h = sdx__view4(u->act_type, buf[n & 1].data, B, u->in[n].cout, sh[n], sw[n]);
        h.device = buf[n & 1].device;
        r.block_index = n;
        SDX__UNET_DO(sdx__unet_block_forward(&r, &u->in[n], &h, &prev));
        if (n == 0) SDX__UNET_DO(sdx__add(ctx, &h, &h, &g));
        sdx__trace_at(ctx, SDX__PART_CONTROLNET, "zero_convs.%d", n);
        SDX__UNET_DO(sdx__cn_residual(&r, &h, cn->zero_w[n], cn->zero_b[n], strength, &ctl->skip[n], accumulate));
        prev = h;
    }
    h = sdx__view4(u->act_type, buf[u->n_in & 1].data, B, u->mid.cout, sh[u->n_in - 1], sw[u->n_in - 1]);
    h.device = buf[u->n_in & 1].device;
    r.block = "middle_block";
    r.block_index = -1;
    if (u->mid.n_layers) SDX__UNET_DO(sdx__unet_block_forward(&r, &u->mid, &h, &prev));
    else SDX__UNET_DO(sdx__copy(ctx, &h, &prev));
    sdx__trace_at(ctx, SDX__PART_CONTROLNET, "middle_block_out");
    SDX__UNET_DO(sdx__cn_residual(&r, &h, cn->mid_w, cn->mid_b, strength, &ctl->mid, accumulate));
done:
    sdx__arena_release(a, m0);
    return rc;
}

/* One ControlNet call's arguments, for sdx__graph_call. */
typedef struct {
    sdx_ctx *ctx; sdx__controlnet *cn; sdx__arena *a;
    const sdx_tensor *x; const float *timesteps; const sdx_tensor *context, *y, *hint;
    float strength; sdx__unet_control *ctl; int accumulate;
} sdx__controlnet_call;

static int sdx__controlnet_call_run(void *arg) {
    const sdx__controlnet_call *c = (const sdx__controlnet_call *)arg;
    return sdx__controlnet_forward(c->ctx, c->cn, c->a, c->x, c->timesteps, c->context, c->y, c->hint, c->strength, c->ctl,
                                   c->accumulate);
}

/* sdx__controlnet_forward for the index-th ControlNet of a generation: on
 * a backend with graphs the first SDX__GRAPH_CONTROLNETS get a slot each,
 * recorded once and replayed while their ops stay the same
 * (sdx__graph_call); more run op by op. */
static int sdx__controlnet_forward_at(sdx_ctx *ctx, int index, sdx__controlnet *cn, sdx__arena *a, const sdx_tensor *x,
                                      const float *timesteps, const sdx_tensor *context, const sdx_tensor *y, const sdx_tensor *hint,
                                      float strength, sdx__unet_control *ctl, int accumulate) {
    sdx__controlnet_call c;
    c.ctx = ctx; c.cn = cn; c.a = a; c.x = x; c.timesteps = timesteps; c.context = context; c.y = y; c.hint = hint;
    c.strength = strength; c.ctl = ctl; c.accumulate = accumulate;
    if (index >= SDX__GRAPH_CONTROLNETS) return sdx__controlnet_call_run(&c);
    return sdx__graph_call(ctx, SDX__GRAPH_CONTROLNET + index, sdx__controlnet_call_run, &c);
}

/* ---- the control picture --------------------------------------------------- */

/* ComfyUI's common_upscale(hint, W, H, "nearest-exact", "center") of an
 * 8-bit picture: centre crop to the target aspect (IEEE double, Python's
 * round half to even), then torch's nearest-exact sampling, source index
 * min(floor((dst + 0.5) * (float)(in / out)), in - 1). Values stay
 * u8 / 255 (f32). Grey pictures count as RGB with equal channels.
 * out: [channels_out, H, W]. */
static void sdx__control_hint(const uint8_t *px, int iw, int ih, int channels, int W, int H, int channels_out, float *out) {
    double old_aspect = (double)iw / (double)ih, new_aspect = (double)W / (double)H;
    int x0 = 0, y0 = 0, cw, ch;
    float sx, sy;
    if (old_aspect > new_aspect) x0 = (int)nearbyint(((double)iw - (double)iw * (new_aspect / old_aspect)) / 2.0);
    else if (old_aspect < new_aspect) y0 = (int)nearbyint(((double)ih - (double)ih * (old_aspect / new_aspect)) / 2.0);
    cw = iw - 2 * x0;
    ch = ih - 2 * y0;
    sx = (float)cw / (float)W;
    sy = (float)ch / (float)H;
    for (int y = 0; y < H; y++) {
        int syi = (int)floorf((float)(((double)y + 0.5) * (double)sy));
        if (syi > ch - 1) syi = ch - 1;
        for (int x = 0; x < W; x++) {
            int sxi = (int)floorf((float)(((double)x + 0.5) * (double)sx));
            const uint8_t *p;
            if (sxi > cw - 1) sxi = cw - 1;
            p = px + ((size_t)(y0 + syi) * (size_t)iw + (size_t)(x0 + sxi)) * (size_t)channels;
            for (int c = 0; c < channels_out; c++)
                out[((size_t)c * (size_t)H + (size_t)y) * (size_t)W + (size_t)x] = (float)p[c < channels ? c : channels - 1] / 255.0f;
        }
    }
}

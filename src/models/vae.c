#pragma once
#include "../core/safetensors.c"
#include "../core/ops.c"

/* ===================================================================== */
/*  VAE: the LDM AutoencoderKL (SD 1.x / 2.x / SDXL) encoder and decoder, */
/*  tiled encode/decode for images whose activations exceed a budget      */
/* ===================================================================== */

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

#define SDX__VAE_MAX_LEVELS 6
#define SDX__VAE_MAX_BLOCKS 6
#define SDX__VAE_GROUPS     32
#define SDX__VAE_EPS        1e-6f
/* SD 1.x/2.x/SDXL UNets all take 4-channel latents; a 16-channel VAE
 * (SD3, Flux) cannot pair with them. */
#define SDX__VAE_LATENT_CHANNELS 4

typedef enum sdx__vae_layout { SDX__VAE_LDM = 0, SDX__VAE_DIFFUSERS = 1 } sdx__vae_layout;

typedef struct sdx__vae_res {
    const sdx_tensor *norm1_w, *norm1_b, *conv1_w, *conv1_b;
    const sdx_tensor *norm2_w, *norm2_b, *conv2_w, *conv2_b;
    const sdx_tensor *skip_w, *skip_b;      /* 1x1 conv when channels change, else NULL */
    int cin, cout;
} sdx__vae_res;

/* Single-head self-attention over H*W with 1x1-conv (or linear) q/k/v/proj. */
typedef struct sdx__vae_attn {
    const sdx_tensor *norm_w, *norm_b;
    const sdx_tensor *q_w, *q_b, *k_w, *k_b, *v_w, *v_b, *proj_w, *proj_b;
    int c;
} sdx__vae_attn;

typedef struct sdx__vae_level {
    int ch;                                  /* channels of the level's ResBlocks */
    int n_blocks;
    int has_attn;                            /* attention after each ResBlock */
    sdx__vae_res  res[SDX__VAE_MAX_BLOCKS];
    sdx__vae_attn attn[SDX__VAE_MAX_BLOCKS];
    const sdx_tensor *resample_w, *resample_b;  /* Up/Downsample conv; NULL where none */
} sdx__vae_level;

/* Encoder or decoder. Levels use the LDM index: level 0 runs at full
 * image resolution (the decoder visits them from n_levels-1 down to 0). */
typedef struct sdx__vae_coder {
    const sdx_tensor *conv_in_w, *conv_in_b, *norm_out_w, *norm_out_b, *conv_out_w, *conv_out_b;
    int n_levels;
    sdx__vae_level level[SDX__VAE_MAX_LEVELS];
    sdx__vae_res mid1, mid2;
    sdx__vae_attn mid_attn;
    int has_mid_attn;
} sdx__vae_coder;

typedef struct sdx__vae {
    sdx__wset w;
    sdx__vae_layout layout;
    int act_type;            /* activation storage; SDX_VAE_ACT_TYPE unless overridden */
    int compute_type;        /* GEMM arithmetic; SDX_VAE_COMPUTE_TYPE unless overridden */
    /* hyperparameters read from the file (decoder side) */
    int ch, n_levels, ch_mult[SDX__VAE_MAX_LEVELS], num_res_blocks;
    int z_channels;          /* decoder conv_in input */
    int latent_channels;     /* what the UNet sees: post_quant_conv input */
    int has_mid_attn;
    int factor;              /* image pixels per latent pixel, 2^(n_levels-1) */
    int has_encoder;
    const sdx_tensor *quant_w, *quant_b;            /* NULL when the file has none */
    const sdx_tensor *post_quant_w, *post_quant_b;
    sdx__vae_coder enc, dec;
    size_t tiled_plane_peak; /* host bytes the last tiled pass held in planes */
    int low_memory;          /* 1: a tiled pass gives each stage's weight pages back after it */
} sdx__vae;

typedef struct sdx__vae_tiling {
    int mode;              /* 0 auto, 1 force on, -1 off */
    int tile_h, tile_w;    /* largest tile in latent pixels; 0 = choose from the budget */
    size_t budget_bytes;   /* auto: tile when a full pass needs more; 0 = SDX_VAE_TILE_BUDGET */
} sdx__vae_tiling;

/* ---- key names ------------------------------------------------------ */
/* Names are built in the LDM scheme and translated for diffusers files,
 * whose up_blocks are numbered from the lowest resolution. */

static void sdx__vae_res_base(const sdx__vae *v, char *buf, size_t size, int dec, int level, int block) {
    if (v->layout == SDX__VAE_LDM)
        snprintf(buf, size, dec ? "decoder.up.%d.block.%d" : "encoder.down.%d.block.%d", level, block);
    else if (dec)
        snprintf(buf, size, "decoder.up_blocks.%d.resnets.%d", v->dec.n_levels - 1 - level, block);
    else
        snprintf(buf, size, "encoder.down_blocks.%d.resnets.%d", level, block);
}

static void sdx__vae_mid_base(const sdx__vae *v, char *buf, size_t size, int dec, int which /* 1, 2 */) {
    const char *coder = dec ? "decoder" : "encoder";
    if (v->layout == SDX__VAE_LDM) snprintf(buf, size, "%s.mid.block_%d", coder, which);
    else snprintf(buf, size, "%s.mid_block.resnets.%d", coder, which - 1);
}

static void sdx__vae_resample_name(const sdx__vae *v, char *buf, size_t size, int dec, int level) {
    if (v->layout == SDX__VAE_LDM)
        snprintf(buf, size, dec ? "decoder.up.%d.upsample.conv" : "encoder.down.%d.downsample.conv", level);
    else if (dec)
        snprintf(buf, size, "decoder.up_blocks.%d.upsamplers.0.conv", v->dec.n_levels - 1 - level);
    else
        snprintf(buf, size, "encoder.down_blocks.%d.downsamplers.0.conv", level);
}

/* ---- loading -------------------------------------------------------- */

static int sdx__vae_fail_groups(sdx__vae *v, const char *name, int c) {
    return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: tensor '%s%s' has %d channels; VAE GroupNorm(%d) needs a multiple of %d",
                     sdx_st_path(v->w.st), v->w.prefix, name, c, SDX__VAE_GROUPS, SDX__VAE_GROUPS);
}

static int sdx__vae_load_res(sdx__vae *v, sdx__vae_res *r, const char *base, int cin, int cout) {
    sdx__wset *w = &v->w;
    const char *skip = v->layout == SDX__VAE_LDM ? "nin_shortcut" : "conv_shortcut";
    r->cin = cin;
    r->cout = cout;
    if (cin % SDX__VAE_GROUPS) return sdx__vae_fail_groups(v, base, cin);
    if (cout % SDX__VAE_GROUPS) return sdx__vae_fail_groups(v, base, cout);
    if (!(r->norm1_w = sdx__wget(w, sdx__s1(cin), "%s.norm1.weight", base)) ||
        !(r->norm1_b = sdx__wget(w, sdx__s1(cin), "%s.norm1.bias", base)) ||
        !(r->conv1_w = sdx__wget(w, sdx__s4(cout, cin, 3, 3), "%s.conv1.weight", base)) ||
        !(r->conv1_b = sdx__wget(w, sdx__s1(cout), "%s.conv1.bias", base)) ||
        !(r->norm2_w = sdx__wget(w, sdx__s1(cout), "%s.norm2.weight", base)) ||
        !(r->norm2_b = sdx__wget(w, sdx__s1(cout), "%s.norm2.bias", base)) ||
        !(r->conv2_w = sdx__wget(w, sdx__s4(cout, cout, 3, 3), "%s.conv2.weight", base)) ||
        !(r->conv2_b = sdx__wget(w, sdx__s1(cout), "%s.conv2.bias", base)))
        return sdx__werr(w);
    r->skip_w = r->skip_b = NULL;
    if (cin != cout &&
        (!(r->skip_w = sdx__wget(w, sdx__s4(cout, cin, 1, 1), "%s.%s.weight", base, skip)) ||
         !(r->skip_b = sdx__wget(w, sdx__s1(cout), "%s.%s.bias", base, skip))))
        return sdx__werr(w);
    return SDX_OK;
}

/* A q/k/v/proj weight: a 1x1 conv [C, C, 1, 1] (LDM) or a linear [C, C]
 * (diffusers, and LDM files converted from it). */
static const sdx_tensor *sdx__vae_attn_mat(sdx__vae *v, const char *base, const char *name, int c) {
    sdx__wset *w = &v->w;
    const sdx_tensor *t = sdx__wget_any(w, "%s.%s.weight", base, name);
    if (!t) return NULL;
    if ((t->ndim == 4 && t->shape[0] == c && t->shape[1] == c && t->shape[2] == 1 && t->shape[3] == 1) ||
        (t->ndim == 2 && t->shape[0] == c && t->shape[1] == c))
        return t;
    {
        char found[96];
        sdx__fail(w->ctx, SDX_ERR_MODEL, "%s: tensor '%s%s.%s.weight': expected shape [%d, %d, 1, 1] or [%d, %d], found %s",
                  sdx_st_path(w->st), w->prefix, base, name, c, c, c, c, sdx_shape_str(t, found, sizeof found));
    }
    return NULL;
}

static int sdx__vae_load_attn(sdx__vae *v, sdx__vae_attn *a, const char *base, int c) {
    sdx__wset *w = &v->w;
    /* LDM names, diffusers names, and the older diffusers names */
    static const char *const names[3][5] = {
        { "norm", "q", "k", "v", "proj_out" },
        { "group_norm", "to_q", "to_k", "to_v", "to_out.0" },
        { "group_norm", "query", "key", "value", "proj_attn" },
    };
    int s = 0;
    if (v->layout == SDX__VAE_DIFFUSERS) s = sdx__whas(w, "%s.to_q.weight", base) ? 1 : 2;
    a->c = c;
    if (!(a->norm_w = sdx__wget(w, sdx__s1(c), "%s.%s.weight", base, names[s][0])) ||
        !(a->norm_b = sdx__wget(w, sdx__s1(c), "%s.%s.bias", base, names[s][0])) ||
        !(a->q_w = sdx__vae_attn_mat(v, base, names[s][1], c)) ||
        !(a->q_b = sdx__wget(w, sdx__s1(c), "%s.%s.bias", base, names[s][1])) ||
        !(a->k_w = sdx__vae_attn_mat(v, base, names[s][2], c)) ||
        !(a->k_b = sdx__wget(w, sdx__s1(c), "%s.%s.bias", base, names[s][2])) ||
        !(a->v_w = sdx__vae_attn_mat(v, base, names[s][3], c)) ||
        !(a->v_b = sdx__wget(w, sdx__s1(c), "%s.%s.bias", base, names[s][3])) ||
        !(a->proj_w = sdx__vae_attn_mat(v, base, names[s][4], c)) ||
        !(a->proj_b = sdx__wget(w, sdx__s1(c), "%s.%s.bias", base, names[s][4])))
        return sdx__werr(w);
    return SDX_OK;
}

static int sdx__vae_load_mid(sdx__vae *v, sdx__vae_coder *cd, int dec, int c) {
    char base[128];
    int rc;
    const char *coder = dec ? "decoder" : "encoder";
    sdx__vae_mid_base(v, base, sizeof base, dec, 1);
    if ((rc = sdx__vae_load_res(v, &cd->mid1, base, c, c)) != SDX_OK) return rc;
    sdx__vae_mid_base(v, base, sizeof base, dec, 2);
    if ((rc = sdx__vae_load_res(v, &cd->mid2, base, c, c)) != SDX_OK) return rc;
    if (v->layout == SDX__VAE_LDM) snprintf(base, sizeof base, "%s.mid.attn_1", coder);
    else snprintf(base, sizeof base, "%s.mid_block.attentions.0", coder);
    cd->has_mid_attn = sdx__whas(&v->w, "%s.%s.weight", base, v->layout == SDX__VAE_LDM ? "norm" : "group_norm");
    return cd->has_mid_attn ? sdx__vae_load_attn(v, &cd->mid_attn, base, c) : SDX_OK;
}

/* Counts levels (or blocks) by probing names until one is missing. */
static int sdx__vae_count_levels(sdx__vae *v, int dec) {
    int n = 0;
    while (n <= SDX__VAE_MAX_LEVELS) {
        int has;
        if (v->layout == SDX__VAE_LDM)
            has = sdx__whas(&v->w, dec ? "decoder.up.%d.block.0.conv1.weight" : "encoder.down.%d.block.0.conv1.weight", n);
        else
            has = sdx__whas(&v->w, dec ? "decoder.up_blocks.%d.resnets.0.conv1.weight"
                                       : "encoder.down_blocks.%d.resnets.0.conv1.weight", n);
        if (!has) break;
        n++;
    }
    return n;
}

static int sdx__vae_count_blocks(sdx__vae *v, int dec, int level) {
    char base[128];
    int n = 0;
    while (n <= SDX__VAE_MAX_BLOCKS) {
        sdx__vae_res_base(v, base, sizeof base, dec, level, n);
        if (!sdx__whas(&v->w, "%s.conv1.weight", base)) break;
        n++;
    }
    return n;
}

/* Reads the channel count of a level from its first ResBlock's conv1
 * (the file tensor: probing must not convert weights). */
static int sdx__vae_level_channels(sdx__vae *v, int dec, int level, int *ch) {
    char base[128], name[288];
    const sdx_tensor *t;
    sdx__vae_res_base(v, base, sizeof base, dec, level, 0);
    snprintf(name, sizeof name, "%s%s.conv1.weight", v->w.prefix, base);
    if (!(t = sdx_st_find(v->w.st, name)))
        return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: missing tensor '%s' (vae)", sdx_st_path(v->w.st), name);
    if (t->ndim != 4 || t->shape[0] <= 0 || t->shape[0] > (1 << 16))
        return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: tensor '%s%s.conv1.weight' is not a conv weight", sdx_st_path(v->w.st),
                         v->w.prefix, base);
    *ch = (int)t->shape[0];
    return SDX_OK;
}

/* Loads levels, mid block and the outer convs of the encoder or decoder.
 * `ch_in` is the channel count entering the first level visited. */
static int sdx__vae_load_levels(sdx__vae *v, sdx__vae_coder *cd, int dec, int ch_in) {
    char base[128];
    int rc, prev = ch_in, n = cd->n_levels;
    for (int k = 0; k < n; k++) {
        int i = dec ? n - 1 - k : k;
        sdx__vae_level *lv = &cd->level[i];
        lv->n_blocks = sdx__vae_count_blocks(v, dec, i);
        if (lv->n_blocks < 1 || lv->n_blocks > SDX__VAE_MAX_BLOCKS) {
            sdx__vae_res_base(v, base, sizeof base, dec, i, 0);
            return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: VAE level '%s%s' has %d ResBlocks; 1..%d supported",
                             sdx_st_path(v->w.st), v->w.prefix, base, lv->n_blocks, SDX__VAE_MAX_BLOCKS);
        }
        if ((rc = sdx__vae_level_channels(v, dec, i, &lv->ch)) != SDX_OK) return rc;
        for (int j = 0; j < lv->n_blocks; j++) {
            sdx__vae_res_base(v, base, sizeof base, dec, i, j);
            if ((rc = sdx__vae_load_res(v, &lv->res[j], base, j ? lv->ch : prev, lv->ch)) != SDX_OK) return rc;
        }
        lv->has_attn = v->layout == SDX__VAE_LDM &&
                       sdx__whas(&v->w, dec ? "decoder.up.%d.attn.0.norm.weight" : "encoder.down.%d.attn.0.norm.weight", i);
        for (int j = 0; lv->has_attn && j < lv->n_blocks; j++) {
            snprintf(base, sizeof base, dec ? "decoder.up.%d.attn.%d" : "encoder.down.%d.attn.%d", i, j);
            if ((rc = sdx__vae_load_attn(v, &lv->attn[j], base, lv->ch)) != SDX_OK) return rc;
        }
        /* the decoder upsamples after every level but 0; the encoder
         * downsamples after every level but the last */
        if (dec ? i > 0 : i < n - 1) {
            sdx__vae_resample_name(v, base, sizeof base, dec, i);
            if (!(lv->resample_w = sdx__wget(&v->w, sdx__s4(lv->ch, lv->ch, 3, 3), "%s.weight", base)) ||
                !(lv->resample_b = sdx__wget(&v->w, sdx__s1(lv->ch), "%s.bias", base)))
                return sdx__werr(&v->w);
        }
        prev = lv->ch;
    }
    return SDX_OK;
}

static int sdx__vae_load_outer(sdx__vae *v, sdx__vae_coder *cd, int dec, int out_channels) {
    const char *coder = dec ? "decoder" : "encoder";
    const char *norm = v->layout == SDX__VAE_LDM ? "norm_out" : "conv_norm_out";
    int c = cd->level[dec ? 0 : cd->n_levels - 1].ch;
    if (!(cd->norm_out_w = sdx__wget(&v->w, sdx__s1(c), "%s.%s.weight", coder, norm)) ||
        !(cd->norm_out_b = sdx__wget(&v->w, sdx__s1(c), "%s.%s.bias", coder, norm)) ||
        !(cd->conv_out_w = sdx__wget(&v->w, sdx__s4(out_channels, c, 3, 3), "%s.conv_out.weight", coder)) ||
        !(cd->conv_out_b = sdx__wget(&v->w, sdx__s1(out_channels), "%s.conv_out.bias", coder)))
        return sdx__werr(&v->w);
    return SDX_OK;
}

static int sdx__vae_load_decoder(sdx__vae *v) {
    sdx__vae_coder *d = &v->dec;
    const sdx_tensor *t;
    int rc, top;
    d->n_levels = sdx__vae_count_levels(v, 1);
    if (d->n_levels < 1 || d->n_levels > SDX__VAE_MAX_LEVELS)
        return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: VAE decoder has %d up levels under '%sdecoder.'; 1..%d supported",
                         sdx_st_path(v->w.st), d->n_levels, v->w.prefix, SDX__VAE_MAX_LEVELS);
    if ((rc = sdx__vae_level_channels(v, 1, d->n_levels - 1, &top)) != SDX_OK) return rc;
    if (!(t = sdx__wget(&v->w, sdx__s4(top, -1, 3, 3), "decoder.conv_in.weight"))) return sdx__werr(&v->w);
    d->conv_in_w = t;
    v->z_channels = (int)t->shape[1];
    if (!(d->conv_in_b = sdx__wget(&v->w, sdx__s1(top), "decoder.conv_in.bias"))) return sdx__werr(&v->w);
    if ((rc = sdx__vae_load_mid(v, d, 1, top)) != SDX_OK) return rc;
    if ((rc = sdx__vae_load_levels(v, d, 1, top)) != SDX_OK) return rc;
    return sdx__vae_load_outer(v, d, 1, 3);
}

static int sdx__vae_load_encoder(sdx__vae *v) {
    sdx__vae_coder *e = &v->enc;
    const sdx_tensor *t;
    int rc, c0, zc2 = 2 * v->z_channels;
    e->n_levels = sdx__vae_count_levels(v, 0);
    if (e->n_levels < 1 || e->n_levels > SDX__VAE_MAX_LEVELS)
        return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: VAE encoder has %d down levels under '%sencoder.'; 1..%d supported",
                         sdx_st_path(v->w.st), e->n_levels, v->w.prefix, SDX__VAE_MAX_LEVELS);
    if (e->n_levels != v->dec.n_levels)
        return sdx__fail(v->w.ctx, SDX_ERR_MODEL, "%s: VAE encoder has %d levels but the decoder %d (prefix '%s')",
                         sdx_st_path(v->w.st), e->n_levels, v->dec.n_levels, v->w.prefix);
    if (!(t = sdx__wget(&v->w, sdx__s4(-1, 3, 3, 3), "encoder.conv_in.weight"))) return sdx__werr(&v->w);
    e->conv_in_w = t;
    c0 = (int)t->shape[0];
    if (!(e->conv_in_b = sdx__wget(&v->w, sdx__s1(c0), "encoder.conv_in.bias"))) return sdx__werr(&v->w);
    if ((rc = sdx__vae_load_levels(v, e, 0, c0)) != SDX_OK) return rc;
    if ((rc = sdx__vae_load_mid(v, e, 0, e->level[e->n_levels - 1].ch)) != SDX_OK) return rc;
    /* double_z: conv_out produces mean and logvar */
    if ((rc = sdx__vae_load_outer(v, e, 0, zc2)) != SDX_OK) return rc;
    if (v->post_quant_w) {
        if (!(v->quant_w = sdx__wget(&v->w, sdx__s4(2 * v->latent_channels, zc2, 1, 1), "quant_conv.weight")) ||
            !(v->quant_b = sdx__wget(&v->w, sdx__s1(2 * v->latent_channels), "quant_conv.bias")))
            return sdx__werr(&v->w);
    }
    return SDX_OK;
}

/* Finds the VAE inside `file`: tries `prefix` (when given), then
 * "first_stage_model." (a checkpoint) and "" (a standalone VAE file), in
 * the LDM layout and the diffusers layout. Returns the prefix or NULL. */
static const char *sdx__vae_detect(const sdx_st *file, const char *prefix, sdx__vae_layout *layout) {
    static const char *const known[2] = { "first_stage_model.", "" };
    static const char *const probe[2] = { "decoder.mid.block_1.conv1.weight", "decoder.mid_block.resnets.0.conv1.weight" };
    char name[256];
    for (int i = -1; i < 2; i++) {
        const char *p = i < 0 ? prefix : known[i];
        if (!p) continue;
        for (int l = 0; l < 2; l++) {
            snprintf(name, sizeof name, "%s%s", p, probe[l]);
            if (sdx_st_find(file, name)) { *layout = (sdx__vae_layout)l; return p; }
        }
    }
    return NULL;
}

static void sdx__vae_free(sdx__vae *v) {
    if (v->w.ctx) sdx__wset_free(&v->w);
    memset(v, 0, sizeof *v);
}

static int sdx__vae_load_parts(sdx__vae *v) {
    sdx__wset *w = &v->w;
    int rc;
    if (sdx__whas(w, "post_quant_conv.weight")) {
        const sdx_tensor *t;
        if (!(t = sdx__wget(w, sdx__s4(v->z_channels, -1, 1, 1), "post_quant_conv.weight"))) return sdx__werr(w);
        v->post_quant_w = t;
        v->latent_channels = (int)t->shape[1];
        if (!(v->post_quant_b = sdx__wget(w, sdx__s1(v->z_channels), "post_quant_conv.bias"))) return sdx__werr(w);
    } else {
        v->latent_channels = v->z_channels;
    }
    if (v->latent_channels != SDX__VAE_LATENT_CHANNELS)
        return sdx__fail(w->ctx, SDX_ERR_MODEL,
                         "%s: VAE latent has %d channels (tensor '%s%s') but SD 1.x/2.x/SDXL UNets use %d; "
                         "this VAE belongs to another model family",
                         sdx_st_path(w->st), v->latent_channels, w->prefix,
                         v->post_quant_w ? "post_quant_conv.weight" : "decoder.conv_in.weight", SDX__VAE_LATENT_CHANNELS);
    v->has_encoder = sdx__whas(w, "encoder.conv_in.weight");
    if (v->has_encoder && (rc = sdx__vae_load_encoder(v)) != SDX_OK) return rc;
    return SDX_OK;
}

/* Loads the VAE of `file`. prefix: "first_stage_model." inside a
 * checkpoint, "" for a standalone VAE file, or NULL to detect either.
 * Hyperparameters come from tensor shapes; a file without an encoder is
 * accepted (decode only, has_encoder = 0). The file must stay open while
 * the VAE is used; free with sdx__vae_free. */
static int sdx__vae_load(sdx_ctx *ctx, sdx__vae *v, const sdx_st *file, const char *prefix) {
    sdx__vae_layout layout = SDX__VAE_LDM;
    const char *found = sdx__vae_detect(file, prefix, &layout);
    int rc;
    memset(v, 0, sizeof *v);
    if (!found)
        return sdx__fail(ctx, SDX_ERR_MODEL,
                         "%s: no VAE decoder found: no 'decoder.mid.block_1.conv1.weight' (LDM) or "
                         "'decoder.mid_block.resnets.0.conv1.weight' (diffusers) under the prefix%s%s%s "
                         "'first_stage_model.' or ''",
                         sdx_st_path(file), prefix ? " '" : "", prefix ? prefix : "", prefix ? "'," : "es");
    sdx__wset_init(&v->w, ctx, file, found, SDX__PART_VAE, SDX_VAE_WEIGHT_TYPE);
    v->layout = layout;
    v->act_type = SDX_VAE_ACT_TYPE;
    v->compute_type = SDX_VAE_COMPUTE_TYPE;
    if ((rc = sdx__vae_load_decoder(v)) != SDX_OK || (rc = sdx__vae_load_parts(v)) != SDX_OK) {
        sdx__vae_free(v);
        return rc;
    }
    v->n_levels = v->dec.n_levels;
    v->ch = v->dec.level[0].ch;
    v->num_res_blocks = v->dec.level[0].n_blocks - 1;
    for (int i = 0; i < v->n_levels; i++) v->ch_mult[i] = v->dec.level[i].ch / (v->ch ? v->ch : 1);
    v->has_mid_attn = v->dec.has_mid_attn;
    v->factor = 1 << (v->n_levels - 1);
    sdx__log(ctx, SDX_LOG_INFO, "%s: VAE (%s layout, prefix '%s'): ch %d, %d levels, %d res blocks, z %d, mid attention %s, %s",
             sdx_st_path(file), layout == SDX__VAE_LDM ? "LDM" : "diffusers", found, v->ch, v->n_levels,
             v->num_res_blocks, v->z_channels, v->has_mid_attn ? "yes" : "no",
             v->has_encoder ? "encoder and decoder" : "decoder only");
    return SDX_OK;
}

/* ---- forward pass ----------------------------------------------------- */
/* Activations live in two "slots" sized for the largest activation of the
 * pass; each stage reads one slot and writes the other, so only two full
 * tensors plus one stage's temporaries are alive at any time. The same
 * walk runs first in "dry" mode, which only follows shapes to size the
 * slots: that is also the memory estimate auto tiling uses. */

/* Names the running layer for the tracer (not in dry runs: no context). */
#define SDX__VAE_TRACE(r, ...) do { if (!(r)->dry) sdx__trace_at((r)->ctx, SDX__PART_VAE, __VA_ARGS__); } while (0)

typedef struct sdx__vae_run {
    sdx_ctx *ctx;
    sdx__arena *arena;
    sdx_dtype act;
    int dry;
    int64_t max_act, max_tmp;   /* elements (dry mode) */
    void *slot[2];
    int cur;                    /* slot holding x (x may also be a caller tensor) */
    sdx_tensor x;               /* the current activation */
    sdx_dtype compute;          /* the arithmetic: the VAE's compute_type */
} sdx__vae_run;

static void sdx__vae_run_init(sdx__vae_run *r, sdx_ctx *ctx, sdx__arena *arena, sdx_dtype act, int dry) {
    memset(r, 0, sizeof *r);
    r->ctx = ctx;
    r->arena = arena;
    r->act = act;
    r->dry = dry;
    r->cur = 1;   /* the first output goes to slot 0 */
}

static sdx_tensor sdx__vae_in_slot(sdx__vae_run *r, int slot, int64_t c, int64_t h, int64_t w) {
    int64_t n = c * h * w;
    if (n > r->max_act) r->max_act = n;
    sdx_tensor t = sdx__view4(r->act, r->slot[slot], 1, c, h, w);
    t.device = r->arena && r->arena->device;
    return t;
}

static int sdx__vae_tmp(sdx__vae_run *r, sdx_tensor *t, int64_t c, int64_t h, int64_t w) {
    return sdx__arena_tensor4(r->arena, t, r->act, 1, c, h, w) ? SDX_OK : SDX_ERR_NOMEM;
}

static int sdx__vae_conv(sdx__vae_run *r, const sdx_tensor *w, const sdx_tensor *b, int pad) {
    int64_t k = w->shape[2];
    int64_t h = r->x.shape[2] + 2 * pad - k + 1, wd = r->x.shape[3] + 2 * pad - k + 1;
    sdx_tensor y = sdx__vae_in_slot(r, 1 - r->cur, w->shape[0], h, wd);
    int rc = r->dry ? SDX_OK : sdx__conv2d(r->ctx, &y, &r->x, w, b, 1, pad, r->compute);
    r->cur = 1 - r->cur;
    r->x = y;
    return rc;
}

/* ldm Downsample: pad right and bottom by one, 3x3 conv with stride 2. */
static int sdx__vae_downsample(sdx__vae_run *r, const sdx_tensor *w, const sdx_tensor *b) {
    int64_t h = (r->x.shape[2] - 2) / 2 + 1, wd = (r->x.shape[3] - 2) / 2 + 1;
    sdx_tensor y = sdx__vae_in_slot(r, 1 - r->cur, w->shape[0], h, wd);
    int rc = r->dry ? SDX_OK : sdx__conv2d_pad(r->ctx, &y, &r->x, w, b, 2, 0, 0, 1, 1, r->compute);
    r->cur = 1 - r->cur;
    r->x = y;
    return rc;
}

/* ldm Upsample: nearest 2x into the other slot, conv back into this one. */
static int sdx__vae_upsample(sdx__vae_run *r, const sdx_tensor *w, const sdx_tensor *b) {
    int64_t c = r->x.shape[1], h = 2 * r->x.shape[2], wd = 2 * r->x.shape[3];
    sdx_tensor u = sdx__vae_in_slot(r, 1 - r->cur, c, h, wd);
    sdx_tensor y = sdx__vae_in_slot(r, r->cur, w->shape[0], h, wd);
    int rc = SDX_OK;
    if (!r->dry && (rc = sdx__upsample2x(r->ctx, &u, &r->x)) == SDX_OK) rc = sdx__conv2d(r->ctx, &y, &u, w, b, 1, 1, r->compute);
    r->x = y;
    return rc;
}

/* y = shortcut(x) + conv2(silu(gn2(conv1(silu(gn1(x)))))). x's slot is
 * reused for the temporaries once the shortcut has been taken, so the
 * block needs one temporary of the output size beyond the two slots. */
static int sdx__vae_res_fwd(sdx__vae_run *r, const sdx__vae_res *b) {
    int64_t h = r->x.shape[2], w = r->x.shape[3];
    sdx_tensor y = sdx__vae_in_slot(r, 1 - r->cur, b->cout, h, w);
    sdx_tensor inner = sdx__vae_in_slot(r, r->cur, b->cout, h, w);
    sdx_tensor t;
    sdx__mark m;
    sdx_ctx *ctx = r->ctx;
    int rc;
    if (r->dry) {
        if ((int64_t)b->cout * h * w > r->max_tmp) r->max_tmp = (int64_t)b->cout * h * w;
        goto done;
    }
    m = sdx__arena_mark(r->arena);
    if (b->skip_w) rc = sdx__conv2d(ctx, &y, &r->x, b->skip_w, b->skip_b, 1, 0, r->compute);
    else rc = sdx__copy(ctx, &y, &r->x);
    if (rc == SDX_OK) rc = sdx__group_norm(ctx, &r->x, &r->x, SDX__VAE_GROUPS, SDX__VAE_EPS, b->norm1_w, b->norm1_b, 1, r->compute);
    if (rc == SDX_OK) rc = sdx__vae_tmp(r, &t, b->cout, h, w);
    if (rc == SDX_OK) rc = sdx__conv2d(ctx, &t, &r->x, b->conv1_w, b->conv1_b, 1, 1, r->compute);
    if (rc == SDX_OK) rc = sdx__group_norm(ctx, &t, &t, SDX__VAE_GROUPS, SDX__VAE_EPS, b->norm2_w, b->norm2_b, 1, r->compute);
    if (rc == SDX_OK) rc = sdx__conv2d(ctx, &inner, &t, b->conv2_w, b->conv2_b, 1, 1, r->compute);
    if (rc == SDX_OK) rc = sdx__add(ctx, &y, &y, &inner);
    sdx__arena_release(r->arena, m);
    if (rc != SDX_OK) return rc;
done:
    r->cur = 1 - r->cur;
    r->x = y;
    return SDX_OK;
}

/* A [C, C, 1, 1] or [C, C] weight as the [C, C] matrix sdx__linear takes. */
static sdx_tensor sdx__vae_mat(const sdx_tensor *w) {
    sdx_tensor m = *w;
    m.ndim = 2;
    m.shape[2] = m.shape[3] = 0;
    return m;
}

/* x += proj(softmax(q k^T / sqrt(C)) v), q/k/v from gn(x); in place. */
static int sdx__vae_attn_fwd(sdx__vae_run *r, const sdx__vae_attn *a) {
    int64_t c = r->x.shape[1], h = r->x.shape[2], w = r->x.shape[3], n = h * w;
    sdx_tensor hn, t, q, k, v, o;
    sdx_tensor wq = sdx__vae_mat(a->q_w), wk = sdx__vae_mat(a->k_w), wv = sdx__vae_mat(a->v_w), wp = sdx__vae_mat(a->proj_w);
    sdx_ctx *ctx = r->ctx;
    sdx__mark m;
    int rc = SDX_OK;
    if (r->dry) {
        if (6 * c * n > r->max_tmp) r->max_tmp = 6 * c * n;
        return SDX_OK;
    }
    m = sdx__arena_mark(r->arena);
    if (sdx__vae_tmp(r, &hn, c, h, w) != SDX_OK || !sdx__arena_tensor3(r->arena, &t, r->act, 1, n, c) ||
        !sdx__arena_tensor3(r->arena, &q, r->act, 1, n, c) || !sdx__arena_tensor3(r->arena, &k, r->act, 1, n, c) ||
        !sdx__arena_tensor3(r->arena, &v, r->act, 1, n, c) || !sdx__arena_tensor3(r->arena, &o, r->act, 1, n, c))
        rc = SDX_ERR_NOMEM;
    if (rc == SDX_OK) rc = sdx__group_norm(ctx, &hn, &r->x, SDX__VAE_GROUPS, SDX__VAE_EPS, a->norm_w, a->norm_b, 0, r->compute);
    if (rc == SDX_OK) rc = sdx__nchw_to_nlc(ctx, &t, &hn);
    if (rc == SDX_OK) rc = sdx__linear(ctx, &q, &t, &wq, a->q_b, r->compute);
    if (rc == SDX_OK) rc = sdx__linear(ctx, &k, &t, &wk, a->k_b, r->compute);
    if (rc == SDX_OK) rc = sdx__linear(ctx, &v, &t, &wv, a->v_b, r->compute);
    if (rc == SDX_OK) rc = sdx__attention(ctx, &o, &q, &k, &v, 1, 0, r->compute);
    if (rc == SDX_OK) rc = sdx__linear(ctx, &q, &o, &wp, a->proj_b, r->compute);   /* q is free again */
    if (rc == SDX_OK) rc = sdx__nlc_to_nchw(ctx, &hn, &q);
    if (rc == SDX_OK) rc = sdx__add(ctx, &r->x, &r->x, &hn);
    sdx__arena_release(r->arena, m);
    return rc;
}

static int sdx__vae_mid_fwd(sdx__vae_run *r, const sdx__vae_coder *cd, const char *coder) {
    int rc;
    SDX__VAE_TRACE(r, "%s.mid.block_1", coder);
    if ((rc = sdx__vae_res_fwd(r, &cd->mid1)) != SDX_OK) return rc;
    if (cd->has_mid_attn) {
        SDX__VAE_TRACE(r, "%s.mid.attn_1", coder);
        if ((rc = sdx__vae_attn_fwd(r, &cd->mid_attn)) != SDX_OK) return rc;
    }
    SDX__VAE_TRACE(r, "%s.mid.block_2", coder);
    return sdx__vae_res_fwd(r, &cd->mid2);
}

static int sdx__vae_level_fwd(sdx__vae_run *r, const sdx__vae_level *lv, int dec, int i) {
    int rc;
    for (int j = 0; j < lv->n_blocks; j++) {
        SDX__VAE_TRACE(r, dec ? "decoder.up.%d.block.%d" : "encoder.down.%d.block.%d", i, j);
        if ((rc = sdx__vae_res_fwd(r, &lv->res[j])) != SDX_OK) return rc;
        if (lv->has_attn && (rc = sdx__vae_attn_fwd(r, &lv->attn[j])) != SDX_OK) return rc;
    }
    if (!lv->resample_w) return SDX_OK;
    SDX__VAE_TRACE(r, dec ? "decoder.up.%d.upsample" : "encoder.down.%d.downsample", i);
    return dec ? sdx__vae_upsample(r, lv->resample_w, lv->resample_b) : sdx__vae_downsample(r, lv->resample_w, lv->resample_b);
}

/* norm_out + SiLU in place, then conv_out into `out` (a caller tensor). */
static int sdx__vae_out_fwd(sdx__vae_run *r, const sdx__vae_coder *cd, sdx_tensor *out) {
    int rc;
    if (r->dry) return SDX_OK;
    rc = sdx__group_norm(r->ctx, &r->x, &r->x, SDX__VAE_GROUPS, SDX__VAE_EPS, cd->norm_out_w, cd->norm_out_b, 1, r->compute);
    return rc == SDX_OK ? sdx__conv2d(r->ctx, out, &r->x, cd->conv_out_w, cd->conv_out_b, 1, 1, r->compute) : rc;
}

/* The decoder up to and including its mid block (all at latent size). */
static int sdx__vae_decoder_head(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *z) {
    const sdx__vae_coder *d = &v->dec;
    int rc;
    r->x = *z;
    SDX__VAE_TRACE(r, "post_quant_conv");
    if (v->post_quant_w && (rc = sdx__vae_conv(r, v->post_quant_w, v->post_quant_b, 0)) != SDX_OK) return rc;
    SDX__VAE_TRACE(r, "decoder.conv_in");
    if ((rc = sdx__vae_conv(r, d->conv_in_w, d->conv_in_b, 1)) != SDX_OK) return rc;
    return sdx__vae_mid_fwd(r, d, "decoder");
}

static int sdx__vae_decoder_walk(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *z, sdx_tensor *image) {
    const sdx__vae_coder *d = &v->dec;
    int rc;
    if ((rc = sdx__vae_decoder_head(r, v, z)) != SDX_OK) return rc;
    for (int i = d->n_levels - 1; i >= 0; i--)
        if ((rc = sdx__vae_level_fwd(r, &d->level[i], 1, i)) != SDX_OK) return rc;
    SDX__VAE_TRACE(r, "decoder.conv_out");
    return sdx__vae_out_fwd(r, d, image);
}

static int sdx__vae_encoder_tail(sdx__vae_run *r, const sdx__vae *v, sdx_tensor *moments);

/* image -> moments [1, 2 * latent, h, w] (before the logvar clamp). */
static int sdx__vae_encoder_walk(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *image, sdx_tensor *moments) {
    const sdx__vae_coder *e = &v->enc;
    int rc;
    r->x = *image;
    SDX__VAE_TRACE(r, "encoder.conv_in");
    if ((rc = sdx__vae_conv(r, e->conv_in_w, e->conv_in_b, 1)) != SDX_OK) return rc;
    for (int i = 0; i < e->n_levels; i++)
        if ((rc = sdx__vae_level_fwd(r, &e->level[i], 0, i)) != SDX_OK) return rc;
    return sdx__vae_encoder_tail(r, v, moments);
}

/* The encoder from its mid block on (all at latent size): r->x -> moments. */
static int sdx__vae_encoder_tail(sdx__vae_run *r, const sdx__vae *v, sdx_tensor *moments) {
    const sdx__vae_coder *e = &v->enc;
    int rc;
    if ((rc = sdx__vae_mid_fwd(r, e, "encoder")) != SDX_OK) return rc;
    SDX__VAE_TRACE(r, "encoder.conv_out");
    if (!v->quant_w) return sdx__vae_out_fwd(r, e, moments);
    if (!r->dry) {
        rc = sdx__group_norm(r->ctx, &r->x, &r->x, SDX__VAE_GROUPS, SDX__VAE_EPS, e->norm_out_w, e->norm_out_b, 1, r->compute);
        if (rc != SDX_OK) return rc;
    }
    if ((rc = sdx__vae_conv(r, e->conv_out_w, e->conv_out_b, 1)) != SDX_OK) return rc;
    SDX__VAE_TRACE(r, "quant_conv");
    return r->dry ? SDX_OK : sdx__conv2d(r->ctx, moments, &r->x, v->quant_w, v->quant_b, 1, 0, r->compute);
}

/* Arena bytes of a pass whose dry walk found these maxima. */
static size_t sdx__vae_run_bytes(const sdx__vae_run *r) {
    size_t es = sdx_dtype_size(r->act);
    /* slots + the largest stage's temporaries, each rounded to the arena
     * alignment (at most 6 temporaries live at once) */
    return ((size_t)(2 * r->max_act) + (size_t)r->max_tmp) * es + 8 * SDX__ARENA_ALIGN;
}

/* Runs a walk: dry to size the slots, then for real. */
typedef int (*sdx__vae_walk_fn)(sdx__vae_run *, const sdx__vae *, const sdx_tensor *, sdx_tensor *);

static int sdx__vae_run_walk(sdx_ctx *ctx, const sdx__vae *v, sdx__arena *arena, sdx__vae_walk_fn walk,
                             const sdx_tensor *in, sdx_tensor *out) {
    sdx__vae_run r;
    sdx__mark m;
    size_t bytes;
    int rc;
    sdx__vae_run_init(&r, ctx, arena, (sdx_dtype)v->act_type, 1);
    walk(&r, v, in, out);
    r.dry = 0;
    r.cur = 1;
    if (!sdx__mul_size((size_t)r.max_act, sdx_dtype_size(r.act), &bytes))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "VAE activation size overflows");
    m = sdx__arena_mark(arena);
    if (!(r.slot[0] = sdx__arena_alloc(arena, bytes)) || !(r.slot[1] = sdx__arena_alloc(arena, bytes))) {
        sdx__arena_release(arena, m);
        return SDX_ERR_NOMEM;
    }
    r.compute = (sdx_dtype)v->compute_type;
    rc = walk(&r, v, in, out);
    sdx__arena_release(arena, m);
    return rc;
}

/* A walk from host tensors: `in` (any float dtype) to `out` (F32). On a
 * device backend through device copies, so only they cross the bus. */
static int sdx__vae_run_host(sdx_ctx *ctx, const sdx__vae *v, sdx__arena *arena, sdx__vae_walk_fn walk,
                             const sdx_tensor *in, sdx_tensor *out) {
    sdx__mark m;
    sdx_tensor din, dout;
    const float *values = (const float *)in->data;
    int rc = SDX_ERR_NOMEM;
    if (!sdx__on_device(ctx)) return sdx__vae_run_walk(ctx, v, arena, walk, in, out);
    m = sdx__arena_mark(arena);
    if (!sdx__arena_tensor(arena, &din, SDX_F32, in->ndim, in->shape) ||
        !sdx__arena_tensor(arena, &dout, SDX_F32, out->ndim, out->shape))
        goto done;
    if (in->dtype != SDX_F32) {
        float *f = (float *)sdx__arena_host_alloc(arena, sdx_tensor_nbytes(&din));
        if (!f) goto done;
        sdx__load_f32(in->data, in->dtype, 0, sdx_tensor_numel(in), f);
        values = f;
    }
    if ((rc = sdx__upload(ctx, &din, values)) == SDX_OK &&
        (rc = sdx__vae_run_walk(ctx, v, arena, walk, &din, &dout)) == SDX_OK)
        rc = sdx__download(ctx, (float *)out->data, &dout);
done:
    sdx__arena_release(arena, m);
    return rc;
}

static int sdx__vae_decoder_walk_fn(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *in, sdx_tensor *out) {
    return sdx__vae_decoder_walk(r, v, in, out);
}
static int sdx__vae_encoder_walk_fn(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *in, sdx_tensor *out) {
    return sdx__vae_encoder_walk(r, v, in, out);
}

/* Estimated arena bytes of an untiled decode of an h x w latent. */
static size_t sdx__vae_decode_bytes(const sdx__vae *v, int64_t h, int64_t w) {
    sdx__vae_run r;
    sdx_tensor z = sdx__view4(SDX_F32, NULL, 1, v->latent_channels, h, w);
    sdx_tensor img = sdx__view4(SDX_F32, NULL, 1, 3, h * v->factor, w * v->factor);
    sdx__vae_run_init(&r, NULL, NULL, (sdx_dtype)v->act_type, 1);
    sdx__vae_decoder_walk(&r, v, &z, &img);
    return sdx__vae_run_bytes(&r);
}

/* Estimated arena bytes of an untiled encode of an H x W image, including
 * the f32 moments buffer. */
static size_t sdx__vae_encode_bytes(const sdx__vae *v, int64_t H, int64_t W) {
    sdx__vae_run r;
    int64_t h = H / v->factor, w = W / v->factor;
    sdx_tensor img = sdx__view4(SDX_F32, NULL, 1, 3, H, W);
    sdx_tensor mom = sdx__view4(SDX_F32, NULL, 1, 2 * v->latent_channels, h, w);
    sdx__vae_run_init(&r, NULL, NULL, (sdx_dtype)v->act_type, 1);
    sdx__vae_encoder_walk(&r, v, &img, &mom);
    return sdx__vae_run_bytes(&r) + (size_t)(2 * v->latent_channels * h * w) * sizeof(float) + SDX__ARENA_ALIGN;
}

/* ---- tiling ------------------------------------------------------------- */
/* A tiled pass computes what the untiled one does, with the activations of
 * one tile at a time on the device. Two things make the VAE non-local:
 * - GroupNorm normalises with statistics over the whole image. The tiles
 *   therefore run in lock-step, one stage (the convolutions between two
 *   GroupNorms) at a time: each stage's output is assembled on the host as
 *   a "plane" (the whole activation, in the activation dtype), its
 *   per-group statistics are taken there with the kernel's own moments
 *   (sdx__moments: two passes, f64), and the next stage normalises every
 *   tile with them. The statistics are thus those of the untiled pass.
 * - Convolutions see across tile borders. A stage holds one 3x3
 *   convolution (a 1x1 shortcut, the Upsample's nearest doubling and the
 *   residual add are pointwise), so each tile is cut from its input plane
 *   with the convolution's exact margin, taking the zero or circular
 *   padding of the layer where the margin leaves the image, and yields
 *   exactly its own rectangle. Tiles partition the image: no overlap, no
 *   blending, no seams.
 * The mid block, whose attention is global, runs untiled at latent size
 * (the decoder's start, the encoder's end). A VAE with attention inside
 * its levels (none of SD 1.x/2.x/SDXL) is not tiled.
 * Memory: the arena holds one tile's temporaries (or the latent-size mid
 * block); the host holds at most three planes at once: a ResBlock's
 * input, its conv1 output and, where the channel count changes, its
 * shortcut (sdx__vae.tiled_plane_peak reports the bytes). */

typedef struct sdx__vae_tiler {
    sdx_ctx *ctx;
    sdx__vae *v;
    sdx__arena *arena;
    int64_t ny, nx;          /* tiles per axis: the same grid at every resolution */
    int circular;            /* seamless: 3x3 convolutions wrap around */
    sdx_dtype act;
    size_t held, peak;       /* host bytes in planes */
} sdx__vae_tiler;

static int sdx__vae_plane_new(sdx__vae_tiler *t, sdx_tensor *p, sdx_dtype dtype, int64_t c, int64_t h, int64_t w) {
    int64_t shape[4] = { 1, c, h, w };
    size_t bytes;
    *p = sdx__view4(dtype, NULL, 1, c, h, w);
    if (!sdx__shape_bytes(dtype, 4, shape, &bytes))
        return sdx__fail(t->ctx, SDX_ERR_INVALID_ARG, "VAE tile plane of %lld x %lld x %lld overflows", (long long)c,
                         (long long)h, (long long)w);
    if (!(p->data = sdx__malloc(t->ctx, bytes ? bytes : 1))) return sdx__nomem(t->ctx, "VAE tile plane", bytes);
    t->held += bytes;
    if (t->held > t->peak) t->peak = t->held;
    return SDX_OK;
}

static void sdx__vae_plane_free(sdx__vae_tiler *t, sdx_tensor *p) {
    if (!p->data) return;
    t->held -= sdx_tensor_nbytes(p);
    sdx__free(t->ctx, p->data);
    p->data = NULL;
}

typedef struct sdx__vae_stats_args {
    const sdx_tensor *x;
    int64_t n;               /* elements per group */
    double *mean, *var;
} sdx__vae_stats_args;

static void sdx__vae_stats_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__vae_stats_args *a = (const sdx__vae_stats_args *)arg;
    (void)thread;
    for (int64_t g = begin; g < end; g++) sdx__moments(a->x, g * a->n, a->n, &a->mean[g], &a->var[g]);
}

/* Per-group mean and variance -> the per-channel GroupNorm affine map. */
static int sdx__vae_norm_affine(sdx__vae_tiler *t, int64_t c, const double *mean, const double *var, const sdx_tensor *gamma,
                                const sdx_tensor *beta, float *mul, float *add) {
    int64_t cpg = c / SDX__VAE_GROUPS;
    int rc;
    if ((rc = sdx__download(t->ctx, mul, gamma)) != SDX_OK || (rc = sdx__download(t->ctx, add, beta)) != SDX_OK) return rc;
    for (int64_t ch = 0; ch < c; ch++) {
        int64_t g = ch / cpg;
        float rstd = (float)(1.0 / sqrt(var[g] + (double)SDX__VAE_EPS)), m = mul[ch] * rstd;
        mul[ch] = m;
        add[ch] = add[ch] - (float)mean[g] * m;
    }
    return SDX_OK;
}

/* GroupNorm of a whole plane as a per-channel affine map, computed as
 * sdx__cpu_group_norm does: y = x * mul[c] + add[c]. mul/add: [C] floats
 * (host, from the arena). */
static int sdx__vae_plane_norm(sdx__vae_tiler *t, const sdx_tensor *x, const sdx_tensor *gamma, const sdx_tensor *beta,
                               float *mul, float *add) {
    int64_t c = x->shape[1], cpg = c / SDX__VAE_GROUPS;
    double mean[SDX__VAE_GROUPS], var[SDX__VAE_GROUPS];
    sdx__vae_stats_args a;
    a.x = x;
    a.n = cpg * x->shape[2] * x->shape[3];
    a.mean = mean;
    a.var = var;
    sdx__parallel_for(t->ctx, SDX__VAE_GROUPS, sdx__vae_stats_range, &a);
    return sdx__vae_norm_affine(t, c, mean, var, gamma, beta, mul, add);
}

/* Cuts the window [y0, y0 + h) x [x0, x0 + w) of `src` seen `up` times
 * larger (nearest) into dst f32 [C, h, w]. Outside the plane: zero, or the
 * wrapped-around value when circular. With mul/add, values from the plane
 * become silu(x * mul[c] + add[c]) (GroupNorm + SiLU; the padding stays
 * zero, as it pads the normalised tensor). */
typedef struct sdx__vae_cut {
    float *dst, *rows;       /* rows: one source row per thread */
    const sdx_tensor *src;
    int64_t y0, x0, h, w;
    int up, circular;
    const float *mul, *add;
} sdx__vae_cut;

static int64_t sdx__vae_wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

static void sdx__vae_cut_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__vae_cut *a = (const sdx__vae_cut *)arg;
    int64_t sh = a->src->shape[2], sw = a->src->shape[3], H = sh * a->up, W = sw * a->up;
    float *row = a->rows + (size_t)thread * (size_t)sw;
    /* the source columns the window needs (all of them when it wraps) */
    int64_t lo = SDX__MAX(a->x0, (int64_t)0) / a->up, hi = (SDX__MIN(a->x0 + a->w, W) - 1) / a->up + 1;
    if (a->circular && (a->x0 < 0 || a->x0 + a->w > W)) lo = 0, hi = sw;
    for (int64_t c = begin; c < end; c++)
        for (int64_t yy = 0; yy < a->h; yy++) {
            float *d = a->dst + (c * a->h + yy) * a->w;
            int64_t y = a->y0 + yy;
            if (y < 0 || y >= H) {
                if (!a->circular) { memset(d, 0, (size_t)a->w * sizeof(float)); continue; }
                y = sdx__vae_wrap(y, H);
            }
            if (hi > lo) sdx__load_f32(a->src->data, a->src->dtype, (c * sh + y / a->up) * sw + lo, hi - lo, row + lo);
            for (int64_t xx = 0; xx < a->w; xx++) {
                int64_t x = a->x0 + xx;
                float val;
                if (x < 0 || x >= W) {
                    if (!a->circular) { d[xx] = 0.0f; continue; }
                    x = sdx__vae_wrap(x, W);
                }
                val = row[x / a->up];
                if (a->mul) {
                    val = val * a->mul[c] + a->add[c];
                    val = val / (1.0f + expf(-val));
                }
                d[xx] = val;
            }
        }
}

/* One stage over all tiles: dst[tile] = conv(cut(src)) (+ res[tile]).
 * The convolution has the layer's padding (1 for 3x3, 0 for 1x1; a
 * stride-2 Downsample pads right and bottom only, with zeros even when
 * seamless, as sdx__conv2d does). res may alias dst: a tile reads its own
 * rectangle of res before writing it, and tiles do not overlap. */
typedef struct sdx__vae_stage {
    const sdx_tensor *src, *w, *b, *res;
    sdx_tensor *dst;
    const float *mul, *add;  /* GroupNorm + SiLU of src, or NULL */
    int up, stride;
} sdx__vae_stage;

/* A host tensor the kernels can use in place: no copy to or from it. */
static int sdx__vae_direct(const sdx_tensor *t) { return !t->device && t->dtype == SDX_F32; }

/* Cuts into a new tile tensor `dev` of the arena (device memory on a GPU). */
static int sdx__vae_cut_to(sdx__vae_tiler *t, sdx_tensor *dev, const sdx__vae_cut *cut, int64_t c) {
    sdx__vae_cut a = *cut;
    size_t nrow = (size_t)sdx_threads(t->ctx) * (size_t)cut->src->shape[3], bytes = sizeof(float) * (size_t)(c * a.h * a.w);
    if (!sdx__arena_tensor4(t->arena, dev, t->act, 1, c, a.h, a.w) ||
        !(a.dst = sdx__vae_direct(dev) ? (float *)dev->data : (float *)sdx__arena_host_alloc(t->arena, bytes)) ||
        !(a.rows = (float *)sdx__arena_host_alloc(t->arena, sizeof(float) * (nrow ? nrow : 1))))
        return sdx__nomem(t->ctx, "VAE tile", bytes);
    sdx__parallel_for(t->ctx, c, sdx__vae_cut_range, &a);
    return sdx__vae_direct(dev) ? SDX_OK : sdx__upload(t->ctx, dev, a.dst);
}

/* The stage's output over the th x tw tile at (y0, x0): `out`, a tensor
 * of the arena [1, cout, th, tw]. */
static int sdx__vae_stage_compute(sdx__vae_tiler *t, const sdx__vae_stage *s, int64_t y0, int64_t x0, int64_t th, int64_t tw,
                                  sdx_tensor *out) {
    int64_t k = s->w->shape[2], pad = k == 3 && s->stride == 1, cin = s->src->shape[1], cout = s->w->shape[0];
    sdx__vae_cut cut;
    sdx_tensor tin, tres;
    int rc;
    memset(&cut, 0, sizeof cut);
    cut.src = s->src;
    cut.y0 = y0 * s->stride - pad;
    cut.x0 = x0 * s->stride - pad;
    cut.h = (th - 1) * s->stride + k;
    cut.w = (tw - 1) * s->stride + k;
    cut.up = s->up;
    cut.circular = t->circular && pad;
    cut.mul = s->mul;
    cut.add = s->add;
    if ((rc = sdx__vae_cut_to(t, &tin, &cut, cin)) != SDX_OK) return rc;
    if (!sdx__arena_tensor4(t->arena, out, t->act, 1, cout, th, tw))
        return sdx__nomem(t->ctx, "VAE tile", sdx_tensor_nbytes(out));
    if ((rc = sdx__conv2d_pad(t->ctx, out, &tin, s->w, s->b, s->stride, 0, 0, 0, 0, SDX_F32)) != SDX_OK) return rc;
    if (s->res) {
        sdx__vae_cut rc2;
        memset(&rc2, 0, sizeof rc2);
        rc2.src = s->res;
        rc2.y0 = y0;
        rc2.x0 = x0;
        rc2.h = th;
        rc2.w = tw;
        rc2.up = 1;
        if ((rc = sdx__vae_cut_to(t, &tres, &rc2, cout)) != SDX_OK || (rc = sdx__add(t->ctx, out, out, &tres)) != SDX_OK)
            return rc;
    }
    return SDX_OK;
}

/* A tile tensor's values as host f32 [C, h, w]: its own memory on the
 * CPU, else a copy in the arena. */
static int sdx__vae_tile_host(sdx__vae_tiler *t, const sdx_tensor *tile, const float **values) {
    size_t bytes = sizeof(float) * (size_t)sdx_tensor_numel(tile);
    float *host;
    if (sdx__vae_direct(tile)) { *values = (const float *)tile->data; return SDX_OK; }
    if (!(host = (float *)sdx__arena_host_alloc(t->arena, bytes))) return sdx__nomem(t->ctx, "VAE tile", bytes);
    *values = host;
    return sdx__download(t->ctx, host, tile);
}

/* Writes host f32 [C, th, tw] into the plane at (y0, x0). */
static void sdx__vae_plane_put(sdx_tensor *plane, const float *host, int64_t y0, int64_t x0, int64_t th, int64_t tw) {
    int64_t c = plane->shape[1], h = plane->shape[2], w = plane->shape[3];
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t y = 0; y < th; y++)
            sdx__store_f32(plane->data, plane->dtype, (ch * h + y0 + y) * w + x0, tw, host + (ch * th + y) * tw);
}

static int sdx__vae_stage_tile(sdx__vae_tiler *t, const sdx__vae_stage *s, int64_t y0, int64_t x0, int64_t th, int64_t tw) {
    sdx_tensor out;
    const float *host = NULL;
    int rc;
    if ((rc = sdx__vae_stage_compute(t, s, y0, x0, th, tw, &out)) != SDX_OK) return rc;
    if ((rc = sdx__vae_tile_host(t, &out, &host)) != SDX_OK) return rc;
    sdx__vae_plane_put(s->dst, host, y0, x0, th, tw);
    return SDX_OK;
}

/* Tile i of an ny x nx grid over an h x w output; 0 when it is empty
 * (more tiles than pixels at this size). */
static int sdx__vae_tile_at(int64_t ny, int64_t nx, int64_t h, int64_t w, int64_t i, int64_t *y0, int64_t *x0, int64_t *th,
                            int64_t *tw) {
    int64_t iy = i / nx, ix = i % nx;
    *y0 = iy * h / ny;
    *x0 = ix * w / nx;
    *th = (iy + 1) * h / ny - *y0;
    *tw = (ix + 1) * w / nx - *x0;
    return *th > 0 && *tw > 0;
}

/* A convolution every tile has used: in low-memory mode its file pages go
 * (the largest planes come at the end, when most of the decoder's weights
 * have run). */
static void sdx__vae_weights_done(sdx__vae_tiler *t, const sdx_tensor *w, const sdx_tensor *b) {
    if (!t->v->low_memory) return;
    sdx__st_release(t->v->w.st, w->data, sdx_tensor_nbytes(w));
    if (b) sdx__st_release(t->v->w.st, b->data, sdx_tensor_nbytes(b));
}

static int sdx__vae_stage_run(sdx__vae_tiler *t, const sdx__vae_stage *s) {
    int64_t y0, x0, th, tw;
    int rc = SDX_OK;
    for (int64_t i = 0; i < t->ny * t->nx && rc == SDX_OK; i++) {
        sdx__mark m = sdx__arena_mark(t->arena);
        if (sdx__vae_tile_at(t->ny, t->nx, s->dst->shape[2], s->dst->shape[3], i, &y0, &x0, &th, &tw))
            rc = sdx__vae_stage_tile(t, s, y0, x0, th, tw);
        sdx__arena_release(t->arena, m);
    }
    sdx__vae_weights_done(t, s->w, s->b);
    return rc;
}

static sdx__vae_stage sdx__vae_stage_of(const sdx_tensor *src, const sdx_tensor *w, const sdx_tensor *b, sdx_tensor *dst) {
    sdx__vae_stage s;
    memset(&s, 0, sizeof s);
    s.src = src;
    s.w = w;
    s.b = b;
    s.dst = dst;
    s.up = s.stride = 1;
    return s;
}

/* A ResBlock's second half: *x += conv2(silu(norm2(hid))), in place.
 * mul/add: room for hid's channels. */
static int sdx__vae_tiled_res_tail(sdx__vae_tiler *t, sdx_tensor *x, const sdx_tensor *hid, const sdx__vae_res *b, float *mul,
                                   float *add) {
    sdx__vae_stage s;
    int rc;
    if ((rc = sdx__vae_plane_norm(t, hid, b->norm2_w, b->norm2_b, mul, add)) != SDX_OK) return rc;
    s = sdx__vae_stage_of(hid, b->conv2_w, b->conv2_b, x);
    s.mul = mul;
    s.add = add;
    s.res = x;
    return sdx__vae_stage_run(t, &s);
}

/* *x = ResBlock(*x), stage by stage; *x is replaced (its plane freed). */
static int sdx__vae_tiled_res(sdx__vae_tiler *t, sdx_tensor *x, const sdx__vae_res *b) {
    int64_t h = x->shape[2], w = x->shape[3], c = SDX__MAX((int64_t)b->cin, (int64_t)b->cout);
    sdx_tensor hid, skip;
    sdx__vae_stage s;
    sdx__mark m = sdx__arena_mark(t->arena);
    float *mul = (float *)sdx__arena_host_alloc(t->arena, sizeof(float) * (size_t)c);
    float *add = (float *)sdx__arena_host_alloc(t->arena, sizeof(float) * (size_t)c);
    int rc;
    hid.data = skip.data = NULL;
    if (!mul || !add) { rc = sdx__nomem(t->ctx, "VAE norm", 2 * sizeof(float) * (size_t)c); goto done; }
    /* conv1(silu(norm1(x))) */
    if ((rc = sdx__vae_plane_norm(t, x, b->norm1_w, b->norm1_b, mul, add)) != SDX_OK ||
        (rc = sdx__vae_plane_new(t, &hid, t->act, b->cout, h, w)) != SDX_OK)
        goto done;
    s = sdx__vae_stage_of(x, b->conv1_w, b->conv1_b, &hid);
    s.mul = mul;
    s.add = add;
    if ((rc = sdx__vae_stage_run(t, &s)) != SDX_OK) goto done;
    if (b->skip_w) {   /* the shortcut replaces x */
        if ((rc = sdx__vae_plane_new(t, &skip, t->act, b->cout, h, w)) != SDX_OK) goto done;
        s = sdx__vae_stage_of(x, b->skip_w, b->skip_b, &skip);
        if ((rc = sdx__vae_stage_run(t, &s)) != SDX_OK) goto done;
        sdx__vae_plane_free(t, x);
        *x = skip;
        skip.data = NULL;
    }
    rc = sdx__vae_tiled_res_tail(t, x, &hid, b, mul, add);
done:
    sdx__vae_plane_free(t, &hid);
    sdx__vae_plane_free(t, &skip);
    sdx__arena_release(t->arena, m);
    return rc;
}

/* *x = Upsample (dec) or Downsample (enc) of *x. */
static int sdx__vae_tiled_resample(sdx__vae_tiler *t, sdx_tensor *x, const sdx__vae_level *lv, int dec) {
    int64_t h = x->shape[2], w = x->shape[3];
    int64_t oh = dec ? 2 * h : (h - 2) / 2 + 1, ow = dec ? 2 * w : (w - 2) / 2 + 1;
    sdx_tensor y;
    sdx__vae_stage s;
    int rc;
    if ((rc = sdx__vae_plane_new(t, &y, t->act, lv->resample_w->shape[0], oh, ow)) != SDX_OK) return rc;
    s = sdx__vae_stage_of(x, lv->resample_w, lv->resample_b, &y);
    if (dec) s.up = 2;
    else s.stride = 2;
    rc = sdx__vae_stage_run(t, &s);
    sdx__vae_plane_free(t, x);
    *x = y;
    return rc;
}

/* ---- low-memory decoding: an Upsample fused with the next ResBlock ---- */
/* The plane an Upsample writes is the decoder's largest (at 512x512: 256
 * channels at full size, 256 MB in f32), and the ResBlock after it holds
 * it next to its conv1 and shortcut outputs. In low-memory mode the
 * upsampled plane is never made: its convolution runs per tile twice,
 * once for the ResBlock's norm1 statistics and once with the 1-pixel
 * margin conv1 needs, whose tile also gives the shortcut (or the
 * residual itself). The host then holds the Upsample's input instead of
 * its output: at 512x512, 320 MB of planes at the peak instead of 512.
 * The statistics are those of the whole plane: per tile two-pass sums in
 * f64, merged exactly (Chan et al.); the result equals the plain tiled
 * pass to float rounding. */

/* Per-group count, mean and sum of squared deviations of a host tile
 * [C, n] merged into the running ones. */
static void sdx__vae_moments_merge(const float *v, int64_t c, int64_t n, double *count, double *mean, double *m2) {
    int64_t cpg = c / SDX__VAE_GROUPS;
    for (int g = 0; g < SDX__VAE_GROUPS; g++) {
        const float *p = v + (int64_t)g * cpg * n;
        double s = 0, q = 0, m, nb = (double)(cpg * n), d, na = count[g];
        for (int64_t i = 0; i < cpg * n; i++) s += p[i];
        m = s / nb;
        for (int64_t i = 0; i < cpg * n; i++) { double e = p[i] - m; q += e * e; }
        d = m - mean[g];
        mean[g] += d * nb / (na + nb);
        m2[g] += q + d * d * na * nb / (na + nb);
        count[g] = na + nb;
    }
}

/* conv(in) of a tile, written into the plane at (y0, x0). */
static int sdx__vae_conv_put(sdx__vae_tiler *t, const sdx_tensor *in, const sdx_tensor *w, const sdx_tensor *b, sdx_tensor *plane,
                             int64_t y0, int64_t x0, int64_t th, int64_t tw) {
    sdx_tensor out;
    const float *host = NULL;
    int rc;
    if (!sdx__arena_tensor4(t->arena, &out, t->act, 1, plane->shape[1], th, tw))
        return sdx__nomem(t->ctx, "VAE tile", sdx_tensor_nbytes(&out));
    if ((rc = sdx__conv2d_pad(t->ctx, &out, in, w, b, 1, 0, 0, 0, 0, SDX_F32)) != SDX_OK || (rc = sdx__vae_tile_host(t, &out, &host)) != SDX_OK)
        return rc;
    sdx__vae_plane_put(plane, host, y0, x0, th, tw);
    return SDX_OK;
}

/* One tile of the fused pass: conv1's output into hid, the shortcut's
 * (or the upsampled values themselves) into res. The Upsample's output
 * is computed over the tile and its 1-pixel margin, clipped to the
 * image; cut from that window as from a plane, whatever lies outside it
 * lies outside the image and reads as conv1's zero padding. */
static int sdx__vae_up_res_tile(sdx__vae_tiler *t, const sdx__vae_stage *up, const sdx__vae_res *b, const float *mul,
                                const float *add, sdx_tensor *hid, sdx_tensor *res, int64_t y0, int64_t x0, int64_t th,
                                int64_t tw) {
    int64_t h = hid->shape[2], w = hid->shape[3], c = up->w->shape[0];
    int64_t wy0 = SDX__MAX(y0 - 1, (int64_t)0), wx0 = SDX__MAX(x0 - 1, (int64_t)0);
    int64_t wh = SDX__MIN(y0 + th + 1, h) - wy0, ww = SDX__MIN(x0 + tw + 1, w) - wx0;
    sdx_tensor ywin, window, tin, inner;
    const float *yv = NULL, *iv = NULL;
    sdx__vae_cut cut;
    int rc;
    if ((rc = sdx__vae_stage_compute(t, up, wy0, wx0, wh, ww, &ywin)) != SDX_OK || (rc = sdx__vae_tile_host(t, &ywin, &yv)) != SDX_OK)
        return rc;
    window = sdx__view4(SDX_F32, (void *)(uintptr_t)yv, 1, c, wh, ww);
    memset(&cut, 0, sizeof cut);
    cut.src = &window;
    cut.y0 = y0 - 1 - wy0;
    cut.x0 = x0 - 1 - wx0;
    cut.h = th + 2;
    cut.w = tw + 2;
    cut.up = 1;
    cut.mul = mul;
    cut.add = add;
    if ((rc = sdx__vae_cut_to(t, &tin, &cut, c)) != SDX_OK ||
        (rc = sdx__vae_conv_put(t, &tin, b->conv1_w, b->conv1_b, hid, y0, x0, th, tw)) != SDX_OK)
        return rc;
    /* the tile's own upsampled values, without the margin or the norm */
    cut.y0 = y0 - wy0;
    cut.x0 = x0 - wx0;
    cut.h = th;
    cut.w = tw;
    cut.mul = cut.add = NULL;
    if ((rc = sdx__vae_cut_to(t, &inner, &cut, c)) != SDX_OK) return rc;
    if (b->skip_w) return sdx__vae_conv_put(t, &inner, b->skip_w, b->skip_b, res, y0, x0, th, tw);
    if ((rc = sdx__vae_tile_host(t, &inner, &iv)) != SDX_OK) return rc;
    sdx__vae_plane_put(res, iv, y0, x0, th, tw);
    return SDX_OK;
}

/* *x = ResBlock b (Upsample lv (*x)), the upsampled plane never made.
 * A fused tile holds about three times a plain stage's temporaries (the
 * Upsample's input window, its output window, conv1's input), so the
 * fused passes cut each tile of the grid in four. */
static int sdx__vae_tiled_up_res(sdx__vae_tiler *t, sdx_tensor *x, const sdx__vae_level *lv, const sdx__vae_res *b) {
    int64_t h = 2 * x->shape[2], w = 2 * x->shape[3], c = lv->resample_w->shape[0], y0, x0, th, tw;
    int64_t ny = SDX__MIN(2 * t->ny, h), nx = SDX__MIN(2 * t->nx, w);
    double count[SDX__VAE_GROUPS], mean[SDX__VAE_GROUPS], m2[SDX__VAE_GROUPS], var[SDX__VAE_GROUPS];
    sdx__vae_stage up = sdx__vae_stage_of(x, lv->resample_w, lv->resample_b, NULL);
    sdx__mark m = sdx__arena_mark(t->arena);
    float *mul = (float *)sdx__arena_host_alloc(t->arena, sizeof(float) * (size_t)SDX__MAX(c, (int64_t)b->cout));
    float *add = (float *)sdx__arena_host_alloc(t->arena, sizeof(float) * (size_t)SDX__MAX(c, (int64_t)b->cout));
    sdx_tensor hid, res;
    int rc = SDX_OK;
    hid.data = res.data = NULL;
    up.up = 2;
    if (!mul || !add) { rc = sdx__nomem(t->ctx, "VAE norm", 2 * sizeof(float) * (size_t)SDX__MAX(c, (int64_t)b->cout)); goto done; }
    memset(count, 0, sizeof count);
    memset(mean, 0, sizeof mean);
    memset(m2, 0, sizeof m2);
    for (int64_t i = 0; i < ny * nx && rc == SDX_OK; i++) {   /* norm1's statistics */
        sdx__mark tm = sdx__arena_mark(t->arena);
        sdx_tensor y;
        const float *yv = NULL;
        if (!sdx__vae_tile_at(ny, nx, h, w, i, &y0, &x0, &th, &tw)) continue;
        if ((rc = sdx__vae_stage_compute(t, &up, y0, x0, th, tw, &y)) == SDX_OK && (rc = sdx__vae_tile_host(t, &y, &yv)) == SDX_OK)
            sdx__vae_moments_merge(yv, c, th * tw, count, mean, m2);
        sdx__arena_release(t->arena, tm);
    }
    for (int g = 0; g < SDX__VAE_GROUPS; g++) var[g] = count[g] > 0 ? m2[g] / count[g] : 0.0;
    if (rc != SDX_OK || (rc = sdx__vae_norm_affine(t, c, mean, var, b->norm1_w, b->norm1_b, mul, add)) != SDX_OK ||
        (rc = sdx__vae_plane_new(t, &hid, t->act, b->cout, h, w)) != SDX_OK ||
        (rc = sdx__vae_plane_new(t, &res, t->act, b->cout, h, w)) != SDX_OK)
        goto done;
    for (int64_t i = 0; i < ny * nx && rc == SDX_OK; i++) {
        sdx__mark tm = sdx__arena_mark(t->arena);
        if (sdx__vae_tile_at(ny, nx, h, w, i, &y0, &x0, &th, &tw)) rc = sdx__vae_up_res_tile(t, &up, b, mul, add, &hid, &res, y0, x0, th, tw);
        sdx__arena_release(t->arena, tm);
    }
    sdx__vae_weights_done(t, up.w, up.b);
    sdx__vae_weights_done(t, b->conv1_w, b->conv1_b);
    if (b->skip_w) sdx__vae_weights_done(t, b->skip_w, b->skip_b);
    if (rc != SDX_OK) goto done;
    sdx__vae_plane_free(t, x);
    *x = res;
    res.data = NULL;
    rc = sdx__vae_tiled_res_tail(t, x, &hid, b, mul, add);
done:
    sdx__vae_plane_free(t, &hid);
    sdx__vae_plane_free(t, &res);
    sdx__arena_release(t->arena, m);
    return rc;
}

/* The levels of a coder on the plane *x, in the coder's order. A decoder
 * in low-memory mode fuses each Upsample with the ResBlock after it
 * (exact tiles wrap around when seamless: those keep the plain order). */
static int sdx__vae_tiled_levels(sdx__vae_tiler *t, sdx_tensor *x, const sdx__vae_coder *cd, int dec) {
    const sdx__vae_level *pending = NULL;   /* an Upsample left for the next level's first ResBlock */
    int fuse = dec && t->v->low_memory && !t->circular, rc = SDX_OK;
    for (int k = 0; k < cd->n_levels && rc == SDX_OK; k++) {
        int i = dec ? cd->n_levels - 1 - k : k;
        const sdx__vae_level *lv = &cd->level[i];
        for (int j = 0; j < lv->n_blocks && rc == SDX_OK; j++) {
            sdx__trace_at(t->ctx, SDX__PART_VAE, dec ? "decoder.up.%d.block.%d (tiled)" : "encoder.down.%d.block.%d (tiled)", i, j);
            if (pending) rc = sdx__vae_tiled_up_res(t, x, pending, &lv->res[j]);
            else rc = sdx__vae_tiled_res(t, x, &lv->res[j]);
            pending = NULL;
        }
        if (rc == SDX_OK && pending) rc = sdx__vae_tiled_resample(t, x, pending, dec);   /* a level without blocks */
        pending = NULL;
        if (rc == SDX_OK && lv->resample_w) {
            if (fuse && k + 1 < cd->n_levels) pending = lv;
            else rc = sdx__vae_tiled_resample(t, x, lv, dec);
        }
    }
    return rc;
}

static int sdx__vae_decoder_head_fn(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *in, sdx_tensor *out) {
    int rc = sdx__vae_decoder_head(r, v, in);
    return rc != SDX_OK || r->dry ? rc : sdx__copy(r->ctx, out, &r->x);
}

/* Reads (and, on the CPU, overwrites: its GroupNorms run in place) `in`. */
static int sdx__vae_encoder_tail_fn(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *in, sdx_tensor *out) {
    r->x = *in;
    return sdx__vae_encoder_tail(r, v, out);
}

static void sdx__vae_tiler_init(sdx__vae_tiler *t, sdx_ctx *ctx, sdx__vae *v, sdx__arena *arena, int64_t ny, int64_t nx) {
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    t->v = v;
    t->arena = arena;
    t->ny = ny;
    t->nx = nx;
    t->circular = ctx->circular;
    t->act = (sdx_dtype)v->act_type;
}

static void sdx__vae_tiler_done(sdx__vae_tiler *t, const char *what) {
    t->v->tiled_plane_peak = t->peak;
    sdx__log(t->ctx, SDX_LOG_INFO, "vae: tiled %s in %lldx%lld tiles: host planes peaked at %zu MB (arena high-water %zu MB)", what,
             (long long)t->ny, (long long)t->nx, t->peak >> 20, t->arena->peak >> 20);
}

/* z [1, latent, h, w] -> image F32 [1, 3, fh, fw] (host), ny x nx tiles. */
static int sdx__vae_decode_tiled(sdx_ctx *ctx, sdx__vae *v, sdx__arena *arena, const sdx_tensor *z, sdx_tensor *image,
                                 int64_t ny, int64_t nx) {
    const sdx__vae_coder *d = &v->dec;
    sdx__vae_tiler t;
    sdx_tensor x;
    sdx__vae_stage s;
    sdx__mark m = sdx__arena_mark(arena);
    float *mul, *add;
    int64_t c0 = d->level[0].ch;
    int rc;
    sdx__vae_tiler_init(&t, ctx, v, arena, ny, nx);
    /* the mid block untiled, at latent size */
    if ((rc = sdx__vae_plane_new(&t, &x, SDX_F32, d->conv_in_w->shape[0], z->shape[2], z->shape[3])) != SDX_OK) return rc;
    rc = sdx__vae_run_host(ctx, v, arena, sdx__vae_decoder_head_fn, z, &x);
    if (v->low_memory) sdx__wset_release_all(&v->w);   /* the mid block's weights; the levels read theirs again */
    if (rc == SDX_OK) rc = sdx__vae_tiled_levels(&t, &x, d, 1);
    if (rc == SDX_OK) {
        mul = (float *)sdx__arena_host_alloc(arena, sizeof(float) * (size_t)c0);
        add = (float *)sdx__arena_host_alloc(arena, sizeof(float) * (size_t)c0);
        if (!mul || !add) rc = sdx__nomem(ctx, "VAE norm", 2 * sizeof(float) * (size_t)c0);
        else rc = sdx__vae_plane_norm(&t, &x, d->norm_out_w, d->norm_out_b, mul, add);
        if (rc == SDX_OK) {
            sdx__trace_at(ctx, SDX__PART_VAE, "decoder.conv_out (tiled)");
            s = sdx__vae_stage_of(&x, d->conv_out_w, d->conv_out_b, image);
            s.mul = mul;
            s.add = add;
            rc = sdx__vae_stage_run(&t, &s);
        }
    }
    sdx__vae_plane_free(&t, &x);
    sdx__arena_release(arena, m);
    if (rc == SDX_OK) sdx__vae_tiler_done(&t, "decode");
    return rc;
}

/* image [1, 3, H, W] (host) -> moments F32 [1, 2 * latent, h, w] (host). */
static int sdx__vae_encode_tiled(sdx_ctx *ctx, sdx__vae *v, sdx__arena *arena, const sdx_tensor *image, sdx_tensor *moments,
                                 int64_t ny, int64_t nx) {
    const sdx__vae_coder *e = &v->enc;
    sdx__vae_tiler t;
    sdx_tensor x;
    sdx__vae_stage s;
    int rc;
    sdx__vae_tiler_init(&t, ctx, v, arena, ny, nx);
    if ((rc = sdx__vae_plane_new(&t, &x, t.act, e->conv_in_w->shape[0], image->shape[2], image->shape[3])) != SDX_OK) return rc;
    sdx__trace_at(ctx, SDX__PART_VAE, "encoder.conv_in (tiled)");
    s = sdx__vae_stage_of(image, e->conv_in_w, e->conv_in_b, &x);
    rc = sdx__vae_stage_run(&t, &s);
    if (rc == SDX_OK) rc = sdx__vae_tiled_levels(&t, &x, e, 0);
    /* the mid block and the output layers untiled, at latent size */
    if (rc == SDX_OK) rc = sdx__vae_run_host(ctx, v, arena, sdx__vae_encoder_tail_fn, &x, moments);
    sdx__vae_plane_free(&t, &x);
    if (rc == SDX_OK) sdx__vae_tiler_done(&t, "encode");
    return rc;
}

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

#pragma once
#include "../core/safetensors.c"
#include "../core/ops.c"
#include "../core/host_run.c"

/* ===================================================================== */
/*  VAE model: the LDM AutoencoderKL (SD 1.x / 2.x / SDXL) encoder and    */
/*  decoder, their loading and the untiled walk (vae.c runs them)         */
/* ===================================================================== */

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
    if ((rc = sdx__check_cancel(ctx, "between the VAE's blocks")) != SDX_OK) return rc;
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

/* A walk from host tensors: `in` (any float dtype) to `out` (F32), on a
 * device backend through device copies (sdx__host_run). */
typedef struct sdx__vae_pass {
    const sdx__vae *v;
    sdx__vae_walk_fn walk;
} sdx__vae_pass;

static int sdx__vae_pass_run(sdx_ctx *ctx, sdx__arena *arena, const void *user, const sdx_tensor *in, sdx_tensor *out) {
    const sdx__vae_pass *p = (const sdx__vae_pass *)user;
    return sdx__vae_run_walk(ctx, p->v, arena, p->walk, in, out);
}

static int sdx__vae_run_host(sdx_ctx *ctx, const sdx__vae *v, sdx__arena *arena, sdx__vae_walk_fn walk,
                             const sdx_tensor *in, sdx_tensor *out) {
    sdx__vae_pass p;
    p.v = v;
    p.walk = walk;
    return sdx__host_run(ctx, arena, sdx__vae_pass_run, &p, in, out);
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

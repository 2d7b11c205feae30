#pragma once
#include "api_upscale.h"
#include "../core/safetensors.c"
#include "../core/ops.c"

/* ===================================================================== */
/*  ESRGAN: RRDBNet upscalers (Real-ESRGAN, older ESRGAN models)          */
/* ===================================================================== */
/* BasicSR's RRDBNet.forward:
 *
 *   x'   = pixel_unshuffle(x, f)            f = 1 (x4), 2 (x2), 4 (x1)
 *   feat = conv_first(x');  t = RRDB_B-1(... RRDB_0(feat));  feat += conv_body(t)
 *   per upsampling stage: feat = lrelu(conv_up(nearest_2x(feat)))
 *   out  = conv_last(lrelu(conv_hr(feat)))
 *
 *   RRDB(x) = 0.2 * RDB3(RDB2(RDB1(x))) + x
 *   RDB(x):  x_k = lrelu(conv_k(cat(x, x_1 .. x_k-1))) for k = 1..4,
 *            0.2 * conv5(cat(x, x_1 .. x_4)) + x
 *
 * Every conv is 3x3, padding 1, with a bias; lrelu has slope 0.2. The
 * widths (num_feat F, growth G), the block count and the scale come from
 * the tensors. Batch 1 in NCHW keeps a channel range contiguous, so the
 * RDB's concatenation is one buffer of F + 4G channels whose prefixes
 * are the convs' inputs: each x_k is written after the channels before
 * it, and nothing is copied. Pre- and post-processing (8-bit in and out,
 * reflect mod pad, tiles) follow Real-ESRGAN's RealESRGANer. */

#define SDX__ESRGAN_SLOPE 0.2f        /* LeakyReLU's negative slope            */
#define SDX__ESRGAN_RESIDUAL 0.2f     /* scale of the RDB and RRDB residuals   */
#define SDX__ESRGAN_MAX_CHANNELS 4096
#define SDX__ESRGAN_MAX_BLOCKS 1024
#define SDX__ESRGAN_MAX_UP 3          /* x2 stages: old x8 files have three    */
#define SDX__ESRGAN_TILE_PAD 10       /* Real-ESRGAN's default --tile_pad      */

/* One home for the activation budget of automatic tiling (bytes). */
#ifndef SDX_UPSCALE_TILE_BUDGET
#define SDX_UPSCALE_TILE_BUDGET ((size_t)1 << 30)
#endif

/* The key layouts. Weights are fetched by their BasicSR names; the other
 * layouts translate them (sdx__esrgan_map). */
typedef enum sdx__esrgan_layout {
    SDX__ESRGAN_BASICSR,    /* conv_first, body.N.rdbK.convJ, conv_body, conv_up1/2, conv_hr, conv_last */
    SDX__ESRGAN_OLD,        /* 2018 architecture.py: one nn.Sequential named model */
    SDX__ESRGAN_2019        /* xinntao/ESRGAN RRDBNet_arch.py: RRDB_trunk, trunk_conv, upconvN, HRconv */
} sdx__esrgan_layout;

static const char *const sdx__esrgan_layout_names[] = { "BasicSR", "old ESRGAN", "ESRGAN 2019" };

typedef struct sdx__esrgan_conv { const sdx_tensor *w, *b; } sdx__esrgan_conv;

typedef struct sdx__esrgan {
    sdx__wset w;
    sdx__esrgan_layout layout;
    int num_feat, num_grow, num_block;
    int in_channels;          /* conv_first's: 3 * unshuffle^2 */
    int unshuffle;            /* pixel-unshuffle factor f: 1, 2 or 4 */
    int n_up;                 /* nearest-2x stages */
    int scale;                /* 2^n_up / f */
    int old_index[SDX__ESRGAN_MAX_UP + 2];   /* old layout: model.N of each conv_up, conv_hr, conv_last */
    sdx__esrgan_conv first, body, up[SDX__ESRGAN_MAX_UP], hr, last;
    sdx__esrgan_conv *rdb;    /* [num_block][3 RDBs][5 convs] */
} sdx__esrgan;

/* ---- key layouts ------------------------------------------------------ */

/* The BasicSR names that are not RDB convs, the 2019 layout's for them,
 * and where the old layout puts them: model.0, the ShortcutBlock's last
 * entry (model.1.sub.<num_block>), or a conv after model.1: upsampling
 * stage 0, 1, 2, then HR and last. */
enum { SDX__ESRGAN_OLD_FIRST = -1, SDX__ESRGAN_OLD_BODY = -2, SDX__ESRGAN_OLD_HR = -3, SDX__ESRGAN_OLD_LAST = -4 };
static const struct { const char *basicsr, *v2019; int old; } sdx__esrgan_convs[] = {
    { "conv_first", "conv_first", SDX__ESRGAN_OLD_FIRST }, { "conv_body", "trunk_conv", SDX__ESRGAN_OLD_BODY },
    { "conv_up1", "upconv1", 0 }, { "conv_up2", "upconv2", 1 }, { "conv_up3", "upconv3", 2 },
    { "conv_hr", "HRconv", SDX__ESRGAN_OLD_HR }, { "conv_last", "conv_last", SDX__ESRGAN_OLD_LAST },
};

/* The file's name for BasicSR name `name` ("conv_up1.weight") in the old
 * and 2019 layouts, or 0 when the file's layout has no such tensor. */
static int sdx__esrgan_map(const void *user, const char *name, char *out, size_t size) {
    const sdx__esrgan *n = (const sdx__esrgan *)user;
    const char *dot = strrchr(name, '.'), *suffix = dot ? dot + 1 : "";
    int stem = dot ? (int)(dot - name) : (int)strlen(name), i = 0, r = 0, c = 0, used = 0, old = n->layout == SDX__ESRGAN_OLD;
    if (sscanf(name, "body.%d.rdb%d.conv%d%n", &i, &r, &c, &used) == 3 && used == stem)
        return snprintf(out, size, old ? "model.1.sub.%d.RDB%d.conv%d.0.%s" : "RRDB_trunk.%d.RDB%d.conv%d.%s", i, r, c, suffix) < (int)size;
    for (int k = 0; k < (int)SDX__ARRAY_LEN(sdx__esrgan_convs); k++) {
        int at = sdx__esrgan_convs[k].old;
        if ((int)strlen(sdx__esrgan_convs[k].basicsr) != stem || strncmp(name, sdx__esrgan_convs[k].basicsr, (size_t)stem)) continue;
        if (!old) return snprintf(out, size, "%s.%s", sdx__esrgan_convs[k].v2019, suffix) < (int)size;
        if (at == SDX__ESRGAN_OLD_FIRST) return snprintf(out, size, "model.0.%s", suffix) < (int)size;
        if (at == SDX__ESRGAN_OLD_BODY) return snprintf(out, size, "model.1.sub.%d.%s", n->num_block, suffix) < (int)size;
        at = at == SDX__ESRGAN_OLD_HR ? n->n_up : at == SDX__ESRGAN_OLD_LAST ? n->n_up + 1 : at < n->n_up ? at : -1;
        return at >= 0 && snprintf(out, size, "model.%d.%s", n->old_index[at], suffix) < (int)size;
    }
    return 0;
}

/* The largest N of the file's names `fmt` matches ("body.%d.rdb"), or -1. */
static int sdx__esrgan_max_index(const sdx_st *st, const char *fmt) {
    int most = -1;
    for (int i = 0; i < sdx_st_count(st); i++) {
        int v = -1, used = 0;
        if (sscanf(sdx_st_get(st, i)->name, fmt, &v, &used) == 1 && used > 0 && v >= 0) most = SDX__MAX(most, v);
    }
    return most;
}

/* The old layout's convs after model.1: their model.N, sorted. The last
 * two are conv_hr and conv_last, those before them the x2 stages (x4:
 * model.3, 6, 8, 10; the Upsample and LeakyReLU modules have no weights). */
static int sdx__esrgan_old_tail(sdx__esrgan *n, const sdx_st *st) {
    int count = 0;
    for (int i = 0; i < sdx_st_count(st); i++) {
        const char *name = sdx_st_get(st, i)->name;
        int v = -1, used = 0, at;
        if (sscanf(name, "model.%d.weight%n", &v, &used) != 1 || name[used] || v < 2) continue;
        if (count == SDX__ARRAY_LEN(n->old_index)) { count++; break; }
        for (at = count++; at > 0 && n->old_index[at - 1] > v; at--) n->old_index[at] = n->old_index[at - 1];
        n->old_index[at] = v;
    }
    if (count < 2 || count > (int)SDX__ARRAY_LEN(n->old_index))
        return sdx__fail(n->w.ctx, SDX_ERR_MODEL, "%s: old ESRGAN layout with %d convs after model.1 (model.N.weight, N >= 2); "
                         "expected 2 to %d: the x2 upsampling convs, then HR and last", sdx_st_path(st), count,
                         (int)SDX__ARRAY_LEN(n->old_index));
    n->n_up = count - 2;
    return SDX_OK;
}

/* Which layout `st` holds, its block count and (old layout) its tail. */
static int sdx__esrgan_detect(sdx__esrgan *n, const sdx_st *st) {
    const char *trunk;
    if (sdx_st_find(st, "conv_first.weight") && sdx_st_find(st, "RRDB_trunk.0.RDB1.conv1.weight")) {
        n->layout = SDX__ESRGAN_2019;
        trunk = "RRDB_trunk.%d.RDB%n";
        n->n_up = sdx_st_find(st, "upconv3.weight") ? 3 : sdx_st_find(st, "upconv2.weight") ? 2 : sdx_st_find(st, "upconv1.weight") ? 1 : 0;
    } else if (sdx_st_find(st, "conv_first.weight")) {
        n->layout = SDX__ESRGAN_BASICSR;
        trunk = "body.%d.rdb%n";
        n->n_up = 2;     /* BasicSR's RRDBNet always upsamples x4; x2 and x1 unshuffle first */
    } else if (sdx_st_find(st, "model.0.weight") && sdx_st_find(st, "model.1.sub.0.RDB1.conv1.0.weight")) {
        n->layout = SDX__ESRGAN_OLD;
        trunk = "model.1.sub.%d.RDB%n";
    } else {
        return sdx__fail(n->w.ctx, SDX_ERR_MODEL, "%s: not an ESRGAN (RRDBNet) model: no 'conv_first.weight' (BasicSR, "
                         "Real-ESRGAN) and no 'model.0.weight' with 'model.1.sub.0.RDB1.conv1.0.weight' (old ESRGAN)",
                         sdx_st_path(st));
    }
    n->num_block = sdx__esrgan_max_index(st, trunk) + 1;
    if (n->num_block < 1 || n->num_block > SDX__ESRGAN_MAX_BLOCKS)
        return sdx__fail(n->w.ctx, SDX_ERR_MODEL, "%s: %s layout with %d RRDB blocks; 1..%d supported", sdx_st_path(st),
                         sdx__esrgan_layout_names[n->layout], n->num_block, SDX__ESRGAN_MAX_BLOCKS);
    return n->layout == SDX__ESRGAN_OLD ? sdx__esrgan_old_tail(n, st) : SDX_OK;
}

/* ---- loading ---------------------------------------------------------- */

/* A conv of cout x cin (-1: any; its size is then read by the caller). */
static int sdx__esrgan_conv_get(sdx__esrgan *n, sdx__esrgan_conv *c, int64_t cout, int64_t cin, const char *stem) {
    if (!(c->w = sdx__wget(&n->w, sdx__s4(cout, cin, 3, 3), "%s.weight", stem)) ||
        !(c->b = sdx__wget(&n->w, sdx__s1(c->w->shape[0]), "%s.bias", stem)))
        return sdx__werr(&n->w);
    return SDX_OK;
}

static int sdx__esrgan_fail_width(sdx__esrgan *n, const char *what, const char *key, int64_t c, int64_t lo, int64_t hi) {
    return sdx__fail(n->w.ctx, SDX_ERR_MODEL, "%s: %s of %lld (tensor '%s'); %lld..%lld supported", sdx_st_path(n->w.st),
                     what, (long long)c, key, (long long)lo, (long long)hi);
}

/* conv_first fixes num_feat and (BasicSR) the pixel-unshuffle; the first
 * RDB conv the growth channels. */
static int sdx__esrgan_load_widths(sdx__esrgan *n) {
    int rc;
    int64_t cin;
    if ((rc = sdx__esrgan_conv_get(n, &n->first, -1, -1, "conv_first")) != SDX_OK) return rc;
    n->num_feat = (int)SDX__MIN(n->first.w->shape[0], (int64_t)INT32_MAX);
    cin = n->first.w->shape[1];
    if (n->num_feat < 1 || n->num_feat > SDX__ESRGAN_MAX_CHANNELS)
        return sdx__esrgan_fail_width(n, "num_feat", "conv_first.weight", n->first.w->shape[0], 1, SDX__ESRGAN_MAX_CHANNELS);
    n->unshuffle = cin == 3 ? 1 : cin == 12 && n->layout == SDX__ESRGAN_BASICSR ? 2 : cin == 48 && n->layout == SDX__ESRGAN_BASICSR ? 4 : 0;
    if (!n->unshuffle)
        return sdx__fail(n->w.ctx, SDX_ERR_MODEL, "%s: conv_first takes %lld input channels; sdx upscales RGB: 3 (x4)%s",
                         sdx_st_path(n->w.st), (long long)cin,
                         n->layout == SDX__ESRGAN_BASICSR ? ", 12 (x2 through pixel-unshuffle 2) or 48 (x1, unshuffle 4)" : "");
    n->in_channels = (int)cin;
    n->scale = (1 << n->n_up) / n->unshuffle;
    if ((rc = sdx__esrgan_conv_get(n, &n->rdb[0], -1, n->num_feat, "body.0.rdb1.conv1")) != SDX_OK) return rc;
    n->num_grow = (int)SDX__MIN(n->rdb[0].w->shape[0], (int64_t)INT32_MAX);
    if (n->num_grow < 1 || n->num_grow > SDX__ESRGAN_MAX_CHANNELS)
        return sdx__esrgan_fail_width(n, "num_grow_ch", "body.0.rdb1.conv1.weight", n->rdb[0].w->shape[0], 1, SDX__ESRGAN_MAX_CHANNELS);
    return SDX_OK;
}

static int sdx__esrgan_load_convs(sdx__esrgan *n) {
    int64_t F = n->num_feat, G = n->num_grow;
    char stem[64];
    int rc = SDX_OK;
    for (int i = 0; i < n->num_block && rc == SDX_OK; i++)
        for (int r = 0; r < 3 && rc == SDX_OK; r++)
            for (int c = 0; c < 5 && rc == SDX_OK; c++) {
                snprintf(stem, sizeof stem, "body.%d.rdb%d.conv%d", i, r + 1, c + 1);
                rc = sdx__esrgan_conv_get(n, &n->rdb[(i * 3 + r) * 5 + c], c < 4 ? G : F, F + c * G, stem);
            }
    if (rc == SDX_OK) rc = sdx__esrgan_conv_get(n, &n->body, F, F, "conv_body");
    for (int s = 0; s < n->n_up && rc == SDX_OK; s++) {
        snprintf(stem, sizeof stem, "conv_up%d", s + 1);
        rc = sdx__esrgan_conv_get(n, &n->up[s], F, F, stem);
    }
    if (rc == SDX_OK) rc = sdx__esrgan_conv_get(n, &n->hr, F, F, "conv_hr");
    if (rc == SDX_OK) rc = sdx__esrgan_conv_get(n, &n->last, 3, F, "conv_last");
    return rc;
}

static void sdx__esrgan_free(sdx__esrgan *n) {
    if (n->w.ctx) {
        sdx__wset_free(&n->w);
        sdx__free(n->w.ctx, n->rdb);
    }
    memset(n, 0, sizeof *n);
}

/* Reads the architecture from the tensors of `st` (kept open while n is
 * used) and fetches every weight; on failure n holds nothing. */
static int sdx__esrgan_load(sdx_ctx *ctx, sdx__esrgan *n, const sdx_st *st) {
    int rc;
    memset(n, 0, sizeof *n);
    /* weights keep the file's dtype; the kernels widen f16/bf16 to f32 */
    sdx__wset_init(&n->w, ctx, st, "", SDX__PART_UPSCALER, SDX_AUTO);
    if ((rc = sdx__esrgan_detect(n, st)) == SDX_OK && n->layout != SDX__ESRGAN_BASICSR) {
        n->w.map = sdx__esrgan_map;
        n->w.map_user = n;
    }
    if (rc == SDX_OK &&
        !(n->rdb = (sdx__esrgan_conv *)sdx__calloc(ctx, (size_t)n->num_block * 15, sizeof *n->rdb)))
        rc = sdx__nomem(ctx, "ESRGAN blocks", (size_t)n->num_block * 15 * sizeof *n->rdb);
    if (rc == SDX_OK && (rc = sdx__esrgan_load_widths(n)) == SDX_OK) rc = sdx__esrgan_load_convs(n);
    if (rc != SDX_OK) { sdx__esrgan_free(n); return rc; }
    sdx__log(ctx, SDX_LOG_INFO, "%s: ESRGAN (%s layout), x%d: num_feat %d, num_block %d, num_grow_ch %d%s", sdx_st_path(st),
             sdx__esrgan_layout_names[n->layout], n->scale, n->num_feat, n->num_block, n->num_grow,
             n->unshuffle > 1 ? ", pixel-unshuffle" : "");
    return SDX_OK;
}

/* ---- one pass of the network ----------------------------------------- */

/* Channels [c0, c0 + count) of a [1, C, H, W] buffer. */
static sdx_tensor sdx__esrgan_planes(const sdx_tensor *t, int64_t c0, int64_t count) {
    sdx_tensor v = sdx__view4(t->dtype, (char *)t->data + c0 * t->shape[2] * t->shape[3] * (int64_t)sdx_dtype_size(t->dtype),
                              1, count, t->shape[2], t->shape[3]);
    v.device = t->device;
    return v;
}

static int sdx__esrgan_run_conv(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx__esrgan_conv *c, int lrelu) {
    int rc = sdx__conv2d_pad(ctx, y, x, c->w, c->b, 1, 1, 1, 1, 1, SDX_F32);   /* zero padding, also in seamless mode */
    return rc == SDX_OK && lrelu ? sdx__leaky_relu(ctx, y, y, SDX__ESRGAN_SLOPE) : rc;
}

/* One RDB on cat[0, F) in place; cat's other channels and tmp ([1, F,
 * h, w]) are its scratch. */
static int sdx__esrgan_rdb(sdx_ctx *ctx, const sdx__esrgan *n, const sdx__esrgan_conv *c, sdx_tensor *cat, sdx_tensor *tmp) {
    int64_t F = n->num_feat, G = n->num_grow;
    sdx_tensor x = sdx__esrgan_planes(cat, 0, F);
    int rc = SDX_OK;
    for (int k = 0; k < 4 && rc == SDX_OK; k++) {
        sdx_tensor in = sdx__esrgan_planes(cat, 0, F + k * G), y = sdx__esrgan_planes(cat, F + k * G, G);
        rc = sdx__esrgan_run_conv(ctx, &y, &in, &c[k], 1);
    }
    if (rc == SDX_OK) rc = sdx__esrgan_run_conv(ctx, tmp, cat, &c[4], 0);
    if (rc == SDX_OK) rc = sdx__scale(ctx, tmp, tmp, SDX__ESRGAN_RESIDUAL);
    return rc == SDX_OK ? sdx__add(ctx, &x, tmp, &x) : rc;
}

/* feat += conv_body(RRDBs(feat)); t, cat and tmp are scratch. */
static int sdx__esrgan_trunk(sdx_ctx *ctx, const sdx__esrgan *n, sdx_tensor *feat, sdx_tensor *t, sdx_tensor *cat, sdx_tensor *tmp) {
    sdx_tensor x = sdx__esrgan_planes(cat, 0, n->num_feat);
    const sdx_tensor *src = feat;
    int rc = SDX_OK;
    for (int i = 0; i < n->num_block && rc == SDX_OK; i++) {
        sdx__trace_at(ctx, SDX__PART_UPSCALER, "body.%d", i);
        if ((rc = sdx__check_cancel(ctx, "upscaling, before block %d of %d", i + 1, n->num_block)) != SDX_OK) break;
        rc = sdx__copy(ctx, &x, src);
        for (int r = 0; r < 3 && rc == SDX_OK; r++) rc = sdx__esrgan_rdb(ctx, n, &n->rdb[(i * 3 + r) * 5], cat, tmp);
        if (rc == SDX_OK) rc = sdx__scale(ctx, &x, &x, SDX__ESRGAN_RESIDUAL);
        if (rc == SDX_OK) rc = sdx__add(ctx, t, &x, src);
        src = t;
    }
    sdx__trace_at(ctx, SDX__PART_UPSCALER, "conv_body");
    if (rc == SDX_OK) rc = sdx__esrgan_run_conv(ctx, tmp, t, &n->body, 0);
    return rc == SDX_OK ? sdx__add(ctx, feat, feat, tmp) : rc;
}

/* Upsampling stages, conv_hr and conv_last: feat [1, F, h, w] -> out
 * [1, 3, h * 2^n_up, w * 2^n_up]; a and b hold F channels at the output
 * size (b only with stages). */
static int sdx__esrgan_tail(sdx_ctx *ctx, const sdx__esrgan *n, const sdx_tensor *feat, sdx_tensor *a, sdx_tensor *b, sdx_tensor *out) {
    sdx_tensor cur = *feat;
    int rc = SDX_OK;
    for (int s = 0; s < n->n_up && rc == SDX_OK; s++) {
        sdx_tensor up = sdx__view4(SDX_F32, a->data, 1, n->num_feat, 2 * cur.shape[2], 2 * cur.shape[3]);
        sdx_tensor y = sdx__view4(SDX_F32, b->data, 1, n->num_feat, up.shape[2], up.shape[3]);
        up.device = y.device = a->device;
        sdx__trace_at(ctx, SDX__PART_UPSCALER, "conv_up%d", s + 1);
        if ((rc = sdx__upsample2x(ctx, &up, &cur)) == SDX_OK) rc = sdx__esrgan_run_conv(ctx, &y, &up, &n->up[s], 1);
        cur = y;
    }
    sdx__trace_at(ctx, SDX__PART_UPSCALER, "conv_hr");
    if (rc == SDX_OK) rc = sdx__esrgan_run_conv(ctx, a, &cur, &n->hr, 1);
    sdx__trace_at(ctx, SDX__PART_UPSCALER, "conv_last");
    return rc == SDX_OK ? sdx__esrgan_run_conv(ctx, out, a, &n->last, 0) : rc;
}

/* Bytes of activations one pass needs for a network input of h x w
 * (after the unshuffle), input and output included. */
static double sdx__esrgan_pass_bytes(const sdx__esrgan *n, int64_t h, int64_t w) {
    double px = (double)h * (double)w, up = (double)((int64_t)1 << (2 * n->n_up)), F = n->num_feat, G = n->num_grow;
    double trunk = 3 * F + 4 * G, tail = F * up * (n->n_up ? 2 : 1);
    return 4.0 * px * (n->in_channels + F + SDX__MAX(trunk, tail) + 3 * up);
}

/* in [1, C, h, w] -> out [1, 3, h * 2^n_up, w * 2^n_up], both in the
 * backend's memory. The trunk's scratch is released before the tail's is
 * taken, so the peak is the larger of the two. */
static int sdx__esrgan_forward(sdx_ctx *ctx, const sdx__esrgan *n, sdx__arena *arena, const sdx_tensor *in, sdx_tensor *out) {
    int64_t F = n->num_feat, h = in->shape[2], w = in->shape[3], oh = out->shape[2], ow = out->shape[3];
    sdx__mark m = sdx__arena_mark(arena), trunk;
    sdx_tensor feat, t, cat, tmp, a, b;
    int rc = SDX_ERR_NOMEM;
    if (!sdx__arena_tensor4(arena, &feat, SDX_F32, 1, F, h, w)) goto done;
    trunk = sdx__arena_mark(arena);
    if (!sdx__arena_tensor4(arena, &t, SDX_F32, 1, F, h, w) || !sdx__arena_tensor4(arena, &tmp, SDX_F32, 1, F, h, w) ||
        !sdx__arena_tensor4(arena, &cat, SDX_F32, 1, F + 4 * (int64_t)n->num_grow, h, w))
        goto done;
    sdx__trace_at(ctx, SDX__PART_UPSCALER, "conv_first");
    if ((rc = sdx__esrgan_run_conv(ctx, &feat, in, &n->first, 0)) != SDX_OK || (rc = sdx__esrgan_trunk(ctx, n, &feat, &t, &cat, &tmp)) != SDX_OK)
        goto done;
    sdx__arena_release(arena, trunk);
    rc = SDX_ERR_NOMEM;
    if (!sdx__arena_tensor4(arena, &a, SDX_F32, 1, F, oh, ow) || (n->n_up && !sdx__arena_tensor4(arena, &b, SDX_F32, 1, F, oh, ow)))
        goto done;
    if (!n->n_up) b = a;
    rc = sdx__esrgan_tail(ctx, n, &feat, &a, &b, out);
done:
    sdx__arena_release(arena, m);
    return rc;
}

/* ---- tiles (Real-ESRGAN's tile_process) -------------------------------- */

/* Rows [y0, y0 + th) and columns [x0, x0 + tw) of img [3, H, W], pixel-
 * unshuffled by f into dst [3 f^2, th / f, tw / f]: channel c f^2 + i f + j
 * holds img[c, f y + i, f x + j], as torch's pixel_unshuffle. */
static void sdx__esrgan_unshuffle(const float *img, int64_t H, int64_t W, int64_t y0, int64_t x0, int64_t th, int64_t tw, int f, float *dst) {
    int64_t h = th / f, w = tw / f;
    for (int64_t c = 0; c < 3; c++)
        for (int i = 0; i < f; i++)
            for (int j = 0; j < f; j++) {
                float *plane = dst + ((c * f + i) * f + j) * h * w;
                for (int64_t y = 0; y < h; y++)
                    for (int64_t x = 0; x < w; x++) plane[y * w + x] = img[(c * H + y0 + f * y + i) * W + x0 + f * x + j];
            }
}

typedef struct sdx__esrgan_tiling { int64_t tile, pad; } sdx__esrgan_tiling;

/* The tile of input pixels (tx, ty) and its context, clipped to the image. */
typedef struct sdx__esrgan_tile { int64_t y0, y1, x0, x1, py0, py1, px0, px1; } sdx__esrgan_tile;

static sdx__esrgan_tile sdx__esrgan_tile_at(const sdx__esrgan_tiling *t, int64_t H, int64_t W, int64_t ty, int64_t tx) {
    sdx__esrgan_tile r;
    r.y0 = ty * t->tile; r.y1 = SDX__MIN(r.y0 + t->tile, H);
    r.x0 = tx * t->tile; r.x1 = SDX__MIN(r.x0 + t->tile, W);
    r.py0 = SDX__MAX(r.y0 - t->pad, (int64_t)0); r.py1 = SDX__MIN(r.y1 + t->pad, H);
    r.px0 = SDX__MAX(r.x0 - t->pad, (int64_t)0); r.px1 = SDX__MIN(r.x1 + t->pad, W);
    return r;
}

/* One forward pass, for sdx__planned (on a device it is planned first). */
typedef struct {
    sdx_ctx *ctx; const sdx__esrgan *n; sdx__arena *arena; const sdx_tensor *in; sdx_tensor *y;
} sdx__esrgan_call;

static int sdx__esrgan_call_run(void *arg) {
    const sdx__esrgan_call *c = (const sdx__esrgan_call *)arg;
    return sdx__esrgan_forward(c->ctx, c->n, c->arena, c->in, c->y);
}

/* Runs one tile with its context and pastes its own part into out
 * [3, H s, W s]. */
static int sdx__esrgan_run_tile(sdx_ctx *ctx, const sdx__esrgan *n, sdx__arena *arena, const float *img, int64_t H, int64_t W,
                                const sdx__esrgan_tile *t, float *out) {
    int64_t f = n->unshuffle, s = n->scale, th = t->py1 - t->py0, tw = t->px1 - t->px0, oh = th * s, ow = tw * s;
    sdx__mark m = sdx__arena_mark(arena);
    sdx_tensor in, y;
    sdx__esrgan_call call;
    float *stage_in = NULL, *stage_out = NULL;
    int rc = SDX_ERR_NOMEM;
    if (!sdx__arena_tensor4(arena, &in, SDX_F32, 1, n->in_channels, th / f, tw / f) || !sdx__arena_tensor4(arena, &y, SDX_F32, 1, 3, oh, ow) ||
        !(stage_in = (float *)sdx__arena_host_alloc(arena, sdx_tensor_nbytes(&in))) ||
        !(stage_out = (float *)sdx__arena_host_alloc(arena, sdx_tensor_nbytes(&y))))
        goto done;
    sdx__esrgan_unshuffle(img, H, W, t->py0, t->px0, th, tw, (int)f, stage_in);
    call.ctx = ctx; call.n = n; call.arena = arena; call.in = &in; call.y = &y;
    if ((rc = sdx__upload(ctx, &in, stage_in)) != SDX_OK || (rc = sdx__planned(ctx, sdx__esrgan_call_run, &call)) != SDX_OK ||
        (rc = sdx__download(ctx, stage_out, &y)) != SDX_OK)
        goto done;
    for (int64_t c = 0; c < 3; c++)
        for (int64_t r = (t->y0 - t->py0) * s; r < (t->y1 - t->py0) * s; r++)
            memcpy(out + (c * H * s + t->py0 * s + r) * W * s + t->x0 * s, stage_out + (c * oh + r) * ow + (t->x0 - t->px0) * s,
                   (size_t)((t->x1 - t->x0) * s) * sizeof(float));
done:
    sdx__arena_release(arena, m);
    return rc;
}

/* img [3, H, W] (sides multiples of the unshuffle) -> out [3, H s, W s]. */
static int sdx__esrgan_run_tiles(sdx_ctx *ctx, const sdx__esrgan *n, sdx__arena *arena, const sdx__esrgan_tiling *tiling,
                                 const float *img, int64_t H, int64_t W, float *out) {
    int64_t ny = (H + tiling->tile - 1) / tiling->tile, nx = (W + tiling->tile - 1) / tiling->tile;
    int rc = SDX_OK;
    for (int64_t ty = 0; ty < ny && rc == SDX_OK; ty++)
        for (int64_t tx = 0; tx < nx && rc == SDX_OK; tx++) {
            sdx__esrgan_tile t = sdx__esrgan_tile_at(tiling, H, W, ty, tx);
            rc = sdx__check_cancel(ctx, "upscaling, before tile %lld of %lld", (long long)(ty * nx + tx + 1), (long long)(ny * nx));
            if (rc == SDX_OK) rc = sdx__esrgan_run_tile(ctx, n, arena, img, H, W, &t, out);
        }
    return rc;
}

/* ---- the public upscaler ------------------------------------------------ */

struct sdx_upscaler {
    sdx_ctx *ctx;
    sdx_st *file;
    sdx__esrgan net;
    sdx__arena arena;
    int tile, tile_pad;          /* sdx_upscaler_set_tiling's */
    char name[128];
};

/* x rounded up to a multiple of m */
static int64_t sdx__esrgan_round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* The tiles for an H x W (mod-padded) image: the caller's, or in
 * automatic mode the whole image when it fits the budget, else the
 * largest square tiles (a multiple of 8) whose pass does. */
static sdx__esrgan_tiling sdx__upscaler_tiling(const sdx_upscaler *up, int64_t H, int64_t W) {
    const sdx__esrgan *n = &up->net;
    int64_t f = n->unshuffle;
    sdx__esrgan_tiling t;
    t.pad = sdx__esrgan_round_up(up->tile_pad >= 0 ? up->tile_pad : SDX__ESRGAN_TILE_PAD, f);
    t.tile = up->tile > 0 ? sdx__esrgan_round_up(up->tile, f) : SDX__MAX(H, W);
    if (up->tile == 0 && sdx__esrgan_pass_bytes(n, H / f, W / f) > (double)SDX_UPSCALE_TILE_BUDGET) {
        int64_t side = sdx__esrgan_round_up(SDX__MAX(H, W), 8);
        while (side > 8 && sdx__esrgan_pass_bytes(n, (side + 2 * t.pad) / f, (side + 2 * t.pad) / f) > (double)SDX_UPSCALE_TILE_BUDGET)
            side -= 8;
        t.tile = side;
        sdx__log(up->ctx, SDX_LOG_INFO, "upscale: %lldx%lld in tiles of %lld with %lld pixels of context (untiled: %.0f MB, budget %zu MB)",
                 (long long)W, (long long)H, (long long)t.tile, (long long)t.pad, sdx__esrgan_pass_bytes(n, H / f, W / f) / 1048576.0,
                 (size_t)SDX_UPSCALE_TILE_BUDGET >> 20);
    }
    return t;
}

/* Reflect index, as torch's 'reflect' padding, bouncing as often as needed. */
static int64_t sdx__esrgan_reflect(int64_t i, int64_t n) {
    int64_t period = 2 * (n - 1);
    if (n == 1) return 0;
    i %= period;
    return i < n ? i : period - i;
}

/* x [3, h, w], RGB in [0, 1] -> y [3, h s, w s], the network's output
 * (not clamped): RealESRGANer's pre_process (reflect padding at the
 * bottom and right to a multiple of the unshuffle), process or
 * tile_process, and the crop of post_process. */
static int sdx__upscale_f32(sdx_upscaler *up, const float *x, int64_t h, int64_t w, float *y) {
    sdx_ctx *ctx = up->ctx;
    const sdx__esrgan *n = &up->net;
    int64_t f = n->unshuffle, s = n->scale, H = sdx__esrgan_round_up(h, f), W = sdx__esrgan_round_up(w, f);
    sdx__esrgan_tiling tiling = sdx__upscaler_tiling(up, H, W);
    int padded = H != h || W != w, rc;
    float *img = (float *)x, *out = y;
    if (padded) {
        size_t in_bytes = (size_t)(3 * H * W) * sizeof(float), out_bytes = (size_t)(3 * H * s * W * s) * sizeof(float);
        img = (float *)sdx__malloc(ctx, in_bytes);
        out = img ? (float *)sdx__malloc(ctx, out_bytes) : NULL;
        if (!out) { sdx__free(ctx, img); return sdx__nomem(ctx, "upscale padding", in_bytes + out_bytes); }
        for (int64_t c = 0; c < 3; c++)
            for (int64_t r = 0; r < H; r++)
                for (int64_t q = 0; q < W; q++) img[(c * H + r) * W + q] = x[(c * h + sdx__esrgan_reflect(r, h)) * w + sdx__esrgan_reflect(q, w)];
    }
    rc = sdx__esrgan_run_tiles(ctx, n, &up->arena, &tiling, img, H, W, out);
    sdx__arena_trim(&up->arena);
    if (padded) {
        for (int64_t c = 0; c < 3 && rc == SDX_OK; c++)
            for (int64_t r = 0; r < h * s; r++) memcpy(y + (c * h * s + r) * w * s, out + (c * H * s + r) * W * s, (size_t)(w * s) * sizeof(float));
        sdx__free(ctx, img);
        sdx__free(ctx, out);
    }
    return rc;
}

/* y [3, h, w] -> interleaved 8-bit RGB: clamp to [0, 1], then
 * round(y * 255) with halves to even, as numpy's round. Returns the
 * count of NaNs (written as 0). */
static int64_t sdx__upscale_to_rgb8(const float *y, int64_t h, int64_t w, uint8_t *rgb) {
    int64_t nan = 0;
    for (int64_t c = 0; c < 3; c++)
        for (int64_t i = 0; i < h * w; i++) {
            float v = y[c * h * w + i];
            if (v != v) { nan++; v = 0; }
            v = v < 0 ? 0 : v > 1 ? 1 : v;
            rgb[i * 3 + c] = (uint8_t)rintf(v * 255.0f);
        }
    return nan;
}

/* One pass on 8-bit RGB: in -> *out (sdx__malloc'd, w s x h s). */
static int sdx__upscale_pass(sdx_upscaler *up, const uint8_t *in, int64_t w, int64_t h, uint8_t **out) {
    sdx_ctx *ctx = up->ctx;
    int64_t s = up->net.scale, nan;
    size_t in_bytes = (size_t)(3 * h * w) * sizeof(float), out_bytes = (size_t)(3 * h * s * w * s) * sizeof(float);
    float *x = (float *)sdx__malloc(ctx, in_bytes), *y = x ? (float *)sdx__malloc(ctx, out_bytes) : NULL;
    int rc;
    *out = y ? (uint8_t *)sdx__malloc(ctx, (size_t)(3 * h * s * w * s)) : NULL;
    if (!*out) {
        sdx__free(ctx, x);
        sdx__free(ctx, y);
        return sdx__nomem(ctx, "upscale image", in_bytes + out_bytes);
    }
    for (int64_t c = 0; c < 3; c++)
        for (int64_t i = 0; i < h * w; i++) x[c * h * w + i] = (float)in[i * 3 + c] / 255.0f;
    rc = sdx__upscale_f32(up, x, h, w, y);
    if (rc == SDX_OK && (nan = sdx__upscale_to_rgb8(y, h * s, w * s, *out)) > 0)
        rc = sdx__fail(ctx, SDX_ERR_NONFINITE, "%s: the upscaler's output has %lld NaN values (a broken model? "
                       "--trace-nonfinite names the first op that makes one)", sdx_st_path(up->file), (long long)nan);
    sdx__free(ctx, x);
    sdx__free(ctx, y);
    if (rc != SDX_OK) { sdx__free(ctx, *out); *out = NULL; }
    return rc;
}

SDX_API sdx_result sdx_upscaler_load_source(sdx_ctx *ctx, const sdx_source *src, sdx_upscaler **out) {
    sdx_upscaler *up;
    const char *base, *dot, *path;
    int rc;
    if (!ctx) return SDX_ERR_INVALID_ARG;
    if (!out) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_upscaler_load: a path and an output are required");
    *out = NULL;
    if (!sdx__source_kind(ctx, src, "sdx_upscaler_load_source")) return SDX_ERR_INVALID_ARG;
    if (!(up = (sdx_upscaler *)sdx__calloc(ctx, 1, sizeof *up))) return sdx__nomem(ctx, "upscaler", sizeof *up);
    up->ctx = ctx;
    up->tile_pad = -1;
    sdx__arena_init(&up->arena, ctx, 0);
    path = sdx__source_name(src);
    base = strrchr(path, '/');
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    snprintf(up->name, sizeof up->name, "%.*s", dot ? (int)(dot - base) : (int)strlen(base), base);
    if ((rc = sdx_st_open_source(ctx, src, &up->file)) == SDX_ERR_FORMAT) {
        char why[sizeof ctx->error];
        snprintf(why, sizeof why, "%s", ctx->error);
        sdx__fail(ctx, rc, "%s (an upscaler is read from a .safetensors file)", why);
    }
    if (rc != SDX_OK || (rc = sdx__esrgan_load(ctx, &up->net, up->file)) != SDX_OK) {
        sdx_upscaler_free(up);
        return (sdx_result)rc;
    }
    *out = up;
    return SDX_OK;
}

SDX_API sdx_result sdx_upscaler_load(sdx_ctx *ctx, const char *path, sdx_upscaler **out) {
    sdx_source src;
    if (!ctx) return SDX_ERR_INVALID_ARG;
    if (!out || !path) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_upscaler_load: a path and an output are required");
    memset(&src, 0, sizeof src);
    src.path = path;
    return sdx_upscaler_load_source(ctx, &src, out);
}

SDX_API void sdx_upscaler_free(sdx_upscaler *up) {
    if (!up) return;
    sdx__esrgan_free(&up->net);
    sdx__arena_free(&up->arena);
    sdx_st_close(up->file);
    sdx__free(up->ctx, up);
}

SDX_API int sdx_upscaler_scale(const sdx_upscaler *up) { return up ? up->net.scale : 0; }
SDX_API const char *sdx_upscaler_name(const sdx_upscaler *up) { return up ? up->name : ""; }

SDX_API sdx_result sdx_upscaler_set_tiling(sdx_upscaler *up, int tile, int tile_pad) {
    if (!up) return SDX_ERR_INVALID_ARG;
    if (tile < -1 || tile_pad < -1)
        return sdx__fail(up->ctx, SDX_ERR_INVALID_ARG, "sdx_upscaler_set_tiling: tile %d, tile_pad %d (tile: -1 never, 0 automatic, "
                         "or a size; tile_pad: -1 default or >= 0)", tile, tile_pad);
    up->tile = tile;
    up->tile_pad = tile_pad;
    return SDX_OK;
}

/* Sides up to 2^20 pixels: every size below fits int64 arithmetic. */
#define SDX__UPSCALE_MAX_SIDE ((int64_t)1 << 20)

SDX_API sdx_result sdx_upscale(sdx_upscaler *up, const sdx_image *in, int repeats, sdx_image *out) {
    sdx_ctx *ctx;
    int64_t w, h, s;
    uint8_t *cur = NULL;
    int rc = SDX_OK;
    if (!up) return SDX_ERR_INVALID_ARG;
    ctx = up->ctx;
    sdx__call_begin(ctx);
    if (!in || !out || !in->data || in->channels != 3 || in->width < 1 || in->height < 1)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_upscale: expected an 8-bit RGB image (channels 3, sides >= 1) and an output");
    memset(out, 0, sizeof *out);
    w = in->width;
    h = in->height;
    s = up->net.scale;
    for (int i = 0; i < repeats; i++) {
        w *= s;
        h *= s;
        if (w > SDX__UPSCALE_MAX_SIDE || h > SDX__UPSCALE_MAX_SIDE) break;
    }
    if (repeats < 1 || w > SDX__UPSCALE_MAX_SIDE || h > SDX__UPSCALE_MAX_SIDE || w > INT32_MAX || h > INT32_MAX)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_upscale: %d repeats of x%d from %dx%d: repeats must be >= 1 and "
                         "the result at most %lld pixels a side", repeats, (int)s, in->width, in->height, (long long)SDX__UPSCALE_MAX_SIDE);
    w = in->width;
    h = in->height;
    for (int i = 0; i < repeats && rc == SDX_OK; i++) {
        uint8_t *next = NULL;
        rc = sdx__upscale_pass(up, cur ? cur : in->data, w, h, &next);
        sdx__free(ctx, cur);
        cur = next;
        w *= s;
        h *= s;
    }
    if (rc != SDX_OK) return (sdx_result)rc;
    out->width = (int)w;
    out->height = (int)h;
    out->channels = 3;
    out->data = cur;
    return SDX_OK;
}

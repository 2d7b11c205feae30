#pragma once
#include "core.c"
/* ===================================================================== */
/*  Ops: the kernels as model code calls them                             */
/* ===================================================================== */
/* Every call goes to the context's backend (the CPU's kernels, or a GPU's
 * from sdx_hip.h). Here, once for every backend: each operand must live
 * where the backend computes (a host tensor handed to a GPU kernel is a
 * bug in model code, caught with its name), and the tracer checks a
 * device output (the CPU kernels check their own). The contracts are in
 * docs/INTERNALS.md. */

static int sdx__ops_where(sdx_ctx *ctx, const char *op, const sdx_tensor *const *ts, int n) {
    int device = sdx__on_device(ctx);
    for (int i = 0; i < n; i++)
        if (ts[i] && ts[i]->device != device)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: operand %d is in %s memory but the backend '%s' computes in %s memory",
                             op, i, ts[i]->device ? "device" : "host", ctx->be.name, device ? "device" : "host");
    return SDX_OK;
}

#define SDX__OPS_WHERE(ctx, op, ...) do { \
    const sdx_tensor *const sdx__ops_ts_[] = { __VA_ARGS__ }; \
    int sdx__ops_rc_ = sdx__ops_where(ctx, op, sdx__ops_ts_, SDX__ARRAY_LEN(sdx__ops_ts_)); \
    if (sdx__ops_rc_ != SDX_OK) return sdx__ops_rc_; } while (0)

static int sdx__ops_done(sdx_ctx *ctx, const char *op, const sdx_tensor *y, int rc) {
    if (rc != SDX_OK || !y->device) return rc;
    return sdx__trace_check(ctx, op, y);
}

static int sdx__linear(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b) {
    SDX__OPS_WHERE(ctx, "linear", y, x, w, b);
    return sdx__ops_done(ctx, "linear", y, ctx->be.linear(ctx, y, x, w, b));
}

static int sdx__conv2d_pad(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           int stride, int pad_top, int pad_left, int pad_bottom, int pad_right) {
    SDX__OPS_WHERE(ctx, "conv2d", y, x, w, b);
    return sdx__ops_done(ctx, "conv2d", y, ctx->be.conv2d(ctx, y, x, w, b, stride, pad_top, pad_left, pad_bottom, pad_right));
}

static int sdx__pad_circular(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int top, int left, int bottom, int right) {
    SDX__OPS_WHERE(ctx, "pad_circular", y, x);
    return sdx__ops_done(ctx, "pad_circular", y, ctx->be.pad_circular(ctx, y, x, top, left, bottom, right));
}

/* Seamless tiling (A1111's "Tiling", sd.cpp's circular padding): between
 * these two calls every convolution with symmetric padding (the layers'
 * own padding, as PyTorch's padding_mode="circular") wraps around the
 * image edges, so a generated picture tiles without seams. Explicit
 * asymmetric pads (the VAE encoder's downsampling) stay zero. */
static void sdx__circular_begin(sdx_ctx *ctx) { ctx->circular = 1; }
static void sdx__circular_pause(sdx_ctx *ctx) { ctx->circular = 0; }   /* keeps the buffer */

static void sdx__circular_end(sdx_ctx *ctx) {
    ctx->circular = 0;
    sdx__dev_free(ctx, ctx->pad_buf, ctx->pad_cap);
    ctx->pad_buf = NULL;
    ctx->pad_cap = 0;
}

static int sdx__conv2d(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                       int stride, int pad) {
    sdx_tensor xp;
    size_t bytes;
    int rc;
    if (!ctx->circular || pad <= 0 || x->ndim != 4) return sdx__conv2d_pad(ctx, y, x, w, b, stride, pad, pad, pad, pad);
    xp = *x;
    xp.owned = 0;
    xp.shape[2] += 2 * pad;
    xp.shape[3] += 2 * pad;
    bytes = sdx_tensor_nbytes(&xp);
    if (bytes > ctx->pad_cap) {   /* one buffer, grown to the largest input */
        sdx__dev_free(ctx, ctx->pad_buf, ctx->pad_cap);
        ctx->pad_cap = 0;
        if (!(ctx->pad_buf = sdx__dev_alloc(ctx, bytes))) return sdx__nomem(ctx, "circular padding", bytes);
        ctx->pad_cap = bytes;
    }
    xp.data = ctx->pad_buf;
    if ((rc = sdx__pad_circular(ctx, &xp, x, pad, pad, pad, pad)) != SDX_OK) return rc;
    return sdx__conv2d_pad(ctx, y, &xp, w, b, stride, 0, 0, 0, 0);
}

static int sdx__group_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                           const sdx_tensor *gamma, const sdx_tensor *beta, int fuse_silu) {
    SDX__OPS_WHERE(ctx, "group_norm", y, x, gamma, beta);
    return sdx__ops_done(ctx, "group_norm", y, ctx->be.group_norm(ctx, y, x, groups, eps, gamma, beta, fuse_silu));
}

static int sdx__layer_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float eps,
                           const sdx_tensor *gamma, const sdx_tensor *beta) {
    SDX__OPS_WHERE(ctx, "layer_norm", y, x, gamma, beta);
    return sdx__ops_done(ctx, "layer_norm", y, ctx->be.layer_norm(ctx, y, x, eps, gamma, beta));
}

static int sdx__softmax(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    SDX__OPS_WHERE(ctx, "softmax", y, x);
    return sdx__ops_done(ctx, "softmax", y, ctx->be.softmax(ctx, y, x));
}

static int sdx__attention(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                          int heads, int causal) {
    SDX__OPS_WHERE(ctx, "attention", y, q, k, v);
    return sdx__ops_done(ctx, "attention", y, ctx->be.attention(ctx, y, q, k, v, heads, causal));
}

#define SDX__OPS_UNARY(name) \
    static int sdx__##name(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { \
        SDX__OPS_WHERE(ctx, #name, y, x); \
        return sdx__ops_done(ctx, #name, y, ctx->be.name(ctx, y, x)); \
    }
#define SDX__OPS_BINARY(name) \
    static int sdx__##name(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) { \
        SDX__OPS_WHERE(ctx, #name, y, a, b); \
        return sdx__ops_done(ctx, #name, y, ctx->be.name(ctx, y, a, b)); \
    }
SDX__OPS_UNARY(silu)
SDX__OPS_UNARY(gelu)            /* exact erf */
SDX__OPS_UNARY(quick_gelu)      /* x*sigmoid(1.702x) */
SDX__OPS_UNARY(geglu)           /* x[...,2D] -> a*gelu(g), a = first half */
SDX__OPS_UNARY(copy)            /* same numel, converts dtype */
SDX__OPS_UNARY(resize_nearest)  /* NCHW, y's shape gives the size */
SDX__OPS_UNARY(nchw_to_nlc)
SDX__OPS_UNARY(nlc_to_nchw)
SDX__OPS_BINARY(add)
SDX__OPS_BINARY(mul)
SDX__OPS_BINARY(add_channel_bias)   /* b: [N, C] over H, W */
SDX__OPS_BINARY(concat_channels)

static int sdx__scale(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float s) {
    SDX__OPS_WHERE(ctx, "scale", y, x);
    return sdx__ops_done(ctx, "scale", y, ctx->be.scale(ctx, y, x, s));
}

/* y = min(max(x, lo), hi), NaN stays NaN (ReLU: 0, INFINITY); y may alias x. */
static int sdx__clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float lo, float hi) {
    SDX__OPS_WHERE(ctx, "clamp", y, x);
    if (!(lo <= hi)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "clamp: bounds [%g, %g] are not ordered", lo, hi);
    return sdx__ops_done(ctx, "clamp", y, ctx->be.clamp(ctx, y, x, lo, hi));
}

/* y = tanh(x / limit) * limit (TAESD's soft clamp), limit > 0; y may alias x. */
static int sdx__tanh_clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float limit) {
    SDX__OPS_WHERE(ctx, "tanh_clamp", y, x);
    if (!(limit > 0) || !isfinite(limit)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "tanh_clamp: limit %g must be positive", limit);
    return sdx__ops_done(ctx, "tanh_clamp", y, ctx->be.tanh_clamp(ctx, y, x, limit));
}

/* Nearest 2x: the resize with y twice x's size (checked here, so every
 * backend's resize sees the same contract). */
static int sdx__upsample2x(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    if (x->ndim != 4 || y->ndim != 4 || y->shape[2] != 2 * x->shape[2] || y->shape[3] != 2 * x->shape[3]) {
        char sx[96], sy[96];
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "upsample2x: expected x [N, C, H, W] and y [N, C, 2H, 2W]; x is %s, y is %s",
                         sdx_shape_str(x, sx, sizeof sx), sdx_shape_str(y, sy, sizeof sy));
    }
    return sdx__resize_nearest(ctx, y, x);
}

/* ---- host helpers ------------------------------------------------------ */

/* out[n, dim] = [cos(t*f_i) ..., sin(t*f_i) ...], f_i = exp(-ln(max_period) * i / (dim/2)) */
static void sdx__timestep_embedding(float *out, const float *t, int n, int dim, float max_period) {
    int half = dim / 2;
    float lnp = (float)log((double)max_period);
    for (int i = 0; i < n; i++) {
        float *o = out + (size_t)i * (size_t)dim;
        for (int j = 0; j < half; j++) {
            /* frequencies and arguments rounded to f32 as the reference
             * implementations compute them; cos/sin of that f32 argument */
            float f = expf(-lnp * (float)j / (float)half);
            float arg = t[i] * f;
            o[j] = (float)cos((double)arg);
            o[half + j] = (float)sin((double)arg);
        }
        if (dim % 2) o[dim - 1] = 0.0f;
    }
}

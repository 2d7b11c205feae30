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

static int sdx__is_storage(sdx_dtype t) { return t == SDX_F32 || t == SDX_F16 || t == SDX_BF16; }

/* Operand i of op may be block-quantized: linear's or conv2d's weight,
 * on a backend that multiplies blocks there (sdx_backend.linear_blocks,
 * conv_blocks). */
static int sdx__ops_takes_blocks(const char *op, const sdx_backend *be, int i) {
    return (i == 2 && ((be->linear_blocks && (!strcmp(op, "linear") || !strcmp(op, "linear_add"))) ||
                       (be->conv_blocks && (!strcmp(op, "conv2d_pad") || !strcmp(op, "conv2d_pad_add"))))) ||
           (i == 3 && be->linear_blocks && !strcmp(op, "linear_geglu"));
}

/* Each operand lives where the backend computes (a host tensor handed to
 * a GPU kernel is a bug in model code, caught with its name) and is a
 * tensor a kernel can read: dims in range and none negative (pairs of
 * negative dims multiply to a positive count that every later shape
 * check would accept), data present (read again if it was given back:
 * sdx__refill), a storage dtype. */
static int sdx__ops_operands(sdx_ctx *ctx, const char *op, const sdx_backend *be, const sdx_tensor *const *ts, int n) {
    static const char *const what[] = { "y", "input 1", "input 2", "input 3", "input 4" };
    int device = !be->host_memory;
    for (int i = 0; i < n; i++) {
        const sdx_tensor *t = ts[i];
        const char *name = what[SDX__MIN(i, 4)];
        if (!t) continue;
        if (t->device != device)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: operand %d is in %s memory but the backend '%s' computes in %s memory",
                             op, i, t->device ? "device" : "host", be->name, device ? "device" : "host");
        if (t->ndim < 0 || t->ndim > SDX_MAX_DIMS)
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has %d dims (expected 0..%d)", op, name, t->ndim, SDX_MAX_DIMS);
        for (int d = 0; d < t->ndim; d++)
            if (t->shape[d] < 0) {
                char s[96];
                return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has a negative dim %s", op, name, sdx_shape_str(t, s, sizeof s));
            }
        if (!t->data && sdx_tensor_numel(t) > 0) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has no data", op, name);
        if (ctx->refills && !t->device && t->data) {   /* a weight given back in low-memory mode */
            int rc = sdx__refill_need(ctx, t->data, sdx_tensor_nbytes(t));
            if (rc != SDX_OK) return rc;
        }
        if (!sdx__is_storage(t->dtype) && !(sdx__dtype_is_block(t->dtype) && sdx__ops_takes_blocks(op, be, i)))
            return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s has dtype %s (expected F32, F16 or BF16%s)", op, name,
                             sdx_dtype_name(t->dtype), sdx__ops_takes_blocks(op, be, i) ? " or block-quantized" : "");
    }
    return SDX_OK;
}

static int sdx__fail_shapes(sdx_ctx *ctx, const char *op, const char *why,
                            const sdx_tensor *a, const char *an, const sdx_tensor *b, const char *bn) {
    char sa[96], sb[96];
    sdx_shape_str(a, sa, sizeof sa);
    if (b) sdx_shape_str(b, sb, sizeof sb); else sb[0] = 0;
    return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %s (%s %s%s%s%s%s)", op, why, an, sa,
                     b ? ", " : "", b ? bn : "", b ? " " : "", b ? sb : "");
}

/* ---- the ops' contracts --------------------------------------------------- */
/* Checked here, once for every backend, after sdx__ops_operands: a kernel
 * may assume its operands fit (docs/INTERNALS.md, "Kernel API"). */

static int sdx__check_linear(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                             sdx_dtype compute) {
    static const char op[] = "linear";
    (void)compute;
    if (w->ndim != 2 || x->ndim < 1 || x->shape[x->ndim - 1] != w->shape[1])
        return sdx__fail_shapes(ctx, op, "x's last dim must equal w's in-features", x, "x", w, "w [out, in]");
    if (sdx__dtype_is_block(w->dtype) && w->shape[1] % sdx_dtype_block(w->dtype, NULL))
        return sdx__fail_shapes(ctx, op, "a block-quantized w's rows must be whole blocks", w, "w", NULL, NULL);
    if (y->ndim != x->ndim || y->shape[y->ndim - 1] != w->shape[0])
        return sdx__fail_shapes(ctx, op, "y must be x's shape with last dim = w's out-features", y, "y", w, "w");
    for (int i = 0; i + 1 < x->ndim; i++)
        if (y->shape[i] != x->shape[i]) return sdx__fail_shapes(ctx, op, "y's leading dims differ from x's", y, "y", x, "x");
    if (b && sdx_tensor_numel(b) != w->shape[0])
        return sdx__fail_shapes(ctx, op, "bias size must equal out-features", b, "b", w, "w");
    return SDX_OK;
}

static int sdx__check_conv2d_pad(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                 int stride, int pad_top, int pad_left, int pad_bottom, int pad_right, sdx_dtype compute) {
    static const char op[] = "conv2d";
    int64_t ho, wo;
    (void)compute;
    if (stride < 1 || pad_top < 0 || pad_left < 0 || pad_bottom < 0 || pad_right < 0)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: stride %d must be >= 1 and pads (%d, %d, %d, %d) >= 0",
                         op, stride, pad_top, pad_left, pad_bottom, pad_right);
    if (x->ndim != 4 || w->ndim != 4 || x->shape[1] != w->shape[1] || w->shape[2] < 1 || w->shape[3] < 1)
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and w [O, C, kh, kw]", x, "x", w, "w");
    ho = x->shape[2] + pad_top + pad_bottom - w->shape[2];
    wo = x->shape[3] + pad_left + pad_right - w->shape[3];
    if (ho < 0 || wo < 0) return sdx__fail_shapes(ctx, op, "kernel larger than the padded input", x, "x", w, "w");
    ho = ho / stride + 1;
    wo = wo / stride + 1;
    if (y->ndim != 4 || y->shape[0] != x->shape[0] || y->shape[1] != w->shape[0] || y->shape[2] != ho || y->shape[3] != wo) {
        char want[128];
        snprintf(want, sizeof want, "y must be [%lld, %lld, %lld, %lld]", (long long)x->shape[0],
                 (long long)w->shape[0], (long long)ho, (long long)wo);
        return sdx__fail_shapes(ctx, op, want, y, "y", x, "x");
    }
    if (sdx__dtype_is_block(w->dtype) && (w->shape[1] * w->shape[2] * w->shape[3]) % sdx_dtype_block(w->dtype, NULL))
        return sdx__fail_shapes(ctx, op, "a block-quantized w's rows (C x kh x kw) must be whole blocks", w, "w", NULL, NULL);
    if (b && sdx_tensor_numel(b) != w->shape[0])
        return sdx__fail_shapes(ctx, op, "bias size must equal out-channels", b, "b", w, "w");
    return SDX_OK;
}

/* Whether two tensors' bytes share an address. */
static int sdx__overlaps(const sdx_tensor *a, const sdx_tensor *b) {
    const uintptr_t pa = (uintptr_t)a->data, pb = (uintptr_t)b->data;
    const size_t na = sdx_tensor_nbytes(a), nb = sdx_tensor_nbytes(b);
    return na && nb && pa < pb + nb && pb < pa + na;
}

/* The fused ops' residual: y's shape, and either y itself (in place) or
 * a tensor apart from y and x. */
static int sdx__check_residual(sdx_ctx *ctx, const char *op, const sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *res) {
    if (!sdx__same_shape(y, res)) return sdx__fail_shapes(ctx, op, "res must have y's shape", res, "res", y, "y");
    if (res->data == y->data ? res->dtype != y->dtype : sdx__overlaps(res, y) || sdx__overlaps(res, x))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: res must be y itself or apart from y and x", op);
    if (sdx__overlaps(y, x)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must be apart from x", op);
    return SDX_OK;
}

/* y = linear(x) + res, the sum rounded once to y's type; res may be y. */
static int sdx__check_linear_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                 const sdx_tensor *res, sdx_dtype compute) {
    int rc = sdx__check_linear(ctx, y, x, w, b, compute);
    return rc != SDX_OK ? rc : sdx__check_residual(ctx, "linear_add", y, x, res);
}

/* y = conv2d_pad(x) + res, the same way. */
static int sdx__check_conv2d_pad_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                     const sdx_tensor *res, int stride, int pad_top, int pad_left, int pad_bottom, int pad_right,
                                     sdx_dtype compute) {
    int rc = sdx__check_conv2d_pad(ctx, y, x, w, b, stride, pad_top, pad_left, pad_bottom, pad_right, compute);
    return rc != SDX_OK ? rc : sdx__check_residual(ctx, "conv2d_pad_add", y, x, res);
}

static int sdx__check_group_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                                 const sdx_tensor *gamma, const sdx_tensor *beta, int fuse_silu, sdx_dtype compute) {
    static const char op[] = "group_norm";
    (void)eps; (void)fuse_silu; (void)compute;
    if (x->ndim < 2 || !sdx__same_shape(x, y))
        return sdx__fail_shapes(ctx, op, "expected y and x of the same shape [N, C, ...]", x, "x", y, "y");
    if (groups < 1 || x->shape[1] % groups)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: %lld channels not divisible into %d groups", op,
                         (long long)x->shape[1], groups);
    if ((gamma && sdx_tensor_numel(gamma) != x->shape[1]) || (beta && sdx_tensor_numel(beta) != x->shape[1]))
        return sdx__fail_shapes(ctx, op, "gamma/beta size must equal channels", x, "x", gamma ? gamma : beta, "gamma/beta");
    return SDX_OK;
}

static int sdx__check_layer_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float eps,
                                 const sdx_tensor *gamma, const sdx_tensor *beta) {
    static const char op[] = "layer_norm";
    int64_t d;
    (void)eps;
    if (x->ndim < 1 || !sdx__same_shape(x, y))
        return sdx__fail_shapes(ctx, op, "expected y and x of the same shape", x, "x", y, "y");
    d = x->shape[x->ndim - 1];
    if ((gamma && sdx_tensor_numel(gamma) != d) || (beta && sdx_tensor_numel(beta) != d))
        return sdx__fail_shapes(ctx, op, "gamma/beta size must equal the last dim", x, "x", gamma ? gamma : beta, "gamma/beta");
    return SDX_OK;
}

static int sdx__check_softmax(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    if (x->ndim < 1 || !sdx__same_shape(x, y))
        return sdx__fail_shapes(ctx, "softmax", "expected y and x of the same shape", x, "x", y, "y");
    return SDX_OK;
}

static int sdx__check_attention(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                                int heads, int causal, sdx_dtype compute) {
    static const char op[] = "attention";
    (void)causal; (void)compute;
    if (q->ndim != 3 || k->ndim != 3 || v->ndim != 3 || !sdx__same_shape(k, v) || !sdx__same_shape(q, y) ||
        k->shape[0] != q->shape[0] || k->shape[2] != q->shape[2])
        return sdx__fail_shapes(ctx, op, "expected q, y [B, Nq, H*D] and k, v [B, Nk, H*D]", q, "q", k, "k");
    if (heads < 1 || q->shape[2] % heads)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: width %lld not divisible into %d heads", op,
                         (long long)q->shape[2], heads);
    if (y->data == q->data || y->data == k->data || y->data == v->data)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias q, k or v", op);
    if (sdx_tensor_numel(q) > 0 && k->shape[1] == 0) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: no keys", op);
    return SDX_OK;
}

/* Elementwise: as many values in and out (y may alias an input). */
static int sdx__check_same_count(sdx_ctx *ctx, const char *op, const sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    int64_t n = sdx_tensor_numel(y);
    if (sdx_tensor_numel(a) != n) return sdx__fail_shapes(ctx, op, "element counts differ", y, "y", a, "x");
    if (b && sdx_tensor_numel(b) != n) return sdx__fail_shapes(ctx, op, "element counts differ", a, "a", b, "b");
    return SDX_OK;
}

static int sdx__check_silu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute) {
    (void)compute;
    return sdx__check_same_count(ctx, "silu", y, x, NULL);
}
static int sdx__check_gelu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute) {
    (void)compute;
    return sdx__check_same_count(ctx, "gelu", y, x, NULL);
}
static int sdx__check_quick_gelu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__check_same_count(ctx, "quick_gelu", y, x, NULL); }
static int sdx__check_copy(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__check_same_count(ctx, "copy", y, x, NULL); }
static int sdx__check_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) { return sdx__check_same_count(ctx, "add", y, a, b); }
static int sdx__check_mul(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) { return sdx__check_same_count(ctx, "mul", y, a, b); }

static int sdx__check_scale(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float s) {
    (void)s;
    return sdx__check_same_count(ctx, "scale", y, x, NULL);
}

/* y = min(max(x, lo), hi), NaN stays NaN (ReLU: 0, INFINITY); y may alias x. */
static int sdx__check_clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float lo, float hi) {
    if (!(lo <= hi)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "clamp: bounds [%g, %g] are not ordered", lo, hi);
    return sdx__check_same_count(ctx, "clamp", y, x, NULL);
}

/* y = tanh(x / limit) * limit (TAESD's soft clamp), limit > 0; y may alias x. */
static int sdx__check_tanh_clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float limit) {
    if (!(limit > 0) || !isfinite(limit)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "tanh_clamp: limit %g must be positive", limit);
    return sdx__check_same_count(ctx, "tanh_clamp", y, x, NULL);
}

/* y = x > 0 ? x : x * slope (ESRGAN's LeakyReLU, as PyTorch's), finite
 * slope; y may alias x. */
static int sdx__check_leaky_relu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float slope) {
    if (!isfinite(slope)) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "leaky_relu: slope %g is not finite", slope);
    return sdx__check_same_count(ctx, "leaky_relu", y, x, NULL);
}

/* x[..., 2D] -> y[..., D] = a * gelu(g), a the first half */
static int sdx__check_geglu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute) {
    static const char op[] = "geglu";
    (void)compute;
    if (x->ndim < 1 || y->ndim != x->ndim || x->shape[x->ndim - 1] != 2 * y->shape[y->ndim - 1])
        return sdx__fail_shapes(ctx, op, "x's last dim must be twice y's", x, "x", y, "y");
    for (int i = 0; i + 1 < x->ndim; i++)
        if (y->shape[i] != x->shape[i]) return sdx__fail_shapes(ctx, op, "leading dims differ", x, "x", y, "y");
    return SDX_OK;
}

/* The product a linear_geglu gates: y's shape with w's rows last, y's
 * type, no memory. */
static sdx_tensor sdx__geglu_product(const sdx_tensor *y, const sdx_tensor *w) {
    sdx_tensor h = sdx__view(y->dtype, NULL, y->ndim, y->shape);
    if (h.ndim > 0 && w->ndim == 2) h.shape[h.ndim - 1] = w->shape[0];
    return h;
}

/* y = geglu(linear(x)): h (or, NULL, the backend's own room) is linear's
 * y (w's rows, y's type), y half its last dim; neither overlaps x or the
 * other. */
static int sdx__check_linear_geglu(sdx_ctx *ctx, sdx_tensor *y, sdx_tensor *h, const sdx_tensor *x, const sdx_tensor *w,
                                   const sdx_tensor *b, sdx_dtype compute) {
    static const char op[] = "linear_geglu";
    sdx_tensor product = sdx__geglu_product(y, w), *p = h ? h : &product;
    int rc = sdx__check_linear(ctx, p, x, w, b, compute);
    if (rc != SDX_OK) return rc;
    if ((rc = sdx__check_geglu(ctx, y, p, compute)) != SDX_OK) return rc;
    if (p->dtype != y->dtype) return sdx__fail_shapes(ctx, op, "h must have y's dtype", p, "h", y, "y");
    if (sdx__overlaps(y, x) || (h && (sdx__overlaps(h, x) || sdx__overlaps(y, h))))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y, h and x must lie apart", op);
    return SDX_OK;
}

/* v: [N, C] over H, W */
static int sdx__check_add_channel_bias(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *v) {
    if (x->ndim < 2 || !sdx__same_shape(x, y) || sdx_tensor_numel(v) != x->shape[0] * x->shape[1])
        return sdx__fail_shapes(ctx, "add_channel_bias", "expected y, x [N, C, ...] and v [N, C]", x, "x", v, "v");
    return SDX_OK;
}

static int sdx__check_not_aliased(sdx_ctx *ctx, const char *op, const sdx_tensor *y, const sdx_tensor *x) {
    if (y->data == x->data && sdx_tensor_numel(x) > 0) return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "%s: y must not alias x", op);
    return SDX_OK;
}

/* NCHW, y's shape gives the size */
static int sdx__check_resize_nearest(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "resize_nearest";
    if (x->ndim != 4 || y->ndim != 4 || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1] ||
        (sdx_tensor_numel(y) > 0 && sdx_tensor_numel(x) == 0))
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and y [N, C, Ho, Wo]", x, "x", y, "y");
    return sdx__check_not_aliased(ctx, op, y, x);
}

static int sdx__check_pad_circular(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int top, int left, int bottom, int right) {
    static const char op[] = "pad_circular";
    if (top < 0 || left < 0 || bottom < 0 || right < 0 || x->ndim != 4 || y->ndim != 4 || y->shape[0] != x->shape[0] ||
        y->shape[1] != x->shape[1] || y->shape[2] != x->shape[2] + top + bottom || y->shape[3] != x->shape[3] + left + right ||
        (sdx_tensor_numel(y) > 0 && (x->shape[2] < 1 || x->shape[3] < 1)))
        return sdx__fail_shapes(ctx, op, "expected x [N, C, H, W] and y [N, C, H + top + bottom, W + left + right]", x, "x", y, "y");
    return sdx__check_not_aliased(ctx, op, y, x);
}

static int sdx__check_concat_channels(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    if (a->ndim != 4 || b->ndim != 4 || y->ndim != 4 || a->shape[0] != b->shape[0] || a->shape[2] != b->shape[2] ||
        a->shape[3] != b->shape[3] || y->shape[0] != a->shape[0] || y->shape[1] != a->shape[1] + b->shape[1] ||
        y->shape[2] != a->shape[2] || y->shape[3] != a->shape[3])
        return sdx__fail_shapes(ctx, "concat_channels", "expected a [N, Ca, H, W], b [N, Cb, H, W], y [N, Ca+Cb, H, W]",
                                a, "a", b, "b");
    return SDX_OK;
}

static int sdx__check_nchw_to_nlc(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    if (x->ndim != 4 || y->ndim != 3 || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[2] * x->shape[3] ||
        y->shape[2] != x->shape[1])
        return sdx__fail_shapes(ctx, "nchw_to_nlc", "expected x [N, C, H, W] and y [N, H*W, C]", x, "x", y, "y");
    return SDX_OK;
}

static int sdx__check_nlc_to_nchw(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    if (x->ndim != 3 || y->ndim != 4 || y->shape[0] != x->shape[0] || x->shape[1] != y->shape[2] * y->shape[3] ||
        x->shape[2] != y->shape[1])
        return sdx__fail_shapes(ctx, "nlc_to_nchw", "expected x [N, H*W, C] and y [N, C, H, W]", x, "x", y, "y");
    return SDX_OK;
}

/* ---- dispatch --------------------------------------------------------------- */

static int sdx__ops_done(sdx_ctx *ctx, const char *op, const sdx_tensor *y, int rc) {
    if (rc != SDX_OK || !y->device) return rc;
    return sdx__trace_check(ctx, op, y);
}

#define SDX__UNPAREN(...) __VA_ARGS__
#define SDX__CTX_ARGS(...) (ctx, __VA_ARGS__)

/* ---- optional ops: on the host when the backend lacks them ----------------- */

/* Host copies of a device op's operands (sdx__host_copies_make), so the
 * host backend can run an op the device backend does not have. */
typedef struct { sdx_tensor t[3]; } sdx__host_copies;

static void sdx__host_copies_free(sdx_ctx *ctx, sdx__host_copies *c) {
    for (int i = 0; i < 3; i++) sdx__free(ctx, c->t[i].data);
}

static int sdx__host_copies_make(sdx_ctx *ctx, sdx__host_copies *c, const sdx_tensor *const *ts, int n) {
    memset(c, 0, sizeof *c);
    for (int i = 0; i < n; i++) {
        size_t bytes = sdx_tensor_nbytes(ts[i]);
        int rc;
        c->t[i] = *ts[i];
        c->t[i].device = 0;
        c->t[i].owned = 0;
        if (!(c->t[i].data = sdx__malloc(ctx, bytes))) { sdx__host_copies_free(ctx, c); return sdx__nomem(ctx, "host copy", bytes); }
        if (i > 0 && (rc = ctx->be.download(ctx->be.user, c->t[i].data, ts[i]->data, bytes)) != SDX_OK) {
            sdx__host_copies_free(ctx, c);
            return sdx__fail(ctx, rc, "download of an operand failed on backend '%s'", ctx->be.name);
        }
    }
    return SDX_OK;
}

/* Runs y = op(operands) on the host, y uploaded back (in place when y is
 * an operand: the host copies are separate, and y is written last). */
static int sdx__host_copies_done(sdx_ctx *ctx, sdx__host_copies *c, sdx_tensor *y, int rc) {
    if (rc == SDX_OK && (rc = ctx->be.upload(ctx->be.user, y->data, c->t[0].data, sdx_tensor_nbytes(y))) != SDX_OK)
        rc = sdx__fail(ctx, rc, "upload of a result failed on backend '%s'", ctx->be.name);
    sdx__host_copies_free(ctx, c);
    return rc;
}

static int sdx__fallback_softmax(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    const sdx_tensor *const ts[] = { y, x };
    sdx__host_copies c;
    int rc;
    if (!sdx__on_device(ctx)) return ctx->host.softmax(ctx, y, x);
    if ((rc = sdx__host_copies_make(ctx, &c, ts, 2)) != SDX_OK) return rc;
    return sdx__host_copies_done(ctx, &c, y, ctx->host.softmax(ctx, &c.t[0], &c.t[1]));
}

static int sdx__fallback_mul(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    const sdx_tensor *const ts[] = { y, a, b };
    sdx__host_copies c;
    int rc;
    if (!sdx__on_device(ctx)) return ctx->host.mul(ctx, y, a, b);
    if ((rc = sdx__host_copies_make(ctx, &c, ts, 3)) != SDX_OK) return rc;
    return sdx__host_copies_done(ctx, &c, y, ctx->host.mul(ctx, &c.t[0], &c.t[1], &c.t[2]));
}

/* The fused ops from backend be's own op and add: y = t + res, t being y
 * itself, or a temporary of y's size when res is y (in place). What a
 * backend without them runs, and the CPU's convolution. */
static int sdx__composed_begin(sdx_ctx *ctx, const sdx_backend *be, const sdx_tensor *y, const sdx_tensor *res, sdx_tensor *t) {
    size_t bytes = sdx_tensor_nbytes(y);
    *t = *y;
    t->owned = 0;
    if (res->data != y->data || !bytes) return SDX_OK;
    t->data = be->alloc(be->user, bytes);
    return t->data ? SDX_OK : sdx__nomem(ctx, "the temporary of a fused op", bytes);
}

static int sdx__composed_end(sdx_ctx *ctx, const sdx_backend *be, sdx_tensor *y, const sdx_tensor *res, sdx_tensor *t, int rc) {
    if (rc == SDX_OK) rc = be->add(ctx, y, t, res);
    if (t->data != y->data) be->free(be->user, t->data);
    return rc;
}

static int sdx__composed_linear_add(sdx_ctx *ctx, const sdx_backend *be, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w,
                                    const sdx_tensor *b, const sdx_tensor *res, sdx_dtype compute) {
    sdx_tensor t;
    int rc = sdx__composed_begin(ctx, be, y, res, &t);
    return rc != SDX_OK ? rc : sdx__composed_end(ctx, be, y, res, &t, be->linear(ctx, &t, x, w, b, compute));
}

static int sdx__composed_conv2d_pad_add(sdx_ctx *ctx, const sdx_backend *be, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w,
                                        const sdx_tensor *b, const sdx_tensor *res, int stride, int pad_top, int pad_left,
                                        int pad_bottom, int pad_right, sdx_dtype compute) {
    sdx_tensor t;
    int rc = sdx__composed_begin(ctx, be, y, res, &t);
    if (rc != SDX_OK) return rc;
    rc = be->conv2d_pad(ctx, &t, x, w, b, stride, pad_top, pad_left, pad_bottom, pad_right, compute);
    return sdx__composed_end(ctx, be, y, res, &t, rc);
}

/* geglu(linear(x)) through h, on backend be; h NULL: through room taken
 * for the op (host memory for the host backend, else the device's). */
static int sdx__composed_linear_geglu(sdx_ctx *ctx, const sdx_backend *be, sdx_tensor *y, sdx_tensor *h, const sdx_tensor *x,
                                      const sdx_tensor *w, const sdx_tensor *b, sdx_dtype compute) {
    sdx_tensor room;
    size_t bytes;
    int rc;
    if (!h) {
        room = sdx__geglu_product(y, w);
        bytes = sdx_tensor_nbytes(&room);
        room.device = !be->host_memory;
        room.data = be->host_memory ? sdx__malloc(ctx, bytes) : sdx__dev_alloc(ctx, bytes);
        if (!room.data) return sdx__nomem(ctx, "linear_geglu's product", bytes);
        rc = sdx__composed_linear_geglu(ctx, be, y, &room, x, w, b, compute);
        if (be->host_memory) sdx__free(ctx, room.data);
        else sdx__dev_free(ctx, room.data, bytes);
        return rc;
    }
    rc = be->linear(ctx, h, x, w, b, compute);
    return rc != SDX_OK ? rc : be->geglu(ctx, y, h, compute);
}

static int sdx__fallback_linear_geglu(sdx_ctx *ctx, sdx_tensor *y, sdx_tensor *h, const sdx_tensor *x, const sdx_tensor *w,
                                      const sdx_tensor *b, sdx_dtype compute) {
    return sdx__composed_linear_geglu(ctx, &ctx->be, y, h, x, w, b, compute);
}

static int sdx__fallback_linear_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                    const sdx_tensor *res, sdx_dtype compute) {
    return sdx__composed_linear_add(ctx, &ctx->be, y, x, w, b, res, compute);
}

static int sdx__fallback_conv2d_pad_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                        const sdx_tensor *res, int stride, int pad_top, int pad_left, int pad_bottom, int pad_right,
                                        sdx_dtype compute) {
    return sdx__composed_conv2d_pad_add(ctx, &ctx->be, y, x, w, b, res, stride, pad_top, pad_left, pad_bottom, pad_right, compute);
}

/* An op's scalar arguments as a graph's tape hashes them: doubles (every
 * int, float and dtype argument is exact in one). In C++ a class, since a
 * braced list may not narrow an int to a double, a constructor may. */
#ifdef __cplusplus
struct sdx__scalar {
    double v;
    sdx__scalar(double x) : v(x) {}
};
#else
typedef double sdx__scalar;
#endif

/* A backend always has a required op (sdx_set_backend checks); a missing
 * optional one runs its sdx__fallback_<op>. */
#define SDX__OPS_RUN_1(name, args) ctx->be.name SDX__CTX_ARGS args
#define SDX__OPS_RUN_0(name, args) (ctx->be.name ? ctx->be.name SDX__CTX_ARGS args : sdx__fallback_##name SDX__CTX_ARGS args)

/* One dispatcher per row of SDX_BACKEND_OPS, named after it (sdx__linear(ctx,
 * y, x, w, b, compute), ...): operands, then the op's contract, then the
 * backend's kernel. */
#define SDX__OPS_DISPATCH(name, required, params, args, operands, scalars) \
    static int sdx__##name SDX_BACKEND_PARAMS params { \
        const sdx_tensor *const operands_[] = { SDX__UNPAREN operands }; \
        int rc_ = sdx__ops_operands(ctx, #name, &ctx->be, operands_, SDX__ARRAY_LEN(operands_)); \
        if (rc_ == SDX_OK) rc_ = sdx__check_##name SDX__CTX_ARGS args; \
        if (rc_ == SDX_OK && ctx->graph.state) { \
            const sdx__scalar scalars_[] = { 0, SDX__UNPAREN scalars }; \
            rc_ = sdx__graph_op(ctx, #name, operands_, SDX__ARRAY_LEN(operands_), scalars_, sizeof scalars_); \
            if (rc_ == SDX__GRAPH_CHECKED) return SDX_OK; \
        } \
        if (rc_ != SDX_OK) return rc_; \
        return sdx__ops_done(ctx, #name, y, SDX__OPS_RUN_##required(name, args)); \
    }
SDX_BACKEND_OPS(SDX__OPS_DISPATCH)

/* The same ops on the host backend, for host code on host tensors whatever
 * the context computes on (LoRA's products at load): sdx__host_linear, ... */
#define SDX__OPS_HOST(name, required, params, args, operands, scalars) \
    static int sdx__host_##name SDX_BACKEND_PARAMS params { \
        const sdx_tensor *const operands_[] = { SDX__UNPAREN operands }; \
        int rc_ = sdx__ops_operands(ctx, #name, &ctx->host, operands_, SDX__ARRAY_LEN(operands_)); \
        if (rc_ == SDX_OK) rc_ = sdx__check_##name SDX__CTX_ARGS args; \
        return rc_ != SDX_OK ? rc_ : ctx->host.name SDX__CTX_ARGS args; \
    }
SDX_BACKEND_OPS(SDX__OPS_HOST)

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

/* x wrapped around by pad on every side (seamless mode), as xp in the
 * context's padding buffer. */
static int sdx__circular_input(sdx_ctx *ctx, const sdx_tensor *x, int pad, sdx_tensor *xp) {
    size_t bytes;
    *xp = *x;
    xp->owned = 0;
    xp->shape[2] += 2 * pad;
    xp->shape[3] += 2 * pad;
    bytes = sdx_tensor_nbytes(xp);
    if (bytes > ctx->pad_cap) {   /* one buffer, grown to the largest input */
        sdx__dev_free(ctx, ctx->pad_buf, ctx->pad_cap);
        ctx->pad_cap = 0;
        if (!(ctx->pad_buf = sdx__dev_alloc(ctx, bytes))) return sdx__nomem(ctx, "circular padding", bytes);
        ctx->pad_cap = bytes;
    }
    xp->data = ctx->pad_buf;
    return sdx__pad_circular(ctx, xp, x, pad, pad, pad, pad);
}

static int sdx__circular_applies(const sdx_ctx *ctx, const sdx_tensor *x, int pad) { return ctx->circular && pad > 0 && x->ndim == 4; }

/* A layer's convolution: pad on every side, wrapped around in seamless mode. */
static int sdx__conv2d(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                       int stride, int pad, sdx_dtype compute) {
    sdx_tensor xp;
    int rc;
    if (!sdx__circular_applies(ctx, x, pad)) return sdx__conv2d_pad(ctx, y, x, w, b, stride, pad, pad, pad, pad, compute);
    if ((rc = sdx__circular_input(ctx, x, pad, &xp)) != SDX_OK) return rc;
    return sdx__conv2d_pad(ctx, y, &xp, w, b, stride, 0, 0, 0, 0, compute);
}

/* The same plus res (a residual of y's shape: y itself, or apart from y
 * and x), in one pass where the backend fuses them. */
static int sdx__conv2d_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           const sdx_tensor *res, int stride, int pad, sdx_dtype compute) {
    sdx_tensor xp;
    int rc;
    if (!sdx__circular_applies(ctx, x, pad)) return sdx__conv2d_pad_add(ctx, y, x, w, b, res, stride, pad, pad, pad, pad, compute);
    if ((rc = sdx__circular_input(ctx, x, pad, &xp)) != SDX_OK) return rc;
    return sdx__conv2d_pad_add(ctx, y, &xp, w, b, res, stride, 0, 0, 0, 0, compute);
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

#pragma once
#include "elementwise.c"

/* ===================================================================== */
/*  Normalisation and softmax                                             */
/* ===================================================================== */

typedef struct {
    sdx_tensor *y; const sdx_tensor *x, *gamma, *beta;
    int64_t channels, spatial, groups;
    float eps; int fuse_silu;
} sdx__gn_args;

static void sdx__group_norm_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__gn_args *a = (const sdx__gn_args *)arg;
    int64_t cpg = a->channels / a->groups;
    float buf[SDX__CHUNK];
    (void)thread;
    for (int64_t ng = begin; ng < end; ng++) {
        int64_t off = ng * cpg * a->spatial, g = ng % a->groups;
        double mean, var;
        float rstd;
        sdx__moments(a->x, off, cpg * a->spatial, &mean, &var);
        rstd = (float)(1.0 / sqrt(var + (double)a->eps));
        for (int64_t c = 0; c < cpg; c++) {
            int64_t ch = g * cpg + c;
            float gm = a->gamma ? sdx__get_f32(a->gamma, ch) : 1.0f;
            float bt = a->beta ? sdx__get_f32(a->beta, ch) : 0.0f;
            /* x - mean first: x * mul + (beta - mean * mul) cancels when the
             * mean is large against the spread, and then depends on whether
             * the compiler contracts it into an FMA (the tiled VAE decode
             * applies the same map, sdx__vae_norm_affine) */
            float mul = gm * rstd, fmean = (float)mean;
            for (int64_t i = 0; i < a->spatial; i += SDX__CHUNK) {
                int64_t n = SDX__MIN((int64_t)SDX__CHUNK, a->spatial - i), o = off + c * a->spatial + i;
                sdx__load_f32(a->x->data, a->x->dtype, o, n, buf);
                for (int64_t j = 0; j < n; j++) buf[j] = (buf[j] - fmean) * mul + bt;
                if (a->fuse_silu) sdx__act_n(buf, n, SDX__ACT_SILU);
                sdx__store_f32(a->y->data, a->y->dtype, o, n, buf);
            }
        }
    }
}

static int sdx__cpu_group_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                           const sdx_tensor *gamma, const sdx_tensor *beta, int fuse_silu, sdx_dtype compute) {
    static const char op[] = "group_norm";
    sdx__gn_args a;
    a.y = y; a.x = x; a.gamma = gamma; a.beta = beta;
    a.channels = x->shape[1]; a.groups = groups; a.eps = eps; a.fuse_silu = fuse_silu;
    (void)compute;
    a.spatial = a.channels && x->shape[0] ? sdx_tensor_numel(x) / (x->shape[0] * a.channels) : 0;
    sdx__parallel_for(ctx, x->shape[0] * groups, sdx__group_norm_range, &a);
    return sdx__trace_check(ctx, op, y);
}

typedef struct { sdx_tensor *y; const sdx_tensor *x, *gamma, *beta; int64_t d; float eps; } sdx__ln_args;

static void sdx__layer_norm_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__ln_args *a = (const sdx__ln_args *)arg;
    float buf[SDX__CHUNK], gm[SDX__CHUNK], bt[SDX__CHUNK];
    (void)thread;
    for (int64_t r = begin; r < end; r++) {
        double mean, var;
        float rstd;
        sdx__moments(a->x, r * a->d, a->d, &mean, &var);
        rstd = (float)(1.0 / sqrt(var + (double)a->eps));
        for (int64_t i = 0; i < a->d; i += SDX__CHUNK) {
            int64_t n = SDX__MIN((int64_t)SDX__CHUNK, a->d - i);
            sdx__load_f32(a->x->data, a->x->dtype, r * a->d + i, n, buf);
            if (a->gamma) sdx__load_f32(a->gamma->data, a->gamma->dtype, i, n, gm);
            else for (int64_t j = 0; j < n; j++) gm[j] = 1.0f;
            if (a->beta) sdx__load_f32(a->beta->data, a->beta->dtype, i, n, bt);
            else for (int64_t j = 0; j < n; j++) bt[j] = 0.0f;
            for (int64_t j = 0; j < n; j++) buf[j] = (buf[j] - (float)mean) * rstd * gm[j] + bt[j];
            sdx__store_f32(a->y->data, a->y->dtype, r * a->d + i, n, buf);
        }
    }
}

static int sdx__cpu_layer_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float eps,
                           const sdx_tensor *gamma, const sdx_tensor *beta) {
    static const char op[] = "layer_norm";
    sdx__ln_args a;
    a.d = x->shape[x->ndim - 1];
    a.y = y; a.x = x; a.gamma = gamma; a.beta = beta; a.eps = eps;
    if (a.d > 0) sdx__parallel_for(ctx, sdx_tensor_numel(x) / a.d, sdx__layer_norm_range, &a);
    return sdx__trace_check(ctx, op, y);
}

/* Softmax of one f32 row in place: max-subtracted, f32 sum. */
static void sdx__softmax_row(float *v, int64_t n) {
    float mx = -INFINITY, sum = 0, inv;
#ifdef SDX_UNSAFE_HALF_SOFTMAX
    for (int64_t i = 0; i < n; i++) v[i] = sdx__round_f16(v[i]);
    for (int64_t i = 0; i < n; i++) mx = v[i] > mx ? v[i] : mx;
    for (int64_t i = 0; i < n; i++) { v[i] = sdx__round_f16(expf(v[i] - mx)); sum = sdx__round_f16(sum + v[i]); }
#else
    for (int64_t i = 0; i < n; i++) mx = v[i] > mx ? v[i] : mx;
    if (mx == -INFINITY) mx = 0;    /* fully masked row: all zeros below */
    for (int64_t i = 0; i < n; i++) v[i] -= mx;
    sdx__exp_n(v, n);
    for (int64_t i = 0; i < n; i++) sum += v[i];
#endif
    inv = sum > 0 ? 1.0f / sum : 0.0f;
    for (int64_t i = 0; i < n; i++) v[i] *= inv;
}

typedef struct { sdx_tensor *y; const sdx_tensor *x; int64_t d; sdx_ctx *ctx; } sdx__sm_args;

static void sdx__softmax_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__sm_args *a = (const sdx__sm_args *)arg;
    float *row = sdx__scratch_f32(a->ctx, thread);
    for (int64_t r = begin; r < end; r++) {
        sdx__load_f32(a->x->data, a->x->dtype, r * a->d, a->d, row);
        sdx__softmax_row(row, a->d);
        sdx__store_f32(a->y->data, a->y->dtype, r * a->d, a->d, row);
    }
}

static int sdx__cpu_softmax(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "softmax";
    sdx__sm_args a;
    int rc;
    a.y = y; a.x = x; a.d = x->shape[x->ndim - 1]; a.ctx = ctx;
    if (a.d == 0) return SDX_OK;
    if ((rc = sdx__scratch_reserve(ctx, (size_t)a.d * sizeof(float))) != SDX_OK) return rc;
    sdx__parallel_for(ctx, sdx_tensor_numel(x) / a.d, sdx__softmax_range, &a);
    return sdx__trace_check(ctx, op, y);
}

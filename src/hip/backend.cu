#pragma once
#include "api_hip.h"
#include "kernels.cu"
#include "gemm.cu"
#include "attention.cu"
/* ===================================================================== */
/*  The backend: device memory, launches, sdx_hip_use                     */
/* ===================================================================== */
/* Everything runs in order on the calling thread's default stream
 * (hipStreamPerThread: a stream a graph can be captured from; the
 * synchronous copies wait for it); uploads and downloads are synchronous
 * copies, so a download sees every kernel before it. A recorded graph
 * (sdx_backend.graph) replays a model call's kernels and uploads with one
 * launch on the same stream. A launch error is reported by the op that launched; an
 * error inside a kernel surfaces at the next download (the tracer's
 * per-op downloads localise it). sdx.h checks every op's operands and
 * shapes before the call; the ops here refuse only sizes past the launch
 * grid. */

/* One recorded model call: the instantiated graph, and the pinned host
 * memory its upload copies read (refilled before each replay). */
#define SDX__HIP_GRAPH_SLOTS 4
#define SDX__HIP_STAGING ((size_t)64 << 10)
typedef struct {
    hipGraphExec_t exec;    /* NULL: nothing recorded */
    unsigned char *staging; /* SDX__HIP_STAGING bytes, pinned */
    size_t staged;          /* bytes of it the uploads so far took */
    unsigned generation;    /* the backend's buffers it was recorded with */
} sdx__hip_graph;

/* Device memory an op needs while it runs, grown to the largest need and
 * kept (sdx__hip_need). */
typedef struct {
    void *p;
    size_t bytes;
} sdx__hip_buf;

/* A convolution weight the backend keeps channels-last, [O][kh][kw][C]
 * instead of sdx's [O][C][kh][kw], known by its device address: the
 * channels-last convolutions then read it as it is instead of permuting a
 * copy every call (sdx__hip_weight_added). */
typedef struct {
    const void *data;
    int64_t o, c, taps;
    int dtype;
} sdx__hip_cl_weight;

typedef struct sdx__hip {
    int device;
    int mma;                /* matrix-unit kind of the loaded code (SDX__HIP_MMA) */
    int gemm_mma;           /* the GEMMs may use it (their shared memory granted) */
    int gemm_threads;       /* a block of the matrix-unit GEMM, as its device code has it */
    int wgmma;              /* its 128-tiles may run on Hopper's wgmma (sm_90a code; shared memory granted) */
    void *tmap_encode;      /* a linear's may be fed by the TMA: the driver's tensor-map encoder, or NULL */
    int attention_mma;      /* attention may (NVIDIA's mma.sync; shared memory granted) */
    int flash64_blocks[2][2]; /* blocks an SM of head dim 64's attention, [bf16][32-key tiles] */
    int gemm_blocks[2];     /* blocks an SM of the 128-tile GEMMs: [0] mma.sync's, [1] wgmma's and the TMA's */
    int flash_wg;           /* head dims up to 80 may run on wgmma (SDX__HIP_FLASH_WG; shared memory granted) */
    int warp;               /* threads per warp/wavefront */
    int sms;                /* multiprocessors (compute units) */
    size_t smem_optin;      /* dynamic shared memory a block may ask for */
    sdx__hip_buf sums;      /* group-norm partial sums (doubles) */
    sdx__hip_buf work;      /* a convolution's channels-last copies */
    sdx__hip_buf product;   /* a linear_geglu's product when it is not fused and the caller gave no h */
    sdx__hip_cl_weight *cl; /* weights kept channels-last, sorted by address */
    int n_cl, cap_cl;
    unsigned generation;    /* bumped when a buffer is replaced: graphs that used it are stale */
    sdx__hip_graph graphs[SDX__HIP_GRAPH_SLOTS];
    int recording, checking; /* the slot being captured, or whose staging the uploads refill; -1 none */
    char name[400];
    char arch[64];
} sdx__hip;

/* Every launch goes through here: the simulator (tests/gpu/sim.h) runs
 * kernels on the CPU where <<<>>> does not exist. */
template <typename... P, typename... A>
static void sdx__hip_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, A... args) {
#if defined(SDX_HIP_SIM)
    sdx_sim_launch(kernel, grid, block, smem, args...);
#elif SDX__HIP_PDL
    /* may start before the previous kernel ends (sdx__hip_wait_prior) */
    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute overlap = {};
    overlap.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    overlap.val.programmaticStreamSerializationAllowed = 1;
    config.gridDim = grid;
    config.blockDim = block;
    config.dynamicSmemBytes = smem;
    config.stream = hipStreamPerThread;
    config.attrs = &overlap;
    config.numAttrs = 1;
    (void)cudaLaunchKernelEx(&config, kernel, ((P)args)...);      /* an error stays the thread's last: sdx__hip_check */
#else
    kernel<<<grid, block, smem, hipStreamPerThread>>>(((P)args)...);
#endif
}

static sdx__hip *sdx__hip_of(sdx_ctx *ctx) { return (sdx__hip *)sdx_backend_user(ctx); }

/* The runtime's last error, if any, as an sdx error naming the op. */
static int sdx__hip_check(sdx_ctx *ctx, const char *op) {
    hipError_t e = hipGetLastError();
    if (e == hipSuccess) return SDX_OK;
    return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: GPU error: %s", op, hipGetErrorString(e));
}

/* ---- memory ---------------------------------------------------------------- */

static void *sdx__hip_alloc(void *user, size_t bytes) {
    void *p = NULL;
    sdx__hip *s = (sdx__hip *)user;
    if (hipSetDevice(s->device) != hipSuccess || hipMalloc(&p, bytes) != hipSuccess) {
        (void)hipGetLastError();    /* an out-of-memory is not sticky: clear it */
        return NULL;
    }
    return p;
}

static void sdx__hip_free(void *user, void *ptr) {
    (void)user;
    if (ptr) (void)hipFree(ptr);
}

static int sdx__hip_copy_status(hipError_t e) { return e == hipSuccess ? SDX_OK : SDX_ERR_UNSUPPORTED; }

/* While a graph is recorded an upload is staged in pinned memory and
 * copied from there by the graph (a synchronous copy cannot be captured);
 * before a replay it only refills its place in the staging. */
static int sdx__hip_upload(void *user, void *dst, const void *src, size_t bytes) {
    sdx__hip *s = (sdx__hip *)user;
    int slot = s->recording >= 0 ? s->recording : s->checking;
    if (!bytes) return SDX_OK;
    if (slot >= 0) {
        sdx__hip_graph *g = &s->graphs[slot];
        unsigned char *at = g->staging + g->staged;
        if (bytes > SDX__HIP_STAGING - g->staged) return SDX_ERR_NOMEM;     /* the call is not recorded */
        memcpy(at, src, bytes);
        g->staged += (bytes + 255) / 256 * 256;
        if (s->recording >= 0) return sdx__hip_copy_status(hipMemcpyAsync(dst, at, bytes, hipMemcpyHostToDevice, hipStreamPerThread));
        return SDX_OK;
    }
    return sdx__hip_copy_status(hipMemcpy(dst, src, bytes, hipMemcpyHostToDevice));
}

static int sdx__hip_download(void *user, void *dst, const void *src, size_t bytes) {
    (void)user;
    return bytes ? sdx__hip_copy_status(hipMemcpy(dst, src, bytes, hipMemcpyDeviceToHost)) : SDX_OK;
}

static void sdx__hip_release(void *user) {
    sdx__hip *s = (sdx__hip *)user;
    if (!s) return;
    if (s->sums.p) (void)hipFree(s->sums.p);
    if (s->work.p) (void)hipFree(s->work.p);
    if (s->product.p) (void)hipFree(s->product.p);
    free(s->cl);
    for (int i = 0; i < SDX__HIP_GRAPH_SLOTS; i++) {
        if (s->graphs[i].exec) (void)hipGraphExecDestroy(s->graphs[i].exec);
        if (s->graphs[i].staging) (void)hipHostFree(s->graphs[i].staging);
    }
    free(s);
}

/* ---- graphs (sdx_backend.graph) -------------------------------------------- */

static int sdx__hip_graph_fail(sdx_ctx *ctx, const char *what) {
    hipError_t e = hipGetLastError();
    return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "graph: %s failed: %s", what, hipGetErrorString(e));
}

/* Ends a capture; keep: instantiate it into the slot and launch it. */
static int sdx__hip_graph_end(sdx_ctx *ctx, sdx__hip *s, sdx__hip_graph *g, int keep) {
    hipGraph_t graph = NULL;
    hipError_t e = hipStreamEndCapture(hipStreamPerThread, &graph);
    s->recording = -1;
    if (e != hipSuccess || !keep) {
        if (graph) (void)hipGraphDestroy(graph);
        (void)hipGetLastError();
        return keep ? sdx__hip_graph_fail(ctx, "ending the capture") : SDX_OK;
    }
    e = hipGraphInstantiateWithFlags(&g->exec, graph, 0);
    (void)hipGraphDestroy(graph);
    if (e != hipSuccess) { g->exec = NULL; return sdx__hip_graph_fail(ctx, "instantiating the capture"); }
    g->generation = s->generation;
    if (hipGraphLaunch(g->exec, hipStreamPerThread) != hipSuccess) return sdx__hip_graph_fail(ctx, "launching the graph");
    return SDX_OK;
}

static int sdx__hip_graph_op(sdx_ctx *ctx, int slot, int action) {
    sdx__hip *s = sdx__hip_of(ctx);
    sdx__hip_graph *g;
    if (slot < 0 || slot >= SDX__HIP_GRAPH_SLOTS) return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "graph: no slot %d", slot);
    g = &s->graphs[slot];
    switch (action) {
    case SDX_GRAPH_RECORD:
        s->checking = -1;
        if (g->exec) (void)hipGraphExecDestroy(g->exec);
        g->exec = NULL;
        g->staged = 0;
        if (!g->staging && hipHostMalloc((void **)&g->staging, SDX__HIP_STAGING, 0) != hipSuccess) {
            g->staging = NULL;
            return sdx__hip_graph_fail(ctx, "pinned staging memory");
        }
        if (hipStreamBeginCapture(hipStreamPerThread, hipStreamCaptureModeRelaxed) != hipSuccess)
            return sdx__hip_graph_fail(ctx, "beginning a capture");
        s->recording = slot;
        return SDX_OK;
    case SDX_GRAPH_KEEP:
        return sdx__hip_graph_end(ctx, s, g, 1);
    case SDX_GRAPH_DROP:
        s->checking = -1;   /* uploads copy again; a recording from before stays */
        return s->recording >= 0 ? sdx__hip_graph_end(ctx, s, g, 0) : SDX_OK;
    case SDX_GRAPH_CHECK:
        /* the last launch reads the staging until it is done */
        if (hipStreamSynchronize(hipStreamPerThread) != hipSuccess) return sdx__hip_graph_fail(ctx, "waiting for the stream");
        g->staged = 0;
        s->checking = slot;
        return SDX_OK;
    case SDX_GRAPH_LAUNCH:
        s->checking = -1;
        if (!g->exec || g->generation != s->generation) return 1;
        if (hipGraphLaunch(g->exec, hipStreamPerThread) != hipSuccess) return sdx__hip_graph_fail(ctx, "launching the graph");
        return SDX_OK;
    default:
        return sdx_fail(ctx, SDX_ERR_INVALID_ARG, "graph: unknown action %d", action);
    }
}

/* ---- launch-grid limits (sdx.h checks the ops' contracts before a call) ------ */

static int sdx__hip_bad(sdx_ctx *ctx, const char *op, const char *want, const sdx_tensor *a, const sdx_tensor *b) {
    char sa[96], sb[96];
    sdx_shape_str(a, sa, sizeof sa);
    if (b) sdx_shape_str(b, sb, sizeof sb); else sb[0] = 0;
    return sdx_fail(ctx, SDX_ERR_INVALID_ARG, "%s: expected %s (got %s%s%s)", op, want, sa, b ? ", " : "", sb);
}

/* Blocks for a grid-stride loop over n elements. */
static unsigned sdx__hip_blocks(int64_t n, int threads) {
    int64_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : (b > (1 << 20) ? (1 << 20) : b));
}

/* ---- elementwise and layout ---------------------------------------------------- */

/* Values a thread of a memory-bound kernel takes at once (its template
 * argument W): 8, as 16-byte accesses, when the sizes allow it (no group
 * of 8 straddles what the kernel indexes by: a row, plane, image or
 * channel) and every pointer is 16-byte aligned; else 1. */
static int sdx__hip_width(int sizes_ok, const void *a, const void *b = NULL, const void *c = NULL, const void *d = NULL) {
    return sizes_ok && (uintptr_t)a % 16 == 0 && (uintptr_t)b % 16 == 0 && (uintptr_t)c % 16 == 0 && (uintptr_t)d % 16 == 0 ? 8 : 1;
}

static int sdx__hip_ew(sdx_ctx *ctx, const char *op, int kind, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b, float s) {
    int64_t n = sdx_tensor_numel(y);
    int w = sdx__hip_width(n % 8 == 0, y->data, a->data, b ? b->data : NULL);
    if (n == 0) return SDX_OK;
    sdx__hip_launch(w == 8 ? sdx__hip_k_ew<8> : sdx__hip_k_ew<1>, sdx__hip_blocks(n / w, 256), 256, 0, kind, y->data, y->dtype, a->data,
                    a->dtype, b ? b->data : NULL, b ? (int)b->dtype : 0, n, s);
    return sdx__hip_check(ctx, op);
}

/* compute: the GPU computes in f32 (its bf16 mode is its half activations) */
static int sdx__hip_silu_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute) {
    (void)compute;
    return sdx__hip_ew(ctx, "silu", SDX__HIP_SILU, y, x, NULL, 0);
}
static int sdx__hip_gelu_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute) {
    (void)compute;
    return sdx__hip_ew(ctx, "gelu", SDX__HIP_GELU, y, x, NULL, 0);
}
static int sdx__hip_quick_gelu_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    return sdx__hip_ew(ctx, "quick_gelu", SDX__HIP_QUICK_GELU, y, x, NULL, 0);
}
static int sdx__hip_scale_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float s) { return sdx__hip_ew(ctx, "scale", SDX__HIP_SCALE, y, x, NULL, s); }
static int sdx__hip_copy_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { return sdx__hip_ew(ctx, "copy", SDX__HIP_COPY, y, x, NULL, 0); }
static int sdx__hip_add_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    return sdx__hip_ew(ctx, "add", SDX__HIP_ADD, y, a, b, 0);
}
static int sdx__hip_mul_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    return sdx__hip_ew(ctx, "mul", SDX__HIP_MUL, y, a, b, 0);
}
static int sdx__hip_leaky_relu_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float slope) {
    return sdx__hip_ew(ctx, "leaky_relu", SDX__HIP_LEAKY_RELU, y, x, NULL, slope);
}

/* clamp and tanh_clamp (bounds and limit checked in ops.c); y may alias x */
static int sdx__hip_clamp_run(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, float lo, float hi, float limit) {
    int64_t n = sdx_tensor_numel(y);
    if (n == 0) return SDX_OK;
    sdx__hip_launch(sdx__hip_k_clamp, sdx__hip_blocks(n, 256), 256, 0, y->data, y->dtype, x->data, x->dtype, n, lo, hi, limit);
    return sdx__hip_check(ctx, op);
}
static int sdx__hip_clamp_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float lo, float hi) {
    return sdx__hip_clamp_run(ctx, "clamp", y, x, lo, hi, 0);
}
static int sdx__hip_tanh_clamp_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float limit) {
    return sdx__hip_clamp_run(ctx, "tanh_clamp", y, x, 0, 0, limit);
}

static int sdx__hip_geglu_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute) {
    (void)compute;
    static const char op[] = "geglu";
    int64_t n = sdx_tensor_numel(y), d;
    d = y->shape[y->ndim - 1];
    if (n == 0 || d == 0) return SDX_OK;
    int w = sdx__hip_width(d % 8 == 0, y->data, x->data);
    sdx__hip_launch(w == 8 ? sdx__hip_k_geglu<8> : sdx__hip_k_geglu<1>, sdx__hip_blocks(n / w, 256), 256, 0, y->data, y->dtype, x->data,
                    x->dtype, n, d);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_add_channel_bias_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *v) {
    static const char op[] = "add_channel_bias";
    int64_t n = sdx_tensor_numel(y), nc;
    nc = x->shape[0] * x->shape[1];
    if (n == 0 || nc == 0) return SDX_OK;
    int w = sdx__hip_width(n / nc % 8 == 0, y->data, x->data);
    sdx__hip_launch(w == 8 ? sdx__hip_k_chan_bias<8> : sdx__hip_k_chan_bias<1>, sdx__hip_blocks(n / w, 256), 256, 0, y->data, y->dtype,
                    x->data, x->dtype, v->data, v->dtype, n, n / nc);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_resize_nearest_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "resize_nearest";
    int64_t n = sdx_tensor_numel(y);
    if (n == 0) return SDX_OK;
    sdx__hip_launch(sdx__hip_k_resize, sdx__hip_blocks(n, 256), 256, 0, y->data, y->dtype, x->data, x->dtype, n, x->shape[2], x->shape[3],
                    y->shape[2], y->shape[3]);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_pad_circular_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int top, int left, int bottom, int right) {
    static const char op[] = "pad_circular";
    int64_t n = sdx_tensor_numel(y);
    (void)bottom; (void)right;   /* y's shape says them (checked in sdx.h) */
    if (n == 0) return SDX_OK;
    sdx__hip_launch(sdx__hip_k_pad_circular, sdx__hip_blocks(n, 256), 256, 0, y->data, y->dtype, x->data, x->dtype, n, x->shape[2], x->shape[3],
                    y->shape[2], y->shape[3], top, left);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_concat_channels_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) {
    static const char op[] = "concat_channels";
    int64_t n = sdx_tensor_numel(y), na = a->shape[1] * a->shape[2] * a->shape[3], nb = b->shape[1] * b->shape[2] * b->shape[3];
    if (n == 0) return SDX_OK;
    int w = sdx__hip_width(na % 8 == 0 && nb % 8 == 0, y->data, a->data, b->data);
    sdx__hip_launch(w == 8 ? sdx__hip_k_concat<8> : sdx__hip_k_concat<1>, sdx__hip_blocks(n / w, 256), 256, 0, y->data, y->dtype, a->data,
                    a->dtype, b->data, b->dtype, n, na, nb);
    return sdx__hip_check(ctx, op);
}

/* [batch][rows][cols] -> [batch][cols][rows]: 16-bit values of one type
 * 16 bytes at a time where the sizes and addresses allow, else value by
 * value with any conversion. */
static int sdx__hip_transpose(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, int64_t batch, int64_t rows, int64_t cols) {
    const int raw16 = x->dtype == y->dtype && x->dtype != SDX_F32 && sdx__hip_width(rows % 8 == 0 && cols % 8 == 0, y->data, x->data) == 8;
    if (batch == 0 || rows == 0 || cols == 0) return SDX_OK;
    if ((rows + 31) / 32 > 65535 || batch > 65535) return sdx__hip_bad(ctx, op, "at most 2M rows and 65535 images", x, NULL);
    if (raw16)
        sdx__hip_launch(sdx__hip_k_transpose16, dim3((unsigned)((cols + 63) / 64), (unsigned)((rows + 63) / 64), (unsigned)batch), 256, 0,
                        (uint16_t *)y->data, (const uint16_t *)x->data, rows, cols);
    else
        sdx__hip_launch(sdx__hip_k_transpose, dim3((unsigned)((cols + 31) / 32), (unsigned)((rows + 31) / 32), (unsigned)batch), dim3(32, 8),
                        0, y->data, y->dtype, x->data, x->dtype, rows, cols);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_nchw_to_nlc_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "nchw_to_nlc";
    return sdx__hip_transpose(ctx, op, y, x, x->shape[0], x->shape[1], x->shape[2] * x->shape[3]);
}

static int sdx__hip_nlc_to_nchw_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "nlc_to_nchw";
    return sdx__hip_transpose(ctx, op, y, x, x->shape[0], x->shape[1], x->shape[2]);
}

/* ---- norms and softmax ------------------------------------------------------------ */

/* Makes `b` hold at least `bytes` for op's `what`. */
static int sdx__hip_need(sdx_ctx *ctx, sdx__hip *s, sdx__hip_buf *b, size_t bytes, const char *op, const char *what) {
    if (b->bytes >= bytes) return SDX_OK;
    if (s->recording >= 0)  /* a capture cannot free memory: the call runs as it comes */
        return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: its %s must grow, which a graph capture cannot do", op, what);
    s->generation++;        /* a graph that used the old one is stale */
    if (b->p) (void)hipFree(b->p);
    b->p = NULL;
    b->bytes = 0;
    if (hipMalloc(&b->p, bytes) == hipSuccess) b->bytes = bytes;
    else { (void)hipGetLastError(); b->p = NULL; }
    sdx_backend_scratch(ctx, s->sums.bytes + s->work.bytes + s->product.bytes);
    return b->p ? SDX_OK : sdx_fail(ctx, SDX_ERR_NOMEM, "%s: out of device memory for %s (%zu bytes)", op, what, bytes);
}

static int sdx__hip_group_norm_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                                  const sdx_tensor *gamma, const sdx_tensor *beta, int fuse_silu, sdx_dtype compute) {
    (void)compute;
    static const char op[] = "group_norm";
    sdx__hip *s = sdx__hip_of(ctx);
    int64_t channels, spatial, count, ng;
    int parts, rc;
    channels = x->shape[1];
    if (sdx_tensor_numel(x) == 0 || channels == 0) return SDX_OK;
    spatial = sdx_tensor_numel(x) / (x->shape[0] * channels);
    count = channels / groups * spatial;
    ng = x->shape[0] * groups;
    if (spatial == 0) return SDX_OK;
    if (ng > 65535) return sdx__hip_bad(ctx, op, "at most 65535 (image, group) pairs", x, NULL);
    /* about 16 K values per block, at most 128 blocks per group */
    parts = (int)((count + 16383) / 16384);
    parts = parts < 1 ? 1 : (parts > 128 ? 128 : parts);
    if ((rc = sdx__hip_need(ctx, s, &s->sums, (size_t)((2 * parts + 1) * ng) * sizeof(double), op, "partial sums")) != SDX_OK) return rc;
    {
        dim3 grid((unsigned)parts, (unsigned)ng);
        double *psum = (double *)s->sums.p, *psq = psum + ng * parts, *shift = psum + 2 * ng * parts;
        int w = sdx__hip_width(spatial % 8 == 0, y->data, x->data);
        sdx__hip_launch(w == 8 ? sdx__hip_k_gn_stats<8> : sdx__hip_k_gn_stats<1>, grid, SDX__HIP_GN_THREADS, 0, x->data, x->dtype, count,
                        parts, psum, psq, shift);
        sdx__hip_launch(w == 8 ? sdx__hip_k_gn_apply<8> : sdx__hip_k_gn_apply<1>, grid, SDX__HIP_GN_THREADS, 0, y->data, y->dtype, x->data,
                        x->dtype, count, parts, psum, psq, shift, groups, spatial, eps, gamma ? gamma->data : NULL,
                        gamma ? (int)gamma->dtype : 0, beta ? beta->data : NULL, beta ? (int)beta->dtype : 0, fuse_silu);
    }
    return sdx__hip_check(ctx, op);
}

/* Blocks for one warp per row, 256 threads a block. */
static unsigned sdx__hip_row_blocks(const sdx__hip *s, int64_t rows) {
    int64_t per = 256 / s->warp;
    return (unsigned)((rows + per - 1) / per);
}

/* A row in registers (sdx__hip_k_layer_norm_row) up to 5 loads of 8
 * values a lane, 1280 values a warp of 32: SD's widths (320 to 1280) and
 * the text encoders' (768 to 1280). */
#define SDX__HIP_LN_LOADS 5

static int sdx__hip_layer_norm_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float eps,
                                  const sdx_tensor *gamma, const sdx_tensor *beta) {
    static const char op[] = "layer_norm";
    const sdx__hip *s = sdx__hip_of(ctx);
    const void *g = gamma ? gamma->data : NULL, *b = beta ? beta->data : NULL;
    int64_t d, rows;
    int w;
    d = x->shape[x->ndim - 1];
    if (d == 0 || sdx_tensor_numel(x) == 0) return SDX_OK;
    rows = sdx_tensor_numel(x) / d;
    w = sdx__hip_width(d % 8 == 0, y->data, x->data, g, b);
    sdx__hip_launch(w == 8 && d <= (int64_t)s->warp * 8 * SDX__HIP_LN_LOADS ? sdx__hip_k_layer_norm_row<SDX__HIP_LN_LOADS>
                    : w == 8                                               ? sdx__hip_k_layer_norm<8>
                                                                           : sdx__hip_k_layer_norm<1>,
                    sdx__hip_row_blocks(s, rows), 256, 0, y->data, y->dtype, x->data, x->dtype, rows, d, eps, g,
                    gamma ? (int)gamma->dtype : 0, b, beta ? (int)beta->dtype : 0);
    return sdx__hip_check(ctx, op);
}

static int sdx__hip_softmax_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) {
    static const char op[] = "softmax";
    int64_t d, rows;
    d = x->shape[x->ndim - 1];
    if (d == 0 || sdx_tensor_numel(x) == 0) return SDX_OK;
    rows = sdx_tensor_numel(x) / d;
    sdx__hip_launch(sdx__hip_k_softmax, sdx__hip_row_blocks(sdx__hip_of(ctx), rows), 256, 0, y->data, y->dtype, x->data, x->dtype, rows, d);
    return sdx__hip_check(ctx, op);
}

/* ---- linear and conv2d ---------------------------------------------------------------- */

/* The matrix-unit GEMM kernels of one tile size BT: [A's kind][bf16]
 * [16-byte loads: every row starts 16-byte aligned]. Channels-last copies
 * always have such rows (C % 8 == 0), so that kind has only the one. The
 * value-by-value gather comes in 64-tiles alone (sdx__hip_gemm_plan): at
 * 128 its registers would spill, and only a convolution of a few
 * channels (a 4-channel conv_in) takes it. */
typedef void (*sdx__hip_gemm_kernel)(sdx__hip_gemm);
template <int BT>
static sdx__hip_gemm_kernel sdx__hip_gemm_mma_kernel(int ak, int bf16, int vw) {
    static const sdx__hip_gemm_kernel kernels[3][2][2] = {
        { { sdx__hip_k_gemm_mma<SDX__HIP_A_ROWS, SDX__HIP_DT_F16, 0, BT>, sdx__hip_k_gemm_mma<SDX__HIP_A_ROWS, SDX__HIP_DT_F16, 1, BT> },
          { sdx__hip_k_gemm_mma<SDX__HIP_A_ROWS, SDX__HIP_DT_BF16, 0, BT>, sdx__hip_k_gemm_mma<SDX__HIP_A_ROWS, SDX__HIP_DT_BF16, 1, BT> } },
        { { sdx__hip_k_gemm_mma<SDX__HIP_A_CONV, SDX__HIP_DT_F16, 0, 64>, sdx__hip_k_gemm_mma<SDX__HIP_A_CONV, SDX__HIP_DT_F16, 1, 64> },
          { sdx__hip_k_gemm_mma<SDX__HIP_A_CONV, SDX__HIP_DT_BF16, 0, 64>, sdx__hip_k_gemm_mma<SDX__HIP_A_CONV, SDX__HIP_DT_BF16, 1, 64> } },
        { { sdx__hip_k_gemm_mma<SDX__HIP_A_NHWC, SDX__HIP_DT_F16, 1, BT>, sdx__hip_k_gemm_mma<SDX__HIP_A_NHWC, SDX__HIP_DT_F16, 1, BT> },
          { sdx__hip_k_gemm_mma<SDX__HIP_A_NHWC, SDX__HIP_DT_BF16, 1, BT>, sdx__hip_k_gemm_mma<SDX__HIP_A_NHWC, SDX__HIP_DT_BF16, 1, BT> } } };
    return kernels[ak][bf16 != 0][vw != 0];
}

/* Lets a kernel have `bytes` of dynamic shared memory (past the 48 KiB a
 * launch gets without asking); 0 when the device refuses. Once per
 * context, at sdx_hip_use: the attribute is the kernel's, not the
 * launch's, and setting it then keeps it out of graph captures. */
static int sdx__hip_grant(const sdx__hip *s, const void *kernel, int bytes) {
    if ((size_t)bytes > s->smem_optin) return 0;
#if defined(__HIPCC__)
    (void)kernel;
    return 1;       /* AMD: a block may use all of its LDS without asking (HIP ignores the attribute there) */
#endif
    if (bytes <= 48 * 1024) return 1;
    if (hipFuncSetAttribute(kernel, hipFuncAttributeMaxDynamicSharedMemorySize, bytes) != hipSuccess) {
        (void)hipGetLastError();
        return 0;
    }
    return 1;
}

/* Every matrix-unit GEMM kernel's shared memory; 0 when refused, and the
 * GEMMs then run on the SIMT kernel. */
static int sdx__hip_gemm_grant(const sdx__hip *s) {
    for (int i = 0; i < 12; i++)
        if (!sdx__hip_grant(s, (const void *)sdx__hip_gemm_mma_kernel<128>(i / 4, i & 2, i & 1), sdx__hip_tile<128>::SMEM) ||
            !sdx__hip_grant(s, (const void *)sdx__hip_gemm_mma_kernel<64>(i / 4, i & 2, i & 1), sdx__hip_tile<64>::SMEM))
            return 0;
    return 1;
}

/* The wgmma GEMM kernels: [channels-last convolution][bf16] (linears
 * and channels-last convolutions have 16-byte rows; the gather has none). */
template <int BN>
static sdx__hip_gemm_kernel sdx__hip_gemm_wgmma_kernel(int nhwc, int bf16) {
    static const sdx__hip_gemm_kernel kernels[2][2] = {
        { sdx__hip_k_gemm_wgmma<SDX__HIP_A_ROWS, SDX__HIP_DT_F16, BN>, sdx__hip_k_gemm_wgmma<SDX__HIP_A_ROWS, SDX__HIP_DT_BF16, BN> },
        { sdx__hip_k_gemm_wgmma<SDX__HIP_A_NHWC, SDX__HIP_DT_F16, BN>, sdx__hip_k_gemm_wgmma<SDX__HIP_A_NHWC, SDX__HIP_DT_BF16, BN> } };
    return kernels[nhwc != 0][bf16 != 0];
}

/* Their shared memory, both widths; 0 when refused. */
static int sdx__hip_wgmma_grant(const sdx__hip *s) {
    for (int i = 0; i < 4; i++)
        if (!sdx__hip_grant(s, (const void *)sdx__hip_gemm_wgmma_kernel<128>(i / 2, i % 2), sdx__hip_wg_tile<128>::SMEM) ||
            !sdx__hip_grant(s, (const void *)sdx__hip_gemm_wgmma_kernel<160>(i / 2, i % 2), sdx__hip_wg_tile<160>::SMEM))
            return 0;
    return 1;
}

/* The TMA-fed wgmma kernels: [channels-last convolution][bf16]. */
typedef void (*sdx__hip_tma_kernel)(sdx__hip_gemm, const sdx__hip_tmap, const sdx__hip_tmap);
template <int BN>
static sdx__hip_tma_kernel sdx__hip_gemm_tma_kernel(int nhwc, int bf16) {
    static const sdx__hip_tma_kernel kernels[2][2] = {
        { sdx__hip_k_gemm_tma<SDX__HIP_A_ROWS, SDX__HIP_DT_F16, BN>, sdx__hip_k_gemm_tma<SDX__HIP_A_ROWS, SDX__HIP_DT_BF16, BN> },
        { sdx__hip_k_gemm_tma<SDX__HIP_A_NHWC, SDX__HIP_DT_F16, BN>, sdx__hip_k_gemm_tma<SDX__HIP_A_NHWC, SDX__HIP_DT_BF16, BN> } };
    return kernels[nhwc != 0][bf16 != 0];
}

/* The TMA kernels' shared memory, both widths, kinds and types; 0 when refused. */
static int sdx__hip_tma_grant(const sdx__hip *s) {
    for (int i = 0; i < 4; i++)
        if (!sdx__hip_grant(s, (const void *)sdx__hip_gemm_tma_kernel<128>(i / 2, i % 2), sdx__hip_tma_tile<128>::SMEM) ||
            !sdx__hip_grant(s, (const void *)sdx__hip_gemm_tma_kernel<160>(i / 2, i % 2), sdx__hip_tma_tile<160>::SMEM))
            return 0;
    return 1;
}

/* The driver's cuTensorMapEncodeTiled, through the runtime (no link to
 * the driver library), where this build has the TMA kernels; else NULL. */
static void *sdx__hip_tmap_encoder(void) {
    void *fn = NULL;
#if !SDX__HIP_TMA
#elif defined(SDX_HIP_SIM)
    fn = sdx_sim_tmap_encoder();
#elif SDX__HIP_NVIDIA && CUDART_VERSION >= 12050
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
        fn = NULL;
    (void)hipGetLastError();
#endif
    return fn;
}

/* The tensor map of a tensor of 16-bit values: `rank` (2 to 4)
 * dimensions of dims[d] values (dims[0] a row's), dimension d + 1
 * strides[d] bytes apart, read in boxes of box[0] = 64 values by box[1] x
 * ... rows in the 128-byte swizzle, zeros past the edges. 0 when the
 * driver refuses it. */
static int sdx__hip_tmap_nd(const sdx__hip *s, sdx__hip_tmap *map, const void *base, int bf16, int rank, const uint64_t *dims,
                         const uint64_t *strides, const uint32_t *box) {
#if SDX__HIP_TMA && defined(SDX_HIP_SIM)
    (void)bf16;
    return s->tmap_encode && sdx_sim_tmap_encode_nd(map->opaque, base, 2, rank, dims, strides, box) == 0;
#elif SDX__HIP_TMA && SDX__HIP_NVIDIA && CUDART_VERSION >= 12050
    typedef CUresult (*encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *,
                                  const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
    cuuint64_t d[4], st[3];
    cuuint32_t b[4];
    const cuuint32_t steps[4] = { 1, 1, 1, 1 };
    static_assert(sizeof(CUtensorMap) == sizeof(sdx__hip_tmap), "a tensor map's bytes");
    if (rank < 2 || rank > 4) return 0;
    for (int i = 0; i < rank; i++) {
        d[i] = (cuuint64_t)dims[i];
        b[i] = (cuuint32_t)box[i];
        if (i + 1 < rank) st[i] = (cuuint64_t)strides[i];
    }
    return s->tmap_encode &&
           ((encode_fn)s->tmap_encode)((CUtensorMap *)map, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                       (cuuint32_t)rank, (void *)base, d, st, b, steps, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                       CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                       CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
#else
    (void)s, (void)map, (void)base, (void)bf16, (void)rank, (void)dims, (void)strides, (void)box;
    return 0;
#endif
}

/* A row-major matrix, `rows` rows of `cols`, in boxes of 64 values by
 * box_rows rows. */
static int sdx__hip_tmap_2d(const sdx__hip *s, sdx__hip_tmap *map, const void *base, int bf16, int64_t cols, int64_t rows,
                            int box_rows) {
    const uint64_t dims[2] = { (uint64_t)cols, (uint64_t)rows }, pitch = (uint64_t)cols * 2;
    const uint32_t box[2] = { 64, (uint32_t)box_rows };
    return sdx__hip_tmap_nd(s, map, base, bf16, 2, dims, &pitch, box);
}

/* A convolution's channels-last input x [images][H][W][C] in boxes of 64
 * channels by the tile's pixels (sdx__hip_conv_tma_box); 0 where the
 * convolution has no such box. */
static int sdx__hip_tmap_conv(const sdx__hip *s, sdx__hip_tmap *map, const sdx__hip_gemm &g, int bf16, int64_t images) {
    const sdx__hip_conv_box b = sdx__hip_conv_tma_box(g);
    const uint64_t c = (uint64_t)g.C, dims[4] = { c, (uint64_t)g.W, (uint64_t)g.H, (uint64_t)images };
    const uint64_t strides[3] = { c * 2, c * 2 * (uint64_t)g.W, c * 2 * (uint64_t)g.W * (uint64_t)g.H };
    const uint32_t box[4] = { 64, (uint32_t)b.w, (uint32_t)b.h, 1 };
    return b.w > 0 && sdx__hip_tmap_nd(s, map, g.x, bf16, 4, dims, strides, box);
}

/* A linear of one image, or (nhwc) a channels-last convolution of
 * `images`, launched on the TMA kernel, BN columns a tile, if its tensor
 * maps can be made; 0 leaves it to sdx__hip_k_gemm_wgmma. */
template <int BN>
static int sdx__hip_gemm_tma(const sdx__hip *s, const sdx__hip_gemm &g, dim3 grid, int nhwc, int64_t images) {
    const int bf16 = g.xt == SDX_BF16;
    sdx__hip_tmap ta, tw;
    if (!(nhwc ? sdx__hip_tmap_conv(s, &ta, g, bf16, images) : sdx__hip_tmap_2d(s, &ta, g.x, bf16, g.K, g.M, 128)) ||
        !sdx__hip_tmap_2d(s, &tw, g.w, bf16, g.K, g.N, g.geglu ? BN / 2 : BN))
        return 0;
    sdx__hip_launch(sdx__hip_gemm_tma_kernel<BN>(nhwc, bf16), grid, SDX__HIP_TMA_THREADS, (size_t)sdx__hip_tma_tile<BN>::SMEM, g, ta, tw);
    return 1;
}

/* x and w both in half types: the matrix units can multiply them, w
 * copied in x's type where the types differ (the SDXL VAE's bf16
 * activations and an f16 checkpoint), as the CPU's bf16 mode packs f16
 * weights into bf16 panels. */
static int sdx__hip_gemm_mma_halves(const sdx__hip *s, int xt, int wt) { return s->gemm_mma && xt != SDX_F32 && wt != SDX_F32; }

/* The matrix-unit kernels themselves take x and w of one half type. */
static int sdx__hip_gemm_mma_takes(const sdx__hip *s, int xt, int wt) { return sdx__hip_gemm_mma_halves(s, xt, wt) && xt == wt; }

static int sdx__hip_gemm_mma_converts_w(const sdx__hip *s, int xt, int wt) { return sdx__hip_gemm_mma_halves(s, xt, wt) && xt != wt; }

/* w [O][C][taps] as [O][taps][C] (or only converted, taps 1) in type yt at
 * y; 8 values a thread where C and the channels a block takes allow. */
static void sdx__hip_permute_taps(void *y, int yt, const sdx_tensor *w, int64_t c, int taps) {
    const int cb8 = SDX__HIP_PERMUTE_VALUES / taps / 8 * 8, w8 = cb8 > 0 && sdx__hip_width(c % 8 == 0, y, w->data) == 8;
    const int cb = w8 ? cb8 : SDX__HIP_PERMUTE_VALUES / taps;
    sdx__hip_launch(w8 ? sdx__hip_k_permute_taps<8> : sdx__hip_k_permute_taps<1>, dim3((unsigned)((c + cb - 1) / cb), (unsigned)w->shape[0]),
                    256, 0, y, yt, w->data, (int)w->dtype, c, taps, cb);
}

/* How a GEMM runs on the matrix units. Tiles of 128 rows (by 160
 * columns on the wgmma kernels where N allows, else 128) when they fill
 * three quarters of the GPU's block slots or more: the SMs times the
 * blocks an SM the tile's kernel holds (the runtime's occupancy query:
 * one of the wgmma and TMA kernels, whose six stages take 221 KiB; two
 * of mma.sync's on Hopper). Else, with k long enough (16 steps and
 * more), the same tiles with k split over `split` blocks so that all of
 * them start in one wave (each part 8 steps at least; f32 sums added in
 * order afterwards): SD 1.5's 16x16 and 8x8 levels have 32 and 16 tiles
 * of 128 x 160 for an H200's 132 SMs. Counting 128-wide tiles and two
 * blocks an SM, as this did before, split those into 192 and 208 blocks
 * of one-block SMs: a second wave of partial sums. Else tiles of 64, or
 * on the wgmma kernels the 128-tiles whole where k is long (a wave with
 * idle SMs costs less than a split's second one) or they fill a third
 * of the slots: SD 1.5's 2048 x 640 x 640 linears took 16.7 us as 320
 * mma.sync 64-tiles, where a one-wave TMA tile costs about 8 us beside
 * its 0.45 us a k-step (2048 x 1280 x K: 17.1 us at K = 1280, 44.3 at
 * 5120), 12.5 for these 10 steps. Not the matrix units: mma 0.
 * SDX_HIP_SPLIT_WAVES=0 plans as before (tools/gpu-session.sh's `plan2`
 * compares them on a GPU). */
#if defined(SDX_HIP_SPLIT_WAVES)
#define SDX__HIP_SPLIT_WAVES SDX_HIP_SPLIT_WAVES
#else
#define SDX__HIP_SPLIT_WAVES 1
#endif
typedef struct {
    int mma, bt, split;
} sdx__hip_plan;

static sdx__hip_plan sdx__hip_gemm_plan(const sdx__hip *s, const sdx__hip_gemm &g, int ak, int64_t batch) {
    sdx__hip_plan p = { sdx__hip_gemm_mma_takes(s, g.xt, g.wt) && g.K < 0x7fffffff - SDX__HIP_MBK && g.M < 0x7fffff00 && g.N < 0x7fffff00, 128,
                        1 };
    /* the kernel a 128-tile will take (sdx__hip_gemm_run decides it again with the operands' alignment) */
    const int wg = s->wgmma && ak != SDX__HIP_A_CONV && g.K % 8 == 0, bn = SDX__HIP_SPLIT_WAVES && wg && SDX__HIP_WG_WIDE && g.N % 160 == 0 ? 160 : 128;
    const int64_t slots = (int64_t)s->sms * (SDX__HIP_SPLIT_WAVES ? s->gemm_blocks[wg] : SDX__HIP_GEMM_MIN_BLOCKS);
    const int64_t tiles = (g.M + 127) / 128 * ((g.N + bn - 1) / bn) * batch, steps = (g.K + SDX__HIP_MBK - 1) / SDX__HIP_MBK;
    const int full = SDX__HIP_SPLIT_WAVES ? tiles * 4 >= slots * 3 : tiles >= s->sms;
    int64_t split = tiles > 0 ? slots / tiles : 1;
    if (ak == SDX__HIP_A_CONV) p.bt = 64;     /* the gather's only size (sdx__hip_k_gemm_mma) */
    if (!p.mma || ak == SDX__HIP_A_CONV || full) return p;
    split = split < steps / 8 ? split : steps / 8;
    split = split < 16 ? split : 16;
    if (split >= 2 && batch * split <= 65535) p.split = (int)split;
    else if (!(SDX__HIP_SPLIT_WAVES && wg && (steps >= 16 || tiles * 3 >= slots))) p.bt = 64;
    return p;
}

/* f32 bytes a plan's partial sums take (0: not split). */
static size_t sdx__hip_plan_part_bytes(const sdx__hip_plan &p, const sdx__hip_gemm &g, int64_t batch) {
    return p.split > 1 ? (size_t)p.split * (size_t)batch * (size_t)g.M * (size_t)g.N * sizeof(float) : 0;
}

/* The matrix-unit kernel of a GEMM: a linear of one image (and with
 * SDX_HIP_TMA_CONV a stride-1 channels-last convolution) on wgmma fed
 * by the TMA where its tensor maps can be made, else wgmma fed by the
 * threads (BN 160 where `wide`, else 128), else mma.sync tiles of bt. */
static void sdx__hip_gemm_mma_launch(const sdx__hip *s, const sdx__hip_gemm &g, int ak, dim3 grid, int64_t batch, int vw, int wgmma,
                                     int wide, int bt) {
    const int bf16 = g.xt == SDX_BF16, nhwc = ak == SDX__HIP_A_NHWC;
    const int tma = wgmma && s->tmap_encode && (nhwc ? SDX__HIP_TMA_CONV : ak == SDX__HIP_A_ROWS && batch == 1);
    if (tma && (wide ? sdx__hip_gemm_tma<160>(s, g, grid, nhwc, batch) : sdx__hip_gemm_tma<128>(s, g, grid, nhwc, batch))) return;
    if (wide)
        sdx__hip_launch(sdx__hip_gemm_wgmma_kernel<160>(nhwc, bf16), grid, SDX__HIP_WG_THREADS, (size_t)sdx__hip_wg_tile<160>::SMEM, g);
    else if (wgmma)
        sdx__hip_launch(sdx__hip_gemm_wgmma_kernel<128>(nhwc, bf16), grid, SDX__HIP_WG_THREADS, (size_t)sdx__hip_wg_tile<128>::SMEM, g);
    else if (bt == 128)
        sdx__hip_launch(sdx__hip_gemm_mma_kernel<128>(ak, bf16, vw), grid, s->gemm_threads, (size_t)sdx__hip_tile<128>::SMEM, g);
    else
        sdx__hip_launch(sdx__hip_gemm_mma_kernel<64>(ak, bf16, vw), grid, s->gemm_threads, (size_t)sdx__hip_tile<64>::SMEM, g);
}

/* Launches the GEMM as planned (sdx__hip_gemm_plan; g.part holds its
 * partial sums when split), or on the SIMT kernel. */
static int sdx__hip_gemm_run(sdx_ctx *ctx, const char *op, sdx__hip_gemm g, int ak, int64_t batch, const sdx__hip_plan &p) {
    const sdx__hip *s = sdx__hip_of(ctx);
    const int conv = ak != SDX__HIP_A_ROWS, mma = p.mma, bt = p.bt;
    /* a convolution's gather keeps 32-bit offsets and window masks */
    const int vw = g.K % 8 == 0 && (uintptr_t)g.w % 16 == 0 &&
                   (conv ? g.x_bstride < 0x7fffffff && g.kh <= 32 && g.kw <= 32 && g.K < 0x7fffffff : (uintptr_t)g.x % 16 == 0);
    const int wgmma = mma && bt == 128 && s->wgmma && vw && ak != SDX__HIP_A_CONV;
    const int wide = wgmma && SDX__HIP_WG_WIDE && g.N % 160 == 0;     /* 160-wide tiles (sdx__hip_k_gemm_wgmma) */
    int64_t bm = mma ? bt : SDX__HIP_SBM, bn = wide ? 160 : mma ? bt : SDX__HIP_SBN;
    int64_t gx = (g.M + bm - 1) / bm, gy = (g.N + bn - 1) / bn;
    dim3 grid;
    if (g.M == 0 || g.N == 0 || batch == 0) return SDX_OK;
    if (gx > 0x7fffffff || gy > 65535 || batch * p.split > 65535)
        return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: problem too large for one launch", op);
    g.split = mma ? p.split : 1;
    grid = dim3((unsigned)gx, (unsigned)gy, (unsigned)(batch * g.split));
    if (!mma) {
        if (conv) sdx__hip_launch(sdx__hip_k_gemm_simt<SDX__HIP_A_CONV>, grid, 256, 0, g);
        else sdx__hip_launch(sdx__hip_k_gemm_simt<SDX__HIP_A_ROWS>, grid, 256, 0, g);
    } else {
        sdx__hip_gemm_mma_launch(s, g, ak, grid, batch, vw, wgmma, wide, bt);
        if (g.split > 1) {
            const int64_t count = batch * g.M * g.N;
            const int w = sdx__hip_width(count % 8 == 0, g.y, g.part, g.res);
            sdx__hip_launch(w == 8 ? sdx__hip_k_split_sum<8> : sdx__hip_k_split_sum<1>, sdx__hip_blocks(count / w, 256), 256, 0, g, count,
                            g.M * g.N, conv);
        }
    }
    return sdx__hip_check(ctx, op);
}

/* Room in the work buffer for `before` bytes of operand copies, then a
 * plan's partial sums (g->part). */
static int sdx__hip_gemm_room(sdx_ctx *ctx, const char *op, sdx__hip_gemm *g, int64_t batch, const sdx__hip_plan &p, size_t before) {
    sdx__hip *s = sdx__hip_of(ctx);
    const size_t at = (before + 255) / 256 * 256, part = sdx__hip_plan_part_bytes(p, *g, batch);
    int rc;
    if (!before && !part) return SDX_OK;
    if ((rc = sdx__hip_need(ctx, s, &s->work, at + part, op, part ? "operand copies and partial sums" : "operand copies")) != SDX_OK)
        return rc;
    g->part = part ? (float *)((char *)s->work.p + at) : NULL;
    return SDX_OK;
}

static void sdx__hip_gemm_operands(sdx__hip_gemm *g, const sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                   const sdx_tensor *res) {
    memset(g, 0, sizeof *g);
    g->x = x->data; g->xt = x->dtype;
    g->w = w->data; g->wt = w->dtype;
    g->bias = b ? b->data : NULL; g->bt = b ? (int)b->dtype : 0;
    g->res = res ? res->data : NULL; g->rt = res ? (int)res->dtype : 0;
    g->y = y->data; g->yt = y->dtype;
    g->split = 1;
}

/* A linear's operands, into y; its M x N x K from w and the product's
 * shape (y's own, or the GEGLU's h: w's rows). */
static void sdx__hip_linear_operands(sdx__hip_gemm *g, const sdx_tensor *y, const sdx_tensor *product, const sdx_tensor *x,
                                     const sdx_tensor *w, const sdx_tensor *b, const sdx_tensor *res) {
    sdx__hip_gemm_operands(g, y, x, w, b, res);
    g->K = w->shape[1];
    g->N = w->shape[0];
    g->M = g->N ? sdx_tensor_numel(product) / g->N : 0;
}

/* A linear of at most SDX__HIP_GEMV_ROWS rows: one warp per column. */
static int sdx__hip_gemv(sdx_ctx *ctx, const char *op, const sdx__hip_gemm &g) {
    const int w8 = sdx__hip_width(g.K % 8 == 0, g.x, g.w) == 8, per = 256 / sdx__hip_of(ctx)->warp;
    if ((g.N + per - 1) / per > 0x7fffffff) return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: problem too large for one launch", op);
    sdx__hip_launch(w8 ? sdx__hip_k_gemv<8> : sdx__hip_k_gemv<1>, dim3((unsigned)((g.N + per - 1) / per)), 256, 0, g);
    return sdx__hip_check(ctx, op);
}

/* y = x w^T + b (+ res in the epilogue, when not NULL: res may be y). */
static int sdx__hip_linear(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           const sdx_tensor *res) {
    sdx__hip *s = sdx__hip_of(ctx);
    sdx__hip_gemm g;
    sdx__hip_plan p;
    int copy_w, copy_x, rc;
    int64_t copied;
    sdx__hip_linear_operands(&g, y, y, x, w, b, res);
    if (g.M == 0 || g.N == 0) return SDX_OK;
    if (g.M <= SDX__HIP_GEMV_ROWS) return sdx__hip_gemv(ctx, op, g);
    g.y_bstride = g.M * g.N;    /* a split's partial sums, one "image" */
    /* w in x's half type; or f32 rows (the text encoder's context) into a
     * half result, rounded once to w's type (saturating) for the matrix
     * units: y is stored in half anyway */
    copy_w = sdx__hip_gemm_mma_converts_w(s, g.xt, g.wt);
    copy_x = !copy_w && g.xt == SDX_F32 && y->dtype != SDX_F32 && sdx__hip_gemm_mma_takes(s, g.wt, g.wt);
    copied = copy_w ? g.N * g.K : copy_x ? g.M * g.K : 0;
    if (copy_w && g.N > 65535) return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: problem too large for one launch", op);
    if (copy_w) g.wt = g.xt;
    if (copy_x) g.xt = g.wt;
    p = sdx__hip_gemm_plan(s, g, SDX__HIP_A_ROWS, 1);
    if ((rc = sdx__hip_gemm_room(ctx, op, &g, 1, p, (size_t)copied * 2)) != SDX_OK) return rc;
    if (copy_w) {
        sdx__hip_permute_taps(s->work.p, g.wt, w, g.K, 1);
        g.w = s->work.p;
    } else if (copy_x) {
        sdx_tensor rows = *x;
        rows.data = s->work.p;
        rows.dtype = (sdx_dtype)g.xt;
        if ((rc = sdx__hip_ew(ctx, op, SDX__HIP_COPY, &rows, x, NULL, 0)) != SDX_OK) return rc;
        g.x = rows.data;
    }
    return sdx__hip_gemm_run(ctx, op, g, SDX__HIP_A_ROWS, 1, p);
}

static int sdx__hip_linear_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                              sdx_dtype compute) {
    (void)compute;
    return sdx__hip_linear(ctx, "linear", y, x, w, b, NULL);
}

/* GEGLU in the GEMM's epilogue where the matrix units take the product
 * whole (one part of k, 16-byte rows, more than a few rows, D a multiple
 * of 8): y = a * gelu(gate) from the f32 sums, rounded once, h untouched
 * (sdx__hip_w_row pairs each value with its gate). Else the linear into
 * h (h NULL: the backend's own room, kept) and the gate as a pass of its
 * own. */
static int sdx__hip_linear_geglu_op(sdx_ctx *ctx, sdx_tensor *y, sdx_tensor *h, const sdx_tensor *x, const sdx_tensor *w,
                                    const sdx_tensor *b, sdx_dtype compute) {
    static const char op[] = "linear_geglu";
    sdx__hip *s = sdx__hip_of(ctx);
    const int64_t d = y->shape[y->ndim - 1];
    sdx_tensor product = *y;
    sdx__hip_gemm g;
    sdx__hip_plan p;
    int rc;
    product.shape[product.ndim - 1] = w->shape[0];
    sdx__hip_linear_operands(&g, y, &product, x, w, b, NULL);
    if (g.M == 0 || g.N == 0) return SDX_OK;
    p = sdx__hip_gemm_plan(s, g, SDX__HIP_A_ROWS, 1);
    if (g.M > SDX__HIP_GEMV_ROWS && p.mma && p.split == 1 && d % 8 == 0 && g.K % 8 == 0 && (uintptr_t)g.x % 16 == 0 &&
        (uintptr_t)g.w % 16 == 0) {
        g.geglu = d;
        return sdx__hip_gemm_run(ctx, op, g, SDX__HIP_A_ROWS, 1, p);
    }
    if (!h) {
        if ((rc = sdx__hip_need(ctx, s, &s->product, sdx_tensor_nbytes(&product), op, "product")) != SDX_OK) return rc;
        product.data = s->product.p;
        h = &product;
    }
    rc = sdx__hip_linear(ctx, op, h, x, w, b, NULL);
    return rc != SDX_OK ? rc : sdx__hip_geglu_op(ctx, y, h, compute);
}

/* The residual in the GEMM's epilogue: (x w^T + b) + res in f32, rounded
 * once into y; res is read and y written by the same thread, so res may
 * be y. */
static int sdx__hip_linear_add_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                  const sdx_tensor *res, sdx_dtype compute) {
    (void)compute;
    return sdx__hip_linear(ctx, "linear_add", y, x, w, b, res);
}

/* Every window corner of the convolution fits sdx__hip_pixels' 16-bit
 * halves, with room for the -2^15 that marks a pixel past M. */
static int sdx__hip_corners_fit(const sdx__hip_gemm &g) {
    const int64_t ho = g.Wo > 0 ? g.M / g.Wo : 0;
    return g.pt < 16384 && g.pl < 16384 && (ho - 1) * g.stride - g.pt < 16384 && ((int64_t)g.Wo - 1) * g.stride - g.pl < 16384 &&
           g.H < 16384 && g.W < 16384;
}

/* ---- weights kept channels-last ------------------------------------------------------ */

/* Index of the first entry at or above `data`. */
static int sdx__hip_cl_lower(const sdx__hip *s, const void *data) {
    int lo = 0, hi = s->n_cl;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if ((uintptr_t)s->cl[mid].data < (uintptr_t)data) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Whether w's values are channels-last: an entry at its address with its
 * channels, taps and type (a view of its first output channels too). */
static int sdx__hip_taps_last(const sdx__hip *s, const sdx_tensor *w) {
    const int i = sdx__hip_cl_lower(s, w->data);
    const sdx__hip_cl_weight *e = i < s->n_cl && s->cl[i].data == w->data ? &s->cl[i] : NULL;
    return e && w->ndim == 4 && e->c == w->shape[1] && e->taps == w->shape[2] * w->shape[3] && e->dtype == (int)w->dtype &&
           w->shape[0] <= e->o;
}

static void sdx__hip_cl_forget(sdx__hip *s, const void *data) {
    const int i = sdx__hip_cl_lower(s, data);
    if (i == s->n_cl || s->cl[i].data != data) return;
    memmove(s->cl + i, s->cl + i + 1, sizeof *s->cl * (size_t)(s->n_cl - i - 1));
    s->n_cl--;
}

/* Which weights go channels-last: a half-type kernel wider than 1x1 over
 * 8k channels (what the matrix units' convolutions take: x then has 8k
 * channels too), one output channel's C x taps values within 48 KiB
 * (sdx__hip_k_taps_last holds them), 16-byte aligned. */
static int sdx__hip_cl_takes(const sdx__hip *s, const sdx_tensor *w) {
    const int64_t taps = w->ndim == 4 ? w->shape[2] * w->shape[3] : 0;
    return s->gemm_mma && w->ndim == 4 && (w->dtype == SDX_F16 || w->dtype == SDX_BF16) && taps > 1 && w->shape[1] % 8 == 0 &&
           w->shape[1] * taps * 2 <= 48 * 1024 && w->shape[0] <= 65535 && (uintptr_t)w->data % 16 == 0;
}

/* The loader wrote a weight slot (sdx_backend.weight_added): a convolution
 * weight the channels-last convolutions take is rearranged in place. sdx
 * reads back only 1-D weights, and every other reader of a 4-D one here
 * (the gathered convolutions) puts it back in order first. */
static int sdx__hip_weight_added(sdx_ctx *ctx, const sdx_tensor *w, const void *file) {
    static const char op[] = "weight upload";
    sdx__hip *s = sdx__hip_of(ctx);
    const int64_t taps = w->ndim == 4 ? w->shape[2] * w->shape[3] : 0;
    int i, rc;
    (void)file;
    if (!w->device) return SDX_OK;
    sdx__hip_cl_forget(s, w->data);     /* whatever was at this address before */
    if (!sdx__hip_cl_takes(s, w) || sdx_tensor_numel(w) == 0) return SDX_OK;
    if (s->recording >= 0) return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: a weight cannot change while a graph is recorded", op);
    if (s->n_cl == s->cap_cl) {
        const int cap = s->cap_cl ? 2 * s->cap_cl : 256;
        sdx__hip_cl_weight *e = (sdx__hip_cl_weight *)realloc(s->cl, sizeof *e * (size_t)cap);
        if (!e) return sdx_fail(ctx, SDX_ERR_NOMEM, "%s: out of memory", op);
        s->cl = e;
        s->cap_cl = cap;
    }
    sdx__hip_launch(sdx__hip_k_taps_last, dim3((unsigned)w->shape[0]), 256, (size_t)(w->shape[1] * taps * 2), (uint16_t *)w->data,
                    (int)w->shape[1], (int)taps);
    if ((rc = sdx__hip_check(ctx, op)) != SDX_OK) return rc;
    i = sdx__hip_cl_lower(s, w->data);
    memmove(s->cl + i + 1, s->cl + i, sizeof *s->cl * (size_t)(s->n_cl - i));
    s->cl[i].data = w->data;
    s->cl[i].o = w->shape[0];
    s->cl[i].c = w->shape[1];
    s->cl[i].taps = taps;
    s->cl[i].dtype = (int)w->dtype;
    s->n_cl++;
    return SDX_OK;
}

static void sdx__hip_weight_changed(sdx_ctx *ctx, const sdx_tensor *w, int gone) {
    if (gone) sdx__hip_cl_forget(sdx__hip_of(ctx), w->data);
}

/* ---- convolution ------------------------------------------------------------------------ */

/* A convolution gathered from NCHW x (f32 or mixed operands, x's
 * channels not 8k, shapes past the channels-last path's limits). The
 * SIMT kernel reads a weight kept channels-last as it is; the matrix
 * units' gather wants w as [O][C][kh][kw], so such a weight is put back
 * in that order in the work buffer first. */
static int sdx__hip_conv_gather(sdx_ctx *ctx, const char *op, sdx__hip_gemm g, int64_t batch, const sdx_tensor *w, int taps_last) {
    sdx__hip *s = sdx__hip_of(ctx);
    const int64_t o = w->shape[0], c = w->shape[1], taps = w->shape[2] * w->shape[3];
    const sdx__hip_plan p = sdx__hip_gemm_plan(s, g, SDX__HIP_A_CONV, batch);
    int rc;
    g.w_taps_last = taps_last && !p.mma;
    taps_last = taps_last && p.mma;
    rc = sdx__hip_gemm_room(ctx, op, &g, batch, p, taps_last ? (size_t)(o * c * taps) * 2 : 0);
    if (rc == SDX_OK && taps_last) {
        sdx_tensor in_order = *w;
        in_order.data = s->work.p;
        rc = sdx__hip_transpose(ctx, op, &in_order, w, o, taps, c);
        g.w = in_order.data;
    }
    return rc != SDX_OK ? rc : sdx__hip_gemm_run(ctx, op, g, SDX__HIP_A_CONV, batch, p);
}

/* A convolution on the matrix units from a channels-last copy of x (in
 * the work buffer) and w channels-last (kept so, or a copy beside x's):
 * every k-step's operands then stream in as 16-byte asynchronous copies,
 * as a linear's do, instead of being gathered value by value from NCHW.
 * x's copy costs a transpose (a few MB) against the gathers' latency,
 * which dominated the convolution's time. y is written NCHW as before. */
static int sdx__hip_conv_nhwc(sdx_ctx *ctx, const char *op, sdx__hip_gemm *g, const sdx_tensor *x, const sdx_tensor *w, int taps_last) {
    sdx__hip *s = sdx__hip_of(ctx);
    const int64_t batch = x->shape[0], c = x->shape[1], hw = x->shape[2] * x->shape[3], o = w->shape[0], taps = w->shape[2] * w->shape[3];
    /* w as it is when channels-last already (or a 1x1) in x's type, 16-byte aligned */
    const int copy_w = (taps > 1 && !taps_last) || w->dtype != x->dtype || (uintptr_t)w->data % 16;
    const size_t xbytes = ((size_t)(batch * c * hw) * 2 + 255) / 256 * 256, wbytes = copy_w ? (size_t)(o * c * taps) * 2 : 0;
    sdx_tensor xh;      /* x's channels-last copy */
    sdx__hip_plan p;
    int rc;
    if (batch > 65535 || o > 65535 || (c + 31) / 32 > 65535 || g->x_bstride >= 0x7fffffff || taps > SDX__HIP_PERMUTE_VALUES ||
        !sdx__hip_corners_fit(*g))
        return w->dtype == x->dtype ? sdx__hip_conv_gather(ctx, op, *g, batch, w, taps_last)
                                    : sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: problem too large for one launch", op);
    g->wt = x->dtype;
    g->C = (int)c;
    p = sdx__hip_gemm_plan(s, *g, SDX__HIP_A_NHWC, batch);
    if ((rc = sdx__hip_gemm_room(ctx, op, g, batch, p, xbytes + wbytes)) != SDX_OK) return rc;
    xh = *x;
    xh.data = s->work.p;
    if ((rc = sdx__hip_transpose(ctx, op, &xh, x, batch, c, hw)) != SDX_OK) return rc;
    g->x = xh.data;
    if (copy_w) {   /* permuted, or only converted when it is channels-last */
        g->w = (char *)s->work.p + xbytes;
        sdx__hip_permute_taps((void *)g->w, g->wt, w, taps_last ? c * taps : c, taps_last ? 1 : (int)taps);
    }
    return sdx__hip_gemm_run(ctx, op, *g, SDX__HIP_A_NHWC, batch, p);
}

/* y = conv(x) + b (+ res in the epilogue, when not NULL). */
static int sdx__hip_conv2d(sdx_ctx *ctx, const char *op, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           const sdx_tensor *res, int stride, int pad_top, int pad_left, int pad_bottom, int pad_right) {
    sdx__hip *s = sdx__hip_of(ctx);
    int64_t ho, wo;
    sdx__hip_gemm g;
    int taps_last;
    ho = x->shape[2] + pad_top + pad_bottom - w->shape[2];
    wo = x->shape[3] + pad_left + pad_right - w->shape[3];
    ho = ho / stride + 1;
    wo = wo / stride + 1;
    if (x->shape[2] > 0x7fffffff || x->shape[3] > 0x7fffffff || w->shape[1] * w->shape[2] * w->shape[3] > 0x7fffffff)
        return sdx__hip_bad(ctx, op, "dims below 2^31", x, w);
    sdx__hip_gemm_operands(&g, y, x, w, b, res);
    g.M = ho * wo;
    g.N = w->shape[0];
    g.K = w->shape[1] * w->shape[2] * w->shape[3];
    g.x_bstride = x->shape[1] * x->shape[2] * x->shape[3];
    g.y_bstride = g.M * g.N;
    g.H = (int)x->shape[2]; g.W = (int)x->shape[3]; g.Wo = (int)wo;
    g.kh = (int)w->shape[2]; g.kw = (int)w->shape[3];
    g.stride = stride; g.pt = pad_top; g.pl = pad_left;
    taps_last = sdx__hip_taps_last(s, w);
    if (sdx__hip_gemm_mma_halves(s, g.xt, g.wt) && x->shape[1] % 8 == 0) return sdx__hip_conv_nhwc(ctx, op, &g, x, w, taps_last);
    return sdx__hip_conv_gather(ctx, op, g, x->shape[0], w, taps_last);
}

static int sdx__hip_conv2d_pad_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                  int stride, int pad_top, int pad_left, int pad_bottom, int pad_right, sdx_dtype compute) {
    (void)compute;
    return sdx__hip_conv2d(ctx, "conv2d", y, x, w, b, NULL, stride, pad_top, pad_left, pad_bottom, pad_right);
}

/* The residual in the epilogue, as sdx__hip_linear_add_op. */
static int sdx__hip_conv2d_pad_add_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                      const sdx_tensor *res, int stride, int pad_top, int pad_left, int pad_bottom, int pad_right,
                                      sdx_dtype compute) {
    (void)compute;
    return sdx__hip_conv2d(ctx, "conv2d_pad_add", y, x, w, b, res, stride, pad_top, pad_left, pad_bottom, pad_right);
}

/* ---- attention --------------------------------------------------------------------------- */

template <int DP, int TPQ, int KT>
static void sdx__hip_attention_launch(sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                                      int64_t batch, int heads, int d, int causal) {
    const int qpb = SDX__HIP_ATTN_THREADS / TPQ;
    int64_t nq = q->shape[1], nk = k->shape[1];
    dim3 grid((unsigned)((nq + qpb - 1) / qpb), (unsigned)(batch * heads));
    size_t smem = 2 * (size_t)KT * (size_t)d * sizeof(float);
    sdx__hip_launch(sdx__hip_k_attention<DP, TPQ, KT>, grid, SDX__HIP_ATTN_THREADS, smem, y->data, y->dtype, q->data, q->dtype, k->data, k->dtype,
                    v->data, v->dtype, nq, nk, heads, d, causal,
                    (float)(1.0 / sqrt((double)d)));
}

/* The tensor-core attention plans (sdx__hip_flash_plan: padded head dim,
 * keys a tile, groups of queries, warps a group, m16 tiles of queries a
 * group), the first whose DP holds d is taken: SD's head dims (40 -> 48,
 * 64, 80, 128, 160) with four warps, 32 queries each up to 64 (each K and
 * V fragment from shared memory then serves two m16 tiles: half the
 * ldmatrix bytes per product of 16 queries, which had kept attention at
 * 2.4-3.1x cuDNN's) and 16 above (O's registers: 80's bf16 kernel would
 * spill), 64-key tiles up to 80 and 32 above (the K/V buffers' shared
 * memory); the VAE's 512 with two groups of four warps that split the
 * dims, 16-key tiles (106 KiB of shared memory). Head dim 64 also has
 * 32-key tiles (SDX__HIP_FLASH_KEYS32), chosen per launch by
 * sdx__hip_flash_keys32. */
#if defined(SDX_HIP_FLASH_MT)     /* m16 tiles a warp up to head dim 64: 1 halves the queries a block */
#if SDX_HIP_FLASH_MT < 1 || SDX_HIP_FLASH_MT > 2
#error "sdx_hip.h: SDX_HIP_FLASH_MT is 1 or 2"
#endif
#define SDX__HIP_FLASH_MT SDX_HIP_FLASH_MT
#else
#define SDX__HIP_FLASH_MT 2
#endif
#define SDX__HIP_FLASH_PLANS(X) \
    X(48, 64, 4, 1, SDX__HIP_FLASH_MT) X(64, 64, 4, 1, SDX__HIP_FLASH_MT) X(80, 64, 4, 1, 1) X(128, 32, 4, 1, 1) X(160, 32, 4, 1, 1) \
    X(512, 16, 2, 4, 1)
#define SDX__HIP_FLASH_KEYS32(X) X(64, 32, 4, 1, SDX__HIP_FLASH_MT)

template <int HT, int DP, int BK, int ROWS, int SPLIT, int MT>
static void sdx__hip_flash(sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v, int64_t batch, int heads, int d,
                           int causal) {
    typedef sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT> L;
    int64_t nq = q->shape[1], nk = k->shape[1];
    int vec = d % 8 == 0 && (uintptr_t)q->data % 16 == 0 && (uintptr_t)k->data % 16 == 0 && (uintptr_t)v->data % 16 == 0;
    int pairs = d % 2 == 0 && (uintptr_t)y->data % (2 * sdx_dtype_size(y->dtype)) == 0;
    sdx__hip_launch(sdx__hip_k_flash_mma<HT, DP, BK, ROWS, SPLIT, MT>, dim3((unsigned)((nq + L::BQ - 1) / L::BQ), (unsigned)(batch * heads)),
                    dim3((unsigned)L::THREADS), (size_t)L::BYTES, y->data, (int)y->dtype, (const void *)q->data, (const void *)k->data,
                    (const void *)v->data, nq, nk, heads, d, causal, (float)(1.0 / sqrt((double)d)), vec, pairs);
}

/* Head dim 64 in 32-key tiles rather than 64: fewer registers (on an
 * H200's sm_90a code 163 a thread against 228), so more blocks an SM (3
 * against 2), at half the products between barriers. Which is faster
 * depends on the launch's waves and on the keys' padding to whole tiles,
 * so each launch takes the smaller of, per plan,
 *     waves x blocks an SM x keys padded to its tiles x cost per key,
 * waves = ceil(blocks / (blocks an SM x SMs)): a wave takes as long as
 * its SMs' shares. The cost per key is one plan's against the other's at
 * the same work: 1.085 for 32-key tiles, measured on an H200 (SDXL's
 * 4096-token self-attention, 640 blocks: 3 waves of 2 in 402 us, 2 waves
 * of 3 in 436). This model put each of SDXL's four attention shapes on
 * the faster plan there (1024 tokens 61 against 76 us, their 77-key
 * cross-attention 14 against 20). */
static int sdx__hip_flash_keys32(const sdx__hip *s, int bf16, int64_t blocks, int64_t nk) {
    const int64_t occ64 = s->flash64_blocks[bf16][0], occ32 = s->flash64_blocks[bf16][1];
    if (occ64 < 1 || occ32 < 1) return 0;
    const int64_t waves64 = (blocks + occ64 * s->sms - 1) / (occ64 * s->sms), waves32 = (blocks + occ32 * s->sms - 1) / (occ32 * s->sms);
    const int64_t keys64 = (nk + 63) / 64 * 64, keys32 = (nk + 31) / 32 * 32;
    return (double)waves32 * (double)occ32 * (double)keys32 * 1.085 < (double)waves64 * (double)occ64 * (double)keys64;
}

template <int HT>
static void sdx__hip_attention_mma(const sdx__hip *s, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                                   int64_t batch, int heads, int d, int causal) {
#define SDX__HIP_FLASH_PICK(DP, BK, ROWS, SPLIT, MT) \
    if (d <= DP) return sdx__hip_flash<HT, DP, BK, ROWS, SPLIT, MT>(y, q, k, v, batch, heads, d, causal);
    /* the head dims the 64-key plan would take (past the 48 plan's), its
     * blocks counted in the 32-key plan's queries a block (the same) */
#define SDX__HIP_FLASH_PICK32(DP, BK, ROWS, SPLIT, MT) \
    if (d > 48 && d <= DP && \
        sdx__hip_flash_keys32(s, HT == SDX__HIP_DT_BF16, \
                              (q->shape[1] + sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT>::BQ - 1) / \
                                  sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT>::BQ * batch * heads, k->shape[1])) \
        return sdx__hip_flash<HT, DP, BK, ROWS, SPLIT, MT>(y, q, k, v, batch, heads, d, causal);
    SDX__HIP_FLASH_KEYS32(SDX__HIP_FLASH_PICK32)
    SDX__HIP_FLASH_PLANS(SDX__HIP_FLASH_PICK)
#undef SDX__HIP_FLASH_PICK32
#undef SDX__HIP_FLASH_PICK
}

/* Every plan's shared memory, f16 and bf16; 0 when refused, and
 * attention then runs on the SIMT kernel. */
static int sdx__hip_attention_grant(const sdx__hip *s) {
#define SDX__HIP_FLASH_GRANT(DP, BK, ROWS, SPLIT, MT) \
    if (!sdx__hip_grant(s, (const void *)sdx__hip_k_flash_mma<SDX__HIP_DT_F16, DP, BK, ROWS, SPLIT, MT>, \
                        sdx__hip_flash_plan<SDX__HIP_DT_F16, DP, BK, ROWS, SPLIT, MT>::BYTES) || \
        !sdx__hip_grant(s, (const void *)sdx__hip_k_flash_mma<SDX__HIP_DT_BF16, DP, BK, ROWS, SPLIT, MT>, \
                        sdx__hip_flash_plan<SDX__HIP_DT_BF16, DP, BK, ROWS, SPLIT, MT>::BYTES)) \
        return 0;
    SDX__HIP_FLASH_PLANS(SDX__HIP_FLASH_GRANT)
    SDX__HIP_FLASH_KEYS32(SDX__HIP_FLASH_GRANT)
#undef SDX__HIP_FLASH_GRANT
    return 1;
}

/* The blocks an SM of the 128-tile GEMM kernels (sdx__hip_gemm_plan):
 * one of each kind stands for all (their shared memory and bounds do
 * not depend on the operands); where the runtime cannot say, two of
 * mma.sync's on NVIDIA (one on AMD) and one of wgmma's. */
static void sdx__hip_gemm_occupancy(sdx__hip *s) {
    int blocks = 0;
    s->gemm_blocks[0] = SDX__HIP_GEMM_MIN_BLOCKS;
    s->gemm_blocks[1] = 1;
    if (s->gemm_mma && hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)sdx__hip_gemm_mma_kernel<128>(SDX__HIP_A_ROWS, 0, 1),
                                                                    s->gemm_threads, (size_t)sdx__hip_tile<128>::SMEM) == hipSuccess && blocks > 0)
        s->gemm_blocks[0] = blocks;
    blocks = 0;
    if (s->wgmma && hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void *)sdx__hip_gemm_wgmma_kernel<160>(0, 0), SDX__HIP_WG_THREADS,
                                                                 (size_t)sdx__hip_wg_tile<160>::SMEM) == hipSuccess && blocks > 0)
        s->gemm_blocks[1] = blocks;
    (void)hipGetLastError();
}

/* The blocks an SM of head dim 64's two plans (sdx__hip_flash_keys32),
 * [bf16][32-key tiles]: the plans of the lists whose DP is 64; 0 where
 * the runtime cannot say (64-key tiles then). */
template <int HT>
static void sdx__hip_flash64_occupancy(sdx__hip *s) {
#define SDX__HIP_FLASH_OCC(DP, BK, ROWS, SPLIT, MT) \
    if (DP == 64 && hipOccupancyMaxActiveBlocksPerMultiprocessor(&s->flash64_blocks[HT == SDX__HIP_DT_BF16][BK == 32], \
                                                                 (const void *)sdx__hip_k_flash_mma<HT, DP, BK, ROWS, SPLIT, MT>, \
                                                                 sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT>::THREADS, \
                                                                 (size_t)sdx__hip_flash_plan<HT, DP, BK, ROWS, SPLIT, MT>::BYTES) != hipSuccess) \
        s->flash64_blocks[HT == SDX__HIP_DT_BF16][BK == 32] = 0;
    SDX__HIP_FLASH_PLANS(SDX__HIP_FLASH_OCC)
    SDX__HIP_FLASH_KEYS32(SDX__HIP_FLASH_OCC)
#undef SDX__HIP_FLASH_OCC
    (void)hipGetLastError();
}

/* Head dims up to 80 (multiples of 8) without a causal mask on Hopper's
 * wgmma (sdx__hip_k_flash_wgmma), padded to the first of its widths
 * that holds them, with SDX_HIP_FLASH_WGMMA=1 (the simulator's builds:
 * on, so its tests run it; elsewhere off until an H100/H200 run has
 * measured it beside sdx__hip_k_flash_mma), in blocks of
 * SDX_HIP_FLASH_WGS warpgroups (1 or 2). */
#if defined(SDX_HIP_FLASH_WGMMA)
#define SDX__HIP_FLASH_WG SDX_HIP_FLASH_WGMMA
#elif defined(SDX_HIP_SIM)
#define SDX__HIP_FLASH_WG 1
#else
#define SDX__HIP_FLASH_WG 0
#endif
#if defined(SDX_HIP_FLASH_WGS)
#if SDX_HIP_FLASH_WGS < 1 || SDX_HIP_FLASH_WGS > 2
#error "sdx_hip.h: SDX_HIP_FLASH_WGS is 1 or 2"
#endif
#define SDX__HIP_FLASH_WGS SDX_HIP_FLASH_WGS
#else
#define SDX__HIP_FLASH_WGS 2
#endif
#define SDX__HIP_FLASH_WG_DPS(X) X(48) X(64) X(80)

template <int HT, int DP>
static void sdx__hip_flash_wg(sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v, int64_t batch, int heads, int d) {
    typedef sdx__hip_flash_wg_plan<DP, SDX__HIP_FLASH_WGS> L;
    const int64_t nq = q->shape[1];
    const int pairs = (uintptr_t)y->data % (2 * sdx_dtype_size(y->dtype)) == 0;
    sdx__hip_launch(sdx__hip_k_flash_wgmma<HT, DP, SDX__HIP_FLASH_WGS>, dim3((unsigned)((nq + L::BQ - 1) / L::BQ), (unsigned)(batch * heads)),
                    dim3((unsigned)L::THREADS), (size_t)L::BYTES, y->data, (int)y->dtype, (const void *)q->data, (const void *)k->data,
                    (const void *)v->data, nq, k->shape[1], heads, d, (float)(1.0 / sqrt((double)d)), pairs);
}

/* Whether the wgmma attention takes this head dim, and takes it. */
template <int HT>
static int sdx__hip_flash_wg_pick(sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v, int64_t batch, int heads,
                                  int d) {
#define SDX__HIP_FLASH_WG_PICK(DP) \
    if (d <= DP) return sdx__hip_flash_wg<HT, DP>(y, q, k, v, batch, heads, d), 1;
    SDX__HIP_FLASH_WG_DPS(SDX__HIP_FLASH_WG_PICK)
#undef SDX__HIP_FLASH_WG_PICK
    return 0;
}

static int sdx__hip_flash_wg_grant(const sdx__hip *s) {
    if (!SDX__HIP_FLASH_WG || !s->wgmma) return 0;
#define SDX__HIP_FLASH_WG_GRANT(DP) \
    if (!sdx__hip_grant(s, (const void *)sdx__hip_k_flash_wgmma<SDX__HIP_DT_F16, DP, SDX__HIP_FLASH_WGS>, \
                        sdx__hip_flash_wg_plan<DP, SDX__HIP_FLASH_WGS>::BYTES) || \
        !sdx__hip_grant(s, (const void *)sdx__hip_k_flash_wgmma<SDX__HIP_DT_BF16, DP, SDX__HIP_FLASH_WGS>, \
                        sdx__hip_flash_wg_plan<DP, SDX__HIP_FLASH_WGS>::BYTES)) \
        return 0;
    SDX__HIP_FLASH_WG_DPS(SDX__HIP_FLASH_WG_GRANT)
#undef SDX__HIP_FLASH_WG_GRANT
    return 1;
}

static int sdx__hip_attention_op(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                                 int heads, int causal, sdx_dtype compute) {
    (void)compute;
    static const char op[] = "attention";
    const sdx__hip *s = sdx__hip_of(ctx);
    int64_t batch, d;
    int halves;
    batch = q->shape[0];
    d = q->shape[2] / heads;
    if (q->shape[1] == 0 || batch == 0 || d == 0) return SDX_OK;
    if (batch * heads > 65535) return sdx__hip_bad(ctx, op, "at most 65535 (batch, head) pairs", q, NULL);
    /* NVIDIA matrix units for half q, k, v of one type: wgmma where it
     * takes the head dim (16-byte rows), mma.sync for the others */
    halves = q->dtype != SDX_F32 && k->dtype == q->dtype && v->dtype == q->dtype;
    if (s->flash_wg && halves && d % 8 == 0 && !causal && (uintptr_t)q->data % 16 == 0 && (uintptr_t)k->data % 16 == 0 &&
        (uintptr_t)v->data % 16 == 0 &&
        (q->dtype == SDX_F16 ? sdx__hip_flash_wg_pick<SDX__HIP_DT_F16>(y, q, k, v, batch, heads, (int)d)
                             : sdx__hip_flash_wg_pick<SDX__HIP_DT_BF16>(y, q, k, v, batch, heads, (int)d)))
        return sdx__hip_check(ctx, op);
    if (s->attention_mma && halves && d <= 512) {
        if (q->dtype == SDX_F16) sdx__hip_attention_mma<SDX__HIP_DT_F16>(s, y, q, k, v, batch, heads, (int)d, causal);
        else sdx__hip_attention_mma<SDX__HIP_DT_BF16>(s, y, q, k, v, batch, heads, (int)d, causal);
        return sdx__hip_check(ctx, op);
    }
    switch (d) {        /* exact fits: no lane idles on padding */
    case 40:  sdx__hip_attention_launch<10, 4, 32>(y, q, k, v, batch, heads, 40, causal); break;
    case 64:  sdx__hip_attention_launch<16, 4, 32>(y, q, k, v, batch, heads, 64, causal); break;
    case 80:  sdx__hip_attention_launch<20, 4, 32>(y, q, k, v, batch, heads, 80, causal); break;
    case 128: sdx__hip_attention_launch<16, 8, 32>(y, q, k, v, batch, heads, 128, causal); break;
    case 160: sdx__hip_attention_launch<20, 8, 32>(y, q, k, v, batch, heads, 160, causal); break;
    default:
        if (d <= 32) sdx__hip_attention_launch<8, 4, 32>(y, q, k, v, batch, heads, (int)d, causal);
        else if (d <= 512) sdx__hip_attention_launch<16, 32, 8>(y, q, k, v, batch, heads, (int)d, causal);
        else return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "%s: head dim %lld above 512 is not supported on the GPU", op, (long long)d);
    }
    return sdx__hip_check(ctx, op);
}

/* ---- device selection ------------------------------------------------------------------------ */

/* Reports the matrix-unit kind of the code object that runs here, the
 * GEMM's k-step its device code was compiled with (bits 8 on), its
 * block's warps (bits 16 on) and whether it has wgmma (bit 24). */
__global__ void sdx__hip_k_probe(int *out) {
    *out = (SDX__HIP_MMA + 1) | SDX__HIP_MBK << 8 | SDX__HIP_GEMM_THREADS / 32 << 16 | SDX__HIP_WGMMA << 24;
}

static void sdx__hip_props(const hipDeviceProp_t *p, char *name, size_t nsize, char *arch, size_t asize) {
    snprintf(name, nsize, "%s", p->name);
#if defined(__HIPCC__) && defined(__HIP_PLATFORM_AMD__)
    snprintf(arch, asize, "%s", p->gcnArchName);
#else
    snprintf(arch, asize, "sm_%d%d", p->major, p->minor);
#endif
}

/* Runs the probe on the current device: the matrix-unit kind, or -1 with
 * `why` set when the binary has no code for this GPU or when its host and
 * device code disagree on the GEMM's k-step (a build error: the launch's
 * shared memory would not hold the kernel's tiles). */
static int sdx__hip_probe(char *why, size_t size, int *gemm_threads, int *wgmma) {
    int *d = NULL, h = 0;
    hipError_t e = hipMalloc((void **)&d, sizeof(int));
    if (e == hipSuccess) {
        sdx__hip_launch(sdx__hip_k_probe, 1, 1, 0, d);
        e = hipGetLastError();
        if (e == hipSuccess) e = hipMemcpy(&h, d, sizeof(int), hipMemcpyDeviceToHost);
    }
    if (d) (void)hipFree(d);
    if (e != hipSuccess || (h & 255) < 1) {
        snprintf(why, size, "%s", e != hipSuccess ? hipGetErrorString(e) : "the probe kernel did not run");
        (void)hipGetLastError();
        return -1;
    }
    if ((h >> 8 & 255) != SDX__HIP_MBK) {
        snprintf(why, size, "its device code steps GEMMs by %d and its host code by %d", h >> 8 & 255, SDX__HIP_MBK);
        return -1;
    }
    *gemm_threads = (h >> 16 & 255) * 32;
    *wgmma = h >> 24 & 1;
    return (h & 255) - 1;
}

SDX_HIP_API int sdx_hip_device_count(void) {
    int n = 0;
    if (hipGetDeviceCount(&n) != hipSuccess) { (void)hipGetLastError(); return 0; }
    return n;
}

SDX_HIP_API sdx_result sdx_hip_device_info(int device_index, sdx_hip_info *info) {
    hipDeviceProp_t p;
    char why[128];
    int n = sdx_hip_device_count(), threads, wgmma;
    if (!info) return SDX_ERR_INVALID_ARG;
    memset(info, 0, sizeof *info);
    if (device_index < 0 || device_index >= n) {
        snprintf(info->name, sizeof info->name, "no GPU %d (%s sees %d)", device_index, SDX__HIP_VENDOR, n);
        return SDX_ERR_UNSUPPORTED;
    }
    if (hipSetDevice(device_index) != hipSuccess || hipGetDeviceProperties(&p, device_index) != hipSuccess ||
        hipMemGetInfo(&info->free_bytes, &info->total_bytes) != hipSuccess) {
        snprintf(info->name, sizeof info->name, "GPU %d: %s", device_index, hipGetErrorString(hipGetLastError()));
        return SDX_ERR_UNSUPPORTED;
    }
    sdx__hip_props(&p, info->name, sizeof info->name, info->arch, sizeof info->arch);
    info->matrix_units = sdx__hip_probe(why, sizeof why, &threads, &wgmma) > 0;
    return SDX_OK;
}

SDX_HIP_API sdx_result sdx_hip_use(sdx_ctx *ctx, int device_index) {
    sdx_backend b;
    hipDeviceProp_t p;
    sdx__hip *s;
    char why[256];
    int n = sdx_hip_device_count(), rc;
    if (!ctx) return SDX_ERR_INVALID_ARG;
    if (n == 0) return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "sdx_hip_use: no GPU found (%s runtime sees none)", SDX__HIP_VENDOR);
    if (device_index < 0 || device_index >= n)
        return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "sdx_hip_use: no GPU %d (%d found)", device_index, n);
    if (hipSetDevice(device_index) != hipSuccess || hipGetDeviceProperties(&p, device_index) != hipSuccess)
        return sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "sdx_hip_use: GPU %d: %s", device_index, hipGetErrorString(hipGetLastError()));
    if (!(s = (sdx__hip *)calloc(1, sizeof *s))) return sdx_fail(ctx, SDX_ERR_NOMEM, "sdx_hip_use: out of memory");
    s->device = device_index;
    s->warp = p.warpSize > 0 ? p.warpSize : 32;
    s->sms = p.multiProcessorCount > 0 ? p.multiProcessorCount : 1;
    s->recording = s->checking = -1;
#if defined(__HIPCC__)
    s->smem_optin = p.sharedMemPerBlock;        /* no opt-in field in every HIP release */
#else
    s->smem_optin = p.sharedMemPerBlockOptin;
#endif
    sdx__hip_props(&p, why, sizeof why, s->arch, sizeof s->arch);
    if ((s->mma = sdx__hip_probe(why, sizeof why, &s->gemm_threads, &s->wgmma)) < 0) {
        rc = sdx_fail(ctx, SDX_ERR_UNSUPPORTED, "sdx_hip_use: GPU %d (%s, %s) cannot run this binary's code: %s "
                      "(rebuild the SDX_HIP_IMPLEMENTATION file for %s)", device_index, p.name, s->arch, why, s->arch);
        free(s);
        return (sdx_result)rc;
    }
    s->gemm_mma = s->mma && sdx__hip_gemm_grant(s);
    /* sm_90a code runs on compute capability 9.0 alone; the simulator
     * plays an 8.x device too, to test the other path */
    s->wgmma = s->wgmma && s->gemm_mma && p.major == 9 && sdx__hip_wgmma_grant(s);
    s->tmap_encode = s->wgmma && sdx__hip_tma_grant(s) ? sdx__hip_tmap_encoder() : NULL;
    s->attention_mma = s->mma == 1 && sdx__hip_attention_grant(s);
    s->flash_wg = s->attention_mma && sdx__hip_flash_wg_grant(s);
    sdx__hip_gemm_occupancy(s);
    if (s->attention_mma) {
        sdx__hip_flash64_occupancy<SDX__HIP_DT_F16>(s);
        sdx__hip_flash64_occupancy<SDX__HIP_DT_BF16>(s);
    }
    snprintf(s->name, sizeof s->name, "hip:%d (%s, %s%s%s%s%s)", device_index, p.name, s->arch,
             s->mma ? ", matrix units" : "", s->wgmma ? ", wgmma" : "", s->tmap_encode ? ", TMA" : "",
             s->flash_wg ? ", wgmma attention" : "");
    memset(&b, 0, sizeof b);
    b.name = s->name;
    b.user = s;
    b.alloc = sdx__hip_alloc;
    b.free = sdx__hip_free;
    b.upload = sdx__hip_upload;
    b.download = sdx__hip_download;
    b.release = sdx__hip_release;
    b.graph = sdx__hip_graph_op;
    b.weight_added = sdx__hip_weight_added;
    b.weight_changed = sdx__hip_weight_changed;
#define SDX__HIP_OP(name, required, params, args, operands, scalars) b.name = sdx__hip_##name##_op;
    SDX_BACKEND_OPS(SDX__HIP_OP)
#undef SDX__HIP_OP
    if ((rc = sdx_set_backend(ctx, &b)) != SDX_OK) sdx__hip_release(s);   /* not installed: still ours */
    return (sdx_result)rc;
}

#pragma once
#include "api_core.h"
/* ===================================================================== */
/*  Public API (advanced): backends                                       */
/* ===================================================================== */
/* A backend is where a context's activations and weights live and where
 * its kernels run. Every context starts on the CPU (host memory, threaded
 * kernels). sdx_hip.h provides a GPU backend (sdx_hip_use); a program can
 * also install its own. Model code never touches device memory: it calls
 * the kernels below and moves values with upload/download, so per sampler
 * step only the latent crosses the bus.
 *
 * Device buffers are opaque to sdx: it only adds byte offsets to them (a
 * tensor view into a buffer), passes them to the backend's kernels, and
 * never dereferences them. A tensor's `device` field says which side its
 * data is on (0 host, 1 the backend). Kernels see tensors in F32, F16 or
 * BF16 storage (any mix; linear's and conv2d_pad's weights also
 * block-quantized where the backend sets linear_blocks, conv_blocks), and owe the precision policy what the CPU
 * kernels do: f32 accumulation, f32 norm statistics and softmax, f16
 * stores that saturate at +-65504. Before a call sdx checks every
 * operand (in the backend's memory, a storage dtype, dims in range, data
 * present) and the op's contract (shapes and parameters, docs/INTERNALS.md
 * "Kernel API"), so a kernel may assume valid operands; it checks only
 * its own limits (a launch grid's size). A kernel returns SDX_OK or an
 * error code, with sdx_fail for the message.
 *
 * Set the backend before loading models: weights are uploaded once, at
 * load, in their storage dtype. */

#ifdef __cplusplus
extern "C" {
#endif

/* The kernels, one row each: X(name, required, (parameters after the
 * sdx_ctx), (arguments), (tensor operands, output first), (scalar
 * arguments)). This list is the one place an op is declared: it makes
 * the table's fields below, the dispatchers model code calls
 * (src/core/ops.c) and each built-in backend's registration; a backend of
 * your own can register with it too. The scalars are what, beside the
 * operands, a recorded graph must see again to be replayed (graph, below).
 * `compute` is the arithmetic the model part asks for: SDX_F32 exactly,
 * or SDX_BF16 (bf16 products and faster activations) where the backend
 * has it; a backend may always compute in f32. A required op must be
 * filled; a missing optional one runs on the host (its operands are
 * downloaded and its output uploaded), so a new backend can start small,
 * except the fused ones: linear_add and conv2d_pad_add (y = op + res,
 * rounded once; res is y itself or apart from y and x) then run the
 * backend's own op and add, and linear_geglu (y = geglu(linear(x)), w
 * [2D, C] and y [..., D]) its linear into h, the caller's scratch of y's
 * type and [..., 2D] (the op may leave anything there), then geglu. h may
 * be NULL: a backend that needs the product in memory then takes room of
 * its own (a GPU that fuses the gate into its GEMM needs none). */
#define SDX_BACKEND_OPS(X) \
    X(linear, 1, (sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b, sdx_dtype compute), \
      (y, x, w, b, compute), (y, x, w, b), (compute)) \
    X(conv2d_pad, 1, (sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b, int stride, \
      int pad_top, int pad_left, int pad_bottom, int pad_right, sdx_dtype compute), \
      (y, x, w, b, stride, pad_top, pad_left, pad_bottom, pad_right, compute), (y, x, w, b), \
      (stride, pad_top, pad_left, pad_bottom, pad_right, compute)) \
    X(linear_add, 0, (sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b, const sdx_tensor *res, \
      sdx_dtype compute), (y, x, w, b, res, compute), (y, x, w, b, res), (compute)) \
    X(linear_geglu, 0, (sdx_tensor *y, sdx_tensor *h, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b, \
      sdx_dtype compute), (y, h, x, w, b, compute), (y, h, x, w, b), (compute)) \
    X(conv2d_pad_add, 0, (sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b, const sdx_tensor *res, \
      int stride, int pad_top, int pad_left, int pad_bottom, int pad_right, sdx_dtype compute), \
      (y, x, w, b, res, stride, pad_top, pad_left, pad_bottom, pad_right, compute), (y, x, w, b, res), \
      (stride, pad_top, pad_left, pad_bottom, pad_right, compute)) \
    X(group_norm, 1, (sdx_tensor *y, const sdx_tensor *x, int groups, float eps, const sdx_tensor *gamma, \
      const sdx_tensor *beta, int fuse_silu, sdx_dtype compute), \
      (y, x, groups, eps, gamma, beta, fuse_silu, compute), (y, x, gamma, beta), (groups, eps, fuse_silu, compute)) \
    X(layer_norm, 1, (sdx_tensor *y, const sdx_tensor *x, float eps, const sdx_tensor *gamma, const sdx_tensor *beta), \
      (y, x, eps, gamma, beta), (y, x, gamma, beta), (eps)) \
    X(attention, 1, (sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v, int heads, \
      int causal, sdx_dtype compute), (y, q, k, v, heads, causal, compute), (y, q, k, v), (heads, causal, compute)) \
    X(silu, 1, (sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute), (y, x, compute), (y, x), (compute)) \
    X(gelu, 1, (sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute), (y, x, compute), (y, x), (compute)) \
    X(quick_gelu, 1, (sdx_tensor *y, const sdx_tensor *x), (y, x), (y, x), ()) \
    X(geglu, 1, (sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute), (y, x, compute), (y, x), (compute)) \
    X(scale, 1, (sdx_tensor *y, const sdx_tensor *x, float s), (y, x, s), (y, x), (s)) \
    X(copy, 1, (sdx_tensor *y, const sdx_tensor *x), (y, x), (y, x), ()) \
    X(add, 1, (sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b), (y, a, b), (y, a, b), ()) \
    X(add_channel_bias, 1, (sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *v), (y, x, v), (y, x, v), ()) \
    X(resize_nearest, 1, (sdx_tensor *y, const sdx_tensor *x), (y, x), (y, x), ()) \
    X(pad_circular, 1, (sdx_tensor *y, const sdx_tensor *x, int top, int left, int bottom, int right), \
      (y, x, top, left, bottom, right), (y, x), (top, left, bottom, right)) \
    X(concat_channels, 1, (sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b), (y, a, b), (y, a, b), ()) \
    X(nchw_to_nlc, 1, (sdx_tensor *y, const sdx_tensor *x), (y, x), (y, x), ()) \
    X(nlc_to_nchw, 1, (sdx_tensor *y, const sdx_tensor *x), (y, x), (y, x), ()) \
    X(clamp, 1, (sdx_tensor *y, const sdx_tensor *x, float lo, float hi), (y, x, lo, hi), (y, x), (lo, hi)) \
    X(tanh_clamp, 1, (sdx_tensor *y, const sdx_tensor *x, float limit), (y, x, limit), (y, x), (limit)) \
    X(leaky_relu, 1, (sdx_tensor *y, const sdx_tensor *x, float slope), (y, x, slope), (y, x), (slope)) \
    X(softmax, 0, (sdx_tensor *y, const sdx_tensor *x), (y, x), (y, x), ()) \
    X(mul, 0, (sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b), (y, a, b), (y, a, b), ())

/* A row's parameter list with the context first: int op SDX_BACKEND_PARAMS(...) */
#define SDX_BACKEND_PARAMS(...) (sdx_ctx *ctx, __VA_ARGS__)
#define SDX__BACKEND_FIELD(name, required, params, args, operands, scalars) int (*name) SDX_BACKEND_PARAMS params;

typedef struct sdx_backend {
    const char *name;          /* "cpu", "hip:0 (NVIDIA H100)", ... */
    void *user;                /* the backend's state: sdx_backend_user(ctx) */
    int host_memory;           /* 1: its buffers are host memory (the CPU) */
    /* 1: linear multiplies a block-quantized weight (SDX_Q4_0 ... SDX_Q6_K,
     * ggml's layouts, rows of whole blocks) as it is: the loader keeps
     * such matrices quantized, as the file holds them. 0: it dequantizes
     * them at load (upload) into f16, and no kernel sees a block. */
    int linear_blocks;
    /* 1: conv2d_pad takes a block-quantized weight likewise, its rows
     * (in_channels x kh x kw per output channel) whole blocks: the layout
     * of sdx's own `--quantize-convolutions` GGUF files. */
    int conv_blocks;

    /* memory; alloc returns NULL on failure */
    void *(*alloc)(void *user, size_t bytes);
    void  (*free)(void *user, void *ptr);
    int   (*upload)(void *user, void *dst, const void *src, size_t bytes);
    int   (*download)(void *user, void *dst, const void *src, size_t bytes);
    void  (*release)(void *user);          /* at sdx_destroy or replacement; may be NULL */

    /* kernels (sdx_ctx first), as SDX_BACKEND_OPS lists them */
    SDX_BACKEND_OPS(SDX__BACKEND_FIELD)

    /* Optional: the loader wrote a weight slot `w` in this backend's memory
     * (made it, or gave it new values: LoRA; `file`, when not NULL, is
     * sdx's handle of the mapped checkpoint the values view), or its values
     * are about to change, its file pages go, or it goes away (`gone`). A
     * backend that keeps copies derived from weights (the CPU's packed
     * bf16 panels) keeps them current here; one that computes from a layout
     * of its own rearranges the values in place at weight_added (the HIP
     * backend's convolution weights, channels-last): sdx writes slots in
     * its layout and reads back only 1-D ones (norms). */
    int  (*weight_added)(sdx_ctx *ctx, const sdx_tensor *w, const void *file);
    void (*weight_changed)(sdx_ctx *ctx, const sdx_tensor *w, int gone);

    /* Optional: graphs (CUDA and HIP graphs in sdx_hip.h). sdx records a
     * model call once and has the backend replay it as one launch while
     * its ops stay the same (sdx checks that on the host; README, GPU).
     * `slot` names the call site (a few, from 0); `action` is one of:
     *   SDX_GRAPH_RECORD  capture the ops and uploads from here on instead
     *                     of running them (an older recording of the slot
     *                     goes);
     *   SDX_GRAPH_KEEP    end the capture, keep it and launch it once (the
     *                     recorded call's results);
     *   SDX_GRAPH_DROP    end the capture and forget it (the call failed),
     *                     or end a check that launches nothing (uploads copy
     *                     again; the slot keeps its recording);
     *   SDX_GRAPH_CHECK   a replay comes: the uploads until it write the
     *                     capture's staging again instead of copying;
     *   SDX_GRAPH_LAUNCH  launch the slot's recording; return 1 instead
     *                     when it cannot be replayed any more (buffers of
     *                     the backend's own that it used were replaced):
     *                     sdx then records again.
     * Returns SDX_OK (or 1) or an error. */
    int  (*graph)(sdx_ctx *ctx, int slot, int action);
} sdx_backend;

enum { SDX_GRAPH_RECORD = 1, SDX_GRAPH_KEEP, SDX_GRAPH_DROP, SDX_GRAPH_CHECK, SDX_GRAPH_LAUNCH };

/* Puts the context on `backend` (copied; NULL = the CPU). Fails while the
 * context still holds device memory (load models after this call). */
SDX_API sdx_result sdx_set_backend(sdx_ctx *ctx, const sdx_backend *backend);
SDX_API const char *sdx_backend_name(const sdx_ctx *ctx);
SDX_API void *sdx_backend_user(const sdx_ctx *ctx);
/* Device memory held now and at most so far (0 on the CPU backend),
 * the backend's own scratch included. */
SDX_API size_t sdx_device_bytes(const sdx_ctx *ctx, size_t *peak);
/* For backends: the device memory the backend itself holds now, in all
 * (buffers it keeps between ops), so that sdx_device_bytes counts it. */
SDX_API void sdx_backend_scratch(sdx_ctx *ctx, size_t bytes);
/* For backends: sets the context's message, returns `code`. */
SDX_API sdx_result sdx_fail(sdx_ctx *ctx, int code, const char *fmt, ...);

#ifdef __cplusplus
}
#endif

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
 * BF16 storage (any mix), and owe the precision policy what the CPU
 * kernels do: f32 accumulation, f32 norm statistics and softmax, f16
 * stores that saturate at +-65504. Before a call sdx checks only that
 * every operand is in the backend's memory; shapes, dtypes and
 * parameters are the kernel's to check against its contract
 * (docs/INTERNALS.md, "Kernel API"), as the CPU and HIP kernels do: a
 * wrong shape must be an error naming the operands, never an access past
 * a buffer. A kernel returns SDX_OK or an error code, with sdx_fail for
 * the message.
 *
 * Set the backend before loading models: weights are uploaded once, at
 * load, in their storage dtype. */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sdx_backend {
    const char *name;          /* "cpu", "hip:0 (NVIDIA H100)", ... */
    void *user;                /* the backend's state: sdx_backend_user(ctx) */
    int host_memory;           /* 1: its buffers are host memory (the CPU) */

    /* memory; alloc returns NULL on failure */
    void *(*alloc)(void *user, size_t bytes);
    void  (*free)(void *user, void *ptr);
    int   (*upload)(void *user, void *dst, const void *src, size_t bytes);
    int   (*download)(void *user, void *dst, const void *src, size_t bytes);
    void  (*release)(void *user);          /* at sdx_destroy or replacement; may be NULL */

    /* kernels (sdx_ctx first, as the CPU's) */
    int (*linear)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b);
    int (*conv2d)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                  int stride, int pad_top, int pad_left, int pad_bottom, int pad_right);
    int (*group_norm)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                      const sdx_tensor *gamma, const sdx_tensor *beta, int fuse_silu);
    int (*layer_norm)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, float eps,
                      const sdx_tensor *gamma, const sdx_tensor *beta);
    int (*softmax)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*attention)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                     int heads, int causal);
    int (*silu)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*gelu)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*quick_gelu)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*geglu)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*scale)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, float s);
    int (*copy)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*add)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b);
    int (*mul)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b);
    int (*add_channel_bias)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *v);
    int (*resize_nearest)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*pad_circular)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, int top, int left, int bottom, int right);
    int (*concat_channels)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b);
    int (*nchw_to_nlc)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*nlc_to_nchw)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x);
    int (*clamp)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, float lo, float hi);
    int (*tanh_clamp)(sdx_ctx *, sdx_tensor *y, const sdx_tensor *x, float limit);
} sdx_backend;

/* Puts the context on `backend` (copied; NULL = the CPU). Fails while the
 * context still holds device memory (load models after this call). */
SDX_API int   sdx_set_backend(sdx_ctx *ctx, const sdx_backend *backend);
SDX_API const char *sdx_backend_name(const sdx_ctx *ctx);
SDX_API void *sdx_backend_user(const sdx_ctx *ctx);
/* Device memory held now and at most so far (0 on the CPU backend). */
SDX_API size_t sdx_device_bytes(const sdx_ctx *ctx, size_t *peak);
/* For backends: sets the context's message, returns `code`. */
SDX_API int   sdx_fail(sdx_ctx *ctx, int code, const char *fmt, ...);

#ifdef __cplusplus
}
#endif

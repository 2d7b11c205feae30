#pragma once
#include "../core/context.c"
#include "conv.c"
#include "elementwise.c"
#include "norm.c"
#include "attention.c"

/* ===================================================================== */
/*  The CPU backend: host memory, the kernels above                       */
/* ===================================================================== */

static void *sdx__cpu_alloc(void *user, size_t bytes) { (void)user; return SDX_MALLOC(bytes); }
static void  sdx__cpu_free(void *user, void *ptr) { (void)user; SDX_FREE(ptr); }
static int sdx__cpu_move(void *user, void *dst, const void *src, size_t bytes) {
    (void)user;
    if (bytes) memcpy(dst, src, bytes);
    return SDX_OK;
}

/* A convolution plus a residual: the convolution's paths (direct,
 * Winograd, their bf16 forms) store y themselves, so the add follows as
 * its own pass. */
static int sdx__cpu_conv2d_pad_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                   const sdx_tensor *res, int stride, int pad_top, int pad_left, int pad_bottom, int pad_right,
                                   sdx_dtype compute) {
    return sdx__composed_conv2d_pad_add(ctx, &ctx->host, y, x, w, b, res, stride, pad_top, pad_left, pad_bottom, pad_right, compute);
}

/* GEGLU after a linear: the GEMM's columns come in blocks that never
 * hold a value and its gate together, so the gate is its own pass over h. */
static int sdx__cpu_linear_geglu(sdx_ctx *ctx, sdx_tensor *y, sdx_tensor *h, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                                 sdx_dtype compute) {
    return sdx__composed_linear_geglu(ctx, &ctx->host, y, h, x, w, b, compute);
}

/* The CPU backend, with its own state: the context's host backend. */
static int sdx__cpu_backend_new(sdx_ctx *ctx, sdx_backend *b) {
    sdx__cpu_state *s = sdx__cpu_state_new(ctx);
    if (!s) return SDX_ERR_NOMEM;
    memset(b, 0, sizeof *b);
    b->name = "cpu";
    b->user = s;
    b->host_memory = 1;
    b->linear_blocks = 1;      /* dequantized into the GEMM's panels (gemm.c) */
    b->conv_blocks = 1;        /* and into the convolutions' (conv.c) */
    b->alloc = sdx__cpu_alloc;
    b->free = sdx__cpu_free;
    b->upload = sdx__cpu_move;
    b->download = sdx__cpu_move;
    b->release = sdx__cpu_state_free;
    b->weight_added = sdx__cpu_weight_added;
    b->weight_changed = sdx__cpu_weight_changed;
#define SDX__CPU_OP(name, required, params, args, operands, scalars) b->name = sdx__cpu_##name;
    SDX_BACKEND_OPS(SDX__CPU_OP)
#undef SDX__CPU_OP
    return SDX_OK;
}

/* A context starts on the CPU, which is also its host backend for good:
 * sdx_create lives here, where that backend is known (core/context.c
 * does the rest). */
SDX_API sdx_ctx *sdx_create(const sdx_desc *desc) {
    sdx_ctx *ctx = sdx__ctx_new(desc);
    if (!ctx) return NULL;
    if (sdx__cpu_backend_new(ctx, &ctx->host) != SDX_OK) {
        sdx__ctx_delete(ctx);
        return NULL;
    }
    ctx->be = ctx->host;
    return ctx;
}

#pragma once
/* ===================================================================== */
/*  Context: creation and teardown                                        */
/* ===================================================================== */
/* The context owns the thread pool and the CPU kernels' scratch, so it is
 * made here, above both. */
#include "core.c"
#include "../cpu/kernels.c"

static int sdx__cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (n > 256 ? 256 : (int)n);
}

SDX_API sdx_ctx *sdx_create(const sdx_desc *desc) {
    sdx_desc d;
    sdx_ctx *ctx;
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    if (!d.alloc || !d.realloc || !d.free) d.alloc = NULL, d.realloc = NULL, d.free = NULL;
    ctx = (sdx_ctx *)(d.alloc ? d.alloc(sizeof *ctx, d.user) : SDX_MALLOC(sizeof *ctx));
    if (!ctx) return NULL;
    memset(ctx, 0, sizeof *ctx);
    ctx->desc = d;
    ctx->n_threads = d.n_threads > 0 ? d.n_threads : sdx__cpu_count();
    ctx->trace = d.trace_nonfinite;
    return ctx;
}

SDX_API void sdx_destroy(sdx_ctx *ctx) {
    if (!ctx) return;
    sdx__pool_destroy(ctx->pool);
    sdx__kernel_state_free(ctx);
    sdx__free(ctx, ctx);
}

SDX_API void sdx_set_trace(sdx_ctx *ctx, int enabled) { if (ctx) ctx->trace = enabled; }
SDX_API int  sdx_threads(const sdx_ctx *ctx) { return ctx ? ctx->n_threads : 0; }


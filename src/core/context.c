#pragma once
/* ===================================================================== */
/*  Context: creation and teardown                                        */
/* ===================================================================== */
/* The context owns the thread pool and its backends: the host (the CPU,
 * for good) and the one it computes on (the host, or a device's). */
#include "core.c"
#include "ops.c"

#ifndef SDX_MAX_THREADS
#define SDX_MAX_THREADS 512
#endif

/* A context without backends: sdx_create (cpu/backend.c) gives it the
 * CPU as its host backend. */
static sdx_ctx *sdx__ctx_new(const sdx_desc *desc) {
    sdx_desc d;
    sdx_ctx *ctx;
    if (desc) d = *desc; else memset(&d, 0, sizeof d);
    if ((d.alloc || d.realloc || d.free) && !(d.alloc && d.realloc && d.free)) {
        if (d.log) d.log(SDX_LOG_ERROR, "sdx_create: set all three allocator hooks (alloc, realloc, free) or none", d.user);
        return NULL;
    }
    ctx = (sdx_ctx *)(d.alloc ? d.alloc(sizeof *ctx, d.user) : SDX_MALLOC(sizeof *ctx));
    if (!ctx) return NULL;
    memset(ctx, 0, sizeof *ctx);
    ctx->desc = d;
    ctx->n_threads = d.n_threads > 0 ? d.n_threads : sdx__cpu_count();
    /* every thread is a pool worker with its own scratch: a mistyped count
     * (-t 100000) would spend minutes starting threads, not an error */
    if (ctx->n_threads > SDX_MAX_THREADS) {
        if (d.log) d.log(SDX_LOG_WARN, "sdx_create: n_threads clamped to SDX_MAX_THREADS", d.user);
        ctx->n_threads = SDX_MAX_THREADS;
    }
    ctx->trace = d.trace_nonfinite;
    return ctx;
}

static void sdx__ctx_delete(sdx_ctx *ctx) { sdx__free(ctx, ctx); }

/* A device backend's state goes with it (its recorded graphs too); the
 * host's stays until the end. */
static void sdx__backend_release(sdx_ctx *ctx) {
    sdx__graph_free(ctx);
    if (ctx->be.release && ctx->be.user != ctx->host.user) ctx->be.release(ctx->be.user);
}

SDX_API void sdx_destroy(sdx_ctx *ctx) {
    if (!ctx) return;
    sdx__circular_end(ctx);
    sdx__backend_release(ctx);
    sdx__pool_destroy(ctx->pool);
    if (ctx->host.release) ctx->host.release(ctx->host.user);
    sdx__ctx_delete(ctx);
}

SDX_API void sdx_set_trace(sdx_ctx *ctx, int enabled) { if (ctx) ctx->trace = enabled; }
SDX_API int  sdx_threads(const sdx_ctx *ctx) { return ctx ? ctx->n_threads : 0; }

/* ---- backends ---------------------------------------------------------- */

/* Every field a backend must fill: a NULL one would crash mid-generation,
 * so it is refused here, by name. */
static const char *sdx__backend_missing(const sdx_backend *b) {
#define SDX__NEED(f) if (!b->f) return #f;
#define SDX__NEED_OP(name, required, params, args, operands, scalars) if (required && !b->name) return #name;
    SDX__NEED(name) SDX__NEED(alloc) SDX__NEED(free) SDX__NEED(upload) SDX__NEED(download)
    SDX_BACKEND_OPS(SDX__NEED_OP)
#undef SDX__NEED_OP
#undef SDX__NEED
    return NULL;
}

SDX_API sdx_result sdx_set_backend(sdx_ctx *ctx, const sdx_backend *backend) {
    const char *missing;
    if (!ctx) return SDX_ERR_INVALID_ARG;
    if (backend && (missing = sdx__backend_missing(backend)) != NULL)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_set_backend: backend '%s' has no %s",
                         backend->name ? backend->name : "?", missing);
    if (ctx->dev_bytes)
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_set_backend: the context still holds %zu bytes on backend '%s' "
                         "(free its models first)", ctx->dev_bytes, ctx->be.name);
    sdx__backend_release(ctx);
    ctx->be = backend ? *backend : ctx->host;
    ctx->dev_peak = ctx->be_scratch = 0;
    return SDX_OK;
}

SDX_API const char *sdx_backend_name(const sdx_ctx *ctx) { return ctx ? ctx->be.name : "none"; }
SDX_API void *sdx_backend_user(const sdx_ctx *ctx) { return ctx ? ctx->be.user : NULL; }

SDX_API size_t sdx_device_bytes(const sdx_ctx *ctx, size_t *peak) {
    if (peak) *peak = ctx ? ctx->dev_peak : 0;
    return ctx ? ctx->dev_bytes + ctx->be_scratch : 0;
}

SDX_API void sdx_backend_scratch(sdx_ctx *ctx, size_t bytes) {
    if (!ctx) return;
    ctx->be_scratch = bytes;
    if (ctx->dev_bytes + bytes > ctx->dev_peak) ctx->dev_peak = ctx->dev_bytes + bytes;
}

SDX_API sdx_result sdx_fail(sdx_ctx *ctx, int code, const char *fmt, ...) {
    sdx_result rc;
    va_list ap;
    va_start(ap, fmt);
    rc = sdx__vfail(ctx, code, fmt, ap);
    va_end(ap);
    return rc;
}

#pragma once
/* A part of core.c, included after platform.c (the counter); the include
 * below is for editors. */
#include "core.c"

/* ===================================================================== */
/*  Cancellation: sdx_cancel from any thread, checks in the long stages   */
/* ===================================================================== */
/* sdx_cancel only bumps ctx->cancels (an atomic counter); nothing else is
 * shared with the thread running the call. Each cancellable public call
 * notes the counter as the first thing it does (sdx__call_begin) and
 * stops at its next check once the counter has moved: cancels made
 * before it began never reach it, every one made after does until its
 * last check. A sampling session notes it in sdx_sampling_begin, and
 * its steps check against that, so a cancel between two steps ends the
 * next one. Checks run on the calling thread, between units of work (a
 * model evaluation, a VAE block or tile, an upscaler tile or block). */

SDX_API void sdx_cancel(sdx_ctx *ctx) {
    if (ctx) sdx__counter_add1(&ctx->cancels);
}

/* A cancellable call begins: cancels from now on stop it. */
static void sdx__call_begin(sdx_ctx *ctx) { ctx->cancels_seen = sdx__counter_read(&ctx->cancels); }

/* 1 when sdx_cancel was called since the running call began. */
static int sdx__cancel_requested(sdx_ctx *ctx) { return sdx__counter_read(&ctx->cancels) != ctx->cancels_seen; }

/* SDX_OK, or SDX_ERR_CANCELLED with "cancelled (sdx_cancel) <where>" as
 * the error when sdx_cancel was called since the running call began. */
static SDX__PRINTF(2, 3) int sdx__check_cancel(sdx_ctx *ctx, const char *where, ...) {
    char buf[256];
    va_list ap;
    if (SDX__LIKELY(!sdx__cancel_requested(ctx))) return SDX_OK;
    va_start(ap, where);
    vsnprintf(buf, sizeof buf, where, ap);
    va_end(ap);
    return sdx__fail(ctx, SDX_ERR_CANCELLED, "cancelled (sdx_cancel) %s", buf);
}

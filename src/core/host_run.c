#pragma once
#include "core.c"
/* ===================================================================== */
/*  A model pass from host tensors                                        */
/* ===================================================================== */
/* The codecs (VAE, TAESD) take and give host tensors: the pipeline's
 * latents and images. On the CPU a pass reads and writes them in place;
 * on a device backend it runs on device copies (`in` uploaded in its own
 * dtype, so the pass computes what it would from `in` itself; the F32
 * result downloaded into `out`), so only they cross the bus. */

/* A pass: `in` -> `out`, both where the backend computes; temporaries
 * from `arena`. `user` is the model part's own. */
typedef int (*sdx__pass_fn)(sdx_ctx *ctx, sdx__arena *arena, const void *user, const sdx_tensor *in, sdx_tensor *out);

typedef struct {
    sdx_ctx *ctx; sdx__arena *arena; sdx__pass_fn pass; const void *user;
    const sdx_tensor *in; sdx_tensor *out;
} sdx__host_pass;

/* The device side: copies of in and out, the pass between the copies
 * (planned alone: sdx__plan, which moves no data). */
static int sdx__host_pass_run(void *arg) {
    const sdx__host_pass *h = (const sdx__host_pass *)arg;
    sdx_ctx *ctx = h->ctx;
    const int planning = ctx->graph.state == SDX__GRAPH_PLANNING;
    sdx__mark m = sdx__arena_mark(h->arena);
    sdx_tensor din, dout;
    int rc = SDX_ERR_NOMEM;
    if (!sdx__arena_tensor(h->arena, &din, h->in->dtype, h->in->ndim, h->in->shape) ||
        !sdx__arena_tensor(h->arena, &dout, SDX_F32, h->out->ndim, h->out->shape))
        goto done;
    /* the same dtype on both sides: the bytes as they are */
    if ((planning || (rc = ctx->be.upload(ctx->be.user, din.data, h->in->data, sdx_tensor_nbytes(h->in))) == SDX_OK) &&
        (rc = h->pass(ctx, h->arena, h->user, &din, &dout)) == SDX_OK && !planning)
        rc = sdx__download(ctx, (float *)h->out->data, &dout);
done:
    sdx__arena_release(h->arena, m);
    return rc;
}

/* Runs `pass` from host tensors: `in` (any float dtype) to `out` (F32). */
static int sdx__host_run(sdx_ctx *ctx, sdx__arena *arena, sdx__pass_fn pass, const void *user, const sdx_tensor *in,
                         sdx_tensor *out) {
    sdx__host_pass h;
    if (!sdx__on_device(ctx)) return pass(ctx, arena, user, in, out);
    h.ctx = ctx; h.arena = arena; h.pass = pass; h.user = user; h.in = in; h.out = out;
    return sdx__planned(ctx, sdx__host_pass_run, &h);
}

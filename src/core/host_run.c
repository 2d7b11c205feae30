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

/* Runs `pass` from host tensors: `in` (any float dtype) to `out` (F32). */
static int sdx__host_run(sdx_ctx *ctx, sdx__arena *arena, sdx__pass_fn pass, const void *user, const sdx_tensor *in,
                         sdx_tensor *out) {
    sdx__mark m;
    sdx_tensor din, dout;
    int rc = SDX_ERR_NOMEM;
    if (!sdx__on_device(ctx)) return pass(ctx, arena, user, in, out);
    m = sdx__arena_mark(arena);
    if (!sdx__arena_tensor(arena, &din, in->dtype, in->ndim, in->shape) ||
        !sdx__arena_tensor(arena, &dout, SDX_F32, out->ndim, out->shape))
        goto done;
    /* the same dtype on both sides: the bytes as they are */
    if ((rc = ctx->be.upload(ctx->be.user, din.data, in->data, sdx_tensor_nbytes(in))) == SDX_OK &&
        (rc = pass(ctx, arena, user, &din, &dout)) == SDX_OK)
        rc = sdx__download(ctx, (float *)out->data, &dout);
done:
    sdx__arena_release(arena, m);
    return rc;
}

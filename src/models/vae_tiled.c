#pragma once
#include "../core/safetensors.c"
#include "../core/ops.c"
#include "vae_model.c"

/* ===================================================================== */
/*  VAE in tiles: the walk of vae_model.c with one tile's activations at  */
/*  a time, exact (no overlap, no blending)                               */
/* ===================================================================== */

/* ---- tiling ------------------------------------------------------------- */
/* A tiled pass computes what the untiled one does, with the activations of
 * one tile at a time on the device. Two things make the VAE non-local:
 * - GroupNorm normalises with statistics over the whole image. The tiles
 *   therefore run in lock-step, one stage (the convolutions between two
 *   GroupNorms) at a time: each stage's output is assembled on the host as
 *   a "plane" (the whole activation, in the activation dtype), its
 *   per-group statistics are taken there with the kernel's own moments
 *   (sdx__moments: two passes, f64), and the next stage normalises every
 *   tile with them. The statistics are thus those of the untiled pass.
 * - Convolutions see across tile borders. A stage holds one 3x3
 *   convolution (a 1x1 shortcut, the Upsample's nearest doubling and the
 *   residual add are pointwise), so each tile is cut from its input plane
 *   with the convolution's exact margin, taking the zero or circular
 *   padding of the layer where the margin leaves the image, and yields
 *   exactly its own rectangle. Tiles partition the image: no overlap, no
 *   blending, no seams.
 * The mid block, whose attention is global, runs untiled at latent size
 * (the decoder's start, the encoder's end). A VAE with attention inside
 * its levels (none of SD 1.x/2.x/SDXL) is not tiled.
 * Memory: the arena holds one tile's temporaries (or the latent-size mid
 * block); the host holds at most three planes at once: a ResBlock's
 * input, its conv1 output and, where the channel count changes, its
 * shortcut (sdx__vae.tiled_plane_peak reports the bytes). */

typedef struct sdx__vae_tiler {
    sdx_ctx *ctx;
    sdx__vae *v;
    sdx__arena *arena;
    int64_t ny, nx;          /* tiles per axis: the same grid at every resolution */
    int circular;            /* seamless: 3x3 convolutions wrap around */
    sdx_dtype act;
    size_t held, peak;       /* host bytes in planes */
} sdx__vae_tiler;

static int sdx__vae_plane_new(sdx__vae_tiler *t, sdx_tensor *p, sdx_dtype dtype, int64_t c, int64_t h, int64_t w) {
    int64_t shape[4] = { 1, c, h, w };
    size_t bytes;
    *p = sdx__view4(dtype, NULL, 1, c, h, w);
    if (!sdx__shape_bytes(dtype, 4, shape, &bytes))
        return sdx__fail(t->ctx, SDX_ERR_INVALID_ARG, "VAE tile plane of %lld x %lld x %lld overflows", (long long)c,
                         (long long)h, (long long)w);
    if (!(p->data = sdx__malloc(t->ctx, bytes ? bytes : 1))) return sdx__nomem(t->ctx, "VAE tile plane", bytes);
    t->held += bytes;
    if (t->held > t->peak) t->peak = t->held;
    return SDX_OK;
}

static void sdx__vae_plane_free(sdx__vae_tiler *t, sdx_tensor *p) {
    if (!p->data) return;
    t->held -= sdx_tensor_nbytes(p);
    sdx__free(t->ctx, p->data);
    p->data = NULL;
}

typedef struct sdx__vae_stats_args {
    const sdx_tensor *x;
    int64_t n;               /* elements per group */
    double *mean, *var;
} sdx__vae_stats_args;

static void sdx__vae_stats_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__vae_stats_args *a = (const sdx__vae_stats_args *)arg;
    (void)thread;
    for (int64_t g = begin; g < end; g++) sdx__moments(a->x, g * a->n, a->n, &a->mean[g], &a->var[g]);
}

/* GroupNorm as a per-channel map y = (x - norm[C + c]) * norm[c] +
 * norm[2C + c] (scale, the group's mean, beta), C the plane's channels:
 * subtracting the mean first, as sdx__cpu_group_norm does, so a mean far
 * from zero against the spread costs no precision. norm: 3C floats. */
static int sdx__vae_norm_affine(sdx__vae_tiler *t, int64_t c, const double *mean, const double *var, const sdx_tensor *gamma,
                                const sdx_tensor *beta, float *norm) {
    int64_t cpg = c / SDX__VAE_GROUPS;
    int rc;
    if ((rc = sdx__download(t->ctx, norm, gamma)) != SDX_OK || (rc = sdx__download(t->ctx, norm + 2 * c, beta)) != SDX_OK) return rc;
    for (int64_t ch = 0; ch < c; ch++) {
        int64_t g = ch / cpg;
        norm[ch] *= (float)(1.0 / sqrt(var[g] + (double)SDX__VAE_EPS));
        norm[c + ch] = (float)mean[g];
    }
    return SDX_OK;
}

/* GroupNorm of a whole plane as that per-channel map (host, from the
 * arena). */
static int sdx__vae_plane_norm(sdx__vae_tiler *t, const sdx_tensor *x, const sdx_tensor *gamma, const sdx_tensor *beta, float *norm) {
    int64_t c = x->shape[1], cpg = c / SDX__VAE_GROUPS;
    double mean[SDX__VAE_GROUPS], var[SDX__VAE_GROUPS];
    sdx__vae_stats_args a;
    a.x = x;
    a.n = cpg * x->shape[2] * x->shape[3];
    a.mean = mean;
    a.var = var;
    sdx__parallel_for(t->ctx, SDX__VAE_GROUPS, sdx__vae_stats_range, &a);
    return sdx__vae_norm_affine(t, c, mean, var, gamma, beta, norm);
}

/* Cuts the window [y0, y0 + h) x [x0, x0 + w) of `src` seen `up` times
 * larger (nearest) into dst f32 [C, h, w]. Outside the plane: zero, or the
 * wrapped-around value when circular. With norm, values from the plane
 * become (x - mean) * scale + beta (GroupNorm, the map of
 * sdx__vae_norm_affine), and sdx__vae_cut_to then runs the SiLU op over
 * the tile (the untiled decode's bits; silu(0) = 0, so the padding stays
 * zero, as it pads the normalised tensor). */
typedef struct sdx__vae_cut {
    float *dst, *rows;       /* rows: one source row per thread */
    const sdx_tensor *src;
    int64_t y0, x0, h, w;
    int up, circular;
    const float *norm;
} sdx__vae_cut;

static int64_t sdx__vae_wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

static void sdx__vae_cut_range(void *arg, int64_t begin, int64_t end, int thread) {
    const sdx__vae_cut *a = (const sdx__vae_cut *)arg;
    int64_t sh = a->src->shape[2], sw = a->src->shape[3], H = sh * a->up, W = sw * a->up;
    float *row = a->rows + (size_t)thread * (size_t)sw;
    /* the source columns the window needs (all of them when it wraps) */
    int64_t lo = SDX__MAX(a->x0, (int64_t)0) / a->up, hi = (SDX__MIN(a->x0 + a->w, W) - 1) / a->up + 1;
    if (a->circular && (a->x0 < 0 || a->x0 + a->w > W)) lo = 0, hi = sw;
    for (int64_t c = begin; c < end; c++)
        for (int64_t yy = 0; yy < a->h; yy++) {
            float *d = a->dst + (c * a->h + yy) * a->w;
            int64_t y = a->y0 + yy;
            if (y < 0 || y >= H) {
                if (!a->circular) { memset(d, 0, (size_t)a->w * sizeof(float)); continue; }
                y = sdx__vae_wrap(y, H);
            }
            if (hi > lo) sdx__load_f32(a->src->data, a->src->dtype, (c * sh + y / a->up) * sw + lo, hi - lo, row + lo);
            for (int64_t xx = 0; xx < a->w; xx++) {
                int64_t x = a->x0 + xx;
                float val;
                if (x < 0 || x >= W) {
                    if (!a->circular) { d[xx] = 0.0f; continue; }
                    x = sdx__vae_wrap(x, W);
                }
                val = row[x / a->up];
                if (a->norm) {
                    int64_t nc = a->src->shape[1];
                    val = (val - a->norm[nc + c]) * a->norm[c] + a->norm[2 * nc + c];
                }
                d[xx] = val;
            }
        }
}

/* One stage over all tiles: dst[tile] = conv(cut(src)) (+ res[tile]).
 * The convolution has the layer's padding (1 for 3x3, 0 for 1x1; a
 * stride-2 Downsample pads right and bottom only, with zeros even when
 * seamless, as sdx__conv2d does). res may alias dst: a tile reads its own
 * rectangle of res before writing it, and tiles do not overlap. */
typedef struct sdx__vae_stage {
    const sdx_tensor *src, *w, *b, *res;
    sdx_tensor *dst;
    const float *norm;       /* GroupNorm + SiLU of src, or NULL */
    int up, stride;
} sdx__vae_stage;

/* A host tensor the kernels can use in place: no copy to or from it. */
static int sdx__vae_direct(const sdx_tensor *t) { return !t->device && t->dtype == SDX_F32; }

/* Cuts into a new tile tensor `dev` of the arena (device memory on a GPU). */
static int sdx__vae_cut_to(sdx__vae_tiler *t, sdx_tensor *dev, const sdx__vae_cut *cut, int64_t c) {
    sdx__vae_cut a = *cut;
    int rc;
    size_t nrow = (size_t)sdx_threads(t->ctx) * (size_t)cut->src->shape[3], bytes = sizeof(float) * (size_t)(c * a.h * a.w);
    if (!sdx__arena_tensor4(t->arena, dev, t->act, 1, c, a.h, a.w) ||
        !(a.dst = sdx__vae_direct(dev) ? (float *)dev->data : (float *)sdx__arena_host_alloc(t->arena, bytes)) ||
        !(a.rows = (float *)sdx__arena_host_alloc(t->arena, sizeof(float) * (nrow ? nrow : 1))))
        return sdx__nomem(t->ctx, "VAE tile", bytes);
    sdx__parallel_for(t->ctx, c, sdx__vae_cut_range, &a);
    if (!sdx__vae_direct(dev) && (rc = sdx__upload(t->ctx, dev, a.dst)) != SDX_OK) return rc;
    /* the backend's SiLU over the whole tile, not a value at a time in the
     * cut: its vector forms, and on a GPU its own bits, as untiled */
    return cut->norm ? sdx__silu(t->ctx, dev, dev, SDX_F32) : SDX_OK;
}

/* The stage's output over the th x tw tile at (y0, x0): `out`, a tensor
 * of the arena [1, cout, th, tw]. */
static int sdx__vae_stage_compute(sdx__vae_tiler *t, const sdx__vae_stage *s, int64_t y0, int64_t x0, int64_t th, int64_t tw,
                                  sdx_tensor *out) {
    int64_t k = s->w->shape[2], pad = k == 3 && s->stride == 1, cin = s->src->shape[1], cout = s->w->shape[0];
    sdx__vae_cut cut;
    sdx_tensor tin, tres;
    int rc;
    if ((rc = sdx__check_cancel(t->ctx, "between the VAE's tiles")) != SDX_OK) return rc;
    memset(&cut, 0, sizeof cut);
    cut.src = s->src;
    cut.y0 = y0 * s->stride - pad;
    cut.x0 = x0 * s->stride - pad;
    cut.h = (th - 1) * s->stride + k;
    cut.w = (tw - 1) * s->stride + k;
    cut.up = s->up;
    cut.circular = t->circular && pad;
    cut.norm = s->norm;
    if ((rc = sdx__vae_cut_to(t, &tin, &cut, cin)) != SDX_OK) return rc;
    if (!sdx__arena_tensor4(t->arena, out, t->act, 1, cout, th, tw))
        return sdx__nomem(t->ctx, "VAE tile", sdx_tensor_nbytes(out));
    if ((rc = sdx__conv2d_pad(t->ctx, out, &tin, s->w, s->b, s->stride, 0, 0, 0, 0, SDX_F32)) != SDX_OK) return rc;
    if (s->res) {
        sdx__vae_cut rc2;
        memset(&rc2, 0, sizeof rc2);
        rc2.src = s->res;
        rc2.y0 = y0;
        rc2.x0 = x0;
        rc2.h = th;
        rc2.w = tw;
        rc2.up = 1;
        if ((rc = sdx__vae_cut_to(t, &tres, &rc2, cout)) != SDX_OK || (rc = sdx__add(t->ctx, out, out, &tres)) != SDX_OK)
            return rc;
    }
    return SDX_OK;
}

/* A tile tensor's values as host f32 [C, h, w]: its own memory on the
 * CPU, else a copy in the arena. */
static int sdx__vae_tile_host(sdx__vae_tiler *t, const sdx_tensor *tile, const float **values) {
    size_t bytes = sizeof(float) * (size_t)sdx_tensor_numel(tile);
    float *host;
    if (sdx__vae_direct(tile)) { *values = (const float *)tile->data; return SDX_OK; }
    if (!(host = (float *)sdx__arena_host_alloc(t->arena, bytes))) return sdx__nomem(t->ctx, "VAE tile", bytes);
    *values = host;
    return sdx__download(t->ctx, host, tile);
}

/* Writes host f32 [C, th, tw] into the plane at (y0, x0). */
static void sdx__vae_plane_put(sdx_tensor *plane, const float *host, int64_t y0, int64_t x0, int64_t th, int64_t tw) {
    int64_t c = plane->shape[1], h = plane->shape[2], w = plane->shape[3];
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t y = 0; y < th; y++)
            sdx__store_f32(plane->data, plane->dtype, (ch * h + y0 + y) * w + x0, tw, host + (ch * th + y) * tw);
}

static int sdx__vae_stage_tile(sdx__vae_tiler *t, const sdx__vae_stage *s, int64_t y0, int64_t x0, int64_t th, int64_t tw) {
    sdx_tensor out;
    const float *host = NULL;
    int rc;
    if ((rc = sdx__vae_stage_compute(t, s, y0, x0, th, tw, &out)) != SDX_OK) return rc;
    if ((rc = sdx__vae_tile_host(t, &out, &host)) != SDX_OK) return rc;
    sdx__vae_plane_put(s->dst, host, y0, x0, th, tw);
    return SDX_OK;
}

/* Tile i of an ny x nx grid over an h x w output; 0 when it is empty
 * (more tiles than pixels at this size). */
static int sdx__vae_tile_at(int64_t ny, int64_t nx, int64_t h, int64_t w, int64_t i, int64_t *y0, int64_t *x0, int64_t *th,
                            int64_t *tw) {
    int64_t iy = i / nx, ix = i % nx;
    *y0 = iy * h / ny;
    *x0 = ix * w / nx;
    *th = (iy + 1) * h / ny - *y0;
    *tw = (ix + 1) * w / nx - *x0;
    return *th > 0 && *tw > 0;
}

/* A convolution every tile has used: in low-memory mode its file pages go
 * (the largest planes come at the end, when most of the decoder's weights
 * have run). */
static void sdx__vae_weights_done(sdx__vae_tiler *t, const sdx_tensor *w, const sdx_tensor *b) {
    if (!t->v->low_memory) return;
    sdx__st_release(t->v->w.st, w->data, sdx_tensor_nbytes(w));
    if (b) sdx__st_release(t->v->w.st, b->data, sdx_tensor_nbytes(b));
}

static int sdx__vae_stage_run(sdx__vae_tiler *t, const sdx__vae_stage *s) {
    int64_t y0, x0, th, tw;
    int rc = SDX_OK;
    for (int64_t i = 0; i < t->ny * t->nx && rc == SDX_OK; i++) {
        sdx__mark m = sdx__arena_mark(t->arena);
        if (sdx__vae_tile_at(t->ny, t->nx, s->dst->shape[2], s->dst->shape[3], i, &y0, &x0, &th, &tw))
            rc = sdx__vae_stage_tile(t, s, y0, x0, th, tw);
        sdx__arena_release(t->arena, m);
    }
    sdx__vae_weights_done(t, s->w, s->b);
    return rc;
}

static sdx__vae_stage sdx__vae_stage_of(const sdx_tensor *src, const sdx_tensor *w, const sdx_tensor *b, sdx_tensor *dst) {
    sdx__vae_stage s;
    memset(&s, 0, sizeof s);
    s.src = src;
    s.w = w;
    s.b = b;
    s.dst = dst;
    s.up = s.stride = 1;
    return s;
}

/* A ResBlock's second half: *x += conv2(silu(norm2(hid))), in place.
 * norm: room for hid's channels (3C floats). */
static int sdx__vae_tiled_res_tail(sdx__vae_tiler *t, sdx_tensor *x, const sdx_tensor *hid, const sdx__vae_res *b, float *norm) {
    sdx__vae_stage s;
    int rc;
    if ((rc = sdx__vae_plane_norm(t, hid, b->norm2_w, b->norm2_b, norm)) != SDX_OK) return rc;
    s = sdx__vae_stage_of(hid, b->conv2_w, b->conv2_b, x);
    s.norm = norm;
    s.res = x;
    return sdx__vae_stage_run(t, &s);
}

/* *x = ResBlock(*x), stage by stage; *x is replaced (its plane freed). */
static int sdx__vae_tiled_res(sdx__vae_tiler *t, sdx_tensor *x, const sdx__vae_res *b) {
    int64_t h = x->shape[2], w = x->shape[3], c = SDX__MAX((int64_t)b->cin, (int64_t)b->cout);
    sdx_tensor hid, skip;
    sdx__vae_stage s;
    sdx__mark m = sdx__arena_mark(t->arena);
    float *norm = (float *)sdx__arena_host_alloc(t->arena, 3 * sizeof(float) * (size_t)c);
    int rc;
    hid.data = skip.data = NULL;
    if (!norm) { rc = sdx__nomem(t->ctx, "VAE norm", 3 * sizeof(float) * (size_t)c); goto done; }
    /* conv1(silu(norm1(x))) */
    if ((rc = sdx__vae_plane_norm(t, x, b->norm1_w, b->norm1_b, norm)) != SDX_OK ||
        (rc = sdx__vae_plane_new(t, &hid, t->act, b->cout, h, w)) != SDX_OK)
        goto done;
    s = sdx__vae_stage_of(x, b->conv1_w, b->conv1_b, &hid);
    s.norm = norm;
    if ((rc = sdx__vae_stage_run(t, &s)) != SDX_OK) goto done;
    if (b->skip_w) {   /* the shortcut replaces x */
        if ((rc = sdx__vae_plane_new(t, &skip, t->act, b->cout, h, w)) != SDX_OK) goto done;
        s = sdx__vae_stage_of(x, b->skip_w, b->skip_b, &skip);
        if ((rc = sdx__vae_stage_run(t, &s)) != SDX_OK) goto done;
        sdx__vae_plane_free(t, x);
        *x = skip;
        skip.data = NULL;
    }
    rc = sdx__vae_tiled_res_tail(t, x, &hid, b, norm);
done:
    sdx__vae_plane_free(t, &hid);
    sdx__vae_plane_free(t, &skip);
    sdx__arena_release(t->arena, m);
    return rc;
}

/* *x = Upsample (dec) or Downsample (enc) of *x. */
static int sdx__vae_tiled_resample(sdx__vae_tiler *t, sdx_tensor *x, const sdx__vae_level *lv, int dec) {
    int64_t h = x->shape[2], w = x->shape[3];
    int64_t oh = dec ? 2 * h : (h - 2) / 2 + 1, ow = dec ? 2 * w : (w - 2) / 2 + 1;
    sdx_tensor y;
    sdx__vae_stage s;
    int rc;
    if ((rc = sdx__vae_plane_new(t, &y, t->act, lv->resample_w->shape[0], oh, ow)) != SDX_OK) return rc;
    s = sdx__vae_stage_of(x, lv->resample_w, lv->resample_b, &y);
    if (dec) s.up = 2;
    else s.stride = 2;
    rc = sdx__vae_stage_run(t, &s);
    sdx__vae_plane_free(t, x);
    *x = y;
    return rc;
}

/* ---- low-memory decoding: an Upsample fused with the next ResBlock ---- */
/* The plane an Upsample writes is the decoder's largest (at 512x512: 256
 * channels at full size, 256 MB in f32), and the ResBlock after it holds
 * it next to its conv1 and shortcut outputs. In low-memory mode the
 * upsampled plane is never made: its convolution runs per tile twice,
 * once for the ResBlock's norm1 statistics and once with the 1-pixel
 * margin conv1 needs, whose tile also gives the shortcut (or the
 * residual itself). The host then holds the Upsample's input instead of
 * its output: at 512x512, 320 MB of planes at the peak instead of 512.
 * The statistics are those of the whole plane: per tile two-pass sums in
 * f64, merged exactly (Chan et al.); the result equals the plain tiled
 * pass to float rounding. */

/* Per-group count, mean and sum of squared deviations of a host tile
 * [C, n] merged into the running ones. */
static void sdx__vae_moments_merge(const float *v, int64_t c, int64_t n, double *count, double *mean, double *m2) {
    int64_t cpg = c / SDX__VAE_GROUPS;
    for (int g = 0; g < SDX__VAE_GROUPS; g++) {
        const float *p = v + (int64_t)g * cpg * n;
        double s = 0, q = 0, m, nb = (double)(cpg * n), d, na = count[g];
        for (int64_t i = 0; i < cpg * n; i++) s += p[i];
        m = s / nb;
        for (int64_t i = 0; i < cpg * n; i++) { double e = p[i] - m; q += e * e; }
        d = m - mean[g];
        mean[g] += d * nb / (na + nb);
        m2[g] += q + d * d * na * nb / (na + nb);
        count[g] = na + nb;
    }
}

/* conv(in) of a tile, written into the plane at (y0, x0). */
static int sdx__vae_conv_put(sdx__vae_tiler *t, const sdx_tensor *in, const sdx_tensor *w, const sdx_tensor *b, sdx_tensor *plane,
                             int64_t y0, int64_t x0, int64_t th, int64_t tw) {
    sdx_tensor out;
    const float *host = NULL;
    int rc;
    if (!sdx__arena_tensor4(t->arena, &out, t->act, 1, plane->shape[1], th, tw))
        return sdx__nomem(t->ctx, "VAE tile", sdx_tensor_nbytes(&out));
    if ((rc = sdx__conv2d_pad(t->ctx, &out, in, w, b, 1, 0, 0, 0, 0, SDX_F32)) != SDX_OK || (rc = sdx__vae_tile_host(t, &out, &host)) != SDX_OK)
        return rc;
    sdx__vae_plane_put(plane, host, y0, x0, th, tw);
    return SDX_OK;
}

/* One tile of the fused pass: conv1's output into hid, the shortcut's
 * (or the upsampled values themselves) into res. The Upsample's output
 * is computed over the tile and its 1-pixel margin, clipped to the
 * image; cut from that window as from a plane, whatever lies outside it
 * lies outside the image and reads as conv1's zero padding. */
static int sdx__vae_up_res_tile(sdx__vae_tiler *t, const sdx__vae_stage *up, const sdx__vae_res *b, const float *norm,
                                sdx_tensor *hid, sdx_tensor *res, int64_t y0, int64_t x0, int64_t th,
                                int64_t tw) {
    int64_t h = hid->shape[2], w = hid->shape[3], c = up->w->shape[0];
    int64_t wy0 = SDX__MAX(y0 - 1, (int64_t)0), wx0 = SDX__MAX(x0 - 1, (int64_t)0);
    int64_t wh = SDX__MIN(y0 + th + 1, h) - wy0, ww = SDX__MIN(x0 + tw + 1, w) - wx0;
    sdx_tensor ywin, window, tin, inner;
    const float *yv = NULL, *iv = NULL;
    sdx__vae_cut cut;
    int rc;
    if ((rc = sdx__vae_stage_compute(t, up, wy0, wx0, wh, ww, &ywin)) != SDX_OK || (rc = sdx__vae_tile_host(t, &ywin, &yv)) != SDX_OK)
        return rc;
    window = sdx__view4(SDX_F32, (void *)(uintptr_t)yv, 1, c, wh, ww);
    memset(&cut, 0, sizeof cut);
    cut.src = &window;
    cut.y0 = y0 - 1 - wy0;
    cut.x0 = x0 - 1 - wx0;
    cut.h = th + 2;
    cut.w = tw + 2;
    cut.up = 1;
    cut.norm = norm;
    if ((rc = sdx__vae_cut_to(t, &tin, &cut, c)) != SDX_OK ||
        (rc = sdx__vae_conv_put(t, &tin, b->conv1_w, b->conv1_b, hid, y0, x0, th, tw)) != SDX_OK)
        return rc;
    /* the tile's own upsampled values, without the margin or the norm */
    cut.y0 = y0 - wy0;
    cut.x0 = x0 - wx0;
    cut.h = th;
    cut.w = tw;
    cut.norm = NULL;
    if ((rc = sdx__vae_cut_to(t, &inner, &cut, c)) != SDX_OK) return rc;
    if (b->skip_w) return sdx__vae_conv_put(t, &inner, b->skip_w, b->skip_b, res, y0, x0, th, tw);
    if ((rc = sdx__vae_tile_host(t, &inner, &iv)) != SDX_OK) return rc;
    sdx__vae_plane_put(res, iv, y0, x0, th, tw);
    return SDX_OK;
}

/* *x = ResBlock b (Upsample lv (*x)), the upsampled plane never made.
 * A fused tile holds about three times a plain stage's temporaries (the
 * Upsample's input window, its output window, conv1's input), so the
 * fused passes cut each tile of the grid in four. */
static int sdx__vae_tiled_up_res(sdx__vae_tiler *t, sdx_tensor *x, const sdx__vae_level *lv, const sdx__vae_res *b) {
    int64_t h = 2 * x->shape[2], w = 2 * x->shape[3], c = lv->resample_w->shape[0], y0, x0, th, tw;
    int64_t ny = SDX__MIN(2 * t->ny, h), nx = SDX__MIN(2 * t->nx, w);
    double count[SDX__VAE_GROUPS], mean[SDX__VAE_GROUPS], m2[SDX__VAE_GROUPS], var[SDX__VAE_GROUPS];
    sdx__vae_stage up = sdx__vae_stage_of(x, lv->resample_w, lv->resample_b, NULL);
    sdx__mark m = sdx__arena_mark(t->arena);
    float *norm = (float *)sdx__arena_host_alloc(t->arena, 3 * sizeof(float) * (size_t)SDX__MAX(c, (int64_t)b->cout));
    sdx_tensor hid, res;
    int rc = SDX_OK;
    hid.data = res.data = NULL;
    up.up = 2;
    if (!norm) { rc = sdx__nomem(t->ctx, "VAE norm", 3 * sizeof(float) * (size_t)SDX__MAX(c, (int64_t)b->cout)); goto done; }
    memset(count, 0, sizeof count);
    memset(mean, 0, sizeof mean);
    memset(m2, 0, sizeof m2);
    for (int64_t i = 0; i < ny * nx && rc == SDX_OK; i++) {   /* norm1's statistics */
        sdx__mark tm = sdx__arena_mark(t->arena);
        sdx_tensor y;
        const float *yv = NULL;
        if (!sdx__vae_tile_at(ny, nx, h, w, i, &y0, &x0, &th, &tw)) continue;
        if ((rc = sdx__vae_stage_compute(t, &up, y0, x0, th, tw, &y)) == SDX_OK && (rc = sdx__vae_tile_host(t, &y, &yv)) == SDX_OK)
            sdx__vae_moments_merge(yv, c, th * tw, count, mean, m2);
        sdx__arena_release(t->arena, tm);
    }
    for (int g = 0; g < SDX__VAE_GROUPS; g++) var[g] = count[g] > 0 ? m2[g] / count[g] : 0.0;
    if (rc != SDX_OK || (rc = sdx__vae_norm_affine(t, c, mean, var, b->norm1_w, b->norm1_b, norm)) != SDX_OK ||
        (rc = sdx__vae_plane_new(t, &hid, t->act, b->cout, h, w)) != SDX_OK ||
        (rc = sdx__vae_plane_new(t, &res, t->act, b->cout, h, w)) != SDX_OK)
        goto done;
    for (int64_t i = 0; i < ny * nx && rc == SDX_OK; i++) {
        sdx__mark tm = sdx__arena_mark(t->arena);
        if (sdx__vae_tile_at(ny, nx, h, w, i, &y0, &x0, &th, &tw)) rc = sdx__vae_up_res_tile(t, &up, b, norm, &hid, &res, y0, x0, th, tw);
        sdx__arena_release(t->arena, tm);
    }
    sdx__vae_weights_done(t, up.w, up.b);
    sdx__vae_weights_done(t, b->conv1_w, b->conv1_b);
    if (b->skip_w) sdx__vae_weights_done(t, b->skip_w, b->skip_b);
    if (rc != SDX_OK) goto done;
    sdx__vae_plane_free(t, x);
    *x = res;
    res.data = NULL;
    rc = sdx__vae_tiled_res_tail(t, x, &hid, b, norm);
done:
    sdx__vae_plane_free(t, &hid);
    sdx__vae_plane_free(t, &res);
    sdx__arena_release(t->arena, m);
    return rc;
}

/* The levels of a coder on the plane *x, in the coder's order. A decoder
 * in low-memory mode fuses each Upsample with the ResBlock after it
 * (exact tiles wrap around when seamless: those keep the plain order). */
static int sdx__vae_tiled_levels(sdx__vae_tiler *t, sdx_tensor *x, const sdx__vae_coder *cd, int dec) {
    const sdx__vae_level *pending = NULL;   /* an Upsample left for the next level's first ResBlock */
    int fuse = dec && t->v->low_memory && !t->circular, rc = SDX_OK;
    for (int k = 0; k < cd->n_levels && rc == SDX_OK; k++) {
        int i = dec ? cd->n_levels - 1 - k : k;
        const sdx__vae_level *lv = &cd->level[i];
        for (int j = 0; j < lv->n_blocks && rc == SDX_OK; j++) {
            sdx__trace_at(t->ctx, SDX__PART_VAE, dec ? "decoder.up.%d.block.%d (tiled)" : "encoder.down.%d.block.%d (tiled)", i, j);
            if (pending) rc = sdx__vae_tiled_up_res(t, x, pending, &lv->res[j]);
            else rc = sdx__vae_tiled_res(t, x, &lv->res[j]);
            pending = NULL;
        }
        if (rc == SDX_OK && pending) rc = sdx__vae_tiled_resample(t, x, pending, dec);   /* a level without blocks */
        pending = NULL;
        if (rc == SDX_OK && lv->resample_w) {
            if (fuse && k + 1 < cd->n_levels) pending = lv;
            else rc = sdx__vae_tiled_resample(t, x, lv, dec);
        }
    }
    return rc;
}

static int sdx__vae_decoder_head_fn(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *in, sdx_tensor *out) {
    int rc = sdx__vae_decoder_head(r, v, in);
    return rc != SDX_OK || r->dry ? rc : sdx__copy(r->ctx, out, &r->x);
}

/* Reads (and, on the CPU, overwrites: its GroupNorms run in place) `in`. */
static int sdx__vae_encoder_tail_fn(sdx__vae_run *r, const sdx__vae *v, const sdx_tensor *in, sdx_tensor *out) {
    r->x = *in;
    return sdx__vae_encoder_tail(r, v, out);
}

static void sdx__vae_tiler_init(sdx__vae_tiler *t, sdx_ctx *ctx, sdx__vae *v, sdx__arena *arena, int64_t ny, int64_t nx) {
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    t->v = v;
    t->arena = arena;
    t->ny = ny;
    t->nx = nx;
    t->circular = ctx->circular;
    t->act = (sdx_dtype)v->act_type;
}

static void sdx__vae_tiler_done(sdx__vae_tiler *t, const char *what) {
    t->v->tiled_plane_peak = t->peak;
    sdx__log(t->ctx, SDX_LOG_INFO, "vae: tiled %s in %lldx%lld tiles: host planes peaked at %zu MB (arena high-water %zu MB)", what,
             (long long)t->ny, (long long)t->nx, t->peak >> 20, t->arena->peak >> 20);
}

/* z [1, latent, h, w] -> image F32 [1, 3, fh, fw] (host), ny x nx tiles. */
static int sdx__vae_decode_tiled(sdx_ctx *ctx, sdx__vae *v, sdx__arena *arena, const sdx_tensor *z, sdx_tensor *image,
                                 int64_t ny, int64_t nx) {
    const sdx__vae_coder *d = &v->dec;
    sdx__vae_tiler t;
    sdx_tensor x;
    sdx__vae_stage s;
    sdx__mark m = sdx__arena_mark(arena);
    float *norm;
    int64_t c0 = d->level[0].ch;
    int rc;
    sdx__vae_tiler_init(&t, ctx, v, arena, ny, nx);
    /* the mid block untiled, at latent size */
    if ((rc = sdx__vae_plane_new(&t, &x, SDX_F32, d->conv_in_w->shape[0], z->shape[2], z->shape[3])) != SDX_OK) return rc;
    rc = sdx__vae_run_host(ctx, v, arena, sdx__vae_decoder_head_fn, z, &x);
    if (v->low_memory) sdx__wset_release_all(&v->w);   /* the mid block's weights; the levels read theirs again */
    if (rc == SDX_OK) rc = sdx__vae_tiled_levels(&t, &x, d, 1);
    if (rc == SDX_OK) {
        norm = (float *)sdx__arena_host_alloc(arena, 3 * sizeof(float) * (size_t)c0);
        if (!norm) rc = sdx__nomem(ctx, "VAE norm", 3 * sizeof(float) * (size_t)c0);
        else rc = sdx__vae_plane_norm(&t, &x, d->norm_out_w, d->norm_out_b, norm);
        if (rc == SDX_OK) {
            sdx__trace_at(ctx, SDX__PART_VAE, "decoder.conv_out (tiled)");
            s = sdx__vae_stage_of(&x, d->conv_out_w, d->conv_out_b, image);
            s.norm = norm;
            rc = sdx__vae_stage_run(&t, &s);
        }
    }
    sdx__vae_plane_free(&t, &x);
    sdx__arena_release(arena, m);
    if (rc == SDX_OK) sdx__vae_tiler_done(&t, "decode");
    return rc;
}

/* image [1, 3, H, W] (host) -> moments F32 [1, 2 * latent, h, w] (host). */
static int sdx__vae_encode_tiled(sdx_ctx *ctx, sdx__vae *v, sdx__arena *arena, const sdx_tensor *image, sdx_tensor *moments,
                                 int64_t ny, int64_t nx) {
    const sdx__vae_coder *e = &v->enc;
    sdx__vae_tiler t;
    sdx_tensor x;
    sdx__vae_stage s;
    int rc;
    sdx__vae_tiler_init(&t, ctx, v, arena, ny, nx);
    if ((rc = sdx__vae_plane_new(&t, &x, t.act, e->conv_in_w->shape[0], image->shape[2], image->shape[3])) != SDX_OK) return rc;
    sdx__trace_at(ctx, SDX__PART_VAE, "encoder.conv_in (tiled)");
    s = sdx__vae_stage_of(image, e->conv_in_w, e->conv_in_b, &x);
    rc = sdx__vae_stage_run(&t, &s);
    if (rc == SDX_OK) rc = sdx__vae_tiled_levels(&t, &x, e, 0);
    /* the mid block and the output layers untiled, at latent size */
    if (rc == SDX_OK) rc = sdx__vae_run_host(ctx, v, arena, sdx__vae_encoder_tail_fn, &x, moments);
    sdx__vae_plane_free(&t, &x);
    if (rc == SDX_OK) sdx__vae_tiler_done(&t, "encode");
    return rc;
}

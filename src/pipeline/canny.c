#pragma once
#include "api_pipeline.h"
#include "../core/core.c"

/* ===================================================================== */
/*  Canny edge detector (the ControlNet "canny" preprocessor)             */
/* ===================================================================== */
/* OpenCV's cv2.Canny(image, low, high) with its defaults (3x3 Sobel, L1
 * gradient |dx| + |dy|, replicated borders), which is what A1111's and
 * ComfyUI's canny preprocessors call: per pixel the colour channel with
 * the strongest gradient, non-maximum suppression along the gradient
 * direction in four sectors, then hysteresis: a pixel above `high` is an
 * edge, and so is one above `low` connected (8-neighbourhood) to one. */

/* Sobel at (x, y) of channel c, borders replicated. */
static void sdx__canny_sobel(const uint8_t *px, int w, int h, int ch, int c, int x, int y, int *dx, int *dy) {
    int xm = x > 0 ? x - 1 : 0, xp = x < w - 1 ? x + 1 : w - 1, ym = y > 0 ? y - 1 : 0, yp = y < h - 1 ? y + 1 : h - 1;
#define SDX__PX(X, Y) ((int)px[((size_t)(Y) * (size_t)w + (size_t)(X)) * (size_t)ch + (size_t)c])
    *dx = (SDX__PX(xp, ym) + 2 * SDX__PX(xp, y) + SDX__PX(xp, yp)) - (SDX__PX(xm, ym) + 2 * SDX__PX(xm, y) + SDX__PX(xm, yp));
    *dy = (SDX__PX(xm, yp) + 2 * SDX__PX(x, yp) + SDX__PX(xp, yp)) - (SDX__PX(xm, ym) + 2 * SDX__PX(x, ym) + SDX__PX(xp, ym));
#undef SDX__PX
}

/* Is (x, y) a local maximum along its gradient? mag is padded by one
 * zero pixel on every side (stride w + 2). OpenCV's sector test in fixed
 * point: tan(22.5 deg) = 13573 / 2^15. */
static int sdx__canny_is_max(const int *mag, int stride, int x, int y, int dx, int dy) {
    const int *row = mag + (size_t)(y + 1) * (size_t)stride + (size_t)(x + 1);
    int m = row[0];
    int64_t xs = dx < 0 ? -dx : dx, ys = (int64_t)(dy < 0 ? -dy : dy) << 15, tg22x = xs * 13573, tg67x = tg22x + (xs << 16);
    if (ys < tg22x) return m > row[-1] && m >= row[1];
    if (ys > tg67x) return m > row[-stride] && m >= row[stride];
    {
        int s = (dx ^ dy) < 0 ? -1 : 1;
        return m > row[-stride - s] && m > row[stride + s];
    }
}

SDX_API sdx_result sdx_canny(sdx_ctx *ctx, const sdx_image *in, float low, float high, sdx_image *out) {
    int w, h, stride, lo, hi, *mag, *stack, n_stack = 0;
    short *grad;
    uint8_t *state;   /* 0 not an edge, 1 candidate (above low, a maximum), 2 edge */
    size_t n, pn;
    if (!in || !out || !in->data || in->width < 1 || in->height < 1 || (in->channels != 1 && in->channels != 3))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_canny: needs an RGB or grey picture");
    if (in->width > 65536 || in->height > 65536 || (int64_t)in->width * in->height > (1 << 28))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_canny: picture %dx%d is too large", in->width, in->height);
    if (!(low >= 0 && high >= 0 && low <= 1e6f && high <= 1e6f))
        return sdx__fail(ctx, SDX_ERR_INVALID_ARG, "sdx_canny: thresholds %g, %g must be in 0..1e6", low, high);
    memset(out, 0, sizeof *out);
    w = in->width;
    h = in->height;
    lo = (int)floorf(low);
    hi = (int)floorf(high);
    if (lo > hi) { int t = lo; lo = hi; hi = t; }
    stride = w + 2;
    n = (size_t)w * (size_t)h;
    pn = (size_t)stride * (size_t)(h + 2);
    mag = (int *)sdx__calloc(ctx, pn, sizeof *mag);
    grad = (short *)sdx__malloc(ctx, 2 * n * sizeof *grad);
    stack = (int *)sdx__malloc(ctx, n * sizeof *stack);
    state = (uint8_t *)sdx__calloc(ctx, n, 1);
    out->data = (uint8_t *)sdx__malloc(ctx, 3 * n);
    if (!mag || !grad || !stack || !state || !out->data) {
        sdx__free(ctx, mag); sdx__free(ctx, grad); sdx__free(ctx, stack); sdx__free(ctx, state);
        sdx__free(ctx, out->data);
        out->data = NULL;
        return sdx__nomem(ctx, "canny", pn * sizeof(int) + 6 * n);
    }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int best = -1, bdx = 0, bdy = 0;
            for (int c = 0; c < in->channels; c++) {
                int dx, dy, m;
                sdx__canny_sobel(in->data, w, h, in->channels, c, x, y, &dx, &dy);
                m = (dx < 0 ? -dx : dx) + (dy < 0 ? -dy : dy);
                if (m > best) best = m, bdx = dx, bdy = dy;
            }
            mag[(size_t)(y + 1) * (size_t)stride + (size_t)(x + 1)] = best;
            grad[2 * ((size_t)y * (size_t)w + (size_t)x)] = (short)bdx;
            grad[2 * ((size_t)y * (size_t)w + (size_t)x) + 1] = (short)bdy;
        }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            size_t i = (size_t)y * (size_t)w + (size_t)x;
            int m = mag[(size_t)(y + 1) * (size_t)stride + (size_t)(x + 1)];
            if (m <= lo || !sdx__canny_is_max(mag, stride, x, y, grad[2 * i], grad[2 * i + 1])) continue;
            state[i] = 1;
            if (m > hi) { state[i] = 2; stack[n_stack++] = (int)i; }
        }
    while (n_stack > 0) {   /* each pixel is pushed once: when it becomes 2 */
        int i = stack[--n_stack], x = i % w, y = i / w;
        for (int ny = y - 1; ny <= y + 1; ny++)
            for (int nx = x - 1; nx <= x + 1; nx++) {
                size_t j = (size_t)ny * (size_t)w + (size_t)nx;
                if (nx < 0 || ny < 0 || nx >= w || ny >= h || state[j] != 1) continue;
                state[j] = 2;
                stack[n_stack++] = (int)j;
            }
    }
    for (size_t i = 0; i < n; i++) out->data[3 * i] = out->data[3 * i + 1] = out->data[3 * i + 2] = state[i] == 2 ? 255 : 0;
    out->width = w;
    out->height = h;
    out->channels = 3;
    sdx__free(ctx, mag); sdx__free(ctx, grad); sdx__free(ctx, stack); sdx__free(ctx, state);
    return SDX_OK;
}

#pragma once
#include "../core/api_core.h"
#include "../core/api_safetensors.h"

/* ===================================================================== */
/*  Public API: upscaling with ESRGAN-family models                       */
/* ===================================================================== */
/* RRDBNet, the ESRGAN generator: Real-ESRGAN's RealESRGAN_x4plus,
 * RealESRNet_x4plus, RealESRGAN_x4plus_anime_6B and RealESRGAN_x2plus,
 * and the older community ESRGAN models (4x-UltraSharp, ...) converted
 * to safetensors, in BasicSR's key layout or the old ESRGAN one
 * (model.0, model.1.sub.N.RDBk.convj.0, ...; also the 2019 names
 * RRDB_trunk.N, trunk_conv, upconv1, HRconv). The architecture comes from
 * the tensors: feature width, block count, growth channels, and the
 * scale (x4, x2 or x1 through pixel-unshuffle; old files x1..x8).
 * Results follow Real-ESRGAN's RealESRGANer (inference_realesrgan.py
 * --fp32 with pre_pad 0): 8-bit RGB / 255, reflect padding to a multiple
 * of 2 (x2) or 4 (x1), the network in f32, clamp to [0, 1], round half
 * to even. Runs on the context's backend. */
#ifdef __cplusplus
extern "C" {
#endif

typedef struct sdx_upscaler sdx_upscaler;

/* Loads an upscaler from a .safetensors file (kept open and mapped until
 * sdx_upscaler_free). Fails with SDX_ERR_MODEL naming the missing or
 * mis-shaped tensor when the file is not a model sdx can run. */
SDX_API sdx_result sdx_upscaler_load(sdx_ctx *ctx, const char *path, sdx_upscaler **out);
/* The same from a buffer (borrowed until sdx_upscaler_free) or read
 * callbacks (sdx_source). */
SDX_API sdx_result sdx_upscaler_load_source(sdx_ctx *ctx, const sdx_source *src, sdx_upscaler **out);
SDX_API void sdx_upscaler_free(sdx_upscaler *up);
/* Output pixels per input pixel and side: 4, 2 or 1 (old files up to 8). */
SDX_API int  sdx_upscaler_scale(const sdx_upscaler *up);
/* The file name without folder or extension, for PNG parameters. */
SDX_API const char *sdx_upscaler_name(const sdx_upscaler *up);

/* How large images are cut, as Real-ESRGAN's --tile / --tile_pad: the
 * image is cut into tile x tile squares (input pixels) in raster order,
 * each run with tile_pad more pixels of context on every side (clipped
 * at the border, zero padding beyond), and only its own part is kept;
 * nothing is blended. A pixel nearer a seam than the network's receptive
 * radius (4 + 15 * blocks pixels of the network's input, which x2 and x1
 * models take pixel-unshuffled to half and a quarter of the size) sees
 * zeros where the whole image has neighbours: with tile_pad 10, a few
 * values in ten thousand move by one 8-bit level; with tile_pad at the
 * radius, tiles are exact.
 *   tile  0: automatic (default): untiled while one pass needs at most
 *            SDX_UPSCALE_TILE_BUDGET bytes of activations, else the
 *            largest tiles that fit it; -1: never tile; > 0: this size.
 *   tile_pad -1: 10 (Real-ESRGAN's default); >= 0: this many pixels.
 * Both are rounded up to multiples of the pixel-unshuffle factor (2 for
 * x2, 4 for x1 models). */
SDX_API sdx_result sdx_upscaler_set_tiling(sdx_upscaler *up, int tile, int tile_pad);

/* Upscales an 8-bit RGB image `repeats` times (>= 1; each pass reads the
 * previous pass's 8-bit output, as sd-cli's --upscale-repeats). out is
 * allocated: free it with sdx_image_free. */
SDX_API sdx_result sdx_upscale(sdx_upscaler *up, const sdx_image *in, int repeats, sdx_image *out);

#ifdef __cplusplus
}
#endif

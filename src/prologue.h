/* sdx.h - Stable Diffusion 1.x / 2.x / SDXL inference in one C header.
   Generated from src/ by tools/amalgamate.sh; edit src/, not this file.

   USAGE
     In exactly one C file:
         #define SDX_IMPLEMENTATION
         #include "sdx.h"
     Everywhere else just #include "sdx.h". Link with -lm -lpthread
     (POSIX; nothing extra on Windows).
     Define SDX_STATIC before the include to make every function static.

   QUICK START (see examples/minimal.c)
         sdx_desc desc = {0};                 // zero = defaults
         sdx_ctx *ctx = sdx_create(&desc);
         sdx_model *model;
         sdx_model_desc md = {0};
         md.checkpoint = "sd15.safetensors";
         if (sdx_model_load(ctx, &md, &model) != SDX_OK)
             fprintf(stderr, "%s\n", sdx_last_error(ctx));
         sdx_gen_params gp = {0};             // zero = 20 steps, cfg 7, ...
         gp.prompt = "a red fox in the snow";
         sdx_gen_result res;
         if (sdx_generate(model, &gp, &res) == SDX_OK) {
             // res.images[0]: width x height RGB8
             sdx_gen_result_free(ctx, &res);
         }
         sdx_model_free(model);
         sdx_destroy(ctx);

   THE PRIMARY API (declared first below)
     sdx_create / sdx_destroy / sdx_last_error     a context and its errors
     sdx_model_load / sdx_model_free               a checkpoint
     sdx_generate / sdx_gen_result_free            txt2img, img2img, inpainting
     stages, for your own pipeline or a game loop:
     sdx_encode_prompt      -> sdx_cond            (sdx_cond_free)
     sdx_sampling_begin     -> sdx_sampling        step / finish / latent /
                                                   denoised (x0 preview) / free
     sdx_decode_latent, sdx_encode_image           VAE both ways
   Then, for programs that go deeper: safetensors files, noise generators,
   the tokenizer, schedules and samplers, and backends (sdx_hip.h).

   THREADS: one context serves one call at a time (with its models,
   conditionings and sessions); separate contexts are independent.

   Every function that can fail returns an sdx_result (0 = SDX_OK) and leaves
   a readable message in sdx_last_error(ctx); queries that cannot fail
   (counts, yes/no answers, conversions) return the answer. Whatever a function hands you
   (a tensor, an image, a model) is yours to free with the matching _free.

   CONFIGURATION (define before including, in the implementation file)
     SDX_MALLOC(sz) SDX_REALLOC(p,sz) SDX_FREE(p)   default allocator
     SDX_ASSERT(x)                                  default assert()
     SDX_API / SDX_STATIC                           linkage
     SDX_VAE_TILE_BUDGET                            VAE activation bytes above which
                                                    decode/encode use tiles (4 GiB)
     SDX_LOW_MEMORY_VAE_BUDGET                      the same in low-memory mode
                                                    (sdx_model_desc.low_memory);
                                                    its tiles fit it (256 MiB)
     SDX_MAX_THREADS                                most worker threads a context
                                                    runs; more asked for are clamped
                                                    to it (512)
     SDX_NO_SIMD                                    no SIMD code (scalar kernels and
                                                    half-float conversion)
     SDX_NO_AMX                                     bf16 compute without AMX tiles
                                                    (no arch_prctl; AVX512-BF16 on
                                                    AMD, else f32)
     Precision policy: SDX_{TEXT,UNET,VAE}_{WEIGHT,ACT}_TYPE and the
     SDX_UNSAFE_* opt-outs, documented below where they are defined.
*/

/* On POSIX systems the implementation uses mmap, pthreads and sysconf;
 * make them visible under -std=c11. This only works if sdx.h comes before
 * other system headers in the implementation file; otherwise compile that
 * file with -D_DEFAULT_SOURCE. (Windows uses Win32 instead.) */
#if defined(SDX_IMPLEMENTATION) && !defined(_WIN32) && !defined(_DEFAULT_SOURCE) && !defined(_GNU_SOURCE)
#define _DEFAULT_SOURCE 1
#endif
/* MinGW: C99 printf formats (%zu, %lld) whatever the C runtime is; the
 * same caveat applies (or compile with -D__USE_MINGW_ANSI_STDIO=1). */
#if defined(SDX_IMPLEMENTATION) && defined(__MINGW32__) && !defined(__USE_MINGW_ANSI_STDIO)
#define __USE_MINGW_ANSI_STDIO 1
#endif

/* sdx.h - Stable Diffusion 1.x / 2.x / SDXL inference in one C header.
   Generated from src/ by tools/amalgamate.sh; edit src/, not this file.

   USAGE
     In exactly one C file:
         #define SDX_IMPLEMENTATION
         #include "sdx.h"
     Everywhere else just #include "sdx.h". Link with -lm -lpthread.
     Define SDX_STATIC before the include to make every function static.

   QUICK START (see examples/minimal.c)
         sdx_desc desc = {0};                 // zero = defaults
         sdx_ctx *ctx = sdx_create(&desc);
         sdx_model *model;
         sdx_model_desc md = {0};
         md.checkpoint = "sd15.safetensors";
         if (sdx_model_load(ctx, &md, &model) != SDX_OK)
             fprintf(stderr, "%s\n", sdx_last_error(ctx));
         ... sdx_generate(...) ...
         sdx_model_free(model);
         sdx_destroy(ctx);

   Every function that can fail returns an sdx_result (0 = SDX_OK) and leaves
   a readable message in sdx_last_error(ctx). Whatever a function hands you
   (a tensor, an image, a model) is yours to free with the matching _free.

   CONFIGURATION (define before including, in the implementation file)
     SDX_MALLOC(sz) SDX_REALLOC(p,sz) SDX_FREE(p)   default allocator
     SDX_ASSERT(x)                                  default assert()
     SDX_API / SDX_STATIC                           linkage
     Precision policy: SDX_{TEXT,UNET,VAE}_{WEIGHT,ACT}_TYPE and the
     SDX_UNSAFE_* opt-outs, documented below where they are defined.
*/

/* The implementation uses POSIX (mmap, pthreads, sysconf); make them
 * visible under -std=c11. This only works if sdx.h comes before other
 * system headers in the implementation file; otherwise compile that file
 * with -D_DEFAULT_SOURCE. */
#if defined(SDX_IMPLEMENTATION) && !defined(_DEFAULT_SOURCE) && !defined(_GNU_SOURCE)
#define _DEFAULT_SOURCE 1
#endif

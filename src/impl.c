/* The implementation: tools/amalgamate.sh expands this file, each part
 * once and its includes before it, into the SDX_IMPLEMENTATION half of
 * sdx.h. Every source below src/ must be reached from here. */
#include "cpu/backend.c"       /* sdx_create: a context on the CPU */
#include "pipeline/generate.c"
#include "pipeline/canny.c"
#include "models/esrgan.c"       /* upscaling: sdx_upscaler */

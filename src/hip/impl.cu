/* The implementation: tools/amalgamate.sh expands this file, each part
 * once and its includes before it, into the SDX_HIP_IMPLEMENTATION half
 * of sdx_hip.h. Every source below src/hip/ must be reached from here or
 * from api_hip.h. */
#include "prelude.h"
#include "backend.cu"

/* The GPU half of the sdx CLI, tests and benchmarks: sdx_hip.h's
 * implementation, compiled by nvcc (-x cu) or hipcc (-x hip). sdx.h's
 * implementation lives in the C files it is linked with. */
#define SDX_HIP_IMPLEMENTATION
#include "sdx_hip.h"

/* The public API in reading order: tools/amalgamate.sh expands this file
 * into the declaration half of sdx.h. */
#include "core/api_core.h"
#include "core/api_safetensors.h"
#include "core/api_rng.h"
#include "text/api_text.h"
#include "sampling/api_sampling.h"
#include "pipeline/api_pipeline.h"
#include "core/api_backend.h"

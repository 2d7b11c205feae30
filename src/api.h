/* The public API in reading order: tools/amalgamate.sh expands this file
 * into the declaration half of sdx.h. First what every program uses (the
 * context, models, generation and its stages), then the parts for
 * programs that go deeper. */
#include "core/api_core.h"
#include "pipeline/api_pipeline.h"
#include "models/api_upscale.h"
#include "core/api_safetensors.h"
#include "core/api_rng.h"
#include "text/api_text.h"
#include "sampling/api_sampling.h"
#include "core/api_backend.h"

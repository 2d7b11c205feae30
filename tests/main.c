/* All suites in one program: sdx.h is compiled once. */
#include "test.h"
#include "t_core.c"
#include "t_half.c"
#include "t_rng.c"
#include "t_json.c"
#include "t_safetensors.c"
#include "t_kernels.c"
#include "t_precision.c"
#include "t_tokenizer.c"
#include "t_prompt.c"
#include "t_text.c"
#include "t_unet.c"
#include "t_vae.c"
#include "t_sampling.c"
#include "t_fewstep.c"
#include "t_pipeline.c"
#include "t_robust.c"
#include "t_backend.c"
#include "t_stages.c"
#include "t_tiling.c"
#include "t_examples.c"
#include "t_img2img.c"
#include "t_taesd.c"
#include "t_lora.c"
#include "t_embedding.c"
#include "t_controlnet.c"
#include "t_memory.c"
#include "t_mkckpt.c"
#include "t_bf16.c"
#include "t_gguf.c"
#include "t_quantmm.c"
#include "t_upscale.c"
#include "t_sources.c"
#include "t_hires.c"
#include "t_cancel.c"
#include "t_refiner.c"
#include "t_server.c"

int main(int argc, char **argv) {
    static const t_suite *all[] = {
        &t_suite_core,
        &t_suite_half,
        &t_suite_rng,
        &t_suite_json,
        &t_suite_safetensors,
        &t_suite_kernels,
        &t_suite_precision,
        &t_suite_tokenizer,
        &t_suite_prompt,
        &t_suite_text,
        &t_suite_unet,
        &t_suite_vae,
        &t_suite_sampling,
        &t_suite_fewstep,
        &t_suite_pipeline,
        &t_suite_robust,
        &t_suite_backend,
        &t_suite_stages,
        &t_suite_tiling,
        &t_suite_examples,
        &t_suite_img2img,
        &t_suite_taesd,
        &t_suite_lora,
        &t_suite_embedding,
        &t_suite_controlnet,
        &t_suite_memory,
        &t_suite_mkckpt,
        &t_suite_bf16,
        &t_suite_gguf,
        &t_suite_quantmm,
        &t_suite_upscale,
        &t_suite_sources,
        &t_suite_hires,
        &t_suite_cancel,
        &t_suite_refiner,
        &t_suite_server,
    };
    t_suite list[sizeof all / sizeof all[0]];
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) list[i] = *all[i];
    return t_main(argc, argv, list, (int)(sizeof all / sizeof all[0]));
}

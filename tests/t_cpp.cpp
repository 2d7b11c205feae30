/* The whole implementation compiled as C++ (make tests/run-cpp, for each
 * of C++11/17/20 in `make cross`): one translation unit that includes
 * sdx.h with SDX_IMPLEMENTATION and reproduces the first SD 1.x golden
 * generation, so C++ compilation is checked for behaviour, not only for
 * errors. Prints the same summary line as tests/run. */
#define SDX_IMPLEMENTATION
#include "../sdx.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

struct ctx_deleter { void operator()(sdx_ctx *c) const { sdx_destroy(c); } };
struct model_deleter { void operator()(sdx_model *m) const { sdx_model_free(m); } };
struct st_deleter { void operator()(sdx_st *s) const { sdx_st_close(s); } };

bool exists(const std::string &path) {
    std::FILE *f = std::fopen(path.c_str(), "rb");
    if (f) std::fclose(f);
    return f != nullptr;
}

/* golden/sd1 pipeline case 0 (index.json): 64x64, euler, normal, 8 steps,
 * cfg 7, seed 42, ComfyUI's CPU noise */
int sd1_golden_generation_matches(const std::string &shared, std::string &why) {
    const std::string ckpt = shared + "/golden/sd1/model.safetensors";
    const std::string ref = shared + "/golden/sd1/cases/txt2img_case0.safetensors";
    const std::string vocab = shared + "/vocab";
    if (!exists(ckpt) || !exists(ref) || !exists(vocab + "/merges.txt")) {
        why = "golden data " + shared + "/golden/sd1 not found (set SDX_SHARED or place shared/ beside the repo)";
        return 2;
    }
    sdx_desc desc = {};
    desc.n_threads = 2;
    std::unique_ptr<sdx_ctx, ctx_deleter> ctx(sdx_create(&desc));
    if (!ctx) { why = "sdx_create failed"; return 1; }
    sdx_model_desc md = {};
    md.checkpoint = ckpt.c_str();
    md.vocab = vocab.c_str();
    sdx_model *raw = nullptr;
    if (sdx_model_load(ctx.get(), &md, &raw) != SDX_OK) { why = sdx_last_error(ctx.get()); return 1; }
    std::unique_ptr<sdx_model, model_deleter> model(raw);

    sdx_gen_params gp = {};
    gp.prompt = "a photograph of an astronaut riding a horse";
    gp.negative_prompt = "";
    gp.width = gp.height = 64;
    gp.steps = 8;
    gp.cfg_scale = 7.0f;
    gp.sampler = "euler";
    gp.scheduler = "normal";
    gp.seed = 42;
    gp.rng = SDX_RNG_CPU;
    sdx_gen_result res;
    if (sdx_generate(model.get(), &gp, &res) != SDX_OK) { why = sdx_last_error(ctx.get()); return 1; }

    sdx_st *st_raw = nullptr;
    sdx_tensor want_latent, want_image;
    int rc = 0;
    if (sdx_st_open(ctx.get(), ref.c_str(), &st_raw) != SDX_OK) { sdx_gen_result_free(ctx.get(), &res); why = sdx_last_error(ctx.get()); return 1; }
    std::unique_ptr<sdx_st, st_deleter> st(st_raw);
    if (sdx_st_read_f32(ctx.get(), st.get(), "latent", &want_latent) != SDX_OK) {
        sdx_gen_result_free(ctx.get(), &res);
        why = sdx_last_error(ctx.get());
        return 1;
    }
    if (sdx_st_read_f32(ctx.get(), st.get(), "image", &want_image) != SDX_OK) {
        sdx_tensor_free(ctx.get(), &want_latent);
        sdx_gen_result_free(ctx.get(), &res);
        why = sdx_last_error(ctx.get());
        return 1;
    }
    /* the C suite's bounds (tests/t_pipeline.c): latent rel-L2 1e-3, one 8-bit level */
    const float *got = static_cast<const float *>(res.latents[0].data);
    const float *lat = static_cast<const float *>(want_latent.data);
    double num = 0, den = 0;
    for (int64_t i = 0; i < sdx_tensor_numel(&want_latent); i++) {
        num += (got[i] - lat[i]) * (double)(got[i] - lat[i]);
        den += lat[i] * (double)lat[i];
    }
    double rel = std::sqrt(num / (den > 0 ? den : 1));
    int worst = 0;
    const size_t hw = 64 * 64;
    for (size_t i = 0; i < hw; i++)
        for (size_t c = 0; c < 3; c++) {
            int want = (int)std::floor(static_cast<const float *>(want_image.data)[c * hw + i] * 255.0f);
            int d = std::abs(want - (int)res.images[0].data[i * 3 + c]);
            if (d > worst) worst = d;
        }
    if (rel > 1e-3 || worst > 1) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "latent rel-L2 %.3g (bound 1e-3), max pixel diff %d (bound 1)", rel, worst);
        why = msg;
        rc = 1;
    }
    sdx_tensor_free(ctx.get(), &want_latent);
    sdx_tensor_free(ctx.get(), &want_image);
    sdx_gen_result_free(ctx.get(), &res);
    return rc;
}

} // namespace

int main() {
    const char *env = std::getenv("SDX_SHARED");
    std::string why;
    int r = sd1_golden_generation_matches(env && *env ? env : "../shared", why);
    const char *name = "cpp.sd1_golden_generation_matches_in_cpp";
    if (r == 0) std::printf("  ok    %s\n1 passed, 0 failed, 0 skipped\n", name);
    else if (r == 2) std::printf("  SKIP  %s: %s\n0 passed, 0 failed, 1 skipped\n", name, why.c_str());
    else std::printf("  FAIL  %s: %s\n0 passed, 1 failed, 0 skipped\n", name, why.c_str());
    return r == 1;
}

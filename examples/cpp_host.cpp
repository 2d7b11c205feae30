/* cpp_host.cpp - sdx.h in a C++ program: owning handles, errors as
 * exceptions, progress from a lambda, the image written as a PPM (no
 * image library needed).
 *   c++ -std=c++17 -O2 -I. examples/cpp_host.cpp -o cpp_host -lpthread
 *   ./cpp_host model.safetensors "a red fox in the snow" fox.ppm [STEPS [SIZE]] */
#define SDX_IMPLEMENTATION
#include "sdx.h"
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

namespace {

struct sdx_error : std::runtime_error { using std::runtime_error::runtime_error; };

using context = std::unique_ptr<sdx_ctx, decltype(&sdx_destroy)>;
using model = std::unique_ptr<sdx_model, decltype(&sdx_model_free)>;

/* A generation result that frees itself. */
struct result {
    sdx_ctx *ctx;
    sdx_gen_result r;
    result(sdx_model *m, sdx_ctx *c, const sdx_gen_params &gp) : ctx(c) {
        if (sdx_generate(m, &gp, &r) != SDX_OK) throw sdx_error(sdx_last_error(c));
    }
    ~result() { sdx_gen_result_free(ctx, &r); }
    result(const result &) = delete;
    result &operator=(const result &) = delete;
};

context make_context() {
    sdx_desc desc = {};                      /* zero = defaults: all cores */
    context ctx(sdx_create(&desc), &sdx_destroy);
    if (!ctx) throw sdx_error("sdx_create: out of memory");
    return ctx;
}

model load(sdx_ctx *ctx, const std::string &path) {
    sdx_model_desc md = {};
    md.checkpoint = path.c_str();            /* vocabulary: next to it or $SDX_VOCAB */
    sdx_model *m = nullptr;
    if (sdx_model_load(ctx, &md, &m) != SDX_OK) throw sdx_error(sdx_last_error(ctx));
    return model(m, &sdx_model_free);
}

void write_ppm(const std::string &path, const sdx_image &img) {
    std::unique_ptr<std::FILE, decltype(&std::fclose)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
    if (!f) throw std::runtime_error(path + ": cannot create");
    std::fprintf(f.get(), "P6\n%d %d\n255\n", img.width, img.height);
    size_t n = static_cast<size_t>(img.width) * static_cast<size_t>(img.height) * 3;
    if (std::fwrite(img.data, 1, n, f.get()) != n) throw std::runtime_error(path + ": write failed");
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 4 || argc > 6) {
        std::fprintf(stderr, "usage: %s MODEL.safetensors PROMPT OUT.ppm [STEPS [SIZE]]\n", argv[0]);
        return 2;
    }
    try {
        context ctx = make_context();
        model m = load(ctx.get(), argv[1]);
        sdx_gen_params gp = {};              /* zero = defaults */
        gp.prompt = argv[2];
        gp.seed = 42;
        gp.steps = argc >= 5 ? std::atoi(argv[4]) : 0;               /* 0 = 20 */
        gp.width = gp.height = argc >= 6 ? std::atoi(argv[5]) : 0;    /* 0 = the model's size */
        gp.progress = [](void *, int, int step, int steps, const sdx_tensor *) {
            std::fprintf(stderr, "\rstep %d/%d", step, steps);
            return 0;                        /* non-zero cancels */
        };
        result res(m.get(), ctx.get(), gp);
        std::fprintf(stderr, "\n");
        write_ppm(argv[3], res.r.images[0]);
        std::printf("%s: %dx%d, seed %lld\n", argv[3], res.r.images[0].width, res.r.images[0].height,
                    static_cast<long long>(res.r.seeds ? res.r.seeds[0] : gp.seed));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}

/* Suite "backend": the seam between model code and the hardware, tested
 * without a GPU. A fake device backend hands out "device" buffers whose
 * addresses are scrambled (a high bit pattern flipped), so any host code
 * that dereferences one crashes instead of quietly working; its kernels
 * unscramble their operands and run the CPU kernels. Whole generations
 * through it must equal the CPU's bit for bit, and per sampler step only
 * the UNet's input and output may cross the "bus". */
#include "test.h"

#define FD_MASK ((uintptr_t)0x00F0000000000000ull)   /* non-canonical on x86-64, unmapped on aarch64 */

typedef struct fake_device {
    long live_buffers;
    size_t up_bytes, down_bytes;
    long calls, host_operands;
} fake_device;

static void *fd_wrap(void *p) { return (void *)((uintptr_t)p ^ FD_MASK); }
static void *fd_unwrap(const void *p) { return (void *)((uintptr_t)p ^ FD_MASK); }

static void *fd_alloc(void *user, size_t bytes) {
    fake_device *fd = (fake_device *)user;
    void *p = t_aligned_alloc(64, bytes);
    if (!p) return NULL;
    fd->live_buffers++;
    return fd_wrap(p);
}

static void fd_free(void *user, void *ptr) {
    ((fake_device *)user)->live_buffers--;
    t_aligned_free(fd_unwrap(ptr));
}

static int fd_upload(void *user, void *dst, const void *src, size_t bytes) {
    ((fake_device *)user)->up_bytes += bytes;
    memcpy(fd_unwrap(dst), src, bytes);
    return SDX_OK;
}

static int fd_download(void *user, void *dst, const void *src, size_t bytes) {
    ((fake_device *)user)->down_bytes += bytes;
    memcpy(dst, fd_unwrap(src), bytes);
    return SDX_OK;
}

/* Host views of a kernel's operands (y first); a host operand is a seam
 * bug, refused before any kernel runs. */
static int fd_unwrap_all(sdx_ctx *ctx, const sdx_tensor *const *in, sdx_tensor *out, int n) {
    fake_device *fd = (fake_device *)sdx_backend_user(ctx);
    fd->calls++;
    for (int i = 0; i < n; i++) {
        if (!in[i]) continue;
        if (!in[i]->device) {
            fd->host_operands++;
            return sdx_fail(ctx, SDX_ERR_INVALID_ARG, "fake device: operand %d is a host tensor", i);
        }
        out[i] = *in[i];
        out[i].data = fd_unwrap(in[i]->data);
        out[i].device = 0;
    }
    return SDX_OK;
}

#define FD_ARGS(...) \
    const sdx_tensor *const in_[] = { __VA_ARGS__ }; \
    sdx_tensor t_[SDX__ARRAY_LEN(in_)]; \
    if (fd_unwrap_all(ctx, in_, t_, SDX__ARRAY_LEN(in_)) != SDX_OK) return SDX_ERR_INVALID_ARG
#define FD_T(i) (in_[i] ? &t_[i] : NULL)

static int fd_linear(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                     sdx_dtype compute) {
    FD_ARGS(y, x, w, b);
    return sdx__cpu_linear(ctx, FD_T(0), FD_T(1), FD_T(2), FD_T(3), compute);
}

static int fd_conv2d_pad(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                         int stride, int pt, int pl, int pb, int pr, sdx_dtype compute) {
    FD_ARGS(y, x, w, b);
    return sdx__cpu_conv2d_pad(ctx, FD_T(0), FD_T(1), FD_T(2), FD_T(3), stride, pt, pl, pb, pr, compute);
}

static int fd_linear_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                         const sdx_tensor *res, sdx_dtype compute) {
    FD_ARGS(y, x, w, b, res);
    return sdx__cpu_linear_add(ctx, FD_T(0), FD_T(1), FD_T(2), FD_T(3), FD_T(4), compute);
}

static int fd_linear_geglu(sdx_ctx *ctx, sdx_tensor *y, sdx_tensor *h, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                           sdx_dtype compute) {
    FD_ARGS(y, h, x, w, b);
    return sdx__cpu_linear_geglu(ctx, FD_T(0), FD_T(1), FD_T(2), FD_T(3), FD_T(4), compute);
}

static int fd_conv2d_pad_add(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, const sdx_tensor *w, const sdx_tensor *b,
                             const sdx_tensor *res, int stride, int pt, int pl, int pb, int pr, sdx_dtype compute) {
    FD_ARGS(y, x, w, b, res);
    return sdx__cpu_conv2d_pad_add(ctx, FD_T(0), FD_T(1), FD_T(2), FD_T(3), FD_T(4), stride, pt, pl, pb, pr, compute);
}

static int fd_group_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int groups, float eps,
                         const sdx_tensor *g, const sdx_tensor *b, int fuse_silu, sdx_dtype compute) {
    FD_ARGS(y, x, g, b);
    return sdx__cpu_group_norm(ctx, FD_T(0), FD_T(1), groups, eps, FD_T(2), FD_T(3), fuse_silu, compute);
}

static int fd_layer_norm(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float eps, const sdx_tensor *g, const sdx_tensor *b) {
    FD_ARGS(y, x, g, b);
    return sdx__cpu_layer_norm(ctx, FD_T(0), FD_T(1), eps, FD_T(2), FD_T(3));
}

static int fd_attention(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *q, const sdx_tensor *k, const sdx_tensor *v,
                        int heads, int causal, sdx_dtype compute) {
    FD_ARGS(y, q, k, v);
    return sdx__cpu_attention(ctx, FD_T(0), FD_T(1), FD_T(2), FD_T(3), heads, causal, compute);
}

static int fd_scale(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float s) {
    FD_ARGS(y, x);
    return sdx__cpu_scale(ctx, FD_T(0), FD_T(1), s);
}

static int fd_clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float lo, float hi) {
    FD_ARGS(y, x);
    return sdx__cpu_clamp(ctx, FD_T(0), FD_T(1), lo, hi);
}

static int fd_tanh_clamp(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float limit) {
    FD_ARGS(y, x);
    return sdx__cpu_tanh_clamp(ctx, FD_T(0), FD_T(1), limit);
}

static int fd_leaky_relu(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, float slope) {
    FD_ARGS(y, x);
    return sdx__cpu_leaky_relu(ctx, FD_T(0), FD_T(1), slope);
}

#define FD_UNARY(name) static int fd_##name(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x) { \
    FD_ARGS(y, x); return sdx__cpu_##name(ctx, FD_T(0), FD_T(1)); }
#define FD_ACTIVATION(name) static int fd_##name(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, sdx_dtype compute) { \
    FD_ARGS(y, x); return sdx__cpu_##name(ctx, FD_T(0), FD_T(1), compute); }
#define FD_BINARY(name) static int fd_##name(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *a, const sdx_tensor *b) { \
    FD_ARGS(y, a, b); return sdx__cpu_##name(ctx, FD_T(0), FD_T(1), FD_T(2)); }
static int fd_pad_circular(sdx_ctx *ctx, sdx_tensor *y, const sdx_tensor *x, int t, int l, int b, int r) {
    FD_ARGS(y, x);
    return sdx__cpu_pad_circular(ctx, FD_T(0), FD_T(1), t, l, b, r);
}

FD_UNARY(softmax)
FD_ACTIVATION(silu)
FD_ACTIVATION(gelu)
FD_UNARY(quick_gelu)
FD_ACTIVATION(geglu)
FD_UNARY(copy)
FD_UNARY(resize_nearest)
FD_UNARY(nchw_to_nlc)
FD_UNARY(nlc_to_nchw)
FD_BINARY(add)
FD_BINARY(mul)
FD_BINARY(add_channel_bias)
FD_BINARY(concat_channels)

static sdx_backend fd_backend(fake_device *fd) {
    sdx_backend b;
    memset(&b, 0, sizeof b);
    b.name = "fake-device";
    b.user = fd;
    b.alloc = fd_alloc; b.free = fd_free; b.upload = fd_upload; b.download = fd_download;
#define FD_REGISTER(name, required, params, args, operands, scalars) b.name = fd_##name;
    SDX_BACKEND_OPS(FD_REGISTER)
#undef FD_REGISTER
    return b;
}

/* A context on the fake device. */
static sdx_ctx *fd_ctx(fake_device *fd) {
    sdx_ctx *ctx = t_ctx();
    sdx_backend b = fd_backend(fd);
    memset(fd, 0, sizeof *fd);
    if (ctx && sdx_set_backend(ctx, &b) != SDX_OK) { sdx_destroy(ctx); return NULL; }
    return ctx;
}

/* One generation of `p` from checkpoint ckpt (named `area` in messages)
 * on the CPU and on the fake device: equal bits. The fake device takes
 * no blocks, so the loader dequantizes a GGUF's to f16 for it; with
 * `dequantize` the CPU is made to do the same, for the same weights. */
static int fd_same_as_cpu_from(const char *area, const char *ckpt, const sdx_gen_params *p, int trace, int dequantize) {
    fake_device fd;
    sdx_ctx *cpu = t_ctx(), *dev = fd_ctx(&fd);
    sdx_model *mc, *md;
    sdx_gen_result rc_, rd;
    size_t n, peak;
    T_CHECK(dev, "fake device refused");
    sdx_set_trace(dev, trace);
    if (dequantize) cpu->be.linear_blocks = cpu->be.conv_blocks = 0;
    mc = t_model_file(cpu, ckpt);
    T_CHECK(mc, "%s", sdx_last_error(cpu));
    md = t_model_file(dev, ckpt);
    T_CHECK(md, "fake device load: %s", sdx_last_error(dev));
    t_same_activations(mc, md);
    T_CHECK(sdx_device_bytes(dev, NULL) > 0, "%s: the weights were uploaded", area);
    T_CHECK(sdx_generate(mc, p, &rc_) == SDX_OK, "%s: %s", area, sdx_last_error(cpu));
    T_CHECK(sdx_generate(md, p, &rd) == SDX_OK, "%s on the fake device: %s", area, sdx_last_error(dev));
    n = (size_t)sdx_tensor_numel(&rc_.latents[0]);
    T_CHECK(fd.calls > 0 && fd.host_operands == 0, "%s: %ld device kernel calls, %ld host operands", area, fd.calls, fd.host_operands);
    T_CHECK(!memcmp(rc_.latents[0].data, rd.latents[0].data, n * sizeof(float)), "%s: latents differ", area);
    T_CHECK(!memcmp(rc_.images[0].data, rd.images[0].data, (size_t)rd.images[0].width * (size_t)rd.images[0].height * 3),
            "%s: images differ", area);
    sdx_device_bytes(dev, &peak);
    T_NOTE("%s: %ld kernel calls, %.1f MB up, %.1f MB down, peak device %.1f MB", area, fd.calls,
           (double)fd.up_bytes / 1048576.0, (double)fd.down_bytes / 1048576.0, (double)peak / 1048576.0);
    sdx_gen_result_free(cpu, &rc_);
    sdx_gen_result_free(dev, &rd);
    sdx_model_free(mc);
    sdx_model_free(md);
    T_CHECK(sdx_device_bytes(dev, NULL) == 0 && fd.live_buffers == 0, "%s: %zu device bytes, %ld buffers left after free",
            area, sdx_device_bytes(dev, NULL), fd.live_buffers);
    sdx_destroy(cpu);
    sdx_destroy(dev);
    return T_PASS;
}

static int fd_same_as_cpu(const char *area, const sdx_gen_params *p, int trace) {
    return fd_same_as_cpu_from(area, t_golden_ckpt(area), p, trace, 0);
}

static void fd_params(sdx_gen_params *p) {
    memset(p, 0, sizeof *p);
    p->prompt = "a (red:1.2) fox in the snow";
    p->negative_prompt = "blurry";
    p->width = p->height = 64;
    p->steps = 3;
    p->seed = 42;
    p->sampler = "dpmpp_2m";
    p->rng = SDX_RNG_CPU;
}

static int generations_on_a_fake_device_equal_the_cpu_bit_for_bit(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    static const char *const areas[] = { "sd1", "sd2", "sdxl" };
    sdx_gen_params p;
    (void)v;
    fd_params(&p);
    for (int a = 0; a < 3; a++) {
        int rc = fd_same_as_cpu(areas[a], &p, 0);
        if (rc != T_PASS) return rc;
    }
    return T_PASS;
}

/* A GGUF checkpoint on a backend without block kernels (a GPU): its
 * quantized weights are dequantized to f16 at upload, and it generates
 * what the CPU does from the same f16 weights; a file with quantized
 * convolutions too. */
static int gguf_models_load_dequantized_on_a_device(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    T_NEED_SHARED(q8, "golden/gguf/sd1-q8_0.gguf");
    const char *conv = t_tmp("sdx_t_backend_conv_q4_0.gguf");
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    sdx_tensor *ts;
    sdx_convert_params cp = { "q4_0", NULL, 1 };
    sdx_gen_params p;
    int rc, n;
    (void)v;
    fd_params(&p);
    if ((rc = fd_same_as_cpu_from("sd1-q8_0.gguf", q8, &p, 0, 1)) != T_PASS) return rc;
    T_CHECK(sdx_st_open(ctx, t_golden_ckpt("sd1"), &st) == SDX_OK, "%s", sdx_last_error(ctx));
    n = sdx_st_count(st);
    T_CHECK((ts = (sdx_tensor *)calloc((size_t)n, sizeof *ts)) != NULL, "alloc");
    for (int i = 0; i < n; i++) ts[i] = *sdx_st_get(st, i);
    rc = sdx_convert_write(ctx, conv, ts, n, NULL, 0, &cp);
    free(ts);
    sdx_st_close(st);
    T_CHECK(rc == SDX_OK, "%s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    rc = fd_same_as_cpu_from("q4_0 with convolutions", conv, &p, 0, 1);
    remove(conv);
    return rc;
}

/* LoRA merges written into device weight slots (and restored after the
 * generation) give the CPU's bits. */
static int loras_on_the_fake_device_equal_the_cpu(void) {
    T_NEED_SHARED(dir, "golden/lora/loras");
    static const char *const areas[] = { "sd2", "sdxl" };
    static const char *const prompts[] = { "a fox <lora:sd2_kohya:0.6:1.2>", "a fox <lora:sdxl_kohya_locon:0.7:-0.5>" };
    sdx_gen_params p;
    fd_params(&p);
    p.lora_dir = dir;
    for (int a = 0; a < 2; a++) {
        int rc;
        p.prompt = prompts[a];
        if ((rc = fd_same_as_cpu(areas[a], &p, 0)) != T_PASS) return rc;
    }
    return T_PASS;
}

/* The latents of a staged generation from `cond`, into out (n floats). */
static int fd_sample(sdx_model *m, const sdx_gen_params *p, const sdx_cond *cond, float *out, size_t n) {
    sdx_sampling *s = NULL;
    int rc = sdx_sampling_begin(m, p, cond, 0, &s);
    if (rc == SDX_OK) rc = sdx_sampling_finish(s);
    if (rc == SDX_OK) memcpy(out, sdx_sampling_latent(s)->data, n * sizeof *out);
    sdx_sampling_free(s);
    return rc;
}

/* A device keeps a conditioning's cross-attention keys and values from
 * one sampling to the next; a LoRA merged in between makes them again:
 * both samplings give the CPU's bits, which compute them every step. */
static int a_kept_conditioning_sees_a_lora_merged_after_it(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    T_NEED_SHARED(lora, "golden/lora/loras/sd1_kohya_locon.safetensors");
    fake_device fd;
    sdx_ctx *ctx[2] = { t_ctx(), fd_ctx(&fd) };
    sdx_model *m[2];
    sdx_cond *cond[2];
    sdx_gen_params p;
    static float lat[2][2][4 * 8 * 8];      /* [cpu, device][before, after the LoRA] */
    const size_t n = 4 * 8 * 8;
    (void)v;
    fd_params(&p);
    T_CHECK(ctx[1], "fake device refused");
    for (int d = 0; d < 2; d++) T_CHECK((m[d] = t_model(ctx[d], "sd1")) != NULL, "%s", sdx_last_error(ctx[d]));
    t_same_activations(m[0], m[1]);
    for (int d = 0; d < 2; d++) {
        T_CHECK(sdx_encode_prompt(m[d], &p, &cond[d]) == SDX_OK, "%s", sdx_last_error(ctx[d]));
        T_CHECK(fd_sample(m[d], &p, cond[d], lat[d][0], n) == SDX_OK, "%s", sdx_last_error(ctx[d]));
        T_CHECK(sdx_model_apply_lora(m[d], lora, 1.0f, 0.0f) == SDX_OK, "%s", sdx_last_error(ctx[d]));
        T_CHECK(fd_sample(m[d], &p, cond[d], lat[d][1], n) == SDX_OK, "%s", sdx_last_error(ctx[d]));
    }
    T_CHECK(memcmp(lat[0][0], lat[0][1], sizeof lat[0][0]), "the LoRA changed nothing");
    T_CHECK(!memcmp(lat[0][0], lat[1][0], sizeof lat[0][0]), "the device's first sampling differs from the CPU's");
    T_CHECK(!memcmp(lat[0][1], lat[1][1], sizeof lat[0][1]), "after the LoRA the device's sampling differs from the CPU's");
    for (int d = 0; d < 2; d++) {
        sdx_cond_free(cond[d]);
        sdx_model_free(m[d]);
    }
    T_CHECK(sdx_device_bytes(ctx[1], NULL) == 0 && fd.live_buffers == 0, "%zu device bytes, %ld buffers left after free",
            sdx_device_bytes(ctx[1], NULL), fd.live_buffers);
    for (int d = 0; d < 2; d++) sdx_destroy(ctx[d]);
    return T_PASS;
}

/* The paths that move data by hand: odd sizes (nearest resize in the
 * UNet), a tiled VAE (decode and encode, several tiles), seamless tiling, img2img with a mask, cfg 1 (batch of one), tracing. */
static int every_data_path_on_the_fake_device_equals_the_cpu(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    static uint8_t px[72 * 40 * 3], mk[72 * 40];
    sdx_image init, mask;
    sdx_gen_params p;
    int rc;
    (void)v;
    for (int i = 0; i < 72 * 40 * 3; i++) px[i] = (uint8_t)(i * 7);
    for (int i = 0; i < 72 * 40; i++) mk[i] = (i % 72) < 36 ? 0 : 255;
    init.width = 72; init.height = 40; init.channels = 3; init.data = px;
    mask.width = 72; mask.height = 40; mask.channels = 1; mask.data = mk;
    fd_params(&p);
    p.width = 72;
    p.height = 40;
    p.vae_tiling = 1;
    p.vae_tile_width = 4;   /* 3x2 tiles: planes cross the bus tile by tile */
    p.vae_tile_height = 4;
    p.seamless = 1;     /* seamless: circular padding */
    if ((rc = fd_same_as_cpu("sdxl", &p, 0)) != T_PASS) return rc;
    p.seamless = 0;
    p.init_image = &init;
    p.mask = &mask;
    p.strength = 0.6f;
    p.cfg_scale = 1.0f;
    if ((rc = fd_same_as_cpu("sd1", &p, 1)) != T_PASS) return rc;
    return T_PASS;
}

/* The storage sdx_model_desc.activations gives each part: text
 * encoders, UNet, VAE, TAESD. */
static int fd_activations_are(const sdx_model *m, int text, int unet, int vae) {
    return m->te.act_type == text && (int)m->unet.act_type == unet && m->vae.act_type == vae && m->taesd.act_type == vae;
}

static sdx_model *fd_model_as(sdx_ctx *ctx, const char *area, sdx_activations a) {
    sdx_model_desc md;
    t_golden_desc(&md, area);
    md.activations = a;
    return t_model_with(ctx, &md);
}

/* sdx_model_desc.activations: by default the CPU keeps the policy macros
 * and a device stores half precision where its matrix units want it
 * (f16 UNet and VAE; bf16 for SDXL's VAE, which outgrows f16; f32 text
 * encoders); a value given sets every part, on either; others are
 * refused. */
static int a_device_stores_half_activations_by_default(void) {
    static const struct { const char *area; sdx_activations a; int cpu, device; int text, unet, vae; } cases[] = {
        { "sd1", SDX_ACT_DEFAULT, 1, 0, SDX_TEXT_ACT_TYPE, SDX_UNET_ACT_TYPE, SDX_VAE_ACT_TYPE },
        { "sd1", SDX_ACT_DEFAULT, 0, 1, SDX_F32, SDX_F16, SDX_F16 },
        { "sd2", SDX_ACT_DEFAULT, 0, 1, SDX_F32, SDX_F16, SDX_F16 },
        { "sdxl", SDX_ACT_DEFAULT, 0, 1, SDX_F32, SDX_F16, SDX_BF16 },
        { "sdxl", SDX_ACT_F32, 0, 1, SDX_F32, SDX_F32, SDX_F32 },
        { "sd1", SDX_ACT_F16, 1, 1, SDX_F16, SDX_F16, SDX_F16 },
        { "sdxl", SDX_ACT_BF16, 1, 1, SDX_BF16, SDX_BF16, SDX_BF16 },
    };
    T_NEED_SHARED(v, "vocab/merges.txt");
    fake_device fd;
    sdx_ctx *cpu = t_ctx(), *dev = fd_ctx(&fd);
    (void)v;
    T_CHECK(cpu && dev, "contexts");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int on_dev = 0; on_dev < 2; on_dev++) {
            sdx_ctx *ctx = on_dev ? dev : cpu;
            sdx_model *m;
            if (!(on_dev ? cases[i].device : cases[i].cpu)) continue;
            m = fd_model_as(ctx, cases[i].area, cases[i].a);
            T_CHECK(m, "%s: %s", cases[i].area, sdx_last_error(ctx));
            T_CHECK(fd_activations_are(m, cases[i].text, cases[i].unet, cases[i].vae),
                    "case %zu (%s, %s): text %d, UNet %d, VAE %d, TAESD %d", i, cases[i].area, on_dev ? "device" : "cpu",
                    m->te.act_type, (int)m->unet.act_type, m->vae.act_type, m->taesd.act_type);
            sdx_model_free(m);
        }
    T_CHECK(!fd_model_as(cpu, "sd1", (sdx_activations)7) && strstr(sdx_last_error(cpu), "activations 7"),
            "an unknown value: %s", sdx_last_error(cpu));
    sdx_destroy(cpu);
    sdx_destroy(dev);
    return T_PASS;
}

typedef struct { fake_device *fd; size_t moved[16]; int steps; } fd_progress;

static int fd_on_step(void *user, int image, int step, int steps, const sdx_tensor *latent) {
    fd_progress *pr = (fd_progress *)user;
    (void)image; (void)steps; (void)latent;
    if (step < 16) pr->moved[step] = pr->fd->up_bytes + pr->fd->down_bytes;
    pr->steps = step;
    return 0;
}

/* Per sampler step: the UNet input (latent batch and timestep embedding)
 * up, its prediction down; weights and conditioning stay on the device. */
static int per_step_only_the_latent_crosses_the_bus(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(v, "vocab/merges.txt");
    fake_device fd;
    sdx_ctx *ctx = fd_ctx(&fd);
    sdx_model *m;
    sdx_gen_params p;
    sdx_gen_result res;
    fd_progress pr;
    size_t plane = 8 * 8, expect;
    (void)v;
    T_CHECK(ctx, "fake device refused");
    m = t_model_file(ctx, ckpt);
    T_CHECK(m, "%s", sdx_last_error(ctx));
    fd_params(&p);
    p.sampler = "euler";
    p.steps = 4;
    memset(&pr, 0, sizeof pr);
    pr.fd = &fd;
    p.progress = fd_on_step;
    p.progress_user = &pr;
    T_CHECK(sdx_generate(m, &p, &res) == SDX_OK, "%s", sdx_last_error(ctx));
    /* batch 2: x * c_in in the UNet's activation type, the f32 timestep
     * embedding, the f32 prediction */
    expect = 2 * 4 * plane * sdx_dtype_size((sdx_dtype)m->unet.act_type) + 2 * (size_t)m->unet.model_channels * 4 +
             2 * 4 * plane * 4;
    for (int s = 2; s <= pr.steps; s++) {
        size_t moved = pr.moved[s] - pr.moved[s - 1];
        T_CHECK(moved == expect, "step %d moved %zu bytes, expected %zu", s, moved, expect);
    }
    T_NOTE("%zu bytes per step; %.1f MB of weights stayed put", expect, (double)sdx_device_bytes(ctx, NULL) / 1048576.0);
    sdx_gen_result_free(ctx, &res);
    sdx_model_free(m);
    sdx_destroy(ctx);
    return T_PASS;
}

/* NaN weights on the device: the tracer still names the op and layer. */
static int the_tracer_names_the_first_nonfinite_op_on_the_device(void) {
    T_NEED_SHARED(src, "golden/sd1/model.safetensors");
    T_NEED_SHARED(v, "vocab/merges.txt");
    static float w[64 * 64 * 9];
    const char *path = t_tmp("sdx_t_backend_nan.safetensors");
    fake_device fd;
    sdx_ctx *ctx = fd_ctx(&fd);
    sdx_model *m;
    sdx_gen_params p;
    sdx_gen_result res;
    (void)v;
    T_CHECK(ctx, "fake device refused");
    T_CHECK(t_write_variant(ctx, src, path, t_poison_unet, w) == SDX_OK, "%s", sdx_last_error(ctx));
    m = t_model_file(ctx, path);
    T_CHECK(m, "%s", sdx_last_error(ctx));
    fd_params(&p);
    sdx_set_trace(ctx, 1);
    T_CHECK(sdx_generate(m, &p, &res) == SDX_ERR_NONFINITE, "traced run: %s", sdx_last_error(ctx));
    T_CHECK(strstr(sdx_last_error(ctx), "conv2d in unet at middle_block.0"), "tracer: %s", sdx_last_error(ctx));
    sdx_model_free(m);
    remove(path);
    sdx_destroy(ctx);
    return T_PASS;
}

/* TAESD on the device: decode, encode (img2img) and x0 previews equal the
 * CPU's, with every kernel operand on the device. */
typedef struct { sdx_ctx *ctx; sdx_image last; int calls; } fd_previews;

static int fd_keep_preview(void *user, int image, int step, int steps, const sdx_image *img) {
    fd_previews *pv = (fd_previews *)user;
    size_t n = (size_t)img->width * (size_t)img->height * 3;
    (void)image; (void)step; (void)steps;
    free(pv->last.data);
    pv->last = *img;
    pv->last.data = (uint8_t *)malloc(n);
    if (pv->last.data) memcpy(pv->last.data, img->data, n);
    pv->calls++;
    return 0;
}

static int taesd_on_the_fake_device_equals_the_cpu(void) {
    T_NEED_SHARED(ckpt, "golden/sd1/model.safetensors");
    T_NEED_SHARED(dec, "golden/taesd/taesd_decoder.safetensors");
    T_NEED_SHARED(enc, "golden/taesd/taesd_encoder.safetensors");
    static uint8_t px[64 * 48 * 3];
    fake_device fd;
    sdx_ctx *ctx[2] = { t_ctx(), fd_ctx(&fd) };
    sdx_model *m[2];
    sdx_gen_result res[2];
    fd_previews pv[2];
    sdx_image init;
    sdx_gen_params p;
    T_CHECK(ctx[1], "fake device refused");
    for (int i = 0; i < 64 * 48 * 3; i++) px[i] = (uint8_t)(i * 13);
    init.width = 64; init.height = 48; init.channels = 3; init.data = px;
    fd_params(&p);
    p.width = 64;
    p.height = 48;
    p.init_image = &init;
    p.strength = 0.7f;
    p.preview = fd_keep_preview;
    memset(pv, 0, sizeof pv);
    for (int k = 0; k < 2; k++) {
        sdx_model_desc md;
        memset(&md, 0, sizeof md);
        md.checkpoint = ckpt;
        md.taesd[0] = dec;
        md.taesd[1] = enc;
        m[k] = t_model_with(ctx[k], &md);
        T_CHECK(m[k], "%s", sdx_last_error(ctx[k]));
    }
    t_same_activations(m[0], m[1]);
    for (int k = 0; k < 2; k++) {
        pv[k].ctx = ctx[k];
        p.preview_user = &pv[k];
        T_CHECK(sdx_generate(m[k], &p, &res[k]) == SDX_OK, "%s: %s", k ? "device" : "cpu", sdx_last_error(ctx[k]));
    }
    T_CHECK(fd.calls > 0 && fd.host_operands == 0, "%ld device kernel calls, %ld host operands", fd.calls, fd.host_operands);
    T_CHECK(!memcmp(res[0].latents[0].data, res[1].latents[0].data, sdx_tensor_nbytes(&res[0].latents[0])), "latents differ");
    T_CHECK(!memcmp(res[0].images[0].data, res[1].images[0].data, 64 * 48 * 3), "images differ");
    T_CHECK(pv[0].calls == pv[1].calls && pv[0].calls > 0 && pv[0].last.data && pv[1].last.data &&
            !memcmp(pv[0].last.data, pv[1].last.data, 64 * 48 * 3), "previews differ");
    for (int k = 0; k < 2; k++) {
        free(pv[k].last.data);
        sdx_gen_result_free(ctx[k], &res[k]);
        sdx_model_free(m[k]);
    }
    T_CHECK(sdx_device_bytes(ctx[1], NULL) == 0 && fd.live_buffers == 0, "device memory left after free");
    sdx_destroy(ctx[0]);
    sdx_destroy(ctx[1]);
    return T_PASS;
}

static int host_operands_and_incomplete_backends_are_refused(void) {
    fake_device fd;
    sdx_ctx *ctx = fd_ctx(&fd);
    sdx_backend b = fd_backend(&fd);
    float host[4] = { 1, 2, 3, 4 };
    const int64_t four = 4;
    sdx_tensor x, y;
    sdx__arena a;
    T_CHECK(ctx, "fake device refused");
    /* a host tensor handed to a device kernel is named, never run */
    sdx__arena_init(&a, ctx, 0);
    T_CHECK(sdx__arena_tensor(&a, &y, SDX_F32, 1, &four), "%s", sdx_last_error(ctx));
    T_CHECK(y.device == 1, "arena tensors live on the device");
    x = sdx__view(SDX_F32, host, 1, &four);
    T_CHECK(sdx__silu(ctx, &y, &x, SDX_F32) == SDX_ERR_INVALID_ARG && fd.calls == 0, "host operand ran");
    T_CHECK(strstr(sdx_last_error(ctx), "silu: operand 1 is in host memory") != NULL, "message: %s", sdx_last_error(ctx));
    /* a backend cannot be swapped while it holds memory */
    T_CHECK(sdx_set_backend(ctx, NULL) == SDX_ERR_INVALID_ARG, "swapped with live device memory");
    sdx__arena_free(&a);
    T_CHECK(sdx_set_backend(ctx, NULL) == SDX_OK && !strcmp(sdx_backend_name(ctx), "cpu"), "%s", sdx_last_error(ctx));
    /* a table with a hole is refused by the name of the hole */
    b.attention = NULL;
    T_CHECK(sdx_set_backend(ctx, &b) == SDX_ERR_INVALID_ARG && strstr(sdx_last_error(ctx), "has no attention"),
            "incomplete backend: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

/* softmax and mul are optional: a backend without them is accepted, and
 * the ops run on the host on copies of the operands, with the CPU's bits
 * (mul in place, y aliasing a, as model code may call it). */
static int optional_ops_a_backend_lacks_run_on_the_host(void) {
    fake_device fd;
    sdx_ctx *cpu = t_ctx(), *ctx = t_ctx();
    sdx_backend b = fd_backend(&fd);
    const int64_t shape[2] = { 3, 37 };
    float xv[3 * 37], bv[3 * 37], want_soft[3 * 37], want_mul[3 * 37], got[3 * 37];
    sdx_tensor hx, hb, hy, x, bt, y;
    sdx__arena a;
    for (int i = 0; i < 3 * 37; i++) { xv[i] = (float)((i * 37) % 23) * 0.3f - 3.0f; bv[i] = 1.0f + (float)(i % 5) * 0.25f; }
    memset(&fd, 0, sizeof fd);
    b.softmax = NULL;
    b.mul = NULL;
    T_CHECK(cpu && ctx, "context");
    T_CHECK(sdx_set_backend(ctx, &b) == SDX_OK, "a backend without optional ops: %s", sdx_last_error(ctx));
    hx = sdx__view(SDX_F32, xv, 2, shape);
    hb = sdx__view(SDX_F32, bv, 2, shape);
    hy = sdx__view(SDX_F32, want_soft, 2, shape);
    T_CHECK(sdx__softmax(cpu, &hy, &hx) == SDX_OK, "%s", sdx_last_error(cpu));
    memcpy(want_mul, xv, sizeof xv);
    hy = sdx__view(SDX_F32, want_mul, 2, shape);
    T_CHECK(sdx__mul(cpu, &hy, &hy, &hb) == SDX_OK, "%s", sdx_last_error(cpu));
    sdx__arena_init(&a, ctx, 0);
    T_CHECK(sdx__arena_tensor(&a, &x, SDX_F32, 2, shape) && sdx__arena_tensor(&a, &bt, SDX_F32, 2, shape) &&
            sdx__arena_tensor(&a, &y, SDX_F32, 2, shape), "%s", sdx_last_error(ctx));
    T_CHECK(sdx__upload(ctx, &x, xv) == SDX_OK && sdx__upload(ctx, &bt, bv) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx__softmax(ctx, &y, &x) == SDX_OK, "softmax on the host: %s", sdx_last_error(ctx));
    T_CHECK(sdx__download(ctx, got, &y) == SDX_OK && !memcmp(got, want_soft, sizeof got), "softmax differs from the CPU's");
    T_CHECK(sdx__mul(ctx, &x, &x, &bt) == SDX_OK, "mul on the host: %s", sdx_last_error(ctx));
    T_CHECK(sdx__download(ctx, got, &x) == SDX_OK && !memcmp(got, want_mul, sizeof got), "mul differs from the CPU's");
    T_CHECK(fd.calls == 0, "a fake kernel ran (%ld calls)", fd.calls);
    sdx__arena_free(&a);
    sdx_destroy(ctx);
    sdx_destroy(cpu);
    return T_PASS;
}

/* A model call as the planner sees it: two 600 KB temporaries live at
 * once (the second nested), then a product into the caller's `out`;
 * optionally a download in between (the tracer, a host fallback). */
typedef struct {
    sdx_ctx *ctx;
    sdx__arena *a;
    sdx_tensor *out;
    int runs, download;
} plan_call;

static int plan_call_run(void *arg) {
    plan_call *c = (plan_call *)arg;
    static float in[150000], seen[150000];
    const int64_t n = 150000;
    sdx__mark m = sdx__arena_mark(c->a), inner;
    sdx_tensor x, tmp;
    int rc = SDX_ERR_NOMEM;
    c->runs++;
    for (int64_t i = 0; i < n; i++) in[i] = (float)(i % 97) - 48.0f;
    if (!sdx__arena_tensor(c->a, &x, SDX_F32, 1, &n)) goto done;
    if ((rc = sdx__upload(c->ctx, &x, in)) != SDX_OK) goto done;
    inner = sdx__arena_mark(c->a);
    if (!sdx__arena_tensor(c->a, &tmp, SDX_F32, 1, &n)) { rc = SDX_ERR_NOMEM; goto done; }
    if ((rc = sdx__scale(c->ctx, &tmp, &x, 3.0f)) != SDX_OK) goto done;
    if (c->download && (rc = sdx__download(c->ctx, seen, &tmp)) != SDX_OK) goto done;
    sdx__arena_release(c->a, inner);
    rc = sdx__scale(c->ctx, c->out, &x, 2.0f);
done:
    sdx__arena_release(c->a, m);
    return rc;
}

/* A model call on a device is planned first (sdx__plan): it runs once
 * computing nothing (no kernel, no upload) while its arena counts, and
 * then for real in one block of its largest live set, where growing as
 * it went takes a chain of blocks with unused tails. A call that reads
 * results back cannot be planned; it runs all the same. */
static int a_planned_call_on_a_device_takes_its_live_set(void) {
    const int64_t n = 150000, live = 2 * n * (int64_t)sizeof(float);
    static float got[150000];
    size_t peak[3];
    for (int run = 0; run < 3; run++) {     /* as it comes, planned, planned but reading back */
        fake_device fd;
        sdx_ctx *ctx = fd_ctx(&fd);
        sdx__arena a, outs;
        sdx_tensor out;
        plan_call c;
        T_CHECK(ctx, "fake device refused");
        sdx__arena_init(&a, ctx, 0);
        sdx__arena_init(&outs, ctx, 0);
        T_CHECK(sdx__arena_tensor(&outs, &out, SDX_F32, 1, &n), "%s", sdx_last_error(ctx));
        c.ctx = ctx; c.a = &a; c.out = &out; c.runs = 0; c.download = run == 2;
        T_CHECK((run ? sdx__planned(ctx, plan_call_run, &c) : plan_call_run(&c)) == SDX_OK, "%s", sdx_last_error(ctx));
        T_CHECK(c.runs == 1 + (run > 0), "%d runs", c.runs);
        T_CHECK(fd.calls == 2 && fd.up_bytes == (size_t)live / 2, "planning ran kernels or uploads (%ld kernels, %zu bytes)", fd.calls,
                fd.up_bytes);
        T_CHECK(sdx__download(ctx, got, &out) == SDX_OK && got[0] == -96.0f && got[7] == -82.0f, "the product: %g %g", got[0], got[7]);
        T_CHECK(a.peak == (size_t)live, "live peak %zu", a.peak);
        sdx_device_bytes(ctx, &peak[run]);
        peak[run] -= outs.reserved;     /* the call's arena alone */
        sdx__arena_free(&a);
        sdx__arena_free(&outs);
        T_CHECK(fd.live_buffers == 0, "device buffers left");
        sdx_destroy(ctx);
    }
    T_CHECK(peak[1] == (size_t)live && peak[0] > (size_t)live && peak[2] == peak[0],
            "device memory of the call: %zu planned, %zu grown, %zu reading back, for %lld live", peak[1], peak[0], peak[2], (long long)live);
    return T_PASS;
}

/* A UNet call on a device takes the weights, its inputs and its live set
 * (sdx__graph_call plans it), and a second call takes nothing more. */
static int a_unet_call_on_a_device_takes_weights_and_its_live_set(void) {
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    T_NEED_SHARED(cpath, "golden/sd1/cases/unet_case0.safetensors");
    fake_device fd;
    sdx_ctx *ctx = fd_ctx(&fd);
    t_unet_inputs c;
    sdx__arena ins, a;
    sdx_tensor dx, dcx, out;
    size_t weights, peak;
    T_CHECK(ctx && t_unet_inputs_open(ctx, &c, path, cpath), "%s", ctx ? sdx_last_error(ctx) : "fake device refused");
    weights = sdx_device_bytes(ctx, NULL);
    sdx__arena_init(&ins, ctx, 0);
    sdx__arena_init(&a, ctx, 0);
    {
        int64_t shape[4] = { c.x.shape[0], c.u->out_channels, c.x.shape[2], c.x.shape[3] };
        T_CHECK(sdx__arena_tensor(&ins, &dx, SDX_F32, c.x.ndim, c.x.shape) && sdx__arena_tensor(&ins, &dcx, SDX_F32, c.cx.ndim, c.cx.shape) &&
                sdx__arena_tensor(&ins, &out, SDX_F32, 4, shape), "%s", sdx_last_error(ctx));
    }
    T_CHECK(sdx__upload(ctx, &dx, (const float *)c.x.data) == SDX_OK && sdx__upload(ctx, &dcx, (const float *)c.cx.data) == SDX_OK,
            "upload");
    for (int call = 0; call < 2; call++) {
        T_CHECK(sdx__unet_forward(ctx, c.u, &a, &dx, (const float *)c.ts.data, &dcx, NULL, &out) == SDX_OK, "%s", sdx_last_error(ctx));
        sdx_device_bytes(ctx, &peak);
        T_CHECK(a.peak > 0 && peak == weights + ins.reserved + a.peak, "call %d: device peak %zu = %zu weights + %zu inputs + %zu live?", call,
                peak, weights, ins.reserved, a.peak);
    }
    sdx__arena_free(&a);
    sdx__arena_free(&ins);
    t_unet_inputs_close(ctx, &c);
    sdx_destroy(ctx);
    return T_PASS;
}

/* A controlled generation (two ControlNets, one of them only for part of
 * the schedule, on the SD 1.x model) on the fake device:
 * ControlNet weights uploaded, residuals on the device, equal bits. */
static int controlnets_on_the_fake_device_equal_the_cpu(void) {
    T_NEED_SHARED(v, "vocab/merges.txt");
    T_NEED_SHARED(cnp, "golden/controlnet/controlnet.safetensors");
    const char *ckpt = t_golden_ckpt("sd1");
    char cn_path[512];
    static uint8_t px[50 * 30 * 3];
    sdx_image hint = { 50, 30, 3, px };
    fake_device fd;
    sdx_ctx *cpu = t_ctx(), *dev = fd_ctx(&fd);
    sdx_model *mc, *md;
    sdx_controlnet *nc = NULL, *nd = NULL;
    sdx_control c[2];
    sdx_gen_params p;
    sdx_gen_result rc_, rd;
    size_t n;
    (void)v;
    for (int i = 0; i < (int)sizeof px; i++) px[i] = (uint8_t)((i / 3 % 50) > 25 ? 255 : i * 5);
    snprintf(cn_path, sizeof cn_path, "%s", cnp);
    T_CHECK(dev, "fake device refused");
    mc = t_model_file(cpu, ckpt);
    md = t_model_file(dev, ckpt);
    T_CHECK(mc && md, "%s / %s", sdx_last_error(cpu), sdx_last_error(dev));
    t_same_activations(mc, md);
    T_CHECK(sdx_controlnet_load(mc, cn_path, &nc) == SDX_OK, "%s", sdx_last_error(cpu));
    T_CHECK(sdx_controlnet_load(md, cn_path, &nd) == SDX_OK, "fake device: %s", sdx_last_error(dev));
    fd_params(&p);
    memset(c, 0, sizeof c);
    c[0].image = c[1].image = &hint;
    c[0].strength = 0.8f;
    c[1].strength = 0.5f;
    c[1].end = 0.6f;
    p.controls = c;
    p.n_controls = 2;
    c[0].net = c[1].net = nc;
    T_CHECK(sdx_generate(mc, &p, &rc_) == SDX_OK, "%s", sdx_last_error(cpu));
    c[0].net = c[1].net = nd;
    T_CHECK(sdx_generate(md, &p, &rd) == SDX_OK, "fake device: %s", sdx_last_error(dev));
    n = (size_t)sdx_tensor_numel(&rc_.latents[0]);
    T_CHECK(fd.calls > 0 && fd.host_operands == 0, "%ld device kernel calls, %ld host operands", fd.calls, fd.host_operands);
    T_CHECK(!memcmp(rc_.latents[0].data, rd.latents[0].data, n * sizeof(float)), "latents differ");
    T_NOTE("controlled: %ld kernel calls, %.1f MB up, %.1f MB down", fd.calls, (double)fd.up_bytes / 1048576.0,
           (double)fd.down_bytes / 1048576.0);
    sdx_gen_result_free(cpu, &rc_);
    sdx_gen_result_free(dev, &rd);
    sdx_controlnet_free(nc);
    sdx_controlnet_free(nd);
    sdx_model_free(mc);
    sdx_model_free(md);
    T_CHECK(sdx_device_bytes(dev, NULL) == 0 && fd.live_buffers == 0, "%zu device bytes, %ld buffers left after free",
            sdx_device_bytes(dev, NULL), fd.live_buffers);
    sdx_destroy(cpu);
    sdx_destroy(dev);
    return T_PASS;
}

static const t_case backend_cases[] = {
    { "controlnets_on_the_fake_device_equal_the_cpu", controlnets_on_the_fake_device_equal_the_cpu },
    { "host_operands_and_incomplete_backends_are_refused", host_operands_and_incomplete_backends_are_refused },
    { "optional_ops_a_backend_lacks_run_on_the_host", optional_ops_a_backend_lacks_run_on_the_host },
    { "a_planned_call_on_a_device_takes_its_live_set", a_planned_call_on_a_device_takes_its_live_set },
    { "a_unet_call_on_a_device_takes_weights_and_its_live_set", a_unet_call_on_a_device_takes_weights_and_its_live_set },
    { "generations_on_a_fake_device_equal_the_cpu_bit_for_bit", generations_on_a_fake_device_equal_the_cpu_bit_for_bit },
    { "gguf_models_load_dequantized_on_a_device", gguf_models_load_dequantized_on_a_device },
    { "every_data_path_on_the_fake_device_equals_the_cpu", every_data_path_on_the_fake_device_equals_the_cpu },
    { "per_step_only_the_latent_crosses_the_bus", per_step_only_the_latent_crosses_the_bus },
    { "the_tracer_names_the_first_nonfinite_op_on_the_device", the_tracer_names_the_first_nonfinite_op_on_the_device },
    { "taesd_on_the_fake_device_equals_the_cpu", taesd_on_the_fake_device_equals_the_cpu },
    { "a_device_stores_half_activations_by_default", a_device_stores_half_activations_by_default },
    { "loras_on_the_fake_device_equal_the_cpu", loras_on_the_fake_device_equal_the_cpu },
    { "a_kept_conditioning_sees_a_lora_merged_after_it", a_kept_conditioning_sees_a_lora_merged_after_it },
    { 0, 0 }
};
SDX_TEST_SUITE(backend, backend_cases)

/* sdx-mkckpt: writes a single-file checkpoint with random weights and the
 * key names and shapes of the released ones: text encoder(s), UNet and VAE
 * of SD 1.5 (CLIP ViT-L), SD 2.1 (OpenCLIP ViT-H), SDXL (CLIP ViT-L and
 * OpenCLIP ViT-bigG) or the SDXL refiner (bigG alone), so that any engine
 * (sdx, stable-diffusion.cpp, ComfyUI) loads the same file. For benchmarks
 * and tests.
 *
 *   cc -std=c11 -O2 -I. -o sdx-mkckpt tools/sdx-mkckpt.c -lm -lpthread
 *   sdx-mkckpt --preset sdxl -o /tmp/sdxl-random.safetensors       (~6.9 GB f16)
 *   sdx-mkckpt --preset sd21 --prediction v --bf16 -o /tmp/sd21v.safetensors
 *   sdx-mkckpt --preset sd15 --shrink 10 -o /tmp/sd15-tiny.safetensors
 *   sdx-mkckpt --preset sdxl-refiner --tiny -o /tmp/refiner.safetensors   (the golden tiny SDXL's scale)
 *   sdx-mkckpt --preset sd15 --list                  (keys and shapes, no file)
 *   sdx-mkckpt --unet-only --model-channels 32 --mult 1,2 --res 1 --depth 0,2 \
 *              --depth-mid 1 --context-dim 48 --linear 1 -o /tmp/custom.safetensors
 *
 * Tensors are streamed to the file in chunks, so a 7 GB SDXL needs a few
 * MB of memory; free disk space is checked first. Weights: matrices and
 * convs uniform with variance 1/fan_in, biases and norm offsets standard
 * deviation 0.1, norm scales 1 + that: activations stay O(1) through any
 * depth, in f16 as in f32. Deterministic: a seed per (tensor, chunk).
 *
 * Compiled with SDX_MKCKPT_NO_MAIN, the file is a library for tests and
 * benchmarks (mk_ckpt_preset / mk_ckpt_tiny / mk_write_ckpt for whole checkpoints,
 * mk_unet_preset, mk_write_unet, mk_write_controlnet, and
 * mk_write_vae_decoder / mk_write_taesd_decoder for the full-size SD VAE
 * decoder and TAESD's). */
#ifndef SDX_MKCKPT_C
#define SDX_MKCKPT_C
#ifndef SDX_MKCKPT_NO_MAIN
#define _DEFAULT_SOURCE 1
#define SDX_IMPLEMENTATION
#endif
#include "../sdx.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <math.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/statvfs.h>
#define MK_HAVE_STATVFS 1
#endif

#define MK_MAX_LEVELS 8

/* a program including this file uses only some of the writers */
#if defined(__GNUC__) || defined(__clang__)
#define MK_MAYBE_UNUSED __attribute__((unused))
#else
#define MK_MAYBE_UNUSED
#endif

typedef struct mk_unet_arch {
    int in_channels, out_channels, model_channels;
    int n_levels;
    int mult[MK_MAX_LEVELS];
    int res[MK_MAX_LEVELS];        /* ResBlocks per level (input side; output side has one more) */
    int depth[MK_MAX_LEVELS];      /* transformer depth per level, 0 = no attention */
    int depth_mid;                 /* -1: no middle block, 0: one ResBlock, > 0: Res, Transformer, Res */
    int context_dim;
    int linear_proj;               /* 1: Linear proj_in/proj_out (SD 2.x, SDXL); 0: 1x1 convs */
    int adm_channels;              /* > 0: label_emb (SDXL vector conditioning) */
} mk_unet_arch;

/* Real architectures. Returns 0 on an unknown name. */
MK_MAYBE_UNUSED static int mk_unet_preset(const char *name, mk_unet_arch *a) {
    static const int sd_mult[4] = { 1, 2, 4, 4 }, sd_depth[4] = { 1, 1, 1, 0 };
    static const int xl_mult[3] = { 1, 2, 4 }, xl_depth[3] = { 0, 2, 10 };
    static const int rf_mult[4] = { 1, 2, 4, 4 }, rf_depth[4] = { 0, 4, 4, 0 };
    memset(a, 0, sizeof *a);
    a->in_channels = a->out_channels = 4;
    a->model_channels = 320;
    if (!strcmp(name, "sd15") || !strcmp(name, "sd21")) {
        a->n_levels = 4;
        for (int l = 0; l < 4; l++) a->mult[l] = sd_mult[l], a->res[l] = 2, a->depth[l] = sd_depth[l];
        a->depth_mid = 1;
        a->context_dim = name[2] == '1' && name[3] == '5' ? 768 : 1024;
        a->linear_proj = a->context_dim == 1024;
        return 1;
    }
    if (!strcmp(name, "sdxl")) {
        a->n_levels = 3;
        for (int l = 0; l < 3; l++) a->mult[l] = xl_mult[l], a->res[l] = 2, a->depth[l] = xl_depth[l];
        a->depth_mid = 10;
        a->context_dim = 2048;
        a->linear_proj = 1;
        a->adm_channels = 2816;
        return 1;
    }
    if (!strcmp(name, "sdxl-refiner")) {    /* SGM's sd_xl_refiner.yaml */
        a->model_channels = 384;
        a->n_levels = 4;
        for (int l = 0; l < 4; l++) a->mult[l] = rf_mult[l], a->res[l] = 2, a->depth[l] = rf_depth[l];
        a->depth_mid = 4;
        a->context_dim = 1280;
        a->linear_proj = 1;
        a->adm_channels = 2560;
        return 1;
    }
    return 0;
}

/* ---- tensor list ---------------------------------------------------------- */

/* How a tensor is initialised: MK_CONST writes `value` (OpenCLIP's
 * logit_scale), MK_ARANGE the int64 positions 0..n-1 (CLIP's position_ids). */
enum { MK_MATRIX, MK_BIAS, MK_NORM_SCALE, MK_CONST, MK_ARANGE };

typedef struct mk_entry {
    char name[160];
    int ndim, init;
    int64_t shape[4];
    double std;      /* > 0: this standard deviation instead of the default */
    double value;    /* MK_CONST */
} mk_entry;

typedef struct mk_list {
    mk_entry *e;
    int n, cap, failed;
    const char *prefix;
} mk_list;

static void mk_add(mk_list *L, int init, int ndim, const int64_t *shape, const char *fmt, ...) {
    va_list ap;
    mk_entry *e;
    int n;
    if (L->failed) return;
    if (L->n == L->cap) {
        int cap = L->cap ? 2 * L->cap : 256;
        mk_entry *ne = (mk_entry *)realloc(L->e, (size_t)cap * sizeof *ne);
        if (!ne) { L->failed = 1; return; }
        L->e = ne;
        L->cap = cap;
    }
    e = &L->e[L->n++];
    memset(e, 0, sizeof *e);
    n = snprintf(e->name, sizeof e->name, "%s", L->prefix);
    va_start(ap, fmt);
    vsnprintf(e->name + n, sizeof e->name - (size_t)n, fmt, ap);
    va_end(ap);
    e->init = init;
    e->ndim = ndim;
    for (int i = 0; i < ndim; i++) e->shape[i] = shape[i];
}

/* Sets the standard deviation of the tensor `name` (full name); returns 0
 * when there is none. */
static int mk_set_std(mk_list *L, const char *name, double std) {
    for (int i = 0; i < L->n; i++)
        if (!strcmp(L->e[i].name, name)) { L->e[i].std = std; return 1; }
    return 0;
}

#define MK_S(...) ((const int64_t[]){ __VA_ARGS__ })

static void mk_linear(mk_list *L, int64_t out, int64_t in, int bias, const char *base) {
    mk_add(L, MK_MATRIX, 2, MK_S(out, in), "%s.weight", base);
    if (bias) mk_add(L, MK_BIAS, 1, MK_S(out), "%s.bias", base);
}

static void mk_conv(mk_list *L, int64_t out, int64_t in, int64_t k, const char *base) {
    mk_add(L, MK_MATRIX, 4, MK_S(out, in, k, k), "%s.weight", base);
    mk_add(L, MK_BIAS, 1, MK_S(out), "%s.bias", base);
}

static void mk_norm(mk_list *L, int64_t c, const char *base) {
    mk_add(L, MK_NORM_SCALE, 1, MK_S(c), "%s.weight", base);
    mk_add(L, MK_BIAS, 1, MK_S(c), "%s.bias", base);
}

static void mk_resblock(mk_list *L, int64_t cin, int64_t cout, int64_t emb, const char *base) {
    char n[160];
    snprintf(n, sizeof n, "%s.in_layers.0", base);  mk_norm(L, cin, n);
    snprintf(n, sizeof n, "%s.in_layers.2", base);  mk_conv(L, cout, cin, 3, n);
    snprintf(n, sizeof n, "%s.emb_layers.1", base); mk_linear(L, cout, emb, 1, n);
    snprintf(n, sizeof n, "%s.out_layers.0", base); mk_norm(L, cout, n);
    snprintf(n, sizeof n, "%s.out_layers.3", base); mk_conv(L, cout, cout, 3, n);
    if (cin != cout) { snprintf(n, sizeof n, "%s.skip_connection", base); mk_conv(L, cout, cin, 1, n); }
}

static void mk_transformer(mk_list *L, const mk_unet_arch *a, int64_t c, int depth, const char *base) {
    char n[160];
    snprintf(n, sizeof n, "%s.norm", base);
    mk_norm(L, c, n);
    for (int io = 0; io < 2; io++) {
        snprintf(n, sizeof n, "%s.%s", base, io ? "proj_out" : "proj_in");
        if (a->linear_proj) mk_linear(L, c, c, 1, n);
        else mk_conv(L, c, c, 1, n);
        if (io) break;
        for (int d = 0; d < depth; d++) {
            static const char *const attn[2] = { "attn1", "attn2" };
            for (int k = 0; k < 2; k++) {
                int64_t kv_in = k ? a->context_dim : c;
                snprintf(n, sizeof n, "%s.transformer_blocks.%d.%s.to_q", base, d, attn[k]); mk_linear(L, c, c, 0, n);
                snprintf(n, sizeof n, "%s.transformer_blocks.%d.%s.to_k", base, d, attn[k]); mk_linear(L, c, kv_in, 0, n);
                snprintf(n, sizeof n, "%s.transformer_blocks.%d.%s.to_v", base, d, attn[k]); mk_linear(L, c, kv_in, 0, n);
                snprintf(n, sizeof n, "%s.transformer_blocks.%d.%s.to_out.0", base, d, attn[k]); mk_linear(L, c, c, 1, n);
            }
            snprintf(n, sizeof n, "%s.transformer_blocks.%d.ff.net.0.proj", base, d); mk_linear(L, 8 * c, c, 1, n);
            snprintf(n, sizeof n, "%s.transformer_blocks.%d.ff.net.2", base, d); mk_linear(L, c, 4 * c, 1, n);
            for (int k = 1; k <= 3; k++) {
                snprintf(n, sizeof n, "%s.transformer_blocks.%d.norm%d", base, d, k);
                mk_norm(L, c, n);
            }
        }
    }
}

/* The module numbering of LDM's UNetModel constructor: embeddings,
 * input_blocks and middle_block (a ControlNet has these too). Returns the
 * width at the bottom; skips[] gets the width of each input block. */
static int64_t mk_encoder_entries(mk_list *L, const mk_unet_arch *a, int64_t *skips, int *n_skips_out) {
    int64_t mc = a->model_channels, emb = 4 * mc, ch = mc;
    int n_skips = 0, idx = 1;
    char n[160];
    mk_linear(L, emb, mc, 1, "time_embed.0");
    mk_linear(L, emb, emb, 1, "time_embed.2");
    if (a->adm_channels > 0) {
        mk_linear(L, emb, a->adm_channels, 1, "label_emb.0.0");
        mk_linear(L, emb, emb, 1, "label_emb.0.2");
    }
    mk_conv(L, mc, a->in_channels, 3, "input_blocks.0.0");
    skips[n_skips++] = ch;
    for (int l = 0; l < a->n_levels; l++) {
        for (int r = 0; r < a->res[l]; r++, idx++) {
            snprintf(n, sizeof n, "input_blocks.%d.0", idx);
            mk_resblock(L, ch, a->mult[l] * mc, emb, n);
            ch = a->mult[l] * mc;
            if (a->depth[l] > 0) { snprintf(n, sizeof n, "input_blocks.%d.1", idx); mk_transformer(L, a, ch, a->depth[l], n); }
            if (n_skips < 64) skips[n_skips++] = ch;
        }
        if (l < a->n_levels - 1) {
            snprintf(n, sizeof n, "input_blocks.%d.0.op", idx++);
            mk_conv(L, ch, ch, 3, n);
            if (n_skips < 64) skips[n_skips++] = ch;
        }
    }
    if (a->depth_mid >= 0) mk_resblock(L, ch, ch, emb, "middle_block.0");
    if (a->depth_mid > 0) {
        mk_transformer(L, a, ch, a->depth_mid, "middle_block.1");
        mk_resblock(L, ch, ch, emb, "middle_block.2");
    }
    *n_skips_out = n_skips;
    return ch;
}

static void mk_unet_entries(mk_list *L, const mk_unet_arch *a) {
    int64_t mc = a->model_channels, emb = 4 * mc, ch, skips[64];
    int n_skips, idx = 0;
    char n[160];
    ch = mk_encoder_entries(L, a, skips, &n_skips);
    for (int l = a->n_levels - 1; l >= 0; l--) {
        for (int r = 0; r <= a->res[l]; r++, idx++) {
            int m = 1;
            int64_t skip = n_skips > 0 ? skips[--n_skips] : 0;
            snprintf(n, sizeof n, "output_blocks.%d.0", idx);
            mk_resblock(L, ch + skip, a->mult[l] * mc, emb, n);
            ch = a->mult[l] * mc;
            if (a->depth[l] > 0) { snprintf(n, sizeof n, "output_blocks.%d.1", idx); mk_transformer(L, a, ch, a->depth[l], n); m = 2; }
            if (l > 0 && r == a->res[l]) { snprintf(n, sizeof n, "output_blocks.%d.%d.conv", idx, m); mk_conv(L, ch, ch, 3, n); }
        }
    }
    mk_norm(L, ch, "out.0");
    mk_conv(L, a->out_channels, ch, 3, "out.2");
}

/* ---- writing -------------------------------------------------------------- */

static uint64_t mk_next(uint64_t *s) {   /* xorshift64* */
    uint64_t x = *s;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static int64_t mk_numel(const mk_entry *e) {
    int64_t n = 1;
    for (int i = 0; i < e->ndim; i++) n *= e->shape[i];
    return n;
}

static void mk_fill(const mk_entry *e, uint64_t seed, int64_t first, float *v, int64_t n) {
    /* uniform on [-sqrt(3) s, sqrt(3) s] has standard deviation s */
    double s = e->std > 0 ? e->std : e->init == MK_MATRIX ? 1.0 / sqrt((double)(mk_numel(e) / e->shape[0])) : 0.1;
    double off = e->init == MK_NORM_SCALE ? 1.0 : 0.0;
    uint64_t st = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    for (int i = 0; i < 4; i++) mk_next(&st);
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(mk_next(&st) >> 11) * (1.0 / 9007199254740992.0);
        v[i] = e->init == MK_CONST ? (float)e->value : e->init == MK_ARANGE ? (float)(first + i)
             : (float)(off + (2.0 * u - 1.0) * 1.7320508075688772 * s);
    }
}

static const char *mk_dtype_name(sdx_dtype t) { return t == SDX_F32 ? "F32" : t == SDX_BF16 ? "BF16" : "F16"; }
static int mk_entry_dtype(const mk_entry *e, sdx_dtype t) { return e->init == MK_ARANGE ? -1 : (int)t; }   /* -1: I64 */
static uint64_t mk_entry_bytes(const mk_entry *e, sdx_dtype t) {
    return (uint64_t)mk_numel(e) * (mk_entry_dtype(e, t) < 0 ? 8u : t == SDX_F32 ? 4u : 2u);
}

/* Bytes the list takes in a file of weight dtype t (data, not header). */
MK_MAYBE_UNUSED static uint64_t mk_list_bytes(const mk_list *L, sdx_dtype t) {
    uint64_t b = 0;
    for (int i = 0; i < L->n; i++) b += mk_entry_bytes(&L->e[i], t);
    return b;
}

/* Free bytes on the file system that will hold path; -1 when unknown. */
static double mk_free_bytes(const char *path) {
#ifdef MK_HAVE_STATVFS
    char dir[4096];
    const char *slash = strrchr(path, '/');
    struct statvfs vfs;
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (statvfs(dir, &vfs) == 0) return (double)vfs.f_bavail * (double)vfs.f_frsize;
#else
    (void)path;
#endif
    return -1;
}

/* "name DTYPE [shape]" per tensor, then the total (sdx-mkckpt --list). */
MK_MAYBE_UNUSED static void mk_print_list(FILE *f, const mk_list *L, sdx_dtype t) {
    int64_t params = 0;
    for (int i = 0; i < L->n; i++) {
        const mk_entry *e = &L->e[i];
        fprintf(f, "%s %s [", e->name, mk_entry_dtype(e, t) < 0 ? "I64" : mk_dtype_name(t));
        for (int d = 0; d < e->ndim; d++) fprintf(f, d ? ", %lld" : "%lld", (long long)e->shape[d]);
        fprintf(f, "]\n");
        if (e->init != MK_ARANGE) params += mk_numel(e);
    }
    fprintf(f, "# %d tensors, %lld parameters, %.3f GB of data\n", L->n, (long long)params, (double)mk_list_bytes(L, t) / 1e9);
}

/* Writes the list as a safetensors file with weights of dtype t (F32, F16
 * or BF16). Returns 1, or 0 with a message in err (and no file left). */
static int mk_write_list_as(const mk_list *L, const char *path, sdx_dtype t, uint64_t seed, char *err, size_t errsize) {
    size_t hcap = (size_t)L->n * 256 + 256, hlen = 0, chunk = (size_t)1 << 20;
    char *hdr = (char *)malloc(hcap);
    float *buf = (float *)malloc(chunk * sizeof(float));
    uint16_t *half = (uint16_t *)malloc(chunk * sizeof(uint16_t));
    int64_t *ints = (int64_t *)malloc(chunk * sizeof(int64_t));
    uint64_t off = 0, hsize, total = mk_list_bytes(L, t);
    double avail = mk_free_bytes(path);
    FILE *f = NULL;
    int ok = 0;
    if (!hdr || !buf || !half || !ints) { snprintf(err, errsize, "out of memory"); goto done; }
    if (avail >= 0 && avail < (double)total + 16e6) {
        snprintf(err, errsize, "%s: needs %.2f GB, only %.2f GB free there", path, (double)total / 1e9, avail / 1e9);
        goto done;
    }
    hlen += (size_t)snprintf(hdr + hlen, hcap - hlen, "{\"__metadata__\":{\"format\":\"pt\",\"generator\":\"sdx-mkckpt\"}");
    for (int i = 0; i < L->n; i++) {
        const mk_entry *e = &L->e[i];
        uint64_t bytes = mk_entry_bytes(e, t);
        hlen += (size_t)snprintf(hdr + hlen, hcap - hlen, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", e->name,
                                 mk_entry_dtype(e, t) < 0 ? "I64" : mk_dtype_name(t));
        for (int d = 0; d < e->ndim; d++) hlen += (size_t)snprintf(hdr + hlen, hcap - hlen, d ? ",%lld" : "%lld", (long long)e->shape[d]);
        hlen += (size_t)snprintf(hdr + hlen, hcap - hlen, "],\"data_offsets\":[%llu,%llu]}",
                                 (unsigned long long)off, (unsigned long long)(off + bytes));
        off += bytes;
    }
    hlen += (size_t)snprintf(hdr + hlen, hcap - hlen, "}");
    while (hlen % 8) hdr[hlen++] = ' ';   /* data section 8-byte aligned */
    if (!(f = fopen(path, "wb"))) { snprintf(err, errsize, "%s: cannot create", path); goto done; }
    hsize = hlen;
    {
        unsigned char le[8];
        for (int i = 0; i < 8; i++) le[i] = (unsigned char)(hsize >> (8 * i));
        if (fwrite(le, 1, 8, f) != 8 || fwrite(hdr, 1, hlen, f) != hlen) { snprintf(err, errsize, "%s: write failed", path); goto done; }
    }
    for (int i = 0; i < L->n; i++) {
        const mk_entry *e = &L->e[i];
        int64_t n = mk_numel(e);
        /* a seed per (tensor, chunk): the values do not depend on the order of writing */
        for (int64_t p = 0; p < n; p += (int64_t)chunk) {
            size_t m = (size_t)(n - p < (int64_t)chunk ? n - p : (int64_t)chunk), wrote;
            mk_fill(e, (seed * 1000003u + (uint64_t)i) * 65537u + (uint64_t)(p / (int64_t)chunk), p, buf, (int64_t)m);
            if (mk_entry_dtype(e, t) < 0) {       /* little-endian int64, as safetensors stores it */
                for (size_t k = 0; k < m; k++) {
                    uint64_t v = (uint64_t)(int64_t)buf[k];
                    unsigned char *b = (unsigned char *)&ints[k];
                    for (int j = 0; j < 8; j++) b[j] = (unsigned char)(v >> (8 * j));
                }
                wrote = fwrite(ints, 8, m, f);
            } else if (t == SDX_F16) {
                sdx_f32_to_f16_n(buf, half, m);
                wrote = fwrite(half, 2, m, f);
            } else if (t == SDX_BF16) {
                sdx_f32_to_bf16_n(buf, half, m);
                wrote = fwrite(half, 2, m, f);
            } else {
                wrote = fwrite(buf, 4, m, f);
            }
            if (wrote != m) { snprintf(err, errsize, "%s: write failed (disk full?)", path); goto done; }
        }
    }
    ok = 1;
done:
    if (f && fclose(f) != 0 && ok) { snprintf(err, errsize, "%s: close failed (disk full?)", path); ok = 0; }
    if (!ok && f) remove(path);
    free(hdr);
    free(buf);
    free(half);
    free(ints);
    return ok;
}

MK_MAYBE_UNUSED static int mk_write_list(const mk_list *L, const char *path, int f16, uint64_t seed, char *err, size_t errsize) {
    return mk_write_list_as(L, path, f16 ? SDX_F16 : SDX_F32, seed, err, errsize);
}

/* A ControlNet for the UNet `a`, as released (control_model.*): the
 * encoder, the hint block (3 -> 16 -> 16 -> 32/2 -> 32 -> 96/2 -> 96 ->
 * 256/2 -> model_channels), a 1x1 zero conv per input block and after the
 * middle block. The "zero" convs are random here, so the control acts. */
static void mk_controlnet_entries(mk_list *L, const mk_unet_arch *a) {
    static const int widths[8] = { 16, 16, 32, 32, 96, 96, 256, 0 };
    int64_t skips[64], ch, cin = 3;
    int n_skips;
    char n[160];
    ch = mk_encoder_entries(L, a, skips, &n_skips);
    for (int k = 0; k < 8; k++) {
        int64_t co = k == 7 ? a->model_channels : widths[k];
        snprintf(n, sizeof n, "input_hint_block.%d", 2 * k);
        mk_conv(L, co, cin, 3, n);
        cin = co;
    }
    for (int i = 0; i < n_skips; i++) {
        snprintf(n, sizeof n, "zero_convs.%d.0", i);
        mk_conv(L, skips[i], skips[i], 1, n);
    }
    mk_conv(L, ch, ch, 1, "middle_block_out.0");
}

static int mk_check_arch(const mk_unet_arch *a, char *err, size_t errsize) {
    if (a->n_levels < 1 || a->n_levels > MK_MAX_LEVELS || a->model_channels < 1 || a->model_channels % 32) {
        snprintf(err, errsize, "need 1..%d levels and model_channels a multiple of 32 (GroupNorm 32)", MK_MAX_LEVELS);
        return 0;
    }
    return 1;
}

/* Writes the ControlNet for `a` to path. Returns 1, or 0 with a message in err. */
MK_MAYBE_UNUSED static int mk_write_controlnet(const char *path, const mk_unet_arch *a, int f16, uint64_t seed, char *err, size_t errsize) {
    mk_list L;
    int ok;
    memset(&L, 0, sizeof L);
    if (!mk_check_arch(a, err, errsize)) return 0;
    L.prefix = "control_model.";
    mk_controlnet_entries(&L, a);
    ok = !L.failed && mk_write_list(&L, path, f16, seed, err, errsize);
    if (L.failed) snprintf(err, errsize, "out of memory");
    free(L.e);
    return ok;
}

/* Writes the UNet of `a` to path. Returns 1, or 0 with a message in err. */
MK_MAYBE_UNUSED static int mk_write_unet(const char *path, const mk_unet_arch *a, int f16, uint64_t seed, char *err, size_t errsize) {
    mk_list L;
    int ok;
    memset(&L, 0, sizeof L);
    if (!mk_check_arch(a, err, errsize)) return 0;
    L.prefix = "model.diffusion_model.";
    mk_unet_entries(&L, a);
    ok = !L.failed && mk_write_list(&L, path, f16, seed, err, errsize);
    if (L.failed) snprintf(err, errsize, "out of memory");
    free(L.e);
    return ok;
}

/* ---- decoders -------------------------------------------------------------- */

static void mk_vae_res(mk_list *L, int64_t cin, int64_t cout, const char *base) {
    char n[160];
    snprintf(n, sizeof n, "%s.norm1", base); mk_norm(L, cin, n);
    snprintf(n, sizeof n, "%s.conv1", base); mk_conv(L, cout, cin, 3, n);
    snprintf(n, sizeof n, "%s.norm2", base); mk_norm(L, cout, n);
    snprintf(n, sizeof n, "%s.conv2", base); mk_conv(L, cout, cout, 3, n);
    if (cin != cout) { snprintf(n, sizeof n, "%s.nin_shortcut", base); mk_conv(L, cout, cin, 1, n); }
}

/* The SD 1.x/2.x/SDXL KL-VAE (LDM names): base width ch0 (128) times mult
 * (1,2,4,4) per level, 2 ResBlocks per level (+1 on the decoder side), mid
 * attention, z 4. The encoder side (encoder.*, quant_conv) only when
 * `encoder`. */
static const int mk_vae_mult[4] = { 1, 2, 4, 4 };
static void mk_vae_entries(mk_list *L, int64_t ch0, const int *mult, int encoder) {
    int64_t ch = ch0 * mult[3];
    char n[160];
    if (encoder) {
        int64_t c = ch0;
        mk_conv(L, ch0, 3, 3, "encoder.conv_in");
        for (int l = 0; l < 4; l++) {
            for (int b = 0; b < 2; b++) {
                snprintf(n, sizeof n, "encoder.down.%d.block.%d", l, b);
                mk_vae_res(L, c, ch0 * mult[l], n);
                c = ch0 * mult[l];
            }
            if (l < 3) { snprintf(n, sizeof n, "encoder.down.%d.downsample.conv", l); mk_conv(L, c, c, 3, n); }
        }
        mk_vae_res(L, c, c, "encoder.mid.block_1");
        mk_norm(L, c, "encoder.mid.attn_1.norm");
        mk_conv(L, c, c, 1, "encoder.mid.attn_1.q");
        mk_conv(L, c, c, 1, "encoder.mid.attn_1.k");
        mk_conv(L, c, c, 1, "encoder.mid.attn_1.v");
        mk_conv(L, c, c, 1, "encoder.mid.attn_1.proj_out");
        mk_vae_res(L, c, c, "encoder.mid.block_2");
        mk_norm(L, c, "encoder.norm_out");
        mk_conv(L, 8, c, 3, "encoder.conv_out");
        mk_conv(L, 8, 8, 1, "quant_conv");
    }
    mk_conv(L, 4, 4, 1, "post_quant_conv");
    mk_conv(L, ch, 4, 3, "decoder.conv_in");
    mk_vae_res(L, ch, ch, "decoder.mid.block_1");
    mk_norm(L, ch, "decoder.mid.attn_1.norm");
    mk_conv(L, ch, ch, 1, "decoder.mid.attn_1.q");
    mk_conv(L, ch, ch, 1, "decoder.mid.attn_1.k");
    mk_conv(L, ch, ch, 1, "decoder.mid.attn_1.v");
    mk_conv(L, ch, ch, 1, "decoder.mid.attn_1.proj_out");
    mk_vae_res(L, ch, ch, "decoder.mid.block_2");
    for (int l = 3; l >= 0; l--) {
        int64_t c = ch0 * mult[l];
        for (int b = 0; b < 3; b++) {
            snprintf(n, sizeof n, "decoder.up.%d.block.%d", l, b);
            mk_vae_res(L, b ? c : ch, c, n);
        }
        ch = c;
        if (l > 0) { snprintf(n, sizeof n, "decoder.up.%d.upsample.conv", l); mk_conv(L, c, c, 3, n); }
    }
    mk_norm(L, ch, "decoder.norm_out");
    mk_conv(L, 3, ch, 3, "decoder.conv_out");
}

/* The full-size SD VAE decoder alone (standalone VAE file names). */
MK_MAYBE_UNUSED static int mk_write_vae_decoder(const char *path, int f16, uint64_t seed, char *err, size_t errsize) {
    mk_list L;
    int ok;
    memset(&L, 0, sizeof L);
    L.prefix = "";
    mk_vae_entries(&L, 128, mk_vae_mult, 0);
    ok = !L.failed && mk_write_list(&L, path, f16, seed, err, errsize);
    if (L.failed) snprintf(err, errsize, "out of memory");
    free(L.e);
    return ok;
}

/* TAESD's decoder as released (taesd_decoder.safetensors key names). */
MK_MAYBE_UNUSED static int mk_write_taesd_decoder(const char *path, int f16, uint64_t seed, char *err, size_t errsize) {
    mk_list L;
    char n[160];
    int ok;
    memset(&L, 0, sizeof L);
    L.prefix = "";
    mk_conv(&L, 64, 4, 3, "1");
    for (int i = 3; i <= 18; i++) {
        if (i == 6 || i == 11 || i == 16) continue;                     /* upsamples */
        if (i == 7 || i == 12 || i == 17) { mk_add(&L, MK_MATRIX, 4, MK_S(64, 64, 3, 3), "%d.weight", i); continue; }
        for (int k = 0; k < 3; k++) { snprintf(n, sizeof n, "%d.conv.%d", i, 2 * k); mk_conv(&L, 64, 64, 3, n); }
    }
    mk_conv(&L, 3, 64, 3, "19");
    ok = !L.failed && mk_write_list(&L, path, f16, seed, err, errsize);
    if (L.failed) snprintf(err, errsize, "out of memory");
    free(L.e);
    return ok;
}

/* ---- whole checkpoints ------------------------------------------------------ */

/* CLIP ViT-L's text model in transformers' names (SD 1.x, SDXL's first
 * encoder): heads = width / 64, MLP 4 x width, 77 positions. */
static void mk_clip_entries(mk_list *L, int64_t w, int layers, int position_ids) {
    char n[160];
    mk_add(L, MK_MATRIX, 2, MK_S(49408, w), "embeddings.token_embedding.weight");
    mk_add(L, MK_MATRIX, 2, MK_S(77, w), "embeddings.position_embedding.weight");
    if (position_ids) mk_add(L, MK_ARANGE, 2, MK_S(1, 77), "embeddings.position_ids");
    for (int i = 0; i < layers; i++) {
        static const char *const proj[4] = { "q_proj", "k_proj", "v_proj", "out_proj" };
        snprintf(n, sizeof n, "encoder.layers.%d.layer_norm1", i); mk_norm(L, w, n);
        for (int k = 0; k < 4; k++) { snprintf(n, sizeof n, "encoder.layers.%d.self_attn.%s", i, proj[k]); mk_linear(L, w, w, 1, n); }
        snprintf(n, sizeof n, "encoder.layers.%d.layer_norm2", i); mk_norm(L, w, n);
        snprintf(n, sizeof n, "encoder.layers.%d.mlp.fc1", i); mk_linear(L, 4 * w, w, 1, n);
        snprintf(n, sizeof n, "encoder.layers.%d.mlp.fc2", i); mk_linear(L, w, 4 * w, 1, n);
    }
    mk_norm(L, w, "final_layer_norm");
}

/* OpenCLIP's text tower (SD 2.x ViT-H, SDXL's bigG): fused q/k/v, a square
 * text_projection and the logit scale (ln 100) the released files keep. */
static void mk_openclip_entries(mk_list *L, int64_t w, int layers) {
    char n[160];
    mk_add(L, MK_MATRIX, 2, MK_S(49408, w), "token_embedding.weight");
    mk_add(L, MK_MATRIX, 2, MK_S(77, w), "positional_embedding");
    for (int i = 0; i < layers; i++) {
        snprintf(n, sizeof n, "transformer.resblocks.%d.ln_1", i); mk_norm(L, w, n);
        mk_add(L, MK_MATRIX, 2, MK_S(3 * w, w), "transformer.resblocks.%d.attn.in_proj_weight", i);
        mk_add(L, MK_BIAS, 1, MK_S(3 * w), "transformer.resblocks.%d.attn.in_proj_bias", i);
        snprintf(n, sizeof n, "transformer.resblocks.%d.attn.out_proj", i); mk_linear(L, w, w, 1, n);
        snprintf(n, sizeof n, "transformer.resblocks.%d.ln_2", i); mk_norm(L, w, n);
        snprintf(n, sizeof n, "transformer.resblocks.%d.mlp.c_fc", i); mk_linear(L, 4 * w, w, 1, n);
        snprintf(n, sizeof n, "transformer.resblocks.%d.mlp.c_proj", i); mk_linear(L, w, 4 * w, 1, n);
    }
    mk_norm(L, w, "ln_final");
    mk_add(L, MK_MATRIX, 2, MK_S(w, w), "text_projection");
    mk_add(L, MK_CONST, 0, NULL, "logit_scale");
    if (!L->failed) L->e[L->n - 1].value = 4.605170185988091;
}

enum { MK_SD15, MK_SD21, MK_SDXL, MK_SDXL_REFINER };

/* A whole checkpoint: its family, UNet, text encoder widths and depths,
 * VAE widths. */
typedef struct mk_ckpt {
    int family;
    mk_unet_arch unet;
    int clip_width, clip_layers;     /* CLIP ViT-L; 0 = none */
    int open_width, open_layers;     /* OpenCLIP text tower; 0 = none */
    int vae_ch, vae_mult[4];
    int v_pred;                      /* SD 2.x: v-prediction (see mk_ckpt_entries) */
} mk_ckpt;

/* w / div rounded to a multiple of unit, at least unit. */
static int mk_shrink(int w, int div, int unit) {
    int r = (int)((double)w / div / unit + 0.5) * unit;
    return r < unit ? unit : r;
}

/* The UNet's text widths from the encoders': the context is theirs side
 * by side; SDXL's vector is the pooled bigG output, then six 256-wide
 * size embeddings (the refiner's five: the aesthetic score for the target
 * size). */
static void mk_ckpt_text_dims(mk_ckpt *c) {
    c->unet.context_dim = c->clip_width + c->open_width;
    if (c->family == MK_SDXL) c->unet.adm_channels = c->open_width + 6 * 256;
    if (c->family == MK_SDXL_REFINER) c->unet.adm_channels = c->open_width + 5 * 256;
}

/* The released architecture of "sd15", "sd21", "sdxl" or "sdxl-refiner",
 * every width divided by `shrink` (1 = full size) and rounded to what the
 * model needs: GroupNorm's 32 groups, SD 1.x's 8 heads, head_dim 64 for
 * the text encoders and for SD 2.x/SDXL attention. Depths stay. Returns 0
 * on an unknown name. */
MK_MAYBE_UNUSED static int mk_ckpt_preset(const char *name, int shrink, mk_ckpt *c) {
    memset(c, 0, sizeof *c);
    if (shrink < 1 || !mk_unet_preset(name, &c->unet)) return 0;
    c->family = !strcmp(name, "sd15") ? MK_SD15 : !strcmp(name, "sd21") ? MK_SD21 : !strcmp(name, "sdxl") ? MK_SDXL : MK_SDXL_REFINER;
    c->unet.model_channels = mk_shrink(c->unet.model_channels, shrink, c->family == MK_SD15 ? 32 : 64);
    c->vae_ch = mk_shrink(128, shrink, 32);
    memcpy(c->vae_mult, mk_vae_mult, sizeof c->vae_mult);
    if (c->family == MK_SD15 || c->family == MK_SDXL) c->clip_width = mk_shrink(768, shrink, 64), c->clip_layers = 12;
    if (c->family == MK_SD21) c->open_width = mk_shrink(1024, shrink, 64), c->open_layers = 24;
    if (c->family >= MK_SDXL) c->open_width = mk_shrink(1280, shrink, 64), c->open_layers = 32;
    mk_ckpt_text_dims(c);
    return 1;
}

/* The scale of the tiny golden checkpoints (shared/golden/{sd1,sd2,sdxl}/
 * config.json): text encoders of 4 layers, CLIP-L 64 and OpenCLIP 128
 * wide, a VAE of width 32 times 1, 2, 2, 2, and their small UNets. The
 * refiner, which has no golden checkpoint, comes at the tiny SDXL's scale
 * with a UNet shaped as the released one's (384 wide, 1.2 times the base;
 * levels 1, 2, 4, 4 with transformer depths 0, 4, 4, 0, 4 in the middle):
 * 32 wide (1.2 x 32 in GroupNorm's steps of 32), depths 0, 1, 1, 0 and 1.
 * Returns 0 on an unknown name. */
MK_MAYBE_UNUSED static int mk_ckpt_tiny(const char *name, mk_ckpt *c) {
    if (!mk_ckpt_preset(name, 1, c)) return 0;
    c->vae_ch = 32;
    c->vae_mult[2] = c->vae_mult[3] = 2;
    c->clip_layers = c->open_layers = 4;
    if (c->clip_width) c->clip_width = 64;
    if (c->open_width) c->open_width = 128;
    if (c->family == MK_SD15) {
        c->unet.model_channels = 32;
        c->unet.mult[2] = c->unet.mult[3] = 2;
    } else if (c->family == MK_SD21) {
        c->unet.model_channels = 64;
        c->unet.mult[1] = 1; c->unet.mult[2] = c->unet.mult[3] = 2;
    } else if (c->family == MK_SDXL) {
        c->unet.model_channels = 32;
        c->unet.depth[1] = 1; c->unet.depth[2] = 2; c->unet.depth_mid = 2;
    } else {
        c->unet.model_channels = 32;
        c->unet.depth[1] = c->unet.depth[2] = 1; c->unet.depth_mid = 1;
    }
    mk_ckpt_text_dims(c);
    return 1;
}

/* The tensor list of a whole checkpoint, with the released key prefixes. */
static void mk_ckpt_entries(mk_list *L, const mk_ckpt *c) {
    if (c->family == MK_SD15) {
        L->prefix = "cond_stage_model.transformer.text_model.";
        mk_clip_entries(L, c->clip_width, c->clip_layers, 1);
    } else if (c->family == MK_SD21) {
        L->prefix = "cond_stage_model.model.";
        mk_openclip_entries(L, c->open_width, c->open_layers);
    } else if (c->family == MK_SDXL) {
        L->prefix = "conditioner.embedders.0.transformer.text_model.";
        mk_clip_entries(L, c->clip_width, c->clip_layers, 0);
        L->prefix = "conditioner.embedders.1.model.";
        mk_openclip_entries(L, c->open_width, c->open_layers);
    } else {
        L->prefix = "conditioner.embedders.0.model.";
        mk_openclip_entries(L, c->open_width, c->open_layers);
    }
    L->prefix = "model.diffusion_model.";
    mk_unet_entries(L, &c->unet);
    L->prefix = "first_stage_model.";
    mk_vae_entries(L, c->vae_ch, c->vae_mult, 1);
    /* pixels with standard deviation ~0.6 around 0: an image, not a clipped one */
    if (!L->failed) mk_set_std(L, "first_stage_model.decoder.conv_out.weight", 0.6 / sqrt(9.0 * c->vae_ch));
    /* SD 2.x files do not say whether they predict v or eps; ComfyUI (and
     * sdx, without metadata) tell them apart by the spread of this bias:
     * standard deviation above 0.09 means v (768-v was trained longer). */
    if (c->family == MK_SD21 && !L->failed)
        mk_set_std(L, "model.diffusion_model.output_blocks.11.1.transformer_blocks.0.norm1.bias", c->v_pred ? 0.15 : 0.05);
}

/* Writes the whole checkpoint c with weights of dtype t. Returns 1, or 0
 * with a message in err. */
MK_MAYBE_UNUSED static int mk_write_ckpt(const char *path, const mk_ckpt *c, sdx_dtype t, uint64_t seed, char *err, size_t errsize) {
    mk_list L;
    int ok;
    memset(&L, 0, sizeof L);
    if (!mk_check_arch(&c->unet, err, errsize)) return 0;
    mk_ckpt_entries(&L, c);
    ok = !L.failed && mk_write_list_as(&L, path, t, seed, err, errsize);
    if (L.failed) snprintf(err, errsize, "out of memory");
    free(L.e);
    return ok;
}

#ifndef SDX_MKCKPT_NO_MAIN

static int mk_parse_list(const char *s, int *out, int max) {
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s) return -1;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

static void mk_usage(void) {
    fprintf(stderr,
        "usage: sdx-mkckpt [options] -o out.safetensors   (or --list)\n"
        "  --preset sd15|sd21|sdxl|sdxl-refiner   a whole checkpoint of that family: text encoder(s), UNet, VAE\n"
        "                            (default: sd15)\n"
        "  --preset vae-decoder      the SD VAE decoder alone (standalone VAE file)\n"
        "  --preset taesd-decoder    TAESD's decoder (taesd_decoder layout)\n"
        "  --shrink N                divide every width by N (tests; depths stay; default 1 = full size)\n"
        "  --tiny                    the scale of the tiny golden checkpoints (shared/golden), instead of --shrink\n"
        "  --prediction eps|v        SD 2.x: what ComfyUI's and sdx's heuristic will read (default eps)\n"
        "  --f16 | --bf16 | --f32    weight dtype (default f16)\n"
        "  --seed N                  random seed (default 1)\n"
        "  --list                    print the keys, dtypes and shapes; write nothing\n"
        "  --unet-only               the preset's UNet alone (model.diffusion_model.*), shaped by:\n"
        "  --controlnet              a ControlNet for that UNet (control_model.*) instead\n"
        "    --model-channels N        base width (multiple of 32)\n"
        "    --mult a,b,...            channel multiplier per level (sets the level count)\n"
        "    --res N | a,b,...         ResBlocks per level\n"
        "    --depth a,b,...           transformer depth per level (0 = no attention)\n"
        "    --depth-mid N             middle block: -1 none, 0 ResBlock only, N transformer depth\n"
        "    --context-dim N           cross-attention context width\n"
        "    --linear 0|1              Linear (SD 2.x/SDXL) or 1x1-conv (SD 1.x) proj_in/proj_out\n"
        "    --adm N                   label_emb input width (SDXL 2816; 0 = none)\n"
        "    --in N / --out N          latent channels in / out (inpainting: --in 9)\n");
}

/* The UNet architecture options; returns 0 when `o` is not one, -1 on a bad value. */
static int mk_arch_option(const char *o, const char *v, mk_unet_arch *a) {
    int list[MK_MAX_LEVELS], n, nl;
    if (!strcmp(o, "--model-channels")) a->model_channels = atoi(v);
    else if (!strcmp(o, "--mult")) {
        if ((nl = mk_parse_list(v, a->mult, MK_MAX_LEVELS)) < 1) return -1;
        for (int l = a->n_levels; l < nl; l++) a->res[l] = a->res[0], a->depth[l] = 0;
        a->n_levels = nl;
    } else if (!strcmp(o, "--res")) {
        if ((n = mk_parse_list(v, list, MK_MAX_LEVELS)) < 1) return -1;
        for (int l = 0; l < MK_MAX_LEVELS; l++) a->res[l] = list[n == 1 ? 0 : (l < n ? l : n - 1)];
    } else if (!strcmp(o, "--depth")) {
        if ((n = mk_parse_list(v, list, MK_MAX_LEVELS)) < 1) return -1;
        for (int l = 0; l < MK_MAX_LEVELS; l++) a->depth[l] = l < n ? list[l] : 0;
    } else if (!strcmp(o, "--depth-mid")) a->depth_mid = atoi(v);
    else if (!strcmp(o, "--context-dim")) a->context_dim = atoi(v);
    else if (!strcmp(o, "--linear")) a->linear_proj = atoi(v) != 0;
    else if (!strcmp(o, "--adm")) a->adm_channels = atoi(v);
    else if (!strcmp(o, "--in")) a->in_channels = atoi(v);
    else if (!strcmp(o, "--out")) a->out_channels = atoi(v);
    else return 0;
    return 1;
}

int main(int argc, char **argv) {
    mk_unet_arch a;
    mk_ckpt ck;
    mk_list L;
    const char *out = NULL, *preset = "sd15", *arch_flag = NULL;
    int unet_only = 0, controlnet = 0, list = 0, shrink = 1, tiny = 0, v_pred = 0, ok;
    sdx_dtype dtype = SDX_F16;
    unsigned long long seed = 1;
    char err[512];
    mk_unet_preset("sd15", &a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int r;
        if (!strcmp(o, "--f16")) { dtype = SDX_F16; continue; }
        if (!strcmp(o, "--f32")) { dtype = SDX_F32; continue; }
        if (!strcmp(o, "--bf16")) { dtype = SDX_BF16; continue; }
        if (!strcmp(o, "--controlnet")) { controlnet = 1; continue; }
        if (!strcmp(o, "--unet-only")) { unet_only = 1; continue; }
        if (!strcmp(o, "--list")) { list = 1; continue; }
        if (!strcmp(o, "--tiny")) { tiny = 1; continue; }
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) { mk_usage(); return 0; }
        if (!v) { fprintf(stderr, "sdx-mkckpt: %s needs a value\n", o); mk_usage(); return 2; }
        i++;
        if (!strcmp(o, "-o")) out = v;
        else if (!strcmp(o, "--preset")) {
            preset = v;
            if (strcmp(v, "vae-decoder") && strcmp(v, "taesd-decoder") && !mk_unet_preset(v, &a)) {
                fprintf(stderr, "sdx-mkckpt: unknown preset '%s' (sd15, sd21, sdxl, sdxl-refiner, vae-decoder, taesd-decoder)\n", v);
                return 2;
            }
        } else if (!strcmp(o, "--shrink")) {
            if ((shrink = atoi(v)) < 1) { fprintf(stderr, "sdx-mkckpt: --shrink %s: need an integer >= 1\n", v); return 2; }
        } else if (!strcmp(o, "--prediction")) {
            if (strcmp(v, "eps") && strcmp(v, "v")) { fprintf(stderr, "sdx-mkckpt: --prediction %s: eps or v\n", v); return 2; }
            v_pred = !strcmp(v, "v");
        } else if (!strcmp(o, "--seed")) seed = strtoull(v, NULL, 10);
        else if ((r = mk_arch_option(o, v, &a)) != 0) {
            if (r < 0) { fprintf(stderr, "sdx-mkckpt: %s %s: a comma-separated list of integers\n", o, v); return 2; }
            arch_flag = o;
        } else { fprintf(stderr, "sdx-mkckpt: unknown option %s\n", o); mk_usage(); return 2; }
    }
    if (!out && !list) { mk_usage(); return 2; }
    if (arch_flag && !unet_only && !controlnet) {
        fprintf(stderr, "sdx-mkckpt: %s shapes a UNet alone: add --unet-only (or --controlnet); a whole checkpoint "
                "takes its widths from --preset and --shrink\n", arch_flag);
        return 2;
    }
    if (tiny && (shrink != 1 || unet_only || controlnet || !mk_ckpt_tiny(preset, &ck))) {
        fprintf(stderr, "sdx-mkckpt: --tiny sizes a whole checkpoint of a family preset, instead of --shrink\n");
        return 2;
    }
    if (v_pred && strcmp(preset, "sd21")) {
        fprintf(stderr, "sdx-mkckpt: --prediction v: only SD 2.x (--preset sd21) checkpoints are told apart that way\n");
        return 2;
    }
    memset(&L, 0, sizeof L);
    if (!strcmp(preset, "vae-decoder")) {
        L.prefix = "";
        mk_vae_entries(&L, 128, mk_vae_mult, 0);
    } else if (!strcmp(preset, "taesd-decoder")) {
        if (list) { fprintf(stderr, "sdx-mkckpt: --list is not available for taesd-decoder\n"); return 2; }
        ok = mk_write_taesd_decoder(out, dtype != SDX_F32, (uint64_t)seed, err, sizeof err);
        if (!ok) fprintf(stderr, "sdx-mkckpt: %s\n", err);
        return ok ? 0 : 1;
    } else if (unet_only || controlnet) {
        if (!mk_check_arch(&a, err, sizeof err)) { fprintf(stderr, "sdx-mkckpt: %s\n", err); return 2; }
        L.prefix = controlnet ? "control_model." : "model.diffusion_model.";
        if (controlnet) mk_controlnet_entries(&L, &a);
        else mk_unet_entries(&L, &a);
    } else {
        if (tiny) mk_ckpt_tiny(preset, &ck);
        else mk_ckpt_preset(preset, shrink, &ck);
        ck.v_pred = v_pred;
        mk_ckpt_entries(&L, &ck);
    }
    if (L.failed) { fprintf(stderr, "sdx-mkckpt: out of memory\n"); free(L.e); return 1; }
    if (list) mk_print_list(stdout, &L, dtype);
    ok = list || mk_write_list_as(&L, out, dtype, (uint64_t)seed, err, sizeof err);
    if (!ok) fprintf(stderr, "sdx-mkckpt: %s\n", err);
    else if (!list) printf("sdx-mkckpt: wrote %s (%d tensors, %.2f GB)\n", out, L.n, (double)mk_list_bytes(&L, dtype) / 1e9);
    free(L.e);
    return ok ? 0 : 1;
}
#endif
#endif /* SDX_MKCKPT_C */

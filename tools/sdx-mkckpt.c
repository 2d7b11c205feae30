/* sdx-mkckpt: writes a single-file checkpoint with random weights, with the
 * key names and shapes of real LDM/SGM checkpoints (model.diffusion_model.*),
 * for tests and benchmarks of architectures nobody ships tiny versions of.
 *
 *   cc -std=c11 -O2 -o sdx-mkckpt tools/sdx-mkckpt.c -lm -lpthread
 *   sdx-mkckpt --preset sdxl --f16 -o /tmp/sdxl-random.safetensors
 *   sdx-mkckpt --model-channels 32 --mult 1,2 --res 1 --depth 0,2 --depth-mid 1 \
 *              --context-dim 48 --linear 1 -o /tmp/custom.safetensors
 *
 * Tensors are streamed to the file one at a time, so a 5 GB SDXL needs a
 * few MB of memory. Only the UNet is written, or with --controlnet a
 * ControlNet for it. Weights: matrices and convs
 * uniform with variance 1/fan_in, biases and norm offsets variance 0.01,
 * norm scales 1 + that: activations stay O(1) through any depth.
 *
 * Compiled with SDX_MKCKPT_NO_MAIN, the file is a library for tests and
 * benchmarks (mk_unet_preset, mk_write_unet, mk_write_controlnet, and
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
    return 0;
}

/* ---- tensor list ---------------------------------------------------------- */

enum { MK_MATRIX, MK_BIAS, MK_NORM_SCALE };

typedef struct mk_entry {
    char name[160];
    int ndim, init;
    int64_t shape[4];
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

static void mk_fill(const mk_entry *e, uint64_t seed, float *v, int64_t n) {
    /* uniform on [-sqrt(3) s, sqrt(3) s] has standard deviation s */
    double s = e->init == MK_MATRIX ? 1.0 / sqrt((double)(n / e->shape[0])) : 0.1;
    double off = e->init == MK_NORM_SCALE ? 1.0 : 0.0;
    uint64_t st = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    for (int i = 0; i < 4; i++) mk_next(&st);
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(mk_next(&st) >> 11) * (1.0 / 9007199254740992.0);
        v[i] = (float)(off + (2.0 * u - 1.0) * 1.7320508075688772 * s);
    }
}

static int mk_write_list(const mk_list *L, const char *path, int f16, uint64_t seed, char *err, size_t errsize) {
    size_t hcap = (size_t)L->n * 256 + 256, hlen = 0, chunk = (size_t)1 << 20;
    char *hdr = (char *)malloc(hcap);
    float *buf = (float *)malloc(chunk * sizeof(float));
    uint16_t *half = (uint16_t *)malloc(chunk * sizeof(uint16_t));
    uint64_t off = 0, hsize;
    FILE *f = NULL;
    int ok = 0;
    if (!hdr || !buf || !half) { snprintf(err, errsize, "out of memory"); goto done; }
    hlen += (size_t)snprintf(hdr + hlen, hcap - hlen, "{\"__metadata__\":{\"format\":\"pt\",\"generator\":\"sdx-mkckpt\"}");
    for (int i = 0; i < L->n; i++) {
        const mk_entry *e = &L->e[i];
        uint64_t bytes = (uint64_t)mk_numel(e) * (f16 ? 2u : 4u);
        hlen += (size_t)snprintf(hdr + hlen, hcap - hlen, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", e->name, f16 ? "F16" : "F32");
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
            size_t m = (size_t)(n - p < (int64_t)chunk ? n - p : (int64_t)chunk);
            mk_fill(e, (seed * 1000003u + (uint64_t)i) * 65537u + (uint64_t)(p / (int64_t)chunk), buf, (int64_t)m);
            if (f16) {
                sdx_f32_to_f16_n(buf, half, m);
                if (fwrite(half, 2, m, f) != m) { snprintf(err, errsize, "%s: write failed (disk full?)", path); goto done; }
            } else if (fwrite(buf, 4, m, f) != m) {
                snprintf(err, errsize, "%s: write failed (disk full?)", path);
                goto done;
            }
        }
    }
    ok = 1;
done:
    if (f && fclose(f) != 0 && ok) { snprintf(err, errsize, "%s: close failed", path); ok = 0; }
    if (!ok && f) remove(path);
    free(hdr);
    free(buf);
    free(half);
    return ok;
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

/* The SD 1.x/2.x/SDXL KL-VAE decoder (LDM names, standalone file): ch 128,
 * mult 1,2,4,4, 2 ResBlocks (+1 on the decoder side), mid attention. */
MK_MAYBE_UNUSED static int mk_write_vae_decoder(const char *path, int f16, uint64_t seed, char *err, size_t errsize) {
    static const int mult[4] = { 1, 2, 4, 4 };
    mk_list L;
    int64_t ch = 512;
    char n[160];
    int ok;
    memset(&L, 0, sizeof L);
    L.prefix = "";
    mk_conv(&L, 4, 4, 1, "post_quant_conv");
    mk_conv(&L, ch, 4, 3, "decoder.conv_in");
    mk_vae_res(&L, ch, ch, "decoder.mid.block_1");
    mk_norm(&L, ch, "decoder.mid.attn_1.norm");
    mk_conv(&L, ch, ch, 1, "decoder.mid.attn_1.q");
    mk_conv(&L, ch, ch, 1, "decoder.mid.attn_1.k");
    mk_conv(&L, ch, ch, 1, "decoder.mid.attn_1.v");
    mk_conv(&L, ch, ch, 1, "decoder.mid.attn_1.proj_out");
    mk_vae_res(&L, ch, ch, "decoder.mid.block_2");
    for (int l = 3; l >= 0; l--) {
        int64_t c = 128 * mult[l];
        for (int b = 0; b < 3; b++) {
            snprintf(n, sizeof n, "decoder.up.%d.block.%d", l, b);
            mk_vae_res(&L, b ? c : ch, c, n);
        }
        ch = c;
        if (l > 0) { snprintf(n, sizeof n, "decoder.up.%d.upsample.conv", l); mk_conv(&L, c, c, 3, n); }
    }
    mk_norm(&L, ch, "decoder.norm_out");
    mk_conv(&L, 3, ch, 3, "decoder.conv_out");
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
        "usage: sdx-mkckpt [options] -o out.safetensors\n"
        "  --preset sd15|sd21|sdxl   start from a real architecture (default: sd15)\n"
        "  --preset vae-decoder      the SD VAE decoder instead of a UNet (standalone VAE file)\n"
        "  --preset taesd-decoder    TAESD's decoder instead of a UNet (taesd_decoder layout)\n"
        "  --model-channels N        base width (multiple of 32)\n"
        "  --mult a,b,...            channel multiplier per level (sets the level count)\n"
        "  --res N | a,b,...         ResBlocks per level\n"
        "  --depth a,b,...           transformer depth per level (0 = no attention)\n"
        "  --depth-mid N             middle block: -1 none, 0 ResBlock only, N transformer depth\n"
        "  --context-dim N           cross-attention context width\n"
        "  --linear 0|1              Linear (SD 2.x/SDXL) or 1x1-conv (SD 1.x) proj_in/proj_out\n"
        "  --adm N                   label_emb input width (SDXL 2816; 0 = none)\n"
        "  --in N / --out N          latent channels in / out (inpainting: --in 9)\n"
        "  --f16 | --f32             weight dtype (default f16)\n"
        "  --controlnet              write a ControlNet for that UNet (control_model.*) instead\n"
        "  --seed N                  random seed (default 1)\n");
}

int main(int argc, char **argv) {
    mk_unet_arch a;
    const char *out = NULL, *part = "unet";
    int f16 = 1, nl, controlnet = 0;
    unsigned long long seed = 1;
    char err[256];
    mk_unet_preset("sd15", &a);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--f16")) { f16 = 1; continue; }
        if (!strcmp(o, "--f32")) { f16 = 0; continue; }
        if (!strcmp(o, "--controlnet")) { controlnet = 1; continue; }
        if (!v) { mk_usage(); return 2; }
        i++;
        if (!strcmp(o, "-o")) out = v;
        else if (!strcmp(o, "--preset") && (!strcmp(v, "vae-decoder") || !strcmp(v, "taesd-decoder"))) part = v;
        else if (!strcmp(o, "--preset")) { if (!mk_unet_preset(v, &a)) { fprintf(stderr, "unknown preset '%s'\n", v); return 2; } }
        else if (!strcmp(o, "--model-channels")) a.model_channels = atoi(v);
        else if (!strcmp(o, "--mult")) {
            if ((nl = mk_parse_list(v, a.mult, MK_MAX_LEVELS)) < 1) { mk_usage(); return 2; }
            for (int l = a.n_levels; l < nl; l++) a.res[l] = a.res[0], a.depth[l] = 0;
            a.n_levels = nl;
        } else if (!strcmp(o, "--res")) {
            int r[MK_MAX_LEVELS], n = mk_parse_list(v, r, MK_MAX_LEVELS);
            if (n < 1) { mk_usage(); return 2; }
            for (int l = 0; l < MK_MAX_LEVELS; l++) a.res[l] = r[n == 1 ? 0 : (l < n ? l : n - 1)];
        } else if (!strcmp(o, "--depth")) {
            int d[MK_MAX_LEVELS], n = mk_parse_list(v, d, MK_MAX_LEVELS);
            if (n < 1) { mk_usage(); return 2; }
            for (int l = 0; l < MK_MAX_LEVELS; l++) a.depth[l] = l < n ? d[l] : 0;
        } else if (!strcmp(o, "--depth-mid")) a.depth_mid = atoi(v);
        else if (!strcmp(o, "--context-dim")) a.context_dim = atoi(v);
        else if (!strcmp(o, "--linear")) a.linear_proj = atoi(v) != 0;
        else if (!strcmp(o, "--adm")) a.adm_channels = atoi(v);
        else if (!strcmp(o, "--in")) a.in_channels = atoi(v);
        else if (!strcmp(o, "--out")) a.out_channels = atoi(v);
        else if (!strcmp(o, "--seed")) seed = strtoull(v, NULL, 10);
        else { mk_usage(); return 2; }
    }
    if (!out) { mk_usage(); return 2; }
    if (!(!strcmp(part, "vae-decoder")     ? mk_write_vae_decoder(out, f16, (uint64_t)seed, err, sizeof err)
          : !strcmp(part, "taesd-decoder") ? mk_write_taesd_decoder(out, f16, (uint64_t)seed, err, sizeof err)
          : controlnet                     ? mk_write_controlnet(out, &a, f16, (uint64_t)seed, err, sizeof err)
                                           : mk_write_unet(out, &a, f16, (uint64_t)seed, err, sizeof err))) {
        fprintf(stderr, "sdx-mkckpt: %s\n", err);
        return 1;
    }
    return 0;
}
#endif
#endif /* SDX_MKCKPT_C */

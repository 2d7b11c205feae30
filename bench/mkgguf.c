/* A quick GGUF writer for the memory and speed figures of quantized
 * checkpoints: reads a safetensors checkpoint (tools/sdx-mkckpt makes
 * full-size random ones) and writes a GGUF v3 file the way sd-cli's
 * `-M convert --type q8_0|q4_0` does: a tensor is quantized when its rows
 * (last dim) are whole blocks of 32 and its name does not end in .bias,
 * .scale or .weight_scale nor contain time_embed., label_emb. or
 * embedding; the others keep their dtype, and tensors that are not
 * f32/f16/bf16 (position_ids) are left out. No metadata, alignment 32.
 * Blocks follow ggml's reference quantizers (q8_0: d = amax / 127, q =
 * round(x / d); q4_0: d = -max / 8 over the value of largest magnitude,
 * q = min(15, (int)(x / d + 8.5))). A bench tool, not the converter
 * (`-M convert`): it checks little and writes what it is given.
 *
 *   bench/mkgguf q8_0|q4_0 in.safetensors out.gguf
 */
#define _DEFAULT_SOURCE 1
#define SDX_IMPLEMENTATION
#include "../sdx.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MG_F32 = 0, MG_F16 = 1, MG_Q4_0 = 2, MG_Q8_0 = 8, MG_BF16 = 30 };

static int mg_ends(const char *s, const char *tail) {
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

/* Whether sd-cli would quantize this tensor. */
static int mg_quantizes(const sdx_tensor *t) {
    const char *n = t->name;
    if (t->ndim < 1 || t->shape[t->ndim - 1] % 32) return 0;
    if (mg_ends(n, ".bias") || mg_ends(n, ".scale") || mg_ends(n, ".weight_scale")) return 0;
    return !strstr(n, "time_embed.") && !strstr(n, "label_emb.") && !strstr(n, "embedding");
}

static int mg_float(const sdx_tensor *t) { return t->dtype == SDX_F32 || t->dtype == SDX_F16 || t->dtype == SDX_BF16; }

static void mg_put(FILE *f, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; i++) fputc((int)((v >> (8 * i)) & 255), f);
}

static void mg_pad(FILE *f, size_t *at) {
    while (*at % 32) { fputc(0, f); (*at)++; }
}

static void mg_q8_0(const float *x, unsigned char *b) {
    float amax = 0, d, id;
    uint16_t h;
    for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
    d = amax / 127.0f;
    id = d != 0.0f ? 1.0f / d : 0.0f;
    h = sdx_f32_to_f16(d);
    b[0] = (unsigned char)h; b[1] = (unsigned char)(h >> 8);
    for (int j = 0; j < 32; j++) b[2 + j] = (unsigned char)(signed char)roundf(x[j] * id);
}

static void mg_q4_0(const float *x, unsigned char *b) {
    float amax = 0, max = 0, d, id;
    uint16_t h;
    for (int j = 0; j < 32; j++)
        if (amax < fabsf(x[j])) { amax = fabsf(x[j]); max = x[j]; }
    d = max / -8.0f;
    id = d != 0.0f ? 1.0f / d : 0.0f;
    h = sdx_f32_to_f16(d);
    b[0] = (unsigned char)h; b[1] = (unsigned char)(h >> 8);
    for (int j = 0; j < 16; j++) {
        int lo = (int)(signed char)(x[j] * id + 8.5f), hi = (int)(signed char)(x[16 + j] * id + 8.5f);
        b[2 + j] = (unsigned char)((lo < 15 ? lo : 15) | (hi < 15 ? hi : 15) << 4);
    }
}

int main(int argc, char **argv) {
    sdx_ctx *ctx;
    sdx_st *st;
    FILE *f;
    int q4, n, kept = 0, type;
    size_t at = 0, offset = 0, bytes, block_bytes;
    if (argc != 4 || (strcmp(argv[1], "q8_0") && strcmp(argv[1], "q4_0"))) {
        fprintf(stderr, "usage: mkgguf q8_0|q4_0 in.safetensors out.gguf\n");
        return 2;
    }
    q4 = !strcmp(argv[1], "q4_0");
    block_bytes = q4 ? 18 : 34;
    ctx = sdx_create(NULL);
    if (!ctx || sdx_st_open(ctx, argv[2], &st) != SDX_OK) { fprintf(stderr, "mkgguf: %s\n", ctx ? sdx_last_error(ctx) : "no context"); return 1; }
    if (!(f = fopen(argv[3], "wb"))) { perror(argv[3]); return 1; }
    n = sdx_st_count(st);
    for (int i = 0; i < n; i++) kept += mg_float(sdx_st_get(st, i));
    fwrite("GGUF", 1, 4, f);
    mg_put(f, 3, 4);
    mg_put(f, (uint64_t)kept, 8);
    mg_put(f, 0, 8);
    at = 24;
    for (int i = 0; i < n; i++) {        /* tensor infos */
        const sdx_tensor *t = sdx_st_get(st, i);
        size_t len = strlen(t->name);
        int64_t numel = sdx_tensor_numel(t);
        if (!mg_float(t)) continue;
        if (mg_quantizes(t)) type = q4 ? MG_Q4_0 : MG_Q8_0, bytes = (size_t)numel / 32 * block_bytes;
        else type = t->dtype == SDX_F32 ? MG_F32 : t->dtype == SDX_F16 ? MG_F16 : MG_BF16, bytes = sdx_tensor_nbytes(t);
        mg_put(f, len, 8);
        fwrite(t->name, 1, len, f);
        mg_put(f, (uint64_t)t->ndim, 4);
        for (int d = t->ndim - 1; d >= 0; d--) mg_put(f, (uint64_t)t->shape[d], 8);
        mg_put(f, (uint64_t)type, 4);
        mg_put(f, offset, 8);
        at += 8 + len + 4 + 8 * (size_t)t->ndim + 4 + 8;
        offset = (offset + bytes + 31) / 32 * 32;
    }
    mg_pad(f, &at);
    for (int i = 0; i < n; i++) {        /* data, row block by row block */
        const sdx_tensor *t = sdx_st_get(st, i);
        int64_t numel = sdx_tensor_numel(t);
        if (!mg_float(t)) continue;
        if (mg_quantizes(t)) {
            float x[32];
            unsigned char b[34];
            for (int64_t j = 0; j < numel; j += 32) {
                for (int k = 0; k < 32; k++) {
                    float v;
                    const void *p = t->data;
                    if (t->dtype == SDX_F32) v = ((const float *)p)[j + k];
                    else if (t->dtype == SDX_F16) v = sdx_f16_to_f32(((const uint16_t *)p)[j + k]);
                    else v = sdx_bf16_to_f32(((const uint16_t *)p)[j + k]);
                    x[k] = v;
                }
                if (q4) mg_q4_0(x, b); else mg_q8_0(x, b);
                fwrite(b, 1, block_bytes, f);
                at += block_bytes;
            }
        } else {
            fwrite(t->data, 1, sdx_tensor_nbytes(t), f);
            at += sdx_tensor_nbytes(t);
        }
        mg_pad(f, &at);
    }
    if (fclose(f)) { perror(argv[3]); return 1; }
    printf("%s: %d tensors, %.1f MiB\n", argv[3], kept, (double)at / 1048576.0);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return 0;
}

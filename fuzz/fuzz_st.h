/* Shared by the harnesses of the files sdx_st_open reads (safetensors and
 * GGUF): the checks on an opened table beyond its tensors. */
#ifndef SDX_FUZZ_ST_H
#define SDX_FUZZ_ST_H
#include "fuzz.h"

/* What every opened tensor satisfies, whichever the format (a GGUF image
 * reaches the safetensors harness too: sdx_st_open_memory goes by the
 * magic): a name it is found by, a shape whose bytes do not overflow and
 * are whole blocks, elements aligned (block types only lie in whole
 * blocks), inside the image or in an aligned copy, first and last byte
 * readable, and, up to 1 MiB, a conversion to f32 of as many values.
 * Returns the tensor; *bytes and *block its size and block. */
static const sdx_tensor *fz_check_tensor_bytes(sdx_ctx *ctx, const sdx_st *st, int i, const uint8_t *data, size_t size,
                                               size_t *bytes, int *block) {
    const sdx_tensor *t = sdx_st_get(st, i);
    size_t unit;
    const uint8_t *p;
    FZ_ASSERT(t && t->name && t->name[0], "tensor %d has no name", i);
    FZ_ASSERT(sdx_st_find(st, t->name) == t, "tensor '%s' is not found by its own name", t->name);
    FZ_ASSERT(t->ndim >= 0 && t->ndim <= SDX_MAX_DIMS, "tensor '%s': ndim %d", t->name, t->ndim);
    FZ_ASSERT(sdx__shape_bytes(t->dtype, t->ndim, t->shape, bytes), "tensor '%s': shape overflows or rows are not whole blocks",
              t->name);
    FZ_ASSERT(*bytes == sdx_tensor_nbytes(t), "tensor '%s': nbytes disagrees", t->name);
    *block = sdx_dtype_block(t->dtype, &unit);
    FZ_ASSERT(*block >= 1, "tensor '%s': unknown dtype %d", t->name, (int)t->dtype);
    p = (const uint8_t *)t->data;
    if (*block == 1) FZ_ASSERT(((uintptr_t)p & (unit - 1)) == 0, "tensor '%s' is misaligned", t->name);
    if (p >= data && p < data + size) FZ_ASSERT(*bytes <= (size_t)(data + size - p), "tensor '%s' runs past the image", t->name);
    if (*bytes) {
        fz_touch(p, 1);
        fz_touch(p + *bytes - 1, 1);
    }
    if (*bytes <= (1u << 20)) {
        sdx_tensor f;
        int rc = sdx_st_read_f32(ctx, st, t->name, &f);
        fz_require_message(ctx, rc, "sdx_st_read_f32");
        if (rc == SDX_OK) {
            FZ_ASSERT(sdx_tensor_numel(&f) == sdx_tensor_numel(t), "tensor '%s': f32 copy has another size", t->name);
            sdx_tensor_free(ctx, &f);
        }
    }
    return t;
}

/* Metadata readable and found by key, indexes bounded, no empty name,
 * the NaN/Inf scan consistent with its count. */
static void fz_check_table(sdx_ctx *ctx, const sdx_st *st) {
    int bad = -1, rc;
    for (int i = 0; i < sdx_st_meta_count(st); i++) {
        const char *k = NULL, *v = NULL;
        FZ_ASSERT(sdx_st_meta_at(st, i, &k, &v) == SDX_OK && k && v, "metadata %d", i);
        fz_touch(k, strlen(k) + 1);
        fz_touch(v, strlen(v) + 1);
        FZ_ASSERT(sdx_st_meta(st, k) != NULL, "metadata key '%s' not found", k);
    }
    FZ_ASSERT(sdx_st_get(st, -1) == NULL && sdx_st_get(st, sdx_st_count(st)) == NULL, "index bounds");
    FZ_ASSERT(sdx_st_find(st, "") == NULL, "empty name found");
    rc = sdx_st_scan_nonfinite(ctx, st, &bad);
    FZ_ASSERT((rc == SDX_OK && bad == 0) || (rc == SDX_ERR_NONFINITE && bad > 0 && bad <= sdx_st_count(st)),
              "scan returned %d with %d bad tensors", rc, bad);
    if (rc != SDX_OK) fz_require_message(ctx, rc, "sdx_st_scan_nonfinite");
}

#endif

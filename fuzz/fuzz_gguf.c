/* Fuzzes the GGUF reader (core/gguf.c through sdx_st_open_memory): the
 * input is a whole file image whose first four bytes are made "GGUF", so
 * every input reaches the GGUF parser. Every accepted file must describe
 * tensors that lie inside the image (or in an aligned copy) with whole
 * blocks per row, be findable by name, dequantize to f32, and load into a
 * weight slot (quantized matrices as views of their blocks, other
 * quantized tensors as f16). */
#include "fuzz_st.h"

static void fz_check_tensor(sdx_ctx *ctx, const sdx_st *st, int i, const uint8_t *data, size_t size) {
    size_t bytes;
    int block;
    const sdx_tensor *t = fz_check_tensor_bytes(ctx, st, i, data, size, &bytes, &block);
    FZ_ASSERT(t->ndim <= 4, "tensor '%s': ndim %d", t->name, t->ndim);
    if (bytes <= (1u << 20) && t->dtype != SDX_F64 && t->dtype != SDX_I32 && t->dtype != SDX_I64) {
        sdx__wset w;                               /* the policy's type, or the file's */
        const sdx_tensor *c;
        sdx__shape want = sdx__s_any();
        sdx__wset_init(&w, ctx, st, "", SDX__PART_UNET, block > 1 ? SDX_AUTO : t->dtype == SDX_F16 ? SDX_BF16 : SDX_F16);
        want.ndim = t->ndim;
        for (int d = 0; d < t->ndim; d++) want.d[d] = t->shape[d];
        c = sdx__wget(&w, want, "%s", t->name);
        FZ_ASSERT(c || strlen(t->name) >= 500, "weight set lost tensor '%s': %s", t->name, sdx_last_error(ctx));
        if (c) FZ_ASSERT(sdx_tensor_numel(c) == sdx_tensor_numel(t), "loaded tensor '%s' has another size", t->name);
        /* the CPU's linear and conv2d multiply blocks: a quantized matrix or
         * 4-D filter stays a view of the file */
        if (c && block > 1 && (t->ndim == 2 || t->ndim == 4))
            FZ_ASSERT(c->dtype == t->dtype && c->data == t->data, "quantized matrix '%s' was not kept in its blocks (%s)", t->name, sdx_dtype_name(c->dtype));
        else if (c) FZ_ASSERT(sdx_dtype_size(c->dtype) == 2, "loaded tensor '%s' has dtype %s", t->name, sdx_dtype_name(c->dtype));
        sdx__wset_free(&w);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sdx_ctx *ctx = fz_ctx();
    sdx_st *st = NULL;
    uint8_t *img;
    int rc;
    if (!ctx) return 0;
    img = (uint8_t *)malloc(size ? size : 1);      /* exactly the input's size, so ASan sees an overread */
    if (!img) { sdx_destroy(ctx); return 0; }
    if (size) memcpy(img, data, size);
    if (size >= 4) memcpy(img, "GGUF", 4);
    rc = sdx_st_open_memory(ctx, img, size, "fuzz.gguf", &st);
    fz_require_message(ctx, rc, "sdx_st_open_memory");
    FZ_ASSERT((rc == SDX_OK) == (st != NULL), "result %d but handle %p", rc, (void *)st);
    if (st) {
        for (int i = 0; i < sdx_st_count(st); i++) fz_check_tensor(ctx, st, i, img, size);
        fz_check_table(ctx, st);
        sdx_st_close(st);
    }
    free(img);
    sdx_destroy(ctx);
    return 0;
}

/* Fuzzes the safetensors reader: the input is a whole file image. Every
 * accepted file must describe tensors that lie inside the image (or in an
 * aligned copy), be findable by name, and convert to f32. */
#include "fuzz_st.h"

static void fz_check_tensor(sdx_ctx *ctx, const sdx_st *st, int i, const uint8_t *data, size_t size) {
    size_t bytes;
    int block;
    const sdx_tensor *t = fz_check_tensor_bytes(ctx, st, i, data, size, &bytes, &block);
    if (bytes <= (1u << 20) && (t->dtype == SDX_F32 || t->dtype == SDX_F16 || t->dtype == SDX_BF16)) {
        sdx__wset w;                               /* a forced weight type converts at load */
        const sdx_tensor *c;
        sdx__shape want;
        sdx__wset_init(&w, ctx, st, "", SDX__PART_UNET, t->dtype == SDX_F16 ? SDX_BF16 : SDX_F16);
        want = sdx__s_any();                       /* the file's own shape where it fits */
        if (t->ndim <= 4) {
            want.ndim = t->ndim;
            for (int d = 0; d < t->ndim; d++) want.d[d] = t->shape[d];
        }
        c = sdx__wget(&w, want, "%s", t->name);
        FZ_ASSERT(c || strlen(t->name) >= 500, "weight set lost tensor '%s': %s", t->name, sdx_last_error(ctx));
        if (c) FZ_ASSERT(sdx_tensor_numel(c) == sdx_tensor_numel(t), "converted tensor '%s' has another size", t->name);
        sdx__wset_free(&w);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sdx_ctx *ctx = fz_ctx();
    sdx_st *st = NULL;
    int rc;
    if (!ctx) return 0;
    rc = sdx_st_open_memory(ctx, data, size, "fuzz.safetensors", &st);
    fz_require_message(ctx, rc, "sdx_st_open_memory");
    FZ_ASSERT((rc == SDX_OK) == (st != NULL), "result %d but handle %p", rc, (void *)st);
    if (st) {
        for (int i = 0; i < sdx_st_count(st); i++) fz_check_tensor(ctx, st, i, data, size);
        fz_check_table(ctx, st);
        sdx_st_close(st);
    }
    sdx_destroy(ctx);
    return 0;
}

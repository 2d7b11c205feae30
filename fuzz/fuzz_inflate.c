/* Fuzzes the DEFLATE/gzip decoder (src/inflate.c) that reads vocabulary
 * .gz files. Output must respect the limit and be NUL-terminated. Built
 * with -DFZ_ZLIB (fuzz/run.sh does this when zlib is installed), raw
 * DEFLATE inputs are also checked against zlib: whatever zlib decodes
 * within the limit, sdx__inflate must decode to the same bytes. (zlib is
 * stricter about incomplete Huffman codes, so the converse is not
 * required.) */
#include "fuzz.h"
#ifdef FZ_ZLIB
#include <zlib.h>
#endif

#define FZ_MAX_OUT ((size_t)1 << 20)

#ifdef FZ_ZLIB
/* zlib's answer for a raw DEFLATE stream: 1 and the bytes if it decodes
 * to a final block within FZ_MAX_OUT, 0 otherwise. */
static int fz_zlib_raw(const uint8_t *src, size_t n, uint8_t *out, size_t *out_len) {
    z_stream z;
    int rc;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK) return 0;
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)FZ_MAX_OUT;
    rc = inflate(&z, Z_FINISH);
    *out_len = z.total_out;
    inflateEnd(&z);
    return rc == Z_STREAM_END;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    sdx_ctx *ctx = fz_ctx();
    uint8_t *out = NULL;
    size_t out_len = 0;
    int rc;
    if (!ctx) return 0;
    rc = sdx__inflate(ctx, data, size, &out, &out_len, FZ_MAX_OUT);
    fz_require_message(ctx, rc, "sdx__inflate");
    if (rc == SDX_OK) {
        FZ_ASSERT(out && out_len <= FZ_MAX_OUT && out[out_len] == 0, "output of %zu bytes breaks the contract", out_len);
        fz_touch(out, out_len + 1);
    } else {
        FZ_ASSERT(!out && !out_len, "failure returned output");
    }
#ifdef FZ_ZLIB
    if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b)) {
        static uint8_t ref[FZ_MAX_OUT];
        size_t ref_len = 0;
        if (fz_zlib_raw(data, size, ref, &ref_len)) {
            FZ_ASSERT(rc == SDX_OK, "zlib decodes %zu bytes, sdx__inflate fails: %s", ref_len, sdx_last_error(ctx));
            FZ_ASSERT(out_len == ref_len && !memcmp(out, ref, ref_len), "output differs from zlib (%zu vs %zu bytes)", out_len, ref_len);
        }
    }
#endif
    sdx__free(ctx, out);
    sdx_destroy(ctx);
    return 0;
}

/* Shared by the harnesses of the files sdx_st_open reads (safetensors and
 * GGUF): the checks on an opened table beyond its tensors. */
#ifndef SDX_FUZZ_ST_H
#define SDX_FUZZ_ST_H
#include "fuzz.h"

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

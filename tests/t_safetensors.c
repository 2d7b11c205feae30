/* Suite "safetensors": reading, writing and strict validation. */
#include "test.h"

/* Builds a file image: 8-byte little-endian length, header, data. */
static size_t st_image(unsigned char *out, size_t cap, const char *header, const void *data, size_t data_len) {
    size_t h = strlen(header);
    if (8 + h + data_len > cap) return 0;
    for (int i = 0; i < 8; i++) out[i] = (unsigned char)((uint64_t)h >> (8 * i));
    memcpy(out + 8, header, h);
    if (data_len) memcpy(out + 8 + h, data, data_len);
    return 8 + h + data_len;
}

/* Opens an image from memory; returns the result code, message in msg. */
static int st_try(const char *header, size_t data_len, char *msg, size_t msg_size) {
    static unsigned char img[1 << 16];
    unsigned char data[4096];
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    size_t n;
    int rc;
    for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i * 7);
    n = st_image(img, sizeof img, header, data, data_len);
    rc = sdx_st_open_memory(ctx, img, n, "case.safetensors", &st);
    snprintf(msg, msg_size, "%s", sdx_last_error(ctx));
    sdx_st_close(st);
    sdx_destroy(ctx);
    return rc;
}

typedef struct { const char *what, *header; size_t data_len; const char *expect; } st_bad_case;

static const st_bad_case st_bad[] = {
    { "header is not JSON", "{\"a\":", 0, "invalid JSON" },
    { "header is an array", "[]", 0, "not a JSON object" },
    { "unknown dtype", "{\"w\":{\"dtype\":\"F8_E4M3\",\"shape\":[2],\"data_offsets\":[0,2]}}", 2, "unsupported dtype 'F8_E4M3'" },
    { "shape does not match span", "{\"w\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 8, "needs 12 bytes" },
    { "span outside data", "{\"w\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", 8, "outside the data section" },
    { "overlapping spans", "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 12, "overlap" },
    { "duplicate names", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 8, "appears twice" },
    { "offsets end before begin", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,4]}}", 8, "end before they begin" },
    { "negative dimension", "{\"w\":{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}}", 4, "not a non-negative integer" },
    { "shape product overflows", "{\"w\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16],\"data_offsets\":[0,4]}}", 4, "overflows" },
    { "gap between spans", "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}", 12, "gap" },
    { "trailing bytes after the data", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 12, "trailing" },
    { "non-UTF-8 tensor name", "{\"\xff\xfe\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "UTF-8" },
    { "missing data_offsets", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", 4, "data_offsets" },
    { "metadata value not a string", "{\"__metadata__\":{\"k\":1}}", 0, "not a string" },
    { "fractional shape", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1.5],\"data_offsets\":[0,4]}}", 4, "not a non-negative integer" },
    { "too many dimensions", "{\"w\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,4]}}", 4, "dimensions" },
    { "empty tensor name", "{\"\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 4, "empty" },
    { "trailing garbage after JSON", "{} x", 0, "trailing characters" },
    { "metadata name with a NUL byte", "{\"__metadata__\\u0000x\":{\"k\":\"v\"}}", 0, "NUL byte" },
};

static int malformed_headers_are_rejected_with_a_reason(void) {
    char msg[1024];
    for (int i = 0; i < (int)(sizeof st_bad / sizeof st_bad[0]); i++) {
        int rc = st_try(st_bad[i].header, st_bad[i].data_len, msg, sizeof msg);
        T_CHECK(rc == SDX_ERR_FORMAT, "case '%s': expected SDX_ERR_FORMAT, got %d (%s)", st_bad[i].what, rc, msg);
        T_CHECK(strstr(msg, st_bad[i].expect) != NULL, "case '%s': message '%s' lacks '%s'", st_bad[i].what, msg, st_bad[i].expect);
        T_CHECK(strstr(msg, "case.safetensors") != NULL, "case '%s': message '%s' does not name the file", st_bad[i].what, msg);
    }
    return T_PASS;
}

static int truncated_files_are_rejected(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    unsigned char img[64];
    int rc;
    rc = sdx_st_open_memory(ctx, img, 0, "empty.safetensors", &st);
    T_CHECK(rc == SDX_ERR_FORMAT && strstr(sdx_last_error(ctx), "too short"), "empty: %d %s", rc, sdx_last_error(ctx));
    rc = sdx_st_open_memory(ctx, img, 5, "short.safetensors", &st);
    T_CHECK(rc == SDX_ERR_FORMAT && strstr(sdx_last_error(ctx), "too short"), "short: %d %s", rc, sdx_last_error(ctx));
    memset(img, 0, sizeof img);
    img[0] = 100;                      /* header says 100 bytes, file has 56 */
    rc = sdx_st_open_memory(ctx, img, sizeof img, "cut.safetensors", &st);
    T_CHECK(rc == SDX_ERR_FORMAT && strstr(sdx_last_error(ctx), "past the end"), "cut: %d %s", rc, sdx_last_error(ctx));
    memset(img, 0xff, 8);              /* absurd header length */
    rc = sdx_st_open_memory(ctx, img, sizeof img, "huge.safetensors", &st);
    T_CHECK(rc == SDX_ERR_FORMAT && strstr(sdx_last_error(ctx), "exceeds"), "huge: %d %s", rc, sdx_last_error(ctx));
    T_CHECK(st == NULL, "no handle on failure");
    sdx_destroy(ctx);
    return T_PASS;
}

static int deeply_nested_json_is_rejected_without_recursion(void) {
    static char header[200000];
    char msg[1024];
    int n = 0, rc;
    header[n++] = '{';
    memcpy(header + n, "\"a\":", 4); n += 4;
    for (int i = 0; i < 50000; i++) header[n++] = '[';
    header[n] = 0;
    rc = st_try(header, 0, msg, sizeof msg);
    T_CHECK(rc == SDX_ERR_FORMAT && strstr(msg, "nesting too deep"), "rc %d: %s", rc, msg);
    return T_PASS;
}

static int directories_and_missing_files_are_io_errors(void) {
    sdx_ctx *ctx = t_ctx();
    sdx_st *st = NULL;
    int rc = sdx_st_open(ctx, t_tmp_dir(), &st);
    T_CHECK(rc == SDX_ERR_IO && strstr(sdx_last_error(ctx), "not a regular file"), "dir: %d %s", rc, sdx_last_error(ctx));
    rc = sdx_st_open(ctx, "/nonexistent/model.safetensors", &st);
    T_CHECK(rc == SDX_ERR_IO && strstr(sdx_last_error(ctx), "/nonexistent/model.safetensors"), "missing: %d %s", rc, sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

static int write_then_read_round_trips_tensors_and_metadata(void) {
    sdx_ctx *ctx = t_ctx();
    const char *path = t_tmp("sdx_t_roundtrip.safetensors");
    float a[6] = { 1, -2, 3.5f, 1e-8f, -0.0f, 65504 };
    uint16_t b[3] = { 0x3c00, 0xc000, 0x7bff };
    int64_t ids[2] = { 49406, -7 };
    sdx_tensor ts[3];
    const char *meta[4] = { "format", "pt", "note", "quote \" and \\ kept" };
    sdx_st *st;
    const sdx_tensor *t;
    memset(ts, 0, sizeof ts);
    ts[0].dtype = SDX_F32; ts[0].ndim = 2; ts[0].shape[0] = 2; ts[0].shape[1] = 3; ts[0].data = a; ts[0].name = "w.a";
    ts[1].dtype = SDX_F16; ts[1].ndim = 1; ts[1].shape[0] = 3; ts[1].data = b; ts[1].name = "w.b";
    ts[2].dtype = SDX_I64; ts[2].ndim = 1; ts[2].shape[0] = 2; ts[2].data = ids; ts[2].name = "ids";
    T_CHECK(sdx_st_write(ctx, path, ts, 3, meta, 2) == SDX_OK, "write: %s", sdx_last_error(ctx));
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "open: %s", sdx_last_error(ctx));
    T_CHECK(sdx_st_count(st) == 3, "count %d", sdx_st_count(st));
    t = sdx_st_find(st, "w.a");
    T_CHECK(t && t->dtype == SDX_F32 && t->ndim == 2 && t->shape[1] == 3 && !memcmp(t->data, a, sizeof a), "w.a differs");
    t = sdx_st_find(st, "w.b");
    T_CHECK(t && t->dtype == SDX_F16 && !memcmp(t->data, b, sizeof b), "w.b differs");
    t = sdx_st_find(st, "ids");
    T_CHECK(t && t->dtype == SDX_I64 && !memcmp(t->data, ids, sizeof ids), "ids differ");
    T_CHECK(sdx_st_find(st, "nope") == NULL, "lookup of a missing name");
    T_CHECK(sdx_st_meta(st, "format") && !strcmp(sdx_st_meta(st, "format"), "pt"), "metadata format");
    T_CHECK(sdx_st_meta(st, "note") && !strcmp(sdx_st_meta(st, "note"), meta[3]), "metadata escaping");
    sdx_st_close(st);
    remove(path);
    sdx_destroy(ctx);
    return T_PASS;
}

static int failed_write_leaves_no_file(void) {
    sdx_ctx *ctx = t_ctx();
    float a[1] = { 1 };
    sdx_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = SDX_F32; t.ndim = 1; t.shape[0] = 1; t.data = a; t.name = "a";
    T_CHECK(sdx_st_write(ctx, "/nonexistent-dir/x.safetensors", &t, 1, NULL, 0) == SDX_ERR_IO, "expected an I/O error");
    T_CHECK(strstr(sdx_last_error(ctx), "/nonexistent-dir/x.safetensors") != NULL, "message: %s", sdx_last_error(ctx));
    sdx_destroy(ctx);
    return T_PASS;
}

static int misaligned_tensor_data_is_copied_aligned(void) {
    /* header of 9 bytes puts the data section at offset 17 */
    static unsigned char img[256];
    const char *hdr = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    float v[2] = { 1.25f, -3.0f };
    sdx_ctx *ctx = t_ctx();
    sdx_st *st;
    const sdx_tensor *t;
    size_t n = st_image(img + 1, sizeof img - 1, hdr, v, sizeof v);
    T_CHECK(sdx_st_open_memory(ctx, img + 1, n, "odd.safetensors", &st) == SDX_OK, "%s", sdx_last_error(ctx));
    t = sdx_st_find(st, "w");
    T_CHECK(t && ((uintptr_t)t->data & 3) == 0, "data not aligned");
    T_CHECK(((float *)t->data)[0] == 1.25f && ((float *)t->data)[1] == -3.0f, "values");
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

static int scan_names_tensors_with_nan_or_inf(void) {
    sdx_ctx *ctx = t_ctx();
    const char *path = t_tmp("sdx_t_nan.safetensors");
    float good[4] = { 1, 2, 3, 4 }, bad[4] = { 1, NAN, INFINITY, 4 };
    sdx_tensor ts[2];
    sdx_st *st;
    int n;
    memset(ts, 0, sizeof ts);
    ts[0].dtype = SDX_F32; ts[0].ndim = 1; ts[0].shape[0] = 4; ts[0].data = good; ts[0].name = "layer.good";
    ts[1].dtype = SDX_F32; ts[1].ndim = 1; ts[1].shape[0] = 4; ts[1].data = bad; ts[1].name = "layer.bad";
    T_CHECK(sdx_st_write(ctx, path, ts, 2, NULL, 0) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(sdx_st_scan_nonfinite(ctx, st, &n) == SDX_ERR_NONFINITE, "a NaN tensor must fail the scan");
    T_CHECK(n == 1, "expected 1 bad tensor, got %d", n);
    T_CHECK(strstr(sdx_last_error(ctx), "'layer.bad' (1 NaN, 1 Inf)") != NULL, "message: %s", sdx_last_error(ctx));
    sdx_st_close(st);
    remove(path);
    sdx_destroy(ctx);
    return T_PASS;
}

static int unnamed_memory_image_fails_cleanly_at_every_allocation(void) {
    static unsigned char img[256];
    const char *hdr = "{\"__metadata__\":{\"k\":\"v\"},\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    float v[2] = { 1, 2 };
    size_t n = st_image(img, sizeof img, hdr, v, sizeof v);
    int ok_at = 0;
    for (long k = 1; k < 64 && !ok_at; k++) {
        t_allocs f = T_ALLOCS_INIT;
        sdx_ctx *ctx = t_allocs_ctx(&f);
        sdx_st *st = NULL;
        int rc;
        f.calls = 0;               /* armed after the context itself */
        f.fail_at = k;
        rc = sdx_st_open_memory(ctx, img, n, NULL, &st);   /* no name: "(memory)" in messages */
        T_CHECK(rc == SDX_OK || (rc == SDX_ERR_NOMEM && st == NULL), "allocation %ld failing gave %d: %s", k, rc, sdx_last_error(ctx));
        if (rc == SDX_OK) {
            T_CHECK(!strcmp(sdx_st_path(st), "(memory)") && sdx_st_find(st, "w"), "opened without the failure");
            ok_at = (int)k;
        }
        sdx_st_close(st);
        sdx_destroy(ctx);
    }
    T_CHECK(ok_at > 2, "every allocation of the open was failed once (opened at %d)", ok_at);
    T_NOTE("an unnamed open makes %d allocations; each failing one gives SDX_ERR_NOMEM", ok_at - 1);
    return T_PASS;
}

static int write_rejects_missing_metadata_strings(void) {
    sdx_ctx *ctx = t_ctx();
    const char *path = t_tmp("sdx_t_nometa.safetensors");
    const char *meta[2] = { "key", NULL };
    float a[1] = { 1 };
    sdx_tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = SDX_F32; t.ndim = 1; t.shape[0] = 1; t.data = a; t.name = "a";
    remove(path);
    T_CHECK(sdx_st_write(ctx, path, &t, 1, NULL, 1) == SDX_ERR_INVALID_ARG, "one metadata pair but no array");
    T_CHECK(sdx_st_write(ctx, path, &t, 1, meta, 1) == SDX_ERR_INVALID_ARG, "a NULL metadata value");
    T_CHECK(strstr(sdx_last_error(ctx), "metadata value 0 is NULL") != NULL, "message: %s", sdx_last_error(ctx));
    T_CHECK(sdx__path_kind(path) == SDX__PATH_NONE, "a rejected write left a file");
    T_CHECK(sdx_st_scan_nonfinite(ctx, NULL, NULL) == SDX_ERR_INVALID_ARG, "scan of no file");
    sdx_destroy(ctx);
    return T_PASS;
}

static int golden_checkpoint_opens_and_finds_tensors(void) {
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_st *st;
    const sdx_tensor *t;
    int n = -1;
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    t = sdx_st_find(st, "cond_stage_model.transformer.text_model.embeddings.token_embedding.weight");
    T_CHECK(t && t->dtype == SDX_F32 && t->ndim == 2 && t->shape[0] == 49408, "token embedding");
    T_CHECK(sdx_st_scan_nonfinite(ctx, st, &n) == SDX_OK && n == 0, "golden checkpoint reported non-finite: %s", sdx_last_error(ctx));
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

static int weight_set_reports_missing_and_misshaped_tensors(void) {
    T_NEED_SHARED(path, "golden/sd1/model.safetensors");
    sdx_ctx *ctx = t_ctx();
    sdx_st *st;
    sdx__wset w;
    const sdx_tensor *t;
    T_CHECK(sdx_st_open(ctx, path, &st) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx__wset_init(&w, ctx, st, "model.diffusion_model.", SDX__PART_UNET, SDX_AUTO);
    t = sdx__wget(&w, sdx__s4(4, 32, 3, 3), "out.2.weight");
    T_CHECK(t != NULL, "out.2.weight: %s", sdx_last_error(ctx));
    t = sdx__wget(&w, sdx__s4(4, 32, 1, 1), "out.2.weight");
    T_CHECK(!t && strstr(sdx_last_error(ctx), "'model.diffusion_model.out.2.weight': expected shape [4, 32, 1, 1], found [4, 32, 3, 3]"),
            "message: %s", sdx_last_error(ctx));
    t = sdx__wget(&w, sdx__s1(-1), "no.such.weight");
    T_CHECK(!t && strstr(sdx_last_error(ctx), "missing tensor 'model.diffusion_model.no.such.weight'"), "message: %s", sdx_last_error(ctx));
    sdx__wset_free(&w);
    /* a forced weight type converts once at load */
    sdx__wset_init(&w, ctx, st, "model.diffusion_model.", SDX__PART_UNET, SDX_F16);
    t = sdx__wget(&w, sdx__s4(4, 32, 3, 3), "out.2.weight");
    T_CHECK(t && t->dtype == SDX_F16, "converted to f16");
    {
        const sdx_tensor *orig = sdx_st_find(st, "model.diffusion_model.out.2.weight");
        float o = ((const float *)orig->data)[5];
        T_CHECK(sdx_f16_to_f32(((const uint16_t *)t->data)[5]) == sdx_f16_to_f32(sdx_f32_to_f16(o)), "converted value");
    }
    sdx__wset_free(&w);
    sdx_st_close(st);
    sdx_destroy(ctx);
    return T_PASS;
}

static const t_case safetensors_cases[] = {
    { "malformed_headers_are_rejected_with_a_reason", malformed_headers_are_rejected_with_a_reason },
    { "truncated_files_are_rejected", truncated_files_are_rejected },
    { "deeply_nested_json_is_rejected_without_recursion", deeply_nested_json_is_rejected_without_recursion },
    { "directories_and_missing_files_are_io_errors", directories_and_missing_files_are_io_errors },
    { "write_then_read_round_trips_tensors_and_metadata", write_then_read_round_trips_tensors_and_metadata },
    { "failed_write_leaves_no_file", failed_write_leaves_no_file },
    { "misaligned_tensor_data_is_copied_aligned", misaligned_tensor_data_is_copied_aligned },
    { "scan_names_tensors_with_nan_or_inf", scan_names_tensors_with_nan_or_inf },
    { "unnamed_memory_image_fails_cleanly_at_every_allocation", unnamed_memory_image_fails_cleanly_at_every_allocation },
    { "write_rejects_missing_metadata_strings", write_rejects_missing_metadata_strings },
    { "golden_checkpoint_opens_and_finds_tensors", golden_checkpoint_opens_and_finds_tensors },
    { "weight_set_reports_missing_and_misshaped_tensors", weight_set_reports_missing_and_misshaped_tensors },
    { 0, 0 }
};
SDX_TEST_SUITE(safetensors, safetensors_cases)

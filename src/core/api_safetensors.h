#pragma once
#include "api_core.h"

/* ===================================================================== */
/*  Public API: safetensors files                                         */
/* ===================================================================== */
#ifdef __cplusplus
extern "C" {
#endif

/* Where a model file's bytes come from: a path, the caller's memory or
 * the caller's own I/O (pack files, archives, a WASM host, the network).
 * Set exactly one of:
 *   path         the file, memory-mapped read-only (as every path argument);
 *   data, size   the file's bytes in memory: borrowed, never copied. They
 *                must stay valid and unchanged until what was loaded from
 *                them is freed (the model, ControlNet or upscaler; a LoRA's
 *                until the model or sdx_model_clear_loras);
 *   read, size   a callback: read(user, offset, n, dst) copies the n bytes
 *                at `offset` of a file of `size` bytes into dst and returns
 *                n; any other return is an I/O error. sdx reads the header
 *                first, then each tensor as a model fetches it, never asking
 *                for a byte past `size`; it may call read again while the
 *                model lives (a weight dropped after conversion and needed
 *                again), so user must outlive the model as well.
 * name (optional) is what messages, and model names in PNG parameters,
 * call it; NULL: the path, "(memory)" or "(read callback)".
 * Every source is checked as strictly as a file: a truncated buffer, a size
 * that lies or a callback that fails gives an error, never a crash. */
typedef size_t (*sdx_read_fn)(void *user, uint64_t offset, size_t n, void *dst);
typedef struct sdx_source {
    const char *path;
    const void *data;
    size_t      size;         /* of data, or of the file read reads from */
    sdx_read_fn read;
    void       *user;
    const char *name;
} sdx_source;

/* An open safetensors file. The file is mmapped read-only and tensors point
 * into the mapping, so opening a multi-GB checkpoint costs address space,
 * not RAM. Tensor data is valid until sdx_st_close. The header is checked
 * strictly: bounded length, valid JSON, known dtypes, shape x dtype size ==
 * byte span, spans inside the data section, no overlaps, unique names.
 *
 * A GGUF file (v2/v3, found by its "GGUF" magic) opens the same way: its
 * tensors get row-major shapes (ggml's ne[] reversed) and dtypes that may
 * be block-quantized (SDX_Q8_0, SDX_Q4_K, ...: see sdx_dtype_block); its
 * key/value pairs are the metadata, as text (numbers printed, arrays as
 * "[N TYPE values]"). Sizes, counts, offsets and string lengths are
 * checked against the file, as are ggml's placement rules. */
typedef struct sdx_st sdx_st;

SDX_API sdx_result sdx_st_open(sdx_ctx *ctx, const char *path, sdx_st **out);
/* Parses a file image in memory (not copied: `data` must outlive the
 * sdx_st). `name` is used in messages. */
SDX_API sdx_result sdx_st_open_memory(sdx_ctx *ctx, const void *data, size_t size,
                                const char *name, sdx_st **out);
/* Either of the above, or read callbacks. With callbacks only the header
 * is read here; a tensor's bytes come in when sdx_st_read_f32 or a model
 * fetches it (until then its data reads as zeros), into memory the sdx_st
 * holds, reserved at the file's size and taken page by page as read. */
SDX_API sdx_result sdx_st_open_source(sdx_ctx *ctx, const sdx_source *src, sdx_st **out);
SDX_API void sdx_st_close(sdx_st *st);

SDX_API const char       *sdx_st_path(const sdx_st *st);
SDX_API int               sdx_st_count(const sdx_st *st);
SDX_API const sdx_tensor *sdx_st_get(const sdx_st *st, int index); /* file order */
SDX_API const sdx_tensor *sdx_st_find(const sdx_st *st, const char *name);
/* __metadata__ entries (string values). */
SDX_API int         sdx_st_meta_count(const sdx_st *st);
SDX_API sdx_result sdx_st_meta_at(const sdx_st *st, int index, const char **key, const char **value);
SDX_API const char *sdx_st_meta(const sdx_st *st, const char *key);   /* NULL if absent */

/* Copies tensor `name` into a new owned F32 tensor (any float/int dtype
 * converted, quantized blocks dequantized as ggml does). Free with
 * sdx_tensor_free. */
SDX_API sdx_result sdx_st_read_f32(sdx_ctx *ctx, const sdx_st *st, const char *name, sdx_tensor *out);

/* Writes tensors (each with a name) and optional metadata key/value pairs
 * (meta[2*i] = key, meta[2*i+1] = value). The file is written to a
 * temporary name and renamed, so a failure never leaves half a file. */
SDX_API sdx_result sdx_st_write(sdx_ctx *ctx, const char *path, const sdx_tensor *tensors, int n_tensors,
                         const char *const *meta, int n_meta);

/* Converting, as stable-diffusion.cpp's `sd-cli -M convert --type TYPE
 * --tensor-type-rules RULES -o OUT` does. The strings are sd-cli's:
 * type is f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_K, q3_K, q4_K,
 * q5_K or q6_K (any case; NULL: every tensor keeps its dtype); rules is
 * "REGEX=TYPE,...", the first rule whose pattern occurs in a tensor's name
 * choosing its type (a subset of ECMAScript regexes: README, "GGUF
 * checkpoints"). */
typedef struct sdx_convert_params {
    const char *type;
    const char *rules;
    /* nonzero: convolutions take block types too, quantized in rows of
     * in_channels x kh x kw (whole blocks of the type; SD's 3x3 layers of
     * 32k channels), a layout only sdx reads (the file says so in
     * "sdx.quantized_convolutions"; ggml refuses it). GGUF output only. */
    int convolutions;
} sdx_convert_params;

/* Writes tensors (each with a name) converted. A path ending in ".gguf"
 * gets a GGUF file as sd-cli writes it: no metadata, the tensors sd-cli
 * leaves out (position_ids, logit_scale, ...) left out, the rest sorted
 * by name; a tensor takes its rule's type, else `type`, where sd-cli
 * would convert it (rows whole blocks of the type; not a .bias, .scale,
 * time_embed., label_emb. or embedding tensor), else keeps its dtype;
 * quantization is ggml's reference code, bit for bit. Any other path gets
 * safetensors with the metadata: every float tensor in `type` (f32, f16
 * or bf16), or without one the block-quantized tensors dequantized to
 * F32 and the rest as they are. One tensor is converted at a time;
 * written to a temporary name and renamed, as sdx_st_write. */
SDX_API sdx_result sdx_convert_write(sdx_ctx *ctx, const char *path, const sdx_tensor *tensors, int n_tensors,
                                     const char *const *meta, int n_meta, const sdx_convert_params *params);

/* Checks every float tensor for NaN/Inf. Returns SDX_OK when all are
 * finite, SDX_ERR_NONFINITE when some are not: each bad tensor is
 * reported through the log callback (SDX_LOG_WARN) and the first few are
 * named in sdx_last_error. *n_bad (may be NULL) receives how many tensors
 * are bad (0 on any other error). */
SDX_API sdx_result sdx_st_scan_nonfinite(sdx_ctx *ctx, const sdx_st *st, int *n_bad);

#ifdef __cplusplus
}
#endif

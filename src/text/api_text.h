#pragma once
#include "../core/api_core.h"
#include "../core/api_safetensors.h"

/* ===================================================================== */
/*  Public API: CLIP BPE tokenizer                                        */
/* ===================================================================== */
/* The byte-level BPE tokenizer shared by every Stable Diffusion text
 * encoder (CLIP ViT-L, OpenCLIP ViT-H and ViT-bigG), matching OpenAI's
 * clip/simple_tokenizer.py: text clean-up (the ftfy fixes prompts need,
 * HTML entities, whitespace, Unicode lower-casing), the CLIP
 * pre-tokenizer, then BPE by merge rank.
 *
 * Input text is UTF-8. Invalid UTF-8 is not an error: each byte that does
 * not start a valid sequence becomes U+FFFD before the clean-up. */
#ifdef __cplusplus
extern "C" {
#endif

#define SDX_TEXT_CONTEXT 77      /* tokens per CLIP sequence, BOS and EOS included */
#define SDX_TOKEN_BOS    49406   /* <|startoftext|> in the CLIP vocabulary */
#define SDX_TOKEN_EOS    49407   /* <|endoftext|>; also CLIP-L's padding */

typedef struct sdx_tokenizer sdx_tokenizer;

/* Loads the vocabulary from `path`: a file or a directory holding one.
 * Accepted files: Hugging Face `merges.txt` (with `vocab.json` beside it
 * used for the ids when present; otherwise ids are derived from the merge
 * order), OpenAI's `bpe_simple_vocab_16e6.txt.gz` (or any gzip of such a
 * merge list). In a directory, `merges.txt`, `bpe_simple_vocab_16e6.txt.gz`
 * and `tokenizer/merges.txt` are tried in that order. As CLIP does, at
 * most the first 48894 merges are used. */
SDX_API sdx_result sdx_tokenizer_load(sdx_ctx *ctx, const char *path, sdx_tokenizer **out);
/* Same from memory: the bytes of a merge list, plain or gzip-compressed
 * (e.g. embedded with tools/sdx-vocab2c). Ids are derived from the merge
 * order. `data` is not referenced after the call. */
SDX_API sdx_result sdx_tokenizer_load_memory(sdx_ctx *ctx, const void *data, size_t size, sdx_tokenizer **out);
/* Any of the above: a path, a merge list in memory, or read callbacks
 * (read whole, at most 256 MB; not referenced after the call). */
SDX_API sdx_result sdx_tokenizer_load_source(sdx_ctx *ctx, const sdx_source *src, sdx_tokenizer **out);
/* The vocabulary compiled into the program, for one that ships no files:
 * make a header with tools/sdx-vocab2c, then, where the implementation
 * is compiled,
 *     #define SDX_EMBED_VOCAB "clip_vocab.h"   (as #include finds it from
 *     #define SDX_IMPLEMENTATION                 sdx.h: beside it or on the
 *     #include "sdx.h"                           include path)
 * The header's array is named clip_vocab unless SDX_EMBED_VOCAB_NAME says
 * otherwise (sdx-vocab2c's second argument). sdx_model_load uses it when
 * sdx_model_desc names no vocabulary. Without SDX_EMBED_VOCAB this returns
 * SDX_ERR_UNSUPPORTED. */
SDX_API sdx_result sdx_tokenizer_load_embedded(sdx_ctx *ctx, sdx_tokenizer **out);
/* Frees the tokenizer (NULL is fine). The context it was loaded with must
 * still exist. */
SDX_API void sdx_tokenizer_free(sdx_tokenizer *tok);
/* Vocabulary size and the ids of <|startoftext|> / <|endoftext|>. */
SDX_API void sdx_tokenizer_info(const sdx_tokenizer *tok, int *n_vocab, int32_t *bos, int32_t *eos);

/* Raw BPE ids of `text` (no BOS/EOS, no truncation), like CLIP's
 * SimpleTokenizer.encode. *ids is allocated (free with sdx_tokens_free;
 * it is non-NULL even when *n == 0). */
SDX_API sdx_result sdx_tokenize(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *text, int32_t **ids, int *n);
SDX_API void sdx_tokens_free(sdx_ctx *ctx, int32_t *ids);
/* One CLIP input sequence, like clip.tokenize(text, truncate=True): BOS,
 * the first min(n, 75) ids, EOS, then pad_id up to 77 (49407 for CLIP-L /
 * SD 1.x / SDXL encoder 0, 0 for OpenCLIP / SD 2.x / SDXL encoder 1).
 * Longer text is cut so that EOS sits at position 76. */
SDX_API sdx_result sdx_tokenize_padded(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *text, int32_t pad_id,
                                 int32_t out[SDX_TEXT_CONTEXT]);

#ifdef __cplusplus
}
#endif

/* ===================================================================== */
/*  Half-float array conversion (scalar fallback; SIMD paths dispatch at  */
/*  run time and are tested bit-identical to the scalar functions)        */
/* ===================================================================== */

SDX_API void sdx_f32_to_f16_n(const float *src, uint16_t *dst, size_t n) { sdx__f32_to_f16_scalar(src, dst, n); }
SDX_API void sdx_f16_to_f32_n(const uint16_t *src, float *dst, size_t n) { sdx__f16_to_f32_scalar(src, dst, n); }
SDX_API void sdx_f32_to_bf16_n(const float *src, uint16_t *dst, size_t n) { sdx__f32_to_bf16_scalar(src, dst, n); }
SDX_API void sdx_bf16_to_f32_n(const uint16_t *src, float *dst, size_t n) { sdx__bf16_to_f32_scalar(src, dst, n); }

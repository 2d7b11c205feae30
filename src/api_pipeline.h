/* Public API: pipeline.h (see docs/INTERNALS.md) */

/* Public API: model.h (see docs/INTERNALS.md) */

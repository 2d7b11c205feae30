/* Public API: text.h (see docs/INTERNALS.md) */

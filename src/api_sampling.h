/* Public API: sampling.h (see docs/INTERNALS.md) */

#!/bin/sh
# Builds sdx.h from src/: the usage guide, the public API parts, then the
# implementation parts in data-flow order. `tools/amalgamate.sh --check`
# exits non-zero when the committed sdx.h differs from what src/ produces.
# For work in progress: `SDX_ONLY="core.c json.c" tools/amalgamate.sh -o
# /tmp/part.h` builds a header from a subset of the implementation parts.
set -eu
cd "$(dirname "$0")/.."
OUT=sdx.h
if [ "${1:-}" = "-o" ]; then OUT=$2; shift 2; fi

API="api_core.h api_safetensors.h api_rng.h api_text.h api_sampling.h api_pipeline.h"
IMPL="${SDX_ONLY:-core.c half_simd.c json.c safetensors.c rng.c kernels.c inflate.c unicode_tables.c tokenizer.c prompt.c text_encoder.c unet.c vae.c sampling.c pipeline.c}"

emit() {
    cat src/prologue.h
    echo "#ifndef SDX_H_INCLUDED"
    echo "#define SDX_H_INCLUDED"
    for f in $API; do
        [ -f "src/$f" ] || continue
        echo ""
        echo "/* ---- src/$f ---- */"
        cat "src/$f"
    done
    echo ""
    echo "#endif /* SDX_H_INCLUDED */"
    echo ""
    echo "#if defined(SDX_IMPLEMENTATION) && !defined(SDX_IMPLEMENTATION_DONE)"
    echo "#define SDX_IMPLEMENTATION_DONE"
    echo "/* Internals are static; not every program uses every one of them. */"
    echo "#if defined(__GNUC__) || defined(__clang__)"
    echo "#pragma GCC diagnostic push"
    echo "#pragma GCC diagnostic ignored \"-Wunused-function\""
    echo "#endif"
    for f in $IMPL; do
        [ -f "src/$f" ] || continue
        echo ""
        echo "/* ---- src/$f ---- */"
        cat "src/$f"
    done
    echo ""
    echo "#if defined(__GNUC__) || defined(__clang__)"
    echo "#pragma GCC diagnostic pop"
    echo "#endif"
    echo "#endif /* SDX_IMPLEMENTATION */"
    cat src/license.txt
}

if [ "${1:-}" = "--check" ]; then
    tmp=$(mktemp)
    emit > "$tmp"
    if cmp -s "$tmp" sdx.h; then rm -f "$tmp"; echo "sdx.h is up to date"; exit 0; fi
    rm -f "$tmp"
    echo "sdx.h is out of date: run tools/amalgamate.sh and commit it" >&2
    exit 1
fi
# a private temporary name: several builds may amalgamate at once
emit > "$OUT.tmp.$$"
mv "$OUT.tmp.$$" "$OUT"

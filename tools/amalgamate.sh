#!/bin/sh
# Builds sdx.h from src/ and sdx_hip.h from src/hip/. The declaration
# half of sdx.h is src/api.h expanded, the implementation half src/impl.c
# expanded: each local #include "..." is replaced by the file it names,
# each file once and at its first include, so the order of the parts is
# the order their includes give (what a compiler sees when it builds a
# part alone) and lives in the sources, not here. `#pragma once` lines are
# dropped; an include that leaves src/ (src/hip/api_hip.h includes
# ../../sdx.h) stays an include of that file beside the header. Every .c
# and .h below src/ must be reached. sdx_hip.h is made the same way from
# src/hip/api_hip.h (declarations) and src/hip/impl.cu, every file below
# src/hip/ reached.
#
#   tools/amalgamate.sh              write sdx.h and sdx_hip.h
#   tools/amalgamate.sh -o FILE      write sdx.h's text to FILE
#   tools/amalgamate.sh --check      exit 1 when a committed header is stale
#   SDX_ONLY="core/json.c ..." tools/amalgamate.sh -o FILE
#       a header with only those parts (and what they include), for
#       harnesses that need a small build
set -eu
cd "$(dirname "$0")/.."
OUT=sdx.h
if [ "${1:-}" = "-o" ]; then OUT=$2; shift 2; fi

# emit NAME: the text of sdx.h (NAME sdx) or sdx_hip.h (NAME hip)
emit() {
    if [ "$1" = hip ]; then
        cat src/hip/prologue.h
        ALL=$(cd src && find hip \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) \
            ! -name prologue.h ! -name impl.cu | sort | tr '\n' ' ')
        GUARD=SDX_HIP_H_INCLUDED API=hip/api_hip.h API_ROOT=0 IMPL=hip/impl.cu MACRO=SDX_HIP_IMPLEMENTATION
        ROOTS=""
    else
        cat src/prologue.h
        ALL=""
        [ -n "${SDX_ONLY:-}" ] || ALL=$(cd src && find . \( -name '*.c' -o -name '*.h' \) ! -path './hip/*' \
            ! -name prologue.h ! -name api.h ! -name impl.c | sed 's|^\./||' | sort | tr '\n' ' ')
        GUARD=SDX_H_INCLUDED API=api.h API_ROOT=1 IMPL=impl.c MACRO=SDX_IMPLEMENTATION
        ROOTS=${SDX_ONLY:-}
    fi
    awk -v roots="$ROOTS" -v all="$ALL" -v guard="$GUARD" -v api="$API" -v api_root="$API_ROOT" \
        -v impl="$IMPL" -v macro="$MACRO" '
    function norm(p) {
        while (sub(/(^|\/)\.\//, "/", p)) ;
        sub(/^\//, "", p)
        while (sub(/[^\/.][^\/]*\/\.\.\//, "", p)) ;
        return p
    }
    # prints a file with its includes expanded in place; a root prints
    # only what it includes
    function expand(path, root,    line, inc, dir, rc) {
        if (path in seen) return
        seen[path] = 1
        dir = path; sub(/[^\/]*$/, "", dir)
        while ((rc = (getline line < ("src/" path))) > 0) {
            if (line ~ /^#pragma once[ \t]*$/) continue
            if (line ~ /^#include "[^"]+"/) {
                inc = line; sub(/^#include "/, "", inc); sub(/".*/, "", inc)
                inc = norm(dir inc)
                if (inc ~ /^\.\.\//) {      # outside src/: a header beside this one
                    sub(/^\.\.\//, "", inc)
                    if (!root) print "#include \"" inc "\""
                    continue
                }
                expand(inc, 0)
                continue
            }
            if (root) continue
            if (marked != path) {   # a part resumes after the parts it includes
                print ""
                print "/* ---- src/" path ((path in begun) ? " (continued)" : "") " ---- */"
                marked = path; begun[path] = 1
            }
            print line
        }
        if (rc < 0) { print "amalgamate: cannot read src/" path > "/dev/stderr"; failed = 1; exit 2 }
        close("src/" path)
    }
    BEGIN {
        print "#ifndef " guard
        print "#define " guard
        expand(api, api_root + 0)
        print ""
        print "#endif /* " guard " */"
        print ""
        print "#if defined(" macro ") && !defined(" macro "_DONE)"
        print "#define " macro "_DONE"
        print "/* Internals are static; not every program uses every one of them. */"
        print "#if defined(__GNUC__) || defined(__clang__)"
        print "#pragma GCC diagnostic push"
        print "#pragma GCC diagnostic ignored \"-Wunused-function\""
        print "#endif"
        if (roots != "") {
            n = split(roots, r, " ")
            for (i = 1; i <= n; i++) expand(norm(r[i]), 0)
        } else expand(impl, 1)
        print ""
        print "#if defined(__GNUC__) || defined(__clang__)"
        print "#pragma GCC diagnostic pop"
        print "#endif"
        print "#endif /* " macro " */"
        n = split(all, a, " ")
        for (i = 1; i <= n; i++)
            if (!(a[i] in seen)) { print "amalgamate: src/" a[i] " is not included from src/" impl " or src/" api > "/dev/stderr"; failed = 1 }
        exit failed ? 2 : 0
    }'
    cat src/license.txt
}

if [ "${1:-}" = "--check" ]; then
    stale=0
    for h in sdx sdx_hip; do
        tmp=$(mktemp)
        emit "${h#sdx_}" > "$tmp" || { rm -f "$tmp"; exit 2; }
        if cmp -s "$tmp" "$h.h"; then echo "$h.h is up to date"
        else echo "$h.h is out of date: run tools/amalgamate.sh and commit it" >&2; stale=1; fi
        rm -f "$tmp"
    done
    exit $stale
fi
# a private temporary name: several builds may amalgamate at once
emit sdx > "$OUT.tmp.$$" || { rm -f "$OUT.tmp.$$"; exit 2; }
mv "$OUT.tmp.$$" "$OUT"
if [ "$OUT" = sdx.h ] && [ -z "${SDX_ONLY:-}" ]; then
    emit hip > "sdx_hip.h.tmp.$$" || { rm -f "sdx_hip.h.tmp.$$"; exit 2; }
    mv "sdx_hip.h.tmp.$$" sdx_hip.h
fi

/* Suite "json": the strict JSON parser used for safetensors headers. */
#include "test.h"
#include <locale.h>

static int json_parse_str(const char *s, sdx__json_doc *doc, sdx_ctx *ctx) {
    return sdx__json_parse(ctx, s, strlen(s), doc);
}

static int values_of_every_type_parse(void) {
    sdx_ctx *ctx = t_ctx();
    sdx__json_doc doc;
    const sdx__json *v;
    uint64_t big;
    T_CHECK(json_parse_str(" {\"n\": -1.5e2, \"s\": \"a\\u00e9\\ud83d\\ude00\\n\", \"a\": [true, false, null, []], \"o\": {},"
                           " \"big\": 18446744073709551615} ", &doc, ctx) == SDX_OK, "%s", sdx_last_error(ctx));
    v = sdx__json_get(doc.root, "n");
    T_CHECK(v && v->type == SDX__JSON_NUMBER && v->num == -150.0, "number");
    v = sdx__json_get(doc.root, "s");
    T_CHECK(v && v->type == SDX__JSON_STRING && !strcmp(v->str, "a\xc3\xa9\xf0\x9f\x98\x80\n") && v->len == 8, "string escapes");
    v = sdx__json_get(doc.root, "a");
    T_CHECK(v && v->len == 4 && sdx__json_at(v, 0)->type == SDX__JSON_TRUE && sdx__json_at(v, 2)->type == SDX__JSON_NULL &&
            sdx__json_at(v, 3)->type == SDX__JSON_ARRAY && sdx__json_at(v, 3)->len == 0, "array");
    T_CHECK(sdx__json_uint64(sdx__json_get(doc.root, "big"), &big) && big == UINT64_MAX, "exact uint64");
    T_CHECK(sdx__json_get(doc.root, "o")->type == SDX__JSON_OBJECT, "object");
    sdx__json_free(&doc);
    sdx_destroy(ctx);
    return T_PASS;
}

static int invalid_documents_are_rejected(void) {
    static const char *bad[] = {
        "", "{", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "[01]", "[1.]", "[.5]", "[1e]", "[+1]", "\"\\x\"", "\"a",
        "[\"\\ud800\"]", "[\"\\udc00\"]", "[tru]", "{1:2}", "[1] [2]", "\"\x01\"", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]",
        "18446744073709551616x",
    };
    sdx_ctx *ctx = t_ctx();
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        sdx__json_doc doc;
        int rc = json_parse_str(bad[i], &doc, ctx);
        T_CHECK(rc == SDX_ERR_FORMAT, "'%s' was accepted", bad[i]);
        T_CHECK(strstr(sdx_last_error(ctx), "invalid JSON at byte") != NULL, "message: %s", sdx_last_error(ctx));
    }
    sdx_destroy(ctx);
    return T_PASS;
}

static int uint64_rejects_fractions_negatives_and_overflow(void) {
    sdx_ctx *ctx = t_ctx();
    sdx__json_doc doc;
    uint64_t x;
    T_CHECK(json_parse_str("[1.0, -1, 1e3, 18446744073709551616, 0]", &doc, ctx) == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(!sdx__json_uint64(sdx__json_at(doc.root, 0), &x), "1.0");
    T_CHECK(!sdx__json_uint64(sdx__json_at(doc.root, 1), &x), "-1");
    T_CHECK(!sdx__json_uint64(sdx__json_at(doc.root, 2), &x), "1e3");
    T_CHECK(!sdx__json_uint64(sdx__json_at(doc.root, 3), &x), "2^64");
    T_CHECK(sdx__json_uint64(sdx__json_at(doc.root, 4), &x) && x == 0, "0");
    sdx__json_free(&doc);
    sdx_destroy(ctx);
    return T_PASS;
}

static int nesting_is_limited_not_recursive(void) {
    sdx_ctx *ctx = t_ctx();
    sdx__json_doc doc;
    char *s = (char *)malloc(2000001);
    memset(s, '[', 1000000);
    memset(s + 1000000, ']', 1000000);
    s[2000000] = 0;
    T_CHECK(json_parse_str(s, &doc, ctx) == SDX_ERR_FORMAT && strstr(sdx_last_error(ctx), "too deep"), "%s", sdx_last_error(ctx));
    s[SDX__JSON_MAX_DEPTH] = 0;        /* the limit itself still parses */
    memset(s + SDX__JSON_MAX_DEPTH / 2, ']', SDX__JSON_MAX_DEPTH / 2);
    T_CHECK(json_parse_str(s, &doc, ctx) == SDX_OK, "%s", sdx_last_error(ctx));
    sdx__json_free(&doc);
    free(s);
    sdx_destroy(ctx);
    return T_PASS;
}

/* Switches LC_NUMERIC to a locale whose decimal point is ','. Uses an
 * installed one, or compiles de_DE with localedef (libc-bin) from the
 * Debian `locales` sources into the scratch directory and points LOCPATH
 * at it. */
static const char *json_comma_locale(void) {
    static const char *comma_locales[] = { "de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "ru_RU.UTF-8", "nl_NL.UTF-8",
                                           "German_Germany.1252", "German" };   /* the last two: Windows names */
    for (int i = 0; i < (int)(sizeof comma_locales / sizeof comma_locales[0]); i++)
        if (setlocale(LC_NUMERIC, comma_locales[i]) && localeconv()->decimal_point[0] == ',') return comma_locales[i];
#ifndef _WIN32
    char cmd[2600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && localedef -i de_DE -f UTF-8 '%s/de_DE.UTF-8' >/dev/null 2>&1", t_tmp("sdx_t_locale"),
             t_tmp("sdx_t_locale"));
    if (system(cmd) == 0) {
        setenv("LOCPATH", t_tmp("sdx_t_locale"), 1);
        if (setlocale(LC_NUMERIC, "de_DE.UTF-8") && localeconv()->decimal_point[0] == ',') return "de_DE.UTF-8 (built by localedef)";
        unsetenv("LOCPATH");
    }
#endif
    setlocale(LC_NUMERIC, "C");
    return NULL;
}

static int numbers_ignore_a_comma_decimal_locale(void) {
    const char *found = json_comma_locale();
    sdx_ctx *ctx;
    sdx__json_doc doc;
    int rc;
    double got;
    T_SKIP_IF(!found, "no locale with a ',' decimal point is installed and localedef could not build de_DE "
                      "(install Debian's locales package: tools/setup-debian.sh)");
    ctx = t_ctx();
    rc = json_parse_str("[-1.5e1]", &doc, ctx);
    got = rc == SDX_OK ? sdx__json_at(doc.root, 0)->num : 0;
    if (rc == SDX_OK) sdx__json_free(&doc);
    setlocale(LC_NUMERIC, "C");
#ifndef _WIN32
    unsetenv("LOCPATH");
#endif
    T_CHECK(rc == SDX_OK, "%s", sdx_last_error(ctx));
    T_CHECK(got == -15.0, "under %s '-1.5e1' parsed as %g", found, got);
    sdx_destroy(ctx);
    return T_PASS;
}

static const t_case json_cases[] = {
    { "values_of_every_type_parse", values_of_every_type_parse },
    { "invalid_documents_are_rejected", invalid_documents_are_rejected },
    { "uint64_rejects_fractions_negatives_and_overflow", uint64_rejects_fractions_negatives_and_overflow },
    { "nesting_is_limited_not_recursive", nesting_is_limited_not_recursive },
    { "numbers_ignore_a_comma_decimal_locale", numbers_ignore_a_comma_decimal_locale },
    { 0, 0 }
};
SDX_TEST_SUITE(json, json_cases)

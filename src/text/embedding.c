#pragma once
#include "../core/safetensors.c"
#include "tokenizer.c"
#include <dirent.h>

/* ===================================================================== */
/*  Textual-inversion embeddings (A1111 / ComfyUI files)                  */
/* ===================================================================== */
/* A folder of .safetensors embeddings, found by file name as A1111 does:
 * the prompt's tokens are matched against the tokens of each name (the
 * longest match wins), and ComfyUI's "embedding:name" is matched too. A
 * matched embedding stands for its n vectors instead of the name's
 * tokens. Files: one tensor [n, W] or [W] (A1111's "emb_params", any
 * name), or for SDXL "clip_l" [n, 768] and "clip_g" [n, 1280]. Vectors
 * are read when first used; a width that does not fit the model is an
 * error then. */

#define SDX__EMB_MAX_ENC 2

typedef struct sdx__embedding {
    char *name, *path;
    int32_t *ids[2];            /* tokens of "name" and "embedding:name" */
    int n_ids[2];
    int n_vec;                  /* 0 until loaded */
    float *vec;                 /* [n_vec][dim]: each encoder's part side by side */
} sdx__embedding;

typedef struct sdx__embdb {
    sdx_ctx *ctx;
    sdx__embedding *e;
    int n;
    int n_enc, width[SDX__EMB_MAX_ENC], dim;    /* the model's encoders; dim = sum of widths */
} sdx__embdb;

static void sdx__embdb_free(sdx__embdb *db) {
    if (!db) return;
    for (int i = 0; i < db->n; i++) {
        sdx__free(db->ctx, db->e[i].name);
        sdx__free(db->ctx, db->e[i].path);
        sdx_tokens_free(db->ctx, db->e[i].ids[0]);
        sdx_tokens_free(db->ctx, db->e[i].ids[1]);
        sdx__free(db->ctx, db->e[i].vec);
    }
    sdx__free(db->ctx, db->e);
    memset(db, 0, sizeof *db);
}

/* Lists the .safetensors files of `dir` for a model whose text encoders
 * are n_enc wide `width`s. Other files are ignored (A1111's .pt/.bin
 * pickles are not read). */
static int sdx__embdb_open(sdx_ctx *ctx, const sdx_tokenizer *tok, const char *dir, int n_enc, const int *width, sdx__embdb *db) {
    DIR *d;
    struct dirent *ent;
    int cap = 0, rc = SDX_OK;
    memset(db, 0, sizeof *db);
    db->ctx = ctx;
    db->n_enc = n_enc;
    for (int e = 0; e < n_enc && e < SDX__EMB_MAX_ENC; e++) { db->width[e] = width[e]; db->dim += width[e]; }
    if (!(d = opendir(dir))) return sdx__fail(ctx, SDX_ERR_IO, "%s: cannot open the embedding folder: %s", dir, strerror(errno));
    while (rc == SDX_OK && (ent = readdir(d)) != NULL) {
        size_t len = strlen(ent->d_name);
        sdx__embedding *e;
        char *text;
        if (len <= 12 || strcmp(ent->d_name + len - 12, ".safetensors") || ent->d_name[0] == '.') continue;
        if (db->n == cap) {
            int ncap = cap ? cap * 2 : 16;
            sdx__embedding *ne = (sdx__embedding *)sdx__realloc(ctx, db->e, sizeof *ne * (size_t)ncap);
            if (!ne) { rc = sdx__nomem(ctx, "embedding list", 0); break; }
            db->e = ne;
            cap = ncap;
        }
        e = &db->e[db->n];
        memset(e, 0, sizeof *e);
        e->name = (char *)sdx__malloc(ctx, len - 11);
        e->path = (char *)sdx__malloc(ctx, strlen(dir) + len + 2);
        text = (char *)sdx__malloc(ctx, len + 10);
        if (!e->name || !e->path || !text) {
            sdx__free(ctx, e->name); sdx__free(ctx, e->path); sdx__free(ctx, text);
            rc = sdx__nomem(ctx, "embedding name", len);
            break;
        }
        db->n++;
        memcpy(e->name, ent->d_name, len - 12);
        e->name[len - 12] = 0;
        sprintf(e->path, "%s/%s", dir, ent->d_name);
        sprintf(text, "embedding:%s", e->name);
        rc = sdx_tokenize(ctx, tok, e->name, &e->ids[0], &e->n_ids[0]);
        if (rc == SDX_OK) rc = sdx_tokenize(ctx, tok, text, &e->ids[1], &e->n_ids[1]);
        sdx__free(ctx, text);
    }
    closedir(d);
    if (rc != SDX_OK) sdx__embdb_free(db);
    return rc;
}

/* The embedding whose name's tokens start ids[0..n), longest first, and
 * how many tokens it covers; NULL when none. */
static sdx__embedding *sdx__embdb_match(const sdx__embdb *db, const int32_t *ids, int n, int *covered) {
    sdx__embedding *best = NULL;
    *covered = 0;
    for (int i = 0; db && i < db->n; i++)
        for (int k = 0; k < 2; k++) {
            int m = db->e[i].n_ids[k];
            if (m > *covered && m <= n && !memcmp(db->e[i].ids[k], ids, (size_t)m * sizeof(int32_t))) {
                best = &db->e[i];
                *covered = m;
            }
        }
    return best;
}

/* Reads tensor t ([n, W] or [W]) into columns [col, col + W) of e->vec. */
static int sdx__emb_read(sdx__embdb *db, sdx__embedding *e, const sdx_tensor *t, int enc, int col) {
    int64_t n = t->ndim == 1 ? 1 : t->ndim == 2 ? t->shape[0] : -1, w = t->ndim ? t->shape[t->ndim - 1] : 0;
    if (n < 1 || (t->dtype != SDX_F32 && t->dtype != SDX_F16 && t->dtype != SDX_BF16))
        return sdx__fail(db->ctx, SDX_ERR_MODEL, "%s: embedding tensor '%s' must be F32/F16/BF16 [vectors, width] or [width]",
                         e->path, t->name);
    if (w != db->width[enc])
        return sdx__fail(db->ctx, SDX_ERR_MODEL, "%s: embedding '%s' has vectors of width %lld but this model's %stext encoder "
                         "takes %d (an embedding for another model family?)", e->path, e->name, (long long)w,
                         db->n_enc == 2 ? (enc ? "OpenCLIP-G " : "CLIP-L ") : "", db->width[enc]);
    if (e->vec && n != e->n_vec)
        return sdx__fail(db->ctx, SDX_ERR_MODEL, "%s: clip_l has %d vectors but clip_g %lld", e->path, e->n_vec, (long long)n);
    if (!e->vec) {
        if (n > 75) return sdx__fail(db->ctx, SDX_ERR_MODEL, "%s: embedding '%s' has %lld vectors, more than a 75-token chunk holds",
                                     e->path, e->name, (long long)n);
        e->vec = (float *)sdx__calloc(db->ctx, (size_t)(n * db->dim), sizeof(float));
        if (!e->vec) return sdx__nomem(db->ctx, e->path, (size_t)(n * db->dim) * sizeof(float));
        e->n_vec = (int)n;
    }
    for (int64_t v = 0; v < n; v++) sdx__load_f32(t->data, t->dtype, v * w, w, e->vec + v * db->dim + col);
    return SDX_OK;
}

/* Loads the vectors of e (once). */
static int sdx__embdb_load(sdx__embdb *db, sdx__embedding *e) {
    sdx_st *st;
    int rc;
    if (e->n_vec) return SDX_OK;
    if ((rc = sdx_st_open(db->ctx, e->path, &st)) != SDX_OK) return rc;
    if (db->n_enc == 2) {
        const sdx_tensor *l = sdx_st_find(st, "clip_l"), *g = sdx_st_find(st, "clip_g");
        if (!l || !g)
            rc = sdx__fail(db->ctx, SDX_ERR_MODEL, "%s: an SDXL embedding needs tensors 'clip_l' and 'clip_g' (found %d tensor(s)%s%s)",
                           e->path, sdx_st_count(st), sdx_st_count(st) ? ", e.g. " : "", sdx_st_count(st) ? sdx_st_get(st, 0)->name : "");
        else if ((rc = sdx__emb_read(db, e, l, 0, 0)) == SDX_OK)
            rc = sdx__emb_read(db, e, g, 1, db->width[0]);
    } else {
        const sdx_tensor *t = sdx_st_find(st, "emb_params");
        if (!t && sdx_st_count(st) == 1) t = sdx_st_get(st, 0);
        if (!t)
            rc = sdx__fail(db->ctx, SDX_ERR_MODEL, "%s: an embedding needs one tensor ('emb_params'); found %d%s", e->path,
                           sdx_st_count(st), sdx_st_find(st, "clip_l") ? " (clip_l/clip_g: an SDXL embedding)" : "");
        else rc = sdx__emb_read(db, e, t, 0, 0);
    }
    if (rc != SDX_OK) { sdx__free(db->ctx, e->vec); e->vec = NULL; e->n_vec = 0; }
    sdx_st_close(st);
    return rc;
}

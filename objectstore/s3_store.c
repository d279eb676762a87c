/*
 * The S3 backend's stores and listings.  With a configured bucket, a
 * store is the key prefix "<prefix><store>/" and exists while its marker
 * object, the key "<prefix><store>/" itself, does (an object id is never
 * empty, so no object is the marker); without one, a store is the bucket
 * "<prefix><store>".  Lists are ListObjectsV2 pages of 1,000 keys, in
 * S3's order, which is the byte order of the keys.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objectstore/s3_int.h"

/* @method on object @id of @store (NULL: the store's marker, or its
 * bucket) without a body: what came back in *@r, which the caller frees
 * with sl__s3_req_free. */
static int
object_req(struct s3 *s,
           const char *method,
           const char *store,
           const char *id,
           const char *what,
           struct s3_req *r,
           struct sl_err *err)
{
    char *bucket = NULL;
    char *key = NULL;
    int rc = 0;

    sl__s3_where(s, store, id, &bucket, &key);
    sl__s3_req_init(r, method);
    r->bucket = bucket;
    r->key = key;
    rc = sl__s3_do(s, r, what, err);
    r->bucket = r->key = NULL;
    sl_free(key);
    sl_free(bucket);
    return rc;
}

/* ------------------------------------------------------------------------
 * Object listing.
 * --------------------------------------------------------------------- */

struct lister {
    size_t skip;        /* bytes of a key before the object id */
    const char *marker; /* the store's marker key, not an object, or NULL */
    int (*cb)(void *cb_ctx, const struct sl_obj_info *info);
    void *cb_ctx;
};

static int
on_key(void *ctx, const char *key, uint64_t size, int64_t mtime)
{
    struct lister *l = ctx;
    struct sl_obj_info info;

    if ((l->marker != NULL && strcmp(key, l->marker) == 0) ||
        strlen(key) <= l->skip) {
        return 0;
    }
    info.id = key + l->skip;
    info.size = size;
    info.mtime_ms = mtime;
    return l->cb(l->cb_ctx, &info);
}

/* Every page of ListObjectsV2 of @bucket under @prefix (with @delim as
 * the delimiter, or none) into @p's callbacks.  0, the callback's value,
 * or an error. */
static int
list_pages(struct s3 *s,
           const char *bucket,
           const char *prefix,
           const char *delim,
           struct s3_list_page *p,
           struct sl_err *err)
{
    char *pre = sl_url_escape(prefix, 0);
    int rc = 0;

    p->next = NULL;
    do {
        struct s3_req r;
        char *token = p->next != NULL ? sl_url_escape(p->next, 0) : NULL;
        char *q = sl_asprintf("%s%s%s%slist-type=2&prefix=%s",
                              token != NULL ? "continuation-token=" : "",
                              token != NULL ? token : "",
                              token != NULL ? "&" : "",
                              delim != NULL ? "delimiter=%2F&" : "",
                              pre);

        sl__s3_req_init(&r, "GET");
        r.bucket = bucket;
        r.query = q;
        rc = sl__s3_do(s, &r, "list", err);
        if (rc == 0 && sl__s3_xml_list(r.xml.data, r.xml.len, p) != 0) {
            rc = sl_err_set(err,
                            SL_EUPSTREAM,
                            NULL,
                            "S3 list of %s: a reply that is not a listing",
                            bucket);
        }
        if (rc == 0 && p->stopped != 0) {
            rc = p->stopped;
        }
        sl__s3_req_free(&r);
        sl_free(q);
        sl_free(token);
    } while (rc == 0 && p->truncated && p->next != NULL);
    SL_FREE(p->next);
    sl_free(pre);
    return rc;
}

int
sl__s3_list(void *ctx,
            const char *store,
            const char *prefix,
            int (*cb)(void *cb_ctx, const struct sl_obj_info *info),
            void *cb_ctx,
            struct sl_err *err)
{
    struct s3 *s = ctx;
    char *bucket = NULL;
    char *base = NULL;
    char *key = NULL;
    struct lister l;
    struct s3_list_page p;
    int rc = sl__s3_store_exists(ctx, store, err);

    if (rc != 0) {
        return rc;
    }
    sl__s3_where(s, store, NULL, &bucket, &base);
    key = sl_asprintf("%s%s", base != NULL ? base : "", prefix);
    l.skip = base != NULL ? strlen(base) : 0;
    l.marker = base;
    l.cb = cb;
    l.cb_ctx = cb_ctx;
    memset(&p, 0, sizeof(p));
    p.on_key = on_key;
    p.ctx = &l;
    rc = list_pages(s, bucket, key, NULL, &p, err);
    sl_free(key);
    sl_free(base);
    sl_free(bucket);
    return rc;
}

/* ------------------------------------------------------------------------
 * Stores.
 * --------------------------------------------------------------------- */

int
sl__s3_store_exists(void *ctx, const char *store, struct sl_err *err)
{
    struct s3_req r;
    int rc = object_req(ctx, "HEAD", store, NULL, "store", &r, err);

    if (rc == SL_ENOENT) {
        rc = sl_err_set(err, SL_ENOENT, NULL, "no store '%s'", store);
    }
    sl__s3_req_free(&r);
    return rc;
}

int
sl__s3_store_create(void *ctx,
                    const char *store,
                    int *created,
                    struct sl_err *err)
{
    struct s3 *s = ctx;
    struct s3_req r;
    int rc = sl__s3_store_exists(ctx, store, err);

    *created = 0;
    if (rc != SL_ENOENT) {
        return rc;
    }
    /* the marker, or the bucket itself */
    rc = object_req(s, "PUT", store, NULL, "store create", &r, err);
    if (rc == SL_ECONFLICT && s->bucket == NULL) {
        rc = 0; /* BucketAlreadyOwnedByYou: created meanwhile */
    } else if (rc == 0) {
        *created = 1;
    }
    sl__s3_req_free(&r);
    return rc;
}

/* Collect the keys of a store, to delete them. */
struct keys {
    size_t skip;
    char **v;
    size_t n;
    size_t cap;
};

static int
collect(void *ctx, const struct sl_obj_info *info)
{
    struct keys *k = ctx;

    if (k->n == k->cap) {
        k->cap = k->cap != 0 ? k->cap * 2 : 64;
        k->v = sl_realloc(k->v, k->cap * sizeof(*k->v));
    }
    k->v[k->n++] = sl_strdup(info->id);
    return k->n >= 1000; /* a batch: deleted, then listed again */
}

int
sl__s3_store_delete(void *ctx, const char *store, struct sl_err *err)
{
    struct keys k;
    struct s3_req r;
    size_t i = 0;
    int rc = 0;

    memset(&k, 0, sizeof(k));
    do {
        for (i = 0; i < k.n; i++) {
            sl_free(k.v[i]);
        }
        k.n = 0;
        rc = sl__s3_list(ctx, store, "", collect, &k, err);
        for (i = 0; (rc == 0 || rc == 1) && i < k.n; i++) {
            int d = sl__s3_delete(ctx, store, k.v[i], err);

            rc = d == SL_ENOENT ? rc : d != 0 ? d : rc;
        }
    } while (rc == 1);
    for (i = 0; i < k.n; i++) {
        sl_free(k.v[i]);
    }
    sl_free(k.v);
    if (rc != 0) {
        return rc;
    }
    rc = object_req(ctx, "DELETE", store, NULL, "store delete", &r, err);
    sl__s3_req_free(&r);
    return rc;
}

/* Stores from the common prefixes of the bucket (prefix mode) or from
 * the buckets (bucket mode), each checked for its marker. */
struct stores {
    struct s3 *s;
    size_t skip;
    int (*cb)(void *cb_ctx, const char *store);
    void *cb_ctx;
};

static int
on_store(void *ctx, const char *name)
{
    struct stores *st = ctx;
    char store[SL_NAME_MAX + 2];
    size_t n = strlen(name);

    if (n <= st->skip || n - st->skip >= sizeof(store)) {
        return 0;
    }
    memcpy(store, name + st->skip, n - st->skip + 1);
    if (st->s->bucket != NULL) {
        store[strlen(store) - 1] = '\0'; /* the '/' */
    } else if (strncmp(name, st->s->prefix, st->skip) != 0) {
        return 0;
    }
    if (sl_name_check_store(store, NULL) != 0 ||
        sl__s3_store_exists(st->s, store, NULL) != 0) {
        return 0; /* not ours, or objects left of a store being deleted */
    }
    return st->cb(st->cb_ctx, store);
}

int
sl__s3_store_list(void *ctx,
                  int (*cb)(void *cb_ctx, const char *store),
                  void *cb_ctx,
                  struct sl_err *err)
{
    struct s3 *s = ctx;
    struct stores st = {s, strlen(s->prefix), cb, cb_ctx};
    struct s3_list_page p;
    struct s3_req r;
    int stopped = 0;
    int rc = 0;

    if (s->bucket != NULL) {
        memset(&p, 0, sizeof(p));
        p.on_prefix = on_store;
        p.ctx = &st;
        return list_pages(s, s->bucket, s->prefix, "/", &p, err);
    }
    sl__s3_req_init(&r, "GET");
    rc = sl__s3_do(s, &r, "list buckets", err);
    if (rc == 0 && sl__s3_xml_buckets(
                       r.xml.data, r.xml.len, on_store, &st, &stopped) != 0) {
        rc = sl_err_set(err,
                        SL_EUPSTREAM,
                        NULL,
                        "S3 list buckets: a reply that is not a listing");
    }
    sl__s3_req_free(&r);
    return rc != 0 ? rc : stopped;
}

/* ------------------------------------------------------------------------
 * One object.
 * --------------------------------------------------------------------- */

int
sl__s3_stat(void *ctx,
            const char *store,
            const char *id,
            struct sl_obj_info *info,
            struct sl_err *err)
{
    struct s3_req r;
    int rc = object_req(ctx, "HEAD", store, id, "stat", &r, err);

    if (rc == SL_ENOENT) {
        rc = sl_err_set(
            err, SL_ENOENT, NULL, "no object '%s' in store '%s'", id, store);
    } else if (rc == 0) {
        info->size = r.length;
        info->mtime_ms = r.mtime_ms;
    }
    sl__s3_req_free(&r);
    return rc;
}

int
sl__s3_delete(void *ctx, const char *store, const char *id, struct sl_err *err)
{
    struct sl_obj_info info;
    struct s3_req r;
    /* S3 deletes what is not there without a word: SL_ENOENT needs a look
     * first (a delete between the two is still a delete) */
    int rc = sl__s3_stat(ctx, store, id, &info, err);

    if (rc != 0) {
        return rc;
    }
    rc = object_req(ctx, "DELETE", store, id, "delete", &r, err);
    sl__s3_req_free(&r);
    return rc;
}

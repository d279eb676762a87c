/*
 * Object store REST API (docs/store-api.md): stores under /smila/store/
 * and objects under /smila/store/<store>/<id>.  Object bodies stream in
 * both directions: a PUT writes each chunk to a shadow file as it arrives,
 * a GET reads the object in 64 KiB blocks.
 */
#include <string.h>

#include "http/http_int.h"

#define LIST_DEFAULT_LIMIT 1000
#define LIST_MAX_LIMIT     100000

static char *
object_url(const struct sl__req *req, const char *store, const char *id)
{
    char *eid = sl_url_escape(id, 1);
    char *path = sl_asprintf("/smila/store/%s/%s", store, eid);
    char *url = sl__req_url(req, path);

    sl_free(eid);
    sl_free(path);
    return url;
}

static char *
store_url(const struct sl__req *req, const char *store)
{
    char *path = sl_asprintf("/smila/store/%s/", store);
    char *url = sl__req_url(req, path);

    sl_free(path);
    return url;
}

/* ------------------------------------------------------------------------
 * Stores.
 * --------------------------------------------------------------------- */

struct store_list_ctx {
    struct sl__req *req;
    json_t *stores;
};

static int
add_store(void *ctx, const char *store)
{
    struct store_list_ctx *c = ctx;
    char *url = store_url(c->req, store);

    (void)json_array_append_new(
        c->stores, json_pack("{s:s, s:s}", "name", store, "url", url));
    sl_free(url);
    return 0;
}

int
sl__api_stores_get(struct sl__req *req)
{
    struct store_list_ctx c = {req, json_array()};
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_obj_store_list(req->svc->store, add_store, &c, &err);
    if (rc != 0) {
        json_decref(c.stores);
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(req, 200, json_pack("{s:o}", "stores", c.stores));
}

int
sl__api_store_put(struct sl__req *req)
{
    const char *store = sl__req_param(req, "store");
    struct sl_err err;
    int created = 0;
    int rc = 0;
    char *url = NULL;

    sl_err_clear(&err);
    rc = sl_obj_store_create(req->svc->store, store, &created, &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    url = store_url(req, store);
    rc = sl__reply_json(req,
                        created ? 201 : 200,
                        json_pack("{s:s, s:s, s:b}",
                                  "storeName",
                                  store,
                                  "url",
                                  url,
                                  "created",
                                  created));
    sl_free(url);
    return rc;
}

struct object_list_ctx {
    struct sl__req *req;
    const char *store;
    json_t *objects;
    uint64_t limit;
    uint64_t count;
    uint64_t size;
};

static int
add_object(void *ctx, const struct sl_obj_info *info)
{
    struct object_list_ctx *c = ctx;
    char ts[32];
    char *url = NULL;

    c->count++;
    c->size += info->size;
    if (json_array_size(c->objects) >= c->limit) {
        return 0;
    }
    sl_time_format(info->mtime_ms, ts, sizeof(ts));
    url = object_url(c->req, c->store, info->id);
    (void)json_array_append_new(c->objects,
                                json_pack("{s:s, s:I, s:s, s:s}",
                                          "id",
                                          info->id,
                                          "size",
                                          (json_int_t)info->size,
                                          "timestamp",
                                          ts,
                                          "url",
                                          url));
    sl_free(url);
    return 0;
}

int
sl__api_store_get(struct sl__req *req)
{
    struct object_list_ctx c;
    struct sl_err err;
    const char *prefix = sl__req_query(req, "prefix");
    int rc = 0;

    memset(&c, 0, sizeof(c));
    sl_err_clear(&err);
    c.req = req;
    c.store = sl__req_param(req, "store");
    rc = sl__req_query_u64(
        req, "limit", LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT, &c.limit);
    if (rc != 0) {
        return rc;
    }
    c.objects = json_array();
    rc = sl_obj_list(req->svc->store, c.store, prefix, add_object, &c, &err);
    if (rc != 0) {
        json_decref(c.objects);
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(req,
                          200,
                          json_pack("{s:s, s:I, s:I, s:o, s:b}",
                                    "storeName",
                                    c.store,
                                    "objectCount",
                                    (json_int_t)c.count,
                                    "size",
                                    (json_int_t)c.size,
                                    "objects",
                                    c.objects,
                                    "truncated",
                                    c.count > json_array_size(c.objects)));
}

int
sl__api_store_delete(struct sl__req *req)
{
    const char *store = sl__req_param(req, "store");
    char job[SL_NAME_MAX + 1];
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    if (req->svc->jm != NULL && sl_jm_store_in_use(req->svc->jm, store, job)) {
        return sl__reply_error(req,
                               SL_ECONFLICT,
                               "store",
                               "store '%s' is used by the active run of job "
                               "'%s'",
                               store,
                               job);
    }
    rc = sl_obj_store_delete(req->svc->store, store, &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(
        req, 200, json_pack("{s:s, s:b}", "storeName", store, "deleted", 1));
}

/* ------------------------------------------------------------------------
 * Objects.
 * --------------------------------------------------------------------- */

/*
 * A PUT in progress, in req->ctx from on_begin to on_cleanup: its writer
 * and the body's first 8 bytes, held back until they are all there.  When
 * they are a bulk header, its SL_BULK_FLAG_HEADS is cleared: the record
 * heads of a bulk from outside are not trusted (docs/bulk-format.md).
 */
struct put {
    struct sl_obj_writer *w;
    unsigned char first[8];
    size_t nfirst;
};

/* Write the held first bytes (checked as a bulk header when complete). */
static int
put_first(struct put *p, struct sl_err *err)
{
    size_t n = p->nfirst;

    if (n == sizeof(p->first)) {
        sl_bulk_distrust(p->first);
    }
    p->nfirst = sizeof(p->first) + 1; /* written */
    return n > 0 ? sl_obj_writer_write(p->w, p->first, n, err) : 0;
}

int
sl__api_object_put_begin(struct sl__req *req)
{
    struct sl_obj_writer *w = NULL;
    struct put *p = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_obj_writer_open(req->svc->store,
                            sl__req_param(req, "store"),
                            sl__req_param(req, "id"),
                            &w,
                            &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    p = sl_calloc(1, sizeof(*p));
    p->w = w;
    req->ctx = p;
    return 0;
}

int
sl__api_object_put_body(struct sl__req *req,
                        const char *data,
                        size_t len,
                        struct sl_err *err)
{
    struct put *p = req->ctx;
    int rc = 0;

    while (p->nfirst < sizeof(p->first) && len > 0) {
        p->first[p->nfirst++] = (unsigned char)*data++;
        len--;
        if (p->nfirst == sizeof(p->first)) {
            rc = put_first(p, err);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return len > 0 ? sl_obj_writer_write(p->w, data, len, err) : 0;
}

int
sl__api_object_put(struct sl__req *req)
{
    const char *store = sl__req_param(req, "store");
    const char *id = sl__req_param(req, "id");
    struct put *p = req->ctx;
    struct sl_err err;
    int replaced = 0;
    int rc = 0;
    char *url = NULL;
    uint64_t size = 0;

    sl_err_clear(&err);
    if (p->nfirst <= sizeof(p->first)) { /* a body of fewer than 8 bytes */
        rc = put_first(p, &err);
    }
    size = sl_obj_writer_size(p->w);
    if (rc == 0) {
        rc = sl_obj_writer_commit(p->w, &replaced, &err);
    }
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    url = object_url(req, store, id);
    rc = sl__reply_json(req,
                        replaced ? 200 : 201,
                        json_pack("{s:s, s:s, s:I, s:s}",
                                  "storeName",
                                  store,
                                  "id",
                                  id,
                                  "size",
                                  (json_int_t)size,
                                  "url",
                                  url));
    sl_free(url);
    return rc;
}

void
sl__api_object_put_cleanup(struct sl__req *req)
{
    struct put *p = req->ctx;

    if (p != NULL) {
        sl_obj_writer_free(p->w);
        sl_free(p);
    }
    req->ctx = NULL;
}

static ssize_t
read_object(void *ctx, uint64_t pos, char *buf, size_t max)
{
    size_t n = 0;
    struct sl_err err;

    if (sl_obj_reader_pread(ctx, pos, buf, max, &n, &err) != 0) {
        SL_WARN("http: object read failed: %s", err.message);
        return -1;
    }
    if (n == 0) {
        /* The object shrank under us; the length was promised. */
        return -1;
    }
    return (ssize_t)n;
}

static void
free_reader(void *ctx)
{
    sl_obj_reader_free(ctx);
}

int
sl__api_object_get(struct sl__req *req)
{
    struct sl_obj_reader *r = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_obj_reader_open(req->svc->store,
                            sl__req_param(req, "store"),
                            sl__req_param(req, "id"),
                            &r,
                            &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_stream(req,
                            200,
                            "application/octet-stream",
                            sl_obj_reader_size(r),
                            read_object,
                            r,
                            free_reader);
}

int
sl__api_object_delete(struct sl__req *req)
{
    const char *store = sl__req_param(req, "store");
    const char *id = sl__req_param(req, "id");
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_obj_delete(req->svc->store, store, id, &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(
        req,
        200,
        json_pack(
            "{s:s, s:s, s:b}", "storeName", store, "id", id, "deleted", 1));
}

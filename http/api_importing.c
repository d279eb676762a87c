/*
 * Importing services REST API: the delta service's sources, entry counts
 * and clearing, and the same for the visited links of the web crawler
 * (docs/deltaservice.md).  Both stores answer the same shapes, so every
 * handler here is one function parametrised by a struct kind; the route
 * handlers only pick the kind.  Clearing a source that an active run
 * crawls answers 409: its crawl would otherwise see every record (or link)
 * as new half-way through and delta-delete would remove what it had not
 * visited.  Clearing delta entries invalidates them (the next crawl
 * pushes every record again and still deletes what disappeared,
 * docs/deltaservice.md "Re-indexing a source"); clearing visited links
 * removes them.
 */
#include <string.h>

#include "http/http_int.h"

/* One importing service: its path segment, messages and delta calls. */
struct kind {
    const char *name;  /* path segment under /smila/importing/ */
    const char *what;  /* "delta entries", for messages */
    const char *store; /* "delta store", for messages */
    int (*count)(struct sl_delta *d,
                 const char *source,
                 uint64_t *total,
                 uint64_t *per_shard,
                 struct sl_err *err);
    int (*sources)(struct sl_delta *d,
                   int (*cb)(void *ctx, const char *source),
                   void *ctx,
                   struct sl_err *err);
    int (*clear)(struct sl_delta *d, const char *source, struct sl_err *err);
    int (*clear_all)(struct sl_delta *d, struct sl_err *err);
    /* What DELETE does instead of clear and clear_all (source NULL: every
     * source), and the count of what it did for GET; NULL: clear. */
    int (*invalidate)(struct sl_delta *d,
                      const char *source,
                      struct sl_err *err);
    int (*invalidated)(struct sl_delta *d,
                       const char *source,
                       uint64_t *total,
                       struct sl_err *err);
};

static int
visited_clear_all(struct sl_delta *d, struct sl_err *err)
{
    return sl_delta_visited_clear(d, NULL, err);
}

static const struct kind delta_kind = {"delta",
                                       "delta entries",
                                       "delta store",
                                       sl_delta_count,
                                       sl_delta_sources,
                                       sl_delta_clear,
                                       sl_delta_clear_all,
                                       sl_delta_invalidate,
                                       sl_delta_invalidated_count};

static const struct kind visited_kind = {"visitedlinks",
                                         "visited links",
                                         "visited links",
                                         sl_delta_visited_count,
                                         sl_delta_visited_sources,
                                         sl_delta_visited_clear,
                                         visited_clear_all,
                                         NULL,
                                         NULL};

static const struct kind *const kinds[] = {&delta_kind, &visited_kind};

int
sl__api_importing_get(struct sl__req *req)
{
    json_t *links = json_array();
    size_t i = 0;

    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        char *path = sl_asprintf("/smila/importing/%s/", kinds[i]->name);
        char *url = sl__req_url(req, path);

        (void)json_array_append_new(
            links, json_pack("{s:s, s:s}", "name", kinds[i]->name, "url", url));
        sl_free(url);
        sl_free(path);
    }
    return sl__reply_json(req, 200, json_pack("{s:o}", "links", links));
}

struct sources_ctx {
    struct sl__req *req;
    const struct kind *kind;
    json_t *list;
    int rc;
    struct sl_err err;
};

static int
add_source(void *ctx, const char *source)
{
    struct sources_ctx *c = ctx;
    uint64_t total = 0;
    char *path = NULL;
    char *url = NULL;

    c->rc = c->kind->count(c->req->svc->delta, source, &total, NULL, &c->err);
    if (c->rc != 0) {
        return 1;
    }
    path = sl_asprintf("/smila/importing/%s/%s/", c->kind->name, source);
    url = sl__req_url(c->req, path);
    (void)json_array_append_new(c->list,
                                json_pack("{s:s, s:I, s:s}",
                                          "source",
                                          source,
                                          "entryCount",
                                          (json_int_t)total,
                                          "url",
                                          url));
    sl_free(url);
    sl_free(path);
    return 0;
}

static int
list(struct sl__req *req, const struct kind *k)
{
    struct sources_ctx c;
    int rc = 0;

    memset(&c, 0, sizeof(c));
    c.req = req;
    c.kind = k;
    c.list = json_array();
    rc = k->sources(req->svc->delta, add_source, &c, &c.err);
    if (rc != 0) {
        json_decref(c.list);
        return sl__reply_err(req, &c.err);
    }
    return sl__reply_json(req, 200, json_pack("{s:o}", "sources", c.list));
}

static int
clear_all(struct sl__req *req, const struct kind *k)
{
    char job[SL_NAME_MAX + 1];
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    if (sl_jm_source_in_use(req->svc->jm, NULL, job)) {
        return sl__reply_error(req,
                               SL_ECONFLICT,
                               "source",
                               "job '%s' is crawling a data source; clear the "
                               "%s after its run",
                               job,
                               k->store);
    }
    rc = k->invalidate != NULL ? k->invalidate(req->svc->delta, NULL, &err)
                               : k->clear_all(req->svc->delta, &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(req, 200, json_pack("{s:b}", "cleared", 1));
}

static int
source_get(struct sl__req *req, const struct kind *k)
{
    const char *source = sl__req_param(req, "source");
    unsigned n = sl_delta_shards(req->svc->delta);
    uint64_t *per = sl_calloc(n, sizeof(*per));
    uint64_t total = 0;
    uint64_t invalidated = 0; /* delta entries only */
    json_t *shards = NULL;
    json_t *body = NULL;
    struct sl_err err;
    unsigned i = 0;
    int rc = 0;

    sl_err_clear(&err);
    rc = k->count(req->svc->delta, source, &total, per, &err);
    if (rc != 0) {
        sl_free(per);
        return sl__reply_err(req, &err);
    }
    if (total == 0) {
        sl_free(per);
        return sl__reply_error(
            req, SL_ENOENT, "source", "no %s for source '%s'", k->what, source);
    }
    if (k->invalidated != NULL) {
        rc = k->invalidated(req->svc->delta, source, &invalidated, &err);
    }
    if (rc != 0) {
        sl_free(per);
        return sl__reply_err(req, &err);
    }
    shards = json_array();
    for (i = 0; i < n; i++) {
        (void)json_array_append_new(shards,
                                    json_pack("{s:i, s:I}",
                                              "shard",
                                              (int)i,
                                              "entryCount",
                                              (json_int_t)per[i]));
    }
    sl_free(per);
    body = json_pack(
        "{s:s, s:I}", "source", source, "entryCount", (json_int_t)total);
    if (k->invalidated != NULL) {
        (void)json_object_set_new(
            body, "invalidatedCount", json_integer((json_int_t)invalidated));
    }
    (void)json_object_set_new(body, "shards", shards);
    return sl__reply_json(req, 200, body);
}

static int
source_delete(struct sl__req *req, const struct kind *k)
{
    const char *source = sl__req_param(req, "source");
    char job[SL_NAME_MAX + 1];
    struct sl_err err;
    json_t *out = NULL;
    int purge = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (k == &delta_kind && (rc = sl__api_purge_flag(req, &purge)) != 0) {
        return rc;
    }
    if (purge) { /* it checks that no run crawls the source */
        rc = sl__api_purge_source(req, source, &out, &err);
        return rc != 0 ? sl__reply_err(req, &err)
                       : sl__reply_json(req, 200, out);
    }
    if (sl_jm_source_in_use(req->svc->jm, source, job)) {
        return sl__reply_error(req,
                               SL_ECONFLICT,
                               "source",
                               "source '%s' is being crawled by the active run "
                               "of job '%s'",
                               source,
                               job);
    }
    rc = k->invalidate != NULL ? k->invalidate(req->svc->delta, source, &err)
                               : k->clear(req->svc->delta, source, &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(
        req, 200, json_pack("{s:s, s:b}", "source", source, "cleared", 1));
}

/* ------------------------------------------------------------------------
 * Route handlers: /smila/importing/delta/ and /smila/importing/visitedlinks/
 * --------------------------------------------------------------------- */

int
sl__api_delta_list(struct sl__req *req)
{
    return list(req, &delta_kind);
}

int
sl__api_delta_clear_all(struct sl__req *req)
{
    return clear_all(req, &delta_kind);
}

int
sl__api_delta_source_get(struct sl__req *req)
{
    return source_get(req, &delta_kind);
}

int
sl__api_delta_source_delete(struct sl__req *req)
{
    return source_delete(req, &delta_kind);
}

int
sl__api_visited_list(struct sl__req *req)
{
    return list(req, &visited_kind);
}

int
sl__api_visited_clear_all(struct sl__req *req)
{
    return clear_all(req, &visited_kind);
}

int
sl__api_visited_source_get(struct sl__req *req)
{
    return source_get(req, &visited_kind);
}

int
sl__api_visited_source_delete(struct sl__req *req)
{
    return source_delete(req, &visited_kind);
}

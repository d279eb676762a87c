/*
 * Importing services REST API: the delta service's sources, entry counts
 * and clearing (docs/deltaservice.md).  Clearing a source that an active
 * run crawls answers 409: its crawl would otherwise see every record as new
 * half-way through and delta-delete would remove what it had not visited.
 */
#include <string.h>

#include "http/http_int.h"

int
sl_api_importing_get(struct sl_req *req)
{
    char *url = sl_req_url(req, "/smila/importing/delta/");
    int rc = sl_reply_json(
        req,
        200,
        json_pack("{s:[{s:s, s:s}]}", "links", "name", "delta", "url", url));

    sl_free(url);
    return rc;
}

struct sources_ctx {
    struct sl_req *req;
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

    c->rc = sl_delta_count(c->req->svc->delta, source, &total, NULL, &c->err);
    if (c->rc != 0) {
        return 1;
    }
    path = sl_asprintf("/smila/importing/delta/%s/", source);
    url = sl_req_url(c->req, path);
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

int
sl_api_delta_list(struct sl_req *req)
{
    struct sources_ctx c;
    int rc = 0;

    memset(&c, 0, sizeof(c));
    c.req = req;
    c.list = json_array();
    rc = sl_delta_sources(req->svc->delta, add_source, &c, &c.err);
    if (rc != 0) {
        json_decref(c.list);
        return sl_reply_err(req, &c.err);
    }
    return sl_reply_json(req, 200, json_pack("{s:o}", "sources", c.list));
}

int
sl_api_delta_clear_all(struct sl_req *req)
{
    char job[SL_NAME_MAX + 1];
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    if (sl_jm_source_in_use(req->svc->jm, NULL, job)) {
        return sl_reply_error(req,
                              SL_ECONFLICT,
                              "source",
                              "job '%s' is crawling a data source; clear the "
                              "delta store after its run",
                              job);
    }
    rc = sl_delta_clear_all(req->svc->delta, &err);
    if (rc != 0) {
        return sl_reply_err(req, &err);
    }
    return sl_reply_json(req, 200, json_pack("{s:b}", "cleared", 1));
}

int
sl_api_delta_source_get(struct sl_req *req)
{
    const char *source = sl_req_param(req, "source");
    unsigned n = sl_delta_shards(req->svc->delta);
    uint64_t *per = sl_calloc(n, sizeof(*per));
    uint64_t total = 0;
    json_t *shards = NULL;
    struct sl_err err;
    unsigned i = 0;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_delta_count(req->svc->delta, source, &total, per, &err);
    if (rc != 0) {
        sl_free(per);
        return sl_reply_err(req, &err);
    }
    if (total == 0) {
        sl_free(per);
        return sl_reply_error(req,
                              SL_ENOENT,
                              "source",
                              "no delta entries for source '%s'",
                              source);
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
    return sl_reply_json(req,
                         200,
                         json_pack("{s:s, s:I, s:o}",
                                   "source",
                                   source,
                                   "entryCount",
                                   (json_int_t)total,
                                   "shards",
                                   shards));
}

int
sl_api_delta_source_delete(struct sl_req *req)
{
    const char *source = sl_req_param(req, "source");
    char job[SL_NAME_MAX + 1];
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    if (sl_jm_source_in_use(req->svc->jm, source, job)) {
        return sl_reply_error(req,
                              SL_ECONFLICT,
                              "source",
                              "source '%s' is being crawled by the active run "
                              "of job '%s'",
                              source,
                              job);
    }
    rc = sl_delta_clear(req->svc->delta, source, &err);
    if (rc != 0) {
        return sl_reply_err(req, &err);
    }
    return sl_reply_json(
        req, 200, json_pack("{s:s, s:b}", "source", source, "cleared", 1));
}

/*
 * Embedded index REST API (docs/index.md): the indexes with their document
 * counts, full-text search, paging through record ids, fetching one
 * stored document and deleting an index.  Writes come from the indexWriter
 * worker, not from here.
 */
#include <string.h>

#include "http/http_int.h"

#define SEARCH_DEFAULT_LIMIT  10
#define RECORDS_DEFAULT_LIMIT 100

/* The index service may be absent (servers built without it): 503. */
static int
no_index(struct sl__req *req)
{
    if (req->svc->index != NULL) {
        return 0;
    }
    (void)sl__reply_error(
        req, SL_ENOTREADY, NULL, "the index service is not available");
    return 1;
}

/*
 * Read "limit" as 1..SL_INDEX_MAX_LIMIT (default @def); replies 400 and
 * returns SL_EINVAL otherwise.
 */
static int
query_limit(struct sl__req *req, uint64_t def, uint64_t *out)
{
    int rc = sl__req_query_u64(req, "limit", def, SL_INDEX_MAX_LIMIT, out);

    if (rc != 0) {
        return rc;
    }
    if (*out == 0) {
        (void)sl__reply_error(req,
                              SL_EINVAL,
                              "limit",
                              "query argument 'limit' must be a whole number "
                              "from 1 to %u, not '0'",
                              SL_INDEX_MAX_LIMIT);
        return SL_EINVAL;
    }
    return 0;
}

int
sl__api_index_list(struct sl__req *req)
{
    json_t *list = NULL;
    json_t *item = NULL;
    struct sl_err err;
    size_t i = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (no_index(req)) {
        return 0;
    }
    rc = sl_index_list(req->svc->index, &list, &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    json_array_foreach(list, i, item)
    {
        char *path =
            sl_asprintf("/smila/index/%s/",
                        json_string_value(json_object_get(item, "name")));
        char *url = sl__req_url(req, path);

        (void)json_object_set_new(item, "url", json_string(url));
        sl_free(url);
        sl_free(path);
    }
    return sl__reply_json(req, 200, json_pack("{s:o}", "indexes", list));
}

int
sl__api_index_get(struct sl__req *req)
{
    const char *name = sl__req_param(req, "name");
    struct sl_index_stats st;
    struct sl_err err;

    sl_err_clear(&err);
    if (no_index(req)) {
        return 0;
    }
    if (sl_index_stats(req->svc->index, name, &st, &err) != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(req,
                          200,
                          json_pack("{s:s, s:I, s:I, s:b}",
                                    "name",
                                    name,
                                    "documentCount",
                                    (json_int_t)st.documents,
                                    "segments",
                                    (json_int_t)st.segments,
                                    "merging",
                                    st.merging));
}

int
sl__api_index_delete(struct sl__req *req)
{
    const char *name = sl__req_param(req, "name");
    char job[SL_NAME_MAX + 1];
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    if (no_index(req)) {
        return 0;
    }
    rc = sl_name_check_entity(name, &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    if (req->svc->jm != NULL && sl_jm_param_in_use(req->svc->jm,
                                                   SL__WRITER_WORKER,
                                                   SL__WRITER_PARAM,
                                                   SL__WRITER_INDEX,
                                                   name,
                                                   job)) {
        return sl__reply_error(req,
                               SL_ECONFLICT,
                               "index",
                               "index '%s' is written by the active run of job "
                               "'%s'; delete it after that run",
                               name,
                               job);
    }
    rc = sl_index_drop(req->svc->index, name, &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(
        req, 200, json_pack("{s:s, s:b}", "name", name, "deleted", 1));
}

/* sort= and order= of a search into @o; 0, or a 400 sent. */
static int
search_order(struct sl__req *req, struct sl_index_search_opts *o)
{
    static const char *const sorts[] = {"relevance", "date", "size"};
    const char *sort = sl__req_query(req, "sort");
    const char *order = sl__req_query(req, "order");
    size_t i = 0;

    for (i = 0; sort != NULL && i < sizeof(sorts) / sizeof(sorts[0]); i++) {
        if (strcmp(sort, sorts[i]) == 0) {
            o->sort = (enum sl_index_sort)i;
            break;
        }
    }
    if (sort != NULL && i == sizeof(sorts) / sizeof(sorts[0])) {
        (void)sl__reply_error(req,
                              SL_EINVAL,
                              "sort",
                              "sort must be relevance, date or size, not "
                              "'%s'",
                              sort);
        return SL_EINVAL;
    }
    if (order != NULL && strcmp(order, "asc") != 0 &&
        strcmp(order, "desc") != 0) {
        (void)sl__reply_error(req,
                              SL_EINVAL,
                              "order",
                              "order must be asc or desc, not '%s'",
                              order);
        return SL_EINVAL;
    }
    o->ascending = order != NULL && strcmp(order, "asc") == 0;
    return 0;
}

int
sl__api_index_search(struct sl__req *req)
{
    const char *name = sl__req_param(req, "name");
    struct sl_index_search_opts o;
    json_t *result = NULL;
    struct sl_err err;
    uint64_t limit = 0;
    uint64_t offset = 0;
    int rc = 0;

    sl_err_clear(&err);
    memset(&o, 0, sizeof(o));
    if (no_index(req)) {
        return 0;
    }
    o.query = sl__req_query(req, "q");
    o.facets = sl__req_query(req, "facets");
    o.cursor = sl__req_query(req, "cursor");
    if (o.query == NULL || o.query[0] == '\0') {
        return sl__reply_error(
            req, SL_EINVAL, "q", "query argument 'q' (the query) is required");
    }
    rc = query_limit(req, SEARCH_DEFAULT_LIMIT, &limit);
    if (rc != 0) {
        return 0;
    }
    rc = sl__req_query_u64(req, "offset", 0, SL_INDEX_MAX_OFFSET, &offset);
    if (rc != 0 || search_order(req, &o) != 0) {
        return 0;
    }
    o.limit = (unsigned)limit;
    o.offset = (unsigned)offset;
    rc = sl_index_search_opts(req->svc->index, name, &o, &result, &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(req, 200, result);
}

int
sl__api_index_records(struct sl__req *req)
{
    const char *name = sl__req_param(req, "name");
    const char *after = sl__req_query(req, "after");
    json_t *result = NULL;
    struct sl_err err;
    uint64_t limit = 0;
    int rc = 0;

    sl_err_clear(&err);
    if (no_index(req)) {
        return 0;
    }
    rc = query_limit(req, RECORDS_DEFAULT_LIMIT, &limit);
    if (rc != 0) {
        return 0;
    }
    rc = sl_index_records(
        req->svc->index, name, after, (unsigned)limit, &result, &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(req, 200, result);
}

int
sl__api_index_doc_get(struct sl__req *req)
{
    const char *name = sl__req_param(req, "name");
    const char *id = sl__req_param(req, "id");
    json_t *doc = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    if (no_index(req)) {
        return 0;
    }
    rc = sl_index_get(req->svc->index, name, id, &doc, &err);
    if (rc == SL_ENOENT) {
        /* The router drops a trailing '/' of the path, an encoded one
         * too, so the id of a site's root ("http://host/") arrives
         * without it: not found as given, the id with a '/' is. */
        char *slashed = sl_asprintf("%s/", id);
        struct sl_err err2;

        sl_err_clear(&err2);
        if (sl_index_get(req->svc->index, name, slashed, &doc, &err2) == 0) {
            rc = 0;
        }
        sl_free(slashed);
    }
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(req, 200, doc);
}

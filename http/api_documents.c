/*
 * What happened to documents (docs/rest-api.md, "Documents"): the history
 * of a job run, page by page, from the jobmanager; and one document as
 * the services know it: its delta entry, the indexes that hold it and
 * its last problem (failure or skip).
 */
#include <string.h>

#include "http/http_int.h"

#define DOCS_DEFAULT_LIMIT 100
#define DOCS_MAX_LIMIT     1000

/* GET /smila/jobmanager/jobs/:name/documents and
 * /smila/jobmanager/jobs/:name/:run/documents */
int
sl__api_jm_run_documents(struct sl__req *req)
{
    const char *st = sl__req_query(req, "state");
    uint64_t after = 0;
    uint64_t limit = 0;
    json_t *out = NULL;
    struct sl_err err;
    int state = -1;
    int rc = 0;

    sl_err_clear(&err);
    if (st != NULL && (state = sl_jm_doc_state_parse(st)) < 0) {
        return sl__reply_error(req,
                               SL_EINVAL,
                               "state",
                               "state must be new, changed, deleted, failed "
                               "or skipped, not '%s'",
                               st);
    }
    if (sl__req_query_u64(req, "after", 0, UINT64_MAX, &after) != 0 ||
        sl__req_query_u64(
            req, "limit", DOCS_DEFAULT_LIMIT, DOCS_MAX_LIMIT, &limit) != 0) {
        return 0;
    }
    if (limit == 0) {
        return sl__reply_error(
            req, SL_EINVAL, "limit", "limit must be 1 to %d", DOCS_MAX_LIMIT);
    }
    rc = sl_jm_run_documents(req->svc->jm,
                             sl__req_param(req, "name"),
                             sl__req_param(req, "run"),
                             state,
                             after,
                             (unsigned)limit,
                             &out,
                             &err);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(req, 200, out);
}

/* The next check of @id (continuous crawls), when it has one, into
 * @out: nextCheck (ISO time) and recheckIntervalSeconds. */
static void
recheck_json(struct sl__req *req,
             const char *source,
             const char *id,
             json_t *out)
{
    struct sl_err err;
    uint64_t next = 0;
    uint64_t interval = 0;
    char when[40];

    sl_err_clear(&err);
    if (sl_delta_recheck_get(
            req->svc->delta, source, id, &next, &interval, &err) != 0) {
        return;
    }
    sl_time_format((int64_t)next, when, sizeof(when));
    (void)json_object_set_new(out, "nextCheck", json_string(when));
    (void)json_object_set_new(out,
                              "recheckIntervalSeconds",
                              json_integer((json_int_t)(interval / 1000)));
}

/* The delta entry of @id as JSON, or null; 0 or an error (in @err). */
static int
delta_json(struct sl__req *req,
           const char *source,
           const char *id,
           json_t **out,
           struct sl_err *err)
{
    struct sl_delta_entry e;
    uint64_t current = 0;
    int rc = 0;

    *out = json_null();
    if (req->svc->delta == NULL) {
        return 0;
    }
    rc = sl_delta_entry_get(req->svc->delta, source, id, &e, err);
    if (rc == SL_ENOENT) {
        sl_err_clear(err);
        return 0;
    }
    if (rc == 0) {
        rc = sl_delta_run_current(req->svc->delta, source, &current, err);
    }
    if (rc != 0) {
        sl_free(e.compound_id);
        return rc;
    }
    json_decref(*out);
    *out = json_pack("{s:s, s:I, s:I, s:b}",
                     "hash",
                     e.hash,
                     "lastSeenRun",
                     (json_int_t)e.visited,
                     "sourceCurrentRun",
                     (json_int_t)current,
                     "isCompound",
                     e.is_compound);
    if (e.compound_id != NULL) {
        (void)json_object_set_new(
            *out, "compoundId", json_string(e.compound_id));
    }
    sl_free(e.compound_id);
    recheck_json(req, source, id, *out);
    return 0;
}

/* The names of the indexes that hold @id. */
static json_t *
indexes_json(struct sl__req *req, const char *id)
{
    json_t *names = json_array();
    json_t *list = NULL;
    json_t *ix = NULL;
    struct sl_err err;
    size_t i = 0;

    sl_err_clear(&err);
    if (req->svc->index == NULL ||
        sl_index_list(req->svc->index, &list, &err) != 0) {
        return names;
    }
    json_array_foreach(list, i, ix)
    {
        const char *name = json_string_value(json_object_get(ix, "name"));
        json_t *doc = NULL;

        if (name != NULL &&
            sl_index_get(req->svc->index, name, id, &doc, &err) == 0) {
            (void)json_array_append_new(names, json_string(name));
        }
        json_decref(doc);
    }
    json_decref(list);
    return names;
}

/* GET /smila/importing/documents/:source/\*id, or .../:source?id=ID (for
 * ids the path cannot carry: the server drops a trailing slash) */
int
sl__api_document_get(struct sl__req *req)
{
    const char *source = sl__req_param(req, "source");
    const char *id = sl__req_param(req, "id");
    json_t *delta = NULL;
    json_t *indexes = NULL;
    json_t *last = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    if (id == NULL) {
        id = sl__req_query(req, "id");
    }
    if (sl_delta_source_check(source, &err) != 0) {
        return sl__reply_err(req, &err);
    }
    if (id == NULL || id[0] == '\0' || strlen(id) > SL_JM_DOC_ID_MAX) {
        return sl__reply_error(req,
                               SL_EINVAL,
                               "id",
                               "a document id must have 1 to %d bytes",
                               SL_JM_DOC_ID_MAX);
    }
    rc = delta_json(req, source, id, &delta, &err);
    if (rc == 0) {
        rc = sl_jm_document_problem(req->svc->jm, source, id, &last, &err);
        if (rc == SL_ENOENT) {
            rc = 0;
            last = json_null();
        }
    }
    if (rc != 0) {
        json_decref(delta);
        return sl__reply_err(req, &err);
    }
    indexes = indexes_json(req, id);
    if (json_is_null(delta) && json_is_null(last) &&
        json_array_size(indexes) == 0) {
        json_decref(delta);
        json_decref(last);
        json_decref(indexes);
        return sl__reply_error(req,
                               SL_ENOENT,
                               "id",
                               "source '%s' knows no document '%s'",
                               source,
                               id);
    }
    return sl__reply_json(req,
                          200,
                          json_pack("{s:s, s:s, s:o, s:o, s:o}",
                                    "source",
                                    source,
                                    "id",
                                    id,
                                    "delta",
                                    delta,
                                    "indexes",
                                    indexes,
                                    "lastProblem",
                                    last));
}

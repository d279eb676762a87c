/*
 * Jobmanager REST API (docs/jobmanager.md): definitions, job runs,
 * workflow runs, the task protocol and events.  Handlers check the request
 * shape and map SL_E* codes to the error body of docs/rest-api.md; the
 * jobmanager does the rest.
 */
#include <string.h>

#include "deltaservice/deltaservice.h"
#include "http/http_int.h"

/* How long a finish waits for the bulkbuilder to hand over the records it
 * accepted for the job (sl_bb_drain). */
#define FINISH_DRAIN_MS 30000u

/* The optional body of a POST: empty is fine, else a JSON object. */
static int
optional_object(struct sl__req *req, json_t **out)
{
    int rc = 0;

    *out = NULL;
    if (req->body.len == 0) {
        return 0;
    }
    rc = sl__req_body_json(req, out);
    if (rc != 0) {
        return rc;
    }
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        return sl__reply_error(
            req, SL_EINVAL, "body", "the body must be a JSON object");
    }
    return 0;
}

static int
reply_or_error(struct sl__req *req,
               int rc,
               const struct sl_err *err,
               unsigned status,
               json_t *body)
{
    if (rc != 0) {
        json_decref(body);
        return sl__reply_err(req, err);
    }
    return sl__reply_json(req, status, body);
}

/* "returnDetails" query flag: true/false, default @def. */
static int
details_flag(struct sl__req *req, int def)
{
    const char *v = sl__req_query(req, "returnDetails");

    if (v == NULL) {
        return def;
    }
    return strcmp(v, "true") == 0 || strcmp(v, "1") == 0;
}

/* ------------------------------------------------------------------------
 * /smila/jobmanager/ and the read-only resources.
 * --------------------------------------------------------------------- */

int
sl__api_jm_get(struct sl__req *req)
{
    static const char *const subs[] = {
        "dataobjecttypes", "workers", "buckets", "workflows", "jobs"};
    json_t *links = json_array();
    size_t i = 0;

    for (i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
        char *path = sl_asprintf("/smila/jobmanager/%s/", subs[i]);
        char *url = sl__req_url(req, path);

        (void)json_array_append_new(
            links, json_pack("{s:s, s:s}", "name", subs[i], "url", url));
        sl_free(url);
        sl_free(path);
    }
    return sl__reply_json(req, 200, json_pack("{s:o}", "links", links));
}

/* Add "url" to every named item of @list under @base ("/smila/.../"). */
static void
add_urls(struct sl__req *req, json_t *list, const char *base)
{
    size_t i = 0;
    json_t *v = NULL;

    json_array_foreach(list, i, v)
    {
        const char *name = json_string_value(json_object_get(v, "name"));
        char *path = sl_asprintf("%s%s/", base, name ? name : "");
        char *url = sl__req_url(req, path);

        (void)json_object_set_new(v, "url", json_string(url));
        sl_free(url);
        sl_free(path);
    }
}

int
sl__api_jm_dots_get(struct sl__req *req)
{
    const char *name = sl__req_param(req, "name");
    json_t *j = sl_jm_dots(req->svc->jm, name);

    if (j == NULL) {
        return sl__reply_error(
            req, SL_ENOENT, "name", "no data object type '%s'", name);
    }
    if (name != NULL) {
        return sl__reply_json(req, 200, j);
    }
    add_urls(req, j, "/smila/jobmanager/dataobjecttypes/");
    return sl__reply_json(req, 200, json_pack("{s:o}", "dataObjectTypes", j));
}

int
sl__api_jm_workers_get(struct sl__req *req)
{
    const char *name = sl__req_param(req, "name");
    json_t *j = sl_jm_workers(req->svc->jm, name);

    if (j == NULL) {
        return sl__reply_error(req, SL_ENOENT, "name", "no worker '%s'", name);
    }
    if (name != NULL) {
        return sl__reply_json(req, 200, j);
    }
    add_urls(req, j, "/smila/jobmanager/workers/");
    return sl__reply_json(req, 200, json_pack("{s:o}", "workers", j));
}

/* ------------------------------------------------------------------------
 * Buckets, workflows, jobs: list, create/update, get, delete.
 * --------------------------------------------------------------------- */

/* "buckets" from "/smila/jobmanager/buckets/..." (the route's 3rd part). */
static const char *
kind_of(const struct sl__req *req)
{
    if (strncmp(req->path, "/smila/jobmanager/buckets", 25) == 0) {
        return "buckets";
    }
    if (strncmp(req->path, "/smila/jobmanager/workflows", 27) == 0) {
        return "workflows";
    }
    return "jobs";
}

int
sl__api_jm_defs_list(struct sl__req *req)
{
    const char *kind = kind_of(req);
    json_t *list = sl_jm_defs_list(req->svc->jm, kind);
    char *base = sl_asprintf("/smila/jobmanager/%s/", kind);
    size_t i = 0;
    json_t *v = NULL;
    json_t *items = json_array();

    json_array_foreach(list, i, v)
    {
        json_t *item = json_pack("{s:O}", "name", json_object_get(v, "name"));

        if (strcmp(kind, "jobs") == 0 && details_flag(req, 1)) {
            json_t *info = NULL;

            if (sl_jm_job_info(req->svc->jm,
                               json_string_value(json_object_get(v, "name")),
                               0,
                               &info,
                               NULL) == 0) {
                (void)json_object_set(
                    item, "runs", json_object_get(info, "runs"));
                if (json_object_get(info, "scheduling") != NULL) {
                    (void)json_object_set(item,
                                          "scheduling",
                                          json_object_get(info, "scheduling"));
                }
                json_decref(info);
            }
        }
        (void)json_array_append_new(items, item);
    }
    json_decref(list);
    add_urls(req, items, base);
    sl_free(base);
    return sl__reply_json(req, 200, json_pack("{s:o}", kind, items));
}

int
sl__api_jm_defs_post(struct sl__req *req)
{
    const char *kind = kind_of(req);
    json_t *def = NULL;
    json_t *stored = NULL;
    struct sl_err err;
    char *path = NULL;
    char *url = NULL;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl__req_body_json(req, &def);
    if (rc != 0) {
        return rc;
    }
    if (!json_is_object(def)) {
        json_decref(def);
        return sl__reply_error(
            req, SL_EINVALDEF, "body", "a definition must be a JSON object");
    }
    rc = sl_jm_defs_put(req->svc->jm, kind, def, &stored, &err);
    json_decref(def);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    path = sl_asprintf("/smila/jobmanager/%s/%s/",
                       kind,
                       json_string_value(json_object_get(stored, "name")));
    url = sl__req_url(req, path);
    rc = sl__reply_json(req,
                        200,
                        json_pack("{s:O, s:O, s:s}",
                                  "name",
                                  json_object_get(stored, "name"),
                                  "timestamp",
                                  json_object_get(stored, "timestamp"),
                                  "url",
                                  url));
    json_decref(stored);
    sl_free(url);
    sl_free(path);
    return rc;
}

int
sl__api_jm_def_get(struct sl__req *req)
{
    const char *kind = kind_of(req);
    const char *name = sl__req_param(req, "name");
    json_t *def = sl_jm_defs_get(req->svc->jm, kind, name);
    json_t *info = NULL;

    if (def == NULL) {
        return sl__reply_error(req,
                               SL_ENOENT,
                               "name",
                               "no %.*s '%s'",
                               (int)strlen(kind) - 1,
                               kind,
                               name);
    }
    if (strcmp(kind, "jobs") == 0 &&
        sl_jm_job_info(req->svc->jm, name, 0, &info, NULL) == 0) {
        (void)json_object_set(def, "runs", json_object_get(info, "runs"));
        if (json_object_get(info, "scheduling") != NULL) {
            (void)json_object_set(
                def, "scheduling", json_object_get(info, "scheduling"));
        }
        json_decref(info);
    }
    return sl__reply_json(req, 200, def);
}

/*
 * DELETE .../jobs/<job>/?purge=true: the job's source is purged (its
 * documents leave the index) before the job goes.  Without it the
 * documents stay, and the reply says so and how to remove them.
 */
static int
job_delete(struct sl__req *req, const char *name)
{
    json_t *def = sl_jm_defs_get(req->svc->jm, "jobs", name);
    const char *source = json_string_value(
        json_object_get(json_object_get(def, "parameters"), "dataSource"));
    json_t *reply = NULL;
    json_t *purged = NULL;
    uint64_t entries = 0;
    struct sl_err err;
    int purge = 0;
    int rc = sl__api_purge_flag(req, &purge);

    sl_err_clear(&err);
    if (rc != 0) {
        json_decref(def);
        return rc;
    }
    if (purge && source == NULL) {
        rc = sl_err_set(&err,
                        def != NULL ? SL_EINVAL : SL_ENOENT,
                        def != NULL ? "purge" : "name",
                        def != NULL ? "job '%s' has no dataSource parameter "
                                      "to purge"
                                    : "no job '%s'",
                        name);
    } else if (purge) {
        /* a job that cannot go (predefined, running) keeps its documents */
        rc = sl_jm_defs_delete_check(req->svc->jm, "jobs", name, &err);
        if (rc == 0) {
            rc = sl__api_purge_source(req, source, &purged, &err);
        }
    }
    if (rc == 0) {
        rc = sl_jm_defs_delete(req->svc->jm, "jobs", name, &err);
    }
    if (rc == 0) {
        reply = json_pack("{s:s, s:b}", "name", name, "deleted", 1);
        if (purged != NULL) {
            (void)json_object_set(reply, "purge", purged);
        } else if (source != NULL &&
                   sl_delta_count(
                       req->svc->delta, source, &entries, NULL, NULL) == 0 &&
                   entries > 0) {
            (void)json_object_set_new(
                reply,
                "documents",
                json_sprintf("kept: source '%s' keeps its %llu delta entries "
                             "and its documents in the index; DELETE "
                             "/smila/importing/delta/%s/?purge=true removes "
                             "them",
                             source,
                             (unsigned long long)entries,
                             source));
        }
    }
    json_decref(purged);
    json_decref(def); /* @source is borrowed from it */
    return reply_or_error(req, rc, &err, 200, reply);
}

int
sl__api_jm_def_delete(struct sl__req *req)
{
    const char *kind = kind_of(req);
    const char *name = sl__req_param(req, "name");
    struct sl_err err;
    int rc = 0;

    if (strcmp(kind, "jobs") == 0) {
        return job_delete(req, name);
    }
    sl_err_clear(&err);
    rc = sl_jm_defs_delete(req->svc->jm, kind, name, &err);
    return reply_or_error(req,
                          rc,
                          &err,
                          200,
                          json_pack("{s:s, s:b}", "name", name, "deleted", 1));
}

/* ------------------------------------------------------------------------
 * Job runs.
 * --------------------------------------------------------------------- */

int
sl__api_jm_job_start(struct sl__req *req)
{
    const char *job = sl__req_param(req, "name");
    json_t *body = NULL;
    json_t *mode = NULL;
    char run_id[SL_JM_RUN_ID_MAX];
    struct sl_err err;
    char *path = NULL;
    char *url = NULL;
    int rc = 0;

    sl_err_clear(&err);
    rc = optional_object(req, &body);
    if (rc != 0) {
        return rc;
    }
    mode = json_object_get(body, "mode");
    if (mode != NULL && !json_is_string(mode)) {
        json_decref(body);
        return sl__reply_error(
            req,
            SL_EINVAL,
            "mode",
            "mode must be \"runOnce\", \"standard\" or \"continuous\"");
    }
    rc = sl_jm_run_start(
        req->svc->jm, job, json_string_value(mode), run_id, &err);
    json_decref(body);
    if (rc != 0) {
        return sl__reply_err(req, &err);
    }
    path = sl_asprintf("/smila/jobmanager/jobs/%s/%s/", job, run_id);
    url = sl__req_url(req, path);
    rc = sl__reply_json(
        req, 200, json_pack("{s:s, s:s}", "jobId", run_id, "url", url));
    sl_free(url);
    sl_free(path);
    return rc;
}

int
sl__api_jm_run_get(struct sl__req *req)
{
    json_t *out = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_jm_run_get(req->svc->jm,
                       sl__req_param(req, "name"),
                       sl__req_param(req, "run"),
                       details_flag(req, 0),
                       &out,
                       &err);
    return reply_or_error(req, rc, &err, 200, out);
}

int
sl__api_jm_run_delete(struct sl__req *req)
{
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_jm_run_delete(req->svc->jm,
                          sl__req_param(req, "name"),
                          sl__req_param(req, "run"),
                          &err);
    return reply_or_error(
        req,
        rc,
        &err,
        200,
        json_pack(
            "{s:s, s:b}", "jobId", sl__req_param(req, "run"), "deleted", 1));
}

static int
run_action(struct sl__req *req, int cancel)
{
    const char *job = sl__req_param(req, "name");
    const char *run = sl__req_param(req, "run");
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    /* a record the bulkbuilder accepted before the finish belongs to this
     * run: its bulk becomes a workflow run before no new ones may start */
    if (!cancel && req->svc->bulkbuilder != NULL) {
        rc = sl_bb_drain(req->svc->bulkbuilder, job, FINISH_DRAIN_MS, &err);
    }
    if (rc == 0) {
        rc = cancel ? sl_jm_run_cancel(req->svc->jm, job, run, &err)
                    : sl_jm_run_finish(req->svc->jm, job, run, &err);
    }
    return reply_or_error(req,
                          rc,
                          &err,
                          200,
                          json_pack("{s:s, s:s}",
                                    "jobId",
                                    run,
                                    "state",
                                    cancel ? "CANCELING" : "FINISHING"));
}

int
sl__api_jm_run_finish(struct sl__req *req)
{
    return run_action(req, 0);
}

int
sl__api_jm_run_cancel(struct sl__req *req)
{
    return run_action(req, 1);
}

static int
pause_action(struct sl__req *req, int pause)
{
    const char *run = sl__req_param(req, "run");
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_jm_run_pause(
        req->svc->jm, sl__req_param(req, "name"), run, pause, &err);
    return reply_or_error(
        req,
        rc,
        &err,
        200,
        json_pack("{s:s, s:b}", "jobId", run, "paused", pause));
}

int
sl__api_jm_run_pause(struct sl__req *req)
{
    return pause_action(req, 1);
}

int
sl__api_jm_run_resume(struct sl__req *req)
{
    return pause_action(req, 0);
}

/* POST /smila/debug/clock {"now": ms}: the schedules' tick at that time
 * (only with SLUICE_TEST_CLOCK set: tests drive the clock). */
int
sl__api_debug_clock(struct sl__req *req)
{
    json_t *body = NULL;
    json_t *now = NULL;
    int rc = 0;

    if (!req->svc->test_clock) {
        return sl__reply_error(req,
                               SL_ENOENT,
                               "path",
                               "no test clock: the server was not started "
                               "with SLUICE_TEST_CLOCK=1");
    }
    rc = optional_object(req, &body);
    if (rc != 0) {
        return rc;
    }
    now = json_object_get(body, "now");
    if (!json_is_integer(now) || json_integer_value(now) < 0) {
        json_decref(body);
        return sl__reply_error(req,
                               SL_EINVAL,
                               "now",
                               "now must be the time in milliseconds since "
                               "1970-01-01T00:00:00Z");
    }
    sl_jm_sched_tick(req->svc->jm, (int64_t)json_integer_value(now));
    rc = sl__reply_json(req, 200, json_pack("{s:O}", "now", now));
    json_decref(body);
    return rc;
}

int
sl__api_jm_wfrun_get(struct sl__req *req)
{
    json_t *out = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_jm_wfrun_get(req->svc->jm,
                         sl__req_param(req, "name"),
                         sl__req_param(req, "run"),
                         sl__req_param(req, "wf"),
                         &out,
                         &err);
    return reply_or_error(req, rc, &err, 200, out);
}

int
sl__api_jm_wfrun_cancel(struct sl__req *req)
{
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_jm_wfrun_cancel(req->svc->jm,
                            sl__req_param(req, "name"),
                            sl__req_param(req, "run"),
                            sl__req_param(req, "wf"),
                            &err);
    return reply_or_error(req,
                          rc,
                          &err,
                          200,
                          json_pack("{s:s, s:s}",
                                    "workflowRunId",
                                    sl__req_param(req, "wf"),
                                    "state",
                                    "CANCELED"));
}

/* ------------------------------------------------------------------------
 * Tasks.
 * --------------------------------------------------------------------- */

int
sl__api_tasks_get(struct sl__req *req)
{
    const char *worker = sl__req_param(req, "worker");
    json_t *j = sl_jm_task_counts(req->svc->jm, worker);

    if (j == NULL) {
        return sl__reply_error(
            req, SL_ENOENT, "worker", "no worker '%s'", worker);
    }
    if (worker == NULL) {
        size_t i = 0;
        json_t *w = NULL;

        json_array_foreach(json_object_get(j, "workers"), i, w)
        {
            char *path =
                sl_asprintf("/smila/tasks/%s/",
                            json_string_value(json_object_get(w, "name")));
            char *url = sl__req_url(req, path);

            (void)json_object_set_new(w, "url", json_string(url));
            sl_free(url);
            sl_free(path);
        }
    }
    return sl__reply_json(req, 200, j);
}

int
sl__api_tasks_take(struct sl__req *req)
{
    json_t *body = NULL;
    json_t *host = NULL;
    json_t *quals = NULL;
    json_t *task = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = optional_object(req, &body);
    if (rc != 0) {
        return rc;
    }
    host = json_object_get(body, "host");
    quals = json_object_get(body, "qualifiers");
    if ((host != NULL && !json_is_string(host)) ||
        (quals != NULL && !json_is_array(quals))) {
        json_decref(body);
        return sl__reply_error(req,
                               SL_EINVAL,
                               host && !json_is_string(host) ? "host"
                                                             : "qualifiers",
                               "host must be a string and qualifiers an array "
                               "of strings");
    }
    rc = sl_jm_task_take(req->svc->jm,
                         sl__req_param(req, "worker"),
                         json_string_value(host),
                         quals,
                         &task,
                         &err);
    json_decref(body);
    if (rc == SL_ENOENT && strcmp(err.field, "worker") != 0) {
        return sl__reply_empty(req, 204);
    }
    return reply_or_error(req, rc, &err, 200, task);
}

int
sl__api_tasks_keepalive(struct sl__req *req)
{
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_jm_task_keepalive(req->svc->jm,
                              sl__req_param(req, "worker"),
                              sl__req_param(req, "task"),
                              &err);
    return reply_or_error(
        req,
        rc,
        &err,
        200,
        json_pack(
            "{s:s, s:b}", "taskId", sl__req_param(req, "task"), "alive", 1));
}

int
sl__api_tasks_finish(struct sl__req *req)
{
    json_t *body = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl__req_body_json(req, &body);
    if (rc != 0) {
        return rc;
    }
    rc = sl_jm_task_finish(req->svc->jm,
                           sl__req_param(req, "worker"),
                           sl__req_param(req, "task"),
                           body,
                           &err);
    json_decref(body);
    return reply_or_error(
        req,
        rc,
        &err,
        200,
        json_pack(
            "{s:s, s:b}", "taskId", sl__req_param(req, "task"), "finished", 1));
}

/* ------------------------------------------------------------------------
 * Events.
 * --------------------------------------------------------------------- */

int
sl__api_jm_event_begin(struct sl__req *req)
{
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_jm_event_begin(req->svc->jm, sl__req_param(req, "event"), &err);
    if (rc < 0) {
        return sl__reply_err(req, &err);
    }
    return sl__reply_json(
        req,
        200,
        json_pack(
            "{s:s, s:b}", "event", sl__req_param(req, "event"), "began", rc));
}

int
sl__api_jm_event_complete(struct sl__req *req)
{
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    rc = sl_jm_event_complete(req->svc->jm, sl__req_param(req, "event"), &err);
    return reply_or_error(req,
                          rc,
                          &err,
                          200,
                          json_pack("{s:s, s:b}",
                                    "event",
                                    sl__req_param(req, "event"),
                                    "completed",
                                    1));
}

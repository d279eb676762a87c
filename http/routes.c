/*
 * The REST route table.  Patterns are '/'-separated literals, ":name"
 * (one segment) and "*name" (the rest of the path, slashes included).
 * The server answers 404 when no pattern matches the path and 405 (with
 * Allow) when patterns match but none with the request's method.
 */
#include <stddef.h>

#include "http/http_int.h"

/* A route: R for a handler that gets the whole body, RS for a streaming
 * one with its begin, body and clean-up callbacks and flags. */
#define R(m, p, h)                                                             \
    {                                                                          \
        m, p, h, NULL, NULL, NULL, 0                                           \
    }
#define RS(m, p, h, begin, body, cleanup, flags)                               \
    {                                                                          \
        m, p, h, begin, body, cleanup, flags                                   \
    }

const struct sl__route sl__routes[] = {
    RS("GET", "/", sl__api_dashboard_get, NULL, NULL, NULL, SL__ROUTE_PUBLIC),
    RS("GET",
       "/ui/:file",
       sl__api_dashboard_file_get,
       NULL,
       NULL,
       NULL,
       SL__ROUTE_PUBLIC),
    R("GET", "/metrics", sl__api_metrics_get),
    R("GET", "/smila", sl__api_system_get),
    R("GET", "/smila/store", sl__api_stores_get),
    R("PUT", "/smila/store/:store", sl__api_store_put),
    R("GET", "/smila/store/:store", sl__api_store_get),
    R("DELETE", "/smila/store/:store", sl__api_store_delete),
    RS("PUT",
       "/smila/store/:store/*id",
       sl__api_object_put,
       sl__api_object_put_begin,
       sl__api_object_put_body,
       sl__api_object_put_cleanup,
       SL__ROUTE_STREAM_BODY),
    R("GET", "/smila/store/:store/*id", sl__api_object_get),
    R("DELETE", "/smila/store/:store/*id", sl__api_object_delete),
    RS("POST",
       "/smila/job/:job/bulk",
       sl__api_bb_bulk_post,
       sl__api_bb_bulk_begin,
       sl__api_bb_bulk_body,
       sl__api_bb_bulk_cleanup,
       SL__ROUTE_STREAM_BODY | SL__ROUTE_JSON_LIMIT),
    R("GET", "/smila/jobmanager", sl__api_jm_get),
    R("GET", "/smila/jobmanager/dataobjecttypes", sl__api_jm_dots_get),
    R("GET", "/smila/jobmanager/dataobjecttypes/:name", sl__api_jm_dots_get),
    R("GET", "/smila/jobmanager/workers", sl__api_jm_workers_get),
    R("GET", "/smila/jobmanager/workers/:name", sl__api_jm_workers_get),
    R("GET", "/smila/jobmanager/buckets", sl__api_jm_defs_list),
    R("POST", "/smila/jobmanager/buckets", sl__api_jm_defs_post),
    R("GET", "/smila/jobmanager/buckets/:name", sl__api_jm_def_get),
    R("DELETE", "/smila/jobmanager/buckets/:name", sl__api_jm_def_delete),
    R("GET", "/smila/jobmanager/workflows", sl__api_jm_defs_list),
    R("POST", "/smila/jobmanager/workflows", sl__api_jm_defs_post),
    R("GET", "/smila/jobmanager/workflows/:name", sl__api_jm_def_get),
    R("DELETE", "/smila/jobmanager/workflows/:name", sl__api_jm_def_delete),
    R("GET", "/smila/jobmanager/jobs", sl__api_jm_defs_list),
    R("POST", "/smila/jobmanager/jobs", sl__api_jm_defs_post),
    R("GET", "/smila/jobmanager/jobs/:name", sl__api_jm_def_get),
    R("POST", "/smila/jobmanager/jobs/:name", sl__api_jm_job_start),
    R("DELETE", "/smila/jobmanager/jobs/:name", sl__api_jm_def_delete),
    R("GET",
      "/smila/jobmanager/jobs/:name/documents",
      sl__api_jm_run_documents),
    R("GET", "/smila/jobmanager/jobs/:name/:run", sl__api_jm_run_get),
    R("GET",
      "/smila/jobmanager/jobs/:name/:run/documents",
      sl__api_jm_run_documents),
    R("DELETE", "/smila/jobmanager/jobs/:name/:run", sl__api_jm_run_delete),
    R("POST",
      "/smila/jobmanager/jobs/:name/:run/finish",
      sl__api_jm_run_finish),
    R("POST",
      "/smila/jobmanager/jobs/:name/:run/cancel",
      sl__api_jm_run_cancel),
    R("POST", "/smila/jobmanager/jobs/:name/:run/pause", sl__api_jm_run_pause),
    R("POST",
      "/smila/jobmanager/jobs/:name/:run/resume",
      sl__api_jm_run_resume),
    R("POST", "/smila/debug/clock", sl__api_debug_clock),
    R("GET",
      "/smila/jobmanager/jobs/:name/:run/workflowrun/:wf",
      sl__api_jm_wfrun_get),
    R("POST",
      "/smila/jobmanager/jobs/:name/:run/workflowrun/:wf/cancel",
      sl__api_jm_wfrun_cancel),
    R("POST", "/smila/jobmanager/events/:event/begin", sl__api_jm_event_begin),
    R("POST",
      "/smila/jobmanager/events/:event/complete",
      sl__api_jm_event_complete),
    R("GET", "/smila/importing", sl__api_importing_get),
    R("GET", "/smila/importing/documents/:source", sl__api_document_get),
    R("GET", "/smila/importing/documents/:source/*id", sl__api_document_get),
    R("GET", "/smila/importing/delta", sl__api_delta_list),
    R("DELETE", "/smila/importing/delta", sl__api_delta_clear_all),
    R("GET", "/smila/importing/delta/:source", sl__api_delta_source_get),
    R("DELETE", "/smila/importing/delta/:source", sl__api_delta_source_delete),
    R("GET", "/smila/importing/visitedlinks", sl__api_visited_list),
    R("DELETE", "/smila/importing/visitedlinks", sl__api_visited_clear_all),
    R("GET",
      "/smila/importing/visitedlinks/:source",
      sl__api_visited_source_get),
    R("DELETE",
      "/smila/importing/visitedlinks/:source",
      sl__api_visited_source_delete),
    R("POST", "/smila/job/:job/record", sl__api_bb_record_post),
    R("DELETE", "/smila/job/:job/record", sl__api_bb_record_delete),
    R("GET", "/smila/bulkbuilder", sl__api_bb_status),
    R("GET", "/smila/index", sl__api_index_list),
    R("GET", "/smila/index/:name", sl__api_index_get),
    R("DELETE", "/smila/index/:name", sl__api_index_delete),
    /* Before the document route, which would take these ids too. */
    R("GET", "/smila/index/:name/search", sl__api_index_search),
    R("GET", "/smila/index/:name/records", sl__api_index_records),
    R("GET", "/smila/index/:name/*id", sl__api_index_doc_get),
    R("GET", "/smila/tasks", sl__api_tasks_get),
    R("GET", "/smila/tasks/:worker", sl__api_tasks_get),
    R("POST", "/smila/tasks/:worker", sl__api_tasks_take),
    R("POST", "/smila/tasks/:worker/:task/keepAlive", sl__api_tasks_keepalive),
    R("POST", "/smila/tasks/:worker/:task/finish", sl__api_tasks_finish),
#undef R
#undef RS
    {NULL, NULL, NULL, NULL, NULL, NULL, 0},
};

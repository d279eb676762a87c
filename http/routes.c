/*
 * The REST route table.  Patterns are '/'-separated literals, ":name"
 * (one segment) and "*name" (the rest of the path, slashes included).
 * The server answers 404 when no pattern matches the path and 405 (with
 * Allow) when patterns match but none with the request's method.
 */
#include <stddef.h>

#include "http/http_int.h"

const struct sl_route sl__routes[] = {
    {"GET", "/smila", sl_api_system_get, NULL, NULL, NULL, 0},
    {"GET", "/smila/store", sl_api_stores_get, NULL, NULL, NULL, 0},
    {"PUT", "/smila/store/:store", sl_api_store_put, NULL, NULL, NULL, 0},
    {"GET", "/smila/store/:store", sl_api_store_get, NULL, NULL, NULL, 0},
    {"DELETE", "/smila/store/:store", sl_api_store_delete, NULL, NULL, NULL, 0},
    {"PUT",
     "/smila/store/:store/*id",
     sl_api_object_put,
     sl_api_object_put_begin,
     sl_api_object_put_body,
     sl_api_object_put_cleanup,
     SL_ROUTE_STREAM_BODY},
    {"GET", "/smila/store/:store/*id", sl_api_object_get, NULL, NULL, NULL, 0},
    {"DELETE",
     "/smila/store/:store/*id",
     sl_api_object_delete,
     NULL,
     NULL,
     NULL,
     0},
#define R(m, p, h)                                                             \
    {                                                                          \
        m, p, h, NULL, NULL, NULL, 0                                           \
    }
    R("GET", "/smila/jobmanager", sl_api_jm_get),
    R("GET", "/smila/jobmanager/dataobjecttypes", sl_api_jm_dots_get),
    R("GET", "/smila/jobmanager/dataobjecttypes/:name", sl_api_jm_dots_get),
    R("GET", "/smila/jobmanager/workers", sl_api_jm_workers_get),
    R("GET", "/smila/jobmanager/workers/:name", sl_api_jm_workers_get),
    R("GET", "/smila/jobmanager/buckets", sl_api_jm_defs_list),
    R("POST", "/smila/jobmanager/buckets", sl_api_jm_defs_post),
    R("GET", "/smila/jobmanager/buckets/:name", sl_api_jm_def_get),
    R("DELETE", "/smila/jobmanager/buckets/:name", sl_api_jm_def_delete),
    R("GET", "/smila/jobmanager/workflows", sl_api_jm_defs_list),
    R("POST", "/smila/jobmanager/workflows", sl_api_jm_defs_post),
    R("GET", "/smila/jobmanager/workflows/:name", sl_api_jm_def_get),
    R("DELETE", "/smila/jobmanager/workflows/:name", sl_api_jm_def_delete),
    R("GET", "/smila/jobmanager/jobs", sl_api_jm_defs_list),
    R("POST", "/smila/jobmanager/jobs", sl_api_jm_defs_post),
    R("GET", "/smila/jobmanager/jobs/:name", sl_api_jm_def_get),
    R("POST", "/smila/jobmanager/jobs/:name", sl_api_jm_job_start),
    R("DELETE", "/smila/jobmanager/jobs/:name", sl_api_jm_def_delete),
    R("GET", "/smila/jobmanager/jobs/:name/:run", sl_api_jm_run_get),
    R("DELETE", "/smila/jobmanager/jobs/:name/:run", sl_api_jm_run_delete),
    R("POST", "/smila/jobmanager/jobs/:name/:run/finish", sl_api_jm_run_finish),
    R("POST", "/smila/jobmanager/jobs/:name/:run/cancel", sl_api_jm_run_cancel),
    R("GET",
      "/smila/jobmanager/jobs/:name/:run/workflowrun/:wf",
      sl_api_jm_wfrun_get),
    R("POST",
      "/smila/jobmanager/jobs/:name/:run/workflowrun/:wf/cancel",
      sl_api_jm_wfrun_cancel),
    R("POST", "/smila/jobmanager/events/:event/begin", sl_api_jm_event_begin),
    R("POST",
      "/smila/jobmanager/events/:event/complete",
      sl_api_jm_event_complete),
    R("GET", "/smila/importing", sl_api_importing_get),
    R("GET", "/smila/importing/delta", sl_api_delta_list),
    R("DELETE", "/smila/importing/delta", sl_api_delta_clear_all),
    R("GET", "/smila/importing/delta/:source", sl_api_delta_source_get),
    R("DELETE", "/smila/importing/delta/:source", sl_api_delta_source_delete),
    R("POST", "/smila/job/:job/record", sl_api_bb_record_post),
    R("DELETE", "/smila/job/:job/record", sl_api_bb_record_delete),
    R("POST", "/smila/job/:job/bulk", sl_api_bb_bulk_post),
    R("GET", "/smila/bulkbuilder", sl_api_bb_status),
    R("GET", "/smila/index", sl_api_index_list),
    R("GET", "/smila/index/:name", sl_api_index_get),
    /* Before the document route, which would take these ids too. */
    R("GET", "/smila/index/:name/search", sl_api_index_search),
    R("GET", "/smila/index/:name/records", sl_api_index_records),
    R("GET", "/smila/index/:name/*id", sl_api_index_doc_get),
    R("GET", "/smila/tasks", sl_api_tasks_get),
    R("GET", "/smila/tasks/:worker", sl_api_tasks_get),
    R("POST", "/smila/tasks/:worker", sl_api_tasks_take),
    R("POST", "/smila/tasks/:worker/:task/keepAlive", sl_api_tasks_keepalive),
    R("POST", "/smila/tasks/:worker/:task/finish", sl_api_tasks_finish),
#undef R
    {NULL, NULL, NULL, NULL, NULL, NULL, 0},
};

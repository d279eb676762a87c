/*
 * Private to http/: the request object handed to handlers, the route
 * table and the reply API.  Every handler has the signature
 * `int sl__api_<resource>_<verb>(struct sl__req *req)` and answers only
 * through sl__reply_*; its return value is 0 once it has replied.
 */
#ifndef SL_HTTP_INT_H_INCLUDED
#define SL_HTTP_INT_H_INCLUDED

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "http/http.h"

#define SL__ROUTE_MAX_PARAMS 4

struct sl__req;

/* Route flags. */
#define SL__ROUTE_STREAM_BODY 0x1 /* body goes to on_body, not a buffer */
#define SL__ROUTE_JSON_LIMIT  0x2 /* streamed, but http.maxBodyBytes at most */
#define SL__ROUTE_PUBLIC                                                       \
    0x4 /* no token needed: the dashboard's files,                             \
           which hold no data */

struct sl__route {
    const char *method;  /* "GET", "PUT", "POST", "DELETE" */
    const char *pattern; /* e.g. "/smila/store/:store/<star>id" */
    int (*handler)(struct sl__req *req);
    /* Streaming routes only: called before the body (may reply early),
     * for each body chunk, and always at the end of the request. */
    int (*on_begin)(struct sl__req *req);
    int (*on_body)(struct sl__req *req,
                   const char *data,
                   size_t len,
                   struct sl_err *err);
    void (*on_cleanup)(struct sl__req *req);
    unsigned flags;
};

/** The route table (routes.c), terminated by an entry with method NULL. */
extern const struct sl__route sl__routes[];

/* A header or a query argument (decoded); value NULL for a query argument
 * without '='. */
struct sl__kv {
    char *name;
    char *value;
};

/*
 * The reply a handler queued (reply.c), written by conn.c: a buffer, or
 * @size bytes produced by @read (bytes written, or -1 on an error, after
 * which the connection is closed).
 */
struct sl__resp {
    struct sl_buf headers; /* "Name: value\r\n" lines */
    char *text;            /* the body, freed with sl_free unless @fixed */
    size_t len;
    int fixed;     /* @text is static */
    uint64_t size; /* streamed: bytes @read gives */
    ssize_t (*read)(void *ctx, uint64_t pos, char *buf, size_t max);
    void *ctx;
    void (*free_ctx)(void *ctx);
};
/* Frees what @r holds and clears it. */
void sl__resp_free(struct sl__resp *r);

struct sl__req {
    struct sl_http_server *server;
    const struct sl__route *route;
    const struct sl_http_services *svc;
    const struct sl_http_config *cfg;
    char *method;
    char *path; /* decoded, without trailing '/' */
    const char *param_names[SL__ROUTE_MAX_PARAMS];
    char *params[SL__ROUTE_MAX_PARAMS]; /* decoded captures */
    size_t nparams;
    struct sl_buf body;    /* buffered body (non-stream routes) */
    uint64_t body_bytes;   /* bytes received so far */
    int replied;           /* a response is queued */
    struct sl_err pending; /* failure met while reading the body; replied
                              once the body is complete */
    uint64_t discarded;    /* body bytes dropped after a failure */
    void *ctx;             /* per-route state (streaming) */
    unsigned status;       /* of the reply queued, 0 before */
    int64_t start_us;      /* monotonic, at the first call */
    struct sl__http_metrics *metrics;      /* the server's, NULL: off */
    struct sl__delta_counts *delta_counts; /* the server's, or NULL */
    struct sl__kv *headers;                /* as received, names as sent */
    size_t nheaders;
    struct sl__kv *args; /* query arguments, decoded, '+' read as ' ' */
    size_t nargs;
    struct sl__resp resp; /* valid once replied */
};

/* ------------------------------------------------------------------------
 * The request life cycle (server.c), driven by a connection (conn.c).
 * --------------------------------------------------------------------- */

/* A new request on server @s, counted among the active ones until
 * sl__req_finish; method and path empty. */
struct sl__req *sl__req_new(struct sl_http_server *s);
/* Headers read, method, path and args set: route it, check the token and
 * the limits; may reply at once. */
void sl__req_begin(struct sl__req *req);
/* Body bytes; -1 once the request has failed (the error is replied). */
int sl__req_body(struct sl__req *req, const char *data, size_t len);
/* The whole request is read: run the handler; a reply is queued after. */
void sl__req_end(struct sl__req *req);
/* The reply is written or the connection gone: count it, free @req. */
void sl__req_finish(struct sl__req *req);
/* The server's settings. */
const struct sl_http_config *sl__server_cfg(const struct sl_http_server *s);

/* The listener and its connections (conn.c). */
struct sl__net;
/* Listen on @ss and serve connections for @s. */
int sl__net_start(struct sl_http_server *s,
                  const struct sockaddr_storage *ss,
                  socklen_t sslen,
                  struct sl__net **out,
                  struct sl_err *err);
unsigned sl__net_port(const struct sl__net *n);
/* Stop accepting; the listening socket is closed. */
void sl__net_quiesce(struct sl__net *n);
/* Close every connection, wait for their threads, free @n. */
void sl__net_stop(struct sl__net *n);

/** @brief Path parameter @p name (borrowed) or NULL. */
const char *sl__req_param(const struct sl__req *req, const char *name);
/** @brief Query argument (borrowed, valid during the request) or NULL. */
const char *sl__req_query(const struct sl__req *req, const char *name);
/** @brief Request header (borrowed) or NULL. */
const char *sl__req_header(const struct sl__req *req, const char *name);
/**
 * @brief Parse the buffered body as JSON.
 * @return 0 with a new reference in *out (caller decrefs), or replies 400
 * with line and column and returns SL_EBADJSON.
 */
int sl__req_body_json(struct sl__req *req, json_t **out);
/** @brief Absolute URL for @p path ("/smila/...") built from Host; new
 * string, caller frees with sl_free. */
char *sl__req_url(const struct sl__req *req, const char *path);
/**
 * @brief Parse an unsigned query argument; absent -> @p def.
 * @return 0, or replies 400 naming the argument and returns SL_EINVAL.
 */
int sl__req_query_u64(struct sl__req *req,
                      const char *name,
                      uint64_t def,
                      uint64_t max,
                      uint64_t *out);

/** @brief Reply @p status with JSON @p body (reference stolen). */
int sl__reply_json(struct sl__req *req, unsigned status, json_t *body);
/** @brief Reply the API error body for @p code (status from the table). */
int sl__reply_error(struct sl__req *req,
                    int code,
                    const char *field,
                    const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));
/** @brief Reply the API error body from @p err. */
int sl__reply_err(struct sl__req *req, const struct sl_err *err);
/** @brief Reply 405 with an Allow header. */
int sl__reply_method_not_allowed(struct sl__req *req, const char *allow);
/**
 * @brief Reply @p status with a streamed body of @p size bytes produced by
 * @p read (bytes written, or -1 on an error).
 * @p free_ctx is called exactly once, also if this call fails.
 */
int sl__reply_stream(
    struct sl__req *req,
    unsigned status,
    const char *content_type,
    uint64_t size,
    ssize_t (*read)(void *ctx, uint64_t pos, char *buf, size_t max),
    void *ctx,
    void (*free_ctx)(void *ctx));

/** @brief Reply @p status (e.g. 204) without a body. */
int sl__reply_empty(struct sl__req *req, unsigned status);
/** @brief Reply @p status with the @p len bytes @p text (taken over, freed
 * with sl_free) as a body of @p content_type, with the header name and
 * value pairs that follow, up to a NULL name. */
int sl__reply_text_headers(struct sl__req *req,
                           unsigned status,
                           const char *content_type,
                           char *text,
                           size_t len,
                           ...);
#define sl__reply_text(req, status, type, text, len)                           \
    sl__reply_text_headers(req, status, type, text, len, NULL)

/* ------------------------------------------------------------------------
 * Metrics (metrics.c, api_metrics.c; docs/operations.md "Metrics").
 * --------------------------------------------------------------------- */

/* The Prometheus text being written: version 0.0.4, or OpenMetrics 1.0.0
 * when @om; the current family's name and type. */
struct sl__prom {
    struct sl_buf *b;
    int om;
    char family[128];
    int counter;
};
/* Begin family @name (without "_total") of @type ("counter", "gauge",
 * "histogram") with its @help. */
void sl__prom_family(struct sl__prom *p,
                     const char *name,
                     const char *type,
                     const char *help);
/* A sample of the current family: its name with @suffix ("", "_total",
 * "_bucket", ...), label name and value pairs up to a NULL name. */
void sl__prom_sample(struct sl__prom *p, const char *suffix, double v, ...);

/* Request counts and latencies per route; thread-safe, lock-free. */
struct sl__http_metrics;
struct sl__http_metrics *sl__http_metrics_new(void);
void sl__http_metrics_free(struct sl__http_metrics *m);
/* Count a request of @route (NULL: none matched) answered @status after
 * @elapsed_us. */
void sl__http_metrics_observe(struct sl__http_metrics *m,
                              const struct sl__route *route,
                              unsigned status,
                              int64_t elapsed_us);
/* The delta service's entries per source, counted in the background
 * every 5 s or less often (metrics_delta.c); thread-safe. */
struct sl__delta_counts;
struct sl__delta_counts *sl__delta_counts_new(struct sl_delta *delta);
/* Waits for a count under way. */
void sl__delta_counts_free(struct sl__delta_counts *c);
/* {source: entries} of the last count (new object), NULL before the
 * first; may start a new count. */
json_t *sl__delta_counts_get(struct sl__delta_counts *c);
/* Write the HTTP families; @in_flight requests are being served. */
void sl__http_metrics_write(const struct sl__http_metrics *m,
                            struct sl__prom *p,
                            unsigned in_flight);

/* Handlers (api_*.c). */
int sl__api_metrics_get(struct sl__req *req);
int sl__api_dashboard_get(struct sl__req *req);
int sl__api_dashboard_file_get(struct sl__req *req);
int sl__api_jm_get(struct sl__req *req);
int sl__api_jm_dots_get(struct sl__req *req);
int sl__api_jm_workers_get(struct sl__req *req);
int sl__api_jm_defs_list(struct sl__req *req);
int sl__api_jm_defs_post(struct sl__req *req);
int sl__api_jm_def_get(struct sl__req *req);
int sl__api_jm_def_delete(struct sl__req *req);
int sl__api_jm_job_start(struct sl__req *req);
int sl__api_jm_run_get(struct sl__req *req);
int sl__api_jm_run_documents(struct sl__req *req);
int sl__api_document_get(struct sl__req *req);
int sl__api_jm_run_delete(struct sl__req *req);
int sl__api_jm_run_finish(struct sl__req *req);
int sl__api_jm_run_cancel(struct sl__req *req);
int sl__api_jm_run_pause(struct sl__req *req);
int sl__api_jm_run_resume(struct sl__req *req);
int sl__api_debug_clock(struct sl__req *req);
int sl__api_jm_wfrun_get(struct sl__req *req);
int sl__api_jm_wfrun_cancel(struct sl__req *req);
int sl__api_jm_event_begin(struct sl__req *req);
int sl__api_jm_event_complete(struct sl__req *req);
int sl__api_importing_get(struct sl__req *req);
int sl__api_delta_list(struct sl__req *req);
int sl__api_delta_clear_all(struct sl__req *req);
int sl__api_delta_source_get(struct sl__req *req);
int sl__api_delta_source_delete(struct sl__req *req);
/* The worker that writes indexes and its parameter naming the index, with
 * the parameter's default (builtin/index_writer.c, docs/workers.md): an
 * index is in use while an active run has such an action writing it. */
#define SL__WRITER_WORKER "indexWriter"
#define SL__WRITER_PARAM  "index"
#define SL__WRITER_INDEX  "default"

/* api_purge.c: the ?purge= query argument into *purge (0 or a 400 sent),
 * and the purge of a source (reply body in *out). */
int sl__api_purge_flag(struct sl__req *req, int *purge);
int sl__api_purge_source(struct sl__req *req,
                         const char *source,
                         json_t **out,
                         struct sl_err *err);
int sl__api_visited_list(struct sl__req *req);
int sl__api_visited_clear_all(struct sl__req *req);
int sl__api_visited_source_get(struct sl__req *req);
int sl__api_visited_source_delete(struct sl__req *req);
int sl__api_bb_record_post(struct sl__req *req);
int sl__api_bb_record_delete(struct sl__req *req);
int sl__api_bb_bulk_post(struct sl__req *req);
int sl__api_bb_bulk_begin(struct sl__req *req);
int sl__api_bb_bulk_body(struct sl__req *req,
                         const char *data,
                         size_t len,
                         struct sl_err *err);
void sl__api_bb_bulk_cleanup(struct sl__req *req);
int sl__api_bb_status(struct sl__req *req);
int sl__api_index_list(struct sl__req *req);
int sl__api_index_get(struct sl__req *req);
int sl__api_index_delete(struct sl__req *req);
int sl__api_index_search(struct sl__req *req);
int sl__api_index_records(struct sl__req *req);
int sl__api_index_doc_get(struct sl__req *req);
int sl__api_tasks_get(struct sl__req *req);
int sl__api_tasks_take(struct sl__req *req);
int sl__api_tasks_keepalive(struct sl__req *req);
int sl__api_tasks_finish(struct sl__req *req);
int sl__api_system_get(struct sl__req *req);
int sl__api_stores_get(struct sl__req *req);
int sl__api_store_put(struct sl__req *req);
int sl__api_store_get(struct sl__req *req);
int sl__api_store_delete(struct sl__req *req);
int sl__api_object_put(struct sl__req *req);
int sl__api_object_put_begin(struct sl__req *req);
int sl__api_object_put_body(struct sl__req *req,
                            const char *data,
                            size_t len,
                            struct sl_err *err);
void sl__api_object_put_cleanup(struct sl__req *req);
int sl__api_object_get(struct sl__req *req);
int sl__api_object_delete(struct sl__req *req);

#endif /* SL_HTTP_INT_H_INCLUDED */

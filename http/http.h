/*
 * HTTP server: http-parser with a thread per connection, a static route table
 * for the REST API under /smila/, JSON replies and the error body of
 * docs/rest-api.md.
 *
 * Threading: sl_http_start and sl_http_stop are called from one thread
 * (the main thread).  Handlers run on the connections' threads and reach
 * other modules only through their thread-safe APIs.
 */
#ifndef SL_HTTP_H_INCLUDED
#define SL_HTTP_H_INCLUDED

#include <stdint.h>

#include "core/sl.h"
#include "bulkbuilder/bulkbuilder.h"
#include "deltaservice/deltaservice.h"
#include "index/index.h"
#include "jobmanager/jobmanager.h"
#include "objectstore/objectstore.h"

struct sl_http_server;

/** Server settings; strings are borrowed for the duration of sl_http_start
 * (copied). */
struct sl_http_config {
    const char *listen;         /* "host:port" or "[v6]:port"; port 0 = any */
    const char *api_token;      /* required when listen is not loopback */
    unsigned threads;           /* unused: a thread per connection */
    unsigned max_connections;   /* concurrent connections */
    unsigned max_conn_per_ip;   /* of them from one address; 0: no limit */
    uint64_t max_body_bytes;    /* JSON bodies (413 beyond) */
    uint64_t max_header_bytes;  /* request line and headers (414, 431) */
    unsigned request_timeout_s; /* idle time before a connection closes */
    uint64_t max_object_bytes;  /* object PUT bodies (413 beyond) */
    int metrics_off;            /* no GET /metrics, no counting for it */
};

/** What the handlers may use; all borrowed, must outlive the server. */
struct sl_http_services {
    struct sl_obj *store;       /* object store service */
    struct sl_jm *jm;           /* jobmanager */
    struct sl_delta *delta;     /* delta service */
    struct sl_index_set *index; /* embedded full-text index */
    struct sl_bb *bulkbuilder;  /* push API of standard jobs */
    int test_clock; /* POST /smila/debug/clock drives the schedules */
};

/**
 * @brief Start listening and serving.
 * @return 0, SL_ECONFIG (bad listen address, non-loopback without token),
 * SL_EIO (cannot bind); details in @p err.  On success *out is a new
 * object, caller stops and frees it with sl_http_stop.
 */
int sl_http_start(const struct sl_http_config *cfg,
                  const struct sl_http_services *svc,
                  struct sl_http_server **out,
                  struct sl_err *err);
/**
 * @brief Carry out again the purges of data sources that a stop
 * interrupted or that failed (docs/deltaservice.md "Purging a source"),
 * except those of a source an active run crawls.  Blocks the calling
 * thread until they are done.  Call once the jobmanager and the
 * bulkbuilder run, before sl_http_start (no request may start a crawl of
 * such a source meanwhile); errors are logged.
 */
void sl_http_purges_resume(const struct sl_http_services *svc);
/** @brief The port actually bound (useful with port 0). */
unsigned sl_http_port(const struct sl_http_server *s);
/** @brief Requests being served right now. */
unsigned sl_http_active_requests(const struct sl_http_server *s);
/**
 * @brief Stop accepting connections, let in-flight requests finish for up
 * to @p grace_ms, then close everything and free @p s.  NULL-safe.
 */
void sl_http_stop(struct sl_http_server *s, unsigned grace_ms);

#endif /* SL_HTTP_H_INCLUDED */

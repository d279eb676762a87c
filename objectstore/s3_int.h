/*
 * The S3 backend's internals (s3.c: the instance, credentials, requests
 * with retries and errors; s3_xml.c: the XML replies; s3_store.c: stores,
 * listing, stat and delete; s3_object.c: writers and readers).  Not for
 * other modules.
 *
 * Requests are signed by libcurl (CURLOPT_AWS_SIGV4) with an unsigned
 * payload ("x-amz-content-sha256: UNSIGNED-PAYLOAD", which S3 accepts
 * over TLS and plain HTTP alike); replies are parsed with libxml2.  Easy
 * handles are pooled, so connections are kept alive between requests.
 * The instance is immutable after sl__obj_s3_new but for the handle
 * pool, which has its own lock.
 */
#ifndef SL_OBJECTSTORE_S3_INT_H_INCLUDED
#define SL_OBJECTSTORE_S3_INT_H_INCLUDED

#include <pthread.h>
#include <stdint.h>

#include "objectstore/objectstore_int.h"

#define S3_XML_MAX    ((size_t)4 << 20)   /* a reply body we parse */
#define S3_KEY_MAX    1024u               /* S3's limit of a key, bytes */
#define S3_HANDLES    16u                 /* idle easy handles kept */
#define S3_SMALL_SEAL ((size_t)256 << 10) /* kept in memory when sealed */

struct s3 {
    char *endpoint; /* scheme://host[:port], no trailing '/' */
    char *scheme;   /* "http" or "https" */
    char *host;     /* host[:port] of the endpoint */
    char *region;
    char *bucket;   /* stores are prefixes of it, or NULL: stores are buckets */
    char *prefix;   /* key prefix (bucket mode) or bucket name prefix */
    int path_style; /* endpoint/bucket/key, else bucket.endpoint/key */
    int no_expect;  /* libcurl >= 8.3: "Expect:" is not signed */
    char *userpwd;  /* "access:secret" for CURLOPT_USERPWD */
    char *sigv4;    /* "aws:amz:<region>:s3" */
    char *token;    /* "x-amz-security-token: ..." or NULL */
    char *ca_file;  /* or NULL: the system's */
    uint64_t part_size;
    unsigned retries;
    unsigned backoff_ms;  /* the first pause; doubled each time */
    pthread_mutex_t lock; /* the idle handles */
    void *idle[S3_HANDLES];
    unsigned nidle;
};

/* One request: what to send, what came back. */
struct s3_req {
    const char *method;   /* "GET", "PUT", "HEAD", "DELETE", "POST" */
    const char *bucket;   /* NULL: the service (ListBuckets) */
    const char *key;      /* raw key (encoded here), or NULL */
    const char *query;    /* encoded, sorted "a=b&c=d", or NULL */
    const char *range;    /* "bytes=a-b", or NULL */
    const char *if_match; /* an ETag, or NULL */
    const void *body;     /* request body, or NULL */
    size_t body_len;
    /* the reply body: into @dst (at most dst_cap bytes) when set, else
     * into @xml (replies to parse, at most S3_XML_MAX bytes) */
    char *dst;
    size_t dst_cap;
    size_t dst_len;
    struct sl_buf xml;
    long status;
    uint64_t length;  /* Content-Length of the reply */
    int64_t mtime_ms; /* Last-Modified, or 0 */
    char etag[80];    /* ETag of the reply, or "" */
    uint64_t total;   /* a 206's Content-Range total, or 0 */
};

/* s3.c */
void sl__s3_req_init(struct s3_req *r, const char *method);
void sl__s3_req_free(struct s3_req *r);
/* Send @r (retried on connection errors, 429 and 5xx).  0 with r->status
 * 2xx; else an SL_E* code from the status and S3's error code, with a
 * message naming @what: SL_ENOENT (404), SL_EACCES (403), SL_ECONFLICT
 * (409, 412), SL_EUPSTREAM (5xx after the retries), SL_EIO. */
int
sl__s3_do(struct s3 *s, struct s3_req *r, const char *what, struct sl_err *err);
/* The bucket and the key of object @id of @store (new strings). */
void sl__s3_where(const struct s3 *s,
                  const char *store,
                  const char *id,
                  char **bucket,
                  char **key);
/* "%XX"-encode @s for a query value (new string). */
char *sl__s3_qenc(const char *s);

/* s3_xml.c: each 0 or SL_ECORRUPT (a reply that is not what S3 sends) */
struct s3_list_page {
    int (*on_key)(void *ctx, const char *key, uint64_t size, int64_t mtime);
    int (*on_prefix)(void *ctx, const char *prefix);
    void *ctx;
    int truncated;
    char *next;  /* NextContinuationToken, new, or NULL */
    int stopped; /* a callback's non-zero value */
};
int sl__s3_xml_list(const char *xml, size_t len, struct s3_list_page *p);
int sl__s3_xml_buckets(const char *xml,
                       size_t len,
                       int (*on_bucket)(void *ctx, const char *name),
                       void *ctx,
                       int *stopped);
/* The text of the first element @name (new string), or NULL. */
char *sl__s3_xml_text(const char *xml, size_t len, const char *name);
/* ISO 8601 "2026-11-27T05:26:53.000Z" in ms since the epoch, or 0. */
int64_t sl__s3_iso_ms(const char *s);

/* s3_store.c, s3_object.c: the hooks */
void sl__s3_close(void *ctx);
int sl__s3_store_create(void *ctx,
                        const char *store,
                        int *created,
                        struct sl_err *err);
int sl__s3_store_delete(void *ctx, const char *store, struct sl_err *err);
int sl__s3_store_exists(void *ctx, const char *store, struct sl_err *err);
int sl__s3_store_list(void *ctx,
                      int (*cb)(void *cb_ctx, const char *store),
                      void *cb_ctx,
                      struct sl_err *err);
int sl__s3_list(void *ctx,
                const char *store,
                const char *prefix,
                int (*cb)(void *cb_ctx, const struct sl_obj_info *info),
                void *cb_ctx,
                struct sl_err *err);
int sl__s3_stat(void *ctx,
                const char *store,
                const char *id,
                struct sl_obj_info *info,
                struct sl_err *err);
int
sl__s3_delete(void *ctx, const char *store, const char *id, struct sl_err *err);
int sl__s3_writer_open(void *ctx,
                       const char *store,
                       const char *id,
                       void **wctx,
                       struct sl_err *err);
int sl__s3_writer_write(void *wctx,
                        const void *data,
                        size_t len,
                        struct sl_err *err);
int sl__s3_writer_seal(void *wctx, struct sl_err *err);
int sl__s3_writer_commit(void *wctx, int *replaced, struct sl_err *err);
void sl__s3_writer_free(void *wctx);
int sl__s3_reader_open(void *ctx,
                       const char *store,
                       const char *id,
                       void **rctx,
                       uint64_t *size,
                       struct sl_err *err);
int sl__s3_reader_read(
    void *rctx, void *buf, size_t cap, size_t *n, struct sl_err *err);
int sl__s3_reader_pread(void *rctx,
                        uint64_t offset,
                        void *buf,
                        size_t cap,
                        size_t *n,
                        struct sl_err *err);
void sl__s3_reader_free(void *rctx);

#endif /* SL_OBJECTSTORE_S3_INT_H_INCLUDED */

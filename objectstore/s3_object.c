/*
 * The S3 backend's writers and readers.
 *
 * A writer buffers at most one part (partSize, 8 MiB by default; the
 * buffer grows to it as data comes).  An object that fits one part is
 * one PUT at commit; a bigger one is a multipart upload, started when the
 * first part is full, each full part uploaded as it fills, completed at
 * commit: S3 shows the object whole at that moment or never, and a
 * writer freed before it commits aborts the upload.  Sealing uploads the
 * rest of a multipart object as its last part, or keeps a small one
 * (S3_SMALL_SEAL) in memory, so that sealed writers hold little.
 *
 * A reader reads ranges (S3_CHUNK at a time, or the caller's whole
 * buffer when bigger), each with If-Match on the ETag it opened (and the
 * reply's ETag compared, for servers that ignore If-Match), so an object
 * replaced while it is read fails the read (SL_ECONFLICT) instead of
 * mixing two versions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objectstore/s3_int.h"

#define S3_CHUNK     ((size_t)1 << 20)
#define S3_BUF_FIRST ((size_t)64 << 10)
#define S3_PARTS_MAX 10000u /* S3's limit of parts of an upload */

struct s3_writer {
    struct s3 *s;
    char *store;
    char *id;
    char *bucket;
    char *key;
    char *buf; /* the part being filled */
    size_t len;
    size_t cap;
    char *upload;       /* the multipart upload's id, or NULL */
    unsigned parts;     /* parts uploaded */
    struct sl_buf done; /* <Part> elements of the uploaded parts */
    int committed;
};

struct s3_reader {
    struct s3 *s;
    char *bucket;
    char *key;
    char etag[80];
    uint64_t size;
    uint64_t pos;    /* of the next read */
    char *buf;       /* S3_CHUNK bytes read ahead, or NULL */
    uint64_t bstart; /* the offset of buf[0] */
    size_t blen;     /* bytes in buf */
};

/* ------------------------------------------------------------------------
 * Writers.
 * --------------------------------------------------------------------- */

int
sl__s3_writer_open(void *ctx,
                   const char *store,
                   const char *id,
                   void **wctx,
                   struct sl_err *err)
{
    struct s3 *s = ctx;
    struct s3_writer *w = NULL;
    int rc = sl__s3_store_exists(ctx, store, err);

    if (rc != 0) {
        return rc;
    }
    w = sl_calloc(1, sizeof(*w));
    w->s = s;
    w->store = sl_strdup(store);
    w->id = sl_strdup(id);
    sl__s3_where(s, store, id, &w->bucket, &w->key);
    if (strlen(w->key) > S3_KEY_MAX) {
        sl__s3_writer_free(w);
        return sl_err_set(err,
                          SL_EBADNAME,
                          NULL,
                          "object '%s' of store '%s': longer than an S3 key "
                          "may be (%u bytes)",
                          id,
                          store,
                          S3_KEY_MAX);
    }
    sl_buf_init(&w->done, (size_t)S3_PARTS_MAX * 160);
    *wctx = w;
    return 0;
}

/* Start the multipart upload of @w. */
static int
upload_start(struct s3_writer *w, struct sl_err *err)
{
    struct s3_req r;
    int rc = 0;

    sl__s3_req_init(&r, "POST");
    r.bucket = w->bucket;
    r.key = w->key;
    r.query = "uploads=";
    rc = sl__s3_do(w->s, &r, "start upload", err);
    if (rc == 0) {
        w->upload = sl__s3_xml_text(r.xml.data, r.xml.len, "UploadId");
        if (w->upload == NULL || w->upload[0] == '\0') {
            SL_FREE(w->upload);
            rc = sl_err_set(err,
                            SL_EUPSTREAM,
                            NULL,
                            "S3 start upload of %s: no UploadId in the reply",
                            w->key);
        }
    }
    sl__s3_req_free(&r);
    return rc;
}

/* Upload the buffer as the next part. */
static int
part_put(struct s3_writer *w, struct sl_err *err)
{
    struct s3_req r;
    char *up = NULL;
    char *q = NULL;
    int rc = w->upload == NULL ? upload_start(w, err) : 0;

    if (rc != 0) {
        return rc;
    }
    if (w->parts == S3_PARTS_MAX) {
        return sl_err_set(err,
                          SL_ETOOLARGE,
                          NULL,
                          "object '%s': more than %u parts (raise "
                          "objectstore.s3.partSizeMB)",
                          w->id,
                          S3_PARTS_MAX);
    }
    up = sl_url_escape(w->upload, 0);
    q = sl_asprintf("partNumber=%u&uploadId=%s", w->parts + 1, up);
    sl__s3_req_init(&r, "PUT");
    r.bucket = w->bucket;
    r.key = w->key;
    r.query = q;
    r.body = w->buf;
    r.body_len = w->len;
    rc = sl__s3_do(w->s, &r, "upload part", err);
    if (rc == 0 && r.etag[0] == '\0') {
        rc = sl_err_set(
            err, SL_EUPSTREAM, NULL, "S3 upload part: no ETag in the reply");
    }
    if (rc == 0) {
        w->parts++;
        rc = sl_buf_appendf(&w->done,
                            "<Part><PartNumber>%u</PartNumber><ETag>%s</ETag>"
                            "</Part>",
                            w->parts,
                            r.etag);
        w->len = 0;
    }
    sl__s3_req_free(&r);
    sl_free(q);
    sl_free(up);
    return rc;
}

int
sl__s3_writer_write(void *wctx,
                    const void *data,
                    size_t len,
                    struct sl_err *err)
{
    struct s3_writer *w = wctx;
    const char *p = data;
    int rc = 0;

    while (rc == 0 && len > 0) {
        size_t k = 0;

        if (w->len == w->cap) {
            if (w->cap < w->s->part_size) {
                w->cap = w->cap == 0 ? S3_BUF_FIRST : w->cap * 2;
                w->cap =
                    w->cap < w->s->part_size ? w->cap : (size_t)w->s->part_size;
                w->buf = sl_realloc(w->buf, w->cap);
            } else {
                rc = part_put(w, err); /* a full part: not the last one */
                continue;
            }
        }
        k = w->cap - w->len < len ? w->cap - w->len : len;
        memcpy(w->buf + w->len, p, k);
        w->len += k;
        p += k;
        len -= k;
    }
    return rc;
}

int
sl__s3_writer_seal(void *wctx, struct sl_err *err)
{
    struct s3_writer *w = wctx;

    if (w->upload != NULL || w->len > S3_SMALL_SEAL) {
        int rc = w->len > 0 || w->parts == 0 ? part_put(w, err) : 0;

        SL_FREE(w->buf);
        w->cap = 0;
        return rc;
    }
    w->buf = sl_realloc(w->buf, w->len > 0 ? w->len : 1);
    w->cap = w->len;
    return 0;
}

/* Complete the multipart upload (its last part first, unless sealed). */
static int
upload_complete(struct s3_writer *w, struct sl_err *err)
{
    struct s3_req r;
    char *up = NULL;
    char *q = NULL;
    char *body = NULL;
    char *code = NULL;
    int rc = w->len > 0 ? part_put(w, err) : 0;

    if (rc != 0) {
        return rc;
    }
    up = sl_url_escape(w->upload, 0);
    q = sl_asprintf("uploadId=%s", up);
    body = sl_asprintf("<CompleteMultipartUpload>%s</CompleteMultipartUpload>",
                       w->done.data != NULL ? w->done.data : "");
    sl__s3_req_init(&r, "POST");
    r.bucket = w->bucket;
    r.key = w->key;
    r.query = q;
    r.body = body;
    r.body_len = strlen(body);
    rc = sl__s3_do(w->s, &r, "complete upload", err);
    /* S3 may answer 200 and still fail the completion in the body */
    if (rc == 0 &&
        (code = sl__s3_xml_text(r.xml.data, r.xml.len, "Code")) != NULL) {
        rc = sl_err_set(err,
                        SL_EUPSTREAM,
                        NULL,
                        "S3 complete upload of %s: %s",
                        w->key,
                        code);
    }
    sl_free(code);
    sl__s3_req_free(&r);
    sl_free(body);
    sl_free(q);
    sl_free(up);
    return rc;
}

int
sl__s3_writer_commit(void *wctx, int *replaced, struct sl_err *err)
{
    struct s3_writer *w = wctx;
    struct sl_obj_info info;
    struct s3_req r;
    int rc = sl__s3_store_exists(w->s, w->store, err);

    if (rc == SL_ENOENT) {
        return sl_err_set(err,
                          SL_ENOENT,
                          NULL,
                          "object '%s': store '%s' was deleted",
                          w->id,
                          w->store);
    }
    if (rc != 0) {
        return rc;
    }
    rc = sl__s3_stat(w->s, w->store, w->id, &info, err);
    if (rc != 0 && rc != SL_ENOENT) {
        return rc;
    }
    *replaced = rc == 0;
    if (w->upload != NULL) {
        rc = upload_complete(w, err);
    } else {
        sl__s3_req_init(&r, "PUT");
        r.bucket = w->bucket;
        r.key = w->key;
        r.body = w->buf != NULL ? w->buf : "";
        r.body_len = w->len;
        rc = sl__s3_do(w->s, &r, "put", err);
        sl__s3_req_free(&r);
    }
    w->committed = rc == 0;
    return rc;
}

void
sl__s3_writer_free(void *wctx)
{
    struct s3_writer *w = wctx;

    if (w == NULL) {
        return;
    }
    if (w->upload != NULL && !w->committed) {
        struct s3_req r;
        struct sl_err err;
        char *up = sl_url_escape(w->upload, 0);
        char *q = sl_asprintf("uploadId=%s", up);

        sl__s3_req_init(&r, "DELETE");
        r.bucket = w->bucket;
        r.key = w->key;
        r.query = q;
        sl_err_clear(&err);
        if (sl__s3_do(w->s, &r, "abort upload", &err) != 0) {
            /* never visible either way; the bucket's lifecycle rule for
             * incomplete uploads removes the parts */
            SL_WARN("%s", err.message);
        }
        sl__s3_req_free(&r);
        sl_free(q);
        sl_free(up);
    }
    sl_buf_free(&w->done);
    sl_free(w->buf);
    sl_free(w->upload);
    sl_free(w->key);
    sl_free(w->bucket);
    sl_free(w->id);
    sl_free(w->store);
    sl_free(w);
}

/* ------------------------------------------------------------------------
 * Readers.
 * --------------------------------------------------------------------- */

int
sl__s3_reader_open(void *ctx,
                   const char *store,
                   const char *id,
                   void **rctx,
                   uint64_t *size,
                   struct sl_err *err)
{
    struct s3 *s = ctx;
    struct s3_reader *rd = sl_calloc(1, sizeof(*rd));
    struct s3_req r;
    int rc = 0;

    rd->s = s;
    sl__s3_where(s, store, id, &rd->bucket, &rd->key);
    sl__s3_req_init(&r, "HEAD");
    r.bucket = rd->bucket;
    r.key = rd->key;
    rc = sl__s3_do(s, &r, "open", err);
    if (rc == SL_ENOENT) {
        rc = sl_err_set(
            err, SL_ENOENT, NULL, "no object '%s' in store '%s'", id, store);
    }
    if (rc == 0) {
        rd->size = r.length;
        (void)snprintf(rd->etag, sizeof(rd->etag), "%s", r.etag);
        *size = rd->size;
        *rctx = rd;
    } else {
        sl__s3_reader_free(rd);
    }
    sl__s3_req_free(&r);
    return rc;
}

/* Bytes [@off, @off + @n) of the object into @dst (n > 0, inside it). */
static int
get_range(
    struct s3_reader *rd, uint64_t off, char *dst, size_t n, struct sl_err *err)
{
    struct s3_req r;
    char range[64];
    int rc = 0;

    (void)snprintf(range,
                   sizeof(range),
                   "bytes=%llu-%llu",
                   (unsigned long long)off,
                   (unsigned long long)(off + n - 1));
    sl__s3_req_init(&r, "GET");
    r.bucket = rd->bucket;
    r.key = rd->key;
    r.range = range;
    r.if_match = rd->etag[0] != '\0' ? rd->etag : NULL;
    r.dst = dst;
    r.dst_cap = n;
    rc = sl__s3_do(rd->s, &r, "read", err);
    if (rc == SL_ECONFLICT || rc == SL_ENOENT) {
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        NULL,
                        "S3 read of %s: the object was replaced or deleted "
                        "while it was read",
                        rd->key);
    } else if (rc == 0 && rd->etag[0] != '\0' && r.etag[0] != '\0' &&
               strcmp(r.etag, rd->etag) != 0) {
        /* a server that does not honour If-Match */
        rc = sl_err_set(err,
                        SL_ECONFLICT,
                        NULL,
                        "S3 read of %s: the object was replaced while it "
                        "was read",
                        rd->key);
    } else if (rc == 0 && r.dst_len != n) {
        rc = sl_err_set(err,
                        SL_EIO,
                        NULL,
                        "S3 read of %s: %zu bytes of %zu",
                        rd->key,
                        r.dst_len,
                        n);
    }
    sl__s3_req_free(&r);
    return rc;
}

int
sl__s3_reader_pread(void *rctx,
                    uint64_t offset,
                    void *buf,
                    size_t cap,
                    size_t *n,
                    struct sl_err *err)
{
    struct s3_reader *rd = rctx;
    size_t k = 0;
    int rc = 0;

    *n = 0;
    if (offset >= rd->size || cap == 0) {
        return 0;
    }
    k = rd->size - offset < cap ? (size_t)(rd->size - offset) : cap;
    if (rd->buf != NULL && offset >= rd->bstart &&
        offset + k <= rd->bstart + rd->blen) {
        memcpy(buf, rd->buf + (offset - rd->bstart), k);
    } else if (k >= S3_CHUNK) {
        rc = get_range(rd, offset, buf, k, err);
    } else {
        size_t want = rd->size - offset < S3_CHUNK ? (size_t)(rd->size - offset)
                                                   : S3_CHUNK;

        if (rd->buf == NULL) {
            rd->buf = sl_malloc(S3_CHUNK);
        }
        rd->blen = 0;
        rc = get_range(rd, offset, rd->buf, want, err);
        if (rc == 0) {
            rd->bstart = offset;
            rd->blen = want;
            memcpy(buf, rd->buf, k);
        }
    }
    if (rc == 0) {
        *n = k;
    }
    return rc;
}

int
sl__s3_reader_read(
    void *rctx, void *buf, size_t cap, size_t *n, struct sl_err *err)
{
    struct s3_reader *rd = rctx;
    int rc = sl__s3_reader_pread(rctx, rd->pos, buf, cap, n, err);

    if (rc == 0) {
        rd->pos += *n;
    }
    return rc;
}

void
sl__s3_reader_free(void *rctx)
{
    struct s3_reader *rd = rctx;

    if (rd == NULL) {
        return;
    }
    sl_free(rd->buf);
    sl_free(rd->key);
    sl_free(rd->bucket);
    sl_free(rd);
}

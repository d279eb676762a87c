/*
 * Bulkbuilder REST API (API.md "Bulkbuilder", docs/bulkbuilder.md): push
 * records into a running standard job.  A 202 is answered only after the
 * record is in the job's journal, so it survives kill -9.
 *
 * POST .../record takes a JSON record, or multipart/form-data whose first
 * part is the JSON record and whose further parts are attachments (part
 * name = attachment name), parsed with libmicrohttpd's post processor.
 * POST .../bulk takes JSON lines; every line is checked before any is
 * accepted, so a bad line rejects the whole request.
 */
#include <microhttpd.h>
#include <string.h>

#include "bulkbuilder/bulkbuilder.h"
#include "http/http_int.h"

#define MAX_PARTS 64

/* 404 for an unknown job; 0 otherwise. */
static int
check_job(struct sl_req *req, const char *job)
{
    json_t *def = NULL;

    if (req->svc->bulkbuilder == NULL) {
        (void)sl_reply_error(
            req, SL_ENOTREADY, NULL, "the bulkbuilder is not running");
        return SL_ENOTREADY;
    }
    def = sl_jm_defs_get(req->svc->jm, "jobs", job);
    if (def == NULL) {
        (void)sl_reply_error(req, SL_ENOENT, "job", "no job '%s'", job);
        return SL_ENOENT;
    }
    json_decref(def);
    return 0;
}

/* One multipart part, gathered from the post processor's pieces. */
struct part {
    char *name;
    struct sl_buf data;
};

struct multipart {
    struct part parts[MAX_PARTS];
    size_t n;
    size_t limit; /* bytes per part: the body limit */
    int overflow;
};

static enum MHD_Result
part_iter(void *cls,
          enum MHD_ValueKind kind,
          const char *key,
          const char *filename,
          const char *content_type,
          const char *transfer_encoding,
          const char *data,
          uint64_t off,
          size_t size)
{
    struct multipart *m = cls;
    struct part *p = NULL;

    (void)kind;
    (void)filename;
    (void)content_type;
    (void)transfer_encoding;
    if (off == 0) {
        if (m->n == MAX_PARTS) {
            m->overflow = 1;
            return MHD_NO;
        }
        p = &m->parts[m->n++];
        p->name = sl_asprintf("%s", key != NULL ? key : "");
        sl_buf_init(&p->data, m->limit);
    }
    p = &m->parts[m->n - 1];
    if (size > 0 && sl_buf_append(&p->data, data, size) != 0) {
        return MHD_NO;
    }
    return MHD_YES;
}

static void
multipart_free(struct multipart *m)
{
    size_t i = 0;

    for (i = 0; i < m->n; i++) {
        sl_free(m->parts[i].name);
        sl_buf_free(&m->parts[i].data);
    }
}

/* Append @meta with the attachments parts[1..] of @m (may be NULL). */
static int
append(struct sl_req *req,
       const char *job,
       const json_t *meta,
       const struct multipart *m,
       struct sl_err *err)
{
    struct sl_bb_rec *rec = NULL;
    size_t i = 0;
    int rc = sl_bb_record_begin(req->svc->bulkbuilder, job, meta, 0, &rec, err);

    for (i = 1; rc == 0 && m != NULL && i < m->n; i++) {
        rc = sl_bb_attachment_begin(
            rec, m->parts[i].name, m->parts[i].data.len, err);
        if (rc == 0 && m->parts[i].data.len > 0) {
            rc = sl_bb_attachment_write(
                rec, m->parts[i].data.data, m->parts[i].data.len, err);
        }
    }
    if (rc != 0) {
        sl_bb_record_abort(rec);
        return rc;
    }
    return rec != NULL ? sl_bb_record_end(rec, err) : rc;
}

static int
reply_accepted(struct sl_req *req, const json_t *meta)
{
    return sl_reply_json(
        req,
        202,
        json_pack("{s:O}", "_recordid", json_object_get(meta, "_recordid")));
}

int
sl_api_bb_record_post(struct sl_req *req)
{
    const char *job = sl_req_param(req, "job");
    const char *ctype = sl_req_header(req, "Content-Type");
    struct multipart m;
    struct sl_err err = {0};
    json_error_t jerr;
    json_t *meta = NULL;
    int rc = check_job(req, job);

    memset(&m, 0, sizeof(m));
    m.limit = req->body.len + 1;
    if (rc != 0) {
        return rc;
    }
    if (ctype != NULL && strncasecmp(ctype, "multipart/form-data", 19) == 0) {
        struct MHD_PostProcessor *pp =
            MHD_create_post_processor(req->conn, 64 * 1024, part_iter, &m);

        if (pp == NULL) {
            return sl_reply_error(req,
                                  SL_EINVAL,
                                  "Content-Type",
                                  "multipart body without a boundary");
        }
        if (MHD_post_process(pp, req->body.data, req->body.len) != MHD_YES ||
            m.overflow || m.n == 0) {
            (void)MHD_destroy_post_processor(pp);
            rc = sl_reply_error(req,
                                SL_EINVAL,
                                "body",
                                m.overflow ? "more than %d parts"
                                           : "malformed multipart body (%d "
                                             "parts at most)",
                                MAX_PARTS);
            goto out;
        }
        (void)MHD_destroy_post_processor(pp);
        meta = json_loadb(m.parts[0].data.data,
                          m.parts[0].data.len,
                          JSON_REJECT_DUPLICATES,
                          &jerr);
        if (meta == NULL) {
            rc = sl_reply_error(req,
                                SL_EBADJSON,
                                m.parts[0].name,
                                "first part: malformed JSON at line %d, "
                                "column %d: %s",
                                jerr.line,
                                jerr.column,
                                jerr.text);
            goto out;
        }
    } else if (sl_req_body_json(req, &meta) != 0) {
        goto out; /* replied */
    }
    rc = append(req, job, meta, &m, &err);
    rc = rc != 0 ? sl_reply_err(req, &err) : reply_accepted(req, meta);
out:
    json_decref(meta);
    multipart_free(&m);
    return rc;
}

int
sl_api_bb_record_delete(struct sl_req *req)
{
    const char *job = sl_req_param(req, "job");
    const char *id = sl_req_query(req, "_recordid");
    struct sl_err err = {0};
    json_t *meta = NULL;
    int rc = check_job(req, job);

    if (rc != 0) {
        return rc;
    }
    if (id == NULL || id[0] == '\0') {
        return sl_reply_error(req,
                              SL_EINVAL,
                              "_recordid",
                              "the query parameter _recordid is required");
    }
    meta = json_pack("{s:s}", "_recordid", id);
    if (meta == NULL) {
        return sl_reply_error(
            req, SL_EINVAL, "_recordid", "_recordid is not valid UTF-8");
    }
    rc = sl_bb_add(req->svc->bulkbuilder, job, meta, 1, &err);
    rc = rc != 0 ? sl_reply_err(req, &err) : reply_accepted(req, meta);
    json_decref(meta);
    return rc;
}

/* Next line of @body from *pos: [*start, *end) without the newline. */
static int
next_line(const struct sl_buf *body, size_t *pos, size_t *start, size_t *end)
{
    const char *nl = NULL;

    if (*pos >= body->len) {
        return 0;
    }
    *start = *pos;
    nl = memchr(body->data + *pos, '\n', body->len - *pos);
    *end = nl != NULL ? (size_t)(nl - body->data) : body->len;
    *pos = *end + 1;
    if (*end > *start && body->data[*end - 1] == '\r') {
        (*end)--;
    }
    return 1;
}

static int
blank(const char *s, size_t len)
{
    size_t i = 0;

    for (i = 0; i < len; i++) {
        if (s[i] != ' ' && s[i] != '\t') {
            return 0;
        }
    }
    return 1;
}

int
sl_api_bb_bulk_post(struct sl_req *req)
{
    const char *job = sl_req_param(req, "job");
    struct sl_err err = {0};
    json_t *recs = NULL;
    json_t *meta = NULL;
    size_t pos = 0;
    size_t start = 0;
    size_t end = 0;
    size_t line = 0;
    size_t i = 0;
    int rc = check_job(req, job);

    if (rc != 0) {
        return rc;
    }
    recs = json_array();
    while (next_line(&req->body, &pos, &start, &end)) {
        json_error_t jerr;
        char field[32];

        line++;
        if (blank(req->body.data + start, end - start)) {
            continue;
        }
        (void)snprintf(field, sizeof(field), "line %zu", line);
        meta = json_loadb(
            req->body.data + start, end - start, JSON_REJECT_DUPLICATES, &jerr);
        if (meta == NULL) {
            rc = sl_reply_error(req,
                                SL_EBADJSON,
                                field,
                                "line %zu: malformed JSON at column %d: %s",
                                line,
                                jerr.column,
                                jerr.text);
            goto out;
        }
        if (!json_is_object(meta) ||
            !json_is_string(json_object_get(meta, "_recordid")) ||
            json_string_length(json_object_get(meta, "_recordid")) == 0) {
            json_decref(meta);
            rc = sl_reply_error(req,
                                SL_EINVAL,
                                field,
                                "line %zu: a record is a JSON object with a "
                                "non-empty string _recordid",
                                line);
            goto out;
        }
        (void)json_array_append_new(recs, meta);
    }
    if (json_array_size(recs) == 0) {
        rc = sl_reply_error(
            req, SL_EINVAL, "body", "the bulk has no record (JSON lines)");
        goto out;
    }
    json_array_foreach(recs, i, meta)
    {
        rc = sl_bb_add(req->svc->bulkbuilder, job, meta, 0, &err);
        if (rc != 0) {
            /* Lines before this one are accepted (and durable): say so. */
            rc = sl_reply_error(req,
                                err.code,
                                err.field[0] ? err.field : NULL,
                                "record %zu: %s (the %zu record(s) before it "
                                "were accepted)",
                                i + 1,
                                err.message,
                                i);
            goto out;
        }
    }
    rc = sl_reply_json(
        req,
        202,
        json_pack("{s:I}", "accepted", (json_int_t)json_array_size(recs)));
out:
    json_decref(recs);
    return rc;
}

int
sl_api_bb_status(struct sl_req *req)
{
    if (req->svc->bulkbuilder == NULL) {
        return sl_reply_error(
            req, SL_ENOTREADY, NULL, "the bulkbuilder is not running");
    }
    return sl_reply_json(req, 200, sl_bb_status(req->svc->bulkbuilder, NULL));
}

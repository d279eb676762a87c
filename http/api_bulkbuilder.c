/*
 * Bulkbuilder REST API (docs/bulkbuilder.md): push
 * records into a running standard job.  A 202 is answered only after the
 * record is in the job's journal, so it survives kill -9.
 *
 * POST .../record takes a JSON record, or multipart/form-data whose first
 * part is the JSON record and whose further parts are attachments (part
 * name = attachment name), parsed with GMime.
 * POST .../bulk takes JSON lines, streamed through a spool file; every
 * line is checked before any is accepted, so a bad line rejects the
 * whole request.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <gmime/gmime.h>
#include <pthread.h>

#include "bulkbuilder/bulkbuilder.h"
#include "http/http_int.h"

#define MAX_PARTS 64

/* 404 for an unknown job; 0 otherwise. */
static int
check_job(struct sl__req *req, const char *job)
{
    json_t *def = NULL;

    if (req->svc->bulkbuilder == NULL) {
        (void)sl__reply_error(
            req, SL_ENOTREADY, NULL, "the bulkbuilder is not running");
        return SL_ENOTREADY;
    }
    def = sl_jm_defs_get(req->svc->jm, "jobs", job);
    if (def == NULL) {
        (void)sl__reply_error(req, SL_ENOENT, "job", "no job '%s'", job);
        return SL_ENOENT;
    }
    json_decref(def);
    return 0;
}

/* One multipart part. */
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

static pthread_once_t gmime_once = PTHREAD_ONCE_INIT;

static void
gmime_init(void)
{
    g_mime_init(); /* counted: other users of GMime may call it too */
}

/* Part @obj (the content decoded) into @m; 0 or -1. */
static int
multipart_add(struct multipart *m, GMimeObject *obj)
{
    const char *name = NULL;
    GMimeDataWrapper *w = NULL;
    GMimeStream *out = NULL;
    GByteArray *bytes = NULL;
    struct part *p = NULL;
    int rc = 0;

    if (!GMIME_IS_PART(obj)) {
        return -1; /* a nested multipart is no attachment */
    }
    if (m->n == MAX_PARTS) {
        m->overflow = 1;
        return -1;
    }
    name = g_mime_object_get_content_disposition_parameter(obj, "name");
    p = &m->parts[m->n++];
    p->name = sl_strdup(name != NULL ? name : "");
    sl_buf_init(&p->data, m->limit);
    w = g_mime_part_get_content(GMIME_PART(obj));
    if (w == NULL) {
        return 0; /* an empty part */
    }
    out = g_mime_stream_mem_new();
    if (g_mime_data_wrapper_write_to_stream(w, out) < 0) {
        rc = -1;
    } else {
        bytes = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(out));
        if (bytes->len > 0 &&
            sl_buf_append(&p->data, bytes->data, bytes->len) != 0) {
            rc = -1;
        }
    }
    g_object_unref(out);
    return rc;
}

/*
 * The buffered body of @req, of Content-Type @ctype, into @m; replies 400
 * for a body that is no multipart with parts or has too many of them.
 */
static int
multipart_read(struct sl__req *req, const char *ctype, struct multipart *m)
{
    char *head = NULL;
    GMimeStream *cat = NULL;
    GMimeStream *src = NULL;
    GMimeParser *parser = NULL;
    GMimeObject *obj = NULL;
    int i = 0;
    int n = 0;
    int rc = 0;

    /* before any GMime call: its types are registered there (two first
     * requests at once crashed in g_mime_stream_cat_new otherwise) */
    (void)pthread_once(&gmime_once, gmime_init);
    head = sl_asprintf("Content-Type: %s\r\n\r\n", ctype);
    cat = g_mime_stream_cat_new();
    src = g_mime_stream_mem_new_with_buffer(head, strlen(head));
    (void)g_mime_stream_cat_add_source(GMIME_STREAM_CAT(cat), src);
    g_object_unref(src);
    src = g_mime_stream_mem_new_with_buffer(
        req->body.data != NULL ? req->body.data : "", req->body.len);
    (void)g_mime_stream_cat_add_source(GMIME_STREAM_CAT(cat), src);
    g_object_unref(src);
    sl_free(head);
    parser = g_mime_parser_new_with_stream(cat);
    g_object_unref(cat);
    obj = g_mime_parser_construct_part(parser, NULL);
    g_object_unref(parser);
    if (obj == NULL || !GMIME_IS_MULTIPART(obj) ||
        g_mime_multipart_get_boundary(GMIME_MULTIPART(obj)) == NULL) {
        rc = sl__reply_error(req,
                             SL_EINVAL,
                             "Content-Type",
                             "multipart body without a boundary");
        goto out;
    }
    n = g_mime_multipart_get_count(GMIME_MULTIPART(obj));
    for (i = 0; i < n && rc == 0; i++) {
        rc = multipart_add(m,
                           g_mime_multipart_get_part(GMIME_MULTIPART(obj), i));
    }
    if (rc != 0 || m->n == 0) {
        rc = sl__reply_error(req,
                             SL_EINVAL,
                             "body",
                             m->overflow ? "more than %d parts"
                                         : "malformed multipart body (%d "
                                           "parts at most)",
                             MAX_PARTS);
    }
out:
    if (obj != NULL) {
        g_object_unref(obj);
    }
    return rc;
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
append(struct sl__req *req,
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
reply_accepted(struct sl__req *req, const json_t *meta)
{
    return sl__reply_json(
        req,
        202,
        json_pack("{s:O}", "_recordid", json_object_get(meta, "_recordid")));
}

int
sl__api_bb_record_post(struct sl__req *req)
{
    const char *job = sl__req_param(req, "job");
    const char *ctype = sl__req_header(req, "Content-Type");
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
        rc = multipart_read(req, ctype, &m);
        if (rc != 0) {
            goto out;
        }
        meta = json_loadb(m.parts[0].data.data,
                          m.parts[0].data.len,
                          JSON_REJECT_DUPLICATES,
                          &jerr);
        if (meta == NULL) {
            rc = sl__reply_error(req,
                                 SL_EBADJSON,
                                 m.parts[0].name,
                                 "first part: malformed JSON at line %d, "
                                 "column %d: %s",
                                 jerr.line,
                                 jerr.column,
                                 jerr.text);
            goto out;
        }
    } else if (sl__req_body_json(req, &meta) != 0) {
        goto out; /* replied */
    }
    rc = append(req, job, meta, &m, &err);
    rc = rc != 0 ? sl__reply_err(req, &err) : reply_accepted(req, meta);
out:
    json_decref(meta);
    multipart_free(&m);
    return rc;
}

int
sl__api_bb_record_delete(struct sl__req *req)
{
    const char *job = sl__req_param(req, "job");
    const char *id = sl__req_query(req, "_recordid");
    const char *source = sl__req_query(req, "_source");
    struct sl_err err = {0};
    json_t *meta = NULL;
    int rc = check_job(req, job);

    if (rc != 0) {
        return rc;
    }
    if (id == NULL || id[0] == '\0') {
        return sl__reply_error(req,
                               SL_EINVAL,
                               "_recordid",
                               "the query parameter _recordid is required");
    }
    meta = json_pack("{s:s}", "_recordid", id);
    if (meta == NULL) {
        return sl__reply_error(
            req, SL_EINVAL, "_recordid", "_recordid is not valid UTF-8");
    }
    if (source != NULL && source[0] != '\0') {
        /* a delete from that source only (docs/index.md "Sources") */
        (void)json_object_set_new(meta, "_source", json_string(source));
    }
    rc = sl_bb_add(req->svc->bulkbuilder, job, meta, 1, &err);
    rc = rc != 0 ? sl__reply_err(req, &err) : reply_accepted(req, meta);
    json_decref(meta);
    return rc;
}

/*
 * POST .../bulk streams: each line is checked as it arrives (parsed, then
 * dropped) and written to a spool file that nobody else can see; only
 * when every line was good are the lines read back, one at a time, and
 * appended to the journal.  Memory is the longest line plus two 64 KiB
 * buffers, whatever the body's size; a bad line still refuses the whole
 * request.
 */
#define SPOOL_CHUNK ((size_t)64 << 10)

struct intake {
    struct sl_buf line; /* the line being read (http.maxBodyBytes at most) */
    struct sl_buf out;  /* spool bytes not yet written */
    int fd;             /* the spool (unnamed file), or -1 */
    size_t lines;       /* lines seen */
    size_t records;     /* non-blank lines */
};

static int
blank(const char *s, size_t len)
{
    size_t i = 0;

    for (i = 0; i < len; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r') {
            return 0;
        }
    }
    return 1;
}

/* Parse line @no (@len bytes at @s) into *meta; 0 or an error naming it. */
static int
parse_line(
    const char *s, size_t len, size_t no, json_t **meta, struct sl_err *err)
{
    char field[32];
    json_error_t jerr;
    struct sl_err rerr;

    (void)snprintf(field, sizeof(field), "line %zu", no);
    if (len > 0 && s[len - 1] == '\r') {
        len--;
    }
    *meta = json_loadb(s, len, JSON_REJECT_DUPLICATES, &jerr);
    if (*meta == NULL) {
        return sl_err_set(err,
                          SL_EBADJSON,
                          field,
                          "line %zu: malformed JSON at column %d: %s",
                          no,
                          jerr.column,
                          jerr.text);
    }
    sl_err_clear(&rerr);
    if (sl_bb_record_check(*meta, &rerr) != 0) {
        json_decref(*meta);
        *meta = NULL;
        return sl_err_set(err,
                          SL_EINVAL,
                          field,
                          "line %zu: %s (a record is a JSON object with a "
                          "non-empty string _recordid)",
                          no,
                          rerr.message);
    }
    return 0;
}

static int
write_all(int fd, const char *data, size_t len, struct sl_err *err)
{
    int rc = sl_write_all(fd, data, len);

    return rc == 0 ? 0
                   : sl_err_set(err,
                                rc,
                                "body",
                                "cannot spool the bulk: %s",
                                sl_strerror(rc));
}

static int
spool_flush(struct intake *in, struct sl_err *err)
{
    int rc = write_all(in->fd, in->out.data, in->out.len, err);

    sl_buf_reset(&in->out);
    return rc;
}

/* Spool @len bytes: through the buffer, or straight when they are more. */
static int
spool_write(struct intake *in, const char *data, size_t len, struct sl_err *err)
{
    int rc = 0;

    if (in->out.len + len > SPOOL_CHUNK) {
        rc = spool_flush(in, err);
    }
    if (rc == 0 && len >= SPOOL_CHUNK) {
        return write_all(in->fd, data, len, err);
    }
    return rc != 0 ? rc : sl_buf_append(&in->out, data, len);
}

/* Check the complete line in in->line and spool it. */
static int
intake_line(struct intake *in, struct sl_err *err)
{
    json_t *meta = NULL;
    int rc = 0;

    in->lines++;
    if (!blank(in->line.data, in->line.len)) {
        rc = parse_line(in->line.data, in->line.len, in->lines, &meta, err);
        if (rc != 0) {
            return rc;
        }
        json_decref(meta);
        in->records++;
    }
    /* Blank lines too, so that the line numbers still hold read back. */
    rc = spool_write(in, in->line.data, in->line.len, err);
    if (rc == 0) {
        rc = spool_write(in, "\n", 1, err);
    }
    sl_buf_reset(&in->line);
    return rc;
}

int
sl__api_bb_bulk_begin(struct sl__req *req)
{
    struct intake *in = NULL;
    struct sl_err err = {0};
    int rc = check_job(req, sl__req_param(req, "job"));
    int fd = -1;

    if (rc != 0) {
        return rc; /* replied */
    }
    fd = sl_bb_spool_open(req->svc->bulkbuilder, &err);
    if (fd < 0) {
        return sl__reply_err(req, &err);
    }
    in = sl_calloc(1, sizeof(*in));
    in->fd = fd;
    sl_buf_init(&in->line, (size_t)req->cfg->max_body_bytes);
    sl_buf_init(&in->out, SPOOL_CHUNK);
    req->ctx = in;
    return 0;
}

int
sl__api_bb_bulk_body(struct sl__req *req,
                     const char *data,
                     size_t len,
                     struct sl_err *err)
{
    struct intake *in = req->ctx;

    while (len > 0) {
        const char *nl = memchr(data, '\n', len);
        size_t take = nl != NULL ? (size_t)(nl - data) : len;

        if (sl_buf_append(&in->line, data, take) != 0) {
            return sl_err_set(err,
                              SL_ETOOLARGE,
                              "line",
                              "line %zu is longer than http.maxBodyBytes",
                              in->lines + 1);
        }
        if (nl == NULL) {
            break;
        }
        if (intake_line(in, err) != 0) {
            return err->code;
        }
        data += take + 1;
        len -= take + 1;
    }
    return 0;
}

void
sl__api_bb_bulk_cleanup(struct sl__req *req)
{
    struct intake *in = req->ctx;

    if (in != NULL) {
        if (in->fd >= 0) {
            (void)close(in->fd);
        }
        sl_buf_free(&in->line);
        sl_buf_free(&in->out);
        sl_free(in);
    }
    req->ctx = NULL;
}

/*
 * Read the spool back from the start and append each record to @job.
 * Returns the number appended in *done; 0 or an error in @err naming the
 * record that failed.
 */
static int
replay(struct sl__req *req,
       struct intake *in,
       const char *job,
       size_t *done,
       struct sl_err *err)
{
    char *chunk = sl_malloc(SPOOL_CHUNK);
    size_t no = 0;
    int rc = 0;

    *done = 0;
    sl_buf_reset(&in->line);
    if (lseek(in->fd, 0, SEEK_SET) != 0) {
        rc = sl_err_set(err, SL_EIO, "body", "cannot read the spooled bulk");
    }
    while (rc == 0) {
        ssize_t n = read(in->fd, chunk, SPOOL_CHUNK);
        const char *p = chunk;
        size_t left = 0;

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            rc = n < 0 ? sl_err_set(err,
                                    SL_EIO,
                                    "body",
                                    "cannot read the spooled bulk: %s",
                                    sl_errno_str(errno))
                       : 0;
            break;
        }
        left = (size_t)n;
        while (rc == 0 && left > 0) {
            const char *nl = memchr(p, '\n', left);
            size_t take = nl != NULL ? (size_t)(nl - p) : left;
            json_t *meta = NULL;
            struct sl_err aerr = {0};

            (void)sl_buf_append(&in->line, p, take); /* checked in intake */
            if (nl == NULL) {
                break;
            }
            p += take + 1;
            left -= take + 1;
            no++;
            if (blank(in->line.data, in->line.len)) {
                sl_buf_reset(&in->line);
                continue;
            }
            rc = parse_line(in->line.data, in->line.len, no, &meta, err);
            sl_buf_reset(&in->line);
            if (rc == 0 &&
                sl_bb_add(req->svc->bulkbuilder, job, meta, 0, &aerr) != 0) {
                rc = sl_err_set(err,
                                aerr.code,
                                aerr.field[0] ? aerr.field : NULL,
                                "line %zu: %s",
                                no,
                                aerr.message);
            }
            json_decref(meta);
            *done += rc == 0 ? 1 : 0;
        }
    }
    sl_free(chunk);
    return rc;
}

int
sl__api_bb_bulk_post(struct sl__req *req)
{
    struct intake *in = req->ctx;
    struct sl_err err = {0};
    size_t done = 0;
    int rc = 0;

    if (in->line.len > 0 && intake_line(in, &err) != 0) {
        return sl__reply_err(req, &err); /* a last line without newline */
    }
    if (in->records == 0) {
        return sl__reply_error(
            req, SL_EINVAL, "body", "the bulk has no record (JSON lines)");
    }
    rc = spool_flush(in, &err);
    if (rc == 0) {
        rc = replay(req, in, sl__req_param(req, "job"), &done, &err);
    }
    if (rc != 0) {
        /* Records before the failing one are accepted (and durable). */
        return sl__reply_error(req,
                               err.code,
                               err.field[0] ? err.field : NULL,
                               "%s (the %zu record(s) before it were "
                               "accepted)",
                               err.message,
                               done);
    }
    return sl__reply_json(
        req, 202, json_pack("{s:I}", "accepted", (json_int_t)done));
}

int
sl__api_bb_status(struct sl__req *req)
{
    if (req->svc->bulkbuilder == NULL) {
        return sl__reply_error(
            req, SL_ENOTREADY, NULL, "the bulkbuilder is not running");
    }
    return sl__reply_json(req, 200, sl_bb_status(req->svc->bulkbuilder, NULL));
}

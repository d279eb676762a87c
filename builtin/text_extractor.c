/*
 * textExtractor (in place of SMILA's TikaPipelet, docs/workers.md): for each
 * record of input `recordsToExtract`, streams the content attachment
 * (`fileContent` by default) through a MIME type detector (libmagic, the file
 * extension, the record's own `mimeType`) and then through one extractor: plain
 * text with charset detection (libuchardet) and iconv, the libxml2 HTML or XML
 * SAX push parser, or an external converter process.  It writes the
 * record's metadata without attachments plus `mimeType`, `charset` and
 * `title` to output `extractedRecords`, and the text (always valid UTF-8)
 * as attachment `text` (parameter textOutput "attachment", the default: no
 * JSON escaping and parsing of every text on its way to the indexWriter)
 * or as attribute `text` (textOutput "attribute").
 * Memory is a few fixed buffers per task plus the text, which is capped
 * by maxTextBytes; content beyond maxContentBytes is read and skipped.
 * The conversion itself is the text library's (text/text.h); this file
 * reads the records, turns the results into attributes and counters.
 * See docs/workers.md "textExtractor".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin/builtin_int.h"
#include "text/text.h"

#define SLOT_IN  "recordsToExtract"
#define SLOT_OUT "extractedRecords"
#define TEXT_ATT "text"

#define READ_BUF            SL_TEXT_CHUNK /* content chunks */
#define HEAD_MAX            READ_BUF      /* bytes seen by libmagic, uchardet */
#define DEFAULT_ATTACHMENT  "fileContent"
#define WEB_ATTACHMENT      "httpContent" /* the webCrawler's */
#define DEFAULT_MAX_CONTENT (64ull << 20)
#define MIME_MAX            SL_TEXT_MIME_MAX

/* One record being extracted. */
struct doc {
    struct sl_text_doc *td;  /* the text library's document */
    struct sl_text_result r; /* its results, once ended */
    char mime[MIME_MAX];     /* the `mimeType` attribute */
    int truncated;           /* content or text was cut */
    int given_text;          /* the text came as attachment `text` */
};

/* The parameters and buffers of one task. */
struct tx {
    struct sl_task_ctx *ctx;
    struct sl_bulk_writer *w; /* output, borrowed */
    const char *att;          /* contentAttachment */
    const char *att2;         /* also taken without contentAttachment */
    uint64_t max_content;     /* maxContentBytes */
    uint64_t max_text;        /* maxTextBytes */
    int text_attribute;       /* textOutput "attribute" */
    const json_t *converters; /* services' converters, borrowed or NULL */
    struct sl_text *text;     /* the text library's extractor */
    size_t bulk;              /* index of the input bulk being read */
    char *buf;                /* READ_BUF: content chunks */
};

/* ------------------------------------------------------------------------
 * Records.
 * --------------------------------------------------------------------- */

static void
doc_init(struct tx *x, struct doc *d)
{
    memset(d, 0, sizeof(*d));
    d->td = sl_text_doc_new(x->text);
    sl_text_doc_result(d->td, &d->r);
}

static void
doc_free(struct doc *d)
{
    sl_text_doc_free(d->td);
}

/* The text library's cancel test: the task was canceled. */
static int
task_canceled(void *arg)
{
    return sl_task_is_canceled(arg);
}

/* The MIME type the record brings: `mimeType`, else the webCrawler's
 * `httpMimetype`; borrowed or NULL. */
static const char *
record_mime(const struct tx *x, const json_t *meta)
{
    const char *m = json_string_value(json_object_get(meta, "mimeType"));

    return m != NULL ? m
                     : json_string_value(json_object_get(
                           meta, sl_task_mapped(x->ctx, "httpMimetype")));
}

/* What the record says of its type: its own, its extension, its id. */
static void
record_hints(const struct tx *x, const json_t *meta, struct sl_text_hints *h)
{
    h->mime = record_mime(x, meta);
    h->extension = json_string_value(
        json_object_get(meta, sl_task_mapped(x->ctx, "fileExtension")));
    h->id = json_string_value(json_object_get(meta, "_recordid"));
}

/* Read up to @cap bytes of the current attachment into @buf. */
static int
read_up_to(struct sl_bulk_reader *r,
           char *buf,
           size_t cap,
           size_t *len,
           struct sl_err *err)
{
    size_t n = 0;
    int rc = 0;

    *len = 0;
    while (*len < cap) {
        rc = sl_bulk_reader_attachment_read(r, buf + *len, cap - *len, &n, err);
        if (rc != 0 || n == 0) {
            break;
        }
        *len += n;
    }
    return rc;
}

/*
 * Stream the content attachment (@size bytes) of record @meta through the
 * extractor its first bytes select.  At most maxContentBytes are read
 * here; the rest is skipped by the reader.  Returns 0, a reader error
 * (details in @err) or SL_ECANCELED.
 */
static int
content(struct tx *x,
        struct sl_bulk_reader *r,
        const json_t *meta,
        struct doc *d,
        uint64_t size,
        struct sl_err *err)
{
    uint64_t left = size < x->max_content ? size : x->max_content;
    size_t len = 0;
    int rc = 0;
    int fed = 0;
    struct sl_text_hints h;
    const char *given = NULL;

    d->truncated = size > x->max_content;
    rc = read_up_to(
        r, x->buf, left < HEAD_MAX ? (size_t)left : HEAD_MAX, &len, err);
    if (rc != 0) {
        return rc;
    }
    record_hints(x, meta, &h);
    if (sl_text_mime_detect(x->text, &h, x->buf, len, d->mime)) {
        sl_task_counter_add(x->ctx, "mime.byExtension", 1);
    }
    sl_text_doc_name(d->td, h.id);
    given = json_string_value(
        json_object_get(meta, sl_task_mapped(x->ctx, "httpCharset")));
    if (sl_text_doc_begin(d->td, d->mime, given, x->buf, len) != 0) {
        /* A parser could not be created: the record has no text. */
        SL_WARN("textExtractor: %s: no parser for %s",
                json_string_value(json_object_get(meta, "_recordid")),
                d->mime);
        fed = SL_TEXT_STOP;
    } else {
        left -= len;
        fed = sl_text_doc_feed(d->td, x->buf, len);
    }
    while (fed == 0 && left > 0) {
        if (sl_task_is_canceled(x->ctx)) {
            fed = SL_ECANCELED;
            break;
        }
        rc = sl_bulk_reader_attachment_read(
            r, x->buf, left < READ_BUF ? (size_t)left : READ_BUF, &len, err);
        if (rc != 0 || len == 0) {
            break;
        }
        left -= len;
        fed = sl_text_doc_feed(d->td, x->buf, len);
    }
    if (rc == 0 && fed < 0) {
        rc = fed;
    }
    fed = sl_text_doc_end(d->td, rc != 0);
    sl_text_doc_result(d->td, &d->r);
    if (d->r.full || d->r.cut) {
        d->truncated = 1;
    }
    return rc != 0 ? rc : fed;
}

/* `fileName`, else the last segment of `_recordid`; borrowed. */
static const char *
fallback_title(const struct tx *x, const json_t *meta)
{
    const char *name = json_string_value(
        json_object_get(meta, sl_task_mapped(x->ctx, "fileName")));
    const char *id = json_string_value(json_object_get(meta, "_recordid"));
    const char *slash = id != NULL ? strrchr(id, '/') : NULL;

    if (name != NULL) {
        return name;
    }
    if (id == NULL) {
        return "";
    }
    return slash != NULL ? slash + 1 : id;
}

/* Set string attribute @key (valid UTF-8 by construction; "" if not). */
static void
set_string(json_t *meta, const char *key, const char *s, size_t len)
{
    json_t *v = json_stringn(s != NULL ? s : "", len);

    if (v == NULL) {
        SL_ERROR("textExtractor: %s is not valid UTF-8; left empty", key);
        v = json_string("");
    }
    (void)json_object_set_new(meta, key, v);
}

/* A record whose text could not be had (a converter failed, timed out or
 * is missing, or the document is corrupt) is still indexed, with what it
 * has; the run's document history says why its text is missing. */
static void
report(struct tx *x, const struct doc *d, const json_t *meta)
{
    static const char *const reasons[] = {NULL,
                                          NULL,
                                          "converter.failed",
                                          "converter.timeout",
                                          "converter.missing"};
    const char *reason = reasons[d->r.outcome];

    if (reason == NULL && d->r.corrupt) {
        reason = "corrupt";
    }
    if (reason != NULL) {
        sl_task_doc(x->ctx,
                    SL_JM_DOC_FAILED,
                    json_string_value(json_object_get(meta, "_source")),
                    json_string_value(json_object_get(meta, "_recordid")),
                    reason,
                    d->mime);
    }
}

/* Count the outcome of a record. */
static void
count(struct tx *x, const struct doc *d, int has_content)
{
    static const char *const kinds[] = {
        "mime.text", "mime.html", "mime.xml", "mime.other"};
    static const char *const outcomes[] = {"records.extracted",
                                           "records.noText",
                                           "converter.failed",
                                           "converter.timeout",
                                           "converter.missing"};

    if (!has_content) {
        sl_task_counter_add(x->ctx, "records.noText", 1);
        return;
    }
    sl_task_counter_add(x->ctx, kinds[d->r.kind], 1);
    sl_task_counter_add(x->ctx, outcomes[d->r.outcome], 1);
    if (d->r.converted) {
        sl_task_counter_add(x->ctx, "converter.ok", 1);
    }
    if (d->truncated) {
        sl_task_counter_add(x->ctx, "records.truncated", 1);
    }
    if (d->r.encoding[0] != '\0') {
        sl_task_counter_add(x->ctx, "records.decompressed", 1);
    }
    if (d->r.corrupt) {
        sl_task_counter_add(x->ctx, "records.corrupt", 1);
    }
    if (d->r.malformed) {
        sl_task_counter_add(x->ctx, "records.malformed", 1);
    }
}

/* The metadata of an office document or an EPUB, when it has some:
 * `author`, `created`, `modified` (ISO 8601 as the document gives them)
 * and `pageCount`. */
static void
set_metadata(json_t *meta, const struct sl_text_result *r)
{
    const char *keys[] = {"author", "created", "modified"};
    const char *values[] = {r->author, r->created, r->modified};
    size_t i = 0;

    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (values[i][0] != '\0') {
            set_string(meta, keys[i], values[i], strlen(values[i]));
        }
    }
    if (r->pages > 0 && r->pages <= (uint64_t)INT64_MAX) {
        (void)json_object_set_new(
            meta, "pageCount", json_integer((json_int_t)r->pages));
    }
}

/* Write @meta (its attachments are not copied) with the extraction
 * results.  Returns an enum sl_worker_result. */
static int
write_record(struct tx *x, json_t *meta, struct doc *d, int has_content)
{
    const char *title =
        d->r.title[0] != '\0' ? d->r.title : fallback_title(x, meta);
    int rc = 0;

    /* A record that brings its text as attachment (extracted already, by
     * the webCrawler's extractText or by this worker) keeps its title,
     * MIME type and charset; the text is written as textOutput says. */
    if (d->given_text) {
        /* as a record passed as stored: nothing added */
        if (x->text_attribute) {
            set_string(meta, "text", d->r.text, d->r.len);
        } else {
            (void)json_object_del(meta, "text");
        }
        sl_task_counter_add(x->ctx, "records.textGiven", 1);
        if (d->r.full) {
            sl_task_counter_add(x->ctx, "records.truncated", 1);
        }
        goto write;
    }
    /* A record pushed with its text (JSON over the bulkbuilder API) and no
     * content keeps its own title and text. */
    if (!has_content && json_is_string(json_object_get(meta, "text"))) {
        if (!json_is_string(json_object_get(meta, "title"))) {
            set_string(meta, "title", title, strlen(title));
        }
        if (!json_is_string(json_object_get(meta, "mimeType"))) {
            set_string(meta, "mimeType", "text/plain", 10);
        }
        sl_task_counter_add(x->ctx, "records.textGiven", 1);
        goto write;
    }
    if (!has_content) {
        struct sl_text_hints h;
        const char *ext = NULL;

        record_hints(x, meta, &h);
        ext = sl_text_mime_by_extension(h.extension, h.id);
        sl_text_mime_normalize(h.mime, d->mime);
        if (d->mime[0] == '\0') {
            (void)snprintf(d->mime,
                           MIME_MAX,
                           "%s",
                           ext != NULL ? ext : "application/octet-stream");
        }
    }
    if (has_content && d->r.encoding[0] != '\0') {
        /* a compressed file: typed by what is inside, as HTTP says it */
        set_string(
            meta, "contentEncoding", d->r.encoding, strlen(d->r.encoding));
        if (d->r.inner_mime[0] != '\0') {
            (void)snprintf(d->mime, MIME_MAX, "%s", d->r.inner_mime);
        }
    }
    set_string(meta, "mimeType", d->mime, strlen(d->mime));
    if (d->r.charset[0] != '\0') {
        set_string(meta, "charset", d->r.charset, strlen(d->r.charset));
    }
    set_string(meta, "title", title, strlen(title));
    set_metadata(meta, &d->r);
    if (x->text_attribute) {
        set_string(meta, "text", d->r.text, d->r.len);
    } else {
        (void)json_object_del(meta, "text"); /* the attachment replaces it */
    }
    count(x, d, has_content);
    if (has_content) {
        report(x, d, meta);
    }
write:
    rc = sl_bulk_writer_record_begin(x->w, meta);
    if (rc == 0 && !x->text_attribute && (has_content || d->given_text)) {
        rc = sl_bulk_writer_attachment_begin(x->w, TEXT_ATT, d->r.len);
        if (rc == 0 && d->r.len > 0) {
            rc = sl_bulk_writer_attachment_write(x->w, d->r.text, d->r.len);
        }
    }
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(x->w);
    }
    if (rc != 0) {
        sl_task_set_message(x->ctx, "write: %s", sl_strerror(rc));
        return SL_WORKER_RECOVERABLE;
    }
    return SL_WORKER_OK;
}

/* Read the attachment `text` (@size bytes, supposed UTF-8) of a record
 * that brings its text into the document, up to maxTextBytes: cut between two
 * characters and, like an extracted text, not after a space or a line
 * break. */
static int
given_text(struct tx *x,
           struct sl_bulk_reader *r,
           struct doc *d,
           uint64_t size,
           struct sl_err *err)
{
    uint64_t left = size;
    size_t len = 0;
    int rc = 0;
    int full = 0;

    d->given_text = 1;
    while (left > 0 && !full) {
        rc = sl_bulk_reader_attachment_read(
            r, x->buf, left < READ_BUF ? (size_t)left : READ_BUF, &len, err);
        if (rc != 0 || len == 0) {
            break;
        }
        left -= len;
        full = sl_text_doc_give(d->td, x->buf, len);
    }
    sl_text_doc_give_end(d->td);
    sl_text_doc_result(d->td, &d->r);
    return rc;
}

/*
 * One record, its first attachment begun already (@rc from
 * sl_bulk_reader_attachment_next, @name, @size): walk its attachments
 * (the content one is extracted; a first attachment `text` is the
 * record's text, extracted already, and then no other is read; the
 * others are skipped), then write it.
 * Returns an enum sl_worker_result with the task message set: FATAL for a
 * corrupt input, RECOVERABLE for an output error or a cancel.
 */
static int
extract_record(struct tx *x,
               struct sl_bulk_reader *r,
               json_t *meta,
               int rc,
               const char *name,
               uint64_t size)
{
    struct doc d;
    struct sl_err err;
    int has_content = 0;
    int first = 1;
    int res = SL_WORKER_OK;

    sl_err_clear(&err);
    doc_init(x, &d);
    for (; rc > 0; rc = sl_bulk_reader_attachment_next(r, &name, &size, &err)) {
        if (has_content || d.given_text) {
            continue;
        }
        if (strcmp(name, x->att) == 0 ||
            (x->att2 != NULL && strcmp(name, x->att2) == 0)) {
            has_content = 1;
            rc = content(x, r, meta, &d, size, &err);
        } else if (first && strcmp(name, TEXT_ATT) == 0) {
            rc = given_text(x, r, &d, size, &err);
        }
        first = 0;
        if (rc != 0) {
            break;
        }
    }
    if (rc == SL_ECANCELED) {
        sl_task_set_message(x->ctx, "canceled");
        res = SL_WORKER_RECOVERABLE;
    } else if (rc < 0) {
        sl_task_set_message(x->ctx, "input %zu: %s", x->bulk, err.message);
        res = SL_WORKER_FATAL;
    } else {
        res = write_record(x, meta, &d, has_content);
    }
    doc_free(&d);
    return res;
}

/* Whether a record whose first attachment is @name (@size bytes) is
 * written on as stored, with any other attachments it has: it brings its
 * text as attachment (extracted already) within maxTextBytes, and the
 * text goes out as attachment. */
static int
passes_as_stored(const struct tx *x, const char *name, uint64_t size)
{
    return !x->text_attribute && strcmp(name, TEXT_ATT) == 0 &&
           size <= x->max_text && strcmp(x->att, TEXT_ATT) != 0;
}

/* Every record of input bulk @i.  Returns an enum sl_worker_result. */
static int
extract_bulk(struct tx *x, size_t i)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_err err;
    const char *raw = NULL;
    size_t raw_len = 0;
    const char *name = NULL;
    uint64_t size = 0;
    json_t *meta = NULL;
    int res = SL_WORKER_OK;
    int rc = 0;

    sl_err_clear(&err);
    x->bulk = i;
    rc = sl_task_input_open(x->ctx, SLOT_IN, i, &r);
    if (rc != 0) {
        sl_task_set_message(x->ctx, "input %zu: %s", i, sl_strerror(rc));
        return SL_WORKER_RECOVERABLE;
    }
    for (;;) {
        rc = sl_bulk_reader_next_raw(r, &raw, &raw_len, &err);
        if (rc <= 0) {
            break;
        }
        rc = sl_bulk_reader_attachment_next(r, &name, &size, &err);
        if (rc == 1 && passes_as_stored(x, name, size)) {
            /* no decoding, one copy of the bytes */
            rc = sl_bulk_copy_record(r, x->w, &err);
            if (rc != 0 && err.message[0] != '\0') { /* the reader's */
                sl_task_set_message(x->ctx, "input %zu: %s", i, err.message);
                return SL_WORKER_FATAL;
            }
            if (rc != 0) {
                sl_task_set_message(x->ctx, "write: %s", sl_strerror(rc));
                return SL_WORKER_RECOVERABLE;
            }
            sl_task_counter_add(x->ctx, "records.textGiven", 1);
            if (sl_task_is_canceled(x->ctx)) {
                sl_task_set_message(x->ctx, "canceled");
                return SL_WORKER_RECOVERABLE;
            }
            continue;
        }
        if (rc < 0 || sl_bulk_reader_meta(r, &meta, &err) != 0) {
            rc = -1;
            break;
        }
        res = extract_record(x, r, meta, rc, name, size);
        json_decref(meta);
        meta = NULL;
        if (res != SL_WORKER_OK) {
            return res;
        }
        if (sl_task_is_canceled(x->ctx)) {
            sl_task_set_message(x->ctx, "canceled");
            return SL_WORKER_RECOVERABLE;
        }
    }
    if (rc < 0) {
        sl_task_set_message(x->ctx, "input %zu: %s", i, err.message);
        return SL_WORKER_FATAL;
    }
    sl_task_input_close(x->ctx, r);
    return SL_WORKER_OK;
}

/* sl__bi_share_input's test: the record passes as stored. */
static int
given_first(void *arg, const char *name, uint64_t size)
{
    return passes_as_stored(arg, name, size);
}

/* ------------------------------------------------------------------------
 * Tasks.
 * --------------------------------------------------------------------- */

/* Read the parameters into @x; 0 or SL_EINVAL with the task message set. */
static int
tx_init(struct sl_task_ctx *ctx, struct tx *x)
{
    const json_t *att = sl_task_param(ctx, "contentAttachment");
    const char *out = NULL;

    memset(x, 0, sizeof(*x));
    x->ctx = ctx;
    x->att = sl_task_mapped(ctx, DEFAULT_ATTACHMENT);
    x->att2 = sl_task_mapped(ctx, WEB_ATTACHMENT);
    if (att != NULL) {
        x->att2 = NULL;
        x->att = json_string_value(att);
        if (x->att == NULL || x->att[0] == '\0') {
            sl_task_set_message(ctx, "contentAttachment: not a name");
            return SL_EINVAL;
        }
    }
    if (sl_task_param_u64(
            ctx, "maxContentBytes", DEFAULT_MAX_CONTENT, &x->max_content) !=
        0) {
        sl_task_set_message(ctx, "maxContentBytes: not a number");
        return SL_EINVAL;
    }
    if (sl__bi_max_text(ctx, &x->max_text) != 0) {
        return SL_EINVAL;
    }
    out = sl_task_param_str(ctx, "textOutput");
    if (out != NULL && strcmp(out, "attachment") != 0 &&
        strcmp(out, "attribute") != 0) {
        sl_task_set_message(
            ctx,
            "textOutput must be 'attachment' or 'attribute', not '%s'",
            out);
        return SL_EINVAL;
    }
    x->text_attribute = out != NULL && strcmp(out, "attribute") == 0;
    x->converters = sl_task_services(ctx)->converters;
    if (x->converters != NULL && !json_is_object(x->converters)) {
        SL_WARN("textExtractor: converters: not an object; ignored");
        x->converters = NULL;
    }
    return 0;
}

static int
text_perform(struct sl_task_ctx *ctx)
{
    struct sl_text_opts opts;
    struct tx x;
    size_t n = 0;
    size_t i = 0;
    int res = SL_WORKER_OK;
    int rc = 0;

    if (tx_init(ctx, &x) != 0) {
        return SL_WORKER_FATAL;
    }
    /* every record brings its text (the webCrawler's extractText): the
     * input is the output, shared, not copied */
    rc = sl__bi_share_input(
        ctx, SLOT_IN, SLOT_OUT, given_first, &x, 0, "records.textGiven");
    if (rc != 0) {
        return rc > 0            ? SL_WORKER_OK
               : rc == SL_ENOENT ? SL_WORKER_FATAL /* output not connected */
                                 : SL_WORKER_RECOVERABLE;
    }
    rc = sl_task_output_writer(ctx, SLOT_OUT, &x.w);
    if (rc != 0) {
        sl_task_set_message(ctx, "output %s: %s", SLOT_OUT, sl_strerror(rc));
        return rc == SL_ENOENT ? SL_WORKER_FATAL : SL_WORKER_RECOVERABLE;
    }
    opts.max_text = x.max_text;
    opts.converters = x.converters;
    opts.canceled = task_canceled;
    opts.arg = ctx;
    x.text = sl_text_new(&opts);
    x.buf = sl_malloc(READ_BUF);
    n = sl_task_input_count(ctx, SLOT_IN);
    for (i = 0; i < n && res == SL_WORKER_OK; i++) {
        res = extract_bulk(&x, i);
    }
    sl_text_free(x.text);
    sl_free(x.buf);
    return res;
}

const struct sl_worker_type sl_worker_textExtractor = {
    SL_WORKER_ABI_VERSION,
    "textExtractor",
    "{\"name\": \"textExtractor\","
    " \"parameters\": [{\"name\": \"contentAttachment\", \"optional\": true},"
    "  " SL__BI_DECL_MAPPING ","
    "  {\"name\": \"maxTextBytes\", \"optional\": true, \"type\": \"integer\","
    "   \"maximum\": 16777216},"
    "  {\"name\": \"maxContentBytes\", \"optional\": true,"
    "   \"type\": \"integer\"},"
    "  {\"name\": \"textOutput\", \"optional\": true,"
    "   \"values\": [\"attachment\", \"attribute\"]}],"
    " \"input\": [{\"name\": \"recordsToExtract\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"extractedRecords\", \"type\": "
    "\"recordBulks\"}]}",
    text_perform,
    NULL,
    NULL,
};

/*
 * indexWriter: writes the records of input `records` into the embedded
 * index named by parameter `index` (default "default"): upserts, or
 * deletes by `_recordid` when parameter `operation` is "delete" (the
 * action reading the bulkbuilder's deletedRecords).  Idempotent by
 * `_recordid`, so a retried task writes the same state.  Records are
 * applied in batches, one SQLite transaction each.  The bulkbuilder's
 * `_version` orders writes of one id that arrive out of order (an add
 * still in the textExtractor while a later delete is written): the older
 * one is skipped (`records.stale`).
 *
 * The text comes from the record's attachment `text` (what the
 * textExtractor writes: no JSON escaping and parsing of every text), else
 * from its attribute `text`; at most maxTextBytes (16 MiB) of it.
 *
 * Field mapping (docs/index.md): title (else fileName), text, path
 * (filePath, unescaped form kept as given), mimeType, size (fileSize, else
 * httpSize), lastModified (fileLastModified, else httpLastModified, an
 * HTTP date, written as ISO 8601 as the fileCrawler's), _source,
 * _compoundRecordId; every other attribute is stored with the document.  See
 * docs/workers.md "indexWriter".
 */
#include <string.h>

#include <curl/curl.h> /* curl_getdate: an HTTP date */

#include "builtin/builtin_int.h"
#include "index/index.h"

#define BATCH 256u /* ops of one shard transaction, at most */
#define HELD  512u /* ops held over all shards, about */
/* text bytes held over all shards, about: a shard whose held texts reach
 * its share is written, so a task of big documents (maxTextBytes each)
 * holds tens of MiB, not HELD of them */
#define HELD_BYTES       ((size_t)64 << 20)
#define TEXT_ATTACHMENT  "text"
#define DEFAULT_MAX_TEXT (16ull << 20)
#define READ_CHUNK       ((size_t)64 << 10)

struct writer {
    struct sl_task_ctx *ctx;
    struct sl_index_set *index;
    const char *name;
    int deletes;
    uint64_t max_text;
    unsigned nshards;
    size_t per;            /* ops per shard transaction */
    size_t per_bytes;      /* text bytes per shard transaction, about */
    struct shard_buf *buf; /* one per shard */
    uint64_t invalid;      /* records.invalid so far: the first are logged */
};

/* Invalid records logged one by one per task; the rest are counted. */
#define INVALID_LOGGED 20

/* The ops waiting for one shard; docs[i] holds the reference ops[i] uses. */
struct shard_buf {
    json_t *docs[BATCH];
    struct sl_index_op ops[BATCH];
    size_t n;
    size_t bytes; /* text held in docs */
};

/*
 * Write the ops waiting for shard @s.  With @try a shard another writer
 * holds is not waited for: 1, and the ops stay.  Returns 0, 1 or an error
 * (task message set).
 */
static int
flush_shard(struct writer *w, unsigned s, int try)
{
    struct shard_buf *b = &w->buf[s];
    struct sl_err err;
    size_t stale = 0;
    size_t kept = 0;
    size_t i = 0;
    int rc = 0;

    if (b->n == 0) {
        return 0;
    }
    sl_err_clear(&err);
    rc = sl_index_apply_shard(w->index, w->name, s, b->ops, b->n, try, &err);
    if (rc == 1) {
        return 1;
    }
    if (rc != 0) {
        sl_task_note_error(w->ctx, rc); /* SQLITE_FULL: try again later */
        sl_task_set_message(w->ctx, "index %s: %s", w->name, err.message);
        return rc;
    }
    for (i = 0; i < b->n; i++) {
        stale += b->ops[i].skipped ? 1 : 0;
        kept += b->ops[i].kept ? 1 : 0;
        json_decref(b->docs[i]);
    }
    sl_task_counter_add(w->ctx,
                        w->deletes ? "records.deleted" : "records.indexed",
                        (double)(b->n - stale - kept));
    if (kept > 0) {
        sl_task_counter_add(
            w->ctx, "records.keptForOtherSources", (double)kept);
    }
    sl_task_counter_add(w->ctx, "transactions", 1);
    if (stale > 0) {
        sl_task_counter_add(w->ctx, "records.stale", (double)stale);
    }
    b->n = 0;
    b->bytes = 0;
    return 0;
}

/*
 * Write what must go: the full shard buffers (at the end, @final, all).
 * Pass 0 writes those whose shard is free; when one is due but its shard
 * busy (the other writer of this index is on it), pass 1 writes the
 * partial buffers of free shards meanwhile, and only pass 2 waits.  So
 * two writers of one index rarely queue behind each other.  Returns 0 or
 * an error.
 */
static int
drain(struct writer *w, int final)
{
    unsigned s = 0;
    int pass = 0;
    int due = 0;
    int rc = 0;

    for (pass = 0; pass < 3; pass++) {
        due = 0;
        for (s = 0; s < w->nshards; s++) {
            struct shard_buf *b = &w->buf[s];
            int must = final || b->n >= w->per || b->bytes >= w->per_bytes;

            if (b->n == 0 || (pass != 1 && !must)) {
                continue;
            }
            rc = flush_shard(w, s, pass < 2);
            if (rc < 0) {
                return rc;
            }
            due |= rc == 1 && must;
        }
        if (pass == 0 && !due) {
            break;
        }
    }
    return 0;
}

/* Drop the held ops without writing them. */
static void
drop_held(struct writer *w)
{
    unsigned s = 0;

    for (s = 0; w->buf != NULL && s < w->nshards; s++) {
        while (w->buf[s].n > 0) {
            json_decref(w->buf[s].docs[--w->buf[s].n]);
        }
    }
}

/* Copy @from to @to in @doc when @to is not set. */
static void
map_field(json_t *doc, const char *from, const char *to)
{
    json_t *v = json_object_get(doc, from);

    if (v != NULL && json_object_get(doc, to) == NULL) {
        (void)json_object_set(doc, to, v);
    }
}

/* A web document's date: @doc's HTTP date @from (Last-Modified, the web
 * crawler's and the webExtractor's) as lastModified in ISO 8601, the form
 * of a file's, when @doc has none; a date curl cannot read is left out. */
static void
map_http_date(json_t *doc, const char *from)
{
    const char *v = json_string_value(json_object_get(doc, from));
    char when[40];
    time_t t = (time_t)-1;

    if (v == NULL || json_object_get(doc, "lastModified") != NULL) {
        return;
    }
    t = curl_getdate(v, NULL);
    if (t != (time_t)-1) {
        sl_time_format((int64_t)t * 1000, when, sizeof(when));
        (void)json_object_set_new(doc, "lastModified", json_string(when));
    }
}

/* @len cut back so that @s does not end inside a UTF-8 sequence. */
static size_t
utf8_whole(const char *s, size_t len)
{
    size_t p = len;
    size_t need = 0;
    unsigned char lead = 0;

    while (p > 0 && len - p < 4 && ((unsigned char)s[p - 1] & 0xC0) == 0x80) {
        p--;
    }
    if (p == 0) {
        return len; /* no lead byte: invalid anyway, sl_utf8_valid says so */
    }
    lead = (unsigned char)s[p - 1];
    need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return len - (p - 1) < need ? p - 1 : len;
}

/*
 * Read the text attachment (@size bytes) of the current record into its
 * "text" attribute: at most max_text bytes, cut back to a whole UTF-8
 * character (records.textTruncated); text that is not UTF-8 is indexed
 * as "" (records.textInvalid).
 */
static int
read_text(struct writer *w,
          struct sl_bulk_reader *r,
          uint64_t size,
          json_t *meta,
          struct sl_err *err)
{
    size_t cap = size < w->max_text ? (size_t)size : (size_t)w->max_text;
    char *buf = sl_malloc(cap + 1);
    json_t *v = NULL;
    size_t len = 0;
    size_t n = 0;
    int rc = 0;

    while (len < cap) {
        size_t want = cap - len < READ_CHUNK ? cap - len : READ_CHUNK;

        rc = sl_bulk_reader_attachment_read(r, buf + len, want, &n, err);
        if (rc != 0 || n == 0) {
            break;
        }
        len += n;
    }
    if (rc == 0) {
        if (size > cap) {
            len = utf8_whole(buf, len);
            sl_task_counter_add(w->ctx, "records.textTruncated", 1);
        }
        /* Checked here, about 10x faster than json_stringn's own check on
         * mostly ASCII text (docs/performance.md). */
        if (sl_utf8_valid(buf, len)) {
            v = json_stringn_nocheck(buf, len);
        } else {
            sl_task_counter_add(w->ctx, "records.textInvalid", 1);
            v = json_string("");
        }
        (void)json_object_set_new(meta, "text", v);
    }
    sl_free(buf);
    return rc;
}

/* Count and log a record the index would refuse (records.invalid). */
static void
skip_invalid(struct writer *w, const char *id, const struct sl_err *err)
{
    char shown[200];

    sl_task_counter_add(w->ctx, "records.invalid", 1);
    if (++w->invalid > INVALID_LOGGED) {
        return;
    }
    (void)sl_utf8_escape(shown, sizeof(shown), id);
    SL_WARN("indexWriter: record '%s%s' (%zu bytes of id) skipped: %s%s%s",
            shown,
            strlen(id) >= sizeof(shown) - 1 ? "..." : "",
            strlen(id),
            err->field[0] ? err->field : "",
            err->field[0] ? ": " : "",
            err->message);
    if (w->invalid == INVALID_LOGGED) {
        SL_WARN("indexWriter: further invalid records of this task are "
                "counted (records.invalid), not logged");
    }
}

/*
 * A purge record (_purgeSource: a source was purged): what was read
 * before it is written first, then every document of that source leaves
 * the index unless another source holds it (records.purged,
 * records.keptForOtherSources).  Idempotent, so a retried task does it
 * again harmlessly.
 */
static int
purge(struct writer *w, const json_t *meta)
{
    const char *source =
        json_string_value(json_object_get(meta, SL_INDEX_PURGE_FIELD));
    const json_t *v = json_object_get(meta, "_version");
    uint64_t deleted = 0;
    uint64_t kept = 0;
    struct sl_err err;
    int rc = 0;

    if (drain(w, 1) != 0) {
        return SL_WORKER_RECOVERABLE;
    }
    sl_err_clear(&err);
    rc = sl_index_purge_source(w->index,
                               w->name,
                               source,
                               json_is_integer(v) && json_integer_value(v) > 0
                                   ? (uint64_t)json_integer_value(v)
                                   : 0,
                               &deleted,
                               &kept,
                               &err);
    if (rc != 0) {
        sl_task_note_error(w->ctx, rc);
        sl_task_set_message(
            w->ctx, "index %s: purge %s: %s", w->name, source, err.message);
        return SL_WORKER_RECOVERABLE;
    }
    SL_INFO("indexWriter: index %s: source %s purged: %llu documents "
            "deleted, %llu kept for other sources",
            w->name,
            source,
            (unsigned long long)deleted,
            (unsigned long long)kept);
    sl_task_counter_add(w->ctx, "records.purged", (double)deleted);
    sl_task_counter_add(w->ctx, "records.keptForOtherSources", (double)kept);
    return SL_WORKER_OK;
}

static int
write_input(void *arg, json_t *meta, struct sl_bulk_reader *r)
{
    struct writer *w = arg;
    const char *id = json_string_value(json_object_get(meta, "_recordid"));
    const char *name = NULL;
    uint64_t size = 0;
    struct shard_buf *b = NULL;
    struct sl_err err;
    int rc = 0;

    sl_err_clear(&err);
    while (!w->deletes &&
           (rc = sl_bulk_reader_attachment_next(r, &name, &size, &err)) > 0) {
        if (strcmp(name, TEXT_ATTACHMENT) == 0) {
            rc = read_text(w, r, size, meta, &err);
            if (rc != 0) {
                break;
            }
        }
    }
    if (rc >= 0) {
        /* the rest, and the record's checksum: verified before use */
        rc = sl_bulk_reader_skip_attachments(r, NULL, &err);
    }
    if (rc < 0) {
        sl_task_set_message(w->ctx, "input: %s", err.message);
        return SL_WORKER_FATAL;
    }
    if (id == NULL || id[0] == '\0') {
        sl_task_counter_add(w->ctx, "records.invalid", 1);
        return SL_WORKER_OK;
    }
    if (w->deletes &&
        json_is_string(json_object_get(meta, SL_INDEX_PURGE_FIELD))) {
        return purge(w, meta);
    }
    b = &w->buf[sl_index_shard_of(id, w->nshards)];
    memset(&b->ops[b->n], 0, sizeof(b->ops[b->n]));
    b->docs[b->n] = json_incref(meta);
    b->ops[b->n].version =
        json_is_integer(json_object_get(meta, "_version")) &&
                json_integer_value(json_object_get(meta, "_version")) > 0
            ? (uint64_t)json_integer_value(json_object_get(meta, "_version"))
            : 0;
    if (w->deletes) {
        b->ops[b->n].doc = NULL;
        b->ops[b->n].id = id;
        /* a delete from one source leaves the document to the others; a
         * delete without _source removes it outright */
        b->ops[b->n].source =
            json_string_value(json_object_get(meta, "_source"));
    } else {
        map_field(meta, sl_task_mapped(w->ctx, "fileName"), "title");
        map_field(meta, sl_task_mapped(w->ctx, "filePath"), "path");
        map_field(meta, sl_task_mapped(w->ctx, "fileSize"), "size");
        map_field(
            meta, sl_task_mapped(w->ctx, "fileLastModified"), "lastModified");
        map_field(meta, sl_task_mapped(w->ctx, "httpSize"), "size");
        map_http_date(meta, sl_task_mapped(w->ctx, "httpLastModified"));
        if (!json_is_string(json_object_get(meta, "title"))) {
            (void)json_object_set_new(meta, "title", json_string(""));
        }
        if (!json_is_string(json_object_get(meta, "text"))) {
            (void)json_object_set_new(meta, "text", json_string(""));
        }
        /* Values the index keeps as columns must be scalars. */
        if (json_object_get(meta, "size") != NULL &&
            !json_is_number(json_object_get(meta, "size"))) {
            (void)json_object_del(meta, "size");
        }
        b->ops[b->n].doc = meta;
        b->ops[b->n].id = NULL;
    }
    if (sl_index_op_check(&b->ops[b->n], &err) != 0) {
        /* Alone: one bad record never fails the batch it would join. */
        skip_invalid(w, id, &err);
        sl_task_doc(w->ctx,
                    SL_JM_DOC_FAILED,
                    json_string_value(json_object_get(meta, "_source")),
                    id,
                    "invalid",
                    err.message);
        json_decref(b->docs[b->n]);
        return SL_WORKER_OK;
    }
    if (!w->deletes) {
        b->bytes += json_string_length(json_object_get(meta, "text"));
    }
    b->n++;
    if ((b->n == w->per || b->bytes >= w->per_bytes) && drain(w, 0) != 0) {
        return SL_WORKER_RECOVERABLE;
    }
    return SL_WORKER_OK;
}

static int
index_perform(struct sl_task_ctx *ctx)
{
    struct writer *w = sl_calloc(1, sizeof(*w));
    const char *op = sl_task_param_str(ctx, "operation");
    int res = SL_WORKER_OK;

    w->ctx = ctx;
    w->index = sl_task_services(ctx)->index;
    w->name = sl_task_param_str(ctx, "index");
    if (w->name == NULL) {
        w->name = "default";
    }
    if (op != NULL && strcmp(op, "delete") != 0 && strcmp(op, "upsert") != 0) {
        sl_task_set_message(
            ctx, "operation must be 'upsert' or 'delete', not '%s'", op);
        res = SL_WORKER_FATAL;
        goto out;
    }
    w->deletes = op != NULL && strcmp(op, "delete") == 0;
    if (sl_task_param_u64(
            ctx, "maxTextBytes", DEFAULT_MAX_TEXT, &w->max_text) != 0 ||
        w->max_text == 0 || w->max_text > SIZE_MAX / 2) {
        sl_task_set_message(ctx, "maxTextBytes: not a positive number");
        res = SL_WORKER_FATAL;
        goto out;
    }
    if (w->index == NULL) {
        sl_task_set_message(ctx,
                            "indexWriter needs the embedded index: run it "
                            "inside `sluice serve`");
        res = SL_WORKER_FATAL;
        goto out;
    }
    {
        struct sl_err err;

        sl_err_clear(&err);
        if (sl_index_shards(w->index, w->name, 1, &w->nshards, &err) != 0) {
            sl_task_note_error(ctx, err.code);
            sl_task_set_message(ctx, "index %s: %s", w->name, err.message);
            res = err.code == SL_EINVAL || err.code == SL_EBADNAME
                      ? SL_WORKER_FATAL
                      : SL_WORKER_RECOVERABLE;
            goto out;
        }
    }
    w->per = HELD / w->nshards;
    w->per = w->per > BATCH ? BATCH : w->per < 16 ? 16 : w->per;
    w->per_bytes = HELD_BYTES / w->nshards;
    w->buf = sl_calloc(w->nshards, sizeof(*w->buf));
    res = sl_task_input_each_reader(ctx, "records", write_input, w);
    if (res == SL_WORKER_OK && drain(w, 1) != 0) {
        res = SL_WORKER_RECOVERABLE;
    }
out:
    drop_held(w);
    sl_free(w->buf);
    sl_free(w);
    return res;
}

const struct sl_worker_type sl_worker_indexWriter = {
    SL_WORKER_ABI_VERSION,
    "indexWriter",
    "{\"name\": \"indexWriter\","
    " \"parameters\": [{\"name\": \"index\", \"optional\": true},"
    "  {\"name\": \"maxTextBytes\", \"optional\": true, \"type\": \"integer\","
    "   \"minimum\": 1}," SL__BI_DECL_MAPPING ","
    "  {\"name\": \"operation\", \"optional\": true,"
    "   \"values\": [\"upsert\", \"delete\"]}],"
    " \"input\": [{\"name\": \"records\", \"type\": \"recordBulks\"}]}",
    index_perform,
    NULL,
    NULL,
};

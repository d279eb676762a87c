/*
 * The bulk writer (docs/bulk-format.md; bulk.c says how the codec is
 * built): encodes records into a 64 KiB buffer that it hands to the sink
 * when it fills, a piece at least that large straight to the sink.
 * Records get a head frame when their metadata has the head fields as
 * strings.
 *
 * Threading: a writer belongs to one thread at a time.
 */
#include <stdlib.h>
#include <string.h>

#include "core/bulk_int.h"

/* Hand the pending bytes to the sink. */
static int
wflush(struct sl_bulk_writer *w)
{
    int rc = 0;

    if (w->len == 0) {
        return 0;
    }
    rc = w->sink.write(w->sink.ctx, w->buf, w->len);
    w->len = 0;
    return rc;
}

/*
 * Append @len bytes to the output.  Small pieces are gathered in the
 * buffer; a piece at least as large as the buffer goes straight to the sink
 * once the buffer is empty, so big attachments are not copied twice.
 */
int
sl__bulk_emit(struct sl_bulk_writer *w, const void *data, size_t len)
{
    const unsigned char *p = data;
    int rc = 0;

    while (len > 0) {
        size_t n = 0;

        if (w->len == IO_BUF_SIZE) {
            rc = wflush(w);
            if (rc != 0) {
                return rc;
            }
        }
        if (w->len == 0 && len >= IO_BUF_SIZE) {
            rc = w->sink.write(w->sink.ctx, p, len);
            if (rc == 0) {
                w->bytes += len;
            }
            return rc;
        }
        n = IO_BUF_SIZE - w->len;
        if (n > len) {
            n = len;
        }
        memcpy(w->buf + w->len, p, n);
        w->len += n;
        w->bytes += n;
        p += n;
        len -= n;
    }
    return 0;
}

/* As sl__bulk_emit, for record bytes: they also go into the record's CRC. */
static int
emit_rec(struct sl_bulk_writer *w, const void *data, size_t len)
{
    w->crc = sl__bulk_crc(w->crc, data, len);
    return sl__bulk_emit(w, data, len);
}

/* emit_rec when @crc, else sl__bulk_emit (a copy keeps its source's checksum).
 */
int
sl__bulk_emit_frame(struct sl_bulk_writer *w,
                    const void *data,
                    size_t len,
                    int crc)
{
    return crc ? emit_rec(w, data, len) : sl__bulk_emit(w, data, len);
}

/* A record's head and its @len bytes of metadata @meta. */
int
sl__bulk_emit_record_head(struct sl_bulk_writer *w,
                          const void *meta,
                          size_t len,
                          int crc)
{
    unsigned char head[RECORD_HEAD_LEN];
    int rc = 0;

    memcpy(head, sl__bulk_record_magic, 4);
    sl_le_put32(head + 4, (uint32_t)len);
    rc = sl__bulk_emit_frame(w, head, sizeof(head), crc);
    return rc == 0 ? sl__bulk_emit_frame(w, meta, len, crc) : rc;
}

/*
 * The head of @meta into *h (strings borrowed from @meta): 1, or 0 when a
 * head field is there but not a string without NUL bytes, or _recordid is
 * missing or empty; the record then has no head and its readers decode
 * the metadata.
 */
static int
head_of(const json_t *meta, struct sl_record_head *h)
{
    static const char *const keys[HEAD_FIELDS] = {
        "_recordid", "_source", "_deltaHash", "_compoundRecordId"};
    const char *f[HEAD_FIELDS];
    size_t i = 0;

    for (i = 0; i < HEAD_FIELDS; i++) {
        const json_t *v = json_object_get(meta, keys[i]);

        f[i] = NULL;
        if (v == NULL) {
            continue;
        }
        if (!json_is_string(v) ||
            strlen(json_string_value(v)) != json_string_length(v)) {
            return 0;
        }
        f[i] = json_string_value(v);
    }
    h->id = f[0];
    h->source = f[1];
    h->delta_hash = f[2];
    h->compound_id = f[3];
    h->flags =
        (json_is_true(json_object_get(meta, "_isCompound")) ? SL_HEAD_COMPOUND
                                                            : 0) |
        (json_object_get(meta, "_version") != NULL ? SL_HEAD_VERSION : 0) |
        (json_object_get(meta, "_visited") != NULL ? SL_HEAD_VISITED : 0);
    return h->id != NULL && h->id[0] != '\0';
}

/* Head @h as a head frame; nothing when it does not fit one. */
static int
emit_head(struct sl_bulk_writer *w, const struct sl_record_head *h)
{
    const char *f[HEAD_FIELDS];
    size_t lens[HEAD_FIELDS];
    size_t body = HEAD_FIXED;
    unsigned char b[4];
    size_t i = 0;
    int rc = 0;

    if (!w->heads) {
        return 0;
    }
    sl__bulk_head_fields(h, f);
    for (i = 0; i < HEAD_FIELDS; i++) {
        lens[i] = f[i] != NULL ? strlen(f[i]) : 0;
        if (lens[i] >= HEAD_ABSENT) {
            return 0;
        }
        body += lens[i];
    }
    if (body > HEAD_BODY_MAX) {
        return 0;
    }
    b[0] = TAG_HEAD;
    sl_le_put16(b + 1, (uint16_t)body);
    b[3] = (unsigned char)(h->flags & HEAD_FLAGS);
    rc = emit_rec(w, b, 4);
    for (i = 0; i < HEAD_FIELDS && rc == 0; i++) {
        sl_le_put16(b, (uint16_t)(f[i] != NULL ? lens[i] : HEAD_ABSENT));
        rc = emit_rec(w, b, 2);
        if (rc == 0 && lens[i] > 0) {
            rc = emit_rec(w, f[i], lens[i]);
        }
    }
    return rc;
}

/* An attachment frame: tag, name length, @nlen bytes of @name, @size. */
int
sl__bulk_emit_att_frame(struct sl_bulk_writer *w,
                        const char *name,
                        size_t nlen,
                        uint64_t size,
                        int crc)
{
    unsigned char head[ATT_HEAD_LEN];
    unsigned char sz[8];
    int rc = 0;

    head[0] = TAG_ATTACHMENT;
    sl_le_put16(head + 1, (uint16_t)nlen);
    sl_le_put64(sz, size);
    rc = sl__bulk_emit_frame(w, head, sizeof(head), crc);
    if (rc == 0) {
        rc = sl__bulk_emit_frame(w, name, nlen, crc);
    }
    return rc == 0 ? sl__bulk_emit_frame(w, sz, sizeof(sz), crc) : rc;
}

/* Mark the writer failed and return @rc (an SL_E* code). */
int
sl__bulk_wfail(struct sl_bulk_writer *w, int rc)
{
    w->state = W_FAILED;
    return rc;
}

/*
 * Entry check shared by the writing calls: a failed or finished writer
 * answers SL_EBADSTATE and stays as it is.
 */
int
sl__bulk_wusable(const struct sl_bulk_writer *w)
{
    if (w == NULL || w->state == W_FAILED || w->state == W_DONE) {
        return 0;
    }
    return 1;
}

/* A writer over @sink that has written nothing yet. */
static struct sl_bulk_writer *
writer_alloc(const struct sl_sink *sink)
{
    struct sl_bulk_writer *w = sl_calloc(1, sizeof(*w));

    w->sink = *sink;
    w->buf = sl_malloc(IO_BUF_SIZE);
    w->names = sl__bulk_name_set_new();
    sl_buf_init(&w->meta, SL_BULK_DEFAULT_MAX_META);
    /* SLUICE_TEST_NO_HEADS: write records as a version before heads did,
     * so that tests run the readers' decoding paths (operations.md) */
    w->heads = getenv("SLUICE_TEST_NO_HEADS") == NULL;
    w->state = W_IDLE;
    return w;
}

int
sl_bulk_writer_new(const struct sl_sink *sink, struct sl_bulk_writer **out)
{
    struct sl_bulk_writer *w = NULL;
    unsigned char hdr[HEADER_LEN];
    int rc = 0;

    *out = NULL;
    if (sink == NULL || sink->write == NULL) {
        return SL_EINVAL;
    }
    w = writer_alloc(sink);

    memcpy(hdr, sl__bulk_magic, 4);
    hdr[4] = SL_BULK_VERSION;
    hdr[5] = BULK_MINOR;
    sl_le_put16(hdr + 6, w->heads ? SL_BULK_FLAG_HEADS : 0);
    rc = sl__bulk_emit(w, hdr, sizeof(hdr));
    if (rc != 0) {
        goto fail;
    }
    rc = wflush(w);
    if (rc != 0) {
        goto fail;
    }
    *out = w;
    return 0;

fail:
    sl_bulk_writer_free(w);
    return rc;
}

int
sl_bulk_writer_resume(const struct sl_sink *sink,
                      uint64_t count,
                      uint64_t bytes,
                      struct sl_bulk_writer **out)
{
    struct sl_bulk_writer *w = NULL;

    *out = NULL;
    if (sink == NULL || sink->write == NULL || bytes < HEADER_LEN) {
        return SL_EINVAL;
    }
    w = writer_alloc(sink);
    w->count = count;
    w->bytes = bytes;
    *out = w;
    return 0;
}

int
sl_bulk_writer_flush(struct sl_bulk_writer *w)
{
    int rc = 0;

    if (!sl__bulk_wusable(w)) {
        return SL_EBADSTATE;
    }
    rc = wflush(w);
    return rc != 0 ? sl__bulk_wfail(w, rc) : 0;
}

/* json_dump_callback sink into a bounded buffer. */
static int
meta_append(const char *data, size_t n, void *ctx)
{
    return sl_buf_append(ctx, data, n) == 0 ? 0 : -1;
}

int
sl_bulk_writer_record_begin(struct sl_bulk_writer *w, const json_t *meta)
{
    struct sl_record_head head;
    const json_t *id = NULL;
    const char *text = NULL;
    size_t len = 0;
    int rc = 0;

    if (!sl__bulk_wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state != W_IDLE || !json_is_object(meta)) {
        rc = SL_EINVAL;
        goto fail;
    }
    id = json_object_get(meta, "_recordid");
    if (!json_is_string(id) || json_string_length(id) == 0) {
        rc = SL_EINVAL;
        goto fail;
    }
    /* one pass into the writer's buffer: json_dumpb would need two, one
     * to learn the length and one to write */
    sl_buf_reset(&w->meta);
    if (json_dump_callback(meta, meta_append, &w->meta, JSON_COMPACT) != 0) {
        rc = w->meta.failed ? SL_ETOOLARGE : SL_EINVAL;
        goto fail;
    }
    text = w->meta.data;
    len = w->meta.len;
    if (len == 0) {
        rc = SL_EINVAL;
        goto fail;
    }
    w->crc = 0;
    json_object_clear(w->names);
    rc = sl__bulk_emit_record_head(w, text, len, 1);
    if (rc == 0 && head_of(meta, &head)) {
        rc = emit_head(w, &head);
    }
    if (rc != 0) {
        goto fail;
    }
    w->state = W_RECORD;
    w->att_left = 0;
    if (w->meta.cap > META_KEEP) {
        sl_buf_free(&w->meta); /* a big record does not pin its memory */
    }
    return 0;

fail:
    return sl__bulk_wfail(w, rc);
}

int
sl_bulk_writer_record_begin_text(struct sl_bulk_writer *w,
                                 const char *meta,
                                 size_t len,
                                 const struct sl_record_head *head)
{
    int rc = 0;

    if (!sl__bulk_wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state != W_IDLE || meta == NULL || len == 0 ||
        (head != NULL && (head->id == NULL || head->id[0] == '\0'))) {
        return sl__bulk_wfail(w, SL_EINVAL);
    }
    if (len > SL_BULK_DEFAULT_MAX_META) {
        return sl__bulk_wfail(w, SL_ETOOLARGE);
    }
    w->crc = 0;
    json_object_clear(w->names);
    rc = sl__bulk_emit_record_head(w, meta, len, 1);
    if (rc == 0 && head != NULL) {
        rc = emit_head(w, head);
    }
    if (rc != 0) {
        return sl__bulk_wfail(w, rc);
    }
    w->state = W_RECORD;
    w->att_left = 0;
    return 0;
}

int
sl_bulk_writer_attachment_begin(struct sl_bulk_writer *w,
                                const char *name,
                                uint64_t size)
{
    size_t nlen = 0;
    int rc = 0;

    if (!sl__bulk_wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state == W_IDLE || (w->state == W_ATTACH && w->att_left != 0) ||
        name == NULL || size > MAX_ATTACHMENT_SZ) {
        rc = SL_EINVAL;
        goto fail;
    }
    nlen = strlen(name);
    if (!sl__bulk_name_ok(name, nlen) ||
        json_object_getn(w->names, name, nlen) != NULL) {
        rc = SL_EINVAL;
        goto fail;
    }
    rc = sl__bulk_emit_att_frame(w, name, nlen, size, 1);
    if (rc != 0) {
        goto fail;
    }
    if (json_object_setn_nocheck(w->names, name, nlen, json_null()) != 0) {
        sl_panic("bulk: out of memory");
    }
    w->state = W_ATTACH;
    w->att_left = size;
    return 0;

fail:
    return sl__bulk_wfail(w, rc);
}

int
sl_bulk_writer_attachment_write(struct sl_bulk_writer *w,
                                const void *data,
                                size_t len)
{
    int rc = 0;

    if (!sl__bulk_wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state != W_ATTACH || len > w->att_left ||
        (len > 0 && data == NULL)) {
        return sl__bulk_wfail(w, SL_EINVAL);
    }
    rc = emit_rec(w, data, len);
    if (rc != 0) {
        return sl__bulk_wfail(w, rc);
    }
    w->att_left -= len;
    return 0;
}

int
sl_bulk_writer_record_end(struct sl_bulk_writer *w)
{
    unsigned char tag = TAG_END;
    unsigned char crc[4];
    int rc = 0;

    if (!sl__bulk_wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state == W_IDLE || (w->state == W_ATTACH && w->att_left != 0)) {
        return sl__bulk_wfail(w, SL_EINVAL);
    }
    rc = emit_rec(w, &tag, 1);
    if (rc != 0) {
        return sl__bulk_wfail(w, rc);
    }
    sl_le_put32(crc, w->crc);
    rc = sl__bulk_emit(w, crc, sizeof(crc));
    if (rc != 0) {
        return sl__bulk_wfail(w, rc);
    }
    w->count++;
    w->state = W_IDLE;
    return 0;
}

int
sl_bulk_writer_add(struct sl_bulk_writer *w, const struct sl_record *rec)
{
    const char *name = NULL;
    const void *data = NULL;
    size_t len = 0;
    size_t i = 0;
    int rc = 0;

    if (!sl__bulk_wusable(w)) {
        return SL_EBADSTATE;
    }
    if (rec == NULL) {
        return sl__bulk_wfail(w, SL_EINVAL);
    }
    rc = sl_bulk_writer_record_begin(w, sl_record_meta(rec));
    if (rc != 0) {
        return rc;
    }
    for (i = 0; i < sl_record_attachment_count(rec); i++) {
        rc = sl_record_attachment_at(rec, i, &name, &data, &len);
        if (rc != 0) {
            return sl__bulk_wfail(w, rc);
        }
        rc = sl_bulk_writer_attachment_begin(w, name, len);
        if (rc != 0) {
            return rc;
        }
        rc = sl_bulk_writer_attachment_write(w, data, len);
        if (rc != 0) {
            return rc;
        }
    }
    return sl_bulk_writer_record_end(w);
}

int
sl_bulk_writer_finish(struct sl_bulk_writer *w)
{
    unsigned char t[TRAILER_BODY_LEN + 4];
    int rc = 0;

    if (!sl__bulk_wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state != W_IDLE) {
        return sl__bulk_wfail(w, SL_EINVAL);
    }
    memcpy(t, sl__bulk_trailer_magic, 4);
    sl_le_put64(t + 4, w->count);
    sl_le_put32(t + TRAILER_BODY_LEN, sl__bulk_crc(0, t, TRAILER_BODY_LEN));
    rc = sl__bulk_emit(w, t, sizeof(t));
    if (rc != 0) {
        return sl__bulk_wfail(w, rc);
    }
    rc = wflush(w);
    if (rc != 0) {
        return sl__bulk_wfail(w, rc);
    }
    w->state = W_DONE;
    return 0;
}

uint64_t
sl_bulk_writer_count(const struct sl_bulk_writer *w)
{
    return w->count;
}

uint64_t
sl_bulk_writer_bytes(const struct sl_bulk_writer *w)
{
    return w->bytes;
}

void
sl_bulk_writer_free(struct sl_bulk_writer *w)
{
    if (w == NULL) {
        return;
    }
    sl_free(w->buf);
    json_decref(w->names);
    sl_buf_free(&w->meta);
    sl_free(w);
}

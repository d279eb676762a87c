/*
 * Record bulks: the versioned binary framing of docs/bulk-format.md.
 *
 * The writer encodes into a 64 KiB buffer that it hands to the sink when it
 * fills; the reader decodes from a 64 KiB buffer that it refills from the
 * source.  Both are small state machines, so the whole-record calls and the
 * streaming calls (one attachment at a time, data in pieces) share one code
 * path.  Both stay failed after their first error (SL_EBADSTATE), as every
 * object of this code base does (docs/development.md).
 *
 * Integers are little-endian and are encoded byte by byte, never through a
 * struct cast, so the format does not depend on the host.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libdeflate.h>

#include "core/sl.h"

#define IO_BUF_SIZE       ((size_t)64 << 10)
#define BULK_MINOR        1 /* 1: records may have a head frame */
#define HEADER_LEN        8
#define RECORD_HEAD_LEN   8  /* magic + meta_len */
#define RECORD_END_LEN    5  /* 'E' + CRC-32 */
#define ATT_HEAD_LEN      3  /* 'A' + name_len */
#define TRAILER_BODY_LEN  12 /* magic + record count */
#define TAG_ATTACHMENT    'A'
#define TAG_END           'E'
#define TAG_HEAD          'H'
#define HEAD_FIELDS       4
#define HEAD_FIXED        (1 + 2 * HEAD_FIELDS) /* flags, lengths */
#define HEAD_BODY_MAX     0xFFFFu
#define HEAD_ABSENT       0xFFFFu /* length of a field that is not there */
#define HEAD_FLAGS        (SL_HEAD_COMPOUND | SL_HEAD_VERSION | SL_HEAD_VISITED)
#define MAX_ATTACHMENT_SZ ((uint64_t)INT64_MAX)
#define META_KEEP         ((size_t)256 << 10) /* metadata buffer kept */

static const unsigned char bulk_magic[4] = {'S', 'L', 'B', 'K'};
static const unsigned char record_magic[4] = {'S', 'L', 'R', 'C'};
static const unsigned char trailer_magic[4] = {'S', 'L', 'N', 'D'};

/* ------------------------------------------------------------------------
 * Checksums.
 * --------------------------------------------------------------------- */
/*
 * Extend a CRC-32 (zlib's, the gzip one) over @len bytes.  libdeflate
 * computes the same values with carry-less multiplication where the CPU
 * has it: 12-15 GB/s here against zlib's 3.6-4.2 (64 KiB pieces), 13
 * against 2.6 for 400-byte records (docs/bulk-format.md).
 */
static uint32_t
crc_update(uint32_t crc, const void *data, size_t len)
{
    return libdeflate_crc32(crc, data, len);
}

/*
 * Attachment names are 1..SL_ATTACHMENT_NAME_MAX bytes of UTF-8 without a
 * NUL byte: they must survive as C strings and as JSON keys (bulk cat).
 * Both the writer and the reader apply this rule.
 */
static int
name_ok(const char *name, size_t len)
{
    json_t *s = NULL;

    if (len == 0 || len > SL_ATTACHMENT_NAME_MAX ||
        memchr(name, '\0', len) != NULL) {
        return 0;
    }
    s = json_stringn(name, len); /* NULL for invalid UTF-8 */
    if (s == NULL) {
        return 0;
    }
    json_decref(s);
    return 1;
}

/* A new empty JSON object used as a set of attachment names. */
static json_t *
name_set_new(void)
{
    json_t *set = json_object();

    if (set == NULL) {
        sl_panic("bulk: out of memory");
    }
    return set;
}

/* ------------------------------------------------------------------------
 * Writer.
 * --------------------------------------------------------------------- */
enum wstate {
    W_IDLE,   /* between records */
    W_RECORD, /* in a record, no attachment open */
    W_ATTACH, /* in an attachment; att_left bytes still due */
    W_DONE,   /* trailer written */
    W_FAILED, /* an error happened; everything returns SL_EBADSTATE */
};

struct sl_bulk_writer {
    struct sl_sink sink; /* copy of the caller's sink */
    unsigned char *buf;  /* IO_BUF_SIZE bytes of pending output */
    size_t len;          /* pending bytes in buf */
    uint64_t bytes;      /* bytes produced so far (header included) */
    uint64_t count;      /* records completed */
    uint32_t crc;        /* CRC-32 of the current record so far */
    enum wstate state;   /* see enum wstate */
    uint64_t att_left;   /* bytes still due for the open attachment */
    json_t *names;       /* attachment names of the current record */
    struct sl_buf meta;  /* the encoded metadata of the current record */
    int heads;           /* records get head frames (a test knob unsets) */
};

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
static int
emit(struct sl_bulk_writer *w, const void *data, size_t len)
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

/* As emit, for record bytes: they also go into the record's CRC. */
static int
emit_rec(struct sl_bulk_writer *w, const void *data, size_t len)
{
    w->crc = crc_update(w->crc, data, len);
    return emit(w, data, len);
}

/* emit_rec when @crc, else emit (a copy keeps its source's checksum). */
static int
emit_frame(struct sl_bulk_writer *w, const void *data, size_t len, int crc)
{
    return crc ? emit_rec(w, data, len) : emit(w, data, len);
}

/* A record's head and its @len bytes of metadata @meta. */
static int
emit_record_head(struct sl_bulk_writer *w,
                 const void *meta,
                 size_t len,
                 int crc)
{
    unsigned char head[RECORD_HEAD_LEN];
    int rc = 0;

    memcpy(head, record_magic, 4);
    sl_le_put32(head + 4, (uint32_t)len);
    rc = emit_frame(w, head, sizeof(head), crc);
    return rc == 0 ? emit_frame(w, meta, len, crc) : rc;
}

/* The fields of @h in the order of the head frame. */
static void
head_fields(const struct sl_record_head *h, const char *f[HEAD_FIELDS])
{
    f[0] = h->id;
    f[1] = h->source;
    f[2] = h->delta_hash;
    f[3] = h->compound_id;
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
    head_fields(h, f);
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
static int
emit_att_frame(struct sl_bulk_writer *w,
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
    rc = emit_frame(w, head, sizeof(head), crc);
    if (rc == 0) {
        rc = emit_frame(w, name, nlen, crc);
    }
    return rc == 0 ? emit_frame(w, sz, sizeof(sz), crc) : rc;
}

/* Mark the writer failed and return @rc (an SL_E* code). */
static int
wfail(struct sl_bulk_writer *w, int rc)
{
    w->state = W_FAILED;
    return rc;
}

/*
 * Entry check shared by the writing calls: a failed or finished writer
 * answers SL_EBADSTATE and stays as it is.
 */
static int
wusable(const struct sl_bulk_writer *w)
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
    w->names = name_set_new();
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

    memcpy(hdr, bulk_magic, 4);
    hdr[4] = SL_BULK_VERSION;
    hdr[5] = BULK_MINOR;
    sl_le_put16(hdr + 6, w->heads ? SL_BULK_FLAG_HEADS : 0);
    rc = emit(w, hdr, sizeof(hdr));
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

    if (!wusable(w)) {
        return SL_EBADSTATE;
    }
    rc = wflush(w);
    return rc != 0 ? wfail(w, rc) : 0;
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

    if (!wusable(w)) {
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
    rc = emit_record_head(w, text, len, 1);
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
    return wfail(w, rc);
}

int
sl_bulk_writer_record_begin_text(struct sl_bulk_writer *w,
                                 const char *meta,
                                 size_t len,
                                 const struct sl_record_head *head)
{
    int rc = 0;

    if (!wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state != W_IDLE || meta == NULL || len == 0 ||
        (head != NULL && (head->id == NULL || head->id[0] == '\0'))) {
        return wfail(w, SL_EINVAL);
    }
    if (len > SL_BULK_DEFAULT_MAX_META) {
        return wfail(w, SL_ETOOLARGE);
    }
    w->crc = 0;
    json_object_clear(w->names);
    rc = emit_record_head(w, meta, len, 1);
    if (rc == 0 && head != NULL) {
        rc = emit_head(w, head);
    }
    if (rc != 0) {
        return wfail(w, rc);
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

    if (!wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state == W_IDLE || (w->state == W_ATTACH && w->att_left != 0) ||
        name == NULL || size > MAX_ATTACHMENT_SZ) {
        rc = SL_EINVAL;
        goto fail;
    }
    nlen = strlen(name);
    if (!name_ok(name, nlen) ||
        json_object_getn(w->names, name, nlen) != NULL) {
        rc = SL_EINVAL;
        goto fail;
    }
    rc = emit_att_frame(w, name, nlen, size, 1);
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
    return wfail(w, rc);
}

int
sl_bulk_writer_attachment_write(struct sl_bulk_writer *w,
                                const void *data,
                                size_t len)
{
    int rc = 0;

    if (!wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state != W_ATTACH || len > w->att_left ||
        (len > 0 && data == NULL)) {
        return wfail(w, SL_EINVAL);
    }
    rc = emit_rec(w, data, len);
    if (rc != 0) {
        return wfail(w, rc);
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

    if (!wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state == W_IDLE || (w->state == W_ATTACH && w->att_left != 0)) {
        return wfail(w, SL_EINVAL);
    }
    rc = emit_rec(w, &tag, 1);
    if (rc != 0) {
        return wfail(w, rc);
    }
    sl_le_put32(crc, w->crc);
    rc = emit(w, crc, sizeof(crc));
    if (rc != 0) {
        return wfail(w, rc);
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

    if (!wusable(w)) {
        return SL_EBADSTATE;
    }
    if (rec == NULL) {
        return wfail(w, SL_EINVAL);
    }
    rc = sl_bulk_writer_record_begin(w, sl_record_meta(rec));
    if (rc != 0) {
        return rc;
    }
    for (i = 0; i < sl_record_attachment_count(rec); i++) {
        rc = sl_record_attachment_at(rec, i, &name, &data, &len);
        if (rc != 0) {
            return wfail(w, rc);
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

    if (!wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state != W_IDLE) {
        return wfail(w, SL_EINVAL);
    }
    memcpy(t, trailer_magic, 4);
    sl_le_put64(t + 4, w->count);
    sl_le_put32(t + TRAILER_BODY_LEN, crc_update(0, t, TRAILER_BODY_LEN));
    rc = emit(w, t, sizeof(t));
    if (rc != 0) {
        return wfail(w, rc);
    }
    rc = wflush(w);
    if (rc != 0) {
        return wfail(w, rc);
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

/* ------------------------------------------------------------------------
 * Reader.
 * --------------------------------------------------------------------- */
enum rstate {
    R_IDLE,   /* between records: a record or the trailer comes next */
    R_META,   /* metadata read; a frame tag ('A' or 'E') comes next */
    R_ATTACH, /* in attachment data; att_left bytes remain */
    R_DONE,   /* trailer verified, at end of stream */
    R_FAILED, /* an error happened; everything returns SL_EBADSTATE */
};

/* What is being decoded, for the prefix of error messages. */
enum rwhere {
    IN_HEADER,
    IN_RECORD,
    IN_TRAILER,
};

struct sl_bulk_reader {
    struct sl_source src; /* copy of the caller's source */
    size_t max_meta;      /* metadata limit per record */
    size_t max_record;    /* whole-record limit for reader_next */
    unsigned char *buf;   /* IO_BUF_SIZE bytes of read-ahead */
    size_t pos;           /* next unread byte in buf */
    size_t len;           /* valid bytes in buf */
    int eof;              /* the source reported end of stream */
    uint64_t offset;      /* stream offset of buf[pos] */
    enum rstate state;    /* see enum rstate */
    enum rwhere where;    /* see enum rwhere */
    uint64_t count;       /* records completed and verified */
    uint64_t rec_off;     /* offset of the current record (or trailer) */
    uint32_t crc;         /* CRC-32 of the current record so far */
    uint64_t att_left;    /* unread data bytes of the attachment */
    uint64_t att_off;     /* offset of the current attachment frame */
    char name[SL_ATTACHMENT_NAME_MAX + 1]; /* current attachment name */
    json_t *names;       /* attachment names of the current record */
    unsigned char *meta; /* the current record's metadata as stored */
    size_t meta_len;
    unsigned natt;     /* attachments begun in the current record */
    uint64_t att_size; /* size of the current attachment */
    /* the current record's head: its frame as stored (hbuf[0..hraw_len),
     * for copies), then its strings with NULs, which head points into */
    unsigned char *hbuf;
    size_t hcap;
    size_t hraw_len;
    int has_head;
    struct sl_record_head head;
    int trusted;          /* SL_BULK_FLAG_HEADS: heads are offered */
    int pending;          /* frame tag read after the metadata, or -1 */
    uint64_t pending_off; /* its offset */
};

static int rfail(struct sl_bulk_reader *r,
                 struct sl_err *err,
                 int code,
                 uint64_t off,
                 const char *fmt,
                 ...) __attribute__((format(printf, 5, 6)));

/*
 * Fail the reader with @code.  The message starts with the frame being
 * decoded ("record 3 at offset 1234: ") and err->field is "offset N" with
 * N = @off, the offset of the innermost frame that failed.
 */
static int
rfail(struct sl_bulk_reader *r,
      struct sl_err *err,
      int code,
      uint64_t off,
      const char *fmt,
      ...)
{
    char detail[400];
    char field[64];
    char prefix[96];
    va_list ap;

    va_start(ap, fmt);
    (void)vsnprintf(detail, sizeof(detail), fmt, ap);
    va_end(ap);
    switch (r->where) {
    case IN_HEADER:
        (void)snprintf(prefix, sizeof(prefix), "bulk header at offset 0");
        break;
    case IN_TRAILER:
        (void)snprintf(prefix,
                       sizeof(prefix),
                       "trailer at offset %llu",
                       (unsigned long long)r->rec_off);
        break;
    default:
        (void)snprintf(prefix,
                       sizeof(prefix),
                       "record %llu at offset %llu",
                       (unsigned long long)(r->count + 1),
                       (unsigned long long)r->rec_off);
        break;
    }
    (void)snprintf(
        field, sizeof(field), "offset %llu", (unsigned long long)off);
    r->state = R_FAILED;
    return sl_err_set(err, code, field, "%s: %s", prefix, detail);
}

/*
 * Fail after a short read: SL_ETRUNCATED becomes "truncated in WHAT", a
 * source error keeps its code and says so.
 */
static int
io_fail(struct sl_bulk_reader *r,
        struct sl_err *err,
        int code,
        uint64_t off,
        const char *what)
{
    if (code == SL_ETRUNCATED) {
        return rfail(r,
                     err,
                     code,
                     off,
                     "bulk truncated in %s at offset %llu",
                     what,
                     (unsigned long long)r->offset);
    }
    return rfail(
        r, err, code, off, "read error in %s: %s", what, sl_strerror(code));
}

/* Refill the read-ahead buffer once it is used up; sets eof at the end. */
static int
fill(struct sl_bulk_reader *r)
{
    size_t n = 0;
    int rc = 0;

    if (r->pos < r->len || r->eof) {
        return 0;
    }
    rc = r->src.read(r->src.ctx, r->buf, IO_BUF_SIZE, &n);
    if (rc != 0) {
        return rc < 0 ? rc : SL_EIO;
    }
    if (SL_NEVER(n > IO_BUF_SIZE)) {
        return SL_EIO;
    }
    r->pos = 0;
    r->len = n;
    if (n == 0) {
        r->eof = 1;
    }
    return 0;
}

/*
 * Consume exactly @n bytes: copy them to @dst unless it is NULL (skipping),
 * and add them to the record CRC when @crc is set.  Returns 0,
 * SL_ETRUNCATED or the source's error; the caller words the message.
 */
static int
rread(struct sl_bulk_reader *r, void *dst, uint64_t n, int crc)
{
    unsigned char *d = dst;
    int rc = 0;

    while (n > 0) {
        size_t k = 0;

        if (r->pos == r->len) {
            rc = fill(r);
            if (rc != 0) {
                return rc;
            }
            if (r->pos == r->len) {
                return SL_ETRUNCATED;
            }
        }
        k = r->len - r->pos;
        if (k > n) {
            k = (size_t)n;
        }
        if (d != NULL) {
            memcpy(d, r->buf + r->pos, k);
            d += k;
        }
        if (crc) {
            r->crc = crc_update(r->crc, r->buf + r->pos, k);
        }
        r->pos += k;
        r->offset += k;
        n -= k;
    }
    return 0;
}

/*
 * Read exactly @size record bytes into a new block (caller frees with
 * sl_free).  The block grows as data arrives, so a corrupt length on a
 * short stream costs at most what the stream really holds.
 */
static int
read_alloc(struct sl_bulk_reader *r, size_t size, unsigned char **out)
{
    unsigned char *p = NULL;
    size_t cap = size < IO_BUF_SIZE ? size : IO_BUF_SIZE;
    size_t have = 0;
    int rc = 0;

    *out = NULL;
    p = sl_malloc(cap);
    while (have < size) {
        if (have == cap) {
            cap = size - cap < cap ? size : cap * 2;
            p = sl_realloc(p, cap);
        }
        rc = rread(r, p + have, cap - have, 1);
        if (rc != 0) {
            sl_free(p);
            return rc;
        }
        have = cap;
    }
    *out = p;
    return 0;
}

/* Entry check: a failed reader answers SL_EBADSTATE. */
static int
rusable(const struct sl_bulk_reader *r, struct sl_err *err)
{
    if (r == NULL || r->state == R_FAILED) {
        return sl_err_set(
            err, SL_EBADSTATE, NULL, "the bulk reader failed earlier");
    }
    return 0;
}

int
sl_bulk_reader_new(const struct sl_source *src,
                   const struct sl_bulk_limits *limits,
                   struct sl_bulk_reader **out,
                   struct sl_err *err)
{
    struct sl_bulk_reader *r = NULL;
    unsigned char hdr[HEADER_LEN];
    int rc = 0;

    *out = NULL;
    if (src == NULL || src->read == NULL) {
        return sl_err_set(err, SL_EINVAL, NULL, "no source");
    }
    r = sl_calloc(1, sizeof(*r));
    r->src = *src;
    r->max_meta = SL_BULK_DEFAULT_MAX_META;
    r->max_record = SL_BULK_DEFAULT_MAX_RECORD;
    if (limits != NULL && limits->max_meta_bytes != 0) {
        r->max_meta = limits->max_meta_bytes;
    }
    if (limits != NULL && limits->max_record_bytes != 0) {
        r->max_record = limits->max_record_bytes;
    }
    r->buf = sl_malloc(IO_BUF_SIZE);
    r->names = name_set_new();
    r->pending = -1;
    r->where = IN_HEADER;
    r->state = R_IDLE;

    rc = rread(r, hdr, sizeof(hdr), 0);
    if (rc != 0) {
        rc = io_fail(r, err, rc, 0, "the bulk header");
        goto fail;
    }
    if (memcmp(hdr, bulk_magic, 4) != 0) {
        rc = rfail(r, err, SL_ECORRUPT, 0, "not a bulk (bad magic)");
        goto fail;
    }
    if (hdr[4] != SL_BULK_VERSION ||
        (sl_le_get16(hdr + 6) & ~SL_BULK_FLAG_HEADS) != 0) {
        rc = rfail(r,
                   err,
                   SL_ECORRUPT,
                   0,
                   "unsupported bulk version %u.%u (flags 0x%04x)",
                   hdr[4],
                   hdr[5],
                   sl_le_get16(hdr + 6));
        goto fail;
    }
    r->trusted = (sl_le_get16(hdr + 6) & SL_BULK_FLAG_HEADS) != 0;
    r->where = IN_RECORD;
    *out = r;
    return 0;

fail:
    sl_bulk_reader_free(r);
    return rc;
}

/*
 * Verify the trailer whose magic was just read at r->rec_off: its CRC, its
 * record count against what we read, and that nothing follows it.
 */
static int
read_trailer(struct sl_bulk_reader *r, struct sl_err *err)
{
    unsigned char t[TRAILER_BODY_LEN + 4];
    uint32_t crc = 0;
    uint64_t n = 0;
    int rc = 0;

    r->where = IN_TRAILER;
    memcpy(t, trailer_magic, 4);
    rc = rread(r, t + 4, sizeof(t) - 4, 0);
    if (rc != 0) {
        return io_fail(r, err, rc, r->rec_off, "the trailer");
    }
    crc = crc_update(0, t, TRAILER_BODY_LEN);
    if (crc != sl_le_get32(t + TRAILER_BODY_LEN)) {
        return rfail(r, err, SL_ECORRUPT, r->rec_off, "checksum mismatch");
    }
    n = sl_le_get64(t + 4);
    if (n != r->count) {
        return rfail(r,
                     err,
                     SL_ECORRUPT,
                     r->rec_off,
                     "trailer counts %llu records but the bulk holds %llu",
                     (unsigned long long)n,
                     (unsigned long long)r->count);
    }
    rc = fill(r);
    if (rc != 0) {
        return io_fail(r, err, rc, r->rec_off, "the end of the bulk");
    }
    if (r->pos < r->len) {
        return rfail(r,
                     err,
                     SL_ECORRUPT,
                     r->offset,
                     "unexpected data at offset %llu after the trailer",
                     (unsigned long long)r->offset);
    }
    r->state = R_DONE;
    return 0;
}

/*
 * Read the next attachment frame header of the open record, first skipping
 * (through the CRC) what is left of the previous attachment's data.  At the
 * 'E' frame, verify the record CRC and go back to R_IDLE.
 * Returns 1 (attachment), 0 (record end) or an error.
 */
static int
att_next(struct sl_bulk_reader *r,
         const char **name,
         uint64_t *size,
         struct sl_err *err)
{
    unsigned char b[8];
    uint64_t off = 0;
    size_t nlen = 0;
    int rc = 0;

    if (r->state == R_ATTACH && r->att_left > 0) {
        rc = rread(r, NULL, r->att_left, 1);
        if (rc != 0) {
            return io_fail(r, err, rc, r->att_off, "attachment data");
        }
        r->att_left = 0;
    }
    if (r->pending >= 0) { /* read by record_start, after the metadata */
        b[0] = (unsigned char)r->pending;
        off = r->pending_off;
        r->pending = -1;
    } else {
        off = r->offset;
        rc = rread(r, b, 1, 1);
        if (rc != 0) {
            return io_fail(r, err, rc, off, "a frame tag");
        }
    }
    if (b[0] == TAG_END) {
        rc = rread(r, b, 4, 0);
        if (rc != 0) {
            return io_fail(r, err, rc, off, "the record checksum");
        }
        if (sl_le_get32(b) != r->crc) {
            return rfail(r, err, SL_ECORRUPT, r->rec_off, "checksum mismatch");
        }
        r->count++;
        r->state = R_IDLE;
        return 0;
    }
    if (b[0] != TAG_ATTACHMENT) {
        return rfail(r,
                     err,
                     SL_ECORRUPT,
                     off,
                     "bad frame tag 0x%02x at offset %llu",
                     b[0],
                     (unsigned long long)off);
    }
    r->att_off = off;
    rc = rread(r, b, 2, 1);
    if (rc != 0) {
        return io_fail(r, err, rc, off, "an attachment frame");
    }
    nlen = sl_le_get16(b);
    if (nlen == 0 || nlen > SL_ATTACHMENT_NAME_MAX) {
        return rfail(r,
                     err,
                     SL_ECORRUPT,
                     off,
                     "attachment at offset %llu: bad name length %zu",
                     (unsigned long long)off,
                     nlen);
    }
    rc = rread(r, r->name, nlen, 1);
    if (rc != 0) {
        return io_fail(r, err, rc, off, "an attachment name");
    }
    r->name[nlen] = '\0';
    if (!name_ok(r->name, nlen)) {
        return rfail(r,
                     err,
                     SL_ECORRUPT,
                     off,
                     "attachment at offset %llu: name is not UTF-8 text",
                     (unsigned long long)off);
    }
    if (json_object_getn(r->names, r->name, nlen) != NULL) {
        return rfail(r,
                     err,
                     SL_ECORRUPT,
                     off,
                     "attachment at offset %llu: duplicate name \"%.64s\"",
                     (unsigned long long)off,
                     r->name);
    }
    rc = rread(r, b, 8, 1);
    if (rc != 0) {
        return io_fail(r, err, rc, off, "an attachment frame");
    }
    r->att_left = sl_le_get64(b);
    if (r->att_left > MAX_ATTACHMENT_SZ) {
        return rfail(r,
                     err,
                     SL_ECORRUPT,
                     off,
                     "attachment at offset %llu: impossible size",
                     (unsigned long long)off);
    }
    if (json_object_setn_nocheck(r->names, r->name, nlen, json_null()) != 0) {
        sl_panic("bulk: out of memory");
    }
    r->state = R_ATTACH;
    r->natt++;
    r->att_size = r->att_left;
    *name = r->name;
    *size = r->att_left;
    return 1;
}

/*
 * Read the head frame whose tag was just read at @off: its stored bytes
 * into hbuf, its fields checked (lengths that add up, a non-empty id, no
 * NUL byte, known flags) and copied as C strings after them.
 */
static int
read_head(struct sl_bulk_reader *r, uint64_t off, struct sl_err *err)
{
    const char **f[HEAD_FIELDS] = {&r->head.id,
                                   &r->head.source,
                                   &r->head.delta_hash,
                                   &r->head.compound_id};
    const unsigned char *p = NULL;
    const unsigned char *end = NULL;
    unsigned char b[2];
    char *str = NULL;
    size_t body = 0;
    size_t i = 0;
    int rc = rread(r, b, 2, 1);

    if (rc != 0) {
        return io_fail(r, err, rc, off, "a head frame");
    }
    body = sl_le_get16(b);
    if (body < HEAD_FIXED) {
        return rfail(r, err, SL_ECORRUPT, off, "head frame too short");
    }
    if (r->hcap < 2 * body + 3 + HEAD_FIELDS) {
        r->hcap = 2 * body + 3 + HEAD_FIELDS;
        r->hbuf = sl_realloc(r->hbuf, r->hcap);
    }
    r->hbuf[0] = TAG_HEAD;
    memcpy(r->hbuf + 1, b, 2);
    rc = rread(r, r->hbuf + 3, body, 1);
    if (rc != 0) {
        return io_fail(r, err, rc, off, "a head frame");
    }
    p = r->hbuf + 3;
    end = p + body;
    str = (char *)end;
    r->head.flags = *p++;
    if ((r->head.flags & ~HEAD_FLAGS) != 0) {
        return rfail(r, err, SL_ECORRUPT, off, "head with unknown flags");
    }
    for (i = 0; i < HEAD_FIELDS; i++) {
        size_t len = 0;

        if (end - p < 2) {
            return rfail(r, err, SL_ECORRUPT, off, "head fields cut short");
        }
        len = sl_le_get16(p);
        p += 2;
        *f[i] = NULL;
        if (len == HEAD_ABSENT) {
            continue;
        }
        if ((size_t)(end - p) < len || memchr(p, '\0', len) != NULL) {
            return rfail(r, err, SL_ECORRUPT, off, "bad head field %zu", i);
        }
        memcpy(str, p, len);
        str[len] = '\0';
        *f[i] = str;
        str += len + 1;
        p += len;
    }
    if (p != end || r->head.id == NULL || r->head.id[0] == '\0') {
        return rfail(r, err, SL_ECORRUPT, off, "bad head frame");
    }
    r->hraw_len = 3 + body;
    r->has_head = 1;
    return 0;
}

/*
 * Check decoded metadata: a JSON object with unique keys and a non-empty
 * string "_recordid".  Returns 0 with a new reference in *out, or fails
 * the reader.
 */
static int
parse_meta(struct sl_bulk_reader *r,
           const unsigned char *text,
           size_t len,
           json_t **out,
           struct sl_err *err)
{
    json_error_t jerr;
    json_t *meta = NULL;
    const json_t *id = NULL;

    *out = NULL;
    meta = json_loadb((const char *)text, len, JSON_REJECT_DUPLICATES, &jerr);
    if (meta == NULL) {
        return rfail(r,
                     err,
                     SL_ECORRUPT,
                     r->rec_off,
                     "metadata is not valid JSON: %s",
                     jerr.text);
    }
    id = json_object_get(meta, "_recordid");
    if (!json_is_object(meta) || !json_is_string(id) ||
        json_string_length(id) == 0) {
        json_decref(meta);
        return rfail(r,
                     err,
                     SL_ECORRUPT,
                     r->rec_off,
                     "metadata is not an object with a non-empty _recordid");
    }
    *out = meta;
    return 0;
}

/*
 * Start the next record: finish (skip and verify) the open one if the
 * caller left it early, then read the record head and metadata, or verify
 * the trailer.  @rec_limit, when not 0, bounds the head plus metadata.
 * The stored metadata bytes stay in r->meta until the next record.
 * Returns 1 with a new reference in *meta (left NULL when @meta is NULL:
 * the metadata are then not decoded), 0 at the verified end, or an error.
 */
static int
record_start(struct sl_bulk_reader *r,
             size_t rec_limit,
             json_t **meta,
             struct sl_err *err)
{
    unsigned char head[RECORD_HEAD_LEN];
    unsigned char tag[1];
    unsigned char *text = NULL;
    const char *name = NULL;
    uint64_t size = 0;
    uint64_t off = 0;
    uint32_t meta_len = 0;
    int rc = 0;

    if (meta != NULL) {
        *meta = NULL;
    }
    while (r->state == R_META || r->state == R_ATTACH) {
        rc = att_next(r, &name, &size, err);
        if (rc < 0) {
            return rc;
        }
    }
    if (r->state == R_DONE) {
        return 0;
    }
    r->rec_off = r->offset;
    r->crc = 0;
    rc = rread(r, head, 4, 1);
    if (rc == SL_ETRUNCATED && r->offset == r->rec_off) {
        return rfail(r,
                     err,
                     SL_ETRUNCATED,
                     r->rec_off,
                     "bulk truncated: it ends without a trailer");
    }
    if (rc != 0) {
        return io_fail(r, err, rc, r->rec_off, "a record header");
    }
    if (memcmp(head, trailer_magic, 4) == 0) {
        return read_trailer(r, err);
    }
    if (memcmp(head, record_magic, 4) != 0) {
        return rfail(r, err, SL_ECORRUPT, r->rec_off, "bad record magic");
    }
    rc = rread(r, head + 4, 4, 1);
    if (rc != 0) {
        return io_fail(r, err, rc, r->rec_off, "a record header");
    }
    meta_len = sl_le_get32(head + 4);
    if (meta_len > r->max_meta ||
        (rec_limit != 0 &&
         (uint64_t)meta_len + RECORD_HEAD_LEN + RECORD_END_LEN > rec_limit)) {
        return rfail(r,
                     err,
                     SL_ETOOLARGE,
                     r->rec_off,
                     "metadata of %lu bytes is over the limit",
                     (unsigned long)meta_len);
    }
    if (meta_len == 0) {
        return rfail(r, err, SL_ECORRUPT, r->rec_off, "empty metadata");
    }
    rc = read_alloc(r, meta_len, &text);
    if (rc != 0) {
        return io_fail(r, err, rc, r->rec_off, "record metadata");
    }
    sl_free(r->meta);
    r->meta = text;
    r->meta_len = meta_len;
    /* a head frame may follow; another tag is left for att_next */
    r->has_head = 0;
    r->pending = -1;
    off = r->offset;
    rc = rread(r, tag, 1, 1);
    if (rc != 0) {
        return io_fail(r, err, rc, off, "a frame tag");
    }
    if (tag[0] == TAG_HEAD) {
        rc = read_head(r, off, err);
        if (rc == 0 && rec_limit != 0 &&
            r->offset - r->rec_off + RECORD_END_LEN > rec_limit) {
            rc = rfail(r,
                       err,
                       SL_ETOOLARGE,
                       r->rec_off,
                       "metadata and head of %llu bytes are over the limit",
                       (unsigned long long)(r->offset - r->rec_off));
        }
    } else {
        r->pending = tag[0];
        r->pending_off = off;
    }
    if (rc == 0 && meta != NULL) {
        rc = parse_meta(r, text, meta_len, meta, err);
    }
    if (rc != 0) {
        return rc;
    }
    json_object_clear(r->names);
    r->att_left = 0;
    r->natt = 0;
    r->state = R_META;
    return 1;
}

int
sl_bulk_reader_next_meta(struct sl_bulk_reader *r,
                         json_t **meta,
                         struct sl_err *err)
{
    int rc = rusable(r, err);

    *meta = NULL;
    if (rc != 0) {
        return rc;
    }
    return record_start(r, 0, meta, err);
}

int
sl_bulk_reader_next_raw(struct sl_bulk_reader *r,
                        const char **meta,
                        size_t *len,
                        struct sl_err *err)
{
    int rc = rusable(r, err);

    *meta = NULL;
    *len = 0;
    if (rc != 0) {
        return rc;
    }
    rc = record_start(r, 0, NULL, err);
    if (rc == 1) {
        *meta = (const char *)r->meta;
        *len = r->meta_len;
    }
    return rc;
}

int
sl_bulk_reader_meta(struct sl_bulk_reader *r, json_t **meta, struct sl_err *err)
{
    int rc = rusable(r, err);

    *meta = NULL;
    if (rc != 0) {
        return rc;
    }
    if (r->meta == NULL || r->state == R_DONE) {
        return rfail(r, err, SL_EINVAL, r->offset, "no record was read");
    }
    return parse_meta(r, r->meta, r->meta_len, meta, err);
}

int
sl_bulk_reader_head(const struct sl_bulk_reader *r,
                    const struct sl_record_head **head)
{
    *head = r != NULL && r->trusted && r->has_head && r->state != R_DONE &&
                    r->state != R_FAILED
                ? &r->head
                : NULL;
    return *head != NULL;
}

void
sl_bulk_distrust(unsigned char hdr[8])
{
    if (memcmp(hdr, bulk_magic, 4) == 0) {
        hdr[6] &= (unsigned char)~SL_BULK_FLAG_HEADS;
    }
}

struct sl_record_head *
sl_record_head_dup(const struct sl_record_head *head)
{
    const char *f[HEAD_FIELDS];
    size_t lens[HEAD_FIELDS];
    size_t total = sizeof(struct sl_record_head);
    struct sl_record_head *h = NULL;
    const char **dst[HEAD_FIELDS];
    char *p = NULL;
    size_t i = 0;

    head_fields(head, f);
    for (i = 0; i < HEAD_FIELDS; i++) {
        lens[i] = f[i] != NULL ? strlen(f[i]) + 1 : 0;
        total += lens[i];
    }
    h = sl_malloc(total);
    h->flags = head->flags;
    dst[0] = &h->id;
    dst[1] = &h->source;
    dst[2] = &h->delta_hash;
    dst[3] = &h->compound_id;
    p = (char *)(h + 1);
    for (i = 0; i < HEAD_FIELDS; i++) {
        *dst[i] = NULL;
        if (f[i] != NULL) {
            memcpy(p, f[i], lens[i]);
            *dst[i] = p;
            p += lens[i];
        }
    }
    return h;
}

int
sl_bulk_reader_attachment_next(struct sl_bulk_reader *r,
                               const char **name,
                               uint64_t *size,
                               struct sl_err *err)
{
    int rc = rusable(r, err);

    *name = NULL;
    *size = 0;
    if (rc != 0) {
        return rc;
    }
    if (r->state != R_META && r->state != R_ATTACH) {
        return rfail(r, err, SL_EINVAL, r->offset, "no record is open");
    }
    return att_next(r, name, size, err);
}

int
sl_bulk_reader_skip_attachments(struct sl_bulk_reader *r,
                                size_t *n,
                                struct sl_err *err)
{
    const char *name = NULL;
    uint64_t size = 0;
    size_t k = 0;
    int rc = 0;

    if (r != NULL && r->state == R_IDLE) { /* the record's end was read */
        if (n != NULL) {
            *n = 0;
        }
        return 0;
    }
    while ((rc = sl_bulk_reader_attachment_next(r, &name, &size, err)) == 1) {
        k++;
    }
    if (n != NULL) {
        *n = k;
    }
    return rc;
}

int
sl_bulk_reader_attachment_read(struct sl_bulk_reader *r,
                               void *buf,
                               size_t cap,
                               size_t *n,
                               struct sl_err *err)
{
    size_t k = 0;
    int rc = rusable(r, err);

    *n = 0;
    if (rc != 0) {
        return rc;
    }
    if (r->state != R_ATTACH) {
        return rfail(r, err, SL_EINVAL, r->offset, "no attachment is open");
    }
    if (r->att_left == 0 || cap == 0) {
        return 0;
    }
    if (r->pos == r->len) {
        rc = fill(r);
        if (rc != 0) {
            return io_fail(r, err, rc, r->att_off, "attachment data");
        }
        if (r->pos == r->len) {
            return io_fail(
                r, err, SL_ETRUNCATED, r->att_off, "attachment data");
        }
    }
    k = r->len - r->pos;
    if (k > cap) {
        k = cap;
    }
    if (k > r->att_left) {
        k = (size_t)r->att_left;
    }
    rc = rread(r, buf, k, 1);
    if (SL_NEVER(rc != 0)) {
        return io_fail(r, err, rc, r->att_off, "attachment data");
    }
    r->att_left -= k;
    *n = k;
    return 0;
}

int
sl_bulk_reader_next(struct sl_bulk_reader *r,
                    struct sl_record **out,
                    struct sl_err *err)
{
    struct sl_record *rec = NULL;
    unsigned char *data = NULL;
    json_t *meta = NULL;
    const char *name = NULL;
    uint64_t size = 0;
    uint64_t used = 0;
    int rc = rusable(r, err);

    *out = NULL;
    if (rc != 0) {
        return rc;
    }
    rc = record_start(r, r->max_record, &meta, err);
    if (rc <= 0) {
        return rc;
    }
    rc = sl_record_from_json_new(meta, &rec, NULL);
    if (SL_NEVER(rc != 0)) {
        rc = rfail(r, err, SL_ECORRUPT, r->rec_off, "bad metadata");
        goto fail;
    }
    for (;;) {
        rc = att_next(r, &name, &size, err);
        if (rc < 0) {
            goto fail;
        }
        if (rc == 0) {
            break;
        }
        used = r->offset - r->rec_off + RECORD_END_LEN;
        if (used > r->max_record || size > r->max_record - used) {
            rc = rfail(r,
                       err,
                       SL_ETOOLARGE,
                       r->att_off,
                       "attachment \"%.64s\" of %llu bytes makes the record "
                       "larger than the limit of %zu bytes",
                       name,
                       (unsigned long long)size,
                       r->max_record);
            goto fail;
        }
        rc = read_alloc(r, (size_t)size, &data);
        if (rc != 0) {
            rc = io_fail(r, err, rc, r->att_off, "attachment data");
            goto fail;
        }
        r->att_left = 0;
        rc = sl_record_attachment_set_new(rec, name, data, (size_t)size);
        data = NULL;
        if (SL_NEVER(rc != 0)) {
            rc = rfail(r, err, SL_ECORRUPT, r->att_off, "bad attachment");
            goto fail;
        }
    }
    *out = rec;
    return 1;

fail:
    sl_record_free(rec);
    return rc;
}

uint64_t
sl_bulk_reader_offset(const struct sl_bulk_reader *r)
{
    return r->offset;
}

uint64_t
sl_bulk_reader_count(const struct sl_bulk_reader *r)
{
    return r->count;
}

int
sl_bulk_reader_at_end(const struct sl_bulk_reader *r)
{
    return r->state == R_DONE;
}

void
sl_bulk_reader_free(struct sl_bulk_reader *r)
{
    if (r == NULL) {
        return;
    }
    sl_free(r->buf);
    sl_free(r->meta);
    sl_free(r->hbuf);
    json_decref(r->names);
    sl_free(r);
}

int
sl_bulk_copy_attachments(struct sl_bulk_reader *r,
                         struct sl_bulk_writer *w,
                         char *buf,
                         size_t cap,
                         struct sl_err *err)
{
    const char *name = NULL;
    uint64_t size = 0;
    int rc = 0;

    while (rc == 0 &&
           (rc = sl_bulk_reader_attachment_next(r, &name, &size, err)) == 1) {
        size_t n = 0;

        rc = sl_bulk_writer_attachment_begin(w, name, size);
        while (rc == 0 &&
               (rc = sl_bulk_reader_attachment_read(r, buf, cap, &n, err)) ==
                   0 &&
               n > 0) {
            rc = sl_bulk_writer_attachment_write(w, buf, n);
        }
    }
    return rc;
}

/*
 * Move the data of @r's open attachment into @w unchanged: from the
 * reader's buffer straight into the writer's (one copy), into the
 * reader's CRC, and into the writer's only with @crc (else the copied
 * frame's checksum is the source's).
 */
static int
copy_att_data(struct sl_bulk_reader *r,
              struct sl_bulk_writer *w,
              int crc,
              int *wrc)
{
    int rc = 0;

    while (r->att_left > 0) {
        size_t k = 0;

        if (r->pos == r->len) {
            rc = fill(r);
            if (rc == 0 && r->pos == r->len) {
                rc = SL_ETRUNCATED;
            }
            if (rc != 0) {
                return rc;
            }
        }
        k = r->len - r->pos;
        if (k > r->att_left) {
            k = (size_t)r->att_left;
        }
        r->crc = crc_update(r->crc, r->buf + r->pos, k);
        *wrc = emit_frame(w, r->buf + r->pos, k, crc);
        if (*wrc != 0) {
            return 0;
        }
        r->pos += k;
        r->offset += k;
        r->att_left -= k;
    }
    return 0;
}

int
sl_bulk_copy_record(struct sl_bulk_reader *r,
                    struct sl_bulk_writer *w,
                    struct sl_err *err)
{
    unsigned char end[RECORD_END_LEN];
    const char *name = NULL;
    uint64_t size = 0;
    int first = 0;
    int crc = 0;
    int wrc = 0;
    int rc = rusable(r, err);

    if (rc != 0) {
        return rc;
    }
    first = r->state == R_ATTACH && r->natt == 1 && r->att_left == r->att_size;
    if (r->state != R_META && !first) {
        return rfail(r, err, SL_EINVAL, r->offset, "no record was just begun");
    }
    if (!wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state != W_IDLE) {
        return wfail(w, SL_EINVAL);
    }
    /* A head from a bulk without SL_BULK_FLAG_HEADS is not carried into
     * this writer's bulk, where it would be trusted: the copy goes without
     * it and gets a checksum of its own. */
    crc = r->has_head && !r->trusted;
    w->crc = 0;
    wrc = emit_record_head(w, r->meta, r->meta_len, crc);
    if (wrc == 0 && r->has_head && !crc) {
        wrc = emit(w, r->hbuf, r->hraw_len); /* in the source's checksum */
    }
    if (first) { /* its frame was read: it is copied first */
        name = r->name;
        size = r->att_size;
        rc = 1;
    }
    while (wrc == 0 && (first || (rc = att_next(r, &name, &size, err)) == 1)) {
        first = 0;
        wrc = emit_att_frame(w, name, strlen(name), size, crc);
        if (wrc == 0) {
            rc = copy_att_data(r, w, crc, &wrc);
            if (rc != 0) {
                rc = io_fail(r, err, rc, r->att_off, "attachment data");
            }
        }
        if (rc < 0) {
            break;
        }
    }
    if (wrc != 0) {
        return wfail(w, wrc);
    }
    if (rc != 0) {
        (void)wfail(w, rc); /* a partial record must not be finished */
        return rc;
    }
    /* att_next verified the source's checksum over the same bytes */
    end[0] = TAG_END;
    sl_le_put32(end + 1, crc ? crc_update(w->crc, end, 1) : r->crc);
    wrc = emit(w, end, sizeof(end));
    if (wrc != 0) {
        return wfail(w, wrc);
    }
    w->count++;
    return 0;
}

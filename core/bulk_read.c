/*
 * The bulk reader (docs/bulk-format.md; bulk.c says how the codec is
 * built): decodes from a 64 KiB buffer that it refills from the source,
 * verifies every record's checksum and the trailer, and offers a record
 * whole, as metadata and streamed attachments, or as its stored bytes.
 *
 * Threading: a reader belongs to one thread at a time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bulk_int.h"

/*
 * Fail the reader with @code.  The message starts with the frame being
 * decoded ("record 3 at offset 1234: ") and err->field is "offset N" with
 * N = @off, the offset of the innermost frame that failed.
 */
int
sl__bulk_rfail(struct sl_bulk_reader *r,
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
int
sl__bulk_io_fail(struct sl_bulk_reader *r,
                 struct sl_err *err,
                 int code,
                 uint64_t off,
                 const char *what)
{
    if (code == SL_ETRUNCATED) {
        return sl__bulk_rfail(r,
                              err,
                              code,
                              off,
                              "bulk truncated in %s at offset %llu",
                              what,
                              (unsigned long long)r->offset);
    }
    return sl__bulk_rfail(
        r, err, code, off, "read error in %s: %s", what, sl_strerror(code));
}

/* Refill the read-ahead buffer once it is used up; sets eof at the end. */
int
sl__bulk_fill(struct sl_bulk_reader *r)
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
            rc = sl__bulk_fill(r);
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
            r->crc = sl__bulk_crc(r->crc, r->buf + r->pos, k);
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
int
sl__bulk_rusable(const struct sl_bulk_reader *r, struct sl_err *err)
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
    r->names = sl__bulk_name_set_new();
    r->pending = -1;
    r->where = IN_HEADER;
    r->state = R_IDLE;

    rc = rread(r, hdr, sizeof(hdr), 0);
    if (rc != 0) {
        rc = sl__bulk_io_fail(r, err, rc, 0, "the bulk header");
        goto fail;
    }
    if (memcmp(hdr, sl__bulk_magic, 4) != 0) {
        rc = sl__bulk_rfail(r, err, SL_ECORRUPT, 0, "not a bulk (bad magic)");
        goto fail;
    }
    if (hdr[4] != SL_BULK_VERSION ||
        (sl_le_get16(hdr + 6) & ~SL_BULK_FLAG_HEADS) != 0) {
        rc = sl__bulk_rfail(r,
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
    memcpy(t, sl__bulk_trailer_magic, 4);
    rc = rread(r, t + 4, sizeof(t) - 4, 0);
    if (rc != 0) {
        return sl__bulk_io_fail(r, err, rc, r->rec_off, "the trailer");
    }
    crc = sl__bulk_crc(0, t, TRAILER_BODY_LEN);
    if (crc != sl_le_get32(t + TRAILER_BODY_LEN)) {
        return sl__bulk_rfail(
            r, err, SL_ECORRUPT, r->rec_off, "checksum mismatch");
    }
    n = sl_le_get64(t + 4);
    if (n != r->count) {
        return sl__bulk_rfail(
            r,
            err,
            SL_ECORRUPT,
            r->rec_off,
            "trailer counts %llu records but the bulk holds %llu",
            (unsigned long long)n,
            (unsigned long long)r->count);
    }
    rc = sl__bulk_fill(r);
    if (rc != 0) {
        return sl__bulk_io_fail(r, err, rc, r->rec_off, "the end of the bulk");
    }
    if (r->pos < r->len) {
        return sl__bulk_rfail(
            r,
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
int
sl__bulk_att_next(struct sl_bulk_reader *r,
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
            return sl__bulk_io_fail(r, err, rc, r->att_off, "attachment data");
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
            return sl__bulk_io_fail(r, err, rc, off, "a frame tag");
        }
    }
    if (b[0] == TAG_END) {
        rc = rread(r, b, 4, 0);
        if (rc != 0) {
            return sl__bulk_io_fail(r, err, rc, off, "the record checksum");
        }
        if (sl_le_get32(b) != r->crc) {
            return sl__bulk_rfail(
                r, err, SL_ECORRUPT, r->rec_off, "checksum mismatch");
        }
        r->count++;
        r->state = R_IDLE;
        return 0;
    }
    if (b[0] != TAG_ATTACHMENT) {
        return sl__bulk_rfail(r,
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
        return sl__bulk_io_fail(r, err, rc, off, "an attachment frame");
    }
    nlen = sl_le_get16(b);
    if (nlen == 0 || nlen > SL_ATTACHMENT_NAME_MAX) {
        return sl__bulk_rfail(r,
                              err,
                              SL_ECORRUPT,
                              off,
                              "attachment at offset %llu: bad name length %zu",
                              (unsigned long long)off,
                              nlen);
    }
    rc = rread(r, r->name, nlen, 1);
    if (rc != 0) {
        return sl__bulk_io_fail(r, err, rc, off, "an attachment name");
    }
    r->name[nlen] = '\0';
    if (!sl__bulk_name_ok(r->name, nlen)) {
        return sl__bulk_rfail(
            r,
            err,
            SL_ECORRUPT,
            off,
            "attachment at offset %llu: name is not UTF-8 text",
            (unsigned long long)off);
    }
    if (json_object_getn(r->names, r->name, nlen) != NULL) {
        return sl__bulk_rfail(
            r,
            err,
            SL_ECORRUPT,
            off,
            "attachment at offset %llu: duplicate name \"%.64s\"",
            (unsigned long long)off,
            r->name);
    }
    rc = rread(r, b, 8, 1);
    if (rc != 0) {
        return sl__bulk_io_fail(r, err, rc, off, "an attachment frame");
    }
    r->att_left = sl_le_get64(b);
    if (r->att_left > MAX_ATTACHMENT_SZ) {
        return sl__bulk_rfail(r,
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
        return sl__bulk_io_fail(r, err, rc, off, "a head frame");
    }
    body = sl_le_get16(b);
    if (body < HEAD_FIXED) {
        return sl__bulk_rfail(r, err, SL_ECORRUPT, off, "head frame too short");
    }
    if (r->hcap < 2 * body + 3 + HEAD_FIELDS) {
        r->hcap = 2 * body + 3 + HEAD_FIELDS;
        r->hbuf = sl_realloc(r->hbuf, r->hcap);
    }
    r->hbuf[0] = TAG_HEAD;
    memcpy(r->hbuf + 1, b, 2);
    rc = rread(r, r->hbuf + 3, body, 1);
    if (rc != 0) {
        return sl__bulk_io_fail(r, err, rc, off, "a head frame");
    }
    p = r->hbuf + 3;
    end = p + body;
    str = (char *)end;
    r->head.flags = *p++;
    if ((r->head.flags & ~HEAD_FLAGS) != 0) {
        return sl__bulk_rfail(
            r, err, SL_ECORRUPT, off, "head with unknown flags");
    }
    for (i = 0; i < HEAD_FIELDS; i++) {
        size_t len = 0;

        if (end - p < 2) {
            return sl__bulk_rfail(
                r, err, SL_ECORRUPT, off, "head fields cut short");
        }
        len = sl_le_get16(p);
        p += 2;
        *f[i] = NULL;
        if (len == HEAD_ABSENT) {
            continue;
        }
        if ((size_t)(end - p) < len || memchr(p, '\0', len) != NULL) {
            return sl__bulk_rfail(
                r, err, SL_ECORRUPT, off, "bad head field %zu", i);
        }
        memcpy(str, p, len);
        str[len] = '\0';
        *f[i] = str;
        str += len + 1;
        p += len;
    }
    if (p != end || r->head.id == NULL || r->head.id[0] == '\0') {
        return sl__bulk_rfail(r, err, SL_ECORRUPT, off, "bad head frame");
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
        return sl__bulk_rfail(r,
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
        return sl__bulk_rfail(
            r,
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
        rc = sl__bulk_att_next(r, &name, &size, err);
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
        return sl__bulk_rfail(r,
                              err,
                              SL_ETRUNCATED,
                              r->rec_off,
                              "bulk truncated: it ends without a trailer");
    }
    if (rc != 0) {
        return sl__bulk_io_fail(r, err, rc, r->rec_off, "a record header");
    }
    if (memcmp(head, sl__bulk_trailer_magic, 4) == 0) {
        return read_trailer(r, err);
    }
    if (memcmp(head, sl__bulk_record_magic, 4) != 0) {
        return sl__bulk_rfail(
            r, err, SL_ECORRUPT, r->rec_off, "bad record magic");
    }
    rc = rread(r, head + 4, 4, 1);
    if (rc != 0) {
        return sl__bulk_io_fail(r, err, rc, r->rec_off, "a record header");
    }
    meta_len = sl_le_get32(head + 4);
    if (meta_len > r->max_meta ||
        (rec_limit != 0 &&
         (uint64_t)meta_len + RECORD_HEAD_LEN + RECORD_END_LEN > rec_limit)) {
        return sl__bulk_rfail(r,
                              err,
                              SL_ETOOLARGE,
                              r->rec_off,
                              "metadata of %lu bytes is over the limit",
                              (unsigned long)meta_len);
    }
    if (meta_len == 0) {
        return sl__bulk_rfail(
            r, err, SL_ECORRUPT, r->rec_off, "empty metadata");
    }
    rc = read_alloc(r, meta_len, &text);
    if (rc != 0) {
        return sl__bulk_io_fail(r, err, rc, r->rec_off, "record metadata");
    }
    sl_free(r->meta);
    r->meta = text;
    r->meta_len = meta_len;
    /* a head frame may follow; another tag is left for sl__bulk_att_next */
    r->has_head = 0;
    r->pending = -1;
    off = r->offset;
    rc = rread(r, tag, 1, 1);
    if (rc != 0) {
        return sl__bulk_io_fail(r, err, rc, off, "a frame tag");
    }
    if (tag[0] == TAG_HEAD) {
        rc = read_head(r, off, err);
        if (rc == 0 && rec_limit != 0 &&
            r->offset - r->rec_off + RECORD_END_LEN > rec_limit) {
            rc = sl__bulk_rfail(
                r,
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
    int rc = sl__bulk_rusable(r, err);

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
    int rc = sl__bulk_rusable(r, err);

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
    int rc = sl__bulk_rusable(r, err);

    *meta = NULL;
    if (rc != 0) {
        return rc;
    }
    if (r->meta == NULL || r->state == R_DONE) {
        return sl__bulk_rfail(
            r, err, SL_EINVAL, r->offset, "no record was read");
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
    if (memcmp(hdr, sl__bulk_magic, 4) == 0) {
        hdr[6] &= (unsigned char)~SL_BULK_FLAG_HEADS;
    }
}

int
sl_bulk_reader_attachment_next(struct sl_bulk_reader *r,
                               const char **name,
                               uint64_t *size,
                               struct sl_err *err)
{
    int rc = sl__bulk_rusable(r, err);

    *name = NULL;
    *size = 0;
    if (rc != 0) {
        return rc;
    }
    if (r->state != R_META && r->state != R_ATTACH) {
        return sl__bulk_rfail(
            r, err, SL_EINVAL, r->offset, "no record is open");
    }
    return sl__bulk_att_next(r, name, size, err);
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
    int rc = sl__bulk_rusable(r, err);

    *n = 0;
    if (rc != 0) {
        return rc;
    }
    if (r->state != R_ATTACH) {
        return sl__bulk_rfail(
            r, err, SL_EINVAL, r->offset, "no attachment is open");
    }
    if (r->att_left == 0 || cap == 0) {
        return 0;
    }
    if (r->pos == r->len) {
        rc = sl__bulk_fill(r);
        if (rc != 0) {
            return sl__bulk_io_fail(r, err, rc, r->att_off, "attachment data");
        }
        if (r->pos == r->len) {
            return sl__bulk_io_fail(
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
        return sl__bulk_io_fail(r, err, rc, r->att_off, "attachment data");
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
    int rc = sl__bulk_rusable(r, err);

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
        rc = sl__bulk_rfail(r, err, SL_ECORRUPT, r->rec_off, "bad metadata");
        goto fail;
    }
    for (;;) {
        rc = sl__bulk_att_next(r, &name, &size, err);
        if (rc < 0) {
            goto fail;
        }
        if (rc == 0) {
            break;
        }
        used = r->offset - r->rec_off + RECORD_END_LEN;
        if (used > r->max_record || size > r->max_record - used) {
            rc = sl__bulk_rfail(
                r,
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
            rc = sl__bulk_io_fail(r, err, rc, r->att_off, "attachment data");
            goto fail;
        }
        r->att_left = 0;
        rc = sl_record_attachment_set_new(rec, name, data, (size_t)size);
        data = NULL;
        if (SL_NEVER(rc != 0)) {
            rc = sl__bulk_rfail(
                r, err, SL_ECORRUPT, r->att_off, "bad attachment");
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

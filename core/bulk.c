/*
 * Record bulks: the versioned binary framing of docs/bulk-format.md.  The
 * writer is in bulk_write.c, the reader in bulk_read.c; this file holds
 * what both use (the magics, the rule for attachment names, the fields
 * of a record head) and the copy of records from a reader into a writer,
 * which works on the frames of both.  bulk_int.h is private to the three.
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
#include <string.h>

#include "core/bulk_int.h"

const unsigned char sl__bulk_magic[4] = {'S', 'L', 'B', 'K'};
const unsigned char sl__bulk_record_magic[4] = {'S', 'L', 'R', 'C'};
const unsigned char sl__bulk_trailer_magic[4] = {'S', 'L', 'N', 'D'};

/*
 * Attachment names are 1..SL_ATTACHMENT_NAME_MAX bytes of UTF-8 without a
 * NUL byte: they must survive as C strings and as JSON keys (bulk cat).
 * Both the writer and the reader apply this rule.
 */
int
sl__bulk_name_ok(const char *name, size_t len)
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
json_t *
sl__bulk_name_set_new(void)
{
    json_t *set = json_object();

    if (set == NULL) {
        sl_panic("bulk: out of memory");
    }
    return set;
}

/* The fields of @h in the order of the head frame. */
void
sl__bulk_head_fields(const struct sl_record_head *h, const char *f[HEAD_FIELDS])
{
    f[0] = h->id;
    f[1] = h->source;
    f[2] = h->delta_hash;
    f[3] = h->compound_id;
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

    sl__bulk_head_fields(head, f);
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

/* ------------------------------------------------------------------------
 * Copies.
 * --------------------------------------------------------------------- */

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
            rc = sl__bulk_fill(r);
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
        r->crc = sl__bulk_crc(r->crc, r->buf + r->pos, k);
        *wrc = sl__bulk_emit_frame(w, r->buf + r->pos, k, crc);
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
    int rc = sl__bulk_rusable(r, err);

    if (rc != 0) {
        return rc;
    }
    first = r->state == R_ATTACH && r->natt == 1 && r->att_left == r->att_size;
    if (r->state != R_META && !first) {
        return sl__bulk_rfail(
            r, err, SL_EINVAL, r->offset, "no record was just begun");
    }
    if (!sl__bulk_wusable(w)) {
        return SL_EBADSTATE;
    }
    if (w->state != W_IDLE) {
        return sl__bulk_wfail(w, SL_EINVAL);
    }
    /* A head from a bulk without SL_BULK_FLAG_HEADS is not carried into
     * this writer's bulk, where it would be trusted: the copy goes without
     * it and gets a checksum of its own. */
    crc = r->has_head && !r->trusted;
    w->crc = 0;
    wrc = sl__bulk_emit_record_head(w, r->meta, r->meta_len, crc);
    if (wrc == 0 && r->has_head && !crc) {
        wrc = sl__bulk_emit(
            w, r->hbuf, r->hraw_len); /* in the source's checksum */
    }
    if (first) { /* its frame was read: it is copied first */
        name = r->name;
        size = r->att_size;
        rc = 1;
    }
    while (wrc == 0 &&
           (first || (rc = sl__bulk_att_next(r, &name, &size, err)) == 1)) {
        first = 0;
        wrc = sl__bulk_emit_att_frame(w, name, strlen(name), size, crc);
        if (wrc == 0) {
            rc = copy_att_data(r, w, crc, &wrc);
            if (rc != 0) {
                rc =
                    sl__bulk_io_fail(r, err, rc, r->att_off, "attachment data");
            }
        }
        if (rc < 0) {
            break;
        }
    }
    if (wrc != 0) {
        return sl__bulk_wfail(w, wrc);
    }
    if (rc != 0) {
        (void)sl__bulk_wfail(w, rc); /* a partial record must not be finished */
        return rc;
    }
    /* sl__bulk_att_next verified the source's checksum over the same bytes */
    end[0] = TAG_END;
    sl_le_put32(end + 1, crc ? sl__bulk_crc(w->crc, end, 1) : r->crc);
    wrc = sl__bulk_emit(w, end, sizeof(end));
    if (wrc != 0) {
        return sl__bulk_wfail(w, wrc);
    }
    w->count++;
    return 0;
}

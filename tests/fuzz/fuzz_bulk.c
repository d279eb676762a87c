/*
 * The bulk reader of core/bulk_read.c (docs/bulk-format.md).  The first input
 * byte is a mode, the rest a bulk:
 *   bit 0: checksums not enforced: before reading, the harness walks the
 *          frames as the format describes them and writes the right CRC-32
 *          into every record end and the trailer, so that the fuzzer gets
 *          past them to everything behind (with the bit clear, the bytes
 *          are read as they are and a mutation mostly meets a checksum);
 *   bits 1-2: the reading API: 0 sl_bulk_reader_next (whole records), 1
 *          next_meta + attachment_next + attachment_read in small pieces,
 *          2 next_raw + head + meta + skip_attachments, 3 next_raw +
 *          meta + sl_bulk_copy_record into a writer, whose bulk is read
 *          again;
 *   bit 3: the source gives 1 to 7 bytes per read;
 *   bit 4: small limits (256 bytes of metadata, 4 KiB per record);
 *   bit 5: the header is distrusted first (sl_bulk_distrust).
 * Checks: every call answers one of its documented codes, a failed reader
 * answers SL_EBADSTATE, the verified end comes with at_end and the record
 * count, records carry a non-empty string _recordid, a head agrees with
 * its metadata, and a copy reads back as the same records.
 */
#include <zlib.h>

#include "core/sl.h"

#include "fuzz.h"

#define MODE_FIXCRC   0x01u
#define MODE_API      0x06u
#define MODE_CHUNKY   0x08u
#define MODE_SMALL    0x10u
#define MODE_DISTRUST 0x20u

struct src {
    const unsigned char *p;
    size_t len;
    size_t pos;
    unsigned step; /* 0: as much as asked */
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sl_fuzz_quiet();
    return 0;
}

static int
src_read(void *ctx, void *buf, size_t cap, size_t *n)
{
    struct src *s = ctx;
    size_t k = s->len - s->pos;

    if (s->step != 0) {
        size_t most = 1 + s->step++ % 7;

        k = k < most ? k : most;
    }
    k = k < cap ? k : cap;
    if (k > 0) {
        memcpy(buf, s->p + s->pos, k);
    }
    s->pos += k;
    *n = k;
    return 0;
}

static int
buf_write(void *ctx, const void *data, size_t len)
{
    return sl_buf_append(ctx, data, len);
}

/* ------------------------------------------------------------------------
 * Checksums written as the format describes them (not by core/bulk*.c).
 * --------------------------------------------------------------------- */

static uint64_t
get_le(const unsigned char *p, unsigned bytes)
{
    uint64_t v = 0;

    while (bytes-- > 0) {
        v = v << 8 | p[bytes];
    }
    return v;
}

static void
put_crc(unsigned char *at, const unsigned char *from, size_t len)
{
    uLong c = crc32(0L, from, (uInt)len);

    at[0] = (unsigned char)c;
    at[1] = (unsigned char)(c >> 8);
    at[2] = (unsigned char)(c >> 16);
    at[3] = (unsigned char)(c >> 24);
}

/* Walk the frames of bulk @b (@n bytes) and fix the record and trailer
 * checksums; stops where the frames stop making sense. */
static void
fix_checksums(unsigned char *b, size_t n)
{
    size_t pos = 8;

    while (pos + 4 <= n) {
        size_t start = pos;

        if (memcmp(b + pos, "SLND", 4) == 0) {
            if (pos + 16 <= n) {
                put_crc(b + pos + 12, b + pos, 12);
            }
            return;
        }
        if (memcmp(b + pos, "SLRC", 4) != 0 || pos + 8 > n) {
            return;
        }
        {
            uint64_t meta = get_le(b + pos + 4, 4);

            if (meta > n - pos - 8) {
                return;
            }
            pos += 8 + (size_t)meta;
        }
        for (;;) {
            if (pos >= n) {
                return;
            }
            if (b[pos] == 'E') {
                if (pos + 5 <= n) {
                    put_crc(b + pos + 1, b + start, pos + 1 - start);
                }
                pos += 5;
                break;
            }
            if (b[pos] == 'H' && pos + 3 <= n) {
                pos += 3 + (size_t)get_le(b + pos + 1, 2);
            } else if (b[pos] == 'A' && pos + 3 <= n) {
                uint64_t name = get_le(b + pos + 1, 2);
                uint64_t data = 0;

                if (name + 8 > n - pos - 3) {
                    return;
                }
                data = get_le(b + pos + 3 + name, 8);
                if (data > n - pos - 11 - name) {
                    return;
                }
                pos += 11 + (size_t)name + (size_t)data;
            } else {
                return;
            }
        }
    }
}

/* ------------------------------------------------------------------------
 * Checks.
 * --------------------------------------------------------------------- */

static int
read_error(int rc)
{
    return rc == SL_ECORRUPT || rc == SL_ETRUNCATED || rc == SL_ETOOLARGE;
}

static void
check_failed(struct sl_bulk_reader *r, int rc, const struct sl_err *err)
{
    json_t *meta = NULL;
    struct sl_record *rec = NULL;

    SL_FUZZ_CHECK(read_error(rc), "reader: %s", sl_err_name(rc));
    SL_FUZZ_CHECK(err->code == rc && err->message[0] != '\0',
                  "reader error %s: err says %s '%s'",
                  sl_err_name(rc),
                  sl_err_name(err->code),
                  err->message);
    rc = sl_bulk_reader_next_meta(r, &meta, NULL);
    SL_FUZZ_CHECK(rc == SL_EBADSTATE && meta == NULL,
                  "after a failure: %s",
                  sl_err_name(rc));
    rc = sl_bulk_reader_next(r, &rec, NULL);
    SL_FUZZ_CHECK(rc == SL_EBADSTATE && rec == NULL,
                  "after a failure: %s",
                  sl_err_name(rc));
}

static void
check_meta(const json_t *meta)
{
    const char *id = json_string_value(json_object_get(meta, "_recordid"));

    SL_FUZZ_CHECK(json_is_object(meta), "metadata is not an object");
    SL_FUZZ_CHECK(id != NULL && id[0] != '\0', "no _recordid");
}

/* A head (from a trusted bulk) agrees with the metadata it came with. */
static void
check_head(struct sl_bulk_reader *r, const json_t *meta)
{
    const struct sl_record_head *h = NULL;
    int has = sl_bulk_reader_head(r, &h);

    SL_FUZZ_CHECK(has == 0 || has == 1, "head: %d", has);
    if (has == 0) {
        SL_FUZZ_CHECK(h == NULL, "no head but a pointer");
        return;
    }
    SL_FUZZ_CHECK(h->id != NULL && h->id[0] != '\0', "head without id");
    (void)meta; /* a head may disagree with its metadata: heads are only
                   trusted in bulks this engine wrote (docs/bulk-format.md),
                   which a mutated bulk may claim to be */
}

/* Read every record of @s through the API of @mode; the metadata of each
 * record goes to @metas (an array), copies to @copy when not NULL.
 * Returns the reader's final code (0: verified end). */
static int
read_all(struct src *s,
         unsigned mode,
         json_t *metas,
         struct sl_buf *copy,
         uint64_t *records)
{
    struct sl_source source = {src_read, s};
    struct sl_bulk_limits small = {256, 4096};
    struct sl_bulk_reader *r = NULL;
    struct sl_bulk_writer *w = NULL;
    struct sl_sink sink = {buf_write, copy};
    struct sl_err err;
    unsigned api = (mode & MODE_API) >> 1;
    char piece[13];
    int rc = 0;

    sl_err_clear(&err);
    *records = 0;
    rc = sl_bulk_reader_new(
        &source, (mode & MODE_SMALL) ? &small : NULL, &r, &err);
    if (rc != 0) {
        SL_FUZZ_CHECK(read_error(rc), "reader_new: %s", sl_err_name(rc));
        SL_FUZZ_CHECK(r == NULL, "reader_new failed with a reader");
        return rc;
    }
    if (copy != NULL) {
        rc = sl_bulk_writer_new(&sink, &w);
        SL_FUZZ_CHECK(rc == 0, "writer_new: %s", sl_err_name(rc));
    }
    for (;;) {
        struct sl_record *rec = NULL;
        json_t *meta = NULL;
        const char *raw = NULL;
        size_t raw_len = 0;
        const char *name = NULL;
        uint64_t size = 0;
        size_t n = 0;

        sl_err_clear(&err);
        if (api == 0) {
            rc = sl_bulk_reader_next(r, &rec, &err);
            if (rc == 1) {
                check_meta(sl_record_meta(rec));
                (void)json_array_append(metas, sl_record_meta(rec));
                SL_FUZZ_CHECK(sl_record_attachment_count(rec) <= 1u << 16,
                              "attachments");
                sl_record_free(rec);
            }
        } else if (api == 1) {
            rc = sl_bulk_reader_next_meta(r, &meta, &err);
            if (rc == 1) {
                check_meta(meta);
                check_head(r, meta);
                (void)json_array_append_new(metas, meta);
                while ((rc = sl_bulk_reader_attachment_next(
                            r, &name, &size, &err)) == 1) {
                    SL_FUZZ_CHECK(name != NULL && name[0] != '\0',
                                  "attachment name");
                    do {
                        rc = sl_bulk_reader_attachment_read(
                            r, piece, sizeof(piece), &n, &err);
                    } while (rc == 0 && n > 0);
                    if (rc != 0) {
                        break;
                    }
                }
                rc = rc == 0 ? 1 : rc;
            }
        } else {
            rc = sl_bulk_reader_next_raw(r, &raw, &raw_len, &err);
            if (rc == 1) {
                SL_FUZZ_CHECK(raw != NULL && raw_len > 0, "raw metadata");
                /* a copy is of records checked before */
                rc = sl_bulk_reader_meta(r, &meta, &err);
                if (rc == 0) {
                    check_meta(meta);
                    check_head(r, meta);
                    (void)json_array_append_new(metas, meta);
                    rc = api == 2 ? sl_bulk_reader_skip_attachments(r, &n, &err)
                                  : sl_bulk_copy_record(r, w, &err);
                }
                rc = rc == 0 ? 1 : rc;
            }
        }
        if (rc != 1) {
            break;
        }
        (*records)++;
        SL_FUZZ_CHECK(sl_bulk_reader_count(r) == *records,
                      "count %llu after %llu records",
                      (unsigned long long)sl_bulk_reader_count(r),
                      (unsigned long long)*records);
    }
    if (rc == 0) {
        SL_FUZZ_CHECK(sl_bulk_reader_at_end(r) == 1, "end without at_end");
        SL_FUZZ_CHECK(s->pos == s->len, "bytes after the trailer");
        if (w != NULL) {
            SL_FUZZ_CHECK(sl_bulk_writer_finish(w) == 0, "writer finish");
        }
    } else {
        SL_FUZZ_CHECK(
            sl_bulk_reader_at_end(r) == 0, "at_end after %s", sl_err_name(rc));
        if (read_error(rc) && err.code == rc) {
            check_failed(r, rc, &err);
        } else {
            /* only a copy's writer may fail with other codes */
            SL_FUZZ_CHECK(api == 3,
                          "reader: %s (err %s)",
                          sl_err_name(rc),
                          sl_err_name(err.code));
        }
    }
    sl_bulk_writer_free(w);
    sl_bulk_reader_free(r);
    return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    unsigned char *b = NULL;
    struct src s;
    struct sl_buf copy;
    json_t *metas = NULL;
    unsigned mode = 0;
    uint64_t records = 0;
    int rc = 0;

    if (size < 1) {
        return 0;
    }
    mode = data[0];
    b = sl_malloc(size);
    memcpy(b, data + 1, size - 1);
    if ((mode & MODE_DISTRUST) && size - 1 >= 8) {
        sl_bulk_distrust(b);
    }
    if (mode & MODE_FIXCRC) {
        fix_checksums(b, size - 1);
    }
    memset(&s, 0, sizeof(s));
    s.p = b;
    s.len = size - 1;
    s.step = (mode & MODE_CHUNKY) ? 1 : 0;
    sl_buf_init(&copy, 64u << 20);
    metas = json_array();
    rc = read_all(&s,
                  mode,
                  metas,
                  ((mode & MODE_API) >> 1) == 3 ? &copy : NULL,
                  &records);
    if (rc == 0 && ((mode & MODE_API) >> 1) == 3) {
        /* the copy is a bulk of the same records */
        json_t *again = json_array();
        uint64_t n = 0;

        memset(&s, 0, sizeof(s));
        s.p = (const unsigned char *)copy.data;
        s.len = copy.len;
        rc = read_all(&s, 0, again, NULL, &n);
        SL_FUZZ_CHECK(rc == 0 && n == records,
                      "copy: %s after %llu of %llu records",
                      sl_err_name(rc),
                      (unsigned long long)n,
                      (unsigned long long)records);
        SL_FUZZ_CHECK(json_equal(metas, again), "copy: other metadata");
        json_decref(again);
    }
    json_decref(metas);
    sl_buf_free(&copy);
    sl_free(b);
    return 0;
}

/*
 * Unit tests for the bulk codec (core/bulk*.c, docs/bulk-format.md): round
 * trips through the whole-record and streaming APIs, the exact byte
 * layout, truncation at every offset, every single-byte flip, the limits,
 * writer misuse and the failed state of readers and writers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "core/sl.h"

/* ------------------------------------------------------------------------
 * In-memory sink and source.
 * --------------------------------------------------------------------- */
struct mem {
    unsigned char *data;
    size_t len;
    size_t cap;
    size_t limit;  /* sink: fail with SL_ENOSPC past this many bytes */
    size_t pos;    /* source: next byte to give */
    size_t chunk;  /* source: at most this many bytes per read (0 = any) */
    int src_error; /* source: fail with SL_EIO once the data is used up */
};

static int
mem_write(void *ctx, const void *data, size_t len)
{
    struct mem *m = ctx;

    if (len > m->limit - m->len) {
        return SL_ENOSPC;
    }
    if (m->len + len > m->cap) {
        size_t cap = m->cap ? m->cap : 256;

        while (cap < m->len + len) {
            cap *= 2;
        }
        m->data = sl_realloc(m->data, cap);
        m->cap = cap;
    }
    memcpy(m->data + m->len, data, len);
    m->len += len;
    return 0;
}

static int
mem_read(void *ctx, void *buf, size_t cap, size_t *n)
{
    struct mem *m = ctx;
    size_t k = m->len - m->pos;

    if (k == 0 && m->src_error) {
        return SL_EIO;
    }
    if (k > cap) {
        k = cap;
    }
    if (m->chunk != 0 && k > m->chunk) {
        k = m->chunk;
    }
    memcpy(buf, m->data + m->pos, k);
    m->pos += k;
    *n = k;
    return 0;
}

static void
mem_init(struct mem *m)
{
    memset(m, 0, sizeof(*m));
    m->limit = (size_t)256 << 20;
}

static void
mem_sink(struct mem *m, struct sl_sink *sink)
{
    sink->write = mem_write;
    sink->ctx = m;
}

/* A source over @len bytes of @data (not copied) giving @chunk at a time. */
static void
mem_source(struct mem *m,
           const unsigned char *data,
           size_t len,
           size_t chunk,
           struct sl_source *src)
{
    memset(m, 0, sizeof(*m));
    m->data = (unsigned char *)data;
    m->len = len;
    m->chunk = chunk;
    src->read = mem_read;
    src->ctx = m;
}

/* Deterministic pseudo-random bytes (xorshift64). */
static void
fill_random(unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t x = seed | 1;
    size_t i = 0;

    for (i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)(x >> 24);
    }
}

static json_t *
meta_parse(const char *text)
{
    json_error_t jerr;
    json_t *j = json_loads(text, 0, &jerr);

    assert_non_null(j);
    return j;
}

static struct sl_record *
record_from_text(const char *text)
{
    struct sl_record *rec = NULL;

    assert_int_equal(sl_record_from_json_new(meta_parse(text), &rec, NULL), 0);
    return rec;
}

static void
assert_records_equal(const struct sl_record *a, const struct sl_record *b)
{
    size_t i = 0;

    assert_true(json_equal(sl_record_meta(a), sl_record_meta(b)));
    assert_int_equal(sl_record_attachment_count(a),
                     sl_record_attachment_count(b));
    for (i = 0; i < sl_record_attachment_count(a); i++) {
        const char *na = NULL;
        const char *nb = NULL;
        const void *da = NULL;
        const void *db = NULL;
        size_t la = 0;
        size_t lb = 0;

        assert_int_equal(sl_record_attachment_at(a, i, &na, &da, &la), 0);
        assert_int_equal(sl_record_attachment_at(b, i, &nb, &db, &lb), 0);
        assert_string_equal(na, nb);
        assert_int_equal(la, lb);
        if (la > 0) {
            assert_memory_equal(da, db, la);
        }
    }
}

/* Write @n records into a fresh memory buffer; returns its bytes. */
static void
write_records(struct sl_record **recs, size_t n, struct mem *out)
{
    struct sl_bulk_writer *w = NULL;
    struct sl_sink sink;
    size_t i = 0;

    mem_init(out);
    mem_sink(out, &sink);
    assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
    assert_int_equal(out->len, 8);
    for (i = 0; i < n; i++) {
        assert_int_equal(sl_bulk_writer_add(w, recs[i]), 0);
    }
    assert_int_equal(sl_bulk_writer_finish(w), 0);
    assert_int_equal(sl_bulk_writer_count(w), n);
    assert_int_equal(sl_bulk_writer_bytes(w), out->len);
    sl_bulk_writer_free(w);
}

/*
 * Read a whole bulk with sl_bulk_reader_next.  Returns 0 at a clean end or
 * the first error; *nread counts records; when @expect is not NULL the
 * records must equal it.
 */
static int
read_all(const unsigned char *data,
         size_t len,
         size_t chunk,
         const struct sl_bulk_limits *limits,
         struct sl_record **expect,
         size_t *nread,
         struct sl_err *err)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_record *rec = NULL;
    struct sl_source src;
    struct mem m;
    int rc = 0;

    *nread = 0;
    mem_source(&m, data, len, chunk, &src);
    rc = sl_bulk_reader_new(&src, limits, &r, err);
    if (rc != 0) {
        assert_null(r);
        return rc;
    }
    for (;;) {
        rc = sl_bulk_reader_next(r, &rec, err);
        if (rc <= 0) {
            break;
        }
        if (expect != NULL) {
            assert_records_equal(rec, expect[*nread]);
        }
        (*nread)++;
        sl_record_free(rec);
    }
    if (rc == 0) {
        assert_int_equal(sl_bulk_reader_offset(r), len);
        /* The end is sticky. */
        assert_int_equal(sl_bulk_reader_next(r, &rec, err), 0);
    } else {
        assert_null(rec);
        assert_int_equal(sl_bulk_reader_next(r, &rec, NULL), SL_EBADSTATE);
    }
    sl_bulk_reader_free(r);
    return rc;
}

/*
 * Read a whole bulk with the streaming API, reading every attachment in
 * small pieces.  Returns 0 at a clean end or the first error.
 */
static int
stream_all(const unsigned char *data, size_t len, struct sl_err *err)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_source src;
    struct mem m;
    json_t *meta = NULL;
    const char *name = NULL;
    unsigned char buf[13];
    uint64_t size = 0;
    uint64_t got = 0;
    size_t n = 0;
    int rc = 0;

    mem_source(&m, data, len, 0, &src);
    rc = sl_bulk_reader_new(&src, NULL, &r, err);
    while (rc == 0) {
        rc = sl_bulk_reader_next_meta(r, &meta, err);
        if (rc <= 0) {
            break;
        }
        json_decref(meta);
        for (;;) {
            rc = sl_bulk_reader_attachment_next(r, &name, &size, err);
            if (rc <= 0) {
                break;
            }
            got = 0;
            do {
                rc = sl_bulk_reader_attachment_read(
                    r, buf, sizeof(buf), &n, err);
                got += n;
            } while (rc == 0 && n > 0);
            if (rc != 0) {
                break;
            }
            assert_int_equal(got, size);
        }
        if (rc < 0) {
            break;
        }
        rc = 0;
    }
    sl_bulk_reader_free(r);
    return rc;
}

/* ------------------------------------------------------------------------
 * A small bulk: 3 records, a few attachments.
 * --------------------------------------------------------------------- */
#define SMALL_N 3

static void
small_records(struct sl_record **recs)
{
    recs[0] = record_from_text("{\"_recordid\":\"a\",\"x\":1}");
    assert_int_equal(sl_record_attachment_set(recs[0], "one", "12345", 5), 0);
    assert_int_equal(sl_record_attachment_set(recs[0], "empty", "", 0), 0);
    recs[1] = record_from_text("{\"_recordid\":\"b\",\"t\":[true,null]}");
    recs[2] = record_from_text("{\"_recordid\":\"c\"}");
    assert_int_equal(sl_record_attachment_set(recs[2], "z", "xyz", 3), 0);
}

static void
small_free(struct sl_record **recs)
{
    size_t i = 0;

    for (i = 0; i < SMALL_N; i++) {
        sl_record_free(recs[i]);
    }
}

/* ------------------------------------------------------------------------
 * Tests.
 * --------------------------------------------------------------------- */
static void
test_bulk_roundtrip_json_types(void **state)
{
    static const char *metas[] = {
        "{\"_recordid\":\"r1\",\"s\":\"h\\u00e9llo \\\"q\\\"\\n\",\"i\":42,"
        "\"big\":9007199254740993,\"neg\":-7,\"r\":1.5,\"e\":-2.5e-300,"
        "\"t\":true,\"f\":false,\"n\":null,\"a\":[1,\"x\",[],{}],"
        "\"o\":{\"k\":{\"z\":[null]}},\"_source\":\"s3\"}",
        "{\"_recordid\":\"\\u4e2d\\u6587 \\ud83d\\ude00\"}",
        "{\"_recordid\":\"r3\",\"_delete\":true,\"empty\":\"\"}",
    };
    struct sl_record *recs[40];
    size_t chunks[] = {0, 1, 7, 4096};
    struct sl_err err;
    struct mem out;
    size_t nread = 0;
    size_t i = 0;
    char id[32];

    (void)state;
    for (i = 0; i < 40; i++) {
        if (i < 3) {
            recs[i] = record_from_text(metas[i]);
        } else {
            (void)snprintf(id, sizeof(id), "rec-%zu", i);
            recs[i] = sl_record_new(id);
            assert_int_equal(json_object_set_new(sl_record_meta(recs[i]),
                                                 "n",
                                                 json_integer((json_int_t)i)),
                             0);
        }
        if (i % 3 == 0) {
            unsigned char b[100];

            fill_random(b, sizeof(b), i + 1);
            assert_int_equal(
                sl_record_attachment_set(recs[i], "data.bin", b, i), 0);
            assert_int_equal(
                sl_record_attachment_set(recs[i], "n\xc3\xa4me", "v", 1), 0);
        }
    }
    write_records(recs, 40, &out);
    for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
        assert_int_equal(
            read_all(out.data, out.len, chunks[i], NULL, recs, &nread, &err),
            0);
        assert_int_equal(nread, 40);
    }
    assert_int_equal(stream_all(out.data, out.len, &err), 0);
    for (i = 0; i < 40; i++) {
        sl_record_free(recs[i]);
    }
    sl_free(out.data);
}

static void
test_bulk_layout_bytes(void **state)
{
    /* One record {"_recordid":"a"} with attachment "n" = "xy". */
    static const unsigned char meta[] = "{\"_recordid\":\"a\"}";
    unsigned char want[128];
    struct sl_record *rec = sl_record_new("a");
    struct mem out;
    size_t p = 0;
    size_t rec_start = 0;
    uLong crc = 0;

    (void)state;
    assert_int_equal(sl_record_attachment_set(rec, "n", "xy", 2), 0);
    write_records(&rec, 1, &out);

    memcpy(want, "SLBK\x01\x01\x01\x00", 8);
    p = 8;
    rec_start = p;
    memcpy(want + p, "SLRC", 4);
    p += 4;
    want[p++] = (unsigned char)(sizeof(meta) - 1);
    want[p++] = 0;
    want[p++] = 0;
    want[p++] = 0;
    memcpy(want + p, meta, sizeof(meta) - 1);
    p += sizeof(meta) - 1;
    /* the head: 10 bytes, no flags, _recordid "a", three absent fields */
    memcpy(want + p,
           "H\x0a\x00\x00\x01\x00"
           "a\xff\xff\xff\xff\xff\xff",
           13);
    p += 13;
    want[p++] = 'A';
    want[p++] = 1;
    want[p++] = 0;
    want[p++] = 'n';
    want[p++] = 2;
    memset(want + p, 0, 7);
    p += 7;
    want[p++] = 'x';
    want[p++] = 'y';
    want[p++] = 'E';
    crc = crc32(0, want + rec_start, (uInt)(p - rec_start));
    want[p++] = (unsigned char)(crc & 0xff);
    want[p++] = (unsigned char)((crc >> 8) & 0xff);
    want[p++] = (unsigned char)((crc >> 16) & 0xff);
    want[p++] = (unsigned char)((crc >> 24) & 0xff);
    memcpy(want + p, "SLND\x01\x00\x00\x00\x00\x00\x00\x00", 12);
    crc = crc32(0, want + p, 12);
    p += 12;
    want[p++] = (unsigned char)(crc & 0xff);
    want[p++] = (unsigned char)((crc >> 8) & 0xff);
    want[p++] = (unsigned char)((crc >> 16) & 0xff);
    want[p++] = (unsigned char)((crc >> 24) & 0xff);

    assert_int_equal(out.len, p);
    assert_memory_equal(out.data, want, p);
    sl_record_free(rec);
    sl_free(out.data);
}

static int copy_all(const unsigned char *data,
                    size_t len,
                    size_t chunk,
                    int raw,
                    unsigned skip_mask,
                    struct mem *out,
                    struct sl_err *err);

/* Build a bulk of one record: header (minor @minor; with 1 or more,
 * SL_BULK_FLAG_HEADS), "SLRC", @meta, the
 * @hlen bytes of @frames after it (a head frame, attachments), 'E', the
 * right checksum, the trailer.  Returns its length in @out (256 bytes). */
static size_t
one_record(unsigned char *out,
           unsigned minor,
           const char *meta,
           const void *frames,
           size_t hlen)
{
    size_t mlen = strlen(meta);
    size_t p = 0;
    size_t rec = 0;
    uLong crc = 0;

    assert_true(8 + 8 + mlen + hlen + 5 + 16 <= 256);
    memcpy(out, "SLBK\x01\x00\x00\x00", 8);
    out[5] = (unsigned char)minor;
    out[6] = minor >= 1 ? SL_BULK_FLAG_HEADS : 0;
    p = rec = 8;
    memcpy(out + p, "SLRC", 4);
    sl_le_put32(out + p + 4, (uint32_t)mlen);
    p += 8;
    memcpy(out + p, meta, mlen);
    p += mlen;
    memcpy(out + p, frames, hlen);
    p += hlen;
    out[p++] = 'E';
    crc = crc32(0, out + rec, (uInt)(p - rec));
    sl_le_put32(out + p, (uint32_t)crc);
    p += 4;
    memcpy(out + p, "SLND\x01\x00\x00\x00\x00\x00\x00\x00", 12);
    sl_le_put32(out + p + 12, (uint32_t)crc32(0, out + p, 12));
    return p + 16;
}

/* Read the bulk @data (@len bytes) with next_raw: the first record's head
 * into *head (a copy, or NULL when it has none), and the result of
 * reading on to the end. */
static int
head_of_first(const unsigned char *data,
              size_t len,
              struct sl_record_head **head,
              struct sl_err *err)
{
    struct sl_bulk_reader *r = NULL;
    const struct sl_record_head *h = NULL;
    struct sl_source src;
    struct mem m;
    const char *text = NULL;
    size_t tlen = 0;
    int rc = 0;

    *head = NULL;
    sl_err_clear(err);
    mem_source(&m, data, len, 0, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, err), 0);
    rc = sl_bulk_reader_next_raw(r, &text, &tlen, err);
    if (rc == 1 && sl_bulk_reader_head(r, &h)) {
        *head = sl_record_head_dup(h);
    }
    while (rc == 1) {
        rc = sl_bulk_reader_next_raw(r, &text, &tlen, err);
    }
    sl_bulk_reader_free(r);
    return rc;
}

/*
 * Heads: the writer stores _recordid, _source, _deltaHash and
 * _compoundRecordId with the _isCompound, _version and _visited flags, or
 * no head when a field is not a plain string; readers give it back (and
 * nothing for a record without one, as in a bulk of version 1.0); a copy
 * keeps it byte for byte; record_begin_text stores the head it is given.
 */
static void
test_bulk_head(void **state)
{
    static const char *const metas[] = {
        "{\"_recordid\":\"r1\",\"_source\":\"s\",\"_deltaHash\":\"h\","
        "\"_compoundRecordId\":\"c\",\"_isCompound\":true,\"_version\":3,"
        "\"_visited\":true,\"x\":1}",
        "{\"_recordid\":\"r2\",\"_isCompound\":false,\"_deltaHash\":\"\"}",
        "{\"_recordid\":\"r3\",\"_source\":5}",
        "{\"_recordid\":\"r4\",\"_compoundRecordId\":[\"x\"]}",
    };
    struct sl_record_head given = {"t", "src", NULL, NULL, SL_HEAD_VERSION};
    static const char text[] =
        "{\"_recordid\":\"t\",\"_source\":\"src\",\"_version\":1}";
    struct sl_bulk_writer *w = NULL;
    struct sl_bulk_reader *r = NULL;
    const struct sl_record_head *h = NULL;
    struct sl_record_head *copy = NULL;
    struct sl_source src;
    struct sl_sink sink;
    struct sl_err err;
    struct mem out;
    struct mem m;
    json_t *meta = NULL;
    const char *raw = NULL;
    size_t rlen = 0;
    unsigned char old[256];
    size_t olen = 0;
    size_t i = 0;

    (void)state;
    mem_init(&out);
    mem_sink(&out, &sink);
    assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
    for (i = 0; i < 4; i++) {
        meta = meta_parse(metas[i]);
        assert_int_equal(sl_bulk_writer_record_begin(w, meta), 0);
        if (i == 0) {
            assert_int_equal(sl_bulk_writer_attachment_begin(w, "a", 2), 0);
            assert_int_equal(sl_bulk_writer_attachment_write(w, "xy", 2), 0);
        }
        assert_int_equal(sl_bulk_writer_record_end(w), 0);
        json_decref(meta);
    }
    assert_int_equal(
        sl_bulk_writer_record_begin_text(w, text, strlen(text), &given), 0);
    assert_int_equal(sl_bulk_writer_record_end(w), 0);
    assert_int_equal(sl_bulk_writer_finish(w), 0);
    sl_bulk_writer_free(w);

    mem_source(&m, out.data, out.len, 3, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);
    assert_int_equal(sl_bulk_reader_head(r, &h), 0); /* no record yet */
    assert_int_equal(sl_bulk_reader_next_raw(r, &raw, &rlen, &err), 1);
    assert_int_equal(sl_bulk_reader_head(r, &h), 1);
    copy = sl_record_head_dup(h);
    assert_string_equal(h->id, "r1");
    assert_string_equal(h->source, "s");
    assert_string_equal(h->delta_hash, "h");
    assert_string_equal(h->compound_id, "c");
    assert_int_equal(h->flags,
                     SL_HEAD_COMPOUND | SL_HEAD_VERSION | SL_HEAD_VISITED);
    assert_int_equal(sl_bulk_reader_next_meta(r, &meta, &err), 1);
    json_decref(meta);
    assert_int_equal(sl_bulk_reader_head(r, &h), 1);
    assert_string_equal(h->id, "r2");
    assert_null(h->source);
    assert_string_equal(h->delta_hash, "");
    assert_null(h->compound_id);
    assert_int_equal(h->flags, 0);
    assert_int_equal(sl_bulk_reader_next_raw(r, &raw, &rlen, &err), 1);
    assert_int_equal(sl_bulk_reader_head(r, &h), 0); /* _source: 5 */
    assert_null(h);
    assert_int_equal(sl_bulk_reader_next_raw(r, &raw, &rlen, &err), 1);
    assert_int_equal(sl_bulk_reader_head(r, &h), 0); /* not a string */
    assert_int_equal(sl_bulk_reader_next_raw(r, &raw, &rlen, &err), 1);
    assert_int_equal(rlen, strlen(text));
    assert_memory_equal(raw, text, rlen);
    assert_int_equal(sl_bulk_reader_head(r, &h), 1);
    assert_string_equal(h->id, "t");
    assert_string_equal(h->source, "src");
    assert_null(h->delta_hash);
    assert_int_equal(h->flags, SL_HEAD_VERSION);
    assert_int_equal(sl_bulk_reader_next_raw(r, &raw, &rlen, &err), 0);
    assert_int_equal(sl_bulk_reader_head(r, &h), 0);
    sl_bulk_reader_free(r);
    /* the copy outlives the reader */
    assert_string_equal(copy->id, "r1");
    assert_string_equal(copy->compound_id, "c");
    assert_int_equal(copy->flags,
                     SL_HEAD_COMPOUND | SL_HEAD_VERSION | SL_HEAD_VISITED);
    sl_free(copy);

    /* a copied record keeps its head: the bytes are the same */
    for (i = 0; i < 3; i++) {
        struct mem cp;

        assert_int_equal(copy_all(out.data, out.len, 0, (int)i, 0, &cp, &err),
                         0);
        assert_int_equal(cp.len, out.len);
        assert_memory_equal(cp.data, out.data, out.len);
        sl_free(cp.data);
    }
    sl_free(out.data);

    /* a record of a version 1.0 bulk, without a head, reads as before */
    olen = one_record(old, 0, "{\"_recordid\":\"o\"}", "", 0);
    assert_int_equal(head_of_first(old, olen, &copy, &err), 0);
    assert_null(copy);
    /* a head frame in a 1.0 header (a bulkbuilder journal begun by 1.0
     * and continued by 1.1) is read past, not offered: no flag */
    olen = one_record(old,
                      0,
                      "{\"_recordid\":\"o\"}",
                      "H\x0a\x00\x00\x01\x00"
                      "o\xff\xff\xff\xff\xff\xff",
                      13);
    assert_int_equal(head_of_first(old, olen, &copy, &err), 0);
    assert_null(copy);
    /* begin_text refuses a head without an id */
    mem_init(&out);
    mem_sink(&out, &sink);
    assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
    given.id = "";
    assert_int_equal(
        sl_bulk_writer_record_begin_text(w, text, strlen(text), &given),
        SL_EINVAL);
    sl_bulk_writer_free(w);
    sl_free(out.data);
}

/* A head frame that lies: each is refused as corrupt, naming the head,
 * although the record's checksum is right. */
static void
test_bulk_head_corrupt(void **state)
{
    static const struct {
        const char *frame;
        size_t len;
        const char *why;
    } cases[] = {
        /* body of 8 bytes: shorter than flags and four lengths */
        {"H\x08\x00\x00\x01\x00"
         "a\xff\xff\xff\xff\xff",
         12,
         "too short"},
        {"H\x0a\x00\x80\x01\x00"
         "a\xff\xff\xff\xff\xff\xff",
         13,
         "flags"},
        /* no _recordid, an empty one */
        {"H\x09\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff", 12, "bad head"},
        {"H\x09\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff", 12, "bad head"},
        /* a NUL byte in _source */
        {"H\x0c\x00\x00\x01\x00"
         "a\x02\x00s\x00\xff\xff\xff\xff",
         15,
         "head field 1"},
        /* a field longer than the body, a body longer than its fields */
        {"H\x0a\x00\x00\x20\x00"
         "a\xff\xff\xff\xff\xff\xff",
         13,
         "head field 0"},
        {"H\x0b\x00\x00\x01\x00"
         "a\xff\xff\xff\xff\xff\xffz",
         14,
         "bad head"},
        /* fields cut short by the body length */
        {"H\x09\x00\x00\x01\x00"
         "a\xff\xff\xff\xff\xff",
         12,
         "cut short"},
    };
    struct sl_record_head *head = NULL;
    struct sl_err err;
    unsigned char b[256];
    size_t len = 0;
    size_t i = 0;

    (void)state;
    /* the well-formed frame reads */
    len = one_record(b,
                     1,
                     "{\"_recordid\":\"a\"}",
                     "H\x0a\x00\x00\x01\x00"
                     "a\xff\xff\xff\xff\xff\xff",
                     13);
    assert_int_equal(head_of_first(b, len, &head, &err), 0);
    assert_non_null(head);
    assert_string_equal(head->id, "a");
    sl_free(head);
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        len = one_record(
            b, 1, "{\"_recordid\":\"a\"}", cases[i].frame, cases[i].len);
        assert_int_equal(head_of_first(b, len, &head, &err), SL_ECORRUPT);
        assert_null(head);
        if (strstr(err.message, cases[i].why) == NULL) {
            fail_msg("case %zu: %s", i, err.message);
        }
    }
}

/* Count the records of @data whose head a reader offers. */
static size_t
heads_offered(const unsigned char *data, size_t len)
{
    struct sl_bulk_reader *r = NULL;
    const struct sl_record_head *h = NULL;
    struct sl_source src;
    struct sl_err err;
    struct mem m;
    const char *text = NULL;
    size_t tlen = 0;
    size_t n = 0;

    mem_source(&m, data, len, 0, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);
    while (sl_bulk_reader_next_raw(r, &text, &tlen, &err) == 1) {
        n += (size_t)sl_bulk_reader_head(r, &h);
    }
    assert_true(sl_bulk_reader_at_end(r));
    sl_bulk_reader_free(r);
    return n;
}

/*
 * Heads are offered only from bulks with SL_BULK_FLAG_HEADS, which
 * sl_bulk_distrust clears (the store's REST upload does): the records read
 * the same, and a copy into a bulk of this engine leaves their head
 * frames behind (with a checksum of its own), so a head from outside
 * never becomes trusted.
 */
static void
test_bulk_head_distrust(void **state)
{
    struct sl_record *recs[SMALL_N];
    unsigned char other[8] = {'S', 'L', 'B', 'X', 1, 1, 1, 0};
    struct sl_err err;
    struct mem in;
    struct mem cp;
    size_t nread = 0;
    int raw = 0;

    (void)state;
    small_records(recs);
    write_records(recs, SMALL_N, &in);
    assert_int_equal(in.data[6], SL_BULK_FLAG_HEADS);
    assert_int_equal(heads_offered(in.data, in.len), SMALL_N);
    sl_bulk_distrust(in.data);
    assert_int_equal(in.data[6], 0);
    assert_int_equal(heads_offered(in.data, in.len), 0);
    assert_int_equal(read_all(in.data, in.len, 0, NULL, recs, &nread, &err), 0);
    assert_int_equal(nread, SMALL_N);
    for (raw = 0; raw <= 1; raw++) {
        /* 13 bytes of head frame per record ("a", "b", "c") left behind */
        assert_int_equal(copy_all(in.data, in.len, 7, raw, 0, &cp, &err), 0);
        assert_int_equal(cp.len, in.len - SMALL_N * 13);
        assert_int_equal(cp.data[6], SL_BULK_FLAG_HEADS);
        assert_int_equal(heads_offered(cp.data, cp.len), 0);
        assert_int_equal(read_all(cp.data, cp.len, 0, NULL, recs, &nread, &err),
                         0);
        assert_int_equal(nread, SMALL_N);
        sl_free(cp.data);
    }
    /* not a bulk: left alone */
    sl_bulk_distrust(other);
    assert_int_equal(other[6], 1);
    small_free(recs);
    sl_free(in.data);
}

static void
test_bulk_empty(void **state)
{
    struct sl_err err;
    struct mem out;
    size_t nread = 0;

    (void)state;
    write_records(NULL, 0, &out);
    assert_int_equal(out.len, 24);
    assert_memory_equal(out.data, "SLBK\x01\x01\x01\x00SLND", 12);
    assert_int_equal(read_all(out.data, out.len, 0, NULL, NULL, &nread, &err),
                     0);
    assert_int_equal(nread, 0);
    assert_int_equal(stream_all(out.data, out.len, &err), 0);
    sl_free(out.data);
}

static void
test_bulk_large_attachments(void **state)
{
    const size_t big = (size_t)5 << 20;
    unsigned char *data = sl_malloc(big);
    unsigned char *back = sl_malloc(big);
    struct sl_record *recs[2];
    struct sl_bulk_reader *r = NULL;
    struct sl_source src;
    struct sl_err err;
    struct mem out;
    struct mem m;
    json_t *meta = NULL;
    const char *name = NULL;
    uint64_t size = 0;
    size_t nread = 0;
    size_t have = 0;
    size_t n = 0;

    (void)state;
    fill_random(data, big, 12345);
    recs[0] = sl_record_new("big");
    assert_int_equal(sl_record_attachment_set(recs[0], "zero", "", 0), 0);
    assert_int_equal(sl_record_attachment_set(recs[0], "big", data, big), 0);
    assert_int_equal(sl_record_attachment_set(recs[0], "tail", "t", 1), 0);
    recs[1] = sl_record_new("after");
    write_records(recs, 2, &out);
    assert_int_equal(read_all(out.data, out.len, 0, NULL, recs, &nread, &err),
                     0);
    assert_int_equal(nread, 2);

    /* Streaming, in odd-sized pieces from a source giving odd chunks. */
    mem_source(&m, out.data, out.len, 65521, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);
    assert_int_equal(sl_bulk_reader_next_meta(r, &meta, &err), 1);
    assert_string_equal(json_string_value(json_object_get(meta, "_recordid")),
                        "big");
    json_decref(meta);
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 1);
    assert_string_equal(name, "zero");
    assert_int_equal(size, 0);
    assert_int_equal(sl_bulk_reader_attachment_read(r, back, 10, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 1);
    assert_string_equal(name, "big");
    assert_int_equal(size, big);
    while (have < big) {
        size_t want = big - have < 10007 ? big - have : 10007;

        assert_int_equal(
            sl_bulk_reader_attachment_read(r, back + have, want, &n, &err), 0);
        assert_true(n > 0);
        have += n;
    }
    assert_int_equal(sl_bulk_reader_attachment_read(r, back, 10, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_memory_equal(back, data, big);
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 1);
    assert_string_equal(name, "tail");
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 0);
    /* skipping after the record's end: nothing left, not an error */
    n = 9;
    assert_int_equal(sl_bulk_reader_skip_attachments(r, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(sl_bulk_reader_next_meta(r, &meta, &err), 1);
    json_decref(meta);
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 0);
    assert_int_equal(sl_bulk_reader_next_meta(r, &meta, &err), 0);
    assert_null(meta);
    sl_bulk_reader_free(r);

    sl_record_free(recs[0]);
    sl_record_free(recs[1]);
    sl_free(out.data);
    sl_free(data);
    sl_free(back);
}

/*
 * Write 4 records with the streaming writer: "a" = @data in pieces of 7777
 * bytes, "b" = "bcd" in two pieces, "c" empty.
 */
static void
write_streamed(const unsigned char *data, size_t len, struct mem *out)
{
    struct sl_bulk_writer *w = NULL;
    struct sl_sink sink;
    json_t *meta = NULL;
    size_t off = 0;
    size_t n = 0;
    int i = 0;

    mem_init(out);
    mem_sink(out, &sink);
    assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
    for (i = 0; i < 4; i++) {
        char id[16];

        (void)snprintf(id, sizeof(id), "s%d", i);
        meta = json_pack("{s:s, s:i}", "_recordid", id, "i", i);
        assert_int_equal(sl_bulk_writer_record_begin(w, meta), 0);
        json_decref(meta);
        assert_int_equal(sl_bulk_writer_attachment_begin(w, "a", len), 0);
        for (off = 0; off < len; off += n) {
            n = len - off < 7777 ? len - off : 7777;
            assert_int_equal(sl_bulk_writer_attachment_write(w, data + off, n),
                             0);
        }
        assert_int_equal(sl_bulk_writer_attachment_begin(w, "b", 3), 0);
        assert_int_equal(sl_bulk_writer_attachment_write(w, "b", 1), 0);
        assert_int_equal(sl_bulk_writer_attachment_write(w, "cd", 2), 0);
        assert_int_equal(sl_bulk_writer_attachment_begin(w, "c", 0), 0);
        assert_int_equal(sl_bulk_writer_record_end(w), 0);
    }
    assert_int_equal(sl_bulk_writer_finish(w), 0);
    assert_int_equal(sl_bulk_writer_bytes(w), out->len);
    sl_bulk_writer_free(w);
}

static void
test_bulk_streaming_roundtrip(void **state)
{
    struct sl_bulk_reader *r = NULL;
    unsigned char data[300000];
    unsigned char back[300000];
    struct sl_source src;
    struct sl_record *rec = NULL;
    struct sl_err err;
    struct mem out;
    struct mem m;
    json_t *meta = NULL;
    const char *name = NULL;
    uint64_t size = 0;
    size_t off = 0;
    size_t n = 0;

    (void)state;
    fill_random(data, sizeof(data), 99);
    write_streamed(data, sizeof(data), &out);

    mem_source(&m, out.data, out.len, 1000, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);

    /* Record 0: read "a" whole, "b" partly, leave "c" alone. */
    assert_int_equal(sl_bulk_reader_next_meta(r, &meta, &err), 1);
    assert_int_equal(json_integer_value(json_object_get(meta, "i")), 0);
    json_decref(meta);
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 1);
    assert_string_equal(name, "a");
    for (off = 0; off < sizeof(back); off += n) {
        assert_int_equal(sl_bulk_reader_attachment_read(
                             r, back + off, sizeof(back) - off, &n, &err),
                         0);
        assert_true(n > 0);
    }
    assert_memory_equal(back, data, sizeof(data));
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 1);
    assert_string_equal(name, "b");
    assert_int_equal(size, 3);
    assert_int_equal(sl_bulk_reader_attachment_read(r, back, 1, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(back[0], 'b');
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 1);
    assert_string_equal(name, "c");
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 0);

    /* Record 1: "a" partly read, then straight to the next record. */
    assert_int_equal(sl_bulk_reader_next_meta(r, &meta, &err), 1);
    json_decref(meta);
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 1);
    assert_int_equal(sl_bulk_reader_attachment_read(r, back, 5000, &n, &err),
                     0);
    assert_true(n > 0 && n <= 5000);
    assert_memory_equal(back, data, n);

    /* Record 2: no attachment_next at all; record 3 via reader_next. */
    assert_int_equal(sl_bulk_reader_next_meta(r, &meta, &err), 1);
    assert_int_equal(json_integer_value(json_object_get(meta, "i")), 2);
    json_decref(meta);
    assert_int_equal(sl_bulk_reader_next(r, &rec, &err), 1);
    assert_string_equal(sl_record_id(rec), "s3");
    assert_int_equal(sl_record_attachment_count(rec), 3);
    sl_record_free(rec);
    assert_int_equal(sl_bulk_reader_next_meta(r, &meta, &err), 0);
    assert_int_equal(sl_bulk_reader_offset(r), out.len);
    sl_bulk_reader_free(r);
    sl_free(out.data);
}

static void
test_bulk_truncated_everywhere(void **state)
{
    struct sl_record *recs[SMALL_N];
    struct sl_err err;
    struct mem out;
    size_t nread = 0;
    size_t len = 0;
    int rc = 0;

    (void)state;
    small_records(recs);
    write_records(recs, SMALL_N, &out);
    for (len = 0; len < out.len; len++) {
        sl_err_clear(&err);
        rc = read_all(out.data, len, 0, NULL, recs, &nread, &err);
        assert_true(rc == SL_ETRUNCATED || rc == SL_ECORRUPT);
        assert_int_equal(err.code, rc);
        assert_non_null(strstr(err.message, "offset"));
        assert_int_equal(strncmp(err.field, "offset ", 7), 0);
        rc = read_all(out.data, len, 3, NULL, recs, &nread, &err);
        assert_true(rc == SL_ETRUNCATED || rc == SL_ECORRUPT);
        rc = stream_all(out.data, len, &err);
        assert_true(rc == SL_ETRUNCATED || rc == SL_ECORRUPT);
    }
    /* A cut exactly at a record boundary is still an error. */
    rc = read_all(out.data, out.len - 16, 0, NULL, recs, &nread, &err);
    assert_int_equal(rc, SL_ETRUNCATED);
    assert_int_equal(nread, SMALL_N);
    assert_non_null(strstr(err.message, "trailer"));
    small_free(recs);
    sl_free(out.data);
}

static void
test_bulk_flip_every_byte(void **state)
{
    static const unsigned char masks[] = {0x01, 0x80, 0xff};
    struct sl_record *recs[SMALL_N];
    struct sl_err err;
    struct mem out;
    size_t nread = 0;
    size_t i = 0;
    size_t k = 0;
    int rc = 0;

    (void)state;
    small_records(recs);
    write_records(recs, SMALL_N, &out);
    for (i = 0; i < out.len; i++) {
        for (k = 0; k < sizeof(masks); k++) {
            out.data[i] ^= masks[k];
            /* read_all compares every record it returns with the input. */
            rc = read_all(out.data, out.len, 0, NULL, recs, &nread, &err);
            if (i == 5 || (i == 6 && masks[k] == 0x01)) {
                /* The minor version: a higher one is accepted.  The flag
                 * SL_BULK_FLAG_HEADS off: the records read the same (their
                 * heads are not offered). */
                assert_int_equal(rc, 0);
                assert_int_equal(nread, SMALL_N);
            } else {
                assert_true(rc == SL_ECORRUPT || rc == SL_ETRUNCATED ||
                            rc == SL_ETOOLARGE);
                assert_non_null(strstr(err.message, "offset"));
                rc = stream_all(out.data, out.len, &err);
                assert_true(rc < 0);
            }
            out.data[i] ^= masks[k];
        }
    }
    small_free(recs);
    sl_free(out.data);
}

/*
 * Copy every record of the bulk @data with sl_bulk_copy_record into a new
 * bulk (@raw 1: opened with next_raw, 0: next_meta, 2: next_meta and
 * attachment_next; records whose index is in @skip_mask are skipped), from a
 * source giving @chunk bytes at a time.  Returns 0 or the first error; *out
 * holds what was written.
 */
static int
copy_all(const unsigned char *data,
         size_t len,
         size_t chunk,
         int raw,
         unsigned skip_mask,
         struct mem *out,
         struct sl_err *err)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_bulk_writer *w = NULL;
    struct sl_source src;
    struct sl_sink sink;
    struct mem m;
    size_t i = 0;
    int rc = 0;

    mem_init(out);
    mem_sink(out, &sink);
    assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
    mem_source(&m, data, len, chunk, &src);
    rc = sl_bulk_reader_new(&src, NULL, &r, err);
    for (i = 0; rc == 0; i++) {
        json_t *meta = NULL;
        const char *text = NULL;
        size_t tlen = 0;

        rc = raw == 1 ? sl_bulk_reader_next_raw(r, &text, &tlen, err)
                      : sl_bulk_reader_next_meta(r, &meta, err);
        if (rc <= 0) {
            break;
        }
        if (raw == 1) {
            /* the stored text: valid JSON with the record's id */
            json_t *j = json_loadb(text, tlen, 0, NULL);

            assert_non_null(json_object_get(j, "_recordid"));
            json_decref(j);
        }
        if (raw == 2) {
            /* the first attachment's frame looked at, as the webFetcher
             * does; a record without attachments is written anew */
            const char *name = NULL;
            uint64_t size = 0;

            rc = sl_bulk_reader_attachment_next(r, &name, &size, err);
            if (rc == 0) {
                assert_int_equal(sl_bulk_writer_record_begin(w, meta), 0);
                assert_int_equal(sl_bulk_writer_record_end(w), 0);
                json_decref(meta);
                continue;
            }
        }
        json_decref(meta);
        if (rc < 0) {
            break;
        }
        rc = (skip_mask >> i) & 1
                 ? sl_bulk_reader_skip_attachments(r, NULL, err)
                 : sl_bulk_copy_record(r, w, err);
    }
    if (rc == 0) {
        rc = sl_bulk_writer_finish(w);
    } else {
        /* a failed copy leaves the writer failed: no bulk can be finished */
        assert_int_equal(sl_bulk_writer_finish(w), SL_EBADSTATE);
    }
    sl_bulk_reader_free(r);
    sl_bulk_writer_free(w);
    return rc;
}

/*
 * sl_bulk_copy_record: the copy of a bulk is byte for byte the bulk (small
 * records, empty attachments, a 5 MiB attachment, odd source chunks, after
 * next_meta or next_raw); skipped records are left out and the copy reads
 * back; a corrupt source fails the copy and its writer; a record whose
 * attachments were started cannot be copied.
 */
static void
test_bulk_copy_record(void **state)
{
    const size_t big = (size_t)5 << 20;
    unsigned char *data = sl_malloc(big);
    struct sl_record *recs[SMALL_N + 1];
    struct sl_record *kept[2];
    struct sl_bulk_reader *r = NULL;
    struct sl_bulk_writer *w = NULL;
    struct sl_source src;
    struct sl_sink sink;
    struct sl_err err;
    struct mem in;
    struct mem out;
    struct mem m;
    json_t *meta = NULL;
    const char *name = NULL;
    uint64_t size = 0;
    size_t nread = 0;
    size_t chunks[] = {0, 1, 7, 65521};
    unsigned char buf[4];
    size_t i = 0;
    size_t n = 0;

    (void)state;
    small_records(recs);
    fill_random(data, big, 99);
    recs[SMALL_N] = sl_record_new("big");
    assert_int_equal(sl_record_attachment_set(recs[SMALL_N], "big", data, big),
                     0);
    write_records(recs, SMALL_N + 1, &in);
    for (i = 0; i < 3 * sizeof(chunks) / sizeof(chunks[0]); i++) {
        assert_int_equal(
            copy_all(
                in.data, in.len, chunks[i / 3], (int)(i % 3), 0, &out, &err),
            0);
        assert_int_equal(out.len, in.len);
        assert_memory_equal(out.data, in.data, in.len);
        sl_free(out.data);
    }
    /* records 0 and 2 skipped: the copy holds b and big, and reads back */
    assert_int_equal(copy_all(in.data, in.len, 0, 1, 5u, &out, &err), 0);
    kept[0] = recs[1];
    kept[1] = recs[SMALL_N];
    assert_int_equal(read_all(out.data, out.len, 0, NULL, kept, &nread, &err),
                     0);
    assert_int_equal(nread, 2);
    sl_free(out.data);

    /* a flipped byte in the big attachment: the checksum fails the copy */
    in.data[in.len - 1000] ^= 0x10;
    assert_int_equal(copy_all(in.data, in.len, 0, 1, 0, &out, &err),
                     SL_ECORRUPT);
    assert_non_null(strstr(err.message, "checksum"));
    sl_free(out.data);
    in.data[in.len - 1000] ^= 0x10;

    /* a record whose attachment data was read cannot be copied */
    mem_init(&out);
    mem_sink(&out, &sink);
    assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
    mem_source(&m, in.data, in.len, 0, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);
    assert_int_equal(sl_bulk_reader_next_meta(r, &meta, &err), 1);
    json_decref(meta);
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err), 1);
    assert_int_equal(sl_bulk_reader_attachment_read(r, buf, 1, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(sl_bulk_copy_record(r, w, &err), SL_EINVAL);
    sl_bulk_reader_free(r);
    sl_bulk_writer_free(w);
    sl_free(out.data);

    for (i = 0; i <= SMALL_N; i++) {
        sl_record_free(recs[i]);
    }
    sl_free(in.data);
    sl_free(data);
}

static void
test_bulk_checksum_message(void **state)
{
    struct sl_record *recs[SMALL_N];
    struct sl_err err;
    struct mem out;
    size_t nread = 0;
    size_t pos = 0;
    char want[64];
    unsigned char *p = NULL;
    int rc = 0;

    (void)state;
    small_records(recs);
    write_records(recs, SMALL_N, &out);
    /* Flip a byte inside the JSON text of record 2 ("t":[true,null]). */
    p = memmem(out.data, out.len, "true", 4);
    assert_non_null(p);
    pos = (size_t)(p - out.data);
    p[0] = 'T';
    rc = read_all(out.data, out.len, 0, NULL, recs, &nread, &err);
    assert_int_equal(rc, SL_ECORRUPT);
    assert_int_equal(nread, 1);
    p = memmem(out.data, out.len, "SLRC", 4);
    p = memmem(p + 4, out.len - (size_t)(p + 4 - out.data), "SLRC", 4);
    assert_true(p != NULL && (size_t)(p - out.data) < pos);
    (void)snprintf(
        want, sizeof(want), "record 2 at offset %zu: ", (size_t)(p - out.data));
    assert_int_equal(strncmp(err.message, want, strlen(want)), 0);
    assert_non_null(strstr(err.message, "not valid JSON"));

    /* Valid JSON with a changed value ("x":1 -> "x":2): checksum error. */
    out.data[pos] = 't';
    p = memmem(out.data, out.len, "\"x\":1", 5);
    assert_non_null(p);
    p[4] = '2';
    rc = read_all(out.data, out.len, 0, NULL, recs, &nread, &err);
    assert_int_equal(rc, SL_ECORRUPT);
    assert_int_equal(nread, 0);
    assert_int_equal(strncmp(err.message, "record 1 at offset 8: ", 22), 0);
    assert_non_null(strstr(err.message, "checksum mismatch"));
    assert_string_equal(err.field, "offset 8");
    small_free(recs);
    sl_free(out.data);
}

/* Append a record frame with a correct CRC, from raw parts. */
static void
raw_record(struct mem *m,
           const char *meta,
           const char *const *names,
           const char *const *datas,
           size_t natts)
{
    unsigned char b[8];
    size_t start = m->len;
    size_t i = 0;
    size_t j = 0;
    uLong crc = 0;

    assert_int_equal(mem_write(m, "SLRC", 4), 0);
    for (j = 0; j < 4; j++) {
        b[j] = (unsigned char)(strlen(meta) >> (8 * j));
    }
    assert_int_equal(mem_write(m, b, 4), 0);
    assert_int_equal(mem_write(m, meta, strlen(meta)), 0);
    for (i = 0; i < natts; i++) {
        b[0] = 'A';
        b[1] = (unsigned char)strlen(names[i]);
        b[2] = 0;
        assert_int_equal(mem_write(m, b, 3), 0);
        assert_int_equal(mem_write(m, names[i], strlen(names[i])), 0);
        memset(b, 0, 8);
        b[0] = (unsigned char)strlen(datas[i]);
        assert_int_equal(mem_write(m, b, 8), 0);
        assert_int_equal(mem_write(m, datas[i], strlen(datas[i])), 0);
    }
    assert_int_equal(mem_write(m, "E", 1), 0);
    crc = crc32(0, m->data + start, (uInt)(m->len - start));
    for (j = 0; j < 4; j++) {
        b[j] = (unsigned char)(crc >> (8 * j));
    }
    assert_int_equal(mem_write(m, b, 4), 0);
}

static void
raw_trailer(struct mem *m, uint64_t count)
{
    unsigned char t[16];
    uLong crc = 0;
    int j = 0;

    t[0] = 'S';
    t[1] = 'L';
    t[2] = 'N';
    t[3] = 'D';
    for (j = 0; j < 8; j++) {
        t[4 + j] = (unsigned char)(count >> (8 * j));
    }
    crc = crc32(0, t, 12);
    for (j = 0; j < 4; j++) {
        t[12 + j] = (unsigned char)(crc >> (8 * j));
    }
    assert_int_equal(mem_write(m, t, 16), 0);
}

static void
test_bulk_raw_frames(void **state)
{
    static const struct {
        const char *meta;
        const char *names[2];
        const char *datas[2];
        size_t natts;
        uint64_t count;
        int want;
        const char *msg;
    } cases[] = {
        {"{\"_recordid\":\"r\"}", {"a", "b"}, {"1", "2"}, 2, 1, 1, NULL},
        {"{\"_recordid\":\"r\"}",
         {"a", "a"},
         {"1", "2"},
         2,
         1,
         SL_ECORRUPT,
         "duplicate"},
        {"{\"_recordid\":\"\"}",
         {NULL},
         {NULL},
         0,
         1,
         SL_ECORRUPT,
         "_recordid"},
        {"{\"id\":\"r\"}", {NULL}, {NULL}, 0, 1, SL_ECORRUPT, "_recordid"},
        {"[1]", {NULL}, {NULL}, 0, 1, SL_ECORRUPT, "_recordid"},
        {"{\"_recordid\":\"r\",\"k\":1,\"k\":2}",
         {NULL},
         {NULL},
         0,
         1,
         SL_ECORRUPT,
         "JSON"},
        {"{\"_recordid\":\"r\"}",
         {NULL},
         {NULL},
         0,
         2,
         SL_ECORRUPT,
         "trailer counts"},
        {"{\"_recordid\":\"r\"}", {"a\xff"}, {"1"}, 1, 1, SL_ECORRUPT, "UTF-8"},
    };
    struct sl_bulk_reader *r = NULL;
    struct sl_record *rec = NULL;
    struct sl_source src;
    struct sl_err err;
    struct mem m;
    struct mem in;
    size_t i = 0;
    int rc = 0;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mem_init(&m);
        assert_int_equal(mem_write(&m, "SLBK\x01\x00\x00\x00", 8), 0);
        raw_record(
            &m, cases[i].meta, cases[i].names, cases[i].datas, cases[i].natts);
        raw_trailer(&m, cases[i].count);
        mem_source(&in, m.data, m.len, 0, &src);
        assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);
        rc = sl_bulk_reader_next(r, &rec, &err);
        if (rc == 1) {
            sl_record_free(rec);
            rc = sl_bulk_reader_next(r, &rec, &err);
            rc = rc == 0 ? 1 : rc;
        }
        assert_int_equal(rc, cases[i].want);
        if (cases[i].msg != NULL) {
            assert_non_null(strstr(err.message, cases[i].msg));
        }
        sl_bulk_reader_free(r);
        sl_free(m.data);
    }
}

/*
 * sl_bulk_reader_meta: the metadata of a record read with next_raw, decoded
 * with next_meta's checks (also after its attachments were read); stored
 * metadata that is not JSON, or has no _recordid, fail it and the reader;
 * before any record it is refused.
 */
static void
test_bulk_reader_meta(void **state)
{
    static const char *const metas[] = {
        "{\"_recordid\":\"ok\",\"x\":1}",
        "{\"_recordid\":",
        "{\"x\":1}",
        "{\"_recordid\":\"a\",\"_recordid\":\"b\"}",
    };
    static const char *const names[] = {"a"};
    static const char *const datas[] = {"123"};
    struct sl_bulk_reader *r = NULL;
    struct sl_source src;
    struct sl_err err;
    struct mem m;
    struct mem in;
    json_t *meta = NULL;
    const char *text = NULL;
    const char *name = NULL;
    uint64_t size = 0;
    size_t len = 0;
    size_t i = 0;

    (void)state;
    for (i = 0; i < sizeof(metas) / sizeof(metas[0]); i++) {
        mem_init(&m);
        assert_int_equal(mem_write(&m, "SLBK\x01\x00\x00\x00", 8), 0);
        raw_record(&m, metas[i], names, datas, 1);
        raw_trailer(&m, 1);
        mem_source(&in, m.data, m.len, 0, &src);
        assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);
        assert_int_equal(sl_bulk_reader_meta(r, &meta, &err), SL_EINVAL);
        sl_bulk_reader_free(r);
        mem_source(&in, m.data, m.len, 0, &src);
        assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);
        assert_int_equal(sl_bulk_reader_next_raw(r, &text, &len, &err), 1);
        assert_int_equal(len, strlen(metas[i]));
        assert_memory_equal(text, metas[i], len);
        assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err),
                         1);
        if (i == 0) {
            assert_int_equal(sl_bulk_reader_meta(r, &meta, &err), 0);
            assert_string_equal(
                json_string_value(json_object_get(meta, "_recordid")), "ok");
            assert_int_equal(json_integer_value(json_object_get(meta, "x")), 1);
            json_decref(meta);
            assert_int_equal(
                sl_bulk_reader_attachment_next(r, &name, &size, &err), 0);
            assert_int_equal(sl_bulk_reader_next_raw(r, &text, &len, &err), 0);
        } else {
            assert_int_equal(sl_bulk_reader_meta(r, &meta, &err), SL_ECORRUPT);
            assert_null(meta);
            assert_non_null(strstr(err.message, "record 1 at offset 8"));
            assert_int_equal(sl_bulk_reader_next_raw(r, &text, &len, &err),
                             SL_EBADSTATE);
        }
        sl_bulk_reader_free(r);
        sl_free(m.data);
    }
}

static void
test_bulk_header_checks(void **state)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_source src;
    struct sl_err err;
    struct mem out;
    struct mem in;
    size_t nread = 0;
    int rc = 0;

    (void)state;
    write_records(NULL, 0, &out);
    out.data[0] = 'X';
    rc = read_all(out.data, out.len, 0, NULL, NULL, &nread, &err);
    assert_int_equal(rc, SL_ECORRUPT);
    assert_string_equal(err.field, "offset 0");
    out.data[0] = 'S';
    out.data[4] = 2;
    rc = read_all(out.data, out.len, 0, NULL, NULL, &nread, &err);
    assert_int_equal(rc, SL_ECORRUPT);
    assert_non_null(strstr(err.message, "unsupported bulk version"));
    out.data[4] = 1;
    out.data[7] = 1;
    rc = read_all(out.data, out.len, 0, NULL, NULL, &nread, &err);
    assert_int_equal(rc, SL_ECORRUPT);
    assert_non_null(strstr(err.message, "unsupported bulk version"));
    out.data[7] = 0;
    out.data[5] = 9; /* higher minor version: accepted */
    assert_int_equal(read_all(out.data, out.len, 0, NULL, NULL, &nread, &err),
                     0);
    out.data[5] = 0;

    /* Extra bytes after the trailer. */
    assert_int_equal(mem_write(&out, "x", 1), 0);
    rc = read_all(out.data, out.len, 0, NULL, NULL, &nread, &err);
    assert_int_equal(rc, SL_ECORRUPT);
    assert_non_null(strstr(err.message, "after the trailer"));

    /* A source error is passed through, and the reader then fails. */
    mem_source(&in, out.data, 8, 0, &src);
    in.src_error = 1;
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);
    assert_int_equal(sl_bulk_reader_next(r, &(struct sl_record *){NULL}, &err),
                     SL_EIO);
    assert_non_null(strstr(err.message, "offset 8"));
    sl_bulk_reader_free(r);
    sl_free(out.data);
}

static void
test_bulk_meta_limit(void **state)
{
    struct sl_bulk_limits limits = {.max_meta_bytes = 16};
    struct sl_record *rec = NULL;
    struct sl_err err;
    struct mem out;
    size_t nread = 0;
    int rc = 0;

    (void)state;
    rec = record_from_text("{\"_recordid\":\"a-long-enough-id\"}");
    write_records(&rec, 1, &out);
    rc = read_all(out.data, out.len, 0, &limits, NULL, &nread, &err);
    assert_int_equal(rc, SL_ETOOLARGE);
    assert_string_equal(err.field, "offset 8");
    limits.max_meta_bytes = 64;
    assert_int_equal(
        read_all(out.data, out.len, 0, &limits, NULL, &nread, &err), 0);

    /*
     * meta_len = 0xffffffff on a short stream: rejected by the limit before
     * any allocation or read (not reported as truncation).
     */
    memset(out.data + 12, 0xff, 4);
    rc = read_all(out.data, out.len, 0, NULL, NULL, &nread, &err);
    assert_int_equal(rc, SL_ETOOLARGE);
    assert_non_null(strstr(err.message, "record 1 at offset 8"));
    /* Just under the default limit: truncated, without a 64 MiB block. */
    out.data[12] = 0;
    out.data[13] = 0;
    out.data[14] = 0;
    out.data[15] = 0x03;
    rc = read_all(out.data, out.len, 0, NULL, NULL, &nread, &err);
    assert_int_equal(rc, SL_ETRUNCATED);
    sl_record_free(rec);
    sl_free(out.data);
}

static void
test_bulk_record_limit(void **state)
{
    struct sl_bulk_limits limits = {.max_record_bytes = 500};
    unsigned char data[1000];
    struct sl_record *rec = sl_record_new("r");
    struct sl_err err;
    struct mem out;
    size_t nread = 0;
    int rc = 0;

    (void)state;
    fill_random(data, sizeof(data), 7);
    assert_int_equal(sl_record_attachment_set(rec, "a", data, 400), 0);
    write_records(&rec, 1, &out);
    assert_int_equal(
        read_all(out.data, out.len, 0, &limits, NULL, &nread, &err), 0);
    sl_free(out.data);

    assert_int_equal(sl_record_attachment_set(rec, "b", data, 1000), 0);
    write_records(&rec, 1, &out);
    rc = read_all(out.data, out.len, 0, &limits, NULL, &nread, &err);
    assert_int_equal(rc, SL_ETOOLARGE);
    assert_non_null(strstr(err.message, "limit"));
    /* The streaming API does not load attachments: no record limit. */
    assert_int_equal(stream_all(out.data, out.len, &err), 0);
    sl_record_free(rec);
    sl_free(out.data);
}

/* Steps of the writer misuse table. */
enum wop {
    OP_END_OF_CASE = 0,
    OP_BEGIN,         /* record_begin {"_recordid":"r"} */
    OP_BEGIN_NOID,    /* record_begin {"x":1} */
    OP_BEGIN_EMPTYID, /* record_begin {"_recordid":""} */
    OP_BEGIN_NOTOBJ,  /* record_begin null */
    OP_ATT,           /* attachment_begin name, n */
    OP_ATT_LONGNAME,  /* attachment_begin with an n-byte name */
    OP_WRITE,         /* attachment_write n bytes */
    OP_END,           /* record_end */
    OP_FINISH,        /* finish */
};

struct wstep {
    enum wop op;
    const char *name;
    size_t n;
    int want;
};

static const struct {
    const char *what;
    struct wstep steps[7];
} misuse_cases[] = {
    {"short attachment",
     {{OP_BEGIN, NULL, 0, 0},
      {OP_ATT, "a", 10, 0},
      {OP_WRITE, NULL, 5, 0},
      {OP_END, NULL, 0, SL_EINVAL},
      {OP_END, NULL, 0, SL_EBADSTATE},
      {OP_FINISH, NULL, 0, SL_EBADSTATE}}},
    {"short attachment, next attachment",
     {{OP_BEGIN, NULL, 0, 0},
      {OP_ATT, "a", 2, 0},
      {OP_WRITE, NULL, 1, 0},
      {OP_ATT, "b", 0, SL_EINVAL},
      {OP_BEGIN, NULL, 0, SL_EBADSTATE}}},
    {"long attachment",
     {{OP_BEGIN, NULL, 0, 0},
      {OP_ATT, "a", 3, 0},
      {OP_WRITE, NULL, 5, SL_EINVAL},
      {OP_WRITE, NULL, 1, SL_EBADSTATE}}},
    {"no _recordid",
     {{OP_BEGIN_NOID, NULL, 0, SL_EINVAL}, {OP_BEGIN, NULL, 0, SL_EBADSTATE}}},
    {"empty _recordid", {{OP_BEGIN_EMPTYID, NULL, 0, SL_EINVAL}}},
    {"metadata not an object", {{OP_BEGIN_NOTOBJ, NULL, 0, SL_EINVAL}}},
    {"attachment outside a record", {{OP_ATT, "a", 0, SL_EINVAL}}},
    {"record_end outside a record", {{OP_END, NULL, 0, SL_EINVAL}}},
    {"write outside an attachment", {{OP_WRITE, NULL, 1, SL_EINVAL}}},
    {"write after record_begin",
     {{OP_BEGIN, NULL, 0, 0}, {OP_WRITE, NULL, 1, SL_EINVAL}}},
    {"finish inside a record",
     {{OP_BEGIN, NULL, 0, 0}, {OP_FINISH, NULL, 0, SL_EINVAL}}},
    {"record_begin inside a record",
     {{OP_BEGIN, NULL, 0, 0}, {OP_BEGIN, NULL, 0, SL_EINVAL}}},
    {"duplicate attachment name",
     {{OP_BEGIN, NULL, 0, 0},
      {OP_ATT, "a", 0, 0},
      {OP_ATT, "a", 0, SL_EINVAL}}},
    {"empty attachment name",
     {{OP_BEGIN, NULL, 0, 0}, {OP_ATT, "", 0, SL_EINVAL}}},
    {"name over the limit",
     {{OP_BEGIN, NULL, 0, 0},
      {OP_ATT_LONGNAME, NULL, SL_ATTACHMENT_NAME_MAX + 1, SL_EINVAL}}},
    {"invalid UTF-8 name",
     {{OP_BEGIN, NULL, 0, 0}, {OP_ATT, "a\xff", 0, SL_EINVAL}}},
    {"name at the limit, then finish twice",
     {{OP_BEGIN, NULL, 0, 0},
      {OP_ATT_LONGNAME, NULL, SL_ATTACHMENT_NAME_MAX, 0},
      {OP_END, NULL, 0, 0},
      {OP_FINISH, NULL, 0, 0},
      {OP_BEGIN, NULL, 0, SL_EBADSTATE},
      {OP_FINISH, NULL, 0, SL_EBADSTATE}}},
};

/* Run one step of a misuse case; returns the writer's answer. */
static int
run_step(struct sl_bulk_writer *w, const struct wstep *st)
{
    static const unsigned char bytes[16] = "0123456789abcdef";
    char longname[SL_ATTACHMENT_NAME_MAX + 2];
    json_t *meta = NULL;
    int rc = 0;

    switch (st->op) {
    case OP_BEGIN:
        meta = json_pack("{s:s}", "_recordid", "r");
        break;
    case OP_BEGIN_NOID:
        meta = json_pack("{s:i}", "x", 1);
        break;
    case OP_BEGIN_EMPTYID:
        meta = json_pack("{s:s}", "_recordid", "");
        break;
    case OP_BEGIN_NOTOBJ:
        meta = json_null();
        break;
    case OP_ATT:
        return sl_bulk_writer_attachment_begin(w, st->name, st->n);
    case OP_ATT_LONGNAME:
        assert_true(st->n < sizeof(longname));
        memset(longname, 'n', st->n);
        longname[st->n] = '\0';
        return sl_bulk_writer_attachment_begin(w, longname, 0);
    case OP_WRITE:
        assert_true(st->n <= sizeof(bytes));
        return sl_bulk_writer_attachment_write(w, bytes, st->n);
    case OP_END:
        return sl_bulk_writer_record_end(w);
    case OP_FINISH:
        return sl_bulk_writer_finish(w);
    default:
        fail();
    }
    rc = sl_bulk_writer_record_begin(w, meta);
    json_decref(meta);
    return rc;
}

static void
test_bulk_writer_misuse(void **state)
{
    struct sl_bulk_writer *w = NULL;
    struct sl_sink sink;
    struct mem out;
    size_t i = 0;
    size_t k = 0;

    (void)state;
    for (i = 0; i < sizeof(misuse_cases) / sizeof(misuse_cases[0]); i++) {
        mem_init(&out);
        mem_sink(&out, &sink);
        assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
        for (k = 0; misuse_cases[i].steps[k].op != OP_END_OF_CASE; k++) {
            int rc = run_step(w, &misuse_cases[i].steps[k]);

            if (rc != misuse_cases[i].steps[k].want) {
                fail_msg("case \"%s\" step %zu: got %s, want %s",
                         misuse_cases[i].what,
                         k,
                         sl_err_name(rc),
                         sl_err_name(misuse_cases[i].steps[k].want));
            }
        }
        sl_bulk_writer_free(w);
        sl_free(out.data);
    }
    sl_bulk_writer_free(NULL);
}

static void
test_bulk_writer_sink_error(void **state)
{
    struct sl_bulk_writer *w = NULL;
    unsigned char data[200000];
    struct sl_record *rec = sl_record_new("r");
    struct sl_sink sink;
    struct mem out;

    (void)state;
    fill_random(data, sizeof(data), 3);
    assert_int_equal(sl_record_attachment_set(rec, "a", data, sizeof(data)), 0);
    mem_init(&out);
    mem_sink(&out, &sink);
    out.limit = 4;
    assert_int_equal(sl_bulk_writer_new(&sink, &w), SL_ENOSPC);
    assert_null(w);
    out.limit = 100000;
    assert_int_equal(sl_bulk_writer_new(&sink, &w), 0);
    assert_int_equal(sl_bulk_writer_add(w, rec), SL_ENOSPC);
    assert_int_equal(sl_bulk_writer_add(w, rec), SL_EBADSTATE);
    assert_int_equal(sl_bulk_writer_finish(w), SL_EBADSTATE);
    sl_bulk_writer_free(w);
    sl_record_free(rec);
    sl_free(out.data);
}

static void
test_bulk_reader_failed_state(void **state)
{
    struct sl_record *recs[SMALL_N];
    struct sl_bulk_reader *r = NULL;
    struct sl_record *rec = NULL;
    struct sl_source src;
    struct sl_err err;
    struct mem out;
    struct mem in;
    json_t *meta = NULL;
    const char *name = NULL;
    uint64_t size = 0;
    char buf[4];
    size_t n = 0;

    (void)state;
    small_records(recs);
    write_records(recs, SMALL_N, &out);
    out.data[out.len - 20] ^= 0x55; /* in the last record's CRC */
    mem_source(&in, out.data, out.len, 0, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);
    assert_int_equal(sl_bulk_reader_next(r, &rec, &err), 1);
    sl_record_free(rec);
    assert_int_equal(sl_bulk_reader_next(r, &rec, &err), 1);
    sl_record_free(rec);
    assert_int_equal(sl_bulk_reader_next(r, &rec, &err), SL_ECORRUPT);
    assert_non_null(strstr(err.message, "record 3 at offset"));
    assert_non_null(strstr(err.message, "checksum mismatch"));
    assert_int_equal(sl_bulk_reader_next(r, &rec, &err), SL_EBADSTATE);
    assert_int_equal(err.code, SL_EBADSTATE);
    assert_int_equal(sl_bulk_reader_next_meta(r, &meta, &err), SL_EBADSTATE);
    assert_int_equal(sl_bulk_reader_attachment_next(r, &name, &size, &err),
                     SL_EBADSTATE);
    assert_int_equal(sl_bulk_reader_attachment_read(r, buf, 4, &n, &err),
                     SL_EBADSTATE);
    sl_bulk_reader_free(r);

    /* Misuse: attachment calls without an open record fail the reader. */
    out.data[out.len - 20] ^= 0x55;
    mem_source(&in, out.data, out.len, 0, &src);
    assert_int_equal(sl_bulk_reader_new(&src, NULL, &r, &err), 0);
    assert_int_equal(sl_bulk_reader_attachment_read(r, buf, 4, &n, &err),
                     SL_EINVAL);
    assert_int_equal(sl_bulk_reader_next(r, &rec, &err), SL_EBADSTATE);
    sl_bulk_reader_free(r);
    sl_bulk_reader_free(NULL);
    small_free(recs);
    sl_free(out.data);
}

int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bulk_roundtrip_json_types),
        cmocka_unit_test(test_bulk_layout_bytes),
        cmocka_unit_test(test_bulk_empty),
        cmocka_unit_test(test_bulk_head),
        cmocka_unit_test(test_bulk_head_corrupt),
        cmocka_unit_test(test_bulk_head_distrust),
        cmocka_unit_test(test_bulk_large_attachments),
        cmocka_unit_test(test_bulk_streaming_roundtrip),
        cmocka_unit_test(test_bulk_truncated_everywhere),
        cmocka_unit_test(test_bulk_flip_every_byte),
        cmocka_unit_test(test_bulk_checksum_message),
        cmocka_unit_test(test_bulk_copy_record),
        cmocka_unit_test(test_bulk_raw_frames),
        cmocka_unit_test(test_bulk_reader_meta),
        cmocka_unit_test(test_bulk_header_checks),
        cmocka_unit_test(test_bulk_meta_limit),
        cmocka_unit_test(test_bulk_record_limit),
        cmocka_unit_test(test_bulk_writer_misuse),
        cmocka_unit_test(test_bulk_writer_sink_error),
        cmocka_unit_test(test_bulk_reader_failed_state),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}

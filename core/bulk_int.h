/*
 * Private to the bulk codec (bulk.c, bulk_write.c, bulk_read.c): the
 * constants of the format (docs/bulk-format.md), the state of the writer
 * and of the reader, and the functions the files share.  The public API
 * is the "Record bulks" section of core/sl.h.
 *
 * Threading: a writer or a reader belongs to one thread at a time; the
 * rest is constant.
 */
#ifndef SL_CORE_BULK_INT_H_INCLUDED
#define SL_CORE_BULK_INT_H_INCLUDED

#include <stdint.h>

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

/* The magics of the bulk header, a record and the trailer (bulk.c). */
extern const unsigned char sl__bulk_magic[4];
extern const unsigned char sl__bulk_record_magic[4];
extern const unsigned char sl__bulk_trailer_magic[4];

/*
 * Extend a CRC-32 (zlib's, the gzip one) over @len bytes.  libdeflate
 * computes the same values with carry-less multiplication where the CPU
 * has it: 12-15 GB/s here against zlib's 3.6-4.2 (64 KiB pieces), 13
 * against 2.6 for 400-byte records (docs/bulk-format.md).
 */
static inline uint32_t
sl__bulk_crc(uint32_t crc, const void *data, size_t len)
{
    return libdeflate_crc32(crc, data, len);
}

/* ------------------------------------------------------------------------
 * Shared by the writer and the reader (bulk.c).
 * --------------------------------------------------------------------- */

/* 1 if the @p len bytes of @p name are a valid attachment name. */
int sl__bulk_name_ok(const char *name, size_t len);
/* A new empty JSON object used as a set of attachment names. */
json_t *sl__bulk_name_set_new(void);
/* The fields of @p h in the order of the head frame. */
void sl__bulk_head_fields(const struct sl_record_head *h,
                          const char *f[HEAD_FIELDS]);

/* ------------------------------------------------------------------------
 * Writer (bulk_write.c).
 * --------------------------------------------------------------------- */
enum sl__bulk_wstate {
    W_IDLE,   /* between records */
    W_RECORD, /* in a record, no attachment open */
    W_ATTACH, /* in an attachment; att_left bytes still due */
    W_DONE,   /* trailer written */
    W_FAILED, /* an error happened; everything returns SL_EBADSTATE */
};

struct sl_bulk_writer {
    struct sl_sink sink;        /* copy of the caller's sink */
    unsigned char *buf;         /* IO_BUF_SIZE bytes of pending output */
    size_t len;                 /* pending bytes in buf */
    uint64_t bytes;             /* bytes produced so far (header included) */
    uint64_t count;             /* records completed */
    uint32_t crc;               /* CRC-32 of the current record so far */
    enum sl__bulk_wstate state; /* see enum sl__bulk_wstate */
    uint64_t att_left;          /* bytes still due for the open attachment */
    json_t *names;              /* attachment names of the current record */
    struct sl_buf meta;         /* the encoded metadata of the current record */
    int heads; /* records get head frames (a test knob unsets) */
};

/* Append @p len bytes to the output (not to the record's CRC). */
int sl__bulk_emit(struct sl_bulk_writer *w, const void *data, size_t len);
/* Append @p len bytes, into the record's CRC too when @p crc. */
int sl__bulk_emit_frame(struct sl_bulk_writer *w,
                        const void *data,
                        size_t len,
                        int crc);
/* A record's head and its @p len bytes of metadata @p meta. */
int sl__bulk_emit_record_head(struct sl_bulk_writer *w,
                              const void *meta,
                              size_t len,
                              int crc);
/* An attachment frame: tag, name length, name, size. */
int sl__bulk_emit_att_frame(struct sl_bulk_writer *w,
                            const char *name,
                            size_t nlen,
                            uint64_t size,
                            int crc);
/* Mark the writer failed and return @p rc (an SL_E* code). */
int sl__bulk_wfail(struct sl_bulk_writer *w, int rc);
/* 0 for a failed or finished writer, which answers SL_EBADSTATE. */
int sl__bulk_wusable(const struct sl_bulk_writer *w);

/* ------------------------------------------------------------------------
 * Reader (bulk_read.c).
 * --------------------------------------------------------------------- */
enum sl__bulk_rstate {
    R_IDLE,   /* between records: a record or the trailer comes next */
    R_META,   /* metadata read; a frame tag ('A' or 'E') comes next */
    R_ATTACH, /* in attachment data; att_left bytes remain */
    R_DONE,   /* trailer verified, at end of stream */
    R_FAILED, /* an error happened; everything returns SL_EBADSTATE */
};

/* What is being decoded, for the prefix of error messages. */
enum sl__bulk_rwhere {
    IN_HEADER,
    IN_RECORD,
    IN_TRAILER,
};

struct sl_bulk_reader {
    struct sl_source src;       /* copy of the caller's source */
    size_t max_meta;            /* metadata limit per record */
    size_t max_record;          /* whole-record limit for reader_next */
    unsigned char *buf;         /* IO_BUF_SIZE bytes of read-ahead */
    size_t pos;                 /* next unread byte in buf */
    size_t len;                 /* valid bytes in buf */
    int eof;                    /* the source reported end of stream */
    uint64_t offset;            /* stream offset of buf[pos] */
    enum sl__bulk_rstate state; /* see enum sl__bulk_rstate */
    enum sl__bulk_rwhere where; /* see enum sl__bulk_rwhere */
    uint64_t count;             /* records completed and verified */
    uint64_t rec_off;           /* offset of the current record (or trailer) */
    uint32_t crc;               /* CRC-32 of the current record so far */
    uint64_t att_left;          /* unread data bytes of the attachment */
    uint64_t att_off;           /* offset of the current attachment frame */
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

/* Fail the reader with @p code, naming the frame at @p off. */
int sl__bulk_rfail(struct sl_bulk_reader *r,
                   struct sl_err *err,
                   int code,
                   uint64_t off,
                   const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));
/* Fail after a short read of @p what. */
int sl__bulk_io_fail(struct sl_bulk_reader *r,
                     struct sl_err *err,
                     int code,
                     uint64_t off,
                     const char *what);
/* Refill the read-ahead buffer once it is used up. */
int sl__bulk_fill(struct sl_bulk_reader *r);
/* The next attachment frame of the open record: 1 (attachment), 0
 * (record end, checksum verified) or an error. */
int sl__bulk_att_next(struct sl_bulk_reader *r,
                      const char **name,
                      uint64_t *size,
                      struct sl_err *err);
/* 0, or SL_EBADSTATE for a failed reader. */
int sl__bulk_rusable(const struct sl_bulk_reader *r, struct sl_err *err);

#endif /* SL_CORE_BULK_INT_H_INCLUDED */

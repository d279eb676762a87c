/*
 * Sluice core: errors, logging, allocation, bounded buffers, names,
 * records and record bulks.  This is the one public header of core/.
 *
 * Threading: every function here is thread-safe in the sense that it
 * touches only its arguments, except where a note says otherwise.  An
 * object (record, bulk reader or writer, buffer) belongs to one thread at a
 * time; pass it between threads only with a hand-over (queue, join).
 * Logging may be called from any thread.
 */
#ifndef SL_H_INCLUDED
#define SL_H_INCLUDED

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#ifndef SL_VERSION
#define SL_VERSION "0.0.0"
#endif

/* ------------------------------------------------------------------------
 * Errors.  0 is success, errors are negative.  Negated errno values where
 * they fit, project codes at -40000 and below.  The table is append-only:
 * never renumber or reuse a value.
 *
 * XX(name, value, http status, API code, default message)
 * --------------------------------------------------------------------- */
#define SL_ERRNO_MAP(XX)                                                       \
    XX(ENOENT, -ENOENT, 404, "NOT_FOUND", "no such resource")                  \
    XX(EINVAL, -EINVAL, 400, "INVALID_INPUT", "invalid argument")              \
    XX(EIO, -EIO, 500, "IO_ERROR", "input/output error")                       \
    XX(EACCES, -EACCES, 403, "ACCESS_DENIED", "permission denied")             \
    XX(EEXIST, -EEXIST, 409, "ALREADY_EXISTS", "already exists")               \
    XX(ENOSPC, -ENOSPC, 507, "NO_SPACE", "no space left on device")            \
    XX(ENOTEMPTY, -ENOTEMPTY, 409, "NOT_EMPTY", "not empty")                   \
    XX(EMFILE, -EMFILE, 503, "TOO_MANY_FILES", "too many open files")          \
    XX(EBADSTATE, -40001, 409, "BAD_STATE", "object is in the wrong state")    \
    XX(ECONFLICT, -40002, 409, "CONFLICT", "conflict")                         \
    XX(EUPSTREAM, -40003, 502, "UPSTREAM_ERROR", "upstream error")             \
    XX(ETOOLARGE, -40004, 413, "TOO_LARGE", "too large")                       \
    XX(ECORRUPT, -40005, 500, "CORRUPT_DATA", "corrupt data")                  \
    XX(ETRUNCATED, -40006, 500, "TRUNCATED_DATA", "truncated data")            \
    XX(EBADNAME, -40007, 400, "INVALID_NAME", "invalid name")                  \
    XX(EBADJSON, -40008, 400, "MALFORMED_JSON", "malformed JSON")              \
    XX(EUNAUTH, -40009, 401, "UNAUTHORIZED", "missing or invalid API token")   \
    XX(EMETHOD, -40010, 405, "METHOD_NOT_ALLOWED", "method not allowed")       \
    XX(ENOTREADY, -40011, 503, "NOT_READY", "not ready")                       \
    XX(EGONE, -40012, 410, "GONE", "no longer available")                      \
    XX(EINTERNAL, -40013, 500, "INTERNAL_ERROR", "internal error")             \
    XX(EINVALDEF, -40014, 400, "INVALID_DEFINITION", "invalid definition")     \
    XX(ECANCELED, -40015, 409, "CANCELED", "canceled")                         \
    XX(EREADONLY, -40016, 409, "READ_ONLY", "read-only")                       \
    XX(ECONFIG, -40017, 400, "INVALID_CONFIG", "invalid configuration")        \
    XX(EURITOOLONG, -40018, 414, "URI_TOO_LONG", "request path too long")      \
    XX(EHEADERS, -40019, 431, "HEADERS_TOO_LARGE", "request headers too large")

enum sl_errno {
    SL_OK = 0,
#define SL_XX_ENUM(name, value, status, code, msg) SL_##name = (value),
    SL_ERRNO_MAP(SL_XX_ENUM)
#undef SL_XX_ENUM
};

/**
 * Detail of a failure: the code, the field it concerns (a JSON path such as
 * "actions[1].input" or an offset) and a human readable message.  Filled by
 * the function that fails; callers may pass NULL when they do not care.
 */
struct sl_err {
    int code;          /* SL_E* or 0 */
    char field[128];   /* where; empty when not applicable */
    char message[512]; /* what, in one sentence */
};

/** @brief Text for an error code ("no such resource"); never NULL. */
const char *sl_strerror(int code);
/**
 * @brief Text for an errno value ("No such file or directory"); never NULL.
 * Thread-safe (strerror_r into a per-thread buffer): the text stays valid
 * until the calling thread's next call.  strerror itself is banned.
 */
const char *sl_errno_str(int errnum);
/** @brief Symbolic name of an error code ("SL_ENOENT"); never NULL. */
const char *sl_err_name(int code);
/** @brief API code string for the REST error body ("NOT_FOUND"). */
const char *sl_err_api_code(int code);
/** @brief HTTP status for an error code (500 for unknown codes). */
int sl_err_http_status(int code);
/** @brief Map an errno value (positive) to an SL_E* code. */
int sl_err_from_errno(int errnum);
/**
 * @brief 1 when @p code says a disk (or a database in it) is full:
 * SL_ENOSPC (ENOSPC, EDQUOT, SQLITE_FULL, a full LMDB map), or -EDQUOT
 * from code that passes -errno on; else 0.  Such failures are temporary
 * (docs/operations.md, "A full disk").
 */
int sl_err_nospace(int code);

/**
 * @brief Fill @p err (if not NULL) and return @p code, so callers can write
 * `return sl_err_set(err, SL_EINVAL, "name", "bad %s", x);`.
 * @param[in] field JSON path or NULL.
 */
int sl_err_set(struct sl_err *err,
               int code,
               const char *field,
               const char *fmt,
               ...) __attribute__((format(printf, 4, 5)));
/** @brief Reset @p err to "no error". NULL-safe. */
void sl_err_clear(struct sl_err *err);

/* ------------------------------------------------------------------------
 * Logging to stderr: one line per call, ISO-8601 UTC timestamp, level.
 * --------------------------------------------------------------------- */
enum sl_log_level {
    SL_LOG_DEBUG = 0,
    SL_LOG_INFO = 1,
    SL_LOG_WARN = 2,
    SL_LOG_ERROR = 3,
};

/** @brief Set the minimum level that is printed (default SL_LOG_INFO). */
void sl_log_set_level(enum sl_log_level level);
/** @brief Parse "debug", "info", "warn", "error"; SL_EINVAL otherwise. */
int sl_log_level_parse(const char *s, enum sl_log_level *out);
/** @brief Print one log line; thread-safe (a single write per line). */
void sl_log(enum sl_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define SL_DEBUG(...) sl_log(SL_LOG_DEBUG, __VA_ARGS__)
#define SL_INFO(...)  sl_log(SL_LOG_INFO, __VA_ARGS__)
#define SL_WARN(...)  sl_log(SL_LOG_WARN, __VA_ARGS__)
#define SL_ERROR(...) sl_log(SL_LOG_ERROR, __VA_ARGS__)

/* ------------------------------------------------------------------------
 * Asserts and panics.
 * --------------------------------------------------------------------- */
/** @brief Log the message and abort. For corrupted internal state only. */
_Noreturn void sl_panic(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

#ifdef SL_ASSERTS
#define SL_ASSERT(x)                                                           \
    ((x) ? (void)0                                                             \
         : sl_panic("assertion failed: %s (%s:%d)", #x, __FILE__, __LINE__))
#else
#define SL_ASSERT(x) ((void)0)
#endif
/* "Cannot happen" conditions that stay in release builds and fail safe. */
#ifdef SL_ASSERTS
#define SL_ALWAYS(x) ((x) ? 1 : (SL_ASSERT(x), 0))
#define SL_NEVER(x)  ((x) ? (SL_ASSERT(!(x)), 1) : 0)
#else
#define SL_ALWAYS(x) (x)
#define SL_NEVER(x)  (x)
#endif

/* ------------------------------------------------------------------------
 * Allocation.  These abort on out-of-memory, so callers never test for
 * NULL.  Raw malloc/free are banned elsewhere (tests/check-banned.sh).
 * --------------------------------------------------------------------- */
/** @brief New block of @p n bytes, caller frees with sl_free. */
void *sl_malloc(size_t n);
/** @brief New zeroed block of @p count * @p size bytes (overflow aborts). */
void *sl_calloc(size_t count, size_t size);
/** @brief Resize; takes ownership of @p p and returns the new block. */
void *sl_realloc(void *p, size_t n);
/** @brief New copy of @p s, caller frees with sl_free. */
char *sl_strdup(const char *s);
/** @brief New copy of the first @p n bytes of @p s, NUL-terminated. */
char *sl_strndup(const char *s, size_t n);
/** @brief New printf-formatted string, caller frees with sl_free. */
char *sl_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** @brief Free @p p; NULL-safe. */
void sl_free(void *p);
#define SL_FREE(p)                                                             \
    do {                                                                       \
        sl_free(p);                                                            \
        (p) = NULL;                                                            \
    } while (0)

/* ------------------------------------------------------------------------
 * Bounded buffer.  Every growable buffer has a maximum; an append past it
 * returns SL_ETOOLARGE and frees the contents (the buffer stays usable as
 * an empty buffer only after sl_buf_reset).
 * --------------------------------------------------------------------- */
struct sl_buf {
    char *data;   /* NUL-terminated contents, NULL while empty */
    size_t len;   /* bytes used, without the terminating NUL */
    size_t cap;   /* bytes allocated */
    size_t limit; /* maximum len */
    int failed;   /* set after an append past the limit (SL_EBADSTATE) */
};

/** @brief Init an empty buffer that may grow up to @p limit bytes. */
void sl_buf_init(struct sl_buf *b, size_t limit);
/**
 * @brief Append @p n bytes.
 * @return 0, SL_ETOOLARGE (contents freed, buffer marked failed) or
 * SL_EBADSTATE after an earlier failure.
 */
int sl_buf_append(struct sl_buf *b, const void *data, size_t n);
/** @brief Append a printf-formatted string; errors as sl_buf_append. */
int sl_buf_appendf(struct sl_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/** @brief Empty the buffer and clear the failed flag; keeps the limit. */
void sl_buf_reset(struct sl_buf *b);
/** @brief Free the contents; the buffer may be re-initialised. */
void sl_buf_free(struct sl_buf *b);

/* ------------------------------------------------------------------------
 * Names (docs/rest-api.md "Conventions").
 * --------------------------------------------------------------------- */
#define SL_NAME_MAX           256  /* entity and store names */
#define SL_OBJECT_ID_MAX      1024 /* whole object id */
#define SL_OBJECT_SEGMENT_MAX 255

/**
 * @brief Job, workflow, bucket and worker names: ^[a-zA-Z0-9-_.]+$, at most
 * SL_NAME_MAX bytes.
 * @return 0 or SL_EBADNAME with the reason in @p err.
 */
int sl_name_check_entity(const char *name, struct sl_err *err);
/** @brief Store names: ^[a-zA-Z0-9-]{1,256}$. 0 or SL_EBADNAME. */
int sl_name_check_store(const char *name, struct sl_err *err);
/**
 * @brief Object ids: '/'-separated non-empty segments of at most
 * SL_OBJECT_SEGMENT_MAX bytes, no "." or ".." segment, no leading or
 * trailing '/', no control characters or backslash, valid UTF-8, at most
 * SL_OBJECT_ID_MAX bytes.
 * @return 0 or SL_EBADNAME with the reason in @p err.
 */
int sl_name_check_object_id(const char *id, struct sl_err *err);

/**
 * @brief Is @p n bytes at @p data valid UTF-8 (RFC 3629: no overlong form,
 * surrogate or code point above U+10FFFF; NUL bytes allowed)?  1 or 0.
 */
int sl_utf8_valid(const void *data, size_t n);
/**
 * @brief As sl_utf8_valid for the head of a longer text: the @p n bytes
 * may end inside a sequence (a lead byte and fewer continuation bytes than
 * it needs, whatever their values).  1 or 0.
 */
int sl_utf8_valid_head(const void *data, size_t n);
/**
 * @brief Length of the valid UTF-8 sequence that starts the @p n bytes at
 * @p data (1 to 4), or 0 when it is invalid, truncated or @p n is 0.
 */
size_t sl_utf8_len(const void *data, size_t n);
/**
 * @brief Decode the UTF-8 sequence that starts the @p n bytes at @p data:
 * its length (1 to 4) with the code point in *@p cp; 0 when it is invalid
 * (bad lead or continuation byte, overlong form, surrogate, above
 * U+10FFFF) or @p n is 0; -1 when the @p n bytes are a lead byte and
 * continuation bytes, fewer than it needs (more bytes may complete it).
 * The one UTF-8 decoder of the code.
 */
int sl_utf8_decode(const void *data, size_t n, uint32_t *cp);
/**
 * @brief Copy the string @p src into @p dst (@p cap bytes, always
 * terminated when @p cap > 0) with every byte that is not part of a valid
 * UTF-8 sequence written as \xHH (backslash, x, two hex digits), so the
 * copy can be quoted in JSON or a log line.  Whole sequences only: a copy cut
 * by
 * @p cap ends before the sequence that did not fit.
 * @return The length of the copy.
 */
size_t sl_utf8_escape(char *dst, size_t cap, const char *src);

/* ------------------------------------------------------------------------
 * Small utilities.
 * --------------------------------------------------------------------- */
/** @brief Milliseconds since the epoch (CLOCK_REALTIME). */
int64_t sl_time_ms(void);
/** @brief Monotonic milliseconds (CLOCK_MONOTONIC). */
int64_t sl_mono_ms(void);
/** @brief Monotonic microseconds (CLOCK_MONOTONIC). */
int64_t sl_mono_us(void);
/**
 * @brief Test knob: sleep the milliseconds the environment variable
 * SLUICE_TEST_DELAY gives for @p point (a comma-separated list of
 * `point=ms`, ms at most 60000), else return at once.  Crash tests use it
 * to hold a phase open long enough to kill the server in it, whatever the
 * disk's speed (docs/operations.md, "Test knobs").
 */
void sl_test_delay(const char *point);
/** @brief Sleep @p ms milliseconds (signals do not cut it short). */
void sl_sleep_ms(uint64_t ms);
/**
 * A growing pause after failures that only time can cure (a full disk:
 * SL_ENOSPC).  The first failure pauses @c first_ms; a failure within the
 * length of the last pause after it ended doubles the pause, up to
 * @c max_ms; a failure after a longer quiet time starts again at
 * @c first_ms.  Failures during a pause belong to it (threads that fail
 * together double it once).  Not thread-safe: guard it with the owner's
 * lock.  docs/operations.md, "A full disk".
 */
struct sl_backoff {
    unsigned first_ms; /* first pause */
    unsigned max_ms;   /* longest pause */
    unsigned cur_ms;   /* the last pause, 0 before the first failure */
    int64_t until_ms;  /* sl_mono_ms() at which the last pause ends */
};

/** @brief Set the limits; @p first_ms 0 is 1000, @p max_ms below it is
 * @p first_ms. */
void sl_backoff_init(struct sl_backoff *b, unsigned first_ms, unsigned max_ms);
/**
 * @brief A failure at monotonic time @p now_ms: start (or join) a pause.
 * @return 1 when this failure started a new pause (log it), 0 when it
 * joined the current one.
 */
int sl_backoff_fail(struct sl_backoff *b, int64_t now_ms);
/** @brief Milliseconds left of the pause at @p now_ms (0: not paused). */
int64_t sl_backoff_left(const struct sl_backoff *b, int64_t now_ms);

/** @brief Lower-case hex SHA-256 of @p len bytes into @p hex (NUL-ended). */
void sl_sha256_hex(const void *data, size_t len, char hex[65]);

/** SHA-256 over data that arrives in pieces (a download as it streams). */
struct sl_sha256;
/**
 * @brief Start a SHA-256 (aborts on OOM or an OpenSSL failure, as
 * sl_sha256_hex).
 * @return new object, caller frees with sl_sha256_free.
 */
struct sl_sha256 *sl_sha256_new(void);
/** @brief Add @p len bytes. */
void sl_sha256_update(struct sl_sha256 *h, const void *data, size_t len);
/** @brief The lower-case hex digest of all bytes added so far into @p hex;
 * the object takes no more bytes after it (only sl_sha256_free). */
void sl_sha256_final_hex(struct sl_sha256 *h, char hex[65]);
/** @brief Free @p h; NULL-safe. */
void sl_sha256_free(struct sl_sha256 *h);
/** @brief Format @p ms as "2026-11-21T10:15:30.123Z" into @p out (>= 25). */
void sl_time_format(int64_t ms, char *out, size_t cap);
/** @brief Write a random UUID (version 4, 36 chars + NUL) into @p out. */
void sl_uuid(char out[37]);
/**
 * @brief Parse a whole decimal unsigned number; no sign, no spaces.
 * @return 0 or SL_EINVAL (empty, junk, overflow).
 */
int sl_parse_u64(const char *s, uint64_t *out);
/**
 * @brief mkdir -p: create @p path and its missing parents (mode 0755);
 * existing directories are fine.
 * @return 0 or an SL_E* code from errno, with the directory that could not
 * be created and the system's reason in @p err.
 */
int sl_mkdirs(const char *path, struct sl_err *err);
/**
 * @brief Percent-encode @p s for a URL path: unreserved bytes stay, '/'
 * stays when @p keep_slash, everything else becomes %XX.
 * @return new string, caller frees with sl_free.
 */
char *sl_url_escape(const char *s, int keep_slash);
/** @brief Write all of @p len bytes to @p fd, retrying on EINTR. */
int sl_write_all(int fd, const void *buf, size_t len);
/**
 * @brief 1 when the file system holding @p path has less than
 * SL_DISK_FULL_SLACK bytes left for us (statvfs), else 0.  LMDB reports
 * a short write as EIO: on such a disk that was a full disk.
 */
int sl_disk_full(const char *path);
#define SL_DISK_FULL_SLACK ((uint64_t)4 << 20)
/** @brief Peak resident set size of this process in KiB (VmHWM), or -1. */
long sl_peak_rss_kib(void);

/* Little-endian integers of on-disk formats (bulks, delta entries). */
static inline void
sl_le_put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static inline void
sl_le_put32(unsigned char *p, uint32_t v)
{
    sl_le_put16(p, (uint16_t)v);
    sl_le_put16(p + 2, (uint16_t)(v >> 16));
}

static inline void
sl_le_put64(unsigned char *p, uint64_t v)
{
    sl_le_put32(p, (uint32_t)v);
    sl_le_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t
sl_le_get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static inline uint32_t
sl_le_get32(const unsigned char *p)
{
    return (uint32_t)sl_le_get16(p) | (uint32_t)sl_le_get16(p + 2) << 16;
}

static inline uint64_t
sl_le_get64(const unsigned char *p)
{
    return (uint64_t)sl_le_get32(p) | (uint64_t)sl_le_get32(p + 4) << 32;
}

/* Big-endian: keys that sort by the number (LMDB compares bytes). */
static inline void
sl_be_put64(unsigned char *p, uint64_t v)
{
    int i = 0;

    for (i = 7; i >= 0; i--) {
        p[i] = (unsigned char)(v & 0xffu);
        v >>= 8;
    }
}

static inline uint64_t
sl_be_get64(const unsigned char *p)
{
    uint64_t v = 0;
    int i = 0;

    for (i = 0; i < 8; i++) {
        v = v << 8 | p[i];
    }
    return v;
}

/* ------------------------------------------------------------------------
 * Durability of the stores (objectstore, deltaservice, jobmanager): what a
 * commit survives.
 * --------------------------------------------------------------------- */
enum sl_durability {
    SL_DURABILITY_PROCESS = 0, /* survive kill -9: no fsync */
    SL_DURABILITY_FSYNC = 1,   /* survive power loss: fsync on commit */
};

/* ------------------------------------------------------------------------
 * Records: JSON metadata (an object with a string "_recordid") plus named
 * binary attachments.
 * --------------------------------------------------------------------- */
struct sl_record;

#define SL_ATTACHMENT_NAME_MAX 1024
/* Bytes of a _recordid: what the delta service and the index take. */
#define SL_RECORD_ID_MAX 65536u

/**
 * @brief New record with metadata {"_recordid": id}.
 * @return new object, caller frees with sl_record_free.
 */
struct sl_record *sl_record_new(const char *id);
/**
 * @brief New record from a metadata object; takes ownership of the
 * reference @p meta (also on failure).
 * @return 0, SL_EINVAL when @p meta is not an object or has no non-empty
 * string "_recordid" (err names the field).
 */
int sl_record_from_json_new(json_t *meta,
                            struct sl_record **out,
                            struct sl_err *err);
/** @brief Free the record and its attachments; NULL-safe. */
void sl_record_free(struct sl_record *rec);
/** @brief The record id; borrowed, valid until the metadata changes. */
const char *sl_record_id(const struct sl_record *rec);
/** @brief The metadata object; borrowed, valid while @p rec lives. */
json_t *sl_record_meta(const struct sl_record *rec);
/**
 * @brief Set (or replace) attachment @p name to a copy of @p len bytes.
 * @return 0 or SL_EINVAL for an empty or too long name.
 */
int sl_record_attachment_set(struct sl_record *rec,
                             const char *name,
                             const void *data,
                             size_t len);
/**
 * @brief As sl_record_attachment_set but takes ownership of @p data, which
 * must come from sl_malloc (also on failure).
 */
int sl_record_attachment_set_new(struct sl_record *rec,
                                 const char *name,
                                 void *data,
                                 size_t len);
/** @brief Number of attachments. */
size_t sl_record_attachment_count(const struct sl_record *rec);
/**
 * @brief Attachment @p i (in insertion order); all out pointers borrowed,
 * valid until the record changes.
 * @return 0 or SL_ENOENT.
 */
int sl_record_attachment_at(const struct sl_record *rec,
                            size_t i,
                            const char **name,
                            const void **data,
                            size_t *len);
/** @brief Attachment by name, or SL_ENOENT; borrowed as above. */
int sl_record_attachment_get(const struct sl_record *rec,
                             const char *name,
                             const void **data,
                             size_t *len);
/** @brief Remove attachment @p name; 0 or SL_ENOENT. */
int sl_record_attachment_remove(struct sl_record *rec, const char *name);

/* ------------------------------------------------------------------------
 * Byte streams for the bulk codec.  A sink takes bytes, a source gives
 * them; both are borrowed by the reader/writer that uses them.
 * --------------------------------------------------------------------- */
struct sl_sink {
    /* Write all @len bytes or fail with an SL_E* code. */
    int (*write)(void *ctx, const void *data, size_t len);
    void *ctx;
};

struct sl_source {
    /* Read up to @cap bytes; *n = 0 means end of stream.  0 or SL_E*. */
    int (*read)(void *ctx, void *buf, size_t cap, size_t *n);
    void *ctx;
};

/** @brief Sink that writes to file descriptor @p fd (ctx is the fd). */
void sl_sink_fd(struct sl_sink *sink, int *fd);
/** @brief Source that reads from file descriptor @p fd. */
void sl_source_fd(struct sl_source *src, int *fd);

/* ------------------------------------------------------------------------
 * Record bulks: the versioned binary framing of docs/bulk-format.md.
 * Writers and readers stream one record at a time; memory is bounded by
 * the limits below, never by the bulk size.
 * --------------------------------------------------------------------- */
#define SL_BULK_VERSION            1
#define SL_BULK_DEFAULT_MAX_META   (64u << 20)  /* metadata JSON per record */
#define SL_BULK_DEFAULT_MAX_RECORD (512u << 20) /* whole record, in memory */
/* Header flag: written by this engine's writers, whose record heads agree
 * with the metadata; readers offer heads only from such bulks. */
#define SL_BULK_FLAG_HEADS 0x0001u

struct sl_bulk_writer;
struct sl_bulk_reader;

/*
 * A record's head (docs/bulk-format.md "Head"): the metadata fields that
 * the delta service's workers and the pushers need, stored beside the
 * metadata by the writer, so that those workers need not decode it.
 */
struct sl_record_head {
    const char *id;          /* _recordid, non-empty */
    const char *source;      /* _source, or NULL */
    const char *delta_hash;  /* _deltaHash, or NULL */
    const char *compound_id; /* _compoundRecordId, or NULL */
    unsigned flags;          /* SL_HEAD_* */
};
#define SL_HEAD_COMPOUND 1u /* _isCompound is true */
#define SL_HEAD_VERSION  2u /* the metadata has the key _version */
#define SL_HEAD_VISITED  4u /* the metadata has the key _visited */

struct sl_bulk_limits {
    size_t max_meta_bytes;   /* 0 = SL_BULK_DEFAULT_MAX_META */
    size_t max_record_bytes; /* 0 = SL_BULK_DEFAULT_MAX_RECORD; for
                                sl_bulk_reader_next, which loads attachments */
};

/**
 * @brief New writer; writes the bulk header to @p sink at once.
 * @param[in] sink borrowed, must outlive the writer.
 * @return 0 or the sink's error.  On success *out is a new object, caller
 * frees with sl_bulk_writer_free.
 */
int sl_bulk_writer_new(const struct sl_sink *sink, struct sl_bulk_writer **out);
/**
 * @brief Writer that appends to a bulk whose header and @p count complete
 * records (@p bytes bytes in all, header included) are already in the
 * sink's file: for journals that are reopened after a restart.  Writes
 * nothing now.
 * @return 0 or SL_EINVAL.  *out as for sl_bulk_writer_new.
 */
int sl_bulk_writer_resume(const struct sl_sink *sink,
                          uint64_t count,
                          uint64_t bytes,
                          struct sl_bulk_writer **out);
/** @brief Hand every buffered byte to the sink (records written so far are
 * then in the sink).  0 or the sink's error (the writer then failed). */
int sl_bulk_writer_flush(struct sl_bulk_writer *w);
/** @brief Write one whole record. 0 or an SL_E* code (writer then failed). */
int sl_bulk_writer_add(struct sl_bulk_writer *w, const struct sl_record *rec);
/**
 * @brief Streaming write: start a record with metadata @p meta (borrowed;
 * must be an object with a string "_recordid"), then give each attachment
 * with attachment_begin + attachment_write (exactly @p size bytes in all),
 * then record_end.
 */
int sl_bulk_writer_record_begin(struct sl_bulk_writer *w, const json_t *meta);
/**
 * @brief record_begin with the metadata given as stored JSON text: @p meta
 * (@p len bytes, borrowed) must be what a writer stored, such as a
 * reader's next_raw gave, or that text with keys appended; it is not
 * checked.  @p head (borrowed; NULL for none) is stored as the record's
 * head and must agree with @p meta.
 */
int sl_bulk_writer_record_begin_text(struct sl_bulk_writer *w,
                                     const char *meta,
                                     size_t len,
                                     const struct sl_record_head *head);
int sl_bulk_writer_attachment_begin(struct sl_bulk_writer *w,
                                    const char *name,
                                    uint64_t size);
int sl_bulk_writer_attachment_write(struct sl_bulk_writer *w,
                                    const void *data,
                                    size_t len);
int sl_bulk_writer_record_end(struct sl_bulk_writer *w);
/** @brief Write the end-of-bulk trailer. No record may follow. */
int sl_bulk_writer_finish(struct sl_bulk_writer *w);
/** @brief Records written so far. */
uint64_t sl_bulk_writer_count(const struct sl_bulk_writer *w);
/** @brief Bytes written so far (header included). */
uint64_t sl_bulk_writer_bytes(const struct sl_bulk_writer *w);
/** @brief Free the writer (does not finish it); NULL-safe. */
void sl_bulk_writer_free(struct sl_bulk_writer *w);

/**
 * @brief New reader; reads and checks the bulk header.
 * @param[in] src borrowed, must outlive the reader.
 * @param[in] limits NULL for defaults.
 * @return 0, SL_ECORRUPT (bad magic or version), SL_ETRUNCATED, or the
 * source's error; details with the byte offset in @p err.
 */
int sl_bulk_reader_new(const struct sl_source *src,
                       const struct sl_bulk_limits *limits,
                       struct sl_bulk_reader **out,
                       struct sl_err *err);
/**
 * @brief Read the next whole record, attachments in memory.
 * @return 1 and a new record in *out (caller frees with sl_record_free), 0 at
 * the verified end of the bulk, or SL_ECORRUPT / SL_ETRUNCATED /
 * SL_ETOOLARGE with the byte offset in @p err.  After an error every call
 * returns SL_EBADSTATE.
 */
int sl_bulk_reader_next(struct sl_bulk_reader *r,
                        struct sl_record **out,
                        struct sl_err *err);
/**
 * @brief Streaming read: the next record's metadata only.
 * @return 1 and a new reference in *meta (caller json_decref's it), 0 at the
 * verified end, or an error as sl_bulk_reader_next.  Then call
 * attachment_next until it returns 0; the record's checksum is verified
 * then.  Skipped attachment data is read and checked, not kept.
 */
int sl_bulk_reader_next_meta(struct sl_bulk_reader *r,
                             json_t **meta,
                             struct sl_err *err);
/**
 * @brief Streaming read without decoding: as sl_bulk_reader_next_meta, but
 * *meta and *len are the next record's metadata as stored (JSON text, not
 * checked), borrowed until the next record is begun or the reader is
 * freed.  For a caller that copies records it checked before
 * (sl_bulk_copy_record), or that relies on the record's head.
 * @return 1, 0 at the verified end, or an error as sl_bulk_reader_next.
 */
int sl_bulk_reader_next_raw(struct sl_bulk_reader *r,
                            const char **meta,
                            size_t *len,
                            struct sl_err *err);
/**
 * @brief Decode the metadata of the record last begun (by next_raw, for a
 * record the caller does not pass on as stored) with next_meta's checks:
 * a JSON object with a non-empty string `_recordid`.
 * @return 0 and a new reference in *meta, or SL_ECORRUPT (the reader then
 * failed, as next_meta would have) or SL_EINVAL (no record was read).
 */
int sl_bulk_reader_meta(struct sl_bulk_reader *r,
                        json_t **meta,
                        struct sl_err *err);
/**
 * @brief The head of the record last begun (by next_meta or next_raw):
 * @return 1 and *head borrowed until the next record is begun or the
 * reader is freed, or 0 (*head NULL) when the record has none (written by
 * a version before heads, its fields could not be stored as one, or the
 * bulk lacks SL_BULK_FLAG_HEADS: decode the metadata then).
 */
int sl_bulk_reader_head(const struct sl_bulk_reader *r,
                        const struct sl_record_head **head);
/**
 * @brief Clear SL_BULK_FLAG_HEADS in @p hdr (the first 8 bytes of an object)
 * when they are a bulk header: for bulks that come from outside (the
 * store's REST upload), whose heads are then not trusted.
 */
void sl_bulk_distrust(unsigned char hdr[8]);
/** @brief A copy of @p head in one new block (caller sl_free's it). */
struct sl_record_head *sl_record_head_dup(const struct sl_record_head *head);
/**
 * @brief Next attachment of the current record.
 * @return 1 with *name (borrowed, valid until the next reader call) and
 * *size, 0 after the last one (checksum verified), or an error.
 */
int sl_bulk_reader_attachment_next(struct sl_bulk_reader *r,
                                   const char **name,
                                   uint64_t *size,
                                   struct sl_err *err);
/**
 * @brief Read past the remaining attachments of the current record (their
 * data is read and checked, not kept) up to the record's verified end;
 * when that end was already read (attachment_next returned 0), nothing.
 * @param[out] n attachments skipped, or NULL.
 * @return 0 or an error as sl_bulk_reader_next.
 */
int sl_bulk_reader_skip_attachments(struct sl_bulk_reader *r,
                                    size_t *n,
                                    struct sl_err *err);
/**
 * @brief Copy the remaining attachments of @p r's current record into the
 * record open in @p w (streamed through @p buf of @p cap bytes), up to the
 * record's verified end.
 * @return 0, a reader error (details in @p err) or a writer error.
 */
int sl_bulk_copy_attachments(struct sl_bulk_reader *r,
                             struct sl_bulk_writer *w,
                             char *buf,
                             size_t cap,
                             struct sl_err *err);
/**
 * @brief Copy @p r's current record, just begun (by next_meta or next_raw;
 * no attachment begun yet, or only the first one by attachment_next and
 * none of its data read), to @p w unchanged: its stored metadata bytes
 * and its attachments, up to the record's verified end.  The bytes go
 * from the reader's buffer to the writer's once and the checksum is
 * computed once (by the reader; the copy's is the same).  Cheaper than
 * record_begin + sl_bulk_copy_attachments + record_end for a record that
 * passes through a worker unchanged.
 * @return 0, a reader error (details in @p err; @p w then failed too: a
 * partial record is never finished) or a writer error.
 */
int sl_bulk_copy_record(struct sl_bulk_reader *r,
                        struct sl_bulk_writer *w,
                        struct sl_err *err);
/** @brief Read up to @p cap bytes of the current attachment (*n = 0: end). */
int sl_bulk_reader_attachment_read(struct sl_bulk_reader *r,
                                   void *buf,
                                   size_t cap,
                                   size_t *n,
                                   struct sl_err *err);
/** @brief Byte offset of the next unread byte. */
uint64_t sl_bulk_reader_offset(const struct sl_bulk_reader *r);
/** @brief Records read and verified so far. */
uint64_t sl_bulk_reader_count(const struct sl_bulk_reader *r);
/** @brief 1 when the trailer was read and verified (sl_bulk_reader_next*
 * returned 0), else 0. */
int sl_bulk_reader_at_end(const struct sl_bulk_reader *r);
/** @brief Free the reader; NULL-safe. */
void sl_bulk_reader_free(struct sl_bulk_reader *r);

/* ------------------------------------------------------------------------
 * Throttle bins (core/throttle.c; docs/configuration.md "Throttle bins").
 *
 * A worker names a bin for each fetch (the web workers the host key
 * "https://example.com:443", the fileFetcher "file://" and the mount or
 * folder) and asks a table before it starts: the table grants it, or
 * answers how long to wait (or -1: until a fetch of the bin ends).
 * Nothing sleeps here.  Rules, with gap = max(limits' gap, the source's
 * own delay such as robots.txt's Crawl-delay):
 * - at most max_inflight fetches of a bin in flight (0: no limit);
 * - two fetches of a bin start at least gap apart, and a fetch starts at
 *   least gap after the previous one ended;
 * - a slow-down answer (HTTP 429 or 503) backs the bin off: the next
 *   fetch waits the longer of Retry-After and a backoff that doubles from
 *   SL_THROTTLE_BACKOFF_MIN_MS up to SL_THROTTLE_BACKOFF_MAX_MS (any other
 *   answer resets it); a wait is never longer than
 *   SL_THROTTLE_RETRY_AFTER_MAX_MS;
 * - the source's own delay is capped at SL_THROTTLE_SOURCE_DELAY_MAX_MS.
 * A table holds at most max_bins bins; when full, the idle bin used
 * longest ago gives its place up (its state is forgotten).  Times are
 * milliseconds of a monotonic clock the caller passes in.  Every call is
 * thread-safe.
 *
 * A bin keeps when its last fetch started and ended; each caller measures
 * its own gap from those, so a stricter limit of one caller slows that
 * caller only.  The limits of a fetch come from the worker (the web
 * politeness parameters) tightened by every matching rule: a rule is
 * {"bin": an
 * fnmatch pattern over the bin name, "maxPerSecond": 0.001-1000,
 * "maxConnections": 1-1024}; the server's rules (configuration
 * `throttle.bins`) and a job's (its parameter `throttle`).
 * --------------------------------------------------------------------- */
#define SL_THROTTLE_BINS_MAX            1000000u
#define SL_THROTTLE_SOURCE_DELAY_MAX_MS 30000
#define SL_THROTTLE_BACKOFF_MIN_MS      1000
#define SL_THROTTLE_BACKOFF_MAX_MS      300000
#define SL_THROTTLE_RETRY_AFTER_MAX_MS  3600000
#define SL_THROTTLE_SHARE_MS            20

struct sl_throttle_limits {
    int64_t gap_ms;        /* between two starts, and from an end to a start */
    unsigned max_inflight; /* fetches in flight; 0: no limit */
};

/* How a fetch ended, for its bin. */
enum sl_throttle_outcome {
    SL_THROTTLE_NO_ANSWER, /* failed before the source answered */
    SL_THROTTLE_ANSWERED,  /* answered: a backoff ends */
    SL_THROTTLE_SLOW_DOWN  /* asked to slow down (429, 503) */
};

struct sl_throttle_state {
    int64_t next_ok_ms;      /* earliest start of a fetch without a gap
                                of its own (the source's delay, a hold) */
    int64_t source_delay_ms; /* the source's own delay, capped */
    int64_t backoff_ms;      /* current backoff, or 0 */
    unsigned inflight;       /* fetches in flight */
    size_t bins;             /* bins in the table */
};

struct sl_throttle;

/**
 * @brief New table for at most @p max_bins bins (1..SL_THROTTLE_BINS_MAX).
 * @param[out] out new object, caller frees with sl_throttle_free.
 * @return 0 or SL_EINVAL.
 */
int sl_throttle_new(size_t max_bins, struct sl_throttle **out);
/** @brief Free @p t; NULL-safe.  No other call may be running. */
void sl_throttle_free(struct sl_throttle *t);
/**
 * @brief May a fetch of @p bin start at @p now_ms under @p l, for a caller
 * that holds @p held of the bin's fetches in flight?  A caller holding at
 * least half of max_inflight is refused (*wait_ms -1) while another caller
 * holding less than half was refused for a full bin in the last
 * SL_THROTTLE_SHARE_MS: callers on one bin share it instead of the first
 * keeping all of it.
 * @param[out] wait_ms with 1: milliseconds until it may (>= 1), or -1 when
 * the bin is full (ask again after a release).
 * @return 0 (granted: counted in flight until sl_throttle_release), 1 (not
 * now), SL_ETOOLARGE (the table is full of busy bins).
 */
int sl_throttle_acquire(struct sl_throttle *t,
                        const char *bin,
                        const struct sl_throttle_limits *l,
                        int64_t now_ms,
                        unsigned held,
                        int64_t *wait_ms);
/**
 * @brief A granted fetch of @p bin ended at @p now_ms with @p outcome and
 * the source's Retry-After @p retry_after_ms (-1: none).
 */
void sl_throttle_release(struct sl_throttle *t,
                         const char *bin,
                         const struct sl_throttle_limits *l,
                         int64_t now_ms,
                         enum sl_throttle_outcome outcome,
                         int64_t retry_after_ms);
/** @brief The source of @p bin asks for @p seconds between fetches. */
void sl_throttle_source_delay(struct sl_throttle *t,
                              const char *bin,
                              double seconds,
                              int64_t now_ms);
/**
 * @brief The state of @p bin (for counters and tests).
 * @return 0, or SL_ENOENT (not in the table; out->bins is still set).
 */
int sl_throttle_state(struct sl_throttle *t,
                      const char *bin,
                      struct sl_throttle_state *out);
/**
 * @brief Check a list of rules; @p field names it in errors
 * ("throttle.bins", "throttle").
 * @return 0 or SL_EINVAL (@p err names the rule and member: "throttle[1].
 * maxPerSecond").
 */
int sl_throttle_rules_check(const json_t *rules,
                            const char *field,
                            struct sl_err *err);
/** @brief Tighten @p l by every rule of @p rules (NULL: none) matching
 * @p bin; returns how many matched. */
int sl_throttle_rules_apply(const json_t *rules,
                            const char *bin,
                            struct sl_throttle_limits *l);
/** @brief The process's table (made on first use), shared by every worker
 * thread of the process; never freed. */
struct sl_throttle *sl_throttle_process(void);
/**
 * @brief Set the server's rules (copied; NULL: none), for
 * sl_throttle_limits_for.
 * @return 0 or SL_EINVAL (field "throttle.bins[i]...").
 */
int sl_throttle_process_rules(const json_t *rules, struct sl_err *err);
/** @brief Is there any rule: a server rule, or one in @p job_rules?  (A
 * worker that has no limits of its own skips its bins when not.) */
int sl_throttle_any_rules(const json_t *job_rules);
/** @brief Tighten @p l (the worker's own limits) by the server's rules
 * and @p job_rules (NULL: none) that match @p bin; returns how many
 * matched (0: @p l is as it was). */
int sl_throttle_limits_for(const char *bin,
                           const json_t *job_rules,
                           struct sl_throttle_limits *l);

#endif /* SL_H_INCLUDED */

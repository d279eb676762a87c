/*
 * fileExtractor (SMILA.md 7.4 and 7.8, ARCHITECTURE.md 7): for each
 * compound record of input `compounds` (as crawled by fileCrawler), reads
 * the archive with libarchive, streamed from the file, and writes one
 * element record per regular entry, content in attachment `fileContent`,
 * to output `files`.  Nested archives are spooled to an unlinked temporary
 * file and extracted recursively.  Depth, entry count, expanded bytes,
 * expansion ratio and entry size are limited; a limit that is hit is
 * counted, never fatal.  See docs/workers.md "fileExtractor".
 *
 * The walk over an archive open on a file descriptor (sl__wk_extract_fd,
 * workers_int.h) is shared with the webExtractor (web_crawler.c), which
 * hands it downloaded compounds with its own attribute names.
 */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "workers/workers_int.h"

#define READ_BUF (64u * 1024u)

#define DEFAULT_MAX_DEPTH   5u
#define DEFAULT_MAX_ENTRIES 100000u
#define DEFAULT_MAX_TOTAL   (4ull << 30)
#define DEFAULT_MAX_RATIO   100u
#define DEFAULT_MAX_ENTRY   SL_WORKER_FILE_MAX_SIZE
/* The ratio limit applies once this much was expanded, so that small,
 * very compressible archives (a 200-byte zip of 30 KB of text) pass. */
#define RATIO_GRACE (1u << 20)

/* Results of the extraction steps besides 0 (go on) and SL_E* output
 * errors (< 0): the current archive ends, the elements so far are kept. */
enum {
    STEP_STOP = 1,    /* a compound-wide limit was hit (x->stopped) */
    STEP_CORRUPT = 2, /* the archive is corrupt or truncated */
};

/* The parameters of the task and the state of the current top-level
 * compound. */
struct sl__wk_extract {
    struct sl_task_ctx *ctx;
    const char *who;                   /* worker name, for the log */
    struct sl__wk_extract_names names; /* of the element attributes */
    struct sl_bulk_writer *w;          /* output, borrowed */
    uint64_t max_depth;                /* maxNestingDepth */
    uint64_t max_entries;              /* maxEntries, per archive */
    uint64_t max_total;  /* maxTotalBytes, per top-level compound */
    uint64_t max_ratio;  /* maxRatio */
    uint64_t max_entry;  /* maxEntrySize */
    char *buf;           /* READ_BUF bytes */
    const char *top_id;  /* id of the top-level compound, borrowed */
    const char *source;  /* its _source or NULL, borrowed */
    uint64_t compressed; /* size of the top-level compound file */
    uint64_t total;      /* bytes expanded from it so far */
    int stopped;         /* a compound-wide limit was hit */
};

/* libarchive's reason for the last failure; it gives none for some
 * truncated archives, and a log line must never say "(null)". */
static const char *
arc_error(struct archive *a)
{
    const char *m = archive_error_string(a);

    return m != NULL ? m : "the archive is truncated or corrupt";
}

/* ------------------------------------------------------------------------
 * Names.
 * --------------------------------------------------------------------- */

/*
 * Normalise the raw inner path @raw: empty and "." segments are dropped,
 * so are ".." segments and a leading "/", which also set *sanitised.  The
 * result is only ever used in record ids, never on the file system.
 * Returns a new string (possibly empty), caller frees with sl_free.
 */
static char *
sanitise(const char *raw, int *sanitised)
{
    size_t n = strlen(raw);
    char *out = sl_malloc(n + 1);
    const char *p = raw;
    size_t o = 0;

    *sanitised = raw[0] == '/';
    while (*p != '\0') {
        const char *end = strchr(p, '/');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

        if (len == 2 && p[0] == '.' && p[1] == '.') {
            *sanitised = 1;
        } else if (len > 0 && !(len == 1 && p[0] == '.')) {
            if (o > 0) {
                out[o++] = '/';
            }
            memcpy(out + o, p, len);
            o += len;
        }
        p += len;
        if (*p == '/') {
            p++;
        }
    }
    out[o] = '\0';
    return out;
}

/* ------------------------------------------------------------------------
 * Reading entry data under the limits.
 * --------------------------------------------------------------------- */

/* Is @more bytes on top of the expanded total still within maxTotalBytes
 * and maxRatio?  If not, count the limit once and stop the compound. */
static int
budget_ok(struct sl__wk_extract *x, uint64_t more)
{
    uint64_t t = x->total + more;

    if (x->stopped) {
        return 0;
    }
    if (t < x->total || t > x->max_total) {
        sl_task_counter_add(x->ctx, "limits.totalBytes", 1);
        x->stopped = 1;
    } else if (t > RATIO_GRACE && x->max_ratio > 0 &&
               t / x->max_ratio > x->compressed) {
        sl_task_counter_add(x->ctx, "limits.ratio", 1);
        x->stopped = 1;
    }
    if (x->stopped) {
        SL_WARN("%s: %s: expansion limit hit after %llu bytes; "
                "the rest of the compound is skipped",
                x->who,
                x->top_id,
                (unsigned long long)x->total);
        return 0;
    }
    return 1;
}

/*
 * Read the next chunk (at most @want bytes) of the current entry of @a
 * into x->buf.  The bytes count towards the limits, checked after every
 * chunk, so a bomb stops within one chunk of the limit.  Returns 0 with
 * *n (0: end of entry), STEP_STOP or STEP_CORRUPT.
 */
static int
pull(struct sl__wk_extract *x, struct archive *a, size_t want, size_t *n)
{
    la_ssize_t got = 0;

    *n = 0;
    do {
        got = archive_read_data(a, x->buf, want);
    } while (got == ARCHIVE_RETRY);
    if (got < 0) {
        SL_WARN("%s: %s: %s", x->who, x->top_id, arc_error(a));
        return STEP_CORRUPT;
    }
    x->total += (uint64_t)got;
    if (!budget_ok(x, 0)) {
        return STEP_STOP;
    }
    *n = (size_t)got;
    return 0;
}

int
sl__wk_spool_open(void)
{
    const char *dir = getenv("TMPDIR");
    char *path = sl_asprintf("%s/sluice-extract.XXXXXX",
                             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    int fd = mkstemp(path);
    int e = errno;

    if (fd < 0) {
        SL_ERROR("mkstemp %s: %s", path, strerror(e));
    } else {
        (void)unlink(path);
    }
    sl_free(path);
    errno = e;
    return fd;
}

/*
 * Copy the current entry of @a into a new spool file, at most @cap bytes.
 * Returns 0 with *fd and *len set (*fd is -1 when the entry was bigger
 * than @cap: its data was read to the end under the limits and dropped),
 * STEP_STOP, STEP_CORRUPT or SL_EIO.
 */
static int
spool(struct sl__wk_extract *x,
      struct archive *a,
      uint64_t cap,
      int *fd,
      uint64_t *len)
{
    size_t n = 0;
    int rc = 0;

    *len = 0;
    *fd = sl__wk_spool_open();
    if (*fd < 0) {
        sl_task_set_message(x->ctx, "temporary file: %s", strerror(errno));
        return SL_EIO;
    }
    for (;;) {
        rc = pull(x, a, READ_BUF, &n);
        if (rc != 0 || n == 0) {
            break;
        }
        *len += n;
        if (*len > cap) {
            (void)close(*fd);
            *fd = -1;
        }
        if (*fd >= 0 && write(*fd, x->buf, n) != (ssize_t)n) {
            sl_task_set_message(x->ctx, "temporary file: %s", strerror(errno));
            rc = SL_EIO;
            break;
        }
    }
    if (rc == 0 && *fd >= 0 && lseek(*fd, 0, SEEK_SET) != 0) {
        rc = SL_EIO;
    }
    if (rc != 0 && *fd >= 0) {
        (void)close(*fd);
        *fd = -1;
    }
    return rc;
}

/* ------------------------------------------------------------------------
 * Element records.
 * --------------------------------------------------------------------- */

/* Set attribute @name (NULL: not written) of @meta to @v (taken). */
static void
set_attr(json_t *meta, const char *name, json_t *v)
{
    if (name != NULL) {
        (void)json_object_set_new(meta, name, v);
    } else {
        json_decref(v);
    }
}

/* The metadata of element @id (escaped) of entry @e, size @size
 * (UINT64_MAX: unknown), with the attribute names of x->names.  New
 * reference. */
static json_t *
element_meta(struct sl__wk_extract *x,
             struct archive_entry *e,
             const char *id,
             uint64_t size)
{
    const char *slash = strrchr(id, '/');
    const char *name = slash + 1;
    const char *dot = strrchr(name, '.');
    int64_t sec = archive_entry_mtime_is_set(e) ? archive_entry_mtime(e) : 0;
    long nsec = archive_entry_mtime_is_set(e) ? archive_entry_mtime_nsec(e) : 0;
    char when[40];
    char hash[64];
    json_t *meta = NULL;

    meta = json_pack(
        "{s:s, s:s}", "_recordid", id, "_compoundRecordId", x->top_id);
    if (meta == NULL) {
        return NULL;
    }
    set_attr(meta, x->names.path, json_string(id));
    set_attr(meta, x->names.name, json_string(name));
    set_attr(meta, x->names.folder, json_stringn(id, (size_t)(slash - id)));
    if (x->source != NULL) {
        (void)json_object_set_new(meta, "_source", json_string(x->source));
    }
    if (dot != NULL && dot != name && dot[1] != '\0') {
        set_attr(meta, x->names.extension, json_string(dot + 1));
    }
    if (size != UINT64_MAX) {
        set_attr(meta, x->names.size, json_integer((json_int_t)size));
    }
    if (archive_entry_mtime_is_set(e)) {
        time_t t = (time_t)sec;
        struct tm tm;

        if (!x->names.http_date) {
            sl_time_format(sec * 1000 + nsec / 1000000, when, sizeof(when));
        } else if (gmtime_r(&t, &tm) == NULL ||
                   strftime(
                       when, sizeof(when), "%a, %d %b %Y %H:%M:%S GMT", &tm) ==
                       0) {
            when[0] = '\0';
        }
        if (when[0] != '\0') {
            set_attr(meta, x->names.modified, json_string(when));
        }
    }
    (void)snprintf(hash,
                   sizeof(hash),
                   "%llu-%lld.%09ld",
                   (unsigned long long)(size != UINT64_MAX ? size : 0),
                   (long long)sec,
                   nsec);
    (void)json_object_set_new(meta, "_deltaHash", json_string(hash));
    return meta;
}

/* Write @meta as a whole record without attachment. */
static int
write_bare(struct sl__wk_extract *x, const json_t *meta)
{
    int rc = sl_bulk_writer_record_begin(x->w, meta);

    if (rc == 0) {
        rc = sl_bulk_writer_record_end(x->w);
    }
    if (rc != 0) {
        sl_task_set_message(x->ctx, "write: %s", sl_strerror(rc));
        return rc;
    }
    sl_task_counter_add(x->ctx, "elements.records", 1);
    return 0;
}

/* Write @meta with the @len bytes of spool file @fd as the content. */
static int
write_spooled(struct sl__wk_extract *x,
              const json_t *meta,
              int fd,
              uint64_t len)
{
    uint64_t left = len;
    ssize_t n = 0;
    int rc = sl_bulk_writer_record_begin(x->w, meta);

    if (rc == 0) {
        rc = sl_bulk_writer_attachment_begin(x->w, x->names.content, len);
    }
    while (rc == 0 && left > 0) {
        n = read(fd, x->buf, left < READ_BUF ? (size_t)left : READ_BUF);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            sl_task_set_message(x->ctx, "temporary file: short read");
            return SL_EIO;
        }
        rc = sl_bulk_writer_attachment_write(x->w, x->buf, (size_t)n);
        left -= (uint64_t)n;
    }
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(x->w);
    }
    if (rc != 0) {
        sl_task_set_message(x->ctx, "write: %s", sl_strerror(rc));
        return rc;
    }
    sl_task_counter_add(x->ctx, "elements.records", 1);
    sl_task_counter_add(x->ctx, "elements.bytes", (double)len);
    return 0;
}

/*
 * Write @meta with the current entry of @a, whose size @size is known,
 * streamed chunk by chunk into the content.  The budget was checked for
 * @size before.  Data that ends early (a truncated or corrupt archive)
 * cannot take back the half-written record: the rest is zero-filled, the
 * record gets no correction, and STEP_CORRUPT ends the archive.
 */
static int
write_streamed(struct sl__wk_extract *x,
               struct archive *a,
               const json_t *meta,
               uint64_t size)
{
    uint64_t left = size;
    size_t n = 0;
    int step = 0;
    int rc = sl_bulk_writer_record_begin(x->w, meta);

    if (rc == 0) {
        rc = sl_bulk_writer_attachment_begin(x->w, x->names.content, size);
    }
    while (rc == 0 && left > 0) {
        if (step == 0) {
            step = pull(x, a, left < READ_BUF ? (size_t)left : READ_BUF, &n);
        }
        if (step != 0 || n == 0) {
            if (step == 0) {
                step = STEP_CORRUPT;
                SL_WARN("%s: %s: entry data ends early", x->who, x->top_id);
            }
            n = left < READ_BUF ? (size_t)left : READ_BUF;
            memset(x->buf, 0, n);
        }
        rc = sl_bulk_writer_attachment_write(x->w, x->buf, n);
        left -= (uint64_t)n;
    }
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(x->w);
    }
    if (rc != 0) {
        sl_task_set_message(x->ctx, "write: %s", sl_strerror(rc));
        return rc;
    }
    sl_task_counter_add(x->ctx, "elements.records", 1);
    sl_task_counter_add(x->ctx, "elements.bytes", (double)size);
    return step;
}

/* ------------------------------------------------------------------------
 * Archives.
 * --------------------------------------------------------------------- */

static int extract_archive(struct sl__wk_extract *x,
                           int fd,
                           const char *prefix,
                           uint64_t depth);

/*
 * Nested archive @id (entry of @a at nesting @depth, size @size or
 * UINT64_MAX): spool it, write its own record (`_isCompound`, no
 * content), then extract it at @depth.
 */
static int
nested(struct sl__wk_extract *x,
       struct archive *a,
       struct archive_entry *e,
       const char *id,
       uint64_t depth)
{
    json_t *meta = NULL;
    uint64_t len = 0;
    int fd = -1;
    int rc = 0;

    rc = spool(x, a, x->max_entry, &fd, &len);
    if (rc != 0) {
        return rc;
    }
    meta = element_meta(x, e, id, len);
    if (meta == NULL) {
        rc = SL_EINTERNAL;
        goto out;
    }
    if (fd < 0) {
        sl_task_counter_add(x->ctx, "limits.entrySize", 1);
        rc = write_bare(x, meta);
        goto out;
    }
    (void)json_object_set_new(meta, "_isCompound", json_true());
    rc = write_bare(x, meta);
    if (rc == 0) {
        rc = extract_archive(x, fd, id, depth);
    }

out:
    json_decref(meta);
    if (fd >= 0) {
        (void)close(fd);
    }
    return rc;
}

/*
 * The name of entry @e, the @nth of its archive, in a new string.  Names
 * libarchive hands over as bytes (zip entries without the UTF-8 flag, tar)
 * come as they are, and are escaped later like file names on disk.  An
 * entry flagged as UTF-8 whose name is not (or, without a C.UTF-8 locale,
 * any non-ASCII name) has no name libarchive will give:
 * it is kept as "unnamed-<nth>", logged and counted, never dropped.
 */
static char *
entry_name(struct sl__wk_extract *x,
           struct archive_entry *e,
           const char *prefix,
           uint64_t nth)
{
    const char *raw = archive_entry_pathname(e);

    if (raw != NULL) {
        return sl_strdup(raw);
    }
    SL_WARN("%s: %s: entry %llu has a name that is not valid UTF-8; kept "
            "as unnamed-%llu",
            x->who,
            prefix,
            (unsigned long long)nth,
            (unsigned long long)nth);
    sl_task_counter_add(x->ctx, "entries.unnamed", 1);
    return sl_asprintf("unnamed-%llu", (unsigned long long)nth);
}

/*
 * One regular entry @e, the @nth of archive @a (id prefix @prefix,
 * nesting @depth).  Returns 0, STEP_STOP, STEP_CORRUPT or an SL_E* output
 * error.
 */
static int
extract_entry(struct sl__wk_extract *x,
              struct archive *a,
              struct archive_entry *e,
              const char *prefix,
              uint64_t depth,
              uint64_t nth)
{
    char *raw = entry_name(x, e, prefix, nth);
    uint64_t size = archive_entry_size_is_set(e) && archive_entry_size(e) >= 0
                        ? (uint64_t)archive_entry_size(e)
                        : UINT64_MAX;
    json_t *meta = NULL;
    char *clean = NULL;
    char *esc = NULL;
    char *id = NULL;
    uint64_t len = 0;
    int fd = -1;
    int sanitised = 0;
    int rc = 0;

    clean = sanitise(raw, &sanitised);
    if (sanitised) {
        SL_WARN("%s: %s: entry '%s' sanitised", x->who, prefix, clean);
        sl_task_counter_add(x->ctx, "entries.sanitised", 1);
    }
    if (clean[0] == '\0') {
        sl_task_counter_add(x->ctx, "entries.skipped", 1);
        goto out;
    }
    esc = sl_worker_path_escape(clean);
    id = sl_asprintf("%s!/%s", prefix, esc);
    if (size != UINT64_MAX && !budget_ok(x, size)) {
        rc = STEP_STOP;
        goto out;
    }
    if (size != UINT64_MAX && size > x->max_entry) {
        /* Skipping may decompress: the declared size counts. */
        sl_task_counter_add(x->ctx, "limits.entrySize", 1);
        if (archive_read_data_skip(a) != ARCHIVE_OK) {
            rc = STEP_CORRUPT;
            goto out;
        }
        x->total += size;
        meta = element_meta(x, e, id, size);
        rc = meta != NULL ? write_bare(x, meta) : SL_EINTERNAL;
        goto out;
    }
    if (sl_worker_is_archive_name(clean)) {
        if (depth + 1 <= x->max_depth) {
            rc = nested(x, a, e, id, depth + 1);
            goto out;
        }
        sl_task_counter_add(x->ctx, "limits.depth", 1);
    }
    if (size != UINT64_MAX) {
        meta = element_meta(x, e, id, size);
        rc = meta != NULL ? write_streamed(x, a, meta, size) : SL_EINTERNAL;
        goto out;
    }
    /* Unknown size: spool first, the attachment header needs the size. */
    rc = spool(x, a, x->max_entry, &fd, &len);
    if (rc != 0) {
        goto out;
    }
    meta = element_meta(x, e, id, len);
    if (meta == NULL) {
        rc = SL_EINTERNAL;
    } else if (fd < 0) {
        sl_task_counter_add(x->ctx, "limits.entrySize", 1);
        if (x->names.size != NULL) {
            (void)json_object_del(meta, x->names.size);
        }
        rc = write_bare(x, meta);
    } else {
        rc = write_spooled(x, meta, fd, len);
    }

out:
    if (fd >= 0) {
        (void)close(fd);
    }
    json_decref(meta);
    sl_free(id);
    sl_free(esc);
    sl_free(clean);
    sl_free(raw);
    return rc;
}

/*
 * Extract the archive open on @fd (borrowed, read from its current
 * offset), whose elements get ids "@prefix!/<inner path>", at nesting
 * @depth (0: the top-level compound).  A corrupt archive is counted and
 * ends with the elements read so far; the return value is an output error
 * or SL_ECANCELED.
 */
static int
extract_archive(struct sl__wk_extract *x,
                int fd,
                const char *prefix,
                uint64_t depth)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e = NULL;
    uint64_t entries = 0;
    int corrupt = 0;
    int rc = 0;
    int ar = 0;

    if (a == NULL) {
        sl_task_set_message(x->ctx, "archive_read_new failed");
        return SL_EINTERNAL;
    }
    (void)archive_read_support_filter_all(a);
    (void)archive_read_support_format_all(a);
    ar = archive_read_open_fd(a, fd, READ_BUF);
    if (ar != ARCHIVE_OK) {
        SL_WARN("%s: %s: %s", x->who, prefix, arc_error(a));
        corrupt = 1;
        goto out;
    }
    sl_task_counter_add(x->ctx, "compounds.extracted", 1);
    for (;;) {
        if (sl_task_is_canceled(x->ctx)) {
            rc = SL_ECANCELED;
            break;
        }
        ar = archive_read_next_header(a, &e);
        if (ar == ARCHIVE_EOF) {
            break;
        }
        if (ar == ARCHIVE_WARN) {
            SL_WARN("%s: %s: %s", x->who, prefix, arc_error(a));
        } else if (ar != ARCHIVE_OK) {
            SL_WARN("%s: %s: %s", x->who, prefix, arc_error(a));
            corrupt = 1;
            break;
        }
        if (++entries > x->max_entries) {
            SL_WARN("%s: %s: more than %llu entries; the rest is "
                    "skipped",
                    x->who,
                    prefix,
                    (unsigned long long)x->max_entries);
            sl_task_counter_add(x->ctx, "limits.entries", 1);
            break;
        }
        if (archive_entry_filetype(e) == AE_IFDIR) {
            continue;
        }
        if (archive_entry_filetype(e) != AE_IFREG ||
            archive_entry_hardlink(e) != NULL) {
            sl_task_counter_add(x->ctx, "entries.skipped", 1);
            continue;
        }
        rc = extract_entry(x, a, e, prefix, depth, entries);
        if (rc == STEP_CORRUPT) {
            corrupt = 1;
        }
        if (rc != 0 || x->stopped) {
            break;
        }
    }

out:
    if (corrupt) {
        sl_task_counter_add(x->ctx, "compounds.corrupt", 1);
    }
    (void)archive_read_free(a);
    return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------------
 * The shared extraction (workers_int.h).
 * --------------------------------------------------------------------- */

int
sl__wk_extract_new(struct sl_task_ctx *ctx,
                   const struct sl__wk_extract_names *names,
                   struct sl__wk_extract **out)
{
    static const struct {
        const char *name;
        uint64_t def;
        size_t off;
    } params[] = {
        {"maxNestingDepth",
         DEFAULT_MAX_DEPTH,
         offsetof(struct sl__wk_extract, max_depth)},
        {"maxEntries",
         DEFAULT_MAX_ENTRIES,
         offsetof(struct sl__wk_extract, max_entries)},
        {"maxTotalBytes",
         DEFAULT_MAX_TOTAL,
         offsetof(struct sl__wk_extract, max_total)},
        {"maxRatio",
         DEFAULT_MAX_RATIO,
         offsetof(struct sl__wk_extract, max_ratio)},
        {"maxEntrySize",
         DEFAULT_MAX_ENTRY,
         offsetof(struct sl__wk_extract, max_entry)},
    };
    struct sl__wk_extract *x = sl_calloc(1, sizeof(*x));
    size_t i = 0;

    *out = NULL;
    x->ctx = ctx;
    x->who = sl_task_worker(ctx);
    x->names = *names;
    for (i = 0; i < sizeof(params) / sizeof(params[0]); i++) {
        uint64_t *v = (uint64_t *)(void *)((char *)x + params[i].off);

        if (sl_task_param_u64(ctx, params[i].name, params[i].def, v) != 0) {
            sl_task_set_message(ctx, "%s: not a number", params[i].name);
            sl_free(x);
            return SL_EINVAL;
        }
    }
    x->buf = sl_malloc(READ_BUF);
    *out = x;
    return 0;
}

void
sl__wk_extract_free(struct sl__wk_extract *x)
{
    if (x != NULL) {
        sl_free(x->buf);
        sl_free(x);
    }
}

/*
 * libarchive converts entry names flagged as UTF-8 (zip) into the charset
 * of the calling thread's locale, and in "C" it refuses every non-ASCII
 * one.  The walk runs in a "C.UTF-8" locale of its own thread (uselocale),
 * so the process locale, and with it the byte semantics of the crawlers'
 * regular expressions, stays "C".
 */
static locale_t utf8_locale;
static pthread_once_t utf8_once = PTHREAD_ONCE_INIT;

static void
utf8_locale_init(void)
{
    utf8_locale = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (utf8_locale == (locale_t)0) {
        SL_WARN("fileExtractor: no C.UTF-8 locale: zip entries whose names "
                "are flagged as UTF-8 and not ASCII are kept as "
                "unnamed-<n>");
    }
}

int
sl__wk_extract_fd(struct sl__wk_extract *x,
                  struct sl_bulk_writer *w,
                  const char *id,
                  const char *source,
                  int fd,
                  uint64_t size)
{
    int rc = 0;

    x->w = w;
    x->top_id = id;
    x->source = source;
    x->compressed = size;
    x->total = 0;
    x->stopped = 0;
    (void)pthread_once(&utf8_once, utf8_locale_init);
    if (utf8_locale != (locale_t)0) {
        locale_t old = uselocale(utf8_locale);

        rc = extract_archive(x, fd, id, 0);
        (void)uselocale(old);
    } else {
        rc = extract_archive(x, fd, id, 0);
    }
    x->w = NULL;
    x->top_id = x->source = NULL;
    return rc;
}

/* ------------------------------------------------------------------------
 * fileExtractor tasks.
 * --------------------------------------------------------------------- */

/* The task of one fileExtractor. */
struct file_task {
    struct sl_task_ctx *ctx;
    struct sl_bulk_writer *w; /* output `files`, borrowed */
    struct sl__wk_extract *x;
};

/* Extract the compound of record @meta (borrowed).  A compound that cannot
 * be read is counted and skipped; the return value is an output error. */
static int
extract_record(struct file_task *t, const json_t *meta)
{
    const json_t *p = json_object_get(meta, sl_task_mapped(t->ctx, "filePath"));
    const char *id = json_string_value(json_object_get(meta, "_recordid"));
    const char *esc = json_is_string(p) ? json_string_value(p) : id;
    struct stat st;
    char *raw = NULL;
    int fd = -1;
    int rc = 0;

    if (id == NULL || esc == NULL) {
        sl_task_counter_add(t->ctx, "compounds.unreadable", 1);
        return 0;
    }
    raw = sl_worker_path_unescape(esc);
    fd = open(raw, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
        SL_WARN("fileExtractor: %s: %s", raw, strerror(errno));
        sl_task_counter_add(t->ctx, "compounds.vanished", 1);
        goto out;
    }
    if (fd < 0) {
        /* it exists: the run must not delete its elements' documents */
        SL_WARN("fileExtractor: %s: %s", raw, strerror(errno));
        sl_task_counter_add(t->ctx, "compounds.unreadable", 1);
        sl_task_set_incomplete(t->ctx, "%s: %s", raw, strerror(errno));
        goto out;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        SL_WARN("fileExtractor: %s: not a readable regular file", raw);
        sl_task_counter_add(t->ctx, "compounds.unreadable", 1);
        goto out;
    }
    /* The compound itself is a file of the tree: pass its record on
     * (metadata only), so it is indexed and its delta state is recorded
     * by the updatePusher like any file's. */
    rc = sl_bulk_writer_record_begin(t->w, meta);
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(t->w);
    }
    if (rc != 0) {
        sl_task_set_message(t->ctx, "write: %s", sl_strerror(rc));
        goto out;
    }
    rc = sl__wk_extract_fd(t->x,
                           t->w,
                           id,
                           json_string_value(json_object_get(meta, "_source")),
                           fd,
                           (uint64_t)st.st_size);

out:
    if (fd >= 0) {
        (void)close(fd);
    }
    sl_free(raw);
    return rc;
}

/* One input record (a callback of sl_task_input_each): an SL_E* failure
 * of extract_record, which has set the task message, retries the task. */
static int
extract_input(void *arg, json_t *meta)
{
    return extract_record(arg, meta) == 0 ? SL_WORKER_OK
                                          : SL_WORKER_RECOVERABLE;
}

static int
extractor_perform(struct sl_task_ctx *ctx)
{
    struct sl__wk_extract_names names = {
        sl_task_mapped(ctx, "filePath"),
        sl_task_mapped(ctx, "fileName"),
        sl_task_mapped(ctx, "fileFolder"),
        sl_task_mapped(ctx, "fileExtension"),
        sl_task_mapped(ctx, "fileSize"),
        sl_task_mapped(ctx, "fileLastModified"),
        sl_task_mapped(ctx, "fileContent"),
        0, /* ISO 8601, as the fileCrawler's fileLastModified */
    };
    struct file_task t;
    int res = SL_WORKER_OK;
    int rc = 0;

    memset(&t, 0, sizeof(t));
    t.ctx = ctx;
    if (sl__wk_extract_new(ctx, &names, &t.x) != 0) {
        return SL_WORKER_FATAL;
    }
    rc = sl_task_output_writer(ctx, "files", &t.w);
    if (rc != 0) {
        sl_task_set_message(ctx, "output files: %s", sl_strerror(rc));
        res = rc == SL_ENOENT ? SL_WORKER_FATAL : SL_WORKER_RECOVERABLE;
    } else {
        res = sl_task_input_each(ctx, "compounds", extract_input, &t);
    }
    sl__wk_extract_free(t.x);
    return res;
}

const struct sl_worker_type sl_worker_fileExtractor = {
    SL_WORKER_ABI_VERSION,
    "fileExtractor",
    "{\"name\": \"fileExtractor\","
    " \"parameters\": [" SL__WK_DECL_MAPPING "," SL__WK_DECL_EXTRACT_LIMITS "],"
    " \"input\": [{\"name\": \"compounds\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"files\", \"type\": \"recordBulks\"}]}",
    extractor_perform,
    NULL,
};

/*
 * The libarchive walk (text.h "Archives") of the fileExtractor and the
 * webExtractor: every regular entry of an archive read from a file
 * descriptor becomes one element handed to a sink, nested archives are
 * spooled to an unlinked temporary file and walked recursively.  Depth,
 * entry count, expanded bytes, expansion ratio and entry size are
 * limited; a limit that is hit is reported, never an error.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
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

#include "text/archive_int.h"

/* Report @n of event @ev, about document @id, to the sink. */
void
sl__text_arc_note(struct sl_text_archive *x, int ev, double n, const char *id)
{
    if (x->sink.note != NULL) {
        x->sink.note(x->sink.arg, ev, n, id);
    }
}

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
char *
sl__text_arc_sanitise(const char *raw, int *sanitised)
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
int
sl__text_arc_budget(struct sl_text_archive *x, uint64_t more)
{
    uint64_t t = x->total + more;

    if (x->stopped) {
        return 0;
    }
    if (t < x->total || t > x->lim.max_total) {
        sl__text_arc_note(x, SL_TEXT_ARC_LIMIT_TOTAL, 1, x->top_id);
        x->stopped = 1;
    } else if (t > RATIO_GRACE && x->lim.max_ratio > 0 &&
               t / x->lim.max_ratio > x->compressed) {
        sl__text_arc_note(x, SL_TEXT_ARC_LIMIT_RATIO, 1, x->top_id);
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
pull(struct sl_text_archive *x, struct archive *a, size_t want, size_t *n)
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
    if (!sl__text_arc_budget(x, 0)) {
        return STEP_STOP;
    }
    *n = (size_t)got;
    return 0;
}

int
sl_text_spool_open(void)
{
    const char *dir = getenv("TMPDIR");
    char *path = sl_asprintf("%s/sluice-extract.XXXXXX",
                             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    int fd = mkstemp(path);
    int e = errno;

    if (fd < 0) {
        SL_ERROR("mkstemp %s: %s", path, sl_errno_str(e));
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
spool(struct sl_text_archive *x,
      struct archive *a,
      uint64_t cap,
      int *fd,
      uint64_t *len)
{
    size_t n = 0;
    int rc = 0;

    *len = 0;
    *fd = sl_text_spool_open();
    if (*fd < 0) {
        sl_err_set(
            x->err, SL_EIO, NULL, "temporary file: %s", sl_errno_str(errno));
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
            sl_err_set(x->err,
                       SL_EIO,
                       NULL,
                       "temporary file: %s",
                       sl_errno_str(errno));
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
json_t *
sl__text_arc_meta(struct sl_text_archive *x,
                  const char *id,
                  uint64_t size,
                  int has_time,
                  int64_t sec,
                  long nsec)
{
    const char *slash = strrchr(id, '/');
    const char *name = slash + 1;
    const char *dot = strrchr(name, '.');
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
    if (has_time) {
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

/* The metadata of element @id, entry @e of an archive. */
static json_t *
element_meta(struct sl_text_archive *x,
             struct archive_entry *e,
             const char *id,
             uint64_t size)
{
    int has = archive_entry_mtime_is_set(e);

    return sl__text_arc_meta(x,
                             id,
                             size,
                             has,
                             has ? archive_entry_mtime(e) : 0,
                             has ? archive_entry_mtime_nsec(e) : 0);
}

/* Write @meta as a whole record without attachment. */
int
sl__text_arc_write_bare(struct sl_text_archive *x, const json_t *meta)
{
    int rc = x->sink.begin(x->sink.arg, meta, NULL, 0);

    if (rc == 0) {
        rc = x->sink.end(x->sink.arg);
    }
    if (rc != 0) {
        return rc;
    }
    sl__text_arc_note(x, SL_TEXT_ARC_RECORDS, 1, NULL);
    return 0;
}

/* Write @meta with the @len bytes of spool file @fd as the content. */
int
sl__text_arc_write_spooled(struct sl_text_archive *x,
                           const json_t *meta,
                           int fd,
                           uint64_t len)
{
    uint64_t left = len;
    ssize_t n = 0;
    int rc = x->sink.begin(x->sink.arg, meta, x->names.content, len);

    while (rc == 0 && left > 0) {
        n = read(fd, x->buf, left < READ_BUF ? (size_t)left : READ_BUF);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            sl_err_set(x->err, SL_EIO, NULL, "temporary file: short read");
            return SL_EIO;
        }
        rc = x->sink.write(x->sink.arg, x->buf, (size_t)n);
        left -= (uint64_t)n;
    }
    if (rc == 0) {
        rc = x->sink.end(x->sink.arg);
    }
    if (rc != 0) {
        return rc;
    }
    sl__text_arc_note(x, SL_TEXT_ARC_RECORDS, 1, NULL);
    sl__text_arc_note(x, SL_TEXT_ARC_BYTES, (double)len, NULL);
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
write_streamed(struct sl_text_archive *x,
               struct archive *a,
               const json_t *meta,
               uint64_t size)
{
    uint64_t left = size;
    size_t n = 0;
    int step = 0;
    int rc = x->sink.begin(x->sink.arg, meta, x->names.content, size);

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
        rc = x->sink.write(x->sink.arg, x->buf, n);
        left -= (uint64_t)n;
    }
    if (rc == 0) {
        rc = x->sink.end(x->sink.arg);
    }
    if (rc != 0) {
        return rc;
    }
    sl__text_arc_note(x, SL_TEXT_ARC_RECORDS, 1, NULL);
    sl__text_arc_note(x, SL_TEXT_ARC_BYTES, (double)size, NULL);
    return step;
}

/* ------------------------------------------------------------------------
 * Archives.
 * --------------------------------------------------------------------- */

/*
 * Nested archive @id (entry of @a at nesting @depth, size @size or
 * UINT64_MAX): spool it, write its own record (`_isCompound`, no
 * content), then extract it at @depth.
 */
static int
nested(struct sl_text_archive *x,
       struct archive *a,
       struct archive_entry *e,
       const char *id,
       uint64_t depth)
{
    json_t *meta = NULL;
    uint64_t len = 0;
    int fd = -1;
    int rc = 0;

    rc = spool(x, a, x->lim.max_entry, &fd, &len);
    if (rc != 0) {
        return rc;
    }
    meta = element_meta(x, e, id, len);
    if (meta == NULL) {
        rc = SL_EINTERNAL;
        goto out;
    }
    if (fd < 0) {
        sl__text_arc_note(x, SL_TEXT_ARC_LIMIT_ENTRY, 1, id);
        rc = sl__text_arc_write_bare(x, meta);
        goto out;
    }
    (void)json_object_set_new(meta, "_isCompound", json_true());
    rc = sl__text_arc_write_bare(x, meta);
    if (rc == 0) {
        rc = sl__text_arc_extract(x, fd, id, depth);
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
entry_name(struct sl_text_archive *x,
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
    sl__text_arc_note(x, SL_TEXT_ARC_UNNAMED, 1, NULL);
    return sl_asprintf("unnamed-%llu", (unsigned long long)nth);
}

/* Entry @e, the @nth of its archive, is no regular file (a link, a
 * device): reported under the id it would have had. */
static void
skip_entry(struct sl_text_archive *x,
           struct archive_entry *e,
           const char *prefix,
           uint64_t nth)
{
    const char *raw = archive_entry_pathname(e);
    char *clean = NULL;
    char *esc = NULL;
    char *id = NULL;
    int sanitised = 0;

    if (raw != NULL) {
        clean = sl__text_arc_sanitise(raw, &sanitised);
    } else {
        clean = sl_asprintf("unnamed-%llu", (unsigned long long)nth);
    }
    esc = x->sink.escape(clean);
    id = sl_asprintf("%s!/%s", prefix, esc);
    sl__text_arc_note(x, SL_TEXT_ARC_SKIPPED, 1, clean[0] != '\0' ? id : NULL);
    sl_free(id);
    sl_free(esc);
    sl_free(clean);
}

/*
 * One regular entry @e, the @nth of archive @a (id prefix @prefix,
 * nesting @depth).  Returns 0, STEP_STOP, STEP_CORRUPT or an SL_E* output
 * error.
 */
static int
extract_entry(struct sl_text_archive *x,
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

    clean = sl__text_arc_sanitise(raw, &sanitised);
    if (sanitised) {
        SL_WARN("%s: %s: entry '%s' sanitised", x->who, prefix, clean);
        sl__text_arc_note(x, SL_TEXT_ARC_SANITISED, 1, NULL);
    }
    if (clean[0] == '\0') {
        sl__text_arc_note(x, SL_TEXT_ARC_SKIPPED, 1, NULL);
        goto out;
    }
    esc = x->sink.escape(clean);
    id = sl_asprintf("%s!/%s", prefix, esc);
    if (size != UINT64_MAX && !sl__text_arc_budget(x, size)) {
        rc = STEP_STOP;
        goto out;
    }
    if (size != UINT64_MAX && size > x->lim.max_entry) {
        /* Skipping may decompress: the declared size counts. */
        sl__text_arc_note(x, SL_TEXT_ARC_LIMIT_ENTRY, 1, id);
        if (archive_read_data_skip(a) != ARCHIVE_OK) {
            rc = STEP_CORRUPT;
            goto out;
        }
        x->total += size;
        meta = element_meta(x, e, id, size);
        rc = meta != NULL ? sl__text_arc_write_bare(x, meta) : SL_EINTERNAL;
        goto out;
    }
    if (x->sink.is_archive(clean)) {
        if (depth + 1 <= x->lim.max_depth) {
            rc = nested(x, a, e, id, depth + 1);
            goto out;
        }
        sl__text_arc_note(x, SL_TEXT_ARC_LIMIT_DEPTH, 1, id);
    }
    if (size != UINT64_MAX) {
        meta = element_meta(x, e, id, size);
        rc = meta != NULL ? write_streamed(x, a, meta, size) : SL_EINTERNAL;
        goto out;
    }
    /* Unknown size: spool first, the attachment header needs the size. */
    rc = spool(x, a, x->lim.max_entry, &fd, &len);
    if (rc != 0) {
        goto out;
    }
    meta = element_meta(x, e, id, len);
    if (meta == NULL) {
        rc = SL_EINTERNAL;
    } else if (fd < 0) {
        sl__text_arc_note(x, SL_TEXT_ARC_LIMIT_ENTRY, 1, id);
        if (x->names.size != NULL) {
            (void)json_object_del(meta, x->names.size);
        }
        rc = sl__text_arc_write_bare(x, meta);
    } else {
        rc = sl__text_arc_write_spooled(x, meta, fd, len);
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
 * The formats that are archives: entries with names.  Not libarchive's
 * "all": it holds mtree, a text format that reads an ordinary text file
 * (a compressed .rst, say) as a list of entries, and empty.  Raw, which
 * takes any file no other format bids for, is asked to tell the caller
 * what such a file is.
 */
static void
support_archive_formats(struct archive *a)
{
    (void)archive_read_support_format_7zip(a);
    (void)archive_read_support_format_ar(a);
    (void)archive_read_support_format_cab(a);
    (void)archive_read_support_format_cpio(a);
    (void)archive_read_support_format_iso9660(a);
    (void)archive_read_support_format_lha(a);
    (void)archive_read_support_format_rar(a);
    (void)archive_read_support_format_rar5(a);
    (void)archive_read_support_format_tar(a);
    (void)archive_read_support_format_xar(a);
    (void)archive_read_support_format_zip(a);
    /* bids last: tells a compressed file from a corrupt archive */
    (void)archive_read_support_format_raw(a);
}

/* What the file on @fd starts with at its current offset: a mailbox, a
 * message (sl__text_mail_kind) or neither. */
static int
mail_kind(int fd)
{
    char head[1024];
    off_t at = lseek(fd, 0, SEEK_CUR);
    ssize_t n = at >= 0 ? pread(fd, head, sizeof(head), at) : -1;

    return n > 0 ? sl__text_mail_kind(head, (size_t)n) : SL__TEXT_MAIL_NONE;
}

/*
 * Only the raw format bid for archive @a: a compressed stream with no
 * archive inside is a compressed file, a document of its own (reported);
 * what is neither compressed nor an archive is corrupt (returns 1).
 */
static int
not_archive(struct sl_text_archive *x, struct archive *a, const char *prefix)
{
    if (archive_filter_count(a) > 1) {
        sl__text_arc_note(x, SL_TEXT_ARC_NOT_ARCHIVE, 1, NULL);
        return 0;
    }
    SL_WARN("%s: %s: not an archive", x->who, prefix);
    return 1;
}

/*
 * Extract the archive open on @fd (borrowed, read from its current
 * offset), whose elements get ids "@prefix!/<inner path>", at nesting
 * @depth (0: the top-level compound).  A corrupt archive is counted and
 * ends with the elements read so far; the return value is an output error
 * or SL_ECANCELED.
 */
int
sl__text_arc_extract(struct sl_text_archive *x,
                     int fd,
                     const char *prefix,
                     uint64_t depth)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e = NULL;
    uint64_t entries = 0;
    int opened = 0; /* an archive format (or raw) took it */
    int raw = 0;    /* only the raw format: no archive */
    int corrupt = 0;
    int mail = 0;
    int rc = 0;
    int ar = 0;

    if (a == NULL) {
        sl_err_set(x->err, SL_EINTERNAL, NULL, "archive_read_new failed");
        return SL_EINTERNAL;
    }
    mail = mail_kind(fd);
    if (mail != SL__TEXT_MAIL_NONE) {
        (void)archive_read_free(a);
        return sl__text_mail_walk(x, fd, prefix, mail, depth);
    }
    (void)archive_read_support_filter_all(a);
    support_archive_formats(a);
    ar = archive_read_open_fd(a, fd, READ_BUF);
    if (ar != ARCHIVE_OK) {
        SL_WARN("%s: %s: %s", x->who, prefix, arc_error(a));
        corrupt = 1;
        goto out;
    }
    opened = 1;
    for (;;) {
        if (x->sink.canceled != NULL && x->sink.canceled(x->sink.arg)) {
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
        if (archive_format(a) == ARCHIVE_FORMAT_RAW) {
            raw = 1;
            corrupt = not_archive(x, a, prefix);
            break;
        }
        if (++entries > x->lim.max_entries) {
            SL_WARN("%s: %s: more than %llu entries; the rest is "
                    "skipped",
                    x->who,
                    prefix,
                    (unsigned long long)x->lim.max_entries);
            sl__text_arc_note(x, SL_TEXT_ARC_LIMIT_ENTRIES, 1, prefix);
            break;
        }
        if (archive_entry_filetype(e) == AE_IFDIR) {
            continue;
        }
        if (archive_entry_filetype(e) != AE_IFREG ||
            archive_entry_hardlink(e) != NULL) {
            skip_entry(x, e, prefix, entries);
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
    if (opened && !raw) {
        sl__text_arc_note(x, SL_TEXT_ARC_EXTRACTED, 1, NULL);
    }
    if (corrupt) {
        sl__text_arc_note(x, SL_TEXT_ARC_CORRUPT, 1, prefix);
    }
    (void)archive_read_free(a);
    return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------------
 * The walk (text.h).
 * --------------------------------------------------------------------- */

int
sl_text_archive_probe(int fd)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e = NULL;
    off_t at = lseek(fd, 0, SEEK_CUR);
    int kind = SL_TEXT_PROBE_ARCHIVE;

    if (a == NULL || at < 0) {
        (void)archive_read_free(a);
        return kind;
    }
    switch (mail_kind(fd)) {
    case SL__TEXT_MAIL_MESSAGE:
        (void)archive_read_free(a);
        return SL_TEXT_PROBE_MESSAGE;
    case SL__TEXT_MAIL_MBOX:
        (void)archive_read_free(a);
        return SL_TEXT_PROBE_ARCHIVE;
    default:
        break;
    }
    (void)archive_read_support_filter_all(a);
    support_archive_formats(a);
    if (archive_read_open_fd(a, fd, READ_BUF) == ARCHIVE_OK &&
        archive_read_next_header(a, &e) == ARCHIVE_OK &&
        archive_format(a) == ARCHIVE_FORMAT_RAW) {
        kind = archive_filter_count(a) > 1 ? SL_TEXT_PROBE_COMPRESSED
                                           : SL_TEXT_PROBE_OTHER;
    }
    (void)archive_read_free(a);
    if (lseek(fd, at, SEEK_SET) != at) {
        kind = SL_TEXT_PROBE_ARCHIVE; /* the walk reports the read error */
    }
    return kind;
}

struct sl_text_archive *
sl_text_archive_new(const char *who,
                    const struct sl_text_archive_limits *lim,
                    const struct sl_text_archive_names *names,
                    const struct sl_text_archive_sink *sink)
{
    struct sl_text_archive *x = sl_calloc(1, sizeof(*x));

    x->who = who;
    x->lim = *lim;
    x->names = *names;
    x->sink = *sink;
    x->buf = sl_malloc(READ_BUF);
    return x;
}

void
sl_text_archive_free(struct sl_text_archive *x)
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
sl_text_archive_walk(struct sl_text_archive *x,
                     const char *id,
                     const char *source,
                     int fd,
                     uint64_t size,
                     struct sl_err *err)
{
    int rc = 0;

    x->err = err;
    x->top_id = id;
    x->source = source;
    x->compressed = size;
    x->total = 0;
    x->stopped = 0;
    (void)pthread_once(&utf8_once, utf8_locale_init);
    if (utf8_locale != (locale_t)0) {
        locale_t old = uselocale(utf8_locale);

        rc = sl__text_arc_extract(x, fd, id, 0);
        (void)uselocale(old);
    } else {
        rc = sl__text_arc_extract(x, fd, id, 0);
    }
    x->err = NULL;
    x->top_id = x->source = NULL;
    return rc;
}

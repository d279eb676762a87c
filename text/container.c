/*
 * Documents read whole (text.h): formats that a reader needs from the
 * start to the end or in any order (a compressed file, and the zip
 * containers of office documents) are spooled to an unlinked temporary
 * file as they are fed, and read from it when the document ends.
 *
 * A compressed single file (gzip, bzip2, xz, zstd, lz4, lzma, compress)
 * is decompressed with libarchive's raw format: its content is a document
 * of its own, typed by its first bytes (and its name without the
 * compression suffix), whose text, title and charset become this
 * document's.  A compressed archive (.tar.gz) is typed application/x-tar
 * inside and has no text; its entries are the archive walk's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "text/archive_int.h"

#define SPOOL_MAX    ((uint64_t)1 << 30) /* bytes of a spooled document */
#define ARC_READ_BUF ((size_t)64 << 10)

static const struct {
    const char *mime;
    const char *encoding; /* the content encoding it names */
    const char *suffix;   /* its file name suffix */
} compressed[] = {
    {"application/gzip", "gzip", ".gz"},
    {"application/x-gzip", "gzip", ".gz"},
    {"application/x-bzip2", "bzip2", ".bz2"},
    {"application/x-xz", "xz", ".xz"},
    {"application/zstd", "zstd", ".zst"},
    {"application/x-lz4", "lz4", ".lz4"},
    {"application/x-lzma", "lzma", ".lzma"},
    {"application/x-compress", "compress", ".Z"},
};

int
sl__text_container_of(const char *mime)
{
    size_t i = 0;

    if (strcmp(mime, "message/rfc822") == 0) {
        return SL__TEXT_CONT_MAIL;
    }
    for (i = 0; i < sizeof(compressed) / sizeof(compressed[0]); i++) {
        if (strcmp(mime, compressed[i].mime) == 0) {
            return SL__TEXT_CONT_COMPRESSED;
        }
    }
    return sl__text_office_of(mime);
}

/* ------------------------------------------------------------------------
 * The spool.
 * --------------------------------------------------------------------- */

int
sl__text_container_begin(struct sl_text_doc *d, int cont)
{
    d->cont = cont;
    d->spool_fd = sl_text_spool_open();
    d->spooled = 0;
    if (d->spool_fd < 0) {
        d->cont = SL__TEXT_CONT_NONE;
        d->outcome = SL_TEXT_NOTEXT;
        return SL_EIO;
    }
    return 0;
}

int
sl__text_container_feed(struct sl_text_doc *d, const char *p, size_t n)
{
    if (d->spool_fd < 0) {
        return SL_TEXT_STOP;
    }
    if (d->spooled + n > SPOOL_MAX) {
        d->too_big = 1;
        return SL_TEXT_STOP; /* read what came so far */
    }
    if (sl_write_all(d->spool_fd, p, n) != 0) {
        SL_WARN("text: spool file: %s", sl_errno_str(errno));
        (void)close(d->spool_fd);
        d->spool_fd = -1;
        d->outcome = SL_TEXT_NOTEXT;
        return SL_TEXT_STOP;
    }
    d->spooled += n;
    return 0;
}

/* ------------------------------------------------------------------------
 * Compressed single files.
 * --------------------------------------------------------------------- */

/* The encoding name and suffix of compressed type @mime. */
static void
encoding_of(const char *mime, const char **encoding, const char **suffix)
{
    size_t i = 0;

    *encoding = "";
    *suffix = "";
    for (i = 0; i < sizeof(compressed) / sizeof(compressed[0]); i++) {
        if (strcmp(mime, compressed[i].mime) == 0) {
            *encoding = compressed[i].encoding;
            *suffix = compressed[i].suffix;
        }
    }
}

/* The inner file name: @id's last segment without @suffix ("README" of
 * ".../README.gz"), in @out; "" when @id has no such suffix. */
static void
inner_name(const char *id, const char *suffix, char *out, size_t cap)
{
    const char *slash = id != NULL ? strrchr(id, '/') : NULL;
    const char *name = slash != NULL ? slash + 1 : id;
    size_t n = name != NULL ? strlen(name) : 0;
    size_t k = strlen(suffix);

    out[0] = '\0';
    if (k > 0 && n > k && strcasecmp(name + n - k, suffix) == 0) {
        (void)snprintf(out, cap, "%.*s", (int)(n - k), name);
    }
}

/* What the inner document gives to @d: its text, title, charset, type. */
static void
take_inner(struct sl_text_doc *d, const struct sl_text_doc *in)
{
    struct sl_text_result r;

    sl_text_doc_result(in, &r);
    sl__text_buf_bytes(&d->text, r.text, r.len);
    if (r.title[0] != '\0') {
        sl__text_buf_set(&d->title, SL_TEXT_TITLE_MAX, r.title);
    }
    /* a compressed office document: its metadata */
    sl__text_buf_set(&d->author, SL_TEXT_TITLE_MAX, r.author);
    sl__text_buf_set(&d->created, SL_TEXT_TITLE_MAX, r.created);
    sl__text_buf_set(&d->modified, SL_TEXT_TITLE_MAX, r.modified);
    d->pages = r.pages;
    (void)snprintf(d->charset, sizeof(d->charset), "%s", r.charset);
    (void)snprintf(d->inner_mime, sizeof(d->inner_mime), "%s", in->mime);
    d->kind = r.kind;
    d->outcome = r.outcome;
    d->malformed = r.malformed;
    if (r.full) {
        d->text.full = 1;
    }
}

/*
 * Feed the decompressed data of the current entry of @a into document
 * @in, typed by its first chunk and @name unless its type is set already,
 * decompressing at most *@left bytes (decremented; @d is cut when they
 * run out).  Returns 0 or SL_ECANCELED; a corrupt stream marks @d corrupt
 * and ends @in with what was read.
 */
int
sl__text_inflate(struct sl_text *x,
                 struct sl_text_doc *d,
                 struct archive *a,
                 struct sl_text_doc *in,
                 const char *name,
                 uint64_t *left)
{
    char *buf = sl_malloc(ARC_READ_BUF);
    size_t len = 0;
    int began = 0;
    int fed = 0;
    la_ssize_t got = 0;

    for (;;) {
        size_t want = ARC_READ_BUF - len;

        if (want > *left) {
            want = (size_t)*left;
        }
        if (want == 0) {
            d->too_big = 1; /* the budget ran out: ends as the data would */
        }
        got = want > 0 ? archive_read_data(a, buf + len, want) : 0;
        if (got < 0) {
            SL_DEBUG("text: %s: %s", name, archive_error_string(a));
            d->corrupt = 1;
        }
        if (got > 0) {
            len += (size_t)got;
            *left -= (uint64_t)got;
        }
        /* the first chunk types the document; later ones are fed */
        if (!began && (len == ARC_READ_BUF || got <= 0)) {
            struct sl_text_hints h = {NULL, NULL, name};

            if (in->mime[0] == '\0') {
                (void)sl_text_mime_detect(x, &h, buf, len, in->mime);
            }
            in->depth = d->depth + 1;
            began = 1;
            if (sl__text_doc_start(x, in, buf, len) != 0) {
                fed = SL_TEXT_STOP;
            }
        }
        if (began && fed == 0 && len > 0 && (len == ARC_READ_BUF || got <= 0)) {
            fed = sl_text_doc_feed(in, buf, len);
            len = 0;
        }
        if (got <= 0 || fed != 0) {
            break;
        }
    }
    sl_free(buf);
    return fed < 0 ? fed : 0;
}

/* Read the compressed file spooled in @d. */
static int
read_compressed(struct sl_text *x, struct sl_text_doc *d)
{
    struct archive *a = archive_read_new();
    struct archive_entry *e = NULL;
    struct sl_text_doc *in = NULL;
    const char *encoding = NULL;
    const char *suffix = NULL;
    uint64_t left = SL__TEXT_INFLATE_MAX;
    char name[256];
    int rc = 0;

    encoding_of(d->mime, &encoding, &suffix);
    (void)snprintf(d->encoding, sizeof(d->encoding), "%s", encoding);
    inner_name(d->id, suffix, name, sizeof(name));
    if (a == NULL) {
        return SL_EINTERNAL;
    }
    (void)archive_read_support_filter_all(a);
    (void)archive_read_support_format_raw(a);
    if (archive_read_open_fd(a, d->spool_fd, ARC_READ_BUF) != ARCHIVE_OK ||
        archive_read_next_header(a, &e) != ARCHIVE_OK) {
        SL_DEBUG("text: %s: %s", d->id, archive_error_string(a));
        d->corrupt = 1;
        d->outcome = SL_TEXT_NOTEXT;
        (void)archive_read_free(a);
        return 0;
    }
    in = sl_text_doc_new(x);
    rc = sl__text_inflate(x, d, a, in, name[0] != '\0' ? name : NULL, &left);
    if (sl_text_doc_end(in, rc != 0) != 0 && rc == 0) {
        rc = SL_ECANCELED;
    }
    take_inner(d, in);
    sl_text_doc_free(in);
    (void)archive_read_free(a);
    return rc;
}

/* ------------------------------------------------------------------------
 * The end of a spooled document.
 * --------------------------------------------------------------------- */

int
sl__text_container_end(struct sl_text *x, struct sl_text_doc *d, int abort)
{
    int rc = 0;

    if (d->spool_fd < 0) {
        return 0;
    }
    if (!abort && lseek(d->spool_fd, 0, SEEK_SET) == 0) {
        if (d->depth >= SL__TEXT_NESTING_MAX) {
            d->outcome = SL_TEXT_NOTEXT;
        } else if (d->cont == SL__TEXT_CONT_COMPRESSED) {
            rc = read_compressed(x, d);
        } else if (d->cont == SL__TEXT_CONT_MAIL) {
            rc = sl__text_mail_read(x, d);
        } else if (d->cont != SL__TEXT_CONT_NONE) {
            rc = sl__text_office_read(x, d);
        } else {
            d->outcome = SL_TEXT_NOTEXT;
        }
    }
    (void)close(d->spool_fd);
    d->spool_fd = -1;
    return rc;
}

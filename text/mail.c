/*
 * Mailboxes and messages as compounds (text.h "Archives"), read with
 * GMime: each message of an mbox file is an element "<mbox>!/<n>" (n from
 * 1) whose content is the message (message/rfc822, its text is the
 * textExtractor's), and each attachment of a message is an element below
 * it, "<message>!/<file name>", with its decoded content; an attached
 * message is an element too, with its own attachments below it, and an
 * attached archive is walked like any nested archive.  The parser keeps
 * part contents in the file (persistent stream), so memory holds one
 * message's structure, never its bodies.  Messages per mailbox and parts
 * per message count against maxEntries, their bytes against the budget of
 * the top-level compound, nesting against maxNestingDepth.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gmime/gmime.h>

#include "text/archive_int.h"

#define MAIL_NAME_MAX 200 /* bytes of an attachment's name in an id */

static pthread_once_t gmime_once = PTHREAD_ONCE_INIT;

static void
gmime_init(void)
{
    g_mime_init();
}

/* Is the line at @p (up to @end) "Name: value" with a header name of
 * letters, digits and '-'? */
static int
header_line(const char *p, const char *end)
{
    const char *q = p;

    while (q < end && ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z') ||
                       (*q >= '0' && *q <= '9') || *q == '-')) {
        q++;
    }
    return q > p && q < end && *q == ':';
}

int
sl__text_mail_kind(const char *head, size_t len)
{
    static const char *const first[] = {"Received:",
                                        "Return-Path:",
                                        "Delivered-To:",
                                        "Message-ID:",
                                        "From:",
                                        "Date:",
                                        "Subject:",
                                        "MIME-Version:",
                                        "X-"};
    const char *nl = memchr(head, '\n', len);
    size_t i = 0;

    if (len > 5 && memcmp(head, "From ", 5) == 0 && nl != NULL &&
        header_line(nl + 1, head + len)) {
        return SL__TEXT_MAIL_MBOX;
    }
    for (i = 0; i < sizeof(first) / sizeof(first[0]); i++) {
        size_t n = strlen(first[i]);

        if (len > n && strncasecmp(head, first[i], n) == 0 &&
            header_line(head, head + len)) {
            return SL__TEXT_MAIL_MESSAGE;
        }
    }
    return SL__TEXT_MAIL_NONE;
}

/* ------------------------------------------------------------------------
 * Elements.
 * --------------------------------------------------------------------- */

/* Write @o (a message or a part's decoded content when @part) into a new
 * spool file: its descriptor at offset 0 and *len; -1 when the spool file
 * failed (x->err set), -2 when the object could not be read back (a
 * damaged part: GMime gives no more than that). */
static int
spool_object(struct sl_text_archive *x, GMimeObject *o, int part, uint64_t *len)
{
    int fd = sl_text_spool_open();
    GMimeStream *s = NULL;
    struct stat st;
    ssize_t n = -1;
    int e = 0;

    if (fd < 0) {
        sl_err_set(
            x->err, SL_EIO, NULL, "temporary file: %s", sl_errno_str(errno));
        return -1;
    }
    s = g_mime_stream_fs_new(dup(fd));
    g_mime_stream_fs_set_owner(GMIME_STREAM_FS(s), TRUE);
    errno = 0;
    if (part) {
        GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(o));

        n = w != NULL ? g_mime_data_wrapper_write_to_stream(w, s) : 0;
    } else {
        n = g_mime_object_write_to_stream(o, NULL, s);
    }
    if (n >= 0 && g_mime_stream_flush(s) != 0) {
        n = -1;
    }
    e = errno;
    g_object_unref(s);
    /* the size is the file's: what GMime returns counts what it meant to
     * write, which a damaged part can make more than it wrote */
    if (n >= 0 && fstat(fd, &st) == 0 && lseek(fd, 0, SEEK_SET) == 0) {
        *len = (uint64_t)st.st_size;
        return fd;
    }
    (void)close(fd);
    if (e == ENOSPC || e == EDQUOT || e == EIO || e == EFBIG) {
        sl_err_set(x->err,
                   sl_err_from_errno(e),
                   NULL,
                   "temporary file: %s",
                   sl_errno_str(e));
        return -1;
    }
    return -2; /* the message could not be read back: a damaged part */
}

/* The time of message @m (its Date header), for the element's date. */
static int
message_time(GMimeMessage *m, int64_t *sec)
{
    GDateTime *d = m != NULL ? g_mime_message_get_date(m) : NULL;

    if (d == NULL) {
        return 0;
    }
    *sec = g_date_time_to_unix(d);
    return 1;
}

/*
 * Write element @id: @o spooled (decoded part content with @part, else
 * the message), typed @mime, dated by message @m (may be NULL).  *fd_out,
 * when not NULL, gets the spool file back at offset 0 for a nested walk
 * (the caller closes it).  Returns 0, STEP_STOP or an SL_E* error.
 */
static int
write_element(struct sl_text_archive *x,
              const char *id,
              GMimeObject *o,
              int part,
              const char *mime,
              GMimeMessage *m,
              int *fd_out)
{
    uint64_t len = 0;
    int64_t sec = 0;
    int has = message_time(m, &sec);
    int fd = spool_object(x, o, part, &len);
    json_t *meta = NULL;
    int rc = 0;

    if (fd == -2) {
        SL_WARN("%s: %s: cannot be read; skipped", x->who, id);
        sl__text_arc_note(x, SL_TEXT_ARC_CORRUPT, 1, id);
        return 0;
    }
    if (fd < 0) {
        return x->err != NULL && x->err->code != 0 ? x->err->code : SL_EIO;
    }
    if (!sl__text_arc_budget(x, len)) {
        (void)close(fd);
        return STEP_STOP;
    }
    x->total += len;
    meta = sl__text_arc_meta(x, id, len, has, sec, 0);
    if (meta == NULL) {
        (void)close(fd);
        return SL_EINTERNAL;
    }
    if (mime != NULL) {
        (void)json_object_set_new(meta, "mimeType", json_string(mime));
    }
    if (len > x->lim.max_entry) {
        sl__text_arc_note(x, SL_TEXT_ARC_LIMIT_ENTRY, 1, id);
        rc = sl__text_arc_write_bare(x, meta);
    } else {
        rc = sl__text_arc_write_spooled(x, meta, fd, len);
    }
    json_decref(meta);
    if (rc == 0 && fd_out != NULL && lseek(fd, 0, SEEK_SET) == 0) {
        *fd_out = fd;
        return 0;
    }
    (void)close(fd);
    return rc;
}

/* ------------------------------------------------------------------------
 * The walk.
 * --------------------------------------------------------------------- */

struct mail_walk {
    struct sl_text_archive *x;
    uint64_t parts;       /* of the current message, for maxEntries */
    uint64_t attachments; /* elements of the current message so far */
};

static int walk_object(struct mail_walk *w,
                       GMimeObject *o,
                       GMimeMessage *m,
                       const char *prefix,
                       uint64_t depth);

/* The id of the next attachment of @prefix, named @name or, without a
 * name, "part-<k>" ("message-<k>.eml" for a @message), k its number in
 * its message from 1: a new string. */
static char *
attachment_id(struct mail_walk *w,
              const char *prefix,
              const char *name,
              int message)
{
    char fallback[48];
    char *clean = NULL;
    char *esc = NULL;
    char *id = NULL;
    int sanitised = 0;

    (void)snprintf(fallback,
                   sizeof(fallback),
                   message ? "message-%llu.eml" : "part-%llu",
                   (unsigned long long)++w->attachments);
    clean = sl__text_arc_sanitise(name != NULL && name[0] != '\0' &&
                                          strlen(name) <= MAIL_NAME_MAX
                                      ? name
                                      : fallback,
                                  &sanitised);
    if (sanitised) {
        sl__text_arc_note(w->x, SL_TEXT_ARC_SANITISED, 1, NULL);
    }
    if (clean[0] == '\0') {
        sl_free(clean);
        clean = sl_strdup(fallback);
    }
    esc = w->x->sink.escape(clean);
    id = sl_asprintf("%s!/%s", prefix, esc);
    sl_free(esc);
    sl_free(clean);
    return id;
}

/* An attached message: an element of its own, its parts below it. */
static int
walk_message_part(struct mail_walk *w,
                  GMimeMessagePart *mp,
                  const char *prefix,
                  uint64_t depth)
{
    GMimeMessage *inner = g_mime_message_part_get_message(mp);
    const char *name = g_mime_object_get_content_disposition_parameter(
        GMIME_OBJECT(mp), "filename");
    char *id = NULL;
    int rc = 0;

    if (inner == NULL) {
        return 0;
    }
    id = attachment_id(w, prefix, name, 1);
    rc = write_element(
        w->x, id, GMIME_OBJECT(inner), 0, "message/rfc822", inner, NULL);
    if (rc == 0 && depth + 1 <= w->x->lim.max_depth) {
        uint64_t outer = w->attachments;

        w->attachments = 0;
        rc = walk_object(
            w, g_mime_message_get_mime_part(inner), inner, id, depth + 1);
        w->attachments = outer;
    } else if (rc == 0) {
        sl__text_arc_note(w->x, SL_TEXT_ARC_LIMIT_DEPTH, 1, id);
    }
    sl_free(id);
    return rc;
}

/* A leaf part: an element when it is an attachment (a file name, an
 * attachment disposition, or not text), walked when it is an archive. */
static int
walk_part(struct mail_walk *w,
          GMimePart *p,
          GMimeMessage *m,
          const char *prefix,
          uint64_t depth)
{
    GMimeContentType *ct = g_mime_object_get_content_type(GMIME_OBJECT(p));
    const char *name = g_mime_part_get_filename(p);
    char *mime = NULL;
    char *id = NULL;
    int fd = -1;
    int rc = 0;

    if (!g_mime_part_is_attachment(p) && name == NULL &&
        g_mime_content_type_is_type(ct, "text", "*")) {
        return 0; /* the message's own text */
    }
    id = attachment_id(w, prefix, name, 0);
    mime = g_mime_content_type_get_mime_type(ct);
    rc = write_element(w->x,
                       id,
                       GMIME_OBJECT(p),
                       1,
                       mime,
                       m,
                       w->x->sink.is_archive(id) ? &fd : NULL);
    if (rc == 0 && fd >= 0) {
        if (depth + 1 <= w->x->lim.max_depth) {
            rc = sl__text_arc_extract(w->x, fd, id, depth + 1);
        } else {
            sl__text_arc_note(w->x, SL_TEXT_ARC_LIMIT_DEPTH, 1, id);
        }
    }
    if (fd >= 0) {
        (void)close(fd);
    }
    g_free(mime);
    sl_free(id);
    return rc;
}

/* Walk part @o of message @m: multiparts into their parts, attached
 * messages and attachments into elements below @prefix. */
static int
walk_object(struct mail_walk *w,
            GMimeObject *o,
            GMimeMessage *m,
            const char *prefix,
            uint64_t depth)
{
    int rc = 0;
    int i = 0;

    if (o == NULL || w->x->stopped) {
        return 0;
    }
    if (w->x->sink.canceled != NULL && w->x->sink.canceled(w->x->sink.arg)) {
        return SL_ECANCELED;
    }
    if (++w->parts > w->x->lim.max_entries) {
        if (w->parts == w->x->lim.max_entries + 1) {
            sl__text_arc_note(w->x, SL_TEXT_ARC_LIMIT_ENTRIES, 1, prefix);
        }
        return 0;
    }
    if (GMIME_IS_MULTIPART(o)) {
        int n = g_mime_multipart_get_count(GMIME_MULTIPART(o));

        for (i = 0; rc == 0 && i < n; i++) {
            rc = walk_object(w,
                             g_mime_multipart_get_part(GMIME_MULTIPART(o), i),
                             m,
                             prefix,
                             depth);
        }
        return rc;
    }
    if (GMIME_IS_MESSAGE_PART(o)) {
        return walk_message_part(w, GMIME_MESSAGE_PART(o), prefix, depth);
    }
    if (GMIME_IS_PART(o)) {
        return walk_part(w, GMIME_PART(o), m, prefix, depth);
    }
    return 0;
}

/* One message @m, the @n th of the mailbox or the message itself (@n 0). */
static int
walk_message(struct mail_walk *w,
             GMimeMessage *m,
             const char *prefix,
             uint64_t n,
             uint64_t depth)
{
    char *id = NULL;
    int rc = 0;

    w->parts = 0;
    w->attachments = 0;
    if (n == 0) {
        return walk_object(
            w, g_mime_message_get_mime_part(m), m, prefix, depth);
    }
    id = sl_asprintf("%s!/%llu", prefix, (unsigned long long)n);
    rc = write_element(w->x, id, GMIME_OBJECT(m), 0, "message/rfc822", m, NULL);
    if (rc == 0) {
        rc = walk_object(w, g_mime_message_get_mime_part(m), m, id, depth + 1);
    }
    sl_free(id);
    return rc;
}

int
sl__text_mail_walk(struct sl_text_archive *x,
                   int fd,
                   const char *prefix,
                   int kind,
                   uint64_t depth)
{
    struct mail_walk w = {x, 0, 0};
    off_t at = lseek(fd, 0, SEEK_CUR);
    GMimeStream *s = NULL;
    GMimeParser *p = NULL;
    uint64_t n = 0;
    int rc = 0;

    (void)pthread_once(&gmime_once, gmime_init);
    s = g_mime_stream_fs_new_with_bounds(dup(fd), at < 0 ? 0 : at, -1);
    g_mime_stream_fs_set_owner(GMIME_STREAM_FS(s), TRUE);
    p = g_mime_parser_new_with_stream(s);
    g_object_unref(s);
    g_mime_parser_set_format(p,
                             kind == SL__TEXT_MAIL_MBOX ? GMIME_FORMAT_MBOX
                                                        : GMIME_FORMAT_MESSAGE);
    g_mime_parser_set_persist_stream(p, TRUE);
    sl__text_arc_note(x, SL_TEXT_ARC_EXTRACTED, 1, NULL);
    while (rc == 0 && !x->stopped && !g_mime_parser_eos(p)) {
        GMimeMessage *m = g_mime_parser_construct_message(p, NULL);

        if (m == NULL) {
            if (n == 0) {
                SL_WARN("%s: %s: no message", x->who, prefix);
                sl__text_arc_note(x, SL_TEXT_ARC_CORRUPT, 1, prefix);
            }
            break;
        }
        if (++n > x->lim.max_entries) {
            sl__text_arc_note(x, SL_TEXT_ARC_LIMIT_ENTRIES, 1, prefix);
            g_object_unref(m);
            break;
        }
        rc = walk_message(
            &w, m, prefix, kind == SL__TEXT_MAIL_MBOX ? n : 0, depth);
        g_object_unref(m);
        if (kind != SL__TEXT_MAIL_MBOX) {
            break;
        }
    }
    g_object_unref(p);
    return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------------------
 * A message as a document (container.c): its text and its metadata.
 * --------------------------------------------------------------------- */

#define TEXT_PARTS_MAX 1000u /* text parts of one message read */

/* Append text @s (@n bytes of UTF-8) to @d, a line break before it when
 * the text has something already. */
static void
append_text(struct sl_text_doc *d, const char *s, size_t n)
{
    if (d->text.b.len > 0) {
        sl__text_buf_bytes(&d->text, "\n", 1);
    }
    sl__text_buf_bytes(&d->text, s, n);
}

/* The text of HTML part @html (UTF-8) through a document of its own. */
static void
append_html(struct sl_text *x, struct sl_text_doc *d, const char *html)
{
    struct sl_text_doc *in = sl_text_doc_new(x);
    struct sl_text_result r;
    size_t n = strlen(html);

    (void)snprintf(in->mime, sizeof(in->mime), "text/html");
    in->given = "UTF-8";
    in->depth = d->depth + 1;
    if (sl__text_doc_start(x, in, html, n) == 0) {
        (void)sl_text_doc_feed(in, html, n);
    }
    (void)sl_text_doc_end(in, 0);
    sl_text_doc_result(in, &r);
    append_text(d, r.text, r.len);
    sl_text_doc_free(in);
}

/* Is @o a part of the message's own text (not an attachment)? */
static int
own_text(GMimeObject *o, const char *subtype)
{
    GMimeContentType *ct = g_mime_object_get_content_type(o);

    return GMIME_IS_TEXT_PART(o) && !g_mime_part_is_attachment(GMIME_PART(o)) &&
           g_mime_part_get_filename(GMIME_PART(o)) == NULL &&
           g_mime_content_type_is_type(ct, "text", subtype);
}

/* The alternative of @mp to read: plain text before HTML, else none. */
static GMimeObject *
best_alternative(GMimeMultipart *mp)
{
    int n = g_mime_multipart_get_count(mp);
    int i = 0;

    for (i = 0; i < n; i++) {
        if (own_text(g_mime_multipart_get_part(mp, i), "plain")) {
            return g_mime_multipart_get_part(mp, i);
        }
    }
    for (i = 0; i < n; i++) {
        GMimeObject *o = g_mime_multipart_get_part(mp, i);

        if (own_text(o, "html") || GMIME_IS_MULTIPART(o)) {
            return o;
        }
    }
    return NULL;
}

/* Append the text of part @o (attachments and attached messages are
 * elements of the walk, not text of the message). */
static void
text_of(struct sl_text *x, struct sl_text_doc *d, GMimeObject *o, unsigned *k)
{
    char *s = NULL;

    if (o == NULL || d->text.full || ++*k > TEXT_PARTS_MAX) {
        return;
    }
    if (GMIME_IS_MULTIPART(o)) {
        GMimeMultipart *mp = GMIME_MULTIPART(o);
        GMimeContentType *ct = g_mime_object_get_content_type(o);
        int n = g_mime_multipart_get_count(mp);
        int i = 0;

        if (g_mime_content_type_is_type(ct, "multipart", "alternative")) {
            text_of(x, d, best_alternative(mp), k);
            return;
        }
        for (i = 0; i < n; i++) {
            text_of(x, d, g_mime_multipart_get_part(mp, i), k);
        }
        return;
    }
    if (own_text(o, "html")) {
        s = g_mime_text_part_get_text(GMIME_TEXT_PART(o));
        if (s != NULL) {
            append_html(x, d, s);
        }
    } else if (own_text(o, "*")) {
        s = g_mime_text_part_get_text(GMIME_TEXT_PART(o));
        if (s != NULL) {
            append_text(d, s, strlen(s));
        }
    }
    g_free(s);
}

/* The sender (From, decoded: "Ada Lovelace <ada@example.org>") as the
 * author, the Date header (ISO 8601, UTC) as the creation date. */
static void
message_meta(struct sl_text_doc *d, GMimeMessage *m)
{
    InternetAddressList *from = g_mime_message_get_from(m);
    GDateTime *date = g_mime_message_get_date(m);

    if (from != NULL && internet_address_list_length(from) > 0) {
        char *who = internet_address_list_to_string(from, NULL, FALSE);

        sl__text_buf_set(&d->author, SL_TEXT_TITLE_MAX, who);
        g_free(who);
    }
    if (date != NULL) {
        GDateTime *utc = g_date_time_to_utc(date);
        char *iso =
            utc != NULL ? g_date_time_format(utc, "%Y-%m-%dT%H:%M:%SZ") : NULL;

        if (iso != NULL) {
            sl__text_buf_set(&d->created, SL_TEXT_TITLE_MAX, iso);
        }
        g_free(iso);
        if (utc != NULL) {
            g_date_time_unref(utc);
        }
    }
}

int
sl__text_mail_read(struct sl_text *x, struct sl_text_doc *d)
{
    GMimeStream *s = NULL;
    GMimeParser *p = NULL;
    GMimeMessage *m = NULL;
    const char *subject = NULL;
    unsigned k = 0;

    (void)pthread_once(&gmime_once, gmime_init);
    s = g_mime_stream_fs_new(dup(d->spool_fd));
    g_mime_stream_fs_set_owner(GMIME_STREAM_FS(s), TRUE);
    p = g_mime_parser_new_with_stream(s);
    g_object_unref(s);
    g_mime_parser_set_format(p, GMIME_FORMAT_MESSAGE);
    m = g_mime_parser_construct_message(p, NULL);
    g_object_unref(p);
    if (m == NULL) {
        d->corrupt = 1;
        d->outcome = SL_TEXT_NOTEXT;
        return 0;
    }
    d->kind = SL_TEXT_KIND_TEXT;
    subject = g_mime_message_get_subject(m);
    if (subject != NULL && subject[0] != '\0') {
        sl__text_buf_set(&d->title, SL_TEXT_TITLE_MAX, subject);
    }
    message_meta(d, m);
    text_of(x, d, g_mime_message_get_mime_part(m), &k);
    g_object_unref(m);
    return 0;
}

/*
 * MIME types (text.h): the document's own type, its file extension and
 * libmagic's answer for its first bytes.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "text/text_int.h"

/* ------------------------------------------------------------------------
 * MIME types.
 * --------------------------------------------------------------------- */

/* Types guessed from the file extension when libmagic has nothing better
 * than text/plain or application/octet-stream, or only names the
 * container (zip, OLE2) of an office document. */
static const struct {
    const char *ext;
    const char *mime;
} ext_types[] = {
    {"pdf", "application/pdf"},
    {"docx",
     "application/vnd.openxmlformats-officedocument.wordprocessingml."
     "document"},
    {"xlsx",
     "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
    {"pptx",
     "application/vnd.openxmlformats-officedocument.presentationml."
     "presentation"},
    {"odt", "application/vnd.oasis.opendocument.text"},
    {"ods", "application/vnd.oasis.opendocument.spreadsheet"},
    {"odp", "application/vnd.oasis.opendocument.presentation"},
    {"odg", "application/vnd.oasis.opendocument.graphics"},
    {"epub", "application/epub+zip"},
    {"doc", "application/msword"},
    {"xls", "application/vnd.ms-excel"},
    {"ppt", "application/vnd.ms-powerpoint"},
    {"htm", "text/html"},
    {"html", "text/html"},
    {"shtml", "text/html"},
    {"xhtml", "application/xhtml+xml"},
    {"xht", "application/xhtml+xml"},
    {"xml", "application/xml"},
    {"xsd", "application/xml"},
    {"xsl", "application/xml"},
    {"xslt", "application/xml"},
    {"rss", "application/rss+xml"},
    {"atom", "application/atom+xml"},
    {"svg", "image/svg+xml"},
    {"txt", "text/plain"},
    {"text", "text/plain"},
    {"log", "text/plain"},
    {"md", "text/plain"},
    {"markdown", "text/plain"},
    {"rst", "text/plain"},
    {"csv", "text/plain"},
    {"tsv", "text/plain"},
    {"json", "text/plain"},
    {"yaml", "text/plain"},
    {"yml", "text/plain"},
    {"ini", "text/plain"},
    {"cfg", "text/plain"},
    {"conf", "text/plain"},
    {"properties", "text/plain"},
    {"c", "text/plain"},
    {"h", "text/plain"},
    {"cc", "text/plain"},
    {"cpp", "text/plain"},
    {"hpp", "text/plain"},
    {"java", "text/plain"},
    {"py", "text/plain"},
    {"js", "text/plain"},
    {"ts", "text/plain"},
    {"css", "text/plain"},
    {"sh", "text/plain"},
    {"sql", "text/plain"},
    {"tex", "text/plain"},
};

static int
has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s);
    size_t k = strlen(suffix);

    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Lower-case @in without parameters ("Text/HTML; charset=x" becomes
 * "text/html") into @out; "" unless it looks like type/subtype. */
void
sl_text_mime_normalize(const char *in, char *out)
{
    size_t o = 0;

    out[0] = '\0';
    if (in == NULL) {
        return;
    }
    while (*in == ' ' || *in == '\t') {
        in++;
    }
    while (*in != '\0' && *in != ';' && *in != ' ' && *in != '\t' &&
           o + 1 < SL_TEXT_MIME_MAX) {
        char c = *in++;

        out[o++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    out[o] = '\0';
    if (strchr(out, '/') == NULL || out[0] == '/' || out[o - 1] == '/') {
        out[0] = '\0';
    }
}

const char *
sl_text_mime_by_extension(const char *ext, const char *id)
{
    size_t i = 0;

    if (ext == NULL && id != NULL) {
        const char *slash = strrchr(id, '/');
        const char *name = slash != NULL ? slash + 1 : id;
        const char *dot = strrchr(name, '.');

        ext = dot != NULL && dot != name ? dot + 1 : NULL;
    }
    if (ext == NULL) {
        return NULL;
    }
    for (i = 0; i < sizeof(ext_types) / sizeof(ext_types[0]); i++) {
        if (strcasecmp(ext, ext_types[i].ext) == 0) {
            return ext_types[i].mime;
        }
    }
    return NULL;
}

/* libmagic answers that say little about the content. */
static int
mime_weak(const char *m)
{
    return m[0] == '\0' || strcmp(m, "text/plain") == 0 ||
           strcmp(m, "application/octet-stream") == 0 ||
           strcmp(m, "application/x-empty") == 0 ||
           strcmp(m, "inode/x-empty") == 0;
}

/* A type given for content of unknown type (a web server's default). */
static int
mime_unknown(const char *m)
{
    return strcmp(m, "application/octet-stream") == 0 ||
           strcmp(m, "binary/octet-stream") == 0 ||
           strcmp(m, "application/unknown") == 0 ||
           strcmp(m, "application/x-unknown") == 0;
}

static int
mime_is_xml(const char *m)
{
    return strcmp(m, "application/xml") == 0 || strcmp(m, "text/xml") == 0 ||
           has_suffix(m, "+xml");
}

/* Text a person can read as it is: text types, XML, JSON, scripts. */
static int
mime_textual(const char *m)
{
    return strncmp(m, "text/", 5) == 0 || mime_is_xml(m) ||
           strcmp(m, "application/json") == 0 || has_suffix(m, "+json") ||
           strcmp(m, "application/x-ndjson") == 0 ||
           strcmp(m, "application/javascript") == 0 ||
           strcmp(m, "application/x-javascript") == 0 ||
           strcmp(m, "application/ecmascript") == 0 ||
           strcmp(m, "application/x-sh") == 0 ||
           strcmp(m, "application/x-shellscript") == 0;
}

int
sl_text_mime_kind(const char *m)
{
    if (strcmp(m, "text/html") == 0 ||
        strcmp(m, "application/xhtml+xml") == 0) {
        return SL_TEXT_KIND_HTML;
    }
    if (mime_is_xml(m)) {
        return SL_TEXT_KIND_XML;
    }
    return mime_textual(m) ? SL_TEXT_KIND_TEXT : SL_TEXT_KIND_OTHER;
}

/*
 * Does libmagic's @magic leave the record's own type @given standing?
 * Yes when libmagic is weak or agrees, when both are textual, or when
 * neither is textual and both have the same top-level type (a zip-based
 * office type that libmagic calls application/zip).  It disagrees
 * strongly when one is textual and the other is not (a PDF announced as
 * text/html), or the top-level types differ (image/png against
 * application/pdf).
 */
static int
mime_trust_given(const char *given, const char *magic)
{
    const char *gs = strchr(given, '/');
    const char *ms = strchr(magic, '/');

    if (mime_weak(magic) || strcmp(given, magic) == 0) {
        return 1;
    }
    if (mime_textual(given) != mime_textual(magic)) {
        return 0;
    }
    if (mime_textual(given)) {
        return 1;
    }
    return gs - given == ms - magic &&
           strncmp(given, magic, (size_t)(gs - given)) == 0;
}

/*
 * Is @magic the container format that libmagic names when it cannot tell
 * which document is inside (a zip without the members it looks for, an
 * OLE2 file it cannot place), and the extension's type @ext a document of
 * that container?  Then the extension says more than libmagic.
 */
static int
mime_container_of(const char *magic, const char *ext)
{
    if (strcmp(magic, "application/zip") == 0) {
        return sl__text_office_of(ext) != SL__TEXT_CONT_NONE;
    }
    if (strcmp(magic, "application/x-ole-storage") == 0 ||
        strcmp(magic, "application/cdfv2") == 0 ||
        strcmp(magic, "application/vnd.ms-office") == 0) {
        return strcmp(ext, "application/msword") == 0 ||
               strcmp(ext, "application/vnd.ms-excel") == 0 ||
               strcmp(ext, "application/vnd.ms-powerpoint") == 0;
    }
    return 0;
}

/* libmagic's type of @len bytes @head into @out ("" when unavailable).
 * One magic_t per extractor, loaded on first use. */
static void
mime_magic(struct sl_text *x, const char *head, size_t len, char *out)
{
    const char *m = NULL;

    out[0] = '\0';
    if (x->magic == NULL && !x->magic_failed) {
        x->magic = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR);
        if (x->magic == NULL || magic_load(x->magic, NULL) != 0) {
            SL_WARN("textExtractor: libmagic: %s; MIME types come from the "
                    "records and file extensions only",
                    x->magic != NULL ? magic_error(x->magic) : "no memory");
            if (x->magic != NULL) {
                magic_close(x->magic);
                x->magic = NULL;
            }
            x->magic_failed = 1;
        }
    }
    if (x->magic != NULL) {
        m = magic_buffer(x->magic, head, len);
    }
    sl_text_mime_normalize(m, out);
}

/*
 * Does @head look like text, so that a textual file extension can be
 * trusted without asking libmagic (which costs 0.5-4 ms a record, most of
 * the extractor's time)?  A byte order mark says yes; a known binary
 * signature or a NUL byte says no.
 */
int
sl__text_head_textual(const char *head, size_t len)
{
    static const struct {
        const char *sig;
        size_t len;
    } sigs[] = {
        {"%PDF", 4},
        {"PK\003\004", 4},
        {"\211PNG", 4},
        {"\037\213", 2},
        {"GIF8", 4},
        {"\377\330\377", 3},
        {"BZh", 3},
        {"\3757zXZ", 5},
        {"7z\274\257", 4},
        {"\320\317\021\340", 4},
    };
    size_t i = 0;

    if (sl__text_charset_bom(head, len) != NULL) {
        return 1;
    }
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        if (len >= sigs[i].len && memcmp(head, sigs[i].sig, sigs[i].len) == 0) {
            return 0;
        }
    }
    return memchr(head, 0, len) == NULL;
}

/*
 * The MIME type of a record from the first @len bytes of its content:
 * the record's `mimeType` unless libmagic disagrees strongly, else
 * libmagic's, refined by the file extension when libmagic only says
 * text/plain or application/octet-stream, generic XML for an HTML or
 * XML-based file, or the container (zip, OLE2) of the extension's
 * document.
 */
int
sl_text_mime_detect(struct sl_text *x,
                    const struct sl_text_hints *h,
                    const char *head,
                    size_t len,
                    char *out)
{
    const char *ext = sl_text_mime_by_extension(h->extension, h->id);
    char given[SL_TEXT_MIME_MAX];
    char magic[SL_TEXT_MIME_MAX];

    sl_text_mime_normalize(h->mime, given);
    if (mime_unknown(given)) {
        given[0] = '\0'; /* says nothing of the content */
    }
    /* Fast path: a textual extension (and record type, if any) over
     * content that looks like text. */
    if (ext != NULL && sl_text_mime_kind(ext) != SL_TEXT_KIND_OTHER &&
        (given[0] == '\0' || mime_textual(given)) &&
        sl__text_head_textual(head, len)) {
        (void)snprintf(
            out, SL_TEXT_MIME_MAX, "%s", given[0] != '\0' ? given : ext);
        return 1;
    }
    mime_magic(x, head, len, magic);
    if (given[0] != '\0' && mime_trust_given(given, magic)) {
        (void)snprintf(out, SL_TEXT_MIME_MAX, "%s", given);
    } else if (ext != NULL &&
               (mime_weak(magic) || mime_container_of(magic, ext) ||
                (mime_is_xml(magic) &&
                 sl_text_mime_kind(ext) != SL_TEXT_KIND_TEXT))) {
        (void)snprintf(out, SL_TEXT_MIME_MAX, "%s", ext);
    } else if (magic[0] != '\0') {
        (void)snprintf(out, SL_TEXT_MIME_MAX, "%s", magic);
    } else {
        (void)snprintf(out, SL_TEXT_MIME_MAX, "application/octet-stream");
    }
    if (given[0] != '\0' && strcmp(out, given) != 0) {
        SL_DEBUG(
            "textExtractor: %s: mimeType %s replaced by %s", h->id, given, out);
    }
    return 0;
}

/*
 * textExtractor (SMILA.md 7.4): for each record of input
 * `recordsToExtract`, streams the content attachment (`fileContent` by
 * default) through a MIME type detector (libmagic, the file extension,
 * the record's own `mimeType`) and then through one extractor: plain text
 * with charset detection (libuchardet) and iconv, the libxml2 HTML or XML
 * SAX push parser, or an external converter process.  It writes the
 * record's metadata without attachments plus `mimeType`, `charset` and
 * `title` to output `extractedRecords`, and the text (always valid UTF-8)
 * as attachment `text` (parameter textOutput "attachment", the default: no
 * JSON escaping and parsing of every text on its way to the indexWriter)
 * or as attribute `text` (textOutput "attribute").
 * Memory is a few fixed buffers per task plus the text, which is capped
 * by maxTextBytes; content beyond maxContentBytes is read and skipped.
 * See docs/workers.md "textExtractor".
 */
#include <ctype.h>
#include <fcntl.h>
#include <iconv.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libxml/HTMLparser.h>
#include <libxml/SAX2.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <magic.h>
#include <uchardet.h>

#include "web/web.h"
#include "workers/workers_int.h"

#define SLOT_IN  "recordsToExtract"
#define SLOT_OUT "extractedRecords"
#define TEXT_ATT "text"

#define READ_BUF            SL__WK_TEXT_CHUNK /* content chunks, converter output */
#define HEAD_MAX            READ_BUF /* bytes seen by libmagic, uchardet */
#define DEFAULT_ATTACHMENT  "fileContent"
#define WEB_ATTACHMENT      "httpContent" /* the webCrawler's */
#define DEFAULT_MAX_CONTENT (64ull << 20)
#define DEFAULT_MAX_TEXT    SL__WK_MAX_TEXT
/* The text goes into the record metadata, which readers limit to
 * SL_BULK_DEFAULT_MAX_META (64 MiB); JSON escaping at most doubles it. */
#define MAX_TEXT_LIMIT SL__WK_MAX_TEXT_LIMIT
#define TITLE_MAX      4096u
#define MIME_MAX       SL__WK_MIME_MAX
#define CHARSET_MAX    64u
#define CARRY_MAX      16u /* incomplete multibyte input kept for iconv */
#define HOLD_MAX       SL_WEB_HTML_HOLD /* HTML held back before a chunk */

#define CONV_DEFAULT_TIMEOUT 30u  /* seconds */
#define CONV_DEFAULT_MEMORY  512u /* MiB of address space */
#define CONV_MAX_MEMORY      (1u << 20)
#define CONV_MAX_TIMEOUT     86400u

/* Separators owed before the next character of a collapsed text. */
enum { SEP_NONE = 0, SEP_SPACE = 1, SEP_LINE = 2 };

/* What extracts the text of a record. */
enum {
    KIND_TEXT = 0,  /* text types, JSON: charset detection and iconv */
    KIND_HTML = 1,  /* libxml2 HTML push parser */
    KIND_XML = 2,   /* libxml2 XML push parser */
    KIND_OTHER = 3, /* external converter or nothing */
};

/* How a record's extraction ended (counters). */
enum {
    OUT_EXTRACTED = 0, /* records.extracted */
    OUT_NOTEXT = 1,    /* records.noText */
    OUT_FAILED = 2,    /* converter.failed */
    OUT_TIMEOUT = 3,   /* converter.timeout */
};

/* A feed result besides 0 (go on) and SL_E* codes: stop feeding. */
#define FEED_STOP 1

/*
 * Extracted text: valid UTF-8, at most max bytes, cut between characters.
 * Bytes go through an incremental UTF-8 checker (invalid sequences become
 * U+FFFD, NUL and most control characters are dropped); in collapse mode
 * runs of white space become one space and block boundaries one line
 * break, never at the start or the end.
 */
struct text {
    struct sl_buf b;       /* the text; limit max */
    size_t max;            /* maximum bytes */
    int full;              /* the cap was hit: later characters dropped */
    int collapse;          /* collapse white space */
    int sep;               /* SEP_*: owed before the next character */
    unsigned char part[4]; /* an incomplete UTF-8 sequence */
    size_t plen;           /* its length */
};

/* An external converter process of one record. */
struct conv {
    char **argv;      /* NULL-terminated; strings borrowed */
    size_t file_arg;  /* index of "{file}" in argv, or SIZE_MAX */
    char *path;       /* spool file of the {file} mode, or NULL */
    int file_fd;      /* open spool file, or -1 */
    int in_fd;        /* our end of the child's stdin (a socket), or -1 */
    int out_fd;       /* our end of the child's stdout (a pipe), or -1 */
    pid_t pid;        /* the child (and its process group), or -1 */
    int64_t timeout;  /* milliseconds */
    uint64_t memory;  /* MiB of address space, 0: unlimited */
    int64_t deadline; /* sl_mono_ms() when the child is killed */
    int status;       /* wait status once reaped */
    int reaped;       /* status is valid */
    int timed_out;    /* killed at the deadline */
};

/* One record being extracted. */
struct doc {
    struct text text;          /* the `text` attribute */
    struct text title;         /* an HTML <title> */
    char mime[MIME_MAX];       /* the `mimeType` attribute */
    char charset[CHARSET_MAX]; /* the `charset` attribute, or "" */
    const char *given;         /* the HTTP header's charset, borrowed */
    int kind;                  /* KIND_* of mime */
    int conv_on;               /* an external converter extracts */
    int outcome;               /* OUT_* */
    int truncated;             /* content or text was cut */
    int malformed;             /* XML that is not well-formed */
    int given_text;            /* the text came as attachment `text` */
    /* KIND_TEXT */
    iconv_t cd;                     /* to UTF-8, or (iconv_t)-1 */
    unsigned char carry[CARRY_MAX]; /* incomplete input sequence */
    size_t clen;                    /* its length */
    /* KIND_HTML, KIND_XML */
    xmlParserCtxtPtr px;          /* push parser (an htmlParserCtxtPtr too) */
    struct sl_web_html_feed feed; /* HTML: what waits for the next chunk */
    unsigned skip;                /* inside <script>, <style>... */
    unsigned in_title;            /* inside the first <title> */
    unsigned pre;                 /* inside <pre> */
    int title_done;               /* the first <title> ended */
    struct conv conv;
};

/* The parameters and buffers of one task. */
struct tx {
    struct sl_task_ctx *ctx;
    struct sl_bulk_writer *w; /* output, borrowed */
    const char *att;          /* contentAttachment */
    const char *att2;         /* also taken without contentAttachment */
    uint64_t max_content;     /* maxContentBytes */
    uint64_t max_text;        /* maxTextBytes */
    int text_attribute;       /* textOutput "attribute" */
    const json_t *converters; /* services' converters, borrowed or NULL */
    magic_t magic;            /* loaded on first use */
    int magic_failed;         /* magic_open or magic_load failed */
    uchardet_t ud;            /* created on first use */
    size_t bulk;              /* index of the input bulk being read */
    char *buf;                /* READ_BUF: content chunks */
    char *obuf;               /* READ_BUF: iconv and converter output */
    char *stage;              /* READ_BUF + HOLD_MAX: iconv, HTML input */
};

static const unsigned char REPLACEMENT[3] = {0xef, 0xbf, 0xbd};

/* ------------------------------------------------------------------------
 * Text.
 * --------------------------------------------------------------------- */

static void
text_init(struct text *t, size_t max, int collapse)
{
    memset(t, 0, sizeof(*t));
    sl_buf_init(&t->b, max);
    t->max = max;
    t->collapse = collapse;
}

/* Drop everything (a failed converter's partial output). */
static void
text_clear(struct text *t)
{
    sl_buf_free(&t->b);
    text_init(t, t->max, t->collapse);
}

static void
text_break(struct text *t, int sep)
{
    if (t->sep < sep) {
        t->sep = sep;
    }
}

static int
is_space(uint32_t cp)
{
    return cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r' || cp == 0xa0;
}

/*
 * Append one valid character @s (@len bytes, code point @cp), or drop it:
 * NUL, DEL and C0 controls other than tab, line feed and carriage return
 * (form and line feeds become line feeds), and a byte order mark at the
 * start.  A character that does not fit any more fills the text.
 */
static void
text_char(struct text *t, const unsigned char *s, size_t len, uint32_t cp)
{
    const char *sep = NULL;
    size_t need = len;

    if (t->full || cp == 0 || cp == 0x7f || (cp == 0xfeff && t->b.len == 0)) {
        return;
    }
    if (cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') {
        if (cp != '\f' && cp != '\v') {
            return;
        }
        cp = '\n';
        s = (const unsigned char *)"\n";
    }
    if (t->collapse && is_space(cp)) {
        text_break(t, SEP_SPACE);
        return;
    }
    if (t->sep != SEP_NONE && t->b.len > 0) {
        sep = t->sep == SEP_LINE ? "\n" : " ";
        need++;
    }
    if (need > t->max - t->b.len) {
        t->full = 1;
        return;
    }
    t->sep = SEP_NONE;
    if (sep != NULL) {
        (void)sl_buf_append(&t->b, sep, 1);
    }
    (void)sl_buf_append(&t->b, s, len);
}

#define BYTES_01 UINT64_C(0x0101010101010101)
#define BYTES_7F UINT64_C(0x7f7f7f7f7f7f7f7f)
#define BYTES_80 UINT64_C(0x8080808080808080)

/* The high bit of each byte of @w that is zero (exact: no carry crosses a
 * byte). */
static uint64_t
zero_bytes(uint64_t w)
{
    return ~(((w & BYTES_7F) + BYTES_7F) | w | BYTES_7F);
}

/* The high bit of each byte of @w that is 0x21..0x7e (printable ASCII). */
static uint64_t
printable_bytes(uint64_t w)
{
    uint64_t b = w | BYTES_80; /* each byte >= 0x80: no borrow between them */

    return ~w & (b - 0x21 * BYTES_01) & ~(b - 0x7f * BYTES_01) & BYTES_80;
}

static int
printable(unsigned char c)
{
    return c > 0x20 && c < 0x7f;
}

/* Length of the run at @p (@n bytes) of printable ASCII and, outside
 * collapse mode, ASCII white space: bytes that are copied as they are.
 * In collapse mode a single space between two printable characters is
 * part of the run too: it is what collapsing would write, and prose then
 * goes in one append instead of two per word.
 *
 * Eight bytes at a time (byte k of the little-endian word is p[i + k]):
 * a space's neighbours are the words' flags shifted by one byte; the
 * one before the word is in the run (i > 0: p[i - 1] was taken, and a
 * space is taken only before a printable byte), the one after is
 * p[i + 8].  A third of the time of the byte loop on prose. */
static size_t
ascii_run(const struct text *t, const unsigned char *p, size_t n)
{
    size_t i = 0;

    while (n - i >= sizeof(uint64_t)) {
        uint64_t w = sl_le_get64(p + i);
        uint64_t pr = printable_bytes(w);
        uint64_t sp = zero_bytes(w ^ (0x20 * BYTES_01));
        uint64_t ok = 0;
        uint64_t bad = 0;

        if (t->collapse) {
            uint64_t before = (pr << 8) | (i > 0 ? 0x80u : 0u);
            uint64_t after = (pr >> 8);

            if (i + 8 < n && printable(p[i + 8])) {
                after |= UINT64_C(0x80) << 56;
            }
            ok = pr | (sp & before & after);
        } else {
            ok = pr | sp | zero_bytes(w ^ (0x09 * BYTES_01)) |
                 zero_bytes(w ^ (0x0a * BYTES_01)) |
                 zero_bytes(w ^ (0x0d * BYTES_01));
        }
        bad = ~ok & BYTES_80;
        if (bad != 0) {
            for (; (bad & 0x80u) == 0; bad >>= 8) {
                i++;
            }
            return i;
        }
        i += sizeof(uint64_t);
    }
    for (; i < n; i++) {
        unsigned char c = p[i];

        if (printable(c)) {
            continue;
        }
        if (!t->collapse && (c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
            continue;
        }
        if (c == ' ' && i > 0 && i + 1 < n && printable(p[i + 1])) {
            continue; /* p[i - 1] is printable: no two spaces in a run */
        }
        break;
    }
    return i;
}

/* Append the @len bytes of such a run at once (the common case), or as
 * many as fit: every ASCII byte is a character boundary. */
static void
text_run(struct text *t, const unsigned char *s, size_t len)
{
    size_t room = t->max - t->b.len;

    if (t->full) {
        return;
    }
    if (t->sep != SEP_NONE && t->b.len > 0) {
        if (room < 2) {
            t->full = 1;
            return;
        }
        (void)sl_buf_append(&t->b, t->sep == SEP_LINE ? "\n" : " ", 1);
        room--;
    }
    t->sep = SEP_NONE;
    if (len > room) {
        len = room;
        t->full = 1;
        while (t->collapse && len > 0 && s[len - 1] == ' ') {
            len--; /* a collapsed space is never written last */
        }
    }
    (void)sl_buf_append(&t->b, s, len);
}

/*
 * Length of the UTF-8 sequence at @s (@n > 0 bytes there): 1 to 4 with
 * the code point in *cp, 0 when it is invalid (bad lead or continuation
 * byte, overlong form, surrogate, above U+10FFFF), -1 when the @n bytes
 * are the start of a longer sequence.
 */
static int
utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
    uint32_t v = 0;
    uint32_t min = 0;
    size_t len = 0;
    size_t i = 0;

    if (s[0] < 0x80) {
        *cp = s[0];
        return 1;
    }
    if (s[0] >= 0xc2 && s[0] <= 0xdf) {
        len = 2;
        v = s[0] & 0x1fu;
        min = 0x80;
    } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
        len = 3;
        v = s[0] & 0x0fu;
        min = 0x800;
    } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
        len = 4;
        v = s[0] & 0x07u;
        min = 0x10000;
    } else {
        return 0;
    }
    for (i = 1; i < len; i++) {
        if (i >= n) {
            return -1;
        }
        if ((s[i] & 0xc0) != 0x80) {
            return 0;
        }
        v = (v << 6) | (s[i] & 0x3fu);
    }
    if (v < min || (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff) {
        return 0;
    }
    *cp = v;
    return (int)len;
}

/*
 * Append @n bytes of supposed UTF-8 @data.  A sequence split between two
 * calls is completed from the next call; invalid bytes become U+FFFD one
 * by one.
 */
static void
text_bytes(struct text *t, const void *data, size_t n)
{
    const unsigned char *p = data;
    uint32_t cp = 0;
    int len = 0;

    while (t->plen > 0 && n > 0 && !t->full) {
        unsigned char rest[4];
        size_t k = 0;

        t->part[t->plen++] = *p++;
        n--;
        len = utf8_seq(t->part, t->plen, &cp);
        if (len < 0) {
            continue;
        }
        k = t->plen;
        memcpy(rest, t->part, k);
        t->plen = 0;
        if (len > 0) {
            text_char(t, rest, k, cp);
        } else {
            text_char(t, REPLACEMENT, sizeof(REPLACEMENT), 0xfffd);
            text_bytes(t, rest + 1, k - 1);
        }
    }
    while (n > 0 && !t->full) {
        size_t run = ascii_run(t, p, n);

        if (run > 0) {
            text_run(t, p, run);
            p += run;
            n -= run;
            continue;
        }
        len = utf8_seq(p, n, &cp);
        if (len < 0) {
            memcpy(t->part, p, n);
            t->plen = n;
            return;
        }
        if (len == 0) {
            text_char(t, REPLACEMENT, sizeof(REPLACEMENT), 0xfffd);
            p++;
            n--;
            continue;
        }
        text_char(t, p, (size_t)len, cp);
        p += len;
        n -= (size_t)len;
    }
}

/* The input ended: an incomplete sequence becomes U+FFFD. */
static void
text_end(struct text *t)
{
    if (t->plen > 0) {
        t->plen = 0;
        text_char(t, REPLACEMENT, sizeof(REPLACEMENT), 0xfffd);
    }
}

/* ------------------------------------------------------------------------
 * MIME types.
 * --------------------------------------------------------------------- */

/* Types guessed from the file extension when libmagic has nothing better
 * than text/plain or application/octet-stream. */
static const struct {
    const char *ext;
    const char *mime;
} ext_types[] = {
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
static void
mime_normalize(const char *in, char *out)
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
           o + 1 < MIME_MAX) {
        char c = *in++;

        out[o++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    out[o] = '\0';
    if (strchr(out, '/') == NULL || out[0] == '/' || out[o - 1] == '/') {
        out[0] = '\0';
    }
}

/* The type of the file extension of the record (`fileExtension`, else
 * what follows the last '.' of the last segment of `_recordid`), or NULL. */
static const char *
mime_from_extension(const struct tx *x, const json_t *meta)
{
    const char *ext = json_string_value(
        json_object_get(meta, sl_task_mapped(x->ctx, "fileExtension")));
    const char *id = json_string_value(json_object_get(meta, "_recordid"));
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

static int
mime_kind(const char *m)
{
    if (strcmp(m, "text/html") == 0 ||
        strcmp(m, "application/xhtml+xml") == 0) {
        return KIND_HTML;
    }
    if (mime_is_xml(m)) {
        return KIND_XML;
    }
    return mime_textual(m) ? KIND_TEXT : KIND_OTHER;
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

/* libmagic's type of @len bytes @head into @out ("" when unavailable).
 * One magic_t per task, loaded on first use. */
static void
mime_magic(struct tx *x, const char *head, size_t len, char *out)
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
    mime_normalize(m, out);
}

static const char *charset_bom(const char *head, size_t len);

/*
 * Does @head look like text, so that a textual file extension can be
 * trusted without asking libmagic (which costs 0.5-4 ms a record, most of
 * the extractor's time)?  A byte order mark says yes; a known binary
 * signature or a NUL byte says no.
 */
static int
head_looks_textual(const char *head, size_t len)
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

    if (charset_bom(head, len) != NULL) {
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
 * text/plain or application/octet-stream (or generic XML for an HTML or
 * XML-based file).
 */
/* The MIME type the record brings: `mimeType`, else the webCrawler's
 * `httpMimetype`; borrowed or NULL. */
static const char *
record_mime(const struct tx *x, const json_t *meta)
{
    const char *m = json_string_value(json_object_get(meta, "mimeType"));

    return m != NULL ? m
                     : json_string_value(json_object_get(
                           meta, sl_task_mapped(x->ctx, "httpMimetype")));
}

static void
mime_detect(
    struct tx *x, const json_t *meta, const char *head, size_t len, char *out)
{
    const char *ext = mime_from_extension(x, meta);
    char given[MIME_MAX];
    char magic[MIME_MAX];

    mime_normalize(record_mime(x, meta), given);
    /* Fast path: a textual extension (and record type, if any) over
     * content that looks like text. */
    if (ext != NULL && mime_kind(ext) != KIND_OTHER &&
        (given[0] == '\0' || mime_textual(given)) &&
        head_looks_textual(head, len)) {
        (void)snprintf(out, MIME_MAX, "%s", given[0] != '\0' ? given : ext);
        sl_task_counter_add(x->ctx, "mime.byExtension", 1);
        return;
    }
    mime_magic(x, head, len, magic);
    if (given[0] != '\0' && mime_trust_given(given, magic)) {
        (void)snprintf(out, MIME_MAX, "%s", given);
    } else if (ext != NULL &&
               (mime_weak(magic) ||
                (mime_is_xml(magic) && mime_kind(ext) != KIND_TEXT))) {
        (void)snprintf(out, MIME_MAX, "%s", ext);
    } else if (magic[0] != '\0') {
        (void)snprintf(out, MIME_MAX, "%s", magic);
    } else {
        (void)snprintf(out, MIME_MAX, "application/octet-stream");
    }
    if (given[0] != '\0' && strcmp(out, given) != 0) {
        SL_DEBUG("textExtractor: %s: mimeType %s replaced by %s",
                 json_string_value(json_object_get(meta, "_recordid")),
                 given,
                 out);
    }
}

/* ------------------------------------------------------------------------
 * Charsets and plain text.
 * --------------------------------------------------------------------- */

/* Upper-case copy of @in into @out (CHARSET_MAX bytes). */
static void
charset_copy(char *out, const char *in)
{
    size_t i = 0;

    for (i = 0; in[i] != '\0' && i + 1 < CHARSET_MAX; i++) {
        char c = in[i];

        out[i] = (char)(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    }
    out[i] = '\0';
}

/* The charset of a byte order mark at the start of @head, or NULL. */
static const char *
charset_bom(const char *head, size_t len)
{
    const unsigned char *p = (const unsigned char *)head;

    if (len >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) {
        return "UTF-8";
    }
    if (len >= 2 &&
        ((p[0] == 0xff && p[1] == 0xfe) || (p[0] == 0xfe && p[1] == 0xff))) {
        return "UTF-16";
    }
    return NULL;
}

/*
 * The charset of content starting with @len bytes @head, into @out: a
 * byte order mark, else UTF-8 when the head is valid UTF-8 (ASCII
 * included; uchardet sometimes names a single-byte charset for short
 * UTF-8 text), else libuchardet's answer, else WINDOWS-1252.
 */
static void
charset_detect(uchardet_t *ud, const char *head, size_t len, char *out)
{
    const char *bom = charset_bom(head, len);
    const char *cs = NULL;

    if (bom != NULL) {
        charset_copy(out, bom);
        return;
    }
    if (sl_utf8_valid_head(head, len)) { /* may end inside a sequence */
        charset_copy(out, "UTF-8");
        return;
    }
    if (*ud == NULL) {
        *ud = uchardet_new();
    }
    if (*ud != NULL) {
        uchardet_reset(*ud);
        if (uchardet_handle_data(*ud, head, len) == 0) {
            uchardet_data_end(*ud);
            cs = uchardet_get_charset(*ud);
        }
    }
    charset_copy(out,
                 cs != NULL && cs[0] != '\0' && strcmp(cs, "ASCII") != 0
                     ? cs
                     : "WINDOWS-1252");
}

/* Start plain text: the charset of a byte order mark, else of the HTTP
 * header when iconv knows it, else detected; iconv is opened unless it is
 * UTF-8 (passed through, checked by the text). */
static void
plain_begin(struct tx *x, struct doc *d, const char *head, size_t len)
{
    if (charset_bom(head, len) == NULL && d->given != NULL &&
        d->given[0] != '\0') {
        charset_copy(d->charset, d->given);
        if (strcmp(d->charset, "UTF-8") == 0) {
            return;
        }
        d->cd = iconv_open("UTF-8", d->charset);
        if (d->cd != (iconv_t)-1) {
            return;
        }
    }
    charset_detect(&x->ud, head, len, d->charset);
    if (strcmp(d->charset, "UTF-8") == 0) {
        return;
    }
    d->cd = iconv_open("UTF-8", d->charset);
    if (d->cd == (iconv_t)-1) {
        SL_DEBUG("textExtractor: iconv cannot convert from %s; read as "
                 "UTF-8",
                 d->charset);
        d->charset[0] = '\0';
    }
}

/* Convert the staged input @in (@left bytes) with iconv into the text.
 * Invalid input bytes become U+FFFD; an incomplete sequence at the end
 * is carried to the next call unless @final. */
static void
plain_convert(struct tx *x, struct doc *d, char *in, size_t left, int final)
{
    while (left > 0 && !d->text.full) {
        char *out = x->obuf;
        size_t room = READ_BUF;
        size_t r = iconv(d->cd, &in, &left, &out, &room);
        int e = errno;

        text_bytes(&d->text, x->obuf, READ_BUF - room);
        if (r != (size_t)-1 || e == E2BIG) {
            continue;
        }
        if (e == EINVAL && !final && left <= CARRY_MAX) {
            memcpy(d->carry, in, left);
            d->clen = left;
            return;
        }
        text_char(&d->text, REPLACEMENT, sizeof(REPLACEMENT), 0xfffd);
        in++;
        left--;
    }
    if (final) {
        char *out = x->obuf;
        size_t room = READ_BUF;

        (void)iconv(d->cd, NULL, NULL, &out, &room);
        text_bytes(&d->text, x->obuf, READ_BUF - room);
    }
}

/* Feed @n bytes of plain text. */
static int
plain_feed(struct tx *x, struct doc *d, const char *p, size_t n)
{
    if (d->cd == (iconv_t)-1) {
        text_bytes(&d->text, p, n);
        return d->text.full ? FEED_STOP : 0;
    }
    while (n > 0 && !d->text.full) {
        size_t k = n < READ_BUF ? n : READ_BUF;
        size_t c = d->clen;

        memcpy(x->stage, d->carry, c);
        memcpy(x->stage + c, p, k);
        d->clen = 0;
        p += k;
        n -= k;
        plain_convert(x, d, x->stage, c + k, 0);
    }
    return d->text.full ? FEED_STOP : 0;
}

static void
plain_end(struct tx *x, struct doc *d)
{
    if (d->cd != (iconv_t)-1) {
        memcpy(x->stage, d->carry, d->clen);
        plain_convert(x, d, x->stage, d->clen, 1);
        d->clen = 0;
        (void)iconv_close(d->cd);
        d->cd = (iconv_t)-1;
    }
}

/* ------------------------------------------------------------------------
 * HTML and XML (libxml2 SAX push parsers).
 * --------------------------------------------------------------------- */

/* Elements that put a line break (sep_lines) or a space (sep_spaces)
 * into the text: sorted in strcmp order for bsearch (checked once, at
 * xml_init). */
static const char *const sep_lines[] = {
    "address", "article",  "aside",      "blockquote", "body",   "br",
    "caption", "dd",       "details",    "dialog",     "div",    "dl",
    "dt",      "fieldset", "figcaption", "figure",     "footer", "form",
    "h1",      "h2",       "h3",         "h4",         "h5",     "h6",
    "head",    "header",   "hr",         "html",       "legend", "li",
    "main",    "nav",      "ol",         "option",     "p",      "pre",
    "section", "summary",  "table",      "tbody",      "tfoot",  "thead",
    "tr",      "ul",
};
static const char *const sep_spaces[] = {
    "button",
    "img",
    "input",
    "label",
    "select",
    "td",
    "textarea",
    "th",
};
#define SEP_LINES  (sizeof(sep_lines) / sizeof(sep_lines[0]))
#define SEP_SPACES (sizeof(sep_spaces) / sizeof(sep_spaces[0]))

/* Are the @n names at @table in strcmp order, without repeats? */
static int
names_sorted(const char *const *table, size_t n)
{
    size_t i = 0;

    for (i = 1; i < n; i++) {
        if (strcmp(table[i - 1], table[i]) >= 0) {
            return 0;
        }
    }
    return 1;
}

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void
xml_init(void)
{
    if (!names_sorted(sep_lines, SEP_LINES) ||
        !names_sorted(sep_spaces, SEP_SPACES)) {
        sl_panic("textExtractor: element tables not sorted");
    }
    xmlInitParser();
}

/* Parser errors are expected (we read whatever the web serves): keep
 * them off stderr. */
static void
quiet_error(void *ctx, xmlErrorPtr e)
{
    (void)ctx;
    (void)e;
}

/* Elements whose content is not visible text. */
static int
html_hidden(const char *name)
{
    return strcmp(name, "script") == 0 || strcmp(name, "style") == 0 ||
           strcmp(name, "noscript") == 0 || strcmp(name, "template") == 0;
}

/* bsearch comparison of a name with an entry of a sorted name table. */
static int
name_cmp(const void *key, const void *entry)
{
    return strcmp(key, *(const char *const *)entry);
}

/* Is @name in the @n names at @table, sorted in strcmp order? */
static int
name_in(const char *name, const char *const *table, size_t n)
{
    return bsearch(name, table, n, sizeof(table[0]), name_cmp) != NULL;
}

/* The separator an element's start and end put into the text (both
 * tables sorted: looked up by bisection, every element of a page). */
static int
html_separator(const char *name)
{
    if (name_in(name, sep_lines, SEP_LINES)) {
        return SEP_LINE;
    }
    if (name_in(name, sep_spaces, SEP_SPACES)) {
        return SEP_SPACE;
    }
    return SEP_NONE;
}

static void
html_start(void *user, const xmlChar *tag, const xmlChar **atts)
{
    struct doc *d = user;
    const char *name = (const char *)tag;

    (void)atts;
    if (d->text.full) {
        return; /* nothing after the cut, however the page is chunked */
    }
    if (html_hidden(name)) {
        d->skip++;
        return;
    }
    if (d->skip > 0) {
        return;
    }
    if (strcmp(name, "title") == 0 && !d->title_done) {
        d->in_title++;
        return;
    }
    if (strcmp(name, "pre") == 0) {
        d->pre++;
    }
    text_break(&d->text, html_separator(name));
}

static void
html_end(void *user, const xmlChar *tag)
{
    struct doc *d = user;
    const char *name = (const char *)tag;

    if (d->text.full) {
        return;
    }
    if (html_hidden(name)) {
        if (d->skip > 0) {
            d->skip--;
        }
        return;
    }
    if (d->skip > 0) {
        return;
    }
    if (d->in_title > 0 && strcmp(name, "title") == 0) {
        d->in_title--;
        d->title_done = d->in_title == 0;
        return;
    }
    if (strcmp(name, "pre") == 0 && d->pre > 0) {
        d->pre--;
    }
    text_break(&d->text, html_separator(name));
}

static void
html_text(void *user, const xmlChar *s, int len)
{
    struct doc *d = user;

    if (d->skip > 0 || len <= 0 || d->text.full) {
        return;
    }
    if (d->in_title > 0) {
        text_bytes(&d->title, s, (size_t)len);
        return;
    }
    d->text.collapse = d->pre == 0;
    text_bytes(&d->text, s, (size_t)len);
}

/* Find @needle (lower case) in [@p, @end) ignoring case, or NULL. */
static const char *
find_ci(const char *p, const char *end, const char *needle)
{
    size_t n = strlen(needle);
    unsigned char lo = (unsigned char)tolower((unsigned char)needle[0]);
    unsigned char up = (unsigned char)toupper((unsigned char)needle[0]);

    /* the first byte is looked for with memchr (both cases of a letter):
     * a strncasecmp at every byte of the head was a sixth of the
     * extractor's time on small HTML pages */
    while (n > 0 && (size_t)(end - p) >= n) {
        size_t span = (size_t)(end - p) - n + 1;
        const char *a = memchr(p, lo, span);
        const char *b = up != lo ? memchr(p, up, span) : NULL;
        const char *c = a == NULL || (b != NULL && b < a) ? b : a;

        if (c == NULL) {
            return NULL;
        }
        if (strncasecmp(c + 1, needle + 1, n - 1) == 0) {
            return c;
        }
        p = c + 1;
    }
    return NULL;
}

/*
 * The charset an HTML head declares, into @out: a byte order mark, or a
 * `charset=` inside a <meta> tag (<meta charset="x"> and <meta
 * http-equiv="Content-Type" content="text/html; charset=x">).  Returns 1
 * when one is declared; libxml2 then honours it itself.
 */
static int
html_declared(const char *head, size_t len, char *out)
{
    const char *bom = charset_bom(head, len);
    const char *end = head + len;
    const char *p = head;

    if (bom != NULL) {
        charset_copy(out, bom);
        return 1;
    }
    while ((p = find_ci(p, end, "<meta")) != NULL) {
        const char *gt = memchr(p, '>', (size_t)(end - p));
        const char *c = NULL;
        char name[CHARSET_MAX];
        size_t k = 0;

        gt = gt != NULL ? gt : end;
        c = find_ci(p, gt, "charset");
        p = gt;
        if (c == NULL) {
            continue;
        }
        c += 7;
        while (c < gt && (*c == ' ' || *c == '=' || *c == '"' || *c == '\'')) {
            c++;
        }
        while (c < gt && k + 1 < sizeof(name) &&
               (strchr("-_.:", *c) != NULL || (*c >= '0' && *c <= '9') ||
                (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'))) {
            name[k++] = *c++;
        }
        name[k] = '\0';
        if (k > 0) {
            charset_copy(out, name);
            return 1;
        }
    }
    return 0;
}

/*
 * The charset of an HTML document starting with @len bytes @head, into
 * d->charset, and d->px switched to it: a byte order mark; else @given
 * (the HTTP header's, which wins over the page's own declaration as in a
 * browser) when libxml2 knows it; else the one the head declares in a
 * <meta> (libxml2 honours it itself); else the detected one.  Except for
 * <meta>, the parser is switched before the first byte: libxml2 2.9's
 * HTML push parser does not look for a byte order mark, and without a
 * charset it reads Latin-1 from the first non-ASCII byte on.  A parser so
 * switched ignores the page's <meta> charsets (HTML_PARSE_IGNORE_ENC):
 * libxml2 would otherwise switch to one in the middle of the page, from
 * wherever it had converted its input up to, which depends on how the
 * page was cut into chunks (fuzz_text: an HTTP ISO-8859-1 page with a
 * Shift_JIS <meta> after its <title> had another title in the
 * textExtractor than in the webCrawler).
 */
static void
html_charset(uchardet_t *ud,
             struct doc *d,
             const char *head,
             size_t len,
             const char *given)
{
    const char *bom = charset_bom(head, len);
    xmlCharEncodingHandlerPtr enc = NULL;

    if (bom != NULL) {
        /* libxml2's "UTF-16" is little-endian only */
        charset_copy(d->charset,
                     strcmp(bom, "UTF-16") != 0       ? bom
                     : (unsigned char)head[0] == 0xfe ? "UTF-16BE"
                                                      : "UTF-16LE");
    } else if (given != NULL && given[0] != '\0' &&
               (enc = xmlFindCharEncodingHandler(given)) != NULL &&
               xmlSwitchToEncoding(d->px, enc) == 0) {
        charset_copy(d->charset, given);
        d->px->options |= HTML_PARSE_IGNORE_ENC;
        return;
    } else if (html_declared(head, len, d->charset)) {
        return;
    } else {
        charset_detect(ud, head, len, d->charset);
    }
    enc = xmlFindCharEncodingHandler(d->charset);
    if (enc == NULL || xmlSwitchToEncoding(d->px, enc) != 0) {
        SL_DEBUG("html text: libxml2 cannot read %s", d->charset);
        d->charset[0] = '\0';
    } else {
        d->px->options |= HTML_PARSE_IGNORE_ENC;
    }
}

/* Start the HTML push parser of @d, its charset as html_charset says. */
static int
html_begin(struct tx *x, struct doc *d, const char *head, size_t len)
{
    htmlSAXHandler sax;

    memset(&sax, 0, sizeof(sax));
    sax.startElement = html_start;
    sax.endElement = html_end;
    sax.characters = html_text;
    sax.ignorableWhitespace = html_text;
    sax.cdataBlock = html_text;
    sax.initialized = XML_SAX2_MAGIC;
    sax.serror = quiet_error;
    d->px = htmlCreatePushParserCtxt(
        &sax, d, NULL, 0, NULL, XML_CHAR_ENCODING_NONE);
    if (d->px == NULL) {
        return SL_EINTERNAL;
    }
    (void)htmlCtxtUseOptions(d->px,
                             HTML_PARSE_RECOVER | HTML_PARSE_NONET |
                                 HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
    text_init(&d->title, TITLE_MAX, 1);
    html_charset(&x->ud, d, head, len, d->given);
    return 0;
}

static void
xml_element_start(void *ctx,
                  const xmlChar *localname,
                  const xmlChar *prefix,
                  const xmlChar *uri,
                  int nb_namespaces,
                  const xmlChar **namespaces,
                  int nb_attributes,
                  int nb_defaulted,
                  const xmlChar **attributes)
{
    struct doc *d = ((xmlParserCtxtPtr)ctx)->_private;

    (void)localname;
    (void)prefix;
    (void)uri;
    (void)nb_namespaces;
    (void)namespaces;
    (void)nb_attributes;
    (void)nb_defaulted;
    (void)attributes;
    text_break(&d->text, SEP_SPACE);
}

static void
xml_element_end(void *ctx,
                const xmlChar *localname,
                const xmlChar *prefix,
                const xmlChar *uri)
{
    struct doc *d = ((xmlParserCtxtPtr)ctx)->_private;

    (void)localname;
    (void)prefix;
    (void)uri;
    text_break(&d->text, SEP_SPACE);
}

static void
xml_text(void *ctx, const xmlChar *s, int len)
{
    struct doc *d = ((xmlParserCtxtPtr)ctx)->_private;

    if (len > 0) {
        text_bytes(&d->text, s, (size_t)len);
    }
}

/* Entity references are not expanded (no XML_PARSE_NOENT); libxml2 has
 * already delivered the text of internal entities, bounded by its
 * amplification checks. */
static void
xml_reference(void *ctx, const xmlChar *name)
{
    (void)ctx;
    (void)name;
}

/* No external entity or DTD is ever loaded, not even from a file. */
static xmlParserInputPtr
xml_resolve(void *ctx, const xmlChar *public_id, const xmlChar *system_id)
{
    (void)ctx;
    (void)public_id;
    (void)system_id;
    return NULL;
}

static void
xml_external_subset(void *ctx,
                    const xmlChar *name,
                    const xmlChar *external_id,
                    const xmlChar *system_id)
{
    (void)ctx;
    (void)name;
    (void)external_id;
    (void)system_id;
}

/*
 * Start the XML push parser.  libxml2's SAX2 defaults stay for the
 * document and the internal subset (so that declared entities are known
 * and not "undeclared"); elements, text, references and external
 * resources are ours.  The parser context is the SAX user data (the
 * defaults need it) and the record is its _private.
 */
static int
xml_begin(struct doc *d)
{
    xmlSAXHandler sax;

    memset(&sax, 0, sizeof(sax));
    (void)xmlSAXVersion(&sax, 2);
    sax.startElementNs = xml_element_start;
    sax.endElementNs = xml_element_end;
    sax.characters = xml_text;
    sax.ignorableWhitespace = xml_text;
    sax.cdataBlock = xml_text;
    sax.reference = xml_reference;
    sax.resolveEntity = xml_resolve;
    sax.externalSubset = xml_external_subset;
    sax.comment = NULL;
    sax.processingInstruction = NULL;
    sax.warning = NULL;
    sax.error = NULL;
    sax.fatalError = NULL;
    sax.serror = quiet_error;
    d->px = xmlCreatePushParserCtxt(&sax, NULL, NULL, 0, NULL);
    if (d->px == NULL) {
        return SL_EINTERNAL;
    }
    d->px->_private = d;
    (void)xmlCtxtUseOptions(d->px, XML_PARSE_NONET);
    return 0;
}

/* Feed @k <= READ_BUF bytes to the HTML push parser (the libxml2 2.9.14
 * work-arounds: web/web.h, sl_web_html_feed). */
static void
html_chunk(struct tx *x, struct doc *d, const char *p, size_t k)
{
    sl_web_html_feed(d->px, &d->feed, x->stage, p, k);
}

/* Feed @n bytes to the push parser; XML stops at the first fatal error
 * (the text so far is kept). */
static int
markup_feed(struct tx *x, struct doc *d, const char *p, size_t n)
{
    while (n > 0 && !d->text.full) {
        int k = n < READ_BUF ? (int)n : (int)READ_BUF;

        if (d->kind == KIND_HTML) {
            html_chunk(x, d, p, (size_t)k);
        } else {
            (void)xmlParseChunk(d->px, p, k, 0);
            if (!d->px->wellFormed) {
                d->malformed = 1;
                return FEED_STOP;
            }
        }
        p += k;
        n -= (size_t)k;
    }
    return d->text.full ? FEED_STOP : 0;
}

/* Finish the parser (unless @abort) and free it. */
static void
markup_end(struct doc *d, int abort)
{
    if (d->px == NULL) {
        return;
    }
    if (d->kind == KIND_HTML) {
        if (!abort && !d->text.full) {
            sl_web_html_end(d->px, &d->feed);
        }
        htmlFreeParserCtxt(d->px);
        d->px = NULL;
        return;
    }
    if (!abort && !d->text.full && !d->malformed) {
        (void)xmlParseChunk(d->px, NULL, 0, 1);
        d->malformed = !d->px->wellFormed;
    }
    if (d->px->encoding != NULL) {
        charset_copy(d->charset, (const char *)d->px->encoding);
    } else {
        charset_copy(d->charset, "UTF-8");
    }
    if (d->px->myDoc != NULL) {
        xmlFreeDoc(d->px->myDoc);
        d->px->myDoc = NULL;
    }
    xmlFreeParserCtxt(d->px);
    d->px = NULL;
}

/* ------------------------------------------------------------------------
 * External converters.
 * --------------------------------------------------------------------- */

/*
 * Read a converter entry @cfg of @mime into @c: `command` (argv, no
 * shell; an element "{file}" selects the spool file mode),
 * `timeoutSeconds`, `maxMemoryMB`.  Returns 0 or SL_EINVAL (logged).
 */
static int
conv_config(struct conv *c, const json_t *cfg, const char *mime)
{
    const json_t *cmd = json_object_get(cfg, "command");
    const json_t *t = json_object_get(cfg, "timeoutSeconds");
    const json_t *m = json_object_get(cfg, "maxMemoryMB");
    size_t n = json_array_size(cmd);
    size_t i = 0;

    if (n == 0 ||
        (t != NULL && (!json_is_integer(t) || json_integer_value(t) <= 0 ||
                       json_integer_value(t) > CONV_MAX_TIMEOUT)) ||
        (m != NULL && (!json_is_integer(m) || json_integer_value(m) < 0 ||
                       json_integer_value(m) > CONV_MAX_MEMORY))) {
        SL_WARN("textExtractor: converter for %s: needs a non-empty "
                "\"command\" array, \"timeoutSeconds\" 1..%u and "
                "\"maxMemoryMB\" 0..%u",
                mime,
                CONV_MAX_TIMEOUT,
                CONV_MAX_MEMORY);
        return SL_EINVAL;
    }
    c->timeout = 1000 * (int64_t)(t != NULL ? json_integer_value(t)
                                            : CONV_DEFAULT_TIMEOUT);
    c->memory =
        m != NULL ? (uint64_t)json_integer_value(m) : CONV_DEFAULT_MEMORY;
    c->argv = sl_calloc(n + 1, sizeof(*c->argv));
    c->file_arg = SIZE_MAX;
    for (i = 0; i < n; i++) {
        const char *a = json_string_value(json_array_get(cmd, i));

        if (a == NULL || (i == 0 && a[0] == '\0')) {
            SL_WARN("textExtractor: converter for %s: \"command\" must hold "
                    "strings",
                    mime);
            return SL_EINVAL;
        }
        if (strcmp(a, "{file}") == 0) {
            c->file_arg = i;
        }
        c->argv[i] = (char *)(uintptr_t)a;
    }
    return 0;
}

static void
conv_close_fd(int *fd)
{
    if (*fd >= 0) {
        (void)close(*fd);
        *fd = -1;
    }
}

/*
 * In the child, between fork and exec (async-signal-safe calls only): its
 * own process group (killed as a whole at the deadline), the address
 * space limit, stdin/stdout/stderr, no other descriptor, default signal
 * dispositions and mask.
 */
static _Noreturn void
conv_child(const struct conv *c, int in, int out, int err)
{
    struct rlimit rl;
    sigset_t none;
    int sig = 0;

    (void)setpgid(0, 0);
    if (c->memory > 0) {
        rl.rlim_cur = (rlim_t)(c->memory << 20);
        rl.rlim_max = rl.rlim_cur;
        (void)setrlimit(RLIMIT_AS, &rl);
    }
    /* Above 2 first, in case the server runs with 0-2 closed and one of
     * them is such a descriptor. */
    in = fcntl(in, F_DUPFD, 3);
    out = fcntl(out, F_DUPFD, 3);
    err = fcntl(err, F_DUPFD, 3);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 ||
        dup2(err, 2) < 0) {
        _exit(127);
    }
    (void)close_range(3, ~0u, 0);
    for (sig = 1; sig < 32; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP) {
            (void)signal(sig, SIG_DFL);
        }
    }
    (void)sigemptyset(&none);
    (void)sigprocmask(SIG_SETMASK, &none, NULL);
    execvp(c->argv[0], c->argv);
    _exit(127);
}

/*
 * Start the converter: stdin is a socket (so that writing to a converter
 * that exited gives EPIPE, never SIGPIPE, whatever the process does with
 * signals) or /dev/null in the {file} mode; stdout a pipe; stderr
 * /dev/null.  Returns 0 or SL_E* (logged).
 */
static int
conv_spawn(struct conv *c)
{
    int in[2] = {-1, -1};
    int out[2] = {-1, -1};
    int null_in = -1;
    int null_err = -1;
    int rc = 0;

    if (c->file_arg != SIZE_MAX) {
        c->argv[c->file_arg] = c->path;
        null_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    } else if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) != 0) {
        in[0] = in[1] = -1;
    }
    null_err = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if ((in[1] < 0 && null_in < 0) || null_err < 0 ||
        pipe2(out, O_CLOEXEC) != 0) {
        SL_WARN("textExtractor: converter %s: %s", c->argv[0], strerror(errno));
        rc = SL_EIO;
        goto out;
    }
    c->pid = fork();
    if (c->pid == 0) {
        conv_child(c, null_in >= 0 ? null_in : in[1], out[1], null_err);
    }
    if (c->pid < 0) {
        SL_WARN("textExtractor: fork: %s", strerror(errno));
        c->pid = -1;
        rc = SL_EIO;
        goto out;
    }
    (void)setpgid(c->pid, c->pid);
    c->deadline = sl_mono_ms() + c->timeout;
    c->in_fd = in[0];
    in[0] = -1;
    c->out_fd = out[0];
    out[0] = -1;
    (void)fcntl(c->out_fd, F_SETFL, O_NONBLOCK);

out:
    conv_close_fd(&in[0]);
    conv_close_fd(&in[1]);
    conv_close_fd(&out[0]);
    conv_close_fd(&out[1]);
    conv_close_fd(&null_in);
    conv_close_fd(&null_err);
    return rc;
}

/* A new spool file under $TMPDIR (or /tmp) for the {file} mode. */
static int
conv_spool(struct conv *c)
{
    const char *dir = getenv("TMPDIR");

    c->path = sl_asprintf("%s/sluice-text.XXXXXX",
                          dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    c->file_fd = mkostemp(c->path, O_CLOEXEC);
    if (c->file_fd < 0) {
        SL_WARN("textExtractor: mkstemp %s: %s", c->path, strerror(errno));
        SL_FREE(c->path);
        return SL_EIO;
    }
    return 0;
}

/* Read what the converter wrote (one read) into the text; the text drops
 * what is beyond maxTextBytes.  Closes stdout at its end. */
static void
conv_read(struct tx *x, struct doc *d)
{
    ssize_t n = read(d->conv.out_fd, x->obuf, READ_BUF);

    if (n > 0) {
        text_bytes(&d->text, x->obuf, (size_t)n);
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        conv_close_fd(&d->conv.out_fd);
    }
}

/* Kill the converter's process group (leftover grandchildren too) and
 * reap the child if it was not reaped yet. */
static void
conv_kill(struct conv *c)
{
    if (c->pid <= 0) {
        return;
    }
    (void)kill(-c->pid, SIGKILL);
    if (!c->reaped) {
        (void)kill(c->pid, SIGKILL);
        while (waitpid(c->pid, &c->status, 0) < 0 && errno == EINTR) {
        }
        c->reaped = 1;
    }
}

/*
 * One round of I/O with the converter, at most @wait ms: write what its
 * stdin takes of *@p (*@n bytes, may be NULL), read what it wrote.  At
 * the deadline the child is killed (timed_out, reaped).  Returns 0 or
 * SL_ECANCELED (the task was canceled: the child is killed).
 */
static int
conv_poll(struct tx *x, struct doc *d, const char **p, size_t *n, int wait)
{
    struct conv *c = &d->conv;
    struct pollfd fds[2];
    nfds_t k = 0;
    int win = -1;
    int rin = -1;
    int64_t left = c->deadline - sl_mono_ms();
    ssize_t sent = 0;

    if (sl_task_is_canceled(x->ctx)) {
        conv_kill(c);
        return SL_ECANCELED;
    }
    if (left <= 0) {
        c->timed_out = 1;
        conv_kill(c);
        return 0;
    }
    if (n != NULL && *n > 0 && c->in_fd >= 0) {
        fds[k].fd = c->in_fd;
        fds[k].events = POLLOUT;
        win = (int)k++;
    }
    if (c->out_fd >= 0) {
        fds[k].fd = c->out_fd;
        fds[k].events = POLLIN;
        rin = (int)k++;
    }
    if (poll(fds, k, left < wait ? (int)left : wait) <= 0) {
        return 0;
    }
    if (rin >= 0 && fds[rin].revents != 0) {
        conv_read(x, d);
    }
    if (win >= 0 && fds[win].revents != 0) {
        sent = send(c->in_fd, *p, *n, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
            *p += sent;
            *n -= (size_t)sent;
        } else if (sent < 0 && errno != EAGAIN && errno != EINTR) {
            /* The converter does not read any more (EPIPE): the rest of
             * the content is dropped, its exit status decides. */
            conv_close_fd(&c->in_fd);
        }
    }
    return 0;
}

/* Start the converter configured by @cfg for the record. */
static void
conv_begin(struct doc *d, const json_t *cfg)
{
    struct conv *c = &d->conv;

    if (conv_config(c, cfg, d->mime) != 0) {
        d->outcome = OUT_FAILED;
        return;
    }
    if (c->file_arg != SIZE_MAX) {
        if (conv_spool(c) != 0) {
            d->outcome = OUT_FAILED;
        }
        return;
    }
    if (conv_spawn(c) != 0) {
        d->outcome = OUT_FAILED;
    }
}

/* Give @n bytes of content to the converter: into the spool file, or to
 * its stdin while its stdout is read (so neither side can block the
 * other). */
static int
conv_feed(struct tx *x, struct doc *d, const char *p, size_t n)
{
    struct conv *c = &d->conv;
    int rc = 0;

    if (d->outcome != OUT_EXTRACTED) {
        return FEED_STOP;
    }
    if (c->file_fd >= 0) {
        if (sl_write_all(c->file_fd, p, n) != 0) {
            SL_WARN("textExtractor: spool %s: %s", c->path, strerror(errno));
            d->outcome = OUT_FAILED;
            return FEED_STOP;
        }
        return 0;
    }
    while (rc == 0 && n > 0 && c->in_fd >= 0 && !c->reaped) {
        rc = conv_poll(x, d, &p, &n, 100);
    }
    return rc != 0 ? rc : (c->reaped || c->in_fd < 0 ? FEED_STOP : 0);
}

/* Wait (until the deadline) for the child to exit while reading its
 * output; its process group is killed before it is reaped. */
static int
conv_wait(struct tx *x, struct doc *d)
{
    struct conv *c = &d->conv;
    siginfo_t si;
    int nap = 1;
    int rc = 0;

    while (!c->reaped) {
        memset(&si, 0, sizeof(si));
        if (waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
                0 &&
            si.si_pid == c->pid) {
            while (c->out_fd >= 0 && !d->text.full &&
                   sl_mono_ms() < c->deadline) {
                struct pollfd pfd = {c->out_fd, POLLIN, 0};

                if (poll(&pfd, 1, 0) <= 0) {
                    break;
                }
                conv_read(x, d);
            }
            conv_kill(c);
            break;
        }
        if (c->out_fd >= 0) {
            rc = conv_poll(x, d, NULL, NULL, 100);
        } else {
            (void)poll(NULL, 0, nap);
            nap = nap < 50 ? nap * 2 : 50;
            rc = conv_poll(x, d, NULL, NULL, 0);
        }
        if (rc != 0) {
            break;
        }
    }
    return rc;
}

/* Finish the converter (unless @abort: kill it): the outcome from its
 * exit status; files and descriptors released. */
static int
conv_end(struct tx *x, struct doc *d, int abort)
{
    struct conv *c = &d->conv;
    int rc = 0;

    if (c->file_fd >= 0) {
        conv_close_fd(&c->file_fd);
        if (!abort && d->outcome == OUT_EXTRACTED && conv_spawn(c) != 0) {
            d->outcome = OUT_FAILED;
        }
    }
    conv_close_fd(&c->in_fd);
    if (c->pid > 0) {
        if (abort) {
            conv_kill(c);
        } else {
            rc = conv_wait(x, d);
        }
    }
    conv_close_fd(&c->out_fd);
    if (c->path != NULL) {
        (void)unlink(c->path);
        SL_FREE(c->path);
    }
    if (!abort && rc == 0 && c->pid > 0 && d->outcome == OUT_EXTRACTED) {
        if (c->timed_out) {
            d->outcome = OUT_TIMEOUT;
            SL_WARN("textExtractor: converter %s for %s timed out after "
                    "%lld s",
                    c->argv[0],
                    d->mime,
                    (long long)(c->timeout / 1000));
        } else if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0) {
            d->outcome = OUT_FAILED;
            SL_WARN("textExtractor: converter %s for %s failed (%s %d)",
                    c->argv[0],
                    d->mime,
                    WIFEXITED(c->status) ? "exit status" : "signal",
                    WIFEXITED(c->status) ? WEXITSTATUS(c->status)
                                         : WTERMSIG(c->status));
        }
    }
    if (d->outcome != OUT_EXTRACTED) {
        text_clear(&d->text);
    }
    SL_FREE(c->argv);
    c->pid = -1;
    return rc;
}

/* ------------------------------------------------------------------------
 * Records.
 * --------------------------------------------------------------------- */

static void
doc_init(struct tx *x, struct doc *d)
{
    memset(d, 0, sizeof(*d));
    text_init(&d->text, (size_t)x->max_text, 0);
    text_init(&d->title, 0, 1);
    d->cd = (iconv_t)-1;
    d->outcome = OUT_NOTEXT;
    d->conv.file_fd = -1;
    d->conv.in_fd = -1;
    d->conv.out_fd = -1;
    d->conv.pid = -1;
    d->conv.file_arg = SIZE_MAX;
}

static void
doc_free(struct doc *d)
{
    sl_buf_free(&d->text.b);
    sl_buf_free(&d->title.b);
}

/* Choose and start the extractor of a record whose content starts with
 * @len bytes @head.  A converter configured for the MIME type wins over
 * the built-in extractors. */
static int
extractor_begin(struct tx *x, struct doc *d, const char *head, size_t len)
{
    const json_t *cfg = json_object_get(x->converters, d->mime);

    d->kind = mime_kind(d->mime);
    d->outcome = OUT_EXTRACTED;
    if (cfg != NULL) {
        d->conv_on = 1;
        conv_begin(d, cfg);
        return 0;
    }
    switch (d->kind) {
    case KIND_TEXT:
        plain_begin(x, d, head, len);
        return 0;
    case KIND_HTML:
        d->text.collapse = 1;
        return html_begin(x, d, head, len);
    case KIND_XML:
        d->text.collapse = 1;
        return xml_begin(d);
    default:
        d->outcome = OUT_NOTEXT;
        return 0;
    }
}

/* Feed @n bytes: 0, FEED_STOP (nothing more is needed) or SL_ECANCELED. */
static int
extractor_feed(struct tx *x, struct doc *d, const char *p, size_t n)
{
    if (d->conv_on) {
        return conv_feed(x, d, p, n);
    }
    switch (d->kind) {
    case KIND_TEXT:
        return plain_feed(x, d, p, n);
    case KIND_HTML:
    case KIND_XML:
        return markup_feed(x, d, p, n);
    default:
        return FEED_STOP;
    }
}

/* End the extractor, freeing what it holds (@abort: the record is
 * dropped, results do not matter).  0 or SL_ECANCELED. */
static int
extractor_end(struct tx *x, struct doc *d, int abort)
{
    int rc = 0;

    if (d->conv_on) {
        rc = conv_end(x, d, abort);
    } else if (d->kind == KIND_TEXT) {
        plain_end(x, d);
    } else if (d->kind == KIND_HTML || d->kind == KIND_XML) {
        markup_end(d, abort);
    }
    text_end(&d->text);
    text_end(&d->title);
    if (d->text.full) {
        d->truncated = 1;
    }
    return rc;
}

/* Read up to @cap bytes of the current attachment into @buf. */
static int
read_up_to(struct sl_bulk_reader *r,
           char *buf,
           size_t cap,
           size_t *len,
           struct sl_err *err)
{
    size_t n = 0;
    int rc = 0;

    *len = 0;
    while (*len < cap) {
        rc = sl_bulk_reader_attachment_read(r, buf + *len, cap - *len, &n, err);
        if (rc != 0 || n == 0) {
            break;
        }
        *len += n;
    }
    return rc;
}

/*
 * Stream the content attachment (@size bytes) of record @meta through the
 * extractor its first bytes select.  At most maxContentBytes are read
 * here; the rest is skipped by the reader.  Returns 0, a reader error
 * (details in @err) or SL_ECANCELED.
 */
static int
content(struct tx *x,
        struct sl_bulk_reader *r,
        const json_t *meta,
        struct doc *d,
        uint64_t size,
        struct sl_err *err)
{
    uint64_t left = size < x->max_content ? size : x->max_content;
    size_t len = 0;
    int rc = 0;
    int fed = 0;

    d->truncated = size > x->max_content;
    rc = read_up_to(
        r, x->buf, left < HEAD_MAX ? (size_t)left : HEAD_MAX, &len, err);
    if (rc != 0) {
        return rc;
    }
    mime_detect(x, meta, x->buf, len, d->mime);
    d->given = json_string_value(
        json_object_get(meta, sl_task_mapped(x->ctx, "httpCharset")));
    if (extractor_begin(x, d, x->buf, len) != 0) {
        /* A parser could not be created: the record has no text. */
        SL_WARN("textExtractor: %s: no parser for %s",
                json_string_value(json_object_get(meta, "_recordid")),
                d->mime);
        d->outcome = OUT_NOTEXT;
        fed = FEED_STOP;
    } else {
        left -= len;
        fed = extractor_feed(x, d, x->buf, len);
    }
    while (fed == 0 && left > 0) {
        if (sl_task_is_canceled(x->ctx)) {
            fed = SL_ECANCELED;
            break;
        }
        rc = sl_bulk_reader_attachment_read(
            r, x->buf, left < READ_BUF ? (size_t)left : READ_BUF, &len, err);
        if (rc != 0 || len == 0) {
            break;
        }
        left -= len;
        fed = extractor_feed(x, d, x->buf, len);
    }
    if (rc == 0 && fed < 0) {
        rc = fed;
    }
    fed = extractor_end(x, d, rc != 0);
    return rc != 0 ? rc : fed;
}

/* `fileName`, else the last segment of `_recordid`; borrowed. */
static const char *
fallback_title(const struct tx *x, const json_t *meta)
{
    const char *name = json_string_value(
        json_object_get(meta, sl_task_mapped(x->ctx, "fileName")));
    const char *id = json_string_value(json_object_get(meta, "_recordid"));
    const char *slash = id != NULL ? strrchr(id, '/') : NULL;

    if (name != NULL) {
        return name;
    }
    if (id == NULL) {
        return "";
    }
    return slash != NULL ? slash + 1 : id;
}

/* Set string attribute @key (valid UTF-8 by construction; "" if not). */
static void
set_string(json_t *meta, const char *key, const char *s, size_t len)
{
    json_t *v = json_stringn(s != NULL ? s : "", len);

    if (v == NULL) {
        SL_ERROR("textExtractor: %s is not valid UTF-8; left empty", key);
        v = json_string("");
    }
    (void)json_object_set_new(meta, key, v);
}

/* Count the outcome of a record. */
static void
count(struct tx *x, const struct doc *d, int has_content)
{
    static const char *const kinds[] = {
        "mime.text", "mime.html", "mime.xml", "mime.other"};
    static const char *const outcomes[] = {"records.extracted",
                                           "records.noText",
                                           "converter.failed",
                                           "converter.timeout"};

    if (!has_content) {
        sl_task_counter_add(x->ctx, "records.noText", 1);
        return;
    }
    sl_task_counter_add(x->ctx, kinds[d->kind], 1);
    sl_task_counter_add(x->ctx, outcomes[d->outcome], 1);
    if (d->truncated) {
        sl_task_counter_add(x->ctx, "records.truncated", 1);
    }
    if (d->malformed) {
        sl_task_counter_add(x->ctx, "records.malformed", 1);
    }
}

/* Write @meta (its attachments are not copied) with the extraction
 * results.  Returns an enum sl_worker_result. */
static int
write_record(struct tx *x, json_t *meta, struct doc *d, int has_content)
{
    const char *title =
        d->title.b.len > 0 ? d->title.b.data : fallback_title(x, meta);
    int rc = 0;

    /* A record that brings its text as attachment (extracted already, by
     * the webCrawler's extractText or by this worker) keeps its title,
     * MIME type and charset; the text is written as textOutput says. */
    if (d->given_text) {
        /* as a record passed as stored: nothing added */
        if (x->text_attribute) {
            set_string(meta, "text", d->text.b.data, d->text.b.len);
        } else {
            (void)json_object_del(meta, "text");
        }
        sl_task_counter_add(x->ctx, "records.textGiven", 1);
        if (d->text.full) {
            sl_task_counter_add(x->ctx, "records.truncated", 1);
        }
        goto write;
    }
    /* A record pushed with its text (JSON over the bulkbuilder API) and no
     * content keeps its own title and text. */
    if (!has_content && json_is_string(json_object_get(meta, "text"))) {
        if (!json_is_string(json_object_get(meta, "title"))) {
            set_string(meta, "title", title, strlen(title));
        }
        if (!json_is_string(json_object_get(meta, "mimeType"))) {
            set_string(meta, "mimeType", "text/plain", 10);
        }
        sl_task_counter_add(x->ctx, "records.textGiven", 1);
        goto write;
    }
    if (!has_content) {
        const char *ext = mime_from_extension(x, meta);

        mime_normalize(record_mime(x, meta), d->mime);
        if (d->mime[0] == '\0') {
            (void)snprintf(d->mime,
                           MIME_MAX,
                           "%s",
                           ext != NULL ? ext : "application/octet-stream");
        }
    }
    set_string(meta, "mimeType", d->mime, strlen(d->mime));
    if (d->charset[0] != '\0') {
        set_string(meta, "charset", d->charset, strlen(d->charset));
    }
    set_string(meta, "title", title, strlen(title));
    if (x->text_attribute) {
        set_string(meta, "text", d->text.b.data, d->text.b.len);
    } else {
        (void)json_object_del(meta, "text"); /* the attachment replaces it */
    }
    count(x, d, has_content);
write:
    rc = sl_bulk_writer_record_begin(x->w, meta);
    if (rc == 0 && !x->text_attribute && (has_content || d->given_text)) {
        rc = sl_bulk_writer_attachment_begin(x->w, TEXT_ATT, d->text.b.len);
        if (rc == 0 && d->text.b.len > 0) {
            rc = sl_bulk_writer_attachment_write(
                x->w, d->text.b.data, d->text.b.len);
        }
    }
    if (rc == 0) {
        rc = sl_bulk_writer_record_end(x->w);
    }
    if (rc != 0) {
        sl_task_set_message(x->ctx, "write: %s", sl_strerror(rc));
        return SL_WORKER_RECOVERABLE;
    }
    return SL_WORKER_OK;
}

/* Read the attachment `text` (@size bytes, supposed UTF-8) of a record
 * that brings its text into d->text, up to maxTextBytes: cut between two
 * characters and, like an extracted text, not after a space or a line
 * break. */
static int
given_text(struct tx *x,
           struct sl_bulk_reader *r,
           struct doc *d,
           uint64_t size,
           struct sl_err *err)
{
    uint64_t left = size;
    size_t len = 0;
    int rc = 0;

    d->given_text = 1;
    while (left > 0 && !d->text.full) {
        rc = sl_bulk_reader_attachment_read(
            r, x->buf, left < READ_BUF ? (size_t)left : READ_BUF, &len, err);
        if (rc != 0 || len == 0) {
            break;
        }
        left -= len;
        text_bytes(&d->text, x->buf, len);
    }
    text_end(&d->text);
    while (d->text.full && d->text.b.len > 0 &&
           (d->text.b.data[d->text.b.len - 1] == ' ' ||
            d->text.b.data[d->text.b.len - 1] == '\n')) {
        d->text.b.data[--d->text.b.len] = '\0';
    }
    return rc;
}

/*
 * One record, its first attachment begun already (@rc from
 * sl_bulk_reader_attachment_next, @name, @size): walk its attachments
 * (the content one is extracted; a first attachment `text` is the
 * record's text, extracted already, and then no other is read; the
 * others are skipped), then write it.
 * Returns an enum sl_worker_result with the task message set: FATAL for a
 * corrupt input, RECOVERABLE for an output error or a cancel.
 */
static int
extract_record(struct tx *x,
               struct sl_bulk_reader *r,
               json_t *meta,
               int rc,
               const char *name,
               uint64_t size)
{
    struct doc d;
    struct sl_err err;
    int has_content = 0;
    int first = 1;
    int res = SL_WORKER_OK;

    sl_err_clear(&err);
    doc_init(x, &d);
    for (; rc > 0; rc = sl_bulk_reader_attachment_next(r, &name, &size, &err)) {
        if (has_content || d.given_text) {
            continue;
        }
        if (strcmp(name, x->att) == 0 ||
            (x->att2 != NULL && strcmp(name, x->att2) == 0)) {
            has_content = 1;
            rc = content(x, r, meta, &d, size, &err);
        } else if (first && strcmp(name, TEXT_ATT) == 0) {
            rc = given_text(x, r, &d, size, &err);
        }
        first = 0;
        if (rc != 0) {
            break;
        }
    }
    if (rc == SL_ECANCELED) {
        sl_task_set_message(x->ctx, "canceled");
        res = SL_WORKER_RECOVERABLE;
    } else if (rc < 0) {
        sl_task_set_message(x->ctx, "input %zu: %s", x->bulk, err.message);
        res = SL_WORKER_FATAL;
    } else {
        res = write_record(x, meta, &d, has_content);
    }
    doc_free(&d);
    return res;
}

/* Whether a record whose first attachment is @name (@size bytes) is
 * written on as stored, with any other attachments it has: it brings its
 * text as attachment (extracted already) within maxTextBytes, and the
 * text goes out as attachment. */
static int
passes_as_stored(const struct tx *x, const char *name, uint64_t size)
{
    return !x->text_attribute && strcmp(name, TEXT_ATT) == 0 &&
           size <= x->max_text && strcmp(x->att, TEXT_ATT) != 0;
}

/* Every record of input bulk @i.  Returns an enum sl_worker_result. */
static int
extract_bulk(struct tx *x, size_t i)
{
    struct sl_bulk_reader *r = NULL;
    struct sl_err err;
    const char *raw = NULL;
    size_t raw_len = 0;
    const char *name = NULL;
    uint64_t size = 0;
    json_t *meta = NULL;
    int res = SL_WORKER_OK;
    int rc = 0;

    sl_err_clear(&err);
    x->bulk = i;
    rc = sl_task_input_open(x->ctx, SLOT_IN, i, &r);
    if (rc != 0) {
        sl_task_set_message(x->ctx, "input %zu: %s", i, sl_strerror(rc));
        return SL_WORKER_RECOVERABLE;
    }
    for (;;) {
        rc = sl_bulk_reader_next_raw(r, &raw, &raw_len, &err);
        if (rc <= 0) {
            break;
        }
        rc = sl_bulk_reader_attachment_next(r, &name, &size, &err);
        if (rc == 1 && passes_as_stored(x, name, size)) {
            /* no decoding, one copy of the bytes */
            rc = sl_bulk_copy_record(r, x->w, &err);
            if (rc != 0 && err.message[0] != '\0') { /* the reader's */
                sl_task_set_message(x->ctx, "input %zu: %s", i, err.message);
                return SL_WORKER_FATAL;
            }
            if (rc != 0) {
                sl_task_set_message(x->ctx, "write: %s", sl_strerror(rc));
                return SL_WORKER_RECOVERABLE;
            }
            sl_task_counter_add(x->ctx, "records.textGiven", 1);
            if (sl_task_is_canceled(x->ctx)) {
                sl_task_set_message(x->ctx, "canceled");
                return SL_WORKER_RECOVERABLE;
            }
            continue;
        }
        if (rc < 0 || sl_bulk_reader_meta(r, &meta, &err) != 0) {
            rc = -1;
            break;
        }
        res = extract_record(x, r, meta, rc, name, size);
        json_decref(meta);
        meta = NULL;
        if (res != SL_WORKER_OK) {
            return res;
        }
        if (sl_task_is_canceled(x->ctx)) {
            sl_task_set_message(x->ctx, "canceled");
            return SL_WORKER_RECOVERABLE;
        }
    }
    if (rc < 0) {
        sl_task_set_message(x->ctx, "input %zu: %s", i, err.message);
        return SL_WORKER_FATAL;
    }
    sl_task_input_close(x->ctx, r);
    return SL_WORKER_OK;
}

/* sl__wk_share_input's test: the record passes as stored. */
static int
given_first(void *arg, const char *name, uint64_t size)
{
    return passes_as_stored(arg, name, size);
}

/* ------------------------------------------------------------------------
 * Tasks.
 * --------------------------------------------------------------------- */

/* Read the parameters into @x; 0 or SL_EINVAL with the task message set. */
static int
tx_init(struct sl_task_ctx *ctx, struct tx *x)
{
    const json_t *att = sl_task_param(ctx, "contentAttachment");
    const char *out = NULL;

    memset(x, 0, sizeof(*x));
    x->ctx = ctx;
    x->att = sl_task_mapped(ctx, DEFAULT_ATTACHMENT);
    x->att2 = sl_task_mapped(ctx, WEB_ATTACHMENT);
    if (att != NULL) {
        x->att2 = NULL;
        x->att = json_string_value(att);
        if (x->att == NULL || x->att[0] == '\0') {
            sl_task_set_message(ctx, "contentAttachment: not a name");
            return SL_EINVAL;
        }
    }
    if (sl_task_param_u64(
            ctx, "maxContentBytes", DEFAULT_MAX_CONTENT, &x->max_content) !=
        0) {
        sl_task_set_message(ctx, "maxContentBytes: not a number");
        return SL_EINVAL;
    }
    if (sl__wk_max_text(ctx, &x->max_text) != 0) {
        return SL_EINVAL;
    }
    out = sl_task_param_str(ctx, "textOutput");
    if (out != NULL && strcmp(out, "attachment") != 0 &&
        strcmp(out, "attribute") != 0) {
        sl_task_set_message(
            ctx,
            "textOutput must be 'attachment' or 'attribute', not '%s'",
            out);
        return SL_EINVAL;
    }
    x->text_attribute = out != NULL && strcmp(out, "attribute") == 0;
    x->converters = sl_task_services(ctx)->converters;
    if (x->converters != NULL && !json_is_object(x->converters)) {
        SL_WARN("textExtractor: converters: not an object; ignored");
        x->converters = NULL;
    }
    return 0;
}

static int
text_perform(struct sl_task_ctx *ctx)
{
    struct tx x;
    size_t n = 0;
    size_t i = 0;
    int res = SL_WORKER_OK;
    int rc = 0;

    if (tx_init(ctx, &x) != 0) {
        return SL_WORKER_FATAL;
    }
    /* every record brings its text (the webCrawler's extractText): the
     * input is the output, shared, not copied */
    rc = sl__wk_share_input(
        ctx, SLOT_IN, SLOT_OUT, given_first, &x, 0, "records.textGiven");
    if (rc != 0) {
        return rc > 0            ? SL_WORKER_OK
               : rc == SL_ENOENT ? SL_WORKER_FATAL /* output not connected */
                                 : SL_WORKER_RECOVERABLE;
    }
    rc = sl_task_output_writer(ctx, SLOT_OUT, &x.w);
    if (rc != 0) {
        sl_task_set_message(ctx, "output %s: %s", SLOT_OUT, sl_strerror(rc));
        return rc == SL_ENOENT ? SL_WORKER_FATAL : SL_WORKER_RECOVERABLE;
    }
    (void)pthread_once(&xml_once, xml_init);
    x.buf = sl_malloc(READ_BUF);
    x.obuf = sl_malloc(READ_BUF);
    x.stage = sl_malloc(READ_BUF + HOLD_MAX);
    n = sl_task_input_count(ctx, SLOT_IN);
    for (i = 0; i < n && res == SL_WORKER_OK; i++) {
        res = extract_bulk(&x, i);
    }
    if (x.magic != NULL) {
        magic_close(x.magic);
    }
    if (x.ud != NULL) {
        uchardet_delete(x.ud);
    }
    sl_free(x.stage);
    sl_free(x.obuf);
    sl_free(x.buf);
    return res;
}

/* ------------------------------------------------------------------------
 * The HTML text for the webCrawler (workers_int.h).
 * --------------------------------------------------------------------- */

struct sl__wk_html_text {
    struct doc d;
};

int
sl__wk_max_text(struct sl_task_ctx *ctx, uint64_t *out)
{
    if (sl_task_param_u64(ctx, "maxTextBytes", DEFAULT_MAX_TEXT, out) != 0 ||
        *out > MAX_TEXT_LIMIT) {
        sl_task_set_message(ctx,
                            "maxTextBytes: not a number up to %llu",
                            (unsigned long long)MAX_TEXT_LIMIT);
        return SL_EINVAL;
    }
    return 0;
}

int
sl__wk_html_text_applies(const char *mime,
                         const char *head,
                         size_t len,
                         char *out)
{
    /* mime_detect's fast path for a textual record type and head; without
     * a textual extension libmagic decides, and over a textual head it
     * nearly always leaves text/html standing (mime_trust_given) */
    mime_normalize(mime, out);
    return mime_kind(out) == KIND_HTML && head_looks_textual(head, len);
}

struct sl__wk_html_text *
sl__wk_html_text_new(uint64_t max_text)
{
    struct sl__wk_html_text *t = sl_calloc(1, sizeof(*t));
    struct tx x;

    memset(&x, 0, sizeof(x));
    x.max_text = max_text;
    doc_init(&x, &t->d);
    t->d.kind = KIND_HTML;
    t->d.outcome = OUT_EXTRACTED;
    t->d.text.collapse = 1;
    text_init(&t->d.title, TITLE_MAX, 1);
    return t;
}

static void
tap_start(void *ctx, const unsigned char *tag, const unsigned char **atts)
{
    html_start(&((struct sl__wk_html_text *)ctx)->d, tag, atts);
}

static void
tap_end(void *ctx, const unsigned char *tag)
{
    html_end(&((struct sl__wk_html_text *)ctx)->d, tag);
}

static void
tap_text(void *ctx, const unsigned char *s, int len)
{
    html_text(&((struct sl__wk_html_text *)ctx)->d, s, len);
}

void
sl__wk_html_text_begin(struct sl__wk_html_text *t,
                       struct _xmlParserCtxt *px,
                       const char *head,
                       size_t len,
                       const char *given,
                       struct uchardet **ud,
                       struct sl_web_tap *tap)
{
    t->d.px = px; /* borrowed for the switch only */
    html_charset(ud, &t->d, head, len, given);
    t->d.px = NULL;
    tap->ctx = t;
    tap->start = tap_start;
    tap->end = tap_end;
    tap->text = tap_text;
}

int
sl__wk_html_text_end(struct sl__wk_html_text *t,
                     const char **text,
                     size_t *len,
                     const char **title,
                     const char **charset)
{
    text_end(&t->d.text);
    text_end(&t->d.title);
    *text = t->d.text.b.len > 0 ? t->d.text.b.data : "";
    *len = t->d.text.b.len;
    *title = t->d.title.b.len > 0 ? t->d.title.b.data : "";
    *charset = t->d.charset;
    return t->d.text.full;
}

void
sl__wk_html_text_ud_free(struct uchardet *ud)
{
    if (ud != NULL) {
        uchardet_delete(ud);
    }
}

void
sl__wk_html_text_free(struct sl__wk_html_text *t)
{
    if (t == NULL) {
        return;
    }
    doc_free(&t->d);
    sl_free(t);
}

const struct sl_worker_type sl_worker_textExtractor = {
    SL_WORKER_ABI_VERSION,
    "textExtractor",
    "{\"name\": \"textExtractor\","
    " \"parameters\": [{\"name\": \"contentAttachment\", \"optional\": true},"
    "  " SL__WK_DECL_MAPPING ","
    "  {\"name\": \"maxTextBytes\", \"optional\": true, \"type\": \"integer\","
    "   \"maximum\": 16777216},"
    "  {\"name\": \"maxContentBytes\", \"optional\": true,"
    "   \"type\": \"integer\"},"
    "  {\"name\": \"textOutput\", \"optional\": true,"
    "   \"values\": [\"attachment\", \"attribute\"]}],"
    " \"input\": [{\"name\": \"recordsToExtract\", \"type\": \"recordBulks\"}],"
    " \"output\": [{\"name\": \"extractedRecords\", \"type\": "
    "\"recordBulks\"}]}",
    text_perform,
    NULL,
};

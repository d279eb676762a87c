/*
 * HTML and XML text with libxml2's SAX push parsers (no document tree),
 * and the same HTML text through a links parser's tap (text.h).
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/HTMLparser.h>
#include <libxml/SAX2.h>
#include <libxml/parserInternals.h>

#include "text/text_int.h"

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

void
sl__text_xml_once(void)
{
    (void)pthread_once(&xml_once, xml_init);
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
    struct sl_text_doc *d = user;
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
    sl__text_buf_break(&d->text, html_separator(name));
}

static void
html_end(void *user, const xmlChar *tag)
{
    struct sl_text_doc *d = user;
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
    sl__text_buf_break(&d->text, html_separator(name));
}

static void
html_text(void *user, const xmlChar *s, int len)
{
    struct sl_text_doc *d = user;

    if (d->skip > 0 || len <= 0 || d->text.full) {
        return;
    }
    if (d->in_title > 0) {
        sl__text_buf_bytes(&d->title, s, (size_t)len);
        return;
    }
    d->text.collapse = d->pre == 0;
    sl__text_buf_bytes(&d->text, s, (size_t)len);
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
    const char *bom = sl__text_charset_bom(head, len);
    const char *end = head + len;
    const char *p = head;

    if (bom != NULL) {
        sl__text_charset_copy(out, bom);
        return 1;
    }
    while ((p = find_ci(p, end, "<meta")) != NULL) {
        const char *gt = memchr(p, '>', (size_t)(end - p));
        const char *c = NULL;
        char name[SL_TEXT_CHARSET_MAX];
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
            sl__text_charset_copy(out, name);
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
             struct sl_text_doc *d,
             const char *head,
             size_t len,
             const char *given)
{
    const char *bom = sl__text_charset_bom(head, len);
    xmlCharEncodingHandlerPtr enc = NULL;

    if (bom != NULL) {
        /* libxml2's "UTF-16" is little-endian only */
        sl__text_charset_copy(d->charset,
                              strcmp(bom, "UTF-16") != 0       ? bom
                              : (unsigned char)head[0] == 0xfe ? "UTF-16BE"
                                                               : "UTF-16LE");
    } else if (given != NULL && given[0] != '\0' &&
               (enc = xmlFindCharEncodingHandler(given)) != NULL &&
               xmlSwitchToEncoding(d->px, enc) == 0) {
        sl__text_charset_copy(d->charset, given);
        d->px->options |= HTML_PARSE_IGNORE_ENC;
        return;
    } else if (html_declared(head, len, d->charset)) {
        return;
    } else {
        sl__text_charset_detect(ud, head, len, d->charset);
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
int
sl__text_html_open(struct sl_text *x,
                   struct sl_text_doc *d,
                   const char *head,
                   size_t len)
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
    sl__text_buf_init(&d->title, SL_TEXT_TITLE_MAX, 1);
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
    struct sl_text_doc *d = ((xmlParserCtxtPtr)ctx)->_private;

    (void)localname;
    (void)prefix;
    (void)uri;
    (void)nb_namespaces;
    (void)namespaces;
    (void)nb_attributes;
    (void)nb_defaulted;
    (void)attributes;
    sl__text_buf_break(&d->text, SEP_SPACE);
}

static void
xml_element_end(void *ctx,
                const xmlChar *localname,
                const xmlChar *prefix,
                const xmlChar *uri)
{
    struct sl_text_doc *d = ((xmlParserCtxtPtr)ctx)->_private;

    (void)localname;
    (void)prefix;
    (void)uri;
    sl__text_buf_break(&d->text, SEP_SPACE);
}

static void
xml_text(void *ctx, const xmlChar *s, int len)
{
    struct sl_text_doc *d = ((xmlParserCtxtPtr)ctx)->_private;

    if (len > 0) {
        sl__text_buf_bytes(&d->text, s, (size_t)len);
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
int
sl__text_xml_open(struct sl_text_doc *d)
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

/* Feed @n bytes to the push parser; XML stops at the first fatal error
 * (the text so far is kept). */
int
sl__text_markup_feed(struct sl_text_doc *d, const char *p, size_t n)
{
    while (n > 0 && !d->text.full) {
        int k = n < SL_TEXT_CHUNK ? (int)n : (int)SL_TEXT_CHUNK;

        if (d->kind == SL_TEXT_KIND_HTML) {
            /* in the blocks the crawler parses too: web/web.h */
            sl_web_html_feed(d->px, &d->feed, p, (size_t)k);
        } else {
            (void)xmlParseChunk(d->px, p, k, 0);
            if (!d->px->wellFormed) {
                d->malformed = 1;
                return SL_TEXT_STOP;
            }
        }
        p += k;
        n -= (size_t)k;
    }
    return d->text.full ? SL_TEXT_STOP : 0;
}

/* Finish the parser (unless @abort) and free it. */
void
sl__text_markup_end(struct sl_text_doc *d, int abort)
{
    if (d->px == NULL) {
        return;
    }
    if (d->kind == SL_TEXT_KIND_HTML) {
        if (!abort && !d->text.full) {
            sl_web_html_end(d->px, &d->feed);
        }
        sl_web_html_feed_free(&d->feed);
        htmlFreeParserCtxt(d->px);
        d->px = NULL;
        return;
    }
    if (!abort && !d->text.full && !d->malformed) {
        (void)xmlParseChunk(d->px, NULL, 0, 1);
        d->malformed = !d->px->wellFormed;
    }
    if (d->px->encoding != NULL) {
        sl__text_charset_copy(d->charset, (const char *)d->px->encoding);
    } else {
        sl__text_charset_copy(d->charset, "UTF-8");
    }
    if (d->px->myDoc != NULL) {
        xmlFreeDoc(d->px->myDoc);
        d->px->myDoc = NULL;
    }
    xmlFreeParserCtxt(d->px);
    d->px = NULL;
}

/* ------------------------------------------------------------------------
 * The HTML text for a links parser (text.h).
 * --------------------------------------------------------------------- */

struct sl_text_html {
    struct sl_text_doc d;
};

int
sl_text_html_applies(const char *mime, const char *head, size_t len, char *out)
{
    /* sl_text_mime_detect's fast path for a textual record type and head;
     * without a textual extension libmagic decides, and over a textual
     * head it nearly always leaves text/html standing (mime_trust_given) */
    sl_text_mime_normalize(mime, out);
    return sl_text_mime_kind(out) == SL_TEXT_KIND_HTML &&
           sl__text_head_textual(head, len);
}

struct sl_text_html *
sl_text_html_new(uint64_t max_text)
{
    struct sl_text_html *t = sl_calloc(1, sizeof(*t));

    sl__text_doc_init(&t->d, max_text);
    t->d.kind = SL_TEXT_KIND_HTML;
    t->d.outcome = SL_TEXT_EXTRACTED;
    t->d.text.collapse = 1;
    sl__text_buf_init(&t->d.title, SL_TEXT_TITLE_MAX, 1);
    return t;
}

static void
tap_start(void *ctx, const unsigned char *tag, const unsigned char **atts)
{
    html_start(&((struct sl_text_html *)ctx)->d, tag, atts);
}

static void
tap_end(void *ctx, const unsigned char *tag)
{
    html_end(&((struct sl_text_html *)ctx)->d, tag);
}

static void
tap_text(void *ctx, const unsigned char *s, int len)
{
    html_text(&((struct sl_text_html *)ctx)->d, s, len);
}

void
sl_text_html_begin(struct sl_text_html *t,
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
sl_text_html_end(struct sl_text_html *t,
                 const char **text,
                 size_t *len,
                 const char **title,
                 const char **charset)
{
    sl__text_buf_end(&t->d.text);
    sl__text_buf_end(&t->d.title);
    *text = t->d.text.b.len > 0 ? t->d.text.b.data : "";
    *len = t->d.text.b.len;
    *title = t->d.title.b.len > 0 ? t->d.title.b.data : "";
    *charset = t->d.charset;
    return t->d.text.full;
}

void
sl_text_ud_free(struct uchardet *ud)
{
    if (ud != NULL) {
        uchardet_delete(ud);
    }
}

void
sl_text_html_free(struct sl_text_html *t)
{
    if (t == NULL) {
        return;
    }
    sl__text_doc_fini(&t->d);
    sl_free(t);
}

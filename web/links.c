/*
 * HTML link extraction over libxml2's HTML push parser (SAX callbacks
 * only, no document tree).  The links of the head wait in a bounded list
 * of raw hrefs until the head ends, so that <base href> and
 * <meta name="robots" content="nofollow"> anywhere in the head apply to
 * all of them; after that every link is resolved and reported at once.
 */
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>
#include <libxml/parserInternals.h>

#include "web/web_int.h"

#define PENDING_MAX (64u * 1024u) /* raw hrefs of the head */

#define SHRINK_AT (64 * 1024) /* sl_web_html_feed: consumed input dropped */

struct sl_web_links {
    htmlParserCtxtPtr px;
    CURLU *page; /* the page URL */
    CURLU *base; /* the first <base href>, resolved; NULL if none */
    char *dir;   /* directory of the base in use (page or <base>) */
    struct sl_web_url_cache *cache; /* borrowed; NULL: none */
    int base_seen;
    int (*cb)(void *ctx, const char *url, enum sl_web_link_kind kind);
    void *ctx;
    size_t max_links;
    int rc;                /* first error; the extractor has failed */
    int waiting;           /* head links go to pending */
    struct sl_buf pending; /* kind digit, href, NUL; repeated */
    size_t npending;       /* entries in pending */
    struct sl_web_links_summary sum;
    struct sl_web_html_feed feed;
    struct sl_web_tap tap; /* a second reader; tap.start NULL: none */
};

/* ------------------------------------------------------------------------
 * libxml2 set-up, shared with sitemap.c.
 * --------------------------------------------------------------------- */

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void
xml_init_once(void)
{
    xmlInitParser();
}

void
sl__web_xml_init(void)
{
    (void)pthread_once(&xml_once, xml_init_once);
}

/* Parser errors are expected (pages are whatever the web serves). */
static void
quiet_error(void *ctx, xmlErrorPtr e)
{
    (void)ctx;
    (void)e;
}

/* ------------------------------------------------------------------------
 * Reporting.
 * --------------------------------------------------------------------- */

static void
fail(struct sl_web_links *lx, int rc)
{
    if (lx->rc == 0) {
        lx->rc = rc;
        xmlStopParser(lx->px);
    }
}

/* Resolve @href and hand it to the callback, or count why not. */
static void
report(struct sl_web_links *lx, const char *href, enum sl_web_link_kind kind)
{
    char *url = NULL;
    int rc = 0;

    rc = sl__web_url_resolve_cached(
        lx->cache, lx->dir, lx->base != NULL ? lx->base : lx->page, href, &url);
    if (rc == SL_EACCES) {
        lx->sum.refused++;
    } else if (rc == SL_EINTERNAL) {
        fail(lx, rc);
    } else if (rc != 0) {
        lx->sum.invalid++;
    } else if (lx->sum.reported >= lx->max_links) {
        lx->sum.over_limit++;
    } else {
        lx->sum.reported++;
        rc = lx->cb(lx->ctx, url, kind);
        if (rc != 0) {
            fail(lx, rc);
        }
    }
    sl_free(url);
}

/* The head is over: report the links that waited for it; after a meta
 * robots nofollow only a canonical link (the callback asks
 * sl_web_links_nofollow), the others are suppressed. */
static void
flush(struct sl_web_links *lx)
{
    const char *p = lx->pending.data;
    /* data is NULL while nothing waits: no offset added to it then */
    const char *end = p != NULL ? p + lx->pending.len : NULL;

    lx->waiting = 0;
    while (p != NULL && p < end && lx->rc == 0) {
        const char *href = p + 1;
        enum sl_web_link_kind kind = (enum sl_web_link_kind)(p[0] - '0');

        if (lx->sum.meta_nofollow && kind != SL_WEB_LINK_CANONICAL) {
            lx->sum.suppressed++;
        } else {
            report(lx, href, kind);
        }
        p = href + strlen(href) + 1;
    }
    sl_buf_free(&lx->pending);
    lx->npending = 0;
}

/* Keep a head link for later; SL_ETOOLARGE when the list is full. */
static int
pend(struct sl_web_links *lx, const char *href, enum sl_web_link_kind kind)
{
    size_t n = strlen(href);
    char k = (char)('0' + kind);
    int rc = 0;

    if (n + 2 > PENDING_MAX - lx->pending.len) {
        return SL_ETOOLARGE;
    }
    rc = sl_buf_append(&lx->pending, &k, 1);
    if (rc == 0) {
        rc = sl_buf_append(&lx->pending, href, n + 1);
    }
    if (rc == 0) {
        lx->npending++;
    }
    return rc;
}

static void
found(struct sl_web_links *lx, const char *href, enum sl_web_link_kind kind)
{
    if (sl__web_href_same_document(href)) {
        lx->sum.same_document++;
        return;
    }
    if (lx->sum.meta_nofollow && kind != SL_WEB_LINK_CANONICAL) {
        lx->sum.suppressed++;
        return;
    }
    if (lx->waiting) {
        if (pend(lx, href, kind) == 0) {
            return;
        }
        flush(lx);
    }
    report(lx, href, kind);
}

/* ------------------------------------------------------------------------
 * Elements.
 * --------------------------------------------------------------------- */

static const char *
attr(const xmlChar **atts, const char *name)
{
    size_t i = 0;

    for (i = 0; atts != NULL && atts[i] != NULL; i += 2) {
        if (strcmp((const char *)atts[i], name) == 0) {
            return (const char *)atts[i + 1];
        }
    }
    return NULL;
}

/* Whether the token list @list (separated by white space, commas too when
 * @commas) holds @tok, compared without case. */
static int
has_token(const char *list, const char *tok, int commas)
{
    size_t n = strlen(tok);
    const char *p = list;

    while (p != NULL && *p != '\0') {
        size_t k = 0;

        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' ||
               *p == '\f' || (commas && *p == ',')) {
            p++;
        }
        while (p[k] != '\0' && p[k] != ' ' && p[k] != '\t' && p[k] != '\n' &&
               p[k] != '\r' && p[k] != '\f' && !(commas && p[k] == ',')) {
            k++;
        }
        if (k == n && k > 0 && strncasecmp(p, tok, n) == 0) {
            return 1;
        }
        p += k;
    }
    return 0;
}

static void
on_link(struct sl_web_links *lx,
        const xmlChar **atts,
        const char *name,
        enum sl_web_link_kind kind)
{
    const char *href = attr(atts, name);
    const char *rel = NULL;

    if (href == NULL) {
        return;
    }
    rel = attr(atts, "rel");
    if (kind != SL_WEB_LINK_FRAME && kind != SL_WEB_LINK_IFRAME &&
        rel != NULL && has_token(rel, "nofollow", 0)) {
        lx->sum.nofollow++;
        return;
    }
    found(lx, href, kind);
}

/* <link>: only rel="canonical" and rel="alternate" (not an alternate
 * stylesheet) lead to pages. */
static void
on_link_element(struct sl_web_links *lx, const xmlChar **atts)
{
    const char *rel = attr(atts, "rel");

    if (rel == NULL) {
        return;
    }
    if (has_token(rel, "canonical", 0)) {
        on_link(lx, atts, "href", SL_WEB_LINK_CANONICAL);
    } else if (has_token(rel, "alternate", 0) &&
               !has_token(rel, "stylesheet", 0)) {
        on_link(lx, atts, "href", SL_WEB_LINK_ALTERNATE);
    }
}

/* The first <base href> replaces the page URL for resolving links. */
static void
on_base(struct sl_web_links *lx, const xmlChar **atts)
{
    const char *href = attr(atts, "href");
    char *url = NULL;
    char *dir = NULL;

    if (href == NULL || lx->base_seen) {
        return;
    }
    lx->base_seen = 1;
    if (sl__web_url_resolve_h(lx->page, href, &url) == 0 &&
        sl__web_url_base_dir(url, &lx->base, &dir) == 0) {
        lx->sum.base_used = 1;
        sl_free(lx->dir);
        lx->dir = dir;
    }
    sl_free(url);
}

static void
on_meta(struct sl_web_links *lx, const xmlChar **atts)
{
    const char *name = attr(atts, "name");
    const char *content = attr(atts, "content");

    if (name == NULL || content == NULL || strcasecmp(name, "robots") != 0) {
        return;
    }
    if (has_token(content, "noindex", 1) || has_token(content, "none", 1)) {
        lx->sum.meta_noindex = 1;
    }
    if (!lx->sum.meta_nofollow &&
        (has_token(content, "nofollow", 1) || has_token(content, "none", 1))) {
        /* the head's waiting links are suppressed when the head ends
         * (flush), but for a canonical link, resolved then against a
         * <base> that may still come */
        lx->sum.meta_nofollow = 1;
    }
}

static void
on_start(void *user, const xmlChar *tag, const xmlChar **atts)
{
    struct sl_web_links *lx = user;
    const char *name = (const char *)tag;

    if (lx->tap.start != NULL) {
        lx->tap.start(lx->tap.ctx, tag, atts);
    }
    if (lx->rc != 0) {
        return;
    }
    if (lx->waiting &&
        (strcmp(name, "body") == 0 || strcmp(name, "frameset") == 0)) {
        flush(lx);
    }
    if (strcmp(name, "a") == 0) {
        on_link(lx, atts, "href", SL_WEB_LINK_A);
    } else if (strcmp(name, "area") == 0) {
        on_link(lx, atts, "href", SL_WEB_LINK_AREA);
    } else if (strcmp(name, "link") == 0) {
        on_link_element(lx, atts);
    } else if (strcmp(name, "frame") == 0) {
        on_link(lx, atts, "src", SL_WEB_LINK_FRAME);
    } else if (strcmp(name, "iframe") == 0) {
        on_link(lx, atts, "src", SL_WEB_LINK_IFRAME);
    } else if (strcmp(name, "base") == 0) {
        on_base(lx, atts);
    } else if (strcmp(name, "meta") == 0) {
        on_meta(lx, atts);
    }
}

static void
on_end(void *user, const xmlChar *tag)
{
    struct sl_web_links *lx = user;

    if (lx->tap.end != NULL) {
        lx->tap.end(lx->tap.ctx, tag);
    }
    if (lx->rc == 0 && lx->waiting && strcmp((const char *)tag, "head") == 0) {
        flush(lx);
    }
}

static void
on_text(void *user, const xmlChar *s, int len)
{
    struct sl_web_links *lx = user;

    if (lx->tap.text != NULL) {
        lx->tap.text(lx->tap.ctx, s, len);
    }
}

/* ------------------------------------------------------------------------
 * The push API.
 * --------------------------------------------------------------------- */

const char *
sl_web_link_kind_name(enum sl_web_link_kind kind)
{
    switch (kind) {
    case SL_WEB_LINK_A:
        return "a";
    case SL_WEB_LINK_AREA:
        return "area";
    case SL_WEB_LINK_ALTERNATE:
        return "alternate";
    case SL_WEB_LINK_CANONICAL:
        return "canonical";
    case SL_WEB_LINK_FRAME:
        return "frame";
    case SL_WEB_LINK_IFRAME:
        return "iframe";
    }
    return "?";
}

/* Read the page in @charset (from the HTTP header, which wins over the
 * page's own declaration, all of the page: libxml2 would switch to a
 * <meta> charset in mid-page, from wherever it had converted the input,
 * so the links would depend on the chunks); an unknown name is ignored. */
static void
use_charset(struct sl_web_links *lx, const char *charset)
{
    xmlCharEncodingHandlerPtr enc = NULL;

    if (charset == NULL || charset[0] == '\0') {
        return;
    }
    enc = xmlFindCharEncodingHandler(charset);
    if (enc != NULL && xmlSwitchToEncoding(lx->px, enc) != 0) {
        SL_DEBUG("web: libxml2 cannot read the charset %s", charset);
    } else if (enc != NULL) {
        lx->px->options |= HTML_PARSE_IGNORE_ENC;
    }
}

int
sl_web_links_begin(const char *page_url,
                   const char *charset,
                   size_t max_links,
                   int (*cb)(void *ctx,
                             const char *url,
                             enum sl_web_link_kind kind),
                   void *ctx,
                   struct sl_web_links **out)
{
    struct sl_web_links *lx = NULL;
    htmlSAXHandler sax;
    int rc = 0;

    *out = NULL;
    if (cb == NULL) {
        return SL_EINVAL;
    }
    lx = sl_calloc(1, sizeof(*lx));
    lx->cb = cb;
    lx->ctx = ctx;
    lx->max_links = max_links != 0 ? max_links : SL_WEB_LINKS_DEFAULT_MAX;
    lx->waiting = 1;
    sl_buf_init(&lx->pending, PENDING_MAX);
    rc = sl__web_url_base_dir(page_url, &lx->page, &lx->dir);
    if (rc != 0) {
        goto fail;
    }
    sl__web_xml_init();
    memset(&sax, 0, sizeof(sax));
    sax.startElement = on_start;
    sax.endElement = on_end;
    sax.initialized = XML_SAX2_MAGIC;
    sax.serror = quiet_error;
    lx->px = htmlCreatePushParserCtxt(
        &sax, lx, NULL, 0, NULL, XML_CHAR_ENCODING_NONE);
    if (lx->px == NULL) {
        rc = SL_EINTERNAL;
        goto fail;
    }
    (void)htmlCtxtUseOptions(lx->px,
                             HTML_PARSE_RECOVER | HTML_PARSE_NONET |
                                 HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING);
    use_charset(lx, charset);
    *out = lx;
    return 0;
fail:
    sl_web_links_free(lx);
    return rc;
}

/* Feed @f's full block to @px up to a '<' among its last SL_WEB_HTML_HOLD
 * bytes, or whole; what follows it begins the next block. */
static void
html_block(struct _xmlParserCtxt *px, struct sl_web_html_feed *f)
{
    size_t cut = f->len;
    size_t j = 0;

    for (j = f->len; j > 0 && f->len - (j - 1) <= SL_WEB_HTML_HOLD; j--) {
        if (f->block[j - 1] == '<') {
            cut = j - 1;
            break;
        }
    }
    if (px->input != NULL && px->checkIndex == 0 &&
        px->input->cur - px->input->base > SHRINK_AT) {
        xmlParserInputShrink(px->input);
    }
    (void)htmlParseChunk(px, f->block, (int)cut, 0);
    f->len -= cut;
    memmove(f->block, f->block + cut, f->len);
}

void
sl_web_html_feed(struct _xmlParserCtxt *px,
                 struct sl_web_html_feed *f,
                 const char *p,
                 size_t k)
{
    while (k > 0) {
        size_t n = SL_WEB_HTML_BLOCK - f->len;

        if (f->block == NULL) {
            f->block = sl_malloc(SL_WEB_HTML_BLOCK);
        }
        n = n < k ? n : k;
        memcpy(f->block + f->len, p, n);
        f->len += n;
        p += n;
        k -= n;
        if (f->len == SL_WEB_HTML_BLOCK) {
            html_block(px, f);
        }
    }
}

void
sl_web_html_end(struct _xmlParserCtxt *px, struct sl_web_html_feed *f)
{
    (void)htmlParseChunk(px, f->block, (int)f->len, 1);
    sl_web_html_feed_free(f);
}

void
sl_web_html_feed_free(struct sl_web_html_feed *f)
{
    sl_free(f->block);
    f->block = NULL;
    f->len = 0;
}

int
sl_web_links_feed(struct sl_web_links *lx, const char *data, size_t len)
{
    if (lx->rc != 0) {
        return SL_EBADSTATE;
    }
    sl_web_html_feed(lx->px, &lx->feed, data, len);
    return lx->rc;
}

int
sl_web_links_end(struct sl_web_links *lx, struct sl_web_links_summary *summary)
{
    int rc = 0;

    if (lx->rc == 0) {
        sl_web_html_end(lx->px, &lx->feed);
    }
    if (lx->rc == 0 && lx->waiting) {
        flush(lx);
    }
    rc = lx->rc;
    if (summary != NULL) {
        *summary = lx->sum;
    }
    sl_web_links_free(lx);
    return rc;
}

int
sl_web_links_nofollow(const struct sl_web_links *lx)
{
    return lx->sum.meta_nofollow;
}

void
sl_web_links_free(struct sl_web_links *lx)
{
    if (lx == NULL) {
        return;
    }
    if (lx->px != NULL) {
        if (lx->px->myDoc != NULL) {
            xmlFreeDoc(lx->px->myDoc);
        }
        htmlFreeParserCtxt(lx->px);
    }
    curl_url_cleanup(lx->page);
    curl_url_cleanup(lx->base);
    sl_free(lx->dir);
    sl_buf_free(&lx->pending);
    sl_web_html_feed_free(&lx->feed);
    sl_free(lx);
}

void
sl_web_links_use_cache(struct sl_web_links *lx, struct sl_web_url_cache *cache)
{
    lx->cache = cache;
}

void
sl_web_links_tap(struct sl_web_links *lx, const struct sl_web_tap *tap)
{
    lx->tap = *tap;
    if (tap->text != NULL) {
        /* set as the textExtractor's own parser has them */
        lx->px->sax->characters = on_text;
        lx->px->sax->ignorableWhitespace = on_text;
        lx->px->sax->cdataBlock = on_text;
    }
}

struct _xmlParserCtxt *
sl_web_links_parser(struct sl_web_links *lx)
{
    return lx->px;
}

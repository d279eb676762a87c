/*
 * Sitemaps over libxml2's XML push parser with namespace-aware SAX
 * callbacks and nothing else: no tree, no DTD, no entity declarations
 * kept, nothing loaded from the network or disk.  Input that starts with
 * the gzip magic bytes goes through zlib's inflate first.
 */
#define ZLIB_CONST
#include <stdint.h>
#include <string.h>

#include <libxml/parser.h>
#include <zlib.h>

#include "web/web_int.h"

#define LOC_MAX (2u * SL_WEB_URL_MAX) /* loc text, white space included */
#define ZBUF    (64u * 1024u)         /* inflated bytes per parse call */
#define PIECE   (1u << 20)            /* plain bytes per parse call */

enum root {
    ROOT_NONE = 0,
    ROOT_URLSET = 1,
    ROOT_INDEX = 2,
    ROOT_OTHER = 3,
};

enum field {
    FIELD_NONE = 0,
    FIELD_LOC = 1,
    FIELD_LASTMOD = 2,
};

struct sl_web_sitemap {
    xmlParserCtxtPtr px;
    CURLU *base; /* the sitemap URL */
    int (*cb)(void *ctx, const char *url, const char *lastmod, int nested);
    void *ctx;
    size_t max_urls;
    int rc;                 /* first error; the parser has failed */
    enum root root;         /* what the root element was */
    int depth;              /* of the current element, the root is 1 */
    int in_entry;           /* inside <url> or <sitemap> */
    enum field field;       /* text goes to loc or lastmod */
    int loc_done;           /* the entry's first <loc> is complete */
    struct sl_buf loc;      /* LOC_MAX */
    struct sl_buf lastmod;  /* SL_WEB_SITEMAP_LASTMOD_MAX + white space */
    uint64_t xml_bytes;     /* given to the XML parser */
    unsigned char magic[2]; /* the first bytes, to tell gzip */
    size_t nmagic;
    int sniffed; /* plain or gzip decided */
    int gzip;
    int gz_end; /* the gzip stream ended (so far) */
    z_stream zs;
    char *zbuf; /* ZBUF bytes of inflated output */
    struct sl_web_sitemap_summary sum;
};

static void
quiet_error(void *ctx, xmlErrorPtr e)
{
    (void)ctx;
    (void)e;
}

static void
fail(struct sl_web_sitemap *sm, int rc)
{
    if (sm->rc == 0) {
        sm->rc = rc;
        xmlStopParser(sm->px);
    }
}

/* ------------------------------------------------------------------------
 * SAX callbacks.
 * --------------------------------------------------------------------- */

/* The lastmod text without surrounding white space, or NULL. */
static const char *
lastmod_text(struct sl_web_sitemap *sm)
{
    char *s = sm->lastmod.data;
    size_t n = sm->lastmod.len;

    if (s == NULL || sm->lastmod.failed) {
        return NULL;
    }
    while (n > 0 && (unsigned char)*s <= 0x20) {
        s++;
        n--;
    }
    while (n > 0 && (unsigned char)s[n - 1] <= 0x20) {
        n--;
    }
    if (n == 0 || n > SL_WEB_SITEMAP_LASTMOD_MAX) {
        return NULL;
    }
    s[n] = '\0';
    return s;
}

/* An entry ended: report its loc, or count why not. */
static void
emit(struct sl_web_sitemap *sm)
{
    char *url = NULL;
    int rc = 0;

    if (!sm->loc_done || sm->loc.failed || sm->loc.data == NULL) {
        sm->sum.invalid++;
        return;
    }
    if (sl__web_href_same_document(sm->loc.data)) {
        sm->sum.invalid++;
        return;
    }
    rc = sl__web_url_resolve_h(sm->base, sm->loc.data, &url);
    if (rc == SL_EACCES) {
        sm->sum.refused++;
    } else if (rc == SL_EINTERNAL) {
        fail(sm, rc);
    } else if (rc != 0) {
        sm->sum.invalid++;
    } else if (sm->sum.reported >= sm->max_urls) {
        sm->sum.over_limit++;
    } else {
        sm->sum.reported++;
        rc = sm->cb(sm->ctx, url, lastmod_text(sm), sm->root == ROOT_INDEX);
        if (rc != 0) {
            fail(sm, rc);
        }
    }
    sl_free(url);
}

static void
on_start(void *ctx,
         const xmlChar *localname,
         const xmlChar *prefix,
         const xmlChar *uri,
         int nb_namespaces,
         const xmlChar **namespaces,
         int nb_attributes,
         int nb_defaulted,
         const xmlChar **attributes)
{
    struct sl_web_sitemap *sm = ctx;
    const char *name = (const char *)localname;

    (void)prefix;
    (void)uri;
    (void)nb_namespaces;
    (void)namespaces;
    (void)nb_attributes;
    (void)nb_defaulted;
    (void)attributes;
    sm->depth++;
    if (sm->depth == 1) {
        if (strcmp(name, "urlset") == 0) {
            sm->root = ROOT_URLSET;
        } else if (strcmp(name, "sitemapindex") == 0) {
            sm->root = ROOT_INDEX;
            sm->sum.is_index = 1;
        } else {
            sm->root = ROOT_OTHER;
            fail(sm, SL_EINVAL);
        }
    } else if (sm->depth == 2) {
        sm->in_entry = (sm->root == ROOT_URLSET && strcmp(name, "url") == 0) ||
                       (sm->root == ROOT_INDEX && strcmp(name, "sitemap") == 0);
        sm->loc_done = 0;
        sl_buf_reset(&sm->loc);
        sl_buf_reset(&sm->lastmod);
    } else if (sm->depth == 3 && sm->in_entry) {
        if (strcmp(name, "loc") == 0 && !sm->loc_done) {
            sl_buf_reset(&sm->loc);
            sm->field = FIELD_LOC;
        } else if (strcmp(name, "lastmod") == 0) {
            sl_buf_reset(&sm->lastmod);
            sm->field = FIELD_LASTMOD;
        }
    }
}

static void
on_end(void *ctx,
       const xmlChar *localname,
       const xmlChar *prefix,
       const xmlChar *uri)
{
    struct sl_web_sitemap *sm = ctx;

    (void)localname;
    (void)prefix;
    (void)uri;
    if (sm->depth == 3 && sm->field != FIELD_NONE) {
        sm->loc_done |= sm->field == FIELD_LOC;
        sm->field = FIELD_NONE;
    } else if (sm->depth == 2 && sm->in_entry) {
        emit(sm);
        sm->in_entry = 0;
    }
    sm->depth--;
}

/* Text of loc or lastmod; an append past the buffer's limit marks it
 * failed, and the entry is then counted invalid (or has no lastmod). */
static void
on_text(void *ctx, const xmlChar *s, int len)
{
    struct sl_web_sitemap *sm = ctx;

    if (len <= 0) {
        return;
    }
    if (sm->field == FIELD_LOC) {
        (void)sl_buf_append(&sm->loc, s, (size_t)len);
    } else if (sm->field == FIELD_LASTMOD) {
        (void)sl_buf_append(&sm->lastmod, s, (size_t)len);
    }
}

/* ------------------------------------------------------------------------
 * Input: plain or gzip.
 * --------------------------------------------------------------------- */

/* Give @n XML bytes to the parser. */
static int
xml_input(struct sl_web_sitemap *sm, const char *p, size_t n)
{
    if (n > SL_WEB_SITEMAP_MAX_BYTES - sm->xml_bytes) {
        fail(sm, SL_ETOOLARGE);
        return sm->rc;
    }
    sm->xml_bytes += n;
    while (n > 0 && sm->rc == 0) {
        size_t k = n < PIECE ? n : PIECE;

        (void)xmlParseChunk(sm->px, p, (int)k, 0);
        if (sm->rc == 0 && !sm->px->wellFormed) {
            fail(sm, SL_ECORRUPT);
        }
        p += k;
        n -= k;
    }
    return sm->rc;
}

/* Inflate @n gzip bytes into the parser; concatenated members are read
 * one after the other. */
static int
gz_input(struct sl_web_sitemap *sm, const char *p, size_t n)
{
    int zr = Z_OK;

    if (n == 0) {
        return 0;
    }
    if (sm->gz_end) {
        (void)inflateReset(&sm->zs);
        sm->gz_end = 0;
    }
    sm->zs.next_in = (const Bytef *)p;
    sm->zs.avail_in = (uInt)n;
    while (sm->rc == 0) {
        size_t made = 0;

        sm->zs.next_out = (Bytef *)sm->zbuf;
        sm->zs.avail_out = ZBUF;
        zr = inflate(&sm->zs, Z_NO_FLUSH);
        made = ZBUF - sm->zs.avail_out;
        if (made > 0 && xml_input(sm, sm->zbuf, made) != 0) {
            break;
        }
        if (zr == Z_STREAM_END) {
            sm->gz_end = 1;
            if (sm->zs.avail_in == 0) {
                break;
            }
            (void)inflateReset(&sm->zs);
            sm->gz_end = 0;
        } else if (zr == Z_BUF_ERROR) {
            break;
        } else if (zr != Z_OK) {
            fail(sm, SL_ECORRUPT);
        } else if (sm->zs.avail_in == 0 && sm->zs.avail_out > 0) {
            break;
        }
    }
    return sm->rc;
}

static int
input(struct sl_web_sitemap *sm, const char *p, size_t n)
{
    if (!sm->gzip) {
        return xml_input(sm, p, n);
    }
    while (n > 0 && sm->rc == 0) {
        size_t k = n < PIECE ? n : PIECE;

        (void)gz_input(sm, p, k);
        p += k;
        n -= k;
    }
    return sm->rc;
}

/* Decide plain or gzip from the first two bytes, then give them on. */
static int
sniff(struct sl_web_sitemap *sm)
{
    sm->sniffed = 1;
    sm->gzip = sm->nmagic == 2 && sm->magic[0] == 0x1f && sm->magic[1] == 0x8b;
    if (sm->gzip) {
        if (inflateInit2(&sm->zs, 15 + 16) != Z_OK) {
            sm->gzip = 0;
            fail(sm, SL_EINTERNAL);
            return sm->rc;
        }
        sm->zbuf = sl_malloc(ZBUF);
    }
    return input(sm, (const char *)sm->magic, sm->nmagic);
}

/* ------------------------------------------------------------------------
 * The push API.
 * --------------------------------------------------------------------- */

int
sl_web_sitemap_begin(
    const char *sitemap_url,
    size_t max_urls,
    int (*cb)(void *ctx, const char *url, const char *lastmod, int nested),
    void *ctx,
    struct sl_web_sitemap **out)
{
    struct sl_web_sitemap *sm = NULL;
    xmlSAXHandler sax;
    int rc = 0;

    *out = NULL;
    if (cb == NULL) {
        return SL_EINVAL;
    }
    sm = sl_calloc(1, sizeof(*sm));
    sm->cb = cb;
    sm->ctx = ctx;
    sm->max_urls = max_urls != 0 ? max_urls : SL_WEB_SITEMAP_DEFAULT_MAX_URLS;
    sl_buf_init(&sm->loc, LOC_MAX);
    sl_buf_init(&sm->lastmod, 4u * SL_WEB_SITEMAP_LASTMOD_MAX);
    rc = sl__web_url_base(sitemap_url, &sm->base);
    if (rc != 0) {
        goto fail;
    }
    sl__web_xml_init();
    memset(&sax, 0, sizeof(sax));
    sax.initialized = XML_SAX2_MAGIC;
    sax.startElementNs = on_start;
    sax.endElementNs = on_end;
    sax.characters = on_text;
    sax.cdataBlock = on_text;
    sax.serror = quiet_error;
    sm->px = xmlCreatePushParserCtxt(&sax, sm, NULL, 0, NULL);
    if (sm->px == NULL) {
        rc = SL_EINTERNAL;
        goto fail;
    }
    (void)xmlCtxtUseOptions(sm->px, XML_PARSE_NONET);
    *out = sm;
    return 0;
fail:
    sl_web_sitemap_free(sm);
    return rc;
}

int
sl_web_sitemap_feed(struct sl_web_sitemap *sm, const char *data, size_t len)
{
    if (sm->rc != 0) {
        return SL_EBADSTATE;
    }
    while (!sm->sniffed && len > 0) {
        sm->magic[sm->nmagic++] = (unsigned char)*data++;
        len--;
        if (sm->nmagic == 2 && sniff(sm) != 0) {
            return sm->rc;
        }
    }
    if (len > 0) {
        (void)input(sm, data, len);
    }
    return sm->rc;
}

int
sl_web_sitemap_end(struct sl_web_sitemap *sm,
                   struct sl_web_sitemap_summary *summary)
{
    int rc = 0;

    if (sm->rc == 0 && !sm->sniffed) {
        (void)sniff(sm);
    }
    if (sm->rc == 0 && sm->gzip && !sm->gz_end) {
        sm->rc = SL_ETRUNCATED;
    }
    if (sm->rc == 0) {
        (void)xmlParseChunk(sm->px, NULL, 0, 1);
        /* libxml2 2.9.14 may call a document without any element
         * well-formed: fed "\0\0", "\0<\0c", "\0\0" (UCS-4 detection
         * cut between chunks), whole it is not */
        if (sm->rc == 0 && (!sm->px->wellFormed || sm->root == ROOT_NONE)) {
            sm->rc = SL_ETRUNCATED;
        }
    }
    rc = sm->rc;
    if (summary != NULL) {
        *summary = sm->sum;
    }
    sl_web_sitemap_free(sm);
    return rc;
}

void
sl_web_sitemap_free(struct sl_web_sitemap *sm)
{
    if (sm == NULL) {
        return;
    }
    if (sm->px != NULL) {
        if (sm->px->myDoc != NULL) {
            xmlFreeDoc(sm->px->myDoc);
        }
        xmlFreeParserCtxt(sm->px);
    }
    if (sm->zbuf != NULL) {
        (void)inflateEnd(&sm->zs);
    }
    curl_url_cleanup(sm->base);
    sl_buf_free(&sm->loc);
    sl_buf_free(&sm->lastmod);
    sl_free(sm->zbuf);
    sl_free(sm);
}

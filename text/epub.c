/*
 * EPUB (office.c walks the zip): the XHTML entries go one by one through
 * the HTML extractor, each a document of its own whose text is appended;
 * the OPF package (the first *.opf entry) gives the metadata (dc:title,
 * dc:creator, dc:date, meta property="dcterms:modified") and the order:
 * the spine's.  Entries of the manifest outside the spine (the navigation
 * document) are left out; entries the manifest does not name follow the
 * spine's in zip order; without an OPF the zip order stays.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "text/office_int.h"

#define OPF_MAX ((uint64_t)8 << 20) /* bytes of the OPF read */

/* An XHTML document of the manifest. */
struct item {
    char *id;
    char *path; /* its entry name */
    size_t idx; /* its place in the spine, SIZE_MAX: not in it */
};

struct sl__epub {
    char dir[SL__OFFICE_NAME_MAX]; /* the OPF's folder and '/', or "" */
    int opf;                       /* the OPF was read */
    struct item *items;            /* sorted by path once the OPF was read */
    size_t nitems;
    size_t items_cap;
    char **refs; /* the spine's idrefs, in order, until the OPF is read */
    size_t nrefs;
    size_t refs_cap;
};

/* ------------------------------------------------------------------------
 * The OPF.
 * --------------------------------------------------------------------- */

static const struct sl__office_field opf_fields[] = {
    {"title", SL__OFFICE_TITLE},
    {"creator", SL__OFFICE_AUTHOR},
    {"date", SL__OFFICE_CREATED},
    {NULL, 0},
};

static int
hex(int c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * The entry name of @href (a URL relative to the OPF's folder @dir) into
 * @out (SL__OFFICE_NAME_MAX bytes): percent escapes decoded, the fragment
 * dropped, "." and ".." segments resolved.  0, or -1 when it does not fit.
 */
static int
resolve(const char *dir, const char *href, char *out)
{
    char rel[SL__OFFICE_NAME_MAX];
    size_t n = 0;
    size_t o = 0;
    const char *p = rel;

    for (; *href != '\0' && *href != '#' && n + 1 < sizeof(rel); n++) {
        if (href[0] == '%' && hex(href[1]) >= 0 && hex(href[2]) >= 0) {
            rel[n] = (char)(hex(href[1]) * 16 + hex(href[2]));
            href += 3;
        } else {
            rel[n] = *href++;
        }
    }
    rel[n] = '\0';
    o = strlen(dir);
    memcpy(out, dir, o + 1);
    while (*p != '\0') {
        size_t k = strcspn(p, "/");

        if (k == 2 && p[0] == '.' && p[1] == '.') {
            while (o > 0 && out[o - 1] == '/') {
                o--;
            }
            while (o > 0 && out[o - 1] != '/') {
                o--;
            }
        } else if (k > 0 && !(k == 1 && p[0] == '.')) {
            if (o + k + 2 > SL__OFFICE_NAME_MAX) {
                return -1;
            }
            memcpy(out + o, p, k);
            o += k;
            out[o++] = '/';
        }
        p += k + (p[k] == '/');
    }
    out[o > 0 ? o - 1 : 0] = '\0';
    return 0;
}

/* A manifest <item> or a spine <itemref>; the modification date. */
static int
opf_hook(struct sl__office *o, xmlTextReaderPtr r, const char *name)
{
    struct sl__epub *ep = o->epub;
    xmlChar *a = NULL;
    xmlChar *b = NULL;
    xmlChar *c = NULL;
    char path[SL__OFFICE_NAME_MAX];

    if (strcmp(name, "item") == 0 && ep->nitems < SL__OFFICE_ENTRIES_MAX) {
        a = xmlTextReaderGetAttribute(r, BAD_CAST "id");
        b = xmlTextReaderGetAttribute(r, BAD_CAST "href");
        c = xmlTextReaderGetAttribute(r, BAD_CAST "media-type");
        if (a != NULL && b != NULL && c != NULL &&
            strlen((const char *)a) < SL__OFFICE_NAME_MAX &&
            (strcmp((const char *)c, "application/xhtml+xml") == 0 ||
             strcmp((const char *)c, "text/html") == 0) &&
            resolve(ep->dir, (const char *)b, path) == 0) {
            if (ep->nitems == ep->items_cap) {
                ep->items_cap = ep->items_cap > 0 ? 2 * ep->items_cap : 16;
                ep->items =
                    sl_realloc(ep->items, ep->items_cap * sizeof(struct item));
            }
            ep->items[ep->nitems].id = sl_strdup((const char *)a);
            ep->items[ep->nitems].path = sl_strdup(path);
            ep->items[ep->nitems++].idx = SIZE_MAX;
        }
    } else if (strcmp(name, "itemref") == 0 &&
               ep->nrefs < SL__OFFICE_ENTRIES_MAX) {
        a = xmlTextReaderGetAttribute(r, BAD_CAST "idref");
        if (a != NULL && strlen((const char *)a) < SL__OFFICE_NAME_MAX) {
            if (ep->nrefs == ep->refs_cap) {
                ep->refs_cap = ep->refs_cap > 0 ? 2 * ep->refs_cap : 16;
                ep->refs = sl_realloc(ep->refs, ep->refs_cap * sizeof(char *));
            }
            ep->refs[ep->nrefs++] = sl_strdup((const char *)a);
        }
    } else if (strcmp(name, "meta") == 0) {
        a = xmlTextReaderGetAttribute(r, BAD_CAST "property");
        if (a != NULL && strcmp((const char *)a, "dcterms:modified") == 0 &&
            !xmlTextReaderIsEmptyElement(r)) {
            sl__text_office_field(
                o, SL__OFFICE_MODIFIED, xmlTextReaderDepth(r));
        }
    }
    xmlFree(a);
    xmlFree(b);
    xmlFree(c);
    return 0;
}

static const struct sl__office_rules opf_rules = {
    NULL, NULL, NULL, NULL, opf_fields, opf_hook};

static int
item_by_id(const void *a, const void *b)
{
    return strcmp(((const struct item *)a)->id, ((const struct item *)b)->id);
}

static int
item_by_path(const void *a, const void *b)
{
    return strcmp(((const struct item *)a)->path,
                  ((const struct item *)b)->path);
}

/* The manifest item of entry @path, or NULL. */
static const struct item *
item_of(const struct sl__epub *ep, const char *path)
{
    struct item key = {NULL, (char *)path, 0};

    if (!ep->opf || ep->nitems == 0) {
        return NULL;
    }
    return bsearch(&key, ep->items, ep->nitems, sizeof(key), item_by_path);
}

/* Read the OPF @name: the metadata, the manifest, the spine; then place
 * each item in the spine and sort the items by path. */
static void
read_opf(struct sl__office *o, const char *name)
{
    struct sl__epub *ep = o->epub;
    const char *slash = strrchr(name, '/');
    struct item key = {NULL, NULL, 0};
    struct item *it = NULL;
    size_t i = 0;

    (void)snprintf(ep->dir,
                   sizeof(ep->dir),
                   "%.*s",
                   slash != NULL ? (int)(slash - name + 1) : 0,
                   name);
    sl__text_office_xml(o, &opf_rules, OPF_MAX);
    ep->opf = 1;
    if (ep->nitems > 0) {
        qsort(ep->items, ep->nitems, sizeof(ep->items[0]), item_by_id);
    }
    for (i = 0; i < ep->nrefs; i++) {
        key.id = ep->refs[i];
        it = ep->nitems > 0
                 ? bsearch(&key, ep->items, ep->nitems, sizeof(key), item_by_id)
                 : NULL;
        if (it != NULL && it->idx == SIZE_MAX) {
            it->idx = i;
        }
        sl_free(ep->refs[i]);
    }
    SL_FREE(ep->refs);
    ep->nrefs = 0;
    if (ep->nitems > 0) {
        qsort(ep->items, ep->nitems, sizeof(ep->items[0]), item_by_path);
    }
}

/* ------------------------------------------------------------------------
 * The XHTML entries.
 * --------------------------------------------------------------------- */

static int
html_name(const char *name)
{
    const char *dot = strrchr(name, '.');

    return dot != NULL && strncasecmp(name, "META-INF/", 9) != 0 &&
           (strcasecmp(dot, ".xhtml") == 0 || strcasecmp(dot, ".html") == 0 ||
            strcasecmp(dot, ".htm") == 0 || strcasecmp(dot, ".xht") == 0);
}

/* The text of XHTML entry @name, a document of its own, appended. */
static void
read_html(struct sl__office *o, const char *name)
{
    struct sl__text_buf *t = &o->d->text;
    struct sl__office_span *s = sl__text_office_span(o, 1, 0);
    struct sl_text_doc *in = sl_text_doc_new(o->x);
    size_t room = t->max - t->b.len;
    struct sl_text_result r;
    int rc = 0;

    s->path = sl_strdup(name);
    sl__text_buf_init(&in->text, room > 0 && t->b.len > 0 ? room - 1 : room, 0);
    (void)snprintf(in->mime, sizeof(in->mime), "application/xhtml+xml");
    rc = sl__text_inflate(o->x, o->d, o->a, in, name, &o->left);
    if (sl_text_doc_end(in, rc != 0) != 0 || rc != 0) {
        o->canceled = 1;
        o->stop = 1;
    }
    sl_text_doc_result(in, &r);
    t->collapse = 0; /* the HTML text is collapsed already */
    sl__text_buf_bytes(t, r.text, r.len);
    t->full = t->full || r.full;
    sl_text_doc_free(in);
    sl__text_office_span_end(o, s);
    if (o->d->too_big || o->d->corrupt) {
        o->stop = 1;
    }
}

void
sl__text_epub_entry(struct sl__office *o, const char *name)
{
    const struct item *it = NULL;
    size_t n = strlen(name);

    if (o->epub == NULL) {
        o->epub = sl_calloc(1, sizeof(*o->epub));
    }
    if (!o->epub->opf && n > 4 && strcasecmp(name + n - 4, ".opf") == 0) {
        read_opf(o, name);
        return;
    }
    if (!html_name(name)) {
        return;
    }
    it = item_of(o->epub, name);
    if (it != NULL && it->idx == SIZE_MAX) {
        return; /* outside the spine: the navigation document */
    }
    if (o->d->text.full) {
        o->found++;
        return;
    }
    read_html(o, name);
}

/* Place the spans read before the OPF, or without one. */
void
sl__text_epub_end(struct sl__office *o)
{
    size_t i = 0;

    for (i = 0; o->epub != NULL && i < o->nspans; i++) {
        struct sl__office_span *s = &o->spans[i];
        const struct item *it =
            s->path != NULL ? item_of(o->epub, s->path) : NULL;

        s->drop = it != NULL && it->idx == SIZE_MAX;
        s->group = it != NULL ? 0 : 1;
        s->num = it != NULL ? it->idx : s->seq;
    }
}

void
sl__text_epub_free(struct sl__office *o)
{
    struct sl__epub *ep = o->epub;
    size_t i = 0;

    for (i = 0; i < o->nspans; i++) {
        sl_free(o->spans[i].path);
    }
    if (ep == NULL) {
        return;
    }
    for (i = 0; i < ep->nitems; i++) {
        sl_free(ep->items[i].id);
        sl_free(ep->items[i].path);
    }
    for (i = 0; i < ep->nrefs; i++) {
        sl_free(ep->refs[i]);
    }
    sl_free(ep->items);
    sl_free(ep->refs);
    sl_free(ep);
}

/*
 * Extractors and documents (text.h): the choice of the extractor of a
 * document and its results.
 */
#include <stdlib.h>
#include <string.h>

#include "text/text_int.h"

/* ------------------------------------------------------------------------
 * Extractors.
 * --------------------------------------------------------------------- */

struct sl_text *
sl_text_new(const struct sl_text_opts *o)
{
    struct sl_text *t = sl_calloc(1, sizeof(*t));

    sl__text_xml_once();
    t->max_text = o->max_text;
    t->converters = o->converters;
    t->canceled = o->canceled;
    t->arg = o->arg;
    t->obuf = sl_malloc(SL_TEXT_CHUNK);
    t->stage = sl_malloc(SL_TEXT_CHUNK + CARRY_MAX);
    return t;
}

void
sl_text_free(struct sl_text *t)
{
    if (t == NULL) {
        return;
    }
    if (t->magic != NULL) {
        magic_close(t->magic);
    }
    if (t->ud != NULL) {
        uchardet_delete(t->ud);
    }
    sl_free(t->stage);
    sl_free(t->obuf);
    sl_free(t);
}

/* ------------------------------------------------------------------------
 * Documents.
 * --------------------------------------------------------------------- */

void
sl__text_doc_init(struct sl_text_doc *d, uint64_t max_text)
{
    memset(d, 0, sizeof(*d));
    sl__text_buf_init(&d->text, (size_t)max_text, 0);
    sl__text_buf_init(&d->title, 0, 1);
    sl__text_buf_init(&d->author, 0, 1);
    sl__text_buf_init(&d->created, 0, 1);
    sl__text_buf_init(&d->modified, 0, 1);
    d->cd = (iconv_t)-1;
    d->outcome = SL_TEXT_NOTEXT;
    d->conv.file_fd = -1;
    d->conv.in_fd = -1;
    d->conv.out_fd = -1;
    d->conv.pid = -1;
    d->conv.file_arg = SIZE_MAX;
    d->spool_fd = -1;
}

void
sl__text_doc_fini(struct sl_text_doc *d)
{
    sl_buf_free(&d->text.b);
    sl_buf_free(&d->title.b);
    sl_buf_free(&d->author.b);
    sl_buf_free(&d->created.b);
    sl_buf_free(&d->modified.b);
}

/* Choose and start the extractor of a record whose content starts with
 * @len bytes @head.  A converter configured for the MIME type wins over
 * the built-in extractors. */
int
sl__text_doc_start(struct sl_text *x,
                   struct sl_text_doc *d,
                   const char *head,
                   size_t len)
{
    const json_t *cfg = json_object_get(x->converters, d->mime);
    int cont = sl__text_container_of(d->mime);

    d->kind = sl_text_mime_kind(d->mime);
    d->outcome = SL_TEXT_EXTRACTED;
    if (cfg != NULL) {
        d->conv_on = 1;
        sl__text_conv_begin(d, cfg);
        return 0;
    }
    if (cont != SL__TEXT_CONT_NONE) {
        return sl__text_container_begin(d, cont);
    }
    switch (d->kind) {
    case SL_TEXT_KIND_TEXT:
        sl__text_plain_begin(x, d, head, len);
        return 0;
    case SL_TEXT_KIND_HTML:
        d->text.collapse = 1;
        return sl__text_html_open(x, d, head, len);
    case SL_TEXT_KIND_XML:
        d->text.collapse = 1;
        return sl__text_xml_open(d);
    default:
        d->outcome = SL_TEXT_NOTEXT;
        return 0;
    }
}

/* Feed @n bytes: 0, SL_TEXT_STOP (nothing more is needed) or SL_ECANCELED. */
static int
extractor_feed(struct sl_text *x,
               struct sl_text_doc *d,
               const char *p,
               size_t n)
{
    if (d->conv_on) {
        return sl__text_conv_feed(x, d, p, n);
    }
    if (d->cont != SL__TEXT_CONT_NONE) {
        return sl__text_container_feed(d, p, n);
    }
    switch (d->kind) {
    case SL_TEXT_KIND_TEXT:
        return sl__text_plain_feed(x, d, p, n);
    case SL_TEXT_KIND_HTML:
    case SL_TEXT_KIND_XML:
        return sl__text_markup_feed(d, p, n);
    default:
        return SL_TEXT_STOP;
    }
}

/* End the extractor, freeing what it holds (@abort: the record is
 * dropped, results do not matter).  0 or SL_ECANCELED. */
static int
extractor_end(struct sl_text *x, struct sl_text_doc *d, int abort)
{
    int rc = 0;

    if (d->conv_on) {
        rc = sl__text_conv_end(x, d, abort);
    } else if (d->cont != SL__TEXT_CONT_NONE) {
        rc = sl__text_container_end(x, d, abort);
    } else if (d->kind == SL_TEXT_KIND_TEXT) {
        sl__text_plain_end(x, d);
    } else if (d->kind == SL_TEXT_KIND_HTML || d->kind == SL_TEXT_KIND_XML) {
        sl__text_markup_end(d, abort);
    }
    sl__text_buf_end(&d->text);
    sl__text_buf_end(&d->title);
    return rc;
}

struct sl_text_doc *
sl_text_doc_new(struct sl_text *t)
{
    struct sl_text_doc *d = sl_malloc(sizeof(*d));

    sl__text_doc_init(d, t->max_text);
    d->t = t;
    return d;
}

void
sl_text_doc_free(struct sl_text_doc *d)
{
    if (d == NULL) {
        return;
    }
    sl__text_doc_fini(d);
    sl_free(d);
}

int
sl_text_doc_begin(struct sl_text_doc *d,
                  const char *mime,
                  const char *charset,
                  const char *head,
                  size_t len)
{
    int rc = 0;

    (void)snprintf(d->mime, sizeof(d->mime), "%s", mime);
    d->given = charset;
    rc = sl__text_doc_start(d->t, d, head, len);
    if (rc != 0) {
        d->outcome = SL_TEXT_NOTEXT;
    }
    return rc;
}

void
sl_text_doc_name(struct sl_text_doc *d, const char *id)
{
    d->id = id;
}

int
sl_text_doc_feed(struct sl_text_doc *d, const char *p, size_t n)
{
    return extractor_feed(d->t, d, p, n);
}

int
sl_text_doc_end(struct sl_text_doc *d, int abort)
{
    int rc = extractor_end(d->t, d, abort);

    d->given = NULL;
    return rc;
}

int
sl_text_doc_give(struct sl_text_doc *d, const char *p, size_t n)
{
    sl__text_buf_bytes(&d->text, p, n);
    return d->text.full;
}

void
sl_text_doc_give_end(struct sl_text_doc *d)
{
    struct sl_buf *b = &d->text.b;

    sl__text_buf_end(&d->text);
    while (d->text.full && b->len > 0 &&
           (b->data[b->len - 1] == ' ' || b->data[b->len - 1] == '\n')) {
        b->data[--b->len] = '\0';
    }
}

void
sl_text_doc_result(const struct sl_text_doc *d, struct sl_text_result *r)
{
    r->text = d->text.b.len > 0 ? d->text.b.data : "";
    r->len = d->text.b.len;
    r->title = d->title.b.len > 0 ? d->title.b.data : "";
    r->charset = d->charset;
    r->kind = d->kind;
    r->outcome = d->outcome;
    r->converted = d->conv_on && d->outcome == SL_TEXT_EXTRACTED;
    r->full = d->text.full;
    r->malformed = d->malformed;
    r->inner_mime = d->inner_mime;
    r->encoding = d->encoding;
    r->cut = d->too_big;
    r->corrupt = d->corrupt;
    r->author = d->author.b.len > 0 ? d->author.b.data : "";
    r->created = d->created.b.len > 0 ? d->created.b.data : "";
    r->modified = d->modified.b.len > 0 ? d->modified.b.data : "";
    r->pages = d->pages;
}

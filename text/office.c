/*
 * Office documents and EPUB (text_int.h): zips whose parts hold the text
 * and the metadata.  container.c spools the document; this reads the
 * spooled zip with libarchive (the zip format only) when it ends.
 *
 * - Office Open XML: word/document.xml (then footnotes, endnotes,
 *   headers, footers), xl/sharedStrings.xml and xl/worksheets/sheetN.xml,
 *   ppt/slides/slideN.xml in slide order; docProps/core.xml and
 *   docProps/app.xml for the metadata.
 * - OpenDocument: content.xml; meta.xml for the metadata.
 * - EPUB (epub.c): the XHTML entries through the HTML extractor, in the
 *   order of the OPF's spine; the OPF for the metadata.
 *
 * XML parts stream through libxml2's xmlTextReader (no document tree: the
 * reader frees the nodes it has passed) reading the entry's data through
 * a callback; entity references are not expanded (no XML_PARSE_NOENT) and
 * no DTD is loaded (no XML_PARSE_DTDLOAD), which defeats entity-expansion
 * bombs and external entities, and the reader's own limits stay (no
 * XML_PARSE_HUGE: a text node of at most 10 MB).  Each part's text is a
 * span of the document's text; the spans are put in text order at the end
 * (usually they come in it).
 *
 * Limits: SL__OFFICE_ENTRIES_MAX entries walked, SL__TEXT_INFLATE_MAX bytes and
 * RATIO_MAX times the zip's size decompressed (a zip bomb stops there,
 * cut), the text at max_text as always (no text part is read once it is
 * full; the metadata still is).  A corrupt or truncated zip keeps what
 * was read and is corrupt; a zip without any text part (not this kind of
 * document) has no text and is corrupt.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <archive.h>
#include <archive_entry.h>

#include "text/office_int.h"

#define RATIO_MAX   ((uint64_t)200)     /* bytes decompressed per zip byte */
#define POLL_BYTES  ((uint64_t)1 << 20) /* between polls of canceled */
#define DIGITS_MAX  32u                 /* bytes of a page count */
#define ZIP_READ    ((size_t)64 << 10)
#define XML_OPTIONS (XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING)

static const struct {
    const char *mime;
    int cont;
} office_types[] = {
    {"application/vnd.openxmlformats-officedocument.wordprocessingml.document",
     SL__TEXT_CONT_DOCX},
    {"application/vnd.openxmlformats-officedocument.wordprocessingml.template",
     SL__TEXT_CONT_DOCX},
    {"application/vnd.ms-word.document.macroenabled.12", SL__TEXT_CONT_DOCX},
    {"application/vnd.ms-word.template.macroenabled.12", SL__TEXT_CONT_DOCX},
    {"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
     SL__TEXT_CONT_XLSX},
    {"application/vnd.openxmlformats-officedocument.spreadsheetml.template",
     SL__TEXT_CONT_XLSX},
    {"application/vnd.ms-excel.sheet.macroenabled.12", SL__TEXT_CONT_XLSX},
    {"application/vnd.ms-excel.template.macroenabled.12", SL__TEXT_CONT_XLSX},
    {"application/vnd.openxmlformats-officedocument.presentationml."
     "presentation",
     SL__TEXT_CONT_PPTX},
    {"application/vnd.openxmlformats-officedocument.presentationml.template",
     SL__TEXT_CONT_PPTX},
    {"application/vnd.openxmlformats-officedocument.presentationml.slideshow",
     SL__TEXT_CONT_PPTX},
    {"application/vnd.ms-powerpoint.presentation.macroenabled.12",
     SL__TEXT_CONT_PPTX},
    {"application/vnd.ms-powerpoint.template.macroenabled.12",
     SL__TEXT_CONT_PPTX},
    {"application/vnd.ms-powerpoint.slideshow.macroenabled.12",
     SL__TEXT_CONT_PPTX},
    {"application/vnd.oasis.opendocument.text", SL__TEXT_CONT_ODF},
    {"application/vnd.oasis.opendocument.text-template", SL__TEXT_CONT_ODF},
    {"application/vnd.oasis.opendocument.text-master", SL__TEXT_CONT_ODF},
    {"application/vnd.oasis.opendocument.spreadsheet", SL__TEXT_CONT_ODF},
    {"application/vnd.oasis.opendocument.spreadsheet-template",
     SL__TEXT_CONT_ODF},
    {"application/vnd.oasis.opendocument.presentation", SL__TEXT_CONT_ODF},
    {"application/vnd.oasis.opendocument.presentation-template",
     SL__TEXT_CONT_ODF},
    {"application/vnd.oasis.opendocument.graphics", SL__TEXT_CONT_ODF},
    {"application/vnd.oasis.opendocument.graphics-template", SL__TEXT_CONT_ODF},
    {"application/vnd.sun.xml.writer", SL__TEXT_CONT_ODF},
    {"application/vnd.sun.xml.calc", SL__TEXT_CONT_ODF},
    {"application/vnd.sun.xml.impress", SL__TEXT_CONT_ODF},
    {"application/vnd.sun.xml.draw", SL__TEXT_CONT_ODF},
    {"application/epub+zip", SL__TEXT_CONT_EPUB},
};

int
sl__text_office_of(const char *mime)
{
    size_t i = 0;

    for (i = 0; i < sizeof(office_types) / sizeof(office_types[0]); i++) {
        if (strcmp(mime, office_types[i].mime) == 0) {
            return office_types[i].cont;
        }
    }
    return SL__TEXT_CONT_NONE;
}

/* ------------------------------------------------------------------------
 * The parts of each kind and what their XML holds.
 * --------------------------------------------------------------------- */

/* Element names are local names (no prefix), NULL-terminated lists. */
static const char *const ooxml_text[] = {"t", NULL};
static const char *const docx_lines[] = {"p", "br", "cr", NULL};
static const char *const docx_spaces[] = {"tab", NULL};
/* mc:Fallback repeats mc:Choice (a text box for older readers) */
static const char *const ooxml_skip[] = {"Fallback", NULL};
static const char *const xlsx_lines[] = {"si", NULL};
static const char *const xlsx_skip[] = {"rPh", NULL}; /* phonetic runs */
static const char *const sheet_text[] = {"t", "v", NULL};
static const char *const sheet_lines[] = {"row", NULL};
static const char *const sheet_spaces[] = {"c", NULL};
static const char *const pptx_lines[] = {"p", "br", NULL};
static const char *const odf_text[] = {"p", "h", NULL};
static const char *const odf_lines[] = {"p", "h", "line-break", NULL};
static const char *const odf_spaces[] = {"s", "tab", NULL};
/* deleted text and comments (their author and date too) */
static const char *const odf_skip[] = {"tracked-changes", "annotation", NULL};

static const struct sl__office_field core_fields[] = {
    {"title", SL__OFFICE_TITLE},
    {"creator", SL__OFFICE_AUTHOR},
    {"created", SL__OFFICE_CREATED},
    {"modified", SL__OFFICE_MODIFIED},
    {NULL, 0},
};
static const struct sl__office_field app_fields[] = {
    {"Pages", SL__OFFICE_PAGES},
    {"Slides", SL__OFFICE_PAGES},
    {NULL, 0},
};
static const struct sl__office_field odf_meta_fields[] = {
    {"title", SL__OFFICE_TITLE},
    {"initial-creator", SL__OFFICE_AUTHOR},
    {"creator", SL__OFFICE_CREATOR},
    {"creation-date", SL__OFFICE_CREATED},
    {"date", SL__OFFICE_MODIFIED},
    {NULL, 0},
};

/* A spreadsheet cell (c) of type "s" holds the index of a shared string
 * in its value (v), not text; other values (numbers...) are text. */
static int
sheet_hook(struct sl__office *o, xmlTextReaderPtr r, const char *name)
{
    if (strcmp(name, "c") == 0) {
        xmlChar *t = xmlTextReaderGetAttribute(r, BAD_CAST "t");

        o->shared_cell = t != NULL && strcmp((const char *)t, "s") == 0;
        xmlFree(t);
        return 0;
    }
    return strcmp(name, "v") == 0 && o->shared_cell;
}

/* meta:document-statistic's meta:page-count. */
static int
odf_meta_hook(struct sl__office *o, xmlTextReaderPtr r, const char *name)
{
    xmlChar *v = NULL;
    uint64_t n = 0;

    if (strcmp(name, "document-statistic") != 0 || o->d->pages != 0) {
        return 0;
    }
    v = xmlTextReaderGetAttributeNs(
        r,
        BAD_CAST "page-count",
        BAD_CAST "urn:oasis:names:tc:opendocument:xmlns:meta:1.0");
    if (v != NULL && sl_parse_u64((const char *)v, &n) == 0) {
        o->d->pages = n;
    }
    xmlFree(v);
    return 0;
}

static const struct sl__office_rules docx_rules = {
    ooxml_text, docx_lines, docx_spaces, ooxml_skip, NULL, NULL};
static const struct sl__office_rules strings_rules = {
    ooxml_text, xlsx_lines, NULL, xlsx_skip, NULL, NULL};
static const struct sl__office_rules sheet_rules = {
    sheet_text, sheet_lines, sheet_spaces, xlsx_skip, NULL, sheet_hook};
static const struct sl__office_rules pptx_rules = {
    ooxml_text, pptx_lines, NULL, ooxml_skip, NULL, NULL};
static const struct sl__office_rules odf_rules = {
    odf_text, odf_lines, odf_spaces, odf_skip, NULL, NULL};
static const struct sl__office_rules core_rules = {
    NULL, NULL, NULL, NULL, core_fields, NULL};
static const struct sl__office_rules app_rules = {
    NULL, NULL, NULL, NULL, app_fields, NULL};
static const struct sl__office_rules odf_meta_rules = {
    NULL, NULL, NULL, NULL, odf_meta_fields, odf_meta_hook};

#define OOXML_ALL                                                              \
    ((1u << SL__TEXT_CONT_DOCX) | (1u << SL__TEXT_CONT_XLSX) |                 \
     (1u << SL__TEXT_CONT_PPTX))
#define META_GROUP UINT32_MAX /* a metadata part: no text */

/* The parts read, by name (case-insensitive): @name whole, or, numbered,
 * @name, a decimal number and ".xml". */
static const struct {
    unsigned conts; /* bits 1 << SL__TEXT_CONT_* */
    const char *name;
    int numbered;
    uint32_t group; /* the text's order, or META_GROUP */
    const struct sl__office_rules *rules;
} parts[] = {
    {1u << SL__TEXT_CONT_DOCX, "word/document.xml", 0, 0, &docx_rules},
    {1u << SL__TEXT_CONT_DOCX, "word/footnotes.xml", 0, 1, &docx_rules},
    {1u << SL__TEXT_CONT_DOCX, "word/endnotes.xml", 0, 2, &docx_rules},
    {1u << SL__TEXT_CONT_DOCX, "word/header", 1, 3, &docx_rules},
    {1u << SL__TEXT_CONT_DOCX, "word/footer", 1, 4, &docx_rules},
    {1u << SL__TEXT_CONT_XLSX, "xl/sharedStrings.xml", 0, 0, &strings_rules},
    {1u << SL__TEXT_CONT_XLSX, "xl/worksheets/sheet", 1, 1, &sheet_rules},
    {1u << SL__TEXT_CONT_PPTX, "ppt/slides/slide", 1, 0, &pptx_rules},
    /* speaker notes, after the slides (as ODF's are in content.xml) */
    {1u << SL__TEXT_CONT_PPTX, "ppt/notesSlides/notesSlide", 1, 1, &pptx_rules},
    {OOXML_ALL, "docProps/core.xml", 0, META_GROUP, &core_rules},
    {OOXML_ALL, "docProps/app.xml", 0, META_GROUP, &app_rules},
    {1u << SL__TEXT_CONT_ODF, "content.xml", 0, 0, &odf_rules},
    {1u << SL__TEXT_CONT_ODF, "meta.xml", 0, META_GROUP, &odf_meta_rules},
};

/* Is @s @prefix, a decimal number (into *@n) and ".xml", ignoring case? */
static int
numbered(const char *s, const char *prefix, uint64_t *n)
{
    size_t k = strlen(prefix);
    const char *p = s + k;

    if (strncasecmp(s, prefix, k) != 0 || *p < '0' || *p > '9') {
        return 0;
    }
    *n = 0;
    while (*p >= '0' && *p <= '9') {
        if (*n > (UINT64_MAX - 9) / 10) {
            return 0;
        }
        *n = *n * 10 + (uint64_t)(*p++ - '0');
    }
    return strcasecmp(p, ".xml") == 0;
}

/* ------------------------------------------------------------------------
 * Reading an entry.
 * --------------------------------------------------------------------- */

/* xmlTextReader's input: the current entry's data, within the limits. */
static int
part_read(void *ctx, char *buf, int len)
{
    struct sl__office *o = ctx;
    size_t want = (size_t)len;
    la_ssize_t got = 0;

    if (o->stop || len <= 0) {
        return -1;
    }
    if (want > o->part_left) {
        want = (size_t)o->part_left;
        if (want == 0) {
            return 0; /* a metadata part read far enough */
        }
    }
    if (want > o->left) {
        want = o->left > 0 ? (size_t)o->left : 1; /* 1: does it go on? */
    }
    got = archive_read_data(o->a, buf, want);
    if (got < 0) {
        SL_DEBUG("text: %s: %s", o->d->id, archive_error_string(o->a));
        o->d->corrupt = 1;
        o->stop = 1;
        return -1;
    }
    if ((uint64_t)got > o->left) {
        o->d->too_big = 1; /* a zip bomb, or just too much */
        o->stop = 1;
        return -1;
    }
    o->left -= (uint64_t)got;
    o->part_left -= (uint64_t)got;
    o->polled += (uint64_t)got;
    if (o->polled >= POLL_BYTES) {
        o->polled = 0;
        if (o->x->canceled != NULL && o->x->canceled(o->x->arg)) {
            o->canceled = 1;
            o->stop = 1;
            return -1;
        }
    }
    return (int)got;
}

/* Parser errors are expected in what people upload: kept quiet.  One is
 * a limit: a text node of more than 10 MB ("huge text node", reported as
 * out of memory), 200 MB of spaces from a few hundred KB of zip, say. */
static void
xml_error(void *arg, xmlErrorPtr e)
{
    struct sl__office *o = arg;

    if (e != NULL && e->code == XML_ERR_NO_MEMORY) {
        o->xml_limit = 1;
    }
}

static int
name_in(const char *name, const char *const *list)
{
    for (; list != NULL && *list != NULL; list++) {
        if (strcmp(name, *list) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The buffer of metadata field @f. */
static struct sl__text_buf *
field_buf(struct sl__office *o, int f)
{
    switch (f) {
    case SL__OFFICE_TITLE:
        return &o->d->title;
    case SL__OFFICE_AUTHOR:
        return &o->d->author;
    case SL__OFFICE_CREATOR:
        return &o->creator;
    case SL__OFFICE_CREATED:
        return &o->d->created;
    case SL__OFFICE_MODIFIED:
        return &o->d->modified;
    default:
        return &o->digits;
    }
}

void
sl__text_office_field(struct sl__office *o, int f, int depth)
{
    if (!o->have[f] && field_buf(o, f)->b.len == 0) {
        o->field = f;
        o->field_depth = depth;
    }
}

/* The metadata element being read ended. */
static void
field_end(struct sl__office *o)
{
    struct sl__text_buf *b = field_buf(o, o->field);
    uint64_t n = 0;

    sl__text_buf_end(b);
    o->have[o->field] = b->b.len > 0;
    if (o->field == SL__OFFICE_PAGES) {
        if (b->b.len > 0 && sl_parse_u64(b->b.data, &n) == 0 &&
            o->d->pages == 0) {
            o->d->pages = n;
        }
        sl__text_buf_set(b, DIGITS_MAX, NULL);
    }
    o->field = -1;
}

static void
element_start(struct sl__office *o, xmlTextReaderPtr r)
{
    const struct sl__office_rules *ru = o->rules;
    const char *name = (const char *)xmlTextReaderConstLocalName(r);
    int empty = xmlTextReaderIsEmptyElement(r) == 1;
    int depth = xmlTextReaderDepth(r);
    const struct sl__office_field *f = ru->fields;

    if (o->skip_depth >= 0 || name == NULL) {
        return;
    }
    if (name_in(name, ru->skip) || (ru->hook != NULL && ru->hook(o, r, name))) {
        o->skip_depth = empty ? -1 : depth;
        return;
    }
    for (; f != NULL && f->name != NULL && o->field < 0 && !empty; f++) {
        if (strcmp(name, f->name) == 0) {
            sl__text_office_field(o, f->which, depth);
        }
    }
    if (name_in(name, ru->lines)) {
        sl__text_buf_break(&o->d->text, SEP_LINE);
    } else if (name_in(name, ru->spaces)) {
        sl__text_buf_break(&o->d->text, SEP_SPACE);
    }
    if (!empty && name_in(name, ru->text)) {
        o->in_text++;
    }
}

static void
element_end(struct sl__office *o, xmlTextReaderPtr r)
{
    const struct sl__office_rules *ru = o->rules;
    const char *name = (const char *)xmlTextReaderConstLocalName(r);
    int depth = xmlTextReaderDepth(r);

    if (o->skip_depth >= 0) {
        o->skip_depth = depth == o->skip_depth ? -1 : o->skip_depth;
        return;
    }
    if (o->field >= 0 && depth == o->field_depth) {
        field_end(o);
    }
    if (name == NULL) {
        return;
    }
    if (name_in(name, ru->lines)) {
        sl__text_buf_break(&o->d->text, SEP_LINE);
    } else if (name_in(name, ru->spaces)) {
        sl__text_buf_break(&o->d->text, SEP_SPACE);
    }
    if (o->in_text > 0 && name_in(name, ru->text)) {
        o->in_text--;
    }
}

static void
node_text(struct sl__office *o, xmlTextReaderPtr r)
{
    const char *v = (const char *)xmlTextReaderConstValue(r);

    if (o->skip_depth >= 0 || v == NULL) {
        return;
    }
    if (o->field >= 0) {
        sl__text_buf_bytes(field_buf(o, o->field), v, strlen(v));
    } else if (o->in_text > 0) {
        sl__text_buf_bytes(&o->d->text, v, strlen(v));
    }
}

void
sl__text_office_xml(struct sl__office *o,
                    const struct sl__office_rules *ru,
                    uint64_t max)
{
    xmlTextReaderPtr r = NULL;
    int rc = 1;

    o->rules = ru;
    o->part_left = max;
    o->in_text = 0;
    o->skip_depth = -1;
    o->field = -1;
    o->xml_limit = 0;
    o->d->text.collapse = 1;
    /* (the reader reads the first bytes already) */
    r = xmlReaderForIO(part_read, NULL, o, NULL, NULL, XML_OPTIONS);
    if (r == NULL) {
        return;
    }
    xmlTextReaderSetStructuredErrorHandler(r, xml_error, o);
    while (!o->stop && !(ru->text != NULL && o->d->text.full)) {
        rc = xmlTextReaderRead(r);
        if (rc != 1) {
            break;
        }
        switch (xmlTextReaderNodeType(r)) {
        case XML_READER_TYPE_ELEMENT:
            element_start(o, r);
            break;
        case XML_READER_TYPE_END_ELEMENT:
            element_end(o, r);
            break;
        case XML_READER_TYPE_TEXT:
        case XML_READER_TYPE_CDATA:
        case XML_READER_TYPE_WHITESPACE:
        case XML_READER_TYPE_SIGNIFICANT_WHITESPACE:
            node_text(o, r);
            break;
        default:
            break;
        }
    }
    if (rc < 0 && !o->stop && o->xml_limit) {
        o->d->too_big = 1;
    } else if (rc < 0 && !o->stop) {
        o->d->malformed = 1; /* the text up to the error stays */
    }
    if (o->field >= 0) {
        field_end(o);
    }
    xmlFreeTextReader(r);
}

/* ------------------------------------------------------------------------
 * Spans: the text of each part, put in text order at the end.
 * --------------------------------------------------------------------- */

struct sl__office_span *
sl__text_office_span(struct sl__office *o, uint32_t group, uint64_t num)
{
    struct sl__office_span *s = NULL;

    if (o->nspans == o->spans_cap) {
        o->spans_cap = o->spans_cap > 0 ? 2 * o->spans_cap : 16;
        o->spans =
            sl_realloc(o->spans, o->spans_cap * sizeof(struct sl__office_span));
    }
    s = &o->spans[o->nspans];
    memset(s, 0, sizeof(*s));
    s->group = group;
    s->num = num;
    s->seq = o->nspans++;
    s->off = o->d->text.b.len;
    o->found++;
    return s;
}

void
sl__text_office_span_end(struct sl__office *o, struct sl__office_span *s)
{
    s->len = o->d->text.b.len - s->off;
    sl__text_buf_break(&o->d->text, SEP_LINE);
}

static int
span_cmp(const void *a, const void *b)
{
    const struct sl__office_span *x = a;
    const struct sl__office_span *y = b;

    if (x->group != y->group) {
        return x->group < y->group ? -1 : 1;
    }
    if (x->num != y->num) {
        return x->num < y->num ? -1 : 1;
    }
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Put the spans in text order (dropped ones out), one line break between
 * two; the text does not grow: each span but the first brought one. */
static void
spans_order(struct sl__office *o)
{
    struct sl__text_buf *t = &o->d->text;
    struct sl_buf out;
    size_t i = 0;
    int sorted = 1;

    for (i = 0; i < o->nspans; i++) {
        if (o->spans[i].drop ||
            (i > 0 && span_cmp(&o->spans[i - 1], &o->spans[i]) > 0)) {
            sorted = 0;
        }
    }
    if (sorted) {
        return;
    }
    qsort(o->spans, o->nspans, sizeof(o->spans[0]), span_cmp);
    sl_buf_init(&out, t->max);
    for (i = 0; i < o->nspans; i++) {
        const char *p = t->b.data + o->spans[i].off;
        size_t n = o->spans[i].len;

        if (o->spans[i].off > 0 && n > 0 && *p == '\n') {
            p++; /* the separator it was written with */
            n--;
        }
        if (o->spans[i].drop || n == 0) {
            continue;
        }
        if (out.len > 0) {
            (void)sl_buf_append(&out, "\n", 1);
        }
        (void)sl_buf_append(&out, p, n);
    }
    sl_buf_free(&t->b);
    t->b = out;
}

/* ------------------------------------------------------------------------
 * The walk.
 * --------------------------------------------------------------------- */

/* Read entry @name when it is a part of the document's kind. */
static void
entry(struct sl__office *o, const char *name)
{
    struct sl__office_span *s = NULL;
    uint64_t num = 0;
    size_t i = 0;

    if (o->d->cont == SL__TEXT_CONT_EPUB) {
        sl__text_epub_entry(o, name);
        return;
    }
    for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        if ((parts[i].conts & (1u << o->d->cont)) == 0 ||
            !(parts[i].numbered ? numbered(name, parts[i].name, &num)
                                : strcasecmp(name, parts[i].name) == 0)) {
            continue;
        }
        if (parts[i].group == META_GROUP) {
            sl__text_office_xml(o, parts[i].rules, SL__OFFICE_META_MAX);
        } else if (!o->d->text.full) {
            s = sl__text_office_span(o, parts[i].group, num);
            sl__text_office_xml(o, parts[i].rules, UINT64_MAX);
            sl__text_office_span_end(o, s);
        } else {
            o->found++;
        }
        return;
    }
}

/* The name of entry @e, or NULL for none we read. */
static const char *
entry_name(struct archive_entry *e)
{
    const char *name = archive_entry_pathname_utf8(e);

    if (name == NULL) {
        name = archive_entry_pathname(e);
    }
    if (archive_entry_filetype(e) != AE_IFREG || name == NULL ||
        strlen(name) >= SL__OFFICE_NAME_MAX) {
        return NULL;
    }
    return name;
}

static void
walk(struct sl__office *o)
{
    struct archive_entry *e = NULL;
    const char *name = NULL;
    size_t seq = 0;
    int rc = 0;

    for (seq = 0; !o->stop; seq++) {
        rc = archive_read_next_header(o->a, &e);
        if (rc == ARCHIVE_EOF) {
            break;
        }
        if (rc < ARCHIVE_WARN) {
            SL_DEBUG("text: %s: %s", o->d->id, archive_error_string(o->a));
            o->d->corrupt = 1;
            break;
        }
        if (seq == SL__OFFICE_ENTRIES_MAX) {
            o->d->too_big = 1;
            break;
        }
        name = entry_name(e);
        if (name != NULL) {
            entry(o, name);
        }
    }
}

/* Set up the results: the metadata buffers, the text collapsed. */
static void
office_init(struct sl__office *o, struct sl_text *x, struct sl_text_doc *d)
{
    memset(o, 0, sizeof(*o));
    o->x = x;
    o->d = d;
    o->left = d->spooled > SL__TEXT_INFLATE_MAX / RATIO_MAX
                  ? SL__TEXT_INFLATE_MAX
                  : d->spooled * RATIO_MAX;
    o->field = -1;
    o->skip_depth = -1;
    sl__text_buf_init(&o->creator, SL_TEXT_TITLE_MAX, 1);
    sl__text_buf_init(&o->digits, DIGITS_MAX, 1);
    sl__text_buf_set(&d->title, SL_TEXT_TITLE_MAX, NULL);
    sl__text_buf_set(&d->author, SL_TEXT_TITLE_MAX, NULL);
    sl__text_buf_set(&d->created, SL_TEXT_TITLE_MAX, NULL);
    sl__text_buf_set(&d->modified, SL_TEXT_TITLE_MAX, NULL);
    d->text.collapse = 1;
}

int
sl__text_office_read(struct sl_text *x, struct sl_text_doc *d)
{
    struct sl__office o;

    office_init(&o, x, d);
    o.a = archive_read_new();
    if (o.a == NULL) {
        return SL_EINTERNAL;
    }
    (void)archive_read_support_format_zip(o.a);
    if (archive_read_open_fd(o.a, d->spool_fd, ZIP_READ) != ARCHIVE_OK) {
        SL_DEBUG("text: %s: %s", d->id, archive_error_string(o.a));
        d->corrupt = 1;
    } else {
        walk(&o);
    }
    sl__text_epub_end(&o);
    spans_order(&o);
    if (d->author.b.len == 0 && o.creator.b.len > 0) {
        sl__text_buf_set(&d->author, SL_TEXT_TITLE_MAX, o.creator.b.data);
    }
    if (o.found == 0) {
        /* not this kind of document (or no zip at all) */
        d->outcome = SL_TEXT_NOTEXT;
        d->corrupt = 1;
    }
    sl__text_epub_free(&o);
    sl_free(o.spans);
    sl_buf_free(&o.creator.b);
    sl_buf_free(&o.digits.b);
    (void)archive_read_free(o.a);
    return o.canceled ? SL_ECANCELED : 0;
}

/*
 * What office.c and epub.c share: the walk of an office document's or an
 * EPUB's zip, the rules of its XML parts and the spans of its text.
 */
#ifndef SL_OFFICE_INT_H_INCLUDED
#define SL_OFFICE_INT_H_INCLUDED

#include <libxml/xmlreader.h>

#include "text/text_int.h"

#define SL__OFFICE_ENTRIES_MAX ((size_t)10000) /* zip entries walked */
#define SL__OFFICE_NAME_MAX    1024u /* bytes of an entry name, a path */
#define SL__OFFICE_META_MAX    ((uint64_t)1 << 20) /* of a metadata part */

/* The metadata fields. */
enum {
    SL__OFFICE_TITLE = 0,
    SL__OFFICE_AUTHOR,
    SL__OFFICE_CREATOR, /* the author when there is no other (ODF) */
    SL__OFFICE_CREATED,
    SL__OFFICE_MODIFIED,
    SL__OFFICE_PAGES,
    SL__OFFICE_FIELDS
};

struct sl__office;

/* An element whose text is metadata field @which (the first one). */
struct sl__office_field {
    const char *name; /* local name; NULL ends a list */
    int which;        /* SL__OFFICE_* */
};

/* What the XML of a part holds; element names are local names (without
 * prefix), the lists NULL-terminated (or NULL: none). */
struct sl__office_rules {
    const char *const *text;   /* elements whose text is taken */
    const char *const *lines;  /* a line break at their start and end */
    const char *const *spaces; /* a space at their start and end */
    const char *const *skip;   /* left out, with all they hold */
    const struct sl__office_field *fields;
    /* Called at each element start (outside those left out): 1 leaves
     * the element out, with all it holds. */
    int (*hook)(struct sl__office *o, xmlTextReaderPtr r, const char *name);
};

/* The text of one part: its bytes of the document's text, put in text
 * order (group, num, seq) at the end. */
struct sl__office_span {
    uint32_t group; /* the kind of part */
    uint64_t num;   /* its number in the group (slide 3: 3) */
    size_t seq;     /* the order it was read in */
    size_t off;     /* its first byte (a separator when off > 0) */
    size_t len;     /* its bytes */
    char *path;     /* EPUB: its entry name, for the spine; or NULL */
    int drop;       /* left out of the text */
};

struct sl__epub;

/* The walk of one document. */
struct sl__office {
    struct sl_text *x;
    struct sl_text_doc *d;
    struct archive *a;
    uint64_t left;      /* bytes the document may still decompress */
    uint64_t part_left; /* bytes the current part may still give */
    uint64_t polled;    /* bytes read since canceled was polled */
    int canceled;       /* canceled said so */
    int stop;           /* a limit or corrupt data: read no more */
    size_t found;       /* text parts found */
    /* the current XML part */
    const struct sl__office_rules *rules;
    int in_text;     /* inside elements whose text is taken */
    int skip_depth;  /* the depth of the element left out, or -1 */
    int field;       /* SL__OFFICE_* being read, or -1 */
    int field_depth; /* the depth of its element */
    int shared_cell; /* a spreadsheet cell holding a shared string */
    int xml_limit;   /* the reader stopped at a limit of its own */
    int have[SL__OFFICE_FIELDS];
    struct sl__text_buf creator; /* SL__OFFICE_CREATOR */
    struct sl__text_buf digits;  /* SL__OFFICE_PAGES */
    struct sl__office_span *spans;
    size_t nspans;
    size_t spans_cap;
    struct sl__epub *epub; /* EPUB: the OPF's manifest and spine */
};

/* office.c */
/* Read the current entry as XML by rules @ru, at most @max bytes of it
 * (a part cut there is not cut, just read far enough). */
void sl__text_office_xml(struct sl__office *o,
                         const struct sl__office_rules *ru,
                         uint64_t max);
/* Read field @f from the element at @depth on, unless it has been. */
void sl__text_office_field(struct sl__office *o, int f, int depth);
/* A part's text starts here / ended. */
struct sl__office_span *
sl__text_office_span(struct sl__office *o, uint32_t group, uint64_t num);
void sl__text_office_span_end(struct sl__office *o, struct sl__office_span *s);

/* epub.c */
void sl__text_epub_entry(struct sl__office *o, const char *name);
void sl__text_epub_end(struct sl__office *o);
void sl__text_epub_free(struct sl__office *o);

#endif /* SL_OFFICE_INT_H_INCLUDED */

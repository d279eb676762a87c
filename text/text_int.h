/*
 * The text library's private header: the structures its files share and
 * the functions one file calls in another (text/text.h has the API).
 */
#ifndef SL_TEXT_INT_H_INCLUDED
#define SL_TEXT_INT_H_INCLUDED

#include <iconv.h>
#include <sys/types.h>

#include <libxml/parser.h>
#include <magic.h>
#include <uchardet.h>

#include "text/text.h"

#define HEAD_MAX  SL_TEXT_CHUNK /* bytes seen by libmagic, uchardet */
#define CARRY_MAX 16u           /* incomplete multibyte input kept for iconv */

/* Separators owed before the next character of a collapsed text. */
enum { SEP_NONE = 0, SEP_SPACE = 1, SEP_LINE = 2 };

/*
 * Extracted text: valid UTF-8, at most max bytes, cut between characters.
 * Bytes go through an incremental UTF-8 checker (invalid sequences become
 * U+FFFD, NUL and most control characters are dropped); in collapse mode
 * runs of white space become one space and block boundaries one line
 * break, never at the start or the end.
 */
struct sl__text_buf {
    struct sl_buf b;       /* the text; limit max */
    size_t max;            /* maximum bytes */
    int full;              /* the cap was hit: later characters dropped */
    int collapse;          /* collapse white space */
    int sep;               /* SEP_*: owed before the next character */
    unsigned char part[4]; /* an incomplete UTF-8 sequence */
    size_t plen;           /* its length */
};

/* An external converter process of one document. */
struct sl__text_conv {
    char **argv;        /* NULL-terminated; strings borrowed */
    size_t file_arg;    /* index of "{file}" in argv, or SIZE_MAX */
    char *path;         /* spool file of the {file} mode, or NULL */
    int file_fd;        /* open spool file, or -1 */
    int in_fd;          /* our end of the child's stdin (a socket), or -1 */
    int out_fd;         /* our end of the child's stdout (a pipe), or -1 */
    pid_t pid;          /* the child (and its process group), or -1 */
    int64_t timeout;    /* milliseconds */
    uint64_t memory;    /* MiB of address space, 0: unlimited */
    int64_t deadline;   /* sl_mono_ms() when the child is killed */
    int status;         /* wait status once reaped */
    int reaped;         /* status is valid */
    int timed_out;      /* killed at the deadline */
    int enough;         /* the text is full: stopped, its status is moot */
    const json_t *meta; /* metaCommand (argv) of the entry, or NULL */
    int persistent;     /* a persistent converter (conv_helper.c) */
    uint64_t max_docs;  /* its documents before it is replaced */
    char *prog;         /* argv[0] found beside the sluice binary, or NULL */
};

/* One document being extracted. */
struct sl_text_doc {
    struct sl__text_buf text;          /* its text */
    struct sl__text_buf title;         /* an HTML <title> */
    char mime[SL_TEXT_MIME_MAX];       /* its MIME type */
    char charset[SL_TEXT_CHARSET_MAX]; /* the charset read, or "" */
    const char *given;                 /* the HTTP header's charset, borrowed */
    int kind;                          /* enum sl_text_kind of mime */
    int conv_on;                       /* an external converter extracts */
    int outcome;                       /* enum sl_text_outcome */
    int malformed;                     /* XML that is not well-formed */
    /* SL_TEXT_KIND_TEXT */
    iconv_t cd;                     /* to UTF-8, or (iconv_t)-1 */
    unsigned char carry[CARRY_MAX]; /* incomplete input sequence */
    size_t clen;                    /* its length */
    /* SL_TEXT_KIND_HTML, SL_TEXT_KIND_XML */
    xmlParserCtxtPtr px;          /* push parser (an htmlParserCtxtPtr too) */
    struct sl_web_html_feed feed; /* HTML: the block being gathered */
    unsigned skip;                /* inside <script>, <style>... */
    unsigned in_title;            /* inside the first <title> */
    unsigned pre;                 /* inside <pre> */
    int title_done;               /* the first <title> ended */
    struct sl__text_conv conv;
    /* documents read whole (container.c) */
    int cont;                          /* SL__TEXT_CONT_*, or NONE */
    int spool_fd;                      /* the spooled content, or -1 */
    uint64_t spooled;                  /* its bytes */
    int too_big;                       /* content cut at a limit */
    int corrupt;                       /* the format could not be read */
    unsigned depth;                    /* documents inside documents */
    const char *id;                    /* its id or name, borrowed, or NULL */
    char encoding[16];                 /* "gzip"...: a compressed file */
    char inner_mime[SL_TEXT_MIME_MAX]; /* the type inside, or "" */
    /* metadata of office documents and EPUB (office.c) */
    struct sl__text_buf author;   /* its author */
    struct sl__text_buf created;  /* its creation date, as given */
    struct sl__text_buf modified; /* its last modification date */
    uint64_t pages;               /* its page (slide) count, 0: unknown */
    struct sl_text *t;            /* the extractor, borrowed */
};

/* An extractor: its options, the libraries it loaded, its buffers. */
struct sl_text {
    uint64_t max_text;          /* maximum bytes of a document's text */
    const json_t *converters;   /* MIME type -> converter entry, or NULL */
    int (*canceled)(void *arg); /* polled while a converter runs, or NULL */
    void *arg;                  /* of canceled */
    magic_t magic;              /* loaded on first use */
    int magic_failed;           /* magic_open or magic_load failed */
    uchardet_t ud;              /* created on first use */
    char *obuf;                 /* SL_TEXT_CHUNK: iconv, converter output */
    char *stage;                /* SL_TEXT_CHUNK + CARRY_MAX: iconv input */
};

static const unsigned char SL__TEXT_REPLACEMENT[3] = {0xef, 0xbf, 0xbd};

/* textbuf.c: the text */
void sl__text_buf_init(struct sl__text_buf *t, size_t max, int collapse);
void sl__text_buf_clear(struct sl__text_buf *t);
void sl__text_buf_break(struct sl__text_buf *t, int sep);
void sl__text_buf_char(struct sl__text_buf *t,
                       const unsigned char *s,
                       size_t len,
                       uint32_t cp);
void sl__text_buf_bytes(struct sl__text_buf *t, const void *data, size_t n);
void sl__text_buf_end(struct sl__text_buf *t);

/* mime.c */
int sl__text_head_textual(const char *head, size_t len);

/* plain.c: charsets and plain text */
void sl__text_charset_copy(char *out, const char *in);
const char *sl__text_charset_bom(const char *head, size_t len);
void sl__text_charset_detect(uchardet_t *ud,
                             const char *head,
                             size_t len,
                             char *out);
void sl__text_plain_begin(struct sl_text *x,
                          struct sl_text_doc *d,
                          const char *head,
                          size_t len);
int sl__text_plain_feed(struct sl_text *x,
                        struct sl_text_doc *d,
                        const char *p,
                        size_t n);
void sl__text_plain_end(struct sl_text *x, struct sl_text_doc *d);

/* markup.c: HTML and XML */
void sl__text_xml_once(void);
int sl__text_html_open(struct sl_text *x,
                       struct sl_text_doc *d,
                       const char *head,
                       size_t len);
int sl__text_xml_open(struct sl_text_doc *d);
int sl__text_markup_feed(struct sl_text_doc *d, const char *p, size_t n);
void sl__text_markup_end(struct sl_text_doc *d, int abort);

/* conv.c: external converters */
void sl__text_conv_begin(struct sl_text_doc *d, const json_t *cfg);
int sl__text_conv_feed(struct sl_text *x,
                       struct sl_text_doc *d,
                       const char *p,
                       size_t n);
int sl__text_conv_end(struct sl_text *x, struct sl_text_doc *d, int abort);
/* In a child between fork and exec: the converter's limits and
 * descriptors, then exec @argv. */
_Noreturn void sl__text_conv_child(
    const struct sl__text_conv *c, char **argv, int in, int out, int err);

/* conv_meta.c: the metadata of a converted document */
void sl__text_conv_meta(struct sl_text *x, struct sl_text_doc *d);
/* Take "Key: value" line @line (changed) into @d's metadata. */
void sl__text_conv_meta_line(struct sl_text_doc *d, char *line);
/* conv_helper.c: the document (spooled at d->conv.path) converted by a
 * persistent converter; sets d->outcome.  0 or SL_ECANCELED. */
int sl__text_helper_run(struct sl_text *x, struct sl_text_doc *d);
/* conv.c: the file Sluice's own converter @prog ("sluice-...") is,
 * beside the running binary; NULL when @prog is not one or not there. */
char *sl__text_own_program(const char *prog);

/* container.c: documents read whole from a spool file */
enum {
    SL__TEXT_CONT_NONE = 0,
    SL__TEXT_CONT_COMPRESSED = 1, /* gzip, bzip2, xz...: one document */
    SL__TEXT_CONT_DOCX = 2,       /* zips of Office Open XML (office.c) */
    SL__TEXT_CONT_XLSX = 3,
    SL__TEXT_CONT_PPTX = 4,
    SL__TEXT_CONT_ODF = 5,  /* OpenDocument (and OpenOffice.org 1) */
    SL__TEXT_CONT_EPUB = 6, /* EPUB: XHTML through the HTML extractor */
    SL__TEXT_CONT_MAIL = 7, /* message/rfc822 (mail.c) */
};
#define SL__TEXT_INFLATE_MAX ((uint64_t)256 << 20) /* bytes decompressed */
#define SL__TEXT_NESTING_MAX 2u /* documents read whole inside others */
struct archive;
int sl__text_container_of(const char *mime);
int sl__text_container_begin(struct sl_text_doc *d, int cont);
int sl__text_container_feed(struct sl_text_doc *d, const char *p, size_t n);
int sl__text_container_end(struct sl_text *x, struct sl_text_doc *d, int abort);
int sl__text_inflate(struct sl_text *x,
                     struct sl_text_doc *d,
                     struct archive *a,
                     struct sl_text_doc *in,
                     const char *name,
                     uint64_t *left);
void sl__text_buf_set(struct sl__text_buf *t, size_t max, const char *s);

/* office.c: office documents and EPUB, read from their spooled zip */
int sl__text_office_of(const char *mime);
int sl__text_office_read(struct sl_text *x, struct sl_text_doc *d);

/* doc.c */
void sl__text_doc_init(struct sl_text_doc *d, uint64_t max_text);
void sl__text_doc_fini(struct sl_text_doc *d);
/* Start the extractor of d->mime for content starting with @head. */
int sl__text_doc_start(struct sl_text *x,
                       struct sl_text_doc *d,
                       const char *head,
                       size_t len);

#endif /* SL_TEXT_INT_H_INCLUDED */
